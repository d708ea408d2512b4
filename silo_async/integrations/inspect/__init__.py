"""A silo world as an Inspect AI task (docs/harnesses.md): ``silo_task(project, env, ...)``.

One :class:`inspect_ai.dataset.Sample` per silo task (id = task id), the world's tools as
Inspect ``ToolDef`` objects built from their JSON Schemas, a solver that plays each sample as one
:func:`silo_async.episode` (ending on a reply without a tool call, or on a ``submit`` call) and
a scorer whose value is the world's reward::

    inspect eval silo_async/silo_task -T env=crm --model openai/gpt-4.1-mini

Inspect's schema model keeps only part of JSON Schema (``oneOf``, ``const``, ``minItems`` and
other keywords are dropped from what the model is shown); every call is still validated by
silo against the tool's full schema, and a rejected call is a tool error the model reads.
Needs the ``inspect`` extra (``pip install 'silo_async[inspect]'``).
"""

from __future__ import annotations

from ._task import silo_task

__all__ = ["silo_task"]
