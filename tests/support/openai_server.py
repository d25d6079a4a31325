"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

The real `ChatOpenAI`/`openai` client talks to it, so retries, timeouts and usage accounting run for real.

    with ScriptedOpenAI([call("calculator", expression="2**10+7"), say("FINAL ANSWER: 1031")]) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test")

A script is a list of `Reply`s consumed in order, or a function `(request_json) -> Reply` that decides
from the conversation (needed when tasks run concurrently). `rpm_limit` makes the server answer 429
with a Retry-After header when more than that many requests arrive within a sliding minute (or within
`rate_window_s` seconds; the Retry-After is then when the window's oldest request leaves it).

Provider-style limits (`Limits`): a steady request rate with a small burst (how providers quantise a
per-minute limit), a tokens-per-minute budget over the prompt tokens the server counts in each request
(its JSON / 4, reported back as usage), and optionally the `x-ratelimit-*` headers on every answer.
A 429 then carries `Retry-After`, `retry-after-ms` and an OpenAI-style message naming the limit.

`personalities` switch on documented behaviours of real servers (llama.cpp, vLLM, Ollama):

- `tools_need_choice`: `tools` are silently dropped unless `tool_choice` is sent (llama-cpp-python);
- `null_content_500`: an assistant message with `content: null` is answered 500, same body every time;
- `length`: every text reply is cut at the request's `max_tokens` words, `finish_reason: length`;
- `no_usage`: no `usage` in any reply;
- `usage_in_stream_only`: `usage` only in a final stream chunk (when `stream_options.include_usage`);
- `text_tool_calls`: tool calls are written in the content as `<tool_call>{...}</tool_call>` (Qwen/Hermes).

A context window (`context_limit=N`): a request whose prompt tokens plus its `max_tokens` pass N is
answered HTTP 400 in OpenAI's shape (`code: context_length_exceeded`, vLLM's and OpenAI's wording, e.g.
"This model's maximum context length is 4097 tokens. However, you requested 4203 tokens (3703 in the
messages, 500 in the completion)..." as quoted in quivr#505 and vllm#20409). `window_in` says where the
server tells its window: `models` (vLLM: `max_model_len` in each `/v1/models` entry), `props` (llama.cpp:
`GET /props` -> `default_generation_settings.n_ctx`), or None (only the error says it).
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal, Self

from tests.support.loopback import HTTPLoopbackServer

Personality = Literal["tools_need_choice", "null_content_500", "length", "no_usage", "usage_in_stream_only",
                      "text_tool_calls"]
NULL_CONTENT_ERROR = "1 validation error: ('body', 'messages', 1, 'content'): Input should be a valid string"


@dataclass
class Reply:
    """One scripted HTTP answer to a chat-completions request."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (a hang longer than the client timeout simulates a dead server)."""
    prompt_tokens: int = 11
    completion_tokens: int = 7
    finish_reason: str | None = None
    """None: 'tool_calls' or 'stop' as fits the reply."""


def say(text: str, **kw: Any) -> Reply:
    """An assistant message with text and no tool calls."""
    return Reply(content=text, **kw)


def call(name: str, /, **args: Any) -> Reply:
    """An assistant message asking for one tool call."""
    return Reply(content="", tool_calls=[(name, args)])


def fail(status: int, retry_after: float | None = None, **kw: Any) -> Reply:
    """An HTTP error (429 with Retry-After, 500, ...)."""
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return Reply(status=status, headers=headers, **kw)


def cut(text: str, **kw: Any) -> Reply:
    """A reply the server cut at its completion limit (`finish_reason: length`)."""
    return Reply(content=text, finish_reason="length", **kw)


def hang(seconds: float) -> Reply:
    """Answer only after `seconds` (longer than LLM_TIMEOUT: the client gives up)."""
    return Reply(content="FINAL ANSWER: too late", delay=seconds)


Script = Sequence[Reply] | Callable[[dict[str, Any]], Reply]


