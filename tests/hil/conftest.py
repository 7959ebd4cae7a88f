"""Hardware-in-the-loop tests: each skips cleanly unless the device it needs is named in the environment."""

from __future__ import annotations

import os

import pytest


def hardware(env_var: str, what: str) -> str:
    """The device path from `env_var`, or skip the test: e.g. CROUPIER_HIL_SHOE=/dev/card-shoe."""
    value = os.environ.get(env_var)
    if not value:
        pytest.skip(f"no {what} attached (set {env_var} to run this hardware test)")
    return value
