"""Camera drivers: OpenCV capture (device index, /dev/v4l/by-id path, video file, RTSP URL) and the simulated camera."""

from drivers.camera.capture import CameraError, EndOfStream, OpenCVCamera, parse_source

__all__ = ["CameraError", "EndOfStream", "OpenCVCamera", "parse_source"]
