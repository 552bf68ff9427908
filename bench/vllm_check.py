"""Check FlatKV's vLLM figures against vLLM 0.34.0's own KV-cache sizing code, on a CPU.

For each setting of ``settings()``, over every FlatKV preset vLLM 0.34 serves, it builds every
cache layer's spec with vLLM's own classes (``FullAttentionSpec``, ``SlidingWindowSpec``,
``ChunkedLocalAttentionSpec``, ``MLAAttentionSpec`` (DeepSeek-V3.2's indexer keys a layer of
their own, ``DeepseekV32IndexerCache``'s), ``MambaSpec`` with the shapes and dtypes the model
class's ``get_mamba_state_shape_from_config`` / ``get_mamba_state_dtype_from_config`` give:
Mamba1, Mamba2, short-conv, GDN), as the layers' ``get_kv_cache_spec`` build them, each
attention spec then through vLLM's ``customize_attention_spec`` for its backend; runs
``get_global_kv_cache_groups``, ``get_kv_cache_configs`` and ``get_kv_cache_capacity``
(``v1/core/kv_cache_planning.py``, ``v1/core/kv_cache_utils.py``), and prints vLLM's block
size P, block bytes, num_blocks, logged "GPU KV cache size" tokens and "Maximum concurrency"
beside FlatKV's ``vllm`` strategy, one line each, then ``N settings, M mismatches, K
preset(s) skipped``. A preset vLLM 0.34 no longer serves (MiniMax-M1: its registry lists
MiniMaxM1ForCausalLM as previously supported, up to 0.23.0) is skipped with a printed
``skip`` line giving FlatKV's ``last_served_text``, where vLLM's registry
(``_PREVIOUSLY_SUPPORTED_MODELS``) names the same release (``--vllm-dropped`` checks it on
that release); a preset they disagree on is a mismatch. Exit status 1 if any figure
differs (or one side refuses where the other starts), else 0. No GPU is needed: CUDA-only
modules are served as stubs, and vLLM's platform is never asked.

vLLM is taken as launched on one H100 with ``--max-model-len 32768``, TP 1, bf16, no
speculative decoding, ``--max-num-batched-tokens 8192`` (FlatKV's default) and the setting's
``--block-size`` (kept as the user's), ``--mamba-cache-mode``, ``--async-scheduling`` (on in
the block-64 align rows of a model with sliding or chunked layers, 0.34's default, where it
sizes their pages). DeepSeek-V3.2's block-16 rows tell no ``--block-size``: vLLM's phase 1
(``Platform._preferred_block_size_for_backends``) picks it, as FlatKV reads a block size under
a sparse MLA model's kernel block (a told 16 finds no sparse MLA backend on an H100). Attention
backends are stand-ins answering ``get_supported_kernel_block_sizes`` as vLLM's do: FLASH_ATTN
and FLASH_ATTN_MLA (``[MultipleOf(16)]``), FLASH_ATTN_MLA_SPARSE (``[MultipleOf(64)]``, its
``customize_spec`` vLLM's ``align_blocks_to_rows``) for sparse MLA with DEEPSEEK_V32_INDEXER
(``[64]``) for its indexer: what ``platforms/cuda.py``'s priorities pick first on SM 9.0;
FLASHMLA (``[64]``) and TRITON_MLA (``[MultipleOf(16)]``, every GPU's MLA fallback, which runs
fp8) where a row asks. A B200's (SM 10.0) rows: FLASHINFER (``[16, 32, 64]``, or up to 1,024
where its TRT-LLM decode kernels run, ``B200_LARGE_PAGES``: a fact of the GPU's installed
kernels, so both are rows) for attention, FLASHINFER_MLA (``[32, 64]``) for MLA, what
cuda.py's priorities pick first there; FlatKV is told nothing for them, as its kernel block
of 16 is theirs too (FlashInfer MLA's least, 32, moves no P at the blocks it takes).
A hybrid's P is vLLM's own ``Platform._align_hybrid_block_size``
(``platforms/interface.py``), with its lookups into a live model served
(``align_hybrid_block_size``); the KV-cache layout is vLLM's ``resolve_kv_cache_layout``.
Prefill checkpoint blocks (align mode): 1 for MambaMixer2 layers (``mamba_mixer2.py``:
Nemotron-H, Falcon-H1, granite-4.0-h); for GDN (Qwen3-Next, Qwen3.5) only where a row runs its
prefill on FlashInfer (an H100's, or a B200's at key head dim 128; a 64-token checkpoint
grid); none for Mamba1 (Jamba) and
short-conv (LFM2) layers, which declare no checkpoint alignment, nor for Kimi Linear's KDA
(its config's low-rank gate builds KimiGatedDeltaNetAttention, which prefills on Triton
alone). Every model vLLM 0.34 serves builds on a CPU.

Then ``check_checkpoint_blocks``: Kimi Linear's shapes under each KDA class
(``KDA_LAYER_CLASSES``: KimiLinearForCausalLM, KimiK3ForConditionalGeneration,
KimiK31ForConditionalGeneration, Glm5NextForConditionalGeneration, Glm5NextForCausalLM), KDA
head dims 128 and 64, bfloat16 and float16 KV caches and
float32 and bfloat16 recurrent states, on each GPU preset's compute capability: the prefill
checkpoint blocks the class's own KDA layer code keeps in align (its prefill backend resolver
run as on that GPU, then its ``get_kv_cache_spec`` on a bare layer; a bounded gate given, as
FlatKV takes it) and the P alignment it asks, beside FlatKV's ``checkpoint_blocks_kept`` and
its layout's attention block (FlatKV before 2026-12-07 kept none for Kimi-K3's and
Glm5Next's: 12 mismatches on the H100, H200 and B200); and Qwen3-Next's and Qwen3.5's GDN at
key head dims 128 and 256 on each capability, vLLM's own ``_resolve_gdn_prefill_backend`` (a
checkpoint block where it picks FlashInfer, in align) beside the same (2026-12-07: 238
settings, 0 mismatches).

Then the config.json files of ``engine_common.LENGTH_CONFIGS``: vLLM's own
``_get_and_verify_max_len`` (``config/model.py``) on each, as transformers resolves it, beside
FlatKV's max_model_len, and whether vLLM warned that it assumed its 2,048 beside whether FlatKV
says it is assumed; then each state-only one (Mamba, FalconMamba, Mamba2, served here through
their own classes) laid out at that length at both budgets, block 16, mode none: the figures
FlatKV shows with no context typed.

Last, ``check_gpu_mla``: DeepSeek-V3 (dense MLA), DeepSeek-V3.2 (sparse MLA) and Kimi Linear
(an MLA hybrid), told ``--kv-cache-dtype`` auto and fp8 and no --block-size, on each GPU preset's
compute capability (``budget.GPU_COMPUTE_CAPABILITIES``): vLLM's own
``CudaPlatform.get_attn_backend_cls`` as on that GPU (its nvml answers served, each backend's
``supports_combination`` left out, as it asks for the kernels installed), then, where it picks
TRITON_MLA, ``TritonMLAImpl``'s own start-up checks (fp8 below SM 8.9 refused), beside whether
FlatKV's layout starts at that ``gpu_compute_capability``; where both refuse, FlatKV's quote of
vLLM's error must be found in it. Its backends' CUDA-only imports are served as stubs, so it
runs after every other check. Then ``check_gpu_attention``: each served preset with attention
layers and no MLA, told --kv-cache-dtype auto, fp8 and fp8_e5m2, on each GPU preset's compute
capability: vLLM's own selector picks the backend there (an fp8 cache below SM 9 leaves
FLASH_ATTN, whose fp8 needs FA3 on SM 9.x, for FLASHINFER; gpt-oss's sinks take TRITON_ATTN
below SM 9 in any dtype), whose block told none, smallest kernel block and bytes a token a
layer (its ``customize_spec``) are set beside FlatKV's: no backend vLLM picks moves them, and
none refuses. Then ``check_told_blocks``: a preset of each kind (full attention, gpt-oss's
sinks and sliding layers, a GDN hybrid, dense MLA, sparse MLA, an MLA hybrid, a model of state
layers alone) told ``--block-size`` 1, 8, 24, 32, 48 and 64 on an H100 and a B200: vLLM's own
selector for each kind of attention layer, told that block (``user_specified_block_size``), as
the layers ask it when built, before any hybrid alignment; where one raises ("No valid
attention backend found": every CUDA backend pages by 16s or more, sparse MLA's by 32s or 64s)
FlatKV must refuse and quote it, and so where the worker's own ``select_common_block_size``
finds no kernel block for sparse MLA's backend and its indexer's (DEEPSEEK_V32_INDEXER's 64
alone: a B200 told 32 picks FLASHINFER_MLA_SPARSE, of 32s, and fails there); else both lay out
the same figures at that block (vLLM's on the stand-in of the backend picked).

``--random N --seed S`` checks N random settings instead (``random_setting``): the presets'
shapes, tp, dtypes, block, mode, max_model_len and budget perturbed within what vLLM starts
with; a mismatch prints a one-line repro (``--random 1 --seed`` of its own seed).

``bench/engine_checks.sh`` fetches vLLM's wheel, unzips it (nothing of it is installed), makes a
venv for its imports and runs this script as ``python bench/vllm_check.py --vllm DIR``, DIR
the unzipped wheel; CI runs it after the tests.

``--vllm-all DIR`` (instead of ``--vllm``): mamba cache mode all, which 0.34 does not have,
against vLLM 0.31.0's own code, the last release with it, DIR its unzipped wheel
(``check_mode_all``): every preset with state layers at both budgets and blocks 16 and 64 (and
the models of state layers alone, and FlatKV told a prefill checkpoint block 0.31 does not
keep), through 0.31's own MambaModelConfig hook (which keeps mode all or falls back to align
by the class's SupportsMambaPrefixCaching), ``_align_hybrid_block_size``, ``MambaSpec`` and
``get_kv_cache_configs``; the mode each ran in is compared too, and the start-up lines its
code logs on the way (its deprecation warning, its fallback warning, the block size and padding
lines, the KV cache size line) beside FlatKV's, in order. Then DeepSeek-V3 told no
``--block-size`` in bf16 and in fp8 (``check_unasked_mla_blocks``): the block 0.31's own
phase 1 gives the MLA backend an H100 picks first (FLASH_ATTN_MLA: 16; FLASHMLA in fp8, which
FLASH_ATTN_MLA does not take: 64, logged) and a B200 (FLASHINFER_MLA, both dtypes: 32, logged)
beside the one FlatKV says, its note's in fp8 on the H100 and in both on the B200. Its
imports need FastAPI and oss-harmony beside the others (``engine_checks.sh`` installs them).

``--vllm-dropped DIR`` (instead of ``--vllm``): MiniMax-M1 against vLLM 0.23.0's own code, the
last release serving its class (MiniMaxText01ForCausalLM), DIR its unzipped wheel
(``check_dropped``): both budgets, blocks 16 and 64, modes none, align and all (which that
class runs as align: 0.23's own MambaModelConfig hook says so, FlatKV's
``runs_all_as_align`` too), TP 1 and 8, and the lightning state's dtype: 0.23 keeps it in
``--mamba-cache-dtype``'s (auto: the model's) and reads no ``--mamba-ssm-cache-dtype``, so
``--mamba-cache-dtype float32`` is FlatKV's ssm dtype float32 and ``--mamba-ssm-cache-dtype
float32`` changes nothing on either side; and the least budget 0.23 starts at and 1 B under,
as 0.23 weighs one request against the whole budget (0.29 and later hold the null block
back; FlatKV's ``null_block_checked``). Its imports are 0.31's.

``--vllm-older DIR`` (instead of ``--vllm``): FlatKV's older vLLM log figure
(``older_logged_tokens``, with the P it counts) against vLLM 0.19.0's own "GPU KV cache size",
DIR its unzipped wheel (``check_older``): every hybrid preset 0.19 serves at 40 GiB, blocks 16
and 64, modes none, align and all; 1 and 2 drafted tokens on Falcon-H1, granite-4.0-h,
Nemotron-H, Qwen3-Next and Kimi Linear; mode all at block 1024; Nemotron-H told a float32 ssm
state, Kimi Linear a bfloat16 one. 0.19's own config hooks
(``HybridAttentionMambaModelConfig``: P a multiple of 16, 64 for MLA, at least --block-size),
its layers' state shapes, ``get_kv_cache_configs`` (whose
``_report_kv_cache_config`` logs the line, read from its log) and its scheduler's KV cache
coordinator run; a refusal on its side (a drafted state past its page, a block size no multiple
of the state block in mode all) must be FlatKV's ``older_log_none``. Then the attention-only
presets it serves at blocks 16 and 64 (``older_attention_settings``: its block-size pick for
the first layer's backend where none is told, 64 on FlashMLA sparse and FlashMLA, its layers'
specs, sliding, chunked, MLA and DeepSeek-V3.2's indexer keys), and
``vllm_releases.OLDER_UNSERVED_CLASSES`` made again from 0.19.0's registry and 0.34.0's
(``--vllm-current DIR``, by default the ``vllm`` folder beside DIR: ``check_older_unserved``).
Its imports are 0.31's (``diskcache`` served as a stub).

A model of state layers alone (``STATE_ONLY``, Mamba-Codestral-7B's config shape;
Mamba2ForCausalLM, IsAttentionFree) is checked too, drawn one time in ten in random mode:
its state shape from vLLM's Mamba2ForCausalLM, no hybrid block alignment (vLLM finds no
attention backend to align to), its block size MambaModelConfig's.

What is whose: FlatKV's inputs are the preset's model shape (layer pattern, heads, head dims,
state dims, conv kernel, window, chunk, indexer head dim, KV dtype, the config's ssm dtype),
turned here into the config fields vLLM's model classes read (``hf_config``); the budget is
the available KV-cache memory vLLM's profiler hands ``get_kv_cache_configs``; max_model_len,
block size and cache mode are the setting's. vLLM's outputs are everything else: the state
shapes and dtypes (Nemotron-H's float32 ssm default and Qwen3.5's config dtype included,
through the model's own config hooks), P and the state padding, the groups and padding
layers, the bytes a block, the blocks, the concurrency and the logged tokens, and any refusal.
Nothing FlatKV computes enters vLLM's side; the one figure given by hand is DeepSeek-V3.2's
top-k buffer width (``INDEX_TOPK``), which the sparse layers' specs must share and no page
depends on.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import logging
import math
import random
import sys
import types
from pathlib import Path
from types import SimpleNamespace as NS
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_common import (  # noqa: E402  (bench/, this folder)
    FALCON_MAMBA_ONLY,
    LENGTH_CONFIGS,
    STATE_ONLY,
    edge_or_random_budget,
    least_starting_budget,
    model_spec,
    perturb_spec,
    random_context,
    report,
    spec_label,
    stub_modules,
    stub_submodules,
    wheel_from_command_line,
)

from flatkv.budget import (  # noqa: E402
    BLACKWELL_CAPABILITY,
    GPU_COMPUTE_CAPABILITIES,
    capability_text,
)
from flatkv.hf_config import spec_from_hf_config  # noqa: E402
from flatkv.hf_resolve import SERVED_AS as HF_SERVED_AS  # noqa: E402
from flatkv.hf_resolve import types_by_class  # noqa: E402
from flatkv.presets import list_presets, load_preset  # noqa: E402
from flatkv.strategies import (  # noqa: E402
    StrategyOptions,
    run_strategy,
    vllm_releases,  # noqa: E402
)
from flatkv.strategies.vllm import (  # noqa: E402
    FLASHINFER_MLA_BLOCK_SIZES,
    FLASHMLA_BLOCK_SIZE,
    checkpoint_blocks_kept,
    runs_all_as_align,
    unasked_mla_block_text,
)
from flatkv.strategies.vllm_releases import last_served_text  # noqa: E402

GIB = 1 << 30
CONTEXT = 32_768
BATCHED = 8192
MLA_PRESETS = ("DeepSeek-V3", "Kimi-Linear-48B-A3B")
SPARSE_MLA_PRESETS = ("DeepSeek-V3.2",)  # sparse MLA with an indexer: no --block-size told
BUDGETS = (40 * GIB, 12_345_678_901)
MAMBA2_CLASSES = ("NemotronHForCausalLM", "FalconH1ForCausalLM",  # MambaMixer2: 1 checkpoint
                  "GraniteMoeHybridForCausalLM", "Mamba2ForCausalLM")
MLA_CLASSES = ("DeepseekV3ForCausalLM", "KimiLinearForCausalLM", "BailingMoeV3ForCausalLM")
MODEL_CLASSES = {"Qwen3NextForCausalLM": "vllm.model_executor.models.qwen3_next",
                 "NemotronHForCausalLM": "vllm.model_executor.models.nemotron_h",
                 "FalconH1ForCausalLM": "vllm.model_executor.models.falcon_h1",
                 "KimiLinearForCausalLM": "vllm.models.kimi_k3.nvidia.model",
                 "GraniteMoeHybridForCausalLM": "vllm.model_executor.models.granitemoehybrid",
                 "JambaForCausalLM": "vllm.model_executor.models.jamba",
                 "Lfm2ForCausalLM": "vllm.model_executor.models.lfm2",
                 "Qwen3_5ForConditionalGeneration": "vllm.models.qwen3_5.nvidia.model",
                 "BailingMoeV3ForCausalLM": "vllm.model_executor.models.bailing_moe_v3",
                 "MambaForCausalLM": "vllm.model_executor.models.mamba",
                 "Mamba2ForCausalLM": "vllm.model_executor.models.mamba2"}
# architectures vLLM's registry serves with another's class (registry.py:109)
SERVED_AS = {"FalconMambaForCausalLM": "MambaForCausalLM"}
# The Nemotron VL, Omni and transcribe classes, whose get_mamba_state_dtype_from_config asks
# NemotronHForCausalLM's with their text config (nano_nemotron_vl.py 1775-1778,
# nemotron3_5_transcribe.py 623-627): served by it here, their own config hook run on the
# text config (vllm_config), to check the ssm dtype that hook gives
NEMOTRON_TEXT_CONFIG_CLASSES = ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3",
                                "NemotronH_Super_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3",
                                "Nemotron3_5TranscribeForConditionalGeneration")
SERVED_AS.update({arch: "NemotronHForCausalLM" for arch in NEMOTRON_TEXT_CONFIG_CLASSES})
# vLLM's warning where it assumes the length (config/model.py:2634)
ASSUMED_WARNING = "does not contain any of the keys to determine the original maximum length"
# DeepSeek-V3.2's sparse MLA top-k (its config's index_topk): the width of the top-k buffer
# every sparse MLA layer's spec names (MLAAttention.topk_buffer_width); no page depends on it
INDEX_TOPK = 2048
# FlashInfer's kernel blocks on a B200 where its TRT-LLM decode kernels run (flashinfer.py's
# use_large_pages: GQA and can_use_trtllm_attention, a fact of the GPU's installed kernels);
# [16, 32, 64] where they do not. Either way its least is 16.
B200_LARGE_PAGES = [16, 32, 64, 128, 256, 512, 1024]


def served_presets(vl: NS) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """``(served, skipped, disputed)``: the FlatKV presets vLLM 0.34 serves, ``(preset, why)``
    for each it no longer does, and those where FlatKV and vLLM disagree on it. FlatKV's word
    is its ``last_served_text``; vLLM's, its registry's ``_PREVIOUSLY_SUPPORTED_MODELS`` (the
    last release serving each dropped architecture), which must name the same release."""
    dropped = vl.model_registry._PREVIOUSLY_SUPPORTED_MODELS
    served, skipped, disputed = [], [], []
    for name in list_presets():
        spec = load_preset(name)
        why = last_served_text(spec.profile())
        last = next((f"{a} up to {dropped[a]}" for a in spec.architectures if a in dropped), "")
        if not why and not last:
            served.append(name)
        elif why and last and last in why:
            skipped.append((name, why))
        else:
            disputed.append(f"{name}: vLLM's registry: {last or 'served'}; FlatKV: "
                            f"{why or 'served'}")
    return served, skipped, disputed


def settings(presets: list[str]) -> list[tuple[str, int, int, str, dict]]:
    """(preset, budget, block size, mamba cache mode, flags) rows: every preset of ``presets``
    at both budgets with FlatKV's default (block 16, mode none: SPEC's anchor) and vLLM 0.34's
    (block 64, align), on an H100's backend (DeepSeek-V3.2's block 16 as no ``--block-size``
    told: FlatKV reads a block under its sparse kernel block as vLLM's own pick); then the MLA
    presets on FLASHMLA (FlatKV told --kernel-block-size 64), DeepSeek-V3 at blocks 32 and 48
    on FLASH_ATTN_MLA, at 16 in fp8 on TRITON_MLA (FLASH_ATTN_MLA takes no fp8) and at no
    block told (phase 1's pick, 0.34's 64; in fp8 on FLASHMLA too), Nemotron-H with
    ``--mamba-ssm-cache-dtype bfloat16`` (FlatKV's preset's), Qwen3-Next and Qwen3.5 with
    their GDN prefill on FlashInfer (a checkpoint block), Llama where one 32,768-token
    request and the null block just do not fit (4 GiB) and just do (a block more), Kimi
    Linear's KDA with each ``--mamba-ssm-cache-dtype`` (float16 refused by vLLM's
    ``kda_state_dtype``; bfloat16 and float32 start), a float16 ssm state beside it for
    each other state kind (GDN, Mamba2, Mamba1), which vLLM takes, and Kimi's shapes served
    as BailingMoeV3ForCausalLM (``architecture``), whose KDA keeps a float32 state whatever
    the flag says (float16 and bfloat16 told); and a model of state layers alone
    (``STATE_ONLY``), in both modes, each ssm dtype, a short max_model_len and blocks 32 and
    256 in align."""
    modes = ((16, "none"), (64, "align"))
    rows = [(p, b, block, mode, {"block_told": False} if p in SPARSE_MLA_PRESETS
             and block < 64 else {})
            for p in presets for b in BUDGETS for block, mode in modes]
    rows += [(p, b, 64, "align", {"backend": "FLASHMLA"}) for p in MLA_PRESETS for b in BUDGETS]
    # dense MLA at a told block under FlashMLA's 64, which FLASH_ATTN_MLA runs as it is (fp8
    # on TRITON_MLA, as FLASH_ATTN_MLA takes no fp8), and at no block told (0.34's 64)
    rows += [("DeepSeek-V3", BUDGETS[1], block, "none", {}) for block in (32, 48)]
    rows += [("DeepSeek-V3", b, 16, "none", {"backend": "TRITON_MLA", "cache_dtype": "fp8"})
             for b in BUDGETS]
    rows += [("DeepSeek-V3", BUDGETS[1], 64, "none", {"block_told": False})]
    # ... and in fp8 at no block told, on FLASHMLA (FLASH_ATTN_MLA takes no fp8): 0.34's 64,
    # which FlashMLA takes, FlatKV told 64 (its note at 16 says so: unasked_mla_block_text)
    rows += [("DeepSeek-V3", b, 64, "none", {"backend": "FLASHMLA", "cache_dtype": "fp8",
                                             "block_told": False}) for b in BUDGETS]
    # a B200 (SM 10.0), where cuda.py puts FLASHINFER first for attention and FLASHINFER_MLA
    # for MLA: every preset not MLA on FlashInfer with and without its TRT-LLM pages; the MLA
    # ones at blocks FlashInfer MLA takes (a block of 16 there runs on TRITON_MLA, as above)
    mla = MLA_PRESETS + SPARSE_MLA_PRESETS
    rows += [(p, BUDGETS[0], block, mode, {"backend": backend}) for p in presets
             if p not in mla for block, mode in modes
             for backend in ("FLASHINFER", "FLASHINFER_TRTLLM")]
    # (GDN's key head dim 128 runs its prefill on FlashInfer there too: a checkpoint block)
    rows += [(p, BUDGETS[0], block, "align", {"backend": "FLASHINFER", "flashinfer_gdn": True})
             for p in ("Qwen3-Next-80B-A3B", "Qwen3.5-27B") for block in (16, 64)]
    rows += [(p, BUDGETS[1], 64, "align", {"backend": "FLASHINFER_MLA"}) for p in MLA_PRESETS]
    rows += [("DeepSeek-V3", BUDGETS[1], 32, "none", {"backend": "FLASHINFER_MLA"}),
             ("DeepSeek-V3", BUDGETS[1], 64, "none", {"backend": "FLASHINFER_MLA",
                                                      "block_told": False})]
    # ... and in fp8 at no block told: 0.34's 64, which FLASHINFER_MLA takes, FlatKV told 64
    # (its Blackwell note at 16 says so, bf16 and fp8: unasked_mla_block_text)
    rows += [("DeepSeek-V3", b, 64, "none", {"backend": "FLASHINFER_MLA", "cache_dtype": "fp8",
                                             "block_told": False}) for b in BUDGETS]
    rows += [("Nemotron-H-8B", b, block, mode, {"mamba_ssm_cache_dtype": "bfloat16"})
             for b in BUDGETS for block, mode in modes]
    # a config.json's own mamba_ssm_cache_dtype (FlatKV's config_mamba_ssm_cache_dtype), which
    # the hook reads with none told, and a told one over it; the VL, Omni and transcribe
    # classes' hooks, by default and reading their text config's, in mode none (their prefill
    # checkpoint blocks, which mode align keeps where their class does, are not the point:
    # NemotronHForCausalLM serves them here)
    rows += [("Nemotron-H-8B", b, block, mode, {"config_ssm_cache_dtype": dtype})
             for b in BUDGETS for block, mode in modes for dtype in ("bfloat16", "float16")]
    rows += [("Nemotron-H-8B", BUDGETS[0], 64, "align",
              {"config_ssm_cache_dtype": "float16", "mamba_ssm_cache_dtype": "bfloat16"})]
    rows += [("Nemotron-H-8B", BUDGETS[0], block, mode, {"architecture": arch, **flags})
             for arch in NEMOTRON_TEXT_CONFIG_CLASSES for block, mode in ((16, "none"),
                                                                         (64, "none"))
             for flags in ({}, {"config_ssm_cache_dtype": "bfloat16"})]
    # SGLang's mamba_ssm_dtype alone, which the hook does not read: its float32 default
    rows += [("Nemotron-H-8B", BUDGETS[0], 16, "none", {"config_ssm_dtype": "bfloat16"})]
    rows += [(p, b, block, "align", {"flashinfer_gdn": True})
             for p in ("Qwen3-Next-80B-A3B", "Qwen3.5-27B") for b in BUDGETS
             for block in (16, 64)]
    rows += [("Kimi-Linear-48B-A3B", BUDGETS[0], block, mode, {"mamba_ssm_cache_dtype": dtype})
             for dtype in ("float16", "bfloat16", "float32") for block, mode in modes]
    # the model's own ssm dtype made 2-byte (by hand), none told: vLLM's kda_state_dtype auto
    rows += [("Kimi-Linear-48B-A3B", BUDGETS[0], block, mode, {"ssm_dtype": dtype})
             for dtype in ("float16", "bfloat16") for block, mode in modes]
    rows += [(p, BUDGETS[0], 64, "align", {"mamba_ssm_cache_dtype": "float16"})
             for p in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Jamba-1.5-Mini")]
    rows += [("Kimi-Linear-48B-A3B", BUDGETS[0], block, mode,
              {"architecture": "BailingMoeV3ForCausalLM", "mamba_ssm_cache_dtype": dtype})
             for dtype in ("float16", "bfloat16") for block, mode in modes]
    # attention-free (engine_common.STATE_ONLY, Mamba2ForCausalLM): its block the mamba block
    # size, no hybrid alignment; with each ssm dtype, a short max_model_len and more blocks
    rows += [(STATE_ONLY, b, block, mode, flags) for b in BUDGETS for block, mode in modes
             for flags in ({}, {"mamba_ssm_cache_dtype": "float32"},
                           {"mamba_ssm_cache_dtype": "float16"}, {"context": 1000})]
    rows += [(STATE_ONLY, BUDGETS[0], block, "align", {}) for block in (32, 256)]
    return rows + [("Llama-3.1-8B", 4 * GIB + extra, 16, "none", {}) for extra in (0, 1 << 21)]


def import_vllm(directory: str) -> NS:
    """vLLM's sizing modules from the unzipped wheel, CUDA-only imports stubbed."""
    stub_modules("torchvision", "tvm_ffi", "xgrammar")  # CUDA-built, never called
    sys.path.insert(0, str(Path(directory).resolve()))
    names = {"plan": "vllm.v1.core.kv_cache_planning", "utils": "vllm.v1.core.kv_cache_utils",
             "iface": "vllm.v1.kv_cache_interface", "backend": "vllm.v1.attention.backend",
             "attn": "vllm.model_executor.layers.attention.attention",
             "mamba": "vllm.model_executor.layers.mamba.mamba_utils",
             "configs": "vllm.model_executor.models.config",
             "enums": "vllm.v1.attention.backends.registry",
             "butils": "vllm.v1.attention.backends.utils", "cache": "vllm.config.cache",
             "torch_utils": "vllm.utils.torch_utils",
             "platform": "vllm.platforms.interface",
             "abstract": "vllm.model_executor.layers.mamba.abstract",
             "registry": "vllm.model_executor.models", "worker": "vllm.v1.worker.utils",
             "sparse": "vllm.v1.attention.backends.mla.sparse_utils",
             "model_registry": "vllm.model_executor.models.registry",
             "model_config": "vllm.config.model",
             "arch_config": "vllm.transformers_utils.model_arch_config_convertor"}
    vl = NS(**{key: importlib.import_module(name) for key, name in names.items()})
    vl.models = {arch: getattr(importlib.import_module(m), arch)
                 for arch, m in MODEL_CLASSES.items()}
    vl.models.update({arch: vl.models[served] for arch, served in SERVED_AS.items()})
    return vl


