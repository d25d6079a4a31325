"""Every Content-Encoding decoded in bounded pieces: exact bodies, and bombs that stop at MAX_DOWNLOAD_MB.

Issue 36: a 1.6 KB brotli body took fetch_webpage to 4.1 GiB, because the decoder turned one network
chunk into its whole output. The bombs here (1 GiB of zeros: 1.6 KB as brotli, 32 KB as zstd) are
served by a real loopback server and read by the real fetch_webpage; the process's resident memory
is sampled while it runs.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from pathlib import Path

import brotli
import pytest
import zstandard

from config import load_settings
from tests.support.bombs import compression_bomb
from tests.support.downloads import ChunkedServer
from tools.core.context import ToolContext
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web import make_web_tools

TEXT = ("Station 12 logged 417 volunteers on the morning shift.\n" * 4000).encode()  # 220 KB
ENCODED = {
    "gzip": gzip.compress(TEXT),
    "deflate": zlib.compress(TEXT),
    "br": brotli.compress(TEXT),
    "zstd": zstandard.ZstdCompressor().compress(TEXT),
    "gzip, br": brotli.compress(gzip.compress(TEXT)),
}


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.fixture()
def run(tmp_path):
    with Workspace(tmp_path / "work", 200 * 2**20) as work:
        yield ToolContext(run_services=RunServices(work)).to_config()


def _fetch(server: ChunkedServer, run, path: str, **overrides):
    settings = load_settings(TOOL_TIMEOUT=30, MAX_FILE_SIZE=4000, FETCH_ALLOWED_HOSTS=server.host_port, **overrides)
    tool = next(t for t in make_web_tools(settings) if t.name == "fetch_webpage")
    return run_tool(tool, {"url": server.url(path)}, settings, run)


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


class PeakMemory:
    """The highest resident set size seen while the block runs, sampled every millisecond."""

    def __enter__(self) -> PeakMemory:
        self.base = self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(0.001)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.base) / 2**20


@pytest.mark.parametrize("encoding", [*ENCODED, "deflate (raw)"])
def test_each_encoding_decodes_to_the_exact_body(run, encoding):
    body = _raw_deflate(TEXT) if encoding == "deflate (raw)" else ENCODED[encoding]
    with ChunkedServer(body, "text/plain", chunk=1000, encoding=encoding.split(" (")[0]) as server:
        outcome = _fetch(server, run, f"/log-{len(encoding)}.txt")
    assert outcome.ok, outcome.output
    saved = outcome.output.split("Saved to ")[1].split(" (")[0]
    assert Path(saved).read_bytes() == TEXT


@pytest.fixture(scope="module")
def bombs():
    return {encoding: compression_bomb(encoding) for encoding in ("br", "zstd")}


@pytest.mark.parametrize("encoding", ["br", "zstd"])
@pytest.mark.parametrize("path", ["/page.html", "/export.txt"])
def test_a_compression_bomb_stops_at_the_download_limit(run, bombs, encoding, path):
    body = bombs[encoding]
    assert len(body) < 40_000  # 1 GiB of zeros on the wire: 1.6 KB as brotli, 32 KB as zstd
    kind = "text/html" if path.endswith(".html") else "text/plain"
    with ChunkedServer(body, kind, encoding=encoding) as server, PeakMemory() as memory:
        outcome = _fetch(server, run, path, MAX_DOWNLOAD_MB=8)
    assert memory.growth_mb < 200, f"{encoding} bomb grew the process by {memory.growth_mb:.0f} MB"
    work = ToolContext.of(run).work
    assert sum(p.stat().st_size for p in work.root.rglob("*") if p.is_file()) <= 8 * 2**20
    if path.endswith(".txt"):
        assert "download cut at 8.0 MB, the download limit (MAX_DOWNLOAD_MB)" in outcome.output


def test_a_body_that_does_not_decode_is_a_clear_failure(run):
    with ChunkedServer(b"this is not brotli at all" * 10, "text/plain", encoding="br") as server:
        outcome = _fetch(server, run, "/broken.txt")
    assert not outcome.ok and "does not decode as br" in outcome.output
