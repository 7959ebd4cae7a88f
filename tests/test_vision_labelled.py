"""`croupier vision evaluate --photos DIR`: labelled folders in every supported format, the scoring by rank and by
rank and suit, the confusion table, the failures' contact sheet, and the development-test deck when it is present."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, strategies as st

from controller.cards import parse_card
from controller.cli import main
from vision import render
from vision.labelled import (Label, LabelError, LabelledImage, Report, Tally, load_folder, parse_label, rank_table,
                             score_image)

RANK_SPELLINGS = {2: ["2", "two"], 3: ["3", "three"], 4: ["4", "four"], 5: ["5", "five"], 6: ["6", "six"],
                  7: ["7", "seven"], 8: ["8", "eight"], 9: ["9", "nine"], 10: ["10", "T", "ten"],
                  11: ["J", "jack"], 12: ["Q", "queen"], 13: ["K", "king"], 14: ["A", "ace"]}
SUIT_SPELLINGS = {0: ("C", "clubs"), 1: ("D", "diamonds"), 2: ("H", "hearts"), 3: ("S", "spades")}


@given(st.sampled_from(sorted(RANK_SPELLINGS)), st.sampled_from([None, 0, 1, 2, 3]), st.data())
def test_every_spelling_of_a_card_parses(rank: int, suit: int | None, data: st.DataObject) -> None:
    spelled = data.draw(st.sampled_from(RANK_SPELLINGS[rank]))
    upper = data.draw(st.booleans())
    if suit is None:
        text = spelled
    else:
        letter, word = SUIT_SPELLINGS[suit]
        short = [spelled + letter, spelled + letter.lower()] if len(spelled) <= 2 else []  # "10C", "Qh"
        text = data.draw(st.sampled_from(short + [f"{spelled} of {word}", f"{spelled}_{word}", f"{spelled}-{word}"]))
    text = text.upper() if upper else text
    assert parse_label(text) == (rank, suit)


@pytest.mark.parametrize("text", ["joker", "JK", "back", "card", "club", "", "11", "Z9"])
def test_labels_naming_no_card(text: str) -> None:
    assert parse_label(text) == (None, None)


def _box(x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[float, float], ...]:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def test_scoring_by_rank_and_by_rank_and_suit() -> None:
    item = LabelledImage(Path("p.jpg"), (
        Label("QS", 12, 3, _box(0, 0, 100, 140)),
        Label("6H", 6, 2, _box(200, 0, 300, 140)),
        Label("9", 9, None, _box(400, 0, 500, 140)),
        Label("joker", None, None, _box(600, 0, 700, 140)),
    ))
    reports = [Report(12, 0, (10, 10, 90, 130)),      # right rank, wrong suit
               Report(9, 2, (210, 10, 290, 130)),     # a 6 read as a 9: wrong, and false
               Report(9, 1, (410, 10, 490, 130)),     # right rank; the label gives no suit to judge
               Report(14, 3, (610, 10, 690, 130)),    # on the joker: neither right nor false
               Report(5, 3, (900, 900, 950, 950))]    # where no card is: false
    tally = Tally()
    failures = score_image(item, reports, tally)
    assert (tally.labelled, tally.rank_found, tally.suited, tally.card_found) == (3, 2, 2, 0)
    assert (tally.reported, tally.rank_false, tally.card_false) == (5, 2, 3)
    assert tally.rank_precision == 3 / 5 and tally.card_precision == 2 / 5
    assert tally.by_rank == {12: [1, 1], 6: [1, 0], 9: [1, 1]}
    assert tally.confusion == {12: {12: 1}, 6: {9: 1}, 9: {9: 1}, 0: {5: 1}}
    assert sorted(f.kind for f in failures) == ["false", "false", "missed", "wrong suit"]
    table = rank_table(tally)
    assert table[0].split()[:3] == ["true\\read", "-", "2"]
    six = next(line for line in table if line.split()[0] == "6")
    assert six.split()[-1] == "0/1" and six.split()[1 + 8] == "1"  # column 9 (after '-' and 2..8)
    assert next(line for line in table if line.split()[0] == "-").split()[1 + 4] == "1"  # a 5 on no card


def test_calibration_of_the_reports() -> None:
    item = LabelledImage(Path("p.jpg"), (Label("QS", 12, 3, _box(0, 0, 100, 140)),
                                         Label("6H", 6, 2, _box(200, 0, 300, 140))))
    tally = Tally()
    score_image(item, [Report(12, 3, (10, 10, 90, 130), 0.95), Report(9, 2, (210, 10, 290, 130), 0.55),
                       Report(5, 0, (900, 900, 950, 950), 0.97)], tally)
    assert tally.calibration == [(0.95, True), (0.55, False), (0.97, False)]
    # Bins: [0.5, 0.6) holds 0.55 (accuracy 0), [0.9, 1.0] holds 0.95 and 0.97 (accuracy 0.5, confidence 0.96).
    assert tally.ece() == pytest.approx((0.55 + 2 * 0.46) / 3)
    assert tally.unsure() == (1, 1, 1)
    assert Tally().ece() == 0.0


def test_a_card_reported_twice_counts_once() -> None:
    item = LabelledImage(Path("p.jpg"), (Label("KD", 13, 1, _box(0, 0, 100, 140)),))
    tally = Tally()
    score_image(item, [Report(13, 1, (0, 0, 100, 140)), Report(13, 1, (10, 10, 90, 130))], tally)
    assert (tally.rank_found, tally.card_found, tally.rank_false, tally.card_false) == (1, 1, 1, 1)


def test_index_corner_labels_count_a_card_once_and_find_it_by_either_corner() -> None:
    # A fanned hand: labels outline index corners (the 7H shows both, the KS one), and a card's box is its visible part.
    item = LabelledImage(Path("p.jpg"), (
        Label("7H", 7, 2, _box(10, 10, 30, 60)), Label("7H", 7, 2, _box(170, 180, 190, 230)),
        Label("KS", 13, 3, _box(300, 10, 320, 60)),
    ))
    reports = [Report(7, 2, (150, 100, 200, 240)),   # holds the 7H's second corner only
               Report(13, 0, (290, 0, 400, 140)),    # right rank, wrong suit
               Report(9, 1, (0, 300, 50, 340))]      # on no corner: false
    tally = Tally()
    score_image(item, reports, tally, index=True)
    assert (tally.labelled, tally.rank_found, tally.card_found) == (2, 2, 1)
    assert (tally.rank_false, tally.card_false) == (1, 2)
    # Read as card outlines, the same reports' centres are on no label: nothing found.
    as_cards = Tally()
    score_image(item, reports, as_cards)
    assert (as_cards.labelled, as_cards.rank_found) == (3, 0)


def test_an_outline_is_a_polygon_not_its_box() -> None:
    diamond = Label("AS", 14, 3, ((50, 0), (100, 50), (50, 100), (0, 50)))
    assert diamond.contains((50, 50)) and not diamond.contains((5, 5)) and diamond.box == (0, 0, 100, 100)


def _image(path: Path, w: int = 320, h: int = 240) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.full((h, w, 3), 90, np.uint8))


def test_loads_pascal_voc(tmp_path: Path) -> None:
    _image(tmp_path / "a.jpg")
    (tmp_path / "a.xml").write_text("<annotation><filename>a.jpg</filename><object><name>ace of hearts</name>"
                                    "<bndbox><xmin>10</xmin><ymin>20</ymin><xmax>60</xmax><ymax>90</ymax></bndbox>"
                                    "</object><object><name>nine</name><bndbox><xmin>1</xmin><ymin>2</ymin>"
                                    "<xmax>3</xmax><ymax>4</ymax></bndbox></object></annotation>")
    [item] = load_folder(tmp_path)
    assert item.path == tmp_path / "a.jpg"
    assert [(lab.rank, lab.suit, lab.box) for lab in item.labels] == [(14, 2, (10, 20, 60, 90)), (9, None, (1, 2, 3, 4))]


def test_loads_yolo_with_a_data_yaml_and_images_beside_labels(tmp_path: Path) -> None:
    (tmp_path / "data.yaml").write_text("train: train/images\nnc: 3\nnames: ['10C', 'QS', 'joker']\n")
    _image(tmp_path / "train" / "images" / "x.jpg", 200, 100)
    (tmp_path / "train" / "labels").mkdir(parents=True)
    (tmp_path / "train" / "labels" / "x.txt").write_text("1 0.5 0.5 0.2 0.4\n0 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n")
    [item] = load_folder(tmp_path)
    assert item.path.name == "x.jpg"
    q, t = item.labels
    assert (q.rank, q.suit, q.box) == (12, 3, (80.0, 30.0, 120.0, 70.0))
    assert (t.rank, t.suit) == (10, 0) and t.box == pytest.approx((20.0, 10.0, 60.0, 30.0))
    # A block list of names, and a class list file, read the same.
    (tmp_path / "data.yaml").write_text("names:\n  - 10C\n  - QS\n")
    assert load_folder(tmp_path)[0].labels[0].rank == 12
    (tmp_path / "data.yaml").unlink()
    (tmp_path / "classes.txt").write_text("10C\nQS\n")
    assert load_folder(tmp_path)[0].labels[0].rank == 12


def test_loads_labelme_and_cards_json(tmp_path: Path) -> None:
    _image(tmp_path / "a.png")
    (tmp_path / "a.json").write_text(json.dumps({"imagePath": "a.png", "shapes": [
        {"label": "7d", "points": [[10, 10], [50, 10], [50, 70], [10, 70]], "shape_type": "polygon"},
        {"label": "K", "points": [[60, 80], [100, 20]], "shape_type": "rectangle"}]}))
    _image(tmp_path / "sub" / "b.png")
    (tmp_path / "cards.json").write_text(json.dumps([{"image": "sub/b.png", "cards": [
        {"card": "2S", "outline": [[0, 0], [30, 0], [30, 40], [0, 40]]}, {"card": "jack", "box": [40, 0, 80, 60]}]}]))
    a, b = load_folder(tmp_path)
    assert [(lab.rank, lab.suit) for lab in a.labels] == [(7, 1), (13, None)] and a.labels[1].box == (60, 20, 100, 80)
    assert b.path == tmp_path / "sub" / "b.png" and [(lab.rank, lab.suit) for lab in b.labels] == [(2, 3), (11, None)]


@pytest.mark.parametrize("files, message", [
    ({"a.xml": "<annotation><filename>gone.jpg</filename></annotation>"}, "names no image"),
    ({"x.txt": "0 0.5 0.5 0.1 0.1\n"}, "classes.txt, obj.names or data.yaml"),
    ({"x.txt": "5 0.5 0.5 0.1 0.1\n", "classes.txt": "AS\n"}, "class 5 is not in classes.txt"),
    ({"x.txt": "0 0.5 0.5\n", "classes.txt": "AS\n"}, "expected 'class cx cy w h'"),
    ({"cards.json": '[{"image": "x.jpg", "cards": [{"card": "AS"}]}]'}, "needs 'outline' or 'box'"),
    ({"notes.md": "nothing"}, "no labelled images found"),
])
def test_bad_folders_get_one_line_naming_the_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            files: dict[str, str], message: str) -> None:
    _image(tmp_path / "x.jpg")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(LabelError, match=message):
        load_folder(tmp_path)
    assert main(["vision", "evaluate", "--photos", str(tmp_path), "--sheet", str(tmp_path / "s.html")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def _photo(path: Path, cards: list[tuple[str, int, int]]) -> list[tuple[str, tuple[int, int, int, int]]]:
    img = np.full((480, 640, 3), (40, 110, 40), np.uint8)
    boxes = []
    for text, x, y in cards:
        face = cv2.resize(render.card_face(parse_card(text)), (150, 210), interpolation=cv2.INTER_AREA)
        a = face[..., 3:4] / 255.0
        img[y:y + 210, x:x + 150] = (face[..., :3] * a + img[y:y + 210, x:x + 150] * (1 - a)).astype(np.uint8)
        boxes.append((text, (x, y, x + 150, y + 210)))
    cv2.imwrite(str(path), img)
    return boxes


def test_evaluate_photos_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    boxes = _photo(tmp_path / "p.png", [("QH", 60, 120), ("6S", 400, 120)])
    # The 6 of spades is labelled a 5 of spades: one card right, one missed, one false report.
    (tmp_path / "cards.json").write_text(json.dumps([{"image": "p.png", "cards": [
        {"card": "QH", "box": boxes[0][1]}, {"card": "5S", "box": boxes[1][1]}]}]))
    sheet, figures = tmp_path / "failures.html", tmp_path / "f.json"
    assert main(["vision", "evaluate", "--photos", str(tmp_path), "--sheet", str(sheet), "--json", str(figures)]) == 0
    out = capsys.readouterr().out
    assert "right rank: 1/2 = 50.00%; precision 1/2 = 50.00%" in out
    assert "right rank and suit: 1/2 = 50.00%" in out and "confusion by rank" in out
    assert "expected calibration error" in out
    got = json.loads(figures.read_text())
    assert set(got) == {"photos"}  # the other sets are not read
    [f] = got["photos"]
    assert (f["labelled"], f["rank_found"], f["card_found"], f["reported"], f["rank_false"]) == (2, 1, 1, 2, 1)
    assert f["confusion"] == {"5": {"6": 1}, "Q": {"Q": 1}} and f["failures"] == 2
    page = sheet.read_text()
    assert page.count("<figure") == 2 and "data:image/png;base64," in page and "read 6S" in page


@pytest.mark.parametrize("table", [False, True])
def test_evaluate_photos_with_index_corner_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  table: bool) -> None:
    boxes = _photo(tmp_path / "p.png", [("QH", 60, 120), ("6S", 400, 120)])
    # Each card labelled by its top-left index corner only (a tenth of the card's width, a quarter of its height).
    (tmp_path / "cards.json").write_text(json.dumps([{"image": "p.png", "cards": [
        {"card": text, "box": (x0, y0, x0 + 18, y0 + 50)} for text, (x0, y0, _, _) in boxes]}]))
    figures = tmp_path / "f.json"
    assert main(["vision", "evaluate", "--photos", str(tmp_path), "--index-labels", "--sheet", str(tmp_path / "s.html"),
                 "--json", str(figures), *(["--as-table"] if table else [])]) == 0
    assert "right rank and suit: 2/2 = 100.00%" in capsys.readouterr().out
    [f] = json.loads(figures.read_text())["photos"]
    assert f["labels"] == "index corners" and (f["card_found"], f["rank_false"]) == (2, 0)


def test_a_photos_card_the_detector_misses_is_read_from_its_paper_outline(tmp_path: Path) -> None:
    from vision.enrol import paper_finds
    from vision.recognise import PHOTO_SIZES, Recogniser

    boxes = _photo(tmp_path / "p.png", [("7H", 240, 130)])
    image = cv2.imread(str(tmp_path / "p.png"))
    assert image is not None
    [find] = paper_finds(image, [])
    x0, y0, x1, y1 = boxes[0][1]
    assert abs(find.rect.cx - (x0 + x1) / 2) < 5 and abs(find.rect.cy - (y0 + y1) / 2) < 5
    rec = Recogniser(det_size=PHOTO_SIZES, indices=False)
    named = rec.identify(image)
    assert [str(d.card) for d in named] == ["7H"] and paper_finds(image, named) == []  # read: nothing more to find
    rec._detect = lambda frame: ([], [], [], [])  # type: ignore[method-assign]  # the detector finds nothing
    assert [str(d.card) for d in rec.identify(image)] == ["7H"]


DEVTEST_ENV = "CROUPIER_DEVTEST_PHOTOS"


def _devtest_dir() -> Path | None:
    env = os.environ.get(DEVTEST_ENV)
    repo = Path(__file__).resolve().parents[1]
    for c in ([Path(env)] if env else []) + [repo.parent / "data-vision" / "ee326"]:
        if c.is_dir():
            return c
    return None


def test_the_development_test_deck_when_present() -> None:
    root = _devtest_dir()
    if root is None:
        pytest.skip(f"development-test photos not found (${DEVTEST_ENV} or ../data-vision/ee326; "
                    "python -m vision.training.devsets ee326 MIRROR OUT writes them)")
    items = load_folder(root)
    cards = [lab for item in items for lab in item.labels]
    assert len(items) == 58 and len(cards) == 79
    assert {lab.rank for lab in cards} == set(range(2, 15)) and {lab.suit for lab in cards} == {0, 1, 2, 3}


def test_bidly_labels_become_the_label_files_names_and_pixel_boxes() -> None:
    from vision.training.devsets import bidly_card, bidly_corner

    assert [bidly_card(n) for n in ("10s", "Qh", "2c", "Ad", "Kd")] == ["TS", "QH", "2C", "AD", "KD"]
    with pytest.raises(ValueError, match="not a bidly card name"):
        bidly_card("1x")
    label = {"name": "7h", "relative_coordinates": {"center_x": 0.5, "center_y": 0.25, "width": 0.02, "height": 0.05}}
    assert bidly_corner(label, (1200, 1200)) == ("7H", (588, 270, 612, 330))


def test_the_unseen_test_deck_when_present() -> None:
    root = Path(__file__).resolve().parents[1].parent / "data-vision" / "bidly" / "deals"
    if not root.is_dir():
        pytest.skip("the bidly deals are not here (python -m vision.training.devsets bidly MIRROR OUT writes them)")
    items = load_folder(root)
    cards = {(item.path.name, lab.name) for item in items for lab in item.labels}
    assert len(items) == 7 and sum(len(item.labels) for item in items) == 377 and len(cards) == 345
    assert {lab.rank for item in items for lab in item.labels} == set(range(2, 15))


def test_finetune_readers_with_the_extra_styles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The classifier and the second reader fine-tuned together on one set of corners, a share of the scenes' decks
    in the extra index styles (a tiny run: the recipe, not the result; needs the train extra)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from vision.recognise import MODELS_DIR
    from vision.training import realfaces

    monkeypatch.setenv("CROUPIER_CARD_PHOTOS", str(tmp_path / "none"))  # renders only: quick
    monkeypatch.chdir(tmp_path)
    faces = tmp_path / "deck"
    assert main(["vision", "train", "--finetune-classifier", str(MODELS_DIR / "classifier.onnx"),
                 "--extra-styles", "0.5", "--extra-faces", str(faces), "--out", str(tmp_path)]) == 2
    assert "--extra-faces: no folder" in capsys.readouterr().err
    # Two decks of faces, each a folder (the second one card short, as a photographed deck may be), the second with
    # the photo one of its faces was cut from (`vision.training.realfaces`): its index corners are real crops too.
    decks = [tmp_path / "deck0", tmp_path / "deck1"]
    for k, folder in enumerate(decks):
        folder.mkdir()
        for c in render.deck()[k:]:
            cv2.imwrite(str(folder / f"{realfaces.face_name(c)}.png"), np.full((384, 256, 3), 200, np.uint8))
    photo = np.full((400, 300, 3), 40, np.uint8)
    photo[50:330, 50:250] = render.card_face(parse_card("7H"))[..., :3]
    cv2.imwrite(str(tmp_path / "7h.png"), photo)
    (decks[1] / "quads.json").write_text(json.dumps({"7h": [str(tmp_path / "7h.png"),
                                                            [[50, 50], [250, 50], [250, 330], [50, 330]]]}))
    assert main(["vision", "train", "--finetune-classifier", str(MODELS_DIR / "classifier.onnx"),
                 "--extra-styles", "0.5", "--extra-faces", str(decks[0]), "--extra-faces", str(faces),
                 "--out", str(tmp_path)]) == 2
    assert f"--extra-faces: no folder {faces}" in capsys.readouterr().err
    out = tmp_path / "out"
    assert main(["vision", "train", "--finetune-classifier", str(MODELS_DIR / "classifier.onnx"),
                 "--finetune-second-reader", str(MODELS_DIR / "second_reader.onnx"), "--extra-styles", "0.5",
                 "--extra-faces", str(decks[0]), "--extra-faces", str(decks[1]), "--extra-face-share", "1",
                 "--cls-scenes", "3", "--cls-epochs", "1", "--workers", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "classifier, second_reader fine-tuned" in printed
    assert "added 32 index corners of the real decks' photos (1 cards)" in printed
    assert "tight fans" not in printed
    assert (out / "classifier.onnx").is_file() and (out / "second_reader.onnx").is_file()
    from vision import faces as faces_module

    assert faces_module._EXTRA["share"] == 0.0  # turned off again after the scenes were rendered


def test_finetune_classifier_with_tight_fans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An index reader fine-tuned on corners cut from a share of tightly fanned hands (a tiny run: the recipe, not the
    result; needs the train extra)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from vision.recognise import MODELS_DIR

    monkeypatch.setenv("CROUPIER_CARD_PHOTOS", str(tmp_path / "none"))  # renders only: quick
    start = str(MODELS_DIR / "classifier.onnx")
    assert main(["vision", "train", "--finetune-classifier", start, "--tight-fans", "-0.1",
                 "--out", str(tmp_path)]) == 2
    assert "--tight-fans must be a share between 0 and 1, not -0.1" in capsys.readouterr().err
    assert main(["vision", "train", "--finetune-wide-reader", str(MODELS_DIR / "wide_reader.onnx"), "--tight-fans",
                 "0.5", "--out", str(tmp_path)]) == 2
    assert "--tight-fans is for --finetune-detector" in capsys.readouterr().err
    out = tmp_path / "out"
    assert main(["vision", "train", "--finetune-classifier", start, "--tight-fans", "1", "--cls-scenes", "2",
                 "--cls-epochs", "1", "--workers", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "from 2 scenes (100% tight fans)" in printed and "classifier fine-tuned" in printed
    assert (out / "classifier.onnx").is_file()


def test_finetune_detector_with_tight_fans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The detector fine-tuned on a share of tightly fanned hands, its decks drawn with a photographed deck's faces,
    and the seeded set of them read (a tiny run: the recipe, not the result; needs the train extra)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from vision.recognise import MODELS_DIR
    from vision.training import realfaces

    monkeypatch.setenv("CROUPIER_CARD_PHOTOS", str(tmp_path / "none"))  # renders only: quick
    start = str(MODELS_DIR / "detector.onnx")
    assert main(["vision", "train", "--finetune-detector", start, "--tight-fans", "1.5", "--out", str(tmp_path)]) == 2
    assert "--tight-fans must be a share between 0 and 1, not 1.5" in capsys.readouterr().err
    assert main(["vision", "train", "--finetune-detector", start, "--extra-styles", "1", "--extra-faces",
                 str(tmp_path / "nodeck"), "--out", str(tmp_path)]) == 2
    assert f"--extra-faces: no folder {tmp_path / 'nodeck'}" in capsys.readouterr().err
    deck = tmp_path / "deck"  # a photographed deck's faces (grey cards here), every scene's deck drawn with them
    deck.mkdir()
    for c in render.deck():
        cv2.imwrite(str(deck / f"{realfaces.face_name(c)}.png"), np.full((384, 256, 3), 200, np.uint8))
    out = tmp_path / "out"
    assert main(["vision", "train", "--finetune-detector", start, "--tight-fans", "0.5", "--det-scenes", "4",
                 "--det-epochs", "1", "--workers", "1", "--extra-styles", "1", "--extra-faces", str(deck),
                 "--extra-face-share", "1", "--out", str(out)]) == 0
    assert "rendered 4 detector scenes (50% tight fans" in capsys.readouterr().out
    assert (out / "detector.onnx").is_file()
    from vision import faces as faces_module

    assert faces_module._EXTRA["share"] == 0.0  # turned off again after the scenes were rendered
    figures = tmp_path / "f.json"
    assert main(["vision", "evaluate", "--no-real", "--synthetic", "0", "--piles", "0", "--tight-fans", "20",
                 "--json", str(figures)]) == 0
    fans = json.loads(figures.read_text())["synthetic_fans"]
    assert fans["cards"] >= 20 and 0 <= fans["right"] <= fans["cards"] and fans["seed"] == 20261122


def test_evaluate_tight_fans_drawn_with_a_real_decks_faces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--fans-faces DIR`: the tight-fans set's decks drawn from a folder of a real deck's faces (grey cards here, the
    recipe not the result); a folder that is no deck is refused in one line, and the renderer's decks are back after."""
    from vision import faces
    from vision.training import realfaces

    deck = tmp_path / "deck"
    deck.mkdir()
    for c in render.deck():
        cv2.imwrite(str(deck / f"{realfaces.face_name(c)}.png"), np.full((384, 256, 3), 200, np.uint8))
    figures = tmp_path / "f.json"
    args = ["vision", "evaluate", "--no-real", "--synthetic", "0", "--piles", "0", "--tight-fans", "6"]
    assert main([*args, "--fans-faces", str(tmp_path / "none"), "--json", str(figures)]) == 2
    assert "--fans-faces: " in capsys.readouterr().err and not figures.exists()
    assert main(["vision", "evaluate", "--no-real", "--synthetic", "0", "--piles", "0", "--fans-faces", str(deck)]) == 2
    assert "give --tight-fans CARDS" in capsys.readouterr().err
    assert main([*args, "--fans-faces", str(deck), "--json", str(figures)]) == 0
    fans = json.loads(figures.read_text())["synthetic_fans"]
    assert fans["decks"] == ["deck"] and fans["cards"] >= 6 and fans["seed"] == 20261122
    assert faces._EXTRA["share"] == 0.0
