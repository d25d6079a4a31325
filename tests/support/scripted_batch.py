"""GAIA-format batches answered by a scripted model that follows a plan per task (the evaluation batch tests).

A task's plan is one function per model turn, from the tool results so far (and the site's base URL) to
the model's reply; the task is known from its question. The scripted model reads each tool result and
takes its next step from it (a regex over what the tool returned), so a tool that fails or hides the
fact makes the task wrong. The real pipeline and OpenAI client run against the scripted server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.gaia_fixture import FixtureTask
from tests.support.openai_server import Reply, call, first_user_text, say, tool_results

Plan = Callable[[list[str], str], Reply]
"""One model turn: (tool results so far, the site's base URL) -> the model's reply."""


@dataclass(frozen=True)
class PlannedTask:
    """One task: its question (may name `{site}`), the answer, the model's plan, an optional attachment."""

    key: str
    question: str
    answer: str
    plan: tuple[Plan, ...]
    file_name: str = ""
    """An attachment, written by `write_file` into the task's folder."""
    write_file: Callable[[Path], None] | None = field(default=None, compare=False)
    level: int = 2

    def fixture(self, prefix: str, site: str) -> FixtureTask:
        """The GAIA fixture task `prefix-key`, its question naming the site's base URL."""
        return FixtureTask(f"{prefix}-{self.key}", self.question.format(site=site), self.level, self.answer,
                           file_name=self.file_name, write_file=self.write_file)


def grab(pattern: str, text: str, flags: int = 0) -> str:
    """The first group of `pattern` in `text`, or a marker that makes the answer wrong."""
    found = re.search(pattern, text, flags)
    return found.group(1) if found else "NOT-FOUND"


def step(name: str, /, **args: Any) -> Plan:
    """A turn that calls tool `name` with `args` whatever came before; `{site}` in a string is the site's base URL."""
    return lambda results, site: call(name, **{k: v.format(site=site) if isinstance(v, str) else v
                                                for k, v in args.items()})


def answer(pattern: str, clean: Callable[[str], str] = lambda s: s, flags: int = 0) -> Plan:
    """The final turn: the answer read from the last tool result."""
    return lambda results, site: say(f"FINAL ANSWER: {clean(grab(pattern, results[-1], flags))}")


def task_asked(tasks: Sequence[PlannedTask], site: str, body: dict[str, Any]) -> PlannedTask:
    """The task whose question the request's first user message holds."""
    text = first_user_text(body)
    return next(t for t in tasks if t.question.format(site=site) in text)


Script = Callable[[dict[str, Any]], Reply]
"""A scripted model: the request body -> its reply."""


def plan_model(tasks: Sequence[PlannedTask], site: str,
               vision: Callable[[dict[str, Any]], Reply | None] = lambda body: None) -> Script:
    """The scripted model: `vision` answers image requests; else the turn is how many tool results came back."""
    def script(body: dict[str, Any]) -> Reply:
        seen = vision(body)
        if seen is not None:
            return seen
        task = task_asked(tasks, site, body)
        results = tool_results(body)
        return task.plan[min(len(results), len(task.plan) - 1)](results, site)
    return script


def scripted_settings(model_url: str, tmp_path: Path, **overrides: Any) -> Any:
    """Settings for the scripted model at `model_url`, RAG off, plus the test's `overrides`."""
    from config import load_settings

    return load_settings(OPENAI_BASE_URL=model_url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                         RAG_INDEX_DIR=tmp_path / "rag", **overrides)


def run_planned(samples: list[Any], settings: Any, output_dir: Path, concurrency: int = 2) -> Any:
    """The batch result of the real pipeline over `samples`: no delay between questions, no retries."""
    from agent.pipeline import Pipeline
    from evaluation.runner import RunConfig, run_batch

    pipeline = Pipeline(settings)
    pipeline.preload()
    try:
        return run_batch(samples, pipeline, RunConfig(concurrency=concurrency, output_dir=output_dir, use_rag=False),
                         settings.model_copy(update={"BATCH_QUESTION_DELAY": 0, "TASK_RETRY_MAX": 0}))
    finally:
        pipeline.close()  # its application's browsers


def records_by_key(samples: list[Any], tasks: Sequence[PlannedTask], records: list[Any]) -> dict[str, Any]:
    """The batch's records by task key (samples are in the tasks' order)."""
    by_key = {s.task_id: t.key for s, t in zip(samples, tasks, strict=True)}
    return {by_key[r.task_id]: r for r in records}
