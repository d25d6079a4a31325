"""A video file through ffprobe and ffmpeg: what it holds, when its scenes change, a still at a time.

Every call is a subprocess with a timeout, so a damaged or enormous file costs seconds, not the run.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.core.errors import ToolFailure

FRAME_WIDTH = 1280  # stills are scaled down to this width: enough for OCR of captions and slides
SCENE_THRESHOLD = 0.3  # ffmpeg's scene score (0..1) above which a frame starts a new shot


@dataclass(frozen=True)
class Probe:
    """What ffprobe says about a file."""

    duration: float | None
    title: str | None
    has_video: bool
    has_audio: bool
    width: int | None = None
    height: int | None = None


def probe(ffprobe: str, file: Path, timeout: float) -> Probe:
    """Duration, title tag and stream kinds of `file`; ToolFailure when it is not a readable media file."""
    try:
        proc = subprocess.run([ffprobe, "-v", "error", "-show_entries",
                               "format=duration:format_tags=title:stream=codec_type,width,height",
                               "-of", "json", str(file)], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolFailure(f"ffprobe could not read {file.name} within {timeout:g}s.", "timeout") from None
    data: dict[str, Any] = {}
    if proc.returncode == 0:
        try:
            data = json.loads(proc.stdout or b"{}")
        except json.JSONDecodeError:
            data = {}
    streams = data.get("streams") or []
    if proc.returncode != 0 or not streams:
        reason = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no audio or video streams"]
        raise ToolFailure(f"cannot read {file.name} as a video ({reason[0][:200]}). The file may be corrupt or not a "
                          "video; try read_file to see what it is.", "corrupt_file")
    video = next((s for s in streams if s.get("codec_type") == "video"), None)
    fmt = data.get("format") or {}
    try:
        duration = float(fmt["duration"]) if fmt.get("duration") not in (None, "N/A") else None
    except (TypeError, ValueError):
        duration = None
    return Probe(duration=duration, title=((fmt.get("tags") or {}).get("title") or None),
                 has_video=video is not None, has_audio=any(s.get("codec_type") == "audio" for s in streams),
                 width=(video or {}).get("width"), height=(video or {}).get("height"))


def scene_changes(ffmpeg: str, file: Path, timeout: float, threshold: float = SCENE_THRESHOLD) -> list[float]:
    """Times (s) where a new shot starts, from one decoding pass at low resolution; [] if it takes too long."""
    try:
        proc = subprocess.run([ffmpeg, "-nostdin", "-hide_banner", "-i", str(file), "-an", "-sn", "-vf",
                               f"scale=160:-2,select='gt(scene,{threshold})',showinfo", "-f", "null", "-"],
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return []
    text = proc.stderr.decode("utf-8", "replace")
    return [float(t) for t in re.findall(r"pts_time:\s*([0-9.]+)", text)]


def still(ffmpeg: str, file: Path, at: float, target: Path, timeout: float) -> Path | None:
    """The frame shown at `at` seconds as a PNG at `target` (scaled to FRAME_WIDTH at most); None if there is none."""
    try:
        proc = subprocess.run([ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-ss", f"{at:.3f}", "-i", str(file),
                               "-frames:v", "1", "-vf", f"scale='min({FRAME_WIDTH},iw)':-2", str(target)],
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return target if proc.returncode == 0 and target.is_file() and target.stat().st_size else None
