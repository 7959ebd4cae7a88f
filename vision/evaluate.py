"""The acceptance measurements: the held-out real photos and a seeded synthetic test set of cards on felt.

Run with `croupier vision evaluate` (figures printed, `--json` to keep them) or `pytest --long -m long`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import cv2
import numpy as np

from vision import realdata, render
from vision.calibration import ece, labelled_photo
from vision.labelled import Report, Tally, score_image
from vision.readings import Reader

__all__ = ["real_photos", "synthetic", "synthetic_scene", "piles_scene", "fans_scene", "fans_photo_scene",
           "readable"]


def real_photos(rec: Reader, say: Callable[[str], None] = print, min_confidence: float = 0.0,
                progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Score the held-out real photos: labelled cards found with the right rank (box centre inside the
    label box) and precision of the reports. The photos know ranks 9..A only, so only the rank is judged."""
    root = realdata.photos_dir()
    if root is None:
        say("real card photos not found (set CROUPIER_CARD_PHOTOS or put them in ../shared/data/real-card-photos)")
        return {"skipped": "photos not found"}
    _, held = realdata.split(realdata.load_photos(root))
    total = realdata.Score()
    tally = Tally()  # the same reports scored by `labelled.score_image`: calibration and unsure flags
    misses = []
    t0 = time.perf_counter()
    for i, photo in enumerate(held):
        if progress is not None:  # (done, total): the command's progress bar
            progress(i, len(held))
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"{photo.path}: not an image")
        dets = [d for d in rec.identify(image) if d.card is not None and not d.card.joker
                and d.confidence >= min_confidence]
        score = realdata.match(photo.cards, [(d.card.rank, d.box) for d in dets])  # type: ignore[union-attr]
        total.add(score)
        score_image(labelled_photo(photo), [Report(d.card.rank, int(d.card.suit), tuple(d.box),  # type: ignore[union-attr,arg-type]
                                                   d.confidence, d.unsure) for d in dets], tally)
        if score.found < score.labelled or score.false:
            misses.append(f"{photo.path.name}: {score.found}/{score.labelled} found, {score.false} false "
                          f"(reported {', '.join(str(d.card) for d in dets) or 'nothing'})")
    seconds = time.perf_counter() - t0
    say(f"real held-out photos: {len(held)} photos, {total.labelled} labelled cards")
    say(f"  found with the right rank: {total.found}/{total.labelled} = {total.recall:.2%} (goal >= 95%)")
    say(f"  found, any rank:           {total.found_any_rank}/{total.labelled}")
    say(f"  precision: {total.reported - total.false}/{total.reported} reports right = {total.precision:.2%}")
    flagged = tally.flagged()
    say(f"  expected calibration error (10 bins): {tally.ece():.3f}; flagged unsure: {flagged['unsure']} "
        f"({flagged['unsure_wrong']} wrong, {flagged['unsure_right']} right); wrong left sure: {flagged['sure_wrong']}")
    for m in misses:
        say(f"    {m}")
    return {"photos": len(held), "labelled": total.labelled, "found": total.found, "recall": round(total.recall, 4),
            "found_any_rank": total.found_any_rank, "reported": total.reported, "false": total.false,
            "precision": round(total.precision, 4), "ece": round(tally.ece(), 4), "flagged": flagged,
            "sure_precision": round(tally.sure_precision, 4), "seconds": round(seconds, 1), "misses": misses}


def synthetic_scene(rng: np.random.Generator) -> render.Scene:
    """One frame of the acceptance set: what a table camera sees, 1280x720, 4 to 10 cards dealt on felt in
    cascades, rows and single cards (`render.render_dealt`), camera effects on."""
    return render.render_dealt(rng, (1280, 720))


def piles_scene(rng: np.random.Generator) -> render.Scene:
    """One frame of the harder set: 4 to 8 cards thrown on felt at random, some in tight overlapping piles
    whatever their indices do, some cut by the frame's edge, camera effects on."""
    return render.render_scene(rng, (1280, 720), count=(4, 8), card_width=(0.07, 0.12), fan=0.3, face_down=0.0,
                               busy=0.0, hand=0.0, tilt=0.08, strength=1.0)


def fans_scene(rng: np.random.Generator) -> render.Scene:
    """One frame of the tight-fans set: one to four hands of 6-13 cards fanned tightly (each covered card's index
    strip in sight), 1280x720, on felt or a busy background, camera effects on (`render.render_fans`)."""
    return render.render_fans(rng, (1280, 720))


