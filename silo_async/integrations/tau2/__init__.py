"""tau2-bench inside silo: a user's tau2, imported and graded as tau2 grades.

``silo-async import tau2 [PATH] --domain airline|retail|telecom|mock`` (or :func:`import_tau2`)
records a tau2 domain as an environment of the project — where tau2 is, its version and commit,
the task split and the SHA-256 of every data file it reads — and copies nothing of tau2: the
environment's entrypoint calls :func:`load`, which checks the digests (``environment_stale``)
and builds the environment from the user's tau2 at run time.

* The world is tau2's own environment (a copy-on-read clone of data parsed once per process);
  the tools are tau2's, as tau2 publishes them, run through tau2's own ``get_response``;
  telecom's user tools are each task's ``user.tools``; tau2's policy is the environment's.
* Tasks are ``TASK-NNN`` in the split's order; ``task show`` names tau2's own id.
* The user speaks first after the agent's greeting: with ``--user-model``, tau2's user
  simulator (its guidelines and the task's scenario) on that model.
* Grading is tau2's evaluator's: one required check per reward-basis component (``db``,
  ``env_assertions``, ``communicate``, ``action``, ``nl_assertions``); ``passed`` exactly when
  tau2 gives 1.0. A gold action that raises is an environment fault.
"""

from __future__ import annotations

from ._import import import_tau2
from ._load import Loaded, load
from ._task import Tau2Play, Tau2Task

__all__ = ["Loaded", "Tau2Play", "Tau2Task", "import_tau2", "load"]
