"""The runs folder as the batch tab lists it: runs to compare (with level, accuracy and date) and runs to resume.

Who sees which runs: a private app (no Space, APP_ALLOWED_USERS unset) is its owner's, who sees every
run in the folder (CLI runs too) by path. Otherwise each session sees only the runs it started, by
folder name: other sessions' runs are neither listed nor reachable by typing their path.
"""

from __future__ import annotations

import time
from pathlib import Path

from config import Settings
from evaluation.run_folder import RunFolder
from ui.session import Session, public_text


def run_label(folder: Path) -> str:
    """`validation-20261201-094000 · 2026-12-01 09:40 · 3/3 correct (100%) · L1 2/2 · L2 1/1`."""
    summary = RunFolder(folder).summary()
    parts = [folder.name, time.strftime("%Y-%m-%d %H:%M", time.localtime(folder.stat().st_mtime))]
    if summary is None:
        parts.append("no summary yet")
        return " · ".join(parts)
    scored, correct = summary.scored, summary.correct
    if scored:
        parts.append(f"{correct}/{scored} correct ({100 * correct / scored:.0f}%)")
    else:
        parts.append(f"{summary.total} task(s), none scored")
    for level, group in sorted(summary.level_metrics.items()):
        if group.get("scored"):
            parts.append(f"L{level} {group.get('correct', 0)}/{group['scored']}")
    return " · ".join(parts)


def runs_are_shared(settings: Settings) -> bool:
    """True for a private app (no Space, APP_ALLOWED_USERS unset): its one user sees every run."""
    return not settings.SPACE_ID and settings.APP_ALLOWED_USERS is None


def _visible(settings: Settings, session: Session | None, folder: Path) -> bool:
    if session is None or runs_are_shared(settings):
        return True
    return session.run_named(folder.name) is not None


def _value(settings: Settings, session: Session | None, folder: Path) -> str:
    return str(folder) if session is None or runs_are_shared(settings) else folder.name


def resolve_run(value: str | None, settings: Settings, session: Session | None = None) -> Path | None:
    """The run folder a list value (or an API client's text) names, if this visitor may see it; else None."""
    if not value:
        return None
    if session is not None and not runs_are_shared(settings):
        return session.run_named(value)  # names only: a typed path of another session's run finds nothing
    path = Path(value)
    return path if path.is_dir() else None


def list_runs(settings: Settings, session: Session | None = None) -> list[tuple[str, str]]:
    """(label, value) of visible run folders under OUTPUT_DIR (with a details.jsonl or results.jsonl), newest first."""
    root = Path(settings.OUTPUT_DIR)
    if not root.is_dir():
        return []
    runs = [p for p in root.iterdir()
            if p.is_dir() and ((p / "details.jsonl").is_file() or (p / "results.jsonl").is_file())
            and _visible(settings, session, p)]
    return [(run_label(p), _value(settings, session, p))
            for p in sorted(runs, key=lambda p: p.stat().st_mtime, reverse=True)]


def resumable_choices(settings: Settings, session_dir: str | None = None,
                      session: Session | None = None) -> list[tuple[str, str]]:
    """(label, value) of the visible unfinished runs under OUTPUT_DIR; this session's own run first."""
    from evaluation.run_folder import resumable_runs

    runs = [r for r in resumable_runs(Path(settings.OUTPUT_DIR)) if _visible(settings, session, r.path)]
    own = Path(session_dir).resolve() if session_dir else None
    runs.sort(key=lambda r: r.path.resolve() != own)  # stable: newest first otherwise
    return [(r.label, _value(settings, session, r.path)) for r in runs]


def compare(run_a: str | None, run_b: str | None, settings: Settings | None = None,
            session: Session | None = None) -> str:
    """Markdown comparison of two runs: fixed, regressed, unchanged (only runs this visitor may see)."""
    if not run_a or not run_b:
        return "Pick two runs to compare."
    if run_a == run_b:
        return "Pick two different runs."
    from evaluation.compare import compare_runs

    if settings is not None:
        found_a, found_b = resolve_run(run_a, settings, session), resolve_run(run_b, settings, session)
        if found_a is None or found_b is None:
            return "Pick two runs from the list (it shows the runs you may compare)."
        run_a, run_b = str(found_a), str(found_b)
    try:
        head = f"**A**: {run_label(Path(run_a))}  \n**B**: {run_label(Path(run_b))}\n\n"
        text = head + compare_runs(Path(run_a), Path(run_b)).to_markdown()
        return public_text(text, settings) if settings is not None else text  # no server folders for a visitor
    except Exception as exc:  # noqa: BLE001 - a half-written run folder: say which
        return f"❌ Cannot compare: {type(exc).__name__}: {exc}"
