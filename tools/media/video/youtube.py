"""YouTube: the video id in a URL, metadata and a small download (yt-dlp), captions (youtube-transcript-api).

The model's URL is untrusted, so it is only mined for its 11-character video id; every request then
goes to the canonical https://www.youtube.com/watch?v=ID (and the CDN the extractor is handed), never
to a host the model chose. Captions come first because they are cheap and exact; the download (a
low-resolution progressive format, size-capped) feeds keyframes and, without captions, speech
recognition. Both libraries are optional: whichever is missing, the other still works.
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tools.core.errors import ToolFailure
from tools.media.segments import Segment
from tools.search.base import USER_AGENT

YOUTUBE_HOSTS = ("youtube.com", "youtu.be", "youtube-nocookie.com")
_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")
_PATH_ID = re.compile(r"^/(?:shorts|embed|live|v|e)/([A-Za-z0-9_-]{11})")
# A progressive (audio+video) low-resolution file: quick to fetch, enough for keyframes and speech.
DOWNLOAD_FORMAT = "18/best[height<=480][vcodec!=none][acodec!=none]/best[height<=480]/worst"
CAPTION_LANGUAGES = ("en", "en-US", "en-GB", "en-CA", "en-AU")


@dataclass
class YouTubeInfo:
    """What yt-dlp said about a video; `notes` collects what could not be had and why."""

    video_id: str
    title: str | None = None
    duration: float | None = None
    channel: str | None = None
    upload_date: str | None = None
    description: str | None = None
    chapters: list[tuple[float, str]] = field(default_factory=list)
    file: Path | None = None
    notes: list[str] = field(default_factory=list)


def youtube_id(source: str) -> str | None:
    """The video id of a YouTube URL (watch, youtu.be, shorts, embed, live), else None."""
    text = (source or "").strip()
    if not text.lower().startswith(("http://", "https://")):
        text = "https://" + text if text.lower().startswith(("youtube.com", "www.youtube.com", "m.youtube.com",
                                                             "youtu.be")) else text
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    if not any(host == h or host.endswith("." + h) for h in YOUTUBE_HOSTS):
        return None
    if host.endswith("youtu.be"):
        candidate = parts.path.strip("/").split("/")[0]
    else:
        match = _PATH_ID.match(parts.path)
        candidate = match.group(1) if match else (parse_qs(parts.query).get("v") or [""])[0]
    if not _ID.match(candidate):
        raise ToolFailure(f"{source} is a YouTube address without a video id (expected watch?v=<11 characters>). "
                          "Pass the URL of one video.", "bad_arguments")
    return candidate


def watch_url(video_id: str) -> str:
    """The canonical page of a video."""
    return f"https://www.youtube.com/watch?v={video_id}"


class _Quiet:
    """A yt-dlp logger that keeps the last error for the reply instead of printing."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def debug(self, msg: str) -> None:
        pass

    def info(self, msg: str) -> None:
        pass

    def warning(self, msg: str) -> None:
        self.warnings.append(re.sub(r"^(WARNING:\s*)?(\[youtube\]\s*)?", "", msg).strip())

    def refusal(self) -> str:
        """Why YouTube gave no details ('Video unavailable', 'Private video', 'Sign in to confirm your age')."""
        words = ("unavailable", "private", "sign in", "removed", "terminated", "not available", "blocked")
        return next((w for w in self.warnings + self.errors if any(x in w.lower() for x in words)),
                    "YouTube gave no details for it")

    def error(self, msg: str) -> None:
        self.errors.append(re.sub(r"^ERROR:\s*", "", msg).strip())


def deno_path() -> str | None:
    """The Deno binary yt-dlp solves YouTube's JavaScript challenges with: the `deno` package's, else PATH's."""
    try:
        import deno

        found = str(deno.find_deno_bin())
    except Exception:  # noqa: BLE001 - the package missing or shipping no binary for this platform
        found = shutil.which("deno") or ""
    return found if found and Path(found).is_file() else None


