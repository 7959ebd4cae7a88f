"""Card faces: the 52 identities and the joker drawn upright at `CARD_W` x `CARD_H` in a `CardStyle` (indices, pips or a
court card's picture), card backs, and the random styles training draws (`random_style`, `use_extra_styles`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from controller.cards import Card, Suit, deck

CARD_W, CARD_H = 200, 280  # canonical pixels; a poker card is 63 x 88 mm

_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
          cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_PLAIN)
_RANK_TEXT = {r: str(r) for r in range(2, 11)} | {11: "J", 12: "Q", 13: "K", 14: "A"}


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
    faces: int = 0        # k > 0: the whole face is the extra styles' k-th deck drawn by others (`use_extra_styles`)


DEFAULT_STYLE = CardStyle()

# More index styles for training, off unless `use_extra_styles` turns them on: off, `random_style` draws exactly
# what it always did, so the seeded test sets stay the same pixels.
_EXTRA: dict = {"share": 0.0, "glyphs": {}, "fonts": (), "faces": [], "face_share": 1 / 3}
# How many of its 52 cards a folder of real faces may lack (a photo set with a card not photographed or not found).
FACES_MISSING = 2


def use_extra_styles(share: float, glyphs: Path | None = None, faces: Path | Sequence[Path] | None = None,
                     face_share: float = 1 / 3, missing: int = 0) -> None:
    """With chance `share`, `random_style` gives a deck whose rank glyphs are a TrueType font's (from the atlas
    `glyphs`, as `vision/training/glyphs.py` writes it) or, with chance `face_share` where `faces` is given, a deck
    drawn by others: one of the folders `faces` (a deck a folder, upright faces named like `6s.png`, `10h.png`,
    `Qd.png`; a folder may lack up to `missing` cards, which that deck then draws in the style's own index). `share`
    0 turns them off."""
    _EXTRA["share"] = float(share)
    _EXTRA["face_share"] = float(face_share)
    if glyphs is not None:
        with np.load(glyphs) as atlas:
            _EXTRA["glyphs"] = {k: atlas[k] for k in atlas.files}
        _EXTRA["fonts"] = tuple(sorted({k.split("|")[0] for k in _EXTRA["glyphs"]}))
    if faces is not None:
        _EXTRA["faces"] = [_face_folder(Path(f), missing) for f in ([faces] if isinstance(faces, Path) else faces)]
    _face_cached.cache_clear()


def face_name(card: Card) -> str:
    """The file stem a folder of a deck's faces names a card's face by: 6s, 10h, Qd."""
    return f"{_RANK_TEXT[card.rank]}{card.suit.letter.lower()}"  # type: ignore[union-attr]


def _face_folder(folder: Path, missing: int) -> dict[Card, np.ndarray]:
    """The faces in `folder` by card; FileNotFoundError where more than `missing` of the 52 are not there."""
    found: dict[Card, np.ndarray] = {}
    for c in deck():
        name = face_name(c)
        path = next((p for p in (folder / f"{name}.png", folder / f"{name[0].upper() + name[1:]}.png",
                                 folder / f"{name}.jpg") if p.is_file()), None)
        image = None if path is None else cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is not None:
            found[c] = image
    if len(found) < 52 - missing:
        raise FileNotFoundError(f"{folder}: expected 52 card faces named like 6s.png"
                                f"{f' (at most {missing} missing)' if missing else ''}, found {len(found)}")
    return found


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
        decks = _EXTRA["faces"]
        if decks and rng.random() < _EXTRA["face_share"]:
            # One folder draws nothing more, so a run with one deck draws what it drew before several were allowed.
            return replace(style, faces=1 + (int(rng.integers(len(decks))) if len(decks) > 1 else 0))
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
    drawn_by_others = _EXTRA["faces"][style.faces - 1].get(card) if style.faces else None
    if drawn_by_others is not None:
        # Another designer's deck, its paper tinted like this style's.
        drawn = cv2.resize(drawn_by_others, (W, H), interpolation=cv2.INTER_AREA).astype(np.float32)
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
