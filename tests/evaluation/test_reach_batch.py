"""A GAIA-format batch of the research reach: scholarly databases, maps, a moment in a video, downloads the code uses.

Like tests/evaluation/test_research_batch.py: the real pipeline and OpenAI client against the scripted
server, the services as loopback doubles in their real shapes (tests/support/scholarly_doubles.py,
map_doubles.py). The scripted model reads each tool result and takes its next step from it (a regex
over what the tool returned), so a tool that fails or hides the fact makes the task wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest

from evaluation.dataset import load_split
from tests.support.downloads import large_pdf, roster_csv, roster_total
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.map_doubles import ALEX, GATE, STATIONS, AnyPath, NominatimDouble, OsrmDemoDouble, OverpassDouble
from tests.support.moving_pictures import answer_gif, counter_video
from tests.support.openai_server import ScriptedOpenAI, call
from tests.support.scholarly_doubles import (
    COMMA_DOI,
    COMMA_TITLE,
    ORCID_ID,
    PLOS_DOI,
    PLOS_ONE_MESSAGE,
    OpenAlexDouble,
    comma_title_message,
    openalex_entity,
    orcid_summary,
    sample_works,
    scholarly_servers,
)
from tests.support.scripted_batch import (
    Plan,
    PlannedTask,
    grab,
    plan_model,
    records_by_key,
    run_planned,
    scripted_settings,
)
from tests.support.scripted_batch import answer as planned_answer
from tests.support.web_server import LocalWebServer
from tests.support.web_server import Reply as WebReply
from tools.web.geocoding import distance_m


def answer(pattern: str) -> Plan:
    """The final turn: `pattern` (its ^ and $ at line ends: tool replies are lists) read from the last result."""
    return planned_answer(pattern, flags=re.MULTILINE)


def _write(maker: Callable[[Path], Path], path: Path) -> None:
    maker(path)


CSV_CODE = ("import pandas as pd\nframe = pd.read_csv({path!r})\n"
            "print('TOTAL', int(frame[frame.district == 'South'].volunteers.sum()))")

TASKS: list[PlannedTask] = [
    PlannedTask("abstract", f"According to its abstract, how many hours after high tide do catches peak in the paper "
                          f"'{COMMA_TITLE}'? Answer with a number word.", "two",
              (lambda r, s: call("paper_lookup", doi_or_title=COMMA_TITLE), answer(r"Catches peak (\w+) hours"))),
    PlannedTask("inverted", f"In the abstract of the paper with DOI {PLOS_DOI}, which disorder is methylphenidate "
                          "prescribed to treat?", "attention deficit hyperactivity disorder",
              (lambda r, s: call("paper_lookup", doi_or_title=PLOS_DOI),
               answer(r"symptoms of ([a-z ]+?) and the drug"))),
    PlannedTask("search", "How many citations does Ada Lovelace's 2017 article in the Journal of Fish Biology have "
                        "according to OpenAlex?", "5",
              (lambda r, s: call("scholarly_search", query="estuarine fisheries", author="Ada Lovelace", year="2017",
                                 venue="Journal of Fish Biology"), answer(r"Cited by: (\d+)"))),
    PlannedTask("orcid", f"How many works are on the public ORCID record {ORCID_ID}?", "3",
              (lambda r, s: call("orcid_works", orcid=f"https://orcid.org/{ORCID_ID}"), answer(r"^(\d+) works"))),
    PlannedTask("route", "What is the driving distance in km from the Brandenburg Gate to Alexanderplatz in Berlin, "
                       "to one decimal?", "3.3",
              (lambda r, s: call("route", origin="Brandenburg Gate, Berlin", destination="Alexanderplatz, Berlin"),
               answer(r"Route \(driving\): ([\d.]+) km"))),
    PlannedTask("nearby", "Which railway station is nearest to Alexanderplatz, Berlin?", "Berlin Alexanderplatz",
              (lambda r, s: call("nearby", place="Alexanderplatz, Berlin", kind="station"),
               answer(r"^1\. (.+?) — "))),
    PlannedTask("moment", "What code number is on screen at 0:07 in the attached video?", "47",
              (lambda r, s: call("watch_video", source="counter.mp4", start="0:07", end="0:07"),
               answer(r"^\[0:07\]\D*(\d{2})")), file_name="counter.mp4",
              write_file=lambda path: _write(counter_video, path)),
    PlannedTask("gif", "What number appears in the fourth frame of the attached animation?", "73",
              (lambda r, s: call("watch_video", source="signal.gif"), answer(r"^Frame 4 \[[^\]]*\]\D*(\d+)")),
              file_name="signal.gif", write_file=lambda path: _write(answer_gif, path)),
    PlannedTask("csv", "How many volunteers are there in the South district in total, according to "
                     "{site}/data/roster.csv?", str(roster_total()),
              (lambda r, s: call("fetch_webpage", url=f"{s}/data/roster.csv"),
               lambda r, s: call("run_python", code=CSV_CODE.format(path=grab(r"Saved to (\S+)", r[-1]))),
               answer(r"TOTAL (\d+)"))),
    PlannedTask("bigpdf", "How many shillings did the parish of Wendlebury pay in tithes, according to "
                        "{site}/archive/tithes.pdf?", "412",
              (lambda r, s: call("find_in_page", source=f"{s}/archive/tithes.pdf", query="Wendlebury"),
               answer(r"\(PDF p\. 37\):\n….*?paid (\d+) shillings"))),
]


@pytest.fixture(scope="module")
def services():
    alex = OpenAlexDouble(sample_works(), authors=[openalex_entity("A7", "Ada Lovelace")],
                          sources=[openalex_entity("S2", "Journal of Fish Biology")])
    jats = comma_title_message("<jats:p>Catches peak <jats:italic>two</jats:italic> hours after high tide.</jats:p>")
    groups = [[orcid_summary(n, f"Work {n}", str(2000 + n), "journal-article", "J", f"10.1/{n}", "Crossref")]
              for n in range(3)]
    with ExitStack() as stack:
        def serve(routes: dict) -> LocalWebServer:
            return stack.enter_context(LocalWebServer(routes))
        servers = {
            "site": serve({"/data/roster.csv": WebReply(200, roster_csv(), "text/csv"),
                           "/archive/tithes.pdf": WebReply(200, large_pdf(60, {37: "The parish of Wendlebury paid 412 "
                                                                                   "shillings in tithes."}),
                                                           "application/pdf")}),
            **stack.enter_context(scholarly_servers(alex, {PLOS_DOI: PLOS_ONE_MESSAGE, COMMA_DOI: jats}, groups)),
            "nominatim": serve({"/search": NominatimDouble([GATE, ALEX])}),
            "osrm": serve(AnyPath(OsrmDemoDouble({((52.516, 13.378), (52.522, 13.413)): (3284.6, 471.2)}))),
            "overpass": serve({"/api/interpreter": OverpassDouble(STATIONS, distance_m)}),
        }
        yield servers


def test_reach_batch_is_answered_correctly_through_the_real_client(services, tmp_path):
    site = services["site"].base
    samples = list(load_split("validation", data_dir=make_gaia_folder(
        tmp_path / "gaia", tasks=[t.fixture("reach", site) for t in TASKS])))
    with ScriptedOpenAI(plan_model(TASKS, site)) as model:
        settings = scripted_settings(
            model.url, tmp_path, VISION_MODEL_NAME="none", FETCH_ALLOWED_HOSTS=services["site"].host_port,
            MAX_FILE_SIZE=4000, TOOL_TIMEOUT=40, OPENALEX_API_URL=services["openalex"].base,
            CROSSREF_API_URL=services["crossref"].base, ORCID_API_URL=services["orcid"].base,
            NOMINATIM_URL=services["nominatim"].base, OSRM_URL=services["osrm"].base,
            OVERPASS_URL=services["overpass"].url("/api/interpreter"))
        result = run_planned(samples, settings, tmp_path / "run")
    records = records_by_key(samples, TASKS, result.records)
    wrong = {k: (r.predicted, r.expected, r.error, r.reasoning_trace[-1500:])
             for k, r in records.items() if not r.correct}  # the trace's end: the tool reply it read
    assert not wrong and len(result.records) == len(TASKS)
    used = {k: r.tools_used for k, r in records.items()}
    assert used["csv"] == ["fetch_webpage", "run_python"] and used["gif"] == used["moment"] == ["watch_video"]
    assert services["site"].hits("/archive/tithes.pdf") == 1
