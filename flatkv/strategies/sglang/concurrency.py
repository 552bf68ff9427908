"""How many requests at a context SGLang's pools hold at once (``sglang_concurrency``): each pool's
limit (the token pool, the sliding pool, the state slots, the running cap), the least of them,
and the bytes each pool holds idle at that concurrency (``split_idle``, ``idle_pool_bytes``), which
the breakdown and the app show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import NamedTuple

from flatkv.plan import cdiv
from flatkv.profile import CacheProfile
from flatkv.strategies.base import WINDOW_SPANS, StrategyOptions, StrategyResult, n, window_span
from flatkv.strategies.sglang.chunk import UNCHUNKED_SPAN, chunked_prefill_size
from flatkv.strategies.sglang.drafting import draft_tokens, running_request_limit
from flatkv.strategies.sglang.model import pool_layers, sglang_window, swa_label, token_bytes_of
from flatkv.strategies.sglang.sliding import (
    SWA_EVICTION_INTERVAL,
    estimate_swa_kv_tokens,
    swa_request_terms,
)
from flatkv.strategies.sglang.state import request_slots, slots_per_request
from flatkv.units import concurrency_text


def sglang_concurrency(
    profile: CacheProfile, options: StrategyOptions, context_tokens: int, *, full_tokens: int,
    swa_tokens: int, slots: int | None, slot_bytes: int | None, formulas: list[str],
    extras: dict[str, object],
) -> tuple[int, int]:
    """Requests of ``context_tokens`` the pools hold at once, as (units held, units one request
    needs) of the pool that binds: a request holds whole pages of each token pool,
    ceil(tokens / page) of them, and S state slots. Adds its formulas and, where the budget is
    split statically between pools (state slots beside attention, or a full and a sliding /
    chunked token pool), what the split leaves idle at the requests that run."""
    pools = _held_pools(profile, options, full_tokens=full_tokens, swa_tokens=swa_tokens,
                        slots=slots, slot_bytes=slot_bytes)
    limits = _pool_limits(profile, options, context_tokens, pools)
    least = min(limits.given(), key=lambda limit: Fraction(limit.held, limit.per_request))
    numerator, denominator, binding = least.held, least.per_request, least.name
    best = Fraction(numerator, denominator)
    extras["binding_limit"] = binding
    if limits.swa is not None and limits.swa.why:
        formulas.append(limits.swa.why)
    formulas.append(_concurrency_formula(limits.given(), best, binding))
    running = int(best)
    if not (pools.with_state or (pools.n_full and pools.n_swa)):  # one pool: nothing is split
        return numerator, denominator
    if not running:  # use says nothing of a split no request runs in
        formulas.append(f"static split: not one request of {n(context_tokens)} tokens fits, "
                        "so none runs; the pools are drawn as reserved")
        return numerator, denominator
    idle_extras, idle = _split_idle(running, pools, limits)
    extras.update(idle_extras)
    if idle:
        formulas.append(f"static split at {n(running)} request{'' if running == 1 else 's'}: "
                        f"{' and '.join(idle)} sit idle")
    return numerator, denominator


class _HeldPools(NamedTuple):
    """SGLang's pools at the budget as ``sglang_concurrency`` reads them, gathered once so
    each limit and the idle figures read the same: the token pools' tokens, layers and bytes a
    token, and the state slots."""

    page: int  # tokens a page of each token pool
    s: int  # state slots a running request holds (slots_per_request)
    n_full: int  # layers of the full (kv) token pool
    n_swa: int  # layers of the sliding (or chunked) token pool
    full_tokens: int
    swa_tokens: int
    full_bytes: int  # a full token's bytes over the layers that store
    swa_bytes: int  # a swa token's bytes over the layers that store
    slots: int | None  # state slots, SGLang's padding slot included (None: no state pool)
    slot_bytes: int | None

    @property
    def with_state(self) -> bool:
        """Whether a state pool of known bytes sits beside the token pools (split statically)."""
        return self.slots is not None and self.slot_bytes is not None


def _held_pools(profile: CacheProfile, options: StrategyOptions, *, full_tokens: int,
                swa_tokens: int, slots: int | None, slot_bytes: int | None) -> _HeldPools:
    """The pools' figures ``sglang_concurrency`` reads. A token's bytes count only the layers
    that store: the kv-shared layers' bytes are idle whatever runs, and ``idle_pool_bytes`` counts
    them apart, so the split's idle figures leave them out."""
    n_full, n_swa = pool_layers(profile, options)
    full_bytes, swa_bytes = token_bytes_of(profile, options, profile.layer_types)
    return _HeldPools(options.sglang_page_size, slots_per_request(profile, options)[0], n_full,
                      n_swa, full_tokens, swa_tokens, full_bytes, swa_bytes, slots, slot_bytes)


