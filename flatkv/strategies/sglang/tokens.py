"""SGLang's KV token pools from the memory its state pool leaves (``token_pools_after_state``): one
pool over the full-attention layers or a full and a sliding pool (``TokenPools``), a state
model's pool of no layers (``_layerless_token_pool``), their pages, and the running requests
the scheduler logs from them (``resolve_max_running_requests``)."""

from __future__ import annotations

from dataclasses import dataclass

from flatkv.plan import LINEAR_ATTENTION, cdiv
from flatkv.profile import WINDOWED, CacheProfile
from flatkv.strategies.base import StrategyOptions, n, ratio_text
from flatkv.strategies.sglang.drafting import (
    DRAFTER_KV_LAYERLESS_LINE,
    DRAFTER_KV_LINE,
    draft_tokens,
    hook_requests_text,
    running_limit,
)
from flatkv.strategies.sglang.model import pool_layers, pool_token_bytes, swa_label
from flatkv.strategies.sglang.pages import bytes_text, whole_pages
from flatkv.strategies.sglang.sliding import (
    SwaRequestCap,
    swa_cap_unchunked,
    swa_request_cap,
    swa_split,
)
from flatkv.strategies.sglang.state import StatePools, fixed_state_size
from flatkv.strategies.sglang_log import reduced_line, state_cap_line


def _token_pools(profile: CacheProfile, options: StrategyOptions, kv_memory: int,
                 n_full: int, n_swa: int, formulas: list[str],
                 extras: dict[str, object]) -> tuple[int, int]:
    """SGLang's token pools over the KV memory for its ``n_full`` / ``n_swa`` pooled layers
    (``pool_layers``): ``(full_tokens, swa_tokens)``, each in whole pages. Full and sliding
    layers split it so that the sliding pool holds ``r_swa`` times the full one's tokens, or
    the sliding pool is SGLang's SWA request cap; one kind alone takes it all. Appends its
    formulas and extras. One step a configurator, as SGLang picks one."""
    if cap := swa_request_cap(profile, options):
        full_tokens, swa_tokens = _capped_pools(profile, options, kv_memory, cap, formulas)
        extras.update(swa_request_cap=cap.tokens, swa_tokens=swa_tokens)
    elif n_swa and n_full:
        full_tokens, swa_tokens = _ratio_pools(profile, options, kv_memory, n_full, n_swa,
                                               formulas)
        extras.update(swa_full_tokens_ratio=options.swa_full_tokens_ratio,
                      swa_tokens=swa_tokens)
    elif n_full:
        full_tokens, swa_tokens = _full_pool(profile, options, kv_memory, n_full, formulas), 0
    else:  # sliding layers only: one token pool over them
        full_tokens, swa_tokens = 0, _swa_pool(profile, options, kv_memory, n_swa, formulas)
        extras.update(swa_tokens=swa_tokens)
    extras["kv_tokens"] = full_tokens
    return full_tokens, swa_tokens


