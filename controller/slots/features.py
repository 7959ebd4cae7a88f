"""Feature plugins: the rules a title adds to its paytable, each with its own persistent meters.

A title file lists its features (`[[features]] kind = "..."`); each kind here reads its parameters,
declares its meters and their starting values, and amends a spin through `SpinContext` (so every
credit it pays is an `Award` and every meter it moves is a `MeterChange`). Features read the centre
payline (every title with a feature is a one-line game) through `line_fact`, a small integer that sums
up what the feature sees on a payline triple; the batch simulator and the PAR sheet read the same
facts, so all three agree on what a payline shows.

Kinds: piggy_bank, safe, free_winning_spins, dragon_respins, bullfight, snowman, loss_meter, light_speed.
Wild multipliers, morphing wilds and selectable paytables are part of every title (title.py/engine.py).
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping

from controller.slots.counters import FREE_SPINS, FreeSpins, MeterChange
from controller.slots.title import Pattern, SlotError, TitleError

if TYPE_CHECKING:
    from controller.slots.engine import SpinContext, State

__all__ = ["Feature", "Params", "FEATURES", "build_feature"]

# How a feature asks whether a payline triple shows a pattern (the title's matcher; None: it does not).
Match = Callable[[Pattern, tuple[str, str, str]], tuple[int, ...] | None]


class Params:
    """A feature's TOML table read strictly: every key is used once, unknown keys are errors naming the key."""

    def __init__(self, data: Mapping[str, Any], where: str, symbol: Callable[[str, str], str],
                 pattern: Callable[[str, str], Pattern], max_bet: int) -> None:
        self.data = dict(data)
        self.where = where
        self.max_bet = max_bet  # coins of the title's max bet (a table by bet has this many entries)
        self._symbol = symbol
        self._pattern = pattern
        self.used = {"kind"}

    def _get(self, key: str, default: Any) -> Any:
        self.used.add(key)
        if key in self.data:
            return self.data[key]
        if default is None:
            raise TitleError(f"{self.where}: missing key {key!r}")
        return default

    def int(self, key: str, default: int | None = None, low: int = 0) -> int:
        value = self._get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise TitleError(f"{self.where}.{key}: expected a whole number >= {low}, got {value!r}")
        return value

    # `int` and `bool` below are this class's readers: annotations after them name the builtins explicitly.
    def ints(self, key: str, length: builtins.int | None = None,
             default: list[builtins.int] | None = None) -> tuple[builtins.int, ...]:
        value = self._get(key, default)
        if (not isinstance(value, list) or not value or (length is not None and len(value) != length)
                or any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in value)):
            size = f"{length} " if length else ""
            raise TitleError(f"{self.where}.{key}: expected a list of {size}whole numbers, got {value!r}")
        return tuple(value)

    def bool(self, key: str, default: bool) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise TitleError(f"{self.where}.{key}: expected true or false, got {value!r}")
        return value

    def symbol(self, key: str, default: str | None = None) -> str:
        value = self._get(key, default)
        return self._symbol(value, f"{self.where}.{key}")

    def symbols(self, key: str, length: builtins.int) -> tuple[str, ...]:
        value = self._get(key, None)
        if not isinstance(value, list) or len(value) != length:
            raise TitleError(f"{self.where}.{key}: expected a list of {length} symbol codes, got {value!r}")
        return tuple(self._symbol(v, f"{self.where}.{key}") for v in value)

    def pattern(self, key: str, default: str | None = None) -> Pattern:
        return self._pattern(self._get(key, default), f"{self.where}.{key}")

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise TitleError(f"{self.where}: unknown key(s) {', '.join(unknown)}")


class Feature:
    """Base of every feature kind. `meters` are the names and starting values of the meters it keeps."""

    kind: ClassVar[str] = ""
    one_line: ClassVar[bool] = True   # reads the centre payline, so the title must have one line

    def __init__(self, params: Params, match: Match) -> None:
        self.match = match
        self.meters: dict[str, int] = {}
        self.max_bet_only = params.bool("max_bet_only", False)
        self._facts: dict[tuple[str, str, str], int] = {}

    def line_fact(self, triple: tuple[str, str, str]) -> int:
        """What this feature sees on a payline showing `triple`, as a small integer (cached)."""
        fact = self._facts.get(triple)
        if fact is None:
            fact = self._facts[triple] = self.fact(triple)
        return fact

    def fact(self, triple: tuple[str, str, str]) -> int:
        return 0

    def apply(self, ctx: SpinContext) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return self.kind.replace("_", " ")

    def _counts(self, triple: tuple[str, str, str], symbol: str) -> int:
        return sum(1 for s in triple if s == symbol)

    def _active(self, ctx: SpinContext) -> bool:
        return ctx.qualifies or not self.max_bet_only