class _PoolLimit(NamedTuple):
    """One pool's bound on the requests of a context that run at once: the units it holds
    for them over the units one request needs (pages, tokens, or requests for the running
    cap)."""

    held: int
    per_request: int
    name: str  # as binding_limit names it (and _IDLE_OF_LIMIT reads it)
    formula: str
    unit: int = 1  # tokens a unit of ``per_request`` (a token pool's page, or 1)
    reserved: int = 0  # tokens the pool keeps in use once beside the requests (never idle)
    why: str = ""  # a formula line of its own on how a request is charged ("": the usual)


class _PoolLimits(NamedTuple):
    """The bounds of ``_pool_limits``, each None where the model has no such pool."""

    token: _PoolLimit | None  # the full (kv) token pool, or state layers alone's pool of none
    swa: _PoolLimit | None  # the sliding (or chunked) token pool
    running: _PoolLimit | None  # the running cap the state slots set

    def given(self) -> list[_PoolLimit]:
        """The bounds there are, in the order the concurrency formula names them."""
        return [limit for limit in self if limit is not None]


def _pool_limits(profile: CacheProfile, options: StrategyOptions, context_tokens: int,
                 pools: _HeldPools) -> _PoolLimits:
    """Each pool's bound on the requests of ``context_tokens`` at once; the least binds. A
    model of state layers alone still takes its tokens' indices from a token pool of no
    layers (SGLang's token pool T), which bounds it as the kv pool would."""
    layerless = not profile.has_attention and pools.slots is not None  # its token pool: no layers
    return _PoolLimits(
        _token_pool_limit(context_tokens, pools, layerless)
        if pools.n_full or layerless else None,
        _swa_pool_limit(profile, options, context_tokens, pools) if pools.n_swa else None,
        _running_cap_limit(profile, options, pools) if pools.slots is not None else None)


def _token_pool_limit(context_tokens: int, pools: _HeldPools, layerless: bool) -> _PoolLimit:
    """The full token pool's bound: a request holds ceil(L / page) whole pages of it (tokens
    over L where a page is one token, as SGLang's default page size 1 reads)."""
    page = pools.page
    request_pages = cdiv(context_tokens, page)
    pool = "token pool T" if layerless else "kv"
    return _PoolLimit(pools.full_tokens // page, request_pages,
                      "token pool" if layerless else "kv tokens",
                      f"{pool} tokens / L = {n(pools.full_tokens)} / {n(context_tokens)}"
                      if page == 1
                      else f"{pool} pages / ceil(L / {n(page)}) = "
                      f"{n(pools.full_tokens // page)} / {n(request_pages)}", page)


def _swa_pool_limit(profile: CacheProfile, options: StrategyOptions, context_tokens: int,
                    pools: _HeldPools) -> _PoolLimit:
    """The sliding (or chunked) token pool's bound. With the radix cache on, a request holds
    its window and the tokens SGLang schedules a step (its chunked prefill size), at most the
    context, in whole pages, as though every request were in its prefill at once (vLLM's
    "Maximum concurrency" counts so). With it off beside full layers, SGLang's own worst case
    (``_radix_off_swa_limit``); with chunked prefill off, each request's whole prompt as SGLang
    admits it (``_unchunked_swa_limit``), radix cache or not."""
    page = pools.page
    label = swa_label(profile)
    chunk = chunked_prefill_size(options)  # the tokens SGLang schedules a step
    if chunk is None:
        return _unchunked_swa_limit(profile, context_tokens, pools)
    if options.sglang_disable_radix_cache and pools.n_full:
        return _radix_off_swa_limit(profile, options, context_tokens, pools, chunk)
    span = window_span(label, profile.window(label),
                       replace(options, max_batched_tokens=chunk), context_tokens)
    span_text = f"min({WINDOW_SPANS[label].kept} + {n(chunk)}, L)"
    span_pages = cdiv(span, page)
    return _PoolLimit(pools.swa_tokens // page, span_pages, "swa tokens",
                      f"swa tokens / {span_text} = {n(pools.swa_tokens)} / {n(span)}" if page == 1
                      else f"swa pages / ceil({span_text} / {n(page)}) = "
                      f"{n(pools.swa_tokens // page)} / {n(span_pages)}", page)


