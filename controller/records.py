"""Journal records as typed, versioned, frozen dataclasses: the base class, each runtime's registry of kinds, and the listing of kinds.

A journal row is the canonical JSON of one record (controller/journal.py), and the MAC chain covers those bytes:
`to_json` writes exactly the object the runtimes wrote when records were dicts built in place, so journals
written before replay unchanged. A kind's version is not written while it is 1 (no row written so far has one);
a later version writes "v". Each runtime (table, cabinet, progressive link) has a family of kinds, registered by
subclassing its family's base; a kind with several shapes is told apart by its "what".
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

__all__ = ["Record", "Absent", "ABSENT", "opt", "record_from_json", "typed_record", "record_kinds", "kinds_text",
           "RecordError", "Refusal", "DoorSwitch"]

JSON = Any  # a JSON value as the journal holds it (an object, list, text, number, true/false or null)


class Absent(enum.Enum):
    """The mark of a field left out of the row altogether (unlike None, which is written as null)."""
    ABSENT = 0


ABSENT = Absent.ABSENT


class RecordError(ValueError):
    """A journal row that is not a record of this runtime: unknown kind, unknown version, a field missing or unknown."""


def opt(default: Any = None) -> Any:
    """A field left out of the row while it holds `default` (None: written only when set)."""
    return field(default=default, metadata={"omit": default})


_FAMILIES: dict[str, dict[tuple[str, str | None], type[Record]]] = {}

R = TypeVar("R", bound="Record")


@dataclass(frozen=True, slots=True)
class Record:
    """A journal record. A family's base sets FAMILY; each kind sets KIND (and WHAT where a kind has several shapes)
    and VERSION when its fields change. `origin` is the command's idempotency tag, which the runtime adds to the
    first record a tagged bus command writes."""
    FAMILY: ClassVar[str] = ""
    KIND: ClassVar[str] = ""
    WHAT: ClassVar[str | None] = None
    VERSION: ClassVar[int] = 1
    origin: JSON = field(default=None, kw_only=True, metadata={"omit": None})

    def __init_subclass__(cls) -> None:
        # No super() call: slotted dataclasses are rebuilt as new classes (see games/base.py's Event).
        if "KIND" in cls.__dict__ and cls.KIND:
            kinds = _FAMILIES.setdefault(cls.FAMILY, {})
            key = (cls.KIND, cls.WHAT)
            if key in kinds and (kinds[key].__module__, kinds[key].__name__) != (cls.__module__, cls.__name__):
                raise TypeError(f"{cls.FAMILY} record {key} is already taken by {kinds[key].__qualname__}")
            kinds[key] = cls

    def to_json(self) -> dict[str, Any]:
        """The row's object, exactly as the journal holds it."""
        out: dict[str, Any] = {"kind": self.KIND}
        if self.WHAT is not None:
            out["what"] = self.WHAT
        if self.VERSION != 1:
            out["v"] = self.VERSION
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if "omit" in f.metadata and value is f.metadata["omit"]:
                continue
            out[f.name] = _encode(value)
        return out

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any], where: str = "record") -> R:
        """This kind from its row's object; RecordError naming `where` and the field when it does not fit."""
        version = data.get("v", 1)
        if version != cls.VERSION:
            raise RecordError(f"{where}: {_name(cls)} version {version!r} is not known (this build reads "
                              f"version {cls.VERSION})")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names - {"kind", "v"} - ({"what"} if cls.WHAT is not None else set())
        if unknown:
            raise RecordError(f"{where}: {_name(cls)} has no field(s) {', '.join(sorted(unknown))}")
        hints = _hints(cls)
        kwargs = {name: _decode(hints[name], data[name]) for name in names if name in data}
        try:
            return cls(**kwargs)
        except TypeError as exc:
            missing = sorted(f.name for f in dataclasses.fields(cls) if f.name not in data
                             and f.default is dataclasses.MISSING)
            raise RecordError(f"{where}: {_name(cls)} lacks field(s) {', '.join(missing) or exc}") from None


