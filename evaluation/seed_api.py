"""The seed's evaluation API, kept working on top of the runner.

    evaluator = GAIAEvaluator(dataset=GAIADataset(split="validation", local_data_dir="gaia"), level=1)
    results = evaluator.evaluate(agent, max_samples=10)
    evaluator.export_to_gaia_format(results, "results.jsonl", include_reasoning=True)
    GAIAEvaluationTool().run(agent=agent, level=1, max_samples=10, export_results=True, generate_report=True)

`agent` is our `Pipeline`, or anything with `.run(prompt) -> str` (or a plain callable): its text goes
through the same final-answer extraction as ours. Such foreign agents run one task at a time (their
thread safety is unknown and their model requests cannot pass through our limiter).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent.answer import extract_final_answer
from agent.events import AnswerExtracted, ErrorEvent, Event, RouteDecided, Solution
from config import Settings, load_settings
from evaluation.dataset import GAIADataset, Sample
from evaluation.runner import RunConfig, RunResult, run_batch
from evaluation.submission import write_results_jsonl


class TextAgentAdapter:
    """Makes a `.run(prompt) -> str` agent (or a callable) look like a Pipeline to the runner."""

    def __init__(self, agent: Any) -> None:
        run = getattr(agent, "run", None)
        self._run: Callable[[str], Any] = run if callable(run) else agent
        if not callable(self._run):
            raise TypeError(f"{type(agent).__name__} has no run(prompt) method and is not callable")
        self.name = type(agent).__name__

    def preload(self) -> dict[str, str]:
        """Nothing to load."""
        return {}

    def with_gate(self, gate: Any) -> TextAgentAdapter:
        """A foreign agent's requests cannot be gated: the same adapter."""
        return self

    def solve(self, question: str, file_path: str | None = None, task_id: str | None = None, *,
              history: list[dict[str, Any]] | None = None, use_rag: bool = True, **_run_options: Any) -> Solution:
        """Call the agent once with the question (and the attachment's path) and extract its final answer.

        The runner's per-run options (iteration cap, strategy, tool cache) are the harness's own: a foreign
        agent runs as it is, so they are accepted and left unused.
        """
        prompt = question if not file_path else f"{question}\n\nThe task comes with the file {file_path}."
        start = time.monotonic()
        events: list[Event] = [RouteDecided(route="agent", reason=f"external agent {self.name}", file_path=file_path)]
        try:
            text = self._run(prompt)
            raw = text if isinstance(text, str) else str(text)
            events.append(AnswerExtracted(elapsed_s=round(time.monotonic() - start, 4),
                                          answer=extract_final_answer(raw), raw=raw, method="external_agent"))
        except Exception as exc:  # noqa: BLE001 - a failing agent fails its task, not the evaluation
            events.append(ErrorEvent(elapsed_s=round(time.monotonic() - start, 4), stage="agent",
                                     message=f"{type(exc).__name__}: {exc}"))
        return Solution.from_events(question, events, task_id=task_id, file_path=file_path)


def _as_pipeline(agent: Any) -> Any:
    return agent if callable(getattr(agent, "solve", None)) and callable(getattr(agent, "with_gate", None)) \
        else TextAgentAdapter(agent)


def _records_of(results: Any) -> list[Any]:
    """TaskRecords / result dicts from whatever `evaluate` or the runner returned."""
    if isinstance(results, RunResult):
        return list(results.records)
    if isinstance(results, dict):
        return list(results.get("results") or [])
    return list(results)


