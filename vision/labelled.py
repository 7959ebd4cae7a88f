"""Any labelled folder of card photos (Pascal VOC, YOLO, LabelMe or a cards.json): loading it, scoring a reader on it
by rank and by rank and suit, the confusion table by rank, and a contact sheet of the failures.

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

The scoring rule is the real photos' (`realdata.match`): a labelled card is found when a reported card of its rank
(and suit, for the rank-and-suit figure) has its centre inside the label's outline; each report matches one label at
most; a report that matches none is false, unless its centre lies on a label that names no card.
"""

from __future__ import annotations

import base64
import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["LabelError", "Label", "LabelledImage", "parse_label", "load_folder", "Report", "Tally", "score_image",
           "contact_sheet", "RANK_ORDER"]

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


@dataclass(frozen=True)
class Report:
    """One card a reader reported: rank 2..14, suit 0..3, its box (the visible part) and confidence."""

    rank: int
    suit: int | None
    box: tuple[float, float, float, float]
    confidence: float = 1.0

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)


@dataclass
class Tally:
    """Counts over a labelled folder. `rank_*`: judged by rank; `card_*`: by rank and suit, over the labels that give
    a suit. `confusion[true][read]`: per labelled card, the rank read there (0: nothing read), and per false report
    outside every card, row 0."""

    images: int = 0
    labelled: int = 0
    rank_found: int = 0
    suited: int = 0
    card_found: int = 0
    reported: int = 0
    rank_false: int = 0
    card_false: int = 0
    by_rank: dict[int, list[int]] = field(default_factory=dict)  # rank -> [labelled, found]
    confusion: dict[int, dict[int, int]] = field(default_factory=dict)
    # Per report: its confidence and whether it was right (rank and suit where the label gives a suit, else rank).
    calibration: list[tuple[float, bool]] = field(default_factory=list)

    @property
    def rank_recall(self) -> float:
        return self.rank_found / self.labelled if self.labelled else 1.0

    @property
    def card_recall(self) -> float:
        return self.card_found / self.suited if self.suited else 1.0

    @property
    def rank_precision(self) -> float:
        return (self.reported - self.rank_false) / self.reported if self.reported else 1.0

    @property
    def card_precision(self) -> float:
        return (self.reported - self.card_false) / self.reported if self.reported else 1.0

    def ece(self, bins: int = 10) -> float:
        """Expected calibration error of the reports: the mean over equal-width confidence bins of |accuracy -
        mean confidence|, weighted by the bin's share of reports (0 when nothing was reported)."""
        if not self.calibration:
            return 0.0
        total = 0.0
        for b in range(bins):
            lo, hi = b / bins, (b + 1) / bins
            inside = [(c, ok) for c, ok in self.calibration if lo <= c < hi or (b == bins - 1 and c == 1.0)]
            if inside:
                acc = sum(ok for _, ok in inside) / len(inside)
                conf = sum(c for c, _ in inside) / len(inside)
                total += len(inside) * abs(acc - conf)
        return total / len(self.calibration)

    def unsure(self, below: float = 0.9) -> tuple[int, int, int]:
        """(reports below `below` confidence, how many of them were wrong, wrong reports at or above it)."""
        low = [ok for c, ok in self.calibration if c < below]
        return (len(low), sum(not ok for ok in low), sum(not ok for c, ok in self.calibration if c >= below))

    def recall_of(self, ranks: Iterable[int]) -> tuple[int, int]:
        """(found, labelled) by rank over these ranks."""
        rs = set(ranks)
        return (sum(v[1] for r, v in self.by_rank.items() if r in rs),
                sum(v[0] for r, v in self.by_rank.items() if r in rs))

    def to_json(self) -> dict[str, Any]:
        return {"images": self.images, "labelled": self.labelled, "rank_found": self.rank_found,
                "rank_recall": round(self.rank_recall, 4), "suited": self.suited, "card_found": self.card_found,
                "card_recall": round(self.card_recall, 4), "reported": self.reported, "rank_false": self.rank_false,
                "rank_precision": round(self.rank_precision, 4), "card_false": self.card_false,
                "card_precision": round(self.card_precision, 4), "ece": round(self.ece(), 4),
                "unsure_below_0.9": dict(zip(("reports", "wrong", "sure_wrong"), self.unsure())),
                "by_rank": {RANK_TEXT[r]: v for r, v in sorted(self.by_rank.items())},
                "confusion": {(RANK_TEXT.get(t, "-")): {RANK_TEXT.get(r, "-"): n for r, n in sorted(row.items())}
                              for t, row in sorted(self.confusion.items())}}


