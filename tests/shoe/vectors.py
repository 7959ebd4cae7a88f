"""The shoe protocol's declaration and test vectors (firmware/protocol/vectors.json), loaded once for the tests."""

from __future__ import annotations

import json
from pathlib import Path

PROTOCOL_DIR = Path(__file__).resolve().parents[2] / "firmware" / "protocol"
VECTORS = json.loads((PROTOCOL_DIR / "vectors.json").read_text())
BY_NAME = {f["name"]: f for f in VECTORS["frames"]}
