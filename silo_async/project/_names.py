"""Names that become paths and code: the safe-name rules and the name transforms.

Every resource name (environment, dataset, task id, tool, verifier id) ends up in a file path,
and tool and verifier names also end up as Python identifiers in generated code. These rules are
what stops path traversal and broken registries, so they are checked before anything is touched.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable

from .._errors import SiloError

__all__ = [
    "check_environment_name",
    "check_identifier",
    "check_safe_name",
    "python_identifier",
    "snake_stem",
    "suggest_free_name",
]

# Silo's rule for resources: start with a letter or digit, then letters, digits, . _ -
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# Environment names become package directories and module names: no dots.
_ENV = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_LENGTH = 100
# Windows refuses these as file names whatever the extension, so a project made on Linux
# would not check out there. Checked case-insensitively on the part before the first dot.
_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)
# Names the generated modules already bind: a tool or verifier identifier equal to one of
# these would shadow it inside the stub or the registry.
_RESERVED_IDENTIFIERS = frozenset({"silo", "annotations", "tools", "verifiers"})
_SAFE_HINT = "Use letters, numbers, dots, dashes and underscores, starting with a letter or number."
_ENV_HINT = "Use only letters, numbers, hyphens and underscores, starting with a letter or number."


def _unsafe(kind: str, name: object, hint: str, why: str = "") -> SiloError:
    reason = f" ({why})" if why else ""
    return SiloError(
        "unsafe_name",
        f'Invalid {kind} name "{name}"{reason}. {hint}',
        {"kind": kind, "name": name},
    )


def _check(name: object, kind: str, pattern: re.Pattern[str], hint: str) -> str:
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise _unsafe(kind, name, hint)
    if len(name) > _MAX_LENGTH:
        raise _unsafe(kind, name, hint, f"longer than {_MAX_LENGTH} characters")
    if name.endswith("."):
        raise _unsafe(kind, name, hint, "a trailing dot is dropped by Windows")
    if name.split(".")[0].lower() in _DEVICE_NAMES:
        raise _unsafe(kind, name, hint, "a reserved device name on Windows")
    return name


def check_safe_name(name: object, kind: str) -> str:
    """Check a resource name against Silo's safe-name rule and return it.

    Args:
        name: the name to check.
        kind: what it names, for the message: ``dataset``, ``task id``, ``tool``,
            ``verifier id``.

    Raises:
        SiloError: ``unsafe_name`` (details ``{kind, name}``).
    """
    return _check(name, kind, _SAFE, _SAFE_HINT)


def check_environment_name(name: object) -> str:
    """Check an environment name: letters, digits, ``-`` and ``_``, starting alphanumeric.

    Raises:
        SiloError: ``unsafe_name`` (kind ``environment``).
    """
    return _check(name, "environment", _ENV, _ENV_HINT)


def check_identifier(name: object, what: str = "state type") -> str:
    """Check that ``name`` can be used as a Python identifier in generated code.

    Raises:
        SiloError: ``unsafe_name`` for a non-identifier or a Python keyword.
    """
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) or keyword.iskeyword(name):
        raise SiloError(
            "unsafe_name",
            f'Invalid {what} name "{name}". Use a Python identifier, for example "State".',
            {"kind": what, "name": name},
        )
    return name


def snake_stem(name: str) -> str:
    """The module stem for a tool or verifier: runs of non-alphanumerics become ``_``.

    ``get-profits`` -> ``get_profits``; ``VER-001`` -> ``ver_001``; ``Get.Profits`` ->
    ``get_profits``. Lower-cased, so names differing only in case share a file and collide.
    """
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    return "_".join(parts).lower() or "resource"


def python_identifier(name: str, kind: str, prefix: str) -> str:
    """The identifier generated code binds for a tool or verifier named ``name``.

    Args:
        name: the tool name or verifier id (already a safe name).
        kind: ``tool`` or ``verifier id``, for the error message.
        prefix: put in front of a stem that starts with a digit (``tool_``, ``verifier_``).

    Raises:
        SiloError: ``unsafe_name`` when the identifier would be a Python keyword or would
            shadow a name the generated modules bind (``silo``, ``State``, ``tools``...).
    """
    stem = snake_stem(name)
    ident = f"{prefix}{stem}" if stem[0].isdigit() else stem
    if keyword.iskeyword(ident):
        raise _unsafe(kind, name, "Choose a name that is not a Python keyword.", "a Python keyword")
    if ident in _RESERVED_IDENTIFIERS:
        raise _unsafe(
            kind, name, "Choose another name.", f'"{ident}" is already used by generated code'
        )
    return ident


def suggest_free_name(name: str, existing: Iterable[str]) -> str:
    """The next free variant of ``name`` (case-insensitive): ``support`` -> ``support-2``.

    A trailing ``-<digits>`` is stripped first, so ``support-2`` suggests ``support-3`` when
    that one is taken too.
    """
    taken = {e.lower() for e in existing}
    if name.lower() not in taken:
        return name
    base = re.sub(r"-\d+$", "", name) or name
    n = 2
    while f"{base}-{n}".lower() in taken:
        n += 1
    return f"{base}-{n}"
