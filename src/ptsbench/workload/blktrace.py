"""blktrace's binary records (the kernel's struct blk_io_trace, 48 bytes, then `pdu_len` bytes of payload) read with
numpy: the records are found by their magic word and decoded a field at a time over all records at once.

The layout (include/uapi/linux/blktrace_api.h), in the byte order of the host that traced:
  u32 magic (0x65617400 | version 7), u32 sequence, u64 time_ns, u64 sector, u32 bytes, u32 action, u32 pid,
  u32 device, u32 cpu, u16 error, u16 pdu_len
`action` is the event (low 16 bits: queue, issue, complete, ...) and its category bits (high 16: read, write,
discard, notify, ...).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptsbench.errors import PtsbenchError
from ptsbench.fio.iolog import BLKTRACE_MAGIC as MAGIC
from ptsbench.fio.iolog import blktrace_byte_order

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RECORD_BYTES = 48
VERSION = 0x07
# event numbers (the low 16 bits of action): queued by the file system or application, issued to the driver,
# completed by the device
ACT_QUEUE = 1
ACT_ISSUE = 7
ACT_COMPLETE = 8
# category bits (the high 16 bits of action)
TC_WRITE = 1 << 1
TC_NOTIFY = 1 << 10
TC_DISCARD = 1 << 13
DIRECTIONS = ("read", "write", "trim")  # the direction codes of every IO stream: 0, 1, 2
_FIELDS = {"magic": (0, "u4"), "time_ns": (8, "u8"), "sector": (16, "u8"), "bytes": (24, "u4"), "action": (28, "u4"),
           "pid": (32, "u4"), "device": (36, "u4"), "pdu_len": (46, "u2")}


@dataclass(frozen=True)
class BlkEvents:
    """The queue, issue and complete events of a trace that move data, in the trace's order."""

    event_count: int  # every record in the file
    time_ns: "npt.NDArray[np.int64]"  # since the trace's first record
    act: "npt.NDArray[np.uint8]"  # ACT_QUEUE, ACT_ISSUE or ACT_COMPLETE
    direction: "npt.NDArray[np.uint8]"  # index into DIRECTIONS
    size_bytes: "npt.NDArray[np.int64]"
    offset_bytes: "npt.NDArray[np.int64]"
    pid: "npt.NDArray[np.uint32]"  # the process that was running when the event happened (queue: the submitter)
    devices: tuple[int, ...]  # the traced devices (kernel dev_t: major << 20 | minor)


def read_blktrace(path: Path) -> BlkEvents:
    """The data-moving events of the blktrace binary file `path` (one device's trace, or blkparse -d's merge)."""
    import numpy as np

    data = np.fromfile(path, dtype=np.uint8)
    if not len(data):  # a capture of a device that did no IO
        nothing = np.zeros(0, dtype=np.int64)
        return BlkEvents(0, nothing, nothing.astype(np.uint8), nothing.astype(np.uint8), nothing, nothing,
                         nothing.astype(np.uint32), ())
    order = blktrace_byte_order(data[:4].tobytes())
    if order is None:
        raise PtsbenchError(f"{path} is not a blktrace binary trace (no blk_io_trace magic word at its start)",
                            "give a file blktrace or `ptsbench capture` wrote (or an fio iolog)")
    version = int(data[0] if order == "<" else data[3])
    if version != VERSION:
        raise PtsbenchError(f"{path}: blktrace format version {version} is not {VERSION}",
                            "trace with blktrace 1.x or `ptsbench capture`")
    buffer = data
    offsets = _record_offsets(buffer, order, path)
    first = _fields(buffer, offsets, ("action", "bytes"), order)
    action, size = first["action"], first["bytes"]
    act = (action & 0xFFFF).astype(np.uint8)
    category = action >> 16
    wanted = (np.isin(act, (ACT_QUEUE, ACT_ISSUE, ACT_COMPLETE)) & ((category & TC_NOTIFY) == 0) & (size > 0))
    chosen = offsets[wanted]
    category = category[wanted]
    direction = np.where(category & TC_DISCARD, 2, np.where(category & TC_WRITE, 1, 0)).astype(np.uint8)
    found = _fields(buffer, chosen, ("time_ns", "sector", "pid", "device"), order)
    first_ns = int(_field(buffer, offsets[:1], *_FIELDS["time_ns"], order)[0]) if len(offsets) else 0
    devices = np.unique(found["device"])
    return BlkEvents(len(offsets), found["time_ns"].astype(np.int64) - first_ns, act[wanted], direction,
                     size[wanted].astype(np.int64), found["sector"].astype(np.int64) * 512, found["pid"],
                     tuple(int(device) for device in devices))


