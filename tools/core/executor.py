"""Run one tool call the way the agent does: time limit, output cap, failures as observations.

This is the single place where tool exceptions become text the model can act on (STYLE: convert
exceptions in one wrapper): `ToolFailure`, `MissingDependency`, timeouts and argument validation
errors. Any other exception is a bug: logged with its traceback, shown as an internal error (or, with
`raise_internal_errors`, re-raised: tests pass it so a tool's bug fails its test). The graph's tools node and
`python -m tools call` both use it.

It is also the one place the run's tool-result cache (`tools.core.replay_cache`, from the ToolContext) is
consulted and fed: a call recorded by the replayed run is answered from the record (`replayed`), every
call's outcome is kept.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import logging
import time
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ValidationError

from config import Settings, redact
from tools.core.artifacts import CONTENT_AND_ARTIFACT, ToolArtifact
from tools.core.context import ToolContext
from tools.core.errors import ErrorKind, MissingDependency, ToolFailure
from tools.core.outcome import ToolOutcome
from tools.core.paging import page_long_output
from tools.core.replay_cache import CachedResult

log = logging.getLogger(__name__)

def truncate(text: str, limit: int, tool_name: str, context: ToolContext) -> tuple[str, int]:
    """Fit `text` into `limit` characters; return (text, characters not shown).

    A longer output is not lost: it is saved in `context`'s run workspace and its first page is shown, with
    the read_file call that reads the next page (tools.core.paging).
    """
    if len(text) <= limit:
        return text, 0
    return page_long_output(text, tool_name, context.services, limit)


# Idle threads are reused; a tool stuck past its timeout keeps its thread, so the cap is generous.
_POOL = cf.ThreadPoolExecutor(max_workers=128, thread_name_prefix="tool")


def _invoke(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None) -> Any:
    if tool.response_format == CONTENT_AND_ARTIFACT:  # only a tool call gets the artifact back (on a ToolMessage)
        return tool.invoke(ToolCall(name=tool.name, args=args, id=f"run-{tool.name}", type="tool_call"), config=config)
    return tool.invoke(args, config=config)


def _thumbnail(raw: Any) -> str | None:
    artifact = getattr(raw, "artifact", None)
    return artifact.thumbnail if isinstance(artifact, ToolArtifact) else None


def run_tool(tool: BaseTool, args: dict[str, Any], settings: Settings, config: RunnableConfig | None = None, *,
             raise_internal_errors: bool = False) -> ToolOutcome:
    """Invoke `tool` with `args` under TOOL_TIMEOUT; never raises for the tool's own failures.

    A bug in the tool (any exception that is not one of the failures above) becomes an internal-error
    observation, or is re-raised with `raise_internal_errors` (tests: the bug fails the test). With a
    tool cache in the run's context, a recorded call is answered from it and every outcome is kept.
    """
    context = ToolContext.of(config)
    cache = context.tool_cache
    if cache is None:
        return _run_live(tool, args, settings, config, context, raise_internal_errors)
    started = time.monotonic()
    if (hit := cache.replay(tool.name, args, context.task_id)) is not None:
        outcome = ToolOutcome(output=hit.output, ok=hit.ok, duration_s=time.monotonic() - started,
                              truncated_chars=hit.truncated_chars, error_kind=hit.error_kind,
                              replayed=True)
    else:
        outcome = _run_live(tool, args, settings, config, context, raise_internal_errors)
    cache.keep(tool.name, args, context.task_id,
               CachedResult(outcome.output, outcome.ok, outcome.error_kind, outcome.truncated_chars))
    return outcome


def _run_live(tool: BaseTool, args: dict[str, Any], settings: Settings, config: RunnableConfig | None,
              context: ToolContext, raise_internal_errors: bool) -> ToolOutcome:
    """Run the tool itself (see `run_tool`)."""
    start = time.monotonic()
    limit = settings.TOOL_TIMEOUT
    # A worker thread lets us stop waiting; tools that spawn processes (run_python) kill their own children.
    # The pool is shared: starting a thread per call cost ~3 ms, more than most tools take.
    # Tools marked metadata={"inline": True} are pure and bounded (calculator): no thread hand-off.
    inline = bool((tool.metadata or {}).get("inline"))
    future = None if inline else _POOL.submit(contextvars.copy_context().run, _invoke, tool, args, config)
    error_kind: ErrorKind | None = None
    thumbnail: str | None = None
    try:
        # A little grace so a tool that enforces TOOL_TIMEOUT itself can report its own, more precise message.
        raw = _invoke(tool, args, config) if future is None else future.result(timeout=limit + 2.0)
        text = raw if isinstance(raw, str) else _stringify(raw)
        thumbnail = _thumbnail(raw)  # never shown to the model
    except cf.TimeoutError:
        error_kind = "timeout"
        text = (f"Error: {tool.name} did not finish within TOOL_TIMEOUT={limit:g}s. "
                "Try a smaller input, a narrower query, or a different tool.")
    except ToolFailure as exc:
        error_kind = exc.kind
        text = f"Error: {exc}"
    except MissingDependency as exc:
        error_kind = "missing_dependency"
        text = f"Error: {tool.name} cannot run here: {exc.reason}"
    except ValidationError as exc:
        error_kind = "bad_arguments"
        text = f"Error: invalid arguments for {tool.name}: {_short(exc)}. Check the argument names and types."
    except Exception as exc:  # a bug in the tool, not something the model did: log it loudly
        log.exception("internal error in tool %s", tool.name)
        if raise_internal_errors:
            raise
        error_kind = "internal"
        text = (f"Error: internal error in {tool.name} ({type(exc).__name__}: {_short(exc)}). This is a bug in the "
                "tool, not in your arguments: use another tool or approach.")
    finally:
        if future is not None:
            future.cancel()  # no-op once running; drops a call still queued behind hung tools
    text = redact(text, settings)
    text, cut = truncate(text, settings.MAX_FILE_SIZE, tool.name, context)
    if error_kind is None and text.startswith("Error:"):
        error_kind = "reported"
    return ToolOutcome(output=text, ok=error_kind is None, duration_s=time.monotonic() - start,
                       truncated_chars=cut, error_kind=error_kind, thumbnail=thumbnail)


def _stringify(value: Any) -> str:
    if value is None:
        return "(no output)"
    if hasattr(value, "content"):  # a ToolMessage
        return str(value.content)
    return str(value)


def _short(exc: BaseException, limit: int = 400) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"
