"""watch_video's window (a frame every second between start and end) and animated GIFs read frame by frame."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from config import load_settings
from tests.support.moving_pictures import answer_gif, counter_video
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.core.routes import route_for
from tools.media.video import make_video_tools
from tools.media.video.window import MAX_WINDOW_FRAMES, parse_time, window_bounds, window_step

needs_media = pytest.mark.skipif(not (shutil.which("ffmpeg") and shutil.which("tesseract")),
                                 reason="ffmpeg and tesseract are required")


def _watch(source: Path, **args: str):
    settings = load_settings(VISION_MODEL_NAME="none", TOOL_TIMEOUT=60)
    tool = make_video_tools(settings)[0]
    return run_tool(tool, {"source": str(source), **args}, settings,
                    config={"configurable": {"attachments": [str(source)]}})


def test_times_are_read_as_m_ss_or_seconds():
    assert parse_time("1:05", "start") == 65 and parse_time("65", "start") == 65
    assert parse_time("0:01:05.5", "end") == 65.5 and parse_time("", "end") is None
    with pytest.raises(ToolFailure, match="1:05"):
        parse_time("a minute in", "start")
    with pytest.raises(ToolFailure, match="59"):
        parse_time("1:75", "start")


def test_a_window_gets_a_frame_a_second_up_to_thirty():
    assert window_step(5, 8) == 1.0 and window_step(0, MAX_WINDOW_FRAMES - 1) == 1.0
    step = window_step(0, 59)
    assert round(59 / step) + 1 == MAX_WINDOW_FRAMES  # evenly spread past thirty
    assert window_bounds(5, 100, 12.0) == (5, 11.95) and window_bounds(2, None, 100.0) == (2, 31)
    with pytest.raises(ToolFailure, match="past the end"):
        window_bounds(20, None, 12.0)
    with pytest.raises(ToolFailure, match="before start"):
        window_bounds(8, 5, 12.0)


@pytest.fixture(scope="module")
def counter(tmp_path_factory):
    return counter_video(tmp_path_factory.mktemp("window") / "counter.mp4")


@needs_media
@pytest.mark.integration
def test_each_second_of_the_window_shows_its_own_number(counter):
    out = _watch(counter, start="0:05", end="8")
    assert out.ok, out.output
    assert "4 frames from 0:05 to 0:08, one every second" in out.output
    for second in range(5, 9):
        line = next(line for line in out.output.splitlines() if line.startswith(f"[0:0{second}]"))
        assert str(40 + second) in re.sub(r"\D+", " ", line.split("]", 1)[1]).split(), line
    assert "[0:04]" not in out.output and "[0:09]" not in out.output  # the window is inclusive, and only it


@needs_media
@pytest.mark.integration
def test_a_gif_is_read_frame_by_frame_with_display_times(tmp_path):
    gif = answer_gif(tmp_path / "signal.gif")
    out = _watch(gif)
    assert out.ok, out.output
    assert "an animated GIF of 2.10 s: 5 distinct frames" in out.output
    fourth = next(line for line in out.output.splitlines() if line.startswith("Frame 4 [0:01.00–0:01.70]"))
    assert "73" in fourth and "Frame 1 [0:00.00–0:00.20]" in out.output
    later = _watch(gif, start="1.2", end="1.5")
    assert later.ok and "Frame 4 [" in later.output and "Frame 5" not in later.output


def test_gif_attachments_route_to_watch_video(tmp_path):
    gif = tmp_path / "anim.gif"
    gif.write_bytes(b"GIF89a")
    assert route_for(gif, ["watch_video", "analyze_image"]).tool == "watch_video"
    assert "frame by frame" in route_for(gif, ["watch_video"]).instruction
    assert route_for(gif, ["analyze_image", "image_ocr"]).tool == "analyze_image"  # no video tool: a still look


def test_a_long_gif_shows_thirty_frames_evenly_and_says_so(tmp_path):
    from PIL import Image

    from tools.media.video.window import MAX_GIF_FRAMES, gif_frames

    frames = [Image.new("RGB", (40, 40), (6 * k, 255 - 6 * k, 100)) for k in range(40)]
    frames[0].save(tmp_path / "long.gif", save_all=True, append_images=frames[1:], duration=50, loop=0)
    shown, total, how = gif_frames(tmp_path / "long.gif", None, None)
    assert len(shown) == MAX_GIF_FRAMES and round(total, 2) == 2.0
    assert shown[0].number == 1 and shown[-1].number == 40 and "40 distinct frames in all" in how
    window, _, _ = gif_frames(tmp_path / "long.gif", 1.0, 1.2)
    assert [f.number for f in window] == [21, 22, 23, 24, 25]  # frames shown 1.00–1.25 s
