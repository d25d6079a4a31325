"""One visitor's own files: what they uploaded, the runs they started, the folder their downloads come from.

Kept in a `gr.State` (gradio gives each browser session its own deep copy, and deletes it when the
tab closes: `close()` then removes the session's download folder). File tools of the session's runs
may open its uploads (`readable`), nothing else of other sessions; the batch tab lists and compares
only the session's own runs; files offered for download are copies in the session's folder, so the
file route never needs the runs folder or the GAIA cache in `allowed_paths`.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from config import PROJECT_ROOT, Settings


class Session:
    """One browser session's uploads, runs and download folder."""

    def __init__(self, max_upload_bytes: int | None = None) -> None:
        self.max_upload_bytes = max_upload_bytes
        """Upload bytes the session may keep (VISITOR_MAX_UPLOAD_MB): past it its oldest uploads are deleted."""
        self.uploads: list[Path] = []
        """Folders gradio stored this session's uploads in (each holds one uploaded file)."""
        self.runs: list[Path] = []
        """Run folders this session started, oldest first."""
        self._downloads: Path | None = None
        self.username: str | None = None
        """The Hugging Face login seen when the page loaded (for handlers gradio gives no OAuthProfile, e.g. Chat)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Session:
        return Session(self.max_upload_bytes)  # every session starts empty, with the same upload budget

    def note_upload(self, path: str | Path | None) -> None:
        """Remember the folder of a file this session uploaded (gradio checked it came from its upload folder)."""
        if not path:
            return
        folder = Path(path).resolve().parent
        if folder not in self.uploads:
            self.uploads.append(folder)
        if self.max_upload_bytes is not None:
            self._keep_within(self.max_upload_bytes)

    def _keep_within(self, budget: int) -> None:
        """Delete the session's oldest uploads (never the newest) until what it keeps fits `budget`."""
        sizes = {f: sum(p.stat().st_size for p in f.glob("*") if p.is_file()) for f in self.uploads if f.is_dir()}
        while len(self.uploads) > 1 and sum(sizes.get(f, 0) for f in self.uploads) > budget:
            _remove_upload(self.uploads.pop(0))

    @property
    def readable(self) -> tuple[Path, ...]:
        """What file tools of this session's runs may open besides the task's attachment."""
        return tuple(self.uploads)

    def note_run(self, folder: Path) -> None:
        """Remember a run folder this session started (Compare lists only these)."""
        if folder not in self.runs:
            self.runs.append(folder)

    def run_named(self, name: str | None) -> Path | None:
        """The session's run folder called `name`; None for anything else (another session's run, a path)."""
        return next((p for p in self.runs if p.name == name), None)

    def publish(self, path: str | Path) -> str:
        """A copy of `path` in the session's own download folder (what gradio's file route then serves)."""
        if self._downloads is None or not self._downloads.is_dir():
            self._downloads = Path(tempfile.mkdtemp(prefix="gaia-session-"))
        source = Path(path)
        target = Path(tempfile.mkdtemp(dir=self._downloads)) / source.name
        shutil.copyfile(source, target)
        return str(target)

    def close(self) -> None:
        """Remove the session's download copies and its uploads (gradio calls this when the session ends)."""
        if self._downloads is not None:
            shutil.rmtree(self._downloads, ignore_errors=True)
            self._downloads = None
        for folder in self.uploads:
            _remove_upload(folder)
        self.uploads = []


def _remove_upload(folder: Path) -> None:
    """Delete one gradio upload folder (named by the file's sha256: 64 hex digits); anything else is left alone."""
    if len(folder.name) == 64 and all(c in "0123456789abcdef" for c in folder.name):
        shutil.rmtree(folder, ignore_errors=True)


def local_folder_refusal(folder: str, settings: Settings, session: Session | None) -> str | None:
    """Why the app may not read the `Local GAIA folder` `folder`; None when it may.

    GAIA_LOCAL_ROOTS lists the folders allowed; unset, a Space allows only the hub cache and the
    visitor's own uploads, and a local app anywhere (its visitor is the machine's owner).
    """
    roots = [Path(r.strip()).expanduser() for r in settings.GAIA_LOCAL_ROOTS.split(",") if r.strip()]
    if not roots and not settings.SPACE_ID:
        return None
    if not roots:
        roots = [settings.GAIA_CACHE_DIR, *(session.uploads if session else [])]
    target = Path(folder).expanduser().resolve()
    if any(target == r.resolve() or target.is_relative_to(r.resolve()) for r in roots):
        return None
    return ("This app reads local GAIA folders only under the folders its owner configured (GAIA_LOCAL_ROOTS) "
            "and your own uploads; use the Hugging Face hub source instead.")


def public_text(text: str, settings: Settings) -> str:
    """`text` without the server's absolute folders (project, runs, GAIA cache, temp), for a visitor's eyes."""
    places = {str(settings.OUTPUT_DIR): "runs", str(settings.GAIA_CACHE_DIR): "<gaia cache>",
              str(PROJECT_ROOT): ".", tempfile.gettempdir(): "<tmp>", os.path.expanduser("~"): "~"}
    text = _UPLOAD_FOLDER.sub("", text)  # gradio's upload folders (…/<sha256>/name): the visitor knows the name
    for place, name in sorted(places.items(), key=lambda item: -len(item[0])):
        if place and place != "/":
            text = text.replace(place, name)
    return text


_UPLOAD_FOLDER = re.compile(r"[^\s`'\"(]*/[0-9a-f]{64}/")
