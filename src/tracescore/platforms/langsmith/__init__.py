"""LangSmith: source (root runs with children), adapter, feedback sink, job wiring."""
