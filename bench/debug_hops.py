"""Hops of one Debug question: which project modules its call path crosses, and how often.

    .venv/bin/python bench/debug_hops.py [--question "What is 6 * 7?"] [--top 8]

One question goes through the Debug tab's handler (`ui.debug.ask_stream`) over the app's own `Runtime`
and `Application`, the real pipeline, client and calculator tool, against the scripted OpenAI-compatible
server on 127.0.0.1 (asks for the calculator once, then answers; RAG off: no embedding model here).
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
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from application import Application  # noqa: E402
from config import load_settings  # noqa: E402
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
    """Collects cross-module calls from profile events (any thread); read once the run ended."""

    def __init__(self) -> None:
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
        if event != "call":
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
    return call("calculator", expression="6 * 7") if not results else say(f"FINAL ANSWER: {results[-1]}")


def main() -> int:
    """Run the question under the profiler and print modules, hops and entries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="What is 6 * 7?")
    parser.add_argument("--top", type=int, default=8, help="modules listed by entries")
    parser.add_argument("--hops", action="store_true", help="list every hop (caller -> callee module)")
    args = parser.parse_args()
    with ScriptedOpenAI(script) as server:
        settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 ANSWER_CHECK="off")
        with Application(settings) as app:
            runtime = Runtime(settings, app=app)
            runtime.start()
            runtime.wait()  # the preload is the app's start-up, not the question's path
            recorder = PathRecorder()
            threading.setprofile(recorder.profile)
            sys.setprofile(recorder.profile)
            try:
                outputs = list(ask_stream(runtime, args.question, use_rag=False))
            finally:
                sys.setprofile(None)
                threading.setprofile(None)  # type: ignore[arg-type,unused-ignore]  # None removes the hook
    print(f"answer: {outputs[-1][1]!r}")
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
