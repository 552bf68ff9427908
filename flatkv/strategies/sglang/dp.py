"""Attention DP (--attn-dp-size, or --enable-dp-attention at the whole TP): SGLang sizes each DP
group's pools alone, so the strategy runs on the options one group sees (``attention_dp``)."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from flatkv.profile import CacheProfile
from flatkv.strategies.base import CHUNKED_PREFILL_OFF, StrategyOptions, n
from flatkv.strategies.sglang.chunk import chunked_prefill_size, sglang_wont_start
from flatkv.strategies.sglang.drafting import SPECULATIVE_RUNNING_REQUESTS, draft_tokens
from flatkv.strategies.sglang.pages import page_size


class AttentionDp(NamedTuple):
    """One attention-DP group as SGLang sizes it (``attention_dp``): the profile of one of its
    ranks, the options it runs with, and why it cannot start ("" where it can)."""

    profile: CacheProfile
    options: StrategyOptions
    refusal: str
    # the chunked_prefill_size its scheduler line prints where // D turned the chunk to 0,
    # chunked prefill off (SGLang prints the 0, not -1); None: the options' own
    logged_chunk: int | None = None


def _unsplit_refusal(profile: CacheProfile, d: int) -> str:
    """Why a profile has no group at attention DP ``d``: bytes alone give no heads to re-split,
    the heads do not split over tp // d, or ``d`` does not divide the TP (the divisors that do
    named, as SGLang refuses it). SGLang would not start at the latter two, so they open
    with ``SGLANG_REFUSES_TO_START``; bytes alone are FlatKV's gap, not SGLang's ("n/a")."""
    if profile.tp is None:
        return (f"attention DP {n(d)} is not modelled for a profile of bytes alone, which "
                "gives no heads to split over fewer ranks: give its bytes at TP tp / D and "
                "attention DP 1")
    if profile.tp % d == 0:
        return sglang_wont_start(
            f"with attention DP {n(d)} it splits attention over TP {n(profile.tp)} / "
            f"{n(d)} = {n(profile.tp // d)} ranks, which the model's heads do not split over "
            "(its attention layers would not load): give an attention DP size that leaves a "
            "TP the heads split over")
    divisors = [k for k in range(1, profile.tp + 1) if profile.tp % k == 0]
    return sglang_wont_start(
        f"attention DP {n(d)} does not divide TP {n(profile.tp)} (\"tp_size must be "
        "divisible by attn_dp_size * attn_cp_size\"): give an attention DP size that divides "
        "the TP"
        + (" (or raise the TP)" if profile.tp == 1 else
           f" ({', '.join(map(str, divisors[:-1]))} or {divisors[-1]})"))


def attention_dp(profile: CacheProfile, options: StrategyOptions,
                 formulas: list[str]) -> AttentionDp:
    """``profile`` and ``options`` as one of SGLang 0.5.23's D attention-DP groups runs them
    (``sglang_attn_dp_size`` D > 1; unchanged at 1). Its ranks split attention (and state)
    heads over attn_tp_size = tp // D (runtime_context.derive_attn_tp_size 73-76, read by the
    pool configurators' cell sizes, pool_configurator.py 356 and 492, and the state shapes'
    linear_attn_tp_size): the profile at TP tp // D (``CacheProfile.attention_dp_profiles``).
    Its prefill chunk is chunked_prefill_size // D (parallel_hook.handle_data_parallelism
    326-335, before check_server_args asks for whole pages), 0 or less being chunked prefill
    off; a told --max-running-requests N, or the 48 its speculative hook sets, is
    max(1, N // D) a group (resolve_max_num_reqs 3127-3128, compute_swa_request_cap 956,
    _handle_max_mamba_cache 3316-3340), a told --max-mamba-cache-size M is M // D
    (kv_cache_configurator.py 3302-3309), refused at 0 (3392-3398). A model of state layers
    alone keeps its state split over the whole TP. A formula line says so."""
    d = options.sglang_attn_dp_size
    if d == 1:
        return AttentionDp(profile, options, "")
    at = dict(profile.attention_dp_profiles)
    # a model of state layers alone (SGLang's PURE_SSM_ARCHITECTURES) splits its state over
    # the whole TP (configs/mamba2.py 41-57, mamba.py 28-33: tp_size), whatever D
    whole_tp = not profile.has_attention
    if whole_tp and profile.tp is None or whole_tp and profile.tp % d == 0:
        at[d] = profile
    if d not in at:
        return AttentionDp(profile, options, _unsplit_refusal(profile, d))
    group = replace(at[d], name=profile.name)
    told_n = options.sglang_max_running_requests
    told_m = options.sglang_max_mamba_cache_size
    chunk = chunked_prefill_size(options)
    per_chunk = None if chunk is None else chunk // d
    changes: dict[str, object] = {
        "sglang_chunked_prefill_size": per_chunk if per_chunk else CHUNKED_PREFILL_OFF}
    tp = "TP" if profile.tp is None else f"TP {n(profile.tp)}"
    split = (f"its state layers split over the whole {tp}, as SGLang splits a model of state "
             "layers alone" if whole_tp else
             f"each group runs attention and state layers over {tp} / {n(d)} = "
             f"{n(profile.tp // d)} ranks, a rank keeping their heads at that TP (an MLA latent "
             "is whole at any TP)")
    parts = [f"attention DP {n(d)}: {n(d)} groups with pools of their own, {split}; these "
             "figures are one group's, as SGLang logs them"]
    if chunk is not None:
        parts.append(f"prefill chunk {n(chunk)} // {n(d)} = {n(per_chunk)}"
                     + ("" if per_chunk else ", chunked prefill off (SGLang reads 0 so)"))
    if told_n is not None:
        changes["sglang_max_running_requests"] = max(1, told_n // d)
    if told_n is not None or draft_tokens(profile, options):
        total = told_n if told_n is not None else SPECULATIVE_RUNNING_REQUESTS
        parts.append(f"max running requests max(1, {n(total)} // {n(d)}) = "
                     f"{n(max(1, total // d))} a group")
    refusal = ""
    if told_m is not None:
        parts.append(f"--max-mamba-cache-size {n(told_m)} // {n(d)} = {n(told_m // d)} a group")
        if told_m // d:
            changes["sglang_max_mamba_cache_size"] = told_m // d
        elif profile.has_state:
            refusal = sglang_wont_start(
                f"with attention DP {n(d)} a group keeps --max-mamba-cache-size {n(told_m)} // "
                f"{n(d)} = 0 state slots (\"Not enough GPU memory for hybrid "
                f"(mamba/linear-attention) state cache\"); give --max-mamba-cache-size at "
                f"least {n(d)}")
    if not refusal and per_chunk and per_chunk % (page := page_size(profile, options)):
        refusal = sglang_wont_start(
            f"with attention DP {n(d)} it prefills chunks of chunked_prefill_size // "
            f"{n(d)} = {n(chunk)} // {n(d)} = {n(per_chunk)} tokens (\"DP attention is "
            f"enabled. chunked prefill size is adjusted\"), not a multiple of the page "
            f"size {n(page)} (\"chunked_prefill_size must be divisible by page_size\"); "
            f"set --chunked-prefill-size to a multiple of {n(d)} x {n(page)} = "
            f"{n(d * page)}, or {CHUNKED_PREFILL_OFF} (chunked prefill off)")
    formulas.append("; ".join(parts))
    return AttentionDp(group, replace(options, **changes), refusal,
                       0 if per_chunk == 0 else None)
