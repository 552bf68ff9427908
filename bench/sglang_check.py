"""Check FlatKV's SGLang figures against SGLang 0.5.23's own pool-sizing code, on a CPU.

For each setting of ``settings()`` it runs SGLang's sizing functions on the preset's model
(``KVCacheConfigurator._handle_max_mamba_cache``, ``config_from_budget`` with its pool
configurators' ``calculate_pool_sizes``, ``resolve_max_num_reqs``, ``_calculate_mamba_ratio``,
and the radix-cache mode from ``arg_groups/overrides.py``'s ``_mamba_radix_cache_resolution``)
and prints its pools beside FlatKV's ``sglang`` strategy, one line each, then
``N settings, M mismatches; K presets SGLang does not serve skipped (...)``. Every preset is
either checked (``PRESETS``) or, where SGLang serves no model of its architecture, skipped on a
line of its own that says why, beside FlatKV's refusal, which it must give. Exit status 1 if
any figure differs (or one side refuses where the other starts, or FlatKV applies to a model
SGLang does not serve, or a preset SGLang serves is not checked), else 0. No GPU is needed: it
runs on a CPU, CUDA-only modules served as stubs.

Then the config.json files of ``engine_common.LENGTH_CONFIGS``: SGLang's own
``get_context_length`` on each beside the length FlatKV gives SGLang (2,048 where the config
gives none, as FlatKV's note says). And SGLang's admission reservation for a whole prefill
(``estimate_swa_kv_tokens``, mem_cache/prefill_budget.py) beside FlatKV's port of it, which its
sliding-pool concurrency with chunked prefill off reads (``check_swa_admission``).

SGLang is taken as launched on one Hopper GPU (``--tp-size`` of them in random settings;
device capability 9.0 where it asks: ``HOPPER``; the B200 rows aside, below) with
``--context-length 32768`` (FlatKV's context is its context_len, which sets
max_running_requests' estimate), its default triton
linear-attention backend and radix cache (with the extra buffer, its start-up checks of the page,
the drafted tokens and the state's chunk against ``--mamba-track-interval``, 256 or the row's
``sglang_mamba_track_interval``: ``resolve_radix_cache``; its "auto" strategy, or the row's
``--mamba-radix-cache-strategy`` extra_buffer_lazy, extra_buffer or no_buffer,
``sglang_mamba_radix_cache_strategy``: ``told_strategy_rows``), and the
setting's ``--page-size``,
``--disable-overlap-schedule``, ``--mamba-full-memory-ratio`` and ``--swa-full-tokens-ratio``.
Without speculative decoding, except the rows that draft N tokens (``speculative_tokens``,
FlatKV's option of that name, on the state models FlatKV models it for, a model of state
layers alone among them, and on models without state, whose max_running_requests alone it
moves): there SGLang runs
``--speculative-algorithm NEXTN --speculative-num-steps N --speculative-eagle-topk 1`` with no
draft model path (an MTP drafter, as Qwen3-Next and Qwen3.5 are served), and its bags are what
``arg_groups/speculative_hook._handle_eagle_family`` resolves those to, set here by hand (that
hook needs a whole ServerArgs): the algorithm EAGLE (NEXTN's alias), D = N + 1 tokens verified
(``speculative_num_draft_tokens``, topk 1) and ``max_running_requests`` 48; no
``eagle_draft_num_layers`` (``_resolve_eagle_aux_hidden_state`` sets none for a path-less
drafter whose config names no ``num_nextn_predict_layers``), ReplaySSM off (its default).
The rows that tell ``--max-running-requests`` M (``sglang_max_running_requests``, FlatKV's
option of that name) set it in the schedule bag, where the hook would leave it (it sets 48 only
where none is told); ``resolve_max_num_reqs`` and ``_handle_max_mamba_cache`` read it there.
Those that tell ``--max-mamba-cache-size`` (``sglang_max_mamba_cache_size``) set it there too.
The rows with ``--disable-radix-cache`` (``sglang_disable_radix_cache``) set it in the memory
bag and in the view the radix-cache resolution reads (which then picks no mamba radix cache);
``--chunked-prefill-size``, which SGLang's SWA request cap reads, is its 8,192 on an 80 GB
Hopper GPU, or FlatKV's ``sglang_chunked_prefill_size`` where a row sets that (the GPU
presets' own, which SGLang picks by the GPU's memory: ``check_chunk_defaults`` runs its
``handle_gpu_memory_settings`` beside FlatKV's ``sglang_default_chunked_prefill``), or -1 or 0,
chunked prefill off (``CHUNK_OFF``): SGLang's bags hold the value as told, FlatKV's options the
value its command line makes of it (``--chunked-prefill-size 0`` is -1 there).

The rows with ``--attn-dp-size`` D (``sglang_attn_dp_size``, FlatKV's option; SGLang's older
``--enable-dp-attention --dp-size D`` turns into it: parallel_hook.handle_deprecated_dp_attention)
run the model at a TP D divides (``dp_tp``): the parallel bag's attn_tp_size tp // D and
attn_dp_size D, the configurator's attn_dp_size D (ModelRunner's), and the prefill chunk
``chunked_prefill_size // D``, as handle_data_parallelism declares it (restated: that hook reads
a whole ServerArgs); SGLang's own code then divides max_running_requests and
max_mamba_cache_size per group and splits the heads over attn_tp_size.

A model of state layers alone (``STATE_ONLY``: Mamba-Codestral-7B's config.json shape, no preset
holds one) is built from its config fields by FlatKV and as SGLang's own ``Mamba2Config``; its
model config is set as SGLang's ModelConfig derives one for PURE_SSM_ARCHITECTURES
(``pure_ssm_configurator``), and it is checked at short contexts too (its token pool is the
context). So are two Mamba1 models of state layers alone (``MAMBA1_MODELS``: state-spaces
Mamba's and Falcon-Mamba's shapes), as SGLang's own ``MambaConfig`` / ``FalconMambaConfig``
(their full-rank state, whatever the config's mamba_ssm_dtype), also at the 2,048 tokens SGLang
assumes for their config.json (the others' 32,768 is SGLang's with
SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1); drafting on them is refused, as SGLang's Mamba1
mixer asserts at its first verify (restated in ``sglang_figures``: no sizing code reaches it).

``--random N --seed S`` checks N random settings instead (``random_setting``): the presets'
(and three times in twenty the models of state layers alone') shapes, tp, dtypes, page, overlap,
ratios, context and budget perturbed within what SGLang starts with; a mismatch prints a
one-line repro (``--random 1 --seed`` of its own seed).

Last, the B200 rows (``b200_rows``, ``check_b200``): SGLang as launched on a B200
(``B200_PLATFORM``: compute capability 10.0, SM100 and Blackwell where its platform facts are
asked, its --chunked-prefill-size its own for a B200's memory) with no --attention-backend,
--page-size told or not: its own resolution of the backend and page (``b200_resolution``: the
model overrides and passes that pick them, in its pipeline's order), then its pools at that
page, beside FlatKV's at the B200 preset (``sm100_backend``, ``sglang_default_page``); on the
state models and attention models whose backend SGLang picks by model there, overlap on and
off, with and without 3 drafted tokens (where SGLang runs another page than the one told, or
refuses, FlatKV's side follows the note the app and CLI show: ``sm100_refusal``; and
DeepSeek-V3.2, whose fp8_e4m3 KV cache SGLang stores there in its trtllm DSA backends' raw
layout, which FlatKV's ``blackwell`` (its capability's), set by the B200 preset, takes, and which
--kv-cache-dtype bfloat16 told keeps in bfloat16, FlatKV's ``sglang_kv_cache_dtype``:
``b200_rows`` says how). Before them DeepSeek-V3.2 on a Hopper told each of bfloat16,
fp8_e4m3 and fp8_e5m2 (``dsa_kv_rows``; SGLang refuses the last for DeepSeek's sparse attention),
and in the model KV dtypes float32 and float16 (``dsa_model_kv_rows``), which SGLang cannot be
told: its auto keeps bfloat16 there, or told bfloat16, whatever the model's dtype; and its
config with learnable attention sinks (``SINKS``, config.json's learnable_sink) told each of the
three, which SGLang keeps in bfloat16 on a B200 too and refuses fp8 for.

Then DeepSeek's sparse attention on the SM 8.x GPU presets (``check_sm8x_dsa``: the A100s' 8.0,
the L40S's and RTX 4090's 8.9, ``sm8x_platform``): DeepSeek-V3.2, its config with learnable
sinks, GLM-5 and LongCat-Flash with an indexer, told no --kv-cache-dtype and each of the three.
SGLang 0.5.23's start-up code refuses none of them for the GPU: its DSA resolution reads the
compute capability only to split SM 10 from the rest (bfloat16 when told none, flashmla_sparse
and fa3 for bfloat16, flashmla_kv for fp8_e4m3, as on a Hopper), so its pool holds a Hopper's
bytes there, which FlatKV gives at that ``gpu_compute_capability``.

``bench/engine_checks.sh`` fetches SGLang's wheel, unzips it (nothing of it is installed), makes a
venv for its imports and runs this script as ``python bench/sglang_check.py --sglang DIR``, DIR
the unzipped wheel; CI runs it after the tests.

What is whose: FlatKV's inputs are the preset's model shape (layer pattern, heads, head dims,
latent and indexer dims, state dims, conv kernel, window or chunk, dtypes), turned into SGLang's
own config classes here (``sglang_hf_config``); the budget is the ``rest_memory`` SGLang's
profiler hands its sizing. SGLang's outputs are everything else: whether it serves the
architecture (its model registry's ``EntryClass`` names, then its transformers fallback's
``resolve_transformers_arch``), the page size DeepSeek's sparse attention runs at (its DeepSeek
override provider), that model's KV dtype and backends (``_dsa_kv_cache_dtype_default``,
``_dsa_split_backend_resolution``), the state bytes per slot (its ``mamba2_cache_params``), the
KV bytes per token (its configurators' cell sizes, MLA's latent and DSA's index keys too), the
window it reports (``resolve_sliding_window_size``: gpt-oss's model file, else the config's
window, else Llama 4's chunk), whether a model gets the hybrid SWA pool and which layers, the
radix-cache mode and slots per request, the pools, max_running_requests and any refusal, and
with speculative decoding the draft-token buffers its MambaPool allocates (``draft_buffers``).
Nothing FlatKV computes enters SGLang's side.
"""

from __future__ import annotations

import importlib
import random
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace as NS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_common import (  # noqa: E402  (bench/, this folder)
    FALCON_MAMBA_ONLY,
    LENGTH_CONFIGS,
    MAMBA1_ONLY,
    STATE_ONLY,
    edge_or_random_budget,
    model_spec,
    perturb_spec,
    random_context,
    random_running_requests,
    random_state_slots,
    report,
    show,
    spec_label,
    stub_modules,
    wheel_from_command_line,
)

from flatkv.budget import (  # noqa: E402
    BLACKWELL_CAPABILITY,
    GPU_COMPUTE_CAPABILITIES,
    GPU_PRESETS,
    MiB,
    capability_text,
)
from flatkv.hf_config import spec_from_hf_config  # noqa: E402
from flatkv.hf_length import ASSUMED_MAX_MODEL_LEN  # noqa: E402
from flatkv.presets import list_presets, load_preset  # noqa: E402
from flatkv.strategies import StrategyOptions, run_strategy  # noqa: E402
from flatkv.strategies.sglang import (  # noqa: E402
    estimate_swa_kv_tokens,
    page_size,
    sglang_default_chunked_prefill,
    sglang_default_page,
    sm100_backend,
    sm100_refusal,
)
from flatkv.strategy_cli import chunked_prefill_argument  # noqa: E402

GIB = 1 << 30
CONTEXT = 32_768
OVERLAP_MATTERS = ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Falcon-H1-7B", "Kimi-Linear-48B-A3B",
                   "granite-4.0-h-small", "Qwen3.5-27B")
PRESETS = OVERLAP_MATTERS + ("LFM2-1.2B", "gpt-oss-20b", "gpt-oss-120b", "Llama-3.1-8B",
                             "DeepSeek-V3", "DeepSeek-V3.2", "Llama-4-Scout-17B-16E")
BUDGETS = (40 * GIB, 12_345_678_901)
# state hybrids served with an MTP drafter, checked at D = 2, 3 and 4 (N = 1 to 3 drafted), at
# TP 1 and 2 (``SPECULATIVE_TP``)
SPECULATIVE = ("Qwen3-Next-80B-A3B", "Qwen3.5-27B")
SPECULATIVE_TP = (1, 2)
# models without state drafted for (EAGLE, MTP): full, sliding and chunked attention, and MLA
SPECULATIVE_STATELESS = ("Llama-3.1-8B", "gpt-oss-20b", "Llama-4-Scout-17B-16E", "DeepSeek-V3")
# --max-running-requests told (FlatKV's sglang_max_running_requests): under the state cap, past
# it, and past T // 2; on state hybrids (GDN, Mamba2) and models without state (full, sliding,
# MLA), with and without drafted tokens, at TP 1 and 2 (``SPECULATIVE_TP``)
TOLD_RUNNING = (1, 20, 100, 10**7)
TOLD_RUNNING_PRESETS = ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Llama-3.1-8B", "gpt-oss-20b",
                        "DeepSeek-V3")
# --max-mamba-cache-size told (sglang_max_mamba_cache_size): under one request's S slots, at
# it, hundreds, and more than 40 GiB holds at TP 1; on a GDN, a Mamba2 and an MLA + KDA hybrid
TOLD_SLOTS = (4, 5, 100, 1000)
TOLD_SLOTS_PRESETS = ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Kimi-Linear-48B-A3B")
# --disable-radix-cache (sglang_disable_radix_cache): a running request holds one state slot,
# and with max_running_requests N set (told, or the hook's 48 drafting) the state is N + 1 slots
# and a hybrid SWA pool is sized from SGLang's request cap; on GDN, Mamba2, short-conv and MLA +
# KDA hybrids, sliding and chunked attention, full attention, and state layers alone
RADIX_OFF = {"sglang_disable_radix_cache": True}
CHUNK = "sglang_chunked_prefill_size"  # --chunked-prefill-size
DP = "sglang_attn_dp_size"  # --attn-dp-size (--enable-dp-attention --dp-size)
TRACK = "sglang_mamba_track_interval"  # --mamba-track-interval (SGLang's default 256)
STRATEGY = "sglang_mamba_radix_cache_strategy"  # --mamba-radix-cache-strategy (auto)
TOLD = "sglang_max_running_requests"  # --max-running-requests
SLOTS = "sglang_max_mamba_cache_size"  # --max-mamba-cache-size
# --chunked-prefill-size off: SGLang's -1, and 0, which it reads the same (any value <= 0)
CHUNK_OFF = (-1, 0)
# the chunks SGLang picks on FlatKV's GPU presets when told none (4,096, 8,192, 16,384)
GPU_CHUNKS = tuple(sorted({sglang_default_chunked_prefill(b) for b in GPU_PRESETS.values()}))
RADIX_OFF_PRESETS = ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "LFM2-1.2B", "Kimi-Linear-48B-A3B",
                     "gpt-oss-20b", "Llama-4-Scout-17B-16E", "Llama-3.1-8B")
