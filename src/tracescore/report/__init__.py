"""Reports on scored results: the summary (stage cells, work queue), the gate, and renderers (terminal, markdown,
html, junit)."""
