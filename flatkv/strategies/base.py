"""What every strategy returns, the options they share, and the accounting they have in common.

Every strategy answers the same question for one ``CacheProfile`` and one budget: which page size,
how many bytes one block id takes, how many blocks, how many tokens, how many requests fit at a
context length, and where every byte of the budget goes.

Breakdown categories (disjoint; they add up to the budget exactly):

    kv_history          bytes holding attention K/V of real layers (and any reserved co-resident
                        rows, e.g. a draft model's KV riding the same block ids)
    state               bytes holding recurrent state (conv, ssm) of real layers
    row_padding         bytes that pad a row or page to the size its unit demands, other than
                        state-to-attention page padding (a parent block's slack in a two-level
                        layout)
    state_page_padding  vLLM's padding of a state page up to the attention page
    padding_layers      vLLM's empty layer slots in the groups of a layer type that come up short
    dead_weight         in one page-id space, the rows a block id has in the tensors of groups
                        that do not own it (a page id owned by the full-attention group still has
                        state rows in every state slot)
    idle_pool           SGLang's reservation that holds nothing: its kv-shared layers' pool
                        layers, and what its static split between pools leaves unused at the
                        requests that run
    unused              budget no unit takes (the remainder of ``budget // unit_bytes``, and a
                        two-level layout's null parent)

Capacity convention (``capacity_tokens`` of every paged strategy): the tokens of history the pool
holds when every attention group (full, sliding and chunked alike, window eviction not assumed, as
vLLM's log and SPEC section 3.3 count them) holds N pages and every state group holds the state
pages of ONE request of N x P tokens (``state_pages_per_request``: 1 in mamba cache mode ``none``,
2 in ``align``, N in ``all``, plus prefill checkpoint blocks in ``align`` and a page per speculative
token):
capacity_tokens = N x P for the largest N whose pages fit the units, ``sum over groups of pages_g /
K_g <= units`` (K_g pages per unit; exact fractions, as max_concurrency counts units). State costs a
request, not a token, and max_concurrency counts it the same way, so without windowed layers
capacity_tokens is exactly the longest context (in whole pages) at which max_concurrency is still >=
1; R requests at context L take R x L tokens, less than capacity_tokens by about the other R - 1
requests' state pages. An engine's own logged figure, which may count differently, is
``logged_tokens``: vLLM's "GPU KV cache size" as current releases log it (``int(max_concurrency *
max_model_len)``, so None without a context; older releases logged ``num_blocks // num_groups * min
block size``, kept as ``older_logged_tokens``), SGLang's ``max_total_num_tokens`` (its token pool,
the same as capacity_tokens; for state layers alone its pool of context_len tokens over no layers,
where capacity_tokens is None).

Ownership convention (it decides kv_history / state / dead_weight of a shared page-id space): a unit
belongs to one group at a time, so the bytes of a unit depend on who owns it. We split the units
across groups in proportion to the pages one request needs in each group at the given context (the
same per-request pages that give ``max_concurrency``); without a context, in proportion to the pages
each group holds at capacity_tokens (equal pages in every attention group; equal pages in every
group of a state-only model). The split is a largest-remainder apportionment of whole units, so
every category is an exact integer. Pages per request (engine view, vLLM's formula): full ``ceil(L /
P)``; sliding ``ceil(min(W - 1 + max_batched_tokens, L) / P) + 1``; chunked ``ceil(min(C +
max_batched_tokens, L) / P)`` (``request_pages``); state ``state_pages_per_request``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from itertools import groupby

from flatkv.budget import BLACKWELL_MAJOR, GPU_COMPUTE_CAPABILITIES
from flatkv.dtypes import SGLANG_SSM_DTYPES, canonical_dtype
from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LAYER_LABELS,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    alignment_or_block_size,
    check_int,
)
from flatkv.profile import MAX_CHUNK_SIZE, WINDOWED, CacheProfile, group_name, pool_group_name
from flatkv.units import (
    MAX_BLOCK_SIZE,
    MAX_BYTES,
    MAX_TOKENS,
    link_key,
    number_problem,
    plain_number,
    quoted,
    value_named,
)
from flatkv.workload import (
    DEFAULT_SCHEDULED_TOKENS,
    MAMBA_CACHE_MODES,
    PagePool,
    PoolGroup,
    cdiv,
    mode_state_pages,
)

CATEGORIES = (
    "kv_history",
    "state",
    "row_padding",
    "state_page_padding",
    "padding_layers",
    "dead_weight",
    "idle_pool",  # SGLang: kv-shared layers' pool layers, and its static split's idle pools
    "unused",
)

# The architectures SGLang gives sliding-window layers a token pool of their own (its hybrid SWA
# pool: model_config.is_hybrid_swa_model): the name help texts use -> config.json class names.
# Those of the models FlatKV reads or plans; 0.5.23's list has more (Beam, Laguna, Mellum, ...),
# and a text config may opt in with is_hybrid_swa.
SGLANG_SWA_POOL_MODELS = {
    "gpt-oss": ("GptOssForCausalLM",),
    "Llama 4": ("Llama4ForConditionalGeneration",),
    "MiMo-V2": ("MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM", "MiMoV2MTP"),
    "Step3.5": ("Step3p5ForCausalLM", "Step3p5MTP"),
    "Gemma 4": ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
                "Gemma4UnifiedForConditionalGeneration"),
    # on its list with gpt-oss (SWA_SINK_ARCHS in 0.5.23)
    "Granite SWA": ("GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM"),
}
SGLANG_SWA_ARCHITECTURE_CLASSES = frozenset(
    name for names in SGLANG_SWA_POOL_MODELS.values() for name in names)
SGLANG_SWA_ARCHITECTURES = ", ".join(SGLANG_SWA_POOL_MODELS)
# StrategyOptions.sglang_chunked_prefill_size for SGLang's chunked prefill turned off, as its
# command line writes it (``--chunked-prefill-size -1``; fields/schedule.py: "Setting this to -1
# means disabling chunked prefill"). SGLang 0.5.23 reads any value <= 0 so (scheduler.py
# init_chunked_prefill 1372-1373, validation_hook.py 243, pool_configurator.py 996-1000); FlatKV
# keeps the one value, which its CLI and links map 0 and the others to.
CHUNKED_PREFILL_OFF = -1
# SGLang's --mamba-track-interval when not told (fields/exec_.py 530-533, 0.5.23): the tokens
# between the state snapshots its extra_buffer radix cache takes in decode
DEFAULT_MAMBA_TRACK_INTERVAL = 256
# SGLang's --mamba-radix-cache-strategy values, in its order (fields/exec_.py 512-516, 0.5.23):
# its default, which picks one of the next two for the model, and the lazy extra buffer
SGLANG_RADIX_CACHE_STRATEGIES = ("auto", "no_buffer", "extra_buffer", "extra_buffer_lazy")
# SGLang's --kv-cache-dtype values told beside a model KV dtype of bfloat16 (fields/model.py
# 209-218, 0.5.23): its default, which the KV dtype bfloat16 stands for, and bfloat16 told (its
# "bf16" alias read as that). Its fp8_e4m3 and fp8_e5m2 are the KV dtype itself (fp8, e5m2)
SGLANG_KV_CACHE_DTYPES = ("auto", "bfloat16")


def sglang_kv_cache_dtype_named(value: object) -> object:
    """``value`` as ``SGLANG_KV_CACHE_DTYPES`` names it: SGLang's "bf16" alias read as bfloat16
    (overrides.py 539-540), anything else as it is, for the option's check to take or refuse.
    One reading for StrategyOptions, the CLI and a link, so none takes what another refuses."""
    return "bfloat16" if value == "bf16" else value

# The engines whose start-up log a strategy prints (its ``extras["log_lines"]``), by name.
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}


def start_up_log_title(strategy: str) -> str:
    """What the CLI and Compare call an engine's log lines: ``vLLM's start-up log at these
    settings``."""
    return f"{ENGINE_NAMES[strategy]}'s start-up log at these settings"

# Bounds on ratio options (an exact Fraction is computed from them, so they must stay small).
RATIO_RANGE = (Fraction(1, 10**6), Fraction(10**6))
PADDING_BOUND_RANGE = (Fraction(0), Fraction(10))
# What a ratio's error offers as an example: a value of its kind (a padding bound is a
# fraction of a page wasted, its default a quarter; 0.9 reads as a memory share).
RATIO_EXAMPLE = "0.9 or 9/10"
PADDING_BOUND_EXAMPLE = "0.25 or 1/4"
# SGLang documents --swa-full-tokens-ratio as between 0 and 1: the sliding pool is the smaller
SWA_RATIO_RANGE = (RATIO_RANGE[0], Fraction(1))
MAX_SLOTS_PER_REQUEST = 1024  # SGLang's state slots a running request holds (its default: 3)
# SGLang's --max-running-requests (its runs use tens to thousands; past its token pool's half it
# cuts the figure itself)
MAX_RUNNING_REQUESTS = 2**30
# SGLang's --max-mamba-cache-size, state slots for requests (a budget holds thousands; more
# than a budget holds is refused by its own check)
MAX_MAMBA_CACHE_SIZE = 2**30
MAX_ATTN_DP_SIZE = 1024  # SGLang's attention DP groups (at most the TP: models.MAX_TP)
MAX_SPECULATIVE_TOKENS = 1024  # drafted tokens per step (vLLM's runs use 1 to 8)
MAX_CHECKPOINT_BLOCKS = 64  # prefill checkpoint blocks a request holds in align (vLLM: 0 or 1)
MAX_NUMBER_TEXT = 64  # characters of a ratio given as text
MAX_DECIMAL_EXPONENT = 30  # |exponent| of a ratio given as decimal text or a float


def _shown(value: object) -> str:
    """``value`` for an error message, short whatever it is (a huge int has no cheap repr)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, Fraction) and max(
        abs(value.numerator), value.denominator
    ).bit_length() > 128:
        return "a Fraction with more than 128-bit terms"
    if isinstance(value, str):  # its start quoted, and its length ('99...'... (400 characters))
        return quoted(value, MAX_NUMBER_TEXT)
    text = repr(value)
    return text if len(text) <= MAX_NUMBER_TEXT else text[:MAX_NUMBER_TEXT] + "..."


