"""`croupier bench floor` runs end to end on its own three-node cluster and reports nothing lost, doubled or different, every chain checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli import main
from tests.floor_cluster import floor_missing


@pytest.mark.slow
def test_bench_floor_reports_its_figures_as_json(tmp_path: Path) -> None:
    why = floor_missing()
    if why:
        pytest.skip(why)
    out = tmp_path / "bench.json"
    assert main(["bench", "floor", "--machines", "4", "--rows", "10", "--catchup", "30", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["bench"] == "floor" and figures["ingest_rows"] == 40 and figures["catchup_rows"] == 30
    assert figures["lost"] == 0 and figures["doubled"] == 0
    assert figures["different"] == 0 and figures["chains_broken"] == 0
    # every row checked on the floor: 10 live and 10 queued a machine, the backlog's 1,000 before its outage and 30
    assert figures["floor_rows_checked"] == 4 * 20 + 1000 + 30
    assert figures["ingest_rows_per_s"] > 0 and figures["catchup_rows_per_s"] > 0
    assert figures["ingest_queued_rows_per_s"] > 0
    assert "client_kib_per_machine" in figures and "servers_kib_per_machine" in figures
