"""Command line: batch runs over GAIA, run comparison, and the Unit 4 scoring API.

    python -m evaluation run --data-dir DIR --split validation [--level N] [--max-samples N] [--task-id ID ...]
        [--concurrency N] [--delay S] [--output-dir DIR] [--resume [--retry-errors]] [--no-rag] [--scorer NAME]
        [--max-iterations N] [--max-cost-usd USD] [--attempts K] [--rerun-failed RUN_DIR [--only-category C]]
        [--replay RUN_DIR]
    python -m evaluation compare RUN_A RUN_B
    python -m evaluation api --username NAME [--agent-code URL] [--concurrency N]

Without --data-dir the split comes from the Hugging Face hub (HF_TOKEN, GAIA_REVISION). Ctrl-C stops
gracefully: finished tasks are kept and `--resume --output-dir DIR` finishes the rest.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from command import run_command
from config import ConfigError, load_settings
from evaluation.scorer import SCORERS

if TYPE_CHECKING:
    from application import Application


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _non_negative(value: str) -> float:
    number = float(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {number:g}")
    return number


def build_parser() -> argparse.ArgumentParser:
    """The CLI's arguments (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m evaluation", description="Evaluate the GAIA agent.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a batch over a GAIA split and write results, details, summary, report")
    run.add_argument("--data-dir", type=Path, help="local GAIA folder (with 2023/<split>/); default: the hub")
    run.add_argument("--split", default="validation", choices=["validation", "test"])
    run.add_argument("--level", type=int, choices=[1, 2, 3])
    run.add_argument("--max-samples", type=_positive)
    run.add_argument("--task-id", action="append", dest="task_ids", metavar="ID", help="repeatable")
    run.add_argument("--concurrency", type=_positive, help="tasks at once (default BATCH_CONCURRENCY)")
    run.add_argument("--delay", type=_non_negative, help="seconds between task starts at concurrency 1 "
                                                         "(default BATCH_QUESTION_DELAY)")
    run.add_argument("--output-dir", type=Path, help="run folder (default OUTPUT_DIR/<split>-<time>)")
    run.add_argument("--resume", action="store_true", help="skip tasks already in the run folder's checkpoint")
    run.add_argument("--retry-errors", action="store_true",
                     help="with --resume: solve again the tasks recorded with an error (e.g. after a quota outage)")
    run.add_argument("--no-rag", action="store_true", help="do not consult the knowledge base")
    run.add_argument("--scorer", choices=list(SCORERS),
                     help="how answers are scored (default: official; with --resume: the run folder's own)")
    run.add_argument("--max-iterations", type=_positive, metavar="N",
                     help="assistant turns per task for this run (default MAX_ITERATIONS; kept in run.json)")
    run.add_argument("--strategy", choices=["react", "team"],
                     help="what solves each task: one ReAct loop or the team (default AGENT_STRATEGY; with --resume: "
                          "the run folder's own, kept in run.json)")
    run.add_argument("--max-cost-usd", type=_non_negative, metavar="USD",
                     help="start no new task once the run (its earlier resumes included) cost this much "
                          "(default BATCH_MAX_COST_USD; 0 = no cap)")
    run.add_argument("--attempts", type=_positive, metavar="K",
                     help="solve each task K times independently and keep the majority answer; the report gives "
                          "pass@1, pass@K and majority accuracy (default ATTEMPTS)")

    run.add_argument("--rerun-failed", type=Path, metavar="RUN_DIR",
                     help="run only RUN_DIR's wrong, errored or cut tasks, into a new folder linked to it")
    run.add_argument("--only-category", metavar="C",
                     help="with --rerun-failed: only tasks of this failure or repair category (e.g. tool_failed)")
    run.add_argument("--replay", type=Path, metavar="RUN_DIR",
                     help="answer tool calls recorded in RUN_DIR's tool cache from it; the others run live")

    cmp = sub.add_parser("compare", help="fixed / regressed / unchanged tasks and accuracy per level of two runs")
    cmp.add_argument("run_a", type=Path)
    cmp.add_argument("run_b", type=Path)

    api = sub.add_parser("api", help="answer the Unit 4 scoring API's questions, submitting after each task")
    api.add_argument("--username", required=True, help="Hugging Face username")
    api.add_argument("--agent-code", help="link to the agent's code (default: the Space's tree from SPACE_ID)")
    api.add_argument("--concurrency", type=_positive)
    return parser


