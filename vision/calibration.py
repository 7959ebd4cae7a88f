"""Readers' confidences calibrated to the chance a reading is right, and where a reading becomes unsure.

A reading's raw confidence (rank probability times suit probability, pooled over corners and readers) orders
readings well but is not the chance they are right: on the real training photos the readers are right more often than
they say, on a deck they never saw less often. `Calibration` maps it to that chance with Platt scaling (temperature
scaling with a shift: `sigmoid(a * logit(c) + b)`, two numbers, so it cannot learn a test set's quirks), fitted by
`fit` on readings that are not a test set (`python -m vision.calibration`, see vision/models/README.md: the training
split of the real photos for photos, rendered table frames for the table camera). A reading whose calibrated
confidence is below `unsure_below` is reported unsure (`Detection.unsure`): the dealer sees it, the table never stops
on it. `ece` measures how far confidences are from the share right (expected calibration error, 10 bins).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:
    from vision.labelled import LabelledImage
    from vision.realdata import Photo

__all__ = ["Calibration", "IDENTITY", "UNSURE_BELOW", "NAMES_NONE", "fit", "ece", "load_calibrations", "CALIBRATION_FILE"]

# A reading is unsure below this calibrated chance of being right: one reading in ten wrong at the threshold, fewer
# above it. It is the table's `min_confidence` default (controller/config.py), so a calibrated reading is certain
# at the table exactly where the reader calls it sure.
UNSURE_BELOW = 0.9
NAMES_NONE = 0.5
CALIBRATION_FILE = "calibration.json"
_EPS = 1e-6


@dataclass(frozen=True)
class Calibration:
    """`sigmoid(a * logit(c) + b)`: a raw confidence `c` as the chance the reading is right. `a` > 1 spreads
    confidences apart (the readers were too modest), `a` < 1 pulls them together; `source` says what it was fitted
    on."""

    a: float = 1.0
    b: float = 0.0
    unsure_below: float = UNSURE_BELOW
    source: str = "none (raw confidences)"
    # Below this calibrated chance a reading names no card: the reader holds it likelier wrong than right (a business
    # card's print, a flyer, paper read as an index). Photos only (NAMES_NONE): a table camera's tracker averages a
    # card's readings over frames, and a low reading there is still a vote.
    names_none: float = 0.0

    def __call__(self, confidence: float) -> float:
        c = min(max(confidence, _EPS), 1 - _EPS)
        return 1 / (1 + math.exp(-(self.a * math.log(c / (1 - c)) + self.b)))

    def unsure(self, calibrated: float) -> bool:
        return calibrated < self.unsure_below


IDENTITY = Calibration()


def fit(readings: Iterable[tuple[float, bool]], iterations: int = 100) -> tuple[float, float]:
    """(a, b) minimising the log loss of `sigmoid(a * logit(c) + b)` over (raw confidence, right) pairs: Newton's
    method on two parameters (a tiny ridge keeps it defined where every reading is right)."""
    pairs = [(math.log(min(max(c, _EPS), 1 - _EPS) / (1 - min(max(c, _EPS), 1 - _EPS))), 1.0 if ok else 0.0)
             for c, ok in readings]
    if not pairs:
        raise ValueError("readings: nothing to fit a calibration on")
    a, b = 1.0, 0.0
    for _ in range(iterations):
        gx = gb = hxx = hxb = hbb = 0.0
        for x, y in pairs:
            p = 1 / (1 + math.exp(-(a * x + b)))
            w = p * (1 - p)
            gx, gb = gx + (p - y) * x + 1e-4 * (a - 1), gb + (p - y) + 1e-4 * b
            hxx, hxb, hbb = hxx + w * x * x + 1e-4, hxb + w * x, hbb + w + 1e-4
        det = hxx * hbb - hxb * hxb
        da, db = (hbb * gx - hxb * gb) / det, (hxx * gb - hxb * gx) / det
        a, b = a - da, b - db
        if max(abs(da), abs(db)) < 1e-10:
            break
    return a, b


def ece(readings: Sequence[tuple[float, bool]], bins: int = 10) -> float:
    """Expected calibration error: over equal-width confidence bins, |share right - mean confidence| weighted by the
    bin's share of the readings (0 when there are none)."""
    if not readings:
        return 0.0
    total = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        inside = [(c, ok) for c, ok in readings if lo <= c < hi or (k == bins - 1 and c >= 1.0)]
        if inside:
            total += len(inside) * abs(sum(ok for _, ok in inside) / len(inside) - sum(c for c, _ in inside) / len(inside))
    return total / len(readings)


