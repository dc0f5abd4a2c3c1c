"""Open Deep Research, run for real: smolagents agents, the ODR text-browser tools, a scripted chat model, a loopback
web, spans exported by ``openinference-instrumentation-smolagents`` as OTLP JSON.

Nothing here writes a span by hand. The agents are smolagents' ``CodeAgent`` (the manager) and ``ToolCallingAgent``
(``search_agent``, as ``examples/open_deep_research/run.py`` builds it), their model smolagents' own
``InferenceClientModel`` talking over loopback HTTP to ``ScriptedChat``, an OpenAI-style chat-completions endpoint that
answers each request with the next reply of the run's script. The tools are the vendored ODR files
(``tests/fixtures/open_deep_research``): their ``SimpleTextBrowser`` searches through the real SerpAPI client
(``google-search-results``) pointed at ``FakeWeb``, which serves a SerpAPI result page and two articles. Spans go to
an in-memory exporter and are encoded by ``opentelemetry-exporter-otlp-json-common``, as an OTLP/JSON file exporter
writes them.

``run_all()`` runs the four scripts (``RUNS``) and returns the OTLP JSON document and what each run did (question,
answer, queries, hits, fetched URLs and the text the agent read), read from the tools' own browser, not from spans.

The spans are made when the tests run, not committed: smolagents, the instrumentor and the encoder are in the dev
extra (all on PyPI; CI installs ``.[dev]``), the four runs take a few seconds, and every run checks the reader
against the instrumentor's current output instead of a copy that would go stale when it changes its attributes.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from tests.fakes.base import FakeServer, Request, Response

QUESTION = "In what year did the Kestrel Bridge open to traffic?"
GOLD = "1931"
QUERY = "Kestrel Bridge opening year"

# the two articles: the bridge's (long enough for several viewports when the viewport is small) and the river's
_FILLER = " ".join(f"Paragraph {n} describes the river crossing, its ferries and the towns on either bank." for n in
                   range(1, 13))
BRIDGE_HTML = (
    "<html><head><title>The Kestrel Bridge</title></head><body><h1>The Kestrel Bridge</h1>"
    f"<p>The Kestrel Bridge is a steel arch bridge over the river Wend. {_FILLER}</p>"
    f"<p>{_FILLER}</p>"
    "<p>After four years of work the Kestrel Bridge opened to traffic in 1931, two years late.</p>"
    f"<p>{_FILLER}</p></body></html>"
)
RIVER_HTML = (
    "<html><head><title>River Wend history</title></head><body><h1>River Wend</h1>"
    "<p>The river Wend was crossed by ferries until the Kestrel Bridge was built.</p></body></html>"
)
DIGEST = "Top stories today: the Kestrel Bridge is closed for repairs this weekend; traffic is diverted to the ferry."


class FakeWeb(FakeServer):
    """SerpAPI's ``GET /search`` (the JSON ``google-search-results`` reads: ``organic_results``), two HTML articles
    under ``/articles/``, and ``/digest``, a news digest in prose (no result list)."""

    def organic(self) -> list[dict[str, Any]]:
        return [
            {"position": 1, "title": "The Kestrel Bridge", "link": f"{self.url}/articles/kestrel-bridge",
             "date": "Mar 3, 2021", "source": "Wend Gazette",
             "snippet": "The Kestrel Bridge over the river Wend opened to traffic in 1931."},
            {"position": 2, "title": "River Wend history", "link": f"{self.url}/articles/river-wend",
             "snippet": "The river Wend was crossed by ferries until the bridge was built."},
            {"position": 3, "title": "Bridges of the Wend valley", "link": f"{self.url}/articles/missing",
             "snippet": "A list of the valley's bridges."},
        ]  # fmt: skip

    def handle(self, request: Request) -> Response:
        html = {"/articles/kestrel-bridge": BRIDGE_HTML, "/articles/river-wend": RIVER_HTML}
        if request.path == "/search":
            return Response(200, {"search_metadata": {"status": "Success"}, "organic_results": self.organic()})
        if request.path in html:
            return Response(200, raw=html[request.path].encode(), headers={"Content-Type": "text/html; charset=utf-8"})
        if request.path == "/digest":
            return Response(200, raw=DIGEST.encode(), headers={"Content-Type": "text/plain; charset=utf-8"})
        return Response(404, raw=b"not found", headers={"Content-Type": "text/plain"})


class ScriptedChat(FakeServer):
    """An OpenAI-style ``POST /v1/chat/completions``: each request gets the next scripted reply (text, or tool calls
    as ``(name, arguments)`` pairs); a request past the script is a 500 naming it."""

    def __init__(self) -> None:
        super().__init__()
        self.script: list[str | list[tuple[str, dict[str, Any]]]] = []

    def handle(self, request: Request) -> Response:
        if not request.path.endswith("/chat/completions"):
            return Response(404, {"error": {"message": f"no route {request.path}"}})
        if not self.script:
            return Response(500, {"error": {"message": "the script has no more replies"}})
        reply = self.script.pop(0)
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply}
        else:
            calls = [{"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                     for n, (name, args) in enumerate(reply)]  # fmt: skip
            message = {"role": "assistant", "content": None, "tool_calls": calls}
        choice = {"index": 0, "message": message, "finish_reason": "stop" if isinstance(reply, str) else "tool_calls"}
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        return Response(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
                              "model": "scripted", "choices": [choice], "usage": usage})  # fmt: skip


def _code(thought: str, code: str) -> str:
    """A CodeAgent step as a model writes it: a thought, then the code between smolagents' ``<code>`` tags."""
    return f"Thought: {thought}\n<code>\n{code}\n</code>"


