"""Purge methods behind one interface (one class per method, like fio's engines): each says whether it applies
and records every command it ran. A fallback that is not a true PTS purge is marked as a deviation.

A run holds its block device open with O_EXCL (device/claim.py) while it purges. Of the tools, `blkdiscard`
(util-linux 2.36 and later) and `nvme format` open the device with O_EXCL too and fail with EBUSY against our own claim:
they get their --force (which skips only that check) exactly when this process holds the claim, since the claim is
the same guarantee. `nvme sanitize` goes to the controller's character device, and hdparm, sg_format and sg_sanitize
open without O_EXCL: they work as they are.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from ptsbench.device.guard import check_write_allowed
from ptsbench.device.inuse import held_here
from ptsbench.device.scope import describe_reach, scope_problem, subsystem_namespaces
from ptsbench.device.target import Target, block_sysfs_dir, read_sysfs
from ptsbench.errors import PtsbenchError, TargetError, UnsafeTargetError

ATA_TEMP_PASSWORD = "ptsbench"  # set only for the erase; the drive clears it when the erase succeeds
LONG_TIMEOUT_S = 12 * 3600.0  # an erase of a large hard disk can take hours
PROBE_TIMEOUT_S = 30.0
SANITIZE_START_POLLS = 3  # polls allowed to still show "never sanitized" right after the command
SSTAT_IN_PROGRESS = 2


@dataclass(frozen=True)
class PurgeOutcome:
    """What a purge did: every command line run, success, the tool's message, and whether it is a deviation."""

    method: str
    commands: list[list[str]]
    ok: bool
    message: str
    is_deviation: bool  # not a true PTS purge (discard, or nothing at all)

    def attempt(self, started_utc: str, finished_utc: str) -> dict[str, object]:
        """The outcome as a run stores it (purge.json): the commands as shell lines, with its start and end."""
        return {"method": self.method, "commands": [shlex.join(argv) for argv in self.commands], "ok": self.ok,
                "message": self.message, "is_deviation": self.is_deviation, "started_utc": started_utc,
                "finished_utc": finished_utc}


class PurgeMethod(Protocol):
    """One way to purge a device."""

    name: str
    pts_purge: bool  # a purge the PTS accepts; discard and nothing at all are deviations

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        """None if this method can be used on the target, else why not."""
        ...

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        """Purge the target; never raises for a tool failure (ok=False with its message)."""
        ...


@dataclass
class CommandLog:
    """Runs external tools and remembers every command line, in order."""

    commands: list[list[str]] = field(default_factory=list)

    def run(self, argv: list[str], timeout_s: float = PROBE_TIMEOUT_S,
            ends_with_ptsbench: bool = False) -> subprocess.CompletedProcess[str]:
        """Run argv (stdin closed); a missing tool or a timeout becomes a failed result, not an exception. Bytes
        that are not UTF-8 (sg_format prints a binary LU name) are replaced, never an exception.
        `ends_with_ptsbench`: the tool is stopped when ptsbench dies (fio/lifetime.py), for tools whose writes
        stop with them. Device erase commands (nvme format/sanitize, hdparm, sg_format, sg_sanitize) are left to
        finish: the drive carries out the erase whether the tool lives or not, and a command torn down mid-way can
        leave a drive with its security password set or its format marked corrupt."""
        from ptsbench.fio.lifetime import run_bound

        self.commands.append(list(argv))
        try:
            return (run_bound if ends_with_ptsbench else subprocess.run)(
                argv, capture_output=True, text=True, errors="replace", timeout=timeout_s, check=False,
                stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: command not found")
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv, 124, "", f"{argv[0]}: no answer after {timeout_s:.0f} s")

    def run_bytes(self, argv: list[str], timeout_s: float = PROBE_TIMEOUT_S) -> subprocess.CompletedProcess[bytes]:
        """Run argv for its stdout's bytes (a log page nvme-cli prints raw), as `run` does otherwise."""
        self.commands.append(list(argv))
        try:
            return subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            return subprocess.CompletedProcess(argv, 127, b"", f"{argv[0]}: command not found".encode())
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv, 124, b"", f"{argv[0]}: no answer after {timeout_s:.0f} s".encode())

    def outcome(self, method: str, ok: bool, message: str, is_deviation: bool = False) -> PurgeOutcome:
        return PurgeOutcome(method, list(self.commands), ok, message, is_deviation)


