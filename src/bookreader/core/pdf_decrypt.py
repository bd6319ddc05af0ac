"""A second decryptor for encrypted PDFs that MuPDF will not open.

MuPDF and qpdf (through ``pikepdf``) disagree on some encrypted files: qpdf tolerates an
encryption dictionary with a slip in it (a key length that is not a whole number of bytes,
a revision one off, a stream filter named but not defined) that makes MuPDF refuse the empty
user password or the file.  Before BookReader asks the student for a password, or calls a
file damaged, the same file is given to qpdf: if qpdf opens it with the password given, or,
with none, as a file whose *user* password is empty, the decrypted copy is kept in memory
(never written to disk) and MuPDF reads that.  A file qpdf opens only through an empty
*owner* password still asks for its user password, as MuPDF, pdf.js and Adobe Reader do:
its author meant it to have one.  If qpdf needs a password too, the file truly has one.  If
qpdf says the encryption itself is not supported (a certificate-based handler, an unknown
revision), the message says exactly that, instead of asking for a password that would not
help.

This runs wherever a PDF is opened, and so first in the sandbox's capped child process
(:mod:`bookreader.core.sandbox`), which opens every file before the main process does.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Optional

from bookreader.errors import PdfError

log = logging.getLogger(__name__)

#: Files larger than this are not decrypted into memory (the copy is held whole).
MAX_DECRYPT_BYTES = 512 << 20


def has_encrypt_entry(path: Path) -> bool:
    """True when the file names an ``/Encrypt`` dictionary in its last 64 kB or its
    first 64 kB (trailers and cross-reference streams live there)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - (1 << 16)))
            tail = fh.read()
    except OSError:
        return False
    return b"/Encrypt" in head or b"/Encrypt" in tail


def unsupported_message(name: str, why: str) -> str:
    return (f"'{name}' is encrypted in a way BookReader cannot read ({why}); a password would "
            "not help. Open it in the program that made it (or Adobe Reader) and save an "
            "unencrypted copy, then add that copy.")


def decrypt_in_memory(path: Path, password: str) -> Optional[bytes]:
    """The decrypted bytes of ``path`` as qpdf reads it with ``password`` (may be empty).

    Returns None when qpdf also needs a (different) password (an empty owner password
    does not stand in for the user password), or when pikepdf is missing or the file is too
    large to copy in memory.

    Raises:
        PdfError: qpdf says the file's encryption is not supported.
    """
    try:
        import pikepdf
    except ImportError:  # pragma: no cover - a dependency of the package
        log.warning("pikepdf is not installed: no second decryptor for %s", path)
        return None
    try:
        if path.stat().st_size > MAX_DECRYPT_BYTES:
            return None
    except OSError:
        return None
    try:
        with pikepdf.open(path, password=password) as pdf:
            if not password and not pdf.user_password_matched:
                return None  # only the empty owner password matched: ask for the user's
            out = io.BytesIO()
            pdf.save(out)
            log.info("Opened %s with the second decryptor (qpdf; owner password matched: %s)",
                     path.name, pdf.owner_password_matched)
            return out.getvalue()
    except pikepdf.PasswordError:
        return None
    except pikepdf.PdfError as exc:
        text = str(exc)
        if "encrypt" in text.lower():
            why = text.rsplit("):", 1)[-1].strip() or "unknown encryption"
            raise PdfError(unsupported_message(path.name, why), details=text) from exc
        log.info("The second decryptor cannot read %s either: %s", path, text)
        return None
    except Exception as exc:  # qpdf failing in another way: MuPDF's verdict stands
        log.info("The second decryptor failed on %s: %r", path, exc)
        return None
