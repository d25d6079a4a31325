"""watch_video on generated videos (espeak-ng speech, text slides) and on recorded YouTube responses."""

from __future__ import annotations

import re

import pytest

from config import load_settings
from tests.support.heard import assert_heard
from tests.support.media import SLIDE_TEXTS, SPEECH_WORDS, make_corrupt, make_video, media_tools_available
from tests.support.openai_server import ScriptedOpenAI, say
from tests.support.youtube import CDN, VIDEO_ID, RecordedYouTube
from tools.core.errors import MissingDependency
from tools.core.executor import run_tool
from tools.core.registry import build_registry
from tools.core.routes import route_for
from tools.media.video import make_video_tools
from tools.media.video.frames import MAX_FRAMES, plan

pytestmark = pytest.mark.skipif(not media_tools_available(), reason="espeak-ng and ffmpeg are required")

# Whisper tiny.en hears espeak differently on different CPUs ("the lazy nog"): most words, not all, come back.
HEARD_AT_LEAST = 5


@pytest.fixture(scope="module")
def talk(tmp_path_factory):
    """Two text slides, 2.5 s each, with speech over them."""
    return make_video(tmp_path_factory.mktemp("video") / "talk.mp4")


def _watch(source, question="", attachments=(), **kw):
    settings = load_settings(**{"VISION_MODEL_NAME": "none", "TOOL_TIMEOUT": 60, **kw})
    tool = make_video_tools(settings)[0]
    args = {"source": str(source), **({"question": question} if question else {})}
    return run_tool(tool, args, settings, config={"configurable": {"attachments": [str(a) for a in attachments]}})


def _stills(keyframes: str, seconds: str) -> str:
    """The keyframe lines stamped [0:0N] with N in the range `seconds` ("0-2")."""
    return "\n".join(re.findall(rf"^.*\[0:0[{seconds}]\].*$", keyframes, re.MULTILINE))


@pytest.mark.integration
def test_a_video_file_gives_duration_keyframes_with_their_text_and_a_timed_transcript(talk):
    out = _watch(talk, attachments=[talk])
    assert out.ok, out.output
    assert "Video: talk.mp4" in out.output and "Duration: 0:05" in out.output
    keyframes = out.output.split("Keyframes", 1)[1].split("Transcript", 1)[0]
    first, second = _stills(keyframes, "0-2"), _stills(keyframes, "3-4")  # each slide, at its timestamp
    assert_heard(first, SLIDE_TEXTS[0].split(), at_least=2)
    assert_heard(second, SLIDE_TEXTS[1].split(), at_least=2)
    transcript = out.output.split("Transcript", 1)[1]
    assert "[0:00]" in transcript
    assert_heard(transcript, SPEECH_WORDS, at_least=HEARD_AT_LEAST)
    assert "vision is off" in out.output  # the reply says what it could not do


@pytest.fixture(scope="module")
def slides(tmp_path_factory):
    """The same two slides without sound (no speech to recognise: a quicker test)."""
    return make_video(tmp_path_factory.mktemp("video") / "slides.mp4", speech=None)


