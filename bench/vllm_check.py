"""Check FlatKV's vLLM figures against vLLM 0.34.0's own KV-cache sizing code, on a CPU.

For each setting of ``settings()`` it builds every cache layer's spec with vLLM's own classes
(``FullAttentionSpec``, ``SlidingWindowSpec``, ``MLAAttentionSpec``, ``MambaSpec`` with the shapes
and dtypes the model class's ``get_mamba_state_shape_from_config`` /
``get_mamba_state_dtype_from_config`` give), as the layers' ``get_kv_cache_spec`` build them;
runs ``get_global_kv_cache_groups``, ``get_kv_cache_configs`` and ``get_kv_cache_capacity``
(``v1/core/kv_cache_planning.py``, ``v1/core/kv_cache_utils.py``), and prints vLLM's block
size P, block bytes, num_blocks, logged "GPU KV cache size" tokens and "Maximum concurrency"
beside FlatKV's ``vllm`` strategy, one line each, then ``N settings, M mismatches``. Exit
status 1 if any figure differs (or one side refuses where the other starts), else 0. No GPU is
needed: CUDA-only modules are served as stubs, and vLLM's platform is never asked.

vLLM is taken as launched on one H100 with ``--max-model-len 32768``, TP 1, bf16, no
speculative decoding, ``--max-num-batched-tokens 8192`` (FlatKV's default) and the setting's
``--block-size`` (kept as the user's), ``--mamba-cache-mode``, ``--async-scheduling``. Attention
backends are stand-ins answering ``get_supported_kernel_block_sizes`` as vLLM's do: FLASH_ATTN
and FLASH_ATTN_MLA (``[MultipleOf(16)]``, what ``platforms/cuda.py``'s priorities pick first
on SM 9.0), FLASHMLA (``[64]``) where a row asks. A hybrid's P is vLLM's own
``Platform._align_hybrid_block_size`` (``platforms/interface.py``), with its lookups into a live
model served (``align_hybrid_block_size``); the KV-cache layout is vLLM's
``resolve_kv_cache_layout``.
Prefill checkpoint blocks (align mode): 1 for MambaMixer2 layers (``mamba_mixer2.py``); for GDN
only where a row runs its prefill on FlashInfer (an H100's; a 64-token checkpoint grid); none
for Kimi Linear's KDA (FlashKDA's exporter needs a bounded gate: not modelled). Every model
builds on a CPU; none is skipped.

``bench/engine_checks.sh`` fetches vLLM's wheel, unzips it (nothing of it is installed), makes a
venv for its imports and runs this script as ``python bench/vllm_check.py --vllm DIR``, DIR
the unzipped wheel; CI runs it after the tests.

What is whose: FlatKV's inputs are the preset's model shape (layer pattern, heads, head dims,
state dims, conv kernel, window, KV dtype), turned here into the config fields vLLM's model
classes read (``hf_config``); the budget is the available KV-cache memory vLLM's profiler hands
``get_kv_cache_configs``; max_model_len, block size and cache mode are the setting's. vLLM's
outputs are everything else: the state shapes and dtypes (Nemotron-H's float32 ssm default
included), P and the state padding, the groups and padding layers, the bytes a block, the
blocks, the concurrency and the logged tokens, and any refusal. Nothing FlatKV computes enters
vLLM's side.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import math
import sys
import types
import warnings
from pathlib import Path
from types import SimpleNamespace as NS
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_common import report, stub_modules, unzipped_wheel  # noqa: E402  (bench/, this folder)

from flatkv.presets import load_preset  # noqa: E402
from flatkv.strategies import StrategyOptions, run_strategy  # noqa: E402

GIB = 1 << 30
CONTEXT = 32_768
BATCHED = 8192
PRESETS = ("Llama-3.1-8B", "gpt-oss-20b", "Qwen3-Next-80B-A3B", "Nemotron-H-8B",
           "Falcon-H1-7B", "DeepSeek-V3", "Kimi-Linear-48B-A3B")
MLA_PRESETS = ("DeepSeek-V3", "Kimi-Linear-48B-A3B")
BUDGETS = (40 * GIB, 12_345_678_901)
MAMBA2_CLASSES = ("NemotronHForCausalLM", "FalconH1ForCausalLM")  # MambaMixer2: 1 checkpoint
MLA_CLASSES = ("DeepseekV3ForCausalLM", "KimiLinearForCausalLM")
MODEL_CLASSES = {"Qwen3NextForCausalLM": "vllm.model_executor.models.qwen3_next",
                 "NemotronHForCausalLM": "vllm.model_executor.models.nemotron_h",
                 "FalconH1ForCausalLM": "vllm.model_executor.models.falcon_h1",
                 "KimiLinearForCausalLM": "vllm.models.kimi_k3.nvidia.model"}


def settings() -> list[tuple[str, int, int, str, dict]]:
    """(preset, budget, block size, mamba cache mode, flags) rows: every preset at both budgets
    with FlatKV's default (block 16, mode none: SPEC's anchor) and vLLM 0.34's (block 64, align),
    on an H100's backend; then the MLA presets on FLASHMLA (the kernel block FlatKV assumes),
    Nemotron-H with ``--mamba-ssm-cache-dtype bfloat16`` (FlatKV's preset's), Qwen3-Next with
    its GDN prefill on FlashInfer (a checkpoint block), and Llama where one 32,768-token
    request and the null block just do not fit (4 GiB) and just do (a block more)."""
    modes = ((16, "none"), (64, "align"))
    rows = [(p, b, block, mode, {}) for p in PRESETS for b in BUDGETS for block, mode in modes]
    rows += [(p, b, 64, "align", {"backend": "FLASHMLA"}) for p in MLA_PRESETS for b in BUDGETS]
    rows += [("Nemotron-H-8B", b, block, mode, {"mamba_ssm_cache_dtype": "bfloat16"})
             for b in BUDGETS for block, mode in modes]
    rows += [("Qwen3-Next-80B-A3B", b, block, "align", {"flashinfer_gdn": True})
             for b in BUDGETS for block in (16, 64)]
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
             "platform": "vllm.platforms.interface",
             "abstract": "vllm.model_executor.layers.mamba.abstract",
             "registry": "vllm.model_executor.models"}
    vl = NS(**{key: importlib.import_module(name) for key, name in names.items()})
    vl.models = {arch: getattr(importlib.import_module(m), arch)
                 for arch, m in MODEL_CLASSES.items()}
    return vl


def stand_in_backend(vl: NS, name: str):
    """vLLM's AttentionBackend as ``name`` answers on an H100 with a bf16 KV cache: its kernel
    block sizes (flash_attn.py, mla/flashattn_mla.py, mla/flashmla.py), vLLM's own
    ``supports_block_size``, no repacking of the spec, any KV-cache layout."""
    sizes = {"FLASH_ATTN": [vl.backend.MultipleOf(16)], "FLASH_ATTN_MLA":
             [vl.backend.MultipleOf(16)], "FLASHMLA": [64]}[name]
    return type(name, (vl.backend.AttentionBackend,), {
        "get_supported_kernel_block_sizes": staticmethod(lambda spec=None: list(sizes)),
        "get_name": staticmethod(lambda: name)})


def hf_config(spec) -> NS:
    """The config.json fields vLLM's model classes read for the state shapes, from the preset's
    model shape only."""
    kinds = {type(k).__name__: k for k in spec.kinds.values()}
    hf = NS(architectures=list(spec.architectures), num_hidden_layers=spec.model_layers)
    if "Mamba2Layer" in kinds:
        m = kinds["Mamba2Layer"]
        hf.__dict__.update(  # Nemotron-H's names, then Falcon-H1's
            mamba_num_heads=m.n_heads, mamba_head_dim=m.head_dim, n_groups=m.n_groups,
            ssm_state_size=m.d_state, conv_kernel=m.conv_kernel, mamba_d_ssm=m.n_heads
            * m.head_dim, mamba_n_heads=m.n_heads, mamba_d_head=m.head_dim,
            mamba_n_groups=m.n_groups, mamba_d_state=m.d_state, mamba_d_conv=m.conv_kernel)
        if spec.config_mamba_ssm_dtype is not None:
            hf.mamba_ssm_cache_dtype = spec.config_mamba_ssm_dtype
    if "GDNLayer" in kinds:
        g = kinds["GDNLayer"]
        hf.__dict__.update(
            linear_num_key_heads=g.k_heads, linear_num_value_heads=g.v_heads,
            linear_key_head_dim=g.head_dim_k, linear_value_head_dim=g.head_dim_v,
            linear_conv_kernel_dim=g.conv_kernel,
            linear_attn_config={"num_heads": g.v_heads, "head_dim": g.head_dim_v,
                                "short_conv_kernel_size": g.conv_kernel})
    return hf


def vllm_config(vl: NS, spec, block: int, mode: str, async_sched: bool, flags: dict) -> NS:
    """The VllmConfig fields the sizing reads, as ``vllm serve`` fills them for one GPU; the
    model's VerifyAndUpdateConfig hooks (Nemotron-H's ssm dtype, the hybrid's mamba block size)
    run on it as at start-up."""
    dtype, hf = getattr(vl.iface.torch, spec.kv_dtype), hf_config(spec)
    cache = NS(block_size=block, mamba_cache_mode=mode, enable_prefix_caching=mode != "none",
               mamba_block_size=None, mamba_page_size_padded=None, cache_dtype="auto",
               mamba_cache_dtype="auto", use_replayssm=False,
               mamba_ssm_cache_dtype=flags.get("mamba_ssm_cache_dtype", "auto"),
               num_gpu_blocks_override=None, kv_cache_dtype_skip_layers=None,
               prefix_cache_retention_interval=None, prefix_match_unit=None,
               kv_cache_layout=None, enable_extensible_kv_cache=False)
    cache.get_resolved_kv_cache_layout = types.MethodType(
        vl.cache.CacheConfig.get_resolved_kv_cache_layout, cache)
    model = NS(max_model_len=CONTEXT, original_max_model_len=CONTEXT, dtype=dtype,
               hf_config=hf, hf_text_config=hf, architecture=spec.architectures[0],
               architectures=list(spec.architectures), supports_kv_cache_grouping=False,
               use_mla=any(type(k).__name__ == "MLALayer" for k in spec.kinds.values()))
    vc = NS(cache_config=cache, model_config=model, speculative_config=None,
            parallel_config=NS(tensor_parallel_size=1, pipeline_parallel_size=1,
                               decode_context_parallel_size=1),
            scheduler_config=NS(max_num_batched_tokens=BATCHED, async_scheduling=async_sched,
                                enable_chunked_prefill=True,
                                disable_hybrid_kv_cache_manager=False),
            attention_config=NS(hisparse_config=None), kv_transfer_config=None,
            num_prefill_lookahead_tokens=0, num_speculative_tokens=0,
            use_flashinfer_replayssm=False, max_concurrent_batches=1 + async_sched)
    vc.max_in_flight_tokens = vc.max_concurrent_batches * BATCHED
    if spec.architectures[0] == "NemotronHForCausalLM":
        vl.configs.NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype(
            cache_config=cache, hf_config=hf)
    if spec.architectures[0] in MODEL_CLASSES:  # MambaModelConfig's hook, cache part
        cache.mamba_block_size = block if cache.enable_prefix_caching else CONTEXT
    return vc


def align_hybrid_block_size(vl: NS, vc: NS, backend, checkpoint: int | None) -> None:
    """vLLM's own ``Platform._align_hybrid_block_size`` (platforms/interface.py:950): raise the
    block size until the attention page covers the model's state page, and pad the state page
    to the attention page. Only its lookups into a live model are served here: the model class
    (``ModelRegistry.resolve_model_cls``), the attention backends of the built layers
    (``_find_non_ssm_backends``: the one backend), the state layers' prefill checkpoint
    alignment (``get_mamba_prefill_checkpoint_alignment``: ``checkpoint``, None where one has
    none), and ModelConfig's KV heads and head size (the preset's)."""
    model = vc.model_config
    shape = vc.layer_shape["mla"] if model.use_mla else vc.layer_shape["full"]
    model.get_num_kv_heads = lambda parallel: 1 if model.use_mla else shape.kv_heads
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


def layer_specs(vl: NS, spec, vc: NS, backend_name: str | None, flashinfer_gdn: bool) -> dict:
    """Every cache layer's KVCacheSpec as its layer's ``get_kv_cache_spec`` builds it
    (``attention.py``, ``mla_attention.py``, ``mamba/abstract.py``, ``mamba_mixer2.py``),
    after the hybrid block-size alignment; a sliding layer takes the block vLLM's
    ``_largest_kernel_block_within`` picks for its backend. ``backend_name``: the attention
    backend asked for, else the one cuda.py's ``_get_backend_priorities`` puts first on SM 9.0
    (FLASH_ATTN; FLASH_ATTN_MLA for MLA). The block size is the user's ``--block-size``, so
    phase 1 of ``update_block_size_for_backend`` keeps it; a backend that cannot run it is
    refused."""
    iface, model, cache = vl.iface, vc.model_config, vc.cache_config
    kinds = [type(k).__name__ for k in spec.layers]
    vc.layer_shape = {("mla" if n == "MLALayer" else "full"): (
        k.kv_lora_rank + k.qk_rope_head_dim if n == "MLALayer" else k)
        for k, n in zip(spec.layers, kinds) if n in ("MLALayer", "AttentionLayer")
        and getattr(k, "sliding_window", None) is None}
    backend = stand_in_backend(vl, backend_name or ("FLASH_ATTN_MLA" if model.use_mla
                                                    else "FLASH_ATTN"))
    if not backend.supports_block_size(cache.block_size):
        raise ValueError(f"{backend.get_name()} does not take block size {cache.block_size}")
    vc.backend = backend
    # the state layers' prefill checkpoint alignment: MambaMixer2 1 (mamba_mixer2.py), GDN 64
    # on FlashInfer prefill in align mode (qwen_gdn_linear_attn.py, gdn_attn.py), else none
    checkpoint = (1 if "Mamba2Layer" in kinds else 64 if flashinfer_gdn
                  and cache.mamba_cache_mode == "align" else None)
    if any(n not in ("MLALayer", "AttentionLayer") for n in kinds):  # model_config.is_hybrid
        align_hybrid_block_size(vl, vc, backend, checkpoint)
    cls = vl.models.get(model.architecture)
    grid = checkpoint and math.lcm(cache.mamba_block_size, checkpoint)  # prefill checkpoint grid
    out = {}
    for i, (k, n) in enumerate(zip(spec.layers, kinds)):
        name = f"model.layers.{i}.{n}"
        if n == "MLALayer":
            out[name] = iface.MLAAttentionSpec(
                block_size=cache.block_size, num_kv_heads=1, max_tp_shards=1,
                head_size=k.kv_lora_rank + k.qk_rope_head_dim, dtype=model.dtype,
                cache_dtype_str="auto")
        elif n == "AttentionLayer" and k.sliding_window:
            one = iface.SlidingWindowSpec(block_size=1, num_kv_heads=k.kv_heads,
                                          head_size=k.head_dim_k, head_size_v=k.head_dim_v,
                                          dtype=model.dtype, sliding_window=k.sliding_window)
            per_token = one.real_page_size_bytes
            block = vl.attn._largest_kernel_block_within(
                backend, per_token, per_token * cache.block_size, cache.block_size, one,
                divisor_of=cache.block_size)
            out[name] = iface.SlidingWindowSpec(
                block_size=block, num_kv_heads=k.kv_heads, head_size=k.head_dim_k,
                head_size_v=k.head_dim_v, dtype=model.dtype, sliding_window=k.sliding_window)
        elif n == "AttentionLayer":
            out[name] = iface.FullAttentionSpec(
                block_size=cache.block_size, num_kv_heads=k.kv_heads, head_size=k.head_dim_k,
                head_size_v=k.head_dim_v, dtype=model.dtype)
        else:
            mamba2 = n == "Mamba2Layer"
            enum = vl.enums.MambaAttentionBackendEnum
            out[name] = iface.MambaSpec(
                shapes=tuple(cls.get_mamba_state_shape_from_config(vc)),
                dtypes=cls.get_mamba_state_dtype_from_config(vc),
                block_size=cache.mamba_block_size, page_size_padded=cache.mamba_page_size_padded,
                mamba_type=enum.MAMBA2 if mamba2 else enum.GDN_ATTN,
                mamba_cache_mode=cache.mamba_cache_mode,
                num_prefill_checkpoint_blocks=int(checkpoint is not None),
                prefill_checkpoint_alignment=1 if mamba2 else grid)
    return out


def vllm_figures(vl: NS, spec, budget: int, block: int, mode: str, async_sched: bool,
                 flags: dict) -> dict:
    """vLLM's layout for the setting from ``budget`` bytes of available KV-cache memory, or its
    refusal as ``{"refused": message}``."""
    vc = vllm_config(vl, spec, block, mode, async_sched, flags)
    try:
        specs = layer_specs(vl, spec, vc, flags.get("backend"), "flashinfer_gdn" in flags)
        vl.butils.resolve_kv_cache_layout(vc, [[x.name for x in vl.butils.
                                               get_supported_kv_cache_layouts([vc.backend])]],
                                          specs.values())
        groups = vl.plan.get_global_kv_cache_groups(vc, [specs])
        cfgs = vl.plan.get_kv_cache_configs(vc, [specs], [budget], groups)
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": str(exc).splitlines()[0][:60]}
    cfg, (tokens, concurrency) = cfgs[0], vl.utils.get_kv_cache_capacity(
        vc, vl.utils.generate_scheduler_kv_cache_config(cfgs))
    backing = max(t.size for t in cfg.kv_cache_tensors)  # the tensors overlay one slab
    return {"P": vc.cache_config.block_size, "block_bytes": backing // cfg.num_blocks,
            "num_blocks": cfg.num_blocks, "tokens": tokens, "concurrency": round(concurrency, 6)}


def flatkv_figures(spec, budget: int, block: int, mode: str, async_sched: bool,
                   flags: dict) -> dict:
    """FlatKV's prediction of the same figures (its ``vllm`` strategy), or its refusal, with
    the options its help gives for such a run, where its defaults are another's:
    - Nemotron-H's ssm state in vLLM's dtype (float32 unless told: the preset keeps SPEC's
      bf16, and its note says to set float32 to match vLLM);
    - a dense MLA model on FLASH_ATTN_MLA, vLLM 0.34's first on SM 9.0, at kernel block 16
      (FlatKV's MLA default, 64, is FlashMLA's: the FLASHMLA rows).
    GDN prefill on FlashInfer is told by its checkpoint block alone: FlatKV aligns P to its
    grid of 64 itself."""
    if spec.architectures[0] == "NemotronHForCausalLM":
        spec = spec.with_options(ssm_dtype=flags.get("mamba_ssm_cache_dtype", "float32"))
    kernel = None
    if spec.architectures[0] in MLA_CLASSES and flags.get("backend") != "FLASHMLA":
        kernel = 16
    options = StrategyOptions(
        block_size=block, mamba_cache_mode=mode, vllm_async_scheduling=async_sched,
        kernel_block_size=kernel,
        prefill_checkpoint_blocks=int(mode == "align" and (spec.architectures[0]
                                      in MAMBA2_CLASSES or "flashinfer_gdn" in flags)))
    r = run_strategy("vllm", spec.profile(), budget_bytes=budget, context_tokens=CONTEXT,
                     options=options)
    if not r.applies:
        return {"refused": r.reason[:60]}
    return {"P": r.block_size, "block_bytes": r.block_bytes, "num_blocks": r.num_blocks,
            "tokens": r.logged_tokens, "concurrency": round(r.max_concurrency, 6)}


def main() -> int:
    """Run every setting on both sides, print them, and count the mismatches."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm", required=True, help="the unzipped vllm 0.34.0 wheel")
    args = parser.parse_args()
    vl = import_vllm(unzipped_wheel(parser, args.vllm, "vllm"))
    rows = settings()
    mismatches = 0
    for name, budget, block, mode, flags in rows:
        spec = load_preset(name)
        sliding = any(getattr(k, "sliding_window", None) for k in spec.layers)
        async_sched = sliding and mode == "align"  # 0.34's default goes with its block size
        engine = vllm_figures(vl, spec, budget, block, mode, async_sched, flags)
        flatkv = flatkv_figures(spec, budget, block, mode, async_sched, flags)
        setting = (f"{name} B={budget:,} block={block} mode={mode}"
                   + (" async" if async_sched else "")
                   + "".join(f" {k}={v}" for k, v in flags.items()))
        mismatches += not report("vllm", setting, engine, flatkv)
    print(f"{len(rows)} settings, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
