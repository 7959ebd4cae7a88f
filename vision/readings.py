"""Readings of cards: a card's corners' probabilities pooled into a `Detection`, one card read or found twice kept
once, and where the cards a detector missed in a cascade must lie."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol, Sequence

import numpy as np

from controller.cards import Card, JOKER, Suit
from vision.cardrect import (CARD_ASPECT, Box, CardRect, Find, centred_within, corner_point, explains, rect_at_index,
                             same_card)

# Classifier rank head: 0..12 are ranks 2..14, then the joker, a card back, and "no index here".
RANK_CLASSES = 16
JOKER_CLASS, BACK, NONE = 13, 14, 15
# A card read at one index this surely (rank and suit) is not read at its other index, nor at its rectangle.
SURE = 0.8
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
# A card its indices name less surely than this is also read by its body (a sure index is left alone: on
# the validation frames 10% of the whole cards read right were named below 0.86, every one read wrong below 0.91).
_BODY_GATE = 0.9
# A suit probability is taken as at least this when two corners' readings multiply: one corner's zero must not veto.
SUIT_FLOOR = 1e-4


@dataclass(frozen=True)
class Detection:
    """One card seen in a frame. `card` is None when no index could be read (face down or covered);
    `confidence` is the probability of the named identity, `score` the detector's certainty that a card
    is there. `box` is the visible part (x0, y0, x1, y1), `rect` the whole card, in frame pixels."""

    card: Card | None
    confidence: float
    score: float
    box: Box
    rect: CardRect
    face_down: bool = False
    rank_confidence: float = 0.0
    suit_confidence: float = 0.0
    model: str = ""  # the enrolled deck model that named the card ("enrolled:<id>"), "" for the base readers
    # Reported for the dealer to confirm, never taken as read: its calibrated confidence is below the reader's unsure
    # threshold (vision/calibration.py), or it names a card the frame already shows (one deck holds each card once).
    unsure: bool = False

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
            "unsure": self.unsure,
        }


class Reader(Protocol):
    """What reads the cards in a frame or photo (`Recogniser`, `vision.photos.PhotoReader`)."""

    def identify(self, frame: np.ndarray) -> list[Detection]: ...


def pool(score: float, box: Box, rect: CardRect, ranks: np.ndarray,
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
    # at 0.7 and 0.7 make 0.84, over SURE), and a suit one corner rules out stays out. Validation, 12,020 cards:
    # 11,976 -> 11,978 right, false reports 105 -> 102 (the ranks multiplied too: 11,979, false 104; they stay
    # averaged).
    voting = w > 0
    suit_p = np.prod(np.maximum(suits[voting], SUIT_FLOOR), axis=0) if voting.sum() > 1 else \
        (suits * w[:, None]).sum(0)
    suit_p /= max(suit_p.sum(), 1e-9)
    suit = int(suit_p.argmax())
    card = Card(cls + 2, Suit(suit))
    return Detection(card, float(rank_p[cls] * suit_p[suit]), score, box, rect, rank_confidence=float(rank_p[cls]),
                     suit_confidence=float(suit_p[suit]))


def distinct(cards: list[Detection]) -> list[Detection]:
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


def merge_cards(found: list[Find], per_size: bool = False) -> list[Find]:
    """The detector's cards strongest first, a card found twice kept once (`per_size`: twice at one size)."""
    kept: list[Find] = []
    for f in sorted(found, key=lambda f: -f.score):
        if any((not per_size or f.size == k.size) and same_card(f.rect, f.box, k.rect, k.box) for k in kept):
            continue
        kept.append(f)
    return kept


def settle(named: list[Detection], read: list[Detection]) -> list[Detection]:
    """The cards its indices name (`named`) and the detector's cards read at their rectangles (`read`), a card read
    both ways kept once: the surer reading stands, whatever the other says."""
    named = list(named)
    for d in [d for d in named if d.confidence < SURE]:
        rivals = [m for m in read if m.card is not None and explains(d.rect, m.rect, m.box)]
        if any(m.confidence > d.confidence for m in rivals):
            named.remove(d)
        else:
            read = [m for m in read if not any(m is r for r in rivals)]
    return named + read


def merge_readings(cards: list[Detection]) -> list[Detection]:
    """One card read from several finds (a photo's sizes) kept once: a named reading before an unnamed one,
    then the surer one. On the training photos (the held-out ones unread) this found 417 of 424 cards
    instead of 411 when the stronger find was kept; on synthetic piles read as photos 74.4% against 71.4%."""
    kept: list[Detection] = []
    for d in sorted(cards, key=lambda d: (d.card is not None, d.confidence, d.score), reverse=True):
        if not any(same_card(d.rect, d.box, k.rect, k.box) for k in kept):
            kept.append(d)
    return kept


