"""Errors raised by silo_async: every exception class it defines, in one tree.

Tree (a class hangs from its first base, ``+X`` names a second one; then its module)::

    Exception
    ├── SiloError                        _errors         expected and actionable: has a ``code``
    │   ├── DefinitionError +ValueError  _errors         ``definition_invalid``
    │   ├── ModelError                   _errors         ``model_error``: the model API failed
    │   ├── ToolCallLimitExceededError   _context        the limit: ``max_tool_calls``, ...
    │   ├── AgentLoadError               agents._load    ``agent_not_found``, ``agent_invalid``
    │   └── CliError                     cli._errors     the CLI's own codes
    ├── ToolError                        _errors         a tool's in-world rejection
    ├── NoInstance                       _family         a task family has no instance for a seed
    ├── BadRequestError                  testing._http1  a request the scripted model refuses
    ├── TooSlowError                     testing._http1  a request not read within its deadline
    ├── ValueError
    │   ├── JSONDepthError               _jsonutil       data nested deeper than ``MAX_DEPTH``
    │   ├── FastPathError                _jsonfast       data a fast path leaves to the reference
    │   ├── InputRejectedError           _input          a tool input that is not plain JSON
    │   ├── NoRequiredChecksError        _verify         a verifier gave no required check
    │   ├── SeedError                    world._seed     a world's seed data is inconsistent
    │   ├── PricesError                  eval._report._prices  a price table that cannot be used
    │   ├── BodyTooLargeError            serve._asgi     an HTTP request body over its limit
    │   └── ProtocolError                serve._openenv_session  an OpenEnv frame refused
    ├── LookupError
    │   ├── RunNotFoundError             eval._recorded._runs  no such run, or a file of it missing
    │   └── EvalNotFoundError            export._source  no such eval
    └── RuntimeError
        ├── ReplayedAgentError           eval._recorded._replay  a recorded agent crash raised again
        ├── UnrebuildableError           export._source  a run directory an export skips
        ├── CapacityReachedError         serve._host     every episode slot is taken
        ├── EpisodeFailedError           serve._host     an episode the server could not write
        ├── GoldActionError              integrations.tau2._domain  a tau2 task's gold action raised
        └── Tau2ToolError                integrations.tau2._world  tau2 answered a call with Error
    click.UsageError
    └── OneLineUsageError                cli._usage      a usage error on one line (exit 2)

A :class:`SiloError` is a failure its caller can act on; its ``code`` is one of the 17
authoring codes (:data:`ERROR_CODES`), ``definition_invalid`` (a
code-first definition that can never work: a bad JSON Schema, a duplicate tool name), a code
of the CLI's list (``silo_async.cli._errors.CLI_ERROR_CODES``; the library raises some of them
too, e.g. ``run_invalid`` or ``executor_invalid``), ``run_format_unsupported`` (a run
directory of a newer format), ``faults_invalid`` (a fault plan that cannot be read),
``family_invalid`` (a task family that cannot give a working instance),
``replay_failed`` (a replayed call, a gold solution's, answered an error),
``model_error`` (:class:`ModelError`: the model API failed after the SDK's retries) or, for
:class:`~silo_async.ToolCallLimitExceededError`, the limit that stopped the rollout
(``max_tool_calls``, ``max_tokens`` or ``timeout``). The CLI prints every one as
``error: <code>: <message>``. :class:`ToolError` is no failure of silo_async but a tool's
answer, which the agent receives as a value. Every other class subclasses the builtin it
resembles, so ``except ValueError`` or ``except LookupError`` catches it where a user would
look for it. Classes named with a leading ``_`` never leave their module and are not drawn.
``tests/test_error_tree.py`` checks this drawing against the code.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ERROR_CODES",
    "DefinitionError",
    "ModelError",
    "SiloError",
    "ToolError",
    "is_model_api_error",
    "tool_error",
]

#: The SiloError codes raised while authoring (CLI and SDK), in their documented order.
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
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Whole across processes (Ray workers), whatever a subclass's constructor takes.
        return _restore, (type(self), self.args, self.__dict__)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"code", "message", "details"}`` for JSON output."""
        return {"code": self.code, "message": self.message, "details": self.details}


class DefinitionError(SiloError, ValueError):
    """A tool, verifier or environment definition that can never work (raised at definition)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__("definition_invalid", message, details)


class ModelError(SiloError):
    """The model API failed, after the SDK's own retries: the rollout is not evidence.

    An agent raises it (the shipped model agents do) when it cannot go on because its model
    could not answer; the rollout ends ``agent_error`` as for any crash, but its reward is
    marked invalid (``rewardValid: false``, ``invalidReason: "model_error"``) and evaluation
    statistics leave it out. An API error of the ``openai`` or ``anthropic`` SDK escaping an
    agent counts the same (see :func:`is_model_api_error`).

    Args:
        message: what failed, e.g. ``"openai: 503 Service Unavailable after 3 attempts"``.
        details: structured context (provider, status, attempts).
    """

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__("model_error", message, details)


#: The SDKs whose API errors mean "the model API failed" when they escape an agent.
_MODEL_SDKS = frozenset({"openai", "anthropic"})


def is_model_api_error(exc: BaseException) -> bool:
    """True for :class:`ModelError` and the ``APIError`` family of the openai/anthropic SDKs.

    The SDKs are recognised by their classes' names and modules, so neither is imported.
    """
    if isinstance(exc, ModelError):
        return True
    for cls in type(exc).__mro__:
        if cls.__name__ == "APIError" and cls.__module__.partition(".")[0] in _MODEL_SDKS:
            return True
    return False


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

    def __reduce__(self) -> tuple[Any, ...]:
        return _restore, (type(self), self.args, self.__dict__)

    def to_output(self) -> dict[str, Any]:
        """The error payload the agent sees: ``{code, message, details?}``."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            out["details"] = self.details
        return out


def _restore(cls: type[Exception], args: tuple[Any, ...], state: dict[str, Any]) -> Exception:
    """An unpickled error: its arguments and attributes back, its constructor not called."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


def tool_error(code: str, message: str, details: Any = None) -> ToolError:
    """Build a :class:`ToolError` to ``raise`` from a tool body.

    Example:
        ``raise silo.tool_error("not_found", 'Customer "CUS-9" was not found.')``
    """
    return ToolError(code, message, details)
