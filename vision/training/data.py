"""Training data for the card models: rendered scenes and the real photos' training split, as arrays.

No deep-learning framework here (numpy and OpenCV only), so the data can be built and checked anywhere.
Detector samples are (image, objects); `detector_targets` turns objects into the output maps. Classifier
samples are corner crops taken exactly as `vision.recognise.corner_crops` takes them at run time, from
rectangles jittered the way the detector errs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from controller.cards import Card, Suit
from vision import render
from vision.realdata import Photo
from vision.recognise import (BACK, BODY_H, BODY_NONE, BODY_W, CROP_H, CROP_W, DET_CHANNELS, I_HEAT, JOKER_CLASS,
                              LOCATOR_SIZE, NONE, SIGN_NONE, SIGN_SIZE, STRIDE, WIDE_H, WIDE_W, CardRect, body_crops,
                              corner_crops, corner_point, index_crops, locator_crops, rect_at_index, sign_crops,
                              wide_crops)

__all__ = ["DetObject", "rect_of_quad", "detector_scene", "detector_targets", "real_detector_sample",
           "classifier_scene", "classical_rect", "real_classifier_crops", "background_patches", "jitter_rect",
           "rank_class", "corner_point", "mirror_targets", "TARGET_CHANNELS", "body_scene", "locator_scene",
           "locator_label", "sign_scene"]


@dataclass
class DetObject:
    """One card for the detector: visible box, card rect (None: unknown, geometry loss off), ignore flag,
    and its index corners: `indices` those in sight (each as the virtual rect whose top-left index it is),
    `hidden_indices` those half covered (neither required nor punished). `indices` None: not known (real
    photos), so the index heatmap learns nothing from the image."""

    box: tuple[float, float, float, float]
    rect: CardRect | None
    ignore: bool = False
    indices: list[CardRect] | None = None
    hidden_indices: list[CardRect] = field(default_factory=list)


def rect_of_quad(quad: np.ndarray) -> CardRect:
    centre, up, half_l, half_w = render.quad_to_rect(quad)
    return CardRect(float(centre[0]), float(centre[1]), float(up[0]), float(up[1]), half_l, half_w)


def rank_class(card: Card | None) -> int:
    if card is None:
        return BACK
    return JOKER_CLASS if card.joker else card.rank - 2


def _suit_class(card: Card | None) -> int:
    """A card's suit class; -1 for a card back or the joker (no suit to learn)."""
    return -1 if card is None or card.suit is None else int(card.suit)


def background_patches(photos: Sequence[Photo], limit: int = 400) -> list[np.ndarray]:
    """Pieces of the training photos with no labelled card in them: real carpets, wood, clutter."""
    patches = []
    for p in photos:
        img = cv2.imread(str(p.path))
        if img is None:
            continue
        h, w = img.shape[:2]
        mask = np.zeros((h, w), bool)
        for c in p.cards:
            x0, y0, x1, y1 = c.box
            mask[max(0, y0 - 10):y1 + 10, max(0, x0 - 10):x1 + 10] = True
        # The card-free bands above, below, left and right of all the cards.
        rows = np.nonzero(mask.any(axis=1))[0]
        cols = np.nonzero(mask.any(axis=0))[0]
        bands = []
        if len(rows):
            bands += [img[:rows[0]], img[rows[-1] + 1:]]
        if len(cols):
            bands += [img[:, :cols[0]], img[:, cols[-1] + 1:]]
        for b in bands:
            if b.shape[0] >= 48 and b.shape[1] >= 48:
                patches.append(b.copy())
        if len(patches) >= limit:
            break
    return patches