def _decimal_fraction(text: str) -> Fraction | None:
    """A finite decimal with a small exponent as an exact Fraction; None if it is not one.
    (``Fraction("1e999999999")`` would build a billion-digit int; this never does.)
    Underscores only between digits (``1_000``), as float() and so the engines' own flags read
    them: Decimal takes them anywhere (``_1000``, ``1__000``, ``0_._5``)."""
    try:
        float(text)  # a float's syntax first: SGLang reads its ratios with float()
        d = Decimal(text)
    except (ValueError, InvalidOperation):
        return None
    if not d.is_finite():
        return None
    if d.is_zero():
        return Fraction(0)
    if abs(d.adjusted()) > MAX_DECIMAL_EXPONENT:
        return None
    return Fraction(d)


def to_fraction(
    field_name: str, value: object, *, bounds: tuple[Fraction, Fraction], low_inclusive: bool,
    example: str = RATIO_EXAMPLE, key_value: bool = False,
) -> Fraction:
    """An exact ratio from an int, a float (read as its shortest decimal: 0.9 is 9/10), a
    string ("0.9", "9/10", "1e-3") or a Fraction, inside ``bounds`` (the upper bound included,
    the lower one when ``low_inclusive``). Anything else raises ValueError naming the field,
    the value, the accepted range and ``example`` (a value of the field's kind, both forms);
    huge exponents and long strings are refused before any big number is built, so no input
    hangs. ``key_value``: the value named as a link's notices name it, ``sg_ratio='0'``
    (``units.value_named``)."""
    low, high = bounds
    opener = "[" if low_inclusive else "("
    accepted = (
        f"give a number in {opener}{plain_number(low)}, {plain_number(high)}] such as {example}"
    )
    bad = ValueError(f"{value_named(field_name, _shown(value), key_value, verb=' is')}: "
                     f"{accepted}")
    frac: Fraction | None
    if isinstance(value, bool):
        raise bad
    if isinstance(value, (int, Fraction)):
        frac = Fraction(value)
    elif isinstance(value, float):
        frac = _decimal_fraction(repr(value))  # 'inf' / 'nan' give None
    elif isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_TEXT:
            raise bad
        # Decimal reads '٠.٩' and '+0.9' as 0.9: refused with the fix, as every number typed
        if problem := number_problem(text, value_named(field_name, _shown(value), key_value),
                                     example, lambda t: (
                to_fraction(field_name, t, bounds=bounds, low_inclusive=low_inclusive,
                            example=example)), key=link_key(field_name, key_value)):
            raise ValueError(problem)
        num, sep, den = text.partition("/")
        frac = _decimal_fraction(num)
        if sep and frac is not None:
            divisor = _decimal_fraction(den)
            frac = None if not divisor else frac / divisor
    else:
        frac = None
    if frac is None:
        raise bad
    if not (low <= frac if low_inclusive else low < frac) or frac > high:
        raise bad
    return frac


