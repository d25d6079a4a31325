"""Images: `image_ocr` reads printed text with tesseract; `analyze_image` asks the vision model about an image.

Both accept png, jpg/jpeg, gif (first frame), webp, bmp and tiff; Pillow decodes them, so a corrupt
file becomes a clear message instead of a crash.

analyze_image design choice: when VISION_MODEL_NAME or the model endpoint is not configured, the
factory raises MissingDependency, so the tool is not offered at all and the registry (and
`python -m tools list`) says why; the model then relies on image_ocr.
"""

from __future__ import annotations

import base64
import io
import shutil
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.errors import ToolFailure
from tools.paths import resolve_media, resolve_path
from tools.errors import MissingDependency

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
OCR_MIN_SIDE = 1000  # tesseract reads small glyphs poorly: upscale images whose longer side is below this
VISION_MAX_SIDE = 2048  # downscale before upload: enough detail for the model, a bounded request size


def load_image(path: str, config: Any = None):
    """Open the image `path` names (first frame of an animation) as an RGB/L PIL image; ToolFailure if unreadable."""
    from PIL import Image, UnidentifiedImageError

    file = resolve_media(path, config, IMAGE_EXTENSIONS, "an image", "there is no image to read.")
    try:
        with Image.open(file) as img:
            img.seek(0)
            frame = img.convert("RGBA" if img.mode in ("RGBA", "LA", "P") else "RGB")
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, SyntaxError) as exc:
        raise ToolFailure(f"cannot decode {file.name} as an image ({type(exc).__name__}: {exc}). The file may be "
                          "corrupt or not really an image; try read_file to see what it contains.", "corrupt_file") from exc
    if frame.mode == "RGBA":  # flatten transparency onto white, as a viewer shows it
        background = Image.new("RGB", frame.size, "white")
        background.paste(frame, mask=frame.getchannel("A"))
        frame = background
    return frame


def prepare_for_ocr(image):
    """Grayscale and, for small images, upscale so glyphs are tall enough for tesseract."""
    from PIL import Image

    gray = image.convert("L")
    longest = max(gray.size)
    if longest < OCR_MIN_SIDE:
        factor = min(4.0, OCR_MIN_SIDE / longest)
        gray = gray.resize((round(gray.width * factor), round(gray.height * factor)), Image.Resampling.LANCZOS)
    return gray


def make_ocr_tools(settings: Settings) -> list[BaseTool]:
    """Build `image_ocr`; needs the tesseract binary (Debian: tesseract-ocr) and pytesseract."""
    binary = shutil.which("tesseract")
    if binary is None:
        raise MissingDependency(["image_ocr"], "the tesseract binary is not installed: "
                                               "apt-get install tesseract-ocr tesseract-ocr-eng")
    import pytesseract

    pytesseract.pytesseract.tesseract_cmd = binary
    ocr_timeout = max(5.0, settings.TOOL_TIMEOUT - 2)

    @tool
    def image_ocr(path: str, config: RunnableConfig) -> str:
        """Read the printed or typed text in an image (OCR) and return it as plain text.

        Use it for screenshots, scanned pages, tables and signs in png/jpg/gif/webp files. It reads
        text only; for what an image shows (objects, positions, colours, charts, chess boards) use
        analyze_image.

        Args:
            path: absolute path of the image file (an attachment path from the task).
        """
        image = prepare_for_ocr(load_image(path, config))
        try:
            text = pytesseract.image_to_string(image, timeout=ocr_timeout)
        except RuntimeError as exc:  # pytesseract raises RuntimeError on its own timeout
            raise ToolFailure(f"OCR took longer than {ocr_timeout:g}s; crop or shrink the image, or use "
                              "analyze_image.", "timeout") from exc
        except pytesseract.TesseractError as exc:
            raise ToolFailure(f"tesseract failed: {exc.message or exc}. Try analyze_image instead.") from exc
        lines = [ln.rstrip() for ln in text.splitlines()]
        cleaned = "\n".join(ln for i, ln in enumerate(lines) if ln or (i and lines[i - 1])).strip()
        if not cleaned:
            return (f"No text found in {Path(path).name} by OCR. If the image shows something other than printed "
                    "text, use analyze_image(path, question) to ask about its content.")
        return cleaned

    return [image_ocr]


def image_data_url(image, source: Path) -> str:
    """Encode `image` (downscaled to VISION_MAX_SIDE) as a base64 data URL: JPEG for photos, PNG otherwise."""
    if max(image.size) > VISION_MAX_SIDE:
        image = image.copy()
        image.thumbnail((VISION_MAX_SIDE, VISION_MAX_SIDE))
    buf = io.BytesIO()
    if source.suffix.lower() in (".jpg", ".jpeg"):
        image.convert("RGB").save(buf, format="JPEG", quality=90)
        mime = "image/jpeg"
    else:
        image.save(buf, format="PNG")
        mime = "image/png"
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def make_vision_tools(settings: Settings) -> list[BaseTool]:
    """Build `analyze_image`; needs VISION_MODEL_NAME and a model endpoint (OPENAI_API_KEY or OPENAI_BASE_URL)."""
    if settings.vision_model is None:
        raise MissingDependency(["analyze_image"], "vision is off (VISION_MODEL_NAME=none): images are read with "
                                                   "image_ocr; unset VISION_MODEL_NAME to use MODEL_NAME.")
    if not settings.llm_configured:
        raise MissingDependency(["analyze_image"], f"{settings.llm_missing_message()} (analyze_image asks "
                                                   "VISION_MODEL_NAME, default MODEL_NAME, on that endpoint)")
    import openai
    from langchain_core.messages import HumanMessage
    from langchain_openai import ChatOpenAI

    key = settings.OPENAI_API_KEY.get_secret_value() if settings.OPENAI_API_KEY else "not-needed"
    model = ChatOpenAI(model=settings.vision_model, api_key=key, base_url=settings.OPENAI_BASE_URL,
                       timeout=settings.LLM_TIMEOUT, max_retries=2, temperature=0)

    @tool
    def analyze_image(path: str, question: str, config: RunnableConfig) -> str:
        """Ask the vision model a question about an image and return its answer.

        Use it for what an image shows: objects, people, positions (e.g. a chess board), colours,
        charts, diagrams, handwriting. Ask one precise question. For exact printed text, image_ocr is
        more faithful.

        Args:
            path: absolute path of the image file (an attachment path from the task).
            question: what you want to know about the image, e.g. "List every number written on the board."
        """
        if not question.strip():
            raise ToolFailure("no question given: say what you want to know about the image.", "bad_arguments")
        source = resolve_path(path, config)
        url = image_data_url(load_image(str(source), config), source)
        message = HumanMessage(content=[{"type": "text", "text": question},
                                        {"type": "image_url", "image_url": {"url": url}}])
        try:
            reply = model.invoke([message])
        except openai.APITimeoutError as exc:
            raise ToolFailure(f"the vision model did not answer within LLM_TIMEOUT={settings.LLM_TIMEOUT:g}s; "
                              "try again or use image_ocr for text.", "timeout") from exc
        except openai.APIError as exc:
            raise ToolFailure(f"the vision model call failed ({type(exc).__name__}: {exc}). Check that "
                              f"VISION_MODEL_NAME={settings.vision_model} accepts images, or use image_ocr.",
                              "model_error") from exc
        content = reply.content
        text = content if isinstance(content, str) else " ".join(
            part.get("text", "") for part in content if isinstance(part, dict))
        return text.strip() or "The vision model returned an empty answer; rephrase the question or use image_ocr."

    return [analyze_image]
