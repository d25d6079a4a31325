"""YouTube since yt-dlp 2025.11: the Deno runtime named explicitly and found by yt-dlp itself; one download per run.

No network: yt-dlp's own runtime detection (`YoutubeDL._js_runtimes`) and its Deno challenge provider
(the one YouTube's signature and n challenges go through) run the real `deno` binary on the
`yt-dlp-ejs` scripts; the downloads are served from recorded YouTube responses (tests/support/youtube.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from config import load_settings
from tests.support.media import make_video, media_tools_available
from tests.support.youtube import CDN, RecordedYouTube
from tools.core.context import ToolContext
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.media.audio import make_audio_tools
from tools.media.video import make_video_tools
from tools.media.video.downloads import REUSED, RunVideos
from tools.media.video.watch import Watcher
from tools.media.video.youtube import deno_path, js_runtimes, ydl_options


class _Silent:
    def __getattr__(self, name: str):
        return lambda *args, **kwargs: None


def test_yt_dlp_finds_the_named_deno_and_runs_its_challenge_solver_on_it():
    import yt_dlp
    from yt_dlp.extractor.youtube.jsc._builtin.deno import DenoJCP
    from yt_dlp.extractor.youtube.jsc._builtin.ejs import ScriptSource, ScriptType

    path = deno_path()
    assert path is not None and Path(path).is_file(), "pip install deno (requirements.txt) ships the binary"
    options = ydl_options(None, time.monotonic() + 30, 1, _Silent(), [], js_runtimes())
    assert options["js_runtimes"] == {"deno": {"path": path}}
    with yt_dlp.YoutubeDL(options) as ydl:
        info = ydl._js_runtimes["deno"].info  # yt-dlp's own detection: runs `deno --version`
        assert info is not None and info.path == path and info.supported
        solver = DenoJCP(ie=ydl.get_info_extractor("Youtube"), logger=_Silent(), settings={})
        assert solver.is_available()
        core = solver._get_script(ScriptType.CORE)
        assert core.source == ScriptSource.PYPACKAGE  # yt-dlp-ejs's scripts, not a download from GitHub
        assert solver._run_js_runtime("console.log(6 * 7)").strip() == "42"  # Deno, as yt-dlp runs it


def test_the_media_steps_get_the_time_the_download_left():
    settings = load_settings(TOOL_TIMEOUT=30)
    watcher = Watcher(settings, {}, {}, 20.0, None)
    watcher.media_start = watcher.start + 10.0  # a download that used its whole half
    assert watcher.media_at(0.4) == pytest.approx(watcher.start + 14.0)  # stills get 4 s, not 1
    assert watcher.media_at(1.0) == pytest.approx(watcher.deadline)


@pytest.mark.integration
@pytest.mark.skipif(not media_tools_available(), reason="needs ffmpeg")
def test_one_download_per_video_per_run_reused_by_watch_video_and_transcribe_audio(monkeypatch, tmp_path):
    yt = RecordedYouTube(video_bytes=make_video(tmp_path / "talk.mp4").read_bytes())  # captions: no Whisper there
    yt.install(monkeypatch)
    settings = load_settings(VISION_MODEL_NAME="none", TOOL_TIMEOUT=60)
    watch = make_video_tools(settings)[0]
    listen = make_audio_tools(settings)[0]
    url = f"https://www.youtube.com/watch?v={yt.video_id}"
    with Workspace(tmp_path / "run", 400 * 2**20) as work, Workspace(tmp_path / "other", 400 * 2**20) as other:
        services = RunServices(work)
        run = ToolContext(run_services=services).to_config()
        first = run_tool(watch, {"source": url}, settings, run)
        second = run_tool(watch, {"source": url, "start": "0:01", "end": "0:03"}, settings, run)
        heard = run_tool(listen, {"path": f"https://youtu.be/{yt.video_id}"}, settings, run)
        in_this_run = sum(1 for _, u in yt.requests if u.startswith(CDN))
        elsewhere = run_tool(watch, {"source": url}, settings, ToolContext(run_services=RunServices(other)).to_config())
        downloads = services.kept(RunVideos).downloads
    assert first.ok and second.ok and heard.ok and elsewhere.ok, (first.output, second.output, heard.output)
    assert in_this_run == 1 and downloads == 1  # three calls in one run: one download
    assert REUSED in second.output and REUSED not in first.output
    assert sum(1 for _, u in yt.requests if u.startswith(CDN)) == 2  # another run downloads its own
