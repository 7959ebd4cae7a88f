"""Find and name the cards in a frame: a small detector on the downscaled frame, then a classifier on corner crops.

Seven ONNX models run by ONNX Runtime (no deep-learning framework at run time):

1. the detector (CenterNet-style, stride 4) marks the centre of each card's visible part and regresses
   its visible box and the whole card's rectangle (centre, long-axis direction, half-length, half-width),
   and marks each index corner in sight;
2. the locator (optional: `models/locator.onnx`) puts each index corner the detector found right: where it
   lies and which way it points, from a square around it (table frames only);
3. the classifier reads the two index corners of each card (top-left and bottom-right of the upright
   card: the same picture once each is turned upright, so the card's 180-degree ambiguity never
   matters) and gives rank (2..A, joker), "back" or "none" (covered), and suit probabilities. The two
   corners are pooled, weighted by how sure each is that it sees an index, so a covered corner does not
   vote;
4. the body reader (optional: `models/body.onnx`) reads a card its indices name unsurely again, whole: its
   pips or face, several times the index's size (table frames only);
5. the second reader (optional: `models/second_reader.onnx`), a classifier twice as wide trained on located
   corners, reads again each corner the classifier reads unsurely as an index, and its reading stands;
6. the wide reader (optional: `models/wide_reader.onnx`) reads a number card's or an ace's black suit that
   the index readers name unsurely again, from the index and the strip beside it, where a pip shows the suit
   again (table frames only);
7. the sign reader (optional: `models/sign_reader.onnx`) reads a court card's black suit that the other readers
   name unsurely again, from the suit sign its picture shows beside the figure's head (table frames only).

`Recogniser.identify(frame)` returns `Detection`s with the card (or None when unreadable), a confidence
for the identity and one for the detection, the visible box and the card's quad, all in frame pixels.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import cv2
import numpy as np
import onnxruntime

from controller.cards import Card, JOKER, Suit
from vision.render import CARD_H as _CARD_H, CARD_W as _CARD_W, INDEX_REGION as _REGION

__all__ = ["Detection", "Recogniser", "CardRect", "corner_crops", "index_crops", "body_crops", "locator_crops", "located",
           "LOCATOR_REGION", "LOCATOR_SIZE", "snap_corner",
           "MODELS_DIR", "CROP_W", "CROP_H", "STRIDE", "TABLE_SIZES", "PHOTO_SIZES", "RANK_CLASSES", "BACK", "NONE",
           "DET_CHANNELS", "I_HEAT", "letterbox", "decode", "decode_indices", "corner_point", "rect_at_index",
           "scaled_about_index", "refine_rect", "load_net", "cascade_gaps", "BODY_W", "BODY_H", "BODY_RANKS",
           "BODY_NONE"]

MODELS_DIR = Path(__file__).resolve().parent / "models"
# Detector input sizes (longer side, pixels). A table camera sees cards of one size: one pass. Photos may
# hold a card filling the frame or several small ones: two passes, merged.
TABLE_SIZES = (384,)
PHOTO_SIZES = (320, 224)
CROP_W, CROP_H = 32, 48
STRIDE = 4
# Detector output channels: 0 card heatmap, 1-4 visible box, 5-10 card rectangle; 11 index-corner
# heatmap, 12-13 its sub-cell position, 14-15 the index's up direction, 16 log of the card's half-width.
I_HEAT = 11
DET_CHANNELS = 17
# Classifier rank head: 0..12 are ranks 2..14, then the joker, a card back, and "no index here".
RANK_CLASSES = 16
JOKER_CLASS, BACK, NONE = 13, 14, 15
_PAD = 114  # grey used to pad the detector input (the same in training)
# A card read at one index this surely (rank and suit) is not read at its other index, nor at its rectangle.
_SURE = 0.8
# A corner the classifier reads less surely than this (rank or suit) as an index is read by the second reader, whose
# reading stands. Validation, 6,007 cards: 0.8, 0.9 and 0.95 found 5974, 5977 and 5977; at 0.95 the bench's frame,
# all of it read surely before, had one to three corners (0.7 ms each) read again.
_SECOND_GATE = 0.9
# The two indices of one card imply its centre this close (over the sum of the half-widths implied): their
# own error is a few pixels; a neighbour's index in a cascade implies a card a third of a width or more off.
_PAIRED = 0.2
CARD_ASPECT = _CARD_H / _CARD_W  # a card's length over its width, as rendered (a poker card's 88/63)
# A dealer's cascade steps each card this far from the one before (fractions of its half-width across, of its
# half-length along): `render_dealt` draws 0.64-1.1 and 0.24-0.6; the margin takes a dealer's hand, not more
# (twice the range read twice the crops on the validation frames and found no more cards; 0.4 across, which
# takes half a wide step for a step, found one more card in 6,000 and read a crop more a frame).
_STEP_ACROSS = (0.5, 1.25)
_STEP_ALONG = (0.15, 0.75)
_GAP_CARDS = 2  # cards looked for between two named ones (three found none more)
# Two cards' centres this far apart (in half-lengths) have indices more than _GAP_CARDS + 1 cascade steps apart:
# the longest steps, plus a half-length for how much two cards' index offsets may differ (a quarter in size and 25
# degrees in turn: 0.55). Tested first, as it is cheap: most pairs of cards on a table lie in no one cascade.
_GAP_REACH = (_GAP_CARDS + 1) * math.hypot(_STEP_ALONG[1], _STEP_ACROSS[1] / CARD_ASPECT) + 1.0
_GAP_SHIFT = 0.2  # of a half-width: how far an unsure gap reading is read again shifted (0.15 found 3 fewer)
# The index locator (models/locator.onnx, optional) sees a square around each index the detector found, two
# half-widths of its card across (as fractions of the card whose top-left index it is: centred on that index),
# at LOCATOR_SIZE pixels, and says whether an index is there, where and which way it points.
LOCATOR_REGION = (-0.35, -0.197, 0.65, 0.517)
LOCATOR_SIZE = 32
# An index the locator sees less surely than this is dropped (0.5 dropped a few real ones on the validation frames).
_LOCATOR_HAS = 0.25
# A card's index corner is looked at unless an index found lies this near (in half-widths); two located indices this
# near are one.
_LOCATOR_NEAR = 0.3
# Two indices side by side (a card's under the one on top of it in a cascade, a third of a width or so apart) may
# make one peak of the detector's index heat, between them. The locator takes one of them, moving the find that
# way: where it moves a find more than _TWIN_MOVE (half-widths), the square _TWIN_BACK the other way is looked at
# for the other. Validation, 6,007 cards: 5985 -> 5990 (false reports 52 -> 51); four more sets, 6,013 cards,
# 5979 -> 5986 (false 55 -> 54). Moves over 0.1 and 0.15 found 5991 and 5990 of the 6,007 (at stop 31), for more
# squares on the bench's frame, where a lone card's find moves 0.21: its square, read in a second locator call,
# costs 0.5 ms there (what `cascade_gaps` gave back). Cost: about a locator square more a dealt frame.
_TWIN_MOVE = 0.2
_TWIN_BACK = 0.45
# The wide reader (models/wide_reader.onnx, optional) sees an index with the strip beside it, to three quarters of the
# card's width (WIDE_REGION), at the index crop's scale (its left CROP_W columns are the index crop): beside a number
# card's or an ace's index a pip shows the suit again, larger. A black suit (a spade and a club blur alike) the index
# readers name less surely than _WIDE_GATE is read again by it, and the two readings are multiplied (two looks at
# one card; the strip is new evidence). Validation, 6,007 cards: 5981 -> 5985 (false 54 either way); read for
# court cards too, 5981 (a court card's strip is its picture, and the reader read a JC's as a spade's).
WIDE_REGION = (0.0, 0.0, 0.75, 0.32)
WIDE_W, WIDE_H = 80, 48
_WIDE_GATE = 0.95
_WIDE_RANKS = frozenset(range(9)) | {12}  # the rank classes of 2..10 and of the ace

# A black suit the index readers name less surely than _SCALE_GATE is read again by the second reader at the index crop
# cut _SCALE_STEP smaller and larger about the index, and the three suit readings are averaged: a card's size is known
# to a few percent only (its rectangle's), and a blurred spade read at the wrong scale passes for a club. Validation,
# 12,020 cards: 11,978 -> 11,981 right, false reports 102 -> 96; steps of 0.12, 11,979 (false 97); gate 0.99, 11,981
# (94), but it reads three black suits of the bench's frame again (six crops; none at 0.95).
_SCALE_GATE = 0.95
_SCALE_STEP = 0.08

# The sign reader (models/sign_reader.onnx, optional) sees the square about the suit sign a court card's picture
# shows near its top, beside the figure's head (SIGN_REGION, fractions of the upright card, at SIGN_SIZE pixels square):
# larger than the index's suit. Classes: club, spade, SIGN_NONE (no sign in sight: covered; it then says nothing). A
# court card's black suit the other readers name less surely than _SIGN_GATE is multiplied by its reading (the index
# suit of a court card is a blur a few pixels across, its strip the picture). Validation, 12,020 cards: 11,981 ->
# 11,987 right, false reports 96 -> 89; both ends' signs read, 11,988 for twice the squares (a first model read
# below 0.99 found what it found below 0.95).
SIGN_REGION = (0.50, 0.05, 0.86, 0.31)
SIGN_SIZE = 40
SIGN_NONE = 2
_SIGN_GATE = 0.95
_SIGN_RANKS = frozenset({9, 10, 11})  # the rank classes of J, Q, K

# The body reader (models/body.onnx, optional) sees a whole card, upright, at BODY_W x BODY_H: its pips or
# face say rank and suit at several times the size of the index. Rank head: 0..12 ranks 2..A, then
# BODY_NONE ("no whole card face up here": covered, face down, off the card); suit head: C D H S.
BODY_W, BODY_H = 40, 56
BODY_RANKS = 14
BODY_NONE = 13
# A card its indices name less surely than this is also read by its body (a sure index is left alone: on
# the validation frames 10% of the whole cards read right were named below 0.86, every one read wrong below 0.91).
_BODY_GATE = 0.9
# The body reader's suit counts only when it names the card's rank too, at least this surely: a body crop that
# shows a pip plainly but no rank is off the card (two overlapping cards' rectangles merged into one), and its
# suit is a neighbour's (validation frames: a 2S read 0.87 by its indices, its body crop over the 2C under
# it read "2" at 0.28 and clubs at 0.98).
_BODY_SUIT_RANK = 0.5
# A suit probability is taken as at least this when two corners' readings multiply: one corner's zero must not veto.
_SUIT_FLOOR = 1e-4


@dataclass(frozen=True)
class CardRect:
    """A card as a rectangle in image pixels: centre, unit vector towards its top, half-length, half-width."""

    cx: float
    cy: float
    ux: float
    uy: float
    half_l: float
    half_w: float

    def quad(self) -> np.ndarray:
        """Corners (4, 2): top-left, top-right, bottom-right, bottom-left of the card as if upright."""
        c = np.array([self.cx, self.cy])
        up = np.array([self.ux, self.uy])
        right = np.array([-self.uy, self.ux])
        return np.array([c + up * self.half_l - right * self.half_w, c + up * self.half_l + right * self.half_w,
                         c - up * self.half_l + right * self.half_w, c - up * self.half_l - right * self.half_w])

    def top_left(self) -> tuple[float, float]:
        """`quad()[0]` without building the quad: it is asked for often, per pair of finds."""
        return (self.cx + self.ux * self.half_l + self.uy * self.half_w,
                self.cy + self.uy * self.half_l - self.ux * self.half_w)

    def flipped(self) -> CardRect:
        return CardRect(self.cx, self.cy, -self.ux, -self.uy, self.half_l, self.half_w)


@dataclass(frozen=True)
class Detection:
    """One card seen in a frame. `card` is None when no index could be read (face down or covered);
    `confidence` is the probability of the named identity, `score` the detector's certainty that a card
    is there. `box` is the visible part (x0, y0, x1, y1), `rect` the whole card, in frame pixels."""

    card: Card | None
    confidence: float
    score: float
    box: tuple[float, float, float, float]
    rect: CardRect
    face_down: bool = False
    rank_confidence: float = 0.0
    suit_confidence: float = 0.0
    model: str = ""  # the enrolled deck model that named the card ("enrolled:<id>"), "" for the base readers

    @property
    def centre(self) -> tuple[float, float]:
        return (self.rect.cx, self.rect.cy)

    def to_json(self) -> dict:
        """The shape printed by `croupier vision identify --json`."""
        card = self.card
        return {
            "card": str(card) if card is not None else None,
            "rank": card.rank_char if card is not None else None,
            "suit": card.suit.letter if card is not None and card.suit is not None else None,
            "box": [round(v) for v in self.box],
            "confidence": round(self.confidence, 4),
        }


def corner_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """The two index corners of every card, each turned upright: uint8 (2 * len(rects), CROP_H, CROP_W, 3).

    Crop 2k is the top-left corner of card k as its rect's `up` points, crop 2k+1 the opposite corner.
    """
    return index_crops(image, [r for rect in rects for r in (rect, rect.flipped())])


def index_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """The top-left index corner of every rect (as its `up` points), turned upright: (len(rects), CROP_H, CROP_W, 3)."""
    return _crops(image, rects, _REGION, CROP_W, CROP_H)


def locator_crops(image: np.ndarray, rects: Sequence[CardRect], half: np.ndarray | None = None) -> np.ndarray:
    """The square around every rect's top-left index, turned as the rect points it: (len(rects), LOCATOR_SIZE,
    LOCATOR_SIZE, 3), for the locator. `half` (`cv2.pyrDown(image)`, when the caller has it) serves the squares
    that shrink twofold or more: sampled from it, each costs a fifth as much, and the locator finds the index as
    well (validation frames: 5977 cards of 6,007 found against 5978)."""
    return _crops(image, rects, LOCATOR_REGION, LOCATOR_SIZE, LOCATOR_SIZE, half)


def located(r: CardRect, dx: float, dy: float, c: float, s: float) -> CardRect:
    """The rect whose top-left index lies `dx` right and `dy` down of `r`'s (in half-widths, along `r`'s axes),
    turned from `r`'s up by the angle whose cosine and sine are (c, s) (towards `r`'s right): the locator's
    answer made a rect, of `r`'s size."""
    px, py = corner_point(r)
    right = (-r.uy, r.ux)
    qx = px + (dx * right[0] - dy * r.ux) * r.half_w
    qy = py + (dx * right[1] - dy * r.uy) * r.half_w
    ux, uy = c * r.ux + s * right[0], c * r.uy + s * right[1]
    n = math.hypot(ux, uy)
    if n < 1e-6:  # no direction given: keep the rect's
        ux, uy, n = r.ux, r.uy, 1.0
    return rect_at_index(qx, qy, ux / n, uy / n, r.half_w)


