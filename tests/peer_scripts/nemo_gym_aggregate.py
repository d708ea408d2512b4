"""NeMo Gym's own aggregate metrics for some verify responses (run in the NeMo Gym virtualenv).

``python nemo_gym_aggregate.py '[verify responses...]'``: what its resources servers answer on
``/aggregate_metrics`` (``nemo_gym.reward_profile.compute_aggregate_metrics``, their default),
and what they answer for no verify response at all (``empty``). Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import warnings

from nemo_gym.reward_profile import compute_aggregate_metrics

if __name__ == "__main__":
    given = json.loads(sys.argv[1])
    del sys.argv[1:]  # Gym reads its command line as Hydra overrides
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        answer = compute_aggregate_metrics(given).model_dump(mode="json")
    answer["empty"] = compute_aggregate_metrics([]).model_dump(mode="json")
    print(json.dumps(answer))
