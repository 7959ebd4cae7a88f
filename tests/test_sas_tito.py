"""SAS notes and tickets over a pty, host against EGM, driven from the journal: the bill and ticketing polls, the exceptions in order with the host's implied acknowledgement, a ticket redeemed once and refused (unknown, already redeemed), and a power cycle in the middle of a redemption.

The host is the technician's (controller/sas_host.py, written apart from the EGM) with its small ticket system
(controller/ticketsystem.py). The note, ticket and device records are written here as the cabinet's validator would
write them; tests/test_sas_tito_cabinet.py runs the same with the cabinet's own devices, printer included.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from controller import cabinetrecords as cr
from controller.ticketsystem import Ticket, TicketSystem
from tests.cabinet_helpers import journal as records, replayed, run, started
from tests.sas_helpers import drain, host_for, note_in, polled, sas_cabinet_config, write

V = "001234567890123456"
UNKNOWN = "009999999999999999"


def test_the_bill_and_ticketing_polls_over_the_line(tmp_path: Path) -> None:
    cfg = sas_cabinet_config(tmp_path, accounting_denomination=1, asset_number=0x0102)

    async def main() -> dict[str, Any]:
        cab = await started(cfg)
        host = host_for(cab)
        await polled(lambda: drain(host))
        await write(cab, *note_in(2000, cfg.denomination), *note_in(500, cfg.denomination))
        out: dict[str, Any] = {"codes": await polled(lambda: drain(host))}
        await polled(lambda: host.enable_bills(False))
        await polled(lambda: host.enable_bills(False))  # unchanged: ACKed, nothing journaled
        await polled(lambda: host.configure_bills([1, 5, 20, 100]))
        await polled(lambda: host.enable_bills(True))
        out["bills"] = (cab.sas.state.bills, cab.sas.state.notes)
        out["reads"] = await polled(lambda: {
            "meters": host.bill_meters(), "value": host.bill_value(), "twenties": host.bills_in(20),
            "fives": host.bills_in(5), "last": host.last_bill(), "out": host.validation_meters(0x00),
            "in": host.validation_meters(0x80), "pending": host.pending_cashout(),
            "escrow": host.ticket_validation_data(), "status": host.ticket_status(),
            "4D": host.validation_info(0), "selected": host.selected_meters([0x0B, 0x0D, 0x0E, 0x11, 0x44])})
        out["7B"] = await polled(lambda: host.extended_validation_status(0x0008, 0x0008, 0, 60))
        out["7C"] = await polled(lambda: host.set_extended_ticket_data({0x00: "Croupier Casino", 0x10: "PLAY ONLY"}))
        out["7C bad"] = await polled(lambda: host.set_extended_ticket_data({0x10: "A TITLE TOO LONG FOR IT"}))
        out["7D"] = await polled(lambda: host.set_ticket_data(7, 30, "", "1 Main Street", "Reno NV"))
        out["ticketing"] = cab.sas.state.ticketing
        host.close()
        await cab.stop()
        return out

    out = run(main())
    m = replayed(cfg).meters
    notes = dict(m.notes_in)
    assert out["codes"] == [0x4A, 0x48]  # $20, then $5 accepted, in order
    assert out["bills"] == (True, (100, 500, 2000, 10000))
    r = out["reads"]
    assert r["meters"] == {1: 0, 5: notes.get(500, 0), 10: 0, 20: notes.get(2000, 0), 50: 0, 100: 0}
    assert r["value"] == m.notes_in_cents // 100 and r["twenties"] == notes.get(2000, 0)
    assert r["last"] == {"country": 37, "denomination": 2, "count": notes.get(500, 0)}  # the $5 came last
    assert r["out"] == (m.tickets_out_cashable, m.tickets_out_cashable_cents)
    assert r["in"] == (m.tickets_in_cashable, m.tickets_in_cashable_cents)
    assert r["pending"] == (0x80, 0) and r["escrow"] is None and r["status"]["status"] == 0xFF and r["4D"] is None
    assert r["selected"] == {0x0B: m.notes_in_cents, 0x0D: m.tickets_in_cashable_cents,
                             0x0E: m.tickets_out_cashable_cents, 0x11: m.tickets_in_cashable,
                             0x44: notes.get(2000, 0)}
    assert out["7B"] == {"asset": 0x0102, "status": 0x0029, "cashable": 30, "restricted": 60}
    assert (out["7C"], out["7C bad"], out["7D"]) == (1, 0, 1)
    t = out["ticketing"]
    assert (t.status, t.restricted_expiry, t.location, t.restricted_title, t.host_id, t.address1, t.address2) == \
        (0x29, 60, "Croupier Casino", "PLAY ONLY", 7, "1 Main Street", "Reno NV")
    sas = [(r["what"], {k: v for k, v in r.items() if k not in ("kind", "what")})
           for r in records(cfg) if r["kind"] == "sas" and r["what"] in ("bills", "ticketing")]
    assert sas == [("bills", {"enabled": False}), ("bills", {"enabled": False, "notes": [100, 500, 2000, 10000]}),
                   ("bills", {"enabled": True}), ("ticketing", {"status": 0x29, "restricted_expiry": 60}),
                   ("ticketing", {"location": "Croupier Casino", "restricted_title": "PLAY ONLY"}),
                   ("ticketing", {"host_id": 7, "cashable_expiry": 30, "address1": "1 Main Street",
                                  "address2": "Reno NV"})]


def test_device_and_ticket_exceptions_come_in_order_and_leave_when_acknowledged(tmp_path: Path) -> None:
    cfg = sas_cabinet_config(tmp_path)

    async def main() -> dict[str, Any]:
        cab = await started(cfg)
        host = host_for(cab)
        await polled(lambda: drain(host))
        out: dict[str, Any] = {}
        await polled(lambda: host.real_time_events(True))
        await write(cab, *note_in(10000, cfg.denomination))
        out["rte"] = await polled(host.general_poll)
        await polled(lambda: host.real_time_events(False))
        await write(cab, cr.DeviceFault("validator", "jam"), cr.DeviceCleared("validator", "jam"),
                    cr.NoteRejected("counterfeit"),
                    cr.DeviceFault("printer", "paper_low"), cr.DeviceFault("validator", "stacker_open"),
                    cr.DeviceCleared("validator", "stacker_open"), cr.DeviceFault("printer", "offline"),
                    cr.DeviceCleared("printer", "offline"), cr.TicketInInserted(V))
        out["first"] = await polled(host.general_poll)
        os.write(host.port.fd, b"\x81")  # the same general poll again, no acknowledgement between: the same one
        out["again"] = await polled(lambda: host.port.recv(1, time.monotonic() + 1))
        out["rest"] = await polled(lambda: drain(host))
        out["queue"] = cab.sas.state.queue
        acks = lambda s: sum(r.get("what") == "ack" for r in records(cfg)) >= 10  # noqa: E731 - journaled after
        assert await cab.wait_for(acks, 5)
        host.close()
        await cab.stop()
        return out

    out = run(main())
    assert out["first"] == (0x67, b"") and out["again"] == b"\x67"  # ticket inserted jumps the queue
    assert out["rest"] == [0x28, 0x2C, 0x74, 0x1B, 0x1C, 0x75, 0x76]
    count = dict(replayed(cfg).meters.notes_in).get(10000, 0)
    assert out["rte"] == (0x4F, bytes.fromhex("3707") + bytes.fromhex(f"{count:08d}"))  # $100: code 07
    assert out["queue"] == ()
    acked = [r["code"] for r in records(cfg) if r["kind"] == "sas" and r["what"] == "ack"]
    assert acked[:10] == [0x17, 0x4C, 0x67, 0x28, 0x2C, 0x74, 0x1B, 0x1C, 0x75, 0x76]  # each once, as reported


def test_a_ticket_is_redeemed_once_end_to_end(tmp_path: Path) -> None:
    cfg = sas_cabinet_config(tmp_path)

    async def main() -> dict[str, Any]:
        cab = await started(cfg)
        host = host_for(cab)
        system = TicketSystem(host)
        system.tickets[V] = Ticket(2500, False)  # printed by another machine on the floor
        await polled(lambda: drain(host))
        out: dict[str, Any] = {}
        await write(cab, cr.TicketInInserted(V))
        out["inserted"] = await polled(system.poll)                  # 67 -> 70 -> 71 authorise
        out["pending"] = (cab.sas.state.redemption, system.tickets[V].state)
        await write(cab, cr.TicketInStacked(V, 2500, 500, False))     # the cabinet stacks it
        out["stacked"] = await polled(system.poll)                   # 68 -> 71 status: redeemed
        out["status"] = await polled(host.ticket_status)
        await write(cab, cr.TicketInInserted(V))                     # the same ticket again
        out["again"] = await polled(system.poll)
        await write(cab, cr.TicketInReturned(V, "refused"))
        out["returned"] = await polled(system.poll)
        out["again status"] = await polled(host.ticket_status)
        await write(cab, cr.TicketInInserted(UNKNOWN))
        await polled(system.poll)
        await write(cab, cr.TicketInReturned(UNKNOWN, "refused"))
        await polled(system.poll)
        out["unknown status"] = await polled(host.ticket_status)
        out["log"] = system.log
        out["state"] = system.tickets[V].state
        host.close()
        await cab.stop()
        return out

    out = run(main())
    assert out["inserted"] == [0x67] and out["stacked"] == [0x68]
    r, state = out["pending"]
    assert (r.status, r.cents, state) == (0x40, 2500, "pending")
    assert out["status"] == {"status": 0x00, "cents": 2500, "validation": V}  # cashable ticket redeemed
    assert out["again"] == [0x67] and out["returned"] == [0x68]
    assert out["again status"] == {"status": 0x80, "cents": 0, "validation": V}  # rejected by the host
    assert out["unknown status"] == {"status": 0x80, "cents": 0, "validation": UNKNOWN}
    assert out["state"] == "redeemed"
    tickets = [{k: v for k, v in r.items() if k != "kind"} for r in records(cfg) if r["kind"] == "ticket_in"]
    assert tickets == [
        {"what": "inserted", "validation": V},
        {"what": "authorised", "validation": V, "cents": 2500, "restricted": False, "code": 0},
        {"what": "stacked", "validation": V, "cents": 2500, "credits": 500, "restricted": False},
        {"what": "inserted", "validation": V},
        {"what": "refused", "validation": V, "reason": "ticket already redeemed", "code": 0x84},
        {"what": "returned", "validation": V, "reason": "refused"},
        {"what": "inserted", "validation": UNKNOWN},
        {"what": "refused", "validation": UNKNOWN, "reason": "validation number not in system", "code": 0x82},
        {"what": "returned", "validation": UNKNOWN, "reason": "refused"},
    ]


def test_a_power_cycle_mid_redemption_keeps_its_state_and_exceptions(tmp_path: Path) -> None:
    cfg = sas_cabinet_config(tmp_path)

    async def first() -> None:
        cab = await started(cfg)
        host = host_for(cab)
        system = TicketSystem(host)
        system.tickets[V] = Ticket(1500, False)
        await polled(lambda: drain(host))
        await write(cab, cr.TicketInInserted(V))
        await polled(system.poll)
        await write(cab, cr.TicketInStacked(V, 1500, 300, False))  # 68 queued, then the power goes
        host.close()
        await cab.stop()

    async def second() -> dict[str, Any]:
        cab = await started(cfg)
        host = host_for(cab)
        out = {"codes": await polled(lambda: drain(host)), "status": await polled(host.ticket_status)}
        host.close()
        await cab.stop()
        return out

    run(first())
    out = run(second())
    assert out["codes"] == [0x68, 0x18, 0x17]
    assert out["status"] == {"status": 0x00, "cents": 1500, "validation": V}
