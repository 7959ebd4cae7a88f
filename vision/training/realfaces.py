"""Real printed decks for training: single-card photos (Pascal VOC, one whole-card box each) turned into upright
rectified faces, a folder a deck (`write_faces`), and the real index corners cut from those photos (`real_corners`).

A face folder holds `<card>.png` named as `faces.use_extra_styles` reads them (`6s.png`, `10h.png`, `Qd.png`) and
`quads.json`: for each face the photo it was cut from and the card's outline there (top-left, top-right,
bottom-right, bottom-left as the face shows it), so that training can cut the index corners from the photo itself
(its own light and focus) rather than from the resampled face.

    python -m vision.training.realfaces SRC_DIR DST_DIR [--sheet SHEET.png]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from controller.cards import Card, Suit, parse_card
from vision.cardrect import CardRect
from vision.faces import face_name
from vision.labelfiles import load_folder

__all__ = ["FACE_W", "FACE_H", "face_name", "card_quad", "rectify", "quad_rect", "write_faces", "contact_sheet",
           "real_corners", "main"]

FACE_W, FACE_H = 256, 384  # as the geaxgx deck's faces: the renderer draws any size at CARD_W x CARD_H


def _paper_mask(region: np.ndarray) -> np.ndarray:
    """Card paper in `region`: brighter than Otsu's split of the grey and not strongly coloured (a red cloth is
    bright in grey), closed so that the ink on the card does not hole it."""
    grey = cv2.GaussianBlur(cv2.cvtColor(region, cv2.COLOR_BGR2GRAY), (0, 0), 2)
    t, _ = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    sat = cv2.GaussianBlur(cv2.cvtColor(region, cv2.COLOR_BGR2HSV)[..., 1], (0, 0), 2)
    paper = ((grey > t) & (sat < 90)).astype(np.uint8) * 255
    k = max(5, region.shape[1] // 30)
    closed = cv2.morphologyEx(paper, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    return np.asarray(cv2.morphologyEx(closed, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))))


def _edge_lines(hull: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """The quad's corners refitted: each side a line through the hull points along it (away from the rounded
    corners), the corners where they cross; None where a side has too few points."""
    pts = hull.reshape(-1, 2).astype(np.float64)
    dense = []
    for a, b in zip(pts, np.roll(pts, -1, axis=0)):  # the hull's sides sampled, so long straight sides count
        n = max(2, int(np.hypot(*(b - a)) // 4))
        dense.append(a + (b - a) * np.linspace(0, 1, n, endpoint=False)[:, None])
    pts = np.concatenate(dense)
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        length = float(np.hypot(*d))
        u = d / length
        rel = pts - a
        along = rel @ u
        off = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
        near = (along > 0.12 * length) & (along < 0.88 * length) & (off < 0.03 * length)
        if near.sum() < 10:
            return None
        vx, vy, x0, y0 = cv2.fitLine(pts[near].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = []
    for i in range(4):
        (p, r), (q, s) = lines[i - 1], lines[i]
        m = np.array([r, -s]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        t = np.linalg.solve(m, q - p)
        out.append(p + r * t[0])
    return np.array(out)


def card_quad(image: np.ndarray, box: Sequence[float]) -> np.ndarray | None:
    """The card's outline in `image` near `box` (x0, y0, x1, y1): (4, 2) corners, clockwise on screen, the first
    side a short one (the card upright, or turned half round: a face's two index corners look alike); None where
    no card-shaped paper is found."""
    H, W = image.shape[:2]
    x0, y0, x1, y1 = box
    m = 0.06 * max(x1 - x0, y1 - y0)
    ox, oy = int(max(0, x0 - m)), int(max(0, y0 - m))
    region = image[oy:int(min(H, y1 + m)), ox:int(min(W, x1 + m))]
    contours, _ = cv2.findContours(_paper_mask(region), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    if rw * rh < 0.4 * (x1 - x0) * (y1 - y0) or not 1.2 <= max(rw, rh) / max(1.0, min(rw, rh)) <= 1.75:
        return None
    peri = cv2.arcLength(hull, True)
    approx = None
    for eps in (0.01, 0.02, 0.03, 0.05):
        a = cv2.approxPolyDP(hull, eps * peri, True)
        if len(a) == 4:
            approx = a.reshape(4, 2).astype(np.float64)
            break
    if approx is None:
        approx = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float64)
    quad = _edge_lines(hull, _clockwise(approx))
    if quad is None:
        quad = _clockwise(cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float64))
    return _clockwise(quad) + np.array([ox, oy], np.float64)


def _clockwise(quad: np.ndarray) -> np.ndarray:
    """The quad's corners clockwise on screen (y down), the first the nearer-to-top-left end of a short side."""
    c = quad.mean(axis=0)
    q = quad[np.argsort(np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0]))]
    sides = [float(np.hypot(*(q[(i + 1) % 4] - q[i]))) for i in range(4)]
    starts = [i for i in range(4) if sides[i] <= sides[(i + 1) % 4]]
    first = min(starts, key=lambda i: float(q[i].sum()))
    return np.roll(q, -first, axis=0)


