"""Batch throughput against a rate-limited OpenAI-compatible server: how close to the provider's ceiling?

    .venv/bin/python bench/batch_throughput.py [--tasks 40] [--rpm 120] [--latency 0.3] [--concurrency 4]
        [--modes known,adaptive,headers,tpm,sequential] [--repeat 1] [--mix hidden|plain]

A scripted server (real HTTP on 127.0.0.1, `latency` seconds per answer; `tests/support/openai_server`)
enforces `rpm` as a steady rate with a burst of two (how providers quantise a per-minute limit; over it,
429 with the exact Retry-After), and in the `tpm` mode a tokens-per-minute budget over the prompt tokens
it counts. Tasks run through the real `Pipeline` and the real runner.

The default `hidden` mix is shaped like GAIA's hidden set: most tasks without an attachment (1-4 quick
tool steps: search, calculator), some with spreadsheets, images, PDFs and Python files, a few audio files
and video links whose tool work (transcription) takes 8-15 s, in dataset order with the slow ones spread
through it. The tool work is simulated (`bench_tool` sleeps the planned seconds) so the run measures
scheduling and pacing, not this machine's Whisper. `plain` is the older mix: every task one calculator
call then the answer.

Ceilings: for requests, the least time N requests can take is (N - 2) * 60 / rpm + latency (after the
burst of two, the last cannot start earlier, and it still takes `latency`); for tokens, (T - burst) / (tpm / 60)
+ latency over the T tokens the server counted. The ceiling ratio is minimum / elapsed (1.0 = the limit
was the only thing that took time). Elapsed is the runner's summary `elapsed_s` (first task start to
last task end). Modes, on the same tasks:

- known:      LLM_REQUESTS_PER_MINUTE set, server sends no x-ratelimit-* headers;
- adaptive:   rate unknown, no headers: the limiter learns it from the 429s (none may fail a task);
- headers:    rate unknown, the server announces x-ratelimit-{limit,remaining,reset}-requests;
- tpm:        a tokens-per-minute cap binds (LLM_TOKENS_PER_MINUTE set, no headers); never exceeded;
- theaders:   the same token cap, announced only in x-ratelimit-*-tokens headers (LLM_TOKENS_PER_MINUTE unset),
              and the first attachment task's prompt 1.5 times what the budget holds at once (a pasted
              spreadsheet): it goes alone when the window is empty, and the batch still ends near the ceiling;
- tminute:    the token cap's headers speak of the minute (limit = tpm, remaining = tpm less the last 60 s, reset =
              until full) while the server enforces `--tburst-s` seconds' worth at once (OpenAI: limits may be
              enforced over shorter periods): a 429 under a large remaining must teach the burst; goal >= 0.9 with
              at most 3 token 429s;
- theaders60: the token cap announced and enforced per minute alone (a burst of the whole minute);
- tfive:      the token cap's headers of the `--tburst-s` burst itself (`limit` = its figure, e.g. 4,000 per 5 s):
              it must not be read as that many per minute (12 times slower); goal >= 0.9 with at most 3 token 429s;
- longchain:  `--tasks` one-step tasks and one 10-request task (9 tool steps; the fourth, level 1) under the window429
              ceiling with Retry-After only, the rows carrying the annotator's step count as GAIA's validation
              rows do: the long chain must not wait behind one-step tasks; goal >= 0.95;
- longchainbare: the same rows without the annotator's metadata (as the test split's): only the level and the
              task's progress once it runs tell the chain apart (shown, no goal);
- sequential: the seed's mode, concurrency 1 with the smallest safe delay between task starts;
- window429:  an unknown ceiling of `--window-requests` requests per `--window-s` seconds (sliding), no
              x-ratelimit-* headers, no numbers in the 429, a Retry-After up to the window's length (when its
              oldest request leaves it): the limiter learns the ceiling from the first 429. Its least time for
              N requests is floor((N - 1) / requests) * window + latency (every window used to the last request,
              from the first instant: only as many workers as the window admits can reach it); also shown, and
              the goal: the achieved rate over the ceiling's (requests per window / window) >= 0.95, with at most
              2 rejections.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.tools import BaseTool, tool  # noqa: E402

from agent.pipeline import Pipeline  # noqa: E402
from config import load_settings  # noqa: E402
from evaluation.dataset import AnnotatorMetadata, Sample  # noqa: E402
from evaluation.runner import RunConfig, run_batch  # noqa: E402
from tests.support.openai_server import Limits, ScriptedOpenAI, call, first_user_text, say, tool_results  # noqa: E402
from tools.core.registry import ToolRegistry  # noqa: E402

BURST = 2
"""Requests the steady-rate server lets through back to back before it enforces the spacing."""
TOKEN_BURST_S = 5.0
"""Seconds' worth of tokens the server's token budget lets through at once."""


@dataclass(frozen=True)
class TaskPlan:
    """One bench task: its attachment type (for the ordering) and the seconds of each tool step."""

    index: int
    file_type: str
    steps: tuple[float, ...]
    video: bool = False
    size_mb: float = 0.0


def hidden_mix(n: int, seed: int = 7) -> list[TaskPlan]:
    """A GAIA-hidden-set-like mix, deterministic for a seed (shares of tasks per kind, as in the validation set)."""
    rng = random.Random(seed)
    kinds = (["none"] * 30 + ["xlsx"] * 6 + ["png"] * 4 + ["pdf"] * 2 + ["py"] * 2 + ["csv"] * 1
             + ["mp3"] * 2 + ["video"] * 2 + ["docx"] * 1)
    plans = []
    for i in range(n):
        kind = rng.choice(kinds)
        if kind == "none":
            steps = tuple(round(rng.uniform(0.1, 0.6), 2) for _ in range(rng.randint(1, 4)))
        elif kind in ("mp3", "video"):
            steps = (round(rng.uniform(8, 15), 2),) + ((0.3,) if rng.random() < 0.5 else ())
        elif kind == "xlsx":
            big = rng.random() < 0.3
            steps = (round(rng.uniform(4, 6) if big else rng.uniform(0.5, 1.5), 2), round(rng.uniform(0.5, 1.5), 2))
            plans.append(TaskPlan(i, "xlsx", steps, size_mb=0.8 if big else 0.02))
            continue
        elif kind == "pdf":
            steps = (round(rng.uniform(2, 4), 2),)
        elif kind == "png":
            steps = (round(rng.uniform(1.5, 3), 2),)
        else:
            steps = (round(rng.uniform(0.3, 0.8), 2),)
        plans.append(TaskPlan(i, "" if kind in ("none", "video") else kind, steps, video=kind == "video"))
    return plans


def plain_mix(n: int) -> list[TaskPlan]:
    """Every task: one quick calculator-like step, then the answer."""
    return [TaskPlan(i, "", (0.0,)) for i in range(n)]


def make_bench_tool(plans: list[TaskPlan]) -> BaseTool:
    """The simulated tool: sleeps the planned seconds for (task, step)."""
    by_index = {p.index: p for p in plans}

    @tool
    def bench_tool(task: int, step: int) -> str:
        """Do step `step` of bench task `task` (reading its attachment, searching, computing).

        Args:
            task: the task number from the question.
            step: the step number, starting at 0.
        """
        seconds = by_index[task].steps[step]
        if seconds:
            time.sleep(seconds)
        return f"step {step} of task {task} done: " + "observation " * 40  # prompts grow like real ones

    return bench_tool


def bench_script(body: dict[str, Any], plans: list[TaskPlan] | None = None) -> Any:
    """Task i: call bench_tool for each planned step, then answer 2i."""
    text = first_user_text(body)
    i = int(text.split("Bench task ", 1)[1].split(":", 1)[0])
    steps = len(plans[i].steps) if plans else 1
    done = len(tool_results(body))
    if done < steps:
        return call("bench_tool", task=i, step=done)
    return say(f"FINAL ANSWER: {2 * i}")


def make_samples(plans: list[TaskPlan], folder: Path, *, annotated: bool = False) -> list[Sample]:
    """One Sample per plan, with a real attachment file of the planned type and size.

    `annotated`: each carries its step count as GAIA's validation rows do (`Annotator Metadata`, "Number of
    steps"); the test split's rows, like the hidden mix's, carry none.
    """
    folder.mkdir(parents=True, exist_ok=True)
    samples = []
    for p in plans:
        path = None
        name = ""
        if p.file_type:
            name = f"task{p.index:03d}.{p.file_type}"
            path = folder / name
            path.write_bytes(b"\0" * int(max(p.size_mb, 0.001) * 1e6))
        link = " (see https://www.youtube.com/watch?v=bench)" if p.video else ""
        samples.append(Sample(task_id=f"bench-{p.index:03d}", question=f"Bench task {p.index}: what is {p.index} "
                              f"plus {p.index}?{link}", level=1 + p.index % 3, final_answer=str(2 * p.index),
                              file_name=name, file_path=path,
                              annotator=AnnotatorMetadata(number_of_steps=len(p.steps)) if annotated else None))
    return samples


def request_bound(requests: int, rpm: float, latency: float) -> float:
    """Least time `requests` requests can take under the steady-rate limit (the last one still takes `latency`)."""
    return max(0, requests - BURST) * 60.0 / rpm + latency


def token_bound(tokens: int, tpm: float, latency: float, burst_s: float = TOKEN_BURST_S) -> float:
    """Least time `tokens` tokens can take under the token budget (after its initial burst)."""
    rate = tpm / 60.0
    return max(0.0, tokens - rate * burst_s) / rate + latency


def max_window_tokens(admitted: list[tuple[float, int]], window: float = 60.0) -> int:
    """The most tokens the server counted within any `window` seconds."""
    best, start, total = 0, 0, 0
    for at, tokens in admitted:
        total += tokens
        while admitted[start][0] < at - window:
            total -= admitted[start][1]
            start += 1
        best = max(best, total)
    return best


def window_bound(requests: int, per_window: int, window_s: float, latency: float) -> float:
    """Least time `requests` requests can take when any `window_s` seconds admit at most `per_window`."""
    return max(0, requests - 1) // per_window * window_s + latency


def with_big_prompt(samples: list[Sample], tokens: float) -> list[Sample]:
    """The samples with the first attachment task's question carrying `tokens` tokens of pasted context."""
    at = next((i for i, s in enumerate(samples) if s.file_name), 0)
    words = int(tokens * 4 / len("ledger "))  # the server counts a token per 4 characters
    big = samples[at]
    return [*samples[:at], replace(big, question=big.question + " Context: " + "ledger " * words), *samples[at + 1:]]


