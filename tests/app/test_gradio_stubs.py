"""Gradio's import without its stub rewriting (`ui/gradio_stubs.py`): every component class skips it, and works."""

from __future__ import annotations

import subprocess
import sys

from tests.support.app_server import ROOT, base_env

COUNT_SKIPS = """
import ui.gradio_stubs as stubs
calls = []
stubs._no_stub = lambda *args, **kwargs: calls.append(args[1])  # what the hook installs, counted
import app  # the app's own import order
import gradio as gr
import gradio.component_meta as meta
assert meta.create_or_modify_pyi is stubs._no_stub
box = gr.Textbox(label="q")
assert callable(box.change) and callable(gr.Button().click)  # the classes still have their event listeners
print(len(calls), "Textbox" in calls, "Chatbot" in calls)
"""


def test_every_component_class_of_the_app_import_skips_the_stub_rewrite():
    done = subprocess.run([sys.executable, "-c", COUNT_SKIPS], cwd=ROOT, env=base_env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    count, textbox, chatbot = done.stdout.split()
    assert int(count) > 30 and textbox == chatbot == "True", done.stdout


def test_installed_after_gradio_it_patches_the_loaded_module(monkeypatch):
    import gradio.component_meta as meta

    import ui.gradio_stubs as stubs

    monkeypatch.setattr(meta, "create_or_modify_pyi", lambda *args, **kwargs: None)
    stubs.install()
    assert meta.create_or_modify_pyi is stubs._no_stub
