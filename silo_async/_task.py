"""Tasks: objectives only — an instruction, a title and the verifier that grades it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._errors import SiloError

__all__ = ["Task"]

_REQUIRED = (("id", "id"), ("title", "title"), ("instruction", "instruction"))


@attrs.frozen(kw_only=False)
class Task:
    """One objective the agent must achieve. On disk: ``tasks/<id>.json`` in camelCase.

    Attributes:
        id: stable identifier such as ``"TASK-001"``.
        title: a short human label.
        instruction: the only text the agent receives (no solution path, no hidden answer).
        verifier_id: the id of the verifier that grades this task.
        difficulty: conventionally ``easy``, ``medium`` or ``hard``.
    """

    id: str
    title: str
    instruction: str
    verifier_id: str
    difficulty: str = "unspecified"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "task") -> Task:
        """Build a task from its JSON form (``verifierId``); unknown keys are dropped.

        Raises:
            SiloError: ``task_invalid`` when ``data`` is not an object or a required field is
                missing or blank.
        """
        if not isinstance(data, Mapping):
            raise SiloError("task_invalid", f"{source} is not a JSON object.", {"source": source})
        fields: dict[str, str] = {}
        for attr, key in (*_REQUIRED, ("verifier_id", "verifierId")):
            value = data.get(key)
            if not isinstance(value, str) or not value.strip():
                raise SiloError(
                    "task_invalid",
                    f'{source} is missing a non-empty "{key}".',
                    {"source": source, "field": key},
                )
            fields[attr] = value
        difficulty = data.get("difficulty")
        if isinstance(difficulty, str) and difficulty.strip():
            fields["difficulty"] = difficulty.strip()
        return cls(**fields)

    def to_dict(self) -> dict[str, str]:
        """JSON form with Silo's keys, in Silo's order."""
        return {
            "id": self.id,
            "title": self.title,
            "instruction": self.instruction,
            "verifierId": self.verifier_id,
            "difficulty": self.difficulty,
        }
