"""SGLang's hybrid SWA pool beside its full pool: the split of the KV memory between them in
SGLang's own float arithmetic (``swa_split``), its floor of a window and a page
(``least_swa_pool``), and with --disable-radix-cache the request cap that sizes the sliding pool
instead (``swa_request_cap``; not with chunked prefill off: ``swa_cap_unchunked``)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import NamedTuple

from flatkv.plan import cdiv
from flatkv.profile import WINDOWED, CacheProfile
from flatkv.strategies.base import StrategyOptions, kv_sizes_text, n
from flatkv.strategies.sglang.chunk import chunked_prefill_size
from flatkv.strategies.sglang.drafting import running_limit, speculative_not_modelled
from flatkv.strategies.sglang.model import pool_layers, sglang_window, swa_label, swa_pool


def least_swa_pool(profile: CacheProfile, page: int) -> int:
    """The fewest tokens SGLang starts a hybrid SWA pool with: whole pages, more than
    ``window + page`` (its prefill admission floor, pool_configurator.validate_swa_pool_size;
    the window as its model reports it, ``sglang_window``)."""
    return cdiv(sglang_window(profile)[0] + page + 1, page) * page


class SwaSplit(NamedTuple):
    """SGLang's hybrid SWA pools over some KV memory (``swa_split``)."""

    cell: float  # bytes per full-pool token, F x n_full + r x (S x n_swa), SGLang's float
    total: int  # int(memory // cell): full-pool tokens before whole pages
    full: int  # the full pool, whole pages
    swa_raw: int  # int(full x r): swa tokens before whole pages
    swa: int  # the swa pool, whole pages


