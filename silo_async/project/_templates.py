"""The template registry: the templates shipped in ``silo_async/templates/``, read as files.

``silo-async init <name> --template <id>`` copies one into ``.silo/environments/<name>/``. The
registry lives in the project layer (it only lists directories and reads each entrypoint's
docstring): the templates package itself is data, worlds that import the public API as a
user's code does, so nothing in the library imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs

from .._errors import SiloError

__all__ = ["TemplateInfo", "list_templates", "template_dir"]

#: Where the templates are: ``silo_async/templates/``, package data read as files (never
#: imported here: template worlds are user code that imports the public API).
_ROOT = Path(__file__).resolve().parent.parent / "templates"
# Known templates first, in this order, with their display labels; any other template
# directory found here is listed after them, alphabetically.
_LABELS = {
    "blank": "Blank",
    "erp": "ERP",
    "crm": "CRM",
    "project": "Project tracking",
    "support": "Customer support",
}


@attrs.frozen
class TemplateInfo:
    """One available template.

    Attributes:
        id: what ``--template`` takes.
        label: the display name.
        description: the first line of the template's entrypoint docstring.
    """

    id: str
    label: str
    description: str


def _is_template(path: Path) -> bool:
    return (
        path.is_dir() and not path.name.startswith(("_", ".")) and (path / "__init__.py").is_file()
    )


def _description(path: Path) -> str:
    try:
        doc = ast.get_docstring(ast.parse((path / "__init__.py").read_text(encoding="utf-8")))
    except (OSError, SyntaxError, ValueError):
        return ""
    return (doc or "").strip().split("\n")[0]


def list_templates() -> list[TemplateInfo]:
    """The templates that exist, known ones first (blank, erp, crm, project, support)."""
    found = {p.name: p for p in _ROOT.iterdir() if _is_template(p)}
    order = [t for t in _LABELS if t in found] + sorted(t for t in found if t not in _LABELS)
    return [
        TemplateInfo(
            t, _LABELS.get(t, t.replace("-", " ").replace("_", " ").title()), _description(found[t])
        )
        for t in order
    ]


def template_dir(template_id: str) -> Path:
    """The directory of template ``template_id``.

    Raises:
        SiloError: ``template_not_found`` listing the templates that exist.
    """
    available = [t.id for t in list_templates()]
    if template_id not in available:
        raise SiloError(
            "template_not_found",
            f'Unknown template "{template_id}". Available: {", ".join(available)}.',
            {"template": template_id, "available": available},
        )
    return _ROOT / template_id
