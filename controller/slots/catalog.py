"""The title catalogue: reads `controller/slots/titles/*.toml` into validated `Title`s (errors name the file and key).

File layout (see any title file; the design choices of each title are comments in its file):

    name, denominations (cents), lines, max_coins (per line), target_rtp = [low, high] (at max bet)
    [symbols]     CODE = "Name" or CODE = { name = "Blank", blank = true }
    [groups]      CODE = ["B1", "B2", "B3"]             (any bar, any seven, ...)
    [wild]        symbol, excludes, multiplier, morph ("never" | "always" | [combos])
    [[reels]]     stops = [["B1", 3], ["--", 5], ...]   (physical strip, top to bottom, with virtual weights)
    [[paytables]] name, color, rows = [{ line = "7R 7R 7R", pays = [..] } | { anywhere = "CH", count = 1, pays = [..] }]
    [[features]]  kind = "...", parameters of that kind (controller/slots/features.py)
    [progressive] reset_cents, contribution_bp
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from controller.slots.features import Params, build_feature
from controller.slots.title import (
    ANY, Matcher, Pattern, PayRow, Paytable, Progressive, Reel, Symbol, Title, TitleError, Wild,
)

__all__ = ["load_title", "parse_title", "title_ids", "get_title", "all_titles", "TITLES_DIR"]

TITLES_DIR = Path(str(resources.files("controller.slots") / "titles"))
RTP_FLOOR, RTP_CEILING = 0.92, 0.97  # every title's target window lies inside this band
_TOP = {"name", "denominations", "lines", "max_coins", "target_rtp", "notes", "symbols", "groups", "wild", "reels",
        "paytables", "features", "progressive"}


def title_ids() -> list[str]:
    """The ids (file stems) of the titles shipped with Croupier, sorted."""
    return sorted(p.stem for p in TITLES_DIR.glob("*.toml"))


@cache
def get_title(title_id: str) -> Title:
    """A shipped title by id, e.g. "bank-on-it" (loaded once)."""
    path = TITLES_DIR / f"{title_id}.toml"
    if not path.is_file():
        raise TitleError(f"unknown title {title_id!r} (known: {', '.join(title_ids())})")
    return load_title(path)


def all_titles() -> list[Title]:
    return [get_title(t) for t in title_ids()]


def load_title(path: str | Path) -> Title:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TitleError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TitleError(f"{path.name}: not valid TOML: {exc}") from None
    return parse_title(path.stem, data, hashlib.sha256(raw).hexdigest(), where=path.name)


def _int(value: Any, where: str, low: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise TitleError(f"{where}: expected a whole number >= {low}, got {value!r}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TitleError(f"{where}: expected text, got {value!r}")
    return value


def _table(data: Mapping[str, Any], key: str, where: str, known: set[str],
           required: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise TitleError(f"{where}.{key}: expected a table")
    unknown = sorted(set(value) - known)
    if unknown:
        raise TitleError(f"{where}.{key}: unknown key(s) {', '.join(unknown)}")
    missing = sorted(required - set(value))
    if missing:
        raise TitleError(f"{where}.{key}: missing key(s) {', '.join(missing)}")
    return value


def parse_title(title_id: str, data: Mapping[str, Any], digest: str | None = None, where: str = "title") -> Title:
    """Validate a title's TOML data (see the module docstring) and build the Title. Its digest (which
    journaled states carry, and which caches key on) is the file's sha256, or else that of the data."""
    if digest is None:
        digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise TitleError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for key in ("name", "denominations", "lines", "max_coins", "target_rtp", "symbols", "reels", "paytables"):
        if key not in data:
            raise TitleError(f"{where}: missing key {key!r}")
    name = _str(data["name"], f"{where}.name")
    denoms = data["denominations"]
    if not isinstance(denoms, list) or not denoms:
        raise TitleError(f"{where}.denominations: expected a list of cents per credit")
    denominations = tuple(_int(d, f"{where}.denominations", 1) for d in denoms)
    lines = _int(data["lines"], f"{where}.lines", 1)
    if lines not in (1, 3, 5):
        raise TitleError(f"{where}.lines: a 3-reel title has 1, 3 or 5 paylines, not {lines}")
    max_coins = _int(data["max_coins"], f"{where}.max_coins", 1)
    target = data["target_rtp"]
    if (not isinstance(target, list) or len(target) != 2 or not all(isinstance(t, float) for t in target)
            or not RTP_FLOOR <= target[0] < target[1] <= RTP_CEILING):
        raise TitleError(f"{where}.target_rtp: expected [low, high] inside [{RTP_FLOOR}, {RTP_CEILING}], got {target!r}")

    symbols = _symbols(data["symbols"], f"{where}.symbols")
    groups = data.get("groups", {})
    if not isinstance(groups, dict):
        raise TitleError(f"{where}.groups: expected a table")
    for code, members in groups.items():
        if code in symbols or code == ANY:
            raise TitleError(f"{where}.groups.{code}: a group needs a name that is not a symbol code")
        if not isinstance(members, list) or not members or any(m not in symbols for m in members):
            raise TitleError(f"{where}.groups.{code}: expected a list of symbol codes, got {members!r}")

    wild = _wild(data, symbols, where)

    def symbol(code: Any, at: str) -> str:
        if not isinstance(code, str) or code not in symbols:
            raise TitleError(f"{at}: unknown symbol {code!r}")
        return code

    def matcher(text: str, at: str) -> Matcher:
        if text == ANY:
            return Matcher(text, frozenset(symbols), True, False, "")
        members = groups.get(text) or [symbol(text, at)]
        may_stand_in = wild is not None and any(
            not symbols[m].blank and m not in wild.excludes and m != wild.symbol for m in members)
        return Matcher(text, frozenset(members), False, may_stand_in, members[0])

    def pattern(text: Any, at: str) -> Pattern:
        words = _str(text, at).split()
        if len(words) != 3:
            raise TitleError(f"{at}: a combination names three positions, got {text!r}")
        m = tuple(matcher(w, at) for w in words)
        return Pattern(" ".join(words), positions=(m[0], m[1], m[2]))

    reels = _reels(data["reels"], symbol, f"{where}.reels")
    paytables = _paytables(data["paytables"], max_coins, pattern, matcher, f"{where}.paytables")
    if wild is not None and wild.morph not in ("never", "always"):
        texts = {r.text for p in paytables for r in p.rows}
        for combo in wild.morph:
            if combo not in texts:
                raise TitleError(f"{where}.wild.morph: {combo!r} is not a paytable combination")

    probe = Title(title_id, name, denominations, lines, max_coins, (target[0], target[1]), symbols, reels, paytables,
                  wild)
    features = []
    raw_features = data.get("features", [])
    if not isinstance(raw_features, list):
        raise TitleError(f"{where}.features: expected [[features]] tables")
    for i, raw in enumerate(raw_features):
        at = f"{where}.features[{i}]"
        if not isinstance(raw, dict):
            raise TitleError(f"{at}: expected a table")
        feature = build_feature(Params(raw, at, symbol, pattern, probe.max_bet.total), probe.match)
        if feature.one_line and lines != 1:
            raise TitleError(f"{at}: {feature.kind} reads the centre payline and needs a one-line title")
        features.append(feature)
    names = [m for f in features for m in f.meters]
    if len(names) != len(set(names)):
        raise TitleError(f"{where}.features: two features keep a meter of the same name")

    progressive = None
    if "progressive" in data:
        p = _table(data, "progressive", where, {"reset_cents", "contribution_bp"}, {"reset_cents", "contribution_bp"})
        progressive = Progressive(_int(p["reset_cents"], f"{where}.progressive.reset_cents", 1),
                                  _int(p["contribution_bp"], f"{where}.progressive.contribution_bp"))
    notes = data.get("notes", "")
    return Title(title_id, name, denominations, lines, max_coins, (target[0], target[1]), symbols, reels, paytables,
                 wild, tuple(features), progressive, digest, _str(notes, f"{where}.notes") if notes else "")


