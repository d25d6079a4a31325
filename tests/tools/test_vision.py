"""image_ocr on real images read by the real tesseract; analyze_image against a scripted OpenAI server."""

from __future__ import annotations

import base64
import io
import os

import pytest

from config import load_settings
from tests.support.heard import assert_heard
from tests.support.media import OCR_TEXT, make_blank_image, make_corrupt, make_empty, make_text_image
from tests.support.openai_server import ScriptedOpenAI, fail, say
from tools.core.errors import MissingDependency
from tools.core.executor import run_tool
from tools.core.registry import build_registry
from tools.media.vision import make_ocr_tools, make_vision_tools

VISION_FACTORIES = [("extension", make_ocr_tools), ("extension", make_vision_tools)]


def _ocr(path, **kw):
    settings = load_settings(**kw)
    return run_tool(make_ocr_tools(settings)[0], {"path": str(path)}, settings,
                    config={"configurable": {"attachments": [str(path)]}})


@pytest.mark.integration
@pytest.mark.parametrize("ext", ["png", "jpg", "jpeg", "gif", "webp"])
def test_ocr_reads_text_in_every_image_format(tmp_path, ext):
    out = _ocr(make_text_image(tmp_path / f"invoice.{ext}"))
    assert out.ok, out.output
    assert_heard(out.output, OCR_TEXT.split(), at_least=5)  # tesseract's kernels differ between CPUs


@pytest.mark.integration
def test_ocr_upscales_tiny_images(tmp_path):
    out = _ocr(make_text_image(tmp_path / "tiny.png", "TOTAL 86", scale=0.2))
    assert "86" in out.output and "TOTAL" in out.output.upper()


@pytest.mark.integration
def test_ocr_finds_an_attachment_by_its_bare_name(tmp_path):
    image = make_text_image(tmp_path / "sign.png", "OPEN 24 HOURS")
    settings = load_settings()
    out = run_tool(make_ocr_tools(settings)[0], {"path": "sign.png"}, settings,
                   config={"configurable": {"attachments": [str(image)]}})
    assert_heard(out.output, ("OPEN", "24", "HOURS"), at_least=2)


@pytest.mark.integration
def test_tesseract_runs_with_one_thread_and_no_secret_and_still_reads(tmp_path, monkeypatch):
    """OpenMP's spinning threads tripled OCR's CPU on 2 cores; the real tesseract runs behind a recorder."""
    import shutil

    real, record = shutil.which("tesseract"), tmp_path / "env.txt"
    wrapper = tmp_path / "bin" / "tesseract"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "limit=$OMP_THREAD_LIMIT key=$OPENAI_API_KEY" >> {record}\n'
                       f'exec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    out = _ocr(make_text_image(tmp_path / "sign.png", "OPEN 24 HOURS"))
    assert_heard(out.output, ("OPEN", "24", "HOURS"), at_least=2)
    assert record.read_text().split() == ["limit=1", "key="]


def test_ocr_without_text_suggests_analyze_image(tmp_path):
    out = _ocr(make_blank_image(tmp_path / "blank.png"))
    assert out.ok and "No text found" in out.output and "analyze_image" in out.output


@pytest.mark.parametrize("ext", ["png", "jpg", "gif", "webp"])
def test_ocr_on_corrupt_image_is_a_clear_message(tmp_path, ext):
    out = _ocr(make_corrupt(tmp_path / f"broken.{ext}"))
    assert not out.ok and out.error_kind == "corrupt_file"
    assert "cannot decode broken." in out.output


def test_ocr_on_empty_image(tmp_path):
    out = _ocr(make_empty(tmp_path / "empty.png"))
    assert not out.ok and "empty" in out.output


def test_ocr_on_missing_file_and_wrong_type(tmp_path):
    missing = _ocr(tmp_path / "nope.png")
    assert not missing.ok and "not found" in missing.output
    (tmp_path / "notes.txt").write_text("hello")
    wrong = _ocr(tmp_path / "notes.txt")
    assert not wrong.ok and "not an image" in wrong.output and "read_file" in wrong.output


