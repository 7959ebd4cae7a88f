"""Photos of many small cards read as table frames in tiles (vision/photos.py)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cards import parse_card
from controller.cli import main
from controller.rng import SeededRng
from vision import evaluate, render
from vision.cardrect import CardRect
from vision.photos import PhotoReader, read_tiled, small_cards
from vision.readings import Detection


def _det(card: str, box: tuple[float, float, float, float], confidence: float = 0.9) -> Detection:
    x0, y0, x1, y1 = box
    rect = CardRect((x0 + x1) / 2, (y0 + y1) / 2, 0.0, -1.0, (y1 - y0) / 2, (x1 - x0) / 2)
    return Detection(parse_card(card), confidence, 0.9, box, rect)


class _Tiles:
    """A table reader whose `identify` answers the tiles in the order `read_tiled` asks them: top-left, top-right,
    bottom-left, bottom-right."""

    det_sizes = (384,)

    def __init__(self, answers: list[list[Detection]], decks: int | None = 1) -> None:
        self.answers = list(answers)
        self.decks = decks
        self.shapes: list[tuple[int, ...]] = []

    def identify(self, frame: np.ndarray) -> list[Detection]:
        self.shapes.append(frame.shape)
        return self.answers.pop(0)


def test_tiles_drop_cut_cards_move_readings_back_and_name_a_card_once() -> None:
    # A 200x100 photo: tiles 120x60 at x 0 and 80, y 0 and 40.
    frame = np.zeros((100, 200, 3), np.uint8)
    table = _Tiles([
        [_det("AS", (10, 10, 30, 40)),               # whole in the top-left tile
         _det("KH", (100, 10, 119, 40))],            # cut by its right edge (inner: the top-right tile holds it)
        [_det("KH", (20, 10, 39, 40)),               # the king whole: at x 100..119 in the photo
         _det("2C", (70, 45, 90, 57), 0.8)],         # in the overlap, seen again below
        [_det("5D", (0.5, 10, 20, 30)),              # at the photo's own left edge: not cut by the tile
         _det("AS", (60, 10, 75, 25))],              # the ace again, far from the first: both flagged unsure
        [_det("2C", (70, 5, 90, 17), 0.95)],         # the two of clubs whole again, surer
    ])
    cards = read_tiled(table, frame)  # type: ignore[arg-type]
    assert table.shapes == [(60, 120, 3)] * 4
    got = sorted((str(d.card), tuple(round(v, 1) for v in d.box), d.unsure, d.confidence) for d in cards)
    assert got == [("2C", (150.0, 45.0, 170.0, 57.0), False, 0.95),
                   ("5D", (0.5, 50.0, 20.0, 70.0), False, 0.9),
                   ("AS", (10.0, 10.0, 30.0, 40.0), True, 0.9),
                   ("AS", (60.0, 50.0, 75.0, 65.0), True, 0.9),
                   ("KH", (100.0, 10.0, 119.0, 40.0), False, 0.9)]
    moved = next(d for d in cards if str(d.card) == "KH")
    assert (moved.rect.cx, moved.rect.cy) == (109.5, 25.0)


def test_tiles_leave_repeats_alone_without_a_deck_count() -> None:
    table = _Tiles([[_det("AS", (10, 10, 30, 40))], [], [_det("AS", (60, 10, 75, 25))], []], decks=None)
    assert [d.unsure for d in read_tiled(table, np.zeros((100, 200, 3), np.uint8))] == [False, False]  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def reader() -> PhotoReader:
    return PhotoReader()


def test_small_cards_are_many_sure_finds_small_at_the_table_size(reader: PhotoReader) -> None:
    rng = SeededRng(4).numpy()
    assert small_cards(reader.table, evaluate.fans_photo_scene(rng, 0.5).image)
    assert not small_cards(reader.table, render.render_close(rng, parse_card("7H"), 500)[0].image)
    assert not small_cards(reader.table, np.full((720, 1280, 3), 60, np.uint8))


def test_a_photo_of_small_fanned_hands_is_read_in_tiles(reader: PhotoReader) -> None:
    fans = evaluate.fans_photo_scene(SeededRng(4).numpy(), 0.5)
    photo = fans.image
    shown = {pc.card for pc in fans.cards if evaluate.readable(pc)}
    tiled = {d.card for d in reader.identify(photo) if d.card is not None and not d.unsure}
    whole = {d.card for d in reader.photo.identify(photo) if d.card is not None and not d.unsure}
    assert len(shown) == 31
    assert len(tiled & shown) > 3 * len(whole & shown) > 0


def test_identify_command_reads_a_photo_of_small_cards_in_tiles(tmp_path: Path, reader: PhotoReader,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    photo = evaluate.fans_photo_scene(SeededRng(4).numpy(), 0.5).image
    path = tmp_path / "deal.png"
    cv2.imwrite(str(path), photo)
    assert main(["vision", "identify", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)[0]["cards"]
    assert sorted(c["card"] for c in printed) == sorted(str(d.card) for d in reader.identify(photo) if d.card is not None)


def test_fans_photo_scene_lays_the_fans_frame_in_a_canvas_of_its_felt() -> None:
    shot = evaluate.fans_scene(SeededRng(3).numpy())
    photo = evaluate.fans_photo_scene(SeededRng(3).numpy(), 0.5)
    assert photo.image.shape == (1440, 2560, 3)
    x0 = photo.cards[0].box[0] - shot.cards[0].box[0]
    y0 = photo.cards[0].box[1] - shot.cards[0].box[1]
    assert np.array_equal(photo.image[y0:y0 + 720, x0:x0 + 1280], shot.image)
    assert len(photo.cards) == len(shot.cards)
    for moved, drawn in zip(photo.cards, shot.cards):
        assert moved.card == drawn.card and moved.index_visible == drawn.index_visible
        assert moved.box == (drawn.box[0] + x0, drawn.box[1] + y0, drawn.box[2] + x0, drawn.box[3] + y0)
        assert np.array_equal(moved.quad, np.asarray(drawn.quad) + (x0, y0))
    same = evaluate.fans_photo_scene(SeededRng(3).numpy(), 1.0)
    assert np.array_equal(same.image, shot.image)


@pytest.mark.parametrize("args, message", [
    (["--fans-photos", "0.5"], "--fans-photos SCALE reads the --tight-fans set as photos"),
    (["--tight-fans", "5", "--fans-photos", "0"], "a SCALE above 0 and at most 1"),
    (["--tight-fans", "5", "--fans-photos", "1.5"], "a SCALE above 0 and at most 1"),
])
def test_evaluate_refuses_fans_photos_it_cannot_draw(args: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "evaluate", "--no-real", "--synthetic", "0", "--piles", "0", *args]) == 2
    assert message in capsys.readouterr().err


def test_evaluate_reads_tight_fans_as_photos(tmp_path: Path) -> None:
    figures = tmp_path / "f.json"
    assert main(["vision", "evaluate", "--no-real", "--synthetic", "0", "--piles", "0", "--tight-fans", "10",
                 "--fans-photos", "0.5", "--seed", "4", "--json", str(figures)]) == 0
    fans = json.loads(figures.read_text())["synthetic_fans"]
    assert fans["photos_scale"] == 0.5 and fans["cards"] >= 10 and 0 <= fans["right"] <= fans["cards"]
