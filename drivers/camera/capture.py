"""OpenCV capture from the source in config, with reconnect: a device index, a /dev/v4l/by-id/ path, a file, RTSP."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np

__all__ = ["CameraError", "EndOfStream", "OpenCVCamera", "parse_source"]

log = logging.getLogger(__name__)


class CameraError(RuntimeError):
    """The camera cannot be opened or keeps failing after the allowed reconnects."""


class EndOfStream(CameraError):
    """A video file has no more frames (files are not reconnected unless looping)."""


def parse_source(source: int | str) -> int | str:
    """A config's camera source: an int or digit string is a device index; '/dev/...' a device path (a
    /dev/v4l/by-id/ link names one camera whichever port it is in); 'rtsp://', 'http://' a stream; anything
    else a video file, which must exist."""
    if isinstance(source, bool):
        raise CameraError(f"camera source {source!r} is not a device, path or URL")
    if isinstance(source, int):
        if source < 0:
            raise CameraError(f"camera index {source} is negative")
        return source
    text = str(source).strip()
    if not text:
        raise CameraError("camera source is empty")
    if text.isdigit():
        return int(text)
    if "://" in text:
        scheme = text.split("://", 1)[0].lower()
        if scheme not in ("rtsp", "rtsps", "http", "https"):
            raise CameraError(f"camera source {text!r}: unsupported scheme {scheme!r} (rtsp, http)")
        return text
    if text.startswith("/dev/"):
        return text  # may appear later (hot-plug); opening reports it
    if not Path(text).is_file():
        raise CameraError(f"camera source {text!r} is neither a device index, a /dev path, a URL nor a video file")
    return text


class OpenCVCamera:
    """Frames from OpenCV's VideoCapture; `read()` reconnects after a failed grab, up to `retries` times
    per failure with a growing pause, then raises CameraError. Files end with EndOfStream (or loop).

    `opener` builds the capture (tests pass a fake); `pause` waits between reconnects (tests pass a no-op).
    """

    def __init__(self, source: int | str, *, width: int | None = None, height: int | None = None,
                 fps: float | None = None, retries: int = 5, backoff: float = 0.5, loop: bool = False,
                 opener: Callable[[int | str], Any] | None = None, pause: Callable[[float], None] = time.sleep) -> None:
        self.source = parse_source(source)
        self.is_file = isinstance(self.source, str) and "://" not in self.source and not self.source.startswith("/dev/")
        self.width, self.height, self.fps = width, height, fps
        self.retries, self.backoff, self.loop = retries, backoff, loop
        self._opener = opener or self._open_cv
        self._pause = pause
        self._cap: Any = None
        self.frames = 0
        self.reconnects = 0

    def _open_cv(self, source: int | str) -> Any:
        if isinstance(source, str) and source.startswith(("rtsp://", "rtsps://")):
            return cv2.VideoCapture(source, cv2.CAP_FFMPEG)
        return cv2.VideoCapture(source)

    def open(self) -> None:
        cap = self._opener(self.source)
        if cap is None or not cap.isOpened():
            if cap is not None:
                cap.release()
            raise CameraError(f"cannot open camera {self.source!r}")
        if self.width:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
        if self.height:
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        if self.fps:
            cap.set(cv2.CAP_PROP_FPS, self.fps)
        self._cap = cap
        log.info("camera %r open", self.source)

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None

    def __enter__(self) -> OpenCVCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self) -> np.ndarray:
        """The next frame (BGR uint8). Reconnects on failure; raises CameraError when that fails too."""
        if self._cap is None:
            self._reconnect(first=True)
        ok, frame = self._cap.read()
        if ok and _valid(frame):
            self.frames += 1
            return frame
        if self.is_file:
            if not self.loop:
                raise EndOfStream(f"video file {self.source!r} ended after {self.frames} frames")
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, frame = self._cap.read()
            if ok and _valid(frame):
                self.frames += 1
                return frame
        log.warning("camera %r: no frame (%s); reconnecting", self.source, "corrupt" if ok else "read failed")
        self.close()
        self._reconnect()
        ok, frame = self._cap.read()
        if not (ok and _valid(frame)):
            self.close()
            raise CameraError(f"camera {self.source!r} gives no frames after reconnecting")
        self.frames += 1
        return frame

    def _reconnect(self, first: bool = False) -> None:
        last: CameraError | None = None
        for attempt in range(1 if first and self.retries == 0 else max(1, self.retries)):
            if attempt or not first:
                self._pause(self.backoff * (2 ** attempt))
            try:
                self.open()
                if not first:
                    self.reconnects += 1
                return
            except CameraError as exc:
                last = exc
                log.warning("camera %r: %s (attempt %d)", self.source, exc, attempt + 1)
        raise CameraError(f"{last}; gave up after {max(1, self.retries)} attempts")


def _valid(frame: Any) -> bool:
    return (isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
            and frame.shape[0] >= 16 and frame.shape[1] >= 16)
