"""Check FlatKV's SGLang figures against SGLang 0.5.23's own pool-sizing code, on a CPU.

For each setting of ``SETTINGS`` it runs SGLang's sizing functions on the preset's model
(``KVCacheConfigurator._handle_max_mamba_cache``, ``config_from_budget`` with its pool
configurators' ``calculate_pool_sizes``, ``resolve_max_num_reqs``, ``_calculate_mamba_ratio``,
and the radix-cache mode from ``arg_groups/overrides.py``'s ``_mamba_radix_cache_resolution``)
and prints its pools beside FlatKV's ``sglang`` strategy, one line each, then
``N settings, M mismatches``. Exit status 1 if any figure differs (or one side refuses where the
other starts), else 0. No GPU is needed: it runs on a CPU, CUDA-only modules served as stubs.

SGLang is taken as launched on one GPU with ``--context-length 32768`` (FlatKV's context is
its context_len, which sets max_running_requests' estimate), no speculative decoding, its
default triton linear-attention backend and radix cache, and the setting's ``--page-size``,
``--disable-overlap-schedule``, ``--mamba-full-memory-ratio`` and ``--swa-full-tokens-ratio``.

``bench/engine_checks.sh`` fetches SGLang's wheel, unzips it (nothing of it is installed), makes a
venv for its imports and runs this script as ``python bench/sglang_check.py --sglang DIR``, DIR
the unzipped wheel; CI runs it after the tests.

What is whose: FlatKV's inputs are the preset's model shape (layer pattern, heads, head dims,
state dims, conv kernel, window, dtypes), turned into SGLang's own config classes here
(``sglang_hf_config``); the budget is the ``rest_memory`` SGLang's profiler hands its sizing.
SGLang's outputs are everything else: the state bytes per slot (its ``mamba2_cache_params``),
the KV bytes per token (its configurators' cell sizes), the window it reports (gpt-oss's model
file), whether a model gets the hybrid SWA pool, the radix-cache mode and slots per request,
the pools, max_running_requests and any refusal. Nothing FlatKV computes enters SGLang's side.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace as NS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_common import report, stub_modules, unzipped_wheel  # noqa: E402  (bench/, this folder)

from flatkv.presets import load_preset  # noqa: E402
from flatkv.strategies import StrategyOptions, run_strategy  # noqa: E402

GIB = 1 << 30
CONTEXT = 32_768
OVERLAP_MATTERS = ("Qwen3-Next-80B-A3B", "Nemotron-H-8B", "Falcon-H1-7B", "Kimi-Linear-48B-A3B")
PRESETS = OVERLAP_MATTERS + ("LFM2-1.2B", "gpt-oss-20b", "gpt-oss-120b", "Llama-3.1-8B")
BUDGETS = (40 * GIB, 12_345_678_901)
EDGE = "edge"  # the least budget SGLang starts at (found by bisection on SGLang), and 1 B less


def settings() -> list[tuple[str, object, int, bool, dict]]:
    """(preset, budget, page, overlap, ratios) rows: every preset at both budgets and pages 1
    and 64, overlap off too where it sets the radix-cache mode (the extra_buffer architectures),
    each preset at its refusal edge, and the two ratios moved off their defaults once each."""
    rows = [(p, b, page, True, {}) for p in PRESETS for b in BUDGETS for page in (1, 64)]
    rows += [(p, b, page, False, {}) for p in OVERLAP_MATTERS for b in BUDGETS
             for page in (1, 64)]
    rows += [(p, EDGE, 1, True, {}) for p in PRESETS]
    rows += [("Qwen3-Next-80B-A3B", 40 * GIB, 64, True, {"mamba_full_memory_ratio": 0.5}),
             ("gpt-oss-20b", 12_345_678_901, 1, True, {"swa_full_tokens_ratio": 0.3})]
    return rows


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
             "spec": "sglang.srt.speculative.spec_info"}
    sg = NS(**{key: importlib.import_module(name) for key, name in names.items()})
    # no draft model fused into the pools; a subclass, as the dataclass has slots
    sg.Configurator = type("OneGpuConfigurator", (sg.kvc.KVCacheConfigurator,),
                           {"fused_entry_bytes": lambda self, sub_pool: None})
    return sg


def install_stand_ins(bags: NS) -> None:
    """Point every loaded SGLang module's ``get_schedule`` / ``get_memory`` / ``get_exec`` /
    ``get_parallel`` / ``get_spec`` / ``get_context`` at ``bags``, as a launched server's
    runtime context would answer them for one GPU, no speculative decoding and the options
    of the setting; ``get_context().override`` writes the schedule bag, as SGLang's does."""
    getters = {"get_schedule": lambda: bags.schedule, "get_memory": lambda: bags.memory,
               "get_exec": lambda: bags.exec, "get_parallel": lambda: bags.parallel,
               "get_spec": lambda: bags.spec, "get_disagg": lambda: bags.disagg,
               "get_context": lambda: bags.context, "linear_attn_tp_size": lambda: 1,
               "get_platform": lambda: NS(is_xpu=False, is_npu=False)}
    for name, module in list(sys.modules.items()):
        if name.startswith("sglang."):
            for getter, fn in getters.items():
                if hasattr(module, getter):
                    setattr(module, getter, fn)


