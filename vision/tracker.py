"""Tracking: per-frame card sightings become events only when they are stable; a passing hand changes nothing.

`Tracker.update(sightings)` takes what one frame showed (card or face-down or unreadable, confidence,
position in table millimetres or pixels, zone) and returns the events that became certain with it:

- `CardAppeared(card, zone, confidence, certain)`: a card has been seen in the same place with the same
  identity for `stable_frames` frames in a row;
- `CardMoved(card, zone, ..., from_zone)`: a known card now lies stably in another zone (slid there,
  or lifted from its place and put down elsewhere before it counted as removed);
- `CardRemoved(card, zone)`: a known card has not been seen for `remove_frames` frames.

A card named with confidence below `min_confidence`, or flagged unsure by the recogniser in any of its stable frames
(`Sighting.unsure`), is still reported, with `certain=False`: never guessed silently. A face-down card is reported with `card=None, face_down=True`. A sighting with no
readable identity (a hand over the index) keeps its track alive without voting, so a hand passing over
the cards makes no events; neither does a hand resting for fewer than `remove_frames` frames.

`TableWatcher` wires a recogniser, the table geometry and a tracker: `watcher.process(frame) -> events`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from controller.cards import Card, parse_card

__all__ = ["Sighting", "CardAppeared", "CardMoved", "CardRemoved", "VisionEvent", "Tracker", "TableWatcher",
           "event_from_json"]

_DOWN = "down"  # identity key of a face-down card


@dataclass(frozen=True)
class Sighting:
    """One card in one frame: `card` None means face down (`face_down`) or unreadable; `x, y` in the
    tracker's units (table mm when calibrated); `size` the card's half-width in the same units."""

    card: Card | None
    confidence: float
    x: float
    y: float
    zone: str | None
    size: float = 30.0
    face_down: bool = False
    unsure: bool = False  # the recogniser's flag (`Detection.unsure`): never certain, whatever its confidence

    @property
    def key(self) -> Card | str | None:
        if self.card is not None:
            return self.card
        return _DOWN if self.face_down else None


@dataclass(frozen=True)
class VisionEvent:
    """Base of the tracker's events; `to_json()` gives a flat dict with `kind`."""

    KIND: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.KIND}
        for k, v in self.__dict__.items():
            out[k] = str(v) if isinstance(v, Card) else (round(v, 4) if isinstance(v, float) else v)
        return out


@dataclass(frozen=True)
class _CardAt(VisionEvent):
    """A card now lying (stably) in `zone`; x, y where, in the tracker's units."""

    card: Card | None
    zone: str | None
    confidence: float
    certain: bool
    face_down: bool = False
    x: float = 0.0
    y: float = 0.0


@dataclass(frozen=True)
class CardAppeared(_CardAt):
    KIND: ClassVar[str] = "card_appeared"


@dataclass(frozen=True)
class CardMoved(_CardAt):
    """`zone` is where the card is now, `from_zone` where it was."""

    KIND: ClassVar[str] = "card_moved"
    from_zone: str | None = None


@dataclass(frozen=True)
class CardRemoved(VisionEvent):
    KIND: ClassVar[str] = "card_removed"
    card: Card | None
    zone: str | None
    face_down: bool = False


def event_from_json(d: dict[str, Any]) -> VisionEvent:
    kinds = {c.KIND: c for c in (CardAppeared, CardMoved, CardRemoved)}
    cls = kinds[d["kind"]]
    args = {k: v for k, v in d.items() if k != "kind"}
    if args.get("card") is not None:
        args["card"] = parse_card(args["card"])
    return cls(**args)


@dataclass
class _Track:
    x: float
    y: float
    size: float
    key: Card | str | None
    zone: str | None
    run: int = 1                  # consecutive frames with this identity and zone
    misses: int = 0
    confidence: float = 0.0
    confirmed: bool = False
    reported_key: Card | str | None = None
    reported_zone: str | None = None
    votes: list[float] = field(default_factory=list)
    doubts: list[bool] = field(default_factory=list)  # per vote: the sighting was flagged unsure
    dead: bool = False            # handed over to another track (the card was lifted and put down)


