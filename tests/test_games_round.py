"""The round skeleton (controller/games/_round.py) and phases as enums: every game keeps its phase in one field,
`phase`, holding a member of its own StrEnum at every step of a recorded play; `Round` routes each event of a round
to the game's step, refuses Settle outside its settling phase and names the game for an event it does not take."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from enum import StrEnum

import pytest

from controller.games import get_game
from controller.games._round import Round, open_round
from controller.games.base import (
    BetsOpened, CardDealt, Decision, Effects, Expected, IllegalEvent, NewShoe, OpenBets, Settle, VoidRound,
    event_from_json,
)
from controller.cards import parse_card
from tests.golden_games import FIXTURE

GOLDEN = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_every_game_keeps_its_phase_as_a_member_of_its_own_enum(name: str) -> None:
    game = get_game(name)
    state = game.new_table(game.rules({}))
    fields = {f.name for f in dataclasses.fields(state)}
    assert "phase" in fields
    assert "stage" not in fields or not isinstance(getattr(state, "stage"), str)  # house poker's int decision stage
    enum_type = type(state.phase)
    assert issubclass(enum_type, StrEnum)
    seen = {state.phase}
    for play in GOLDEN[name].values():
        state = game.new_table(game.rules({}))
        for data, _ in play["steps"]:
            state, _ = game.apply(state, event_from_json(data))
            assert type(state.phase) is enum_type, f"{data['kind']} left {state.phase!r}"
            assert not _enums(game.snapshot(state)), "a snapshot carries plain values, as before phases were enums"
            seen.add(state.phase)
    assert len(seen) >= 3


def _enums(node: object) -> list[object]:
    if isinstance(node, dict):
        return [e for v in node.values() for e in _enums(v)]
    if isinstance(node, (list, tuple)):
        return [e for v in node for e in _enums(v)]
    return [node] if isinstance(node, StrEnum) else []


class Phase(StrEnum):
    IDLE = "idle"
    BETTING = "betting"
    SETTLING = "settling"


@dataclass(frozen=True)
class Toy:
    round: int = 0
    phase: Phase = Phase.IDLE


def _expected(state: Toy) -> Expected:
    return Expected(state.phase, f"toy {state.phase}")


def _settle(state: Toy) -> tuple[Toy, Effects]:
    return Toy(state.round), ()


def _void(state: Toy, event: VoidRound) -> tuple[Toy, Effects]:
    return Toy(state.round), ()


TOY: Round[Toy] = Round("toy", _expected, _settle, Phase.SETTLING, void=_void,
                        open_bets=lambda s, _: open_round(s, _expected, Phase.IDLE, Phase.BETTING))


def test_round_routes_each_event_to_the_games_step() -> None:
    state, effects = TOY.apply(Toy(), OpenBets())
    assert (state, effects) == (Toy(1, Phase.BETTING), (BetsOpened(1),))
    assert TOY.apply(state, VoidRound("why")) == (Toy(1), ())
    assert TOY.apply(Toy(1, Phase.SETTLING), Settle()) == (Toy(1), ())


def test_round_refuses_opening_twice_and_settling_outside_settling() -> None:
    with pytest.raises(IllegalEvent, match="^cannot open bets now: toy betting$"):
        TOY.apply(Toy(1, Phase.BETTING), OpenBets())
    with pytest.raises(IllegalEvent, match="^cannot settle now: toy betting$"):
        TOY.apply(Toy(1, Phase.BETTING), Settle())


@pytest.mark.parametrize("event", [NewShoe(1), CardDealt(parse_card("AS")), Decision("spot:1", "hit")])
def test_round_names_the_game_for_an_event_it_does_not_take(event: object) -> None:
    with pytest.raises(IllegalEvent, match=f"^{event.KIND} is not part of toy$"):  # type: ignore[attr-defined]
        TOY.apply(Toy(), event)  # type: ignore[arg-type]


def test_round_names_the_game_from_the_state_where_one_module_plays_several() -> None:
    named: Round[Toy] = Round(lambda s: f"toy {s.round}", _expected, _settle)
    with pytest.raises(IllegalEvent, match="^open_bets is not part of toy 7$"):
        named.apply(Toy(7), OpenBets())


def test_void_step_hands_every_stake_back_only_while_a_round_is_on() -> None:
    from controller.games._round import void_step
    from controller.games.base import RoundVoided, StakeChanged

    step = void_step((Phase.BETTING, Phase.SETTLING), lambda s: Toy(s.round), "nothing to void",
                     stakes=lambda s: [(1, "main", 10), (2, "tie", 5)])
    assert step(Toy(3, Phase.SETTLING), VoidRound("misdeal")) == (Toy(3), (
        StakeChanged(1, "main", 0, -10), StakeChanged(2, "tie", 0, -5), RoundVoided(3, "misdeal", 15)))
    with pytest.raises(IllegalEvent, match="^nothing to void$"):
        step(Toy(3, Phase.IDLE), VoidRound("misdeal"))
