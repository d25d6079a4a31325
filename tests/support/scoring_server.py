"""A local Agents Course Unit 4 scoring API on 127.0.0.1 for tests: questions, files, grading submit.

    with ScoringServer(QUESTIONS) as api:
        client = ScoringAPIClient(api.url, timeout=1, retries=2, backoff=0)
        api.inject("submit", "timeout", 500, "malformed")   # the next three /submit calls misbehave

It speaks the same endpoints and payloads as https://agents-course-unit4-scoring.hf.space:
`GET /questions` -> [{task_id, question, Level, file_name}], `GET /files/{task_id}` -> the bytes
(404 with a detail when the task has none), `POST /submit` {username, agent_code, answers} ->
{username, score, correct_count, total_attempted, message, timestamp}. Grading, as the course's
hands-on page states, is exact match (surrounding whitespace aside): "paris" is wrong for "Paris".
File names come in `Content-Disposition` as the course's FastAPI server sends them:
`filename="data.xlsx"`, or `filename*=utf-8''…` (RFC 5987) when the name is not plain ASCII.
Faults are consumed in order per endpoint: an int is that
HTTP status, "timeout" answers only after `hang_s`, "malformed" sends invalid JSON, None lets that
call through normally.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import quote, unquote

from tests.support.loopback import HTTPLoopbackServer


@dataclass(frozen=True)
class ApiTask:
    """One question the server hands out, with its answer and optional attachment."""

    task_id: str
    question: str
    answer: str
    level: str = "1"
    file_name: str = ""
    content: bytes = b""


def content_disposition(file_name: str) -> str:
    """The header Starlette's FileResponse (the course's server) sends for `file_name`."""
    quoted = quote(file_name)
    return f"attachment; filename*=utf-8''{quoted}" if quoted != file_name else f'attachment; filename="{file_name}"'


class ScoringServer(HTTPLoopbackServer):
    """Threaded loopback scoring API; see the module docstring."""

    def __init__(self, tasks: list[ApiTask], *, hang_s: float = 3.0) -> None:
        super().__init__()
        self.tasks = {t.task_id: t for t in tasks}
        self.hang_s = hang_s
        self.submissions: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str]] = []
        self._faults: dict[str, deque] = defaultdict(deque)
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """Base URL (SCORING_API_URL)."""
        return self.base

    def inject(self, endpoint: str, *faults: int | str | None) -> None:
        """Queue faults for 'questions', 'files' or 'submit'."""
        with self._lock:
            self._faults[endpoint].extend(faults)

    def grade(self, answers: list[dict[str, Any]]) -> int:
        """How many of `answers` are right."""
        return sum(1 for a in answers if (t := self.tasks.get(str(a.get("task_id"))))
                   and str(a.get("submitted_answer", "")).strip() == t.answer.strip())

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The scoring API's routes."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") == "/questions":
                    if self._fault("questions"):
                        return
                    self._json(200, [{"task_id": t.task_id, "question": t.question, "Level": t.level,
                                      "file_name": t.file_name} for t in owner.tasks.values()])
                elif self.path.startswith("/files/"):
                    if self._fault("files"):
                        return
                    task = owner.tasks.get(unquote(self.path[len("/files/"):]))
                    if task is None or not task.file_name:
                        self._json(404, {"detail": "No file path associated with task_id."})
                        return
                    self._send(200, task.content, "application/octet-stream",
                               {"Content-Disposition": content_disposition(task.file_name)})
                else:
                    self._json(404, {"detail": "Not Found"})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/submit":
                    self._json(404, {"detail": "Not Found"})
                    return
                if self._fault("submit"):
                    return
                try:
                    body = json.loads(raw)
                    answers = body["answers"]
                    username = body["username"]
                    assert isinstance(answers, list) and username
                except (ValueError, KeyError, AssertionError):
                    self._json(422, {"detail": "Invalid submission payload."})
                    return
                with owner._lock:
                    owner.submissions.append(body)
                correct = owner.grade(answers)
                total = len(owner.tasks)
                self._json(200, {
                    "username": username, "score": round(100.0 * correct / total, 1) if total else 0.0,
                    "correct_count": correct, "total_attempted": len(answers),
                    "message": f"Score calculated successfully: {correct}/{total} total questions answered correctly "
                               f"({len(answers)} valid tasks attempted).",
                    "timestamp": datetime.now(UTC).isoformat(),
                })

            def _fault(self, endpoint: str) -> bool:
                with owner._lock:
                    owner.calls.append((self.command, self.path))
                    fault = owner._faults[endpoint].popleft() if owner._faults[endpoint] else None  # None: no fault
                if fault is None:
                    return False
                if fault == "timeout":
                    time.sleep(owner.hang_s)
                    self._json(504, {"detail": "too late"})
                elif fault == "malformed":
                    self._send(200, b"{not json", "application/json")
                else:
                    self._json(int(fault), {"detail": f"injected {fault}"})
                return True

            def _json(self, status: int, payload: Any) -> None:
                self._send(status, json.dumps(payload).encode(), "application/json")

            def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        return Handler
