"""`python -m tools`: list the active tools, or run one tool exactly as the agent would.

    python -m tools list                                     # active tools by tier, and why any is missing
    python -m tools list --tokens                            # ... with each schema's size in every request
    python -m tools call run_python --args-json '{"code": "print(6 * 7)"}'
    python -m tools call read_file --args-json '{"path": "/data/x.xlsx"}' --attachment /data/x.xlsx
    echo '{"code": "print(1)"}' | python -m tools call run_python --args-json -

`call` goes through `tools.core.executor.run_tool` with the attachments in `configurable.attachments`,
so timeouts, output truncation and error observations are the agent's. Exit status: 0 the tool
succeeded, 1 the tool reported a failure, 2 bad usage, bad configuration or the tool is unavailable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from command import UsageError, run_command
from config import Settings, load_settings
from tools.core.executor import run_tool
from tools.core.registry import FACTORIES, ToolRegistry, build_registry

CHARS_PER_TOKEN = 4
"""Rough size of a token in a JSON schema (what OpenAI-style servers count it as, give or take)."""


def schema_chars(tool: Any) -> int:
    """Characters of the tool's schema as the model's requests carry it (OpenAI's function format)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return len(json.dumps(convert_to_openai_tool(tool)))


def _list(settings: Settings, as_json: bool, tokens: bool = False, deps: dict[str, Any] | None = None) -> int:
    registry = build_registry(settings, deps=deps)
    tier_of = {name: tier for tier, names in registry.tiers.items() for name in names}
    sizes = {t.name: -(-schema_chars(t) // CHARS_PER_TOKEN) for t in registry.tools} if tokens else {}
    if as_json:
        print(json.dumps({"tools": [{"name": t.name, "tier": tier_of.get(t.name)}
                                    | ({"schema_tokens": sizes[t.name]} if tokens else {}) for t in registry.tools],
                          "missing": registry.missing} | ({"schema_tokens": sum(sizes.values())} if tokens else {}),
                         ensure_ascii=False))
        return 0
    for tool in registry.tools:
        summary = (tool.description or "").strip().splitlines()[0] if tool.description else ""
        size = f"{sizes[tool.name]:>5} tok  " if tokens else ""
        print(f"{tool.name:<18} [{tier_of.get(tool.name, '?')}]  {size}{summary}")
    for name, why in registry.missing.items():
        print(f"{name:<18} [missing]  {why}")
    if tokens:
        print(f"every request carries ~{sum(sizes.values()):,} tokens of tool schemas "
              f"(characters / {CHARS_PER_TOKEN}); a window of 16k or less offers only a task's set (agent.toolsets)")
    return 0


def _find(settings: Settings, name: str, deps: dict[str, Any] | None = None) -> tuple[Any, ToolRegistry]:
    """Build factories one at a time until one provides `name` (so `call` does not load every tool)."""
    seen = ToolRegistry()
    for factory in FACTORIES:
        registry = build_registry(settings, factories=[factory], deps=deps)
        seen.missing.update(registry.missing)
        seen.tools += registry.tools
        if (found := registry.get(name)) is not None:
            return found, seen
    return None, seen


def _read_args(raw: str) -> dict[str, Any]:
    text = sys.stdin.read() if raw == "-" else raw
    value = json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError("--args-json must be a JSON object, e.g. '{\"code\": \"print(1)\"}'")
    return value


def _call(settings: Settings, args: argparse.Namespace, deps: dict[str, Any] | None = None) -> int:
    try:
        tool_args = _read_args(args.args_json)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise UsageError(f"bad --args-json: {exc}") from exc
    attachments = []
    for raw in args.attachment or []:
        path = Path(raw).expanduser().resolve()
        if not path.exists():
            raise UsageError(f"--attachment {raw}: no such file")
        attachments.append(str(path))
    tool, seen = _find(settings, args.name, deps)
    if tool is None:
        if args.name in seen.missing:
            raise UsageError(f"{args.name} is unavailable: {seen.missing[args.name]}")
        raise UsageError(f"no tool named {args.name!r}; active tools: {', '.join(seen.names) or '(none)'}")
    outcome = run_tool(tool, tool_args, settings, config={"configurable": {"attachments": attachments}})
    if args.json:
        print(json.dumps({"tool": args.name, "ok": outcome.ok, "output": outcome.output,
                          "error_kind": outcome.error_kind, "duration_s": round(outcome.duration_s, 4),
                          "truncated_chars": outcome.truncated_chars}, ensure_ascii=False))
    else:
        print(outcome.output.rstrip("\n"))
    return 0 if outcome.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m tools", description="List the agent's tools or run one.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="print the active tools, their tier, and why any is missing")
    p_list.add_argument("--json", action="store_true", help="print one JSON object")
    p_list.add_argument("--tokens", action="store_true", help="show each tool schema's size in tokens, and the total")
    p_call = sub.add_parser("call", help="run one tool as the agent would and print its observation")
    p_call.add_argument("name", help="tool name, e.g. run_python")
    p_call.add_argument("--args-json", default="{}", help="the tool's arguments as a JSON object ('-' reads stdin)")
    p_call.add_argument("--attachment", action="append", help="a task attachment the tool may read (repeatable)")
    p_call.add_argument("--json", action="store_true",
                        help="print the outcome (output, ok, error kind, timing) as JSON")
    args = parser.parse_args(argv)
    return run_command(lambda: _run(args, load_settings()))


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from tools.browser.engines import BrowserEngines

    browsers = BrowserEngines()  # this command's browser pool, closed when it ends
    try:
        deps = {"browsers": browsers}
        return _list(settings, args.json, args.tokens, deps) if args.command == "list" else _call(settings, args, deps)
    finally:
        browsers.close()


if __name__ == "__main__":
    raise SystemExit(main())
