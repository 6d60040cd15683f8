"""Host lists: a fio server's name and port, parsing `--hosts`, the host list file fio's client reads, and whether a
host is this machine."""

import ipaddress
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ptsbench.errors import PtsbenchError

DEFAULT_PORT = 8765
HOST_LIST = "hosts.list"

_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.\-_]*[A-Za-z0-9])?$")


class HostError(PtsbenchError):
    """A host list is malformed, a host is unusable, or a fio server cannot be started or stopped."""


@dataclass(frozen=True)
class Host:
    """One fio server: a name or address and a port."""

    name: str
    port: int = DEFAULT_PORT

    @property
    def ipv6(self) -> bool:
        return ":" in self.name

    @property
    def fio_arg(self) -> str:
        """The host as fio's --client (and host list file) spells it."""
        return f"{'ip6:' if self.ipv6 else ''}{self.name},{self.port}"

    @property
    def label(self) -> str:
        return f"[{self.name}]:{self.port}" if self.ipv6 else f"{self.name}:{self.port}"



def parse_host(text: str) -> Host:
    """`host`, `host:port`, `[ipv6]` or `[ipv6]:port` -> Host; HostError when it is not one."""
    item = text.strip()
    port_text = ""
    if item.startswith("["):
        name, bracket, rest = item[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise HostError(f"{text!r} is not a host", "write an IPv6 address as [ADDR] or [ADDR]:PORT")
        port_text = rest[1:]
    elif item.count(":") > 1:
        name = item  # a bare IPv6 address
    else:
        name, _, port_text = item.partition(":")
    if not _valid_name(name):
        raise HostError(f"{text!r} is not a host name or address", "write HOST or HOST:PORT, e.g. node1:8765")
    if not port_text:
        return Host(name)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise HostError(f"{text!r}: port {port_text!r} is not a number from 1 to 65535", "write HOST:PORT")
    return Host(name, int(port_text))


def _valid_name(name: str) -> bool:
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return False
        return True
    return bool(_NAME_RE.match(name))


def parse_hosts(spec: str) -> list[Host]:
    """`host[:port],...`, or a file with one host per line (# starts a comment); duplicates are refused."""
    if _names_a_file(spec):
        from ptsbench.textfile import read_user_text

        lines = read_user_text(spec, "host list", "pass a text file, one HOST[:PORT] per line", HostError).splitlines()
        items = [line.split("#", 1)[0].strip() for line in lines]
        where = f"host list {spec}"
    else:
        items = spec.split(",")
        where = "--hosts"
    items = [item for item in items if item.strip()]
    if not items:
        raise HostError(f"{where} names no host", "give HOST[:PORT],... or a file with one per line")
    hosts = [parse_host(item) for item in items]
    seen: dict[str, Host] = {}
    for host in hosts:
        if host.name in seen:
            raise HostError(
                f"{where}: {host.name} is listed twice ({seen[host.name].label} and {host.label})",
                "one fio server per host: fio tells hosts apart (and names their logs) by address only",
            )
        seen[host.name] = host
    return hosts


def _names_a_file(spec: str) -> bool:
    """Whether --hosts names a host list file; a list of hosts too long for a file name is no file."""
    try:
        return Path(spec).is_file()
    except OSError:  # ENAMETOOLONG
        return False


def write_host_list(directory: Path, hosts: Sequence[Host]) -> Path:
    """The host list file fio's `--client=FILE` reads: the same job goes to every host in it."""
    from ptsbench.atomic import atomic_write_text

    path = Path(directory).resolve() / HOST_LIST
    text = "".join(f"{host.fio_arg}\n" for host in hosts)
    if not path.is_file() or path.read_text() != text:
        atomic_write_text(path, text)
    return path


def host_addresses(host: Host) -> list[str]:
    """The addresses a host name stands for ([] when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host.name, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return sorted({str(info[4][0]) for info in infos})


def is_this_machine(host: Host) -> bool:
    """Whether a host's address is one of this machine's (loopback or an own interface address: it can be bound
    here), so its fio server opens this machine's devices."""
    for address in host_addresses(host):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.bind((address, 0))
                return True
        except OSError:
            continue
    return False


def is_problem_line(line: str) -> bool:
    return bool(re.search(r"fio:|error|failed|disconnected|timed out|refused|unable|cannot|denied", line, re.I))
