"""Every widget of tests/support/widget_sites.py operated through the browser tools in real Chromium.

One Chromium and one site serve the module; each test is its own run (workspace, browser context): the
`browser` and `run` fixtures of tests/tools/conftest.py.
The last test drives one page through the agent loop: the real OpenAI client against the scripted server.
"""

from __future__ import annotations

import re

from tests.support.chromium import browser_tool_marks
from tests.support.js_sites import ref_of
from tests.support.widget_sites import LONG_TEXT, widget_sites

pytestmark = browser_tool_marks()
SITE = widget_sites
"""The site the `site` fixture of tests/tools/conftest.py serves for this module."""


def test_headers_drawn_as_h3_role_tab_get_refs_and_open_their_panel(run, site):
    page = run("browser_open", url=site.url("/accordion"))
    assert re.search(r'\[e\d+\] tab "Admission" selected=false expanded=false', page)
    assert "Adults pay" not in page
    page = run("browser_click", ref=ref_of(page, 'tab "Admission"'))
    assert 'tab "Admission" selected=false expanded=true' in page and "Adults pay 14 euros." in page
    assert "### Getting here" in page  # the usual pattern, a toggle button inside a heading, keeps both
    page = run("browser_click", ref=ref_of(page, 'button "Getting here" expanded=false'))
    assert "Tram 4 to the museum stop." in page


def test_a_tree_shows_levels_and_expanded_state_and_opens_folders(run, site):
    page = run("browser_open", url=site.url("/tree"))
    assert re.search(r'treeitem "Documents" level=1 selected=false expanded=false', page)
    assert "budget.xlsx" not in page
    page = run("browser_click", ref=ref_of(page, 'treeitem "Documents"'))
    assert 'treeitem "Documents" level=1 selected=false expanded=true' in page
    assert re.search(r'treeitem "budget.xlsx" level=2', page) and "river.jpg" not in page
    page = run("browser_click", ref=ref_of(page, 'treeitem "minutes.docx"'))
    assert "minutes.docx size: 44 KB" in page


def test_reply_and_forward_inside_a_clickable_row_get_their_own_refs(run, site):
    page = run("browser_open", url=site.url("/inbox"))
    row = re.search(r'\[(e\d+)\] clickable "Bob Lunch on Friday[^\n]*\n\s+\[(e\d+)\] clickable "Reply"\n'
                    r'\s+\[(e\d+)\] clickable "Forward"', page)
    assert row, page
    assert "Forwarding Bob" in run("browser_click", ref=row.group(3))
    assert "Opened: Lunch on Friday" in run("browser_click", ref=row.group(1))
    assert re.search(r'clickable "Bob Lunch on Friday ?"', page)  # the row's name leaves its actions out
    link = re.search(r'\[e\d+\] link "Dan Newsletter Archive" → \S+#archived\n\s+\[(e\d+)\] button "Archive"', page)
    assert link, page
    assert "Archived Dan" in run("browser_click", ref=link.group(1))


def test_values_are_exact_and_typed_inputs_show_and_check_their_format(run, site):
    page = run("browser_open", url=site.url("/fields"))
    assert f'textbox "Notes" value="{LONG_TEXT}"' in page and LONG_TEXT.endswith("   ") and len(LONG_TEXT) == 500
    assert 'textbox "Day" type=date format=YYYY-MM-DD value=""' in page
    assert 'slider "Party size" type=range min=0 max=50 step=5 value="20"' in page
    assert 'spinbutton "Rooms" type=number min=1 max=9 value=""' in page
    refused = run.fail("browser_type", ref=ref_of(page, 'textbox "Day"'), text="03/12/2026")
    assert "refused '03/12/2026'" in refused and "YYYY-MM-DD" in refused
    assert "from 0 to 50 in steps of 5" in run.fail("browser_type", ref=ref_of(page, 'slider'), text="23")
    assert "plain number" in run.fail("browser_type", ref=ref_of(page, "spinbutton"), text="two")
    run("browser_type", ref=ref_of(page, 'textbox "Day"'), text="2026-12-03")
    run("browser_type", ref=ref_of(page, 'textbox "Time"'), text="14:30")
    run("browser_type", ref=ref_of(page, "slider"), text="35")
    high = run("browser_type", ref=ref_of(page, "spinbutton"), text="12")
    assert "reports its value invalid" in high
    run("browser_type", ref=ref_of(page, "spinbutton"), text="3")
    page = run("browser_select", ref=ref_of(page, 'listbox "Extras"'), option=["Parking", "Late checkout"])
    assert 'selected="Parking, Late checkout"' in page
    page = run("browser_click", ref=ref_of(page, 'button "Check"'))
    assert "Got: day=2026-12-03 time=14:30 party=35 rooms=3 extras=Parking+late notes=500" in page
    spaced = run("browser_type", ref=ref_of(page, 'textbox "Notes"'), text="  two  spaces\tand a tab  ")
    assert 'value="  two  spaces\\tand a tab  "' in spaced


