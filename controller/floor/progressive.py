"""Linked progressives on the floor's JetStream: the cabinet's end of an engine link, and the readers that fold a link's stream and publish its pool.

There is no link controller process. A cabinet publishes its contributions and hits on the replicated
stream (controller/floor/progressive_fold.py: wire form, rules, the fold) and follows the link's messages
itself: the award of its hit is what the fold says once it has read the hit back, so a cabinet learns
from the stream's order whether its hit was first. Any number of readers (`PoolReader`, on any machine)
fold the same stream and publish the pool to the link's displays over the bus, as the ZeroMQ link
controller does; a reader that restarts folds the stream again from its first message.

The cabinet's rules of the ZeroMQ link hold (controller/cabinet.py): the cabinet journals each contribution
and hit (its spin record) before it sends them, journals the award before it credits it, and holds the
link down (no max-bet play: GLI-12, a linked game is not played while its link is down) while the stream
cannot be reached or while the link's reset value is not the one it is configured with.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from controller.floor.progressive_fold import (STREAM, SUBJECT_PREFIX, Contribution, Hit, Message, Open, PoolState,
                                               ProgressiveWireError, decode_message, encode_message, link_filter,
                                               link_subject, message_id, new_pool, pool_picture, pool_refuse,
                                               pool_step)
from controller.floor.server import drop_reader, ensure_stream, reader, wait_progress
from controller.floor.wire import HDR_MSG_ID

__all__ = ["ensure_progressive_stream", "PoolFollower", "FloorLinkClient", "PoolReader"]

log = logging.getLogger("croupier.progressive")


async def ensure_progressive_stream(js: Any, replicas: int, timeout: float = 30.0) -> None:
    """The progressive stream (server.ensure_stream): made by the first reader or cabinet that finds none."""
    await ensure_stream(js, STREAM, SUBJECT_PREFIX, replicas, "progressive", timeout)


@dataclass
class PoolFollower:
    """Folds one link's messages in stream order, from the stream's first message (or `state`'s cursor).

    Reads with a short-lived pull consumer that starts after the cursor; any failure (a node gone, no quorum,
    a timeout) drops it and makes a new one from the cursor, so nothing is folded twice or skipped.
    `on_state(state)` runs after each batch that moved the cursor;
    `last_seen` is when a fetch last brought messages (loop time)."""

    link: str
    on_state: Callable[[PoolState], None] | None = None
    log_hits: bool = False  # a reader logs every hit of the link; a cabinet logs its own
    batch: int = 256
    state: PoolState = None  # type: ignore[assignment]
    last_seen: float = 0.0
    stopped: bool = False  # set by stop(): the loops end even where Python 3.11's wait_for swallowed a cancel
    _progress: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        if self.state is None:
            self.state = new_pool(self.link)

    def stop(self) -> None:
        self.stopped = True

    def take(self, seq: int, subject: str, data: bytes) -> None:
        try:
            msg: Message | None = decode_message(subject, data)
        except ProgressiveWireError as exc:
            if seq > self.state.seq:
                log.error("progressive %s: stream seq %d refused: %s", self.link, seq, exc)
            msg = None
        before = self.state
        self.state = pool_refuse(before, seq) if msg is None else pool_step(before, seq, msg)
        if msg is not None and self.state.refused > before.refused:
            log.error("progressive %s: stream seq %d refused: %s (the link's reset is %s cents)", self.link, seq, msg,
                      before.reset_cents)
        if self.log_hits and self.state.hits > before.hits and self.state.last_hit is not None:
            a = self.state.last_hit  # every hit logged with its time and machine (the stream holds it too)
            log.warning("progressive %s: hit %d by cabinet %s game %d at %s: %d cents", self.link, a.hit, a.cabinet,
                        a.game, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a.ts_ns / 1e9)), a.cents)

    async def wait_for(self, predicate: Callable[[PoolState], bool], timeout: float) -> bool:
        """Wait until predicate(state) holds, tested after each fetch; False on timeout."""
        return await wait_progress(self._progress, lambda: predicate(self.state), timeout)

    async def run(self, js: Any, fetch_timeout: float = 0.5) -> None:
        loop = asyncio.get_running_loop()
        while not self.stopped:
            sub = None
            try:
                sub = await reader(js, STREAM, link_filter(self.link), self.state.seq + 1)
                while not self.stopped:
                    try:
                        msgs = await sub.fetch(self.batch, timeout=fetch_timeout)
                    except asyncio.TimeoutError:
                        self._progress.set()
                        continue
                    self.last_seen = loop.time()
                    before = self.state.seq
                    for msg in msgs:
                        self.take(msg.metadata.sequence.stream, msg.subject, msg.data)
                    if self.state.seq != before and self.on_state is not None:
                        self.on_state(self.state)
                    self._progress.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the floor lost a node or quorum: a new consumer from the cursor
                log.info("progressive %s: consumer lost at stream seq %d: %r", self.link, self.state.seq, exc)
                self._progress.set()
                await asyncio.sleep(0.1)  # backoff before a new consumer
            finally:
                await drop_reader(sub)


class FloorLinkClient:
    """A cabinet's end of an engine link (`[cabinet.progressive] engine = "floor"`), with the interface of
    controller.progressive.LinkClient: `start()`, `contribute(items)`, `hit(game, denomination)`, `close()`;
    `on_link(up)` and `on_pool(cents)` run on the loop.

    Up means: the floor answered within 3 heartbeats (a stream probe or a publish acknowledged), and this
    cabinet's fold has read the link's open, with this cabinet's reset value."""

    def __init__(self, cabinet_id: str, link: Any, floor: Any, reset_cents: int, on_link: Callable[[bool], None],
                 on_pool: Callable[[int], None], *, clock: Callable[[], int] = time.time_ns) -> None:
        self.cabinet_id = cabinet_id
        self.link_id: str = link.link_id
        self.config = link
        self.floor = floor
        self.reset_cents = reset_cents
        self.on_link, self.on_pool = on_link, on_pool
        self.clock = clock
        self.subject = link_subject(self.link_id, cabinet_id)
        self.follower = PoolFollower(self.link_id, on_state=self._state)
        self.up = False
        self.pool: int | None = None
        self.nc: Any = None
        self.js: Any = None
        self._heard = 0.0
        self._opened = False
        self._told_reset = False
        self._closing = False  # the loops end on it even where Python 3.11's wait_for swallowed a cancel
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._run()))

    async def _run(self) -> None:
        from controller.floor.server import connect

        while self.nc is None and not self._closing:
            try:
                self.nc = await connect(self.floor.servers, credentials=self.floor.credentials,
                                        name=f"croupier-progressive-{self.cabinet_id}")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - no floor yet: the link stays down, play without max bet
                log.warning("progressive %s: no floor at %s: %r", self.link_id, ", ".join(self.floor.servers), exc)
                await asyncio.sleep(self.config.heartbeat)
        if self.nc is None:
            return
        self.js = self.nc.jetstream(timeout=self.config.timeout)
        self._tasks.append(asyncio.create_task(self.follower.run(self.js)))
        await self._watch()

    async def _watch(self) -> None:
        """Probe the floor every heartbeat (and open the link until it is open); tell when up or down changes."""
        loop = asyncio.get_running_loop()
        hb = self.config.heartbeat
        while not self._closing:
            try:
                if not self._opened:
                    await self._publish(Open(self.link_id, self.cabinet_id, self.reset_cents))
                    self._opened = True
                else:
                    await asyncio.wait_for(self.js.stream_info(STREAM), hb)
                    self._heard = loop.time()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the floor did not answer: silence decides below
                log.debug("progressive %s: floor probe: %r", self.link_id, exc)
            self._judge()
            await asyncio.sleep(hb)

    def _judge(self) -> None:
        now = asyncio.get_running_loop().time()
        state = self.follower.state
        up = self._opened and now - self._heard <= 3 * self.config.heartbeat and state.reset_cents == self.reset_cents
        if state.reset_cents not in (None, self.reset_cents) and not self._told_reset:
            self._told_reset = True
            log.error("progressive %s: the link's reset is %d cents, this cabinet's %d: the link stays down",
                      self.link_id, state.reset_cents, self.reset_cents)
        if up != self.up:
            self.up = up
            self.on_link(up)

    def _state(self, state: PoolState) -> None:
        if state.pool != self.pool:
            self.pool = state.pool
            self.on_pool(state.pool)
        if not self.up:
            self._judge()

    async def _publish(self, msg: Message) -> Any:
        ack = await self.js.publish(self.subject, encode_message(msg), timeout=self.config.timeout,
                                    headers={HDR_MSG_ID: message_id(msg)})
        self._heard = asyncio.get_running_loop().time()
        return ack

    async def contribute(self, items: list[tuple[int, int]]) -> list[int]:
        """Publish (game, cents) contributions; the games the stream holds (now or before). Raises CommandError
        when none is acknowledged; the cabinet sends the rest again (the message ids make that idempotent)."""
        from controller.bus import CommandError

        if self.js is None:
            raise CommandError("progressive link: not connected to the floor")
        now = self.clock()
        results = await asyncio.gather(*(self._publish(Contribution(self.link_id, self.cabinet_id, game, cents, now))
                                         for game, cents in items), return_exceptions=True)
        done = [game for (game, _), r in zip(items, results) if not isinstance(r, BaseException)]
        failed = [(game, r) for (game, _), r in zip(items, results) if isinstance(r, BaseException)]
        if failed and not done:
            raise CommandError(f"progressive link: {len(failed)} of {len(items)} contributions not acknowledged "
                               f"(game {failed[0][0]}: {failed[0][1]!r})")
        return done

    async def hit(self, game: int, denomination: int) -> dict[str, Any]:
        """Publish the hit, then read the stream until the fold has paid it: the award (first in stream order
        wins the pool; a later one the pool as it stands then) as {"award", "hit", "seq", "duplicate"}."""
        from controller.bus import CommandError

        if self.js is None:
            raise CommandError("progressive link: not connected to the floor")
        try:
            ack = await self._publish(Hit(self.link_id, self.cabinet_id, game, denomination, self.clock()))
        except Exception as exc:  # noqa: BLE001 - the cabinet sends it again (the same message id)
            raise CommandError(f"progressive link: the hit of game {game} was not acknowledged: {exc!r}") from None
        found = await self.follower.wait_for(lambda s: s.award_of(self.cabinet_id, game) is not None,
                                             max(self.config.timeout, 3 * self.config.heartbeat))
        award = self.follower.state.award_of(self.cabinet_id, game)
        if not found or award is None:
            raise CommandError(f"progressive link: the hit of game {game} (stream seq {ack.seq}) is not read back yet")
        log.warning("progressive %s: cabinet %s game %d: hit %d, %d cents (stream seq %d)", self.link_id,
                    self.cabinet_id, game, award.hit, award.cents, award.seq)
        return {**award.json(), "duplicate": bool(ack.duplicate) or award.seq != ack.seq}

    async def close(self) -> None:
        self._closing = True
        self.follower.stop()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.nc is not None:
            try:
                await self.nc.close()
            except Exception:  # noqa: BLE001
                pass


