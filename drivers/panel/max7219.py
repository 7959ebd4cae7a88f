"""MAX7219 eight-digit seven-segment displays in a daisy chain: the font, the registers and the wire frames.

The chip takes 16-bit words (register address, then data) MSB first in SPI mode 0 and latches them on the rising
edge of LOAD/CS. In a chain every chip passes on what it held, so one frame is one word per chip, the word for
the chip farthest from the Pi first, and a chip with nothing to do gets a no-op. Digit 0 is the rightmost digit
on the usual eight-digit modules. No-decode mode is used so letters and dashes can be shown.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

__all__ = ["NOOP", "DIGIT0", "DECODE_MODE", "INTENSITY", "SCAN_LIMIT", "SHUTDOWN", "DISPLAY_TEST",
           "SEGMENTS", "DP", "encode", "decode_char", "render", "canonical", "Max7219Chain"]

log = logging.getLogger("croupier.panel")

NOOP, DIGIT0, DECODE_MODE, INTENSITY, SCAN_LIMIT, SHUTDOWN, DISPLAY_TEST = 0x0, 0x1, 0x9, 0xA, 0xB, 0xC, 0xF

# Segment bits in no-decode mode: DP A B C D E F G from bit 7 down to bit 0.
DP, A, B, C, D, E, F, G = (1 << bit for bit in range(7, -1, -1))

# The font, in decoding preference: where two characters share a shape (0/O, 5/S, 2/Z) the first one is what a
# display is read back as.
_FONT: tuple[tuple[str, int], ...] = (
    ("0", A | B | C | D | E | F), ("1", B | C), ("2", A | B | D | E | G), ("3", A | B | C | D | G),
    ("4", B | C | F | G), ("5", A | C | D | F | G), ("6", A | C | D | E | F | G), ("7", A | B | C),
    ("8", A | B | C | D | E | F | G), ("9", A | B | C | D | F | G),
    (" ", 0), ("-", G), ("_", D), ("=", D | G),
    ("A", A | B | C | E | F | G), ("b", C | D | E | F | G), ("C", A | D | E | F), ("c", D | E | G),
    ("d", B | C | D | E | G), ("E", A | D | E | F | G), ("F", A | E | F | G), ("G", A | C | D | E | F),
    ("H", B | C | E | F | G), ("h", C | E | F | G), ("I", E | F), ("J", B | C | D | E), ("L", D | E | F),
    ("n", C | E | G), ("o", C | D | E | G), ("P", A | B | E | F | G), ("q", A | B | C | F | G), ("r", E | G),
    ("t", D | E | F | G), ("U", B | C | D | E | F), ("u", C | D | E), ("y", B | C | D | F | G),
)
SEGMENTS: dict[str, int] = dict(_FONT)
# Other spellings of the same shapes (a seven-segment display has one case for most letters).
for _alias, _char in {"a": "A", "B": "b", "D": "d", "e": "E", "f": "F", "g": "9", "i": "I", "j": "J", "l": "L",
                      "N": "n", "O": "0", "p": "P", "Q": "q", "R": "r", "s": "5", "S": "5", "T": "t", "Y": "y",
                      "z": "2", "Z": "2"}.items():
    SEGMENTS[_alias] = SEGMENTS[_char]
_DECODE: dict[int, str] = {}
for _char, _bits in _FONT:
    _DECODE.setdefault(_bits, _char)

# Code B (decode mode) for completeness of the simulated chip: 0-9, -, E, H, L, P, blank.
CODE_B = "0123456789-EHLP "


def encode(text: str, digits: int = 8) -> tuple[int, ...]:
    """Segment bytes for `text`, right-aligned in `digits` digits, left to right; '.' lights the previous
    digit's decimal point. Raises ValueError for a character seven segments cannot show or text too long."""
    cells: list[int] = []
    for char in text:
        if char == ".":
            if cells and not cells[-1] & DP:
                cells[-1] |= DP
            else:
                cells.append(DP)
            continue
        bits = SEGMENTS.get(char)
        if bits is None:
            raise ValueError(f"{char!r} cannot be shown on a seven-segment display")
        cells.append(bits)
    if len(cells) > digits:
        raise ValueError(f"{text!r} does not fit in {digits} digits")
    return (0,) * (digits - len(cells)) + tuple(cells)


