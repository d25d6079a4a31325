"""A task record keeps what the run said about its answer: here, that it came from a cut reply."""

from __future__ import annotations

from agent.events import AnswerExtracted, ModelCall, Solution
from config import load_settings
from evaluation.dataset import Sample
from evaluation.records import TaskRecord
from evaluation.task_loop import build_record


def _record(truncated: bool) -> TaskRecord:
    events = [ModelCall(iteration=1, model="m", latency_s=0.1, content="The answer is 12", truncated=truncated),
              AnswerExtracted(answer="12", raw="The answer is 12", method="last_line", truncated=truncated)]
    solution = Solution.from_events("q", events, task_id="t1")
    sample = Sample(task_id="t1", question="q", level=1, final_answer="12")
    return build_record(sample, [solution], started_at=0.0, finished_at=1.0, settings=load_settings())


def test_an_answer_from_a_length_cut_reply_is_flagged_in_the_record():
    record = _record(truncated=True)
    assert record.answer_truncated and record.correct is True
    assert TaskRecord.from_dict(record.to_dict()).answer_truncated


def test_a_complete_reply_is_not_flagged():
    assert not _record(truncated=False).answer_truncated
