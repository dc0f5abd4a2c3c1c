"""Langfuse: client (credentials, retries), source (whole traces of a window), adapter, score sink, job wiring."""
