"""Loopback JavaScript sites whose data is reachable only by operating the page (the browser tools' tests).

Every page renders its facts with JavaScript from a JSON endpoint or a closure, so a static reader
(fetch_webpage) sees none of them. One server holds them all:

- /search: a collection search box → results (JS) → /item?id=N, a detail page rendered by JS;
- /filters: year select + "open access" checkbox + Apply → a count of results;
- /list: pagination by a JS "Next page" button (pushState ?page=N); /detail?n=N pages; back keeps the page;
- /chart: an SVG bar chart whose values appear only in a tooltip on hover;
- /tabs: tabs that load their panel on click;
- /feed: infinite scroll inside an inner scrolling element;
- /form: radio + checkbox + submit → an order code (and an alert dialog);
- /spa: a hash-routed single-page app;
- /canvas: a bar chart drawn on a canvas (values only in pixels);
- /popup: target=_blank links (one to /late, which answers after SLOW_SECONDS) and a window.open button;
- /framed: a link aimed at a named iframe;
- /slow: a page whose one request takes SLOW_SECONDS (caught still loading by a short settle wait).
"""

from __future__ import annotations

import json
import time
from typing import Any

from tests.support.web_server import LocalWebServer, Reply, Request

ITEMS = {1: ("Aurora Borealis Quilt", "AC-1977-042"), 2: ("Boreal Forest Map", "AC-1981-107"),
         3: ("Coral Reef Diorama", "AC-1990-311")}
ARTICLES = [{"title": f"Article {i}", "year": 2018 + i % 3, "open": i % 4 == 0} for i in range(1, 41)]
LIST_ITEMS = [f"Specimen {n:03d}" for n in range(1, 31)]
BARS = {"2019": 412, "2020": 378, "2021": 455}
TABS = {"Overview": "A museum of natural history.", "Statistics": "Visitors in 2022: 1,284,337."}
FEED = [f"Post number {n}" for n in range(1, 61)]
PLANETS = {"3": ("Earth", "one moon"), "4": ("Mars", "two moons")}
SLOW_SECONDS = 3.0
"""How long /api/slow takes: longer than a 1 s settle wait, so the page is caught still loading."""


def _page(title: str, body: str, script: str = "") -> Reply:
    return Reply(200, f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
                      f"<body>{body}<script>{script}</script></body></html>")


SEARCH = _page("Collection search", """
<h1>Search the collection</h1>
<input type="search" id="q" aria-label="Search the collection" placeholder="Search">
<button id="go">Search</button> <a href="/help" target="_blank">Help</a>
<ul id="results"></ul>""", """
async function run() {
  const q = document.getElementById('q').value;
  const r = await fetch('/api/search?q=' + encodeURIComponent(q)).then((x) => x.json());
  document.getElementById('results').innerHTML = r.map((i) =>
    `<li><a href="/item?id=${i.id}">${i.title}</a></li>`).join('') || '<li>No results</li>';
}
document.getElementById('go').addEventListener('click', run);
document.getElementById('q').addEventListener('keydown', (e) => { if (e.key === 'Enter') run(); });""")

ITEM = _page("Item", "<h1 id='t'>Loading…</h1><p id='acc'></p>", """
const id = new URLSearchParams(location.search).get('id');
fetch('/api/item?id=' + id).then((x) => x.json()).then((i) => {
  document.getElementById('t').textContent = i.title;
  document.getElementById('acc').textContent = 'Accession number: ' + i.accession;
});""")

FILTERS = _page("Articles", """
<h1>Articles</h1>
<label for="year">Year</label><select id="year"><option>All</option><option>2018</option>
<option>2019</option><option>2020</option></select>
<label><input type="checkbox" id="open"> Open access only</label>
<button id="apply">Apply</button><p id="count"></p>""", """
let data = [];
fetch('/api/articles').then((x) => x.json()).then((d) => { data = d; });
document.getElementById('apply').addEventListener('click', () => {
  const y = document.getElementById('year').value, o = document.getElementById('open').checked;
  const n = data.filter((a) => (y === 'All' || String(a.year) === y) && (!o || a.open)).length;
  document.getElementById('count').textContent = n + ' results';
});""")

