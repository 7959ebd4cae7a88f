"""The core every journaled runtime shares (table, cabinet, progressive link): one writer, group commit, publish, commands by role.

A runtime keeps one replayable state, folded by a pure `step(state, record) -> (state, effects)`.
Every input becomes a handler queued for the one writer task; the writer takes every input waiting,
stages each one's records in order through `step` (a `Batch`: a handler that fails has its records
undone), appends them in one durable transaction (`Journal.append_many`), and only then adopts each
record's state and shows its effects on the drivers, and publishes the last state through the views on
the bus (one update per group commit).
Commands arrive with a `Role`; the ones a role may not send, or that the state refuses, are answered
with the reason and journaled as `refused` records (a bounded summary, at most `RefusalLimiter`'s rate per
peer). A bus command with an id is answered once: a resend of the same (key, id) within `ANSWER_WINDOW_S`
gets the first answer and changes nothing (the window is rebuilt from the journal at a restart). A journal
that cannot be written stops the service with exit status 1 (`FatalStop`), so its service manager restarts
it. Its link to the floor (the journal streamed there, play stopped while it is away) is controller/runtimefloor.py.

A subclass supplies the fold (`_step`), the picture for the views (`_picture`), what effects show
(`_show`), and its commands (handlers declared with `@command`, controller/runtimecommands.py); see
controller/table.py, controller/cabinet.py and controller/progressive.py.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from controller.bus import BusServer, Origin, Role, load_client_roles, load_secret_keys
from controller.journal import Journal, canonical_json, default_anchor
from controller.records import Refusal
from controller.runtimefloor import FloorLink
from controller.runtimeargs import (MAX_RECORDED, RefusalLimiter, bounded, clip, int_arg, json_bytes, jsonable,
                                   text_arg)
from controller.runtimecommands import Answer, AnswerWindow, Command, collect, command
from controller.sdnotify import notify, watchdog_interval
from controller.views import ScreenViews, project

__all__ = ["Runtime", "Batch", "CommandRefused", "FatalStop", "RefusalLimiter", "text_arg", "int_arg", "jsonable",
           "bounded", "command", "ANSWER_WINDOW_S"]

Effects = tuple[Any, ...]

ANSWER_WINDOW_S = 600.0   # how long a command's (key, id) is answered with its first answer
ANSWER_WINDOW_N = 10_000  # ... and at most this many of the latest (memory stays bounded)


class FatalStop(SystemExit):
    """The service stopped because it cannot go on (its journal cannot be written). Exit status 1, with the
    reason on stderr and no traceback: systemd's Restart=on-failure starts it again (2 is kept for a
    configuration or journal it must not run on, which RestartPreventExitStatus=2 leaves stopped)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)  # a text code: Python prints it and exits 1
        self.reason = reason


class CommandRefused(Exception):
    """A command that is not allowed or not legal now; the reason goes back to the sender and into the journal."""


class Batch:
    """Records staged one by one against a state; journaled together, or (for one input) undone together."""

    def __init__(self, state: Any, step: Callable[[Any, dict[str, Any]], tuple[Any, Effects]]) -> None:
        self.base = state
        self.state = state
        self._step = step
        self.staged: list[tuple[dict[str, Any], Any, Effects]] = []
        self.after: list[Callable[[], None]] = []  # actions that must wait until the records are journaled

    def add(self, record: dict[str, Any]) -> Effects:
        """Stage a record; a record the state refuses raises (IllegalEvent, ...) and stages nothing."""
        state, effects = self._step(self.state, record)
        self.state = state
        self.staged.append((record, state, effects))
        return effects

    def mark(self) -> tuple[int, int]:
        return len(self.staged), len(self.after)

    def undo(self, mark: tuple[int, int]) -> None:
        del self.staged[mark[0]:]
        del self.after[mark[1]:]
        self.state = self.staged[-1][1] if self.staged else self.base


