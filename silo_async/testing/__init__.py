"""``silo_async.testing``: test doubles and conformance checks for worlds and agents, offline.

* :class:`ScriptedAgent` — a list of tool calls and an answer, run through the real runner;
* :func:`check_environment` — the checks of ``env validate`` (fresh worlds, tools, links, a
  do-nothing agent passing nothing, optionally a solver passing everything) on any
  :class:`~silo_async.Environment`;
* :class:`ScriptedModelServer` — a local model server answering from a script;
* :func:`gold_agent` — plays an instance of a task family as its gold solution says
  (``--agent silo_async.testing:gold_agent``).
"""

from __future__ import annotations

from ._check import check_environment as check_environment
from ._gold import gold_agent as gold_agent
from ._model_script import ErrorReply as ErrorReply
from ._model_script import ModelRequest as ModelRequest
from ._model_script import Reply as Reply
from ._model_script import SeenResult as SeenResult
from ._model_script import ToolCall as ToolCall
from ._model_server import ScriptedModelServer as ScriptedModelServer
from ._scripted import ScriptedAgent as ScriptedAgent
from ._scripted import ScriptedCall as ScriptedCall

__all__ = [
    "ErrorReply",
    "ModelRequest",
    "Reply",
    "ScriptedAgent",
    "ScriptedCall",
    "ScriptedModelServer",
    "SeenResult",
    "ToolCall",
    "check_environment",
    "gold_agent",
]