def stand_in_backend(vl: NS, name: str):
    """vLLM's AttentionBackend as ``name`` answers on an H100 with a bf16 KV cache: its kernel
    block sizes (flash_attn.py, mla/flashattn_mla.py, mla/flashmla.py,
    mla/flashattn_mla_sparse.py, mla/indexer.py's DeepseekV32IndexerBackend), vLLM's own
    ``supports_block_size`` (mla/triton_mla.py's TRITON_MLA too), its ``customize_spec``
    (FLASH_ATTN_MLA_SPARSE's vLLM's own
    ``align_blocks_to_rows``; the others keep the spec), any KV-cache layout."""
    sizes = {"FLASH_ATTN": [vl.backend.MultipleOf(16)], "FLASH_ATTN_MLA":
             [vl.backend.MultipleOf(16)], "FLASHMLA": [64],
             "TRITON_MLA": [vl.backend.MultipleOf(16)],
             "FLASHINFER": [16, 32, 64], "FLASHINFER_TRTLLM": B200_LARGE_PAGES,
             "FLASHINFER_MLA": [32, 64],
             "FLASH_ATTN_MLA_SPARSE": [vl.backend.MultipleOf(64)],
             "FLASHINFER_MLA_SPARSE": [vl.backend.MultipleOf(32)],
             "DEEPSEEK_V32_INDEXER": [64]}[name]
    shown = name.removesuffix("_TRTLLM")  # FlashInfer with its TRT-LLM pages is FlashInfer
    members = {"get_supported_kernel_block_sizes": staticmethod(lambda spec=None: list(sizes)),
               "get_name": staticmethod(lambda: shown)}
    if name == "FLASH_ATTN_MLA_SPARSE":
        members["customize_spec"] = classmethod(
            lambda cls, spec: vl.sparse.align_blocks_to_rows(spec))
    if name == "FLASHINFER_MLA_SPARSE":  # its rows as pages of its kernel block
        members["customize_spec"] = classmethod(
            lambda cls, spec: vl.sparse.align_blocks_to_rows(spec, 32))
    return type(name, (vl.backend.AttentionBackend,), members)


def hf_config(spec) -> NS:
    """The config.json fields vLLM's model classes read for the state shapes, from the preset's
    model shape only. Jamba's and Granite's classes read the state's inner width as
    ``mamba_expand * hidden_size``: the preset keeps the width, given here as hidden_size with
    an expand of 1 (the same product)."""
    kinds = {type(k).__name__: k for k in spec.kinds.values()}
    hf = NS(architectures=list(spec.architectures), num_hidden_layers=spec.model_layers)
    if "Mamba2Layer" in kinds:
        m = kinds["Mamba2Layer"]
        hf.__dict__.update(  # Nemotron-H's names, then Falcon-H1's (Granite's too)
            mamba_num_heads=m.n_heads, mamba_head_dim=m.head_dim, n_groups=m.n_groups,
            ssm_state_size=m.d_state, conv_kernel=m.conv_kernel, mamba_d_ssm=m.n_heads
            * m.head_dim, mamba_n_heads=m.n_heads, mamba_d_head=m.head_dim,
            mamba_n_groups=m.n_groups, mamba_d_state=m.d_state, mamba_d_conv=m.conv_kernel,
            mamba_expand=1, hidden_size=m.n_heads * m.head_dim)
    if "Mamba2Layer" in kinds and "Mamba2ForCausalLM" in spec.architectures:  # its own names
        m = kinds["Mamba2Layer"]
        hf.__dict__.update(expand=1, num_heads=m.n_heads, head_dim=m.head_dim,
                           state_size=m.d_state)
    if "Mamba1Layer" in kinds:  # Jamba's names, then Mamba's (FalconMamba's too)
        m = kinds["Mamba1Layer"]
        hf.__dict__.update(mamba_expand=1, hidden_size=m.d_inner, mamba_d_state=m.d_state,
                           mamba_d_conv=m.conv_kernel, intermediate_size=m.d_inner,
                           state_size=m.d_state, conv_kernel=m.conv_kernel)
    if "ShortConvLayer" in kinds:
        c = kinds["ShortConvLayer"]
        hf.__dict__.update(conv_dim=c.channels, conv_L_cache=c.conv_kernel)
    if "GDNLayer" in kinds:
        g = kinds["GDNLayer"]
        hf.__dict__.update(
            linear_num_key_heads=g.k_heads, linear_num_value_heads=g.v_heads,
            linear_key_head_dim=g.head_dim_k, linear_value_head_dim=g.head_dim_v,
            linear_conv_kernel_dim=g.conv_kernel,
            linear_attn_config={"num_heads": g.v_heads, "head_dim": g.head_dim_v,
                                "short_conv_kernel_size": g.conv_kernel})
        if "BailingMoeV3ForCausalLM" in spec.architectures:  # its KDA's own names
            hf.__dict__.update(num_attention_heads=g.v_heads, head_dim=g.head_dim_v,
                               short_conv_kernel_size=g.conv_kernel)
    if spec.config_mamba_ssm_dtype is not None:  # SGLang's field (Qwen3.5's hook reads it)
        hf.mamba_ssm_dtype = spec.config_mamba_ssm_dtype
    if spec.config_mamba_ssm_cache_dtype is not None:  # a config.json's own, Nemotron-H's
        hf.mamba_ssm_cache_dtype = spec.config_mamba_ssm_cache_dtype
    hf.text_config = hf  # (the VL classes' hooks read their text config's fields)
    return hf


def vllm_config(vl: NS, spec, block: int, mode: str, async_sched: bool, flags: dict) -> NS:
    """The VllmConfig fields the sizing reads, as ``vllm serve`` fills them for one GPU; the
    model's VerifyAndUpdateConfig hooks (Nemotron-H's ssm dtype, the hybrid's mamba block size)
    run on it as at start-up."""
    dtype, hf = getattr(vl.iface.torch, spec.kv_dtype), hf_config(spec)
    context = flags.get("context", CONTEXT)
    cache = NS(block_size=block, mamba_cache_mode=mode, enable_prefix_caching=mode != "none",
               mamba_block_size=None, mamba_page_size_padded=None,
               cache_dtype=flags.get("cache_dtype", "auto"),
               mamba_cache_dtype="auto", use_replayssm=False,
               mamba_ssm_cache_dtype=flags.get("mamba_ssm_cache_dtype", "auto"),
               num_gpu_blocks_override=None, kv_cache_dtype_skip_layers=None,
               prefix_cache_retention_interval=None, prefix_match_unit=None,
               kv_cache_layout=None, enable_extensible_kv_cache=False)
    cache.get_resolved_kv_cache_layout = types.MethodType(
        vl.cache.CacheConfig.get_resolved_kv_cache_layout, cache)
    model = NS(max_model_len=context, original_max_model_len=context, dtype=dtype,
               hf_config=hf, hf_text_config=hf, architecture=spec.architectures[0],
               architectures=list(spec.architectures), supports_kv_cache_grouping=False,
               use_mla=any(type(k).__name__ == "MLALayer" for k in spec.kinds.values()))
    vc = NS(cache_config=cache, model_config=model, speculative_config=None,
            parallel_config=NS(tensor_parallel_size=spec.tp, pipeline_parallel_size=1,
                               decode_context_parallel_size=1),
            scheduler_config=NS(max_num_batched_tokens=flags.get("batched", BATCHED),
                                async_scheduling=async_sched,
                                enable_chunked_prefill=True,
                                disable_hybrid_kv_cache_manager=False),
            attention_config=NS(hisparse_config=None), kv_transfer_config=None,
            num_prefill_lookahead_tokens=0, num_speculative_tokens=0,
            use_flashinfer_replayssm=False, max_concurrent_batches=1 + async_sched)
    vc.max_in_flight_tokens = (vc.max_concurrent_batches
                               * vc.scheduler_config.max_num_batched_tokens)
    # the Nemotron classes' own hook (MODELS_CONFIG_MAP's), each of which sets the ssm dtype
    hook = vl.configs.MODELS_CONFIG_MAP.get(spec.architectures[0])
    if hook is not None and hook.__name__.startswith(("NemotronH", "Nemotron3_5")):
        hook.verify_and_update_config(vc)
    if spec.architectures[0] == "Qwen3_5ForConditionalGeneration":
        vl.configs.Qwen3_5ForConditionalGenerationConfig.verify_and_update_config(vc)
    if spec.architectures[0] in vl.models:  # MambaModelConfig's hook, cache part
        cache.mamba_block_size = block if cache.enable_prefix_caching else context
    return vc