class PoolReader:
    """One reader of a link: folds its stream and publishes the pool's picture to the link's displays over the
    bus (the link controller's topic and Clone snapshots, so screens and signs follow it unchanged). Run as
    many as wanted, on any machine; each rebuilds from the stream when it starts. `bus`: BusEndpoints or None
    (no displays: a reader for the floor service or tests)."""

    def __init__(self, link: str, servers: list[str] | tuple[str, ...], *, bus: Any = None, credentials: Any = None,
                 heartbeat: float = 1.0, create_stream: int | None = None, context: Any = None) -> None:
        self.link = link
        self.servers = list(servers)
        self.credentials = credentials
        self.bus_endpoints = bus
        self.heartbeat = heartbeat
        self.create_stream = create_stream  # replicas: make the stream if the floor has none
        self.context = context
        self.follower = PoolFollower(link, on_state=self._publish, log_hits=True)
        self.bus: Any = None
        self.nc: Any = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def from_config(cls, cfg: Any) -> PoolReader:
        """The reader a link's config names (`[progressive] engine = "floor"`, `croupier progressive`): its
        [floor] servers and credential, its [bus] endpoints for the displays."""
        # The first reader makes the link's stream where the floor has none: R3, or one replica per server
        # listed on a floor of fewer (an embedded single server).
        return cls(cfg.link_id, cfg.floor.servers, bus=cfg.bus.endpoints, credentials=cfg.floor.credentials,
                   heartbeat=cfg.bus.heartbeat, create_stream=min(3, len(cfg.floor.servers)))

    @property
    def state(self) -> PoolState:
        return self.follower.state

    @property
    def table_id(self) -> str:
        return self.link

    def views(self) -> tuple[int, dict[str, dict[str, Any]]]:
        from controller.views import screen_views

        return self.state.seq, screen_views(pool_picture(self.state))

    async def start(self) -> None:
        if self.bus_endpoints is not None:
            from controller.bus import BusServer

            async def no_commands(role: Any, command: str, args: dict[str, Any], origin: Any) -> dict[str, Any]:
                return {"ok": False, "error": "a progressive reader takes no commands: cabinets publish on the stream"}

            def refused(who: str, reason: str, info: dict[str, Any]) -> None:
                log.info("progressive reader %s: refused %s: %s", self.link, who, reason)

            self.bus = BusServer(self.link, self.bus_endpoints, self.views, no_commands, refused,
                                 heartbeat_s=self.heartbeat, context=self.context)
            await self.bus.start()
        self._task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        from controller.floor.server import connect

        while self.nc is None and not self.follower.stopped:
            try:
                self.nc = await connect(self.servers, credentials=self.credentials, name=f"croupier-reader-{self.link}")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - no floor yet: the displays show the last pool they had
                log.warning("progressive reader %s: no floor at %s: %r", self.link, ", ".join(self.servers), exc)
                await asyncio.sleep(self.heartbeat)
        if self.nc is None:
            return
        js = self.nc.jetstream(timeout=2.0)
        while self.create_stream and not self.follower.stopped:
            try:
                await ensure_progressive_stream(js, self.create_stream)
                break
            except TimeoutError as exc:  # no quorum yet: the follower below would find no stream either
                log.warning("progressive reader %s: %s", self.link, exc)
        await self.follower.run(js)

    def _publish(self, state: PoolState) -> None:
        if self.bus is not None:
            seq, views = self.views()
            self.bus.publish(seq, views)

    async def wait_for(self, predicate: Callable[[PoolState], bool], timeout: float) -> bool:
        return await self.follower.wait_for(predicate, timeout)

    async def run(self) -> None:
        """Serve until stopped (a service's life, as a runtime's run)."""
        log.warning("progressive reader %s: folding the link's stream from %s", self.link, ", ".join(self.servers))
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        await self.close()

    async def close(self) -> None:
        self.follower.stop()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self.nc is not None:
            try:
                await self.nc.close()
            except Exception:  # noqa: BLE001
                pass
        if self.bus is not None:
            await self.bus.close()
