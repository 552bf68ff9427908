"""The least KV cache budget a layout needs to hold R requests of a context length: the what-if
run backwards ("what must a rank give the cache for 32 requests of 128K?").

A layout holds R requests when its max concurrency at the context is at least R, counted as
Budget and Compare count it. Every paged layout's concurrency grows with the budget (a byte
more never takes a block away), so the least budget is found by bisection over exact
integers. SGLang's is not monotone beside a state pool: the pool takes ``r / (1 + r)`` of the
budget in whole slots, and where it gains a slot the KV memory loses that slot's bytes, so a
budget a byte larger can hold fewer requests. For SGLang the answer is therefore the least
budget *from which every larger one* holds R (what a capacity plan needs); a few budgets just
below a slot boundary can hold R too. vLLM's concurrency is the one its log prints, which
leaves its null block out (its start-up check for one request counts it), so at R >= 2 the
figure is the budget whose logged maximum concurrency reaches R. Pure Python, like the
strategies it runs.

It also runs the what-if over lengths: each layout's concurrency at one budget over context
lengths (``context_curves``), where a state model's per-request state caps short contexts and
history long ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from flatkv.plan import check_int
from flatkv.profile import CacheProfile
from flatkv.strategies import StrategyOptions, StrategyResult, run_strategy
from flatkv.strategies.sglang import budget_of_next_slot, page_size
from flatkv.units import MAX_BYTES, MAX_TOKENS
from flatkv.workload import largest_fitting, longest_fitting


def steps_down(strategy: str, profile: CacheProfile) -> bool:
    """Whether one byte more of budget can hold fewer requests: SGLang with a state pool beside
    attention (its slot steps). Then the least budget is the one from which every larger one
    holds them."""
    return strategy == "sglang" and profile.has_state and profile.has_attention


def plans_at_some_budget(strategy: str, profile: CacheProfile,
                         options: StrategyOptions | None = None) -> bool:
    """Whether ``strategy`` lays out ``profile`` at these options at any budget (at the largest,
    without a request to fit): where it does not (aliasing Scout's unequal groups, vLLM's
    hybrid manager off on a state hybrid, SGLang without its SWA pool on sliding layers of their
    own heads) no least budget "holds" requests, it "does not apply"."""
    return run_strategy(strategy, profile, budget_bytes=MAX_BYTES, context_tokens=None,
                        options=options).applies


def holds_requests(r: StrategyResult, requests: int) -> bool:
    """Whether a layout's result holds ``requests`` requests at once, as Budget and Compare
    count them: it applies and its concurrency is at least that."""
    return r.applies and r.concurrency is not None and r.concurrency >= requests


def longest_context_held(strategy: str, profile: CacheProfile, *, budget_bytes: int,
                         below: int, options: StrategyOptions | None = None) -> int:
    """The longest context under ``below`` tokens at which ``strategy`` holds one request at
    ``budget_bytes`` (``holds_requests``: the concurrency the Budget page shows reaches one
    request, by the engine's pages a request), 0 if none: what a context that not even one
    request fits can be lowered to. The Layout page's longest context counts the map's
    workload instead (SPEC 3.5, ``workload.longest_context``) and is shorter: the two are
    named apart on the pages (``app_data.LONGEST_BY``). vLLM refused at ``below`` names the
    longest context itself (its "estimated maximum model length", ``extras["longest_context"]``),
    which answers in one run; only vLLM is run there, as no other layout names one. Otherwise
    a request's pages never shrink as its context grows (each group's ``request_pages`` is a
    cdiv of L, or of min(span, L), or a constant) while a paged layout's units do not depend
    on it, so the concurrency only falls and bisection over the lengths is exact (about
    log2(below) runs).

    SGLang with attention layers holds one request on the same terms: nothing it sizes or
    refuses reads the context (its state slots come from the budget, its token pools from
    what they leave, its start-up checks from the options), so it runs at every length or at
    none, and it holds one request while each pool's bound reaches one
    (``sglang.concurrency._pool_limits``), each a count fixed by the budget over a need that
    never falls as L grows: the kv pool's cdiv(L, page) pages; the sliding pool's
    cdiv(min(W - 1 + chunk, L), page) (a chunked layer's C + chunk), with the radix cache off
    min(L in whole pages, W + 128 x D + P + decode) over the pool less the chunks in flight;
    the running cap none. With chunked prefill off it holds while the prompt's pages p plus
    its reservation's excess and a token fit the sliding pool (``_unchunked_swa_limit``): that
    excess is the page, one token more while p < W for the output token (L >= 2), and where
    p reaches W and the token drops p has grown by a page, so p + excess never falls either.
    tests/test_strategies_properties.py checks the answer over random models and options.

    SGLang on state layers alone does not: its token pool is the context itself in whole
    pages (``tokens._layerless_token_pool``), so a request of L tokens fits it only where L
    is a whole number of pages, and SGLang refuses a pool under 2 tokens; nothing else it
    sizes reads L (the state slots, the running cap). It holds one request at every such
    length or at none (``_layerless_longest``): at page 64 it holds one of 960 tokens but
    none of 1 to 63 or 961."""
    check_int("below", below, minimum=1, maximum=MAX_TOKENS + 1)
    if strategy == "vllm" and below <= MAX_TOKENS and (own := run_strategy(
            strategy, profile, budget_bytes=budget_bytes, context_tokens=below,
            options=options).extras.get("longest_context")) is not None:
        return own

    def held(tokens: int) -> bool:
        return holds_requests(run_strategy(strategy, profile, budget_bytes=budget_bytes,
                                           context_tokens=tokens, options=options), 1)

    if strategy == "sglang" and not profile.has_attention:
        return _layerless_longest(held, page_size(profile, options or StrategyOptions()), below)
    return longest_fitting(held, below - 1)


def _layerless_longest(held: Callable[[int], bool], page: int, below: int) -> int:
    """SGLang's longest context under ``below`` for a model of state layers alone: the last
    whole number of its ``page``-token pages under it, of 2 tokens at least, where that holds
    one request (``held``), else 0 (``longest_context_held``: whether one holds is the same
    at every such length, and false at any other)."""
    longest = (below - 1) // page * page
    return longest if longest >= 2 and held(longest) else 0


def least_budget_for_requests(
    strategy: str, profile: CacheProfile, *, requests: int, context_tokens: int,
    options: StrategyOptions | None = None,
) -> int | None:
    """The least cache budget per rank, in bytes, from which ``strategy`` holds ``requests``
    requests of ``context_tokens`` tokens at once; None when no budget up to MAX_BYTES does
    (the layout does not apply to the model, or a request outgrows any pool)."""
    check_int("requests", requests, minimum=1)
    check_int("context", context_tokens, minimum=1)

    def run(budget: int) -> StrategyResult:
        return run_strategy(strategy, profile, budget_bytes=budget,
                            context_tokens=context_tokens, options=options)

    def holds(budget: int) -> bool:
        if not holds_requests(r := run(budget), requests):
            return False
        # SGLang beside a state pool: also at the next slot, past which the KV memory is
        # least (later slots start with more), so every larger budget holds them too
        step = budget_of_next_slot(r, profile) if steps_down(strategy, profile) else None
        return step is None or step > MAX_BYTES or holds_requests(run(step), requests)

    return _least(holds)


def budget_for_sglang_token_pool(profile: CacheProfile, *, tokens: int,
                                 context_tokens: int | None,
                                 options: StrategyOptions | None = None,
                                 state_slots: int | None = None) -> int | None:
    """The least cache budget per rank at which SGLang's token pool (its scheduler line's
    max_total_num_tokens) is exactly ``tokens``, with ``state_slots`` request state slots where
    given (its max_mamba_cache_size): SGLang logs its pools, not the memory it profiled, so
    this is the budget a log's run is checked at. The pool grows with the budget, a byte
    adding at most one token (or one page of them), so the first budget that holds the tokens
    holds exactly them. Beside a state pool it drops at each slot step (``steps_down``), but
    the slots only grow with the budget, and between two steps the pool grows again: the
    search keeps to the budgets of the slots given, or, without them, goes down from the slots
    it lands on to the fewest beside which the pool is those tokens (its budgets come first).
    A model of state layers alone logs its context as its tokens whatever the budget: its
    budget is the least that gives the slots. None where no budget up to MAX_BYTES gives them
    (tokens not a whole number of SGLang's pages, those slots never beside them, or SGLang
    does not apply here)."""
    check_int("tokens", tokens, minimum=1, maximum=MAX_TOKENS)

    def run(budget: int) -> StrategyResult:
        return run_strategy("sglang", profile, budget_bytes=budget,
                            context_tokens=context_tokens, options=options)

    def pool(budget: int) -> int:
        r = run(budget)
        return r.logged_tokens if r.applies and r.logged_tokens is not None else 0

    def slots(budget: int) -> int:
        r = run(budget)
        return r.extras.get("request_state_slots", 0) if r.applies else 0

    def first_of(first: int, past: int) -> int | None:
        """The least budget in (first, past) whose pool is the tokens."""
        budget = _least(lambda b: b >= past or pool(b) >= tokens, first)
        return budget if budget is not None and budget < past and pool(budget) == tokens \
            else None

    def beside(count: int) -> int | None:
        """The least budget whose pool is the tokens beside ``count`` request slots."""
        if count < 0 or (least := _least(lambda b: slots(b) >= count)) is None:
            return None
        return first_of(least - 1, _least(lambda b: slots(b) > count, least - 1)
                        or MAX_BYTES + 1)

    if not profile.has_attention:
        # state layers alone: its token pool is the context at any budget, its slots grow with
        # the budget; the least budget with the slots is the run's
        if state_slots is None or (least := _least(lambda b: slots(b) >= state_slots)) is None:
            return None
        r = run(least)  # the pool and slots it gives, read off one run
        return least if (r.logged_tokens, r.extras.get("request_state_slots")) == (
            tokens, state_slots) else None
    if not steps_down("sglang", profile):
        return first_of(0, MAX_BYTES + 1)
    if state_slots is not None:
        return beside(state_slots)
    if (budget := first_of(0, MAX_BYTES + 1)) is None:
        return None
    count = slots(budget)
    while (fewer := beside(count - 1)) is not None:
        budget, count = fewer, count - 1
    return budget


def sglang_budget_search(profile: CacheProfile, context_tokens: int | None,
                         options: StrategyOptions) -> Callable[[int, int | None], int | None]:
    """``budget_for_sglang_token_pool`` at these settings, as ``log_check.RunSettings`` takes
    it: (tokens, state slots) to the budget, or None."""
    return lambda tokens, slots: budget_for_sglang_token_pool(
        profile, tokens=tokens, context_tokens=context_tokens, options=options,
        state_slots=slots)


def _least(holds: Callable[[int], bool], start: int = 0) -> int | None:
    """The least budget in [start + 1, MAX_BYTES] where ``holds`` (monotone: false, then true)
    is true; None when it is false at MAX_BYTES."""
    low, high = start, start + (1 << 20)  # no layout holds a request in 0 B
    while not holds(min(high, MAX_BYTES)):
        if high >= MAX_BYTES:
            return None
        low, high = high, high * 2
    high = min(high, MAX_BYTES)
    # holds(low) is false and holds(high) true: bisect between them for the last budget that
    # does not hold them (largest_fitting finds the last "fits", here "does not hold"); the
    # answer is the byte after it
    return low + 1 + largest_fitting(lambda more: not holds(low + more), high - low)


# The shortest context of a concurrency-over-context sweep (a shorter one typed is a point too)
FIRST_SWEPT_CONTEXT = 1024


def context_candidates(context: int, longest: int | None) -> list[int]:
    """The context lengths of a concurrency-over-context sweep (Compare's chart, ``compare
    --over-contexts``): every power of two from 1,024 tokens to the longer of the context and
    ``longest`` (the model's max_model_len, None when it gives none), the context itself and
    ``longest`` itself (the length vLLM's log states its concurrency at), sorted. Short contexts
    show what caps a state model's requests (a state slot each, whatever the length), long ones
    what history does."""
    check_int("context", context, minimum=1, maximum=MAX_TOKENS)
    top = max(context, longest or 0, FIRST_SWEPT_CONTEXT)
    first = FIRST_SWEPT_CONTEXT.bit_length() - 1
    given = {context} | ({longest} if longest else set())
    return sorted({1 << k for k in range(first, top.bit_length()) if 1 << k <= top} | given)


@dataclass(frozen=True)
class ContextCurves:
    """Each layout's max concurrency at one budget over context lengths: ``concurrency[s][i]``
    is strategy ``s``'s at ``contexts[i]``, exactly as Compare's table counts it at that length;
    None where the layout has no figure there (it does not apply, or vLLM refuses to start
    because one request of the length does not fit). Layouts with no figure at any length are
    left out."""

    contexts: list[int]
    concurrency: dict[str, list[Fraction | None]]


def context_curves(profile: CacheProfile, budget: int, contexts: Sequence[int],
                   options: StrategyOptions, strategies: Sequence[str]) -> ContextCurves:
    """``ContextCurves`` of ``strategies`` (in their order), each point a full ``run_strategy``
    at the budget and options, so a point at the page's context is Compare's figure."""
    figures = {s: [run_strategy(s, profile, budget_bytes=budget, context_tokens=c,
                                options=options).concurrency for c in contexts]
               for s in strategies}
    return ContextCurves(list(contexts), {s: values for s, values in figures.items()
                                          if any(v is not None for v in values)})
