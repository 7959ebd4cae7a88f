"""Shared test options: `--long` runs the tests marked long; hil tests skip unless their hardware is attached."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Property tests are derandomized by default so CI is repeatable (a failure reproduces on every run) and
# carry no deadline (a loaded 2-core machine is not a bug). HYPOTHESIS_PROFILE=explore searches afresh.
settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=500, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False,
                     help="also run tests marked `long` (millions of cases; minutes each)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long test: run with --long (e.g. pytest -m long --long)")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
