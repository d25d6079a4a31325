"""Loopback pages with the widgets real sites use and a snapshot easily misses (the widget tools' tests).

Built like the pages of common widget libraries and their ARIA patterns (WAI-ARIA Authoring Practices:
accordion, tree view, slider; HTML drag and drop; a mail client's rows), unkind where real ones are:

- /accordion: section headers drawn as `<h3 role="tab">` that open their panel on click;
- /tree: a file tree (`role=tree`), folders collapsed until clicked, a file's size shown on click;
- /inbox: message rows that open on click, with Reply and Forward spans (listeners only) inside each row;
- /fields: a 500-character textarea ending in spaces, date, time, range and number inputs, a multi-select;
- /slider: an ARIA slider worked only by arrow keys;
- /sortable: a list reordered by HTML drag and drop;
- /highlight: text that a "Highlight" button marks once it is selected;
- /upload: a visible file field and an upload button over a hidden one; the page reads what it gets;
- /zones: a canvas of three coloured zones that says which one was clicked or hovered.
"""

from __future__ import annotations

from tests.support.web_server import LocalWebServer, Reply

NOTE = ("The quick brown fox jumps over the lazy dog near the river bank while the committee discusses the "
        "annual budget in detail. ")
LONG_TEXT = (NOTE * 5)[:497] + "   "
"""The textarea's value: 500 characters, three trailing spaces."""
SECTIONS = {"Opening hours": "Open daily 9:00-17:00.", "Admission": "Adults pay 14 euros."}
FILES = {"Documents": {"budget.xlsx": "18 KB", "minutes.docx": "44 KB"}, "Photos": {"river.jpg": "2.1 MB"}}
MAILS = [("Alice", "Quarterly report"), ("Bob", "Lunch on Friday"), ("Carol", "Server outage")]
ITEMS = ["Alpha", "Bravo", "Charlie", "Delta"]
ZONES = [("Red zone", "#d00000"), ("Green zone", "#00a000"), ("Blue zone", "#0000d0")]


def _page(title: str, body: str, script: str = "") -> Reply:
    return Reply(200, f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
                      "<style>.row{cursor:pointer;padding:4px}.act{margin-left:8px;color:#06c}"
                      "[role=treeitem]{cursor:pointer}</style></head>"
                      f"<body>{body}<script>{script}</script></body></html>")


ACCORDION = _page("Visitor information", "<h1>Visitor information</h1>" + "".join(
    f"<h3 role='tab' tabindex='0' aria-expanded='false' class='hd'>{name}</h3>"
    f"<div class='panel' style='display:none'>{text}</div>" for name, text in SECTIONS.items())
    + "<h3><button aria-expanded='false' class='hd'>Getting here</button></h3>"
    "<div class='panel' style='display:none'>Tram 4 to the museum stop.</div>", """
document.querySelectorAll('.hd').forEach((h) => h.addEventListener('click', () => {
  const open = h.getAttribute('aria-expanded') !== 'true';
  h.setAttribute('aria-expanded', String(open));
  (h.closest('h3') || h).nextElementSibling.style.display = open ? 'block' : 'none';
}));""")

TREE = _page("Files", "<h1>Shared drive</h1><ul role='tree' aria-label='Files'>" + "".join(
    f"<li role='treeitem' aria-expanded='false' class='folder'><span>{folder}</span>"
    "<ul role='group' style='display:none'>" + "".join(
        f"<li role='treeitem' data-size='{size}'>{name}</li>" for name, size in files.items())
    + "</ul></li>" for folder, files in FILES.items()) + "</ul><p id='info'></p>", """
document.querySelectorAll('[role=treeitem]').forEach((li) => li.addEventListener('click', (e) => {
  if (e.target.closest('[role=treeitem]') !== li) return;
  if (li.classList.contains('folder')) {
    const open = li.getAttribute('aria-expanded') !== 'true';
    li.setAttribute('aria-expanded', String(open));
    li.querySelector('[role=group]').style.display = open ? 'block' : 'none';
  } else {
    document.getElementById('info').textContent = li.textContent + ' size: ' + li.dataset.size;
  }
}));""")

INBOX = _page("Inbox", "<h1>Inbox</h1><div id='list'>" + "".join(
    f"<div class='row' data-i='{i}'><b>{who}</b> {subject}<span class='act' data-do='Replying to'>Reply</span>"
    f"<span class='act' data-do='Forwarding'>Forward</span></div>" for i, (who, subject) in enumerate(MAILS))
    + "<a class='row' href='#archived' id='promo'><b>Dan</b> Newsletter <button id='arch'>Archive</button></a>"
    "</div><p id='status'></p>", """
const mails = %s;
document.querySelectorAll('.row').forEach((row) => {
  row.addEventListener('click', () => {
    document.getElementById('status').textContent = 'Opened: ' + mails[row.dataset.i][1]; });
  row.querySelectorAll('.act').forEach((a) => a.addEventListener('click', (e) => {
    e.stopPropagation();
    document.getElementById('status').textContent = a.dataset.do + ' ' + mails[row.dataset.i][0];
  }));
});
document.getElementById('arch').addEventListener('click', (e) => {
  e.preventDefault(); e.stopPropagation(); document.getElementById('status').textContent = 'Archived Dan'; });
""".replace("%s", str([list(m) for m in MAILS])))

