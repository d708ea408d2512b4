"""Helpers for testing environments and agents offline."""

from __future__ import annotations

from ._model_script import ErrorReply as ErrorReply
from ._model_script import ModelRequest as ModelRequest
from ._model_script import Reply as Reply
from ._model_script import SeenResult as SeenResult
from ._model_script import ToolCall as ToolCall
from ._model_server import ScriptedModelServer as ScriptedModelServer
