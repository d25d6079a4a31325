"""Expansion bombs for the visitor tests: files small on disk that expand without bound when parsed.

Each is generated small (a few KB to a few MB) from its format's own structure:
- `huge_page_pdf`: a hand-written PDF whose one page is 14,400 x 14,400 pt (200 inches; rendered at
  scale 2 that is 830 megapixels), about 400 bytes;
- `many_rows_split`: a GAIA folder whose `2023/validation/metadata.parquet` holds 3,000,000 rows of
  the hub's columns (dictionary-encoded: tens of KB);
- `silent_flac`: hours of silence, FLAC-encoded by ffmpeg (a few hundred KB);
- `huge_xml_docx`: a docx (zip) whose `word/document.xml` unpacks to 300 MB of empty paragraphs;
- `many_rows_xlsx`: an xlsx whose first sheet holds 10,000,000 rows.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

_CONTENT_TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
                  'package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>')


def huge_page_pdf(path: Path, points: int = 14_400) -> Path:
    """A valid one-page PDF with an empty page of `points` x `points` (no text layer: a 'scanned' page)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {points} {points}] >>".encode()]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def many_rows_split(root: Path, rows: int = 3_000_000) -> Path:
    """A local GAIA folder (`root/2023/validation/metadata.parquet`) of `rows` identical rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    split = root / "2023" / "validation"
    split.mkdir(parents=True)
    column = {"task_id": "task-0", "Question": "What is 2+2?", "Level": "1", "Final answer": "4", "file_name": "",
              "file_path": ""}
    table = pa.table({k: pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int8()), pa.array([v]))
                      for k, v in column.items()})
    pq.write_table(table, split / "metadata.parquet", compression="zstd")
    return root


def silent_flac(path: Path, seconds: int = 4 * 3600) -> Path:
    """`seconds` of 8 kHz mono silence as FLAC (ffmpeg's anullsrc)."""
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono",
                    "-t", str(seconds), "-c:a", "flac", str(path)], check=True, timeout=120)
    return path


def _zip_with(path: Path, name: str, head: bytes, chunk: bytes, repeats: int, tail: bytes,
              extra: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        for other, text in extra.items():
            archive.writestr(other, text)
        with archive.open(name, "w", force_zip64=True) as part:
            part.write(head)
            block = chunk * 4096
            for _ in range(repeats // 4096):
                part.write(block)
            part.write(tail)
    return path


def huge_xml_docx(path: Path, megabytes: int = 300) -> Path:
    """A docx whose main part is `megabytes` MB of empty paragraphs (about 1 MB zipped)."""
    paragraph = b"<w:p/>"
    return _zip_with(path, "word/document.xml",
                     b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>',
                     paragraph, megabytes * 2**20 // len(paragraph), b"</w:body></w:document>", {})


def many_rows_xlsx(path: Path, rows: int = 10_000_000) -> Path:
    """An xlsx whose sheet holds `rows` rows of one cell (rows without numbers: the reader counts them anyway)."""
    sheet = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    workbook = ('<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://'
                'schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" '
                'r:id="rId1"/></sheets></workbook>')
    return _zip_with(path, "xl/worksheets/sheet1.xml", sheet, b"<row><c><v>1</v></c></row>", rows,
                     b"</sheetData></worksheet>", {"xl/workbook.xml": workbook})


def compression_bomb(encoding: str, gib: int = 1) -> bytes:
    """`gib` GiB of zero bytes compressed as `encoding` ('br': ~1.6 KB per GiB, 'zstd' ~32 KB, 'gzip' ~1 MB).

    The body a hostile server sends with `Content-Encoding: <encoding>`; built in 16 MiB steps, so
    making it never holds the expanded bytes.
    """
    import zlib

    zeros = bytes(1 << 24)
    steps = gib * 64
    if encoding == "br":
        import brotli

        compressor = brotli.Compressor(quality=5)
        return b"".join(compressor.process(zeros) for _ in range(steps)) + compressor.finish()
    if encoding == "zstd":
        import zstandard

        zstd = zstandard.ZstdCompressor(level=19).compressobj()
        return b"".join(zstd.compress(zeros) for _ in range(steps)) + zstd.flush()
    wbits = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}[encoding]
    deflate = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return b"".join(deflate.compress(zeros) for _ in range(steps)) + deflate.flush()


_DOCX_TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
               'content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" '
               'ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override '
               'PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
               'wordprocessingml.document.main+xml"/></Types>')
_DOCX_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
              '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
              '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')


def parseable_docx(path: Path, megabytes: int = 60) -> Path:
    """A VALID docx of `megabytes` MB of one-word paragraphs, under the unpacked cap: only the parse's limits hold it.

    60 MB of XML (400 KB zipped) took 160 s of CPU and 1.1 GiB to parse in full.
    """
    paragraph = b"<w:p><w:r><w:t>x</w:t></w:r></w:p>"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _DOCX_TYPES)
        archive.writestr("_rels/.rels", _DOCX_RELS)
        with archive.open("word/document.xml", "w") as part:
            part.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
            block = paragraph * 4096
            for _ in range(megabytes * 2**20 // len(block)):
                part.write(block)
            part.write(b"</w:body></w:document>")
    return path
