"""The words of the team: each role's system prompt (its FIRST LINE names the role) and the orchestrator's requests.

The first line of every system message is the contract a server (and the scripted test server) tells the
roles apart by: "You are the orchestrator", "You are the researcher", "You are the browser operator",
"You are the reader", "You are the coder". The ledger and progress requests follow Magentic-One's task
and progress ledgers (Fourney et al., 2024), reworded and cut to what this harness uses.
"""

from __future__ import annotations

from agent.prompts import BROWSER_GUIDANCE, GAIA_SYSTEM_PROMPT
from tools.core.specs import Role

ORCHESTRATOR_PROMPT = (
    "You are the orchestrator of a small team that answers one question.\n"
    "You do not use tools yourself: you plan, delegate sub-tasks with the delegate tool, and read the workers' "
    "reports. A worker sees only the task you write: make each task self-contained (names, dates, URLs, file "
    "paths, what to report back). Call delegate several times in one turn when sub-tasks are independent (for "
    "example one reader per attachment): they run at the same time. When the reports answer the question, stop "
    "delegating and answer.\n\n" + GAIA_SYSTEM_PROMPT
)

_WORKER_RULES = (
    "You work for an orchestrator who reads only your final message: end with a short, factual report of what "
    "you found (values, names, sources) and what you could not find. Use your tools; do not guess what a tool "
    "can check. Attached files are given by absolute path; pass that exact path to the tool. Long pages and "
    "files come in pages: read on, or call find_in_page(source, query)."
)

WORKER_PROMPTS: dict[Role, str] = {
    "researcher": ("You are the researcher: you find facts on the web, Wikipedia, archives, papers and maps.\n"
                   + _WORKER_RULES + " Web pages keep their links as [text](URL): follow one with fetch_webpage."),
    "browser": ("You are the browser operator: you operate web pages in a real browser.\n"
                + _WORKER_RULES + " " + BROWSER_GUIDANCE.replace("To read a page, use fetch_webpage: it is cheaper "
                                                                 "and faster. ", "")),
    "reader": ("You are the reader: you read attached files (text, spreadsheets, PDFs, images, audio, video).\n"
               + _WORKER_RULES),
    "coder": ("You are the coder: you compute with Python and the calculator.\n" + _WORKER_RULES
              + " Print the values you need; report the numbers you computed."),
}

WORKER_DUTIES: dict[Role, str] = {
    "researcher": "searches the web, Wikipedia (pages, revisions), the Wayback Machine, papers and maps",
    "browser": "operates web pages in a real browser (search boxes, forms, buttons, JavaScript-only content)",
    "reader": "reads attached files: text, spreadsheets, PDFs, images, audio, video",
    "coder": "runs Python and the calculator on numbers and data it is given or reads from a file",
}

LEDGER_REQUEST = (
    "Before delegating, write the task ledger for the question above, in exactly these sections:\n"
    "FACTS GIVEN: facts stated in the question or its attachments\n"
    "FACTS TO LOOK UP: facts a worker must find, and where\n"
    "FACTS TO DERIVE: what must be computed or reasoned from the others\n"
    "EDUCATED GUESSES: what you suspect, from memory\n"
    "PLAN: short numbered steps, each naming the worker (one of: {workers})"
)

REPLAN_REQUEST = (
    "The team has made no progress for {stalls} rounds. Re-make the task ledger: say what was learnt, what "
    "failed and why, and a NEW plan that tries another way (another worker, another source, another query). "
    "Use exactly these sections: FACTS GIVEN, FACTS TO LOOK UP, FACTS TO DERIVE, EDUCATED GUESSES, PLAN "
    "(workers: {workers})"
)

PROGRESS_REQUEST = (
    "Check the team's progress on the question above. Answer with ONE JSON object and nothing else:\n"
    '{"satisfied": true|false, "looping": true|false, "progress": true|false, "next_step": "..."}\n'
    "satisfied: the reports are enough to answer the question fully. looping: the same requests or the same "
    "failed reports are repeating. progress: the last round found something new that brings the answer closer. "
    "next_step: what to do next, in one sentence."
)

ROUND_REQUEST = (
    "Delegate the next step of the plan with the delegate tool (several calls at once when independent), or, "
    "if the reports already answer the question, give the answer now with the template: "
    "FINAL ANSWER: [YOUR FINAL ANSWER]"
)

ANSWER_REQUEST = (
    "Answer the question now from the reports above; no more delegation. Finish with the template: "
    "FINAL ANSWER: [YOUR FINAL ANSWER]"
)


def worker_lines(roles: list[Role]) -> str:
    """One line per offered worker: its name and what it does (for the orchestrator's requests)."""
    return "\n".join(f"- {role}: {WORKER_DUTIES[role]}" for role in roles)
