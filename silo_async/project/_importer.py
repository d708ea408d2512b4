"""Import an environment directory as a package under a private module name.

Environment names like ``support-desk`` are not identifiers, and two environments may both
contain ``tools/accounts.py``; so each directory is imported as its own top-level package named
``_silo_env_<name>_<hash of its path>``. A meta-path finder serves that package's submodules.

Every load is a fresh import from source: earlier modules of that package are dropped from
``sys.modules`` first, bytecode caches are neither read nor written (so an edit made a moment
ago is always seen, and no ``__pycache__`` appears in the user's environment directory).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

from .._errors import SiloError

__all__ = ["import_environment", "package_name"]

_PREFIX = "_silo_env_"
#: Codes an entrypoint raises on purpose while loading, passed on as they are: an imported
#: benchmark whose data changed since (``environment_stale``) or cannot be imported.
LOADING_CODES = frozenset({"environment_stale", "tau2_unavailable"})
_lock = threading.Lock()


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """Compile straight from source: no stale ``.pyc`` can hide an edit, none is written."""

    def get_code(self, fullname: str) -> CodeType:
        source = self.get_data(self.path)
        return compile(source, self.path, "exec", dont_inherit=True)


class _EnvironmentFinder(importlib.abc.MetaPathFinder):
    """Find submodules of the private environment packages (and nothing else)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX) or path is None:
            return None
        leaf = fullname.rpartition(".")[2]
        for entry in path:
            base = Path(entry) / leaf
            init = base / "__init__.py"
            if init.is_file():
                return _spec(fullname, init, package_dir=base)
            module = Path(entry) / f"{leaf}.py"
            if module.is_file():
                return _spec(fullname, module)
        return None


_FINDER = _EnvironmentFinder()


def _spec(
    fullname: str, file: Path, package_dir: Path | None = None
) -> importlib.machinery.ModuleSpec:
    search = [str(package_dir)] if package_dir is not None else None
    spec = importlib.util.spec_from_file_location(
        fullname,
        file,
        loader=_SourceLoader(fullname, str(file)),
        submodule_search_locations=search,
    )
    assert spec is not None  # a file path with an explicit loader always gives a spec
    return spec


def package_name(env_dir: Path) -> str:
    """The private top-level module name for the environment in ``env_dir``."""
    resolved = str(env_dir.resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:12]
    readable = re.sub(r"[^A-Za-z0-9]", "_", env_dir.name)
    return f"{_PREFIX}{readable}_{digest}"


def _purge(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def _install_finder() -> None:
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def import_environment(env_dir: Path, entrypoint: Path, environment: str) -> ModuleType:
    """Import ``entrypoint`` (a file inside ``env_dir``) as part of the environment package.

    Raises:
        SiloError: ``runtime_contract_invalid`` when the entrypoint is missing or importing it
            raises; the message names the file and line inside the environment. The errors of
            :data:`LOADING_CODES` an entrypoint raises on purpose are raised as they are.
    """
    root = env_dir.resolve()
    if entrypoint.suffix != ".py" or not entrypoint.is_file():
        rel = entrypoint.relative_to(root).as_posix()
        raise SiloError(
            "runtime_contract_invalid",
            f'Environment "{environment}" has no Python entrypoint "{rel}". '
            "A runnable environment must export create_state, bind_tools and verifiers.",
            {"environment": environment, "entrypoint": rel},
        )
    package = package_name(root)
    with _lock:  # sys.modules surgery must not interleave between threads
        _install_finder()
        _purge(package)
        try:
            return _exec(root, entrypoint, package)
        except SiloError as exc:
            _purge(package)
            if exc.code in LOADING_CODES:  # raised on purpose: it already says what to do
                raise
            raise _import_failure(exc, root, environment, package) from exc
        except Exception as exc:
            _purge(package)
            raise _import_failure(exc, root, environment, package) from exc
        except BaseException:
            _purge(package)
            raise


def _exec(root: Path, entrypoint: Path, package: str) -> ModuleType:
    init = root / "__init__.py"
    if init.is_file():
        spec = _spec(package, init, package_dir=root)
    else:  # a directory without __init__.py still works as the package
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [str(root)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)
    parts = list(entrypoint.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if not parts:
        return module
    return importlib.import_module(".".join([package, *parts]))


def _where(exc: BaseException, root: Path) -> tuple[str | None, int | None]:
    """The file (relative to ``root``) and line inside the environment where ``exc`` arose."""
    if isinstance(exc, SyntaxError) and exc.filename:
        path = Path(exc.filename)
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix(), exc.lineno
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = Path(frame.filename)
        if path.is_absolute() and path.is_relative_to(root):
            return path.relative_to(root).as_posix(), frame.lineno
    return None, None


def _import_failure(exc: Exception, root: Path, environment: str, package: str) -> SiloError:
    file, line = _where(exc, root)
    if isinstance(exc, SyntaxError):
        detail = f"SyntaxError: {exc.msg}"
    else:
        # Private package names mean nothing to the user: show the environment name instead.
        detail = f"{type(exc).__name__}: {exc}".replace(package, environment)
    where = f"{file}:{line}: " if file else ""
    return SiloError(
        "runtime_contract_invalid",
        f'Environment "{environment}" could not be imported: {where}{detail}',
        {
            "environment": environment,
            "file": file,
            "line": line,
            "exception": type(exc).__name__,
        },
    )
