"""SGLang's separate pools (SPEC section 3.2): no shared page ids, a static split.

- State: a per-request slot pool, its ssm tensors in SGLang's own dtype (``ssm_dtype``:
  SGLANG_MAMBA_SSM_DTYPE, else the config's ``mamba_ssm_dtype``, else float32; vLLM keeps the
  model's), its conv tensors in bfloat16 (``CONV_DTYPE``, whatever the model's). It gets
  ``budget * r / (1 + r)`` (``r = --mamba-full-memory-ratio``, 0.9), with attention layers or
  without; slots = that // (state bytes of all state layers); the KV pool gets the rest,
  ``budget - slots * slot_bytes``. A model of state layers alone keeps a token pool of
  ``context_len`` tokens over no layers instead (``_layerless_token_pool``): the rest of the
  budget holds nothing, and requests still take their tokens' indices from that pool. One
  slot is MambaPool's padding slot, so running requests are capped
  by ``(slots - 1) // S`` (S slots per request, ``sglang_slots_per_request``).
- KV: a token pool over the full-attention layers, ``kv_tokens = kv_memory // (bytes per token
  over those layers)``, rounded down to whole pages. With sliding layers (SPEC 3.2),
  ``full = kv_memory // (F * n_full + r_swa * F * n_swa)`` in whole pages and ``swa =
  floor(r_swa * full)`` in whole pages (SGLang's HybridSWAPoolConfigurator since April 2026;
  before it, set_num_token_hybrid split whole tokens of every layer, which can differ by a
  token or a page). SGLang refuses a swa pool of at most ``W + page`` tokens beside a full
  pool, W as its model reports it (gpt-oss's and Gemma 4's one short of the config's:
  ``sglang_window``); a pool of sliding layers alone has no such floor. SGLang keeps
  that second pool (its hybrid SWA pool) only for the architectures on its list
  (``SGLANG_SWA_ARCHITECTURES``, by the config's ``architectures``); for the others, such as
  Gemma 2 / 3, every attention layer keeps every token in one pool (``swa_pool``).

The sliding / full split is computed in SGLang's own float arithmetic (``swa_split``): its
float cell can move a pool by a token, or at a page size over 1 by a page, and the log prints
what the float gives. So is the state pool (``state_pool_bytes``): where ``budget x r / (1 +
r)`` is exactly a whole number of slots, SGLang's float falls a hair under it and holds a slot
fewer. A request at
context L holds L full tokens, ``min(W - 1 + chunked_prefill_size, L)`` sliding tokens (Llama 4's
chunked layers ride the sliding pool: ``min(C + chunked_prefill_size, L)``, C the chunk) and S
state slots, as though every request were in its prefill at once. With --disable-radix-cache
(and chunked prefill on) SGLang frees each request's sliding tokens behind its window as it
goes and prefills one chunked request at a time, so the sliding pool holds what its SWA request
cap counts: each request's live window, ``min(L, W + 128 x D + P + decode)``, beside the chunks
in flight once (``_radix_off_swa_limit``). With chunked prefill off (``--chunked-prefill-size
-1``, or 0: SGLang reads any value <= 0 so; ``CHUNKED_PREFILL_OFF``) it prefills a prompt in one
forward, whatever max_prefill_tokens (which bounds a batch of prompts, never the first:
schedule_policy.py 1627-1633), writing the whole prompt (at most L - 1 tokens: one output token
at least) into the sliding pool before any leaves its window (maybe_evict_swa frees tokens
before an extend's prefix only: schedule_batch.py 4068-4122), and admits it only while the
pool's free tokens exceed its reservation, the prompt's pages and a page
(``_unchunked_swa_limit``); no page-size check (validation_hook.py 243) and no SWA request cap
(below) apply.

With speculative decoding (N tokens drafted a step, ``speculative_tokens``) on a state model
whose attention keeps one token pool (or that has none), SGLang verifies D = N + 1 tokens a
step and keeps each one's state in draft-token buffers beside its state slots: it solves the
request slots K with those buffers out of the state budget, ``K = int((budget_state - slot x
(1 + D)) // (slot x (1 + D / S)))`` in its floats, reserves ``slot x (min(48, K // S) + 1) x
D`` for the buffers, and caps running requests at the 48 its speculative hook sets
(``spec_request_slots``; the comment above ``SPECULATIVE_RUNNING_REQUESTS`` cites where). The
token pool gets the rest.

Told ``--max-running-requests`` N (``sglang_max_running_requests``), SGLang logs ``min(N, T //
2)``, with state at most ``(slots - 1) // S``, whatever the context and whether it drafts (its
hook's 48 only where none is told: ``running_request_limit``); its pools stay, but drafting
buffers are reserved for ``min(N, K // S) + 1`` requests. Told ``--max-mamba-cache-size`` M
(``sglang_max_mamba_cache_size``), the state keeps M + 1 slots whatever the budget and r (and
drafting buffers for ``min(max_running_requests, M // S) + 1`` requests), the KV pool the rest
(``_told_state_slots``).

With ``--disable-radix-cache`` (``sglang_disable_radix_cache``) SGLang keeps no prefix cache,
so no cached or tracked states: S is 1 (``RADIX_OFF_SLOTS``), no mamba radix cache is picked
(``radix_cache`` None: no page-size refusal), and where max_running_requests N is set before
the pools (told, or the hook's 48 while drafting) and no M is told, the state keeps N + 1
slots whatever the budget and r, drafting buffers for N + 1 requests, the KV pool the rest
(``fixed_state_size``; kv_cache_configurator.py 3325-3345). A hybrid SWA pool with N set is
sized from SGLang's request cap, the full pool the rest (``swa_request_cap``; its
configurator logs no split line), unless chunked prefill is off: an unchunked prefill writes a
whole prompt into the sliding pool, which the cap does not hold, so r_swa sizes it
(``SWARequestCapPoolConfigurator.is_applicable``, pool_configurator.py 994-1000). Without N the
pools are as with the radix cache, at S = 1.

With attention DP D (``sglang_attn_dp_size``: --attn-dp-size, or --enable-dp-attention
--dp-size) SGLang runs D groups of tp // D ranks, each with pools of its own, and these figures
are one group's (``attention_dp``): the profile at TP tp // D (an MLA latent is the same at any
TP; a model of state layers alone keeps its state over the whole TP), the prefill chunk
chunked_prefill_size // D, a told N and M as max(1, N // D) and M // D, the hook's 48 as
max(1, 48 // D).

The start-up log's lines are worded in ``sglang_log`` from the figures found here; it reads
nothing of this module.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

from flatkv.dtypes import dtype_bytes
from flatkv.plan import FULL_ATTENTION, LINEAR_ATTENTION, SLIDING_ATTENTION, cdiv
from flatkv.profile import WINDOWED, CacheProfile
from flatkv.strategies.base import (
    CATEGORIES,
    CHUNKED_PREFILL_OFF,
    SGLANG_SWA_ARCHITECTURE_CLASSES,
    SGLANG_SWA_ARCHITECTURES,
    WINDOW_SPANS,
    StrategyOptions,
    StrategyResult,
    kv_sizes_text,
    n,
    not_applicable,
    ratio_text,
    window_span,
)
from flatkv.strategies.sglang_log import (
    reduced_line,
    scheduler_line,
    start_up_log,
    state_cap_line,
)
from flatkv.units import MAX_TOKENS, concurrency_text, parse_tokens


def bytes_text(value: float) -> str:
    """A byte count SGLang computes in float, as a formula shows it: ``44,236.8``, or
    ``49,152`` when whole (at most 6 decimals, as the float prints them)."""
    whole = int(value)
    if value == whole:
        return n(whole)
    return f"{value:,.6f}".rstrip("0")  # 494,796.80000000005 as 494,796.8


def whole_pages(tokens: int, page: int) -> tuple[int, str]:
    """``tokens`` rounded down to whole pages of ``page`` tokens, and the formula's result text
    (``47,181, 47,168 in whole pages of 64``), so a printed equation is always true."""
    kept = tokens // page * page
    text = n(tokens) if kept == tokens else f"{n(tokens)}, {n(kept)} in whole pages of {n(page)}"
    return kept, text


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
# The extra buffer snapshots a request's state every --mamba-track-interval tokens (256 by
# default), which the page size must divide (mamba_hook.validate_mamba_extra_buffer).
MAMBA_TRACK_INTERVAL = 256


def page_size(profile: CacheProfile, options: StrategyOptions) -> int:
    """The page size SGLang runs: the option's, but DeepSeek's sparse attention's own
    (NSA_PAGE_SIZE) whatever it says (``_nsa_options``)."""
    return NSA_PAGE_SIZE if profile.indexer_bytes_per_slot else options.sglang_page_size


def radix_cache(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """The mamba radix cache SGLang 0.5.23's "auto" strategy runs a state hybrid with:
    "extra_buffer" or "no_buffer"; None where the model keeps no state, its architecture
    is on neither list (none named: a model typed by hand), or --disable-radix-cache is given
    (overrides.py 473-474: ``_mamba_radix_cache_resolution`` returns before it picks one, so
    neither cache's page-size checks run: model_hook.handle_mamba_radix_cache 1058-1066)."""
    arch = profile.architectures[0] if profile.architectures else None
    if not profile.has_state or options.sglang_disable_radix_cache:
        return None
    if arch in EXTRA_BUFFER_ARCHITECTURES:
        return ("extra_buffer" if options.sglang_overlap_schedule
                or page_size(profile, options) > 1 else "no_buffer")
    return "no_buffer" if arch in NO_BUFFER_ARCHITECTURES else None


def slots_per_request(profile: CacheProfile, options: StrategyOptions) -> tuple[int, str]:
    """S, the state slots a running request holds in SGLang, and why: the option when set,
    else SGLang 0.5.23's own for the model's architecture, overlap scheduling and page size
    (``radix_cache``)."""
    if options.sglang_slots_per_request is not None:
        return options.sglang_slots_per_request, "set by the option"
    if options.sglang_disable_radix_cache:
        return RADIX_OFF_SLOTS, (f"{RADIX_OFF_SLOTS} with --disable-radix-cache: no cached or "
                                 "tracked states, its mamba ratio is 1 "
                                 "(kv_cache_configurator.py 3063-3064)")
    arch = profile.architectures[0] if profile.architectures else None
    mode = radix_cache(profile, options)
    if mode == "extra_buffer" and options.sglang_overlap_schedule:
        return EXTRA_BUFFER_SLOTS, (f"{EXTRA_BUFFER_SLOTS} for {arch}: its extra_buffer radix "
                                    "cache, 3 + 2 tracking slots with overlap scheduling")
    if mode == "extra_buffer":
        return NO_BUFFER_SLOTS + 1, (
            f"{NO_BUFFER_SLOTS + 1} for {arch}: its extra_buffer radix cache (page size "
            f"{page_size(profile, options)}), 3 + 1 tracking slot without overlap scheduling")
    if mode == "no_buffer" and arch in EXTRA_BUFFER_ARCHITECTURES:
        return NO_BUFFER_SLOTS, (f"{NO_BUFFER_SLOTS} for {arch}: its no_buffer radix cache, "
                                 "without overlap scheduling at page size 1")
    if arch:
        return NO_BUFFER_SLOTS, f"{NO_BUFFER_SLOTS} for {arch}: its no_buffer radix cache"
    return NO_BUFFER_SLOTS, (f"{NO_BUFFER_SLOTS}, the no_buffer count, for a model that names no "
                             f"architecture ({EXTRA_BUFFER_SLOTS} for those SGLang serves with "
                             "its extra_buffer radix cache)")


def radix_page_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not start a state hybrid at this page size (None where it
    would): no_buffer takes page size 1 only; extra_buffer a page size that divides the
    state's track interval."""
    page, mode = page_size(profile, options), radix_cache(profile, options)
    arch = profile.architectures[0] if profile.architectures else None
    if mode == "no_buffer" and page > 1:
        return (f"SGLang runs {arch}'s state with its no_buffer radix cache, which takes page "
                f"size 1 only (\"no_buffer only supports page_size=1\"), not {n(page)}: set "
                "the SGLang page size to 1")
    if mode == "extra_buffer" and MAMBA_TRACK_INTERVAL % page:
        return (f"SGLang's extra_buffer radix cache snapshots {arch}'s state every "
                f"--mamba-track-interval tokens ({MAMBA_TRACK_INTERVAL} by default), which the "
                f"page size must divide: {n(page)} does not; set a page size that divides "
                f"{MAMBA_TRACK_INTERVAL} (1, 2, 4, ..., 256)")
    return None


def _draft_track_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not start with these drafted tokens (None where it would): its
    extra_buffer radix cache snapshots state every --mamba-track-interval tokens, which must be
    at least the D tokens verified a step (mamba_hook.validate_mamba_extra_buffer)."""
    drafts = draft_tokens(profile, options)
    if drafts > MAMBA_TRACK_INTERVAL and radix_cache(profile, options) == "extra_buffer":
        return (f"SGLang's extra_buffer radix cache needs --mamba-track-interval "
                f"({MAMBA_TRACK_INTERVAL} by default) at least the {n(drafts)} tokens it "
                f"verifies a step ({n(options.speculative_tokens)} drafted + 1): draft at most "
                f"{MAMBA_TRACK_INTERVAL - 1} tokens a step")
    return None


# SGLang's pure Mamba1 architectures (configs/model_config.py PURE_MAMBA1_ARCHITECTURES,
# 0.5.23): their mixer (layers/attention/mamba/mamba1.py 230-232) asserts it never verifies
# drafted tokens, so SGLang serves them without speculative decoding only
MAMBA1_ARCHITECTURES = ("FalconMambaForCausalLM", "MambaForCausalLM")


def _mamba1_draft_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not run a Mamba1 model drafting tokens (None where it would,
    or where nothing is drafted): its Mamba1 mixer asserts no target-verify batch, the step
    that checks drafted tokens."""
    arch = next((a for a in profile.architectures[:1] if a in MAMBA1_ARCHITECTURES), None)
    if arch is None or not options.speculative_tokens:
        return None
    return (f"SGLang's Mamba1 mixer, which runs {arch}, verifies no drafted tokens (\"Mamba-1 "
            "(Falcon-Mamba) does not support speculative decoding yet\"): set speculative "
            "tokens to 0")


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


def swa_pool(profile: CacheProfile, options: StrategyOptions) -> tuple[bool, str]:
    """Whether SGLang keeps the sliding-window layers in a token pool of their own (its hybrid
    SWA pool), and why: ``sglang_swa_pool`` when set, else what SGLang picks by the config's
    architectures. A profile that names none (typed by hand) gets the pool when it has full
    layers beside its sliding ones, as every model on SGLang's list does."""
    if options.sglang_swa_pool is not None:
        return options.sglang_swa_pool, "as the SGLang sliding-window pool option sets it"
    listed = [a for a in profile.architectures if a in SGLANG_SWA_ARCHITECTURE_CLASSES]
    if listed:
        return True, f"{listed[0]} is on SGLang's hybrid SWA list"
    if profile.architectures:
        return False, (f"{', '.join(profile.architectures)} is not on SGLang's hybrid SWA list "
                       f"({SGLANG_SWA_ARCHITECTURES})")
    name = WINDOWED[swa_label(profile) or SLIDING_ATTENTION].name
    if not profile.count(FULL_ATTENTION):
        return False, f"no full-attention layer beside the {name} ones"
    return True, (f"the model names no architecture, and it has full and {name} layers as the "
                  f"models on SGLang's hybrid SWA list ({SGLANG_SWA_ARCHITECTURES}) do")


def swa_label(profile: CacheProfile) -> str | None:
    """The label of the layers SGLang's hybrid SWA pool may hold: sliding, or Llama 4's chunked
    layers (SGLang runs them as its sliding layers, the chunk as their window); None with
    neither. ``sglang_blocker`` refuses a model with both."""
    return next(iter(profile.windowed_labels), None)


def pool_layers(profile: CacheProfile, options: StrategyOptions) -> tuple[int, int]:
    """Attention layers in SGLang's full and sliding-window token pools, the kv-shared ones too
    (SGLang keeps a pool layer for each, storing nothing). Without its hybrid SWA pool
    (``swa_pool``) a sliding (or chunked) layer keeps every token in the one pool, as a full
    layer does."""
    return _pool_layers_of(profile, options,
                           profile.layer_types + profile.kv_shared_layer_types)


def _pool_layers_of(profile: CacheProfile, options: StrategyOptions,
                    layer_types: tuple[str, ...]) -> tuple[int, int]:
    """``pool_layers`` of some of the profile's layers (all of them, or the kv-shared ones)."""
    label = swa_label(profile)
    n_full = layer_types.count(FULL_ATTENTION)
    n_swa = layer_types.count(label) if label else 0
    return (n_full, n_swa) if swa_pool(profile, options)[0] else (n_full + n_swa, 0)


def pool_token_bytes(profile: CacheProfile, options: StrategyOptions) -> tuple[int, int]:
    """Bytes one token takes over all the layers of SGLang's full token pool and of its
    sliding-window pool (``pool_layers``): its ``_full_per_token x full layers`` and
    ``_swa_per_token x swa layers``, a sliding layer's bytes its own where they differ from a
    full layer's (Gemma 4)."""
    return _token_bytes_of(profile, options,
                           profile.layer_types + profile.kv_shared_layer_types)


def _token_bytes_of(profile: CacheProfile, options: StrategyOptions,
                    layer_types: tuple[str, ...]) -> tuple[int, int]:
    """``pool_token_bytes`` of some of the profile's layers: the storing ones, or the
    kv-shared ones alone (pool bytes SGLang keeps and never writes, as such a layer reads an
    earlier layer's cache)."""
    n_full, n_swa = _pool_layers_of(profile, options, layer_types)
    return (profile.kv_bytes_per_slot * n_full,
            profile.kv_bytes_of(swa_label(profile)) * n_swa if n_swa else 0)


# Architectures whose SGLang model reports its window one short of the config's
# (get_attention_sliding_window_size: ``config.sliding_window - 1``); the others' window is the
# config's (model_config.sliding_window_size), a chunked model's its chunk.
WINDOW_LESS_ONE_ARCHITECTURES = frozenset({
    "GptOssForCausalLM", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
    "Gemma4UnifiedForConditionalGeneration",
})


def sglang_window(profile: CacheProfile) -> tuple[int, str]:
    """The sliding_window_size SGLang's model reports for its hybrid SWA pool, and how it
    reads it: the config's window, less one for ``WINDOW_LESS_ONE_ARCHITECTURES``."""
    label = swa_label(profile)
    window = profile.window(label)
    if any(a in WINDOW_LESS_ONE_ARCHITECTURES for a in profile.architectures):
        return window - 1, f"{WINDOWED[label].field} - 1 = {n(window - 1)}"
    return window, f"{WINDOWED[label].field} = {n(window)}"


def _least_swa_pool(profile: CacheProfile, page: int) -> int:
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
    cell = _swa_cell(full_bytes, swa_bytes, ratio)
    total = int(kv_memory // cell)
    if kv_memory > 2**53:
        total = min(total, int(kv_memory // Fraction(cell)))
    full = total // page * page
    swa_raw = int(full * float(ratio))
    return SwaSplit(cell, total, full, swa_raw, swa_raw // page * page)


def _swa_cell(full_bytes: int, swa_bytes: int, ratio: Fraction) -> float:
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
    where FlatKV models the drafting: ``_running_limit``), chunked prefill on
    (pool_configurator.py 986-1003, ``SWARequestCapPoolConfigurator.is_applicable``, picked at
    1720-1722: "an unchunked prefill writes the whole prompt into the SWA pool", so with
    ``--chunked-prefill-size`` <= 0 the ratio sizes it: ``swa_cap_unchunked``). The worst case
    of N requests' live sliding tokens (``compute_swa_request_cap``, 924-968): each request's
    ``swa_request_terms``, then a prefill chunk in flight (two with overlap scheduling) of
    its chunked_prefill_size (``chunked_prefill_size``) and a page. None where SGLang sizes the
    pool by the ratio."""
    n_full, n_swa = pool_layers(profile, options)
    limit = _running_limit(profile, options)
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


def _running_limit(profile: CacheProfile, options: StrategyOptions) -> int | None:
    """The max_running_requests SGLang holds before its pools, as FlatKV models it: told,
    else the speculative hook's 48 where it drafts (state hybrids where FlatKV models the
    drafting, ``draft_tokens``; any model without state), else None."""
    drafting = bool(draft_tokens(profile, options)) or (
        bool(options.speculative_tokens) and not profile.has_state)
    return running_request_limit(options, drafting=drafting)


def enough_budget(profile: CacheProfile, options: StrategyOptions,
                  slot_bytes: int | None) -> int:
    """A budget that holds one running request's S state slots and SGLang's padding slot, a
    page of the token pool (with state, pages of two tokens at least: it runs T // 2 requests,
    and none refuses to start), and with a hybrid SWA pool a swa pool over ``window + page``
    (SGLang's floor, ``_least_swa_pool``: the window as its model reports it).

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
        rs, least = options.swa_full_tokens_ratio, _least_swa_pool(profile, page)
        cell = _swa_cell(full_bytes, swa_bytes, rs)
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


def _sglang_concurrency(
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
    """SGLang's pools at the budget as ``_sglang_concurrency`` reads them, gathered once so
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
    """The pools' figures ``_sglang_concurrency`` reads. A token's bytes count only the layers
    that store: the kv-shared layers' bytes are idle whatever runs, and ``_idle_pool`` counts
    them apart, so the split's idle figures leave them out."""
    n_full, n_swa = pool_layers(profile, options)
    full_bytes, swa_bytes = _token_bytes_of(profile, options, profile.layer_types)
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


def estimate_swa_kv_tokens(extend_input_len: int, max_new_tokens: int, window: int,
                           page: int) -> int:
    """The sliding tokens SGLang 0.5.23 reserves to admit a prefill of ``extend_input_len``
    tokens (its page-rounded input) whole (``estimate_swa_kv_tokens``, prefill_budget.py 27-57,
    no chunk limit and no host hit): the input past the window, the input and its output up to
    the window, and a page."""
    return (max(extend_input_len - window, 0) + min(extend_input_len + max_new_tokens, window)
            + page)


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


# SGLang 0.5.23's --chunked-prefill-size when not told, by the GPU memory nvidia-smi reports
# (memory.total in MiB, the least over the GPUs): handle_gpu_memory_settings
# (arg_groups/memory_hook.py 87-177) takes 2,048 under 20 GiB, 4,096 under 60 GiB, 8,192 under
# 160 GiB (H100, A100 80GB, H200) and 16,384 above (B200), whatever the tp (which sets its decode
# graphs alone); no model FlatKV serves overrides it (model_hook.py turns it off, -1, for
# encoder, decision-head and some multimodal models alone). (upper bound in MiB, chunk)
CHUNKED_PREFILL_TIERS = ((20 * 1024, 2048), (60 * 1024, 4096), (160 * 1024, 8192))
CHUNKED_PREFILL_LARGEST = 16384
# what the figures assume where the GPU is not known (a KV cache budget, vLLM's blocks, a
# strategy called without one): an 80 GB Hopper's, the app's default GPU (SGLang's own fallback,
# where it cannot read the GPU's memory at all, is 4,096)
CHUNKED_PREFILL_ASSUMED = 8192


def sglang_default_chunked_prefill(gpu_bytes: int | None) -> int:
    """The --chunked-prefill-size SGLang 0.5.23 runs with on a GPU of ``gpu_bytes`` (its total
    memory, as nvidia-smi reports it: ``budget.GPU_PRESETS``) when told none
    (``CHUNKED_PREFILL_TIERS``); ``CHUNKED_PREFILL_ASSUMED`` where the GPU is not known (None).
    It is the prefill chunk a sliding-window request holds beside its window, and what its
    SWA request cap reserves for the chunks in flight."""
    if gpu_bytes is None:
        return CHUNKED_PREFILL_ASSUMED
    return next((chunk for below, chunk in CHUNKED_PREFILL_TIERS if gpu_bytes < below * 2**20),
                CHUNKED_PREFILL_LARGEST)


def chunked_prefill_tiers_text() -> str:
    """``CHUNKED_PREFILL_TIERS`` in words, for the helps that say what SGLang picks: "2,048
    under 20 GiB, 4,096 under 60 GiB, 8,192 under 160 GiB, 16,384 above"."""
    return ", ".join([*(f"{chunk:,} under {below // 1024} GiB"
                        for below, chunk in CHUNKED_PREFILL_TIERS),
                      f"{CHUNKED_PREFILL_LARGEST:,} above"])


def chunked_prefill_size(options: StrategyOptions) -> int | None:
    """The prefill chunk SGLang's figures take: ``options``' sglang_chunked_prefill_size, else
    the one assumed for a GPU not known (the app and the CLI tell the GPU's own:
    ``sglang_default_chunked_prefill``); None with chunked prefill off
    (``CHUNKED_PREFILL_OFF``), as SGLang's scheduler holds it (scheduler.py 1372-1373)."""
    chunk = options.sglang_chunked_prefill_size
    if chunk == CHUNKED_PREFILL_OFF:
        return None
    return chunk or CHUNKED_PREFILL_ASSUMED


# How a link and the CLI may write chunked prefill off, beside SGLang's own -1
CHUNK_OFF_WORD = "off"


def parse_chunked_prefill(text: str, field: str, *, maximum: int = MAX_TOKENS) -> int:
    """SGLang's --chunked-prefill-size as typed on a command line or in a link: tokens
    (``parse_tokens``' suffixes), or chunked prefill off (``CHUNKED_PREFILL_OFF``) for any whole
    number 0 or less, as SGLang reads them (scheduler.py 1372-1373; its help gives -1), or
    ``off``; a ValueError naming ``field`` otherwise, which says how to turn it off."""
    word = text.strip()
    if re.fullmatch(r"[+-]?[0-9]+", word) and int(word) <= 0 or word.lower() == CHUNK_OFF_WORD:
        return CHUNKED_PREFILL_OFF
    try:
        return parse_tokens(text, field, maximum=maximum)
    except ValueError as exc:
        raise ValueError(f"{exc}; or {CHUNKED_PREFILL_OFF} (any whole number 0 or less, as "
                         f"SGLang reads it, or {CHUNK_OFF_WORD}) for chunked prefill off") from None


# Why a request holds its whole prompt in the sliding pool with chunked prefill off, for the
# concurrency formula (``_unchunked_swa_limit``)
UNCHUNKED_SPAN = ("with chunked prefill off a request's whole prompt goes into the sliding "
                  "pool in one forward, and SGLang admits it only while the pool's free "
                  "tokens exceed its reservation")


def chunk_page_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not start with this prefill chunk (None where it would): a
    chunk ends on a page boundary, so --chunked-prefill-size must be a whole number of pages
    (validation_hook.check_server_args 240-245). Its defaults (powers of two from 2,048) are
    whole pages of any power-of-two page up to 2,048 tokens. With chunked prefill off there is
    no chunk, and SGLang skips the check (its ``cfg.chunked_prefill_size > 0``)."""
    chunk, page = chunked_prefill_size(options), page_size(profile, options)
    if chunk is None or chunk % page == 0:
        return None
    pages = -(-chunk // page)
    # DeepSeek's sparse attention pages by NSA_PAGE_SIZE whatever --page-size says: only the
    # chunk can change
    other_page = (f": DeepSeek's sparse attention pages by {n(page)} tokens whatever "
                  "--page-size says" if profile.indexer_bytes_per_slot else
                  f" or a page size that divides {n(chunk)}")
    return (f"SGLang takes a prefill chunk of whole pages only (\"chunked_prefill_size must be "
            f"divisible by page_size\"): {n(chunk)} tokens is not a multiple of the page size "
            f"{n(page)}; set --chunked-prefill-size to a multiple of {n(page)} (such as "
            f"{n(pages * page)}) or {CHUNKED_PREFILL_OFF} (chunked prefill off){other_page}")


# GPUs on which SGLang 0.5.23, told no --page-size, runs TensorRT-LLM's MHA / MLA backends,
# which take pages of 64 tokens ("... changing page_size from None to 64"), or FA4 where K and V
# differ in width, which takes 128 (its arg groups: get_default_attn_backend, then the backends'
# page-size fixes); on Hopper and Ampere its backends (fa3, triton, flashinfer) take 1
BLACKWELL_GPUS = ("B200 192GB",)
BLACKWELL_PAGE = 64
FA4_PAGE = 128
# Models whose override (arg_groups/model_overrides/*.py) picks another backend on SM100 when
# none is told, whose page then stays _page_size_default's 1: Falcon-H1 triton (falcon_h1.py),
# LFM2 and a Granite 4.0-H with mamba layers flashinfer (lfm2.py, granitemoehybrid.py)
SM100_PAGE_ONE_BACKENDS = {
    "FalconH1ForCausalLM": "triton", "JetNemotronForCausalLM": "triton",
    "JetVLMForConditionalGeneration": "triton", "Lfm2ForCausalLM": "flashinfer",
    "Lfm2MoeForCausalLM": "flashinfer", "GraniteMoeHybridForCausalLM": "flashinfer",
}
# Qwen3-Next's and Qwen3.5's override (qwen3_5.py) runs TensorRT-LLM's MHA backend at page 64
# only with the extra_buffer radix cache, which overlap scheduling picks when no page is told,
# or with the radix cache off (model_overrides/qwen3_5.py 40-45); without either, triton at
# page 1
SM100_TRTLLM_WITH_EXTRA_BUFFER = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration",
})
# Nemotron-H's override (nemotron_h.py) runs TensorRT-LLM's MHA backend, at page 64; without
# overlap scheduling its radix cache is no_buffer, which refuses that backend and page: what
# SGLang does then is not modelled (with the radix cache off no such check runs: page 64)
SM100_TRTLLM_WITH_OVERLAP = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
# Models whose override runs TensorRT-LLM's MHA backend on SM100 whatever their K and V widths
# (gpt_oss.py, llama4.py, gemma4.py): page 64, where get_default_attn_backend would pick FA4
SM100_TRTLLM_MHA = frozenset({
    "GptOssForCausalLM", "Llama4ForConditionalGeneration", "Llama4ForCausalLM",
    "Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4UnifiedForConditionalGeneration",
})
# MLA models DeepSeek's override (deepseek_v2.py) runs on TensorRT-LLM's MLA backend on SM100,
# at page 64; any other MLA model gets get_default_attn_backend's flashinfer, at page 1
# (Kimi Linear)
SM100_TRTLLM_MLA = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "Glm5NextForConditionalGeneration", "HYV4ForCausalLM",
})


class DefaultPage(NamedTuple):
    """The page SGLang runs a model with on a GPU when told none (``sglang_default_page``)."""

    page: int
    said: str  # the fact in words, for a note to end with how to match it


# The backends that page by more than a token, the page they take when told none, in words
SM100_BACKEND_PAGES = {"trtllm_mha": (BLACKWELL_PAGE, "TensorRT-LLM's MHA backend"),
                       "trtllm_mla": (BLACKWELL_PAGE, "TensorRT-LLM's MLA backend"),
                       "fa4": (FA4_PAGE, "FA4, as K and V differ in width")}


def sm100_backend(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """The attention backend SGLang 0.5.23 runs ``profile`` with on SM100 when told none
    (a model override first, then get_default_attn_backend), at ``options``' overlap
    scheduling and radix cache; None where that is not modelled (Nemotron-H without overlap
    scheduling, its radix cache on)."""
    arch = profile.architectures[0] if profile.architectures else None
    overlap = options.sglang_overlap_schedule
    if arch in SM100_PAGE_ONE_BACKENDS and (
            arch != "GraniteMoeHybridForCausalLM" or profile.has_state):
        return SM100_PAGE_ONE_BACKENDS[arch]
    overlap = overlap or options.sglang_disable_radix_cache  # either leaves TensorRT-LLM's
    if arch in SM100_TRTLLM_WITH_EXTRA_BUFFER:
        return "trtllm_mha" if overlap else "triton"
    if arch in SM100_TRTLLM_WITH_OVERLAP:
        return "trtllm_mha" if overlap else None
    if profile.kernel_block_size is not None:  # an MLA model
        return "trtllm_mla" if arch in SM100_TRTLLM_MLA else "flashinfer"
    k_v = profile.kv_tensor_bytes
    if arch not in SM100_TRTLLM_MHA and len(k_v) == 2 and k_v[0] != k_v[1]:
        return "fa4"
    return "trtllm_mha"


def sglang_default_page(gpu: str, profile: CacheProfile,
                        options: StrategyOptions | None = None) -> DefaultPage | None:
    """The page size SGLang runs the model with on ``gpu`` (a GPU preset's name) when told
    none, at ``options``' overlap scheduling, where that is more than a token; None elsewhere:
    where its backend there pages by one token (``sm100_backend``: a model override's triton
    or flashinfer, an MLA model's flashinfer) or is not modelled, for DeepSeek's sparse
    attention, whose 64 on every GPU ``run_sglang`` applies itself, and where its mamba radix
    cache takes no such page (``radix_page_refusal``)."""
    options = options or StrategyOptions()
    if (gpu not in BLACKWELL_GPUS or not profile.has_attention
            or profile.indexer_bytes_per_slot is not None or sglang_blocker(profile)):
        return None
    backend = sm100_backend(profile, options)
    if backend not in SM100_BACKEND_PAGES:
        return None
    page, words = SM100_BACKEND_PAGES[backend]
    if radix_page_refusal(profile, replace(options, sglang_page_size=page)):
        return None
    return DefaultPage(page, f"SGLang 0.5.23 on a {gpu.split()[0]} runs pages of {page} tokens "
                             f"when not told a page size ({words}; without speculative "
                             "decoding)")


def split_idle(r: StrategyResult) -> list[tuple[str, int]]:
    """(pool, bytes) the static split leaves idle at the requests that run: every pool but the
    one that binds, whose remainder (less than a request) any layout may leave. Empty where the
    budget is not split between pools."""
    return _idle_of(r.extras)


def _idle_of(extras: Mapping[str, object]) -> list[tuple[str, int]]:
    return [(pool, int(extras[key])) for pool, limit, key in _IDLE_OF_LIMIT
            if extras.get(key) and extras.get("binding_limit") != limit]


def _idle_pool(profile: CacheProfile, options: StrategyOptions, full_tokens: int,
               swa_tokens: int, running: int | None, extras: dict[str, object],
               formulas: list[str]) -> tuple[int, int]:
    """(kv bytes, state bytes) of SGLang's reservation that hold nothing: the pool layers of
    kv-shared layers, whatever runs, and what the static split leaves of the pools that do not
    bind at the requests that run (``_sglang_concurrency``; where none runs, use says nothing
    and the pools stay drawn as reserved). Adds their formulas."""
    kv_idle = state_idle = 0
    shared_full, shared_swa = _token_bytes_of(profile, options, profile.kv_shared_layer_types)
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


def _state_slots(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
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


def _state_size_source(options: StrategyOptions) -> tuple[str, str]:
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


def _token_pools(profile: CacheProfile, options: StrategyOptions, kv_memory: int,
                 n_full: int, n_swa: int, formulas: list[str],
                 extras: dict[str, object]) -> tuple[int, int]:
    """SGLang's token pools over the KV memory for its ``n_full`` / ``n_swa`` pooled layers
    (``pool_layers``): ``(full_tokens, swa_tokens)``, each in whole pages. Full and sliding
    layers split it so that the sliding pool holds ``r_swa`` times the full one's tokens; one
    kind alone takes it all. Appends its formulas and extras."""
    kv = profile.kv_bytes_per_slot
    page = options.sglang_page_size
    full_bytes, swa_bytes = pool_token_bytes(profile, options)
    full_tokens = swa_tokens = 0
    if cap := swa_request_cap(profile, options):
        # SWARequestCapPoolConfigurator.calculate_pool_sizes (pool_configurator.py 1005-1032):
        # the sliding pool the cap in whole pages, the full pool the rest in whole pages
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
        extras.update(swa_request_cap=cap.tokens, swa_tokens=swa_tokens)
    elif n_swa and n_full:
        # SGLang's HybridSWAPoolConfigurator: one full-pool token costs F x n_full plus r_swa
        # tokens of the swa pool; the full pool is the memory over that, in whole pages, and
        # the swa pool r_swa times those whole pages, in whole pages
        rs = options.swa_full_tokens_ratio
        split = swa_split(kv_memory, full_bytes, swa_bytes, rs, page)
        full_tokens, swa_tokens = split.full, split.swa
        _, full_text = whole_pages(split.total, page)
        _, swa_text = whole_pages(split.swa_raw, page)
        # a printed equation holds: where SGLang's float parts from the decimals, say so
        exact_total = kv_memory // (full_bytes + rs * swa_bytes)
        exact_swa = int(rs * full_tokens)
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
            f"swa tokens = floor(r_swa x full) = floor({ratio_text(rs)} x {n(full_tokens)}) "
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
        extras.update(swa_full_tokens_ratio=rs, swa_tokens=swa_tokens)
    elif n_full:
        full_tokens, text = whole_pages(kv_memory // (kv * n_full), page)
        formulas.append(
            f"kv tokens = KV memory // ({n_full} layers x {n(kv)} B) = {n(kv_memory)} // "
            f"{n(kv * n_full)} = {text}"
        )
    else:  # sliding layers only: one token pool over them
        swa_tokens, text = whole_pages(kv_memory // swa_bytes, page)
        each = profile.kv_bytes_of(swa_label(profile))
        formulas.append(
            f"swa tokens = KV memory // ({n_swa} layers x {n(each)} B) = "
            f"{n(kv_memory)} // {n(swa_bytes)} = {text}"
        )
        extras.update(swa_tokens=swa_tokens)
    extras["kv_tokens"] = full_tokens
    return full_tokens, swa_tokens


# SGLang's speculative decoding (EAGLE / MTP, ``--speculative-algorithm NEXTN``) on a state
# hybrid, 0.5.23, in its default path (radix cache on, no --max-mamba-cache-size, no
# --max-running-requests, ReplaySSM off: --enable-linear-replayssm-spec defaults to False):
# - arg_groups/speculative_hook._handle_eagle_family sets max_running_requests to 48 ("Max
#   running requests is reset to 48 for speculative decoding") and, with --speculative-eagle-topk
#   1, speculative_num_draft_tokens D = speculative_num_steps + 1 (its auto choice for these
#   models: 3 steps, topk 1, D = 4). FlatKV's speculative tokens N are the steps: D = N + 1.
#   With --max-running-requests M it keeps M (``running_request_limit``): the same sizing with M
#   in place of 48 below (the buffers' min(M, K // S) + 1 requests, min(M, T // 2, K // S)).
# - mem_cache/kv_cache_configurator._handle_max_mamba_cache ("mamba_pool.memory_budget_spec")
#   solves the request slots K jointly with the draft-token buffers out of the state budget
#   (``spec_request_slots``), then subtracts the buffers' reservation, per_req x (min(48, K // S)
#   + 1) x D, and the K + 1 slots from the budget: the token pool gets the rest.
# - resolve_max_num_reqs: max_running_requests = min(48, T // 2, K // S).
# - The drafter's own KV: a path-less MTP drafter (Qwen3-Next's and Qwen3.5's, whose configs
#   name no num_nextn_predict_layers) leaves the target's token-pool cell as it is
#   (spec_aux_hidden_state._resolve_eagle_aux_hidden_state sets no eagle_draft_num_layers); the
#   draft worker allocates its own KV pool of max_total_num_tokens beyond this budget. With
#   --speculative-draft-model-path its layers join the cell (pool_configurator's
#   DefaultPoolConfigurator: cell + int(cell x draft layers / full layers)), which adding the
#   MTP layer to the model models.
SPECULATIVE_RUNNING_REQUESTS = 48


def hook_requests_text(per_group: int) -> str:
    """The max_running_requests SGLang's speculative hook sets, in words: its 48, or under
    attention DP a group's share of it (``running_request_limit``)."""
    if per_group == SPECULATIVE_RUNNING_REQUESTS:
        return f"the {SPECULATIVE_RUNNING_REQUESTS} its speculative hook sets"
    return (f"a group's share of the {SPECULATIVE_RUNNING_REQUESTS} its speculative hook sets, "
            f"{n(per_group)}")
DRAFTER_KV_LINE = (
    "the drafter's KV: a path-less MTP drafter (--speculative-algorithm NEXTN with no "
    "--speculative-draft-model-path, as Qwen3-Next and Qwen3.5 are served) keeps its own KV "
    "pool of max_total_num_tokens tokens beyond this budget, which leaves the token pool's cell "
    "as it is; with a draft model path SGLang adds its layers to the cell: add the MTP layer "
    "to the model to count it so")
# State layers alone: the target's cell is 0 B, and DefaultPoolConfigurator adds a drafter's
# layers to it only where the target has some (pool_configurator.py 261-274: num_layers > 0)
DRAFTER_KV_LAYERLESS_LINE = (
    "the drafter's KV: SGLang adds a drafter's layers to the token pool's cell only where the "
    "target has attention layers, so a drafter with attention keeps its own KV pool of the "
    "token pool's T tokens beyond this budget (its bytes are not counted here)")
# Sub-case not matched: a state model beside a hybrid SWA pool (its SWA request cap reads the
# drafted tokens too).
SPECULATIVE_NOT_MODELLED = (
    "speculative tokens: not modelled for SGLang on this model, whose figures here are without "
    "speculative decoding (FlatKV models it for a state model whose attention layers keep one "
    "token pool, or that has none: its draft-token state buffers, sized with its state slots "
    "out of the state budget)"
)


def draft_tokens(profile: CacheProfile, options: StrategyOptions) -> int:
    """D, the tokens SGLang verifies a step (its speculative_num_draft_tokens), where FlatKV
    models its speculative decoding: the N steps drafted plus one, as its EAGLE hook sets them
    with --speculative-eagle-topk 1; 0 without drafted tokens, for a model without state (whose
    pools speculative decoding leaves as they are) and where it is not modelled
    (``speculative_not_modelled``)."""
    if not options.speculative_tokens or not profile.has_state:
        return 0
    return 0 if speculative_not_modelled(profile, options) else options.speculative_tokens + 1


def speculative_not_modelled(profile: CacheProfile, options: StrategyOptions) -> bool:
    """Whether tokens are drafted on a state model whose SGLang speculative sizing FlatKV does
    not match: one with a hybrid SWA pool beside its state."""
    return bool(options.speculative_tokens and profile.has_state
                and pool_layers(profile, options)[1])


def spec_request_slots(budget_bytes: int, r: Fraction, slot_bytes: int, drafts: int,
                       per_request: int) -> int:
    """K, SGLang's max_mamba_cache_size with ``drafts`` (D) tokens verified a step, in its own
    float arithmetic (``_handle_max_mamba_cache``, "mamba_pool.memory_budget_spec"): the state
    budget ``budget x r / (1 + r)`` holds K + 1 slots and the draft-token buffers of K / S + 1
    requests, D slots' bytes each, so ``K = int((budget_state - per_req x (1 + D)) // (per_req x
    (1 + D / S)))``. Negative where not even the padding slot's buffers fit."""
    ratio = float(r)
    pool = budget_bytes * ratio / (1 + ratio)
    return int((pool - slot_bytes * (1 + drafts)) // (slot_bytes * (1 + drafts / per_request)))


def spec_reserved_requests(request_slots_: int, per_request: int,
                           limit: int = SPECULATIVE_RUNNING_REQUESTS) -> int:
    """The requests SGLang reserves draft-token buffers for, less its padding slot: its
    ``capped_reqs = min(max(1, max_running_requests), K // S)`` (kv_cache_configurator.py
    3372-3376), ``limit`` the max_running_requests told, else the 48 its hook sets."""
    return min(limit, request_slots_ // per_request)


class AttentionDp(NamedTuple):
    """One attention-DP group as SGLang sizes it (``attention_dp``): the profile of one of its
    ranks, the options it runs with, and why it cannot start ("" where it can)."""

    profile: CacheProfile
    options: StrategyOptions
    refusal: str
    # the chunked_prefill_size its scheduler line prints where // D turned the chunk to 0,
    # chunked prefill off (SGLang prints the 0, not -1); None: the options' own
    logged_chunk: int | None = None


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
        if profile.tp is None:
            why = (f"attention DP {n(d)} is not modelled for a profile of bytes alone, which "
                   "gives no heads to split over fewer ranks: give its bytes at TP tp / D and "
                   "attention DP 1")
        elif profile.tp % d == 0:
            why = (f"with attention DP {n(d)} SGLang splits attention over TP {n(profile.tp)} / "
                   f"{n(d)} = {n(profile.tp // d)} ranks, which the model's heads do not split "
                   "over (its attention layers would not load): give an attention DP size that "
                   "leaves a TP the heads split over")
        else:
            divisors = [k for k in range(1, profile.tp + 1) if profile.tp % k == 0]
            why = (f"SGLang does not start with attention DP {n(d)} at TP {n(profile.tp)} "
                   "(\"tp_size must be divisible by attn_dp_size * attn_cp_size\"): give an "
                   "attention DP size that divides the TP"
                   + (" (or raise the TP)" if profile.tp == 1 else
                      f" ({', '.join(map(str, divisors[:-1]))} or {divisors[-1]})"))
        return AttentionDp(profile, options, why)
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
            refusal = (f"with attention DP {n(d)} a group keeps --max-mamba-cache-size "
                       f"{n(told_m)} // {n(d)} = 0 state slots, and SGLang refuses to start "
                       "(\"Not enough GPU memory for hybrid (mamba/linear-attention) state "
                       f"cache\"); give --max-mamba-cache-size at least {n(d)}")
    if not refusal and per_chunk and per_chunk % (page := page_size(profile, options)):
        refusal = (f"with attention DP {n(d)} SGLang prefills chunks of chunked_prefill_size // "
                   f"{n(d)} = {n(chunk)} // {n(d)} = {n(per_chunk)} tokens (\"DP attention is "
                   f"enabled. chunked prefill size is adjusted\"), not a multiple of the page "
                   f"size {n(page)} (\"chunked_prefill_size must be divisible by page_size\"); "
                   f"set --chunked-prefill-size to a multiple of {n(d)} x {n(page)} = "
                   f"{n(d * page)}, or {CHUNKED_PREFILL_OFF} (chunked prefill off)")
    formulas.append("; ".join(parts))
    return AttentionDp(group, replace(options, **changes), refusal,
                       0 if per_chunk == 0 else None)


def running_request_limit(options: StrategyOptions, *, drafting: bool) -> int | None:
    """The max_running_requests SGLang 0.5.23 resolves from before its token pool (T // 2) and
    state pool (K // S) cap it (``resolve_max_num_reqs``, kv_cache_configurator.py 3126-3129):
    --max-running-requests where told (``sglang_max_running_requests``), whether it drafts or
    not (its speculative hook resets it only when it is not given: speculative_hook.py
    1086-1090, ``_handle_eagle_family``); else the hook's 48 where tokens are ``drafting`` (as
    FlatKV models them), max(1, 48 // D) for one of D attention-DP groups (``attention_dp``);
    None where it derives one from the token pool and the context."""
    if options.sglang_max_running_requests is not None:
        return options.sglang_max_running_requests
    per_group = max(1, SPECULATIVE_RUNNING_REQUESTS // options.sglang_attn_dp_size)
    return per_group if drafting else None


# A state without a conv tensor is lightning attention's. SGLang 0.5.23 serves some: its
# Bailing (V2.5) and MiniCPM hybrids keep it in MambaPool as a Mamba2 state whose conv tensor is
# empty (configs/bailing_hybrid.py, minicpm.py: Mamba2StateShape.create(conv_kernel=1), so a
# (conv_dim, 0) conv state), which FlatKV does not model for SGLang; MiniMax-Text-01 / M1 it
# does not serve (NOT_SERVED).
NO_CONV_STATE = (
    "the state layers keep no conv state: FlatKV does not model such a state in SGLang "
    "(SGLang 0.5.23 keeps lightning attention's in its MambaPool beside an empty conv tensor "
    "for the Bailing and MiniCPM hybrids it serves, and has no MiniMax-Text-01 / M1 model); "
    "compare vLLM's layout")


# Why SGLang serves no model with both sliding and chunked layers.
TWO_WINDOWS = ("SGLang's hybrid SWA pool holds one kind of windowed layer, and this model has "
               "both sliding and chunked layers (no model it serves has)")


# Architectures with state layers SGLang has no model class for, and why (its 0.5.23 wheel,
# October 2026: no models/jamba.py, bamba.py, zamba2.py or olmo_hybrid.py; its mamba configs
# list FalconH1, NemotronH, Lfm2, GraniteMoeHybrid and a few others). Nor does its fallback to
# the transformers implementation take them: model_loader/utils.py refuses a class whose
# is_backend_compatible() is False ("has no SGlang implementation and the Transformers
# implementation is not compatible with SGLang"), as these are in transformers 5.25.
_NO_FALLBACK = ("and its fallback to the transformers implementation refuses it: compare "
                "vLLM's layout")
NOT_SERVED = {
    "JambaForCausalLM": "SGLang has no Jamba model (none in its releases up to 0.5.23, October "
                        "2026; feature request #1190 is open): compare vLLM's layout",
    "Lfm3ForCausalLM": "SGLang has no LFM3 model (none in its releases up to 0.5.23, October "
                       "2026, which serve LFM2): compare vLLM's layout",
    **{arch: f"SGLang has no {name} model (none in its releases up to 0.5.23, October 2026), "
       + _NO_FALLBACK
       for arch, name in (("BambaForCausalLM", "Bamba"), ("Zamba2ForCausalLM", "Zamba2"),
                          ("OlmoHybridForCausalLM", "OLMo Hybrid"))},
    # MiniMax's own checkpoints' names (its PRs #7443, #8124 and #11466 were closed unmerged);
    # transformers has no class of either name, so its fallback refuses them too
    **{arch: "SGLang has no MiniMax-Text-01 / M1 model (none in its releases up to 0.5.23, "
       "October 2026; its MiniMax lightning-attention PRs were closed unmerged), and its "
       "fallback to the transformers implementation finds no class of that name: compare "
       "vLLM's layout"
       for arch in ("MiniMaxM1ForCausalLM", "MiniMaxText01ForCausalLM")},
}


def sglang_blocker(profile: CacheProfile) -> str:
    """Why SGLang serves no model of this profile, whatever its options and budget ("" when it
    may): an architecture it has no model for, a state without a conv tensor, sliding and
    chunked layers together."""
    if unserved := next((NOT_SERVED[a] for a in profile.architectures if a in NOT_SERVED), ""):
        return unserved
    if profile.conv_free_state:
        return NO_CONV_STATE
    return TWO_WINDOWS if all(label in profile.layer_types for label in WINDOWED) else ""


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


def _pool_refusal(profile: CacheProfile, options: StrategyOptions, pools: TokenPools,
                  slot_bytes: int | None) -> str | None:
    """Why SGLang would not start on these token pools (a full pool its SWA request cap leaves
    no page, a swa pool short of one window, a KV pool short of one page, or with state one of
    under two tokens: ``full_tokens`` for state layers alone, their pool of no layers, unknown
    where not ``sized``), with the budget (or context) that would do; None where they serve."""
    if pools.swa_capped and pools.full_tokens <= 0:
        return (
            f"SGLang's SWA request cap ({n(pools.swa_tokens)} tokens for max_running_requests "
            f"{n(_running_limit(profile, options))}, with --disable-radix-cache) leaves no "
            f"page of the full KV pool in the {n(pools.kv_memory)} B: it refuses to start; a "
            f"budget of {n(enough_budget(profile, options, slot_bytes))} B or more, or a "
            "smaller --max-running-requests, leaves one")
    n_full, n_swa = pool_layers(profile, options)
    page = options.sglang_page_size
    kv_memory, swa_tokens, pool_tokens = pools.kv_memory, pools.swa_tokens, pools.pool_tokens
    if n_full and n_swa and pool_tokens >= page and swa_tokens < _least_swa_pool(profile, page):
        return (
            f"the swa pool ({n(swa_tokens)} tokens) cannot hold one request: SGLang needs more "
            f"than its window ({sglang_window(profile)[1]}) + page size {page} tokens in "
            f"it; a budget of {n(enough_budget(profile, options, slot_bytes))} B or more has "
            "them" + (", as does a larger SGLang sliding/full tokens ratio "
                      "(--swa-full-tokens-ratio)" if options.swa_full_tokens_ratio < 1 else ""))
    # what else leaves the KV pool more: fewer told state slots, else (the ratio being read
    # only where none are told) a smaller share of the budget for the state
    fixed = fixed_state_size(options, draft_tokens(profile, options))
    smaller_state = ("" if not slot_bytes else
                     f", as does a smaller {_state_size_source(options)[0]}"
                     if fixed is not None else
                     ", as does a smaller SGLang mamba/full memory ratio "
                     "(--mamba-full-memory-ratio)")
    if profile.has_attention and pool_tokens < page:
        return (
            f"the KV pool ({n(kv_memory)} B) holds no page of {page} tokens: a budget of "
            f"{n(enough_budget(profile, options, slot_bytes))} B or more holds one"
            + smaller_state)
    if slot_bytes and not profile.has_attention and pools.sized and pool_tokens < 2:
        least = max(2, page)  # context_len // page x page >= 2
        return (
            f"the token pool holds {n(pool_tokens)} token{'' if pool_tokens == 1 else 's'} "
            "(SGLang gives a model without attention layers context_len tokens, in whole pages "
            f"of {page}): it runs at most T // 2 = 0 requests, and with state it refuses to "
            "start (\"state cache is too small to serve any requests\"); a context of "
            f"{n(least)} tokens or more holds more")
    if slot_bytes and profile.has_attention and pool_tokens < 2:
        # resolve_max_num_reqs: at most T // 2 running, and with state none refuses to start
        # (kv_cache_configurator.py 3152-3160; a state pool sized from the budget never leaves
        # so small a KV pool beside a request's slots, told slots can)
        return (
            f"the KV pool holds {n(pool_tokens)} token: SGLang runs at most T // 2 = 0 "
            "requests, and with state it refuses to start (\"state cache is too small to serve "
            f"any requests\"); a budget of {n(enough_budget(profile, options, slot_bytes))} B or "
            "more holds more" + smaller_state)
    return None


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


# Architectures whose SGLang state is KDA's (hybrid_arch.hybrid_kda_config: Kimi Linear's
# config, GLM-5 Next): MambaPool keeps their draft tokens' conv windows dense, D windows of K - 1
# rows (memory_pool.conv_window_dedup_enabled); the others' share one window of D + K - 2 rows.
# Bailing hybrids take KDA by a config flag (use_kda) the profile does not carry.
KDA_ARCHITECTURES = frozenset({"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
                               "Glm5NextForConditionalGeneration"})


def draft_buffer_allocation(profile: CacheProfile, tensors: Mapping[str, int], drafts: int,
                            running: int) -> tuple[int, int] | None:
    """(intermediate ssm, intermediate conv window) bytes MambaPool allocates for ``drafts`` (D)
    tokens verified a step and ``running`` requests (max_running_requests; one more row for its
    padding slot), on a CUDA GPU with topk 1 (memory_pool.MambaPool: ``[layers, running + 1, D,
    ssm shape]`` in the ssm dtype, the conv windows deduplicated to D + K - 2 rows, or dense D x
    (K - 1) rows for KDA). None where the profile does not tell the conv rows (raw bytes) or
    whether the state is KDA's (Bailing)."""
    arch = profile.architectures[0] if profile.architectures else None
    conv, ssm = tensors.get("conv"), tensors.get("ssm", 0)
    if conv is None or (arch or "").startswith("Bailing"):
        return None
    rows = profile.conv_rows
    if arch in KDA_ARCHITECTURES:
        window = drafts * conv
    elif rows is None:
        return None
    else:
        window = conv // rows * (drafts + rows - 1)
    layers_rows = profile.count(LINEAR_ATTENTION) * (running + 1)
    return layers_rows * drafts * ssm, layers_rows * window


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


def _allocated_draft_buffers(profile: CacheProfile, drafts: int, formulas: list[str],
                             extras: dict[str, object]) -> tuple[int, int] | None:
    """What MambaPool allocates of the draft-token buffers SGLang reserved
    (``draft_buffer_allocation``), for its max_running_requests + 1 requests; None where that
    is unknown (state layers alone without a context) or the profile cannot tell it. Appends
    its formula; the figures count the whole reservation, as SGLang's sizing does."""
    counted = "; the figures here count the reservation, as its sizing does"
    if "max_running_requests" not in extras:  # state layers alone, no context
        formulas.append(
            "MambaPool allocates draft-token buffers for max_running_requests + 1 requests, "
            "which its token pool of context_len tokens sets: unknown without a context"
            + counted)
        return None
    running_max = extras["max_running_requests"]
    allocated = draft_buffer_allocation(profile, extras["state_tensor_bytes"], drafts,
                                        running_max)
    if allocated is None:
        formulas.append("MambaPool allocates of the draft-token buffers bytes this profile "
                        "cannot tell (it gives no conv rows, or does not say whether its state "
                        "is KDA's)" + counted)
        return None
    extras["draft_buffers_allocated"] = sum(allocated)
    windows = ("D x (K - 1) rows, dense for KDA"
               if KDA_ARCHITECTURES.intersection(profile.architectures[:1])
               else "D + K - 2 rows shared by the D tokens")
    formulas.append(
        f"MambaPool allocates of the draft-token buffers intermediate ssm {n(allocated[0])} B "
        f"+ conv windows {n(allocated[1])} B = {n(sum(allocated))} B for max_running_requests "
        f"+ 1 = {n(running_max + 1)} requests (their ssm states, and conv windows of {windows}), "
        "the rest of its reservation staying free" + counted)
    return allocated


def _token_pages(
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


# DeepSeek's sparse attention (NSA: V3.2's lightning indexer) runs at one page size in SGLang,
# whatever --page-size says (server_args: page_size 64 for NSA models; NSATokenToKVPool asserts
# it on CUDA). Its token count takes the bytes its pool stores a layer: in an fp8 cache 656 + 132
# = 788 (pool_configurator's _compute_cell_size, calculate_mla_kv_cache_dim: the fp8 latent's
# scales and a bfloat16 rope). Releases whose profile_max_num_token took (kv_lora_rank + rope) x
# the dtype's bytes counted 576 + 132 = 708 there (and trtllm DSA backends still do), so they log
# about 11% more tokens than the pool holds; in bfloat16 both counts are the bytes stored.
NSA_PAGE_SIZE = 64
NSA_FP8_NOTE = (
    "with an fp8 KV cache SGLang sizes its pool by the bytes it stores, 656 + 132 B a token a "
    "layer (calculate_mla_kv_cache_dim: the fp8 latent's scales and a bfloat16 rope), as these "
    "figures do; releases that counted 576 + 132 (profile_max_num_token's cell size before its "
    "pool configurator), and the trtllm DSA backends, log a max_total_num_tokens about 11% "
    "above what the bytes fit")


def _nsa_options(profile: CacheProfile, options: StrategyOptions,
                 formulas: list[str]) -> StrategyOptions:
    """``options`` as SGLang runs DeepSeek's sparse attention (NSA): at its own page size,
    whatever --page-size says (a formula line says so, and that its fp8 cache is assumed)."""
    if not profile.indexer_bytes_per_slot:
        return options
    if (page := page_size(profile, options)) != options.sglang_page_size:
        formulas.append(f"page size {page}, not {options.sglang_page_size}: SGLang "
                        "serves DeepSeek's sparse attention (NSA) at it, whatever "
                        "--page-size says")
        options = replace(options, sglang_page_size=page)
    if profile.kv_dtype is None or dtype_bytes(profile.kv_dtype) == 1:  # fp8, or unknown
        formulas.append(NSA_FP8_NOTE)
    return options


def _swa_pool_choice(profile: CacheProfile, options: StrategyOptions, formulas: list[str],
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


def _state_refusal(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                   state: StatePools) -> str | None:
    """Why SGLang refuses to start on its state pool, with what would do; None where it
    starts: a fixed state size (``fixed_state_size``) under one request's S slots, or whose
    slots (and draft-token buffers) take the whole budget, or a pool short of one request's S
    slots and the padding slot."""
    per_request = slots_per_request(profile, options)[0]
    drafts = draft_tokens(profile, options)
    told_size = fixed_state_size(options, drafts)
    flag, source = _state_size_source(options)
    if told_size is not None and told_size // per_request < 1:
        return (
            f"{source} {n(told_size)} gives fewer request slots than the "
            f"{per_request} one running request holds (S): SGLang refuses to start; give "
            f"at least {per_request}")
    if told_size is not None and state.held >= budget_bytes:
        return (
            f"the {n(state.slots)} state slots ({source} {n(told_size)} + 1) of "
            f"{n(state.slot_bytes)} B"
            + (f" and their draft-token buffers ({n(state.buffers)} B)" if state.buffers else "")
            + f" take {n(state.held)} B, the whole budget of {n(budget_bytes)} B "
            "or more: SGLang finds no memory left for the KV cache; a budget of "
            f"{n(enough_budget(profile, options, state.slot_bytes))} B or more, or a smaller "
            f"{flag}, leaves some")
    if request_slots(state.slots) // per_request < 1:
        buffered = (f" beside their draft-token buffers ({drafts} tokens verified a "
                    "step)" if drafts else "")
        return (
            f"the state pool ({n(state.state_pool)} B) holds {n(state.slots)} slot(s) of "
            f"{n(state.slot_bytes)} B{buffered}, fewer than {per_request + 1}: one running "
            f"request needs {per_request} and SGLang keeps one for padding; a budget of "
            f"{n(enough_budget(profile, options, state.slot_bytes))} B or more holds them")
    return None


def _token_pools_after_state(profile: CacheProfile, options: StrategyOptions,
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


def _max_running_requests(profile: CacheProfile, options: StrategyOptions,
                          context_tokens: int | None, pool_tokens: int, formulas: list[str],
                          extras: dict[str, object]) -> str:
    """The max_running_requests SGLang logs (``extras["max_running_requests"]``), where its
    token pool T (``pool_tokens``) is known: from the context where nothing sets one
    (``_logged_running_requests``), else from the told one or the speculative hook's 48
    whatever the context (``_running_requests_from``). Returns the warning SGLang logs beside
    it ("" where none): that its state pool caps it, or that the token pool cuts one it was
    given. Appends its formula."""
    limit = _running_limit(profile, options)
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


def _breakdown(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
               pools: TokenPools, state: StatePools, running: int | None, formulas: list[str],
               extras: dict[str, object]) -> dict[str, int]:
    """The budget by category: the token pools (kv_history), the state slots and their
    draft-token buffers (state), what neither takes (unused), and where some of the pools
    hold nothing at the ``running`` requests, that part as idle_pool (``_idle_pool``).
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
    kv_idle, state_idle = _idle_pool(profile, options, pools.full_tokens, pools.swa_tokens,
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


def run_sglang(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """SGLang's separate pools (module docstring), in the order it sizes them: the page size
    (its own for DeepSeek's sparse attention, ``_nsa_options``), the state slots and their
    draft-token buffers first out of the budget (``_state_slots``), the token pools in what is
    left (``_token_pools_after_state``), the requests of the context over the pool that binds
    (``_sglang_concurrency``) and the max_running_requests it logs
    (``_max_running_requests``), the draft-token buffers MambaPool allocates for those
    (``_allocated_draft_buffers``), then the budget by category (``_breakdown``), the page view
    (``_token_pages``) and the start-up log (``_start_up_log_extras``). Any step may refuse,
    as SGLang refuses to start."""
    name = "sglang"

    def refuse(reason: str) -> StrategyResult:
        return not_applicable(name, budget_bytes, reason, profile_name=profile.name,
                              context_tokens=context_tokens)

    if blocker := sglang_blocker(profile):
        return refuse(blocker)
    formulas: list[str] = []
    extras: dict[str, object] = {}
    options = _nsa_options(profile, options, formulas)
    group = attention_dp(profile, options, formulas)
    if group.refusal:
        return refuse(group.refusal)
    profile, options = group.profile, group.options
    if options.sglang_attn_dp_size > 1:
        extras["attention_dp_groups"] = options.sglang_attn_dp_size
    if refusal := (radix_page_refusal(profile, options) or chunk_page_refusal(profile, options)
                   or _draft_track_refusal(profile, options)
                   or _mamba1_draft_refusal(profile, options)):
        return refuse(refusal)
    if speculative_not_modelled(profile, options):
        formulas.append(SPECULATIVE_NOT_MODELLED)
        extras["speculative_not_modelled"] = True
    if options.speculative_tokens:
        extras["drafter_pool"] = True

    state = StatePools()
    if profile.count(LINEAR_ATTENTION):
        state = _state_slots(profile, options, budget_bytes, formulas, extras)
        if refusal := _state_refusal(profile, options, budget_bytes, state):
            return refuse(refusal)
    if refusal := _swa_pool_choice(profile, options, formulas, extras):
        return refuse(refusal)
    pools = _token_pools_after_state(profile, options, budget_bytes, context_tokens, state,
                                     formulas, extras)
    if refusal := _pool_refusal(profile, options, pools, state.slot_bytes):
        return refuse(refusal)

    numerator = denominator = None
    if context_tokens is not None:
        numerator, denominator = _sglang_concurrency(
            profile, options, context_tokens, full_tokens=pools.full_tokens,
            swa_tokens=pools.swa_tokens, slots=state.slots, slot_bytes=state.slot_bytes,
            formulas=formulas, extras=extras)
    warning = (_max_running_requests(profile, options, context_tokens, pools.pool_tokens,
                                     formulas, extras) if pools.sized else "")
    drafts = draft_tokens(profile, options)  # what MambaPool allocates of their buffers:
    allocated = _allocated_draft_buffers(profile, drafts, formulas, extras) if drafts else None

    running = None if numerator is None else numerator // denominator
    totals = _breakdown(profile, options, budget_bytes, pools, state, running, formulas, extras)
    if profile.has_attention:
        n_full, n_swa = pool_layers(profile, options)
        block_size, block_bytes, num_blocks, capacity, why = _token_pages(
            profile, options, pools.pool_tokens, n_full, n_swa, formulas, extras)
    else:
        block_size, block_bytes, num_blocks, capacity = None, state.slot_bytes, state.slots, None
        why = "no page size: a state-only model keeps one state slot per request"
    # state layers alone: its log's max_total_num_tokens is the pool of no layers
    logged_tokens = capacity if profile.has_attention else extras.get("kv_tokens")
    _start_up_log_extras(profile, options, pools, state, warning, allocated, logged_tokens,
                         context_tokens, extras, logged_chunk=group.logged_chunk)
    return StrategyResult(
        strategy=name, budget_bytes=budget_bytes, applies=True, profile_name=profile.name,
        context_tokens=context_tokens, block_size=block_size, block_bytes=block_bytes,
        num_blocks=num_blocks, capacity_tokens=capacity,
        logged_tokens=logged_tokens,
        concurrency_numerator=numerator,
        concurrency_denominator=denominator, why_block_size=why,
        breakdown=tuple(totals.items()), formulas=tuple(formulas), extras=extras, pool=None,
    )
