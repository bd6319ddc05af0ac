"""Encrypted files MuPDF refuses: a second decryptor (qpdf, through pikepdf), or a message
that says the encryption is not supported, instead of asking for a password that does not
exist or calling the file damaged."""

from __future__ import annotations

import re

import pytest
import pdf_factory as pf

from bookreader.core.pdf import PdfBook
from bookreader.core.sandbox import scan_pdf
from bookreader.errors import PasswordRequired, PdfError


def test_an_empty_owner_password_opens_without_asking(tmp_path):
    """By the standard the owner password grants full access: an empty one opens the file
    for anyone.  MuPDF asks for the user password; qpdf opens it (before: "protected by a
    password", a password the student was never given)."""
    path = pf.encrypted_pdf(tmp_path / "owner-empty.pdf", "s3cret", owner_password="")
    import fitz

    doc = fitz.open(path)
    assert doc.needs_pass and not doc.authenticate("")  # MuPDF alone refuses it
    doc.close()
    scan = scan_pdf(path)  # first contact: in the sandbox's capped child
    assert scan.page_count == 2
    with PdfBook.open(path) as book:
        assert book.page(0).text.startswith("Secret page one.")
        assert book.render(0, 0.5)[1] > 0  # rendered from the decrypted copy in memory
    assert list(tmp_path.iterdir()) == [path]  # no decrypted copy left on disk


def test_a_real_user_password_is_still_asked_for(tmp_path):
    path = pf.encrypted_pdf(tmp_path / "locked.pdf", "s3cret")
    with pytest.raises(PasswordRequired):
        scan_pdf(path)
    with PdfBook.open(path, password="s3cret") as book:
        assert book.page_count == 2


def test_an_unsupported_encryption_says_so_instead_of_damaged(tmp_path):
    path = pf.encrypted_pdf(tmp_path / "cert.pdf", "", owner_password="o")
    data = path.read_bytes()
    # The same file under a certificate-style security handler neither reader implements.
    forged = re.sub(rb"/Filter\s*/Standard", lambda m: m.group(0)[:-8] + b"PubSecXX", data)
    assert forged != data
    path.write_bytes(forged)
    for opener in (lambda: scan_pdf(path), lambda: PdfBook.open(path)):
        with pytest.raises(PdfError) as err:
            opener()
        assert not isinstance(err.value, PasswordRequired)
        message = err.value.user_message
        assert "'cert.pdf' is encrypted in a way BookReader cannot read" in message
        assert "a password would not help" in message and "damaged" not in message


def test_the_corpus_encrypted_files(eval_dir):
    pdfs = eval_dir / "pdfs"
    # Empty owner password, user password "asdfasdf": opens without one (qpdf agrees).
    with PdfBook.open(pdfs / "pdfjs__pr6531_2.pdf") as book:
        assert "Bluebeam" in book.page(0).text
    # These two have real user passwords (pdf.js's own test passes the owner password
    # "1234"; qpdf's test the user password "623"): asking for it is right.
    for name, password in (("pdfjs__print_protection.pdf", "1234"),
                           ("qpdf__encrypted-40-bit-R3.pdf", "623")):
        with pytest.raises(PasswordRequired) as err:
            scan_pdf(pdfs / name)
        assert "protected by a password" in err.value.user_message
        with PdfBook.open(pdfs / name, password=password) as book:
            assert book.page_count == 1