def _symbols(raw: Any, where: str) -> dict[str, Symbol]:
    if not isinstance(raw, dict) or not raw:
        raise TitleError(f"{where}: expected a table of symbol codes")
    out = {}
    for code, spec in raw.items():
        if code == ANY or not code.strip() or " " in code:
            raise TitleError(f"{where}: {code!r} cannot be a symbol code")
        if isinstance(spec, str):
            out[code] = Symbol(code, spec)
        elif isinstance(spec, dict) and set(spec) <= {"name", "blank"} and "name" in spec:
            blank = spec.get("blank", False)
            if not isinstance(blank, bool):
                raise TitleError(f"{where}.{code}.blank: expected true or false")
            out[code] = Symbol(code, _str(spec["name"], f"{where}.{code}.name"), blank)
        else:
            raise TitleError(f"{where}.{code}: expected a name or {{ name = ..., blank = true }}")
    return out


def _wild(data: Mapping[str, Any], symbols: Mapping[str, Symbol], where: str) -> Wild | None:
    if "wild" not in data:
        return None
    w = _table(data, "wild", where, {"symbol", "excludes", "multiplier", "morph"}, {"symbol"})
    code = w["symbol"]
    if code not in symbols or symbols[code].blank:
        raise TitleError(f"{where}.wild.symbol: unknown symbol {code!r}")
    excludes = w.get("excludes", [])
    if not isinstance(excludes, list) or any(e not in symbols for e in excludes):
        raise TitleError(f"{where}.wild.excludes: expected a list of symbol codes")
    morph = w.get("morph", "never")
    if isinstance(morph, list) and all(isinstance(m, str) for m in morph):
        morph = tuple(" ".join(m.split()) for m in morph)
    elif morph not in ("never", "always"):
        raise TitleError(f"{where}.wild.morph: expected \"never\", \"always\" or a list of combinations")
    return Wild(code, frozenset(excludes), _int(w.get("multiplier", 1), f"{where}.wild.multiplier", 1), morph)


