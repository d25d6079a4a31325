"""The report's PNG chart: accuracy by level and by attachment type.

Uses matplotlib's object API on an Agg canvas (no pyplot global state), so it is safe from worker
threads and headless servers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from evaluation.run_summary import Group, RunSummary


def _bars(ax: Any, title: str, groups: dict[str, Group]) -> None:
    scored = {name: g for name, g in groups.items() if g.get("scored")}
    ax.set_title(title)
    ax.set_ylim(0, 110)  # headroom so the n/m labels above full bars stay clear of the title
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("accuracy (%)")
    if not scored:
        ax.text(0.5, 0.5, "no scored tasks", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        return
    names = list(scored)
    values = [100 * (scored[n]["accuracy"] or 0.0) for n in names]
    bars = ax.bar(names, values, color="#4C72B0")
    for bar, name in zip(bars, names, strict=True):
        g = scored[name]
        ax.annotate(
            f"{g['correct']}/{g['scored']}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center", va="bottom", fontsize=8,
        )
    ax.tick_params(axis="x", labelrotation=30 if len(names) > 4 else 0)


def plot_accuracy(summary: RunSummary, path: Path) -> Path:
    """Draw accuracy by level and by file type from a run's summary into a PNG at `path`.

    The title names the scorer whose verdicts the bars count (a lenient run is not an exact match).
    """
    levels = {f"Level {k}": v for k, v in summary.level_metrics.items()}
    fig = Figure(figsize=(10, 4), dpi=100)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    _bars(left, "Accuracy by level", levels)
    _bars(right, "Accuracy by attachment type", summary.by_file_type)
    fig.suptitle(chart_title(summary))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def chart_title(summary: RunSummary) -> str:
    """`GAIA exact match: 50.0%`, or `GAIA correct (lenient scorer): 75.0%` for another scorer's verdicts."""
    rate = summary.exact_match_rate
    label = summary.verdicts
    return f"GAIA {label[0].lower()}{label[1:]}: " + ("n/a" if rate is None else f"{100 * rate:.1f}%")
