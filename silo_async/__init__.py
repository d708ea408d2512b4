"""silo_async: build simulated worlds and score AI agents in them, asyncio-native on anyio.

Data defines the world, state gives it behaviour, tools expose controlled access, tasks state
objectives, verifiers decide whether the objective was achieved — by inspecting the world, not
the transcript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _deprecation
from ._context import AgentContext as AgentContext
from ._context import ToolCallLimitExceededError as ToolCallLimitExceededError
from ._diff import state_diff as state_diff
from ._environment import Environment as Environment
from ._episode import Episode as Episode
from ._episode import episode as episode
from ._errors import ERROR_CODES as ERROR_CODES
from ._errors import DefinitionError as DefinitionError
from ._errors import ModelError as ModelError
from ._errors import SiloError as SiloError
from ._errors import ToolError as ToolError
from ._errors import tool_error as tool_error
from ._family import Call as Call
from ._family import NoInstance as NoInstance
from ._family import TaskFamily as TaskFamily
from ._family import split_of as split_of
from ._faults import Faults as Faults
from ._jsonutil import clone_json as clone_json
from ._jsonutil import json_equal as json_equal
from ._jsonutil import output_text as output_text
from ._limits import Limits as Limits
from ._many import run_many as run_many
from ._options import RunOptions as RunOptions
from ._result import TERMINATION_REASONS as TERMINATION_REASONS
from ._result import RunResult as RunResult
from ._runner import Agent as Agent
from ._runner import run as run
from ._task import Task as Task
from ._tools import BoundTool as BoundTool
from ._tools import Tool as Tool
from ._tools import ToolFault as ToolFault
from ._tools import ToolOutcome as ToolOutcome
from ._tools import ToolResult as ToolResult
from ._tools import ToolSpec as ToolSpec
from ._tools import bind_tools as bind_tools
from ._tools import tool as tool
from ._user import ScriptedUser as ScriptedUser
from ._user import User as User
from ._user import UserReply as UserReply
from ._user import UserTurn as UserTurn
from ._verify import Check as Check
from ._verify import Verifier as Verifier
from ._verify import VerifierContext as VerifierContext
from ._verify import VerifierOutcome as VerifierOutcome
from ._verify import check as check
from ._verify import optional as optional
from ._verify import verifier as verifier
from ._version import __version__ as __version__

# The audit, the project layer and evaluation build on everything above (import order does not
# matter: nothing inside the package imports this facade).
from .auditing import AuditReport as AuditReport
from .auditing import audit as audit
from .eval import EvalProgress as EvalProgress
from .eval import EvalSummary as EvalSummary
from .eval import RayExecutor as RayExecutor
from .eval import ReplayReport as ReplayReport
from .eval import evaluate as evaluate
from .eval import find_run as find_run
from .eval import list_runs as list_runs
from .eval import load_run as load_run
from .eval import pass_at_k as pass_at_k
from .eval import pass_hat_k as pass_hat_k
from .eval import replay as replay
from .eval import resume as resume
from .project import Project as Project
from .project import load_environment as load_environment

__all__ = [
    "ERROR_CODES",
    "TERMINATION_REASONS",
    "Agent",
    "AgentContext",
    "AuditReport",
    "BoundTool",
    "Call",
    "Check",
    "DefinitionError",
    "Environment",
    "Episode",
    "EvalProgress",
    "EvalSummary",
    "Faults",
    "Limits",
    "ModelError",
    "NoInstance",
    "Project",
    "RayExecutor",
    "ReplayReport",
    "RunOptions",
    "RunResult",
    "ScriptedUser",
    "SiloError",
    "Task",
    "TaskFamily",
    "Tool",
    "ToolCallLimitExceededError",
    "ToolError",
    "ToolFault",
    "ToolOutcome",
    "ToolResult",
    "ToolSpec",
    "User",
    "UserReply",
    "UserTurn",
    "Verifier",
    "VerifierContext",
    "VerifierOutcome",
    "__version__",
    "audit",
    "bind_tools",
    "check",
    "clone_json",
    "episode",
    "evaluate",
    "find_run",
    "json_equal",
    "list_runs",
    "load_environment",
    "load_run",
    "optional",
    "output_text",
    "pass_at_k",
    "pass_hat_k",
    "replay",
    "resume",
    "run",
    "run_many",
    "split_of",
    "state_diff",
    "tool",
    "tool_error",
    "verifier",
]

#: Names renamed in this release, each with its replacement. The old name still works, with a
#: ``DeprecationWarning``, until silo_async 0.2.0; it is left out of ``__all__`` so that
#: ``from silo_async import *`` stays quiet.
_DEPRECATED = _deprecation.DeprecatedNames(
    __name__, {"ToolCallLimitExceeded": "silo_async.ToolCallLimitExceededError"}
)
#: Each deprecated name and its replacement: what a tool walking the surface reads.
__deprecated__ = _DEPRECATED.replacements

if TYPE_CHECKING:  # type checkers know the old names; at run time __getattr__ serves them
    ToolCallLimitExceeded = ToolCallLimitExceededError
else:
    __getattr__ = _DEPRECATED.attribute
