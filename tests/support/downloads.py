"""Files to download in tests: a PDF past the old 5 MB cap with a fact on a late page, a CSV, an endless stream.

`ChunkedServer` answers like servers that stream exports: no Content-Length, the body sent in chunks
(`Transfer-Encoding: chunked`), so a size limit can only be enforced while reading.
"""

from __future__ import annotations

import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def large_pdf(pages: int, facts: dict[int, str], pad_mb: float = 6.0) -> bytes:
    """A PDF of `pages` text pages (`facts`: page -> a sentence on it) padded past `pad_mb` MB by a noise image."""
    import io

    from fpdf import FPDF
    from PIL import Image

    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    side = int((pad_mb * 2**20 / 3) ** 0.5) + 16
    noise = Image.frombytes("RGB", (side, side), random.Random(7).randbytes(side * side * 3))
    buffer = io.BytesIO()
    noise.save(buffer, format="PNG")
    for number in range(1, pages + 1):
        pdf.add_page()
        if number == 1:
            pdf.image(io.BytesIO(buffer.getvalue()), w=60)
        body = facts.get(number, "") + f" Section {number}. " + "The survey lists parish boundaries. " * 30
        pdf.multi_cell(0, 5, body.strip())
    return bytes(pdf.output())


def roster_csv(rows: int = 400) -> str:
    """A CSV whose answer (a sum over one column) needs every row."""
    lines = ["id,name,district,volunteers"]
    for i in range(1, rows + 1):
        lines.append(f"{i},Station {i},{'North' if i % 3 else 'South'},{(i * 37) % 11 + 1}")
    return "\n".join(lines) + "\n"


def roster_total(rows: int = 400, district: str = "South") -> int:
    """The answer roster_csv hides: volunteers summed over one district."""
    return sum((i * 37) % 11 + 1 for i in range(1, rows + 1) if ('North' if i % 3 else 'South') == district)


class ChunkedServer:
    """Serves `body` at every path, chunked, without Content-Length, on 127.0.0.1."""

    def __init__(self, body: bytes, content_type: str, chunk: int = 64 * 1024, encoding: str = "") -> None:
        """`encoding`: sent as Content-Encoding (the body is sent as given: encode it first)."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Transfer-Encoding", "chunked")
                if encoding:
                    self.send_header("Content-Encoding", encoding)
                self.end_headers()
                try:
                    for start in range(0, len(outer.body), chunk):
                        part = outer.body[start:start + chunk]
                        self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: the point of the test
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.body = body
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def host_port(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{host!s}:{port}"

    def url(self, path: str) -> str:
        return f"http://{self.host_port}{path}"

    def __enter__(self) -> ChunkedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
