"""Team vs react: prompt tokens per task and the largest request, and the wall time of a two-attachment task.

    .venv/bin/python bench/team.py [--steps 30] [--pages 3] [--latency 0.3]

Both strategies run through the real pipeline and client against the scripted OpenAI-compatible server
on 127.0.0.1, which counts a request's prompt tokens as its JSON / 4 and answers after `--latency` s
(a model's think time). The scripted model takes the same tool steps under both strategies:

1. **Chain** (`--steps` pages, ~3 KB each, each linking the next; the last holds the answer): react
   follows it in its one loop; team: the orchestrator delegates it to one researcher.
2. **Two attachments** (`--pages` pages of read_file each): react reads file A then file B in its loop;
   team: two readers at once. Wall time is the median of `--runs`.

Prints each figure and the team/react ratio. Numbers depend on the script; they show shapes, not a model.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.pipeline import Pipeline  # noqa: E402
from config import load_settings  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAI, call, count_tokens, say, tool_results  # noqa: E402
from tests.support.research_site import FILLER  # noqa: E402
from tests.support.team_script import TeamScript, last_user, orchestrator_script  # noqa: E402
from tests.support.web_server import LocalWebServer, Route  # noqa: E402
from tests.support.web_server import Reply as WebReply  # noqa: E402
from tools.core.registry import build_registry  # noqa: E402
from tools.documents.files import make_file_tools  # noqa: E402
from tools.web.fetch import make_fetch_tools  # noqa: E402

ANSWER = "4512"


def chain_site(steps: int) -> dict[str, Route]:
    """`steps` pages, each linking the next; the last holds the answer."""
    routes: dict[str, Route] = {}
    for i in range(1, steps + 1):
        tail = f"The chain ends: the number is {ANSWER}." if i == steps else f'<a href="/p{i + 1}">next page</a>'
        routes[f"/p{i}"] = WebReply(body=f"<html><body><h1>Page {i}</h1><p>{FILLER * 6}</p><p>{tail}</p></body></html>")
    return routes


def follower(start: str) -> Any:
    """A loop that fetches link after link, then answers (`final`: the answer's text)."""
    def reply(body: dict[str, Any], final: str) -> Reply:
        results = tool_results(body)
        last = results[-1] if results else ""
        if f"the number is {ANSWER}" in last:
            return say(final)
        link = re.search(r"\((http://127\.0\.0\.1:\d+/p\d+)\)", last)
        return call("fetch_webpage", url=link.group(1) if link else start)
    return reply


def orchestrator(calls: list[tuple[str, str]]) -> Any:
    """The orchestrator: one round delegating `calls`, satisfied at once, then the answer."""
    return orchestrator_script(*calls, answer=say(f"FINAL ANSWER: {ANSWER}"))


def reader_loop(paths: list[Path], pages: int, final: str) -> Any:
    """Reads each of `paths` page by page (read_file), in order, then answers."""
    def reply(body: dict[str, Any]) -> Reply:
        done = len(tool_results(body))
        if done >= pages * len(paths):
            return say(final)
        return call("read_file", path=str(paths[done // pages]), page=done % pages + 1)
    return reply


def measure(script: TeamScript, settings_kw: dict[str, Any], factories: list[Any], question: str,
            latency: float, **solve: Any) -> dict[str, Any]:
    """Run one task; its prompt tokens, largest request, orchestrator's largest, wall time and answer."""
    with ScriptedOpenAI(script, latency=latency) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 MAX_ITERATIONS=80, WORKER_MAX_ITERATIONS=60, **settings_kw)
        pipeline = Pipeline(settings, registry=build_registry(settings, [("base", f) for f in factories]))
        pipeline.preload()
        started = time.monotonic()
        sol = pipeline.solve(question, **solve)
        wall = time.monotonic() - started
    sizes = [count_tokens(r.body) for r in srv.requests]
    orchestrator_sizes = [count_tokens(b) for b in script.seen.get("orchestrator", [])]
    return {"prompt": sum(sizes), "largest": max(sizes), "orchestrator_largest": max(orchestrator_sizes, default=0),
            "requests": len(sizes), "wall": wall, "answer": sol.answer}


def chain(steps: int, latency: float) -> None:
    with LocalWebServer(chain_site(steps)) as site:
        start = site.url("/p1")
        follow = follower(start)
        kw = {"FETCH_ALLOWED_HOSTS": site.host_port}
        react = measure(TeamScript({"other": lambda b: follow(b, f"FINAL ANSWER: {ANSWER}")}),
                        kw | {"AGENT_STRATEGY": "react"}, [make_fetch_tools], "What is the number?", latency)
        team = measure(TeamScript({"orchestrator": orchestrator([("researcher", f"Follow the pages from {start}")]),
                                   "researcher": lambda b: follow(b, f"The number is {ANSWER}.")}),
                       kw | {"AGENT_STRATEGY": "team"}, [make_fetch_tools], "What is the number?", latency)
    print(f"\n{steps}-step chain (fetch_webpage, ~3 KB pages)")
    _table(react, team)


def attachments(pages: int, latency: float, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name in ("north.txt", "south.txt"):
            path = Path(tmp) / name
            path.write_text(("Ledger line. " + FILLER) * (pages * 10000 // (len(FILLER) + 13) - 2))
            files.append(path)
        question = f"Compare {files[0].name} and {files[1].name}."
        both: dict[str, list[dict[str, Any]]] = {"react": [], "team": []}
        for _ in range(runs):
            react_script = TeamScript({"other": reader_loop(files, pages, f"FINAL ANSWER: {ANSWER}")})
            both["react"].append(measure(react_script, {"AGENT_STRATEGY": "react"}, [make_file_tools], question,
                                         latency, file_path=str(files[0]), readable=[files[1]], confine=False))
            readers = {"orchestrator": orchestrator([("reader", f"Read {p} and report it") for p in files]),
                       "reader": lambda b: reader_loop([Path(re.search(r"Read (\S+) and", last_user(b))
                                                             .group(1))], pages, "Read it all.")(b)}  # type: ignore[union-attr]
            both["team"].append(measure(TeamScript(readers), {"AGENT_STRATEGY": "team"}, [make_file_tools],
                                        question, latency, file_path=str(files[0]), readable=[files[1]],
                                        confine=False))
    react, team = both["react"][0], both["team"][0]
    react["wall"] = statistics.median(r["wall"] for r in both["react"])
    team["wall"] = statistics.median(r["wall"] for r in both["team"])
    print(f"\nTwo attachments ({pages} read_file pages each; median wall time of {runs})")
    _table(react, team)


def _table(react: dict[str, Any], team: dict[str, Any]) -> None:
    print(f"{'':34}{'react':>10}{'team':>10}{'team/react':>12}")
    for key, label in (("prompt", "prompt tokens per task"), ("largest", "largest request (tokens)"),
                       ("orchestrator_largest", "largest orchestrator request"), ("requests", "model requests"),
                       ("wall", "wall time (s)")):
        a, b = react[key], team[key]
        ratio = f"{b / a:.2f}" if a else "-"
        fmt = (lambda v: f"{v:.2f}") if key == "wall" else (lambda v: f"{v:,}")
        print(f"{label:34}{fmt(a):>10}{fmt(b):>10}{ratio:>12}")
    print(f"{'answers':34}{react['answer']:>10}{team['answer']:>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--pages", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the scripted model takes per request")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    chain(args.steps, args.latency)
    attachments(args.pages, args.latency, args.runs)


if __name__ == "__main__":
    main()
