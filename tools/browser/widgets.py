"""Widget operations on a run's tab: checked typing, multi-select, keys, drag, points, text selection, upload.

Every function here runs on the browser thread with the run's `BrowserSession` (through `BrowserRun.run`)
and answers with the settled page's `Capture`, notes first (what the field kept, what a point hit).
They use only the session's public face (`page`, `locate`, `act`, `capture`), so the engine can change
beneath them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from tools.browser.session import BrowserSession, Capture
from tools.core.errors import ToolFailure

FORMATS = {"date": "YYYY-MM-DD, e.g. 2024-03-05", "time": "HH:MM in 24 hours (or HH:MM:SS), e.g. 14:30",
           "datetime-local": "YYYY-MM-DDTHH:MM, e.g. 2024-03-05T14:30", "month": "YYYY-MM, e.g. 2024-03",
           "week": "YYYY-Www, e.g. 2024-W09", "color": "#rrggbb in lower case, e.g. #1a2b3c",
           "number": "a plain number such as 42 or -3.5 (no units, no thousands separators)"}
"""The value format each input type accepts (what the browser's own value sanitising lets through)."""

PROBE_JS = r"""
(e, text) => {
  const t = (e.type || '').toLowerCase();
  const info = {tag: e.tagName, type: t, min: e.min || '', max: e.max || '', step: e.step || '', kept: text};
  if (e.tagName !== 'INPUT') return info;
  const probe = document.createElement('input');  // the browser's own sanitising, on a detached twin
  probe.type = t;
  for (const a of ['min', 'max', 'step']) if (e.getAttribute(a)) probe.setAttribute(a, e.getAttribute(a));
  probe.value = text;
  info.kept = probe.value;
  return info;
}
"""

AFTER_JS = r"""
(e) => ({value: e.isContentEditable ? e.innerText : String(e.value === undefined ? '' : e.value),
         valid: e.validity ? e.validity.valid : true, message: e.validationMessage || '',
         maxlength: e.maxLength > 0 ? e.maxLength : 0})
"""

OPTIONS_JS = r"""
(e, wanted) => {
  const opts = Array.from(e.options || []);
  const fold = (s) => String(s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const find = (w) => {
    for (const how of [(o) => o.label === w || o.text === w, (o) => o.value === w,
                       (o) => fold(o.label || o.text) === fold(w)]) {
      const i = opts.findIndex(how);
      if (i >= 0) return i;
    }
    return -1;
  };
  return {multiple: !!e.multiple, tag: e.tagName, indexes: wanted.map(find),
          labels: opts.map((o) => o.label || o.text)};
}
"""

SELECT_TEXT_JS = r"""
(el, text) => {
  const fold = (s) => s.replace(/\s+/g, ' ');
  if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
    const v = el.value, i = text ? v.indexOf(text) : 0;
    if (i < 0) return {found: false};
    el.focus();
    el.setSelectionRange(i, text ? i + text.length : v.length);
    el.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    return {found: true, selected: v.slice(i, text ? i + text.length : v.length)};
  }
  const nodes = [], walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let raw = '';
  while (walker.nextNode()) { nodes.push([walker.currentNode, raw.length]); raw += walker.currentNode.data; }
  let folded = '', map = [];  // folded position -> raw position, so whitespace in the page need not match
  for (let i = 0; i < raw.length; i++) {
    const ws = /\s/.test(raw[i]);
    if (ws && folded.endsWith(' ')) continue;
    folded += ws ? ' ' : raw[i]; map.push(i);
  }
  const want = fold(text || '').trim();
  let at = want ? folded.indexOf(want) : folded.search(/\S/);
  if (want && at < 0) at = folded.toLowerCase().indexOf(want.toLowerCase());
  if (at < 0) return {found: false};
  const last = want ? at + want.length - 1 : folded.trimEnd().length - 1;
  const spot = (r) => { let k = nodes.length - 1; while (k > 0 && nodes[k][1] > r) k--;
    return [nodes[k][0], r - nodes[k][1]]; };
  const [sn, so] = spot(map[at]), [en, eo] = spot(map[last]);
  const range = document.createRange();
  range.setStart(sn, so); range.setEnd(en, eo + 1);
  const sel = getSelection(); sel.removeAllRanges(); sel.addRange(range);
  const box = range.getBoundingClientRect();
  const target = range.commonAncestorContainer.nodeType === 1 ? range.commonAncestorContainer
    : range.commonAncestorContainer.parentElement;
  const opts = {bubbles: true, clientX: box.right, clientY: box.bottom, view: window};
  target.dispatchEvent(new PointerEvent('pointerup', opts));
  target.dispatchEvent(new MouseEvent('mouseup', opts));
  return {found: true, selected: sel.toString()};
}
"""

POINT_JS = r"""
([x, y]) => {
  let vx = x - scrollX, vy = y - scrollY;
  if (vx < 0 || vy < 0 || vx >= innerWidth || vy >= innerHeight) {
    scrollTo({left: x - innerWidth / 2, top: y - innerHeight / 2, behavior: 'instant'});
    vx = x - scrollX; vy = y - scrollY;
  }
  const el = document.elementFromPoint(vx, vy);
  let what = 'nothing';
  if (el) {
    const ref = el.closest('[data-gaia-ref]');
    const text = (el.innerText || el.getAttribute('aria-label') || el.getAttribute('title') || '')
      .replace(/\s+/g, ' ').trim().slice(0, 80);
    what = '<' + el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '>' + (text ? ' "' + text + '"' : '')
      + (ref ? ' (inside ' + ref.getAttribute('data-gaia-ref') + ')' : '');
  }
  return {vx, vy, what};
}
"""


@dataclass(frozen=True)
class ShotFrame:
    """Where the last screenshot's pixel (0, 0) lies in the page, and its size, in CSS pixels."""

    left: float
    top: float
    width: int
    height: int
    full_page: bool


def _settled(session: BrowserSession, start: float, before: str, notes: list[str]) -> Capture:
    """The page once settled, `notes` first; a navigation the action caused counts against BROWSER_MAX_PAGES."""
    capture = session.capture(start)
    capture.notes[:0] = notes
    if urldefrag(capture.url)[0] != before:
        session.pages_loaded += 1
        if session.pages_loaded > session.max_pages:
            raise ToolFailure(f"this run opened {session.max_pages} pages in the browser (BROWSER_MAX_PAGES); answer "
                              "with what you found or use fetch_webpage.", "size_limit")
    return capture


def _here(session: BrowserSession) -> tuple[float, str]:
    return time.monotonic(), urldefrag(session.page.url)[0]


def refused(ref: str, text: str, info: dict[str, Any]) -> str:
    """Why a typed field refuses `text`: the format its input type wants (and its bounds)."""
    kind = info["type"]
    bounds = " ".join(f"{k}={info[k]}" for k in ("min", "max", "step") if info[k])
    if kind == "range":
        want = f"a number from {info['min'] or 0} to {info['max'] or 100} in steps of {info['step'] or 1}"
        hint = "; or focus it with browser_press and use ArrowRight/ArrowLeft"
    else:
        want, hint = FORMATS.get(kind, "another value"), ""
    kept = f" (the field would hold {info['kept']!r})" if info["kept"] else " (the field would be left empty)"
    return (f"{ref} is a {kind} field and refused {text!r}{kept}: it wants {want}"
            f"{' (' + bounds + ')' if bounds else ''}. Type the value in that format{hint}.")


def type_checked(session: BrowserSession, ref: str, text: str, submit: bool) -> Capture:
    """Type `text` into the field `ref`; a value its type refuses is a ToolFailure, what it kept a note."""
    element = session.locate(ref)
    info = element.evaluate(PROBE_JS, text)
    if info["tag"] == "INPUT" and info["kept"] != text and (info["type"] in FORMATS or info["type"] == "range"):
        raise ToolFailure(refused(ref, text, info), "bad_arguments")
    capture = session.act(ref, "type", text, submit)
    try:
        after = session.locate(ref).evaluate(AFTER_JS)
    except ToolFailure:  # submitting replaced the page: nothing left to check
        return capture
    notes = []
    if after["value"] != text and not submit:
        why = f" (maxlength={after['maxlength']})" if after["maxlength"] and len(text) > after["maxlength"] else ""
        notes.append(f"{ref} kept {after['value']!r}, not what was typed{why}.")
    if not after["valid"] and after["message"]:
        notes.append(f"{ref} reports its value invalid: {after['message']}")
    capture.notes[:0] = notes
    return capture


def select_options(session: BrowserSession, ref: str, options: list[str]) -> Capture:
    """Pick several options of a multi-select `ref` (all others unselected), by label, else by value."""
    element = session.locate(ref)
    start, before = _here(session)
    info = element.evaluate(OPTIONS_JS, options)
    if info["tag"] != "SELECT":
        for option in options:  # a custom list box: click each option in turn
            session.act(ref, "select", option)
        return session.capture(start)
    missing = [o for o, i in zip(options, info["indexes"], strict=True) if i < 0]
    if missing:
        raise ToolFailure(f"{ref} has no option {', '.join(map(repr, missing))}; its options are: "
                          f"{' | '.join(info['labels'][:30])}.", "bad_arguments")
    if not info["multiple"] and len(options) > 1:
        raise ToolFailure(f"{ref} takes one option only; pass one label, e.g. {options[0]!r}.", "bad_arguments")
    element.select_option(index=info["indexes"])
    return _settled(session, start, before, [])


def press(session: BrowserSession, key: str, ref: str) -> Capture:
    """Press `key` (a Playwright key name or chord) on the element `ref`, or wherever the focus is."""
    start, before = _here(session)
    try:
        if ref.strip():
            session.locate(ref).press(key)
        else:
            session.page.keyboard.press(key)
    except ToolFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - an unknown key name is the model's to fix
        first = str(exc).splitlines()[0]
        if "Unknown key" in first or "key" in first.lower():
            raise ToolFailure(f"{key!r} is not a key name ({first}); use names such as Enter, Tab, Escape, "
                              "ArrowRight, PageDown, Home, Control+a, Shift+Tab.", "bad_arguments") from None
        raise ToolFailure(f"the key press failed: {first}", "failed") from None
    return _settled(session, start, before, [f"Pressed {key}{' on ' + ref if ref.strip() else ''}."])


def drag(session: BrowserSession, from_ref: str, to_ref: str) -> Capture:
    """Drag the element `from_ref` onto `to_ref` (HTML drag-and-drop and pointer-driven lists alike)."""
    source, target = session.locate(from_ref), session.locate(to_ref)
    start, before = _here(session)
    try:
        source.drag_to(target, steps=8, timeout=5000)
    except Exception as exc:  # noqa: BLE001 - covered or detached: said plainly
        raise ToolFailure(f"could not drag {from_ref} onto {to_ref}: {str(exc).splitlines()[0]}", "failed") from None
    return _settled(session, start, before, [f"Dragged {from_ref} onto {to_ref}."])


def at_point(session: BrowserSession, frame: ShotFrame | None, x: int, y: int, click: bool) -> Capture:
    """Click or hover at (x, y), CSS pixels of the last screenshot (the viewport now when there was none)."""
    if frame is None:
        size = session.page.viewport_size or {"width": 1280, "height": 800}
        left, top = session.page.evaluate("() => [scrollX, scrollY]")
        frame = ShotFrame(left, top, size["width"], size["height"], False)
    if not (0 <= x < frame.width and 0 <= y < frame.height):
        raise ToolFailure(f"({x}, {y}) is outside the last screenshot ({frame.width}×{frame.height} pixels); pick a "
                          "point inside it.", "bad_arguments")
    start, before = _here(session)
    hit = session.page.evaluate(POINT_JS, [frame.left + x, frame.top + y])
    if click:
        session.page.mouse.click(hit["vx"], hit["vy"])
    else:
        session.page.mouse.move(hit["vx"], hit["vy"], steps=4)
    verb = "Clicked" if click else "The pointer is"
    return _settled(session, start, before, [f"{verb} at ({x}, {y}) of the screenshot: on {hit['what']}."])


def select_text(session: BrowserSession, ref: str, text: str) -> Capture:
    """Select `text` inside the element `ref` (its whole text when empty), as a user's mouse would."""
    element = session.locate(ref) if ref.strip() else session.page.locator("body")
    start, before = _here(session)
    got = element.evaluate(SELECT_TEXT_JS, text)
    if not got["found"]:
        raise ToolFailure(f"{ref or 'the page'} does not contain {text!r}; copy the words exactly from the snapshot.",
                          "not_found")
    chosen = got["selected"]
    shown = chosen if len(chosen) <= 200 else chosen[:199] + "…"
    return _settled(session, start, before, [f"Selected {len(chosen)} characters in {ref or 'the page'}: {shown!r}."])


FILE_INPUT_JS = r"""
(e) => (e.tagName === 'INPUT' && e.type === 'file') ||
       (e.tagName === 'LABEL' && !!e.control && e.control.type === 'file')
"""


def upload(session: BrowserSession, ref: str, path: Path) -> Capture:
    """Give the file `path` (already checked by the caller) to the file field `ref` or the chooser it opens."""
    element = session.locate(ref)
    start, before = _here(session)
    if element.evaluate(FILE_INPUT_JS):
        element.set_input_files(str(path))
    else:
        try:
            with session.page.expect_file_chooser(timeout=5000) as chooser:
                element.click(timeout=5000)
            chooser.value.set_files(str(path))
        except Exception:  # noqa: BLE001 - it opened no file chooser
            raise ToolFailure(f"{ref} is not a file field and clicking it opened no file chooser; pass the ref of the "
                              "file field or its upload button.", "bad_arguments") from None
    return _settled(session, start, before, [f"Gave {path.name} ({path.stat().st_size} bytes) to {ref}."])