# Why a request holds its window's live tokens alone with the radix cache off, for the
# concurrency formula (``_radix_off_swa_limit``)
RADIX_OFF_SPAN = (
    "with --disable-radix-cache SGLang frees a request's sliding tokens behind its window as "
    "it prefills and decodes, and prefills one chunked request at a time, so the pool holds "
    "each request's live window (SGLang's SWA request cap's per-request worst case) and the "
    "prefill chunks in flight once, its cap solved for the requests")


def _radix_off_swa_limit(profile: CacheProfile, options: StrategyOptions, context_tokens: int,
                         pools: _HeldPools, chunk: int) -> _PoolLimit:
    """The sliding pool's bound with --disable-radix-cache and chunked prefill on: SGLang's
    own worst case of its live sliding tokens (``compute_swa_request_cap``, pool_configurator.py
    924-968), solved for the requests, whether that cap sized the pool or the ratio did.

    With the radix cache off the tree is a UnifiedRadixCache with ``disable`` set
    (mem_cache/registry.py 91-100), which shares no prefix (unified_radix_cache.py 654-655), so
    ``maybe_evict_swa`` (schedule_batch.py 4068-4122) frees each request's tokens behind its
    window: before each prefill chunk, up to its prefix less W (with overlap scheduling a
    chunk later, the previous chunk still in flight), and in decode once it runs 128 (the
    eviction interval) past its window (4047-4066; mem_cache/common.py 108-111: up to the
    window, page-aligned). One request is mid-prefill at a time (scheduler.py 4324-4327: one
    chunked_req; schedule_policy.py 1640-1674 cuts it at the chunk budget left, which ends
    the batch, 874-893). So a running request holds at most W + 128 x D + P + decode sliding
    tokens (``swa_request_terms``), at most its own L in whole pages, and the pool keeps
    ``chunks x chunked_prefill_size + P`` once for the chunks in flight: the figure is
    ``(swa - chunks x C - P) / min(ceil(L / P) x P, W + 128 x D + P + decode)``. Where the
    cap sized the pool for N requests, that is N (more by the pool's rounding to pages)."""
    page, terms = pools.page, swa_request_terms(profile, options)
    reserved = terms.chunks * chunk + page
    own = cdiv(context_tokens, page) * page
    span = min(own, terms.per_request)
    held = max(pools.swa_tokens - reserved, 0)
    formula = (f"(swa tokens - {terms.chunks} x chunked prefill - P) / min(L in whole pages, "
               f"W + {SWA_EVICTION_INTERVAL} x D + P + decode) = ({n(pools.swa_tokens)} - "
               f"{terms.chunks} x {n(chunk)} - {page}) / min({n(own)}, {n(terms.window)} + "
               f"{SWA_EVICTION_INTERVAL} x {terms.verified} + {page} + {terms.decode}) = "
               f"{n(held)} / {n(span)}")
    return _PoolLimit(held, span, "swa tokens", formula, 1, reserved,
                      f"swa span = min(L, W + {SWA_EVICTION_INTERVAL} x D + P + decode), "
                      f"{terms.chunks} chunk{'s' if terms.chunks > 1 else ''} in flight "
                      f"(decode: {terms.decode_text}): {RADIX_OFF_SPAN}")


