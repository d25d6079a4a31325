"""What kind of file a path is, from its extension and its first bytes, and which tool reads it.

Extensions lie (a .txt that is a PNG, a .xlsx that is HTML), so the content's magic bytes win when
they identify a known binary format; text with an unknown extension is still text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Kind = Literal["text", "csv", "html", "json", "docx", "pptx", "pdf", "excel", "zip",
               "image", "audio", "video", "binary", "empty"]

EXTENSIONS: dict[str, Kind] = {
    **{e: "text" for e in (".txt", ".md", ".markdown", ".xml", ".py", ".pdb", ".log", ".yaml", ".yml",
                           ".tsv", ".ini", ".cfg", ".toml", ".rst", ".tex", ".js", ".css", ".sql", ".sh",
                           ".c", ".h", ".cpp", ".java", ".r", ".svg")},
    ".csv": "csv",
    ".json": "json", ".jsonld": "json", ".jsonl": "text",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".docx": "docx", ".pptx": "pptx", ".pdf": "pdf",
    ".xlsx": "excel", ".xlsm": "excel", ".xls": "excel",
    ".zip": "zip",
    **{e: "image" for e in (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")},
    **{e: "audio" for e in (".mp3", ".wav", ".m4a", ".flac", ".ogg", ".oga", ".opus", ".aac")},
    **{e: "video" for e in (".mp4", ".mov", ".avi", ".mkv", ".webm", ".m4v")},
}

# (prefix, offset, description, kind). Only formats we can name with confidence.
_MAGIC: list[tuple[bytes, int, str, Kind]] = [
    (b"%PDF-", 0, "PDF document", "pdf"),
    (b"\x89PNG\r\n\x1a\n", 0, "PNG image", "image"),
    (b"\xff\xd8\xff", 0, "JPEG image", "image"),
    (b"GIF87a", 0, "GIF image", "image"),
    (b"GIF89a", 0, "GIF image", "image"),
    (b"BM", 0, "BMP image", "image"),
    (b"II*\x00", 0, "TIFF image", "image"),
    (b"MM\x00*", 0, "TIFF image", "image"),
    (b"ID3", 0, "MP3 audio", "audio"),
    (b"\xff\xfb", 0, "MP3 audio", "audio"),
    (b"\xff\xf3", 0, "MP3 audio", "audio"),
    (b"fLaC", 0, "FLAC audio", "audio"),
    (b"OggS", 0, "Ogg audio", "audio"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 0, "legacy Microsoft Office file (.xls/.doc/.ppt)", "excel"),
    (b"PK\x03\x04", 0, "ZIP container", "zip"),
    (b"PK\x05\x06", 0, "ZIP container (empty)", "zip"),
    (b"\x7fELF", 0, "ELF executable", "binary"),
    (b"MZ", 0, "Windows executable", "binary"),
    (b"\x1f\x8b", 0, "gzip archive", "binary"),
    (b"7z\xbc\xaf\x27\x1c", 0, "7-Zip archive", "binary"),
    (b"Rar!", 0, "RAR archive", "binary"),
    (b"SQLite format 3\x00", 0, "SQLite database", "binary"),
]

TOOL_ADVICE: dict[Kind, str] = {
    "image": "call image_ocr(path) to read its text, or analyze_image(path, question) to ask about its content",
    "audio": "call transcribe_audio(path) to get its speech as text",
    "video": "call watch_video(source=path) to get its transcript and keyframes",
    "pdf": "call parse_pdf(path)",
    "excel": "call parse_excel(path)",
    "binary": "no tool reads this format; look for the information elsewhere (web_search) "
              "or inspect the bytes with run_python",
}


def sniff(head: bytes) -> tuple[str, Kind] | None:
    """(description, kind) of a known binary format from the file's first bytes, else None."""
    for prefix, offset, description, kind in _MAGIC:
        if head[offset:offset + len(prefix)] == prefix:
            return description, kind
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "WAV audio", "audio"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP image", "image"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"M4A ", b"M4B "):
            return "M4A audio", "audio"
        return "MP4/QuickTime media", "video"
    return None


def looks_binary(head: bytes) -> bool:
    """True when the bytes are not plausibly text in a common encoding (NULs or many control bytes)."""
    if not head:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM is text
        return False
    if b"\x00" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls / len(head) > 0.05


def ooxml_kind(path: Path) -> Kind | None:
    """'docx'/'pptx'/'excel' when the zip at `path` is an Office Open XML document, else None."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    for marker, kind in (("word/document.xml", "docx"), ("xl/workbook.xml", "excel"), ("ppt/presentation.xml", "pptx")):
        if marker in names:
            return kind  # type: ignore[return-value]
    return None


_OOXML_NAMES = {"docx": "Word document", "pptx": "PowerPoint presentation", "excel": "Excel workbook"}


def classify(path: Path, head: bytes) -> tuple[Kind, str]:
    """The kind of the file and a short human description (e.g. ('excel', 'Excel workbook'))."""
    if not head:
        return "empty", "empty file"
    by_ext = EXTENSIONS.get(path.suffix.lower())
    sniffed = sniff(head)
    if sniffed:
        description, kind = sniffed
        if kind == "zip" and by_ext in ("docx", "pptx", "excel"):
            return by_ext, _OOXML_NAMES[by_ext]
        if kind == "zip" and path.is_file():
            inner = ooxml_kind(path)  # an Office file under a wrong or missing extension
            if inner:
                return inner, f"{_OOXML_NAMES[inner]} (although named {path.suffix.lower() or 'without extension'})"
        if by_ext == "audio" and kind in ("audio", "video"):
            return "audio", description  # .m4a has an MP4 container
        if head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" and path.suffix.lower() != ".xls":
            # The same container holds .doc/.ppt and password-protected .xlsx/.docx/.pptx.
            if by_ext in ("excel", "docx", "pptx"):
                return "binary", f"password-protected (encrypted) Office file, although named {path.suffix.lower()}"
            return "binary", "legacy Microsoft Office file (.doc/.ppt), which no tool here reads"
        return kind, description
    if looks_binary(head):
        return "binary", "binary data of unknown format"
    if by_ext in ("docx", "pptx", "excel", "pdf", "zip", "image", "audio", "video"):
        # A text payload under a binary extension, e.g. an HTML error page saved as .xlsx.
        return "text", f"text (although the extension says {path.suffix.lower()})"
    return by_ext or "text", {"csv": "CSV table", "html": "HTML document", "json": "JSON document"}.get(
        by_ext or "text", "text")
