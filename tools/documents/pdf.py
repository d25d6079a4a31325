"""parse_pdf: text of every page with page headers, tables as markdown, parsed in the budgeted worker.

`pdf_to_text` is also what fetch_webpage (PDF URLs) and read_file (.pdf, zip members) use, so a
PDF reads the same whichever way it reaches the agent. The pages are read by `tools.documents.pdf_reader`
inside the document worker (`tools.documents.isolated`); a long PDF is parsed across calls (`pdf_parse`).
"""

from __future__ import annotations

import time
from pathlib import Path

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import require_modules
from tools.core.paths import human_size, resolve_path
from tools.documents.isolated import parse_document
from tools.documents.pdf_parse import pdf_document, read_page
from tools.documents.pdf_reader import pages_folder


def pdf_to_text(source: Path | bytes, label: str = "PDF", char_budget: int | None = None) -> str:
    """Every page as '--- Page N ---' + text, then its tables as markdown; ToolFailure when unreadable.

    Parsing stops once `char_budget` characters are produced (the rest could not be shown anyway),
    with a note saying which pages were left and how to read them. Parsed in the budgeted worker.
    """
    return parse_document("pdf", source, label, char_budget=char_budget, pages_dir=pages_folder())


def make_pdf_tools(settings: Settings) -> list[BaseTool]:
    """Build parse_pdf; raises MissingDependency when pdfplumber is not installed."""
    require_modules(["parse_pdf"], "pip install pdfplumber", "pdfplumber")

    budget = settings.MAX_FILE_SIZE

    @context_tool
    def parse_pdf(_ctx: ToolContext, path: str, page: int = 1) -> str:
        """Extract the text of a PDF file page by page, with its tables as markdown tables.

        Use this for .pdf attachments or downloaded PDFs. PDF pages are headed '--- Page N ---'. A long
        PDF comes in reply pages: each reply says "page N of M" and the call that reads the next one;
        find_in_page(source=path, query=...) jumps to a word.

        Args:
            path: Absolute path of the PDF file (an attachment's path as given in the task).
            page: Which reply page to read (1 is the first); not a PDF page number.
        """
        started = time.monotonic()
        file = resolve_path(path, _ctx)
        label = f"{file.name} ({human_size(file.stat().st_size)})"
        doc = pdf_document(_ctx.services, file, label, f'parse_pdf(path="{file}", page={{page}})',
                           budget, started + max(1.0, settings.TOOL_TIMEOUT - 2.0))
        return read_page(doc, page)

    return [parse_pdf]