FIELDS = _page("Booking", """
<h1>Booking</h1>
<label for="notes">Notes</label><textarea id="notes"></textarea>
<label for="day">Day</label><input type="date" id="day">
<label for="at">Time</label><input type="time" id="at">
<label for="party">Party size</label><input type="range" id="party" min="0" max="50" step="5" value="20">
<label for="rooms">Rooms</label><input type="number" id="rooms" min="1" max="9">
<label for="extras">Extras</label><select id="extras" multiple size="4"><option>Breakfast</option>
<option>Parking</option><option value="late">Late checkout</option><option>Spa</option></select>
<button id="check">Check</button><p id="got"></p>""", """
document.getElementById('notes').value = NOTES_VALUE;
document.getElementById('check').addEventListener('click', () => {
  const v = (id) => document.getElementById(id).value;
  const extras = Array.from(document.getElementById('extras').selectedOptions).map((o) => o.value);
  document.getElementById('got').textContent = 'Got: day=' + v('day') + ' time=' + v('at') + ' party=' +
    v('party') + ' rooms=' + v('rooms') + ' extras=' + extras.join('+') + ' notes=' + v('notes').length;
});""".replace("NOTES_VALUE", repr(LONG_TEXT)))

SLIDER = _page("Rate", """
<h1>Rate the exhibition</h1><span id="lbl">Rating</span>
<div role="slider" tabindex="0" aria-labelledby="lbl" aria-valuemin="0" aria-valuemax="10" aria-valuenow="3"
 id="s" style="width:200px;height:20px;background:#ccc"></div><p id="out">Rating: 3</p>""", """
const s = document.getElementById('s');
s.addEventListener('keydown', (e) => {
  let n = +s.getAttribute('aria-valuenow');
  if (e.key === 'ArrowRight' || e.key === 'ArrowUp') n = Math.min(10, n + 1);
  else if (e.key === 'ArrowLeft' || e.key === 'ArrowDown') n = Math.max(0, n - 1);
  else return;
  e.preventDefault();
  s.setAttribute('aria-valuenow', String(n));
  document.getElementById('out').textContent = 'Rating: ' + n;
});""")

SORTABLE = _page("Priorities", "<h1>Priorities</h1><ul id='list'>" + "".join(
    f"<li draggable='true' role='option' aria-label='{item}'>{item}</li>" for item in ITEMS)
    + "</ul><p id='order'></p>", """
let dragged = null;
const list = document.getElementById('list');
list.addEventListener('dragstart', (e) => { dragged = e.target; e.dataTransfer.setData('text/plain', 'x'); });
list.addEventListener('dragover', (e) => e.preventDefault());
list.addEventListener('drop', (e) => {
  e.preventDefault();
  const target = e.target.closest('li');
  if (!dragged || !target || target === dragged) return;
  list.insertBefore(dragged, target);
  document.getElementById('order').textContent = 'Order: ' +
    Array.from(list.children).map((li) => li.textContent).join(', ');
});""")

HIGHLIGHT = _page("Reading", """
<h1>Reading notes</h1><p id="text">The museum was founded in 1887 by a group of naturalists.
   Its first   director was Amelia Hart.</p>
<button id="mark" style="display:none">Highlight selection</button><p id="marks"></p>""", """
let range = null;
document.addEventListener('mouseup', () => {
  const sel = getSelection();
  if (sel.rangeCount && !sel.isCollapsed) { range = sel.getRangeAt(0).cloneRange();
    document.getElementById('mark').style.display = 'inline'; }
});
document.getElementById('mark').addEventListener('click', () => {
  if (!range) return;
  const text = range.toString();
  range.surroundContents(document.createElement('mark'));
  document.getElementById('marks').textContent = 'Highlighted: ' + text;
});""")

UPLOAD = _page("Reverse image search", """
<h1>Search by image</h1>
<form><label for="file">Image file</label><input type="file" id="file" accept="image/*,text/plain"></form>
<label for="hid" class="btn" style="cursor:pointer;border:1px solid">Upload image</label>
<input type="file" id="hid" style="display:none"><p id="got"></p>""", """
const show = (input) => input.addEventListener('change', async () => {
  const f = input.files[0];
  const head = (await f.text()).split('\\n')[0];
  document.getElementById('got').textContent = 'Received ' + f.name + ' (' + f.size + ' bytes): ' + head;
});
show(document.getElementById('file')); show(document.getElementById('hid'));""")

ZONES_PAGE = _page("Zones", """
<h1>Zones</h1><canvas id="c" width="600" height="200"></canvas><p id="said"></p>""", """
const zones = %s, c = document.getElementById('c'), g = c.getContext('2d');
zones.forEach(([name, colour], i) => { g.fillStyle = colour; g.fillRect(i * 200, 0, 200, 200); });
const zone = (e) => zones[Math.min(2, Math.floor(e.offsetX / 200))][0];
c.addEventListener('click', (e) => { document.getElementById('said').textContent = 'You clicked: ' + zone(e); });
c.addEventListener('mousemove', (e) => { c.title = zone(e);
  document.getElementById('said').textContent = 'Pointer over: ' + zone(e); });"""
    .replace("%s", str([list(z) for z in ZONES])))


def widget_sites() -> LocalWebServer:
    """A server of all the widget pages (use as a context manager)."""
    return LocalWebServer({"/accordion": ACCORDION, "/tree": TREE, "/inbox": INBOX, "/fields": FIELDS,
                           "/slider": SLIDER, "/sortable": SORTABLE, "/highlight": HIGHLIGHT, "/upload": UPLOAD,
                           "/zones": ZONES_PAGE})
