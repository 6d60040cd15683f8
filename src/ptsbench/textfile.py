"""Text files the user names (a settings file, a device description, a host list, a job file and its includes):
read from a regular file only and only up to a size cap, so /dev/zero, a FIFO or a disk image given by mistake is
one clear error instead of a read that never ends or fills the memory."""

import os
import stat
from io import BufferedReader
from pathlib import Path

from ptsbench.errors import PtsbenchError

MAX_TEXT_BYTES = 16 * 1024 * 1024  # far more than any job file, settings file or host list people write


def open_regular(path: Path | str, what: str, hint: str,
                 error: type[PtsbenchError] = PtsbenchError) -> BufferedReader:
    """`path` opened for reading in binary, when it is a regular file; `error` when it cannot be opened or is
    anything else (a FIFO, a socket, a device, a folder), whose read could wait forever or never end."""
    try:  # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; it is refused below
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror}", hint) from None
    found = os.fstat(descriptor)
    if not stat.S_ISREG(found.st_mode):
        os.close(descriptor)
        kind = next((name for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                                             (stat.S_ISDIR, "a folder"), (stat.S_ISBLK, "a block device"),
                                             (stat.S_ISCHR, "a character device")) if test(found.st_mode)), "")
        raise error(f"{what} {path} is not a regular file" + (f" ({kind})" if kind else ""), hint)
    return os.fdopen(descriptor, "rb")


def read_user_text(path: Path | str, what: str, hint: str, error: type[PtsbenchError] = PtsbenchError,
                   limit_bytes: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of the regular file `path` (`what` names it in messages, `hint` says what to pass instead);
    `error` (a PtsbenchError class) when it is not a regular file, is larger than `limit_bytes` or is not text."""
    with open_regular(path, what, hint, error) as handle:
        data = handle.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        mib, rest = divmod(limit_bytes, 1024 * 1024)
        raise error(f"{what} {path} is larger than {f'{mib} MiB' if mib and not rest else f'{limit_bytes} bytes'}",
                    hint)
    try:
        return data.decode()
    except UnicodeDecodeError as failure:
        raise error(f"{what} {path} is not UTF-8 text (byte {failure.start})", hint) from None


def not_found_reason(path: Path | str) -> str:
    """Why `path`, neither a regular file nor a folder, is not read: missing, or what it is instead (a FIFO, a
    device, a link loop), so a user is not told a file they can see does not exist."""
    try:
        found = os.stat(path)
    except OSError as error:
        return "no such file or folder" if not os.path.lexists(path) else f"cannot read it: {error.strerror}"
    return "not a regular file or folder" if not stat.S_ISDIR(found.st_mode) else "a folder"
