"""The SAS ROM signature: the installed software's image and its seeded CRC-16 (long poll 21)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

__all__ = ["rom_image", "RomSignature"]


def rom_image(roots: Iterable[Path] | None = None, extra: bytes = b"") -> bytes:
    """The installed software and models, as the ROM signature covers them: every file of the controller,
    drivers and vision packages (titles and models included), by relative path in order, name then content."""
    if roots is None:
        base = Path(__file__).resolve().parent.parent
        roots = [base / "controller", base / "drivers", base / "vision"]
    parts: list[bytes] = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and p.suffix not in (".pyc", ".pyo")):
            parts.append(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes())
    return b"".join(parts) + extra


class RomSignature:
    """Seeded CRC-16 over the image, in microseconds per seed: the CRC is linear, so the seed's part is the
    zero-byte step raised to the image's length (GF(2) matrix power), XORed with the unseeded CRC."""

    def __init__(self, image: bytes) -> None:
        from drivers.sas.crc import rom_crc16

        self.length = len(image)
        self.base = rom_crc16(image, 0)
        step = [self._zero_byte(1 << i) for i in range(16)]  # columns of one zero byte's linear map
        self.power = self._pow(step, self.length)

    @staticmethod
    def _zero_byte(reg: int) -> int:
        from drivers.sas.crc import crc16

        return crc16(b"\0", reg)

    @staticmethod
    def _apply(cols: list[int], v: int) -> int:
        out = 0
        for i in range(16):
            if v >> i & 1:
                out ^= cols[i]
        return out

    def _pow(self, cols: list[int], n: int) -> list[int]:
        result = [1 << i for i in range(16)]
        while n:
            if n & 1:
                result = [self._apply(cols, c) for c in result]
            cols = [self._apply(cols, c) for c in cols]
            n >>= 1
        return result

    def __call__(self, seed: int) -> int:
        return self.base ^ self._apply(self.power, seed & 0xFFFF)
