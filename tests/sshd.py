"""A real OpenSSH server on loopback for tests: host key, user key, known_hosts and an ssh_config made in a temp
folder; `ptsbench` finds the config through PTSBENCH_SSH_CONFIG. Stopped when the context ends.

What it made is told apart from what another test run on this machine makes at the same time (CI may share the
machine): the server logs each command it runs (a ForceCommand wrapper), which names the remote folders of its fio
servers, and ptsbench's local tunnel folders go to a temporary folder of its own (TMPDIR, while it runs)."""

import contextlib
import os
import random
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import die_with_parent
from ptsbench.hosts import ssh

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")


@dataclass(frozen=True)
class Sshd:
    addresses: tuple[str, ...]
    port: int
    config: Path  # the ssh_config a client uses (keys, known hosts, port, user root)
    commands: Path  # every command the server ran, one after another
    tmp: Path  # the temporary folder (TMPDIR) of the processes started while it runs: their tunnel folders

    def spec(self, *addresses: str) -> str:
        """--hosts for these of its addresses."""
        return ",".join(f"ssh://{address}" for address in addresses or self.addresses)

    def remote_folders(self) -> set[Path]:
        """The remote fio servers' folders that this server's commands made and that are there now."""
        text = self.commands.read_text(errors="replace") if self.commands.exists() else ""
        named = re.findall(re.escape(ssh.REMOTE_FOLDER_PREFIX) + r"[0-9a-f]+", text)
        return {Path(name) for name in named if os.path.lexists(name)}

    def tunnel_folders(self) -> set[Path]:
        """ptsbench's local tunnel folders in the temporary folder of this server's tests."""
        return set(self.tmp.glob(f"{ssh.FOLDER_PREFIX}*"))


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
ForceCommand {folder}/logged-command
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowStreamLocalForwarding yes
""")
    key_type, key = host_key.split()[:2]
    (folder / "known_hosts").write_text("".join(f"[{address}]:{port} {key_type} {key}\n" for address in addresses))
    commands = folder / "commands.log"
    wrapper = folder / "logged-command"  # logs the client's command, then runs it as sshd would have
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$SSH_ORIGINAL_COMMAND" >> {commands}\n'
                       'exec "${SHELL:-/bin/sh}" -c "$SSH_ORIGINAL_COMMAND"\n')
    wrapper.chmod(0o755)
    tmp = folder / "tmp"
    tmp.mkdir()
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
    # sshd's own empty folder, made where the package's boot scripts have not made it, and kept: the sshd of
    # another test process may need it still (its removal once failed a concurrent test run's SSH tests)
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    with open(folder / "sshd.log", "wb") as log:
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=log, preexec_fn=die_with_parent())
    try:
        _wait_listening(addresses + unknown, port, process)
        settings = {"PTSBENCH_SSH_CONFIG": str(config), "TMPDIR": str(tmp)}
        saved = {key: os.environ.get(key) for key in settings}
        os.environ.update(settings)
        try:
            yield Sshd(addresses, port, config, commands, tmp)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    finally:
        process.terminate()
        process.wait(10)


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
