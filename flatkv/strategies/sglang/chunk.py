"""What SGLang takes for --chunked-prefill-size and --page-size when told neither, by GPU: its
chunk by the GPU's memory (``sglang_default_chunked_prefill``; ``CHUNKED_PREFILL_ASSUMED`` where
no GPU is known), the page its Blackwell backends take, none told or in place of one told
(``sglang_default_page``), and what it refuses there (``sm100_refusal``); the chunk
the options give (``chunked_prefill_size``), how a link or the CLI writes chunked prefill off
(``parse_chunked_prefill``), and the page sizes that refuse a chunk (``chunk_page_refusal``).
The CLI, the app and the notes read these defaults without running the strategy."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from flatkv.budget import BLACKWELL_MAJOR, GPU_COMPUTE_CAPABILITIES, gpu_words
from flatkv.dtypes import (
    ENGINE_DTYPE_NAMES,
    canonical_dtype,
    dtype_bytes,
    unstored_kv_dtype_refusal,
)
from flatkv.profile import CacheProfile
from flatkv.strategies.base import CHUNKED_PREFILL_OFF, StrategyOptions, n, refuses_to_start
from flatkv.strategies.base import DEFAULT_MAMBA_TRACK_INTERVAL as DEFAULT_TRACK
from flatkv.strategies.sglang.model import sglang_blocker
from flatkv.strategies.sglang.pages import page_size
from flatkv.strategies.sglang.state import NO_BUFFER_ARCHITECTURES, radix_page_refusal
from flatkv.units import (
    MAX_TOKENS,
    keyed,
    link_key,
    number_problem,
    parse_tokens,
    quoted,
    tokens_text,
    value_named,
)

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


# The digits of a whole number as int() reads them, and so SGLang's flag (type int): ASCII
# digits, underscores between them ('-1_000' is -1000); its sign is the caller's
_SIGNED_WHOLE = r"[0-9]+(?:_[0-9]+)*"


def _whole(word: str) -> int:
    """int(``word``), a whole number in ASCII digits; past int()'s 4,300 digits, which SGLang's
    flag refuses too, 1 (no chunk off: ``parse_tokens`` then says what to give)."""
    try:
        return int(word)
    except ValueError:
        return 1


def parse_chunked_prefill(text: str, field: str, *, maximum: int = MAX_TOKENS,
                          key_value: bool = False) -> int:
    """SGLang's --chunked-prefill-size as typed on a command line or in a link: tokens
    (``parse_tokens``' suffixes), or chunked prefill off (``CHUNKED_PREFILL_OFF``) for any whole
    number 0 or less, as SGLang reads them (scheduler.py 1372-1373, the size set to None where
    it is <= 0; its help gives -1; ``-1_000`` and ``0_000`` too, which its int() reads; only
    its embedding-only, multi-item scoring and PD-multiplexing paths, which FlatKV does not
    model, test for -1 itself), or ``off``; a ValueError naming ``field`` otherwise, which
    says how to turn it off (the value named as a link's notices name it with ``key_value``:
    ``units.value_named``)."""
    named, key = value_named(field, quoted(text), key_value), link_key(field, key_value)
    word = text.strip()
    if (re.fullmatch(rf"-?{_SIGNED_WHOLE}", word) and _whole(word) <= 0
            or word.lower() == CHUNK_OFF_WORD):
        return CHUNKED_PREFILL_OFF
    # no plus sign, as no number here takes one (units.number_problem): '+0' as '+5' is
    # refused with the number to write instead, which turns chunked prefill off
    if re.fullmatch(rf"\+{_SIGNED_WHOLE}", word) and _whole(word[1:]) <= 0:
        raise ValueError(f"{named} has a plus sign: write it without the sign, "
                         f"e.g. {keyed(key, word[1:])}, for chunked prefill off")
    # digits of another script: the fix as it reads here, '-٢' as -2 (off), not as tokens,
    # which take no minus sign
    if problem := number_problem(word, named, "256K", lambda t: (
            parse_chunked_prefill(t, field, maximum=maximum)), key=key):
        raise ValueError(problem)
    try:
        return parse_tokens(text, field, maximum=maximum, key_value=key_value)
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
    return (f"it takes a prefill chunk of whole pages only (\"chunked_prefill_size must be "
            f"divisible by page_size\"): {n(chunk)} tokens is not a multiple of the page size "
            f"{n(page)}; set --chunked-prefill-size to a multiple of {n(page)} (such as "
            f"{n(pages * page)}) or {CHUNKED_PREFILL_OFF} (chunked prefill off){other_page}")


# GPUs on which SGLang 0.5.23, told no --page-size, runs TensorRT-LLM's MHA / MLA backends,
# which take pages of 64 tokens ("... changing page_size from None to 64"), or FA4 where K and V
# differ in width, which takes 128 (its arg groups: get_default_attn_backend, then the backends'
# page-size fixes); on Hopper and Ampere its backends (fa3, triton, flashinfer) take 1. The
# GPU presets of a Blackwell's compute capability (the B200), so that the one table of
# capabilities says which GPU is a Blackwell to both engines
BLACKWELL_GPUS = tuple(gpu for gpu, capability in GPU_COMPUTE_CAPABILITIES.items()
                       if capability[0] == BLACKWELL_MAJOR)


def blackwell_named(gpu: str, options: StrategyOptions) -> str | None:
    """The Blackwell GPU SGLang runs on at ``gpu`` (a GPU preset's name, or "" for a budget of
    none) and ``options``, as the notes name it: the preset's ("B200"), or "Blackwell GPU"
    where ``options.blackwell`` is told beside a budget of no GPU preset (--gpu-arch
    blackwell, --sglang-blackwell, the sidebar's "GPU architecture"); None on any other GPU.
    One predicate for every note of SGLang on a Blackwell (its page, its refusals, its DSA
    layout), so a Blackwell told says all a B200 preset says."""
    if gpu in BLACKWELL_GPUS:
        return gpu.split()[0]
    return "Blackwell GPU" if options.blackwell else None
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
# Qwen3-Next's and Qwen3.5's override (model_overrides/qwen3_5.py 24-49) runs TensorRT-LLM's
# MHA backend at page 64 where get_default_attn_backend picks it and one of the extra buffer,
# the radix cache off or a speculative algorithm is set, else triton at page 1 (whatever page
# is told). The extra buffer it reads is the one told: SGLang resolves "auto" after the
# override (handle_model_specific_adjustments runs the radix-cache pass first only for the
# linear-attention registry's models, model_hook.py 223-225, which these are not; the
# overrides at 232-234, the pass at 737), so overlap scheduling does not pick it there
SM100_TRTLLM_WITH_EXTRA_BUFFER = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration",
})
# Nemotron-H's override (model_overrides/nemotron_h.py 123-148) runs TensorRT-LLM's MHA backend
# (with a speculative algorithm at topk 1 it also sets page 64 where none is told and the
# extra_buffer radix cache where "auto"); the radix-cache pass after it (overrides.py 454-489)
# resolves "auto" to extra_buffer with overlap scheduling or a page past 1, else to no_buffer,
# which refuses that backend and page (mamba_hook.py 156-163): what SGLang does then is not
# modelled (with the radix cache off no such check runs)
SM100_TRTLLM_WITH_OVERLAP = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
# Models whose override runs TensorRT-LLM's MHA backend on SM100 whatever their K and V widths
# (gpt_oss.py, llama4.py, gemma4.py): page 64, where get_default_attn_backend would pick FA4
SM100_TRTLLM_MHA = frozenset({
    "GptOssForCausalLM", "Llama4ForConditionalGeneration", "Llama4ForCausalLM",
    "Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4UnifiedForConditionalGeneration",
})
# MLA models DeepSeek's override (deepseek_v2.py) runs on TensorRT-LLM's MLA backend on SM100,
# at page 64: the architectures it is registered for (deepseek_v2.py 37-50, LongCat-Flash's
# among them); any other MLA model gets get_default_attn_backend's flashinfer, at page 1
# (Kimi Linear)
SM100_TRTLLM_MLA = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "Glm5NextForConditionalGeneration", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
    "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM",
})


class DefaultPage(NamedTuple):
    """The page SGLang runs a model with on a GPU when told none (``sglang_default_page``)."""

    page: int
    said: str  # the fact in words, for a note to end with how to match it


# The backends that page by more than a token, the page they take when told none, in words
SM100_BACKEND_PAGES = {"trtllm_mha": (BLACKWELL_PAGE, "TensorRT-LLM's MHA backend"),
                       "trtllm_mla": (BLACKWELL_PAGE, "TensorRT-LLM's MLA backend"),
                       "fa4": (FA4_PAGE, "FA4, as K and V differ in width")}
# The pages those backends take when told one (_mla_backend_page_constraints, overrides.py
# 1155-1187: any other becomes 64; FA4 takes 128 alone, _fa4_page_constraint 1274-1296)
SM100_TAKEN_PAGES = {"trtllm_mha": (16, 32, 64, 128), "trtllm_mla": (32, 64), "fa4": (FA4_PAGE,)}


def sm100_backend(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """The attention backend SGLang 0.5.23 runs ``profile`` with on SM100 when told none
    (a model override first, then get_default_attn_backend), at ``options``' page (its 1 read
    as none told, as SGLang reads both), speculative decoding (``speculative_tokens``: a
    speculative algorithm at topk 1), overlap scheduling, radix cache and its strategy; None
    where SGLang refuses the one it picks (Nemotron-H, and Qwen3-Next drafting, with the
    no_buffer radix cache: ``sm100_refusal``). DeepSeek's sparse attention runs its own
    (deepseek_v2.py 99-104: "dsa", at NSA_PAGE_SIZE whatever is told)."""
    if profile.indexer_bytes_per_slot:
        return "dsa"
    arch = profile.architectures[0] if profile.architectures else None
    if arch in SM100_PAGE_ONE_BACKENDS and (
            arch != "GraniteMoeHybridForCausalLM" or profile.has_state):
        return SM100_PAGE_ONE_BACKENDS[arch]
    drafting, paged = bool(options.speculative_tokens), options.sglang_page_size > 1
    radix_off, told = options.sglang_disable_radix_cache, options.sglang_told_strategy
    # get_default_attn_backend's Blackwell MHA pick (trtllm_mha, or fa4 where K and V differ
    # in width: model_override_base.py 336-351) holds without drafting, or drafting at topk 1
    # on a page of one token (is_no_spec_infer_or_topk_one, utils/common.py 3960-3966); else
    # flashinfer (installed, and no attention sinks on these models), at the page told
    default_mha = not drafting or not paged
    if arch in SM100_TRTLLM_WITH_EXTRA_BUFFER:
        extra = told in ("extra_buffer", "extra_buffer_lazy")  # told (and read) only
        if not (default_mha and (extra or radix_off or drafting)):
            return "triton"
        # page 64 then resolves "auto" to extra_buffer (overrides.py 477-482); a told
        # no_buffer refuses it (mamba_hook.py 157), as does the no_buffer "auto" resolves to
        # for Intern-S2-Mobius, which qwen3_5.py registers but SGLang gives no extra buffer
        # (on _MAMBA_RADIX_CACHE_ARCHS, overrides.py 379, not _MAMBA_EXTRA_BUFFER_ARCHS)
        no_buffer = told == "no_buffer" or (
            told is None and not radix_off and arch in NO_BUFFER_ARCHITECTURES)
        return None if no_buffer else "trtllm_mha"
    if arch in SM100_TRTLLM_WITH_OVERLAP:
        if radix_off:
            return "trtllm_mha"
        # the override's own extra_buffer (drafting, "auto"), else the pass's
        strategy = told or ("extra_buffer" if drafting or options.sglang_overlap_schedule
                            or paged else "no_buffer")
        return None if strategy == "no_buffer" else "trtllm_mha"
    # use_mla_backend: MLA's latent, or an MLA architecture given as bytes with no K / V
    # split (SGLang reads the architecture), not any kernel block a model gives
    if profile.mla or arch in SM100_TRTLLM_MLA:
        return "trtllm_mla" if arch in SM100_TRTLLM_MLA else "flashinfer"
    if arch in SM100_TRTLLM_MHA:
        return "trtllm_mha"
    if not default_mha:
        return "flashinfer"
    k_v = profile.kv_tensor_bytes
    return "fa4" if len(k_v) == 2 and k_v[0] != k_v[1] else "trtllm_mha"


def sm100_page(profile: CacheProfile, backend: str | None, told: int) -> int:
    """The page SGLang 0.5.23 runs ``backend`` (``sm100_backend``'s) at on SM100 where told
    ``told`` (1 as none told): Qwen3-Next's and Qwen3.5's override sets 64 for TensorRT-LLM,
    else 1, whatever is told (model_overrides/qwen3_5.py 45-48); TensorRT-LLM's and FA4's page
    fixes then move a page they do not take to theirs (``SM100_TAKEN_PAGES``); the others keep
    the page told."""
    arch = profile.architectures[0] if profile.architectures else None
    if arch in SM100_TRTLLM_WITH_EXTRA_BUFFER:
        return BLACKWELL_PAGE if backend == "trtllm_mha" else 1
    if backend not in SM100_TAKEN_PAGES or told in SM100_TAKEN_PAGES[backend]:
        return told
    return SM100_BACKEND_PAGES[backend][0]


def sglang_default_page(gpu: str, profile: CacheProfile,
                        options: StrategyOptions | None = None) -> DefaultPage | None:
    """The page size SGLang runs the model with on a Blackwell (``blackwell_named``) at
    ``options``' page (1 read as none told, as SGLang reads both) and overlap scheduling, where
    that is not the page told (``sm100_page``: none told, the page TensorRT-LLM's and FA4's
    backends take; told one, Qwen3-Next's override's, or the page TensorRT-LLM's backends move a
    page they do not take to); None elsewhere: where its backend there pages by one token
    (``sm100_backend``: a model override's triton or flashinfer, an MLA model's flashinfer) or
    is refused (``sm100_refusal``), for DeepSeek's sparse attention, whose 64 on every GPU
    ``run_sglang`` applies itself, and where its mamba radix cache takes no such page
    (``radix_page_refusal``, at the default track interval: a told one SGLang checks after
    picking the page, model_overrides/qwen3_5.py 48). A model of state layers alone takes
    get_default_attn_backend's TensorRT-LLM page too (its attention arch is neither MLA nor
    asymmetric: model_override_base.py 336-351), which its token pool then rounds to."""
    options = options or StrategyOptions()
    if ((gpu_name := blackwell_named(gpu, options)) is None
            or profile.indexer_bytes_per_slot is not None or sglang_blocker(profile)):
        return None
    told = options.sglang_page_size
    if (backend := sm100_backend(profile, options)) is None:  # refused: ``sm100_refusal``
        return None
    page = sm100_page(profile, backend, told)
    # the backend's page whatever the track interval: SGLang's override picks it first, and
    # an interval it does not divide then refuses to start (``radix_page_refusal`` at it)
    if page == told or radix_page_refusal(profile, replace(
            options, sglang_page_size=page, sglang_mamba_track_interval=DEFAULT_TRACK)):
        return None
    if told == 1:
        return DefaultPage(page, f"SGLang 0.5.23 on a {gpu_name} runs pages of {tokens_text(page)} "
                                 f"when not told a page size ({SM100_BACKEND_PAGES[backend][1]})")
    if profile.architectures[0] in SM100_TRTLLM_WITH_EXTRA_BUFFER:
        why = (f"the model's override runs {SM100_BACKEND_PAGES.get(backend, ('', backend))[1]}"
               f" at {tokens_text(page)} a page whatever page size is told, "
               "model_overrides/qwen3_5.py 45-48")
    else:
        taken = SM100_TAKEN_PAGES[backend]
        why = (f"{SM100_BACKEND_PAGES[backend][1]} takes pages of "
               f"{', '.join(map(str, taken[:-1]))}{' or ' if len(taken) > 1 else ''}"
               f"{taken[-1]} tokens alone")
    return DefaultPage(page, f"SGLang 0.5.23 on a {gpu_name} runs pages of {tokens_text(page)} "
                             f"where told a page size of {told} ({why})")


# SGLang 0.5.23's KV dtype and stored bytes for DeepSeek's sparse attention on a Blackwell GPU (SM
# 10.x), told no --kv-cache-dtype: _dsa_kv_cache_dtype_default picks fp8_e4m3 there (overrides.py
# 532-535; bfloat16 below SM 10, and for learnable attention sinks on any GPU:
# ``CacheProfile.learnable_sink``, ``SINK_REFUSAL``), _dsa_split_backend_resolution runs fp8's
# prefill and decode on trtllm (overrides.py 713-719), and calculate_mla_kv_cache_dim gives trtllm
# the raw MLA layout, the latent's kv_lora_rank + qk_rope_head_dim fp8 bytes with no scales
# (kv_cache_configurator.py 3425-3440), which the DSA pool stores beside the indexer's keys and
# sizes itself by. Told bfloat16 (``StrategyOptions.sglang_kv_cache_dtype``), it keeps bfloat16 on
# any GPU: the same latent of 2-byte elements (trtllm decodes it there, flashmla_sparse prefills it:
# overrides.py 722-726), 1,152 + 132 B for DeepSeek-V3.2, a Hopper's bytes
# Below SM 10 the compute capability moves nothing of it: an A100 (SM 8.0) or an L40S / RTX
# 4090 (8.9) takes a Hopper's bfloat16 told none (532-535) and a Hopper's backends (bfloat16 on
# flashmla_sparse / fa3, fp8_e4m3 on flashmla_kv's scaled layout: 713-726), and SGLang's one
# SM 8.x start-up check for DSA (SM 8.9 for TileLang's fp8 cache, overrides.py 579-582) reads a
# told tilelang backend alone, so the pool is a Hopper's (bench/sglang_check.py
# check_sm8x_dsa). Whether FlashMLA's and DeepGEMM's kernels run there is not read at start-up
# (deep_gemm_wrapper/configurer.py 38-40 turns DeepGEMM off below SM 9, while the DSA indexer
# calls deep_gemm.fp8_mqa_logits unless told its torch path: dsa/utils.py 499-504): the notes
# say so (``sm8x_dsa_kernels``), the figures stay the Hopper layout start-up takes
SM100_DSA_KV_DTYPE = "fp8_e4m3"
SM100_DSA_BACKEND = "trtllm"
# The --kv-cache-dtype SGLang 0.5.23 takes and DeepSeek's sparse attention does not: after
# "auto" and "bf16" are resolved, _dsa_kv_cache_dtype_default asserts bfloat16 or fp8_e4m3 on
# every CUDA GPU (overrides.py 541-544); its other fp8 choice is this one (a canonical dtype)
DSA_REFUSED_KV_DTYPE = "float8_e5m2"
# SGLang 0.5.23's words where told another --kv-cache-dtype than auto, bf16 or bfloat16 for
# DeepSeek's sparse attention with learnable attention sinks (``CacheProfile.learnable_sink``):
# _dsa_kv_cache_dtype_default reads ``bool(getattr(hf_config, "learnable_sink", False))`` and
# raises before its dtype assertion (overrides.py 526-531), on any GPU; {} its --kv-cache-dtype
SINK_REFUSAL = ("Learnable DSA attention sinks require a bfloat16 KV cache; got "
                "kv_cache_dtype={}.")
# FlatKV's fp8 KV dtypes as SGLang's --kv-cache-dtype names them (fields/model.py 209-218)
SGLANG_FP8_NAMES = {**ENGINE_DTYPE_NAMES, "float8_e4m3fn": SM100_DSA_KV_DTYPE}
# Why SGLang 0.5.23 keeps no cache in FlatKV's int8 (``dtypes.UNSTORED_KV_DTYPE``), for any
# model: neither its --kv-cache-dtype nor its --dtype (a KV dtype of float16 or float32 stands
# for its auto with that --dtype) names it, and configure_kv_cache_dtype raises for any other
SGLANG_NO_INT8 = ("neither its --kv-cache-dtype (auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, "
                  "bfloat16, nvfp4, fp4_mx_block16: fields/model.py 209-218) nor its --dtype "
                  "(auto, half, float16, bfloat16, float, float32: 173) names it (\"Unsupported "
                  "kv_cache_dtype\": configure_kv_cache_dtype, kv_cache_dtype.py 90)")


# How a reason opens where SGLang would not start (its flags name no such choice, a check at
# start-up), as vLLM's do (``base.refuses_to_start``): Compare labels its row "(won't start)"
SGLANG_REFUSES_TO_START = refuses_to_start("SGLang")


def sglang_wont_start(reason: str) -> str:
    """``reason`` (a setting SGLang would not start at: a flag it has no such choice for, a
    check or assert at start-up) opening with ``SGLANG_REFUSES_TO_START``, which Compare reads
    for its "won't start" label. Called with a reason alone, so that what it returns is one
    (a caller with none keeps its own "" or None). Not for a model SGLang does not serve, nor
    what FlatKV does not model: those keep "n/a"."""
    return f"{SGLANG_REFUSES_TO_START}: {reason}"


def _raw_dsa_bytes(profile: CacheProfile) -> int | None:
    """The bytes a token a layer SGLang's trtllm DSA backends store for ``profile`` (its raw
    fp8 latent and the indexer's keys: ``CacheProfile.dsa_raw_fp8_bytes_per_slot``), where
    SGLang's DeepSeek family runs it (``SM100_TRTLLM_MLA``, whose architectures its DSA
    resolution reads); for bytes given alone (an export: no raw width) in bfloat16, float16 or
    float32, the latent's elements at 1 B each (``_raw_bytes_alone``); None elsewhere (no
    indexer, other bytes given alone, another architecture)."""
    if not profile.architectures or profile.architectures[0] not in SM100_TRTLLM_MLA:
        return None
    if profile.dsa_raw_fp8_bytes_per_slot is not None:
        return profile.dsa_raw_fp8_bytes_per_slot
    return _raw_bytes_alone(profile)


def _raw_bytes_alone(profile: CacheProfile) -> int | None:
    """For DeepSeek's sparse attention given as bytes alone in bfloat16, float16 or float32
    (``AUTO_DSA_KV_DTYPES``), its raw fp8 bytes a token a layer: the dtype names the latent's
    elements, (bytes - indexer keys) / element size, each 1 B raw, beside the keys (an export
    of DeepSeek-V3.2 in float32, 2,304 + 132 B: 576 elements, 576 + 132 = 708; bfloat16's
    1,152 + 132 alike), as fp8's scaled layout does not. None for any other profile, or where
    the latent is no whole number of elements."""
    keys = profile.indexer_bytes_per_slot
    if keys is None or profile.kv_dtype not in AUTO_DSA_KV_DTYPES:
        return None
    latent, element = profile.kv_bytes_per_slot - keys, dtype_bytes(profile.kv_dtype)
    return latent // element + keys if latent % element == 0 else None


def sglang_kv_dtype_refusal(profile: CacheProfile) -> str | None:
    """Why SGLang 0.5.23 would not start ``profile``'s KV cache in its KV dtype, on any GPU
    (None where it would): int8 for any model, which it keeps no cache in
    (``SGLANG_NO_INT8``), then DeepSeek's sparse attention in fp8_e5m2
    (``dsa_dtype_refusal``), opening with ``SGLANG_REFUSES_TO_START``: SGLang serves the model,
    and the fix is the KV dtype. Bytes given with no dtype are taken as given."""
    refusal = (unstored_kv_dtype_refusal(profile.kv_dtype, "0.5.23", SGLANG_NO_INT8)
               or dsa_dtype_refusal(profile))
    return sglang_wont_start(refusal) if refusal else None


def dsa_dtype_refusal(profile: CacheProfile) -> str | None:
    """Why SGLang 0.5.23 would not start DeepSeek's sparse attention (a model of its DeepSeek
    family, ``SM100_TRTLLM_MLA``, with an indexer) in ``profile``'s KV dtype, on any GPU: with
    learnable attention sinks (``CacheProfile.learnable_sink``) any KV dtype but those that
    stand for its auto or bfloat16 (``AUTO_DSA_KV_DTYPES``), which its
    _dsa_kv_cache_dtype_default refuses first (``SINK_REFUSAL``, overrides.py 526-531: fp8_e4m3
    too, and fp8_e5m2 in these words); told fp8_e5m2 (``DSA_REFUSED_KV_DTYPE``), it asserts
    (541-544). It reads the architecture, the indexer and the dtype alone, as SGLang does, not
    the latent's width: bytes given alone (an export, a link's raw model) that carry the dtype
    are refused too. None for any other dtype or profile, bytes given with no dtype too (int8,
    which no model runs in, is ``sglang_kv_dtype_refusal``'s). It names the release alone:
    ``sglang_kv_dtype_refusal`` opens it with ``SGLANG_REFUSES_TO_START``, which names SGLang."""
    arch = profile.architectures[0] if profile.architectures else None
    if arch not in SM100_TRTLLM_MLA or profile.indexer_bytes_per_slot is None:
        return None
    if profile.learnable_sink and profile.kv_dtype not in (None, *AUTO_DSA_KV_DTYPES):
        told = SGLANG_FP8_NAMES.get(profile.kv_dtype, profile.kv_dtype)
        return (f"DeepSeek's sparse attention with learnable attention sinks (the config's "
                f"learnable_sink) in the KV dtype {profile.kv_dtype} (--kv-cache-dtype {told}) "
                f"is refused by 0.5.23: \"{SINK_REFUSAL.format(told)}\" "
                "(_dsa_kv_cache_dtype_default, overrides.py 526-531, on any GPU); set the KV "
                "dtype to bfloat16, which its auto keeps for such a model on every GPU")
    if profile.kv_dtype != DSA_REFUSED_KV_DTYPE:
        return None
    return (f"DeepSeek's sparse attention in the KV dtype {DSA_REFUSED_KV_DTYPE} (--kv-cache-"
            f"dtype {ENGINE_DTYPE_NAMES[DSA_REFUSED_KV_DTYPE]}) is refused by 0.5.23: "
            "\"DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype\" "
            "(_dsa_kv_cache_dtype_default, overrides.py 541-544, on any GPU); set the KV dtype "
            "to float8_e4m3fn (fp8; --kv-cache-dtype fp8_e4m3) or bfloat16")


# The KV dtypes that stand for SGLang's --kv-cache-dtype auto beside DeepSeek's sparse
# attention: bfloat16, and float16 and float32, which SGLang cannot be told (no such
# --kv-cache-dtype choice, fields/model.py 209-218), so a model in either runs its auto too,
# which for DSA picks bfloat16 below SM 10 (overrides.py 532-535) and asserts bfloat16 or
# fp8_e4m3 (541-544): SGLang keeps DSA in bfloat16 or fp8 whatever the model's dtype. Told
# bfloat16 (``bfloat16_told``) it keeps bfloat16 beside any of them
AUTO_DSA_KV_DTYPES = ("bfloat16", "float16", "float32")


def bfloat16_told(profile: CacheProfile, options: StrategyOptions) -> bool:
    """Whether SGLang is told --kv-cache-dtype bfloat16 for ``profile`` (a KV dtype of
    ``AUTO_DSA_KV_DTYPES`` and ``options.sglang_kv_cache_dtype`` bfloat16), not left to its
    auto, which that KV dtype otherwise stands for: on a Blackwell it keeps DeepSeek's sparse
    attention in bfloat16 then, not its raw fp8 layout."""
    return (options.sglang_kv_cache_dtype == "bfloat16"
            and profile.kv_dtype in AUTO_DSA_KV_DTYPES)


def _dsa_bytes_alone(profile: CacheProfile) -> str | None:
    """For DeepSeek's sparse attention given as bytes alone (an indexer's keys, no
    ``dsa_raw_fp8_bytes_per_slot``: an export, a link's raw model, whose latent width is not
    known: in fp8 or no dtype named, or its architecture not given; in bfloat16, float16 or
    float32 the dtype gives it, ``_raw_bytes_alone``), what SGLang stores on a
    Blackwell GPU and that these figures take the bytes given instead, after "SGLang 0.5.23 on
    a ...": a silent Hopper figure there would pass for SGLang's. None for any other profile,
    and with learnable attention sinks, which SGLang keeps in bfloat16 there too."""
    arch = profile.architectures[0] if profile.architectures else None
    if (profile.indexer_bytes_per_slot is None or _raw_dsa_bytes(profile) is not None
            or arch not in (None, *SM100_TRTLLM_MLA) or profile.learnable_sink):
        return None
    return (f"keeps DeepSeek's sparse attention in {SM100_DSA_KV_DTYPE} where no "
            f"--kv-cache-dtype is told, on its {SM100_DSA_BACKEND} DSA backends, which store the "
            "raw latent, kv_lora_rank + qk_rope_head_dim fp8 B with no scales, beside the index "
            "keys (kv_cache_configurator.py 3425-3440): bytes given alone say no latent width, "
            f"so these figures take the {n(profile.kv_bytes_per_slot)} B a token a layer "
            "given; give the model (a preset or its config.json) for that layout's figures")


def blackwell_dsa_bytes(profile: CacheProfile, options: StrategyOptions) -> int | None:
    """The raw fp8 bytes a token a layer SGLang's figures at ``options`` store for ``profile``
    on a Blackwell GPU (``options.blackwell``) in place of its own; None where a
    Blackwell stores it as a Hopper does (another GPU, bfloat16 told: ``bfloat16_told``,
    learnable attention sinks: ``CacheProfile.learnable_sink``, for which its auto picks
    bfloat16 there too, overrides.py 532-535, no DeepSeek sparse attention). What a Blackwell
    changes, which the options that act there alone ask (``engine_options``, ``log_check``);
    ``sglang_dsa_stored`` says all SGLang stores in place of the model's."""
    if (not options.blackwell or bfloat16_told(profile, options)
            or profile.learnable_sink):
        return None
    return _raw_dsa_bytes(profile)


