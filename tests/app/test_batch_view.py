"""Batch tab views: validation before a run, failed API runs, run folders, times, labels and run lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.records import TaskRecord
from evaluation.run_folder import RunFolder
from evaluation.run_info import RunInfo
from evaluation.scoring_api import ApiRunResult
from ui.batch import DOWNLOADS, FOLDER_HELP, BatchView, FormError, _line_from_records, api_result_view, make_request
from ui.runs import list_runs, resumable_choices, run_label
from ui.text import shown


def _form(**changes):
    form = dict(source="Local GAIA folder", split="validation", data_dir="/x", level="All", max_samples=0,
                task_ids="", concurrency=1, question_delay=0, use_rag=True, username="")
    form.update(changes)
    return form


@pytest.mark.parametrize(("field", "value", "says"), [
    ("max_samples", -1, "Max samples must be at least 0"),
    ("question_delay", -3, "Delay between task starts must be at least 0"),
    ("concurrency", 0, "Concurrency must be at least 1"),
    ("max_samples", "two", "Max samples must be a number"),
])
def test_bad_form_values_are_named_and_clear_the_previous_results(field, value, says):
    with pytest.raises(FormError, match=says) as err:
        make_request(**_form(**{field: value}))
    status, rows, summary, chart, files = BatchView(status=f"❌ {err.value}").as_tuple()
    assert says in status and rows == [] and summary == "" and chart is None and files == []


def test_the_number_fields_leave_validation_to_the_handler():
    """A gradio `minimum` would refuse -1 with a bare toast before the handler could say what is wrong."""
    import gradio as gr

    from app import build_app
    from config import load_settings
    from ui.batch_tab import DELAY_LABEL
    from ui.runtime import Runtime

    settings = load_settings()
    demo = build_app(settings, Runtime(settings))
    by_id = {b.elem_id: b for b in demo.blocks.values() if getattr(b, "elem_id", None)}
    for elem_id in ("max-samples", "delay"):
        assert isinstance(by_id[elem_id], gr.Number) and by_id[elem_id].minimum is None, elem_id
    assert "only at concurrency 1" in DELAY_LABEL and by_id["delay"].label == DELAY_LABEL


def test_status_text_keeps_tag_like_parts_visible():
    status = BatchView(status="❌ " + FOLDER_HELP).as_tuple()[0]
    assert "2023/&lt;split&gt;/metadata.parquet" in status  # rendered as <split>, not eaten as a tag
    assert shown("a <b> & c") == "a &lt;b&gt; &amp; c"


def test_an_api_run_that_never_reached_the_api_is_a_failure_not_a_finish(tmp_path):
    result = ApiRunResult([], [], None, tmp_path / "api-run",
                          errors=["Could not fetch the questions: ConnectError: connection refused"])
    view = api_result_view(result)
    assert view.status.startswith("❌ The scoring API run failed: Could not fetch the questions")
    assert "🏁" not in view.status and "Submitted" not in view.status


def test_the_final_line_uses_the_runs_wall_time():
    records = [TaskRecord(task_id=f"t{i}", question="q", correct=True, latency_s=1.5) for i in range(3)]
    line = _line_from_records(records, 3, 21.0)
    assert "21s elapsed" in line and "4s" not in line


def _finished_run(root: Path, name: str, correct: int, scored: int) -> Path:
    out = root / name
    out.mkdir(parents=True)
    (out / "details.jsonl").write_text("")
    (out / "summary.json").write_text(json.dumps({"scored": scored, "correct": correct, "total": scored,
                                                  "level_metrics": {"1": {"scored": scored, "correct": correct}},
                                                  "meta": {"remaining": 0}}))
    return out


def test_run_lists_name_the_folder_with_accuracy_level_and_date(tmp_path):
    from config import load_settings

    settings = load_settings(OUTPUT_DIR=tmp_path)
    run = _finished_run(tmp_path, "validation-20261201-094000", 2, 3)
    label = run_label(run)
    assert label.startswith("validation-20261201-094000 · 20") and "2/3 correct (67%)" in label and "L1 2/3" in label
    assert list_runs(settings) == [(label, str(run))]
    assert resumable_choices(settings) == []  # finished: nothing left to resume
    RunFolder(run).start(RunInfo(data_dir="/data"))
    (run / "checkpoint.jsonl").write_text(json.dumps({"task_id": "a", "question": "q"}) + "\n")
    (run / "summary.json").write_text(json.dumps({"meta": {"remaining": 2}}))
    [(resume_label, path)] = resumable_choices(settings)
    assert path == str(run) and "1 done, 2 left" in resume_label and "/data" in resume_label


def test_the_submission_guide_is_among_the_downloads():
    assert "SUBMISSION_GUIDE.md" in DOWNLOADS


def test_a_batch_names_the_attachments_it_runs_without(tmp_path):
    from config import load_settings
    from tests.support.gaia_fixture import make_gaia_folder
    from ui.batch import missing_note

    root = make_gaia_folder(tmp_path / "gaia")
    settings = load_settings()
    req = make_request(**_form(data_dir=str(root)))
    assert missing_note(req, settings) == ""
    gone = next(p for p in (root / "2023" / "validation").iterdir() if p.suffix == ".xlsx")
    gone.unlink()
    note = missing_note(req, settings)
    assert "1 task(s) run without their attachment" in note and gone.name in note