# Kinds every runtime journals alike: a family's kind derives from its family's base and one of these, and sets its
# KIND and __doc__ (a dataclass writes its own docstring otherwise), so the fields are written once.

@dataclass(frozen=True, slots=True)
class Refusal(Record):
    """a refused command (audit only); left_out: refusals of a peer not journaled one by one"""
    who: str | None = opt()
    reason: str | None = opt()
    request: JSON = opt(ABSENT)   # null for a refusal that answers no request
    left_out: JSON = opt()


@dataclass(frozen=True, slots=True)
class DoorSwitch(Record):
    """a door switch opened or closed"""
    name: str
    open: bool


def _name(cls: type[Record]) -> str:
    return f"{cls.FAMILY} record {cls.KIND!r}" + (f" ({cls.WHAT})" if cls.WHAT else "")


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, Record):
        return value.to_json()
    return value


def _decode(hint: Any, value: Any) -> Any:
    # Values are taken as the row holds them (the folds convert as they always have); only a list read into a
    # tuple field becomes a tuple, so the record is frozen and writes the same list back.
    if isinstance(value, list) and _is_tuple(hint):
        return tuple(value)
    return value


def _is_tuple(hint: Any) -> bool:
    if typing.get_origin(hint) is tuple:
        return True
    return any(typing.get_origin(a) is tuple for a in typing.get_args(hint))


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def record_from_json(family: str, data: Any, where: str = "record") -> Record:
    """The typed record of a journal row of `family`; RecordError naming `where` for an unknown kind or version."""
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        raise RecordError(f"{where}: a record is an object with a \"kind\", got {str(data)[:80]!r}")
    kinds = _FAMILIES.get(family, {})
    what = data.get("what")
    cls = kinds.get((data["kind"], what)) if isinstance(what, str) else None
    cls = cls or kinds.get((data["kind"], None))
    if cls is None:
        if any(k == data["kind"] for k, _ in kinds):
            raise RecordError(f"{where}: unknown {family} record {data['kind']!r} of what {data.get('what')!r}")
        raise RecordError(f"{where}: unknown {family} record kind {data['kind']!r}")
    return cls.from_json(data, where)



def typed_record(base: type[R], data: Any, where: str = "record") -> R:
    """The typed record of a journal row of `base`'s family (every kind of a family derives from its base);
    RecordError naming `where` when it is not one."""
    record = record_from_json(base.FAMILY, data, where)
    assert isinstance(record, base)
    return record

def record_kinds(family: str) -> list[tuple[str, str | None, int, list[str], str]]:
    """Each kind of `family` as (kind, what, version, fields (optional ones in brackets; `origin`, which any kind may
    carry, left out), what it records)."""
    out = []
    for (kind, what), cls in sorted(_FAMILIES.get(family, {}).items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        names = [f.name if "omit" not in f.metadata else f"[{f.name}]" for f in dataclasses.fields(cls)
                 if f.name != "origin"]  # every kind may carry it
        doc = " ".join((cls.__doc__ or "").split())
        out.append((kind, what, cls.VERSION, names, doc))
    return out


def kinds_text(family: str) -> str:
    """The listing of `family`'s kinds as the documentation holds it: one line a kind."""
    lines = []
    for kind, what, version, names, doc in record_kinds(family):
        head = f"{kind}" + (f"/{what}" if what else "") + (f" v{version}" if version != 1 else "")
        lines.append(f"- `{head}` {{{', '.join(names)}}}: {doc}")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m controller.records FAMILY: the listing the README holds
    import importlib
    import sys

    for module in ("controller.tablerecords", "controller.cabinetrecords", "controller.linkrecords"):
        importlib.import_module(module)
    # This file runs as __main__: the registry the kinds fill is the one of the imported controller.records.
    print(importlib.import_module("controller.records").kinds_text(sys.argv[1] if len(sys.argv) > 1 else "table"))