def new_bags(page: int, overlap: bool, ratios: dict) -> NS:
    """The server options SGLang's sizing reads: its defaults, with the setting's page size,
    overlap scheduling and ratios (``--mamba-full-memory-ratio``, ``--swa-full-tokens-ratio``)."""
    schedule = NS(page_size=page, disable_overlap_schedule=not overlap, max_running_requests=None,
                  max_mamba_cache_size=None, max_total_tokens=None, chunked_prefill_size=8192,
                  mamba_full_memory_ratio=ratios.get("mamba_full_memory_ratio", 0.9),
                  swa_full_tokens_ratio=ratios.get("swa_full_tokens_ratio", 0.8))
    context = NS(override=lambda source, **fields: vars(schedule).update(fields))
    return NS(schedule=schedule, context=context,
              memory=NS(disable_radix_cache=False, enable_unified_memory=False,
                        enable_hisparse=False),
              exec=NS(mamba=NS(enable_mamba_extra_buffer=False,
                               enable_mamba_extra_buffer_lazy=False,
                               enable_linear_replayssm_spec=False)),
              parallel=NS(attn_tp_size=1, attn_dcp_size=1, attn_cp_size=1, pp_size=1,
                          enable_dsa_cache_layer_split=False, enable_kv_cache_sharding=False),
              spec=NS(speculative_algorithm=None, speculative_num_draft_tokens=None),
              disagg=NS(disaggregation_mode="null"))


def sglang_hf_config(sg: NS, spec) -> object:
    """The preset's model as SGLang's own config class for its architecture (so SGLang computes
    the state shapes and layer ids), or a plain namespace of config.json fields for the models
    whose SGLang config is transformers' (gpt-oss, Llama). Only model shape goes in."""
    arch = spec.architectures[0]
    kinds = {type(k).__name__: k for k in spec.kinds.values()}
    attn = next((k for k in spec.kinds.values() if type(k).__name__ == "AttentionLayer"
                 and k.sliding_window is None), None)
    names = ["full" if type(k).__name__ in ("AttentionLayer", "MLALayer") else "state"
             for k in spec.layers]
    state_ids = [i for i, x in enumerate(names) if x == "state"]
    common = dict(architectures=[arch], num_hidden_layers=len(spec.layers))
    if attn is not None:
        common.update(num_key_value_heads=attn.kv_heads, head_dim=attn.head_dim_k)
    if spec.config_mamba_ssm_dtype is not None:  # a config.json field, as SGLang reads it
        common["mamba_ssm_dtype"] = spec.config_mamba_ssm_dtype
    if arch == "Qwen3NextForCausalLM":
        g = kinds["GDNLayer"]
        return sg.configs.Qwen3NextConfig(
            **common, full_attention_interval=names.index("full") + 1,
            linear_num_key_heads=g.k_heads, linear_num_value_heads=g.v_heads,
            linear_key_head_dim=g.head_dim_k, linear_value_head_dim=g.head_dim_v,
            linear_conv_kernel_dim=g.conv_kernel)
    if arch == "NemotronHForCausalLM":
        m = kinds["Mamba2Layer"]
        return sg.configs.NemotronHConfig(
            **common, hybrid_override_pattern="".join("*" if x == "full" else "M" for x in names),
            mamba_num_heads=m.n_heads, mamba_head_dim=m.head_dim, n_groups=m.n_groups,
            ssm_state_size=m.d_state, conv_kernel=m.conv_kernel)
    if arch == "FalconH1ForCausalLM":  # every layer has attention and a Mamba2 mixer
        m = kinds["Mamba2Layer"]
        common["num_hidden_layers"] = spec.model_layers
        return sg.configs.FalconH1Config(
            **common, mamba_d_ssm=m.n_heads * m.head_dim, mamba_n_heads=m.n_heads,
            mamba_d_head=m.head_dim, mamba_n_groups=m.n_groups, mamba_d_state=m.d_state,
            mamba_d_conv=m.conv_kernel)
    if arch == "KimiLinearForCausalLM":
        g, mla = kinds["GDNLayer"], kinds["MLALayer"]
        return sg.configs.KimiLinearConfig(
            **common, kv_lora_rank=mla.kv_lora_rank, qk_rope_head_dim=mla.qk_rope_head_dim,
            linear_attn_config={"kda_layers": [i + 1 for i in state_ids],
                                "full_attn_layers": [i + 1 for i, x in enumerate(names)
                                                     if x == "full"],
                                "num_heads": g.v_heads, "head_dim": g.head_dim_v,
                                "short_conv_kernel_size": g.conv_kernel})
    if arch == "Lfm2ForCausalLM":
        c = kinds["ShortConvLayer"]
        return sg.configs.Lfm2Config(
            **common, hidden_size=c.channels, conv_L_cache=c.conv_kernel,
            layer_types=["full_attention" if x == "full" else "conv" for x in names])
    sliding = [k.sliding_window for k in spec.layers if getattr(k, "sliding_window", None)]
    hf = NS(**common, sliding_window=sliding[0] if sliding else None,
            layer_types=["sliding_attention" if getattr(k, "sliding_window", None)
                         else "full_attention" for k in spec.layers])
    hf.get_text_config = lambda: hf  # as PretrainedConfig answers for a text model
    return hf


