"""The guard on planned cases, before any IO: what their jobs open and write (targets, devices named in job files,
the files fio writes under names the jobs give: logs, IO logs, saved verify state), also the files fio's client
writes here for cases run on hosts."""

import os
from collections.abc import Sequence

from ptsbench.cases.plan import Case
from ptsbench.device.guard import check_opened
from ptsbench.device.identity import device_identity
from ptsbench.device.target import Mount, block_device_of_char, kernel_filesystem, read_mounts, zoned_model
from ptsbench.errors import JobFileError, TargetError, UnsafeTargetError
from ptsbench.fio.opens import JobOpens


def check_cases(cases: Sequence[Case], destructive: bool, allow_mounted: bool = False) -> None:
    """Refuse, before any IO, cases that would write to a device the guard does not clear, name a device that does
    not exist, or make a target file nobody gave a size for. The mounts are read once, and a path is judged once
    however many cases open it (a sweep's thousands of cells share their target)."""
    mounts = read_mounts()
    judged: set[tuple[str, bool]] = set()
    for case in cases:
        if case.rejected:
            continue  # fio's parser rejects it: fio is not started for it
        _check_limits(case)
        for job in case.opens:
            _check_logs(job, mounts)
        # an existing log name may be a device, or a link to one (a new name: _check_logs judged its folder)
        logs = [(path, True) for path, _option in case.outputs() if os.path.lexists(path)]
        opened = [pair for pair in dict.fromkeys(case.opened() + logs) if pair not in judged]
        check_opened(opened, case.unknown_writes(), destructive, allow_mounted, case.changed_files(),
                     case.target.path if case.target else None)
        judged.update(opened)
        _check_zoned(case)
        if case.device_and_new_file:
            raise JobFileError(case.device_and_new_file, "put the new file in a job of its own (ptsbench sets "
                               "allow_file_create=0 on jobs that open a device)")
        target = case.target
        if target is not None and target.names_missing_file:
            unsized = [job.name for job in case.opens if not (job.options.get("size") or job.options.get("filesize"))]
            if unsized:
                raise TargetError(f"{target.requested}: no such file, and job {unsized[0]} sets no size",
                                  "give --size to create it (or check the path for a typo)")


def check_client_files(cases: Sequence[Case], host_names: Sequence[str], destructive: bool,
                       allow_mounted: bool = False) -> None:
    """What the guard of cases run on hosts (hosts/preflight.py) does not judge: the limits every run is held to, the
    logs fio's client writes on this machine (a log name with the host's name after it), judged like a local run's
    logs, and the verify state each fio server saves in its own working folder, which no one here can inspect
    (refused without --destructive)."""
    mounts = read_mounts()
    for case in cases:
        if case.rejected:
            continue
        _check_limits(case)
        written = case.client_outputs(host_names)
        for path, option in written:
            _check_log_path(path, option, f"case {case.name}", mounts)
        check_opened([(path, True) for path, _option in written if os.path.lexists(path)], [], destructive,
                     allow_mounted, [(path, f"fio's client writes its {option} over it") for path, option in written
                                     if os.path.isfile(path)])
        saved = [name for job in case.opens for name in job.verify_states()]
        if saved and not destructive:
            raise UnsafeTargetError(f"refusing to run case {case.name}: each host's fio server would save its verify "
                                    f"state as {saved[0]} in the server's own working folder, which ptsbench cannot "
                                    "check", "add verify_state_save=0 to the job (or --set verify_state_save=0), or "
                                    "check the hosts' folders yourself and add --destructive")


def _check_limits(case: Case) -> None:
    """A job past the limits every run is held to (JobOpens.beyond_limits), on this machine or on hosts."""
    for job in case.opens:
        if (beyond := job.beyond_limits()) is not None:
            raise JobFileError(f"{case.source}: job {job.name}: {beyond}", "fix the job file (or its --set)")


def _check_zoned(case: Case) -> None:
    """A zoned device takes writes only at each zone's write pointer: fio knows its zones only with zonemode=zbd
    (without it, writes fail or, buffered, are lost while fio reports IOPS)."""
    for job in case.opens:
        if (job.options.get("zonemode") or "none").strip() == "zbd":
            continue
        for path in job.paths:
            device = block_device_of_char(path) if _is_char_device(path) else path
            model = zoned_model(device) if device else None
            if model:
                raise TargetError(f"{case.source}: job {job.name} opens {path}, a zoned block device ({model}), "
                                  "without zonemode=zbd", "add zonemode=zbd to the job (or --set zonemode=zbd): "
                                  "fio then writes each zone at its write pointer")


def _is_char_device(path: str) -> bool:
    found = device_identity(path)
    return found is not None and found.kind == "char"


def _check_logs(job: JobOpens, mounts: Sequence[Mount]) -> None:
    """The logs a job names itself are written only to a real file system (a prefix under /dev or /proc would make
    files in the kernel's own file systems), and never through a link to a file that does not exist (fio would make
    it wherever the link points)."""
    folders: set[str] = set()
    for path in job.log_files():
        if not os.path.lexists(path) and os.path.dirname(path) in folders:
            continue  # a new file lands on its folder's file system: one look per folder (thousands of clones)
        folders.add(os.path.dirname(path))
        _check_log_path(path, "log", f"job {job.name}", mounts)
    for path, option in job.outputs():
        _check_log_path(path, option, f"job {job.name}", None)


def _check_log_path(path: str, option: str, who: str, mounts: Sequence[Mount] | None) -> None:
    """A file fio writes under a name a job gives: never on a kernel file system (with `mounts`; a prefix under /dev
    or /proc would make files in the kernel's own file systems), never through a link to a file that does not exist
    (fio would make it wherever the link points)."""
    kernel = kernel_filesystem(path, mounts) if mounts is not None else None
    if kernel:
        raise UnsafeTargetError(f"refusing to run: {who} would write its {option} {path} on the kernel's {kernel}",
                                "give its write_*_log a path on a real file system")
    if os.path.islink(path) and not os.path.exists(path):
        raise UnsafeTargetError(f"refusing to run: {who}'s {option} {path} is a link to {os.readlink(path)}, which "
                                "does not exist: fio would make a file there",
                                f"remove the link, or give {option} a name where nothing is")
