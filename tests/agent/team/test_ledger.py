"""The ledger's parsing and a worker report's cut: pure functions, one case each."""

from __future__ import annotations

from agent.team import cut_report, parse_ledger, parse_progress
from agent.team.ledger import Ledger, Report


def test_ledger_sections_become_facts_and_plan() -> None:
    facts, plan = parse_ledger("**FACTS GIVEN**: two files\nFACTS TO LOOK UP: none\nPLAN:\n1. reader: read both")
    assert facts == "FACTS GIVEN: two files\nFACTS TO LOOK UP: none" and plan == "1. reader: read both"
    assert parse_ledger("just do it") == ("", "just do it")


def test_progress_is_json_or_lenient_words_and_unreadable_is_no_progress() -> None:
    strict = parse_progress('Sure: {"satisfied": false, "looping": true, "progress": "true", "next_step": "x"}')
    assert (strict.satisfied, strict.looping, strict.progress, strict.next_step) == (False, True, True, "x")
    assert strict.stalled  # looping counts as a stall even with progress
    lenient = parse_progress("satisfied: true, looping = false, progress: true")
    assert (lenient.satisfied, lenient.looping, lenient.progress) == (True, False, True)
    assert parse_progress("I am not sure.").stalled


def test_a_long_report_is_cut_with_a_note_and_the_ledger_shows_empty_reports() -> None:
    text, cut = cut_report("x" * 4000, 100, 0.25)
    assert text.startswith("x" * 400) and "WORKER_REPORT_TOKENS=100" in text and cut == 900
    assert cut_report("short", 100, 0.25) == ("short", 0)
    ledger = Ledger(facts="F", plan="P", reports=[Report("researcher", "look", "")])
    assert "REPORT 1 from the researcher (task: look):\n(empty report)" in ledger.render()