def detector_scene(rng: np.random.Generator, size: int = 256, backgrounds: Sequence[np.ndarray] = (),
                   dealt: float = 0.0, fans: float = 0.0) -> tuple[np.ndarray, list[DetObject]]:
    """A rendered scene at twice `size`, shrunk like a camera frame is shrunk for the detector. With
    chance `dealt` the scene is a dealer's layout (`render.render_dealt`: cascades and rows on felt, the
    size cards have in a table camera's frame) instead of a random one; with chance `fans` (of the rest) hands of
    tightly fanned cards (`render.render_fans`)."""
    big = 2 * size
    aspect = rng.choice([1.0, 16 / 9, 4 / 3, 3 / 4])
    w, h = (big, int(big / aspect)) if aspect >= 1 else (int(big * aspect), big)
    # Drawn only when asked for, so that scenes without fans are the same draws as before.
    if fans > 0 and rng.random() < fans:
        scene = render.render_fans(rng, (w, h), backgrounds=backgrounds)
    elif rng.random() < dealt:
        scene = render.render_dealt(rng, (w, h), card_width=(0.05, 0.16), count=(1, 10), hand=0.2,
                                    backgrounds=backgrounds)
    else:
        scene = render.render_scene(rng, (w, h), card_width=(0.06, 0.42), backgrounds=backgrounds,
                                    hand=0.3, count=(0, 9))
    small = cv2.resize(scene.image, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    canvas = np.full((size, size, 3), 114, np.uint8)
    canvas[:small.shape[0], :small.shape[1]] = small
    objects = []
    for pc in scene.cards:
        if pc.visible <= 0:
            continue
        rect = rect_of_quad(pc.quad / 2)
        x0, y0, x1, y1 = pc.box
        box = (x0 / 2, y0 / 2, x1 / 2, y1 / 2)
        # Slivers and cards whose indices are both hidden are neither required nor punished.
        ignore = pc.visible < 0.12 or max(pc.index_visible) < 0.3 and pc.visible < 0.5
        seen: list[CardRect] = []
        half: list[CardRect] = []
        if pc.card is not None:  # a card back has no index
            for r, vis in zip((rect, rect.flipped()), pc.index_visible):
                (seen if vis >= 0.8 else half if vis >= 0.3 else []).append(r)
        objects.append(DetObject(box, rect, ignore, seen, half))
    return canvas, objects


def real_detector_sample(rng: np.random.Generator, image: np.ndarray, photo: Photo,
                         rects: Sequence[CardRect | None], size: int = 256) -> tuple[np.ndarray, list[DetObject]]:
    """A real training photo scaled, flipped, tinted and placed on the detector's square input."""
    h, w = image.shape[:2]
    s = size * rng.uniform(0.7, 1.3) / max(h, w)
    img = cv2.resize(image, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)
    flip = rng.random() < 0.5
    if flip:
        img = img[:, ::-1]
    ih, iw = img.shape[:2]
    ox = int(rng.integers(min(0, size - iw), max(0, size - iw) + 1))
    oy = int(rng.integers(min(0, size - ih), max(0, size - ih) + 1))
    canvas = np.full((size, size, 3), 114, np.uint8)
    sx0, sy0 = max(0, -ox), max(0, -oy)
    dx0, dy0 = max(0, ox), max(0, oy)
    cw, ch = min(iw - sx0, size - dx0), min(ih - sy0, size - dy0)
    canvas[dy0:dy0 + ch, dx0:dx0 + cw] = img[sy0:sy0 + ch, sx0:sx0 + cw]
    canvas = _tint(rng, canvas)

    def tx(x: float) -> float:
        return ((w - x) if flip else x) * s + ox

    objects = []
    for card, rect in zip(photo.cards, rects):
        x0, y0, x1, y1 = card.box
        bx0, bx1 = sorted((tx(x0), tx(x1)))
        box = (bx0, y0 * s + oy, bx1, y1 * s + oy)
        r = None
        if rect is not None:
            ux = -rect.ux if flip else rect.ux
            r = CardRect(tx(rect.cx), rect.cy * s + oy, ux, rect.uy, rect.half_l * s, rect.half_w * s)
        objects.append(DetObject(box, r))
    return canvas, objects


def _tint(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    f: np.ndarray = img.astype(np.float32) * rng.uniform(0.7, 1.25) + rng.uniform(-20, 20)
    f *= 1 + rng.uniform(-0.08, 0.08, 3).astype(np.float32)
    if rng.random() < 0.3:
        f = cv2.GaussianBlur(f, (0, 0), rng.uniform(0.3, 1.2))
    f += rng.normal(0, rng.uniform(0, 6), f.shape).astype(np.float32)
    return np.clip(f, 0, 255).astype(np.uint8)


TARGET_CHANNELS = DET_CHANNELS + 5


def detector_targets(objects: Sequence[DetObject], size: tuple[int, int]) -> np.ndarray:
    """Output-map targets (TARGET_CHANNELS, h/STRIDE, w/STRIDE): the DET_CHANNELS maps, then five masks:
    where the card heatmap counts (0 around ignored cards), where box and card geometry are known (1 at
    centres), where the index heatmap counts (0 around half-covered indices, and everywhere when the
    indices are unknown) and where index geometry is known."""
    H, W = size[1] // STRIDE, size[0] // STRIDE
    t = np.zeros((TARGET_CHANNELS, H, W), np.float32)
    t[DET_CHANNELS] = 1.0  # heatmap weight
    t[DET_CHANNELS + 3] = 0.0 if any(ob.indices is None for ob in objects) else 1.0
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    for ob in objects:
        for r in ob.hidden_indices:
            px, py = corner_point(r)
            ix, iy = int(px / STRIDE), int(py / STRIDE)
            t[DET_CHANNELS + 3, max(0, iy - 1):iy + 2, max(0, ix - 1):ix + 2] = 0.0
        for r in ob.indices or ():
            px, py = corner_point(r)
            ix, iy = int(px / STRIDE), int(py / STRIDE)
            if not (0 <= ix < W and 0 <= iy < H):
                continue
            # The index is about a third of the card's width across.
            sigma = max(0.6, r.half_w * 0.6 / STRIDE / 3)
            g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma * sigma))
            t[I_HEAT] = np.maximum(t[I_HEAT], g)
            t[I_HEAT, iy, ix] = 1.0
            ys, xs = slice(max(0, iy - 1), min(H, iy + 2)), slice(max(0, ix - 1), min(W, ix + 2))
            # Regressed from the 3x3 around the peak, offsets from each cell's own corner.
            t[I_HEAT + 1, ys, xs] = px / STRIDE - xx[ys, xs]
            t[I_HEAT + 2, ys, xs] = py / STRIDE - yy[ys, xs]
            t[I_HEAT + 3, ys, xs] = r.ux
            t[I_HEAT + 4, ys, xs] = r.uy
            t[I_HEAT + 5, ys, xs] = math.log(max(r.half_w, 1) / STRIDE)
            t[DET_CHANNELS + 4, ys, xs] = 1.0
    for ob in objects:
        x0, y0, x1, y1 = ob.box
        vx, vy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
        vw, vh = max(x1 - x0, 1.0) / STRIDE, max(y1 - y0, 1.0) / STRIDE
        if ob.ignore:
            t[DET_CHANNELS, max(0, int(y0 / STRIDE)):int(math.ceil(y1 / STRIDE)) + 1,
              max(0, int(x0 / STRIDE)):int(math.ceil(x1 / STRIDE)) + 1] = 0
            continue
        ix, iy = int(vx), int(vy)
        if not (0 <= ix < W and 0 <= iy < H):
            continue
        sigma = max(0.7, min(vw, vh) / 6)
        g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma * sigma))
        t[0] = np.maximum(t[0], g)
        t[0, iy, ix] = 1.0
        t[1:5, iy, ix] = (vx - ix, vy - iy, math.log(vw), math.log(vh))
        t[DET_CHANNELS + 1, iy, ix] = 1.0  # box regression counts here
        if ob.rect is not None:
            r = ob.rect
            theta2 = 2 * math.atan2(r.uy, r.ux)
            # Geometry is the same seen from any cell near the centre: supervise the 3x3 around it, so a
            # peak one cell off still knows the card (and the head gets nine times the examples).
            ys, xs = slice(max(0, iy - 1), min(H, iy + 2)), slice(max(0, ix - 1), min(W, ix + 2))
            geo = ((r.cx / STRIDE - vx) / 4, (r.cy / STRIDE - vy) / 4, math.cos(theta2), math.sin(theta2),
                   math.log(max(r.half_l, 1) / STRIDE), math.log(max(r.half_w, 1) / STRIDE))
            for ch, v in enumerate(geo):
                t[5 + ch, ys, xs] = v
            t[DET_CHANNELS + 2, ys, xs] = 1.0
    return t