@dataclass(frozen=True)
class Failure:
    """A labelled card not found with the right rank (or suit), or a false report: what to show on the sheet."""

    image: Path
    box: tuple[float, float, float, float]
    label: str
    read: str
    kind: str  # "missed", "wrong suit" or "false"


def _match(labels: Sequence[Label], reports: Sequence[Report], suited: bool) -> tuple[list[int | None], list[bool]]:
    """Greedy, labels in order: each label takes the first unused report of its identity whose centre is inside it.
    Returns the report index each label took (None: none) and which reports were taken."""
    used = [False] * len(reports)
    took: list[int | None] = []
    for lab in labels:
        hit = None
        if lab.rank is not None and (not suited or lab.suit is not None):
            hit = next((i for i, r in enumerate(reports) if not used[i] and r.rank == lab.rank
                        and (not suited or r.suit == lab.suit) and lab.contains(r.centre)), None)
        if hit is not None:
            used[hit] = True
        took.append(hit)
    return took, used


def _desc(reports: Sequence[Report], idx: Iterable[int]) -> str:
    out = []
    for i in idx:
        r = reports[i]
        out.append(RANK_TEXT[r.rank] + ("CDHS"[r.suit] if r.suit is not None else "") + f" ({r.confidence:.2f})")
    return ", ".join(out) or "nothing"


def score_image(item: LabelledImage, reports: Sequence[Report], tally: Tally) -> list[Failure]:
    """Add one image's counts to `tally`; return its failures."""
    labels = item.labels
    cards = [lab for lab in labels if lab.rank is not None]
    tally.images += 1
    tally.labelled += len(cards)
    tally.suited += sum(1 for lab in cards if lab.suit is not None)
    tally.reported += len(reports)
    rank_took, rank_used = _match(labels, reports, suited=False)
    card_took, card_used = _match(labels, reports, suited=True)
    failures = []
    for lab, rt, ct in zip(labels, rank_took, card_took):
        if lab.rank is None:
            continue
        row = tally.by_rank.setdefault(lab.rank, [0, 0])
        row[0] += 1
        inside = [i for i, r in enumerate(reports) if lab.contains(r.centre)]
        if rt is not None:
            row[1] += 1
            tally.rank_found += 1
            read = reports[rt].rank
        else:
            read = max(inside, key=lambda i: reports[i].confidence, default=None)
            read = reports[read].rank if read is not None else 0
        conf = tally.confusion.setdefault(lab.rank, {})
        conf[read] = conf.get(read, 0) + 1
        if ct is not None:
            tally.card_found += 1
        if rt is None:
            failures.append(Failure(item.path, lab.box, lab.name, _desc(reports, inside), "missed"))
        elif lab.suit is not None and ct is None:
            failures.append(Failure(item.path, lab.box, lab.name, _desc(reports, inside), "wrong suit"))
    # A report on a label that names no card (a joker, a back) is neither right nor false.
    neutral = [any(not lab.rank and lab.contains(r.centre) for lab in labels) for r in reports]
    for i, r in enumerate(reports):
        if not neutral[i]:
            suited_hit = any(ct == i for ct in card_took)
            unsuited_hit = any(rt == i and lab.suit is None for lab, rt in zip(labels, rank_took))
            tally.calibration.append((r.confidence, suited_hit or unsuited_hit))
    for i, r in enumerate(reports):
        if not rank_used[i] and not neutral[i]:
            tally.rank_false += 1
            if not any(lab.contains(r.centre) for lab in labels):
                tally.confusion.setdefault(0, {})[r.rank] = tally.confusion.setdefault(0, {}).get(r.rank, 0) + 1
            failures.append(Failure(item.path, r.box, "no card of that rank here", _desc(reports, [i]), "false"))
        # A report right by rank whose label gives a suit it does not match is false by rank and suit.
        if not card_used[i] and not neutral[i]:
            on_suited = any(lab.rank is not None and lab.suit is not None and lab.contains(r.centre) for lab in labels)
            on_unsuited = any(lab.rank is not None and lab.suit is None and lab.contains(r.centre) for lab in labels)
            if rank_used[i] and on_unsuited and not on_suited:
                continue  # no suit to judge it by
            tally.card_false += 1
    return failures


def rank_table(tally: Tally) -> list[str]:
    """The confusion table by rank, as text lines: a row per labelled rank (and '-' for reports where no card is),
    a column per rank read ('-': nothing read there)."""
    cols = [0] + list(RANK_ORDER)
    head = "true\\read " + " ".join(f"{RANK_TEXT.get(c, '-'):>3}" for c in cols) + "  right"
    lines = [head]
    for t in [r for r in RANK_ORDER if r in tally.confusion] + ([0] if 0 in tally.confusion else []):
        row = tally.confusion[t]
        cells = " ".join(f"{row.get(c, 0) or '.':>3}" for c in cols)
        right = f"{row.get(t, 0)}/{sum(row.values())}" if t else ""
        lines.append(f"{RANK_TEXT.get(t, '-'):>9} {cells}  {right}")
    return lines