class PiggyBank(Feature):
    """Bank on It!: three blanks on the payline put the coins just bet into the piggy bank (which starts at
    `start`); the `trigger` combination (three piggies, wilds standing in) wins the bank, which starts over."""

    kind = "piggy_bank"
    FILL, WIN = 1, 2

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.start = params.int("start", low=1)
        self.trigger = params.pattern("trigger")
        self.fill = params.pattern("fill")
        self.meters = {"piggy_bank": self.start}

    def fact(self, triple: tuple[str, str, str]) -> int:
        if self.match(self.trigger, triple) is not None:
            return self.WIN
        return self.FILL if self.match(self.fill, triple) is not None else 0

    def apply(self, ctx: SpinContext) -> None:
        fact = self.line_fact(ctx.centre)
        if not fact or not self._active(ctx):
            return
        bank = ctx.meters["piggy_bank"]
        if fact == self.FILL:
            ctx.set_meter("piggy_bank", bank + ctx.bet.total, f"{self.fill.text}: the {ctx.bet.total} coin(s) bet go "
                                                              "into the piggy bank")
        else:
            ctx.award(self.kind, f"{self.trigger.text}: the piggy bank", bank)
            ctx.set_meter("piggy_bank", self.start, "piggy bank won: it starts again")

    def describe(self) -> str:
        return f"piggy bank (starts at {self.start})"


class Safe(Feature):
    """The Big Heist: each safe dial on the payline is one click in the safe counter; `clicks` clicks crack
    the safe for the secret safe bonus, three dials on one spin crack it for `three_dials` times that bonus.
    The secret bonus depends on the coins bet (`bonus[coins - 1]`), larger per coin at max coins."""

    kind = "safe"

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.symbol = params.symbol("symbol")
        self.clicks = params.int("clicks", low=1)
        self.bonus = params.ints("bonus", length=params.max_bet)
        self.three_dials = params.int("three_dials", low=1)
        self.meters = {"safe_clicks": 0}

    def fact(self, triple: tuple[str, str, str]) -> int:
        return self._counts(triple, self.symbol)

    def apply(self, ctx: SpinContext) -> None:
        dials = self.line_fact(ctx.centre)
        if not dials or not self._active(ctx):
            return
        bonus = self.bonus[ctx.bet.total - 1]
        clicks = ctx.meters["safe_clicks"]
        if dials == 3:
            ctx.award(self.kind, f"three safe dials: {self.three_dials} times the secret safe bonus",
                      self.three_dials * bonus)
            ctx.set_meter("safe_clicks", 0, "safe cracked by three dials: the counter starts again")
        elif clicks + dials >= self.clicks:
            ctx.award(self.kind, f"{self.clicks} clicks: the secret safe bonus", bonus)
            ctx.set_meter("safe_clicks", 0, f"safe cracked at {self.clicks} clicks: the counter starts again")
        else:
            ctx.set_meter("safe_clicks", clicks + dials, f"{dials} safe dial(s): {dials} click(s)")

    def describe(self) -> str:
        return f"safe ({self.clicks} clicks or three dials x{self.three_dials})"


class FreeWinningSpins(Feature):
    """Bonkers!: two of `symbol` on the payline win `for_two` guaranteed free winning spins, three win
    `for_three`; none can be won during them, and the `end` combination during them ends them."""

    kind = "free_winning_spins"

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.symbol = params.symbol("symbol")
        self.for_two = params.int("for_two", low=1)
        self.for_three = params.int("for_three", low=1)
        self.end = params.pattern("end")

    def fact(self, triple: tuple[str, str, str]) -> int:
        # bits 0-1: symbols on the line; bit 2: the ending combination
        return self._counts(triple, self.symbol) | (4 if self.match(self.end, triple) is not None else 0)

    def apply(self, ctx: SpinContext) -> None:
        fact = self.line_fact(ctx.centre)
        if not ctx.paid:
            if fact & 4:
                ctx.end_free_spins(f"{self.end.text} ends the free spins")
            return
        count = fact & 3
        if count >= 2 and self._active(ctx):
            spins = self.for_three if count == 3 else self.for_two
            ctx.add_free_spins(spins, self.kind, True, f"{count} {self.symbol}: {spins} free winning spins")

    def describe(self) -> str:
        return f"free winning spins ({self.for_two} or {self.for_three}, ended by {self.end.text})"


