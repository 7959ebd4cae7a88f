"""The table camera as the second witness: what it sees, checked against the cards the shoe dealt.

The shoe reads every card as it is drawn; the camera over the felt sees where the card lands. The
camera's tracker (vision/tracker.py) reports a card only once it lies still (`card_appeared`,
`card_moved`, `card_removed`); the runtime journals each report as a `seen` record and asks
`cross_check` whether it disagrees with the game: a card the shoe did not deal face up, a card in another
zone than the one it was dealt to, a face-down card lying face up. A disagreement is a dealer alert, which
pauses the round until the dealer confirms the shoe's reading, reassigns (the camera is right: the shoe
misread the card, or two cards traded places; `reassignment` says which dealt card the camera's is) or
voids the round. A report the tracker is unsure of is journaled and shown to the dealer, never alerted
on: a camera's doubt must not stop a table.

`layout`, `cross_check`, `reassignment`, `shoe_label`, `zones_for` and `sim_layout` are pure (the runtime checks each
report with `cross_check` as it stages it); `CameraWitness` is the thread that reads the camera;
`ReadingWatcher` hands each report on with the model that read the card (journaled with it) and the card's index
corners, which the runtime keeps, labelled by the shoe (`shoe_label`), to enrol the house's deck from play
(vision/enrol.py); `sim_layout` lays the game's cards on the simulated camera's table the way a dealer does (`--sim`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Iterable, Mapping

__all__ = ["layout", "zone_of", "cross_check", "reassignment", "dealt_face_up", "zones_for", "sim_layout",
           "CameraWitness", "CHECKED_ZONES", "shoe_label", "ReadingWatcher", "Reading"]

log = logging.getLogger("croupier.camera")

# Where a snapshot's cards lie, by the key they sit under; a spot's cards lie in "spot N", named by the
# spot's "spot" field (3) or its hand's "to" ("spot:3", "dealer", "community"). Chemin de fer's punter
# and banker hands lie in baccarat's boxes; big two's played cards in the middle. Games whose cards lie
# elsewhere (faro's and stuss's turns, red dog's and in-between's spread, trente et quarante's rows) leave
# them without a zone: the camera's reports of them are checked against the cards dealt, not the place.
_ZONE_OF_KEY = {"dealer": "dealer", "player": "player", "banker": "banker", "community": "community",
                "board": "community", "burned": "discard", "burns": "discard", "discard": "discard",
                "discards": "discard", "punter_hand": "player", "banker_hand": "banker", "played": "community",
                "trick": "community", "to_beat": "community"}
_ZONE_OF_TO = {"dealer": "dealer", "community": "community", "player": "player", "banker": "banker"}
# Zones where a card the camera sees is checked: the discard holds collected and burned cards, and a card
# outside every zone (in the dealer's hand, on its way) is no claim about the layout.
CHECKED_ZONES = frozenset(("dealer", "player", "banker", "community"))


def layout(snapshot: Mapping[str, Any] | None) -> list[tuple[str | None, str, bool]]:
    """Every card of a game snapshot as (zone, card, face up); zone None where the snapshot does not say.
    Face-down cards whose identity the snapshot hides (None) are left out."""
    out: list[tuple[str | None, str, bool]] = []

    def walk(node: Any, zone: str | None) -> None:
        if isinstance(node, dict):
            if "card" in node and isinstance(node.get("up"), bool):
                if node["card"] is not None:
                    out.append((zone, str(node["card"]), node["up"]))
                return
            if zone is None and type(node.get("spot")) is int:
                zone = f"spot {node['spot']}"
            elif zone is None and isinstance(node.get("to"), str):
                zone = zone_of(node["to"])
            for key, value in node.items():
                if key not in ("audit", "bets"):
                    walk(value, zone if zone is not None else _ZONE_OF_KEY.get(key))
        elif isinstance(node, list):
            for value in node:
                walk(value, zone)

    if snapshot is not None:
        walk(dict(snapshot), None)
    return out


def zone_of(to: str) -> str | None:
    """The zone a game's card target lies in ("spot:3" -> "spot 3", "player" -> "player"), or None."""
    return f"spot {to[5:]}" if to.startswith("spot:") else _ZONE_OF_TO.get(to)


def _checked(zone: str | None) -> bool:
    return zone in CHECKED_ZONES or (zone is not None and zone.startswith("spot "))