def sglang_dsa_stored(profile: CacheProfile,
                      options: StrategyOptions) -> tuple[str, int] | None:
    """(SGLang's KV dtype, its bytes a token a layer) that SGLang 0.5.23 stores DeepSeek's
    sparse attention of ``profile`` in at ``options`` where not the model's own: the raw fp8
    layout on a Blackwell (``blackwell_dsa_bytes``: fp8_e4m3, 576 + 132 = 708 B for
    DeepSeek-V3.2), else bfloat16 for the KV dtype float32 or float16 (``AUTO_DSA_KV_DTYPES``:
    SGLang keeps DSA in bfloat16 or fp8 whatever the model's dtype; 1,152 + 132 = 1,284 B,
    where float32 holds 2,436). An export of bytes alone in bfloat16, float16 or float32 alike
    on any GPU, its dtype naming the latent's elements (``_raw_bytes_alone``). None where
    SGLang keeps the model's (bfloat16, fp8 off a Blackwell, no indexer, other bytes given
    alone, taken as given: ``_dsa_bytes_alone`` says so on a Blackwell). One place for what
    the sizing takes (``sglang_dsa``) and the pages that set SGLang's figures beside ours say."""
    if (raw := blackwell_dsa_bytes(profile, options)) is not None:
        return SM100_DSA_KV_DTYPE, raw
    if profile.kv_dtype not in AUTO_DSA_KV_DTYPES or profile.kv_dtype == "bfloat16":
        return None
    if (raw := _raw_dsa_bytes(profile)) is not None:
        return "bfloat16", _bfloat16_dsa_bytes(profile, raw)
    return None


