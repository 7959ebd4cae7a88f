"""The floor service (`croupier floor serve`): ingests every machine's journal subject with the floor's chain check, folds each machine's rows into its summary, and serves the floor page.

    [service]
    servers = ["tls://floor1:4222", "tls://floor2:4222", "tls://floor3:4222"]
    credentials = "/etc/croupier/floor/service"  # its credential: a folder (ca.pem, cert.pem, key.pem) or a .creds file
    replicas = 3                  # the journal stream's replicas (the service makes the stream)
    listen = "0.0.0.0:8090"       # the floor page
    gaming_day_start = 6          # gaming days run from 06:00 to 06:00
    timezone = "Europe/London"    # of the gaming day; default: this machine's local time
    offline_after = 600           # seconds without a row before a machine shows offline
    pool_stream = "CROUPIER_LINK"  # the progressives' stream, shown when it exists
    [service.tokens]              # a token file per role (one word, 16+ characters); unset: made up at start
    supervisor = "supervisor.token"   # the page
    accounting = "accounting.token"   # the page and the meters report
    [service.paytables]           # cabinets whose config sets a starting paytable other than 0
    myow-1 = 2

Floor-engine links (controller/floor/progressive_fold.py): every link with a subject on the progressive stream
`CROUPIER_LINK` is folded by a progressive.PoolFollower of its own (the readers' consumer and the pure fold, from
the stream's first message), so the page shows its pool, last hit and balance as any reader would.

Reading the stream reuses ingest.IngestChecker (its cursor, its consumer made again after any failure, its
chain check); each row that passes is folded into its machine's summary (summary.fold_row). Every `refresh`
seconds the stream's per-subject counts say which machines moved, and their last messages where each stands
on the floor, so the page shows rows the service has not folded yet.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from controller.floor.ingest import IngestChecker
from controller.floor.progressive import PoolFollower
from controller.floor.progressive_fold import STREAM as LINK_STREAM
from controller.floor.progressive_fold import SUBJECT_PREFIX as LINK_PREFIX
from controller.floor.progressive_fold import Open, PoolState, ProgressiveWireError, decode_message, link_filter
from controller.floor.summary import LinkDays, MachineSummary, fold_row, link_day_step, new_summary
from controller.floor.wire import STREAM, SUBJECT_PREFIX, FloorWireError, decode_rows, machine_of
from drivers.configreader import read_toml

__all__ = ["ServiceConfig", "load_service_config", "service_config_from_mapping", "FloorService", "ROLES",
           "ServiceConfigError", "read_floor"]

log = logging.getLogger("croupier.floor")

# What each role's token opens: the page (and its JSON), the meters report.
ROLES: dict[str, frozenset[str]] = {"supervisor": frozenset({"page"}), "accounting": frozenset({"page", "report"})}
_KEYS = {"servers", "credentials", "replicas", "listen", "gaming_day_start", "timezone", "offline_after",
         "pool_stream", "tokens", "paytables"}
MIN_TOKEN = 16


class ServiceConfigError(ValueError):
    """A floor service config that cannot be used; the message names the key."""


@dataclass(frozen=True)
class ServiceConfig:
    servers: tuple[str, ...] = ()
    credentials: Path | None = None
    replicas: int = 3
    host: str = "0.0.0.0"
    port: int = 8090
    start_hour: int = 6
    timezone: str | None = None
    offline_after: float = 600.0
    pool_stream: str = "CROUPIER_LINK"
    tokens: Mapping[str, str] = field(default_factory=dict)   # role -> token
    generated: tuple[str, ...] = ()                            # roles whose token was made up at start
    paytables: Mapping[str, int] = field(default_factory=dict)
    path: Path | None = None

    @property
    def tz(self) -> Any:
        return ZoneInfo(self.timezone) if self.timezone else None


def _read_token(path: Path, where: str) -> str:
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise ServiceConfigError(f"{where}: cannot read {path}: {exc.strerror} (make one: python3 -c 'import "
                                 f"secrets; print(secrets.token_urlsafe(24))' > {path})") from None
    if len(token) < MIN_TOKEN or any(c.isspace() for c in token):
        raise ServiceConfigError(f"{where}: the token in {path} must be one word of at least {MIN_TOKEN} characters")
    return token


def service_config_from_mapping(data: Mapping[str, Any], base: Path, path: Path | None = None, *,
                                embedded: bool = False) -> ServiceConfig:
    """Validate a floor service config's [service] table; ServiceConfigError naming the key."""
    from controller.screens.config import parse_listen

    unknown_top = sorted(set(data) - {"service"})
    if unknown_top:
        raise ServiceConfigError(f"{path or 'config'}: unknown section(s) {', '.join(unknown_top)} (known: service)")
    s = data.get("service", {})
    where = f"{path or 'config'}[service]"
    if not isinstance(s, Mapping):
        raise ServiceConfigError(f"{where}: expected a table")
    extra = sorted(set(s) - _KEYS)
    if extra:
        raise ServiceConfigError(f"{where}: unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(_KEYS))})")
    servers = s.get("servers", [])
    if not isinstance(servers, list) or not all(isinstance(u, str) and u.startswith(("nats://", "tls://"))
                                                for u in servers):
        raise ServiceConfigError(f"{where}.servers: a list of nats:// or tls:// URLs")
    if not servers and not embedded:
        raise ServiceConfigError(f"{where}.servers: which NATS servers hold the floor? (or run it --embedded)")

    def num(key: str, default: Any, kind: type, low: float, high: float) -> Any:
        value = s.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int) \
                or not low <= value <= high:
            raise ServiceConfigError(f"{where}.{key}: expected a number from {low:g} to {high:g}, got {value!r}")
        return kind(value)

    replicas = num("replicas", 1 if embedded else 3, int, 1, 5)
    start_hour = num("gaming_day_start", 6, int, 0, 23)
    offline_after = num("offline_after", 600, float, 1, 7 * 86400)
    listen = s.get("listen", "0.0.0.0:8090")
    if not isinstance(listen, str):
        raise ServiceConfigError(f"{where}.listen: expected HOST:PORT")
    try:
        host, port = parse_listen(listen, f"{where}.listen")
    except ValueError as exc:
        raise ServiceConfigError(str(exc)) from None
    timezone = s.get("timezone")
    if timezone is not None:
        try:
            ZoneInfo(str(timezone))
        except (ZoneInfoNotFoundError, ValueError):
            raise ServiceConfigError(f"{where}.timezone: no time zone {timezone!r} (e.g. \"Europe/London\")") from None
    creds = s.get("credentials")
    if creds is not None and not isinstance(creds, str):
        raise ServiceConfigError(f"{where}.credentials: expected a path")
    pool_stream = s.get("pool_stream", "CROUPIER_LINK")
    if not isinstance(pool_stream, str) or not pool_stream:
        raise ServiceConfigError(f"{where}.pool_stream: expected a stream name")
    raw_tokens = s.get("tokens", {})
    if not isinstance(raw_tokens, Mapping) or sorted(set(raw_tokens) - set(ROLES)):
        raise ServiceConfigError(f"{where}.tokens: a token file per role ({', '.join(ROLES)})")
    tokens, generated = {}, []
    for role in ROLES:
        if role in raw_tokens:
            if not isinstance(raw_tokens[role], str):
                raise ServiceConfigError(f"{where}.tokens.{role}: expected a file name")
            tokens[role] = _read_token(base / raw_tokens[role], f"{where}.tokens.{role}")
        else:
            tokens[role] = secrets.token_urlsafe(18)
            generated.append(role)
    if len(set(tokens.values())) != len(tokens):
        raise ServiceConfigError(f"{where}.tokens: each role needs its own token")
    paytables = s.get("paytables", {})
    if not isinstance(paytables, Mapping) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                     for v in paytables.values()):
        raise ServiceConfigError(f"{where}.paytables: cabinet id = starting paytable (a whole number)")
    return ServiceConfig(tuple(servers), base / creds if creds else None, replicas, host, port, start_hour,
                         str(timezone) if timezone else None, offline_after, pool_stream, tokens, tuple(generated),
                         dict(paytables), path)


