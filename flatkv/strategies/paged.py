"""The common tail of every paged strategy: units shared by groups -> a StrategyResult.

A paged layout is ``num_units`` units of ``unit_bytes`` bytes (page ids of one page-id space, or
parent blocks of a two-level layout) shared by groups; ``uses`` says how a unit's bytes divide
when each group owns it. From that this module derives capacity, concurrency, the budget
breakdown (ownership convention in ``base``), the SPEC section 3.5 workload answer and the
formulas that explain them, identically for every strategy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from flatkv.plan import LINEAR_ATTENTION, cdiv
from flatkv.profile import WINDOWED, CacheProfile, group_name, pool_group_name
from flatkv.strategies.base import (
    StrategyOptions,
    StrategyResult,
    UnitUse,
    kind_runs,
    n,
    ownership_text,
    ownership_weights,
    request_pages,
    request_pages_text,
    state_pages_per_request,
    unit_breakdown,
)
from flatkv.units import concurrency_text, count_text, logged_concurrency_note, tokens_text
from flatkv.workload import (
    PAGES_NEEDED_TEXT,
    PagePool,
    PoolGroup,
    largest_fitting,
    max_requests,
)


def label_groups(profile: CacheProfile) -> list[PoolGroup]:
    """One group per layer label, in order of first appearance (the flat planner's groups)."""
    counts: dict[str, int] = {}
    for label in profile.layer_types:
        counts[label] = counts.get(label, 0) + 1
    return [PoolGroup(label, label, k) for label, k in counts.items()]


def capacity_pages(groups: Sequence[PoolGroup], pages: int, options: StrategyOptions,
                   block_size: int) -> dict[str, int]:
    """Pages each group holds at the capacity convention (``base``) when every attention group
    holds ``pages`` pages: a state group holds one request's state pages at ``pages * P``
    tokens, as ``state_pages_per_request`` counts them (mode none 1, align 2 plus prefill
    checkpoint blocks, all ``pages``; plus one per speculative token)."""
    return {
        g.name: state_pages_per_request(options, pages * block_size, block_size)
        if g.kind == LINEAR_ATTENTION else pages
        for g in groups
    }


def history_pages(num_units: int, groups: Sequence[PoolGroup], options: StrategyOptions,
                  block_size: int) -> int:
    """Largest N whose ``capacity_pages`` fit: ``sum over groups of pages_g / K_g <=
    num_units``, a group's pages counted in units as max_concurrency counts them (exact
    fractions: a unit of K_g pages is shared by many requests' pages); 0 when not even the
    state pages fit. Needs an attention group."""

    def fits(pages: int) -> bool:
        held = capacity_pages(groups, pages, options, block_size)
        return sum(Fraction(held[g.name], g.pages_per_unit) for g in groups) <= num_units

    if not fits(0):
        return 0
    # An attention group alone needs hi / K > num_units units at hi: fits(lo), not fits(hi).
    k = max(g.pages_per_unit for g in groups if g.kind != LINEAR_ATTENTION)
    return largest_fitting(fits, num_units * k + 1)


def capacity_text(num_units: int, groups: Sequence[PoolGroup], options: StrategyOptions,
                  pages: int, block_size: int, unit_name: str) -> str:
    """The capacity formula with its numbers."""
    capacity = pages * block_size
    history = [g for g in groups if g.kind != LINEAR_ATTENTION]
    state = [g for g in groups if g.kind == LINEAR_ATTENTION]
    mode = options.mamba_cache_mode
    # what the mode's state pages include beyond its own: checkpoint blocks, drafted tokens
    more = f", {options.speculative_tokens} speculative" if options.speculative_tokens else ""
    if mode == "align" and options.prefill_checkpoint_blocks:
        more = f", {options.prefill_checkpoint_blocks} prefill checkpoint" + more
    if all(g.pages_per_unit == 1 for g in groups) and (not state or mode != "all"):
        held = state_pages_per_request(options, 0, block_size)
        state_term = (
            f"({n(num_units)} - {count_text(len(state), 'state group')} x "
            f"{count_text(held, 'page')} per request, mode {mode}{more})" if state
            else n(num_units)
        )
        n_text = f"{state_term} // {count_text(len(history), 'attention group')}"
        if num_units < len(state) * held:  # the state pages alone take more than the pool
            n_text = f"max(0, {n_text}) (not even the state pages fit)"
        return (
            f"capacity_tokens = N x P, N = {n_text} = {n(pages)}; {n(pages)} x {n(block_size)} = "
            f"{n(capacity)}"
        )
    if all(g.pages_per_unit == 1 for g in groups) and not options.speculative_tokens:
        return (
            f"capacity_tokens = N x P, N = {n(num_units)} // {len(groups)} groups (mode all: a "
            f"state group holds N pages too) = {n(pages)}; {n(pages)} x {n(block_size)} = "
            f"{n(capacity)}"
        )
    state_part = (
        f" and each state group one request's state pages (mode {mode}{more})" if state
        else ""
    )
    return (
        f"capacity_tokens = N x P = {n(pages)} x {n(block_size)} = {n(capacity)}, N the most "
        f"pages each attention group holds{state_part}: sum over groups of pages_g / K_g <= "
        f"{n(num_units)} {unit_name}"
    )


def _paged_concurrency(groups: Sequence[PoolGroup], per_request: dict[str, int],
                       num_units: int, context_tokens: int, block_sizes: Mapping[str, int],
                       options: StrategyOptions, profile: CacheProfile, unit_name: str,
                       lines: list[str]) -> tuple[int, int]:
    """max_concurrency as an exact fraction ``(numerator, denominator)``: the page ids over what
    one request needs of them, a group's pages counted ``1 / pages_per_unit`` of a page id.
    Appends the formula and each kind's pages per request."""
    need = sum((Fraction(per_request[g.name], g.pages_per_unit) for g in groups), Fraction(0))
    numerator, denominator = num_units * need.denominator, need.numerator
    pages = [n(per_request[g.name]) + ("" if g.pages_per_unit == 1 else f" / {g.pages_per_unit}")
             for g in groups]
    terms = " + ".join(
        f"{pages[at[0]]} {name}" if len(at) == 1
        else f"{name} x {pages[at[0]]}" if len({pages[i] for i in at}) == 1
        else f"{' + '.join(pages[i] for i in at)} over {name}"
        for name, at in kind_runs(groups, mla=profile.mla)
    )
    concurrency = Fraction(numerator, denominator)
    lines.append(
        f"max_concurrency = {unit_name} / {unit_name} per request = {n(num_units)} / "
        f"({terms}) = {concurrency_text(concurrency)} at {n(context_tokens)} tokens"
        + logged_concurrency_note(concurrency)
    )
    for kind in dict.fromkeys(g.kind for g in groups):
        lines.append(
            f"  pages per request, {group_name(kind, mla=profile.mla)}: "
            + request_pages_text(kind, context_tokens, block_sizes[kind], options,
                                 profile.window(kind))
        )
    return numerator, denominator


def tokens_every_group_holds(num_units: int, block_sizes: Mapping[str, int],
                             groups: Sequence[PoolGroup]) -> int:
    """Capacity where attention groups page by different block sizes (vLLM's smaller pages
    scaled up to its largest): the most tokens T that every group holds at once, ``sum over
    groups of ceil(T / P_g) <= num_units``."""
    def fits(tokens: int) -> bool:
        return sum(cdiv(tokens, block_sizes[g.kind]) for g in groups) <= num_units

    return largest_fitting(fits, num_units * max(block_sizes.values()) + 1)


def _workload_lines(profile: CacheProfile, pool: PagePool, context_tokens: int,
                    options: StrategyOptions, extras: dict[str, object]) -> list[str]:
    """The SPEC 3.5 workload (prefix-cache state snapshots) beside max_concurrency, and why the
    two counts differ. Sets ``extras["workload_max_requests"]``."""
    if not profile.has_attention:
        return ["workload: not computed, a state-only model has no history pages"]
    block_size = pool.block_size
    fits = max_requests(
        pool, context_tokens=context_tokens, scheduled_tokens=options.max_batched_tokens,
        margin=options.margin, speculative_tokens=options.speculative_tokens,
    )
    extras["workload_max_requests"] = fits
    lines = [
        f"workload with prefix-cache state snapshots (one dummy page a group, margin "
        f"{options.margin}): at most {count_text(fits, 'request')} of "
        f"{tokens_text(context_tokens)} fit"
        + (", a what-if that charges a snapshot every P tokens in any mamba cache mode, not "
           "max_concurrency" if profile.has_state else "")
    ]
    if profile.has_state:
        lines.append(
            f"  it charges each state group {PAGES_NEEDED_TEXT[LINEAR_ATTENTION]} pages (two "
            "live pages per request plus a snapshot every P tokens, and one per drafted token: "
            f"N = {options.speculative_tokens}), while max_concurrency counts a request's "
            "state pages as the engine's log does, "
            + request_pages_text(LINEAR_ATTENTION, context_tokens, block_size, options, None)
            + "; both hold, for different workloads"
        )
    for kind in profile.windowed_labels:
        name = WINDOWED[kind].name
        lines.append(
            f"  it charges a {name} group {PAGES_NEEDED_TEXT[kind]} pages (the S tokens "
            "scheduled per step once, for all requests), while max_concurrency counts a "
            f"request's {name} pages as the engine's log does (S for each), "
            + request_pages_text(kind, context_tokens, block_size, options, profile.window(kind))
            + "; both hold, for different workloads"
        )
    return lines


def _capacity(profile: CacheProfile, groups: Sequence[PoolGroup], num_units: int,
              block_size: int, block_sizes: Mapping[str, int], options: StrategyOptions,
              unit_name: str) -> tuple[int | None, dict[str, int] | None, str]:
    """``capacity_tokens`` at the capacity convention (``base``), the pages each group holds
    there (None without attention) and its formula line: where attention kinds page by
    different block sizes, the most tokens every group holds at once; else N pages of every
    attention group beside one request's state pages."""
    if len(set(block_sizes.values())) > 1:
        capacity = tokens_every_group_holds(num_units, block_sizes, groups)
        terms = " + ".join(f"ceil(T / {n(block_sizes[g.kind])})" for g in groups)
        return (capacity, {g.name: cdiv(capacity, block_sizes[g.kind]) for g in groups},
                f"capacity_tokens = the most tokens T every group holds at once, {terms} "
                f"<= {n(num_units)} {unit_name}: T = {n(capacity)}")
    if not profile.has_attention:
        return None, None, ("capacity_tokens: none, a model without attention keeps no token "
                            "history")
    pages = history_pages(num_units, groups, options, block_size)
    return (pages * block_size, capacity_pages(groups, pages, options, block_size),
            capacity_text(num_units, groups, options, pages, block_size, unit_name))


def _request_pages_and_concurrency(
    profile: CacheProfile, groups: Sequence[PoolGroup], num_units: int,
    context_tokens: int | None, block_sizes: Mapping[str, int], options: StrategyOptions,
    unit_name: str, lines: list[str],
) -> tuple[dict[str, int] | None, int | None, int | None]:
    """The pages one request of the context holds in each group, and the max concurrency as a
    fraction those give over ``num_units`` (its formula lines onto ``lines``); all None
    without a context."""
    if context_tokens is None:
        return None, None, None
    per_request = {
        g.name: request_pages(g.kind, context_tokens, block_sizes[g.kind], options,
                              profile.window(g.kind))
        for g in groups
    }
    numerator, denominator = _paged_concurrency(groups, per_request, num_units,
                                                context_tokens, block_sizes, options,
                                                profile, unit_name, lines)
    return per_request, numerator, denominator


def _waste_lines(uses: Sequence[UnitUse], *, budget_bytes: int, unit_bytes: int,
                 num_units: int, unit_name: str, mla: bool) -> list[str]:
    """The formula lines for the bytes no group uses: each group's dead weight a page id (the
    rows other groups keep in it), then the budget left over past the last whole unit."""
    lines = []
    for use in uses:
        dead = use.parts.get("dead_weight", 0)
        if dead:
            lines.append(
                f"dead_weight of a {pool_group_name(use.group.name, use.group.kind, mla=mla)} "
                f"page id: {n(dead)} B of other groups' rows"
            )
    lines.append(f"unused = budget - {unit_name} x block_bytes = {n(budget_bytes)} - "
                 f"{n(num_units)} x {n(unit_bytes)} = {n(budget_bytes - num_units * unit_bytes)}")
    return lines


def finish_paged(
    strategy: str,
    profile: CacheProfile,
    *,
    budget_bytes: int,
    context_tokens: int | None,
    options: StrategyOptions,
    block_size: int,
    unit_bytes: int,
    num_units: int,
    uses: Sequence[UnitUse],
    why_block_size: str,
    formulas: Sequence[str],
    extras: dict[str, object] | None = None,
    unit_name: str = "page ids",
    kind_block_sizes: Mapping[str, int] | None = None,
) -> StrategyResult:
    """Assemble the result of a paged layout (see the module docstring). ``kind_block_sizes``:
    the block size of each kind whose pages hold other than ``block_size`` tokens (vLLM's
    full layers beside sliding ones of larger pages), for a model without state layers."""
    groups = [u.group for u in uses]
    lines = list(formulas)
    extras = dict(extras or {})
    block_sizes = {g.kind: block_size for g in groups} | dict(kind_block_sizes or {})
    mixed = len(set(block_sizes.values())) > 1

    capacity, held, capacity_line = _capacity(profile, groups, num_units, block_size,
                                              block_sizes, options, unit_name)
    lines.append(capacity_line)

    per_request, numerator, denominator = _request_pages_and_concurrency(
        profile, groups, num_units, context_tokens, block_sizes, options, unit_name, lines)

    breakdown, owned = unit_breakdown(
        budget_bytes=budget_bytes, unit_bytes=unit_bytes, num_units=num_units, uses=uses,
        weights=ownership_weights(groups, per_request if per_request is not None else held),
    )
    lines.append(ownership_text(uses, owned, unit_name, context_tokens is not None,
                                held is not None, mla=profile.mla))
    lines += _waste_lines(uses, budget_bytes=budget_bytes, unit_bytes=unit_bytes,
                          num_units=num_units, unit_name=unit_name, mla=profile.mla)

    pool = PagePool(num_units, block_size, tuple(groups), profile.sliding_window,
                    profile.attention_chunk_size)
    if context_tokens is not None and mixed:
        lines.append("workload (the pages a workload needs per group): not computed "
                     "where groups page by different block sizes")
    elif context_tokens is not None:
        lines += _workload_lines(profile, pool, context_tokens, options, extras)
    extras.setdefault("groups", [
        {"name": g.name, "kind": g.kind, "layers": g.layers, "pages_per_unit": g.pages_per_unit}
        | ({"block_size": block_sizes[g.kind]} if mixed else {})
        for g in groups
    ])
    extras["owned_units"] = {g.name: k for g, k in zip(groups, owned, strict=True)}
    return StrategyResult(
        strategy=strategy,
        budget_bytes=budget_bytes,
        applies=True,
        profile_name=profile.name,
        context_tokens=context_tokens,
        block_size=block_size,
        block_bytes=unit_bytes,
        num_blocks=num_units,
        capacity_tokens=capacity,
        concurrency_numerator=numerator,
        concurrency_denominator=denominator,
        why_block_size=why_block_size,
        breakdown=breakdown,
        formulas=tuple(lines),
        extras=extras,
        pool=pool,
    )


def history_or_state(kind: str) -> str:
    """The breakdown category of a group's real rows."""
    return "state" if kind == LINEAR_ATTENTION else "kv_history"


def group_page(profile: CacheProfile, group: PoolGroup, block_size: int) -> tuple[int, str]:
    """One page of ``group`` at P = ``block_size``: the bytes of its layers' rows side by side
    (a state row whatever P, a history row P tokens of its kind's bytes), and that product in
    the formulas' words (``36 x 548,864``, ``12 x 544 x 1,024``)."""
    if history_or_state(group.kind) == "state":
        each = profile.state_bytes_per_layer
        return group.layers * each, f"{group.layers} x {n(each)}"
    each = profile.kv_bytes_of(group.kind)
    return group.layers * block_size * each, f"{group.layers} x {n(block_size)} x {n(each)}"