@dataclass
class Did:
    """What one run did, as its tools saw it: ``pages`` maps each URL read to the text the agent was shown of it
    (each viewport once, in reading order, joined by a newline)."""

    name: str
    question: str
    answer: str
    queries: list[str] = field(default_factory=list)
    hits: list[list[str]] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)
    trace_id: str = ""


@contextmanager
def _quiet() -> Iterator[None]:
    """pydub (imported by ``mdconvert``) warns at import when ffmpeg is missing; the tests run with warnings as
    errors and convert no audio."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def run_all() -> tuple[dict[str, Any], list[Did]]:
    """Run the four scripts; the OTLP JSON of every span (one trace per run) and what each run did."""
    with _quiet():
        from openinference.instrumentation import using_metadata
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from serpapi import GoogleSearch

        from tests.fixtures.open_deep_research import text_web_browser as odr
        from tests.fixtures.open_deep_research.text_inspector_tool import TextInspectorTool

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("open-deep-research")
    did: list[Did] = []
    backend = GoogleSearch.BACKEND
    try:
        with FakeWeb() as web, ScriptedChat() as chat, _quiet():
            GoogleSearch.BACKEND = web.url  # the real SerpAPI client, asking the loopback web
            for run in RUNS:
                record = run(web, chat, odr, TextInspectorTool)
                labels = {"gold_answer": GOLD}
                with tracer.start_as_current_span("main") as main, using_metadata({"labels": labels}):
                    record.answer = str(record.agent.run(record.did.question))  # type: ignore[attr-defined]
                    record.did.trace_id = format(main.get_span_context().trace_id, "032x")
                if chat.script:
                    raise AssertionError(f"run {record.did.name!r} left replies unused: {chat.script}")
                record.did.answer = record.answer
                did.append(record.did)
    finally:
        GoogleSearch.BACKEND = backend
        instrumentor.uninstrument()
    document = json.loads(encode_spans(exporter.get_finished_spans()).to_json())
    return document, did


@dataclass
class _Run:
    agent: Any
    did: Did
    answer: str = ""


def _browser(odr: Any, viewport: int = 1024 * 5) -> Any:
    return odr.SimpleTextBrowser(viewport_size=viewport, downloads_folder="/nonexistent", serpapi_key="test-key",
                                 request_kwargs={"timeout": 10})  # fmt: skip


def _model(chat: ScriptedChat) -> Any:
    from smolagents import InferenceClientModel

    return InferenceClientModel(model_id=chat.url, token="test-token")


def _seen(browser: Any) -> str:
    """The viewport the text browser shows now (what its tools print after the header)."""
    return str(browser.viewport)


def manager_and_search_agent(web: FakeWeb, chat: ScriptedChat, odr: Any, inspector: Any) -> _Run:
    """ODR's shape: a CodeAgent manager (planning, as run.py's) hands the search to ``search_agent``, which searches,
    visits the first hit and answers; the manager's ``final_answer`` is the answer."""
    from smolagents import CodeAgent, ToolCallingAgent

    model, browser = _model(chat), _browser(odr)
    tools = [odr.SearchInformationTool(browser), odr.VisitTool(browser), odr.PageUpTool(browser),
             odr.PageDownTool(browser), odr.FinderTool(browser), odr.FindNextTool(browser)]  # fmt: skip
    search_agent = ToolCallingAgent(model=model, tools=tools, max_steps=6, name="search_agent",
                                    description="A team member that will search the internet to answer your question.",
                                    verbosity_level=0)  # fmt: skip
    manager = CodeAgent(model=model, tools=[], managed_agents=[search_agent], max_steps=4, planning_interval=4,
                        verbosity_level=0)  # fmt: skip
    article = f"{web.url}/articles/kestrel-bridge"
    chat.script = [
        "## 1. Facts survey\n### 1.1. Facts given in the task\nThe bridge's name.\n\n## 2. Plan\n1. Ask search_agent."
        "\n<end_plan>",
        _code("I ask my team member.", 'found = search_agent(task="Find the year the Kestrel Bridge opened.")\n'
              "print(found)"),
        [("web_search", {"query": QUERY})],
        [("visit_page", {"url": article})],
        [("final_answer", {"answer": "The Kestrel Bridge opened to traffic in 1931."})],
        _code("The search agent found it.", f'final_answer("{GOLD}")'),
    ]
    browser.visit_page(article)  # what visit_page will show: the first viewport (the page fits in one)
    page = _seen(browser)
    hits = [h["link"] for h in web.organic()]
    did = Did("manager + search_agent", QUESTION, "", [QUERY], [hits], {article: page})
    return _Run(manager, did)


