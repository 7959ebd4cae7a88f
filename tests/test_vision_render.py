"""The synthetic renderer: every card face, seeded determinism, and ground truth that matches the pixels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from controller.cards import JOKER, Suit, deck, parse_card
from controller.rng import SeededRng
from vision import render


def test_every_face_renders_with_round_corners() -> None:
    faces = {}
    for card in render.ALL_CARDS:
        face = render.card_face(card)
        assert face.shape == (render.CARD_H, render.CARD_W, 4) and face.dtype == np.uint8
        assert face[0, 0, 3] == 0 and face[render.CARD_H // 2, render.CARD_W // 2, 3] == 255
        faces[str(card)] = face
    assert len(faces) == 53
    # No two identities look the same.
    keys = {face[..., :3].tobytes() for face in faces.values()}
    assert len(keys) == 53


@pytest.mark.parametrize("text", ["AS", "TD", "7H", "QC", "JK"])
def test_the_bottom_index_is_the_top_index_turned(text: str) -> None:
    card = JOKER if text == "JK" else parse_card(text)
    face = render.card_face(card).astype(int)
    x1, y1 = int(render.INDEX_REGION[2] * render.CARD_W), int(render.INDEX_REGION[3] * render.CARD_H)
    top = face[:y1, :x1, :3]
    bottom = face[render.CARD_H - y1:, render.CARD_W - x1:, :3][::-1, ::-1]
    assert (top < 128).any(), "the index has ink"
    assert np.abs(top - bottom).mean() < 3


def test_red_suits_are_red() -> None:
    for suit in Suit:
        face = render.card_face(parse_card("5" + suit.letter))[..., :3].astype(int)
        ink = face[(face.sum(axis=2) < 500)]
        red = (ink[:, 2] - ink[:, 0]).mean() > 60
        assert red == suit.is_red


def test_scenes_are_seeded() -> None:
    a = render.render_scene(SeededRng(7).numpy(), (320, 192))
    b = render.render_scene(SeededRng(7).numpy(), (320, 192))
    c = render.render_scene(SeededRng(8).numpy(), (320, 192))
    assert np.array_equal(a.image, b.image)
    assert [str(p.card) for p in a.cards] == [str(p.card) for p in b.cards]
    assert not np.array_equal(a.image, c.image)


@pytest.mark.slow
def test_ground_truth_follows_the_cards() -> None:
    gen = SeededRng(3).numpy()
    for _ in range(10):
        scene = render.render_scene(gen, (400, 300), fan=1.0, strength=0.0, hand=0.0)
        for pc in scene.cards:
            if pc.visible == 0:
                continue
            x0, y0, x1, y1 = pc.box
            qx0, qy0 = pc.quad.min(axis=0)
            qx1, qy1 = pc.quad.max(axis=0)
            # The visible box lies inside the card's outline (and the image).
            assert qx0 - 2 <= x0 and y0 >= qy0 - 2 and x1 <= qx1 + 2 and y1 <= qy1 + 2
            assert 0 <= pc.visible <= 1 and all(0 <= v <= 1 for v in pc.index_visible)
        # The top card of every scene is never covered by another card.
        top = scene.cards[-1]
        inside = (top.quad >= 0).all() and (top.quad[:, 0] < 400).all() and (top.quad[:, 1] < 300).all()
        if inside:
            assert top.visible > 0.97 and min(top.index_visible) == 1.0


def test_a_card_under_another_is_hidden() -> None:
    cards = [parse_card("AS"), parse_card("KD")]
    img = np.zeros((300, 400, 3), np.uint8)
    idmap = np.full((300, 400), -1, np.int32)
    quad = np.array([[150, 80], [250, 90], [240, 230], [140, 220]], np.float64)
    placed = [render.PlacedCard(cards[0], quad), render.PlacedCard(cards[1], quad.copy())]
    for i, pc in enumerate(placed):
        render._composite(img, idmap, render.card_face(pc.card), pc.quad, i, 1.0)
    render._visibility(placed, idmap)
    assert placed[0].visible < 0.02 and max(placed[0].index_visible) == 0.0
    assert placed[1].index_visible == (1.0, 1.0) and placed[1].visible > 0.97
    assert placed[1].box[0] in (139, 140, 141) and placed[1].box[3] in (229, 230, 231)


@pytest.mark.parametrize("text", ["KS", "QC", "JS"])
def test_a_court_pictures_suit_sign_lies_where_picture_sign_says(text: str) -> None:
    # The sign is painted last over the picture's tangle: inside its region, where the suit's mask is solid, the
    # face is the black ink; and the bottom half's sign is the top one turned half round.
    card = parse_card(text)
    face = render.card_face(card)[..., :3].astype(int)
    x0, y0, x1, y1 = (round(v * n) for v, n in zip(render.PICTURE_SIGN, (render.CARD_W, render.CARD_H) * 2))
    mask = render.suit_mask(card.suit, x1 - x0)  # type: ignore[arg-type]
    assert mask.shape == (y1 - y0, x1 - x0)
    ink = np.array(render.DEFAULT_STYLE.black)
    top = face[y0:y1, x0:x1]
    assert np.abs(top[mask > 0.99] - ink).max() <= 2
    assert np.abs(top[mask < 0.01] - ink).max(axis=1).mean() > 40, "around the sign is no solid ink"
    bottom = face[render.CARD_H - y1:render.CARD_H - y0, render.CARD_W - x1:render.CARD_W - x0][::-1, ::-1]
    assert np.abs(bottom[mask > 0.99] - ink).max() <= 2


@pytest.mark.slow
def test_a_close_render_tells_how_much_of_each_region_is_in_sight() -> None:
    # Alone: the card in full sight. With a card over it always: some renders cover part of the card, and the
    # regions' figures agree with its visible share.
    card, regions = parse_card("KC"), (render.PICTURE_SIGN, (0.1, 0.1, 0.3, 0.3))
    gen = SeededRng(11).numpy()
    scene, pc, seen = render.render_close(gen, card, 100.0, regions, under=0.0, over=0.0, hand=0.0)
    assert pc.card == card and seen == [1.0, 1.0] and pc.visible > 0.97
    assert scene.image.shape == (260, 260, 3)
    covered = []
    for _ in range(20):
        scene, pc, seen = render.render_close(gen, card, 100.0, regions, under=1.0, over=1.0, hand=0.0)
        assert len(scene.cards) == 3 and scene.cards[1] is pc and all(0.0 <= v <= 1.0 for v in seen)
        if pc.visible > 0.99:
            assert seen == [1.0, 1.0]
        covered.append(min(seen) < 1.0)
    assert any(covered) and not all(covered)


def test_table_frames_show_markers_and_cards() -> None:
    tc = [render.TableCard(c, 200 + 80 * i, 300) for i, c in enumerate(deck()[:5])]
    frame = render.render_table(tc, SeededRng(1).numpy(), noise=2.0)
    assert frame.shape == (720, 1280, 3)
    empty = render.render_table([], SeededRng(1).numpy(), noise=2.0)
    # Cards are white on green felt.
    x, y = int(200 * 1280 / 1200), int(300 * 720 / 675)
    assert frame[y, x].mean() > 150 and empty[y, x].mean() < 120


def test_extra_index_styles_are_off_unless_asked_for(tmp_path) -> None:
    """Training's extra index styles (TrueType rank glyphs, another deck's faces) change nothing until turned on,
    so the seeded test sets stay the same pixels; on, they draw those glyphs and faces."""
    import dataclasses

    import cv2
    import numpy as np

    from controller.cards import parse_card
    from vision import faces as faces_module
    from vision import render
    from vision.training.glyphs import ATLAS

    before = [render.random_style(np.random.default_rng(5)) for _ in range(3)]
    faces = tmp_path / "deck"
    faces.mkdir()
    for c in render.deck():
        name = ("10" if c.rank == 10 else c.rank_char) + c.suit.letter.lower()
        cv2.imwrite(str(faces / f"{name}.png"), np.full((384, 256, 3), 40 + c.index, np.uint8))
    try:
        render.use_extra_styles(1.0, ATLAS, faces)
        rng = np.random.default_rng(11)
        styles = [render.random_style(rng) for _ in range(60)]
        fonts = {s.glyph_font for s in styles if s.glyph_font}
        assert fonts and fonts <= set(faces_module._EXTRA["fonts"]) and any(s.faces for s in styles)
        decked = next(s for s in styles if s.faces)
        face = render.card_face(parse_card("7C"), decked)
        assert face.shape == (render.CARD_H, render.CARD_W, 4)
        assert abs(int(face[140, 100, 0]) - (40 + parse_card("7C").index) * decked.paper[0] // 255) <= 1
        glyphed = next(s for s in styles if s.glyph_font)
        assert not np.array_equal(render.card_face(parse_card("6S"), glyphed),
                                  render.card_face(parse_card("6S"), dataclasses.replace(glyphed, glyph_font="")))
        render.use_extra_styles(0.0)
        assert [render.random_style(np.random.default_rng(5)) for _ in range(3)] == before
        (faces / "7c.png").unlink()
        with pytest.raises(FileNotFoundError, match="expected 52 card faces"):
            render.use_extra_styles(1.0, None, faces)
    finally:
        render.use_extra_styles(0.0)
        faces_module._EXTRA.update(glyphs={}, fonts=(), faces={})


def _fan_scenes(seed: int, count: int, **kw: object) -> list[render.Scene]:
    gen = SeededRng(seed).numpy()
    return [render.render_fans(gen, (640, 480), strength=0.0, hand=0.0, **kw) for _ in range(count)]  # type: ignore[arg-type]


def test_tight_fans_are_seeded() -> None:
    a, b = _fan_scenes(11, 1)[0], _fan_scenes(11, 1)[0]
    assert np.array_equal(a.image, b.image) and [pc.card for pc in a.cards] == [pc.card for pc in b.cards]
    assert not np.array_equal(a.image, _fan_scenes(12, 1)[0].image)


def test_a_tight_fans_ground_truth_is_what_the_cards_above_leave_in_sight() -> None:
    import cv2

    for scene in _fan_scenes(13, 4):
        h, w = scene.image.shape[:2]
        assert 6 <= len(scene.cards) <= 52 and len({pc.card for pc in scene.cards}) == len(scene.cards)
        masks = []
        for pc in scene.cards:
            m = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(m, np.round(pc.quad).astype(np.int32), 1)
            masks.append(m.astype(bool))
        kernel = np.ones((3, 3), np.uint8)

        def grown(m: np.ndarray, by: int) -> np.ndarray:  # a pixel either way: the faces' anti-aliased edges
            u8 = m.astype(np.uint8)
            return (cv2.dilate(u8, kernel) if by > 0 else cv2.erode(u8, kernel)).astype(bool)

        for i, pc in enumerate(scene.cards):
            above = np.zeros((h, w), bool)
            for m in masks[i + 1:]:
                above |= m
            surely = grown(masks[i], -1) & ~grown(above, 1)  # in sight whatever the edges do
            maybe = grown(masks[i], 1) & ~grown(above, -1)
            area = cv2.contourArea(pc.quad.astype(np.float32))
            assert surely.sum() / area - 0.01 <= pc.visible <= maybe.sum() / area + 0.01
            if surely.sum() > 200:
                ys, xs = np.nonzero(surely)
                x0, y0, x1, y1 = pc.box
                assert x0 <= xs.min() + 3 and y0 <= ys.min() + 3 and x1 >= xs.max() - 2 and y1 >= ys.max() - 2
                ys, xs = np.nonzero(maybe)
                assert x0 >= xs.min() and y0 >= ys.min() and x1 <= xs.max() + 1 and y1 <= ys.max() + 1


def test_a_tight_fan_shows_each_covered_cards_index_strip() -> None:
    for scene in _fan_scenes(14, 6, hands=(1, 1)):
        cards = scene.cards
        assert 6 <= len(cards) <= 13
        cw = float(np.linalg.norm(cards[0].quad[1] - cards[0].quad[0]))
        for below, above in zip(cards, cards[1:]):
            # Each card slid about an index's width past the one under it, turned no more than 8 degrees.
            assert 0.1 * cw < float(np.linalg.norm(above.quad[0] - below.quad[0])) < 0.45 * cw
            _, up0, _, _ = render.quad_to_rect(below.quad)
            _, up1, _, _ = render.quad_to_rect(above.quad)
            assert float(up0 @ up1) > math.cos(math.radians(8.5))
        inside = [pc for pc in cards[:-1] if (pc.quad >= 0).all() and (pc.quad < [640, 480]).all()]
        for pc in inside:  # a strip of the card (narrower near the pivot), its top index in sight, the other covered
            assert 0.03 < pc.visible < 0.5 and pc.index_visible[0] >= 0.2 and pc.index_visible[1] == 0.0
        if inside:
            assert np.mean([pc.index_visible[0] for pc in inside]) >= 0.4
