"""``[judge] redact``: personal data replaced with stable placeholders before anything reaches the judge.

Each kind is a finder: a candidate regex, then a check in code (Luhn for cards, ISO 13616 mod-97 for IBANs, the
stdlib ``ipaddress`` parser for IP addresses, digit counts and group shapes for phone numbers). A match becomes
``<kind-N>``, numbered by first appearance in the trace: the same value is the same placeholder everywhere in one
trace (question, answer, labels, every search hit and fetched page, every URL), so a quote the judge copies from the
redacted evidence verifies against it, and an answer equal to its gold answer still is. All finders run on the
original text; where two overlap, the earlier in precedence wins (a team's own patterns, then email, iban, card, ip,
phone): no finder ever sees a placeholder. What each kind matches and misses is in the README ("Redaction").
"""

from __future__ import annotations

import ipaddress
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
from pydantic import BaseModel

from tracescore.session import Earlier
from tracescore.trace import Trace

REDACT_VERSION = "1"
"""Bumped when a built-in kind matches differently: part of the scoring fingerprint (other requests, a new backfill)."""
Span = tuple[int, int, str]  # start, end, the canonical value (same value → same placeholder)
Finder = Callable[[str], Iterator[Span]]
_Out = TypeVar("_Out")
_T = TypeVar("_T")

NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
"""A placeholder kind: the built-in ones and a team's ``name``."""
PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_]{0,31}-[1-9][0-9]*>")
"""What a redaction leaves in the text (``<email-1>``): the request builders leave these unescaped."""

# -- email ----------------------------------------------------------------------------------------------------------
_EMAIL_DOMAIN = re.compile(r"@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w-]|\.[^\W_])")
_EMAIL_LOCAL = re.compile(r"(?<![\w.%+-])[\w%+-]+(?:\.[\w%+-]+)*\Z")  # at most 64 characters (RFC 5321)


def _emails(text: str) -> Iterator[Span]:
    for m in _EMAIL_DOMAIN.finditer(text):  # from each "@" (a fast scan), then back over the local part
        head = text[max(0, m.start() - 64) : m.start()]
        local = _EMAIL_LOCAL.search(head)
        if local is not None:
            start = m.start() - len(head) + local.start()
            yield start, m.end(), text[start : m.end()].casefold()


# Each pattern consumes its first character before looking behind it: a leading look-behind defeats the regex
# engine's fast scan for a first character (3 to 8 times slower on prose; benchmarks/redact.py).

# -- IBAN (ISO 13616): two letters, two check digits, 11–30 more; printed in groups of four or run together -----------
_IBAN = re.compile(
    r"[A-Z](?<![\w-][A-Z])[A-Z]\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)(?![\w-])"
)


def iban_valid(compact: str) -> bool:
    """The ISO 7064 mod-97 check of an IBAN without spaces (letters as 10–35, the first four moved to the end)."""
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _ibans(text: str) -> Iterator[Span]:
    for m in _IBAN.finditer(text):
        candidate = m.group()
        for cut in (candidate, candidate.rsplit(" ", 1)[0]):  # a last short group may be the next word ("… IS")
            compact = cut.replace(" ", "")
            if iban_valid(compact):
                yield m.start(), m.start() + len(cut), compact
                break


# -- payment cards: 13–19 digits, single spaces or hyphens between, an issuer's first digit, the Luhn check ----------
_CARD = re.compile(r"[2-6](?<![\w.,][2-6])(?<!\d[ -][2-6])\d(?:[ -]?\d){11,17}(?![ -]?\d)(?![\w.,]\d)(?!\w)")


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check of a string of digits."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if luhn_valid(digits):
            yield m.start(), m.end(), digits


# -- IP addresses: candidates parsed by the stdlib (no octet over 255, no leading zero, a valid IPv6 form) -----------
_IPV4 = re.compile(r"\d(?<![\w.-]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\.?\d|\.?[^\W\d_]|-)")
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f:]{2,39}(?:\.\d{1,3}){0,3}(?:%\w+)?(?!\w|\.\d)")
_IPV6_NEAR = re.compile(r":[0-9A-Fa-f]{0,4}:")  # every IPv6 address has two colons this close
_HEX_COLON = "0123456789abcdefABCDEF:"
_VERSION_BEFORE = re.compile(r"\b(?:version|versions|ver|release|build|firmware|v)\.?\s*[:=]?\s*$", re.IGNORECASE)


def _ips(text: str) -> Iterator[Span]:
    for m in _IPV4.finditer(text):
        if _VERSION_BEFORE.search(text, max(0, m.start() - 12), m.start()):
            continue  # "version 1.2.3.4", "v1.2.3.4": a version number, left as is
        try:
            yield m.start(), m.end(), str(ipaddress.IPv4Address(m.group()))
        except ValueError:
            continue
    for m in _ipv6_candidates(text):
        candidate = m.group().rstrip(":") if not m.group().endswith("::") else m.group()
        try:
            address = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        if sum(c in "0123456789abcdefABCDEF" for c in candidate) >= 2:  # "::" alone is no address worth a placeholder
            yield m.start(), m.start() + len(candidate), address.compressed


