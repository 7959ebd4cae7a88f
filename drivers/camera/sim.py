"""The simulated camera for `--sim`: renders the table as it stands (cards in zones, a passing hand, noise).

The runtime (or a test) says what lies on the table with `show()`, `place()` or `clear()`; `read()` renders
the current state the way the real camera would see it, including the ArUco markers, so calibration and
the whole recognition pipeline run unchanged. Randomness (sensor noise, the hand's shape) comes from the
`numpy.random.Generator` the caller passes (derived from controller.rng).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Iterable, Sequence

import cv2
import numpy as np

from controller.cards import Card
from vision.geometry import Calibration, Zone, default_zones
from vision.render import CARD_MM, CardStyle, DEFAULT_STYLE, TableCard, render_table, view_homography

__all__ = ["SimulatedCamera"]


class SimulatedCamera:
    """A camera over a simulated table. Thread-safe: one thread may `read()` while another changes the table."""

    def __init__(self, *, table_mm: tuple[float, float] = (1200.0, 675.0), size: tuple[int, int] = (1280, 720),
                 zones: Sequence[Zone] | None = None, homography: np.ndarray | None = None, noise: float = 2.0,
                 rng: np.random.Generator | None = None, style: CardStyle = DEFAULT_STYLE) -> None:
        self.table_mm = (float(table_mm[0]), float(table_mm[1]))
        self.size = size
        self.zones = tuple(zones) if zones is not None else default_zones(self.table_mm)
        self.homography = homography
        self.noise = noise
        self.style = style
        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._cards: list[TableCard] = []
        self._hand: tuple[float, float, float] | None = None
        self._lock = threading.Lock()
        self.frames = 0

    # -- what lies on the table

    def show(self, cards: Iterable[TableCard]) -> None:
        """Replace everything on the table with `cards`."""
        with self._lock:
            self._cards = list(cards)

    def clear(self) -> None:
        self.show(())

    def place(self, card: Card, zone: str, *, face_up: bool = True, angle: float = 0.0) -> TableCard:
        """Put `card` in the next free place of `zone`: cards in a zone go left to right a third of a card
        apart; once the zone is full they pile up at its right end."""
        z = self._zone(zone)
        with self._lock:
            inside = [c for c in self._cards if z.contains(c.x, c.y)]
            x0, y0, x1, y1 = z.rect
            x = x0 + CARD_MM[0] / 2 + 4 + len(inside) * CARD_MM[0] * 1.33
            tc = TableCard(card, min(x, x1 - CARD_MM[0] / 2), (y0 + y1) / 2, angle, face_up)
            self._cards.append(tc)
        return tc

    def remove(self, card: Card) -> None:
        """Take `card` off the table (the last one placed, if there are several)."""
        with self._lock:
            for i in range(len(self._cards) - 1, -1, -1):
                if self._cards[i].card == card:
                    del self._cards[i]
                    return
        raise KeyError(f"{card} is not on the simulated table")

    def turn_up(self, card: Card) -> None:
        with self._lock:
            self._cards = [replace(c, face_up=True) if c.card == card else c for c in self._cards]

    def hand(self, at: tuple[float, float] | None, size: float = 110.0) -> None:
        """A dealer's hand over table point `at` (mm), or none."""
        with self._lock:
            self._hand = None if at is None else (at[0], at[1], size)

    @property
    def cards(self) -> tuple[TableCard, ...]:
        with self._lock:
            return tuple(self._cards)

    def _zone(self, name: str) -> Zone:
        for z in self.zones:
            if z.name == name:
                return z
        raise KeyError(f"no zone {name!r} on the simulated table (zones: {', '.join(z.name for z in self.zones)})")

    def calibration(self) -> Calibration:
        """This camera's view of the table, known exactly: what `croupier vision calibrate` finds for a real one."""
        W, H = self.table_mm
        corners = np.array([[[0, 0], [W, 0], [W, H], [0, H]]], np.float64)
        image = cv2.perspectiveTransform(corners, view_homography(self.size, self.table_mm, self.homography))[0]
        return Calibration.from_corners(image.tolist(), self.table_mm, self.size)

    # -- the camera side, like OpenCVCamera

    def read(self) -> np.ndarray:
        """The table as the camera sees it now: BGR uint8, `size`."""
        with self._lock:
            cards, hand = list(self._cards), self._hand
        frame = render_table(cards, self._rng, size=self.size, table_mm=self.table_mm, homography=self.homography,
                             zones=[(z.name, z.rect) for z in self.zones], hand=hand, noise=self.noise,
                             style=self.style)
        self.frames += 1
        return frame

    def close(self) -> None:
        pass

    def __enter__(self) -> SimulatedCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
