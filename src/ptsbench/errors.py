"""Typed errors raised by the library; only the CLI turns them into messages and exit codes."""


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