def tool_message(done: subprocess.CompletedProcess[str]) -> str:
    """The tool's own words about a failure, with its exit status: the last line before any usage text (nvme-cli,
    sg3_utils and hdparm print their usage after the error line; its last line would be an option's description),
    from stderr, else stdout."""
    usage = False
    for text in (done.stderr or "", done.stdout or ""):
        said = []
        for line in _ESCAPE.sub("", text).splitlines():
            if _USAGE_START.match(line):
                usage = True
                break
            if line.strip() and not _OPTION_LINE.search(line):
                said.append(line.strip())
        if said:
            return f"{done.args[0]} exited with status {done.returncode}: {said[-1]}"
    why = "it printed only its usage text (options this version does not take)" if usage else "no message"
    return f"{done.args[0]} exited with status {done.returncode}: {why}"


_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # nvme-cli prints "Usage:" in bold
_USAGE_START = re.compile(r"^\s*(usage\s*:|use \S+ -h\b|try .*--help)", re.IGNORECASE)
# an option's line of a usage text: "  [  --save, -s ]  --- shall save the attribute", "  -v, --verbose  ..."
_OPTION_LINE = re.compile(r"^\s*(\[\s*--?\w|--?\w[\w-]*[ ,=])|\s---\s")


def _device(target: Target, facts: dict[str, object]) -> str:
    disk = facts.get("disk")
    return disk if isinstance(disk, str) else target.path


def _whole_block_device_problem(target: Target, facts: dict[str, object], tool: str) -> str | None:
    """Common conditions of the device-level methods: a whole block device and the tool installed."""
    if target.kind != "block":
        return "not a block device"
    if facts.get("disk") not in (None, target.path):
        return f"{target.path} is a partition: a device purge would erase all of {facts['disk']}"
    if shutil.which(tool) is None:
        return f"{tool} is not installed"
    return None


def _is_nvme(facts: dict[str, object]) -> bool:
    return str(facts.get("transport") or "").startswith("nvme")


