"""A long chain on a small window: tokens per task, the largest request, masked observations, answers right.

    .venv/bin/python bench/context_budget.py [--pages 32] [--windows 16384,32768] [--max-tokens 1024]

A scripted OpenAI-compatible server (real HTTP on 127.0.0.1, `tests/support/openai_server`) with a window of
each `--windows` size, stated as vLLM does (`max_model_len` in `/v1/models`), refuses longer requests with
HTTP 400 `context_length_exceeded`. Its model follows a chain of `--pages` pages of ~9,000 characters on a
loopback site, each naming the next address in the middle of its text, through the real `fetch_webpage`
and every active tool of the default registry (their schemas are ~5,500 tokens of every request); the
last page holds the code asked for. The server counts prompt tokens as its JSON / 4.

Reported per window: whether the answer is right and every page was read, prompt tokens of the task, the
largest request against the window, overflows, observations masked and cut, the tool set offered (16k or
less: `agent.toolsets`) and its schema tokens per request.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.events import ContextMasked, ModelCall, ToolCall, ToolsetChosen  # noqa: E402
from agent.pipeline import Pipeline  # noqa: E402
from config import load_settings  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAI, call, first_user_text, say, tool_results  # noqa: E402
from tests.support.web_server import LocalWebServer  # noqa: E402
from tests.support.web_server import Reply as WebReply  # noqa: E402
from tools.core.registry import build_registry  # noqa: E402

PROSE = ("The ledger of the harbour office records another day of ships, cargoes and tides, none of which "
         "matters for the question at hand. ")
NEXT = re.compile(r"next page: (http://\S+?/chain/\d+)")
START = re.compile(r"from (http://\S+/chain/0)")
CODE = re.compile(r"The code is (\d+)\.")


def chain_site(pages: int) -> LocalWebServer:
    """The loopback site: /chain/0 .. /chain/{pages-1}, ~9,000 characters each."""
    server = LocalWebServer({})
    base = server.url("").rstrip("/")
    filler = PROSE * 36
    for n in range(pages):
        link = f"The next page: {base}/chain/{n + 1} (keep reading)." if n + 1 < pages else "The code is 7314."
        body = f"<html><body><h1>Ledger {n}</h1><p>{filler}</p><p>{link}</p><p>{filler}</p></body></html>"
        server.routes[f"/chain/{n}"] = WebReply(200, body, "text/html; charset=utf-8")
    return server


def chain_script(body: dict[str, Any]) -> Reply:
    """Follow the address the newest page names; answer the code on the last page."""
    results = tool_results(body)
    if not results and (start := START.search(first_user_text(body))):
        return call("fetch_webpage", url=start.group(1))
    if results and (found := CODE.search(results[-1])):
        return say(f"FINAL ANSWER: {found.group(1)}")
    if results and (nxt := NEXT.search(results[-1])) and body.get("tools"):
        return call("fetch_webpage", url=nxt.group(1))
    return say("FINAL ANSWER: lost the chain")


def run_window(window: int, pages: int, max_tokens: int, site: LocalWebServer, work: Path) -> dict[str, Any]:
    """One task on a `window`-token server; the numbers of its run."""
    with ScriptedOpenAI(chain_script, context_limit=window, window_in="models") as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 MODEL_NAME="scripted", LLM_MAX_TOKENS=max_tokens, WORKSPACE_DIR=work,
                                 FETCH_ALLOWED_HOSTS=site.host_port, RAG_INDEX_DIR=work / "rag")
        pipe = Pipeline(settings, registry=build_registry(settings))
        sol = pipe.solve(f"Follow the ledger chain from {site.url('/chain/0')} and give the code.",
                         max_iterations=pages + 8)
        overflows = srv.overflows
    prompts = [e.prompt_tokens for e in sol.events if isinstance(e, ModelCall)]
    masked = [e for e in sol.events if isinstance(e, ContextMasked)]
    chosen = [e for e in sol.events if isinstance(e, ToolsetChosen)]
    fetched = sum(1 for e in sol.events if isinstance(e, ToolCall) and e.name == "fetch_webpage")
    return {"window": window, "right": sol.answer == "7314", "pages_read": fetched, "requests": len(prompts),
            "prompt_tokens": sum(prompts), "largest": max(prompts, default=0), "overflows": overflows,
            "masked": sum(e.masked for e in masked), "cut": sum(e.cut for e in masked),
            "toolset": chosen[-1].name if chosen else "all",
            "tools": len(chosen[-1].tools) if chosen else len(pipe.registry.tools)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=32)
    parser.add_argument("--windows", default="16384,32768")
    parser.add_argument("--max-tokens", type=int, default=1024, help="LLM_MAX_TOKENS (the reply's reserve)")
    args = parser.parse_args(argv)
    print(f"a chain of {args.pages} pages of ~9,000 characters, every active tool, LLM_MAX_TOKENS={args.max_tokens}")
    ok = True
    with chain_site(args.pages) as site, tempfile.TemporaryDirectory() as tmp:
        for window in (int(w) for w in args.windows.split(",")):
            row = run_window(window, args.pages, args.max_tokens, site, Path(tmp) / str(window))
            ok = ok and row["right"] and row["pages_read"] == args.pages and row["overflows"] == 0
            print(f"  window {row['window']:>6}: right={row['right']} pages read={row['pages_read']}/{args.pages} "
                  f"requests={row['requests']} tokens/task={row['prompt_tokens']:,} largest request="
                  f"{row['largest']:,} ({row['largest'] / window:.0%} of the window) overflows={row['overflows']} "
                  f"masked={row['masked']} cut={row['cut']} tools offered={row['tools']} ({row['toolset']})",
                  flush=True)
    print("goal (every window: the right answer, every page read, no overflow):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
