"""Token prices: what the model steps of a rollout cost, from a per-million-token price table.

A price table maps a model name, as recorded in ``model_step`` events, to its prices in
currency units per million tokens: ``{"gpt-4.1-mini": {"input": 0.4, "output": 1.6}}``. The
entry ``"*"`` prices any model not listed. Tokens of a model with no price are counted apart
(``unpricedTokens``), never priced at zero silently.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from typing import Any

import attrs

from ..._result import RunResult

__all__ = ["Prices", "PricesError", "read_prices"]

#: Where a model_step line names its type (right after ``{"seq":N,``): lines are scanned, not
#: decoded, unless they are model steps.
_STEP = '"type":"model_step"'


class PricesError(ValueError):
    """A price table that cannot be used (the message names the entry and the fix)."""


@attrs.frozen
class Prices:
    """Per-million-token prices by model (see the module docstring).

    Attributes:
        table: ``{model: (input price, output price)}``.
    """

    table: dict[str, tuple[float, float]]

    @classmethod
    def from_dict(cls, data: Any, where: str = "the price table") -> Prices:
        """Check and read a price table.

        Raises:
            PricesError: not an object of ``{"input": number, "output": number}`` entries.
        """
        if not isinstance(data, Mapping) or not data:
            raise PricesError(
                f'{where} must be a JSON object like {{"MODEL": {{"input": 0.4, "output": 1.6}}}} '
                "(prices per million tokens)."
            )
        table = {}
        for model, entry in data.items():
            table[str(model)] = (
                _price(entry, "input", model, where),
                _price(entry, "output", model, where),
            )
        return cls(table)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The table as JSON (``config.prices`` of ``summary.json``)."""
        return {m: {"input": i, "output": o} for m, (i, o) in self.table.items()}

    def cost(self, result: RunResult) -> tuple[float, int]:
        """What ``result``'s model steps cost, and the tokens of models with no price."""
        total, unpriced = 0.0, 0
        for line in result.trace_lines:
            if line.find(_STEP, 0, 40) < 0:
                continue
            event = json.loads(line)
            usage = event.get("usage") or {}
            tokens_in = int(usage.get("inputTokens") or 0)
            tokens_out = int(usage.get("outputTokens") or 0)
            price = self.table.get(str(event.get("model")), self.table.get("*"))
            if price is None:
                unpriced += tokens_in + tokens_out
            else:
                total += (tokens_in * price[0] + tokens_out * price[1]) / 1e6
        return total, unpriced


def _price(entry: Any, side: str, model: str, where: str) -> float:
    value = entry.get(side) if isinstance(entry, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PricesError(
            f'{where}: "{model}" needs "{side}": a price per million tokens (a number), '
            f'like {{"input": 0.4, "output": 1.6}}.'
        )
    if value < 0:
        raise PricesError(f'{where}: "{model}" has a negative {side} price ({value}).')
    return float(value)


def read_prices(path: str | os.PathLike[str]) -> Prices:
    """Read a price table from a JSON file.

    Raises:
        PricesError: the file is missing, not JSON, or not a price table.
    """
    where = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise PricesError(f"cannot read the price table {where}: {exc.strerror}.") from None
    except ValueError as exc:
        raise PricesError(f"the price table {where} is not valid JSON: {exc}.") from None
    return Prices.from_dict(data, where)
