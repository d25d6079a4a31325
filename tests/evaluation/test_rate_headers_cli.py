"""The batch CLI against a scripted server announcing OpenAI-convention token headers over a shorter burst.

`limit` per minute, `remaining` the minute budget's level, `reset` until it is full (OpenAI's "Rate limits"
guide), while the server enforces one second's worth at once (limits "may be enforced over shorter
periods"): the batch learns the burst from a 429 under a large `remaining` and ends with every answer
right and few token 429s. Also a provider whose minute is its only window, and one whose headers are of the
burst itself (`limit` its figure, not the minute's).
"""

from __future__ import annotations

import json

import pytest

from evaluation.__main__ import main
from tests.evaluation.test_runner import solve_with_tool
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.openai_server import Limits, ScriptedOpenAI

pytestmark = pytest.mark.integration

TPM = 1_200_000.0
"""20,000 tokens per second, one second of it at once: about three of the CLI's ~6,000-token requests."""


@pytest.mark.parametrize("limits", [Limits(tpm=TPM, token_burst_s=1.0, headers=True, announce_minute=True),
                                    Limits(tpm=TPM, token_burst_s=60.0, headers=True, announce_minute=True),
                                    Limits(tpm=TPM, token_burst_s=1.0, headers=True, announce_burst=True)],
                         ids=["minute-over-burst", "minute-only", "burst-figure"])
def test_a_batch_under_minute_headers_learns_the_burst_and_answers_every_task(monkeypatch, tmp_path, capsys, limits):
    with ScriptedOpenAI(solve_with_tool, latency=0.05, limits=limits) as srv:
        for key, value in {"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test", "RAG_ENABLED": "false",
                           "BATCH_QUESTION_DELAY": "0"}.items():
            monkeypatch.setenv(key, value)
        root = make_gaia_folder(tmp_path / "gaia")
        code = main(["run", "--data-dir", str(root), "--concurrency", "4",
                     "--output-dir", str(tmp_path / "out")])
        token_429s, answered = srv.token_limited, len(srv.admitted_tokens)
        headers_seen = [r for r in srv.requests if r.body.get("messages")]
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "exact match: 100.0%" in out.out
    assert answered >= 4 and headers_seen
    assert token_429s <= 3  # the first teaches the burst; the minute's large remaining no longer misleads
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines() if line]
    assert rows and all(not r.get("error") for r in rows)
