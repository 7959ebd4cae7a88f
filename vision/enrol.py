"""Deck enrolment: the house's own deck learnt from its index corners, read after the base readers where sure.

A deck model is a set of labelled index corners (the 48x32 crops the base classifier reads), each described twice: a
HOG of its rank glyph, and a HOG of its suit sign with the share of the sign's ink that is red. A corner's rank is the
rank of the nearest enrolled glyph and its suit the suit of the nearest enrolled sign (so a spread's four looks at each
rank and thirteen at each suit all count); a card, each rank and suit at its nearer corner (`DeckModel.read`).
`combine` says how its reading and the base readers' make the table's: it stands where it is sure and the base readers
are not or agree; a sure disagreement leaves the card unsure. Learning is describing the crops (about a second for a
deck here): no training loop, nothing a Pi cannot do in seconds.

Examples come from a new deck spread under the camera in its factory order (`spread_examples`, orders per brand in
`deck_orders.toml`) or from play (`PlayCollector`: the camera's crop of a card the shoe dealt, labelled by the shoe).
`enrol` fits a model on the examples less a held-back part and reads that part with it and with the base readers;
a model that reads it worse than the base readers is refused (`accepted: false`), and `load_enrolled` never uses it.

Stored under the table's state folder (`deck_dir`): `<state>/<table id>.deck/model.npz` and `model.json` (the id is
the digest of the npz, checked on load), and the corners collected from play in `play/<card>/`.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import time
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import cv2
import numpy as np

from controller.cards import Card, Suit, parse_card

__all__ = ["EnrolError", "DeckModel", "Example", "ORDERS_FILE", "load_orders", "factory_order", "deck_dir",
           "spread_examples", "spread_cards", "paper_outlines", "fit", "enrol", "held_back", "load_enrolled",
           "PlayCollector", "play_examples", "crop_features", "combine", "OVERRULE", "MODEL_NPZ", "MODEL_JSON",
           "PLAY_DIR"]

log = logging.getLogger("croupier.vision.enrol")

ORDERS_FILE = Path(__file__).resolve().parent / "deck_orders.toml"
MODEL_NPZ, MODEL_JSON, PLAY_DIR = "model.npz", "model.json", "play"
METHOD = "hog-nearest-1"
# The rank glyph and the suit sign are described apart (x0, y0, x1, y1 in the 32x48 index crop, where the base
# classifier's crop puts them: `render.INDEX_REGION`), each by a HOG of 4 px cells, so that a card's rank is learnt
# from every suit's card of that rank and its suit from every card of that suit: a spread of one deck gives four
# looks at each rank glyph and thirteen at each suit. The right and bottom edges are left out: a big pip of the
# card's face lies there on many decks. The red share of the suit's ink adds two numbers, weighted so that red
# against black weighs about as much as a sign's shape does.
RANK_BOX = (0, 0, 24, 24)
SUIT_BOX = (0, 20, 24, 44)
_RED_WEIGHT = 0.35
# A reading's confidence: a softmax over the ranks' (and the suits') nearest squared distances between unit
# descriptions at _TEMPERATURE, the two multiplied (0.9 asks the next rank to lie about 0.05 farther). A corner whose
# nearest rank or suit lies farther than _FAR is no index of this deck (covered, felt, a neighbour's edge).
_TEMPERATURE = 0.02
_FAR = 1.0
# Each enrolled corner is described as cut and nudged a little (the camera's rectangle of a card is a few pixels
# and degrees off, and the detector's a few percent larger than the paper, cloth showing at the crop's edges):
# shifts in pixels of the 32x48 crop, scales (below 1: the crop cut from a larger rectangle), turns in degrees.
_JITTER = tuple((dx, dy, s, a) for dx, dy in ((0, 0), (-2, 0), (2, 0), (0, -2), (0, 2))
                for s, a in ((1.0, 0.0), (0.93, 0.0), (0.87, 0.0), (1.07, 0.0), (1.0, -4.0), (1.0, 4.0)))
_ROWS_PER_CARD = 2 * len(_JITTER)
_HELD_BACK = 4          # one corner in this many (by a stable hash) is held back to check the fitted model
PLAY_PER_CARD = 12      # corner pairs kept per card from play: the newest (the deck in use now)
# An enrolled reading overrules the base readers' sure reading of another card only this surely (`combine`): a house
# deck's glyph read at another scale or blur than it was enrolled at can look surely like its neighbour's (a small
# spade like a club; the renderer's deck enrolled at 80 px a card and read at 67 px did).
OVERRULE = 0.99


class EnrolError(ValueError):
    """Enrolment cannot go on: a one-line reason naming the input."""


def card_index(card: Card) -> int:
    """A suited card's label in a deck model (the factory orders hold no joker)."""
    assert card.suit is not None, f"{card}: the joker has no label in a deck model"
    return (card.rank - 2) * 4 + int(card.suit)


