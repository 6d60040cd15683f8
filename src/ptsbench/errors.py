"""Typed errors raised by the library; only the CLI turns them into messages and exit codes."""

import errno


class PtsbenchError(Exception):
    """A problem the user can act on. `hint` says what to do about it."""

    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}: {self.hint}" if self.hint else self.message


class FioNotFoundError(PtsbenchError):
    """fio is missing or too old."""


class JobFileError(PtsbenchError):
    """A job file is missing, unreadable or rejected by fio."""


class TargetError(PtsbenchError):
    """A target path is missing, unusable or unsafe to write."""


class UnsafeTargetError(TargetError):
    """A write to a block device was refused by the destructive-write guard."""


class StoreError(PtsbenchError):
    """The run directory cannot be written or read."""


class FioRunError(PtsbenchError):
    """fio exited non-zero, was killed or printed no usable result."""

    exit_code = 1


class LimitError(PtsbenchError):
    """A run finished and is stored, but broke a limit the user set (--min-fraction)."""

    exit_code = 3


def os_error_in(error: BaseException) -> OSError | None:
    """The OSError behind `error`: itself, or the one it was raised from or while handling. A library may hide the
    real cause behind its own state: matplotlib's PDF writer, when a write fails with ENOSPC, flushes its zlib
    stream again on the way out and raises zlib's "Error -2 while flushing: inconsistent stream state" instead."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, OSError):
            return found
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return None


def os_error_text(error: OSError) -> str:
    """One line for an OSError: the system's words, its errno name and the file, e.g. "No space left on device
    (ENOSPC): /srv/run/report/report.pdf" (the file only when the error names one)."""
    name = errno.errorcode.get(error.errno or 0)
    text = error.strerror or str(error)
    where = f": {error.filename}" if error.filename else ""
    return f"{text}{f' ({name})' if name else ''}{where}"
