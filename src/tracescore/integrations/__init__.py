"""Where agents are tested: tracescore's stage scores as evaluators of the platforms' own experiment runners.

``tracescore.integrations.langsmith`` gives evaluators for ``langsmith.evaluate`` / ``aevaluate`` /
``evaluate_existing``. Every integration scores through the one run recipe (``engine/recipe.py``) and the platform's
own adapter, so an evaluator and ``tracescore score`` give the same values for the same trace. Importing this package
imports no vendor SDK: the evaluators read the SDK's objects by their documented fields.
"""

from __future__ import annotations
