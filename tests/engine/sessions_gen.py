"""A generator of held-out-style conversations for the tests of evidence carried across turns, and their reference
computed plainly from what it generated (sets of addresses and numbers per turn), never by tracescore.

Each session has 3 or 4 turns, one minute apart; each turn searches (three hits of its own pages, one of them a hit
it leaves for a later turn to fetch), fetches two of them (the second fails with a 404 in some turns) and answers
with one sentence per cited page, stating the number that page states. What a turn cites is drawn from: its own
fetched page, a page fetched in an earlier turn, a page only listed (a hit) in an earlier turn, a page listed before
but fetched only in a later turn, a page that appears only in a later turn, a page of another session, and its own
failed fetch. The file order is shuffled: only the timestamps say which turn came first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@dataclass
class Page:
    url: str
    number: int
    text: str


@dataclass
class Turn:
    session: str
    index: int  # 1-based
    trace_id: str
    hits: list[Page] = field(default_factory=list)
    fetched: list[Page] = field(default_factory=list)  # successful fetches
    failed: list[Page] = field(default_factory=list)  # fetches that failed (404)
    cited: list[tuple[str, Page]] = field(default_factory=list)  # (category, page)

    @property
    def timestamp(self) -> datetime:
        return START + timedelta(hours=int(self.session[1:]), minutes=self.index)


def generate(seed: int = 48, sessions: int = 12) -> tuple[list[Turn], list[dict[str, Any]]]:
    """(turns, trace dicts in a shuffled file order)."""
    rng = random.Random(seed)
    numbers = iter(rng.sample(range(10_000, 99_999), 2_000))
    turns: list[Turn] = []
    by_session: dict[str, list[Turn]] = {}
    for s in range(sessions):
        sid = f"s{s}"
        count = rng.choice((3, 4))
        session_turns = []
        for t in range(1, count + 1):
            turn = Turn(sid, t, f"{sid}-turn{t}")
            pages = [_page(sid, t, j, next(numbers)) for j in range(1, 4)]
            turn.hits = pages
            turn.fetched = [pages[0]]
            if rng.random() < 0.4:
                turn.failed = [pages[1]]
            else:
                turn.fetched.append(pages[1])
            session_turns.append(turn)  # pages[2]: listed, never fetched in this turn
        by_session[sid] = session_turns
        turns += session_turns
    for turn in turns:
        _cite(turn, by_session, rng)
    dicts = [_trace(turn) for turn in turns]
    rng.shuffle(dicts)
    return turns, dicts


def _page(session: str, turn: int, j: int, number: int) -> Page:
    url = f"https://{session}.example.org/turn{'abcd'[turn - 1]}/page{'xyz'[j - 1]}"
    return Page(url, number, f"This page on the topic reports a total of {number} visitors over the season.")


def _cite(turn: Turn, by_session: dict[str, list[Turn]], rng: random.Random) -> None:
    mine = by_session[turn.session]
    before, after = mine[: turn.index - 1], mine[turn.index :]
    others = [t for sid, ts in by_session.items() if sid != turn.session for t in ts]
    turn.cited.append(("own", turn.fetched[0]))
    if before:
        turn.cited.append(("earlier_fetch", rng.choice(before).fetched[0]))
        turn.cited.append(("earlier_hit", rng.choice(before).hits[2]))
    if after:
        # listed here (a hit of this turn), fetched only by a later turn: the later turn fetches it
        listed = turn.hits[2]
        later = rng.choice(after)
        later.fetched.append(listed)
        turn.cited.append(("fetched_later", listed))
        turn.cited.append(("only_later", rng.choice(after).hits[0]))
    turn.cited.append(("other_session", rng.choice(others).fetched[0]))
    if turn.failed:
        turn.cited.append(("own_failed", turn.failed[0]))
    rng.shuffle(turn.cited)


def _trace(turn: Turn) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        {"kind": "search", "query": "the topic", "hits": [{"url": p.url, "title": "A page", "snippet": "About it."}
                                                          for p in turn.hits]},  # fmt: skip
    ]
    steps += [{"kind": "fetch", "url": p.url, "text": p.text, "status": 200} for p in turn.fetched]
    steps += [{"kind": "fetch", "url": p.url, "text": "", "status": 404} for p in turn.failed]
    sentences = [f"The season total was {page.number} visitors [{i}]." for i, (_, page) in enumerate(turn.cited, 1)]
    refs = [f"[{i}] {page.url}" for i, (_, page) in enumerate(turn.cited, 1)]
    return {
        "id": turn.trace_id,
        "session_id": turn.session,
        "timestamp": turn.timestamp.isoformat(),
        "question": "What does the topic say?",
        "steps": steps,
        "answer": " ".join(sentences) + "\n\n" + "\n".join(refs),
    }


# -- the reference --------------------------------------------------------------------------------------------
@dataclass
class Expected:
    unfetched: set[str]
    fabricated: set[str]
    cited: set[str]
    numbers: set[int]
    unsupported_numbers: set[int]


def reference(turns: list[Turn], *, carry: bool = True) -> dict[str, Expected]:
    """Per trace id: which cited pages are unfetched and fabricated, which stated numbers are unsupported. A turn's
    evidence: its hits and fetches (a failed fetch is seen, not read) and, with ``carry``, the hits and successful
    fetches of the turns of its session with an earlier timestamp."""
    out = {}
    for turn in turns:
        earlier = [t for t in turns if carry and t.session == turn.session and t.timestamp < turn.timestamp]
        fetched = {p.url for t in [turn, *earlier] for p in t.fetched}
        seen = fetched | {p.url for t in [turn, *earlier] for p in t.hits} | {p.url for p in turn.failed}
        read = {p.number for t in [turn, *earlier] for p in t.fetched}
        cited = {page.url for _, page in turn.cited}
        numbers = {page.number for _, page in turn.cited}
        out[turn.trace_id] = Expected(
            unfetched={u for u in cited if u not in fetched},
            fabricated={u for u in cited if u not in seen},
            cited=cited,
            numbers=numbers,
            unsupported_numbers={n for n in numbers if n not in read},
        )
    return out
