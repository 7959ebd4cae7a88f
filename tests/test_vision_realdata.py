"""The real photo set: loading, the fixed held-out split, and the scoring rule used for acceptance."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision import realdata
from vision.realdata import LabelledCard


def test_scoring_rule() -> None:
    labels = [LabelledCard(13, (0, 0, 100, 140)), LabelledCard(9, (80, 0, 180, 140))]
    # Right rank with the centre inside: found. Overlapping boxes: the centre decides.
    s = realdata.match(labels, [(13, (10, 10, 90, 130)), (9, (100, 10, 170, 130))])
    assert (s.found, s.false, s.recall, s.precision) == (2, 0, 1.0, 1.0)
    # Wrong rank: not found, and false.
    s = realdata.match(labels, [(12, (10, 10, 90, 130))])
    assert (s.found, s.found_any_rank, s.false) == (0, 1, 1)
    # Reported twice: found once, the second is false.
    s = realdata.match(labels[:1], [(13, (10, 10, 90, 130)), (13, (20, 20, 80, 120))])
    assert (s.found, s.false, s.precision) == (1, 1, 0.5)
    # Something where nothing is: false.
    s = realdata.match(labels[:1], [(13, (300, 300, 400, 400))])
    assert (s.found, s.false) == (0, 1)


def test_split_is_fixed() -> None:
    photos = [realdata.Photo(Path(f"p{i:03d}.jpg"), 10, 10, ()) for i in range(20)]
    train, held = realdata.split(list(reversed(photos)))
    assert [p.path.name for p in held] == ["p004.jpg", "p009.jpg", "p014.jpg", "p019.jpg"]
    assert len(train) == 16 and not set(train) & set(held)


def test_the_real_photos_when_present() -> None:
    root = realdata.photos_dir()
    if root is None:
        pytest.skip("real card photos not found (../shared/data/real-card-photos or CROUPIER_CARD_PHOTOS)")
    photos = realdata.load_photos(root)
    assert len(photos) == 296 and sum(len(p.cards) for p in photos) == 527
    train, held = realdata.split(photos)
    assert len(held) == 59 and len(train) == 237
    assert all(9 <= c.rank <= 14 for p in photos for c in p.cards)
    assert all(0 <= c.box[0] < c.box[2] <= p.width and 0 <= c.box[1] < c.box[3] <= p.height
               for p in photos for c in p.cards)
