"""SGLang's separate pools (SPEC section 3.2): no shared page ids, a static split.

- State: a per-request slot pool, its ssm tensors in SGLang's own dtype (``ssm_dtype``:
  SGLANG_MAMBA_SSM_DTYPE, else the config's ``mamba_ssm_dtype``, else float32; vLLM keeps the
  model's, or its own: ``vllm.ssm_dtype``), its conv tensors in bfloat16 (``CONV_DTYPE``,
  whatever the model's). It gets
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
(``fixed_state_size``; kv_cache_configurator.py 3325-3345).

A told ``--mamba-radix-cache-strategy`` (``sglang_mamba_radix_cache_strategy``; "auto" picks)
is kept whatever the overlap and page. extra_buffer_lazy allocates a request's second tracking
slot only when the request needs it: S is 3 + 1 (``LAZY_BUFFER_SLOTS``;
allocation_sizing.get_mamba_tracking_slots 17-19, read by
kv_cache_configurator._calculate_mamba_ratio 3077-3081); extra_buffer without overlap
scheduling is 3 + 1 at page size 1 too, where auto runs no_buffer's 3. Either moves
max_running_requests (K // S) and the drafting buffers' K, not the pools' split. SGLang takes
them only on the architectures of its extra-buffer list, lazy with overlap scheduling only
(``told_buffer_refusal``, ``lazy_overlap_refusal``); no_buffer told is 3, at page size 1
without overlap scheduling only (``radix_page_refusal``, ``no_buffer_refusal``), and unread
on a model without a mamba radix cache. None is read with the radix
cache off. A hybrid SWA pool with N set is
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
nothing of this package.

The package, by concern (each module imports the ones it reads directly, never this one, which
re-exports their public names):

- ``model``: whether SGLang serves the model, which pool each attention layer rides, its window;
- ``pages``: the page size (NSA's 64), whole pages, float byte counts as formulas print them;
- ``drafting``: speculative decoding: draft tokens, the hook's 48, draft-token buffers;
- ``state``: the state pool and its slots (dtypes, slots per request, the pool's budget share);
- ``chunk``: --chunked-prefill-size and --page-size as SGLang picks them by GPU;
- ``sliding``: the hybrid SWA pool (the split, its floor, the radix-off request cap);
- ``concurrency``: the requests the pools hold at a context, and each pool's idle bytes;
- ``dp``: attention DP, the options one DP group sees;
- ``tokens``: the KV token pools from what the state leaves;
- ``run``: ``run_sglang``, assembling the StrategyResult.
"""

from flatkv.strategies.sglang.chunk import (
    AUTO_DSA_KV_DTYPES,
    BLACKWELL_GPUS,
    BLACKWELL_PAGE,
    CHUNK_OFF_WORD,
    CHUNKED_PREFILL_ASSUMED,
    CHUNKED_PREFILL_LARGEST,
    CHUNKED_PREFILL_TIERS,
    FA4_PAGE,
    SGLANG_REFUSES_TO_START,
    SM100_BACKEND_PAGES,
    SM100_DSA_BACKEND,
    SM100_DSA_KV_DTYPE,
    SM100_PAGE_ONE_BACKENDS,
    SM100_TAKEN_PAGES,
    SM100_TRTLLM_MHA,
    SM100_TRTLLM_MLA,
    SM100_TRTLLM_WITH_EXTRA_BUFFER,
    SM100_TRTLLM_WITH_OVERLAP,
    UNCHUNKED_SPAN,
    DefaultPage,
    bfloat16_told,
    blackwell_dsa_bytes,
    chunk_page_refusal,
    chunked_prefill_size,
    chunked_prefill_tiers_text,
    dsa_dtype_refusal,
    parse_chunked_prefill,
    sglang_default_chunked_prefill,
    sglang_default_page,
    sglang_dsa,
    sglang_dsa_stored,
    sglang_gpu_note,
    sglang_kv_dtype_refusal,
    sm8x_dsa_kernels,
    sm100_backend,
    sm100_dsa_layout,
    sm100_page,
    sm100_refusal,
)
from flatkv.strategies.sglang.concurrency import RADIX_OFF_SPAN, split_idle
from flatkv.strategies.sglang.dp import AttentionDp, attention_dp
from flatkv.strategies.sglang.drafting import (
    DRAFTER_KV_LAYERLESS_LINE,
    DRAFTER_KV_LINE,
    KDA_ARCHITECTURES,
    MAMBA1_ARCHITECTURES,
    SPECULATIVE_NOT_MODELLED,
    SPECULATIVE_RUNNING_REQUESTS,
    draft_buffer_allocation,
    draft_tokens,
    hook_requests_text,
    running_request_limit,
    spec_request_slots,
    spec_reserved_requests,
    speculative_not_modelled,
)
from flatkv.strategies.sglang.model import (
    NO_CONV_STATE,
    NOT_SERVED,
    TWO_WINDOWS,
    WINDOW_LESS_ONE_ARCHITECTURES,
    pool_layers,
    pool_token_bytes,
    sglang_blocker,
    sglang_window,
    swa_label,
    swa_pool,
)
from flatkv.strategies.sglang.pages import (
    NSA_FP8_NOTE,
    NSA_PAGE_SIZE,
    bytes_text,
    page_size,
    whole_pages,
)
from flatkv.strategies.sglang.run import enough_budget, run_sglang
from flatkv.strategies.sglang.sliding import (
    SWA_EVICTION_INTERVAL,
    SwaRequestCap,
    SwaRequestTerms,
    SwaSplit,
    estimate_swa_kv_tokens,
    swa_cap_unchunked,
    swa_request_cap,
    swa_request_terms,
    swa_split,
)
from flatkv.strategies.sglang.state import (
    CONFIG_SSM_DTYPE_UNREAD,
    CONV_DTYPE,
    CONV_DTYPE_WHY,
    EXTRA_BUFFER_ARCHITECTURES,
    EXTRA_BUFFER_SLOTS,
    LAZY_BUFFER_SLOTS,
    MAMBA2_BACKEND_ARCHITECTURES,
    NO_BUFFER_ARCHITECTURES,
    NO_BUFFER_SLOTS,
    RADIX_OFF_SLOTS,
    StatePools,
    budget_for_spec_slots,
    budget_for_state_pool,
    budget_of_next_slot,
    fixed_state_size,
    lazy_overlap_refusal,
    logged_overlap,
    logged_strategy,
    no_buffer_refusal,
    radix_cache,
    radix_page_refusal,
    request_slots,
    slots_per_request,
    ssm_dtype,
    state_pool_bytes,
    state_tensors,
    told_buffer_refusal,
    told_state,
    track_chunk_refusal,
    track_interval_changes_nothing,
)
from flatkv.strategies.sglang.tokens import TokenPools