LIST = _page("Specimens", "<h1>Specimens</h1><ol id='items'></ol><button id='next'>Next page</button>"
                          "<p id='where'></p>", """
let page = +(new URLSearchParams(location.search).get('page') || 1);
async function show() {
  const r = await fetch('/api/list?page=' + page).then((x) => x.json());
  document.getElementById('items').innerHTML = r.items.map((t, i) =>
    `<li><a href="/detail?n=${(page - 1) * 10 + i + 1}">${t}</a></li>`).join('');
  document.getElementById('where').textContent = 'Page ' + page + ' of ' + r.pages;
}
document.getElementById('next').addEventListener('click', () => {
  page += 1; history.pushState({}, '', '?page=' + page); show();
});
show();""")

CHART = _page("Visitors chart", """
<h1>Visitors per year</h1><div id="tip" style="position:absolute"></div>
<svg width="320" height="200" id="chart"></svg>""", f"""
const values = {json.dumps(BARS)};
const svg = document.getElementById('chart');
Object.keys(values).forEach((year, i) => {{
  const r = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  r.setAttribute('x', 20 + i * 90); r.setAttribute('y', 200 - values[year] / 3);
  r.setAttribute('width', 60); r.setAttribute('height', values[year] / 3);
  r.setAttribute('aria-label', 'Bar ' + year); r.setAttribute('fill', '#4a7');
  r.addEventListener('mouseover', () => {{ document.getElementById('tip').textContent =
    year + ': ' + values[year] + ' thousand visitors'; }});
  r.addEventListener('mouseout', () => {{ document.getElementById('tip').textContent = ''; }});
  svg.appendChild(r);
}});""")

TABS_PAGE = _page("Museum", """
<h1>Museum</h1><div role="tablist"><button role="tab" aria-selected="true">Overview</button>
<button role="tab" aria-selected="false">Statistics</button></div><div role="tabpanel" id="panel"></div>""", """
const tabs = document.querySelectorAll('[role=tab]');
async function load(tab) {
  tabs.forEach((t) => t.setAttribute('aria-selected', String(t === tab)));
  const r = await fetch('/api/tab?name=' + tab.textContent).then((x) => x.json());
  document.getElementById('panel').textContent = r.text;
}
tabs.forEach((t) => t.addEventListener('click', () => load(t)));
load(tabs[0]);""")

FEED_PAGE = _page("Feed", """
<h1>Feed</h1><div id="box" style="height:300px;overflow-y:auto"><ul id="posts"></ul></div>""", """
let next = 0, busy = false;
const box = document.getElementById('box');
async function more() {
  if (busy) return; busy = true;
  const r = await fetch('/api/feed?from=' + next).then((x) => x.json());
  document.getElementById('posts').insertAdjacentHTML('beforeend',
    r.map((t) => `<li style="height:40px">${t}</li>`).join(''));
  next += r.length; busy = false;
}
box.addEventListener('scroll', () => { if (box.scrollTop + box.clientHeight > box.scrollHeight - 50) more(); });
more();""")

FORM = _page("Order", """
<h1>Order a print</h1><form id="f">
<label><input type="radio" name="size" value="S"> Small</label>
<label><input type="radio" name="size" value="M"> Medium</label>
<label><input type="radio" name="size" value="L"> Large</label>
<label><input type="checkbox" name="gift"> Gift wrap</label>
<button type="submit">Place order</button></form><p id="out"></p>""", """
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const size = (document.querySelector('[name=size]:checked') || {}).value || '';
  const gift = document.querySelector('[name=gift]').checked;
  const r = await fetch(`/api/order?size=${size}&gift=${gift}`).then((x) => x.json());
  alert('Thank you for your order');
  document.getElementById('out').textContent = 'Order code: ' + r.code;
});""")

SPA = _page("Planets", "<nav><a href='#/'>Home</a> <a href='#/planet/3'>Third planet</a> "
                       "<a href='#/planet/4'>Fourth planet</a></nav><main id='view'></main>", """
async function route() {
  const m = /#\\/planet\\/(\\d+)/.exec(location.hash);
  const view = document.getElementById('view');
  if (!m) { view.innerHTML = '<h2>Pick a planet</h2>'; return; }
  const p = await fetch('/api/planet?id=' + m[1]).then((x) => x.json());
  view.innerHTML = `<h2>${p.name}</h2><p>It has ${p.moons}.</p>`;
}
window.addEventListener('hashchange', route); route();""")

