"""Labelled folders of card photos read into labels: Pascal VOC, YOLO (with its class list), LabelMe and `cards.json`
(`load_folder`), and a label's name read as a card's rank and suit (`parse_label`).

`croupier vision evaluate --photos DIR` runs it. The label's name gives the rank, and the suit where it has one:
`nine`, `10`, `T`, `Q`, `ace`, `10C`, `Qh`, `AS`, `ace of spades`, `king_hearts`, `5-diamonds`. A label naming no
card (a joker, a card back, a suit sign alone) is kept as `other`: a report there is neither right nor false.

Formats, found by what the folder holds (searched recursively):
- Pascal VOC: `*.xml` with `<annotation><filename>` and `<object><name>`/`<bndbox>`.
- YOLO: `*.txt` per image (`class cx cy w h`, normalised; a polygon `class x1 y1 x2 y2 ...` too), the class names in
  `classes.txt`, `obj.names` or `data.yaml` (`names:`) in the folder or above the labels; the image beside the txt or
  in the matching `images/` folder.
- LabelMe: `*.json` with `shapes: [{label, points}]` and `imagePath`.
- `cards.json`: `[{"image": "a.jpg", "cards": [{"card": "QS", "outline": [[x, y], ...]} | {"card": "Q", "box":
  [x0, y0, x1, y1]}]}]`, paths relative to the file.

"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".JPG", ".JPEG", ".PNG")
RANK_ORDER: tuple[int, ...] = tuple(range(2, 15))
_RANK_WORDS = {"two": 2, "deuce": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
               "ten": 10, "jack": 11, "knave": 11, "queen": 12, "king": 13, "ace": 14}
_RANK_CHARS = {str(r): r for r in range(2, 11)} | {"t": 10, "j": 11, "q": 12, "k": 13, "a": 14, "1": 14}
_SUIT_WORDS = {"club": 0, "clubs": 0, "diamond": 1, "diamonds": 1, "heart": 2, "hearts": 2, "spade": 3, "spades": 3}
_SUIT_CHARS = {"c": 0, "d": 1, "h": 2, "s": 3, "♣": 0, "♦": 1, "♥": 2, "♠": 3}
RANK_TEXT = {r: ("T" if r == 10 else "JQKA"[r - 11] if r > 10 else str(r)) for r in RANK_ORDER}


class LabelError(ValueError):
    """A labelled folder that cannot be read: the message names the file and the field."""


@dataclass(frozen=True)
class Label:
    """One labelled card: `rank` 2..14 (None: the label names no card), `suit` 0..3 (C D H S) or None when the label
    gives none; `outline` its corners in pixels (a box is four corners)."""

    name: str
    rank: int | None
    suit: int | None
    outline: tuple[tuple[float, float], ...]
    corners: tuple[tuple[float, float, float, float], ...] = ()  # index-corner labels: every corner of this card

    @property
    def box(self) -> tuple[float, float, float, float]:
        xs, ys = [p[0] for p in self.outline], [p[1] for p in self.outline]
        return (min(xs), min(ys), max(xs), max(ys))

    def contains(self, point: tuple[float, float]) -> bool:
        return _in_polygon(point, self.outline)


@dataclass(frozen=True)
class LabelledImage:
    path: Path
    labels: tuple[Label, ...]


def parse_label(name: str) -> tuple[int | None, int | None]:
    """(rank, suit) from a label's name; (None, None) for one naming no card (joker, back, a suit alone).

    >>> parse_label("ace of spades"), parse_label("10C"), parse_label("nine"), parse_label("Qh")
    ((14, 3), (10, 0), (9, None), (12, 2))
    """
    text = name.strip().lower()
    words = [w for w in re.split(r"[\s_\-./]+", text) if w and w != "of"]
    if len(words) >= 1 and words[0] in _RANK_WORDS:
        rank = _RANK_WORDS[words[0]]
        suit = _SUIT_WORDS.get(words[1]) if len(words) > 1 else None
        if len(words) > 1 and suit is None and words[1] not in ("card",):
            return (None, None)
        return (rank, suit)
    compact = "".join(words)
    m = re.fullmatch(r"(10|[2-9tjqka1])([cdhs♣♦♥♠])?", compact)
    if m:
        return (_RANK_CHARS[m.group(1)], _SUIT_CHARS[m.group(2)] if m.group(2) else None)
    m = re.fullmatch(r"([cdhs])(10|[2-9tjqka])", compact)  # suit first: "s10", "hq"
    if m:
        return (_RANK_CHARS[m.group(2)], _SUIT_CHARS[m.group(1)])
    if len(words) == 2 and words[1] in _SUIT_WORDS:  # "10 hearts", "a spades"
        r = _RANK_CHARS.get(words[0])
        if r is not None:
            return (r, _SUIT_WORDS[words[1]])
    return (None, None)


def _in_polygon(point: tuple[float, float], poly: Sequence[tuple[float, float]]) -> bool:
    x, y = point
    inside = False
    n = len(poly)
    for i in range(n):
        (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % n]
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    if inside:
        return True
    # On the edge counts (a box's own border), as realdata's `<=` does.
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    if len(poly) == 4 and len(set(xs)) == 2 and len(set(ys)) == 2:
        return min(xs) <= x <= max(xs) and min(ys) <= y <= max(ys)
    return False


def _box_outline(x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[float, float], ...]:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _label(name: str, outline: tuple[tuple[float, float], ...]) -> Label:
    rank, suit = parse_label(name)
    return Label(name, rank, suit, outline)


def _find_image(stem_dir: Path, name: str) -> Path | None:
    p = stem_dir / name
    if p.is_file():
        return p
    stem = Path(name).stem
    for ext in IMAGE_EXTS:
        q = stem_dir / (stem + ext)
        if q.is_file():
            return q
    return None


def _load_voc(xml: Path) -> LabelledImage:
    try:
        root = ET.parse(xml).getroot()
    except ET.ParseError as exc:
        raise LabelError(f"{xml}: not XML ({exc})") from None
    name = root.findtext("filename") or ""
    image = _find_image(xml.parent, name) if name else None
    if image is None:
        image = _find_image(xml.parent, xml.stem)
    if image is None:
        raise LabelError(f"{xml}: filename {name!r} names no image beside it")
    labels = []
    for obj in root.iter("object"):
        bb = obj.find("bndbox")
        if bb is None:
            raise LabelError(f"{xml}: an object has no bndbox")
        try:
            x0, y0, x1, y1 = (float(bb.findtext(k) or "") for k in ("xmin", "ymin", "xmax", "ymax"))
        except ValueError:
            raise LabelError(f"{xml}: bndbox xmin/ymin/xmax/ymax must be numbers") from None
        labels.append(_label(obj.findtext("name") or "", _box_outline(x0, y0, x1, y1)))
    return LabelledImage(image, tuple(labels))


def _yolo_names(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".yaml", ".yml"):
        m = re.search(r"^names\s*:\s*\[(.*?)\]", text, re.S | re.M)
        if m:
            return [s.strip().strip("'\"") for s in m.group(1).split(",") if s.strip()]
        m = re.search(r"^names\s*:\s*\n((?:[ \t]+.*\n?)+)", text, re.M)
        if m:
            names = []
            for line in m.group(1).splitlines():
                line = line.strip()
                if line.startswith("- "):
                    names.append(line[2:].strip().strip("'\""))
                elif ":" in line:  # "0: ace" mapping
                    names.append(line.split(":", 1)[1].strip().strip("'\""))
            return names
        raise LabelError(f"{path}: no names list")
    return [line.strip() for line in text.splitlines() if line.strip()]


def _yolo_class_file(txt: Path, root: Path) -> Path | None:
    d = txt.parent
    while True:
        for n in ("classes.txt", "obj.names", "data.yaml", "data.yml", "_darknet.labels"):
            if (d / n).is_file():
                return d / n
        if d == root or d.parent == d:
            return None
        d = d.parent


def _load_yolo(txt: Path, root: Path, names_cache: dict[Path, list[str]]) -> LabelledImage | None:
    import cv2

    image = _find_image(txt.parent, txt.stem)
    if image is None and "labels" in txt.parent.parts:
        parts = list(txt.parent.parts)
        i = len(parts) - 1 - parts[::-1].index("labels")
        image = _find_image(Path(*parts[:i], "images", *parts[i + 1:]), txt.stem)
    if image is None:
        return None  # a txt that is no image's labels (a readme, a class list)
    cls_file = _yolo_class_file(txt, root)
    if cls_file is None:
        raise LabelError(f"{txt}: YOLO labels need classes.txt, obj.names or data.yaml (names:) beside or above them")
    if cls_file not in names_cache:
        names_cache[cls_file] = _yolo_names(cls_file)
    names = names_cache[cls_file]
    shape = cv2.imread(str(image), cv2.IMREAD_UNCHANGED)
    if shape is None:
        raise LabelError(f"{image}: not an image")
    h, w = shape.shape[:2]
    labels = []
    for n, line in enumerate(txt.read_text().splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        try:
            cls, vals = int(fields[0]), [float(v) for v in fields[1:]]
        except ValueError:
            raise LabelError(f"{txt}:{n}: class and coordinates must be numbers") from None
        if not 0 <= cls < len(names):
            raise LabelError(f"{txt}:{n}: class {cls} is not in {cls_file.name} ({len(names)} names)")
        if len(vals) == 4:
            cx, cy, bw, bh = vals
            outline = _box_outline((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)
        elif len(vals) >= 6 and len(vals) % 2 == 0:
            outline = tuple((vals[i] * w, vals[i + 1] * h) for i in range(0, len(vals), 2))
        else:
            raise LabelError(f"{txt}:{n}: expected 'class cx cy w h' or a polygon 'class x1 y1 x2 y2 x3 y3 ...'")
        labels.append(_label(names[cls], outline))
    return LabelledImage(image, tuple(labels))


def _outline_of(card: dict, where: str) -> tuple[tuple[float, float], ...]:
    if "outline" in card:
        try:
            pts = tuple((float(p[0]), float(p[1])) for p in card["outline"])
        except (TypeError, ValueError, IndexError):
            raise LabelError(f"{where}: outline must be [[x, y], ...]") from None
        if len(pts) < 3:
            raise LabelError(f"{where}: outline needs at least 3 points")
        return pts
    if "box" in card:
        try:
            x0, y0, x1, y1 = (float(v) for v in card["box"])
        except (TypeError, ValueError):
            raise LabelError(f"{where}: box must be [x0, y0, x1, y1]") from None
        return _box_outline(x0, y0, x1, y1)
    raise LabelError(f"{where}: a card needs 'outline' or 'box'")


def _load_cards_json(path: Path, data: Any) -> list[LabelledImage]:
    if not isinstance(data, list):
        raise LabelError(f"{path}: expected a list of {{image, cards}}")
    out = []
    for i, entry in enumerate(data):
        where = f"{path}[{i}]"
        if not isinstance(entry, dict) or "image" not in entry or not isinstance(entry.get("cards", []), list):
            raise LabelError(f"{where}: needs 'image' and a 'cards' list")
        image = path.parent / str(entry["image"])
        if not image.is_file():
            raise LabelError(f"{where}: image {entry['image']!r} is missing")
        labels = []
        for j, card in enumerate(entry.get("cards", [])):
            if not isinstance(card, dict) or "card" not in card:
                raise LabelError(f"{where}.cards[{j}]: needs 'card'")
            labels.append(_label(str(card["card"]), _outline_of(card, f"{where}.cards[{j}]")))
        out.append(LabelledImage(image, tuple(labels)))
    return out


def _load_labelme(path: Path, data: dict) -> LabelledImage:
    image = _find_image(path.parent, Path(str(data.get("imagePath") or path.stem)).name)
    if image is None:
        raise LabelError(f"{path}: imagePath {data.get('imagePath')!r} names no image beside it")
    labels = []
    for j, shape in enumerate(data.get("shapes") or []):
        pts = shape.get("points") or []
        try:
            pts = tuple((float(p[0]), float(p[1])) for p in pts)
        except (TypeError, ValueError, IndexError):
            raise LabelError(f"{path}: shapes[{j}].points must be [[x, y], ...]") from None
        if len(pts) == 2:  # a rectangle by two corners
            (x0, y0), (x1, y1) = pts
            pts = _box_outline(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        if len(pts) < 3:
            raise LabelError(f"{path}: shapes[{j}] needs a rectangle or a polygon")
        labels.append(_label(str(shape.get("label", "")), pts))
    return LabelledImage(image, tuple(labels))


def load_folder(root: Path) -> list[LabelledImage]:
    """Every labelled image under `root`, sorted by path. Raises LabelError naming the file and field that is wrong,
    or when the folder holds no labels in a known format."""
    root = Path(root)
    if not root.is_dir():
        raise LabelError(f"{root}: not a folder")
    images: dict[Path, LabelledImage] = {}
    names_cache: dict[Path, list[str]] = {}

    def add(item: LabelledImage | None) -> None:
        if item is not None:
            images.setdefault(item.path.resolve(), item)

    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix.lower() == ".xml":
            add(_load_voc(path))
        elif path.suffix.lower() == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise LabelError(f"{path}: not JSON ({exc})") from None
            if isinstance(data, dict) and "shapes" in data:
                add(_load_labelme(path, data))
            elif isinstance(data, list):
                for item in _load_cards_json(path, data):
                    add(item)
        elif path.suffix == ".txt" and path.name not in ("classes.txt", "_darknet.labels"):
            add(_load_yolo(path, root, names_cache))
    if not images:
        raise LabelError(f"{root}: no labelled images found (Pascal VOC xml, YOLO txt with a class list, LabelMe or "
                         "cards.json)")
    return sorted(images.values(), key=lambda li: str(li.path))