def _capped_pools(profile: CacheProfile, options: StrategyOptions, kv_memory: int,
                  cap: SwaRequestCap, formulas: list[str]) -> tuple[int, int]:
    """The pools where SGLang's SWA request cap sizes the sliding one, not r_swa
    (SWARequestCapPoolConfigurator.calculate_pool_sizes, pool_configurator.py 1005-1032): the
    sliding pool the cap in whole pages, the full pool the rest in whole pages; ``(full,
    swa)`` tokens. Its own step, as it leaves the full pool what the sliding one does not
    take, where the ratio split sizes both from one cell."""
    page = options.sglang_page_size
    full_bytes, swa_bytes = pool_token_bytes(profile, options)
    swa_tokens, swa_text = cdiv(cap.tokens, page) * page, n(cdiv(cap.tokens, page) * page)
    if swa_tokens != cap.tokens:
        swa_text = f"{n(cap.tokens)}, {n(swa_tokens)} in whole pages of {n(page)} up"
    rest = kv_memory - swa_tokens * swa_bytes
    full_tokens, full_text = whole_pages(max(rest // full_bytes, 0), page)
    formulas += [
        f"swa tokens = SGLang's SWA request cap (--disable-radix-cache, max_running_requests "
        f"N = {n(cap.requests)} set: SWARequestCapPoolConfigurator, not r_swa) = "
        f"{cap.text}; {swa_text}",
        f"full tokens = (KV memory - swa tokens x {n(swa_bytes)} B) // {n(full_bytes)} B = "
        f"({n(kv_memory)} - {n(swa_tokens)} x {n(swa_bytes)}) // {n(full_bytes)} = "
        + (full_text if rest >= 0 else "0 (less than nothing: the sliding pool takes more "
           "than the KV memory)"),
    ]
    return full_tokens, swa_tokens


def _ratio_pools(profile: CacheProfile, options: StrategyOptions, kv_memory: int,
                 n_full: int, n_swa: int, formulas: list[str]) -> tuple[int, int]:
    """The pools as SGLang's HybridSWAPoolConfigurator splits the memory: one full-pool token
    costs F x n_full plus r_swa tokens of the swa pool; the full pool is the memory over that,
    in whole pages, and the swa pool r_swa times those whole pages, in whole pages; ``(full,
    swa)`` tokens. Its formulas say where SGLang's float arithmetic parts from the exact one,
    so that each printed equation holds."""
    kv = profile.kv_bytes_per_slot
    page = options.sglang_page_size
    full_bytes, swa_bytes = pool_token_bytes(profile, options)
    rs = options.swa_full_tokens_ratio
    split = swa_split(kv_memory, full_bytes, swa_bytes, rs, page)
    _, full_text = whole_pages(split.total, page)
    _, swa_text = whole_pages(split.swa_raw, page)
    exact_total = kv_memory // (full_bytes + rs * swa_bytes)
    exact_swa = int(rs * split.full)
    sliding = profile.kv_bytes_of(swa_label(profile))
    formulas += [
        (f"bytes per full-pool token = F x (n_full + r_swa x n_swa) = {n(kv)} x ({n_full} + "
         f"{ratio_text(rs)} x {n_swa})" if sliding == kv else
         f"bytes per full-pool token = F x n_full + r_swa x S x n_swa = {n(kv)} x {n_full} + "
         f"{ratio_text(rs)} x {n(sliding)} x {n_swa} (S: a sliding layer's bytes a token)")
        + f" = {bytes_text(split.cell)}",
        f"full tokens = KV memory // that = {n(kv_memory)} // {bytes_text(split.cell)} = "
        f"{full_text}" + (f" (SGLang's float cell, {split.cell:.17g}, is a hair off; exact "
                          f"arithmetic gives {n(exact_total)})"
                          if exact_total != split.total else ""),
        f"swa tokens = floor(r_swa x full) = floor({ratio_text(rs)} x {n(split.full)}) "
        f"= {swa_text}" + (f" (SGLang's float of {ratio_text(rs)} is a hair off; exact "
                           f"arithmetic gives {n(exact_swa)})"
                           if exact_swa != split.swa_raw else ""),
    ]
    if swa_cap_unchunked(profile, options):
        formulas.append(
            "swa tokens by r_swa, not SGLang's SWA request cap (--disable-radix-cache with "
            "max_running_requests set): chunked prefill is off, and an unchunked prefill "
            "writes a whole prompt into the sliding pool, which the cap does not hold "
            "(SWARequestCapPoolConfigurator.is_applicable)")
    return split.full, split.swa


def _full_pool(profile: CacheProfile, options: StrategyOptions, kv_memory: int, n_full: int,
               formulas: list[str]) -> int:
    """Full-attention layers alone: one token pool over all the KV memory, in whole pages."""
    kv = profile.kv_bytes_per_slot
    full_tokens, text = whole_pages(kv_memory // (kv * n_full), options.sglang_page_size)
    formulas.append(
        f"kv tokens = KV memory // ({n_full} layers x {n(kv)} B) = {n(kv_memory)} // "
        f"{n(kv * n_full)} = {text}"
    )
    return full_tokens


def _swa_pool(profile: CacheProfile, options: StrategyOptions, kv_memory: int, n_swa: int,
              formulas: list[str]) -> int:
    """Sliding layers alone: one token pool over all the KV memory, in whole pages."""
    _, swa_bytes = pool_token_bytes(profile, options)
    swa_tokens, text = whole_pages(kv_memory // swa_bytes, options.sglang_page_size)
    each = profile.kv_bytes_of(swa_label(profile))
    formulas.append(
        f"swa tokens = KV memory // ({n_swa} layers x {n(each)} B) = "
        f"{n(kv_memory)} // {n(swa_bytes)} = {text}"
    )
    return swa_tokens


@dataclass(frozen=True)
class TokenPools:
    """SGLang's token pools in the KV memory its state leaves of the budget (``kv_memory``):
    ``full_tokens`` and ``swa_tokens`` (each 0 where the model has no such layers; for state
    layers alone ``full_tokens`` is their pool of no layers), ``pool_tokens`` T, the one SGLang
    pages and resolves its running requests from (the sliding pool where every pool layer is
    sliding, else the full pool), the bytes they take (``kv_bytes``), whether T is known
    (``sized``: not for state layers alone without a context, whose pool is context_len
    tokens) and whether the sliding pool is SGLang's SWA request cap rather than
    ``swa_full_tokens_ratio``'s share (``swa_capped``)."""

    kv_memory: int
    full_tokens: int
    swa_tokens: int
    pool_tokens: int
    kv_bytes: int
    sized: bool
    swa_capped: bool


def _kv_memory_text(budget_bytes: int, state_bytes: int, buffers: int, state_pool: int,
                    with_state: bool, fixed: bool) -> str:
    """The formula of the KV memory: what the state slots (``state_bytes``) and the draft-token
    buffers leave of the budget, and why the rest of the state pool goes to it (SGLang's
    ``_handle_max_mamba_cache``): slots come whole, and fixed slots (``fixed``: by
    --max-mamba-cache-size, or --disable-radix-cache's max_running_requests) take what they
    take."""
    kv_memory = budget_bytes - state_bytes - buffers
    if buffers:
        why = ("the fixed slots and their buffers: SGLang's _handle_max_mamba_cache leaves the "
               "KV pool the rest" if fixed else
               "what the slots and buffers leave of the state budget goes to the KV pool, as in "
               "SGLang's _handle_max_mamba_cache")
        return (f"KV memory = budget - slots x slot bytes - draft-token buffers = "
                f"{n(budget_bytes)} - {n(state_bytes)} - {n(buffers)} = {n(kv_memory)} ({why})")
    text = (f"KV memory = budget - slots x slot bytes = {n(budget_bytes)} - {n(state_bytes)} = "
            f"{n(kv_memory)}")
    if fixed:
        return text + (" (the fixed slots' bytes: SGLang's _handle_max_mamba_cache leaves the "
                       "KV pool the rest)")
    if with_state:
        return text + (f" (the slots' bytes, not the whole state pool: its "
                       f"{n(state_pool - state_bytes)} B short of one more slot go to the KV "
                       "pool, as in SGLang's _handle_max_mamba_cache)")
    return text


def _layerless_token_pool(options: StrategyOptions, context_tokens: int, kv_memory: int,
                          formulas: list[str], extras: dict[str, object]) -> int:
    """T, the token pool SGLang 0.5.23 keeps for a model of state layers alone: its pool
    configurator's cell is 0 B a token (no full-attention layer), so it takes
    ``--max-total-tokens or context_len`` tokens whatever the budget, in whole pages
    (pool_configurator.py 239-250 and 637-647: ``_zero_kv_max_tokens``), and allocates them
    over no layers. Its requests still take their token indices from it, so it caps the
    requests of a context and max_running_requests as an attention model's pool does; the
    budget the state split leaves it (``kv_memory``) holds nothing. Appends its formulas."""
    tokens, text = whole_pages(context_tokens, options.sglang_page_size)
    formulas.append(
        f"token pool T = context_len = {text} (SGLang's pool over no layers: 0 B a token, so "
        "it takes context_len tokens whatever the budget; each request still holds its "
        f"tokens' indices there); the {n(kv_memory)} B the state leaves of the budget hold "
        "nothing")
    extras["kv_tokens"] = tokens
    return tokens


def _logged_running_requests(tokens: int, context: int, state_cap: int | None,
                             formulas: list[str]) -> tuple[int, bool]:
    """The max_running_requests SGLang logs when --max-running-requests is not given
    (``_resolve_max_num_reqs``): ``tokens / context_len x 512`` in float, kept between 2,048
    and 4,096, at most half the tokens, and with state at most ``state_cap`` (its request
    slots // S). A cap on requests at once, not the requests of the context that fit. Also
    whether the state cap is what binds, where SGLang warns that it does."""
    estimated = max(min(int(tokens / context * 512), 4096), 2048)
    limits = [estimated, tokens // 2] + ([] if state_cap is None else [state_cap])
    running = min(limits)
    capped = state_cap is not None and state_cap < min(estimated, tokens // 2)
    formulas.append(
        "max_running_requests = min(max(min(int(T / context_len x 512), 4,096), 2,048), T // 2"
        + ("" if state_cap is None else ", running cap") + ") = min("
        + ", ".join(n(x) for x in limits) + f") = {n(running)} (SGLang's log, T the token pool "
        f"{n(tokens)}, context_len {n(context)}: a cap on requests at once)")
    return running, capped


def _running_requests_from(tokens: int, limit: int, state_cap: int | None, told: bool,
                           formulas: list[str]) -> tuple[int, bool]:
    """The max_running_requests SGLang logs where it starts from ``limit`` rather than the
    context (``resolve_max_num_reqs``, kv_cache_configurator.py 3126-3150): --max-running-
    requests where ``told``, else the 48 its speculative hook sets for any model it drafts for;
    ``min(limit, T // 2)``, and with state at most ``state_cap`` (K // S), whatever the context.
    Also whether the state cap is what binds, where SGLang warns that it does."""
    limits = [limit, tokens // 2] + ([] if state_cap is None else [state_cap])
    running = min(limits)
    formulas.append(
        f"max_running_requests = min({'--max-running-requests ' if told else ''}{n(limit)}, "
        "T // 2" + ("" if state_cap is None else ", running cap") + ") = "
        f"min({', '.join(n(x) for x in limits)}) = {n(running)} (SGLang's log, T the token pool "
        f"{n(tokens)}; " + ("as told" if told else hook_requests_text(limit))
        + ", whatever the context)")
    return running, state_cap is not None and state_cap < min(limits[:2])


def token_pages(
    profile: CacheProfile, options: StrategyOptions, pool_tokens: int, n_full: int, n_swa: int,
    formulas: list[str], extras: dict[str, object],
) -> tuple[int, int, int, int, str]:
    """The token pool as pages: block size, block bytes, blocks, capacity and why this P, with
    their formulas (and the two pools' page bytes in ``extras`` where there are two)."""
    kv = profile.kv_bytes_per_slot
    page = options.sglang_page_size
    full_bytes, swa_bytes = pool_token_bytes(profile, options)
    per_layer = (f"{n(kv)} x {n_full + n_swa} layers" if full_bytes + swa_bytes
                 == kv * (n_full + n_swa) else
                 f"({n(kv)} x {n_full} + {n(profile.kv_bytes_of(swa_label(profile)))} x {n_swa}) B")
    # its KV pools are sized from the budget, then allocated a page up
    formulas.append(
        f"beyond these, SGLang allocates each KV layer a page more (rows of tokens + page "
        f"size; slot 0 takes padded tokens' dummy writes): {page} x {per_layer} = "
        f"{n(page * (full_bytes + swa_bytes))} B past the pools, which its sizing leaves out")
    # A page of P tokens takes P x F bytes in every KV layer it lives in: the full pool's
    # layers, plus the sliding pool's while the page is inside the window.
    block_bytes = page * (full_bytes + swa_bytes)
    formulas.append(f"logged_tokens = max_total_num_tokens = the token pool = "
                    f"{n(pool_tokens)} (SGLang's log)")
    if n_full and n_swa:
        extras.update(full_page_bytes=page * full_bytes, swa_page_bytes=page * swa_bytes)
        name = WINDOWED[swa_label(profile)].name
        sliding = profile.kv_bytes_of(swa_label(profile))
        formulas.append(
            "block_bytes = one page in both pools = "
            + (f"{page} x {n(kv)} x ({n_full} full + {n_swa} {name} layers)" if sliding == kv
               else f"{page} x ({n(kv)} x {n_full} full + {n(sliding)} x {n_swa} {name} layers)")
            + f" = {n(block_bytes)} (full pool "
            f"{n(page * full_bytes)} "
            f"+ swa pool {n(page * swa_bytes)}); blocks = full-pool pages (the swa pool holds "
            + ("its request cap's)" if "swa_request_cap" in extras else "r_swa x as many)")
        )
    told = ("its NSA page for DeepSeek's sparse attention, whatever --page-size says"
            if profile.indexer_bytes_per_slot else f"--page-size ({page})")
    why = (f"P = {page}: SGLang's token pool pages KV by {told}; state needs no page, it lives "
           "in per-request slots")
    return page, block_bytes, pool_tokens // page, pool_tokens, why


def token_pools_after_state(profile: CacheProfile, options: StrategyOptions,
                             budget_bytes: int, context_tokens: int | None, state: StatePools,
                             formulas: list[str], extras: dict[str, object]) -> TokenPools:
    """SGLang's token pools in what the state leaves of the budget: over the attention layers
    (``_token_pools``), or for state layers alone their pool of no layers, context_len tokens
    (``_layerless_token_pool``; none known without a context). A drafter's own KV is outside
    the budget either way (a formula line says so). Appends their formulas and extras."""
    n_full, n_swa = pool_layers(profile, options)
    n_state = profile.count(LINEAR_ATTENTION)
    drafts = draft_tokens(profile, options)
    kv_memory = budget_bytes - state.held
    full_tokens = swa_tokens = 0
    if profile.has_attention:
        formulas.append(_kv_memory_text(
            budget_bytes, state.slot_total, state.buffers, state.state_pool, n_state > 0,
            n_state > 0 and fixed_state_size(options, drafts) is not None))
        if drafts:
            formulas.append(DRAFTER_KV_LINE)
        full_tokens, swa_tokens = _token_pools(profile, options, kv_memory, n_full, n_swa,
                                               formulas, extras)
    elif context_tokens is not None:  # state layers alone: a token pool of no layers
        full_tokens = _layerless_token_pool(options, context_tokens, kv_memory, formulas,
                                            extras)
        if drafts:
            formulas.append(DRAFTER_KV_LAYERLESS_LINE)
    full_bytes, swa_bytes = pool_token_bytes(profile, options)
    return TokenPools(
        kv_memory, full_tokens, swa_tokens,
        pool_tokens=swa_tokens if n_swa and not n_full else full_tokens,
        kv_bytes=full_tokens * full_bytes + swa_tokens * swa_bytes,
        sized=profile.has_attention or context_tokens is not None,
        swa_capped="swa_request_cap" in extras)


def resolve_max_running_requests(profile: CacheProfile, options: StrategyOptions,
                          context_tokens: int | None, pool_tokens: int, formulas: list[str],
                          extras: dict[str, object]) -> str:
    """The max_running_requests SGLang logs (``extras["max_running_requests"]``), where its
    token pool T (``pool_tokens``) is known: from the context where nothing sets one
    (``_logged_running_requests``), else from the told one or the speculative hook's 48
    whatever the context (``_running_requests_from``). Returns the warning SGLang logs beside
    it ("" where none): that its state pool caps it, or that the token pool cuts one it was
    given. Appends its formula."""
    limit = running_limit(profile, options)
    state_cap = extras.get("running_request_cap")
    if limit is None:
        if context_tokens is None:
            return ""
        extras["max_running_requests"], capped = _logged_running_requests(
            pool_tokens, context_tokens, state_cap, formulas)
        return state_cap_line(extras) if capped else ""
    told = options.sglang_max_running_requests is not None
    running_max, capped = _running_requests_from(pool_tokens, limit, state_cap, told, formulas)
    extras["max_running_requests"] = running_max
    extras["running_requests_told" if told else "running_cap_from_speculative_hook"] = True
    if capped:
        return state_cap_line(extras)
    return reduced_line(limit, running_max) if running_max < limit else ""
