"""A loopback bot-detection page running the checks sites behind Cloudflare, PerimeterX or Akamai start with.

Each check prints one line `check NAME: pass|FAIL (what it saw)` into the page, so the browser tools'
own snapshot carries the verdicts. The checks are the public ones those vendors' scripts and the
well-known test pages (areyouheadless, sannysoft's bot test, CreepJS' headless panel) run first:
`navigator.webdriver`, `HeadlessChrome` in the user agent (script, UA client hints, and the
`User-Agent`/`Sec-CH-UA` request headers the server saw), no plugins, no languages, no `window.chrome`,
the notifications permission contradiction of old headless, a missing `Accept-Language`, a UTC
timezone, a window without browser chrome (outer == inner size), a desktop UA with no hover pointer
(Playwright's headless blink-settings), and the 800x600 default screen.
"""

from __future__ import annotations

import html
import re

from tests.support.web_server import LocalWebServer, Reply, Request

CHECKS_JS = r"""
(async () => {
  const out = [];
  const check = (name, bad, seen) => out.push(`check ${name}: ${bad ? 'FAIL' : 'pass'} (${seen})`);
  check('webdriver', navigator.webdriver === true, String(navigator.webdriver));
  check('user_agent', /Headless/i.test(navigator.userAgent), navigator.userAgent);
  const brands = (navigator.userAgentData && navigator.userAgentData.brands || []).map((b) => b.brand).join('|');
  check('ua_client_hints', /Headless/i.test(brands), brands || 'none');
  check('plugins', navigator.plugins.length === 0, navigator.plugins.length);
  check('languages', !navigator.languages || navigator.languages.length === 0, String(navigator.languages));
  check('window_chrome', !window.chrome, typeof window.chrome);
  let perm = 'n/a';
  try {
    const state = (await navigator.permissions.query({name: 'notifications'})).state;
    perm = `${Notification.permission}/${state}`;
    check('permissions', Notification.permission === 'denied' && state === 'prompt', perm);
  } catch (e) { check('permissions', true, String(e)); }
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  check('timezone', !zone || zone === 'UTC' || zone === 'Etc/UTC', zone);
  check('window_frame', outerHeight === innerHeight && outerWidth === innerWidth,
        `${outerWidth}x${outerHeight} vs ${innerWidth}x${innerHeight}`);
  check('pointer', !matchMedia('(any-hover: hover)').matches, matchMedia('(any-hover: hover)').matches);
  check('screen', screen.width === 800 && screen.height === 600, `${screen.width}x${screen.height}`);
  const box = document.getElementById('checks');
  for (const line of out) { const p = document.createElement('p'); p.textContent = line; box.appendChild(p); }
  document.title = 'checked';
})();
"""


def _page(request: Request) -> Reply:
    agent = request.headers.get("User-Agent", "")
    hints = request.headers.get("Sec-CH-UA", "")
    language = request.headers.get("Accept-Language", "")
    lines = [f"check ua_header: {'FAIL' if 'headless' in agent.lower() else 'pass'} ({agent})",
             f"check sec_ch_ua_header: {'FAIL' if 'headless' in hints.lower() else 'pass'} ({hints or 'none'})",
             f"check accept_language: {'FAIL' if not language else 'pass'} ({language or 'none'})"]
    server_side = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return Reply(200, f"<!doctype html><html><head><title>checking</title></head><body><h1>Bot checks</h1>"
                      f"<div id='checks'>{server_side}</div><script>{CHECKS_JS}</script></body></html>")


def detection_site() -> LocalWebServer:
    """The detection page at `/` (start it with `with`)."""
    return LocalWebServer({"/": _page})


def verdicts(snapshot: str) -> dict[str, bool]:
    """`{check name: passed}` read from a snapshot (or any text) of the detection page."""
    return {name: verdict == "pass" for name, verdict in re.findall(r"check (\w+): (pass|FAIL)", snapshot)}
