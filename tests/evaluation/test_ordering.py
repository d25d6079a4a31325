"""The batch's start order: long tasks early, never all at once, recorded durations first."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.dataset import AnnotatorMetadata, Sample
from evaluation.ordering import expected_duration, plan_order, recorded_durations


def sample(i: int, file_name: str = "", folder: Path | None = None, size: int = 10, question: str = "") -> Sample:
    path = None
    if file_name and folder is not None:
        path = folder / file_name
        path.write_bytes(b"\0" * size)
    return Sample(task_id=f"t{i}", question=question or f"q{i}", level=1, final_answer="1", file_name=file_name,
                  file_path=path)


def test_slow_attachments_and_video_links_are_expected_to_take_longer(tmp_path):
    plain, audio = sample(0), sample(1, "a.mp3", tmp_path)
    video = sample(2, question="What is said in https://www.youtube.com/watch?v=x ?")
    small, large = sample(3, "s.xlsx", tmp_path, 1000), sample(4, "l.xlsx", tmp_path, 3_000_000)
    assert expected_duration(audio) > expected_duration(plain) and expected_duration(video) > expected_duration(plain)
    assert expected_duration(large) > expected_duration(small) > expected_duration(plain)
    assert expected_duration(plain, {"t0": 99.0}) == 99.0  # a recorded duration wins


def test_long_tool_bound_tasks_start_first_but_leave_workers_for_the_rest(tmp_path):
    tasks = [sample(i) for i in range(30)] + [sample(40 + i, f"a{i}.mp3", tmp_path) for i in range(3)]
    order = [s.task_id for s in plan_order(tasks, concurrency=4)]
    assert sorted(order) == sorted(s.task_id for s in tasks)
    long_ids = {"t40", "t41", "t42"}
    assert order[0] == "t40"  # the longest starts at once
    assert sum(t in long_ids for t in order[:4]) == 1  # most workers stay on request-dense tasks...
    assert max(order.index(t) for t in long_ids) < len(order) - 3  # ...yet none left to run alone at the end
    assert order[-1] not in long_ids


def test_slow_tasks_go_past_the_cap_rather_than_run_alone_at_the_end(tmp_path):
    tasks = [sample(i) for i in range(4)] + [sample(10 + i, f"a{i}.mp3", tmp_path) for i in range(3)]
    order = [s.task_id for s in plan_order(tasks, concurrency=4)]
    assert order[:3] == ["t10", "t11", "t12"]  # too little other work to cover them one after another


def annotated(i: int, level: int, steps: int) -> Sample:
    return Sample(task_id=f"t{i}", question=f"q{i}", level=level, final_answer="1",
                  annotator=AnnotatorMetadata(number_of_steps=steps))


def test_the_annotators_step_count_outranks_the_level():
    chain, lookup = annotated(0, level=1, steps=10), annotated(1, level=3, steps=2)
    assert expected_duration(chain) > expected_duration(lookup)
    assert expected_duration(lookup) < expected_duration(sample(2))  # a two-step task: shorter than a level-1 guess


def test_a_long_annotated_chain_of_level_1_starts_before_short_tasks_of_higher_levels():
    tasks = [annotated(i, level=1 + i % 3, steps=9 if i == 3 else 1) for i in range(24)]
    order = [s.task_id for s in plan_order(tasks, concurrency=4)]
    assert order[0] == "t3"
    unannotated = [Sample(task_id=s.task_id, question=s.question, level=s.level, final_answer="1") for s in tasks]
    assert [s.task_id for s in plan_order(unannotated, concurrency=4)].index("t3") > 3  # the level alone hides it


def test_one_worker_keeps_the_dataset_order(tmp_path):
    tasks = [sample(0), sample(1, "a.mp3", tmp_path)]
    assert plan_order(tasks, concurrency=1) == tasks


def write_checkpoint(folder: Path, rows: list[dict]) -> None:
    folder.mkdir(parents=True)
    (folder / "checkpoint.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "{torn", encoding="utf-8")


def test_recorded_durations_come_from_this_and_earlier_runs_of_the_split(tmp_path):
    write_checkpoint(tmp_path / "validation-20260101-000000", [{"task_id": "t1", "latency_s": 50.0},
                                                               {"task_id": "t2", "latency_s": 9.0, "error": "x"}])
    write_checkpoint(tmp_path / "test-20260101-000000", [{"task_id": "t3", "latency_s": 70.0}])
    run = tmp_path / "validation-20260102-000000"
    write_checkpoint(run, [{"task_id": "t2", "latency_s": 40.0}])
    assert recorded_durations(run, "validation") == {"t1": 50.0, "t2": 40.0}  # errors and other splits left out
    order = plan_order([sample(0), sample(1), sample(2)], 2, recorded_durations(run, "validation"))
    assert [s.task_id for s in order][:2] == ["t1", "t2"]