def mirror_targets(t: np.ndarray) -> np.ndarray:
    """Targets of a mirrored image: x offsets change sign around the cell, angles mirror."""
    m = t[:, :, ::-1].copy()
    centres = m[DET_CHANNELS + 1] > 0
    # A centre at cell x with offset o (position x + o) moves to W - x - o = (W - 1 - x) + (1 - o).
    m[1][centres] = 1 - m[1][centres]
    geo = m[DET_CHANNELS + 2] > 0
    m[5][geo] = -m[5][geo]
    m[8][geo] = -m[8][geo]  # sin(2 theta) flips; cos(2 theta) stays
    idx = m[DET_CHANNELS + 4] > 0
    # Index offsets are from each cell's corner: x + o becomes W - x - o = (W - 1 - x) + (1 - o).
    m[I_HEAT + 1][idx] = 1 - m[I_HEAT + 1][idx]
    m[I_HEAT + 3][idx] = -m[I_HEAT + 3][idx]
    return m


def jitter_rect(rng: np.random.Generator, r: CardRect, amount: float = 1.0) -> CardRect:
    """The rect as the detector might see it: a little off in place, turn, size and aspect."""
    a = math.atan2(r.uy, r.ux) + rng.normal(0, math.radians(6.0)) * amount
    s = math.exp(rng.normal(0, 0.08) * amount)
    asp = math.exp(rng.normal(0, 0.05) * amount)
    dx, dy = rng.normal(0, 0.08 * r.half_w, 2) * amount
    return CardRect(r.cx + dx, r.cy + dy, math.cos(a), math.sin(a), r.half_l * s * asp, r.half_w * s / asp)


