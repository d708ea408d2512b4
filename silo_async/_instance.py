"""Instances of task families: built from (environment, family, seed), graded against gold.

An instance ``FAMILY#SEED`` is a pure function of its environment, family and seed: one
``random.Random`` seeded with ``"<environment>/<family>#<seed>"``
serves ``vary(world, rng)`` (when the environment has one) and then ``sample(world, rng)``. The
world is packed after ``vary``, before ``sample`` reads it (:class:`Worlds`: without ``vary``,
one packed world serves every instance); every rollout of the instance thaws its own copy. The
gold world is reached once per instance, the first time one of its rollouts is graded, and kept
as a :class:`~silo_async._goldmatch.GoldPlan`: an eval of K runs of one instance replays its
gold solution once.

:class:`InstanceCache` keeps the instances an environment built (tasks, params, plans: small)
so an eval resolves its plan once and its rollouts, and their grading, find them again.
"""

from __future__ import annotations

import marshal
import random
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ._errors import SiloError
from ._family import (
    SPLITS,
    Call,
    NoInstance,
    TaskFamily,
    canonical_params,
    check_params,
    family_invalid,
    parse_instance_id,
    split_of_params,
)
from ._goldmatch import GoldPlan, states
from ._jsonutil import Packed, pack, thaw
from ._play import RuntimeTools, as_calls, play, play_sync
from ._task import Task
from ._verify import Check, Verifier, VerifierContext, check

__all__ = ["Instance", "InstanceCache", "Worlds", "build_instance", "gold_verifier", "rng_seed"]

#: Instances an environment keeps built (task, params, gold plan: a few KB each), enough for a
#: large eval's plan to be resolved once.
CACHED_INSTANCES = 16_384
#: Varied instance worlds an environment keeps packed (a world each: tens of KB).
CACHED_WORLDS = 256
#: Bytes of compressed varied worlds kept beyond those (about a tenth of a world each).
COMPRESSED_WORLD_BYTES = 128 * 1024 * 1024

#: ``vary(world, rng) -> None``: an environment's per-instance surface changes.
Vary = Callable[[Any, random.Random], Any]


def rng_seed(environment: str, family: str, seed: int) -> str:
    """The string an instance's ``random.Random`` is seeded with."""
    return f"{environment}/{family}#{seed}"


def _raised(family: TaskFamily, seed: int, what: str, exc: Exception) -> SiloError:
    return family_invalid(family.id, seed, f"{what} raised {type(exc).__name__}: {exc}")


def _itself(world: Any) -> Any:
    return world


class Worlds:
    """Where instances' initial worlds come from: built from the seed, the recent ones kept.

    Without ``vary`` every instance starts from the same world: ``create_state()``, packed
    once (a world is a pure function of its data). With ``vary``, an instance's world is
    ``create_state()`` varied by its own ``rng``: packed when built and kept for the
    :data:`CACHED_WORLDS` most recent instances; older ones are kept compressed (up to
    :data:`COMPRESSED_WORLD_BYTES`: an eval builds every instance of its plan before the
    first rollout, and a varied world is far cheaper to inflate than to build again), and
    beyond that rebuilt (the same, from the same seed) when asked for again.
    """

    def __init__(self, environment: str, create_state: Callable[[], Any], vary: Vary | None):
        """Build the worlds of ``environment``'s instances."""
        self.environment = environment
        self.create_state = create_state
        self.vary = vary
        self._pristine: Packed | None = None
        self._kept: OrderedDict[str, Packed] = OrderedDict()
        self._cold: OrderedDict[str, bytes] = OrderedDict()
        self._cold_bytes = 0

    def pristine(self) -> Packed:
        """``create_state()``, packed once."""
        if self._pristine is None:
            self._pristine = pack(self.create_state())
        return self._pristine

    def build(self, family: str, seed: int) -> tuple[Any, random.Random, Packed]:
        """A new instance's world, its ``rng`` and the world packed.

        The world is live (``sample`` reads it), the ``rng`` has served ``vary``, and the
        packed copy was taken before ``sample`` could touch the world.
        """
        rng = random.Random(rng_seed(self.environment, family, seed))
        if self.vary is None:
            pristine = self.pristine()
            return thaw(pristine), rng, pristine
        world = self.create_state()
        self.vary(world, rng)
        packed = pack(world)
        self._keep(f"{family}#{seed}", packed)
        return world, rng, packed

    def packed(self, family: str, seed: int) -> Packed:
        """Instance ``family#seed``'s initial world, packed (kept, or built again)."""
        if self.vary is None:
            return self.pristine()
        key = f"{family}#{seed}"
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        cold = self._cold.pop(key, None)
        if cold is not None:
            self._cold_bytes -= len(cold)
            packed: Packed = marshal.loads(zlib.decompress(cold))
            self._keep(key, packed)
            return packed
        world = self.create_state()
        self.vary(world, random.Random(rng_seed(self.environment, family, seed)))
        packed = pack(world)
        self._keep(key, packed)
        return packed

    def _keep(self, key: str, packed: Packed) -> None:
        self._kept[key] = packed
        if len(self._kept) > CACHED_WORLDS:
            self._chill(*self._kept.popitem(last=False))

    def _chill(self, key: str, packed: Packed) -> None:
        """Keep a world let go from the hot set compressed, within the byte budget."""
        if not isinstance(packed, dict):  # not plain data: rebuilt when asked for again
            return
        cold = zlib.compress(marshal.dumps(packed), 1)
        self._cold[key] = cold
        self._cold_bytes += len(cold)
        while self._cold_bytes > COMPRESSED_WORLD_BYTES:
            self._cold_bytes -= len(self._cold.popitem(last=False)[1])


