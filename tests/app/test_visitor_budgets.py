"""The visitor who needs no login (issue 21): expansion bombs, lookups, answers and the queue, against the launched app.

APP_ALLOWED_USERS names someone else, so the anonymous visitor here may spend nothing; what stays open
to them (/preview, /load_tasks, /rag_lookup) must stay within its budget: each bomb (small on disk,
huge when parsed; `tests/support/bombs.py`) comes back as a clear refusal naming the limit, while the
app's own peak memory (VmHWM) barely moves and no job folder is left behind. Lookups make no model
request and show no stored answer; loaded tasks show no expected answer; one session's 70 unread
queue joins leave another session served; a task id like `../../x` is refused when its folder loads.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from tests.support import bombs
from tests.support.app_server import ROOT, AppServer, base_env
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI, say

pytestmark = pytest.mark.integration

FRUITS = "What is the order of the fruits listed in the attached text file, comma-separated?"
"""Close to a fixture question whose stored answer is 'apple, banana, cherry' (a hint-tier or better match)."""
STORED_ANSWERS = ("apple, banana, cherry",)
GROWTH_KB = 400 * 1024
"""How much the app's own peak resident memory may grow over all the bombs (the parsers run elsewhere)."""


@pytest.fixture(scope="module")
def model():
    with ScriptedOpenAI(lambda body: say("hint: count them")) as server:
        yield server


@pytest.fixture(scope="module")
def gaia_dir(tmp_path_factory) -> Path:
    return make_gaia_folder(tmp_path_factory.mktemp("gaia"))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """The bombs, and a folder whose one task id is `../../x`."""
    root = tmp_path_factory.mktemp("bombs")
    made = {"pdf": bombs.huge_page_pdf(root / "page.pdf"), "flac": bombs.silent_flac(root / "silence.flac"),
            "docx": bombs.huge_xml_docx(root / "huge.docx"), "xlsx": bombs.many_rows_xlsx(root / "rows.xlsx"),
            "split": bombs.many_rows_split(root / "split")}
    evil = root / "evil" / "2023" / "validation"
    evil.mkdir(parents=True)
    (evil / "metadata.jsonl").write_text(json.dumps({"task_id": "../../x", "Question": "q", "Level": 1,
                                                     "Final answer": "a", "file_name": ""}) + "\n")
    made["evil"] = root / "evil"
    made["warm"] = root / "warm.txt"
    made["warm"].write_text("a plain note")
    return made


def _hub_cache(root: Path, gaia_dir: Path) -> Path:
    """A Hugging Face hub cache holding a GAIA snapshot (read offline, as after a first download)."""
    repo = root / "datasets--gaia-benchmark--GAIA"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(gaia_dir / "2023" / "validation", repo / "snapshots" / commit / "2023" / "validation")
    return root


