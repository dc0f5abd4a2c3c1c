"""``scorers/answer.py`` as it was before the speed pass of the pre-#33 scorers: the reference the fast code is
compared with in tests/scorers/test_old_scorers_same.py. Frozen."""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from types import MappingProxyType

from tracescore.catalog import Reasons
from tracescore.scorers.answer import ANSWER_CORRECT, ANSWER_EXACT_MATCH, ANSWER_TOKEN_F1
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score, absent, score
from tracescore.trace import Labels, Trace

__all__ = [
    "answer_scorer",
    "exact_match",
    "extract_final_answer",
    "gold_answers",
    "is_refusal",
    "normalize_answer",
    "squad_normalize",
    "token_f1",
]

_DROP_PUNCT = str.maketrans("", "", string.punctuation)
_PUNCT_BYTES = string.punctuation.encode()
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ARTICLE_WORDS = frozenset({"a", "an", "the"})
_NUMBER_WORDS = MappingProxyType(
    {
        w: str(i)
        for i, w in enumerate(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen twenty".split()
        )
    } | {
        "thirty": "30",
        "forty": "40",
        "fifty": "50",
        "sixty": "60",
        "seventy": "70",
        "eighty": "80",
        "ninety": "90",
        "hundred": "100",
    }
)
_REFUSAL = re.compile(
    r"\b(i (do not|don't|cannot|can't|could not|couldn't) (know|find|answer|say|determine|confirm)|"
    r"(unable|not able) to (find|answer|determine|confirm)|no (relevant )?information (about|on|regarding)|"
    r"(is|are) not (mentioned|covered|available|specified)|not enough information|insufficient information|"
    r"i have no (information|data)|there is no (information|mention))\b",
    re.IGNORECASE,
)


def squad_normalize(text: str) -> str:
    """SQuAD v1.1 ``normalize_answer``: lower-case, strip ASCII punctuation and articles, collapse whitespace."""
    return " ".join(_squad_tokens(text))


def _squad_tokens(text: str) -> list[str]:
    """The tokens of ``squad_normalize(text)``: punctuation dropped in one C call (bytes.translate, 5x faster than
    str.translate, when the text is ASCII), not per character; articles dropped by token when every character left
    is a word character (``\\b`` then falls only between tokens), else by the regex."""
    text = text.lower()
    text = text.encode().translate(None, _PUNCT_BYTES).decode() if text.isascii() else text.translate(_DROP_PUNCT)
    tokens = text.split()
    if "".join(tokens).isalnum():  # str.isalnum is the regex's \w here: "_" (the one other \w) was dropped above
        return tokens if _ARTICLE_WORDS.isdisjoint(tokens) else [t for t in tokens if t not in _ARTICLE_WORDS]
    return _ARTICLES.sub(" ", text).split()


@lru_cache(maxsize=256)
def _answer_tokens(text: str) -> tuple[str, ...]:
    """The tokens of ``normalize_answer(text)``; cached: one trace's answer and gold are normalised by several
    scores (answer.correct, token F1, exact match, semantic match)."""
    tokens = _squad_tokens(text)
    return tuple(map(_NUMBER_WORDS.get, tokens, tokens))


