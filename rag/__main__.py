"""Command line: build, query, inspect and edit the knowledge base.

    python -m rag build --gaia-dir DIR --split validation [--index-dir DIR] [--append]
    python -m rag build --jsonl FILE [--from-run RUN_DIR] [--index-dir DIR] [--append]
    python -m rag query [--index-dir DIR] [--json] [--exclude-task-id ID] "question" ["question" ...]
    python -m rag stats [--index-dir DIR]
    python -m rag remove --task-id ID [--task-id ID ...] [--index-dir DIR]

`query --json` prints one JSON object per question, one per line, in order; the model loads once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from command import run_command
from config import load_settings
from rag.shortcut import FaissKnowledgeBase
from rag.sources import SourceError, from_gaia_dir, from_jsonl, from_run
from rag.store import KnowledgeBaseError
from rag.types import LookupResult


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rag", description="Build and query the RAG knowledge base.")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_dir(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--index-dir", help="index directory (default: RAG_INDEX_DIR)")
        return p

    build = with_dir(sub.add_parser("build", help="embed questions from one or more sources into the index"))
    build.add_argument("--gaia-dir", help="GAIA folder (DIR/2023/SPLIT/metadata.parquet|jsonl, or the split folder)")
    build.add_argument("--split", default="validation", help="GAIA split with answers (default: validation)")
    build.add_argument("--jsonl", action="append", default=[],
                       help="JSONL of {question, answer[, task_id, level, source]}")
    build.add_argument("--from-run", action="append", default=[],
                       help="finished evaluation run dir (its correct tasks)")
    build.add_argument("--append", action="store_true", help="add to the existing index instead of replacing it")

    query = with_dir(sub.add_parser("query", help="look questions up (one result line per question)"))
    query.add_argument("questions", nargs="+", help="question(s) to look up")
    query.add_argument("--json", action="store_true", help="print one JSON object per question per line")
    query.add_argument("--exclude-task-id", help="leave this task's entries out (as the evaluation does)")
    query.add_argument("--file-name", help="attachment file name that comes with the questions")

    with_dir(sub.add_parser("stats", help="entries by source and level"))
    remove = with_dir(sub.add_parser("remove", help="remove the entries of task ids (no rebuild)"))
    remove.add_argument("--task-id", action="append", required=True, help="task id to remove (repeatable)")
    return parser


def _knowledge_base(index_dir: str | None) -> FaissKnowledgeBase:
    overrides: dict[str, object] = {"RAG_ENABLED": True}  # the CLI is an explicit request to use the index
    if index_dir:
        overrides["RAG_INDEX_DIR"] = index_dir
    return FaissKnowledgeBase(load_settings(**overrides))


def _result_json(result: LookupResult) -> dict[str, Any]:
    best = result.best
    return {"tier": result.tier, "answer": result.answer, "similarity": best.similarity if best else 0.0,
            "matched_question": best.question if best else None, "task_id": best.task_id if best else None}


def _build(args: argparse.Namespace) -> int:
    if not (args.gaia_dir or args.jsonl or args.from_run):
        raise SourceError("give at least one source: --gaia-dir DIR, --jsonl FILE or --from-run RUN_DIR")
    entries = []
    if args.gaia_dir:
        entries += from_gaia_dir(args.gaia_dir, args.split)
    for path in args.jsonl:
        entries += from_jsonl(path)
    for path in args.from_run:
        entries += from_run(path)
    kb = _knowledge_base(args.index_dir)
    start = time.monotonic()
    report = kb.add(entries, replace_all=not args.append)
    print(f"{'appended' if args.append else 'built'} {kb.store.directory}: {report.added} added, "
          f"{report.replaced} replaced, {report.skipped} duplicates skipped; {len(kb.store)} entries in total "
          f"({time.monotonic() - start:.1f}s)")
    return 0


def _query(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args.index_dir)
    for question in args.questions:
        result = kb.lookup(question, exclude_task_id=args.exclude_task_id, file_name=args.file_name)
        if args.json:
            print(json.dumps(_result_json(result), ensure_ascii=False), flush=True)
        else:
            best = result.best
            shown = f"{best.similarity:.3f} {best.question[:80]!r}" if best else "-"
            print(f"{result.tier:<10} answer={result.answer!r} nearest={shown}\n           {result.note}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run one command; errors become one line on stderr and exit status 2."""
    return run_command(lambda: _dispatch(_parser().parse_args(argv)),
                       expected=(SourceError, KnowledgeBaseError, RuntimeError))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "build":
        return _build(args)
    if args.command == "query":
        return _query(args)
    kb = _knowledge_base(args.index_dir)
    if args.command == "stats":
        print(json.dumps(kb.stats(), indent=1))
        return 0
    removed = kb.remove(args.task_id)
    print(f"removed {removed} entr{'y' if removed == 1 else 'ies'}; {len(kb.store)} left in {kb.store.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
