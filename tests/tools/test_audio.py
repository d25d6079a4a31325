"""transcribe_audio: real espeak-ng speech in every format, transcribed offline by the packaged Whisper tiny.en."""

from __future__ import annotations

import re
import threading
import time
from types import SimpleNamespace

import pytest

from config import load_settings
from tests.support.heard import assert_heard, heard
from tests.support.media import (
    LECTURE_SENTENCES,
    SPEECH_TEXT,
    SPEECH_WORDS,
    make_corrupt,
    make_empty,
    make_silence,
    make_speech,
    media_tools_available,
)
from tools.core.errors import MissingDependency
from tools.core.executor import run_tool
from tools.media import audio

needs_media = pytest.mark.skipif(not media_tools_available(), reason="espeak-ng and ffmpeg are required")


@pytest.fixture(scope="module")
def transcriber():
    """One tool for the module, so the model loads once."""
    return audio.make_audio_tools(load_settings(TOOL_TIMEOUT=120))[0]


def _run(tool, path):
    settings = load_settings(TOOL_TIMEOUT=120)
    return run_tool(tool, {"path": str(path)}, settings, config={"configurable": {"attachments": [str(path)]}})


def test_default_model_is_the_packaged_tiny_en():
    packaged = audio.packaged_model_dir()
    assert packaged is not None and (packaged / "model.bin").is_file()
    assert audio.resolve_model("tiny.en") == str(packaged)
    assert audio.resolve_model("small") == "small"  # other names go to faster-whisper (hub download)


def test_a_model_directory_path_is_used_as_is(tmp_path):
    packaged = audio.packaged_model_dir()
    assert audio.resolve_model(str(packaged)) == str(packaged)
    with pytest.raises(MissingDependency) as err:
        audio.make_audio_tools(load_settings(WHISPER_MODEL=str(tmp_path / "no-model")))
    assert "model.bin" in err.value.reason and err.value.tools == ["transcribe_audio"]


@pytest.mark.integration
@needs_media
@pytest.mark.parametrize("ext", ["wav", "mp3", "m4a", "flac"])
def test_transcribes_real_speech_in_every_format(tmp_path, transcriber, ext):
    out = _run(transcriber, make_speech(tmp_path / f"memo.{ext}"))
    assert out.ok, out.output
    # espeak's robotic voice: tiny.en mishears a word or two, differently on different CPUs ("brown" -> "round",
    # "dog" -> "nog"); most must come back.
    assert_heard(out.output, SPEECH_WORDS, at_least=5)


@pytest.mark.integration
@needs_media
def test_concurrent_calls_share_one_model(tmp_path, monkeypatch):
    import faster_whisper

    loads: list[str] = []
    real = faster_whisper.WhisperModel

    def counting(model, **kw):
        loads.append(model)
        return real(model, **kw)

    monkeypatch.setattr(faster_whisper, "WhisperModel", counting)
    monkeypatch.setattr(audio, "_MODELS", {})  # forget the model other tests loaded
    tool = audio.make_audio_tools(load_settings(TOOL_TIMEOUT=120))[0]
    assert loads == []  # lazy: nothing loaded when the tool is built
    clip = make_speech(tmp_path / "memo.wav", "Turn to page forty two.")
    words = ("turn", "page", "forty", "two")
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(_run(tool, clip).output)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == 3, results
    assert all(len(heard(r, words)) >= 2 or "42" in r for r in results), results  # each call heard the clip
    assert len(loads) == 1


@pytest.mark.integration
@needs_media
def test_silence_says_no_speech(tmp_path, transcriber):
    out = _run(transcriber, make_silence(tmp_path / "quiet.wav"))
    assert out.ok and ("No speech recognised" in out.output or len(out.output.split()) <= 3), out.output


@pytest.mark.parametrize("ext", ["mp3", "wav", "m4a", "flac"])
def test_corrupt_audio_is_a_clear_message(tmp_path, transcriber, ext):
    out = _run(transcriber, make_corrupt(tmp_path / f"broken.{ext}"))
    assert not out.ok and out.error_kind == "corrupt_file", out.output
    assert "broken." in out.output and ("corrupt" in out.output or "cannot decode" in out.output)


def test_empty_and_missing_and_wrong_type(tmp_path, transcriber):
    empty = _run(transcriber, make_empty(tmp_path / "empty.mp3"))
    assert not empty.ok and "empty" in empty.output
    missing = _run(transcriber, tmp_path / "nope.wav")
    assert not missing.ok and "not found" in missing.output
    (tmp_path / "notes.txt").write_text(SPEECH_TEXT)
    wrong = _run(transcriber, tmp_path / "notes.txt")
    assert not wrong.ok and "not an audio file" in wrong.output


@needs_media
def test_unloadable_model_name_is_reported_offline(tmp_path):
    clip = make_speech(tmp_path / "memo.wav", "Hello there.")
    settings = load_settings(WHISPER_MODEL="no-such-whisper-model", TOOL_TIMEOUT=60)  # HF_HUB_OFFLINE=1 in tests
    out = run_tool(audio.make_audio_tools(settings)[0], {"path": str(clip)}, settings)
    assert not out.ok and out.error_kind == "missing_model"
    assert "could not load the Whisper model 'no-such-whisper-model'" in out.output and "WHISPER_MODEL" in out.output


@pytest.mark.integration
@needs_media
def test_long_audio_returns_a_partial_transcript_before_the_timeout(tmp_path, transcriber, monkeypatch):
    clip = make_speech(tmp_path / "lecture.wav", " ".join(LECTURE_SENTENCES * 2), speed=175)  # over a minute
    _run(transcriber, make_speech(tmp_path / "warm.wav", "Hello."))  # the shared model is loaded
    # The tool's clock runs an hour fast once the call has begun: its budget (TOOL_TIMEOUT - 3 s) is spent
    # after the first window however fast or busy this machine is, while the executor's own limit stays far off.
    real = time.monotonic
    calls = iter(range(1_000_000))
    monkeypatch.setattr(audio, "time", SimpleNamespace(monotonic=lambda: real() + (3600 if next(calls) else 0)))
    settings = load_settings(TOOL_TIMEOUT=120)
    out = run_tool(audio.make_audio_tools(settings)[0], {"path": str(clip)}, settings)
    assert out.ok, out.output
    assert re.search(r"transcript cut at 0:\d\d of \d+:\d\d: TOOL_TIMEOUT reached", out.output), out.output
    assert_heard(out.output.split("…[transcript cut", 1)[0], ("welcome", "lecture", "history", "astronomy"), 3)
