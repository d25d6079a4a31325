"""One YouTube download per video per run: the file stays in the run's workspace for every later call.

watch_video (several windows of one video, a second question) and transcribe_audio on the same URL
read the file the first call downloaded; only a call that finds no file downloads (yt-dlp, capped
at MAX_VIDEO_BYTES). Calls on one video wait for each other, so two parallel calls download once.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.core.workspace import Workspace
from tools.media.video.youtube import YouTubeInfo, fetch_info, js_runtimes

if TYPE_CHECKING:
    from tools.core.context import ToolContext

MAX_VIDEO_BYTES = 150 * 2**20
REUSED = "the video file was downloaded earlier in this run and is reused"


@dataclass
class RunVideos:
    """A run's YouTube downloads: what yt-dlp said per video id, and how many downloads were made."""

    infos: dict[str, YouTubeInfo] = field(default_factory=dict)
    downloads: int = 0
    """Files yt-dlp wrote in this run (a reused file is not counted again)."""
    locks: defaultdict[str, threading.Lock] = field(default_factory=lambda: defaultdict(threading.Lock))
    guard: threading.Lock = field(default_factory=threading.Lock)

    def lock(self, video_id: str) -> threading.Lock:
        """The lock of one video: calls on it take turns, calls on other videos do not wait."""
        with self.guard:
            return self.locks[video_id]


def run_videos(ctx: ToolContext) -> RunVideos:
    """The run's download record; a fresh one for a call outside a run (nothing is reused across such calls)."""
    return ctx.run_services.kept(RunVideos) if ctx.run_services is not None else RunVideos()


def youtube_video(work: Workspace, videos: RunVideos, video_id: str, deadline: float, want_file: bool,
                  reserve: Any = None, max_bytes: int = MAX_VIDEO_BYTES) -> YouTubeInfo:
    """What yt-dlp says about the video and, with `want_file`, its file: downloaded once per run, then reused.

    `deadline` (monotonic) bounds the download alone; the caller's ffmpeg work has its own.
    """
    with videos.lock(video_id):
        known = videos.infos.get(video_id)
        if known is not None and (not want_file or (known.file is not None and known.file.is_file())):
            notes = known.notes + ([REUSED] if known.file is not None and want_file else [])
            return dataclasses.replace(known, notes=notes, chapters=list(known.chapters))
        folder = work.subdir("video") if want_file else None
        info = fetch_info(video_id, folder, deadline, max_bytes, reserve, runtimes=js_runtimes())
        if info.file is not None:
            videos.downloads += 1
        videos.infos[video_id] = info
        return dataclasses.replace(info, notes=list(info.notes))
