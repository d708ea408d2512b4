"""``silo-async import tau2``: record a tau2 domain as a silo environment, copying nothing of it.

The import loads the domain once, exactly as every later load will (its environment, the tasks
of the split, the user simulator's guidelines), and records every data file tau2 opened while
doing so, with its SHA-256 — found by watching the files Python opens (an audit hook, active
only during the import), so the record holds what this tau2 really reads, whatever its layout.
The environment directory then holds ``tau2.json``, the manifest and a small entrypoint that
loads tau2 at run time (:func:`~._load.load`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..._errors import SiloError
from ..._version import __version__
from ...agents._spec import parse_model_spec
from ...project._files import to_json_text, write_text
from ...project._scaffold import publish_environment
from ._domain import DOMAINS, Domain
from ._load import RECORD_FILE, keep_domain
from ._source import Tau2Source, activate, digest, locate

__all__ = ["TEMPLATE", "import_tau2"]

#: The manifest's ``template`` of an imported tau2 environment.
TEMPLATE = "tau2"

_ENTRYPOINT = '''"""tau2-bench's {domain} domain, imported by `silo-async import tau2`.

Written by silo_async {version}. Nothing of tau2 is copied here: tau2.json records where tau2
is, its version and the SHA-256 of every data file it reads. Loading checks those digests, then
imports that tau2 and builds the environment from it (silo_async.integrations.tau2).
"""

from pathlib import Path

from silo_async.integrations.tau2 import load

_tau2 = load(Path(__file__).resolve().parent)

create_state = _tau2.create_state
bind_tools = _tau2.bind_tools
verifiers = list(_tau2.verifiers)
tasks = list(_tau2.tasks)
setup = _tau2.setup
snapshot = _tau2.snapshot
policy = _tau2.policy
'''

_opened: list[str] | None = None
_hooked = False


def _watch(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], str | Path):
        _opened.append(os.fspath(args[0]))


@contextmanager
def _files_opened() -> Iterator[list[str]]:
    """The paths Python opens inside the block (an audit hook, inert outside imports)."""
    global _opened, _hooked
    if not _hooked:
        sys.addaudithook(_watch)  # hooks cannot be removed: this one is inert when unused
        _hooked = True
    found: list[str] = []
    _opened = found
    try:
        yield found
    finally:
        _opened = None


def _read_as_loading_does(source: Tau2Source, domain: str, split: str | None) -> Domain:
    """Load the domain as a later load will, plus the user simulator's guidelines."""
    activate(source.root)
    try:
        loaded = Domain(domain, split)
    except ValueError as exc:  # tau2's own message for an unknown split
        raise SiloError(
            "task_not_found",
            f"tau2's {domain} domain has no task split {split!r}: {exc}",
            {"domain": domain, "split": split},
        ) from exc
    from tau2.user.user_simulator import get_global_user_sim_guidelines

    for use_tools in (False, True):
        get_global_user_sim_guidelines(use_tools=use_tools)
    return loaded


def _data_files(source: Tau2Source, opened: list[str]) -> dict[str, str]:
    """``{path relative to the base: sha256}`` of tau2's data files that were opened.

    A library's own files (LiteLLM's, a virtualenv's inside a checkout) are left out.
    """
    base = source.base.resolve()
    found: dict[str, str] = {}
    for name in opened:
        path = Path(name).resolve()
        if path.suffix in (".py", ".pyc") or not path.is_file():
            continue
        try:
            relative = path.relative_to(base)
        except ValueError:
            continue
        if source.owns(relative):
            found.setdefault(relative.as_posix(), digest(path))
    return dict(sorted(found.items()))


def import_tau2(
    cwd: Path,
    domain: str,
    *,
    path: str | Path | None = None,
    name: str | None = None,
    split: str | None = None,
    judge_model: str | None = None,
    judge_base_url: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Import tau2's ``domain`` as environment ``name`` (default ``tau2-<domain>``).

    ``judge_model`` (``PROVIDER/MODEL``, on ``judge_base_url``) judges the tasks' assertions in
    natural language, with tau2's own prompt; without one they are not graded.

    Returns:
        The environment directory and what ``tau2.json`` records.

    Raises:
        SiloError: ``tau2_unavailable`` (no tau2 there, or it cannot be imported),
            ``task_not_found`` (no such split), ``model_invalid`` (a malformed judge model),
            ``environment_already_exists``, ``unsafe_name``.
    """
    if domain not in DOMAINS:
        raise SiloError(
            "tau2_unavailable",
            f'tau2 has no domain "{domain}" here; domains: {", ".join(DOMAINS)}.',
            {"domain": domain},
        )
    if judge_model is not None:
        parse_model_spec(judge_model)  # model_invalid now, not at every load
    source = locate(path)
    with _files_opened() as opened:
        domain_data = _read_as_loading_does(source, domain, split)
    record = {
        "domain": domain,
        "split": split,
        "path": None if source.path is None else str(source.path),
        "root": str(source.root),
        "base": str(source.base),
        "version": source.version,
        "commit": source.commit,
        "tasks": len(domain_data.tasks),
        "digests": _data_files(source, opened),
        "judge": None if judge_model is None else {"model": judge_model, "baseUrl": judge_base_url},
    }
    # The domain just parsed serves this process's later loads.
    keep_domain(source.root, domain, split, domain_data)

    def fill(staging: Path) -> None:
        write_text(staging / RECORD_FILE, to_json_text(record), exclusive=True)
        entry = _ENTRYPOINT.format(domain=domain, version=__version__)
        write_text(staging / "__init__.py", entry, exclusive=True)

    env_dir = publish_environment(cwd, name or f"tau2-{domain}", TEMPLATE, fill)
    return env_dir, record