class DragonRespins(Feature):
    """Crazy Dragon: the dragon's parts in order from the left of the payline (head; head and body; the whole
    dragon) win `respins` free re-spins; re-spins won during re-spins add up, and `jackpot_at` re-spins in one
    run win the progressive. The run's total starts again after the jackpot and when the re-spins end."""

    kind = "dragon_respins"

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.parts = params.symbols("parts", 3)
        self.respins = params.ints("respins", 3)
        self.jackpot_at = params.int("jackpot_at", low=1)
        self.meters = {"respins_total": 0}

    def fact(self, triple: tuple[str, str, str]) -> int:
        parts = 0
        while parts < 3 and triple[parts] == self.parts[parts]:
            parts += 1
        return parts

    def apply(self, ctx: SpinContext) -> None:
        parts = self.line_fact(ctx.centre)
        if parts and self._active(ctx):
            spins = self.respins[parts - 1]
            ctx.add_free_spins(spins, self.kind, False, f"{parts} dragon part(s): {spins} re-spins")
            total = ctx.meters["respins_total"] + spins
            if total >= self.jackpot_at:
                ctx.progressive_hit = True
                ctx.set_meter("respins_total", 0, f"{self.jackpot_at} re-spins: progressive jackpot")
            else:
                ctx.set_meter("respins_total", total, f"{spins} re-spins won")
        if (ctx.free is None or ctx.free.remaining == 0) and ctx.meters["respins_total"]:
            ctx.set_meter("respins_total", 0, "re-spins over")

    def describe(self) -> str:
        return f"dragon re-spins ({'/'.join(map(str, self.respins))}; {self.jackpot_at} for the progressive)"


class Bullfight(Feature):
    """El Toro: a matador and a bull on the payline start the bullfight; the player picks the winner and wins
    `win` credits for the right pick, `lose` for the wrong one. The fight is a fair draw (one in two)."""

    kind = "bullfight"
    choices = ("matador", "bull")
    draws = 2

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.matador = params.symbol("matador")
        self.bull = params.symbol("bull")
        self.win = params.int("win")
        self.lose = params.int("lose")

    def fact(self, triple: tuple[str, str, str]) -> int:
        return int(self.matador in triple and self.bull in triple)

    def apply(self, ctx: SpinContext) -> None:
        if self.line_fact(ctx.centre) and self._active(ctx):
            ctx.pending = self.kind

    def resolve(self, choice: str, draw: int) -> tuple[str, int]:
        if choice not in self.choices:
            raise SlotError(f"pick the {' or the '.join(self.choices)}, not {choice!r}")
        if not isinstance(draw, int) or isinstance(draw, bool) or not 0 <= draw < self.draws:
            raise SlotError(f"the bullfight draw is 0..{self.draws - 1}, got {draw!r}")
        winner = self.choices[draw]
        if choice == winner:
            return f"bullfight: the {winner} wins, as picked", self.win
        return f"bullfight: the {winner} wins, not the {choice}", self.lose

    def describe(self) -> str:
        return f"bullfight pick ({self.win} or {self.lose})"


class Snowman(Feature):
    """Frozen Assets: each snowflake on the payline adds one to the snowman; each sun moves one from the
    snowman to the snowman bonus meter (nothing to move at zero). At `target` the bonus meter is won and
    both start again (the bonus at `bonus`)."""

    kind = "snowman"

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.flake = params.symbol("flake")
        self.sun = params.symbol("sun")
        self.target = params.int("target", low=1)
        self.bonus = params.int("bonus", low=1)
        self.meters = {"snowman": 0, "snowman_bonus": self.bonus}

    def fact(self, triple: tuple[str, str, str]) -> int:
        return self._counts(triple, self.flake) * 4 + self._counts(triple, self.sun)

    def apply(self, ctx: SpinContext) -> None:
        fact = self.line_fact(ctx.centre)
        if not fact or not self._active(ctx):
            return
        flakes, suns = fact >> 2, fact & 3
        count = ctx.meters["snowman"] + flakes
        moved = min(suns, count)
        count -= moved
        bonus = ctx.meters["snowman_bonus"] + moved
        if moved:
            ctx.set_meter("snowman_bonus", bonus, f"{moved} sun(s) move {moved} to the snowman bonus")
        if count >= self.target:
            ctx.award(self.kind, f"snowman reaches {self.target}: the snowman bonus", bonus)
            ctx.set_meter("snowman", 0, "snowman bonus won: the snowman starts again")
            ctx.set_meter("snowman_bonus", self.bonus, f"snowman bonus back to {self.bonus}")
        else:
            ctx.set_meter("snowman", count, f"{flakes} snowflake(s), {suns} sun(s)")

    def describe(self) -> str:
        return f"snowman ({self.target}, bonus from {self.bonus})"


