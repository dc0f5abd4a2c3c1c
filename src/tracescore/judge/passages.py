"""Passage selection: the few chunks of a stored page that matter for the claims, instead of the whole page.

A page is split into sentence/paragraph chunks; chunks are ranked per claim with Okapi BM25 (stemmed, stop words
dropped); each claim keeps its best chunks, and the rest of a token budget (a share of the page) is filled by the
best remaining scores across claims. The chunks go to the judge in page order, each with its index.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

# Named defaults: a short page goes whole; a long one is cut to a share of its tokens.
WHOLE_PAGE_TOKENS = 200
MAX_SHARE = 0.15
PER_CLAIM_TOP = 3
NEIGHBOURS = 0

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])")
_STOP = frozenset(
    "a an and are as at be been but by for from had has have he her his i in into is it its of on or our she so "
    "than that the their them then there these they this those to was we were which who will with you your not "
    "also can may more most other some such only over after before about".split()
)


def approx_tokens(text: str) -> int:
    """A tokenizer-free token count (words and punctuation marks), the same for every side of a comparison."""
    return len(_TOKEN.findall(text))


def _stem(word: str) -> str:
    for suffix in ("ing", "edly", "ed", "ies", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def terms(text: str) -> list[str]:
    """Lower-cased, lightly stemmed content words; numbers keep their digits (``8,848.86`` → ``8848.86``)."""
    out = []
    for word in _WORD.findall(text.lower()):
        word = word.replace(",", "") if word[0].isdigit() else word
        if word not in _STOP:
            out.append(_stem(word))
    return out


def chunk_text(text: str, *, max_chars: int = 600) -> list[str]:
    """Split a page into sentence chunks (paragraphs first, then sentences; over-long ones cut at ``max_chars``)."""
    chunks: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        for sentence in _SENTENCE.split(paragraph):
            sentence = sentence.strip()
            while len(sentence) > max_chars:
                cut = sentence.rfind(" ", 0, max_chars)
                cut = cut if cut > max_chars // 2 else max_chars
                chunks.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence:
                chunks.append(sentence)
    return chunks


class BM25:
    """Okapi BM25 over a fixed list of chunks (k1=1.2, b=0.75)."""

    def __init__(self, chunks: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(terms(c)) for c in chunks]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> list[float]:
        """BM25 score of every chunk for ``query`` (query terms counted once)."""
        q = set(terms(query))
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg) if self.avg else self.k1
            out.append(sum(self.idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in q if t in doc))
        return out


def _ranking(scores: Sequence[float]) -> list[int]:
    """Chunk indices with a positive score, best first."""
    return sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])


@dataclass(frozen=True)
class Passage:
    """One selected chunk: its index in the page's chunk list and its text exactly as stored."""

    index: int
    text: str


def select_passages(
    chunks: Sequence[str],
    claims: Sequence[str],
    *,
    max_share: float = MAX_SHARE,
    whole_page_tokens: int = WHOLE_PAGE_TOKENS,
    per_claim_top: int = PER_CLAIM_TOP,
    neighbours: int = NEIGHBOURS,
) -> list[Passage]:
    """The chunks to send for ``claims``: all of a short page, else each claim's best plus a shared budget.

    The budget is ``max_share`` of the page's tokens (never less than ``whole_page_tokens``); each claim first gets
    its ``per_claim_top`` best-scoring chunks (and ``neighbours`` chunks either side), then the best remaining
    chunk scores across claims fill what is left. Chunks with no term in common with any claim are never sent.
    """
    sizes = [approx_tokens(c) for c in chunks]
    page = sum(sizes)
    if page <= whole_page_tokens or not claims:
        return [Passage(i, c) for i, c in enumerate(chunks)]
    budget = max(int(page * max_share), whole_page_tokens)
    index = BM25(chunks)
    per_claim = [index.scores(claim) for claim in claims]
    chosen: set[int] = set()
    used = 0

    def take(i: int) -> bool:
        nonlocal used
        if i in chosen or not 0 <= i < len(chunks):
            return True
        if used + sizes[i] > budget:
            return False
        chosen.add(i)
        used += sizes[i]
        return True

    rankings = [_ranking(sc) for sc in per_claim]
    for rank in range(per_claim_top):  # round-robin, so one long claim cannot starve the others
        for ranking in rankings:
            if rank < len(ranking):
                i = ranking[rank]
                take(i)
                for d in range(1, neighbours + 1):
                    take(i - d)
                    take(i + d)
    best = sorted(((max(sc[i] for sc in per_claim), i) for i in range(len(chunks))), key=lambda p: (-p[0], p[1]))
    for value, i in best:
        if value <= 0:
            break
        take(i)
    return [Passage(i, chunks[i]) for i in sorted(chosen)]