@attrs.define(eq=False)
class Instance:
    """One built instance: its task, its params and, once graded, its gold plan.

    Attributes:
        task: the instance's :class:`~silo_async.Task`.
        family: its family.
        params: its params (the family functions' own copy).
        worlds: where its initial world comes from (:attr:`snapshot`).
        plan: what its gold solution changes, once first needed.
        as_json: the environment's JSON form of a world (``snapshot=``; else the world).
    """

    task: Task
    family: TaskFamily
    params: dict[str, Any]
    worlds: Worlds = attrs.field(repr=False)
    plan: GoldPlan | None = None
    as_json: Callable[[Any], Any] = attrs.field(default=_itself, repr=False)
    _calls: list[Call] | None = None

    @property
    def seed(self) -> int:
        """The instance's seed."""
        assert self.task.seed is not None
        return self.task.seed

    @property
    def snapshot(self) -> Packed:
        """The instance's initial world, packed: every rollout thaws its own copy."""
        return self.worlds.packed(self.family.id, self.seed)

    def gold_calls(self) -> list[Call]:
        """``family.gold(params)`` as :class:`~silo_async.Call` values.

        Raises:
            SiloError: ``family_invalid`` when gold raises or returns something else.
        """
        if self._calls is None:
            try:
                self._calls = as_calls(self.family.gold(self.params))
            except Exception as exc:
                raise _raised(self.family, self.seed, "gold()", exc) from exc
        return self._calls

    def fresh_world(self) -> Any:
        """A fresh copy of the instance's initial world."""
        return thaw(self.snapshot)

    def answer(self) -> str | None:
        """The fact the answer must state, or ``None`` when the family asks none.

        Raises:
            SiloError: ``family_invalid`` when ``answer`` raises or gives no text.
        """
        if self.family.answer is None:
            return None
        try:
            said = self.family.answer(self.params)
        except Exception as exc:
            raise _raised(self.family, self.seed, "answer()", exc) from exc
        if not isinstance(said, str) or not said.strip():
            raise family_invalid(
                self.family.id, self.seed, f"answer() returned {said!r:.60}; it must be text."
            )
        return said


def build_instance(
    worlds: Worlds,
    family: TaskFamily,
    seed: int,
    as_json: Callable[[Any], Any] | None = None,
) -> Instance:
    """Build instance ``family.id#seed`` of ``worlds``' environment.

    Raises:
        SiloError: ``task_not_found`` when ``sample`` raises :class:`NoInstance` (naming its
            reason); ``family_invalid`` when a family function raises or returns something
            that is not what it must be.
    """
    built = try_instance(worlds, family, seed, as_json)
    if isinstance(built, NoInstance):
        reason = built.reason or "sample() raised NoInstance"
        environment, task_id = worlds.environment, f"{family.id}#{seed}"
        raise SiloError(
            "task_not_found",
            f'Task "{task_id}" was not found in environment "{environment}": family '
            f'"{family.id}" has no instance for seed {seed} ({reason}).',
            {"environment": environment, "task": task_id, "family": family.id, "reason": reason},
        )
    return built


