"""Hostile PDFs, built byte by byte: what an attacker (or a badly broken tool) hands over.

Each builder writes one file and returns its path.  They are used by the fault tests in
this folder and by ``bench/robustness.py`` (which puts this folder on ``sys.path``).

* :func:`deep_outline_pdf`: one page whose outline is nested ``depth`` levels deep, every
  item the ``/First`` child of the one before (60,000 levels exhausts MuPDF's C stack;
  5,000 is deep but fine).
* :func:`bomb_pdf`: one page whose compressed content stream inflates to ``mb`` megabytes
  of text-showing operators.
* :func:`shared_stream_bomb_pdf`: ``pages`` pages that all use one content stream of
  ``mb`` megabytes (a small file, a huge amount of work).
* :func:`truncated_hostile_pdf`: a text PDF cut in half.
* :func:`png_as_pdf`: a PNG image saved with a ``.pdf`` name.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Iterable

_FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_TEXT = b"BT /F1 12 Tf 72 700 Td (A page that reads normally.) Tj ET\n"


def _write_pdf(path: Path, objects: Iterable[bytes], root: int = 1) -> Path:
    """Write objects (object k+1 = k-th body) with a correct xref table, streaming."""
    offsets: list[int] = []
    with open(path, "wb") as fh:
        fh.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        pos = fh.tell()
        for k, body in enumerate(objects, start=1):
            offsets.append(pos)
            chunk = b"%d 0 obj\n" % k + body + b"\nendobj\n"
            fh.write(chunk)
            pos += len(chunk)
        xref = pos
        fh.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1))
        fh.write(b"".join(b"%010d 00000 n \n" % off for off in offsets))
        fh.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
                 % (len(offsets) + 1, root, xref))
    return path


def _stream(data: bytes, compressed: bool = False) -> bytes:
    extra = b" /Filter /FlateDecode" if compressed else b""
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _page(contents: int, parent: int = 2, font: int = 5) -> bytes:
    return (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (parent, contents, font))


def deep_outline_pdf(path: str | Path, depth: int = 60_000) -> Path:
    """One text page; an outline ``depth`` levels deep (item k is the /First of item k-1)."""
    path = Path(path)
    first = 6  # object number of the first outline item

    def objects():
        yield b"<< /Type /Catalog /Pages 2 0 R /Outlines 4 0 R /PageMode /UseOutlines >>"
        yield b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
        yield _page(contents=depth + first, font=5)
        yield b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (first, first, depth)
        yield _FONT.encode()
        for k in range(depth):
            obj = first + k
            parent = 4 if k == 0 else obj - 1
            child = b" /First %d 0 R /Last %d 0 R /Count 1" % (obj + 1, obj + 1) if k < depth - 1 else b""
            yield (b"<< /Title (Level %d) /Parent %d 0 R%s /Dest [3 0 R /Fit] >>"
                   % (k + 1, parent, child))
        yield _stream(_TEXT)

    return _write_pdf(path, objects())


def _bomb_stream(mb: int) -> bytes:
    """Text operators inflating to ``mb`` MB, deflated (about 1 MB per 1,000 MB)."""
    line = b"BT /F1 1 Tf 10 10 Td (" + b"W" * 200 + b") Tj ET\n"
    block = line * ((1 << 20) // len(line))
    comp = zlib.compressobj(9)
    parts = [comp.compress(block) for _ in range(mb)]
    parts.append(comp.flush())
    return b"".join(parts)


def bomb_pdf(path: str | Path, mb: int = 300) -> Path:
    """One page whose content stream inflates to ``mb`` MB of text-showing operators."""
    path = Path(path)
    data = _bomb_stream(mb)
    return _write_pdf(path, [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        _page(contents=4, font=5),
        _stream(data, compressed=True),
        _FONT.encode(),
    ])


def shared_stream_bomb_pdf(path: str | Path, pages: int = 50, mb: int = 100) -> Path:
    """``pages`` pages sharing one content stream that inflates to ``mb`` MB."""
    path = Path(path)
    data = _bomb_stream(mb)
    first_page = 5
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _stream(data, compressed=True),
        _FONT.encode(),
    ]
    objects += [_page(contents=3, font=4) for _ in range(pages)]
    return _write_pdf(path, objects)


def truncated_hostile_pdf(path: str | Path, pages: int = 4) -> Path:
    """A text PDF with ``pages`` pages, cut off in the middle of its bytes."""
    path = Path(path)
    first_page = 4
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _FONT.encode(),
    ]
    for i in range(pages):
        objects.append(_page(contents=first_page + 2 * i + 1, font=3))
        text = b"BT /F1 12 Tf 72 700 Td (Page %d of a book cut short.) Tj ET\n" % (i + 1)
        objects.append(_stream(text * 20))
    full = path.with_name(path.stem + ".full.pdf")
    _write_pdf(full, objects)
    data = full.read_bytes()
    full.unlink()
    path.write_bytes(data[: len(data) // 2])
    return path


def png_as_pdf(path: str | Path) -> Path:
    """A real 64x64 PNG image with a ``.pdf`` name."""
    import fitz

    path = Path(path)
    pix = fitz.Pixmap(fitz.csRGB, fitz.IRect(0, 0, 64, 64), False)
    pix.set_rect(pix.irect, (200, 30, 30))
    path.write_bytes(pix.tobytes("png"))
    return path


#: name -> (builder, keyword arguments, what must happen)
HOSTILE_SET = {
    "deep-outline-60000.pdf": (deep_outline_pdf, {"depth": 60_000}, "error"),
    "deep-outline-5000.pdf": (deep_outline_pdf, {"depth": 5_000}, "ok"),
    "bomb-300mb.pdf": (bomb_pdf, {"mb": 300}, "flagged"),
    "bomb-600mb.pdf": (bomb_pdf, {"mb": 600}, "flagged"),
    "shared-stream-50x100mb.pdf": (shared_stream_bomb_pdf, {"pages": 50, "mb": 100}, "flagged"),
    "truncated.pdf": (truncated_hostile_pdf, {}, "ok-or-error"),
    "png-renamed.pdf": (png_as_pdf, {}, "error"),
}


def build_hostile_set(folder: str | Path) -> dict[str, Path]:
    """Build every file of :data:`HOSTILE_SET` in ``folder``; name -> path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (builder, kwargs, _expect) in HOSTILE_SET.items():
        target = folder / name
        if not target.exists():
            builder(target, **kwargs)
        out[name] = target
    return out