def decode_char(bits: int) -> str:
    """The character a digit shows ('?' for a shape outside the font), with '.' for its decimal point."""
    return _DECODE.get(bits & ~DP, "?") + ("." if bits & DP else "")


def render(cells: Sequence[int]) -> str:
    """What a row of digits reads as, left to right."""
    return "".join(decode_char(bits) for bits in cells)


def canonical(text: str) -> str:
    """How `text` reads back from a display (e.g. "SOLD" -> "50Ld")."""
    return render(encode(text, len(text))).strip()


class Max7219Chain:
    """The Pi's side of a chain: remembers what each chip holds and sends only what changed.

    `transfer` sends one frame (a list of bytes) with LOAD/CS held low throughout, as gpiozero's SPI interfaces
    do. Chip 0 is the chip nearest the Pi. A failed transfer is logged and retried by the next refresh.
    """

    def __init__(self, transfer: Callable[[list[int]], Any], digits: Sequence[int], intensities: Sequence[int]) -> None:
        if len(digits) != len(intensities) or not digits:
            raise ValueError("a chain needs at least one chip, with digits and intensity for each")
        self._transfer = transfer
        self.chips = len(digits)
        self.digits = list(digits)
        self.intensities = list(intensities)
        self.cells: list[tuple[int, ...]] = [(0,) * n for n in self.digits]  # wanted, left to right
        self._sent: list[list[int | None]] = [[None] * 8 for _ in self.digits]  # per digit register DIG0..7
        self.on = False
        self.frames = 0

    def frame(self, words: dict[int, tuple[int, int]]) -> list[int]:
        """Bytes of one frame: chip -> (register, data); every other chip gets a no-op."""
        out: list[int] = []
        for chip in range(self.chips - 1, -1, -1):
            register, data = words.get(chip, (NOOP, 0))
            out += (register, data)
        return out

    def _send(self, words: dict[int, tuple[int, int]]) -> bool:
        try:
            self._transfer(self.frame(words))
        except OSError as exc:
            log.error("panel: display write failed (%s); the next refresh rewrites it", exc)
            for chip in words:
                self._sent[chip] = [None] * 8
            return False
        self.frames += 1
        return True

    def configure(self) -> None:
        """Write every control register and every digit (power-up, and the periodic refresh that heals a chip
        upset by static or a brown-out)."""
        every = range(self.chips)
        self._send({chip: (DISPLAY_TEST, 0) for chip in every})
        self._send({chip: (DECODE_MODE, 0) for chip in every})
        self._send({chip: (SCAN_LIMIT, self.digits[chip] - 1) for chip in every})
        self._send({chip: (INTENSITY, self.intensities[chip]) for chip in every})
        for chip in every:
            self._sent[chip] = [None] * 8
        self._flush(every)
        self._send({chip: (SHUTDOWN, 1) for chip in every})
        self.on = True

    def set_cells(self, chip: int, cells: tuple[int, ...]) -> None:
        if len(cells) != self.digits[chip]:
            raise ValueError(f"chip {chip} has {self.digits[chip]} digits, not {len(cells)}")
        self.cells[chip] = cells
        self._flush([chip])

    def set_intensity(self, chip: int, level: int) -> None:
        if not 0 <= level <= 15:
            raise ValueError(f"intensity {level} is outside 0..15")
        self.intensities[chip] = level
        self._send({chip: (INTENSITY, level)})

    def shutdown(self) -> None:
        self._send({chip: (SHUTDOWN, 0) for chip in range(self.chips)})
        self.on = False

    def _flush(self, chips: Sequence[int] | range) -> None:
        # One frame per digit register carries that register for every chip that needs it.
        for register in range(8):
            words = {}
            for chip in chips:
                n = self.digits[chip]
                if register < n:
                    data = self.cells[chip][n - 1 - register]  # DIG0 is the rightmost digit
                    if self._sent[chip][register] != data:
                        words[chip] = (DIGIT0 + register, data)
            if words and self._send(words):
                for chip, (_, data) in words.items():
                    self._sent[chip][register] = data
