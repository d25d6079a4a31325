"""watch_video: a YouTube URL or a local video file as text — what it is, what is said, what is shown.

Parts run side by side within TOOL_TIMEOUT: the transcript (YouTube captions, else Whisper on the
audio track) in one thread, keyframes (ffmpeg stills, tesseract OCR, one vision request) in the
caller's. Each part has a share of the budget, and whatever did not fit is named in the reply. A
missing prerequisite removes only its part; the factory records which in the tool's metadata
(`limited`), and the registry lists it among the missing tools, so `python -m tools list` says why.
"""

from __future__ import annotations

import importlib.util
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext, ToolModel
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure
from tools.core.paths import resolve_media
from tools.media.audio import LazyWhisper, clock, resolve_model, shared_model
from tools.media.segments import Segment
from tools.media.video.downloads import run_videos, youtube_video
from tools.media.video.frames import Keyframe, describe, read_text, take_stills
from tools.media.video.media import Probe, probe
from tools.media.video.speech import transcribe_track
from tools.media.video.window import fine_clock, gif_frames, parse_time, window_bounds, window_stills
from tools.media.video.youtube import YouTubeInfo, blocked_advice, deno_path, fetch_captions, youtube_id
from tools.media.vision_model import run_model, standalone_client

VIDEO_EXTENSIONS = (".mp4", ".mov", ".webm", ".mkv", ".avi", ".m4v")
WATCHABLE = (*VIDEO_EXTENSIONS, ".gif")
DESCRIPTION_CHARS = 600


def _parts(settings: Settings) -> tuple[dict[str, Any], dict[str, str]]:
    """The prerequisites found (ffmpeg, ffprobe, whisper, ...) and, per missing part, why and the fix."""
    found: dict[str, Any] = {"ffmpeg": shutil.which("ffmpeg"), "ffprobe": shutil.which("ffprobe"),
                             "tesseract": shutil.which("tesseract"), "whisper": None,
                             "yt_dlp": importlib.util.find_spec("yt_dlp") is not None,
                             "captions": importlib.util.find_spec("youtube_transcript_api") is not None,
                             "vision": settings.vision_model is not None and settings.llm_configured}
    speech = ""
    try:
        import faster_whisper  # noqa: F401

        found["whisper"] = shared_model(resolve_model(settings.WHISPER_MODEL))
    except (ImportError, MissingDependency) as exc:
        speech = f"no speech-to-text ({getattr(exc, 'reason', exc)}): only YouTube captions give a transcript"
    # (present, part, why it is missing), in the order the reply names them
    checks = (
        (found["ffmpeg"] and found["ffprobe"], "keyframes",
         "ffmpeg/ffprobe are not installed (apt-get install ffmpeg): no keyframes"),
        (not speech, "speech", speech),
        (found["tesseract"], "frame text",
         "tesseract is not installed (apt-get install tesseract-ocr): keyframes have no OCR text"),
        (found["yt_dlp"], "YouTube download",
         "yt-dlp is not installed (pip install yt-dlp): YouTube videos have no title, duration or keyframes"),
        (not found["yt_dlp"] or deno_path() is not None, "YouTube JS runtime",
         "no JavaScript runtime for yt-dlp (pip install deno yt-dlp-ejs): YouTube may offer no downloadable format, "
         "so no keyframes or speech"),
        (found["captions"], "YouTube captions",
         "youtube-transcript-api is not installed (pip install youtube-transcript-api)"),
        (found["vision"], "frame descriptions",
         "vision is off (VISION_MODEL_NAME=none or no model endpoint): keyframes are described by their OCR text only"),
    )
    return found, {part: why for present, part, why in checks if not present}


def make_video_tools(settings: Settings) -> list[BaseTool]:
    """Build `watch_video`; every part (ffmpeg, Whisper, tesseract, yt-dlp, captions, vision) is optional."""
    found, limited = _parts(settings)
    if not (found["ffmpeg"] and found["ffprobe"]) and found["whisper"] is None and not found["captions"]:
        raise MissingDependency(["watch_video"], "watch_video needs ffmpeg (apt-get install ffmpeg), faster-whisper "
                                                 "or youtube-transcript-api; none is installed")
    budget = max(4.0, settings.TOOL_TIMEOUT - 3.0)  # leave time to assemble and return the reply
    fallback = standalone_client(settings)

    @context_tool
    def watch_video(_ctx: ToolContext, source: str, question: str = "", start: str = "", end: str = "") -> str:
        """Watch a video (a YouTube URL, a video file or an animated GIF): title, duration, timed transcript, frames.

        The transcript has [m:ss] timestamps (YouTube captions when the video has them, else speech
        recognition). Keyframes are stills at regular intervals and at scene changes, each with its
        timestamp, the text on screen (OCR) and a short description. To see what is on screen at a
        given moment, pass `start` and `end`: you get a frame every second of that window (at most 30).
        An animated GIF is read frame by frame, each frame with the times it is shown. Pass `question`
        to have the descriptions focus on what you need to know (e.g. "How many birds are on screen?").

        Args:
            source: a YouTube video URL (https://www.youtube.com/watch?v=..., youtu.be/...) or the absolute path of a
                video file (.mp4 .mov .webm .mkv .avi .m4v) or animated .gif (an attachment path from the task).
            question: what you want to learn from the pictures; leave empty for plain descriptions.
            start: where the window to look at begins, as m:ss (1:05) or seconds (65); empty = the start.
            end: where the window ends (inclusive), as m:ss or seconds; empty = 30 s after start or the end.
        """
        watcher = Watcher(settings, found, limited, budget, fallback)
        window = (parse_time(start, "start"), parse_time(end, "end"))
        return watcher.watch(source, question, _ctx, window)

    watch_video.metadata = {"limited": limited}
    return [watch_video]


