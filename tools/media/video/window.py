"""A moment in a video: the frames of a time window, one a second, and an animated GIF frame by frame.

`watch_video(start=, end=)` looks at what is on screen between two times (inclusive): a frame every
second, at most MAX_WINDOW_FRAMES (evenly spread past that, the reply says how far apart), taken in
ONE ffmpeg pass (`-ss` then the `fps` filter) rather than one seek per frame. A GIF is not sampled: each
of its frames is read with Pillow with its display time (GIF frames have their own durations), pixel-identical
neighbours merged.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import time
from pathlib import Path

from tools.core.errors import ToolFailure
from tools.media.audio import clock
from tools.media.video.frames import Keyframe
from tools.media.video.media import FRAME_WIDTH

MAX_WINDOW_FRAMES = 30
MAX_GIF_FRAMES = 30
_TIME = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d{1,2}(?:\.\d+)?)\s*$|^\s*(\d+(?:\.\d+)?)\s*s?\s*$")


def parse_time(text: str, name: str) -> float | None:
    """Seconds from 'm:ss', 'h:mm:ss' or '75' / '75.5'; None for empty; ToolFailure otherwise."""
    if not (text or "").strip():
        return None
    found = _TIME.match(text)
    if not found:
        raise ToolFailure(f"{name} must be a time such as 1:05, 0:01:05 or 65 (seconds), not {text!r}.",
                          "bad_arguments")
    if found.group(4) is not None:
        return float(found.group(4))
    hours, minutes, seconds = int(found.group(1) or 0), int(found.group(2)), float(found.group(3))
    if seconds >= 60 or (found.group(1) and minutes >= 60):
        raise ToolFailure(f"{name} {text!r} is not a valid time (minutes and seconds run to 59).", "bad_arguments")
    return hours * 3600 + minutes * 60 + seconds


def window_bounds(start: float | None, end: float | None, duration: float | None) -> tuple[float, float]:
    """The inclusive window [start, end], clamped to the video; ToolFailure when it is empty or past the end."""
    first = start or 0.0
    last = end if end is not None else first + MAX_WINDOW_FRAMES - 1  # no end: thirty seconds, a frame each
    if duration:
        if first >= duration:
            raise ToolFailure(f"start {clock(first)} is past the end of the video ({clock(duration)}). Pick a "
                              "start within it.", "bad_arguments")
        last = min(last, max(first, duration - 0.05))
    if last < first:
        raise ToolFailure(f"end {clock(last)} is before start {clock(first)}.", "bad_arguments")
    return first, last


def window_step(first: float, last: float) -> float:
    """Seconds between frames: 1, or wider so that at most MAX_WINDOW_FRAMES cover the window."""
    span = last - first
    return 1.0 if span <= MAX_WINDOW_FRAMES - 1 else span / (MAX_WINDOW_FRAMES - 1)


def window_stills(ffmpeg: str, file: Path, first: float, last: float, folder: Path,
                  deadline: float) -> tuple[list[Keyframe], str]:
    """A frame every `window_step` seconds from `first` to `last` (inclusive), in one ffmpeg pass."""
    from PIL import Image

    step = window_step(first, last)
    count = int(round((last - first) / step)) + 1
    pattern = folder / "window-%03d.png"
    command = [ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-ss", f"{first:.3f}", "-i", str(file),
               "-t", f"{last - first + step / 2:.3f}", "-vf", f"fps=1/{step:.6f}:round=near,"
               f"scale='min({FRAME_WIDTH},iw)':-2", "-frames:v", str(count), str(pattern)]
    with contextlib.suppress(subprocess.TimeoutExpired):  # the frames written so far are used; the reply says so
        subprocess.run(command, capture_output=True, timeout=max(1.0, deadline - time.monotonic()))
    frames = []
    for number in range(count):
        path = folder / f"window-{number + 1:03d}.png"
        if not path.is_file():
            break
        with Image.open(path) as img:
            frames.append(Keyframe(round(first + number * step, 2), img.convert("RGB")))
    how = (f"{len(frames)} frames from {clock(first)} to {clock(last)}, one every "
           f"{'second' if step == 1.0 else f'{step:.1f} s (at most {MAX_WINDOW_FRAMES} frames)'}")
    if len(frames) < count:
        how += f"; {count - len(frames)} more could not be taken in time (TOOL_TIMEOUT) or lie past the end"
    return frames, how


def gif_frames(file: Path, first: float | None, last: float | None) -> tuple[list[Keyframe], float, str]:
    """The frames of an animated GIF with their display times, in the window if one is given, and the total length."""
    from PIL import Image, ImageChops, ImageSequence

    try:
        gif = Image.open(file)
    except (OSError, ValueError) as exc:
        raise ToolFailure(f"{file.name} cannot be read as a GIF ({exc}). Try analyze_image or read_file on it.",
                          "corrupt_file") from None
    frames: list[Keyframe] = []
    at_ms, shown = 0, 0  # whole milliseconds, as GIFs count them: no drift over hundreds of frames
    with gif:
        for number, frame in enumerate(ImageSequence.Iterator(gif), start=1):
            shown_ms = max(20, int(frame.info.get("duration") or 100))  # browsers show 0 ms as ~100 ms
            image = frame.convert("RGB")
            start, end = at_ms / 1000, (at_ms + shown_ms) / 1000
            at_ms += shown_ms
            if (first is not None and end <= first) or (last is not None and start > last):
                continue
            shown += 1
            if frames and ImageChops.difference(frames[-1].image, image).getbbox() is None:
                frames[-1].until = end
                continue
            frames.append(Keyframe(start, image, until=end, number=number))
    total, distinct = at_ms / 1000, len(frames)
    if distinct > MAX_GIF_FRAMES:
        keep = [round(k * (distinct - 1) / (MAX_GIF_FRAMES - 1)) for k in range(MAX_GIF_FRAMES)]
        frames = [frames[k] for k in keep]
    how = (f"an animated GIF of {total:.2f} s: {len(frames)} distinct frames shown, each with the times it is on "
           f"screen" + (f" (of {shown} in the window)" if first is not None or last is not None else "")
           + (f"; {distinct} distinct frames in all, so every {distinct / MAX_GIF_FRAMES:.1f}th is shown: pass "
              "start/end to see the others" if distinct > MAX_GIF_FRAMES else ""))
    return frames, total, how


def fine_clock(seconds: float) -> str:
    """0:01.50 — GIF frames are often shorter than a second."""
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}.{int(round((seconds - whole) * 100)) % 100:02d}"
