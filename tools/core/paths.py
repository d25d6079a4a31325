"""Which file a path the model gives names, and whether this run may open it.

The model often names an attachment by its bare file name; the run's `ToolContext` turns that into
the real absolute path. In a confined run (app sessions, batch runs) a file tool opens only the
task's attachments, the session's own uploads and the run's workspace: the resolved path is checked,
so `..` and symlinks pointing out are refused. System pseudo-files and credential files are never
read, confined or not.
"""

from __future__ import annotations

from pathlib import Path

from tools.core.context import ToolContext
from tools.core.errors import ToolFailure

# Defence in depth against a prompt-injected "read /proc/self/environ" or "read ~/.ssh/id_rsa": no GAIA
# task needs system pseudo-files or credential stores, and secrets found there could leave through a URL.
_PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
_SECRET_PARTS = {".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker", ".kube", ".pypirc"}


def resolve_path(path: str, ctx: ToolContext) -> Path:
    """The existing file `path` names: as given, or an attachment of `ctx` with that file name; else ToolFailure."""
    raw = (path or "").strip().strip("'\"")
    if not raw:
        raise ToolFailure("no path given. Pass the absolute path of the file (attachments are listed in the task).",
                          "bad_arguments")
    if raw.lower().startswith(("http://", "https://")):
        raise ToolFailure(f"{raw} is a web address, not a file path. Use fetch_webpage to read it.", "bad_arguments")
    candidate = Path(raw).expanduser()
    if candidate.is_file() and ctx.allows(candidate):
        return _allowed(candidate.resolve(), raw)
    for attachment in ctx.attachments:
        if attachment.name == candidate.name and attachment.is_file():
            return _allowed(attachment.resolve(), raw)
    if candidate.exists() and not ctx.allows(candidate):
        raise ToolFailure(f"{raw} is outside this run's files: file tools open the task's attachments, your own "
                          "uploads and files that tools saved for this run.", "not_allowed")
    if candidate.is_dir():
        raise ToolFailure(f"{raw} is a directory, not a file. Pass the path of one file inside it.", "bad_arguments")
    attachments = ctx.attachments
    hint = (f" The task's attachments are: {', '.join(str(a) for a in attachments)}." if attachments
            else " Attachments are given as absolute paths in the task; use that exact path.")
    raise ToolFailure(f"file not found: {raw}.{hint}", "missing_file")


def resolve_media(path: str, ctx: ToolContext, extensions: tuple[str, ...], kind: str, empty_note: str) -> Path:
    """Like `resolve_path`, but also refuse a file whose extension is not in `extensions` or that is empty.

    `kind` names the expected type ("an image"), `empty_note` says what an empty file lacks.
    """
    file = resolve_path(path, ctx)
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


def human_size(size: int) -> str:
    """1536 -> '1.5 KB'."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"