def test_ocr_factory_requires_tesseract(monkeypatch):
    monkeypatch.setattr("tools.media.vision.shutil.which", lambda name: None)
    with pytest.raises(MissingDependency) as err:
        make_ocr_tools(load_settings())
    assert err.value.tools == ["image_ocr"] and "apt-get install tesseract-ocr" in err.value.reason


def test_vision_off_keeps_analyze_image_as_an_ocr_fallback(monkeypatch):
    registry = build_registry(load_settings(OPENAI_API_KEY="sk-test", VISION_MODEL_NAME="none"),
                              factories=VISION_FACTORIES)
    assert registry.names == ["image_ocr", "analyze_image"]
    monkeypatch.setattr("tools.media.vision.shutil.which", lambda name: None)
    registry = build_registry(load_settings(OPENAI_API_KEY="sk-test", VISION_MODEL_NAME="none"),
                              factories=VISION_FACTORIES)
    assert registry.names == [] and "VISION_MODEL_NAME=none" in registry.missing["analyze_image"]


def test_vision_defaults_to_the_agent_model():
    registry = build_registry(load_settings(OPENAI_API_KEY="sk-test"), factories=VISION_FACTORIES)
    assert registry.names == ["image_ocr", "analyze_image"]


def test_vision_is_missing_without_an_endpoint():
    with pytest.raises(MissingDependency) as err:
        make_vision_tools(load_settings(VISION_MODEL_NAME="gpt-4o-mini"))
    assert "OPENAI_API_KEY" in err.value.reason


def _vision(server, path, question="What number is written?", **kw):
    settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", VISION_MODEL_NAME="vision-x",
                             LLM_TIMEOUT=5, **kw)
    return run_tool(make_vision_tools(settings)[0], {"path": str(path), "question": question}, settings,
                    config={"configurable": {"attachments": [str(path)]}})


@pytest.mark.parametrize("ext,mime", [("png", "image/png"), ("jpg", "image/jpeg"), ("gif", "image/png"),
                                      ("webp", "image/png")])
def test_analyze_image_sends_the_image_as_a_data_url(tmp_path, ext, mime):
    from PIL import Image

    image = make_text_image(tmp_path / f"board.{ext}", "4721")
    with ScriptedOpenAI([say("The number is 4721.")]) as server:
        out = _vision(server, image)
    assert out.ok and out.output == "The number is 4721."
    body = server.requests[0].body
    assert body["model"] == "vision-x"
    parts = body["messages"][0]["content"]
    assert {"type": "text", "text": "What number is written?"} in parts
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert url.startswith(f"data:{mime};base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert sent.size == Image.open(image).size


def test_analyze_image_downscales_huge_images(tmp_path):
    from PIL import Image

    big = tmp_path / "big.png"
    Image.new("RGB", (5000, 1000), "white").save(big)
    with ScriptedOpenAI([say("white")]) as server:
        _vision(server, big, "colour?")
    url = next(p["image_url"]["url"] for p in server.requests[0].body["messages"][0]["content"]
               if p["type"] == "image_url")
    assert max(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size) == 2048


def test_analyze_image_reports_model_errors(tmp_path):
    image = make_text_image(tmp_path / "x.png", "1")
    with ScriptedOpenAI([fail(400, content="model does not support images")] * 3) as server:
        out = _vision(server, image)
    assert not out.ok and out.error_kind == "model_error"
    assert "does not support images" in out.output and "image_ocr" in out.output


def test_analyze_image_rejects_corrupt_files_before_calling_the_model(tmp_path):
    with ScriptedOpenAI([say("never")]) as server:
        out = _vision(server, make_corrupt(tmp_path / "bad.jpg"))
    assert not out.ok and "cannot decode" in out.output
    assert server.requests == []
