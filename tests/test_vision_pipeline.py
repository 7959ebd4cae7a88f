"""The shipped models end to end: the crops each reader sees, the locator, the readers and how identify pools and
merges their readings (dealers' cascades: test_vision_cascades.py; the simulated table, the tracker and the commands:
test_vision_table.py)."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from controller.cards import parse_card
from controller.rng import SeededRng
from vision import evaluate, render
from vision.recognise import (BODY_H, BODY_NONE, BODY_RANKS, BODY_W, CROP_H, CROP_W, NONE, RANK_CLASSES, SIGN_REGION,
                              SIGN_SIZE, WIDE_H, WIDE_REGION, WIDE_W, CardRect, Detection, Recogniser,
                              body_crops, corner_crops, corner_point, index_crops, letterbox,
                              locator_crops, rect_at_index, sign_crops, wide_crops)
from vision.cardrect import Find
from vision.readings import distinct as _distinct
from vision.training.data import rect_of_quad


@pytest.fixture(scope="module")
def rec() -> Recogniser:
    return Recogniser()


def _lone_card(name: str, angle: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 600 px square of grey with one 200 x 280 card on it, turned by `angle`: (image, quad, card face)."""
    face = render.card_face(parse_card(name))
    img = np.full((600, 600, 3), 60, np.uint8)
    a = math.radians(angle)
    local = np.array([[-100.0, -140.0], [100.0, -140.0], [100.0, 140.0], [-100.0, 140.0]])
    quad = local @ np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]).T + 300
    render._composite(img, np.full((600, 600), -1, np.int32), face, quad, 0, 1.0)
    return img, quad, face


def _assert_show(crops: np.ndarray, face: np.ndarray, region: tuple[float, float, float, float],
                 size: tuple[int, int]) -> None:
    """Each crop shows `region` of the card's face (fractions of its width and height) at a reader's `size` (w, h)."""
    x0, y0, x1, y1 = (round(v * n) for v, n in zip(region, (200, 280) * 2))
    want = cv2.resize(np.ascontiguousarray(face[y0:y1, x0:x1, :3]), size, interpolation=cv2.INTER_AREA).astype(float)
    for crop in crops:
        assert np.abs(crop.astype(float) - want).mean() < 12


@pytest.mark.parametrize("angle", [0.0, 37.0, 180.0, 251.0])
def test_locator_squares_cut_from_the_halved_frame_match_the_full_ones(angle: float) -> None:
    # The run time cuts a square that shrinks twofold or more from the frame halved (a fifth of the cost); the
    # locator learnt from squares cut from the full frame, so the two must show the same picture. A square that
    # shrinks less (a small card) is cut from the full frame as before.
    img, quad, _ = _lone_card("7D", angle)
    half = cv2.pyrDown(img)
    big = rect_of_quad(quad)  # 100 px half-width: a 200 px square to 32 px
    small = dataclasses.replace(big, half_l=big.half_l / 4, half_w=big.half_w / 4)
    full, halved = locator_crops(img, [big, small]), locator_crops(img, [big, small], half)
    assert np.abs(full[0].astype(int) - halved[0]).mean() < 4
    assert np.array_equal(full[1], halved[1])


def test_the_detectors_input_is_the_same_from_the_halved_frame() -> None:
    frame = np.random.default_rng(5).integers(0, 256, (720, 1280, 3), np.uint8)
    for size in (384, 320, 224):
        small, s = letterbox(frame, size)
        again, s2 = letterbox(frame, size, cv2.pyrDown(frame))
        assert s == s2 and np.array_equal(small, again)


@pytest.mark.parametrize("angle", [0.0, 37.0, 180.0, 251.0])
def test_corner_crops_are_upright_index_corners(angle: float) -> None:
    img, quad, face = _lone_card("QH", angle)
    crops = corner_crops(img, [rect_of_quad(quad)])
    assert crops.shape == (2, CROP_H, CROP_W, 3)
    _assert_show(crops, face, render.INDEX_REGION, (CROP_W, CROP_H))


@pytest.mark.parametrize("angle", [0.0, 37.0, 180.0, 251.0])
def test_wide_crops_are_the_index_crops_and_the_strip_beside_them(angle: float) -> None:
    # At the index crop's scale: the wide reader sees the index exactly as the classifier does, and the top of the
    # strip of pips beside it.
    img, quad, face = _lone_card("7C", angle)
    rects = [rect_of_quad(quad), rect_of_quad(quad).flipped()]
    wide = wide_crops(img, rects)
    assert wide.shape == (2, WIDE_H, WIDE_W, 3)
    assert np.array_equal(wide[:, :, :CROP_W], index_crops(img, rects))
    _assert_show(wide, face, WIDE_REGION, (WIDE_W, WIDE_H))