class LossMeter(Feature):
    """It's Good to be Bad: losing max-bet spins in a row build the loss meter; at each count in
    `free_spin_at` one guaranteed free winning spin is banked; `jackpot_at` losses in a row win the
    progressive. Any winning spin clears both meters (and so does the jackpot). Cash In! turns the banked
    spins into free winning spins at max bet, which ends the streak."""

    kind = "loss_meter"

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.free_spin_at = params.ints("free_spin_at")
        self.jackpot_at = params.int("jackpot_at", low=1)
        if list(self.free_spin_at) != sorted(set(self.free_spin_at)) or self.free_spin_at[-1] >= self.jackpot_at:
            raise TitleError(f"{params.where}.free_spin_at: expected increasing loss counts below jackpot_at")
        self.meters = {"loss_meter": 0, "free_winning_spins": 0}

    def apply(self, ctx: SpinContext) -> None:
        if ctx.line_credits:
            ctx.set_meter("loss_meter", 0, "a winning spin ends the streak")
            ctx.set_meter("free_winning_spins", 0, "a winning spin ends the streak")
            return
        if not ctx.paid or not self._active(ctx):
            return
        losses = ctx.meters["loss_meter"] + 1
        if losses >= self.jackpot_at:
            ctx.progressive_hit = True
            ctx.set_meter("loss_meter", 0, f"{self.jackpot_at} losses in a row: progressive jackpot")
            ctx.set_meter("free_winning_spins", 0, "the meters start again after the jackpot")
            return
        ctx.set_meter("loss_meter", losses, "a losing spin")
        if losses in self.free_spin_at:
            ctx.set_meter("free_winning_spins", ctx.meters["free_winning_spins"] + 1,
                          f"{losses} losses in a row: one free winning spin")

    def losses_to_next(self, state: State) -> int | None:
        """What the dancing devil says: losses in a row still needed for the next free winning spin."""
        losses = state.meters["loss_meter"]
        later = [n for n in self.free_spin_at if n > losses]
        return later[0] - losses if later else None

    def cash_in(self, state: State) -> tuple[dict[str, int], FreeSpins, list[MeterChange]]:
        banked = state.meters["free_winning_spins"]
        if not banked:
            raise SlotError("there are no free winning spins to cash in")
        meters = dict(state.meters, loss_meter=0, free_winning_spins=0)
        changes = [MeterChange("free_winning_spins", banked, 0, "Cash In!"),
                   MeterChange(FREE_SPINS, 0, banked, "Cash In!: free winning spins to play")]
        if state.meters["loss_meter"]:
            changes.insert(0, MeterChange("loss_meter", state.meters["loss_meter"], 0, "Cash In! ends the streak"))
        return meters, FreeSpins(banked, state.title.max_bet, True, self.kind), changes

    def describe(self) -> str:
        return f"loss meter (free winning spin at {','.join(map(str, self.free_spin_at))}; {self.jackpot_at} for the progressive)"


class LightSpeed(Feature):
    """Light Speed: each `icon` on the payline raises the meter (1x up to `top`); a winning spin pays its
    line times the level reached and sets the meter back to 1. The `jackpot` combination at the top level
    wins the progressive in place of its line pay."""

    kind = "light_speed"

    def __init__(self, params: Params, match: Match) -> None:
        super().__init__(params, match)
        self.icon = params.symbol("icon")
        self.top = params.int("top", low=2)
        self.jackpot = params.pattern("jackpot")
        self.meters = {"light_speed": 1}

    def fact(self, triple: tuple[str, str, str]) -> int:
        return self._counts(triple, self.icon) | (4 if self.match(self.jackpot, triple) is not None else 0)

    def apply(self, ctx: SpinContext) -> None:
        if not self._active(ctx):
            return
        fact = self.line_fact(ctx.centre)
        level = min(self.top, ctx.meters["light_speed"] + (fact & 3))
        ctx.set_meter("light_speed", level, f"{fact & 3} light speed icon(s)")
        if fact & 4 and level == self.top:
            ctx.progressive_hit = True
            ctx.line_wins[:] = [w for w in ctx.line_wins if w.line != 1]
            ctx.set_meter("light_speed", 1, f"{self.jackpot.text} at {self.top}x: progressive jackpot")
        elif ctx.line_wins:
            ctx.line_wins[:] = [replace(w, multiplier=w.multiplier * level, credits=w.credits * level)
                                for w in ctx.line_wins]
            ctx.set_meter("light_speed", 1, f"a winning spin pays {level}x")

    def describe(self) -> str:
        return f"light speed meter (1x-{self.top}x; {self.jackpot.text} at {self.top}x for the progressive)"


FEATURES: dict[str, type[Feature]] = {cls.kind: cls for cls in (
    PiggyBank, Safe, FreeWinningSpins, DragonRespins, Bullfight, Snowman, LossMeter, LightSpeed)}


def build_feature(params: Params, match: Match) -> Feature:
    kind = params.data.get("kind")
    if kind not in FEATURES:
        raise TitleError(f"{params.where}.kind: unknown feature {kind!r} (known: {', '.join(sorted(FEATURES))})")
    feature = FEATURES[kind](params, match)
    params.done()
    return feature