def load_service_config(path: Path | None, *, embedded: bool = False) -> ServiceConfig:
    """A floor service config file (None: the defaults, for --embedded)."""
    if path is None:
        return service_config_from_mapping({}, Path.cwd(), embedded=embedded)
    data = read_toml(path, ServiceConfigError)
    return service_config_from_mapping(data, path.parent, path, embedded=embedded)


@dataclass
class _Folding(IngestChecker):
    """The ingest check, and each row that passes it folded into its machine's summary."""

    service: Any = None

    def take(self, stream_seq: int, subject: str, data: bytes, header_id: str | None) -> None:
        try:
            machine = machine_of(subject)
        except FloorWireError:
            machine = None
        before = self.chains.get(machine) if machine else None
        super().take(stream_seq, subject, data, header_id)
        if machine is None:
            return
        after = self.chains.get(machine)
        if after is not None and after is not before:
            for row in decode_rows(data):  # a message carries a batch of rows
                self.service.fold(machine, row)


@dataclass
class _LinkFolding(PoolFollower):
    """A floor-engine link's fold (the readers' follower), and what each message added kept per gaming day."""

    start_hour: int = 6
    tz: Any = None
    days: LinkDays = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.days is None:
            self.days = LinkDays(self.link)

    def take(self, seq: int, subject: str, data: bytes) -> None:
        before = self.state
        super().take(seq, subject, data)
        if self.state.contributions == before.contributions and self.state.hits == before.hits:
            return  # an open, a duplicate, a refusal: no meter moved
        msg = decode_message(subject, data)  # it decoded in the fold: its time is the cabinet's
        ts_ns = 0 if isinstance(msg, Open) else msg.ts_ns
        self.days = link_day_step(self.days, before, self.state, ts_ns, start_hour=self.start_hour, tz=self.tz)


