"""The engine options the app and the CLI offer beside each layout: which layouts read each
option, for which models it changes a figure, and when another option leaves it idle.

One ``EngineOption`` per ``StrategyOptions`` knob says it once; the app's expander, its link
settings (``app_state``), the CLI's notes on options that do nothing (``cli``) and the tests all
derive from ``ENGINE_OPTIONS``. Pure Python, no streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from flatkv.plan import FULL_ATTENTION
from flatkv.profile import CacheProfile
from flatkv.strategies import STRATEGIES, StrategyOptions, model_blocker
from flatkv.strategies.paged import label_groups
from flatkv.strategies.sglang import draft_tokens as sglang_draft_tokens
from flatkv.strategies.sglang import (
    fixed_state_size,
    radix_cache,
    radix_page_refusal,
    swa_cap_unchunked,
    swa_request_cap,
)
from flatkv.strategies.sglang import pool_layers as sglang_pool_layers
from flatkv.strategies.sglang import speculative_not_modelled as sglang_speculative_not_modelled
from flatkv.strategies.sglang import swa_pool as sglang_swa_pool
from flatkv.strategies.vllm import runs_all_as_align

ENGINE_DEFAULTS = StrategyOptions()  # each engine's own defaults
VLLM_COLUMN, SGLANG_COLUMN, SCHEDULING_COLUMN = "vLLM", "SGLang", "Scheduling and two-level pages"


def _two_level_pads(profile: CacheProfile) -> bool:
    """Whether two-level parents of an attention-only model can carry padding at some P: groups
    of unequal layer counts, or a group whose bytes per token (layers x KV bytes) are not a
    multiple of the parent alignment (DeepSeek-V3: 61 x 1,152 B; at P 1 that pads)."""
    groups = label_groups(profile)
    align = ENGINE_DEFAULTS.lcm_alignment_bytes
    return (len({g.layers for g in groups}) > 1
            or any(g.layers * profile.kv_bytes_of(g.kind) % align for g in groups))


def _has_state(profile: CacheProfile) -> bool:
    return profile.has_state


def _has_window(profile: CacheProfile) -> bool:
    """Sliding or chunked layers: their pages per request count the tokens of one step."""
    return bool(profile.windowed_labels)


def _always(profile: CacheProfile) -> bool:
    return True


@dataclass(frozen=True)
class EngineOption:
    """One engine option: a StrategyOptions knob, the AppState field of the same name, a
    setting in the link (``_SETTINGS``), a widget (``app_pages._widgets.engine_widget``) and a
    CLI flag (``strategy_cli``). The facts the app derives its tables from live here, once."""

    field: str
    label: str  # how a caption names it once changed ("kernel block 64")
    read_by: tuple[str, ...]  # the layouts (STRATEGIES) whose figures it can change
    column: str  # its column in the engine options' expander
    # whether it changes the figures of a model (given the layouts that read it)
    acts: Callable[[CacheProfile], bool] = _always
    only_in_mode: str | None = None  # the mamba cache mode it needs to act, if one


# The paged layouts that take state layers (aliased refuses a state hybrid) count a request's
# state pages with the mamba cache mode, the speculative tokens and the checkpoint blocks; every
# layout sizes sliding-window pages with max batched tokens. In the expander's and the link's
# order.
_PAGED_WITH_STATE = ("flat", "per-component", "vllm", "lcm")
ENGINE_OPTIONS = (
    # vLLM runs DeepSeek-V3.2's sparse MLA at its own kernel block of 64, whatever it is told
    EngineOption("kernel_block_size", "kernel block", ("vllm",), VLLM_COLUMN,
                 lambda p: p.indexer_bytes_per_slot is None),
    EngineOption("mamba_cache_mode", "mamba cache mode", _PAGED_WITH_STATE, VLLM_COLUMN,
                 _has_state),
    # and SGLang's draft-token state buffers beside its state slots, and for any model the 48
    # running requests its speculative hook sets (the paged layouts read it for state only)
    EngineOption("speculative_tokens", "speculative tokens", (*_PAGED_WITH_STATE, "sglang"),
                 SCHEDULING_COLUMN),
    EngineOption("prefill_checkpoint_blocks", "prefill checkpoint blocks", _PAGED_WITH_STATE,
                 VLLM_COLUMN, _has_state, only_in_mode="align"),
    # vLLM's, in mode all, which some models run as align; a hybrid's (vLLM 0.31 aligns no
    # other P to the chunk)
    EngineOption("mamba_chunk_size", "mamba chunk", ("vllm",), VLLM_COLUMN,
                 lambda p: p.has_state and p.has_attention and runs_all_as_align(p) is None,
                 only_in_mode="all"),
    # off, vLLM keeps every token of sliding and chunked layers, and refuses a state hybrid
    EngineOption("vllm_hybrid_manager", "vLLM hybrid KV cache manager", ("vllm",), VLLM_COLUMN,
                 lambda p: (p.has_state and p.has_attention)
                 or (FULL_ATTENTION in p.layer_types and _has_window(p))),
    # splits the budget between a state pool and a KV pool (a pool of no layers for state
    # layers alone, which SGLang splits for all the same)
    EngineOption("mamba_full_memory_ratio", "SGLang mamba/full ratio", ("sglang",),
                 SGLANG_COLUMN, _has_state),
    EngineOption("swa_full_tokens_ratio", "SGLang sliding/full tokens ratio", ("sglang",),
                 SGLANG_COLUMN,
                 lambda p: FULL_ATTENTION in p.layer_types and _has_window(p)),
    EngineOption("sglang_slots_per_request", "SGLang slots per request", ("sglang",),
                 SGLANG_COLUMN, _has_state),
    # --max-running-requests: the max_running_requests SGLang logs, whatever the context, and
    # the requests its draft-token buffers are reserved for
    EngineOption("sglang_max_running_requests", "SGLang max running requests", ("sglang",),
                 SGLANG_COLUMN, lambda p: p.has_attention or p.has_state),
    # --max-mamba-cache-size: the state slots told, the KV pool the rest
    EngineOption("sglang_max_mamba_cache_size", "SGLang max mamba cache size", ("sglang",),
                 SGLANG_COLUMN, _has_state),
    # --disable-radix-cache: one state slot a request, the state sized from max running
    # requests where set, and a hybrid SWA pool from SGLang's request cap (idle for a model
    # without state where no max running requests is set: ``_radix_cache_idle``)
    EngineOption("sglang_disable_radix_cache", "SGLang --disable-radix-cache", ("sglang",),
                 SGLANG_COLUMN,
                 lambda p: p.has_state or (FULL_ATTENTION in p.layer_types and _has_window(p))),
    # sets the tracking slots of the extra_buffer radix cache (slots per request)
    EngineOption("sglang_overlap_schedule", "SGLang overlap scheduling", ("sglang",),
                 SGLANG_COLUMN, lambda p: radix_cache(p, ENGINE_DEFAULTS) == "extra_buffer"),
    # pages the token pools (for state layers alone the pool of context_len tokens over no
    # layers), and a mamba radix cache takes only some pages
    EngineOption("sglang_page_size", "SGLang page size", ("sglang",), SGLANG_COLUMN,
                 lambda p: (p.has_attention or p.has_state)
                 and p.indexer_bytes_per_slot is None),
    # re-sizes the ssm tensors of a model's state layers
    EngineOption("sglang_ssm_dtype", "SGLang ssm dtype", ("sglang",), SGLANG_COLUMN,
                 lambda p: p.ssm_element_bytes is not None),
    EngineOption("sglang_swa_pool", "SGLang sliding-window pool", ("sglang",), SGLANG_COLUMN,
                 _has_window),
    # --chunked-prefill-size: the tokens a sliding-window (or chunked) request holds beside its
    # window, and the chunks in flight of the SWA request cap (None: by the GPU's memory)
    EngineOption("sglang_chunked_prefill_size", "SGLang chunked prefill size", ("sglang",),
                 SGLANG_COLUMN, _has_window),
    # sizes the pages a sliding-window (or chunked) request holds
    EngineOption("max_batched_tokens", "max batched tokens",
                 (*_PAGED_WITH_STATE, "aliased"), SCHEDULING_COLUMN, _has_window),
    # vLLM sizes them by two batches in flight with it (0.26 and later)
    EngineOption("vllm_async_scheduling", "vLLM async scheduling", ("vllm",), VLLM_COLUMN,
                 _has_window),
    # parents pad with a state row, with attention groups of unequal layer counts (3 full + 5
    # sliding layers pad the full group's parents by 2/3), or with payloads off the alignment
    EngineOption("lcm_padding_bound", "padding bound", ("lcm",), SCHEDULING_COLUMN,
                 lambda p: p.has_state or _two_level_pads(p)),
)
ENGINE_FIELDS = tuple(o.field for o in ENGINE_OPTIONS)
ENGINE_LABELS = {o.field: o.label for o in ENGINE_OPTIONS}
# The engine options each layout reads, in ENGINE_FIELDS' order.
STRATEGY_FIELDS: dict[str, tuple[str, ...]] = {
    s: tuple(o.field for o in ENGINE_OPTIONS if s in o.read_by) for s in STRATEGIES}


def strategy_fields(strategy: str, profile: CacheProfile) -> tuple[str, ...]:
    """The options of ``strategy`` that change its figures for ``profile`` (each option's
    ``acts``): a mode no state layer reads, a window size no sliding layer keeps, are not
    offered; nor is any option of a layout that serves no such model (``model_blocker``)."""
    if model_blocker(strategy, profile):
        return ()
    return tuple(o.field for o in ENGINE_OPTIONS
                 if strategy in o.read_by and o.acts(profile)
                 and not _UNREAD_BY.get((strategy, o.field), _never)(profile))


def _never(_profile: CacheProfile) -> bool:
    return False


# Options a layout that reads them leaves unread for some models: the paged layouts count
# drafted tokens in state pages only; SGLang's speculative decoding is modelled for a model
# without state (its running cap), a state hybrid with one token pool and state layers alone,
# not beside a sliding-window pool (``sglang.speculative_not_modelled``, at the pool SGLang
# picks itself).
_UNREAD_BY: dict[tuple[str, str], Callable[[CacheProfile], bool]] = {
    **{(name, "speculative_tokens"): lambda p: not p.has_state for name in _PAGED_WITH_STATE},
    ("sglang", "speculative_tokens"): lambda p: sglang_speculative_not_modelled(
        p, StrategyOptions(speculative_tokens=1)),
}


def idle_engine_option(option: EngineOption, profile: CacheProfile,
                       options: StrategyOptions) -> str:
    """Why another option leaves ``option`` nothing to act on ("" when none does): its mamba
    cache mode not set (``only_in_mode``), SGLang's sliding / full ratio (and its chunked
    prefill size) without its sliding pool, the ratio where its request cap sizes that pool,
    overlap scheduling where S is told or the radix cache is off, the radix cache where it
    leaves nothing (``_radix_cache_idle``)."""
    if option.only_in_mode not in (None, options.mamba_cache_mode):
        return f"it acts only in mamba cache mode {option.only_in_mode}"
    if (option.field in ("swa_full_tokens_ratio", "sglang_chunked_prefill_size")
            and not sglang_swa_pool(profile, options)[0]):
        return "SGLang keeps no sliding-window pool of its own here"
    if option.field == "swa_full_tokens_ratio" and swa_request_cap(profile, options):
        return ("SGLang sizes its sliding-window pool from its request cap here "
                "(--disable-radix-cache with max running requests set)")
    if (option.field == "sglang_overlap_schedule"
            and options.sglang_slots_per_request is not None):
        return "SGLang slots per request is set, which overlap scheduling would decide"
    if (option.field == "sglang_overlap_schedule" and options.sglang_disable_radix_cache
            and not swa_request_cap(profile, options)):
        return "SGLang's radix cache is off, so it decides no state slots a request holds"
    if option.field == "sglang_disable_radix_cache":
        return _radix_cache_idle(profile, options)
    return ""


def _radix_cache_idle(profile: CacheProfile, options: StrategyOptions) -> str:
    """Why --disable-radix-cache changes no figure of ``profile`` at ``options`` ("" where it
    does): without state it acts only on a hybrid SWA pool with max running requests set (its
    request cap); with state, where S is told, the state is sized from the budget either way
    and no radix cache refuses the page, nothing it sets is left."""
    off = replace(options, sglang_disable_radix_cache=True)
    if swa_request_cap(profile, off) is not None:
        return ""
    if not profile.has_state:
        sizes = ("without state it sizes only a sliding-window pool of SGLang's own beside full "
                 "layers")
        if not all(sglang_pool_layers(profile, off)):
            return f"{sizes}, and SGLang keeps none here"
        if swa_cap_unchunked(profile, off):
            return (f"{sizes}, from its request cap, which it leaves unused with chunked "
                    "prefill off")
        return f"{sizes}, and only with max running requests told or tokens drafted"
    on = replace(options, sglang_disable_radix_cache=False)
    if (options.sglang_slots_per_request is not None and radix_page_refusal(profile, on) is None
            and fixed_state_size(off, sglang_draft_tokens(profile, off))
            == options.sglang_max_mamba_cache_size):
        return "SGLang slots per request is set, which the radix cache would decide"
    return ""


def acting_engine_options(profile: CacheProfile, options: StrategyOptions,
                          strategies: Iterable[str] = STRATEGIES) -> tuple[str, ...]:
    """The engine options one of ``strategies`` reads for ``profile`` (``strategy_fields``)
    and that act with the other ``options`` as set (``idle_engine_option``)."""
    offered = {f for name in strategies for f in strategy_fields(name, profile)}
    return tuple(o.field for o in ENGINE_OPTIONS
                 if o.field in offered and not idle_engine_option(o, profile, options))
