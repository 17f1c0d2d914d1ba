"""Text on video frames in any of the call languages (Czech and Russian need more than ASCII).

OpenCV's Hershey fonts draw ASCII only, so text goes through Pillow with a TrueType font found on this
machine (DejaVu Sans from fonts-dejavu-core first; nothing is downloaded). Without any usable font the
text is transliterated to ASCII and drawn with Pillow's built-in font, and ``FONT_FALLBACK`` says so.
"""
from __future__ import annotations

import os
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["font_path", "draw_lines", "text_size", "to_ascii", "FONT_FALLBACK"]

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/share/fonts/TTF",
             "/usr/share/fonts/truetype/liberation", "/usr/local/share/fonts", "/Library/Fonts",
             os.path.expanduser("~/.local/share/fonts"), "C:/Windows/Fonts")
FONT_FILES = {False: ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "Arial.ttf", "arial.ttf"),
              True: ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf")}
FONT_FALLBACK = "no TrueType font with Czech/Russian letters found (install fonts-dejavu-core); text is ASCII"

_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
                     ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "y", "k", "l", "m", "n", "o", "p", "r", "s",
                      "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya"]))


@lru_cache(maxsize=None)
def font_path(bold: bool = False) -> str | None:
    """A TrueType font that has Latin with diacritics and Cyrillic, or None."""
    env = os.environ.get("SHOTJUDGE_FONT")
    if env and Path(env).is_file():
        return env
    for folder in FONT_DIRS:
        for name in FONT_FILES[bold] + FONT_FILES[False]:
            p = Path(folder) / name
            if p.is_file():
                return str(p)
    return None


@lru_cache(maxsize=64)
def _font(size_px: int, bold: bool):
    from PIL import ImageFont

    path = font_path(bold)
    if path is not None:
        return ImageFont.truetype(path, size_px), False
    try:
        return ImageFont.load_default(size_px), True
    except TypeError:  # Pillow < 10.1: bitmap font, one size
        return ImageFont.load_default(), True


def to_ascii(text: str) -> str:
    """Last-resort transliteration: Czech loses its accents, Russian is spelled in Latin letters."""
    out = []
    for ch in text:
        low = ch.lower()
        if low in _CYRILLIC:
            t = _CYRILLIC[low]
            out.append(t.capitalize() if ch != low else t)
        else:
            out.append(ch)
    plain = unicodedata.normalize("NFKD", "".join(out))
    return "".join(c for c in plain if ord(c) < 128 and not unicodedata.combining(c))


def text_size(text: str, size_px: int, bold: bool = False) -> tuple[int, int]:
    font, ascii_only = _font(size_px, bold)
    box = font.getbbox(to_ascii(text) if ascii_only else text)
    return int(box[2] - box[0]), int(box[3] - box[1])


def draw_lines(image: np.ndarray, lines: Sequence[tuple[str, tuple[int, int, int]]], origin: tuple[int, int],
               size_px: int, *, bold_first: bool = False, background: tuple[int, int, int] | None = (0, 0, 0),
               alpha: float = 0.65, pad: int = 8, max_width: int | None = None) -> np.ndarray:
    """Draw ``(text, BGR colour)`` lines from ``origin`` (top-left) on a copy of ``image`` (BGR uint8),
    over a translucent box; lines wider than ``max_width`` are cut with an ellipsis."""
    from PIL import Image, ImageDraw

    out = np.array(image, copy=True)
    if not lines:
        return out
    fonts = [_font(size_px, bold_first and i == 0) for i in range(len(lines))]
    texts = []
    for (text, _), (font, ascii_only) in zip(lines, fonts):
        text = to_ascii(text) if ascii_only else text
        if max_width is not None and font.getlength(text) > max_width - 2 * pad:
            dots = "..." if ascii_only else "…"
            while len(text) > 1 and font.getlength(text + dots) > max_width - 2 * pad:
                text = text[:-1]
            text = text.rstrip() + dots
        texts.append(text)
    line_h = int(size_px * 1.3)
    width = int(max(f.getlength(t) for t, (f, _) in zip(texts, fonts))) + 2 * pad
    height = line_h * len(texts) + 2 * pad
    x0, y0 = int(origin[0]), int(origin[1])
    x1, y1 = min(out.shape[1], x0 + width), min(out.shape[0], y0 + height)
    if background is not None and x1 > x0 and y1 > y0:
        box = out[y0:y1, x0:x1].astype(np.float32)
        out[y0:y1, x0:x1] = (box * (1 - alpha) + np.array(background, np.float32) * alpha).astype(np.uint8)
    pil = Image.fromarray(out[:, :, ::-1])
    draw = ImageDraw.Draw(pil)
    for k, (text, (font, _)) in enumerate(zip(texts, fonts)):
        b, g, r = lines[k][1]
        draw.text((x0 + pad, y0 + pad + k * line_h), text, font=font, fill=(r, g, b))
    return np.ascontiguousarray(np.asarray(pil)[:, :, ::-1])
