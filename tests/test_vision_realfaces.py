"""Real decks for training (`vision.training.realfaces`): single-card photos rectified into upright faces, their index
corners cut from the photos, and several face folders among the renderer's extra styles."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cards import parse_card
from vision import faces as faces_module
from vision import render
from vision.crops import CROP_H, CROP_W
from vision.training import realfaces

# Where each card lies in its photo (top-left, top-right, bottom-right, bottom-left of the face): upright and a little
# askew in perspective, turned a quarter (its top on the photo's right), and turned half round.
_PHOTOS = {
    "7H": [(150, 60), (400, 75), (410, 420), (140, 430)],
    "TS": [(560, 120), (560, 380), (190, 390), (200, 110)],
    "QD": [(420, 440), (170, 430), (180, 80), (410, 70)],
}


def _photo(folder: Path, text: str, quad: list[tuple[int, int]]) -> None:
    """A photo of the rendered card `text` on a dark cloth at `quad`, and its Pascal VOC label (the card's box)."""
    face = render.card_face(parse_card(text))
    h, w = face.shape[:2]
    M = cv2.getPerspectiveTransform(np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32), np.array(quad, np.float32))
    photo = np.full((500, 640, 3), (40, 70, 30), np.uint8)
    drawn = cv2.warpPerspective(face, M, (640, 500), flags=cv2.INTER_LINEAR)
    a = drawn[..., 3:4].astype(np.float32) / 255
    photo = (photo * (1 - a) + drawn[..., :3] * a).astype(np.uint8)
    cv2.imwrite(str(folder / f"{text}.png"), photo)
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    (folder / f"{text}.xml").write_text(
        f"<annotation><filename>{text}.png</filename><object><name>{text}</name><bndbox><xmin>{min(xs)}</xmin>"
        f"<ymin>{min(ys)}</ymin><xmax>{max(xs)}</xmax><ymax>{max(ys)}</ymax></bndbox></object></annotation>")


@pytest.fixture(scope="module")
def deck_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Three photos and the face folder `write_faces` made of them."""
    root = tmp_path_factory.mktemp("realfaces")
    photos, out = root / "photos", root / "faces"
    photos.mkdir()
    for text, quad in _PHOTOS.items():
        _photo(photos, text, quad)
    (photos / "none.xml").write_text("<annotation><filename>7H.png</filename><object><name>joker</name><bndbox>"
                                     "<xmin>0</xmin><ymin>0</ymin><xmax>9</xmax><ymax>9</ymax></bndbox></object>"
                                     "</annotation>")
    realfaces.write_faces(photos, out, root / "sheet.png", say=lambda _: None)
    return photos, out


def test_each_card_is_found_and_rectified_upright(deck_dir: tuple[Path, Path]) -> None:
    photos, out = deck_dir
    assert {p.stem for p in out.glob("*.png")} == {"7h", "10s", "Qd"}  # named as use_extra_styles reads them
    quads = json.loads((out / "quads.json").read_text())
    assert set(quads) == {"7h", "10s", "Qd"}
    for text, true in _PHOTOS.items():
        name = realfaces.face_name(parse_card(text))
        photo, quad = quads[name]
        assert Path(photo) == (photos / f"{text}.png").resolve()
        found = np.array(quad)
        # The found outline is the card's, its corners in order from the top-left of the face or of the face turned
        # half round (a face's two index corners look alike).
        err = min(np.abs(found - np.roll(np.array(true, float), s, axis=0)).max() for s in (0, 2))
        assert err < 6, (text, found, true)
        face = cv2.imread(str(out / f"{name}.png"))
        assert face is not None and face.shape == (realfaces.FACE_H, realfaces.FACE_W, 3)
        drawn = cv2.resize(render.card_face(parse_card(text))[..., :3], (realfaces.FACE_W, realfaces.FACE_H))
        diff = min(np.abs(face.astype(int) - d.astype(int)).mean() for d in (drawn, drawn[::-1, ::-1]))
        assert diff < 12, (text, diff)  # the card itself, upright (its pixels, not the cloth's or turned a quarter)
    assert cv2.imread(str(deck_dir[1].parent / "sheet.png")) is not None


def test_no_card_shaped_paper_is_no_face() -> None:
    dark = np.full((300, 300, 3), 30, np.uint8)
    assert realfaces.card_quad(dark, (10, 10, 290, 290)) is None
    square = dark.copy()
    square[50:250, 50:250] = 240  # paper, but not a card's shape
    assert realfaces.card_quad(square, (40, 40, 260, 260)) is None


def test_the_real_corners_are_cut_from_the_photos_with_rank_and_suit(deck_dir: tuple[Path, Path]) -> None:
    _, out = deck_dir
    crops, ranks, suits = realfaces.real_corners(np.random.default_rng(3), [out, out.parent / "no-such"], copies=2)
    assert crops.shape == (12, CROP_H, CROP_W, 3) and crops.dtype == np.uint8
    # Sorted by face name: 10s, 7h, Qd; both corners of each, 2 copies a corner; classes 0..12 for 2..A, C D H S.
    assert ranks.tolist() == [8] * 4 + [5] * 4 + [10] * 4
    assert suits.tolist() == [3] * 4 + [2] * 4 + [1] * 4
    # What the reader is shown is the index, jittered as the detector errs: ink in the crop's top-left (the rank).
    assert sum(int(c[4:20, 2:16].min()) < 120 for c in crops) >= 10
    empty = realfaces.real_corners(np.random.default_rng(3), [])
    assert empty[0].shape == (0, CROP_H, CROP_W, 3) and len(empty[1]) == len(empty[2]) == 0


def test_several_face_folders_are_decks_among_the_extra_styles(tmp_path: Path) -> None:
    before = [render.random_style(np.random.default_rng(5)) for _ in range(3)]
    folders = []
    for k, shade in enumerate((60, 120)):
        folder = tmp_path / f"deck{k}"
        folder.mkdir()
        for c in render.deck():
            if k == 1 and c == parse_card("7C"):
                continue  # the second deck lacks a card
            cv2.imwrite(str(folder / f"{realfaces.face_name(c)}.png"), np.full((384, 256, 3), shade, np.uint8))
        folders.append(folder)
    try:
        with pytest.raises(FileNotFoundError, match="deck1: expected 52 card faces named like 6s.png, found 51"):
            render.use_extra_styles(1.0, None, folders)
        render.use_extra_styles(1.0, None, folders, face_share=1.0, missing=1)
        styles = [render.random_style(np.random.default_rng(s)) for s in range(40)]
        assert {s.faces for s in styles} == {1, 2}
        first, second = (next(s for s in styles if s.faces == k) for k in (1, 2))
        assert abs(int(render.card_face(parse_card("7C"), first)[140, 100, 0]) - 60 * first.paper[0] // 255) <= 1
        assert abs(int(render.card_face(parse_card("6C"), second)[140, 100, 0]) - 120 * second.paper[0] // 255) <= 1
        # The card the second deck lacks is drawn in the style's own index and pips instead.
        own = render.card_face(parse_card("7C"), second)
        assert np.array_equal(own, render.card_face(parse_card("7C"), render.CardStyle(**{
            f: getattr(second, f) for f in ("font", "thickness", "rank_h", "rank_x", "rank_y", "suit_h", "gap", "red",
                                            "black", "paper", "border", "palette_seed", "corners")})))
        render.use_extra_styles(0.0)
        assert [render.random_style(np.random.default_rng(5)) for _ in range(3)] == before
    finally:
        render.use_extra_styles(0.0)
        faces_module._EXTRA.update(glyphs={}, fonts=(), faces=[], face_share=1 / 3)
