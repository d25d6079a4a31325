"""Batch throughput against a rate-limited OpenAI-compatible server: how close to the rate limit's ceiling?

    .venv/bin/python bench/batch_throughput.py [--tasks 40] [--rpm 240] [--latency 0.3] [--concurrency 4]

A scripted server (real HTTP on 127.0.0.1, `latency` seconds per answer) enforces `rpm` as a steady
rate, the way providers that quantise their per-minute limit to short intervals do (a GCRA with a
burst of two requests; over the limit it answers 429 with the exact Retry-After). Every task needs two
model calls (a calculator tool call, then the answer), through the real `Pipeline` and the real runner.

The rate-limit-bound minimum for N requests is (N - 2) * 60 / rpm + latency: after the burst of two,
the last request cannot start earlier, and it still takes `latency`. The ceiling ratio is minimum / elapsed (1.0 = the limit is the
only thing that took time; goal >= 0.9). Elapsed is the runner's summary `elapsed_s` (first task
start to last task end). Three modes run in the same process, on the same tasks:

- concurrent, LLM_REQUESTS_PER_MINUTE known: smooth spacing, no 429 expected;
- concurrent, rate unknown: the limiter learns it from the 429s (none may fail a task);
- the seed's sequential mode: concurrency 1 with a delay between task starts (default: the smallest
  delay that keeps two calls per task under the limit, the best a seed user could configure).

`--server window` uses the stock ScriptedOpenAI limit instead (a sliding 60 s window: `rpm` requests
at once, then nothing until the oldest leaves the window); pick --tasks above rpm/2 to hit it, e.g.
`--server window --rpm 20 --tasks 15 --modes adaptive` (about a minute).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.pipeline import Pipeline  # noqa: E402
from config import load_settings  # noqa: E402
from evaluation.dataset import Sample  # noqa: E402
from evaluation.runner import RunConfig, run_batch  # noqa: E402
from tests.support.openai_server import ScriptedOpenAI, call, first_user_text, say, tool_results  # noqa: E402


BURST = 2
"""Requests the steady-rate server lets through back to back before it enforces the spacing."""


class SteadyRateOpenAI(ScriptedOpenAI):
    """ScriptedOpenAI whose rpm cap is a steady rate (GCRA) with a small burst, not a sliding minute."""

    def __init__(self, script: Any, *, latency: float, rpm: float, burst: int = BURST) -> None:
        super().__init__(script, latency=latency)
        self.interval = 60.0 / rpm
        self.tolerance = (burst - 1) * self.interval
        self._tat = 0.0

    def _over_rate(self, now: float) -> float | None:  # called under the server's lock
        tat = max(self._tat, now)
        if tat - now > self.tolerance:
            return tat - self.tolerance - now
        self._tat = tat + self.interval
        return None


def bench_script(body: dict) -> Any:
    """Task i: call calculator(i+i), then answer 2i."""
    text = first_user_text(body)
    i = int(text.split("Bench task ", 1)[1].split(":", 1)[0])
    if not tool_results(body):
        return call("calculator", expression=f"{i}+{i}")
    return say(f"FINAL ANSWER: {2 * i}")


def make_samples(n: int) -> list[Sample]:
    return [Sample(task_id=f"bench-{i:03d}", question=f"Bench task {i}: what is {i} plus {i}?", level=1 + i % 3,
                   final_answer=str(2 * i)) for i in range(n)]


def rate_bound(requests: int, rpm: float, latency: float, server: str) -> float:
    """Least time `requests` requests can take under the server's limit (the last one still takes `latency`)."""
    if server == "window":  # a sliding minute admits `rpm` at once, then the next batch 60 s later
        return (requests - 1) // int(rpm) * 60.0 + latency
    return max(0, requests - BURST) * 60.0 / rpm + latency


def run_mode(name: str, *, tasks: int, rpm: float, latency: float, concurrency: int, known: bool, delay: float,
             work: Path, server: str = "steady") -> dict[str, Any]:
    srv_cm = (SteadyRateOpenAI(bench_script, latency=latency, rpm=rpm) if server == "steady"
              else ScriptedOpenAI(bench_script, latency=latency, rpm_limit=int(rpm)))
    with srv_cm as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=work / "rag", LLM_REQUESTS_PER_MINUTE=rpm if known else 0,
                                 BATCH_QUESTION_DELAY=delay)
        pipeline = Pipeline(settings)
        pipeline.preload()  # start-up is not part of the batch's time
        samples = make_samples(tasks)
        t0 = time.monotonic()
        result = run_batch(samples, pipeline, RunConfig(concurrency=concurrency, output_dir=work / name), settings)
        wall = time.monotonic() - t0
        requests, limited = len(srv.requests), srv.rate_limited
    admitted = requests - limited
    minimum = rate_bound(admitted, rpm, latency, server)
    elapsed = result.summary["elapsed_s"]
    return {"mode": name, "concurrency": concurrency, "rpm_known": known, "delay_s": delay if concurrency == 1 else None,
            "requests": admitted, "429s": limited, "elapsed_s": elapsed, "wall_s": round(wall, 2),
            "minimum_s": round(minimum, 2), "ceiling_ratio": round(minimum / elapsed, 3) if elapsed else None,
            "correct": result.summary["correct"], "errors": result.summary["errors"], "tasks": tasks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--rpm", type=float, default=240)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seq-delay", type=float, default=None,
                        help="delay between task starts in the sequential mode (default 2 * 60 / rpm)")
    parser.add_argument("--modes", default="known,adaptive,sequential")
    parser.add_argument("--server", choices=["steady", "window"], default="steady",
                        help="rate enforcement: steady (GCRA, default) or the stock sliding 60 s window")
    args = parser.parse_args(argv)
    seq_delay = 2 * 60.0 / args.rpm if args.seq_delay is None else args.seq_delay
    modes = {
        "known": dict(concurrency=args.concurrency, known=True, delay=0.0),
        "adaptive": dict(concurrency=args.concurrency, known=False, delay=0.0),
        "sequential": dict(concurrency=1, known=False, delay=seq_delay),
    }
    kind = "steady, burst 2" if args.server == "steady" else "sliding 60 s window"
    print(f"{args.tasks} tasks x 2 model calls, {args.latency:g} s latency, {args.rpm:g} rpm ({kind})")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.modes.split(","):
            row = run_mode(name, tasks=args.tasks, rpm=args.rpm, latency=args.latency, work=Path(tmp), server=args.server,
                           **modes[name])
            rows.append(row)
            print(f"  {name:<10} conc={row['concurrency']:<2} requests={row['requests']:<4} 429s={row['429s']:<3} "
                  f"elapsed={row['elapsed_s']:7.2f}s  minimum={row['minimum_s']:6.2f}s  "
                  f"ceiling ratio={row['ceiling_ratio']:.3f}  correct={row['correct']}/{row['tasks']} "
                  f"errors={row['errors']}", flush=True)
    ok = all(r["errors"] == 0 for r in rows) and all(r["ceiling_ratio"] >= 0.9 for r in rows if r["mode"] != "sequential")
    print("goal (concurrent modes >= 0.9 of the ceiling, no task failed):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
