"""Keyframes of a video: when to take them, the text on them (OCR), what they show (one vision request).

Stills are taken at regular intervals (at most MAX_FRAMES, so a long video gets sparser frames and
the reply says how sparse), plus the starts of new shots when one low-resolution decoding pass is
cheap (short videos). Consecutive stills that look the same are merged, so a static slide costs one
OCR and one image in the vision request. All stills go to the vision model in ONE request, which
answers one line per frame: a few seconds instead of one call per frame.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import Settings
from tools.core.context import ToolModel
from tools.core.errors import ToolFailure
from tools.media.audio import clock
from tools.media.images import SourceImage
from tools.media.video.media import scene_changes, still
from tools.media.vision import ocr_image
from tools.media.vision_model import ask_vision

MAX_FRAMES = 12
MIN_INTERVAL_S = 2.0
SCENE_SCAN_MAX_S = 180.0  # scene detection decodes the whole video: only for videos up to 3 minutes
SAME_PICTURE = 4.0  # mean absolute difference (0-255) of 32x32 greyscale thumbnails below which stills are merged
VISION_FRAME_SIDE = 640


@dataclass
class Keyframe:
    """One still: when it was taken, until when the picture stayed, its text and what the model saw."""

    at: float
    image: Any
    until: float | None = None
    ocr: str = ""
    seen: str = ""
    number: int | None = None
    """A GIF's frame number (its frames are listed as such, with their display times)."""


def plan(duration: float | None, scenes: list[float]) -> tuple[list[float], str]:
    """Times to take stills at, and a sentence saying how they were chosen."""
    if not duration or duration <= 0:
        return [0.0], "one still at the start (the duration is unknown)"
    count = max(1, min(MAX_FRAMES, int(duration // MIN_INTERVAL_S) or 1))
    step = duration / count
    times = [round((k + 0.5) * step, 2) for k in range(count)]
    how = f"{count} at regular intervals, one every {clock(step) if step >= 60 else f'{step:.1f} s'}"
    if duration > MAX_FRAMES * 30:
        how += "; a long video, so frames are sparse: what happens between them is not seen"
    added = 0
    for at in scenes:
        at = min(at + 0.2, duration - 0.05)  # just after the cut, once the new shot is on screen
        if added < 4 and all(abs(at - t) > step / 3 for t in times):
            times.append(round(at, 2))
            added += 1
    if added:
        how += f", plus {added} at scene changes"
    return sorted(times), how


def take_stills(ffmpeg: str, file: Path, duration: float | None, folder: Path,
                deadline: float) -> tuple[list[Keyframe], str]:
    """The keyframes of `file` (merged when alike) and how they were chosen; stops early at `deadline`."""
    from PIL import Image

    scenes: list[float] = []
    if duration and duration <= SCENE_SCAN_MAX_S:
        scenes = scene_changes(ffmpeg, file, timeout=max(1.0, min(8.0, (deadline - time.monotonic()) / 4)))
    times, how = plan(duration, scenes)
    frames: list[Keyframe] = []
    for number, at in enumerate(times):
        if time.monotonic() > deadline:
            how += f"; stopped after {number} of {len(times)} stills (TOOL_TIMEOUT)"
            break
        path = still(ffmpeg, file, at, folder / f"frame-{number:02d}.png",
                     timeout=max(1.0, deadline - time.monotonic()))
        if path is None:
            continue
        with Image.open(path) as img:
            image = img.convert("RGB")
        if frames and _alike(frames[-1].image, image):
            frames[-1].until = at
            continue
        frames.append(Keyframe(at, image))
    return frames, how


def _alike(a: Any, b: Any) -> bool:
    from PIL import ImageChops, ImageStat

    small_a, small_b = (img.convert("L").resize((32, 32)) for img in (a, b))
    return ImageStat.Stat(ImageChops.difference(small_a, small_b)).mean[0] < SAME_PICTURE


def read_text(frames: list[Keyframe], deadline: float) -> bool:
    """OCR every keyframe (meaningful lines only) until `deadline`; False when it had to stop early."""
    for frame in frames:
        remaining = deadline - time.monotonic()
        if remaining < 1.0:
            return False
        try:
            frame.ocr = meaningful(ocr_image(frame.image, timeout=min(10.0, remaining)))
        except ToolFailure:
            frame.ocr = ""
    return True


def meaningful(text: str) -> str:
    """The OCR lines that look like writing (tesseract reads texture in photos as stray symbols)."""
    kept = []
    for line in text.splitlines():
        line = " ".join(line.split())
        letters = sum(ch.isalnum() for ch in line)
        if letters >= 3 and letters >= 0.6 * len(line.replace(" ", "")):
            kept.append(line)
    return " / ".join(kept)


def describe(frames: list[Keyframe], model: ToolModel, settings: Settings, question: str, title: str | None,
             deadline: float) -> str | None:
    """Fill each frame's `seen` from one vision request; a note when the model could not answer in time."""
    listing = "\n".join(f"Frame {n}: at {clock(f.at)}" for n, f in enumerate(frames, start=1))
    ask = (f' Where it helps answer this question, say what the frame shows about it: "{question.strip()}".'
           if question.strip() else "")
    prompt = (f"These are {len(frames)} keyframes, in order, of a video{f' titled {title!r}' if title else ''}:\n"
              f"{listing}\nFor each frame write exactly one line 'Frame N: ' followed by a short description of "
              f"what it shows (people, objects, actions, on-screen text, numbers).{ask}")
    images = [SourceImage(f.image, f"frame at {clock(f.at)}") for f in frames]
    box: dict[str, str] = {}

    def call() -> None:
        try:
            box["reply"] = ask_vision(model, settings, prompt, images, max_side=VISION_FRAME_SIDE)
        except ToolFailure as exc:
            box["error"] = str(exc)

    worker = threading.Thread(target=call, daemon=True, name="video-vision")
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        return "the vision model did not describe the frames within TOOL_TIMEOUT; only their OCR text is shown"
    if "error" in box:
        return box["error"]
    unmatched = []
    for line in str(box.get("reply", "")).splitlines():
        match = re.match(r"^\W*frame\s+(\d+)\s*(?:\([^)]*\))?\s*[:.)\-–]\s*(.+)$", line.strip(), re.IGNORECASE)
        if match and 1 <= int(match.group(1)) <= len(frames):
            frames[int(match.group(1)) - 1].seen = match.group(2).strip()
        elif line.strip():
            unmatched.append(line.strip())
    if unmatched and not any(f.seen for f in frames):
        return "vision model's answer: " + " ".join(unmatched)[:1500]
    return None
