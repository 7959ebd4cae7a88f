"""The real card photos (Pascal VOC, rank-only labels): finding them, the fixed held-out split, the scoring rule.

The photos live outside the repository (Apache-2.0, see vision/models/NOTICE) in
`../shared/data/real-card-photos/` beside the clone, or wherever `CROUPIER_CARD_PHOTOS` points.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["RANK_NAMES", "LabelledCard", "Photo", "photos_dir", "load_photos", "split", "HELD_OUT_EVERY",
           "match", "Score"]

RANK_NAMES = {"nine": 9, "ten": 10, "jack": 11, "queen": 12, "king": 13, "ace": 14}
# The held-out split: every 5th photo in sorted file-name order (index % 5 == 4), about 20% of them.
HELD_OUT_EVERY = 5
ENV_VAR = "CROUPIER_CARD_PHOTOS"


@dataclass(frozen=True)
class LabelledCard:
    rank: int
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels: the visible part of the card


@dataclass(frozen=True)
class Photo:
    path: Path
    width: int
    height: int
    cards: tuple[LabelledCard, ...]


def photos_dir() -> Path | None:
    """Where the photos are: $CROUPIER_CARD_PHOTOS, else ../shared/data/real-card-photos beside the repo."""
    env = os.environ.get(ENV_VAR)
    candidates = [Path(env)] if env else []
    repo = Path(__file__).resolve().parents[1]
    candidates.append(repo.parent / "shared" / "data" / "real-card-photos")
    # A git worktree lives one level further down (e.g. /work/wt/NAME beside /work/shared).
    candidates.append(repo.parent.parent / "shared" / "data" / "real-card-photos")
    for c in candidates:
        if (c / "train").is_dir():
            return c
    return None


def load_photos(root: Path) -> list[Photo]:
    """Every labelled photo under `root/train`, sorted by file name."""
    photos = []
    for xml in sorted((root / "train").glob("*.xml")):
        tree = ET.parse(xml).getroot()
        name = tree.findtext("filename") or ""
        image = xml.with_name(name)
        if not image.exists():
            raise FileNotFoundError(f"{xml} names {name}, which is missing")
        cards = []
        for obj in tree.iter("object"):
            label = (obj.findtext("name") or "").strip().lower()
            if label not in RANK_NAMES:
                raise ValueError(f"{xml}: unknown class {label!r}")
            bb = obj.find("bndbox")
            box = tuple(int(float(bb.findtext(k) or 0)) for k in ("xmin", "ymin", "xmax", "ymax"))  # type: ignore[union-attr]
            cards.append(LabelledCard(RANK_NAMES[label], box))  # type: ignore[arg-type]
        photos.append(Photo(image, int(tree.findtext("size/width") or 0), int(tree.findtext("size/height") or 0),
                            tuple(cards)))
    return photos


def split(photos: Sequence[Photo]) -> tuple[list[Photo], list[Photo]]:
    """(training, held out): the fixed split, every HELD_OUT_EVERY-th photo in file-name order held out."""
    ordered = sorted(photos, key=lambda p: p.path.name)
    train = [p for i, p in enumerate(ordered) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [p for i, p in enumerate(ordered) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    return train, held


@dataclass
class Score:
    """Counts for the acceptance rule: a labelled card is found when a reported card of the same rank has
    its box centre inside the label box; a reported card is false when its centre is in no label box of
    its rank (a card reported twice counts once as found and once as false)."""

    labelled: int = 0
    found: int = 0
    found_any_rank: int = 0
    reported: int = 0
    false: int = 0

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0

    @property
    def precision(self) -> float:
        return (self.reported - self.false) / self.reported if self.reported else 1.0

    def add(self, other: Score) -> None:
        for k in ("labelled", "found", "found_any_rank", "reported", "false"):
            setattr(self, k, getattr(self, k) + getattr(other, k))


def _inside(point: tuple[float, float], box: Sequence[float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def match(labels: Iterable[LabelledCard], reported: Iterable[tuple[int, Sequence[float]]]) -> Score:
    """Score one photo: `reported` holds (rank, box) pairs. Each report is matched to at most one label
    (greedy, labels in order), so two labels need two reports."""
    labels = list(labels)
    reports = [(rank, ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)) for rank, b in reported]
    used = [False] * len(reports)
    score = Score(labelled=len(labels), reported=len(reports))
    for lab in labels:
        hit = next((i for i, (r, c) in enumerate(reports) if not used[i] and r == lab.rank and _inside(c, lab.box)),
                   None)
        if hit is not None:
            used[hit] = True
            score.found += 1
        if any(_inside(c, lab.box) for _, c in reports):
            score.found_any_rank += 1
    # A report not matched is false unless it duplicates a card of its rank already found there.
    for i, (r, c) in enumerate(reports):
        if not used[i]:
            score.false += 1
    return score