class ProgressBar:
    """A tqdm bar fed by the runner's progress callbacks."""

    def __init__(self, unit: str = "task") -> None:
        self.bar: tqdm | None = None
        self.unit = unit

    def __call__(self, progress: Any) -> None:
        """Move the bar to `progress` (created on the first call, when the total is known)."""
        if self.bar is None:
            self.bar = tqdm(total=progress.total, initial=progress.done, unit=self.unit, dynamic_ncols=True,
                            file=sys.stderr)
        self.bar.n = progress.done
        self.bar.set_postfix(correct=f"{progress.correct}/{progress.scored}", errors=progress.errors, refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        """Close the bar, if one was started."""
        if self.bar is not None:
            self.bar.close()


def _in_background(job: Callable[[threading.Event], Any]) -> Any:
    """Run `job(stop)` in a thread; Ctrl-C sets `stop` (graceful) and a second Ctrl-C gives up waiting."""
    stop = threading.Event()
    finished = threading.Event()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = job(stop)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            box["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=target, name="evaluation", daemon=True).start()
    # Event.wait (not Thread.join) so that a Ctrl-C landing mid-wait leaves nothing in a half state.
    try:
        while not finished.wait(0.2):
            pass
    except KeyboardInterrupt:
        stop.set()
        print("\nstopping: no new task starts; waiting for the running ones (Ctrl-C again to quit now)…",
              file=sys.stderr)
        while not finished.wait(0.2):
            pass
    if "error" in box:
        raise box["error"]
    return box.get("value")


def cmd_run(args: argparse.Namespace, app: Application) -> int:
    """`run`: evaluate the agent on a local GAIA split and print the summary; 130 if stopped early."""
    settings = app.settings
    from evaluation.runner import RunConfig, run_evaluation

    config = RunConfig(split=args.split, data_dir=args.data_dir, level=args.level, max_samples=args.max_samples,
                       task_ids=args.task_ids or [], concurrency=args.concurrency, question_delay=args.delay,
                       output_dir=args.output_dir, resume=args.resume, retry_errors=args.retry_errors,
                       use_rag=not args.no_rag, scorer=args.scorer, max_iterations=args.max_iterations,
                       max_cost_usd=args.max_cost_usd, strategy=args.strategy, attempts=args.attempts,
                       replay_from=args.replay.expanduser().resolve() if args.replay else None)
    config = _as_rerun(args, config)
    bar = ProgressBar()
    try:
        result = _in_background(lambda stop: run_evaluation(config, settings, on_progress=bar, stop=stop, app=app))
    finally:
        bar.close()
    s = result.summary
    rate = "n/a" if s.exact_match_rate is None else f"{s.exact_match_rate:.1%}"
    verdicts = s.verdicts[0].lower() + s.verdicts[1:]
    print(f"{verdicts}: {rate} ({s.correct}/{s.scored} scored, {s.total} recorded, {s.errors} errors) "
          f"in {s.elapsed_s or 0.0:.1f} s")
    for level, m in sorted(s.level_metrics.items()):
        acc = "n/a" if m.get("accuracy") is None else f"{m['accuracy']:.1%}"
        print(f"  level {level}: {acc} ({m.get('correct', 0)}/{m.get('scored', m.get('total', 0))})")
    for problem in result.submission_problems:
        print(f"submission check: {problem}", file=sys.stderr)
    cost = s.meta.get("cost_usd")
    if cost is not None:
        print(f"cost: ${cost:.4f} for the run so far ({s.cost_usd['total']:.4f} over its recorded tasks)")
    print(f"output: {result.output_dir}")
    if result.stopped:
        if reason := s.meta.get("stopped_reason"):
            print(reason)
        print(f"stopped with {s.remaining} task(s) left: finish with "
              f"python -m evaluation run --resume --output-dir {result.output_dir} (its run.json keeps the selection)")
        return 130
    return 0


def _as_rerun(args: argparse.Namespace, config: Any) -> Any:
    """With --rerun-failed: the config re-running that folder's failures (evaluation.rerun)."""
    from evaluation.rerun import rerun_config
    from evaluation.runner import RunError

    if args.only_category and not args.rerun_failed:
        raise RunError("--only-category narrows --rerun-failed RUN_DIR: give the run folder too.")
    if not args.rerun_failed:
        return config
    if args.resume:
        raise RunError("--rerun-failed starts a new run folder: it cannot be combined with --resume.")
    return rerun_config(args.rerun_failed, config, args.only_category)


def cmd_compare(args: argparse.Namespace) -> int:
    """`compare`: print the markdown comparison of two run folders."""
    from evaluation.compare import compare_runs

    print(compare_runs(args.run_a, args.run_b).to_markdown())
    return 0


def cmd_api(args: argparse.Namespace, app: Application) -> int:
    """`api`: answer the scoring API's questions and (optionally) submit them."""
    settings = app.settings
    if not settings.llm_configured:
        raise ConfigError(settings.llm_missing_message())
    from agent.pipeline import Pipeline
    from evaluation.scoring_api import agent_code_for, run_api_evaluation

    agent_code = agent_code_for(settings, args.agent_code)
    if not agent_code:
        raise ConfigError("Pass --agent-code URL (a link to your agent's code), or set SPACE_ID.")
    bar = ProgressBar()
    try:
        result = _in_background(lambda stop: run_api_evaluation(
            args.username, agent_code, Pipeline(settings, app=app), settings, concurrency=args.concurrency,
            on_progress=bar, stop=stop))
    finally:
        bar.close()
    for problem in result.errors:
        print(f"problem: {problem}", file=sys.stderr)
    data = result.to_dict()
    print(data.get("message") or "no verdict")
    print(f"verdicts known for {data['verdict_known']}/{data['answered']} task(s), {data['correct_known']} correct")
    print(f"output: {result.output_dir}")
    return 0 if result.response is not None else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (2 for configuration or input errors)."""
    from evaluation.compare import CompareError
    from evaluation.dataset import DatasetError
    from evaluation.runner import RunError

    return run_command(lambda: _dispatch(build_parser().parse_args(argv)),
                       expected=(RunError, DatasetError, CompareError))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "compare":
        return cmd_compare(args)
    from application import Application

    with Application(load_settings()) as app:  # this command's windows, endpoint checks, knowledge base
        return cmd_run(args, app) if args.command == "run" else cmd_api(args, app)


if __name__ == "__main__":
    sys.exit(main())
