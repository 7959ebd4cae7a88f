"""The screens' fit checks shared by the tests/test_screens_fit*.py files: what is wrong with a page as laid out (no scrolling, nothing outside the viewport or cut off, no overlapping text, no raw keys, 18 px text at 1080p), run at each size with a screenshot of each as an artifact."""

from __future__ import annotations

import base64
import os
import struct
from pathlib import Path
from typing import Any

import pytest

SIZES = ((1920, 1080), (1280, 720), (1024, 600), (800, 480))
ENDS = (SIZES[0], SIZES[-1])   # the largest and the smallest: every state of a round is checked at these

# What is wrong with the page as it is laid out now: a list of sentences (empty: it fits).
CHECK = r"""() => {
  const W = innerWidth, H = innerHeight, out = [];
  const el = document.scrollingElement;
  if (el.scrollHeight > H + 1 || el.scrollWidth > W + 1) out.push(`scrolls: ${el.scrollWidth}x${el.scrollHeight}`);
  if (document.body.dataset.layout !== document.body.dataset.game) out.push(`layout: ${document.body.dataset.layout}`);
  // (a key in capitals too: a shoe's flag CARDS_LOW is as raw as a snapshot's key cut_reached)
  const raw = /\b[A-Za-z]+\[\d+\]|\b[A-Za-z]+_[A-Za-z_]+\b|\b[a-z]+:\d+\b/.exec(document.body.innerText);
  if (raw) out.push(`raw key: ${raw[0]}`);
  // every piece of text (not the cards' own SVG letters) with its boxes and the boxes that clip it
  const texts = [];
  const walk = document.createTreeWalker(document.getElementById("app"), NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim() || n.parentElement.closest("svg")) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
    if (!rects.length) continue;
    const what = n.textContent.trim().slice(0, 30);
    const px = parseFloat(getComputedStyle(n.parentElement).fontSize);
    if (W >= 1900 && px < 18) out.push(`small text: "${what}" at ${px.toFixed(1)} px`);   // legible from two metres
    for (const r of rects) {
      if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) {
        out.push(`outside the viewport: "${what}" at ${Math.round(r.left)},${Math.round(r.top)}`);
      }
      for (let a = n.parentElement; a && a !== document.body; a = a.parentElement) {
        const s = getComputedStyle(a);
        if (s.overflowX === "visible" && s.overflowY === "visible") continue;
        const b = a.getBoundingClientRect();
        if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
          out.push(`cut off: "${what}" by .${[...a.classList].join(".")}`);
          break;
        }
      }
      texts.push([what, r]);
    }
  }
  // a spot's bets, cards and values lie inside it
  for (const spot of document.querySelectorAll(".felt .spot")) {
    const b = spot.getBoundingClientRect();
    for (const e of spot.querySelectorAll(".bet, .card, .note, .net, .seat-note")) {
      const r = e.getBoundingClientRect();
      if (r.width && (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)) {
        out.push(`outside spot ${spot.dataset.spot}: .${[...e.classList].join(".")}`);
      }
    }
  }
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const [p, a] = texts[i], [q, b] = texts[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 2 && h > 2) out.push(`overlap: "${p}" and "${q}"`);
    }
  }
  return [...new Set(out)];
}"""

# The cabinet screen's and the attendant page's checks: the player page's, less its game layout, plus: the reels,
# every meter and feature tile, each paytable row and each lockup's buttons lie whole inside the viewport and inside
# whatever clips them; the symbols' names drawn in the paytable's pictures are 18 px or more at 1080p (the reels'
# are several times that).
CABINET_CHECK = CHECK.replace(
    "if (document.body.dataset.layout !== document.body.dataset.game) out.push(`layout: ${document.body.dataset.layout}`);",
    r"""for (const e of document.querySelectorAll(".machine, .reel, .meter, .feature, .slot-paytable tr, .alert button, " +
                                             ".progressive, .recall-nav button, .mini-window")) {
    const r = e.getBoundingClientRect();
    const what = `${e.tagName.toLowerCase()}.${[...e.classList].join(".")} "${e.textContent.trim().slice(0, 24)}"`;
    if (!r.width || !r.height) continue;
    if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) out.push(`not in view: ${what}`);
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === "visible" && s.overflowY === "visible") continue;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
        out.push(`cut off: ${what} by .${[...a.classList].join(".")}`);
        break;
      }
    }
  }
  // a symbol's code ("7R", "B1") where a player or attendant reads its name: a feature's rule, a recall's line
  const symbols = typeof Slots !== "undefined" && Slots.info ? Slots.info.symbols : {};
  const named = new Set(Object.values(symbols).flatMap((s) => s.name.toUpperCase().split(/\s+/)));   // ("VW" of "VW Bus")
  const code = document.getElementById("app").innerText.split(/[\s,.:;()\u00b7\u2192\/]+/)
    .find((t) => symbols[t] && !named.has(t.toUpperCase()));
  if (code) out.push(`raw symbol code: ${code}`);
  if (W >= 1900) {
    for (const icon of document.querySelectorAll(".slot-paytable svg")) {
      const use = icon.querySelector("use"), r = icon.getBoundingClientRect();
      const sym = use && document.querySelector(use.getAttribute("href"));
      for (const t of sym ? sym.querySelectorAll("text") : []) {
        const px = Number(t.getAttribute("font-size")) * r.height / 100;
        if (px < 18) out.push(`small text: "${t.textContent}" in the paytable's ${icon.dataset.symbol} at ${px.toFixed(1)} px`);
      }
    }
  }""")