def cross_check(game: Mapping[str, Any], last_round: Mapping[str, Any] | None, seen: Mapping[str, Any]) -> str | None:
    """Why the camera's report `seen` (a tracker event as JSON) disagrees with the cards the shoe dealt (the
    text of a dealer alert), or None. `last_round`: the settled round's snapshot, whose cards may still lie
    on the felt until the dealer collects them."""
    if seen.get("kind") not in ("card_appeared", "card_moved") or not seen.get("certain"):
        return None
    card, zone = seen.get("card"), seen.get("zone")
    if card is None or not _checked(zone):
        return None
    where = [(z, up) for z, c, up in layout(game) + layout(last_round) if c == card]
    if any(z == zone and up for z, up in where):
        return None
    if any(z == zone for z, _ in where):
        return f"camera sees {card} face up on {zone}: it was dealt face down"
    # Only face-up cards are named as dealt elsewhere: the text goes to the dealer's screen, and "dealt to the
    # dealer" about a card lying face down there would tell the hole card.
    up_where = [z for z, up in where if up]
    if not up_where:
        return f"camera sees {card} on {zone}: the shoe dealt no such card face up"
    dealt_to = sorted({z for z in up_where if z is not None})
    if not dealt_to:
        return None  # the game does not say where its cards lie
    return f"camera sees {card} on {zone}: the shoe dealt it to {', '.join(dealt_to)}"


def reassignment(game: Mapping[str, Any], camera: Iterable[tuple[str | None, str | None, bool, bool]], card: str,
                 zone: str) -> tuple[str, str] | None:
    """What `reassign` corrects for a camera alert about `card` seen on `zone`: (the dealt card, `card`), where
    the dealt card is the one card the shoe dealt face up to `zone` that the camera does not see there
    (`camera`: what it sees, as TableState.camera); None when the camera sees every one of them there (the
    camera's card is one more). Raises ValueError when more than one could be it."""
    seen_there = {c for c, z, sure, _ in camera if z == zone and sure}
    unseen = [c for c in dealt_face_up(game, zone, card) if c not in seen_there]
    if len(unseen) > 1:
        raise ValueError(f"which card on {zone} is {card} cannot be told (it could be {' or '.join(unseen)}): "
                         "name it with card=")
    return (unseen[0], card) if unseen else None


def shoe_label(game: Mapping[str, Any], last_round: Mapping[str, Any] | None, seen: Mapping[str, Any],
               camera: Iterable[tuple[str | None, str | None, bool, bool]]) -> str | None:
    """The card the shoe dealt that the camera's report `seen` shows, or None where that cannot be told: a sure
    reading's own card where the shoe dealt it face up on that zone; an unsure reading's, the one card dealt face up
    there that the camera (`camera`: what it sees, as TableState.camera) does not surely see there."""
    if seen.get("kind") not in ("card_appeared", "card_moved") or seen.get("face_down"):
        return None
    if not _checked(seen.get("zone")):
        return None
    zone = seen.get("zone")
    dealt = {c for z, c, up in layout(game) + layout(last_round) if z == zone and up}
    if seen.get("certain"):
        return seen.get("card") if seen.get("card") in dealt else None
    unseen = dealt - {c for c, z, sure, _ in camera if z == zone and sure}
    return next(iter(unseen)) if len(unseen) == 1 else None


def dealt_face_up(game: Mapping[str, Any], zone: str, other_than: str | None = None) -> list[str]:
    """The cards dealt face up to `zone` in the game (a snapshot), `other_than` left out: those a camera alert
    about `other_than` seen there may be reassigned from. Face-up only: the camera cannot see a face-down
    card's face, and naming one would tell it."""
    return sorted({c for z, c, up in layout(game) if z == zone and up and c != other_than})


def zones_for(game: Mapping[str, Any], spots: int, table_mm: tuple[float, float] = (1200.0, 675.0)) -> tuple[Any, ...]:
    """The simulated table's zones for a game (its snapshot before any round): spots along the bottom,
    the dealer and the discard at the top, baccarat's player and banker boxes or the community cards between."""
    from vision.geometry import default_zones

    two_hands = {"player", "banker"} <= set(game) or {"punter_hand", "banker_hand"} <= set(game)
    boxes = ("player", "banker") if two_hands else ("community",)
    return default_zones(table_mm, spots=max(1, spots), boxes=boxes)


