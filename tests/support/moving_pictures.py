"""Moving pictures for watch_video tests: a video whose number changes every second, a GIF with a telling frame."""

from __future__ import annotations

from pathlib import Path

from tests.support.media import _font, make_video

GIF_TEXTS = ("WAIT", "SET", "READY", "ANSWER 73", "DONE")
GIF_MS = (200, 300, 500, 700, 400)


def counter_video(path: Path, seconds: int = 12) -> Path:
    """A silent video whose big number changes every second: 'CODE 40' during 0:00, 'CODE 41' during 0:01 and so on."""
    return make_video(path, slides=tuple(f"CODE {40 + k}" for k in range(seconds)), speech=None, slide_seconds=1)


def answer_gif(path: Path) -> Path:
    """An animated GIF whose fourth frame (shown 1.00–1.70 s) holds the answer."""
    from PIL import Image, ImageDraw

    frames = []
    for text in GIF_TEXTS:
        image = Image.new("RGB", (480, 200), "white")
        ImageDraw.Draw(image).text((40, 60), text, fill="black", font=_font(64))
        frames.append(image)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=list(GIF_MS), loop=0)
    return path