def _reels(raw: Any, symbol: Any, where: str) -> tuple[Reel, Reel, Reel]:
    if not isinstance(raw, list) or len(raw) != 3:
        raise TitleError(f"{where}: a 3-reel title needs three [[reels]]")
    reels = []
    for i, reel in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(reel, dict) or set(reel) != {"stops"} or not isinstance(reel["stops"], list):
            raise TitleError(f"{at}: expected stops = [[symbol, weight], ...]")
        codes, weights = [], []
        for j, stop in enumerate(reel["stops"]):
            if not isinstance(stop, list) or len(stop) != 2:
                raise TitleError(f"{at}.stops[{j}]: expected [symbol, virtual stops], got {stop!r}")
            codes.append(symbol(stop[0], f"{at}.stops[{j}]"))
            weights.append(_int(stop[1], f"{at}.stops[{j}] weight", 1))
        if len(codes) < 3:
            raise TitleError(f"{at}: a reel needs at least three physical stops")
        reels.append(Reel(tuple(codes), tuple(weights)))
    return reels[0], reels[1], reels[2]


def _paytables(raw: Any, max_coins: int, pattern: Any, matcher: Any, where: str) -> tuple[Paytable, ...]:
    if not isinstance(raw, list) or not raw:
        raise TitleError(f"{where}: expected one or more [[paytables]]")
    tables = []
    for i, table in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(table, dict) or not set(table) <= {"name", "color", "rows"} or "rows" not in table:
            raise TitleError(f"{at}: expected name, color and rows")
        rows = []
        for j, row in enumerate(table["rows"]):
            rat = f"{at}.rows[{j}]"
            if not isinstance(row, dict) or not set(row) <= {"line", "anywhere", "count", "pays", "unmultiplied_with_wilds"}:
                raise TitleError(f"{rat}: expected line or anywhere/count, pays, unmultiplied_with_wilds")
            if ("line" in row) == ("anywhere" in row):
                raise TitleError(f"{rat}: a row is either a line = \"A B C\" or anywhere = \"A\" with a count")
            if "line" in row:
                if "count" in row:
                    raise TitleError(f"{rat}.count: only an anywhere row has a count")
                pat = pattern(row["line"], f"{rat}.line")
            else:
                count = _int(row.get("count"), f"{rat}.count", 1)
                if count > 3:
                    raise TitleError(f"{rat}.count: a payline shows three symbols")
                m = matcher(_str(row["anywhere"], f"{rat}.anywhere"), f"{rat}.anywhere")
                pat = Pattern(f"{count} {row['anywhere']} anywhere", anywhere=m, count=count)
            pays = row.get("pays")
            if (not isinstance(pays, list) or len(pays) != max_coins
                    or any(not isinstance(p, int) or isinstance(p, bool) or p < 1 for p in pays)):
                raise TitleError(f"{rat}.pays: expected {max_coins} whole numbers >= 1 (one per coin bet)")
            if any(b < a for a, b in zip(pays, pays[1:])):
                raise TitleError(f"{rat}.pays: more coins never pay less")
            rows.append(PayRow(pat, tuple(pays), _int(row.get("unmultiplied_with_wilds", 0),
                                                      f"{rat}.unmultiplied_with_wilds")))
        if not rows:
            raise TitleError(f"{at}.rows: a paytable needs at least one row")
        texts = [r.text for r in rows]
        if len(texts) != len(set(texts)):
            raise TitleError(f"{at}.rows: a combination is listed twice")
        tables.append(Paytable(_str(table.get("name", f"paytable {i + 1}"), f"{at}.name"), tuple(rows),
                               table.get("color", "")))
    return tuple(tables)
