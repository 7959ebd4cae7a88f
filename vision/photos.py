"""Reading a photo: close photos by the photo path, a photo of many small cards as table frames in four tiles.

The photo path (`Recogniser(det_size=PHOTO_SIZES, indices=False)`) was made for close photos of a few cards: it reads
each card the detector outlines and never an index on its own, as ink on a busy close photo is no index. A photo taken
from across a table (a bridge deal, hands fanned so that only their index strips show) is what a table camera sees,
read by the table path index corner by index corner; but its cards may be smaller at the table path's detector size
than any the detector learnt, and there it finds few of them. Such a photo (`small_cards`) is read in four overlapping
tiles, each read whole by the table path, where its cards are 1.7 times the size. Chosen at stop 51 by a rule written
before its figures (vision/models/README.md, "Photos of many small cards: read in tiles"). A photo of several cards
no larger than a table camera shows them, read by the photo path, is then scanned for the index corners the detector
missed (`vision/scan.py`; stop 52).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.crops import decode, letterbox
from vision.readings import Detection, distinct, flag_repeats
from vision.recognise import PHOTO_SIZES, TABLE_SIZES, Recogniser
from vision.scan import read_missed

__all__ = ["PhotoReader", "small_cards", "read_tiled", "SMALL_CARDS", "SMALL_SCORE",
           "SMALL_HALF_WIDTH", "TABLE_HALF_WIDTH", "SCAN_HALF_WIDTH", "TILE"]

# A photo of small cards: at least SMALL_CARDS cards found at SMALL_SCORE or surer at the table size, their median
# half-width at its input under SMALL_HALF_WIDTH pixels. Close photos of one card give at most a stray weak find or
# two of its pips, small as they are. On tuning fans (renders with two real decks' faces the readers trained on),
# tiles read more cards and about as many false ones below 14 px; from 14 px up they added as many false cards as right
# ones.
SMALL_CARDS = 3
SMALL_SCORE = 0.5
SMALL_HALF_WIDTH = 14.0
# A photo of several cards (as many sure finds) not read in tiles, at most the size a table camera shows cards at (their
# median half-width at the table size's input under TABLE_HALF_WIDTH: about the largest the detector learnt dealt
# layouts at), is scanned for the index corners the detector missed where that half-width is at least SCAN_HALF_WIDTH
# of the photo's own pixels: on smaller cards an index is a few pixels of blur (a small webcam crop's pips, enlarged to
# the detector's input, are found as such cards). Closer photos are not scanned: on the real training photos a scan
# read a card's other corner, its pips or its picture as another card (18 false cards for 1 right).
TABLE_HALF_WIDTH = 20.0
SCAN_HALF_WIDTH = 12.0
# Each tile's width and height as a share of the photo's: the four overlap by a fifth of each side, so a card under
# a fifth of the photo's width and height lies whole in one of them.
TILE = 0.6
# A reading whose box comes this close (pixels) to an inner edge of its tile is of a card the edge cuts.
_CUT = 2.0


def _sure_widths(table: Recogniser, frame: np.ndarray) -> tuple[list[float], float]:
    """The half-widths (at the input) of the cards `table`'s detector finds in `frame` at its first size at
    `SMALL_SCORE` or surer, and that input's scale."""
    small, s = letterbox(frame, table.det_sizes[0])
    out = table.detector(cv2.dnn.blobFromImage(small, 1 / 255))[0]
    return [rect.half_w * s for score, _, rect in decode(out, s, table.threshold) if score >= SMALL_SCORE], s


def _sure_middle(table: Recogniser, frame: np.ndarray) -> tuple[float | None, float]:
    """The median of `_sure_widths` (None where fewer than `SMALL_CARDS` are found) and the input's scale."""
    widths, s = _sure_widths(table, frame)
    return (float(np.median(widths)) if len(widths) >= SMALL_CARDS else None), s


def small_cards(table: Recogniser, frame: np.ndarray) -> bool:
    """Whether `frame`'s cards, as `table`'s detector finds them at its first size, are many and small: at least
    `SMALL_CARDS` found at `SMALL_SCORE` or surer, their median half-width at its input under `SMALL_HALF_WIDTH`."""
    middle, _ = _sure_middle(table, frame)
    return middle is not None and middle < SMALL_HALF_WIDTH


def read_tiled(table: Recogniser, frame: np.ndarray) -> list[Detection]:
    """`frame` read by `table` in four overlapping tiles at its corners (`TILE` of each side): a reading its tile cuts
    dropped (another tile holds that card whole), the rest moved back to `frame`'s pixels, one card named twice near
    itself kept once, and a card named more often than `table.decks` hold it flagged unsure."""
    h, w = frame.shape[:2]
    th, tw = round(h * TILE), round(w * TILE)
    cards: list[Detection] = []
    for y0 in (0, h - th):
        for x0 in (0, w - tw):
            for d in table.identify(frame[y0:y0 + th, x0:x0 + tw]):
                x_0, y_0, x_1, y_1 = d.box
                if (x0 > 0 and x_0 < _CUT) or (y0 > 0 and y_0 < _CUT) or (x0 == 0 and x_1 > tw - _CUT) \
                        or (y0 == 0 and y_1 > th - _CUT):
                    continue
                cards.append(_moved(d, x0, y0))
    cards = distinct(cards)
    return flag_repeats(cards, table.decks)


def _moved(d: Detection, dx: float, dy: float) -> Detection:
    x0, y0, x1, y1 = d.box
    return dataclasses.replace(d, box=(x0 + dx, y0 + dy, x1 + dx, y1 + dy),
                               rect=dataclasses.replace(d.rect, cx=d.rect.cx + dx, cy=d.rect.cy + dy))


class PhotoReader:
    """`identify(photo)`: by the photo path; for a photo of many small cards (`small_cards`), by the table path in
    tiles (`read_tiled`); a photo of several cards no larger than a table camera shows them, read by the photo path,
    is then scanned for the index corners the detector missed (`scan.read_missed`). Both paths load the same models
    (`models`; `options` are `Recogniser`'s: an enrolled deck, `jokers`, ...)."""

    def __init__(self, models: Path | str | None = None, **options: Any) -> None:
        self.photo = Recogniser(models, det_size=PHOTO_SIZES, indices=False, **options)
        self.table = Recogniser(models, det_size=TABLE_SIZES, **options)

    def identify(self, photo: np.ndarray) -> list[Detection]:
        """Every card in `photo` (BGR uint8) with its identity and confidences."""
        middle, s = _sure_middle(self.table, photo)
        if middle is not None and middle < SMALL_HALF_WIDTH:
            return read_tiled(self.table, photo)
        if middle is not None and middle < TABLE_HALF_WIDTH and middle / s >= SCAN_HALF_WIDTH:
            return self._scanned(photo, middle / s)
        return self.photo.identify(photo)

    def _scanned(self, photo: np.ndarray, half_w: float) -> list[Detection]:
        """`photo` read by the photo path, and then at the index corners the table's detector missed, looked for
        everywhere at cards of about `half_w` pixels' half-width (`scan.read_missed`); a card named more often than
        the decks hold it flagged unsure."""
        cards = self.photo.identify(photo)
        _, known = self.table.detect_all(photo)
        cards = distinct(cards + read_missed(self.table, photo, cards, half_w, known or ()))
        return flag_repeats(cards, self.table.decks)