def normalize_answer(text: str) -> str:
    """SQuAD normalisation, then simple number words as digits (``twenty`` → ``20``)."""
    return " ".join(_answer_tokens(text))


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1 token F1 over normalised tokens (0 when either side has no token in common)."""
    pred, ref = _answer_tokens(prediction), _answer_tokens(gold)
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> bool:
    """SQuAD v1.1 exact match of the normalised strings."""
    return _answer_tokens(prediction) == _answer_tokens(gold)


def extract_final_answer(answer: str, prefix: str | None) -> str:
    """The text after the last ``prefix`` (case-insensitive, e.g. ``FINAL ANSWER:``), else the whole answer."""
    if not prefix:
        return answer
    idx = answer.lower().rfind(prefix.lower())
    return answer[idx + len(prefix) :].strip() if idx >= 0 else answer


def is_refusal(answer: str) -> bool:
    """True when the answer declines to answer (``I could not find…``, ``not enough information``, …)."""
    return bool(_REFUSAL.search(answer))


def _contains(haystack: str, needle: str) -> bool:
    pattern = _needle(needle)
    return pattern is not None and pattern.search(haystack) is not None


@lru_cache(maxsize=4096)
def _needle(needle: str) -> re.Pattern[str] | None:
    """The compiled whole-word pattern of one normalised ``expected_answer_contains`` entry (None when empty)."""
    norm = normalize_answer(needle)
    return re.compile(rf"(?<!\w){re.escape(norm)}(?!\w)") if norm else None


def answer_scorer(*, final_answer_prefix: str | None = "FINAL ANSWER:") -> Scorer:
    """Scorer factory for the answer stage; ``final_answer_prefix`` picks the answer out of a longer reply."""
    # the outcomes that depend on no text, built once (Scores are frozen; their metadata is only read downstream)
    refused = {True: score(ANSWER_CORRECT, True)}
    refused[False] = score(ANSWER_CORRECT, False, comment="a refusal was expected; the agent answered")
    unlabelled = absent(ANSWER_CORRECT, Reasons.NO_ANSWER_LABEL.text)
    no_gold = (
        absent(ANSWER_TOKEN_F1, Reasons.NO_GOLD_LABEL.text),
        absent(ANSWER_EXACT_MATCH, Reasons.NO_GOLD_LABEL.text),
    )

    all_found = score(ANSWER_CORRECT, True, missing=[])
    prefix = final_answer_prefix.lower() if final_answer_prefix else None
    cut = len(final_answer_prefix) if final_answer_prefix else 0

    def score_answer(trace: Trace) -> Scored:
        labels = trace.labels
        final = answer = trace.answer
        if prefix is not None:  # extract_final_answer, with the prefix lower-cased once
            idx = answer.lower().rfind(prefix)
            if idx >= 0:
                final = answer[idx + cut :].strip()
        if labels.expect_refusal:
            correct = refused[is_refusal(final)]
        elif labels.expected_answer_contains:
            norm = normalize_answer(final)
            empty = [e for e in labels.expected_answer_contains if _needle(e) is None]
            missing = [e for e in labels.expected_answer_contains if not _contains(norm, e)]
            if empty:  # an entry with no word to look for is a broken label, not a wrong answer
                correct = absent(ANSWER_CORRECT, Reasons.EMPTY_EXPECTED_ENTRY.format(entry=empty[0]))
            elif missing:
                correct = score(
                    ANSWER_CORRECT, False, comment=f"missing from the answer: {', '.join(missing)}", missing=missing
                )
            else:
                correct = all_found
        else:
            correct = unlabelled
        gold = labels.gold_answer
        if labels.gold_answers:
            return Scored((correct, *_best_of(final, gold_answers(labels))))
        if gold is None:
            return Scored((correct, *no_gold))
        if not _answer_tokens(gold):  # "", "  ", "the", "!!!": nothing to compare with, not an answer that missed it
            reason = Reasons.EMPTY_GOLD.format(gold=gold)
            return Scored((correct, absent(ANSWER_TOKEN_F1, reason), absent(ANSWER_EXACT_MATCH, reason)))
        f1, exact = score(ANSWER_TOKEN_F1, token_f1(final, gold)), score(ANSWER_EXACT_MATCH, exact_match(final, gold))
        return Scored((correct, f1, exact))

    return score_answer


def gold_answers(labels: Labels) -> list[str]:
    """Every acceptable answer: ``gold_answer`` (when given), then each of ``gold_answers``, in label order."""
    golds = [] if labels.gold_answer is None else [labels.gold_answer]
    return golds + list(labels.gold_answers or ())


def _best_of(final: str, golds: list[str]) -> tuple[Score, Score]:
    """Token F1 and exact match as the SQuAD v1.1 script scores several ground truths: the maximum over them. A gold
    with no word is a broken label, so both are absent naming it; ``gold`` names the best-scoring one."""
    for gold in golds:
        if not _answer_tokens(gold):
            reason = Reasons.EMPTY_GOLD.format(gold=gold)
            return absent(ANSWER_TOKEN_F1, reason), absent(ANSWER_EXACT_MATCH, reason)
    f1s = [token_f1(final, gold) for gold in golds]
    best = max(range(len(golds)), key=f1s.__getitem__)  # the first of the best
    exact = next((gold for gold in golds if exact_match(final, gold)), None)
    return (
        score(ANSWER_TOKEN_F1, f1s[best], gold=golds[best]),
        score(ANSWER_EXACT_MATCH, exact is not None, gold=exact if exact is not None else golds[best]),
    )
