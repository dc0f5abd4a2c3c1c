"""The shortcuts in answer parsing skip a regex only where it cannot match, so they never change a parse (#14)."""

from __future__ import annotations

import random
import re

from tracescore.scorers import sentences
from tracescore.scorers.sentences import parse_answer, split_sentences

# Every code point, so a character-class shortcut is checked against the regex engine's own classes.
_ALL = "".join(map(chr, range(0x110000)))

# The sentence-end pattern as documented, before it was rewritten to start with a whitespace character.
_DOCUMENTED_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\[\"'(*]*[A-Z0-9])|\n+")


def test_strip_and_isdecimal_agree_with_the_regex_classes_the_line_regexes_use() -> None:
    """``str.strip`` removes exactly ``\\s`` and ``str.isdecimal`` is ``\\d``, so a stripped line's first character
    is the one the anchored line regexes look at."""
    assert re.findall(r"\s", _ALL) == [c for c in _ALL if c.isspace()]
    assert re.findall(r"\d", _ALL) == [c for c in _ALL if c.isdecimal()]


def test_a_reference_heading_can_only_end_with_the_characters_the_shortcut_tries() -> None:
    endings = set(re.findall(r"(?i)[sy]", _ALL)) | {"*", ":"}
    assert all(c in sentences._HEADING_LAST or not c.isascii() for c in endings)
    assert "\u017f" in endings  # the long s ends "SOURCEſ" under IGNORECASE: non-ASCII endings are always tried


def test_a_heading_ending_in_a_non_ascii_case_variant_still_starts_the_reference_list() -> None:
    parsed = parse_answer("Prices rose [1].\nSOURCE\u017f\n[1] Smith, J. (2020). A book.")
    assert parsed.references == {"1": "Smith, J. (2020). A book."}
    without = parse_answer("Prices rose [1].\nSOURCE\n[1] Smith, J. (2020). A book.")
    assert without.references == {} and without.unresolved_markers == ["1"]  # the same lines, not a heading


def _fuzz_texts(count: int) -> list[str]:
    atoms = [
        "A", "b", "Word", " ", "  ", "\n", "\n\n", "\r\n", "\t", "\u00a0", "\u2028", "\x1c", ".", "!", "?", ",", "[",
        "]", "(", ")", "[1]", "[2, 3]", '"', "'", "*", "9", "0", "\u0663", "é", "x.",
    ]  # fmt: skip
    rng = random.Random(3)
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def test_the_rewritten_sentence_end_splits_exactly_like_the_documented_pattern() -> None:
    texts = _fuzz_texts(20_000)
    assert [sentences._SENTENCE_END.split(t) for t in texts] == [_DOCUMENTED_SENTENCE_END.split(t) for t in texts]
    assert sentences._SENTENCE_END.split("One. Two?\n\nthree. four") == ["One.", "Two?", "three. four"]


def test_a_piece_without_a_letter_is_not_a_sentence_but_its_markers_join_the_one_before() -> None:
    """Markers hold no letter, so whether a piece has a letter is read on the piece itself."""
    assert split_sentences("Rain fell.\n[2] [3]\nSnow [1] fell.") == ["Rain fell [2] [3]", "Snow [1] fell."]
    assert split_sentences("Rain fell.\n12 [3]\nSnow.") == ["Rain fell. 12 [3]", "Snow."]
    assert split_sentences("Rain fell [1]. 12. Snow [3].") == ["Rain fell [1].", "Snow [3]."]  # "12." dropped