def load_calibrations(folder: Path) -> dict[str, Calibration]:
    """The calibrations in `folder/calibration.json` by reading path (`photo`, `table`); none where there is no file
    (a models folder from before calibration: raw confidences, unsure below UNSURE_BELOW). A file that cannot be read
    is an error naming the key."""
    path = folder / CALIBRATION_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        return {name: Calibration(float(v["a"]), float(v["b"]), float(v.get("unsure_below", UNSURE_BELOW)),
                                  str(v.get("source", "")), float(v.get("names_none", 0.0))) for name, v in data.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: a calibration needs numbers a and b per reading path ({exc})") from None


def save_calibrations(folder: Path, calibrations: dict[str, Calibration]) -> Path:
    path = folder / CALIBRATION_FILE
    path.write_text(json.dumps({k: asdict(v) for k, v in sorted(calibrations.items())}, indent=2) + "\n")
    return path


def photo_readings(recogniser: Any, photos: Sequence[Photo]) -> list[tuple[float, bool]]:
    """(raw confidence, right) of every card `recogniser` (raw: `calibrate=False`) reports on `photos`
    (`realdata.Photo`s, rank-only labels): right when a card of its rank is labelled around its centre and no other
    report took that label (`labelled.score_image`'s rule)."""
    import cv2

    from vision.labelled import Report, Tally, score_image

    tally = Tally()
    for photo in photos:
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        reports = [Report(d.card.rank, int(d.card.suit), tuple(d.box), d.confidence)
                   for d in recogniser.identify(image) if d.card is not None and not d.card.joker]
        score_image(labelled_photo(photo), reports, tally)
    return list(tally.calibration)


def labelled_photo(photo: Photo) -> LabelledImage:
    """A `realdata.Photo` as `labelled.LabelledImage` (rank-only labels), to score with `labelled.score_image`."""
    from vision.labelled import Label, LabelledImage
    from vision.labelfiles import RANK_TEXT

    return LabelledImage(photo.path, tuple(
        Label(RANK_TEXT[c.rank], c.rank, None, ((c.box[0], c.box[1]), (c.box[2], c.box[1]), (c.box[2], c.box[3]),
                                                (c.box[0], c.box[3])))
        for c in photo.cards))


def table_readings(recogniser: Any, seed: int, frames: int) -> list[tuple[float, bool]]:
    """(raw confidence, right) of every card `recogniser` reports on `frames` rendered dealt layouts (seed `seed`):
    right when a card of that rank and suit lies under its centre."""
    import numpy as np

    from vision import render

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(frames):
        shot = render.render_dealt(rng, (1280, 720))
        for d in recogniser.identify(shot.image):
            if d.card is None:
                continue
            cx, cy = (d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2
            out.append((d.confidence, any(pc.card == d.card and pc.box[0] <= cx <= pc.box[2] and
                                          pc.box[1] <= cy <= pc.box[3] for pc in shot.cards)))
    return out


# Rendered frames for the table's calibration: a seed no training, validation (777, 778) or acceptance set
# (20261122) uses.
TABLE_SEED = 20261401


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m vision.calibration [--frames N] [--out DIR]`: fit both calibrations and write calibration.json."""
    import argparse

    from vision import realdata
    from vision.recognise import MODELS_DIR, PHOTO_SIZES, Recogniser

    parser = argparse.ArgumentParser(prog="python -m vision.calibration", description=main.__doc__)
    parser.add_argument("--frames", type=int, default=300, help="rendered table frames (default 300)")
    parser.add_argument("--out", type=Path, default=MODELS_DIR)
    args = parser.parse_args(argv)
    root = realdata.photos_dir()
    if root is None:
        raise SystemExit("the real photos are needed (CROUPIER_CARD_PHOTOS or ../shared/data/real-card-photos)")
    train, _ = realdata.split(realdata.load_photos(root))  # never the held-out photos
    photo = photo_readings(Recogniser(args.out, det_size=PHOTO_SIZES, indices=False, calibrate=False), train)
    table = table_readings(Recogniser(args.out, calibrate=False), TABLE_SEED, args.frames)
    found = {}
    for name, readings, source in (
            ("photo", photo, f"the real photos' training split ({len(train)} photos, {len(photo)} readings)"),
            ("table", table, f"{args.frames} rendered dealt layouts, seed {TABLE_SEED} ({len(table)} readings)")):
        a, b = fit(readings)
        cal = Calibration(round(a, 4), round(b, 4), UNSURE_BELOW, source, NAMES_NONE if name == "photo" else 0.0)
        found[name] = cal
        print(f"{name}: a={cal.a} b={cal.b}; ECE {ece(readings):.3f} -> {ece([(cal(c), ok) for c, ok in readings]):.3f}"
              f" on what it was fitted on; {sum(not ok for _, ok in readings)} of {len(readings)} wrong")
    print(f"wrote {save_calibrations(args.out, found)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
