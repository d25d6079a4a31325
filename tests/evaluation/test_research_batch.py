"""A GAIA-format batch of research tasks through the real pipeline, the real OpenAI client and loopback doubles.

Each task can only be answered by reading on: paging to a fact on the last page, finding a word,
following a link whose URL is only in the page's markup, reading a past revision, counting
revisions, reading a Wayback snapshot, finding a paper and searching its PDF, looking at an image on a page
(the scripted model's vision reply is read from the pixels it was sent) and watching a video (an
attached .MOV's keyframes, a YouTube video's captions from recorded responses). The scripted model
reads the tool results it gets back and takes its next step from them (a regex over what the tool
returned), so a tool that fails or hides the fact makes the task wrong.

Adding a task is one `ResearchTask` entry in `TASKS`: its question, answer, the routes it needs on
the loopback site and its plan (one function per model turn, from the tool results so far).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from evaluation.dataset import load_split
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.media import make_video
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say
from tests.support.research_site import (
    ArxivPaper,
    MediaWikiDouble,
    WikiRevision,
    arxiv_double,
    long_article,
    multipage_pdf,
    wayback_double,
)
from tests.support.scripted_batch import (
    PlannedTask,
    answer,
    grab,
    plan_model,
    records_by_key,
    run_planned,
    scripted_settings,
    step,
)
from tests.support.web_server import LocalWebServer, Route
from tests.support.web_server import Reply as WebReply
from tests.support.youtube import VIDEO_ID, RecordedYouTube


@dataclass(frozen=True)
class ResearchTask(PlannedTask):
    """A planned task and what the loopback site serves for it (routes by path, from the site's base URL)."""

    routes: Callable[[str], dict[str, Route]] = field(default=lambda site: {})


def last_page(result: str) -> int:
    return int(grab(r"\[page 1 of (\d+)\]", result).replace("NOT-FOUND", "1"))


LAST_FACT = "The keeper's final logbook entry records 7,318 ships."
MIDDLE_FACT = "The society's treasurer in 1921 was Ottilie Brennan."
WIKI = MediaWikiDouble({"Isle of Test": [
    WikiRevision(101, "2019-03-01T10:00:00Z", "Ann", "<p>The island had 300 inhabitants.</p>"),
    WikiRevision(102, "2020-06-30T23:30:00Z", "Bob", "<p>The island had 412 inhabitants.</p>"),
    WikiRevision(103, "2020-07-01T00:10:00Z", "Cid", "<p>The island had 415 inhabitants.</p>"),
    WikiRevision(104, "2022-12-31T12:00:00Z", "Dee", "<p>The island had 500 inhabitants.</p>"),
    *[WikiRevision(200 + i, f"2021-03-{1 + i:02d}T09:00:00Z", "Eve", "<p>The island had 415 people.</p>")
      for i in range(17)]]})


def _wiki_routes(site: str) -> dict[str, Route]:
    return {"/w/api.php": WIKI}


def _wayback_routes(site: str) -> dict[str, Route]:
    page = "<html><body><h1>Menu</h1><p>Soup of the day: lentil with smoked paprika.</p></body></html>"
    return {"/web/20190314080000id_/http://diner.example/menu": WebReply(200, page),
            "/wayback/available": wayback_double({"http://diner.example/menu": [
                ("20190314080000", f"{site}/web/20190314080000/http://diner.example/menu")]})}


def _arxiv_routes(site: str) -> dict[str, Route]:
    pages = ["Introduction. " + "We model tides. " * 80, "Results. " + "Tables follow. " * 60
             + "The tidal power of Enceladus is 27 GW in our model."]
    paper = ArxivPaper("2106.01234v2", "Tidal Heating of Icy Moons", ("R. Okafor", "L. Brandt"),
                       "2021-06-02T17:00:00Z", "astro-ph.EP", "We model tidal heating.",
                       pdf_url=f"{site}/pdf/2106.01234v2")
    return {"/api/query": arxiv_double([paper]),
            "/pdf/2106.01234v2": WebReply(200, multipage_pdf(pages), "application/pdf")}


PALETTE = {"teal": (0, 128, 128), "crimson": (220, 20, 60), "white": (255, 255, 255), "black": (0, 0, 0),
           "gold": (255, 215, 0)}


def _logo_png() -> bytes:
    """A teal square on white: the only place the answer to the image task is written."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (240, 160), "white")
    ImageDraw.Draw(image).rectangle((70, 30, 170, 130), fill=PALETTE["teal"])
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _brand_routes(site: str) -> dict[str, Route]:
    page = ("<html><body><h1>Brand guide</h1><p>Our logo is shown below.</p>"
            "<img src='/static/logo.png' alt='Company logo'></body></html>")
    return {"/brand": WebReply(200, page), "/static/logo.png": WebReply(200, _logo_png(), "image/png")}


def vision_reply(body: dict) -> Reply | None:
    """The scripted vision model: it names the colour at the centre of the first image it was sent."""
    from PIL import Image

    for message in body.get("messages", []):
        for part in message.get("content") if isinstance(message.get("content"), list) else []:
            if part.get("type") == "image_url":
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                image = Image.open(io.BytesIO(data)).convert("RGB")
                centre: tuple[int, int, int] = image.getpixel(  # type: ignore[assignment]
                    (image.width // 2, image.height // 2))
                name = min(PALETTE, key=lambda n: sum((a - b) ** 2 for a, b in zip(PALETTE[n], centre, strict=True)))
                return say(f"The square is {name}.")
    return None


def _write_clip(path: Path) -> None:
    make_video(path, slides=("PLATFORM 9",), speech=None)


TASKS: list[ResearchTask] = [
    ResearchTask(
        "paging", "How many ships does the keeper's final logbook entry record, according to {site}/lighthouse?",
        "7318",
        (step("fetch_webpage", url="{site}/lighthouse"),
         lambda r, site: call("fetch_webpage", url=f"{site}/lighthouse", page=last_page(r[-1])),
         answer(r"records ([\d,]+) ships", lambda s: s.replace(",", ""))),
        routes=lambda site: {"/lighthouse": WebReply(200, long_article("Lighthouse", 60, {59: LAST_FACT}))}),
    ResearchTask(
        "finding", "Who was the society's treasurer in 1921, according to {site}/society?", "Ottilie Brennan",
        (step("find_in_page", source="{site}/society", query="treasurer in 1921"),
         answer(r"treasurer in 1921 was (\w+ \w+)")),
        routes=lambda site: {"/society": WebReply(200, long_article("Society", 60, {31: MIDDLE_FACT}))}),
    ResearchTask(
        "link", "The page {site}/harbour links to a roster of keepers. Who is the first keeper on that roster?",
        "Ada Quill",
        (step("fetch_webpage", url="{site}/harbour"),
         lambda r, site: call("fetch_webpage", url=grab(r"\[the roster of keepers\]\((\S+?)\)", r[-1])),
         answer(r"First keeper: (\w+ \w+)")),
        routes=lambda site: {
            "/harbour": WebReply(200, long_article("Harbour", 2, extra_html="<p>See <a href='/k/r?id=7'>the roster of "
                                                                             "keepers</a> for names.</p>")),
            "/k/r": WebReply(200, "<html><body><h1>Roster</h1><p>First keeper: Ada Quill (1850).</p></body></html>")}),
    ResearchTask(
        "revision", "How many inhabitants did the Wikipedia article 'Isle of Test' give at the end of 30 June 2020?",
        "412", (step("wikipedia_page", title="Isle of Test", as_of="2020-06-30"), answer(r"had (\d+) inhabitants")),
        routes=_wiki_routes),
    ResearchTask(
        "revisions", "How many times was the Wikipedia article 'Isle of Test' edited in 2021?", "17",
        (step("wikipedia_revisions", title="Isle of Test", start="2021-01-01", end="2021-12-31"),
         answer(r"^(\d+) revisions")), routes=_wiki_routes),
    ResearchTask(
        "snapshot", "What was the soup of the day on http://diner.example/menu in May 2019?",
        "lentil with smoked paprika", (step("wayback", url="http://diner.example/menu", date="2019-05-01"),
                                       answer(r"Soup of the day: ([\w ]+)\.")), routes=_wayback_routes),
    ResearchTask(
        "paper", "In the arXiv paper on tidal heating of icy moons, what tidal power (in GW) is given for Enceladus?",
        "27",
        (step("arxiv_search", query="tidal heating icy moons"),
         lambda r, site: call("find_in_page", source=grab(r"PDF: (\S+)", r[-1]), query="Enceladus"),
         answer(r"Enceladus is (\d+) GW")), routes=_arxiv_routes),
    ResearchTask(
        "image", "What colour is the square in the company logo shown on {site}/brand? Answer with one word.", "teal",
        (step("fetch_webpage", url="{site}/brand"),
         lambda r, site: call("analyze_image", path=grab(r"!\[Company logo\]\((\S+?)\)", r[-1]),
                              question="What colour is the square?"),
         answer(r"The square is (\w+)")), routes=_brand_routes),
    ResearchTask(
        "video", "Which platform number is shown in the attached video?", "9",
        (step("watch_video", source="IMG_4231.MOV", question="Which platform number is shown?"),
         answer(r"PLATFORM (\d+)")), file_name="IMG_4231.MOV", write_file=_write_clip),
    ResearchTask(
        "youtube", f"According to the YouTube video https://www.youtube.com/watch?v={VIDEO_ID}, in which year did "
                   "Galileo see four moons circling Jupiter?", "1610",
        (step("watch_video", source=f"https://youtu.be/{VIDEO_ID}"),
         answer(r"\] circling Jupiter in (\d{4})"))),
]


@pytest.fixture(scope="module")
def site():
    with LocalWebServer({}) as server:
        for task in TASKS:
            server.routes.update(task.routes(server.base))
        yield server


def test_research_batch_is_answered_correctly_by_reading_on(site, tmp_path, monkeypatch):
    RecordedYouTube().install(monkeypatch)  # the YouTube task: captions and metadata, no download
    root = make_gaia_folder(tmp_path / "gaia", tasks=[t.fixture("research", site.base) for t in TASKS])
    samples = list(load_split("validation", data_dir=root))
    with ScriptedOpenAI(plan_model(TASKS, site.base, vision_reply)) as model:
        settings = scripted_settings(
            model.url, tmp_path, FETCH_ALLOWED_HOSTS=site.host_port, WIKIPEDIA_API_URL=site.url("/w/api.php"),
            WAYBACK_API_URL=site.url("/wayback/available"), ARXIV_API_URL=site.url("/api/query"),
            MAX_FILE_SIZE=4000, TOOL_TIMEOUT=20)
        result = run_planned(samples, settings, tmp_path / "run")
    records = records_by_key(samples, TASKS, result.records)
    wrong = {k: (r.predicted, r.expected, r.error) for k, r in records.items() if not r.correct}
    assert not wrong and len(records) == len(TASKS)
    assert site.hits("/lighthouse") == 1  # page 1 and the last page: one download
    used = {k: r.tools_used for k, r in records.items()}
    assert used["paging"] == ["fetch_webpage"] and used["paper"] == ["arxiv_search", "find_in_page"]
    assert used["image"] == ["fetch_webpage", "analyze_image"] and used["video"] == used["youtube"] == ["watch_video"]
    assert records["paging"].steps == 3  # page 1, the last page, the answer
