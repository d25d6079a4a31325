"""summary.json content and report.md (with the accuracy chart) from a run's task records.

Conventions (also written into the report):
- A record with `correct is None` is *unscored* (no ground truth, e.g. the test split): it counts in
  `total` and `unscored` but not in any accuracy. Accuracy = correct / scored; None when nothing is scored.
- Group dicts (`level_metrics`, `by_file_type`, `by_source`) are `{total, scored, correct, accuracy}`;
  keys are strings ("1", "xlsx", "none" for no attachment) so summary.json round-trips unchanged.
- `drop_rates["1->2"]` compares level 1 with level 2 accuracy: `absolute` = acc1 - acc2 (fraction points),
  `relative` = (acc1 - acc2) / acc1, the share of level-1 accuracy lost. Same for "2->3" and "1->3";
  None when a level has no scored task (relative also when the base accuracy is 0).
"""

from __future__ import annotations

import statistics as stats
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evaluation.chart import plot_accuracy
from evaluation.records import TaskRecord
from evaluation.repair_hints import hints_markdown
from evaluation.run_summary import Group, RunSummary

CHART_NAME = "accuracy.png"
WAIT_WORTH_NOTING_S = 1.0
"""A task whose requests waited this long for the rate limiter is listed in the summary's `waited`."""
CATEGORY_HELP = {
    "no_tool_result_used": "answered without using any tool result",
    "tool_failed": "a tool failed or the wrong tool was used",
    "iteration_cap": "the loop hit MAX_ITERATIONS",
    "llm_error": "the model endpoint failed (after retries)",
    "format_only_miss": "right content, wrong format (order, units, articles, number words)",
    "plain_wrong": "wrong answer",
    "unscored": "no ground truth to score against",
}


def _group(records: Iterable[TaskRecord]) -> Group:
    records = list(records)
    scored = [r for r in records if r.correct is not None]
    correct = sum(bool(r.correct) for r in scored)
    return Group(total=len(records), scored=len(scored), correct=correct,
                 accuracy=correct / len(scored) if scored else None)


def _grouped(records: list[TaskRecord], key: Any) -> dict[str, Group]:
    buckets: dict[str, list[TaskRecord]] = defaultdict(list)
    for record in records:
        buckets[key(record)].append(record)
    return {name: _group(buckets[name]) for name in sorted(buckets)}


def _drop(a: float | None, b: float | None) -> dict[str, float | None]:
    if a is None or b is None:
        return {"absolute": None, "relative": None}
    return {"absolute": a - b, "relative": (a - b) / a if a else None}


def summarize(records: list[TaskRecord], *, elapsed_s: float, meta: dict[str, Any] | None = None) -> RunSummary:
    """The summary of a run (see the module docstring for the conventions)."""
    overall = _group(records)
    levels = _grouped(records, lambda r: str(r.level) if r.level is not None else "unknown")
    acc = {lvl: levels[lvl]["accuracy"] if lvl in levels else None for lvl in ("1", "2", "3")}
    correct_steps = [r.steps for r in records if r.correct]
    prompt = sum(r.prompt_tokens for r in records)
    completion = sum(r.completion_tokens for r in records)
    latencies = [r.latency_s for r in records]
    categories = Counter(r.failure_category for r in records if r.failure_category != "correct")
    format_only = sum(1 for r in records if (score := r.score) is not None and score.format_only_miss)
    return RunSummary(
        exact_match_rate=overall["accuracy"],
        total=overall["total"],
        correct=overall["correct"],
        scored=overall["scored"],
        unscored=overall["total"] - overall["scored"],
        errors=sum(1 for r in records if r.error),
        format_only_misses=format_only,
        lenient_match_rate=(overall["correct"] + format_only) / overall["scored"] if overall["scored"] else None,
        level_metrics=levels,
        drop_rates={
            "1->2": _drop(acc["1"], acc["2"]), "2->3": _drop(acc["2"], acc["3"]), "1->3": _drop(acc["1"], acc["3"]),
        },
        avg_steps_correct=stats.fmean(correct_steps) if correct_steps else None,
        by_file_type=_grouped(records, lambda r: r.file_type or "none"),
        by_source=_grouped(records, lambda r: r.source),
        tokens={"prompt": prompt, "completion": completion, "total": prompt + completion,
                "per_task": (prompt + completion) / len(records) if records else 0.0},
        latency_s={"mean": stats.fmean(latencies) if latencies else 0.0,
                   "median": stats.median(latencies) if latencies else 0.0, "max": max(latencies, default=0.0)},
        retries=sum(r.retries for r in records),
        cost_usd={"total": round(sum(r.cost_usd for r in records), 6),
                  "per_task": round(sum(r.cost_usd for r in records) / len(records), 6) if records else 0.0},
        budget_exhausted=sum(1 for r in records if r.budget_exhausted),
        permanent_errors=sum(1 for r in records if r.permanent_error),
        waited={r.task_id: r.limiter_wait_s for r in sorted(records, key=lambda r: -r.limiter_wait_s)
                if r.limiter_wait_s >= WAIT_WORTH_NOTING_S},
        elapsed_s=elapsed_s,
        failure_categories=dict(categories.most_common()),
        attempts=attempt_metrics(records),
        meta=dict(meta or {}),
    )


