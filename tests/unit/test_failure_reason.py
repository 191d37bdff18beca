"""The short reason a failed request gets in its record and in the summary's notes."""

from __future__ import annotations

from OpenSSL.SSL import Error as TLSError
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseNeverReceived

from sitemapaudit.spiders.audit import _reason


def test_a_plain_error_keeps_its_type_and_text() -> None:
    assert (
        _reason(Failure(DNSLookupError("e.invalid")))
        == "DNSLookupError: DNS lookup failed: e.invalid."
    )


def test_a_tls_error_says_what_went_wrong_in_words() -> None:
    error = TLSError([("SSL routines", "", "wrong version number")])
    assert _reason(Failure(error)) == "TLS error: wrong version number"
    wrapped = ResponseNeverReceived([Failure(error)])
    assert _reason(Failure(wrapped)) == "TLS error: wrong version number"
    assert _reason(Failure(TLSError())) == "TLS error"
