"""The `team` strategy: an orchestrator with a ledger delegating to role workers (issue 32)."""

from __future__ import annotations

from agent.team.delegate import WorkerName, make_delegate_tool
from agent.team.ledger import Ledger, Progress, Report, parse_ledger, parse_progress
from agent.team.orchestrator import run_team
from agent.team.workers import Worker, build_workers, cut_report

__all__ = ["Ledger", "Progress", "Report", "Worker", "WorkerName", "build_workers", "cut_report",
           "make_delegate_tool", "parse_ledger", "parse_progress", "run_team"]
