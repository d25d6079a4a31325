"""The Agents Course Unit 4 scoring API's client: `GET /questions`, `GET /files/{task_id}`, `POST /submit`.

Network trouble (timeouts, connection errors, 5xx/429, malformed JSON) is retried with backoff and
every failed attempt is kept in `problems`; a request the API rejects (other 4xx) is not retried.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

import httpx

from evaluation.task_ids import task_id_problem

log = logging.getLogger(__name__)
T = TypeVar("T")


class ScoringAPIError(RuntimeError):
    """The scoring API could not be used (after retries, or a request it rejected); the message says why."""


@dataclass(frozen=True)
class ApiQuestion:
    """One question as the API lists it."""

    task_id: str
    question: str
    level: int | None = None
    file_name: str = ""


class ScoringAPIClient:
    """Small, retrying client of the scoring API."""

    def __init__(self, base_url: str, timeout: float = 30.0, retries: int = 3, *, backoff: float = 1.0,
                 client: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.problems: list[str] = []
        """Every failed attempt, retried or not, in order (shown to the user)."""
        self._http = client or httpx.Client(timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    # -- endpoints ----------------------------------------------------------------------------------
    def questions(self) -> list[ApiQuestion]:
        """GET /questions, validated: a list of objects with task_id and question."""
        def parse(response: httpx.Response) -> list[ApiQuestion]:
            data = response.json()
            if not isinstance(data, list):
                raise ValueError(f"expected a JSON list, got {type(data).__name__}")
            out = []
            for i, item in enumerate(data):
                if not isinstance(item, dict) or not item.get("task_id") or not isinstance(item.get("question"), str):
                    raise ValueError(f"item {i} lacks task_id/question")
                if (bad_id := task_id_problem(item["task_id"])) is not None:  # it names a download folder
                    raise ValueError(f"item {i}: {bad_id}")
                level = str(item.get("Level", item.get("level")) or "").strip()
                out.append(ApiQuestion(str(item["task_id"]), item["question"], int(level) if level.isdigit() else None,
                                       str(item.get("file_name") or "")))
            return out

        return self._request("GET", "/questions", parse)

    def download_file(self, task_id: str, dest_dir: Path, file_name: str | None = None) -> Path | None:
        """GET /files/{task_id} into dest_dir/task_id/; None when the task has no file (404)."""
        def parse(response: httpx.Response) -> Path | None:
            if response.status_code == 404:
                return None
            name = file_name or disposition_filename(response.headers.get("content-disposition", ""))
            folder = Path(dest_dir) / task_id
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / safe_file_name(name, task_id)
            path.write_bytes(response.content)
            return path.resolve()

        return self._request("GET", f"/files/{task_id}", parse, ok_statuses=(404,))

    def submit(self, username: str, agent_code: str,
               answers: Sequence[Mapping[str, str]] | Mapping[str, str]) -> dict[str, Any]:
        """POST /submit; `answers` as [{task_id, submitted_answer}] or {task_id: answer}. Returns the verdict."""
        if isinstance(answers, Mapping):
            answers = [{"task_id": t, "submitted_answer": a} for t, a in answers.items()]
        payload = {"username": username.strip(), "agent_code": agent_code,
                   "answers": [{"task_id": a["task_id"], "submitted_answer": str(a["submitted_answer"])}
                               for a in answers]}

        def parse(response: httpx.Response) -> dict[str, Any]:
            data = response.json()
            if not isinstance(data, dict) or not isinstance(data.get("correct_count"), int):
                raise ValueError("the verdict has no integer correct_count")
            return data

        return self._request("POST", "/submit", parse, json=payload)

    # -- the retry loop -------------------------------------------------------------------------------
    def _request(self, method: str, path: str, parse: Callable[[httpx.Response], T], *,
                 ok_statuses: tuple[int, ...] = (), **kwargs: Any) -> T:
        url = self.base_url + path
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TimeoutException:
                last = f"{method} {path}: no answer within {self.timeout:g}s"
            except httpx.TransportError as exc:
                last = f"{method} {path}: connection failed ({type(exc).__name__}: {exc})"
            else:
                status = response.status_code
                if status >= 500 or status == 429:
                    last = f"{method} {path}: HTTP {status} {_detail(response)}"
                elif status >= 400 and status not in ok_statuses:
                    message = f"{method} {path}: HTTP {status} {_detail(response)} (not retried)"
                    self.problems.append(message)
                    raise ScoringAPIError(message)
                else:
                    try:
                        return parse(response)
                    except (ValueError, TypeError, KeyError) as exc:
                        last = f"{method} {path}: malformed response ({exc})"
            self.problems.append(last + (f"; retrying ({attempt + 1}/{self.retries})"
                                         if attempt < self.retries else ""))
            log.warning("scoring API: %s", self.problems[-1])
        raise ScoringAPIError(f"{last} — gave up after {self.retries + 1} attempt(s)")


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
        text = data.get("detail", data) if isinstance(data, dict) else data
    except ValueError:
        text = response.text
    return str(text)[:200]


def disposition_filename(header: str) -> str | None:
    """The file name of a `Content-Disposition` header; `filename*` (RFC 5987, percent-encoded) wins over `filename`.

    The course's server (FastAPI/Starlette) sends `filename*=utf-8''na%C3%AFve.txt` for names that are
    not plain ASCII (or hold a space) and `filename="data.xlsx"` otherwise.
    """
    if extended := re.search(r"filename\*\s*=\s*\"?([\w-]+)'[^']*'([^;\s\"]+)", header, re.I):
        try:
            return unquote(extended.group(2), encoding=extended.group(1), errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass  # an unknown charset or bad escapes: fall back to the plain parameter
    if plain := re.search(r'filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))', header, re.I):
        return re.sub(r"\\(.)", r"\1", plain.group(1)) if plain.group(1) is not None else plain.group(2)
    return None


def safe_file_name(name: str | None, fallback: str) -> str:
    """`name` without any directory part (a server-chosen name is untrusted); `fallback` when nothing is left."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    return base if base not in ("", ".", "..") else fallback
