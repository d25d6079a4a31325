"""The Strategy field of the Debug and Batch tabs: an untrusted pick, the run it chooses, the record it leaves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.pipeline import Pipeline
from config import load_settings
from rag.types import EmptyKnowledgeBase
from tests.support.fake_model import ScriptedChatModel, ai
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.team_script import LEDGER_TEXT
from tools.core.registry import ToolRegistry
from ui import batch
from ui.background import BatchControl
from ui.debug import ask_stream
from ui.runtime import Loaded, Runtime
from ui.strategy_field import STRATEGIES, run_strategy


def _runtime(script: list[Any], **overrides: Any) -> tuple[Runtime, Pipeline]:
    settings = load_settings(OPENAI_API_KEY="sk-test", RAG_ENABLED=False, **overrides)
    pipeline = Pipeline(settings, llm=ScriptedChatModel(script=list(script)), registry=ToolRegistry(),
                        knowledge_base=EmptyKnowledgeBase())
    runtime = Runtime(settings, loader=lambda s: Loaded(pipeline=pipeline, registry=pipeline.registry))
    runtime.start()
    return runtime, pipeline


def test_only_the_two_names_choose_a_strategy() -> None:
    assert STRATEGIES == ("react", "team")
    assert [run_strategy(v) for v in ("team", "react", "TEAM", "", None, 3)] == ["team", "react", None, None, None,
                                                                                  None]


def test_the_debug_field_runs_the_team_and_its_trace_shows_the_ledger() -> None:
    runtime, _ = _runtime([ai(LEDGER_TEXT), ai("FINAL ANSWER: 4")])
    *_, (messages, answer, _verdict, _trace) = ask_stream(runtime, "2+2?", strategy="team")
    assert answer == "4"
    titles = [str((m.metadata or {}).get("title", "")) for m in messages]
    assert "🗺️ Task ledger" in titles


def test_a_batch_run_records_the_forms_strategy(tmp_path: Path) -> None:
    runtime, _ = _runtime([ai(LEDGER_TEXT), ai("FINAL ANSWER: 4")], OUTPUT_DIR=tmp_path / "runs")
    req = batch.make_request("Local GAIA folder", "validation", str(make_gaia_folder(tmp_path / "gaia")), "All", 1,
                             "", 1, 0, False, "", "official", None, "team")
    *_, last = batch.run_stream(runtime, req, BatchControl())
    assert last.status.startswith("🏁"), last.status
    (run_json,) = Path(tmp_path / "runs").glob("*/run.json")
    assert json.loads(run_json.read_text())["strategy"] == "team"
    (record,) = [json.loads(line) for line in (run_json.parent / "details.jsonl").read_text().splitlines()]
    assert record["strategy"] == "team"
    assert record["predicted"] == "4"  # react would have answered with the first reply (the ledger text)
