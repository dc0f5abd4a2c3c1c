"""``scorers/stale.py``'s no-year check and its trace walk (the hits' metadata looked for in C, each fetch's keys
worked out once) give what the old ones gave: the check is compared with the page-long pass it replaced and with the
regex, and ``page_date`` and the scorer with ``old_stale.py``, on pages of plain words as long as the benchmark's with
and without a date in every form the module reads, and on traces whose hits carry metadata now and then."""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.scorers import old_stale
from tracescore.adapters.jsonl import trace_from_json
from tracescore.scorers import stale
from tracescore.trace import Trace

_PAGE_WORDS = tuple(
    "policy return refund window days shipping express warranty claim defect order price match retailer"
    " delivery item package original payment method business support contact number photo".split()
)
_SEPARATORS = (" ", "  ", "\n", "\t", ".", ",", "-", "/", ":", "a", "x", " a ", "", "|", "(", ")")
# a date in every form the module docstring lists, with the labels and markup it is read after
_FORMS = ("2026-05-17", "2026-05-17T10:00:00Z", "2026-05-17 10:00:00+02:00", "2026/05/17", "2026-5-7",
          "May 17, 2026", "Sep. 3, 2024", "sept 3 2024", "17 May 2026", "3rd June 2025", "1st Jan. 2020",
          "Sun, 17 May 2026 10:00:00 GMT", "Tuesday, 2 Jan 2024", "2026-02-30", "05/17/2026", "1999",
          "2026")  # fmt: skip
_LEADS = ("Published", "Updated", "Last updated", "Last modified", "Modified", "Posted", "Date published",
          "Date modified", "last edited", "Published on", "Updated:", "Posted -", "Modified —", "PUBLISHED",
          "\nBy Jane Doe | ", "  by Ann O'Neil, ", "By Jo · Updated ", '<time class="x" datetime="', "datePublished: ",
          '"dateModified":"', 'article:published_time" content="', "published2026", "unpublished ", "")  # fmt: skip


def _old_no_year(text: str) -> bool:
    """The check before: every character mapped, then "0000" searched for in the page-long copy."""
    return text.isascii() and b"0000" not in text.encode("ascii").translate(stale._DIGITS_ONLY)


def _words(rng: random.Random, size: int) -> str:
    out, n = [], 0
    while n < size:
        sentence = " ".join(rng.choices(_PAGE_WORDS, k=12)).capitalize() + f" {rng.randint(1, 90)} days."
        out.append(sentence)
        n += len(sentence) + 1
    return " ".join(out)[:size]


def _digit_runs(rng: random.Random) -> str:
    """Digits in runs of one to five, apart by what the check drops (letters, spaces) or keeps (the rest)."""
    return "".join(str(rng.randint(0, 10 ** rng.randint(1, 5) - 1)) + rng.choice(_SEPARATORS)
                   for _ in range(rng.randint(0, 12)))  # fmt: skip


def _dated_page(rng: random.Random) -> str:
    """A page of plain words (up to the benchmark's 15 KB) with none, one or a few labelled dates of any form."""
    page = _words(rng, rng.choice((0, 50, 600, 3000, 15_000)))
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        at = rng.randint(0, len(page))
        date = rng.choice(_LEADS) + rng.choice(_FORMS) + rng.choice(_SEPARATORS)
        page = f"{page[:at]} {date}{page[at:]}"
    return page


def test_the_no_year_check_is_sound_and_says_no_only_where_the_old_one_did() -> None:
    rng = random.Random(41)
    pages = [_digit_runs(rng) for _ in range(6000)] + [_words(rng, rng.randint(0, 2000)) for _ in range(500)]
    pages += [_dated_page(rng) for _ in range(500)] + ["", " ", "0000", "000 0", "12a34", "1.234", "12 34", "1\n234"]
    for page in pages:
        if stale._no_year(page):
            assert _old_no_year(page) and not re.search(r"\d{4}", page), repr(page)
        assert stale.page_date(page) == old_stale.page_date(page), repr(page)
    said_no = sum(map(stale._no_year, pages))
    assert said_no > 1500  # the benchmark's pages and many digit strings are ruled out
    assert stale._no_year("12.34 5,67 8-9/10") and not stale._no_year("12 34") and not stale._no_year("12x34")


def test_pages_with_and_without_a_date_in_every_form_date_as_before() -> None:
    rng = random.Random(42)
    pages = [_dated_page(rng) for _ in range(2500)]
    pages += [lead + form for lead in _LEADS for form in _FORMS]
    pages += [_words(rng, 15_000), _words(rng, 15_000).replace(" days.", " days. Published 2026-05-17")]
    dated = 0
    for page in pages:
        got = stale.page_date(page)
        assert got == old_stale.page_date(page), repr(page[:300])
        dated += got is not None
    assert dated > 500


def _trace(rng: random.Random, i: int) -> dict[str, Any]:
    urls = [f"https://site{j}.example/p/{i}/{j}" for j in range(6)]
    hits = [{"url": rng.choice(urls), "doc_id": f"doc-{rng.randint(0, 3)}",
             "metadata": {rng.choice(("published", "Date-Modified", "x")): rng.choice(_FORMS)}
             if rng.random() < 0.1 else {}} for _ in range(rng.randint(0, 12))]  # fmt: skip
    fetches = [{"kind": "fetch", "url": rng.choice(urls), "doc_id": rng.choice((None, "doc-1", "doc-2")),
                "text": _dated_page(rng), "status": rng.choice((200, 404, None)),
                "metadata": {"updated": rng.choice(_FORMS)} if rng.random() < 0.1 else {}}
               for _ in range(rng.randint(0, 4))]  # fmt: skip
    cited = rng.sample(urls, rng.randint(0, 4))
    answer = " ".join(f"Claim {j} holds [{j + 1}]." for j in range(len(cited))) or "No citation here."
    answer += "\n\nSources:\n" + "\n".join(f"[{j + 1}] {u}" for j, u in enumerate(cited))
    trace: dict[str, Any] = {"id": f"f{i}", "question": "q", "answer": answer,
                             "steps": [{"kind": "search", "query": "q", "hits": hits}, *fetches]}  # fmt: skip
    if rng.random() < 0.3:
        trace["citations"] = [{"doc_id": rng.choice(("doc-1", "doc-2", "doc-9"))}]
    if rng.random() < 0.8:
        trace["timestamp"] = (datetime(2026, 6, 1, tzinfo=UTC) - timedelta(days=rng.randint(0, 2000))).isoformat()
    return trace


def test_traces_of_such_pages_score_as_before_in_both_trace_forms() -> None:
    rng = random.Random(43)
    month = timedelta(days=30)
    pairs = [(stale.stale_scorer(), old_stale.stale_scorer()),
             (stale.stale_scorer(stale_after=month), old_stale.stale_scorer(stale_after=month))]  # fmt: skip
    reasons: set[str | None] = set()
    for i in range(1500):
        raw = json.dumps(_trace(rng, i))
        for trace in (trace_from_json(raw), Trace.model_validate_json(raw)) if i % 4 == 0 else (trace_from_json(raw),):
            for new, old in pairs:
                got, want = list(new(trace)), list(old(trace))
                assert got == want, raw[:500]
                reasons.add(got[0].reason and got[0].reason[:20])
    assert None in reasons and len(reasons) >= 4  # values and several absences seen
