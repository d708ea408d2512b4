"""Errors raised by silo_async.

Tree::

    SiloError                 expected, actionable failures with a stable ``code``
    ├── DefinitionError       a tool, verifier or environment is defined wrongly (also ValueError)
    ToolError                 raised by a tool body for an in-world rejection; becomes a ToolResult

``SiloError`` codes are the 17 of DESIGN.md section 5 for authoring, plus ``definition_invalid``
for code-first definitions that can never work (a bad JSON Schema, a duplicate tool name).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ERROR_CODES", "DefinitionError", "SiloError", "ToolError", "tool_error"]

#: The SiloError codes raised while authoring (CLI and SDK), in DESIGN.md order.
ERROR_CODES: tuple[str, ...] = (
    "environment_not_found",
    "environment_already_exists",
    "template_not_found",
    "entrypoint_outside_environment",
    "runtime_contract_invalid",
    "data_not_found",
    "data_already_exists",
    "invalid_json",
    "task_not_found",
    "task_already_exists",
    "task_invalid",
    "tool_already_exists",
    "verifier_already_exists",
    "registry_not_found",
    "already_registered",
    "state_type_not_found",
    "unsafe_name",
)


class SiloError(Exception):
    """An expected, actionable failure with a stable machine-readable code.

    Args:
        code: stable identifier such as ``"task_not_found"``.
        message: one human sentence that names the problem and, where possible, the fix.
        details: structured context (paths, names) for programs.
    """

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"SiloError({self.code!r}, {self.message!r})"

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"code", "message", "details"}`` for JSON output."""
        return {"code": self.code, "message": self.message, "details": self.details}


class DefinitionError(SiloError, ValueError):
    """A tool, verifier or environment definition that can never work (raised at definition)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__("definition_invalid", message, details)


class ToolError(Exception):
    """Raise from a tool body to reject a call in-world; the agent receives it as a value.

    Conventional codes: ``invalid_input``, ``not_found``, ``invalid_state``, ``not_allowed``,
    ``conflict``, ``limit_exceeded``; any string is allowed.

    Args:
        code: short machine-readable reason.
        message: what was wrong, naming the rule and the current state.
        details: optional JSON-ready context, included in the output only when given.
    """

    def __init__(self, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def __repr__(self) -> str:
        return f"ToolError({self.code!r}, {self.message!r})"

    def to_output(self) -> dict[str, Any]:
        """The error payload the agent sees: ``{code, message, details?}``."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            out["details"] = self.details
        return out


def tool_error(code: str, message: str, details: Any = None) -> ToolError:
    """Build a :class:`ToolError` to ``raise`` from a tool body.

    Example:
        ``raise silo.tool_error("not_found", 'Customer "CUS-9" was not found.')``
    """
    return ToolError(code, message, details)