def _dsa_terms(profile: CacheProfile, total: int) -> str:
    """``total``, a token's DSA bytes a layer, in its parts, latent and keys: "576 + 132 = 708
    B"."""
    keys = profile.indexer_bytes_per_slot
    return f"{n(total - keys)} + {n(keys)} = {n(total)} B"


def sglang_dsa(profile: CacheProfile, options: StrategyOptions,
               formulas: list[str]) -> CacheProfile:
    """``profile`` as SGLang 0.5.23 stores DeepSeek's sparse attention at ``options``
    (``sglang_dsa_stored``), a formula line saying so: on a Blackwell GPU
    (``options.blackwell``) in fp8_e4m3 on the trtllm DSA backends, a token a layer
    the raw fp8 latent and the indexer's keys (``SM100_DSA_KV_DTYPE``; 576 + 132 = 708 B for
    DeepSeek-V3.2), whatever the model's KV dtype (its bfloat16, float16 or float32 is
    SGLang's auto, which picks fp8_e4m3 there; a told fp8_e4m3 runs the same backends); told
    bfloat16 there (``bfloat16_told``), bfloat16, 1,152 + 132 B as on a Hopper; on any GPU
    bfloat16 for a model in float32 or float16, which SGLang cannot be told (its auto keeps
    bfloat16 below SM 10: 1,284 B, not float32's 576 x 4 + 132 = 2,436), so that its figures
    and start-up log lines are SGLang's. FlatKV's own layouts keep the model's dtype.
    ``profile`` as it is elsewhere: a bfloat16 or fp8 model off a Blackwell, no indexer, raw
    bytes (on a Blackwell taken as stored, a formula line saying so: ``_dsa_bytes_alone``)."""
    raw, stored = _raw_dsa_bytes(profile), sglang_dsa_stored(profile, options)
    if options.blackwell and raw is None:  # stored is None too: it needs raw bytes
        if alone := _dsa_bytes_alone(profile):
            formulas.append(f"on a Blackwell GPU SGLang 0.5.23 {alone}")
        return profile
    own = f"the {n(profile.kv_bytes_per_slot)} of the model's {profile.kv_dtype or 'KV'}"
    if options.blackwell and profile.learnable_sink:
        bf16 = stored[1] if stored else _bfloat16_dsa_bytes(profile, raw)
        formulas.append(
            f"on a Blackwell GPU SGLang 0.5.23 {_sink_layout(profile, bf16)} a token a layer, "
            + (f"in place of {own}, " if stored else "")
            + (f"not the raw fp8 {_dsa_terms(profile, raw)} its auto picks there without them"
               if raw else "as on a Hopper"))
    elif options.blackwell and bfloat16_told(profile, options):
        bf16 = _bfloat16_dsa_bytes(profile, raw)
        formulas.append(
            "on a Blackwell GPU SGLang 0.5.23 told --kv-cache-dtype bfloat16 keeps DeepSeek's "
            "sparse attention in bfloat16, as on a Hopper (_dsa_kv_cache_dtype_default, "
            f"overrides.py 532-544): {_dsa_terms(profile, bf16)} a token a layer, "
            + (f"in place of {own}, " if stored else "")
            + f"not the raw fp8 {_dsa_terms(profile, raw)} its auto picks there")
    elif options.blackwell:
        formulas.append(
            f"on a Blackwell GPU SGLang 0.5.23 keeps DeepSeek's sparse attention in "
            f"{SM100_DSA_KV_DTYPE} where no --kv-cache-dtype is told, on its {SM100_DSA_BACKEND} "
            "DSA backends, which store the latent raw, with no scales, beside the indexer's "
            f"keys: {_dsa_terms(profile, raw)} a token a layer, in place of {own} "
            "(calculate_mla_kv_cache_dim, kv_cache_configurator.py 3425-3440); told "
            f"--kv-cache-dtype bfloat16 it keeps {n(_bfloat16_dsa_bytes(profile, raw))} B, as "
            "on a Hopper")
    elif stored:
        formulas.append(
            "SGLang 0.5.23 keeps DeepSeek's sparse attention in bfloat16 or fp8_e4m3, whatever "
            f"the model's dtype: it takes no {profile.kv_dtype} --kv-cache-dtype, so the "
            f"model's {profile.kv_dtype} runs its auto, which keeps bfloat16 below compute "
            "capability 10 (_dsa_kv_cache_dtype_default, overrides.py 532-544): "
            f"{_dsa_terms(profile, stored[1])} a token a layer in bfloat16, in place of {own}; "
            "FlatKV's own layouts keep the model's dtype")
    if stored is None:
        return profile
    dtype, stored_bytes = stored
    return replace(profile, kv_bytes_per_slot=stored_bytes, kv_dtype=canonical_dtype(dtype),
                   kv_tensor_bytes=(stored_bytes,) if profile.kv_tensor_bytes else ())