def _ipv6_candidates(text: str) -> Iterator[re.Match[str]]:
    """The IPv6-shaped runs around each close pair of colons (a fast scan), each once."""
    done = 0
    for near in _IPV6_NEAR.finditer(text):
        if near.start() < done:
            continue
        before = text[max(0, near.start() - 40) : near.start()]
        m = _IPV6.match(text, near.start() - len(before) + len(before.rstrip(_HEX_COLON)))
        done = m.end() if m is not None else near.end()
        if m is not None:
            yield m


# -- phone numbers: international (+ or 00) and the common national forms (NANP 3-3-4, trunk 0) ----------------------
_PHONE = re.compile(
    r"[+(\d](?<![\w/=?&#%.,+@-][+(\d])(?<!(?<!tel):[+(\d])"  # not inside a word, a number or a URL; "tel:" is fine
    r"\(?\d{0,5}\)?(?:[ .-]?\(?\d{1,5}\)?){0,6}\d(?!\d|[.-]\d|\w|/|@)"
)
_NANP = re.compile(r"(?:1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}")
_TRUNK = re.compile(r"\(?0\d{1,4}\)?[ .-]?\d[\d .-]*")


def _phone_key(candidate: str) -> str | None:
    """The digits of a phone number (with its ``+``), or None when ``candidate`` is not one of the forms matched."""
    if candidate.count("(") != candidate.count(")") or candidate.count("(") > 1:
        return None
    digits = re.sub(r"\D", "", candidate)
    if candidate.startswith("+"):
        return "+" + digits if 8 <= len(digits) <= 15 and digits[0] != "0" else None
    if candidate.startswith("00"):
        return "+" + digits[2:] if 8 <= len(digits) - 2 <= 15 and digits[2] != "0" else None
    if _NANP.fullmatch(candidate):
        return "+1" + digits[-10:] if digits[-10] in "23456789" and digits[-7] in "23456789" else None
    if _TRUNK.fullmatch(candidate) and 10 <= len(digits) <= 11:
        first = re.match(r"\(?(\d+)", candidate)
        return digits if first is not None and 2 <= len(first.group(1)) <= 5 else None
    return None


def _phones(text: str) -> Iterator[Span]:
    for m in _PHONE.finditer(text):
        start, end = m.start(), m.end()
        for lead, trail in ((0, 0), (1, 0), (0, 1), (1, 1)):  # "(415-555-2671)": the brackets are the sentence's
            if (lead and text[start] != "(") or (trail and text[end - 1] != ")"):
                continue
            key = _phone_key(text[start + lead : end - trail])
            if key is not None:
                yield start + lead, end - trail, key
                break


BUILT_IN: dict[str, Finder] = {"email": _emails, "iban": _ibans, "card": _cards, "ip": _ips, "phone": _phones}
"""The built-in kinds, in precedence order (an email's digits are never a phone number, an IBAN's never a card)."""


# -- a team's own patterns ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Pattern:
    """``{pattern = "…", name = "…"}``: every match of the regex is redacted as ``<name-N>``."""

    regex: re.Pattern[str]

    def __call__(self, text: str) -> Iterator[Span]:
        for m in self.regex.finditer(text):
            if m.end() > m.start():
                yield m.start(), m.end(), m.group()


def custom_pattern(pattern: str, name: str) -> tuple[str, Finder]:
    """A team's pattern as a finder; ValueError naming the fault (not a regex, matches empty text, a bad name)."""
    if not NAME.fullmatch(name):
        raise ValueError(f"name {name!r} must be lower-case letters, digits or _ (at most 32), starting with a letter")
    if name in BUILT_IN:
        raise ValueError(f"name {name!r} is a built-in kind; list it as {name!r} or give your pattern another name")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"pattern {pattern!r} of {name!r} is not a regular expression: {exc}") from exc
    if regex.search("") is not None:
        raise ValueError(f"pattern {pattern!r} of {name!r} matches empty text; it must match at least one character")
    return name, _Pattern(regex)


