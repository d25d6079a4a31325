"""The app as a Space runs it: a non-root user, a read-only app folder, SYSTEM=spaces and the Space's variables.

A real sign-in: gradio's own /login/huggingface → authlib → a local OpenID stand-in (tests/support/openid_server.py)
→ /login/callback, then the session cookie on gradio_client's requests. The owner's /chat is answered and their
batch writes its outputs (to ~/.cache, the app folder being read-only); a signed-in stranger spends nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from gradio_client import Client

from tests.app.conftest import scripted_reply
from tests.support.app_server import ROOT, AppServer, as_user
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI
from tests.support.openid_server import OpenIdStandIn

pytestmark = pytest.mark.integration

OWNER = "the-owner"
SPACE_UID = 65534  # `nobody`, when the suite runs as root (as the Space builder runs the app as uid 1000)
COPIED = ("app.py", "config.py", "gaia_layout.py", "pyproject.toml", "agent", "models", "tools", "rag", "evaluation",
          "ui", "visitors", "README.md")


@pytest.fixture(scope="module")
def space_dir() -> Iterator[Path]:
    """A world-readable folder (pytest's tmp is root's, 0700): the read-only app copy, HOME, the GAIA folder."""
    base = Path(tempfile.mkdtemp(prefix="space-sim-"))
    base.chmod(0o755)
    app = base / "app"
    app.mkdir()
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, app / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, app / name)
    make_gaia_folder(base / "gaia")
    home = base / "home"
    home.mkdir()
    uid = _space_uid()
    if uid is not None:
        os.chown(home, uid, uid)
    subprocess.run(["chmod", "-R", "a-w,a+rX", str(app)], check=True)
    subprocess.run(["chmod", "-R", "a+rX", str(base / "gaia")], check=True)
    yield base
    subprocess.run(["chmod", "-R", "u+w", str(base)], check=False)
    shutil.rmtree(base, ignore_errors=True)


def _space_uid() -> int | None:
    """`nobody` when running as root (root writes anywhere: not a read-only folder), else this user."""
    return SPACE_UID if os.getuid() == 0 else None


@pytest.fixture(scope="module")
def idp() -> Iterator[OpenIdStandIn]:
    with OpenIdStandIn(user={"preferred_username": OWNER}) as server:
        yield server


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(scripted_reply) as srv:
        yield srv


@pytest.fixture(scope="module")
def space_app(space_dir, idp, model) -> Iterator[AppServer]:
    uid = _space_uid()
    if uid is not None and shutil.which("setpriv") is None:
        pytest.skip("running as root, and setpriv (util-linux) is missing to drop to a Space-like user")
    probe = subprocess.run([*as_user(uid), sys.executable, "-c", "import gradio"], capture_output=True, check=False)
    if probe.returncode:
        pytest.skip(f"uid {uid} cannot run this venv's python: {probe.stderr[-200:]!r}")
    env = {"SYSTEM": "spaces", "SPACE_ID": f"{OWNER}/gaia-harness", "SPACE_AUTHOR_NAME": OWNER,
           "SPACE_REPO_NAME": "gaia-harness", "OAUTH_CLIENT_ID": idp.client_id,
           "OAUTH_CLIENT_SECRET": idp.client_secret, "OAUTH_SCOPES": "openid profile",
           "OPENID_PROVIDER_URL": idp.url, "HOME": str(space_dir / "home"),
           "OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "sk-test", "MODEL_NAME": "scripted",
           "RAG_LLM_HINTS": "false", "BATCH_QUESTION_DELAY": "0", "SEARCH_PROVIDERS": "wikipedia",
           "WIKIPEDIA_API_URL": "http://127.0.0.1:9/w/api.php", "GAIA_LOCAL_ROOTS": str(space_dir / "gaia"),
           "PYTHONDONTWRITEBYTECODE": "1",
           # A Space's container has its own /tmp; here /tmp/gradio may be another OS user's (gradio's shared default).
           "GRADIO_TEMP_DIR": str(space_dir / "home" / "gradio-tmp")}
    server = AppServer(env, root=space_dir / "app", user=uid, timeout=120)
    for name in ("OUTPUT_DIR", "RAG_INDEX_DIR", "GAIA_CACHE_DIR"):  # the defaults, as on a Space
        server.env.pop(name, None)
    with server as app:
        yield app


def sign_in(app: AppServer, idp: OpenIdStandIn, username: str) -> str:
    """The real flow, by hand (the session cookie is Secure, which http.cookiejar withholds on http://)."""
    idp.user.update({"preferred_username": username, "name": username})
    with httpx.Client(timeout=30) as http:
        start = http.get(app.url + "login/huggingface")
        assert start.status_code in (302, 307), start.text
        cookie = start.cookies.get("session") or _cookie(start)
        at_idp = http.get(start.headers["location"])
        assert at_idp.status_code == 302 and urllib.parse.urlsplit(at_idp.headers["location"]).path == "/login/callback"
        back = http.get(at_idp.headers["location"], headers={"Cookie": f"session={cookie}"})
        assert back.status_code in (302, 307), back.text
        return _cookie(back)


def _cookie(response: httpx.Response) -> str:
    for header in response.headers.get_list("set-cookie"):
        if header.startswith("session="):
            return header.split(";", 1)[0].split("=", 1)[1]
    raise AssertionError(f"no session cookie in {response.headers}")


def test_the_owner_signs_in_and_chat_answers_them(space_app, idp, model):
    client = Client(space_app.url, verbose=False, headers={"Cookie": f"session={sign_in(space_app, idp, OWNER)}"})
    before = len(model.requests)
    reply = client.predict({"text": "Please remember the word pineapple.", "files": []}, api_name="/chat")
    assert "OK" in json.dumps(reply) and "🔒" not in json.dumps(reply)
    assert len(model.requests) > before


def test_a_signed_in_stranger_spends_nothing(space_app, idp, model):
    client = Client(space_app.url, verbose=False, headers={"Cookie": f"session={sign_in(space_app, idp, 'stranger')}"})
    before = len(model.requests)
    reply = client.predict({"text": "Please remember the word walnut.", "files": []}, api_name="/chat")
    assert "stranger" in json.dumps(reply) and OWNER in json.dumps(reply)
    assert len(model.requests) == before


def test_the_owners_batch_runs_in_a_read_only_app_folder(space_app, space_dir, idp):
    client = Client(space_app.url, verbose=False, headers={"Cookie": f"session={sign_in(space_app, idp, OWNER)}"})
    status, _table, _summary, _chart, files = client.predict(
        "Local GAIA folder", "validation", str(space_dir / "gaia"), "All", 2, "", 1, 0, False, "",
        api_name="/evaluate")
    assert "🏁" in status and "2/2 done" in status, status
    runs = space_dir / "home" / ".cache" / "gaia-agent-harness" / "runs"
    written = [p.name for run in runs.iterdir() for p in run.iterdir()]
    assert "results.jsonl" in written and "report.md" in written
    assert not (space_dir / "app" / "runs").exists()
    assert files and any(str(f).endswith("report.md") for f in files)


def test_the_sign_in_button_is_above_the_tabs(space_app):
    config = httpx.get(space_app.url + "config", timeout=10).json()
    buttons = [c["id"] for c in config["components"] if c.get("props", {}).get("value") == "Sign in with Hugging Face"]
    tabs = {c["id"] for c in config["components"] if c.get("type") == "tabitem"}
    assert len(buttons) == 1

    def path_to(node: dict, target: int, trail: tuple[int, ...] = ()) -> tuple[int, ...] | None:
        if node.get("id") == target:
            return trail
        for child in node.get("children", []):
            if (found := path_to(child, target, (*trail, node.get("id", -1)))) is not None:
                return found
        return None

    trail = path_to(config["layout"], buttons[0])
    assert trail is not None and not tabs & set(trail)  # on every tab: not inside any one of them


def test_start_up_says_who_may_run_the_model(space_app):
    log = space_app.log()
    assert f"Only {OWNER} may run the model" in log and "organisation" in log
    assert "Exception ignored" not in log
