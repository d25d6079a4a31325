"""Hops of one Debug question, or of one CLI batch task: which project modules its call path crosses, how often.

    .venv/bin/python bench/debug_hops.py [--question "What is 6 * 7?"] [--top 8] [--hops]
    .venv/bin/python bench/debug_hops.py --batch [--top 8] [--hops]

One question goes through the Debug tab's handler (`ui.debug.ask_stream`) over the app's own `Runtime`
and `Application`, the real pipeline, client and calculator tool, against the scripted OpenAI-compatible
server on 127.0.0.1 (asks for the calculator once, then answers; RAG off: no embedding model here).
With `--batch`, one task of a local GAIA folder goes through `python -m evaluation run` (its `main`, from
the arguments to the printed score and the run folder) against the same server; the command runs once
unprofiled first, so the counts are the task's path and not the first run's imports.
`sys.setprofile` / `threading.setprofile` see every Python call in every thread; a call's module is its
file under the project (bench/, tests/ and the venv left out); its caller is the nearest project frame
above it. Printed:

- **modules**: distinct project modules with a function on the path;
- **hops**: distinct (caller module → callee module) pairs with the two different, the arrows a reader
  follows from the handler to the answer and back;
- **entries**: calls that cross into a module from another, per module (the most entered first): the
  returns to one module that the issue counts ("returns to runner and checkpoint 5 times each").

Counts depend on the script (one tool call); they show the shape of the path, not a model's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from application import Application  # noqa: E402
from config import load_settings  # noqa: E402
from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say, tool_results  # noqa: E402
from ui.debug import ask_stream  # noqa: E402
from ui.runtime import Runtime  # noqa: E402

LEFT_OUT = ("bench", "tests", ".venv")


def module_of(filename: str) -> str | None:
    """The project module a code object's file is (`agent.pipeline`), or None outside the project."""
    try:
        rel = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    if rel.parts[0] in LEFT_OUT or rel.suffix != ".py":
        return None
    return ".".join(rel.with_suffix("").parts).removesuffix(".__init__")


class PathRecorder:
    """Collects cross-module calls from profile events (threads named with one of `threads`, else any).

    Read once the run ended.
    """

    def __init__(self, threads: tuple[str, ...] = ()) -> None:
        self.threads = threads
        self.modules: set[str] = set()
        self.hops: set[tuple[str, str]] = set()
        self.entries: Counter[str] = Counter()
        self._names: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def _module(self, frame: FrameType) -> str | None:
        name = frame.f_code.co_filename
        if name not in self._names:
            self._names[name] = module_of(name)
        return self._names[name]

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        """The profile hook: on each Python call, note its module and the nearest project caller's."""
        if event != "call" or (self.threads and not threading.current_thread().name.startswith(self.threads)):
            return
        callee = self._module(frame)
        if callee is None:
            return
        caller_frame, caller = frame.f_back, None
        while caller_frame is not None and (caller := self._module(caller_frame)) is None:
            caller_frame = caller_frame.f_back
        with self._lock:
            self.modules.add(callee)
            if caller is not None and caller != callee:
                self.hops.add((caller, callee))
                self.entries[callee] += 1


def script(body: dict[str, Any]) -> Reply:
    """Ask for the calculator once, then answer with its result."""
    results = tool_results(body)
    expression = "2 + 2" if "2 + 2" in str(body) else "6 * 7"
    return call("calculator", expression=expression) if not results else say(f"FINAL ANSWER: {results[-1]}")


def profiled(run: Callable[[], Any], *recorders: PathRecorder) -> tuple[Any, PathRecorder]:
    """`run()`'s result and the path its calls took, in every thread (also fed to `recorders`)."""
    recorder = PathRecorder()

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        for each in (recorder, *recorders):
            each.profile(frame, event, arg)

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        return run(), recorder
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type,unused-ignore]  # None removes the hook


def debug_question(server: ScriptedOpenAI, question: str) -> tuple[str, PathRecorder]:
    """One question through the Debug tab's handler over a started app runtime."""
    settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                             ANSWER_CHECK="off")
    with Application(settings) as app:
        runtime = Runtime(settings, app=app)
        runtime.start()
        runtime.wait()  # the preload is the app's start-up, not the question's path
        outputs, recorder = profiled(lambda: list(ask_stream(runtime, question, use_rag=False)))
    return f"answer: {outputs[-1][1]!r}", recorder


@contextlib.contextmanager
def shell_env(**values: str) -> Iterator[None]:
    """The environment a shell would give the CLI (the command reads its settings from it), restored after."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def batch_task(server: ScriptedOpenAI) -> tuple[str, PathRecorder]:
    """One task of a local GAIA folder through `python -m evaluation run`, profiled on its second run."""
    from evaluation.__main__ import main as evaluation_main

    with tempfile.TemporaryDirectory() as tmp, shell_env(
            OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED="false", ANSWER_CHECK="off",
            BATCH_QUESTION_DELAY="0", OUTPUT_DIR=str(Path(tmp) / "runs")):
        root = make_gaia_folder(Path(tmp) / "gaia")
        task = next(t for t in FIXTURE_TASKS if t.key == "arith")

        def run(out: str) -> int:
            return evaluation_main(["run", "--data-dir", str(root), "--task-id", task.task_id(), "--no-rag",
                                    "--concurrency", "1", "--output-dir", str(Path(tmp) / out)])

        run("warm")  # imports and first-use set-up happen here, not on the measured path
        in_task = PathRecorder(threads=("gaia-task", "tool"))  # the task's own thread and its tool calls
        code, recorder = profiled(lambda: run("measured"), in_task)
    return (f"exit status: {code}\nin the task's threads: modules {len(in_task.modules)}, hops {len(in_task.hops)}, "
            f"entries {sum(in_task.entries.values())}"), recorder


def main() -> int:
    """Run the question (or the batch task) under the profiler and print modules, hops and entries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="What is 6 * 7?")
    parser.add_argument("--batch", action="store_true", help="one CLI batch task instead of a Debug question")
    parser.add_argument("--top", type=int, default=8, help="modules listed by entries")
    parser.add_argument("--hops", action="store_true", help="list every hop (caller -> callee module)")
    args = parser.parse_args()
    with ScriptedOpenAI(script) as server:
        outcome, recorder = batch_task(server) if args.batch else debug_question(server, args.question)
    print(outcome)
    print(f"modules: {len(recorder.modules)}")
    print(f"hops (distinct caller -> callee module pairs): {len(recorder.hops)}")
    print(f"entries (cross-module calls): {sum(recorder.entries.values())}")
    for name, count in recorder.entries.most_common(args.top):
        print(f"  {count:>6}  {name}")
    if args.hops:
        for caller, callee in sorted(recorder.hops):
            print(f"hop: {caller} -> {callee}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