def index_card(k: int) -> Card:
    return Card(k // 4 + 2, Suit(k % 4))


# ------------------------------------------------------------------------------------------------ orders

def _run(entry: str, where: str) -> list[Card]:
    if "-" not in entry:
        return [parse_card(entry)]
    a, b = (parse_card(p) for p in entry.split("-", 1))
    if a.suit != b.suit or a.joker or b.joker:
        raise ValueError(f"{where}: a run {entry!r} must stay in one suit")
    # Aces count low in a run: new decks run ace to king (A-K up, K-A down).
    lo, hi = (1 if c.rank == 14 else c.rank for c in (a, b))
    step = 1 if hi >= lo else -1
    return [Card(14 if r == 1 else r, a.suit) for r in range(lo, hi + step, step)]


def load_orders(path: Path | None = None) -> dict[str, tuple[Card, ...]]:
    """The factory orders of `path` (default `deck_orders.toml`): brand -> its cards, first first."""
    path = path or ORDERS_FILE
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EnrolError(f"deck orders {path}: {exc}") from None
    orders: dict[str, tuple[Card, ...]] = {}
    for brand, section in data.items():
        where = f"{path.name}[{brand}].order"
        entries = section.get("order") if isinstance(section, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise EnrolError(f"{where}: expected a list of cards and runs like \"AS-KS\"")
        try:
            cards = [c for e in entries for c in _run(e.strip(), where)]
        except ValueError as exc:
            raise EnrolError(f"{where}: {exc}") from None
        if len(set(cards)) != len(cards):
            raise EnrolError(f"{where}: a card comes twice")
        orders[brand.lower()] = tuple(cards)
    return orders


def factory_order(brand: str, path: Path | None = None) -> tuple[Card, ...]:
    orders = load_orders(path)
    if brand.lower() not in orders:
        raise EnrolError(f"--order: no brand {brand!r} in {path or ORDERS_FILE} (known: {', '.join(sorted(orders))})")
    return orders[brand.lower()]


def deck_dir(config: Any) -> Path:
    """Where a table keeps its enrolled deck: beside its journal, `<table id>.deck/`."""
    return Path(config.journal).parent / f"{config.table_id}.deck"


# ------------------------------------------------------------------------------------------------ features

def _nudged(crop: np.ndarray, dx: float, dy: float, scale: float, angle: float) -> np.ndarray:
    if (dx, dy, scale, angle) == (0, 0, 1.0, 0.0):
        return crop
    h, w = crop.shape[:2]
    M = cv2.getRotationMatrix2D((w / 2, h / 2), angle, scale)
    M[:, 2] += np.array((dx, dy))
    return cv2.warpAffine(crop, M, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _hog(gray: np.ndarray, cell: int = 4) -> np.ndarray:
    """HOG of grey pictures (n, H, W) float32: `cell` px cells, 9 unsigned orientations, blocks of 2x2 cells every
    cell (blocks side by side, a third of the numbers, read the renderer's and EE326's held-back corners worse),
    each block L2-normalised; the whole unit length."""
    n, h, w = gray.shape
    gx = np.zeros_like(gray)
    gy = np.zeros_like(gray)
    gx[:, :, 1:-1] = gray[:, :, 2:] - gray[:, :, :-2]
    gy[:, 1:-1, :] = gray[:, 2:, :] - gray[:, :-2, :]
    mag = np.hypot(gx, gy)
    ang = (np.arctan2(gy, gx) % np.pi) / np.pi * 9
    lo = np.floor(ang).astype(np.int32) % 9
    frac = (ang - np.floor(ang)).astype(np.float32)
    ch, cw = h // cell, w // cell
    cy, cx = np.divmod(np.arange(h * w), w)
    cells = np.minimum(cy // cell, ch - 1) * cw + np.minimum(cx // cell, cw - 1)
    size = ch * cw * 9
    at = (np.arange(n)[:, None] * size + cells[None, :] * 9).ravel()
    hist: np.ndarray = (np.bincount(at + lo.ravel(), (mag * (1 - frac)).ravel(), n * size) +
                        np.bincount(at + (lo.ravel() + 1) % 9, (mag * frac).ravel(), n * size))
    hist = hist.astype(np.float32).reshape(n, ch, cw, 9)
    blocks = np.concatenate([hist[:, y:y + 2, x:x + 2].reshape(n, 1, 36) for y in range(ch - 1)
                             for x in range(cw - 1)], 1)
    blocks /= np.sqrt((blocks ** 2).sum(2, keepdims=True) + 1e-3)
    v = blocks.reshape(n, -1)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-6)


def crop_features(crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit descriptions of index crops (n, 48, 32, 3) BGR uint8: the rank glyph's (HOG of `RANK_BOX`) and the suit
    sign's (HOG of `SUIT_BOX`, and the share of its ink that is red)."""
    crops = np.asarray(crops)
    if not len(crops):
        return np.zeros((0, 1), np.float32), np.zeros((0, 1), np.float32)
    f = crops.astype(np.float32)
    gray = f @ np.array([0.114, 0.587, 0.299], np.float32)
    (rx0, ry0, rx1, ry1), (sx0, sy0, sx1, sy1) = RANK_BOX, SUIT_BOX
    rank = _hog(np.ascontiguousarray(gray[:, ry0:ry1, rx0:rx1]))
    suit = _hog(np.ascontiguousarray(gray[:, sy0:sy1, sx0:sx1]))
    g, c = gray[:, sy0:sy1, sx0:sx1], f[:, sy0:sy1, sx0:sx1]
    # Ink: darker than halfway between the paper (a bright percentile) and the darkest pixel.
    flat = g.reshape(len(crops), -1)
    ink = g < ((np.percentile(flat, 90, axis=1) + flat.min(1)) / 2)[:, None, None]
    red = (c[..., 2] - np.maximum(c[..., 0], c[..., 1])) > 40
    share = (red & ink).sum((1, 2)) / np.maximum(ink.sum((1, 2)), 1)
    suit = np.concatenate([suit, _RED_WEIGHT * np.stack([share, 1 - share], 1)], 1)
    suit /= np.linalg.norm(suit, axis=1, keepdims=True)
    return rank.astype(np.float32), suit.astype(np.float32)


# ------------------------------------------------------------------------------------------------ the model

@dataclass(frozen=True)
class Example:
    """One sighting of a card: its two index corners (2, 48, 32, 3) BGR uint8, labelled."""

    card: Card
    crops: np.ndarray
    source: str = ""


@dataclass(frozen=True)
class Reading:
    card: Card | None
    confidence: float
    distance: float


class DeckModel:
    """Enrolled corners' descriptions and cards; `read(crops)` names cards from their corner pairs."""

    def __init__(self, rank_features: np.ndarray, suit_features: np.ndarray, labels: np.ndarray,
                 meta: dict[str, Any]) -> None:
        self.rank_features = rank_features.astype(np.float32)
        self.suit_features = suit_features.astype(np.float32)
        self.labels = labels.astype(np.int16)
        self.meta = meta
        self.ranks = np.unique(self.labels // 4)
        self.suits = np.unique(self.labels % 4)
        # Each table's rows sorted by class, so that a class's nearest is one `minimum.reduceat` (a frame's cost).
        self._tables = []
        for feats, keys in ((self.rank_features, self.labels // 4), (self.suit_features, self.labels % 4)):
            order = np.argsort(keys, kind="stable")
            starts = np.searchsorted(keys[order], np.unique(keys))
            self._tables.append((np.ascontiguousarray(feats[order].T), starts))

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))

    def _distances(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per crop, the squared distance to each enrolled rank's nearest glyph (n, ranks) and suit's (n, suits)."""
        fr, fs = crop_features(crops)
        out = []
        for f, (table, starts) in zip((fr, fs), self._tables):
            if not len(f):
                out.append(np.zeros((0, len(starts)), np.float32))
                continue
            nearest = np.maximum.reduceat(f @ table, starts, axis=1)  # the most alike of each class
            out.append(np.maximum(2.0 - 2.0 * nearest, 0.0))
        return out[0], out[1]

    def read_corners(self, crops: np.ndarray) -> list[Reading]:
        """Each crop on its own."""
        dr, ds = self._distances(crops)
        return [self._reading(r, s) for r, s in zip(dr, ds)]

    def read(self, crops: np.ndarray) -> list[Reading]:
        """Cards from corner pairs (2n, 48, 32, 3), as `recognise.corner_crops` cuts them: per card, a rank's (a
        suit's) distance is its nearer corner's (a corner covered by felt or a back is far from every glyph and does
        not matter). Where each corner on its own names a card and their ranks differ, the model names none: an
        overlapped card's covered corner can show its neighbour's index, in this very deck's print (a fan, a
        cascade). Two corners of one rank that differ in suit are read together: a small club and spade are alike."""
        dr, ds = self._distances(crops)
        out = []
        for k in range(len(crops) // 2):
            one, other = self._reading(dr[2 * k], ds[2 * k]), self._reading(dr[2 * k + 1], ds[2 * k + 1])
            if one.card is not None and other.card is not None and one.card.rank != other.card.rank:
                out.append(Reading(None, 0.0, min(one.distance, other.distance)))
            else:
                out.append(self._reading(np.minimum(dr[2 * k], dr[2 * k + 1]), np.minimum(ds[2 * k], ds[2 * k + 1])))
        return out

    def _reading(self, ranks: np.ndarray, suits: np.ndarray) -> Reading:
        r, s = int(ranks.argmin()), int(suits.argmin())
        far = max(float(ranks[r]), float(suits[s]))
        if far > _FAR:
            return Reading(None, 0.0, far)
        pr = 1.0 / float(np.exp(-(ranks - ranks[r]) / _TEMPERATURE).sum())
        ps = 1.0 / float(np.exp(-(suits - suits[s]) / _TEMPERATURE).sum())
        return Reading(index_card(int(self.ranks[r]) * 4 + int(self.suits[s])), pr * ps, far)

    def save(self, folder: Path) -> str:
        """Write model.npz and model.json into `folder`; returns the id (the npz's digest)."""
        folder.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.savez_compressed(buf, rank=self.rank_features.astype(np.float16),
                            suit=self.suit_features.astype(np.float16), labels=self.labels)
        data = buf.getvalue()
        self.meta["id"] = hashlib.sha256(data).hexdigest()[:12]
        tmp = folder / (MODEL_NPZ + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(folder / MODEL_NPZ)
        tmp = folder / (MODEL_JSON + ".tmp")
        tmp.write_text(json.dumps(self.meta, indent=2) + "\n")
        tmp.replace(folder / MODEL_JSON)
        return self.id

    @classmethod
    def load(cls, folder: Path) -> DeckModel:
        data = (folder / MODEL_NPZ).read_bytes()
        meta = json.loads((folder / MODEL_JSON).read_text())
        digest = hashlib.sha256(data).hexdigest()[:12]
        if meta.get("id") != digest:
            raise EnrolError(f"{folder / MODEL_NPZ}: its digest {digest} is not the id {meta.get('id')!r} in "
                             f"{MODEL_JSON} (changed since enrolment)")
        z = np.load(io.BytesIO(data))
        return cls(z["rank"], z["suit"], z["labels"], meta)


def fit(examples: Sequence[Example] | Iterable[tuple[Card, np.ndarray]], meta: dict[str, Any] | None = None
        ) -> DeckModel:
    """A deck model of labelled corners: (card, crop (48, 32, 3)) pairs, or Examples (both corners each)."""
    pairs = _corner_pairs(examples)
    if not pairs:
        raise EnrolError("no labelled corners to enrol")
    # A card's corners are nudged fewer ways the more of them there are (from play: real sightings are the variety),
    # so that no card has more than _ROWS_PER_CARD descriptions: a model's size and a new card's reading stay those
    # of a spread's (two corners a card, nudged every way).
    count: dict[Card, int] = {}
    for card, _ in pairs:
        count[card] = count.get(card, 0) + 1
    nudged, labels_list = [], []
    for card, crop in pairs:
        ways = _JITTER[:max(1, min(len(_JITTER), _ROWS_PER_CARD // count[card]))]
        nudged += [_nudged(crop, *j) for j in ways]
        labels_list += [card_index(card)] * len(ways)
    rank, suit = crop_features(np.stack(nudged))
    labels = np.array(labels_list, np.int16)
    return DeckModel(rank, suit, labels, dict(meta or {}, method=METHOD, corners=len(pairs),
                                         cards=len(set(card for card, _ in pairs))))


def _corner_pairs(examples: Sequence[Example] | Iterable[tuple[Card, np.ndarray]]) -> list[tuple[Card, np.ndarray]]:
    """(card, crop) pairs: each Example's corners, pairs as they come."""
    pairs: list[tuple[Card, np.ndarray]] = []
    for item in examples:
        if isinstance(item, Example):
            pairs += [(item.card, c) for c in item.crops]
        else:
            pairs.append(item)
    return pairs


def held_back(examples: Sequence[Example]) -> tuple[list[tuple[Card, np.ndarray]], list[tuple[Card, np.ndarray]]]:
    """Corners to fit on and corners held back: one in `_HELD_BACK` by a stable hash of card, source and corner, and
    never a card's last corner (each enrolled card keeps one to be read by)."""
    fit_on: list[tuple[Card, np.ndarray]] = []
    back: list[tuple[Card, np.ndarray]] = []
    left: dict[Card, int] = {}
    for e in examples:
        left[e.card] = left.get(e.card, 0) + len(e.crops)
    for e in examples:
        for k, crop in enumerate(e.crops):
            key = f"{e.card}|{e.source}|{k}".encode()
            if zlib.crc32(key) % _HELD_BACK == 0 and left[e.card] > 1:
                back.append((e.card, crop))
                left[e.card] -= 1
            else:
                fit_on.append((e.card, crop))
    return fit_on, back


def combine(base: Card | None, base_confidence: float, reading: Reading, sure: float = 0.9
            ) -> tuple[Card | None, float, bool]:
    """A card as the table names it from the base readers' reading and the enrolled model's: (card, confidence,
    whether the enrolled model named it). The enrolled reading stands where it is sure and the base readers are not,
    or agree; against a sure base reading of another card only at `OVERRULE`, and below that the two disagreeing
    make the card unsure (the dealer looks), never a guess."""
    if reading.card is None or reading.confidence < sure:
        return base, base_confidence, False
    if reading.card == base:
        return base, max(reading.confidence, base_confidence), True
    if base is None or base_confidence < sure or reading.confidence >= OVERRULE:
        return reading.card, reading.confidence, True
    return base, min(base_confidence, 1 - reading.confidence), False


def base_read(recogniser: Any, crops: np.ndarray) -> list[tuple[Card | None, float]]:
    """What the base readers (classifier, and the second reader where it is unsure) name each crop on its own."""
    from vision.recognise import BACK, NONE, RANK_CLASSES, _SECOND_GATE

    if not len(crops):
        return []
    probs = recogniser.classifier(cv2.dnn.blobFromImages(list(crops), 1 / 255))
    if recogniser.second is not None:
        sure = np.minimum(probs[:, :RANK_CLASSES].max(1), probs[:, RANK_CLASSES:].max(1))
        shaky = np.nonzero((sure < _SECOND_GATE) & (probs[:, NONE] < 0.5))[0]
        if len(shaky):
            probs[shaky] = recogniser.second(cv2.dnn.blobFromImages(list(crops[shaky]), 1 / 255))
    out: list[tuple[Card | None, float]] = []
    for row in probs:
        rank, suit = int(row[:RANK_CLASSES].argmax()), int(row[RANK_CLASSES:].argmax())
        sure = float(row[rank] * row[RANK_CLASSES + suit])
        out.append((Card(rank + 2, Suit(suit)), sure) if rank < BACK - 1 else (None, float(row[rank])))
    return out


def enrol(examples: Sequence[Example], recogniser: Any, source: str,
          say: Callable[[str], None] = lambda s: None) -> DeckModel:
    """Fit a deck model on `examples` less the held-back part, and check it there against the base readers (the
    enrolled reading where it is sure, the base one elsewhere, as the table reads): `meta["accepted"]` is whether
    it reads the held-back corners at least as well."""
    t0 = time.perf_counter()
    fit_on, back = held_back(examples)
    model = fit(fit_on, {"source": source, "examples": len(examples), "created": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    fitted = time.perf_counter() - t0
    crops = np.stack([c for _, c in back]) if back else np.zeros((0, 48, 32, 3), np.uint8)
    truth = [card for card, _ in back]
    base = base_read(recogniser, crops)
    mine = model.read_corners(crops) if back else []
    combined = [combine(b, conf, m, recogniser_sure(recogniser))[0] for m, (b, conf) in zip(mine, base)]
    base_right = sum(b == t for (b, _), t in zip(base, truth))
    enrolled_right = sum(c == t for c, t in zip(combined, truth))
    model.meta.update(held_back={"corners": len(back), "enrolled_right": enrolled_right, "base_right": base_right},
                      accepted=enrolled_right >= base_right, seconds=round(time.perf_counter() - t0, 3),
                      fit_seconds=round(fitted, 3))
    say(f"enrolled {model.meta['cards']} cards from {len(fit_on)} corners in {fitted:.2f} s; held back "
        f"{len(back)} corners: enrolled {enrolled_right}, base readers {base_right} right")
    return model


def recogniser_sure(recogniser: Any) -> float:
    """The confidence at which an enrolled reading stands over the base readers'."""
    return float(getattr(recogniser, "enrolled_sure", 0.9))


def load_enrolled(folder: Path | None) -> DeckModel | None:
    """The enrolled deck model in `folder`, or None (none there, refused at enrolment, or changed since): each
    reason one log line."""
    if folder is None or not (folder / MODEL_JSON).is_file():
        return None
    try:
        model = DeckModel.load(folder)
    except (OSError, ValueError, KeyError) as exc:
        log.warning("enrolled deck model in %s not used: %s", folder, exc)
        return None
    hb = model.meta.get("held_back", {})
    if not model.meta.get("accepted"):
        log.warning("enrolled deck model %s refused: it read %s of its %s held-back corners, the base readers %s; "
                    "reading with the base readers", model.id, hb.get("enrolled_right"), hb.get("corners"),
                    hb.get("base_right"))
        return None
    log.info("enrolled deck model %s in use (%s cards from %s)", model.id, model.meta.get("cards"),
             model.meta.get("source"))
    return model


# ------------------------------------------------------------------------------------------------ sources

def spread_cards(frame: np.ndarray, min_area: float = 0.004) -> list[Any]:
    """The cards of a spread, laid apart on a darker or coloured cloth, as `CardRect`s in reading order (left to
    right, top row first): paper (bright, unsaturated) outlines of a card's shape. The detector is not asked: a
    spread is a controlled scene, and a card's own outline puts its index corners best."""
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
    bright = float(np.percentile(hsv[..., 2], 99))
    # Paper is the brightest unsaturated thing in sight; how bright the cloth is varies (a pale cloth, glare), so
    # three levels are tried and the one that outlines the most cards stands.
    rects = max((_paper_cards(frame, hsv, level * bright, min_area) for level in (0.6, 0.72, 0.84)), key=len)
    rows: list[list[Any]] = []
    for r in sorted(rects, key=lambda r: r.cy):
        if rows and r.cy - rows[-1][0].cy < max(r.half_l, rows[-1][0].half_l):
            rows[-1].append(r)
        else:
            rows.append([r])
    return [r for row in rows for r in sorted(row, key=lambda r: r.cx)]


def paper_finds(frame: np.ndarray, named: Sequence[Any]) -> list[Any]:
    """A photo's cards whose paper outline (`spread_cards`) holds no named reading's centre, as finds to read at
    their outline's corners: a close photo of one card, filling the frame, may give the detector no rectangle whose
    corners hold its index, where the paper's own outline does."""
    from vision.cardrect import Find, centred_within, in_frame

    return [Find(0.5, in_frame(r, frame), r, 0) for r in spread_cards(frame)
            if not any(d.card is not None and centred_within(r, d.rect.cx, d.rect.cy) for d in named)]


def paper_outlines(image: np.ndarray, hsv: np.ndarray, bright: float) -> Sequence[Any]:
    """The outer outlines of the card paper in `image` (`hsv`, the same in HSV): unsaturated and brighter than
    `bright`, closed then opened at 1/200 of the image's width so that ink on a card does not hole it and flecks of
    the cloth do not count."""
    mask: np.ndarray = ((hsv[..., 1] < 70) & (hsv[..., 2] > bright)).astype(np.uint8) * 255
    k = max(3, image.shape[1] // 200)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return contours


def _paper_cards(frame: np.ndarray, hsv: np.ndarray, bright: float, min_area: float) -> list[Any]:
    from vision.recognise import CardRect

    area = frame.shape[0] * frame.shape[1]
    rects = []
    for c in paper_outlines(frame, hsv, bright):
        (cx, cy), (w, h), angle = cv2.minAreaRect(c)
        if w * h < min_area * area or not 1.2 <= max(w, h) / max(min(w, h), 1) <= 1.7:
            continue
        # Two cards touching, a hand, a box: not one card's outline (the hull, as a court card's picture or a pale
        # index may bite into the paper's outline).
        if cv2.contourArea(cv2.convexHull(c)) < 0.9 * w * h:
            continue
        a = np.radians(angle)
        # minAreaRect's first side lies along (cos a, sin a); the card's up is along its longer side.
        ux, uy = (np.cos(a), np.sin(a)) if w >= h else (-np.sin(a), np.cos(a))
        rects.append(CardRect(float(cx), float(cy), float(ux), float(uy), max(w, h) / 2, min(w, h) / 2))
    return rects


def spread_examples(images: Sequence[Path], order: Sequence[Card]) -> list[Example]:
    """A new deck spread in `order` over `images` (each read left to right, top row first): one Example a card."""
    from vision.recognise import corner_crops

    found: list[tuple[str, np.ndarray]] = []
    counts = []
    for path in images:
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            raise EnrolError(f"--spread: cannot read image {str(path)!r}")
        rects = spread_cards(frame)
        counts.append(len(rects))
        crops = corner_crops(frame, rects) if rects else np.zeros((0, 48, 32, 3), np.uint8)
        found += [(f"{path.name}#{k}", crops[2 * k:2 * k + 2]) for k in range(len(rects))]
    if len(found) != len(order):
        odd = [f"{p.name}: {n}" for p, n in zip(images, counts)][:6] if len(images) > 1 else []
        raise EnrolError(f"--spread: found {len(found)} cards in {len(images)} image(s), the order has {len(order)} "
                         f"({'; '.join(odd)}{' ...' if len(images) > 6 else ''}): lay the cards apart on the cloth, "
                         "in rows")
    return [Example(card, crops, source) for card, (source, crops) in zip(order, found)]


class PlayCollector:
    """Corner pairs of cards the camera saw and the shoe dealt, labelled by the shoe, in `folder/play/<card>/`: at
    most `per_card` a card (the oldest go), so at most 52 * per_card small PNGs in all."""

    def __init__(self, folder: Path, per_card: int = PLAY_PER_CARD) -> None:
        self.folder = folder / PLAY_DIR
        self.per_card = per_card
        self._seq: dict[str, int] = {}

    def add(self, card: Card, crops: np.ndarray) -> Path:
        """Keep one sighting (2, 48, 32, 3) of `card` (the shoe's label); returns the file written."""
        where = self.folder / str(card)
        where.mkdir(parents=True, exist_ok=True)
        have = sorted(where.glob("*.png"), key=lambda p: int(p.stem))
        seq = self._seq.get(str(card), int(have[-1].stem) + 1 if have else 0)
        self._seq[str(card)] = seq + 1
        path = where / f"{seq}.png"
        ok, png = cv2.imencode(".png", np.concatenate(list(crops), axis=1))
        if not ok:
            raise EnrolError(f"cannot encode the corners of {card}")
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(png.tobytes())
        tmp.replace(path)
        for old in (have + [path])[:-self.per_card]:
            old.unlink(missing_ok=True)
        return path


def play_examples(folder: Path) -> list[Example]:
    """The sightings `PlayCollector` kept in `folder/play/`."""
    out: list[Example] = []
    root = folder / PLAY_DIR
    for where in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else ():
        try:
            card = parse_card(where.name)
        except ValueError:
            log.warning("enrolment: %s is no card's folder; left out", where)
            continue
        for path in sorted(where.glob("*.png"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1):
            img = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if img is None or img.shape != (48, 64, 3):
                log.warning("enrolment: %s is no pair of index corners; left out", path)
                continue
            out.append(Example(card, np.stack([img[:, :32], img[:, 32:]]), f"play/{card}/{path.name}"))
    return out
