"""Linked progressives: the link controller (one per link, journaled like a table, `croupier progressive`) and the cabinet's client of it.

The controller keeps one pool in cents for the cabinets of its link. Cabinets reach it over the bus
(controller/bus.py: CURVE commands, each cabinet's key authorised as the role `cabinet:ID`; the pool
published with the Clone pattern, so every cabinet's progressive display follows it):

- `contribute {game, cents}`: a qualifying game's share. Idempotent by cabinet id + game number: a retry
  (the cabinet restarted before it journaled the acknowledgement) is answered "duplicate" and counted once.
- `hit {game, denomination}`: the cabinet's game hit the jackpot. The controller's one writer orders
  hits, so exactly one hit wins each pool: the award is the pool in whole credits of the hitting cabinet's
  denomination, the pool resets to its reset value, and the few cents that do not make a whole credit stay
  in the new pool. A retry of the same hit returns the same award.

Two cabinets hitting in the same instant: their hits reach the writer one after the other. The first wins
the pool; the second wins the pool as it stands after that reset (the reset value and whatever was
contributed in between), and the pool resets again. Neither hit is lost and no pool is paid twice: the
second player gets what the display showed the moment after the first win, which is the standard
treatment of a simultaneous hit on a linked progressive.

A link can also run with no controller process, on the floor's JetStream (`engine = "floor"`): the same
rules as a fold of a replicated stream, in controller/floor/progressive_fold.py and progressive.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from controller import __version__
from controller.bus import BusClient, CommandClient, CommandError, Role, load_public_key, load_secret_keys
from controller.games.base import IllegalEvent
from controller.journal import fold
from controller.linkrecords import Contribution, Hit, LinkRecord, LinkRefused, LinkStart, link_record
from controller.records import RecordError
from controller.runtime import Batch, CommandRefused, Runtime, command, int_arg

__all__ = ["LinkState", "new_link_state", "link_step", "link_replay", "link_picture", "LinkController", "LinkClient",
           "WINDOW"]

log = logging.getLogger("croupier.progressive")

WINDOW = 256     # games per cabinet within which contributions may arrive out of order
HITS_KEPT = 100  # recent hits kept, so a retried hit gets its award again


@dataclass(frozen=True)
class LinkState:
    link_id: str
    reset_cents: int
    seq: int = 0
    pool: int = 0                                     # cents
    contributions: int = 0
    contributed: int = 0                              # cents
    hits: int = 0
    paid: int = 0                                     # cents
    power_ups: int = 0
    refused: int = 0
    # cabinet -> (highest game counted, games counted within WINDOW of it)
    cabinets: Mapping[str, tuple[int, frozenset[int]]] = field(default_factory=lambda: MappingProxyType({}))
    awards: tuple[dict[str, Any], ...] = ()           # recent hits, newest last

    def counted(self, cabinet: str, game: int) -> bool:
        high, recent = self.cabinets.get(cabinet, (0, frozenset()))
        return game in recent or game <= high - WINDOW

    def award_of(self, cabinet: str, game: int) -> dict[str, Any] | None:
        return next((a for a in reversed(self.awards) if a["cabinet"] == cabinet and a["game"] == game), None)

    def json(self) -> dict[str, Any]:
        return {"pool": self.pool, "reset": self.reset_cents, "contributions": self.contributions,
                "contributed": self.contributed, "hits": self.hits, "paid": self.paid, "power_ups": self.power_ups,
                "refused_commands": self.refused, "cabinets": {c: {"last_game": h} for c, (h, _) in
                                                              sorted(self.cabinets.items())}}


def new_link_state(link_id: str, reset_cents: int) -> LinkState:
    return LinkState(link_id, reset_cents, pool=reset_cents)


def link_step(state: LinkState, record: LinkRecord | Mapping[str, Any]) -> tuple[LinkState, tuple[Any, ...]]:
    """The pure fold of the link controller's journal, by the record's class (a row's object is typed first)."""
    rec = record if isinstance(record, LinkRecord) else link_record(record)
    if isinstance(rec, Contribution):
        cabinet, game, cents = str(rec.cabinet), int(rec.game), int(rec.cents)
        if cents < 0:
            raise IllegalEvent("a contribution cannot be negative")
        if state.counted(cabinet, game):
            raise IllegalEvent(f"cabinet {cabinet} game {game} is already counted")
        high, recent = state.cabinets.get(cabinet, (0, frozenset()))
        high = max(high, game)
        recent = frozenset(g for g in recent | {game} if g > high - WINDOW)
        cabinets = MappingProxyType({**state.cabinets, cabinet: (high, recent)})
        return replace(state, pool=state.pool + cents, contributions=state.contributions + 1,
                       contributed=state.contributed + cents, cabinets=cabinets), ()
    if isinstance(rec, Hit):
        cabinet, game, denomination = str(rec.cabinet), int(rec.game), int(rec.denomination)
        if denomination < 1:
            raise IllegalEvent("a denomination is at least one cent")
        if state.award_of(cabinet, game) is not None:
            raise IllegalEvent(f"cabinet {cabinet} game {game} has been paid its hit")
        award = state.pool - state.pool % denomination
        if rec.award != award:
            raise IllegalEvent(f"the award is {award} cents, not {rec.award}")
        entry = {"hit": state.hits + 1, "cabinet": cabinet, "game": game, "award": award, "denomination": denomination}
        return replace(state, pool=state.reset_cents + state.pool - award, hits=state.hits + 1, paid=state.paid + award,
                       awards=(state.awards + (entry,))[-HITS_KEPT:]), (entry,)
    if isinstance(rec, LinkStart):
        return replace(state, reset_cents=int(rec.reset_cents), power_ups=state.power_ups + 1), ()
    if isinstance(rec, LinkRefused):
        return replace(state, refused=state.refused + 1), ()
    raise RecordError(f"no fold for progressive record {type(rec).__name__}")


def link_replay(state: LinkState, records: Iterable[tuple[int, Mapping[str, Any]]]) -> LinkState:
    """Fold (seq, record) pairs into the link's state; a row that is no link record raises RecordError naming it."""
    return fold(link_step, state, ((seq, link_record(r, f"journal row {seq}")) for seq, r in records))  # type: ignore[misc]


def link_picture(state: LinkState) -> dict[str, Any]:
    last = state.awards[-1] if state.awards else None
    return {"link": state.link_id, "seq": state.seq, "pool": state.pool, "reset": state.reset_cents,
            "hits": state.hits, "last_hit": last, "dealer_only": {"meters": state.json()}}


class LinkController(Runtime):
    """The progressive controller of one link. Commands are answered concurrently (pipelined), so the
    contributions of many cabinets share the writer's group commits."""

    log = log
    GRANTS = {"status": ("cabinet", "ops"), "meters": ("ops",), "audit": ("ops",)}
    REFUSED = LinkRefused
    LOCAL_ROLE = Role("cabinet")  # unauthenticated (tests, demo): the cabinet names itself in the arguments
    ILLEGAL = (IllegalEvent,)

    def __init__(self, config: Any, **kw: Any) -> None:
        super().__init__(config.link_id, config.journal, config.bus, **kw)
        self.config = config

    async def start(self) -> None:
        entries = self._open_journal()
        state = link_replay(new_link_state(self.config.link_id, self.config.reset_cents), entries)
        self._begin(state, LinkStart(self.config.reset_cents, __version__,
                                     self.config.title.id if self.config.title is not None else None).to_json())
        await self._start_bus(pipelined=True)

    def _step(self, state: LinkState, record: dict[str, Any]) -> tuple[LinkState, tuple[Any, ...]]:
        return link_step(state, record)

    def _picture(self, state: LinkState) -> dict[str, Any]:
        return link_picture(state)

    def _meters(self, state: LinkState) -> dict[str, Any]:
        return state.json()

    async def _ready(self) -> str:
        return f"progressive link {self.ident}"

    @staticmethod
    def _cabinet_game(role: Role, args: dict[str, Any]) -> tuple[str, int]:
        """The cabinet a command is for (its key's, or named in the args where the link is not authenticated)
        and its game."""
        cabinet = role.name
        if cabinet is None:
            cabinet = args.get("cabinet")
            if not isinstance(cabinet, str) or not cabinet:
                raise CommandRefused("name the cabinet (cabinet=ID): this link is not authenticated")
        elif "cabinet" in args and args["cabinet"] != cabinet:
            raise CommandRefused(f"{role} may act only for cabinet {cabinet}")
        return cabinet, int_arg(args, "game")

    @command("contribute", roles=("cabinet",), help="a qualifying game's share of the pool (game, cents), counted "
                                                    "once per cabinet and game")
    def _contribute(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        cabinet, game = self._cabinet_game(role, args)
        state = batch.state
        if state.counted(cabinet, game):
            return {"ok": True, "result": {"duplicate": True, "pool": state.pool}}
        batch.add(Contribution(cabinet, game, int_arg(args, "cents")).to_json())
        return {"ok": True, "result": {"duplicate": False, "pool": batch.state.pool}}

    @command("hit", roles=("cabinet",), help="a cabinet's game hit the jackpot (game, denomination): the award, "
                                             "once per cabinet and game")
    def _hit(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        cabinet, game = self._cabinet_game(role, args)
        state = batch.state
        done = state.award_of(cabinet, game)
        if done is not None:
            return {"ok": True, "result": {**done, "duplicate": True}}
        denomination = int_arg(args, "denomination")
        if denomination < 1:
            raise CommandRefused("a denomination is at least one cent")
        award = state.pool - state.pool % denomination
        (entry,) = batch.add(Hit(cabinet, game, denomination, award).to_json())
        log.warning("progressive %s: hit %d by cabinet %s game %d: %d cents", self.ident, entry["hit"], cabinet,
                    game, award)
        return {"ok": True, "result": {**entry, "duplicate": False}}


class LinkClient:
    """A cabinet's end of its link: follows the pool (Clone pattern) and tells when the link is up or down;
    sends contributions and hits as commands. `on_link(up)` and `on_pool(cents)` run on the loop."""

    def __init__(self, cabinet_id: str, config: Any, on_link: Callable[[bool], None],
                 on_pool: Callable[[int], None], *, context: Any = None) -> None:
        self.cabinet_id = cabinet_id
        self.config = config
        self.on_link, self.on_pool = on_link, on_pool
        self.context = context
        self.up = False
        self.pool: int | None = None
        self._heard = 0.0
        self._task: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        keys = server = None
        if config.key is not None:
            keys = load_secret_keys(config.key)
            server = load_public_key(config.server_key)
        self.commands = CommandClient(config.endpoints.commands, keys, server, timeout_s=config.timeout,
                                      context=context, table=config.link_id)
        self._authenticated = keys is not None

    def start(self) -> None:
        self._client = BusClient(self.config.link_id, "public", self.config.endpoints, self._state,
                                 heartbeat_s=self.config.heartbeat, context=self.context,
                                 on_alive=self._alive, on_silence=self._silent)
        self._task = asyncio.create_task(self._follow())
        self._watch = asyncio.create_task(self._watchdog())

    async def _follow(self) -> None:
        while True:
            try:
                await self._client.run()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a garbled message: follow again from a snapshot
                log.exception("progressive link: following the pool failed")
                self._silent()
                await asyncio.sleep(self.config.heartbeat)

    async def _watchdog(self) -> None:
        # The subscriber calls on_silence once when the link falls quiet; this also catches a link that
        # dies while the subscriber waits for a snapshot.
        while True:
            await asyncio.sleep(self.config.heartbeat)
            if self.up and time.monotonic() - self._heard > 3 * self.config.heartbeat:
                self._silent()

    def _alive(self) -> None:
        self._heard = time.monotonic()
        if not self.up:
            self.up = True
            self.on_link(True)

    def _silent(self) -> None:
        if self.up:
            self.up = False
            self.on_link(False)

    def _state(self, seq: int, state: dict[str, Any]) -> None:
        self.pool = int(state["pool"])
        self.on_pool(self.pool)

    def _args(self, **args: Any) -> dict[str, Any]:
        return args if self._authenticated else {"cabinet": self.cabinet_id, **args}

    async def contribute(self, items: list[tuple[int, int]]) -> list[int]:
        """Send (game, cents) contributions in order; the games the controller has counted (now or before)."""
        replies = await self.commands.send_many([("contribute", self._args(game=g, cents=c)) for g, c in items])
        done = []
        for (game, _), reply in zip(items, replies):
            if reply.get("ok"):
                done.append(game)
            else:
                log.error("progressive link refused the contribution of game %d: %s", game, reply.get("error"))
        return done

    async def hit(self, game: int, denomination: int) -> dict[str, Any]:
        reply = await self.commands.send("hit", **self._args(game=game, denomination=denomination))
        if not reply.get("ok"):
            raise CommandError(f"the link controller refused the hit of game {game}: {reply.get('error')}")
        return reply["result"]

    async def close(self) -> None:
        for task in (self._task, self._watch):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (self._task, self._watch) if t is not None), return_exceptions=True)
        self.commands.close()