def sm100_dsa_layout(gpu: str, profile: CacheProfile,
                     options: StrategyOptions) -> str | None:
    """What SGLang 0.5.23 on a Blackwell (``blackwell_named``) stores for DeepSeek's
    sparse attention (a model of its DeepSeek family with an indexer), which these figures
    take there (``sglang_dsa``): fp8_e4m3 where no --kv-cache-dtype is told, on its trtllm
    DSA backends, the raw latent beside the index keys, 576 + 132 = 708 B a token a layer for
    DeepSeek-V3.2, whose 61 layers then hold 40 GiB // (61 x 708) = 994,481 tokens, 994,432 in
    whole pages of 64, where a Hopper's bfloat16 holds 548,352; told bfloat16
    (``bfloat16_told``), that bfloat16 as on a Hopper; for bytes given alone, that these
    figures take them (``_dsa_bytes_alone``). None elsewhere, and where SGLang refuses the KV
    dtype (``sglang_kv_dtype_refusal``: the refusal says it)."""
    if ((on := blackwell_named(gpu, options)) is None or sglang_blocker(profile)
            or sglang_kv_dtype_refusal(profile)):
        return None
    if (raw := _raw_dsa_bytes(profile)) is None:
        alone = _dsa_bytes_alone(profile)
        return alone and f"SGLang 0.5.23 on a {on} {alone}"
    if profile.learnable_sink:
        bf16 = _bfloat16_dsa_bytes(profile, raw)
        return (f"SGLang 0.5.23 on a {on} {_sink_layout(profile, bf16)} a token a layer, as on a "
                f"Hopper: these figures are that layout's (without them, told none, it keeps "
                f"{SM100_DSA_KV_DTYPE} there, the raw {_dsa_terms(profile, raw)})")
    if bfloat16_told(profile, options):
        bf16 = _bfloat16_dsa_bytes(profile, raw)
        return (f"SGLang 0.5.23 on a {on} told --kv-cache-dtype bfloat16 keeps DeepSeek's sparse "
                f"attention in bfloat16, {_dsa_terms(profile, bf16)} a "
                "token a layer, as on a Hopper: these figures are that layout's (told none, "
                f"it keeps {SM100_DSA_KV_DTYPE} there, the raw {_dsa_terms(profile, raw)})")
    return (f"SGLang 0.5.23 on a {on} keeps DeepSeek's sparse attention in "
            f"{SM100_DSA_KV_DTYPE} where no --kv-cache-dtype is told, on its {SM100_DSA_BACKEND} "
            "DSA backends, which store the raw latent beside the index keys, "
            f"{_dsa_terms(profile, raw)} a token a layer (kv_cache_configurator.py "
            "3425-3440): these figures are that layout's (told bfloat16 it keeps "
            f"{n(_bfloat16_dsa_bytes(profile, raw))} B, as on a Hopper)")


