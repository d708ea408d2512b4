"""The probes: agents that try to earn reward without doing the task.

* ``noop`` makes no call and answers ``""``;
* ``echo`` makes no call and answers the instruction and the user's opening;
* ``explorer`` walks 30 schema-valid calls over the agent's tools, each built from ids and
  values it saw (earlier outputs, the instruction), else random valid ones, stopping early when
  no call can be built; it answers with everything it saw and, on a task with a user, tells
  the user all of it once, at the end;
* ``spammer`` calls once every tool that takes no required input or only ids from the
  instruction, and answers with every number, id and capitalised phrase it met (telling the
  user too, on a task with a user).

Each is seeded (``seed``) and reads nothing but its context, so the same seed plays the same
rollout. A probe is an ordinary agent: its rollout is graded and written like any other.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from .._context import AgentContext
from .._jsonutil import compact_json, output_text
from .._taskuser import MESSAGE_USER
from .._tools import ToolSpec
from ._inputs import InputMaker, takes_id
from ._values import Seen, id_prefix, text_values

__all__ = ["EXPLORER_CALLS", "PROBES", "Probe", "make_probe"]

#: The probes, in the order every report lists them.
PROBES: tuple[str, ...] = ("noop", "echo", "explorer", "spammer")
#: The explorer's walk: world-tool calls at most.
EXPLORER_CALLS = 30

Probe = Callable[[AgentContext], Any]


def _talks(ctx: AgentContext) -> bool:
    return any(t.name == MESSAGE_USER for t in ctx.tools)


class Makers:
    """The input makers of the tools an agent sees, made once per tool for a whole audit.

    A tool's :class:`~silo_async.ToolSpec` is the same object in every rollout, so its maker
    (a compiled schema validator) is kept by the spec's identity, the spec held alongside.
    """

    def __init__(self) -> None:
        self._made: dict[int, tuple[ToolSpec, InputMaker]] = {}

    def __call__(self, ctx: AgentContext) -> list[InputMaker]:
        """The makers of ``ctx``'s tools, ``message_user`` aside, in registry order."""
        found = []
        for spec in ctx.tools:
            if spec.name == MESSAGE_USER:
                continue
            kept = self._made.get(id(spec))
            if kept is None:
                kept = self._made[id(spec)] = (spec, InputMaker(spec))
            found.append(kept[1])
        return found


async def _tell(ctx: AgentContext, text: str) -> None:
    """Tell the task's user ``text`` (once), when the task has a user."""
    if text and _talks(ctx):
        await ctx.call_tool(MESSAGE_USER, {"text": text})


async def noop(ctx: AgentContext) -> str:
    """No call, no word: the untouched world."""
    return ""


async def echo(ctx: AgentContext) -> str:
    """No call: answers the instruction and the user's opening (``ctx.task`` holds both)."""
    return ctx.task


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


class Explorer:
    """A seeded walk of schema-valid world-tool calls, built from what it saw.

    Args:
        seed: the audit's seed.
        calls: the most world-tool calls it makes.
    """

    def __init__(self, seed: int, calls: int = EXPLORER_CALLS) -> None:
        self.seed = seed
        self.calls = calls
        self.makers = Makers()

    async def __call__(self, ctx: AgentContext) -> str:
        """Walk, then answer (and tell the user) everything seen."""
        rng = random.Random(f"{self.seed}/explorer/{ctx.task}")
        seen = Seen()
        seen.text(ctx.task)
        makers = self.makers(ctx)
        untried = makers[:]
        rng.shuffle(untried)
        lines = [ctx.task]
        for _ in range(self.calls):
            found = self._next(untried, makers, seen, rng)
            if found is None:
                break  # no tool can be given an input its schema accepts
            maker, args = found
            result = await ctx.call_tool(maker.name, args)
            seen.output(result.output, maker.name)
            lines.append(f"{maker.name} {compact_json(args)} -> {output_text(result.output)}")
        answer = "\n".join(lines)
        await _tell(ctx, answer)
        return answer

    @staticmethod
    def _next(
        untried: list[InputMaker], makers: Sequence[InputMaker], seen: Seen, rng: random.Random
    ) -> tuple[InputMaker, dict[str, Any]] | None:
        """The next call, ``None`` when none builds.

        A tool not called yet comes first, and a call made of values seen before one that has
        to make some up: ids met in earlier outputs open the records a made-up id never finds.
        """
        others = [m for m in makers if m not in untried]
        rng.shuffle(others)
        for invent in (False, True):
            for maker in [*untried, *others]:
                args = maker.make(seen, rng, invent=invent)
                if args is not None:
                    if maker in untried:
                        untried.remove(maker)
                    return maker, args
        return None


class Spammer:
    """One call of every tool that needs nothing or only the instruction's ids, then a dump.

    Args:
        seed: the audit's seed (the spammer draws nothing at random; kept for symmetry).
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.makers = Makers()

    async def __call__(self, ctx: AgentContext) -> str:
        """Call, then answer (and tell the user) every number, id and capitalised phrase met."""
        seen = Seen()
        seen.text(ctx.task)
        given = text_values(ctx.task)[0]
        makers = self.makers(ctx)
        # Tools without a required input first: what they list says which ids go where.
        for maker in [m for m in makers if not m.required]:
            if maker.valid({}):
                seen.output((await ctx.call_tool(maker.name, {})).output, maker.name)
        for maker in [m for m in makers if m.required]:
            args = self._ids(maker, given, seen)
            if args is not None:
                seen.output((await ctx.call_tool(maker.name, args)).output, maker.name)
        met = [*seen.ids, *(_number(n) for n in seen.numbers), *seen.phrases]
        answer = "\n".join(dict.fromkeys(met))
        await _tell(ctx, answer)
        return answer

    @staticmethod
    def _ids(maker: InputMaker, given: Sequence[str], seen: Seen) -> dict[str, Any] | None:
        """Each required property an id of the instruction (the likeliest first), or ``None``.

        ``None`` too when a required property takes something else than an id (a text, a
        figure, a choice): the spammer calls only what ids from the instruction open.
        """
        args: dict[str, Any] = {}
        for key in maker.required:
            if not takes_id(key):
                return None
            known = {id_prefix(v) for v in seen.under(key) if isinstance(v, str)} - {None}
            ranked = sorted(given, key=lambda v: id_prefix(v) not in known)
            fits = [v for v in ranked if InputMaker.fits(maker.property_schema(key), v)]
            if not fits:
                return None
            args[key] = fits[0]
        return args if maker.valid(args) else None


def make_probe(name: str, seed: int) -> Probe:
    """The probe called ``name`` (one of :data:`PROBES`), seeded."""
    if name == "noop":
        return noop
    if name == "echo":
        return echo
    if name == "explorer":
        return Explorer(seed)
    if name == "spammer":
        return Spammer(seed)
    raise ValueError(f"Unknown probe {name!r}; expected one of: {', '.join(PROBES)}.")
