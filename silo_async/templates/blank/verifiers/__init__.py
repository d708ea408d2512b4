"""The verifier registry: only the verifiers listed here grade tasks.

``silo-async verifier add <ID> --task <TASK-ID>`` creates ``verifiers/<id>.py`` and registers it
below.
"""

from __future__ import annotations

import silo_async as silo

verifiers: list[silo.Verifier] = []
