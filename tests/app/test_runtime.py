"""Preload runtime and the worker-thread iterator: waiting, failures, per-run isolation."""

from __future__ import annotations

import copy
import threading
import time

import pytest

from config import load_settings
from ui.background import BatchControl, Finished, iterate_in_thread
from ui.runtime import AgentUnavailable, Loaded, Runtime


def test_handlers_wait_for_the_preload_instead_of_failing():
    gate = threading.Event()

    def slow_loader(settings):
        gate.wait(5)
        return Loaded(pipeline="PIPE", registry="REG", components={"rag": "empty"})

    rt = Runtime(load_settings(), loader=slow_loader)
    assert rt.state == "idle" and "Starting" in rt.status_markdown()  # APP_PRELOAD is on: no "(APP_PRELOAD=false)"
    rt.start()
    assert rt.state == "loading" and "Loading" in rt.status_markdown()
    got = []
    waiter = threading.Thread(target=lambda: got.append(rt.pipeline()))
    waiter.start()
    time.sleep(0.1)
    assert not got  # still waiting
    gate.set()
    waiter.join(5)
    assert got == ["PIPE"] and rt.state == "ready" and rt.registry() == "REG"
    assert "Loaded without a model" in rt.status_markdown() and "not configured" in rt.status_markdown()


def test_without_preload_the_first_request_loads():
    rt = Runtime(load_settings(), loader=lambda s: Loaded(pipeline="P", registry="R"))
    assert rt.pipeline() == "P"


def test_a_failed_load_is_reported_not_raised_at_start():
    def broken(settings):
        raise ImportError("no module named agent.pipeline")

    rt = Runtime(load_settings(), loader=broken)
    rt.start()
    assert rt.wait(5) and rt.state == "failed"
    with pytest.raises(AgentUnavailable, match="agent.pipeline"):
        rt.pipeline()
    assert "Agent failed to load" in rt.status_markdown()


def test_real_components_without_llm(monkeypatch, tmp_path):
    rt = Runtime(load_settings())
    assert rt.wait(60)
    assert rt.state == "ready" and rt.registry().get("calculator") is not None
    assert "LLM**: not configured" in rt.status_markdown()


def test_iterate_in_thread_yields_progress_then_result():
    def run(report):
        for i in range(3):
            report(i)
        return "done"

    items = list(iterate_in_thread(run))
    assert items[:3] == [0, 1, 2] and isinstance(items[-1], Finished) and items[-1].value == "done"


def test_iterate_in_thread_reraises_in_the_consumer():
    def run(report):
        report("started")
        time.sleep(0.1)
        raise ValueError("bad folder")

    seen = []
    with pytest.raises(ValueError, match="bad folder"):
        for item in iterate_in_thread(run):
            seen.append(item)
    assert seen == ["started"]


def test_batch_control_copies_start_fresh():
    ctl = BatchControl()
    ctl.stop.set()
    ctl.output_dir = "/runs/x"
    twin = copy.deepcopy(ctl)
    assert not twin.stop.is_set() and twin.output_dir is None and twin.stop is not ctl.stop


def test_closing_the_batch_stream_stops_the_run(monkeypatch):
    from ui import batch

    started = threading.Event()

    def fake_runner(runtime, pipeline, req, control, output_dir, resume, progress, watch=None):
        started.set()
        while not control.stop.wait(0.01):
            yield batch.BatchView(status="running")

    monkeypatch.setattr(batch, "_runner_stream", fake_runner)
    rt = Runtime(load_settings(OPENAI_API_KEY="sk-x"), loader=lambda s: Loaded(pipeline="P", registry="R"))
    control = BatchControl()
    stream = batch.run_stream(rt, batch.make_request("Local GAIA folder", "validation", "/x", "All", 0, "", 1, 0,
                                                     False, ""), control)
    while not started.is_set():
        next(stream)
    stream.close()  # what gradio does when the browser tab goes away
    assert control.stop.is_set() and not control.running


def test_the_header_says_whether_openalex_has_a_key_and_what_unpaywall_needs():
    keyless = Runtime(load_settings(OPENALEX_API_KEY=None, UNPAYWALL_EMAIL=""),
                      loader=lambda s: Loaded(pipeline="P", registry="R"))
    keyless.pipeline()
    line = keyless.status()
    assert "⚠️ OpenAlex: no key: ~10 searches a day" in line.summary
    assert any("**OpenAlex**: no key: ~10 searches a day (set OPENALEX_API_KEY" in e for e in line.entries)
    assert any("**Unpaywall**: not used: set UNPAYWALL_EMAIL" in e for e in line.entries)
    secret = "oa-header-key-77"
    keyed = Runtime(load_settings(OPENALEX_API_KEY=secret, UNPAYWALL_EMAIL="me@example.org"),
                    loader=lambda s: Loaded(pipeline="P", registry="R"))
    keyed.pipeline()
    text = keyed.status_markdown()
    assert "✅ OpenAlex: key set" in text and secret not in text and "me@example.org" not in text
    assert "**Unpaywall**: email set" in text