def _json(text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def id_ctrl_value(log: CommandLog, controller: str, key: str) -> int | None:
    """One field of an NVMe controller's Identify Controller data (`nvme id-ctrl CTRL -o json`: vwc, sanicap,
    fna...); None when nvme-cli fails or prints no number for it."""
    done = log.run(["nvme", "id-ctrl", controller, "-o", "json"])
    value = _json(done.stdout).get(key) if done.returncode == 0 else None
    return value if isinstance(value, int) else None


class NvmeSanitize:
    """NVMe Sanitize (block erase, else crypto erase, else overwrite), polled through the sanitize log."""

    name = "nvme-sanitize"
    pts_purge = True
    # SANICAP bit -> nvme-cli --sanact value, preferred first: block erase, crypto erase, overwrite.
    ACTIONS = ((1, 2, "block erase"), (0, 4, "crypto erase"), (2, 3, "overwrite"))

    def __init__(self, poll_interval_s: float = 5.0, timeout_s: float = LONG_TIMEOUT_S) -> None:
        self.poll_interval_s = poll_interval_s
        self.timeout_s = timeout_s

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        if not _is_nvme(facts):
            return "not an NVMe device"
        problem = _whole_block_device_problem(target, facts, "nvme")
        if problem:
            return problem
        return None if self._action(CommandLog(), self._controller(target, facts)) else "sanitize not supported"

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        log = CommandLog()
        device = self._controller(target, facts)
        action = self._action(log, device)
        if action is None:
            return log.outcome(self.name, False, f"{device} reports no sanitize support (SANICAP)")
        sanact, label = action
        if self._state(log, device)[0] == SSTAT_IN_PROGRESS:  # started by a run killed mid-purge: a drive takes one
            return self._wait(log, device, "started earlier, still running when this run began")
        done = log.run(["nvme", "sanitize", device, f"--sanact={sanact}"])
        if done.returncode != 0:
            return log.outcome(self.name, False, tool_message(done))
        return self._wait(log, device, label)

    # the sanitize log's estimated times (seconds; all ones or 0: the drive gives none), per action
    TIME_KEYS = {"block erase": "time_block_erase", "crypto erase": "time_crypto_erase",
                 "overwrite": "time_over_write"}

    def drive_estimate(self, target: Target, facts: dict[str, object]) -> tuple[str | None, int | None]:
        """(the action a run would start, "block erase"...: None without sanitize support; the drive's own estimate
        of its time in seconds from the sanitize log, None when it gives none)."""
        log = CommandLog()
        device = self._controller(target, facts)
        action = self._action(log, device)
        if action is None:
            return None, None
        done = log.run(["nvme", "sanitize-log", device, "-o", "json"])
        estimate = _find_key(_json(done.stdout), self.TIME_KEYS[action[1]]) if done.returncode == 0 else None
        return action[1], estimate if isinstance(estimate, int) and estimate not in (0, 0xFFFFFFFF) else None

    def _controller(self, target: Target, facts: dict[str, object]) -> str:
        controller = facts.get("nvme_controller")
        return controller if isinstance(controller, str) else _device(target, facts)

    def _action(self, log: CommandLog, device: str) -> tuple[int, str] | None:
        sanicap = id_ctrl_value(log, device, "sanicap")
        if sanicap is None:
            return None
        return next(((sanact, label) for bit, sanact, label in self.ACTIONS if sanicap >> bit & 1), None)

    def _wait(self, log: CommandLog, device: str, label: str) -> PurgeOutcome:
        """Poll the sanitize log until SSTAT says completed (1, or 4: without deallocation) or failed (3)."""
        deadline = time.monotonic() + self.timeout_s
        not_started = 0
        while True:
            state, done = self._state(log, device)
            if done.returncode != 0:
                return log.outcome(self.name, False, tool_message(done))
            if state in (1, 4):
                return log.outcome(self.name, True, f"NVMe sanitize ({label}) of {device} completed")
            if state == 3:
                return log.outcome(self.name, False, f"NVMe sanitize ({label}) of {device} failed (SSTAT=3)")
            if state not in (0, SSTAT_IN_PROGRESS):
                return log.outcome(self.name, False, f"unreadable sanitize log of {device}: {done.stdout[:200]}")
            not_started = not_started + 1 if state == 0 else 0
            if not_started > SANITIZE_START_POLLS:
                return log.outcome(self.name, False, f"sanitize of {device} never started (SSTAT stays 0)")
            if time.monotonic() > deadline:
                return log.outcome(self.name, False, f"sanitize of {device} still running after {self.timeout_s} s")
            time.sleep(self.poll_interval_s)


    @staticmethod
    def _state(log: CommandLog, device: str) -> tuple[int | None, subprocess.CompletedProcess[str]]:
        """The sanitize log's SSTAT status (0 never, 1 done, 2 in progress, 3 failed, 4 done without
        deallocation), and the tool's run."""
        done = log.run(["nvme", "sanitize-log", device, "-o", "json"])
        sstat = _find_key(_json(done.stdout), "sstat") if done.returncode == 0 else None
        return (sstat & 0x7 if isinstance(sstat, int) else None), done


def _find_key(value: object, key: str) -> object:
    """The first value of `key` in nested JSON (nvme-cli nests the log under the device name)."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        for child in value.values():
            found = _find_key(child, key)
            if found is not None:
                return found
    return None


class NvmeFormat:
    """NVMe Format with Secure Erase Settings = 1 (user data erase), keeping the namespace as it was: the LBA format
    in use and its metadata settings (extended LBA, protection information type and location), read back after."""

    name = "nvme-format"
    pts_purge = True

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        if not _is_nvme(facts):
            return "not an NVMe device"
        return _whole_block_device_problem(target, facts, "nvme")

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        log = CommandLog()
        device = _device(target, facts)
        before, problem = _namespace_format(log, device)
        if before is None:
            return log.outcome(self.name, False, f"cannot read the LBA format in use: {problem}")
        force = ["--force"] if held_here(device) else []  # see the module's docstring (it also skips a 10 s wait)
        done = log.run(["nvme", "format", device, "--ses=1", *nvme_format_args(*before), *force], LONG_TIMEOUT_S)
        if done.returncode != 0:
            return log.outcome(self.name, False, tool_message(done))
        after, problem = _namespace_format(log, device)
        if after is None:
            return log.outcome(self.name, False, f"cannot read the LBA format back after the format: {problem}")
        if after != before:
            return log.outcome(self.name, False, f"the format changed {device}: {describe_nvme_format(*before)} "
                               f"before, {describe_nvme_format(*after)} now")
        return log.outcome(self.name, True, f"NVMe format (secure erase, {describe_nvme_format(*before)}) of "
                           f"{device} done, read back unchanged")


# id-ns bits that say how a namespace is formatted: FLBAS format index (bits 0-3, 5-6) and extended LBA (bit 4);
# DPS protection information type (bits 0-2) and location (bit 3: first 8 bytes of the metadata)
FLBAS_BITS = 0x7F
DPS_BITS = 0xF


def nvme_format_args(flbas: int, dps: int) -> list[str]:
    """nvme-cli format options that keep a namespace's FLBAS and DPS (nvme-cli's defaults, 0, would drop metadata
    transferred with the data and the protection information)."""
    lbaf = (flbas & 0xF) | (flbas >> 5 & 0x3) << 4
    return [f"--lbaf={lbaf}", f"--ms={flbas >> 4 & 1}", f"--pi={dps & 0x7}", f"--pil={dps >> 3 & 1}"]


def describe_nvme_format(flbas: int, dps: int) -> str:
    """'LBA format 1, extended LBA, PI type 1 (first 8 bytes)' in words."""
    words = [nvme_format_args(flbas, dps)[0].replace("--lbaf=", "LBA format ")]
    if flbas >> 4 & 1:
        words.append("metadata in the LBA (extended)")
    if dps & 0x7:
        words.append(f"PI type {dps & 0x7} ({'first' if dps >> 3 & 1 else 'last'} 8 bytes of the metadata)")
    else:
        words.append("no PI")
    return ", ".join(words)


def _namespace_format(log: CommandLog, device: str) -> tuple[tuple[int, int] | None, str]:
    """(FLBAS, DPS) of a namespace from `nvme id-ns`, or None and why not."""
    done = log.run(["nvme", "id-ns", device, "-o", "json"])
    found = _json(done.stdout) if done.returncode == 0 else {}
    flbas, dps = found.get("flbas"), found.get("dps", 0)
    if not isinstance(flbas, int) or not isinstance(dps, int):
        return None, tool_message(done) if done.returncode else "no flbas in its output"
    return (flbas & FLBAS_BITS, dps & DPS_BITS), ""


class AtaSecureErase:
    """ATA SECURITY ERASE UNIT with a temporary password, which is always removed again if the erase fails."""

    name = "ata-secure-erase"
    pts_purge = True

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        if facts.get("transport") != "sata":
            return "not a SATA device"
        return _whole_block_device_problem(target, facts, "hdparm") or _security_problem(
            CommandLog(), _device(target, facts)
        )

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        log = CommandLog()
        device = _device(target, facts)
        problem = _security_problem(log, device)
        if problem:
            return log.outcome(self.name, False, f"cannot secure-erase {device}: {problem}")
        password = ["--user-master", "u"]
        done = log.run(["hdparm", *password, "--security-set-pass", ATA_TEMP_PASSWORD, device])
        if done.returncode != 0:
            return log.outcome(self.name, False, f"setting the temporary password failed: {tool_message(done)}")
        # hdparm exits 0 even when the drive aborts the command: believe the drive's own Security state
        enabled = _password_set(log, device)
        if enabled is False:
            return log.outcome(self.name, False, "setting the temporary password failed: the drive shows no "
                                                 "password set afterwards (hdparm -I), though hdparm exited 0")
        if enabled is None:
            message = "cannot read the drive's security state after setting the temporary password"
        else:
            done = log.run(["hdparm", *password, "--security-erase", ATA_TEMP_PASSWORD, device], LONG_TIMEOUT_S)
            if done.returncode == 0 and _password_set(log, device) is False:  # the drive clears it when done
                return log.outcome(self.name, True, f"ATA secure erase of {device} done")
            message = (f"secure erase failed: {tool_message(done)}" if done.returncode != 0 else
                       "secure erase failed: the drive still has the temporary password afterwards (hdparm -I)")
        undo = log.run(["hdparm", *password, "--security-disable", ATA_TEMP_PASSWORD, device])
        if undo.returncode != 0:
            message += (f"; removing the temporary password {ATA_TEMP_PASSWORD!r} ALSO failed "
                        f"({tool_message(undo)}): run hdparm --user-master u --security-disable "
                        f"{ATA_TEMP_PASSWORD} {device}")
        return log.outcome(self.name, False, message)


def _security_problem(log: CommandLog, device: str) -> str | None:
    """Read `hdparm -I`'s Security section: None when secure erase is possible, else the reason."""
    done = log.run(["hdparm", "-I", device])
    if done.returncode != 0:
        return tool_message(done)
    states = _security_states(done.stdout)
    if "supported" not in states:
        return "the ATA security feature set is not supported"
    for state, why in (("enabled", "a user password is already set"), ("locked", "the drive is locked"),
                       ("frozen", "the drive is frozen (suspend/resume the machine or hot-plug the drive)")):
        if state in states:
            return why
    return None


