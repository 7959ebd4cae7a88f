"""Rank glyphs in TrueType fonts, drawn once into `glyphs.npz` beside this file: more index styles for the renderer.

`python -m vision.training.glyphs` rebuilds it (needs Pillow and Debian's fonts-dejavu-core and fonts-liberation);
training reads the file only (`render.use_extra_styles`), so neither is needed to train. Fonts: DejaVu (Bitstream
Vera and public-domain terms) and Liberation (SIL Open Font License 1.1); see vision/models/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

ATLAS = Path(__file__).resolve().parent / "glyphs.npz"
FONTS = ("dejavu/DejaVuSans.ttf", "dejavu/DejaVuSans-Bold.ttf", "dejavu/DejaVuSansCondensed-Bold.ttf",
         "dejavu/DejaVuSerif.ttf", "dejavu/DejaVuSerif-Bold.ttf",
         "dejavu/DejaVuSerifCondensed-Bold.ttf", "liberation/LiberationSans-Regular.ttf",
         "liberation/LiberationSans-Bold.ttf", "liberation/LiberationSansNarrow-Regular.ttf",
         "liberation/LiberationSansNarrow-Bold.ttf", "liberation/LiberationSerif-Regular.ttf",
         "liberation/LiberationSerif-Bold.ttf")
TEXTS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
HEIGHT = 64


def build(root: Path = Path("/usr/share/fonts/truetype")) -> dict[str, np.ndarray]:
    """{"font|text": uint8 mask, HEIGHT tall, cropped to the ink} for every font and rank text."""
    from PIL import Image, ImageDraw, ImageFont

    out = {}
    for rel in FONTS:
        font = ImageFont.truetype(str(root / rel), 160)
        for text in TEXTS:
            img = Image.new("L", (400, 260), 0)
            ImageDraw.Draw(img).text((20, 20), text, fill=255, font=font)
            a = np.asarray(img)
            ys, xs = np.nonzero(a > 40)
            a = a[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
            w = max(1, round(a.shape[1] * HEIGHT / a.shape[0]))
            small = np.asarray(Image.fromarray(a).resize((w, HEIGHT), Image.LANCZOS))
            out[f"{Path(rel).stem}|{text}"] = small.astype(np.uint8)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ATLAS
    atlas = build()
    # Typed Any for numpy's stub only: it lets `**` arrays fill savez's `allow_pickle` (a bool) too, and that
    # keyword, spelt out, needs numpy 2.1 (the project takes 1.26).
    arrays: dict[str, Any] = atlas
    np.savez_compressed(target, **arrays)
    print(f"{len(atlas)} glyphs of {len(FONTS)} fonts written to {target}")