class Watcher:
    """One watch_video call: the source, then transcript and keyframes side by side, each in its share of time."""

    def __init__(self, settings: Settings, found: dict[str, Any], limited: dict[str, str], budget: float,
                 fallback: ToolModel) -> None:
        self.settings, self.found, self.limited, self.fallback = settings, found, limited, fallback
        self.start = time.monotonic()
        self.budget = budget
        self.deadline = self.start + budget
        self.notes: list[str] = []
        self.media_start = self.start
        """When the download ended (or was not needed): the media steps' deadlines count from here."""
        self.window: tuple[float, float] | None = None
        """The inclusive [start, end] asked for (seconds), once known against the duration."""

    def at(self, share: float) -> float:
        """The monotonic time when `share` of the budget is spent."""
        return self.start + self.budget * share

    def media_at(self, share: float) -> float:
        """The monotonic time when `share` of the media work's own time is spent.

        The download has its deadline (half the budget); the ffmpeg, OCR and vision steps get every second
        left after it, so a slow download no longer leaves them a second, and a reused file leaves them all.
        """
        return self.media_start + (self.deadline - self.media_start) * share

    def watch(self, source: str, question: str, ctx: ToolContext,
              window: tuple[float | None, float | None] = (None, None)) -> str:
        """The reply for `source` (see watch_video) in `ctx`'s run; `window` is the (start, end) asked, in seconds."""
        video_id = youtube_id(source)
        captions: dict[str, Any] = {}
        captioner = None
        if video_id is not None:
            if self.found["captions"]:
                captioner = _start(lambda: captions.update(
                    result=fetch_captions(video_id, max(2.0, self.budget / 3), self.settings.FETCH_USER_AGENT)))
            info = self.youtube(video_id, ctx)
            self.media_start = time.monotonic()
        else:
            if source.strip().lower().startswith(("http://", "https://")):
                raise ToolFailure(f"{source} is not a YouTube video. watch_video plays YouTube URLs and video files; "
                                  "for another site, save the video with fetch_webpage and pass the saved path.",
                                  "unsupported_type")
            info = YouTubeInfo("", file=resolve_media(source, ctx, WATCHABLE, "a video file or GIF",
                                                      "there is nothing to watch."))
            if info.file is not None and info.file.suffix.lower() == ".gif":
                return self.gif(info.file, window, question, ctx)
        file = info.file
        media = probe(self.found["ffprobe"], file, timeout=10.0) if file is not None and self.found["ffprobe"] else None
        duration = info.duration or (media.duration if media else None)
        if window != (None, None):
            self.window = window_bounds(window[0], window[1], duration)
        if captioner is not None:
            captioner.join(max(0.0, self.deadline - time.monotonic()))
        segments, label = captions.get("result") or ([], "")
        speech: dict[str, Any] = {}
        listener = None
        if (not segments and file is not None and self.found["whisper"] is not None
                and (media is None or media.has_audio)):
            whisper: LazyWhisper = self.found["whisper"]
            listener = _start(lambda: speech.update(
                result=transcribe_track(whisper, self.found["ffmpeg"], file, duration, self.deadline)))
        elif not segments and self.found["whisper"] is None and not label:
            label = "speech-to-text is not available here"
        frames, how = self.keyframes(file, media, duration, info.title or (media.title if media else None),
                                     question, ctx)
        if listener is not None:
            listener.join(max(0.0, self.deadline - time.monotonic()))
            segments, label = speech.get("result") or ([], label + "; speech recognition did not finish within "
                                                           "TOOL_TIMEOUT")
        if video_id and not segments and file is None and info.title is None:
            why = info.notes + [label]
            advice = blocked_advice(why) or "Check the URL, or search for a transcript or description of the video"
            raise ToolFailure(f"nothing could be read from the YouTube video {video_id}: {'; '.join(why)}. {advice}.",
                              "not_found")
        name = f"YouTube video {video_id}" if video_id else Path(str(file)).name
        limits = [why for part, why in self.limited.items() if video_id or not part.startswith("YouTube")]
        if self.window is not None:
            first, last = self.window
            segments = [seg for seg in segments if seg.end >= first and seg.start <= last]
            label = f"{label}; only what is said between {clock(first)} and {clock(last)}".lstrip("; ")
        return report(name, info, media, duration, segments, label, frames, how, info.notes + self.notes, limits)

    def gif(self, file: Path, window: tuple[float | None, float | None], question: str,
            ctx: ToolContext) -> str:
        """The reply for an animated GIF: every distinct frame with its display times, OCR and description."""
        frames, total, how = gif_frames(file, *window)
        if not frames:
            raise ToolFailure(f"{file.name} shows nothing between the times asked (it lasts {total:.2f} s). Widen "
                              "or drop start/end.", "bad_arguments")
        self.look(frames, question, None, ctx)
        limits = [why for part, why in self.limited.items() if part in ("frame text", "frame descriptions")]
        return report(file.name, YouTubeInfo(""), None, total, [], "a GIF has no sound", frames, how, self.notes,
                      limits)

    def look(self, frames: list[Keyframe], question: str, title: str | None, ctx: ToolContext) -> None:
        """OCR of the frames by 75% of the budget, then one vision request for their descriptions."""
        if self.found["tesseract"] and not read_text(frames, self.media_at(0.65)):
            self.notes.append("OCR stopped early (TOOL_TIMEOUT): later frames have no text")
        if frames and self.found["vision"]:
            note = describe(frames, run_model(ctx, self.fallback), self.settings, question, title, self.deadline)
            if note:
                self.notes.append(note)

    def youtube(self, video_id: str, ctx: ToolContext) -> YouTubeInfo:
        """Metadata and, when keyframes can be taken, the (capped) file: by half of the budget, once per run."""
        if not self.found["yt_dlp"]:
            return YouTubeInfo(video_id, notes=[self.limited["YouTube download"]])
        return youtube_video(ctx.work, run_videos(ctx), video_id, self.at(0.5), bool(self.found["ffmpeg"]),
                             ctx.work.reserve)

    def keyframes(self, file: Path | None, media: Probe | None, duration: float | None, title: str | None,
                  question: str, ctx: ToolContext) -> tuple[list[Keyframe], str]:
        """Stills by 40% of the media time (a window's by 35%), OCR by 65%, descriptions by the deadline."""
        if file is None or not self.found["ffmpeg"] or (media is not None and not media.has_video):
            return [], ""
        if self.window is not None:
            frames, how = window_stills(self.found["ffmpeg"], file, *self.window, ctx.work.subdir("frames"),
                                        self.media_at(0.35))
        else:
            frames, how = take_stills(self.found["ffmpeg"], file, duration, ctx.work.subdir("frames"),
                                      self.media_at(0.4))
        self.look(frames, question, title, ctx)
        return frames, how


