"""`croupier sas-host PORT`: poll an EGM over SAS as a floor system would, and print its meters, exceptions and ROM signature (the slot technician's wiring and address check)."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sas-host", help="poll an EGM over SAS: meters, exceptions, ROM signature",
                       description="Poll one EGM address over SAS like a floor system (the technician's check of "
                                   "wiring and addresses): machine information, meters, credits, ROM signature, "
                                   "then its exceptions as they come.")
    p.add_argument("port", metavar="PORT", help="the SAS line: /dev/ttyUSB0, a /dev/serial/by-id link, a pty "
                                                "(croupier demo --sas-pty) or a pyserial URL")
    p.add_argument("--address", type=int, default=1, help="the EGM's SAS address, 1..127 (default 1)")
    p.add_argument("--seed", type=lambda v: int(v, 0), default=0, help="ROM signature seed (default 0)")
    p.add_argument("--polls", type=int, default=20, help="general polls for exceptions, 0: until Ctrl-C (default 20)")
    p.add_argument("--period", type=float, default=0.05, help="seconds between general polls (default 0.05)")
    p.add_argument("--timeout", type=float, default=0.2, help="seconds to wait for each response (default 0.2)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import time

    from controller.cli import CliError
    from controller.sas_host import EXCEPTION_NAMES, METER_NAMES, HostError, SasHost

    if not 1 <= args.address <= 127:
        raise CliError(f"--address: 1..127, got {args.address}")
    try:
        host = SasHost(args.port, args.address, timeout=args.timeout)
    except OSError as exc:
        raise CliError(f"cannot open {args.port}: {exc.strerror or exc}") from None
    out: dict[str, Any] = {"port": args.port, "address": args.address}
    say = (lambda line: None) if args.json else (lambda line: print(line, flush=True))
    try:
        try:
            out["machine"] = host.machine_info()
        except HostError as exc:
            raise CliError(f"no answer from address {args.address} on {args.port}: check the wiring, the "
                           f"address and the baud rate ({exc})") from None
        version, serial = host.version()
        out.update(sas_version=version, serial=serial, credits=host.credits(), meters=host.meters(),
                   rom_signature=f"{host.rom_signature(args.seed):04X}", rom_seed=f"{args.seed:04X}",
                   selected_meters={METER_NAMES.get(c, f"{c:02X}"): v for c, v in
                                    host.selected_meters(list(range(0x0D))).items()},
                   date_time=host.date_time().isoformat(), features=host.enabled_features())
        m = out["machine"]
        say(f"EGM at address {args.address}: game {m['game_id']} paytable {m['paytable']} (base {m['base_percent']}), "
            f"SAS {version}, serial {serial}, clock {out['date_time']}")
        say(f"ROM signature (seed {args.seed:04X}): {out['rom_signature']}")
        say(f"credits {out['credits']}; meters: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in
                                                              out["meters"].items()))
        exceptions: list[dict[str, Any]] = []
        n = 0
        while args.polls == 0 or n < args.polls:
            n += 1
            code, data = host.general_poll()
            if code:
                exceptions.append({"code": f"{code:02X}", "name": EXCEPTION_NAMES.get(code, "?"),
                                   **({"data": data.hex()} if data else {})})
                say(f"exception {code:02X}: {EXCEPTION_NAMES.get(code, 'unknown')}")
            else:
                time.sleep(args.period)  # the host's poll rate, not a synchronisation
        out["exceptions"] = exceptions
        out["line"] = vars(host.stats)
    except HostError as exc:
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        pass
    finally:
        host.close()
    if args.json:
        print(json.dumps(out, indent=2))
    return 0
