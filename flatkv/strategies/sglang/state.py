"""SGLang's state pool (MambaPool) and its slots: the ssm and conv dtypes it keeps a state in
(``ssm_dtype``, ``CONV_DTYPE``), a slot's tensors (``state_tensors``), the slots a running request
holds under its mamba radix cache (``slots_per_request``, ``radix_cache``), the pool's share of
the budget in SGLang's float (``state_pool_bytes``) and the least budget for a share
(``budget_for_state_pool``, ``budget_of_next_slot``), and the slots from the budget, a told
--max-mamba-cache-size or the drafting sizing (``StatePools``, ``state_pools``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from flatkv.dtypes import dtype_bytes
from flatkv.plan import LINEAR_ATTENTION, cdiv
from flatkv.profile import CacheProfile
from flatkv.strategies.base import (
    DEFAULT_MAMBA_TRACK_INTERVAL,
    StrategyOptions,
    StrategyResult,
    n,
    ratio_text,
)
from flatkv.strategies.sglang.drafting import (
    draft_tokens,
    hook_requests_text,
    running_request_limit,
    spec_request_slots,
    spec_reserved_requests,
)
from flatkv.strategies.sglang.pages import bytes_text, page_size
from flatkv.units import tokens_text

# Architectures whose SGLang state params take mamba2_state_dtype() without the config, so a
# config's mamba_ssm_dtype changes nothing there (KimiLinearCacheParams' dtype default_factory,
# which BailingHybridConfig's too takes, and GraniteMoeHybridConfig's Mamba2CacheParams built
# without a dtype, and Mamba2Config's, configs/mamba2.py 41-57, and MambaConfig's and
# FalconMambaConfig's, configs/mamba.py 27-38, 0.5.23; the env variable still applies).
CONFIG_SSM_DTYPE_UNREAD = ("KimiLinearForCausalLM", "GraniteMoeHybridForCausalLM",
                           "BailingMoeV3ForCausalLM", "Mamba2ForCausalLM",
                           "MambaForCausalLM", "FalconMambaForCausalLM")


def ssm_dtype(profile: CacheProfile, options: StrategyOptions) -> tuple[str, str]:
    """The dtype SGLang keeps every ssm tensor in, and why: ``sglang_ssm_dtype`` when set (as
    SGLANG_MAMBA_SSM_DTYPE overrides the config), else the config's ``mamba_ssm_dtype`` (unless
    the architecture's state does not read it: ``CONFIG_SSM_DTYPE_UNREAD``), else float32
    (SGLang's ``mamba2_state_dtype``)."""
    if options.sglang_ssm_dtype is not None:
        return options.sglang_ssm_dtype, "SGLANG_MAMBA_SSM_DTYPE, as the option sets it"
    if profile.config_mamba_ssm_dtype is not None:
        unread = next((a for a in profile.architectures if a in CONFIG_SSM_DTYPE_UNREAD), None)
        if unread is None:
            return profile.config_mamba_ssm_dtype, "the config's mamba_ssm_dtype"
        return "float32", (f"SGLang's default ssm dtype: its {unread} state does not read the "
                           "config's mamba_ssm_dtype")
    return "float32", "SGLang's default ssm dtype"


# Architectures (their first, as SGLang reads it) whose hybrid cache SGLang 0.5.23 runs with
# its extra_buffer mamba radix cache by default (arg_groups/overrides.py: the "auto" strategy
# picks it where overlap scheduling is on, its default, or the page size is over 1, on the
# triton linear-attention backend, for those in both _MAMBA_RADIX_CACHE_ARCHS and
# _MAMBA_EXTRA_BUFFER_ARCHS): a running request then holds
# MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO (3) + its tracking slots, 2 with overlap
# scheduling and 1 without (kv_cache_configurator._calculate_mamba_ratio,
# allocation_sizing.get_mamba_tracking_slots). Without overlap at page size 1 they run
# no_buffer: 3.
EXTRA_BUFFER_ARCHITECTURES = frozenset({
    "KimiLinearForCausalLM", "KimiK3ForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Qwen4ExpForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration",
    "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM", "Glm5NextForConditionalGeneration",
    "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronH_Omni_Reasoning_V3",
})
# ... and those on its mamba radix cache list without the extra buffer (LFM2): always
# no_buffer, which turns overlap scheduling off and takes page size 1 only
# (mamba_hook.validate_mamba_no_buffer: "no_buffer only supports page_size=1.").
NO_BUFFER_ARCHITECTURES = frozenset({
    "Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration", "ZayaForCausalLM",
    "InternS2MobiusForConditionalGeneration",
})
NO_BUFFER_SLOTS = 3  # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
# With --disable-radix-cache a running request holds its live state alone: _calculate_mamba_ratio
# returns 1 (kv_cache_configurator.py 3063-3064), for every architecture
RADIX_OFF_SLOTS = 1
EXTRA_BUFFER_SLOTS = NO_BUFFER_SLOTS + 2  # get_mamba_tracking_slots(overlap=True)
# --mamba-radix-cache-strategy extra_buffer_lazy (``sglang_mamba_radix_cache_strategy``): one
# tracking slot, the second allocated when a request needs it (get_mamba_tracking_slots(lazy=
# True) is 1, allocation_sizing.py 17-18), so _calculate_mamba_ratio sizes 3 + 1
# (kv_cache_configurator.py 3077-3081): max_running_requests is the state slots // 4, and the
# draft-token buffers (K's 1 + D / ratio) follow. It changes no pool by itself: MambaPool is the
# K + 1 slots the budget or --max-mamba-cache-size gives (its ping-pong table keeps 2 columns,
# memory_pool.py 1393-1395, an index table outside the budget), nor the token pool.
LAZY_BUFFER_SLOTS = NO_BUFFER_SLOTS + 1
# The extra buffer snapshots a request's state every --mamba-track-interval tokens
# (``StrategyOptions.sglang_mamba_track_interval``, 256 by default). SGLang 0.5.23 only checks
# it: it sizes no pool and no slot (the tracking slots above are 1 or 2 whatever it is;
# kv_cache_configurator and allocation_sizing never read it), and decode snapshots a request's
# state where its length crosses a multiple of it (schedule_batch.py 3803-3819). Its checks
# at start-up: the page size divides it and it is at least the tokens verified a step
# (mamba_hook.validate_mamba_extra_buffer 132-135), and on the Mamba2 backend it is at least
# the model's mamba chunk (hybrid_linear_attn_backend.Mamba2AttnBackend 1081-1083).
# The architectures of EXTRA_BUFFER_ARCHITECTURES SGLang runs on that Mamba2 backend: those
# whose config configs/hybrid_arch.mamba2_config returns (80-105), NemotronH's Omni by its
# llm_config.
MAMBA2_BACKEND_ARCHITECTURES = frozenset({
    "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM", "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM", "NemotronH_Omni_Reasoning_V3",
})


def radix_cache(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """The mamba radix cache SGLang 0.5.23 runs a state hybrid with: "extra_buffer" or
    "no_buffer"; None where the model keeps no state, its architecture is on neither list
    (none named: a model typed by hand), or --disable-radix-cache is given (overrides.py
    473-474: ``_mamba_radix_cache_resolution`` returns before it picks one, so neither cache's
    page-size checks run: model_hook.handle_mamba_radix_cache 1058-1066). Its "auto" strategy
    picks (overrides.py 477-486); a strategy told (``sglang_mamba_radix_cache_strategy``) is
    kept whatever the overlap and page, extra_buffer_lazy counted as the extra buffer
    (model_override_base.mamba_extra_buffer_of 260-265), and checked (``told_buffer_refusal``,
    ``no_buffer_refusal``)."""
    arch = profile.architectures[0] if profile.architectures else None
    if not profile.has_state or options.sglang_disable_radix_cache:
        return None
    told = options.sglang_told_strategy
    if arch in EXTRA_BUFFER_ARCHITECTURES:
        if told is not None:
            return "no_buffer" if told == "no_buffer" else "extra_buffer"
        return ("extra_buffer" if options.sglang_overlap_schedule
                or page_size(profile, options) > 1 else "no_buffer")
    return "no_buffer" if arch in NO_BUFFER_ARCHITECTURES else None


def logged_strategy(profile: CacheProfile, options: StrategyOptions) -> str:
    """The --mamba-radix-cache-strategy SGLang 0.5.23's server_args line logs at ``options``:
    it logs resolved values (ServerArgs.resolved_dict, server_args.py 316-333), so "auto" as
    the cache it picks where it picks one (``radix_cache``), a told strategy as told."""
    strategy, mode = options.sglang_mamba_radix_cache_strategy, radix_cache(profile, options)
    return mode if strategy == "auto" and mode is not None else strategy


def logged_overlap(profile: CacheProfile, options: StrategyOptions) -> bool:
    """Whether SGLang 0.5.23's server_args line logs overlap scheduling on at ``options``
    (``'disable_overlap_schedule': False``): it logs resolved values (ServerArgs.resolved_dict,
    server_args.py 316-333), and where "auto" picks no_buffer (``radix_cache``: overlap off
    asked, or a model of no extra buffer such as LFM2 at any page) it turns overlap scheduling
    off itself (overrides._mamba_radix_cache_resolution 484-486), so it logs off though none
    was asked. Its other post-processes that turn it off (pipeline parallel, diffusion LLMs, a
    sparse embedding head, drafting on CPU) are of runs FlatKV does not model."""
    resolves_off = (options.sglang_mamba_radix_cache_strategy == "auto"
                    and radix_cache(profile, options) == "no_buffer")
    return options.sglang_overlap_schedule and not resolves_off


def slots_per_request(profile: CacheProfile, options: StrategyOptions) -> tuple[int, str]:
    """S, the state slots a running request holds in SGLang, and why: the option when set,
    else SGLang 0.5.23's own for the model's architecture, overlap scheduling, page size and
    strategy (``radix_cache``)."""
    if options.sglang_slots_per_request is not None:
        return options.sglang_slots_per_request, "set by the option"
    if options.sglang_disable_radix_cache:
        return RADIX_OFF_SLOTS, (f"{RADIX_OFF_SLOTS} with --disable-radix-cache: no cached or "
                                 "tracked states, its mamba ratio is 1 "
                                 "(kv_cache_configurator.py 3063-3064)")
    arch = profile.architectures[0] if profile.architectures else None
    mode = radix_cache(profile, options)
    if mode == "extra_buffer" and options.sglang_lazy_buffer:
        return LAZY_BUFFER_SLOTS, (f"{LAZY_BUFFER_SLOTS} for {arch}: its extra_buffer_lazy "
                                   "radix cache, 3 + 1 tracking slot (the second allocated "
                                   "only when a request needs it)")
    if mode == "extra_buffer" and options.sglang_overlap_schedule:
        return EXTRA_BUFFER_SLOTS, (f"{EXTRA_BUFFER_SLOTS} for {arch}: its extra_buffer radix "
                                    "cache, 3 + 2 tracking slots with overlap scheduling")
    if mode == "extra_buffer":
        why = (_strategy_flag(options) if options.sglang_told_strategy
               else f"page size {page_size(profile, options)}")
        return NO_BUFFER_SLOTS + 1, (
            f"{NO_BUFFER_SLOTS + 1} for {arch}: its extra_buffer radix cache ({why}), 3 + 1 "
            "tracking slot without overlap scheduling")
    if mode == "no_buffer" and arch in EXTRA_BUFFER_ARCHITECTURES:
        return NO_BUFFER_SLOTS, (f"{NO_BUFFER_SLOTS} for {arch}: its no_buffer radix cache, "
                                 "without overlap scheduling at page size 1")
    if arch:
        return NO_BUFFER_SLOTS, f"{NO_BUFFER_SLOTS} for {arch}: its no_buffer radix cache"
    return NO_BUFFER_SLOTS, (f"{NO_BUFFER_SLOTS}, the no_buffer count, for a model that names no "
                             f"architecture ({EXTRA_BUFFER_SLOTS} for those SGLang serves with "
                             "its extra_buffer radix cache)")


def _strategy_flag(options: StrategyOptions) -> str:
    """The strategy told, as SGLang's command line gives it."""
    return f"--mamba-radix-cache-strategy {options.sglang_mamba_radix_cache_strategy}"


def told_buffer_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not take a told extra_buffer or extra_buffer_lazy for this model
    (None where it would, or where neither is told, or the radix cache is off, which leaves it
    unread: model_override_base.mamba_extra_buffer_of 260-265): a model without a mamba radix
    cache raises "needs mamba state" (model_hook.handle_mamba_radix_cache 1059-1066), one on
    that cache's list without the extra buffer (LFM2) fails validate_mamba_extra_buffer's first
    assert (mamba_hook.py 117-119), a model typed without an architecture cannot be told
    either way. Lazy's other check, overlap scheduling, runs later (``lazy_overlap_refusal``)."""
    if options.sglang_told_strategy not in ("extra_buffer", "extra_buffer_lazy"):
        return None
    arch = profile.architectures[0] if profile.architectures else None
    if profile.has_state and arch in EXTRA_BUFFER_ARCHITECTURES:
        return None
    flag, fix = _strategy_flag(options), "leave the strategy auto"
    if profile.has_state and arch in NO_BUFFER_ARCHITECTURES:
        return (f"it runs {arch}'s state with its no_buffer radix cache only (\"extra_buffer "
                f"is not supported for {arch}; use no_buffer.\"), not {flag}: {fix}")
    if profile.has_state and arch is None:
        return (f"it takes {flag} only for the architectures of its extra-buffer "
                "list (Qwen3-Next, Qwen3.5, Kimi Linear, Falcon-H1, Granite 4.0-H, Nemotron-H), "
                f"and this model names none: {fix}, or load the model's config")
    said = (f"\"{flag} needs mamba state, got {arch}.\"" if arch
            else "it needs mamba state")
    return (f"it keeps no mamba radix cache for {arch or 'this model'}, so it takes no "
            f"{flag} ({said}): {fix}")


def no_buffer_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not run a told no_buffer radix cache: it needs overlap scheduling
    off (mamba_hook.validate_mamba_no_buffer 158-160), which only "auto" turns off itself
    (overrides.py 484-486); None where it is off, or no_buffer is not told or is unread (the
    radix cache off, or a model without a mamba radix cache: model_hook.py 1058-1067). Its
    first check, page size 1, is ``radix_page_refusal``'s."""
    if (options.sglang_told_strategy != "no_buffer" or not options.sglang_overlap_schedule
            or radix_cache(profile, options) != "no_buffer"):
        return None
    return (f"its no_buffer radix cache ({_strategy_flag(options)}) runs without overlap "
            "scheduling only (\"no_buffer do not support overlap schedule.\"), which it "
            "turns off itself only where auto picks no_buffer: turn overlap scheduling off "
            "(--disable-overlap-schedule), or leave the strategy auto")


def lazy_overlap_refusal(options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not size the state with extra_buffer_lazy: it needs overlap
    scheduling (kv_cache_configurator._calculate_mamba_ratio 3073-3076 asserts "Lazy extra
    buffer requires overlap schedule"); None where it is on, or lazy is not told or unread."""
    if options.sglang_lazy_buffer and not options.sglang_overlap_schedule:
        return (f"{_strategy_flag(options)} needs overlap scheduling (\"Lazy extra "
                "buffer requires overlap schedule (--disable-overlap-schedule is "
                "incompatible)\"): turn overlap scheduling on, or leave the strategy auto")
    return None


def _interval_text(options: StrategyOptions) -> str:
    """The track interval as a refusal names it: its tokens, and the flag, told or SGLang's
    default."""
    interval = options.sglang_mamba_track_interval
    flag = ("--mamba-track-interval, SGLang's default" if interval == DEFAULT_MAMBA_TRACK_INTERVAL
            else f"--mamba-track-interval {interval}")
    return f"{tokens_text(interval)} ({flag})"


def _divisors(whole: int) -> list[int]:
    """The numbers that divide ``whole``, smallest first."""
    small = [d for d in range(1, math.isqrt(whole) + 1) if whole % d == 0]
    return sorted({*small, *(whole // d for d in small)})


def _pages_text(pages: list[int]) -> str:
    """Page sizes as a refusal offers them: all where few, or where they are not the powers of
    two that "1, 2, 4, ..., 256" reads as (384's beside a chunk of 64 end 128, 192, 384);
    else the first three and the last two, around an "e.g." that says the list is cut."""
    if len(pages) <= 5 or (len(pages) <= 12 and any(p & (p - 1) for p in pages)):
        return ", ".join(map(n, pages))
    if not any(p & (p - 1) for p in pages):
        return ", ".join(map(n, pages[:3])) + f", ..., {n(pages[-1])}"
    return "e.g. " + ", ".join(map(n, pages[:3])) + f", ..., {n(pages[-2])}, {n(pages[-1])}"


def _on_chunk(page: int, chunk: int) -> bool:
    """Whether SGLang's extra buffer takes ``page`` beside the state's ``chunk``: one divides
    the other (overrides.mamba_cache_chunk_size 1919-1921)."""
    return max(chunk, page) % min(chunk, page) == 0


def _interval_fix(profile: CacheProfile, options: StrategyOptions, least: int) -> str:
    """How to set --mamba-track-interval past a refusal: the least multiple of the page size
    that is at least ``least``, the tokens verified a step and (Mamba2) the model's chunk, so
    that no other of SGLang's checks refuses it. Its value as the flag takes it (1024, not
    1,024: neither SGLang's nor FlatKV's --mamba-track-interval reads a comma)."""
    page = page_size(profile, options)
    least = max(least, draft_tokens(profile, options), _mamba2_chunk(profile) or 1)
    return f"--mamba-track-interval {cdiv(least, page) * page}"


def radix_page_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not start a state hybrid at this page size (None where it
    would): no_buffer takes page size 1 only; extra_buffer a page size that divides the
    state's track interval (``mamba_track_interval % page_size == 0``,
    mamba_hook.validate_mamba_extra_buffer 134-135) and that divides the state's chunk or is
    a multiple of it (overrides.mamba_cache_chunk_size 1919-1921: at the default interval of
    256 every page that divides it does; 48 at an interval of 288 does not)."""
    page, mode = page_size(profile, options), radix_cache(profile, options)
    arch = profile.architectures[0] if profile.architectures else None
    interval = options.sglang_mamba_track_interval
    if mode == "no_buffer" and page > 1:
        return (f"it runs {arch}'s state with its no_buffer radix cache, which takes page "
                f"size 1 only (\"no_buffer only supports page_size=1\"), not {n(page)}: set "
                "the SGLang page size to 1"
                + (" or leave the strategy auto" if options.sglang_told_strategy
                   and arch in EXTRA_BUFFER_ARCHITECTURES else ""))
    if mode != "extra_buffer":
        return None
    chunk = _cache_chunk(profile)
    on_chunk = _on_chunk(page, chunk)
    if interval % page or not on_chunk:  # the pages SGLang takes: only where refused
        pages = _pages_text([d for d in _divisors(interval) if _on_chunk(d, chunk)])
    if interval % page:
        return (f"its extra_buffer radix cache snapshots {arch}'s state every "
                f"{_interval_text(options)}, which the page size must divide: "
                f"{n(page)} does not; set a page size that divides {n(interval)} "
                f"({pages})"
                + (f", or {_interval_fix(profile, options, interval)}" if on_chunk else ""))
    if not on_chunk:
        at_chunk = (f"a chunk of {n(chunk)} tokens ({_stand_in('its')})"
                    if _chunk_stands_in(profile)
                    else f"its chunk of {n(chunk)} tokens")
        return (f"its extra_buffer radix cache caches {arch}'s state at {at_chunk}, "
                "which the page size must divide or be a multiple of "
                "(\"either chunk_size or page_size must be divisible by the other\"): "
                f"{n(page)} is neither; set a page size that divides both {n(interval)} and "
                f"{n(chunk)} or is a multiple of {n(chunk)} dividing {n(interval)} ({pages})")
    return None


def draft_track_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not start with these drafted tokens (None where it would): its
    extra_buffer radix cache snapshots state every --mamba-track-interval tokens, which must be
    at least the D tokens verified a step (``mamba_track_interval >=
    speculative_num_draft_tokens``, mamba_hook.validate_mamba_extra_buffer 132-133)."""
    drafts = draft_tokens(profile, options)
    interval = options.sglang_mamba_track_interval
    if drafts > interval and radix_cache(profile, options) == "extra_buffer":
        return (f"its extra_buffer radix cache needs the track interval, "
                f"{_interval_text(options)}, at least the {n(drafts)} tokens verified a "
                f"step ({n(options.speculative_tokens)} drafted + 1): "
                + (f"draft at most {tokens_text(interval - 1)} a step" if interval > 1
                   else "turn drafting off")  # an interval of 1 takes no drafted token
                + f", or set {_interval_fix(profile, options, drafts)}")
    return None


# The state's chunk SGLang reads where a config gives none: its FLA kernels' 64
# (overrides.mamba_cache_chunk_size 1909-1917), and 256 in the configs of its Mamba2 models
# (configs/falcon_h1.py 166, granitemoehybrid.py 166, nemotron_h.py 41)
FLA_CHUNK_SIZE, MAMBA2_CONFIG_CHUNK_SIZE = 64, 256


def _stand_in(whose: str) -> str:
    """What a refusal or formula says of MAMBA2_CONFIG_CHUNK_SIZE where the model gives no
    chunk (a model typed by hand, a --model-file without it; a config.json's is read with its
    class's default, ``hf_length.chunk_size_of``), as vLLM's side says its 2,048 is "vLLM's
    for a config without one". ``whose``: "SGLang's" in a formula, "its" in a refusal, whose
    opening (``SGLANG_REFUSES_TO_START``) names SGLang already."""
    return (f"{whose} config class default for a Mamba2 model, standing in for a chunk the "
            "model does not give")


def _chunk_stands_in(profile: CacheProfile) -> bool:
    """Whether the chunk SGLang's checks take (``_cache_chunk``) is its Mamba2 config classes'
    256 standing in for one the model does not give: a Mamba2 backend architecture
    (``MAMBA2_BACKEND_ARCHITECTURES``) without ``mamba_chunk_size``. (FLA's 64 is SGLang's own
    where a GDN or KDA config gives none, as theirs never do: no stand-in.)"""
    arch = profile.architectures[0] if profile.architectures else None
    return profile.mamba_chunk_size is None and arch in MAMBA2_BACKEND_ARCHITECTURES


def assumed_chunk_formula(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """The formula line that says which chunk SGLang's extra_buffer checks took where the model
    gives none and its Mamba2 config classes' 256 stands in (``_chunk_stands_in``): those checks
    passed silently, and the model's real chunk may be another. None elsewhere, or where SGLang
    runs no extra_buffer radix cache (no such check)."""
    if not _chunk_stands_in(profile) or radix_cache(profile, options) != "extra_buffer":
        return None
    stand_in = _stand_in("SGLang's")
    return (f"mamba chunk = {n(MAMBA2_CONFIG_CHUNK_SIZE)} tokens ({stand_in}), which "
            "SGLang's extra_buffer radix cache checks the track interval, "
            f"{_interval_text(options)}, and the page size, {n(page_size(profile, options))}, "
            "against; set the model's mamba chunk where its config gives another")


def _cache_chunk(profile: CacheProfile) -> int:
    """The state's chunk SGLang's extra buffer caches at: the config's
    (``profile.mamba_chunk_size``), else its architecture's default."""
    if profile.mamba_chunk_size is not None:
        return profile.mamba_chunk_size
    arch = profile.architectures[0] if profile.architectures else None
    return MAMBA2_CONFIG_CHUNK_SIZE if arch in MAMBA2_BACKEND_ARCHITECTURES else FLA_CHUNK_SIZE


def _mamba2_chunk(profile: CacheProfile) -> int | None:
    """The mamba chunk SGLang's Mamba2 backend checks the track interval against
    (``_cache_chunk``) for an architecture it runs there (``MAMBA2_BACKEND_ARCHITECTURES``);
    None elsewhere."""
    arch = profile.architectures[0] if profile.architectures else None
    return _cache_chunk(profile) if arch in MAMBA2_BACKEND_ARCHITECTURES else None


def track_chunk_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not start a Mamba2 model at this track interval (None where it
    would): with the extra buffer its Mamba2 backend asserts the interval is at least the
    model's mamba chunk (Mamba2AttnBackend.__init__, hybrid_linear_attn_backend.py
    1081-1083), so Nemotron-H-8B (chunk 128) does not start at 64."""
    chunk = _mamba2_chunk(profile)
    interval = options.sglang_mamba_track_interval
    if chunk is None or interval >= chunk or radix_cache(profile, options) != "extra_buffer":
        return None
    arch = profile.architectures[0]
    of_chunk = (f"a mamba chunk of {n(chunk)} tokens ({_stand_in('its')})"
                if _chunk_stands_in(profile)
                else f"{arch}'s mamba chunk of {n(chunk)} tokens")
    return (f"its Mamba2 backend needs the track interval, "
            f"{_interval_text(options)}, at least {of_chunk} "
            "with its extra_buffer radix cache (\"mamba_track_"
            f"interval ({interval}) must be >= mamba_chunk_size ({chunk})\"): set "
            f"{_interval_fix(profile, options, chunk)}")


def track_interval_changes_nothing(profile: CacheProfile, options: StrategyOptions) -> bool:
    """Whether the track interval set (``sglang_mamba_track_interval``) leaves every figure as
    SGLang's default 256 leaves it: it sizes no pool and no slot (the comment on
    ``EXTRA_BUFFER_SLOTS``' snapshots), so where SGLang runs its extra_buffer radix cache (the
    only one that reads it) and neither the interval set nor the default fails a start-up check
    (``radix_page_refusal``, ``draft_track_refusal``, ``track_chunk_refusal``), it changes
    nothing. False at the default itself, and where either is refused: there it decides whether
    SGLang starts (pages of 512 start at 512 and not at 256)."""
    default = replace(options, sglang_mamba_track_interval=DEFAULT_MAMBA_TRACK_INTERVAL)
    if options == default or radix_cache(profile, options) != "extra_buffer":
        return False
    return not any(check(profile, at) for at in (options, default)
                   for check in (radix_page_refusal, draft_track_refusal, track_chunk_refusal))


# SGLang keeps every conv state in bfloat16 unless SGLANG_MAMBA_CONV_DTYPE names another
# (mamba_utils.mamba2_state_dtype, 0.5.23): no config field and no server option changes it.
CONV_DTYPE = "bfloat16"
CONV_DTYPE_WHY = "SGLang's conv dtype, SGLANG_MAMBA_CONV_DTYPE's default"


def state_tensors(profile: CacheProfile, dtype: str, why: str) -> tuple[dict[str, int], str]:
    """One state layer's tensors as SGLang allocates them (name -> bytes), and the formula
    that says so.

    SGLang keeps every ssm tensor in its own dtype (``dtype``, from ``ssm_dtype``, ``why`` it
    is that one) and every conv tensor in bfloat16 (``CONV_DTYPE``), whatever the model's, so
    each is re-sized from the model's element count. A tensor whose element size the profile
    does not know (raw bytes) is taken as given.
    """
    targets = {"ssm": (profile.ssm_element_bytes, dtype, why),
               "conv": (profile.conv_element_bytes, CONV_DTYPE, CONV_DTYPE_WHY)}
    tensors: dict[str, int] = {}
    parts: list[str] = []
    notes: list[str] = []
    unknown: list[str] = []  # tensors SGLang would re-size, of an element size not known
    for name, nbytes in profile.state_const_bytes.items():
        element, to_dtype, to_why = targets.get(name, (None, "", ""))
        if element is None:
            tensors[name] = nbytes
            parts.append(f"{name} {n(nbytes)} B")
            if to_dtype:
                unknown.append(name)
            continue
        elements, size = nbytes // element, dtype_bytes(to_dtype)
        tensors[name] = elements * size
        if name == "ssm" or tensors[name] != nbytes:  # the conv said in elements when re-sized
            parts.append(f"{name} {n(elements)} elements x {size} B ({to_dtype}: {to_why})")
        else:
            parts.append(f"{name} {n(nbytes)} B")
        if tensors[name] != nbytes:
            notes.append(f"the model's {element}-byte {name} elements take {n(nbytes)} B")
    text = "state bytes per layer = " + " + ".join(parts)
    if len(parts) > 1 or notes:
        text += f" = {n(sum(tensors.values()))}"
    if "ssm" not in tensors:  # a short conv: its state is the conv alone
        text += " (no ssm state)"
    if unknown:
        one = len(unknown) == 1
        text += (f" as given (raw bytes: the {' and '.join(unknown)} dtype{'' if one else 's'} "
                 f"{'is' if one else 'are'} unknown, so SGLang's "
                 f"{' and '.join(f'{targets[name][1]} {name}' for name in unknown)} "
                 f"{'is' if one else 'are'} not applied)")
    return tensors, text + (f" ({'; '.join(notes)})" if notes else "")


def budget_of_next_slot(r: StrategyResult, profile: CacheProfile) -> int | None:
    """The least budget at which SGLang's state pool (``r``'s run) holds one slot more; None
    for a model without state, or with fixed slots (--max-mamba-cache-size, or
    --disable-radix-cache's max_running_requests + 1). Past that
    budget the KV memory is a slot's bytes smaller (budget - slots x slot bytes), so SGLang's
    concurrency is not monotone in the budget: one byte more can hold fewer requests. The pool
    is ``budget x r / (1 + r)`` (``state_pool_bytes``), so ``k`` slots start at
    ``ceil(k x slot x (1 + r) / r)``, or a byte or so past it (``budget_for_state_pool``)."""
    x = r.extras
    if "state_slot_bytes" not in x or x.get("mamba_cache_size_told") or x.get(
            "state_from_running_requests"):  # fixed slots: the budget moves the KV pool alone
        return None
    ratio = Fraction(x["mamba_full_memory_ratio"])
    if drafts := x.get("sglang_draft_tokens"):  # K + 1 request slots beside their buffers
        return budget_for_spec_slots(x["request_state_slots"] + 1, ratio, x["state_slot_bytes"],
                                     drafts, x["slots_per_request"])
    more = (x["state_slots"] + 1) * x["state_slot_bytes"]
    return budget_for_state_pool(more, ratio)


def state_pool_bytes(budget_bytes: int, r: Fraction) -> int:
    """SGLang's state pool beside attention: ``budget x r / (1 + r)`` in its own float
    arithmetic (``_handle_max_mamba_cache``: rest GiB x r / (1 + r), times 2**30, the slots
    ``int((pool - slot) // slot) + 1``), whole bytes down. Where the exact quotient is a whole
    number of slots, the float one can fall a hair under it and SGLang holds a slot fewer:
    1,053,296,640 B at r = 0.1 is 95,754,240 B exactly (B / 11), 95,754,239.99... in floats."""
    ratio = float(r)
    return int(budget_bytes * ratio / (1 + ratio))


def budget_for_state_pool(need: int, r: Fraction) -> int:
    """The least budget whose state pool (``state_pool_bytes``) holds ``need`` bytes: the exact
    ``ceil(need x (1 + r) / r)``, a byte more while SGLang's float pool falls under it, or a
    byte less while it still holds (at terabytes a float can round up to the next whole byte).
    The float pool grows with the budget, so the first budget that holds is the least."""
    return _least_budget(cdiv(need * (r.numerator + r.denominator), r.numerator),
                         lambda budget: state_pool_bytes(budget, r) >= need)


def budget_for_spec_slots(k: int, r: Fraction, slot_bytes: int, drafts: int,
                          per_request: int) -> int:
    """The least budget at which SGLang, verifying ``drafts`` (D) tokens a step, keeps ``k``
    request slots (``spec_request_slots``): the exact ``ceil((slot x (1 + D) + k x slot x (1 +
    D / S)) x (1 + r) / r)``, then a byte up while its floats fall short, or down while they
    still hold (K grows with the budget, so the first budget that holds is the least)."""
    need = slot_bytes * (1 + drafts) + k * slot_bytes * Fraction(per_request + drafts,
                                                                 per_request)
    return _least_budget(math.ceil(need * (1 + r) / r),
                         lambda budget: spec_request_slots(
                             budget, r, slot_bytes, drafts, per_request) >= k)


def _least_budget(exact: int, holds: Callable[[int], bool]) -> int:
    """The least budget that ``holds``, starting from the ``exact`` one (the real arithmetic's):
    a byte up while SGLang's floats fall short of it, or down while they still hold. ``holds``
    is monotone in the budget, so the first budget that holds is the least."""
    budget = max(exact, 1)
    while not holds(budget):
        budget += 1
    while budget > 1 and holds(budget - 1):
        budget -= 1
    return budget


def request_slots(slots: int) -> int:
    """The state slots of SGLang's MambaPool that hold requests' states: all but its padding
    slot (slot 0, for padded tokens' dummy writes), SGLang's ``max_mamba_cache_size``."""
    return max(slots - 1, 0)


@dataclass(frozen=True)
class StatePools:
    """What SGLang's state takes of the budget before its token pools get the rest: ``slots``
    of ``slot_bytes`` each (MambaPool's padding slot among them), out of the state pool's share
    of the budget (``state_pool``), and the draft-token buffers reserved beside them
    (``buffers``). A model without state layers has no slots (None) and takes 0 B."""

    slots: int | None = None
    slot_bytes: int | None = None
    state_pool: int = 0
    buffers: int = 0

    @property
    def slot_total(self) -> int:
        """Bytes of the slots themselves (``slots x slot_bytes``): what SGLang allocates, the
        rest of a budget-sized state pool going to the KV pool."""
        return 0 if self.slots is None else self.slots * self.slot_bytes

    @property
    def held(self) -> int:
        """Bytes the state takes of the budget: its slots and their draft-token buffers."""
        return self.slot_total + self.buffers


def state_pools(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                 formulas: list[str], extras: dict[str, object]) -> StatePools:
    """SGLang's state pool (``StatePools``). The pool takes ``r / (1 + r)`` of the budget (with
    attention layers or without), cut into slots of every state layer's conv + ssm. One slot is
    MambaPool's padding slot (slot 0, for padded tokens' dummy writes), which SGLang's sizing
    charges since its PR #32184: ``max_mamba_cache_size`` is the other ``slots - 1``, and a
    running request holds S of those. With speculative decoding (``draft_tokens``) the pool also
    holds the draft-token buffers, ``buffers`` bytes (``_spec_state_slots``; 0 without). Appends
    its formulas and extras."""
    n_state = profile.count(LINEAR_ATTENTION)
    r = options.mamba_full_memory_ratio
    s, s_why = slots_per_request(profile, options)
    dtype, why = ssm_dtype(profile, options)
    tensors, layer_text = state_tensors(profile, dtype, why)
    layer_bytes = sum(tensors.values())
    formulas.append(layer_text)
    slot_bytes = n_state * layer_bytes
    drafts = draft_tokens(profile, options)
    if fixed_state_size(options, drafts) is not None:
        slots, buffers = _told_state_slots(options, n_state, layer_bytes, s, drafts, formulas,
                                           extras)
        state_pool = slots * slot_bytes + buffers
    else:
        slots, state_pool, buffers = _budget_state_slots(
            profile, options, budget_bytes, n_state, layer_bytes, s, drafts, formulas, extras)
    for_requests = request_slots(slots)
    running_cap = for_requests // s
    formulas += [
        f"running cap = max_mamba_cache_size // S = {n(for_requests)} // {s} = "
        f"{n(running_cap)} (S: the state slots a running request holds, SGLang's mamba "
        f"ratio, {s_why}; max_running_requests is at most this)",
    ]
    extras.update(
        sglang_ssm_dtype=dtype, sglang_ssm_dtype_source=why, state_layer_bytes=layer_bytes,
        state_tensor_bytes=tensors,
        mamba_full_memory_ratio=r, state_pool_bytes=state_pool, state_slot_bytes=slot_bytes,
        state_slots=slots, request_state_slots=for_requests, slots_per_request=s,
        running_request_cap=running_cap,
    )
    return StatePools(slots, slot_bytes, state_pool, buffers)


def _budget_state_slots(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                        n_state: int, layer_bytes: int, s: int, drafts: int,
                        formulas: list[str], extras: dict[str, object]) -> tuple[int, int, int]:
    """``(slots, state_pool, buffers)`` where SGLang sizes its state slots from the budget
    (no --max-mamba-cache-size): the pool ``budget x r / (1 + r)``, cut into slots, or with
    drafted tokens solved jointly with their buffers
    (``_spec_state_slots``). Appends their formulas and extras."""
    r = options.mamba_full_memory_ratio
    slot_bytes = n_state * layer_bytes
    state_pool = state_pool_bytes(budget_bytes, r)
    exact = math.floor(Fraction(budget_bytes) * r / (1 + r))
    formulas.append(
        f"state pool = budget x r / (1 + r) = {n(budget_bytes)} x {ratio_text(r)} / "
        f"(1 + {ratio_text(r)}) = {n(state_pool)}" + (
            "" if state_pool == exact else
            f" in SGLang's float arithmetic, {n(exact)} in exact arithmetic: SGLang holds what "
            "its floats give") + (
            "" if profile.has_attention else
            " (SGLang splits so without attention layers too: _handle_max_mamba_cache reads "
            "no layer count, and the rest goes to a token pool of no layers)")
    )
    if drafts:
        slots, buffers = _spec_state_slots(options, budget_bytes, n_state, layer_bytes, s,
                                           drafts, formulas, extras)
        return slots, state_pool, buffers
    slots = state_pool // slot_bytes
    formulas.append(
        f"state slots = state pool // ({n_state} layers x "
        f"{n(layer_bytes)} B) = {n(state_pool)} // {n(slot_bytes)} = "
        f"{n(slots)}, one of them the padding slot: max_mamba_cache_size = {n(slots)} - 1 = "
        f"{n(request_slots(slots))} for requests")
    return slots, state_pool, 0


def _told_state_slots(options: StrategyOptions, n_state: int, layer_bytes: int, s: int,
                      drafts: int, formulas: list[str],
                      extras: dict[str, object]) -> tuple[int, int]:
    """``(slots, buffers)`` where the state size is fixed (``fixed_state_size``): told
    --max-mamba-cache-size M, M request slots and the padding slot, whatever the budget and r
    (``_handle_max_mamba_cache``, kv_cache_configurator.py 3303-3309 and 3404-3409), and with
    ``drafts`` (D) tokens verified a step, draft-token buffers for min(max_running_requests,
    M // S) + 1 requests (3313-3324: max_running_requests the told one, else the hook's 48);
    with --disable-radix-cache and none told, M is max_running_requests (told, or the hook's
    48) and the buffers are for M + 1 requests (3325-3345). The KV pool gets the rest of the
    budget. Appends their formulas and extras."""
    m = fixed_state_size(options, drafts)
    slot_bytes = n_state * layer_bytes
    slots, buffers, held = told_state(options, slot_bytes, s, drafts)
    each = f"{n_state} layers x {n(layer_bytes)} B = {n(slot_bytes)} B each"
    if options.sglang_max_mamba_cache_size is not None:
        formulas.append(
            f"state slots = --max-mamba-cache-size + 1 = {n(m)} + 1 = {n(m + 1)} (one the "
            f"padding slot), {each}: SGLang takes the told size whatever the budget (its "
            "--mamba-full-memory-ratio goes unread)")
        extras["mamba_cache_size_told"] = True
    else:
        source = ("as --max-running-requests tells it"
                  if options.sglang_max_running_requests is not None
                  else hook_requests_text(m))
        formulas.append(
            f"state slots = max_running_requests + 1 = {n(m)} + 1 = {n(m + 1)} (one the "
            f"padding slot; max_running_requests {source}), {each}: with --disable-radix-cache "
            "SGLang sizes the state from it whatever the budget (_handle_max_mamba_cache, "
            "\"mamba_pool.from_max_running_requests\"; its --mamba-full-memory-ratio goes "
            "unread)")
        extras["state_from_running_requests"] = True
    if not drafts:
        return slots, 0
    if options.sglang_max_mamba_cache_size is not None:
        formulas.append(
            f"draft-token buffers = slot x (min(max_running_requests, M // S) + 1) x D = "
            f"{n(slot_bytes)} x (min({n(running_request_limit(options, drafting=True))}, "
            f"{n(m)} // {s}) + 1) x {drafts} = {n(slot_bytes)} "
            f"x {n(held + 1)} x {drafts} = {n(buffers)} (D = {drafts} tokens verified a step; "
            "SGLang reserves this much beside the told slots)")
    else:
        formulas.append(
            f"draft-token buffers = slot x (max_mamba_cache_size + 1) x D = {n(slot_bytes)} x "
            f"{n(m + 1)} x {drafts} = {n(buffers)} (D = {drafts} tokens verified a step; "
            "SGLang reserves this much beside the slots)")
    extras.update(sglang_draft_tokens=drafts, draft_buffer_bytes=buffers)
    return slots, buffers


def fixed_state_size(options: StrategyOptions, drafts: int) -> int | None:
    """M, SGLang's max_mamba_cache_size where it is not a share of the budget: told
    --max-mamba-cache-size; else with --disable-radix-cache, max_running_requests where one is
    set before the pools (told, or the 48 its speculative hook sets while ``drafts``:
    kv_cache_configurator.py 3325-3336, ``max(1, max_running_requests)`` for one attention DP
    rank); None where SGLang sizes the state from the budget and r."""
    if options.sglang_max_mamba_cache_size is not None:
        return options.sglang_max_mamba_cache_size
    if options.sglang_disable_radix_cache:
        return running_request_limit(options, drafting=bool(drafts))
    return None


def state_size_source(options: StrategyOptions) -> tuple[str, str]:
    """Where a fixed state size (``fixed_state_size``) comes from, as (the flag that moves it,
    the words that name it): --max-mamba-cache-size where told, else --disable-radix-cache's
    max_running_requests (told, or the speculative hook's 48)."""
    if options.sglang_max_mamba_cache_size is not None:
        return "--max-mamba-cache-size", "--max-mamba-cache-size"
    if options.sglang_max_running_requests is not None:
        return "--max-running-requests", ("--max-running-requests (with "
                                          "--disable-radix-cache)")
    return "--max-running-requests", ("max_running_requests (the speculative hook's, with "
                                      "--disable-radix-cache)")


def told_state(options: StrategyOptions, slot_bytes: int, s: int,
               drafts: int) -> tuple[int, int, int]:
    """``(slots, buffers, requests)`` SGLang keeps where its state size M is fixed
    (``fixed_state_size``): M + 1 slots (the padding slot), and with ``drafts`` (D) tokens a
    step the draft-token buffers' bytes, ``slot x (requests + 1) x D`` for ``requests =
    min(max_running_requests, M // S)`` (``spec_reserved_requests``) where M is told, M where
    it is --disable-radix-cache's max_running_requests (kv_cache_configurator.py 3337-3345;
    0 and 0 without drafting)."""
    m = fixed_state_size(options, drafts)
    if not drafts:
        return m + 1, 0, 0
    held = (spec_reserved_requests(m, s, running_request_limit(options, drafting=True))
            if options.sglang_max_mamba_cache_size is not None else m)
    return m + 1, slot_bytes * (held + 1) * drafts, held


def _spec_state_slots(options: StrategyOptions, budget_bytes: int, n_state: int,
                      layer_bytes: int, s: int, drafts: int, formulas: list[str],
                      extras: dict[str, object]) -> tuple[int, int]:
    """``(slots, buffers)``: SGLang's state slots (the padding slot included) and the bytes it
    reserves for the draft-token state buffers, with ``drafts`` (D) tokens verified a step: a
    state budget of ``budget x r / (1 + r)`` (r the options' mamba_full_memory_ratio), and the
    max_running_requests the options give before its pools cap it (``running_request_limit``:
    told by --max-running-requests, else the hook's 48; ``spec_request_slots``,
    ``spec_reserved_requests``). Appends their formulas and extras."""
    r = options.mamba_full_memory_ratio
    limit = running_request_limit(options, drafting=True)
    told = options.sglang_max_running_requests is not None
    slot_bytes = n_state * layer_bytes
    k = spec_request_slots(budget_bytes, r, slot_bytes, drafts, s)
    ratio = float(r)
    state_float = budget_bytes * ratio / (1 + ratio)
    formulas.append(
        f"speculative decoding, D = {drafts} tokens verified a step (--speculative-num-steps "
        f"{drafts - 1}, topk 1: D = steps + 1): MambaPool keeps each of the K + 1 slots' states "
        "and, for min(max_running_requests, K // S) + 1 requests, D draft tokens' states "
        "(intermediate ssm and conv windows), both out of the state budget (SGLang's "
        "_handle_max_mamba_cache, its floats)")
    formulas.append(
        f"max_mamba_cache_size K = int((state budget - slot x (1 + D)) // (slot x (1 + D / S))) "
        f"= int(({bytes_text(state_float)} - {n(slot_bytes)} x {1 + drafts}) // ({n(slot_bytes)}"
        f" x (1 + {drafts} / {s}))) = {n(k)}; state slots = K + 1 = {n(max(k + 1, 0))} (one "
        f"the padding slot), {n_state} layers x {n(layer_bytes)} B = {n(slot_bytes)} B each")
    if k < 1:
        return max(k + 1, 0), 0
    held = spec_reserved_requests(k, s, limit)
    buffers = slot_bytes * (held + 1) * drafts
    formulas.append(
        f"draft-token buffers = slot x (min(max_running_requests, K // S) + 1) x D = "
        f"{n(slot_bytes)} x (min({n(limit)}, {n(k)} // {s}) + 1) x {drafts} "
        f"= {n(slot_bytes)} x {n(held + 1)} x {drafts} = {n(buffers)} (SGLang reserves this "
        f"much; max_running_requests is {n(limit)}, "
        + ("as --max-running-requests tells it)" if told else
           "which its speculative hook sets when --max-running-requests is not given)"))
    extras.update(sglang_draft_tokens=drafts, draft_buffer_bytes=buffers)
    return k + 1, buffers