def configurator(sg: NS, spec, context: int, page: int):
    """SGLang's KVCacheConfigurator for the model, its fields set as ModelRunner sets them
    (one GPU, no draft); SGLang's own helpers decide the state config, the hybrid SWA pool
    and its layers, and the window the model reports."""
    hf = sglang_hf_config(sg, spec)
    attn = next((k for k in spec.kinds.values() if hasattr(k, "kv_heads")), None)
    mla = any(type(k).__name__ == "MLALayer" for k in spec.kinds.values())
    arch_enum = sg.model_config.AttentionArch
    model = NS(hf_config=hf, hf_text_config=hf, context_len=context, is_draft_model=False,
               linear_attn_registry_result=None, attention_arch=arch_enum.MLA if mla
               else arch_enum.MHA, is_multimodal=False, quantization=None,
               kv_lora_rank=getattr(hf, "kv_lora_rank", None),
               qk_rope_head_dim=getattr(hf, "qk_rope_head_dim", None),
               head_dim=attn and attn.head_dim_k, v_head_dim=attn and attn.head_dim_v,
               swa_head_dim=attn and attn.head_dim_k, swa_v_head_dim=attn and attn.head_dim_v,
               get_num_kv_heads=lambda tp, dcp=1: attn.kv_heads // tp,
               get_swa_num_kv_heads=lambda tp: attn.kv_heads // tp)
    is_swa = sg.model_config.is_hybrid_swa_model(hf.architectures, hf)
    full_ids, swa_ids = list(range(hf.num_hidden_layers)), []
    if is_swa:
        swa_ids, full_ids = sg.model_config.get_hybrid_layer_ids(hf.architectures, hf)
    kvc = object.__new__(sg.Configurator)
    fields = dict(
        model_config=model, pp_size=1, attn_dp_size=1, is_draft_worker=False,
        spec_algorithm=sg.spec.SpeculativeAlgorithm.NONE, extra_mamba_cache_bytes_per_req=0,
        kv_cache_dtype=getattr(sg.kvc.torch, spec.kv_dtype), kv_cache_dtype_str="auto",
        page_size=page, is_hybrid_swa=is_swa, use_mla_backend=mla, device="cpu",
        server_args=NS(enable_hisparse=False), kv_shard_spec=None,
        spec_aux_config=NS(eagle_draft_num_layers=None, dflash_draft_num_layers=None),
        # the window gpt-oss's model file reports (the table's only hybrid SWA model)
        sliding_window_size=sg.gpt_oss.get_attention_sliding_window_size(hf) if is_swa else None,
        layer_info=NS(full_attention_layer_ids=full_ids, swa_attention_layer_ids=swa_ids,
                      start_layer=0, end_layer=hf.num_hidden_layers,
                      num_effective_layers=hf.num_hidden_layers,
                      is_hybrid_swa_mtp_draft=False),
        mambaish_config=sg.arch.mambaish_config(model),
        hybrid_gdn_config=sg.arch.hybrid_gdn_config(model),
        hybrid_kda_config=sg.arch.hybrid_kda_config(model))
    for field, value in fields.items():  # setattr: the dataclass's fields are slots
        setattr(kvc, field, value)
    return kvc, hf


def resolve_radix_cache(sg: NS, bags: NS, hf, kvc) -> None:
    """Apply SGLang's "auto" mamba radix-cache resolution to the bags (extra_buffer, or
    no_buffer with overlap scheduling turned off), and its no_buffer check of the page size."""
    view = NS(disable_radix_cache=False, mamba_radix_cache_strategy="auto",
              disable_overlap_schedule=bags.schedule.disable_overlap_schedule,
              page_size=bags.schedule.page_size, linear_attn_backend="triton",
              attention_backend="triton")
    sg.overrides.model_config_of = lambda _view: NS(hf_config=hf)
    declared = sg.overrides._mamba_radix_cache_resolution(view)
    mode = declared.get("mamba_radix_cache_strategy")
    if kvc.mambaish_config is None or mode is None:
        return
    bags.exec.mamba.enable_mamba_extra_buffer = mode == "extra_buffer"
    view.disable_overlap_schedule = bags.schedule.disable_overlap_schedule = declared.get(
        "disable_overlap_schedule", view.disable_overlap_schedule)
    if mode == "no_buffer":
        sg.hooks.validate_mamba_no_buffer(view, hf.architectures[0])


def sglang_figures(sg: NS, spec, budget: int, page: int, overlap: bool, ratios: dict) -> dict:
    """SGLang's pools for the setting, as its _resolve_memory_pool_config computes them from a
    profiled ``rest_memory`` of ``budget`` bytes (in GiB, as SGLang carries it), or its refusal
    as ``{"refused": message}``."""
    bags = new_bags(page, overlap, ratios)
    install_stand_ins(bags)
    try:
        kvc, hf = configurator(sg, spec, CONTEXT, page)
        resolve_radix_cache(sg, bags, hf, kvc)
        rest = budget / GIB
        if kvc.mambaish_config is not None:
            rest = kvc._handle_max_mamba_cache(rest)
        config = kvc.config_from_budget(int(rest * GIB))
        running = kvc.resolve_max_num_reqs(config.max_total_num_tokens)
    except (AssertionError, ValueError, RuntimeError) as exc:
        return {"refused": str(exc).splitlines()[0][:60]}
    slots = bags.schedule.max_mamba_cache_size
    return {"full": config.full_max_total_num_tokens or config.max_total_num_tokens,
            "swa": config.swa_max_total_num_tokens,
            "slots": None if slots is None else slots + 1,  # and MambaPool's padding slot
            "req_slots": slots,
            "S": kvc._calculate_mamba_ratio() if kvc.mambaish_config is not None else None,
            "running": running}


def flatkv_figures(spec, budget: int, page: int, overlap: bool, ratios: dict) -> dict:
    """FlatKV's prediction of the same figures (its ``sglang`` strategy), or its refusal."""
    options = StrategyOptions(sglang_page_size=page, sglang_overlap_schedule=overlap, **ratios)
    r = run_strategy("sglang", spec.profile(), budget_bytes=budget, context_tokens=CONTEXT,
                     options=options)
    if not r.applies:
        return {"refused": r.reason[:60]}
    x = r.extras
    return {"full": x.get("kv_tokens", r.capacity_tokens), "swa": x.get("swa_tokens"),
            "slots": x.get("state_slots"), "req_slots": x.get("request_state_slots"),
            "S": x.get("slots_per_request"), "running": x.get("max_running_requests")}


def edge_budget(sg: NS, spec) -> int:
    """The least budget SGLang starts the model at (page 1, defaults), by bisection on SGLang's
    own code: the setting where a refusal rule and the token arithmetic meet."""
    low, high = 1, 40 * GIB  # SGLang refuses at ``low`` and starts at ``high``
    while high - low > 1:
        mid = (low + high) // 2
        refused = "refused" in sglang_figures(sg, spec, mid, 1, True, {})
        low, high = (mid, high) if refused else (low, mid)
    return high


def main() -> int:
    """Run every setting on both sides, print them, and count the mismatches. SGLang's own
    warnings (its capped max_running_requests, CUDA-only quantization notes) are silenced:
    the table says what they would."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sglang", required=True, help="the unzipped sglang 0.5.23 wheel")
    args = parser.parse_args()
    sg = import_sglang(unzipped_wheel(parser, args.sglang, "sglang"))
    rows, mismatches = [], 0
    for name, budget, page, overlap, ratios in settings():
        spec = load_preset(name)
        budgets = [budget] if budget != EDGE else [edge_budget(sg, spec)] * 2
        if budget == EDGE:
            budgets[1] -= 1
        rows += [(name, spec, b, page, overlap, ratios) for b in budgets]
    for name, spec, budget, page, overlap, ratios in rows:
        engine = sglang_figures(sg, spec, budget, page, overlap, ratios)
        flatkv = flatkv_figures(spec, budget, page, overlap, ratios)
        setting = (f"{name} B={budget:,} P={page} overlap={'on' if overlap else 'off'}"
                   + "".join(f" {k}={v}" for k, v in ratios.items()))
        mismatches += not report("sglang", setting, engine, flatkv)
    print(f"{len(rows)} settings, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