@dataclass
class Limits:
    """Provider-style rate limits the server enforces (None = not enforced)."""

    rpm: float | None = None
    """Requests per minute as a steady rate: `burst` at once, then one per 60/rpm s."""
    burst: int = 2
    tpm: float | None = None
    """Tokens per minute (prompt tokens at admission, completion tokens once answered)."""
    token_burst_s: float = 2.0
    """Seconds' worth of tokens the budget lets through at once."""
    headers: bool = False
    """Send x-ratelimit-{limit,remaining,reset}-{requests,tokens} on every answer."""
    announce_minute: bool = False
    """Token headers speak of the minute budget (OpenAI's convention: `limit` = tpm, `remaining` = the level of a
    bucket of the whole minute refilling at tpm / 60, `reset` = until it is full) while the budget enforced is the
    shorter burst (OpenAI: limits may be enforced over shorter periods), so a 429 can come under a large
    `remaining`."""
    announce_burst: bool = False
    """Token headers' `limit` is the enforced burst's own figure (tpm / 60 * token_burst_s, e.g. 4,000 per 5 s), not
    the minute's: `remaining` and `reset` are of that burst."""


class _Bucket:
    """A budget refilling at `rate` per second up to `capacity` (the server's view of a limit)."""

    def __init__(self, rate: float, capacity: float) -> None:
        self.rate, self.capacity, self.level, self.at = rate, capacity, capacity, time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait_for(self, need: float) -> float:
        """Seconds until `need` fits (0 if it fits now)."""
        need = min(need, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def reset_s(self) -> float:
        return max(0.0, (self.capacity - self.level) / self.rate)


def count_tokens(body: dict[str, Any]) -> int:
    """The server's prompt-token count: the request's messages and tools as JSON, one token per 4 characters."""
    return math.ceil(len(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))) / 4)


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f}ms" if seconds < 1 else f"{seconds:.3f}s"


@dataclass
class Recorded:
    """A request the server received."""

    body: dict[str, Any]
    at: float
    headers: dict[str, str]