@pytest.mark.parametrize("angle", [0.0, 37.0, 180.0, 251.0])
def test_sign_crops_are_the_square_about_a_court_pictures_sign(angle: float) -> None:
    # At either end of the card: the picture's bottom half is its top half turned half round.
    img, quad, face = _lone_card("KS", angle)
    crops = sign_crops(img, [rect_of_quad(quad), rect_of_quad(quad).flipped()])
    assert crops.shape == (2, SIGN_SIZE, SIGN_SIZE, 3)
    _assert_show(crops, face, SIGN_REGION, (SIGN_SIZE, SIGN_SIZE))


@pytest.mark.parametrize("angle", [0.0, 37.0, 180.0, 251.0])
def test_body_crops_are_upright_whole_cards(angle: float) -> None:
    img, quad, face = _lone_card("7C", angle)
    crop = body_crops(img, [rect_of_quad(quad)])
    assert crop.shape == (1, BODY_H, BODY_W, 3)
    _assert_show(crop, face, (0.0, 0.0, 1.0, 1.0), (BODY_W, BODY_H))  # the whole face


@pytest.mark.parametrize("angle", [0.0, 37.0, 180.0, 251.0])
@pytest.mark.parametrize("turn, across, along", [(-90.0, 0.0, 0.0), (-22.0, 0.15, 0.0), (14.0, -0.2, 0.1),
                                                  (0.0, 0.0, 0.3), (90.0, 0.1, -0.1), (180.0, 0.0, 0.0)])
def test_an_index_found_off_is_located_on_the_card(rec: Recogniser, angle: float, turn: float, across: float,
                                                   along: float) -> None:
    # The index head finds an index's place to about a tenth of a half-width and its direction to within ten
    # degrees or so, now and then a quarter turn or more off: the locator puts it on the index, the card's way up.
    img, quad, _ = _lone_card("TS", angle)
    true = rect_of_quad(quad)
    px, py = corner_point(true)
    a = math.atan2(true.uy, true.ux) + math.radians(turn)
    hw = true.half_w
    off = rect_at_index(px - true.uy * across * hw + true.ux * along * hw, py + true.ux * across * hw +
                        true.uy * along * hw, math.cos(a), math.sin(a), hw)
    ((score, got),) = rec._locate(img, [(0.5, off)], [])
    assert score == 0.5 and (got.half_w, got.half_l) == (off.half_w, off.half_l)
    assert math.dist(corner_point(got), (px, py)) < 0.1 * hw
    assert abs(math.degrees(math.atan2(got.ux * true.uy - got.uy * true.ux, got.ux * true.ux + got.uy * true.uy))) < 5


@pytest.mark.slow
def test_a_covered_cards_index_found_askew_reads_once_located(rec: Recogniser) -> None:
    # The second dealt frame of the validation seed (777): a 2S half under another card shows its lower index.
    # Found 20 degrees off either way, 0.3 of a half-width up the frame, or turned a quarter or half round, the crop shows
    # the index askew, cut or on its side, and the classifier reads it unsurely or as no index at all; located, it
    # reads 2S surely. (Built from the card's true index, so it holds whatever the detector finds.)
    gen = SeededRng(777).numpy()
    for _ in range(2):
        shot = evaluate.synthetic_scene(gen)
    want = parse_card("2S")
    two = next(pc for pc in shot.cards if pc.card == want)
    index = rect_of_quad(two.quad).flipped()
    px, py = corner_point(index)
    plain = Recogniser(second=False)
    for error, up in ((-20, 0.0), (20, 0.0), (0, 0.3), (90, 0.0), (-90, 0.0), (180, 0.0)):
        a = math.atan2(index.uy, index.ux) + math.radians(error)
        off = rect_at_index(px, py - up * index.half_w, math.cos(a), math.sin(a), index.half_w)
        (_, got), = rec._locate(shot.image, [(0.5, off)], [])
        ranks, suits = plain._read(shot.image, [off, got])
        askew, put_right = 0, 1
        assert min(ranks[askew].max(), suits[askew].max()) < 0.7
        assert (int(ranks[put_right].argmax()), int(suits[put_right].argmax())) == (want.rank - 2, int(want.suit))
        assert min(ranks[put_right].max(), suits[put_right].max()) > 0.9


def test_the_locator_drops_a_find_that_is_no_index_and_looks_at_a_found_cards_corners(rec: Recogniser) -> None:
    # A 9C: a find on its middle pip, one on the felt beside it, and its two true indices. The pip and the felt
    # are dropped. Found as a card with no index found, its two index corners are looked at and located.
    img, quad, _ = _lone_card("9C", 20.0)
    true = rect_of_quad(quad)
    hw = true.half_w
    pip = rect_at_index(true.cx, true.cy, true.ux, true.uy, hw)
    felt = rect_at_index(true.cx + 2.2 * hw, true.cy, true.ux, true.uy, hw)
    assert rec._locate(img, [(0.4, pip), (0.3, felt)], []) == []
    nudged = dataclasses.replace(true, cx=true.cx + 0.1 * hw, cy=true.cy - 0.1 * hw)
    got = rec._locate(img, [], [nudged])
    assert len(got) == 2
    for (_, r), want in zip(got, (true, true.flipped())):
        assert math.dist(corner_point(r), corner_point(want)) < 0.1 * hw and r.ux * want.ux + r.uy * want.uy > 0.99
    # A corner where the detector found an index already is not looked at again: the index is read there once.
    ((_, again),) = rec._locate(img, [(0.6, true)], [nudged])[1:]
    assert math.dist(corner_point(again), corner_point(true.flipped())) < 0.1 * hw


