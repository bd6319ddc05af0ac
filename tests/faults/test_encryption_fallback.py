"""Encrypted files MuPDF refuses: a second decryptor (qpdf, through pikepdf), or a message
that says the encryption is not supported, instead of asking for a password that does not
exist or calling the file damaged."""

from __future__ import annotations

import re

import fitz
import pytest
import pdf_factory as pf

from bookreader.core.pdf import PdfBook
from bookreader.core.sandbox import scan_pdf
from bookreader.errors import PasswordRequired, PdfError


def _slipped_rc4(path):
    """RC4 with an empty user password whose /Length (the key's bits) is not a whole number
    of bytes: MuPDF refuses the empty password, qpdf reads the file."""
    doc = fitz.open()
    doc.new_page().insert_text((72, 72), "Secret page one. The gulls were counted.")
    doc.save(path, encryption=fitz.PDF_ENCRYPT_RC4_128, owner_pw="owner", user_pw="")
    doc.close()
    data = path.read_bytes()
    slipped = re.sub(rb"/Length 128/P", b"/Length 7/P", data, count=1)
    assert slipped != data
    path.write_bytes(slipped)
    return path


def test_an_encryption_mupdf_refuses_opens_through_the_second_decryptor(tmp_path):
    """Before: "protected by a password", for a file that has no user password."""
    path = _slipped_rc4(tmp_path / "slipped.pdf")
    doc = fitz.open(path)
    assert doc.needs_pass and not doc.authenticate("")  # MuPDF alone refuses it
    doc.close()
    scan = scan_pdf(path)  # first contact: in the sandbox's capped child
    assert scan.page_count == 1
    with PdfBook.open(path) as book:
        assert book.page(0).text == "Secret page one. The gulls were counted."
        assert book.render(0, 0.5)[1] > 0  # rendered from the decrypted copy in memory
    assert list(tmp_path.iterdir()) == [path]  # no decrypted copy left on disk


def test_an_empty_owner_password_does_not_stand_in_for_the_user_password(tmp_path):
    """qpdf would open this through its empty owner password; MuPDF, pdf.js and Adobe
    Reader ask for the user password, and so does BookReader."""
    path = pf.encrypted_pdf(tmp_path / "owner-empty.pdf", "s3cret", owner_password="")
    with pytest.raises(PasswordRequired):
        scan_pdf(path)
    with PdfBook.open(path, password="s3cret") as book:
        assert book.page(0).text.startswith("Secret page one.")


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
    # Empty owner password, user password "asdfasdf": asked for, as pdf.js does.
    with pytest.raises(PasswordRequired):
        scan_pdf(pdfs / "pdfjs__pr6531_2.pdf")
    with PdfBook.open(pdfs / "pdfjs__pr6531_2.pdf", password="asdfasdf") as book:
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
