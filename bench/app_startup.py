"""App start-up: time to the first HTTP 200 vs `import gradio`, and time to the first answer with/without preload.

    .venv/bin/python bench/app_startup.py [--runs 3]

1. `import gradio` as app.py does it (the floor: a Gradio app cannot answer before gradio is imported) vs
   `python app.py` until `GET /` answers 200. Goal: app <= 1.5 x import. Heavy libraries (langchain,
   langgraph, torch, sentence-transformers) load in the preload thread, after the server is up.
2. Time to the first answer: spawn the app, wait for HTTP 200, immediately ask one question through
   the `ask` API (a scripted OpenAI-compatible server answers at once), once with APP_PRELOAD=true and
   once with APP_PRELOAD=false. Reported from spawn, and for the request alone (what the first user waits);
   once asked the moment the server is up, once `--think` seconds later (a user reading the page and
   typing a question: the preload has had time to finish, the lazy load has not started).
   A small RAG index (the GAIA test fixture, built with `python -m rag build`) makes the knowledge
   base load the embedding model, as a deployed app with an index does; `--no-rag` leaves it empty.

Medians over `--runs` runs, interleaved so background load hits every variant alike.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.app_server import AppServer, base_env  # noqa: E402
from tests.support.openai_server import ScriptedOpenAI, say  # noqa: E402

QUESTION = "Name the largest planet of the solar system."
ANSWER = "Jupiter"


def time_import_gradio() -> float:
    """Wall seconds of a fresh `python -c "import gradio"`."""
    start = time.monotonic()
    # As app.py imports it: without gradio rewriting its own stubs (ui/gradio_stubs.py).
    subprocess.run([sys.executable, "-c", "import ui.gradio_stubs, gradio"], cwd=ROOT, env=base_env(), check=True)
    return time.monotonic() - start


def build_rag_index(tmp: Path) -> float:
    """Build the fixture GAIA questions into tmp/rag_index; return the seconds it took."""
    from tests.support.gaia_fixture import make_gaia_folder

    gaia = make_gaia_folder(tmp / "gaia")
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "rag", "build", "--gaia-dir", str(gaia),
                    "--index-dir", str(tmp / "rag_index")],
                   cwd=ROOT, env=base_env(), check=True, capture_output=True)
    return time.monotonic() - start


def app_env(tmp: Path, model_url: str | None, preload: bool) -> dict[str, str]:
    """Settings for one benchmark app: isolated output/RAG folders, scripted model if given."""
    env = {"OUTPUT_DIR": str(tmp / "runs"), "RAG_INDEX_DIR": str(tmp / "rag_index"), "RAG_LLM_HINTS": "false",
           "APP_PRELOAD": "true" if preload else "false"}
    if model_url:
        env.update({"OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-bench", "MODEL_NAME": "scripted"})
    return env


def time_first_200(tmp: Path) -> float:
    """Seconds from spawning `python app.py` to its first HTTP 200."""
    with AppServer(app_env(tmp, None, preload=True)) as app:
        assert app.started_s is not None  # set before __enter__ returns
        return app.started_s


def time_first_answer(tmp: Path, model_url: str, preload: bool, think: float = 0.0) -> tuple[float, float, float]:
    """(spawn → HTTP 200, spawn → first answer, first request alone) in seconds; ask `think` s after the 200."""
    from gradio_client import Client

    with AppServer(app_env(tmp, model_url, preload)) as app:
        assert app.started_s is not None  # set before __enter__ returns
        up = app.started_s
        spawned_at = time.monotonic() - up
        client = Client(app.url, verbose=False)
        time.sleep(max(0.0, think - (time.monotonic() - spawned_at - up)))
        asked = time.monotonic()
        _trace, answer, *_ = client.predict(QUESTION, None, api_name="/ask")
        done = time.monotonic()
        if answer != ANSWER:
            raise RuntimeError(f"unexpected answer {answer!r}; app log:\n{app.log()}")
        return up, done - spawned_at, done - asked


def main() -> None:
    """Run the measurements and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-rag", action="store_true", help="no RAG index (the knowledge base stays empty)")
    parser.add_argument("--think", type=float, default=8.0, help="seconds between HTTP 200 and the later question")
    args = parser.parse_args()

    imports, firsts = [], []
    answers: dict[tuple[bool, float], list[tuple[float, float, float]]] = {}
    with ScriptedOpenAI(lambda body: say(f"FINAL ANSWER: {ANSWER}")) as model, tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        if not args.no_rag:
            print(f"RAG index of the fixture questions built in {build_rag_index(tmp):.1f} s")
        time_import_gradio()  # warm the OS file cache for everyone
        for _ in range(args.runs):
            imports.append(time_import_gradio())
            firsts.append(time_first_200(tmp))
            for think in (0.0, args.think):
                for preload in (True, False):
                    answers.setdefault((preload, think), []).append(time_first_answer(tmp, model.url, preload, think))

    imp, first = statistics.median(imports), statistics.median(firsts)
    print(f"runs: {args.runs} (medians)")
    print(f"python -c 'import gradio'       {imp:6.2f} s")
    print(f"python app.py → first HTTP 200  {first:6.2f} s   ratio {first / imp:.2f}x (goal <= 1.5x)")
    for (preload, think), rows in answers.items():
        up = statistics.median(r[0] for r in rows)
        total = statistics.median(r[1] for r in rows)
        request = statistics.median(r[2] for r in rows)
        label = "with preload   " if preload else "without preload"
        when = "at once    " if not think else f"after {think:g} s "
        print(f"first question {when} {label}: spawn → 200 {up:5.2f} s · spawn → answer {total:5.2f} s · "
              f"first request {request:5.2f} s")


if __name__ == "__main__":
    main()
