"""NVMe admin commands from Python in the device lab's guest, through the kernel's admin passthrough (the ioctl
nvme-cli uses), where a check needs the buffer's place in memory under its own control."""

import os

NVME_ADMIN_CMD = 0xC0484E41  # _IOWR('N', 0x41, struct nvme_passthru_cmd): 72 bytes
GET_LOG_PAGE = 0x02


def get_log(controller: str, lid: int, length: int, offset_in_page: int) -> bytes:
    """Log page LID read with the kernel's admin passthrough into a buffer starting OFFSET_IN_PAGE bytes into a
    page: past the page's end the device must write through PRP2. The buffer is filled with 0xAA first."""
    import ctypes
    import fcntl
    import mmap
    import struct

    area = mmap.mmap(-1, 2 * mmap.PAGESIZE)
    area.write(b"\xaa" * len(area))
    pointer = ctypes.c_char.from_buffer(area)
    try:
        numd = length // 4 - 1
        command = bytearray(struct.pack("<BBHIIIQQII6III", GET_LOG_PAGE, 0, 0, 0xFFFFFFFF, 0, 0, 0,
                                        ctypes.addressof(pointer) + offset_in_page, 0, length,
                                        lid | (numd & 0xFFFF) << 16, numd >> 16, 0, 0, 0, 0, 0, 0))
        fd = os.open(controller, os.O_RDONLY)
        try:
            fcntl.ioctl(fd, NVME_ADMIN_CMD, command)
        finally:
            os.close(fd)
        return bytes(area[offset_in_page:offset_in_page + length])
    finally:
        del pointer
        area.close()
