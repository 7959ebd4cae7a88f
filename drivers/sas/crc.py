"""CRC-16 as SAS defines it: the Kermit variant (CCITT polynomial, reflected, no final XOR), seedable, sent low byte first."""

from __future__ import annotations

import binascii

__all__ = ["crc16", "rom_crc16", "with_crc", "crc_ok"]


def _table() -> tuple[int, ...]:
    out = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
        out.append(crc)
    return tuple(out)


_TABLE = _table()
_REV8 = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def crc16(data: bytes, seed: int = 0) -> int:
    """CRC-16/Kermit of `data` starting from `seed` (SAS's seed for the ROM signature, else 0)."""
    crc = seed & 0xFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc


def _rev16(v: int) -> int:
    return (_REV8[v & 0xFF] << 8) | _REV8[v >> 8]


def rom_crc16(data: bytes, seed: int = 0) -> int:
    """The same CRC over megabytes (the installed software): Kermit is CRC-CCITT bit-reflected, so it is
    binascii's C implementation over the bit-reversed bytes, bit-reversed back."""
    return _rev16(binascii.crc_hqx(data.translate(_REV8), _rev16(seed & 0xFFFF)))


def with_crc(message: bytes) -> bytes:
    """`message` followed by its CRC, low byte first."""
    return message + crc16(message).to_bytes(2, "little")


def crc_ok(message: bytes) -> bool:
    """Whether the last two bytes of `message` are the CRC of the rest."""
    return len(message) >= 3 and crc16(message[:-2]) == int.from_bytes(message[-2:], "little")
