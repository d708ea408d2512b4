"""Recorded rollouts as training data (docs/training.md): what ``silo-async runs export`` writes.

One JSON line per rollout: ``{"runId", "environment", "task", "tools", "messages", "output",
"reward", "rewardValid", "passed", "terminationReason", "usage"}``, with the tools in OpenAI
function format and the conversation as OpenAI chat messages rebuilt from the trace::

    from silo_async.export import export_runs, trajectories

    stats = export_runs(eval_id="eval_20261201T101539_9c0c04", min_reward=1.0, out="train.jsonl")
    for line in trajectories(eval_id="eval_20261201T101539_9c0c04", passed_only=True):
        line["messages"]
"""

from __future__ import annotations

from ..eval._recorded._runs import RunNotFoundError
from ._chat import chat_messages, openai_tool, scripted_call_id
from ._export import FORMATS, ExportStats, Trajectories, export_runs, trajectories
from ._source import SKIP_DAMAGED, SKIP_INCOMPLETE, SKIP_TRACE_CUT, EvalNotFoundError

__all__ = [
    "FORMATS",
    "SKIP_DAMAGED",
    "SKIP_INCOMPLETE",
    "SKIP_TRACE_CUT",
    "EvalNotFoundError",
    "ExportStats",
    "RunNotFoundError",
    "Trajectories",
    "chat_messages",
    "export_runs",
    "openai_tool",
    "scripted_call_id",
    "trajectories",
]
