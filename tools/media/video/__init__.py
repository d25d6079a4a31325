"""watch_video: YouTube URLs and video files read as a timed transcript and described keyframes."""

from tools.media.video.watch import VIDEO_EXTENSIONS, make_video_tools

__all__ = ["VIDEO_EXTENSIONS", "make_video_tools"]
