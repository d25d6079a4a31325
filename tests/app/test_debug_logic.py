"""Debug tab logic: which file goes with a question, the load line, and stopping a stream mid-step."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from ui.background import AskControl, iterate_until_stopped
from ui.debug import attachment_for, attachment_line, loaded_message


@dataclass
class Task:
    task_id: str = "0123456789"
    file_name: str = ""
    file_path: Path | None = None
    attachment_error: str = ""

    @property
    def attachment_missing(self) -> bool:
        return self.file_path is not None and not self.file_path.is_file()


def test_the_picked_tasks_file_beats_a_stale_upload(tmp_path):
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF")
    task = Task(file_name="report.pdf", file_path=report)
    assert attachment_for("/tmp/hello.png", task) == (str(report), "the task's file")
    assert attachment_line("/tmp/hello.png", task) == (
        "📎 Attached: `report.pdf` (the task's file — the upload is ignored)"
    )
    # A task without a file is scored without one: the upload does not go with it either.
    assert attachment_for("/tmp/hello.png", Task()) == (None, "the task has no attachment")
    assert attachment_for("/tmp/hello.png", None) == ("/tmp/hello.png", "uploaded")
    assert attachment_line(None, None) == "📎 No attachment: no attachment."


def test_the_load_line_names_missing_and_refused_attachments(tmp_path):
    tasks = [Task(task_id="aaaaaaaa11", file_name="gone.xlsx", file_path=tmp_path / "gone.xlsx"),
             Task(task_id="bbbbbbbb22", attachment_error="../etc/passwd is outside the split folder"), Task()]
    text = loaded_message(tasks)
    assert text.startswith("Loaded 3 task(s).")
    assert "1 attachment(s) missing on disk: `gone.xlsx` (task aaaaaaaa)" in text
    assert "1 attachment(s) refused: ../etc/passwd is outside" in text
    assert "⚠️ missing on disk" in attachment_line(None, tasks[0])


def test_a_stop_ends_the_stream_without_waiting_for_the_step_in_flight():
    closed, answered = threading.Event(), threading.Event()

    def slow():
        try:
            yield 1
            answered.wait(60)  # a model call that is still running when Stop is pressed
            yield 2
        finally:
            closed.set()

    control = AskControl()
    stop = control.begin()
    got = []
    for item in iterate_until_stopped(slow, stop, poll_s=0.05):
        got.append(item)
        stop.set()
    assert got == [1] and not closed.is_set()  # the stream ended while the step was still in flight
    answered.set()  # the model call returns
    assert closed.wait(30)  # the abandoned generator is closed at its next step, not left running
    assert control.begin() is not stop and not control.stop.is_set()  # the next question starts fresh


def test_errors_of_the_stream_reach_the_consumer():
    def broken():
        yield 1
        raise ValueError("boom")

    items = []
    try:
        for item in iterate_until_stopped(broken, threading.Event(), poll_s=0.05):
            items.append(item)
    except ValueError as exc:
        assert str(exc) == "boom" and items == [1]
    else:
        raise AssertionError("the error was swallowed")