__all__ = [
    "NOT_SERVED",
    "NO_CONV_STATE",
    "TWO_WINDOWS",
    "WINDOW_LESS_ONE_ARCHITECTURES",
    "pool_layers",
    "pool_token_bytes",
    "sglang_blocker",
    "sglang_window",
    "swa_label",
    "swa_pool",
    "NSA_FP8_NOTE",
    "NSA_PAGE_SIZE",
    "bytes_text",
    "page_size",
    "whole_pages",
    "DRAFTER_KV_LAYERLESS_LINE",
    "DRAFTER_KV_LINE",
    "KDA_ARCHITECTURES",
    "MAMBA1_ARCHITECTURES",
    "SPECULATIVE_NOT_MODELLED",
    "SPECULATIVE_RUNNING_REQUESTS",
    "draft_buffer_allocation",
    "draft_tokens",
    "hook_requests_text",
    "running_request_limit",
    "spec_request_slots",
    "spec_reserved_requests",
    "speculative_not_modelled",
    "CONFIG_SSM_DTYPE_UNREAD",
    "CONV_DTYPE",
    "CONV_DTYPE_WHY",
    "EXTRA_BUFFER_ARCHITECTURES",
    "EXTRA_BUFFER_SLOTS",
    "MAMBA2_BACKEND_ARCHITECTURES",
    "NO_BUFFER_ARCHITECTURES",
    "NO_BUFFER_SLOTS",
    "RADIX_OFF_SLOTS",
    "StatePools",
    "budget_for_spec_slots",
    "budget_for_state_pool",
    "budget_of_next_slot",
    "fixed_state_size",
    "LAZY_BUFFER_SLOTS",
    "told_buffer_refusal",
    "lazy_overlap_refusal",
    "logged_overlap",
    "logged_strategy",
    "no_buffer_refusal",
    "radix_cache",
    "radix_page_refusal",
    "track_chunk_refusal",
    "track_interval_changes_nothing",
    "request_slots",
    "slots_per_request",
    "ssm_dtype",
    "state_pool_bytes",
    "state_tensors",
    "told_state",
    "BLACKWELL_GPUS",
    "BLACKWELL_PAGE",
    "CHUNKED_PREFILL_ASSUMED",
    "CHUNKED_PREFILL_LARGEST",
    "CHUNKED_PREFILL_TIERS",
    "CHUNK_OFF_WORD",
    "DefaultPage",
    "FA4_PAGE",
    "SM100_BACKEND_PAGES",
    "SM100_PAGE_ONE_BACKENDS",
    "SM100_TAKEN_PAGES",
    "SM100_TRTLLM_MHA",
    "SM100_TRTLLM_MLA",
    "SM100_TRTLLM_WITH_EXTRA_BUFFER",
    "SM100_TRTLLM_WITH_OVERLAP",
    "UNCHUNKED_SPAN",
    "chunk_page_refusal",
    "chunked_prefill_size",
    "chunked_prefill_tiers_text",
    "parse_chunked_prefill",
    "sglang_default_chunked_prefill",
    "sglang_default_page",
    "sglang_gpu_note",
    "sm100_backend",
    "sm100_page",
    "sm100_dsa_layout",
    "sglang_dsa",
    "sglang_dsa_stored",
    "blackwell_dsa_bytes",
    "bfloat16_told",
    "AUTO_DSA_KV_DTYPES",
    "dsa_dtype_refusal",
    "sglang_kv_dtype_refusal",
    "SGLANG_REFUSES_TO_START",
    "SM100_DSA_BACKEND",
    "SM100_DSA_KV_DTYPE",
    "sm100_refusal",
    "sm8x_dsa_kernels",
    "SWA_EVICTION_INTERVAL",
    "SwaRequestCap",
    "SwaRequestTerms",
    "SwaSplit",
    "estimate_swa_kv_tokens",
    "swa_cap_unchunked",
    "swa_request_cap",
    "swa_request_terms",
    "swa_split",
    "RADIX_OFF_SPAN",
    "split_idle",
    "AttentionDp",
    "attention_dp",
    "TokenPools",
    "enough_budget",
    "run_sglang",
]