def classifier_scene(rng: np.random.Generator, backgrounds: Sequence[np.ndarray] = (), detect=None,
                     dealt: float = 0.0, wide: bool = False, fans: float = 0.0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Corner crops from one rendered scene: (crops, rank classes, suit classes or -1). With `detect` (a
    `Recogniser.detect_all`), also the corners of the rectangles the detector finds and the index corners
    it finds, labelled from the card whose corner they land on: the classifier learns the detector's real
    errors. With chance `fans` the scene is hands of tightly fanned cards at a table camera's 1280x720
    (`render.render_fans`: each covered card's index strip in sight, its neighbour's edge beside it), else with
    chance `dealt` a dealer's layout at a table camera's scale. With `wide`, the crops are the wide reader's
    (`wide_crops`: each index and the strip beside it), labelled the same."""
    # Drawn only when asked for, so that scenes without fans are the same draws as before.
    if fans > 0 and rng.random() < fans:
        w, h = 1280, 720
        scene = render.render_fans(rng, (w, h), backgrounds=backgrounds)
    elif rng.random() < dealt:
        w, h = 1280, 720
        scene = render.render_dealt(rng, (w, h), card_width=(0.05, 0.13), count=(1, 10), hand=0.2,
                                    face_down=0.08, backgrounds=backgrounds)
    else:
        w, h = [(640, 384), (512, 512), (384, 512), (800, 450)][int(rng.integers(4))]
        scene = render.render_scene(rng, (w, h), card_width=(0.08, 0.4), backgrounds=backgrounds, hand=0.35,
                                    count=(1, 8), face_down=0.08)
    rects, ranks, suits = [], [], []
    for pc in scene.cards:
        if pc.visible < 0.05:
            continue
        rect = jitter_rect(rng, rect_of_quad(pc.quad))
        for j, vis in enumerate(pc.index_visible):
            r = rect if j == 0 else rect.flipped()
            if pc.card is None:
                label = BACK if vis > 0.7 else (NONE if vis < 0.3 else -1)
            else:
                label = rank_class(pc.card) if vis > 0.8 else (NONE if vis < 0.3 else -1)
            if label == NONE and rng.random() < 0.6:  # covered corners are plentiful; keep some
                continue
            if label < 0:
                continue
            rects.append(r)
            ranks.append(label)
            suits.append(_suit_class(pc.card) if label < BACK else -1)
    if detect is not None:
        truths = [(pc, rect_of_quad(pc.quad)) for pc in scene.cards if pc.visible >= 0.05]
        found, indices = detect(scene.image)
        # Both corners of each card found; an index corner found is read from its own rect only.
        corners = [c for _, _, pred in found for c in (pred, pred.flipped())] + [r for _, r in indices or ()]
        for r in corners:
            labelled = _label_corner(r, truths)
            if labelled is None:
                continue
            rects.append(r)
            ranks.append(labelled[0])
            suits.append(labelled[1])
    # Some crops of nothing in particular (background, hands, card middles) teach "none".
    for _ in range(int(rng.integers(0, 2))):
        rects.append(_anywhere(rng, w, h, (0.04, 0.2)))
        ranks.append(NONE)
        suits.append(-1)
    labels = np.array(ranks, np.int64), np.array(suits, np.int64)
    if wide:
        return (wide_crops(scene.image, rects) if rects else np.zeros((0, WIDE_H, WIDE_W, 3), np.uint8)), *labels
    return (index_crops(scene.image, rects) if rects else np.zeros((0, CROP_H, CROP_W, 3), np.uint8)), *labels


def _reader_scene(rng: np.random.Generator, backgrounds: Sequence[np.ndarray], dealt: float
                  ) -> tuple[render.Scene, int, int]:
    """A scene for the body reader or the locator, and its size: with chance `dealt` a dealer's layout at a table
    camera's 1280x720 and scale, else cards anywhere in a smaller frame, nearer."""
    if rng.random() < dealt:
        w, h = 1280, 720
        scene = render.render_dealt(rng, (w, h), card_width=(0.05, 0.13), count=(1, 10), hand=0.2,
                                    face_down=0.08, backgrounds=backgrounds)
    else:
        w, h = [(640, 384), (512, 512), (800, 450)][int(rng.integers(3))]
        scene = render.render_scene(rng, (w, h), card_width=(0.08, 0.3), backgrounds=backgrounds, hand=0.3,
                                    count=(1, 8), face_down=0.08)
    return scene, w, h


def body_scene(rng: np.random.Generator, backgrounds: Sequence[np.ndarray] = (), dealt: float = 0.8
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whole-card crops from one rendered scene for the body reader: (crops, rank classes, suit classes or -1).
    A card in full sight is labelled with its rank and suit; a card mostly covered, face down, or a
    rectangle of felt, chips or a hand, "none" (BODY_NONE). Rectangles are jittered the way the detector and
    the index corners err, and turned half round at random (the reader must not care which end is up)."""
    scene, w, h = _reader_scene(rng, backgrounds, dealt)
    rects, ranks, suits = [], [], []
    for pc in scene.cards:
        if pc.card is not None and pc.card.joker:
            continue
        if pc.card is not None and pc.visible >= 0.93:
            label = pc.card.rank - 2
        elif pc.card is None or pc.visible < 0.75:
            label = BODY_NONE
        else:
            continue  # nearly whole: neither
        rect = jitter_rect(rng, rect_of_quad(pc.quad), float(rng.uniform(0.5, 1.5)))
        rects.append(rect.flipped() if rng.random() < 0.5 else rect)
        ranks.append(label)
        suits.append(_suit_class(pc.card) if label != BODY_NONE else -1)
    for _ in range(int(rng.integers(0, 2))):  # a rectangle anywhere: mostly felt, or parts of cards
        rects.append(_anywhere(rng, w, h, (0.03, 0.08)))
        ranks.append(BODY_NONE)
        suits.append(-1)
    crops = body_crops(scene.image, rects) if rects else np.zeros((0, BODY_H, BODY_W, 3), np.uint8)
    return crops, np.array(ranks, np.int64), np.array(suits, np.int64)


_BLACK_COURTS = [c for c in render.ALL_CARDS if not c.joker and c.rank in (11, 12, 13)
                 and c.suit in (Suit.CLUBS, Suit.SPADES)]


def sign_scene(rng: np.random.Generator, backgrounds: Sequence[np.ndarray] = ()
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops about a black court card's two picture signs, for the sign reader: (crops, classes, card widths).
    One card 64 to 166 pixels wide (a 1280-wide table camera's cards) in a close square of felt
    (`render.render_close`: cards beneath and over it, a hand), each sign cut twice from the card's rect jittered a
    little and a little more (as the locator leaves an index). Class 0 a club, 1 a spade where the sign is in full
    sight, SIGN_NONE where it is mostly covered; a sign half covered is not cut (too near to call)."""
    card = _BLACK_COURTS[int(rng.integers(len(_BLACK_COURTS)))]
    width = float(rng.uniform(0.05, 0.13)) * 1280
    scene, pc, seen = render.render_close(rng, card, width, (render.PICTURE_SIGN, render.turned(render.PICTURE_SIGN)),
                                          backgrounds=backgrounds)
    true = rect_of_quad(pc.quad)
    rects, classes = [], []
    for j, v in enumerate(seen):
        if 0.5 <= v < 0.95:
            continue
        for amount in (0.3, 0.6):
            r = jitter_rect(rng, true, amount)
            rects.append(r if j == 0 else r.flipped())
            classes.append(SIGN_NONE if v < 0.5 else int(card.suit == Suit.SPADES))
    crops = sign_crops(scene.image, rects) if rects else np.zeros((0, SIGN_SIZE, SIGN_SIZE, 3), np.uint8)
    return crops, np.array(classes, np.int64), np.full(len(rects), width, np.float32)


def locator_label(r: CardRect, truths: Sequence[tuple[render.PlacedCard, CardRect]]) -> tuple[float, ...] | None:
    """What the locator should answer for the square around `r`'s top-left index: (1, dx, dy, c, s) for the
    index of a face-up card in sight nearest its middle (within 0.8 of a half-width: where it is, right and down
    in half-widths along `r`'s axes, and the cosine and sine of its turn from `r`'s up towards `r`'s right), or
    (0, 0, 0, 0, 0) when none is; None when the nearest is half covered (too near to call)."""
    px, py = corner_point(r)
    best = None
    for pc, t in truths:
        if pc.card is None:
            continue
        for tr, vis in zip((t, t.flipped()), pc.index_visible):
            qx, qy = corner_point(tr)
            d = math.hypot(qx - px, qy - py) / max(r.half_w, 1.0)
            if vis >= 0.3 and (best is None or d < best[0]):
                best = (d, tr, qx, qy, vis)
    if best is None or best[0] > 0.8:
        return (0.0, 0.0, 0.0, 0.0, 0.0)
    _, tr, qx, qy, vis = best
    if vis < 0.8:
        return None
    right = (-r.uy, r.ux)
    dx = ((qx - px) * right[0] + (qy - py) * right[1]) / r.half_w
    dy = -((qx - px) * r.ux + (qy - py) * r.uy) / r.half_w
    return (1.0, dx, dy, tr.ux * r.ux + tr.uy * r.uy, tr.ux * right[0] + tr.uy * right[1])


def locator_scene(rng: np.random.Generator, backgrounds: Sequence[np.ndarray] = (), detect=None, dealt: float = 0.85
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Locator crops from one rendered scene: (crops, labels (n, 5) as `locator_label` gives them). The squares lie
    where the locator will look: around each index the detector (`detect`, a `Recogniser.detect_all` that does not
    locate) finds and at both index corners of each card it finds; and around each index in sight moved and turned
    the way the detector errs (a fifth of a half-width; some turned any way), and anywhere (felt, card middles)."""
    scene, w, h = _reader_scene(rng, backgrounds, dealt)
    truths = [(pc, rect_of_quad(pc.quad)) for pc in scene.cards if pc.visible >= 0.05]
    rects: list[CardRect] = []
    if detect is not None:
        found, indices = detect(scene.image)
        rects += [r for _, r in indices or ()] + [c for _, _, r in found for c in (r, r.flipped())]
    for pc, t in truths:
        if pc.card is None:
            continue
        for tr, vis in zip((t, t.flipped()), pc.index_visible):
            if vis < 0.8:
                continue
            px, py = corner_point(tr)
            for _ in range(2):
                hw = tr.half_w * math.exp(rng.normal(0, 0.08))
                a = math.atan2(tr.uy, tr.ux) + (rng.uniform(-math.pi, math.pi) if rng.random() < 0.3 else
                                                rng.normal(0, math.radians(15)))
                rects.append(rect_at_index(px + rng.normal(0, 0.2 * hw), py + rng.normal(0, 0.2 * hw), math.cos(a),
                                           math.sin(a), hw))
    for _ in range(3):
        a = rng.uniform(-math.pi, math.pi)
        rects.append(rect_at_index(rng.uniform(0, w), rng.uniform(0, h), math.cos(a), math.sin(a),
                                   rng.uniform(0.025, 0.065) * max(w, h)))
    labels = [locator_label(r, truths) for r in rects]
    keep = [k for k, lab in enumerate(labels) if lab is not None]
    if not keep:
        return np.zeros((0, LOCATOR_SIZE, LOCATOR_SIZE, 3), np.uint8), np.zeros((0, 5), np.float32)
    return locator_crops(scene.image, [rects[k] for k in keep]), np.array([labels[k] for k in keep], np.float32)


def _anywhere(rng: np.random.Generator, w: float, h: float, width: tuple[float, float]) -> CardRect:
    """A card-shaped rectangle anywhere in a w x h scene, turned any way, `width` (fractions of the longer side)
    wide: what "none" looks like."""
    hw = rng.uniform(*width) * max(w, h)
    a = rng.uniform(-math.pi, math.pi)
    return CardRect(rng.uniform(0, w), rng.uniform(0, h), math.cos(a), math.sin(a), hw * 1.4, hw)


def _label_corner(r: CardRect, truths: Sequence[tuple[render.PlacedCard, CardRect]]) -> tuple[int, int] | None:
    """(rank class, suit or -1) for the crop at the top-left corner of `r`, from the card index it lands on
    (None when it is too near to call): an index seen upright is that card, a card back is BACK, anything
    else (off the index, covered, upside down) is NONE."""
    px, py = corner_point(r)
    best, dist = None, 1e9
    for pc, t in truths:
        for j, tr in enumerate((t, t.flipped())):
            qx, qy = corner_point(tr)
            d = math.hypot(px - qx, py - qy) / max(t.half_w, 1.0)
            if d < dist:
                best, dist = (pc, tr, j), d
    if best is None:
        return NONE, -1
    pc, tr, j = best
    vis = pc.index_visible[j]
    upright = r.ux * tr.ux + r.uy * tr.uy
    if dist > 0.6 or vis < 0.3 or upright < 0.3:
        return NONE, -1
    if dist >= 0.25 or vis <= 0.8 or upright < 0.95:
        return None
    if pc.card is None:
        return BACK, -1
    label = rank_class(pc.card)
    return label, _suit_class(pc.card)  # the joker's: -1


def classical_rect(image: np.ndarray, box: Sequence[int]) -> CardRect | None:
    """The card's rectangle inside a labelled box, found the classical way (a bright paper-white region
    filling the box); None unless it agrees with the box. Used only to label real training photos."""
    x0, y0, x1, y1 = box
    h, w = image.shape[:2]
    mx, my = int((x1 - x0) * 0.08) + 2, int((y1 - y0) * 0.08) + 2
    X0, Y0, X1, Y1 = max(0, x0 - mx), max(0, y0 - my), min(w, x1 + mx), min(h, y1 + my)
    roi = image[Y0:Y1, X0:X1]
    if roi.size == 0:
        return None
    hsv = cv2.cvtColor(roi, cv2.COLOR_BGR2HSV)
    # Paper: bright (Otsu on brightness) and unsaturated; closing fills the ink.
    _, bright = cv2.threshold(hsv[..., 2], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    paper = cv2.bitwise_and(bright, (hsv[..., 1] < 150).astype(np.uint8) * 255)
    k = max(3, int(min(x1 - x0, y1 - y0) * 0.12)) | 1
    paper = cv2.morphologyEx(paper, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    contours, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    c = max(contours, key=cv2.contourArea)
    (cx, cy), (rw, rh), ang = cv2.minAreaRect(c)
    if min(rw, rh) < 8:
        return None
    if not 0.6 <= min(rw, rh) / max(rw, rh) <= 0.82:
        return None
    bx, by, bw, bh = cv2.boundingRect(c)
    # The found card must match the human's box.
    bb = (bx + X0, by + Y0, bx + X0 + bw, by + Y0 + bh)
    inter = max(0, min(bb[2], x1) - max(bb[0], x0)) * max(0, min(bb[3], y1) - max(bb[1], y0))
    union = (bb[2] - bb[0]) * (bb[3] - bb[1]) + (x1 - x0) * (y1 - y0) - inter
    if inter / union < 0.8:
        return None
    a = math.radians(ang)
    # minAreaRect's width runs along angle `ang`; the card's long axis is the longer side.
    if rw >= rh:
        ux, uy = math.cos(a), math.sin(a)
    else:
        ux, uy = -math.sin(a), math.cos(a)
    return CardRect(cx + X0, cy + Y0, ux, uy, max(rw, rh) / 2, min(rw, rh) / 2)


def real_classifier_crops(rng: np.random.Generator, image: np.ndarray, rect: CardRect, rank: int,
                          copies: int, others: Sequence[Sequence[int]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Jittered corner crops of one real card, `copies` per corner; the suit is not labelled. A corner
    inside another labelled card's box may be covered by it, so it is left out."""
    rects = []
    for r in (rect, rect.flipped()):
        px, py = corner_point(r)
        if any(b[0] < px < b[2] and b[1] < py < b[3] for b in others):
            continue
        rects += [jitter_rect(rng, r) for _ in range(copies)]
    if not rects:
        return np.zeros((0, CROP_H, CROP_W, 3), np.uint8), np.zeros(0, np.int64)
    crops = corner_crops(image, rects)[0::2]
    return crops, np.full(len(crops), rank - 2, np.int64)
