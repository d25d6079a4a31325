"""Where file tools look for a path the model gives, and where they put files they extract.

The model often names an attachment by its bare file name; the run's attachment list (in the
LangChain `RunnableConfig`) turns that into the real absolute path. Extracted zip members and
downloaded binaries go to one temporary directory that lives as long as the process, so a later
tool call (image_ocr, transcribe_audio, read_file) can still open them.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from tools.executor import ToolFailure

# Defence in depth against a prompt-injected "read /proc/self/environ" or "read ~/.ssh/id_rsa": no GAIA
# task needs system pseudo-files or credential stores, and secrets found there could leave through a URL.
_PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
_SECRET_PARTS = {".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker", ".kube", ".pypirc"}

_workspace: Path | None = None
_workspace_lock = threading.Lock()  # tools run concurrently in batch mode


def attachments_of(config: Any) -> list[Path]:
    """Attachment paths of the current task from a RunnableConfig (empty when none were given)."""
    configurable = (config or {}).get("configurable") or {}
    return [Path(p) for p in configurable.get("attachments") or []]


def resolve_path(path: str, config: Any = None) -> Path:
    """The existing file `path` names: as given, or an attachment with that file name; else ToolFailure."""
    raw = (path or "").strip().strip("'\"")
    if not raw:
        raise ToolFailure("no path given. Pass the absolute path of the file (attachments are listed in the task).", "bad_arguments")
    if raw.lower().startswith(("http://", "https://")):
        raise ToolFailure(f"{raw} is a web address, not a file path. Use fetch_webpage to read it.", "bad_arguments")
    candidate = Path(raw).expanduser()
    if candidate.is_file():
        return _allowed(candidate.resolve(), raw)
    attachments = attachments_of(config)
    for attachment in attachments:
        if attachment.name == candidate.name and attachment.is_file():
            return _allowed(attachment.resolve(), raw)
    if candidate.is_dir():
        raise ToolFailure(f"{raw} is a directory, not a file. Pass the path of one file inside it.", "bad_arguments")
    hint = (f" The task's attachments are: {', '.join(str(a) for a in attachments)}." if attachments
            else " Attachments are given as absolute paths in the task; use that exact path.")
    raise ToolFailure(f"file not found: {raw}.{hint}", "missing_file")


def resolve_media(path: str, config: Any, extensions: tuple[str, ...], kind: str, empty_note: str) -> Path:
    """Like `resolve_path`, but also refuse a file whose extension is not in `extensions` or that is empty.

    `kind` names the expected type ("an image"), `empty_note` says what an empty file lacks.
    """
    file = resolve_path(path, config)
    if file.suffix.lower() not in extensions:
        raise ToolFailure(f"{file.name} is not {kind} ({file.suffix or 'no extension'}); supported: "
                          f"{', '.join(extensions)}. Use read_file for other files.", "unsupported_type")
    if file.stat().st_size == 0:
        raise ToolFailure(f"{file.name} is empty (0 bytes); {empty_note}", "empty_file")
    return file


def _allowed(path: Path, raw: str) -> Path:
    """`path` unless it is a system pseudo-file or a credential file, which file tools never read."""
    secret = path.name == ".env" or path.name.startswith(".env.") or bool(_SECRET_PARTS & set(path.parts))
    if secret or any(path.is_relative_to(root) for root in _PSEUDO_ROOTS):
        raise ToolFailure(f"reading {raw} is not allowed (system or credential file). File tools read the task's "
                          "attachments and files extracted or downloaded by other tools.", "not_allowed")
    return path


def workspace_dir() -> Path:
    """A process-lifetime temporary directory for extracted and downloaded files (removed at exit)."""
    global _workspace
    with _workspace_lock:
        if _workspace is None or not _workspace.is_dir():
            _workspace = Path(tempfile.mkdtemp(prefix="gaia-files-"))
            atexit.register(shutil.rmtree, _workspace, True)
        return _workspace


def fresh_subdir(label: str) -> Path:
    """A new, empty directory under the workspace, named after `label`."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:60] or "files"
    return Path(tempfile.mkdtemp(prefix=f"{safe}-", dir=workspace_dir()))


def human_size(size: int) -> str:
    """1536 -> '1.5 KB'."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"