class FloorService:
    """`await start()` (connects, makes the journal stream if the cluster has none, starts reading),
    `await close()`. `summaries`, `held`, `pools`, `link_pools` and `broken` are what the page shows."""

    def __init__(self, cfg: ServiceConfig, servers: list[str] | None = None, refresh: float = 1.0) -> None:
        self.cfg = cfg
        self.servers = list(servers or cfg.servers)
        self.refresh = refresh
        self.summaries: dict[str, MachineSummary] = {}
        self.held: dict[str, int] = {}            # rows the stream holds per machine (last refresh)
        self._messages: dict[str, int] = {}       # messages per subject when `held` was last read
        self.pools: dict[str, int] | None = None  # link subject -> messages, when the pool stream exists
        self.checker = _Folding(service=self)
        self.followers: dict[str, _LinkFolding] = {}  # floor-engine link -> the fold of its messages
        self.refreshed = asyncio.Event()
        self._nc: Any = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._tz = cfg.tz
        self._closing = asyncio.Event()

    @property
    def broken(self) -> dict[str, str]:
        return self.checker.broken

    @property
    def link_pools(self) -> dict[str, PoolState]:
        """Each floor-engine link's pool as folded so far."""
        return {link: f.state for link, f in self.followers.items()}

    @property
    def link_days(self) -> list[LinkDays]:
        """Each floor-engine link's meters per gaming day (the meters report's `floor-link` lines)."""
        return [f.days for f in self.followers.values()]

    def fold(self, machine: str, row: Any) -> None:
        summary = self.summaries.get(machine) or new_summary(machine)
        self.summaries[machine] = fold_row(summary, row, start_hour=self.cfg.start_hour, tz=self._tz,
                                           paytable=self.cfg.paytables.get(machine, 0))

    async def start(self, timeout: float = 30.0, create: bool = True) -> None:
        """Connect and start reading; `create`: make the journal stream if the floor has none (the service's job)."""
        from controller.floor.server import connect, ensure_journal_stream

        self._nc = await connect(self.servers, credentials=self.cfg.credentials, name="croupier-floor-service")
        js = self._nc.jetstream(timeout=2.0)
        if create:
            try:
                await ensure_journal_stream(js, replicas=self.cfg.replicas, timeout=timeout)
            except BaseException:
                await self.close()
                raise
        self._tasks = [asyncio.create_task(self.checker.run(js)), asyncio.create_task(self._refresh(js))]

    async def close(self) -> None:
        # The loops end on these flags too: nats-py may swallow a cancel that lands inside one of its requests.
        self._closing.set()
        self.checker.stop()
        for follower in self.followers.values():
            follower.stop()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        if self._nc is not None:
            try:
                await self._nc.close()
            except Exception:  # noqa: BLE001 - closing a connection to a floor that is gone
                pass
            self._nc = None

    async def _refresh(self, js: Any) -> None:
        from nats.js.errors import NotFoundError

        while not self._closing.is_set():
            try:
                info = await js.stream_info(STREAM, subjects_filter=SUBJECT_PREFIX + ">")
                await self._held_rows(js, {s: n for s, n in (info.state.subjects or {}).items()
                                           if s.startswith(SUBJECT_PREFIX)})
                try:
                    pools = await js.stream_info(self.cfg.pool_stream, subjects_filter=">")
                    self.pools = dict(pools.state.subjects or {})
                except NotFoundError:
                    self.pools = None
                await self._follow_links(js)
                self.refreshed.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - no quorum for a moment: keep the last counts
                log.warning("floor service: stream counts not read: %r", exc)
            try:  # a periodic poll, not a synchronisation; a close ends the wait at once
                await asyncio.wait_for(self._closing.wait(), self.refresh)
            except asyncio.TimeoutError:
                pass

    async def _follow_links(self, js: Any) -> None:
        """A follower for each floor-engine link the progressive stream has a subject of and none follows yet."""
        from nats.js.errors import NotFoundError

        if self.cfg.pool_stream == LINK_STREAM:
            subjects = set(self.pools or ())
        else:
            try:
                info = await js.stream_info(LINK_STREAM, subjects_filter=LINK_PREFIX + ">")
                subjects = set(info.state.subjects or ())
            except NotFoundError:
                subjects = set()
        for subject in sorted(subjects):
            link = subject[len(LINK_PREFIX):].split(".")[0] if subject.startswith(LINK_PREFIX) else ""
            if not link or link in self.followers:
                continue
            try:
                link_filter(link)
            except ProgressiveWireError as exc:  # not a link any cabinet could publish for: nothing to fold
                log.warning("floor service: progressive subject %s: %s", subject, exc)
                continue
            follower = self.followers[link] = _LinkFolding(link, start_hour=self.cfg.start_hour, tz=self._tz)
            self._tasks.append(asyncio.create_task(follower.run(js)))

    async def _held_rows(self, js: Any, messages: dict[str, int]) -> None:
        """The floor's last row per machine: a message carries a batch of rows, so a subject's message count is
        not its rows; the last message of each subject whose count moved says where its machine stands."""
        for subject, count in messages.items():
            if self._messages.get(subject) == count:
                continue
            last = await js.get_last_msg(STREAM, subject)
            self.held[machine_of(subject)] = decode_rows(last.data or b"")[-1].seq
            self._messages[subject] = count

    async def wait_for(self, predicate: Any, timeout: float) -> bool:
        """Wait until predicate(self) holds, tested after each batch the service reads; False on timeout."""
        return await self.checker.wait_for(lambda _: predicate(self), timeout)

    def now_ns(self) -> int:
        return time.time_ns()


