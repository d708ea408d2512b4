"""``silo_async.auditing``: prove, task by task, that a grade cannot be earned without the work.

:func:`audit` plays probes (agents that try to earn reward without doing the task) and mutants
of a solver (its calls with one world-changing step dropped, repeated or altered) on every
task, and gives each task a verdict: ``sound``, ``gameable``, ``loose`` or ``unsolved``
(docs/audit.md). Every rollout is written under the audit directory with ``audit.json`` and
``audit.md``; ``silo-async audit`` is the same from the command line.
"""

from __future__ import annotations

from ._audit import audit as audit
from ._findings import audit_findings as audit_findings
from ._probes import PROBES as PROBES
from ._report import VERDICTS as VERDICTS
from ._report import AuditReport as AuditReport
from ._report import table as table
from ._report import why as why

__all__ = ["PROBES", "VERDICTS", "AuditReport", "audit", "audit_findings", "table", "why"]