def wide_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """Every rect's top-left index with the strip beside it (WIDE_REGION), turned upright: (len(rects), WIDE_H,
    WIDE_W, 3), for the wide reader."""
    return _crops(image, rects, WIDE_REGION, WIDE_W, WIDE_H)


def sign_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """The square about the suit sign in the top half of every rect's court picture (SIGN_REGION), turned upright:
    (len(rects), SIGN_SIZE, SIGN_SIZE, 3), for the sign reader."""
    return _crops(image, rects, SIGN_REGION, SIGN_SIZE, SIGN_SIZE)


def body_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """Every rect's whole card, turned upright: (len(rects), BODY_H, BODY_W, 3), for the body reader."""
    return _crops(image, rects, (0.0, 0.0, 1.0, 1.0), BODY_W, BODY_H)


def _crops(image: np.ndarray, rects: Sequence[CardRect], region: Sequence[float], width: int, height: int,
           half: np.ndarray | None = None) -> np.ndarray:
    out = np.empty((len(rects), height, width, 3), np.uint8)
    for k, r in enumerate(rects):
        M = _crop_matrix(r, region, width, height)
        shrink = max(math.hypot(M[0, 0], M[1, 0]), math.hypot(M[0, 1], M[1, 1]))
        if half is not None and shrink >= 2:  # `half`'s pixel (x, y) is `image`'s (2x, 2y)
            out[k] = _crops(half, [dataclasses.replace(r, cx=r.cx / 2, cy=r.cy / 2, half_l=r.half_l / 2,
                                                       half_w=r.half_w / 2)], region, width, height)[0]
        elif shrink > 1.6:  # bilinear sampling would alias: sample finer, then area-average
            out[k] = _shrunk_crop(image, M, shrink, (width, height))
        else:
            out[k] = _warp(image, M, (width, height))
    return out


def _sample(image: np.ndarray, r: CardRect, region: Sequence[float], width: int, height: int) -> np.ndarray:
    """`region` of the card `r` (see `_crop_matrix`) sampled bilinearly into a `width` x `height` patch."""
    return _warp(image, _crop_matrix(r, region, width, height), (width, height))