def artifacts_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the fit tests' screenshots go: $CROUPIER_ARTIFACTS/screens when set (CI keeps it), else screens/ in
    the pytest run's temporary folder (pytest keeps the last three runs' folders)."""
    named = os.environ.get("CROUPIER_ARTIFACTS")
    folder = Path(named) / "screens" if named else tmp_path_factory.getbasetemp() / "screens"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifacts_folder(tmp_path_factory)


async def settled(page: Any) -> None:
    """An animation frame: the page's resize handlers have run (a check's measuring lays the page out itself)."""
    await page.evaluate("new Promise(r => requestAnimationFrame(r))")


SHOTS: list[Path] = []   # every screenshot the fit checks wrote this session, for the tests that they were


async def fit(page: Any, check: str, name: str, sizes: Any, problems: dict[str, list[str]], folder: Path) -> None:
    """`check` run on the page at each size (problems keyed "<name> <W>x<H>"), a screenshot of each in
    `folder`/<name>-<W>x<H>.jpg (.png with CROUPIER_SCREENSHOTS=png); the page is left at the last size. The page is
    brought to the front first: a page behind another paints no frames, and its screenshot is of whatever it last
    painted."""
    await page.bring_to_front()
    for w, h in sizes:
        await page.set_viewport_size({"width": w, "height": h})
        await settled(page)
        found = await page.evaluate(check)
        if found:
            problems[f"{name} {w}x{h}"] = found
        path = folder / f"{name.replace(' ', '-')}-{w}x{h}{SUFFIX}"
        await screenshot(page, path)
        SHOTS.append(path)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's header or a JPEG's frame header, None when it is neither."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", data[16:24])
    i = 2
    while data[:2] == b"\xff\xd8" and i + 9 < len(data) and data[i] == 0xFF:
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None


# JPEG unless CROUPIER_SCREENSHOTS=png: a felt's gradient makes a 1920x1080 PNG 1.8 MB (the fit tests' ~700 shots:
# 570 MB a run) and its transfer and encoding twice the time of the JPEG's.
FORMAT = "png" if os.environ.get("CROUPIER_SCREENSHOTS") == "png" else "jpeg"
SUFFIX = ".png" if FORMAT == "png" else ".jpg"


async def screenshot(page: Any, path: Path) -> None:
    """The page's viewport, taken over the DevTools protocol with Chromium's fast encoder (a fifth of the time of
    Playwright's screenshot at 1920x1080; the fit tests take hundreds). A capture of another size than the viewport
    (one taken before the page's first frame at a new size) is taken again by Playwright, which waits."""
    cdp = getattr(page, "_fit_cdp", None)
    if cdp is None:
        cdp = page._fit_cdp = await page.context.new_cdp_session(page)
    params: dict[str, Any] = {"format": FORMAT, "optimizeForSpeed": True, **({"quality": 85} if FORMAT == "jpeg" else {})}
    data = base64.b64decode((await cdp.send("Page.captureScreenshot", params))["data"])
    size = page.viewport_size
    if image_size(data) != (size["width"], size["height"]):
        data = await page.screenshot(type=FORMAT, **({"quality": 85} if FORMAT == "jpeg" else {}))
    path.write_bytes(data)


def shots_wrong(prefix: str) -> list[str]:
    """The screenshots named `prefix`* that the fit checks wrote but are missing or not of their name's size; and a
    sentence when there were none."""
    mine = [p for p in SHOTS if p.name.startswith(prefix)]
    wrong = [p.name for p in mine if not p.is_file() or
             "x".join(map(str, image_size(p.read_bytes()) or ())) != p.stem.rsplit("-", 1)[1]]
    return wrong if mine else [f"no screenshot {prefix}*"]


def report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{k}: {'; '.join(v[:6])}" for k, v in problems.items())
