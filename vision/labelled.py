"""Any labelled folder of card photos (Pascal VOC, YOLO, LabelMe or a cards.json): loading it, scoring a reader on it
by rank and by rank and suit, the confusion table by rank, and a contact sheet of the failures.

`croupier vision evaluate --photos DIR` runs it. The labels, their names and the formats read: vision/labelfiles.py.

The scoring rule is the real photos' (`realdata.match`): a labelled card is found when a reported card of its rank
(and suit, for the rank-and-suit figure) has its centre inside the label's outline; each report matches one label at
most; a report that matches none is false, unless its centre lies on a label that names no card. Where the labels
outline index corners rather than cards (`index=True`: many public sets label the corners, as a fanned hand shows
little else), a report stands on a label when the label's centre is inside the report's box (the card's visible
part holds its index).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

# The labels and their loading live in vision/labelfiles.py; their names are this module's too.
from vision.labelfiles import RANK_ORDER, RANK_TEXT, Label, LabelError, LabelledImage, load_folder, parse_label

__all__ = ["LabelError", "Label", "LabelledImage", "parse_label", "load_folder", "Report", "Tally", "score_image",
           "contact_sheet", "RANK_ORDER"]


@dataclass(frozen=True)
class Report:
    """One card a reader reported: rank 2..14, suit 0..3, its box (the visible part) and confidence."""

    rank: int
    suit: int | None
    box: tuple[float, float, float, float]
    confidence: float = 1.0
    unsure: bool = False  # the reader flagged it for the dealer to confirm (`Detection.unsure`)

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
    flags: list[bool] = field(default_factory=list)  # per entry of `calibration`: the reader flagged it unsure

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

    def flagged(self) -> dict[str, int]:
        """What the reader's own unsure flags did: reports flagged unsure, of them wrong and right (a right reading
        the dealer must confirm: lost to the table), and wrong reports left sure."""
        flagged = [ok for ok, f in zip((ok for _, ok in self.calibration), self.flags) if f]
        return {"unsure": len(flagged), "unsure_wrong": sum(not ok for ok in flagged),
                "unsure_right": sum(flagged),
                "sure_wrong": sum(not ok for (_, ok), f in zip(self.calibration, self.flags) if not f)}

    @property
    def sure_precision(self) -> float:
        """Of the reports not flagged unsure (those the table takes as read), the share right."""
        sure = [ok for (_, ok), f in zip(self.calibration, self.flags) if not f]
        return sum(sure) / len(sure) if sure else 1.0

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
                "flagged": self.flagged(), "sure_precision": round(self.sure_precision, 4),
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


def on_label(label: Label, report: Report, index: bool = False) -> bool:
    """Whether `report` stands on `label`: its centre inside the card's outline, or, where labels outline index
    corners (`index`), the centre of one of the card's corners inside the report's box."""
    if not index:
        return label.contains(report.centre)
    b = report.box
    return any(b[0] <= (x0 + x1) / 2 <= b[2] and b[1] <= (y0 + y1) / 2 <= b[3]
               for x0, y0, x1, y1 in label.corners or (label.box,))


def cards_of_corners(labels: Sequence[Label]) -> list[Label]:
    """Index-corner labels as cards: the labels of one name in one image are one card's corners (a card shows one
    or both), so a card is counted once and found when a report stands on any of its corners."""
    by_name: dict[str, list[Label]] = {}
    for lab in labels:
        by_name.setdefault(lab.name.upper(), []).append(lab)
    return [replace(group[0], corners=tuple(lab.box for lab in group)) for group in by_name.values()]


def _match(labels: Sequence[Label], reports: Sequence[Report], suited: bool,
           index: bool = False) -> tuple[list[int | None], list[bool]]:
    """Greedy, labels in order: each label takes the first unused report of its identity whose centre is inside it.
    Returns the report index each label took (None: none) and which reports were taken."""
    used = [False] * len(reports)
    took: list[int | None] = []
    for lab in labels:
        hit = None
        if lab.rank is not None and (not suited or lab.suit is not None):
            hit = next((i for i, r in enumerate(reports) if not used[i] and r.rank == lab.rank
                        and (not suited or r.suit == lab.suit) and on_label(lab, r, index)), None)
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


def score_image(item: LabelledImage, reports: Sequence[Report], tally: Tally, index: bool = False) -> list[Failure]:
    """Add one image's counts to `tally` (`index`: the labels outline index corners); return its failures."""
    labels = cards_of_corners(item.labels) if index else item.labels
    cards = [lab for lab in labels if lab.rank is not None]
    tally.images += 1
    tally.labelled += len(cards)
    tally.suited += sum(1 for lab in cards if lab.suit is not None)
    tally.reported += len(reports)
    rank_took, rank_used = _match(labels, reports, suited=False, index=index)
    card_took, card_used = _match(labels, reports, suited=True, index=index)
    failures = []
    for lab, rt, ct in zip(labels, rank_took, card_took):
        if lab.rank is None:
            continue
        row = tally.by_rank.setdefault(lab.rank, [0, 0])
        row[0] += 1
        inside = [i for i, r in enumerate(reports) if on_label(lab, r, index)]
        if rt is not None:
            row[1] += 1
            tally.rank_found += 1
            read = reports[rt].rank
        else:
            surest = max(inside, key=lambda i: reports[i].confidence, default=None)
            read = reports[surest].rank if surest is not None else 0
        conf = tally.confusion.setdefault(lab.rank, {})
        conf[read] = conf.get(read, 0) + 1
        if ct is not None:
            tally.card_found += 1
        if rt is None:
            failures.append(Failure(item.path, lab.box, lab.name, _desc(reports, inside), "missed"))
        elif lab.suit is not None and ct is None:
            failures.append(Failure(item.path, lab.box, lab.name, _desc(reports, inside), "wrong suit"))
    # A report on a label that names no card (a joker, a back) is neither right nor false.
    neutral = [any(not lab.rank and on_label(lab, r, index) for lab in labels) for r in reports]
    for i, r in enumerate(reports):
        if not neutral[i]:
            suited_hit = any(ct == i for ct in card_took)
            unsuited_hit = any(rt == i and lab.suit is None for lab, rt in zip(labels, rank_took))
            tally.calibration.append((r.confidence, suited_hit or unsuited_hit))
            tally.flags.append(r.unsure)
    for i, r in enumerate(reports):
        if not rank_used[i] and not neutral[i]:
            tally.rank_false += 1
            if not any(on_label(lab, r, index) for lab in labels):
                tally.confusion.setdefault(0, {})[r.rank] = tally.confusion.setdefault(0, {}).get(r.rank, 0) + 1
            failures.append(Failure(item.path, r.box, "no card of that rank here", _desc(reports, [i]), "false"))
        # A report right by rank whose label gives a suit it does not match is false by rank and suit.
        if not card_used[i] and not neutral[i]:
            on_suited = any(lab.rank is not None and lab.suit is not None and on_label(lab, r, index) for lab in labels)
            on_unsuited = any(lab.rank is not None and lab.suit is None and on_label(lab, r, index) for lab in labels)
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
                    sheet: Path | None = None, progress: Callable[[int, int], None] | None = None,
                    index: bool = False) -> dict[str, Any]:
    """Read every labelled image under `root` with `read(image) -> [Report]`, print the figures and return them;
    `progress(done, total)` is called as each image is read; `index`: the labels outline index corners."""
    import cv2

    items = load_folder(root)
    tally = Tally()
    failures: list[Failure] = []
    for item in items:
        image = cv2.imread(str(item.path), cv2.IMREAD_COLOR)
        if image is None:
            raise LabelError(f"{item.path}: not an image")
        failures += score_image(item, read(image), tally, index)
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
    flagged = tally.flagged()
    say(f"  flagged unsure by the reader: {flagged['unsure']} ({flagged['unsure_wrong']} wrong, {flagged['unsure_right']} "
        f"right, lost to the table); wrong left sure: {flagged['sure_wrong']}; precision of the sure reports "
        f"{tally.sure_precision:.2%}")
    low, high = tally.recall_of(range(2, 9)), tally.recall_of(range(9, 15))
    if low[1] and high[1]:
        say(f"  ranks 2-8: {low[0]}/{low[1]} = {low[0] / low[1]:.2%}; ranks 9-A: {high[0]}/{high[1]} = "
            f"{high[0] / high[1]:.2%}")
    say("  confusion by rank (rows: labelled; columns: read there, '-' nothing; row '-': reports on no card):")
    for line in rank_table(tally):
        say("    " + line)
    figures = tally.to_json()
    figures["folder"] = str(root)
    figures["labels"] = "index corners" if index else "cards"
    figures["failures"] = len(failures)
    if sheet is not None:
        contact_sheet(failures, sheet, title=f"failures on {root}")
        say(f"  {len(failures)} failures: {sheet}")
        figures["sheet"] = str(sheet)
    return figures