def _sink_layout(profile: CacheProfile, bf16: int) -> str:
    """What SGLang 0.5.23 keeps DeepSeek's sparse attention with learnable attention sinks in,
    told --kv-cache-dtype auto or bfloat16 (any other it refuses: ``dsa_dtype_refusal``), on
    every GPU, after "SGLang 0.5.23 on a ...", up to its bytes a token a layer: bfloat16
    (_dsa_kv_cache_dtype_default picks fp8_e4m3 at compute capability 10 only without them,
    overrides.py 526-535), on flashmla_sparse (_dsa_split_backend_resolution, 644-663), the
    latent of 2-byte elements beside the indexer's keys, ``bf16`` B (1,152 + 132 = 1,284 for
    DeepSeek-V3.2)."""
    return ("keeps DeepSeek's sparse attention with learnable attention sinks (the config's "
            "learnable_sink) in bfloat16 on its flashmla_sparse DSA backends "
            "(_dsa_kv_cache_dtype_default picks fp8_e4m3 at compute capability 10 only "
            "without them, overrides.py 526-535; _dsa_split_backend_resolution 644-663): "
            f"{_dsa_terms(profile, bf16)}")


def _bfloat16_dsa_bytes(profile: CacheProfile, raw: int) -> int:
    """A token's bytes a layer in a bfloat16 DSA cache: the raw latent at 2 B an element beside
    the indexer's keys (1,152 + 132 = 1,284 for DeepSeek-V3.2), what SGLang keeps told
    --kv-cache-dtype bfloat16 on any GPU."""
    keys = profile.indexer_bytes_per_slot
    return (raw - keys) * 2 + keys