def _warp(image: np.ndarray, M: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The (w, h) patch that the affine map `M` (patch to image) samples bilinearly, edges replicated."""
    return cv2.warpAffine(image, M, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def _crop_matrix(r: CardRect, region: Sequence[float], width: int, height: int) -> np.ndarray:
    """The affine map from a `width` x `height` crop to the image, the crop covering `region` (fractions of
    the upright card: x0, y0, x1, y1) of the card whose top-left corner is the rect's, upright."""
    x0r, y0r, x1r, y1r = region
    up = np.array([r.ux, r.uy])
    right = np.array([-r.uy, r.ux])
    down = -up
    origin = np.array([r.cx, r.cy]) - right * r.half_w - down * r.half_l  # top-left of the card
    # Pixel (px, py) of the crop samples card point (u, v) = region start + (p + 0.5) * step.
    du = (x1r - x0r) * 2 * r.half_w / width
    dv = (y1r - y0r) * 2 * r.half_l / height
    start = origin + right * (x0r * 2 * r.half_w + du / 2) + down * (y0r * 2 * r.half_l + dv / 2)
    return np.array([[right[0] * du, down[0] * dv, start[0]], [right[1] * du, down[1] * dv, start[1]]])


# Where snap_corner looks for a card's top and left edges near its top-left corner (fractions of the card),
# away from the index itself so its strokes do not count as edges.
_SNAP_REGION = (-0.2, -0.15, 0.7, 0.6)
_SNAP_W, _SNAP_H = 36, 30
_SNAP_TOP_U = (0.3, 0.62)   # the stretch of the top edge measured
_SNAP_LEFT_V = (0.3, 0.55)  # the stretch of the left edge measured
_SNAP_REACH = 0.13          # how far (fraction of the card's width / length) an edge may move


def snap_corner(gray: np.ndarray, r: CardRect) -> CardRect:
    """The rect moved so its top-left corner sits on the card's top and left edges as the image shows them:
    the strongest dark-to-paper step across each edge, along a stretch of the edge clear of the index,
    within a little of where the rect put it. An edge with no clear step (covered, or paper on paper) stays."""
    patch = _sample(gray, r, _SNAP_REGION, _SNAP_W, _SNAP_H).astype(np.float32)
    x0, y0, x1, y1 = _SNAP_REGION
    us = x0 + (np.arange(_SNAP_W) + 0.5) * (x1 - x0) / _SNAP_W  # card coordinates of the patch's columns
    vs = y0 + (np.arange(_SNAP_H) + 0.5) * (y1 - y0) / _SNAP_H  # and rows
    top = patch[:, (us >= _SNAP_TOP_U[0]) & (us <= _SNAP_TOP_U[1])].mean(axis=1)
    left = patch[(vs >= _SNAP_LEFT_V[0]) & (vs <= _SNAP_LEFT_V[1]), :].mean(axis=0)
    moves = []
    for profile, at in ((top, vs), (left, us)):
        # The step across the edge, centred on each inner sample: paper inside is brighter than outside.
        grad = profile[2:] - profile[:-2]
        where = at[1:-1]
        grad = np.where(np.abs(where) <= _SNAP_REACH, grad, -np.inf)
        k = int(grad.argmax())
        if grad[k] < 24:  # no clear edge: covered, or paper on paper
            moves.append(0.0)
            continue
        pos = float(where[k])
        if 0 < k < len(grad) - 1 and np.isfinite(grad[k - 1]) and np.isfinite(grad[k + 1]):
            a, b, c = grad[k - 1], grad[k], grad[k + 1]
            if a - 2 * b + c < 0:  # sub-sample: the parabola through the peak and its neighbours
                pos += 0.5 * float(a - c) / float(a - 2 * b + c) * float(at[1] - at[0])
        moves.append(pos)
    dv, du = moves[0], moves[1]
    if not dv and not du:
        return r
    right = (-r.uy, r.ux)
    shift_x = right[0] * du * 2 * r.half_w - r.ux * dv * 2 * r.half_l
    shift_y = right[1] * du * 2 * r.half_w - r.uy * dv * 2 * r.half_l
    return CardRect(r.cx + shift_x, r.cy + shift_y, r.ux, r.uy, r.half_l, r.half_w)


def _dominant_axis(gray: np.ndarray, mask: np.ndarray | None = None) -> float | None:
    """The direction (radians, modulo 90 degrees) of the edges that dominate `gray` (where `mask` is set):
    the fourfold mean of the gradient angles, weighted by strength. None when no direction dominates."""
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    w = gx * gx + gy * gy
    if mask is not None:
        w = w * mask
    total = float(w.sum())
    if total <= 0:
        return None
    a4 = 4 * np.arctan2(gy, gx)
    c, s = float((w * np.cos(a4)).sum()) / total, float((w * np.sin(a4)).sum()) / total
    if math.hypot(c, s) < 0.25:
        return None
    return math.atan2(s, c) / 4


def _shrunk_crop(image: np.ndarray, M: np.ndarray, shrink: float, size: tuple[int, int]) -> np.ndarray:
    """A crop of `size` (w, h) that shrinks by `shrink`: sample at an intermediate size from a local window,
    then area-resize."""
    f = int(math.ceil(shrink))
    M2 = M.copy()
    M2[:, :2] /= f
    M2[:, 2] = M[:, 2] - (M[:, 0] + M[:, 1]) * (1 - 1 / f) / 2
    big = _warp(image, M2, (size[0] * f, size[1] * f))
    return cv2.resize(big, size, interpolation=cv2.INTER_AREA)


def letterbox(image: np.ndarray, size: int, half: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Scale `image` so its longer side is `size`, pad right/bottom to multiples of 32: (input, scale). `half`:
    `cv2.pyrDown(image)`, when the caller has it already."""
    h, w = image.shape[:2]
    s = size / max(h, w)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    # Halve with the Gaussian pyramid while the image is twice the size wanted or more, then resize the
    # rest bilinearly: antialiased like INTER_AREA at a fifth of its cost for a non-integer ratio.
    small = image
    while small.shape[1] >= 2 * nw and small.shape[0] >= 2 * nh:
        small = half if small is image and half is not None else cv2.pyrDown(small)
    small = cv2.resize(small, (nw, nh), interpolation=cv2.INTER_LINEAR if small is not image else cv2.INTER_AREA)
    pw, ph = -(-nw // 32) * 32, -(-nh // 32) * 32
    if (pw, ph) != (nw, nh):
        small = cv2.copyMakeBorder(small, 0, ph - nh, 0, pw - nw, cv2.BORDER_CONSTANT, value=(_PAD, _PAD, _PAD))
    return small, s


def decode(out: np.ndarray, scale: float, threshold: float) -> list[tuple[float, tuple[float, float, float, float],
                                                                         CardRect]]:
    """Peaks of the detector's output (DET_CHANNELS, h, w) as (score, visible box, card rect) in frame pixels."""
    heat = out[0]
    peaks = (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat >= threshold)
    ys, xs = np.nonzero(peaks)
    k = STRIDE / scale
    found = []
    for y, x in zip(ys.tolist(), xs.tolist()):
        v = out[:, y, x]
        vx, vy = (x + v[1]) * k, (y + v[2]) * k
        vw, vh = math.exp(min(v[3], 8.0)) * k, math.exp(min(v[4], 8.0)) * k
        cx, cy = vx + v[5] * 4 * k, vy + v[6] * 4 * k
        theta = math.atan2(v[8], v[7]) / 2
        half_l, half_w = math.exp(min(v[9], 8.0)) * k, math.exp(min(v[10], 8.0)) * k
        rect = CardRect(cx, cy, math.cos(theta), math.sin(theta), half_l, half_w)
        found.append((float(heat[y, x]), (vx - vw / 2, vy - vh / 2, vx + vw / 2, vy + vh / 2), rect))
    found.sort(key=lambda f: -f[0])
    return found


def decode_indices(out: np.ndarray, scale: float, threshold: float) -> list[tuple[float, CardRect]]:
    """Peaks of the index-corner heatmap as (score, rect): each index as the top-left corner of a card
    of the regressed size turned the regressed way, in frame pixels, strongest first."""
    heat = out[I_HEAT]
    peaks = (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat >= threshold)
    ys, xs = np.nonzero(peaks)
    if not len(ys):
        return []
    k = STRIDE / scale
    v = out[I_HEAT:, ys, xs].astype(np.float64)  # (6, n)
    px, py = (xs + v[1]) * k, (ys + v[2]) * k
    n = np.maximum(np.hypot(v[3], v[4]), 1e-6)
    ux, uy = v[3] / n, v[4] / n
    half_w = np.exp(np.minimum(v[5], 8.0)) * k
    order = np.argsort(-v[0], kind="stable")
    return [(float(v[0, i]), rect_at_index(float(px[i]), float(py[i]), float(ux[i]), float(uy[i]), float(half_w[i])))
            for i in order.tolist()]


def corner_point(rect: CardRect) -> tuple[float, float]:
    """Where the top-left index of `rect` sits in the image (the middle of the classifier's region)."""
    x = (_REGION[0] + _REGION[2]) / 2
    y = (_REGION[1] + _REGION[3]) / 2
    right = (-rect.uy, rect.ux)
    return (rect.cx + rect.ux * rect.half_l * (1 - 2 * y) - right[0] * rect.half_w * (1 - 2 * x),
            rect.cy + rect.uy * rect.half_l * (1 - 2 * y) - right[1] * rect.half_w * (1 - 2 * x))


def scaled_about_index(rect: CardRect, scale: float) -> CardRect:
    """`rect` scaled by `scale` about its top-left index (`corner_point`), which stays where it is."""
    px, py = corner_point(rect)
    return CardRect(px + scale * (rect.cx - px), py + scale * (rect.cy - py), rect.ux, rect.uy, rect.half_l * scale,
                    rect.half_w * scale)


def rect_at_index(px: float, py: float, ux: float, uy: float, half_w: float) -> CardRect:
    """The card of half-width `half_w`, up direction (ux, uy), whose top-left index centre is at (px, py)."""
    half_l = half_w * CARD_ASPECT
    x = (_REGION[0] + _REGION[2]) / 2
    y = (_REGION[1] + _REGION[3]) / 2
    right = (-uy, ux)
    # corner_point inverted: index = centre + up * half_l * (1 - 2y) - right * half_w * (1 - 2x).
    return CardRect(px - ux * half_l * (1 - 2 * y) + right[0] * half_w * (1 - 2 * x),
                    py - uy * half_l * (1 - 2 * y) + right[1] * half_w * (1 - 2 * x), ux, uy, half_l, half_w)


class Net:
    """One ONNX model, run by ONNX Runtime on the CPU: `net(batch)` gives its first output for a float32 batch
    (N, C, H, W). On one thread (the default) it runs these small convolutional nets 1.3 to 2.3 times as fast as
    OpenCV's DNN module did (detector 4.7 against 6.0 ms at 384 px, classifier 0.14 against 0.32 ms a crop,
    outputs the same to 1e-5)."""

    def __init__(self, path: Path | str, threads: int = 1) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._input = self._session.get_inputs()[0].name

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self._session.run(None, {self._input: batch})[0]


def load_net(path: Path | str, threads: int = 1) -> Net:
    """The ONNX model at `path`, ready to run on `threads` threads."""
    return Net(path, threads)


class Recogniser:
    """The detector and classifier loaded once; `identify(frame)` per frame. Single-threaded by default
    (more threads would fight the rest of the table runtime on a Pi).

    `indices=True` (the default: a table camera's frames) also reads the index corners the detector's index
    head finds, each on its own: the index is what shows of a card lying under another in a cascade. A card
    that only an unsure index reading names is read at both corners as well, and the surer reading stands.
    On synthetic table frames of a validation seed (777, not the acceptance set's), with stop 18's models,
    that named 92.1% of the cards right against 85.8% without (precision 97.3% against 97.9%); pairing a
    cascade's indices right raised it to 94.7%. Its few more crops a frame are won back by sharpening only
    the rectangles whose corners are read (figures in vision/models/README.md).
    Each index is first put right by the locator (`_locate`, when the models folder has one): moved to where it
    lies, turned the way it points, or dropped where the locator sees none.
    Then a card the detector missed inside a cascade is read where its index must be (`cascade_gaps`), and
    last a card named unsurely is read again whole by the body reader (`body`, when the models folder has one).
    Throughout, a corner the classifier reads unsurely as an index is read again by the second reader (`second`,
    when the models folder has one), and its reading stands; a number card's black suit read unsurely is read
    again with the strip beside the index by the wide reader (`wide`, when the models folder has one), and a court
    card's black suit read unsurely by the sign reader at its picture's suit sign (`sign`, likewise).
    Photos are read with `indices=False`: there, with the first fine-tuned detector, it reported ink that is
    no index (precision 70% against 93%)."""

    def __init__(self, models: Path | str | None = None, *, det_size: int | Sequence[int] = TABLE_SIZES,
                 threshold: float = 0.35, index_threshold: float = 0.2,
                 threads: int | None = 1, refine: bool = True, snap: bool = False, indices: bool = True,
                 detector_only: bool = False, body: bool = True, second: bool = True, locate: bool = True,
                 wide: bool = True, sign: bool = True, enrolled: Any = None) -> None:
        folder = Path(models) if models is not None else MODELS_DIR
        det_path, cls_path = folder / "detector.onnx", folder / "classifier.onnx"
        for p in (det_path,) if detector_only else (det_path, cls_path):
            if not p.is_file():
                raise FileNotFoundError(f"card model {p} is missing (train with `croupier vision train`)")
        if threads is not None:
            cv2.setNumThreads(threads)
        nets = threads or 1
        self.detector = load_net(det_path, nets)
        self.classifier = None if detector_only else load_net(cls_path, nets)

        def optional(name: str, wanted: bool) -> Net | None:
            # A models folder from before a model was made has none of it: read without it.
            path = folder / name
            return load_net(path, nets) if wanted and path.is_file() else None

        # The index locator (`locate`): without it the index corners are read where the detector puts them. It
        # belongs with the detector (what an index reader learns from is the corners the detector finds, located).
        self.locator = optional("locator.onnx", locate and indices)
        # The body reader reads a table camera's cards only: it learnt from renders alone, and the real photos'
        # labels cannot check its suits.
        self.body = optional("body.onnx", body and indices and not detector_only)
        # The second index reader (`second`): a wider classifier for the corners read unsurely.
        self.second = optional("second_reader.onnx", second and not detector_only)
        # The wide reader (`wide`) and the sign reader (`sign`, a court card's picture sign), for a table camera's
        # cards only (as the body reader, they learnt from renders alone).
        self.wide = optional("wide_reader.onnx", wide and indices and not detector_only)
        self.sign = optional("sign_reader.onnx", sign and indices and not detector_only)
        # One size for a fixed camera; several (e.g. 320, 192) for photos whose cards may be any size.
        self.det_sizes = (det_size,) if isinstance(det_size, int) else tuple(det_size)
        self.threshold = threshold
        self.index_threshold = index_threshold
        self.refine = refine
        self.snap = snap
        self.indices = indices
        # The house's enrolled deck (vision/enrol.py `DeckModel`, optional): read last, and where it names a card at
        # `enrolled_sure` or more its reading stands; elsewhere the base readers' does.
        self.enrolled = enrolled
        self.enrolled_sure = 0.9
        self._enrolled_seen: list[tuple[CardRect, Card | None, Any]] = []  # last frame's: rect, base card, reading
        self.base_id = ("base:" + hashlib.sha256(cls_path.read_bytes()).hexdigest()[:12]) if cls_path.is_file() \
            else "base"

    @property
    def model_id(self) -> str:
        """The readers in use: the enrolled deck model's id, else the base classifier's digest."""
        return f"enrolled:{self.enrolled.id}" if self.enrolled is not None else self.base_id

    def detect(self, frame: np.ndarray) -> list[tuple[float, tuple[float, float, float, float], CardRect]]:
        """Cards in `frame` (BGR uint8) as (score, visible box, rect), strongest first, duplicates merged."""
        return self.detect_all(frame)[0]

    def detect_all(self, frame: np.ndarray) -> tuple[list[tuple[float, tuple[float, float, float, float], CardRect]],
                                                     list[tuple[float, CardRect]] | None]:
        """`detect`'s cards, and the index corners in sight as (score, rect of the card whose top-left index
        it is), strongest first (None from a detector without the index head)."""
        found, indices, smalls, _ = self._detect(frame)
        return [(score, box, rect) for score, box, rect, _ in _merge_cards(self._sharpened(found, smalls))], indices

    def _sharpened(self, found: list[tuple[float, tuple[float, float, float, float], CardRect, int]],
                   smalls: list[tuple[np.ndarray, float]]
                   ) -> list[tuple[float, tuple[float, float, float, float], CardRect, int]]:
        """`_detect`'s cards with each rectangle sharpened from the input it was found in (when `refine`)."""
        if not self.refine:
            return found
        return [(score, box, refine_rect(smalls[k][0], rect, smalls[k][1]), k) for score, box, rect, k in found]

    def _detect(self, frame: np.ndarray) -> tuple[list[tuple[float, tuple[float, float, float, float], CardRect, int]],
                                                  list[tuple[float, CardRect]] | None,
                                                  list[tuple[np.ndarray, float]], list[tuple[float, CardRect]]]:
        """The detector's cards as (score, box, rect as detected, k) with the input they were found in as
        `smalls[k]` (the shrunk frame and its scale: what `refine_rect` needs), its index corners (merged
        over the sizes, then put right by the locator, `_locate`), `smalls`, and the indices the locator found
        beside one the detector saw as two in one (`_locate`'s `twins`)."""
        _check_frame(frame)
        found: list[tuple[float, tuple[float, float, float, float], CardRect, int]] = []
        indices: list[tuple[float, CardRect]] | None = []
        smalls: list[tuple[np.ndarray, float]] = []
        # The frame halved once: the first step to the detector's input, and where the locator's squares are cut.
        half = cv2.pyrDown(frame) if self.indices and self.locator is not None else None
        for size in self.det_sizes:
            small, s = letterbox(frame, size, half)
            out = self.detector(cv2.dnn.blobFromImage(small, 1 / 255))[0]
            found += [(score, box, rect, len(smalls)) for score, box, rect in decode(out, s, self.threshold)]
            smalls.append((small, s))
            if self.indices and out.shape[0] >= DET_CHANNELS and indices is not None:
                indices += decode_indices(out, s, self.index_threshold)
            else:
                indices = None
        twins: list[tuple[float, CardRect]] = []
        if indices is None:
            return found, indices, smalls, twins
        if len(self.det_sizes) > 1:
            indices.sort(key=lambda f: -f[0])
            kept_idx: list[tuple[float, CardRect]] = []
            for score, r in indices:  # one index seen at two detector sizes
                if not any(_index_distance(r, k) < 0.3 * min(r.half_w, k.half_w) for _, k in kept_idx):
                    kept_idx.append((score, r))
            indices = kept_idx
        return found, self._locate(frame, indices, [f[2] for f in found], half, twins), smalls, twins

    def _locate(self, frame: np.ndarray, indices: list[tuple[float, CardRect]], cards: Sequence[CardRect],
                half: np.ndarray | None = None, twins: list[tuple[float, CardRect]] | None = None
                ) -> list[tuple[float, CardRect]]:
        """The index corners put right by the locator (when the models folder has one): each moved to where the
        locator sees the index and turned the way it points, and dropped where it sees none (a pip, a marker's
        square, felt). The detector finds an index's place to about a tenth of a half-width and its direction to
        within ten degrees or so, now and then a quarter or more off, and a crop that far off reads wrong; the
        locator, seeing the index and the card's corner around it, puts it right to a few hundredths and about a
        degree. Where the detector found a card but no index at one of its index corners (an index it scored below
        its threshold), that corner is looked at too. Given `twins`, where the locator moved a find far
        (`_TWIN_MOVE`), the other index that find may have stood for too is looked for (`_twins`), and appended to
        `twins`."""
        if self.locator is None or not (indices or cards):
            return indices
        points = [corner_point(r) for _, r in indices]
        corners = []
        for r in cards:
            for c in (r, r.flipped()):
                cx, cy = corner_point(c)
                if not any(math.hypot(cx - x, cy - y) < _LOCATOR_NEAR * r.half_w for x, y in points):
                    corners.append(c)
        rects = [r for _, r in indices] + corners
        out = self.locator(cv2.dnn.blobFromImages(list(locator_crops(frame, rects, half)), 1 / 255))
        kept = [(score, located(r, *o[1:])) for (score, r), o in zip(indices, out) if o[0] >= _LOCATOR_HAS]
        if twins is not None:
            twins += self._twins(frame, indices, out, kept, half)
        for r, o in zip(corners, out[len(indices):]):
            if o[0] < _LOCATOR_HAS:
                continue
            moved = located(r, *o[1:])
            if not _located_near(moved, kept + (twins or [])):
                # No index the detector found names it: its certainty that an index is there is the locator's.
                kept.append((float(o[0]), moved))
        return kept

    def _twins(self, frame: np.ndarray, indices: list[tuple[float, CardRect]], out: np.ndarray,
               kept: list[tuple[float, CardRect]], half: np.ndarray | None) -> list[tuple[float, CardRect]]:
        """The indices beside those the locator moved a find far to (`out`: its answers for `indices`), looked for
        `_TWIN_BACK` the other way from the find, located, and not one already `kept`: the detector's score each."""
        back = []
        for (score, r), o in zip(indices, out):
            move = math.hypot(o[1], o[2])
            if o[0] >= _LOCATOR_HAS and move > _TWIN_MOVE:
                back.append((score, located(r, -o[1] / move * _TWIN_BACK, -o[2] / move * _TWIN_BACK, 1.0, 0.0)))
        if not back:
            return []
        again = self.locator(cv2.dnn.blobFromImages(list(locator_crops(frame, [r for _, r in back], half)), 1 / 255))
        found: list[tuple[float, CardRect]] = []
        for (score, r), o in zip(back, again):
            moved = located(r, *o[1:])
            if o[0] >= _LOCATOR_HAS and not _located_near(moved, kept + found):
                found.append((score, moved))
        return found

    def classify(self, frame: np.ndarray, rects: Sequence[CardRect], snap: bool | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Per-corner probabilities: ranks (2n, RANK_CLASSES) and suits (2n, 4)."""
        corners = [c for r in rects for c in (r, r.flipped())]
        if self.snap if snap is None else snap:
            gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            corners = [snap_corner(gray, c) for c in corners]
        return self._read(frame, corners)

    def identify(self, frame: np.ndarray) -> list[Detection]:
        """Every card in `frame` with its identity and confidences."""
        if not self.indices:
            # A photo is searched at several sizes. One card found at two of them is read at each: the
            # stronger find may carry the worse rectangle (a big card's, at the larger size), and the better
            # reading stands (below).
            raw, _, smalls, _ = self._detect(frame)
            found = [(score, box, rect) for score, box, rect, _ in self._sharpened(_merge_cards(raw, per_size=True),
                                                                                   smalls)]
            cards: list[Detection] = []
        else:
            raw, indices, smalls, twins = self._detect(frame)
            merged = finds = _merge_cards(raw)
            # Each index corner in sight is read on its own; a card is named by its one or two indices. An
            # index counts only on a card the detector found (ink on a busy background is no card): the index
            # on its visible box, or the card it implies centred there (a card under another in a cascade
            # may be found only as the one on top).
            # An index off them all may still be a card's the detector missed (the last of a cascade, found
            # only as the card above it): it counts when that card overlaps a found one and it reads surely.
            def beside(r: CardRect) -> bool:
                return any(_iou(_in_frame(r, frame), f[1]) > 0 for f in merged)

            on: list[tuple[float, CardRect]] = []
            off: list[tuple[float, CardRect]] = []
            for score, r in indices or ():
                if any(_on_box(r, f[1]) for f in merged):
                    on.append((score, r))
                elif beside(r):
                    off.append((score, r))
            # An index found beside one the detector saw as two in one counts as such an index does: its find was
            # the other's, and the locator may have taken a pip or a picture's ink for it.
            off += [(score, r) for score, r in twins if beside(r)]
            # One card named at two places (an index found twice, once turned wrong) names the place of the
            # surer reading only: the other must not stand for whatever card lies there.
            cards = _distinct(self._read_indices(frame, on) +
                              [d for d in self._read_indices(frame, off) if d.confidence >= _SURE])
            # Cards no sure index reading names in their place (face down, covered, an index missed or read
            # unsurely) are read at both corners, from their rectangles sharpened (only they need it). Only
            # the same place counts: in a cascade the card under a named one may lie mostly beneath it.
            merged = [f for f in merged if not any(d.confidence >= _SURE and _same_place(d.rect, f[2])
                                                   for d in cards)]
            found = [(score, box, rect) for score, box, rect, _ in self._sharpened(merged, smalls)]
        if found:
            ranks, suits = self.classify(frame, [f[2] for f in found])
            more = [_pool(score, box, rect, ranks[2 * k:2 * k + 2], suits[2 * k:2 * k + 2])
                    for k, (score, box, rect) in enumerate(found)]
            # A card read badly may have been taken a little off, or the wrong way round (long and short
            # sides swapped): read it again from rectangles nudged and turned, and keep the surest reading.
            doubtful = [k for k, d in enumerate(more) if not d.face_down and d.confidence < 0.6]
            if doubtful:
                variants = [(k, v) for k in doubtful for v in _variants(more[k].rect)]
                ranks2, suits2 = self.classify(frame, [v for _, v in variants], snap=False)
                for j, (k, v) in enumerate(variants):
                    again = _pool(more[k].score, more[k].box, v, ranks2[2 * j:2 * j + 2], suits2[2 * j:2 * j + 2])
                    if again.card is not None and again.confidence > more[k].confidence:
                        more[k] = again
            # A card read both ways is one card: the surer reading stands, whatever the other says.
            for d in [d for d in cards if d.confidence < _SURE]:
                rivals = [m for m in more if m.card is not None and _explains(d.rect, m.rect, m.box)]
                if any(m.confidence > d.confidence for m in rivals):
                    cards.remove(d)
                else:
                    more = [m for m in more if not any(m is r for r in rivals)]
            cards += more if self.indices else _merge_readings(more)
        cards = _distinct(cards)
        if self.indices:
            cards = _distinct(cards + self._read_gaps(frame, cards))
            if self.body is not None:
                cards = _distinct(self._read_bodies(frame, cards, finds, smalls))
        if self.enrolled is not None:
            cards = self._read_enrolled(frame, cards)
        return cards

    def _read_enrolled(self, frame: np.ndarray, cards: list[Detection]) -> list[Detection]:
        """Every card not face down read again by the enrolled deck model at its rectangle's two corners; where it
        is sure, its reading stands (`model` says so)."""
        from vision.enrol import combine

        readable = [d for d in cards if not d.face_down]
        # A card lying still, read alike by the base readers, is not read again: its last frame's enrolled reading
        # stands (a table camera sees the same cards frame after frame; a frame's enrolled reading of 8 cards costs
        # about a third of the rest of the frame).
        readings: list[Any] = [next((r for rect, card, r in self._enrolled_seen if card == d.card
                                     and _still(rect, d.rect)), None) for d in readable]
        fresh = [k for k, r in enumerate(readings) if r is None]
        if fresh:
            for k, r in zip(fresh, self.enrolled.read(corner_crops(frame, [readable[k].rect for k in fresh]))):
                readings[k] = r
        self._enrolled_seen = [(d.rect, d.card, r) for d, r in zip(readable, readings)]
        out = [d for d in cards if d.face_down]
        for d, r in zip(readable, readings):
            card, conf, enrolled = combine(d.card, d.confidence, r, self.enrolled_sure)
            if enrolled:
                same = card == d.card
                d = dataclasses.replace(d, card=card, confidence=conf, model=f"enrolled:{self.enrolled.id}",
                                        rank_confidence=max(conf, d.rank_confidence) if same else conf,
                                        suit_confidence=max(conf, d.suit_confidence) if same else conf)
            elif conf != d.confidence:
                d = dataclasses.replace(d, confidence=conf)
            out.append(d)
        return _distinct(out)

    def _body_rect(self, card: Detection, finds: list[tuple[float, tuple[float, float, float, float], CardRect, int]],
                   smalls: list[tuple[np.ndarray, float]]) -> CardRect:
        """Where to read a card's body: the rectangle the detector found in its place, sharpened, else the card's
        own. A card named by its index carries the rectangle its index implies, a few pixels and degrees off:
        enough for the body reader to see no whole card."""
        f = next((f for f in finds if _same_card_place(card.rect, f[2])), None)
        return card.rect if f is None else self._sharpened([f], smalls)[0][2]

    def _read_bodies(self, frame: np.ndarray, cards: list[Detection],
                     finds: list[tuple[float, tuple[float, float, float, float], CardRect, int]],
                     smalls: list[tuple[np.ndarray, float]]) -> list[Detection]:
        """Cards named unsurely (below _BODY_GATE) read again by the body reader, at `_body_rect`. Where it sees
        a whole card face up, the surer of the two readings names the rank, and the surer the suit: a small index
        may blur a 5 into an 8 or a spade into a club, while the card's pips, several times its size, do not."""
        doubtful = [k for k, d in enumerate(cards) if _doubtful(d)]
        if not doubtful:
            return cards
        assert self.body is not None
        crops = body_crops(frame, [self._body_rect(cards[k], finds, smalls) for k in doubtful])
        probs = self.body(cv2.dnn.blobFromImages(list(crops), 1 / 255))
        out = list(cards)
        for k, p in zip(doubtful, probs):
            ranks, suits = p[:BODY_NONE], p[BODY_RANKS:]
            if p[BODY_NONE] >= 0.5:  # covered, face down, or the rect is off the card: the index alone tells
                continue
            d, r, s = cards[k], int(ranks.argmax()), int(suits.argmax())
            card = d.card
            assert card is not None
            rank, rank_p = (r + 2, float(ranks[r])) if ranks[r] > d.rank_confidence else (card.rank, d.rank_confidence)
            # A court card's body is a picture: only the pips of a number card or an ace show the suit large.
            whole = r + 2 == rank and ranks[r] >= _BODY_SUIT_RANK and not 11 <= rank <= 13
            suit, suit_p = (Suit(s), float(suits[s])) if whole and suits[s] > d.suit_confidence else \
                (card.suit, d.suit_confidence)
            out[k] = dataclasses.replace(d, card=Card(rank, suit), confidence=rank_p * suit_p, rank_confidence=rank_p,
                                         suit_confidence=suit_p)
        return out

    def _read_gaps(self, frame: np.ndarray, cards: Sequence[Detection]) -> list[Detection]:
        """Cards missed inside a cascade, read where their indices must be (`cascade_gaps`); only sure
        readings count (a point between two indices shows a card's middle or felt: "none")."""
        rects = cascade_gaps(cards)
        ranks, suits = self._read(frame, rects)
        # The detector did not find it: its certainty that a card is there is the reading's own.
        reads = [_pool(0.0, _in_frame(r, frame), r, ranks[k:k + 1], suits[k:k + 1]) for k, r in enumerate(rects)]
        # A dealer's steps are not even: the index may lie a tenth of a width or more from the point between
        # its neighbours. Where an index is read there unsurely, it is read again shifted that far each way.
        shifted = [(k, v) for k, d in enumerate(reads) if d.card is not None and d.confidence < _SURE
                   for v in _shifted(rects[k], _GAP_SHIFT)]
        ranks2, suits2 = self._read(frame, [v for _, v in shifted])
        for j, (k, v) in enumerate(shifted):
            again = _pool(0.0, _in_frame(v, frame), v, ranks2[j:j + 1], suits2[j:j + 1])
            if again.card is not None and again.confidence > reads[k].confidence:
                reads[k] = again
        return [dataclasses.replace(d, score=d.confidence) for d in reads
                if d.card is not None and d.confidence >= _SURE]

    def _read_indices(self, frame: np.ndarray, indices: Sequence[tuple[float, CardRect]]) -> list[Detection]:
        """Read the index corners in sight. The two indices of one card (the same card implied at the same
        place from opposite corners) are paired first; a card is read at its likelier index, and at the
        other too only when that reading is unsure (each crop read costs about 0.15 ms here), and the readings
        are pooled. Corners that show no index name nothing."""
        if not indices:
            return []
        order = sorted(range(len(indices)), key=lambda k: -indices[k][0])
        rects = [r for _, r in indices]
        if self.snap:
            gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            rects = [snap_corner(gray, r) for r in rects]
        # The other index of the same card implies the same card: same place, opposite direction. Closest
        # pairs first: in a cascade a neighbour's index may imply a card nearly there too.
        pairs = sorted((math.hypot(a.cx - b.cx, a.cy - b.cy) / (a.half_w + b.half_w), i, j)
                       for i, a in enumerate(rects) for j, b in enumerate(rects[:i])
                       if a.ux * b.ux + a.uy * b.uy < -0.7)
        mate: dict[int, int] = {}
        for d, i, j in pairs:
            if d < _PAIRED and i not in mate and j not in mate:
                mate[i], mate[j] = j, i
        groups: list[list[int]] = []  # each card's indices, likelier first
        grouped: set[int] = set()
        for k in order:
            if k not in grouped:
                groups.append([k] + ([mate[k]] if k in mate else []))
                grouped.update(groups[-1])
        ranks, suits = self._read(frame, [rects[g[0]] for g in groups])
        # Unsure as a card's confidence is: the rank's probability times the suit's (a K read at 0.9 and a
        # club at 0.86 names the KC at 0.77, and its other index may show a spade plainly).
        unsure = [j for j, g in enumerate(groups) if len(g) == 2 and
                  float(ranks[j].max()) * float(suits[j].max()) < _SURE]
        ranks2, suits2 = self._read(frame, [rects[groups[j][1]] for j in unsure])
        second = {j: i for i, j in enumerate(unsure)}
        out = []
        for j, g in enumerate(groups):
            r = rects[g[0]]
            box = _in_frame(r, frame)
            score = max(indices[k][0] for k in g)
            if j in second:
                i = second[j]
                read = _pool(score, box, r, np.stack([ranks[j], ranks2[i]]), np.stack([suits[j], suits2[i]]))
            else:
                read = _pool(score, box, r, ranks[j:j + 1], suits[j:j + 1])
            out.append(read)
        return [d for d in out if d.card is not None]

    def _read(self, frame: np.ndarray, rects: Sequence[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        """The classifier's rank and suit probabilities for the top-left index corner of each rect; where it
        reads an index unsurely, the second reader's instead; where a black suit is still unsure, averaged with the
        second reader's at the crop cut smaller and larger; where a number card's black suit is still unsure, times
        the wide reader's, and where a court card's is, times the sign reader's."""
        if not rects:
            return np.zeros((0, RANK_CLASSES), np.float32), np.zeros((0, 4), np.float32)
        crops = index_crops(frame, rects)
        probs = self.classifier(cv2.dnn.blobFromImages(list(crops), 1 / 255))
        if self.second is not None:
            # The second reader, four times the classifier's cost a crop, reads better (a black index's suit, a
            # blurred rank): where the classifier is unsure of an index (not where it sees none, which most false
            # finds are), its reading replaces the classifier's. Averaged with it, it found no more cards.
            sure = np.minimum(probs[:, :RANK_CLASSES].max(1), probs[:, RANK_CLASSES:].max(1))
            shaky = np.nonzero((sure < _SECOND_GATE) & (probs[:, NONE] < 0.5))[0]
            if len(shaky):
                probs[shaky] = self.second(cv2.dnn.blobFromImages(list(crops[shaky]), 1 / 255))
        suits = probs[:, RANK_CLASSES:]
        black = np.isin(suits.argmax(1), (Suit.SPADES, Suit.CLUBS))
        doubt = np.nonzero(black & (suits.max(1) < _SCALE_GATE) & (probs[:, NONE] < 0.5))[0]
        if len(doubt):
            reader = self.second if self.second is not None else self.classifier
            both = suits[doubt].copy()
            for scale in (1 - _SCALE_STEP, 1 + _SCALE_STEP):
                crops2 = index_crops(frame, [scaled_about_index(rects[k], scale) for k in doubt])
                both += reader(cv2.dnn.blobFromImages(list(crops2), 1 / 255))[:, RANK_CLASSES:]
            suits[doubt] = both / both.sum(1, keepdims=True)
        if self.wide is not None:
            doubt = _unsure_black(probs, suits, _WIDE_RANKS, _WIDE_GATE)
            if len(doubt):
                wide = self.wide(cv2.dnn.blobFromImages(list(wide_crops(frame, [rects[k] for k in doubt])), 1 / 255))
                _times(suits, doubt, wide[:, RANK_CLASSES:])
        if self.sign is not None:
            doubt = _unsure_black(probs, suits, _SIGN_RANKS, _SIGN_GATE)
            if len(doubt):
                signs = self.sign(cv2.dnn.blobFromImages(list(sign_crops(frame, [rects[k] for k in doubt])), 1 / 255))
                seen = signs[:, SIGN_NONE] < 0.5  # a covered sign says nothing
                reading = np.ones((int(seen.sum()), 4), np.float32)
                reading[:, Suit.CLUBS] = np.maximum(signs[seen, 0], _SUIT_FLOOR)
                reading[:, Suit.SPADES] = np.maximum(signs[seen, 1], _SUIT_FLOOR)
                _times(suits, doubt[seen], reading)
        return probs[:, :RANK_CLASSES], probs[:, RANK_CLASSES:]


def _unsure_black(probs: np.ndarray, suits: np.ndarray, ranks: frozenset[int], gate: float) -> np.ndarray:
    """The rows whose suit reads black less surely than `gate` and whose rank reads as one of the rank classes
    `ranks`."""
    black = np.isin(suits.argmax(1), (Suit.SPADES, Suit.CLUBS))
    ranked = np.isin(probs[:, :RANK_CLASSES].argmax(1), list(ranks))
    return np.nonzero(black & ranked & (suits.max(1) < gate))[0]


def _times(suits: np.ndarray, rows: np.ndarray, reading: np.ndarray) -> None:
    """`suits[rows]` multiplied by another look's `reading` of the same cards' suits, normalised (in place)."""
    both = suits[rows] * reading
    suits[rows] = both / both.sum(1, keepdims=True)


def cascade_gaps(cards: Sequence[Detection]) -> list[CardRect]:
    """Where the index of a card the detector missed in a cascade would be, as rects whose top-left index is
    there (each point twice: a card lies either way up). A card under two others in a cascade shows only its
    index, a few pixels in the detector's input, and is the one the detector misses most; its neighbours
    are named. Between two cards named surely (or one seen surely face down), lying the same way (or turned
    half round) and of one size, whose indices are two or three cascade steps apart (`_STEP_ACROSS`,
    `_STEP_ALONG`), the missed indices lie at the steps between. Points where a named card's index already
    is are left out."""
    named = [d.rect for d in cards if d.card is not None and d.confidence >= _SURE]
    # A hole card face down is a cascade's first card as surely: its corner is where an index would be (at either
    # end, as every named card's: a back has no way up).
    named += [d.rect for d in cards if d.face_down and d.confidence >= _SURE]
    taken = [corner_point(r) for d in cards if d.card is not None for r in (d.rect, d.rect.flipped())]
    out: list[CardRect] = []
    for named_a in named:
        partners = [rb for rb in named if rb is not named_a and abs(named_a.ux * rb.ux + named_a.uy * rb.uy) >= 0.9
                    and 0.8 < named_a.half_w / rb.half_w < 1.25
                    and math.hypot(named_a.cx - rb.cx, named_a.cy - rb.cy) <= _GAP_REACH * named_a.half_l]
        # Either corner of a card may be the one the cascade shows: a card named at its rectangle, or at the index
        # it was likelier at, may carry the corner the next card covers. Validation, 12,020 cards: 11,968 ->
        # 11,972 found, false reports 106 -> 104, for 0.8 more crops read a dealt frame (none on the bench's).
        for ra in (named_a, named_a.flipped()):
            for rb in partners:
                # The same corner of both cards, as `ra` points (each pair is tried both ways: which card is
                # under, its index the one in sight, is not known).
                if ra.ux * rb.ux + ra.uy * rb.uy < 0:
                    rb = rb.flipped()
                (ax, ay), (bx, by) = corner_point(ra), corner_point(rb)
                half_w = (ra.half_w + rb.half_w) / 2
                for steps in range(2, _GAP_CARDS + 2):
                    sx, sy = (bx - ax) / steps, (by - ay) / steps
                    along = abs(sx * ra.ux + sy * ra.uy) / ra.half_l
                    across = abs(-sx * ra.uy + sy * ra.ux) / ra.half_w
                    if not (_STEP_ALONG[0] <= along <= _STEP_ALONG[1] and
                            _STEP_ACROSS[0] <= across <= _STEP_ACROSS[1]):
                        continue
                    for j in range(1, steps):
                        px, py = ax + sx * j, ay + sy * j
                        if any(math.hypot(qx - px, qy - py) < 0.4 * half_w for qx, qy in taken):
                            continue
                        taken.append((px, py))
                        out += [rect_at_index(px, py, s * ra.ux, s * ra.uy, half_w) for s in (1, -1)]
    return out


def refine_rect(small: np.ndarray, rect: CardRect, scale: float) -> CardRect:
    """Sharpen a card's rectangle from the paper itself when the card lies apart (a bright, unsaturated
    rectangle of the predicted size around the predicted centre); otherwise keep the detector's. The
    detector's angle is good to about ten degrees; an isolated card's outline is good to one or two."""
    q = rect.quad() * scale
    h, w = small.shape[:2]
    pad = 0.15 * (rect.half_w + rect.half_l) * scale
    x0, y0 = max(0, int(q[:, 0].min() - pad)), max(0, int(q[:, 1].min() - pad))
    x1, y1 = min(w, int(q[:, 0].max() + pad) + 1), min(h, int(q[:, 1].max() + pad) + 1)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return rect
    hsv = cv2.cvtColor(small[y0:y1, x0:x1], cv2.COLOR_BGR2HSV)
    _, bright = cv2.threshold(hsv[..., 2], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    paper = bright & ((hsv[..., 1] < 110).astype(np.uint8) * 255)
    # A light closing only: cards laid side by side a few pixels apart must stay apart.
    paper = cv2.morphologyEx(paper, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=4)
    cx, cy = int(rect.cx * scale) - x0, int(rect.cy * scale) - y0
    if not (0 <= cx < x1 - x0 and 0 <= cy < y1 - y0) or labels[cy, cx] == 0:
        return _edge_axis(small[y0:y1, x0:x1], rect, scale, x0, y0)
    comp = (labels == labels[cy, cx]).astype(np.uint8)
    contours, _ = cv2.findContours(comp, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    c = max(contours, key=cv2.contourArea)
    (mx, my), (rw, rh), ang = cv2.minAreaRect(c)
    long_, short = max(rw, rh), min(rw, rh)
    hl, hw = rect.half_l * scale, rect.half_w * scale
    # Accept only a lone card: the right size, solidly rectangular, where the detector put it.
    if not (0.7 < long_ / (2 * hl) < 1.3 and 0.7 < short / (2 * hw) < 1.3 and 0.6 < short / long_ < 0.82) or \
            cv2.contourArea(c) < 0.82 * rw * rh or np.hypot(mx - cx, my - cy) > 0.35 * hw:
        return _edge_axis(small[y0:y1, x0:x1], rect, scale, x0, y0)
    a = math.radians(ang)
    ux, uy = (math.cos(a), math.sin(a)) if rw >= rh else (-math.sin(a), math.cos(a))
    return CardRect((mx + x0) / scale, (my + y0) / scale, ux, uy, long_ / 2 / scale, short / 2 / scale)


def _edge_axis(roi: np.ndarray, rect: CardRect, scale: float, x0: int, y0: int) -> CardRect:
    """Turn the rect to the dominant edge direction inside it (card edges, borders and index strokes run
    along the card's axes; the fourfold mean of gradient angles finds them modulo 90 degrees), taking the
    axis nearest the detector's. Keeps the detector's angle when the edges have no clear direction."""
    gray = cv2.cvtColor(roi, cv2.COLOR_BGR2GRAY).astype(np.float32)
    # Only inside the card as predicted (a little shrunk), so neighbours' edges count less.
    mask = np.zeros(gray.shape, np.uint8)
    inner = CardRect(rect.cx * scale - x0, rect.cy * scale - y0, rect.ux, rect.uy, rect.half_l * scale * 1.05,
                     rect.half_w * scale * 1.05)
    cv2.fillConvexPoly(mask, np.round(inner.quad()).astype(np.int32), 1)
    axis = _dominant_axis(gray, mask)  # an edge normal; the card's axes are this modulo 90 degrees
    if axis is None:
        return rect
    current = math.atan2(rect.uy, rect.ux)
    # The candidate (axis + k * 90 degrees) nearest the detector's up, modulo 180.
    best = min((axis + k * math.pi / 2 for k in range(4)),
               key=lambda a: abs(math.remainder(a - current, math.pi)))
    if abs(math.remainder(best - current, math.pi)) > math.radians(30):
        return rect
    return CardRect(rect.cx, rect.cy, math.cos(best), math.sin(best), rect.half_l, rect.half_w)


def _pool(score: float, box: tuple[float, float, float, float], rect: CardRect, ranks: np.ndarray,
          suits: np.ndarray) -> Detection:
    readable = 1 - ranks[:, NONE] - ranks[:, BACK]
    back = float(ranks[:, BACK].max())
    w = np.clip(readable, 0, 1)
    if w.max() < 0.5:
        return Detection(None, back if back >= 0.5 else float(ranks[:, NONE].max()), score, box, rect,
                         face_down=back >= 0.5)
    w = w * (w >= 0.5 * w.max())  # a corner much less sure than the other does not vote
    rank_p = (ranks[:, :BACK] * w[:, None]).sum(0)
    rank_p /= max(rank_p.sum(), 1e-9)
    cls = int(rank_p.argmax())
    if cls == JOKER_CLASS:
        return Detection(JOKER, float(rank_p[cls]), score, box, rect, rank_confidence=float(rank_p[cls]))
    # Two corners read are two looks at the card's suit, each index blurred and lit its own way: their readings
    # multiply. Between two suits that names the suit the average does, but surer where the corners agree (clubs
    # at 0.7 and 0.7 make 0.84, over _SURE), and a suit one corner rules out stays out. Validation, 12,020 cards:
    # 11,976 -> 11,978 right, false reports 105 -> 102 (the ranks multiplied too: 11,979, false 104; they stay
    # averaged).
    voting = w > 0
    suit_p = np.prod(np.maximum(suits[voting], _SUIT_FLOOR), axis=0) if voting.sum() > 1 else \
        (suits * w[:, None]).sum(0)
    suit_p /= max(suit_p.sum(), 1e-9)
    suit = int(suit_p.argmax())
    card = Card(cls + 2, Suit(suit))
    return Detection(card, float(rank_p[cls] * suit_p[suit]), score, box, rect, rank_confidence=float(rank_p[cls]),
                     suit_confidence=float(suit_p[suit]))


def _still(a: CardRect, b: CardRect) -> bool:
    """The same rectangle in two frames, to a tenth of its half-width and 3 degrees: a card that has not moved."""
    return (math.hypot(a.cx - b.cx, a.cy - b.cy) < 0.1 * a.half_w and abs(a.half_w - b.half_w) < 0.1 * a.half_w
            and a.ux * b.ux + a.uy * b.uy > 0.9986)


def _distinct(cards: list[Detection]) -> list[Detection]:
    """Surest first, the same card named twice within a card's width of itself kept once: one card seen twice.
    Surest is the reading's own confidence: how sure the detector or the locator was that an index is there
    does not make its reading right (a 2S read at 0.98 at one index and 0.87 at the other, the locator sure of
    the second, kept the 0.87, which the body reader then read on to a neighbour's suit)."""
    out: list[Detection] = []
    for d in sorted(cards, key=lambda d: -d.confidence):
        if d.card is not None and any(o.card == d.card and math.hypot(o.rect.cx - d.rect.cx, o.rect.cy - d.rect.cy)
                                      < 2 * max(o.rect.half_w, d.rect.half_w) for o in out):
            continue
        out.append(d)
    return out


def _merge_cards(found: list[tuple[float, tuple[float, float, float, float], CardRect, int]], per_size: bool = False
                 ) -> list[tuple[float, tuple[float, float, float, float], CardRect, int]]:
    """The detector's cards strongest first, a card found twice kept once (`per_size`: twice at one size)."""
    kept: list[tuple[float, tuple[float, float, float, float], CardRect, int]] = []
    for f in sorted(found, key=lambda f: -f[0]):
        if any((not per_size or f[3] == k[3]) and _same_card(f[2], f[1], k[2], k[1]) for k in kept):
            continue
        kept.append(f)
    return kept


def _merge_readings(cards: list[Detection]) -> list[Detection]:
    """One card read from several finds (a photo's sizes) kept once: a named reading before an unnamed one,
    then the surer one. On the training photos (the held-out ones unread) this found 417 of 424 cards
    instead of 411 when the stronger find was kept; on synthetic piles read as photos 74.4% against 71.4%."""
    kept: list[Detection] = []
    for d in sorted(cards, key=lambda d: (d.card is not None, d.confidence, d.score), reverse=True):
        if not any(_same_card(d.rect, d.box, k.rect, k.box) for k in kept):
            kept.append(d)
    return kept


def _same_card(r: CardRect, box: Sequence[float], other: CardRect, other_box: Sequence[float]) -> bool:
    """Whether two finds are one card: nearly the same rectangle or the same visible box (two peaks on a big
    card's flat heatmap, its visible part split by a hand, or one card found at two sizes)."""
    return (math.hypot(r.cx - other.cx, r.cy - other.cy) < 0.4 * min(r.half_w, other.half_w)
            or _iou(box, other_box) > 0.6)


def _in_frame(r: CardRect, frame: np.ndarray) -> tuple[float, float, float, float]:
    """The bounding box of the card `r` within the frame (x0, y0, x1, y1)."""
    h, w = frame.shape[:2]
    q = r.quad()
    return (max(0.0, float(q[:, 0].min())), max(0.0, float(q[:, 1].min())),
            min(float(w), float(q[:, 0].max())), min(float(h), float(q[:, 1].max())))


def _variants(r: CardRect) -> list[CardRect]:
    """The rectangle turned by 90 degrees, shifted a little along each axis, and a little bigger and smaller."""
    out = [CardRect(r.cx, r.cy, -r.uy, r.ux, r.half_l, r.half_w)] + _shifted(r, 0.15)
    for k in (0.88, 1.12):
        out.append(CardRect(r.cx, r.cy, r.ux, r.uy, r.half_l * k, r.half_w * k))
    return out


def _shifted(r: CardRect, step: float) -> list[CardRect]:
    """The rectangle moved `step` of its half-width across and along, each way."""
    right = (-r.uy, r.ux)
    out = []
    for du, dv in ((step, 0), (-step, 0), (0, step), (0, -step)):
        dx = (right[0] * du + r.ux * dv) * r.half_w
        dy = (right[1] * du + r.uy * dv) * r.half_w
        out.append(CardRect(r.cx + dx, r.cy + dy, r.ux, r.uy, r.half_l, r.half_w))
    return out


def _index_distance(a: CardRect, b: CardRect) -> float:
    """How far apart the top-left index corners of two rects are, in pixels."""
    (ax, ay), (bx, by) = a.top_left(), b.top_left()
    return float(math.hypot(ax - bx, ay - by))


def _located_near(r: CardRect, kept: Sequence[tuple[float, CardRect]]) -> bool:
    """Whether an index located at `r` is one of those `kept`: their indices within _LOCATOR_NEAR (of the smaller
    half-width) of each other."""
    return any(_index_distance(r, k) < _LOCATOR_NEAR * min(r.half_w, k.half_w) for _, k in kept)


def _on_box(r: CardRect, box: Sequence[float]) -> bool:
    """Whether the top-left index of `r` lies in `box` (x0, y0, x1, y1), give or take a tenth of it, or the
    centre of the card it implies does."""
    px, py = corner_point(r)
    mx, my = 0.1 * (box[2] - box[0]), 0.1 * (box[3] - box[1])
    return box[0] - mx <= px <= box[2] + mx and box[1] - my <= py <= box[3] + my or \
        box[0] <= r.cx <= box[2] and box[1] <= r.cy <= box[3]


def _doubtful(d: Detection) -> bool:
    """Whether the body reader reads this card again: named, not a joker, and not surely."""
    return d.card is not None and not d.card.joker and d.confidence < _BODY_GATE


def _same_card_place(named: CardRect, rect: CardRect) -> bool:
    """Whether a card named from its index and a card the detector found are surely the same card: closer than
    `_same_place` asks, since the card on top of it in a cascade may lie little more than a third of a width off."""
    return math.hypot(named.cx - rect.cx, named.cy - rect.cy) < 0.25 * named.half_w


def _same_place(named: CardRect, rect: CardRect) -> bool:
    """Whether a card named from its index (`named`) and a card the detector found (`rect`) are centred alike."""
    return math.hypot(named.cx - rect.cx, named.cy - rect.cy) < 0.6 * named.half_w


def _explains(named: CardRect, rect: CardRect, box: Sequence[float]) -> bool:
    """Whether a card named from its index (`named`) is the card the detector found as `rect` / `box`:
    its centre near the found one, or the found visible box's centre on it."""
    if _same_place(named, rect):
        return True
    bx, by = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    dx, dy = bx - named.cx, by - named.cy
    along = dx * named.ux + dy * named.uy
    across = -dx * named.uy + dy * named.ux
    return abs(along) < 0.8 * named.half_l and abs(across) < 0.8 * named.half_w


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _check_frame(frame: np.ndarray) -> None:
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError("a frame must be a BGR uint8 image (height, width, 3)")
    if frame.shape[0] < 32 or frame.shape[1] < 32:
        raise ValueError(f"frame {frame.shape[1]}x{frame.shape[0]} is too small (at least 32x32)")