def sim_layout(game: Mapping[str, Any], zones: Iterable[Any], misplaced: Mapping[str, str] | None = None) -> list[Any]:
    """The cards of `game` (a snapshot) as the simulated camera's `TableCard`s, laid out as a dealer does:
    each zone's cards in a cascade from its left edge, each card's corner index left showing.
    `misplaced`: card -> zone, cards the dealer put somewhere else (a misdeal, for tests and drills)."""
    from controller.cards import parse_card
    from vision.render import CARD_MM, TableCard

    rects = {z.name: z.rect for z in zones}
    by_zone: dict[str, list[tuple[str, bool]]] = {}
    for zone, card, up in layout(game):
        zone = (misplaced or {}).get(card, zone)
        if zone is not None and zone in rects and zone != "discard":
            by_zone.setdefault(zone, []).append((card, up))
    out = []
    w = CARD_MM[0]
    for zone, cards in by_zone.items():
        x0, y0, x1, y1 = rects[zone]
        room = (x1 - x0) - w - 8
        step = min(w * 0.55, room / (len(cards) - 1)) if len(cards) > 1 else 0.0
        for i, (card, up) in enumerate(cards):
            out.append(TableCard(parse_card(card), x0 + 4 + w / 2 + i * step, (y0 + y1) / 2 + i * 3.0, 0.0, up))
    return out


class Reading:
    """A tracker report as the runtime gets it: the event, the model that read its card (`Recogniser.model_id`, or
    the enrolled model's) and the card's two index corners in the frame that made it certain (None when that frame
    did not name it)."""

    def __init__(self, event: Any, model: str, crops: Any = None) -> None:
        self.event = event
        self.model = model
        self.crops = crops

    def to_json(self) -> dict[str, Any]:
        return self.event.to_json()


class ReadingWatcher:
    """A `vision.tracker.TableWatcher` whose events come as `Reading`s: it stands in for the watcher's recogniser to
    keep the last frame and what was read in it."""

    def __init__(self, watcher: Any) -> None:
        self.watcher = watcher
        self.recogniser = watcher.recogniser
        watcher.recogniser = self
        self._frame: Any = None
        self._read: list[Any] = []

    def identify(self, frame: Any) -> list[Any]:
        self._frame, self._read = frame, self.recogniser.identify(frame)
        return self._read

    def process(self, frame: Any) -> list[Reading]:
        from vision.recognise import corner_crops

        out = []
        for ev in self.watcher.process(frame):
            card = getattr(ev, "card", None)
            found = [d for d in self._read if card is not None and d.card == card] if ev.KIND != "card_removed" else []
            model = (found[0].model or self.recogniser.base_id) if found else self.recogniser.model_id
            out.append(Reading(ev, model, corner_crops(self._frame, [found[0].rect]) if found else None))
        return out


class CameraWitness:
    """Reads frames in a thread of its own, at most `fps` a second, and hands each event the watcher
    (recogniser, zones, tracker) makes certain to `emit`, from that thread. A camera that fails is tried
    again each second; `on_status(reason)` hears when it stops working (the reason) and when it works again
    (None), once each time, so the table can tell the dealer without a flood."""

    def __init__(self, camera: Any, watcher: Any, emit: Callable[[Any], object], fps: float,
                 on_frame: Callable[[], None] | None = None,
                 on_status: Callable[[str | None], object] | None = None) -> None:
        self.camera = camera
        self.watcher = watcher
        self.emit = emit
        self.period = 1.0 / fps
        self.on_frame = on_frame
        self.on_status = on_status
        self.frames = 0
        self.errors = 0
        self.failing: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
        try:
            self.camera.close()
        except Exception:  # noqa: BLE001 - closing a failed camera must not stop the table's shutdown
            log.exception("camera close failed")

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            try:
                if self.on_frame is not None:
                    self.on_frame()
                frame = self.camera.read()
                events = self.watcher.process(frame)
            except Exception as exc:  # noqa: BLE001 - a camera or a frame that fails must not end the witness
                self.errors += 1
                if self.failing is None:
                    self.failing = str(exc) or type(exc).__name__
                    log.warning("camera not working: %s", self.failing)
                    if self.on_status is not None:
                        self.on_status(self.failing)
                self._stop.wait(1.0)
                continue
            if self.failing is not None:
                log.info("camera working again")
                self.failing = None
                if self.on_status is not None:
                    self.on_status(None)
            self.frames += 1
            for ev in events:
                self.emit(ev)
            next_at += self.period
            wait = next_at - time.monotonic()
            if wait > 0:
                self._stop.wait(wait)
            else:
                next_at = time.monotonic()  # behind: read the next frame now, do not catch up in a burst