def _unchunked_swa_limit(profile: CacheProfile, context_tokens: int,
                         pools: _HeldPools) -> _PoolLimit:
    """The sliding pool's bound with chunked prefill off: SGLang prefills a prompt in one
    forward, writing it all into the sliding pool (module docstring). A request of context L
    brings a prompt of at most L - 1 tokens (tokenizer_manager.py 1338 refuses a prompt of
    the context length, so one output token at least: max_new_tokens 1), and SGLang admits it
    only while the pool's free sliding tokens exceed its reservation (SWAPrefillBudget
    .check_prefill, prefill_budget.py 230-268: ``needed < remaining_swa``, and with no chunk
    limit no smaller chunk): ``estimate_swa_kv_tokens`` of its prompt in whole pages p and one
    output token, p + P where p is at least the window. With every request holding its prompt
    at once, the k-th is admitted where ``(k - 1) x p + reservation < swa``, so k is at most
    ``(swa - (reservation - p) - 1) / p``: where the pool holds L tokens but not more than the
    reservation, none runs. With the radix cache off a decoding request then frees its tokens
    behind the window, so this counts every request at its prompt's peak, as the radix cache's
    figure does: SGLang's cap does not model it either (pool_configurator.py 994-1000). Prompts
    admitted in one batch (where several fit max_prefill_tokens together) each add their whole
    reservation (prefill_budget.py 301-317), so there SGLang admits up to P + 1 tokens fewer a
    request than this counts."""
    page = pools.page
    window = sglang_window(profile)[0]
    prompt = max(context_tokens - 1, 1)
    prompt_tokens = cdiv(prompt, page) * page
    reservation = estimate_swa_kv_tokens(prompt_tokens, context_tokens - prompt, window, page)
    extra = reservation - prompt_tokens
    held = max(pools.swa_tokens - extra - 1, 0)
    formula = (f"(swa tokens - (reservation - p) - 1) / p = ({n(pools.swa_tokens)} - "
               f"{n(extra)} - 1) / {n(prompt_tokens)} = {n(held)} / {n(prompt_tokens)}")
    return _PoolLimit(held, prompt_tokens, "swa tokens", formula, 1, 0,
                      f"swa span = p = L - 1 in whole pages = {n(prompt_tokens)}, admitted "
                      f"with its reservation {n(reservation)} (estimate_swa_kv_tokens of p "
                      f"and 1 output token, window {n(window)}): {UNCHUNKED_SPAN}")


def _running_cap_limit(profile: CacheProfile, options: StrategyOptions,
                       pools: _HeldPools) -> _PoolLimit:
    """The running cap the state pool sets: its slots for requests (the padding slot is not
    one) over S a request; drafting, at most max_running_requests (told, or the speculative
    hook's 48), which SGLang sizes the draft-token buffers by."""
    cap = request_slots(pools.slots) // pools.s
    told = running_request_limit(options, drafting=True)
    if draft_tokens(profile, options) and cap > told:
        return _PoolLimit(told, 1, "running cap",
                          f"running cap min({n(cap)}, max_running_requests {n(told)})")
    return _PoolLimit(cap, 1, "running cap", f"running cap {n(cap)}")


def _concurrency_formula(limits: list[_PoolLimit], best: Fraction, binding: str) -> str:
    """The max_concurrency line: the one pool's bound, or the least of the bounds and which
    binds, so the reader sees what to grow for more requests."""
    if len(limits) == 1:  # one pool and no state: nothing to take the least of
        return f"max_concurrency = {limits[0].formula} = {concurrency_text(best)}"
    return ("max_concurrency = min(" + ", ".join(limit.formula for limit in limits)
            + f") = {concurrency_text(best)} ({binding} binds)")