@pytest.fixture(scope="module")
def app(model, gaia_dir, files, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("app")
    subprocess.run([sys.executable, "-m", "rag", "build", "--gaia-dir", str(gaia_dir), "--index-dir", str(tmp / "rag")],
                   cwd=ROOT, env=base_env(), check=True, capture_output=True, timeout=180)
    env = {"OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "sk-test", "MODEL_NAME": "scripted",
           "APP_ALLOWED_USERS": "the-owner", "OUTPUT_DIR": str(tmp / "runs"), "RAG_INDEX_DIR": str(tmp / "rag"),
           "RAG_ENABLED": "true", "RAG_LLM_HINTS": "true", "RAG_HINT_THRESHOLD": "0.2",
           "GAIA_CACHE_DIR": str(_hub_cache(tmp / "hub", gaia_dir)),
           "GAIA_LOCAL_ROOTS": f"{files['split'].parent},{gaia_dir}", "SEARCH_PROVIDERS": "wikipedia",
           "WIKIPEDIA_API_URL": "http://127.0.0.1:9/w/api.php", "APP_PRELOAD": "true", "VISITOR_JOB_SECONDS": "60",
           "APP_QUEUE_MAX_SIZE": "64", "VISITOR_MAX_QUEUED": "4", "VISITOR_MAX_QUEUED_PER_ADDRESS": "1000",
           "VISITOR_MAX_UPLOAD_MB": "40",
           # A temp folder of its own: other xdist workers' apps make job folders in the shared one.
           "TMPDIR": str(tmp_path_factory.mktemp("app-tmp"))}
    with AppServer(env, timeout=120) as server:
        yield server


def _peak_kb(app: AppServer) -> int:
    assert app.proc is not None
    status = Path(f"/proc/{app.proc.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


def _job_folders(app: AppServer) -> set[Path]:
    """The job folders of `app` (in its own temp folder)."""
    return set(Path(app.env["TMPDIR"]).glob("gaia-visitor-*"))


@pytest.fixture(scope="module")
def warm_client(app, files) -> Client:
    """A client of the app after one normal preview: the app's own imports are done, so peaks measure the bomb."""
    client = Client(app.url, verbose=False)
    client.predict(handle_file(str(files["warm"])), api_name="/preview")
    return client


@pytest.mark.parametrize(("name", "limit"), [("pdf", "VISITOR_MAX_PIXELS"), ("flac", "VISITOR_MAX_MEDIA_MINUTES"),
                                             ("docx", "VISITOR_MAX_UNPACKED_MB"), ("xlsx", "VISITOR_MAX_UNPACKED_MB")])
def test_each_bomb_is_refused_by_preview_within_the_caps(warm_client, app, files, model, name, limit):
    before, folders, requests = _peak_kb(app), _job_folders(app), len(model.requests)
    text = warm_client.predict(handle_file(str(files[name])), api_name="/preview")
    assert "is not previewed" in text and limit in text, text
    assert _peak_kb(app) - before < GROWTH_KB
    assert _job_folders(app) <= folders and len(model.requests) == requests


def test_a_split_of_millions_of_rows_is_refused_by_load_tasks(app, files, model):
    before, requests = _peak_kb(app), len(model.requests)
    _, rows, message = Client(app.url, verbose=False).predict("Local GAIA folder", "validation", "All",
                                                              str(files["split"]), api_name="/load_tasks")
    assert "3,000,000 rows" in message and "VISITOR_MAX_SPLIT_ROWS" in message, message
    assert not (rows["data"] if isinstance(rows, dict) else rows)
    assert _peak_kb(app) - before < GROWTH_KB and len(model.requests) == requests


def test_a_task_id_like_dot_dot_is_refused_when_its_folder_loads(app, files, model):
    requests = len(model.requests)
    *_, message = Client(app.url, verbose=False).predict("Local GAIA folder", "validation", "All", str(files["evil"]),
                                                         api_name="/load_tasks")
    assert "task id '../../x' is refused" in message, message
    assert len(model.requests) == requests


def test_a_normal_preview_and_a_normal_folder_still_work(app, gaia_dir):
    client = Client(app.url, verbose=False)
    text = client.predict(handle_file(str(gaia_dir / "2023" / "validation" / "fruits.txt")), api_name="/preview")
    assert text.startswith("✅") and "banana" in text, text
    _, _, message = client.predict("Local GAIA folder", "validation", "All", str(gaia_dir), api_name="/load_tasks")
    assert "Loaded 6" in message


@pytest.mark.parametrize("question", [
    "List the fruits in the attached text file in alphabetical order, comma-separated.",
    FRUITS,
])
def test_rag_lookup_by_a_visitor_makes_no_model_request_and_shows_no_answer(app, model, question):
    requests = len(model.requests)
    text = Client(app.url, verbose=False).predict(question, api_name="/rag_lookup")
    assert "fruits" in text and "allowed users only" in text, text  # the stored question is listed
    assert not any(answer in text for answer in STORED_ANSWERS), text
    assert len(model.requests) == requests


@pytest.mark.parametrize("source", ["Hugging Face hub", "Local GAIA folder"])
def test_loaded_tasks_show_no_expected_answer_to_a_visitor(app, gaia_dir, source):
    folder = str(gaia_dir) if source == "Local GAIA folder" else ""
    _, table, message = Client(app.url, verbose=False).predict(source, "validation", "All", folder,
                                                               api_name="/load_tasks")
    assert "Loaded 6" in message, message
    rows = table["data"] if isinstance(table, dict) else table
    assert len(rows) == 6 and all(row[-1] == "(hidden: shown to allowed users only)" for row in rows), rows
    assert not any(answer in json.dumps(table) for answer in STORED_ANSWERS)


def _join(app: AppServer, fn_index: int, trigger: int, session: str, data: list) -> int:
    body = json.dumps({"data": data, "fn_index": fn_index, "trigger_id": trigger, "session_hash": session,
                       "event_data": None}).encode()
    request = urllib.request.Request(app.url + "gradio_api/queue/join", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_seventy_unread_joins_from_one_session_leave_another_session_served(app, gaia_dir):
    with urllib.request.urlopen(app.url + "config", timeout=30) as resp:
        config = json.load(resp)
    index, dep = next((i, d) for i, d in enumerate(config["dependencies"]) if d.get("api_name") == "load_tasks")
    data = ["Local GAIA folder", "validation", "All", str(gaia_dir), None]
    statuses = [_join(app, index, dep["targets"][0][0], "one-greedy-session", data) for _ in range(70)]
    assert statuses.count(200) <= 4 and statuses.count(503) >= 66, statuses
    *_, message = Client(app.url, verbose=False).predict("Local GAIA folder", "validation", "All", str(gaia_dir),
                                                         api_name="/load_tasks")
    assert "Loaded 6" in message


def test_zz_uploads_of_one_address_stop_at_its_budget(app):
    """Uploads that no handler ever sees (posted straight to the route) still count against the address.

    Runs last in the module: it spends the address's budget (VISITOR_MAX_UPLOAD_MB=40 here; the earlier tests
    uploaded a few MB), so every upload after it from 127.0.0.1 would be refused too.
    """
    statuses = []
    for i in range(7):
        status, text = app.upload(f"blob{i}.bin", bytes([i]) * (8 * 2**20))
        statuses.append(status)
        if status != 200:
            break
    assert statuses[-1] == 429 and "VISITOR_MAX_UPLOAD_MB" in text, (statuses, text)
    assert 4 <= len(statuses) <= 6, statuses  # 40 MB: the fifth or sixth 8 MB upload is refused
