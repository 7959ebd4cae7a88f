"""Synthetic renderer: card faces of all 52 identities, the joker and backs, composed onto tables with ground truth.

Everything random comes in as a `numpy.random.Generator` (callers derive it from `controller.rng`), so a
seed renders the same pixels every time. Six uses:

- `card_face(card, style)`: one canonical upright card (BGRA, `CARD_W` x `CARD_H`), indices at top-left
  and bottom-right, pips or a picture in the middle;
- `render_scene(rng, ...)`: a random scene for training and for the synthetic test set: cards (spread,
  overlapping in fans, face down), chips, a hand, on felt or a busy background, under perspective, blur,
  glare, noise and JPEG loss, with each card's quad, visible box and index visibility;
- `render_dealt(rng, ...)`: a table camera's frame of cards as a dealer lays them out (cascades, rows,
  single cards at separate places on felt): the seeded synthetic test set;
- `render_fans(rng, ...)`: hands of 6-13 cards fanned tightly (bridge hands: each card shows its index strip only),
  for training the detector and the index readers, and the tight-fans development set;
- `render_close(rng, card, width, regions)`: one card close up on felt, maybe partly covered, with how much of
  given regions of it shows (the sign reader's training squares);
- `render_table(layout, rng, ...)`: what the simulated camera over a table sees: the felt with its zones
  and ArUco calibration markers, the cards at table positions, optional hand and noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from controller.cards import Card, JOKER, deck
# The faces are drawn in vision/faces.py; their names are the renderer's too.
from vision.faces import (CARD_H, CARD_W, DEFAULT_STYLE, CardStyle, card_back, card_face, random_style, suit_mask,
                          use_extra_styles)

__all__ = [
    "CARD_W", "CARD_H", "CARD_MM", "INDEX_REGION", "CardStyle", "random_style", "DEFAULT_STYLE",
    "card_face", "card_back", "suit_mask", "PlacedCard", "Scene", "render_scene", "render_dealt", "render_fans",
    "quad_to_rect",
    "TableCard", "render_table", "ALL_CARDS", "aruco_dictionary", "MARKER_IDS", "PICTURE_SIGN", "render_close",
    "region_visible", "turned", "use_extra_styles",
]

CARD_MM = (63.0, 88.0)
# The corner the classifier reads, as fractions of the upright card: (x0, y0, x1, y1). 2:3 like its input.
INDEX_REGION = (0.0, 0.0, 0.30, 0.32)
ALL_CARDS: tuple[Card, ...] = deck() + (JOKER,)
# Where a court card's picture shows its suit sign (top half; the bottom half is the top turned half round), as
# fractions of the upright card: `faces._picture`'s frame from (0.2, 0.1) of the card, 120 x 224 canonical pixels, the sign
# 24 pixels across at (0.7, 0.05) of it. Real court cards have theirs there too, beside the figure's head.
PICTURE_SIGN = (0.62, 0.139, 0.74, 0.225)
# ArUco markers at the table's four corners (ids 0..3 clockwise from top-left) for calibration.
MARKER_IDS = (0, 1, 2, 3)


def aruco_dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)


# ----------------------------------------------------------------------------------------------- scenes

@dataclass
class PlacedCard:
    """Ground truth of one card in a rendered image.

    `quad` holds the corners of the upright card in image pixels: top-left, top-right, bottom-right,
    bottom-left. `visible` is the fraction of the card not covered; `index_visible` the visible fraction of
    the top-left and bottom-right index regions; `box` the bounding box of its visible pixels.
    """

    card: Card | None  # None: face down
    quad: np.ndarray
    visible: float = 1.0
    index_visible: tuple[float, float] = (1.0, 1.0)
    box: tuple[int, int, int, int] = (0, 0, 0, 0)


@dataclass
class Scene:
    """A rendered image (BGR uint8) and the cards in it, bottom-most first."""

    image: np.ndarray
    cards: list[PlacedCard] = field(default_factory=list)


def quad_to_rect(quad: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """A card quad as a rectangle: centre, unit vector towards the card's top, half-length and half-width."""
    q = np.asarray(quad, np.float64)
    centre = q.mean(axis=0)
    up = ((q[0] - q[3]) + (q[1] - q[2])) / 2
    half_l = float(np.linalg.norm(up)) / 2
    half_w = float(np.linalg.norm((q[1] - q[0]) + (q[2] - q[3]))) / 4
    return centre, up / max(np.linalg.norm(up), 1e-9), half_l, half_w


