"""RunFolder: the one owner of a run directory's run.json, checkpoint and cost; resume and lineage through it."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from agent.pipeline import Pipeline
from bench.batch_throughput import bench_script, make_bench_tool, make_samples, plain_mix
from config import load_settings
from evaluation.records import TaskRecord
from evaluation.run_folder import RUN_INFO_NAME, RunFolder
from evaluation.run_info import RunInfo
from evaluation.run_summary import RunSummary
from evaluation.runner import RunConfig, run_batch
from tests.support.openai_server import ScriptedOpenAI
from tools.core.registry import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "evaluation" / "run_folder.py"


def _production_modules() -> list[Path]:
    skip = {"tests", "bench", ".venv", "node_modules", ".git"}
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts) and p != OWNER]


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def test_only_the_run_folder_names_run_json_or_builds_a_checkpoint():
    offenders = []
    for path in _production_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and (node.value == "run.json" or node.value.endswith("/run.json")):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} names run.json")
            if isinstance(node, ast.Name) and node.id in ("RUN_INFO_NAME",):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} uses RUN_INFO_NAME")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Checkpoint" \
                    and path.name != "checkpoint.py":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} builds a Checkpoint")
    assert offenders == []


def test_the_grep_would_catch_a_second_writer():
    rogue = ast.parse('def f(out):\n    """Writes run.json."""\n    (out / "run.json").write_text("{}")\n')
    docs = _docstrings(rogue)
    named = [n for n in ast.walk(rogue) if isinstance(n, ast.Constant) and n.value == "run.json" and id(n) not in docs]
    assert len(named) == 1


def test_the_first_session_defines_run_json_and_later_ones_change_fields(tmp_path):
    folder = RunFolder(tmp_path / "run")
    assert folder.info() is None and folder.update(level=2) is None and folder.spent_usd() == 0.0
    first = folder.start(RunInfo(split="test", scorer="lenient"))
    again = folder.start(RunInfo(split="validation"))
    assert first.started_at and again == first
    folder.record_cost(spent_usd=0.25, cap_usd=1.0)
    folder.record_cost(spent_usd=0.5)
    info = folder.info()
    assert info is not None and (info.split, info.cost_usd, info.max_cost_usd) == ("test", 0.5, 1.0)
    assert not (folder.path / (RUN_INFO_NAME + ".tmp")).exists()  # written through a rename


def test_lineage_is_read_through_the_folder(tmp_path):
    parent = RunFolder(tmp_path / "first")
    parent.start(RunInfo())
    child = RunFolder(tmp_path / "second")
    child.start(RunInfo())
    assert child.parent() is None
    child.update(parent=str(parent.path))
    linked = child.parent()
    assert linked is not None and linked.path == parent.path and linked.info() == parent.info()


def test_the_summary_round_trips_and_a_damaged_one_is_none(tmp_path):
    folder = RunFolder(tmp_path)
    assert folder.summary() is None
    records = [TaskRecord(task_id="a", question="q", expected="1", predicted="1")]
    from evaluation.report import summarize

    summary = summarize(records, elapsed_s=1.0, meta={"scorer": "lenient", "remaining": 0})
    folder.write_outputs(records, summary)
    read = folder.summary()
    assert read == summary and read.scorer == "lenient" and read.remaining == 0
    assert json.loads((tmp_path / "summary.json").read_text())["meta"]["scorer"] == "lenient"
    (tmp_path / "summary.json").write_text("[1, 2]")
    assert folder.summary() is None
    (tmp_path / "summary.json").write_text("{broken")
    assert folder.summary() is None


def test_the_summary_names_its_scorer():
    assert RunSummary().scorer == "official" and RunSummary().verdicts == "Exact match"
    lenient = RunSummary(meta={"scorer": "lenient"})
    assert lenient.verdicts == "Correct (lenient scorer)" and lenient.scorer_label.startswith("lenient (")
    assert RunSummary(meta={"scorer": "mine"}).verdicts == "Correct (mine scorer (unknown))"
    server = RunSummary(meta={"verdicts": "scoring API (exact match)"})
    assert server.verdicts == "Correct per the server (scoring API (exact match))"


@pytest.mark.integration
def test_a_resume_goes_through_the_folder_its_scorer_cost_and_checkpoint(tmp_path):
    plans = plain_mix(3)
    out = tmp_path / "run"
    with ScriptedOpenAI(lambda body: bench_script(body, plans)) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", LLM_PRICE_INPUT_PER_MTOK=1000,
                                 LLM_PRICE_OUTPUT_PER_MTOK=1000)
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        samples = make_samples(plans, tmp_path / "files")
        config = RunConfig(concurrency=1, question_delay=0, output_dir=out)
        first = run_batch(samples[:2], pipeline, replace(config, scorer="lenient"), settings)
        asked = len(srv.requests)
        resumed = run_batch(samples, pipeline, replace(config, resume=True), settings)
        asked_again = len(srv.requests) - asked
    folder = RunFolder(out)
    info, summary = folder.info(), folder.summary()
    assert len(first.records) == 2 and len(resumed.records) == 3 and asked_again == asked // 2  # one task more
    assert info is not None and info.scorer == "lenient" and info.cost_usd == pytest.approx(3 * 2 * 18 / 1000)
    assert summary is not None and summary.scorer == "lenient" and summary == resumed.summary
    assert summary.meta["sessions"] == 2 and len(folder.load().sessions) == 2
