"""Shared test options: `--long` runs the tests marked long; hil tests skip unless their hardware is attached."""

from __future__ import annotations

import pytest


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
