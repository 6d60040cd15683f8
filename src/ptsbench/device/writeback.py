"""Writes that never reached the device: fio writing through the page cache (no direct=1) counts a write done when
it is in memory; the kernel writes it back later, and a write-back that fails ("lost async page write") is told to
no one who does not sync. So after a case ptsbench syncs each file and device the case wrote, through a descriptor
opened before fio started: Linux reports to it every write-back error on that file or device since it was opened
(errseq), as fio would have seen them had it synced. The kernel's own lines about the device are kept as the reason.
"""

import contextlib
import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ptsbench.device.target import block_sysfs_dir

KMSG = "/dev/kmsg"
MAX_KERNEL_LINES = 2


@dataclass
class WritebackWatch:
    """Descriptors on the written paths (opened before fio starts) and the kernel log's position."""

    paths: list[str]
    descriptors: dict[str, int] = field(default_factory=dict)
    kmsg: int | None = None

    @classmethod
    def open(cls, paths: Sequence[str]) -> "WritebackWatch":
        watch = cls(list(dict.fromkeys(paths)))
        for path in watch.paths:
            watch._open(path)
        try:  # root only (or dmesg_restrict=0); without it the reason is errno's words alone
            watch.kmsg = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(watch.kmsg, 0, os.SEEK_END)
        except OSError:
            watch.kmsg = None
        return watch

    def _open(self, path: str) -> None:
        if path not in self.descriptors:
            # not there yet (fio makes it: opened after fio, an error no one was told is still told) or not ours
            with contextlib.suppress(OSError):
                self.descriptors[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)

    def lost(self) -> str | None:
        """Sync every written path; None when all reached their device, else one line: which path, the error and
        the kernel's words. Closes the descriptors."""
        for path in self.paths:
            self._open(path)
        problems: list[tuple[str, OSError]] = []
        for path, descriptor in self.descriptors.items():
            try:
                os.fsync(descriptor)
            except OSError as error:
                if error.errno != errno.EINVAL:  # a character device or pipe: nothing to write back
                    problems.append((path, error))
        kernel = self._kernel_lines([path for path, _ in problems])
        self.close()
        if not problems:
            return None
        path, failed = problems[0]
        code = errno.errorcode.get(failed.errno or 0, str(failed.errno))
        said = f"; the kernel: {' | '.join(kernel)}" if kernel else ""
        return (f"writes to {path} never reached the device: syncing it after fio gave {code} ({failed.strerror}), "
                f"though fio, writing through the page cache, counted them done{said}. Run the job with direct=1 to "
                "see such errors as they happen")

    def _kernel_lines(self, paths: Sequence[str]) -> list[str]:
        """The kernel log's lines since the watch opened that name a device under `paths`."""
        if self.kmsg is None or not paths:
            return []
        names = {_device_name(path) for path in paths} - {None}
        found = []
        while True:
            try:
                record = os.read(self.kmsg, 8192).decode(errors="replace")
            except BlockingIOError:
                break
            except OSError:  # EPIPE: records overwritten while we read; go on with the next
                continue
            if not record:
                break
            text = record.partition(";")[2].split("\n", 1)[0].strip()
            if any(name and name in text for name in names) and text not in found:
                found.append(text)
        return found[-MAX_KERNEL_LINES:]

    def close(self) -> None:
        for descriptor in [*self.descriptors.values(), *([self.kmsg] if self.kmsg is not None else [])]:
            os.close(descriptor)
        self.descriptors.clear()
        self.kmsg = None


def _device_name(path: str) -> str | None:
    """The kernel's name of the block device a path is, or holds it (dm-3, nvme0n1p2, loop4)."""
    sysdir = block_sysfs_dir(path)
    if sysdir is None:
        try:
            st_dev = os.stat(path).st_dev
        except OSError:
            return None
        sysdir = os.path.realpath(f"/sys/dev/block/{os.major(st_dev)}:{os.minor(st_dev)}")
    return os.path.basename(sysdir) if os.path.isdir(sysdir) else None