class Runtime(FloorLink):
    """A journaled service. Construct, `await start()`, then `await run()` (or drive it from tests)."""

    log: ClassVar[logging.Logger] = logging.getLogger("croupier.runtime")
    # the commands a role kind may send to this runtime's base handlers (status, meters, audit): command -> roles
    GRANTS: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    # collected from the @command handlers and GRANTS (controller/runtimecommands.py): command -> declaration, and
    # ALLOWED, the same as command -> role kinds (what controller/bus.md's tables are checked against)
    COMMANDS: ClassVar[Mapping[str, Command]] = {}
    ALLOWED: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    # the journal record of a refused command, in this runtime's family of records
    REFUSED: ClassVar[type[Refusal]] = Refusal
    # who an unauthenticated command counts as, when no [bus].keys are configured (demo and tests only)
    LOCAL_ROLE: ClassVar[Role] = Role("ops")
    # errors a fold raises for a record it refuses, whose text is the reason
    ILLEGAL: ClassVar[tuple[type[Exception], ...]] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls.COMMANDS = collect(cls, cls.GRANTS)
        cls.ALLOWED = {name: spec.roles for name, spec in cls.COMMANDS.items()}

    def __init__(self, ident: str, journal: Path, bus: Any, *, context: Any = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.ident = ident
        self.journal_path = journal
        self.bus_config = bus
        self.context = context
        self.clock = clock
        self.state: Any = None
        self.journal: Journal | None = None
        self.bus: BusServer | None = None
        self._changed: asyncio.Future[None] | None = None  # resolved at the next commit; made by the first waiter
        self._views: tuple[int, dict[str, dict[str, Any]]] = (0, {})
        self._screen_views = ScreenViews()
        self._tasks: list[asyncio.Task[Any]] = []
        self._inbox: asyncio.Queue[tuple[Callable[[Batch], Any], asyncio.Future[Any]]] = asyncio.Queue()
        self._stopping = asyncio.Event()
        self._stopped = False
        self.failure: str | None = None  # why the service stopped itself (run() then raises FatalStop)
        self.refusals = RefusalLimiter()
        self._answers = AnswerWindow(ANSWER_WINDOW_S, ANSWER_WINDOW_N)  # (key, id) -> first answer
        self._origin: Origin | None = None  # the bus command being handled (for its refusal's record)
        self.on_publish: Callable[[tuple[int, dict[str, dict[str, Any]]]], None] | None = None  # e.g. the demo's printout
        self.replicator: Any = None  # controller.floor.replicator.Replicator when the config has a [floor]

    # ------------------------------------------------------------------------------------------ for subclasses

    def _step(self, state: Any, record: dict[str, Any]) -> tuple[Any, Effects]:
        raise NotImplementedError

    def _picture(self, state: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _show(self, effects: Effects) -> None:
        """Act on one journaled record's effects (lamps, displays, motors)."""

    def _meters(self, state: Any) -> dict[str, Any]:
        return state.meters.json()

    def _written(self) -> None:
        """After each group commit has been adopted (e.g. restart a timer)."""

    async def _close_drivers(self) -> None:
        """Stop the drivers (before the bus and the journal close)."""

    async def _ready(self) -> str:
        """Wait until the service is ready for systemd; return its status line."""
        return self.ident

    # ------------------------------------------------------------------------------------------ life cycle

    def _open_journal(self) -> list[tuple[int, dict[str, Any]]]:
        """Open (and verify) the journal, its key and its anchor (the config's `journal_key`, `journal_anchor`);
        its (seq, record) pairs in order. A damaged, forged or incomplete journal, or a missing key, raises
        JournalIntegrityError: the service must not run on it."""
        cfg = getattr(self, "config", None)
        self.journal = Journal(self.journal_path, self.ident, key_file=getattr(cfg, "journal_key", None),
                               anchor=getattr(cfg, "journal_anchor", None) or default_anchor(self.journal_path))
        floor = getattr(cfg, "floor", None)
        if floor is not None:  # the floor's last acknowledged row: an anchor off the machine
            from controller.floor.anchor import check_on_start

            try:
                self.log.info("%s: %s", self.ident, check_on_start(floor, self.journal_path, self.journal.last_seq))
            except BaseException:
                self.journal.close()
                raise
        return [(e.seq, e.record) for e in self.journal.entries()]

    def _begin(self, state: Any, start_record: dict[str, Any]) -> None:
        """Adopt the replayed state, journal the start record and start the writer."""
        self.state = state
        self._recall_answers()
        batch = Batch(self.state, self._step)
        batch.add(start_record)
        self._write(batch)
        writer = asyncio.create_task(self._writer())
        writer.add_done_callback(self._writer_done)
        self._tasks.append(writer)
        self._start_floor()

    def _writer_done(self, task: asyncio.Task[Any]) -> None:
        # The writer only ends by cancellation (stop) or a failure after which nothing may take effect: a
        # journal that cannot be written, or a bug past the journal. Either way the service stops, non-zero.
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if self.failure is None:
            self.failure = f"the writer failed: {type(exc).__name__}: {exc}"
            self.log.critical("%s: %s", self.ident, self.failure, exc_info=exc)
        self._stopping.set()

    async def run(self) -> None:
        """Serve until stopped (SIGTERM/SIGINT or `request_stop()`). When the service stopped itself because it
        cannot go on (`failure`), raises FatalStop: the process exits 1 and its service manager restarts it."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self._stopping.set)
            except (NotImplementedError, RuntimeError):
                pass
        await self._stopping.wait()
        if self.failure is not None:
            raise FatalStop(f"{self.ident} stopped: {self.failure}")

    def request_stop(self) -> None:
        self._stopping.set()

    async def stop(self) -> None:
        """Stop the drivers, the bus and the journal (once; a second call does nothing)."""
        if self._stopped:
            return
        self._stopped = True
        notify("STOPPING=1")
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._close_drivers()
        if self.bus is not None:
            await self.bus.close()
        if self.journal is not None:
            self.journal.close()

    # ------------------------------------------------------------------------------------------ the writer

    async def _submit(self, handler: Callable[[Batch], Any]) -> Any:
        """Queue an input for the writer; returns what the handler returned, after its records are journaled."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait((handler, future))
        return await future

    def _post(self, handler: Callable[[Batch], Any]) -> None:
        """Queue an input nobody waits for (a driver's event from a callback); a failure is logged."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(self._log_failure)
        self._inbox.put_nowait((handler, future))

    def _log_failure(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            self.log.error("input failed: %r", future.exception(), exc_info=future.exception())

    async def _writer(self) -> None:
        """The one writer: takes every input waiting, stages its records in order against the state, journals
        them in one durable transaction (group commit), then adopts, publishes and shows them."""
        while True:
            items = [await self._inbox.get()]
            while not self._inbox.empty():
                items.append(self._inbox.get_nowait())
            batch = Batch(self.state, self._step)
            outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
            for handler, future in items:
                mark = batch.mark()
                try:
                    outcomes.append((future, handler(batch), None))
                except Exception as exc:  # noqa: BLE001 - the caller gets it; its partial records are undone
                    batch.undo(mark)
                    outcomes.append((future, None, exc))
            try:
                self._write(batch)
            except BaseException as exc:  # the journal cannot be written: nothing may take effect, stop
                self.log.critical("journal write failed, stopping %s: %s", self.ident, exc)
                self.failure = self.failure or f"journal write failed: {type(exc).__name__}: {exc}"
                for future, _, _ in outcomes:
                    if not future.done():
                        future.set_exception(RuntimeError(f"journal write failed: {exc}"))
                self._stopping.set()
                raise
            for future, value, error in outcomes:
                if future.done():
                    continue
                if error is None:
                    future.set_result(value)
                else:
                    future.set_exception(error)

    def _write(self, batch: Batch) -> None:
        assert self.journal is not None
        if not batch.staged:
            return
        records = [record for record, _, _ in batch.staged]
        stamp = int(self.clock() * 1e9)
        entries = self.journal.append_many(records, stamp) if len(records) > 1 else \
            [self.journal.append(records[0], stamp)]
        if self.replicator is not None:
            self.replicator.wake()
        for entry, (_, state, effects) in zip(entries, batch.staged):
            self.state = replace(state, seq=entry.seq)
            self._show(effects)
        # One update for the whole group commit: screens want the latest state, and the records between
        # lasted no time at all (every one of them is in the journal). It names the update before it.
        self._publish()
        for action in batch.after:
            action()
        self._written()
        changed, self._changed = self._changed, None
        if changed is not None and not changed.done():
            changed.set_result(None)

    async def wait_change(self, after_seq: int, timeout: float) -> bool:
        """Wait until the journal has moved past `after_seq`; False on timeout."""
        return await self.wait_for(lambda state: state.seq > after_seq, timeout)

    async def wait_for(self, predicate: Callable[[Any], bool], timeout: float) -> bool:
        """Wait until `predicate(state)` holds, testing it after each commit; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate(self.state):
            left = deadline - loop.time()
            if left <= 0:
                return False
            if self._changed is None:
                self._changed = loop.create_future()
            # asyncio.wait leaves the shared future alone on a timeout or a cancellation: other waiters keep it
            await asyncio.wait((self._changed,), timeout=left)
        return True

    # ------------------------------------------------------------------------------------------ views

    def views(self) -> tuple[int, dict[str, dict[str, Any]]]:
        return self._views

    def _publish(self) -> None:
        views, texts = self._screen_views(self._picture(self.state))
        self._views = (self.state.seq, views)
        if self.bus is not None:
            self.bus.publish(self.state.seq, views, texts=texts)
        if self.on_publish is not None:
            self.on_publish(self._views)

    def audit_view(self) -> dict[str, Any]:
        return project(self._picture(self.state), "audit")

    # ------------------------------------------------------------------------------------------ commands

    def _check_role(self, role: Role, command: str, args: dict[str, Any]) -> Command:
        """The command's declaration; CommandRefused when it is unknown here or `role` may not send it."""
        spec = self.COMMANDS.get(command)
        if spec is None:
            raise CommandRefused(f"unknown command {command!r} (commands: {', '.join(sorted(self.COMMANDS))})")
        if role.kind not in spec.roles:
            raise CommandRefused(f"{role} may not {command.replace('_', ' ')}")
        return spec

    def _status_view(self, role: Role) -> str:
        """Which screen view a role's `status` returns."""
        return "dealer"

    @command("status", help="the sender's view of the state, as its screen shows it", read_only=True)
    def _status(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "result": self._views[1][self._status_view(role)]}

    @command("meters", help="the meters, derived from the journal", read_only=True)
    def _meters_command(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "result": self._meters(batch.state)}

    @command("audit", help="the audit view: the whole state, hidden cards included (never for a screen)",
             read_only=True)
    def _audit(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "result": self.audit_view()}

    async def command(self, role: Role | None, command: str, args: dict[str, Any],
                      origin: Origin | None = None) -> dict[str, Any]:
        """A command from the bus (authenticated role, and where it came from), the panel or an autoplay.
        Refusals are journaled; a bus command's (key, id) seen before is answered with its first answer."""
        return await self._submit(lambda batch: self._once(batch, role, command, args, origin))

    def _once(self, batch: Batch, role: Role | None, command: str, args: dict[str, Any],
              origin: Origin | None) -> dict[str, Any]:
        """`_command`, at most once per (key, id) within the window: the first answer is kept (and journaled
        with the command's first record, as its `origin`, so a restart rebuilds the window)."""
        self._origin = origin
        try:
            spec = self.COMMANDS.get(command)
            if origin is None or origin.id is None or (spec is not None and spec.read_only):
                return self._command(batch, role, command, args)
            ident = (origin.key or "", origin.id)
            known = self._answers.get(ident, self.clock())
            if known is not None:
                if known.digest != origin.digest:
                    return self._refuse(batch, str(role or origin.key or "unauthenticated"),
                                        f"id {origin.id!r} was used for another command "
                                        f"{self.clock() - known.at:.0f} s ago: a new command needs a new id",
                                        command, args)
                if known.answer is None:
                    return {"ok": False, "error": f"id {origin.id!r} was answered before a restart (journal record "
                                                  f"{known.seq}); not applied again"}
                return known.answer
            mark = len(batch.staged)
            reply = self._command(batch, role, command, args)
            answer = reply if len(json_bytes(reply)) <= MAX_RECORDED else None
            if len(batch.staged) > mark:
                record, state, effects = batch.staged[mark]
                tag = {"key": origin.key, "id": origin.id, "digest": origin.digest, "answer": answer}
                batch.staged[mark] = ({**record, "origin": tag}, state, effects)
            self._answers.remember(ident, Answer(origin.digest, reply, 0, self.clock()))
            return reply
        finally:
            self._origin = None

    def _recall_answers(self) -> None:
        """Rebuild the window of answered (key, id)s from the journal's latest records."""
        if self.journal is not None:
            self._answers.recall(self.journal.entries(after=max(0, self.journal.last_seq - ANSWER_WINDOW_N)),
                                 self.clock())

    def _command(self, batch: Batch, role: Role | None, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """Look the command up, check the sender's role, call its handler; a refusal is answered and journaled."""
        if role is None:
            if self.bus_config.keys is not None:
                return self._refuse(batch, "unauthenticated", "commands need a CURVE key", command, args)
            role = self.LOCAL_ROLE  # no keys configured: a local, unauthenticated setup (demo, tests)
        try:
            self._check_role(role, command, args)
            mark = batch.mark()
            try:
                reply = self._handle(batch, role, command, args)
                _storable(batch.staged[mark[0]:])
                return reply
            except Exception:
                batch.undo(mark)
                raise
        except CommandRefused as exc:
            return self._refuse(batch, str(role), str(exc), command, args)
        except self.ILLEGAL as exc:
            return self._refuse(batch, str(role), getattr(exc, "reason", None) or str(exc), command, args)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            return self._refuse(batch, str(role), f"malformed {command}: {exc}", command, args)

    def _handle(self, batch: Batch, role: Role, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """Call a command's handler as `role` with no role check: the runtime's own inputs (a cabinet's buttons)."""
        spec = self.COMMANDS.get(command)
        if spec is None:
            raise CommandRefused(f"{command} is not handled here")
        handler = getattr(self, spec.method)
        reply: dict[str, Any] = handler(batch, role, command, args) if spec.named else handler(batch, role, args)
        return reply

    def _refusal(self, who: str, reason: str, request: Any, left_out: Any) -> dict[str, Any]:
        """The journal record of a refusal (`left_out`: the peer's refusals not journaled one by one, if any)."""
        return self.REFUSED(who=clip(who, 64), reason=reason, request=request, left_out=left_out or None).to_json()

    def _refuse(self, batch: Batch, who: str, reason: str, command: str | None,
                args: dict[str, Any] | None) -> dict[str, Any]:
        """Answer a refusal and journal it: the command and its args (a summary when they are large); a bus
        command's refusals at most at the limiter's rate per peer."""
        reason = clip(reason)
        request: dict[str, Any] | None = None
        if command is not None:
            request = {"command": clip(command, 64), "args": bounded(args)}
        origin = self._origin
        left = 0
        if origin is not None:
            request = {**(request or {}), "peer": origin.peer, "id": origin.id}
            journal, left = self.refusals.allow(origin.peer or "(no address)")
            if not journal:
                return {"ok": False, "error": reason}
        self.log.warning("refused %s from %s: %s", clip(str(command), 64), who, reason)
        batch.add(self._refusal(who, reason, request, left))
        return {"ok": False, "error": reason}

    def _bus_refused(self, who: str, reason: str, info: dict[str, Any]) -> None:
        """Refusals the bus decides itself (unknown key, failed handshake, malformed message): `info` is a bounded
        summary of the message (`controller.bus.summary`) with the peer's address; at most the limiter's rate
        per peer is journaled."""
        journal, left = self.refusals.allow(str(info.get("peer") or "(no address)"))
        if not journal:
            return
        reason = clip(reason)
        self.log.warning("refused a message from %s (%s): %s", who, info.get("peer"), reason)
        record = self._refusal(who, reason, info, left)
        self._post(lambda batch: batch.add(record))

    async def _flush_refusals(self, every: float = 60.0) -> None:
        """Journal how many refusals each peer had left out, so a flood that stops is still on record."""
        while True:
            await asyncio.sleep(every)
            counts = self.refusals.flush()
            if counts:
                record = self._refusal("bus", f"{sum(counts.values())} refusals not journaled one by one (at most "
                                       f"{self.refusals.burst}, then one every {self.refusals.every:g} s, per peer)",
                                       None, counts)
                self._post(functools.partial(Batch.add, record=record))

    # ------------------------------------------------------------------------------------------ drivers

    def _open_panel(self, path: Path | None, simulated: bool, on_event: Callable[[Any], None]) -> Any:
        """Open the pin map's panel inside the loop (its simulation with `simulated`) and start its events; None
        when the config has no panel. Callers keep it as `self.panel`."""
        if path is None:
            return None
        from drivers.panel import load_panel_config, open_panel

        config = load_panel_config(path)
        panel = open_panel(config.simulated() if simulated else config)
        self._panel_ready(panel)
        panel.start(on_event)
        return panel

    def _panel_ready(self, panel: Any) -> None:
        """The panel is open and about to report inputs (attach simulated machinery here)."""

    # ------------------------------------------------------------------------------------------ bus

    async def _start_bus(self, *, pipelined: bool = False) -> None:
        bc = self.bus_config
        server_keys, roles = None, {}
        if bc.keys is not None:
            server_keys = load_secret_keys(bc.keys / "server.key_secret")
            roles = load_client_roles(list(bc.clients))
        else:
            self.log.warning("commands are NOT authenticated: set [bus].keys for a live service")

        async def on_command(role: Role | None, command: str, args: dict[str, Any], origin: Origin
                             ) -> dict[str, Any]:
            return await self.command(role if bc.keys is not None else None, command, args, origin)

        self.bus = BusServer(self.ident, bc.endpoints, self.views, on_command, self._bus_refused,
                             server_keys=server_keys, client_roles=roles, heartbeat_s=bc.heartbeat, hwm=bc.hwm,
                             context=self.context, pipelined=pipelined, screens_curve=bc.curve_screens)
        await self.bus.start()
        self._publish()
        self._tasks += [asyncio.create_task(self._watchdog()), asyncio.create_task(self._flush_refusals())]

    async def _watchdog(self) -> None:
        # Ready once the bus is bound (done) and the drivers answered; then ping only while the loop runs.
        status = await self._ready()
        notify("READY=1")
        notify(f"STATUS={status}")
        interval = watchdog_interval()
        while interval:
            await asyncio.sleep(interval)
            notify("WATCHDOG=1")


def _storable(staged: list[tuple[dict[str, Any], Any, Effects]]) -> None:
    """ValueError unless the journal can write every staged record (strict JSON, UTF-8): checked per command,
    so a command's bad args are refused rather than failing the group commit (and stopping the service)."""
    for record, _, _ in staged:
        try:
            canonical_json(record).encode()
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(f"the journal cannot hold its records ({clip(str(exc), 80)})") from None
