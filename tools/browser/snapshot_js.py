"""The JavaScript the browser runs in every page: listener marks (an init script) and the snapshot walker.

`INIT_SCRIPT` runs before the page's own scripts: it notes which elements get click/hover listeners
through `addEventListener` (nothing else can see them), keeps the time of the last DOM change (for
"settled"), and turns `window.open` and links or forms with a `target` into navigations of the same tab (the run
has one tab).

`WALKER` walks the whole document (not just the viewport) in reading order and returns lines: text with
headings as markdown, and one `[eN] role "name" state → url` line per element the model can operate.
Refs are a `data-gaia-ref` attribute numbered from the run's counter (`start`), so a number is never
given to two elements in one run; an element keeps its ref while it exists.

`SCROLL_JS` scrolls the page, or its largest scrolling box when the page itself does not scroll.
"""

INIT_SCRIPT = r"""
(() => {
  if (window.__gaiaInit) return;
  window.__gaiaInit = true;
  const marks = new WeakSet();
  const kinds = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'mouseover',
                         'mouseenter', 'pointerover', 'pointerenter', 'dblclick']);
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    try { if (kinds.has(String(type)) && this instanceof Element) marks.add(this); } catch (e) {}
    return add.call(this, type, listener, options);
  };
  Object.defineProperty(window, '__gaiaHasListener', {value: (el) => marks.has(el)});
  window.__gaiaLastChange = Date.now();
  const watch = () => new MutationObserver(() => { window.__gaiaLastChange = Date.now(); })
      .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  try { watch(); } catch (e) {}
  window.open = function (url) {
    if (url) location.href = new URL(String(url), location.href).href;
    return window;
  };
  // A link or form aimed at a new window loads in this one: a popup is only seen once it has committed,
  // which on a slow site or a busy machine is after the action's wait has ended. A target naming a frame
  // (a frameset's "main") or _top/_parent is left alone.
  const isFrame = (name) => {
    const search = (w) => Array.from({length: w.frames.length}, (_, i) => w.frames[i])
      .some((f) => f.name === name || search(f));
    try { return search(window.top); } catch (e) { return true; }  // a cross-origin frame: do not guess
  };
  const here = (e) => {
    const el = e.target instanceof Element ? e.target.closest('a[target], area[target], form[target]') : null;
    const t = el ? el.target : '';
    if (t && (t.toLowerCase() === '_blank' || (t[0] !== '_' && !isFrame(t)))) el.target = '_self';
  };
  add.call(document, 'click', here, true);
  add.call(document, 'submit', here, true);
})();
"""