class Tracker:
    """Turns sightings into events; see the module doc. Units of position are the caller's."""

    def __init__(self, *, stable_frames: int = 5, remove_frames: int = 15, min_confidence: float = 0.9,
                 match_radius: float = 0.8) -> None:
        if stable_frames < 1 or remove_frames < 1:
            raise ValueError("stable_frames and remove_frames must be at least 1")
        self.stable_frames = stable_frames
        self.remove_frames = remove_frames
        self.min_confidence = min_confidence
        self.match_radius = match_radius  # in card half-widths
        self.tracks: list[_Track] = []

    def update(self, sightings: Sequence[Sighting]) -> list[VisionEvent]:
        events: list[VisionEvent] = []
        unmatched = list(range(len(sightings)))
        pairs = []
        for ti, t in enumerate(self.tracks):
            for si, s in enumerate(sightings):
                d = math.hypot(t.x - s.x, t.y - s.y)
                # The track's own size sets the reach: one wild sighting (a hand taken for a huge card)
                # must not capture tracks across the table.
                if d <= self.match_radius * t.size:
                    # Prefer the same identity, then the nearest.
                    same = 0 if (s.key is None or s.key == t.key) else 1
                    pairs.append((same, d, ti, si))
        pairs.sort()
        used_t: set[int] = set()
        used_s: set[int] = set()
        for _, _, ti, si in pairs:
            if ti in used_t or si in used_s or self.tracks[ti].dead:
                continue
            used_t.add(ti)
            used_s.add(si)
            events += self._observe(self.tracks[ti], sightings[si])
        unmatched = [si for si in unmatched if si not in used_s]
        survivors = []
        for ti, t in enumerate(self.tracks):
            if t.dead:
                continue
            if ti not in used_t:
                t.misses += 1
                t.run = 0
                if t.misses >= (self.remove_frames if t.confirmed else self.stable_frames):
                    if t.confirmed:
                        events.append(CardRemoved(_card(t.reported_key), t.reported_zone, t.reported_key == _DOWN))
                    continue
            survivors.append(t)
        self.tracks = survivors
        for si in unmatched:
            s = sightings[si]
            if s.key is None:
                continue  # nothing readable and nothing known here: wait
            t = _Track(s.x, s.y, s.size, s.key, s.zone, confidence=s.confidence, votes=[s.confidence],
                       doubts=[s.unsure])
            self.tracks.append(t)
            events += self._maybe_confirm(t)
        self.tracks = [t for t in self.tracks if not t.dead]
        return events

    def _observe(self, t: _Track, s: Sighting) -> list[VisionEvent]:
        t.misses = 0
        if s.key is None:
            # Covered or unreadable: the card is still there, but this frame says nothing new about it.
            return []
        t.x, t.y = s.x, s.y  # follow a sliding card without lag
        t.size = 0.8 * t.size + 0.2 * s.size
        if s.key == t.key and s.zone == t.zone:
            t.run += 1
            t.votes = (t.votes + [s.confidence])[-self.stable_frames:]
            t.doubts = (t.doubts + [s.unsure])[-self.stable_frames:]
        else:
            t.key, t.zone, t.run, t.votes, t.doubts = s.key, s.zone, 1, [s.confidence], [s.unsure]
        t.confidence = sum(t.votes) / len(t.votes)
        return self._maybe_confirm(t)

    def _maybe_confirm(self, t: _Track) -> list[VisionEvent]:
        if t.run < self.stable_frames:
            return []
        if t.confirmed and t.key == t.reported_key and t.zone == t.reported_zone:
            return []
        # A card the recogniser flagged unsure in any of the stable frames is not certain: the dealer confirms it.
        certain = t.key == _DOWN or (t.confidence >= self.min_confidence and not any(t.doubts))
        out: list[VisionEvent] = []
        lost = next((o for o in self.tracks if o is not t and o.confirmed and not o.dead and o.misses > 0
                     and isinstance(t.key, Card) and o.reported_key == t.key), None) if not t.confirmed else None
        if lost is not None:
            # The same card, gone from where it was and now stable elsewhere: it was picked up and put down.
            lost.dead = True  # dropped at the end of this update, without a removal
            if lost.reported_zone != t.zone:
                out.append(CardMoved(_card(t.key), t.zone, t.confidence, certain, False, t.x, t.y, lost.reported_zone))
        elif not t.confirmed:
            out.append(CardAppeared(_card(t.key), t.zone, t.confidence, certain, t.key == _DOWN, t.x, t.y))
        elif t.key != t.reported_key:
            # Another card lies where this one was (turned face up, or swapped): the old one went away.
            out.append(CardRemoved(_card(t.reported_key), t.reported_zone, t.reported_key == _DOWN))
            out.append(CardAppeared(_card(t.key), t.zone, t.confidence, certain, t.key == _DOWN, t.x, t.y))
        else:
            out.append(CardMoved(_card(t.key), t.zone, t.confidence, certain, t.key == _DOWN, t.x, t.y,
                                 t.reported_zone))
        t.confirmed, t.reported_key, t.reported_zone = True, t.key, t.zone
        return out


def _card(key: Card | str | None) -> Card | None:
    return key if isinstance(key, Card) else None


class TableWatcher:
    """Frames in, events out: recogniser, then zones from the table geometry, then the tracker."""

    def __init__(self, recogniser: Any, geometry: Any | None = None, tracker: Tracker | None = None, *,
                 min_score: float = 0.4) -> None:
        self.recogniser = recogniser
        self.geometry = geometry
        self.tracker = tracker or Tracker()
        self.min_score = min_score

    def sightings(self, frame: Any) -> list[Sighting]:
        out = []
        for d in self.recogniser.identify(frame):
            if d.score < self.min_score:
                continue
            x, y, size, zone = d.rect.cx, d.rect.cy, d.rect.half_w, None
            if self.geometry is not None:
                if self.geometry.on_marker(x, y):
                    continue  # the calibration markers are table furniture, never cards
                z = self.geometry.zone_at(x, y)
                zone = z.name if z is not None else None
                tx, ty = self.geometry.table_point(x, y)
                ex, ey = self.geometry.table_point(x + d.rect.half_w, y)
                x, y, size = tx, ty, math.hypot(ex - tx, ey - ty)
            out.append(Sighting(d.card, d.confidence, x, y, zone, size, d.face_down, bool(getattr(d, "unsure", False))))
        return out

    def process(self, frame: Any) -> list[VisionEvent]:
        return self.tracker.update(self.sightings(frame))
