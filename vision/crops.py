"""What the card models see and what the detector says: the crops cut from card rectangles for each reader, the
detector's letterboxed input and its output decoded into finds and index corners."""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import cv2
import numpy as np

from vision.cardrect import Box, CardRect, rect_at_index
from vision.render import INDEX_REGION

CROP_W, CROP_H = 32, 48
STRIDE = 4
# Detector output channels: 0 card heatmap, 1-4 visible box, 5-10 card rectangle; 11 index-corner
# heatmap, 12-13 its sub-cell position, 14-15 the index's up direction, 16 log of the card's half-width.
I_HEAT = 11
DET_CHANNELS = 17
_PAD = 114  # grey used to pad the detector input (the same in training)
# The index locator (models/locator.onnx, optional) sees a square around each index the detector found, two
# half-widths of its card across (as fractions of the card whose top-left index it is: centred on that index),
# at LOCATOR_SIZE pixels, and says whether an index is there, where and which way it points.
LOCATOR_REGION = (-0.35, -0.197, 0.65, 0.517)
LOCATOR_SIZE = 32

# The wide reader (models/wide_reader.onnx, optional) sees an index with the strip beside it, to three quarters of the
# card's width (WIDE_REGION), at the index crop's scale (its left CROP_W columns are the index crop): beside a number
# card's or an ace's index a pip shows the suit again, larger. A black suit (a spade and a club blur alike) the index
# readers name less surely than _WIDE_GATE is read again by it, and the two readings are multiplied (two looks at
# one card; the strip is new evidence). Validation, 6,007 cards: 5981 -> 5985 (false 54 either way); read for
# court cards too, 5981 (a court card's strip is its picture, and the reader read a JC's as a spade's).
WIDE_REGION = (0.0, 0.0, 0.75, 0.32)
WIDE_W, WIDE_H = 80, 48

# The sign reader (models/sign_reader.onnx, optional) sees the square about the suit sign a court card's picture
# shows near its top, beside the figure's head (SIGN_REGION, fractions of the upright card, at SIGN_SIZE pixels square):
# larger than the index's suit. Classes: club, spade, SIGN_NONE (no sign in sight: covered; it then says nothing). A
# court card's black suit the other readers name less surely than _SIGN_GATE is multiplied by its reading (the index
# suit of a court card is a blur a few pixels across, its strip the picture). Validation, 12,020 cards: 11,981 ->
# 11,987 right, false reports 96 -> 89; both ends' signs read, 11,988 for twice the squares (a first model read
# below 0.99 found what it found below 0.95).
SIGN_REGION = (0.50, 0.05, 0.86, 0.31)
SIGN_SIZE = 40

# The body reader (models/body.onnx, optional) sees a whole card, upright, at BODY_W x BODY_H: its pips or
# face say rank and suit at several times the size of the index. Rank head: 0..12 ranks 2..A, then
# BODY_NONE ("no whole card face up here": covered, face down, off the card); suit head: C D H S.
BODY_W, BODY_H = 40, 56


def corner_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """The two index corners of every card, each turned upright: uint8 (2 * len(rects), CROP_H, CROP_W, 3).

    Crop 2k is the top-left corner of card k as its rect's `up` points, crop 2k+1 the opposite corner.
    """
    return index_crops(image, [r for rect in rects for r in (rect, rect.flipped())])


def index_crops(image: np.ndarray, rects: Sequence[CardRect]) -> np.ndarray:
    """The top-left index corner of every rect (as its `up` points), turned upright: (len(rects), CROP_H, CROP_W, 3)."""
    return _crops(image, rects, INDEX_REGION, CROP_W, CROP_H)


def locator_crops(image: np.ndarray, rects: Sequence[CardRect], half: np.ndarray | None = None) -> np.ndarray:
    """The square around every rect's top-left index, turned as the rect points it: (len(rects), LOCATOR_SIZE,
    LOCATOR_SIZE, 3), for the locator. `half` (`cv2.pyrDown(image)`, when the caller has it) serves the squares
    that shrink twofold or more: sampled from it, each costs a fifth as much, and the locator finds the index as
    well (validation frames: 5977 cards of 6,007 found against 5978)."""
    return _crops(image, rects, LOCATOR_REGION, LOCATOR_SIZE, LOCATOR_SIZE, half)


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


def decode(out: np.ndarray, scale: float, threshold: float) -> list[tuple[float, Box,
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
