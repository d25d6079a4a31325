"""File type -> the tool that reads it: the router's table for attachments.

The instruction handed to the model names the attachment's absolute path and the tool to call. When
the preferred tool is not active (its tier's dependency is missing), the instruction names the next
active one in the route instead, so the model is never pointed at a tool it does not have.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Route:
    """How one family of file types is read: tools in order of preference, and what to tell the model."""

    file_type: str
    tools: tuple[str, ...]
    how: dict[str, str]
    """Tool name -> how to use it on this file ({path} is replaced by the absolute path)."""
    also: dict[str, str] = field(default_factory=dict)
    """Tool name -> an extra sentence added when that tool is active too (a second way in)."""


_PANDAS = ("For sums, filters or counts over many rows, use run_python with pandas "
           "(pd.read_excel(\"{path}\", sheet_name=None) or pd.read_csv(\"{path}\")).")
_SPREADSHEET = Route("spreadsheet", ("parse_excel", "run_python"), {
    "parse_excel": "Call parse_excel(path=\"{path}\") to see every sheet with row and column labels "
                   "(and cell colours).",
    "run_python": "Load it with run_python using pandas: pd.read_excel(\"{path}\", sheet_name=None) "
                  "(or pd.read_csv for .csv), then print what you need.",
}, also={"run_python": _PANDAS})
_CSV = Route("csv", ("parse_excel", "run_python", "read_file"), {
    **_SPREADSHEET.how,
    "read_file": "Call read_file(path=\"{path}\") to read it as text.",
}, also={"run_python": _PANDAS})
_FIND = ("To jump to a word in it, call find_in_page(source=\"{path}\", query=...); a long reply comes in pages "
         "(\"page N of M\") and names the call for the next one.")
_PDF = Route("pdf", ("parse_pdf", "run_python"), {
    "parse_pdf": "Call parse_pdf(path=\"{path}\") to get its text per page and its tables.",
    "run_python": "Extract its text with run_python (e.g. pdfplumber or pypdf if importable) from \"{path}\".",
}, also={"find_in_page": _FIND})
_UPLOAD = ("To find where it comes from (a reverse image search), open such a search page with browser_open and "
           "give it the file with browser_upload(ref=..., path=\"{path}\").")
_IMAGE = Route("image", ("analyze_image", "image_ocr", "browser_upload"), {
    "analyze_image": "Call analyze_image(path=\"{path}\", question=...) to look at it with the vision model.",
    "image_ocr": "Call image_ocr(path=\"{path}\") to read the text in it.",
    "browser_upload": _UPLOAD,
}, also={"image_ocr": "Use image_ocr(path=\"{path}\") when you need the exact text printed in it.",
         "browser_upload": _UPLOAD})
_AUDIO = Route("audio", ("transcribe_audio",), {
    "transcribe_audio": "Call transcribe_audio(path=\"{path}\") to get a transcript.",
})
_VIDEO = Route("video", ("watch_video",), {
    "watch_video": "Call watch_video(source=\"{path}\", question=...) to get its transcript with timestamps and "
                   "its keyframes (on-screen text and what they show).",
})
_GIF = Route("animation", ("watch_video", "analyze_image", "image_ocr"), {
    "watch_video": "Call watch_video(source=\"{path}\", question=...) to read the GIF frame by frame (each frame's "
                   "display times, on-screen text and what it shows); start/end narrow it to a moment.",
    "analyze_image": "Call analyze_image(path=\"{path}\", question=...); it sees the first frame only.",
    "image_ocr": "Call image_ocr(path=\"{path}\") to read the text in its first frame.",
}, also={"analyze_image": "For a still GIF, analyze_image(path=\"{path}\", question=...) looks at it too."})
_PYTHON = Route("python", ("read_file", "run_python"), {
    "read_file": "Call read_file(path=\"{path}\") to read the code.",
    "run_python": "Read and run it with run_python (open(\"{path}\").read(), then exec or reason about it).",
}, also={"run_python": "To run it, pass its code to run_python."})
_TEXTLIKE = Route("document", ("read_file", "run_python"), {
    "read_file": "Call read_file(path=\"{path}\") to read it.",
    "run_python": "Read it with run_python (open(\"{path}\", \"rb\")) and print what you need.",
}, also={"find_in_page": _FIND})

ROUTES: dict[str, Route] = {
    ".xlsx": _SPREADSHEET, ".xls": _SPREADSHEET, ".xlsm": _SPREADSHEET, ".csv": _CSV,
    ".pdf": _PDF,
    ".png": _IMAGE, ".jpg": _IMAGE, ".jpeg": _IMAGE, ".gif": _GIF, ".webp": _IMAGE, ".bmp": _IMAGE,
    ".mp3": _AUDIO, ".wav": _AUDIO, ".m4a": _AUDIO, ".flac": _AUDIO, ".ogg": _AUDIO,
    ".mp4": _VIDEO, ".mov": _VIDEO, ".webm": _VIDEO, ".mkv": _VIDEO, ".avi": _VIDEO, ".m4v": _VIDEO,
    ".py": _PYTHON,
    **{ext: _TEXTLIKE for ext in (".docx", ".pptx", ".txt", ".md", ".json", ".jsonld", ".xml", ".html",
                                  ".htm", ".pdb", ".zip")},
}


@dataclass(frozen=True)
class FileRoute:
    """The router's decision for one attachment."""

    path: str
    """Absolute path of the attachment."""
    file_type: str
    """Family of the file ('spreadsheet', 'pdf', 'image', ...), from its extension."""
    extension: str
    tools: list[str] = field(default_factory=list)
    """Tools able to read it, preferred first (regardless of which are active)."""
    tool: str | None = None
    """The tool the instruction names: the first of `tools` that is active (None if none is)."""
    instruction: str = ""
    """What the model is told, with the absolute path."""


def route_for(path: str | Path, active_tools: Iterable[str] | None = None) -> FileRoute:
    """Route an attachment to the tool for its type; `active_tools` (the registry's names) picks the fallback."""
    resolved = Path(path).expanduser().resolve()
    ext = resolved.suffix.lower()
    route = ROUTES.get(ext, _TEXTLIKE)
    file_type = route.file_type if ext in ROUTES else "other"
    active = None if active_tools is None else set(active_tools)
    chosen = next((t for t in route.tools if active is None or t in active), None)
    head = f"The task comes with the file {resolved} ({ext or 'no extension'}; {file_type})."
    if not resolved.exists():
        head += " Warning: this file does not exist on disk."
    if chosen is None:
        wanted = ", ".join(route.tools)
        instruction = (f"{head} No tool able to read it is active here (it needs one of: {wanted}); "
                       "say so and answer as best you can from the question.")
    else:
        extras = [text for tool, text in route.also.items()
                  if tool != chosen and (active is None or tool in active)]
        instruction = " ".join([head, *(text.format(path=resolved) for text in (route.how[chosen], *extras))])
        if active is not None and chosen != route.tools[0]:
            instruction += f" ({route.tools[0]} is not available here.)"
    return FileRoute(path=str(resolved), file_type=file_type, extension=ext, tools=list(route.tools),
                     tool=chosen, instruction=instruction)