def sm100_refusal(gpu: str, profile: CacheProfile, options: StrategyOptions,
                  say: Callable[[str, object], str] | None = None) -> str | None:
    """Why SGLang 0.5.23 on a Blackwell (``blackwell_named``) would not start the model
    at ``options`` where FlatKV's figures do (None where it would, or the GPU is another): the
    backend the model's override picks there, TensorRT-LLM's MHA, beside the no_buffer mamba
    radix cache (told, or "auto" resolved to it: Nemotron-H without overlap scheduling,
    drafting or a page past 1), which its radix-cache pass refuses (validate_mamba_no_buffer,
    mamba_hook.py 156-163, after the override and before the backends' page fixes): first for
    a page past 1, which Qwen3-Next's override always sets beside TensorRT-LLM and Nemotron-H's
    drafting told none (nemotron_h.py 123-135), else for the backend; ``sm100_backend`` None.
    What to tell it so that it starts ends the text: overlap scheduling too where auto picked
    no_buffer for want of it (Nemotron-H; not a told no_buffer, nor a model auto gives
    no_buffer whatever the scheduling), each as ``say(field, value)`` words it (default
    ``plain_fix``; the CLI names its flags). None for a told no_buffer beside overlap
    scheduling at a page of 1: SGLang fails on the scheduling first, as FlatKV's own refusal
    says."""
    say = say or plain_fix
    if ((on := blackwell_named(gpu, options)) is None or profile.indexer_bytes_per_slot is not None
            or sglang_blocker(profile) or sm100_backend(profile, options) is not None):
        return None
    paged = (options.sglang_page_size > 1 or bool(options.speculative_tokens)
             or profile.architectures[0] in SM100_TRTLLM_WITH_EXTRA_BUFFER)
    # a told no_buffer at a page of 1 beside overlap scheduling fails its overlap assertion
    # first (mamba_hook.py 158-160), which the strategy's own refusal already quotes
    if not paged and options.sglang_told_strategy == "no_buffer" and (
            options.sglang_overlap_schedule):
        return None
    said = ("no_buffer only supports page_size=1.\", mamba_hook.py 157): the model's override "
            "runs TensorRT-LLM's MHA backend there, at pages of more than a token" if paged else
            "no_buffer do not support trtllm_mha attention backend.\", mamba_hook.py 161-163): "
            "the model's override runs TensorRT-LLM's MHA backend there")
    # auto picks the extra buffer with overlap scheduling on the models that take it
    fixes = ([("sglang_overlap_schedule", True)] if options.sglang_told_strategy is None
             and profile.architectures[0] in SM100_TRTLLM_WITH_OVERLAP else [])
    fixes += [("sglang_mamba_radix_cache_strategy", "extra_buffer"),
              ("sglang_disable_radix_cache", True)]
    said_fixes = [say(field, value) + (" (where the model takes it)" if value == "extra_buffer"
                                       else "") for field, value in fixes]
    return (f"SGLang 0.5.23 on a {on} would not start this model with these "
            f"options (\"{said}, which its no_buffer mamba radix cache refuses; "
            f"{', '.join(said_fixes[:-1])} or {said_fixes[-1]} starts it; the figures shown "
            "are of these settings, which it would not run")


