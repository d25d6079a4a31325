"""Zip archives: list the members, extract them safely, and read each one with the reader for its type.

Members are extracted into the process-lifetime workspace (tools.core.paths) so that images and audio
can be handed to image_ocr / transcribe_audio by path in a later call. Extraction is guarded
against path traversal ("zip slip") and decompression bombs.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from tools.core.errors import ToolFailure
from tools.core.paths import human_size
from tools.core.workspace import Workspace, process_workspace
from tools.documents.filetypes import TOOL_ADVICE, classify

MAX_MEMBERS = 200
MAX_TOTAL_BYTES = 300 * 1024 * 1024
MAX_DEPTH = 2

Reader = Callable[[Path, int, int], str]
"""(path, character budget, nesting depth) -> text; raises ToolFailure."""


def safe_member_path(name: str) -> PurePosixPath | None:
    """A relative path for a member name with '..', drive letters and absolute roots removed; None if nothing left."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "..", "/") and ":" not in p]
    return PurePosixPath(*parts) if parts else None


def read_zip(path: Path, reader: Reader, budget: int, depth: int = 0, workspace: Workspace | None = None) -> str:
    """A listing of the archive, then each member read by `reader` within a share of `budget` characters."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ToolFailure(f"{path.name} is not a readable zip archive ({type(exc).__name__}: {exc}); it may be corrupt "
                          "or truncated. Try downloading it again.", "corrupt_file") from None
    with archive:
        members = [info for info in archive.infolist() if not info.is_dir()]
        if not members:
            return f"Archive {path.name} is empty (no files inside)."
        if len(members) > MAX_MEMBERS:
            raise ToolFailure(f"{path.name} holds {len(members)} files (limit {MAX_MEMBERS}). "
                              "Extract and inspect it with run_python (zipfile) instead.", "size_limit")
        total = sum(info.file_size for info in members)
        if total > MAX_TOTAL_BYTES:
            raise ToolFailure(f"{path.name} would unpack to {human_size(total)} (limit {human_size(MAX_TOTAL_BYTES)}); "
                              "it is too large to extract here.", "size_limit")
        workspace = workspace or process_workspace()
        workspace.reserve(total, f"unpacking {path.name}")
        target_dir = workspace.subdir(path.stem)
        listing = [f"Archive {path.name}: {len(members)} file{'s' if len(members) != 1 else ''}, "
                   f"{human_size(total)} unpacked, extracted to {target_dir}"]
        extracted: list[tuple[str, Path | None, str]] = []
        for info in members:
            relative = safe_member_path(info.filename)
            listing.append(f"- {info.filename} ({human_size(info.file_size)})")
            if relative is None:
                extracted.append((info.filename, None, "skipped: unsafe member name"))
                continue
            if info.flag_bits & 0x1:
                extracted.append((info.filename, None, "encrypted member: it cannot be read without the password"))
                continue
            destination = target_dir / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(info) as source, open(destination, "wb") as sink:
                    shutil.copyfileobj(source, sink)
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as exc:
                extracted.append((info.filename, None, f"could not be extracted ({type(exc).__name__}: {exc})"))
                continue
            extracted.append((info.filename, destination, ""))
    share = max(800, budget // max(1, len(extracted)))
    sections = ["\n".join(listing)]
    for name, saved, problem in extracted:
        sections.append(f"=== {name} ===\n" + (problem if saved is None else _read_member(saved, reader, share, depth)))
    return "\n\n".join(sections)


def _read_member(path: Path, reader: Reader, share: int, depth: int) -> str:
    with open(path, "rb") as handle:
        head = handle.read(4096)
    kind, description = classify(path, head)
    if kind in ("image", "audio", "video"):
        return f"{description}, extracted to {path}: {TOOL_ADVICE[kind]}."
    if kind == "zip" and depth + 1 > MAX_DEPTH:
        return f"nested archive extracted to {path}; call read_file on it to open it."
    try:
        text = reader(path, share, depth + 1)
    except ToolFailure as exc:
        return f"(could not read: {exc})"
    if len(text) > share:
        text = text[:share] + (f"\n…[member cut at {share} of {len(text)} characters; "
                               f"call read_file on {path} for all of it]")
    return text
