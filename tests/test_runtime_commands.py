"""Bus commands declared beside their handlers (controller/runtimecommands.py): what a runtime takes, who may send
it, its help, and the refusals the dispatcher journals through the runtime's typed `refused` kind."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from controller.bus import Role
from controller.cabinet import Cabinet
from controller.cabinetrecords import CabinetRefused, cabinet_record
from controller.cli import main
from controller.linkrecords import LinkRefused, link_record
from controller.progressive import LinkController
from controller.runtime import Batch, Runtime, command
from controller.table import Table
from controller.tablerecords import Refused, table_record


class Echo(Runtime):
    """A runtime with two commands of its own (one handler serving two names) and `status` granted to ops."""

    GRANTS = {"status": ("ops",)}
    REFUSED = Refused

    @command("ping", roles=("ops",), help="answer pong")
    def _ping(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "result": "pong"}

    @command("shout", roles=("dealer", "ops"), named=True, help="answer what was said, loud")
    @command("say", roles=("dealer",), named=True, help="answer what was said")
    def _say(self, batch: Batch, role: Role, command: str, args: dict[str, Any]) -> dict[str, Any]:
        batch.add({"kind": "said", "text": str(args["text"])})
        return {"ok": True, "result": str(args["text"]).upper() if command == "shout" else str(args["text"])}


def echo(tmp_path: Path) -> tuple[Echo, Batch]:
    runtime = Echo("echo", tmp_path / "echo.journal", SimpleNamespace(keys=None))
    runtime._views = (1, {"dealer": {"seen": "by ops"}})
    return runtime, Batch(SimpleNamespace(), lambda state, record: (state, ()))


def test_a_runtime_takes_exactly_the_commands_its_handlers_declare_with_their_roles() -> None:
    # its own in the order written (stacked declarations top down), then the granted base's
    assert list(Echo.COMMANDS) == ["ping", "shout", "say", "status"]
    assert Echo.ALLOWED == {"ping": ("ops",), "shout": ("dealer", "ops"), "say": ("dealer",), "status": ("ops",)}
    assert [c.help for c in Echo.COMMANDS.values()] == ["answer pong", "answer what was said, loud",
                                                        "answer what was said",
                                                        "the sender's view of the state, as its screen shows it"]
    assert [c.read_only for c in Echo.COMMANDS.values()] == [False, False, False, True]
    assert Echo.COMMANDS["say"].method == Echo.COMMANDS["shout"].method == "_say"
    assert Echo.COMMANDS["say"].named and not Echo.COMMANDS["ping"].named


def test_granting_a_command_nobody_handles_is_an_error_where_the_class_is_written() -> None:
    with pytest.raises(TypeError, match="Typo grants commands it has no handler for: stauts"):
        class Typo(Runtime):
            GRANTS = {"stauts": ("ops",)}


def test_the_dispatcher_calls_the_handler_and_journals_refusals_as_the_runtimes_refused_kind(tmp_path: Path) -> None:
    runtime, batch = echo(tmp_path)
    assert runtime._command(batch, Role("ops"), "ping", {}) == {"ok": True, "result": "pong"}
    assert runtime._command(batch, Role("ops"), "shout", {"text": "hi"}) == {"ok": True, "result": "HI"}  # told which
    assert runtime._command(batch, Role("ops"), "status", {}) == {"ok": True, "result": {"seen": "by ops"}}
    assert runtime._command(batch, Role("dealer"), "ping", {}) == {"ok": False, "error": "dealer may not ping"}
    assert runtime._command(batch, Role("ops"), "meters", {}) == {
        "ok": False, "error": "unknown command 'meters' (commands: ping, say, shout, status)"}
    assert runtime._command(batch, Role("dealer"), "say", {}) == {"ok": False, "error": "malformed say: 'text'"}
    records = [record for record, _, _ in batch.staged]
    assert records == [
        {"kind": "said", "text": "hi"},
        {"kind": "refused", "who": "dealer", "reason": "dealer may not ping",
         "request": {"command": "ping", "args": {}}},
        {"kind": "refused", "who": "ops", "reason": "unknown command 'meters' (commands: ping, say, shout, status)",
         "request": {"command": "meters", "args": {}}},
        {"kind": "refused", "who": "dealer", "reason": "malformed say: 'text'",
         "request": {"command": "say", "args": {}}},
    ]
    assert all(isinstance(table_record(r), Refused) for r in records[1:])


@pytest.mark.parametrize("runtime, kind, read", [(Table, Refused, table_record), (Cabinet, CabinetRefused, cabinet_record),
                                                 (LinkController, LinkRefused, link_record)])
def test_each_runtime_journals_its_refusals_as_its_own_family_s_refused_kind_byte_for_byte(
        runtime: type[Runtime], kind: type, read: Any) -> None:
    assert runtime.REFUSED is kind
    record = runtime._refusal(runtime.__new__(runtime), "x" * 70, "no", None, {"10.0.0.1": 3})
    assert record == {"kind": "refused", "who": "x" * 63 + "…", "reason": "no", "request": None,
                      "left_out": {"10.0.0.1": 3}}
    assert isinstance(read(record), kind) and read(record).to_json() == record
    assert "left_out" not in runtime._refusal(runtime.__new__(runtime), "bus", "no", {"peer": "a"}, 0)


@pytest.mark.parametrize("runtime", [Table, Cabinet, LinkController])
def test_every_command_has_its_roles_a_line_of_help_and_a_handler(runtime: type[Runtime]) -> None:
    for name, spec in runtime.COMMANDS.items():
        assert spec.name == name and spec.roles and spec.help and "\n" not in spec.help
        assert callable(getattr(runtime, spec.method)), name


def test_croupier_command_list_prints_every_runtime_s_commands_from_their_declarations(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["command", "--list"]) == 0
    expected = [line for heading, runtime in (("table:", Table), ("slot cabinet:", Cabinet),
                                              ("progressive link:", LinkController))
                for line in [heading, *(f"  {c.name} ({', '.join(c.roles)}): {c.help}"
                                        for c in runtime.COMMANDS.values())]]
    out = capsys.readouterr().out.splitlines()
    assert out == expected
    assert "  place_bet (dealer, spot): set a box's stake at a spot (spot, box, amount)" in out
    assert main(["command"]) == 2
    assert capsys.readouterr().err.strip().endswith("name a command (croupier command --list lists them)")
