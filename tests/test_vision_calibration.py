"""Unsure is not wrong, and no false cards: calibrated confidences, unsure flags from the reader to the tracker, and
the rules that keep a joker, one card read twice and a repeated card from being dealt."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from controller.cards import JOKER, parse_card
from vision.calibration import Calibration, IDENTITY, UNSURE_BELOW, ece, fit, load_calibrations
from vision.cardrect import CardRect
from vision.labelled import Label, LabelledImage, Report, Tally, score_image
from vision.readings import Detection, flag_repeats, one_reading_a_card
from vision.recognise import MODELS_DIR, PHOTO_SIZES, Recogniser
from vision.tracker import CardAppeared, Sighting, Tracker


def _det(card: str | None, conf: float, x: float, y: float = 100.0, ux: float = 0.0, uy: float = -1.0,
         half_w: float = 40.0) -> Detection:
    return Detection(parse_card(card) if card else None, conf, 0.9, (x - half_w, y - 56, x + half_w, y + 56),
                     CardRect(x, y, ux, uy, 56.0, half_w))


def test_fit_recovers_a_known_calibration() -> None:
    # Readings whose chance of being right is sigmoid(2 * logit(c) - 0.5): the fit finds (2, -0.5).
    rng = np.random.default_rng(5)
    conf = rng.uniform(0.05, 0.999, 20000)
    logit = np.log(conf / (1 - conf))
    right = rng.uniform(size=conf.size) < 1 / (1 + np.exp(-(2 * logit - 0.5)))
    a, b = fit(zip(conf.tolist(), right.tolist()))
    assert a == pytest.approx(2.0, abs=0.1) and b == pytest.approx(-0.5, abs=0.1)
    cal = Calibration(a, b)
    readings = list(zip(conf.tolist(), right.tolist()))
    assert ece([(cal(c), ok) for c, ok in readings]) < 0.02 < ece(readings)
    with pytest.raises(ValueError, match="readings"):
        fit([])


def test_ece_of_known_bins() -> None:
    # [0.5, 0.6): 0.55, wrong; [0.9, 1.0]: 0.95 right and 0.97 wrong.
    assert ece([(0.95, True), (0.55, False), (0.97, False)]) == pytest.approx((0.55 + 2 * 0.46) / 3)
    assert ece([]) == 0.0


def test_the_shipped_models_carry_both_calibrations(tmp_path: Path) -> None:
    cals = load_calibrations(MODELS_DIR)
    assert set(cals) == {"photo", "table"}
    for cal in cals.values():
        assert cal.a > 0 and cal.unsure_below == UNSURE_BELOW and cal.source
        assert cal(0.2) < cal(0.5) < cal(0.9)  # monotone: the readers' order of readings stands
    assert load_calibrations(tmp_path) == {}  # a models folder from before: raw confidences
    (tmp_path / "calibration.json").write_text(json.dumps({"photo": {"b": 1}}))
    with pytest.raises(ValueError, match="calibration.json: .* a and b"):
        load_calibrations(tmp_path)
    assert IDENTITY(0.7) == pytest.approx(0.7) and IDENTITY.unsure(0.89) and not IDENTITY.unsure(0.9)


@pytest.fixture(scope="module")
def photo_reader() -> Recogniser:
    return Recogniser(det_size=PHOTO_SIZES, indices=False)


def test_the_reader_calibrates_and_flags_unsure_readings(photo_reader: Recogniser) -> None:
    cal = photo_reader.calibration
    assert cal is not IDENTITY and cal.source.startswith("the real photos' training split")
    raw = math.exp(math.log(0.9 / 0.1) / cal.a - cal.b / cal.a)  # calibrated exactly 0.9 ...
    raw = raw / (1 + raw)
    low, high = _det("9S", raw - 0.02, 100), _det("KD", raw + 0.02, 400)
    out = {str(d.card): d for d in photo_reader.judged([low, high])}
    assert out["9S"].unsure and out["9S"].confidence == pytest.approx(cal(raw - 0.02))
    assert not out["KD"].unsure and out["KD"].confidence > UNSURE_BELOW
    assert out["9S"].to_json()["unsure"] is True
    # An enrolled deck model's reading keeps its own confidence (the calibration is the base readers').
    enrolled = Detection(parse_card("QH"), 0.95, 0.9, (0, 0, 1, 1), CardRect(700, 100, 0, -1, 56, 40), model="enrolled:x")
    assert photo_reader.judged([enrolled])[0].confidence == 0.95


def test_a_joker_is_no_card_unless_the_game_deals_one(photo_reader: Recogniser) -> None:
    joker = Detection(JOKER, 0.99, 0.9, (0, 0, 80, 112), CardRect(40, 56, 0, -1, 56, 40))
    out = photo_reader.judged([joker, _det("AS", 0.99, 300)])
    assert [d.card for d in out] == [None, parse_card("AS")] and not out[0].face_down
    pai_gow = Recogniser.__new__(Recogniser)
    pai_gow.__dict__.update(photo_reader.__dict__, jokers=True)
    assert pai_gow.judged([joker])[0].card == JOKER


def test_one_card_read_twice_at_one_place_names_one_card() -> None:
    # The surer reading of one place stands; a cascade's neighbour, half a width across, is another card.
    qh, qs = _det("QH", 0.9, 100), _det("QS", 0.4, 110)
    neighbour = _det("7C", 0.95, 140)
    assert one_reading_a_card([qs, qh, neighbour]) == [neighbour, qh]
    # A photo's card read again turned by 90 degrees, its rectangle's centre 0.7 of a half-width off: one card.
    turned = _det("QS", 0.17, 100, 128, ux=-1.0, uy=0.0)
    assert one_reading_a_card([qh, turned], turned=True) == [qh]
    assert one_reading_a_card([qh, turned]) == [qh, turned]  # a table frame's cascade may lie so
    # Unnamed readings (a back, a covered card) are no reading of a card.
    back = dataclasses_replace(_det(None, 0.95, 100), face_down=True)
    assert one_reading_a_card([qh, back]) == [back, qh]


def test_a_photos_smaller_card_centred_well_inside_a_surer_one_is_its_pips_read_as_a_card() -> None:
    card = Detection(parse_card("3C"), 0.99, 0.9, (260, 100, 540, 500), CardRect(400, 300, 0, -1, 200, 140))
    pips = Detection(parse_card("JC"), 0.8, 0.9, (340, 120, 540, 400), CardRect(440, 260, 0, -1, 140, 100))
    # A card under it, seen as a sliver at its edge, its rectangle guessed small from the sliver: another card.
    sliver = Detection(parse_card("JH"), 0.8, 0.9, (520, 120, 640, 480), CardRect(530, 300, 0, -1, 180, 110))
    assert one_reading_a_card([pips, card, sliver], turned=True, nested=True) == [card, sliver]
    assert one_reading_a_card([pips, card, sliver], turned=True) == [card, pips, sliver]  # as before
    # The surer reading stands: a smaller card read more surely keeps the larger one too (neither is dropped).
    sure_pips = dataclasses_replace(pips, confidence=0.999)
    assert one_reading_a_card([sure_pips, card], turned=True, nested=True) == [sure_pips, card]


def dataclasses_replace(d: Detection, **kw: object) -> Detection:
    import dataclasses

    return dataclasses.replace(d, **kw)  # type: ignore[arg-type]


def test_a_card_twice_in_one_deck_is_flagged_not_dealt_twice() -> None:
    a, b, other = _det("7H", 0.99, 100), _det("7H", 0.97, 600), _det("KS", 0.99, 300)
    out = flag_repeats([a, b, other], decks=1)
    assert [d.unsure for d in out] == [True, True, False]
    assert [d.unsure for d in flag_repeats([a, b, other], decks=2)] == [False, False, False]
    assert flag_repeats([a, b, other], decks=None) == [a, b, other]  # how many decks not known: nothing flagged


def test_an_unsure_reading_is_never_certain_at_the_table() -> None:
    # Sure by its confidence (0.99), flagged unsure by the reader in one of the stable frames: not certain.
    t = Tracker(stable_frames=3, min_confidence=0.9)
    seen = [Sighting(parse_card("7H"), 0.99, 100, 100, "spot 1", 30.0, False, unsure=k == 1) for k in range(3)]
    events = [e for s in seen for e in t.update([s]) if isinstance(e, CardAppeared)]
    assert len(events) == 1 and events[0].card == parse_card("7H") and not events[0].certain
    t = Tracker(stable_frames=3, min_confidence=0.9)
    events = [e for _ in range(3) for e in t.update([Sighting(parse_card("7H"), 0.99, 100, 100, "spot 1")])
              if isinstance(e, CardAppeared)]
    assert events[0].certain


def test_evaluate_counts_what_the_flags_did() -> None:
    box = ((0.0, 0.0), (100.0, 0.0), (100.0, 140.0), (0.0, 140.0))
    item = LabelledImage(Path("p.jpg"), (Label("QS", 12, 3, box), Label("6H", 6, 2, tuple((x + 200, y) for x, y in box))))
    tally = Tally()
    score_image(item, [Report(12, 3, (10, 10, 90, 130), 0.95), Report(9, 2, (210, 10, 290, 130), 0.55, unsure=True),
                       Report(12, 3, (900, 900, 950, 950), 0.7, unsure=True)], tally)
    assert tally.flagged() == {"unsure": 2, "unsure_wrong": 2, "unsure_right": 0, "sure_wrong": 0}
    assert tally.sure_precision == 1.0 and tally.to_json()["flagged"]["unsure_wrong"] == 2


def test_a_photo_reading_likelier_wrong_than_right_names_no_card(photo_reader: Recogniser) -> None:
    cal = photo_reader.calibration
    assert cal.names_none == 0.5
    out = sorted(photo_reader.judged([_det("AH", 0.30, 100), _det("AC", 0.60, 400)]), key=lambda d: d.rect.cx)
    assert out[0].card is None and not out[0].face_down and out[0].confidence < 0.5
    assert str(out[1].card) == "AC" and out[1].unsure
    # A table camera's reading stays a vote however low: its tracker averages a card's readings over frames.
    table = Recogniser()
    assert table.calibration.names_none == 0.0 and table.judged([_det("AH", 0.30, 100)])[0].card is not None


def _train_photo(name: str) -> Path:
    from vision import realdata

    root = realdata.photos_dir()
    if root is None:
        pytest.skip("real card photos not found")
    train, _ = realdata.split(realdata.load_photos(root))
    return next(p.path for p in train if p.path.name == name)  # training photos only: never the held-out ones


@pytest.mark.parametrize(("name", "cards"), [
    ("IMG_2496.JPG", ["9S"]),   # a business card beside the 9S: read AH at 0.30 before
    ("IMG_2494.JPG", ["KS"]),   # an oil-change flyer beside the KS: its print read as a joker before
    ("IMG_2453.JPG", ["QD"]),   # a sheet of paper by the QD: read AC at 0.38 before
])
def test_printed_matter_in_the_training_photos_is_no_card(photo_reader: Recogniser, name: str,
                                                           cards: list[str]) -> None:
    import cv2

    image = cv2.imread(str(_train_photo(name)), cv2.IMREAD_COLOR)
    assert image is not None
    assert sorted(str(d.card) for d in photo_reader.identify(image) if d.card is not None) == cards


def test_the_watcher_hands_the_readers_unsure_flag_to_the_tracker() -> None:
    from vision.tracker import TableWatcher

    class Reader:
        def identify(self, frame: object) -> list[Detection]:
            a, b = _det("7H", 0.99, 100), _det("7H", 0.99, 600)
            return flag_repeats([a, b, _det("KS", 0.99, 300)], decks=1)

    watcher = TableWatcher(Reader(), None, Tracker(stable_frames=2, min_confidence=0.9))
    events = [e for _ in range(2) for e in watcher.process(None) if isinstance(e, CardAppeared)]
    assert sorted((str(e.card), e.certain) for e in events) == [("7H", False), ("7H", False), ("KS", True)]