@dataclass(frozen=True)
class StrategyOptions:
    """Knobs of the strategies; the defaults are each engine's defaults.

    block_size: requested tokens per page (P before any equalization); 16: ours, and vLLM's
        at SPEC 3.1's anchor (vLLM 0.34 defaults to 64, ``vllm_releases.RECENT_VLLM_BLOCK_SIZE``).
    alignment: multiple an inflated P is rounded to (flat equalizer, lcm search); None means
        block_size, as in the reference planner.
    kernel_block_size: A, the attention backend's smallest kernel block size (vLLM; 16 on its
        CUDA backends, MLA's FLASH_ATTN_MLA and TRITON_MLA and Blackwell's FlashInfer too; 64
        FlashMLA, 128 CUTLASS MLA). None: the model's own (``CacheProfile.kernel_block_size``:
        64 for sparse MLA, 16 for dense MLA), else 16.
    mamba_cache_mode: vLLM's state pages per request at context L: ``none`` 1, ``align`` 2,
        ``all`` cdiv(L, P) (a state snapshot every P tokens, prefix caching of state). Every
        paged strategy counts state pages per request this way. In ``all`` mode vLLM also
        aligns P to ``c = lcm(mamba_chunk_size, A)`` instead of A (SPEC section 3.1).
    speculative_tokens: N, the tokens a speculative decoder drafts per step (vLLM's
        ``num_speculative_tokens``). A state group keeps a state page for each, so a request
        holds N more state pages in every mode (vLLM's ``MambaSpec.num_speculative_blocks``,
        ``MambaManager``: 1 + N pages in none, 2 + N in align, cdiv(L, P) + N in all), and
        vLLM counts them in its start-up check and its "Maximum concurrency" (0.28; 0.18 did
        not add N in mode all, 0.14 and older in no mode). Every paged strategy counts them
        so. Not the draft's own KV: an MTP drafter's attention layers join the full-attention
        group as more layers of the model. SGLang (a state hybrid with one token pool)
        verifies N + 1 tokens a step (--speculative-num-steps N, topk 1), keeps their states
        in buffers sized with its state slots out of the state budget and runs at most 48
        requests (``sglang.spec_request_slots``); for a model without state it runs at most 48
        requests at once, in the same pools (either way ``sglang_max_running_requests`` in
        place of 48 where told); on other state models its figures are without speculative
        decoding.
    prefill_checkpoint_blocks: state pages a request holds in mode ``align`` beyond its 2 for
        prefill checkpoints (``MambaSpec.num_prefill_checkpoint_blocks``): 1 for Mamba2 layers
        (Nemotron-H, Falcon-H1, Granite 4.0-H; vLLM 0.32+) and for GDN layers whose prefill
        runs on FlashInfer (Qwen3-Next and Qwen3.5 on Hopper, and on B200 under CUDA 13:
        ``vllm.gdn_checkpoint_on``; where vLLM also aligns P to a multiple of 64, as the vllm
        strategy does for their classes; 0.33+), and for KDA layers whose prefill runs on
        FlashKDA (Kimi-K3's, 0.31+, and Glm5Next's, 0.32+, on SM 9.x, 10.x or 12.x at head
        dim 128 in bfloat16: ``vllm.kda_checkpoint_on``; P not aligned; not Kimi-Linear's,
        Triton alone), else 0.
        ``align`` then holds 2 + this + N pages; other modes ignore it. Default 0, as vLLM up
        to 0.31 for Mamba2 and GDN layers.
    mamba_chunk_size: the chunk size of the state kernel; used by vllm in ``all`` mode only.
        None (default): the model's own, as vLLM's ``get_mamba_chunk_size`` reads it (the
        config's ``mamba_chunk_size``, else ``chunk_size``: ``CacheProfile.mamba_chunk_size``),
        else 2,048, vLLM's value for a config without one (Mamba1; its Qwen GDN models run
        mode all as align, so no chunk).
    mamba_full_memory_ratio: SGLang's r; the state pool gets ``budget * r / (1 + r)``; in
        [1e-6, 1e6].
    swa_full_tokens_ratio: SGLang's sliding-window pool size relative to the full pool (0.8);
        in [1e-6, 1] (SWA_RATIO_RANGE).
    sglang_slots_per_request: S, state slots one running request holds in SGLang (3 to 5
        depending on the radix-cache mode: the live state plus cached / tracked states); the
        running-request cap is ``(slots - 1) // S`` (slot 0 pads). None (default): as SGLang
        0.5.23 decides for the model (``sglang.slots_per_request``): 5 for the architectures
        its extra_buffer radix cache serves (3 + 2 tracking slots, with its default overlap
        scheduling; 3 + 1 without it at a page size over 1; no_buffer's 3 without it at page
        size 1; 3 + 1 with ``sglang_mamba_radix_cache_strategy`` extra_buffer_lazy, and with
        extra_buffer told without overlap scheduling at any page), else 3; 1 with
        ``sglang_disable_radix_cache``.
    sglang_max_running_requests: SGLang's ``--max-running-requests``: the requests it runs at
        once, told. None (default): SGLang derives it, from the token pool and the context
        (``int(T / context x 512)`` kept in [2,048, 4,096]), or 48 with speculative decoding
        (its speculative hook's reset), at most ``T // 2`` and the state pool's cap. Told, it logs
        ``min(this, T // 2)``, and with state at most the state pool's cap, whatever the context;
        the pools stay as they are, but with speculative decoding on a state hybrid the draft-token
        buffers are reserved for ``min(this, K // S) + 1`` requests (K // S the state pool's cap:
        its K slots for requests over the S a request holds), not the hook's 48
        (``sglang.running_request_limit``).
    sglang_max_mamba_cache_size: SGLang's ``--max-mamba-cache-size`` M: its state slots for
        requests, told (one more is MambaPool's padding slot). None (default): SGLang sizes
        them from the budget (``mamba_full_memory_ratio``). Told, the state takes (M + 1)
        slots whatever the budget and r, and with speculative decoding draft-token buffers for
        min(max_running_requests, M // S) + 1 requests; the KV pool gets the rest of the
        budget (``sglang.state._told_state_slots``). A state hybrid with attention only: for state
        layers alone it is not modelled (its figures are without it, and a formula says so).
    sglang_overlap_schedule: SGLang's overlap scheduling, on by default; False is
        ``--disable-overlap-schedule``. It sets the state slots a request holds for the
        architectures SGLang runs with its extra_buffer radix cache (``slots_per_request``).
    sglang_disable_radix_cache: SGLang's ``--disable-radix-cache`` (off by default): no prefix
        cache, so no cached or tracked states. A running request then holds one state slot (its
        mamba ratio is 1: kv_cache_configurator._calculate_mamba_ratio), and where
        max_running_requests N is set (told, or the 48 its speculative hook sets when drafting)
        and no --max-mamba-cache-size, the state takes N + 1 slots (the padding slot), with
        drafting buffers for N + 1 requests, whatever the budget and r, the KV pool the rest
        (``_handle_max_mamba_cache``); a hybrid SWA pool with N set is sized from SGLang's
        request cap rather than ``swa_full_tokens_ratio``, the full pool the rest
        (``SWARequestCapPoolConfigurator``). With chunked prefill on, SGLang frees each
        request's sliding tokens behind its window, so that pool holds a request's live window
        beside the chunks in flight, however sized
        (``sglang.concurrency._radix_off_swa_limit``). No mamba radix cache either, so none
        of its page size refusals (``sglang.swa_request_cap``, ``sglang.fixed_state_size``).
    sglang_mamba_radix_cache_strategy: SGLang's ``--mamba-radix-cache-strategy``: "auto" (its
        default: extra_buffer or no_buffer as it picks for the model, ``sglang.radix_cache``), or
        one told: "extra_buffer" runs the extra buffer whatever the overlap and page, so without
        overlap scheduling at page size 1, where auto picks no_buffer's 3, a running request
        holds 3 + 1 state slots (allocation_sizing.get_mamba_tracking_slots 17-19, read by
        kv_cache_configurator._calculate_mamba_ratio 3077-3081); "extra_buffer_lazy", its extra
        buffer allocating a request's second tracking slot only when it needs it, so 3 + 1, not
        3 + 2, and with overlap scheduling only (3073-3076); both on the architectures of its
        extra-buffer list alone (``sglang.told_buffer_refusal``); "no_buffer", 3 slots, at page
        size 1 without overlap scheduling only (mamba_hook.validate_mamba_no_buffer 156-160:
        ``sglang.no_buffer_refusal``), unread on a model without a mamba radix cache
        (model_hook.handle_mamba_radix_cache 1058-1067). Every one is unread with
        ``sglang_disable_radix_cache`` (overrides.py 473-474, 269-274).
    sglang_attn_dp_size: D, SGLang's attention data parallelism: ``--attn-dp-size D``, or
        the older ``--enable-dp-attention --dp-size D`` it turns into that. The model's TP
        ranks T run attention in D groups of T / D ranks each, every group with its own
        scheduler and pools: a rank keeps the KV heads and state heads of a split over T / D
        (an MLA latent is whole at any TP), its prefill chunk is chunked_prefill_size // D,
        and a told max running requests N and --max-mamba-cache-size M count all D groups (a
        group takes ``max(1, N // D)`` and ``M // D``; the 48 of its speculative hook too).
        The figures are one group's, as SGLang logs them. 1 (default): no attention DP. D
        must divide the model's TP (``sglang.attention_dp``).
    sglang_page_size: tokens per page of SGLang's token pool (1 on most backends).
    sglang_mamba_track_interval: SGLang's ``--mamba-track-interval``: the tokens between the
        state snapshots its extra_buffer radix cache takes in decode (256, SGLang's default).
        It sizes no pool and no slot (the tracking slots are 1 or 2 whatever it is); SGLang
        only checks it at start-up, and FlatKV refuses as it does: the page size must divide
        it, it must be at least the tokens verified a step, and for a Mamba2 model at least
        the model's mamba chunk (``sglang.radix_page_refusal``, ``sglang.draft_track_refusal``,
        ``sglang.track_chunk_refusal``). SGLang reads any integer; 1 or more here (0 divides
        by zero in its scheduler, a negative snapshots nothing).
    sglang_swa_pool: whether SGLang keeps sliding-window layers in a token pool of their own
        (its hybrid SWA pool, sized by ``swa_full_tokens_ratio``). None (default): as SGLang
        decides for the model, a pool of their own only for the architectures on its list
        (SGLANG_SWA_ARCHITECTURES); for the others (Gemma 2 / 3, Cohere2, Mistral, Phi-3)
        every attention layer keeps every token in one pool. A profile that names no
        architecture gets the pool when it has both full and sliding layers, as the models on
        the list do. True / False force it either way.
    sglang_ssm_dtype: the dtype SGLang keeps every state layer's ssm tensor in, whatever the
        model's ssm dtype (vLLM keeps the model's, Nemotron-H's its own: ``vllm_ssm_dtype``).
        None (default): as SGLang decides, the config's ``mamba_ssm_dtype``
        (``profile.config_mamba_ssm_dtype``), else float32. Set it to what
        SGLANG_MAMBA_SSM_DTYPE (``--mamba-ssm-dtype`` in older releases) names: that
        overrides the config. Its conv state is bfloat16 whatever the model's
        (``sglang.CONV_DTYPE``): ``sglang.state_tensors`` re-sizes a conv of other elements.
    vllm_ssm_dtype: vLLM's --mamba-ssm-cache-dtype, the dtype it keeps a state layer's ssm
        tensor in (``vllm.ssm_dtype``). None (default, its auto): as vLLM decides, the
        model's ssm dtype, except for the classes whose config hook picks another
        (``vllm_releases.FLOAT32_SSM_UNLESS_TOLD``, Nemotron-H: the config's
        ``mamba_ssm_cache_dtype``, else float32) and the KDA classes that hand it to
        kda_state_dtype (``vllm_releases.KDA_SSM_DTYPE_CLASSES``, Kimi Linear: float32
        whatever the model's, float16 refused told). Told, vLLM keeps it for any such model, a
        lightning model (which reads no such flag) and a KDA model whose state is float32
        whatever it is told aside.
    sglang_chunked_prefill_size: SGLang's --chunked-prefill-size, the prefill chunk it
        schedules a step: SGLang's figures size a sliding-window or chunked request's tokens
        by it (as vLLM's by max_batched_tokens) and its SWA request cap reserves it for each
        chunk in flight. None (default): SGLang's own, which it picks by the GPU's memory
        (``sglang.sglang_default_chunked_prefill``: 16,384 on a B200, 4,096 on an A100 40GB,
        8,192 on an H100 or H200); the app and the CLI tell the GPU's, and a strategy told
        none takes 8,192 (``sglang.CHUNKED_PREFILL_ASSUMED``). -1 (``CHUNKED_PREFILL_OFF``):
        chunked prefill off, as SGLang's ``--chunked-prefill-size -1`` (or 0): a request's
        whole prompt (at most the context less one token) goes into the sliding-window pool in
        one forward, admitted only while the pool's free tokens exceed its reservation, and
        no request cap sizes that pool (``sglang.chunked_prefill_size``,
        ``sglang.concurrency._unchunked_swa_limit``).
    gpu_compute_capability: the CUDA compute capability (major, minor) of the GPU both engines
        run on (``budget.GPU_COMPUTE_CAPABILITIES``: an A100 8.0, an L40S or RTX 4090 8.9, an
        H100 or H200 9.0, a B200 10.0), the one fact of the GPU the layouts read. vLLM picks
        its MLA backends by it: on SM 8.x it has no sparse MLA backend, so DeepSeek-V3.2 does
        not start in any KV dtype, and on SM 8.0 its one dense MLA backend, TRITON_MLA, takes
        no fp8 cache (``vllm.gpu_mla_refusal``); where it is 9.0 the notes say a Hopper's
        behaviour without hedging, on a Blackwell (major ``BLACKWELL_MAJOR``: ``blackwell``)
        FLASHINFER_MLA's (``vllm.unasked_mla_block_text``). On a Blackwell SGLang keeps
        DeepSeek's sparse attention in fp8_e4m3, whatever the model's KV dtype, on its trtllm
        DSA backends, which store the latent raw (576 + 132 B a token a layer for
        DeepSeek-V3.2, not a Hopper's bfloat16 1,152 + 132 or scaled fp8 656 + 132:
        ``sglang.sglang_dsa``). Not an engine option: the app and the CLI set it from the GPU
        preset picked (--gpu-memory), or where the budget names no preset from the
        architecture told (--gpu-arch, --sglang-blackwell, the sidebar's "GPU architecture":
        ``budget.GPU_ARCHITECTURES``). None (default): not said (a budget given as a size, KV
        cache memory or vLLM's blocks, no architecture told), the figures a Hopper's, as
        before the GPU was known, and the notes saying what other GPUs do.
    sglang_kv_cache_dtype: SGLang's ``--kv-cache-dtype`` beside a model KV dtype of bfloat16:
        "auto" (default: not told, which that KV dtype stands for; SGLang's pick, the model's
        dtype, but for DeepSeek's sparse attention fp8_e4m3 on a Blackwell GPU and bfloat16
        elsewhere: overrides._dsa_kv_cache_dtype_default 532-535) or "bfloat16", told: SGLang
        keeps that cache in bfloat16 on a Blackwell too, 1,152 + 132 B a token a layer for
        DeepSeek-V3.2 as on a Hopper, not the raw fp8 576 + 132 (``sglang.sglang_dsa``).
        The KV dtypes float16 and float32 stand for SGLang's auto too (it takes neither told,
        and keeps DeepSeek's sparse attention in bfloat16 or fp8 whatever the model's dtype:
        float32's 576 x 4 + 132 B stored as bfloat16's 1,284, ``sglang.sglang_dsa_stored``,
        on any GPU where no fp8 is picked); an fp8 KV dtype is the one SGLang is told (fp8:
        fp8_e4m3), which this leaves as it is; SGLang refuses fp8_e5m2 for DeepSeek's sparse
        attention on any GPU (``sglang.dsa_dtype_refusal``), and int8 for any model, which it
        keeps no cache in (``sglang.sglang_kv_dtype_refusal``).
    max_batched_tokens: tokens scheduled per step (vLLM's default 8192); it sizes the pages a
        sliding-window or chunked request holds in the other layouts (SGLang's take
        sglang_chunked_prefill_size) and the S of the SPEC section 3.5 workload.
    vllm_async_scheduling: window pages sized by async scheduling's two batches in flight:
        vLLM 0.26 and later size a sliding-window or chunked request's pages by the tokens in
        flight (``VllmConfig.max_in_flight_tokens``), 2 x max_batched_tokens with async
        scheduling (their default), 1 x without (``--no-async-scheduling``). Releases before
        0.26 count one step's tokens either way, as SPEC's anchor (0.19) does: the default,
        False.
    lcm_padding_bound: the largest padding a two-level layout accepts for any group,
        ``(B / K_g - payload_g) / payload_g`` (0.25); in [0, 10].
    lcm_alignment_bytes: parent block bytes B are a multiple of this (256).
    reserved_bytes_per_block: per-component only: bytes per block id of co-resident rows
        outside the plan (a draft model's KV), as in the reference.
    margin: safety pages per group of the SPEC section 3.5 workload.
    """

    block_size: int = 16
    alignment: int | None = None
    kernel_block_size: int | None = None
    mamba_cache_mode: str = "none"
    speculative_tokens: int = 0
    prefill_checkpoint_blocks: int = 0
    mamba_chunk_size: int | None = None
    vllm_hybrid_manager: bool = True
    mamba_full_memory_ratio: Fraction | float | str = Fraction(9, 10)
    swa_full_tokens_ratio: Fraction | float | str = Fraction(4, 5)
    sglang_slots_per_request: int | None = None
    sglang_max_running_requests: int | None = None
    sglang_max_mamba_cache_size: int | None = None
    sglang_overlap_schedule: bool = True
    sglang_disable_radix_cache: bool = False
    sglang_mamba_radix_cache_strategy: str = "auto"
    sglang_attn_dp_size: int = 1
    sglang_page_size: int = 1
    sglang_mamba_track_interval: int = DEFAULT_MAMBA_TRACK_INTERVAL
    sglang_ssm_dtype: str | None = None
    vllm_ssm_dtype: str | None = None
    sglang_swa_pool: bool | None = None
    sglang_chunked_prefill_size: int | None = None
    gpu_compute_capability: tuple[int, int] | None = None
    sglang_kv_cache_dtype: str = "auto"
    max_batched_tokens: int = DEFAULT_SCHEDULED_TOKENS
    vllm_async_scheduling: bool = False
    lcm_padding_bound: Fraction | float | str = Fraction(1, 4)
    lcm_alignment_bytes: int = 256
    reserved_bytes_per_block: int = 0
    margin: int = 0

    def __post_init__(self) -> None:
        """Check every option within its bounds, the first one out of them raising, and
        normalise the ratios to Fractions and the ssm dtypes told to their canonical names."""
        self._check_block_and_state_options()
        self._normalise_ratios()
        self._check_sglang_options()
        self._check_switches()
        self._check_gpu()
        check_int("max_batched_tokens", self.max_batched_tokens, minimum=1, maximum=MAX_TOKENS)
        check_int("lcm_alignment_bytes", self.lcm_alignment_bytes, minimum=1, maximum=MAX_BYTES)
        check_int("reserved_bytes_per_block", self.reserved_bytes_per_block, maximum=MAX_BYTES)
        check_int("margin", self.margin, maximum=MAX_TOKENS)

    def _check_block_and_state_options(self) -> None:
        """The block and kernel sizes, the mamba cache mode and what a request's state pages
        count (drafted tokens, checkpoint blocks, the state kernel's chunk)."""
        check_int("block_size", self.block_size, minimum=1, maximum=MAX_TOKENS)
        if self.alignment is not None:
            check_int("alignment", self.alignment, minimum=1, maximum=MAX_TOKENS,
                      hint="or leave it unset for the block size")
        if self.kernel_block_size is not None:
            check_int("kernel_block_size", self.kernel_block_size, minimum=1,
                      maximum=MAX_TOKENS, hint="or leave it unset for the model's own")
        if self.mamba_cache_mode not in MAMBA_CACHE_MODES:
            raise ValueError(
                f"mamba_cache_mode is {self.mamba_cache_mode!r}: use one of "
                f"{list(MAMBA_CACHE_MODES)}"
            )
        check_int("speculative_tokens", self.speculative_tokens, maximum=MAX_SPECULATIVE_TOKENS,
                  hint="0 without speculative decoding")
        check_int("prefill_checkpoint_blocks", self.prefill_checkpoint_blocks,
                  maximum=MAX_CHECKPOINT_BLOCKS, hint="vLLM keeps 0 or 1")
        if self.mamba_chunk_size is not None:
            check_int("mamba_chunk_size", self.mamba_chunk_size, minimum=1,
                      maximum=MAX_CHUNK_SIZE,
                      hint="or leave it unset for the model's own (its config's chunk)")

    def _normalise_ratios(self) -> None:
        """SGLang's two pool ratios and the two-level padding bound as Fractions within their
        ranges, however given (a float, a string such as '9/10')."""
        for name, bounds, example in (
            ("mamba_full_memory_ratio", RATIO_RANGE, RATIO_EXAMPLE),
            ("swa_full_tokens_ratio", SWA_RATIO_RANGE, RATIO_EXAMPLE),
            ("lcm_padding_bound", PADDING_BOUND_RANGE, PADDING_BOUND_EXAMPLE),
        ):
            frac = to_fraction(name, getattr(self, name), bounds=bounds, low_inclusive=True,
                               example=example)
            object.__setattr__(self, name, frac)

    def _check_sglang_options(self) -> None:
        """SGLang's told counts (None leaves each to SGLang; -1 turns chunked prefill off),
        attention DP, page size and the ssm dtype, made canonical."""
        # SGLang's counts that None leaves to SGLang: each 1 or more where told
        for name, most, hint in (
            ("sglang_slots_per_request", MAX_SLOTS_PER_REQUEST,
             "or leave it unset for SGLang's own (3, or 5 with its extra buffer)"),
            ("sglang_max_running_requests", MAX_RUNNING_REQUESTS,
             "the requests SGLang runs at once (its --max-running-requests), or leave it "
             "unset for SGLang's own (from its token pool and the context, 48 with speculative "
             "decoding)"),
            ("sglang_max_mamba_cache_size", MAX_MAMBA_CACHE_SIZE,
             "the state slots for requests (SGLang's --max-mamba-cache-size), or leave it "
             "unset for SGLang's own (from the budget and --mamba-full-memory-ratio)"),
            ("sglang_chunked_prefill_size", MAX_TOKENS,
             f"{CHUNKED_PREFILL_OFF} turns chunked prefill off (SGLang reads 0 or less so), or "
             "leave it unset for SGLang's own (by the GPU's memory)"),
        ):
            if (value := getattr(self, name)) is not None and not (
                    name == "sglang_chunked_prefill_size" and type(value) is int
                    and value == CHUNKED_PREFILL_OFF):
                check_int(name, value, minimum=1, maximum=most, hint=hint)
        check_int("sglang_attn_dp_size", self.sglang_attn_dp_size, minimum=1,
                  maximum=MAX_ATTN_DP_SIZE,
                  hint="SGLang's --attn-dp-size (a divisor of the TP), or 1 without attention DP")
        # SGLang's --page-size is a bare int; the bound is FlatKV's for any block or page (the
        # sidebar's, a link's sg_page, a log's offered page): past it a page outgrows any
        # context a model here runs, and one page past the context holds nothing a smaller
        # one would not
        check_int("sglang_page_size", self.sglang_page_size, minimum=1, maximum=MAX_BLOCK_SIZE,
                  hint="SGLang's --page-size: tokens per page of its token pool, 1 on most "
                  "backends, 64 on Blackwell's")
        if self.sglang_mamba_radix_cache_strategy not in SGLANG_RADIX_CACHE_STRATEGIES:
            value = self.sglang_mamba_radix_cache_strategy
            shown = quoted(value, 40) if isinstance(value, str) else repr(value)
            raise ValueError(
                f"sglang_mamba_radix_cache_strategy is {shown}: give one of SGLang's "
                f"--mamba-radix-cache-strategy values, {', '.join(SGLANG_RADIX_CACHE_STRATEGIES)} "
                "(auto, its default, picks extra_buffer or no_buffer for the model)")
        object.__setattr__(self, "sglang_kv_cache_dtype",
                           sglang_kv_cache_dtype_named(self.sglang_kv_cache_dtype))
        if self.sglang_kv_cache_dtype not in SGLANG_KV_CACHE_DTYPES:
            value = self.sglang_kv_cache_dtype
            shown = quoted(value, 40) if isinstance(value, str) else repr(value)
            raise ValueError(
                f"sglang_kv_cache_dtype is {shown}: give auto (SGLang's default, for which the "
                "KV dtype bfloat16 stands) or bfloat16 (SGLang's --kv-cache-dtype bfloat16 "
                "told); its fp8_e4m3 and fp8_e5m2 are the KV dtype itself (fp8, e5m2)")
        check_int("sglang_mamba_track_interval", self.sglang_mamba_track_interval, minimum=1,
                  maximum=MAX_TOKENS,
                  hint="SGLang's --mamba-track-interval, tokens between the state snapshots of "
                  f"its extra_buffer radix cache ({DEFAULT_MAMBA_TRACK_INTERVAL} by default), "
                  "a multiple of the page size")
        for name, flag, own in (
                ("sglang_ssm_dtype", "SGLANG_MAMBA_SSM_DTYPE",
                 "SGLang's own choice (the config's mamba_ssm_dtype, else float32)"),
                ("vllm_ssm_dtype", "--mamba-ssm-cache-dtype",
                 "vLLM's own choice (its auto: the model's, Nemotron-H's config "
                 "mamba_ssm_cache_dtype, else float32, Kimi Linear's float32)")):
            value = getattr(self, name)
            if value is None:
                continue
            try:
                ssm_dtype = canonical_dtype(value)
            except ValueError:
                ssm_dtype = None
            if ssm_dtype not in SGLANG_SSM_DTYPES:
                shown = quoted(value, 40) if isinstance(value, str) else repr(value)
                engine = "SGLang" if name.startswith("sglang") else "vLLM"
                raise ValueError(
                    f"{name} is {shown}: {engine} keeps the ssm state "
                    f"in one of {', '.join(SGLANG_SSM_DTYPES)} ({flag}), or "
                    f"leave it unset (None) for {own}"
                )
            object.__setattr__(self, name, ssm_dtype)

    @property
    def sglang_told_strategy(self) -> str | None:
        """SGLang's --mamba-radix-cache-strategy where told (not auto) and read: the radix cache
        on (``_mamba_radix_cache_resolution`` returns before any strategy with it off,
        overrides.py 473-474); else None."""
        strategy = self.sglang_mamba_radix_cache_strategy
        return None if strategy == "auto" or self.sglang_disable_radix_cache else strategy

    @property
    def sglang_lazy_buffer(self) -> bool:
        """Whether SGLang's extra_buffer_lazy strategy is told
        (``sglang_mamba_radix_cache_strategy``) and read: the radix cache on
        (overrides.mamba_extra_buffer_lazy_of 269-274)."""
        return self.sglang_told_strategy == "extra_buffer_lazy"

    def _check_switches(self) -> None:
        """The on / off options are booleans (sglang_swa_pool may also be None, as SGLang
        decides): a truthy string would otherwise pass for True."""
        if not isinstance(self.vllm_hybrid_manager, bool):
            raise ValueError(f"vllm_hybrid_manager is {self.vllm_hybrid_manager!r}: give True "
                             "(vLLM's hybrid KV cache manager, its default) or False "
                             "(--disable-hybrid-kv-cache-manager)")
        for name, choices in (
            ("sglang_overlap_schedule", "True (SGLang's overlap scheduling, its default) or "
             "False (--disable-overlap-schedule)"),
            ("sglang_disable_radix_cache", "False (SGLang's radix cache on, its default) or "
             "True (--disable-radix-cache)"),
            ("vllm_async_scheduling", "True (two batches in flight, vLLM 0.26 and later's "
             "default) or False (one)"),
        ):
            if not isinstance(value := getattr(self, name), bool):
                raise ValueError(f"{name} is {value!r}: give {choices}")
        if self.sglang_swa_pool is not None and not isinstance(self.sglang_swa_pool, bool):
            raise ValueError(f"sglang_swa_pool is {self.sglang_swa_pool!r}: give True (a pool "
                             "of its own for sliding layers), False (one pool) or None (as "
                             "SGLang decides for the model's architecture)")

    def _check_gpu(self) -> None:
        """The compute capability is None (not said) or a GPU preset's: the refusals and notes
        that read it are modelled for those GPUs alone."""
        known = sorted(set(GPU_COMPUTE_CAPABILITIES.values()))
        capability = self.gpu_compute_capability
        if capability is not None and not (  # (9.0, 0) equals (9, 0): ints alone
                type(capability) is tuple and all(type(v) is int for v in capability)
                and capability in known):
            raise ValueError(
                f"gpu_compute_capability is {self.gpu_compute_capability!r}: give one of "
                f"{', '.join(map(str, known))} (a GPU preset's: budget.GPU_COMPUTE_CAPABILITIES) "
                "or None where no GPU is named")

    @property
    def blackwell(self) -> bool:
        """Whether the GPU is a Blackwell (compute capability major ``BLACKWELL_MAJOR``: the
        B200 preset, or a Blackwell told), derived from the one field, so that SGLang's
        DeepSeek layout and vLLM's MLA notes read one GPU; False where none is said."""
        capability = self.gpu_compute_capability
        return capability is not None and capability[0] == BLACKWELL_MAJOR

    @property
    def effective_alignment(self) -> int:
        return alignment_or_block_size(self.alignment, self.block_size)


