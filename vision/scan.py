"""Index corners the card detector missed, looked for everywhere by the index locator at the photo's card size.

In a fanned hand each covered card shows its index strip and little else, and the detector, which finds cards, misses
many of them. The locator (models/locator.onnx) was trained to say whether an index lies in a square a card's width
across, where and which way it points, wherever the detector errs by up to a fifth of a half-width and some fifteen
degrees. So a grid of such squares over the whole photo, a third of a half-width apart, each looked at in twelve
directions, leaves no index unlooked at; what the locator places is read by the index readers like any index the
detector found, and a reading is added only where it names a card nothing else named, surely enough (`SCAN_GATE`).
A scan is slow: a 1280x720 photo of cards some 50 px in half-width is about 100,000 squares, half of them plain felt or
paper and skipped (`SCAN_INK`), 6 s on one core here (the locator's own time most of it; a Pi 4 some four to six times
that): it is for photos, never the table camera's frames.
Chosen at stop 52 by a rule written before its figures (vision/models/README.md, "A locator scan").
"""

from __future__ import annotations

import math
from typing import Sequence

import cv2
import numpy as np

from vision.cardrect import CardRect, index_among, located, rect_at_index
from vision.crops import locator_crops
from vision.readings import Detection
from vision.recognise import Recogniser

__all__ = ["scan_indices", "read_missed", "SCAN_STRIDE", "SCAN_DIRECTIONS", "SCAN_SCALES", "SCAN_HAS", "SCAN_GATE",
           "SCAN_INK", "INK_REACH"]

# The grid's spacing in the card's half-widths: the locator finds an index up to about 0.4 of one off its square's
# centre (it learnt errors of 0.2 as a standard deviation), so no index lies farther from a square than it reaches.
SCAN_STRIDE = 0.35
# Directions looked in, evenly round: 30 degrees apart, 15 at most off an index's own (the locator learnt 15 as a
# standard deviation and turns the rest).
SCAN_DIRECTIONS = 12
# Card sizes looked at, as shares of the photo's cards' median half-width: a photo across a table shows the far
# cards smaller than the near ones.
SCAN_SCALES = (0.8, 1.0, 1.25)
# The locator's certainty that an index is in its square, below which a square shows none.
SCAN_HAS = 0.5
# A scanned index's reading (raw, before calibration) below this adds no card: on tuning fans read as photos (seeds
# 794, 795), the cards added at 0.7 and over were 78-85% right, at 0.85 and over 86-87%.
SCAN_GATE = 0.85
# A grid point whose neighbourhood (a square INK_REACH half-widths across: every pixel of an index the locator would
# place from there) varies less than SCAN_INK grey levels (standard deviation) is plain felt or paper and holds no
# index: it is not looked at. On tuning fans 52% of the points varied less than 10 and none of them held an index
# the locator placed (0 of 1,282); at 8 about half the scan's time is saved.
INK_REACH = 1.7
SCAN_INK = 8.0
# Squares per locator call: batches bound the memory a large photo's scan takes.
_BATCH = 4096
# Two indices closer than this share of their half-width are one (`index_among`); a scanned index this close (in
# half-widths) to a reported card's index corner is that card read again.
_ONE_INDEX = 0.3
_READ_AGAIN = 0.5


def scan_indices(table: Recogniser, frame: np.ndarray, half_w: float) -> list[tuple[float, CardRect]]:
    """Every index corner the locator of `table` sees in `frame` (BGR uint8) when it looks everywhere, for cards of
    about `half_w` pixels' half-width: (its certainty, the rect of the card whose top-left index it is), surest first,
    one per index."""
    if table.locator is None:
        raise ValueError("a scan needs the index locator (models/locator.onnx)")
    h, w = frame.shape[:2]
    half = cv2.pyrDown(frame)
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
    turns = [(math.cos(a), math.sin(a)) for a in (2 * math.pi * k / SCAN_DIRECTIONS for k in range(SCAN_DIRECTIONS))]
    squares: list[CardRect] = []
    for hw in (half_w * s for s in SCAN_SCALES):
        spread = _spread(gray, max(3, int(INK_REACH * hw) | 1))
        squares += [rect_at_index(float(x), float(y), ux, uy, hw)
                    for y in np.arange(SCAN_STRIDE * hw / 2, h, SCAN_STRIDE * hw)
                    for x in np.arange(SCAN_STRIDE * hw / 2, w, SCAN_STRIDE * hw)
                    if spread[int(y), int(x)] >= SCAN_INK
                    for ux, uy in turns]
    seen: list[tuple[float, CardRect]] = []
    for k in range(0, len(squares), _BATCH):
        batch = squares[k:k + _BATCH]
        out = table.locator(cv2.dnn.blobFromImages(list(locator_crops(frame, batch, half)), 1 / 255))
        seen += [(float(o[0]), located(r, *o[1:])) for r, o in zip(batch, out) if o[0] >= SCAN_HAS]
    seen.sort(key=lambda f: -f[0])
    kept: list[tuple[float, CardRect]] = []
    for score, r in seen:
        if not index_among(r, kept, _ONE_INDEX):
            kept.append((score, r))
    return kept


def _spread(gray: np.ndarray, k: int) -> np.ndarray:
    """The standard deviation of `gray` (float32) in the k x k square about each pixel."""
    mean = cv2.boxFilter(gray, -1, (k, k))
    return np.sqrt(np.maximum(cv2.boxFilter(gray * gray, -1, (k, k)) - mean * mean, 0))


def read_missed(table: Recogniser, frame: np.ndarray, cards: Sequence[Detection], half_w: float,
                known: Sequence[tuple[float, CardRect]] = ()) -> list[Detection]:
    """The cards `table` reads at the index corners a scan (`scan_indices`) finds in `frame` and `cards` (the frame's
    reading so far) does not hold: not among `known` (the indices the detector found), read at `SCAN_GATE` or surer,
    naming a card no reading names, and not beside an index corner of a card read. Calibrated as `table`'s readings
    are (`Recogniser.judged`)."""
    corners = [(0.0, c) for d in cards for c in (d.rect, d.rect.flipped())]
    new = [(s, r) for s, r in scan_indices(table, frame, half_w) if not index_among(r, known, _ONE_INDEX)]
    named = {d.card for d in cards if d.card is not None}
    added: list[Detection] = []
    for d in sorted(table.read_indices(frame, new), key=lambda d: -d.confidence):
        if d.card is None or d.confidence < SCAN_GATE or d.card in named:
            continue
        if index_among(d.rect, corners, _READ_AGAIN):
            continue
        added.append(d)
        named.add(d.card)
    return [d for d in table.judged(added) if d.card is not None]
