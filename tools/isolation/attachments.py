"""Which attachments a sandbox may see: regular files only, each reported when it is left out.

A directory given as an attachment used to be bound whole (it exposed other sessions' traces and the
app's `.env`); a symlink could name any file. Now only regular files are bound. A symlink is followed
only to a regular file, and no system pseudo-file or credential store is bound, and it is bound at both its
own and its real path (the Hugging Face cache links snapshots to blobs). Everything else is skipped
with a note the model sees, so it knows to use read_file or ask for the file itself.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

_PSEUDO_ROOTS = ("/proc/", "/sys/", "/dev/")
_SECRET_PARTS = {".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker", ".kube", ".pypirc"}


@dataclass
class Selection:
    """The attachments to bind (as given, absolute) and a note for each one left out."""

    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _is_secret(real: str) -> bool:
    parts = real.split("/")
    name = parts[-1]
    return name == ".env" or name.startswith(".env.") or bool(_SECRET_PARTS & set(parts))


def select(paths: list[str]) -> Selection:
    """Split `paths` into bindable regular files and notes on the rest (missing, directory, bad link)."""
    chosen = Selection()
    for raw in dict.fromkeys(os.path.abspath(p) for p in paths):
        real = os.path.realpath(raw)
        try:
            mode = os.stat(real).st_mode
        except OSError:
            chosen.notes.append(f"attachment {raw} does not exist; it is not in the sandbox.")
            continue
        if stat.S_ISDIR(mode):
            chosen.notes.append(f"attachment {raw} is a directory; only regular files are put in the sandbox "
                                "(pass the files inside it).")
        elif not stat.S_ISREG(mode):
            chosen.notes.append(f"attachment {raw} is not a regular file; it is not in the sandbox.")
        elif real.startswith(_PSEUDO_ROOTS) or _is_secret(real):
            chosen.notes.append(f"attachment {raw} is (or links to) a system or credential file; "
                                "it is not in the sandbox.")
        else:
            chosen.files.append(raw)
    return chosen