# The options that start what SGLang refuses on a B200 (``sm100_refusal``'s fixes), each set to
# the value that does, in plain words: a surface that names them its own way (the CLI's flags)
# passes its own ``say``
_PLAIN_FIXES = {("sglang_overlap_schedule", True): "overlap scheduling on",
                ("sglang_mamba_radix_cache_strategy", "extra_buffer"): "the extra_buffer strategy",
                ("sglang_disable_radix_cache", True): "the radix cache off"}


def plain_fix(field: str, value: object) -> str:
    """An option ``field`` set to ``value``, as the app's notes say it (``_PLAIN_FIXES``)."""
    return _PLAIN_FIXES[field, value]


def sglang_gpu_note(gpu: str, profile: CacheProfile, options: StrategyOptions,
                    say: Callable[[str, object], str] | None = None
                    ) -> str | DefaultPage | None:
    """What the GPU notes (Compare's, the CLI's) say of SGLang 0.5.23 on ``gpu`` at
    ``options``: why it would not start (``sm100_refusal``) or the KV dtype and bytes it
    stores DeepSeek's sparse attention in there, which these figures take
    (``sm100_dsa_layout``), as text; else the page it runs in place of the
    one told (``sglang_default_page``, never the page told); None where it runs them as told.
    One place for both surfaces, which word only the fix (an engine option, a flag: ``say``,
    as ``sm100_refusal`` takes it)."""
    return (sm100_refusal(gpu, profile, options, say) or sm100_dsa_layout(gpu, profile, options)
            or sm8x_dsa_kernels(gpu, profile, options)
            or sglang_default_page(gpu, profile, options))