def fans_photo_scene(rng: np.random.Generator, scale: float) -> render.Scene:
    """A `fans_scene` frame as a photo taken from farther off: laid at `scale` of its size (0 < scale <= 1) somewhere
    in a canvas of its own felt (the colour of its top and bottom rows, with noise), the cards' outlines moved with it.
    At 0.5 its cards are half the size in the photo, as from across a table."""
    shot = fans_scene(rng)
    if scale >= 1.0:
        return shot
    h, w = shot.image.shape[:2]
    big_h, big_w = int(h / scale), int(w / scale)
    edge = np.concatenate([shot.image[:4].reshape(-1, 3), shot.image[-4:].reshape(-1, 3)]).mean(0)
    canvas = np.clip(edge + rng.normal(0, 6, (big_h, big_w, 3)), 0, 255).astype(np.uint8)
    y0, x0 = int(rng.integers(0, big_h - h + 1)), int(rng.integers(0, big_w - w + 1))
    canvas[y0:y0 + h, x0:x0 + w] = shot.image
    cards = [dataclasses.replace(pc, quad=np.asarray(pc.quad) + (x0, y0),
                                 box=(pc.box[0] + x0, pc.box[1] + y0, pc.box[2] + x0, pc.box[3] + y0))
             for pc in shot.cards]
    return render.Scene(canvas, cards)


def readable(pc: render.PlacedCard) -> bool:
    """Whether a rendered card counts in the synthetic sets: face up, an index in sight and a fifth of it uncovered."""
    return pc.card is not None and max(pc.index_visible) >= 0.8 and pc.visible >= 0.2


def synthetic(rec: Reader, rng: np.random.Generator, cards: int = 2000, say: Callable[[str], None] = print,
              scene: Callable[[np.random.Generator], render.Scene] = synthetic_scene,
              name: str = "synthetic test set (dealt layouts)", goal: str | None = ">= 99.5%",
              progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Render frames until `cards` readable cards (an index at least 80% visible) have been shown; a card
    counts as right when a reported card of the same rank and suit has its box centre in the card's
    visible box. Cards whose indices are both covered are not counted (nobody can read them), nor are
    face-down cards (a name reported on one is false). `goal`, printed beside the figure, is the acceptance
    set's; the harder piles have none."""
    shown = right = rank_right = reported = false = frames = 0
    wrong: dict[str, int] = {}
    readings: list[tuple[float, bool]] = []  # per report: confidence, right (for the calibration error)
    flagged = [0, 0]  # reports flagged unsure: wrong, right
    t0 = time.perf_counter()
    while shown < cards:
        if progress is not None:  # (done, total) in cards shown: the command's progress bar
            progress(shown, cards)
        shot = scene(rng)
        frames += 1
        dets = [d for d in rec.identify(shot.image) if d.card is not None]
        reported += len(dets)
        used = [False] * len(dets)
        readable_boxes = []
        for pc in shot.cards:
            inside = [i for i, d in enumerate(dets) if _inside(d.box, pc.box)]
            if readable(pc):
                readable_boxes.append(pc.box)
                shown += 1
                hit = next((i for i in inside if not used[i] and dets[i].card == pc.card), None)
                if hit is not None:
                    used[hit] = True
                    right += 1
                    rank_right += 1
                else:
                    if any(dets[i].card.rank == pc.card.rank for i in inside):  # type: ignore[union-attr]
                        rank_right += 1
                    got = ", ".join(str(dets[i].card) for i in inside) or "nothing"
                    wrong[f"{pc.card} read as {got}"] = wrong.get(f"{pc.card} read as {got}", 0) + 1
            else:
                for i in inside:  # a report of a covered card is neither right nor false
                    if dets[i].card == pc.card:
                        used[i] = True
        oks = [used[i] or any(_inside(d.box, pc.box) and d.card == pc.card for pc in shot.cards)
               for i, d in enumerate(dets)]
        false += oks.count(False)
        readings += [(d.confidence, ok) for d, ok in zip(dets, oks)]
        for d, ok in zip(dets, oks):
            if d.unsure:
                flagged[ok] += 1
    seconds = time.perf_counter() - t0
    acc = right / shown
    say(f"{name}: {frames} frames, {shown} readable cards")
    aim = f" (goal {goal})" if goal else ""
    say(f"  right rank and suit: {right}/{shown} = {acc:.2%}{aim}; right rank: {rank_right / shown:.2%}")
    say(f"  precision: {reported - false}/{reported} = {(reported - false) / max(reported, 1):.2%}")
    say(f"  expected calibration error (10 bins): {ece(readings):.3f}; flagged unsure: {sum(flagged)} ({flagged[0]} "
        f"wrong, {flagged[1]} right)")
    for k, v in sorted(wrong.items(), key=lambda kv: -kv[1])[:15]:
        say(f"    {v} x {k}")
    return {"frames": frames, "cards": shown, "right": right, "accuracy": round(acc, 5),
            "rank_accuracy": round(rank_right / shown, 5), "reported": reported, "false": false,
            "precision": round((reported - false) / max(reported, 1), 5), "ece": round(ece(readings), 4),
            "flagged": {"unsure_wrong": flagged[0], "unsure_right": flagged[1]}, "seconds": round(seconds, 1),
            "errors": dict(sorted(wrong.items(), key=lambda kv: -kv[1])[:30])}


def _inside(box: tuple[float, ...], label: tuple[float, ...]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return label[0] <= cx <= label[2] and label[1] <= cy <= label[3]