def js_runtimes() -> dict[str, dict[str, str]]:
    """yt-dlp's `js_runtimes` option naming Deno's path explicitly; {} when there is no Deno."""
    path = deno_path()
    return {"deno": {"path": path}} if path else {}


def ydl_options(folder: Path | None, deadline: float, max_bytes: int, logger: Any, hooks: list[Any],
                runtimes: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The YoutubeDL options of one call: quiet, capped, bounded by `deadline`, with the JS runtime named.

    No User-Agent is set: yt-dlp sends the browser's each YouTube client expects, and the owner's
    contact (HTTP_USER_AGENT) is not YouTube's business.
    """
    options: dict[str, Any] = {
        "quiet": True, "no_warnings": True, "noprogress": True, "logger": logger, "noplaylist": True,
        "ignore_no_formats_error": True, "socket_timeout": max(2.0, deadline - time.monotonic()),
        "format": DOWNLOAD_FORMAT, "max_filesize": max_bytes, "progress_hooks": hooks,
        "outtmpl": str((folder or Path(".")) / "%(id)s.%(ext)s"), "retries": 1, "fragment_retries": 1}
    if runtimes:
        options["js_runtimes"] = runtimes
    return options


def fetch_info(video_id: str, folder: Path | None, deadline: float, max_bytes: int,
               reserve: Any = None, runtimes: dict[str, dict[str, str]] | None = None) -> YouTubeInfo:
    """Metadata, and with `folder` the video file too, both via yt-dlp; failures become notes.

    `reserve(nbytes, what)` claims disk before the download (the run's workspace budget); `deadline`
    (monotonic) bounds this download alone. `runtimes`: yt-dlp's `js_runtimes` (default: Deno's path).
    """
    info = YouTubeInfo(video_id)
    try:
        import yt_dlp
    except ImportError:
        info.notes.append("title and duration unknown: yt-dlp is not installed (pip install yt-dlp)")
        return info
    logger = _Quiet()

    def stop_at_deadline(progress: dict[str, Any]) -> None:
        if progress.get("status") == "downloading" and time.monotonic() > deadline:
            raise yt_dlp.utils.DownloadCancelled("TOOL_TIMEOUT reached during the download")

    options = ydl_options(folder, deadline, max_bytes, logger, [stop_at_deadline],
                          js_runtimes() if runtimes is None else runtimes)
    with yt_dlp.YoutubeDL(options) as ydl:
        try:
            meta = ydl.extract_info(watch_url(video_id), download=False) or {}
        except (yt_dlp.utils.DownloadError, yt_dlp.utils.ExtractorError) as exc:
            reason = logger.errors[-1] if logger.errors else str(exc)
            info.notes.append(f"YouTube metadata unavailable: {reason[:300]}")
            return info
        _fill(info, meta)
        if not meta.get("duration") and str(meta.get("title", "")).startswith("youtube video #"):
            info.title = None  # yt-dlp's stand-in title: the extractor got nothing
            info.notes.append(f"YouTube metadata unavailable: {logger.refusal()[:300]}")
            return info
        if folder is not None:
            info.file = _download(ydl, meta, info, max_bytes, reserve, logger)
    return info


def _fill(info: YouTubeInfo, meta: dict[str, Any]) -> None:
    info.title = meta.get("title")
    info.duration = float(meta["duration"]) if meta.get("duration") else None
    info.channel = meta.get("channel") or meta.get("uploader")
    info.upload_date = meta.get("upload_date")
    info.description = (meta.get("description") or "").strip() or None
    info.chapters = [(float(c.get("start_time") or 0), str(c.get("title") or "")) for c in meta.get("chapters") or []]


def _download(ydl: Any, meta: dict[str, Any], info: YouTubeInfo, max_bytes: int, reserve: Any,
              logger: _Quiet) -> Path | None:
    import yt_dlp

    if not meta.get("url") and not meta.get("requested_formats"):
        info.notes.append("no downloadable format was offered, so there are no keyframes")
        return None
    size = int(meta.get("filesize") or meta.get("filesize_approx") or 0)
    if size > max_bytes:
        info.notes.append(f"the video file ({size // 2**20} MB) is over the {max_bytes // 2**20} MB download cap, so "
                          "there are no keyframes")
        return None
    if reserve is not None:
        reserve(size or max_bytes, "the YouTube video download")
    try:
        ydl.process_info(meta)
    except (yt_dlp.utils.DownloadError, yt_dlp.utils.DownloadCancelled) as exc:
        reason = logger.errors[-1] if logger.errors else str(exc)
        info.notes.append(f"the video could not be downloaded ({reason[:200]}), so there are no keyframes")
        return None
    path = Path(meta.get("filepath") or meta.get("_filename") or "")
    return path if path.is_file() and path.stat().st_size else None


def new_session(timeout: float, user_agent: str = USER_AGENT) -> Any:
    """The HTTP session youtube-transcript-api uses: every request bounded by `timeout` seconds, our User-Agent."""
    import requests

    class BoundedSession(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout)
            return super().request(*args, **kwargs)

    session = BoundedSession()
    session.headers["User-Agent"] = user_agent
    return session


BLOCKING = ("RequestBlocked", "IpBlocked", "not a bot", "HTTP Error 429", "Too Many Requests")
"""Marks of YouTube refusing this host (not the video): in youtube-transcript-api's and yt-dlp's reasons."""


def caption_failure(exc: Exception) -> str:
    """'no captions (TranscriptsDisabled: Subtitles are disabled for this video)': the library's own cause.

    youtube-transcript-api puts the cause after a heading ("This is most likely caused by:"); its
    `cause` property holds it alone, and its first line is the reason.
    """
    lines = [line.strip() for line in str(getattr(exc, "cause", "") or "").splitlines() if line.strip()]
    reason = " ".join(lines[:2]) if lines and lines[0].endswith(":") else (lines[0] if lines else "no reason given")
    return f"no captions ({type(exc).__name__}: {reason[:240]})"


def blocked_advice(notes: list[str]) -> str | None:
    """What to do when the notes show YouTube refusing this host (then the URL is not the problem)."""
    if any(mark.lower() in note.lower() for note in notes for mark in BLOCKING):
        return ("YouTube is refusing requests from this host (rate limiting or bot detection), so the URL is "
                "probably fine: search the web for a transcript, the description or a summary of the video")
    return None


def fetch_captions(video_id: str, timeout: float, user_agent: str = USER_AGENT) -> tuple[list[Segment], str]:
    """The video's captions as timed segments, English preferred, and a label; ([], why) when there are none."""
    try:
        from youtube_transcript_api import YouTubeTranscriptApi
        from youtube_transcript_api._errors import CouldNotRetrieveTranscript
    except ImportError:
        return [], "no captions: youtube-transcript-api is not installed (pip install youtube-transcript-api)"
    import requests

    api = YouTubeTranscriptApi(http_client=new_session(timeout, user_agent))
    try:
        listing = api.list(video_id)
        tracks = list(listing)
        if not tracks:
            return [], "the video has no captions"
        try:
            track = listing.find_transcript(CAPTION_LANGUAGES)
        except CouldNotRetrieveTranscript:
            track = next((t for t in tracks if not t.is_generated), tracks[0])
        fetched = track.fetch()
    except CouldNotRetrieveTranscript as exc:
        return [], caption_failure(exc)
    except requests.RequestException as exc:
        return [], f"no captions (YouTube did not answer: {type(exc).__name__})"
    kind = "auto-generated" if track.is_generated else "uploaded"
    segments = [Segment(float(s.start), float(s.start + s.duration), s.text.replace("\n", " ").strip())
                for s in fetched if s.text.strip()]
    return segments, f"YouTube captions ({kind}, {track.language})"
