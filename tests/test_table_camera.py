"""The camera as the table's second witness: where the game's cards lie, the cross-check against the shoe, the
camera's records in the fold, and a simulated table whose camera catches a misdeal."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from controller.autoplay import Autoplay
from controller.bus import Role
from controller.camera import cross_check, layout, sim_layout, zones_for
from controller.config import CameraConfig, ConfigError, config_from_mapping
from controller.journal import Journal
from controller.rng import SeededRng
from controller.table import Table
from controller.tablestate import new_state, picture, replay, step
from controller.views import leaks, screen_views
from tests.table_helpers import misplaceable, recall_text, step_until, table_config

BLACKJACK = {"game": "blackjack", "round": 1, "phase": "dealing",
             "bets": [{"spot": 2, "box": "main", "amount": 25}],
             "spots": [{"spot": 2, "hands": [{"box": "main", "cards": [{"card": "3D", "up": True},
                                                                      {"card": "QD", "up": True}]}]},
                       {"spot": 6, "hands": [{"box": "main", "cards": [{"card": "2D", "up": True}]}]}],
             "dealer": {"cards": [{"card": "AH", "up": True}, {"card": "9S", "up": False}]},
             "audit": {"dealer_total": "soft 20"}}
BACCARAT = {"game": "baccarat", "player": {"cards": [{"card": "TD", "up": True}]},
            "banker": {"cards": [{"card": "5C", "up": True}]},
            "burned": [{"card": "6D", "up": True}, {"card": "8D", "up": False}]}


def seen(card: str | None, zone: str | None, kind: str = "card_appeared", certain: bool = True) -> dict[str, Any]:
    return {"kind": kind, "card": card, "zone": zone, "confidence": 0.97 if certain else 0.6, "certain": certain,
            "face_down": card is None, "x": 0.0, "y": 0.0}


def test_layout_names_each_cards_zone() -> None:
    assert layout(BLACKJACK) == [("spot 2", "3D", True), ("spot 2", "QD", True), ("spot 6", "2D", True),
                                 ("dealer", "AH", True), ("dealer", "9S", False)]
    assert layout(BACCARAT) == [("player", "TD", True), ("banker", "5C", True), ("discard", "6D", True),
                                ("discard", "8D", False)]
    assert layout(None) == [] and layout({"dealer": {"cards": [{"card": None, "up": False}]}}) == []
    # hands named by whom they go to (three card poker, let it ride's community cards); chemin de fer's boxes
    assert layout({"hands": [{"to": "spot:3", "cards": [{"card": "2C", "up": False}]},
                             {"to": "community", "cards": [{"card": "9D", "up": True}]}],
                   "punter_hand": {"cards": [{"card": "KS", "up": True}]},
                   "red_dog": {"cards": [{"card": "4H", "up": True}]}}) == [
        ("spot 3", "2C", False), ("community", "9D", True), ("player", "KS", True), (None, "4H", True)]


@pytest.mark.parametrize("report, alert", [
    (seen("QD", "spot 2"), None),                                        # where the shoe dealt it
    (seen("QD", "spot 6"), "camera sees QD on spot 6: the shoe dealt it to spot 2"),
    (seen("KC", "spot 2"), "camera sees KC on spot 2: the shoe dealt no such card face up"),
    # The hole card's twin from another deck: the text must not tell where the hole card lies.
    (seen("9S", "spot 2"), "camera sees 9S on spot 2: the shoe dealt no such card face up"),
    (seen("9S", "dealer"), "camera sees 9S face up on dealer: it was dealt face down"),  # the hole card exposed
    (seen("KC", "spot 2", certain=False), None),                         # an unsure reading never alerts
    (seen("KC", "discard"), None),                                       # collected cards are no claim
    (seen("KC", None), None),                                            # nor a card outside every zone
    (seen(None, "dealer"), None),                                        # a face-down card names nothing
    (seen("QD", "spot 6", kind="card_removed"), None),
    ({**seen("QD", "spot 6", kind="card_moved"), "from_zone": "spot 2"},
     "camera sees QD on spot 6: the shoe dealt it to spot 2"),
])
def test_cross_check(report: dict[str, Any], alert: str | None) -> None:
    assert cross_check(BLACKJACK, None, report) == alert


def test_cross_check_knows_the_settled_rounds_cards_until_they_are_collected() -> None:
    assert cross_check({"player": {"cards": []}, "banker": {"cards": []}}, BACCARAT, seen("TD", "player")) is None
    assert cross_check(BACCARAT, None, seen("TD", "banker")) == "camera sees TD on banker: the shoe dealt it to player"


def test_sim_layout_cascades_each_zone_and_can_misplace_a_card() -> None:
    zones = zones_for(BLACKJACK, 7)
    cards = sim_layout(BLACKJACK, zones)
    rect = {z.name: z.rect for z in zones}
    placed = [(str(c.card), c.face_up, next(n for n, r in rect.items() if r[0] <= c.x <= r[2] and r[1] <= c.y <= r[3]))
              for c in cards]
    assert placed == [("3D", True, "spot 2"), ("QD", True, "spot 2"), ("2D", True, "spot 6"), ("AH", True, "dealer"),
                      ("9S", False, "dealer")]
    assert cards[1].x > cards[0].x and cards[1].y > cards[0].y  # a cascade: the index of the card under shows
    moved = sim_layout(BLACKJACK, zones, {"QD": "spot 6"})
    assert [c.x for c in moved if str(c.card) == "QD"][0] > rect["spot 6"][0]
    assert [z.name for z in zones_for(BACCARAT, 12)][:4] == ["dealer", "discard", "player", "banker"]
    assert [z.name for z in zones_for({"punter_hand": {}, "banker_hand": {}}, 12)][2:4] == ["player", "banker"]
    assert [z.name for z in zones_for(BLACKJACK, 7)][2] == "community"


def test_camera_records_fold_into_what_the_camera_sees(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "blackjack")
    state = new_state(cfg.table_id, cfg.game, cfg.rules)
    records = [{"kind": "seen", "event": seen("3D", "spot 2")},
               {"kind": "seen", "event": seen(None, "dealer")},
               {"kind": "seen", "event": {**seen("3D", "spot 3", kind="card_moved"), "from_zone": "spot 2"}},
               {"kind": "seen", "event": seen("KC", "spot 1", certain=False)},
               {"kind": "seen", "event": {"kind": "card_removed", "card": None, "zone": "dealer", "face_down": True}}]
    after = replay(state, enumerate(records, 1))
    assert after.camera == (("3D", "spot 3", True, False), ("KC", "spot 1", False, False))
    dealer = picture(after)["dealer_only"]["camera"]
    assert dealer == [{"card": "3D", "zone": "spot 3", "certain": True, "face_down": False},
                      {"card": "KC", "zone": "spot 1", "certain": False, "face_down": False}]
    views = screen_views(picture(after))
    assert "dealer_only" not in views["public"] and not leaks(views["public"])
    # A restarted witness forgets what it saw: its tracker reports every card again.
    assert step(after, {"kind": "camera", "what": "started", "source": "sim"})[0].camera == ()
    down = step(after, {"kind": "camera", "what": "down", "reason": "cannot open camera 0"})[0]
    assert down.camera_down == "cannot open camera 0" and down.camera == after.camera
    assert picture(down)["dealer_only"]["camera_down"] == "cannot open camera 0"
    assert step(down, {"kind": "camera", "what": "up"})[0].camera_down is None
    assert step(down, {"kind": "camera", "what": "started", "source": "sim"})[0].camera_down is None
    with pytest.raises(ValueError, match="unknown camera event"):
        step(state, {"kind": "seen", "event": {"kind": "card_flipped", "card": "3D", "zone": "spot 2"}})


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "three-card-poker", "texas-holdem", "chemin-de-fer",
                                  "let-it-ride", "pai-gow", "caribbean-stud", "pontoon", "big-two"])
@pytest.mark.slow
def test_every_dealt_card_passes_where_it_was_dealt_and_fails_elsewhere(tmp_path: Path, game: str) -> None:
    """Over autoplayed rounds: a camera that sees each face-up card where the game put it raises nothing; the same
    card seen in another zone that holds no copy of it raises an alert."""
    cfg = table_config(tmp_path, game)
    checked = {"right": 0, "wrong": 0}

    def on_publish(table: Table) -> None:
        state = table.state
        snap = table.game.snapshot(state.game)
        cards = layout(snap)
        zones = {z for z, _, _ in cards if z not in (None, "discard")}
        for zone, card, up in cards:
            if not up or zone in (None, "discard"):
                continue
            assert cross_check(snap, state.last_round, seen(card, zone)) is None, (card, zone, snap)
            checked["right"] += 1
            for other in zones - {zone}:
                if (other, card, True) not in cards:
                    assert cross_check(snap, None, seen(card, other)) is not None
                    checked["wrong"] += 1

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        table.on_publish = lambda _: on_publish(table)
        await Autoplay(table, SeededRng(4), rounds=15).run()
        await table.stop()

    asyncio.run(asyncio.wait_for(main(), 120))
    assert checked["right"] > 30 and checked["wrong"] > 10, checked


def test_camera_config_is_validated(tmp_path: Path) -> None:
    base = {"table": {"id": "t1", "game": "baccarat"}}
    (tmp_path / "t.toml").write_text("[table]\n")  # a file with no [calibration]
    assert config_from_mapping(base, tmp_path / "t.toml").camera == CameraConfig()
    from vision.geometry import Calibration, save_calibration

    save_calibration(tmp_path / "cam.toml", Calibration.from_corners([(0, 0), (1280, 0), (1280, 720), (0, 720)],
                                                                     (1200.0, 675.0), (1280, 720)))
    cfg = config_from_mapping({**base, "camera": {"source": 0, "config": "cam.toml", "fps": 2}}, tmp_path / "t.toml")
    assert cfg.camera == CameraConfig("0", tmp_path / "cam.toml", 2.0)
    assert cfg.simulated().camera.source == "sim"
    video = "/dev/video0"
    for camera, message in [({"source": video}, r"\[camera\].config: a real camera needs its calibration"),
                            ({"source": "sim", "fps": 0}, r"\[camera\].fps"),
                            ({"source": "sim", "stable_frames": 0}, r"\[camera\].stable_frames"),
                            ({"source": "sim", "min_confidence": 2}, r"\[camera\].min_confidence"),
                            ({"source": "sim", "zoom": 2}, "unknown key"), ({"source": ""}, r"\[camera\].source"),
                            ({"source": "ftp://cam/1", "config": "c.toml"}, r"\[camera\].source: .*unsupported scheme"),
                            ({"source": video, "config": "none.toml"}, r"\[camera\].config: .*none.toml: No such"),
                            ({"source": video, "config": "t.toml"}, r"\[camera\].config: .*no \[calibration\]")]:
        with pytest.raises(ConfigError, match=message):
            config_from_mapping({**base, "camera": camera}, tmp_path / "t.toml")


@pytest.mark.slow
def test_simulated_camera_catches_a_card_laid_in_the_wrong_box(tmp_path: Path) -> None:
    """A baccarat coup on a simulated table with its camera: the dealer lays one of the banker's cards in the
    player's box; the camera sees it there, the round pauses on a camera alert naming the card, the dealer puts
    it right and confirms, and the coup is settled. Everything the camera saw is in the journal."""
    cfg = dataclasses.replace(table_config(tmp_path, "baccarat", seed=11),
                              camera=CameraConfig("sim", fps=10.0, stable_frames=2))

    async def main() -> tuple[str, str]:
        table = Table(cfg)
        await table.start()
        # the reader knows the shoe's decks (a card seen more often than the shoe holds it is flagged) and
        # that baccarat deals no joker
        recogniser = table.camera.watcher.recogniser
        assert (recogniser.decks, recogniser.jokers) == (cfg.rules.decks, False)
        await step_until(table, Autoplay(table, SeededRng(2)), lambda: bool(misplaceable(table)))
        card = misplaceable(table)[0]
        table.sim_misplaced[card] = "player"
        assert await table.wait_for(lambda s: any(a.kind == "camera" and a.card == card for a in s.alerts), 60)
        alert = next(a for a in table.state.alerts if a.kind == "camera")
        table.sim_misplaced.clear()
        done = await table.command(Role("dealer"), "resolve", {"alert": alert.id, "action": "confirm",
                                                               "reason": "card moved to the banker box"})
        assert done["ok"]
        rounds = table.state.meters.rounds
        await Autoplay(table, SeededRng(3), rounds=rounds + 1).run()
        assert table.state.meters.rounds == rounds + 1
        await table.stop()
        return card, alert.text

    card, text = asyncio.run(asyncio.wait_for(main(), 180))
    assert text == f"camera sees {card} on player: the shoe dealt it to banker"
    with Journal(cfg.journal, cfg.table_id) as j:
        records = [e.record for e in j.entries()]
    kinds = [r["kind"] for r in records]
    assert kinds.count("camera") == 1 and "seen" in kinds and "resolve" in kinds
    seen_there = [r["event"] for r in records if r["kind"] == "seen" and r["event"]["card"] == card
                  and r["event"]["zone"] == "player"]
    assert seen_there and seen_there[0]["kind"] in ("card_appeared", "card_moved") and seen_there[0]["certain"]
    replayed = replay(new_state(cfg.table_id, cfg.game, cfg.rules), enumerate(records, 1))
    assert replayed.meters.rounds >= 1 and not replayed.alerts
    # The recall of that round shows what the camera saw, its alert and how the dealer resolved it.
    out = recall_text(cfg)
    assert f"    camera saw player: {card}\n" in out
    assert f"    alert camera: {text}\n" in out
    assert f"    alert camera: {text} -> confirm by dealer (card moved to the banker box)\n" in out


@pytest.mark.slow
def test_a_restarted_table_forgets_what_its_camera_saw_and_sees_it_again(tmp_path: Path) -> None:
    """The camera's view is journaled like everything else, so a restart replays it; the restarted witness
    starts afresh (a `camera` record) and its tracker reports the cards still lying there again."""
    cfg = dataclasses.replace(table_config(tmp_path, "baccarat", seed=11),
                              camera=CameraConfig("sim", fps=10.0, stable_frames=2))

    async def deal_and_look() -> tuple[Any, ...]:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(2)),
                         lambda: any(z == "player" for z, _, _ in layout(table.game.snapshot(table.state.game))))
        assert await table.wait_for(lambda s: any(z == "player" and sure for _, z, sure, _ in s.camera), 60)
        await table.stop()
        return table.state.camera

    async def restart() -> Any:
        table = Table(cfg)
        await table.start()
        assert await table.wait_for(lambda s: any(z == "player" and sure for _, z, sure, _ in s.camera), 60)
        await table.stop()
        return table.state

    before = asyncio.run(asyncio.wait_for(deal_and_look(), 120))
    after = asyncio.run(asyncio.wait_for(restart(), 120))
    with Journal(cfg.journal, cfg.table_id) as j:
        records = [(e.seq, e.record) for e in j.entries()]
    starts = [i for i, (_, r) in enumerate(records) if r["kind"] == "camera"]
    assert len(starts) == 2
    fresh = new_state(cfg.table_id, cfg.game, cfg.rules)
    assert replay(fresh, records[:starts[1]]).camera == before
    assert replay(fresh, records[:starts[1] + 1]).camera == ()
    assert replay(fresh, records).camera == after.camera


def test_a_failing_camera_is_reported_once_when_it_stops_and_once_when_it_comes_back() -> None:
    """The witness tries a failing camera again each second and tells its status only when it changes."""
    import threading

    from controller.camera import CameraWitness
    from drivers.camera.capture import CameraError

    class Flaky:
        def __init__(self) -> None:
            self.reads = 0

        def read(self) -> str:
            self.reads += 1
            if self.reads in (2, 3, 4):
                raise CameraError("cannot open camera 0")
            return "frame"

        def close(self) -> None:
            pass

    class Watcher:
        def process(self, frame: str) -> list[str]:
            return [frame]

    statuses: list[str | None] = []
    frames: list[str] = []
    back = threading.Event()

    def on_status(reason: str | None) -> None:
        statuses.append(reason)
        if reason is None:
            back.set()

    witness = CameraWitness(Flaky(), Watcher(), frames.append, fps=30.0, on_status=on_status)
    witness._stop.wait = lambda timeout=None: witness._stop.is_set()  # no second's pause between retries here
    witness.start()
    assert back.wait(10)
    witness.stop()
    assert statuses == ["cannot open camera 0", None]
    assert witness.errors == 3 and frames[:2] == ["frame", "frame"]
