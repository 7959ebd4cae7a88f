"""Table geometry: the homography between camera pixels and table millimetres, and the zones cards land in.

A calibration comes from the four ArUco markers printed at the table's corners (DICT_4X4_50, ids 0..3
clockwise from top-left, `MARKER_MM` square, `MARKER_INSET_MM` from the edges) or from four table
corners clicked in an image; it is saved in the camera config (TOML) as `[calibration]`. Zones are
rectangles in table millimetres named `spot N`, `dealer`, `community` or `discard`.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import cv2
import numpy as np

from vision.render import MARKER_IDS, aruco_dictionary

__all__ = ["Zone", "Calibration", "TableGeometry", "default_zones", "parse_corners", "load_config",
           "save_calibration", "geometry_from_config", "MARKER_MM", "MARKER_INSET_MM", "ConfigError"]

MARKER_MM = 60.0
MARKER_INSET_MM = 10.0
# baccarat lays its two hands in boxes of their own: "player" and "banker"
_ZONE_NAME = re.compile(r"^(spot [1-9][0-9]*|dealer|community|discard|player|banker)$")


class ConfigError(ValueError):
    """The camera config is malformed; the message names the key."""


@dataclass(frozen=True)
class Zone:
    """A named rectangle of the table layout, in millimetres: x0, y0, x1, y1."""

    name: str
    rect: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        if not _ZONE_NAME.match(self.name):
            raise ConfigError(f"zone name {self.name!r} must be 'spot N', 'dealer', 'community', 'discard', "
                              "'player' or 'banker'")
        x0, y0, x1, y1 = self.rect
        if not (x0 < x1 and y0 < y1):
            raise ConfigError(f"zone {self.name!r}: rect must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1")

    @property
    def spot(self) -> int | None:
        return int(self.name.split()[1]) if self.name.startswith("spot ") else None

    def contains(self, x: float, y: float) -> bool:
        x0, y0, x1, y1 = self.rect
        return x0 <= x <= x1 and y0 <= y <= y1


def default_zones(table_mm: tuple[float, float] = (1200.0, 675.0), spots: int = 5,
                  boxes: tuple[str, ...] = ("community",)) -> tuple[Zone, ...]:
    """A simple layout: dealer and discard along the top, `boxes` side by side in the middle (the community
    cards; baccarat's player and banker), spots along the bottom."""
    W, H = table_mm
    zones = [Zone("dealer", (W * 0.3, H * 0.05, W * 0.7, H * 0.3)),
             Zone("discard", (W * 0.8, H * 0.05, W * 0.95, H * 0.3))]
    band = W * 0.6 / len(boxes)
    gap = W * 0.02  # between two boxes, so a card on the line is in neither
    for i, name in enumerate(boxes):
        right = W * 0.2 + (i + 1) * band - (gap if i < len(boxes) - 1 else 0)
        zones.append(Zone(name, (W * 0.2 + i * band, H * 0.35, right, H * 0.6)))
    width = W * 0.9 / spots
    for i in range(spots):
        x0 = W * 0.05 + i * width
        zones.append(Zone(f"spot {i + 1}", (x0 + width * 0.05, H * 0.65, x0 + width * 0.95, H * 0.95)))
    return tuple(zones)


@dataclass(frozen=True)
class Calibration:
    """`homography` maps image pixels to table millimetres; `error_px` is the RMS reprojection error."""

    homography: tuple[tuple[float, ...], ...]
    table_mm: tuple[float, float]
    image_size: tuple[int, int]
    source: str = "corners"
    error_px: float = 0.0

    @property
    def matrix(self) -> np.ndarray:
        return np.array(self.homography, np.float64)

    def to_table(self, points: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
        pts = np.asarray(points, np.float64).reshape(1, -1, 2)
        return cv2.perspectiveTransform(pts, self.matrix)[0]

    def to_image(self, points: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
        pts = np.asarray(points, np.float64).reshape(1, -1, 2)
        return cv2.perspectiveTransform(pts, np.linalg.inv(self.matrix))[0]

    @staticmethod
    def _make(image_pts: np.ndarray, table_pts: np.ndarray, table_mm: tuple[float, float],
              image_size: tuple[int, int], source: str) -> Calibration:
        H, _ = cv2.findHomography(image_pts.astype(np.float64), table_pts.astype(np.float64), 0)
        if H is None or not np.isfinite(H).all() or abs(np.linalg.det(H)) < 1e-12:
            raise ValueError("the points do not define a table plane (are three of them in a line?)")
        back = cv2.perspectiveTransform(table_pts.reshape(1, -1, 2).astype(np.float64), np.linalg.inv(H))[0]
        err = float(np.sqrt(((back - image_pts) ** 2).sum(axis=1).mean()))
        return Calibration(tuple(tuple(float(v) for v in row) for row in H), (float(table_mm[0]), float(table_mm[1])),
                           (int(image_size[0]), int(image_size[1])), source, err)

    @classmethod
    def from_corners(cls, corners: Sequence[Sequence[float]], table_mm: tuple[float, float],
                     image_size: tuple[int, int]) -> Calibration:
        """From the table's four corners in image pixels, clockwise from top-left."""
        pts = np.asarray(corners, np.float64)
        if pts.shape != (4, 2) or not np.isfinite(pts).all():
            raise ValueError("give exactly four corners as x,y pairs, clockwise from top-left")
        W, H = table_mm
        if W <= 0 or H <= 0:
            raise ValueError("the table size must be positive")
        if cv2.contourArea(pts.astype(np.float32)) < 100:
            raise ValueError("the four corners enclose (almost) no area")
        return cls._make(pts, np.array([[0, 0], [W, 0], [W, H], [0, H]], np.float64), table_mm, image_size, "corners")

    @classmethod
    def from_markers(cls, frame: np.ndarray, table_mm: tuple[float, float], marker_mm: float = MARKER_MM,
                     inset_mm: float = MARKER_INSET_MM) -> Calibration:
        """From the four corner markers seen in `frame` (all four must be visible)."""
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        detector = cv2.aruco.ArucoDetector(aruco_dictionary(), cv2.aruco.DetectorParameters())
        corners, ids, _ = detector.detectMarkers(gray)
        seen = {} if ids is None else {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners)}
        missing = [m for m in MARKER_IDS if m not in seen]
        if missing:
            raise ValueError(f"calibration markers not found: ids {missing} (DICT_4X4_50, ids 0..3 at the table "
                             "corners); give --corners instead")
        W, H = table_mm
        s, d = marker_mm, inset_mm
        origins = [(d, d), (W - d - s, d), (W - d - s, H - d - s), (d, H - d - s)]
        image_pts, table_pts = [], []
        for mid, (ox, oy) in zip(MARKER_IDS, origins):
            image_pts.append(seen[mid])
            table_pts.append([[ox, oy], [ox + s, oy], [ox + s, oy + s], [ox, oy + s]])
        return cls._make(np.concatenate(image_pts), np.array(table_pts, np.float64).reshape(-1, 2), table_mm,
                         frame.shape[1::-1], "markers")


@dataclass(frozen=True)
class TableGeometry:
    """A calibration and the zones: which zone a point in the image falls in."""

    calibration: Calibration
    zones: tuple[Zone, ...] = field(default_factory=tuple)

    def zone_at(self, x: float, y: float) -> Zone | None:
        """The zone under image pixel (x, y), or None (on the table but in no zone, or off it)."""
        tx, ty = self.calibration.to_table([[x, y]])[0]
        for z in self.zones:
            if z.contains(tx, ty):
                return z
        return None

    def on_marker(self, x: float, y: float, margin: float = 15.0) -> bool:
        """Whether image pixel (x, y) lies on one of the four corner calibration markers (plus `margin` mm)."""
        tx, ty = self.table_point(x, y)
        W, H = self.calibration.table_mm
        reach = MARKER_INSET_MM + MARKER_MM + margin
        return (tx < reach or tx > W - reach) and (ty < reach or ty > H - reach)

    def table_point(self, x: float, y: float) -> tuple[float, float]:
        tx, ty = self.calibration.to_table([[x, y]])[0]
        return float(tx), float(ty)


def parse_corners(text: str) -> list[tuple[float, float]]:
    """'x,y x,y x,y x,y' as four points."""
    try:
        pts = [tuple(float(v) for v in pair.split(",")) for pair in text.replace(";", " ").split()]
    except ValueError:
        raise ValueError(f"corners {text!r}: expected 'x,y x,y x,y x,y'") from None
    if len(pts) != 4 or any(len(p) != 2 or not all(math.isfinite(v) for v in p) for p in pts):
        raise ValueError(f"corners {text!r}: expected four x,y pairs")
    return pts  # type: ignore[return-value]


def load_config(path: Path) -> dict[str, Any]:
    """The camera config as a dict; a malformed file raises ConfigError naming the problem."""
    try:
        return tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def save_calibration(path: Path, calib: Calibration) -> None:
    """Write `[calibration]` into the config at `path`, keeping everything else in the file as it was."""
    path = Path(path)
    text = path.read_text() if path.exists() else ""
    # Drop an existing [calibration] table (up to the next table header), keep the rest.
    text = re.sub(r"(?ms)^\[calibration\][^\n]*\n.*?(?=^\[|\Z)", "", text).rstrip()
    rows = ",\n    ".join("[" + ", ".join(repr(v) for v in row) + "]" for row in calib.homography)
    block = (f"[calibration]\n# image pixels -> table millimetres; from {calib.source}, RMS error "
             f"{calib.error_px:.2f} px\nsource = \"{calib.source}\"\ntable_mm = [{calib.table_mm[0]!r}, "
             f"{calib.table_mm[1]!r}]\nimage_size = [{calib.image_size[0]}, {calib.image_size[1]}]\n"
             f"error_px = {calib.error_px!r}\nhomography = [\n    {rows},\n]\n")
    path.write_text((text + "\n\n" if text else "") + block)


def geometry_from_config(config: dict[str, Any]) -> TableGeometry:
    """A TableGeometry from a loaded camera config (`[calibration]` and `[[zones]]`); errors name the key."""
    cal = config.get("calibration")
    if not isinstance(cal, dict):
        raise ConfigError("camera config: no [calibration] table (run `croupier vision calibrate`)")
    try:
        H = np.array(cal["homography"], np.float64)
        table_mm = tuple(float(v) for v in cal["table_mm"])
        size = tuple(int(v) for v in cal.get("image_size", (0, 0)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"camera config: calibration.{exc.args[0] if exc.args else 'homography'} is missing "
                          "or malformed") from None
    if H.shape != (3, 3) or not np.isfinite(H).all() or len(table_mm) != 2:
        raise ConfigError("camera config: calibration.homography must be 3x3 numbers, table_mm two numbers")
    calib = Calibration(tuple(tuple(float(v) for v in row) for row in H), table_mm,
                        size, str(cal.get("source", "config")), float(cal.get("error_px", 0.0)))  # type: ignore[arg-type]
    zones = []
    for i, z in enumerate(config.get("zones", [])):
        try:
            zones.append(Zone(str(z["name"]), tuple(float(v) for v in z["rect"])))  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"camera config: zones[{i}] needs name and rect = [x0, y0, x1, y1]") from None
    if not zones:
        zones = list(default_zones(table_mm))
    return TableGeometry(calib, tuple(zones))
