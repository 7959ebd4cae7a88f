"""The shipped models on dealers' cascades: a card the detector missed between two named ones is looked for where its
index must be (`cascade_gaps`), read, and read again shifted where it reads unsurely."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from controller.cards import parse_card
from vision import evaluate
from vision.recognise import RANK_CLASSES, CardRect, Detection, Recogniser, cascade_gaps, corner_point, rect_at_index
from vision.training.data import rect_of_quad


@pytest.fixture(scope="module")
def rec() -> Recogniser:
    return Recogniser()


# A blackjack cascade of a validation frame (seed 777, the fourth dealt frame): the 5D under the 7S under the
# KS, as the detector of stop 22 found them: the 5D by its index and the KS whole, the 7S neither way (only its
# index shows, about ten pixels tall in the detector's input); its index is at (205, 103), turned the 5D's way.
_FIVE = CardRect(191.46, 109.21, 0.45, -0.89, 89.0, 63.57)
_SEVEN = CardRect(217.42, 177.48, 0.45, -0.89, 89.99, 64.28)
_KING = CardRect(230.82, 246.8, -0.59, 0.81, 90.97, 64.98)


def _named(card: str, rect: CardRect) -> Detection:
    return Detection(parse_card(card), 0.93, 0.66, (0.0, 0.0, 1.0, 1.0), rect)


def test_a_card_missed_in_a_cascade_is_looked_for_between_its_neighbours() -> None:
    gaps = cascade_gaps([_named("5D", _FIVE), _named("KS", _KING)])
    at = [(round(corner_point(r)[0]), round(corner_point(r)[1]), r.ux) for r in gaps]
    # Each pair both ways (which card lies under is not known): the 5D's way finds the 7S's index, read
    # both ways up; the KS's way points at the KS's own middle, where a reading finds no index.
    assert at[:2] == [(205, 103, 0.45), (205, 103, -0.45)]
    assert all(math.hypot(x - 217, y - 253) < 2 for x, y, _ in at[2:]) and len(at) == 4
    # Nothing is looked for where a named card's index is, between cards a step apart, or lying crosswise.
    named = cascade_gaps([_named("5D", _FIVE), _named("7S", _SEVEN), _named("KS", _KING)])
    assert not any(math.hypot(corner_point(r)[0] - 205, corner_point(r)[1] - 103) < 30 for r in named)
    assert cascade_gaps([_named("5D", _FIVE), _named("7S", _SEVEN)]) == []
    crosswise = CardRect(_KING.cx, _KING.cy, 0.89, 0.45, _KING.half_l, _KING.half_w)
    assert cascade_gaps([_named("5D", _FIVE), _named("KS", crosswise)]) == []
    # Only surely named cards count.
    assert cascade_gaps([_named("5D", _FIVE), dataclasses.replace(_named("KS", _KING), confidence=0.6)]) == []


def test_the_farthest_cascade_cascade_gaps_reaches_is_looked_in() -> None:
    # Two named cards three of the longest steps apart (the most a gap is looked for across), the second a quarter
    # smaller and turned 25 degrees either way: cascade_gaps' first, cheap test of their distance lets them through.
    a = rect_at_index(600.0, 300.0, 0.0, -1.0, 40.0)
    for side in (1, -1):
        step = (side * 1.24 * a.half_w, 0.74 * a.half_l)  # across (right or left), then along (down)
        for turn in (math.radians(25), -math.radians(25)):
            ux, uy = math.sin(turn), -math.cos(turn)
            b = rect_at_index(600.0 + 3 * step[0], 300.0 + 3 * step[1], ux, uy, 40.0 / 1.24)
            at = [corner_point(r) for r in cascade_gaps([_named("5D", a), _named("KS", b)])]
            for j in (1, 2):
                assert any(math.dist(p, (600.0 + j * step[0], 300.0 + j * step[1])) < 0.5 for p in at), (side, turn)


def test_a_cascade_named_at_the_corners_it_hides_is_looked_for_at_the_ones_it_shows() -> None:
    # The 5D named at its other index (or at its rectangle taken the other way up) lies the same way as the KS: the
    # corners the two were named at are the ones the cascade hides, and the 7S's index is looked for between the
    # corners it shows.
    gaps = cascade_gaps([_named("5D", _FIVE.flipped()), _named("KS", _KING)])
    assert [(round(corner_point(r)[0]), round(corner_point(r)[1]), r.ux) for r in gaps
            if math.dist(corner_point(r), (205, 103)) < 2] == [(205, 103, 0.45), (205, 103, -0.45)]


def test_a_hole_card_seen_face_down_is_a_cascades_first_card() -> None:
    # The 5D's place holding a card face down: the gap to the KS is looked for as from a named card, at both
    # of the back's ends (it has no way up); only the end the cascade steps from finds a point in range.
    back = Detection(None, 0.97, 0.7, (0.0, 0.0, 1.0, 1.0), _FIVE, face_down=True)
    at = [(round(corner_point(r)[0]), round(corner_point(r)[1])) for r in cascade_gaps([back, _named("KS", _KING)])]
    assert at.count((205, 103)) == 2 and all(p == (205, 103) or math.dist(p, (217, 253)) < 2 for p in at)
    assert cascade_gaps([dataclasses.replace(back, confidence=0.6), _named("KS", _KING)]) == []


def test_an_index_read_unsurely_in_a_gap_is_read_again_shifted(rec: Recogniser,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # A dealer's steps are uneven: the 7S's index lies a tenth of a width across from the point between the
    # 5D's and the KS's, where it reads unsurely (0.6); shifted onto it, it reads surely and names the card.
    gap = cascade_gaps([_named("5D", _FIVE), _named("KS", _KING)])[0]
    true = CardRect(gap.cx - gap.uy * 0.2 * gap.half_w, gap.cy + gap.ux * 0.2 * gap.half_w, gap.ux, gap.uy,
                    gap.half_l, gap.half_w)

    def read(f: np.ndarray, rects: list[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        ranks, suits = np.zeros((len(rects), RANK_CLASSES), np.float32), np.zeros((len(rects), 4), np.float32)
        for k, r in enumerate(rects):
            off = math.hypot(r.cx - true.cx, r.cy - true.cy) / r.half_w
            p = 0.95 if off < 0.01 and r.ux == true.ux else 0.6 if off < 0.25 and r.ux == true.ux else 0.0
            ranks[k, 5], suits[k, int(parse_card("7S").suit)] = p, p  # rank class 5 is the 7
            ranks[k, -1], suits[k, 0] = 1 - p, 1 - p
        return ranks, suits

    monkeypatch.setattr(rec, "_read", read)
    frame = np.zeros((720, 1280, 3), np.uint8)
    found = rec._read_gaps(frame, [_named("5D", _FIVE), _named("KS", _KING)])
    assert [(str(d.card), round(d.rect.cx, 2), round(d.rect.cy, 2)) for d in found] == \
        [("7S", round(true.cx, 2), round(true.cy, 2))]


@pytest.mark.slow
def test_identify_names_the_card_under_two_others_in_a_rendered_cascade(rec: Recogniser,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The eighth dealt frame of numpy's generator seeded 777: a cascade of 7S, 7H and 5C (and a hole card). The
    # shipped detector finds no index of the 7H, which lies between the 7S and the 5C, nor the card: only the gap
    # reading names it.
    rng = np.random.default_rng(777)
    for _ in range(8):
        shot = evaluate.synthetic_scene(rng)
    at = {str(pc.card): rect_of_quad(pc.quad) for pc in shot.cards if pc.card is not None}

    def named_near(found: list[Detection], card: str) -> list[str]:
        r = at[card]
        return [str(d.card) for d in found
                if d.card is not None and math.hypot(d.rect.cx - r.cx, d.rect.cy - r.cy) < 0.3 * r.half_w]

    found = rec.identify(shot.image)
    assert (named_near(found, "7S"), named_near(found, "7H"), named_near(found, "5C")) == (["7S"], ["7H"], ["5C"])
    monkeypatch.setattr(rec, "_read_gaps", lambda frame, cards: [])  # what this frame needs the gaps read for
    assert named_near(rec.identify(shot.image), "7H") == []
