"""A GAIA-format batch of browser tasks through the real pipeline, the real OpenAI client and loopback JS sites.

Each task's answer shows only when the page is operated (typed into, filtered, clicked, hovered,
scrolled, or looked at on a canvas). The scripted model reads the snapshots it gets back and takes
its next step from them — the refs it clicks are read from the previous reply — so a tool that
hides an element, gives a wrong ref or misses what appeared makes the task wrong. The canvas task's
answer comes from the scripted vision model measuring the bars in the screenshot it was sent.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Callable
from itertools import takewhile

from agent.pipeline import Pipeline
from evaluation.dataset import load_split
from tests.support.chromium import browser_tool_marks
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.js_sites import expected_count, js_sites
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say, tool_results
from tests.support.scripted_batch import (
    Plan,
    PlannedTask,
    answer,
    grab,
    records_by_key,
    run_planned,
    scripted_settings,
    task_asked,
)

pytestmark = browser_tool_marks()

def ref(pattern: str, text: str) -> str:
    """The ref of the element `pattern` describes in a snapshot, or a ref no page has (the task then fails)."""
    found = re.search(r"\[(e\d+)\] " + pattern, text)
    return found.group(1) if found else "e0"


def opening(path: str) -> Plan:
    return lambda r, site: call("browser_open", url=f"{site}{path}")


def clicking(pattern: str, once: str = "") -> Plan:
    """Click what `pattern` describes — once the snapshot shows `once` (a page whose data is still loading)."""
    return lambda r, site: call("browser_click", ref=ref(pattern, r[-1]) if once in r[-1] else "e0")


TASKS = [
    PlannedTask("search", "What is the accession number of the Coral Reef Diorama in the collection at {site}/search?",
                "AC-1990-311",
                (opening("/search"),
                 lambda r, site: call("browser_type", ref=ref("searchbox", r[-1]), text="coral reef", submit=True),
                 clicking('link "Coral Reef Diorama"'), answer(r"Accession number: (\S+)"))),
    PlannedTask("filters", "How many open-access articles from 2019 does {site}/filters list?",
                str(expected_count("2019", True)),
                (opening("/filters"),
                 lambda r, site: call("browser_select", ref=ref('combobox "Year"', r[-1]), option="2019"),
                 clicking('checkbox "Open access only"'), clicking('button "Apply"'), answer(r"(\d+) results"))),
    PlannedTask("pagination", "Which specimen is listed fourth on the second page of {site}/list?", "Specimen 014",
                (opening("/list"), clicking('button "Next page"', once="Specimen 010"),
                 answer(r"(?s)Specimen 011.*?Specimen 012.*?Specimen 013.*?\"(Specimen \d+)\""))),
    PlannedTask("hover", "How many thousand visitors came in 2020, according to the chart at {site}/chart?", "378",
                (opening("/chart"), lambda r, site: call("browser_hover", ref=ref('graphic "Bar 2020"', r[-1])),
                 answer(r"2020: (\d+) thousand"))),
    PlannedTask("tabs", "How many visitors in 2022 does the Statistics tab of {site}/tabs give?", "1284337",
                (opening("/tabs"), clicking('tab "Statistics"'),
                 lambda r, site: say("FINAL ANSWER: " + grab(r"Visitors in 2022: ([\d,]+)", r[-1]).replace(",", "")))),
    PlannedTask("scroll", "What is the title of the 35th post on {site}/feed?", "Post number 35",
                (opening("/feed"), *[lambda r, site: call("browser_scroll", direction="bottom")] * 4,
                 answer(r"- (Post number 35)"))),
    PlannedTask("form", "Which order code does {site}/form give for a medium print with gift wrap?", "M-GIFT-7",
                (opening("/form"), clicking('radio "Medium"'), clicking('checkbox "Gift wrap"'),
                 clicking('button "Place order"'), answer(r"Order code: (\S+)"))),
    PlannedTask("spa", "How many moons does the fourth planet have, according to {site}/spa? Answer with a word.",
                "two", (opening("/spa"), clicking('link "Fourth planet"'), answer(r"It has (\w+) moons"))),
    PlannedTask("canvas", "Which bar of the sales chart at {site}/canvas is the tallest: 1, 2 or 3?", "3",
                (opening("/canvas"),
                 lambda r, site: call("browser_screenshot", question="Which red bar is the tallest?"),
                 answer(r"the tallest is bar (\d)"))),
]


def vision_reply(body: dict) -> Reply | None:
    """The scripted vision model: measures the red bars in the screenshot it was sent (left to right)."""
    from PIL import Image

    for message in body.get("messages", []):
        for part in message.get("content") if isinstance(message.get("content"), list) else []:
            if part.get("type") != "image_url":
                continue
            image = Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))).convert("RGB")
            heights = _red_bars(image)
            if not heights:
                return say("I see no red bars.")
            tallest = max(range(len(heights)), key=heights.__getitem__) + 1
            return say(f"There are {len(heights)} red bars; the tallest is bar {tallest}.")
    return None


def _red_bars(image: object) -> list[int]:
    """Heights of the runs of columns holding red pixels, left to right."""
    pixels = image.load()  # type: ignore[attr-defined]
    width, height = image.size  # type: ignore[attr-defined]
    columns = []
    for x in range(width):
        count = 0
        for y in range(0, height, 2):
            r, g, b = pixels[x, y]
            count += r > 150 and g < 90 and b < 90
        columns.append(count)
    bars, current = [], 0
    for count in [*columns, 0]:
        if count:
            current = max(current, count)
        elif current:
            bars.append(current)
            current = 0
    return bars


REREADS = 3
"""Times the model looks at the page again (browser_snapshot) when a step finds nothing to act on yet."""


def _called(body: dict) -> list[str]:
    """The names of the tools the model called so far, in order."""
    return [c["function"]["name"] for m in body.get("messages", []) if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []]


def _unready(reply: Reply, results: list[str]) -> bool:
    """Nothing to act on yet: a ref no page has, no answer, or a page that said it was still loading."""
    return (any(args.get("ref") == "e0" for _, args in reply.tool_calls) or "NOT-FOUND" in (reply.content or "")
            or bool(results) and "still loading" in results[-1])


def model_for(site: str) -> Callable[[dict], Reply]:
    """The scripted agent: one plan step per turn; like a real one, it looks again at a page still loading."""
    def script(body: dict) -> Reply:
        seen = vision_reply(body)
        if seen is not None:
            return seen
        task = task_asked(TASKS, site, body)
        results, called = tool_results(body), _called(body)
        steps = [name for name in called if name != "browser_snapshot"]
        trailing = len(list(takewhile(lambda name: name == "browser_snapshot", reversed(called))))
        reply = task.plan[min(len(steps), len(task.plan) - 1)](results, site)
        if _unready(reply, results) and trailing < REREADS:
            return call("browser_snapshot")
        return reply
    return script


def test_browser_batch_is_answered_correctly_by_operating_the_pages(tmp_path):
    with js_sites() as site:
        tasks = [t.fixture("browser", site.base) for t in TASKS]
        samples = list(load_split("validation", data_dir=make_gaia_folder(tmp_path / "gaia", tasks=tasks)))
        with ScriptedOpenAI(model_for(site.base)) as model:
            settings = scripted_settings(model.url, tmp_path, FETCH_ALLOWED_HOSTS=site.host_port, TOOL_TIMEOUT=20,
                                         MAX_ITERATIONS=20)
            result = run_planned(samples, settings, tmp_path / "run", concurrency=3)
    records = records_by_key(samples, TASKS, result.records)
    wrong = {k: (r.predicted, r.expected, r.error, r.reasoning_trace[-2500:]) for k, r in records.items()
             if not r.correct}
    assert not wrong and len(records) == len(TASKS)
    assert records["canvas"].tools_used == ["browser_open", "browser_screenshot"]
    assert [t for t in records["search"].tools_used if t != "browser_snapshot"] == ["browser_open", "browser_type",
                                                                                  "browser_click"]


def test_a_browser_step_in_the_trace_carries_its_url_and_a_screenshot(tmp_path):
    """The Debug trace (and its JSONL download) holds each browser step's page thumbnail; the model never sees it."""
    from agent.events import Solution, ToolResult
    from ui.trace_view import render_trace

    task = next(t for t in TASKS if t.key == "hover")
    with js_sites() as site, ScriptedOpenAI(model_for(site.base)) as model:
        settings = scripted_settings(model.url, tmp_path, FETCH_ALLOWED_HOSTS=site.host_port, TOOL_TIMEOUT=20)
        question = task.question.format(site=site.base)
        pipeline = Pipeline(settings)
        try:
            events = list(pipeline.stream(question, use_rag=False))
        finally:
            pipeline.close()  # its application's browsers
        sent_to_model = [m for request in model.requests for m in request.body.get("messages", [])]
    results = [e for e in events if isinstance(e, ToolResult)]
    # The scripted agent may look again (browser_snapshot) at a page still settling on a busy machine.
    assert [r.name for r in results if r.name != "browser_snapshot"] == ["browser_open", "browser_hover"]
    assert all(r.thumbnail and r.thumbnail.startswith("data:image/jpeg;base64,") for r in results)
    assert "data:image/jpeg" in Solution.from_events(question, events).trace_jsonl()
    assert not any("data:image" in str(m.get("content")) for m in sent_to_model)
    steps = [m for m in render_trace(events) if "browser_hover" in str((m.metadata or {}).get("title", ""))]
    assert steps and site.url("/chart") in steps[0].metadata["title"] and "<details>" in str(steps[0].content)
