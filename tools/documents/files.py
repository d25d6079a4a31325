"""read_file: any attachment as text, dispatched on what the file really is (not just its extension).

Text-like files are decoded without mojibake; .docx/.pptx through tools.documents.office; .pdf through the
same parser as parse_pdf; spreadsheets through parse_excel's reader; .zip members each through
the reader for their type. Images, audio and unknown binaries get a message naming the tool to use.
"""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import ToolFailure
from tools.core.paging import read_paged
from tools.core.paths import human_size, resolve_path
from tools.core.workspace import Workspace
from tools.documents.archive import read_zip
from tools.documents.filetypes import EXTENSIONS, TOOL_ADVICE, Kind, classify
from tools.documents.textio import clean_text, decode_text, html_to_markdown

MAX_TEXT_BYTES = 4 * 1024 * 1024  # more text than this cannot reach the model anyway
MEMBERS_BUDGET = 10_000
"""Characters an archive's listing and members share; each member is also readable on its own by path."""


def read_path(path: Path, budget: int | None = None, depth: int = 0, workspace: Workspace | None = None,
              members_budget: int = MEMBERS_BUDGET, seconds: float | None = None) -> str:
    """A header line (name, type, size) and the file's whole content as text; ToolFailure when it cannot be read.

    `budget` (characters) is given only for members of an archive, which share the reply; a file read
    on its own is returned whole, for read_file to page. A document's parse (PDF, office, spreadsheet) runs
    in the budgeted worker, stopped after `seconds` (the call's TOOL_TIMEOUT; isolated.py's figure when None).
    """
    size = path.stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(4096)
    kind, description = classify(path, head)
    if kind == "empty":
        raise ToolFailure(f"{path.name} is empty (0 bytes): there is nothing to read. Check that this is the right "
                          "file; if it came from a download, fetch it again.", "empty_file")
    header = f"File: {path.name} ({description}, {human_size(size)})"
    return header + "\n\n" + _body(path, kind, description, size, budget, depth, workspace, members_budget, seconds)


def _body(path: Path, kind: Kind, description: str, size: int, budget: int | None, depth: int,
          workspace: Workspace | None, members_budget: int = MEMBERS_BUDGET, seconds: float | None = None) -> str:
    from tools.documents.isolated import document_limits, parse_document

    limits = document_limits(seconds)
    claimed = EXTENSIONS.get(path.suffix.lower())
    if kind == "binary" and claimed in ("image", "audio", "video"):
        raise ToolFailure(f"{path.name} has a {path.suffix} extension but its content is not a recognisable {claimed} "
                          f"file ({description}); it may be corrupt. You can still try: {TOOL_ADVICE[claimed]}.",
                          "corrupt_file")
    if kind in ("image", "audio", "video", "binary"):
        raise ToolFailure(f"{path.name} looks like a binary file ({description}), not text; {TOOL_ADVICE[kind]}.",
                          "wrong_tool")
    if kind in ("docx", "pptx"):  # parsed in the budgeted worker (tools.documents.isolated), like PDFs and spreadsheets
        return parse_document(kind, path, path.name, limits=limits)
    if kind == "pdf":
        from tools.documents.pdf_reader import pages_folder

        return parse_document("pdf", path, path.name, limits=limits, char_budget=budget, pages_dir=pages_folder())
    if kind == "excel":
        from tools.documents.excel_reader import SCAN_ROWS

        return parse_document("excel", path, path.name, limits=limits, max_rows=SCAN_ROWS if budget is None else 200)
    if kind == "zip":
        def member_reader(member: Path, share: int, level: int) -> str:
            return read_path(member, share, level, workspace, seconds=seconds)

        return read_zip(path, member_reader, budget or members_budget, depth, workspace)
    return _read_text(path, kind, size)


def _read_text(path: Path, kind: Kind, size: int) -> str:
    with open(path, "rb") as handle:
        data = handle.read(MAX_TEXT_BYTES)
    text, encoding = decode_text(data)
    if text.count("\ufffd") > max(8, len(text) // 100):
        raise ToolFailure(f"{path.name} does not decode as text (many invalid characters); it is probably a binary "
                          f"file with a text extension. {TOOL_ADVICE['binary']}.", "wrong_tool")
    text = clean_text(text)
    notes = []
    if encoding not in ("utf-8", "utf-8-sig", "ascii"):
        notes.append(f"(decoded as {encoding})")
    if kind == "json":
        text, note = _json_text(text)
        if note:
            notes.append(note)
    elif kind == "html":
        text = html_to_markdown(text, main_content_only=False)
        notes.append("(HTML converted to markdown; scripts and styles removed)")
    elif kind == "csv":
        notes.append("(raw CSV; parse_excel shows it as a table with row numbers)")
    if size > MAX_TEXT_BYTES:
        notes.append(f"(only the first {human_size(MAX_TEXT_BYTES)} of {human_size(size)} read; use run_python to "
                     "search the rest)")
    return "\n".join(notes + [text]) if notes else text


def _json_text(text: str) -> tuple[str, str | None]:
    """Pretty-print compact JSON so the model can read it; keep the raw text (with a warning) when invalid."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return text, (f"(warning: not valid JSON — {exc.msg} at line {exc.lineno} column {exc.colno}; "
                      "raw text follows)")
    if "\n" not in text.strip() and len(text) > 120:
        return json.dumps(value, indent=2, ensure_ascii=False), None
    return text, None


def make_file_tools(settings: Settings) -> list[BaseTool]:
    """Build read_file; its pages (and the share of zip members) come from MAX_FILE_SIZE."""
    budget = settings.MAX_FILE_SIZE

    @context_tool
    def read_file(_ctx: ToolContext, path: str, page: int = 1) -> str:
        """Read a file and return its content as text, with a header giving its type and size.

        Handles text files (.txt .md .json .jsonld .xml .html .py .pdb .csv and other text), Word
        .docx (paragraphs and tables in order), PowerPoint .pptx (text per numbered slide), .pdf,
        spreadsheets, and .zip archives (lists the files, then reads each one). For images and audio
        it tells you which tool to call instead. A long file comes in pages: the reply says
        "page N of M" and the call that reads the next page; find_in_page jumps to a word.

        Args:
            path: Absolute path of the file (an attachment's path as given in the task).
            page: Which page of a long file to read (1 is the first).
        """
        file, run = resolve_path(path, _ctx), _ctx.services
        work = run.workspace
        return read_paged(run, file, "read_file", lambda: read_path(file, workspace=work, members_budget=budget,
                                                                      seconds=settings.TOOL_TIMEOUT),
                          budget, page)

    return [read_file]