def align_hybrid_block_size(vl: NS, spec, vc: NS, backend, checkpoint: int | None) -> None:
    """vLLM's own ``Platform._align_hybrid_block_size`` (platforms/interface.py:950): raise the
    block size until the attention page covers the model's state page, and pad the state page
    to the attention page. Only its lookups into a live model are served here: the model class
    (``ModelRegistry.resolve_model_cls``), the attention backends of the built layers
    (``_find_non_ssm_backends``: the one backend), the state layers' prefill checkpoint
    alignment (``get_mamba_prefill_checkpoint_alignment``: ``checkpoint``, None where one has
    none), and ModelConfig's KV heads and head size (the preset's full attention or MLA
    layer's)."""
    model = vc.model_config
    kinds = [type(k).__name__ for k in spec.layers]
    shapes = {("mla" if n == "MLALayer" else "full"): (
        k.kv_lora_rank + k.qk_rope_head_dim if n == "MLALayer" else k)
        for k, n in zip(spec.layers, kinds) if n in ("MLALayer", "AttentionLayer")
        and getattr(k, "sliding_window", None) is None}
    shape = shapes["mla"] if model.use_mla else shapes["full"]
    model.get_num_kv_heads = lambda parallel: 1 if model.use_mla else max(
        1, shape.kv_heads // parallel.tensor_parallel_size)  # ModelConfig.get_num_kv_heads
    model.get_head_size = lambda: shape if model.use_mla else shape.head_dim_k
    with contextlib.ExitStack() as served:
        for owner, name, value in (
                (vl.registry.ModelRegistry, "resolve_model_cls",
                 lambda arch, model_config=None: (vl.models[arch], arch)),
                (vl.platform.Platform, "_find_non_ssm_backends",
                 classmethod(lambda cls, config: [backend])),
                (vl.abstract, "get_mamba_prefill_checkpoint_alignment", lambda config: checkpoint)):
            served.enter_context(mock.patch.object(owner, name, value))
        vl.platform.Platform._align_hybrid_block_size(vc, backend)


def layer_specs(vl: NS, spec, vc: NS, flags: dict) -> dict:
    """Every cache layer's KVCacheSpec as its layer's ``get_kv_cache_spec`` builds it
    (``attention.py``, ``chunked_local_attention.py``, ``mla_attention.py``, ``deepseek_v2.py``'s
    ``DeepseekV32IndexerCache``, ``mamba/abstract.py``, ``mamba_mixer2.py``,
    ``qwen_gdn_linear_attn.py``: ``RankLayers``), after the backends and block size are settled
    (``settle_backends``) and, for a hybrid, the block-size alignment
    (``align_hybrid_block_size``), as the worker's ``get_kv_cache_spec`` does."""
    backends = settle_backends(vl, spec, vc, flags)
    kinds = {type(k).__name__ for k in spec.layers}
    checkpoint = prefill_checkpoint_alignment(kinds, vc, flags)
    attention = {"MLALayer", "AttentionLayer"}
    if kinds - attention and kinds & attention:  # model_config.is_hybrid
        align_hybrid_block_size(vl, spec, vc, backends[0], checkpoint)
    # an attention-free model (IsAttentionFree, not is_hybrid): update_block_size_for_backend
    # finds no attention backend (_find_non_ssm_backends) and returns before any alignment, so
    # its state page stays unpadded and its block is the mamba block size
    # (MambaModelConfig: --block-size with prefix caching, else max_model_len)
    rank = RankLayers.of(vl, vc, backends, checkpoint)
    out = {}
    for i, k in enumerate(spec.layers):
        out.update(rank.specs(f"model.layers.{i}.{type(k).__name__}", k))
    return out


def settle_backends(vl: NS, spec, vc: NS, flags: dict) -> list:
    """The attention backends the layers run on, the indexer's after the model's where there
    is one, and the block size they take (``cache.block_size``); the model's is recorded as
    ``vc.backend``, whose KV-cache layouts vLLM's layout resolution asks. The backend: the one a
    row asks for, else the one cuda.py's ``_get_backend_priorities`` puts first on SM 9.0
    (FLASH_ATTN; FLASH_ATTN_MLA for MLA; FLASH_ATTN_MLA_SPARSE for sparse MLA, whose indexer
    caches run on DEEPSEEK_V32_INDEXER). The block size is the user's ``--block-size``, so
    phase 1 of ``update_block_size_for_backend`` keeps it and a backend that cannot run it is
    refused (ValueError); a row without one told takes vLLM's phase 1,
    ``_preferred_block_size_for_backends``."""
    model, cache = vc.model_config, vc.cache_config
    sparse = any(type(k).__name__ == "MLALayer" and k.index_head_dim for k in spec.layers)
    backend = stand_in_backend(vl, flags.get("backend") or (
        "FLASH_ATTN_MLA_SPARSE" if sparse else "FLASH_ATTN_MLA" if model.use_mla
        else "FLASH_ATTN"))
    backends = [backend] + [stand_in_backend(vl, "DEEPSEEK_V32_INDEXER")] * sparse
    if not flags.get("block_told", True):  # vLLM's own pick, phase 1
        cache.block_size = vl.platform.Platform._preferred_block_size_for_backends(
            backends, vl.cache.CacheConfig.DEFAULT_BLOCK_SIZE, vc)
    attention = any(type(k).__name__ in ("MLALayer", "AttentionLayer") for k in spec.layers)
    for b in backends * attention:  # (a model of state layers alone builds no attention layer)
        if not b.supports_block_size(cache.block_size):
            raise ValueError(f"{b.get_name()} does not take block size {cache.block_size}")
    vc.backend = backend
    return backends


def prefill_checkpoint_alignment(kinds: set[str], vc: NS, flags: dict) -> int | None:
    """The state layers' prefill checkpoint alignment, which the hybrid alignment and their
    MambaSpec read: MambaMixer2 1 (mamba_mixer2.py), GDN 64 on FlashInfer prefill in align mode
    (qwen_gdn_linear_attn.py, gdn_attn.py), else none (Mamba1's mamba_mixer.py and ShortConv's
    short_conv.py declare none)."""
    return (1 if "Mamba2Layer" in kinds else 64 if "flashinfer_gdn" in flags
            and vc.cache_config.mamba_cache_mode == "align" else None)


@dataclasses.dataclass(frozen=True)
class RankLayers:
    """What every cache layer's KVCacheSpec on one TP rank is built from, once the block size
    is settled: the backends (the model's, then the indexer's where its MLA is sparse), the
    state layers' prefill checkpoint alignment and its grid (the lcm of it and the mamba block
    size the alignment left), the TP (an attention layer's KV heads are split
    over it) and the KV cache's dtype (Attention: --kv-cache-dtype, "auto" the model's) and
    quantization mode. ``specs`` builds one layer's."""

    vl: NS
    vc: NS
    backends: tuple
    checkpoint: int | None
    checkpoint_grid: int | None
    tp: int
    kv_dtype: object
    quant: dict

    @classmethod
    def of(cls, vl: NS, vc: NS, backends: list, checkpoint: int | None) -> RankLayers:
        """The rank's layers of the config ``vc`` on ``backends``."""
        cache = vc.cache_config
        grid = checkpoint and math.lcm(cache.mamba_block_size, checkpoint)
        return cls(vl, vc, tuple(backends), checkpoint, grid,
                   vc.parallel_config.tensor_parallel_size,
                   vl.torch_utils.get_kv_cache_torch_dtype(cache.cache_dtype,
                                                           vc.model_config.dtype),
                   {"kv_quant_mode": vl.iface.get_kv_quant_mode(cache.cache_dtype)})

    def specs(self, name: str, k) -> dict:
        """The specs of layer ``k`` by name: one, or an MLA layer's and its indexer's keys.
        Each attention spec goes through vLLM's ``customize_attention_spec``
        (``v1/worker/utils.py``) for its backend, as the worker does."""
        kind = type(k).__name__
        if kind == "MLALayer":
            return self.mla(name, k)
        if kind == "AttentionLayer":
            built = (self.sliding(k) if k.sliding_window else self.chunked(k)
                     if k.attention_chunk_size else self.full(k))
            return {name: self.vl.worker.customize_attention_spec(self.backends[0], built)}
        return {name: self.state(k)}

    def kv_heads(self, k) -> int:
        """An attention layer's KV heads on one rank (ModelConfig.get_num_kv_heads: replicated
        where the TP is more)."""
        return max(1, k.kv_heads // self.tp)

    def mla(self, name: str, k) -> dict:
        """An MLA layer's latent cache, and where it has an indexer (DeepSeek-V3.2) its
        DeepseekV32Indexer's k_cache: fp8 keys, a float32 scale a 128 of them
        (quant_block_size), as uint8."""
        iface, block = self.vl.iface, self.vc.cache_config.block_size
        customize = self.vl.worker.customize_attention_spec
        out = {name: customize(self.backends[0], iface.MLAAttentionSpec(
            block_size=block, num_kv_heads=1, max_tp_shards=1,
            head_size=k.kv_lora_rank + k.qk_rope_head_dim, dtype=self.kv_dtype,
            cache_dtype_str=self.vc.cache_config.cache_dtype, **self.quant,
            topk_buffer_width=INDEX_TOPK if len(self.backends) > 1 else None,
            is_index_group_leader=bool(k.index_head_dim)))}
        if k.index_head_dim:
            out[f"{name}.indexer.k_cache"] = customize(self.backends[1], iface.MLAAttentionSpec(
                block_size=block, num_kv_heads=1, max_tp_shards=1,
                head_size=k.index_head_dim + k.index_head_dim // 128 * 4,
                dtype=iface.torch.uint8, cache_role=iface.SparseCacheRole.INDEXER))
        return out

    def sliding(self, k):
        """A sliding layer's spec at the block vLLM's ``_largest_kernel_block_within`` picks for
        its backend: the largest kernel block within the block size that divides it."""
        def spec_at(block: int):
            return self.vl.iface.SlidingWindowSpec(
                block_size=block, num_kv_heads=self.kv_heads(k), head_size=k.head_dim_k,
                head_size_v=k.head_dim_v, dtype=self.kv_dtype, sliding_window=k.sliding_window,
                **self.quant)

        one, size = spec_at(1), self.vc.cache_config.block_size
        per_token = one.real_page_size_bytes
        return spec_at(self.vl.attn._largest_kernel_block_within(
            self.backends[0], per_token, per_token * size, size, one, divisor_of=size))

    def chunked(self, k):
        """A chunked local attention layer's spec (Llama 4's)."""
        return self.vl.iface.ChunkedLocalAttentionSpec(
            block_size=self.vc.cache_config.block_size, num_kv_heads=self.kv_heads(k),
            head_size=k.head_dim_k, dtype=self.kv_dtype,
            attention_chunk_size=k.attention_chunk_size, **self.quant)

    def full(self, k):
        """A full attention layer's spec."""
        return self.vl.iface.FullAttentionSpec(
            block_size=self.vc.cache_config.block_size, num_kv_heads=self.kv_heads(k),
            head_size=k.head_dim_k, head_size_v=k.head_dim_v, dtype=self.kv_dtype, **self.quant)

    def state(self, k):
        """A state layer's MambaSpec: its shapes and dtypes from the model class's own
        ``get_mamba_state_*_from_config``, the mamba block size and padded page the alignment
        left, and its prefill checkpoints (a Mamba2 layer's alignment 1, others' the
        checkpoint grid)."""
        vc, cache, enum = self.vc, self.vc.cache_config, self.vl.enums.MambaAttentionBackendEnum
        cls = self.vl.models.get(vc.model_config.architecture)
        kind = type(k).__name__
        mamba_types = {"Mamba2Layer": enum.MAMBA2, "Mamba1Layer": enum.MAMBA1,
                       "ShortConvLayer": enum.SHORT_CONV, "GDNLayer": enum.GDN_ATTN}
        return self.vl.iface.MambaSpec(
            shapes=tuple(cls.get_mamba_state_shape_from_config(vc)),
            dtypes=cls.get_mamba_state_dtype_from_config(vc),
            block_size=cache.mamba_block_size, page_size_padded=cache.mamba_page_size_padded,
            mamba_type=mamba_types[kind], mamba_cache_mode=cache.mamba_cache_mode,
            num_prefill_checkpoint_blocks=int(self.checkpoint is not None),
            prefill_checkpoint_alignment=1 if kind == "Mamba2Layer" else self.checkpoint_grid)


def vllm_figures(vl: NS, spec, budget: int, block: int, mode: str, async_sched: bool,
                 flags: dict) -> dict:
    """vLLM's layout for the setting from ``budget`` bytes of available KV-cache memory, or its
    refusal as ``{"refused": message}``."""
    vc = vllm_config(vl, spec, block, mode, async_sched, flags)
    try:
        specs = layer_specs(vl, spec, vc, flags)
        vl.butils.resolve_kv_cache_layout(vc, [[x.name for x in vl.butils.
                                               get_supported_kv_cache_layouts([vc.backend])]],
                                          specs.values())
        groups = vl.plan.get_global_kv_cache_groups(vc, [specs])
        cfgs = vl.plan.get_kv_cache_configs(vc, [specs], [budget], groups)
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": (str(exc) or type(exc).__name__).splitlines()[0][:60]}
    cfg, (tokens, concurrency) = cfgs[0], vl.utils.get_kv_cache_capacity(
        vc, vl.utils.generate_scheduler_kv_cache_config(cfgs))
    backing = max(t.size for t in cfg.kv_cache_tensors)  # the tensors overlay one slab
    return {"P": vc.cache_config.block_size, "block_bytes": backing // cfg.num_blocks,
            "num_blocks": cfg.num_blocks, "tokens": tokens, "concurrency": round(concurrency, 6)}


def flatkv_figures(spec, budget: int, block: int, mode: str, async_sched: bool,
                   flags: dict) -> dict:
    """FlatKV's prediction of the same figures (its ``vllm`` strategy), or its refusal, with
    the options its help gives for such a run, where its defaults are another's:
    - a row's --mamba-ssm-cache-dtype as FlatKV's ``vllm_ssm_dtype`` (none told: FlatKV's
      own, vLLM's auto, Nemotron-H's float32 included);
    - ``--kernel-block-size 64`` in the FLASHMLA rows (FlatKV's dense MLA default, 16, is
      FLASH_ATTN_MLA's and TRITON_MLA's, vLLM's picks where FlashMLA is not asked for);
    - async scheduling (``--vllm-async-scheduling``, off by default: releases before 0.26)
      in the block-64 align rows of a model with sliding or chunked layers (gpt-oss,
      Llama 4), as vLLM 0.34 runs by default.
    DeepSeek-V3.2 keeps FlatKV's defaults: its block 16 reads as vLLM's own pick (64),
    whatever the kernel option. GDN prefill on FlashInfer is told by its checkpoint block
    alone: FlatKV aligns P to its grid of 64 itself."""
    if flags.get("cache_dtype") == "fp8":  # --kv-cache-dtype fp8: one byte an element
        spec = spec.with_options(kv_dtype="float8_e4m3fn")
    kernel = 64 if flags.get("backend") == "FLASHMLA" else None  # --kernel-block-size 64
    options = StrategyOptions(
        block_size=block, mamba_cache_mode=mode, vllm_async_scheduling=async_sched,
        max_batched_tokens=flags.get("batched", BATCHED),
        kernel_block_size=kernel, vllm_ssm_dtype=flags.get("mamba_ssm_cache_dtype"),
        prefill_checkpoint_blocks=int(mode == "align" and (spec.architectures[0]
                                      in MAMBA2_CLASSES or "flashinfer_gdn" in flags)))
    r = run_strategy("vllm", spec.profile(), budget_bytes=budget,
                     context_tokens=flags.get("context", CONTEXT),
                     options=options)
    if not r.applies:
        return {"refused": r.reason[:60]}
    return {"P": r.block_size, "block_bytes": r.block_bytes, "num_blocks": r.num_blocks,
            "tokens": r.logged_tokens, "concurrency": round(r.max_concurrency, 6)}


def vllm_length(vl: NS, config: dict) -> dict:
    """The max_model_len vLLM serves a config.json at unless told, and whether it assumed it:
    the config resolved by transformers as vLLM loads it, its ModelArchitectureConfig from
    vLLM's convertor for the model type (``ModelConfig.get_model_arch_config``), then vLLM's
    own ``_get_and_verify_max_len`` with no --max-model-len and no tokenizer config, its
    warning caught."""
    from transformers import AutoConfig

    fields = {k: v for k, v in config.items() if k != "model_type"}
    hf = AutoConfig.for_model(config["model_type"], **fields)
    text = hf.get_text_config()
    convertor = vl.arch_config.MODEL_ARCH_CONFIG_CONVERTORS.get(
        hf.model_type, vl.arch_config.ModelArchConfigConvertorBase)
    arch = convertor(hf, text).convert()
    with mock.patch.object(vl.model_config.logger, "warning") as warned:
        length = vl.model_config._get_and_verify_max_len(text, arch, None, None, False, None)
    assumed = any(ASSUMED_WARNING in str(call.args[0]) for call in warned.call_args_list)
    return {"max_model_len": length, "assumed": int(assumed)}


def flatkv_length(config: dict) -> dict:
    """FlatKV's max_model_len for the same config.json and whether it says it is assumed."""
    spec = spec_from_hf_config(config)
    return {"max_model_len": spec.max_model_len, "assumed": int(spec.max_model_len_assumed)}


def check_lengths(vl: NS) -> tuple[int, int]:
    """Each LENGTH_CONFIGS config's length on both sides, then, where they agree and vLLM
    serves the architecture here, its layout at that length at both budgets (block 16, mode
    none): the figures FlatKV's pages show with no context typed. (settings, mismatches)."""
    rows = bad = 0
    for label, config in LENGTH_CONFIGS.items():
        engine, ours = vllm_length(vl, config), flatkv_length(config)
        rows += 1
        if not report("vllm", f"{label} length", engine, ours):
            bad += 1
            continue
        spec = spec_from_hf_config(config)
        if spec.architectures[0] not in vl.models:
            continue
        for budget in BUDGETS:
            rows += 1
            bad += not check(vl, spec, budget, 16, "none", False,
                             {"context": engine["max_model_len"]}, label)
    return rows, bad


def check(vl: NS, spec, budget: int, block: int, mode: str, async_sched: bool, flags: dict,
          label: str) -> bool:
    """Run one setting on both sides, print its line, and say whether they agree."""
    engine = vllm_figures(vl, spec, budget, block, mode, async_sched, flags)
    flatkv = flatkv_figures(spec, budget, block, mode, async_sched, flags)
    setting = (f"{label} B={budget:,} block={block} mode={mode}" + (" async" if async_sched
               else "") + "".join(f" {k}={v}" for k, v in flags.items()))
    return report("vllm", setting, engine, flatkv)


# The MLA presets (dense, sparse, a dense MLA hybrid) whose start on each GPU preset's compute
# capability ``check_gpu_mla`` sets beside FlatKV's, in each --kv-cache-dtype
GPU_MLA_PRESETS = ("DeepSeek-V3", "DeepSeek-V3.2", "Kimi-Linear-48B-A3B")
GPU_MLA_CACHE_DTYPES = ("auto", "fp8")


def cuda_platform_on(vl: NS, capability: tuple[int, int], device: str) -> type:
    """vLLM 0.34's own CudaPlatform class as on a GPU of ``capability`` named ``device``: only its
    ``get_device_capability`` (nvml's answer), ``get_device_name`` and ``num_compute_units``
    are served, so its backend selection (``get_attn_backend_cls``) and ``has_device_capability``
    run as on that GPU."""
    major, minor = capability
    return type("CudaPlatformOn", (vl.cuda.CudaPlatform,), {
        "get_device_capability": classmethod(
            lambda cls, device_id=0: vl.platform.DeviceCapability(major, minor)),
        "get_device_name": classmethod(lambda cls, device_id=0: device),
        "num_compute_units": classmethod(lambda cls, device_id=0: 1)})


def import_mla_backends(vl: NS) -> None:
    """What vLLM's MLA backend classes need to import on a CPU, served last (after every other
    check, so none of them sees a stub): CUDA-built modules (vLLM's _C_stable_libtorch,
    vllm_flash_attn, _flashmla_C, flashinfer) as stubs, fa_utils' CUDA kernels as None, and
    CUTLASS MLA's module-level workspace on torch's meta device (``vl.meta_empty``; its SM
    count served, ``static_backend_class``)."""
    stub_submodules("vllm._C_stable_libtorch", "vllm.vllm_flash_attn",
                    "vllm.vllm_flash_attn.flash_attn_interface", "vllm._flashmla_C")
    stub_modules("flashinfer")
    fa_utils = importlib.import_module("vllm.v1.attention.backends.fa_utils")
    for name in ("flash_attn_varlen_func", "get_scheduler_metadata",
                 "compile_flash_attn_varlen_func_from_specs", "reshape_and_cache_flash"):
        if not hasattr(fa_utils, name):
            setattr(fa_utils, name, None)
    vl.cuda = importlib.import_module("vllm.platforms.cuda")
    vl.selector = importlib.import_module("vllm.v1.attention.selector")
    vl.triton_mla = importlib.import_module("vllm.v1.attention.backends.mla.triton_mla")
    vl.platform_utils = importlib.import_module("vllm.utils.platform_utils")
    vl.mla_common = importlib.import_module(
        "vllm.model_executor.layers.attention.mla_attention")
    empty = vl.iface.torch.empty

    def meta_empty(*args, **kwargs):
        return empty(*args, **{**kwargs, "device": "meta"} if kwargs.get("device") == "cuda"
                     else kwargs)
    vl.meta_empty = meta_empty


def static_backend_class(vl: NS, backend, combination: bool = False):
    """``backend``'s class as vLLM's selector validates it, less ``supports_combination``: an
    MLA backend's asks what a CPU cannot answer (the kernels installed, the live config), and
    the starts checked here turn on the checks before it (compute capability, sparse, KV cache
    dtype, block size: ``AttentionBackend.validate_configuration``). ``combination``: keep it,
    for the non-MLA backends, whose checks (FLASH_ATTN's sinks below SM 9, its fp8 by FA
    version and head size; FlashInfer's NVFP4) read only the served FA versions and platform."""
    with mock.patch.object(vl.iface.torch, "empty", vl.meta_empty), mock.patch.object(
            vl.platform_utils, "num_compute_units", lambda device_id=0: 1):
        real = backend.get_class()
    if combination:
        return real
    return type(real.__name__, (real,), {
        "supports_combination": classmethod(lambda cls, *args, **kwargs: None)})


def vllm_gpu_start(vl: NS, spec, cache_dtype: str, capability: tuple[int, int],
                   device: str) -> dict:
    """Whether vLLM 0.34 starts ``spec``'s MLA layers on a GPU of ``capability``, told
    ``--kv-cache-dtype cache_dtype`` and no --block-size: its own selector
    (``CudaPlatform.get_attn_backend_cls``, ``static_backend_class``'s validation), then, where
    it picks TRITON_MLA, its impl's start-up checks (``TritonMLAImpl.__init__``: the fp8 and
    bfloat16 capability checks, the common MLA impl's own setup served); ``{"starts": 1}`` or
    ``{"refused": vLLM's message}``."""
    mla = next(k for k in spec.kinds.values() if type(k).__name__ == "MLALayer")
    config = vl.selector.AttentionSelectorConfig(
        head_size=mla.kv_lora_rank + mla.qk_rope_head_dim, dtype=vl.iface.torch.bfloat16,
        kv_cache_dtype=cache_dtype, block_size=None, use_mla=True,
        use_sparse=bool(mla.index_head_dim))
    platform = cuda_platform_on(vl, capability, device)()  # current_platform is one

    def common_init(impl, *args, **kwargs):  # MLACommonImpl's setup: what the checks read
        impl.kv_cache_dtype, impl.dcp_world_size = args[6], 1
    try:
        with mock.patch.object(vl.cuda, "_get_attn_backend_class",
                               lambda backend: static_backend_class(vl, backend)):
            chosen = platform.get_attn_backend_cls(None, config)
        if chosen.endswith(".TritonMLABackend"):
            with mock.patch.object(vl.triton_mla, "current_platform", platform), \
                    mock.patch.object(vl.triton_mla, "get_current_vllm_config", lambda: None), \
                    mock.patch.object(vl.mla_common.MLACommonImpl, "__init__", common_init):
                vl.triton_mla.TritonMLAImpl(128, config.head_size, 1.0, 1, None, None,
                                            cache_dtype, None, "decoder", None)
    except ValueError as exc:
        return {"refused": str(exc)}
    return {"starts": 1}


def flatkv_gpu_start(spec, cache_dtype: str, capability: tuple[int, int]) -> dict:
    """FlatKV's vLLM layout at the GPU preset's compute capability (``gpu_compute_capability``,
    and a Blackwell's for SGLang's word where it is one, as the app and the CLI set both from
    the preset) and the KV dtype --kv-cache-dtype gives: ``{"starts": 1}`` or its refusal."""
    if cache_dtype == "fp8":
        spec = spec.with_options(kv_dtype="float8_e4m3fn")
    options = StrategyOptions(gpu_compute_capability=capability)
    r = run_strategy("vllm", spec.profile(), budget_bytes=BUDGETS[0], context_tokens=CONTEXT,
                     options=options)
    return {"starts": 1} if r.applies else {"refused": r.reason}


def quoted_in(reason: str, message: str) -> bool:
    """Whether the vLLM error FlatKV's ``reason`` quotes ("...", its elisions " ... ") is
    vLLM's ``message``: each part between elisions found in it, in order."""
    start = reason.find('("') + 2
    parts = [p for p in reason[start:reason.find('")', start)].split("...") if p.strip()]
    at = 0
    for part in parts:
        at = message.find(part.strip(), at)
        if at < 0:
            return False
    return bool(parts)


def report_start(setting: str, engine: dict, ours: dict) -> bool:
    """``report`` one setting vLLM may refuse to start (its strings cut to 60 characters on the
    line), and whether both sides agree: the same figures, or both refusing with FlatKV quoting
    vLLM's error (``quoted_in``; a BAD quote line where it does not)."""
    def shown(figures: dict) -> dict:
        return {k: v[:60] if isinstance(v, str) else v for k, v in figures.items()}

    same = report("vllm", setting, shown(engine), shown(ours))
    if same and "refused" in ours and not quoted_in(ours["refused"], engine["refused"]):
        print(f"BAD   quote | vllm: {engine['refused']} | flatkv: {ours['refused']}")
        return False
    return same


def check_gpu_mla(vl: NS) -> tuple[int, int]:
    """``GPU_MLA_PRESETS`` in each ``GPU_MLA_CACHE_DTYPES`` on each GPU preset's compute
    capability (``budget.GPU_COMPUTE_CAPABILITIES``): whether vLLM 0.34 starts
    (``vllm_gpu_start``) beside whether FlatKV's layout does (``flatkv_gpu_start``), and where
    both refuse, that FlatKV quotes vLLM's error (``quoted_in``). (settings, mismatches)."""
    import_mla_backends(vl)
    rows = bad = 0
    for name in GPU_MLA_PRESETS:
        spec = model_spec(name)
        for cache_dtype in GPU_MLA_CACHE_DTYPES:
            for gpu, capability in GPU_COMPUTE_CAPABILITIES.items():
                engine = vllm_gpu_start(vl, spec, cache_dtype, capability, f"NVIDIA {gpu}")
                ours = flatkv_gpu_start(spec, cache_dtype, capability)
                setting = f"{name} kv={cache_dtype} on {gpu} (SM {capability_text(capability)})"
                same = report_start(setting, engine, ours)
                rows, bad = rows + 1, bad + (not same)
    return rows, bad


# The --kv-cache-dtype values ``check_gpu_attention`` tells vLLM, and FlatKV's KV dtype for each
# (None: the model's own, bfloat16 in every preset)
GPU_ATTENTION_CACHE_DTYPES = {"auto": None, "fp8": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}
# The architectures whose attention layers vLLM 0.34 builds with learnable sinks, which its
# selector reads (``has_sink``): gpt-oss (models/gpt_oss.py 131, 186)
SINK_ARCHITECTURES = frozenset({"GptOssForCausalLM"})
# vLLM's non-MLA backends' modules that ask the platform (``current_platform``) for its GPU
GPU_ATTENTION_MODULES = ("vllm.v1.attention.backends.fa_utils",
                         "vllm.v1.attention.backends.flash_attn",
                         "vllm.v1.attention.backends.flashinfer",
                         "vllm.v1.attention.backends.triton_attn", "vllm.utils.flashinfer")


def serve_attention_backends(vl: NS) -> list:
    """What vLLM's non-MLA backend classes ask on a CPU, served after ``import_mla_backends``:
    vllm_flash_attn's own ``is_fa_version_supported`` / ``fa_version_unsupported_reason``
    (its flash_attn_interface.py run beside the stub, whose CUDA-built FA2 and FA3 modules the
    CUDA wheel ships, so each version is there where the GPU takes it: FA2 from SM 8.0, FA3 on
    SM 9.x, FA4 on 9.x to 11.x), flash_attn.py's ``flash_attn_supports_sinks`` (imported where
    its varlen kernel is, as on a CUDA GPU), FlashInfer's TensorRT-LLM switch untold
    (``force_use_trtllm_attention`` None: --attention-config not set) and its cubins there.
    The modules of ``GPU_ATTENTION_MODULES``, to point at a GPU's platform."""
    interface = vl.fa_interface = types.ModuleType("vllm.vllm_flash_attn.flash_attn_interface")
    interface.__package__ = "vllm.vllm_flash_attn"
    interface.__file__ = str(Path(vl.cuda.__file__).parents[1] / "vllm_flash_attn"
                             / "flash_attn_interface.py")
    exec(compile(Path(interface.__file__).read_text(encoding="utf-8"), interface.__file__,
                 "exec"), interface.__dict__)
    stub = sys.modules["vllm.vllm_flash_attn.flash_attn_interface"]
    stub.is_fa_version_supported = interface.is_fa_version_supported
    stub.fa_version_unsupported_reason = interface.fa_version_unsupported_reason
    modules = [importlib.import_module(name) for name in GPU_ATTENTION_MODULES]
    fa_utils, flash_attn, flashinfer_utils = modules[0], modules[1], modules[-1]
    if not hasattr(flash_attn, "flash_attn_supports_sinks"):
        flash_attn.flash_attn_supports_sinks = fa_utils.flash_attn_supports_sinks
    flashinfer_utils.force_use_trtllm_attention = lambda: None
    flashinfer_utils.has_nvidia_artifactory = lambda: True
    return modules


@contextlib.contextmanager
def on_gpu(vl: NS, capability: tuple[int, int], device: str, modules: list,
           combination: bool):
    """vLLM 0.34's CudaPlatform as on a GPU of ``capability`` (``cuda_platform_on``), the
    platform every module of ``modules`` (``serve_attention_backends``) and vllm.platforms ask,
    and the selector's backend classes ``static_backend_class``'s (``combination``: with their
    ``supports_combination``, as for the non-MLA backends): yields the platform."""
    platform = cuda_platform_on(vl, capability, device)()
    with contextlib.ExitStack() as stack:
        for module in (*modules, importlib.import_module("vllm.platforms")):
            stack.enter_context(mock.patch.object(module, "current_platform", platform))
        stack.enter_context(mock.patch.object(
            vl.cuda, "_get_attn_backend_class",
            lambda backend: static_backend_class(vl, backend, combination=combination)))
        yield platform


def vllm_gpu_attention(vl: NS, spec, cache_dtype: str, capability: tuple[int, int],
                       device: str, modules: list) -> dict:
    """What vLLM 0.34 runs ``spec``'s attention layers with on a GPU of ``capability``, told
    ``--kv-cache-dtype cache_dtype`` and no --block-size: its own selector
    (``CudaPlatform.get_attn_backend_cls``, each backend's whole validation with its
    ``supports_combination``: ``static_backend_class``; FA's fp8
    needs FA3 on SM 9.x, fa_utils.py 306-311, so an SM 8.x GPU takes FLASHINFER, or
    TRITON_ATTN for gpt-oss's sinks, which FA2 and FlashInfer below SM 9 do not serve), then
    that backend's block told none (``get_preferred_block_size`` of CacheConfig's 16), the
    smallest kernel block a hybrid's block aligns to (interface.py 1078-1085) and a token's
    bytes a layer (its ``customize_spec`` of the layer's FullAttentionSpec):
    ``{"block", "kernel", "token_bytes"}``, or ``{"refused": vLLM's message}``."""
    layer = next(k for k in spec.layers if type(k).__name__ == "AttentionLayer")
    torch = vl.iface.torch
    dtype = (torch.bfloat16 if cache_dtype == "auto"
             else vl.torch_utils.STR_DTYPE_TO_TORCH_DTYPE[cache_dtype])
    config = vl.selector.AttentionSelectorConfig(
        head_size=layer.head_dim_k, dtype=torch.bfloat16, kv_cache_dtype=cache_dtype,
        block_size=None, has_sink=bool(SINK_ARCHITECTURES.intersection(spec.architectures)),
        has_sliding_window=bool(layer.sliding_window))
    with on_gpu(vl, capability, device, modules, combination=True) as platform:
        try:
            chosen = platform.get_attn_backend_cls(None, config)
        except ValueError as exc:
            return {"refused": str(exc)}
        name = chosen.rsplit(".", 1)[1]
        backend = next(getattr(m, name) for m in modules if hasattr(m, name))
        kernels = [k.base if isinstance(k, vl.backend.MultipleOf) else k
                   for k in backend.get_supported_kernel_block_sizes()]
        layout = vl.iface.FullAttentionSpec(
            block_size=1, num_kv_heads=layer.kv_heads, head_size=layer.head_dim_k, dtype=dtype,
            head_size_v=layer.head_dim_v, kv_quant_mode=vl.iface.get_kv_quant_mode(cache_dtype))
        return {"backend": backend.get_name(), "block": backend.get_preferred_block_size(16),
                "kernel": min(kernels),
                "token_bytes": backend.customize_spec(layout).page_size_bytes}


def flatkv_gpu_attention(spec, kv_dtype: str | None, capability: tuple[int, int]) -> dict:
    """FlatKV's vLLM layout at the GPU preset's compute capability in ``kv_dtype`` (None: the
    model's): its attention block told none (``attention_block_size``), the kernel block it
    aligns a hybrid's block to (``kernel_block_size``) and a token's bytes an attention layer.
    It models no backend choice for a non-MLA cache: none of vLLM's changes these."""
    if kv_dtype is not None:
        spec = spec.with_options(kv_dtype=kv_dtype)
    options = StrategyOptions(gpu_compute_capability=capability)
    profile = spec.profile()
    r = run_strategy("vllm", profile, budget_bytes=BUDGETS[0], context_tokens=CONTEXT,
                     options=options)
    if not r.applies:
        return {"refused": r.reason}
    return {"block": r.extras["attention_block_size"], "kernel": r.extras["kernel_block_size"],
            "token_bytes": profile.kv_bytes_per_slot}


def check_gpu_attention(vl: NS, presets: list[str], modules: list) -> tuple[int, int]:
    """The served presets with attention layers and no MLA, told each of
    ``GPU_ATTENTION_CACHE_DTYPES``, on each GPU preset's compute capability: what vLLM 0.34 runs
    them with (``vllm_gpu_attention``) beside FlatKV's layout there (``flatkv_gpu_attention``).
    On SM 8.x an fp8 cache moves the backend (FLASHINFER or TRITON_ATTN for FLASH_ATTN) and
    nothing of the pool: the same block 16, kernel block 16 and bytes. ``modules``:
    ``serve_attention_backends``'. (settings, mismatches)."""
    rows = bad = 0
    for name in presets:
        spec = model_spec(name)
        kinds = {type(k).__name__ for k in spec.layers}
        if "AttentionLayer" not in kinds or "MLALayer" in kinds:
            continue
        for cache_dtype, kv_dtype in GPU_ATTENTION_CACHE_DTYPES.items():
            for gpu, capability in GPU_COMPUTE_CAPABILITIES.items():
                engine = vllm_gpu_attention(vl, spec, cache_dtype, capability, f"NVIDIA {gpu}",
                                            modules)
                backend = engine.pop("backend", "no backend")
                ours = flatkv_gpu_attention(spec, kv_dtype, capability)
                setting = (f"{name} kv={cache_dtype} on {gpu} (SM {capability_text(capability)}):"
                           f" {backend}")
                same = report("vllm", setting, engine, ours)
                rows, bad = rows + 1, bad + (not same)
    return rows, bad


# The KDA classes whose prefill checkpoint block ``check_checkpoint_blocks`` sets beside
# FlatKV's, each with the layer class vLLM 0.34 builds for its KDA layers and that layer's
# prefill backend resolver (None: the layer prefills on Triton alone). Kimi-Linear's config has
# no use_full_rank_gate, so KimiLinearForCausalLM's decoder builds KimiGatedDeltaNetAttention
# (kimi_k3/nvidia/model.py 727-742); Kimi-K3's, whose gate is full-rank, KimiK3DeltaAttention.
KDA_LAYER_CLASSES = {
    "KimiLinearForCausalLM": ("vllm.model_executor.layers.mamba.gdn.kimi_gdn_linear_attn",
                              "KimiGatedDeltaNetAttention", None),
    "KimiK3ForConditionalGeneration": ("vllm.models.kimi_k3.nvidia.kda", "KimiK3DeltaAttention",
                                       "resolve_kda_prefill_backend"),
    # (registry.py 493-496: served by KimiK3ForConditionalGeneration, its KDA layers too)
    "KimiK31ForConditionalGeneration": ("vllm.models.kimi_k3.nvidia.kda", "KimiK3DeltaAttention",
                                        "resolve_kda_prefill_backend"),
    "Glm5NextForConditionalGeneration": ("vllm.models.glm5next.common.kda",
                                         "Glm5NextLinearAttention",
                                         "_resolve_kda_prefill_backend"),
    # (glm5next/common/model.py 1164: its decoder layers build Glm5NextLinearAttention, 477)
    "Glm5NextForCausalLM": ("vllm.models.glm5next.common.kda", "Glm5NextLinearAttention",
                            "_resolve_kda_prefill_backend"),
}
# a bounded KDA gate (the config's gate_lower_bound / linear_lower_bound), which FlatKV takes
KDA_GATE_LOWER_BOUND = -5.0


def platform_as(vl: NS, capability: tuple[int, int]):
    """vLLM's own Platform as a CUDA GPU of ``capability`` under CUDA 13 (the runtime 0.34's
    wheel is built for): its ``is_device_capability`` and ``is_device_capability_family`` run
    on the capability served, for the prefill backend resolvers that read them."""
    major, minor = capability
    return type("PlatformAs", (vl.platform.Platform,), {
        "_enum": vl.platform.PlatformEnum.CUDA,
        "get_device_capability": classmethod(
            lambda cls, device_id=0: vl.platform.DeviceCapability(major, minor)),
        "get_cuda_runtime_major": classmethod(lambda cls: 13)})()


def vllm_kda_checkpoint(vl: NS, spec, capability: tuple[int, int]) -> dict:
    """The prefill checkpoint blocks vLLM 0.34 keeps a request of ``spec``'s KDA layers in
    align on a GPU of ``capability``, by its own code: the layer class its decoder builds
    (``KDA_LAYER_CLASSES``), its prefill backend as that class's resolver picks it there
    (``current_platform`` served as that GPU; FlashInfer's KDA kernel taken as installed;
    bfloat16 activations unless the KV cache is float16, auto's model dtype), then the layer's
    own ``get_kv_cache_spec`` on a bare instance (the attributes it reads set, no weights), and
    the P alignment its ``get_prefill_checkpoint_alignment`` asks of an MLA hybrid's 128
    (interface.py 1100-1106)."""
    module_name, class_name, resolver = KDA_LAYER_CLASSES[spec.architectures[0]]
    module = importlib.import_module(module_name)
    torch = vl.iface.torch
    kda = next(k for k in spec.layers if type(k).__name__ == "GDNLayer")
    dtype = torch.float16 if spec.kv_dtype == "float16" else torch.bfloat16
    layer = object.__new__(getattr(module, class_name))
    torch.nn.Module.__init__(layer)
    layer.__dict__.update(
        tp_size=1, num_heads=kda.v_heads, head_dim=kda.head_dim_v, conv_size=kda.conv_kernel,
        num_spec=0, model_config=NS(dtype=dtype),
        cache_config=NS(mamba_cache_dtype="auto", mamba_ssm_cache_dtype=spec.ssm_dtype))
    if resolver is not None:
        with contextlib.ExitStack() as stack:
            stack.enter_context(mock.patch.object(module, "current_platform",
                                                  platform_as(vl, capability)))
            if hasattr(module, "has_flashinfer_recurrent_kda"):
                stack.enter_context(mock.patch.object(module, "has_flashinfer_recurrent_kda",
                                                      lambda: True))
            args = ((layer.get_state_dtype()[1],) if class_name == "KimiK3DeltaAttention"
                    else ())
            layer.kda_prefill_backend = getattr(module, resolver)(
                "auto", kda.head_dim_k, dtype, *args, KDA_GATE_LOWER_BOUND)
    vc = NS(cache_config=NS(mamba_block_size=128, mamba_page_size_padded=None,
                            mamba_cache_mode="align", use_replayssm=False),
            num_speculative_tokens=0)
    mamba_spec = layer.get_kv_cache_spec(vc)
    return {"checkpoint_blocks": mamba_spec.num_prefill_checkpoint_blocks,
            "attention_block": math.lcm(128, layer.get_prefill_checkpoint_alignment() or 1)}


def flatkv_kda_checkpoint(spec, capability: tuple[int, int]) -> dict:
    """FlatKV's word on the same: ``checkpoint_blocks_kept`` (what the app's "vLLM 0.34's
    defaults" button sets), and the attention block its vllm layout takes with them in align."""
    kept = checkpoint_blocks_kept(spec.profile(), capability)
    r = run_strategy("vllm", spec.profile(), budget_bytes=BUDGETS[0], context_tokens=CONTEXT,
                     options=StrategyOptions(block_size=16, mamba_cache_mode="align",
                                             prefill_checkpoint_blocks=kept or 0,
                                             gpu_compute_capability=capability))
    return {"checkpoint_blocks": kept, "attention_block": r.extras.get("attention_block_size")
            if r.applies else r.reason[:60]}


def vllm_gdn_checkpoint(vl: NS, spec, capability: tuple[int, int]) -> dict:
    """Whether vLLM 0.34 keeps a prefill checkpoint block for ``spec``'s GDN layers in align
    on a GPU of ``capability``: its own ``_resolve_gdn_prefill_backend`` as on that GPU (key
    head dim from the config), and the layer keeps one where that is FlashInfer in align
    (qwen_gdn_linear_attn.py 847-854, 901-912)."""
    module = importlib.import_module("vllm.model_executor.layers.mamba.gdn.qwen_gdn_linear_attn")
    vc = NS(additional_config={}, model_config=NS(hf_text_config=hf_config(spec)))
    with mock.patch.object(module, "current_platform", platform_as(vl, capability)):
        _, backend = module._resolve_gdn_prefill_backend(vc)
    return {"checkpoint_blocks": int(backend == "flashinfer")}


def check_checkpoint_blocks(vl: NS) -> tuple[int, int]:
    """Kimi-Linear's shapes under each KDA class of ``KDA_LAYER_CLASSES`` (Kimi-Linear's own,
    Kimi-K3's and Kimi-K3.1's, Glm5Next's two), with KDA head dims 128 and 64, a bfloat16 and
    a float16 KV cache (the model's dtype, auto) and a float32 and bfloat16 recurrent state, on
    each GPU preset's compute capability: the prefill checkpoint blocks vLLM 0.34's own layer
    code keeps in align (``vllm_kda_checkpoint``) beside FlatKV's (``flatkv_kda_checkpoint``);
    then the GDN presets at key head dims 128 and 256 (``vllm_gdn_checkpoint`` beside
    ``checkpoint_blocks_kept``).
    (settings, mismatches)."""
    base = load_preset("Kimi-Linear-48B-A3B")
    rows = bad = 0
    for arch in KDA_LAYER_CLASSES:
        for head_dim in (128, 64):
            layers = tuple(dataclasses.replace(k, head_dim_k=head_dim, head_dim_v=head_dim)
                           if type(k).__name__ == "GDNLayer" else k for k in base.layers)
            for kv, ssm in (("bfloat16", "float32"), ("float16", "float32"),
                            ("bfloat16", "bfloat16")):
                spec = dataclasses.replace(base, layers=layers, architectures=(arch,),
                                           kv_dtype=kv, ssm_dtype=ssm)
                for gpu, capability in GPU_COMPUTE_CAPABILITIES.items():
                    setting = (f"{arch} KDA head {head_dim} kv={kv} ssm={ssm} on {gpu} (SM "
                               f"{capability_text(capability)}) align")
                    same = report("vllm", setting, vllm_kda_checkpoint(vl, spec, capability),
                                  flatkv_kda_checkpoint(spec, capability))
                    rows, bad = rows + 1, bad + (not same)
    for name in ("Qwen3-Next-80B-A3B", "Qwen3.5-27B"):
        qwen = load_preset(name)
        for head_dim in (128, 256):
            layers = tuple(dataclasses.replace(k, head_dim_k=head_dim)
                           if type(k).__name__ == "GDNLayer" else k for k in qwen.layers)
            spec = dataclasses.replace(qwen, layers=layers)
            for gpu, capability in GPU_COMPUTE_CAPABILITIES.items():
                setting = (f"{name} GDN key head {head_dim} on {gpu} (SM "
                           f"{capability_text(capability)}) align")
                kept = checkpoint_blocks_kept(spec.profile(), capability)
                same = report("vllm", setting, vllm_gdn_checkpoint(vl, spec, capability),
                              {"checkpoint_blocks": kept})
                rows, bad = rows + 1, bad + (not same)
    return rows, bad


# The presets ``check_told_blocks`` tells each of TOLD_BLOCKS, one of each kind: full attention
# alone, sliding beside full with sinks (gpt-oss), a GDN hybrid, dense MLA, sparse MLA, an MLA
# hybrid, and a model of state layers alone (no attention layer, so no selector)
TOLD_BLOCK_PRESETS = ("Llama-3.1-8B", "gpt-oss-20b", "Qwen3-Next-80B-A3B", "DeepSeek-V3",
                      "DeepSeek-V3.2", "Kimi-Linear-48B-A3B", STATE_ONLY)
# --block-size values told: three no backend's kernel blocks take (under 16, and 24, which is
# under a kernel block of 32 and over one of 16), 32 and 48 (16s under sparse MLA's 64, which
# FlatKV refused none of before 2026-12-07: it read them as not told and ran DeepSeek-V3.2 at
# 64 where vLLM refuses 48 and, on a Hopper, 32, and fails at start-up told 32 on a B200), and
# 64, which every backend takes
TOLD_BLOCKS = (1, 8, 24, 32, 48, 64)
# the GPUs told them: an H100's and a B200's selector, whose backends differ
TOLD_BLOCK_GPUS = ("H100 80GB", "B200 192GB")
# the stand-ins (``stand_in_backend``) for the backends the selector picks in those rows, by the
# name vLLM's class gives, whose figures ``vllm_figures`` lays out; a B200's sparse MLA backends
# (FLASHMLA_SPARSE at 64) page as FLASH_ATTN_MLA_SPARSE does, by 64s with rows aligned
TOLD_BLOCK_STAND_INS = {"FLASH_ATTN": "FLASH_ATTN", "FLASHINFER": "FLASHINFER",
                        "FLASH_ATTN_MLA": "FLASH_ATTN_MLA", "FLASHINFER_MLA": "FLASHINFER_MLA",
                        "TRITON_MLA": "TRITON_MLA", "FLASH_ATTN_MLA_SPARSE": None,
                        "FLASHMLA_SPARSE": None, "FLASHINFER_MLA_SPARSE": "FLASHINFER_MLA_SPARSE"}


def selector_configs(vl: NS, spec, block: int) -> list:
    """The AttentionSelectorConfig each kind of ``spec``'s attention layers asks vLLM's selector
    with, told ``--block-size block`` (``user_specified_block_size``: selector.py 134-138): one
    for MLA (dense or sparse), else one a head size and window (gpt-oss's sinks read by its
    architecture); none for a model of state layers alone, which builds no attention layer."""
    torch, configs = vl.iface.torch, []
    for k in spec.layers:
        if type(k).__name__ == "MLALayer":
            config = vl.selector.AttentionSelectorConfig(
                head_size=k.kv_lora_rank + k.qk_rope_head_dim, dtype=torch.bfloat16,
                kv_cache_dtype="auto", block_size=block, use_mla=True,
                use_sparse=bool(k.index_head_dim))
        elif type(k).__name__ == "AttentionLayer":
            config = vl.selector.AttentionSelectorConfig(
                head_size=k.head_dim_k, dtype=torch.bfloat16, kv_cache_dtype="auto",
                block_size=block,
                has_sink=bool(SINK_ARCHITECTURES.intersection(spec.architectures)),
                has_sliding_window=bool(k.sliding_window))
        else:
            continue
        if config not in configs:
            configs.append(config)
    return configs


def vllm_told_block(vl: NS, spec, block: int, capability: tuple[int, int], device: str,
                    modules: list) -> dict:
    """What vLLM 0.34 does told ``--block-size block`` on a GPU of ``capability``: its own
    selector for each kind of attention layer (``selector_configs``; ``on_gpu``, the MLA
    backends without their ``supports_combination``, ``static_backend_class``), which the
    layers ask as they are built, before any hybrid alignment: ``{"refused": its message}``
    where one raises; else the layout ``vllm_figures`` gives at that block (mode none, the first
    budget) on the stand-in of the backend picked (``TOLD_BLOCK_STAND_INS``), and its name."""
    names, configs = [], selector_configs(vl, spec, block)
    for config in configs:
        with on_gpu(vl, capability, device, modules, combination=not config.use_mla) as platform:
            try:
                path = platform.get_attn_backend_cls(None, config)
            except ValueError as exc:
                return {"refused": str(exc)}
        names.append(next(b.name for b in vl.enums.AttentionBackendEnum  # by its class
                          if str(b.value).rsplit(".", 1)[-1] == path.rsplit(".", 1)[1]))
    flags = {"backend": TOLD_BLOCK_STAND_INS[names[0]]} if names else {}
    if any(config.use_sparse for config in configs):
        # the worker's kernel block for the group of sparse MLA and its indexer's keys
        # (prepare_kernel_block_sizes): vLLM's own select_common_block_size on both backends
        group = [stand_in_backend(vl, flags["backend"] or "FLASH_ATTN_MLA_SPARSE"),
                 stand_in_backend(vl, "DEEPSEEK_V32_INDEXER")]
        try:
            vl.worker.select_common_block_size(block, group)
        except ValueError as exc:
            return {"refused": str(exc), "backend": names[0]}
    figures = vllm_figures(vl, spec, BUDGETS[0], block, "none", False,
                           {k: v for k, v in flags.items() if v})
    return {**figures, "backend": "/".join(dict.fromkeys(names)) or "no attention"}


def flatkv_told_block(spec, block: int, capability: tuple[int, int]) -> dict:
    """FlatKV's vLLM layout told block size ``block`` at the GPU's compute capability: its
    refusal in full (for ``quoted_in``), else ``flatkv_figures``' (the GPU moves none of
    them)."""
    r = run_strategy("vllm", spec.profile(), budget_bytes=BUDGETS[0], context_tokens=CONTEXT,
                     options=StrategyOptions(block_size=block,
                                             gpu_compute_capability=capability))
    if not r.applies:
        return {"refused": r.reason}
    return flatkv_figures(spec, BUDGETS[0], block, "none", False, {})


def check_told_blocks(vl: NS, modules: list) -> tuple[int, int]:
    """``TOLD_BLOCK_PRESETS`` told each of ``TOLD_BLOCKS`` on each of ``TOLD_BLOCK_GPUS``:
    whether vLLM 0.34's own selector takes the block (``vllm_told_block``) beside whether
    FlatKV's layout starts (``flatkv_told_block``), their figures where both start, and where
    both refuse, that FlatKV quotes vLLM's error (``quoted_in``). (settings, mismatches)."""
    rows = bad = 0
    for name in TOLD_BLOCK_PRESETS:
        spec = model_spec(name)
        for gpu in TOLD_BLOCK_GPUS:
            capability = GPU_COMPUTE_CAPABILITIES[gpu]
            for block in TOLD_BLOCKS:
                engine = vllm_told_block(vl, spec, block, capability, f"NVIDIA {gpu}", modules)
                backend = engine.pop("backend", "no backend")
                ours = flatkv_told_block(spec, block, capability)
                same = report_start(f"{name} --block-size {block} on {gpu}: {backend}", engine,
                                    ours)
                rows, bad = rows + 1, bad + (not same)
    return rows, bad


def random_setting(vl: NS, rng: random.Random, presets: list[str]):
    """One random setting near a served preset, within what vLLM 0.34 starts with on an H100:
    the preset's shape perturbed (``perturb_spec``: heads, head and state dims, conv kernel,
    window or chunk, layer counts and hybrid ratio) three times in four; a tp of 1 to 8 that
    splits it (vLLM refuses any other at config time); a B200's backends three times in ten
    (FLASHINFER with or without its TRT-LLM pages; FLASHINFER_MLA for dense MLA, drawn as
    often as FLASHMLA); ``--kv-cache-dtype fp8`` (for MLA only on FLASHMLA or FLASHINFER_MLA:
    FLASH_ATTN_MLA takes no fp8, sparse MLA's fp8_ds_mla is another layout);
    ``--mamba-ssm-cache-dtype`` (float16 too, which Kimi's KDA refuses: both sides must say
    so); a block the backend runs (multiples of 16; of 64 on FLASHMLA and FLASHINFER_MLA,
    which takes 32 too; a sparse MLA model's
    below 64 untold, vLLM picking); mode none or align (0.34 has no mode all); async
    scheduling; ``--max-num-batched-tokens`` (it sizes sliding and chunked pages); GDN (not
    KDA) prefill on FlashInfer; a max_model_len up to the model's; a budget anywhere from
    16 MiB to 80 GiB, or at the least vLLM starts at (bisected on vLLM) and 1 B under.
    Returns ``check``'s arguments after ``vl``."""
    name = STATE_ONLY if rng.random() < 0.1 else rng.choice(presets)
    spec = model_spec(name)
    if rng.random() < 0.75:
        spec = perturb_spec(rng, spec)
    spec = spec.with_options(tp=rng.choice([t for t in (1, 2, 4, 8) if spec.splits_over(t)]))
    kinds = {type(k).__name__ for k in spec.layers}
    flags = {}
    mla, sparse = "MLALayer" in kinds, any(getattr(k, "index_head_dim", None) for k in spec.layers)
    if mla and not sparse and rng.random() < 0.5:
        flags["backend"] = rng.choice(("FLASHMLA", "FLASHINFER_MLA"))
    elif "AttentionLayer" in kinds and rng.random() < 0.3:  # a B200's FlashInfer
        flags["backend"] = rng.choice(("FLASHINFER", "FLASHINFER_TRTLLM"))
    if (not mla or "backend" in flags) and rng.random() < 0.3:
        flags["cache_dtype"] = "fp8"
    if kinds - {"AttentionLayer", "MLALayer"} and rng.random() < 0.5:
        flags["mamba_ssm_cache_dtype"] = rng.choice(("bfloat16", "float32", "float16"))
    block = rng.choice((64, 128, 256) if mla and "backend" in flags
                       else (16, 32, 48, 64, 128, 256))
    if sparse and block < 64:  # no block told, vLLM picking: FlatKV's word for it is 16 (a told
        block = 16                # 32 or 48 both refuse, as the told-block rows check)
        flags["block_told"] = False
    mode = rng.choice(("none", "align"))
    if "GDNLayer" in kinds and not mla and mode == "align" and rng.random() < 0.5:
        flags["flashinfer_gdn"] = True
    flags["context"] = random_context(rng, spec)
    async_sched = rng.random() < 0.5
    if rng.random() < 0.3:
        flags["batched"] = rng.choice((2048, 5000, 16_384))
    budget = edge_or_random_budget(rng, lambda b: "refused" in vllm_figures(
        vl, spec, b, block, mode, async_sched, flags))
    label = spec_label(spec)
    return spec, budget, block, mode, async_sched, flags, label


# --- mamba cache mode all, against vLLM 0.31 (--vllm-all DIR) -------------------------------

# vLLM 0.31, the last release with mamba cache mode all (0.32's MambaCacheMode is align or
# none), whose figures FlatKV gives in that mode; its sizing modules by role (its groups and
# configs are kv_cache_utils', not yet kv_cache_planning's), and its model classes
MODE_ALL_RELEASE_CHECKED = "0.31.0"
MODE_ALL_NAMES = {"utils": "vllm.v1.core.kv_cache_utils", "iface": "vllm.v1.kv_cache_interface",
                  "backend": "vllm.v1.attention.backend",
                  "configs": "vllm.model_executor.models.config",
                  "interfaces": "vllm.model_executor.models.interfaces",
                  "torch_utils": "vllm.utils.torch_utils", "model_config": "vllm.config.model",
                  "cache": "vllm.config.cache", "butils": "vllm.v1.attention.backends.utils",
                  "logger": "vllm.logger",
                  "mamba_utils": "vllm.model_executor.layers.mamba.mamba_utils",
                  "platform": "vllm.platforms.interface",
                  "registry": "vllm.model_executor.models"}
MODE_ALL_CLASSES = {**MODEL_CLASSES,
                    "KimiLinearForCausalLM": "vllm.models.kimi_k3.nvidia.model",
                    "Qwen3_5ForConditionalGeneration": "vllm.model_executor.models.qwen3_5"}
MODE_ALL_BLOCKS = (16, 64)


def import_vllm_031(directory: str) -> NS:
    """vLLM 0.31's sizing modules and model classes from its unzipped wheel, CUDA-only imports
    stubbed."""
    stub_modules("torchvision", "tvm_ffi", "xgrammar")
    sys.path.insert(0, str(Path(directory).resolve()))
    vl = NS(**{key: importlib.import_module(name) for key, name in MODE_ALL_NAMES.items()})
    vl.models = {arch: getattr(importlib.import_module(m), arch)
                 for arch, m in MODE_ALL_CLASSES.items()}
    vl.models.update({arch: vl.models[served] for arch, served in SERVED_AS.items()})
    return vl


def mode_all_settings(presets: list[str]) -> list[tuple[str, int, int, dict]]:
    """(preset, budget, block size, flags) rows, every one in mamba cache mode all: each preset
    with state layers at both budgets and blocks 16 and 64 (Nemotron-H with its preset's
    bfloat16 ssm state too), then the models of state layers alone (``STATE_ONLY``, Mamba2;
    falcon-mamba-7b's Mamba1) at blocks 16, 64 and 256 and at a short max_model_len, where one
    request fits; FlatKV told a prefill checkpoint block, which 0.31 has not; and 2 or 16
    speculative tokens on the Mamba2 and GDN models; and blocks 8 and 24, which no attention
    backend takes, on two hybrids and both models of state layers alone."""
    state = [p for p in presets if model_spec(p).profile().has_state]
    rows = [(p, b, block, {}) for p in state for b in BUDGETS for block in MODE_ALL_BLOCKS]
    rows += [("Nemotron-H-8B", b, block, {"mamba_ssm_cache_dtype": "bfloat16"})
             for b in BUDGETS for block in MODE_ALL_BLOCKS]
    # FlatKV told a prefill checkpoint block (0.32's Mamba2, 0.33's GDN on FlashInfer), which
    # 0.31 keeps in no mode: its mode all (and the align it falls back to) ignores it
    rows += [(p, b, 64, {"prefill_checkpoint_blocks": 1})
             for p in ("Nemotron-H-8B", "Qwen3-Next-80B-A3B", "Qwen3.5-27B") for b in BUDGETS]
    # drafted tokens: a state page more each, conv states widened; 0.31's FalconH1 and
    # GraniteMoeHybrid size P without the drafted rows (16 outgrow Falcon-H1-7B's page)
    rows += [(p, BUDGETS[0], block, {"speculative_tokens": n})
             for p in ("Nemotron-H-8B", "Falcon-H1-7B", "granite-4.0-h-small",
                       "Qwen3-Next-80B-A3B", STATE_ONLY) for block in MODE_ALL_BLOCKS
             for n in (2, 16)]
    for name in (STATE_ONLY, FALCON_MAMBA_ONLY):
        rows += [(name, b, block, flags) for b in BUDGETS for block in (*MODE_ALL_BLOCKS, 256)
                 for flags in ({}, {"context": 2048})]
    # a block no attention backend takes (8, 24): refused where the model has attention layers,
    # kept as told by a model of state layers alone (a snapshot every 8 tokens: at 32,768 tokens
    # a request outgrows the budget, so both lengths)
    rows += [(p, BUDGETS[0], block, flags) for block in (8, 24)
             for p, flags in (("Qwen3-Next-80B-A3B", {}), ("Nemotron-H-8B", {}),
                              *((m, f) for m in (STATE_ONLY, FALCON_MAMBA_ONLY)
                                for f in ({}, {"context": 2048})))]
    return rows


def vllm_031_config(vl: NS, spec, block: int, flags: dict) -> NS:
    """The VllmConfig fields vLLM 0.31's sizing reads for ``vllm serve --enable-prefix-caching
    --mamba-cache-mode all --block-size B`` on one GPU (``vllm_config``'s, and the chunk the
    config names), then its own MambaModelConfig hook on them, which keeps mode all or falls
    back to align by what the model class declares (SupportsMambaPrefixCaching) and sets the
    mamba block size."""
    vc = vllm_config(vl, spec, block, "all", False, flags)
    cache, model = vc.cache_config, vc.model_config
    if spec.mamba_chunk_size is not None:  # the config's chunk_size
        model.hf_config.chunk_size = spec.mamba_chunk_size
    cache.mamba_block_size, cache.user_specified_mamba_block_size = None, False
    cache.use_kda_recoverssm = False  # (0.31's KDA RecoverSSM, off unless --use-replayssm)
    if drafted := flags.get("speculative_tokens", 0):  # ngram drafting: no drafter layers
        vc.num_speculative_tokens = drafted
        vc.speculative_config = NS(num_speculative_tokens=drafted, method="ngram",
                                   use_eagle=lambda: False, use_eagle_block_drop=lambda: False)
    model.get_mamba_chunk_size = types.MethodType(vl.model_config.ModelConfig.get_mamba_chunk_size,
                                                  model)
    cls = vl.models[model.architecture]
    model.supports_mamba_prefix_caching = vl.interfaces.supports_mamba_prefix_caching(cls)
    vl.configs.MambaModelConfig.verify_and_update_config(vc)
    return vc


def vllm_031_figures(vl: NS, spec, budget: int, block: int, flags: dict) -> dict:
    """vLLM 0.31's layout in mamba cache mode all from ``budget`` bytes of available KV-cache
    memory, or its refusal: its own hybrid block alignment (``_align_hybrid_block_size``, the
    model class served), every cache layer's spec as 0.31's layers build them (no prefill
    checkpoint block: 0.31 keeps none for these layers), its ``get_kv_cache_configs`` and
    ``get_kv_cache_capacity``. The mode it ran in is a figure too (``mode``), and ``log`` the
    lines its code logged meanwhile (``logged_by_vllm``): CacheConfig's check of the mode,
    MambaModelConfig's, the alignment's, and ``update_kv_cache_capacity``'s."""
    for once in (vl.logger._print_info_once, vl.logger._print_warning_once):
        once.cache_clear()  # each run logs its own once-lines, as each start-up does
    with logged_by_vllm() as log:
        vl.cache.CacheConfig(block_size=block, mamba_cache_mode="all")  # its mode check
        figures = _vllm_031_figures(vl, spec, budget, block, flags)
    return {**figures, "log": tuple(log)}


@contextlib.contextmanager
def logged_by_vllm():
    """The messages vLLM's loggers print meanwhile (INFO and up, as its log shows them), in
    order: a list filled as they come (the check silences the engine's logging otherwise)."""
    import logging

    messages: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("vllm")
    level = logger.level
    logging.disable(logging.NOTSET)
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logging.disable(logging.WARNING)


def _vllm_031_figures(vl: NS, spec, budget: int, block: int, flags: dict) -> dict:
    """``vllm_031_figures`` but the log."""
    vc = vllm_031_config(vl, spec, block, flags)
    iface, model, cache = vl.iface, vc.model_config, vc.cache_config
    kinds = [type(k).__name__ for k in spec.layers]
    shapes = {("mla" if n == "MLALayer" else "full"): (
        k.kv_lora_rank + k.qk_rope_head_dim if n == "MLALayer" else k)
        for k, n in zip(spec.layers, kinds) if n in ("MLALayer", "AttentionLayer")}
    backend = stand_in_backend(vl, "FLASH_ATTN_MLA" if model.use_mla else "FLASH_ATTN")
    tp = vc.parallel_config.tensor_parallel_size
    model.get_num_kv_heads = lambda parallel: 1 if model.use_mla else max(
        1, shapes["full"].kv_heads // parallel.tensor_parallel_size)
    model.get_head_size = lambda: shapes["mla"] if model.use_mla else shapes["full"].head_dim_k
    cls = vl.models[model.architecture]
    try:
        if set(kinds) & {"MLALayer", "AttentionLayer"}:  # model_config.is_hybrid
            # 0.31's selector checks the backend against a --block-size told as the attention
            # layers are built, before this alignment (selector.py 131-135, uniproc_executor.py
            # 75): its FLASH_ATTN and FLASH_ATTN_MLA page by MultipleOf(16) as the stand-ins do
            if not backend.supports_block_size(cache.block_size):
                raise ValueError(f"{backend.get_name()} does not take block size "
                                 f"{cache.block_size}")
            with mock.patch.object(vl.registry.ModelRegistry, "resolve_model_cls",
                                   lambda arch, model_config=None: (cls, arch)):
                vl.platform.Platform._align_hybrid_block_size(vc, backend)
        kv_dtype = vl.torch_utils.get_kv_cache_torch_dtype(cache.cache_dtype, model.dtype)
        quant = {"kv_quant_mode": iface.get_kv_quant_mode(cache.cache_dtype)}
        enum = vl.registry.__dict__.get("MambaAttentionBackendEnum") or importlib.import_module(
            "vllm.v1.attention.backends.registry").MambaAttentionBackendEnum
        mamba_types = {"Mamba2Layer": enum.MAMBA2, "Mamba1Layer": enum.MAMBA1,
                       "ShortConvLayer": enum.SHORT_CONV, "GDNLayer": enum.GDN_ATTN}
        specs = {}
        for i, (k, n) in enumerate(zip(spec.layers, kinds)):
            name = f"model.layers.{i}.{n}"
            if n == "MLALayer":
                specs[name] = iface.MLAAttentionSpec(
                    block_size=cache.block_size, num_kv_heads=1, max_tp_shards=1,
                    head_size=k.kv_lora_rank + k.qk_rope_head_dim, dtype=kv_dtype,
                    cache_dtype_str=cache.cache_dtype, **quant)
            elif n == "AttentionLayer":
                specs[name] = iface.FullAttentionSpec(
                    block_size=cache.block_size, num_kv_heads=max(1, k.kv_heads // tp),
                    head_size=k.head_dim_k, head_size_v=k.head_dim_v, dtype=kv_dtype, **quant)
            else:
                specs[name] = iface.MambaSpec(
                    shapes=layer_state_shape(vl, cls, vc, k, n),
                    dtypes=cls.get_mamba_state_dtype_from_config(vc),
                    block_size=cache.mamba_block_size,
                    page_size_padded=cache.mamba_page_size_padded, mamba_type=mamba_types[n],
                    mamba_cache_mode=cache.mamba_cache_mode,
                    num_speculative_blocks=vc.num_speculative_tokens)
        vl.butils.resolve_kv_cache_layout(vc, [[x.name for x in vl.butils.
                                               get_supported_kv_cache_layouts([backend])]],
                                          specs.values())
        cfgs = vl.utils.get_kv_cache_configs(vc, [specs], [budget])
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": (str(exc) or type(exc).__name__).splitlines()[0][:60]}
    scheduler_config = vl.utils.generate_scheduler_kv_cache_config(cfgs)
    cfg, (tokens, concurrency) = cfgs[0], vl.utils.get_kv_cache_capacity(vc, scheduler_config)
    vc.device_config = NS(device_type="cuda")
    vl.utils.update_kv_cache_capacity(vc, scheduler_config)  # its KV cache size line
    backing = max(t.size for t in cfg.kv_cache_tensors)
    return {"mode": cache.mamba_cache_mode, "P": cache.block_size,
            "snapshot_every": cache.mamba_block_size, "block_bytes": backing // cfg.num_blocks,
            "num_blocks": cfg.num_blocks, "tokens": tokens,
            "concurrency": round(concurrency, 6)}


def layer_state_shape(vl: NS, cls, vc: NS, layer, kind: str) -> tuple:
    """A state layer's shapes as 0.31's layer builds them: the class's config shape, except
    where a MambaMixer2 layer drafts tokens, whose conv state the layer widens itself
    (``MambaMixer2.get_state_shape``: ``num_spec``) where FalconH1's and GraniteMoeHybrid's
    config shape (which P is sized from) does not."""
    drafted = vc.num_speculative_tokens
    if kind != "Mamba2Layer" or not drafted:
        return tuple(cls.get_mamba_state_shape_from_config(vc))
    return tuple(vl.mamba_utils.MambaStateShapeCalculator.mamba2_state_shape(
        tp_world_size=vc.parallel_config.tensor_parallel_size,
        intermediate_size=layer.n_heads * layer.head_dim, n_groups=layer.n_groups,
        num_heads=layer.n_heads, head_dim=layer.head_dim, state_size=layer.d_state,
        conv_kernel=layer.conv_kernel, num_spec=drafted))


def flatkv_mode_all_figures(spec, budget: int, block: int, flags: dict) -> dict:
    """FlatKV's figures of the same run (its ``vllm`` strategy in mamba cache mode all, the
    ssm dtype as ``flatkv_figures`` sets it), with the mode its layout ran in."""
    r = run_strategy("vllm", spec.profile(), budget_bytes=budget,
                     context_tokens=flags.get("context", CONTEXT),
                     options=StrategyOptions(
                         block_size=block, mamba_cache_mode="all",
                         vllm_ssm_dtype=flags.get("mamba_ssm_cache_dtype"),
                         prefill_checkpoint_blocks=flags.get("prefill_checkpoint_blocks", 0),
                         speculative_tokens=flags.get("speculative_tokens", 0)))
    if not r.applies:
        return {"refused": r.reason[:60], "log": ()}
    # (a state group's block, its snapshot interval, is P in modes all and align)
    return {"mode": r.extras["mamba_cache_mode"], "P": r.block_size,
            "snapshot_every": r.block_size, "block_bytes": r.block_bytes,
            "num_blocks": r.num_blocks, "tokens": r.logged_tokens,
            "concurrency": round(r.max_concurrency, 6), "log": tuple(r.extras["log_lines"])}


# What one side logs that the other's lines leave out: FlatKV's lines of the stages this check
# does not run (VllmConfig's model runner choice, the worker's memory profile) and vLLM's that
# FlatKV does not print (the ssm dtype update, left out with a note; the KV cache layout)
LOG_NOT_RUN = ("Model Runner V2 does not yet support", "Available KV cache memory:")
LOG_NOT_PRINTED = ("Updating mamba_ssm_cache_dtype to", "Using ")


def same_log(engine: tuple[str, ...], flatkv: tuple[str, ...]) -> bool:
    """Whether vLLM 0.31's start-up lines of a run, as its code logged them here, are FlatKV's
    in order, less what one side's lines leave out (``LOG_NOT_RUN``, ``LOG_NOT_PRINTED``);
    prints each side's where they differ."""
    ours = [line for line in flatkv if not line.startswith(LOG_NOT_RUN)]
    theirs = [line for line in engine if not line.startswith(LOG_NOT_PRINTED)]
    if ours != theirs:
        print("BAD   log | vllm: " + " / ".join(theirs) + " | flatkv: " + " / ".join(ours))
    return ours == theirs


# A dense MLA model told no --block-size on an H100, by its KV cache dtype, and the backend
# 0.31's cuda.py _get_backend_priorities picks first for it on SM 9.0 (FLASH_ATTN_MLA, then
# FLASHMLA): FLASH_ATTN_MLA takes no fp8 (mla/flashattn_mla.py's supported_kv_cache_dtypes:
# auto, float16, bfloat16), FLASHMLA does (fp8, fp8_e4m3)
UNASKED_MLA_ROWS = (("DeepSeek-V3", "auto", "FLASH_ATTN_MLA"), ("DeepSeek-V3", "fp8", "FLASHMLA"),
                    ("DeepSeek-V3", "auto", "FLASHINFER_MLA"),
                    ("DeepSeek-V3", "fp8", "FLASHINFER_MLA"))


def check_unasked_mla_blocks(vl: NS) -> int:
    """``UNASKED_MLA_ROWS`` on vLLM 0.31: the block its own phase 1
    (``Platform.update_block_size_for_backend``, CacheConfig with no block size: its default
    16, not the user's) gives the backend, and the line it logs, beside the block FlatKV says
    vLLM runs told none (``unasked_mla_block_text``: FlashMLA's 64 where its note shows at
    FlatKV's default on a Hopper, FLASHINFER_MLA's 32 on a Blackwell, the rows of that backend,
    each note quoting that line; else its P there), one line each; the mismatches."""
    bad = 0
    for name, dtype, backend_name in UNASKED_MLA_ROWS:
        blackwell = backend_name == "FLASHINFER_MLA"  # SM 10's first MLA backend
        options = StrategyOptions(gpu_compute_capability=BLACKWELL_CAPABILITY if blackwell
                                  else None)
        backend = stand_in_backend(vl, backend_name)
        cache = vl.cache.CacheConfig()
        vc = NS(cache_config=cache, model_config=NS(is_hybrid=False))
        with logged_by_vllm() as log, mock.patch.object(
                vl.platform.Platform, "_find_non_ssm_backends",
                classmethod(lambda cls, config, backend=backend: [backend])):
            vl.platform.Platform.update_block_size_for_backend(vc)
        spec = model_spec(name)
        if dtype == "fp8":  # --kv-cache-dtype fp8: one byte an element
            spec = spec.with_options(kv_dtype="float8_e4m3fn")
        r = run_strategy("vllm", spec.profile(), budget_bytes=BUDGETS[1], options=options)
        note = unasked_mla_block_text(spec.profile(), options, r)
        said = min(FLASHINFER_MLA_BLOCK_SIZES) if blackwell else FLASHMLA_BLOCK_SIZE
        engine = {"P": cache.block_size, "log": repr(" ".join(log))}
        ours = {"P": said if note else r.block_size,
                "log": repr(" ".join(line for line in log if line in note))}
        bad += not report(f"vllm {MODE_ALL_RELEASE_CHECKED}", f"{name} no --block-size "
                          f"kv={dtype} backend={backend_name}", engine, ours)
    return bad


def check_mode_all(directory: str) -> int:
    """Every ``mode_all_settings`` row on both sides, one line each (and, where both start,
    their start-up lines: ``same_log``), then the totals, and ``check_unasked_mla_blocks``';
    exit status 1 on a mismatch."""
    vl = import_vllm_031(directory)
    served = []
    for name in list_presets():
        if load_preset(name).architectures[0] in vl.models:
            served.append(name)
        elif load_preset(name).profile().has_state:  # MiniMax-M1: served up to 0.23.0 only
            print(f"skip {name}: vLLM {MODE_ALL_RELEASE_CHECKED} does not serve "
                  f"{load_preset(name).architectures[0]}")
    rows = mode_all_settings(served)
    bad = logged = 0
    for name, budget, block, flags in rows:
        spec = model_spec(name)
        engine = vllm_031_figures(vl, spec, budget, block, flags)
        ours = flatkv_mode_all_figures(spec, budget, block, flags)
        engine_log, our_log = engine.pop("log"), ours.pop("log")
        setting = (f"{name} B={budget:,} block={block} mode=all"
                   + "".join(f" {k}={v}" for k, v in flags.items()))
        same = report(f"vllm {MODE_ALL_RELEASE_CHECKED}", setting, engine, ours)
        if "refused" not in engine and "refused" not in ours:  # and the lines it logs
            same &= same_log(engine_log, our_log)
            logged += 1
        bad += not same
    bad += check_unasked_mla_blocks(vl)
    print(f"{len(rows)} mode-all settings and {len(UNASKED_MLA_ROWS)} dense MLA blocks told "
          f"none against vLLM {MODE_ALL_RELEASE_CHECKED} ({logged} with their start-up lines), "
          f"{bad} mismatches")
    return 1 if bad else 0


# MiniMax-M1 (MiniMaxM1ForCausalLM), which vLLM 0.34 and 0.31 no longer serve, against the
# last release that does (``vllm_releases.LAST_SERVED_IN``): its class, MiniMaxText01ForCausalLM
DROPPED_RELEASE_CHECKED = "0.23.0"
DROPPED_PRESET = "MiniMax-M1"
DROPPED_NAMES = {**{key: MODE_ALL_NAMES[key] for key in (
    "utils", "iface", "backend", "platform", "registry", "torch_utils", "configs", "interfaces")},
    "enums": "vllm.v1.attention.backends.registry",
    "minimax": "vllm.model_executor.models.minimax_text_01"}


def dropped_settings() -> list[tuple[int, int, str, dict]]:
    """(budget, block size, mamba cache mode, flags) rows of DROPPED_PRESET on vLLM 0.23.0:
    both budgets at block 16 in modes none and align, block 64 in align and all (which its
    class runs as align), each as started, with ``--mamba-ssm-cache-dtype float32`` (which the
    lightning state does not read) and with ``--mamba-cache-dtype float32`` (which it does);
    and at TP 8 (8 of its 64 heads a rank)."""
    rows = [(b, block, mode, flags) for b in BUDGETS
            for block, mode in ((16, "none"), (16, "align"), (64, "align"), (64, "all"))
            for flags in ({}, {"mamba_ssm_cache_dtype": "float32"},
                          {"mamba_cache_dtype": "float32"})]
    return rows + [(b, 16, "none", {"tp": 8}) for b in BUDGETS]


def vllm_023_figures(vl: NS, spec, budget: int, block: int, mode: str, flags: dict) -> dict:
    """vLLM 0.23.0's layout of a lightning-attention hybrid (MiniMaxText01ForCausalLM) from
    ``budget`` bytes of available KV-cache memory, or its refusal: its own MambaModelConfig
    hook (the mode it runs, the mamba block size), ``_align_hybrid_block_size`` on
    FLASH_ATTN, the lightning layers' MambaSpec from the
    class's state shape and dtype (``get_mamba_state_*_from_config``: heads / TP x head_dim x
    head_dim, in ``--mamba-cache-dtype``'s dtype, auto the model's), its
    ``get_kv_cache_configs`` and ``get_max_concurrency_for_kv_cache_config`` (0.23 logs
    int(concurrency x max_model_len) as its KV cache size, as 0.34 does)."""
    import torch

    cls = vl.minimax.MiniMaxText01ForCausalLM
    light, full = (next(k for k in spec.kinds.values() if type(k).__name__ == kind)
                   for kind in ("LightningLayer", "AttentionLayer"))
    hf = NS(architectures=list(spec.architectures), num_attention_heads=light.heads,
            head_dim=light.head_dim)
    cache = NS(block_size=block, mamba_cache_mode=mode, enable_prefix_caching=mode != "none",
               mamba_block_size=None, user_specified_mamba_block_size=False,
               mamba_page_size_padded=None, cache_dtype="auto", kv_cache_dtype_skip_layers=None,
               mamba_cache_dtype=flags.get("mamba_cache_dtype", "auto"),
               mamba_ssm_cache_dtype=flags.get("mamba_ssm_cache_dtype", "auto"),
               num_gpu_blocks_override=None)
    model = NS(max_model_len=CONTEXT, original_max_model_len=CONTEXT, dtype=torch.bfloat16,
               hf_config=hf, hf_text_config=hf, architecture=spec.architectures[0],
               use_mla=False, get_head_size=lambda: full.head_dim_k,
               supports_mamba_prefix_caching=vl.interfaces.supports_mamba_prefix_caching(cls),
               get_num_kv_heads=lambda parallel: max(1, full.kv_heads // spec.tp))
    vc = NS(cache_config=cache, model_config=model, speculative_config=None,
            kv_transfer_config=None, num_speculative_tokens=0,
            parallel_config=NS(tensor_parallel_size=spec.tp, pipeline_parallel_size=1,
                               decode_context_parallel_size=1,
                               prefill_context_parallel_size=1),
            scheduler_config=NS(max_num_batched_tokens=BATCHED, async_scheduling=False,
                                enable_chunked_prefill=True,
                                disable_hybrid_kv_cache_manager=False))
    vl.configs.MambaModelConfig.verify_and_update_config(vc)
    mode = cache.mamba_cache_mode  # (all runs as align: the class keeps no prefix of state)
    try:
        with mock.patch.object(vl.registry.ModelRegistry, "resolve_model_cls",
                               lambda arch, model_config=None: (cls, arch)):
            vl.platform.Platform._align_hybrid_block_size(vc, stand_in_backend(vl, "FLASH_ATTN"))
        kv_dtype = vl.torch_utils.get_kv_cache_torch_dtype(cache.cache_dtype, model.dtype)
        specs = {f"model.layers.{i}": vl.iface.FullAttentionSpec(
            block_size=cache.block_size, num_kv_heads=max(1, k.kv_heads // spec.tp),
            head_size=k.head_dim_k, head_size_v=k.head_dim_v, dtype=kv_dtype)
            if type(k).__name__ == "AttentionLayer" else vl.iface.MambaSpec(
            shapes=tuple(cls.get_mamba_state_shape_from_config(vc)),
            dtypes=cls.get_mamba_state_dtype_from_config(vc),
            block_size=cache.mamba_block_size,
            page_size_padded=cache.mamba_page_size_padded,
            mamba_type=vl.enums.MambaAttentionBackendEnum.LINEAR, mamba_cache_mode=mode)
            for i, k in enumerate(spec.layers)}
        cfg = vl.utils.get_kv_cache_configs(vc, [specs], [budget])[0]
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": (str(exc) or type(exc).__name__).splitlines()[0][:60]}
    concurrency = vl.utils.get_max_concurrency_for_kv_cache_config(vc, cfg)
    return {"mode": mode, "P": cache.block_size,
            "block_bytes": sum(t.size for t in cfg.kv_cache_tensors) // cfg.num_blocks,
            "num_blocks": cfg.num_blocks, "tokens": int(concurrency * CONTEXT),
            "concurrency": round(concurrency, 6)}


def check_dropped(directory: str) -> int:
    """DROPPED_PRESET's ``dropped_settings`` on vLLM 0.23.0's own code and FlatKV's ``vllm``
    strategy, one line each, then the totals; exit status 1 on a mismatch. FlatKV is told the
    lightning state's dtype as vLLM keeps it: ``--mamba-cache-dtype``'s, the preset's
    bfloat16 (the model's) where that is auto, whatever ``--mamba-ssm-cache-dtype`` says."""
    stub_modules("torchvision", "tvm_ffi", "xgrammar")
    sys.path.insert(0, str(Path(directory).resolve()))
    vl = NS(**{key: importlib.import_module(name) for key, name in DROPPED_NAMES.items()})
    rows, bad = dropped_settings(), 0
    # and at the edge: the least budget 0.23.0 starts at (bisected on its code) and 1 B under
    for block, mode in ((16, "none"), (64, "align")):
        least = least_starting_budget(lambda b, block=block, mode=mode: "refused" in (
            vllm_023_figures(vl, model_spec(DROPPED_PRESET), b, block, mode, {})))
        rows += [(least - under, block, mode, {}) for under in (0, 1)]
    for budget, block, mode, flags in rows:
        spec = model_spec(DROPPED_PRESET).with_options(tp=flags.get("tp", 1))
        engine = vllm_023_figures(vl, spec, budget, block, mode, flags)
        told = spec.with_options(ssm_dtype=flags.get("mamba_cache_dtype", spec.ssm_dtype))
        aligned = mode == "all" and runs_all_as_align(told.profile())  # FlatKV's word on it
        ours = {"mode": "align" if aligned else mode,
                **flatkv_figures(told, budget, block, mode, False, {})}
        setting = (f"{DROPPED_PRESET} B={budget:,} block={block} mode={mode}"
                   + "".join(f" {k}={v}" for k, v in flags.items()))
        bad += not report(f"vllm {DROPPED_RELEASE_CHECKED}", setting, engine, ours)
    print(f"{len(rows)} settings against vLLM {DROPPED_RELEASE_CHECKED}, {bad} mismatches")
    return 1 if bad else 0


# vLLM 0.19.0, the release whose "GPU KV cache size" FlatKV's older_logged_tokens is
# (vllm_releases.OLDER_VLLM_LOG): its own hybrid sizing, run on the presets where its layout
# may differ from a current one's (a block size above 16, drafted conv rows, Kimi Linear's
# MLA alignment, mamba cache mode all)
OLDER_RELEASE_CHECKED = "0.19.0"
OLDER_NAMES = {**{key: MODE_ALL_NAMES[key] for key in (
    "utils", "iface", "configs", "interfaces", "torch_utils", "model_config", "logger",
    "mamba_utils", "registry", "cache", "backend")},
    "coordinator": "vllm.v1.core.kv_cache_coordinator"}
OLDER_CLASSES = {**MODEL_CLASSES, "KimiLinearForCausalLM": "vllm.model_executor.models.kimi_linear",
                 "Qwen3_5ForConditionalGeneration": "vllm.model_executor.models.qwen3_5"}
OLDER_MAMBA_TYPES = {"Mamba2Layer": "mamba2", "Mamba1Layer": "mamba1",
                     "ShortConvLayer": "short_conv", "GDNLayer": "gdn_attention"}


def older_settings(presets: list[str]) -> list[tuple[str, int, str, dict]]:
    """(preset, block size, mamba cache mode, flags) rows for vLLM 0.19.0, at 40 GiB: every
    hybrid preset it serves at blocks 16 and 64 in modes none, align and all (no prefill
    checkpoint block: it has none); 1 and 2 drafted tokens on the Mamba2, GDN and KDA models
    at both blocks in align and none; mode all at block 1024 (above the state block); and
    Nemotron-H told a float32 ssm state, Kimi Linear a bfloat16 one."""
    rows = [(p, block, mode, {}) for p in presets for block in (16, 64)
            for mode in ("none", "align", "all")]
    rows += [(p, block, mode, {"speculative_tokens": n})
             for p in ("Falcon-H1-7B", "granite-4.0-h-small", "Nemotron-H-8B",
                       "Qwen3-Next-80B-A3B", "Kimi-Linear-48B-A3B") if p in presets
             for block in (16, 64) for mode in ("none", "align") for n in (1, 2)]
    rows += [(p, 1024, "all", {}) for p in ("Nemotron-H-8B", "Falcon-H1-7B")]
    # Nemotron-H told a float32 ssm state, the dtype 0.34 keeps it in unless told; Kimi Linear
    # told a bfloat16 one, which 0.34 keeps and 0.19 does not read
    rows += [("Nemotron-H-8B", block, mode, {"mamba_ssm_cache_dtype": "float32"})
             for block in (16, 64) for mode in ("align", "all")]
    rows += [("Kimi-Linear-48B-A3B", block, "align", {"mamba_ssm_cache_dtype": "bfloat16"})
             for block in (16, 64) if "Kimi-Linear-48B-A3B" in presets]
    return rows


def older_attention_settings(presets: list[str]) -> list[tuple[str, int, str, dict]]:
    """(preset, block size, mode, flags) rows of the attention-only presets for vLLM 0.19.0,
    at 40 GiB: blocks 16 and 64 (DeepSeek-V3.2's 16, under its sparse kernel block, as no
    ``--block-size`` told: FlatKV reads it as vLLM's own pick); DeepSeek-V3 on FLASHMLA
    (FlatKV told --kernel-block-size 64) with no block told (FlatKV's 16, under the kernel
    block: 0.19's pick is 64), and at a told 96, off its kernel block's multiples (refused on
    both sides)."""
    rows = [(p, block, "none", {"block_told": False} if p in SPARSE_MLA_PRESETS and block < 64
             else {}) for p in presets for block in (16, 64)]
    return rows + [("DeepSeek-V3", 16, "none", {"backend": "FLASHMLA", "block_told": False}),
                   ("DeepSeek-V3", 96, "none", {"backend": "FLASHMLA"})]


def older_backend(vl: NS, spec, flags: dict) -> list:
    """The attention backends vLLM 0.19.0 runs an attention-only preset's layers on, the first
    layer's first: the one a row asks for, else what cuda.py's _get_backend_priorities puts
    first on SM 9.0 (FLASH_ATTN; FLASH_ATTN_MLA for MLA; FLASHMLA_SPARSE for sparse MLA, whose
    indexer caches run on DeepseekV32IndexerBackend). Its own classes where they import without
    CUDA (flashmla.py, flashmla_sparse.py, indexer.py); FLASH_ATTN's and FLASH_ATTN_MLA's kernel
    blocks, MultipleOf(16) (flash_attn.py:72-89 off a hybrid, flashattn_mla.py:52-53), on 0.19's
    own AttentionBackend otherwise."""
    def module(name):
        return importlib.import_module(f"vllm.v1.attention.backends.{name}")
    base = vl.backend
    sparse = any(type(k).__name__ == "MLALayer" and k.index_head_dim for k in spec.layers)
    mla = any(type(k).__name__ == "MLALayer" for k in spec.layers)
    name = flags.get("backend") or ("FLASHMLA_SPARSE" if sparse else "FLASH_ATTN_MLA" if mla
                                    else "FLASH_ATTN")
    if name == "FLASHMLA_SPARSE":
        return [module("mla.flashmla_sparse").FlashMLASparseBackend,
                module("mla.indexer").DeepseekV32IndexerBackend]
    if name == "FLASHMLA":
        return [module("mla.flashmla").FlashMLABackend]
    return [type(name, (base.AttentionBackend,), {
        "get_supported_kernel_block_sizes": staticmethod(lambda: [base.MultipleOf(16)]),
        "get_name": staticmethod(lambda: name)})]


def older_attention_specs(vl: NS, spec, vc: NS, kv_dtype) -> dict:
    """Every cache layer's KVCacheSpec of an attention-only preset as vLLM 0.19.0's layers build
    them at the settled block size: Attention's (layers/attention/attention.py:537-560: a
    sliding layer's SlidingWindowSpec, else FullAttentionSpec), ChunkedLocalAttention's
    (chunked_local_attention.py:119-127), MLAAttention's (mla_attention.py:835-845) and
    DeepSeek-V3.2's DeepseekV32IndexerCache's (deepseek_v2.py:599-605, 660-668: fp8 keys and a
    float32 scale a 128 of them, as uint8)."""
    iface, block, tp = vl.iface, vc.cache_config.block_size, vc.parallel_config.tensor_parallel_size
    out = {}
    for i, k in enumerate(spec.layers):
        name = f"model.layers.{i}.{type(k).__name__}"
        if type(k).__name__ == "MLALayer":
            out[name] = iface.MLAAttentionSpec(
                block_size=block, num_kv_heads=1, head_size=k.kv_lora_rank + k.qk_rope_head_dim,
                dtype=kv_dtype, cache_dtype_str=vc.cache_config.cache_dtype)
            if k.index_head_dim:
                out[f"{name}.indexer.k_cache"] = iface.MLAAttentionSpec(
                    block_size=block, num_kv_heads=1,
                    head_size=k.index_head_dim + k.index_head_dim // 128 * 4,
                    dtype=iface.torch.uint8)
            continue
        shape = dict(block_size=block, num_kv_heads=max(1, k.kv_heads // tp),
                     head_size=k.head_dim_k, dtype=kv_dtype)
        out[name] = (iface.SlidingWindowSpec(**shape, sliding_window=k.sliding_window)
                     if k.sliding_window else iface.ChunkedLocalAttentionSpec(
                         **shape, attention_chunk_size=k.attention_chunk_size)
                     if k.attention_chunk_size else iface.FullAttentionSpec(
                         **shape, head_size_v=k.head_dim_v))
    return out


def vllm_019_figures(vl: NS, spec, budget: int, block: int, mode: str, flags: dict) -> dict:
    """vLLM 0.19.0's P and "GPU KV cache size" from ``budget`` bytes, or its refusal: its own
    config hooks as ``VllmConfig.try_verify_and_update_config`` runs them (the class's
    MODELS_CONFIG_MAP hook, then ``HybridAttentionMambaModelConfig``, which calls
    ``MambaModelConfig``: mode all kept or fallen back to align, P, the padded state page),
    every cache layer's spec as 0.19's layers build them (MambaMixer2's conv widened by
    drafted rows, ``layer_state_shape``; the others the class's shape), its
    ``get_kv_cache_configs`` (whose ``_report_kv_cache_config`` logs the line, taken from its
    log) and the KV cache coordinator its scheduler makes (``get_kv_cache_coordinator``, its
    hash block the smallest group block, engine/core.py:273)."""
    vl.logger._print_info_once.cache_clear()
    hf, drafted = hf_config(spec), flags.get("speculative_tokens", 0)
    if spec.mamba_chunk_size is not None:  # the config's chunk_size
        hf.chunk_size = spec.mamba_chunk_size
    # vllm serve --block-size B [--no-]enable-prefix-caching --mamba-cache-mode M on one GPU
    cache = NS(block_size=block, mamba_cache_mode=mode, enable_prefix_caching=mode != "none",
               mamba_block_size=None, mamba_page_size_padded=None, calculate_kv_scales=False,
               cache_dtype="auto", mamba_cache_dtype="auto",
               mamba_ssm_cache_dtype=flags.get("mamba_ssm_cache_dtype", "auto"),
               num_gpu_blocks_override=None)
    model = NS(max_model_len=CONTEXT, original_max_model_len=CONTEXT,
               dtype=getattr(vl.iface.torch, spec.kv_dtype),
               hf_config=hf, hf_text_config=hf, architecture=spec.architectures[0],
               model=spec.name,
               use_mla=any(type(k).__name__ == "MLALayer" for k in spec.kinds.values()))
    vc = NS(cache_config=cache, model_config=model, kv_transfer_config=None,
            # ngram drafting where tokens are drafted: no drafter layers
            speculative_config=NS(num_speculative_tokens=drafted, method="ngram",
                                  use_eagle=lambda: False) if drafted else None,
            num_speculative_tokens=drafted,
            parallel_config=NS(tensor_parallel_size=spec.tp, pipeline_parallel_size=1,
                               decode_context_parallel_size=1,
                               prefill_context_parallel_size=1),
            scheduler_config=NS(max_num_batched_tokens=BATCHED, enable_chunked_prefill=True,
                                disable_hybrid_kv_cache_manager=False),
            attention_config=NS(backend=None))  # no --attention-backend: not CUTLASS_MLA
    model.get_mamba_chunk_size = types.MethodType(vl.model_config.ModelConfig.get_mamba_chunk_size,
                                                  model)
    kinds = [type(k).__name__ for k in spec.layers]
    if not spec.profile().has_state:
        return older_attention_figures(vl, spec, vc, budget, flags)
    cls = vl.models[model.architecture]
    model.supports_mamba_prefix_caching = vl.interfaces.supports_mamba_prefix_caching(cls)
    shapes = {("mla" if n == "MLALayer" else "full"): (
        k.kv_lora_rank + k.qk_rope_head_dim if n == "MLALayer" else k)
        for k, n in zip(spec.layers, kinds) if n in ("MLALayer", "AttentionLayer")}
    tp = vc.parallel_config.tensor_parallel_size
    model.get_num_kv_heads = lambda parallel: 1 if model.use_mla else max(
        1, shapes["full"].kv_heads // parallel.tensor_parallel_size)
    model.get_head_size = lambda: shapes["mla"] if model.use_mla else shapes["full"].head_dim_k
    try:
        # (its lines kept for the size line, not printed: vLLM's own handlers set aside)
        with mock.patch.object(vl.registry.ModelRegistry, "resolve_model_cls",
                               lambda arch, model_config=None: (cls, arch)), \
                mock.patch.object(logging.getLogger("vllm"), "handlers", []), \
                logged_by_vllm() as log:
            if hook := vl.configs.MODELS_CONFIG_MAP.get(model.architecture):
                hook.verify_and_update_config(vc)
            vl.configs.HybridAttentionMambaModelConfig.verify_and_update_config(vc)
            kv_dtype = vl.torch_utils.get_kv_cache_torch_dtype(cache.cache_dtype, model.dtype)
            specs = {}
            for i, (k, n) in enumerate(zip(spec.layers, kinds)):
                name = f"model.layers.{i}.{n}"
                if n == "MLALayer":
                    specs[name] = vl.iface.MLAAttentionSpec(
                        block_size=cache.block_size, num_kv_heads=1,
                        head_size=k.kv_lora_rank + k.qk_rope_head_dim, dtype=kv_dtype,
                        cache_dtype_str=cache.cache_dtype)
                elif n == "AttentionLayer":
                    specs[name] = vl.iface.FullAttentionSpec(
                        block_size=cache.block_size, num_kv_heads=max(1, k.kv_heads // tp),
                        head_size=k.head_dim_k, head_size_v=k.head_dim_v, dtype=kv_dtype)
                else:
                    specs[name] = vl.iface.MambaSpec(
                        shapes=layer_state_shape(vl, cls, vc, k, n),
                        dtypes=cls.get_mamba_state_dtype_from_config(vc),
                        block_size=cache.mamba_block_size,
                        page_size_padded=cache.mamba_page_size_padded,
                        mamba_type=OLDER_MAMBA_TYPES[n], mamba_cache_mode=cache.mamba_cache_mode,
                        num_speculative_blocks=drafted)
            cfg = vl.utils.get_kv_cache_configs(vc, [specs], [budget])[0]
            vl.coordinator.get_kv_cache_coordinator(
                cfg, model.max_model_len, use_eagle=False,
                enable_caching=cache.enable_prefix_caching, enable_kv_cache_events=False,
                dcp_world_size=1, pcp_world_size=1,
                hash_block_size=min(g.kv_cache_spec.block_size for g in cfg.kv_cache_groups))
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": (str(exc) or type(exc).__name__).splitlines()[0][:60]}
    size = next(line for line in log if line.startswith("GPU KV cache size: "))
    return {"mode": cache.mamba_cache_mode, "P": cache.block_size,
            "tokens": int(size.split()[4].replace(",", ""))}


def older_attention_figures(vl: NS, spec, vc: NS, budget: int, flags: dict) -> dict:
    """vLLM 0.19.0's P and "GPU KV cache size" of an attention-only preset: no config hook
    sizes its block (HybridAttentionMambaModelConfig is a hybrid's), so P is --block-size where
    told, which the backend must take (``supports_block_size``, backend.py:170-186: else "No
    valid attention backend found", cuda.py), else ``update_block_size_for_backend``'s pick
    (platforms/interface.py:427-466): the first layer's backend's ``get_preferred_block_size``
    of 16 (config/cache.py:34), 64 on FlashMLA and FlashMLA sparse; then its layers' specs
    (``older_attention_specs``) and ``get_kv_cache_configs`` (its logged line). (Its
    coordinator asserts only a hybrid's hash block: not run.)"""
    cache, model = vc.cache_config, vc.model_config
    try:
        with mock.patch.object(logging.getLogger("vllm"), "handlers", []), \
                logged_by_vllm() as log:
            backends = older_backend(vl, spec, flags)
            if flags.get("block_told", True):
                for b in backends:
                    if not b.supports_block_size(cache.block_size):
                        raise ValueError(f"{b.get_name()} does not take block size "
                                         f"{cache.block_size}")
            else:
                cache.block_size = backends[0].get_preferred_block_size(
                    vl.cache.CacheConfig.DEFAULT_BLOCK_SIZE)
            kv_dtype = vl.torch_utils.get_kv_cache_torch_dtype(cache.cache_dtype, model.dtype)
            specs = older_attention_specs(vl, spec, vc, kv_dtype)
            vl.utils.get_kv_cache_configs(vc, [specs], [budget])
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": (str(exc) or type(exc).__name__).splitlines()[0][:60]}
    size = next(line for line in log if line.startswith("GPU KV cache size: "))
    return {"mode": cache.mamba_cache_mode, "P": cache.block_size,
            "tokens": int(size.split()[4].replace(",", ""))}


def flatkv_older_figures(spec, budget: int, block: int, mode: str, flags: dict) -> dict:
    """FlatKV's older vLLM log of the same run: ``older_logged_tokens`` and the P it counts
    (``extras["older_block_size"]`` where 0.19's is not the layout's), or its reason for none
    (``older_log_none``) as a refusal; the mode its layout ran in. The ssm dtype is FlatKV's
    own (Nemotron-H's: 0.19's NemotronH hook keeps the config's, else float16,
    models/config.py:483-500, where 0.34 keeps float32) unless the row tells one
    (``vllm_ssm_dtype``)."""
    kernel = 64 if flags.get("backend") == "FLASHMLA" else None  # --kernel-block-size 64
    r = run_strategy("vllm", spec.profile(), budget_bytes=budget, context_tokens=CONTEXT,
                     options=StrategyOptions(block_size=block, mamba_cache_mode=mode,
                                             kernel_block_size=kernel,
                                             vllm_ssm_dtype=flags.get("mamba_ssm_cache_dtype"),
                                             speculative_tokens=flags.get(
                                                 "speculative_tokens", 0)))
    if not r.applies or r.older_logged_tokens is None:
        return {"refused": (r.extras.get("older_log_none") or r.reason)[:60]}
    return {"mode": r.extras["mamba_cache_mode"],
            "P": r.extras.get("older_block_size", r.block_size),
            "tokens": r.older_logged_tokens}


def check_older(directory: str, current: str) -> int:
    """Every ``older_settings`` and ``older_attention_settings`` row on vLLM 0.19.0's own code
    and FlatKV's older log figure, one line each, and OLDER_UNSERVED_CLASSES made again from
    0.19.0's registry and the current release's (``current``, its unzipped wheel), then the
    totals; exit status 1 on a mismatch."""
    stub_modules("torchvision", "tvm_ffi", "xgrammar", "diskcache")
    sys.path.insert(0, str(Path(directory).resolve()))
    vl = NS(**{key: importlib.import_module(name) for key, name in OLDER_NAMES.items()})
    vl.models = {arch: getattr(importlib.import_module(m), arch)
                 for arch, m in OLDER_CLASSES.items() if arch != "BailingMoeV3ForCausalLM"}
    served = registry_classes(directory)
    hybrids = [p for p in list_presets() if load_preset(p).architectures[0] in vl.models
               and load_preset(p).profile().has_state and load_preset(p).profile().has_attention]
    attention = [p for p in list_presets() if load_preset(p).architectures[0] in served
                 and not load_preset(p).profile().has_state]
    rows = older_settings(hybrids) + older_attention_settings(attention)
    bad = 0
    for name, block, mode, flags in rows:
        spec, budget = model_spec(name), BUDGETS[0]
        engine = vllm_019_figures(vl, spec, budget, block, mode, flags)
        ours = flatkv_older_figures(spec, budget, block, mode, flags)
        setting = (f"{name} B={budget:,} block={block} mode={mode}"
                   + "".join(f" {k}={v}" for k, v in flags.items()))
        bad += not report(f"vllm {OLDER_RELEASE_CHECKED}", setting, engine, ours)
    bad += not check_older_unserved(served, registry_classes(current))
    print(f"{len(rows)} settings of {len(hybrids)} hybrid and {len(attention)} attention-only "
          f"presets against vLLM {OLDER_RELEASE_CHECKED}'s GPU KV cache size, and its "
          f"unserved classes, {bad} mismatches")
    return 1 if bad else 0


def registry_classes(directory: str) -> frozenset[str]:
    """The architectures an unzipped vLLM wheel's model registry serves: the keys of its
    ``_VLLM_MODELS`` (model_executor/models/registry.py), read from the file's syntax, not
    imported (0.34's and 0.19's are two packages of one name), each ``**_TABLE`` in it the
    keys of that table as the file defines it."""
    path = Path(directory) / "vllm" / "model_executor" / "models" / "registry.py"
    tables: dict[str, frozenset[str]] = {}
    for node in ast.parse(path.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and isinstance(node.value, ast.Dict):
            tables[target.id] = frozenset().union(*(
                tables.get(getattr(value, "id", ""), frozenset()) if key is None
                else {key.value} for key, value in zip(node.value.keys, node.value.values)))
    return tables["_VLLM_MODELS"]


def flatkv_classes() -> frozenset[str]:
    """Every model class FlatKV meets: transformers' classes of the model types it reads
    (hf_resolve.types_by_class), the classes it serves a type by (hf_resolve.SERVED_AS), its
    presets', and those vllm_releases tables (a model file or config may name them)."""
    tabled = {name for key, value in vars(vllm_releases).items()
              if key.isupper() and isinstance(value, (frozenset, dict))
              for name in value if isinstance(name, str)}
    presets = {a for p in list_presets() for a in load_preset(p).architectures}
    return frozenset(types_by_class()) | frozenset(HF_SERVED_AS.values()) | presets | tabled


def check_older_unserved(older: frozenset[str], current: frozenset[str]) -> bool:
    """vllm_releases.OLDER_UNSERVED_CLASSES made again: FlatKV's classes in the current
    release's registry (``current``) less those in 0.19.0's (``older``). One line: ``ok``, or
    ``BAD`` with the classes the table lacks and those it holds wrongly."""
    made = (flatkv_classes() & current) - older
    lacks = sorted(made - vllm_releases.OLDER_UNSERVED_CLASSES)
    wrong = sorted(vllm_releases.OLDER_UNSERVED_CLASSES - made)
    print(f"{'BAD' if lacks or wrong else 'ok'} vllm {OLDER_RELEASE_CHECKED} registry: "
          f"{len(current - older)} classes of the current release's not in its, "
          f"{len(made)} of them FlatKV's (OLDER_UNSERVED_CLASSES)"
          + (f"; the table lacks {', '.join(lacks)}" if lacks else "")
          + (f"; the table holds {', '.join(wrong)}, not among them" if wrong else ""))
    return not (lacks or wrong)


def main() -> int:
    """Run every setting on both sides, print them, and count the mismatches; with
    ``--random N``, N random settings instead (``random_setting``), the i-th drawn from seed
    S + i so that ``--random 1 --seed S+i`` repeats it alone."""
    directory, args = wheel_from_command_line(
        __doc__.splitlines()[0], "vllm", "0.34.0",
        ("vllm-all", f"instead: the unzipped vllm {MODE_ALL_RELEASE_CHECKED} wheel, to check "
         "mamba cache mode all against it (check_mode_all)"),
        ("vllm-dropped", f"instead: the unzipped vllm {DROPPED_RELEASE_CHECKED} wheel, to "
         f"check {DROPPED_PRESET}, which later releases do not serve, against it "
         "(check_dropped)"),
        ("vllm-older", f"instead: the unzipped vllm {OLDER_RELEASE_CHECKED} wheel, to check "
         "FlatKV's older vLLM log figure against its own (check_older)"),
        companions=(("vllm-current", "with --vllm-older: the unzipped vllm 0.34.0 wheel, whose "
                     "registry OLDER_UNSERVED_CLASSES is made from with 0.19.0's (default: the "
                     "vllm folder beside the --vllm-older one, as engine_checks.sh lays them "
                     "out)"),))
    if args.vllm_all:
        if args.random:  # (random_setting draws 0.34's settings, not mode all's)
            print("vllm_check.py: --random is not read with --vllm-all, whose settings are "
                  "fixed (mode_all_settings): leave out --random, or check vLLM 0.34 with --vllm",
                  file=sys.stderr)
            return 2
        return check_mode_all(directory)
    if args.vllm_dropped:
        if args.random:
            print("vllm_check.py: --random is not read with --vllm-dropped, whose settings are "
                  "fixed (dropped_settings): leave out --random", file=sys.stderr)
            return 2
        return check_dropped(directory)
    if args.vllm_older:
        if args.random:
            print("vllm_check.py: --random is not read with --vllm-older, whose settings are "
                  "fixed (older_settings): leave out --random", file=sys.stderr)
            return 2
        current = args.vllm_current or str(Path(directory).parent / "vllm")
        if not (Path(current) / "vllm" / "model_executor" / "models" / "registry.py").is_file():
            print(f"vllm_check.py: {current} holds no vllm/ package: give --vllm-current, the "
                  "unzipped vllm 0.34.0 wheel", file=sys.stderr)
            return 2
        return check_older(directory, current)
    vl = import_vllm(directory)
    presets, skipped, disputed = served_presets(vl)
    for name, why in skipped:
        print(f"skip {name}: {why}")
    for line in disputed:
        print(f"BAD {line}")
    mismatches = len(disputed)
    if args.random:
        for i in range(args.random):
            seed = args.seed + i
            if not check(vl, *random_setting(vl, random.Random(seed), presets)):
                mismatches += 1
                print(f"repro: python bench/vllm_check.py --vllm DIR --random 1 --seed {seed}")
        print(f"{args.random} random settings (seeds {args.seed} to "
              f"{args.seed + args.random - 1}), {mismatches} mismatches")
        return 1 if mismatches else 0
    rows = settings(presets)
    for name, budget, block, mode, flags in rows:
        spec = model_spec(name)
        windowed = any(getattr(k, "sliding_window", None) or getattr(
            k, "attention_chunk_size", None) for k in spec.layers)
        async_sched = windowed and mode == "align"  # 0.34's default goes with its block size
        if "architecture" in flags:  # the preset's shapes served by another class
            spec = dataclasses.replace(spec, architectures=(flags["architecture"],))
        if "config_ssm_cache_dtype" in flags:  # as a config.json naming it gives it
            spec = dataclasses.replace(
                spec, config_mamba_ssm_cache_dtype=flags["config_ssm_cache_dtype"])
        if "config_ssm_dtype" in flags:  # a config.json naming SGLang's mamba_ssm_dtype
            spec = dataclasses.replace(spec, config_mamba_ssm_dtype=flags["config_ssm_dtype"])
        if "ssm_dtype" in flags:  # the model's own ssm dtype, set by hand
            spec = spec.with_options(ssm_dtype=flags["ssm_dtype"])
        mismatches += not check(vl, spec, budget, block, mode, async_sched, flags, name)
    length_rows, length_bad = check_lengths(vl)
    checkpoint_rows, checkpoint_bad = check_checkpoint_blocks(vl)
    gpu_rows, gpu_bad = check_gpu_mla(vl)  # last: it serves CUDA-only modules as stubs
    modules = serve_attention_backends(vl)  # (after it: its stubs)
    attention_rows, attention_bad = check_gpu_attention(vl, presets, modules)
    told_rows, told_bad = check_told_blocks(vl, modules)
    mismatches += length_bad + checkpoint_bad + gpu_bad + attention_bad + told_bad
    print(f"{len(rows) + length_rows + checkpoint_rows + gpu_rows + attention_rows + told_rows}"
          f" settings, {mismatches} mismatches, {len(skipped)} preset(s) skipped")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