RADIX_OFF_DRAFTED = ("Qwen3-Next-80B-A3B", "Qwen3.5-27B", "gpt-oss-20b",
                     "Llama-4-Scout-17B-16E")
# the model of state layers alone (engine_common.STATE_ONLY, SGLang's PURE_SSM_ARCHITECTURES):
# its contexts beside CONTEXT: the token pool of no layers is context_len tokens (T // 2 = 0
# under 2, a page over the context leaves none), so the context moves max_running_requests
STATE_ONLY_CONTEXTS = (1, 2, 63, 64, 65, 1000)
# Mamba1 models of state layers alone (engine_common's state-spaces Mamba and Falcon-Mamba
# shapes: SGLang's PURE_MAMBA1_ARCHITECTURES), checked as STATE_ONLY is, and at 2,048 tokens
# (the length SGLang assumes for their config.json, which gives none)
MAMBA1_MODELS = (MAMBA1_ONLY, FALCON_MAMBA_ONLY)
# a model file's "EntryClass = Name" or "EntryClass = [Name, ...]", at the start of a line
ENTRY_CLASS = re.compile(r"^EntryClass\s*=\s*(\[[^\]]*\]|\w+)", re.MULTILINE)
# SGLang's --kv-cache-dtype names, torch's: FlatKV's model KV dtype told (``told_kv_options``)
KV_DTYPES = {"bfloat16": "bfloat16", "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}
KV = "kv_cache_dtype"  # a B200 row's --kv-cache-dtype, told (``b200_rows``)
# DeepSeek's sparse attention told each --kv-cache-dtype on a Hopper (``dsa_kv_rows``)
DSA_TOLD_KV = ("bfloat16", "fp8_e4m3", "fp8_e5m2")
# FlatKV's model KV dtypes SGLang takes no --kv-cache-dtype of (fields/model.py 209-218), so
# that a DeepSeek DSA model in one runs its auto (bfloat16 below SM 10, fp8_e4m3 on a B200) or
# a told bfloat16: ``dsa_model_kv_rows``, ``b200_rows``
DSA_MODEL_KV = ("float32", "float16")
MODEL_KV = "model_kv_dtype"  # a B200 row's FlatKV model KV dtype, SGLang told none of it
EDGE = "edge"  # the least budget SGLang starts at (found by bisection on SGLang), and 1 B less


Rows = list[tuple[str, object, int, bool, dict]]  # (preset, budget, page, overlap, ratios)


def settings() -> Rows:
    """Every (preset, budget, page, overlap, ratios) row the check runs, a group of rows for
    each of SGLang's options that moves its pools (each group's function says what it covers
    and why): the pools themselves, drafting, told max_running_requests and state slots, the
    models of state layers alone, --disable-radix-cache, chunked prefill off, the two ratios,
    prefill chunks against the page, attention DP, the track interval and the told radix
    cache strategies. The groups print in this order."""
    return [*pool_rows(), *drafting_rows(), *told_running_rows(), *told_slots_rows(),
            *state_only_rows(), *mamba1_rows(), *radix_off_rows(), *chunk_off_rows(),
            *radix_off_edge_rows(), *ratio_rows(), *page_chunk_rows(), *attention_dp_rows(),
            *track_interval_rows(), *told_strategy_rows()]


def pool_rows() -> Rows:
    """Every preset's pools at both budgets and pages 1 and 64, overlap off too where it sets
    the radix-cache mode (the extra_buffer architectures, ``OVERLAP_MATTERS``), and each preset
    at its refusal edge: the rows every other group varies one option of."""
    rows = [(p, b, page, True, {}) for p in PRESETS for b in BUDGETS for page in (1, 64)]
    rows += [(p, b, page, False, {}) for p in OVERLAP_MATTERS for b in BUDGETS
             for page in (1, 64)]
    rows += [(p, EDGE, 1, True, {}) for p in PRESETS]
    return rows


def drafting_rows() -> Rows:
    """Tokens drafted (``speculative_tokens`` N): on the state hybrids served with an MTP
    drafter (``SPECULATIVE``) at N = 1 to 3, whose draft-token buffers come out of the state
    budget, and at their refusal edge; on models without state, where drafting leaves the pools
    and moves max_running_requests to the speculative hook's 48."""
    rows = [(p, b, page, True, {"speculative_tokens": n}) for p in SPECULATIVE
            for b in BUDGETS for page in (1, 64) for n in (1, 2, 3)]
    rows += [(p, EDGE, 1, True, {"speculative_tokens": 3}) for p in SPECULATIVE]
    rows += [(p, b, 1, True, {"speculative_tokens": 3}) for p in SPECULATIVE_STATELESS
             for b in BUDGETS]
    return rows


def told_running_rows() -> Rows:
    """--max-running-requests told (``TOLD_RUNNING``: under the state cap, past it, past
    T // 2) on state hybrids and models without state, with and without drafted tokens (which
    size the draft-token buffers by it), and at the refusal edge."""
    rows = [(p, b, page, True, {TOLD: m}) for p in TOLD_RUNNING_PRESETS for b in BUDGETS
            for page in (1, 64) for m in TOLD_RUNNING]
    rows += [(p, b, 1, True, {"speculative_tokens": 3, TOLD: m})
             for p in (*SPECULATIVE, "Llama-3.1-8B") for b in BUDGETS for m in TOLD_RUNNING]
    rows += [(p, EDGE, 1, True, {TOLD: 1}) for p in ("Qwen3-Next-80B-A3B", "Llama-3.1-8B")]
    rows += [("Qwen3-Next-80B-A3B", EDGE, 1, True, {"speculative_tokens": 3, TOLD: 100})]
    return rows


def told_slots_rows() -> Rows:
    """--max-mamba-cache-size told (``TOLD_SLOTS``: under one request's slots, at it, hundreds,
    more than the budget holds), which fixes the state whatever the budget: alone, beside
    drafting (with and without a told max_running_requests, which sizes the buffers), and at
    the refusal edge."""
    rows = [(p, b, page, True, {SLOTS: m}) for p in TOLD_SLOTS_PRESETS for b in BUDGETS
            for page in (1, 64) for m in TOLD_SLOTS]
    rows += [(p, b, 1, True, {"speculative_tokens": 3, SLOTS: m, **more}) for p in SPECULATIVE
             for b in BUDGETS for m in TOLD_SLOTS for more in ({}, {TOLD: 8})]
    rows += [(p, EDGE, 1, True, {SLOTS: 100}) for p in TOLD_SLOTS_PRESETS]
    rows += [("Qwen3-Next-80B-A3B", EDGE, 1, True, {"speculative_tokens": 3, SLOTS: 100})]
    return rows


def state_only_rows() -> Rows:
    """The Mamba2 model of state layers alone (``STATE_ONLY``), whose token pool has no layers:
    its pools at both overlaps, the edge, told running requests and slots, another ratio, and
    drafting (its slots solved with their draft-token buffers), told running requests or slots
    beside it, and at its refusal edge."""
    rows = [(STATE_ONLY, b, page, overlap, {}) for b in BUDGETS for page in (1, 64)
            for overlap in (True, False)]
    rows += [(STATE_ONLY, EDGE, 1, True, {}), (STATE_ONLY, EDGE, 1, True, {SLOTS: 100})]
    rows += [(STATE_ONLY, b, page, True, {TOLD: m}) for b in BUDGETS for page in (1, 64)
             for m in TOLD_RUNNING]
    rows += [(STATE_ONLY, b, page, True, {SLOTS: m, **more}) for b in BUDGETS
             for page in (1, 64) for m in TOLD_SLOTS for more in ({}, {TOLD: 8})]
    rows += [(STATE_ONLY, b, 1, True, {"mamba_full_memory_ratio": r}) for b in BUDGETS
             for r in (0.1, 0.5, 2.0)]
    rows += [(STATE_ONLY, b, page, True, {"speculative_tokens": n}) for b in BUDGETS
             for page in (1, 64) for n in (1, 2, 3)]
    rows += [(STATE_ONLY, b, 1, True, {"speculative_tokens": 3, **more}) for b in BUDGETS
             for more in ({TOLD: 4}, {TOLD: 100}, {SLOTS: 5}, {SLOTS: 20, TOLD: 4})]
    rows += [(STATE_ONLY, EDGE, 1, True, {"speculative_tokens": 3})]
    return rows


def mamba1_rows() -> Rows:
    """The Mamba1 models of state layers alone (``MAMBA1_MODELS``: MambaConfig's and
    FalconMambaConfig's full-rank state): the pools, the edge, told running requests and
    slots, drafting (refused: their mixer verifies no drafted tokens), another ratio."""
    rows = []
    for name in MAMBA1_MODELS:
        rows += [(name, b, page, overlap, {}) for b in BUDGETS for page in (1, 64)
                 for overlap in (True, False)]
        rows += [(name, EDGE, 1, True, {})]
        rows += [(name, b, 64, True, {TOLD: m}) for b in BUDGETS for m in TOLD_RUNNING]
        rows += [(name, b, 1, True, {SLOTS: m}) for b in BUDGETS for m in TOLD_SLOTS]
        rows += [(name, b, 1, True, {"speculative_tokens": n}) for b in BUDGETS
                 for n in (1, 3)]
        rows += [(name, BUDGETS[1], 1, True, {"mamba_full_memory_ratio": 0.5})]
    return rows


def radix_off_rows() -> Rows:
    """--disable-radix-cache (``RADIX_OFF``), where a running request holds one state slot and
    a told or drafted max_running_requests N sizes the state (N + 1 slots) and the hybrid SWA
    pool (SGLang's request cap): the pools at both overlaps and pages with N told under and
    past the pools, drafting (the hook's 48; N told beside it), told slots, and smaller and
    GPU-default prefill chunks and chunked prefill off (the SWA request cap reads the chunk).
    Their refusal edges are in ``radix_off_edge_rows``."""
    rows = [(p, b, page, overlap, {**RADIX_OFF, **more}) for p in RADIX_OFF_PRESETS
            for b in BUDGETS for page in (1, 64) for overlap in (True, False)
            for more in ({}, {TOLD: 64}, {TOLD: 10**7})]
    rows += [(p, b, page, overlap, {**RADIX_OFF, "speculative_tokens": n, **more})
             for p in RADIX_OFF_DRAFTED for b in BUDGETS for page in (1, 64)
             for overlap in (True, False) for n in (1, 3) for more in ({}, {TOLD: 8})]
    rows += [(p, b, 1, True, {**RADIX_OFF, SLOTS: 100, **more})
             for p in ("Qwen3-Next-80B-A3B", "Kimi-Linear-48B-A3B") for b in BUDGETS
             for more in ({}, {"speculative_tokens": 3}, {TOLD: 8})]
    rows += [(p, b, 64, overlap, {**RADIX_OFF, TOLD: 8, CHUNK: chunk})
             for p in ("gpt-oss-20b", "Llama-4-Scout-17B-16E") for b in BUDGETS
             for overlap in (True, False) for chunk in (2048, *GPU_CHUNKS, *CHUNK_OFF)]
    return rows


def chunk_off_rows() -> Rows:
    """Chunked prefill off (``CHUNK_OFF``): no SWA request cap (the ratio sizes the sliding
    pool, radix cache off or on, N told or drafted) and no page-size check of a chunk; on
    sliding, chunked, state-hybrid and full-attention models, and at the refusal edge."""
    rows = [(p, b, page, True, {CHUNK: chunk, **more})
            for p in ("gpt-oss-20b", "Llama-4-Scout-17B-16E", "Qwen3-Next-80B-A3B",
                      "Llama-3.1-8B") for b in BUDGETS for page in (1, 64)
            for chunk in CHUNK_OFF
            for more in ({}, RADIX_OFF, {**RADIX_OFF, TOLD: 64},
                         {**RADIX_OFF, "speculative_tokens": 3})]
    rows += [(p, EDGE, 1, True, {CHUNK: -1, **more})
             for p in ("gpt-oss-20b", "Llama-4-Scout-17B-16E")
             for more in ({}, {**RADIX_OFF, TOLD: 64})]
    return rows


def radix_off_edge_rows() -> Rows:
    """--disable-radix-cache at each preset's refusal edge (N told, drafting), and on the
    model of state layers alone, whose state the told or drafted N sizes too (its pools, N
    told, drafting, told slots, its edge)."""
    rows = [(p, EDGE, 1, True, {**RADIX_OFF, **more}) for p in RADIX_OFF_PRESETS
            for more in ({}, {TOLD: 64})]
    rows += [(p, EDGE, 1, True, {**RADIX_OFF, "speculative_tokens": 3})
             for p in RADIX_OFF_DRAFTED]
    rows += [(STATE_ONLY, b, page, True, {**RADIX_OFF, **more}) for b in BUDGETS
             for page in (1, 64)
             for more in ({}, {TOLD: 20}, {"speculative_tokens": 3}, {SLOTS: 5})]
    rows += [(STATE_ONLY, EDGE, 1, True, {**RADIX_OFF, TOLD: 20})]
    return rows


def ratio_rows() -> Rows:
    """The two ratios moved off their defaults twice each: --mamba-full-memory-ratio on a GDN
    and a Mamba2 hybrid, --swa-full-tokens-ratio on gpt-oss's sliding window and Llama 4's
    chunk."""
    return [("Qwen3-Next-80B-A3B", 40 * GIB, 64, True, {"mamba_full_memory_ratio": 0.5}),
            ("gpt-oss-20b", 12_345_678_901, 1, True, {"swa_full_tokens_ratio": 0.3}),
            ("Llama-4-Scout-17B-16E", 12_345_678_901, 64, True, {"swa_full_tokens_ratio": 0.3}),
            ("granite-4.0-h-small", 12_345_678_901, 64, True, {"mamba_full_memory_ratio": 0.5})]


def page_chunk_rows() -> Rows:
    """SGLang's check that the prefill chunk is whole pages: 1,000 tokens are 125 pages of 8,
    not of 64; the default 8,192 is no whole number of pages of 3; chunked prefill off never
    asks (no chunk: validation_hook.py 243)."""
    rows = [(p, BUDGETS[0], page, True, {CHUNK: 1000}) for p in ("gpt-oss-20b", "Llama-3.1-8B")
            for page in (8, 64)]
    rows += [("Llama-3.1-8B", BUDGETS[0], 3, True, {})]
    rows += [(p, BUDGETS[0], 3, True, {CHUNK: chunk}) for p in ("gpt-oss-20b", "Llama-3.1-8B")
             for chunk in CHUNK_OFF]
    return rows


def attention_dp_rows() -> Rows:
    """--attn-dp-size D (``sglang_attn_dp_size``) at the largest TP of 8, 4 and 2 the model
    splits over (``dp_tp``), every D of ``DP_SIZES`` dividing it: every preset's pools (and the
    models of state layers alone, whose state SGLang splits over the whole TP), told running
    requests and slots (a group takes N // D and M // D, refused at 0), drafting (the hook's
    48 // D), the radix cache off, prefill chunks that D leaves off whole pages (refused) or at
    0 tokens (off), and the refusal edges."""
    dps = [(p, d) for p in (*PRESETS, STATE_ONLY, *MAMBA1_MODELS) for d in DP_SIZES
           if dp_tp(p) % d == 0]
    rows = [(p, b, page, True, {DP: d}) for p, d in dps for b in BUDGETS for page in (1, 64)]
    rows += [(p, b, 1, True, {DP: d, TOLD: m}) for p, d in dps if p in TOLD_RUNNING_PRESETS
             for b in BUDGETS for m in (1, 20, 10**7)]
    rows += [(p, b, 1, True, {DP: d, SLOTS: m}) for p, d in dps
             if p in (*TOLD_SLOTS_PRESETS, STATE_ONLY) for b in BUDGETS for m in TOLD_SLOTS]
    rows += [(p, b, 1, True, {DP: d, "speculative_tokens": 3, **more}) for p, d in dps
             if p in (*SPECULATIVE, *SPECULATIVE_STATELESS, STATE_ONLY) for b in BUDGETS
             for more in ({}, {TOLD: 20})]
    rows += [(p, BUDGETS[0], 64, overlap, {DP: d, **RADIX_OFF, **more}) for p, d in dps
             if p in RADIX_OFF_PRESETS for overlap in (True, False)
             for more in ({}, {TOLD: 64}, {"speculative_tokens": 3})]
    rows += [(p, BUDGETS[0], page, True, {DP: d, CHUNK: chunk, **more}) for p, d in dps
             if p in ("gpt-oss-20b", "Llama-4-Scout-17B-16E", "Llama-3.1-8B", "DeepSeek-V3.2")
             for page in (64, 256) for chunk in (4, 1024, 2048, *CHUNK_OFF)
             for more in ({}, {**RADIX_OFF, TOLD: 64})]
    rows += [(p, EDGE, 1, True, {DP: d, **more}) for p, d in dps if d == 8
             for more in ({}, {**RADIX_OFF, TOLD: 64})]
    return rows


def told_strategy_rows() -> Rows:
    """--mamba-radix-cache-strategy told (``sglang_mamba_radix_cache_strategy``), each strategy
    at the overlap it starts at (``_told_strategy_rows``): extra_buffer_lazy with overlap
    scheduling, extra_buffer and no_buffer without it."""
    return [row for strategy, overlap in (("extra_buffer_lazy", True), ("extra_buffer", False),
                                          ("no_buffer", False))
            for row in _told_strategy_rows(strategy, overlap)]


def _told_strategy_rows(strategy: str, overlap: bool) -> Rows:
    """One told strategy's rows: on the models SGLang runs with its extra_buffer radix cache
    (``OVERLAP_MATTERS``) at both budgets, pages 1 and 64 and both overlaps; at ``overlap``
    (the one where it starts: lazy with it, 3 + 1; extra_buffer and no_buffer without it,
    where extra_buffer's 3 + 1 at page 1 is not auto's no_buffer 3) the refusal edge, drafting
    1 and 3 tokens, told running requests and told state slots (the ratio they are divided
    by); with the radix cache off (unread); and on models without the extra buffer (LFM2: the
    extra buffer refused, no_buffer with overlap), without a mamba radix cache (state layers
    alone, Llama 3, gpt-oss: the extra buffer "needs mamba state", no_buffer unread), at both
    overlaps. Refused elsewhere: lazy without overlap (_calculate_mamba_ratio's assert),
    no_buffer with it or past page 1."""
    told = {STRATEGY: strategy}
    rows = [(p, b, page, on, told) for p in OVERLAP_MATTERS for b in BUDGETS
            for page in (1, 64) for on in (True, False)]
    rows += [(p, EDGE, 1, overlap, told) for p in OVERLAP_MATTERS]
    rows += [(p, b, 1, overlap, {**told, "speculative_tokens": n}) for p in SPECULATIVE
             for b in BUDGETS for n in (1, 3)]
    rows += [(p, BUDGETS[0], 1, overlap, {**told, TOLD: m})
             for p in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B") for m in (20, 10**7)]
    rows += [(p, BUDGETS[0], 1, overlap, {**told, SLOTS: m})
             for p in TOLD_SLOTS_PRESETS for m in TOLD_SLOTS]
    rows += [(p, BUDGETS[0], 64, on, {**told, **RADIX_OFF}) for p in OVERLAP_MATTERS
             for on in (True, False)]
    rows += [(p, BUDGETS[0], 1, on, told) for p in ("LFM2-1.2B", STATE_ONLY, "Llama-3.1-8B",
                                                     "gpt-oss-20b") for on in (True, False)]
    return rows


def track_interval_rows() -> Rows:
    """--mamba-track-interval T (``sglang_mamba_track_interval``) on the models SGLang runs
    with its extra_buffer radix cache (``OVERLAP_MATTERS``): pages of 512 at 256 (refused)
    and at 512, 1,024 at 512 (refused); 384 at 512 with whole prefill chunks (8,448 = 22 x
    384: refused, 384 not dividing 512); 96 at 384 (8,064 = 84 x 96: refused, 96 neither
    dividing nor a multiple of the state's chunk); T of 64, 128 and 1,024 at page 1 (a Mamba2
    model's chunk of 128 or 256 refuses the smaller); tokens drafted past T (N 3, D 4, at T 2
    and 4); and without the extra buffer (overlap off at page 1: no_buffer; the radix cache
    off) T checked by nothing."""
    rows = [(p, b, page, True, {TRACK: t}) for p in OVERLAP_MATTERS for b in BUDGETS
            for page, t in ((512, 256), (512, 512), (1024, 512))]
    rows += [(p, BUDGETS[0], page, True, {TRACK: t, CHUNK: chunk}) for p in OVERLAP_MATTERS
             for page, t, chunk in ((384, 512, 8448), (96, 384, 8064), (384, 768, 8448))]
    rows += [(p, BUDGETS[0], 1, True, {TRACK: t}) for p in OVERLAP_MATTERS
             for t in (64, 128, 1024)]
    rows += [(p, BUDGETS[0], 1, True, {TRACK: t, "speculative_tokens": 3}) for p in SPECULATIVE
             for t in (2, 4)]
    rows += [(p, BUDGETS[0], 1, False, {TRACK: 64}) for p in OVERLAP_MATTERS]
    rows += [(p, BUDGETS[0], 512, True, {**RADIX_OFF, TRACK: 64}) for p in OVERLAP_MATTERS]
    return rows


DP_SIZES = (2, 4, 8)  # --attn-dp-size D of the rows that set it


def dp_tp(name: str) -> int:
    """The TP a row with attention DP runs the model at: the largest of 8, 4 and 2 it splits
    over (Falcon-H1's 4: its query heads), 1 where none."""
    spec = model_spec(name)
    return next((tp for tp in (8, 4, 2) if spec.splits_over(tp)), 1)


def import_sglang(directory: str) -> NS:
    """SGLang's sizing modules from the unzipped wheel, CUDA-only imports stubbed."""
    stub_modules("torchvision", "tvm_ffi")  # CUDA-built, never called by the sizing
    sys.path.insert(0, str(Path(directory).resolve()))
    names = {"kvc": "sglang.srt.mem_cache.kv_cache_configurator",
             "pools": "sglang.srt.model_executor.pool_configurator",
             "overrides": "sglang.srt.arg_groups.overrides",
             "hooks": "sglang.srt.arg_groups.mamba_hook",
             "arch": "sglang.srt.configs.hybrid_arch",
             "model_config": "sglang.srt.configs.model_config",
             "configs": "sglang.srt.configs",
             "gpt_oss": "sglang.srt.models.gpt_oss",
             "spec": "sglang.srt.speculative.spec_info",
             "memory_pool": "sglang.srt.mem_cache.memory_pool",
             "text_config": "sglang.srt.utils.hf_transformers.common",
             "load_model": "sglang.srt.model_executor.model_runner_components.load_model_utils",
             "loader": "sglang.srt.model_loader.utils",
             "deepseek": "sglang.srt.arg_groups.model_overrides.deepseek_v2",
             "model_hook": "sglang.srt.arg_groups.model_hook",
             "server_args": "sglang.srt.server_args",
             "arg_utils": "sglang.srt.arg_groups.arg_utils", "msgspec": "msgspec",
             "override_base": "sglang.srt.arg_groups.model_override_base"}
    sg = NS(**{key: importlib.import_module(name) for key, name in names.items()})
    sg.native = registered_architectures(Path(directory) / "sglang" / "srt" / "models")
    # the row's GPU's compute capability (``HOPPER``'s 9.0, ``B200_PLATFORM``'s 10.0), where
    # torch is asked directly
    sg.kvc.torch.cuda.get_device_capability = (
        lambda device=None: _NOW.bags.platform.device_capability)
    # no draft model fused into the pools; a subclass, as the dataclass has slots
    sg.Configurator = type("OneGpuConfigurator", (sg.kvc.KVCacheConfigurator,),
                           {"fused_entry_bytes": lambda self, sub_pool: None})
    return sg


def registered_architectures(models: Path) -> frozenset[str]:
    """The architectures SGLang's ModelRegistry serves with a model of its own: the
    ``EntryClass`` names of ``sglang/srt/models/*.py`` (registry.import_model_classes), read from
    the files rather than imported (importing every model file takes long on a CPU, and the
    registry drops one that fails to import without a word)."""
    names = set()
    for path in models.glob("*.py"):
        for value in ENTRY_CLASS.findall(path.read_text(encoding="utf-8")):
            names.update(re.findall(r"\w+", value))
    return frozenset(names)


def unserved_reason(sg: NS, spec) -> str | None:
    """Why SGLang serves no model of the preset's architecture (None where it does): not on
    its registry (``registered_architectures``), and its fallback to the transformers
    implementation (model_loader/utils.py's ``resolve_transformers_arch``, run here) refuses it,
    or takes it through its generic Transformers backend, which keeps no state pool."""
    hf = sglang_hf_config(sg, spec)
    if hf.architectures[0] in sg.native:
        return None
    model = NS(hf_config=hf, hf_text_config=hf, model_impl=sg.model_config.ModelImpl.AUTO,
               model_path=spec.name, revision=None, is_generation=True, is_multimodal=False)
    try:
        backend = sg.loader.resolve_transformers_arch(model, list(hf.architectures))
    except ValueError as exc:
        return f"{hf.architectures[0]} is not on its registry, and {exc}"
    return (f"{hf.architectures[0]} is not on its registry: only its generic {backend[0]} "
            "runs it, which sizes no state pool")


_NOW = NS(bags=None, patched=set())  # the setting's bags, and the modules pointed at them
_GETTERS = {"get_schedule": lambda: _NOW.bags.schedule, "get_memory": lambda: _NOW.bags.memory,
            "get_exec": lambda: _NOW.bags.exec, "get_parallel": lambda: _NOW.bags.parallel,
            "get_spec": lambda: _NOW.bags.spec, "get_disagg": lambda: _NOW.bags.disagg,
            "get_context": lambda: _NOW.bags.context,
            "linear_attn_tp_size": lambda: _NOW.bags.parallel.attn_tp_size,
            # the row's GPU: a Hopper one (``HOPPER``), or a B200 for ``b200_rows``
            "get_platform": lambda: _NOW.bags.platform}
# SGLang's platform facts (runtime_context.get_platform: ``_PLATFORM_PROBES`` 1824-1840 and
# ``_PLATFORM_VALUES``, which a launched server reads from utils/common.py's
# is_sm100_supported, is_blackwell_supported, is_hopper_with_cuda_12_3, get_device_capability)
# for the GPUs the check runs as: an 80 GB Hopper (H100, compute capability 9.0, CUDA 12.3 or
# later), the default; a B200 (10.0: SM100, Blackwell) for ``b200_rows``. FlashInfer is
# installed on both, as SGLang's CUDA wheel requires it.
_CUDA = dict(is_cuda=True, is_musa=False, is_xpu=False, is_npu=False, is_hip=False,
             is_mps=False, has_amx=False, has_flashinfer=True, is_sm110=False, is_sm120=False)
HOPPER = NS(**_CUDA, is_sm90=True, is_sm100=False, is_sm100_or_sm110=False,
            is_blackwell=False, is_hopper_with_cuda_12_3=True, device_capability=(9, 0),
            device_sm=90)
B200_PLATFORM = NS(**_CUDA, is_sm90=False, is_sm100=True, is_sm100_or_sm110=True,
                   is_blackwell=True, is_hopper_with_cuda_12_3=False,
                   device_capability=(10, 0), device_sm=100)
# The SM 8.x GPU presets' platforms (A100: 8.0; L40S, RTX 4090: 8.9) for ``check_sm8x_dsa``:
# neither SM90 nor SM100, no CUDA-12.3 Hopper
SM8X_GPUS = {gpu: capability for gpu, capability in GPU_COMPUTE_CAPABILITIES.items()
             if capability[0] == 8}


def sm8x_platform(capability: tuple[int, int]) -> NS:
    """SGLang's platform facts on an SM 8.x GPU of ``capability`` (an A100's 8.0, an Ada's 8.9)."""
    return NS(**_CUDA, is_sm90=False, is_sm100=False, is_sm100_or_sm110=False,
              is_blackwell=False, is_hopper_with_cuda_12_3=False, device_capability=capability,
              device_sm=capability[0] * 10 + capability[1])


def install_stand_ins(bags: NS) -> None:
    """Point every loaded SGLang module's ``get_schedule`` / ``get_memory`` / ``get_exec`` /
    ``get_parallel`` / ``get_spec`` / ``get_context`` at ``bags``, as a launched server's
    runtime context would answer them for one GPU (the bags' platform), no speculative
    decoding and the options of the setting; ``get_context().override`` writes the schedule
    bag, as SGLang's does. A module is pointed once, at getters that read the bags of the
    setting being run; the modules loaded since the last call are pointed too."""
    _NOW.bags = bags
    if len(_NOW.patched) == len(sys.modules):
        return
    for name, module in list(sys.modules.items()):
        if name.startswith("sglang.") and name not in _NOW.patched:
            for getter, fn in _GETTERS.items():
                if hasattr(module, getter):
                    setattr(module, getter, fn)
    _NOW.patched = set(sys.modules)


def new_bags(page: int, overlap: bool, ratios: dict, tp: int = 1,
             platform: NS = HOPPER) -> NS:
    """The server options SGLang's sizing reads: its defaults, with the setting's page size,
    overlap scheduling, ratios (``--mamba-full-memory-ratio``, ``--swa-full-tokens-ratio``),
    ``--tp-size`` (attention and linear attention over all of it) and speculative decoding where
    the setting drafts tokens (``speculative_tokens`` N: the module docstring says how); with
    ``--attn-dp-size`` D (``sglang_attn_dp_size``, FlatKV's option) attention over tp // D ranks
    (runtime_context.derive_attn_tp_size) and the prefill chunk over D."""
    steps = ratios.get("speculative_tokens", 0)
    dp = ratios.get(DP, 1)
    told = ratios.get("sglang_max_running_requests")  # --max-running-requests, else the hook's
    spec = (NS(speculative_algorithm="EAGLE", speculative_num_steps=steps,
               speculative_eagle_topk=1, speculative_num_draft_tokens=steps + 1,
               max_speculative_num_draft_tokens=None) if steps
            else NS(speculative_algorithm=None, speculative_num_draft_tokens=None))
    schedule = NS(page_size=page, disable_overlap_schedule=not overlap,
                  max_running_requests=told if told is not None else 48 if steps else None,
                  max_mamba_cache_size=ratios.get("sglang_max_mamba_cache_size"),
                  max_total_tokens=None,
                  # --chunked-prefill-size: SGLang's 8,192 on an 80 GB Hopper GPU
                  # (memory_hook.py 132-140, as FlatKV assumes where told none), else the
                  # row's (the GPU presets' own: GPU_CHUNKS, which check_chunk_defaults checks)
                  # with attention DP, // D: restated, unavoidable (parallel_hook.py 326-335,
                  # handle_data_parallelism, reads a whole ServerArgs); -1 // D stays -1, off
                  chunked_prefill_size=ratios.get(CHUNK, 8192) // dp,
                  mamba_full_memory_ratio=ratios.get("mamba_full_memory_ratio", 0.9),
                  swa_full_tokens_ratio=ratios.get("swa_full_tokens_ratio", 0.8))
    # no published ServerArgs (declare_resolution reads it: none while resolving)
    context = NS(override=lambda source, **fields: vars(schedule).update(fields),
                 server_args=None)
    return NS(schedule=schedule, context=context, platform=platform,
              memory=NS(disable_radix_cache=ratios.get("sglang_disable_radix_cache", False),
                        enable_unified_memory=False,
                        enable_hisparse=False, enable_hierarchical_cache=False,
                        enable_unified_cache_external_linker=False),
              exec=NS(kernel=NS(dsa_prefill_backend=None, dsa_decode_backend=None),
                      mamba=NS(enable_mamba_extra_buffer=False,
                               mamba_track_interval=ratios.get(TRACK, 256),
                               mamba_radix_cache_strategy=ratios.get(STRATEGY, "auto"),
                               enable_mamba_extra_buffer_lazy=False,
                               enable_linear_replayssm_spec=False)),
              parallel=NS(tp_size=tp, attn_tp_size=tp // dp, attn_dp_size=dp, attn_dcp_size=1,
                          attn_cp_size=1, pp_size=1,
                          enable_dsa_cache_layer_split=False, enable_kv_cache_sharding=False),
              spec=spec,
              disagg=NS(disaggregation_mode="null"))


def sglang_hf_config(sg: NS, spec) -> object:
    """The preset's model as SGLang's own config class for its architecture (so SGLang computes
    the state shapes and layer ids), transformers' where SGLang takes that one and it derives
    fields (Llama 4's text_config), or a plain namespace of config.json fields for the models
    whose SGLang config is transformers' and read field by field (gpt-oss, Llama 3, DeepSeek;
    also Jamba and MiniMax, which SGLang only looks up). Only model shape goes in: the fields
    every config shares (``ConfigBasics``), then its architecture's own (``HF_CONFIGS``), else
    MLA's (``mla_fields``), else the attention layers' (``attention_fields``)."""
    basics = ConfigBasics.of(spec)
    if build := HF_CONFIGS.get(spec.architectures[0]):
        return build(sg, spec, basics)
    if "MLALayer" in basics.kinds:
        return mla_fields(basics)
    return attention_fields(spec, basics)


@dataclass(frozen=True)
class ConfigBasics:
    """What every architecture's config is built from: its layer kinds by class name (one of
    each), whether each layer is ``full`` (attention, MLA) or ``state``, and the config.json
    fields every config shares (``common``: architecture, layer count, a full attention
    layer's KV heads and head dim, and the config's mamba_ssm_dtype, which SGLang reads)."""

    kinds: dict
    names: tuple[str, ...]
    common: dict

    @classmethod
    def of(cls, spec) -> ConfigBasics:
        """The basics of the preset's model ``spec``."""
        kinds = {type(k).__name__: k for k in spec.kinds.values()}
        attn = next((k for k in spec.kinds.values() if type(k).__name__ == "AttentionLayer"
                     and k.sliding_window is None), None)
        names = tuple("full" if type(k).__name__ in ("AttentionLayer", "MLALayer") else "state"
                      for k in spec.layers)
        common = dict(architectures=[spec.architectures[0]], num_hidden_layers=len(spec.layers))
        if attn is not None:
            common.update(num_key_value_heads=attn.kv_heads, head_dim=attn.head_dim_k)
        if spec.config_mamba_ssm_dtype is not None:  # a config.json field, as SGLang reads it
            common["mamba_ssm_dtype"] = spec.config_mamba_ssm_dtype
        if spec.learnable_sink:  # another, which SGLang's DSA dtype and backends read
            common["learnable_sink"] = True
        return cls(kinds, names, common)

    def text_fields(self) -> dict:
        """``common`` less the architecture: what a multimodal config's text_config takes."""
        return {k: v for k, v in self.common.items() if k != "architectures"}


def gdn_fields(basics: ConfigBasics) -> dict:
    """A GDN hybrid's fields as Qwen3-Next's config names them (Qwen3.5's text_config too):
    a full attention layer every ``full_attention_interval`` layers, and the GDN heads."""
    g = basics.kinds["GDNLayer"]
    return dict(full_attention_interval=basics.names.index("full") + 1,
                linear_num_key_heads=g.k_heads, linear_num_value_heads=g.v_heads,
                linear_key_head_dim=g.head_dim_k, linear_value_head_dim=g.head_dim_v,
                linear_conv_kernel_dim=g.conv_kernel)


def qwen3_next_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Qwen3-Next as SGLang's Qwen3NextConfig."""
    return sg.configs.Qwen3NextConfig(**basics.common, **gdn_fields(basics))


def qwen3_5_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Qwen3.5 as SGLang's Qwen3_5Config: Qwen3-Next's fields, in its text_config."""
    return sg.configs.Qwen3_5Config(architectures=[spec.architectures[0]], text_config=dict(
        **basics.text_fields(), **gdn_fields(basics)))


def nemotron_h_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Nemotron-H as SGLang's NemotronHConfig: its layers as a pattern of ``*`` (attention)
    and ``M`` (Mamba2)."""
    m = basics.kinds["Mamba2Layer"]
    return sg.configs.NemotronHConfig(
        **basics.common,
        hybrid_override_pattern="".join("*" if x == "full" else "M" for x in basics.names),
        mamba_num_heads=m.n_heads, mamba_head_dim=m.head_dim, n_groups=m.n_groups,
        ssm_state_size=m.d_state, conv_kernel=m.conv_kernel, **mamba2_chunk(spec))


def mamba2_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """A Mamba2 model of state layers alone as SGLang's Mamba2Config."""
    m = basics.kinds["Mamba2Layer"]
    hf = sg.configs.Mamba2Config(
        **basics.common, hidden_size=m.n_heads * m.head_dim, expand=1, num_heads=m.n_heads,
        head_dim=m.head_dim, n_groups=m.n_groups, state_size=m.d_state,
        conv_kernel=m.conv_kernel)
    # Stand-in, unavoidable: SGLang's Mamba2Config.mamba2_cache_params reads
    # intermediate_size, which transformers' Mamba2Config set as int(expand x hidden_size)
    # in earlier releases and the installed 5.25 no longer sets (SGLang 0.5.23 pins 5.19);
    # it is that product (= num_heads x head_dim, as transformers checks), the width
    # Mamba2's mixer sizes its conv channels by. Set only where the class gives none.
    if not hasattr(hf, "intermediate_size"):
        hf.intermediate_size = hf.expand * hf.hidden_size
    return hf


def mamba1_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """A Mamba1 model of state layers alone as SGLang's own MambaConfig / FalconMambaConfig
    (configs/mamba.py), whose mamba2_cache_params lay the state out full-rank (head_dim 1,
    conv over d_inner alone); hidden_size x expand = intermediate_size, as transformers derives
    it where a config gives none."""
    m = basics.kinds["Mamba1Layer"]
    cls = (sg.configs.MambaConfig if spec.architectures[0] == "MambaForCausalLM"
           else sg.configs.FalconMambaConfig)
    return cls(**basics.common, hidden_size=m.d_inner, expand=1, intermediate_size=m.d_inner,
               state_size=m.d_state, conv_kernel=m.conv_kernel)


def falcon_h1_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Falcon-H1 as SGLang's FalconH1Config: every layer has attention and a Mamba2 mixer, so
    it counts the model's layers, not its cache layers."""
    m = basics.kinds["Mamba2Layer"]
    return sg.configs.FalconH1Config(
        **{**basics.common, "num_hidden_layers": spec.model_layers},
        mamba_d_ssm=m.n_heads * m.head_dim, mamba_n_heads=m.n_heads,
        mamba_d_head=m.head_dim, mamba_n_groups=m.n_groups, mamba_d_state=m.d_state,
        mamba_d_conv=m.conv_kernel, **mamba2_chunk(spec))


def kimi_linear_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Kimi Linear as SGLang's KimiLinearConfig: MLA's latent, and its KDA and full attention
    layers by their 1-based ids."""
    g, mla = basics.kinds["GDNLayer"], basics.kinds["MLALayer"]
    ids = {kind: [i + 1 for i, x in enumerate(basics.names) if x == kind]
           for kind in ("state", "full")}
    return sg.configs.KimiLinearConfig(
        **basics.common, kv_lora_rank=mla.kv_lora_rank, qk_rope_head_dim=mla.qk_rope_head_dim,
        linear_attn_config={"kda_layers": ids["state"], "full_attn_layers": ids["full"],
                            "num_heads": g.v_heads, "head_dim": g.head_dim_v,
                            "short_conv_kernel_size": g.conv_kernel})


def lfm2_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """LFM2 as SGLang's Lfm2Config: its short-conv layers' channels and kernel, and its
    layer types."""
    c = basics.kinds["ShortConvLayer"]
    return sg.configs.Lfm2Config(
        **basics.common, hidden_size=c.channels, conv_L_cache=c.conv_kernel,
        layer_types=["full_attention" if x == "full" else "conv" for x in basics.names])


def granite_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Granite 4.0-H as SGLang's GraniteMoeHybridConfig, whose d_inner is mamba_expand x
    hidden_size."""
    m = basics.kinds["Mamba2Layer"]
    return sg.configs.GraniteMoeHybridConfig(
        **basics.common, hidden_size=m.n_heads * m.head_dim // 2, mamba_expand=2,
        layer_types=["attention" if x == "full" else "mamba" for x in basics.names],
        mamba_n_heads=m.n_heads, mamba_d_head=m.head_dim, mamba_n_groups=m.n_groups,
        mamba_d_state=m.d_state, mamba_d_conv=m.conv_kernel, **mamba2_chunk(spec))


def llama4_config(sg: NS, spec, basics: ConfigBasics) -> object:
    """Llama 4 as transformers' Llama4Config, which SGLang takes: its chunk in text_config."""
    chunk = next(k.attention_chunk_size for k in spec.layers
                 if getattr(k, "attention_chunk_size", None))
    return sg.loader.transformers.Llama4Config(
        architectures=[spec.architectures[0]],
        text_config=dict(**basics.text_fields(), attention_chunk_size=chunk))


def mla_fields(basics: ConfigBasics) -> NS:
    """DeepSeek: config.json's fields, as its model config reads them (MLA's latent, and
    V3.2's indexer with its config.json's index_topk)."""
    mla = basics.kinds["MLALayer"]
    hf = NS(**basics.common, kv_lora_rank=mla.kv_lora_rank,
            qk_rope_head_dim=mla.qk_rope_head_dim)
    if mla.index_head_dim is not None:
        hf.index_head_dim, hf.index_topk = mla.index_head_dim, 2048
    return text_model(hf)


def attention_fields(spec, basics: ConfigBasics) -> NS:
    """A model of attention layers (gpt-oss, Llama 3; Jamba and MiniMax, which SGLang only looks
    up): config.json's fields, its sliding window and each layer's type."""
    sliding = [k.sliding_window for k in spec.layers if getattr(k, "sliding_window", None)]
    return text_model(NS(**basics.common, sliding_window=sliding[0] if sliding else None,
                         layer_types=["sliding_attention" if getattr(k, "sliding_window", None)
                                      else "full_attention" for k in spec.layers]))


def text_model(hf: NS) -> NS:
    """``hf`` answering ``get_text_config()`` with itself, as PretrainedConfig does for a text
    model: SGLang's model config reads the text model's fields through it."""
    hf.get_text_config = lambda: hf
    return hf


# the architectures SGLang sizes from a config class of its own (or transformers'), each built
# by its function from the preset's shape (``sglang_hf_config``)
HF_CONFIGS = {"Qwen3NextForCausalLM": qwen3_next_config,
              "NemotronHForCausalLM": nemotron_h_config,
              "Mamba2ForCausalLM": mamba2_config,
              "MambaForCausalLM": mamba1_config, "FalconMambaForCausalLM": mamba1_config,
              "FalconH1ForCausalLM": falcon_h1_config,
              "KimiLinearForCausalLM": kimi_linear_config,
              "Lfm2ForCausalLM": lfm2_config,
              "GraniteMoeHybridForCausalLM": granite_config,
              "Qwen3_5ForConditionalGeneration": qwen3_5_config,
              "Llama4ForConditionalGeneration": llama4_config}


def mamba2_chunk(spec) -> dict:
    """A Mamba2 hybrid's chunk as its SGLang config takes it (``mamba_chunk_size``), where the
    model gives one (its config's mamba_chunk_size or chunk_size: Nemotron-H-8B's and
    Falcon-H1-7B's 128): the class's default (256) otherwise, as SGLang would read that config.
    The extra buffer's page and track-interval checks read it."""
    return {} if spec.mamba_chunk_size is None else {"mamba_chunk_size": spec.mamba_chunk_size}


def served_page(sg: NS, hf, page: int) -> int:
    """The page size SGLang runs the model at: ``--page-size``, unless its DeepSeek family's
    override provider (arg_groups/model_overrides/deepseek_v2.py, run here as on a CUDA GPU
    other than Blackwell, every other option at its default) sets another (DSA's 64)."""
    provider = sg.deepseek._deepseek_family_overrides
    if provider not in sg.override_base._MODEL_OVERRIDE_FNS.get(hf.architectures[0], ()):
        return page
    args = NS(page_size=page, dcp_size=1, enable_prefill_cp=False, attention_backend=None,
              prefill_attention_backend=None, decode_attention_backend=None)
    return provider(args, hf).get("page_size", page)


def configurator(sg: NS, spec, hf, context: int, page: int, kv_dtype: str | None = None,
                 drafting: bool = False):
    """SGLang's KVCacheConfigurator for the model, its fields set as ModelRunner sets them
    (one GPU, no draft); SGLang's own helpers decide the language model's config, the state
    config, the hybrid SWA pool and its layers, and the window the model reports. ``hf``:
    the model's config (``sglang_hf_config``); ``kv_dtype``: SGLang's own pick where it makes
    one (``resolve_dsa``), else the model's."""
    text = sg.text_config.get_hf_text_config(hf) if hasattr(hf, "to_dict") else hf
    attn = next((k for k in spec.kinds.values() if hasattr(k, "kv_heads")), None)
    mla = any(type(k).__name__ == "MLALayer" for k in spec.kinds.values())
    arch_enum = sg.model_config.AttentionArch
    if any(a in sg.model_config.PURE_SSM_ARCHITECTURES for a in hf.architectures):
        return pure_ssm_configurator(sg, spec, hf, context, page, kv_dtype, drafting)
    model = NS(hf_config=hf, hf_text_config=text, context_len=context, is_draft_model=False,
               linear_attn_registry_result=None, attention_arch=arch_enum.MLA if mla
               else arch_enum.MHA, is_multimodal=False, quantization=None,
               kv_lora_rank=getattr(hf, "kv_lora_rank", None),
               qk_rope_head_dim=getattr(hf, "qk_rope_head_dim", None),
               head_dim=attn and attn.head_dim_k, v_head_dim=attn and attn.head_dim_v,
               swa_head_dim=attn and attn.head_dim_k, swa_v_head_dim=attn and attn.head_dim_v,
               # ModelConfig.get_num_kv_heads / get_swa_num_kv_heads: replicated past the heads
               get_num_kv_heads=lambda tp, dcp=1: max(1, attn.kv_heads // (tp // dcp)),
               get_swa_num_kv_heads=lambda tp: max(1, attn.kv_heads // tp))
    is_swa = sg.model_config.is_hybrid_swa_model(hf.architectures, text)
    full_ids, swa_ids = list(range(text.num_hidden_layers)), []
    window = None
    if is_swa:
        swa_ids, full_ids = sg.model_config.get_hybrid_layer_ids(hf.architectures, text)
        # the window as ModelRunner resolves it: the model class's own (gpt-oss's, its one
        # model file here that reports one), else the config's window, else its chunk
        model.is_hybrid_swa = True
        model.sliding_window_size = sg.model_config.ModelConfig._get_sliding_window_size(model)
        model.attention_chunk_size = getattr(text, "attention_chunk_size", None)
        reports = (NS(get_attention_sliding_window_size=lambda: sg.gpt_oss
                      .get_attention_sliding_window_size(text))
                   if hf.architectures[0] == "GptOssForCausalLM" else NS())
        window = sg.load_model.resolve_sliding_window_size(reports, model)
    return new_configurator(sg, spec, model, text, page, kv_dtype, drafting, is_swa, window,
                            full_ids, swa_ids)


def pure_ssm_configurator(sg: NS, spec, hf, context: int, page: int, kv_dtype: str | None,
                          drafting: bool):
    """The configurator of a model of state layers alone (SGLang's PURE_SSM_ARCHITECTURES),
    its model config as SGLang's ModelConfig derives it (``_derive_model_shapes``): the
    config's head_dim (Mamba2's, its SSM heads'; 0 where it gives none), the SSM attention
    arch, and SGLang's own ``get_total_num_kv_heads`` / ``get_num_kv_heads`` (0 heads for SSM,
    then at least 1 a GPU); its full-attention layers the state config's, none."""
    cls = sg.model_config.ModelConfig
    head_dim = getattr(hf, "head_dim", None) or 0
    model = NS(hf_config=hf, hf_text_config=hf, context_len=context, is_draft_model=False,
               linear_attn_registry_result=None, attention_arch=sg.model_config.AttentionArch.SSM,
               is_multimodal=False, quantization=None, kv_lora_rank=None,
               qk_rope_head_dim=None, head_dim=head_dim, v_head_dim=head_dim,
               swa_head_dim=head_dim, swa_v_head_dim=head_dim)
    model.get_total_num_kv_heads = lambda: cls.get_total_num_kv_heads(model)
    model.get_num_kv_heads = lambda tp, dcp=1: cls.get_num_kv_heads(model, tp, dcp)
    return new_configurator(sg, spec, model, hf, page, kv_dtype, drafting, False, None,
                            list(hf.full_attention_layer_ids), [])


def new_configurator(sg: NS, spec, model, text, page: int, kv_dtype: str | None,
                     drafting: bool, is_swa: bool, window, full_ids: list, swa_ids: list):
    """A KVCacheConfigurator of ``model`` (``configurator``'s namespace), its fields set as
    ModelRunner sets them for one GPU and no draft model."""
    mla = model.attention_arch == sg.model_config.AttentionArch.MLA
    kvc = object.__new__(sg.Configurator)
    fields = dict(
        model_config=model, pp_size=1, attn_dp_size=1, is_draft_worker=False,
        spec_algorithm=(sg.spec.SpeculativeAlgorithm.EAGLE if drafting
                        else sg.spec.SpeculativeAlgorithm.NONE),
        extra_mamba_cache_bytes_per_req=0,
        kv_cache_dtype=getattr(sg.kvc.torch, KV_DTYPES.get(kv_dtype, spec.kv_dtype)),
        kv_cache_dtype_str=kv_dtype or "auto",
        page_size=page, is_hybrid_swa=is_swa, use_mla_backend=mla, device="cpu",
        server_args=NS(enable_hisparse=False), kv_shard_spec=None,
        spec_aux_config=NS(eagle_draft_num_layers=None, dflash_draft_num_layers=None),
        sliding_window_size=window,
        layer_info=NS(full_attention_layer_ids=full_ids, swa_attention_layer_ids=swa_ids,
                      start_layer=0, end_layer=text.num_hidden_layers,
                      num_effective_layers=text.num_hidden_layers,
                      is_hybrid_swa_mtp_draft=False),
        mambaish_config=sg.arch.mambaish_config(model),
        hybrid_gdn_config=sg.arch.hybrid_gdn_config(model),
        hybrid_kda_config=sg.arch.hybrid_kda_config(model))
    for field, value in fields.items():  # setattr: the dataclass's fields are slots
        setattr(kvc, field, value)
    return kvc


def resolve_dsa(sg: NS, bags: NS, hf, told: str | None = None) -> str | None:
    """DeepSeek's sparse attention (DSA) as SGLang resolves it on the row's GPU (device
    capability 9.0 on a Hopper, bfloat16 on flashmla_sparse / fa3; 10.0 on a B200, fp8_e4m3 on
    trtllm: stood in for) with --kv-cache-dtype ``told`` (None: not told, "auto"):
    overrides.py's ``_dsa_kv_cache_dtype_default`` picks the KV cache dtype, returned (None for
    another model: the model's, or the one told), and ``_dsa_split_backend_resolution`` its
    prefill / decode backends for it, set in the exec bag (``calculate_mla_kv_cache_dim``
    reads them; told fp8_e4m3, flashmla_kv's scaled layout on a Hopper, trtllm's raw one on a
    B200)."""
    sg.overrides.model_config_of = lambda _view: NS(hf_config=hf)
    view = NS(kv_cache_dtype=told or "auto", dsa_prefill_backend=None, dsa_decode_backend=None,
              dsa_topk_backend=None, enable_hisparse=False, dcp_size=1)
    view.kv_cache_dtype = sg.overrides._dsa_kv_cache_dtype_default(view).get(
        "kv_cache_dtype", view.kv_cache_dtype)
    backends = sg.overrides._dsa_split_backend_resolution(view)
    if not backends:  # not DeepSeek's sparse attention: nothing resolved
        return None
    bags.exec.kernel = NS(dsa_prefill_backend=backends["dsa_prefill_backend"],
                          dsa_decode_backend=backends["dsa_decode_backend"])
    return view.kv_cache_dtype


def resolve_radix_cache(sg: NS, bags: NS, hf, kvc) -> None:
    """Apply SGLang's mamba radix-cache resolution to the bags: "auto" (extra_buffer, or
    no_buffer with overlap scheduling turned off), or the row's told strategy
    (``sglang_mamba_radix_cache_strategy``), which it leaves as told; the bags' extra-buffer
    flags from SGLang's own ``mamba_extra_buffer_of`` / ``mamba_extra_buffer_lazy_of``; and its
    checks: a told strategy on a model without a mamba radix cache (restated from
    ``model_hook.handle_mamba_radix_cache`` 1059-1066, which reads a whole ServerArgs),
    no_buffer's of the page size, extra_buffer's of the architecture, the page size, the
    prefill chunk's state chunk and the drafted tokens against ``--mamba-track-interval``
    (``validate_mamba_extra_buffer``), and its Mamba2 backend's of the interval against the
    model's chunk (``mamba2_backend_check``). The lazy mode's need of overlap scheduling is
    SGLang's own assert in ``_calculate_mamba_ratio``, which the sizing runs."""
    view = NS(disable_radix_cache=bags.memory.disable_radix_cache,
              mamba_radix_cache_strategy=bags.exec.mamba.mamba_radix_cache_strategy,
              disable_overlap_schedule=bags.schedule.disable_overlap_schedule,
              page_size=bags.schedule.page_size, linear_attn_backend="triton",
              attention_backend="triton")
    sg.overrides.model_config_of = lambda _view: NS(hf_config=hf)
    declared = sg.overrides._mamba_radix_cache_resolution(view)
    told = sg.override_base.mamba_extra_buffer_of(view)  # before "auto" resolves: told only
    if not declared.get("uses_mamba_radix_cache"):
        if told:
            raise ValueError(f"--mamba-radix-cache-strategy {view.mamba_radix_cache_strategy} "
                             f"needs mamba state, got {hf.architectures[0]}.")
        return
    mode = declared.get("mamba_radix_cache_strategy", view.mamba_radix_cache_strategy)
    if kvc.mambaish_config is None:
        return
    view.mamba_radix_cache_strategy = mode
    bags.exec.mamba.enable_mamba_extra_buffer = sg.override_base.mamba_extra_buffer_of(view)
    bags.exec.mamba.enable_mamba_extra_buffer_lazy = sg.overrides.mamba_extra_buffer_lazy_of(
        view)
    view.disable_overlap_schedule = bags.schedule.disable_overlap_schedule = declared.get(
        "disable_overlap_schedule", view.disable_overlap_schedule)
    if mode == "no_buffer":
        sg.hooks.validate_mamba_no_buffer(view, hf.architectures[0])
        return
    view.disaggregation_mode = bags.disagg.disaggregation_mode
    view.speculative_num_draft_tokens = bags.spec.speculative_num_draft_tokens
    view.mamba_track_interval = bags.exec.mamba.mamba_track_interval
    view.chunked_prefill_size = bags.schedule.chunked_prefill_size
    try:
        sg.hooks.validate_mamba_extra_buffer(
            view, hf, mamba_cache_chunk_size_of=lambda: sg.overrides.mamba_cache_chunk_size(
                NS(page_size=view.page_size)))
    except AssertionError as exc:  # its bare asserts say nothing: name the check
        raise AssertionError(str(exc) or "validate_mamba_extra_buffer") from exc
    mamba2_backend_check(sg, hf, bags.exec.mamba.mamba_track_interval)


def mamba2_backend_check(sg: NS, hf, interval: int) -> None:
    """Restated, unavoidable: SGLang's Mamba2 backend, which the attention registry builds for
    a model ``configs/hybrid_arch.mamba2_config`` returns a config for (short-conv ones aside),
    asserts with the extra buffer that ``--mamba-track-interval`` is at least the model's
    mamba chunk (hybrid_linear_attn_backend.Mamba2AttnBackend 1081-1083, reading the text
    config's ``mamba_chunk_size``, 64 where none); it runs at model load, which no sizing
    code reaches. Which models, and their chunk, are SGLang's own."""
    config = sg.arch.mamba2_config(NS(hf_config=hf, is_draft_model=False))
    short_conv = ("ZayaConfig", "Lfm2Config", "Lfm2MoeConfig", "Lfm2VlConfig")
    if config is None or type(config).__name__ in short_conv:
        return
    chunk = getattr(sg.text_config.get_hf_text_config(hf), "mamba_chunk_size", 64)
    if interval < chunk:
        raise AssertionError(f"mamba_track_interval ({interval}) must be >= "
                             f"mamba_chunk_size ({chunk})")


def sglang_figures(sg: NS, spec, budget: int, page: int | None, overlap: bool, ratios: dict,
                   context: int = CONTEXT, kv_dtype: str | None = None,
                   platform: NS = HOPPER) -> dict:
    """SGLang's pools for the setting, as its _resolve_memory_pool_config computes them from a
    profiled ``rest_memory`` of ``budget`` bytes (in GiB, as SGLang carries it), or its refusal
    as ``{"refused": message}``. ``kv_dtype``: ``--kv-cache-dtype`` where told (SGLang's name,
    ``KV_DTYPES``). On ``B200_PLATFORM`` (``b200_rows``) SGLang first resolves its attention
    backend and page (``b200_resolution``; ``page`` None: --page-size not told), which the
    figures then gain (``backend``, ``page``) and the pools are sized at."""
    bags = new_bags(page or 1, overlap, ratios, spec.tp, platform)
    install_stand_ins(bags)
    backend = None
    try:
        hf = sglang_hf_config(sg, spec)
        if platform is B200_PLATFORM:
            backend, page = b200_resolution(sg, spec, hf, page, overlap, ratios)
        bags.schedule.page_size = page = served_page(sg, hf, page)
        kvc = configurator(sg, spec, hf, context, page,
                           resolve_dsa(sg, bags, hf, kv_dtype) or kv_dtype,
                           drafting=bool(ratios.get("speculative_tokens")))
        # the attention DP groups, as ModelRunner hands them over (model_runner.py 659)
        kvc.attn_dp_size = bags.parallel.attn_dp_size
        resolve_radix_cache(sg, bags, hf, kvc)
        chunk = bags.schedule.chunked_prefill_size
        if chunk > 0 and chunk % page:
            # restated: check_server_args asserts it where chunked prefill is on (> 0:
            # validation_hook.py 240-245), but reads the whole ServerArgs, which these bags do
            # not build
            raise AssertionError("chunked_prefill_size must be divisible by page_size")
        if (ratios.get("speculative_tokens")
                and hf.architectures[0] in sg.model_config.PURE_MAMBA1_ARCHITECTURES):
            # restated, unavoidable: the Mamba1 mixer's forward asserts no target-verify batch
            # (layers/attention/mamba/mamba1.py 230-232), which no sizing code reaches
            raise AssertionError("Mamba-1 (Falcon-Mamba) does not support speculative decoding")
        rest = budget / GIB
        if kvc.mambaish_config is not None:
            rest = kvc._handle_max_mamba_cache(rest)
        if rest <= 0:  # _profile_available_bytes' own check after it (kv_cache_configurator.py
            # 3043-3058; that method reads the GPU, so its check is restated here): told slots
            # past the budget, which a model of state layers alone would not otherwise refuse
            raise ValueError("Loaded weights leave no GPU memory for the KV cache")
        config = kvc.config_from_budget(int(rest * GIB))
        running = kvc.resolve_max_num_reqs(config.max_total_num_tokens)
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": str(exc).splitlines()[0][:60]}
    slots = bags.schedule.max_mamba_cache_size
    figures = {"full": config.full_max_total_num_tokens or config.max_total_num_tokens,
               "swa": config.swa_max_total_num_tokens,
               "slots": None if slots is None else slots + 1,  # and MambaPool's padding slot
               "req_slots": slots,
               "S": kvc._calculate_mamba_ratio() if kvc.mambaish_config is not None else None,
               "running": running}
    if ratios.get("speculative_tokens") and kvc.mambaish_config is not None:
        figures["buffers"] = draft_buffers(sg, kvc, slots, running, bags.spec)
    if platform is B200_PLATFORM:
        figures.update(backend=backend, page=page)
    return figures


def server_args_defaults(sg: NS) -> NS:
    """SGLang's ServerArgs fields at their own defaults (msgspec's ``default``, else its
    ``default_factory``, else None for the required model path), as a plain record: its
    resolution steps read the options no row sets from it."""
    fields = {}
    for field in sg.arg_utils.record_fields(sg.server_args.ServerArgs):
        if field.default is not sg.msgspec.NODEFAULT:
            fields[field.name] = field.default
        elif field.default_factory is not sg.msgspec.NODEFAULT:
            fields[field.name] = field.default_factory()
        else:
            fields[field.name] = None
    return NS(**fields)


def b200_resolution(sg: NS, spec, hf, page: int | None, overlap: bool,
                    ratios: dict) -> tuple[str, int]:
    """The attention backend and page size SGLang 0.5.23 resolves on a B200
    (``B200_PLATFORM``, which ``get_platform`` answers) with --page-size ``page`` (None: not
    told) and no --attention-backend: its own steps, in the order its resolution pipeline
    (arg_groups/pipeline.py 20-377) runs them, over a record of the raw options whose
    declarations they stack (``_resolved_overrides``): handle_model_specific_adjustments'
    ``uses_mamba_radix_cache=False`` (model_hook.py 155-159, restated: the handler reads a
    whole ServerArgs), ``handle_mamba_radix_cache`` for a model whose linear-attention spec
    uses the mamba radix cache (the radix-cache resolution and its checks, model_hook.py
    223-225 and 1048-1076), the model's override providers
    (``collect_model_override_declarations``: Qwen3-Next's / Qwen3.5's qwen3_5.py 24-49,
    gpt_oss.py, llama4.py, nemotron_h.py, lfm2.py, falcon_h1.py, granitemoehybrid.py, DeepSeek's
    deepseek_v2.py), ``handle_mamba_radix_cache`` again (model_hook.py 737: its no_buffer
    check of the page and backend the override picked), then the passes that set the backend
    and page (``_attention_backend_default``, ``_mla_backend_page_constraints``,
    ``_fa4_page_constraint``: attention_hook.py 120-181; ``_page_size_default``:
    pipeline.py 256). Speculative decoding as told on the command line (``NEXTN``, topk 1;
    the speculative hook that turns it into EAGLE runs later, pipeline.py 304-306)."""
    text = sg.text_config.get_hf_text_config(hf) if hasattr(hf, "to_dict") else hf
    attn = next((k for k in spec.kinds.values() if hasattr(k, "kv_heads")), None)
    mla = any(type(k).__name__ == "MLALayer" for k in spec.kinds.values())
    cls, arch = sg.model_config.ModelConfig, sg.model_config.AttentionArch
    dims = NS(head_dim=attn and attn.head_dim_k, v_head_dim=attn and attn.head_dim_v,
              swa_head_dim=attn and attn.head_dim_k, swa_v_head_dim=attn and attn.head_dim_v,
              hf_config=hf, hf_text_config=text)
    model = NS(hf_config=hf, hf_text_config=text, quantization=None, is_hybrid_swa=False,
               attention_arch=arch.MLA if mla else arch.SSM if attn is None else arch.MHA,
               has_asymmetric_kv=not mla and cls.has_asymmetric_kv.fget(dims),
               has_attention_sinks=cls._detect_attention_sinks(dims))
    patched = {module: module.model_config_of for name, module in list(sys.modules.items())
               if name.startswith("sglang.") and hasattr(module, "model_config_of")}
    for module in patched:
        module.model_config_of = lambda _args: model
    try:
        return _b200_steps(sg, spec, hf, page, overlap, ratios)
    finally:
        for module, own in patched.items():
            module.model_config_of = own


def _b200_steps(sg: NS, spec, hf, page: int | None, overlap: bool,
                ratios: dict) -> tuple[str, int]:
    """``b200_resolution``'s steps, the model's config already answering model_config_of."""
    steps = ratios.get("speculative_tokens", 0)
    record = server_args_defaults(sg)
    vars(record).update(
        page_size=page, disable_overlap_schedule=not overlap,
        disable_radix_cache=ratios.get("sglang_disable_radix_cache", False),
        mamba_radix_cache_strategy=ratios.get(STRATEGY, "auto"),
        mamba_track_interval=ratios.get(TRACK, 256), chunked_prefill_size=ratios.get(CHUNK),
        speculative_algorithm="NEXTN" if steps else None,
        speculative_eagle_topk=1 if steps else None, speculative_num_steps=steps or None,
        tp_size=spec.tp, device="cuda", model_path=spec.name,
        _quantization_explicitly_unset=False, _resolved_overrides=[])
    sg.overrides.declare_resolution(record, "_handle_model_specific_adjustments",
                                    uses_mamba_radix_cache=False)
    hybrid = sg.model_hook.get_linear_attn_spec(hf)  # model_hook.py 223-225: these first
    if hybrid is not None and hybrid.uses_mamba_radix_cache:
        sg.model_hook.handle_mamba_radix_cache(record, hf)
    record._resolved_overrides.extend(sg.overrides.collect_model_override_declarations(
        hf.architectures[0], record, hf))
    sg.model_hook.handle_mamba_radix_cache(record, hf)
    for step in (sg.overrides._attention_backend_default,
                 sg.overrides._mla_backend_page_constraints, sg.overrides._fa4_page_constraint,
                 sg.overrides._page_size_default):
        sg.overrides.run_post_process_pass(record, step)
    view = sg.override_base.resolved_view(record)
    return view.attention_backend, view.page_size


def draft_buffers(sg: NS, kvc, slots: int, running: int, spec: NS) -> int:
    """The bytes SGLang's MambaPool allocates for its draft-token buffers (intermediate ssm
    states and conv windows), built as the configurator builds it (``running`` requests' rows,
    topk 1) on torch's meta device, so nothing is allocated; as on a CUDA GPU (its memory_pool's
    CPU and NPU flags off: its conv windows deduplicate there)."""
    mp = sg.memory_pool
    mp._is_cpu = mp._is_npu = False
    params = kvc.mambaish_config.mamba2_cache_params
    pool = mp.MambaPool(size=slots, spec_state_size=running, cache_params=params,
                        mamba_layer_ids=list(params.layers), device="meta",
                        speculative_num_draft_tokens=spec.speculative_num_draft_tokens,
                        speculative_eagle_topk=spec.speculative_eagle_topk)
    return int(mp.get_tensor_size_bytes(pool.mamba_cache.intermediate_ssm)
               + mp.get_tensor_size_bytes(pool._intermediate_conv_window_phys))


def flatkv_figures(spec, budget: int, page: int, overlap: bool, ratios: dict,
                   context: int = CONTEXT, kv_dtype: str | None = None,
                   model_kv: str | None = None) -> dict:
    """FlatKV's prediction of the same figures (its ``sglang`` strategy), or its refusal.
    ``kv_dtype``: SGLang's --kv-cache-dtype told, FlatKV's model KV dtype and, for bfloat16,
    its option that tells it apart from auto (``told_kv_options``); ``model_kv``: FlatKV's
    model KV dtype where SGLang cannot be told it (``DSA_MODEL_KV``), beside ``kv_dtype``
    told or not."""
    if model_kv is not None or kv_dtype is not None:
        spec = spec.with_options(kv_dtype=model_kv or KV_DTYPES[kv_dtype])
    if kv_dtype is not None:
        ratios = {**ratios, **told_kv_options(kv_dtype)}
    if CHUNK in ratios:  # as FlatKV's command line reads SGLang's value (0 or less: off)
        ratios = {**ratios, CHUNK: chunked_prefill_argument(str(ratios[CHUNK]))}
    options = StrategyOptions(sglang_page_size=page, sglang_overlap_schedule=overlap, **ratios)
    r = run_strategy("sglang", spec.profile(), budget_bytes=budget, context_tokens=context,
                     options=options)
    if not r.applies:
        return {"refused": r.reason[:60]}
    x = r.extras
    figures = {"full": x.get("kv_tokens", r.capacity_tokens), "swa": x.get("swa_tokens"),
               "slots": x.get("state_slots"), "req_slots": x.get("request_state_slots"),
               "S": x.get("slots_per_request"), "running": x.get("max_running_requests")}
    if options.speculative_tokens and x.get("state_slots") is not None:
        figures["buffers"] = x.get("draft_buffers_allocated")
    return figures


def told_kv_options(kv_dtype: str | None) -> dict:
    """FlatKV's options for SGLang told --kv-cache-dtype ``kv_dtype`` beside the model KV dtype
    of that name: told bfloat16 is ``sglang_kv_cache_dtype`` bfloat16, as that KV dtype alone
    stands for SGLang's auto (fp8_e4m3 on a B200 for DeepSeek's sparse attention); another is
    the KV dtype alone."""
    return {"sglang_kv_cache_dtype": "bfloat16"} if kv_dtype == "bfloat16" else {}


def dsa_kv_rows() -> list[tuple[str, int, str]]:
    """(preset, budget, --kv-cache-dtype told) of DeepSeek-V3.2 told each of ``DSA_TOLD_KV`` on
    a Hopper: bfloat16 its auto's 1,152 + 132 B, fp8_e4m3 flashmla_kv's scaled 656 + 132,
    fp8_e5m2 refused on both sides (_dsa_kv_cache_dtype_default's assertion, on any GPU); and
    its config with learnable attention sinks (``SINKS``), which refuses both fp8 dtypes
    (overrides.py 527-531)."""
    return [(name, budget, kv) for name in ("DeepSeek-V3.2", SINKS) for kv in DSA_TOLD_KV
            for budget in BUDGETS]


def row_spec(name: str):
    """The model of a row: a config of ``B200_CONFIGS`` by its name, else the preset."""
    return (spec_from_hf_config(B200_CONFIGS[name], name=name) if name in B200_CONFIGS
            else model_spec(name))


def dsa_model_kv_rows() -> list[tuple[str, int, str, str | None]]:
    """(preset, budget, FlatKV's model KV dtype, --kv-cache-dtype told) of DeepSeek-V3.2 in
    each of ``DSA_MODEL_KV`` on a Hopper, told none or bfloat16: SGLang has no float32 or
    float16 choice, and its auto resolves to bfloat16 there whatever the model's dtype
    (``resolve_dsa``), so both store bfloat16's 1,152 + 132 B (float32's own 2,304 + 132 B
    are FlatKV's flat layout's, not SGLang's)."""
    return [("DeepSeek-V3.2", budget, model_kv, told) for model_kv in DSA_MODEL_KV
            for told in (None, "bfloat16") for budget in BUDGETS]


# The B200 rows (``b200_rows``): the GPU preset, the state models and attention models whose
# backend SGLang picks by model there (``b200_resolution``), and the pages told (None: not)
B200 = "B200 192GB"
B200_PRESETS = ("Qwen3-Next-80B-A3B", "Qwen3.5-27B", "Nemotron-H-8B", "Falcon-H1-7B",
                "Kimi-Linear-48B-A3B", "granite-4.0-h-small", "LFM2-1.2B", STATE_ONLY,
                "Llama-3.1-8B", "gpt-oss-20b", "Llama-4-Scout-17B-16E", "DeepSeek-V3",
                "DeepSeek-V3.2")
B200_PAGES = (None, 1, 16, 64)
# Models of SGLang's DeepSeek family no preset gives, by their config.json fields (LongCat-Flash's
# published shape: two MLA caches a decoder layer), whose B200 override is the family's: its
# TensorRT-LLM MLA backend, and with an indexer (index_topk) its DSA's raw fp8 layout
LONGCAT_FLASH_CONFIG = {"model_type": "longcat_flash", "architectures": ["LongcatFlashForCausalLM"],
                        "num_layers": 28, "hidden_size": 6144, "num_attention_heads": 64,
                        "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                        "v_head_dim": 128, "max_position_embeddings": 131_072,
                        "torch_dtype": "bfloat16"}
# DeepSeek-V3.2's config.json (cache-relevant fields) with learnable attention sinks, which
# SGLang reads off the config (overrides.py 526): bfloat16 on every GPU, fp8 refused, and
# flashmla_sparse in place of the trtllm raw layout on a B200 (``dsa_kv_rows``, ``b200_rows``)
SINKS = "DeepSeek-V3.2 with learnable sinks"
B200_CONFIGS = {"LongCat-Flash": LONGCAT_FLASH_CONFIG,
                "LongCat-Flash with an indexer": {**LONGCAT_FLASH_CONFIG, "index_topk": 2048,
                                                  "index_head_dim": 128},
                # GLM-5's: DeepSeek-V3.2's MLA and indexer over 78 layers
                "GLM-5": {"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"],
                          "num_hidden_layers": 78, "num_attention_heads": 64,
                          "kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128,
                          "index_topk": 2048, "max_position_embeddings": 202_752,
                          "torch_dtype": "bfloat16"},
                SINKS: {"model_type": "deepseek_v32", "architectures": ["DeepseekV32ForCausalLM"],
                        "num_hidden_layers": 61, "num_attention_heads": 128,
                        "num_key_value_heads": 128, "kv_lora_rank": 512,
                        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
                        "index_head_dim": 128, "index_topk": 2048,
                        "max_position_embeddings": 163_840, "torch_dtype": "bfloat16",
                        "learnable_sink": True}}


def b200_rows() -> list[tuple[str, int | None, bool, dict]]:
    """(preset, page told, overlap, options) of the rows run as on a B200: each of
    ``B200_PRESETS`` at 40 GiB, every page of ``B200_PAGES``, overlap on and off, with and
    without 3 drafted tokens, and with the radix cache off where drafting.

    DeepSeek-V3.2 among them: there SGLang keeps DeepSeek's sparse attention's KV cache in
    fp8_e4m3 when not told --kv-cache-dtype (``resolve_dsa``, its _dsa_kv_cache_dtype_default
    on compute capability 10), runs its DSA prefill and decode on trtllm and so stores the raw
    MLA layout, 512 + 64 B a token a layer, beside the index keys' 132
    (calculate_mla_kv_cache_dim, kv_cache_configurator.py 3425-3440): 61 x 708 = 43,188 B a
    token, 994,432 tokens in 40 GiB (whole pages of 64), where a Hopper's bfloat16 holds
    548,352. FlatKV's side takes it from its ``blackwell`` (its capability's), which the B200
    preset sets (``sglang.sglang_dsa``). And DeepSeek-V3.2 told each --kv-cache-dtype of
    ``DSA_TOLD_KV`` (``KV``), at every page, both overlaps, with and without 3 drafted tokens:
    fp8_e4m3 (FlatKV's model KV dtype fp8) the same trtllm backends and bytes there (where a
    Hopper runs flashmla_kv's scaled 656 + 132); bfloat16 the 1,152 + 132 B of a Hopper, 548,352
    tokens in 40 GiB (flashmla_sparse prefill, trtllm decode of a bfloat16 latent), which
    FlatKV's model KV dtype bfloat16 takes beside its ``sglang_kv_cache_dtype`` bfloat16 (that
    dtype alone stands for SGLang's auto: ``told_kv_options``); fp8_e5m2 refused on both sides
    (_dsa_kv_cache_dtype_default asserts bfloat16 or fp8_e4m3). And DeepSeek-V3.2 at TP 8
    (``dp_tp``; its latent is not split by TP, so a rank keeps 708 B a token there too), with
    attention DP 1, 2 and 8 (``DP``), and beside them --max-running-requests 20 (``TOLD``,
    N // D a group), 3 drafted tokens (the hook's 48 // D) and a told fp8_e4m3 or bfloat16,
    told no page. And LongCat-Flash (``B200_CONFIGS``), whose override is the DeepSeek
    family's there: TensorRT-LLM's MLA backend at pages of 64, and with an indexer the DSA's
    raw fp8 layout, 56 caches x 708 B a token; and GLM-5, in that layout too, 78 x 708 B; the
    two with an indexer told each of ``DSA_TOLD_KV`` too, told no page. And DeepSeek-V3.2 (at
    every page, both overlaps) and GLM-5 (told no page) in a model KV dtype of
    ``DSA_MODEL_KV`` (``MODEL_KV``: float32, float16), which SGLang cannot be told, told no
    --kv-cache-dtype (its auto: fp8_e4m3's raw 708 B there) or bfloat16 (1,284 B, not float32's
    2,436). And DeepSeek-V3.2's config with learnable attention sinks (``SINKS``) at every page,
    both overlaps, told no --kv-cache-dtype, each of ``DSA_TOLD_KV`` and in the model KV dtype
    float16: SGLang keeps bfloat16 there, told or not (its auto picks fp8_e4m3 at compute
    capability 10 only without sinks, overrides.py 532-535; flashmla_sparse, not trtllm:
    644-663), 61 x 1,284 B, 548,352 tokens in 40 GiB, and refuses fp8_e4m3 and fp8_e5m2
    (527-531), as FlatKV's ``CacheProfile.learnable_sink``.

    Then the two models whose B200 override reads the radix cache strategy (Qwen3-Next's
    told extra buffer, Nemotron-H's no_buffer beside TensorRT-LLM) with each strategy told,
    at every page, both overlaps, and with and without 3 drafted tokens; but not Nemotron-H
    drafting beside a told no_buffer at a told page of 1. FlatKV reads a told 1 as none told
    (as SGLang does everywhere else), and its note quotes the assertion SGLang fails where
    none is told, "no_buffer only supports page_size=1." (the override's page 64,
    nemotron_h.py 130-131); told 1, the override keeps it and SGLang fails the next assertion
    (overlap scheduling, or the backend; mamba_hook.py 157-163). Both refuse: only the
    quoted words differ."""
    rows = [(p, page, overlap, more) for p in B200_PRESETS for page in B200_PAGES
            for overlap in (True, False)
            for more in ({}, {"speculative_tokens": 3},
                         {"speculative_tokens": 3, **RADIX_OFF})]
    rows += [("DeepSeek-V3.2", page, overlap, {KV: kv, **more}) for kv in DSA_TOLD_KV
             for page in B200_PAGES for overlap in (True, False)
             for more in ({}, {"speculative_tokens": 3})]
    rows += [("DeepSeek-V3.2", None, True, {DP: d, **more}) for d in (1, 2, 8)
             for more in ({}, {TOLD: 20}, {"speculative_tokens": 3}, {KV: "fp8_e4m3"},
                          {KV: "bfloat16"})]
    rows += [(name, page, overlap, more) for name in B200_CONFIGS for page in B200_PAGES
             for overlap in (True, False) for more in ({}, {"speculative_tokens": 3})]
    rows += [(name, None, True, {KV: kv}) for name in ("LongCat-Flash with an indexer", "GLM-5")
             for kv in DSA_TOLD_KV]
    rows += [("DeepSeek-V3.2", page, overlap, {MODEL_KV: model_kv, **told})
             for model_kv in DSA_MODEL_KV for page in B200_PAGES for overlap in (True, False)
             for told in ({}, {KV: "bfloat16"})]
    rows += [("GLM-5", None, True, {MODEL_KV: model_kv, **told}) for model_kv in DSA_MODEL_KV
             for told in ({}, {KV: "bfloat16"})]
    # (told none, at each page, among B200_CONFIGS' rows above)
    rows += [(SINKS, page, overlap, more) for page in B200_PAGES for overlap in (True, False)
             for more in (*({KV: kv} for kv in DSA_TOLD_KV), {MODEL_KV: "float16"})]
    return rows + [(p, page, overlap, {STRATEGY: strategy, **more})
                   for p in ("Qwen3-Next-80B-A3B", "Nemotron-H-8B") for page in B200_PAGES
                   for overlap in (True, False)
                   for strategy in ("no_buffer", "extra_buffer", "extra_buffer_lazy")
                   for more in ({}, {"speculative_tokens": 3})
                   if not (p == "Nemotron-H-8B" and page == 1 and strategy == "no_buffer"
                           and more)]


def check_b200(sg: NS) -> tuple[int, int]:
    """Run ``b200_rows`` on both sides: SGLang's backend, page and pools as on a B200
    (``B200_PLATFORM``, its --chunked-prefill-size its own on a B200's memory:
    ``sglang_default_chunk``), beside FlatKV's at the B200 preset (``flatkv_b200_figures``).
    The rows and the mismatches."""
    chunk = sglang_default_chunk(GPU_PRESETS[B200] // MiB)
    bad = 0
    rows = b200_rows()
    for name, page, overlap, more in rows:
        spec = row_spec(name)
        told = {k: v for k, v in more.items() if k not in (KV, MODEL_KV)}
        if kv := more.get(KV):  # --kv-cache-dtype: FlatKV's model KV dtype
            spec = spec.with_options(kv_dtype=KV_DTYPES[kv])
        if model_kv := more.get(MODEL_KV):  # one SGLang cannot be told: its auto, or kv
            spec = spec.with_options(kv_dtype=model_kv)
        if DP in more:  # attention DP (1: TP alone): one TP it divides
            spec = spec.with_options(tp=dp_tp(name))
        engine = sglang_figures(sg, spec, BUDGETS[0], page, overlap, {**told, CHUNK: chunk},
                                kv_dtype=kv, platform=B200_PLATFORM)
        flatkv = flatkv_b200_figures(spec, BUDGETS[0], page, overlap,
                                     {**told, **told_kv_options(kv)})
        setting = (f"{name}{f' tp={spec.tp}' if spec.tp > 1 else ''} on a {B200} "
                   f"B={BUDGETS[0]:,} P={'not told' if page is None else page}"
                   f" overlap={'on' if overlap else 'off'}"
                   + "".join(f" {k}={v}" for k, v in more.items()))
        same = report("sglang", setting, engine, flatkv)
        # a B200 note's refusal quotes SGLang's assertion: its words, not any refusal
        if flatkv.get("quoted") and engine.get("refused") != flatkv["refused"]:
            print(f"BAD {setting} | the note quotes {flatkv['refused']!r} where SGLang "
                  f"{show(engine)}")
            same = False
        bad += not same
    return len(rows), bad


# The DSA models ``check_sm8x_dsa`` runs on each SM 8.x GPU preset: DeepSeek-V3.2, its config
# with learnable attention sinks, GLM-5 and LongCat-Flash with an indexer (``B200_CONFIGS``)
SM8X_DSA_MODELS = ("DeepSeek-V3.2", SINKS, "GLM-5", "LongCat-Flash with an indexer")


def sm8x_dsa_rows() -> list[tuple[str, str, str | None]]:
    """(model, GPU preset, --kv-cache-dtype told: None for none) of ``check_sm8x_dsa``: each of
    ``SM8X_DSA_MODELS`` on each SM 8.x GPU preset (``SM8X_GPUS``), told none and each of
    ``DSA_TOLD_KV``."""
    return [(name, gpu, kv) for name in SM8X_DSA_MODELS for gpu in SM8X_GPUS
            for kv in (None, *DSA_TOLD_KV)]


def sm8x_dsa_backends(sg: NS, spec, platform: NS, kv: str | None) -> str:
    """The KV dtype and DSA prefill / decode backends SGLang's own ``resolve_dsa`` picks on
    ``platform`` told ``kv``, in words (its refusal's first words where it refuses)."""
    bags = new_bags(64, True, {}, 1, platform)
    install_stand_ins(bags)
    try:
        dtype = resolve_dsa(sg, bags, sglang_hf_config(sg, spec), kv)
    except (AssertionError, ValueError) as exc:
        return f"refused: {str(exc)[:40]}"
    kernel = bags.exec.kernel
    return f"{dtype} on {kernel.dsa_prefill_backend}/{kernel.dsa_decode_backend}"


def check_sm8x_dsa(sg: NS) -> tuple[int, int]:
    """DeepSeek's sparse attention on the SM 8.x GPU presets (``sm8x_dsa_rows``): SGLang's own
    resolution and pools on that GPU's platform (``sm8x_platform``; its
    ``_dsa_kv_cache_dtype_default`` and ``_dsa_split_backend_resolution`` read the compute
    capability through torch, stood in for: bfloat16 when told none below SM 10, overrides.py
    532-535; flashmla_sparse / fa3 for bfloat16, flashmla_kv for fp8_e4m3 below SM 10, 713-726;
    their one SM 8.x check, SM 8.9 for TileLang's fp8 cache, 579-582, reads only a told
    tilelang backend), at 40 GiB and DSA's page of 64, beside FlatKV's at that
    ``gpu_compute_capability``: SGLang starts there with a Hopper's bytes, which FlatKV gives.
    (settings, mismatches)."""
    bad = 0
    rows = sm8x_dsa_rows()
    for name, gpu, kv in rows:
        spec, capability = row_spec(name), SM8X_GPUS[gpu]
        platform = sm8x_platform(capability)
        engine = sglang_figures(sg, spec, BUDGETS[0], 64, True, {}, kv_dtype=kv,
                                platform=platform)
        flatkv = flatkv_figures(spec, BUDGETS[0], 64, True,
                                {"gpu_compute_capability": capability}, kv_dtype=kv)
        setting = (f"{name} on {gpu} (SM {capability_text(capability)}) B={BUDGETS[0]:,} P=64 "
                   f"kv={kv or 'not told'}: {sm8x_dsa_backends(sg, spec, platform, kv)}")
        bad += not report("sglang", setting, engine, flatkv)
    return len(rows), bad


def flatkv_b200_figures(spec, budget: int, page: int | None, overlap: bool,
                        ratios: dict) -> dict:
    """FlatKV's figures for SGLang on the B200 preset, as the CLI's --gpu-memory and the app's
    GPU pick hand it the GPU: the chunk SGLang takes there (``sglang_default_chunked_prefill``
    of its memory, as ``strategy_cli.figures_options``) and ``blackwell`` (DeepSeek's
    sparse attention's raw fp8 layout there), the backend ``sm100_backend`` names
    at the page told (1 for none), the page ``sglang_default_page`` says SGLang runs in its
    place (its note's: none told, a model override's, a backend's page fix), else the page
    told (FlatKV's options hold no page told apart from 1, and SGLang's resolution reads a
    told 1 as none: is_no_spec_infer_or_topk_one, the radix-cache pass, the backends' page
    fixes); the pools at that page, or a refusal where ``sm100_refusal``'s note says SGLang
    would not start: the assertion the note quotes (``quoted``), which ``check_b200`` holds to
    SGLang's own words."""
    options = StrategyOptions(sglang_overlap_schedule=overlap, **ratios,
                              sglang_chunked_prefill_size=sglang_default_chunked_prefill(
                                  GPU_PRESETS[B200]),
                              gpu_compute_capability=BLACKWELL_CAPABILITY)
    profile = spec.profile()
    options = replace(options, sglang_page_size=page or 1)  # as told: 1 for none
    if refusal := sm100_refusal(B200, profile, options):  # the note's
        # the assertion the note quotes, which ``check_b200`` holds to SGLang's own words
        return {"refused": refusal.split('("', 1)[1].split('", ', 1)[0], "quoted": True}
    backend = sm100_backend(profile, options)
    # SGLang reads a told 1 as none told (the check's B200 rows agree); a page it replaces
    # (none told, a model override's, a backend's page fix) as the note says
    default = sglang_default_page(B200, profile, options)
    page = default.page if default else options.sglang_page_size
    figures = flatkv_figures(spec, budget, page, overlap,
                             {**ratios, CHUNK: options.sglang_chunked_prefill_size,
                              "gpu_compute_capability": BLACKWELL_CAPABILITY})
    if "refused" not in figures:
        figures.update(backend=backend, page=page_size(profile, replace(
            options, sglang_page_size=page)))
    return figures


def edge_budget(sg: NS, spec, ratios: dict | None = None, overlap: bool = True) -> int:
    """The least budget SGLang starts the model at (page 1, defaults, or ``ratios``' options,
    at ``overlap``), by bisection on SGLang's own code: the setting where a refusal rule and
    the token arithmetic meet."""
    low, high = 1, 40 * GIB  # SGLang refuses at ``low`` and starts at ``high``
    while high - low > 1:
        mid = (low + high) // 2
        refused = "refused" in sglang_figures(sg, spec, mid, 1, overlap, ratios or {})
        low, high = (mid, high) if refused else (low, mid)
    return high


def check_unserved(sg: NS) -> tuple[list[str], int]:
    """Print a line for each preset SGLang serves no model of (``unserved_reason``), beside
    FlatKV's refusal, which its ``sglang`` strategy must give (asked at 40 GiB, page 1: a
    model SGLang has no class for is refused whatever the setting); and one for a preset
    SGLang serves that ``PRESETS`` leaves out. The skipped presets, and how many of these
    lines are wrong."""
    skipped, bad = [], 0
    for name in list_presets():
        spec = load_preset(name)
        reason = unserved_reason(sg, spec)
        if reason is None:
            if name not in PRESETS:
                bad += 1
                print(f"BAD {name}: SGLang serves it, and PRESETS does not check it")
            continue
        skipped.append(name)
        flatkv = flatkv_figures(spec, BUDGETS[0], 1, True, {})
        refused = "refused" in flatkv
        bad += not refused
        print(f"{'skip' if refused else 'BAD '} {name}: SGLang serves no such model ({reason}) | "
              f"flatkv: {show(flatkv)}")
    return skipped, bad


def check(sg: NS, spec, budget: int, page: int, overlap: bool, ratios: dict, label: str,
          context: int = CONTEXT, kv_dtype: str | None = None,
          model_kv: str | None = None) -> bool:
    """Run one setting on both sides, print its line, and say whether they agree.
    ``model_kv``: the model's KV dtype where SGLang cannot be told it (``flatkv_figures``);
    SGLang's side reads the model in it and is told ``kv_dtype`` alone."""
    if model_kv is not None:
        spec = spec.with_options(kv_dtype=model_kv)
    engine = sglang_figures(sg, spec, budget, page, overlap, ratios, context, kv_dtype)
    flatkv = flatkv_figures(spec, budget, page, overlap, ratios, context, kv_dtype, model_kv)
    setting = (f"{label} B={budget:,} P={page} overlap={'on' if overlap else 'off'}"
               + "".join(f" {k}={v}" for k, v in ratios.items())
               + (f" context={context}" if context != CONTEXT else "")
               + (f" model kv={model_kv}" if model_kv else "")
               + (f" kv={kv_dtype}" if kv_dtype else ""))
    return report("sglang", setting, engine, flatkv)


def random_setting(sg: NS, rng: random.Random):
    """One random setting near a preset SGLang serves (or, three times in twenty, a model of
    state layers alone: ``STATE_ONLY`` or a Mamba1 one, ``MAMBA1_MODELS``), within what SGLang
    0.5.23 starts with on one Hopper GPU:
    the preset's shape perturbed (``perturb_spec``: heads, head and state dims,
    conv kernel, window or chunk, layer counts and hybrid ratio; Llama 4's period of four kept,
    as SGLang places its chunked layers by it) three times in four; a tp of 1 to 8 that splits
    it (SGLang refuses any other at start-up); the config's
    ``mamba_ssm_dtype`` (float32, bfloat16, float16 or none) for a state model;
    ``--kv-cache-dtype fp8_e4m3`` (not for DeepSeek-V3.2, whose dtype SGLang picks); a page of
    1 to 256 tokens; overlap scheduling on or off; both ratios (odd decimals too, where
    SGLang's float arithmetic and the exact one part); for a state model, speculative
    decoding three times in ten (N of 1 to 7 steps drafted: ``new_bags``; one time in twenty
    for a Mamba1 model, which SGLang refuses to draft for);
    ``--max-running-requests`` one time in four (``random_running_requests``); for a state
    model ``--max-mamba-cache-size`` one time in five (``random_state_slots``);
    ``--disable-radix-cache`` one time in five, with a ``--chunked-prefill-size`` (FlatKV's
    sglang_chunked_prefill_size) of its own one time in three of those (chunked prefill off,
    -1 or 0, among them); else chunked prefill off one time in twenty; ``--attn-dp-size`` D
    (``sglang_attn_dp_size``) of 2 to 8 dividing the tp three times in ten where one does; for
    a state model ``--mamba-track-interval`` (``sglang_mamba_track_interval``) of 2 to 1,024
    one time in five, half of those at a page of 512 or 1,024; ``--mamba-radix-cache-strategy``
    no_buffer, extra_buffer or extra_buffer_lazy (``sglang_mamba_radix_cache_strategy``) one time
    in five for a state model, one in fifty for one without state (the extra buffer refused,
    no_buffer unread); a context up to the model's;
    a budget anywhere from 16 MiB to 80 GiB, or at the least SGLang starts at (bisected on
    SGLang) and 1 B under. Returns ``check``'s arguments after ``sg``."""
    name = (rng.choice((STATE_ONLY, *MAMBA1_MODELS)) if rng.random() < 0.15
            else rng.choice(PRESETS))
    spec = model_spec(name)
    if rng.random() < 0.75:
        spec = perturb_spec(rng, spec, keep_inner=name.startswith("Llama-4"))
    spec = spec.with_options(tp=rng.choice([t for t in (1, 2, 4, 8) if spec.splits_over(t)]))
    kinds = {type(k).__name__ for k in spec.layers}
    if kinds - {"AttentionLayer", "MLALayer"} and rng.random() < 0.5:
        spec = replace(spec, config_mamba_ssm_dtype=rng.choice(
            (None, "float32", "bfloat16", "float16")))
    sparse = any(getattr(k, "index_head_dim", None) for k in spec.layers)
    kv_dtype = "fp8_e4m3" if not sparse and rng.random() < 0.3 else None
    page = rng.choice((1, 1, 16, 32, 64, 128, 256))
    overlap = rng.random() < 0.7
    ratios = {}
    if rng.random() < 0.5:
        ratios["mamba_full_memory_ratio"] = rng.choice(
            (0.1, 0.5, 0.9, 2.0, round(rng.uniform(0.05, 4), rng.randint(2, 3))))
    if rng.random() < 0.5:  # SGLang documents it in (0, 1]
        ratios["swa_full_tokens_ratio"] = rng.choice(
            (0.1, 0.5, 0.8, 1.0, round(rng.uniform(0.05, 1), rng.randint(2, 3))))
    if rng.random() < (0.05 if name in MAMBA1_MODELS else 0.3):  # a drafter's steps
        ratios["speculative_tokens"] = rng.choice((1, 2, 3, 3, 4, 5, 7))
    if (told := random_running_requests(rng)) is not None:
        ratios["sglang_max_running_requests"] = told
    if kinds - {"AttentionLayer", "MLALayer"} and (slots := random_state_slots(rng)):
        ratios["sglang_max_mamba_cache_size"] = slots
    if rng.random() < 0.2:  # --disable-radix-cache, and one time in three a prefill chunk
        ratios["sglang_disable_radix_cache"] = True
        if rng.random() < 1 / 3:
            ratios[CHUNK] = rng.choice((512, 2048, 4096, 16384, rng.randint(1, 32768),
                                        page * rng.randint(1, 32768 // page), *CHUNK_OFF))
    elif rng.random() < 0.05:  # chunked prefill off, the radix cache on
        ratios[CHUNK] = rng.choice(CHUNK_OFF)
    dps = [d for d in range(2, 9) if spec.tp % d == 0]
    if dps and rng.random() < 0.3:  # --attn-dp-size D dividing the tp
        ratios[DP] = rng.choice(dps)
    if rng.random() < (0.2 if kinds - {"AttentionLayer", "MLALayer"} else 0.02):
        ratios[STRATEGY] = rng.choice(  # --mamba-radix-cache-strategy
            ("no_buffer", "extra_buffer", "extra_buffer_lazy"))
    if kinds - {"AttentionLayer", "MLALayer"} and rng.random() < 0.2:  # --mamba-track-interval
        ratios[TRACK] = rng.choice((2, 64, 128, 384, 512, 768, 1024))
        if rng.random() < 0.5:  # a page past 256, which only a larger interval takes
            page = rng.choice((512, 1024))
    context = random_context(rng, spec)
    budget = edge_or_random_budget(rng, lambda b: "refused" in sglang_figures(
        sg, spec, b, page, overlap, ratios, context, kv_dtype))
    label = spec_label(spec) + (f" ssm={spec.config_mamba_ssm_dtype}"
                                if spec.config_mamba_ssm_dtype else "")
    return spec, budget, page, overlap, ratios, label, context, kv_dtype


def main() -> int:
    """Run every setting on both sides, print them, and count the mismatches; with
    ``--random N``, N random settings instead (``random_setting``), the i-th drawn from seed
    S + i so that ``--random 1 --seed S+i`` repeats it alone. SGLang's own warnings (its capped
    max_running_requests, CUDA-only quantization notes) are silenced: the table says what they
    would."""
    directory, args = wheel_from_command_line(__doc__.splitlines()[0], "sglang", "0.5.23")
    sg = import_sglang(directory)
    install_stand_ins(new_bags(1, True, {}))
    if args.random:
        mismatches = 0
        for i in range(args.random):
            seed = args.seed + i
            if not check(sg, *random_setting(sg, random.Random(seed))):
                mismatches += 1
                print(f"repro: python bench/sglang_check.py --sglang DIR --random 1 --seed {seed}")
        print(f"{args.random} random settings (seeds {args.seed} to "
              f"{args.seed + args.random - 1}), {mismatches} mismatches")
        return 1 if mismatches else 0
    skipped, mismatches = check_unserved(sg)
    mismatches += check_chunk_defaults()
    mismatches += check_swa_admission()
    rows = []
    for name, budget, page, overlap, ratios in settings():
        specs = [model_spec(name)]
        by_tp = bool({"speculative_tokens", "sglang_max_running_requests",
                      "sglang_max_mamba_cache_size", "sglang_disable_radix_cache"}
                     & set(ratios))
        if DP in ratios:  # attention DP: one TP it divides
            specs, by_tp = [specs[0].with_options(tp=dp_tp(name))], True
        elif by_tp:
            specs = [specs[0].with_options(tp=tp) for tp in SPECULATIVE_TP]
        for spec in specs:
            budgets = [budget] if budget != EDGE else [edge_budget(sg, spec, ratios, overlap)] * 2
            if budget == EDGE:
                budgets[1] -= 1
            label = name + (f" tp={spec.tp}" if by_tp else "")
            rows += [(label, spec, b, page, overlap, ratios, CONTEXT) for b in budgets]
    state_only = model_spec(STATE_ONLY)  # its token pool is the context: short ones too
    rows += [(STATE_ONLY, state_only, b, page, True, ratios, context) for b in BUDGETS
             for page in (1, 64) for context in STATE_ONLY_CONTEXTS
             for ratios in ({}, {"sglang_max_running_requests": 20})]
    for name in MAMBA1_MODELS:  # short contexts and the assumed 2,048; a config's
        spec = model_spec(name)  # mamba_ssm_dtype, which their state does not read
        rows += [(name, spec, b, page, True, {}, context) for b in BUDGETS for page in (1, 64)
                 for context in (*STATE_ONLY_CONTEXTS, ASSUMED_MAX_MODEL_LEN)]
        rows += [(f"{name} ssm={dtype}", replace(spec, config_mamba_ssm_dtype=dtype), b, 1,
                  True, {}, CONTEXT) for b in BUDGETS for dtype in ("bfloat16", "float16")]
    for name, spec, budget, page, overlap, ratios, context in rows:
        mismatches += not check(sg, spec, budget, page, overlap, ratios, name, context)
    for name, budget, kv in dsa_kv_rows():
        rows.append(name)
        mismatches += not check(sg, row_spec(name), budget, 64, True, {}, name,
                                kv_dtype=kv)
    for name, budget, model_kv, kv in dsa_model_kv_rows():
        rows.append(name)
        mismatches += not check(sg, model_spec(name), budget, 64, True, {}, name,
                                kv_dtype=kv, model_kv=model_kv)
    for label, config in LENGTH_CONFIGS.items():
        rows.append(label)
        mismatches += not check_length(sg, label, config)
    b200, bad = check_b200(sg)
    rows += [B200] * b200
    mismatches += bad
    sm8x, bad = check_sm8x_dsa(sg)
    rows += ["SM 8.x"] * sm8x
    mismatches += bad
    print(f"{len(rows)} settings, {mismatches} mismatches; {len(skipped)} presets SGLang does "
          f"not serve skipped ({', '.join(skipped)})")
    return 1 if mismatches else 0


class _Declared(Exception):
    """What SGLang's hook declares first (its chunked_prefill_size), raised to stop it there."""


def sglang_default_chunk(gpu_mib: float | None) -> int:
    """The --chunked-prefill-size SGLang's own ``handle_gpu_memory_settings``
    (arg_groups/memory_hook.py) declares when told none, on a GPU whose nvidia-smi memory.total
    is ``gpu_mib`` (None: unread): its memory query is pointed at that figure and its view at
    an unset --chunked-prefill-size (tp 1, no decode graph size), and the hook is stopped at
    its first declaration, the chunk, before the graph sizes that need a GPU."""
    hook = importlib.import_module("sglang.srt.arg_groups.memory_hook")
    view = NS(device="cuda", chunked_prefill_size=None, tp_size=1,
              cuda_graph_config=NS(decode=NS(max_bs=None), prefill=NS(max_bs=None)))
    hook.get_device_memory_capacity = lambda device=None: gpu_mib
    hook.resolving_view = lambda server_args: view

    def declare(server_args, source, **fields):
        raise _Declared(fields)

    hook.declare_resolution = declare
    try:
        hook.handle_gpu_memory_settings(view)
    except _Declared as declared:
        return declared.args[0]["chunked_prefill_size"]
    raise AssertionError("handle_gpu_memory_settings declared no chunked_prefill_size")


def check_chunk_defaults() -> int:
    """SGLang's default --chunked-prefill-size on each GPU preset, and on sizes either side of
    its tiers (20, 35, 60, 90 and 160 GiB), beside FlatKV's ``sglang_default_chunked_prefill``:
    the mismatches."""
    sizes = {**{name: b // MiB for name, b in GPU_PRESETS.items()},
             **{f"{gib} GiB{edge:+d} MiB": gib * 1024 + edge for gib in (20, 35, 60, 90, 160)
                for edge in (-1, 0)}}
    return sum(not report("sglang", f"{name} ({mib:,} MiB) default chunked prefill",
                          {"chunk": sglang_default_chunk(mib)},
                          {"chunk": sglang_default_chunked_prefill(mib * MiB)})
               for name, mib in sizes.items())


# Windows (gpt-oss's 127 as its model reports it, Gemma's, Llama 4's chunk), pages, and outputs
# for check_swa_admission; its prompts lie either side of the window and far past it
ADMISSION_WINDOWS = (127, 511, 1_023, 8_192)
ADMISSION_PAGES = (1, 16, 64)
ADMISSION_OUTPUTS = (1, 100, 5_000)


def check_swa_admission() -> int:
    """SGLang's own ``estimate_swa_kv_tokens`` (mem_cache/prefill_budget.py), the sliding tokens
    it reserves to admit a whole prefill, beside FlatKV's port of it, which its concurrency with
    chunked prefill off reads (``sglang.concurrency._unchunked_swa_limit``): prompts in whole
    pages as SGLang's check_prefill rounds them, a line a window and page; the mismatches."""
    own = importlib.import_module("sglang.srt.mem_cache.prefill_budget").estimate_swa_kv_tokens
    bad = 0
    for window in ADMISSION_WINDOWS:
        for page in ADMISSION_PAGES:
            cases = [(-(-prompt // page) * page, out)
                     for prompt in (1, window - 1, window, window + 1, 32_767, 131_071)
                     for out in ADMISSION_OUTPUTS]
            bad += not report(
                "sglang", f"estimate_swa_kv_tokens window={window} page={page}",
                {"reserved": " ".join(str(own(p, o, sliding_window_size=window, page_size=page))
                                      for p, o in cases)},
                {"reserved": " ".join(str(estimate_swa_kv_tokens(p, o, window, page))
                                      for p, o in cases)})
    return bad


def check_length(sg: NS, label: str, config: dict) -> bool:
    """A config.json's context length as SGLang's own ``get_context_length`` reads it (the
    config resolved by transformers; ``ModelConfig._derive_context_length`` takes it with no
    --context-length), beside the one FlatKV gives SGLang: where FlatKV says the length is
    assumed, the 2,048 its note says SGLang assumes too (unscaled, where vLLM's is scaled by a
    rope factor), else the model's max_model_len."""
    from transformers import AutoConfig

    fields = {k: v for k, v in config.items() if k != "model_type"}
    text = AutoConfig.for_model(config["model_type"], **fields).get_text_config()
    spec = spec_from_hf_config(config)
    ours = ASSUMED_MAX_MODEL_LEN if spec.max_model_len_assumed else spec.max_model_len
    return report("sglang", f"{label} context length",
                  {"context_len": sg.text_config.get_context_length(text)},
                  {"context_len": ours})


if __name__ == "__main__":
    sys.exit(main())