def _jsonable(value: object) -> object:
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


# Every key a strategy may put in ``StrategyResult.extras`` (and so in the CLI's --json, beside
# the result's fields), what it holds, and who writes it. Pages and the CLI read them with
# .get(), so a key missing here (or misspelt) is refused where it is written, and
# tests/test_strategies.py checks every key read in flatkv/ and app_pages/ is one of these.
EXTRAS: Mapping[str, str] = {
    # every paged layout (paged.finish_paged)
    "groups": "paged layouts: each pool group's name, kind, layers and pages a block",
    "owned_units": "paged layouts: the blocks each group owns at the SPEC 3.5 workload",
    "workload_max_requests": "paged layouts: requests the SPEC 3.5 workload (a state snapshot "
                             "every P tokens) holds, beside max_concurrency",
    # flat and per-component (our planner)
    "slots": "flat: how many slot tensors it has (the most layers of one group)",
    "alignment": "flat: the alignment P is a multiple of",
    "equalizer_needed_slots": "flat: the fewest token slots whose widest history row covers the "
                              "widest state row (the equalizer's needed)",
    "tensors": "per-component: how many tensors it has, one per component",
    "reserved_bytes_per_block": "per-component: bytes a block id keeps for co-resident rows "
                                "outside the plan (a draft model's KV)",
    # aliased and two-level pages
    "aliased_groups": "aliased: how many groups alias the slabs",
    "slabs": "aliased: how many slabs (the layers of one group)",
    "parent_bytes": "lcm: B, one parent page",
    "pages_per_parent": "lcm: K_g, each group's pages in a parent",
    "payload_bytes": "lcm: each group's bytes of one page (all its layers, P tokens)",
    "padding_fraction": "lcm: each group's (B / K_g - payload_g) / payload_g",
    "padding_bound": "lcm: the largest padding fraction it accepts (lcm_padding_bound)",
    # vLLM
    "mamba_cache_mode": "vllm: the mode it ran in (mode all can run as align)",
    "mamba_cache_mode_asked": "vllm: the mode asked, where it ran in another",
    "mamba_chunk_size": "vllm: the state kernel's chunk P aligns to in mode all",
    "kernel_block_size": "vllm: the attention backend's kernel block",
    "attention_block_size": "vllm: A = max(kernel block, block_size), what P is a multiple of",
    "attention_page_bytes": "vllm: P x attention bytes per token, one attention page",
    "state_page_bytes": "vllm: one state page before padding (its state tensors' bytes)",
    "sized_state_page_bytes": "vllm: the state page P was sized from, where the layers keep a "
                              "wider one (speculative conv rows, vLLM issue #57721)",
    "drafted_conv_bytes": "vllm: the conv rows speculative tokens add to a state page",
    "ssm_bytes": "vllm: a state page's ssm bytes, where vLLM keeps another ssm dtype than the "
                 "model's",
    "state_padding_fraction": "vllm: (page - state page) / state page (\"Padding mamba page "
                              "size by X%\")",
    "state_padding_exact": "vllm: that padding as [page - state page, state page]",
    "page_bytes": "vllm: one page of every group (the largest of the layers' pages)",
    "layer_page_bytes": "vllm, one group of two page sizes: each cache layer's page in order",
    "block_sizes": "vllm: each attention kind's block size, where one is not P",
    "kind_history_bytes": "vllm: the bytes of history each attention kind keeps in its page",
    "group_size": "vllm: layers a group holds (a block is group_size pages)",
    "num_groups": "vllm: its KV cache groups",
    "padding_layers_per_type": "vllm: padding layers added to each layer type's groups",
    "windows_as_full": "vllm: sliding and chunked layers run as full attention (hybrid "
                       "manager off)",
    "longest_context": "vllm, refused for one request of the context: the longest context whose "
                       "request fits (its \"estimated maximum model length\"), 0 if none",
    "older_releases_refuse": "vllm: releases before this layout refused the model at start-up",
    "older_log_none": "vllm: why older_logged_tokens is None: vLLM 0.19 and earlier ran no such "
                      "layout",
    "older_block_size": "vllm: vLLM 0.19's own P, where older_logged_tokens counts its layout "
                        "for it is not this one's (a hybrid's P a multiple of 16, not of A)",
    "log_lines": "vllm, sglang: the start-up log lines the engine prints at these settings",
    "log_left_out": "vllm, sglang: what the log lines leave out, and why",
    "log_release": "vllm: the release whose words the log lines are, where not a current one "
                   "(mamba cache mode all: 0.31, the last release with it)",
    "log_line_forms": "vllm: for a log line, the older forms releases log it in, each named "
                      "(log_check.check_lines' forms: the two-line KV cache size)",
    # SGLang
    "speculative_not_modelled": "sglang: speculative tokens asked, which its figures leave out "
                                "on this model",
    "sglang_draft_tokens": "sglang: D, the tokens verified a step (speculative tokens + 1)",
    "drafter_pool": "sglang: tokens are drafted, so a drafter's own pool logs its KV line after "
                    "the model's (log_check reads it as that pool's)",
    "draft_buffer_bytes": "sglang: the bytes it reserves for draft-token state buffers",
    "draft_buffers_allocated": "sglang: the bytes of those buffers its MambaPool allocates",
    "sglang_swa_pool": "sglang: whether sliding layers keep a pool of their own",
    "kv_tokens": "sglang: the full-attention token pool (max_total_num_tokens)",
    "swa_tokens": "sglang: the sliding-window token pool",
    "swa_full_tokens_ratio": "sglang: the sliding / full tokens ratio it split by",
    "full_page_bytes": "sglang: one page of the full pool, every layer",
    "swa_page_bytes": "sglang: one page of the sliding pool, every layer",
    "kv_shared_pool_bytes": "sglang: pool bytes kept for kv-shared layers, never written",
    "mamba_full_memory_ratio": "sglang: the state / KV memory ratio it split by",
    "sglang_ssm_dtype": "sglang: the ssm state's dtype",
    "sglang_ssm_dtype_source": "sglang: where that dtype comes from",
    "state_layer_bytes": "sglang: one layer's state of one request",
    "state_tensor_bytes": "sglang: each state tensor's bytes of one layer",
    "state_pool_bytes": "sglang: its state pool (MambaPool)",
    "state_slot_bytes": "sglang: one state slot, every state layer",
    "state_slots": "sglang: the state pool's slots, the padding slot included",
    "request_state_slots": "sglang: the slots for requests (max_mamba_cache_size)",
    "slots_per_request": "sglang: state slots a running request holds",
    "running_request_cap": "sglang: request slots // slots per request",
    "max_running_requests": "sglang: the running-request figure its log prints",
    "mamba_cache_size_told": "sglang: the state slots are --max-mamba-cache-size + 1 (the "
                             "option), not a share of the budget",
    "state_from_running_requests": "sglang: with --disable-radix-cache, the state slots are "
                                   "max_running_requests + 1, not a share of the budget",
    "swa_request_cap": "sglang: with --disable-radix-cache, the tokens its SWA request cap "
                       "sizes the sliding pool to before whole pages",
    "running_requests_told": "sglang: max_running_requests starts from --max-running-requests "
                             "(the option), whatever the context",
    "running_cap_from_speculative_hook": "sglang: max_running_requests starts from the 48 its "
                                         "speculative hook sets (tokens drafted)",
    "binding_limit": "sglang: the pool that limits the requests at the context",
    "idle_kv_bytes_at_context": "sglang: full-pool bytes no request holds at the context",
    "idle_state_bytes_at_context": "sglang: state-pool bytes no request holds at the context",
    "idle_swa_tokens_at_context": "sglang: sliding-pool tokens no request holds at the context",
    "idle_swa_bytes_at_context": "sglang: sliding-pool bytes no request holds at the context",
    "logged_pools": "sglang: the pools its log lines name",
    "scheduler_line": "sglang: its scheduler's summary line, the last of its log lines",
    "attention_dp_groups": "sglang: D, its attention-DP groups, where over 1 (the figures are "
                           "one group's)",
}