def try_instance(
    worlds: Worlds,
    family: TaskFamily,
    seed: int,
    as_json: Callable[[Any], Any] | None = None,
) -> Instance | NoInstance:
    """:func:`build_instance`, with the :class:`NoInstance` of a seed without one returned.

    Raises:
        SiloError: ``family_invalid`` (see :func:`build_instance`).
    """
    world, rng, _ = worlds.build(family.id, seed)
    try:
        sampled = family.sample(world, rng)
    except NoInstance as exc:
        return exc
    except Exception as exc:
        raise _raised(family, seed, "sample()", exc) from exc
    params = check_params(family.id, seed, sampled)
    task = _task(family, seed, f"{family.id}#{seed}", params)
    return Instance(task, family, params, worlds, as_json=as_json or _itself)


def _task(family: TaskFamily, seed: int, task_id: str, params: dict[str, Any]) -> Task:
    try:
        instruction = family.instruction(params)
    except Exception as exc:
        raise _raised(family, seed, "instruction()", exc) from exc
    try:
        user = None if family.user is None else family.user(params)
    except Exception as exc:
        raise _raised(family, seed, "user()", exc) from exc
    if not isinstance(instruction, str) or not instruction.strip():
        raise family_invalid(
            family.id, seed, f"instruction() returned {instruction!r:.60}; it must be text."
        )
    try:
        return Task(
            task_id,
            family.title,
            instruction,
            family.id,
            family.difficulty,
            user,
            family=family.id,
            seed=seed,
            params=params,
        )
    except SiloError as exc:
        raise family_invalid(family.id, seed, f"user() gave a user that {exc.message}") from None


class InstanceCache:
    """An environment's instances by id: built on first use, the recent ones kept."""

    def __init__(
        self,
        environment: str,
        families: Mapping[str, TaskFamily],
        create_state: Callable[[], Any],
        vary: Vary | None,
        as_json: Callable[[Any], Any] | None = None,
    ) -> None:
        """Serve the instances of ``families`` in ``environment``."""
        self.environment = environment
        self.families = families
        self.worlds = Worlds(environment, create_state, vary)
        self.as_json = as_json
        self._kept: OrderedDict[str, Instance] = OrderedDict()

    def _not_found(self, task_id: str, why: str) -> SiloError:
        return SiloError(
            "task_not_found",
            f'Task "{task_id}" was not found in environment "{self.environment}": {why}',
            {"environment": self.environment, "task": task_id, "families": sorted(self.families)},
        )

    def get(self, task_id: str) -> Instance:
        """Instance ``task_id`` (``FAMILY#SEED``), built now unless kept.

        Raises:
            SiloError: ``task_not_found`` for a malformed seed, an unknown family or a seed
                without instance; ``family_invalid`` (see :func:`build_instance`).
        """
        kept = self._kept.get(task_id)
        if kept is not None:
            self._kept.move_to_end(task_id)
            return kept
        parsed = parse_instance_id(task_id)
        if parsed is None:
            raise self._not_found(
                task_id,
                "an instance id is FAMILY#SEED, the seed 0 or digits without a leading zero "
                '(e.g. "reassign-account#17").',
            )
        name, seed = parsed
        family = self.families.get(name)
        if family is None:
            known = ", ".join(sorted(self.families)) or "none"
            raise self._not_found(task_id, f'it has no task family "{name}". Families: {known}.')
        built = build_instance(self.worlds, family, seed, self.as_json)
        self._keep(task_id, built)
        return built

    def _keep(self, task_id: str, instance: Instance) -> None:
        self._kept[task_id] = instance
        if len(self._kept) > CACHED_INSTANCES:
            self._kept.popitem(last=False)

    def family(self, family_id: str) -> TaskFamily:
        """The family with this id.

        Raises:
            SiloError: ``task_not_found`` naming the families that exist.
        """
        found = self.families.get(family_id)
        if found is None:
            known = ", ".join(sorted(self.families)) or "none"
            raise SiloError(
                "task_not_found",
                f'Environment "{self.environment}" has no task family "{family_id}". '
                f"Families: {known}.",
                {"environment": self.environment, "family": family_id},
            )
        return found

    def scan(self, family_id: str, count: int, split: str, start: int) -> list[Instance]:
        """The first ``count`` distinct instances of ``split`` from seed ``start`` upward.

        Seeds without an instance are skipped, an instance whose params an earlier seed gave
        is not counted again, and no more than ``100 * count`` seeds are looked at.

        Raises:
            SiloError: ``task_not_found`` for an unknown family, or when fewer than ``count``
                instances are found (naming family, split and count); ``family_invalid``.
            ValueError: ``count`` below 1, ``start`` below 0 or an unknown ``split``.
        """
        family = self.family(family_id)
        check_scan(count, split, start)
        limit = SCAN_FACTOR * count
        seen: set[bytes] = set()
        found: list[Instance] = []
        for seed in range(start, start + limit):
            task_id = f"{family.id}#{seed}"
            instance = self._kept.get(task_id) or try_instance(
                self.worlds, family, seed, self.as_json
            )
            if isinstance(instance, NoInstance):
                continue
            key = canonical_params(instance.params)
            if key in seen:
                continue
            seen.add(key)
            if split_of_params(instance.params) != split:
                continue
            self._keep(task_id, instance)  # only what is asked for is kept
            found.append(instance)
            if len(found) == count:
                return found
        raise SiloError(
            "task_not_found",
            f'Task family "{family.id}" of environment "{self.environment}" has '
            f"{len(found)} distinct {split} instances among seeds {start} to "
            f"{start + limit - 1}, fewer than the {count} asked for (a scan looks at "
            f"{SCAN_FACTOR} seeds per instance asked). Ask for fewer, or another split.",
            {
                "environment": self.environment,
                "family": family.id,
                "split": split,
                "count": count,
                "found": len(found),
            },
        )