def rectify(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = (FACE_W, FACE_H)) -> np.ndarray:
    """The card inside `quad` (top-left, top-right, bottom-right, bottom-left) warped upright to `size` (w, h)."""
    w, h = size
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    M = cv2.getPerspectiveTransform(quad.astype(np.float32), dst)
    return cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def quad_rect(quad: np.ndarray) -> CardRect:
    """The card rectangle nearest the quad (top-left, top-right, bottom-right, bottom-left): its centre, up
    along the mean of its long sides, half its mean length and width."""
    tl, tr, br, bl = quad
    c = quad.mean(axis=0)
    up = ((tl + tr) - (bl + br)) / 2
    half_l = float(np.hypot(*up)) / 2
    half_w = (float(np.hypot(*(tr - tl))) + float(np.hypot(*(br - bl)))) / 4
    return CardRect(float(c[0]), float(c[1]), float(up[0] / (2 * half_l)), float(up[1] / (2 * half_l)),
                    half_l, half_w)


def write_faces(src: Path, dst: Path, sheet: Path | None = None, say=print) -> dict[str, list]:
    """Each single-card photo under `src` (its one label a card) rectified into `dst/<card>.png`; `dst/quads.json`
    records each face's photo and outline. Photos whose card is not found are left out and said. With `sheet`, a
    contact sheet of the faces (PNG). Returns the quads written (face stem -> [photo, quad])."""
    dst.mkdir(parents=True, exist_ok=True)
    quads: dict[str, list] = {}
    faces = []
    for item in load_folder(src):
        cards = [lab for lab in item.labels if lab.rank is not None and lab.suit is not None]
        if len(cards) != 1:
            say(f"{item.path.name}: {len(cards)} cards labelled, not one: left out")
            continue
        lab = cards[0]
        card = Card(lab.rank, Suit(lab.suit))  # type: ignore[arg-type]
        image = cv2.imread(str(item.path), cv2.IMREAD_COLOR)
        if image is None:
            say(f"{item.path.name}: not an image: left out")
            continue
        xs, ys = [p[0] for p in lab.outline], [p[1] for p in lab.outline]
        quad = card_quad(image, (min(xs), min(ys), max(xs), max(ys)))
        if quad is None:
            say(f"{item.path.name}: no card outline found: left out")
            continue
        name = face_name(card)
        face = rectify(image, quad)
        cv2.imwrite(str(dst / f"{name}.png"), face)
        quads[name] = [str(item.path.resolve()), quad.round(1).tolist()]
        faces.append((name, face))
    (dst / "quads.json").write_text(json.dumps(quads, indent=1, sort_keys=True) + "\n")
    say(f"{src}: {len(quads)} faces written to {dst}")
    if sheet is not None and faces:
        cv2.imwrite(str(sheet), contact_sheet(faces))
    return quads


def contact_sheet(faces: Sequence[tuple[str, np.ndarray]], cols: int = 13, scale: float = 0.4) -> np.ndarray:
    """The faces side by side, named, `cols` a row, at `scale` of their size."""
    w, h = int(FACE_W * scale), int(FACE_H * scale)
    rows = math.ceil(len(faces) / cols)
    out = np.full((rows * (h + 14), cols * (w + 4), 3), 90, np.uint8)
    for k, (name, face) in enumerate(faces):
        y, x = (k // cols) * (h + 14), (k % cols) * (w + 4)
        out[y:y + h, x:x + w] = cv2.resize(face, (w, h), interpolation=cv2.INTER_AREA)
        cv2.putText(out, name, (x + 2, y + h + 11), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def real_corners(rng: np.random.Generator, folders: Sequence[Path], copies: int = 8
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Jittered index corners (both ends) of every face in the face `folders` that has a `quads.json`, cut from the
    photo it came from at its outline as the readers cut a card's corners: crops, rank classes, suit classes."""
    from vision.training.data import jitter_rect
    from vision.crops import index_crops

    crops, ranks, suits = [], [], []
    for folder in folders:
        record = Path(folder) / "quads.json"
        if not record.is_file():
            continue
        for name, (photo, quad) in sorted(json.loads(record.read_text()).items()):
            image = cv2.imread(photo, cv2.IMREAD_COLOR)
            if image is None:
                raise FileNotFoundError(f"{record}: {name}'s photo {photo} is not an image")
            rect = quad_rect(np.array(quad, np.float64))
            rects = [jitter_rect(rng, r) for r in (rect, rect.flipped()) for _ in range(copies)]
            crops.append(index_crops(image, rects))
            card = parse_card(name)  # the face's name (`face_name`) is the card's
            ranks.append(np.full(len(rects), card.rank - 2, np.int64))
            suits.append(np.full(len(rects), int(card.suit), np.int64))  # type: ignore[arg-type]
    if not crops:
        return np.zeros((0, 48, 32, 3), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(crops), np.concatenate(ranks), np.concatenate(suits)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.training.realfaces", description=__doc__.splitlines()[0])
    p.add_argument("src", type=Path, help="a folder of single-card photos, Pascal VOC, one whole-card box each")
    p.add_argument("dst", type=Path, help="where the faces go (52 a deck)")
    p.add_argument("--sheet", type=Path, default=None, help="a contact sheet of the faces written (PNG)")
    args = p.parse_args(argv)
    write_faces(args.src, args.dst, args.sheet)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
