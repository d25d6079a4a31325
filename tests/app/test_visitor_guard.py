"""The hostile visitor, round 3 (issue 36), against the launched app as an anonymous visitor on loopback.

- a URL given as the file of /preview or /ask is refused before the server fetches anything;
- twelve joins declaring 200 MB bodies are answered 413 unread: the app's peak memory stays within GROWTH_KB;
- forged X-Forwarded-For headers from a peer no TRUSTED_PROXIES names all count as that one peer;
- one session holds at most VISITOR_MAX_LIGHT_JOBS preview places, so another session's preview is served;
- a preview's reply names no server folder.
The app runs as `nobody` when the suite runs as root and `nobody` can start this interpreter.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from tests.support.app_server import AppServer, as_user
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI, say
from tests.support.web_server import LocalWebServer, Reply

pytestmark = pytest.mark.integration

GROWTH_KB = 150 * 1024
"""How much the app's peak resident memory may grow over twelve 200 MB joins (it reads none of them)."""
DECLARED = 200 * 2**20


@pytest.fixture(scope="module")
def model():
    with ScriptedOpenAI(lambda body: say("FINAL ANSWER: 42")) as server:
        yield server


@pytest.fixture(scope="module")
def big_file():
    """A server a visitor names as their 'file' (it would serve 8 MB; nothing may ask for it)."""
    with LocalWebServer({"/big.pdf": Reply(200, b"%PDF-1.4\n" + b"0" * (8 * 2**20), "application/pdf")}) as server:
        yield server


APP_UID = 65534
"""`nobody`: when the suite runs as root the app runs as a non-root user, as on a Space (uid 1000)."""


@pytest.fixture(scope="module")
def base() -> Iterator[Path]:
    """A world-readable folder (pytest's tmp is root's, 0700): the GAIA folder, and the app's own writable folders."""
    root = Path(tempfile.mkdtemp(prefix="guard-"))
    root.chmod(0o755)
    make_gaia_folder(root / "gaia")
    subprocess.run(["chmod", "-R", "a+rX", str(root / "gaia")], check=True)
    for name in ("home", "tmp", "runs"):
        (root / name).mkdir()
        if _uid() is not None:
            os.chown(root / name, APP_UID, APP_UID)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@functools.cache
def _uid() -> int | None:
    """`nobody` when root and when it can start this interpreter the way the budgeted worker does (through prlimit).

    Else this user: e.g. a venv whose interpreter sits under root's 0700 home, which `nobody` cannot exec.
    """
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        return None
    probe = subprocess.run([*as_user(APP_UID), "/usr/bin/prlimit", "--nofile=256", "--", sys.executable, "-c", "pass"],
                           capture_output=True, check=False)
    return APP_UID if probe.returncode == 0 else None


@pytest.fixture(scope="module")
def gaia_dir(base) -> Path:
    return base / "gaia"


@pytest.fixture(scope="module")
def app(model, base, gaia_dir):
    uid = _uid()
    env = {"OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "sk-test", "MODEL_NAME": "scripted",
           "APP_ALLOWED_USERS": "the-owner", "OUTPUT_DIR": str(base / "runs"), "RAG_ENABLED": "false",
           "APP_PRELOAD": "false", "SEARCH_PROVIDERS": "wikipedia", "WIKIPEDIA_API_URL": "http://127.0.0.1:9/w",
           "APP_QUEUE_MAX_SIZE": "64", "VISITOR_MAX_QUEUED": "4", "VISITOR_MAX_QUEUED_PER_ADDRESS": "6",
           "APP_MAX_REQUEST_KB": "1024", "GAIA_LOCAL_ROOTS": str(gaia_dir), "HOME": str(base / "home"),
           "TMPDIR": str(base / "tmp"), "GRADIO_TEMP_DIR": str(base / "tmp" / "gradio")}
    with AppServer(env, timeout=120, user=uid) as server:
        yield server


