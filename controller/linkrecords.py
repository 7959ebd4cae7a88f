"""The progressive link controller's journal record kinds (controller/progressive.py writes and folds them).

Each class's docstring is its line in the listing of kinds (README.md, `python -m controller.records progressive`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from controller.records import ABSENT, Absent, Record, Refusal, opt, typed_record

__all__ = ["LinkRecord", "link_record", "LinkStart", "Contribution", "Hit", "LinkRefused"]


@dataclass(frozen=True, slots=True)
class LinkRecord(Record):
    FAMILY: ClassVar[str] = "progressive"


def link_record(data: Any, where: str = "record") -> LinkRecord:
    """The typed link record of a journal row; RecordError naming `where` when it is not one."""
    return typed_record(LinkRecord, data, where)


@dataclass(frozen=True, slots=True)
class LinkStart(LinkRecord):
    """the link controller started: the pool's reset value in cents, and the title of its cabinets (null: any)"""
    KIND: ClassVar[str] = "start"
    reset_cents: int
    version: str | None = opt()
    title: str | None | Absent = opt(ABSENT)


@dataclass(frozen=True, slots=True)
class Contribution(LinkRecord):
    """a qualifying game's share of the pool, in cents (counted once per cabinet and game)"""
    KIND: ClassVar[str] = "contribution"
    cabinet: str
    game: int
    cents: int


@dataclass(frozen=True, slots=True)
class Hit(LinkRecord):
    """a cabinet's game hit the jackpot: the award, the pool in whole credits of its denomination"""
    KIND: ClassVar[str] = "hit"
    cabinet: str
    game: int
    denomination: int
    award: int


@dataclass(frozen=True, slots=True)
class LinkRefused(LinkRecord, Refusal):
    __doc__ = Refusal.__doc__
    KIND: ClassVar[str] = "refused"
