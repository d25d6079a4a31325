"""The browser tools operate loopback JavaScript sites whose data a static reader never sees.

One Chromium serves the whole module (the harness's shared engine); each test is its own run with its
own workspace, so its own browser context (the `browser` and `run` fixtures of tests/tools/conftest.py).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from tests.support.chromium import browser_tool_marks
from tests.support.js_sites import BrowserHarness, expected_count, js_sites, ref_of

pytestmark = browser_tool_marks()
SITE = js_sites
"""The site the `site` fixture of tests/tools/conftest.py serves for this module."""


def test_search_box_results_and_a_detail_page_rendered_by_javascript(run, site):
    page = run("browser_open", url=site.url("/search"))
    assert page.startswith(f"URL: {site.url('/search')}\nTitle: Collection search\n")
    assert re.search(r'\[e\d+\] searchbox "Search the collection" value=""', page)
    results = run("browser_type", ref=ref_of(page, "searchbox"), text="coral", submit=True)
    assert 'value="coral"' in results and "Coral Reef Diorama" in results
    link = re.search(r'\[(e\d+)\] link "Coral Reef Diorama" → (\S+)', results)
    assert link and link.group(2) == site.url("/item?id=3")
    detail = run("browser_click", ref=link.group(1))
    assert "# Coral Reef Diorama" in detail and "Accession number: AC-1990-311" in detail


def test_filters_select_checkbox_and_apply_give_the_count(run, site):
    page = run("browser_open", url=site.url("/filters"))
    assert 'combobox "Year" selected="All" options="All | 2018 | 2019 | 2020"' in page
    assert re.search(r'checkbox "Open access only" checked=false', page)
    page = run("browser_select", ref=ref_of(page, 'combobox "Year"'), option="2019")
    assert 'selected="2019"' in page
    page = run("browser_click", ref=ref_of(page, 'checkbox "Open access only"'))
    assert 'checkbox "Open access only" checked=true' in page
    page = run("browser_click", ref=ref_of(page, 'button "Apply"'))
    assert f"{expected_count('2019', True)} results" in page


def test_select_by_value_and_an_unknown_option_lists_the_options(browser, run, site):
    page = run("browser_open", url=site.url("/filters"))
    bad = browser.call(run.work, "browser_select", ref=ref_of(page, "combobox"), option="1999")
    assert not bad.ok and "All | 2018 | 2019 | 2020" in bad.output


def test_javascript_pagination_and_back_keeps_the_list_state(run, site):
    page = run("browser_open", url=site.url("/list"))
    assert "Specimen 001" in page and "Page 1 of 3" in page
    page = run("browser_click", ref=ref_of(page, 'button "Next page"'))
    assert "Specimen 011" in page and "Specimen 001" not in page and "Page 2 of 3" in page
    detail = run("browser_click", ref=ref_of(page, 'link "Specimen 014"'))
    assert "Detail of specimen 14" in detail
    back = run("browser_back")
    assert back.startswith(f"URL: {site.url('/list?page=2')}") and "Specimen 014" in back and "Page 2 of 3" in back


def test_back_with_no_history_says_so(run, site):
    run("browser_open", url=site.url("/help"))
    assert "no earlier page" in run("browser_back")


def test_svg_tooltip_appears_only_on_hover(run, site):
    page = run("browser_open", url=site.url("/chart"))
    assert "thousand visitors" not in page
    bar = ref_of(page, 'graphic "Bar 2020"')
    hovered = run("browser_hover", ref=bar)
    assert "New on the page:\n  2020: 378 thousand visitors" in hovered


def test_tabs_load_their_content_on_click(run, site):
    page = run("browser_open", url=site.url("/tabs"))
    assert 'tab "Overview" selected=true' in page and "1,284,337" not in page
    page = run("browser_click", ref=ref_of(page, 'tab "Statistics"'))
    assert 'tab "Statistics" selected=true' in page and "Visitors in 2022: 1,284,337." in page


def test_infinite_scroll_in_an_inner_scrolling_element(run, site):
    page = run("browser_open", url=site.url("/feed"))
    assert "Post number 10" in page and "Post number 35" not in page
    for _ in range(4):
        page = run("browser_scroll", direction="bottom")
    assert "inner scrolling area" in page and "Post number 35" in page


def test_scroll_rejects_an_unknown_direction(browser, run, site):
    run("browser_open", url=site.url("/feed"))
    outcome = browser.call(run.work, "browser_scroll", direction="sideways")
    assert outcome.error_kind == "bad_arguments" and "bottom" in outcome.output


def test_form_with_radio_checkbox_submit_and_an_accepted_dialog(run, site):
    page = run("browser_open", url=site.url("/form"))
    page = run("browser_click", ref=ref_of(page, 'radio "Medium"'))
    assert 'radio "Medium" checked=true' in page and 'radio "Small" checked=false' in page
    page = run("browser_click", ref=ref_of(page, 'checkbox "Gift wrap"'))
    page = run("browser_click", ref=ref_of(page, 'button "Place order"'))
    assert 'alert said: "Thank you for your order" (accepted)' in page and "Order code: M-GIFT-7" in page


def test_clicking_a_checkbox_twice_toggles_it_back(run, site):
    page = run("browser_open", url=site.url("/form"))
    box = ref_of(page, 'checkbox "Gift wrap"')
    assert "checked=true" in run("browser_click", ref=box)
    assert 'checkbox "Gift wrap" checked=false' in run("browser_click", ref=box)


def test_hash_routed_single_page_app(run, site):
    page = run("browser_open", url=site.url("/spa"))
    page = run("browser_click", ref=ref_of(page, 'link "Fourth planet"'))
    assert page.startswith(f"URL: {site.url('/spa#/planet/4')}") and "## Mars" in page and "two moons" in page


def test_target_blank_and_window_open_stay_in_the_runs_one_tab(run, site):
    page = run("browser_open", url=site.url("/popup"))
    help_page = run("browser_click", ref=ref_of(page, 'link "Open help"'))
    assert help_page.startswith(f"URL: {site.url('/help')}") and "Type a word and press Search." in help_page
    page = run("browser_open", url=site.url("/popup"))
    late = run("browser_click", ref=ref_of(page, 'link "Open the late page"'))  # a popup would commit too late
    assert late.startswith(f"URL: {site.url('/late')}") and "This page took its time." in late
    page = run("browser_open", url=site.url("/popup"))
    opened = run("browser_click", ref=ref_of(page, 'button "Open window"'))
    assert "Boreal Forest Map" in opened


def test_listeners_added_with_add_event_listener_are_operable_but_not_a_whole_page_container(run, site):
    page = run("browser_open", url=site.url("/listeners"))
    more = ref_of(page, 'clickable "Show more"')
    assert not re.search(r'\[e\d+\] clickable "Catalogue', page)  # the container listening for the whole page
    assert "the 31st catalogue entry is Zircon" in run("browser_click", ref=more)


def test_stale_and_unknown_refs_name_browser_snapshot(browser, run, site):
    page = run("browser_open", url=site.url("/search"))
    old = ref_of(page, "searchbox")
    run("browser_open", url=site.url("/help"))
    stale = browser.call(run.work, "browser_click", ref=old)
    assert not stale.ok and "browser_snapshot" in stale.output and "earlier page" in stale.output
    unknown = browser.call(run.work, "browser_click", ref="e99999")
    assert not unknown.ok and "browser_snapshot" in unknown.output
    assert browser.call(run.work, "browser_click", ref="the button").error_kind == "bad_arguments"


def test_ref_numbers_are_never_reused_in_a_run(run, site):
    first = run("browser_open", url=site.url("/search"))
    second = run("browser_open", url=site.url("/search"))
    numbers = lambda text: {int(n) for n in re.findall(r"\[e(\d+)\]", text)}  # noqa: E731
    assert numbers(first) and min(numbers(second)) > max(numbers(first))


def test_actions_before_any_open_say_to_open_first(browser):
    work = browser.workspace()
    try:
        outcome = browser.call(work, "browser_click", ref="e1")
        assert not outcome.ok and "browser_open" in outcome.output
    finally:
        work.close()


def test_long_snapshots_are_paged_and_find_in_page_searches_the_whole_snapshot(site, browser):
    small = BrowserHarness(site.host_port, MAX_FILE_SIZE=1500)  # its own browser pool, closed at the end
    work = small.workspace()
    try:
        first = small.call(work, "browser_open", url=site.url("/long")).output
        pages = int(re.search(r"\[page 1 of (\d+)\]", first).group(1))
        assert pages > 1 and "browser_snapshot(page=2)" in first and 'find_in_page(source="browser"' in first
        last = small.call(work, "browser_snapshot", page=pages).output
        assert "marmalade" in last and f"[page {pages} of {pages}, the last]" in last
        from tools.web.fetch import make_fetch_tools

        finder = next(t for t in make_fetch_tools(small.settings) if t.name == "find_in_page")
        from tools.core.context import ToolContext

        found = finder.invoke({"source": "browser", "query": "closing word"},
                              config=ToolContext(run_services=small.services(work)).to_config())
        assert f"page {pages} of {pages}" in found and "marmalade" in found
    finally:
        work.close()
        small.close()


def test_two_concurrent_runs_have_isolated_contexts(browser, site):
    works = [browser.workspace("a"), browser.workspace("b")]
    seen: dict[int, str] = {}

    def session(index: int) -> None:
        page = browser.call(works[index], "browser_open", url=site.url("/note")).output
        if index == 0:
            page = browser.call(works[0], "browser_type", ref=ref_of(page, 'textbox "Note"'), text="alpha").output
            page = browser.call(works[0], "browser_click", ref=ref_of(page, 'button "Save"')).output
        seen[index] = page

    threads = [threading.Thread(target=session, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert "Saved note: alpha; cookie: note=alpha" in seen[0]
    later = browser.call(works[1], "browser_open", url=site.url("/note")).output
    assert "Saved note: (none); cookie: (none)" in later
    from tools.browser.tools import engine_for

    engine = engine_for(browser.settings, browser.browsers)
    contexts = sum(engine.each(lambda b: len(b.contexts), 10))  # the runs may be on different browser threads
    works[0].close()
    assert sum(engine.each(lambda b: len(b.contexts), 10)) == contexts - 1  # the run's end closed its context
    works[1].close()


def test_a_reply_carries_a_thumbnail_for_the_trace_only(browser, run, site):
    outcome = browser.call(run.work, "browser_open", url=site.url("/help"))
    assert outcome.thumbnail and outcome.thumbnail.startswith("data:image/jpeg;base64,")
    assert "base64" not in outcome.output
    from agent.events import ToolCall, ToolResult
    from ui.trace_view import tool_message

    message = tool_message(ToolCall(call_id="c", name="browser_open", args={"url": site.url("/help")}),
                           ToolResult(call_id="c", name="browser_open", output=outcome.output, ok=True,
                                      duration_s=1.0, thumbnail=outcome.thumbnail))
    assert site.url("/help") in message.metadata["title"]
    assert "<details><summary>🖼️ screenshot</summary><img src=\"data:image/jpeg;base64," in str(message.content)


def test_a_download_is_not_saved_by_the_browser_and_the_reply_names_fetch_webpage(run, site):
    page = run("browser_open", url=site.url("/files"))
    after = run("browser_click", ref=ref_of(page, 'link "Download the report"'))
    assert "download of 'report.csv'" in after and f'fetch_webpage(url="{site.url("/report.csv")}")' in after
    assert not list(run.work.root.rglob("report.csv"))


def test_a_screenshot_is_saved_in_the_runs_workspace_and_says_when_no_vision_model_answers(run, site):
    run("browser_open", url=site.url("/canvas"))
    reply = run("browser_screenshot", question="Which bar is the tallest?")
    path = re.search(r"saved to (\S+\.png)\.", reply)
    assert path and run.work.contains(Path(path.group(1)))
    assert Path(path.group(1)).read_bytes().startswith(b"\x89PNG")
    assert "No vision model is configured" in reply


def test_pages_per_run_are_capped(site, browser):
    capped = BrowserHarness(site.host_port, BROWSER_MAX_PAGES=2)  # its own browser pool, closed at the end
    work = capped.workspace()
    try:
        assert capped.call(work, "browser_open", url=site.url("/help")).ok
        assert capped.call(work, "browser_open", url=site.url("/help")).ok
        third = capped.call(work, "browser_open", url=site.url("/help"))
        assert third.error_kind == "size_limit" and "BROWSER_MAX_PAGES" in third.output
    finally:
        work.close()
        capped.close()


def test_a_page_still_loading_when_the_settle_wait_ends_says_so_and_a_later_snapshot_has_it(site, browser):
    hasty = BrowserHarness(site.host_port, TOOL_TIMEOUT=4)  # settles for 1 s at most; /api/slow takes 3 s
    work = hasty.workspace()
    try:
        first = hasty.call(work, "browser_open", url=site.url("/slow"))
        assert first.ok and "still loading" in first.output and "Loading…" in first.output
        for _ in range(20):  # a loaded machine may need a few looks
            later = hasty.call(work, "browser_snapshot")
            if "Arrived late." in later.output and "still loading" not in later.output:
                break
        assert "Arrived late." in later.output and "still loading" not in later.output
    finally:
        work.close()
        hasty.close()


def test_a_browser_that_died_is_started_again_for_the_next_call(browser, run, site):
    from tools.browser.tools import engine_for

    run("browser_open", url=site.url("/help"))
    engine = engine_for(browser.settings, browser.browsers)
    engine.call(lambda b: b.close(), 30)  # the process goes away as in a crash
    page = run("browser_open", url=site.url("/search"))
    assert "Search the collection" in page


def test_an_iframes_content_and_elements_are_in_the_snapshot(run, site):
    page = run("browser_open", url=site.url("/frames"))
    assert f"--- frame {site.url('/help')} ---" in page and "Type a word and press Search." in page


def test_a_link_aimed_at_a_named_frame_loads_in_that_frame(run, site):
    page = run("browser_open", url=site.url("/framed"))
    shown = run("browser_click", ref=ref_of(page, 'link "Show the item"'))
    assert shown.startswith(f"URL: {site.url('/framed')}") and f"--- frame {site.url('/item?id=2')} ---" in shown