def contact_sheet(failures: Sequence[Failure], path: Path, title: str = "failures",
                  limit: int = 400) -> Path:
    """Write an HTML page (images inline) of each failure's crop with its label and what was read."""
    import cv2

    cache: dict[Path, Any] = {}
    cells = []
    for f in failures[:limit]:
        if f.image not in cache:
            cache.clear()
            cache[f.image] = cv2.imread(str(f.image), cv2.IMREAD_COLOR)
        im = cache[f.image]
        if im is None:
            continue
        h, w = im.shape[:2]
        x0, y0, x1, y1 = f.box
        pad = 0.1 * max(x1 - x0, y1 - y0)
        xa, ya = max(0, int(x0 - pad)), max(0, int(y0 - pad))
        xb, yb = min(w, int(x1 + pad) + 1), min(h, int(y1 + pad) + 1)
        crop = im[ya:yb, xa:xb]
        if crop.size == 0:
            continue
        s = 160 / max(crop.shape[:2])
        crop = cv2.resize(crop, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
        ok, png = cv2.imencode(".png", crop)
        if not ok:
            continue
        cells.append(f'<figure class="{f.kind.replace(" ", "-")}"><img src="data:image/png;base64,'
                     f'{base64.b64encode(png.tobytes()).decode()}"><figcaption><b>{html.escape(f.kind)}</b>: '
                     f'{html.escape(f.label)}<br>read {html.escape(f.read)}<br><small>{html.escape(f.image.name)}'
                     f'</small></figcaption></figure>')
    more = f"<p>{len(failures) - limit} more not shown.</p>" if len(failures) > limit else ""
    page = ("<!doctype html><meta charset=utf-8><title>" + html.escape(title) + "</title><style>"
            "body{font:13px sans-serif}figure{display:inline-block;margin:4px;width:180px;vertical-align:top}"
            "img{max-width:170px;max-height:170px}.false{background:#fdd}.missed{background:#ffd}"
            ".wrong-suit{background:#def}</style><h1>" + html.escape(title) + f" ({len(failures)})</h1>"
            + "".join(cells) + more)
    path.write_text(page, encoding="utf-8")
    return path


def evaluate_folder(root: Path, read: Callable[[Any], list[Report]], say: Callable[[str], None] = print,
                    sheet: Path | None = None, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Read every labelled image under `root` with `read(image) -> [Report]`, print the figures and return them;
    `progress(done, total)` is called as each image is read."""
    import cv2

    items = load_folder(root)
    tally = Tally()
    failures: list[Failure] = []
    for item in items:
        image = cv2.imread(str(item.path), cv2.IMREAD_COLOR)
        if image is None:
            raise LabelError(f"{item.path}: not an image")
        failures += score_image(item, read(image), tally)
        if progress is not None:
            progress(tally.images, len(items))
    say(f"{root}: {tally.images} images, {tally.labelled} labelled cards ({tally.suited} with a suit)")
    say(f"  right rank: {tally.rank_found}/{tally.labelled} = {tally.rank_recall:.2%}; precision "
        f"{tally.reported - tally.rank_false}/{tally.reported} = {tally.rank_precision:.2%}")
    if tally.suited:
        say(f"  right rank and suit: {tally.card_found}/{tally.suited} = {tally.card_recall:.2%}; precision "
            f"{tally.reported - tally.card_false}/{tally.reported} = {tally.card_precision:.2%}")
    n_low, low_wrong, sure_wrong = tally.unsure()
    say(f"  calibration: expected calibration error {tally.ece():.3f} over {len(tally.calibration)} reports; "
        f"{n_low} read unsurely (below 0.9), {low_wrong} of them wrong; {sure_wrong} wrong read surely")
    low, high = tally.recall_of(range(2, 9)), tally.recall_of(range(9, 15))
    if low[1] and high[1]:
        say(f"  ranks 2-8: {low[0]}/{low[1]} = {low[0] / low[1]:.2%}; ranks 9-A: {high[0]}/{high[1]} = "
            f"{high[0] / high[1]:.2%}")
    say("  confusion by rank (rows: labelled; columns: read there, '-' nothing; row '-': reports on no card):")
    for line in rank_table(tally):
        say("    " + line)
    figures = tally.to_json()
    figures["folder"] = str(root)
    figures["failures"] = len(failures)
    if sheet is not None:
        contact_sheet(failures, sheet, title=f"failures on {root}")
        say(f"  {len(failures)} failures: {sheet}")
        figures["sheet"] = str(sheet)
    return figures