def test_a_slider_worked_by_arrow_keys_and_an_unknown_key_is_named(run, site):
    page = run("browser_open", url=site.url("/slider"))
    assert re.search(r'slider "Rating" min=0 max=10 value="3"', page)
    slider = ref_of(page, 'slider "Rating"')
    run("browser_press", key="ArrowRight", ref=slider)
    page = run("browser_press", key="ArrowRight")  # the focus stayed on the slider
    assert 'value="5"' in page and "Rating: 5" in page
    assert "not a key name" in run.fail("browser_press", key="Rightwards", ref=slider)


def test_a_sortable_list_is_reordered_by_drag(run, site):
    page = run("browser_open", url=site.url("/sortable"))
    page = run("browser_drag", from_ref=ref_of(page, 'option "Delta"'), to_ref=ref_of(page, 'option "Alpha"'))
    assert "Order: Delta, Alpha, Bravo, Charlie" in page


def test_selected_text_is_what_the_page_highlights(run, site):
    run("browser_open", url=site.url("/highlight"))
    page = run("browser_select_text", ref="", text="Its first director was Amelia Hart")
    assert "Selected 34 characters" in page
    page = run("browser_click", ref=ref_of(page, 'button "Highlight selection"'))
    assert "Highlighted: Its first director was Amelia Hart" in page
    assert "does not contain" in run.fail("browser_select_text", ref="", text="founded in 1999")


def test_upload_takes_workspace_files_and_attachments_only(browser, site, tmp_path):
    from tools.core.context import ToolContext
    from tools.core.executor import run_tool
    from tools.core.services import RunServices

    work = browser.workspace()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    attachment = tmp_path / "query.txt"
    attachment.write_text("attachment line\nmore\n")
    (work.root / "notes").mkdir(parents=True)
    (work.root / "notes" / "mine.txt").write_text("workspace line\n")
    (work.root / "link.txt").symlink_to(secret)
    config = ToolContext(attachments=(attachment,), run_services=RunServices(work), confined=True).to_config()

    def call(name: str, **args: object):
        return run_tool(browser.tools[name], args, browser.settings, config)

    try:
        page = str(call("browser_open", url=site.url("/upload")).output)
        field, button = ref_of(page, 'button "Image file"'), ref_of(page, 'button "Upload image"')
        for path in (str(secret), "link.txt", "../" + secret.name, "/etc/passwd"):
            refused = call("browser_upload", ref=field, path=path)
            assert not refused.ok and "TOP SECRET" not in str(refused.output), (path, refused.output)
        got = call("browser_upload", ref=field, path="notes/mine.txt")
        assert got.ok and "Received mine.txt (15 bytes): workspace line" in str(got.output)
        got = call("browser_upload", ref=button, path=str(attachment))
        assert got.ok and "Received query.txt (21 bytes): attachment line" in str(got.output)
    finally:
        work.close()


def test_points_of_a_full_page_screenshot_click_and_hover_a_canvas(run, site):
    page = run("browser_open", url=site.url("/zones"))
    assert "canvas 600×200" in page
    shot = run("browser_screenshot", full_page=True)
    assert "the whole page" in shot
    canvas_top = 8 + 37 + 21 + 21  # body margin, h1 and its margins: the canvas starts below the heading
    assert "You clicked: Green zone" in run("browser_click_at", x=300, y=canvas_top + 100)
    assert "Pointer over: Blue zone" in run("browser_hover_at", x=500, y=canvas_top + 50)
    assert "outside the last screenshot" in run.fail("browser_click_at", x=5000, y=10)


def test_the_agent_loop_reorders_a_list_by_drag(site, tmp_path):
    from agent.pipeline import Pipeline
    from config import load_settings
    from tests.support.openai_server import ScriptedOpenAI, call, say, tool_results

    def script(body: dict):
        results = tool_results(body)
        if not results:
            return call("browser_open", url=site.url("/sortable"))
        if "Order:" not in results[-1]:
            return call("browser_drag", from_ref=ref_of(results[-1], 'option "Charlie"'),
                        to_ref=ref_of(results[-1], 'option "Alpha"'))
        found = re.search(r"Order: (\w+)", results[-1])
        return say("FINAL ANSWER: " + (found.group(1) if found else "none"))

    with ScriptedOpenAI(script) as model:
        settings = load_settings(OPENAI_BASE_URL=model.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", FETCH_ALLOWED_HOSTS=site.host_port, TOOL_TIMEOUT=20)
        pipeline = Pipeline(settings)
        try:
            solution = pipeline.solve("Drag Charlie to the top of the list; which item is first?", use_rag=False)
        finally:
            pipeline.close()  # its application's browsers
    assert solution.answer == "Charlie" and solution.tools_used == ["browser_open", "browser_drag"]
