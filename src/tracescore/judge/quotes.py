"""Quote verification in code: is the judge's verbatim quote really in the document it names?

Both sides are normalised (Unicode NFKC, case, curly quotes, dashes, ellipses, all whitespace removed) before an
exact substring test; failing that, a fuzzy match within a tight bound (RapidFuzz partial ratio ≥ ``MIN_FUZZY``) is
accepted only when every edit it needs is a small typo inside a word. A match, exact or fuzzy, may never change, add
or drop a digit, a number, a negation (``not``, ``no``, ``never``, ``n't``, ``without``, ``none``, …), a sign or a
unit symbol (``%``, ``$``, ``€``, ``°``, …): those characters are *protected* on both sides, an edit that touches one
rejects the quote, and a protected character may only be matched to a protected one (``not`` ≠ the start of
``noted``). Nor may a near match edit the start of a word: that is where a unit or scale changes (``5 mg`` → ``5 g``,
``$5 million`` → ``$5 billion``) and where a prefix flips a meaning (``effective`` → ``ineffective``). A quote
shorter than ``MIN_QUOTE_CHARS`` proves nothing and is not accepted. A quote with ``...`` elisions is verified piece by
piece, in order: each piece after the one before it, a short piece found verbatim (never skipped), and at least one
piece long enough to prove the quote.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

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
# protected: a negation word, n't, a digit, a sign before a digit, a separator between digits, a unit symbol
_PROTECTED = re.compile(
    r"n't\b|\b(?:" + "|".join(n for n in NEGATIONS if n != "n't") + r")\b|\d+|[-+](?=\s?\d)|(?<=\d)[.,:/](?=\d)"
    r"|[%\u2030\u00b0$\u20ac\u00a3\u00a5]"
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


def _cuts_a_word(needle: str, doc: _Doc, start: int, end: int) -> bool:
    """True when the match starts or ends inside a longer word or number of the document (``193`` in ``1934``,
    ``effective`` in ``ineffective``): a letter or digit on both sides and no whitespace between."""
    text, _, gap = doc
    before = start > 0 and needle[0].isalnum() and text[start - 1].isalnum() and gap[start] == "0"
    after = end < len(text) and needle[-1].isalnum() and text[end].isalnum() and gap[end] == "0"
    return before or after


def _find_exact(needle: str, mask: str, doc: _Doc, after: int = 0) -> int:
    """The end of the first occurrence of ``needle`` from ``after`` whose protected characters are protected in the
    document too, and whole numbers; -1 if none."""
    haystack, doc_mask, _ = doc
    start = haystack.find(needle, after)
    for _ in range(_MAX_EXACT_OCCURRENCES):
        if start < 0:
            return -1
        end = start + len(needle)
        if doc_mask[start:end] == mask and not _cuts_a_word(needle, doc, start, end):
            return end
        start = haystack.find(needle, start + 1)
    return -1


def _protected_edit(needle: str, mask: str, gap: str, doc: _Doc, start: int, end: int) -> str | None:
    """What a fuzzy alignment of ``needle`` on ``haystack[start:end]`` would change that is protected or starts a
    word (``gap``: the quote's word starts, its first character one), or None."""
    from rapidfuzz.distance import Levenshtein

    region, region_mask, region_gap = doc[0][start:end], doc[1][start:end], doc[2][start:end]
    ops = list(Levenshtein.opcodes(needle, region))
    while ops and ops[0].tag == "insert":  # document text before the quote: outside the quote, not an edit
        ops.pop(0)
    while ops and ops[-1].tag == "insert":
        ops.pop()
    if not ops:
        return "empty alignment"
    first, last = ops[0].dest_start, ops[-1].dest_end
    if _cuts_a_word(needle, doc, start + first, start + last):
        return "it starts or ends inside a word or number of the document"
    starts, region_starts = _word_starts(needle, gap), _word_starts(region, region_gap)
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
        # the start of a word on either side (a prefix: "ineffective", a scale: "billion"), or any letter of the word
        # after a number (its unit or scale: "5 mg" -> "5 g", "5 m")
        in_quote, in_doc = i1 < i2, j1 < j2 or j1 < len(region)
        if (
            "1" in starts[i1:i2]
            or "1" in region_starts[j1:j2]
            or (in_quote and _after_number(needle, starts, i1))
            or (in_doc and _after_number(region, region_starts, min(j1, len(region) - 1)))
        ):
            quoted, there = _word(needle, starts, min(i1, len(needle) - 1)), _word(region, region_starts, j1)
            return f"{quoted!r} in the quote where the document has {there!r}"
    return None


def _word_starts(text: str, gap: str) -> str:
    """``"1"`` where a word starts: after whitespace (``gap``), or a letter or digit after punctuation."""
    return "".join(
        "1" if i == 0 or gap[i] == "1" or (c.isalnum() and not text[i - 1].isalnum()) else "0"
        for i, c in enumerate(text)
    )


def _after_number(text: str, starts: str, at: int) -> bool:
    """Whether the word holding position ``at`` follows a number (``mg`` in ``5 mg``) or holds one before ``at``."""
    start = at
    while start > 0 and starts[start] != "1":
        start -= 1
    return (start > 0 and text[start - 1].isdigit()) or any(c.isdigit() for c in text[start:at])


def _word(text: str, starts: str, at: int) -> str:
    """The word of ``text`` (without whitespace; ``starts`` marks word starts) around position ``at``."""
    if not text:
        return ""
    at = min(at, len(text) - 1)
    start = at
    while start > 0 and starts[start] != "1":
        start -= 1
    end = at + 1
    while end < len(text) and starts[end] != "1":
        end += 1
    return text[start:end]


def _snap(needle: str, doc: _Doc, start: int, end: int) -> tuple[int, int]:
    """The fuzzy match's span moved to the nearest word edges of the document that hold the quote's first and last
    characters (the aligner's window is as long as the quote, so a quote a letter shorter or longer than the page's
    text starts or ends a letter off, and its first word would read as edited)."""
    text, _, gap = doc
    reach = len(needle) // 25 + 2

    def edge(p: int) -> bool:
        return p <= 0 or p >= len(text) or gap[p] == "1" or not (text[p].isalnum() and text[p - 1].isalnum())

    heads = [p for p in range(max(0, start - reach), min(len(text), start + reach + 1))
             if text[p] == needle[0] and edge(p)]  # fmt: skip
    tails = [q for q in range(max(1, end - reach), min(len(text), end + reach) + 1)
             if text[q - 1] == needle[-1] and edge(q)]  # fmt: skip
    head = min(heads, key=lambda p: abs(p - start), default=start)
    tail = min(tails, key=lambda q: abs(q - end), default=end)
    return (head, tail) if head < tail else (start, end)


def _run(text: str, mask: str, start: int, end: int) -> str:
    """The edited span widened to the whole protected run around it (the number or word it changes)."""
    while start > 0 and mask[start - 1] == "1":
        start -= 1
    while end < len(text) and mask[end] == "1":
        end += 1
    return text[start:end]


def _check_piece(piece: str, doc: _Doc, after: int, elided: bool) -> tuple[QuoteCheck, int, bool]:
    """One piece of a quote, looked for from ``after``: its check, where its match ends, and whether it was too short
    to prove anything (an elided short piece must still be there verbatim)."""
    needle, mask, gap = _skeleton(piece)
    haystack = doc[0]
    short = len(needle) < MIN_QUOTE_CHARS
    if short and not elided:
        return QuoteCheck(False, "none", reason=f"quote too short to verify ({len(needle)} characters)"), -1, True
    end = _find_exact(needle, mask, doc, after)
    if end >= 0:
        return QuoteCheck(True, "exact", 100.0), end, short
    if short:
        reason = f"elided piece {piece.strip()!r} not found verbatim after the piece before it"
        return QuoteCheck(False, "none", reason=reason), -1, True
    if len(needle) > MAX_FUZZY_CHARS or len(needle) > len(haystack) - after:  # fuzzy cost grows with quote × page
        reason = f"quote not found verbatim ({len(needle):,} characters: too long for a near match)"
        return QuoteCheck(False, "none", reason=reason), -1, False
    from rapidfuzz import fuzz

    rest = haystack[after:] if after else haystack
    found = fuzz.partial_ratio_alignment(needle, rest, score_cutoff=MIN_FUZZY)
    if found is not None and (found.dest_end - found.dest_start) >= len(needle) * 0.9:
        start, end = _snap(needle, doc, after + found.dest_start, after + found.dest_end)
        changed = _protected_edit(needle, mask, "1" + gap[1:], doc, start, end)
        if changed is None:  # a near match may fix a typo inside a word, never a number, negation, sign or unit
            return QuoteCheck(True, "fuzzy", found.score), end, False
        reason = f"near match changes a number, negation, sign, unit or word: {changed}"
        return QuoteCheck(False, "none", found.score, reason=reason), -1, False
    best = fuzz.partial_ratio(needle, rest)
    where = " after the piece before it" if after else ""
    reason = f"quote not found in the document{where} (best fuzzy match {best:.0f})"
    return QuoteCheck(False, "none", best, reason=reason), -1, False


def verify_quote(quote: str, document: str) -> QuoteCheck:
    """Check that ``quote`` occurs in ``document`` after normalisation (each ``...``-separated piece in turn, in
    order; at least one piece long enough to prove it)."""
    if not quote or not quote.strip():
        return QuoteCheck(False, "none", reason="no quote given")
    doc = _normalized_document(document)
    pieces = [p for p in _ELLIPSIS.split(quote.strip()) if p.strip()]
    if not pieces:
        return QuoteCheck(False, "none", reason="no quote given")
    checks, after, proven = [], 0, False
    for piece in pieces:
        check, after, short = _check_piece(piece, doc, after, len(pieces) > 1)
        if not check.found:
            return check
        checks.append(check)
        proven = proven or not short
    if not proven:
        length = sum(len(normalize_quote_text(p)) for p in pieces)
        return QuoteCheck(False, "none", reason=f"quote too short to verify ({length} characters)")
    return QuoteCheck(True, "fuzzy" if any(c.how == "fuzzy" for c in checks) else "exact", min(c.score for c in checks))
