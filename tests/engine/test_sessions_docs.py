"""#48 acceptance 5: the README's "Conversations" section (short, at the end, saying what is carried and what is not)
and the guide's own-scorer example, run: a plugin scorer that declares ``earlier`` receives the earlier turns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.conftest import REPO
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import _build
from tracescore.engine.sessions import carried
from tracescore.registry import Installed, RunContext
from tracescore.trace import Trace

T0 = datetime(2026, 11, 4, tzinfo=UTC)


def test_the_readme_section_is_last_short_and_says_what_is_carried_and_not() -> None:
    readme = (REPO / "README.md").read_text()
    head, _, section = readme.rpartition("\n## Conversations\n")
    assert head and "\n## " not in section  # the very end of the README
    assert len(section.strip().splitlines()) <= 30
    assert "**Carried**" in section and "**Not carried**" in section and "carry_evidence" in section
    assert (REPO / "docs" / "guides" / "conversations.md").is_file() and "docs/guides/conversations.md" in section


def test_the_guides_scorer_example_sees_the_earlier_turns() -> None:
    guide = (REPO / "docs" / "guides" / "conversations.md").read_text()
    example = guide.split("## Your own scorer", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {"__name__": "guide_example"}
    exec(compile(example, "conversations.md", "exec"), namespace)  # noqa: S102 - the documented example, as written
    built = _build(Installed("cites_earlier", "guide:cites_earlier", "guide", "0", namespace["cites_earlier"]),  # type: ignore[arg-type]
                   {}, RunContext(), None)  # fmt: skip
    page = "https://example.org/a"
    one = Trace(id="t1", session_id="s", timestamp=T0, steps=[{"kind": "fetch", "url": page, "text": "A."}])
    two = Trace(id="t2", session_id="s", timestamp=T0 + timedelta(minutes=1), answer=f"As said [1].\n\n[1] {page}")
    (_, before), _ = carried([one, two])
    assert before is not None and before.fetched(page) is not None and before.fetched(page).where == "turn 1, trace t1"
    assert score_trace(two, [built], before).values["citation.cites_earlier"] == 1
    assert score_trace(two, [built]).scores["citation.cites_earlier"].reason == "no earlier turn"
