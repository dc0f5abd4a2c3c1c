"""URL normalisation: the fast path for already-canonical URLs gives exactly what the full path gives."""

from __future__ import annotations

import pytest

from tracescore.urls import normalize_url


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://a.example/x\n", "https://a.example/x"),  # "$" matched before the newline: the fast path kept it
        ("https://a.example/x \r\n", "https://a.example/x"),
        ("https://a.example/x", "https://a.example/x"),
        ("HTTPS://A.example:443/x/?utm_source=z#frag", "https://a.example/x"),
    ],
)
def test_a_url_and_its_canonical_form(url: str, canonical: str) -> None:
    assert normalize_url(url) == canonical
    assert normalize_url(canonical) == canonical
