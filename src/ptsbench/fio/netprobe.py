"""Which fio a server runs when it speaks another client/server protocol version than this machine's fio.

fio's client refuses such a server, saying only the server's protocol number ("bad server cmd version 109"). The
probe command is the one question every version answers alike: sent in the server's own protocol version, straight
to its socket, it brings back the server's version string (the `fio_version` field of fio's probe reply)."""

import re
import socket
import struct
from collections.abc import Sequence

PROBE_OPCODE = 10  # FIO_NET_CMD_PROBE
_HEADER = struct.Struct("<HHIQIHH")  # version, opcode, flags, tag, pdu_len, cmd_crc16, pdu_crc16 (little endian)
_CLIENT_PROBE = bytes(8 + 128)  # cmd_client_probe_pdu: flags, server name (both left empty)
_VERSION_FIELD = slice(64 + 1, 64 + 1 + 32)  # cmd_probe_reply_pdu: hostname[64], bigendian, fio_version[32], ...
_PROTOCOL_RE = re.compile(r"bad server cmd version (\d+)")
_MAX_REPLIES = 16  # a server may send text before its probe reply
_MAX_PDU_BYTES = 1 << 20


def server_protocol(lines: Sequence[str]) -> int | None:
    """The server's protocol version from fio's client refusing it, else None."""
    found = (_PROTOCOL_RE.search(line) for line in lines)
    return next((int(match.group(1)) for match in found if match), None)


def crc16(data: bytes) -> int:
    """fio's crc16 (CRC-16/ARC: reflected polynomial 0x8005, initial value 0)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def _command(protocol: int, opcode: int, payload: bytes) -> bytes:
    head = _HEADER.pack(protocol, opcode, 0, 0, len(payload), 0, 0)[:-4]
    return head + struct.pack("<HH", crc16(head), crc16(payload)) + payload


def _read_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("the server closed the connection")
        data += chunk
    return data


def probe_version(address: tuple[str, int] | str, protocol: int, timeout_s: float) -> str | None:
    """The fio version string of the server at `address` ((host, port), or a Unix socket path), asked in its
    `protocol`; None when it does not answer so."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(address)
            sock.sendall(_command(protocol, PROBE_OPCODE, _CLIENT_PROBE))
            for _ in range(_MAX_REPLIES):
                _version, opcode, _flags, _tag, size, _crc, _pdu_crc = _HEADER.unpack(_read_exact(sock, _HEADER.size))
                if size > _MAX_PDU_BYTES:
                    return None
                payload = _read_exact(sock, size)
                if opcode == PROBE_OPCODE:
                    text = payload[_VERSION_FIELD].split(b"\0")[0].decode(errors="replace")
                    return text if text.startswith("fio-") else None
    except OSError:
        return None
    return None
