"""The project layer: environments on disk under ``<project>/.silo/``.

One store for the CLI and the SDK: loading environments by path, creating them from templates,
authoring data and tasks, scaffolding tools and verifiers, validating, and running; the
registry of the templates an environment can start from (:func:`list_templates`).
:class:`ProjectStore` and :class:`EnvironmentStore` are that store, synchronous (the CLI's
face); :class:`Project` and its handles are the async SDK over it, each call on a worker thread.
"""

from __future__ import annotations

from ._authoring import EnvironmentStore, ProjectStore
from ._files import enclosing_project
from ._loader import load_environment
from ._names import check_environment_name, check_safe_name, suggest_free_name
from ._scaffold import ScaffoldResult
from ._sdk import (
    DataResource,
    EnvironmentHandle,
    Environments,
    Project,
    TaskResource,
    ToolResource,
    VerifierResource,
)
from ._templates import TemplateInfo, list_templates, template_dir
from ._validate import Finding, ValidationReport

__all__ = [
    "DataResource",
    "EnvironmentHandle",
    "EnvironmentStore",
    "Environments",
    "Finding",
    "Project",
    "ProjectStore",
    "ScaffoldResult",
    "TaskResource",
    "TemplateInfo",
    "ToolResource",
    "ValidationReport",
    "VerifierResource",
    "check_environment_name",
    "check_safe_name",
    "enclosing_project",
    "list_templates",
    "load_environment",
    "suggest_free_name",
    "template_dir",
]