def _password_set(log: CommandLog, device: str) -> bool | None:
    """Whether the drive's Security section says a password is enabled; None when `hdparm -I` fails."""
    done = log.run(["hdparm", "-I", device])
    return "enabled" in _security_states(done.stdout) if done.returncode == 0 else None


def _security_states(hdparm_identify: str) -> set[str]:
    """{'supported', 'enabled', 'locked', 'frozen', ...}: the states of the Security section without 'not'."""
    states: set[str] = set()
    inside = False
    for line in hdparm_identify.splitlines():
        if line.startswith("Security:"):
            inside = True
        elif inside and line and not line[0].isspace():
            break
        elif inside:
            words = line.split()
            if words and words[0] != "not" and len(words) == 1:
                states.add(words[0])
    return states


class ScsiFormat:
    """SCSI FORMAT UNIT (sg_format --format), else SANITIZE block erase (sg_sanitize --block)."""

    name = "scsi"
    pts_purge = True

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        if facts.get("transport") not in ("scsi", "sas"):
            return "not a SCSI/SAS device"
        if shutil.which("sg_format") is None and shutil.which("sg_sanitize") is None:
            return "neither sg_format nor sg_sanitize is installed (sg3-utils)"
        tool = "sg_format" if shutil.which("sg_format") else "sg_sanitize"
        return _whole_block_device_problem(target, facts, tool)

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        log = CommandLog()
        device = _device(target, facts)
        # --quick: no 15 s countdown for a human to press Ctrl-C (--destructive was that confirmation)
        if shutil.which("sg_format"):
            argv, what = ["sg_format", "--format", "--quick", device], "SCSI FORMAT UNIT"
        else:
            argv, what = ["sg_sanitize", "--block", "--quick", device], "SCSI SANITIZE (block erase)"
        done = log.run(argv, LONG_TIMEOUT_S)
        if done.returncode != 0:
            return log.outcome(self.name, False, tool_message(done))
        return log.outcome(self.name, True, f"{what} of {device} done")