# -- the redactor -------------------------------------------------------------------------------------------------
@dataclass
class Redaction:
    """One trace's placeholders: (kind, value) → ``<kind-N>``, numbered per kind by first appearance."""

    placeholders: dict[tuple[str, str], str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self.placeholders:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.placeholders[key] = f"<{kind}-{self.counts[kind]}>"
        return self.placeholders[key]


@dataclass(frozen=True)
class Redactor:
    """The configured kinds, in precedence order; picklable (a worker process or a Ray task takes it by value)."""

    finders: tuple[tuple[str, Finder], ...]
    spec: tuple[Any, ...] = ()  # version, the team's patterns in order, the built-in kinds: the scoring fingerprint

    def text(self, text: str, redaction: Redaction) -> str:
        """``text`` with every match replaced by its placeholder in ``redaction`` (shared by one trace's texts)."""
        if not text:
            return text
        spans: list[tuple[int, int, str, str]] = []
        for kind, find in self.finders:
            for start, end, value in find(text):
                if all(end <= s or start >= e for s, e, _, _ in spans):
                    spans.append((start, end, kind, value))
        if not spans:
            return text
        out, done = [], 0
        for start, stop, kind, value in sorted(spans):
            out += [text[done:start], redaction.placeholder(kind, value)]
            done = stop
        out.append(text[done:])
        return "".join(out)

    def trace(self, trace: Trace) -> Trace:
        """A copy of ``trace`` (the pydantic model or the decoder's struct, kept as it is) with every text the judged
        stages read redacted, numbered in reading order: question, steps, answer, citations, labels."""
        red = self._red(Redaction())

        question = red(trace.question)
        steps = [_redact_step(step, red) for step in trace.steps]
        answer = red(trace.answer)
        citations = None if trace.citations is None else [
            _replace(c, url=red(c.url), sentence=red(c.sentence)) for c in trace.citations
        ]  # fmt: skip
        labels = trace.labels
        labels = _replace(labels, gold_answer=red(labels.gold_answer), gold_answers=red(labels.gold_answers),
                          expected_answer_contains=red(labels.expected_answer_contains))  # fmt: skip
        return _replace(trace, question=question, steps=steps, answer=answer, citations=citations, labels=labels)

    def _red(self, redaction: Redaction) -> Callable[[Any], Any]:
        """A value (text, or lists and dicts of them) with its texts redacted, numbered in ``redaction``."""

        def red(value: Any) -> Any:
            if isinstance(value, str):
                return self.text(value, redaction)
            if isinstance(value, list | tuple):
                return type(value)(red(v) for v in value)
            if isinstance(value, dict):
                return {k: red(v) for k, v in value.items()}
            return value

        return red

    def earlier(self, earlier: Earlier) -> Earlier:
        """A copy of the earlier turns' evidence with every text redacted (numbered in its own reading order)."""
        red = self._red(Redaction())

        return Earlier([t.model_copy(update={"steps": [_redact_step(s, red) for s in t.steps]}) for t in earlier.turns])

    def around(self, scorers: Sequence[Callable[[Trace], _Out]]) -> list[Callable[[Trace], _Out]]:
        """``scorers`` each scoring the redacted copy of a trace, redacted once per trace and thread (the judged
        stages of one trace run one after the other on one thread)."""
        last = threading.local()

        def redacted(trace: Trace) -> Trace:
            if getattr(last, "trace", None) is not trace:
                last.trace, last.redacted = trace, self.trace(trace)
            copy: Trace = last.redacted
            return copy

        def wrap(scorer: Callable[[Trace], _Out]) -> Callable[[Trace], _Out]:
            carries = getattr(scorer, "carries", False)  # it takes the session's earlier turns: redacted too

            def score_redacted(trace: Trace, *, earlier: Earlier | None = None) -> _Out:
                if earlier is not None and carries:
                    carrying: Callable[..., _Out] = scorer
                    return carrying(redacted(trace), earlier=self.earlier(earlier))
                return scorer(redacted(trace))

            score_redacted.__name__ = getattr(scorer, "__name__", "scorer")
            return score_redacted

        return [wrap(s) for s in scorers]


def _redact_step(step: Any, red: Callable[[Any], Any]) -> Any:
    if step.kind == "fetch":
        return _replace(step, url=red(step.url), text=red(step.text))
    hits = [_replace(h, url=red(h.url), title=red(h.title), snippet=red(h.snippet), metadata=red(h.metadata))
            for h in step.hits]  # fmt: skip
    return _replace(step, query=red(step.query), hits=hits)


def _replace(value: _T, **changes: Any) -> _T:
    """``value`` (a trace model or the decoder's struct of it) with ``changes``, of the same kind, unvalidated."""
    if isinstance(value, msgspec.Struct):
        return msgspec.structs.replace(value, **changes)
    if isinstance(value, BaseModel):
        return value.model_copy(update=changes)
    raise TypeError(f"not a trace model: {type(value).__name__}")


def redactor(entries: Sequence[str | Any]) -> Redactor | None:
    """The redactor of ``[judge] redact`` (built-in names and ``{pattern, name}`` entries), None when empty."""
    if not entries:
        return None
    names = {e for e in entries if isinstance(e, str)}
    custom = [(e.name, e.pattern) for e in entries if not isinstance(e, str)]
    finders = tuple(custom_pattern(p, n) for n, p in custom) + tuple((n, f) for n, f in BUILT_IN.items() if n in names)
    spec = (REDACT_VERSION, *(list(c) for c in custom), *(n for n in BUILT_IN if n in names))
    return Redactor(finders, spec)
