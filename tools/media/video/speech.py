"""The speech of a video file as timed segments: its audio track through transcribe_audio's Whisper model."""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.core.errors import ToolFailure
from tools.media.audio import LazyWhisper, decode, speech_segments
from tools.media.segments import Segment

LONG_AUDIO_S = 900.0  # past this only the first part is decoded: Whisper could not hear more within the budget anyway


def transcribe_track(whisper: LazyWhisper, ffmpeg: str | None, file: Path, duration: float | None,
                     deadline: float) -> tuple[list[Segment], str]:
    """Timed speech of `file`'s audio track until `deadline`, and a label saying how it was made (or why not)."""
    label = "speech recognised from the audio track; machine-made, so names and numbers may be off"
    try:
        if ffmpeg is not None and duration and duration > LONG_AUDIO_S:
            samples = _first_part(ffmpeg, file, LONG_AUDIO_S, deadline)
            label += f"; only the first {int(LONG_AUDIO_S // 60)} minutes were decoded"
        else:
            samples = decode(file)
        if len(samples) < 800:  # under 0.05 s at 16 kHz: no audio to speak of
            return [], "no speech: the audio track is empty"
        segments, cut_at = speech_segments(whisper, samples, deadline)
    except ToolFailure as exc:
        return [], f"no transcript ({exc})"
    if cut_at is not None:
        label += f"; cut at {int(cut_at // 60)}:{int(cut_at % 60):02d} when TOOL_TIMEOUT was near"
    return segments, label


def _first_part(ffmpeg: str, file: Path, seconds: float, deadline: float) -> Any:  # a numpy array
    with tempfile.TemporaryDirectory(prefix="video-audio-") as tmp:
        wav = Path(tmp) / "audio.wav"
        try:
            proc = subprocess.run([ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-i", str(file), "-t",
                                   f"{seconds:g}", "-vn", "-ar", "16000", "-ac", "1", str(wav)], capture_output=True,
                                  timeout=max(2.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise ToolFailure(f"decoding the audio of {file.name} took too long", "timeout") from None
        if proc.returncode != 0 or not wav.is_file():
            raise ToolFailure(f"the audio track of {file.name} could not be decoded", "corrupt_file")
        return decode(wav)
