"""Benchmark: what the pipeline costs on top of the HTTP calls it makes.

N tool-using questions (model asks for calculator, then answers) go through `Pipeline.solve()` and
`Pipeline.stream()` and, in the same process against the same zero-latency scripted server, through
a bare `openai` client loop that sends the same requests and runs the same calculator. Prints the
times, their ratio (goal ≤ 1.5×) and the pipeline's overhead per model step; a plain ChatOpenAI loop
(no graph, no trace) is shown as a reference for LangChain's own share.

    python bench/pipeline_overhead.py [N] [ROUNDS] [LATENCY_S]

LATENCY_S (default 0) adds a server-side delay per request, to see the overhead against a realistic model.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import openai  # noqa: E402
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402

from agent.events import AnswerExtracted  # noqa: E402
from agent.pipeline import Pipeline  # noqa: E402
from agent.prompts import SYSTEM_PROMPT, task_message  # noqa: E402
from config import load_settings  # noqa: E402
from models.client import build_chat_model  # noqa: E402
from rag.types import EmptyKnowledgeBase  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say  # noqa: E402
from tools.compute.calculator import evaluate, format_result, make_calculator_tools  # noqa: E402
from tools.core.registry import build_registry  # noqa: E402

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool


def script(body: dict[str, Any]) -> Reply:
    """Ask for the calculator once, then answer from its result."""
    results = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
    if not results:
        a = len(body["messages"])
        return call("calculator", expression=f"{a} * 37 + 5")
    return say(f"The tool says {results[-1]}.\nFINAL ANSWER: {results[-1]}")


def questions(n: int) -> list[str]:
    return [f"Question {i}: what is the product asked for, plus five?" for i in range(n)]


def run_pipeline(pipe: Pipeline, qs: list[str]) -> float:
    start = time.perf_counter()
    for q in qs:
        sol = pipe.solve(q)
        assert sol.answer and sol.error is None and sol.steps == 2, sol.error
    return time.perf_counter() - start


def run_stream(pipe: Pipeline, qs: list[str]) -> float:
    start = time.perf_counter()
    for q in qs:
        events = list(pipe.stream(q))
        last = events[-1] if events else None
        assert isinstance(last, AnswerExtracted) and last.answer, last
    return time.perf_counter() - start


def run_bare(client: openai.OpenAI, model: str, tools: list[Any], qs: list[str]) -> float:
    start = time.perf_counter()
    for q in qs:
        # plain JSON dicts, as the wire carries them (the SDK's TypedDicts would add nothing to a benchmark)
        messages: list[Any] = [{"role": "system", "content": SYSTEM_PROMPT},
                                {"role": "user", "content": task_message(q)}]
        while True:
            reply = client.chat.completions.create(model=model, messages=messages, tools=tools, temperature=0.0)
            msg = reply.choices[0].message
            if not msg.tool_calls:
                assert "FINAL ANSWER" in (msg.content or "")
                break
            messages.append(msg.model_dump(exclude_none=True))
            for tc in msg.tool_calls:
                assert tc.type == "function", tc
                args = json.loads(tc.function.arguments)
                messages.append({"role": "tool", "tool_call_id": tc.id,
                                 "content": format_result(evaluate(args["expression"]))})
    return time.perf_counter() - start


def run_langchain(model: Runnable[LanguageModelInput, AIMessage], tool: BaseTool, qs: list[str]) -> float:
    """The same conversation through ChatOpenAI alone (no graph, no events): how much is LangChain's share."""
    start = time.perf_counter()
    for q in qs:
        messages = [SystemMessage(content=SYSTEM_PROMPT), HumanMessage(content=task_message(q))]
        while True:
            reply = model.invoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                break
            for tc in reply.tool_calls:
                messages.append(ToolMessage(content=tool.invoke(tc["args"]), tool_call_id=tc["id"]))
    return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    latency = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    with ScriptedOpenAI(script, latency=latency) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-bench", RAG_ENABLED=False,
                                 MODEL_NAME="bench-model", LLM_TIMEOUT=30)
        registry = build_registry(settings, [("base", make_calculator_tools)])
        pipe = Pipeline(settings, registry=registry, knowledge_base=EmptyKnowledgeBase())
        pipe.preload()
        client = openai.OpenAI(base_url=srv.url, api_key="sk-bench", max_retries=0, timeout=30)
        tools = [convert_to_openai_tool(t) for t in registry.tools]
        qs = questions(n)
        run_pipeline(pipe, qs[:3])  # warm-up: imports, connection pools, caches
        run_bare(client, "bench-model", tools, qs[:3])
        run_stream(pipe, qs[:3])
        lc_model = build_chat_model(settings).bind_tools(registry.tools)
        run_langchain(lc_model, registry.tools[0], qs[:3])
        piped, streamed, bare, lc = [], [], [], []
        for _ in range(rounds):  # interleaved so machine noise hits all alike
            piped.append(run_pipeline(pipe, qs))
            bare.append(run_bare(client, "bench-model", tools, qs))
            streamed.append(run_stream(pipe, qs))
            lc.append(run_langchain(lc_model, registry.tools[0], qs))
    steps = 2 * n
    print(f"questions: {n} × {rounds} rounds, 2 model calls + 1 tool call each, server latency {latency * 1000:g} ms")
    # The fastest round is the least disturbed by other processes; the median shows the typical case.
    for stat_name, stat in (("best round", min), ("median round", statistics.median)):
        b = stat(bare)
        print(f"[{stat_name}] bare openai loop: {b / n * 1000:.2f} ms per question")
        for label, runs in (("ChatOpenAI loop (reference)", lc), ("pipeline solve()", piped),
                            ("pipeline stream()", streamed)):
            t = stat(runs)
            print(f"[{stat_name}] {label}: {t / n * 1000:.2f} ms per question; ratio {t / b:.2f}x (goal <= 1.5x); "
                  f"overhead {(t - b) / steps * 1000:.2f} ms per model step")

if __name__ == "__main__":
    main()
