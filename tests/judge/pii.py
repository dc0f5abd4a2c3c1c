"""Realistic personal data, generated deterministically (a seeded ``random.Random``): the samples the redaction tests
seed traces with. Card numbers carry a valid Luhn digit and IBANs valid ISO 13616 check digits, computed here from
the published algorithms (not with tracescore's own checks); phones come in the forms people write them.
"""

from __future__ import annotations

import random
import string

KINDS = ("email", "phone", "card", "iban", "ip")

_FIRST = ["jane", "amir", "li", "sofia", "kwame", "olga", "mateo", "priya", "noah", "chloe", "yuki", "lars"]
_LAST = ["doe", "haddad", "wei", "rossi", "mensah", "ivanova", "garcia", "sharma", "smith", "martin", "sato"]
_DOMAINS = ["example.com", "mail.example.org", "acme-corp.co.uk", "post.example.de", "uni.example.edu", "example.fr"]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def emails(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    for i in range(n):
        first, last, domain = rng.choice(_FIRST), rng.choice(_LAST), rng.choice(_DOMAINS)
        local = [f"{first}.{last}{i}", f"{first[0]}{last}+orders{i}", f"{first.title()}.{last.title()}{i}",
                 f"{first}_{last}.{i}"][i % 4]  # fmt: skip
        out.append(f"{local}@{domain}")
    return out


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    return f"{rng.randint(2, 9)}{_digits(rng, 2)}", f"{rng.randint(2, 9)}{_digits(rng, 2)}", _digits(rng, 4)


def phones(rng: random.Random, n: int) -> list[str]:
    forms = [
        lambda: "+1 {} {} {}".format(*_nanp(rng)),
        lambda: "({}) {}-{}".format(*_nanp(rng)),
        lambda: "{}-{}-{}".format(*_nanp(rng)),
        lambda: "{}.{}.{}".format(*_nanp(rng)),
        lambda: "+1{}{}{}".format(*_nanp(rng)),
        lambda: f"+44 20 7{_digits(rng, 3)} {_digits(rng, 4)}",
        lambda: f"+44 7{_digits(rng, 3)} {_digits(rng, 6)}",
        lambda: f"020 7{_digits(rng, 3)} {_digits(rng, 4)}",
        lambda: "+33 6 " + " ".join(_digits(rng, 2) for _ in range(4)),
        lambda: "06 " + " ".join(_digits(rng, 2) for _ in range(4)),
        lambda: f"+49 30 {_digits(rng, 8)}",
        lambda: f"+49 (0)89 {_digits(rng, 7)}",
        lambda: f"0044 20 7{_digits(rng, 3)} {_digits(rng, 4)}",
    ]
    return [forms[i % len(forms)]() for i in range(n)]


def luhn_digit(body: str) -> str:
    """The check digit that makes ``body`` + it pass Luhn (double every second digit from the right of the result)."""
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def cards(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    for i in range(n):
        brand = i % 4
        if brand == 0:  # Visa, 16
            body = "4" + _digits(rng, 14)
        elif brand == 1:  # Mastercard, 16
            body = f"5{rng.randint(1, 5)}" + _digits(rng, 13)
        elif brand == 2:  # American Express, 15
            body = rng.choice(["34", "37"]) + _digits(rng, 12)
        else:  # Discover, 16
            body = "6011" + _digits(rng, 11)
        number = body + luhn_digit(body)
        if len(number) == 15:
            out.append([f"{number[:4]} {number[4:10]} {number[10:]}", number][i % 2])
        else:
            groups = [number[k : k + 4] for k in range(0, 16, 4)]
            out.append([" ".join(groups), "-".join(groups), number][i % 3])
    return out


def _iban(country: str, bban: str) -> str:
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    return f"{country}{check:02d}{bban}"


def ibans(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    for i in range(n):
        country = ["DE", "GB", "FR", "NL", "ES"][i % 5]
        bban = {
            "DE": lambda: _digits(rng, 18),
            "GB": lambda: rng.choice(["NWBK", "BARC", "MIDL", "LOYD"]) + _digits(rng, 14),
            "FR": lambda: _digits(rng, 23),
            "NL": lambda: rng.choice(["ABNA", "INGB", "RABO"]) + _digits(rng, 10),
            "ES": lambda: _digits(rng, 20),
        }[country]()
        iban = _iban(country, bban)
        out.append(" ".join(iban[k : k + 4] for k in range(0, len(iban), 4)) if i % 2 == 0 else iban)
    return out


def ips(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    for i in range(n):
        if i % 5 == 4:  # one in five an IPv6 address (documentation prefix), compressed or full
            groups = [f"{rng.randint(1, 0xFFFF):x}" for _ in range(4)]
            out.append(f"2001:db8::{':'.join(groups[:2])}" if i % 2 else "2001:db8:" + ":".join(groups + ["0", "1"]))
        else:
            first = rng.choice([10, 172, 192, rng.randint(11, 223)])
            out.append(".".join([str(first), *(str(rng.randint(0, 255)) for _ in range(2)), str(rng.randint(1, 254))]))
    return out


def samples(n: int = 50, seed: int = 32) -> dict[str, list[str]]:
    """``n`` distinct samples of each kind, the same on every run."""
    rng = random.Random(seed)
    out = {
        "email": emails(rng, n),
        "phone": phones(rng, n),
        "card": cards(rng, n),
        "iban": ibans(rng, n),
        "ip": ips(rng, n),
    }
    for kind, values in out.items():
        assert len(set(values)) == n, kind  # distinct: every one must be redacted on its own
    return out


def compact(kind: str, value: str) -> str:
    """The value as a leak could also show it: cards and IBANs without their spaces or hyphens."""
    return value.replace(" ", "").replace("-", "") if kind in ("card", "iban") else value
