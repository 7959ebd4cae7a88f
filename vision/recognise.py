"""Find and name the cards in a frame: a small detector on the downscaled frame, then a classifier on corner crops.

Seven ONNX models run by ONNX Runtime (no deep-learning framework at run time):

1. the detector (CenterNet-style, stride 4) marks the centre of each card's visible part and regresses
   its visible box and the whole card's rectangle (centre, long-axis direction, half-length, half-width),
   and marks each index corner in sight;
2. the locator (optional: `models/locator.onnx`) puts each index corner the detector found right: where it
   lies and which way it points, from a square around it (table frames only);
3. the classifier reads the two index corners of each card (top-left and bottom-right of the upright
   card: the same picture once each is turned upright, so the card's 180-degree ambiguity never
   matters) and gives rank (2..A, joker), "back" or "none" (covered), and suit probabilities. The two
   corners are pooled, weighted by how sure each is that it sees an index, so a covered corner does not
   vote;
4. the body reader (optional: `models/body.onnx`) reads a card its indices name unsurely again, whole: its
   pips or face, several times the index's size (table frames only);
5. the second reader (optional: `models/second_reader.onnx`), a classifier twice as wide trained on located
   corners, reads again each corner the classifier reads unsurely as an index, and its reading stands;
6. the wide reader (optional: `models/wide_reader.onnx`) reads a number card's or an ace's black suit that
   the index readers name unsurely again, from the index and the strip beside it, where a pip shows the suit
   again (table frames only);
7. the sign reader (optional: `models/sign_reader.onnx`) reads a court card's black suit that the other readers
   name unsurely again, from the suit sign its picture shows beside the figure's head (table frames only).

`Recogniser.identify(frame)` returns `Detection`s with the card (or None when unreadable), a confidence
for the identity (calibrated to the chance it is right, vision/calibration.py) and one for the detection, whether it
is unsure (for the dealer to confirm), the visible box and the card's quad, all in frame pixels.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from pathlib import Path
from typing import Any, Sequence

import cv2
import numpy as np

from controller.cards import Card, Suit
from vision.enrol import paper_finds
from vision.net import Net, load_net
# The crops, the rectangles and the readings are the recogniser's public API too (training cuts its crops here).
from vision.cardrect import Box, CardRect, Find, corner_point, in_frame, index_among, iou, located, on_box, rect_at_index
from vision.cardrect import rect_variants, refine_rect, same_card_place, same_place, scaled_about_index, shifted_rects
from vision.crops import (BODY_H, BODY_W, CROP_H, CROP_W, DET_CHANNELS, I_HEAT, LOCATOR_REGION, LOCATOR_SIZE,
                          SIGN_REGION, SIGN_SIZE, STRIDE, WIDE_H, WIDE_REGION, WIDE_W, body_crops, corner_crops, decode,
                          decode_indices, index_crops, letterbox, locator_crops, sign_crops, snap_corner, wide_crops)
from vision.readings import (BACK, JOKER_CLASS, NONE, RANK_CLASSES, SUIT_FLOOR, SURE, Detection, cascade_gaps,
                             distinct, flag_repeats, lies_still, merge_cards, merge_readings, multiply_suits,
                             needs_body, one_reading_a_card, pool, settle, unsure_black)

__all__ = ["Detection", "Recogniser", "CardRect", "corner_crops", "index_crops", "body_crops", "locator_crops", "located",
           "LOCATOR_REGION", "LOCATOR_SIZE", "snap_corner",
           "MODELS_DIR", "CROP_W", "CROP_H", "STRIDE", "TABLE_SIZES", "PHOTO_SIZES", "RANK_CLASSES", "BACK", "NONE",
           "DET_CHANNELS", "I_HEAT", "letterbox", "decode", "decode_indices", "corner_point", "rect_at_index",
           "scaled_about_index", "refine_rect", "load_net", "cascade_gaps", "BODY_W", "BODY_H", "BODY_RANKS",
           "BODY_NONE", "Find", "JOKER_CLASS", "SIGN_REGION", "SIGN_SIZE", "SIGN_NONE", "WIDE_REGION", "WIDE_W", "WIDE_H",
           "wide_crops", "sign_crops"]

MODELS_DIR = Path(__file__).resolve().parent / "models"
# Detector input sizes (longer side, pixels). A table camera sees cards of one size: one pass. Photos may
# hold a card filling the frame or several small ones: two passes, merged.
TABLE_SIZES = (384,)
PHOTO_SIZES = (320, 224)
# A corner the classifier reads less surely than this (rank or suit) as an index is read by the second reader, whose
# reading stands. Validation, 6,007 cards: 0.8, 0.9 and 0.95 found 5974, 5977 and 5977; at 0.95 the bench's frame,
# all of it read surely before, had one to three corners (0.7 ms each) read again.
_SECOND_GATE = 0.9
# The two indices of one card imply its centre this close (over the sum of the half-widths implied): their
# own error is a few pixels; a neighbour's index in a cascade implies a card a third of a width or more off.
_PAIRED = 0.2
_GAP_SHIFT = 0.2  # of a half-width: how far an unsure gap reading is read again shifted (0.15 found 3 fewer)
# An index the locator sees less surely than this is dropped (0.5 dropped a few real ones on the validation frames).
_LOCATOR_HAS = 0.25
# A card's index corner is looked at unless an index found lies this near (in half-widths); two located indices this
# near are one.
_LOCATOR_NEAR = 0.3
# Two indices side by side (a card's under the one on top of it in a cascade, a third of a width or so apart) may
# make one peak of the detector's index heat, between them. The locator takes one of them, moving the find that
# way: where it moves a find more than _TWIN_MOVE (half-widths), the square _TWIN_BACK the other way is looked at
# for the other. Validation, 6,007 cards: 5985 -> 5990 (false reports 52 -> 51); four more sets, 6,013 cards,
# 5979 -> 5986 (false 55 -> 54). Moves over 0.1 and 0.15 found 5991 and 5990 of the 6,007 (at stop 31), for more
# squares on the bench's frame, where a lone card's find moves 0.21: its square, read in a second locator call,
# costs 0.5 ms there (what `cascade_gaps` gave back). Cost: about a locator square more a dealt frame.
_TWIN_MOVE = 0.2
_TWIN_BACK = 0.45
# The wide reader (see `crops.WIDE_REGION`) reads again a black suit of these ranks read less surely than this.
_WIDE_GATE = 0.95
_WIDE_RANKS = frozenset(range(9)) | {12}  # the rank classes of 2..10 and of the ace
# A black suit the index readers name less surely than _SCALE_GATE is read again by the second reader at the index crop
# cut _SCALE_STEP smaller and larger about the index, and the three suit readings are averaged: a card's size is known
# to a few percent only (its rectangle's), and a blurred spade read at the wrong scale passes for a club. Validation,
# 12,020 cards: 11,978 -> 11,981 right, false reports 102 -> 96; steps of 0.12, 11,979 (false 97); gate 0.99, 11,981
# (94), but it reads three black suits of the bench's frame again (six crops; none at 0.95).
_SCALE_GATE = 0.95
_SCALE_STEP = 0.08
# The sign reader (see `crops.SIGN_REGION`): its classes, and the suits it reads again.
SIGN_NONE = 2
_SIGN_GATE = 0.95
_SIGN_RANKS = frozenset({9, 10, 11})  # the rank classes of J, Q, K
# The body reader (see `crops.BODY_W`): its rank head, 0..12 ranks 2..A, then BODY_NONE.
BODY_RANKS = 14
BODY_NONE = 13
# The body reader's suit counts only when it names the card's rank too, at least this surely: a body crop that
# shows a pip plainly but no rank is off the card (two overlapping cards' rectangles merged into one), and its
# suit is a neighbour's (validation frames: a 2S read 0.87 by its indices, its body crop over the 2C under
# it read "2" at 0.28 and clubs at 0.98).
_BODY_SUIT_RANK = 0.5


class Recogniser:
    """The detector and classifier loaded once; `identify(frame)` per frame. Single-threaded by default
    (more threads would fight the rest of the table runtime on a Pi).

    `indices=True` (the default: a table camera's frames) also reads the index corners the detector's index
    head finds, each on its own: the index is what shows of a card lying under another in a cascade. A card
    that only an unsure index reading names is read at both corners as well, and the surer reading stands.
    On synthetic table frames of a validation seed (777, not the acceptance set's), with stop 18's models,
    that named 92.1% of the cards right against 85.8% without (precision 97.3% against 97.9%); pairing a
    cascade's indices right raised it to 94.7%. Its few more crops a frame are won back by sharpening only
    the rectangles whose corners are read (figures in vision/models/README.md).
    Each index is first put right by the locator (`_locate`, when the models folder has one): moved to where it
    lies, turned the way it points, or dropped where the locator sees none.
    Then a card the detector missed inside a cascade is read where its index must be (`cascade_gaps`), and
    last a card named unsurely is read again whole by the body reader (`body`, when the models folder has one).
    Throughout, a corner the classifier reads unsurely as an index is read again by the second reader (`second`,
    when the models folder has one), and its reading stands; a number card's black suit read unsurely is read
    again with the strip beside the index by the wide reader (`wide`, when the models folder has one), and a court
    card's black suit read unsurely by the sign reader at its picture's suit sign (`sign`, likewise).
    Photos are read with `indices=False`: there, with the first fine-tuned detector, it reported ink that is
    no index (precision 70% against 93%).
    Last (`judged`), each base reading's confidence is calibrated (`calibrate`; `calibrate=False` gives the raw ones a
    calibration is fitted on) and a reading below the unsure threshold, or naming a card more often than `decks` hold
    it, is flagged unsure; a joker is no card unless `jokers`."""

    def __init__(self, models: Path | str | None = None, *, det_size: int | Sequence[int] = TABLE_SIZES,
                 threshold: float = 0.35, index_threshold: float = 0.2,
                 threads: int | None = 1, refine: bool = True, snap: bool = False, indices: bool = True,
                 detector_only: bool = False, body: bool = True, second: bool = True, locate: bool = True,
                 wide: bool = True, sign: bool = True, enrolled: Any = None, calibrate: bool = True,
                 decks: int | None = 1, jokers: bool = False) -> None:
        folder = Path(models) if models is not None else MODELS_DIR
        det_path, cls_path = folder / "detector.onnx", folder / "classifier.onnx"
        for p in (det_path,) if detector_only else (det_path, cls_path):
            if not p.is_file():
                raise FileNotFoundError(f"card model {p} is missing (train with `croupier vision train`)")
        if threads is not None:
            cv2.setNumThreads(threads)
        nets = threads or 1
        self.detector = load_net(det_path, nets)
        self.classifier = None if detector_only else load_net(cls_path, nets)

        def optional(name: str, wanted: bool) -> Net | None:
            # A models folder from before a model was made has none of it: read without it.
            path = folder / name
            return load_net(path, nets) if wanted and path.is_file() else None

        # The index locator (`locate`): without it the index corners are read where the detector puts them. It
        # belongs with the detector (what an index reader learns from is the corners the detector finds, located).
        self.locator = optional("locator.onnx", locate and indices)
        # The body reader reads a table camera's cards only: it learnt from renders alone, and the real photos'
        # labels cannot check its suits.
        self.body = optional("body.onnx", body and indices and not detector_only)
        # The second index reader (`second`): a wider classifier for the corners read unsurely.
        self.second = optional("second_reader.onnx", second and not detector_only)
        # The wide reader (`wide`) and the sign reader (`sign`, a court card's picture sign), for a table camera's
        # cards only (as the body reader, they learnt from renders alone).
        self.wide = optional("wide_reader.onnx", wide and indices and not detector_only)
        self.sign = optional("sign_reader.onnx", sign and indices and not detector_only)
        # One size for a fixed camera; several (e.g. 320, 192) for photos whose cards may be any size.
        self.det_sizes = (det_size,) if isinstance(det_size, int) else tuple(det_size)
        self.threshold = threshold
        self.index_threshold = index_threshold
        self.refine = refine
        self.snap = snap
        self.indices = indices
        # The house's enrolled deck (vision/enrol.py `DeckModel`, optional): read last, and where it names a card at
        # `enrolled_sure` or more its reading stands; elsewhere the base readers' does.
        self.enrolled = enrolled
        self.enrolled_sure = 0.9
        self._enrolled_seen: list[tuple[CardRect, Card | None, Any]] = []  # last frame's: rect, base card, reading
        # The base readers' confidences as the chance a reading is right (vision/calibration.py), fitted per reading
        # path: a table camera's frames and photos are read differently. `calibrate=False`: raw confidences (what the
        # calibration is fitted on), still unsure below UNSURE_BELOW.
        from vision.calibration import IDENTITY, load_calibrations

        self.calibration = load_calibrations(folder).get("table" if indices else "photo", IDENTITY) \
            if calibrate else IDENTITY
        # A card named more often than this in one frame is flagged unsure (None: not checked); a joker is named only
        # where the game deals one (`jokers`), else it is no card.
        self.decks = decks
        self.jokers = jokers
        self.base_id = ("base:" + hashlib.sha256(cls_path.read_bytes()).hexdigest()[:12]) if cls_path.is_file() \
            else "base"

    @property
    def model_id(self) -> str:
        """The readers in use: the enrolled deck model's id, else the base classifier's digest."""
        return f"enrolled:{self.enrolled.id}" if self.enrolled is not None else self.base_id

    def detect(self, frame: np.ndarray) -> list[tuple[float, Box, CardRect]]:
        """Cards in `frame` (BGR uint8) as (score, visible box, rect), strongest first, duplicates merged."""
        return self.detect_all(frame)[0]

    def detect_all(self, frame: np.ndarray) -> tuple[list[tuple[float, Box, CardRect]],
                                                     list[tuple[float, CardRect]] | None]:
        """`detect`'s cards, and the index corners in sight as (score, rect of the card whose top-left index
        it is), strongest first (None from a detector without the index head)."""
        found, indices, smalls, _ = self._detect(frame)
        return [(f.score, f.box, f.rect) for f in merge_cards(self._sharpened(found, smalls))], indices

    def _sharpened(self, found: list[Find], smalls: list[tuple[np.ndarray, float]]) -> list[Find]:
        """`_detect`'s cards with each rectangle sharpened from the input it was found in (when `refine`)."""
        if not self.refine:
            return found
        return [f._replace(rect=refine_rect(smalls[f.size][0], f.rect, smalls[f.size][1])) for f in found]

    def _detect(self, frame: np.ndarray) -> tuple[list[Find],
                                                  list[tuple[float, CardRect]] | None,
                                                  list[tuple[np.ndarray, float]], list[tuple[float, CardRect]]]:
        """The detector's cards (their rects as detected) with the input each was found in as
        `smalls[find.size]` (the shrunk frame and its scale: what `refine_rect` needs), its index corners (merged
        over the sizes, then put right by the locator, `_locate`), `smalls`, and the indices the locator found
        beside one the detector saw as two in one (`_locate`'s `twins`)."""
        _check_frame(frame)
        found: list[Find] = []
        indices: list[tuple[float, CardRect]] | None = []
        smalls: list[tuple[np.ndarray, float]] = []
        # The frame halved once: the first step to the detector's input, and where the locator's squares are cut.
        half = cv2.pyrDown(frame) if self.indices and self.locator is not None else None
        for size in self.det_sizes:
            small, s = letterbox(frame, size, half)
            out = self.detector(cv2.dnn.blobFromImage(small, 1 / 255))[0]
            found += [Find(score, box, rect, len(smalls)) for score, box, rect in decode(out, s, self.threshold)]
            smalls.append((small, s))
            if self.indices and out.shape[0] >= DET_CHANNELS and indices is not None:
                indices += decode_indices(out, s, self.index_threshold)
            else:
                indices = None
        twins: list[tuple[float, CardRect]] = []
        if indices is None:
            return found, indices, smalls, twins
        if len(self.det_sizes) > 1:
            indices.sort(key=lambda f: -f[0])
            kept_idx: list[tuple[float, CardRect]] = []
            for score, r in indices:  # one index seen at two detector sizes
                if not index_among(r, kept_idx, _LOCATOR_NEAR):
                    kept_idx.append((score, r))
            indices = kept_idx
        return found, self._locate(frame, indices, [f.rect for f in found], half, twins), smalls, twins

    def _locate(self, frame: np.ndarray, indices: list[tuple[float, CardRect]], cards: Sequence[CardRect],
                half: np.ndarray | None = None, twins: list[tuple[float, CardRect]] | None = None
                ) -> list[tuple[float, CardRect]]:
        """The index corners put right by the locator (when the models folder has one): each moved to where the
        locator sees the index and turned the way it points, and dropped where it sees none (a pip, a marker's
        square, felt). The detector finds an index's place to about a tenth of a half-width and its direction to
        within ten degrees or so, now and then a quarter or more off, and a crop that far off reads wrong; the
        locator, seeing the index and the card's corner around it, puts it right to a few hundredths and about a
        degree. Where the detector found a card but no index at one of its index corners (an index it scored below
        its threshold), that corner is looked at too. Given `twins`, where the locator moved a find far
        (`_TWIN_MOVE`), the other index that find may have stood for too is looked for (`_twins`), and appended to
        `twins`."""
        if self.locator is None or not (indices or cards):
            return indices
        points = [corner_point(r) for _, r in indices]
        corners = []
        for r in cards:
            for c in (r, r.flipped()):
                cx, cy = corner_point(c)
                if not any(math.hypot(cx - x, cy - y) < _LOCATOR_NEAR * r.half_w for x, y in points):
                    corners.append(c)
        rects = [r for _, r in indices] + corners
        out = self.locator(cv2.dnn.blobFromImages(list(locator_crops(frame, rects, half)), 1 / 255))
        kept = [(score, located(r, *o[1:])) for (score, r), o in zip(indices, out) if o[0] >= _LOCATOR_HAS]
        if twins is not None:
            twins += self._twins(frame, indices, out, kept, half)
        for r, o in zip(corners, out[len(indices):]):
            if o[0] < _LOCATOR_HAS:
                continue
            moved = located(r, *o[1:])
            if not index_among(moved, kept + (twins or []), _LOCATOR_NEAR):
                # No index the detector found names it: its certainty that an index is there is the locator's.
                kept.append((float(o[0]), moved))
        return kept

    def _twins(self, frame: np.ndarray, indices: list[tuple[float, CardRect]], out: np.ndarray,
               kept: list[tuple[float, CardRect]], half: np.ndarray | None) -> list[tuple[float, CardRect]]:
        """The indices beside those the locator moved a find far to (`out`: its answers for `indices`), looked for
        `_TWIN_BACK` the other way from the find, located, and not one already `kept`: the detector's score each."""
        back = []
        for (score, r), o in zip(indices, out):
            move = math.hypot(o[1], o[2])
            if o[0] >= _LOCATOR_HAS and move > _TWIN_MOVE:
                back.append((score, located(r, -o[1] / move * _TWIN_BACK, -o[2] / move * _TWIN_BACK, 1.0, 0.0)))
        if not back:
            return []
        assert self.locator is not None  # `_locate` asks only with one
        again = self.locator(cv2.dnn.blobFromImages(list(locator_crops(frame, [r for _, r in back], half)), 1 / 255))
        found: list[tuple[float, CardRect]] = []
        for (score, r), o in zip(back, again):
            moved = located(r, *o[1:])
            if o[0] >= _LOCATOR_HAS and not index_among(moved, kept + found, _LOCATOR_NEAR):
                found.append((score, moved))
        return found

    def classify(self, frame: np.ndarray, rects: Sequence[CardRect], snap: bool | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Per-corner probabilities: ranks (2n, RANK_CLASSES) and suits (2n, 4)."""
        corners = [c for r in rects for c in (r, r.flipped())]
        if self.snap if snap is None else snap:
            gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            corners = [snap_corner(gray, c) for c in corners]
        return self._read(frame, corners)

    def identify(self, frame: np.ndarray) -> list[Detection]:
        """Every card in `frame` with its identity and confidences."""
        if self.indices:
            raw, indices, smalls, twins = self._detect(frame)
            finds = merge_cards(raw)
            cards, found = self._named_by_indices(frame, finds, indices or [], twins, smalls)
        else:
            # A photo is searched at several sizes. One card found at two of them is read at each: the
            # stronger find may carry the worse rectangle (a big card's, at the larger size), and the better
            # reading stands (`merge_readings`).
            raw, _, smalls, _ = self._detect(frame)
            cards, found = [], self._sharpened(merge_cards(raw, per_size=True), smalls)
        if found:
            more = self._read_finds(frame, found)
            cards = settle(cards, more) if self.indices else merge_readings(more)
        cards = distinct(cards)
        if not self.indices and (paper := paper_finds(frame, cards)):
            cards = distinct(cards + [d for d in self._read_finds(frame, paper) if d.card is not None])
        if self.indices:
            cards = distinct(cards + self._read_gaps(frame, cards))
            if self.body is not None:
                cards = distinct(self._read_bodies(frame, cards, finds, smalls))
        if self.enrolled is not None:
            cards = self._read_enrolled(frame, cards)
        return self.judged(cards)

    def judged(self, cards: list[Detection]) -> list[Detection]:
        """What the table is told: a joker is no card (unless the game deals one), one card read twice at one place of
        a photo names one card, each base reading's confidence calibrated (a photo's reading likelier wrong than right
        names no card: `Calibration.names_none`), and a reading below the unsure threshold or naming a card the frame
        shows more often than the decks hold it flagged unsure."""
        if not self.jokers:
            cards = [dataclasses.replace(d, card=None) if d.card is not None and d.card.joker else d for d in cards]
        if not self.indices:
            # Photos only: on a table frame a tight pile's cards may lie closer than any rule for one card read twice
            # allows (the harder synthetic piles lost 48 of 2,000 cards to it), and its index pairing already names a
            # card's two corners once.
            cards = one_reading_a_card(cards, turned=True, nested=True)
        cal = self.calibration
        out = []
        for d in cards:
            if d.card is not None:
                conf = cal(d.confidence) if not d.model else d.confidence
                d = dataclasses.replace(d, card=None if conf < cal.names_none else d.card, confidence=conf,
                                        unsure=cal.unsure(conf))
            out.append(d)
        return flag_repeats(out, self.decks)

    def _named_by_indices(self, frame: np.ndarray, finds: list[Find], indices: list[tuple[float, CardRect]],
                          twins: list[tuple[float, CardRect]], smalls: list[tuple[np.ndarray, float]]
                          ) -> tuple[list[Detection], list[Find]]:
        """The cards the index corners in sight name, and the detector's cards (`finds`) that no sure reading of
        them names, their rectangles sharpened.

        Each index corner in sight is read on its own; a card is named by its one or two indices. An
        index counts only on a card the detector found (ink on a busy background is no card): the index
        on its visible box, or the card it implies centred there (a card under another in a cascade
        may be found only as the one on top).
        An index off them all may still be a card's the detector missed (the last of a cascade, found
        only as the card above it): it counts when that card overlaps a found one and it reads surely."""
        def beside(r: CardRect) -> bool:
            return any(iou(in_frame(r, frame), f.box) > 0 for f in finds)

        on: list[tuple[float, CardRect]] = []
        off: list[tuple[float, CardRect]] = []
        for score, r in indices:
            if any(on_box(r, f.box) for f in finds):
                on.append((score, r))
            elif beside(r):
                off.append((score, r))
        # An index found beside one the detector saw as two in one counts as such an index does: its find was
        # the other's, and the locator may have taken a pip or a picture's ink for it.
        off += [(score, r) for score, r in twins if beside(r)]
        # One card named at two places (an index found twice, once turned wrong) names the place of the
        # surer reading only: the other must not stand for whatever card lies there.
        cards = distinct(self.read_indices(frame, on) +
                         [d for d in self.read_indices(frame, off) if d.confidence >= SURE])
        # Cards no sure index reading names in their place (face down, covered, an index missed or read
        # unsurely) are read at both corners, from their rectangles sharpened (only they need it). Only
        # the same place counts: in a cascade the card under a named one may lie mostly beneath it.
        unnamed = [f for f in finds if not any(d.confidence >= SURE and same_place(d.rect, f.rect) for d in cards)]
        return cards, self._sharpened(unnamed, smalls)

    def _read_finds(self, frame: np.ndarray, found: list[Find]) -> list[Detection]:
        """The detector's cards read at both corners of their rectangles. A card read badly may have been taken a
        little off, or the wrong way round (long and short sides swapped): it is read again from rectangles nudged
        and turned, and the surest reading kept."""
        ranks, suits = self.classify(frame, [f.rect for f in found])
        more = [pool(f.score, f.box, f.rect, ranks[2 * k:2 * k + 2], suits[2 * k:2 * k + 2])
                for k, f in enumerate(found)]
        doubtful = [k for k, d in enumerate(more) if not d.face_down and d.confidence < 0.6]
        if doubtful:
            variants = [(k, v) for k in doubtful for v in rect_variants(more[k].rect)]
            ranks2, suits2 = self.classify(frame, [v for _, v in variants], snap=False)
            for j, (k, v) in enumerate(variants):
                again = pool(more[k].score, more[k].box, v, ranks2[2 * j:2 * j + 2], suits2[2 * j:2 * j + 2])
                if again.card is not None and again.confidence > more[k].confidence:
                    more[k] = again
        return more

    def _read_enrolled(self, frame: np.ndarray, cards: list[Detection]) -> list[Detection]:
        """Every card not face down read again by the enrolled deck model at its rectangle's two corners; where it
        is sure, its reading stands (`model` says so)."""
        from vision.enrol import combine

        readable = [d for d in cards if not d.face_down]
        # A card lying still, read alike by the base readers, is not read again: its last frame's enrolled reading
        # stands (a table camera sees the same cards frame after frame; a frame's enrolled reading of 8 cards costs
        # about a third of the rest of the frame).
        readings: list[Any] = [next((r for rect, card, r in self._enrolled_seen if card == d.card
                                     and lies_still(rect, d.rect)), None) for d in readable]
        fresh = [k for k, r in enumerate(readings) if r is None]
        if fresh:
            for k, r in zip(fresh, self.enrolled.read(corner_crops(frame, [readable[k].rect for k in fresh]))):
                readings[k] = r
        self._enrolled_seen = [(d.rect, d.card, r) for d, r in zip(readable, readings)]
        out = [d for d in cards if d.face_down]
        for d, r in zip(readable, readings):
            card, conf, enrolled = combine(d.card, d.confidence, r, self.enrolled_sure)
            if enrolled:
                same = card == d.card
                d = dataclasses.replace(d, card=card, confidence=conf, model=f"enrolled:{self.enrolled.id}",
                                        rank_confidence=max(conf, d.rank_confidence) if same else conf,
                                        suit_confidence=max(conf, d.suit_confidence) if same else conf)
            elif conf != d.confidence:
                d = dataclasses.replace(d, confidence=conf)
            out.append(d)
        return distinct(out)

    def _body_rect(self, card: Detection, finds: list[Find],
                   smalls: list[tuple[np.ndarray, float]]) -> CardRect:
        """Where to read a card's body: the rectangle the detector found in its place, sharpened, else the card's
        own. A card named by its index carries the rectangle its index implies, a few pixels and degrees off:
        enough for the body reader to see no whole card."""
        f = next((f for f in finds if same_card_place(card.rect, f.rect)), None)
        return card.rect if f is None else self._sharpened([f], smalls)[0].rect

    def _read_bodies(self, frame: np.ndarray, cards: list[Detection],
                     finds: list[Find],
                     smalls: list[tuple[np.ndarray, float]]) -> list[Detection]:
        """Cards named unsurely (below _BODY_GATE) read again by the body reader, at `_body_rect`. Where it sees
        a whole card face up, the surer of the two readings names the rank, and the surer the suit: a small index
        may blur a 5 into an 8 or a spade into a club, while the card's pips, several times its size, do not."""
        doubtful = [k for k, d in enumerate(cards) if needs_body(d)]
        if not doubtful:
            return cards
        assert self.body is not None
        crops = body_crops(frame, [self._body_rect(cards[k], finds, smalls) for k in doubtful])
        probs = self.body(cv2.dnn.blobFromImages(list(crops), 1 / 255))
        out = list(cards)
        for k, p in zip(doubtful, probs):
            ranks, suits = p[:BODY_NONE], p[BODY_RANKS:]
            if p[BODY_NONE] >= 0.5:  # covered, face down, or the rect is off the card: the index alone tells
                continue
            d, r, s = cards[k], int(ranks.argmax()), int(suits.argmax())
            card = d.card
            assert card is not None
            rank, rank_p = (r + 2, float(ranks[r])) if ranks[r] > d.rank_confidence else (card.rank, d.rank_confidence)
            # A court card's body is a picture: only the pips of a number card or an ace show the suit large.
            whole = r + 2 == rank and ranks[r] >= _BODY_SUIT_RANK and not 11 <= rank <= 13
            suit, suit_p = (Suit(s), float(suits[s])) if whole and suits[s] > d.suit_confidence else \
                (card.suit, d.suit_confidence)
            out[k] = dataclasses.replace(d, card=Card(rank, suit), confidence=rank_p * suit_p, rank_confidence=rank_p,
                                         suit_confidence=suit_p)
        return out

    def _read_gaps(self, frame: np.ndarray, cards: Sequence[Detection]) -> list[Detection]:
        """Cards missed inside a cascade, read where their indices must be (`cascade_gaps`); only sure
        readings count (a point between two indices shows a card's middle or felt: "none")."""
        rects = cascade_gaps(cards)
        ranks, suits = self._read(frame, rects)
        # The detector did not find it: its certainty that a card is there is the reading's own.
        reads = [pool(0.0, in_frame(r, frame), r, ranks[k:k + 1], suits[k:k + 1]) for k, r in enumerate(rects)]
        # A dealer's steps are not even: the index may lie a tenth of a width or more from the point between
        # its neighbours. Where an index is read there unsurely, it is read again shifted that far each way.
        shifted = [(k, v) for k, d in enumerate(reads) if d.card is not None and d.confidence < SURE
                   for v in shifted_rects(rects[k], _GAP_SHIFT)]
        ranks2, suits2 = self._read(frame, [v for _, v in shifted])
        for j, (k, v) in enumerate(shifted):
            again = pool(0.0, in_frame(v, frame), v, ranks2[j:j + 1], suits2[j:j + 1])
            if again.card is not None and again.confidence > reads[k].confidence:
                reads[k] = again
        return [dataclasses.replace(d, score=d.confidence) for d in reads
                if d.card is not None and d.confidence >= SURE]

    def read_indices(self, frame: np.ndarray, indices: Sequence[tuple[float, CardRect]]) -> list[Detection]:
        """Read the index corners in sight. The two indices of one card (the same card implied at the same
        place from opposite corners) are paired first; a card is read at its likelier index, and at the
        other too only when that reading is unsure (each crop read costs about 0.15 ms here), and the readings
        are pooled. Corners that show no index name nothing."""
        if not indices:
            return []
        order = sorted(range(len(indices)), key=lambda k: -indices[k][0])
        rects = [r for _, r in indices]
        if self.snap:
            gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            rects = [snap_corner(gray, r) for r in rects]
        # The other index of the same card implies the same card: same place, opposite direction. Closest
        # pairs first: in a cascade a neighbour's index may imply a card nearly there too.
        pairs = sorted((math.hypot(a.cx - b.cx, a.cy - b.cy) / (a.half_w + b.half_w), i, j)
                       for i, a in enumerate(rects) for j, b in enumerate(rects[:i])
                       if a.ux * b.ux + a.uy * b.uy < -0.7)
        mate: dict[int, int] = {}
        for d, i, j in pairs:
            if d < _PAIRED and i not in mate and j not in mate:
                mate[i], mate[j] = j, i
        groups: list[list[int]] = []  # each card's indices, likelier first
        grouped: set[int] = set()
        for k in order:
            if k not in grouped:
                groups.append([k] + ([mate[k]] if k in mate else []))
                grouped.update(groups[-1])
        ranks, suits = self._read(frame, [rects[g[0]] for g in groups])
        # Unsure as a card's confidence is: the rank's probability times the suit's (a K read at 0.9 and a
        # club at 0.86 names the KC at 0.77, and its other index may show a spade plainly).
        unsure = [j for j, g in enumerate(groups) if len(g) == 2 and
                  float(ranks[j].max()) * float(suits[j].max()) < SURE]
        ranks2, suits2 = self._read(frame, [rects[groups[j][1]] for j in unsure])
        second = {j: i for i, j in enumerate(unsure)}
        out = []
        for j, g in enumerate(groups):
            r = rects[g[0]]
            box = in_frame(r, frame)
            score = max(indices[k][0] for k in g)
            if j in second:
                i = second[j]
                read = pool(score, box, r, np.stack([ranks[j], ranks2[i]]), np.stack([suits[j], suits2[i]]))
            else:
                read = pool(score, box, r, ranks[j:j + 1], suits[j:j + 1])
            out.append(read)
        return [d for d in out if d.card is not None]

    def _read(self, frame: np.ndarray, rects: Sequence[CardRect]) -> tuple[np.ndarray, np.ndarray]:
        """The classifier's rank and suit probabilities for the top-left index corner of each rect; where it
        reads an index unsurely, the second reader's instead; where a black suit is still unsure, averaged with the
        second reader's at the crop cut smaller and larger; where a number card's black suit is still unsure, times
        the wide reader's, and where a court card's is, times the sign reader's."""
        if not rects:
            return np.zeros((0, RANK_CLASSES), np.float32), np.zeros((0, 4), np.float32)
        crops = index_crops(frame, rects)
        assert self.classifier is not None  # a detector-only recogniser reads nothing
        probs = self.classifier(cv2.dnn.blobFromImages(list(crops), 1 / 255))
        if self.second is not None:
            # The second reader, four times the classifier's cost a crop, reads better (a black index's suit, a
            # blurred rank): where the classifier is unsure of an index (not where it sees none, which most false
            # finds are), its reading replaces the classifier's. Averaged with it, it found no more cards.
            sure = np.minimum(probs[:, :RANK_CLASSES].max(1), probs[:, RANK_CLASSES:].max(1))
            shaky = np.nonzero((sure < _SECOND_GATE) & (probs[:, NONE] < 0.5))[0]
            if len(shaky):
                probs[shaky] = self.second(cv2.dnn.blobFromImages(list(crops[shaky]), 1 / 255))
        suits = probs[:, RANK_CLASSES:]
        black = np.isin(suits.argmax(1), (Suit.SPADES, Suit.CLUBS))
        doubt = np.nonzero(black & (suits.max(1) < _SCALE_GATE) & (probs[:, NONE] < 0.5))[0]
        if len(doubt):
            reader = self.second if self.second is not None else self.classifier
            both = suits[doubt].copy()
            for scale in (1 - _SCALE_STEP, 1 + _SCALE_STEP):
                crops2 = index_crops(frame, [scaled_about_index(rects[int(k)], scale) for k in doubt])
                both += reader(cv2.dnn.blobFromImages(list(crops2), 1 / 255))[:, RANK_CLASSES:]
            suits[doubt] = both / both.sum(1, keepdims=True)
        if self.wide is not None:
            doubt = unsure_black(probs, suits, _WIDE_RANKS, _WIDE_GATE)
            if len(doubt):
                wide = self.wide(cv2.dnn.blobFromImages(list(wide_crops(frame, [rects[int(k)] for k in doubt])), 1 / 255))
                multiply_suits(suits, doubt, wide[:, RANK_CLASSES:])
        if self.sign is not None:
            doubt = unsure_black(probs, suits, _SIGN_RANKS, _SIGN_GATE)
            if len(doubt):
                signs = self.sign(cv2.dnn.blobFromImages(list(sign_crops(frame, [rects[int(k)] for k in doubt])), 1 / 255))
                seen = signs[:, SIGN_NONE] < 0.5  # a covered sign says nothing
                reading = np.ones((int(seen.sum()), 4), np.float32)
                reading[:, Suit.CLUBS] = np.maximum(signs[seen, 0], SUIT_FLOOR)
                reading[:, Suit.SPADES] = np.maximum(signs[seen, 1], SUIT_FLOOR)
                multiply_suits(suits, doubt[seen], reading)
        return probs[:, :RANK_CLASSES], probs[:, RANK_CLASSES:]


def _check_frame(frame: np.ndarray) -> None:
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError("a frame must be a BGR uint8 image (height, width, 3)")
    if frame.shape[0] < 32 or frame.shape[1] < 32:
        raise ValueError(f"frame {frame.shape[1]}x{frame.shape[0]} is too small (at least 32x32)")
