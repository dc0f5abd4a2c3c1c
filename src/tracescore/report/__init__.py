"""Reports on scored results: where the result lines come from (runs: a file or a stored run), the summary (stage
cells, work queue), the gate, and renderers (terminal, markdown, html, junit)."""
