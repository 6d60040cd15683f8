"""A loaded host for tests that must hold on one: CPU hogs (a busy loop per CPU and one more) and an IO neighbour
(writing and syncing a 64 MiB file over and over), started for a block and ended with it. Each ends by itself when
the process that started it is gone (a killed test run leaves no hog behind)."""

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

# busy until the parent is gone
HOG = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"
# 64 MiB written in 1 MiB blocks and synced, again and again, until the parent is gone
NEIGHBOUR = """import os, sys
parent, block = os.getppid(), b"\\0" * (1 << 20)
while os.getppid() == parent:
    with open(sys.argv[1], "wb") as handle:
        for _ in range(64):
            handle.write(block)
        handle.flush()
        os.fsync(handle.fileno())
"""


@contextlib.contextmanager
def loaded_host(folder: Path | None = None, cpu_hogs: int | None = None) -> Iterator[None]:
    """Every CPU busy (os.cpu_count() + 1 busy loops), and with `folder` an IO neighbour writing a 64 MiB file into
    it with fsync, again and again, until the block ends."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(cpu_hogs or (os.cpu_count() or 1) + 1)]
    if folder is not None:
        hogs.append(subprocess.Popen([sys.executable, "-c", NEIGHBOUR, str(folder / "neighbour.bin")]))
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
