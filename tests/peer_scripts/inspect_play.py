"""Play ``silo_async/silo_task`` with Inspect's mockllm, as ``inspect eval`` does from a project.

Run from the project directory (Inspect resolves ``silo_async/silo_task`` through the
``inspect_ai`` entry point): ``python inspect_play.py '{"calls": [[tool, input]...], ...}'``.
The model's script: one tool call per entry of ``calls``, then ``submit`` with ``answer`` (or,
without ``answer``, a reply ``text``). Prints one JSON line: the log's status and the sample.
"""

from __future__ import annotations

import json
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model


def _usage(output: ModelOutput) -> ModelOutput:
    # Without usage, mockllm counts tokens with tiktoken, which downloads its encoding.
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def _tools_shown(sample: object) -> list[dict[str, object]]:
    """The tools the model was shown on its first request: name and required parameters."""
    for event in getattr(sample, "events", None) or []:
        if getattr(event, "event", None) == "model":
            return [{"name": t.name, "required": t.parameters.required} for t in event.tools]
    return []


def main() -> None:
    spec = json.loads(sys.argv[1])
    outputs = [ModelOutput.for_tool_call("mockllm/model", n, a) for n, a in spec["calls"]]
    if "answer" in spec:
        outputs.append(
            ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": spec["answer"]})
        )
    else:
        outputs.append(ModelOutput.from_content("mockllm/model", spec["text"]))
    (log,) = inspect_eval(
        "silo_async/silo_task",
        task_args=spec["task_args"],
        model=get_model("mockllm/model", custom_outputs=[_usage(o) for o in outputs]),
        display="none",
        log_dir=spec["log_dir"],
    )
    sample = log.samples[0] if log.samples else None
    score = sample.scores["silo_reward"] if sample and sample.scores else None
    print(
        json.dumps(
            {
                "status": log.status,
                "error": str(log.error) if log.error else None,
                "id": sample.id if sample else None,
                "input": sample.input if sample else None,
                "score": score.value if score else None,
                "answer": score.answer if score else None,
                "metadata": score.metadata if score else None,
                "toolErrors": [
                    m.text for m in sample.messages if m.role == "tool" and m.error is not None
                ]
                if sample
                else [],
                "tools": _tools_shown(sample),
            }
        )
    )


if __name__ == "__main__":
    main()