class Blkdiscard:
    """Discard (TRIM/UNMAP/Deallocate) every LBA: a fallback, not a PTS purge."""

    name = "blkdiscard"
    pts_purge = False  # recorded as a deviation

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        if target.kind != "block":
            return "not a block device"
        if shutil.which("blkdiscard") is None:
            return "blkdiscard is not installed"
        sysdir = block_sysfs_dir(target.path)
        limit = read_sysfs(os.path.join(sysdir, "queue", "discard_max_bytes")) if sysdir else None
        if limit == "0":
            return "the device does not support discard"
        return None

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        log = CommandLog()
        force = ["--force"] if held_here(target.path) else []  # see the module's docstring
        done = log.run(["blkdiscard", *force, target.path], LONG_TIMEOUT_S, ends_with_ptsbench=True)
        if done.returncode != 0:
            return log.outcome(self.name, False, tool_message(done), is_deviation=not self.pts_purge)
        return log.outcome(self.name, True, f"discarded all of {target.path} (not a PTS purge)",
                           is_deviation=not self.pts_purge)


class NoPurge:
    """Nothing is done: files cannot be purged, and some devices offer no method."""

    name = "none"
    pts_purge = False  # recorded as a deviation

    def __init__(self, reason: str = "") -> None:
        self.reason = reason

    def applies(self, target: Target, facts: dict[str, object]) -> str | None:
        return None

    def run(self, target: Target, facts: dict[str, object]) -> PurgeOutcome:
        why = self.reason or ("a file cannot be purged" if target.kind == "file" else "purge not requested")
        return PurgeOutcome(self.name, [], True, f"no purge of {target.path}: {why}", not self.pts_purge)


def purge_methods() -> list[PurgeMethod]:
    """All methods, in the order "auto" tries them."""
    return [NvmeSanitize(), NvmeFormat(), AtaSecureErase(), ScsiFormat(), Blkdiscard(), NoPurge()]


