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


TRANSPORTS = ("ssh", "tcp")
_USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._\-]*$")
SPELLING_HINT = ("write ssh://[USER@]HOST[:SSH_PORT] (through SSH: authenticated, no port open) or, on a network "
                 "only you reach, tcp://HOST[:PORT] (a plain fio server, no authentication)")


@dataclass(frozen=True)
class Host:
    """One host's fio server: reached through SSH (`ssh`: `port` is the SSH port, 0 = ssh's own default) or over
    plain TCP (`tcp`: `port` is the fio server's)."""

    name: str
    port: int = DEFAULT_PORT
    transport: str = "tcp"
    user: str = ""

    @property
    def ipv6(self) -> bool:
        return ":" in self.name

    @property
    def fio_arg(self) -> str:
        """The host as fio's --client (and host list file) spells it. Through SSH: the local socket of its tunnel,
        named after the host and relative to the tunnel folder (the fio client's working folder), so that fio
        names the host (its results' hostname, its log files' suffix) by the host name."""
        if self.transport == "ssh":
            return f"sock:{self.name}"
        return f"{'ip6:' if self.ipv6 else ''}{self.name},{self.port}"

    @property
    def label(self) -> str:
        """The host as --hosts spells it."""
        address = f"[{self.name}]" if self.ipv6 else self.name
        if self.transport == "ssh":
            return f"ssh://{self.user + '@' if self.user else ''}{address}{f':{self.port}' if self.port else ''}"
        return f"tcp://{address}:{self.port}"


def parse_host(text: str) -> Host:
    """`ssh://[user@]host[:port]` or `tcp://host[:port]` (a host name, an IPv4 address or an [IPv6] address) ->
    Host; HostError when it is not one, or names no transport."""
    item = text.strip()
    scheme, separator, rest = item.partition("://")
    if not separator:
        raise HostError(f"{text!r} does not say how to reach its fio server", SPELLING_HINT)
    if scheme not in TRANSPORTS:
        raise HostError(f"{text!r}: unknown transport {scheme!r}", SPELLING_HINT)
    user = ""
    if scheme == "ssh" and "@" in rest:
        user, _, rest = rest.rpartition("@")
        if not _USER_RE.match(user):
            raise HostError(f"{text!r}: {user!r} is not a user name", "write ssh://USER@HOST")
    port_text = ""
    if rest.startswith("["):
        name, bracket, after = rest[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise HostError(f"{text!r} is not a host", "write an IPv6 address as [ADDR] or [ADDR]:PORT")
        port_text = after[1:]
    else:
        name, _, port_text = rest.partition(":")
    if not _valid_name(name):
        raise HostError(f"{text!r} is not a host name or address", SPELLING_HINT)
    if not port_text:
        return Host(name, 0 if scheme == "ssh" else DEFAULT_PORT, scheme, user)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise HostError(f"{text!r}: port {port_text!r} is not a number from 1 to 65535", SPELLING_HINT)
    return Host(name, int(port_text), scheme, user)


def _valid_name(name: str) -> bool:
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return False
        return True
    return bool(_NAME_RE.match(name))


def parse_hosts(spec: str) -> list[Host]:
    """`ssh://[user@]host[:port],...` and `tcp://host[:port],...`, or a file with one host per line (# starts a
    comment); duplicates are refused."""
    if _names_a_file(spec):
        from ptsbench.textfile import read_user_text

        lines = read_user_text(spec, "host list", "pass a text file, one ssh://HOST per line", HostError).splitlines()
        items = [line.split("#", 1)[0].strip() for line in lines]
        where = f"host list {spec}"
    else:
        items = spec.split(",")
        where = "--hosts"
    items = [item for item in items if item.strip()]
    if not items:
        raise HostError(f"{where} names no host", "give ssh://HOST,... or a file with one per line")
    hosts = [parse_host(item) for item in items]
    seen: dict[str, Host] = {}
    for host in hosts:
        if host.name in seen:
            raise HostError(
                f"{where}: {host.name} is listed twice ({seen[host.name].label} and {host.label})",
                "one fio server per host: fio tells hosts apart (and names their logs) by name or address only",
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