CANVAS = _page("Sales chart", "<h1>Sales</h1><canvas id='c' width='400' height='200'></canvas>", """
const c = document.getElementById('c').getContext('2d');
[[40, 120], [140, 60], [240, 160]].forEach(([x, h]) => { c.fillStyle = '#c33'; c.fillRect(x, 200 - h, 60, h); });""")

POPUP = _page("Links", "<h1>Links</h1><a href='/help' target='_blank'>Open help</a> "
                       "<a href='/late' target='_blank'>Open the late page</a> <button id='w'>Open window</button>",
              "document.getElementById('w').addEventListener('click', () => window.open('/item?id=2'));")

NOTE = _page("Note", "<h1>Note</h1><input id='n' aria-label='Note'><button id='s'>Save</button><p id='shown'></p>", """
const show = () => { document.getElementById('shown').textContent = 'Saved note: ' +
  (localStorage.getItem('note') || '(none)') + '; cookie: ' + (document.cookie || '(none)'); };
document.getElementById('s').addEventListener('click', () => {
  const v = document.getElementById('n').value; localStorage.setItem('note', v); document.cookie = 'note=' + v; show();
});
show();""")

LISTENERS = _page("Listeners", "<div id='app'><h1>Catalogue</h1>" + "".join(
    f"<p>Entry {i} <b>bold</b></p>" for i in range(30)) +
    "<span id='more'>Show more</span><div id='extra'></div></div>", """
document.getElementById('app').addEventListener('click', () => {});
document.getElementById('more').addEventListener('click', () => {
  document.getElementById('extra').textContent = 'Hidden entry: the 31st catalogue entry is Zircon.'; });""")

LONG = _page("Long", "<h1>Long page</h1>" + "".join(
    f"<p>Paragraph {i}: {'filler text ' * 12}</p>" for i in range(60)) + "<p>The closing word is marmalade.</p>")

HELP = _page("Help", "<h1>Help</h1><p>Type a word and press Search.</p>")
DETAIL = _page("Detail", "<h1 id='h'></h1>", """
document.getElementById('h').textContent = 'Detail of specimen ' + new URLSearchParams(location.search).get('n');""")


def _search(req: Request) -> Reply:
    q = (req.query.get("q") or [""])[0].lower()
    return Reply.json([{"id": i, "title": t} for i, (t, _) in ITEMS.items() if q and q in t.lower()])


def _item(req: Request) -> Reply:
    title, accession = ITEMS[int((req.query.get("id") or ["1"])[0])]
    return Reply.json({"title": title, "accession": accession})


def _list(req: Request) -> Reply:
    page = int((req.query.get("page") or ["1"])[0])
    return Reply.json({"items": LIST_ITEMS[(page - 1) * 10:page * 10], "pages": 3})


def _feed(req: Request) -> Reply:
    start = int((req.query.get("from") or ["0"])[0])
    return Reply.json(FEED[start:start + 10])


def _order(req: Request) -> Reply:
    size, gift = (req.query.get("size") or [""])[0], (req.query.get("gift") or [""])[0] == "true"
    return Reply.json({"code": f"{size}-{'GIFT' if gift else 'PLAIN'}-7"})


def _planet(req: Request) -> Reply:
    name, moons = PLANETS[(req.query.get("id") or ["3"])[0]]
    return Reply.json({"name": name, "moons": moons})


SLOW = _page("Slow", "<h1>Slow</h1><p id='late'>Loading…</p>", """
fetch('/api/slow').then((x) => x.json()).then((r) => { document.getElementById('late').textContent = r.text; });""")


def _late(req: Request) -> Reply:
    time.sleep(SLOW_SECONDS)
    return _page("Late", "<h1>Late</h1><p>This page took its time.</p>")


def _slow(req: Request) -> Reply:
    time.sleep(SLOW_SECONDS)
    return Reply.json({"text": "Arrived late."})


