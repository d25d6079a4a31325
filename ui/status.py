"""Status lines: what the preload made ready (header) and how far a batch run is (progress)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ui.session import public_text

if TYPE_CHECKING:
    from evaluation.run_summary import RunSummary

LoadState = Literal["idle", "loading", "ready", "failed"]

LLM_MISSING = "not configured — set OPENAI_API_KEY or OPENAI_BASE_URL"
LABELS = {"llm": "LLM", "rag": "RAG", "ocr": "OCR", "tools": "Tools", "graph": "Agent graph",
          "embeddings": "Embeddings", "audio": "Audio", "vision": "Vision", "sandbox": "Sandbox",
          "openalex": "OpenAlex", "unpaywall": "Unpaywall"}
_BAD_WORDS = ("missing", "empty", "not configured", "unavailable", "failed", "error", "disabled", "off", "no key")
_FATAL_WORDS = ("unreachable", "not served by")
"""An endpoint that cannot answer (or lacks the model): shown in red, requests fail at once."""


def _label(key: str) -> str:
    return LABELS.get(key.lower(), key.replace("_", " ").capitalize())


def _mark(text: str) -> str:
    lowered = text.lower()
    if any(word in lowered for word in _FATAL_WORDS):
        return "❌"
    return "⚠️" if any(word in lowered for word in _BAD_WORDS) else "✅"


@dataclass(frozen=True)
class StatusLine:
    """The header's state: `summary` fits one line (the collapsed header); `entries` are the details."""

    summary: str
    entries: tuple[str, ...] = ()

    def markdown(self) -> str:
        """Summary, then the entries on one line (the `/status` API's text)."""
        return self.summary + "  \n" + " · ".join(self.entries)

    def details(self) -> str:
        """The expanded header: one entry per line."""
        return "\n".join(f"- {entry}" for entry in self.entries)


GLANCE = ("llm", "rag", "openalex")
"""Parts the collapsed header names when present (can it answer? does the knowledge base hold anything? how far
do scholarly searches go today?)."""
OPENALEX_KEYLESS = "no key: ~10 searches a day"
PENDING = ("llm", "tools", "graph", "rag")
"""What the preload makes ready, in its order: shown as loading until it reports them."""


def _head(state: LoadState, llm_configured: bool, error: str | None, elapsed_s: float | None, preload: bool) -> str:
    if state == "idle":
        return ("⏳ **Starting** the agent load…" if preload
                else "💤 The agent loads with the first request (APP_PRELOAD=false).")
    if state == "loading":
        took = f" ({elapsed_s:.0f}s)" if elapsed_s is not None else ""
        return f"⏳ **Loading**{took}… requests wait for it."
    if state == "failed":
        return f"❌ **Agent failed to load:** {error or 'unknown error'}"
    took = f" in {elapsed_s:.1f}s" if elapsed_s is not None else ""
    return (f"🟢 **Ready**{took}" if llm_configured else
            f"🟡 **Loaded without a model**{took}: previews and RAG lookups work; questions need a model.")


def preload_status(state: LoadState, components: Mapping[str, str] | None = None, *, llm_configured: bool,
                   model_name: str = "", error: str | None = None, elapsed_s: float | None = None,
                   preload: bool = True) -> StatusLine:
    """The header: one entry per component (loading ones marked ⏳); the LLM entry says how to fix a missing endpoint.

    `preload` (APP_PRELOAD): while idle, the load is about to start (True) or waits for the first request.
    Without a model the state is never a green Ready: questions cannot be answered. The summary line
    carries the head and every problem (red or warning) in short, so the collapsed header still tells.
    """
    comps = dict(components or {})
    if not llm_configured:
        comps["llm"] = LLM_MISSING
    elif "llm" not in comps:
        comps["llm"] = f"{model_name} (configured)" if model_name else "configured"
    if state == "loading":
        comps = {**{k: "⏳ loading…" for k in PENDING if k not in comps}, **comps}
    entries, problems = [], []
    for key in ["llm", *[k for k in comps if k != "llm"]]:
        value = " ".join(str(comps[key]).split())
        mark = "⏳" if value.startswith("⏳") else _mark(value)
        value = value.removeprefix("⏳ ")
        shown = f'<span style="color:#dc2626">{value}</span>' if mark == "❌" else value
        entries.append(f"{mark} **{_label(key)}**: {shown}")
        if key in GLANCE or mark in ("❌", "⚠️") and key == "rag_error":
            # At a glance: the model and the knowledge base always, a red verdict whole, others cut short.
            brief = shown if mark == "❌" else value if len(value) <= 60 else value[:59] + "…"
            if key == "openalex" and value.startswith(OPENALEX_KEYLESS):
                brief = OPENALEX_KEYLESS
            problems.append(f"{mark} {_label(key)}: {brief}")
    head = _head(state, llm_configured, error, elapsed_s, preload)
    return StatusLine(" · ".join([head, *problems]), tuple(entries))