class GAIAEvaluator:
    """Evaluate an agent on a GAIA split (the seed's class)."""

    def __init__(self, dataset: GAIADataset | Sequence[Sample] | None = None, level: int | None = None, *,
                 settings: Settings | None = None, output_dir: Path | str | None = None,
                 concurrency: int | None = None, use_rag: bool = True) -> None:
        self.settings = settings or load_settings()  # the seed's API is an entry point: it may read them
        self.dataset = dataset if dataset is not None else GAIADataset(level=level, settings=self.settings)
        self.level = level
        self.output_dir = Path(output_dir) if output_dir else None
        self.concurrency = concurrency
        self.use_rag = use_rag
        self.last_run: RunResult | None = None

    def samples(self, max_samples: int | None = None) -> list[Sample]:
        """The dataset's samples at this level, the first `max_samples` of them."""
        ds = self.dataset
        samples = list(ds.samples or ds.load()) if isinstance(ds, GAIADataset) else list(ds)
        if self.level is not None:
            samples = [s for s in samples if s.level == self.level]
        return samples[:max_samples] if max_samples else samples

    def evaluate(self, agent: Any, max_samples: int | None = None) -> dict[str, Any]:
        """Run the agent over the samples; return the summary (plus 'accuracy' and per-task 'results')."""
        pipeline = _as_pipeline(agent)
        split = getattr(self.dataset, "split", "validation")
        out = self.output_dir or (Path(self.settings.OUTPUT_DIR)
                                  / f"{split}-{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}")
        foreign = isinstance(pipeline, TextAgentAdapter)
        config = RunConfig(split=split, level=self.level, max_samples=max_samples, output_dir=out, use_rag=self.use_rag,
                           concurrency=1 if foreign else self.concurrency, question_delay=0.0 if foreign else None,
                           resume=self.output_dir is not None and (out / "checkpoint.jsonl").exists())
        self.last_run = run_batch(self.samples(max_samples), pipeline, config, self.settings)
        summary = self.last_run.summary.to_dict()
        summary.update(accuracy=summary.get("exact_match_rate"), output_dir=str(self.last_run.output_dir),
                       results=[r.to_dict() for r in self.last_run.records])
        return summary

    def export_to_gaia_format(self, results: Any, path: Path | str, include_reasoning: bool = True) -> Path:
        """Write results.jsonl for the leaderboard from `evaluate()`'s output (or records)."""
        return write_results_jsonl(_records_of(results), Path(path), include_reasoning=include_reasoning)


class GAIAEvaluationTool:
    """One call from agent to files (the seed's tool): evaluate, export, report."""

    def __init__(self, settings: Settings | None = None, *, split: str = "validation",
                 local_data_dir: Path | str | None = None, dataset_name: str | None = None) -> None:
        self.settings = settings or load_settings()  # the seed's API is an entry point: it may read them
        self.split = split
        self.local_data_dir = local_data_dir
        self.dataset_name = dataset_name or self.settings.GAIA_DATASET

    def run(self, agent: Any = None, level: int | None = None, max_samples: int | None = None,
            export_results: bool = True, generate_report: bool = True,
            output_dir: Path | str | None = None) -> dict[str, Any]:
        """Evaluate `agent` (default: our Pipeline) and say where results.jsonl and report.md are.

        The runner always writes every file into the run folder; the flags choose what is returned:
        `export_results` adds 'results_path', `generate_report` adds 'report_path' and the report text.
        """
        if agent is None:
            from agent.pipeline import Pipeline

            agent = Pipeline(self.settings)
        dataset = GAIADataset(dataset_name=self.dataset_name, split=self.split, level=level,
                              local_data_dir=self.local_data_dir, settings=self.settings)
        evaluator = GAIAEvaluator(dataset=dataset, level=level, settings=self.settings, output_dir=output_dir)
        results = evaluator.evaluate(agent, max_samples=max_samples)
        out = Path(results["output_dir"])
        outcome: dict[str, Any] = {key: results[key] for key in ("accuracy", "total", "correct", "level_metrics",
                                                                  "elapsed_s", "output_dir")}
        if export_results:
            outcome["results_path"] = str(evaluator.export_to_gaia_format(results, out / "results.jsonl"))
        if generate_report:
            outcome["report_path"] = str(out / "report.md")
            outcome["report"] = (out / "report.md").read_text(encoding="utf-8")
        outcome["results"] = results["results"]
        return outcome

