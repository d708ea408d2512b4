"""Environment templates shipped as package data.

Each template is a directory here laid out like an environment (``__init__.py`` entrypoint,
``environment.py``, ``state.py``, ``data/``, ``tasks/``, ``tools/``, ``verifiers/``);
``silo-async init <name> --template <id>`` copies one into ``.silo/environments/<name>/``.
The registry of them (:func:`list_templates`, :func:`template_dir`) lives in
:mod:`silo_async.project`; its names are here too, where they always were.
"""

from __future__ import annotations

from ..project._templates import TemplateInfo, list_templates, template_dir

__all__ = ["TemplateInfo", "list_templates", "template_dir"]
