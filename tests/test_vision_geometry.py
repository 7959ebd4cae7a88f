"""Table geometry: homographies from corners and from the ArUco markers, zones, and the camera config file."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.rng import SeededRng
from vision import geometry
from vision.geometry import Calibration, ConfigError, TableGeometry, Zone
from vision.render import render_table

TABLE = (1200.0, 675.0)


def test_corners_map_exactly() -> None:
    corners = [(100, 50), (1180, 80), (1150, 700), (130, 660)]
    cal = Calibration.from_corners(corners, TABLE, (1280, 720))
    assert np.allclose(cal.to_table(corners), [[0, 0], [1200, 0], [1200, 675], [0, 675]], atol=1e-6)
    assert np.allclose(cal.to_image(cal.to_table([[640, 360]])), [[640, 360]], atol=1e-6)
    assert cal.error_px < 1e-6 and cal.source == "corners"


@pytest.mark.parametrize("corners", [[(0, 0), (1, 1), (2, 2), (3, 3)], [(0, 0), (10, 0), (10, 10)],
                                     [(0, 0), (5, 0), (5, 5), (0, float("nan"))]])
def test_bad_corners_are_refused(corners: list) -> None:
    with pytest.raises(ValueError):
        Calibration.from_corners(corners, TABLE, (1280, 720))


def test_parse_corners() -> None:
    assert geometry.parse_corners("1,2 3,4 5,6 7,8") == [(1, 2), (3, 4), (5, 6), (7, 8)]
    for bad in ("1,2 3,4", "a,b c,d e,f g,h", "1,2,3 4,5 6,7 8,9"):
        with pytest.raises(ValueError):
            geometry.parse_corners(bad)


def _camera_homography() -> np.ndarray:
    """Table mm -> pixels for a camera looking down at a slant, the table not filling the frame."""
    table = np.array([[0, 0], [1200, 0], [1200, 675], [0, 675]], np.float32)
    image = np.array([[140, 60], [1150, 90], [1230, 690], [60, 650]], np.float32)
    return cv2.getPerspectiveTransform(table, image)


def test_markers_give_the_homography() -> None:
    H = _camera_homography()
    frame = render_table([], SeededRng(2).numpy(), homography=H, noise=3.0)
    cal = Calibration.from_markers(frame, TABLE)
    assert cal.source == "markers" and cal.error_px < 1.5
    # Points all over the table come back within 2 mm.
    pts = np.array([[x, y] for x in (100, 600, 1100) for y in (100, 337, 600)], np.float64)
    img = cv2.perspectiveTransform(pts.reshape(1, -1, 2), H)[0]
    assert np.abs(cal.to_table(img) - pts).max() < 2.0


def test_missing_markers_are_named() -> None:
    frame = render_table([], SeededRng(2).numpy(), markers=False)
    with pytest.raises(ValueError, match=r"ids \[0, 1, 2, 3\]"):
        Calibration.from_markers(frame, TABLE)


def test_zones() -> None:
    zones = geometry.default_zones(TABLE, spots=3)
    names = [z.name for z in zones]
    assert names == ["dealer", "discard", "community", "spot 1", "spot 2", "spot 3"]
    assert [z.spot for z in zones] == [None, None, None, 1, 2, 3]
    g = TableGeometry(Calibration.from_corners([(0, 0), (1280, 0), (1280, 720), (0, 720)], TABLE, (1280, 720)), zones)
    dealer = zones[0]
    cx, cy = (dealer.rect[0] + dealer.rect[2]) / 2, (dealer.rect[1] + dealer.rect[3]) / 2
    z = g.zone_at(cx * 1280 / 1200, cy * 720 / 675)
    assert z is not None and z.name == "dealer"
    assert g.zone_at(2, 2) is None
    with pytest.raises(ConfigError):
        Zone("seat 1", (0, 0, 1, 1))
    with pytest.raises(ConfigError):
        Zone("spot 1", (5, 0, 1, 1))


def test_config_round_trip_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "camera.toml"
    path.write_text('# the table camera\n[camera]\nsource = "/dev/v4l/by-id/usb-cam"\n\n'
                    '[[zones]]\nname = "dealer"\nrect = [10, 10, 100, 100]\n')
    cal = Calibration.from_corners([(10, 10), (1270, 12), (1260, 700), (5, 710)], TABLE, (1280, 720))
    geometry.save_calibration(path, cal)
    geometry.save_calibration(path, cal)  # saving twice replaces, never duplicates
    text = path.read_text()
    assert text.count("[calibration]") == 1 and "# the table camera" in text
    config = geometry.load_config(path)
    assert config["camera"]["source"] == "/dev/v4l/by-id/usb-cam"
    g = geometry.geometry_from_config(config)
    assert np.allclose(g.calibration.matrix, cal.matrix)
    assert [z.name for z in g.zones] == ["dealer"]


@pytest.mark.parametrize("text,key", [
    ("[calibration]\ntable_mm = [1, 2]\n", "homography"),
    ("[calibration]\nhomography = [[1, 0], [0, 1]]\ntable_mm = [1, 2]\n", "3x3"),
    ("", "no \\[calibration\\]"),
    ("[calibration]\nhomography = [[1,0,0],[0,1,0],[0,0,1]]\ntable_mm = [1, 2]\n[[zones]]\nname = 'dealer'\n", "zones\\[0\\]"),
])
def test_broken_configs_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=key):
        geometry.geometry_from_config(geometry.load_config(path))


def test_unparsable_config(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[calibration\n")
    with pytest.raises(ConfigError, match="c.toml"):
        geometry.load_config(path)