def _start(work: Any) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True, name="watch-video")
    thread.start()
    return thread


def report(name: str, info: YouTubeInfo, media: Probe | None, duration: float | None, segments: list[Segment],
           transcript_label: str, frames: list[Keyframe], frames_how: str, notes: list[str],
           limits: list[str]) -> str:
    """The reply: header, keyframes (compact, so a long transcript is what the output cap cuts), transcript."""
    title = info.title or (media.title if media else None)
    lines = [f"Video: {name}" + (f" — {title!r}" if title else "")]
    if info.channel:
        lines.append(f"Channel: {info.channel}")
    if info.upload_date:
        lines.append(f"Uploaded: {_date(info.upload_date)}")
    lines.append(f"Duration: {clock(duration)}" if duration else "Duration: unknown")
    if info.description:
        text = " ".join(info.description.split())
        lines.append("Description: " + (text[:DESCRIPTION_CHARS] + "…" if len(text) > DESCRIPTION_CHARS else text))
    if info.chapters:
        lines.append("Chapters: " + "; ".join(f"[{clock(at)}] {title}" for at, title in info.chapters))
    if frames:
        lines.append(f"\n{'Frames' if frames[0].number is not None else 'Keyframes'} ({frames_how}):")
        for frame in frames:
            when = clock(frame.at) + (f"–{clock(frame.until)}" if frame.until else "")
            if frame.number is not None:
                when = f"Frame {frame.number} [{fine_clock(frame.at)}–{fine_clock(frame.until or frame.at)}]"
            parts = [f"[{when}]" if frame.number is None else when]
            if frame.seen:
                parts.append(frame.seen)
            if frame.ocr:
                parts.append(f'On-screen text: "{frame.ocr}"')
            lines.append(" ".join(parts) if len(parts) > 1 else f"{parts[0]} (no text on screen)")
    elif media is not None and not media.has_video:
        lines.append("\nKeyframes: none (the file has no video stream).")
    if segments:
        lines.append(f"\nTranscript ({transcript_label}):")
        lines.extend(f"[{clock(seg.start)}] {seg.text}" for seg in segments)
    else:
        why = transcript_label or ("the file has no audio track" if media is not None and not media.has_audio
                                   else "no speech was found")
        lines.append(f"\nTranscript: none ({why}).")
    remarks = notes + limits
    if remarks:
        lines.append("\nNotes: " + "; ".join(dict.fromkeys(remarks)) + ".")
    return "\n".join(lines)


def _date(value: str | None) -> str | None:
    return f"{value[:4]}-{value[4:6]}-{value[6:]}" if value and len(value) == 8 and value.isdigit() else value
