"""Process hardening the app applies to itself at start: no same-uid process may read or trace it.

Without it, any process of the app's uid (a sandboxed child in a mode without its own uid, or anything
an injected instruction manages to start) can read `/proc/<app pid>/environ` — the API key and the
HF token — or ptrace the app. A non-dumpable process has those files owned by root and refuses
ptrace from non-root tracers. Import-light: callable before anything else loads.
"""

from __future__ import annotations

import ctypes
import sys

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3


def make_non_dumpable() -> bool:
    """Mark this process non-dumpable (PR_SET_DUMPABLE 0); True when it is now, False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    dumpable: int = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
    return dumpable == 0