@pytest.mark.integration
def test_keyframes_are_described_by_one_vision_request_that_carries_the_question(slides):
    talk = slides
    reply = "Frame 1: a white slide reading GALILEO 1610\nFrame 2: a white slide reading FOUR MOONS, 4 moons"
    with ScriptedOpenAI([say(reply)]) as server:
        out = _watch(talk, "How many moons are named?", attachments=[talk], VISION_MODEL_NAME="vision-x",
                     OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", LLM_TIMEOUT=10)
    assert out.ok, out.output
    assert re.search(r"\[0:0[0-2]\] a white slide reading GALILEO 1610", out.output)
    assert "FOUR MOONS, 4 moons" in out.output
    [request] = server.requests
    assert request.body["model"] == "vision-x"
    parts = request.body["messages"][0]["content"]
    assert sum(p["type"] == "image_url" for p in parts) == 2
    assert "How many moons are named?" in parts[0]["text"]


@pytest.mark.integration
def test_a_mov_without_sound_says_there_is_no_audio(tmp_path):
    clip = make_video(tmp_path / "IMG_0001.MOV", slides=("EXIT 12",), speech=None)
    out = _watch(clip, attachments=[clip])
    assert out.ok, out.output
    assert_heard(out.output.split("Keyframes", 1)[1], ("EXIT", "12"), at_least=2)
    assert "Transcript: none (the file has no audio track)" in out.output


def test_bad_sources_are_clear(tmp_path):
    broken = _watch(make_corrupt(tmp_path / "broken.mp4"))
    assert not broken.ok and broken.error_kind == "corrupt_file" and "broken.mp4" in broken.output
    other = _watch("https://vimeo.com/12345")
    assert not other.ok and other.error_kind == "unsupported_type" and "fetch_webpage" in other.output
    no_id = _watch("https://www.youtube.com/results?search_query=moons")
    assert not no_id.ok and no_id.error_kind == "bad_arguments"
    (tmp_path / "notes.txt").write_text("hi")
    wrong = _watch(tmp_path / "notes.txt")
    assert not wrong.ok and "not a video file" in wrong.output


@pytest.mark.integration
def test_youtube_captions_metadata_and_keyframes_from_recorded_responses(monkeypatch, talk):
    yt = RecordedYouTube(video_bytes=talk.read_bytes())
    yt.install(monkeypatch)
    out = _watch(f"https://youtu.be/{yt.video_id}?t=3")
    assert out.ok, out.output
    assert f"YouTube video {yt.video_id}" in out.output and yt.title in out.output
    assert "Duration: 0:05" in out.output and "Uploaded: 2024-03-05" in out.output
    assert "Transcript (YouTube captions (uploaded, English)):" in out.output
    assert "[0:00] Galileo saw four moons" in out.output and "[0:02] circling Jupiter in 1610" in out.output
    assert_heard(out.output.split("Keyframes", 1)[1], SLIDE_TEXTS[0].split(), at_least=2)  # the file was watched
    assert yt.hosts() <= {"www.youtube.com", "rr3---sn-test.googlevideo.com"}
    assert any(url.startswith(CDN) for _, url in yt.requests)


@pytest.mark.integration
def test_youtube_without_captions_is_transcribed_from_its_audio(monkeypatch, talk):
    yt = RecordedYouTube(video_bytes=talk.read_bytes(), captions=None)
    yt.install(monkeypatch)
    out = _watch(f"https://www.youtube.com/watch?v={yt.video_id}")
    assert out.ok, out.output
    transcript = out.output.split("Transcript", 1)[1]
    assert "speech recognised from the audio track" in transcript.lower()
    assert_heard(transcript, SPEECH_WORDS, at_least=HEARD_AT_LEAST)


def test_youtube_without_formats_still_gives_captions_and_says_why_no_frames(monkeypatch):
    yt = RecordedYouTube(video_bytes=None)
    yt.install(monkeypatch)
    out = _watch(f"https://m.youtube.com/shorts/{yt.video_id}")
    assert out.ok, out.output
    assert "Galileo saw four moons" in out.output and "no downloadable format" in out.output


def test_an_unavailable_youtube_video_is_a_clear_failure(monkeypatch):
    RecordedYouTube(unavailable=True).install(monkeypatch)
    out = _watch(f"https://www.youtube.com/watch?v={VIDEO_ID}")
    assert not out.ok and out.error_kind == "not_found"
    assert "Video unavailable" in out.output and "search for a transcript" in out.output


def test_long_videos_get_sparse_frames_and_say_so():
    times, how = plan(3600.0, [])
    assert len(times) == MAX_FRAMES and times[0] == 150.0
    assert "one every 5:00" in how and "sparse" in how
    times, how = plan(8.0, [1.8, 4.9])
    assert times == [1.0, 2.0, 3.0, 5.0, 7.0]  # the cut at 1.8 s gets a still; the one at 4.9 s is near 5.0 s
    assert "plus 1 at scene changes" in how


def test_missing_parts_are_listed_and_nothing_left_means_no_tool(monkeypatch):
    monkeypatch.setattr("tools.media.video.watch.shutil.which", lambda name: None)
    registry = build_registry(load_settings(VISION_MODEL_NAME="none"), factories=[("extension", make_video_tools)])
    assert registry.names == ["watch_video"]
    assert "apt-get install ffmpeg" in registry.missing["watch_video (keyframes)"]
    assert "tesseract" in registry.missing["watch_video (frame text)"]
    monkeypatch.setattr("tools.media.video.watch.importlib.util.find_spec", lambda name: None)
    monkeypatch.setattr("tools.media.video.watch.resolve_model", lambda name: (_ for _ in ()).throw(
        MissingDependency(["transcribe_audio"], "no whisper")))
    with pytest.raises(MissingDependency) as err:
        make_video_tools(load_settings())
    assert err.value.tools == ["watch_video"]


@pytest.mark.parametrize("name", ["IMG_4231.MOV", "clip.mp4", "talk.webm", "a.mkv", "b.avi", "c.m4v"])
def test_video_attachments_route_to_watch_video(tmp_path, name):
    route = route_for(tmp_path / name, ["read_file", "watch_video"])
    assert route.file_type == "video" and route.tool == "watch_video"
    assert f'watch_video(source="{tmp_path / name}"' in route.instruction
