"""A loaded host for tests that must hold on one: CPU hogs (a busy loop per CPU and one more) and an IO neighbour
(dd writing and syncing a file over and over), started for a block and ended with it."""

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HOG = "while True: pass"


@contextlib.contextmanager
def loaded_host(folder: Path | None = None, cpu_hogs: int | None = None) -> Iterator[None]:
    """Every CPU busy (os.cpu_count() + 1 busy loops), and with `folder` an IO neighbour writing 64 MiB files into
    it with fsync, again and again, until the block ends."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(cpu_hogs or (os.cpu_count() or 1) + 1)]
    if folder is not None:
        target = folder / "neighbour.bin"
        hogs.append(subprocess.Popen(
            ["sh", "-c", f"while :; do dd if=/dev/zero of={target} bs=1M count=64 conv=fsync status=none; done"],
            start_new_session=True))
    try:
        yield
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(hog.pid, 9) if hog.args[0] == "sh" else hog.kill()
            hog.wait()
