"""What a file will cost to read, checked before any parser sees it (for the app's visitor endpoints).

A small file can expand without bound: a 442-byte PDF with one 14,400-pt page renders to gigapixels, a
2.7 MB FLAC of silence decodes to hours of samples, a 1 MB docx or xlsx holds hundreds of MB of XML, a
47 KB parquet holds millions of rows. Each check reads only headers and directories (page sizes,
image dimensions, the container's duration, a zip's central directory, parquet metadata, line counts)
and says why the file is refused, in words a visitor can act on. The budgeted worker
(`visitors/job_worker.py`) runs these before a preview or a task load; its rlimits are the backstop for
whatever a header does not tell.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from config import Settings

PDF_RENDER_SCALE = 2  # tools/documents/pdf.py renders text-less pages at scale 2 for OCR
OFFICE_AND_ARCHIVES = (".docx", ".xlsx", ".xlsm", ".pptx", ".zip")
IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
MEDIA = (".mp3", ".wav", ".m4a", ".flac", ".ogg", ".mp4", ".mov", ".webm", ".mkv", ".avi", ".m4v")
MAX_ZIP_ENTRIES = 10_000


@dataclass(frozen=True)
class Caps:
    """What one visitor job may expand a file to."""

    pixels: int
    media_seconds: float
    unpacked_bytes: int
    split_rows: int

    @classmethod
    def of(cls, settings: Settings) -> Caps:
        """From the VISITOR_MAX_* settings."""
        return cls(settings.VISITOR_MAX_PIXELS, settings.VISITOR_MAX_MEDIA_MINUTES * 60,
                   settings.VISITOR_MAX_UNPACKED_MB * 2**20, settings.VISITOR_MAX_SPLIT_ROWS)


DOCUMENT_CAPS = Caps(pixels=40_000_000, media_seconds=20 * 60, unpacked_bytes=64 * 2**20, split_rows=2000)
"""What a run's own document readers (parse_pdf, read_file on docx/pptx) open: the visitor defaults' figures."""


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MB"


def _pdf(path: Path | bytes, caps: Caps) -> str | None:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path if isinstance(path, bytes) else str(path))
    try:
        for index in range(len(document)):
            width, height = document.get_page_size(index)
            pixels = width * height * PDF_RENDER_SCALE**2
            if pixels > caps.pixels:
                return (f"page {index + 1} is {width:,.0f} x {height:,.0f} pt: "
                        f"rendered it would be {pixels / 1e6:,.0f} megapixels "
                        f"(the limit is {caps.pixels / 1e6:,.0f}, VISITOR_MAX_PIXELS)")
    finally:
        document.close()
    return None


def _image(path: Path, caps: Caps) -> str | None:
    from PIL import Image

    with Image.open(path) as image:  # reads the header only
        width, height = image.size
        frames = getattr(image, "n_frames", 1) if image.format == "GIF" else 1
    if width * height * frames > caps.pixels:
        return (f"it is {width:,} x {height:,} pixels{f' x {frames} frames' if frames > 1 else ''} (the limit is "
                f"{caps.pixels / 1e6:,.0f} megapixels, VISITOR_MAX_PIXELS)")
    return None


def _media(path: Path, caps: Caps) -> str | None:
    import av

    with av.open(str(path)) as container:  # the container's header: its duration, nothing decoded
        seconds = container.duration / 1_000_000 if container.duration else None
        if seconds is None:
            spans = [float(s.duration * s.time_base) for s in container.streams
                     if s.duration is not None and s.time_base is not None]
            seconds = max(spans, default=None)
    if seconds is None:
        return "its duration is not stated in its header, so it cannot be checked before decoding"
    if seconds > caps.media_seconds:
        return (f"it lasts {seconds / 60:,.0f} minutes (the limit is {caps.media_seconds / 60:,.0f}, "
                "VISITOR_MAX_MEDIA_MINUTES)")
    return None


def _zip(path: Path, caps: Caps) -> str | None:
    with zipfile.ZipFile(path) as archive:  # the central directory: declared sizes bound what extraction writes
        entries = archive.infolist()
    if len(entries) > MAX_ZIP_ENTRIES:
        return f"it holds {len(entries):,} parts (the limit is {MAX_ZIP_ENTRIES:,})"
    total = sum(e.file_size for e in entries)
    biggest = max(entries, key=lambda e: e.file_size, default=None)
    if total > caps.unpacked_bytes and biggest is not None:
        return (f"unpacked it is {_mb(total)} ({biggest.filename}: {_mb(biggest.file_size)}); the limit is "
                f"{_mb(caps.unpacked_bytes)} (VISITOR_MAX_UNPACKED_MB)")
    return None


def _checks(path: Path) -> list[Callable[[Path, Caps], str | None]]:
    """The checks for what `path` is by CONTENT (magic bytes, zip structure) and by its name: a rename fools neither."""
    from tools.documents.filetypes import classify

    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return []
    kind, _ = classify(path, head)
    by_content = {"pdf": _pdf, "image": _image, "audio": _media, "video": _media, "docx": _zip, "pptx": _zip,
                  "excel": _zip, "zip": _zip}.get(kind)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        by_content = _zip  # any zip (an xlsx, a docx bomb renamed .txt): its central directory bounds it
    elif b"%PDF-" in head[:1024]:
        by_content = _pdf  # PDF readers find the header anywhere in the first KB
    suffix = path.suffix.lower()
    by_name = (_pdf if suffix == ".pdf" else _image if suffix in IMAGES else _media if suffix in MEDIA
               else _zip if suffix in OFFICE_AND_ARCHIVES else None)
    return list(dict.fromkeys(c for c in (by_content, by_name) if c is not None))


def file_problem(path: Path, caps: Caps) -> str | None:
    """Why reading `path` would expand past `caps` (None when it would not), judged by content and by name.

    A corrupt header is the parser's to report.
    """
    for check in _checks(path):
        try:
            problem = check(path, caps)
        except (OSError, ValueError, zipfile.BadZipFile, EOFError):
            continue
        except Exception as exc:  # noqa: BLE001 - a header that cannot be read: the parser says how it is broken
            if type(exc).__name__ in ("PdfiumError", "UnidentifiedImageError", "InvalidDataError", "FFmpegError"):
                continue
            raise
        if problem is not None:
            return problem
    return None


def document_problem(source: Path | bytes, caps: Caps = DOCUMENT_CAPS) -> str | None:
    """Why a run's reader must not parse `source` (a PDF's bytes or a file, judged by content); None when it may."""
    if isinstance(source, bytes):
        try:
            return _pdf(source, caps) if b"%PDF-" in source[:1024] else None
        except Exception:  # noqa: BLE001 - an unreadable header: the parser reports how it is broken
            return None
    return file_problem(source, caps)


def _rows_in_jsonl(path: Path, limit: int) -> int:
    rows = 0
    with path.open("rb") as f:
        while (block := f.read(1 << 20)) and rows <= limit:
            rows += block.count(b"\n")
    return rows


def split_problem(data_dir: Path, caps: Caps) -> str | None:
    """Why a local GAIA folder's metadata is too big to load (rows, or bytes of JSON); None when it is not."""
    import pyarrow.parquet as pq

    found = [p for depth in ("*", "*/*", "*/*/*") for p in data_dir.glob(f"{depth}")
             if p.is_file() and p.name.startswith("metadata") and p.suffix in (".parquet", ".jsonl", ".json")]
    for path in found[:20]:
        if path.stat().st_size > caps.unpacked_bytes:
            return f"{path.name} is {_mb(path.stat().st_size)} (the limit is {_mb(caps.unpacked_bytes)})"
        try:
            rows = pq.ParquetFile(path).metadata.num_rows if path.suffix == ".parquet" \
                else _rows_in_jsonl(path, caps.split_rows)
        except Exception:  # noqa: BLE001, S112 - unreadable metadata: the loader reports it
            continue
        if rows > caps.split_rows:
            return (f"{path.name} holds {rows:,} rows (GAIA splits hold a few hundred; the limit is "
                    f"{caps.split_rows:,}, VISITOR_MAX_SPLIT_ROWS)")
    return None
