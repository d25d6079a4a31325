"""The Debug tab's re-run: the first divergence of two traces (pure), and a re-run through the real pipeline."""

from __future__ import annotations

from pathlib import Path

from agent.events import AnswerExtracted, ToolCall, ToolResult
from config import load_settings
from tests.support.openai_server import ScriptedOpenAI, call, say, tool_results
from tests.support.team_script import TeamScript, orchestrator_script
from tests.support.web_server import LocalWebServer
from tests.support.web_server import Reply as WebReply
from ui.debug import write_trace
from ui.rerun import RerunChoice, first_divergence, read_trace, rerun_events, side_by_side, trace_steps
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
            choice = RerunChoice(model="other", max_iterations=3, replay=True)
            again = list(rerun_events(runtime, trace, "What is the answer on the page?", None, None, choice))
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


def test_rerun_with_the_team_strategy_and_the_answer_check_on_replays_the_workers_call(tmp_path):
    from agent.events import AnswerCheck
    from agent.pipeline import Pipeline

    question = "What is the price on the page?"
    with LocalWebServer({"/price": WebReply(200, "<p>The price is $17.</p>")}) as site:
        def other(body: dict) -> object:  # the react loop, and the answer checker
            if str(body["messages"][0]["content"]).startswith("You check a final answer"):
                return say("FINAL ANSWER: 17")
            return say("FINAL ANSWER: $17") if tool_results(body) else call("fetch_webpage", url=site.url("/price"))

        orchestrator = orchestrator_script(("researcher", f"Read {site.url('/price')} and report the price."),
                                           answer=say("FINAL ANSWER: $17"))

        def researcher(body: dict) -> object:
            return say("The page says $17.") if tool_results(body) else call("fetch_webpage", url=site.url("/price"))

        script = TeamScript({"other": other, "orchestrator": orchestrator, "researcher": researcher})
        with ScriptedOpenAI(script) as server:
            settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                     RAG_INDEX_DIR=tmp_path / "rag", FETCH_ALLOWED_HOSTS=site.host_port,
                                     MODEL_NAME="scripted", ANSWER_CHECK="off")
            pipeline = Pipeline(settings)
            runtime = Runtime(settings, loader=lambda s: Loaded(pipeline=pipeline, registry=pipeline.registry))
            runtime.start()
            first = pipeline.solve(question, use_rag=False)
            assert first.answer == "$17" and "orchestrator" not in script.seen
            trace = read_trace(write_trace(first, tmp_path / "traces"))
            choice = RerunChoice(strategy="team", answer_check="on", replay=True)
            again = list(rerun_events(runtime, trace, question, None, None, choice))
            assert len(site.requests) == 1  # the researcher's fetch came from the first run's record
    assert {"orchestrator", "researcher"} <= set(script.seen)
    worker_results = [e for e in again if isinstance(e, ToolResult) and e.worker == "researcher"]
    assert [e.replayed for e in worker_results] == [True]
    check = next(e for e in again if isinstance(e, AnswerCheck))
    assert (check.before, check.after, check.accepted) == ("$17", "17", True)
    a, b = trace_steps(trace), trace_steps(again)
    assert a[-1] == "answer: $17" and b[-1] == "answer: 17"
    assert any(step.startswith("researcher: fetch_webpage(") for step in b)
    assert "answer check: '$17' -> '17' (accepted)" in b and first_divergence(a, b) == 0


def test_the_panels_values_become_a_typed_choice_and_bad_ones_keep_the_defaults():
    from ui.rerun_panel import rerun_choice

    settings = load_settings(MODEL_NAME="m", MAX_ITERATIONS=5, ANSWER_CHECK="on", AGENT_STRATEGY="react")
    choice = rerun_choice(" m2 ", "team", 7, "off", True, settings)
    assert choice == RerunChoice(model="m2", strategy="team", max_iterations=7, answer_check="off", replay=True)
    assert choice.updates(settings) == {"MODEL_NAME": "m2", "ANSWER_CHECK": "off"}
    odd = rerun_choice(None, "swarm", "x", "maybe", False, settings)
    assert odd == RerunChoice(model="", strategy=None, max_iterations=None, answer_check=None, replay=False)
    assert odd.updates(settings) == {} and rerun_choice("m", None, None, "on", 1, settings).updates(settings) == {}
    assert "team" in choice.summary(settings) and "answer check off" in choice.summary(settings)


def test_a_team_runs_steps_follow_the_orchestrators_order_whatever_order_the_workers_finished_in():
    from agent.events import Event, ModelCall

    def worker(delegation: str, value: str) -> list[Event]:
        events: list[Event] = [ToolCall(elapsed_s=0.2, call_id=f"c{value}", name="calculator",
                                        args={"expression": value}),
                               ToolResult(elapsed_s=0.3, call_id=f"c{value}", name="calculator", output=value,
                                          ok=True, duration_s=0.1)]
        for event in events:
            event.worker, event.delegation = "coder", delegation
        return events

    asked = ModelCall(elapsed_s=0.1, iteration=1, model="m", latency_s=0.1, prompt_tokens=1, completion_tokens=1,
                      content="", tool_calls=[{"id": d, "name": "delegate", "args": {"worker": "coder", "task": t}}
                                              for d, t in (("d1", "a"), ("d2", "b"))])
    calls = [ToolCall(elapsed_s=0.1, call_id=d, name="delegate", args={"worker": "coder", "task": t})
             for d, t in (("d1", "a"), ("d2", "b"))]
    answer = AnswerExtracted(elapsed_s=1.0, answer="3", raw="FINAL ANSWER: 3", method="final_answer_marker")
    in_order = trace_steps([asked, *calls, *worker("d1", "1"), *worker("d2", "2"), answer])
    swapped = trace_steps([asked, *reversed(calls), *worker("d2", "2"), *worker("d1", "1"), answer])
    assert in_order == swapped == [
        'delegate({"task": "a", "worker": "coder"})', 'coder: calculator({"expression": "1"})',
        'delegate({"task": "b", "worker": "coder"})', 'coder: calculator({"expression": "2"})', "answer: 3"]
