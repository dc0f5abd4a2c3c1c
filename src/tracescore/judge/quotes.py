"""Quote verification in code: is the judge's verbatim quote really in the document it names?

Both sides are normalised (Unicode NFKC, case, curly quotes, dashes, ellipses, all whitespace removed) before an
exact substring test; failing that, a fuzzy match within a tight bound (RapidFuzz partial ratio ≥ ``MIN_FUZZY``,
a few typo-sized edits, every number intact) is accepted. A quote shorter than ``MIN_QUOTE_CHARS`` proves
nothing and is not accepted. A quote with ``...`` elisions is verified piece by piece.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MIN_FUZZY", "MIN_QUOTE_CHARS", "QuoteCheck", "normalize_quote_text", "verify_quote"]

MIN_FUZZY = 96.0
MIN_QUOTE_CHARS = 12

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\u2026": "...",
    }
)
_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\[\.\.\.\]|\u2026)\s*")


@dataclass(frozen=True)
class QuoteCheck:
    """The outcome of one quote check: found or not, how (``exact``/``fuzzy``), the fuzzy score, and why not."""

    found: bool
    how: str
    score: float = 0.0
    reason: str | None = None


def normalize_quote_text(text: str) -> str:
    """Case-folded text with quotes, dashes and ellipses unified and every whitespace character removed."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return _SPACE.sub("", text)


@lru_cache(maxsize=64)
def _normalized_document(text: str) -> str:
    """Documents are checked once per claim: normalise each page once."""
    return normalize_quote_text(text)


def _check_piece(piece: str, haystack: str) -> QuoteCheck:
    needle = normalize_quote_text(piece)
    if len(needle) < MIN_QUOTE_CHARS:
        return QuoteCheck(False, "none", reason=f"quote too short to verify ({len(needle)} characters)")
    if needle in haystack:
        return QuoteCheck(True, "exact", 100.0)
    from rapidfuzz import fuzz

    found = fuzz.partial_ratio_alignment(needle, haystack, score_cutoff=MIN_FUZZY)
    if found is not None and (found.dest_end - found.dest_start) >= len(needle) * 0.9:
        region = haystack[found.dest_start : found.dest_end]
        missing = [n for n in _DIGITS.findall(needle) if n not in _DIGITS.findall(region)]
        if not missing:  # a near match may fix a typo, never a number
            return QuoteCheck(True, "fuzzy", found.score)
        return QuoteCheck(False, "none", found.score, reason=f"quote's number(s) {missing} not in the document")
    best = fuzz.partial_ratio(needle, haystack)
    return QuoteCheck(False, "none", best, reason=f"quote not found in the document (best fuzzy match {best:.0f})")


def verify_quote(quote: str, document: str) -> QuoteCheck:
    """Check that ``quote`` occurs in ``document`` after normalisation (each ``...``-separated piece in turn)."""
    if not quote or not quote.strip():
        return QuoteCheck(False, "none", reason="no quote given")
    haystack = _normalized_document(document)
    pieces = [p for p in _ELLIPSIS.split(quote.strip()) if p.strip()]
    checks = [_check_piece(p, haystack) for p in pieces] or [QuoteCheck(False, "none", reason="no quote given")]
    if len(checks) > 1:  # short elided fragments are fine as long as one long piece proves the quote
        long_enough = [c for c in checks if c.reason is None or not c.reason.startswith("quote too short")]
        checks = long_enough or checks
    failed = next((c for c in checks if not c.found), None)
    if failed is not None:
        return failed
    return QuoteCheck(True, "fuzzy" if any(c.how == "fuzzy" for c in checks) else "exact", min(c.score for c in checks))
