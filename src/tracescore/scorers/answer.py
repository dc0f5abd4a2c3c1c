"""Answer stage: is the final answer right, against the labels?

``answer.correct`` (every ``expected_answer_contains`` present after normalisation, or a refusal when one is
expected), ``answer.token_f1`` and ``answer.exact_match`` with SQuAD v1.1 normalisation plus number words as digits;
with ``gold_answers``, the best over every gold answer (the SQuAD v1.1 script's maximum over ground truths).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from types import MappingProxyType

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score, absent, score
from tracescore.trace import Labels, Trace

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
_SHARED_F1S = 1_000  # token F1 values whose Score a scorer keeps (gold answers are short: few distinct values)
_FEW_TOKENS = 8  # gold answers up to this many tokens have their overlap with the answer counted by tuple.count
_NUMBER_WORD = dict(_NUMBER_WORDS).get  # a dict's own get: a mapping proxy's is a Python-level call per token
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
    return tuple(map(_NUMBER_WORD, tokens, tokens))


def normalize_answer(text: str) -> str:
    """SQuAD normalisation, then simple number words as digits (``twenty`` → ``20``)."""
    return " ".join(_answer_tokens(text))


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD v1.1 token F1 over normalised tokens (0 when either side has no token in common)."""
    pred, ref = _answer_tokens(prediction), _answer_tokens(gold)
    if len(ref) <= _FEW_TOKENS:  # the common count without two Counters: tuple.count in C, per distinct gold token
        same = sum([min(pred.count(t), ref.count(t)) for t in set(ref)])
    else:
        same = sum((Counter(pred) & Counter(ref)).values())
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
    found = _needle_of(needle)
    if found is None:
        return False
    # a pattern that starts with a look-behind is tried at every position; a match starts where its text does, and
    # the look-behind still sees the characters before ``pos``, so the search can start at the text's first place
    at = haystack.find(found[0])
    return at >= 0 and found[1].search(haystack, at) is not None


@lru_cache(maxsize=4096)
def _needle_of(needle: str) -> tuple[str, re.Pattern[str]] | None:
    """(normalised text, whole-word pattern) of one ``expected_answer_contains`` entry (None when it has no word)."""
    norm = normalize_answer(needle)
    return (norm, re.compile(rf"(?<!\w){re.escape(norm)}(?!\w)")) if norm else None


ANSWER_CORRECT = "answer.correct"
ANSWER_TOKEN_F1 = "answer.token_f1"
ANSWER_EXACT_MATCH = "answer.exact_match"
_WHY = Reasons
_GOLD = reasons(_WHY.NO_GOLD_LABEL, _WHY.EMPTY_GOLD)
SPECS = (
    ScoreSpec(ANSWER_CORRECT, "boolean", "higher", absent=reasons(_WHY.NO_ANSWER_LABEL, _WHY.EMPTY_EXPECTED_ENTRY),
              definition="expected_answer_contains all present (or refusal when expected)"),
    ScoreSpec(ANSWER_TOKEN_F1, "numeric", "higher", 0, 1, absent=_GOLD,
              definition="SQuAD-style normalised token F1 against gold_answer"),
    ScoreSpec(ANSWER_EXACT_MATCH, "boolean", "higher", absent=_GOLD,
              definition="SQuAD-style normalised exact match against gold_answer"),
)  # fmt: skip


@scorer(stage="answer", version="answer-1", scores=SPECS)
def answer_scorer(*, final_answer_prefix: str | None = "FINAL ANSWER:") -> Scorer:
    """Scorer factory for the answer stage; ``final_answer_prefix`` picks the answer out of a longer reply: only the
    text after its last occurrence is scored ('' or None: the whole reply)."""
    # the outcomes that depend on no text, built once (Scores are frozen; their metadata is only read downstream)
    refused = {True: score(ANSWER_CORRECT, True)}
    refused[False] = score(ANSWER_CORRECT, False, comment="a refusal was expected; the agent answered")
    unlabelled = absent(ANSWER_CORRECT, Reasons.NO_ANSWER_LABEL.text)
    no_gold = (
        absent(ANSWER_TOKEN_F1, Reasons.NO_GOLD_LABEL.text),
        absent(ANSWER_EXACT_MATCH, Reasons.NO_GOLD_LABEL.text),
    )

    all_found = score(ANSWER_CORRECT, True, missing=[])
    exacts = {b: score(ANSWER_EXACT_MATCH, b) for b in (True, False)}
    f1s: dict[float, Score] = {}  # token F1 scores without metadata by value, built once each (up to _SHARED_F1S)
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
            missing = [e for e in labels.expected_answer_contains if not _contains(norm, e)]
            # an entry with no word is never contained: the empty ones are among the missing, in label order
            empty = [e for e in missing if _needle_of(e) is None] if missing else missing
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
        f1 = token_f1(final, gold)
        shared = f1s.get(f1)
        if shared is None:
            shared = score(ANSWER_TOKEN_F1, f1)
            if len(f1s) < _SHARED_F1S:
                f1s[f1] = shared
        return Scored((correct, shared, exacts[exact_match(final, gold)]))

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