def routes() -> dict[str, Any]:
    """Every page and JSON endpoint of the JS sites."""
    return {
        "/search": SEARCH, "/item": ITEM, "/filters": FILTERS, "/list": LIST, "/detail": DETAIL, "/chart": CHART,
        "/tabs": TABS_PAGE, "/feed": FEED_PAGE, "/form": FORM, "/spa": SPA, "/canvas": CANVAS, "/popup": POPUP,
        "/help": HELP, "/note": NOTE, "/listeners": LISTENERS, "/long": LONG, "/slow": SLOW, "/late": _late,
        "/frames": _page("Frames", "<h1>Frames</h1><iframe src='/help'></iframe>"),
        "/framed": _page("Framed", "<h1>Framed</h1><a href='/item?id=2' target='main'>Show the item</a>"
                                   "<iframe name='main' src='/help'></iframe>"),
        "/files": _page("Files", "<h1>Files</h1><a href='/report.csv'>Download the report</a>"),
        "/report.csv": Reply(200, "year,visitors\n2020,378\n", "text/csv",
                             {"Content-Disposition": "attachment; filename=report.csv"}),
        "/api/search": _search, "/api/item": _item, "/api/articles": Reply.json(ARTICLES), "/api/list": _list,
        "/api/tab": lambda r: Reply.json({"text": TABS[(r.query.get("name") or ["Overview"])[0]]}),
        "/api/feed": _feed, "/api/order": _order, "/api/planet": _planet, "/api/slow": _slow,
    }


def expected_count(year: str, open_only: bool) -> int:
    """How many articles the filters page counts for `year` (or All) and the checkbox."""
    return sum(1 for a in ARTICLES if (year == "All" or str(a["year"]) == year) and (not open_only or a["open"]))


def js_sites() -> LocalWebServer:
    """A server of all the sites (use as a context manager)."""
    return LocalWebServer(routes())


class Canary:
    """A TCP listener on 127.0.0.1 that only counts connections: any request kind that reaches it is a leak."""

    def __init__(self) -> None:
        import socket
        import threading

        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.hits = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.hits += 1
            conn.close()

    def __enter__(self) -> Canary:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


class BrowserHarness:
    """The browser tools over settings that allow only `allowed`; `call` runs a tool as the agent does, per run."""

    def __init__(self, allowed: str, **overrides: Any) -> None:
        from config import load_settings
        from tools.browser import make_browser_tools
        from tools.browser.engines import BrowserEngines

        self.settings = load_settings(FETCH_ALLOWED_HOSTS=allowed, **overrides)
        self.browsers = BrowserEngines()
        """This harness's browser pools (an application's `browsers`)."""
        self.tools = {t.name: t for t in make_browser_tools(self.settings, self.browsers)}
        self._services: dict[Any, Any] = {}

    def workspace(self, label: str = "browser-test") -> Any:
        """A fresh run workspace (close it to end the run)."""
        from tools.core.workspace import open_workspace

        return open_workspace(self.settings, label)

    def services(self, work: Any) -> Any:
        """The RunServices of the run that owns `work` (one per workspace, as a run's pipeline makes one)."""
        from tools.core.services import RunServices

        return self._services.setdefault(work, RunServices(work))

    def call(self, work: Any, name: str, **args: Any) -> Any:
        """The ToolOutcome of `name(**args)` in the run that owns `work` (executor: timeout, errors as text)."""
        from tools.core.context import ToolContext
        from tools.core.executor import run_tool

        config = ToolContext(run_services=self.services(work), confined=True).to_config()
        return run_tool(self.tools[name], args, self.settings, config)

    def close(self) -> None:
        """Close this harness's browsers."""
        self.browsers.close()

    def __enter__(self) -> BrowserHarness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ToolRun:
    """One run over a harness: `run(tool, **args)` -> the reply (asserted ok); `run.fail(...)` -> the failure text.

    `run.work` is the run's workspace; leaving the `with` block closes it (and so its browser context).
    """

    def __init__(self, harness: BrowserHarness) -> None:
        self.harness = harness
        self.work = harness.workspace()

    def __call__(self, name: str, **args: Any) -> str:
        outcome = self.harness.call(self.work, name, **args)
        assert outcome.ok, outcome.output
        return str(outcome.output)

    def fail(self, name: str, **args: Any) -> str:
        """The failure text of `name(**args)`, asserting it failed."""
        outcome = self.harness.call(self.work, name, **args)
        assert not outcome.ok, outcome.output
        return str(outcome.output)

    def __enter__(self) -> ToolRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.work.close()


def ref_of(snapshot: str, pattern: str) -> str:
    """The ref of the first snapshot line matching `pattern` (a regex after the ref), e.g. 'button "Apply"'."""
    import re

    found = re.search(r"\[(e\d+)\] " + pattern, snapshot)
    assert found, f"no element {pattern!r} in:\n{snapshot}"
    return found.group(1)
