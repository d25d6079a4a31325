"""fetch_webpage against local HTML/PDF/binary pages on 127.0.0.1 (no network)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from config import load_settings
from tests.support.fixtures import make_png, pdf_bytes
from tests.support.web_server import LocalWebServer, Reply, Request
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.web import make_web_tools
from tools.web.download import MAX_DOWNLOAD_BYTES

ARTICLE = """<!doctype html><html><head><title>Mercedes Sosa — Test Wiki</title>
<style>.x{color:red}</style><script>window.SECRET_SCRIPT = 'should not appear';</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Mercedes Sosa</h1>
<p>Haydée Mercedes Sosa (9 July 1935 – 4 October 2009) was an Argentine singer who was popular
throughout Latin America and many countries outside the region. Her roots were in Argentine folk music.</p>
<h2>Studio albums</h2>
<p>Between 2000 and 2009 she published several studio albums, including Corazón Libre in 2005 and
Cantora 1 in 2009, recorded with many guest artists.</p>
<table><tr><th>Year</th><th>Album</th></tr><tr><td>2005</td><td>Corazón Libre</td></tr>
<tr><td>2009</td><td>Cantora 1</td></tr></table>
</article><footer>Copyright footer text</footer></body></html>"""


def _fetch_tool(settings, *servers):
    """fetch_webpage allowed to reach the given loopback servers (FETCH_ALLOWED_HOSTS), as an operator would."""
    allowed = ",".join(s if isinstance(s, str) else s.host_port for s in servers)
    settings = settings.model_copy(update={"FETCH_ALLOWED_HOSTS": allowed}) if allowed else settings
    return next(t for t in make_web_tools(settings) if t.name == "fetch_webpage")


@pytest.fixture()
def settings():
    return load_settings(TOOL_TIMEOUT=10)


def test_html_page_becomes_readable_markdown(settings):
    with LocalWebServer({"/wiki/Mercedes_Sosa": Reply(200, ARTICLE)}) as server:
        out = _fetch_tool(settings, server).invoke({"url": server.url("/wiki/Mercedes_Sosa")})
    assert out.startswith(f"URL: {server.url('/wiki/Mercedes_Sosa')}\nTitle: Mercedes Sosa — Test Wiki")
    assert "9 July 1935" in out and "Corazón Libre" in out and "Cantora 1" in out
    assert "SECRET_SCRIPT" not in out and "color:red" not in out and "<p>" not in out


def test_pdf_url_goes_through_the_pdf_parser(settings):
    routes = {"/report": Reply(200, pdf_bytes(), "application/pdf"),
              "/files/report.pdf": Reply(200, pdf_bytes(), "application/octet-stream")}
    with LocalWebServer(routes) as server:
        by_type = _fetch_tool(settings, server).invoke({"url": server.url("/report")})
        by_name = _fetch_tool(settings, server).invoke({"url": server.url("/files/report.pdf")})
    for out in (by_type, by_name):
        assert "--- Page 1 ---" in out and "--- Page 3 ---" in out
        assert "| Apples | 12 | 0.50 |" in out


@pytest.mark.parametrize("url, fragment", [
    ("file:///etc/passwd", "only http:// and https:// URLs"),
    ("ftp://example.org/file.txt", "only http:// and https:// URLs"),
    ("javascript:alert(1)", "only http:// and https:// URLs"),
    ("", "no URL given"),
    ("/tmp/report.pdf", "looks like a local file path"),
    ("http://169.254.169.254/latest/meta-data/", "local or private address"),
    ("https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/x.jsonl", "blocked domain"),
])
def test_refused_urls(settings, url, fragment):
    outcome = run_tool(_fetch_tool(settings), {"url": url}, settings)
    assert not outcome.ok and outcome.output.startswith("Error: ") and fragment in outcome.output


def test_blocked_prefix_is_refused_before_and_after_redirects():
    routes = {"/answers/key": Reply(200, "the answer is 42"),
              "/innocent": Reply(302, "", headers={"Location": "/answers/key"})}
    with LocalWebServer(routes) as server:
        host = server.base.split("://")[1]
        settings = load_settings(BLOCKED_DOMAINS=f"{host}/answers")
        direct = run_tool(_fetch_tool(settings, server), {"url": server.url("/answers/key")}, settings)
        assert server.hits("/answers/key") == 0
        redirected = run_tool(_fetch_tool(settings, server), {"url": server.url("/innocent")}, settings)
    assert not direct.ok and "blocked domain" in direct.output
    assert not redirected.ok and "blocked domain" in redirected.output and "the answer is" not in redirected.output


@pytest.mark.parametrize("status, fragment", [(404, "does not exist"), (403, "refuses automated access"),
                                              (500, "the server failed"), (429, "rate limiting")])
def test_http_errors_are_observations(settings, status, fragment):
    with LocalWebServer({"/page": Reply(status, "nope")}) as server:
        outcome = run_tool(_fetch_tool(settings, server), {"url": server.url("/page")}, settings)
    assert not outcome.ok and outcome.error_kind == "http_error"
    assert f"HTTP {status}" in outcome.output and fragment in outcome.output


def test_connection_refused_is_a_network_error(settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nothing listens there
    outcome = run_tool(_fetch_tool(settings, f"127.0.0.1:{port}"), {"url": f"http://127.0.0.1:{port}/"}, settings)
    assert not outcome.ok and outcome.error_kind == "network_error" and "could not connect" in outcome.output


def test_slow_server_times_out_with_a_message():
    def slow(request: Request) -> Reply:
        time.sleep(4)
        return Reply(200, ARTICLE)

    settings = load_settings(TOOL_TIMEOUT=3)
    with LocalWebServer({"/slow": slow}) as server:
        outcome = run_tool(_fetch_tool(settings, server), {"url": server.url("/slow")}, settings)
    # The tool's own 2 s limit (inside TOOL_TIMEOUT) fired, not the executor's: its message names the page.
    assert not outcome.ok and outcome.error_kind == "timeout" and "did not answer within 2s" in outcome.output


def test_download_is_size_capped_and_the_text_paged(settings):
    paragraph = "<p>" + "word " * 200 + "</p>\n"
    big = "<html><body>" + paragraph * (MAX_DOWNLOAD_BYTES // len(paragraph) + 200) + "END_MARKER</body></html>"
    with LocalWebServer({"/big": Reply(200, big)}) as server:
        tool = _fetch_tool(settings, server)
        outcome = run_tool(tool, {"url": server.url("/big")}, settings)
        pages = int(outcome.output.split("[page 1 of ")[1].split("]")[0])
        last = tool.invoke({"url": server.url("/big"), "page": pages})
        assert server.hits("/big") == 1
    assert outcome.ok and outcome.truncated_chars == 0 and len(outcome.output) <= settings.MAX_FILE_SIZE
    assert "download stopped at 5.0 MB" in last and "END_MARKER" not in last


def test_binary_content_is_saved_with_a_pointer_to_the_right_tool(settings, tmp_path):
    png = make_png(tmp_path).read_bytes()
    with LocalWebServer({"/img/chart.png": Reply(200, png, "image/png")}) as server:
        out = _fetch_tool(settings, server).invoke({"url": server.url("/img/chart.png")})
    saved = Path(out.split("saved to ")[1].split(": call")[0])
    assert "PNG image" in out and "image_ocr" in out
    assert saved.name == "chart.png" and saved.read_bytes() == png


def test_json_and_plain_text_are_returned_as_text(settings):
    routes = {"/api": Reply.json({"population": 12345}),
              "/robots.txt": Reply(200, "User-agent: *\nDisallow:", "text/plain")}
    with LocalWebServer(routes) as server:
        as_json = _fetch_tool(settings, server).invoke({"url": server.url("/api")})
        as_text = _fetch_tool(settings, server).invoke({"url": server.url("/robots.txt")})
    assert '"population": 12345' in as_json and "Content-Type: application/json" in as_json
    assert "Disallow:" in as_text


def test_scheme_less_url_gets_https(settings):
    from tools.web.download import check_url

    assert check_url("example.org/page", []) == "https://example.org/page"
    with pytest.raises(ToolFailure):
        check_url("mailto:someone@example.org", [])


def test_declared_charset_is_honoured(settings):
    page = "<html><head><title>Ç</title></head><body><p>Crème brûlée à la française, très bien.</p></body></html>"
    with LocalWebServer({"/latin": Reply(200, page.encode("latin-1"), "text/html; charset=iso-8859-1")}) as server:
        out = _fetch_tool(settings, server).invoke({"url": server.url("/latin")})
    assert "Crème brûlée à la française" in out


def test_office_download_without_extension_is_recognised(settings, tmp_path):
    from tests.support.fixtures import make_docx
    from tools.documents.files import read_path

    with LocalWebServer({"/download": Reply(200, make_docx(tmp_path).read_bytes(),
                                            "application/octet-stream")}) as server:
        out = _fetch_tool(settings, server).invoke({"url": server.url("/download")})
    saved = Path(out.split("saved to ")[1].split(": call")[0])
    assert "Not a web page: Word document" in out and saved.suffix == ".docx"
    assert "Closing remark after the table." in read_path(saved)


def test_empty_body_is_a_failure(settings):
    with LocalWebServer({"/empty": Reply(200, b"")}) as server:
        outcome = run_tool(_fetch_tool(settings, server), {"url": server.url("/empty")}, settings)
    assert not outcome.ok and outcome.error_kind == "empty_page" and "empty body" in outcome.output


def test_text_served_as_octet_stream_is_shown_inline(settings):
    with LocalWebServer({"/code/solve.py": Reply(200, "print('hello from the server')\n",
                                                 "application/octet-stream")}) as server:
        out = _fetch_tool(settings, server).invoke({"url": server.url("/code/solve.py")})
    assert "print('hello from the server')" in out and "saved to" not in out


def test_oversized_binary_is_refused(settings):
    settings = settings.model_copy(update={"MAX_DOWNLOAD_MB": 1})
    blob = b"\x89PNG\r\n\x1a\n" + bytes(2**20 + 1000)
    with LocalWebServer({"/huge.png": Reply(200, blob, "image/png")}) as server:
        outcome = run_tool(_fetch_tool(settings, server), {"url": server.url("/huge.png")}, settings)
    assert not outcome.ok and outcome.error_kind == "size_limit" and "download limit" in outcome.output
