"""Where an image comes from: a local file, an http(s) image URL, or a page of a PDF rendered to pixels.

`open_image` is the one entry the image tools use. Every source ends as an RGB (or L) PIL image;
a corrupt or unsupported source becomes a ToolFailure that says what to try instead. Web images are
downloaded with `tools.web.download.download`, so the address checks (netguard, FETCH_ALLOWED_HOSTS),
BLOCKED_DOMAINS and the download size cap of fetch_webpage apply to them too.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from config import Settings
from tools.core.context import ToolContext
from tools.core.errors import ToolFailure
from tools.core.paths import resolve_media

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
PDF_RENDER_SIDE = 2048  # a rendered PDF page's longer side in pixels: small print stays legible
_PAGE_SUFFIX = re.compile(r"#page=(\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class SourceImage:
    """An image ready for OCR or the vision model, and a label saying where it came from."""

    image: Any
    """The PIL image (RGB or L)."""
    label: str
    """File name, URL or "report.pdf page 3" — for messages."""
    photo: bool = False
    """True for JPEG sources: sent on as JPEG, everything else as PNG."""


def split_page(path: str, page: int = 0) -> tuple[str, int]:
    """(`path` without a '#page=N' suffix, the page number: `page` if given, else N, else 0)."""
    raw = (path or "").strip()
    match = _PAGE_SUFFIX.search(raw)
    if match:
        raw = raw[:match.start()]
    return raw, page or (int(match.group(1)) if match else 0)


def open_image(path: str, ctx: ToolContext, settings: Settings, page: int = 0) -> SourceImage:
    """The image `path` names: a file, an http(s) URL (image or PDF), or page `page` of a PDF."""
    raw, page = split_page(path, page)
    if raw.lower().startswith(("http://", "https://")):
        return _from_url(raw, settings, page)
    if raw.lower().endswith(".pdf"):
        file = resolve_media(raw, ctx, (".pdf",), "a PDF", "there is no page to look at.")
        return render_pdf_page(file.read_bytes(), page or 1, file.name)
    file = resolve_media(raw, ctx, IMAGE_EXTENSIONS, "an image", "there is no image to read.")
    return SourceImage(decode_image(file.read_bytes(), file.name), file.name,
                       photo=file.suffix.lower() in (".jpg", ".jpeg"))


def _from_url(url: str, settings: Settings, page: int) -> SourceImage:
    from tools.search import blocked_prefixes
    from tools.web.download import MAX_DOWNLOAD_BYTES, check_url, download
    from tools.web.netguard import NetPolicy

    blocked = blocked_prefixes(settings.BLOCKED_DOMAINS)
    fetched = download(check_url(url, blocked), max(2.0, settings.TOOL_TIMEOUT - 2.0), blocked,
                       policy=NetPolicy.parse(settings.FETCH_ALLOWED_HOSTS), user_agent=settings.FETCH_USER_AGENT)
    name = Path(unquote(urlsplit(fetched.url).path)).name or fetched.url
    if fetched.truncated:
        raise ToolFailure(f"the image at {fetched.url} is larger than {MAX_DOWNLOAD_BYTES // 2**20} MB, the download "
                          "limit. Look for a smaller version of it (a thumbnail link on the page).", "size_limit")
    if not fetched.body:
        raise ToolFailure(f"{fetched.url} returned an empty body; there is no image to look at.", "empty_page")
    if fetched.body[:5] == b"%PDF-" or fetched.content_type == "application/pdf":
        return render_pdf_page(fetched.body, page or 1, name)
    if "html" in fetched.content_type or fetched.body.lstrip()[:1] == b"<":
        raise ToolFailure(f"{fetched.url} is a web page ({fetched.content_type or 'markup'}), not an image. Read it "
                          "with fetch_webpage: images on a page are listed as ![alt](image URL); pass that URL.",
                          "unsupported_type")
    photo = fetched.content_type == "image/jpeg" or fetched.body[:3] == b"\xff\xd8\xff"
    return SourceImage(decode_image(fetched.body, fetched.url), fetched.url, photo=photo)


def decode_image(data: bytes, label: str) -> Any:
    """`data` decoded by Pillow (first frame of an animation, transparency flattened onto white)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.seek(0)
            frame = img.convert("RGBA" if img.mode in ("RGBA", "LA", "P") else "RGB")
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, SyntaxError) as exc:
        raise ToolFailure(f"cannot decode {label} as an image ({type(exc).__name__}: {exc}). The file may be "
                          "corrupt or not really an image (SVG is not supported); try read_file to see what it "
                          "contains.", "corrupt_file") from exc
    if frame.mode == "RGBA":  # flatten transparency onto white, as a viewer shows it
        background = Image.new("RGB", frame.size, "white")
        background.paste(frame, mask=frame.getchannel("A"))
        frame = background
    return frame


def render_pdf_page(data: bytes, page: int, label: str) -> SourceImage:
    """Page `page` (1-based) of the PDF in `data` rendered with pdfium, its longer side PDF_RENDER_SIDE pixels."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise ToolFailure(f"{label} cannot be opened as a PDF ({exc}); it may be corrupt or encrypted. Try parse_pdf "
                          "for its text.", "corrupt_file") from None
    try:
        total = len(document)
        if not 1 <= page <= total:
            raise ToolFailure(f"{label} has {total} page{'s' if total != 1 else ''}; page {page} does not exist. "
                              f"Pass a page from 1 to {total}.", "bad_arguments")
        pdf_page = document[page - 1]
        width, height = pdf_page.get_size()
        scale = min(4.0, PDF_RENDER_SIDE / max(width, height, 1.0))
        image = pdf_page.render(scale=scale).to_pil().convert("RGB")
    finally:
        document.close()
    return SourceImage(image, f"{label} page {page}")


def image_data_url(source: SourceImage, max_side: int) -> str:
    """`source` (downscaled to `max_side`) as a base64 data URL: JPEG for photos, PNG otherwise."""
    image = source.image
    if max(image.size) > max_side:
        image = image.copy()
        image.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    if source.photo:
        image.convert("RGB").save(buf, format="JPEG", quality=90)
        mime = "image/jpeg"
    else:
        image.save(buf, format="PNG")
        mime = "image/png"
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"
