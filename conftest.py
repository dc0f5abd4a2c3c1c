"""The README's and the docs' code blocks run as tests (sybil), against the sample data: see
``tests/docs_examples.py`` for how each kind of block runs and how a block that cannot run here is marked."""

from tests.docs_examples import examples

pytest_collect_file = examples().pytest()

