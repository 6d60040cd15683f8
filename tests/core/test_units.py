"""units: sizes as ptsbench reads them (and hands them to fio), durations as people read them."""

import subprocess

import pytest

from ptsbench.errors import PtsbenchError
from ptsbench.units import fio_size_text, format_duration, parse_size_bytes, spoken_duration


@pytest.mark.parametrize(("text", "size_bytes"), [
    ("512", 512), ("4k", 4096), ("4K", 4096), ("4KB", 4096), ("4KiB", 4096), ("4kib", 4096), ("1.5G", 1536 * 1024**2),
    ("0.5k", 512), ("1 m", 1024**2), ("2t", 2 * 1024**4),
])
def test_sizes_are_binary_however_spelt(text: str, size_bytes: int) -> None:
    assert parse_size_bytes(text) == size_bytes and fio_size_text(text) == str(size_bytes)


@pytest.mark.parametrize("text", ["1.3k", "0.1", "big", "-1G", "4q", ""])
def test_sizes_that_are_no_whole_number_of_bytes_are_refused(text: str) -> None:
    with pytest.raises(PtsbenchError):
        parse_size_bytes(text)


def test_fio_reads_the_handed_over_text_as_the_same_byte_count() -> None:
    """The byte count is the one spelling fio cannot read otherwise (it reads 4KiB as 4000 and 1.5M as 1)."""
    for text in ("4KiB", "1.5M", "12k"):
        argv = ["fio", "--name=x", "--ioengine=null", "--rw=read", "--bs=512", f"--size={fio_size_text(text)}",
                "--output-format=terse", "--terse-version=3"]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        assert int(done.stdout.split(";")[5]) * 1024 == parse_size_bytes(text)  # terse v3 field 6: read KiB


@pytest.mark.parametrize(("seconds", "clock", "spoken"), [
    (2.5, "0:03", "2.5 s"), (89.5, "1:30", "1 min 30 s"), (3600 * 52 + 45 * 60 + 29.5, "52:45:30", "52 h 45 min"),
    (0.4, "0:00", "0.4 s"), (60, "1:00", "1 min"),
])
def test_durations_round_half_up(seconds: float, clock: str, spoken: str) -> None:
    assert format_duration(seconds) == clock and spoken_duration(seconds) == spoken