def _background(rng: np.random.Generator, w: int, h: int, busy: float,
                photos: Sequence[np.ndarray] = ()) -> np.ndarray:
    """Felt, wood, cloth or clutter: a procedural texture, or a crop of a supplied background photo."""
    if photos and rng.random() < 0.35:
        src = photos[int(rng.integers(len(photos)))]
        sh, sw = src.shape[:2]
        s = max(w / sw, h / sh) * rng.uniform(1.0, 2.0)
        big = cv2.resize(src, (int(sw * s) + 1, int(sh * s) + 1))
        x, y = int(rng.integers(0, big.shape[1] - w + 1)), int(rng.integers(0, big.shape[0] - h + 1))
        img: np.ndarray = big[y:y + h, x:x + w].copy()
        if rng.random() < 0.5:
            img = img[:, ::-1].copy()
        return img
    kind = rng.random()
    if kind < 1 - busy:  # felt
        base = np.array([(40, 110, 30), (35, 90, 25), (110, 60, 20), (30, 30, 120), (60, 60, 60), (30, 60, 90)]
                        [int(rng.integers(6))], np.float32) * rng.uniform(0.6, 1.4)
        img = np.empty((h, w, 3), np.float32)
        img[:] = base
        img += rng.normal(0, rng.uniform(2, 10), (h, w, 1)).astype(np.float32)
    elif kind < 1 - busy * 0.5:  # wood grain
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, math.pi)
        u = xx * math.cos(a) + yy * math.sin(a)
        v = -xx * math.sin(a) + yy * math.cos(a)
        f = rng.uniform(0.05, 0.4)
        grain = np.sin(u * f + 3 * np.sin(v * rng.uniform(0.005, 0.03)) + rng.normal(0, 0.3, (h, w)))
        base = np.array([30, 70, 120], np.float32) * rng.uniform(0.4, 1.5)
        img = base * (1 + 0.25 * grain[..., None]).astype(np.float32)
    else:  # carpet / cloth / clutter: multi-scale coloured noise and shapes
        img = np.zeros((h, w, 3), np.float32)
        for scale in (2, 8, 32):
            n = rng.normal(0, 1, (h // scale + 2, w // scale + 2, 3)).astype(np.float32)
            img += cv2.resize(n, (w, h), interpolation=cv2.INTER_CUBIC) * rng.uniform(5, 35)
        img += rng.uniform(40, 200, 3).astype(np.float32)
        for _ in range(int(rng.integers(0, 12))):
            colour = tuple(float(v) for v in rng.uniform(0, 255, 3))
            p = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            if rng.random() < 0.5:
                cv2.rectangle(img, p, (p[0] + int(rng.integers(5, w // 3 + 6)), p[1] + int(rng.integers(5, h // 3 + 6))),
                              colour, -1)
            else:
                cv2.circle(img, p, int(rng.integers(3, max(4, h // 5))), colour, -1)
    return np.clip(img, 0, 255).astype(np.uint8)


def _card_quad(rng: np.random.Generator, centre: tuple[float, float], width: float, angle: float,
               tilt: float) -> np.ndarray:
    """The four corners of an upright card of `width` pixels, turned by `angle`, with a little perspective."""
    hw, hl = width / 2, width / 2 * CARD_H / CARD_W
    pts = np.array([[-hw, -hl], [hw, -hl], [hw, hl], [-hw, hl]], np.float64)
    if tilt > 0:  # keystone: one side a little shorter than the other
        k = rng.uniform(-tilt, tilt)
        k2 = rng.uniform(-tilt, tilt)
        pts[:, 0] *= 1 + k * pts[:, 1] / hl
        pts[:, 1] *= 1 + k2 * pts[:, 0] / hw
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    return pts @ rot.T + np.array(centre)


def _composite(img: np.ndarray, idmap: np.ndarray, rgba: np.ndarray, quad: np.ndarray, ident: int,
               shade: float) -> None:
    """Warp a BGRA card image onto `img` at `quad`; mark its covered pixels in `idmap` with `ident`."""
    h, w = rgba.shape[:2]
    H, W = img.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
    if x0 >= x1 or y0 >= y1:
        return
    M = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    warped = cv2.warpPerspective(rgba, M, (x1 - x0, y1 - y0), flags=cv2.INTER_AREA if
                                 (x1 - x0) < w * 0.6 else cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    a = warped[..., 3:].astype(np.float32) / 255
    region = img[y0:y1, x0:x1].astype(np.float32)
    img[y0:y1, x0:x1] = (region * (1 - a) + warped[..., :3].astype(np.float32) * shade * a).clip(0, 255)
    idmap[y0:y1, x0:x1][a[..., 0] > 0.5] = ident


def _hand(img: np.ndarray, idmap: np.ndarray, rng: np.random.Generator, centre: tuple[float, float],
          size: float) -> None:
    """A dealer's hand (palm and fingers in a skin tone, or a sleeve), covering what is below it."""
    H, W = img.shape[:2]
    mask = np.zeros((H, W), np.uint8)
    cx, cy = centre
    a = rng.uniform(0, 2 * math.pi)
    cv2.ellipse(mask, (int(cx), int(cy)), (int(size * 0.5), int(size * 0.4)), math.degrees(a), 0, 360, 255, -1)
    for k in range(5):
        fa = a + (k - 2) * 0.35 + rng.normal(0, 0.05)
        length = size * rng.uniform(0.5, 0.9)
        p0 = (int(cx + math.cos(fa) * size * 0.3), int(cy + math.sin(fa) * size * 0.3))
        p1 = (int(cx + math.cos(fa) * (size * 0.3 + length)), int(cy + math.sin(fa) * (size * 0.3 + length)))
        cv2.line(mask, p0, p1, 255, max(2, int(size * 0.13)))
    # An arm reaching in from outside the image, away from the fingers.
    far = (int(cx - math.cos(a) * size * 4), int(cy - math.sin(a) * size * 4))
    cv2.line(mask, (int(cx), int(cy)), far, 255, max(3, int(size * 0.7)))
    skin = np.array([(120, 150, 200), (90, 120, 170), (60, 80, 120), (150, 175, 220), (50, 50, 60)]
                    [int(rng.integers(5))], np.float32) * rng.uniform(0.8, 1.15)
    m = cv2.GaussianBlur(mask, (0, 0), max(1.0, size * 0.03)).astype(np.float32)[..., None] / 255
    shade = np.linspace(0.8, 1.1, W, dtype=np.float32)[None, :, None]
    img[:] = (img * (1 - m) + skin * shade * m).clip(0, 255).astype(np.uint8)
    idmap[mask > 127] = -2


def _chips(img: np.ndarray, idmap: np.ndarray, rng: np.random.Generator, count: int, size: float) -> None:
    H, W = img.shape[:2]
    for _ in range(count):
        c = (int(rng.integers(0, W)), int(rng.integers(0, H)))
        r = int(size * rng.uniform(0.15, 0.3))
        colour = [(30, 30, 200), (200, 80, 30), (30, 30, 30), (40, 160, 40), (220, 220, 220)][int(rng.integers(5))]
        cv2.circle(img, c, r, colour, -1, cv2.LINE_AA)
        for k in range(6):
            a = k * math.pi / 3
            cv2.line(img, (int(c[0] + math.cos(a) * r * 0.7), int(c[1] + math.sin(a) * r * 0.7)),
                     (int(c[0] + math.cos(a) * r), int(c[1] + math.sin(a) * r)), (240, 240, 240), max(1, r // 5))
        cv2.circle(idmap, c, r, -3, -1)


def _sample_points(quad: np.ndarray, region: tuple[float, float, float, float], n: int = 6) -> np.ndarray:
    """`n` x `n` points over a region of the card (fractions of the upright card) in image pixels."""
    u = np.linspace(region[0], region[2], n)
    v = np.linspace(region[1], region[3], n)
    uu, vv = np.meshgrid(u, v)
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    M = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    pts = np.stack([uu.ravel(), vv.ravel()], 1).astype(np.float32)[None]
    return cv2.perspectiveTransform(pts, M)[0]


def turned(region: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """`region` (fractions of the upright card) on the card turned half round: where the other end holds it."""
    return (1 - region[2], 1 - region[3], 1 - region[0], 1 - region[1])


def _visibility(placed: list[PlacedCard], idmap: np.ndarray) -> None:
    r = INDEX_REGION
    # The index proper sits inside the classifier's region; judge visibility on that inner part.
    inner = (0.03, 0.03, r[2] - 0.04, r[3] - 0.03)
    for i, pc in enumerate(placed):
        area = cv2.contourArea(pc.quad.astype(np.float32))
        mask = idmap == i
        count = int(mask.sum())
        pc.visible = min(1.0, count / max(area, 1.0))
        if count:
            ys, xs = np.nonzero(mask)
            pc.box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        pc.index_visible = (region_visible(pc.quad, idmap, i, inner), region_visible(pc.quad, idmap, i, turned(inner)))


def _finish(img: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Camera effects: light gradient, glare, blur, noise, JPEG loss."""
    H, W = img.shape[:2]
    f: np.ndarray = img.astype(np.float32)
    if rng.random() < 0.7 * strength:  # uneven light
        gx, gy = rng.uniform(-0.35, 0.35, 2) * strength
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        f *= (1 + gx * (xx / W - 0.5) + gy * (yy / H - 0.5))[..., None]
    f = f * rng.uniform(1 - 0.35 * strength, 1 + 0.25 * strength) + rng.uniform(-20, 20) * strength
    f *= (1 + rng.uniform(-0.08, 0.08, 3) * strength).astype(np.float32)  # white balance
    if rng.random() < 0.4 * strength:  # glare: a bright soft spot
        g: np.ndarray = np.zeros((H, W), np.float32)
        c = (int(rng.integers(0, W)), int(rng.integers(0, H)))
        axes = (int(rng.uniform(0.03, 0.2) * W) + 1, int(rng.uniform(0.03, 0.2) * H) + 1)
        cv2.ellipse(g, c, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        g = cv2.GaussianBlur(g, (0, 0), max(axes) * 0.4 + 1)
        f += g[..., None] * rng.uniform(60, 200) * strength
    f = np.clip(f, 0, 255).astype(np.uint8)
    b = rng.random()
    if b < 0.3 * strength:
        s = rng.uniform(0.4, 1.6) * strength
        f = cv2.GaussianBlur(f, (0, 0), s)
    elif b < 0.45 * strength:  # motion blur
        k = int(rng.integers(3, 8))
        kernel: np.ndarray = np.zeros((k, k), np.float32)
        kernel[k // 2] = 1 / k
        M = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), float(rng.uniform(0, 180)), 1)
        kernel = cv2.warpAffine(kernel, M, (k, k))
        f = cv2.filter2D(f, -1, kernel / max(kernel.sum(), 1e-6))
    if rng.random() < 0.8:
        sigma = rng.uniform(0, 9) * strength
        f = np.clip(f.astype(np.float32) + rng.normal(0, sigma, f.shape).astype(np.float32), 0, 255).astype(np.uint8)
    if rng.random() < 0.5 * strength:
        ok, enc = cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 95))])
        f = cv2.imdecode(enc, cv2.IMREAD_COLOR)  # type: ignore[assignment]  # what it just encoded decodes
    return f


def _lay(img: np.ndarray, idmap: np.ndarray, rng: np.random.Generator, placed: list[PlacedCard], card: Card,
         quad: np.ndarray, face_down: float, back_seed: int, style: CardStyle, light: float) -> None:
    """Lay `card` at `quad`, face down with the chance `face_down`, lit between `light` and 1.05."""
    down = rng.random() < face_down
    rgba = card_back(back_seed) if down else card_face(card, style)
    _composite(img, idmap, rgba, quad, len(placed), rng.uniform(light, 1.05))
    placed.append(PlacedCard(None if down else card, quad))


def _scene(img: np.ndarray, idmap: np.ndarray, rng: np.random.Generator, placed: list[PlacedCard], hand: float,
           spread: float, size: float, strength: float) -> Scene:
    """The scene done: with the chance `hand` a hand (about `size` wide) near a card, `spread` off its centre;
    then each card's visibility and the camera's effects."""
    if rng.random() < hand and placed:
        target = placed[int(rng.integers(len(placed)))].quad.mean(axis=0)
        _hand(img, idmap, rng, (target[0] + rng.normal(0, spread), target[1] + rng.normal(0, spread)),
              size * rng.uniform(0.6, 1.0))
    _visibility(placed, idmap)
    return Scene(_finish(img, rng, strength), placed)


def render_scene(rng: np.random.Generator, size: tuple[int, int] = (640, 384), *,
                 cards: Sequence[Card] | None = None, count: tuple[int, int] = (1, 9),
                 card_width: tuple[float, float] = (0.06, 0.3), fan: float = 0.35, face_down: float = 0.05,
                 busy: float = 0.5, hand: float = 0.2, tilt: float = 0.12, strength: float = 1.0,
                 backgrounds: Sequence[np.ndarray] = ()) -> Scene:
    """A random scene of `size` (w, h): cards spread or fanned on felt or a busy background, with ground truth.

    `cards` fixes which cards appear (else drawn at random, joker included); `card_width` is the range of
    card widths as a fraction of the image's longer side; `fan` the chance that cards form
    an overlapping fan; `busy` the chance of a non-felt background; `hand` the chance of a hand over the
    scene; `strength` scales the camera effects (0: clean).
    """
    W, H = size
    img = _background(rng, W, H, busy, backgrounds)
    idmap = np.full((H, W), -1, np.int32)
    n = len(cards) if cards is not None else int(rng.integers(count[0], count[1] + 1))
    chosen = list(cards) if cards is not None else [ALL_CARDS[int(i)] for i in rng.choice(53, n, replace=False)]
    style = random_style(rng)
    back_seed = int(rng.integers(0, 4))
    width = rng.uniform(*card_width) * max(W, H)
    if rng.random() < 0.3:
        _chips(img, idmap, rng, int(rng.integers(1, 6)), width)
    placed: list[PlacedCard] = []
    i = 0
    while i < n:
        # A group: one card alone or a fan of overlapping ones (as dealt to a spot or spread by hand).
        group = 1 if rng.random() > fan else min(n - i, int(rng.integers(2, 6)))
        cw = width * rng.uniform(0.85, 1.15)
        margin = cw * 0.1
        centre = np.array([rng.uniform(-margin, W + margin), rng.uniform(-margin, H + margin)])
        angle = rng.uniform(-math.pi, math.pi) if rng.random() < 0.6 else rng.normal(0, 0.15) + \
            (math.pi if rng.random() < 0.3 else 0)
        step_dir = rng.uniform(-math.pi, math.pi)
        step = cw * rng.uniform(0.22, 0.55)
        spin = rng.normal(0, 0.12)
        for k in range(group):
            card = chosen[i]
            i += 1
            c = centre + k * step * np.array([math.cos(step_dir), math.sin(step_dir)])
            quad = _card_quad(rng, (c[0], c[1]), cw, angle + k * spin, tilt)
            _lay(img, idmap, rng, placed, card, quad, face_down, back_seed, style, 0.8)
    return _scene(img, idmap, rng, placed, hand, width * 0.3, width, strength)


def render_fans(rng: np.random.Generator, size: tuple[int, int] = (640, 384), *, hands: tuple[int, int] = (1, 4),
                count: tuple[int, int] = (6, 13), step: tuple[float, float] = (0.15, 0.35), turn_deg: float = 8.0,
                busy: float = 0.5, hand: float = 0.3, tilt: float = 0.08, strength: float = 1.0,
                backgrounds: Sequence[np.ndarray] = ()) -> Scene:
    """Hands of `count` cards fanned tightly, as held or laid down in bridge: each card slid about `step` of its width
    past the one under it and turned up to `turn_deg` degrees more (about a pivot below the hand), so each covered card
    shows its index strip only; one to four hands a scene, each turned any way, and the camera effects of
    `render_scene`. The detector's and the index readers' training and the seeded tight-fans set
    (`evaluate.fans_scene`) draw them."""
    W, H = size
    img = _background(rng, W, H, busy, backgrounds)
    idmap = np.full((H, W), -1, np.int32)
    n_hands = int(rng.integers(hands[0], hands[1] + 1))
    sizes = [int(rng.integers(count[0], count[1] + 1)) for _ in range(n_hands)]
    chosen = [ALL_CARDS[int(i)] for i in rng.choice(52, min(52, sum(sizes)), replace=False)]
    style = random_style(rng)
    # Small enough that the hands fit; a covered card's strip stays at least 10 pixels wide.
    cw = rng.uniform(0.08, (0.24, 0.16, 0.13, 0.12)[n_hands - 1]) * max(W, H)
    hl = cw / 2 * CARD_H / CARD_W
    placed: list[PlacedCard] = []
    taken: list[np.ndarray] = []
    for n in sizes:
        n = min(n, len(chosen) - len(placed))
        slide, dturn = max(rng.uniform(*step) * cw, 10.0), math.radians(rng.uniform(0, turn_deg))
        radius = hl * rng.uniform(0, 1.5)  # the pivot's distance below the cards' centres
        slide_centre = max(0.0, slide - (radius + hl) * dturn)  # what the turn adds at the indices, taken off
        a0 = rng.uniform(-math.pi, math.pi) - (n - 1) / 2 * dturn
        local = []
        for k in range(n):
            a = a0 + k * dturn
            x, down = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
            local.append((k * slide_centre * x - radius * down + rng.normal(0, 0.01 * cw, 2), a))
        mid = np.mean([c for c, _ in local], axis=0)
        for _ in range(30):  # apart from the hands laid, if it can be
            at = rng.uniform([0.1 * W, 0.1 * H], [0.9 * W, 0.9 * H])
            if all(np.linalg.norm(at - t) > 2.2 * hl for t in taken):
                break
        taken.append(at)
        for c, a in local:
            p = c - mid + at
            quad = _card_quad(rng, (float(p[0]), float(p[1])), cw, a, tilt)
            _lay(img, idmap, rng, placed, chosen[len(placed)], quad, 0.0, 0, style, 0.8)
    return _scene(img, idmap, rng, placed, hand, cw * 0.4, cw * 1.5, strength)


def region_visible(quad: np.ndarray, idmap: np.ndarray, ident: int, region: tuple[float, float, float, float]
                   ) -> float:
    """The fraction of `region` (fractions of the upright card) of the card `ident` at `quad` that `idmap` shows."""
    H, W = idmap.shape
    pts = np.round(_sample_points(quad, region)).astype(int)
    ok = (pts[:, 0] >= 0) & (pts[:, 0] < W) & (pts[:, 1] >= 0) & (pts[:, 1] < H)
    hit = np.zeros(len(pts), bool)
    hit[ok] = idmap[pts[ok, 1], pts[ok, 0]] == ident
    return float(hit.mean())


def render_close(rng: np.random.Generator, card: Card, width: float,
                 regions: Sequence[tuple[float, float, float, float]] = (), *, under: float = 0.3, over: float = 0.4,
                 hand: float = 0.08, backgrounds: Sequence[np.ndarray] = ()) -> tuple[Scene, PlacedCard, list[float]]:
    """A square of felt 2.6 card widths across with `card`, `width` pixels wide, near its middle turned any way, as a
    table camera sees it: with chance `under` a card beneath it, with chance `over` a card over it somewhere, with
    chance `hand` a hand, then the camera's effects. Also the placed card, and the fraction of each of its `regions`
    (fractions of the upright card) in sight."""
    size = int(width * 2.6)
    img = _background(rng, size, size, 0.0, backgrounds)
    idmap = np.full((size, size), -1, np.int32)
    style = random_style(rng)
    others = [ALL_CARDS[int(i)] for i in rng.choice(52, 2, replace=False)]
    angle = rng.uniform(-math.pi, math.pi)
    c = np.array([size / 2, size / 2]) + rng.normal(0, width * 0.05, 2)
    placed: list[PlacedCard] = []
    if rng.random() < under:
        o = c + rng.normal(0, width * 0.5, 2)
        quad = _card_quad(rng, (o[0], o[1]), width, angle + rng.normal(0, 0.3), 0.06)
        _lay(img, idmap, rng, placed, others[0], quad, 0.1, 0, style, 0.85)
    quad = _card_quad(rng, (c[0], c[1]), width, angle, 0.06)
    _lay(img, idmap, rng, placed, card, quad, 0.0, 0, style, 0.85)
    me = len(placed) - 1
    if rng.random() < over:
        o = c + rng.normal(0, width * 0.6, 2)
        _lay(img, idmap, rng, placed, others[1], _card_quad(rng, (o[0], o[1]), width, angle + rng.normal(0, 0.5), 0.06),
             0.1, 0, style, 0.85)
    if rng.random() < hand:
        o = c + rng.normal(0, width * 0.6, 2)
        _hand(img, idmap, rng, (o[0], o[1]), width * rng.uniform(0.6, 1.0))
    seen = [region_visible(quad, idmap, me, r) for r in regions]
    _visibility(placed, idmap)
    return Scene(_finish(img, rng, 1.0), placed), placed[me], seen


def _group_cards(rng: np.random.Generator, n: int, cw: float) -> list[tuple[float, float, float]]:
    """Card centres and turns (x, y, angle) of one dealt group in the group's own frame, cards stacked in
    dealing order: a blackjack cascade (each card down and to the side by about an index, so every
    earlier card keeps an index in sight), a row (baccarat, community cards: side by side or overlapping
    by up to 40%), or one card."""
    ch = cw * CARD_H / CARD_W
    kind = rng.random() if n > 1 else 1.0
    out = []
    if kind < 0.5:  # cascade
        dx = rng.uniform(0.32, 0.55) * cw * (1 if rng.random() < 0.5 else -1)
        dy = rng.uniform(0.12, 0.3) * ch
        for k in range(n):
            out.append((k * dx + rng.normal(0, 0.02 * cw), k * dy + rng.normal(0, 0.02 * cw), rng.normal(0, 0.05)))
    else:  # a row, or a single card
        step = rng.uniform(0.62, 1.3) * cw
        for k in range(n):
            out.append((k * step + rng.normal(0, 0.02 * cw), rng.normal(0, 0.03 * cw), rng.normal(0, 0.05)))
    # 180-degree turns: dealt cards lie either way up.
    return [(x, y, a + (math.pi if rng.random() < 0.5 else 0.0)) for x, y, a in out]


def render_dealt(rng: np.random.Generator, size: tuple[int, int] = (1280, 720), *,
                 count: tuple[int, int] = (4, 10), card_width: tuple[float, float] = (0.06, 0.11),
                 face_down: float = 0.05, hand: float = 0.1, chips: float = 0.4, markers: float = 0.5,
                 tilt: float = 0.06, strength: float = 1.0, backgrounds: Sequence[np.ndarray] = ()) -> Scene:
    """A table camera's frame of cards as a dealer lays them out: on felt, in groups at separate places
    (blackjack cascades, rows, single cards), each group turned its own way, all inside the frame; chips,
    with chance `markers` the ArUco calibration markers in the corners, sometimes a hole card face down or
    a hand, and the camera effects of `render_scene`.

    `card_width` is the range of card widths as a fraction of the image's longer side."""
    W, H = size
    img = _background(rng, W, H, 0.0, backgrounds)
    idmap = np.full((H, W), -1, np.int32)
    n = int(rng.integers(count[0], count[1] + 1))
    chosen = [ALL_CARDS[int(i)] for i in rng.choice(52, n, replace=False)]
    style = random_style(rng)
    back_seed = int(rng.integers(0, 4))
    cw = rng.uniform(*card_width) * max(W, H)
    if rng.random() < chips:
        _chips(img, idmap, rng, int(rng.integers(1, 6)), cw)
    placed: list[PlacedCard] = []
    taken: list[tuple[float, float, float]] = []  # (x, y, radius) of the groups and markers already laid
    if rng.random() < markers:
        side = cw * rng.uniform(0.5, 0.8)
        for mid, (mx, my) in zip(MARKER_IDS, ((0, 0), (1, 0), (1, 1), (0, 1))):
            x, y = side * 0.3 + mx * (W - side * 1.6), side * 0.3 + my * (H - side * 1.6)
            tile = cv2.aruco.generateImageMarker(aruco_dictionary(), mid, 120, borderBits=1)
            bgra = cv2.cvtColor(cv2.copyMakeBorder(tile, 20, 20, 20, 20, cv2.BORDER_CONSTANT, value=255),
                                cv2.COLOR_GRAY2BGRA)
            quad = np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]], np.float64)
            _composite(img, np.full((H, W), -1, np.int32), bgra, quad, 0, rng.uniform(0.85, 1.05))
            taken.append((x + side / 2, y + side / 2, side * 0.75))
    i = 0
    while i < n:
        group = min(n - i, int(rng.integers(1, 5)))
        local = _group_cards(rng, group, cw)
        pts = np.array([(x, y) for x, y, _ in local])
        mid = (pts.min(axis=0) + pts.max(axis=0)) / 2
        radius = float(np.linalg.norm(pts - mid, axis=1).max()) + 0.5 * math.hypot(cw, cw * CARD_H / CARD_W)
        if 2 * radius > min(W, H):  # too long for the frame: draw the group again
            if group == 1:
                raise ValueError("card_width too large: one card does not fit in the frame")
            continue
        turn = rng.uniform(-math.pi, math.pi)
        rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
        for _ in range(200):
            c = np.array([rng.uniform(radius, W - radius), rng.uniform(radius, H - radius)])
            if all(math.hypot(c[0] - x, c[1] - y) > radius + r for x, y, r in taken):
                break
        else:
            break  # the table is full
        taken.append((float(c[0]), float(c[1]), radius))
        for x, y, a in local:
            card = chosen[i]
            i += 1
            centre = rot @ (np.array([x, y]) - mid) + c
            quad = _card_quad(rng, (centre[0], centre[1]), cw, turn + a, tilt)
            _lay(img, idmap, rng, placed, card, quad, face_down, back_seed, style, 0.85)
    return _scene(img, idmap, rng, placed, hand, cw * 0.5, cw, strength)


# ----------------------------------------------------------------------------------------------- table

@dataclass(frozen=True)
class TableCard:
    """A card lying on the table: centre in table millimetres, turn in degrees, face up or down."""

    card: Card
    x: float
    y: float
    angle: float = 0.0
    face_up: bool = True


def view_homography(size: tuple[int, int], table_mm: tuple[float, float],
                    homography: np.ndarray | None = None) -> np.ndarray:
    """Table millimetres -> image pixels as `render_table` draws them: `homography`, or by default the whole
    table filling an image of `size`, seen from straight above."""
    if homography is None:
        return np.array([[size[0] / table_mm[0], 0, 0], [0, size[1] / table_mm[1], 0], [0, 0, 1]], np.float64)
    return np.asarray(homography, np.float64)


def render_table(cards: Sequence[TableCard], rng: np.random.Generator | None = None, *,
                 size: tuple[int, int] = (1280, 720), table_mm: tuple[float, float] = (1200.0, 675.0),
                 homography: np.ndarray | None = None, markers: bool = True,
                 zones: Sequence[tuple[str, tuple[float, float, float, float]]] = (),
                 hand: tuple[float, float, float] | None = None, noise: float = 0.0,
                 style: CardStyle = DEFAULT_STYLE) -> np.ndarray:
    """What a camera over the table sees: felt, printed zones, ArUco markers at the corners, the cards.

    Table coordinates are millimetres from the table's top-left corner; `homography` maps them to image
    pixels (default: the whole table fills the image, seen from straight above). `hand` = (x, y, size) in
    table mm puts a dealer's hand there; `noise` is the sensor noise sigma; `rng` drives the noise and hand.
    """
    W, H = size
    Hm = view_homography(size, table_mm, homography)

    def to_img(pts: np.ndarray) -> np.ndarray:
        return cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(1, -1, 2), Hm)[0]

    felt = np.zeros((H, W, 3), np.uint8)
    felt[:] = (40, 105, 30)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    felt = (felt * (1 - 0.15 * ((xx / W - 0.5) ** 2 + (yy / H - 0.5) ** 2))[..., None]).astype(np.uint8)
    for _, (x0, y0, x1, y1) in zones:
        q = to_img(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64))
        cv2.polylines(felt, [np.round(q).astype(np.int32)], True, (120, 190, 140), 2, cv2.LINE_AA)
    if markers:
        side = 60.0
        for mid, (mx, my) in zip(MARKER_IDS, ((10, 10), (table_mm[0] - 10 - side, 10),
                                             (table_mm[0] - 10 - side, table_mm[1] - 10 - side),
                                             (10, table_mm[1] - 10 - side))):
            tile = cv2.aruco.generateImageMarker(aruco_dictionary(), mid, 120, borderBits=1)
            tile = cv2.copyMakeBorder(tile, 20, 20, 20, 20, cv2.BORDER_CONSTANT, value=255)
            bgra = cv2.cvtColor(tile, cv2.COLOR_GRAY2BGRA)
            pad = side * 20 / 120
            q = to_img(np.array([[mx - pad, my - pad], [mx + side + pad, my - pad], [mx + side + pad, my + side + pad],
                                 [mx - pad, my + side + pad]]))
            _composite(felt, np.full((H, W), -1, np.int32), bgra, q, 0, 1.0)
    idmap = np.full((H, W), -1, np.int32)
    for k, tc in enumerate(cards):
        wmm, hmm = CARD_MM
        a = math.radians(tc.angle)
        c, s = math.cos(a), math.sin(a)
        local = np.array([[-wmm / 2, -hmm / 2], [wmm / 2, -hmm / 2], [wmm / 2, hmm / 2], [-wmm / 2, hmm / 2]])
        pts = local @ np.array([[c, -s], [s, c]]).T + [tc.x, tc.y]
        rgba = card_face(tc.card, style) if tc.face_up else card_back(0)
        _composite(felt, idmap, rgba, to_img(pts), k, 1.0)
    if hand is not None:
        hrng = rng if rng is not None else np.random.default_rng(0)
        centre = to_img(np.array([[hand[0], hand[1]]]))[0]
        scale = float(np.linalg.norm(to_img(np.array([[hand[0] + hand[2], hand[1]]]))[0] - centre))
        _hand(felt, idmap, hrng, (float(centre[0]), float(centre[1])), scale)
    if noise > 0:
        nrng = rng if rng is not None else np.random.default_rng(0)
        felt = np.clip(felt.astype(np.float32) + nrng.normal(0, noise, felt.shape), 0, 255).astype(np.uint8)
    return felt
