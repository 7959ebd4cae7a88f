"""Camera drivers: source parsing, reading a video file, reconnecting after failures, and the simulated camera."""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cards import parse_card
from controller.rng import SeededRng
from drivers.camera import CameraError, EndOfStream, OpenCVCamera, parse_source
from drivers.camera.sim import SimulatedCamera


def test_parse_source(tmp_path: Path) -> None:
    video = tmp_path / "table.avi"
    video.write_bytes(b"x")
    assert parse_source(0) == 0 and parse_source("2") == 2
    assert parse_source("/dev/v4l/by-id/usb-Logitech_C920-video-index0") == "/dev/v4l/by-id/usb-Logitech_C920-video-index0"
    assert parse_source("rtsp://10.0.0.5:554/stream1") == "rtsp://10.0.0.5:554/stream1"
    assert parse_source(str(video)) == str(video)
    for bad in (-1, "", "ftp://x/y", str(tmp_path / "missing.mp4"), True):
        with pytest.raises(CameraError):
            parse_source(bad)


def _video(path: Path, frames: int) -> list[np.ndarray]:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    out = []
    for i in range(frames):
        f = np.full((48, 64, 3), i * 20, np.uint8)
        writer.write(f)
        out.append(f)
    writer.release()
    return out


def test_a_video_file_plays_then_ends(tmp_path: Path) -> None:
    path = tmp_path / "t.avi"
    _video(path, 5)
    with OpenCVCamera(str(path)) as cam:
        shades = [int(cam.read().mean()) for _ in range(5)]
        assert shades == sorted(shades) and abs(shades[-1] - 80) < 8
        with pytest.raises(EndOfStream):
            cam.read()


def test_a_looping_file_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "t.avi"
    _video(path, 3)
    with OpenCVCamera(str(path), loop=True) as cam:
        shades = [int(cam.read().mean()) for _ in range(7)]
    assert shades[3] < 8 and shades[6] < 8


class FakeCapture:
    """Scripted VideoCapture: each entry of `script` is a frame, False (read fails) or 'junk'."""

    def __init__(self, script: list) -> None:
        self.script = script
        self.released = False

    def isOpened(self) -> bool:
        return True

    def read(self):
        item = self.script.pop(0) if self.script else False
        if item is False:
            return False, None
        if isinstance(item, str):
            return True, np.zeros((2, 2), np.uint8)
        return True, item

    def set(self, *_: object) -> bool:
        return True

    def release(self) -> None:
        self.released = True


class Closed(FakeCapture):
    def isOpened(self) -> bool:
        return False


def frame(v: int) -> np.ndarray:
    return np.full((32, 32, 3), v, np.uint8)


def test_reconnects_after_a_failed_read() -> None:
    caps = [FakeCapture([frame(1), False]), Closed([]), FakeCapture([frame(2), frame(3)])]
    pauses: list[float] = []
    cam = OpenCVCamera(0, opener=lambda src: caps.pop(0), pause=pauses.append, retries=3, backoff=0.1)
    assert cam.read()[0, 0, 0] == 1
    assert cam.read()[0, 0, 0] == 2  # first reopen fails, second works
    assert cam.read()[0, 0, 0] == 3
    assert cam.reconnects == 1 and pauses == [0.1, 0.2]


def test_a_corrupt_frame_is_not_passed_on() -> None:
    caps = [FakeCapture(["junk"]), FakeCapture([frame(9)])]
    cam = OpenCVCamera(1, opener=lambda src: caps.pop(0), pause=lambda s: None)
    assert cam.read()[0, 0, 0] == 9


def test_gives_up_after_the_retries() -> None:
    cam = OpenCVCamera(0, opener=lambda src: Closed([]), pause=lambda s: None, retries=3)
    with pytest.raises(CameraError, match="gave up after 3"):
        cam.read()


@pytest.mark.slow
def test_simulated_camera_places_and_removes() -> None:
    cam = SimulatedCamera(rng=SeededRng(1).numpy(), noise=0)
    empty = cam.read()
    a = cam.place(parse_card("AS"), "dealer")
    b = cam.place(parse_card("KD"), "dealer")
    assert a.x < b.x and a.y == b.y
    assert not np.array_equal(cam.read(), empty)
    cam.remove(parse_card("AS"))
    cam.remove(parse_card("KD"))
    assert np.array_equal(cam.read(), empty)
    with pytest.raises(KeyError):
        cam.remove(parse_card("AS"))
    with pytest.raises(KeyError, match="no zone"):
        cam.place(parse_card("AS"), "spot 99")


def test_simulated_camera_reads_while_the_table_changes() -> None:
    cam = SimulatedCamera(rng=SeededRng(1).numpy(), size=(320, 180))
    done = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not done.is_set():
                assert cam.read().shape == (180, 320, 3)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    th = threading.Thread(target=reader)
    th.start()
    for c in ("AS", "KD", "TH", "2C"):
        cam.place(parse_card(c), "community")
    cam.clear()
    done.set()
    th.join(timeout=30)
    assert not th.is_alive() and not errors and cam.frames > 0


def test_simulated_camera_knows_its_own_calibration() -> None:
    """The table's corners land where the camera draws them, with its default view or a tilted one."""
    default = SimulatedCamera(rng=SeededRng(1).numpy())
    assert np.allclose(default.calibration().to_table([[0, 0], [640, 360], [1280, 720]]),
                       [[0, 0], [600, 337.5], [1200, 675]], atol=1e-6)
    tilt = np.array([[0.9, 0.05, 80.0], [0.02, 0.85, 60.0], [0.0, 0.0001, 1.0]])
    tilted = SimulatedCamera(homography=tilt, rng=SeededRng(1).numpy())
    table_pts = np.array([[100.0, 100.0], [700.0, 500.0]])
    image_pts = cv2.perspectiveTransform(table_pts.reshape(1, -1, 2), tilt)[0]
    assert np.allclose(tilted.calibration().to_table(image_pts), table_pts, atol=1e-3)