@dataclass(frozen=True)
class StrategyResult:
    """One strategy's answer; every byte count is an exact int.

    applies / reason: False and why when the strategy has no answer for this profile or budget
        (then the numbers are None and the breakdown is empty).
    block_bytes / num_blocks: bytes one block id (one unit) takes across all tensors of the
        layout, and how many the budget holds. sglang has no block ids over its pools: a page
        in each token pool (full and sliding) and the pages of the pool requests count (full,
        else sliding); for a state-only model, a state slot and the state slots.
    capacity_tokens: paged layouts (vllm included): the capacity convention above (attention
        groups hold N pages each, state groups one request's state pages); sglang: its
        full-attention token pool, which its static split of the budget fixes (state lives in
        a pool of its own). None for a model without attention.
    logged_tokens: the token capacity the engine itself logs, for checking against its log
        (vllm: "GPU KV cache size", max concurrency x max_model_len, so None without a
        context; sglang: max_total_num_tokens); None for our layouts.
    older_logged_tokens: vllm only, what vLLM 0.19 and earlier printed as "GPU KV cache size":
        num_blocks // groups x min block size.
    concurrency_numerator / concurrency_denominator: max_concurrency exactly (units / units one
        request needs at ``context_tokens``); None without a context.
    breakdown: ((category, bytes), ...) in CATEGORIES order, summing to budget_bytes.
    formulas: the math with the numbers substituted, one line each, for "show the math".
    extras: strategy-specific fields (JSON-friendly values, Fractions allowed), each key one of
        ``EXTRAS``, which says what it holds and which layouts write it.
    pool: the units and groups, for SPEC section 3.5 workload checks; None for separate pools.
    """

    strategy: str
    budget_bytes: int
    applies: bool
    reason: str = ""
    profile_name: str = ""
    context_tokens: int | None = None
    block_size: int | None = None
    block_bytes: int | None = None
    num_blocks: int | None = None
    capacity_tokens: int | None = None
    logged_tokens: int | None = None
    older_logged_tokens: int | None = None
    concurrency_numerator: int | None = None
    concurrency_denominator: int | None = None
    why_block_size: str = ""
    breakdown: tuple[tuple[str, int], ...] = ()
    formulas: tuple[str, ...] = ()
    extras: dict[str, object] = field(default_factory=dict)
    pool: PagePool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "breakdown", tuple((str(c), b) for c, b in self.breakdown))
        object.__setattr__(self, "formulas", tuple(self.formulas))
        object.__setattr__(self, "extras", dict(self.extras))
        check_int("budget_bytes", self.budget_bytes, minimum=1)
        if unknown := sorted(set(self.extras) - set(EXTRAS)):  # a misspelt key reads as None
            raise ValueError(f"{self.strategy}: extras {unknown} are not in EXTRAS: say there "
                             "what each holds")
        if not self.applies:
            if not self.reason:
                raise ValueError(f"{self.strategy}: a result that does not apply needs a reason")
            return
        names = tuple(c for c, _ in self.breakdown)
        if names != CATEGORIES:
            raise ValueError(f"{self.strategy}: breakdown categories {names} must be {CATEGORIES}")
        for category, nbytes in self.breakdown:
            check_int(f"{self.strategy} breakdown[{category!r}]", nbytes)
        total = sum(b for _, b in self.breakdown)
        if total != self.budget_bytes:
            raise ValueError(
                f"{self.strategy}: breakdown adds up to {total} bytes, not the budget "
                f"{self.budget_bytes} (an accounting bug)"
            )
        if (self.concurrency_numerator is None) != (self.concurrency_denominator is None):
            raise ValueError("concurrency numerator and denominator come together")
        if self.concurrency_denominator is not None:
            check_int("concurrency_denominator", self.concurrency_denominator, minimum=1)

    @property
    def max_concurrency(self) -> float | None:
        """Requests at ``context_tokens`` the layout holds (a float, as engines log it)."""
        if self.concurrency_denominator is None:
            return None
        return self.concurrency_numerator / self.concurrency_denominator

    @property
    def concurrency(self) -> Fraction | None:
        """``max_concurrency`` exactly, for comparing layouts without float rounding."""
        if self.concurrency_denominator is None:
            return None
        return Fraction(self.concurrency_numerator, self.concurrency_denominator)

    def bytes_of(self, category: str) -> int:
        """Bytes of one breakdown category (0 when the result does not apply)."""
        if category not in CATEGORIES:
            raise ValueError(f"category is {category!r}: use one of {list(CATEGORIES)}")
        return dict(self.breakdown).get(category, 0)

    def _fields(self) -> dict[str, object]:
        """The result's own fields, JSON-ready (extras excluded)."""
        exact = (
            None
            if self.concurrency_denominator is None
            else [self.concurrency_numerator, self.concurrency_denominator]
        )
        return {
            "strategy": self.strategy,
            "applies": self.applies,
            "reason": self.reason,
            "profile": self.profile_name,
            "budget_bytes": self.budget_bytes,
            "context_tokens": self.context_tokens,
            "block_size": self.block_size,
            "block_bytes": self.block_bytes,
            "num_blocks": self.num_blocks,
            "capacity_tokens": self.capacity_tokens,
            "logged_tokens": self.logged_tokens,
            "older_logged_tokens": self.older_logged_tokens,
            "max_concurrency": self.max_concurrency,
            "max_concurrency_exact": exact,
            "why_block_size": self.why_block_size,
            "breakdown": dict(self.breakdown),
            "formulas": list(self.formulas),
        }

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: the result's fields, then its extras beside them at the top level
        (``__post_init__`` keeps their names apart). One convention for groups: a key or
        field a tool matches names a group by its id (``owned_units``' keys and ``groups``'
        ``name``, "linear_attention.1"; ``kind``, ``padding_layers_per_type``' keys the layer
        label, "linear_attention"), and only the human text (``reason``, ``why_block_size``,
        ``formulas``, the tables' own words) by its kind as the pages say it ("3 state groups
        x 1 + 482 full attention"): read figures off the fields, not the formulas."""
        return {**self._fields(), **_jsonable(self.extras)}


# --------------------------------------------------------------------------------------------
# Helpers shared by the strategies.


def n(value: int) -> str:
    """An int with thousands separators, as the formulas show it."""
    return f"{value:,}"


def ratio_text(value: Fraction) -> str:
    """A ratio as the formulas show it: "0.9" when that is exact, else a short fraction
    ("1/3"), else about six digits ("~0.333333")."""
    text = f"{float(value):g}"
    if Fraction(text) == value:
        return text
    short = value.limit_denominator(10**6)
    return f"{short.numerator}/{short.denominator}" if short == value else f"~{text}"


def refuses_to_start(engine: str) -> str:
    """How a reason opens where ``engine`` would not start at these settings (a flag with no
    such choice, a check at start-up), not a model it does not serve: Compare labels such an
    engine's row "won't start", the others "n/a" (``strategy_notes.why_not_label``). One
    wording for each engine, so the label reads the reason alone."""
    return f"{engine} refuses to start"


def not_applicable(
    strategy: str, budget_bytes: int, reason: str, *, profile_name: str = "",
    context_tokens: int | None = None, extras: Mapping[str, object] | None = None,
) -> StrategyResult:
    return StrategyResult(
        strategy=strategy, budget_bytes=budget_bytes, applies=False, reason=reason,
        profile_name=profile_name, context_tokens=context_tokens, extras=dict(extras or {}),
    )


def kv_sizes_text(profile: CacheProfile) -> str:
    """"its sliding layers keep 16,384 B a token and its full layers 8,192 B" where the two
    differ (Gemma 4), else ""."""
    sliding = profile.sliding_kv_bytes_per_slot
    if sliding is None:
        return ""
    return (f"its sliding layers keep {sliding:,} B a token and its full layers "
            f"{profile.kv_bytes_per_slot:,} B")


def no_attention_layer(
    strategy: str, budget_bytes: int, why: str, *, profile_name: str = "",
    context_tokens: int | None = None,
) -> StrategyResult:
    """The answer of a layout that needs an attention layer, for a state-only model."""
    return not_applicable(
        strategy, budget_bytes,
        f"the model has no attention layer: {why} (the per-component, vLLM and SGLang layouts "
        "lay out a state-only model, SGLang where its state keeps a conv tensor)",
        profile_name=profile_name, context_tokens=context_tokens,
    )


def budget_too_small(
    strategy: str, budget_bytes: int, *, holds: str, least_bytes: int, profile_name: str = "",
    context_tokens: int | None = None, refusal: str = "",
) -> StrategyResult:
    """The answer when the budget holds too few units: what it holds, and the least that works;
    led by ``refusal`` (``refuses_to_start``) where an engine would not start there, so the
    pages label it "won't start", not "n/a"."""
    return not_applicable(
        strategy, budget_bytes,
        (f"{refusal}: " if refusal else "")
        + f"the budget of {budget_bytes:,} B holds {holds}; give at least {least_bytes:,} B",
        profile_name=profile_name, context_tokens=context_tokens,
    )


def unit_parts(**nbytes: int) -> dict[str, int]:
    """A unit's bytes by breakdown category: every category but ``unused`` (which belongs to
    no unit), 0 unless given."""
    parts = {c: 0 for c in CATEGORIES if c != "unused"}
    unknown = set(nbytes) - set(parts)
    if unknown:
        raise ValueError(f"unit_parts got {sorted(unknown)}: use categories {list(parts)}")
    parts.update(nbytes)
    return parts


# Where vLLM's prefill checkpoint blocks come from (MambaSpec.num_prefill_checkpoint_blocks;
# vllm_releases' PREFILL_CHECKPOINT_CLASSES, GDN_CHECKPOINT_CLASSES, KDA_CHECKPOINT_SINCE)
PREFILL_CHECKPOINTS_SINCE = ("vLLM's prefill checkpoint blocks: 0.32+ for Mamba2 layers, 0.33+ for "
                             "GDN on FlashInfer, 0.31+ for Kimi-K3's KDA and 0.32+ for "
                             "Glm5Next's on FlashKDA")


def state_pages_per_request(options: StrategyOptions, context_tokens: int,
                            block_size: int) -> int:
    """Pages one request holds in a state group at context L: ``none`` 1, ``align`` 2 plus its
    prefill checkpoint blocks, ``all`` cdiv(L, P) (vLLM's mamba cache modes), each plus one page
    per speculative token."""
    return mode_state_pages(options.mamba_cache_mode, context_tokens, block_size,
                            checkpoint_blocks=options.prefill_checkpoint_blocks,
                            speculative_tokens=options.speculative_tokens)


@dataclass(frozen=True)
class WindowSpan:
    """How a windowed group's pages per request are sized (vLLM's ``SlidingWindowSpec`` and
    ``ChunkedLocalAttentionSpec``): a request keeps ``window + offset`` tokens before the step,
    plus the step's ``max_batched_tokens``, at most its context, in whole pages, and
    ``extra_pages`` more. ``kept`` writes the kept tokens in the formulas."""

    offset: int
    extra_pages: int
    kept: str


# a sliding window W keeps W - 1 earlier tokens and vLLM adds a page; a chunk C counts whole
WINDOW_SPANS = {SLIDING_ATTENTION: WindowSpan(-1, 1, "W - 1"),
                CHUNKED_ATTENTION: WindowSpan(0, 0, "C")}


def request_pages(
    kind: str, context_tokens: int, block_size: int, options: StrategyOptions,
    window: int | None,
) -> int:
    """Pages one request holds in one group at context L (vLLM's per-request count);
    ``window`` is the group's window or chunk (``CacheProfile.window(kind)``)."""
    if kind == FULL_ATTENTION:
        return cdiv(context_tokens, block_size)
    if kind in WINDOW_SPANS:
        if window is None:
            raise ValueError(WINDOWED[kind].missing)
        return (cdiv(window_span(kind, window, options, context_tokens), block_size)
                + WINDOW_SPANS[kind].extra_pages)
    if kind == LINEAR_ATTENTION:
        return state_pages_per_request(options, context_tokens, block_size)
    raise ValueError(f"kind is {kind!r}: use one of {list(LAYER_LABELS)}")


def window_span(kind: str, window: int, options: StrategyOptions, context_tokens: int) -> int:
    """Tokens a running request keeps in a sliding or chunked layer, plus the tokens scheduled
    in one step, at most its context L: ``W - 1 + max_batched_tokens`` for a sliding window W,
    ``C + max_batched_tokens`` for a chunk C (``WINDOW_SPANS``). vLLM and SGLang both size a
    request's window pages from it (SGLang with its chunked prefill size in max_batched_tokens'
    place)."""
    kept = window + WINDOW_SPANS[kind].offset
    return min(kept + options.max_batched_tokens, context_tokens)


def request_pages_text(kind: str, context_tokens: int, block_size: int, options, window) -> str:
    """How ``request_pages`` got its number, for the formulas."""
    pages = request_pages(kind, context_tokens, block_size, options, window)
    if kind == FULL_ATTENTION:
        return f"ceil({n(context_tokens)} / {n(block_size)}) = {n(pages)}"
    if kind in WINDOW_SPANS:
        span = WINDOW_SPANS[kind]
        offset = f" - {-span.offset}" if span.offset else ""
        extra = f" + {span.extra_pages}" if span.extra_pages else ""
        return (f"ceil(min({n(window)}{offset} + {n(options.max_batched_tokens)}, "
                f"{n(context_tokens)}) / {n(block_size)}){extra} = {n(pages)}")
    drafted = options.speculative_tokens
    spec = f" + {drafted} speculative" if drafted else ""
    if options.mamba_cache_mode == "all":
        return (
            f"ceil({n(context_tokens)} / {n(block_size)}){spec} = {n(pages)} (mamba cache mode "
            "all: a state snapshot every P tokens)"
        )
    mode = options.mamba_cache_mode
    checkpoints = options.prefill_checkpoint_blocks if mode == "align" else 0
    if not drafted and not checkpoints:
        return f"{pages} (mamba cache mode {mode})"
    held = pages - drafted - checkpoints
    kept = f" + {checkpoints} prefill checkpoint" if checkpoints else ""
    why = "; ".join([*(["a state page per drafted token"] if drafted else []),
                     *([PREFILL_CHECKPOINTS_SINCE] if checkpoints else [])])
    return f"{held}{kept}{spec} = {pages} (mamba cache mode {mode}; {why})"


def apportion(total: int, weights: Sequence[Fraction]) -> list[int]:
    """Split ``total`` whole units in proportion to ``weights`` (largest remainder; ties go to
    the earlier weight). The parts add up to ``total`` exactly."""
    wsum = sum(weights, Fraction(0))
    if wsum <= 0:
        raise ValueError("apportion needs a positive total weight")
    exact = [Fraction(total) * w / wsum for w in weights]
    parts = [int(q) for q in exact]  # floor: exact parts are >= 0
    left = total - sum(parts)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in order[:left]:
        parts[i] += 1
    return parts


@dataclass(frozen=True)
class UnitUse:
    """How the bytes of one unit divide when ``group`` owns it: category -> bytes."""

    group: PoolGroup
    parts: Mapping[str, int]


def unit_breakdown(
    *, budget_bytes: int, unit_bytes: int, num_units: int, uses: Sequence[UnitUse],
    weights: Sequence[Fraction],
) -> tuple[tuple[tuple[str, int], ...], list[int]]:
    """Breakdown of a layout of ``num_units`` usable units of ``unit_bytes`` bytes whose
    ownership is split by ``weights``; everything else of the budget is ``unused`` (the division
    remainder, and a null unit a layout sets aside).

    Returns the breakdown and the units each group owns.
    """
    for use in uses:
        if sum(use.parts.values()) != unit_bytes:
            raise ValueError(
                f"unit use of {use.group.name} adds up to {sum(use.parts.values())}, "
                f"not unit_bytes {unit_bytes} (an accounting bug)"
            )
    owned = apportion(num_units, weights)
    totals = dict.fromkeys(CATEGORIES, 0)
    for use, units in zip(uses, owned, strict=True):
        for category, nbytes in use.parts.items():
            totals[category] += units * nbytes
    totals["unused"] += budget_bytes - num_units * unit_bytes
    return tuple((c, totals[c]) for c in CATEGORIES), owned


def ownership_weights(
    groups: Iterable[PoolGroup], pages_by_group: Mapping[str, int] | None
) -> list[Fraction]:
    """Units per group in proportion to ``pages_by_group`` (the pages one request needs at the
    context, or the pages held at capacity without one), a unit holding ``pages_per_unit``
    pages; equal pages in every group when there is none (a state-only model) or all are 0."""
    groups = list(groups)
    if pages_by_group is None or not any(pages_by_group.values()):
        return [Fraction(1, g.pages_per_unit) for g in groups]
    return [Fraction(pages_by_group[g.name], g.pages_per_unit) for g in groups]


def kind_runs(groups: Sequence[PoolGroup], *, mla: bool) -> list[tuple[str, list[int]]]:
    """Consecutive groups of one kind, each run with its name in the formulas' words and the
    positions of its groups: "state" (or "state 1" where a layout's other groups of that kind
    lie apart, ``pool_group_name``) for one group, "3 state groups" for vLLM's
    ``linear_attention.0`` to ``.2``, so that a formula counts a kind once, as a person
    writes it ("3 state groups x 1 + 482 full attention"), not each group by an index
    ("1 state 0 + 1 state 1 + 1 state 2 + ..."). The ids stay in the result's JSON."""
    runs = []
    for kind, run in groupby(range(len(groups)), key=lambda i: groups[i].kind):
        at = list(run)
        name = (pool_group_name(groups[at[0]].name, kind, mla=mla) if len(at) == 1
                else f"{len(at)} {group_name(kind, mla=mla)} groups")
        runs.append((name, at))
    return runs


def ownership_text(
    uses: Sequence[UnitUse], owned: Sequence[int], unit: str, with_context: bool,
    at_capacity: bool = False, *, mla: bool,
) -> str:
    """The units each group owns, each kind once as Layout names it (``kind_runs``: "3 state
    groups: 12 each", "3 state groups: 7, 7 and 6", not vLLM's ids "linear_attention.1 7")."""
    if with_context:
        basis = "the pages one request needs at L"
    elif at_capacity:
        basis = "the pages each group holds at capacity_tokens"
    else:
        basis = "equal pages per group"
    parts = []
    for name, at in kind_runs([u.group for u in uses], mla=mla):
        counts = [n(owned[i]) for i in at]
        if len(counts) == 1:
            parts.append(f"{name}: {counts[0]}")
        elif len(set(counts)) == 1:
            parts.append(f"{name}: {counts[0]} each")
        else:
            parts.append(f"{name}: {', '.join(counts[:-1])} and {counts[-1]}")
    return f"{unit} owned (split in proportion to {basis}): {', '.join(parts)}"
