"""What travels to Ray workers, and the checks that refuse what cannot, before anything runs.

Everything goes through Ray's own serialisation (its vendored cloudpickle), with one addition:
an object a loader recorded a recipe for (:mod:`silo_async._origin`: an environment loaded
from ``.silo/environments/<name>/``, an agent loaded from a file or module spec) travels as that
recipe — a reference (``load_environment(name, project)``, the agent spec) that the worker runs
to load the object itself. Code-first objects travel as Ray sends any object: functions of
importable modules by name, ``__main__`` code and closures by value.

Two checks, each naming the object and the fix: pickling on the driver (a lock, a socket, an
open client), then loading on the worker (a module only the driver can import).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping
from typing import Any

from ..._errors import SiloError
from ..._origin import origin_of, rebuild

__all__ = ["load_problem", "ship", "unship"]

_PICKLER: Any = None


def _pickler_class() -> Any:
    """The cloudpickle Pickler, taught to send recorded objects as their recipes."""
    global _PICKLER
    if _PICKLER is None:
        from ray import cloudpickle

        class Shipper(cloudpickle.Pickler):
            def reducer_override(self, obj: Any) -> Any:
                recipe = origin_of(obj)
                if recipe is not None:
                    return rebuild, recipe
                return super().reducer_override(obj)  # type: ignore[no-untyped-call]

        _PICKLER = Shipper
    return _PICKLER


def ship(name: str, obj: object) -> bytes:
    """``obj`` as bytes for the workers.

    Args:
        name: how messages name it (``agent "good"``, ``environment "crm"``).
        obj: the object.

    Raises:
        SiloError: ``executor_invalid`` naming the object, what could not be pickled, and the fix.
    """
    buffer = io.BytesIO()
    try:
        _pickler_class()(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception as exc:
        raise SiloError(
            "executor_invalid",
            f"{name} cannot be sent to the Ray workers: {type(exc).__name__}: {exc}. Ray sends "
            "a module-level function by name and a closure or __main__ code by value, so keep "
            "locks, open files, sockets and SDK clients out of it (create them inside the "
            "agent or world), or run the eval with the local executor.",
            {"object": name},
        ) from None
    return buffer.getvalue()


def unship(shipment: Mapping[str, bytes]) -> tuple[dict[str, Any], dict[str, str]]:
    """Load every shipped object (on a worker): ``(objects, problems)``, both by name."""
    loaded: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name, blob in shipment.items():
        try:
            loaded[name] = pickle.loads(blob)
        except Exception as exc:  # reported to the driver, which refuses the eval
            problems[name] = f"{type(exc).__name__}: {exc}"
    return loaded, problems


def load_problem(name: str, problem: str, host: str) -> SiloError:
    """The ``executor_invalid`` error for an object a worker could not load."""
    return SiloError(
        "executor_invalid",
        f"{name} could not be loaded on the Ray worker on {host}: {problem}. Make its module "
        "importable on every worker (install it there, or start Ray with a runtime_env that "
        "ships it: py_modules / working_dir), or hand it over as a reference: "
        "silo.load_environment(...) for an on-disk environment, --agent PATH.py for an agent.",
        {"object": name, "host": host},
    )
