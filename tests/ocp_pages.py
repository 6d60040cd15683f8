"""OCP log pages as a drive writes them, for the nvme stand-in (tests/fakebin: `nvme get-log ... --raw-binary`):
the Latency Monitor log (C3h) and the SMART / Health Information Extended log (C0h), laid out here from the OCP
Datacenter NVMe SSD specification's tables with struct, apart from the decoder under test (device/latency_log.py).
No drive or QEMU here has C3h; the FTL lab reads it from NVMeVirt, and tests/data/telemetry holds a page it read."""

import struct

C3H_GUID = bytes.fromhex("85d45e58d4e643709c6c84d08cc07a92")[::-1]
C0H_GUID = bytes.fromhex("afd514c97c6f4f9ca4f2bfea2810afc5")[::-1]

Counts = dict[str, tuple[int, int, int]]  # bucket -> (read, write, trim)


def c3h_page(counts: Counts | None = None, thresholds_ms: tuple[int, int, int, int] = (5, 10, 20, 50),
             timer_threshold_min: int = 60, status: int = 1, order: str = "2.0", version: int = 4,
             latency_config: int = 0xFFF, window_ms: int = 1000) -> bytes:
    """A C3h page: feature status, active bucket timer threshold (5-minute units), thresholds A-D ((value + 1) x 5
    ms), active latency configuration, minimum window (100 ms units), each active bucket's four words in `order`
    ("1.0": read, write, trim, reserved; "2.0": reserved, trim, write, read), the version and the GUID."""
    page = bytearray(512)
    struct.pack_into("<BxHH4BHB", page, 0, status, 0, timer_threshold_min // 5,
                     *(ms // 5 - 1 for ms in thresholds_ms), latency_config, window_ms // 100)
    for bucket in range(4):
        read, write, trim = (counts or {}).get(str(bucket), (0, 0, 0))
        words = (read, write, trim, 0) if order == "1.0" else (0, trim, write, read)
        struct.pack_into("<4I", page, 0x20 + 16 * bucket, *words)
    struct.pack_into("<H16s", page, 0x1EE, version, C3H_GUID)
    return bytes(page)


def c0h_page(dssd_major: int) -> bytes:
    """A C0h page naming DSSD specification version `dssd_major`.0 (byte 103 the major version, 101-102 minor)."""
    page = bytearray(512)
    page[103] = dssd_major
    struct.pack_into("<H16s", page, 494, 3, C0H_GUID)
    return bytes(page)
