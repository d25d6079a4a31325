"""Images: `image_ocr` reads printed text with tesseract; `analyze_image` asks the vision model about an image.

Both take the same sources (`tools.media.images.open_image`): an image file (png, jpg/jpeg, gif first frame,
webp, bmp, tiff), an http(s) image URL (downloaded under fetch_webpage's address and size rules), or a
PDF page rendered to pixels ("/x/report.pdf#page=3"). Pillow decodes them, so a corrupt file becomes a
clear message instead of a crash.

analyze_image asks VISION_MODEL_NAME (default MODEL_NAME) through the run's model client. With vision
off (VISION_MODEL_NAME=none) it stays offered and answers with the image's OCR text and a note saying
so, because the URL and PDF-page sources have no other way in; without tesseract either, it is missing.
"""

from __future__ import annotations

import shutil
from typing import Any

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure
from tools.media.images import open_image
from tools.media.vision_model import ask_vision, run_model, standalone_client

OCR_MIN_SIDE = 1000  # tesseract reads small glyphs poorly: upscale images whose longer side is below this
OCR_ENV = {"OMP_THREAD_LIMIT": "1", "LC_ALL": "C"}
"""All the environment tesseract gets: its data path is compiled in, and the app's secrets stay out of a parser of
untrusted images. One thread: OpenMP's threads spin while they wait, and on 2 cores one page took 2.7 s and 4.2 s of
CPU with them, 1.1 s and 1.1 s without (the maintainers' advice, tesseract-ocr/tesseract#2611)."""


def prepare_for_ocr(image: Any) -> Any:
    """Grayscale and, for small images, upscale so glyphs are tall enough for tesseract."""
    from PIL import Image

    gray = image.convert("L")
    longest = max(gray.size)
    if longest < OCR_MIN_SIDE:
        factor = min(4.0, OCR_MIN_SIDE / longest)
        gray = gray.resize((round(gray.width * factor), round(gray.height * factor)), Image.Resampling.LANCZOS)
    return gray


def ocr_image(image: Any, timeout: float) -> str:
    """The printed text tesseract reads in `image` (blank lines collapsed); "" when there is none."""
    import pytesseract

    binary = shutil.which("tesseract")
    if binary is None:
        raise ToolFailure("OCR needs tesseract, which is not installed here; use analyze_image instead.",
                          "missing_dependency")
    pytesseract.pytesseract.tesseract_cmd = binary
    pytesseract.pytesseract.environ = OCR_ENV  # the environment pytesseract starts tesseract with
    try:
        text = pytesseract.image_to_string(prepare_for_ocr(image), timeout=timeout)
    except RuntimeError as exc:  # pytesseract raises RuntimeError on its own timeout
        raise ToolFailure(f"OCR took longer than {timeout:g}s; crop or shrink the image, or use analyze_image.",
                          "timeout") from exc
    except pytesseract.TesseractError as exc:
        raise ToolFailure(f"tesseract failed: {exc.message or exc}. Try analyze_image instead.") from exc
    lines = [ln.rstrip() for ln in text.splitlines()]
    return "\n".join(ln for i, ln in enumerate(lines) if ln or (i and lines[i - 1])).strip()


def make_ocr_tools(settings: Settings) -> list[BaseTool]:
    """Build `image_ocr`; needs the tesseract binary (Debian: tesseract-ocr) and pytesseract."""
    if shutil.which("tesseract") is None:
        raise MissingDependency(["image_ocr"], "the tesseract binary is not installed: "
                                               "apt-get install tesseract-ocr tesseract-ocr-eng")
    import pytesseract  # noqa: F401 - fail here (registry says why), not at the first call

    ocr_timeout = max(5.0, settings.TOOL_TIMEOUT - 2)

    @context_tool
    def image_ocr(_ctx: ToolContext, path: str) -> str:
        """Read the printed or typed text in an image (OCR) and return it as plain text.

        Use it for screenshots, scanned pages, tables and signs in png/jpg/gif/webp files. It reads
        text only; for what an image shows (objects, positions, colours, charts, chess boards) use
        analyze_image.

        Args:
            path: the image: an absolute file path (an attachment path from the task), an http(s) image URL,
                or a PDF page as "/path/report.pdf#page=3".
        """
        source = open_image(path, _ctx, settings)
        cleaned = ocr_image(source.image, ocr_timeout)
        if not cleaned:
            return (f"No text found in {source.label} by OCR. If the image shows something other than printed "
                    "text, use analyze_image(path, question) to ask about its content.")
        return cleaned

    return [image_ocr]


def make_vision_tools(settings: Settings) -> list[BaseTool]:
    """Build `analyze_image`: the vision model (VISION_MODEL_NAME, default MODEL_NAME) or, with vision off, OCR."""
    vision = settings.vision_model
    if vision is not None and not settings.llm_configured:
        raise MissingDependency(["analyze_image"], f"{settings.llm_missing_message()} (analyze_image asks "
                                                   "VISION_MODEL_NAME, default MODEL_NAME, on that endpoint)")
    tesseract = shutil.which("tesseract")
    if vision is None and tesseract is None:
        raise MissingDependency(["analyze_image"], "vision is off (VISION_MODEL_NAME=none) and the OCR fallback "
                                                   "needs tesseract: apt-get install tesseract-ocr tesseract-ocr-eng")
    fallback = standalone_client(settings)
    ocr_timeout = max(5.0, settings.TOOL_TIMEOUT - 2)

    @context_tool
    def analyze_image(_ctx: ToolContext, path: str, question: str, page: int = 0) -> str:
        """Ask the vision model a question about an image (a file, a web image, or a PDF page) and return its answer.

        Use it for what an image shows: objects, people, positions (e.g. a chess board), colours,
        charts, maps, diagrams, handwriting, a figure in a PDF. Ask one precise question. For exact
        printed text, image_ocr is more faithful.

        Args:
            path: the image: an absolute file path (an attachment path from the task), an http(s) image URL
                (e.g. one listed as ![alt](URL) in a fetched page), or a PDF — a file path or URL, with the page
                as "/path/report.pdf#page=3" or in `page`.
            question: what you want to know about the image, e.g. "List every number written on the board."
            page: for a PDF, the page (1-based) to render and look at; 0 means '#page=N' in path, else page 1.
        """
        if not question.strip():
            raise ToolFailure("no question given: say what you want to know about the image.", "bad_arguments")
        source = open_image(path, _ctx, settings, page)
        if vision is None:
            text = ocr_image(source.image, ocr_timeout)
            note = ("Vision is off here (VISION_MODEL_NAME=none), so the image was not looked at: this is the text "
                    f"OCR read in {source.label}, not an answer to the question.")
            return f"{note}\n\n{text}" if text else f"{note} OCR found no text in it."
        answer = ask_vision(run_model(_ctx, fallback), settings, question, [source])
        return answer or "The vision model returned an empty answer; rephrase the question or use image_ocr."

    return [analyze_image]
