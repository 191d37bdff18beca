"""The short reason a failed request gets in its record and in the summary's notes."""

from __future__ import annotations

from OpenSSL.SSL import Error as TLSError
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseNeverReceived

from sitemapaudit.crawl.responses import failure_reason


def test_a_plain_error_keeps_its_type_and_text() -> None:
    assert (
        failure_reason(Failure(DNSLookupError("e.invalid")))
        == "DNSLookupError: DNS lookup failed: e.invalid."
    )


def test_a_tls_error_says_what_went_wrong_in_words() -> None:
    error = TLSError([("SSL routines", "", "wrong version number")])
    assert failure_reason(Failure(error)) == "TLS error: wrong version number"
    wrapped = ResponseNeverReceived([Failure(error)])
    assert failure_reason(Failure(wrapped)) == "TLS error: wrong version number"
    assert failure_reason(Failure(TLSError())) == "TLS error"
