"""Every API endpoint of the app, with who may call it, whether it spends and whether it may show answers.

One table, read by the handlers (`admit`) and by the test that builds the real app and refuses any
endpoint without a row (tests/visitors/test_endpoints.py). A new endpoint therefore states its policy
here before it can ship, instead of each handler deciding on its own whether a visitor may spend or
see GAIA's answers.

- `caller`: "owner" endpoints run only for a caller APP_ALLOWED_USERS admits (`visitors.access`);
  everyone else gets the refusal before any model request. "anyone" endpoints run for every caller.
- `spends`: the endpoint may make model or API requests on the owner's key (for an admitted caller
  only: an "anyone" endpoint that spends, the RAG lookup, spends nothing for the others).
- `may_show_answers`: its output may carry GAIA's reference answers (expected answers, stored RAG
  answers, annotators' steps) — to an admitted caller only; a visitor who may not spend never sees them.

Events that are not named endpoints are the tabs' glue (api_visibility="private": field copies into
State, page-load refreshes) or gradio's own ChatInterface plumbing; the one of them that runs a handler
of ours (`_submit_fn`) runs `chat`'s, under `chat`'s row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from config import Settings
from visitors.access import refusal_for

Caller = Literal["anyone", "owner"]


@dataclass(frozen=True)
class Endpoint:
    """One API endpoint's policy (see the module docstring for each field)."""

    caller: Caller
    spends: bool
    may_show_answers: bool
    what: str
    """What the endpoint does, in a line (docs/visitors.md shows the table)."""


ENDPOINTS: dict[str, Endpoint] = {
    "ask": Endpoint("owner", True, True, "Debug: one question through the agent, its trace and verdict"),
    "rerun_task": Endpoint("owner", True, True, "Debug: the last trace against a fresh run of the same question"),
    "chat": Endpoint("owner", True, True, "Chat: one turn of a conversation with the agent"),
    "evaluate": Endpoint("owner", True, True, "Batch: run a split (or the scoring API) and score it"),
    "resume": Endpoint("owner", True, True, "Batch: continue a run of this session from its checkpoint"),
    "rerun_failed": Endpoint("owner", True, True, "Batch: re-run Run A's failures, tool calls replayed"),
    "rag_lookup": Endpoint("anyone", True, True,
                           "Debug: the nearest stored questions; answers and model hints for admitted callers only"),
    "load_tasks": Endpoint("anyone", False, True,
                           "Debug: a split's tasks; expected answers for admitted callers only"),
    "preview": Endpoint("anyone", False, False, "Debug: an attachment as the agent's tool reads it (limited worker)"),
    "compare": Endpoint("anyone", False, False, "Batch: two of this session's runs side by side"),
    "stop": Endpoint("anyone", False, False, "Batch: stop this session's run"),
    "status": Endpoint("anyone", False, False, "Header: what the preload made ready"),
}


@dataclass(frozen=True)
class Admission:
    """What one call of an endpoint may do for its caller."""

    refusal: str | None
    """The message to return instead of running (an "owner" endpoint, caller not admitted); None: run."""
    may_spend: bool
    """The caller may make model requests (APP_ALLOWED_USERS admits them)."""
    show_answers: bool
    """GAIA's reference answers may be in the output (the row allows it and the caller may spend)."""


def admit(api_name: str, settings: Settings, profile: Any) -> Admission:
    """The admission of the caller of `profile` (a `gr.OAuthProfile`, a username or None) to `api_name`.

    Called by every handler before it spends or shows anything; a KeyError names an endpoint with no row.
    """
    policy = ENDPOINTS[api_name]
    refusal = refusal_for(settings, profile)
    may_spend = refusal is None
    return Admission(refusal=refusal if policy.caller == "owner" else None, may_spend=may_spend,
                     show_answers=may_spend and policy.may_show_answers)


def policy_table() -> str:
    """The table as Markdown (docs/visitors.md)."""
    rows = [f"| `/{name}` | {p.caller} | {'yes' if p.spends else 'no'} | {'yes' if p.may_show_answers else 'no'} "
            f"| {p.what} |" for name, p in ENDPOINTS.items()]
    return "\n".join(["| endpoint | caller | spends | may show answers | what |", "| --- | --- | --- | --- | --- |",
                      *rows])