def sm8x_dsa_kernels(gpu: str, profile: CacheProfile, options: StrategyOptions) -> str | None:
    """What these figures cannot promise of DeepSeek's sparse attention (a model of SGLang's
    DeepSeek family with an indexer) on an SM 8.x GPU (an A100, L40S, RTX 4090, or Ampere /
    Ada told): SGLang 0.5.23's start-up takes it there as on a Hopper (its dtype, backends and
    bytes: bench/sglang_check.py check_sm8x_dsa), so the figures are a Hopper's layout; but its
    FlashMLA sparse kernels and the DSA indexer's DeepGEMM logits are Hopper / Blackwell
    kernels, which start-up does not check, so a reader is told the server may fail at its
    first forward pass there. None elsewhere, and where SGLang refuses the model or its KV
    dtype (that refusal says more)."""
    capability = GPU_COMPUTE_CAPABILITIES.get(gpu) or options.gpu_compute_capability
    if (capability is None or capability[0] >= 9 or _raw_dsa_bytes(profile) is None
            or sglang_blocker(profile) or sglang_kv_dtype_refusal(profile)):
        return None
    return (f"SGLang 0.5.23 starts DeepSeek's sparse attention on the {gpu_words(gpu, capability)}"
            " as on a Hopper, and these figures are that layout's; but its FlashMLA sparse "
            "kernels and its DSA indexer's DeepGEMM logits are Hopper / Blackwell kernels "
            "(SGLang turns DeepGEMM off below SM 9, deep_gemm_wrapper/configurer.py 38-40, yet "
            "the indexer calls deep_gemm.fp8_mqa_logits unless SGLANG_FP8_PAGED_MQA_LOGITS_TORCH "
            "is set, dsa/utils.py 499-504), which its start-up does not check, "
            "so it may fail at its first forward pass there (FlatKV has not run it on one)")
