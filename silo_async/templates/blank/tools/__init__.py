"""The tool registry: only the tools listed here exist for the agent.

``silo-async tool add <name>`` creates ``tools/<name>.py`` and registers it below.
"""

from __future__ import annotations

import silo_async as silo

tools: list[silo.Tool] = []
