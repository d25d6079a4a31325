"""A 30-step task with and without observation masking: prompt tokens, the largest request, masking's own time.

    .venv/bin/python bench/context_budget.py [--steps 30] [--page-chars 10000] [--window 32768]

A scripted OpenAI-compatible server (real HTTP on 127.0.0.1, `tests/support/openai_server`) plays a model
that reads one page of ~`page-chars` characters per step (GAIA's long tasks: thirty pages to read), then
answers. The server counts prompt tokens as its JSON / 4 and reports them as usage.

- without masking: a window large enough for everything (LLM_CONTEXT_TOKENS=10,000,000): every page
  stays in every later request;
- with masking: the server's window is `--window` tokens (vLLM-style `max_model_len` in `/v1/models`) and
  refuses longer requests with HTTP 400 `context_length_exceeded`; CONTEXT_MASK_RATIO=0.6.

Reported: prompt tokens of the task (all requests) and per request, the largest request against the window,
overflows, and the wall time spent inside `ObservationMasker.fit` (estimating, saving, stubbing).
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

from langchain_core.tools import BaseTool, tool  # noqa: E402

import agent.budget  # noqa: E402
from agent.events import ContextMasked, ModelCall  # noqa: E402
from agent.pipeline import Pipeline  # noqa: E402
from config import load_settings  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say, tool_results  # noqa: E402
from tools.files import make_file_tools  # noqa: E402
from tools.registry import ToolRegistry  # noqa: E402


def make_page_tool(page_chars: int) -> BaseTool:
    """A tool returning page n of a long document (~page_chars characters of prose)."""
    sentence = "The ledger lists the shipments of the year, with their weights and ports of call. "

    @tool
    def read_page(n: int) -> str:
        """Read page `n` of the document.

        Args:
            n: The page number, from 0.
        """
        body = (sentence * (page_chars // len(sentence) + 1))[:page_chars]
        return f"Page {n} of the shipping ledger.\n{body}"

    return read_page


def script(steps: int) -> Any:
    def answer(body: dict[str, Any]) -> Reply:
        done = len(tool_results(body))
        if done < steps and body.get("tools"):
            return call("read_page", n=done)
        return say(f"FINAL ANSWER: {done}")
    return answer


class MaskTimer:
    """Wall time spent in ObservationMasker.fit (wrapped for the bench's run)."""

    def __init__(self) -> None:
        self.seconds, self.calls = 0.0, 0
        self._fit = agent.budget.ObservationMasker.fit

    def __enter__(self) -> MaskTimer:
        timer, original = self, self._fit

        def timed(masker: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(masker, *args, **kwargs)
            finally:
                timer.seconds += time.perf_counter() - start
                timer.calls += 1

        agent.budget.ObservationMasker.fit = timed  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        agent.budget.ObservationMasker.fit = self._fit  # type: ignore[method-assign]


def run(masking: bool, steps: int, page_chars: int, window: int, work: Path) -> dict[str, Any]:
    server = ScriptedOpenAI(script(steps), context_limit=window if masking else 10**9,  # counts tokens either way
                            window_in="models" if masking else None)
    with server as srv, MaskTimer() as timer:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=work / "rag", WORKSPACE_DIR=work / "ws", LLM_MAX_TOKENS=1024,
                                 LLM_CONTEXT_TOKENS=0 if masking else 10_000_000, MAX_FILE_SIZE=page_chars + 500)
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_page_tool(page_chars),
                                                                   *make_file_tools(settings)]))
        pipeline.preload()
        started = time.perf_counter()
        sol = pipeline.solve("Read every page of the ledger and count them.", max_iterations=steps + 5)
        wall = time.perf_counter() - started
        overflows = srv.overflows
    calls = [e for e in sol.events if isinstance(e, ModelCall)]
    masked = [e for e in sol.events if isinstance(e, ContextMasked)]
    prompts = [c.prompt_tokens for c in calls]
    return {"mode": "masking" if masking else "no masking", "answer": sol.answer, "error": sol.error,
            "requests": len(calls), "prompt_tokens": sum(prompts), "per_request": sum(prompts) / max(1, len(prompts)),
            "largest": max(prompts, default=0), "window": window, "overflows": overflows,
            "masking_steps": len(masked), "masked": masked[-1].total_masked if masked else 0,
            "mask_s": timer.seconds, "fit_calls": timer.calls, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--page-chars", type=int, default=10_000)
    parser.add_argument("--window", type=int, default=32_768)
    args = parser.parse_args(argv)
    print(f"{args.steps}-step task, pages of {args.page_chars:,} characters; masking against a {args.window:,}-token "
          "window (CONTEXT_MASK_RATIO 0.6, LLM_MAX_TOKENS 1024)")
    rows = []
    for masking in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            row = run(masking, args.steps, args.page_chars, args.window, Path(tmp))
        rows.append(row)
        print(f"  {row['mode']:<11} answer={row['answer']!r:<6} requests={row['requests']} "
              f"prompt tokens={row['prompt_tokens']:,} ({row['per_request']:,.0f}/request) "
              f"largest request={row['largest']:,} ({row['largest'] / args.window:.0%} of {args.window:,}) "
              f"overflows={row['overflows']} masking steps={row['masking_steps']} masked={row['masked']} "
              f"masking time={row['mask_s'] * 1000:.1f} ms over {row['fit_calls']} requests "
              f"({row['mask_s'] / max(1, row['fit_calls']) * 1000:.2f} ms each) wall={row['wall_s']:.2f}s")
    plain, masked = rows
    saved = 1 - masked["prompt_tokens"] / plain["prompt_tokens"] if plain["prompt_tokens"] else 0.0
    print(f"prompt tokens saved by masking: {saved:.0%}")
    ok = masked["error"] is None and masked["answer"] == str(args.steps) and masked["largest"] <= args.window
    print("goal (the masked run completes and no request passes the window):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