WALKER = r"""
({start, maxOptions, maxNodes}) => {
  let next = start, visited = 0, cut = false;
  const seen = new Set();
  const lines = [];
  let buf = '';
  const flush = () => { const t = buf.replace(/\s+/g, ' ').trim(); if (t) lines.push(t); buf = ''; };
  const BLOCK = new Set(['ADDRESS','ARTICLE','ASIDE','BLOCKQUOTE','BR','DD','DETAILS','DIALOG','DIV','DL','DT',
    'FIELDSET','FIGCAPTION','FIGURE','FOOTER','FORM','HEADER','HR','LI','MAIN','NAV','OL','P','PRE','SECTION',
    'SUMMARY','TABLE','TBODY','THEAD','TFOOT','TR','UL','CAPTION','LEGEND','svg']);
  const SKIP = new Set(['SCRIPT','STYLE','NOSCRIPT','TEMPLATE','HEAD','META','LINK','title']);
  const ROLE_TAGS = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', SUMMARY: 'button',
    OPTION: 'option'};
  const OPERABLE = new Set(['link','button','textbox','searchbox','combobox','listbox','checkbox','radio','tab',
    'menuitem','menuitemcheckbox','menuitemradio','option','switch','slider','spinbutton','treeitem']);
  const clean = (s, n = 120) => { s = String(s || '').replace(/\s+/g, ' ').trim();
    return s.length > n ? s.slice(0, n - 1) + '…' : s; };
  const q = (s) => '"' + clean(s).replace(/"/g, "'") + '"';
  const exact = (v) => JSON.stringify(String(v == null ? '' : v));  // a field's whole value, whitespace kept
  const FORMATS = {date: 'YYYY-MM-DD', time: 'HH:MM', 'datetime-local': 'YYYY-MM-DDTHH:MM', month: 'YYYY-MM',
    week: 'YYYY-Www', color: '#rrggbb'};
  const TYPED = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'number', 'range', 'email',
    'url', 'tel', 'file', 'password']);
  const hidden = (el) => {
    if (el.getAttribute && el.getAttribute('aria-hidden') === 'true') return true;
    const st = getComputedStyle(el);
    if (st.display === 'none' || st.visibility === 'hidden' || st.visibility === 'collapse') return true;
    if (el.tagName === 'INPUT' && el.type === 'hidden') return true;
    return false;
  };
  const roleOf = (el) => {
    const aria = (el.getAttribute('role') || '').split(' ')[0];
    if (aria) return aria;
    const tag = el.tagName;
    if (tag === 'A') return el.hasAttribute('href') ? 'link' : '';
    if (tag === 'INPUT') {
      const t = (el.type || 'text').toLowerCase();
      return {checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button',
        image: 'button', range: 'slider', number: 'spinbutton', search: 'searchbox', file: 'button'}[t] || 'textbox';
    }
    if (tag === 'SELECT' && (el.multiple || el.size > 1)) return 'listbox';
    return ROLE_TAGS[tag] || '';
  };
  const labelled = (el) => {
    const ids = (el.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean);
    const text = ids.map((id) => document.getElementById(id)).filter(Boolean).map((e) => e.textContent).join(' ');
    if (text.trim()) return text;
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
    if (el.labels && el.labels.length) return Array.from(el.labels).map((l) => l.textContent).join(' ');
    return '';
  };
  const svgTitle = (el) => {
    for (const c of el.children || []) if (c.tagName && c.tagName.toLowerCase() === 'title') return c.textContent;
    return '';
  };
  const nameOf = (el, role) => {
    const l = labelled(el);
    if (l.trim()) return l;
    if (['textbox','searchbox','combobox','listbox','slider','spinbutton'].includes(role))
      return el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') || '';
    if (el.tagName === 'INPUT' && ['button','submit','reset'].includes(el.type)) return el.value || el.type;
    if (el.tagName === 'INPUT' && el.type === 'image') return el.alt || el.title || 'image';
    if (el.tagName === 'CANVAS')
      return 'canvas ' + el.width + '×' + el.height + ': use browser_click_at or browser_hover_at';
    const own = svgTitle(el) || el.getAttribute('title');
    const text = (el.innerText !== undefined ? el.innerText : el.textContent) || '';
    if (text.trim()) return text;
    if (own) return own;
    const img = el.querySelector && el.querySelector('img[alt], svg title');
    return img ? (img.alt || img.textContent) : '';
  };
  const tooBig = (el) => el === document.body || el === document.documentElement ||
    el.querySelectorAll('*').length > 40 || (el.textContent || '').length > 400;
  const pointer = (el) => { const c = getComputedStyle(el).cursor;
    return c === 'pointer' && (!el.parentElement || getComputedStyle(el.parentElement).cursor !== 'pointer'); };
  const hiddenControl = (el) => el.tagName === 'LABEL' && el.control && !el.contains(el.control) &&
    hidden(el.control) && ['file', 'checkbox', 'radio'].includes(el.control.type);
  const operable = (el, nested) => {
    if (hiddenControl(el)) return roleOf(el.control);  // a styled label stands for its hidden input
    const role = roleOf(el);
    if (OPERABLE.has(role)) return role;
    const listens = (window.__gaiaHasListener && window.__gaiaHasListener(el)) || el.onclick || el.onmouseover ||
      el.onmouseenter || el.hasAttribute('onclick') || el.hasAttribute('onmouseover');
    if (listens && !tooBig(el)) return role || (el instanceof SVGElement ? 'graphic' : 'clickable');
    if (nested) return '';  // inside another operable only a role or a listener makes a line of its own
    if (el instanceof SVGElement && el.tagName !== 'svg' && svgTitle(el)) return role || 'graphic';
    if (!(el instanceof SVGElement) && el.hasAttribute('title') && !tooBig(el) && !['ABBR'].includes(el.tagName))
      return role || 'element';
    if (pointer(el) && !tooBig(el) && (el.innerText || '').trim()) return role || 'clickable';
    return '';
  };
  const inputState = (el, s) => {
    const t = (el.type || '').toLowerCase();
    if (!TYPED.has(t)) return;
    s.push('type=' + t);
    if (FORMATS[t]) s.push('format=' + FORMATS[t]);
    if (t === 'range') ['min', 'max', 'step'].forEach((a, i) =>
      s.push(a + '=' + (el.getAttribute(a) || [0, 100, 1][i])));
    else if (t === 'number' || FORMATS[t]) ['min', 'max', 'step'].forEach((a) => {
      if (el.getAttribute(a)) s.push(a + '=' + el.getAttribute(a)); });
    if (t === 'file') {
      if (el.accept) s.push('accept=' + q(el.accept));
      s.push('files=' + q(Array.from(el.files || []).map((f) => f.name).join(', ') || 'none'));
    }
  };
  const stateOf = (el, role) => {
    const s = [];
    if (el.tagName === 'INPUT') inputState(el, s);
    if (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'slider') {
      if (el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA' && !el.isContentEditable) {  // an ARIA widget
        ['valuemin', 'valuemax'].forEach((a) => {
          if (el.hasAttribute('aria-' + a)) s.push(a.slice(5) + '=' + el.getAttribute('aria-' + a)); });
        s.push('value=' + exact(el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow') || ''));
      } else {
        const v = el.isContentEditable ? el.innerText : (el.value !== undefined ? el.value : '');
        s.push('value=' + (el.type === 'password' ? '"•••"' : exact(v)));
        if (el.validity && !el.validity.valid && v !== '') s.push('invalid=' + q(el.validationMessage));
      }
    }
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox') {
      const c = el.checked !== undefined && el.tagName === 'INPUT'
        ? el.checked : el.getAttribute('aria-checked') === 'true';
      s.push('checked=' + c);
    }
    if (el.tagName === 'SELECT') {
      const opts = Array.from(el.options);
      const sel = opts.filter((o) => o.selected).map((o) => clean(o.label || o.text, 60));
      s.push('selected=' + q(sel.join(', ')));
      const labels = opts.slice(0, maxOptions).map((o) => clean(o.label || o.text, 40));
      s.push('options=' + q(labels.join(' | ')
        + (opts.length > maxOptions ? ` | …${opts.length - maxOptions} more` : '')));
    }
    if (role === 'treeitem') s.push('level=' + levelOf(el));
    if (role === 'tab' || role === 'option' || role === 'treeitem') {
      s.push('selected=' + (el.getAttribute('aria-selected') === 'true' || !!el.selected));
    }
    if (el.hasAttribute('aria-expanded')) s.push('expanded=' + el.getAttribute('aria-expanded'));
    else if (el.tagName === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS')
      s.push('expanded=' + el.parentElement.open);
    if (el.hasAttribute('aria-pressed')) s.push('pressed=' + el.getAttribute('aria-pressed'));
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') s.push('disabled');
    return s.join(' ');
  };
  const levelOf = (el) => {
    if (el.getAttribute('aria-level')) return +el.getAttribute('aria-level');
    let n = 1;
    for (let p = el.parentElement; p; p = p.parentElement) { if (p.getAttribute('role') === 'treeitem') n++; }
    return n;
  };
  const ownText = (el) => {  // a tree item's or menu item's own label, without the items nested in it
    let t = '';
    const add = (n) => {
      if (n.nodeType === Node.TEXT_NODE) { t += n.textContent; return; }
      if (n.nodeType !== Node.ELEMENT_NODE || hidden(n)) return;
      const r = (n.getAttribute('role') || '').split(' ')[0];
      if (['group', 'tree', 'menu', 'treeitem', 'menuitem'].includes(r) || ['UL', 'OL'].includes(n.tagName)) return;
      n.childNodes.forEach(add);
      if (BLOCK.has(n.tagName)) t += ' ';
    };
    el.childNodes.forEach(add);
    return t;
  };
  const withoutNested = (el) => {  // a row's own words, without the actions operable inside it
    let t = '';
    const add = (n) => {
      if (n.nodeType === Node.TEXT_NODE) { t += n.textContent; return; }
      if (n.nodeType !== Node.ELEMENT_NODE || hidden(n) || operable(n, true)) return;
      n.childNodes.forEach(add);
      t += BLOCK.has(n.tagName) ? ' ' : '';
    };
    el.childNodes.forEach(add);
    return t;
  };
  const refOf = (el) => {
    let r = el.getAttribute('data-gaia-ref');
    if (!r || seen.has(r)) { r = 'e' + (next++); el.setAttribute('data-gaia-ref', r); }
    seen.add(r);
    return r;
  };
  const NESTING = new Set(['treeitem', 'menuitem', 'tab', 'menuitemcheckbox', 'menuitemradio']);
  const walk = (node, depth, quiet, nested) => {
    if (node.nodeType === Node.TEXT_NODE) { if (!quiet) buf += node.textContent; return; }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    if (++visited > maxNodes) { cut = true; return; }
    const el = node;
    if (SKIP.has(el.tagName) || hidden(el)) return;
    if (el.tagName === 'LABEL' && el.control && !hiddenControl(el)) {  // its text names the control's line
      if (!el.contains(el.control)) return;
      quiet = true;
    }
    const h = /^H([1-6])$/.exec(el.tagName);
    if (h && !OPERABLE.has(roleOf(el))) {  // a heading; a tab or button drawn as a heading is operable below
      flush();
      if (!quiet) lines.push('#'.repeat(+h[1]) + ' ' + clean(el.innerText || el.textContent, 300));
      for (const c of el.childNodes) walk(c, depth + 1, true, true);  // its link or toggle button gets a ref
      return;
    }
    const role = operable(el, nested);
    if (role) {
      const bullet = buf.replace(/\s+/g, ' ').trim() === '-';
      if (bullet) buf = '';
      flush();
      const control = hiddenControl(el) ? el.control : el;
      let name = NESTING.has(role) && ownText(el).trim() ? ownText(el) : nameOf(el, role);
      if (role === 'clickable' && el.firstElementChild) {
        const own = withoutNested(el);
        if (own.trim()) name = own;
      }
      let line = (bullet ? '- ' : '') + '[' + refOf(el) + '] ' + role + ' ' + q(name);
      const state = stateOf(control, role);
      if (state) line += ' ' + state;
      if (el.tagName === 'A' && el.href) line += ' → ' + el.href;
      lines.push('  '.repeat(Math.min(depth, 4)) + line);
      if (['textbox','searchbox','combobox','listbox','option','slider','spinbutton'].includes(role) ||
          el.tagName === 'SELECT' || el.tagName === 'INPUT') return;
      const inner = (el.innerText || el.textContent || '').trim();
      // A short one's text is its name: only what can be operated inside it (Reply in a row) gets lines.
      const short = inner.length <= 120 || NESTING.has(role) || el.tagName === 'A' || el.tagName === 'BUTTON';
      for (const c of el.childNodes) walk(c, depth + 1, quiet || short, nested || short);
      if (!short) flush();
      return;
    }
    const block = BLOCK.has(el.tagName);
    if (block) flush();
    if (!quiet) {
      if (el.tagName === 'LI') buf += '- ';
      if (el.tagName === 'IMG' && el.alt) buf += ' [image: ' + clean(el.alt) + '] ';
      if (el.tagName === 'TD' || el.tagName === 'TH') buf += ' | ';
      if (el.tagName === 'CANVAS') buf += ' [canvas ' + el.width + '×' + el.height + ': use browser_click_at, ' +
        'browser_hover_at or browser_screenshot] ';
    }
    const kids = el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes;
    for (const c of kids) walk(c, depth + (block ? 1 : 0), quiet, nested);
    if (block) flush();
  };
  walk(document.body || document.documentElement, 0, false, false);
  flush();
  if (cut) lines.push(`…[the page has more than ${maxNodes} elements; the snapshot stops there]`);
  return {lines, next};
}
"""

SCROLL_JS = r"""
(direction) => {
  const big = (el) => el.scrollHeight > el.clientHeight + 10 &&
    ['auto', 'scroll', 'overlay'].includes(getComputedStyle(el).overflowY);
  const root = document.scrollingElement || document.documentElement;
  let target = root;
  if (root.scrollHeight <= innerHeight + 10) {
    let best = 0;
    for (const el of document.querySelectorAll('*')) {
      if (!big(el)) continue;
      const r = el.getBoundingClientRect();
      const area = r.width * r.height;
      if (area > best) { best = area; target = el; }
    }
  }
  const step = (target === root ? innerHeight : target.clientHeight) * 0.9;
  const to = {down: target.scrollTop + step, up: target.scrollTop - step, bottom: target.scrollHeight,
              top: 0}[direction];
  target.scrollTo({top: to, behavior: 'instant'});
  if (target === root) window.scrollTo({top: to, behavior: 'instant'});
  target.dispatchEvent(new Event('scroll'));
  return {top: Math.round(target.scrollTop), height: target.scrollHeight, inner: target !== root};
}
"""
