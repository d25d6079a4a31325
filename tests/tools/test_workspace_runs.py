"""A workspace per run, end to end through the pipeline (issue 13, item 4).

A nested zip bomb is stopped by the run's disk cap, nothing of a run is left after it ends, and
two concurrent runs (two sessions) cannot open each other's extracted files.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from agent.pipeline import Pipeline
from config import load_settings
from tests.support.fake_model import ScriptedChatModel, ai, tool_call
from tools.core.registry import ToolRegistry
from tools.core.workspace import Workspace
from tools.documents.files import make_file_tools


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _nested_bomb(path: Path, inner_mb: int = 8, fan_out: int = 5) -> Path:
    """A small zip of `fan_out` zips of `fan_out` zips of `inner_mb` MB of zeros (a 42.zip in miniature)."""
    inner = _zip_bytes({"zeros.txt": b"0" * (inner_mb * 2**20)})
    middle = _zip_bytes({f"inner{i}.zip": inner for i in range(fan_out)})
    path.write_bytes(_zip_bytes({f"middle{i}.zip": middle for i in range(fan_out)}))
    return path


def _pipeline(script, tmp_path: Path, **overrides):
    settings = load_settings(RAG_ENABLED=False, WORKSPACE_DIR=tmp_path / "workspaces", **overrides)
    tools = make_file_tools(settings)
    registry = ToolRegistry(tools=tools, tiers={"base": [t.name for t in tools]})
    model = ScriptedChatModel(script=script)
    return Pipeline(settings, llm=model, registry=registry), model


@pytest.fixture()
def disk_at_close(monkeypatch):
    """Bytes on disk in each workspace just before the run deletes it."""
    seen: list[int] = []
    close = Workspace.close

    def measuring(self: Workspace) -> None:
        if self.root.is_dir():
            seen.append(sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file()))
        close(self)

    monkeypatch.setattr(Workspace, "close", measuring)
    return seen


def test_a_nested_zip_bomb_is_stopped_by_the_run_cap_and_removed_at_the_end(tmp_path, disk_at_close):
    bomb = _nested_bomb(tmp_path / "bomb.zip")
    assert bomb.stat().st_size < 200_000  # 200 MB when fully unpacked
    pipe, model = _pipeline([tool_call("read_file", path=str(bomb)), ai("FINAL ANSWER: done")], tmp_path,
                            WORKSPACE_MAX_MB=20)
    solution = pipe.solve("What is in the archive?", file_path=str(bomb))
    assert solution.answer == "done"
    observation = next(m for m in model.calls[1] if isinstance(m, ToolMessage)).content
    assert "WORKSPACE_MAX_MB" in observation  # the cap said so, to the model
    assert disk_at_close and max(disk_at_close) <= 20 * 2**20  # never more than the cap on disk
    assert list((tmp_path / "workspaces").iterdir()) == []  # and nothing left after the run


def test_the_workspace_goes_when_a_streaming_caller_stops_listening(tmp_path):
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip_bytes({"note.txt": b"hello"}))
    pipe, _ = _pipeline([tool_call("read_file", path=str(archive)), ai("FINAL ANSWER: x")], tmp_path)
    events = pipe.stream("read it", file_path=str(archive))
    # The archive is extracted into the run's workspace (the run may already be over when we look, so the
    # tool's own reply is the witness that it existed).
    while (event := next(events)).to_dict()["kind"] != "tool_result":
        pass
    assert "extracted to " + str(tmp_path / "workspaces") in event.to_dict()["output"]
    events.close()  # then the caller leaves
    for _ in range(100):
        if not list((tmp_path / "workspaces").iterdir()):
            break
        threading.Event().wait(0.05)
    assert list((tmp_path / "workspaces").iterdir()) == []


def test_two_concurrent_runs_cannot_open_each_others_files(tmp_path):
    archive = tmp_path / "a-private.zip"
    archive.write_bytes(_zip_bytes({"secret.txt": b"SESSION A SECRET"}))
    extracted: dict[str, str] = {}
    a_found, b_done = threading.Event(), threading.Event()

    def a_waits_for_b(messages) -> AIMessage:
        text = next(m for m in messages if isinstance(m, ToolMessage)).content
        match = re.search(r"extracted to (\S+)", str(text))
        assert match, text
        extracted["dir"] = match.group(1)
        a_found.set()
        b_done.wait(30)  # run A (and its workspace) stays alive while B tries
        return ai("FINAL ANSWER: a")

    pipe_a, _ = _pipeline([tool_call("read_file", path=str(archive)), a_waits_for_b], tmp_path)
    other = tmp_path / "b-upload.txt"
    other.write_text("b's own file")
    pipe_b, model_b = _pipeline([lambda m: tool_call("read_file", path=extracted["dir"] + "/secret.txt"),
                                 ai("FINAL ANSWER: b")], tmp_path)
    runner = threading.Thread(target=lambda: pipe_a.solve("a?", file_path=str(archive)))
    runner.start()
    assert a_found.wait(30)
    assert Path(extracted["dir"], "secret.txt").is_file()  # it exists, in A's workspace
    pipe_b.solve("b?", file_path=str(other))
    b_done.set()
    runner.join(30)
    observation = str(next(m for m in model_b.calls[1] if isinstance(m, ToolMessage)).content)
    assert "SESSION A SECRET" not in observation and "outside this run's files" in observation