#: Seeds a scan looks at per instance asked for.
SCAN_FACTOR = 100


def check_scan(count: int, split: str, start: int) -> None:
    """Refuse a scan that cannot be asked.

    Raises:
        ValueError: ``count`` below 1, ``start`` below 0 or a split that is not train/test.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a whole number >= 1; got {count!r}.")
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start must be a whole number >= 0; got {start!r}.")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; got {split!r}.")


def _graded(
    instance: Instance, final: Any, initial: Any, ctx: VerifierContext, plan: GoldPlan
) -> list[Check]:
    """The record checks and ``nothing else changed``, then the answer, then extra checks.

    ``final`` is the live world (what ``checks`` gets); ``plan`` compares its JSON form.
    """
    json_world = instance.as_json is _itself
    packed = instance.snapshot if json_world else None
    checks = plan.checks(instance.as_json(final), initial, packed)
    answer = instance.answer()
    if answer is not None:
        checks.append(check(f'the answer states "{answer}"', states(ctx.agent_output, answer)))
    extra = instance.family.checks
    if extra is not None:
        more = extra(final, initial, ctx, instance.params)
        if not isinstance(more, list | tuple) or not all(isinstance(c, Check) for c in more):
            raise family_invalid(
                instance.family.id,
                instance.seed,
                f"checks() returned {type(more).__name__}; it must return a list of "
                "silo.check(...)/silo.optional(...).",
            )
        checks.extend(more)
    return checks


def gold_verifier(
    family: TaskFamily,
    instance_of: Callable[[Task], Instance],
    runtime_tools: RuntimeTools,
    as_json: Callable[[Any], Any],
) -> Verifier:
    """The verifier of ``family``'s instances: the final world against the gold world.

    The gold world is reached once per instance (its plan kept on the instance): at once when
    every gold call names a ``def`` tool, else awaited (the body then returns a coroutine).
    A gold call answering an error raises, so the rollout's reward is an environment fault.
    Worlds are compared as JSON (``as_json``: the environment's snapshot of a world).
    """

    def planned(instance: Instance, gold: Any, initial: Any, packed: Packed) -> GoldPlan:
        json_world = instance.as_json is _itself
        plan = GoldPlan.of(as_json(gold), initial, family.ignore, packed if json_world else None)
        instance.plan = plan
        return plan

    def reach(instance: Instance, initial: Any) -> GoldPlan | None:
        packed = instance.snapshot
        world = thaw(packed)
        if not play_sync(runtime_tools, world, instance.gold_calls()):
            return None
        return planned(instance, world, initial, packed)

    async def reach_async(
        instance: Instance, final: Any, initial: Any, ctx: VerifierContext
    ) -> list[Check]:
        packed = instance.snapshot
        world = await play(runtime_tools, thaw(packed), instance.gold_calls())
        return _graded(instance, final, initial, ctx, planned(instance, world, initial, packed))

    def grade(final: Any, initial: Any, ctx: VerifierContext) -> Any:
        instance = instance_of(ctx.task)
        plan = instance.plan or reach(instance, initial)
        if plan is None:
            return reach_async(instance, final, initial, ctx)
        return _graded(instance, final, initial, ctx, plan)

    return Verifier(id=family.id, task_id=family.id, fn=grade, name=family.title)
