"""Caps on what a page may take: each renderer's memory and CPU time, read from /proc and enforced by a kill.

A browser thread's Chromium is found by its private profile folder on its command line; its
renderers are its descendants with `--type=renderer`. A renderer over `BROWSER_PAGE_MEMORY_MB`
(resident) or `BROWSER_PAGE_CPU_S` (CPU seconds) is killed: its page crashes, the run that owns it is
told, and the other tabs (other renderers) go on. V8's own heap cap (`--js-flags=--max-old-space-size`,
tools.browser.launch) stops most memory bombs before this does. `busiest_renderer` finds the page
that keeps an action from finishing (a `while(true){}`): the renderer that used the most CPU lately.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Renderer:
    """One renderer process: its pid, CPU seconds so far and resident memory."""

    pid: int
    cpu_s: float
    rss_mb: float


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of `pid`, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _rss_mb(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def process_tree() -> dict[int, list[int]]:
    """Every process's children (pid -> child pids), from one scan of /proc: pass it to the calls of one check."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            tree.setdefault(stat[0], []).append(int(entry))
    return tree


def browser_pid(marker: str) -> int | None:
    """The Chromium browser process whose command line names `marker` (its private folder), if running."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            line = _cmdline(int(entry))
            if marker in line and "--type=" not in line and "--user-data-dir" in line:
                return int(entry)
    return None


def descendants(pid: int, tree: dict[int, list[int]] | None = None) -> list[int]:
    """Every process under `pid` (in `tree`, or a fresh scan of /proc)."""
    tree, found, stack = process_tree() if tree is None else tree, [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def renderers(browser: int, tree: dict[int, list[int]] | None = None) -> list[Renderer]:
    """The renderer processes of the Chromium `browser` (found in `tree`, or a fresh scan of /proc)."""
    found = []
    for pid in descendants(browser, tree):
        line = _cmdline(pid)
        # Inside Chromium's own sandbox a renderer's command line is not readable from outside: an empty one.
        if ("--type=renderer" in line or not line) and (stat := _stat(pid)) is not None:
            found.append(Renderer(pid, stat[1], _rss_mb(pid)))
    return found


def over_caps(browser: int, memory_mb: float, cpu_s: float,
              tree: dict[int, list[int]] | None = None) -> list[tuple[Renderer, str]]:
    """The renderers of `browser` past a cap, each with the cap it broke (for the run's observation)."""
    broken = []
    for proc in renderers(browser, tree):
        if proc.rss_mb > memory_mb:
            broken.append((proc, f"it used {proc.rss_mb:.0f} MB of memory (BROWSER_PAGE_MEMORY_MB={memory_mb:g})"))
        elif proc.cpu_s > cpu_s:
            broken.append((proc, f"it used {proc.cpu_s:.0f} s of CPU (BROWSER_PAGE_CPU_S={cpu_s:g})"))
    return broken


def busiest_renderer(browser: int, before: dict[int, float]) -> int | None:
    """The renderer of `browser` that used the most CPU since `before` (pid -> CPU seconds), if any did."""
    best, gained = None, 0.05
    for proc in renderers(browser):
        delta = proc.cpu_s - before.get(proc.pid, 0.0)
        if delta > gained:
            best, gained = proc.pid, delta
    return best


def cpu_times(browser: int) -> dict[int, float]:
    """Each renderer pid -> the CPU seconds of each renderer of `browser` now."""
    return {proc.pid: proc.cpu_s for proc in renderers(browser)}


def kill(pid: int) -> None:
    """SIGKILL `pid` (gone already is fine)."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
