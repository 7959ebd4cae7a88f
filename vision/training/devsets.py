"""Development-test folders from public card photos: labelled Pascal VOC written outside the repository, never trained on.

`python -m vision.training.devsets ee326 MIRROR OUT` writes the EE326 deck (a US-index deck, phone photos on wood
and green cloth; `vision/models/README.md`, "Data sources") from a bare git mirror of its repository;
`python -m vision.training.devsets bidly MIRROR OUT` the bidly deck: OUT/deals (7 photos of bridge deals, 345 cards
fanned in four hands, labelled by their index corners: score with `--index-labels`) and OUT/single (its 52 cards one
by one, for enrolment, kept apart from the deals). Each card's
box is its paper (bright, unsaturated) found in the photo; single-card photos are labelled by file name (`5spades`),
the few photos with several cards by hand below (each card by where its centre lies, as fractions of the photo).
Photos are shrunk to 1600 px on their longer side (the reader looks at 320 px; the index crops stay sharp).
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np

from vision.enrol import paper_outlines

BIDLY_REPO = "MrKeSuu/bidly"
BIDLY_COMMIT = "ceacbce9dbd42b86082f1b464e0748ae84480aaf"
BIDLY_DEALS = "detector/evaluation/test-deals"
EE326_REPO = "rd-pong/EE326-Project-Playing-Card-Recognition"
EE326_COMMIT = "5f8fe8412762e5bf30198d73fa679debc2469666"
LONG_SIDE = 1600
# Photos of several cards, labelled by hand: card -> its centre as (x, y) fractions of the photo.
EE326_SCENES: dict[str, dict[str, tuple[float, float]]] = {
    "8card_slight": {"AD": (0.343, 0.181), "AC": (0.536, 0.238), "7C": (0.679, 0.152), "9S": (0.193, 0.324),
                     "6C": (0.900, 0.286), "QS": (0.271, 0.562), "TH": (0.557, 0.467), "4S": (0.779, 0.476)},
    "8cards_top": {"QS": (0.233, 0.267), "9S": (0.493, 0.175), "AD": (0.722, 0.297), "TH": (0.333, 0.483),
                   "AC": (0.622, 0.483), "7C": (0.789, 0.650), "4S": (0.322, 0.683), "6C": (0.556, 0.833)},
    "green_many": {"9D": (0.343, 0.326), "4H": (0.667, 0.404), "5C": (0.314, 0.553), "JS": (0.661, 0.643),
                   "AC": (0.185, 0.757), "2C": (0.491, 0.800)},
    "3cards_extreme": {"AC": (0.371, 0.168), "TH": (0.271, 0.381), "4S": (0.743, 0.390)},
    "green_close": {"9D": (0.5, 0.5)},
    "test2": {"TH": (0.5, 0.5)},
}
_SUITS = {"clubs": "C", "diamonds": "D", "hearts": "H", "spades": "S"}


def card_boxes(image: np.ndarray, min_area: float = 0.004) -> list[tuple[int, int, int, int]]:
    """Boxes of the card paper in a photo of cards apart on a darker or coloured ground: bright, unsaturated
    regions larger than `min_area` of the photo."""
    area = image.shape[0] * image.shape[1]
    boxes = []
    for c in paper_outlines(image, cv2.cvtColor(image, cv2.COLOR_BGR2HSV), 150):
        if cv2.contourArea(cv2.convexHull(c)) >= min_area * area:
            x, y, w, h = cv2.boundingRect(c)
            boxes.append((x, y, x + w, y + h))
    return boxes


def write_voc(path: Path, image_name: str, size: tuple[int, int], cards: list[tuple[str, tuple[int, int, int, int]]]
              ) -> None:
    ann = ET.Element("annotation")
    ET.SubElement(ann, "filename").text = image_name
    sz = ET.SubElement(ann, "size")
    for k, v in zip(("width", "height", "depth"), (size[0], size[1], 3)):
        ET.SubElement(sz, k).text = str(v)
    for name, (x0, y0, x1, y1) in cards:
        obj = ET.SubElement(ann, "object")
        ET.SubElement(obj, "name").text = name
        bb = ET.SubElement(obj, "bndbox")
        for k, v in zip(("xmin", "ymin", "xmax", "ymax"), (x0, y0, x1, y1)):
            ET.SubElement(bb, k).text = str(v)
    ET.indent(ann)
    path.write_text(ET.tostring(ann, encoding="unicode") + "\n")


def ee326(mirror: Path, out: Path) -> int:
    """Write the EE326 photos as a VOC folder; returns the number of labelled cards."""
    out.mkdir(parents=True, exist_ok=True)
    names = subprocess.run(["git", "-C", str(mirror), "ls-tree", "--name-only", EE326_COMMIT, "training/"],
                           check=True, capture_output=True, text=True).stdout.split()
    total = 0
    for name in names:
        stem = Path(name).stem
        rank = stem[:-len(next((s for s in _SUITS if stem.endswith(s)), ""))] if any(
            stem.endswith(s) for s in _SUITS) else None
        if stem not in EE326_SCENES and (rank is None or rank not in {*map(str, range(2, 11)), "J", "Q", "K", "A"}):
            continue
        blob = subprocess.run(["git", "-C", str(mirror), "show", f"{EE326_COMMIT}:{name}"], check=True,
                              capture_output=True).stdout
        image = cv2.imdecode(np.frombuffer(blob, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise SystemExit(f"{name}: not an image")
        s = LONG_SIDE / max(image.shape[:2])
        if s < 1:
            image = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
        h, w = image.shape[:2]
        boxes = card_boxes(image)
        if stem in EE326_SCENES:
            wanted = EE326_SCENES[stem]
        else:
            assert rank is not None  # the filter above kept scenes and single cards only
            suit = _SUITS[stem[len(rank):]]
            wanted = {("T" if rank == "10" else rank) + suit: (0.5, 0.5)}
        cards = []
        for card, (fx, fy) in wanted.items():
            if not boxes:
                raise SystemExit(f"{name}: no card paper found")
            # The box holding the card's centre, else the nearest; single cards: the largest box.
            if len(wanted) == 1:
                box = max(boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
            else:
                box = min(boxes, key=lambda b: ((b[0] + b[2]) / 2 / w - fx) ** 2 + ((b[1] + b[3]) / 2 / h - fy) ** 2)
            cards.append((card, box))
        if len({c[1] for c in cards}) != len(cards):
            raise SystemExit(f"{name}: two hand-labelled cards took one box ({cards})")
        cv2.imwrite(str(out / f"{stem}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        write_voc(out / f"{stem}.xml", f"{stem}.jpg", (w, h), cards)
        total += len(cards)
    return total


def bidly_card(name: str) -> str:
    """bidly's card names (`10s`, `Qh`, `2c`) as the labels' (`TS`, `QH`, `2C`)."""
    rank, suit = name[:-1].upper(), name[-1].upper()
    if rank not in {*map(str, range(2, 11)), "J", "Q", "K", "A"} or suit not in "CDHS":
        raise ValueError(f"not a bidly card name: {name!r}")
    return ("T" if rank == "10" else rank) + suit


def bidly_corner(label: dict, size: tuple[int, int]) -> tuple[str, tuple[int, int, int, int]]:
    """One of bidly's deal labels (a darknet-style {name, relative_coordinates: centre_x, centre_y, width, height}
    of an index corner) as (card, pixel box)."""
    (w, h), rel = size, label["relative_coordinates"]
    cx, cy, bw, bh = rel["center_x"] * w, rel["center_y"] * h, rel["width"] * w, rel["height"] * h
    return bidly_card(label["name"]), (round(cx - bw / 2), round(cy - bh / 2), round(cx + bw / 2), round(cy + bh / 2))


def bidly(mirror: Path, out: Path) -> int:
    """Write bidly's deal photos (labelled by index corners) and single cards as VOC folders; returns the number of
    labelled corners in the deals."""
    import json

    def blob(path: str) -> bytes:
        return subprocess.run(["git", "-C", str(mirror), "show", f"{BIDLY_COMMIT}:{path}"], check=True,
                              capture_output=True).stdout

    def image(data: bytes, name: str) -> np.ndarray:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise SystemExit(f"{name}: not an image")
        return img

    (out / "deals").mkdir(parents=True, exist_ok=True)
    (out / "single").mkdir(parents=True, exist_ok=True)
    total = 0
    for k in range(1, 8):
        data = blob(f"{BIDLY_DEALS}/deal{k}-md-sq.jpg")
        h, w = image(data, f"deal{k}").shape[:2]
        corners = [bidly_corner(lab, (w, h)) for lab in json.loads(blob(f"{BIDLY_DEALS}/deal{k}-md-sq-net1280-labels.json"))]
        (out / "deals" / f"deal{k}.jpg").write_bytes(data)  # as published: the labels are in its pixels
        write_voc(out / "deals" / f"deal{k}.xml", f"deal{k}.jpg", (w, h), corners)
        total += len(corners)
    names = subprocess.run(["git", "-C", str(mirror), "ls-tree", "--name-only", BIDLY_COMMIT, "rawdata/data/cards/"],
                           check=True, capture_output=True, text=True).stdout.split()
    for name in names:
        stem, data = Path(name).stem, blob(name)
        h, w = image(data, name).shape[:2]
        (out / "single" / f"{stem}.jpg").write_bytes(data)
        write_voc(out / "single" / f"{stem}.xml", f"{stem}.jpg", (w, h), [(bidly_card(stem), (0, 0, w - 1, h - 1))])
    return total


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("ee326", "bidly"):
        raise SystemExit("usage: python -m vision.training.devsets ee326|bidly MIRROR_GIT_DIR OUT_DIR")
    write = ee326 if sys.argv[1] == "ee326" else bidly
    print(f"{write(Path(sys.argv[2]), Path(sys.argv[3]))} labels written to {sys.argv[3]}")
