"""Validate ATIF trajectories with Harbor's own validator (run in the Harbor virtualenv).

``python harbor_validate.py FILE``: every line of FILE (one trajectory each, as ``runs export
--format atif`` writes them) goes through ``harbor``'s ``TrajectoryValidator`` and its pydantic
``Trajectory`` model. Prints one JSON line: ``{"lines": N, "errors": {LINE: [messages]},
"versions": [...]}``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator


def main(path: str) -> None:
    errors: dict[int, list[str]] = {}
    versions: list[str] = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        validator = TrajectoryValidator()
        if not validator.validate(line):
            errors[number] = validator.get_errors()
            continue
        versions.append(Trajectory.model_validate_json(line).schema_version)
    print(json.dumps({"lines": len(lines), "errors": errors, "versions": versions}))


if __name__ == "__main__":
    main(sys.argv[1])