def test_two_indices_seen_as_one_are_both_located() -> None:
    # A KD under a QS in a cascade, their indices 0.8 of a half-width apart: at the detector's scale the two may make
    # one peak, between them. The locator takes the QS's; the square as far the other way shows the KD's.
    img = np.full((360, 480, 3), (40, 90, 30), np.uint8)
    cw, ch = 90.0, 90.0 * render.CARD_H / render.CARD_W
    quads = {}
    for k, (name, (cx, cy)) in enumerate({"KD": (200.0, 180.0), "QS": (200 + 0.35 * cw, 180 + 0.15 * ch)}.items()):
        quads[name] = np.array([[-cw, -ch], [cw, -ch], [cw, ch], [-cw, ch]]) / 2 + (cx, cy)
        render._composite(img, np.full((360, 480), -1, np.int32), render.card_face(parse_card(name)), quads[name], k,
                          1.0)
    img = cv2.GaussianBlur(img, (0, 0), 0.8)
    kd, qs = (rect_of_quad(quads[name]) for name in ("KD", "QS"))
    (ax, ay), (bx, by), hw = corner_point(kd), corner_point(qs), kd.half_w
    between = rect_at_index((ax + bx) / 2, (ay + by) / 2, kd.ux, kd.uy, hw)
    rec = Recogniser()
    twins: list[tuple[float, CardRect]] = []
    ((score, got),) = rec._locate(img, [(0.6, between)], [], None, twins)
    ((twin_score, twin),) = twins
    assert score == twin_score == 0.6
    assert math.dist(corner_point(got), (bx, by)) < 0.2 * hw
    assert math.dist(corner_point(twin), (ax, ay)) < 0.1 * hw
    assert rec._locate(img, [(0.6, between)], []) == [(score, got)]  # no twins asked for: none looked for


def test_an_index_moved_far_has_the_square_the_other_way_looked_at() -> None:
    # A stand-in locator: the first find it moves 0.3 of a half-width right (its twin looked for 0.45 left of the
    # find, and seen 0.05 right of there), the second 0.1 (no twin looked for), the third 0.3 down (its twin looked
    # for, but seen where the first find was moved: one index, not two).
    rec = Recogniser(refine=False, body=False)
    answers = [np.array([[1, 0.3, 0, 1, 0], [1, 0.1, 0, 1, 0], [1, 0, 0.3, 1, 0]], np.float32),
               np.array([[0.9, 0.05, 0, 1, 0], [0.9, 0, 0.75, 1, 0]], np.float32)]
    shown = []

    def locator(blob: np.ndarray) -> np.ndarray:
        shown.append(len(blob))
        return answers[len(shown) - 1]

    rec.locator = locator  # type: ignore[assignment]
    finds = [(0.7, rect_at_index(100.0, 100.0, 0.0, -1.0, 40.0)), (0.6, rect_at_index(300.0, 100.0, 0.0, -1.0, 40.0)),
             (0.5, rect_at_index(112.0, 88.0, 0.0, -1.0, 40.0))]
    twins: list[tuple[float, CardRect]] = []
    kept = rec._locate(np.full((300, 400, 3), 60, np.uint8), finds, [], None, twins)
    assert shown == [3, 2]
    assert [(score, tuple(round(v) for v in corner_point(r))) for score, r in kept] == [(0.7, (112, 100)),
                                                                                      (0.6, (304, 100)),
                                                                                      (0.5, (112, 100))]
    assert [(score, tuple(round(v) for v in corner_point(r))) for score, r in twins] == [(0.7, (84, 100))]


def test_a_sure_index_off_the_found_cards_counts_only_beside_one() -> None:
    # A cascade whose last card the detector missed: it found only the QD on top, and the 7C's index lies off
    # the QD's box (the card it implies too). Read surely, and its card overlapping the QD, the 7C counts. A
    # 4H's index lying alone, far from any card found, does not: ink the detector saw no card at.
    def at(cx: float, cy: float) -> np.ndarray:
        return np.array([[-100.0, -140.0], [100.0, -140.0], [100.0, 140.0], [-100.0, 140.0]]) + (cx, cy)

    img = np.full((600, 800, 3), 60, np.uint8)
    quads = {"7C": at(300, 300), "QD": at(420, 440), "4H": at(660, 160)}
    for k, (name, quad) in enumerate(quads.items()):
        render._composite(img, np.full((600, 800), -1, np.int32), render.card_face(parse_card(name)), quad, k, 1.0)
    rects = {name: rect_of_quad(quad) for name, quad in quads.items()}
    rec = Recogniser(refine=False, body=False)
    found = [Find(0.9, (320.0, 300.0, 520.0, 580.0), rects["QD"], 0)]
    indices = [(0.6, rects["QD"]), (0.5, rects["7C"]), (0.5, rects["4H"])]
    rec._detect = lambda frame: (found, indices, [], [])  # type: ignore[method-assign]
    assert sorted(str(d.card) for d in rec.identify(img)) == ["7C", "QD"]