def research_status(settings: Any) -> dict[str, str]:
    """The scholarly services' header entries: OpenAlex's key (its daily budget), Unpaywall's email.

    Only whether a key or email is set is shown, never its value (the header is public on a Space).
    """
    if not settings.OPENALEX_API_URL:
        return {}
    keyed = settings.OPENALEX_API_KEY is not None and settings.OPENALEX_API_KEY.get_secret_value().strip()
    status = {"openalex": "key set" if keyed else
              f"{OPENALEX_KEYLESS} (set OPENALEX_API_KEY, free at openalex.org/settings/api, for ~1,000; "
              "DOI lookups are free either way)"}
    if settings.UNPAYWALL_API_URL:
        status["unpaywall"] = ("email set: paper_lookup finds open-access copies there"
                               if settings.UNPAYWALL_EMAIL.strip() else
                               "not used: set UNPAYWALL_EMAIL (your email, which Unpaywall requires) for its "
                               "open-access copies; OpenAlex's are shown meanwhile")
    return status


def rag_status(kb: Any, settings: Any) -> str:
    """The knowledge base's state now (its size on disk), without a server path or a CLI hint on a Space."""
    if not settings.RAG_ENABLED:
        return "off (RAG_ENABLED=false)"
    store = getattr(kb, "store", None)
    if store is None:
        return "empty" if type(kb).__name__ == "EmptyKnowledgeBase" else type(kb).__name__
    count = len(store)
    if count:
        return f"{count:,} entries ({store.model})"
    if settings.SPACE_ID:
        return ("empty: this Space has no index (data/ is not in the repository); "
                "see the README's Space section to ship one")
    return (f"empty — build one with `python -m rag build --gaia-dir DIR --split validation` "
            f"(index folder {public_text(str(store.directory), settings)})")  # anyone reads the header


def format_duration(seconds: float | None) -> str:
    """`1h 02m`, `3m 05s`, `12s`; '?' when unknown."""
    if seconds is None or seconds != seconds or seconds < 0:  # NaN check without math
        return "?"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s}s"


def progress_line(done: int, total: int, correct: int, scored: int, errors: int = 0,
                  elapsed_s: float = 0.0, eta_s: float | None = None) -> str:
    """`3/6 done · 2/3 correct (67%) · 1 error · 12s elapsed · ETA 20s`."""
    parts = [f"{done}/{total} done"]
    if scored:
        parts.append(f"{correct}/{scored} correct ({100 * correct / scored:.0f}%)")
    else:
        parts.append(f"{correct} correct")
    if errors:
        parts.append(f"{errors} error" + ("s" if errors != 1 else ""))
    parts.append(f"{format_duration(elapsed_s)} elapsed")
    if done < total:
        parts.append(f"ETA {format_duration(eta_s)}")
    return " · ".join(parts)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def run_summary(summary: RunSummary) -> str:
    """One Markdown line from a run's summary: accuracy (named by its scorer), attempts, levels, errors, time."""
    parts = [f"**{summary.verdicts} {_pct(summary.exact_match_rate)}** "
             f"({summary.correct}/{summary.scored} scored"
             + (f", {summary.unscored} unscored" if summary.unscored else "") + ")"]
    if summary.format_only_misses:
        parts.append(f"with format-only misses {_pct(summary.lenient_match_rate)}")
    if (k := summary.attempts_k) > 1:
        parts.append(f"pass@1 {_pct(summary.attempts.get('pass_at_1'))}, pass@{k} "
                     f"{_pct(summary.attempts.get('pass_at_k'))}, majority {_pct(summary.attempts.get('majority'))}")
    for level, group in sorted(summary.level_metrics.items()):
        if group.get("scored"):
            parts.append(f"level {level}: {group.get('correct', 0)}/{group['scored']}")
    if summary.errors:
        parts.append(f"{summary.errors} error" + ("s" if summary.errors != 1 else ""))
    if total := summary.tokens.get("total"):
        parts.append(f"{total:,} tokens ({summary.tokens.get('per_task', 0):,.0f}/task)")
    if summary.elapsed_s is not None:
        parts.append(f"{format_duration(summary.elapsed_s)} elapsed")
    return " · ".join(parts)