def attempt_metrics(records: list[TaskRecord]) -> dict[str, Any]:
    """pass@1 (the first attempt right), pass@K (any attempt right) and majority accuracy over the scored tasks."""
    scored = [r for r in records if r.correct is not None]
    k = max((len(r.attempts) for r in records), default=1)

    def rate(values: list[bool | None]) -> float | None:
        return sum(bool(v) for v in values) / len(values) if values else None

    return {"k": k, "pass_at_1": rate([r.pass_at_1 for r in scored]), "pass_at_k": rate([r.pass_at_k for r in scored]),
            "majority": rate([r.correct for r in scored])}


def _attempt_line(metrics: dict[str, Any]) -> list[str]:
    k = metrics["k"]
    return [f"- **Attempts** (K = {k}): pass@1 {_pct(metrics['pass_at_1'])}, pass@{k} {_pct(metrics['pass_at_k'])}, "
            f"majority {_pct(metrics['majority'])}"]


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


def _cell(text: object, limit: int = 60) -> str:
    text = " ".join(str(text if text is not None else "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _group_table(title: str, groups: dict[str, Group]) -> list[str]:
    lines = [f"| {title} | Tasks | Scored | Correct | Accuracy |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {g['total']} | {g['scored']} | {g['correct']} | {_pct(g['accuracy'])} |"
              for name, g in groups.items()]
    return lines


def short_ids(task_ids: Iterable[str], minimum: int = 8) -> dict[str, str]:
    """Each id's shortest prefix of at least `minimum` characters that no other id shares (else the full id)."""
    ids = sorted(set(task_ids))
    short = {}
    for i, task_id in enumerate(ids):
        # In sorted order, the ids sharing the longest prefix with this one are its neighbours.
        shared = max((_common_prefix(task_id, ids[j]) for j in (i - 1, i + 1) if 0 <= j < len(ids)), default=0)
        short[task_id] = task_id[: max(minimum, shared + 1)]
    return short


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def recommendations(summary: RunSummary) -> list[str]:
    """Concrete next steps derived from the numbers (empty when nothing stands out)."""
    tips: list[str] = []
    cats, scored = summary.failure_categories, summary.scored or 1
    if n := cats.get("format_only_miss"):
        tips.append(f"{n} answer(s) had the right content in the wrong format: tighten the final-answer "
                    "instructions (no units unless asked, list order as asked, digits not words, no articles).")
    if n := cats.get("tool_failed"):
        tips.append(f"{n} task(s) failed on a tool: check the tool errors in details.jsonl and the file-type routes.")
    if n := cats.get("iteration_cap"):
        tips.append(f"{n} task(s) hit the iteration cap: raise MAX_ITERATIONS or give the agent better tool hints.")
    if n := cats.get("llm_error"):
        tips.append(f"{n} task(s) lost to endpoint errors: lower --concurrency, set LLM_REQUESTS_PER_MINUTE, "
                    "or rerun with --resume.")
    if n := cats.get("no_tool_result_used"):
        tips.append(f"{n} wrong answer(s) used no tool result: the agent guessed; "
                    "push it to search or read the file first.")
    weak = [(g["accuracy"], name) for name, g in summary.by_file_type.items()
            if g["scored"] >= 2 and g["accuracy"] is not None]
    if weak and (worst := min(weak))[0] < (summary.exact_match_rate or 0):
        tips.append(f"Weakest attachment type: {worst[1]} ({_pct(worst[0])}); improve its tool or route.")
    drop = summary.drop_rates["1->3"]["absolute"]
    if drop is not None and drop > 0.3:
        tips.append(f"Accuracy falls {100 * drop:.0f} points from level 1 to 3: "
                    "long multi-step tasks need planning help.")
    if summary.errors > 0.1 * scored:
        tips.append(f"{summary.errors} task(s) ended with an error: inspect them before trusting the score.")
    return tips


def scorer_name(records: Iterable[TaskRecord], meta: dict[str, Any]) -> str:
    """Which scorer a run's verdicts came from: the summary's meta, else its scored records, else the official."""
    if meta.get("scorer"):
        return str(meta["scorer"])
    names = sorted({r.score.scorer for r in records if r.score is not None})
    return " + ".join(names) if names else "official"


def _local_verdicts(records: list[TaskRecord], meta: dict[str, Any]) -> str:
    name = scorer_name(records, meta)
    return f"{'Exact match' if name == 'official' else 'Correct'} ({name} scorer)"


def _setting(value: Any) -> str:
    """A setting as a reader writes it: `a=1, b=x` for a mapping, `a, b` for a list, else the value."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_setting(v)}" for k, v in value.items()) or "(none)"
    if isinstance(value, (list, tuple)):
        return ", ".join(_setting(v) for v in value) or "(none)"
    return str(value)


def write_report(records: list[TaskRecord], summary: RunSummary, output_dir: Path) -> Path:
    """Write report.md and its chart (accuracy.png) into `output_dir`; return the report's path."""
    output_dir.mkdir(parents=True, exist_ok=True)
    plot_accuracy(summary, output_dir / CHART_NAME)
    meta = summary.meta
    lines = ["# GAIA evaluation report", "", "## Overview", ""]
    server = meta.get("verdicts")  # an API run: the scoring server's verdicts are the truth, not a local scorer's
    lines += [
        f"- **{f'Correct per the server ({server})' if server else _local_verdicts(records, meta)}**: "
        f"{_pct(summary.exact_match_rate)} "
        f"({summary.correct}/{summary.scored} scored; {summary.unscored} unscored, {summary.total} total)",
        *([] if server else [f"- **With format-only misses counted**: {_pct(summary.lenient_match_rate)}"]),
        *(_attempt_line(summary.attempts) if summary.attempts_k > 1 else []),
        f"- **Elapsed**: {summary.elapsed_s or 0.0:.1f} s; tokens {summary.tokens['total']} "
        f"({summary.tokens['per_task']:.0f} per task); retries {summary.retries}; errors {summary.errors}",
        f"- **Cost**: {_usd(summary.cost_usd.get('total'))} "
        f"({_usd(summary.cost_usd.get('per_task'))} per task; LLM_PRICE_*_PER_MTOK); "
        f"token budget exhausted on {summary.budget_exhausted} task(s)",
        *(["- **Waited for the rate limiter**: " + ", ".join(
            f"{t[:8]} {s:.1f} s" for t, s in list(summary.waited.items())[:10])] if summary.waited else []),
        "- **Average steps of correct answers**: "
        + ("n/a" if summary.avg_steps_correct is None else f"{summary.avg_steps_correct:.1f}"),
        "", f"![Accuracy by level and attachment type]({CHART_NAME})", "", "## Accuracy by level", "",
    ]
    lines += _group_table("Level", summary.level_metrics)
    lines += ["", "## Drop rates", "",
              "Absolute = accuracy points lost; relative = share of the easier level's accuracy lost.", "",
              "| From → to | Absolute | Relative |", "|---|---:|---:|"]
    lines += [f"| {k} | {_points(v['absolute'])} | {_pct(v['relative'])} |" for k, v in summary.drop_rates.items()]
    lines += ["", "## By attachment type", ""] + _group_table("Type", summary.by_file_type)
    lines += ["", "## By source", ""] + _group_table("Source", summary.by_source)
    lines += ["", "## Failure categories", "", "| Category | Tasks | Meaning |", "|---|---:|---|"]
    lines += [f"| {c} | {n} | {CATEGORY_HELP.get(c, '')} |" for c, n in summary.failure_categories.items()]
    lines += ["", "## Tasks", "",
              "| Task | Level | File | Expected | Predicted | Correct | Category | Steps | Latency (s) | Cost (USD) |",
              "|---|---:|---|---|---|:---:|---|---:|---:|---:|"]
    mark = {True: "✅", False: "❌ wrong", None: "–"}
    short = short_ids([r.task_id for r in records])
    for r in records:
        lines.append(
            f"| {short[r.task_id]} | {r.level if r.level is not None else ''} | {r.file_type or ''} "
            f"| {_cell(r.expected, 40)} "
            f"| {_cell(r.predicted if not r.error else f'{r.predicted} (error: {r.error})', 60)} | {mark[r.correct]} "
            f"| {r.failure_category} | {r.steps} | {r.latency_s:.1f} | {r.cost_usd:.4f} |"
        )
    lines += [""] + hints_markdown(records)
    tips = recommendations(summary)
    lines += ["", "## Recommendations", ""] + (
        [f"- {t}" for t in tips] or ["- Nothing stands out; look at the wrong answers one by one."])
    # The run's settings last: the score is what a reader wants first (issue 22), internals after it.
    lines += ["", "## Run settings", ""] + [f"- **{k}**: {_cell(_setting(v), 160)}" for k, v in meta.items()]
    path = output_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
