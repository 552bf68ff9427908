"""``run_sglang``, the SGLang strategy end to end: the options one DP group sees, its refusals
(each with the least budget that would do: ``enough_budget``), the state pool, the token pools
from the rest, and the StrategyResult with its breakdown, concurrency and start-up log."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

from flatkv.plan import LINEAR_ATTENTION, cdiv
from flatkv.profile import CacheProfile
from flatkv.strategies.base import (
    CATEGORIES,
    CHUNKED_PREFILL_OFF,
    StrategyOptions,
    StrategyResult,
    n,
    not_applicable,
)
from flatkv.strategies.sglang.chunk import (
    chunk_page_refusal,
    chunked_prefill_size,
    sglang_dsa,
    sglang_kv_dtype_refusal,
    sglang_wont_start,
)
from flatkv.strategies.sglang.concurrency import idle_pool_bytes, sglang_concurrency
from flatkv.strategies.sglang.dp import attention_dp
from flatkv.strategies.sglang.drafting import (
    SPECULATIVE_NOT_MODELLED,
    allocated_draft_buffers,
    draft_tokens,
    mamba1_draft_refusal,
    running_limit,
    speculative_not_modelled,
)
from flatkv.strategies.sglang.model import (
    pool_layers,
    pool_token_bytes,
    sglang_blocker,
    sglang_window,
    swa_label,
)
from flatkv.strategies.sglang.pages import nsa_options
from flatkv.strategies.sglang.sliding import (
    least_swa_pool,
    swa_cell,
    swa_pool_choice,
    swa_request_cap,
    swa_split,
)
from flatkv.strategies.sglang.state import (
    StatePools,
    assumed_chunk_formula,
    budget_for_spec_slots,
    budget_for_state_pool,
    draft_track_refusal,
    fixed_state_size,
    lazy_overlap_refusal,
    no_buffer_refusal,
    radix_page_refusal,
    request_slots,
    slots_per_request,
    state_pools,
    state_size_source,
    told_buffer_refusal,
    told_state,
    track_chunk_refusal,
)
from flatkv.strategies.sglang.tokens import (
    TokenPools,
    resolve_max_running_requests,
    token_pages,
    token_pools_after_state,
)
from flatkv.strategies.sglang_log import scheduler_line, start_up_log
from flatkv.units import count_text, tokens_text


def enough_budget(profile: CacheProfile, options: StrategyOptions,
                  slot_bytes: int | None) -> int:
    """A budget that holds one running request's S state slots and SGLang's padding slot, a
    page of the token pool (with state, pages of two tokens at least: it runs T // 2 requests,
    and none refuses to start), and with a hybrid SWA pool a swa pool over ``window + page``
    (SGLang's floor, ``least_swa_pool``: the window as its model reports it).

    The state pool is ``B x r / (1 + r)``, and it takes at most that, so the KV memory is at
    least ``B / (1 + r)``: ``B >= (1 + r) x`` (the KV memory the pools need) is enough. The
    exact least budget can be lower (slots come whole); this one always works, in SGLang's own
    float arithmetic too. With --max-mamba-cache-size told the state is fixed (``told_state``:
    its slots and draft-token buffers), and the KV pool's need is added to it exactly.
    """
    page = options.sglang_page_size
    n_full, n_swa = pool_layers(profile, options)
    full_bytes, swa_bytes = pool_token_bytes(profile, options)
    if cap := swa_request_cap(profile, options):  # the sliding pool fixed, a full page beside
        full_need = page if slot_bytes is None else cdiv(2, page) * page
        kv_need = cdiv(cap.tokens, page) * page * swa_bytes + full_need * full_bytes
    elif n_full and n_swa:
        rs, least = options.swa_full_tokens_ratio, least_swa_pool(profile, page)
        cell = swa_cell(full_bytes, swa_bytes, rs)
        full_need = max(page, cdiv(math.ceil(least / rs), page) * page)
        kv_need = math.ceil(full_need * Fraction(cell))  # memory // cell >= full_need
        # the float ratio can fall short of the decimal (0.57 x 100 is 56.99...): a page more
        while swa_split(kv_need, full_bytes, swa_bytes, rs, page).swa < least:
            full_need += page
            kv_need = math.ceil(full_need * Fraction(cell))
        if swa_split(kv_need, full_bytes, swa_bytes, rs, page).full < full_need:
            kv_need += math.ceil(cell)  # past 2**53 B, where a float budget rounds
    else:  # with state, two tokens: SGLang runs at most T // 2 requests (``_pool_refusal``)
        kv_need = (page if slot_bytes is None else cdiv(2, page) * page) * (full_bytes + swa_bytes)
    if slot_bytes is None:
        return kv_need
    s = slots_per_request(profile, options)[0]
    state_need = (s + 1) * slot_bytes  # and slot 0
    if fixed_state_size(options, draft_tokens(profile, options)) is not None:
        # a fixed state (told, or --disable-radix-cache's N + 1), the KV pool the rest
        slots, buffers, _ = told_state(options, slot_bytes, s, draft_tokens(profile, options))
        # state layers alone: their token pool takes no bytes, but SGLang wants some left
        return slots * slot_bytes + buffers + max(kv_need, 1)
    r = options.mamba_full_memory_ratio
    # with draft tokens the slots and their buffers take at most the state pool, so the KV
    # memory is still at least B / (1 + r)
    drafts = draft_tokens(profile, options)
    state = (budget_for_spec_slots(s, r, slot_bytes, drafts, s) if drafts
             else budget_for_state_pool(state_need, r))
    return max(state, math.ceil(kv_need * (1 + r)))


def _pool_refusal(profile: CacheProfile, options: StrategyOptions, pools: TokenPools,
                  slot_bytes: int | None) -> str | None:
    """Why SGLang would not start on these token pools (a full pool its SWA request cap leaves
    no page, a swa pool short of one window, a KV pool short of one page, or with state one of
    under two tokens: ``full_tokens`` for state layers alone, their pool of no layers, unknown
    where not ``sized``), with the budget (or context) that would do; None where they serve."""
    if pools.swa_capped and pools.full_tokens <= 0:
        return (
            f"its SWA request cap ({n(pools.swa_tokens)} tokens for max_running_requests "
            f"{n(running_limit(profile, options))}, with --disable-radix-cache) leaves no "
            f"page of the full KV pool in the {n(pools.kv_memory)} B; a "
            f"budget of {n(enough_budget(profile, options, slot_bytes))} B or more, or a "
            "smaller --max-running-requests, leaves one")
    n_full, n_swa = pool_layers(profile, options)
    page = options.sglang_page_size
    kv_memory, swa_tokens, pool_tokens = pools.kv_memory, pools.swa_tokens, pools.pool_tokens
    if n_full and n_swa and pool_tokens >= page and swa_tokens < least_swa_pool(profile, page):
        return (
            f"the swa pool ({n(swa_tokens)} tokens) cannot hold one request: it needs more "
            f"than the window ({sglang_window(profile)[1]}) + page size {page} tokens in "
            f"it; a budget of {n(enough_budget(profile, options, slot_bytes))} B or more has "
            "them" + (", as does a larger SGLang sliding/full tokens ratio "
                      "(--swa-full-tokens-ratio)" if options.swa_full_tokens_ratio < 1 else ""))
    # what else leaves the KV pool more: fewer told state slots, else (the ratio being read
    # only where none are told) a smaller share of the budget for the state
    fixed = fixed_state_size(options, draft_tokens(profile, options))
    smaller_state = ("" if not slot_bytes else
                     f", as does a smaller {state_size_source(options)[0]}"
                     if fixed is not None else
                     ", as does a smaller SGLang mamba/full memory ratio "
                     "(--mamba-full-memory-ratio)")
    if profile.has_attention and pool_tokens < page:
        return (
            f"the KV pool ({n(kv_memory)} B) holds no page of {tokens_text(page)}: a budget of "
            f"{n(enough_budget(profile, options, slot_bytes))} B or more holds one"
            + smaller_state)
    if slot_bytes and not profile.has_attention and pools.sized and pool_tokens < 2:
        least = max(2, page)  # context_len // page x page >= 2
        return (
            f"the token pool holds {n(pool_tokens)} token{'' if pool_tokens == 1 else 's'} "
            "(a model without attention layers gets context_len tokens, in whole pages "
            f"of {page}): at most T // 2 = 0 requests run, none with state (\"state cache is "
            "too small to serve any requests\"); a context of "
            f"{n(least)} tokens or more holds more")
    if slot_bytes and profile.has_attention and pool_tokens < 2:
        # resolve_max_num_reqs: at most T // 2 running, and with state none refuses to start
        # (kv_cache_configurator.py 3152-3160; a state pool sized from the budget never leaves
        # so small a KV pool beside a request's slots, told slots can)
        return (
            f"the KV pool holds {n(pool_tokens)} token: at most T // 2 = 0 requests "
            "run, none with state (\"state cache is too small to serve any "
            f"requests\"); a budget of {n(enough_budget(profile, options, slot_bytes))} B or "
            "more holds more" + smaller_state)
    return None


def _state_refusal(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                   state: StatePools, *, offer_fewer_slots: bool = True) -> str | None:
    """Why SGLang refuses to start on its state pool, with what would do; None where it
    starts: a fixed state size (``fixed_state_size``) under one request's S slots, or whose
    slots (and draft-token buffers) take the whole budget, or a pool short of one request's S
    slots and the padding slot. Where S is set (--sglang-slots-per-request) and too many, the
    most this state holds too (``_fewer_slots_clause``; not with ``offer_fewer_slots`` off,
    as that clause's own search asks)."""
    per_request = slots_per_request(profile, options)[0]
    drafts = draft_tokens(profile, options)
    told_size = fixed_state_size(options, drafts)
    flag, source = state_size_source(options)

    def fewer_slots() -> str:
        return (_fewer_slots_clause(profile, options, budget_bytes, per_request)
                if offer_fewer_slots else "")

    if told_size is not None and told_size // per_request < 1:
        return (
            f"{source} {n(told_size)} gives fewer request slots than the "
            f"{per_request} one running request holds (S); give "
            f"at least {per_request}" + fewer_slots())
    if told_size is not None and state.held >= budget_bytes:
        return (
            f"the {n(state.slots)} state slots ({source} {n(told_size)} + 1) of "
            f"{n(state.slot_bytes)} B"
            + (f" and their draft-token buffers ({n(state.buffers)} B)" if state.buffers else "")
            + f" take {n(state.held)} B, the whole budget of {n(budget_bytes)} B "
            "or more: no memory is left for the KV cache; a budget of "
            f"{n(enough_budget(profile, options, state.slot_bytes))} B or more, or a smaller "
            f"{flag}, leaves some")
    if request_slots(state.slots) // per_request < 1:
        buffered = (f" beside their draft-token buffers ({drafts} tokens verified a "
                    "step)" if drafts else "")
        return (
            f"the state pool ({n(state.state_pool)} B) holds {count_text(state.slots, 'slot')} of "
            f"{n(state.slot_bytes)} B{buffered}, fewer than {n(per_request + 1)}: one running "
            f"request needs {n(per_request)} and one is kept for padding; a budget of "
            f"{n(enough_budget(profile, options, state.slot_bytes))} B or more holds them"
            + _larger_ratio_clause(profile, options, budget_bytes, state.slot_bytes)
            + fewer_slots())
    return None


def _fewer_slots_clause(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                        per_request: int) -> str:
    """", or SGLang slots per request (--sglang-slots-per-request) of 2, the most this state
    holds" where S was set (``sglang_slots_per_request``) to more than the state holds for one
    running request: the largest S under it at which this budget's state raises no refusal
    (``_state_refusal``); "" where S is SGLang's own, or where no S of 1 or more is held (the
    pool holds the padding slot alone, or none).

    S sizes no slot where the budget sizes the pool (slots = pool // slot bytes): the pool
    holds S while ``slots - 1 >= S``. Drafting, its K request slots beside the draft-token
    buffers shrink with S but stay at least S while ``S + D`` fits the state budget in slots
    (``spec_request_slots``): both hold every S up to the most, so a binary search finds it.
    Where the state size M is fixed, S = M is the most, and the draft-token buffers (for
    min(max_running_requests, M // S) + 1 requests) are fewest at the largest S, so it alone
    is tried."""
    if options.sglang_slots_per_request is None or per_request <= 1:
        return ""

    def holds(s: int) -> bool:
        at = replace(options, sglang_slots_per_request=s)
        state = state_pools(profile, at, budget_bytes, [], {})
        return _state_refusal(profile, at, budget_bytes, state, offer_fewer_slots=False) is None

    fixed = fixed_state_size(options, draft_tokens(profile, options))
    if fixed is not None:
        most = min(fixed, per_request - 1)
        fits = most if most >= 1 and holds(most) else 0
    else:
        low, high = 0, per_request - 1  # holds(low) (0: none), and none past high
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if holds(mid) else (low, mid - 1)
        fits = low
    if not fits:
        return ""
    return (", or SGLang slots per request (--sglang-slots-per-request) of "
            f"{n(fits)}, the most this state pool holds")


# SGLang's own mamba/full memory ratio (its --mamba-full-memory-ratio default, 0.9)
OWN_RATIO = Fraction(StrategyOptions().mamba_full_memory_ratio)


def _larger_ratio_clause(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                         slot_bytes: int) -> str:
    """", as does a larger ratio r, e.g. 0.1" where r was set under SGLang's own, the state
    pool is the budget's share r / (1 + r) (no fixed state size), and a larger r up to SGLang's
    holds the slots within this budget: the small r, not the budget, starves the pool (r =
    1e-06 left granite-4.0-h-small's 76,968 B, and the only fix named was a budget of
    916,919,188,918,272 B). The example is the least power of ten above r, or SGLang's own,
    that does (``enough_budget``); none where none does."""
    if fixed_state_size(options, draft_tokens(profile, options)) is not None:
        return ""
    r, own = Fraction(options.mamba_full_memory_ratio), OWN_RATIO
    tried = sorted({own, *(Fraction(10) ** k for k in range(-6, 0))})
    for larger in (x for x in tried if r < x <= own):
        at = replace(options, mamba_full_memory_ratio=larger)
        if enough_budget(profile, at, slot_bytes) <= budget_bytes:
            return (", as does a larger SGLang mamba/full memory ratio "
                    f"(--mamba-full-memory-ratio), e.g. {float(larger):g}")
    return ""


def _breakdown(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
               pools: TokenPools, state: StatePools, running: int | None, formulas: list[str],
               extras: dict[str, object]) -> dict[str, int]:
    """The budget by category: the token pools (kv_history), the state slots and their
    draft-token buffers (state), what neither takes (unused), and where some of the pools
    hold nothing at the ``running`` requests, that part as idle_pool (``idle_pool_bytes``).
    Appends their formulas."""
    kv_bytes = pools.kv_bytes
    state_bytes, buffers = state.slot_total, state.buffers
    totals = dict.fromkeys(CATEGORIES, 0)
    totals["kv_history"] = kv_bytes
    totals["state"] = state.held
    totals["unused"] = budget_bytes - kv_bytes - state.held
    formulas.append(
        f"unused = budget - kv - state = {n(budget_bytes)} - {n(kv_bytes)} - {n(state_bytes)} = "
        f"{n(totals['unused'])}" if not buffers else
        f"unused = budget - kv - state slots - draft-token buffers = {n(budget_bytes)} - "
        f"{n(kv_bytes)} - {n(state_bytes)} - {n(buffers)} = {n(totals['unused'])} (state = "
        f"slots + buffers = {n(state.held)})"
    )
    kv_idle, state_idle = idle_pool_bytes(profile, options, pools.full_tokens, pools.swa_tokens,
                                     running, extras, formulas)
    if kv_idle or state_idle:
        totals.update(kv_history=kv_bytes - kv_idle, state=state.held - state_idle,
                      idle_pool=kv_idle + state_idle)
        formulas.append("; ".join(
            f"{category} = {n(held)} - {pool} idle {n(idle)} = {n(held - idle)}"
            for category, pool, held, idle in (("kv_history", "kv", kv_bytes, kv_idle),
                                               ("state", "state", state.held, state_idle))
            if idle))
    return totals


def _start_up_log_extras(profile: CacheProfile, options: StrategyOptions, pools: TokenPools,
                         state: StatePools, warning: str,
                         draft_buffers: tuple[int, int] | None, logged_tokens: int | None,
                         context_tokens: int | None, extras: dict[str, object], *,
                         logged_chunk: int | None = None) -> None:
    """Puts the lines SGLang logs at start-up for these pools (``start_up_log``: its pools,
    max_running_requests' ``warning``, the draft-token buffers MambaPool allocates), then its
    scheduler's summary of them (``scheduler_line``: ``logged_tokens``, the chunk, the
    max_running_requests found, ``context_tokens`` as its context_len; ``logged_chunk`` the
    chunk it prints where not the options', ``AttentionDp.logged_chunk``), in ``extras``, with
    what the log leaves out."""
    n_full, n_swa = pool_layers(profile, options)
    log = start_up_log(profile, options.sglang_page_size, n_full, n_swa, pools.full_tokens,
                       pools.swa_tokens, pool_token_bytes(profile, options), state.slots,
                       extras.get("state_tensor_bytes"), warning,
                       max_mamba_cache_size=(None if state.slots is None
                                             else request_slots(state.slots)),
                       swa_layer_bytes=profile.kv_bytes_of(swa_label(profile)),
                       draft_buffers=draft_buffers,
                       drafting=bool(draft_tokens(profile, options)),
                       layerless=bool(profile.count(LINEAR_ATTENTION))
                       and not profile.has_attention,
                       swa_split_logged=not pools.swa_capped)
    chunk = chunked_prefill_size(options)
    if logged_chunk is None:
        logged_chunk = CHUNKED_PREFILL_OFF if chunk is None else chunk
    if summary := scheduler_line(logged_tokens, logged_chunk,
                                 extras.get("max_running_requests"), context_tokens):
        log.lines.append(summary)
        extras["scheduler_line"] = summary
    if log.lines:
        extras.update(log_lines=log.lines, logged_pools=log.pools)
    if log.left_out:
        extras["log_left_out"] = log.left_out


def _start_up_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """The first of SGLang's start-up checks that refuses these options, None where all pass:
    its radix cache's (a told extra buffer, the page against it, a told no_buffer, the
    prefill chunk against the page), the drafted tokens' and the state chunk's against the
    track interval, Mamba1's drafting, lazy buffers without overlap. They read the options
    alone, not the budget, so they run before any pool is sized, as SGLang checks its server
    args before it profiles."""
    return (told_buffer_refusal(profile, options)
            or radix_page_refusal(profile, options) or no_buffer_refusal(profile, options)
            or chunk_page_refusal(profile, options)
            or draft_track_refusal(profile, options)
            or track_chunk_refusal(profile, options)
            or mamba1_draft_refusal(profile, options)
            or lazy_overlap_refusal(options))


def _note_what_is_assumed(profile: CacheProfile, options: StrategyOptions,
                          formulas: list[str], extras: dict[str, object]) -> None:
    """Says, in ``formulas`` and ``extras``, what the figures take as given rather than from
    the model: the mamba chunk SGLang's checks assumed where the model gives none
    (``assumed_chunk_formula``), drafted tokens whose buffers it leaves out
    (``speculative_not_modelled``), and that a drafter's pool of its own logs a KV line the
    figures do not size (``drafter_pool``, which the log check reads). A reader of the figures
    needs these before trusting them; none changes a pool."""
    if chunk_line := assumed_chunk_formula(profile, options):
        formulas.append(chunk_line)
    if speculative_not_modelled(profile, options):
        formulas.append(SPECULATIVE_NOT_MODELLED)
        extras["speculative_not_modelled"] = True
    if options.speculative_tokens:
        extras["drafter_pool"] = True


def _sized_pools(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                 context_tokens: int | None, formulas: list[str],
                 extras: dict[str, object]) -> tuple[StatePools, TokenPools] | str:
    """SGLang's pools out of the budget in its order: the state slots and their draft-token
    buffers first (``state_pools``, a model with state layers only), whether sliding layers
    get a pool of their own (``swa_pool_choice``), then the token pools in what is left
    (``token_pools_after_state``). Returns the first refusal instead where SGLang would not
    start on them (``_state_refusal``, ``_pool_refusal``): each names a budget that would do."""
    state = StatePools()
    if profile.count(LINEAR_ATTENTION):
        state = state_pools(profile, options, budget_bytes, formulas, extras)
        if refusal := _state_refusal(profile, options, budget_bytes, state):
            return sglang_wont_start(refusal)
    if refusal := swa_pool_choice(profile, options, formulas, extras):
        return refusal
    pools = token_pools_after_state(profile, options, budget_bytes, context_tokens, state,
                                     formulas, extras)
    if refusal := _pool_refusal(profile, options, pools, state.slot_bytes):
        return sglang_wont_start(refusal)
    return state, pools


def _page_view(profile: CacheProfile, options: StrategyOptions, pools: TokenPools,
               state: StatePools, formulas: list[str], extras: dict[str, object],
               ) -> tuple[int | None, int | None, int | None, int | None, str]:
    """SGLang's pools in the fields every layout reports, so Compare lines them up: block
    size, block bytes, blocks, capacity tokens and why that block size. With attention its
    token pool in pages (``token_pages``); a model of state layers alone has no token page,
    so its block is one state slot and there is no capacity in tokens."""
    if not profile.has_attention:
        return (None, state.slot_bytes, state.slots, None,
                "no page size: a state-only model keeps one state slot per request")
    n_full, n_swa = pool_layers(profile, options)
    return token_pages(profile, options, pools.pool_tokens, n_full, n_swa, formulas, extras)

@dataclass(frozen=True)
class _Served:
    """What runs on SGLang's pools (``_served``): the requests of the context they hold at once
    as (units held, units one request needs) of the pool that binds, None without a context;
    the warning SGLang logs beside its max_running_requests ("" where none); and what MambaPool
    allocates of the draft-token buffers (None where nothing is drafted or it is unknown)."""

    numerator: int | None
    denominator: int | None
    warning: str
    draft_buffers: tuple[int, int] | None

    @property
    def running(self) -> int | None:
        """Whole requests of the context running at once; None without a context."""
        return None if self.numerator is None else self.numerator // self.denominator


def _served(profile: CacheProfile, options: StrategyOptions, context_tokens: int | None,
            pools: TokenPools, state: StatePools, formulas: list[str],
            extras: dict[str, object]) -> _Served:
    """What runs on the sized pools, in the order SGLang settles it: the requests of the
    context they hold (``sglang_concurrency``), the max_running_requests it logs where its
    token pool is known (``resolve_max_running_requests``), then the draft-token buffers
    MambaPool allocates for those requests (``allocated_draft_buffers``), which can be fewer
    than the state budget reserved. The breakdown's idle pools and the start-up log read them."""
    numerator = denominator = None
    if context_tokens is not None:
        numerator, denominator = sglang_concurrency(
            profile, options, context_tokens, full_tokens=pools.full_tokens,
            swa_tokens=pools.swa_tokens, slots=state.slots, slot_bytes=state.slot_bytes,
            formulas=formulas, extras=extras)
    warning = (resolve_max_running_requests(profile, options, context_tokens, pools.pool_tokens,
                                     formulas, extras) if pools.sized else "")
    drafts = draft_tokens(profile, options)
    allocated = allocated_draft_buffers(profile, drafts, formulas, extras) if drafts else None
    return _Served(numerator, denominator, warning, allocated)


def run_sglang(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """SGLang's separate pools (the package's docstring), in the order it sizes them: the page size
    (its own for DeepSeek's sparse attention, ``nsa_options``) and one attention-DP group's
    share (``attention_dp``), its start-up checks of the options (``_start_up_refusal``), the
    state slots and their draft-token buffers first out of the budget and the token pools in
    what is left (``_sized_pools``), what runs on them (``_served``), then the budget by
    category (``_breakdown``), the page view (``_page_view``) and the start-up log
    (``_start_up_log_extras``). Any step may refuse, as SGLang refuses to start."""
    name = "sglang"

    def refuse(reason: str) -> StrategyResult:
        return not_applicable(name, budget_bytes, reason, profile_name=profile.name,
                              context_tokens=context_tokens)

    if blocker := sglang_blocker(profile) or sglang_kv_dtype_refusal(profile):
        return refuse(blocker)
    formulas: list[str] = []
    extras: dict[str, object] = {}
    options = nsa_options(profile, options, formulas)
    group = attention_dp(profile, options, formulas)
    if group.refusal:
        return refuse(group.refusal)
    profile, options = group.profile, group.options
    # what SGLang stores for DeepSeek's sparse attention (a Blackwell's raw fp8 layout; bfloat16
    # for a float32 or float16 model, which SGLang cannot be told)
    profile = sglang_dsa(profile, options, formulas)
    if options.sglang_attn_dp_size > 1:
        extras["attention_dp_groups"] = options.sglang_attn_dp_size
    if refusal := _start_up_refusal(profile, options):
        return refuse(sglang_wont_start(refusal))
    _note_what_is_assumed(profile, options, formulas, extras)
    sized = _sized_pools(profile, options, budget_bytes, context_tokens, formulas, extras)
    if isinstance(sized, str):
        return refuse(sized)
    state, pools = sized
    served = _served(profile, options, context_tokens, pools, state, formulas, extras)
    totals = _breakdown(profile, options, budget_bytes, pools, state, served.running, formulas,
                        extras)
    block_size, block_bytes, num_blocks, capacity, why = _page_view(profile, options, pools,
                                                                    state, formulas, extras)
    # state layers alone: its log's max_total_num_tokens is the pool of no layers
    logged_tokens = capacity if profile.has_attention else extras.get("kv_tokens")
    _start_up_log_extras(profile, options, pools, state, served.warning, served.draft_buffers,
                         logged_tokens, context_tokens, extras, logged_chunk=group.logged_chunk)
    return StrategyResult(
        strategy=name, budget_bytes=budget_bytes, applies=True, profile_name=profile.name,
        context_tokens=context_tokens, block_size=block_size, block_bytes=block_bytes,
        num_blocks=num_blocks, capacity_tokens=capacity, logged_tokens=logged_tokens,
        concurrency_numerator=served.numerator,
        concurrency_denominator=served.denominator, why_block_size=why,
        breakdown=tuple(totals.items()), formulas=tuple(formulas), extras=extras, pool=None,
    )
