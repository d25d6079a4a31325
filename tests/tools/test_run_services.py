"""RunServices.kept: a tool wing's per-run state, one per run, made on first use."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web.scholarly import RunBudget


@dataclass
class Tally:
    count: int = 0


def test_a_run_keeps_one_of_each_kind(tmp_path):
    with Workspace(tmp_path / "run", 2**20) as work:
        services = RunServices(work)
        services.kept(Tally).count += 1
        services.kept(Tally).count += 1
        assert services.kept(Tally).count == 2
        assert services.kept(RunBudget).spent == ""


def test_runs_do_not_share_what_they_keep(tmp_path):
    with Workspace(tmp_path / "a", 2**20) as a, Workspace(tmp_path / "b", 2**20) as b:
        first, second = RunServices(a), RunServices(b)
        first.kept(RunBudget).spent = "OpenAlex's daily budget is spent"
        assert second.kept(RunBudget).spent == ""


def test_parallel_tools_of_one_run_get_the_same_object(tmp_path):
    with Workspace(tmp_path / "run", 2**20) as work:
        services = RunServices(work)
        seen: list[Tally] = []
        threads = [threading.Thread(target=lambda: seen.append(services.kept(Tally))) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len({id(t) for t in seen}) == 1
