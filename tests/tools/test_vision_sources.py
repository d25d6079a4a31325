"""analyze_image on web images and PDF pages, through the run's model client; OCR fallback with vision off."""

from __future__ import annotations

import base64
import io
import re

import pytest

from config import load_settings
from tests.support.fixtures import make_pdf
from tests.support.heard import assert_heard
from tests.support.media import OCR_TEXT, make_text_image
from tests.support.openai_server import ScriptedOpenAI, say
from tests.support.web_server import LocalWebServer, Reply
from tools.core.context import ToolContext
from tools.core.executor import run_tool
from tools.media.vision import make_vision_tools
from tools.media.vision_model import standalone_client


def _settings(server=None, *web, **kw):
    base = {"OPENAI_API_KEY": "sk-test", "VISION_MODEL_NAME": "vision-x", "LLM_TIMEOUT": 5, "TOOL_TIMEOUT": 20}
    if server is not None:
        base["OPENAI_BASE_URL"] = server.url
    if web:
        base["FETCH_ALLOWED_HOSTS"] = ",".join(w.host_port for w in web)
    return load_settings(**{**base, **kw})


def _analyze(settings, path, question="What is shown?", config=None, **args):
    tool = make_vision_tools(settings)[0]
    return run_tool(tool, {"path": str(path), "question": question, **args}, settings, config=config)


def _sent_images(server):
    """The images (PIL) carried by the requests the scripted server received."""
    from PIL import Image

    images = []
    for request in server.requests:
        for part in request.body["messages"][0]["content"]:
            if part["type"] == "image_url":
                images.append(Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))))
    return images


def _ocr_words(image) -> str:
    import pytesseract

    return " ".join(re.findall(r"[A-Za-z0-9]+", pytesseract.image_to_string(image.convert("L"))))


def test_analyze_image_reads_a_web_image(tmp_path):
    png = make_text_image(tmp_path / "chart.png", "42").read_bytes()
    with LocalWebServer({"/img/chart.png": Reply(200, png, "image/png")}) as web, \
            ScriptedOpenAI([say("The chart shows 42.")]) as server:
        out = _analyze(_settings(server, web), web.url("/img/chart.png"), "Which number?")
    assert out.ok, out.output
    assert out.output == "The chart shows 42."
    assert web.hits("/img/chart.png") == 1
    body = server.requests[0].body
    assert body["model"] == "vision-x"
    assert {"type": "text", "text": "Which number?"} in body["messages"][0]["content"]
    [sent] = _sent_images(server)
    from PIL import Image

    assert sent.size == Image.open(io.BytesIO(png)).size


def test_web_image_obeys_the_address_rules(tmp_path):
    png = make_text_image(tmp_path / "a.png", "1").read_bytes()
    with LocalWebServer({"/a.png": Reply(200, png, "image/png")}) as web, ScriptedOpenAI([say("never")]) as server:
        out = _analyze(_settings(server), web.url("/a.png"))  # loopback not allowed: no FETCH_ALLOWED_HOSTS
    assert not out.ok and out.error_kind == "blocked"
    assert web.requests == [] and server.requests == []


def test_web_page_instead_of_an_image_points_at_fetch_webpage():
    page = "<html><body><img src='/x.png' alt='x'></body></html>"
    with LocalWebServer({"/page": Reply(200, page)}) as web, ScriptedOpenAI([say("never")]) as server:
        out = _analyze(_settings(server, web), web.url("/page"))
    assert not out.ok and out.error_kind == "unsupported_type"
    assert "fetch_webpage" in out.output and server.requests == []


@pytest.mark.parametrize("how", ["suffix", "argument"])
def test_analyze_image_looks_at_a_pdf_page(tmp_path, how):
    pdf = make_pdf(tmp_path)
    path, args = (f"{pdf}#page=2", {}) if how == "suffix" else (str(pdf), {"page": 2})
    with ScriptedOpenAI([say("Revenue grew by 20 percent.")]) as server:
        out = _analyze(_settings(server), path, "By how much did revenue grow?",
                       config={"configurable": {"attachments": [str(pdf)]}}, **args)
    assert out.ok and out.output == "Revenue grew by 20 percent."
    [sent] = _sent_images(server)
    assert max(sent.size) == 2048  # rendered large enough to read small print
    assert_heard(_ocr_words(sent), ("page", "20", "percent"), at_least=2)  # the right page, readable


def test_pdf_page_out_of_range_says_how_many_pages(tmp_path):
    pdf = make_pdf(tmp_path)
    with ScriptedOpenAI([say("never")]) as server:
        out = _analyze(_settings(server), f"{pdf}#page=9")
    assert not out.ok and "has 3 pages" in out.output and server.requests == []


def test_a_web_pdf_page_is_rendered_too(tmp_path):
    data = make_pdf(tmp_path).read_bytes()
    with LocalWebServer({"/r.pdf": Reply(200, data, "application/pdf")}) as web, \
            ScriptedOpenAI([say("fruit inventory")]) as server:
        out = _analyze(_settings(server, web), web.url("/r.pdf") + "#page=3")
    assert out.ok and out.output == "fruit inventory"
    assert_heard(_ocr_words(_sent_images(server)[0]), ("fruit", "inventory"), at_least=2)


class RecordingModel:
    """The run's model client as a tool sees it (ToolModel), over the real retrying call path."""

    def __init__(self, settings):
        self.inner = standalone_client(settings)
        self.calls: list[tuple[str, str, str | None]] = []

    def invoke(self, messages, *, purpose="tool", model_name=None, role="agent"):
        self.calls.append((role, purpose, model_name))
        return self.inner.invoke(messages, purpose=purpose, model_name=model_name, role=role)


def test_vision_goes_through_the_runs_model_client(tmp_path):
    image = make_text_image(tmp_path / "sign.png", "STOP")
    with ScriptedOpenAI([say("A stop sign.")]) as server:
        settings = _settings(server)
        client = RecordingModel(settings)
        config = ToolContext(attachments=(image,), model=client).to_config()
        out = _analyze(settings, image, config=config)
    assert out.ok and out.output == "A stop sign."
    assert client.calls == [("vision", "vision", "vision-x")]  # the vision role, named explicitly


def test_vision_off_answers_with_ocr_and_says_so(tmp_path):
    image = make_text_image(tmp_path / "invoice.png")
    settings = load_settings(OPENAI_API_KEY="sk-test", VISION_MODEL_NAME="none")
    out = _analyze(settings, image, "What is the total?")
    assert out.ok, out.output
    assert "VISION_MODEL_NAME=none" in out.output and "not an answer to the question" in out.output
    assert_heard(out.output.split("\n\n", 1)[1], OCR_TEXT.split(), at_least=5)
