"""A real OpenSSH server on loopback for tests: host key, user key, known_hosts and an ssh_config made in a temp
folder; `ptsbench` finds the config through PTSBENCH_SSH_CONFIG. Stopped (and /run/sshd removed if it made it)
when the context ends."""

import contextlib
import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import die_with_parent

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")


@dataclass(frozen=True)
class Sshd:
    addresses: tuple[str, ...]
    port: int
    config: Path  # the ssh_config a client uses (keys, known hosts, port, user root)

    def spec(self, *addresses: str) -> str:
        """--hosts for these of its addresses."""
        return ",".join(f"ssh://{address}" for address in addresses or self.addresses)


def _free_port(addresses: tuple[str, ...]) -> int:
    for _ in range(200):
        port = random.randint(20000, 60000)
        try:
            for address in addresses:
                with socket.socket() as probe:
                    probe.bind((address, port))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port")


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


@contextlib.contextmanager
def loopback_sshd(folder: Path, addresses: tuple[str, ...] = ("127.0.0.2", "127.0.0.3"),
                  unknown: tuple[str, ...] = ("127.0.0.5",)) -> Iterator[Sshd]:
    """sshd on `addresses` and `unknown`; the client's known_hosts lists only `addresses`."""
    folder.mkdir(parents=True, exist_ok=True)
    host_key = _keygen(folder / "host_key")
    (folder / "authorized_keys").write_text(_keygen(folder / "user_key") + "\n")
    port = _free_port(addresses + unknown)
    (folder / "sshd_config").write_text("".join(f"ListenAddress {address}:{port}\n"
                                                for address in addresses + unknown) + f"""\
HostKey {folder}/host_key
AuthorizedKeysFile {folder}/authorized_keys
PidFile {folder}/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowStreamLocalForwarding yes
""")
    key_type, key = host_key.split()[:2]
    (folder / "known_hosts").write_text("".join(f"[{address}]:{port} {key_type} {key}\n" for address in addresses))
    config = folder / "ssh_config"
    config.write_text(f"""\
Host *
  User root
  Port {port}
  IdentityFile {folder}/user_key
  IdentitiesOnly yes
  UserKnownHostsFile {folder}/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
""")
    made_privsep = not PRIVSEP_DIR.exists()
    if made_privsep:
        PRIVSEP_DIR.mkdir(mode=0o755)
    with open(folder / "sshd.log", "wb") as log:
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=log, preexec_fn=die_with_parent())
    try:
        _wait_listening(addresses + unknown, port, process)
        saved = os.environ.get("PTSBENCH_SSH_CONFIG")
        os.environ["PTSBENCH_SSH_CONFIG"] = str(config)
        try:
            yield Sshd(addresses, port, config)
        finally:
            if saved is None:
                os.environ.pop("PTSBENCH_SSH_CONFIG", None)
            else:
                os.environ["PTSBENCH_SSH_CONFIG"] = saved
    finally:
        process.terminate()
        process.wait(10)
        if made_privsep:
            with contextlib.suppress(OSError):
                PRIVSEP_DIR.rmdir()


def _wait_listening(addresses: tuple[str, ...], port: int, process: "subprocess.Popen[bytes]") -> None:
    deadline = time.monotonic() + 30
    pending = list(addresses)
    while pending and time.monotonic() < deadline:
        assert process.poll() is None, "sshd exited at start"
        try:
            with socket.create_connection((pending[0], port), timeout=1):
                pending.pop(0)
        except OSError:
            time.sleep(0.05)
    assert not pending, f"sshd does not listen on {pending}"


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """A loopback sshd for the tests of one module (hosts ssh://127.0.0.2 and ssh://127.0.0.3)."""
    with loopback_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server
