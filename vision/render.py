"""Synthetic renderer: card faces of all 52 identities, the joker and backs, composed onto tables with ground truth.

Everything random comes in as a `numpy.random.Generator` (callers derive it from `controller.rng`), so a
seed renders the same pixels every time. Five uses:

- `card_face(card, style)`: one canonical upright card (BGRA, `CARD_W` x `CARD_H`), indices at top-left
  and bottom-right, pips or a picture in the middle;
- `render_scene(rng, ...)`: a random scene for training and for the synthetic test set: cards (spread,
  overlapping in fans, face down), chips, a hand, on felt or a busy background, under perspective, blur,
  glare, noise and JPEG loss, with each card's quad, visible box and index visibility;
- `render_dealt(rng, ...)`: a table camera's frame of cards as a dealer lays them out (cascades, rows,
  single cards at separate places on felt): the seeded synthetic test set;
- `render_close(rng, card, width, regions)`: one card close up on felt, maybe partly covered, with how much of
  given regions of it shows (the sign reader's training squares);
- `render_table(layout, rng, ...)`: what the simulated camera over a table sees: the felt with its zones
  and ArUco calibration markers, the cards at table positions, optional hand and noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from controller.cards import Card, JOKER, Suit, deck

__all__ = [
    "CARD_W", "CARD_H", "CARD_MM", "INDEX_REGION", "CardStyle", "random_style", "DEFAULT_STYLE",
    "card_face", "card_back", "suit_mask", "PlacedCard", "Scene", "render_scene", "render_dealt", "quad_to_rect",
    "TableCard", "render_table", "ALL_CARDS", "aruco_dictionary", "MARKER_IDS", "PICTURE_SIGN", "render_close",
    "region_visible", "turned", "use_extra_styles",
]

CARD_W, CARD_H = 200, 280  # canonical pixels; a poker card is 63 x 88 mm
CARD_MM = (63.0, 88.0)
# The corner the classifier reads, as fractions of the upright card: (x0, y0, x1, y1). 2:3 like its input.
INDEX_REGION = (0.0, 0.0, 0.30, 0.32)
ALL_CARDS: tuple[Card, ...] = deck() + (JOKER,)
# Where a court card's picture shows its suit sign (top half; the bottom half is the top turned half round), as
# fractions of the upright card: `_picture`'s frame from (0.2, 0.1) of the card, 120 x 224 canonical pixels, the sign
# 24 pixels across at (0.7, 0.05) of it. Real court cards have theirs there too, beside the figure's head.
PICTURE_SIGN = (0.62, 0.139, 0.74, 0.225)

_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
          cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_PLAIN)
_RANK_TEXT = {r: str(r) for r in range(2, 11)} | {11: "J", 12: "Q", 13: "K", 14: "A"}
# ArUco markers at the table's four corners (ids 0..3 clockwise from top-left) for calibration.
MARKER_IDS = (0, 1, 2, 3)


def aruco_dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)


# ----------------------------------------------------------------------------------------------- suits

@lru_cache(maxsize=None)
def _suit_master(suit: Suit) -> np.ndarray:
    """A 200x200 antialiased mask of the suit symbol (255 inside)."""
    s = 4  # supersample
    n = 200 * s
    m = np.zeros((n, n), np.uint8)

    def P(pts: Sequence[tuple[float, float]]) -> np.ndarray:
        return (np.array(pts, np.float64) * s).astype(np.int32)

    def circle(x: float, y: float, r: float) -> None:
        cv2.circle(m, (int(x * s), int(y * s)), int(r * s), 255, -1, cv2.LINE_AA)

    if suit == Suit.DIAMONDS:
        t = np.linspace(0, 1, 20)
        pts = []
        # Slightly concave sides, like printed diamonds.
        for (ax, ay), (bx, by) in (((100, 4), (178, 100)), ((178, 100), (100, 196)),
                                   ((100, 196), (22, 100)), ((22, 100), (100, 4))):
            for u in t:
                x, y = ax + (bx - ax) * u, ay + (by - ay) * u
                bulge = 7 * math.sin(math.pi * u)
                x += bulge * (100 - x) / 80
                y += bulge * (100 - y) / 80
                pts.append((x, y))
        cv2.fillPoly(m, [P(pts)], 255, cv2.LINE_AA)
    elif suit == Suit.HEARTS:
        circle(57, 62, 50)
        circle(143, 62, 50)
        cv2.fillPoly(m, [P([(10, 80), (100, 196), (190, 80), (100, 50)])], 255, cv2.LINE_AA)
    elif suit == Suit.SPADES:
        circle(57, 122, 46)
        circle(143, 122, 46)
        cv2.fillPoly(m, [P([(14, 108), (100, 4), (186, 108), (100, 150)])], 255, cv2.LINE_AA)
        cv2.fillPoly(m, [P([(100, 120), (68, 196), (132, 196)])], 255, cv2.LINE_AA)
    else:
        circle(100, 52, 42)
        circle(52, 118, 42)
        circle(148, 118, 42)
        circle(100, 110, 25)
        cv2.fillPoly(m, [P([(100, 100), (70, 196), (130, 196)])], 255, cv2.LINE_AA)
    return cv2.resize(m, (200, 200), interpolation=cv2.INTER_AREA)


def suit_mask(suit: Suit, size: int) -> np.ndarray:
    """The suit symbol as a float mask in 0..1, `size` pixels tall and wide."""
    return cv2.resize(_suit_master(suit), (size, size), interpolation=cv2.INTER_AREA).astype(np.float32) / 255


# ----------------------------------------------------------------------------------------------- faces

@dataclass(frozen=True)
class CardStyle:
    """How one deck looks: index font and size, ink colours, paper tint, border, picture palette."""

    font: int = cv2.FONT_HERSHEY_COMPLEX
    thickness: float = 0.16  # stroke width as a fraction of the rank glyph height
    rank_h: float = 0.085    # rank glyph height, fraction of card height
    rank_x: float = 0.105    # rank glyph centre x, fraction of card width
    rank_y: float = 0.045    # rank glyph top, fraction of card height
    suit_h: float = 0.065    # index suit symbol size, fraction of card height
    gap: float = 0.018       # between rank and suit symbol
    red: tuple[int, int, int] = (40, 30, 200)
    black: tuple[int, int, int] = (30, 25, 25)
    paper: tuple[int, int, int] = (245, 248, 250)
    border: bool = False
    palette_seed: int = 0
    corners: int = 2  # 2: indices top-left and bottom-right; 4: in every corner
    glyph_font: str = ""  # rank glyphs from this TrueType font of the extra styles' atlas ("": a Hershey font)
    widen: float = 1.0    # those glyphs' width times this (condensed and extended index faces)
    faces: bool = False   # the whole face is the extra styles' deck drawn by others (`use_extra_styles`)


DEFAULT_STYLE = CardStyle()

# More index styles for training, off unless `use_extra_styles` turns them on: off, `random_style` draws exactly
# what it always did, so the seeded test sets stay the same pixels.
_EXTRA: dict = {"share": 0.0, "glyphs": {}, "fonts": (), "faces": {}}


def use_extra_styles(share: float, glyphs: Path | None = None, faces: Path | None = None) -> None:
    """With chance `share`, `random_style` gives a deck whose rank glyphs are a TrueType font's (from the atlas
    `glyphs`, as `vision/training/glyphs.py` writes it) or, a third of the time where `faces` is given, the deck
    drawn in that folder (upright faces named like `6s.png`, `10h.png`, `Qd.png`). `share` 0 turns them off."""
    _EXTRA["share"] = float(share)
    if glyphs is not None:
        with np.load(glyphs) as atlas:
            _EXTRA["glyphs"] = {k: atlas[k] for k in atlas.files}
        _EXTRA["fonts"] = tuple(sorted({k.split("|")[0] for k in _EXTRA["glyphs"]}))
    if faces is not None:
        found = {}
        for c in deck():
            name = f"{_RANK_TEXT[c.rank]}{c.suit.letter.lower()}"  # type: ignore[union-attr]
            path = next((p for p in (faces / f"{name}.png", faces / f"{name[0].upper() + name[1:]}.png",
                                     faces / f"{name}.jpg") if p.is_file()), None)
            if path is not None:
                found[c] = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if len(found) != 52:
            raise FileNotFoundError(f"{faces}: expected 52 card faces named like 6s.png, found {len(found)}")
        _EXTRA["faces"] = found
    _face_cached.cache_clear()


def random_style(rng: np.random.Generator) -> CardStyle:
    """A plausible deck design: fonts, sizes and inks vary the way real decks do."""
    paper_v = int(rng.integers(225, 256))
    tint = rng.integers(-8, 9, 3)
    style = CardStyle(
        font=int(rng.choice(_FONTS)),
        thickness=float(rng.uniform(0.09, 0.22)),
        rank_h=float(rng.uniform(0.07, 0.105)),
        rank_x=float(rng.uniform(0.085, 0.125)),
        rank_y=float(rng.uniform(0.025, 0.06)),
        suit_h=float(rng.uniform(0.05, 0.08)),
        gap=float(rng.uniform(0.008, 0.03)),
        red=(int(rng.integers(10, 70)), int(rng.integers(0, 60)), int(rng.integers(150, 235))),
        black=tuple(int(v) for v in rng.integers(0, 60, 3)),  # type: ignore[arg-type]
        paper=tuple(int(np.clip(paper_v + t, 0, 255)) for t in tint),  # type: ignore[arg-type]
        border=bool(rng.random() < 0.3),
        palette_seed=int(rng.integers(0, 2**31)),
        corners=4 if rng.random() < 0.1 else 2,
    )
    if _EXTRA["share"] > 0 and rng.random() < _EXTRA["share"]:
        if _EXTRA["faces"] and rng.random() < 1 / 3:
            return replace(style, faces=True)
        if _EXTRA["fonts"]:
            return replace(style, glyph_font=str(rng.choice(_EXTRA["fonts"])), widen=float(rng.uniform(0.8, 1.25)))
    return style


def _glyph_mask(text: str, font: int, thickness: float, h: int, max_w: int) -> np.ndarray:
    """`text` drawn white on black, scaled to exactly `h` pixels tall and at most `max_w` wide."""
    scale = 4.0
    th = max(1, int(round(thickness * 30 * scale / 4)))
    (tw, tht), base = cv2.getTextSize(text, font, scale, th)
    pad = th + 4
    img = np.zeros((tht + base + 2 * pad, tw + 2 * pad), np.uint8)
    cv2.putText(img, text, (pad, pad + tht), font, scale, 255, th, cv2.LINE_AA)
    ys, xs = np.nonzero(img > 40)
    img = img[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    gh, gw = img.shape
    w = max(1, int(round(gw * h / gh)))
    w = min(w, max_w)
    return cv2.resize(img, (w, max(1, h)), interpolation=cv2.INTER_AREA).astype(np.float32) / 255


def _paint(img: np.ndarray, mask: np.ndarray, x: int, y: int, colour: Sequence[int]) -> None:
    """Blend `colour` into the BGR(A) `img` through `mask` placed with its top-left at (x, y); clipped."""
    h, w = mask.shape
    H, W = img.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x0 >= x1 or y0 >= y1:
        return
    m = mask[y0 - y:y1 - y, x0 - x:x1 - x, None]
    region = img[y0:y1, x0:x1, :3].astype(np.float32)
    img[y0:y1, x0:x1, :3] = (region * (1 - m) + np.array(colour[:3], np.float32) * m).astype(np.uint8)


def _index(face: np.ndarray, card: Card, style: CardStyle, ink: Sequence[int]) -> None:
    """Draw the corner index (rank over suit) in the top-left corner of `face` (a float mask layer)."""
    W, H = CARD_W, CARD_H
    rh = int(round(style.rank_h * H))
    cx = style.rank_x * W
    top = style.rank_y * H
    if card.joker:
        # Jokers spell JOKER down the corner in small capitals.
        lh = max(4, int(rh * 0.55))
        y = top
        for ch in "JOKER":
            g = _glyph_mask(ch, style.font, style.thickness, lh, int(0.16 * W))
            _paint(face, g, int(cx - g.shape[1] / 2), int(y), ink)
            y += lh * 1.25
        return
    text = _RANK_TEXT[card.rank]
    if style.glyph_font:
        a = _EXTRA["glyphs"][f"{style.glyph_font}|{text}"]
        w = min(int(0.19 * W), max(1, int(round(a.shape[1] * rh / a.shape[0] * style.widen))))
        g = cv2.resize(a, (w, max(1, rh)), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    else:
        g = _glyph_mask(text, style.font, style.thickness, rh, int(0.19 * W))
        if text == "10":  # two digits set narrow, as printed
            g = cv2.resize(g, (min(g.shape[1], int(0.19 * W)), rh), interpolation=cv2.INTER_AREA)
    _paint(face, g, int(round(cx - g.shape[1] / 2)), int(round(top)), ink)
    sh = int(round(style.suit_h * H))
    sm = suit_mask(card.suit, sh)  # type: ignore[arg-type]
    _paint(face, sm, int(round(cx - sh / 2)), int(round(top + rh + style.gap * H)), ink)


_PIPS: dict[int, list[tuple[float, float]]] = {
    2: [(0.5, 0.2), (0.5, 0.8)],
    3: [(0.5, 0.2), (0.5, 0.5), (0.5, 0.8)],
    4: [(0.32, 0.2), (0.68, 0.2), (0.32, 0.8), (0.68, 0.8)],
    5: [(0.32, 0.2), (0.68, 0.2), (0.5, 0.5), (0.32, 0.8), (0.68, 0.8)],
    6: [(0.32, 0.2), (0.68, 0.2), (0.32, 0.5), (0.68, 0.5), (0.32, 0.8), (0.68, 0.8)],
    7: [(0.32, 0.2), (0.68, 0.2), (0.5, 0.35), (0.32, 0.5), (0.68, 0.5), (0.32, 0.8), (0.68, 0.8)],
    8: [(0.32, 0.2), (0.68, 0.2), (0.5, 0.35), (0.32, 0.5), (0.68, 0.5), (0.5, 0.65), (0.32, 0.8),
        (0.68, 0.8)],
    9: [(0.32, 0.2), (0.68, 0.2), (0.32, 0.4), (0.68, 0.4), (0.5, 0.5), (0.32, 0.6), (0.68, 0.6),
        (0.32, 0.8), (0.68, 0.8)],
    10: [(0.32, 0.2), (0.68, 0.2), (0.5, 0.3), (0.32, 0.4), (0.68, 0.4), (0.32, 0.6), (0.68, 0.6),
         (0.5, 0.7), (0.32, 0.8), (0.68, 0.8)],
}


def _picture(face: np.ndarray, card: Card, style: CardStyle, ink: Sequence[int]) -> None:
    """A court card or joker picture: a framed, point-symmetric tangle of colour (real ones vary wildly)."""
    W, H = CARD_W, CARD_H
    r = np.random.default_rng(style.palette_seed + card.index * 7919)
    x0, y0, x1, y1 = int(0.2 * W), int(0.1 * H), int(0.8 * W), int(0.9 * H)
    pw, ph = x1 - x0, y1 - y0
    pic = np.full((ph, pw, 3), style.paper, np.uint8)
    palette = [tuple(int(v) for v in ink), (160, 60, 30), (40, 190, 230), (30, 30, 30), (150, 170, 230),
               (60, 60, 190), (200, 120, 40)]
    half = pic[: ph // 2]
    for _ in range(int(r.integers(14, 26))):
        colour = palette[int(r.integers(len(palette)))]
        kind = r.integers(3)
        cx, cy = int(r.integers(0, pw)), int(r.integers(0, ph // 2))
        if kind == 0:
            cv2.ellipse(half, (cx, cy), (int(r.integers(3, 25)), int(r.integers(3, 25))), float(r.uniform(0, 180)),
                        0, 360, colour, -1, cv2.LINE_AA)
        elif kind == 1:
            pts = r.integers(0, [pw, ph // 2], (int(r.integers(3, 6)), 2)).astype(np.int32)
            cv2.fillPoly(half, [pts], colour, cv2.LINE_AA)
        else:
            cv2.line(half, (cx, cy), (int(r.integers(0, pw)), int(r.integers(0, ph // 2))), colour,
                     int(r.integers(1, 4)), cv2.LINE_AA)
    if not card.joker:
        # The figure's face: a skin oval near the top; the rank letter large on the figure for legibility.
        cv2.ellipse(half, (pw // 2, ph // 5), (pw // 7, ph // 10), 0, 0, 360, (150, 190, 235), -1, cv2.LINE_AA)
        g = _glyph_mask(_RANK_TEXT[card.rank], style.font, style.thickness, ph // 6, pw // 2)
        _paint(half, g, int(pw * 0.12), int(ph * 0.28), ink)
        sm = suit_mask(card.suit, ph // 9)  # type: ignore[arg-type]
        _paint(half, sm, int(pw * 0.7), int(ph * 0.05), ink)
    pic[ph - ph // 2:] = half[: ph // 2][::-1, ::-1]
    cv2.line(pic, (0, ph // 2), (pw, ph // 2), palette[3], 1)
    face[y0:y1, x0:x1, :3] = pic
    cv2.rectangle(face, (x0, y0), (x1 - 1, y1 - 1), ink, 2)


def _rounded_alpha(w: int, h: int, radius: int) -> np.ndarray:
    a = np.zeros((h * 4, w * 4), np.uint8)
    r = radius * 4
    cv2.rectangle(a, (r, 0), (w * 4 - 1 - r, h * 4 - 1), 255, -1)
    cv2.rectangle(a, (0, r), (w * 4 - 1, h * 4 - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w * 4 - 1 - r, r), (r, h * 4 - 1 - r), (w * 4 - 1 - r, h * 4 - 1 - r)):
        cv2.circle(a, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return cv2.resize(a, (w, h), interpolation=cv2.INTER_AREA)


@lru_cache(maxsize=4096)
def _face_cached(card: Card, style: CardStyle) -> np.ndarray:
    W, H = CARD_W, CARD_H
    face = np.zeros((H, W, 4), np.uint8)
    if style.faces and not card.joker:
        # Another designer's deck, its paper tinted like this style's.
        drawn = cv2.resize(_EXTRA["faces"][card], (W, H), interpolation=cv2.INTER_AREA).astype(np.float32)
        face[..., :3] = np.clip(drawn * (np.array(style.paper, np.float32) / 255), 0, 255).astype(np.uint8)
        face[..., 3] = _rounded_alpha(W, H, int(0.055 * W))
        face.flags.writeable = False
        return face
    face[..., :3] = style.paper
    face[..., 3] = _rounded_alpha(W, H, int(0.055 * W))
    red = card.joker or card.suit in (Suit.HEARTS, Suit.DIAMONDS)
    ink = style.red if red else style.black
    if style.border:
        cv2.rectangle(face, (int(0.05 * W), int(0.04 * H)), (int(0.95 * W), int(0.96 * H)), ink, 1, cv2.LINE_AA)
    if card.joker or card.rank in (11, 12, 13):
        _picture(face, card, style, ink)
    elif card.rank == 14:
        size = int(0.36 * W if card.suit == Suit.SPADES else 0.24 * W)
        _paint(face, suit_mask(card.suit, size), (W - size) // 2, (H - size) // 2, ink)  # type: ignore[arg-type]
    else:
        size = int(0.17 * W)
        pip = suit_mask(card.suit, size)  # type: ignore[arg-type]
        for fx, fy in _PIPS[card.rank]:
            m = pip if fy <= 0.5 else pip[::-1, ::-1]  # pips in the bottom half stand on their heads
            _paint(face, m, int(fx * W - size / 2), int(fy * H - size / 2), ink)
    layer = np.zeros((H, W, 4), np.uint8)
    _index(layer, card, style, (255, 255, 255))
    m = layer[..., 0].astype(np.float32) / 255
    # The bottom-right index is the top-left one turned 180 degrees, as on every standard deck; a
    # four-index deck repeats the upright index top-right and the turned one bottom-left.
    masks = [m, m[::-1, ::-1]]
    if style.corners == 4:
        k = int(0.3 * W)
        tr = np.zeros_like(m)
        tr[:, W - k:] = m[:, :k]
        masks += [tr, tr[::-1, ::-1]]
    for mk in masks:
        _paint(face, mk, 0, 0, ink)
    face[..., 3] = _rounded_alpha(W, H, int(0.055 * W))
    face.flags.writeable = False
    return face


def card_face(card: Card, style: CardStyle = DEFAULT_STYLE) -> np.ndarray:
    """The upright face of `card` in `style`: BGRA uint8, CARD_H x CARD_W, alpha 0 outside the round corners."""
    return _face_cached(card, style)


@lru_cache(maxsize=64)
def card_back(seed: int = 0) -> np.ndarray:
    """A card back (lattice in red or blue inside a white margin): BGRA like `card_face`."""
    r = np.random.default_rng(seed)
    W, H = CARD_W, CARD_H
    back = np.zeros((H, W, 4), np.uint8)
    back[..., :3] = (245, 245, 245)
    colour = (40, 40, 170) if r.random() < 0.5 else (150, 70, 20)
    m = int(0.07 * W)
    back[m:H - m, m:W - m, :3] = colour
    step = int(r.integers(8, 18))
    for k in range(-H, W + H, step):
        cv2.line(back, (k, m), (k + H, H + m), (235, 235, 235), 1, cv2.LINE_AA)
        cv2.line(back, (k, H + m), (k + H, m), (235, 235, 235), 1, cv2.LINE_AA)
    back[:m], back[H - m:], back[:, :m], back[:, W - m:] = 245, 245, 245, 245
    back[..., 3] = _rounded_alpha(W, H, int(0.055 * W))
    back.flags.writeable = False
    return back


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
        img = big[y:y + h, x:x + w].copy()
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
    f = img.astype(np.float32)
    if rng.random() < 0.7 * strength:  # uneven light
        gx, gy = rng.uniform(-0.35, 0.35, 2) * strength
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        f *= (1 + gx * (xx / W - 0.5) + gy * (yy / H - 0.5))[..., None]
    f = f * rng.uniform(1 - 0.35 * strength, 1 + 0.25 * strength) + rng.uniform(-20, 20) * strength
    f *= (1 + rng.uniform(-0.08, 0.08, 3) * strength).astype(np.float32)  # white balance
    if rng.random() < 0.4 * strength:  # glare: a bright soft spot
        g = np.zeros((H, W), np.float32)
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
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2] = 1 / k
        M = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), float(rng.uniform(0, 180)), 1)
        kernel = cv2.warpAffine(kernel, M, (k, k))
        f = cv2.filter2D(f, -1, kernel / max(kernel.sum(), 1e-6))
    if rng.random() < 0.8:
        sigma = rng.uniform(0, 9) * strength
        f = np.clip(f.astype(np.float32) + rng.normal(0, sigma, f.shape).astype(np.float32), 0, 255).astype(np.uint8)
    if rng.random() < 0.5 * strength:
        ok, enc = cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 95))])
        f = cv2.imdecode(enc, cv2.IMREAD_COLOR)
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
