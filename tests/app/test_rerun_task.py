"""The Debug tab's re-run: the first divergence of two traces (pure), and a re-run through the real pipeline."""

from __future__ import annotations

from pathlib import Path

from agent.events import ToolResult
from config import load_settings
from tests.support.openai_server import ScriptedOpenAI, call, say, tool_results
from tests.support.web_server import LocalWebServer
from tests.support.web_server import Reply as WebReply
from ui.debug import write_trace
from ui.rerun import first_divergence, read_trace, rerun_events, side_by_side, trace_steps
from ui.runtime import Loaded, Runtime


def test_first_divergence():
    assert first_divergence([], []) is None
    assert first_divergence(["a", "b"], ["a", "b"]) is None
    assert first_divergence(["a", "b"], ["a", "c"]) == 1
    assert first_divergence(["x"], ["y", "z"]) == 0
    assert first_divergence(["a"], ["a", "b"]) == 1  # one ended early: it parts where the shorter stops
    assert first_divergence(["a", "b"], ["a"]) == 1


def test_side_by_side_highlights_only_the_first_differing_row():
    page = side_by_side(["a", "b", "c"], ["a", "B", "C"])
    assert page.count("class='diverges'") == 1 and "step 2" in page
    row = page.split("class='diverges'")[1].split("</tr>")[0]
    assert ">b<" in row and ">B<" in row
    assert "identical traces" in side_by_side(["<x>"], ["<x>"]) and "&lt;x&gt;" in side_by_side(["<x>"], ["<x>"])


def test_rerun_replays_the_first_runs_calls_and_the_traces_part_where_the_model_changed(tmp_path):
    from agent.pipeline import Pipeline

    with LocalWebServer({"/fact": WebReply(200, "<p>The answer is 17.</p>")}) as site:
        def model(body: dict) -> object:
            if not tool_results(body):
                return call("fetch_webpage", url=site.url("/fact"))
            return say("FINAL ANSWER: 17" if body.get("model") == "scripted" else "FINAL ANSWER: seventeen")

        with ScriptedOpenAI(model, models=("scripted", "other")) as server:
            settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                     RAG_INDEX_DIR=tmp_path / "rag", FETCH_ALLOWED_HOSTS=site.host_port,
                                     MODEL_NAME="scripted")
            pipeline = Pipeline(settings)
            runtime = Runtime(settings, loader=lambda s: Loaded(pipeline=pipeline, registry=pipeline.registry))
            runtime.start()
            first = pipeline.solve("What is the answer on the page?", use_rag=False)
            trace = read_trace(write_trace(first, tmp_path / "traces"))
            again = list(rerun_events(runtime, trace, "What is the answer on the page?", None, None, model="other",
                                      max_iterations=3, replay=True))
            assert len(site.requests) == 1  # the re-run's fetch came from the first run's record
    assert [e.replayed for e in again if isinstance(e, ToolResult)] == [True]
    a, b = trace_steps(trace), trace_steps(again)
    assert first_divergence(a, b) == 1 and a[0] == b[0] and b[1] == "answer: seventeen"


def test_only_a_trace_file_the_debug_tab_wrote_is_compared(tmp_path):
    from agent.events import Solution
    from ui.debug import traces_folder
    from ui.rerun_panel import trusted_trace

    written = write_trace(Solution(question="q", answer="a", source="agent"), traces_folder())
    assert trusted_trace(written) == str(Path(written).resolve())
    elsewhere = tmp_path / "trace-x.jsonl"
    elsewhere.write_text("{}", encoding="utf-8")
    assert trusted_trace(str(elsewhere)) is None and trusted_trace("/etc/passwd") is None
    assert trusted_trace(None) is None
