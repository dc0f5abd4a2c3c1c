"""Quote verification in code: is the judge's verbatim quote really in the document it names?

Both sides are normalised (Unicode NFKC, case, curly quotes, dashes, ellipses, all whitespace removed) before an
exact substring test; failing that, a fuzzy match within a tight bound (RapidFuzz partial ratio ≥ ``MIN_FUZZY``) is
accepted only when every edit it needs is a small non-digit typo. A match, exact or fuzzy, may never change, add or
drop a digit, a number, a negation (``not``, ``no``, ``never``, ``n't``, ``without``, ``none``, …) or a sign: those
characters are *protected* on both sides, an edit that touches one rejects the quote, and a protected character may
only be matched to a protected one (``not`` ≠ the start of ``noted``). A quote shorter than ``MIN_QUOTE_CHARS``
proves nothing and is not accepted. A quote with ``...`` elisions is verified piece by piece.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "MAX_FUZZY_CHARS",
    "MIN_FUZZY",
    "MIN_QUOTE_CHARS",
    "NEGATIONS",
    "QuoteCheck",
    "normalize_quote_text",
    "verify_quote",
]

MIN_FUZZY = 96.0
MIN_QUOTE_CHARS = 12
MAX_FUZZY_CHARS = 2_000  # a longer quote (normalised) must be found verbatim: bounded cost on a long page
NEGATIONS = ("not", "no", "never", "n't", "without", "none", "nor", "cannot", "nothing", "nobody", "neither")
_MAX_EXACT_OCCURRENCES = 1000  # bounded work for a quote found many times in one page
_Doc = tuple[str, str, str]  # normalised text without whitespace, protected mask, word-gap mask

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
_ELLIPSIS = re.compile(r"\[\.\.\.\]|\.\.\.|\u2026")  # no \s* around it: that rescans a run of spaces per start
# protected: a negation word, n't, a digit, a sign before a digit, a separator between digits
_PROTECTED = re.compile(
    r"n't\b|\b(?:" + "|".join(n for n in NEGATIONS if n != "n't") + r")\b|\d+|[-+](?=\s?\d)|(?<=\d)[.,:/](?=\d)"
)


@dataclass(frozen=True)
class QuoteCheck:
    """The outcome of one quote check: found or not, how (``exact``/``fuzzy``), the fuzzy score, and why not."""

    found: bool
    how: str
    score: float = 0.0
    reason: str | None = None


def normalize_quote_text(text: str) -> str:
    """Case-folded text with quotes, dashes and ellipses unified and every whitespace character removed."""
    return _skeleton(text)[0]


def _skeleton(text: str) -> tuple[str, str, str]:
    """The normalised text without whitespace, its protected mask and its word-gap mask (``"1"`` = protected / has
    whitespace before it, else ``"0"``), all three in the same coordinates; built with C-speed string operations."""
    spaced = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold())
    words = spaced.split(" ")
    base = " ".join(["0" * len(w) for w in words])  # "0" for every character, the single spaces kept
    pieces, last = [], 0
    for match in _PROTECTED.finditer(spaced):  # a protected span never holds a space
        pieces += [base[last : match.start()], "1" * (match.end() - match.start())]
        last = match.end()
    pieces.append(base[last:])
    gap = "".join(["1" + "0" * (len(w) - 1) if w else "" for w in words])
    if words[0]:  # no whitespace before the first character
        gap = "0" + gap[1:]
    return spaced.replace(" ", ""), "".join(pieces).replace(" ", ""), gap


@lru_cache(maxsize=64)
def _normalized_document(text: str) -> tuple[str, str, str]:
    """Documents are checked once per claim: normalise each page once."""
    return _skeleton(text)


def _cuts_a_number(needle: str, doc: _Doc, start: int, end: int) -> bool:
    """True when the match starts or ends inside a longer digit string of the document (``193`` in ``1934``)."""
    text, _, gap = doc
    before = start > 0 and needle[0].isdigit() and text[start - 1].isdigit() and gap[start] == "0"
    after = end < len(text) and needle[-1].isdigit() and text[end].isdigit() and gap[end] == "0"
    return before or after


def _find_exact(needle: str, mask: str, doc: _Doc) -> bool:
    """An occurrence of ``needle`` whose protected characters are protected in the document too, and whole numbers."""
    haystack, doc_mask, _ = doc
    start = haystack.find(needle)
    for _ in range(_MAX_EXACT_OCCURRENCES):
        if start < 0:
            return False
        end = start + len(needle)
        if doc_mask[start:end] == mask and not _cuts_a_number(needle, doc, start, end):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _protected_edit(needle: str, mask: str, doc: _Doc, start: int, end: int) -> str | None:
    """What a fuzzy alignment of ``needle`` on ``haystack[start:end]`` would change that is protected, or None."""
    from rapidfuzz.distance import Levenshtein

    region, region_mask = doc[0][start:end], doc[1][start:end]
    ops = list(Levenshtein.opcodes(needle, region))
    while ops and ops[0].tag == "insert":  # document text before the quote: outside the quote, not an edit
        ops.pop(0)
    while ops and ops[-1].tag == "insert":
        ops.pop()
    if not ops:
        return "empty alignment"
    first, last = ops[0].dest_start, ops[-1].dest_end
    if _cuts_a_number(needle, doc, start + first, start + last):
        return "it cuts a number of the document"
    for op in ops:
        i1, i2, j1, j2 = op.src_start, op.src_end, op.dest_start, op.dest_end
        if op.tag == "equal":
            if mask[i1:i2] != region_mask[j1:j2]:
                return f"{needle[i1:i2]!r} is a number or negation on one side only"
            continue
        inside_quote = i1 == i2 and 0 < i1 < len(needle) and mask[i1 - 1 : i1 + 1] == "11"
        inside_doc = j1 == j2 and 0 < j1 < len(region) and region_mask[j1 - 1 : j1 + 1] == "11"
        if "1" in mask[i1:i2] or "1" in region_mask[j1:j2] or inside_quote or inside_doc:
            quoted, there = _run(needle, mask, i1, i2), _run(region, region_mask, j1, j2)
            return f"{quoted!r} in the quote where the document has {there!r}"
    return None


def _run(text: str, mask: str, start: int, end: int) -> str:
    """The edited span widened to the whole protected run around it (the number or word it changes)."""
    while start > 0 and mask[start - 1] == "1":
        start -= 1
    while end < len(text) and mask[end] == "1":
        end += 1
    return text[start:end]


def _check_piece(piece: str, doc: _Doc) -> QuoteCheck:
    needle, mask, _ = _skeleton(piece)
    haystack = doc[0]
    if len(needle) < MIN_QUOTE_CHARS:
        return QuoteCheck(False, "none", reason=f"quote too short to verify ({len(needle)} characters)")
    if _find_exact(needle, mask, doc):
        return QuoteCheck(True, "exact", 100.0)
    if len(needle) > MAX_FUZZY_CHARS or len(needle) > len(haystack):  # fuzzy cost grows with quote × page
        return QuoteCheck(
            False, "none", reason=f"quote not found verbatim ({len(needle):,} characters: too long for a near match)"
        )
    from rapidfuzz import fuzz

    found = fuzz.partial_ratio_alignment(needle, haystack, score_cutoff=MIN_FUZZY)
    if found is not None and (found.dest_end - found.dest_start) >= len(needle) * 0.9:
        changed = _protected_edit(needle, mask, doc, found.dest_start, found.dest_end)
        if changed is None:  # a near match may fix a typo, never a number, a negation or a sign
            return QuoteCheck(True, "fuzzy", found.score)
        return QuoteCheck(
            False, "none", found.score, reason=f"near match changes a number, negation or sign: {changed}"
        )
    best = fuzz.partial_ratio(needle, haystack)
    return QuoteCheck(False, "none", best, reason=f"quote not found in the document (best fuzzy match {best:.0f})")


def verify_quote(quote: str, document: str) -> QuoteCheck:
    """Check that ``quote`` occurs in ``document`` after normalisation (each ``...``-separated piece in turn)."""
    if not quote or not quote.strip():
        return QuoteCheck(False, "none", reason="no quote given")
    doc = _normalized_document(document)
    pieces = [p for p in _ELLIPSIS.split(quote.strip()) if p.strip()]
    checks = [_check_piece(p, doc) for p in pieces] or [
        QuoteCheck(False, "none", reason="no quote given")
    ]
    if len(checks) > 1:  # short elided fragments are fine as long as one long piece proves the quote
        long_enough = [c for c in checks if c.reason is None or not c.reason.startswith("quote too short")]
        checks = long_enough or checks
    failed = next((c for c in checks if not c.found), None)
    if failed is not None:
        return failed
    return QuoteCheck(True, "fuzzy" if any(c.how == "fuzzy" for c in checks) else "exact", min(c.score for c in checks))