def swa_split(kv_memory: int, full_bytes: int, swa_bytes: int, ratio: Fraction,
              page: int) -> SwaSplit:
    """SGLang's HybridSWAPoolConfigurator over ``kv_memory``, in its own float arithmetic (the
    ratio as the float SGLang parses from the same decimal), so the pools are the ones its log
    prints to the token. Exact fractions would differ where a quotient lands on a whole number,
    by a token or, at a page size over 1, by a page. Past 2**53 B a float budget can round up
    to more tokens than the memory holds; there the count is the exact one (no engine has
    that much memory)."""
    cell = swa_cell(full_bytes, swa_bytes, ratio)
    total = int(kv_memory // cell)
    if kv_memory > 2**53:
        total = min(total, int(kv_memory // Fraction(cell)))
    full = total // page * page
    swa_raw = int(full * float(ratio))
    return SwaSplit(cell, total, full, swa_raw, swa_raw // page * page)


def swa_cell(full_bytes: int, swa_bytes: int, ratio: Fraction) -> float:
    """Bytes per full-pool token as SGLang computes them (``_recompute_cell_size``): a full
    token's bytes over the full layers plus r times a swa token's over the swa layers, the
    ratio a float (``_full_cell_bytes() + ratio * _swa_cell_bytes()``)."""
    return full_bytes + float(ratio) * swa_bytes


# SGLANG_SWA_EVICTION_INTERVAL's default (environ.py 730): the tokens a request's sliding pool
# runs past its window before SGLang frees the oldest, each drafted step's tokens as many times
SWA_EVICTION_INTERVAL = 128


class SwaRequestCap(NamedTuple):
    """The sliding pool SGLang sizes from its request cap (``swa_request_cap``)."""

    tokens: int  # compute_swa_request_cap's worst case, before whole pages
    requests: int  # the max_running_requests it is sized for (told, or the hook's 48)
    text: str  # its formula, from the terms up


class SwaRequestTerms(NamedTuple):
    """The terms of SGLang 0.5.23's SWA request cap (``compute_swa_request_cap``,
    pool_configurator.py 924-968), each as FlatKV models it (``swa_request_terms``)."""

    window: int  # W, as its model reports it (sglang_window)
    verified: int  # D: the tokens verified a step (speculative_num_draft_tokens), or 1
    decode: int  # a decode step's allocation a request keeps outstanding
    decode_text: str  # how ``decode`` is counted
    chunks: int  # prefill chunks in flight: 2 with overlap scheduling, else 1
    per_request: int  # one running request's live sliding tokens: W + 128 x D + P + decode


def swa_request_terms(profile: CacheProfile, options: StrategyOptions) -> SwaRequestTerms:
    """One running request's live sliding tokens at worst, and the prefill chunks in flight,
    as SGLang's SWA request cap counts them (pool_configurator.py 933-966): the window W as
    its model reports it (``sglang_window``), the eviction interval (128) x D tokens (D the
    tokens verified a step, 1 without drafting), a page of padding (the eviction point is
    page-aligned) and a decode step's allocation (a page; drafting, 2 x D with overlap
    scheduling, else D in whole pages); a chunk in flight, two with overlap scheduling."""
    page, overlap = options.sglang_page_size, options.sglang_overlap_schedule
    window = sglang_window(profile)[0]
    drafted = 0 if speculative_not_modelled(profile, options) else options.speculative_tokens
    verified = drafted + 1  # speculative_num_draft_tokens, or 1
    if not drafted:
        decode, decode_text = page, "a page"
    elif overlap:  # spec v2: 2 x get_alloc_len_per_decode(), max(steps, D) at topk 1
        decode, decode_text = 2 * verified, f"2 x D = {2 * verified}"
    else:  # spec v1: spec_decode_alloc_len_per_request, D in whole pages
        decode = cdiv(verified, page) * page
        decode_text = f"D in whole pages = {decode}"
    per_request = window + SWA_EVICTION_INTERVAL * verified + page + decode
    return SwaRequestTerms(window, verified, decode, decode_text, 2 if overlap else 1,
                           per_request)


def swa_request_cap(profile: CacheProfile, options: StrategyOptions) -> SwaRequestCap | None:
    """SGLang 0.5.23's SWA request cap, where it sizes a hybrid SWA pool by it in place of
    ``swa_full_tokens_ratio``: with --disable-radix-cache, a full pool beside the sliding one
    and max_running_requests N set before the pools (told, or the 48 its speculative hook sets
    where FlatKV models the drafting: ``running_limit``), chunked prefill on
    (pool_configurator.py 986-1003, ``SWARequestCapPoolConfigurator.is_applicable``, picked at
    1720-1722: "an unchunked prefill writes the whole prompt into the SWA pool", so with
    ``--chunked-prefill-size`` <= 0 the ratio sizes it: ``swa_cap_unchunked``). The worst case
    of N requests' live sliding tokens (``compute_swa_request_cap``, 924-968): each request's
    ``swa_request_terms``, then a prefill chunk in flight (two with overlap scheduling) of
    its chunked_prefill_size (``chunked_prefill_size``) and a page. None where SGLang sizes the
    pool by the ratio."""
    n_full, n_swa = pool_layers(profile, options)
    limit = running_limit(profile, options)
    chunk = chunked_prefill_size(options)
    if (not (options.sglang_disable_radix_cache and n_full and n_swa) or limit is None
            or chunk is None):
        return None
    page = options.sglang_page_size
    terms = swa_request_terms(profile, options)
    chunks = terms.chunks
    tokens = terms.per_request * max(1, limit) + chunks * chunk + page
    text = (f"(W + {SWA_EVICTION_INTERVAL} x D + P + decode) x N + {chunks} x chunked prefill "
            f"+ P = ({n(terms.window)} + {SWA_EVICTION_INTERVAL} x {terms.verified} + {page} + "
            f"{terms.decode}) x {n(limit)} + {chunks} x {n(chunk)} + {page} = "
            f"{n(tokens)} (decode: {terms.decode_text}; {chunks} prefill chunk"
            f"{'s' if chunks > 1 else ''} in flight {'with' if chunks > 1 else 'without'} "
            "overlap scheduling)")
    return SwaRequestCap(tokens, limit, text)


def swa_cap_unchunked(profile: CacheProfile, options: StrategyOptions) -> bool:
    """Whether SGLang would size the sliding pool by its request cap (``swa_request_cap``) but
    for chunked prefill off, so that ``swa_full_tokens_ratio`` sizes it instead."""
    return (chunked_prefill_size(options) is None and swa_request_cap(
        profile, replace(options, sglang_chunked_prefill_size=None)) is not None)


def estimate_swa_kv_tokens(extend_input_len: int, max_new_tokens: int, window: int,
                           page: int) -> int:
    """The sliding tokens SGLang 0.5.23 reserves to admit a prefill of ``extend_input_len``
    tokens (its page-rounded input) whole (``estimate_swa_kv_tokens``, prefill_budget.py 27-57,
    no chunk limit and no host hit): the input past the window, the input and its output up to
    the window, and a page."""
    return (max(extend_input_len - window, 0) + min(extend_input_len + max_new_tokens, window)
            + page)


def swa_pool_choice(profile: CacheProfile, options: StrategyOptions, formulas: list[str],
                     extras: dict[str, object]) -> str:
    """Whether windowed layers get SGLang's hybrid SWA pool, said in a formula line and
    ``extras["sglang_swa_pool"]``; the reason it refuses ("" where it runs): sliding layers of
    their own head shape with no such pool to keep them apart."""
    label = swa_label(profile)
    if not label:
        return ""
    own_pool, why = swa_pool(profile, options)
    if not own_pool and (sizes := kv_sizes_text(profile)):
        return (f"{sizes}, and SGLang keeps such sliding layers apart only in its hybrid SWA "
                f"pool, which it does not use here ({why}); FlatKV does not model one pool of "
                "two head shapes")
    extras["sglang_swa_pool"] = own_pool
    shared = profile.kv_shared_layer_types.count(label)
    layers = (f"the {profile.count(label) + shared} {WINDOWED[label].name} layers"
              + (f" ({shared} of them kv-shared)" if shared else ""))
    formulas.append(
        f"hybrid SWA pool: {layers} keep their {WINDOWED[label].noun} in a token pool of "
        f"their own ({why})"
        if own_pool else f"no hybrid SWA pool ({why}): {layers} keep every token in the "
        "one pool, as full layers do")
    return ""
