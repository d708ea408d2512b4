"""The manifest ``silo.environment.json``: read with Silo's forgiving rules, written exactly."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from .._errors import SiloError
from ._files import read_json

__all__ = ["DEFAULT_ENTRYPOINT", "MANIFEST_FILE", "Manifest", "read_manifest", "resolve_entrypoint"]

MANIFEST_FILE = "silo.environment.json"
DEFAULT_ENTRYPOINT = "__init__.py"


@attrs.frozen
class Manifest:
    """What ``silo.environment.json`` says (defaults filled in).

    Attributes:
        name: the environment name (informational; loading always uses the requested name).
        template: the template id it was made from, if known.
        template_version: the silo_async version that made it, if known.
        entrypoint: the module exporting the contract, relative to the environment directory.
        tools: tool-pack ids recorded at creation (recorded only; nothing reads them yet).
        found: False when the file was missing, unreadable or not a JSON object.
    """

    name: str
    template: str | None = None
    template_version: str | None = None
    entrypoint: str = DEFAULT_ENTRYPOINT
    tools: tuple[str, ...] = ()
    found: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The on-disk form, keys in Silo's order."""
        return {
            "name": self.name,
            "template": self.template,
            "templateVersion": self.template_version,
            "entrypoint": self.entrypoint,
            "tools": list(self.tools),
        }


def _text(value: Any) -> str | None:
    # Only a non-blank string counts; it is trimmed.
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def read_manifest(env_dir: Path) -> Manifest:
    """Read the manifest of the environment in ``env_dir``.

    Missing, unreadable or non-object manifests give all defaults (``found=False``).

    Raises:
        SiloError: ``invalid_json`` when the file exists but is not valid JSON.
    """
    path = env_dir / MANIFEST_FILE
    try:
        data = read_json(path)
    except OSError:
        return Manifest(name=env_dir.name, found=False)
    if not isinstance(data, dict):
        return Manifest(name=env_dir.name, found=False)
    raw_tools = data.get("tools")
    tools: Sequence[Any] = raw_tools if isinstance(raw_tools, list) else []
    return Manifest(
        name=_text(data.get("name")) or env_dir.name,
        template=_text(data.get("template")),
        template_version=_text(data.get("templateVersion")),
        entrypoint=_text(data.get("entrypoint")) or DEFAULT_ENTRYPOINT,
        tools=tuple(t for t in tools if isinstance(t, str)),
    )


def _usable(target: Path) -> None:
    # A missing entrypoint is the importer's to report; a name the OS refuses is ours.
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        target.stat()


def resolve_entrypoint(env_dir: Path, entrypoint: str, environment: str) -> Path:
    """The absolute entrypoint file, which must stay inside ``env_dir``.

    Symlinks are resolved before the check, so a link pointing outside is caught too.

    Raises:
        SiloError: ``entrypoint_outside_environment``; ``runtime_contract_invalid`` for a name
            no file can have (a NUL byte, a symlink loop, a name too long).
    """
    root = env_dir.resolve()
    relative = PurePosixPath(entrypoint.replace("\\", "/"))
    try:
        target = (root / relative).resolve()
        _usable(target)
    except (OSError, ValueError, RuntimeError) as exc:  # NUL byte, too long, a symlink loop
        shown = repr(entrypoint) if len(entrypoint) <= 80 else repr(entrypoint[:77] + "...")
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise SiloError(
            "runtime_contract_invalid",
            f'Environment "{environment}" declares entrypoint {shown}, which is not a usable '
            f'file name ({why}); set "entrypoint" in {MANIFEST_FILE} to a file such as '
            f'"{DEFAULT_ENTRYPOINT}".',
            {"environment": environment, "entrypoint": entrypoint},
        ) from None
    if relative.is_absolute() or ".." in relative.parts or not target.is_relative_to(root):
        raise SiloError(
            "entrypoint_outside_environment",
            f'Environment "{environment}" declares entrypoint "{entrypoint}", which resolves '
            "outside the environment directory.",
            {"environment": environment, "entrypoint": entrypoint},
        )
    return target
