"""A card as a rectangle in frame pixels (`CardRect`), a detector's find of one (`Find`), and the geometry between
them: where a rectangle's index lies, a rectangle sharpened from the paper, two finds of one card."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import cv2
import numpy as np

from vision.render import CARD_H, CARD_W, INDEX_REGION

Box = tuple[float, float, float, float]  # a visible part of a card (x0, y0, x1, y1), in frame pixels

CARD_ASPECT = CARD_H / CARD_W  # a card's length over its width, as rendered (a poker card's 88/63)


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


class Find(NamedTuple):
    """One card the detector found: its score, its visible box and its rectangle in frame pixels, and `size`, which
    of the detector's input sizes found it (its index in the inputs kept to sharpen the rectangle from)."""

    score: float
    box: Box
    rect: CardRect
    size: int


def corner_point(rect: CardRect) -> tuple[float, float]:
    """Where the top-left index of `rect` sits in the image (the middle of the classifier's region)."""
    x = (INDEX_REGION[0] + INDEX_REGION[2]) / 2
    y = (INDEX_REGION[1] + INDEX_REGION[3]) / 2
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
    x = (INDEX_REGION[0] + INDEX_REGION[2]) / 2
    y = (INDEX_REGION[1] + INDEX_REGION[3]) / 2
    right = (-uy, ux)
    # corner_point inverted: index = centre + up * half_l * (1 - 2y) - right * half_w * (1 - 2x).
    return CardRect(px - ux * half_l * (1 - 2 * y) + right[0] * half_w * (1 - 2 * x),
                    py - uy * half_l * (1 - 2 * y) + right[1] * half_w * (1 - 2 * x), ux, uy, half_l, half_w)


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
    paper = bright & ((hsv[..., 1] < 110).astype(np.uint8) * 255)  # type: ignore[operator]  # cv2's stubs
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


def in_frame(r: CardRect, frame: np.ndarray) -> Box:
    """The bounding box of the card `r` within the frame (x0, y0, x1, y1)."""
    h, w = frame.shape[:2]
    q = r.quad()
    return (max(0.0, float(q[:, 0].min())), max(0.0, float(q[:, 1].min())),
            min(float(w), float(q[:, 0].max())), min(float(h), float(q[:, 1].max())))


def rect_variants(r: CardRect) -> list[CardRect]:
    """The rectangle turned by 90 degrees, shifted a little along each axis, and a little bigger and smaller."""
    out = [CardRect(r.cx, r.cy, -r.uy, r.ux, r.half_l, r.half_w)] + shifted_rects(r, 0.15)
    for k in (0.88, 1.12):
        out.append(CardRect(r.cx, r.cy, r.ux, r.uy, r.half_l * k, r.half_w * k))
    return out


def shifted_rects(r: CardRect, step: float) -> list[CardRect]:
    """The rectangle moved `step` of its half-width across and along, each way."""
    right = (-r.uy, r.ux)
    out = []
    for du, dv in ((step, 0), (-step, 0), (0, step), (0, -step)):
        dx = (right[0] * du + r.ux * dv) * r.half_w
        dy = (right[1] * du + r.uy * dv) * r.half_w
        out.append(CardRect(r.cx + dx, r.cy + dy, r.ux, r.uy, r.half_l, r.half_w))
    return out


def same_card(r: CardRect, box: Sequence[float], other: CardRect, other_box: Sequence[float]) -> bool:
    """Whether two finds are one card: nearly the same rectangle or the same visible box (two peaks on a big
    card's flat heatmap, its visible part split by a hand, or one card found at two sizes)."""
    return (math.hypot(r.cx - other.cx, r.cy - other.cy) < 0.4 * min(r.half_w, other.half_w)
            or iou(box, other_box) > 0.6)


def same_card_place(named: CardRect, rect: CardRect) -> bool:
    """Whether a card named from its index and a card the detector found are surely the same card: closer than
    `same_place` asks, since the card on top of it in a cascade may lie little more than a third of a width off."""
    return math.hypot(named.cx - rect.cx, named.cy - rect.cy) < 0.25 * named.half_w


def same_place(named: CardRect, rect: CardRect) -> bool:
    """Whether a card named from its index (`named`) and a card the detector found (`rect`) are centred alike."""
    return math.hypot(named.cx - rect.cx, named.cy - rect.cy) < 0.6 * named.half_w


def explains(named: CardRect, rect: CardRect, box: Sequence[float]) -> bool:
    """Whether a card named from its index (`named`) is the card the detector found as `rect` / `box`:
    its centre near the found one, or the found visible box's centre on it."""
    if same_place(named, rect):
        return True
    bx, by = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    dx, dy = bx - named.cx, by - named.cy
    along = dx * named.ux + dy * named.uy
    across = -dx * named.uy + dy * named.ux
    return abs(along) < 0.8 * named.half_l and abs(across) < 0.8 * named.half_w


def centred_within(rect: CardRect, x: float, y: float, share: float = 1.0) -> bool:
    """Whether the point (x, y) lies within `share` of `rect`'s half-length along it and half-width across it."""
    dx, dy = x - rect.cx, y - rect.cy
    return abs(dx * rect.ux + dy * rect.uy) <= share * rect.half_l and \
        abs(dy * rect.ux - dx * rect.uy) <= share * rect.half_w


def on_box(r: CardRect, box: Sequence[float]) -> bool:
    """Whether the top-left index of `r` lies in `box` (x0, y0, x1, y1), give or take a tenth of it, or the
    centre of the card it implies does."""
    px, py = corner_point(r)
    mx, my = 0.1 * (box[2] - box[0]), 0.1 * (box[3] - box[1])
    return box[0] - mx <= px <= box[2] + mx and box[1] - my <= py <= box[3] + my or \
        box[0] <= r.cx <= box[2] and box[1] <= r.cy <= box[3]


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def index_among(r: CardRect, kept: Sequence[tuple[float, CardRect]], near: float) -> bool:
    """Whether the index at `r` is one of `kept`'s: their top-left index corners within `near` of the smaller
    half-width of each other."""
    (rx, ry) = r.top_left()
    return any(math.hypot(rx - k.top_left()[0], ry - k.top_left()[1]) < near * min(r.half_w, k.half_w) for _, k in kept)
