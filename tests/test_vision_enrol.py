"""Deck enrolment (vision/enrol.py): factory orders, a spread of the renderer's deck enrolled and read, a bad enrolment
refused by its held-back check, corners collected from play bounded and labelled by the shoe, and a simulated table
reading with its enrolled model and journaling which model read each card."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from controller.autoplay import Autoplay  # noqa: E402
from controller.camera import shoe_label  # noqa: E402
from controller.cards import Card, Suit, parse_card  # noqa: E402
from controller.cli import main as cli_main  # noqa: E402
from controller.config import CameraConfig  # noqa: E402
from controller.journal import Journal  # noqa: E402
from controller.rng import SeededRng  # noqa: E402
from controller.table import Table  # noqa: E402
from tests.table_helpers import misplaceable, step_until, table_config  # noqa: E402
from vision.enrol import (MODEL_JSON, DeckModel, EnrolError, PlayCollector, deck_dir, factory_order,  # noqa: E402
                          load_enrolled, load_orders, play_examples, spread_cards)
from vision.recognise import Recogniser, corner_crops  # noqa: E402
from vision.render import TableCard, render_table  # noqa: E402

BICYCLE = factory_order("bicycle")


def spread(cards: Any, seed: int, angle: float = 0.0, table_mm: tuple[float, float] = (1000.0, 562.0)) -> np.ndarray:
    """The renderer's deck laid out in rows of 13 on a camera's view of the felt (no markers), left to right."""
    rng = np.random.default_rng(seed)
    laid = [TableCard(c, 45 + 75 * (i % 13), 70 + 105 * (i // 13), float(rng.uniform(-angle, angle)))
            for i, c in enumerate(cards)]
    return render_table(laid, rng, table_mm=table_mm, markers=False, noise=3.0)


@pytest.fixture(scope="module")
def spread_images(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A new deck in Bicycle's factory order, spread over two photos of two rows each."""
    folder = tmp_path_factory.mktemp("spread")
    paths = []
    for k in range(2):
        path = folder / f"spread{k}.png"
        cv2.imwrite(str(path), spread(BICYCLE[26 * k:26 * k + 26], seed=k))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def enrolled(spread_images: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    deck = tmp_path_factory.mktemp("deck")
    assert cli_main(["vision", "enrol", "--deck", str(deck), "--order", "bicycle", "--spread",
                     *map(str, spread_images)]) == 0
    return deck


def test_factory_orders_spell_each_brands_new_deck_order(tmp_path: Path) -> None:
    assert [str(c) for c in BICYCLE[:2] + BICYCLE[12:14] + BICYCLE[25:27] + BICYCLE[38:40] + BICYCLE[-1:]] == [
        "AS", "2S", "KS", "AD", "KD", "KC", "AC", "KH", "AH"]
    assert len(set(BICYCLE)) == 52 and set(load_orders()) >= {"bicycle", "suits"}
    bad = tmp_path / "orders.toml"
    bad.write_text('[house]\norder = ["AS-KD"]\n')
    with pytest.raises(EnrolError, match=r"orders.toml\[house\].order: .*one suit"):
        load_orders(bad)
    bad.write_text('[house]\norder = ["AS", "AS"]\n')
    with pytest.raises(EnrolError, match=r"\[house\].order: a card comes twice"):
        load_orders(bad)
    with pytest.raises(EnrolError, match="--order: no brand 'nope'"):
        factory_order("nope")


def test_a_spread_in_factory_order_enrols_a_model_that_reads_that_deck(enrolled: Path) -> None:
    model = DeckModel.load(enrolled)
    assert model.meta["accepted"] and model.meta["cards"] == 52 and len(model.id) == 12
    hb = model.meta["held_back"]
    assert hb["corners"] > 0 and hb["enrolled_right"] >= hb["base_right"]
    # The same deck shuffled, laid down again a little turned: the enrolled model alone reads it, never surely wrong.
    rng = np.random.default_rng(5)
    shuffled = [BICYCLE[i] for i in rng.permutation(52)]
    right = wrong = 0
    for k in range(2):
        frame = spread(shuffled[26 * k:26 * k + 26], seed=10 + k, angle=6.0)
        rects = spread_cards(frame)
        assert len(rects) == 26
        for reading, card in zip(model.read(corner_crops(frame, rects)), shuffled[26 * k:26 * k + 26]):
            if reading.confidence >= 0.9:
                right += reading.card == card
                wrong += reading.card != card
    assert wrong == 0 and right >= 40  # the rest unsure (a small club and spade alike): the base readers read those


def test_a_spread_whose_count_is_not_the_orders_is_refused_naming_it(spread_images: list[Path], tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["vision", "enrol", "--deck", str(tmp_path), "--order", "bicycle", "--spread",
                     str(spread_images[0])]) == 2
    assert "--spread: found 26 cards in 1 image(s), the order has 52" in capsys.readouterr().err
    assert not (tmp_path / MODEL_JSON).exists()


def test_an_enrolment_reading_worse_than_the_base_readers_is_refused(spread_images: list[Path], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The spread enrolled in the wrong factory order: its held-back corners read worse than the base readers read
    them, so the model is kept apart (refused/), never used."""
    assert cli_main(["vision", "enrol", "--deck", str(tmp_path), "--order", "suits", "--spread",
                     *map(str, spread_images)]) == 2
    err = capsys.readouterr().err
    assert "refused: it reads" in err and "held-back corners, the base readers" in err and "not used" in err
    assert not (tmp_path / MODEL_JSON).exists() and (tmp_path / "refused" / MODEL_JSON).is_file()
    assert load_enrolled(tmp_path) is None
    with caplog.at_level(logging.WARNING, logger="croupier.vision.enrol"):
        assert load_enrolled(tmp_path / "refused") is None
    assert "refused: it read" in caplog.text and "reading with the base readers" in caplog.text


def test_a_model_changed_since_enrolment_is_not_used(enrolled: Path, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    for name in ("model.npz", MODEL_JSON):
        (tmp_path / name).write_bytes((enrolled / name).read_bytes())
    assert load_enrolled(tmp_path) is not None
    data = bytearray((tmp_path / "model.npz").read_bytes())
    data[-40] ^= 1
    (tmp_path / "model.npz").write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="croupier.vision.enrol"):
        assert load_enrolled(tmp_path) is None
    assert "not used" in caplog.text and "changed since enrolment" in caplog.text


def test_the_recogniser_names_cards_by_the_enrolled_model_where_it_is_sure(enrolled: Path) -> None:
    model = load_enrolled(enrolled)
    frame = spread(BICYCLE[:13], seed=3)
    base = Recogniser()
    mine = Recogniser(enrolled=model)
    assert mine.model_id == f"enrolled:{model.id}" and base.model_id.startswith("base:")
    read_first = {str(d.card): d.model for d in mine.identify(frame) if d.card is not None}
    by_base = base.identify(frame)
    assert set(read_first) == {str(d.card) for d in by_base if d.card is not None} <= {str(c) for c in BICYCLE[:13]}
    assert len(read_first) >= 12
    assert set(read_first.values()) <= {"", f"enrolled:{model.id}"} and f"enrolled:{model.id}" in read_first.values()
    assert all(d.model == "" for d in by_base)
    # The cards lying still in the next frame are not read again by the enrolled model: their readings stand.
    calls: list[int] = []
    read = model.read
    model.read = lambda crops: calls.append(len(crops)) or read(crops)  # type: ignore[method-assign]
    again = {str(d.card): d.model for d in mine.identify(frame) if d.card is not None}
    assert again == read_first and calls == []
    mine.identify(np.ascontiguousarray(np.roll(frame, 40, axis=1)))  # every card moved: each read again
    assert len(calls) == 1 and calls[0] >= 2 * len(read_first)


def test_two_corners_naming_different_cards_name_none(enrolled: Path) -> None:
    # An overlapped card's covered corner can show its neighbour's index in the same print: the model must not pick
    # a rank from one corner and a suit from the other, nor the surer of two cards.
    model = load_enrolled(enrolled)
    frame = spread(BICYCLE[:13], seed=3)
    found = [d for d in Recogniser().identify(frame) if d.card is not None]
    crops = corner_crops(frame, [d.rect for d in found[:2]])
    own = model.read(crops)
    assert [r.card for r in own] == [d.card for d in found[:2]]
    assert found[0].card.rank != found[1].card.rank  # type: ignore[union-attr]
    [mixed] = model.read(crops[[0, 3]])
    assert mixed.card is None and mixed.confidence == 0.0


def test_corners_from_play_are_bounded_and_labelled_by_the_shoe(tmp_path: Path) -> None:
    keep = PlayCollector(tmp_path, per_card=3)
    crops = np.zeros((2, 48, 32, 3), np.uint8)
    for k in range(5):
        crops[:] = k
        keep.add(parse_card("QD"), crops)
    keep.add(parse_card("2C"), crops)
    assert sorted(p.name for p in (tmp_path / "play" / "QD").iterdir()) == ["2.png", "3.png", "4.png"]
    examples = play_examples(tmp_path)
    assert [str(e.card) for e in examples] == ["2C", "QD", "QD", "QD"]
    assert [int(e.crops[0, 0, 0, 0]) for e in examples] == [4, 2, 3, 4] and examples[0].crops.shape == (2, 48, 32, 3)
    # A collector started afresh goes on numbering after what is there, and still keeps the newest three.
    PlayCollector(tmp_path, per_card=3).add(parse_card("QD"), crops)
    assert sorted(p.name for p in (tmp_path / "play" / "QD").iterdir()) == ["3.png", "4.png", "5.png"]


GAME = {"spots": [{"spot": 2, "hands": [{"box": "main", "cards": [{"card": "3D", "up": True},
                                                                  {"card": "QD", "up": True}]}]}],
        "dealer": {"cards": [{"card": "AH", "up": True}, {"card": "9S", "up": False}]}}


def _seen(card: str | None, zone: str | None, certain: bool = True, kind: str = "card_appeared") -> dict[str, Any]:
    return {"kind": kind, "card": card, "zone": zone, "certain": certain, "face_down": card is None}


@pytest.mark.parametrize("seen, camera, label", [
    (_seen("QD", "spot 2"), (), "QD"),                                   # a sure reading where the shoe dealt it
    (_seen("KC", "spot 2"), (), None),                                   # not a card the shoe dealt there
    (_seen("9S", "dealer"), (), None),                                   # dealt face down: never labelled
    (_seen("8D", "spot 2", certain=False), (("3D", "spot 2", True, False),), "QD"),  # the one dealt card unseen
    (_seen("8D", "spot 2", certain=False), (), None),                    # which of two cannot be told
    (_seen("QD", None), (), None),                                       # outside every zone
    (_seen(None, "dealer"), (), None),                                   # face down
    (_seen("QD", "spot 2", kind="card_removed"), (), None),
])
def test_shoe_label(seen: dict[str, Any], camera: tuple, label: str | None) -> None:
    assert shoe_label(GAME, None, seen, camera) == label


@pytest.mark.slow
def test_a_table_reads_with_its_enrolled_deck_journals_which_model_read_and_collects_from_play(
        tmp_path: Path) -> None:
    """A simulated baccarat table whose deck was enrolled (a spread of the simulated camera's deck, at its scale):
    the camera starts with the enrolled model, journals which model read each card, and keeps the corners of the
    cards the shoe dealt, labelled by the shoe."""
    cfg = dataclasses.replace(table_config(tmp_path, "baccarat", seed=11),
                              camera=CameraConfig("sim", fps=10.0, stable_frames=2))
    deck = deck_dir(cfg)
    assert deck == tmp_path / "baccarat-1.deck"
    image = tmp_path / "spread.png"
    cv2.imwrite(str(image), spread(BICYCLE, seed=7, table_mm=(1200.0, 675.0)))
    assert cli_main(["vision", "enrol", "--deck", str(deck), "--order", "bicycle", "--spread", str(image)]) == 0
    model_id = DeckModel.load(deck).id

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(2)), lambda: bool(misplaceable(table)))
        assert await table.wait_for(lambda s: len(s.camera) >= 4, 60)
        alerts = [a.text for a in table.state.alerts]
        await table.stop()
        assert alerts == []  # no card misread

    asyncio.run(asyncio.wait_for(main(), 180))
    with Journal(cfg.journal, cfg.table_id) as j:
        records = [e.record for e in j.entries()]
    started = [r for r in records if r["kind"] == "camera" and r["what"] == "started"]
    assert [r["model"] for r in started] == [f"enrolled:{model_id}"]
    seen = [r for r in records if r["kind"] == "seen" and r["event"]["kind"] != "card_removed"]
    assert seen and all(r["model"] in (f"enrolled:{model_id}", Recogniser().base_id) for r in seen)
    assert any(r["model"] == f"enrolled:{model_id}" for r in seen)
    dealt = {r["event"]["card"] for r in records if r["kind"] == "game" and r["event"].get("kind") == "card_dealt"}
    kept = play_examples(deck)
    assert kept and {str(e.card) for e in kept} <= dealt
    assert all(e.crops.shape == (2, 48, 32, 3) for e in kept)


def test_enrol_from_play_needs_corners_collected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["vision", "enrol", "--deck", str(tmp_path), "--from-play"]) == 2
    assert "--from-play: no corners collected in" in capsys.readouterr().err


@pytest.mark.slow
def test_enrol_from_play_learns_from_the_collected_corners(enrolled: Path, spread_images: list[Path],
                                                           tmp_path: Path) -> None:
    """The spread's corners kept as a table keeps them from play, three sightings a card: enrolled from play."""
    keep = PlayCollector(tmp_path)
    for k, path in enumerate(spread_images):
        frame = cv2.imread(str(path))
        rects = spread_cards(frame)
        crops = corner_crops(frame, rects)
        for j, card in enumerate(BICYCLE[26 * k:26 * k + 26]):
            for _ in range(2):
                keep.add(card, crops[2 * j:2 * j + 2])
    assert cli_main(["vision", "enrol", "--deck", str(tmp_path), "--from-play"]) == 0
    model = DeckModel.load(tmp_path)
    assert model.meta["accepted"] and model.meta["cards"] == 52 and model.meta["source"] == "play: 104 sightings"
    # More sightings a card, fewer nudges of each: no card has more descriptions than a spread's two corners do.
    assert np.bincount(model.labels).max() <= 60 < len(model.labels) // 52 * 2
    assert Card(14, Suit.SPADES) in {r.card for r in model.read(corner_crops(
        cv2.imread(str(spread_images[0])), spread_cards(cv2.imread(str(spread_images[0])))[:1]))}


@pytest.mark.slow
def test_bench_vision_times_enrolment(tmp_path: Path) -> None:
    import json

    path = tmp_path / "bench.json"
    assert cli_main(["bench", "vision", "--frames", "2", "--enrol", "--json", str(path)]) == 0
    figures = json.loads(path.read_text())
    assert figures["enrol_accepted"] is True and figures["enrol_s"] > 0 and figures["enrolled_ms_p50"] > 0
    assert len(figures["enrol_pi4_estimate_s"]) == 2


def test_enrol_finds_the_tables_deck_folder_beside_its_journal(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from tests.table_helpers import table_toml

    path = table_toml(tmp_path, "bj-1", "blackjack")
    assert cli_main(["vision", "enrol", "--config", str(path), "--from-play"]) == 2
    assert f"no corners collected in {tmp_path / 'bj-1.deck' / 'play'}" in capsys.readouterr().err
    assert cli_main(["vision", "enrol", "--config", str(tmp_path / "none.toml"), "--from-play"]) == 2
    assert "--config: " in capsys.readouterr().err
    assert cli_main(["vision", "enrol", "--config", str(path), "--spread", str(path)]) == 2
    assert "--spread needs --order BRAND" in capsys.readouterr().err