def _peak_kb(app: AppServer) -> int:
    assert app.proc is not None
    status = Path(f"/proc/{app.proc.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


def _config(app: AppServer) -> dict:
    with urllib.request.urlopen(app.url + "config", timeout=30) as resp:
        return json.load(resp)


def _dependency(app: AppServer, api_name: str) -> tuple[int, dict]:
    return next((i, d) for i, d in enumerate(_config(app)["dependencies"]) if d.get("api_name") == api_name)


def _call(app: AppServer, api_name: str, data: list) -> str:
    """POST /gradio_api/call/<api_name>, then read its event stream to the end (what any HTTP client can do)."""
    request = urllib.request.Request(app.url + f"gradio_api/call/{api_name}", data=json.dumps({"data": data}).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as resp:
        event_id = json.load(resp)["event_id"]
    with urllib.request.urlopen(app.url + f"gradio_api/call/{api_name}/{event_id}", timeout=120) as resp:
        return resp.read().decode("utf-8", "replace")


@pytest.mark.parametrize("api_name", ["preview", "ask", "chat"])
def test_a_url_as_a_file_is_refused_before_the_server_fetches_it(app, big_file, model, api_name):
    url = big_file.url("/big.pdf")
    file = {"path": url, "url": url, "orig_name": "big.pdf", "meta": {"_type": "gradio.FileData"}}
    _, dep = _dependency(app, api_name)
    data: list = [None] * len(dep["inputs"])
    components = {c["id"]: c for c in _config(app)["components"]}
    kinds = [components[cid]["type"] for cid in dep["inputs"]]
    if "file" in kinds:
        data[kinds.index("file")] = file
    else:  # the chat's multimodal box: {"text", "files"}
        data[kinds.index("multimodaltextbox")] = {"text": "What is in the file?", "files": [file]}
    if api_name == "ask":
        data[0] = "What is in the file?"
    requests = len(model.requests)
    stream = _call(app, api_name, data)
    assert "event: error" in stream and "uploaded files only" in stream, stream[-2000:]
    assert big_file.hits("/big.pdf") == 0 and len(model.requests) == requests


def _declare_huge_join(app: AppServer) -> bytes:
    """A join whose headers say 200 MB; 1 MB of it is sent; returns the status line the app answers."""
    with socket.create_connection(("127.0.0.1", app.port), timeout=60) as sock:
        sock.sendall(f"POST /gradio_api/queue/join HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {DECLARED}\r\n\r\n".encode())
        with contextlib.suppress(OSError):  # the app may answer and close first
            sock.sendall(b'{"data": ["' + b"A" * 2**20)
        reply = b""
        while b"\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply.split(b"\r\n", 1)[0]


def test_twelve_200_mb_joins_are_refused_unread(app):
    Client(app.url, verbose=False)  # one normal visit first: the peak then measures the joins alone
    before = _peak_kb(app)
    with ThreadPoolExecutor(12) as pool:
        lines = list(pool.map(lambda _: _declare_huge_join(app), range(12)))
    assert all(b" 413" in line for line in lines), lines
    assert _peak_kb(app) - before < GROWTH_KB


def _join(app: AppServer, api_name: str, session: str, data: list, forwarded: str | None = None) -> int:
    index, dep = _dependency(app, api_name)
    body = json.dumps({"data": data, "fn_index": index, "trigger_id": dep["targets"][0][0], "session_hash": session,
                       "event_data": None}).encode()
    headers = {"Content-Type": "application/json", **({"X-Forwarded-For": forwarded} if forwarded else {})}
    request = urllib.request.Request(app.url + "gradio_api/queue/join", data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_one_session_holds_one_preview_place_and_another_session_is_served(app, gaia_dir, tmp_path):
    """Task loads share the preview slots (concurrency id "light"); each takes a worker start (seconds)."""
    note = tmp_path / "note.txt"
    note.write_text("a plain note")
    data = ["Local GAIA folder", "validation", "All", str(gaia_dir), None]
    statuses = [_join(app, "load_tasks", "preview-hog", data) for _ in range(4)]
    assert statuses[0] == 200 and statuses.count(503) >= 2, statuses
    started = time.monotonic()
    text = Client(app.url, verbose=False).predict(handle_file(str(note)), api_name="/preview")
    assert text.startswith("✅") and "plain note" in text, text
    assert time.monotonic() - started < 90  # generous: one worker start on a busy machine, not a wait behind the hog


def test_a_preview_reply_names_no_server_folder(app):
    """A file of the upload folder that is gone (a session's oldest uploads are deleted past its budget)."""
    gone = Path(app.env["TMPDIR"]) / "gradio" / ("0" * 64) / "gone.txt"
    stream = _call(app, "preview", [{"path": str(gone), "orig_name": "gone.txt", "meta": {"_type": "gradio.FileData"}},
                                    None, None])
    assert "gone.txt" in stream, stream[-2000:]
    assert app.env["TMPDIR"] not in stream and "/gradio/" not in stream, stream[-2000:]


def test_zz_forged_forwarded_for_from_an_untrusted_peer_counts_as_the_peer(app, gaia_dir):
    """Runs last (it fills the peer's places): 30 forged joins at once, bound by the peer's 6 places.

    Each join comes from a new session and a new forged X-Forwarded-For address.

    VISITOR_MAX_QUEUED_PER_ADDRESS=6; each task load starts a worker (a second or more), so few end during the
    burst. Believing the header would admit all 30.
    """
    data = ["Local GAIA folder", "validation", "All", str(gaia_dir), None]
    with ThreadPoolExecutor(10) as pool:
        statuses = list(pool.map(lambda i: _join(app, "load_tasks", f"forger-{i}", data, forwarded=f"203.0.113.{i}"),
                                 range(30)))
    assert statuses.count(200) <= 15 and statuses.count(503) >= 15, statuses