def _fields(buffer: Any, offsets: "npt.NDArray[np.int64]", names: tuple[str, ...],
            order: str) -> "dict[str, npt.NDArray[Any]]":
    """Fields of every record at `offsets`. When every record starts on 8 bytes (payloads of whole words, the usual
    case), each 64-bit word of the record is gathered once and its fields cut out of it; else a field at a time."""
    import numpy as np

    if len(offsets) and (offsets & 7).any():
        return {name: _field(buffer, offsets, *_FIELDS[name], order) for name in names}
    words = np.frombuffer(buffer, dtype=f"{order}u8", count=len(buffer) // 8)
    index = offsets // 8
    gathered: dict[int, Any] = {}
    found = {}
    for name in names:
        field_offset, kind = _FIELDS[name]
        size = np.dtype(kind).itemsize
        word = field_offset // 8
        if word not in gathered:
            gathered[word] = words[index + word]
        within = field_offset % 8
        shift = within * 8 if order == "<" else (8 - within - size) * 8
        found[name] = ((gathered[word] >> np.uint64(shift)) & np.uint64((1 << (8 * size)) - 1)).astype(kind)
    return found


def _record_offsets(buffer: Any, order: str, path: Path) -> "npt.NDArray[np.int64]":
    """Where each record starts. Records are found as the positions of the magic word; they are the records when
    each one ends where the next begins (48 bytes plus its payload). A payload holding the magic word by chance
    breaks that chain; then the file is walked record by record (slow, but exact)."""
    import numpy as np

    length = len(buffer)
    magic = np.uint32(MAGIC | VERSION)
    if length % RECORD_BYTES == 0:  # no record carries a payload (every record 48 bytes): a strided look suffices
        pdu = np.frombuffer(buffer, dtype=f"{order}u2", count=length // 2)[23::RECORD_BYTES // 2]
        heads = np.frombuffer(buffer, dtype=f"{order}u4", count=length // 4)[::RECORD_BYTES // 4]
        if not pdu.any() and np.all(heads == magic):
            return np.arange(0, length, RECORD_BYTES, dtype=np.int64)
    # payloads of whole words (the usual case): records start on 8 bytes, or on 4
    words = np.frombuffer(buffer, dtype=f"{order}u4", count=length // 4)
    for step in (2, 1):
        candidates = np.flatnonzero(words[::step] == magic).astype(np.int64) * (4 * step)
        if _chained(buffer, candidates, order, length):
            return candidates
    found = []
    for start in range(1, 4):
        words = np.frombuffer(buffer, dtype=f"{order}u4", offset=start, count=(length - start) // 4)
        found.append(np.flatnonzero(words == magic).astype(np.int64) * 4 + start)
    found.append(candidates)
    candidates = np.sort(np.concatenate(found))
    if _chained(buffer, candidates, order, length):
        return candidates
    return _walk(buffer, order, path)


def _chained(buffer: Any, offsets: "npt.NDArray[np.int64]", order: str, length: int) -> bool:
    """Whether `offsets` are records back to back from the file's start to its end, each with the magic word."""
    import numpy as np

    if not len(offsets) or offsets[0] != 0 or offsets[-1] + RECORD_BYTES > length:
        return False
    heads = _fields(buffer, offsets, ("magic", "pdu_len"), order)
    if not np.all((heads["magic"] & 0xFFFFFF00) == MAGIC):
        return False
    ends = offsets + RECORD_BYTES + heads["pdu_len"].astype(np.int64)
    return bool(ends[-1] == length and np.array_equal(ends[:-1], offsets[1:]))


def _walk(buffer: Any, order: str, path: Path) -> "npt.NDArray[np.int64]":
    """Record offsets by following each record's length from the start (the exact, slow way)."""
    import numpy as np

    view = memoryview(buffer).cast("B")
    offsets = []
    position = 0
    little = order == "<"
    while position + RECORD_BYTES <= len(view):
        magic = int.from_bytes(view[position:position + 4], "little" if little else "big")
        if magic & 0xFFFFFF00 != MAGIC:
            raise PtsbenchError(f"{path} is damaged: no blk_io_trace record at byte {position}",
                                "capture the trace again (a cut or mixed file cannot be read)")
        offsets.append(position)
        position += RECORD_BYTES + int.from_bytes(view[position + 46:position + 48], "little" if little else "big")
    if position != len(view):
        raise PtsbenchError(f"{path} is damaged: its last record is cut at byte {position}",
                            "capture the trace again (the capture was stopped while writing)")
    return np.asarray(offsets, dtype=np.int64)


def _field(buffer: Any, offsets: "npt.NDArray[np.int64]", field_offset: int, kind: str,
           order: str) -> "npt.NDArray[Any]":
    """One field of every record at `offsets`: gathered from a view of the buffer at each alignment the records
    take (one view when all are aligned, the usual case)."""
    import numpy as np

    dtype = np.dtype(f"{order}{kind}")
    size = dtype.itemsize
    positions = offsets + field_offset
    out = np.empty(len(positions), dtype=dtype.newbyteorder("="))
    remainder = positions & (size - 1)
    if not remainder.any():  # the usual case: every record aligned for this field
        words = np.frombuffer(buffer, dtype=dtype, count=len(buffer) // size)
        out[:] = words[positions // size]
        return out
    for start in range(size):
        chosen = remainder == start
        if chosen.any():
            words = np.frombuffer(buffer, dtype=dtype, offset=start, count=(len(buffer) - start) // size)
            out[chosen] = words[(positions[chosen] - start) // size]
    return out


def write_process_only(path: Path, pid: int, out: Path) -> int:
    """Write `path` to the new file `out` without the queue events of any process but `pid` (the other records stay:
    fio's replay takes only queue events, so it replays that process's IOs alone); the queue events kept."""
    import numpy as np

    data = np.fromfile(path, dtype=np.uint8)
    order = blktrace_byte_order(data[:4].tobytes()) or "<"
    offsets = _record_offsets(data, order, path)
    found = _fields(data, offsets, ("action", "pid"), order)
    queued = (found["action"] & 0xFFFF) == ACT_QUEUE
    keep = ~(queued & (found["pid"] != pid))
    lengths = np.diff(np.append(offsets, len(data)))
    with open(out, "xb") as handle:
        handle.write(data[np.repeat(keep, lengths)].tobytes())
    return int(np.count_nonzero(queued & keep))