class ScriptedOpenAI(HTTPLoopbackServer):
    """Threaded loopback server speaking `/v1/chat/completions` (non-streaming) and `/v1/models`."""

    def __init__(self, script: Script = (), *, latency: float = 0.0, rpm_limit: int | None = None,
                 retry_after: float | None = None, limits: Limits | None = None,
                 personalities: Sequence[Personality] = (), models: Sequence[str] = ("scripted",),
                 context_limit: int | None = None, window_in: Literal["models", "props"] | None = None,
                 rate_window_s: float = 60.0) -> None:
        super().__init__()
        self._script = script
        self.rate_window_s = rate_window_s
        self.context_limit = context_limit
        self.window_in = window_in
        self.overflows = 0
        """Requests refused as longer than the context."""
        self.personalities = set(personalities)
        self.models = list(models)
        """Model ids listed by GET /models."""
        self._queue: deque[Reply] = deque(script) if not callable(script) else deque()
        self.latency = latency
        self.rpm_limit = rpm_limit
        self.retry_after = retry_after
        self.requests: list[Recorded] = []
        self.rate_limited = 0
        self.limits = limits or Limits()
        self.admitted_tokens: list[tuple[float, int]] = []
        """(time, prompt + completion tokens) of every answered request, for checking a tpm cap."""
        self.token_limited = 0
        """429s the token budget caused (also counted in `rate_limited`)."""
        self._requests = _Bucket(self.limits.rpm / 60, self.limits.burst) if self.limits.rpm else None
        self._tokens = _Bucket(self.limits.tpm / 60, self.limits.tpm / 60 * self.limits.token_burst_s) \
            if self.limits.tpm else None
        self._minute = _Bucket(self.limits.tpm / 60, self.limits.tpm) \
            if self.limits.tpm and self.limits.announce_minute else None
        """The minute budget the headers announce (`announce_minute`); charged like `_tokens`, never enforced."""
        self._admitted: deque[float] = deque()
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL to put in OPENAI_BASE_URL."""
        return f"{self.base}/v1"

    def start(self, port: int = 0) -> Self:
        """Bind a loopback port (default: an ephemeral one) and serve in a daemon thread."""
        if not self.running:
            self.bind(port)
        return super().start()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The OpenAI-shaped answers of `_answer`, plain or streamed."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms per request.
            disable_nagle_algorithm = True

            def log_message(self, *_: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [owner._model_entry(m) for m in owner.models]})
                elif self.path.rstrip("/") == "/props" and owner.window_in == "props" and owner.context_limit:
                    self._send(200, {"default_generation_settings": {"n_ctx": owner.context_limit, "id": 0},
                                     "total_slots": 1, "model_path": "models/scripted.gguf"})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload, headers, delay = owner._answer(body, dict(self.headers))
                if delay:
                    time.sleep(delay)
                try:
                    if status == 200 and body.get("stream"):
                        self._stream(owner._chunks(body, payload))
                    else:
                        if owner.personalities & {"no_usage", "usage_in_stream_only"}:
                            payload.pop("usage", None)
                        self._send(status, payload, headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, chunks: list[dict[str, Any]]) -> None:
                data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    # -- behaviour -------------------------------------------------------------------------------
    def _model_entry(self, model: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": model, "object": "model", "owned_by": "scripted"}
        if self.window_in == "models" and self.context_limit:
            entry["max_model_len"] = self.context_limit  # vLLM's field
        return entry

    def _overflow(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str], float] | None:
        """HTTP 400 `context_length_exceeded` when prompt + completion limit pass the window (called under the lock)."""
        if not self.context_limit:
            return None
        prompt = count_tokens(body)
        completion = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        if prompt + completion <= self.context_limit:
            return None
        self.overflows += 1
        message = (f"This model's maximum context length is {self.context_limit} tokens. However, you requested "
                   f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
                   "Please reduce the length of the messages or completion.")
        return 400, {"error": {"message": message, "type": "invalid_request_error", "param": "messages",
                               "code": "context_length_exceeded"}}, {}, 0.0

    def _over_rate(self, now: float) -> float | None:
        """Seconds until a slot frees when the sliding-minute budget is spent, else None (and admit)."""
        if self.rpm_limit is None:
            return None
        while self._admitted and now - self._admitted[0] >= self.rate_window_s:
            self._admitted.popleft()
        if len(self._admitted) >= self.rpm_limit:
            return self.rate_window_s - (now - self._admitted[0])
        self._admitted.append(now)
        return None

    def _provider_limits(self, now: float, prompt: int) -> tuple[str, float, int] | None:
        """Admit against the steady request rate and the token budget; (which, wait, used) when refused."""
        for bucket in (self._requests, self._tokens):
            if bucket is not None:
                bucket.refill(now)
        if self._requests is not None and (wait := self._requests.wait_for(1)) > 0:
            return "requests", wait, int(self._requests.capacity - self._requests.level)
        if self._tokens is not None and (wait := self._tokens.wait_for(prompt)) > 0:
            return "tokens", wait, int(self._tokens.capacity - self._tokens.level)
        if self._requests is not None:
            self._requests.level -= 1
        if self._tokens is not None:
            self._tokens.level -= prompt
        if self._minute is not None:
            self._minute.refill(now)
            self._minute.level -= prompt
        return None

    def _limit_headers(self) -> dict[str, str]:
        if not self.limits.headers:
            return {}
        out: dict[str, str] = {}
        for kind, bucket, limit in (("requests", self._requests, self.limits.rpm),
                                    ("tokens", self._tokens, self.limits.tpm)):
            if kind == "tokens" and self._minute is not None:
                bucket = self._minute
                bucket.refill(time.monotonic())
            if kind == "tokens" and bucket is not None and self.limits.announce_burst:
                limit = bucket.capacity
            if bucket is not None and limit:
                out[f"x-ratelimit-limit-{kind}"] = f"{limit:g}"
                out[f"x-ratelimit-remaining-{kind}"] = str(max(0, math.floor(bucket.level)))
                out[f"x-ratelimit-reset-{kind}"] = _duration(bucket.reset_s())
        return out

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if callable(self._script):
            return self._script(body)
        if not self._queue:
            return Reply(status=400, content="script exhausted")
        return self._queue.popleft()

    def _answer(self, body: dict[str, Any],
                headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str], float]:
        with self._lock:
            now = time.monotonic()
            self.requests.append(Recorded(body=body, at=now, headers=headers))
            wait = self._over_rate(now)
            if wait is not None:
                self.rate_limited += 1
                retry = self.retry_after if self.retry_after is not None else max(wait, 0.01)
                return 429, {"error": {"message": "Rate limit reached", "type": "requests",
                                       "code": "rate_limit_exceeded"}}, {"Retry-After": f"{retry:.3f}"}, 0.0
            if (overflow := self._overflow(body)) is not None:
                return overflow
            counting = self._tokens is not None or self.limits.headers or bool(self.context_limit)
            prompt = count_tokens(body) if counting else 0
            refused = self._provider_limits(now, prompt)
            if refused is not None:
                return self._refusal(prompt, *refused)
            if "null_content_500" in self.personalities and any(
                    m.get("role") == "assistant" and m.get("content") is None for m in body.get("messages", [])):
                return 500, {"error": {"message": NULL_CONTENT_ERROR, "type": "internal_server_error"}}, {}, 0.0
            reply = self._next_reply(body)
            if counting:
                reply = Reply(**{**reply.__dict__, "prompt_tokens": prompt,
                                 "completion_tokens": math.ceil(len((reply.content or "")
                                                                    + json.dumps(reply.tool_calls)) / 4)})
            if self._tokens is not None and reply.status == 200:
                self._tokens.level -= reply.completion_tokens
                if self._minute is not None:
                    self._minute.level -= reply.completion_tokens
            if reply.status == 200:
                self.admitted_tokens.append((now, reply.prompt_tokens + reply.completion_tokens))
            headers = {**self._limit_headers(), **reply.headers}
        delay = reply.delay + self.latency
        if reply.status != 200:
            message = reply.content or f"scripted error {reply.status}"
            return (reply.status, {"error": {"message": message, "type": "scripted", "code": reply.status}}, headers,
                    delay)
        return 200, self._completion(body, reply), headers, delay

    def _refusal(self, prompt: int, kind: str, wait: float,
                 used: int) -> tuple[int, dict[str, Any], dict[str, str], float]:
        """A 429 the way OpenAI words it (called under the lock)."""
        self.rate_limited += 1
        self.token_limited += kind == "tokens"
        limit = self.limits.rpm if kind == "requests" else self.limits.tpm
        abbrev = "RPM" if kind == "requests" else "TPM"
        requested = 1 if kind == "requests" else prompt
        message = (f"Rate limit reached for scripted on {kind} per min ({abbrev}): Limit {limit:g}, Used {used}, "
                   f"Requested {requested}. Please try again in {wait:.3f}s.")
        headers = {**self._limit_headers(), "Retry-After": f"{max(wait, 0.001):.3f}",
                   "retry-after-ms": f"{max(wait, 0.001) * 1000:.0f}"}
        return 429, {"error": {"message": message, "type": kind, "code": "rate_limit_exceeded"}}, headers, 0.0

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        traits = self.personalities
        calls, content, finish = list(reply.tool_calls), reply.content, reply.finish_reason
        if "tools_need_choice" in traits and "tool_choice" not in body:
            calls = []  # the server never showed the tools to the model: it can only talk
            content = content or "I would need a tool for that."
        if calls and "text_tool_calls" in traits:
            content = "\n".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls)
            calls = []
        limit = body.get("max_tokens")
        if "length" in traits and not calls and content and limit and len(content.split()) > limit:
            content, finish = " ".join(content.split()[:limit]), "length"
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for name, args in calls
            ]
        completion = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish or ("tool_calls" if calls else "stop")}],
            "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                      "total_tokens": reply.prompt_tokens + reply.completion_tokens},
        }
        return completion

    def _chunks(self, body: dict[str, Any], completion: dict[str, Any]) -> list[dict[str, Any]]:
        """A completion as stream chunks: the delta, the finish reason, then usage if the client asked for it."""
        usage = completion.pop("usage", None)
        choice = completion["choices"][0]
        base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        delta = {k: v for k, v in choice["message"].items() if v is not None}
        for i, call_ in enumerate(delta.get("tool_calls", [])):
            call_["index"] = i
        chunks = [base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}]
        include = (body.get("stream_options") or {}).get("include_usage")
        if include and usage and "no_usage" not in self.personalities:
            chunks.append(base | {"choices": [], "usage": usage})
        return chunks


def first_user_text(body: dict[str, Any]) -> str:
    """The text of the first user message of a request (the task's question, with router hints)."""
    for msg in body.get("messages", []):
        if msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content or "")
    return ""


def tool_results(body: dict[str, Any]) -> list[str]:
    """Contents of the tool messages in a request, in order."""
    return [str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "tool"]