PURGE_METHOD_NAMES = ("auto", *(method.name for method in purge_methods()))


def purge_reach(method: PurgeMethod, target: Target, facts: dict[str, object]) -> list[str]:
    """The namespaces a method erases to purge `target`: NVMe sanitize every one of the NVM subsystem, an NVMe
    format too when the controller's FNA bits say so; everything else only the target (empty when unknown)."""
    controller = facts.get("nvme_controller")
    device = _device(target, facts)
    if not isinstance(controller, str) or not isinstance(method, NvmeSanitize | NvmeFormat):
        return [device]
    everything = subsystem_namespaces(controller)
    if len(everything) < 2:  # the target alone (or the kernel does not say): no need to ask the controller
        return [device]
    if isinstance(method, NvmeFormat):
        fna = id_ctrl_value(CommandLog(), controller, "fna")
        if fna is not None and not fna & FNA_ALL_NAMESPACES:
            return [device]
    return everything


# FNA bit 0: a format, bit 1: a secure erase (--ses=1) applies to all namespaces; an unreadable FNA counts as all
FNA_ALL_NAMESPACES = 0x3


def _scope(method: PurgeMethod, target: Target, facts: dict[str, object], scope: str,
           fleet: Sequence[str] = ()) -> tuple[str | None, str]:
    """(why the method may not erase all it reaches, or None; the reach in words when it is more than the target);
    `fleet`: the other targets of a fleet being planned (while it runs, this process holds them)."""
    reach = purge_reach(method, target, facts)
    if len(reach) < 2:
        return None, ""
    controller = str(facts.get("nvme_controller"))
    what = "sanitize" if isinstance(method, NvmeSanitize) else "format"
    problem = scope_problem(_device(target, facts), reach, what, controller, scope, fleet)
    return problem, describe_reach(what, reach, controller)


def purge_reach_text(method: PurgeMethod, target: Target, facts: dict[str, object], scope: str) -> str:
    """' (format erases all 2 namespaces of nvme1: nvme1n1, nvme1n2)' when a purge reaches beyond the target."""
    reach = _scope(method, target, facts, scope)[1]
    return f" ({reach})" if reach else ""


def choose_purge(target: Target, facts: dict[str, object], requested: str = "auto",
                 scope: str = "namespace", fleet: Sequence[str] = ()) -> PurgeMethod:
    """The method to use: the requested one (TargetError if it cannot be used, UnsafeTargetError when it would
    erase another namespace that holds data or that a run measures: `fleet`, the other targets of a fleet being
    planned), or the first that applies and erases nothing it must not."""
    methods = {method.name: method for method in purge_methods()}
    if requested != "auto":
        if requested not in methods:
            raise PtsbenchError(f"unknown purge method: {requested!r}", "use one of " + ", ".join(PURGE_METHOD_NAMES))
        why_not = methods[requested].applies(target, facts)
        if why_not:
            raise TargetError(f"purge method {requested} cannot be used on {target.path}: {why_not}",
                              "use --purge auto, or another method")
        problem, _ = _scope(methods[requested], target, facts, scope, fleet)
        if problem:
            raise UnsafeTargetError(f"refusing to purge {target.path} with {requested}: {problem}",
                                    "unmount or stop what uses the other namespace (or test it in another run, "
                                    "after this one), or purge only this one: --purge auto chooses a method that "
                                    "erases nothing else")
        return methods[requested]
    if target.kind != "block":
        return NoPurge()
    reasons = []
    for method in purge_methods()[:-1]:
        why_not = method.applies(target, facts) or _scope(method, target, facts, scope, fleet)[0]
        if why_not is None:
            return method
        reasons.append(f"{method.name}: {why_not}")
    return NoPurge("no purge method applies (" + "; ".join(reasons) + ")")


def purge(target: Target, facts: dict[str, object], destructive: bool, requested: str = "auto",
          scope: str = "namespace") -> PurgeOutcome:
    """Purge a target with the chosen method; block devices only with destructive=True (never mounted ones), and
    other namespaces only as `scope` allows. The outcome's message says what else was erased."""
    if requested != "none":
        check_write_allowed(target, destructive)
    method = choose_purge(target, facts, requested, scope)
    reach = _scope(method, target, facts, scope)[1]
    outcome = method.run(target, facts)
    return replace(outcome, message=f"{outcome.message} ({reach})") if reach else outcome
