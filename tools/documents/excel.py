"""parse_excel: every sheet of a spreadsheet read in the budgeted worker, paged for the model.

The sheets are read by `tools.documents.excel_reader` inside the document worker (`tools.documents.isolated`),
so a hostile workbook costs one killed process.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import require_modules
from tools.core.paging import read_paged
from tools.core.paths import human_size, resolve_path
from tools.documents.excel_reader import SCAN_ROWS
from tools.documents.isolated import document_limits, parse_document


def make_excel_tools(settings: Settings) -> list[BaseTool]:
    """Build parse_excel; raises MissingDependency when openpyxl or xlrd is not installed."""
    require_modules(["parse_excel"], "pip install openpyxl xlrd", "openpyxl", "xlrd")

    budget = settings.MAX_FILE_SIZE

    @context_tool
    def parse_excel(_ctx: ToolContext, path: str, page: int = 1) -> str:
        """Read every sheet of a spreadsheet (.xlsx, .xlsm, .xls or .csv) as tables, with cell fill colours.

        Rows keep their spreadsheet row numbers and columns their letters (A, B, ...). Cells with a
        background colour are listed per colour, so questions about coloured cells can be answered.
        For sums or counts over many rows, load the file in run_python with pandas instead. A large
        sheet comes in pages: each reply says "page N of M" and the call that reads the next one.

        Args:
            path: Absolute path of the spreadsheet file (an attachment's path as given in the task).
            page: Which page of a long listing to read (1 is the first).
        """
        file = resolve_path(path, _ctx)

        def produce() -> str:
            return (f"File: {file.name} ({human_size(file.stat().st_size)})\n"
                    + parse_document("excel", file, file.name, limits=document_limits(settings.TOOL_TIMEOUT),
                                   max_rows=SCAN_ROWS))  # in the budgeted worker

        return read_paged(_ctx.services, file, "parse_excel", produce, budget, page)

    return [parse_excel]