async def _read_links(svc: FloorService, timeout: float) -> None:
    """Wait until every floor-engine link the service's first refresh found is folded to its last message."""
    from nats.js.errors import NotFoundError

    if not await svc.wait_for(lambda s: s.refreshed.is_set(), timeout):
        raise TimeoutError(f"the floor's stream counts were not read in {timeout:g} s")
    js = svc._nc.jetstream(timeout=timeout)
    try:
        info = await js.stream_info(LINK_STREAM, subjects_filter=LINK_PREFIX + ">")
    except NotFoundError:
        return
    last: dict[str, int] = {}
    for subject in info.state.subjects or {}:
        link = subject[len(LINK_PREFIX):].split(".")[0]
        if link in svc.followers:
            msg = await js.get_last_msg(LINK_STREAM, subject)
            last[link] = max(last.get(link, 0), msg.seq)
    if not await svc.wait_for(lambda s: all(s.followers[k].state.seq >= n for k, n in last.items()), timeout):
        raise TimeoutError(f"the floor's progressive links were not read in {timeout:g} s")


async def read_floor(cfg: ServiceConfig, servers: list[str] | None = None, timeout: float = 60.0) -> FloorService:
    """Every row the floor holds now, checked and folded (the report command): a closed service with its summaries
    and its floor-engine links' folds (`link_pools`, `link_days`)."""
    svc = FloorService(cfg, servers)
    await svc.start(timeout=timeout, create=False)
    try:
        info = await svc._nc.jetstream(timeout=timeout).stream_info(STREAM)
        last = info.state.last_seq
        if not await svc.wait_for(lambda s: s.checker.cursor >= last, timeout):
            raise TimeoutError(f"read {svc.checker.cursor} of {last} rows of the floor in {timeout:g} s")
        await _read_links(svc, timeout)
    finally:
        await svc.close()
    return svc
