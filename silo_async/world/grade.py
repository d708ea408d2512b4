"""``silo_async.world.grade``: what verifiers need to grade a world and an answer.

* **checks**: :func:`every` (a check that all of a list was done, ``2 of 3 moved (A, B, C)``
  as its detail);
* **the world**: :func:`matches` (the final world against a gold world, record by record: what
  task families grade with), :func:`unchanged`, :func:`changed_ids`, :func:`modified_ids`,
  :func:`new_ids`, :func:`new_records`, :func:`find_by`, :func:`new_audit_entries`,
  :func:`written_by` (every change made by the actor the task names);
* **the answer**: :func:`numbers_in` (ids and dates are not figures; ``1,250``, ``$48k``,
  ``1.2M``, ``forty-one`` are), :func:`states_number`, :func:`final_number`,
  :func:`few_numbers`, :func:`mentions`, :func:`mentions_id`, :func:`fold`;
* **the conversation**: :func:`told` (what the agent said to a task's user).
"""

from __future__ import annotations

from .._goldmatch import matches as matches
from ._audit import new_audit_entries as new_audit_entries
from ._audit import written_by as written_by
from ._checks import every as every
from ._grading import changed_ids as changed_ids
from ._grading import few_numbers as few_numbers
from ._grading import final_number as final_number
from ._grading import find_by as find_by
from ._grading import mentions as mentions
from ._grading import mentions_id as mentions_id
from ._grading import modified_ids as modified_ids
from ._grading import new_ids as new_ids
from ._grading import new_records as new_records
from ._grading import numbers_in as numbers_in
from ._grading import states_number as states_number
from ._grading import told as told
from ._grading import unchanged as unchanged
from ._values import fold as fold

__all__ = [
    "changed_ids",
    "every",
    "few_numbers",
    "final_number",
    "find_by",
    "fold",
    "matches",
    "mentions",
    "mentions_id",
    "modified_ids",
    "new_audit_entries",
    "new_ids",
    "new_records",
    "numbers_in",
    "states_number",
    "told",
    "unchanged",
    "written_by",
]