def long_chain_mix(n: int, steps: int = 9, at: int = 3) -> list[TaskPlan]:
    """`n` one-step tasks with one `steps`-step task at position `at` (a long research chain)."""
    return [TaskPlan(i, "", (0.2,) * (steps if i == at else 1)) for i in range(n)]


def run_mode(name: str, *, plans: list[TaskPlan], rpm: float, tpm: float, latency: float, concurrency: int,
             known: bool, headers: bool, tokens: bool, delay: float, work: Path,
             window: tuple[int, float] | None = None, tell_tpm: bool = True, big: bool = False,
             burst_s: float = TOKEN_BURST_S, minute: bool = False, five: bool = False,
             annotated: bool = False) -> dict[str, Any]:
    limits = Limits(rpm=rpm, burst=BURST, tpm=tpm if tokens else None, token_burst_s=burst_s, headers=headers,
                    announce_minute=minute, announce_burst=five)
    sliding = {"rpm_limit": window[0], "rate_window_s": window[1], "limits": Limits()} if window else {}
    with ScriptedOpenAI(lambda body: bench_script(body, plans), latency=latency,
                        **({"limits": limits} | sliding)) as srv:  # type: ignore[arg-type]
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=work / "rag", LLM_REQUESTS_PER_MINUTE=rpm if known else 0,
                                 LLM_TOKENS_PER_MINUTE=tpm if tokens and tell_tpm else 0,
                                 BATCH_QUESTION_DELAY=delay, TOOL_TIMEOUT=60, MAX_QUESTION_CHARS=200_000)
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        pipeline.preload()  # start-up is not part of the batch's time
        samples = make_samples(plans, work / "files", annotated=annotated)
        if big:
            samples = with_big_prompt(samples, tpm / 60.0 * TOKEN_BURST_S * 1.5)
        result = run_batch(samples, pipeline, RunConfig(concurrency=concurrency, output_dir=work / name), settings)
        requests, limited = len(srv.requests), srv.rate_limited
        counted = sum(t for _, t in srv.admitted_tokens)
        busiest = max_window_tokens(srv.admitted_tokens)
        token_limited = srv.token_limited
    admitted = requests - limited
    elapsed = result.summary.elapsed_s
    minimum = token_bound(counted, tpm, latency, burst_s) if tokens else request_bound(admitted, rpm, latency)
    rate_fraction = None
    if window:
        minimum = window_bound(admitted, window[0], window[1], latency)
        rate_fraction = round(admitted / elapsed / (window[0] / window[1]), 3) if elapsed else 0.0
    ceiling = result.summary.meta.get("ceiling", {})
    return {"mode": name, "concurrency": concurrency, "requests": admitted, "429s": limited,
            "token_429s": token_limited, "tokens": counted, "max_60s_tokens": busiest,
            "elapsed_s": elapsed, "minimum_s": round(minimum, 2),
            "ceiling_ratio": round(minimum / elapsed, 3) if elapsed else 0.0,
            "limiter_wait_s": ceiling.get("limiter_wait_s"), "tail_s": ceiling.get("tail_s"),
            "correct": result.summary.correct, "errors": result.summary.errors, "tasks": len(plans),
            "rejected_wait_s": result.summary.meta.get("rate_limited_wait_s"), "rate_fraction": rate_fraction,
            "learnt": ceiling.get("learnt_window")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--rpm", type=float, default=120, help="request cap (default 10 per 5 s)")
    parser.add_argument("--tpm", type=float, default=60000, help="token cap of the tpm mode (binds before the rpm)")
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seq-delay", type=float, default=None,
                        help="delay between task starts in the sequential mode (default: calls per task * 60 / rpm)")
    parser.add_argument("--modes", default="known,adaptive,headers,tpm,sequential")
    parser.add_argument("--mix", choices=["hidden", "plain"], default="hidden")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each mode (the spread matters)")
    parser.add_argument("--window-requests", type=int, default=10, help="window429 mode: requests per window")
    parser.add_argument("--window-s", type=float, default=5.0, help="window429 mode: the window's length")
    parser.add_argument("--tburst-s", type=float, default=5.0, help="tminute mode: seconds' worth enforced at once")
    args = parser.parse_args(argv)
    plans = hidden_mix(args.tasks) if args.mix == "hidden" else plain_mix(args.tasks)
    if {"longchain", "longchainbare"} & set(args.modes.split(",")):
        plans = long_chain_mix(args.tasks)
    calls = max(len(p.steps) + 1 for p in plans)
    seq_delay = calls * 60.0 / args.rpm if args.seq_delay is None else args.seq_delay
    modes = {
        "known": dict(concurrency=args.concurrency, known=True, headers=False, tokens=False, delay=0.0),
        "adaptive": dict(concurrency=args.concurrency, known=False, headers=False, tokens=False, delay=0.0),
        "headers": dict(concurrency=args.concurrency, known=False, headers=True, tokens=False, delay=0.0),
        "tpm": dict(concurrency=args.concurrency, known=False, headers=False, tokens=True, delay=0.0),
        "theaders": dict(concurrency=args.concurrency, known=False, headers=True, tokens=True, delay=0.0,
                         tell_tpm=False, big=True),
        "tminute": dict(concurrency=args.concurrency, known=False, headers=True, tokens=True, delay=0.0,
                        tell_tpm=False, burst_s=args.tburst_s, minute=True),
        "tfive": dict(concurrency=args.concurrency, known=False, headers=True, tokens=True, delay=0.0,
                      tell_tpm=False, burst_s=args.tburst_s, five=True),
        "theaders60": dict(concurrency=args.concurrency, known=False, headers=True, tokens=True, delay=0.0,
                           tell_tpm=False, burst_s=60.0),
        "longchain": dict(concurrency=args.concurrency, known=False, headers=False, tokens=False, delay=0.0,
                          window=(args.window_requests, args.window_s), annotated=True),
        "longchainbare": dict(concurrency=args.concurrency, known=False, headers=False, tokens=False, delay=0.0,
                              window=(args.window_requests, args.window_s)),
        "sequential": dict(concurrency=1, known=False, headers=False, tokens=False, delay=seq_delay),
        "window429": dict(concurrency=args.concurrency, known=False, headers=False, tokens=False, delay=0.0,
                          window=(args.window_requests, args.window_s)),
    }
    print(f"{args.tasks} tasks ({args.mix} mix, {sum(len(p.steps) + 1 for p in plans)} model calls), "
          f"{args.latency:g} s latency, {args.rpm:g} rpm (steady, burst {BURST}); tpm mode: {args.tpm:g} tpm")
    rows = []
    for name in args.modes.split(","):
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                row = run_mode(name, plans=plans, rpm=args.rpm, tpm=args.tpm, latency=args.latency, work=Path(tmp),
                               **modes[name])
            rows.append(row)
            print(f"  {name:<10} conc={row['concurrency']:<2} requests={row['requests']:<4} 429s={row['429s']:<3} "
                  f"tokens={row['tokens']:<7} elapsed={row['elapsed_s']:7.2f}s minimum={row['minimum_s']:6.2f}s "
                  f"ceiling ratio={row['ceiling_ratio']:.3f} wait={row['limiter_wait_s']}s tail={row['tail_s']}s "
                  f"correct={row['correct']}/{row['tasks']} errors={row['errors']}"
                  + (f" max tokens/60s={row['max_60s_tokens']} token 429s={row['token_429s']}"
                     if name in ("tpm", "theaders", "tminute", "theaders60", "tfive") else "")
                  + (f" 429 waits={row['rejected_wait_s']}s rate/ceiling={row['rate_fraction']:.3f} "
                     f"learnt={row['learnt']}"
                     if name in ("window429", "longchain", "longchainbare") else ""), flush=True)
    ok = all(r["errors"] == 0 for r in rows) and all(
        r["ceiling_ratio"] >= (0.9 if r["mode"] in ("tpm", "theaders", "tminute", "theaders60", "tfive") else 0.95)
        for r in rows if r["mode"] not in ("sequential", "window429", "longchainbare")) \
        and all(r["rate_fraction"] >= 0.95 for r in rows if r["mode"] in ("window429", "longchain")) \
        and all(r["token_429s"] <= 3 for r in rows if r["mode"] in ("tminute", "theaders60", "tfive")) \
        and all(r["token_429s"] == 0 and r["max_60s_tokens"] <= args.tpm for r in rows if r["mode"] == "tpm") \
        and all(r["429s"] <= 2 for r in rows if r["mode"] == "window429")
    print("goal (concurrent modes and longchain >= 0.95 of the ceiling; tpm >= 0.9, never over its cap in any 60 s; "
          "window429 >= 0.95 of the ceiling's rate with at most 2 rejections; no task failed):",
          "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
