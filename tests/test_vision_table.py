"""The shipped models over the simulated table: identify on its camera's frames, the tracker on a rendered sequence
with noise and a passing hand, and the `croupier vision` / `croupier bench vision` commands."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cards import parse_cards
from controller.cli import main
from controller.rng import SeededRng
from drivers.camera.sim import SimulatedCamera
from vision.geometry import Calibration, TableGeometry
from vision.recognise import Recogniser
from vision.tracker import CardAppeared, CardMoved, CardRemoved, TableWatcher, Tracker


@pytest.fixture(scope="module")
def rec() -> Recogniser:
    return Recogniser()


def _table(cards: str, seed: int = 5) -> SimulatedCamera:
    cam = SimulatedCamera(rng=SeededRng(seed).numpy(), noise=3.0)
    zones = ["dealer", "community", "spot 1", "spot 3", "spot 5"]
    for i, c in enumerate(parse_cards(cards)):
        cam.place(c, zones[i % len(zones)], angle=[0, 8, -6, 180, 3][i % 5])
    return cam


def test_identify_reads_the_simulated_table(rec: Recogniser) -> None:
    cam = _table("AS KD TH 9C 2D 3S QH JC")
    # The corner calibration markers may be taken for cards, but never with any confidence.
    found = [d for d in rec.identify(cam.read()) if d.card is not None and d.confidence >= 0.5]
    got = sorted(str(d.card) for d in found)
    assert got == sorted("AS KD TH 9C 2D 3S QH JC".split())
    assert min(d.confidence for d in found) > 0.8
    for d in found:
        tc = next(c for c in cam.cards if c.card == d.card)
        x, y = tc.x * 1280 / 1200, tc.y * 720 / 675
        assert d.box[0] < x < d.box[2] and d.box[1] < y < d.box[3]
        assert math.hypot(d.rect.cx - x, d.rect.cy - y) < 10


@pytest.mark.slow
def test_tracker_turns_a_rendered_sequence_into_exactly_the_right_events(rec: Recogniser) -> None:
    """Deal three cards, pass a hand over them, move one to the discard, take one away: frames rendered with
    sensor noise; the events must be exactly these, in this order."""
    cam = SimulatedCamera(rng=SeededRng(11).numpy(), noise=4.0)
    geometry = TableGeometry(Calibration.from_markers(cam.read(), cam.table_mm), cam.zones)
    watcher = TableWatcher(rec, geometry, Tracker(stable_frames=3, remove_frames=10, min_confidence=0.8))
    AS, KD, TH = parse_cards("AS KD TH")
    events = []

    def frames(n: int) -> None:
        for _ in range(n):
            events.extend(watcher.process(cam.read()))

    frames(3)
    cam.place(AS, "spot 1")
    frames(4)
    cam.place(KD, "dealer")
    frames(4)
    cam.place(TH, "spot 1")
    frames(4)
    # A hand sweeps across the table over the cards, for 8 frames.
    spot1 = next(z for z in cam.zones if z.name == "spot 1").rect
    for i in range(8):
        cam.hand((spot1[0] + 40 + i * 90, spot1[1] + 80 - i * 40))
        frames(1)
    cam.hand(None)
    frames(4)
    cam.remove(KD)
    cam.place(KD, "discard")
    frames(5)
    cam.remove(TH)
    frames(12)
    kinds = [(type(e).__name__, str(e.card), (e.from_zone, e.zone) if isinstance(e, CardMoved) else e.zone)
             for e in events]
    assert kinds == [("CardAppeared", "AS", "spot 1"), ("CardAppeared", "KD", "dealer"),
                     ("CardAppeared", "TH", "spot 1"), ("CardMoved", "KD", ("dealer", "discard")),
                     ("CardRemoved", "TH", "spot 1")]
    assert all(e.certain for e in events if isinstance(e, (CardAppeared, CardMoved)))
    assert isinstance(events[-1], CardRemoved)


def test_identify_command_prints_the_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), _table("AS KD 7H").read())
    assert main(["vision", "identify", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 1 and out[0]["image"] == str(path)
    cards = out[0]["cards"]
    assert sorted(c["card"] for c in cards) == ["7H", "AS", "KD"]
    for c in cards:
        assert set(c) == {"card", "rank", "suit", "box", "confidence", "unsure"}
        assert c["rank"] + c["suit"] == c["card"] and c["rank"] in "23456789TJQKA" and c["suit"] in "SHDC"
        assert len(c["box"]) == 4 and all(isinstance(v, int) for v in c["box"]) and c["box"][0] < c["box"][2]
        assert 0 < c["confidence"] <= 1
    assert main(["vision", "identify", str(path)]) == 0
    assert "AS" in capsys.readouterr().out


def test_identify_as_table_reads_a_saved_frame_as_the_table_camera_does(tmp_path: Path, rec: Recogniser,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), _table("AS KD 7H 7C").read())
    assert main(["vision", "identify", str(path), "--as-table", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)[0]["cards"]
    frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert sorted((c["card"], tuple(c["box"])) for c in printed) == \
        sorted((str(d.card), tuple(round(v) for v in d.box)) for d in rec.identify(frame) if d.card is not None)
    assert sorted(c["card"] for c in printed) == ["7C", "7H", "AS", "KD"]


def test_identify_refuses_an_unreadable_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    assert main(["vision", "identify", str(bad)]) == 2
    assert "cannot read image" in capsys.readouterr().err


def test_calibrate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "camera.toml"
    config.write_text('[camera]\nsource = 0\n')
    assert main(["vision", "calibrate", "--sim", "--config", str(config)]) == 0
    assert "from markers" in capsys.readouterr().out
    text = config.read_text()
    assert "[calibration]" in text and 'source = 0' in text
    image = tmp_path / "felt.png"
    cv2.imwrite(str(image), np.full((720, 1280, 3), 60, np.uint8))
    assert main(["vision", "calibrate", "--image", str(image), "--config", str(config)]) == 2
    assert "markers not found" in capsys.readouterr().err
    assert main(["vision", "calibrate", "--image", str(image), "--config", str(config),
                 "--corners", "0,0 1280,0 1280,720 0,720"]) == 0
    assert text.count("[calibration]") == config.read_text().count("[calibration]") == 1


@pytest.mark.slow
def test_bench_vision_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.json"
    assert main(["bench", "vision", "--frames", "5", "--json", str(path)]) == 0
    report = json.loads(path.read_text())
    assert report["bench"] == "vision" and report["cards"] == 8 and report["threads"] == 1
    assert report["ms_p50"] > 0 and report["ms_p99"] >= report["ms_p50"] and report["peak_rss_mb"] > 0
    assert "p50" in capsys.readouterr().out
