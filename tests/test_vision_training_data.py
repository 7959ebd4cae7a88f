"""Training data (numpy only): detector targets decode back to the cards, mirroring keeps them right, the
classical finder recovers a card's rectangle, classifier crops carry the right labels, the locator's labels name
the index they are about."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cards import parse_card
from controller.rng import SeededRng
from vision import render
from vision.recognise import (BACK, BODY_H, BODY_NONE, BODY_W, CROP_H, CROP_W, DET_CHANNELS, I_HEAT, LOCATOR_SIZE, NONE,
                              RANK_CLASSES, SIGN_NONE, SIGN_SIZE, WIDE_H, WIDE_W, CardRect, corner_point, decode,
                              decode_indices, located, rect_at_index)
from vision.training import data


def _check(decoded, rect: CardRect) -> None:
    best = min(decoded, key=lambda d: math.hypot(d[2].cx - rect.cx, d[2].cy - rect.cy))[2]
    assert abs(best.cx - rect.cx) < 0.5 and abs(best.cy - rect.cy) < 0.5
    assert abs(abs(best.ux * rect.ux + best.uy * rect.uy) - 1) < 1e-3
    assert abs(best.half_l - rect.half_l) < 0.5 and abs(best.half_w - rect.half_w) < 0.5


@pytest.mark.slow
def test_targets_decode_back_to_the_cards() -> None:
    gen = SeededRng(4).numpy()
    checked = 0
    for _ in range(4):
        img, objects = data.detector_scene(gen, 256)
        assert img.shape == (256, 256, 3)
        t = data.detector_targets(objects, (256, 256))
        assert t.shape == (data.TARGET_CHANNELS, 64, 64)
        out = t[:DET_CHANNELS].copy()
        out[0] = (out[0] >= 1).astype(np.float32)
        decoded = decode(out, 1.0, 0.5)
        for ob in objects:
            cx, cy = (ob.box[0] + ob.box[2]) / 2, (ob.box[1] + ob.box[3]) / 2
            if ob.ignore or not (0 <= cx < 256 and 0 <= cy < 256) or ob.rect is None:
                continue
            _check(decoded, ob.rect)
            checked += 1
    assert checked >= 5


@pytest.mark.slow
@pytest.mark.parametrize("dealt", [0.0, 1.0])
def test_index_targets_decode_back_to_the_index_corners(dealt: float) -> None:
    gen = SeededRng(6).numpy()
    checked = 0
    for _ in range(3):
        _, objects = data.detector_scene(gen, 256, dealt=dealt)
        t = data.detector_targets(objects, (256, 256))
        out = t[:DET_CHANNELS].copy()
        out[I_HEAT] = (out[I_HEAT] >= 1).astype(np.float32)
        decoded = [r for _, r in decode_indices(out, 1.0, 0.5)]
        for ob in objects:
            assert ob.indices is not None
            for r in ob.indices:
                x, y = data.corner_point(r)
                if not (0 <= x < 256 and 0 <= y < 256):
                    continue
                best = min(decoded, key=lambda d: math.dist(data.corner_point(d), (x, y)))
                assert math.hypot(best.cx - r.cx, best.cy - r.cy) < 0.5
                assert best.ux * r.ux + best.uy * r.uy > 0.999
                assert abs(best.half_w - r.half_w) < 0.5
                checked += 1
    assert checked >= 5


def test_real_photos_leave_the_index_heatmap_alone() -> None:
    # A real photo's labels say nothing about where the indices are: the index heatmap weighs nothing.
    t = data.detector_targets([data.DetObject((10, 10, 60, 90), None)], (128, 128))
    assert t[DET_CHANNELS + 3].max() == 0 and t[I_HEAT].max() == 0


def test_mirrored_targets_match_the_mirrored_image() -> None:
    gen = SeededRng(9).numpy()
    img, objects = data.detector_scene(gen, 256)
    t = data.mirror_targets(data.detector_targets(objects, (256, 256)))
    out = t[:DET_CHANNELS].copy()
    out[0] = (out[0] >= 1).astype(np.float32)
    decoded = decode(out, 1.0, 0.5)
    checked = 0
    for ob in objects:
        if ob.ignore or ob.rect is None or not 0 <= (ob.box[0] + ob.box[2]) / 2 < 256 or \
                not 0 <= (ob.box[1] + ob.box[3]) / 2 < 256:
            continue
        r = ob.rect
        _check(decoded, CardRect(256 - r.cx, r.cy, -r.ux, r.uy, r.half_l, r.half_w))
        checked += 1
    assert checked >= 1, "the scene has no whole card inside the image: the mirror was checked on nothing"


def test_classical_rect_finds_a_lone_card() -> None:
    img = np.full((400, 400, 3), (40, 90, 30), np.uint8)
    idmap = np.full((400, 400), -1, np.int32)
    a = math.radians(20)
    local = np.array([[-60, -84], [60, -84], [60, 84], [-60, 84]], np.float64)
    quad = local @ np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]).T + 200
    render._composite(img, idmap, render.card_face(render.ALL_CARDS[30]), quad, 0, 1.0)
    ys, xs = np.nonzero(idmap == 0)
    rect = data.classical_rect(img, (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())))
    assert rect is not None
    truth = data.rect_of_quad(quad)
    assert math.hypot(rect.cx - truth.cx, rect.cy - truth.cy) < 3
    assert abs(abs(rect.ux * truth.ux + rect.uy * truth.uy) - 1) < 0.01
    assert abs(rect.half_l - truth.half_l) < 4 and abs(rect.half_w - truth.half_w) < 4
    # Nothing card-like in the box: no rectangle.
    assert data.classical_rect(np.full((400, 400, 3), 90, np.uint8), (100, 100, 200, 240)) is None


@pytest.mark.slow
def test_classifier_crops_and_labels() -> None:
    gen = SeededRng(2).numpy()
    crops, ranks, suits = [], [], []
    for _ in range(6):
        c, r, s = data.classifier_scene(gen)
        assert c.shape[1:] == (CROP_H, CROP_W, 3) and len(c) == len(r) == len(s)
        crops.append(c)
        ranks.append(r)
        suits.append(s)
    r, s = np.concatenate(ranks), np.concatenate(suits)
    assert r.min() >= 0 and r.max() < RANK_CLASSES
    # A suit is labelled exactly for suited faces.
    assert ((s >= 0) == (r < 13)).all()
    assert (r == NONE).any() and (r < 13).sum() > 10
    assert not ((r == BACK) & (s >= 0)).any()


def test_wide_reader_crops_are_the_classifiers_scenes_cut_wide() -> None:
    # The same scene and labels, each index cut with the strip beside it: its left CROP_W columns are the
    # classifier's crop.
    narrow, wide = data.classifier_scene(SeededRng(4).numpy()), data.classifier_scene(SeededRng(4).numpy(), wide=True)
    assert wide[0].shape[1:] == (WIDE_H, WIDE_W, 3) and len(wide[0]) == len(narrow[0]) > 0
    assert np.array_equal(wide[0][:, :, :CROP_W], narrow[0])
    assert np.array_equal(wide[1], narrow[1]) and np.array_equal(wide[2], narrow[2])


@pytest.mark.slow
def test_body_crops_and_labels() -> None:
    gen = SeededRng(3).numpy()
    parts = [data.body_scene(gen) for _ in range(8)]
    for c, r, s in parts:
        assert c.shape[1:] == (BODY_H, BODY_W, 3) and len(c) == len(r) == len(s)
    r, s = np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])
    assert r.min() >= 0 and r.max() <= BODY_NONE
    # A whole card has its rank and suit; "none" (covered, face down, felt) has no suit.
    assert ((s >= 0) == (r < BODY_NONE)).all()
    assert (r == BODY_NONE).any() and (r < BODY_NONE).sum() >= 5


@pytest.mark.slow
def test_sign_squares_and_labels() -> None:
    # Two squares a sign in sight or covered (none for a sign half covered); a club or a spade where the sign shows,
    # SIGN_NONE where it does not; the card 64 to 166 pixels wide.
    gen = SeededRng(6).numpy()
    parts = [data.sign_scene(gen) for _ in range(30)]
    for crops, classes, widths in parts:
        assert crops.shape[1:] == (SIGN_SIZE, SIGN_SIZE, 3) and len(crops) == len(classes) == len(widths)
        assert len(crops) in (0, 2, 4)
        assert ((64 <= widths) & (widths <= 166.4)).all()
    classes = np.concatenate([p[1] for p in parts])
    assert set(np.unique(classes)) == {0, 1, SIGN_NONE}
    # A square in sight holds ink (the sign) darker than any a covered square need hold.
    crops = np.concatenate([p[0] for p in parts])
    assert np.median(crops[classes < SIGN_NONE].min(axis=(1, 2, 3))) < 90


@pytest.mark.parametrize("angle", [0.0, 33.0, 90.0, 200.0])
def test_rect_at_index_inverts_corner_point(angle: float) -> None:
    a = math.radians(angle)
    rect = CardRect(300.0, 200.0, math.cos(a), math.sin(a), 70.0, 50.0)
    for r in (rect, rect.flipped()):
        x, y = data.corner_point(r)
        back = rect_at_index(x, y, r.ux, r.uy, r.half_w)
        assert math.hypot(back.cx - r.cx, back.cy - r.cy) < 1e-6
        assert (back.ux, back.uy) == (r.ux, r.uy)


@given(angle=st.floats(-math.pi, math.pi), turn=st.floats(-math.pi, math.pi), dx=st.floats(-0.4, 0.4),
       dy=st.floats(-0.4, 0.4), scale=st.floats(0.8, 1.25))
def test_the_locators_answer_puts_the_rect_on_the_index_its_label_names(angle: float, turn: float, dx: float,
                                                                         dy: float, scale: float) -> None:
    # A square looked at off a card's index, moved and turned any way: the label the locator learns, read back by
    # `located` as the recogniser reads the locator's answer, is that index, pointing the card's way.
    card = render.PlacedCard(parse_card("7H"), np.zeros((4, 2)), index_visible=(1.0, 0.0))
    true = CardRect(400.0, 300.0, math.cos(angle), math.sin(angle), 70.0, 50.0)
    px, py = corner_point(true)
    a = angle + turn
    seen = rect_at_index(px + dx * 50, py + dy * 50, math.cos(a), math.sin(a), 50.0 * scale)
    label = data.locator_label(seen, [(card, true)])
    assert label is not None and label[0] == 1.0
    back = located(seen, *label[1:])
    assert corner_point(back) == pytest.approx((px, py), abs=1e-6)
    assert back.ux * true.ux + back.uy * true.uy == pytest.approx(1.0)
    # The other index is covered (under 0.3 in sight): nothing to find there. Half covered: too near to call.
    other = rect_at_index(*corner_point(true.flipped()), -true.ux, -true.uy, 50.0)
    assert data.locator_label(other, [(card, true)]) == (0.0, 0.0, 0.0, 0.0, 0.0)
    half = render.PlacedCard(parse_card("7H"), np.zeros((4, 2)), index_visible=(0.5, 0.0))
    assert data.locator_label(seen, [(half, true)]) is None


@pytest.mark.slow
def test_locator_squares_and_labels() -> None:
    gen = SeededRng(5).numpy()
    parts = [data.locator_scene(gen, dealt=1.0) for _ in range(3)]
    for c, y in parts:
        assert c.shape[1:] == (LOCATOR_SIZE, LOCATOR_SIZE, 3) and y.shape == (len(c), 5)
    y = np.concatenate([p[1] for p in parts])
    assert set(np.unique(y[:, 0])) == {0.0, 1.0}
    # An index's direction is a unit vector; a square with none has no place or direction.
    there = y[:, 0] == 1
    assert np.allclose(np.hypot(y[there, 3], y[there, 4]), 1.0, atol=1e-5)
    assert (np.abs(y[there, 1:3]) <= 0.8 + 1e-6).all() and not y[~there, 1:].any()


def test_tight_fans_are_detector_scenes_only_when_asked_for() -> None:
    a, b = SeededRng(21).numpy(), SeededRng(21).numpy()
    img_a, _ = data.detector_scene(a, 256, dealt=0.5)
    img_b, _ = data.detector_scene(b, 256, dealt=0.5, fans=0.0)
    assert np.array_equal(img_a, img_b)  # scenes without fans: the same draws as before
    _, objects = data.detector_scene(SeededRng(22).numpy(), 256, fans=1.0)
    assert len(objects) >= 6 and sum(not ob.ignore for ob in objects) >= 6


def test_tight_fans_are_classifier_scenes_only_when_asked_for() -> None:
    a, b = data.classifier_scene(SeededRng(23).numpy()), data.classifier_scene(SeededRng(23).numpy(), fans=0.0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))  # scenes without fans: the same draws as before
    gen = SeededRng(24).numpy()
    parts = [data.classifier_scene(gen, fans=1.0) for _ in range(3)]
    assert all(p[0].shape[1:] == (CROP_H, CROP_W, 3) for p in parts)
    ranks, suits = np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])
    # Three scenes of one to four hands of six or more cards: many indices in sight, and the covered ones "none".
    assert (ranks < 13).sum() >= 20 and (ranks == NONE).sum() >= 10
    assert ((suits >= 0) == (ranks < 13)).all()
