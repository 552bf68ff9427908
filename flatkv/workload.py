"""Pages a workload needs, per group, and whether a paged layout covers them (SPEC section 3.5).

A paged layout hands out *units* (page ids of one page-id space, or parent blocks of a two-level
layout) to *groups* (the full-attention layers, the sliding-window layers, the state layers, or
finer engine groups such as vLLM's groups of ``group_size`` layers). A unit bound to group g
holds ``pages_per_unit`` of g's pages (1 in a single page-id space, K_g in a two-level layout).

For R live requests at context L (T = R * L tokens in flight), P tokens per page, S tokens
scheduled per step, window W, one dummy page and a safety margin, group g needs:

- full history:   ``ceil(T / P) + R + 1 + margin``
- sliding window: ``R * ceil(min(W - 1, L) / P) + ceil(min(S, T) / P) + R + 1 + margin``
- chunked:        the same with the chunk C for W (a chunked layer keeps at most the C - 1
                  earlier tokens of its chunk, as a sliding one the W - 1 of its window)
- state:          ``min(2 * R + T // P + 1 + margin, the full-history count)``
  (two live pages per request plus one snapshot page per P tokens: prefix caching's state),
                  or, told a mamba cache mode, ``R * (the mode's state pages) + 1 + margin``
                  (the engines' count, ``mode_state_pages``: what their logs and the
                  concurrency count)

The layout covers the workload when the units all groups need fit in its units. Everything is
exact integer arithmetic; ``max_requests`` bisects, so it answers at once even for huge budgets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LAYER_LABELS,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    FlatMemoryPlan,
    cdiv,
    check_int,
    check_layer_labels,
)
from flatkv.profile import WINDOWED, check_window, window_tokens

if TYPE_CHECKING:
    from flatkv.strategies.base import StrategyResult


@dataclass(frozen=True)
class PoolGroup:
    """One group drawing pages from a pool.

    name: unique within the pool (``full_attention``, or ``linear_attention.2`` for vLLM's third
        state group). kind: a layer label (full_attention, sliding_attention, chunked_attention or
        linear_attention).
    layers: real cache layers whose rows one page of this group holds.
    pages_per_unit: pages of this group one unit holds (K_g of a two-level layout, else 1).
    """

    name: str
    kind: str
    layers: int
    pages_per_unit: int = 1

    def __post_init__(self) -> None:
        if self.kind not in LAYER_LABELS:
            raise ValueError(
                f"PoolGroup.kind is {self.kind!r}: use one of {list(LAYER_LABELS)}"
            )
        check_int(f"PoolGroup({self.name}).layers", self.layers, minimum=1)
        check_int(f"PoolGroup({self.name}).pages_per_unit", self.pages_per_unit, minimum=1)


@dataclass(frozen=True)
class PagePool:
    """The units of a paged layout and the groups that share them ("plan-ish" for ``covers``)."""

    num_units: int
    block_size: int
    groups: tuple[PoolGroup, ...]
    sliding_window: int | None = None
    attention_chunk_size: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.groups, (str, bytes)) or not isinstance(self.groups, Iterable):
            raise ValueError(f"PagePool.groups is {self.groups!r}: give a list of PoolGroup")
        object.__setattr__(self, "groups", tuple(self.groups))
        for i, group in enumerate(self.groups):
            if not isinstance(group, PoolGroup):
                raise ValueError(f"PagePool.groups[{i}] is {group!r}: give a PoolGroup")
        check_int("PagePool.num_units", self.num_units)
        check_int("PagePool.block_size", self.block_size, minimum=1)
        if not self.groups:
            raise ValueError("PagePool.groups is empty: a pool needs at least one group")
        names = [g.name for g in self.groups]
        if len(set(names)) != len(names):
            raise ValueError(f"PagePool.groups has repeated names {names}: name each group once")
        kinds = {g.kind for g in self.groups}
        for label, windowed in WINDOWED.items():  # given, and only, where a group keeps one
            check_window(getattr(self, windowed.field), label, kinds)

    def window(self, kind: str) -> int | None:
        """Tokens a layer of a ``kind`` group keeps at most (window or chunk), None if all."""
        return window_tokens(kind, sliding_window=self.sliding_window,
                             attention_chunk_size=self.attention_chunk_size)


# vLLM's mamba cache modes, each a count of the state pages one request holds (``mode_state_pages``)
MAMBA_CACHE_MODES = ("none", "align", "all")


def mode_state_pages(mode: str, context_tokens: int, block_size: int, *,
                     checkpoint_blocks: int = 0, speculative_tokens: int = 0) -> int:
    """Pages one request holds in a state group at context L by mamba cache mode: ``none`` 1,
    ``align`` 2 plus its prefill checkpoint blocks, ``all`` cdiv(L, P) (vLLM's), each plus one
    page per speculative token. The one rule the engines' concurrency
    (``strategies.base.state_pages_per_request``) and a workload told a mode both count by."""
    if mode not in MAMBA_CACHE_MODES:
        raise ValueError(f"mamba_cache_mode is {mode!r}: use one of {list(MAMBA_CACHE_MODES)}")
    held = (1 if mode == "none" else 2 + checkpoint_blocks if mode == "align"
            else cdiv(context_tokens, block_size))
    return held + speculative_tokens


# Tokens scheduled per step when not told: vLLM's default max_num_batched_tokens. It sizes the
# pages a sliding-window request holds (W - 1 + S tokens of window).
DEFAULT_SCHEDULED_TOKENS = 8192


@dataclass(frozen=True)
class Workload:
    """R live requests at context L; S tokens scheduled per step; a safety margin of pages;
    N tokens a speculative decoder drafts per step (each request then holds N more state pages
    in every state group, as vLLM's ``num_speculative_blocks``). ``state_mode``: None charges
    state as prefix caching keeps it (SPEC 3.5: a snapshot every P tokens); a mamba cache mode
    charges the pages the engines count a request in it (``mode_state_pages``, with
    ``checkpoint_blocks`` in align), so a map of it agrees with the engine's concurrency."""

    requests: int
    context_tokens: int
    scheduled_tokens: int = DEFAULT_SCHEDULED_TOKENS
    margin: int = 0
    speculative_tokens: int = 0
    state_mode: str | None = None
    checkpoint_blocks: int = 0

    def __post_init__(self) -> None:
        check_int("requests", self.requests)
        check_int("context_tokens", self.context_tokens, minimum=1)
        check_int("scheduled_tokens", self.scheduled_tokens, minimum=1)
        check_int("margin", self.margin)
        check_int("speculative_tokens", self.speculative_tokens)
        check_int("checkpoint_blocks", self.checkpoint_blocks)
        if self.state_mode is not None and self.state_mode not in MAMBA_CACHE_MODES:
            raise ValueError(f"state_mode is {self.state_mode!r}: use None (prefix-caching "
                             f"snapshots) or one of {list(MAMBA_CACHE_MODES)}")

    @property
    def total_tokens(self) -> int:
        """T: tokens in flight, every request at the full context."""
        return self.requests * self.context_tokens


# pages_needed's rules in words (T = R x L tokens, S scheduled per step, m the margin, N drafted
# tokens); keep them beside the code they describe.
PAGES_NEEDED_TEXT = {
    FULL_ATTENTION: "ceil(T / P) + R + 1 + m",
    SLIDING_ATTENTION: "R x ceil(min(W - 1, L) / P) + ceil(min(S, T) / P) + R + 1 + m",
    CHUNKED_ATTENTION: "R x ceil(min(C - 1, L) / P) + ceil(min(S, T) / P) + R + 1 + m",
    LINEAR_ATTENTION: "min(2 x R + T // P + 1 + m, a full group's) + R x N",
}


def pages_needed(
    kind: str, workload: Workload, *, block_size: int, sliding_window: int | None = None,
    attention_chunk_size: int | None = None,
) -> int:
    """Pages one group of ``kind`` needs for ``workload`` (SPEC section 3.5, whose state count
    gains R x N pages with N drafted tokens: N = 0 gives SPEC's; a chunked group counts as a
    sliding one whose window is the chunk; a workload told a mamba cache mode charges state
    that mode's pages a request and a dummy page instead, R x (the mode's pages + N) + 1 + m;
    ``PAGES_NEEDED_TEXT`` in words)."""
    check_int("block_size", block_size, minimum=1)
    if not isinstance(workload, Workload):
        raise ValueError(f"workload is {workload!r}: give a Workload(requests, context_tokens)")
    if not isinstance(kind, str):
        raise ValueError(f"kind is {kind!r}: use one of {list(LAYER_LABELS)}")
    r, lc, p = workload.requests, workload.context_tokens, block_size
    t, m = workload.total_tokens, workload.margin
    full = cdiv(t, p) + r + 1 + m
    if kind == FULL_ATTENTION:
        return full
    if kind in WINDOWED:
        w = window_tokens(kind, sliding_window=sliding_window,
                          attention_chunk_size=attention_chunk_size)
        check_int(WINDOWED[kind].field, w, minimum=1)
        return r * cdiv(min(w - 1, lc), p) + cdiv(min(workload.scheduled_tokens, t), p) + r + 1 + m
    if kind == LINEAR_ATTENTION and workload.state_mode is not None:  # the engines' count
        return r * mode_state_pages(workload.state_mode, lc, p,
                                    checkpoint_blocks=workload.checkpoint_blocks,
                                    speculative_tokens=workload.speculative_tokens) + 1 + m
    if kind == LINEAR_ATTENTION:  # the drafted tokens' pages come on top of the snapshots
        return min(2 * r + t // p + 1 + m, full) + r * workload.speculative_tokens
    raise ValueError(f"kind is {kind!r}: use one of {list(LAYER_LABELS)}")


def pool_from_plan(plan: FlatMemoryPlan, *, sliding_window: int | None = None,
                   attention_chunk_size: int | None = None) -> PagePool:
    """The page pool of a planner result (``plan_tensors`` / ``plan_component_tensors``): one
    page-id space of ``num_blocks`` ids shared by its groups (group ids are layer labels)."""
    check_layer_labels(plan, reader="a workload's page count")
    layers: dict[str, set[int]] = {}
    for tensor in plan.tensors:
        for b in tensor.bindings:
            layers.setdefault(b.group_id, set()).add(b.layer)
    groups = tuple(PoolGroup(gid, gid, len(ls)) for gid, ls in layers.items())
    geo = plan.geometry
    return PagePool(geo.num_blocks, geo.block_size, groups, sliding_window, attention_chunk_size)


def as_pool(plan: PagePool | FlatMemoryPlan | StrategyResult) -> PagePool:
    """A PagePool from a PagePool, a strategy result (its ``pool``) or a FlatMemoryPlan."""
    if isinstance(plan, PagePool):
        return plan
    if isinstance(plan, FlatMemoryPlan):
        windowed = sorted({b.group_id for t in plan.tensors for b in t.bindings} & set(WINDOWED))
        if windowed:  # a plan keeps no window, which windowed groups need
            raise ValueError(f"plan has {' and '.join(windowed)} groups, whose window a "
                             "FlatMemoryPlan does not keep: pass pool_from_plan(plan, "
                             "sliding_window=..., attention_chunk_size=...) instead of the plan")
        return pool_from_plan(plan)
    pool = getattr(plan, "pool", None)
    if isinstance(pool, PagePool):
        return pool
    raise ValueError(
        f"plan is a {type(plan).__name__} without a page pool: pass a PagePool, a FlatMemoryPlan "
        "or a paged strategy result (sglang keeps separate pools; read its max_concurrency)"
    )


def group_pages(pool: PagePool | FlatMemoryPlan | StrategyResult,
                workload: Workload) -> dict[str, int]:
    """Pages each group of ``pool`` needs for ``workload``, by group name."""
    pool = as_pool(pool)
    return {
        g.name: pages_needed(g.kind, workload, block_size=pool.block_size,
                             sliding_window=pool.sliding_window,
                             attention_chunk_size=pool.attention_chunk_size)
        for g in pool.groups
    }


def units_needed(pool: PagePool | FlatMemoryPlan | StrategyResult, workload: Workload) -> int:
    """Units the workload takes: ``sum over groups of ceil(pages_g / pages_per_unit_g)``."""
    pool = as_pool(pool)
    pages: Mapping[str, int] = group_pages(pool, workload)
    return sum(cdiv(pages[g.name], g.pages_per_unit) for g in pool.groups)


def covers(pool: PagePool | FlatMemoryPlan | StrategyResult, workload: Workload) -> bool:
    """Whether ``pool`` (a PagePool, FlatMemoryPlan or paged strategy result) holds every page
    ``workload`` needs."""
    pool = as_pool(pool)
    return units_needed(pool, workload) <= pool.num_units


def max_requests(
    pool: PagePool | FlatMemoryPlan | StrategyResult, *, context_tokens: int, **workload: Any,
) -> int:
    """Largest R such that R requests at ``context_tokens`` fit in ``pool`` (0 if none fits);
    ``workload``: the rest of ``Workload``'s fields (scheduled_tokens, margin, ...).

    Every group needs more than R pages for R requests (each term carries ``+ R + 1``), so R
    is below ``num_units * max(pages_per_unit) + 1``; units needed grow with R, so bisection
    over that range is exact and takes about log2(num_units x max(pages_per_unit)) steps (18
    for 100,000 page ids: ``largest_fitting``).
    """
    pool = as_pool(pool)

    def fits(r: int) -> bool:
        return covers(pool, Workload(r, context_tokens, **workload))

    if not fits(0):
        return 0
    return largest_fitting(fits, pool.num_units * max(g.pages_per_unit for g in pool.groups) + 1)


def longest_context(
    pool: PagePool | FlatMemoryPlan | StrategyResult, *, limit: int, requests: int = 1,
    **workload: Any,
) -> int:
    """Largest L in [1, ``limit``] such that ``requests`` requests of L tokens fit in ``pool``
    (0 if as many of a single token do not): what a context that does not fit the requests
    can be lowered to, by the rule of ``covers``. Pages needed never shrink as L grows, so
    bisection over L is exact; ``limit`` bounds it, as a pool without a full-history group
    holds a request of any length once its window is reached. ``workload``: the rest of
    ``Workload``'s fields."""
    pool = as_pool(pool)
    check_int("limit", limit, minimum=1)
    check_int("requests", requests, minimum=1)
    return longest_fitting(
        lambda tokens: covers(pool, Workload(requests, tokens, **workload)), limit)


def longest_fitting(fits: Callable[[int], bool], limit: int) -> int:
    """The largest L in [1, ``limit``] with fits(L), 0 if fits(1) is false (or ``limit`` < 1):
    the longest context that fits, for a ``fits`` over token counts that stays false once false
    (a request's pages never shrink as it grows). It tries ``limit`` first (a pool without
    full history holds a request of any length once past its window), then bisects with
    ``largest_fitting``; Layout's and Budget's longest contexts and vLLM's own estimate."""
    if limit < 1 or not fits(1):
        return 0
    if fits(limit):
        return limit
    return 1 + largest_fitting(lambda n: fits(n + 1), limit - 1)  # n + 1 tokens: n from 0


def largest_fitting(fits: Callable[[int], bool], too_many: int) -> int:
    """The largest n in [0, too_many) with fits(n), for a monotone ``fits`` with fits(0) true
    and fits(too_many) false: bisection, about log2(too_many) calls, exact on huge pools."""
    lo, hi = 0, too_many
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
