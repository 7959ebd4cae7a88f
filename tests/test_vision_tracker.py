"""The tracker: events only for stable sightings; hands, flicker and dropouts make none; low confidence is flagged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from controller.cards import parse_card
from vision.tracker import CardAppeared, CardMoved, CardRemoved, Sighting, Tracker, event_from_json

AS, KD, TH = parse_card("AS"), parse_card("KD"), parse_card("TH")


def seen(card, x=100.0, y=100.0, zone="spot 1", conf=0.99, down=False):
    return Sighting(card, conf, x, y, zone, 30.0, down)


def run(tracker, frames):
    events = []
    for f in frames:
        events += tracker.update(f)
    return events


def test_a_card_appears_after_n_stable_frames() -> None:
    t = Tracker(stable_frames=4)
    assert run(t, [[seen(AS)]] * 3) == []
    ev = t.update([seen(AS)])
    assert len(ev) == 1 and isinstance(ev[0], CardAppeared)
    assert ev[0].card == AS and ev[0].zone == "spot 1" and ev[0].certain and ev[0].confidence > 0.98
    assert run(t, [[seen(AS)]] * 20) == []


def test_a_flicker_is_not_an_event() -> None:
    t = Tracker(stable_frames=3)
    frames = [[seen(AS)], [seen(KD)], [seen(AS)], [seen(KD)], [], [seen(AS)], [seen(KD)]]
    assert run(t, frames) == []


def test_a_hand_passing_over_makes_no_events() -> None:
    t = Tracker(stable_frames=3, remove_frames=10)
    ev = run(t, [[seen(AS), seen(KD, x=200)]] * 3)
    assert [e.card for e in ev] == [AS, KD]
    # The hand covers AS entirely for 8 frames and KD's index for 4 (KD still seen, unreadable).
    frames = [[seen(None, x=200, conf=0.3)]] * 4 + [[seen(KD, x=200)]] * 4 + [[seen(AS), seen(KD, x=200)]] * 10
    assert run(t, frames) == []


def test_a_card_taken_away_is_removed_once() -> None:
    t = Tracker(stable_frames=2, remove_frames=5)
    run(t, [[seen(AS)]] * 2)
    ev = run(t, [[]] * 4)
    assert ev == []
    ev = run(t, [[]] * 10)
    assert ev == [CardRemoved(AS, "spot 1")]


def test_low_confidence_is_reported_as_such() -> None:
    t = Tracker(stable_frames=3, min_confidence=0.9)
    ev = run(t, [[seen(TH, conf=0.6)]] * 3)
    assert len(ev) == 1 and ev[0].card == TH and not ev[0].certain and abs(ev[0].confidence - 0.6) < 1e-9


def test_a_card_slid_to_another_zone_moves() -> None:
    t = Tracker(stable_frames=2)
    run(t, [[seen(AS)]] * 2)
    frames = [[seen(AS, x=100 + 15 * i, zone="spot 1" if i < 3 else "spot 2")] for i in range(1, 8)]
    ev = run(t, frames)
    assert ev == [CardMoved(AS, "spot 2", ev[0].confidence, True, False, ev[0].x, ev[0].y, from_zone="spot 1")]


def test_a_card_lifted_and_put_down_elsewhere_moves() -> None:
    t = Tracker(stable_frames=2, remove_frames=10)
    run(t, [[seen(AS)]] * 2)
    ev = run(t, [[]] * 3 + [[seen(AS, x=600, zone="dealer")]] * 2)
    assert len(ev) == 1 and isinstance(ev[0], CardMoved)
    assert (ev[0].from_zone, ev[0].zone) == ("spot 1", "dealer")
    assert run(t, [[seen(AS, x=600, zone="dealer")]] * 20) == []


def test_face_down_then_turned_up() -> None:
    t = Tracker(stable_frames=2)
    ev = run(t, [[seen(None, down=True)]] * 2)
    assert ev == [CardAppeared(None, "spot 1", ev[0].confidence, True, True, 100.0, 100.0)]
    ev = run(t, [[seen(KD)]] * 2)
    assert [type(e) for e in ev] == [CardRemoved, CardAppeared]
    assert ev[0].face_down and ev[1].card == KD


def test_events_round_trip_through_json() -> None:
    for e in (CardAppeared(AS, "dealer", 0.97, True), CardMoved(KD, "discard", 0.9, True, from_zone="spot 1"),
              CardRemoved(None, "spot 2", True), CardAppeared(None, None, 0.5, False, True)):
        back = event_from_json(e.to_json())
        assert back == e or (back.to_json() == e.to_json())


CARDS = [parse_card(c) for c in ("AS", "KD", "TH", "2C", "7H")]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_dropouts_and_covered_indices_never_make_events(data: st.DataObject) -> None:
    """Cards that stay put, seen through random dropouts shorter than remove_frames and random unreadable
    frames, produce exactly one CardAppeared each and nothing else."""
    n = data.draw(st.integers(1, len(CARDS)))
    stable = data.draw(st.integers(1, 5))
    remove = data.draw(st.integers(stable + 1, 12))
    t = Tracker(stable_frames=stable, remove_frames=remove)
    events = run(t, [[seen(c, x=100 + 100 * i) for i, c in enumerate(CARDS[:n])]] * stable)
    for _ in range(data.draw(st.integers(0, 40))):
        frame = []
        for i, c in enumerate(CARDS[:n]):
            state = data.draw(st.sampled_from(["seen", "seen", "gone", "covered"]))
            jitter = data.draw(st.floats(-5, 5))
            if state == "seen":
                frame.append(seen(c, x=100 + 100 * i + jitter))
            elif state == "covered":
                frame.append(seen(None, x=100 + 100 * i + jitter, conf=0.2))
        events += t.update(frame)
        # Keep every dropout shorter than remove_frames: after remove-1 misses, show all cards.
        if any(tr.misses >= remove - 1 for tr in t.tracks):
            events += t.update([seen(c, x=100 + 100 * i) for i, c in enumerate(CARDS[:n])])
    assert sorted(str(e.card) for e in events) == sorted(str(c) for c in CARDS[:n])
    assert all(isinstance(e, CardAppeared) for e in events)
