"""The one start/stop of the test servers (tests/support/loopback.py)."""

from __future__ import annotations

import sys
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.loopback import ProcessLoopbackServer, free_port
from tests.support.openai_server import ScriptedOpenAI, say
from tests.support.web_server import LocalWebServer, Reply


def test_a_threaded_server_stops_twice_and_keeps_its_address():
    server = LocalWebServer({"/": Reply(200, "up", "text/plain")})
    server.stop()  # before start: nothing to do
    with server:
        assert server.running
        with urllib.request.urlopen(server.url("/"), timeout=10) as resp:
            assert resp.read() == b"up"
    server.stop()
    assert not server.running and server.url("/").startswith("http://127.0.0.1:")  # still named after stop


def test_a_fixed_port_can_be_served_again_after_stop():
    port = free_port()
    first = ScriptedOpenAI([say("one")]).start(port)
    first.stop()
    with ScriptedOpenAI([say("two")]).start(port) as again:
        assert again.port == port and again.running


class _Python(ProcessLoopbackServer):
    """`python ARGS` ({port} in ARGS is the server's port)."""

    def __init__(self, *args: str, **kw) -> None:
        super().__init__(**kw)
        self.args = args

    @property
    def ready_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def command(self) -> Sequence[str]:
        return [sys.executable, *(a.replace("{port}", str(self.port)) for a in self.args)]


def test_a_child_process_server_is_ready_then_stopped_with_its_group(tmp_path: Path):
    server = _Python("-m", "http.server", "{port}", "--bind", "127.0.0.1", "--directory", str(tmp_path), timeout=60)
    with server:
        assert server.running and server.started_s is not None
        with urllib.request.urlopen(server.ready_url, timeout=10) as resp:
            assert resp.status == 200
    assert not server.running and server.proc is None


def test_a_child_that_dies_fails_the_start_with_its_log():
    server = _Python("-c", "import sys; print('no model here', flush=True); sys.exit(3)", timeout=60)
    with pytest.raises(RuntimeError, match="exited with code 3") as err:
        server.start()
    assert "no model here" in str(err.value) and not server.running