class _Net:
    """A stand-in network: gives the rows it is made with, one per input it is shown (each `shape`, C x H x W),
    and keeps how many it was shown."""

    def __init__(self, rows: list[np.ndarray], shape: tuple[int, int, int] = (3, CROP_H, CROP_W)) -> None:
        self.rows, self.shape, self.shown = rows, shape, 0

    def __call__(self, blob: np.ndarray) -> np.ndarray:
        assert blob.shape[1:] == self.shape
        self.shown = len(blob)
        return np.stack(self.rows[:self.shown])


def _corner_row(rank_class: int, rank_p: float, suit: str, suit_p: float) -> np.ndarray:
    row = np.full(RANK_CLASSES + 4, 0.0, np.float32)
    row[rank_class] = rank_p
    row[RANK_CLASSES + "CDHS".index(suit)] = suit_p
    return row


def test_the_second_reader_reads_only_the_corners_read_unsurely_and_its_reading_stands(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Four corners: read surely (a 9 of clubs), as no index (felt), unsurely (5 or 8, spades or clubs), and
    # just below the gate (a 9 at 0.96, hearts at 0.88). Only the last two go to the second reader, and its
    # readings stand (an unsure black suit read again at two scales is tested on its own).
    monkeypatch.setattr("vision.recognise._SCALE_GATE", 0.0)
    rec = Recogniser()
    sure, felt, shaky, nearly = (_corner_row(7, 0.93, "C", 0.92), _corner_row(NONE, 0.9, "H", 0.3),
                                 _corner_row(3, 0.5, "S", 0.55), _corner_row(7, 0.96, "H", 0.88))
    second = [_corner_row(3, 0.9, "C", 0.85), _corner_row(7, 0.99, "H", 0.98)]
    rec.classifier, rec.second = _Net([sure, felt, shaky, nearly]), _Net(second)  # type: ignore[assignment]
    rec.wide = rec.sign = None
    rects = [CardRect(100.0 + 50 * k, 100.0, 0.0, -1.0, 40.0, 28.0) for k in range(4)]
    ranks, suits = rec._read(np.full((300, 400, 3), 60, np.uint8), rects)
    assert rec.second.shown == 2
    np.testing.assert_allclose(np.hstack([ranks, suits]), np.stack([sure, felt] + second))


def test_the_wide_reader_reads_only_a_number_cards_unsure_black_suit_and_the_readings_multiply(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As on the validation frames: a 2C whose blurred index read spades at 0.81 (the wide crop shows a club pip
    # plainly), and a 7S read spades at 0.9 whose strip reads clubs at 0.6 (spades stay). A sure 4C, a court
    # card's unsure suit (its strip is its picture), a red suit, and no index are not read again by it (nor at
    # two scales, tested on its own).
    monkeypatch.setattr("vision.recognise._SCALE_GATE", 0.0)
    rec = Recogniser()
    rows = [_corner_row(0, 0.95, "S", 0.81), _corner_row(5, 0.9, "S", 0.9), _corner_row(2, 0.97, "C", 0.97),
            _corner_row(10, 0.9, "S", 0.8), _corner_row(7, 0.9, "H", 0.7), _corner_row(NONE, 0.9, "S", 0.6)]
    for row in rows:  # the rest of each suit's probability on the other black suit
        row[RANK_CLASSES + (0 if row[RANK_CLASSES + 3] else 3)] = 1 - row[RANK_CLASSES:].sum()
    wide = [_corner_row(NONE, 0.0, "C", 0.97), _corner_row(NONE, 0.0, "C", 0.6)]
    wide[0][RANK_CLASSES + 3], wide[1][RANK_CLASSES + 3] = 0.03, 0.4
    rec.classifier, rec.second, rec.sign = _Net(rows), None, None  # type: ignore[assignment]
    rec.wide = _Net(wide, (3, WIDE_H, WIDE_W))  # type: ignore[assignment]
    rects = [CardRect(60.0 + 60 * k, 100.0, 0.0, -1.0, 40.0, 28.0) for k in range(6)]
    _, suits = rec._read(np.full((300, 400, 3), 60, np.uint8), rects)
    assert rec.wide.shown == 2
    assert ["CDHS"[k] for k in suits.argmax(1)] == ["C", "S", "C", "S", "H", "S"]
    clubs = 0.19 * 0.97 / (0.19 * 0.97 + 0.81 * 0.03)
    np.testing.assert_allclose(suits[0], [clubs, 0, 0, 1 - clubs], rtol=1e-5)
    np.testing.assert_allclose(suits[1], [0.06 / 0.42, 0, 0, 0.36 / 0.42], rtol=1e-5)
    np.testing.assert_allclose(suits[2:], np.stack(rows[2:])[:, RANK_CLASSES:])


def test_the_sign_reader_reads_only_a_court_cards_unsure_black_suit_and_the_readings_multiply(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As on the validation frames: a KC whose blurred index read spades at 0.7, its picture's sign a club at 0.9
    # (clubs win: 0.3 x 0.9 against 0.7 x 0.08); a QS read spades at 0.85 whose sign is covered (no change); a JC read
    # clubs at 0.9, its sign clubs at 0.65. A sure KC, a number card's and a red court card's unsure suits and no
    # index are not read by it (nor at two scales, tested on its own).
    monkeypatch.setattr("vision.recognise._SCALE_GATE", 0.0)
    rows = [_corner_row(11, 0.95, "S", 0.7), _corner_row(10, 0.9, "S", 0.85), _corner_row(9, 0.9, "C", 0.9),
            _corner_row(11, 0.97, "C", 0.97), _corner_row(5, 0.9, "S", 0.8), _corner_row(11, 0.9, "H", 0.7),
            _corner_row(NONE, 0.9, "S", 0.6)]
    for row in rows:  # the rest of each suit's probability on the other black suit
        row[RANK_CLASSES + (0 if row[RANK_CLASSES + 3] else 3)] = 1 - row[RANK_CLASSES:].sum()
    signs = [np.array([0.9, 0.08, 0.02], np.float32), np.array([0.2, 0.1, 0.7], np.float32),
             np.array([0.65, 0.3, 0.05], np.float32)]
    rec = Recogniser()
    rec.classifier, rec.second, rec.wide = _Net(rows), None, None  # type: ignore[assignment]
    rec.sign = _Net(signs, (3, SIGN_SIZE, SIGN_SIZE))  # type: ignore[assignment]
    rects = [CardRect(60.0 + 60 * k, 100.0, 0.0, -1.0, 40.0, 28.0) for k in range(7)]
    _, suits = rec._read(np.full((300, 400, 3), 60, np.uint8), rects)
    assert rec.sign.shown == 3
    assert ["CDHS"[k] for k in suits.argmax(1)] == ["C", "S", "C", "C", "S", "H", "S"]
    np.testing.assert_allclose(suits[0], [0.27 / 0.326, 0, 0, 0.056 / 0.326], rtol=1e-5)
    np.testing.assert_allclose(suits[2], [0.585 / 0.615, 0, 0, 0.03 / 0.615], rtol=1e-5)
    untouched = [1, 3, 4, 5, 6]
    np.testing.assert_allclose(suits[untouched], np.stack([rows[k] for k in untouched])[:, RANK_CLASSES:])


def test_an_unsure_black_suit_is_read_again_cut_smaller_and_larger_and_the_readings_averaged() -> None:
    # A 9 read spades at 0.6 (clubs 0.4): read again at the index crop cut 8% smaller (clubs 0.8) and larger (clubs
    # 0.5), the three suit readings averaged: clubs (0.4 + 0.8 + 0.5) / 3. A sure 4C, an unsure red suit and no index
    # are not read again; without a second reader the classifier reads the two crops.
    rows = [_corner_row(7, 0.95, "S", 0.6), _corner_row(2, 0.97, "C", 0.97), _corner_row(7, 0.95, "H", 0.7),
            _corner_row(NONE, 0.9, "S", 0.6)]
    rows[0][RANK_CLASSES] = 0.4
    rows[1][RANK_CLASSES + 3] = rows[2][RANK_CLASSES] = rows[3][RANK_CLASSES] = 0.03
    smaller, larger = _corner_row(7, 0.9, "C", 0.8), _corner_row(7, 0.9, "C", 0.5)
    smaller[RANK_CLASSES + 3], larger[RANK_CLASSES + 3] = 0.2, 0.5
    batches = [np.stack(rows), smaller[None], larger[None]]
    shown: list[int] = []

    def classifier(blob: np.ndarray) -> np.ndarray:
        shown.append(len(blob))
        return batches.pop(0)

    rec = Recogniser()
    rec.classifier, rec.second, rec.wide, rec.sign = classifier, None, None, None  # type: ignore[assignment]
    rects = [CardRect(60.0 + 60 * k, 100.0, 0.0, -1.0, 40.0, 28.0) for k in range(4)]
    _, suits = rec._read(np.full((300, 400, 3), 60, np.uint8), rects)
    assert shown == [4, 1, 1]
    np.testing.assert_allclose(suits[0], [1.7 / 3, 0, 0, 1.3 / 3], rtol=1e-5)
    np.testing.assert_allclose(suits[1:], np.stack(rows[1:])[:, RANK_CLASSES:])


@pytest.mark.parametrize("scale", [0.92, 1.08])
def test_a_rect_scaled_about_its_index_keeps_the_index_where_it_is(scale: float) -> None:
    from vision.recognise import corner_point, scaled_about_index
    r = CardRect(300.0, 200.0, 0.6, -0.8, 60.0, 42.0)
    s = scaled_about_index(r, scale)
    np.testing.assert_allclose(corner_point(s), corner_point(r), atol=1e-9)
    assert (s.ux, s.uy) == (r.ux, r.uy)
    assert s.half_l == pytest.approx(60.0 * scale) and s.half_w == pytest.approx(42.0 * scale)


def _body_row(rank: int | None, rank_p: float, suit: str, suit_p: float) -> np.ndarray:
    row = np.zeros(BODY_RANKS + 4, np.float32)
    row[BODY_NONE if rank is None else rank - 2] = rank_p
    row[BODY_RANKS + "CDHS".index(suit)] = suit_p
    return row


def test_an_unsure_card_takes_the_rank_and_the_suit_its_body_reads_surer() -> None:
    # As on the validation frames: a whole 5C whose blurred index read 8C, a whole 3S read 3C. A court card's
    # suit stays its index's (its body is a picture); a sure card is not read again; a card in which the body
    # reader sees no whole card keeps its index's reading. Its suit counts only with the rank it names (at
    # least _BODY_SUIT_RANK): a 2S whose body crop, off over the 2C beside it, reads "2" at 0.28 and clubs
    # surely stays a spade, and so does a 9D whose body crop reads another rank.
    def seen(card: str, rank_p: float, suit_p: float, x: float) -> Detection:
        return Detection(parse_card(card), rank_p * suit_p, 0.9, (x - 40, 0, x + 40, 110),
                         CardRect(x, 60.0, 0.0, -1.0, 56.0, 40.0), rank_confidence=rank_p, suit_confidence=suit_p)

    cards = [seen("8C", 0.57, 0.91, 50), seen("3C", 0.98, 0.67, 150), seen("KH", 0.9, 0.6, 250),
             seen("AH", 0.99, 0.97, 350), seen("4D", 0.6, 0.9, 450), seen("2S", 0.93, 0.93, 550),
             seen("9D", 0.95, 0.6, 650)]
    body = _Net([_body_row(5, 0.9, "S", 0.8), _body_row(3, 0.7, "S", 0.85), _body_row(13, 0.95, "D", 0.95),
                 _body_row(None, 0.7, "D", 0.9), _body_row(2, 0.28, "C", 0.98), _body_row(6, 0.7, "C", 0.9)],
                (3, BODY_H, BODY_W))
    read = Recogniser.__new__(Recogniser)
    read.body = body
    out = read._read_bodies(np.zeros((120, 700, 3), np.uint8), cards, [], [])
    assert body.shown == 6  # the AH, named surely, is not read again
    assert [str(d.card) for d in out] == ["5C", "3S", "KH", "AH", "4D", "2S", "9D"]
    assert [(round(d.rank_confidence, 2), round(d.suit_confidence, 2)) for d in out] == \
        [(0.9, 0.91), (0.98, 0.85), (0.95, 0.6), (0.99, 0.97), (0.6, 0.9), (0.93, 0.93), (0.95, 0.6)]
    assert out[0].confidence == pytest.approx(0.9 * 0.91) and out[3] is cards[3] and out[4] is cards[4]


def test_one_card_named_twice_keeps_its_surer_reading_however_sure_its_index_find() -> None:
    # As on a validation frame: a 2S read at 0.98 at one index and at 0.87 at the other, which the locator was
    # surer is an index; the 2C under it, a third of a width off, is another card.
    def seen(card: str, confidence: float, score: float, x: float) -> Detection:
        return Detection(parse_card(card), confidence, score, (x - 40, 0, x + 40, 110),
                         CardRect(x, 60.0, 0.0, -1.0, 56.0, 40.0))

    sure, other, neighbour = seen("2S", 0.98, 0.7, 100), seen("2S", 0.87, 1.0, 110), seen("2C", 0.95, 0.6, 125)
    assert _distinct([other, sure, neighbour]) == [sure, neighbour]


def test_the_body_is_read_at_the_detectors_rectangle_of_the_same_card() -> None:
    # A card named by its index carries the rectangle the index implies, a little off; the detector's own
    # rectangle of that card is read instead, sharpened. The card on top of another in a cascade, a third of
    # a width off, is not taken for it; a card the detector found nowhere near is read at its own rectangle.
    img, quad, _ = _lone_card("7C", 20.0)
    true = rect_of_quad(quad)
    hw = true.half_w
    implied = dataclasses.replace(true, cx=true.cx + 0.15 * hw, half_w=hw * 0.9)
    rec = Recogniser(refine=False)
    named = Detection(parse_card("7S"), 0.6, 0.9, (0, 0, 600, 600), implied)
    finds = [Find(0.9, (0.0, 0.0, 600.0, 600.0), dataclasses.replace(true, cx=true.cx + 0.4 * hw), 0),
             Find(0.8, (0.0, 0.0, 600.0, 600.0), true, 0)]
    assert rec._body_rect(named, finds, [(img, 1.0)]) == true
    assert rec._body_rect(named, finds[:1], [(img, 1.0)]) == implied


@pytest.mark.slow
def test_identify_names_a_whole_card_its_blurred_index_misreads(rec: Recogniser) -> None:
    # The thirteenth dealt frame of the validation seed (777): an 8D in full sight whose blurred index stop 34's
    # classifier read 5D; since issue 37's index readers it reads 8D, unsurely, and its eight pips make it sure.
    gen = SeededRng(777).numpy()
    for _ in range(12):
        evaluate.synthetic_scene(gen)
    shot = evaluate.synthetic_scene(gen)
    eight = next(pc for pc in shot.cards if pc.card == parse_card("8D"))

    def named(reader: Recogniser) -> list[tuple[str, float]]:
        return [(str(d.card), d.confidence) for d in reader.identify(shot.image) if d.card is not None and
                evaluate._inside(d.box, eight.box)]

    # The readers' own confidences (vision/calibration.py maps them to the chance of being right afterwards).
    [(index_alone, unsure)] = named(Recogniser(body=False, second=False, calibrate=False))
    [(with_body, sure)] = named(Recogniser(second=False, calibrate=False))
    assert index_alone == with_body == "8D" and unsure < 0.9 <= sure
    assert [c for c, _ in named(rec)] == ["8D"]


def test_bad_frames_are_refused(rec: Recogniser) -> None:
    for bad in (np.zeros((100, 100), np.uint8), np.zeros((100, 100, 3), np.float32), np.zeros((8, 8, 3), np.uint8)):
        with pytest.raises(ValueError):
            rec.identify(bad)
    assert rec.identify(np.full((360, 640, 3), 90, np.uint8)) == []


def test_a_cascade_neighbours_index_is_not_taken_for_a_cards_other_index(rec: Recogniser,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Found in a rendered cascade: the 8S's two indices, and the 9H's top index just beside the 8S's, pointing
    # the other way and implying a card a third of a width from the 8S. Taken first (scores in order), the 9H's
    # index was paired with the 8S's and the 9H went unnamed; the closest pair is the 8S's own two.
    eight_top = CardRect(193, 305, -0.34, -0.94, 50 * 1.4, 50)
    eight_bottom = CardRect(188, 300, 0.25, 0.97, 57 * 1.4, 57)
    nine_top = CardRect(220, 285, 0.38, 0.92, 55 * 1.4, 55)
    names = {eight_top: "8S", eight_bottom: "8S", nine_top: "9H"}

    def read(frame: np.ndarray, rects: list[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        ranks, suits = np.zeros((len(rects), RANK_CLASSES), np.float32), np.zeros((len(rects), 4), np.float32)
        for k, r in enumerate(rects):
            card = parse_card(names[r])
            ranks[k, card.rank - 2], suits[k, int(card.suit)] = 0.95, 0.95
            ranks[k, -1], suits[k, (int(card.suit) + 1) % 4] = 0.05, 0.05
        return ranks, suits

    monkeypatch.setattr(rec, "_read", read)
    found = rec.read_indices(np.zeros((720, 1280, 3), np.uint8),
                              [(0.57, eight_top), (0.49, nine_top), (0.45, eight_bottom)])
    assert sorted(str(d.card) for d in found) == ["8S", "9H"]


def test_a_cards_other_index_is_read_when_the_first_names_it_unsurely(rec: Recogniser,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # From a validation frame: a KS's likelier index reads a K at 0.9 and a club at 0.86 (each above 0.8, the
    # card at 0.77); its other index, plain, reads KS. Both are read and pooled, and the spade wins.
    king = CardRect(552, 336, 0.97, 0.24, 97, 68)

    def read(f: np.ndarray, rects: list[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        ranks, suits = np.zeros((len(rects), RANK_CLASSES), np.float32), np.zeros((len(rects), 4), np.float32)
        for k, r in enumerate(rects):
            ranks[k, 11] = 0.9 if r == king else 0.99
            suits[k] = (0.86, 0.02, 0.02, 0.10) if r == king else (0.0, 0.005, 0.005, 0.99)
            ranks[k, -1] = 1 - ranks[k, 11]
        return ranks, suits

    monkeypatch.setattr(rec, "_read", read)
    found = rec.read_indices(np.zeros((720, 1280, 3), np.uint8), [(0.73, king), (0.66, king.flipped())])
    assert [str(d.card) for d in found] == ["KS"]


def test_two_corners_suit_readings_multiply() -> None:
    # Two indices that each read clubs at 0.7 (spades 0.3) are two looks that agree: the card is a club at
    # 0.49 / (0.49 + 0.09) = 0.845, over _SURE (averaged, it stayed at 0.7). A suit one corner rules out stays out.
    from vision.readings import pool as _pool
    rect = CardRect(552, 336, 1.0, 0.0, 97, 68)
    ranks = np.zeros((2, RANK_CLASSES), np.float32)
    ranks[:, 11] = 0.99
    d = _pool(0.9, (0, 0, 1, 1), rect, ranks, np.array([[0.7, 0, 0, 0.3], [0.7, 0, 0, 0.3]], np.float32))
    assert str(d.card) == "KC" and d.suit_confidence == pytest.approx(0.49 / 0.58, abs=1e-3)
    d = _pool(0.9, (0, 0, 1, 1), rect, ranks, np.array([[0.45, 0, 0.55, 0], [0.6, 0, 0, 0.4]], np.float32))
    assert str(d.card) == "KC" and d.suit_confidence > 0.99
    one = _pool(0.9, (0, 0, 1, 1), rect, ranks[:1], np.array([[0.7, 0, 0, 0.3]], np.float32))
    assert one.suit_confidence == pytest.approx(0.7)


def test_an_index_counts_on_the_card_found_on_top_of_its_own() -> None:
    # The 2H under the QC in a rendered cascade: the detector found only the QC (its visible box below); the
    # 2H's index lies off that box, but the card it implies is centred on it.
    from vision.cardrect import on_box as _on_box

    top_box = (495.0, 244.0, 640.0, 433.0)
    two_hearts = CardRect(510, 308, 0.0, -1.0, 70, 50)  # upright: its index at the top left, at (475, 260)
    assert _on_box(two_hearts, top_box)
    far = CardRect(900, 308, 0.0, -1.0, 70, 50)
    assert not _on_box(far, top_box)


def test_a_card_named_twice_does_not_hide_the_card_under_its_second_name(
        rec: Recogniser, monkeypatch: pytest.MonkeyPatch) -> None:
    # From a rendered frame: the 9H's index found twice, once turned so it implies a card where the KS lies
    # (under the 9H). Both read 9H surely; the second once kept the KS from being read at its own corners.
    nine = CardRect(285, 166, 0.92, -0.39, 91, 65)
    nine_again = CardRect(334, 246, 0.90, -0.44, 91, 65)
    king = CardRect(348, 263, -0.91, 0.41, 85, 61)
    frame = np.zeros((720, 1280, 3), np.uint8)
    monkeypatch.setattr(rec, "refine", False)
    monkeypatch.setattr(rec, "_detect", lambda f: ([Find(0.8, (180.0, 70.0, 400.0, 262.0), nine, 0),
                                                    Find(0.6, (260.0, 180.0, 430.0, 350.0), king, 0)],
                                                   [(0.73, nine), (0.54, nine_again)], [(f, 1.0)], []))

    def read(f: np.ndarray, rects: list[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        ranks, suits = np.zeros((len(rects), RANK_CLASSES), np.float32), np.zeros((len(rects), 4), np.float32)
        for k, r in enumerate(rects):
            card = parse_card("9H" if r in (nine, nine_again, nine.flipped()) else "KS")
            ranks[k, card.rank - 2], suits[k, int(card.suit)] = 0.98, 0.98
            ranks[k, -1], suits[k, (int(card.suit) + 1) % 4] = 0.02, 0.02
        return ranks, suits

    monkeypatch.setattr(rec, "_read", read)
    assert sorted(str(d.card) for d in rec.identify(frame)) == ["9H", "KS"]


def test_a_photos_card_found_at_two_sizes_keeps_the_better_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    # As in a training photo (an ace of diamonds filling a third of it; its two finds' boxes): found at 320 px
    # with a rectangle too small, which reads no index, and at 224 px with the right one, which reads AD. The
    # stronger find used to stand for the card, which went unnamed.
    rec = Recogniser(det_size=(320, 224), indices=False, refine=False)
    small = CardRect(210, 262, 0.0, -1.0, 86 * 1.4, 76)
    right = CardRect(210, 266, 0.0, -1.0, 150, 107)
    monkeypatch.setattr(rec, "_detect", lambda f: ([Find(0.67, (135.0, 176.0, 286.0, 348.0), small, 0),
                                                    Find(0.61, (104.0, 116.0, 316.0, 417.0), right, 1)], None,
                                                   [(f, 1.0), (f, 1.0)], []))

    def read(f: np.ndarray, rects: list[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        ranks, suits = np.zeros((len(rects), RANK_CLASSES), np.float32), np.zeros((len(rects), 4), np.float32)
        for k, r in enumerate(rects):
            if r.half_w == right.half_w:
                ranks[k, 12], suits[k, int(parse_card("AD").suit)] = 0.95, 0.95
                ranks[k, -1], suits[k, 0] = 0.05, 0.05
            else:
                ranks[k, -1], suits[k, 0] = 1.0, 1.0  # "none": no index where this rectangle's corners are
        return ranks, suits

    monkeypatch.setattr(rec, "_read", read)
    found = rec.identify(np.zeros((504, 378, 3), np.uint8))
    assert [str(d.card) for d in found] == ["AD"] and found[0].rect == right
