"""``[judge] redact``: what each built-in kind matches and what it leaves alone (the README's "Redaction" table), the
placeholders, a team's own patterns, and the configuration's checks."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tests.judge.pii import KINDS, samples
from tracescore.config import Config, fingerprint, load_config, parse_sections
from tracescore.errors import ConfigError
from tracescore.judge.redact import BUILT_IN, Redaction, iban_valid, luhn_valid, redactor
from tracescore.scorers.grounding_call import escape_tags
from tracescore.trace import Trace

EVERY = redactor(list(BUILT_IN))
assert EVERY is not None


def _config(redact: list[object]) -> Config:
    return Config(parse_sections({"judge": {"redact": redact}}))


def _red(text: str, kinds: list[str] | None = None) -> str:
    chosen = redactor(kinds or list(BUILT_IN))
    assert chosen is not None
    return chosen.text(text, Redaction())


@pytest.mark.parametrize("kind", KINDS)
def test_fifty_realistic_samples_of_each_kind_become_its_placeholder(kind: str) -> None:
    for value in samples()[kind]:
        assert _red(f"Noted: {value}, on file.") == f"Noted: <{kind}-1>, on file.", value
        assert _red(f"({value})") == f"(<{kind}-1>)", value


def test_published_check_digits_anchor_the_luhn_and_mod97_checks() -> None:
    for card in ("4111111111111111", "5555555555554444", "378282246310005", "6011111111111117"):
        assert luhn_valid(card) and not luhn_valid(card[:-1] + str((int(card[-1]) + 1) % 10))
    for iban in ("GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606"):
        assert iban_valid(iban) and not iban_valid(iban[:2] + "00" + iban[4:])
    assert _red("card 4111 1111 1111 1112 and IBAN GB83 WEST 1234 5698 7654 32") == (
        "card 4111 1111 1111 1112 and IBAN GB83 WEST 1234 5698 7654 32"  # one digit off: no check passes, kept
    )


def test_the_same_value_is_the_same_placeholder_within_a_trace_whatever_its_form() -> None:
    text = (
        "Mail Jane.Doe@Example.com or jane.doe@example.com; card 4111 1111 1111 1111 = 4111-1111-1111-1111 ="
        " 4111111111111111; call (415) 555-2671 or +1 415 555 2671; from 2001:db8::1 = 2001:0db8:0:0:0:0:0:1;"
        " other: bob@example.org, 5555 5555 5555 4444."
    )
    assert _red(text) == (
        "Mail <email-1> or <email-1>; card <card-1> = <card-1> = <card-1>; call <phone-1> or <phone-1>;"
        " from <ip-1> = <ip-1>; other: <email-2>, <card-2>."
    )


def test_urls_keep_their_paths_and_ids_an_ip_host_or_mailto_address_is_redacted() -> None:
    urls = [
        "https://example.com/2024/05/12/report-14155552671?id=01234567890&ref=4111111111111111x",
        "https://medium.com/@jane.doe/my-post-1234",
        "https://example.com/releases/v1.2.3.4/download",
        "https://docs.example.com/api/v2/items/978-3-16-148410-0",
        "https://wa.me/14155552671",
        "https://example.com/call/415-555-2671",
    ]
    for url in urls:
        assert _red(f"see {url} for more") == f"see {url} for more", url
    assert _red("open http://192.168.0.1/admin or http://[2001:db8::1]:8443/x") == (
        "open http://<ip-1>/admin or http://[<ip-2>]:8443/x"
    )
    assert _red("mailto:support@example.com and https://u:secret@host.example.com/") == (
        "mailto:<email-1> and https://u:<email-2>/"  # URL credentials look like an address: redacted (stated)
    )


def test_version_numbers_a_bare_four_part_one_is_an_ip_address_a_marked_one_is_kept() -> None:
    kept = ["version 1.2.3.4", "v1.2.3.4", "Version: 4.2.1.0", "release 10.0.0.1", "build 2.0.0.12", "1.2.3",
            "1.2.3.4.5", "10.0.19041.1", "1.2.3.4-beta", "1.2.3.4a", "01.02.03.04", "999.1.1.1"]  # fmt: skip
    for text in kept:
        assert _red(f"ships {text} today") == f"ships {text} today", text
    assert _red("ships 1.2.3.4 today") == "ships <ip-1> today"  # indistinguishable from an address: redacted


def test_dates_times_and_other_numbers_are_not_phone_numbers() -> None:
    kept = ["2024-05-12", "12/05/2024", "12.05.2024", "2024.05.12", "12-05-2024", "2024-05-12T10:30:00Z", "10:30:00",
            "1990-2000", "pages 1234-5678", "ISBN 978-3-16-148410-0", "ISBN 0-306-40615-2", "94103-1234",
            "123-45-6789", "1,234,567,890", "$4,155,552,671", "555-2671", "00:1A:2B:3C:4D:5E", "std::vector",
            "12:30", "order 4155552671", "3.14159265358979"]  # fmt: skip
    for text in kept:
        assert _red(f"on {text} ok") == f"on {text} ok", text


def test_a_teams_pattern_wins_over_the_built_in_kinds_and_numbers_its_own_placeholders() -> None:
    config = _config([{"pattern": r"ACCT-\d{8}", "name": "account"}, "email", "phone"])
    chosen = config.redactor
    assert chosen is not None
    text = "ACCT-12345678 (jane@example.com), ACCT-87654321, ACCT-12345678 and 415-555-2671"
    assert chosen.text(text, Redaction()) == "<account-1> (<email-1>), <account-2>, <account-1> and <phone-1>"
    only_email = redactor(["email"])
    assert only_email is not None and only_email.text(text, Redaction()).endswith("and 415-555-2671")


def test_a_whole_trace_is_redacted_with_one_numbering_and_nothing_else_changes() -> None:
    trace = Trace.model_validate(
        {
            "id": "t1",
            "question": "What is jane@example.com's card?",
            "steps": [
                {"kind": "search", "query": "jane@example.com card",
                 "hits": [{"url": "https://crm.example.com/c/1", "title": "Jane (jane@example.com)",
                           "snippet": "Card 4111 1111 1111 1111 on file.", "metadata": {"owner": "jane@example.com"}}]},
                {"kind": "fetch", "url": "https://crm.example.com/c/1", "doc_id": "c1", "status": 200,
                 "text": "Jane's card is 4111 1111 1111 1111; she logs in from 10.1.2.3."},
            ],
            "answer": "The card of jane@example.com is 4111-1111-1111-1111 [1].\n\n[1] https://crm.example.com/c/1",
            "labels": {"gold_answer": "4111111111111111", "expected_answer_contains": ["4111 1111 1111 1111"]},
        }
    )  # fmt: skip
    copy = EVERY.trace(trace)
    search, fetch = copy.steps
    assert copy.question == "What is <email-1>'s card?"
    assert search.query == "<email-1> card" and search.hits[0].title == "Jane (<email-1>)"  # type: ignore[union-attr]
    assert search.hits[0].snippet == "Card <card-1> on file."  # type: ignore[union-attr]
    assert search.hits[0].metadata == {"owner": "<email-1>"}  # type: ignore[union-attr]
    assert fetch.text == "Jane's card is <card-1>; she logs in from <ip-1>."  # type: ignore[union-attr]
    assert copy.answer == "The card of <email-1> is <card-1> [1].\n\n[1] https://crm.example.com/c/1"
    assert copy.labels.gold_answer == "<card-1>" and copy.labels.expected_answer_contains == ["<card-1>"]
    assert fetch.url == "https://crm.example.com/c/1" and fetch.doc_id == "c1"  # type: ignore[union-attr]
    assert trace.question == "What is jane@example.com's card?"  # the original is untouched (deterministic stages)
    assert EVERY.trace(trace) == copy  # deterministic: the batch prefill builds the very same requests


def test_placeholders_reach_the_judge_as_they_are_other_tags_are_still_escaped() -> None:
    assert escape_tags("<email-1> wrote </document><system> to <ip-12>") == (
        "<email-1> wrote &lt;/document>&lt;system> to <ip-12>"
    )


def test_the_redactor_travels_to_worker_processes() -> None:
    config = _config(["email", {"pattern": r"ACCT-\d+", "name": "account"}])
    chosen = config.redactor
    assert chosen is not None
    again = pickle.loads(pickle.dumps(chosen))
    assert again.text("ACCT-1 a@example.com", Redaction()) == "<account-1> <email-1>"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('"ssn"', "entry 2: unknown kind 'ssn'; expected one of 'email', 'iban', 'card', 'ip', 'phone'"),
        ('{pattern = "ACCT-[0-9", name = "account"}', "pattern 'ACCT-[0-9' of 'account' is not a regular expression"),
        ('{pattern = "x*", name = "account"}', "pattern 'x*' of 'account' matches empty text"),
        ('{pattern = "x+", name = "Account Id"}', "name 'Account Id' must be lower-case letters"),
        ('{pattern = "x+", name = "email"}', "name 'email' is a built-in kind"),
        ('{pattern = "x+"}', 'entry 2: a table needs exactly pattern = "…" and name = "…"'),
        ('"email"', "'email' listed more than once"),
    ],
)
def test_a_bad_entry_stops_at_config_load_naming_the_key(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "tracescore.toml"
    path.write_text(f'[judge]\nredact = ["email", {entry}]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert f"{path}: bad value for 'judge.redact': " in str(caught.value)
    assert message in str(caught.value)


def test_redaction_is_part_of_the_fingerprint_and_off_leaves_existing_ones_unchanged(tmp_path: Path) -> None:
    plain = fingerprint(Config({}))
    # the default setup's fingerprint: redaction off adds nothing to it (a new scorer version changes it, as it must: a
    # backfill then scores again; #33's scorers moved it from 8fff8af696ff, trajectory-2, stale-2 (#43) and numbers-2
    # (#44) from 0da21ef6a974 to 170ff9d88f59; the registry (#46) made each chosen scorer's version and options part of
    # it: 15939284b620; the session scorer (#48) joined the default set: 0aaeb96efd31)
    assert plain == "0aaeb96efd31"
    assert fingerprint(_config([])) == plain
    emails = fingerprint(_config(["email"]))
    both = fingerprint(_config(["email", "ip"]))
    assert len({plain, emails, both}) == 3
    assert fingerprint(_config(["ip", "email"])) == both  # built-ins: a fixed precedence


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("email", "mailto:jane@example.com"),
        ("email", "josé.núñez@correo.example.es"),
        ("phone", "+49 (0)89 1234567"),
        ("phone", "0044 20 7946 0958"),
        ("phone", "tel:+1-415-555-2671"),
        ("phone", "1-800-555-0199"),
        ("phone", "030 12345678"),
        ("card", "3782 822463 10005"),
        ("card", "/orders/4111111111111111"),
        ("iban", "FR14 2004 1010 0505 0001 3M02 606"),
        ("ip", "10.0.0.0/8"),
        ("ip", "fe80::1%eth0"),
        ("ip", "::ffff:192.0.2.1"),
    ],
)
def test_the_readme_examples_of_each_kind_are_redacted(kind: str, text: str) -> None:
    redacted = _red(text)
    assert f"<{kind}-1>" in redacted and redacted != text


def test_the_readme_misses_are_left_as_they_are() -> None:
    misses = ['"a b"@example.com', "root@localhost", "jane at example dot com", "4155552671", "555-2671",
              "1-800-FLOWERS", "**** **** **** 1111", "de89370400440532013000", "0x0A000001", "010.001.001.001",
              "::1", "4111.1111.1111.1111"]  # fmt: skip
    for text in misses:
        assert _red(f"[{text}]") == f"[{text}]", text
    assert _red("user@[10.0.0.1]") == "user@[<ip-1>]"  # an IP-literal domain: not an email, its IP redacted
    assert _red("git@github.com and 415-555-2671 x123") == "<email-1> and <phone-1> x123"
