"""The task family registry: only the families listed here generate tasks.

A family (``silo.TaskFamily``) samples what to ask from the world and states a gold solution
as tool calls; its instances ``FAMILY#SEED`` are tasks of this environment. Write one module per
family in this folder (``families/<name>.py`` defining ``family = silo.TaskFamily(...)``) and
list it below; see the "Task families" guide.
"""

from __future__ import annotations

import silo_async as silo

families: list[silo.TaskFamily] = []
