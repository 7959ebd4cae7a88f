"""The locator scan for index corners the detector missed, and the photos it reads (vision/scan.py, photos.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from controller.cards import parse_card
from controller.rng import SeededRng
from vision import evaluate, photos, render
from vision.cardrect import corner_point
from vision.photos import PhotoReader
from vision.readings import Detection
from vision.recognise import Recogniser
from vision.scan import SCAN_GATE, read_missed, scan_indices
from vision.training.data import rect_of_quad


@pytest.fixture(scope="module")
def reader() -> PhotoReader:
    return PhotoReader()


@pytest.fixture(scope="module")
def fans() -> render.Scene:
    return evaluate.fans_scene(SeededRng(11).numpy())


def _shown(scene: render.Scene) -> list[render.PlacedCard]:
    """The cards whose index is in sight (the evaluation's readable cards)."""
    return [pc for pc in scene.cards if evaluate.readable(pc)]


def _half_w(scene: render.Scene) -> float:
    return float(np.median([rect_of_quad(pc.quad).half_w for pc in scene.cards]))


def test_a_scan_finds_the_index_corners_in_sight_of_a_fanned_hand(reader: PhotoReader, fans: render.Scene) -> None:
    hw = _half_w(fans)
    found = [corner_point(r) for _, r in scan_indices(reader.table, fans.image, hw)]
    corners = []
    for pc in _shown(fans):
        rect = rect_of_quad(pc.quad)
        corners += [corner_point(r) for r, vis in zip((rect, rect.flipped()), pc.index_visible) if vis >= 0.8]
    near = [any(math.hypot(x - fx, y - fy) < 0.3 * hw for fx, fy in found) for x, y in corners]
    assert len(corners) >= 20
    assert sum(near) >= 0.9 * len(corners)


def test_scanned_readings_name_only_cards_nothing_named(reader: PhotoReader, fans: render.Scene) -> None:
    table = reader.table
    hw = _half_w(fans)
    cards = table.identify(fans.image)
    _, known = table.detect_all(fans.image)
    added = read_missed(table, fans.image, cards, hw, known or ())
    named = {d.card for d in cards}
    assert added and all(d.card is not None and d.card not in named for d in added)
    assert len({d.card for d in added}) == len(added)
    shown = {pc.card for pc in _shown(fans)}
    assert len({d.card for d in added} & shown - named) >= 2  # the table path missed them; the scan reads them
    # Once they are named, a second scan adds nothing.
    assert read_missed(table, fans.image, cards + added, hw, known or ()) == []


def test_a_scanned_reading_below_the_gate_adds_no_card(reader: PhotoReader, fans: render.Scene,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    table = reader.table
    cards = table.identify(fans.image)
    raw: list[Detection] = []
    real = Recogniser.read_indices

    def recorded(self: Recogniser, frame: np.ndarray, indices: list) -> list[Detection]:
        out = real(self, frame, indices)
        raw.extend(out)
        return out

    monkeypatch.setattr(Recogniser, "read_indices", recorded)
    added = read_missed(table, fans.image, cards, _half_w(fans))
    assert any(d.card is not None and d.confidence < SCAN_GATE for d in raw)
    for d in added:  # calibrated since, at the place and name of a raw reading at the gate or over
        assert any(r.rect == d.rect and r.card == d.card and r.confidence >= SCAN_GATE for r in raw)


def test_a_scan_needs_the_locator(reader: PhotoReader) -> None:
    table = Recogniser(det_size=reader.table.det_sizes)
    table.locator = None
    with pytest.raises(ValueError, match="locator"):
        scan_indices(table, np.zeros((100, 100, 3), np.uint8), 20.0)


def test_a_scan_looks_only_where_there_is_ink(reader: PhotoReader, monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[int] = []
    locator = reader.table.locator
    assert locator is not None

    def counted(blob: np.ndarray) -> np.ndarray:
        looked.append(len(blob))
        return locator(blob)

    monkeypatch.setattr(reader.table, "locator", counted)
    felt = np.full((360, 640, 3), (40, 110, 30), np.uint8)
    assert scan_indices(reader.table, felt, 30.0) == [] and looked == []
    felt[100:140, 200:230] = 250  # a patch of paper: only the grid points near its edges are looked at
    scan_indices(reader.table, felt, 30.0)
    every = 12 * sum(len(np.arange(0.35 * hw / 2, 360, 0.35 * hw)) * len(np.arange(0.35 * hw / 2, 640, 0.35 * hw))
                     for hw in (24.0, 30.0, 37.5))
    assert 0 < sum(looked) < every / 10


@pytest.mark.parametrize("widths, scale, way", [
    ([10.0, 11.0, 12.0], 0.3, "tiles"),   # small at the table size's input: tiles
    ([15.0, 16.0, 17.0], 0.3, "scan 53"),  # a table camera's size, 53 px in the photo: scanned
    ([15.0, 16.0, 17.0], 1.7, "photo"),   # 9 px in the photo (a small crop enlarged): no index to read there
    ([25.0, 26.0, 27.0], 0.3, "photo"),   # close cards: the photo path alone
    ([15.0, 16.0], 0.3, "photo"),         # two cards
])
def test_photos_are_read_by_the_way_their_cards_size_asks(reader: PhotoReader, monkeypatch: pytest.MonkeyPatch,
                                                          widths: list[float], scale: float, way: str) -> None:
    ways: list[str] = []

    def took(name: str) -> list[Detection]:
        ways.append(name)
        return []

    monkeypatch.setattr(photos, "_sure_widths", lambda table, frame: (widths, scale))
    monkeypatch.setattr(photos, "read_tiled", lambda table, frame: took("tiles"))
    monkeypatch.setattr(reader, "_scanned", lambda frame, hw: took(f"scan {round(hw)}"))
    monkeypatch.setattr(reader.photo, "identify", lambda frame: took("photo"))
    assert reader.identify(np.zeros((720, 1280, 3), np.uint8)) == []
    assert ways == [way]


def test_a_photo_of_fanned_hands_is_read_by_the_photo_path_and_a_scan(reader: PhotoReader, fans: render.Scene) -> None:
    widths, s = photos._sure_widths(reader.table, fans.image)
    assert len(widths) >= 3 and photos.SMALL_HALF_WIDTH <= np.median(widths) < photos.TABLE_HALF_WIDTH
    read = reader.identify(fans.image)
    photo = reader.photo.identify(fans.image)
    shown = {pc.card for pc in _shown(fans)}
    assert {d.card for d in photo} <= {d.card for d in read}
    assert len({d.card for d in read} & shown) > len({d.card for d in photo} & shown)
