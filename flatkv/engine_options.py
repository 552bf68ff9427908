"""The engine options the app and the CLI offer beside each layout: which layouts read each
option, for which models it changes a figure, and when another option leaves it idle.

One ``EngineOption`` per ``StrategyOptions`` knob says it once; the app's expander, its link
settings (``app_state``), the CLI's notes on options that do nothing (``notes_cli``), the CLI's
--help and the widgets' tooltips (``engine_help``) and the tests all derive from
``ENGINE_OPTIONS``. Pure Python, no streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, replace
from string import Template

from flatkv.budget import BLACKWELL_CAPABILITY
from flatkv.plan import FULL_ATTENTION
from flatkv.profile import CacheProfile
from flatkv.strategies import STRATEGIES, StrategyOptions, model_blocker
from flatkv.strategies.base import (
    CHUNKED_PREFILL_OFF,
    SGLANG_SSM_DTYPES,
    SGLANG_SWA_ARCHITECTURES,
)
from flatkv.strategies.paged import label_groups
from flatkv.strategies.sglang import (
    AUTO_DSA_KV_DTYPES,
    blackwell_dsa_bytes,
    chunked_prefill_tiers_text,
    fixed_state_size,
    lazy_overlap_refusal,
    no_buffer_refusal,
    radix_cache,
    radix_page_refusal,
    sglang_kv_dtype_refusal,
    swa_request_cap,
    told_buffer_refusal,
    track_interval_changes_nothing,
)
from flatkv.strategies.sglang import chunked_prefill_size as sglang_chunk
from flatkv.strategies.sglang import draft_tokens as sglang_draft_tokens
from flatkv.strategies.sglang import pool_layers as sglang_pool_layers
from flatkv.strategies.sglang import speculative_not_modelled as sglang_speculative_not_modelled
from flatkv.strategies.sglang import swa_pool as sglang_swa_pool
from flatkv.strategies.vllm import (
    DEFAULT_MAMBA_CHUNK_SIZE,
    DRAFT_WIDENED_CONV,
    MLA_HYBRID_BLOCK,
    runs_all_as_align,
)
from flatkv.strategies.vllm_releases import MODE_ALL_RELEASE

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


def _has_sglang_pools(profile: CacheProfile) -> bool:
    """Attention or state: SGLang keeps a token pool (for state layers alone, one of no layers)
    paged by its page size, which a prefill chunk must fill whole."""
    return profile.has_attention or profile.has_state


def _sglang_dsa(profile: CacheProfile) -> bool:
    """DeepSeek's sparse attention of SGLang's DeepSeek family, which SGLang's --kv-cache-dtype
    auto (the default) stores raw in fp8 on a Blackwell GPU and bfloat16 told, beside the KV
    dtype bfloat16, float16 or float32, does not (``sglang.bfloat16_told``; another KV dtype
    idles it: ``idle_engine_option``). Not with learnable attention sinks
    (``CacheProfile.learnable_sink``), which SGLang keeps in bfloat16 on a Blackwell too."""
    on_blackwell = StrategyOptions(gpu_compute_capability=BLACKWELL_CAPABILITY)
    return blackwell_dsa_bytes(profile, on_blackwell) is not None


def _always(profile: CacheProfile) -> bool:
    return True


@dataclass(frozen=True)
class EngineOption:
    """One engine option: a StrategyOptions knob, the AppState field of the same name, a
    setting in the link (``_SETTINGS``), a widget (``app_pages._widgets.engine_widget``) and a
    CLI flag (``strategy_cli``). The facts the app derives its tables from, and what both the
    widget's tooltip and the flag's --help tell users, live here, once."""

    field: str
    label: str  # how a caption names it once changed ("kernel block 64")
    read_by: tuple[str, ...]  # the layouts (STRATEGIES) whose figures it can change
    column: str  # its column in the engine options' expander
    # whether it changes the figures of a model (given the layouts that read it)
    acts: Callable[[CacheProfile], bool] = _always
    only_in_mode: str | None = None  # the mamba cache mode it needs to act, if one
    _: KW_ONLY
    # what the engines do with it, for users: the CLI's --help and the widget's tooltip both
    # say it (``engine_help``), each adding only its own surface's words; ``$field`` names
    # another option as that surface names it (a flag, a label)
    help: str


# The paged layouts that take state layers (aliased refuses a state hybrid) count a request's
# state pages with the mamba cache mode, the speculative tokens and the checkpoint blocks; every
# layout sizes sliding-window pages with max batched tokens. In the expander's and the link's
# order.
_PAGED_WITH_STATE = ("flat", "per-component", "vllm", "lcm")
ENGINE_OPTIONS = (
    # vLLM runs DeepSeek-V3.2's sparse MLA at its own kernel block of 64, whatever it is told
    EngineOption(
        "kernel_block_size", "kernel block", ("vllm",), VLLM_COLUMN,
        lambda p: p.indexer_bytes_per_slot is None,
        help="vLLM: the attention backend's smallest kernel block size. 16 on the CUDA "
        "backends vLLM 0.31 to 0.34 pick unasked: FlashAttention on Hopper, FlashInfer on "
        "Blackwell (with or without its TensorRT-LLM pages), FLASH_ATTN_MLA and TRITON_MLA "
        "for MLA, which run an MLA model's block size of 16, 32 or 48 as it is. 64 for "
        "FlashMLA; 128 for CUTLASS MLA and for FlashAttention 4 at head 256 on Blackwell, "
        "where a run takes them (--attention-backend; the log's \"Using ... attention "
        "backend\"). "
        "A = max(this, block size). An MLA "
        f"hybrid's (Kimi Linear's) A is at least {MLA_HYBRID_BLOCK}, as vLLM 0.27 and later "
        "raise it, whatever this says."),
    EngineOption(
        "mamba_cache_mode", "mamba cache mode", _PAGED_WITH_STATE, VLLM_COLUMN, _has_state,
        help="State pages one request holds: 1 (none), 2 (align, plus "
        "$prefill_checkpoint_blocks), or cdiv(L, P), one every P tokens of its context "
        "(all: prefix caching of state), each plus one per drafted token "
        "($speculative_tokens); every paged layout counts them this way. vLLM 0.28 and later "
        "turn prefix caching on for hybrid models, in align by default (the log names the "
        "mode); none is --no-enable-prefix-caching, or vLLM up to 0.27. vLLM 0.32 and later "
        f"have no mode all: in mode all the vLLM layout is vLLM {MODE_ALL_RELEASE}'s, the "
        "last release with it, its figures and start-up log lines that release's."),
    # and SGLang's draft-token state buffers beside its state slots, and for any model the 48
    # running requests its speculative hook sets (the paged layouts read it for state only)
    EngineOption(
        "speculative_tokens", "speculative tokens", (*_PAGED_WITH_STATE, "sglang"),
        SCHEDULING_COLUMN,
        help="N, the tokens drafted per step (vLLM's num_speculative_tokens, MTP or EAGLE); "
        "0 serves without speculative decoding. A request holds N more state pages in each "
        "state group, in every paged layout, as vLLM counts them; vLLM also widens "
        f"{DRAFT_WIDENED_CONV} conv states by a row per drafted token, which can raise its "
        "P. SGLang verifies N + 1 tokens a step (--speculative-num-steps N, topk 1), keeps "
        "their states in buffers sized with its state slots out of the state budget (a "
        "state hybrid with one token pool; its figures say where not modelled), and runs at "
        "most 48 requests at once, for any model (its speculative hook's reset), or "
        "$sglang_max_running_requests where told. A drafter's own layers count once they "
        "are in the model."),
    EngineOption(
        "prefill_checkpoint_blocks", "prefill checkpoint blocks", _PAGED_WITH_STATE,
        VLLM_COLUMN, _has_state, only_in_mode="align",
        help="Mamba cache mode align: state pages a request holds beyond its 2 for prefill "
        "checkpoints. vLLM 0.32 and later keep 1 for Mamba2 layers (Nemotron-H, Falcon-H1, "
        "Granite 4.0-H), 0.33 and later for GDN layers whose prefill runs on FlashInfer "
        "(Qwen3-Next and Qwen3.5 on Hopper: H100, H200; and on B200 with key heads of 128 "
        "under CUDA 13), which also align P to 64, as vLLM's layout here does for their "
        "classes; 0 otherwise and in releases up to 0.31."),
    # vLLM's, in mode all, which some models run as align; a hybrid's (vLLM 0.31 aligns no
    # other P to the chunk)
    EngineOption(
        "mamba_chunk_size", "mamba chunk", ("vllm",), VLLM_COLUMN,
        lambda p: p.has_state and p.has_attention and runs_all_as_align(p) is None,
        only_in_mode="all",
        help="vLLM, mamba cache mode all: a hybrid's P aligns to lcm(chunk, A), as vLLM's "
        "--mamba-block-size sets it; a model without attention layers leaves it unused. "
        "vLLM takes the config's mamba_chunk_size / chunk_size, else "
        f"{DEFAULT_MAMBA_CHUNK_SIZE:,}."),
    # re-sizes the ssm tensors of a model's state layers (not a lightning model's, which reads
    # no such flag)
    EngineOption(
        "vllm_ssm_dtype", "vLLM ssm cache dtype", ("vllm",), VLLM_COLUMN,
        lambda p: p.ssm_element_bytes is not None and not p.conv_free_state,
        help="vLLM's --mamba-ssm-cache-dtype: the dtype it keeps every state layer's ssm "
        f"tensor in ({', '.join(SGLANG_SSM_DTYPES)}). Its auto (the default) keeps the model's, "
        "except Nemotron-H's (and its VL, Omni and transcribe classes'), whose config hook "
        "takes the config's mamba_ssm_cache_dtype, else float32 (vLLM 0.19's: float16), and "
        "Kimi Linear's KDA, float32 whatever the model's (told, it takes float32 and bfloat16 "
        "alone); Bailing V3's and AliceAI's keep float32 whatever it says."),
    # off, vLLM keeps every token of sliding and chunked layers, and refuses a state hybrid
    EngineOption(
        "vllm_hybrid_manager", "vLLM hybrid KV cache manager", ("vllm",), VLLM_COLUMN,
        lambda p: (p.has_state and p.has_attention)
        or (FULL_ATTENTION in p.layer_types and _has_window(p)),
        help="vLLM's hybrid KV cache manager, on by default. Off is "
        "--disable-hybrid-kv-cache-manager (some KV connectors turn it off too): sliding and "
        "chunked layers then keep every token, allocated as full attention in one group "
        "(where sliding layers keep other heads than full ones, as Gemma 4's, a block is a "
        "page of each layer's own size), and a model with state layers does not start. vLLM "
        "releases before PR #29627 ran Llama 4's chunked layers so by default (unless "
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1)."),
    # splits the budget between a state pool and a KV pool (a pool of no layers for state
    # layers alone, which SGLang splits for all the same)
    EngineOption(
        "mamba_full_memory_ratio", "SGLang mamba/full ratio", ("sglang",), SGLANG_COLUMN,
        _has_state,
        help="SGLang's --mamba-full-memory-ratio r: the state pool gets budget x r / (1 + r), "
        "the KV pool the rest."),
    EngineOption(
        "swa_full_tokens_ratio", "SGLang sliding/full tokens ratio", ("sglang",),
        SGLANG_COLUMN, lambda p: FULL_ATTENTION in p.layer_types and _has_window(p),
        help="SGLang's --swa-full-tokens-ratio, between 0 and 1: the sliding-window pool's "
        "tokens relative to the full pool's."),
    EngineOption(
        "sglang_slots_per_request", "SGLang slots per request", ("sglang",), SGLANG_COLUMN,
        _has_state,
        help="SGLang: S, the state slots one running request holds; the running-request cap "
        "is (slots - 1) // S, slot 0 being the padding slot. SGLang 0.5.23's own: 5 (3 + 2 "
        "tracking slots of its extra_buffer radix cache, on by default with overlap "
        "scheduling) for Qwen3-Next, Qwen3.5, Kimi Linear, Falcon-H1, Granite 4.0-H and "
        "Nemotron-H; 3 (no_buffer) for others, such as LFM2. With "
        "$sglang_overlap_schedule off those five-slot models hold 4 (3 + 1 tracking slot) at a "
        "page size over 1, 3 (no_buffer) at page size 1. $sglang_mamba_radix_cache_strategy "
        "told: extra_buffer_lazy (overlap on) holds 4, and extra_buffer 4 at page size 1 "
        "without overlap too. With $sglang_disable_radix_cache, 1."),
    # --max-running-requests: the max_running_requests SGLang logs, whatever the context, and
    # the requests its draft-token buffers are reserved for
    EngineOption(
        "sglang_max_running_requests", "SGLang max running requests", ("sglang",),
        SGLANG_COLUMN, _has_sglang_pools,
        help="SGLang's --max-running-requests N. SGLang's own, from its token pool's T "
        "tokens: int(T / context x 512) kept in 2,048 to 4,096, or 48 with speculative "
        "decoding (its speculative hook's reset), at most T // 2 and a state hybrid's state "
        "pool cap. Told, it logs min(N, T // 2), and for a state hybrid at most its state "
        "pool's cap, whatever the context; its pools stay as they are, but with speculative "
        "decoding on a state hybrid it reserves the draft tokens' state buffers for min(N, "
        "the cap) + 1 requests, not 48 + 1, and the KV pool gets the rest."),
    # --max-mamba-cache-size: the state slots told, the KV pool the rest
    EngineOption(
        "sglang_max_mamba_cache_size", "SGLang max mamba cache size", ("sglang",),
        SGLANG_COLUMN, _has_state,
        help="SGLang's --max-mamba-cache-size M: state slots for requests (one more is its "
        "padding slot). SGLang's own is a share of the budget, r / (1 + r), r being "
        "the $mamba_full_memory_ratio. Told, the state takes those M + 1 slots whatever "
        "the budget and the ratio, and with speculative decoding draft-token buffers for "
        "min(max running requests, M // S) + 1 requests; the KV pool gets the rest."),
    # --disable-radix-cache: one state slot a request, the state sized from max running
    # requests where set, and a hybrid SWA pool from SGLang's request cap (idle for a model
    # without state where no max running requests is set: ``_radix_cache_idle``)
    EngineOption(
        "sglang_disable_radix_cache", "SGLang --disable-radix-cache", ("sglang",),
        SGLANG_COLUMN,
        lambda p: p.has_state or (FULL_ATTENTION in p.layer_types and _has_window(p)),
        help="SGLang's --disable-radix-cache (off by default: the radix cache on). Without "
        "prefix caching a running request holds one state slot, not 3 to 5, and no mamba "
        "radix cache limits the page size. With max running requests N set "
        "($sglang_max_running_requests, or the 48 its speculative hook sets) and no "
        "$sglang_max_mamba_cache_size, the state is N + 1 slots (and draft-token buffers for "
        "N + 1 requests) whatever the budget and the ratio, and (with chunked prefill on) a "
        "sliding-window pool beside full layers is sized from its request cap, "
        "(W + 128 x D + P + decode) x N + "
        "prefill chunks in flight + P tokens (W the window, D the tokens verified a step, P "
        "the page size), not the $swa_full_tokens_ratio; the KV pool gets the rest. With "
        "chunked prefill on, SGLang then frees each request's sliding tokens behind its "
        "window, so that pool holds a request's live window, min(L, W + 128 x D + P + "
        "decode), beside the chunks in flight, whatever sized it."),
    # --attn-dp-size (--enable-dp-attention --dp-size): one group's pools at attention TP
    # tp // D, its chunk, running requests and state slots over D (refused where D does not
    # divide the TP, or a profile of bytes alone gives no heads to split)
    EngineOption(
        "sglang_attn_dp_size", "SGLang attention DP", ("sglang",), SGLANG_COLUMN,
        _has_sglang_pools,
        help="SGLang's attention data parallelism D: --attn-dp-size D, or the older "
        "--enable-dp-attention --dp-size D, which it turns into that (how DeepSeek's MLA "
        "models are often served). The TP ranks run attention in D groups of TP / D ranks, "
        "each with its own scheduler and pools: a rank keeps the KV and state heads of a split "
        "over TP / D (an MLA latent is whole at any TP; a model of state layers alone splits "
        "its state over the whole TP), prefills chunks of chunked prefill size // D, and a "
        "told $sglang_max_running_requests N or $sglang_max_mamba_cache_size M counts all "
        "groups: a group runs max(1, N // D) (48 // D drafting, untold) and keeps M // D slots. "
        "The figures are one group's, as SGLang logs them. D must divide the TP; 1 is none."),
    # sets the tracking slots of the extra_buffer radix cache (slots per request)
    EngineOption(
        "sglang_overlap_schedule", "SGLang overlap scheduling", ("sglang",), SGLANG_COLUMN,
        lambda p: radix_cache(p, ENGINE_DEFAULTS) == "extra_buffer",
        help="SGLang's overlap scheduling, on by default; off is --disable-overlap-schedule. "
        "It sets the state slots a running request holds where SGLang runs the model with "
        "its extra_buffer radix cache (Qwen3-Next, Qwen3.5, Kimi Linear, Falcon-H1, Granite "
        "4.0-H, Nemotron-H): 3 + 2 tracking slots with it; without it 3 + 1 at a page size "
        "over 1, and no_buffer's 3 at page size 1."),
    # pages the token pools (for state layers alone the pool of context_len tokens over no
    # layers), and a mamba radix cache takes only some pages
    EngineOption(
        "sglang_page_size", "SGLang page size", ("sglang",), SGLANG_COLUMN,
        lambda p: _has_sglang_pools(p) and p.indexer_bytes_per_slot is None,
        help="SGLang's --page-size: tokens per page of its token pool, which it rounds down "
        "to whole pages. Told none, SGLang 0.5.23 runs 1 on Hopper and Ampere, 64 on "
        "Blackwell (TensorRT-LLM backends; 128 on FA4 where K and V differ in width) but 1 "
        "for Falcon-H1, LFM2, Granite 4.0-H, Kimi Linear, and Qwen3-Next / Qwen3.5 unless "
        "drafting, with the radix cache off or the extra buffer told (their backends there "
        "page by one token), and 64 for DeepSeek's "
        "sparse attention everywhere (applied here whatever this says). SGLang refuses a "
        "page size that does not divide its prefill chunk ($sglang_chunked_prefill_size), "
        "unless chunked prefill is off."),
    # sizes nothing: SGLang checks it at start-up where its extra_buffer radix cache runs
    # (radix_page_refusal, draft_track_refusal, track_chunk_refusal)
    EngineOption(
        "sglang_mamba_track_interval", "SGLang mamba track interval", ("sglang",),
        SGLANG_COLUMN, lambda p: radix_cache(p, ENGINE_DEFAULTS) == "extra_buffer",
        help="SGLang's --mamba-track-interval (256 by default): the tokens between the state "
        "snapshots its extra_buffer radix cache takes in decode. It sizes no pool and no "
        "slot; SGLang 0.5.23 starts only where $sglang_page_size divides it, it is at least "
        "the tokens verified a step ($speculative_tokens + 1) and, for a Mamba2 model "
        "(Nemotron-H, Falcon-H1, Granite 4.0-H), at least the model's mamba chunk. Raise it "
        "with a page size past 256 (512 for pages of 512) or more than 255 tokens drafted."),
    # sets the radix cache and its tracking slots (slots per request): extra_buffer's 3 + 1
    # without overlap at page 1, 3 + 1 lazy; acts on every model SGLang serves, as on the
    # others SGLang refuses the extra buffer (told_buffer_refusal), which no option left
    # unoffered may do
    EngineOption(
        "sglang_mamba_radix_cache_strategy", "SGLang mamba radix cache strategy", ("sglang",),
        SGLANG_COLUMN,
        help="SGLang's --mamba-radix-cache-strategy: auto (its default) runs the extra_buffer "
        "radix cache for Qwen3-Next, Qwen3.5, Kimi Linear, Falcon-H1, Granite 4.0-H and "
        "Nemotron-H with $sglang_overlap_schedule on or a page over 1 (3 + 2 state slots a "
        "running request with overlap, 3 + 1 without), else no_buffer (3). Told, SGLang keeps "
        "it whatever the overlap and page: extra_buffer is 3 + 1 without overlap at page size "
        "1 too, where auto runs no_buffer's 3; extra_buffer_lazy allocates the second tracking "
        "slot only when a request needs it, 3 + 1 with overlap, so about a quarter more "
        "running requests from the same state slots, and while drafting more of the state "
        "budget for slots and less for their draft-token buffers; no_buffer is 3, and SGLang "
        "takes it only with overlap off at page size 1. It sizes no pool itself. SGLang takes "
        "extra_buffer and extra_buffer_lazy for those models only, lazy with overlap on; no "
        "strategy is read with $sglang_disable_radix_cache."),
    # re-sizes the ssm tensors of a model's state layers
    EngineOption(
        "sglang_ssm_dtype", "SGLang ssm dtype", ("sglang",), SGLANG_COLUMN,
        lambda p: p.ssm_element_bytes is not None,
        help="SGLang keeps every state layer's ssm tensor in one dtype, whatever the "
        f"model's: SGLANG_MAMBA_SSM_DTYPE when set ({', '.join(SGLANG_SSM_DTYPES)}), else "
        "the config's mamba_ssm_dtype, else float32. vLLM keeps the model's ssm dtype unless "
        "told ($vllm_ssm_dtype), Nemotron-H's float32 unless its config names another."),
    # stores DeepSeek's sparse attention in bfloat16 on a Blackwell, not its raw fp8 layout
    # (on another GPU SGLang's auto keeps bfloat16 too: ``idle_engine_option``)
    EngineOption(
        "sglang_kv_cache_dtype", "SGLang KV cache dtype", ("sglang",), SGLANG_COLUMN,
        _sglang_dsa,
        help="SGLang's --kv-cache-dtype beside the KV dtype bfloat16, which stands for its "
        "auto (its default): auto keeps DeepSeek's sparse attention (DeepSeek-V3.2, GLM-5) in "
        "fp8_e4m3 on a Blackwell GPU (a B200), the raw latent of its trtllm DSA backends beside "
        "the index keys (576 + 132 B a token a layer for DeepSeek-V3.2), and in bfloat16 "
        "elsewhere; bfloat16 told keeps bfloat16 on a Blackwell too, 1,152 + 132 B as on a "
        "Hopper. The KV dtypes float16 and float32 stand for its auto too (SGLang takes "
        "neither, and keeps DeepSeek's sparse attention in bfloat16 or fp8 whatever the "
        "model's dtype); an fp8 KV dtype is the one SGLang is told (fp8: fp8_e4m3, the raw "
        "layout on a Blackwell); SGLang refuses fp8_e5m2 for DeepSeek's sparse attention on "
        "any GPU, and keeps no cache in int8, which neither its --kv-cache-dtype nor its "
        "--dtype names."),
    EngineOption(
        "sglang_swa_pool", "SGLang sliding-window pool", ("sglang",), SGLANG_COLUMN,
        _has_window,
        help="SGLang keeps sliding-window layers (and Llama 4's chunked ones) in a token "
        "pool of their own (its hybrid SWA pool) only for the architectures on its list: "
        f"{SGLANG_SWA_ARCHITECTURES}; for the others (Gemma 2 / 3, Cohere2, Mistral) every "
        "layer keeps every token in one pool. A model whose config names no architecture "
        "gets the pool when it has full and sliding or chunked layers."),
    # --chunked-prefill-size: the tokens a sliding-window (or chunked) request holds beside its
    # window, and the chunks in flight of the SWA request cap (None: by the GPU's memory); for
    # any model whose pools it pages, whole pages or SGLang refuses to start; and the figure
    # SGLang's scheduler line prints
    EngineOption(
        "sglang_chunked_prefill_size", "SGLang chunked prefill size", ("sglang",),
        SGLANG_COLUMN, _has_sglang_pools,
        help="SGLang's --chunked-prefill-size: the prefill tokens it schedules a step, which "
        "a request holds in its sliding-window pool beside its window (as vLLM's "
        "$max_batched_tokens), and which its SWA request cap (with $sglang_disable_radix_cache and "
        "max running requests told or tokens drafted) "
        "reserves for each chunk in flight; a whole number of pages, or SGLang refuses to "
        "start. SGLang's own is by the GPU's memory: "
        f"{chunked_prefill_tiers_text()} (B200). {CHUNKED_PREFILL_OFF} turns chunked prefill "
        f"off, as SGLang's --chunked-prefill-size {CHUNKED_PREFILL_OFF} (or 0 there) does: it "
        "prefills a prompt in one forward, so a request holds its whole prompt (at most the "
        "context less one token) in the sliding-window pool, admitted only while the pool's "
        "free tokens exceed the prompt's pages and a page, and no request cap sizes that pool "
        "($swa_full_tokens_ratio does)."),
    # sizes the pages a sliding-window (or chunked) request holds
    EngineOption(
        "max_batched_tokens", "max batched tokens", (*_PAGED_WITH_STATE, "aliased"),
        SCHEDULING_COLUMN, _has_window,
        help="Tokens scheduled per step (vLLM's --max-num-batched-tokens); sizes the pages "
        "a sliding-window or chunked request holds (SGLang's by "
        "$sglang_chunked_prefill_size instead). vLLM 0.26 and later size them by the tokens in "
        "flight, twice this with $vllm_async_scheduling."),
    # vLLM sizes them by two batches in flight with it (0.26 and later)
    EngineOption(
        "vllm_async_scheduling", "vLLM async scheduling", ("vllm",), VLLM_COLUMN,
        _has_window,
        help="Window pages sized by async scheduling's two batches in flight: vLLM 0.26 and "
        "later size the pages a sliding-window or chunked request holds by the tokens in "
        "flight, 2 x $max_batched_tokens with async scheduling (their default). Off counts "
        "one step's tokens, as those releases with --no-async-scheduling and every release "
        "before 0.26 do (the vLLM 0.19 log these figures are checked against)."),
    # parents pad with a state row, with attention groups of unequal layer counts (3 full + 5
    # sliding layers pad the full group's parents by 2/3), or with payloads off the alignment
    EngineOption(
        "lcm_padding_bound", "padding bound", ("lcm",), SCHEDULING_COLUMN,
        lambda p: p.has_state or _two_level_pads(p),
        help="The largest padding a two-level layout accepts for any group."),
)
ENGINE_FIELDS = tuple(o.field for o in ENGINE_OPTIONS)
ENGINE_LABELS = {o.field: o.label for o in ENGINE_OPTIONS}
_ENGINE_HELP = {o.field: Template(o.help) for o in ENGINE_OPTIONS}


def engine_help(field: str, names: Mapping[str, str] = ENGINE_LABELS) -> str:
    """What the engines do with the option ``field``, as the CLI's --help and the app's
    tooltip both say it (each adds its own surface's words: flags and defaults, what auto
    means, the model's own value), so the two cannot drift apart. ``names``: how that surface
    names the other options the text refers to (the CLI its flags; the app the captions'
    labels, the default)."""
    return _ENGINE_HELP[field].substitute(names)


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


def sglang_dtype_refused(profile: CacheProfile) -> str | None:
    """That SGLang does not start ``profile`` in its KV dtype (``sglang.sglang_kv_dtype_refusal``:
    int8, DeepSeek's sparse attention in fp8_e5m2), for a note that an SGLang option told
    changes no figure there; None where SGLang keeps that dtype. One wording for the options'
    notes and --sglang-blackwell's, whose "as on a Hopper" would not hold."""
    if sglang_kv_dtype_refusal(profile):
        return (f"SGLang does not start this model in the KV dtype {profile.kv_dtype} (its "
                "refusal says why)")
    return None


def idle_engine_option(option: EngineOption, profile: CacheProfile,
                       options: StrategyOptions) -> str:
    """Why another option leaves ``option`` nothing to act on ("" when none does): its mamba
    cache mode not set (``only_in_mode``), SGLang's sliding / full ratio without its sliding
    pool (its chunked prefill size always acts: its scheduler's log line prints it), the
    ratio where its request cap sizes that pool, overlap scheduling where S is told or the
    radix cache is off, the radix cache where it leaves nothing (``_radix_cache_idle``), the
    track interval where no extra_buffer radix cache runs (its radix cache off, or no_buffer
    without overlap scheduling at page size 1), the radix cache strategy where the radix cache
    is off (unread: overrides.py 473-474), no_buffer told where the model keeps no mamba radix
    cache (unread: model_hook.py 1058-1067), or S is told (where SGLang takes it: else its
    refusal is the figure it changes), the KV cache dtype told beside a KV dtype other than
    bfloat16, float16 or float32 (fp8 is told itself; SGLang refuses fp8_e5m2 for DeepSeek's
    sparse attention and int8 for any model: ``sglang.sglang_kv_dtype_refusal``) or off a
    Blackwell GPU
    (SGLang's auto keeps DeepSeek's sparse attention in bfloat16 there too)."""
    if option.only_in_mode not in (None, options.mamba_cache_mode):
        return f"it acts only in mamba cache mode {option.only_in_mode}"
    if option.field == "swa_full_tokens_ratio" and not sglang_swa_pool(profile, options)[0]:
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
    if (option.field == "sglang_mamba_track_interval"
            and radix_cache(profile, options) != "extra_buffer"):
        return "SGLang runs no extra_buffer radix cache here, the only one that tracks state"
    if (option.field == "sglang_kv_cache_dtype"
            and profile.kv_dtype not in AUTO_DSA_KV_DTYPES):
        apart = ("bfloat16 told parts from its auto beside the KV dtype bfloat16, float16 or "
                 "float32 alone")
        if refused := sglang_dtype_refused(profile):
            return f"{refused}; {apart}"
        if profile.kv_dtype is not None:  # fp8 (e4m3), which SGLang is told as it is
            return f"the KV dtype is {profile.kv_dtype}, which SGLang is told as it is; {apart}"
        return f"the model names no KV dtype; {apart}"
    if option.field == "sglang_kv_cache_dtype" and not options.blackwell:
        return ("SGLang keeps DeepSeek's sparse attention in bfloat16 off a Blackwell GPU, told "
                "bfloat16 or not (its auto picks bfloat16 below compute capability 10)")
    if option.field == "sglang_mamba_radix_cache_strategy":
        if options.sglang_disable_radix_cache:
            return "SGLang's radix cache is off, so it reads no mamba radix cache strategy"
        if options.sglang_told_strategy == "no_buffer" and radix_cache(profile, options) is None:
            return ("SGLang keeps no mamba radix cache for this model, so it does not read a told "
                    "no_buffer")
        if (options.sglang_slots_per_request is not None and not lazy_overlap_refusal(options)
                and not told_buffer_refusal(profile, options)
                and not no_buffer_refusal(profile, options)
                and not radix_page_refusal(profile, options)):
            return "SGLang slots per request is set, which the strategy would decide"
    return ""


def _radix_cache_idle(profile: CacheProfile, options: StrategyOptions) -> str:
    """Why --disable-radix-cache changes no figure of ``profile`` at ``options`` ("" where it
    does): without state it acts only on a hybrid SWA pool beside full layers, and there only
    with chunked prefill on (its request cap, where max running requests is set, and the
    sliding tokens it frees behind each window: ``sglang.concurrency._radix_off_swa_limit``);
    with state, where S is told, the state is sized from the budget either way and no radix
    cache refuses the page, nothing it sets is left."""
    off = replace(options, sglang_disable_radix_cache=True)
    beside_full = all(sglang_pool_layers(profile, off))
    if swa_request_cap(profile, off) is not None or (
            beside_full and sglang_chunk(options) is not None):
        return ""
    if not profile.has_state:
        sizes = ("without state it acts only on a sliding-window pool of SGLang's own beside "
                 "full layers")
        if not beside_full:
            return f"{sizes}, and SGLang keeps none here"
        return (f"{sizes} (its request cap, and the tokens it frees behind each window), with "
                "chunked prefill on: off, a whole prompt goes into that pool, sized by the ratio, "
                "as with the radix cache")
    on = replace(options, sglang_disable_radix_cache=False)
    if (options.sglang_slots_per_request is not None and radix_page_refusal(profile, on) is None
            and fixed_state_size(off, sglang_draft_tokens(profile, off))
            == options.sglang_max_mamba_cache_size):
        return "SGLang slots per request is set, which the radix cache would decide"
    return ""


# Why an option that acts here changes no figure at the value set (``idle_at_its_value``)
TRACK_INTERVAL_IDLE = (
    "SGLang sizes no pool or slot by it and only checks it at start-up (the page size divides "
    "it; it is at least the tokens verified a step and a Mamba2 model's chunk), which it passes "
    "here as SGLang's default of 256 does")


def idle_at_its_value(option: EngineOption, profile: CacheProfile,
                      options: StrategyOptions) -> str:
    """Why ``option``, acting here, changes no figure at the value ``options`` sets ("" where
    it does, or where it is at its default): SGLang's track interval, which only its start-up
    checks read (``sglang.track_interval_changes_nothing``; at its default page size 1 without
    drafted tokens, on a model SGLang does not run on its Mamba2 backend, none can fail). Apart
    from ``idle_engine_option``, which hides an option another one idles: this one idles by its
    own value, and its widget must stay to take another (the app's and the CLI's notes say it)."""
    if option.field == "sglang_mamba_track_interval" and track_interval_changes_nothing(
            profile, options):
        return TRACK_INTERVAL_IDLE
    return ""


def acting_engine_options(profile: CacheProfile, options: StrategyOptions,
                          strategies: Iterable[str] = STRATEGIES) -> tuple[str, ...]:
    """The engine options one of ``strategies`` reads for ``profile`` (``strategy_fields``)
    and that act with the other ``options`` as set (``idle_engine_option``)."""
    offered = {f for name in strategies for f in strategy_fields(name, profile)}
    return tuple(o.field for o in ENGINE_OPTIONS
                 if o.field in offered and not idle_engine_option(o, profile, options))
