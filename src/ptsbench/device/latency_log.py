"""The OCP Latency Monitor log page (C3h) decoded from its bytes, by the OCP Datacenter NVMe SSD specification's
byte offsets, not from nvme-cli's labelled output (whose labels and counter order changed with its version).

The page is 512 bytes, little-endian: feature status (byte 0; bit 0: the monitor enabled), active bucket timer
(2-3) and its threshold (4-5), both in 5-minute units, active thresholds A-D (6-9, each (value + 1) x 5 ms), active
latency configuration (10-11), active latency minimum window (12, in 100 ms units), the active bucket counters
(32-95: four buckets of four 32-bit words), the static bucket counters (240-303, alike), the log page version
(494-495) and the page's GUID (496-511).

Where the specification's versions differ is the order of a bucket's four words. OCP 1.0: read, write,
deallocate/trim, reserved; OCP 2.0 and later: reserved, trim, write, read (read in the bucket's top bytes). The page
says which only in part: version 4 (OCP 2.5) and later have 2.0's order, but OCP 1.0 and 2.0 both write version 1
(nvme-cli read 1.0's order up to 2.4 and 2.0's from 2.5, in either case for every version). For version 1, in
turn: the word the other order keeps reserved (to be zero) holding a count decides; else the drive's own
specification version, the DSSD major version in its OCP C0h log (byte 103), decides; else, with counts in the words
whose meaning differs, the order cannot be told and no counter is read.
"""

from collections.abc import Callable
from dataclasses import dataclass

PAGE_BYTES = 512
LOG_ID = 0xC3
GUID = bytes.fromhex("85d45e58d4e643709c6c84d08cc07a92")[::-1]  # as the page holds it: least significant byte first
C0H_LOG_ID = 0xC0
C0H_GUID = bytes.fromhex("afd514c97c6f4f9ca4f2bfea2810afc5")[::-1]
C0H_DSSD_MAJOR = 103  # the C0h log's DSSD Specification Version: major version

FEATURE_STATUS = 0x00
BUCKET_TIMER_THRESHOLD = 0x04  # 5-minute units
THRESHOLDS = 0x06  # A-D, one byte each: (value + 1) x 5 ms
LATENCY_CONFIG = 0x0A
MINIMUM_WINDOW = 0x0C  # 100 ms units
ACTIVE_COUNTERS = 0x20
STATIC_COUNTERS = 0xF0
BUCKET_BYTES = 16
VERSION = 0x1EE
GUID_AT = 0x1F0

TIMER_UNIT_MIN = 5
THRESHOLD_UNIT_MS = 5
WINDOW_UNIT_MS = 100
FIRST_VERSION_OF_2_ORDER = 4  # OCP 2.5's version; earlier 2.x pages say 1, as 1.0's do

# a bucket's words per operation
OCP_1_ORDER = {"read": 0, "write": 1, "trim": 2}  # word 3 reserved
OCP_2_ORDER = {"read": 3, "write": 2, "trim": 1}  # word 0 reserved
ORDER_NAMES = {"1.0": "OCP 1.0 (read, write, trim, reserved)", "2.0": "OCP 2.0 (reserved, trim, write, read)"}


@dataclass(frozen=True)
class LatencyLog:
    """One decoded C3h page. `counters`: bucket -> operation -> active bucket counter, None when the order of its
    words could not be told (`order_note` says why); `order`: "1.0" or "2.0" and how it was decided."""

    version: int
    feature_status: int
    bucket_timer_threshold_min: int
    thresholds_ms: list[int]
    latency_config: int
    minimum_window_ms: int
    counters: dict[str, dict[str, int]] | None
    order: str | None
    order_note: str


def _word(page: bytes, offset: int) -> int:
    return int.from_bytes(page[offset:offset + 4], "little")


def _bucket_words(page: bytes) -> list[list[int]]:
    """The four words of each active and static bucket."""
    return [[_word(page, start + BUCKET_BYTES * bucket + 4 * word) for word in range(4)]
            for start in (ACTIVE_COUNTERS, STATIC_COUNTERS) for bucket in range(4)]


def page_problem(page: bytes) -> str | None:
    """Why these bytes are not a C3h page (None: they are)."""
    if len(page) < PAGE_BYTES:
        return f"{len(page)} bytes, not the page's {PAGE_BYTES}"
    if page[GUID_AT:GUID_AT + 16] != GUID:
        return (f"its GUID reads {page[GUID_AT:GUID_AT + 16][::-1].hex()}, not the Latency Monitor log's "
                f"{GUID[::-1].hex()}")
    return None


def counter_order(page: bytes, dssd_major: Callable[[], int | None]) -> tuple[str | None, str]:
    """"1.0" or "2.0" (None: not to be told) and why. `dssd_major` reads the drive's DSSD major version (C0h),
    asked only when the page leaves the order open."""
    version = int.from_bytes(page[VERSION:VERSION + 2], "little")
    if version >= FIRST_VERSION_OF_2_ORDER:
        return "2.0", f"log page version {version}"
    words = _bucket_words(page)
    first, last = any(bucket[0] for bucket in words), any(bucket[3] for bucket in words)
    if first != last:
        order = "1.0" if first else "2.0"
        return order, (f"log page version {version}, a count in word {0 if first else 3} of a bucket, which OCP "
                       f"{'2.0' if first else '1.0'} keeps reserved")
    if not first and not any(bucket[1] or bucket[2] for bucket in words):
        return "1.0", f"log page version {version}, every counter 0 (the same in either order)"
    if first:
        return None, (f"log page version {version}: words 0 and 3 of its buckets both hold counts, one of which "
                      "either order keeps reserved")
    major = dssd_major()
    if major:
        return ("1.0" if major == 1 else "2.0"), f"log page version {version}, DSSD specification {major}.x (C0h log)"
    return None, (f"log page version {version} is that of OCP 1.0 and 2.0, whose counters lie in other orders, and "
                  "the drive's C0h log names no DSSD specification version")


def decode(page: bytes, dssd_major: Callable[[], int | None]) -> LatencyLog:
    """The page's settings in force and its active bucket counters (page_problem(page) must be None)."""
    order, note = counter_order(page, dssd_major)
    words = _bucket_words(page)[:4]
    positions = OCP_1_ORDER if order == "1.0" else OCP_2_ORDER
    counters = None if order is None else {
        str(bucket): {operation: words[bucket][word] for operation, word in positions.items()} for bucket in range(4)}
    return LatencyLog(
        version=int.from_bytes(page[VERSION:VERSION + 2], "little"),
        feature_status=page[FEATURE_STATUS],
        bucket_timer_threshold_min=TIMER_UNIT_MIN * int.from_bytes(page[BUCKET_TIMER_THRESHOLD:][:2], "little"),
        thresholds_ms=[THRESHOLD_UNIT_MS * (raw + 1) for raw in page[THRESHOLDS:THRESHOLDS + 4]],
        latency_config=int.from_bytes(page[LATENCY_CONFIG:LATENCY_CONFIG + 2], "little"),
        minimum_window_ms=WINDOW_UNIT_MS * page[MINIMUM_WINDOW],
        counters=counters, order=order, order_note=note)


def dssd_major_version(page: bytes) -> int | None:
    """The DSSD major version an OCP C0h page names (None: not a C0h page, or 0: not named)."""
    if len(page) < PAGE_BYTES or page[GUID_AT:GUID_AT + 16] != C0H_GUID:
        return None
    return page[C0H_DSSD_MAJOR] or None
