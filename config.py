"""The one settings object: every limit and provider setting, read once from the environment / `.env`.

No other module reads `os.environ`; components receive a `Settings` (or the values they need).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent


def _sandbox_alias(value: object) -> object:
    """`strict` (the setting's old name for bubblewrap) keeps existing .env files working."""
    return "bwrap" if isinstance(value, str) and value.strip().lower() == "strict" else value


Strategy = Literal["react", "team"]
"""What runs between the router and answer extraction (AGENT_STRATEGY)."""

SandboxMode = Annotated[Literal["auto", "bwrap", "landlock", "degraded"], BeforeValidator(_sandbox_alias)]


class ConfigError(ValueError):
    """A setting has an invalid value; the message names the environment variable."""


class Settings(BaseSettings):
    """Typed settings; field names are the environment variable names (case-insensitive)."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False, frozen=True
    )

    # --- harness limits -------------------------------------------------------------------
    MAX_ITERATIONS: int = Field(
        10, ge=1,
        description="Assistant turns before the loop is cut and a best-effort answer is forced.",
    )
    LLM_TIMEOUT: float = Field(120, gt=0, description="Seconds one model request may take.")
    TOOL_TIMEOUT: float = Field(
        30, gt=0,
        description="Seconds one tool call may take (wall time; also the sandbox's CPU limit).",
    )
    MAX_FILE_SIZE: int = Field(
        10000, ge=100,
        description="Characters of one tool reply: longer texts come in pages of this size, each naming the call that "
                    "reads the next.",
    )
    RATE_LIMIT_RETRY_MAX: int = Field(
        5, ge=0,
        description="Retries of one model request on 429 / 5xx / connection errors.",
    )
    RATE_LIMIT_RETRY_BASE_DELAY: float = Field(
        10, ge=0,
        description="First backoff delay in seconds (doubles each retry) when no Retry-After is sent.",
    )
    BATCH_QUESTION_DELAY: float = Field(
        5, ge=0,
        description="Minimum seconds between task starts when a batch runs with concurrency 1.",
    )

    # --- model provider (any OpenAI-compatible endpoint) -----------------------------------
    OPENAI_API_KEY: SecretStr | None = Field(
        None,
        description="API key of the endpoint (not needed for a local vLLM/Ollama).",
    )
    OPENAI_BASE_URL: str | None = Field(
        None,
        description="Base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1.",
    )
    MODEL_NAME: str = Field("gpt-4o-mini", description="Chat model used by the agent loop.")
    VISION_MODEL_NAME: str = Field("", description="Model for analyze_image and video keyframes (on the vision "
                                   "endpoint); empty = MODEL_NAME, `none` = vision off (images fall back to OCR).")
    # The vision role's own endpoint (issue 23): e.g. a text model on a local server, vision on a hosted one.
    VISION_BASE_URL: str | None = Field(None, description="Base URL of the OpenAI-compatible endpoint serving "
                                        "VISION_MODEL_NAME; empty = OPENAI_BASE_URL (the agent's endpoint).")
    VISION_API_KEY: SecretStr | None = Field(None, description="API key of the vision endpoint; "
                                             "empty = OPENAI_API_KEY.")
    LLM_TEMPERATURE: float = Field(0.0, ge=0, le=2, description="Sampling temperature of the agent model.")
    LLM_REQUESTS_PER_MINUTE: float = Field(
        0, ge=0,
        description="Known request rate limit of the endpoint (0 = unknown; the limiter adapts to 429s).",
    )
    LLM_TOKENS_PER_MINUTE: float = Field(
        0, ge=0,
        description="Known token rate limit of the endpoint (0 = unknown; learnt from x-ratelimit-* headers and 429 "
                    "bodies).",
    )
    LLM_TOOL_CHOICE: str = Field(
        "auto",
        description="`tool_choice` sent whenever tools are bound (auto, required, none); some servers drop tools "
                    "without it.",
    )
    LLM_MAX_TOKENS: int = Field(
        8192, ge=16,
        description="Completion limit sent with every request (max_tokens); generous for reasoning models.",
    )

    # --- budgets: the model's window, tokens and cost per task and per run ------------------------
    LLM_CONTEXT_TOKENS: int = Field(
        0, ge=0,
        description="The model's context window in tokens (0 = learn it: vLLM's /v1/models max_model_len, llama.cpp's "
                    "/props n_ctx, or the limit an overflow error states; else 128000). Every request leaves room for "
                    "LLM_MAX_TOKENS.",
    )
    CONTEXT_MASK_RATIO: float = Field(
        1.0, gt=0, le=1,
        description="Share of the window past which the oldest tool observations are masked (replaced by their first "
                    "line and the read_file call that reads them whole); 1 = only when a request would not fit the "
                    "window less the reply (LLM_MAX_TOKENS) and a 2% margin. Lower it to mask earlier.",
    )
    MAX_TOKENS_PER_TASK: int = Field(
        0, ge=0,
        description="Prompt + completion tokens one task may spend over all its model calls (0 = no limit); once "
                    "passed, no further tool call is made and one best-effort answer is asked for.",
    )
    LLM_PRICE_INPUT_PER_MTOK: float = Field(
        0, ge=0,
        description="USD per million prompt tokens (0 = unknown): cost per model call, task and run.",
    )
    LLM_PRICE_OUTPUT_PER_MTOK: float = Field(
        0, ge=0,
        description="USD per million completion tokens (0 = unknown).",
    )
    BATCH_MAX_COST_USD: float = Field(
        0, ge=0,
        description="Cost at which a batch run starts no new task (0 = no cap); earlier resumes of the run count; "
                    "`--max-cost-usd` sets it for one invocation.",
    )

    # --- tools ------------------------------------------------------------------------------
    SEARCH_PROVIDERS: str = Field(
        "duckduckgo,tavily,searxng,wikipedia",
        description="web_search providers in failover order.",
    )
    SEARCH_MAX_RESULTS: int = Field(5, ge=1, le=20, description="Results per web_search call.")
    TAVILY_API_KEY: SecretStr | None = Field(None, description="Key for the Tavily search provider.")
    SEARXNG_URL: str | None = Field(None, description="Base URL of a SearXNG instance (JSON API).")
    WIKIPEDIA_API_URL: str = Field(
        "https://en.wikipedia.org/w/api.php",
        description="MediaWiki API used by the wikipedia search provider, wikipedia_page and wikipedia_revisions.",
    )
    BLOCKED_DOMAINS: str = Field(
        "huggingface.co/datasets/gaia-benchmark,huggingface.co/spaces/gaia-benchmark,hf.co/datasets/gaia-benchmark",
        description="Comma-separated URL prefixes never returned by search or fetched (they mirror GAIA answers).",
    )
    HTTP_USER_AGENT: str = Field(
        "gaia-agent-harness/0.1.0 python-httpx",
        description="User-Agent sent to the APIs whose policies ask for a contact (Wikimedia, OpenAlex, Crossref, "
                    "Nominatim, and the other configured research APIs): `<client>/<version> (<contact>) <library>`. "
                    "Add your own contact (URL or email), e.g. `gaia-agent-harness/0.1.0 (mailto:you@example.org) "
                    "python-httpx`; it is never sent to web pages (FETCH_USER_AGENT).",
    )
    FETCH_ALLOWED_HOSTS: str = Field(
        "",
        description="Comma-separated host:port pairs that fetching tools may reach although they are loopback/private "
                    "(tests, intranets).",
    )
    WAYBACK_API_URL: str = Field(
        "https://archive.org/wayback/available",
        description="Wayback Machine availability API used by the wayback tool.",
    )
    ARXIV_API_URL: str = Field("https://export.arxiv.org/api/query", description="arXiv API used by arxiv_search.")
    # scholarly databases, maps and downloads (issue 20)
    OPENALEX_API_URL: str = Field(
        "https://api.openalex.org",
        description="OpenAlex API used by scholarly_search and paper_lookup (titles, abstracts, open-access copies).",
    )
    CROSSREF_API_URL: str = Field(
        "https://api.crossref.org",
        description="Crossref REST API used by paper_lookup for a DOI's metadata.",
    )
    UNPAYWALL_API_URL: str = Field(
        "https://api.unpaywall.org",
        description="Unpaywall API used by paper_lookup for a DOI's open-access copy (needs UNPAYWALL_EMAIL).",
    )
    UNPAYWALL_EMAIL: str = Field(
        "",
        description="Your email, sent to Unpaywall (required there) and to Crossref as `mailto` (its polite pool); "
                    "empty = Unpaywall skipped, OpenAlex's best_oa_location used.",
    )
    CONTACT_EMAIL: str = Field(
        "",
        description="A contact email sent as `mailto` to Crossref (its polite pool) when UNPAYWALL_EMAIL is empty "
                    "(OpenAlex retired `mailto` for OPENALEX_API_KEY).",
    )
    ORCID_API_URL: str = Field("https://pub.orcid.org/v3.0", description="ORCID public API (v3.0) used by orcid_works.")
    NOMINATIM_URL: str = Field(
        "https://nominatim.openstreetmap.org",
        description="Nominatim geocoder used by geocode, route and nearby (at most one request per second from the "
                    "whole app).",
    )
    OSRM_URL: str = Field(
        "https://router.project-osrm.org",
        description="OSRM routing server used by route (the public demo serves car routes only).",
    )
    OVERPASS_URL: str = Field(
        "https://overpass-api.de/api/interpreter",
        description="Overpass API used by nearby (OpenStreetMap features around a place).",
    )
    # --- live web: OpenAlex key, site-facing user agent (issue 34, 36) ---
    OPENALEX_API_KEY: SecretStr | None = Field(
        None,
        description="OpenAlex API key (free at https://openalex.org/settings/api), sent as `api_key`. Without one "
                    "OpenAlex allows about $0.01 a day (~10 searches); with one $1 (~1,000 searches; DOI lookups "
                    "are free either way).",
    )
    FETCH_USER_AGENT: str = Field(
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
        description="User-Agent fetch_webpage (and image and video downloads) send to web pages: a browser's, "
                    "without the owner's contact (HTTP_USER_AGENT goes only to the APIs that ask for one).",
    )
    MAX_DOWNLOAD_MB: float = Field(
        50, gt=0,
        description="Largest file fetch_webpage downloads (streamed into the run's workspace); a larger Content-Length "
                    "is refused before reading, a longer stream is cut.",
    )
    WHISPER_MODEL: str = Field(
        "tiny.en",
        description="faster-whisper model: a local CTranslate2 directory or a model name.",
    )
    SANDBOX_MODE: SandboxMode = Field(
        "auto",
        description="run_python's sandbox: auto = bubblewrap when namespaces work, else Landlock+seccomp, else "
                    "unavailable; bwrap or landlock forces one (fails closed; strict = bwrap); degraded (root only) "
                    "falls back to rlimits and a uid of its own, labelled.",
    )
    SANDBOX_MEMORY_MB: int = Field(
        1024, ge=64,
        description="run_python memory cap in MiB: the address space of each process, and the resident memory of all "
                    "of a call's processes together.",
    )
    # --- issue 21: sandbox disk cap, visitor budgets, fair share ---
    SANDBOX_DISK_MB: int = Field(
        256, ge=16,
        description="run_python disk cap in MiB for all the files one call writes together (Landlock and degraded "
                    "backends, sampled; bwrap's /tmp is a 128 MiB tmpfs). Each file is also capped at 64 MiB.",
    )
    VISITOR_JOB_SECONDS: float = Field(
        30, gt=0,
        description="Wall-clock and CPU seconds one preview or task load may take (a killable subprocess: visitors "
                    "reach it without a login).",
    )
    VISITOR_JOB_MEMORY_MB: int = Field(
        2048, ge=256,
        description="Address space of the subprocess that runs one preview or task load.",
    )
    VISITOR_MAX_PIXELS: int = Field(
        40_000_000, ge=1_000_000,
        description="Largest image, or PDF page as rendered, a preview opens (pixels).",
    )
    VISITOR_MAX_MEDIA_MINUTES: float = Field(
        20, gt=0,
        description="Longest audio a preview decodes (minutes, from the file's header).",
    )
    VISITOR_MAX_UNPACKED_MB: int = Field(
        64, ge=1,
        description="Largest total of the parts of an office file or zip a preview opens, and of a split's metadata "
                    "file (MB, unpacked).",
    )
    VISITOR_MAX_SPLIT_ROWS: int = Field(
        2000, ge=10,
        description="Most rows a local GAIA folder's metadata may hold when a visitor loads it.",
    )
    VISITOR_MAX_QUEUED: int = Field(
        4, ge=1,
        description="Jobs one browser session may have waiting or running in the app's queue; more are refused (503) "
                    "so one client cannot fill it for everyone.",
    )
    VISITOR_MAX_QUEUED_PER_ADDRESS: int = Field(
        16, ge=1,
        description="Jobs one client address (the peer, or X-Forwarded-For from a TRUSTED_PROXIES peer) may have "
                    "waiting or running in the app's queue.",
    )
    VISITOR_MAX_UPLOAD_MB: float = Field(
        300, gt=0,
        description="Upload bytes one session may keep on the server (its uploads are deleted when it ends), and one "
                    "client address may upload within gradio's two-hour cache window.",
    )
    # --- public app: client addresses, request bodies, preview slots (issue 36) ---
    TRUSTED_PROXIES: str | None = Field(
        None,
        description="Comma-separated addresses or networks (CIDR) of the proxies in front of the app whose "
                    "X-Forwarded-For is believed. Unset: on a Space (SPACE_ID set) the private networks its front "
                    "proxy connects from (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7), elsewhere none; "
                    "empty: none (the socket's peer is the client).",
    )
    APP_MAX_REQUEST_KB: int = Field(
        2048, ge=16,
        description="Largest request body (KiB) the app reads on any route but the upload route (a queue join, an "
                    "API call); a longer body is refused (413) before it is read.",
    )
    VISITOR_MAX_LIGHT_JOBS: int = Field(
        1, ge=1,
        description="Previews, RAG lookups and task loads one browser session may have waiting or running at once; "
                    "kept below APP_CONCURRENCY so the preview slots left serve other visitors.",
    )

    @field_validator("TRUSTED_PROXIES")
    @classmethod
    def _networks(cls, value: str | None) -> str | None:
        import ipaddress

        for item in filter(None, (part.strip() for part in (value or "").split(","))):
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an address or a network (e.g. 10.0.0.0/8)") from None
        return value

    # --- browser (tools/browser: one shared Chromium, a context per run) ---------------------------
    BROWSER_EXECUTABLE: str = Field(
        "/usr/bin/chromium",
        description="Chromium the browser tools drive through Playwright (Debian's `chromium` package; no browser "
                    "download).",
    )
    BROWSER_MAX_PAGES: int = Field(
        100, ge=1,
        description="Pages one run may load in the browser (opens, clicked links, popups).",
    )

    # --- browser engine: pool, face, page caps (issues 34, 36) ---
    BROWSER_THREADS: int = Field(
        6, ge=1, le=32,
        description="Browser threads, each with its own Playwright driver and Chromium; a run is pinned to one, so up "
                    "to this many runs use the browser without waiting for each other (about 150 MB each).",
    )
    BROWSER_SANDBOX: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Chromium's own sandbox: auto = on where the kernel allows unprivileged user namespaces and the "
                    "app is not root; on/off force it.",
    )
    BROWSER_PAGE_MEMORY_MB: int = Field(
        1024, ge=64,
        description="Resident memory one page's renderer may use before it is killed (its V8 heap is capped at half).",
    )
    BROWSER_PAGE_CPU_S: float = Field(
        120.0, gt=0,
        description="CPU seconds one page's renderer may use before it is killed (a busy loop costs its own run only).",
    )
    BROWSER_LOCALE: str = Field("en-US", description="The browser's locale (navigator.language).")
    BROWSER_ACCEPT_LANGUAGE: str = Field("en-US,en;q=0.9", description="The browser's Accept-Language header.")
    BROWSER_TIMEZONE: str = Field("America/New_York", description="The browser's timezone (an IANA name).")

    # --- RAG ----------------------------------------------------------------------------------
    RAG_ENABLED: bool = Field(True, description="Look questions up in the knowledge base before the agent loop.")
    RAG_INDEX_DIR: Path = Field(
        PROJECT_ROOT / "data" / "rag_index",
        description="Directory of the FAISS index and its metadata (default in a read-only app folder: "
                    "~/.cache/gaia-agent-harness/rag_index unless a prebuilt index is there).",
    )
    EMBEDDING_MODEL: str = Field(
        "",
        description="sentence-transformers model name or path; empty = the packaged all-MiniLM-L6-v2.",
    )
    RAG_ANSWER_THRESHOLD: float = Field(
        0.92, ge=0, le=1,
        description="Cosine similarity at or above which a guarded match answers directly.",
    )
    RAG_CANDIDATE_THRESHOLD: float = Field(
        0.75, ge=0, le=1,
        description="Similarity at or above which matches are given to the loop as candidates.",
    )
    RAG_HINT_THRESHOLD: float = Field(
        0.5, ge=0, le=1,
        description="Similarity at or above which nearest entries become solving hints.",
    )
    RAG_TOP_K: int = Field(3, ge=1, le=20, description="Neighbours retrieved per lookup.")
    RAG_LLM_HINTS: bool = Field(True, description="Ask the LLM to turn low-similarity neighbours into solving hints.")

    # --- evaluation ---------------------------------------------------------------------------
    HF_TOKEN: SecretStr | None = Field(None, description="Hugging Face token for the gated GAIA dataset.")
    GAIA_DATASET: str = Field("gaia-benchmark/GAIA", description="Hub dataset repository of GAIA.")
    GAIA_REVISION: str = Field("main", description="Pinned revision (branch, tag or commit) of the GAIA dataset.")
    GAIA_CACHE_DIR: Path = Field(
        PROJECT_ROOT / "data" / "gaia",
        description="Where the hub snapshot is cached (default in a read-only app folder: "
                    "~/.cache/gaia-agent-harness/gaia).",
    )
    BATCH_CONCURRENCY: int = Field(4, ge=1, le=64, description="Tasks solved at once in a batch.")
    TASK_RETRY_MAX: int = Field(
        1, ge=0,
        description="Extra attempts for a task that ended with an error before it is recorded as failed.",
    )
    OUTPUT_DIR: Path = Field(
        PROJECT_ROOT / "runs",
        description="Where batch runs write their results (default in a read-only app folder: "
                    "~/.cache/gaia-agent-harness/runs).",
    )
    SCORING_API_URL: str = Field(
        "https://agents-course-unit4-scoring.hf.space",
        description="Agents Course Unit 4 scoring API.",
    )
    SPACE_ID: str | None = Field(None, description="Set by Hugging Face on a Space; used for the agent_code link.")
    SPACE_AUTHOR_NAME: str | None = Field(
        None,
        description="Set by Hugging Face on a Space: its owner (the default APP_ALLOWED_USERS there).",
    )
    GAIA_LOCAL_ROOTS: str = Field(
        "",
        description="Comma-separated folders the app's `Local GAIA folder` source may read (empty: anywhere locally; "
                    "on a Space only the hub cache and the visitor's uploads).",
    )

    # --- app ------------------------------------------------------------------------------------
    GRADIO_SERVER_NAME: str = Field(
        "127.0.0.1",
        description="Interface the app listens on: this machine only by default (the app holds the API key); a Space "
                    "and the Docker image set 0.0.0.0.",
    )
    GRADIO_SERVER_PORT: int = Field(7860, ge=1, le=65535, description="Port the app listens on.")
    APP_CONCURRENCY: int = Field(4, ge=1, description="Debug/chat requests served at once (gradio queue).")
    APP_PRELOAD: bool = Field(
        True,
        description="Load the agent, LLM client, embeddings and tool checks in a background thread at start-up (else "
                    "on the first request).",
    )
    APP_STATUS_RECHECK_S: float = Field(
        15, gt=0,
        description="Seconds between the app's background re-checks of the model endpoint (the header shows the "
                    "latest verdict).",
    )

    # --- public app: who may spend, and limits for whoever may -------------------------------------
    APP_ALLOWED_USERS: str | None = Field(
        None,
        description="Comma-separated Hugging Face usernames allowed to use the model in the app; `*` = anyone. Unset: "
                    "the Space owner on a Space, else `*`.",
    )
    MAX_QUESTION_CHARS: int = Field(
        20000, ge=100,
        description="Longest question (or chat message) accepted; longer is refused before any model call.",
    )
    MAX_UPLOAD_MB: float = Field(100, gt=0, description="Largest file a visitor may upload to the app.")
    CHAT_HISTORY_MAX_TURNS: int = Field(
        20, ge=0,
        description="Earlier chat turns sent to the model (older ones are dropped, and the chat says so).",
    )
    CHAT_HISTORY_MAX_CHARS: int = Field(40000, ge=0, description="Characters of earlier chat turns sent to the model.")
    BATCH_MAX_TASKS: int = Field(500, ge=1, description="Most tasks one batch run from the app may hold.")
    BATCH_MAX_RUNNING: int = Field(
        2, ge=1,
        description="Batch runs the app executes at once over all sessions (one per session).",
    )
    BATCH_UNWATCHED_STOP_S: float = Field(
        60, gt=0,
        description="Seconds an app batch run goes on while nobody reads its progress (the client never listened, or "
                    "left) before it is stopped; what finished is checkpointed and Resume continues.",
    )
    APP_QUEUE_MAX_SIZE: int = Field(
        64, ge=1,
        description="Requests the app's queue holds waiting; more are refused with `queue full` instead of piling up.",
    )

    # --- per-run workspace -------------------------------------------------------------------------
    WORKSPACE_DIR: Path | None = Field(
        None,
        description="Where per-run workspaces (extractions, downloads, rendered pages) are made; unset = the system "
                    "temp folder.",
    )
    WORKSPACE_MAX_MB: int = Field(
        500, ge=1,
        description="Disk one run's workspace may use (archives, nested ones included, and downloads).",
    )

    # --- team strategy (issue 32) ---
    AGENT_STRATEGY: Strategy = Field(
        "react",
        description="What runs between the router and answer extraction: `react` (one ReAct loop over every tool) "
                    "or `team` (an orchestrator with a ledger delegating to researcher, browser, reader and coder "
                    "workers).",
    )
    WORKER_MAX_ITERATIONS: int = Field(
        15, ge=1,
        description="Assistant turns of one team worker's loop (its turns also count against the task's "
                    "MAX_ITERATIONS).",
    )
    WORKER_REPORT_TOKENS: int = Field(
        800, ge=50,
        description="Tokens of a worker's report the orchestrator reads; a longer report is cut with a note.",
    )
    TEAM_STALL_LIMIT: int = Field(
        2, ge=1,
        description="Rounds of reports without progress after which the orchestrator re-makes its ledger.",
    )

    # --- repair loop (issue 35) ---
    TOOL_CACHE_ENABLED: bool = Field(
        True,
        description="Batch runs keep every tool call's arguments and result in the run folder (tool_cache/), "
                    "content-addressed and redacted, so `--replay RUN_DIR` can answer the same calls from it.",
    )
    TOOL_CACHE_MAX_MB: float = Field(
        50, gt=0,
        description="Size cap of one run's tool cache; calls past it are not kept (the run goes on, live).",
    )

    # --- answer check, parallel search, attempts and vote (issue 32) ------------------------------
    ANSWER_CHECK: Literal["on", "off"] = Field(
        "on",
        description="After extraction, one tool-less request checks the answer's form against GAIA's rules; only "
                    "the form may change (a reply that changes a number or a name is rejected, the draft kept).",
    )
    SEARCH_FANOUT: Literal["all", "first"] = Field(
        "all",
        description="web_search: `all` asks every SEARCH_PROVIDERS provider at once and merges by URL "
                    "(reciprocal-rank fusion); `first` asks them in order until one answers (failover).",
    )
    ATTEMPTS: int = Field(
        1, ge=1, le=20,
        description="Independent runs per batch task; the answer is the majority of the scorer's normalised "
                    "answers (ties: the earliest); `--attempts` sets it for one invocation.",
    )

    @model_validator(mode="after")
    def _writable_defaults(self) -> Settings:
        """Default folders in a read-only app folder (a Space, a system install) move to a per-user cache."""
        for name, sub in WRITABLE_DEFAULTS.items():
            if name not in self.model_fields_set:
                object.__setattr__(self, name, writable_folder(getattr(self, name), sub))
        return self

    @field_validator("FETCH_ALLOWED_HOSTS")
    @classmethod
    def _host_port_pairs(cls, value: str) -> str:
        for item in filter(None, (part.strip() for part in value.split(","))):
            host, sep, port = item.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{item!r} is not host:port (e.g. 127.0.0.1:8080)")
        return value

    @property
    def llm_configured(self) -> bool:
        """True when a model endpoint can be called (a key, or a local server URL)."""
        return bool(self.OPENAI_API_KEY and self.OPENAI_API_KEY.get_secret_value()) or bool(self.OPENAI_BASE_URL)

    def llm_missing_message(self) -> str:
        """One actionable line for users without a model endpoint."""
        return (
            "No LLM configured: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
            "(vLLM, Ollama, any OpenAI-compatible server)."
        )

    @classmethod
    def secret_fields(cls) -> list[str]:
        """Names of every `SecretStr` setting: a new provider key is redacted with no further edit."""
        return [name for name, info in cls.model_fields.items() if _holds_secret(info.annotation)]

    def secrets(self) -> list[str]:
        """Secret values that must never appear in traces, logs or outputs."""
        values = [getattr(self, name) for name in self.secret_fields()]
        return [v.get_secret_value() for v in values if v is not None and len(v.get_secret_value()) >= 4]

    @property
    def vision_model(self) -> str | None:
        """The vision model's name, or None when vision is off (`VISION_MODEL_NAME=none`)."""
        name = self.VISION_MODEL_NAME.strip()
        if name.lower() == "none":
            return None
        return name or self.MODEL_NAME


# --- writable folders (issue 22) -----------------------------------------------------------------
WRITABLE_DEFAULTS = {"OUTPUT_DIR": "runs", "GAIA_CACHE_DIR": "gaia", "RAG_INDEX_DIR": "rag_index"}
"""Settings whose default lives in the app folder, and their sub-folder in the per-user fallback."""
APP_CACHE_NAME = "gaia-agent-harness"


def _can_write(folder: Path) -> bool:
    """True when `folder` is writable, or could be created (its nearest existing parent is writable)."""
    for place in (folder, *folder.parents):
        if place.exists():
            return place.is_dir() and os.access(place, os.W_OK | os.X_OK)
    return False


def user_cache_root() -> Path:
    """This user's cache folder for the app: `$HOME/.cache/…`, else a per-user folder in the temp folder."""
    home = Path(os.path.expanduser("~"))
    if str(home) != "~" and _can_write(home / ".cache"):
        return home / ".cache" / APP_CACHE_NAME
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"{APP_CACHE_NAME}-{uid}"


def writable_folder(default: Path, sub: str) -> Path:
    """`default` when it is writable (or holds data already, e.g. a shipped index); else the user cache's `sub`."""
    if _can_write(default):
        return default
    if sub == "rag_index" and (default / "index.faiss").is_file():
        return default  # a read-only, prebuilt index is still read
    return user_cache_root() / sub


def _holds_secret(annotation: object) -> bool:
    return annotation is SecretStr or SecretStr in getattr(annotation, "__args__", ())


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment and `.env`; raise ConfigError naming each bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"]) or "settings"
            lines.append(f"{name.upper()}={err.get('input')!r}: {err['msg']}")
        raise ConfigError("Invalid configuration:\n  " + "\n  ".join(lines)) from None


def redact(text: str, settings: Settings) -> str:
    """Replace every secret value in `text` with a marker."""
    for secret in settings.secrets():
        text = text.replace(secret, "***")
    return text


def settings_table() -> str:
    """Markdown table of every setting: variable, default, meaning (the README's table is this output)."""
    rows = ["| Variable | Default | Meaning |", "| --- | --- | --- |"]
    for name, info in Settings.model_fields.items():
        default = info.default
        if isinstance(default, Path):
            default = default.relative_to(PROJECT_ROOT) if default.is_relative_to(PROJECT_ROOT) else default
        shown = "(unset)" if default is None else f"`{default}`" if default != "" else "(empty)"
        rows.append(f"| `{name}` | {shown} | {info.description or ''} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(settings_table())