def blind_search(web: FakeWeb, chat: ScriptedChat, odr: Any, inspector: Any) -> _Run:
    """A search tool whose output is prose (a news digest: no result list, no URL): one unreadable search call."""
    import requests
    from smolagents import CodeAgent, Tool

    class NewsSearchTool(Tool):  # type: ignore[misc]
        name = "news_search"
        description = "Search today's news; returns a digest of the top stories."
        inputs = {"query": {"type": "string", "description": "what to look for"}}  # noqa: RUF012
        output_type = "string"

        def forward(self, query: str) -> str:
            return requests.get(f"{web.url}/digest?q={quote(query)}", timeout=10).text

    agent = CodeAgent(model=_model(chat), tools=[NewsSearchTool()], max_steps=3, verbosity_level=0)
    chat.script = [
        _code("Look at the news.", 'digest = news_search(query="Kestrel Bridge")\nprint(digest)'),
        _code("The digest does not say; I answer from memory.", 'final_answer("1929")'),
    ]
    return _Run(agent, Did("blind search", QUESTION, "", ["Kestrel Bridge"], []))


def paging(web: FakeWeb, chat: ScriptedChat, odr: Any, inspector: Any) -> _Run:
    """``search_agent`` alone with a small viewport: search, visit, page down, find on page, then read the second hit
    with ``inspect_file_as_text``; the page text read is the visit's viewport and each viewport the paging showed."""
    from smolagents import ToolCallingAgent

    browser = _browser(odr, viewport=600)
    tools = [odr.SearchInformationTool(browser), odr.VisitTool(browser), odr.PageUpTool(browser),
             odr.PageDownTool(browser), odr.FinderTool(browser), odr.FindNextTool(browser), inspector(None, 100000)]
    agent = ToolCallingAgent(model=_model(chat), tools=tools, max_steps=8, name="search_agent", verbosity_level=0)
    article, river = f"{web.url}/articles/kestrel-bridge", f"{web.url}/articles/river-wend"
    chat.script = [
        [("web_search", {"query": QUERY})],
        [("visit_page", {"url": article})],
        [("page_down", {})],
        [("find_on_page_ctrl_f", {"search_string": "opened to traffic in"})],
        [("inspect_file_as_text", {"file_path": river})],
        [("final_answer", {"answer": GOLD})],
    ]
    mirror = _browser(odr, viewport=600)  # the same page in a browser of its own: the viewports the agent will see
    mirror.visit_page(article)
    seen = [_seen(mirror)]
    mirror.page_down()
    seen.append(_seen(mirror))
    mirror.find_on_page("opened to traffic in")
    seen.append(_seen(mirror))
    if len(set(seen)) != 3:
        raise AssertionError("the script should show three different viewports of the article")
    with _quiet():
        river_text = inspector(None, 100000).md_converter.convert(river).text_content
    hits = [h["link"] for h in web.organic()]
    pages = {article: "\n".join(seen), river: river_text}
    return _Run(agent, Did("paging + find on page", QUESTION, "", [QUERY], [hits], pages))


def no_search(web: FakeWeb, chat: ScriptedChat, odr: Any, inspector: Any) -> _Run:
    """The manager answers at once, its search tools unused."""
    from smolagents import CodeAgent

    browser = _browser(odr)
    agent = CodeAgent(model=_model(chat), tools=[odr.SearchInformationTool(browser), odr.VisitTool(browser)],
                      max_steps=2, verbosity_level=0)  # fmt: skip
    chat.script = [_code("I know this one.", f'final_answer("{GOLD}")')]
    return _Run(agent, Did("answer without searching", QUESTION, ""))


RUNS = [manager_and_search_agent, blind_search, paging, no_search]