def _split_idle(running: int, pools: _HeldPools,
                limits: _PoolLimits) -> tuple[dict[str, object], list[str]]:
    """``(extras, phrases)``: what the static split between pools leaves unused at ``running``
    requests, pool by pool (state slots, kv tokens, swa tokens), since SGLang sizes each pool
    before any request comes and one that binds leaves the others part idle. The kv extra is
    set even without full layers (0)."""
    extras: dict[str, object] = {}
    idle = []
    if pools.with_state:
        idle_slots = request_slots(pools.slots) - running * pools.s  # the padding slot is not idle
        extras["idle_state_bytes_at_context"] = idle_slots * pools.slot_bytes
        idle.append(f"{n(idle_slots)} state slot{'' if idle_slots == 1 else 's'} "
                    f"({n(idle_slots * pools.slot_bytes)} B)")
    idle_tokens = (max(pools.full_tokens - running * limits.token.per_request * limits.token.unit,
                       0) if pools.n_full else 0)
    extras["idle_kv_bytes_at_context"] = idle_tokens * pools.full_bytes
    if pools.n_full:
        idle.append(f"{n(idle_tokens)} kv tokens ({n(idle_tokens * pools.full_bytes)} B)")
    if pools.n_swa:  # a request keeps its window (or chunk) and a step of tokens there
        swa = limits.swa  # the chunks in flight it keeps with the radix cache off hold tokens
        idle_swa = max(pools.swa_tokens - swa.reserved - running * swa.per_request * swa.unit, 0)
        extras["idle_swa_tokens_at_context"] = idle_swa
        extras["idle_swa_bytes_at_context"] = idle_swa * pools.swa_bytes
        idle.append(f"{n(idle_swa)} swa tokens ({n(idle_swa * pools.swa_bytes)} B)")
    return extras, idle


# Each pool's limit in the concurrency formula, and the extra holding its idle bytes.
_IDLE_OF_LIMIT = (("state pool", "running cap", "idle_state_bytes_at_context"),
                  ("KV pool", "kv tokens", "idle_kv_bytes_at_context"),
                  ("sliding pool", "swa tokens", "idle_swa_bytes_at_context"),
                  # state layers alone: a pool of token indices over no layers, never idle bytes
                  ("token pool (no layers)", "token pool", "idle_token_pool_bytes"))


def split_idle(r: StrategyResult) -> list[tuple[str, int]]:
    """(pool, bytes) the static split leaves idle at the requests that run: every pool but the
    one that binds, whose remainder (less than a request) any layout may leave. Empty where the
    budget is not split between pools."""
    return _idle_of(r.extras)


def _idle_of(extras: Mapping[str, object]) -> list[tuple[str, int]]:
    return [(pool, int(extras[key])) for pool, limit, key in _IDLE_OF_LIMIT
            if extras.get(key) and extras.get("binding_limit") != limit]


def idle_pool_bytes(profile: CacheProfile, options: StrategyOptions, full_tokens: int,
               swa_tokens: int, running: int | None, extras: dict[str, object],
               formulas: list[str]) -> tuple[int, int]:
    """(kv bytes, state bytes) of SGLang's reservation that hold nothing: the pool layers of
    kv-shared layers, whatever runs, and what the static split leaves of the pools that do not
    bind at the requests that run (``sglang_concurrency``; where none runs, use says nothing
    and the pools stay drawn as reserved). Adds their formulas."""
    kv_idle = state_idle = 0
    shared_full, shared_swa = token_bytes_of(profile, options, profile.kv_shared_layer_types)
    if shared_bytes := full_tokens * shared_full + swa_tokens * shared_swa:
        kv_idle = extras["kv_shared_pool_bytes"] = shared_bytes
        pool = "full" if shared_swa or "swa_tokens" in extras else "kv"
        formulas.append(
            f"idle_pool: the pool layers of the {len(profile.kv_shared_layer_types)} kv-shared "
            "layers, kept and never written (each reads an earlier layer's cache) = "
            + " + ".join(f"{n(tokens)} {what} tokens x {n(nbytes)} B" for what, tokens, nbytes
                         in ((pool, full_tokens, shared_full), ("swa", swa_tokens, shared_swa))
                         if nbytes)
            + f" = {n(shared_bytes)}")
    if idle := _idle_of(extras):  # only where requests run (``running``)
        for pool, nbytes in idle:
            if pool == "state pool":
                state_idle += nbytes
            else:
                kv_idle += nbytes
        binding = next(pool for pool, limit, _ in _IDLE_OF_LIMIT
                       if limit == extras["binding_limit"])
        formulas.append(
            f"idle_pool {'+' if shared_bytes else ''}= "
            f"{' + '.join(f'{pool} {n(nbytes)}' for pool, nbytes in idle)} B idle at "
            f"{n(running)} request{'' if running == 1 else 's'} (the {binding} binds: its "
            "remainder, under a request, stays in use)")
    return kv_idle, state_idle
