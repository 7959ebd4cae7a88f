"""`croupier bench screens --fanout` and `--pages` at a small size: the JSON's keys and that its figures add up (never timing thresholds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.screens.browser import missing


@pytest.mark.slow
def test_bench_screens_fanout_reports_the_last_clients_latency_and_the_bridges_cpu(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    path = tmp_path / "fanout.json"
    assert main(["bench", "screens", "--fanout", "--clients", "5", "--updates", "10", "--pace", "0.02",
                 "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "publish -> last client" in out and "bridge CPU" in out
    report = json.loads(path.read_text())
    assert report["bench"] == "screens" and report["part"] == "fanout"
    assert report["clients"] == 5 and report["updates"] >= 10 and report["goal_p99_ms"] == 20
    # Every client held every update the table published in the measured window, none was dropped.
    assert report["updates_seen"] >= 10 and report["missed"] == 0 and report["clients_closed"] == 0
    assert report["resnapshots"] == 0 and report["message_bytes"] > 0
    assert 0 < report["last_client_p50_ms"] <= report["last_client_p99_ms"] <= report["last_client_max_ms"]
    assert 0 < report["client_p50_ms"] <= report["client_p99_ms"] <= report["last_client_max_ms"]
    assert report["first_to_last_client_p50_ms"] >= 0
    assert 0 < report["bridge_written_p50_ms"] <= report["bridge_written_p99_ms"]
    # CPU is counted in clock ticks: a run this small may take less than one.
    assert report["bridge_cpu_ms_per_update"] >= 0 and report["bridge_cpu_share"] >= 0
    assert 0 <= report["bridge_system_cpu_ms_per_update"] <= report["bridge_cpu_ms_per_update"]
    assert report["clients_cpu_ms_per_update"] >= 0
    assert report["separation"]


@pytest.mark.slow
@pytest.mark.skipif(missing(playwright=False) is not None, reason=f"no browser: {missing(playwright=False)}")
def test_bench_screens_pages_reports_each_games_page_cost_beside_the_floor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    path = tmp_path / "pages.json"
    assert main(["bench", "screens", "--pages", "--games", "blackjack,faro", "--updates", "10", "--pace", "0.02",
                 "--size", "800x480", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "floor" in out and "faro" in out
    report = json.loads(path.read_text())
    assert report["bench"] == "screens" and report["part"] == "pages" and report["goal_ratio"] == 2
    assert [p["game"] for p in report["pages"]] == ["blackjack", "faro"]
    for page in report["pages"]:
        for figures in (page, page["floor"]):
            assert figures["updates"] >= 10 and figures["resnapshots"] == 0
            assert figures["cpu_ms_per_update"] >= 0 and figures["main_thread_cpu_ms_per_update"] > 0
            assert 0 <= figures["script_ms_per_update"] <= figures["task_ms_per_update"]
            assert figures["style_ms_per_update"] >= 0 and figures["layout_ms_per_update"] >= 0
            assert figures["other_threads_cpu_ms_per_update"] >= 0
        if page["cpu_ms_per_update"] and page["floor"]["cpu_ms_per_update"]:   # counted in ticks (see above)
            assert page["ratio_to_floor"] == round(page["cpu_ms_per_update"] / page["floor"]["cpu_ms_per_update"], 2)
    assert report["over_goal"] == [p["game"] for p in report["pages"]
                                   if p["ratio_to_floor"] is not None and p["ratio_to_floor"] > 2]
    assert report["floor_cpu_ms_per_update_median"] in [p["floor"]["cpu_ms_per_update"] for p in report["pages"]]