def lies_still(a: CardRect, b: CardRect) -> bool:
    """The same rectangle in two frames, to a tenth of its half-width and 3 degrees: a card that has not moved."""
    return (math.hypot(a.cx - b.cx, a.cy - b.cy) < 0.1 * a.half_w and abs(a.half_w - b.half_w) < 0.1 * a.half_w
            and a.ux * b.ux + a.uy * b.uy > 0.9986)


def unsure_black(probs: np.ndarray, suits: np.ndarray, ranks: frozenset[int], gate: float) -> np.ndarray:
    """The rows whose suit reads black less surely than `gate` and whose rank reads as one of the rank classes
    `ranks`."""
    black = np.isin(suits.argmax(1), (Suit.SPADES, Suit.CLUBS))
    ranked = np.isin(probs[:, :RANK_CLASSES].argmax(1), list(ranks))
    return np.nonzero(black & ranked & (suits.max(1) < gate))[0]


def multiply_suits(suits: np.ndarray, rows: np.ndarray, reading: np.ndarray) -> None:
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
    named = [d.rect for d in cards if d.card is not None and d.confidence >= SURE]
    # A hole card face down is a cascade's first card as surely: its corner is where an index would be (at either
    # end, as every named card's: a back has no way up).
    named += [d.rect for d in cards if d.face_down and d.confidence >= SURE]
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


def needs_body(d: Detection) -> bool:
    """Whether the body reader reads this card again: named, not a joker, and not surely."""
    return d.card is not None and not d.card.joker and d.confidence < _BODY_GATE


def one_reading_a_card(cards: Sequence[Detection], turned: bool = False, nested: bool = False) -> list[Detection]:
    """Surest first, a named reading dropped where a surer named reading lies at the same card's place: their
    rectangles' centres within `_ONE_PLACE` of a half-width (a cascade steps each card half a width or more from
    the one before, `_STEP_ACROSS`), or, with `turned` (photos, whose cards are read again turned by 90 degrees when
    read badly), within `_ONE_TURNED` and turned 45 degrees or more from it: one card read twice, once turned, names
    one card. With `nested` (photos), a surer reading's card also takes the smaller cards centred well inside its
    outline: two cards so far over each other lie at one depth and look one size, so a much smaller one there is
    the larger card's pips or picture read as a card (close photos of one card gave them). A card under another,
    seen as a sliver beside it, is centred near the other's edge, and its rectangle, guessed from the sliver, may be
    small: it stays. Readings naming no card are kept."""
    out: list[Detection] = []
    for d in sorted(cards, key=lambda d: -d.confidence):
        if d.card is not None and any(o.card is not None and (_one_place(o.rect, d.rect, turned)
                                                              or nested and _within(d.rect, o.rect)) for o in out):
            continue
        out.append(d)
    return out


def _within(inner: CardRect, outer: CardRect) -> bool:
    """`inner` is a smaller card (under `_NESTED` of `outer`'s width) centred within `_NESTED_CENTRE` of `outer`'s
    half-length and half-width from its centre."""
    return inner.half_w < _NESTED * outer.half_w and centred_within(outer, inner.cx, inner.cy, _NESTED_CENTRE)


# Two named readings this near (rectangles' centres, in the smaller half-width) are one card's.
_ONE_PLACE = 0.4
_ONE_TURNED = 0.8
# A card centred inside another's outline this much smaller than it is no card (`one_reading_a_card`, photos).
_NESTED = 0.85
_NESTED_CENTRE = 0.6


def _one_place(a: CardRect, b: CardRect, turned: bool) -> bool:
    gap = math.hypot(a.cx - b.cx, a.cy - b.cy) / min(a.half_w, b.half_w)
    return gap < _ONE_PLACE or (turned and gap < _ONE_TURNED and abs(a.ux * b.ux + a.uy * b.uy) < math.cos(math.pi / 4))


def flag_repeats(cards: Sequence[Detection], decks: int | None) -> list[Detection]:
    """Each card named more often than `decks` holds it (once a deck) flagged unsure, every reading of it: which of
    them is the card cannot be told, so the dealer looks, and none is dealt twice. `decks` None (not known): none."""
    if decks is None:
        return list(cards)
    counts: dict[Card, int] = {}
    for d in cards:
        if d.card is not None:
            counts[d.card] = counts.get(d.card, 0) + 1
    return [replace(d, unsure=True) if d.card is not None and counts[d.card] > decks else d for d in cards]
