"""`croupier floor`: the floor service and its page (`serve`, `--embedded` for a small site), its meters report, a site's credentials, and restoring a machine's journal (needs `pip install -e '.[floor]'`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("floor", help="the floor (NATS JetStream): its service and page, reports, credentials, restore",
                       description="Journals replicated to a NATS JetStream floor (the config's [floor] section).")
    which = p.add_subparsers(dest="floor_command", metavar="ACTION", required=True)
    s = which.add_parser("serve", help="the floor service and its page (--embedded: with its own local server)",
                         description="Ingest every machine's journal subject (the chain checked), fold each machine's "
                                     "rows into its status, meters, alerts and lockups, and serve the floor page "
                                     "(/floor, a token per role) and the meters report (/report/DAY.csv).")
    s.add_argument("--config", type=Path, help="the floor service's config ([service]; optional with --embedded)")
    s.add_argument("--embedded", action="store_true",
                   help="start one local nats-server (JetStream, its store in --state) and serve the floor on it")
    s.add_argument("--state", type=Path, help="the embedded server's folder (default ~/.local/state/croupier/floor, "
                                             "or under $XDG_STATE_HOME)")
    s.add_argument("--nats", default="0.0.0.0:4222", metavar="HOST:PORT",
                   help="where the embedded server listens for machines (default 0.0.0.0:4222)")
    s.add_argument("--site", type=Path, help="with --embedded: TLS and per-machine users from a site made by "
                                            "croupier floor credentials (SITE/servers/embedded, "
                                            "SITE/authorization.conf; the service reads with "
                                            "SITE/services/floor-service unless the config names a credential)")
    s.add_argument("--listen", metavar="HOST:PORT", help="where the page listens (default: [service] listen, "
                                                         "0.0.0.0:8090)")
    s.set_defaults(func=_serve)
    rep = which.add_parser("report", help="the meters report of a gaming day, as CSV",
                           description="Read every row the floor holds (the chain checked), fold each machine's rows "
                                       "and print one CSV line per machine that played in the gaming day.")
    rep.add_argument("--config", type=Path, help="the floor service's config ([service] servers, credentials, "
                                                 "gaming day)")
    rep.add_argument("--servers", help="comma-separated NATS URLs (instead of the config's)")
    rep.add_argument("--day", required=True, metavar="YYYY-MM-DD", help="the gaming day")
    rep.add_argument("--out", type=Path, help="write the CSV here (default: stdout)")
    rep.add_argument("--timeout", type=float, default=60.0, help="seconds to read the floor (default 60)")
    rep.set_defaults(func=_report)
    c = which.add_parser("credentials", help="a site's TLS certificates and per-machine NATS permissions",
                         description="Make (on first use) the site CA in SITE/ca, then a machine's credential folder "
                                     "SITE/machines/ID (ca.pem, cert.pem, key.pem: name it in the machine's [floor] "
                                     "credentials) and its user in SITE/authorization.conf (publish its own journal "
                                     "subject only; a cabinet on --link also its contributions and hits), or the "
                                     "floor service's credential, or a node's certificate.")
    c.add_argument("--site", type=Path, required=True,
                   help="the site's credentials folder (keep SITE/ca off the floor)")
    what = c.add_mutually_exclusive_group(required=True)
    what.add_argument("--machine", metavar="ID", help="a table's, cabinet's or link controller's id")
    what.add_argument("--service", nargs="?", const="floor-service", metavar="NAME",
                      help="the floor service's credential (default name floor-service)")
    what.add_argument("--server", metavar="NAME", help="a nats-server node's certificate (with --host)")
    c.add_argument("--kind", choices=("table", "cabinet", "link"), help="what the machine is (with --machine)")
    c.add_argument("--link", help="the progressive link a cabinet plays on")
    c.add_argument("--host", action="append", default=[], help="a name or address a node is reached by (repeat)")
    c.set_defaults(func=_credentials)
    r = which.add_parser("restore", help="write a replacement machine's journal and anchor from the floor",
                         description="Read every row the floor holds for machine ID, check the chain, write them "
                                     "to the journal the config names (it must not exist), verify every MAC under "
                                     "the config's journal key (the replaced machine's key, from its backup) and "
                                     "make the anchor. `croupier run` then resumes the machine exactly.")
    r.add_argument("machine", metavar="ID", help="the machine whose journal to restore (the config's id)")
    r.add_argument("--config", required=True, help="the replacement machine's config (with its [floor] section)")
    r.add_argument("--credentials", type=Path, help="the credential to read the floor with (default: the config's "
                                                    "[floor] credentials; on a deploy/floor site, the floor "
                                                    "service's folder: a machine's may only write)")
    r.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the floor (default 30)")
    r.set_defaults(func=_restore)


def _restore(args: argparse.Namespace) -> int:
    import asyncio

    from controller.cli import CliError
    from controller.commands._common import load
    from controller.journal import JournalIntegrityError, default_anchor, default_key_file

    cfg = load(args.config)
    if cfg.floor is None:
        raise CliError(f"{args.config}: no [floor] section: which floor holds {args.machine}'s journal?")
    if args.machine != cfg.floor.machine:
        raise CliError(f"{args.config} is the config of {cfg.floor.machine}, not {args.machine}: restore a machine "
                       f"with its own config")
    try:
        from controller.floor.anchor import restore_journal
        from controller.floor.ingest import floor_rows
        from controller.floor.server import connect
    except ImportError as exc:
        raise CliError(f"the floor needs nats-py: pip install -e '.[floor]' ({exc})") from None

    async def fetch() -> list:
        nc = await connect(cfg.floor.servers, credentials=args.credentials or cfg.floor.credentials,
                           name=f"croupier-restore-{args.machine}",
                           max_reconnect_attempts=3)
        try:
            return [row for _, row in await floor_rows(nc.jetstream(timeout=args.timeout), args.machine,
                                                          timeout=args.timeout)]
        finally:
            await nc.close()

    try:
        rows = asyncio.run(asyncio.wait_for(fetch(), args.timeout))
    except Exception as exc:  # noqa: BLE001 - no server, no stream, a timeout: one line, exit 2
        raise CliError(f"cannot read {args.machine}'s journal from the floor {', '.join(cfg.floor.servers)}: "
                       f"{type(exc).__name__}: {exc}") from None
    anchor = cfg.journal_anchor or default_anchor(cfg.journal)
    try:
        count = restore_journal(rows, args.machine, cfg.journal, cfg.journal_key or default_key_file(), anchor)
    except (JournalIntegrityError, FileExistsError) as exc:
        raise CliError(str(exc)) from None
    print(f"journal {cfg.journal} of {args.machine}: {count} rows restored from the floor, every MAC verified under "
          f"its journal key; anchor {anchor} at seq {count}")
    return 0


def _service_config(path: Path | None, embedded: bool) -> Any:
    from controller.cli import CliError
    from controller.floor.service import ServiceConfigError, load_service_config

    try:
        return load_service_config(path, embedded=embedded)
    except ServiceConfigError as exc:
        raise CliError(str(exc)) from None


def _floor_imports() -> None:
    from controller.cli import CliError

    try:
        import nats  # noqa: F401
    except ImportError as exc:
        raise CliError(f"the floor needs nats-py: pip install -e '.[floor]' ({exc})") from None


def default_state() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "croupier" / "floor"


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses
    import signal

    from controller.cli import CliError
    from controller.screens.config import parse_listen

    _floor_imports()
    if args.config is None and not args.embedded:
        raise CliError("croupier floor serve needs --config FILE (the floor's servers), or --embedded")
    cfg = _service_config(args.config, args.embedded)
    tls = None
    if args.site is not None:
        if not args.embedded:
            raise CliError("--site is for --embedded (a cluster's nodes take deploy/floor's configs)")
        node = args.site / "servers" / "embedded"
        tls = {"cert": node / "cert.pem", "key": node / "key.pem", "ca": node / "ca.pem"}
        needed = [*tls.values(), args.site / "authorization.conf", args.site / "services" / "floor-service"]
        missing = [str(p) for p in needed if not p.exists()]
        if missing:
            raise CliError(f"--site {args.site}: no {', '.join(missing)} (croupier floor credentials --site "
                           f"{args.site} --server embedded --host HOST --host 127.0.0.1, then --service and each "
                           f"--machine)")
        if cfg.credentials is None:
            cfg = dataclasses.replace(cfg, credentials=args.site / "services" / "floor-service")
    try:
        if args.listen:
            host, port = parse_listen(args.listen, "--listen")
            cfg = dataclasses.replace(cfg, host=host, port=port)
        nats_host, nats_port = parse_listen(args.nats, "--nats")
    except ValueError as exc:
        raise CliError(str(exc)) from None

    async def run() -> None:
        from controller.floor.embedded import EmbeddedServer
        from controller.floor.page import FloorPage
        from controller.floor.server import wait_ready
        from controller.floor.service import FloorService

        # Handlers first: a SIGTERM while starting still stops the embedded server (no orphaned nats-server).
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        embedded = None
        servers = list(cfg.servers)
        try:
            if args.embedded:
                state = args.state or default_state()
                embedded = EmbeddedServer(state / "nats", nats_host, nats_port, tls=tls,
                                          authorization=args.site / "authorization.conf" if args.site else None)
                embedded.start()
                servers = [embedded.url]
                try:
                    await wait_ready(servers, replicas=cfg.replicas, timeout=30, credentials=cfg.credentials)
                except TimeoutError as exc:
                    raise CliError(f"the embedded nats-server did not start: {exc}; its log: "
                                   f"{state / 'nats' / 'nats.log'}") from None
                scheme = "tls" if tls else "nats"
                print(f"floor: embedded nats-server at {scheme}://{nats_host}:{nats_port}, JetStream in "
                      f"{state / 'nats'}; machines: [floor] servers = [\"{scheme}://<this host>:{nats_port}\"]",
                      flush=True)
            service = FloorService(cfg, servers)
            try:
                await service.start()
            except Exception as exc:  # noqa: BLE001 - no server, no quorum: one line
                raise CliError(f"cannot reach the floor {', '.join(servers)}: {type(exc).__name__}: {exc}") from None
            page = FloorPage(service, cfg.host, cfg.port)
            try:
                await page.start()
            except OSError as exc:
                await service.close()
                raise CliError(f"the floor page cannot listen on {cfg.host}:{cfg.port}: {exc.strerror}") from None
            shown = "127.0.0.1" if cfg.host in ("0.0.0.0", "") else cfg.host
            print(f"floor page: http://{shown}:{page.port}/floor", flush=True)
            for role in cfg.generated:
                print(f"    {role}: http://{shown}:{page.port}/floor?token={cfg.tokens[role]} (a fresh token: set "
                      f"[service.tokens] {role} to keep one)", flush=True)
            await stop.wait()
            await page.close()
            await service.close()
        finally:
            if embedded is not None:
                embedded.stop()
        print("floor: stopped", flush=True)

    asyncio.run(run())
    return 0


def _report(args: argparse.Namespace) -> int:
    import asyncio
    import re

    from controller.cli import CliError
    from controller.floor.report import report_csv
    from controller.floor.service import read_floor

    _floor_imports()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.day):
        raise CliError(f"--day {args.day!r}: expected YYYY-MM-DD")
    if args.config is None and not args.servers:
        raise CliError("croupier floor report needs --config FILE or --servers URL")
    cfg = _service_config(args.config, embedded=bool(args.servers))
    servers = args.servers.split(",") if args.servers else None
    try:
        svc = asyncio.run(read_floor(cfg, servers, args.timeout))
    except Exception as exc:  # noqa: BLE001 - no server, no stream, a timeout: one line, exit 2
        raise CliError(f"cannot read the floor {', '.join(servers or cfg.servers)}: {type(exc).__name__}: {exc}") \
            from None
    text = report_csv(svc.summaries.values(), args.day, svc.link_days)
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")
    return 0


def _credentials(args: argparse.Namespace) -> int:
    from controller.cli import CliError
    from controller.floor.credentials import CredentialsError, add_machine, add_server, add_service

    try:
        if args.machine:
            if not args.kind:
                raise CredentialsError("--machine needs --kind table, cabinet or link")
            folder = add_machine(args.site, args.machine, args.kind, args.link)
            print(f"{args.machine}: credential {folder} (its [floor] credentials = \"{folder}\"); user "
                  f"CN={args.machine} in {args.site / 'authorization.conf'}: copy it to every node, then "
                  f"`systemctl reload nats-server` there")
        elif args.server:
            folder = add_server(args.site, args.server, tuple(args.host))
            print(f"{args.server}: certificate {folder} for {', '.join(args.host)}")
        else:
            folder = add_service(args.site, args.service)
            print(f"{args.service}: credential {folder} (the floor service's [service] credentials; "
                  f"croupier floor restore uses it too)")
    except CredentialsError as exc:
        raise CliError(str(exc)) from None
    return 0
