"""``resume_conflict``: what a resume refuses, and how it says so.

A resume runs its own plan. It refuses, with ``SiloError("resume_conflict")``:

* a setting given with a value other than the plan's (``kind: "differs"``): :func:`check_given`
  compares the caller's settings with :meth:`EvalPlan.settings` in one pass, naming the first
  that differs by the keyword of ``evaluate`` / ``silo.resume`` (:data:`SETTINGS`); the CLI
  names it by its flag instead, with the same sentence (:func:`differs_text`);
* something the plan needs that nothing can rebuild (``kind: "rebuild"``): a code-first
  environment, an agent or user factory made in Python — it must be given again;
* something that changed since the plan ran it (``kind: "changed"``): a task, a verifier's
  source, the environment's data (:mod:`._digests`).

Each error's ``details`` carry ``setting`` (the plan's key), ``keyword`` and ``kind``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._errors import SiloError
from .._jsonutil import compact_json
from ..runs import EvalDir
from ._evalfile import OPTIONS, EvalPlan
from ._refs import AgentRef

__all__ = ["SETTINGS", "changed_error", "check_given", "differs_text", "rebuild_error"]

#: The settings a resume compares, by their key in :meth:`EvalPlan.settings`, with the keyword
#: (of ``evaluate`` and ``silo.resume``) that gives each one.
SETTINGS: dict[str, str] = {
    "environment": "env",
    "tasks": "tasks",
    "agents": "agents",
    "maxToolCalls": "max_tool_calls",
    "timeoutMs": "timeout",
    "tokenLimit": "token_limit",
    **{key: option.keyword for key, option in OPTIONS.items()},
}


def _shown(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], AgentRef):
        return compact_json([a.to_dict() for a in value])
    return compact_json(value)


def differs_text(name: str, details: Mapping[str, Any]) -> str:
    """The message of a ``differs`` conflict, naming the setting ``name`` (a keyword or flag)."""
    bare = name.rstrip("=")
    return (
        f"{name} differs from the plan of eval {details['evalId']} ({details['setting']}: "
        f"{details['given']} given, {details['planned']} in {details['plan']}): a resumed eval "
        f"runs its own plan. Leave {bare} out (or give the plan's value), or start a new eval."
    )


def _same(key: str, given: Any, planned: Any) -> bool:
    if key == "agents":
        return len(given) == len(planned) and all(
            a.same_agent(b) for a, b in zip(given, planned, strict=True)
        )
    return bool(given == planned)


def check_given(plan: EvalPlan, given: Mapping[str, Any], eval_dir: str | os.PathLike[str]) -> None:
    """Refuse a setting given with a value other than the plan's (one pass, the plan's order).

    Args:
        plan: the eval's plan.
        given: the settings the caller gave, by their key in :data:`SETTINGS`, in the form
            :meth:`EvalPlan.settings` has them.
        eval_dir: the eval directory (its ``eval.json`` is named in the message).

    Raises:
        SiloError: ``resume_conflict`` (``kind: "differs"``) naming the first setting that
            differs by its keyword, both values and the way out.
    """
    recorded = plan.settings()
    for key in SETTINGS:
        if key not in given or _same(key, given[key], recorded[key]):
            continue
        keyword = SETTINGS[key]
        details = {
            "setting": key,
            "keyword": keyword,
            "kind": "differs",
            "given": _shown(given[key]),
            "planned": _shown(recorded[key]),
            "evalId": plan.eval_id,
            "plan": EvalDir(eval_dir).file(EvalDir.EVAL),
        }
        raise SiloError("resume_conflict", differs_text(f"{keyword}=", details), details)


def rebuild_error(plan: EvalPlan, setting: str, what: str, keyword: str) -> SiloError:
    """The plan needs ``what``, which nothing can rebuild from ``eval.json``: give ``keyword``."""
    return SiloError(
        "resume_conflict",
        f"{what} of eval {plan.eval_id} was made in Python, and nothing in eval.json can make "
        f"it again: pass the same {keyword}= again to resume it, from Python "
        f"(silo.resume(EVAL_DIR, {keyword}=...)).",
        {"setting": setting, "keyword": keyword, "kind": "rebuild", "evalId": plan.eval_id},
    )


def changed_error(plan: EvalPlan, what: str, eval_dir: str | os.PathLike[str]) -> SiloError:
    """``what`` (a task, a verifier, the data) is no longer what the plan ran."""
    return SiloError(
        "resume_conflict",
        f"{what} changed since eval {plan.eval_id} ran it (its digest differs from the one in "
        f"{EvalDir(eval_dir).file(EvalDir.EVAL)}): rollouts graded before and after the change "
        "would share one summary. Put it back as it was to resume, or start a new eval.",
        {"setting": "digests", "keyword": "env", "kind": "changed", "changed": what},
    )
