"""A response body decoded with a cap: gzip, deflate, br and zstd stream-decoded in bounded pieces.

httpx decodes `Content-Encoding` itself, but each of its decoders turns a whole network chunk into
its whole output at once: a 1.6 KB brotli body expands to 1 GiB in one call (4 GiB was measured on
fetch_webpage). Here the raw bytes (`Response.iter_raw`) go through a chain of incremental decoders
(one per listed encoding, last applied first undone), each of which never produces more than
`PIECE` bytes per step. The caller counts the decoded bytes against its limit (MAX_DOWNLOAD_MB) and
stops pulling: what has not been asked for is never decompressed.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

from tools.core.errors import ToolFailure

PIECE = 64 * 1024
"""The most any decoder step produces at once (bytes)."""
ENCODINGS = ("identity", "gzip", "x-gzip", "deflate", "br", "zstd")


def _zlib(chunks: Iterable[bytes], wbits: int) -> Iterator[bytes]:
    """Decode gzip (wbits 16+15, members concatenated) or deflate (zlib-wrapped, else raw, as servers send both)."""
    decoder = zlib.decompressobj(wbits)
    first = True
    for chunk in chunks:
        data = chunk
        while data:
            try:
                out = decoder.decompress(data, PIECE)
            except zlib.error:
                if not (first and wbits == zlib.MAX_WBITS):
                    raise
                decoder, wbits = zlib.decompressobj(-zlib.MAX_WBITS), -zlib.MAX_WBITS  # raw deflate
                continue
            first = False
            if out:
                yield out
            data = decoder.unconsumed_tail
            if decoder.eof and decoder.unused_data and wbits != -zlib.MAX_WBITS:
                data = decoder.unused_data + data  # a second gzip member
                decoder = zlib.decompressobj(wbits)
    if tail := decoder.flush():  # input is all consumed by now: what is left is at most a window's worth
        yield tail


def _brotli(chunks: Iterable[bytes]) -> Iterator[bytes]:
    import brotli

    decoder = brotli.Decompressor()
    for chunk in chunks:
        out = decoder.process(chunk, output_buffer_limit=PIECE)
        if out:
            yield out
        while not decoder.can_accept_more_data():  # more output waits inside the decoder
            out = decoder.process(b"", output_buffer_limit=PIECE)
            if not out:
                break
            yield out
    while not decoder.is_finished():  # the input has ended: what the decoder still holds
        out = decoder.process(b"", output_buffer_limit=PIECE)
        if not out:
            break
        yield out


class _Reader:
    """A file-like `read(n)` over an iterator of chunks (what zstandard's streaming reader pulls from)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks, self._buffer = iter(chunks), b""

    def read(self, size: int = -1) -> bytes:
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return b""
        size = len(self._buffer) if size < 0 else size
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


def _zstd(chunks: Iterable[bytes]) -> Iterator[bytes]:
    import zstandard

    source: Any = _Reader(chunks)  # a duck-typed file: zstandard only calls read()
    reader = zstandard.ZstdDecompressor().stream_reader(source, read_size=16384, read_across_frames=True)
    while out := reader.read(PIECE):
        yield out


def _layer(encoding: str, chunks: Iterable[bytes]) -> Iterable[bytes]:
    if encoding in ("gzip", "x-gzip"):
        return _zlib(chunks, zlib.MAX_WBITS | 16)
    if encoding == "deflate":
        return _zlib(chunks, zlib.MAX_WBITS)
    if encoding == "br":
        return _brotli(chunks)
    if encoding == "zstd":
        return _zstd(chunks)
    return chunks  # identity, and names no decoder knows (as httpx does): the bytes as sent


def encodings_of(response: httpx.Response) -> list[str]:
    """The response's Content-Encoding values, in the order the server applied them."""
    header = response.headers.get("content-encoding", "")
    return [e.strip().lower() for e in header.split(",") if e.strip()]


def decoded_chunks(response: httpx.Response, url: str = "") -> Iterator[bytes]:
    """The streamed response body, decoded per its Content-Encoding, in pieces of at most PIECE bytes.

    The caller stops iterating at its limit; nothing past what it read is decompressed. A body its
    encoding cannot decode becomes a ToolFailure naming the encoding.
    """
    encodings = encodings_of(response)
    chunks: Iterable[bytes] = response.iter_raw()
    for encoding in reversed(encodings):
        chunks = _layer(encoding, chunks)
    try:
        for piece in chunks:
            yield from (piece[i:i + PIECE] for i in range(0, len(piece), PIECE))
    except (zlib.error, ValueError, OSError) as exc:
        raise ToolFailure(f"{url or 'the server'} sent a body that does not decode as {', '.join(encodings)} "
                          f"({type(exc).__name__}). Try another source.", "http_error") from None
    except Exception as exc:  # brotli.error and zstandard.ZstdError have no common base with the above
        if type(exc).__name__ in ("error", "ZstdError"):
            raise ToolFailure(f"{url or 'the server'} sent a body that does not decode as {', '.join(encodings)} "
                              f"({type(exc).__name__}). Try another source.", "http_error") from None
        raise


def read_capped(response: httpx.Response, limit: int, url: str = "") -> tuple[bytes, bool]:
    """At most `limit` decoded bytes of the body, and whether more followed (the rest is never decoded)."""
    parts, size = [], 0
    for piece in decoded_chunks(response, url):
        if size + len(piece) > limit:
            parts.append(piece[:limit - size])
            return b"".join(parts), True
        parts.append(piece)
        size += len(piece)
    return b"".join(parts), False
