"""The verifier registry: only what is listed here can grade a task."""

from __future__ import annotations

import silo_async as silo

from .answers import ver_011, ver_012, ver_013, ver_014, ver_015, ver_016, ver_017
from .projects import ver_009
from .sprints import ver_003, ver_004, ver_005
from .time import ver_006, ver_007
from .work import ver_001, ver_002, ver_008, ver_010

__all__ = ["verifiers"]

verifiers: list[silo.Verifier] = [
    ver_001,
    ver_002,
    ver_003,
    ver_004,
    ver_005,
    ver_006,
    ver_007,
    ver_008,
    ver_009,
    ver_010,
    ver_011,
    ver_012,
    ver_013,
    ver_014,
    ver_015,
    ver_016,
    ver_017,
]
