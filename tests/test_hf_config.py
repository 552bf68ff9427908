"""Hugging Face config.json import, offline: configs are written out here field by field or come
from transformers' own defaults; each is resolved by transformers and compared with arithmetic."""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from types import SimpleNamespace

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # tests never touch the network

from flatkv import app_model, hf_config, hf_hub, hf_resolve  # noqa: E402
from flatkv.engine_options import strategy_fields  # noqa: E402
from flatkv.hf_config import (  # noqa: E402
    SUPPORTED_MODEL_TYPES,
    spec_from_hf_config,
)
from flatkv.hf_hub import fetch_hf_config, spec_from_model_id  # noqa: E402
from flatkv.hf_json import as_written  # noqa: E402
from flatkv.hf_length import ASSUMED_FROM, ModelLength, max_model_len_of  # noqa: E402
from flatkv.hf_notes import assumed_length_note  # noqa: E402
from flatkv.models import (  # noqa: E402
    AttentionLayer,
    GDNLayer,
    LightningLayer,
    Mamba1Layer,
    Mamba2Layer,
    MLALayer,
    ModelSpec,
    ShortConvLayer,
    with_mtp_layer,
)
from flatkv.presets import load_preset  # noqa: E402
from flatkv.strategies import StrategyOptions, run_strategy  # noqa: E402
from flatkv.strategies.vllm import runs_all_as_align  # noqa: E402

BF16, FP32 = 2, 4
FULL, SLIDING, LINEAR = "full_attention", "sliding_attention", "linear_attention"
CHUNKED = "chunked_attention"

NEMOTRON_PATTERN = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
GRANITE_TYPES = ["attention" if i in (5, 15, 25, 35) else "mamba" for i in range(40)]

# MiniMax-M1's config.json (its own config class; the sizes of MiniMax-Text-01 too): 70
# lightning attention layers, 10 full attention layers.
MINIMAX_M1 = {
    "model_type": "minimax_m1", "architectures": ["MiniMaxM1ForCausalLM"],
    "attn_type_list": ([0] * 7 + [1]) * 10, "num_hidden_layers": 80, "hidden_size": 6144,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "rotary_dim": 64,
    "max_position_embeddings": 10_240_000, "num_local_experts": 32, "num_experts_per_tok": 2,
    "postnorm": True, "torch_dtype": "bfloat16"}

# meta-llama/Llama-4-Scout-17B-16E-Instruct's language model (its text_config): 48 layers,
# no_rope_layers [] (transformers: a NoPE global layer every 4th, the others chunked local
# attention over attention_chunk_size tokens), 8 KV heads x 128
LLAMA4_SCOUT = {
    "model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
    "torch_dtype": "bfloat16",
    "text_config": {
        "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120,
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "attention_chunk_size": 8192, "no_rope_layers": [], "interleave_moe_layer_step": 1,
        "max_position_embeddings": 10_485_760, "num_local_experts": 16,
        "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 1.0, "original_max_position_embeddings": 8192},
        "torch_dtype": "bfloat16"},
}

# moonshotai/Kimi-Linear-48B-A3B-Instruct's geometry, written as its config.json writes it: the
# KDA sizes and the 1-indexed layer lists in linear_attn_config, the length as model_max_length
# (the sizes equal transformers' KimiLinearConfig defaults, which name that checkpoint)

def refused_at(spec: ModelSpec, tp: int) -> str:
    """Why ``spec`` at ``tp`` is refused, as its ValueError says it."""
    with pytest.raises(ValueError) as refused:
        spec.with_options(tp=tp)
    return str(refused.value)


KIMI_LINEAR = {
    "model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"],
    "hidden_size": 2304, "num_hidden_layers": 27, "num_attention_heads": 32,
    "num_key_value_heads": 32, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "model_max_length": 1_048_576,
    "torch_dtype": "bfloat16",
    "linear_attn_config": {
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
        "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
        "num_heads": 32, "head_dim": 128, "short_conv_kernel_size": 4},
}

# LiquidAI/LFM2-1.2B's geometry: 16 layers, 6 of them attention, 10 gated short convolutions
LFM2 = {
    "model_type": "lfm2", "architectures": ["Lfm2ForCausalLM"], "hidden_size": 2048,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
    "conv_L_cache": 3, "max_position_embeddings": 128_000, "torch_dtype": "bfloat16",
    "layer_types": ["conv", "conv", "full_attention"] * 3 + ["conv", "full_attention"] * 3
    + ["conv"],
}

# deepseek-ai/DeepSeek-V3.2's config.json (cache-relevant fields): DeepSeek-V3's MLA with the
# lightning indexer (index_topk, index_head_dim)
DEEPSEEK_V32 = {
    "model_type": "deepseek_v32", "architectures": ["DeepseekV32ForCausalLM"],
    "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "index_head_dim": 128,
    "index_n_heads": 64, "index_topk": 2048, "num_nextn_predict_layers": 1,
    "max_position_embeddings": 163_840, "torch_dtype": "bfloat16",
    "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4_096,
                     "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0},
}
# DeepSeek-V3.2's with learnable attention sinks in its sparse attention (config.json's
# learnable_sink, which SGLang 0.5.23 reads off the config: arg_groups/overrides.py 526)
DEEPSEEK_V32_SINKS = {**DEEPSEEK_V32, "learnable_sink": True}

# Configs as their checkpoints write them (cache-relevant fields), one per preset.
# gpt-oss's rope: yarn over 4,096 trained positions, x 32 = its max_position_embeddings
GPT_OSS_ROPE = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                "truncate": False, "original_max_position_embeddings": 4_096}
PRESET_CONFIGS = {
    "Qwen3-Next-80B-A3B": {
        "model_type": "qwen3_next", "num_hidden_layers": 48, "full_attention_interval": 4,
        "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 2,
        "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
        "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
        "torch_dtype": "bfloat16", "architectures": ["Qwen3NextForCausalLM"],
        "max_position_embeddings": 262_144,
    },
    "Qwen3.5-27B": {
        "model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"],
        "text_config": {
            "model_type": "qwen3_5_text", "num_hidden_layers": 64, "full_attention_interval": 4,
            "hidden_size": 5120, "num_attention_heads": 24, "num_key_value_heads": 4,
            "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
            "linear_key_head_dim": 128, "linear_value_head_dim": 128,
            "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32", "dtype": "bfloat16",
            "max_position_embeddings": 262_144,
        },
        "vision_config": {"model_type": "qwen3_5_vision"},
    },
    "Nemotron-H-8B": {
        "model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"],
        "num_hidden_layers": 52,
        "hybrid_override_pattern": NEMOTRON_PATTERN, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
        "conv_kernel": 4, "expand": 2, "chunk_size": 128, "torch_dtype": "bfloat16",
        "max_position_embeddings": 8_192,
    },
    "Jamba-1.5-Mini": {
        "model_type": "jamba", "architectures": ["JambaForCausalLM"], "num_hidden_layers": 32,
        "attn_layer_period": 8,
        "attn_layer_offset": 4, "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "mamba_expand": 2, "mamba_d_state": 16, "mamba_d_conv": 4,
        "torch_dtype": "bfloat16", "max_position_embeddings": 262_144,
    },
    "Falcon-H1-7B": {
        "model_type": "falcon_h1", "architectures": ["FalconH1ForCausalLM"],
        "num_hidden_layers": 44, "hidden_size": 3072,
        "num_attention_heads": 12, "num_key_value_heads": 2, "head_dim": 128,
        "mamba_d_ssm": 3072, "mamba_n_heads": 24, "mamba_d_head": 128, "mamba_d_state": 256,
        "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_chunk_size": 128,
        "torch_dtype": "bfloat16", "max_position_embeddings": 262_144,
    },
    "granite-4.0-h-small": {
        "model_type": "granitemoehybrid", "architectures": ["GraniteMoeHybridForCausalLM"],
        "num_hidden_layers": 40, "layer_types": GRANITE_TYPES,
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
        "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_n_groups": 1,
        "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
        "torch_dtype": "bfloat16",
    },
    "gpt-oss-20b": {
        "model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"],
        "num_hidden_layers": 24, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 64, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
        "max_position_embeddings": 131_072, "rope_scaling": GPT_OSS_ROPE,
    },
    "gpt-oss-120b": {
        "model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"],
        "num_hidden_layers": 36, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 64, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 18,
        "max_position_embeddings": 131_072, "rope_scaling": GPT_OSS_ROPE,
    },
    "Llama-3.1-8B": {
        "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "torch_dtype": "bfloat16",
        "max_position_embeddings": 131_072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8_192},
    },
    "DeepSeek-V3": {
        "model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168,
        "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
        "q_lora_rank": 1536, "torch_dtype": "bfloat16", "max_position_embeddings": 163_840,
        "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4_096,
                         "beta_fast": 32, "beta_slow": 1, "mscale": 1.0,
                         "mscale_all_dim": 1.0},
    },
    "MiniMax-M1": MINIMAX_M1,
    "Llama-4-Scout-17B-16E": LLAMA4_SCOUT,
    "DeepSeek-V3.2": DEEPSEEK_V32,
    "Kimi-Linear-48B-A3B": KIMI_LINEAR,
    "LFM2-1.2B": LFM2,
}


@pytest.mark.parametrize("name", sorted(PRESET_CONFIGS))
def test_preset_config_round_trip(name):
    """preset -> config.json (written above) -> spec gives the preset's layers and bytes."""
    preset = load_preset(name)
    spec = spec_from_hf_config(PRESET_CONFIGS[name], name=name)
    if name == "Nemotron-H-8B":
        # transformers' nemotron_h defaults mamba_ssm_cache_dtype to float32; SPEC uses bf16
        assert spec.ssm_dtype == "float32"
        assert spec.state_const_bytes()["ssm"] == 128 * 64 * 128 * FP32
        # the source says so, since it doubles the state against the preset
        assert spec.source.endswith(
            "; ssm state float32 from transformers' default for mamba_ssm_cache_dtype")
        spec = spec.with_options(ssm_dtype="bf16")
    assert spec.layers == preset.layers
    assert (spec.kv_dtype, spec.conv_dtype, spec.ssm_dtype) == (
        preset.kv_dtype, preset.conv_dtype, preset.ssm_dtype)
    assert spec.profile() == preset.profile()
    assert spec.model_layers == preset.model_layers
    assert spec.attention_heads == preset.attention_heads
    # the context vLLM serves it at (DeepSeek-V3 and gpt-oss through yarn, Llama's llama3 rope
    # not applied again); granite-4.0-h-small's config length was not seen, so none is claimed
    if name == "granite-4.0-h-small":
        assert preset.max_model_len is None
    else:
        assert spec.max_model_len == preset.max_model_len
        assert f"max_model_len {preset.max_model_len:,}" in preset.source


def test_a_config_is_named_by_the_last_part_of_its_name_or_path():
    # a Hub id or a local path names the model by its last part, as the presets name models
    # (a name given wins)
    config = PRESET_CONFIGS["Llama-3.1-8B"]
    named = {given: spec_from_hf_config({**config, "_name_or_path": given}).name
             for given in ("meta-llama/Llama-3.1-8B-Instruct", "/data/ckpt/llama-3.1-8b/",
                           "C:\\models\\Llama 3.1 8B", "llama-3.1-8b", "/")}
    assert named == {"meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B-Instruct",
                     "/data/ckpt/llama-3.1-8b/": "llama-3.1-8b",
                     "C:\\models\\Llama 3.1 8B": "Llama 3.1 8B",
                     "llama-3.1-8b": "llama-3.1-8b", "/": "llama"}
    # without _name_or_path, by its first architecture (Jamba-1.5-Mini's config names
    # JambaForCausalLM, not its model_type jamba), by its model_type only where it names none
    # (this Llama config names no class)
    assert "architectures" not in config and spec_from_hf_config(config).name == "llama"
    jamba = PRESET_CONFIGS["Jamba-1.5-Mini"]
    assert (jamba["architectures"], jamba["model_type"]) == (["JambaForCausalLM"], "jamba")
    assert "_name_or_path" not in jamba
    assert spec_from_hf_config(jamba).name == "JambaForCausalLM"
    assert spec_from_hf_config({**jamba, "_name_or_path": "/"}).name == "JambaForCausalLM"
    assert spec_from_hf_config({**jamba, "_name_or_path": "ai21labs/AI21-Jamba-1.5-Mini"}
                               ).name == "AI21-Jamba-1.5-Mini"
    assert spec_from_hf_config({**config, "_name_or_path": "meta-llama/Llama-3.1-8B"},
                               name="mine").name == "mine"


def test_the_notes_name_the_sizes_transformers_filled_in():
    # {"model_type": "llama"} alone is LlamaConfig's defaults: 32 layers of 32 KV heads of 128
    bare = spec_from_hf_config({"model_type": "llama"})
    assert bare.profile().kv_bytes_per_slot == 32 * 2 * 128 * 2  # 16 KiB per token per layer
    # a caveat on every figure: in the notes, which every page shows beside its figures
    assert bare.notes == (
        "Not in the config.json, so transformers' defaults: num_hidden_layers 32, "
        "num_attention_heads 32, num_key_value_heads 32, head_dim 128, max_position_embeddings "
        "2,048, architectures [\"LlamaForCausalLM\"] (its class for llama, which the engines "
        "pick code paths by); check them against the model's config.")
    assert bare.architectures == ("LlamaForCausalLM",)
    assert "transformers' defaults" not in bare.source
    # every size given (head_dim as hidden_size / heads, as the models derive it): nothing said
    full = spec_from_hf_config({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                                "num_hidden_layers": 32,
                                "num_attention_heads": 32, "num_key_value_heads": 8,
                                "hidden_size": 4096, "max_position_embeddings": 131_072})
    assert full.notes == ""
    # Gemma 2's head_dim is its own default (256), not hidden / heads (3,584 / 16 = 224)
    gemma = spec_from_hf_config({"model_type": "gemma2", "num_hidden_layers": 42,
                                 "num_attention_heads": 16, "num_key_value_heads": 8,
                                 "hidden_size": 3584})
    assert "transformers' defaults: sliding_window 4,096, head_dim 256," in gemma.notes
    # a head_dim of null is derived as hidden / heads too (Mistral-7B-Instruct-v0.3's config),
    # and zamba2's attention_head_dim as 2 x hidden / heads (its configs leave it out)
    mistral = spec_from_hf_config({"model_type": "mistral", "architectures": [
                                   "MistralForCausalLM"], "num_hidden_layers": 32,
                                   "num_attention_heads": 32, "num_key_value_heads": 8,
                                   "hidden_size": 4096, "head_dim": None, "sliding_window": None,
                                   "max_position_embeddings": 32_768})
    assert mistral.notes == ""
    zamba = spec_from_hf_config({"model_type": "zamba2", "num_hidden_layers": 54,
                                 "num_attention_heads": 32, "hidden_size": 2560})
    assert "attention_head_dim" not in zamba.notes and "n_mamba_heads 8" in zamba.notes
    # "auto" is a value mamba_d_head takes (transformers works it out), not a bad field
    falcon = spec_from_hf_config({"model_type": "falcon_h1", "mamba_d_head": "auto"})
    assert falcon.profile().has_state and "mamba_d_head" in falcon.notes


def test_a_layer_pattern_from_transformers_defaults_is_named():
    # granite-4.0-h without layer_types: transformers' class makes every layer Mamba2
    granite = spec_from_hf_config({"model_type": "granitemoehybrid", "num_hidden_layers": 40})
    assert granite.profile().layer_types == ("linear_attention",) * 40
    assert ("No layer pattern in the config.json (layer_types, layers_block_type, "
            "hybrid_override_pattern, full_attention_interval or the like), so transformers' "
            "granitemoehybrid default: 40 linear_attention cache layers; check it against the "
            "model's config.") in granite.notes
    # gpt-oss's class alternates sliding and full layers: 12 + 12 of 24
    oss = spec_from_hf_config({"model_type": "gpt_oss", "num_hidden_layers": 24})
    assert "default: 12 sliding_attention + 12 full_attention cache layers" in oss.notes
    # given (any pattern field, nested too), or one kind of attention by the type's nature:
    # nothing said
    for cfg in ({"model_type": "gpt_oss", "num_hidden_layers": 2,
                 "layer_types": ["sliding_attention", "full_attention"]},
                {"model_type": "qwen3_next", "num_hidden_layers": 8, "full_attention_interval": 4},
                {"model_type": "qwen3_5", "text_config": {"num_hidden_layers": 4,
                                                          "full_attention_interval": 2}},
                {"model_type": "qwen3", "num_hidden_layers": 4},
                {"model_type": "mamba2", "num_hidden_layers": 4},
                # a pattern the architecture fixes, or given in a field of the type's own
                {"model_type": "falcon_h1", "num_hidden_layers": 4},
                {"model_type": "gemma2", "num_hidden_layers": 4},
                {"model_type": "afmoe", "num_hidden_layers": 8, "global_attn_every_n_layers": 4}):
        assert "No layer pattern" not in spec_from_hf_config(cfg).notes, cfg
    # a pattern field of null is none given; qwen2 / qwen3's window fields say nothing of
    # another type's pattern
    for cfg in ({"model_type": "granitemoehybrid", "num_hidden_layers": 4, "layer_types": None},
                {"model_type": "qwen3_next", "num_hidden_layers": 8, "max_window_layers": 8}):
        assert "No layer pattern" in spec_from_hf_config(cfg).notes, cfg


def test_max_model_len_of_says_its_length_was_assumed_rather_than_spelling_it():
    # the provenance is a flag beside the words, not read back off them
    ns = SimpleNamespace
    assert max_model_len_of(ns(max_position_embeddings=4_096), "llama") == ModelLength(
        4_096, "max_position_embeddings", False)
    # no length field: vLLM's 2,048, scaled as a given one (linear 4: 8,192)
    assert max_model_len_of(ns(), "mamba") == ModelLength(2_048, ASSUMED_FROM, True)
    assert max_model_len_of(ns(rope_scaling={"type": "linear", "factor": 4}), "mamba") == (
        ModelLength(8_192, f"{ASSUMED_FROM} 2,048 x linear factor 4, as vLLM derives it", True))
    # LongRoPE with no length field: served at original_max_position_embeddings, a length the
    # config gives, so nothing is assumed
    longrope = max_model_len_of(ns(rope_scaling={"type": "longrope", "factor": 32},
                                   original_max_position_embeddings=4_096), "phi3")
    assert (longrope.tokens, longrope.assumed) == (4_096, False)
    assert longrope.source == ("original_max_position_embeddings, vLLM's default for a "
                               f"LongRoPE model ({ASSUMED_FROM} 2,048 needs --max-model-len)")


def test_max_model_len_is_derived_from_the_config_as_vllm_derives_it():
    # vLLM's --max-model-len defaults to max_position_embeddings; a multimodal config keeps it
    # in text_config
    spec = spec_from_hf_config({"model_type": "qwen3_next", "max_position_embeddings": 262_144})
    assert spec.max_model_len == 262_144
    assert ModelSpec.from_dict(spec.to_dict()).max_model_len == 262_144
    assert "max_position_embeddings" not in spec.notes and "max_model_len" not in spec.source
    nested = spec_from_hf_config({"model_type": "qwen3_5",
                                  "text_config": {"max_position_embeddings": 262_144}})
    assert nested.max_model_len == 262_144
    # a thin config's is transformers' default (LlamaConfig: 2,048), as vLLM reads it too, and
    # the notes name it with the other defaults
    thin = spec_from_hf_config({"model_type": "llama"})
    assert thin.max_model_len == 2_048 and "max_position_embeddings 2,048," in thin.notes
    # ... given by the class, so vLLM finds a key and assumes nothing (no warning)
    assert not thin.max_model_len_assumed and "does not contain any" not in thin.notes
    # a config whose class gives no length either (Mamba's): vLLM assumes 2,048, then scales it
    # as a given one (linear factor 4: 8,192); SGLang takes 2,048 unscaled, which the note says
    mamba = {"model_type": "mamba", "num_hidden_layers": 4, "hidden_size": 256}
    assumed = spec_from_hf_config(mamba)
    assert (assumed.max_model_len, assumed.max_model_len_assumed) == (2_048, True)
    scaled = spec_from_hf_config({**mamba, "rope_scaling": {"type": "linear", "factor": 4}})
    assert (scaled.max_model_len, scaled.max_model_len_assumed) == (8_192, True)
    assert scaled.source.endswith("; max_model_len 8,192 from vLLM's assumed length (the "
                                  "config.json gives none) 2,048 x linear factor 4, as vLLM "
                                  "derives it; ssm state bfloat16 from the model dtype")
    assert ("Assuming the model's maximum length is 2048.\" and scales it by the rope factor "
            "to 8,192; SGLang 0.5.23 assumes 2,048 too, silently and unscaled (type 2,048 for "
            "its figures). The figures count a request at 8,192 tokens" in scaled.notes)
    # a length given is the model's again
    assert not spec_from_hf_config({**mamba, "max_position_embeddings": 4_096}
                                   ).max_model_len_assumed
    # SGLang's figures for a state-only model hold no token history: the same at its 2,048 as
    # at vLLM's 8,192, so counting both engines at one length keeps SGLang's exact; only its
    # scheduler line tells the length (its token pool of no layers is context_len tokens)
    at = [run_strategy("sglang", scaled.profile(), budget_bytes=40 * 2**30, context_tokens=c)
          for c in (2_048, 8_192)]
    # Mamba's defaults: d_inner 2 x 256 = 512, conv 512 x 3 x 2 B = 3,072, ssm 512 x 16
    # elements, float32 in SGLang: 32,768 B; a slot of 4 layers x 35,840 = 143,360 B, and
    # 40 GiB x 9 / 19 = 20,344,581,928 B of state pool holds 141,912 of them; its token pool
    # of no layers holds the context, 2,048 tokens over 2,048 a request: 1.00
    assert (at[0].capacity_tokens, at[0].num_blocks, at[0].extras["state_slot_bytes"],
            at[0].max_concurrency) == (None, 141_912, 143_360, 1.0)
    assert [(r.num_blocks, r.max_concurrency, r.extras["log_lines"][:-1]) for r in at[1:]] == [
        (at[0].num_blocks, at[0].max_concurrency, at[0].extras["log_lines"][:-1])]
    # max_running_requests: min(max(min(int(T / L x 512), 4,096), 2,048), T // 2) with T = L:
    # min(max(512, 2,048), L // 2) = 1,024 at 2,048 and 2,048 at 8,192
    assert [r.extras["log_lines"][-1] for r in at] == [
        f"max_total_num_tokens={c}, chunked_prefill_size=8192, max_prefill_tokens=..., "
        f"max_running_requests={running}, context_len={c}"
        for c, running in ((2_048, 1_024), (8_192, 2_048))]
    # vLLM takes the smallest length field: one other than max_position_embeddings is named
    seq = spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 8_192,
                               "max_seq_len": 4_096})
    assert seq.max_model_len == 4_096
    assert seq.source.endswith("; max_model_len 4,096 from max_seq_len")
    # yarn's length is scaled already (vLLM 0.30 and later): Qwen3-8B with its model card's
    # long-context recipe is served at its 40,960, where earlier releases took 32,768 x 4
    yarn = spec_from_hf_config({"model_type": "qwen3", "max_position_embeddings": 40_960,
                                "rope_scaling": {"type": "yarn", "factor": 4.0,
                                                 "original_max_position_embeddings": 32_768}})
    assert yarn.max_model_len == 40_960
    assert yarn.source.endswith(
        "; max_model_len 40,960 from max_position_embeddings, as vLLM 0.30 and later derive it "
        "(releases before scaled it by yarn's factor: original_max_position_embeddings 32,768 x "
        "4 = 131,072)")
    # where both agree (gpt-oss: 4,096 x 32 = 131,072) the field alone is named, as no factor
    # applies; deepseek_yarn scaled the length itself before 0.30
    agreed = spec_from_hf_config({"model_type": "qwen2", "max_position_embeddings": 131_072,
                                  "rope_scaling": {"type": "yarn", "factor": 32,
                                                   "original_max_position_embeddings": 4_096}})
    assert agreed.max_model_len == 131_072 and "max_model_len" not in agreed.source
    deepseek = spec_from_hf_config({"model_type": "qwen2", "max_position_embeddings": 4_096,
                                    "rope_scaling": {"type": "deepseek_yarn", "factor": 4}})
    assert deepseek.max_model_len == 4_096
    assert deepseek.source.endswith("scaled it by deepseek_yarn's factor: "
                                    "max_position_embeddings 4,096 x 4 = 16,384)")
    llama_scaling = spec_from_hf_config({"model_type": "qwen2", "max_position_embeddings": 4_096,
                                         "rope_scaling": {"type": "deepseek_llama_scaling",
                                                          "factor": 2}})
    assert llama_scaling.max_model_len == 4_096
    assert llama_scaling.source.endswith("max_position_embeddings 4,096 x 2 = 8,192)")
    # a yarn factor past any length is no length today: the older figure is left out, no error
    huge = spec_from_hf_config({"model_type": "qwen2", "max_position_embeddings": 32_768,
                                "rope_scaling": {"type": "yarn", "factor": 2**40,
                                                 "original_max_position_embeddings": 8_192}})
    assert huge.max_model_len == 32_768 and "max_model_len" not in huge.source
    # LongRoPE (Phi-3 128k, Phi-4-mini): vLLM 0.12 and later serve the original length
    phi = spec_from_hf_config({"model_type": "phi3", "max_position_embeddings": 131_072,
                               "original_max_position_embeddings": 4_096,
                               "rope_scaling": {"type": "longrope", "long_factor": [1.0] * 48,
                                                "short_factor": [1.0] * 48}})
    assert phi.max_model_len == 4_096
    assert phi.source.endswith(
        "; max_model_len 4,096 from original_max_position_embeddings, vLLM's default for a "
        "LongRoPE model (max_position_embeddings 131,072 needs --max-model-len)")
    # linear / dynamic scale max_position_embeddings; llama3 (Llama 3.1) and Gemma 3 (its
    # length is scaled already) keep theirs
    linear = spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 4_096,
                                  "rope_scaling": {"type": "linear", "factor": 2.0}})
    assert linear.max_model_len == 8_192
    llama31 = spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 131_072,
                                   "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                    "original_max_position_embeddings": 8_192,
                                                    "low_freq_factor": 1.0,
                                                    "high_freq_factor": 4.0}})
    assert llama31.max_model_len == 131_072
    gemma3 = spec_from_hf_config({"model_type": "gemma3_text", "max_position_embeddings": 131_072,
                                  "rope_scaling": {"rope_type": "linear", "factor": 8.0}})
    assert gemma3.max_model_len == 131_072
    # the smallest length field wins, but Cohere's model_max_length is the length where given
    short = spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 131_072,
                                 "seq_length": 8_192})
    assert short.max_model_len == 8_192
    cohere = spec_from_hf_config({"model_type": "cohere2", "max_position_embeddings": 8_192,
                                  "model_max_length": 131_072})
    assert cohere.max_model_len == 131_072
    # a factor that is no scaling is refused with the field, not a traceback: Infinity or NaN,
    # bare or as transformers 5 tags them, by its path whatever the rope type
    for factor in (float("inf"), {"__float__": "NaN"}, {"__float__": "-Infinity"}):
        for rope_type in ("linear", "llama3"):
            with pytest.raises(ValueError, match=r"^config.json rope_scaling.factor = "
                               "(Infinity|NaN|-Infinity) must be a finite number: fix or "
                               "remove the field$"):
                spec_from_hf_config(json.dumps({
                    "model_type": "llama", "max_position_embeddings": 4_096,
                    "rope_scaling": {"rope_type": rope_type, "factor": factor}}))
    for factor in (-2.0, 0):
        with pytest.raises(ValueError, match="config.json rope scaling's factor is .*: give "
                           "the linear scaling factor as a positive number"):
            spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 4_096,
                                 "rope_scaling": {"rope_type": "linear", "factor": factor}})
    # one so large the length overflows (1e308 x 8,192 is inf; 10**305 is no float) or passes
    # 2**40 tokens: refused, the factor shown short
    for factor, shown in ((1e308, "1e+308"), (2.0**40 / 8_192 + 1, "134217729.0"),
                          (10**305, "a 306-digit number"), (2**27 + 1, "134217729")):
        with pytest.raises(ValueError, match="config.json rope scaling's factor is "
                           fr"{re.escape(shown)}: max_position_embeddings 8,192 times "
                           r"it is past 1,099,511,627,776 tokens; give the dynamic scaling "
                           "factor"):
            spec_from_hf_config({"model_type": "qwen2", "max_position_embeddings": 8_192,
                                 "rope_scaling": {"rope_type": "dynamic", "factor": factor}})
    # 2**27 x 8,192 is 2**40 itself: the largest length taken
    edge = spec_from_hf_config({"model_type": "qwen2", "max_position_embeddings": 8_192,
                                "rope_scaling": {"rope_type": "dynamic", "factor": 2**27}})
    assert edge.max_model_len == 2**40
    # a null factor scales nothing (vLLM takes 1.0)
    null = spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 4_096,
                                "rope_scaling": {"rope_type": "dynamic", "factor": None}})
    assert null.max_model_len == 4_096
    with pytest.raises(ValueError, match="config.json max_position_embeddings is 0: give "
                       "the model's context length as a positive whole number of tokens"):
        spec_from_hf_config({"model_type": "llama", "max_position_embeddings": 0})


def test_a_rope_type_or_rope_number_no_engine_reads_is_refused_by_its_field():
    # "Llama3" or "yarm" would still scale the length by the factor (vLLM's length rule reads
    # every type but four) though vLLM builds no such rope: refused, as a rope field that is no
    # number, which transformers fails on without naming it
    llama = PRESET_CONFIGS["Llama-3.1-8B"]
    rope = llama["rope_scaling"]
    for rope_type, use in (("Llama3", "use 'llama3': rope types are lowercase"),
                           (5, "use a name such as default, linear, dynamic, ntk, yarn, ")):
        with pytest.raises(ValueError, match=f"^config.json rope_scaling.rope_type = "
                                             f"{rope_type!r} is not a rope type vLLM builds: "
                                             f"{use}"):
            spec_from_hf_config({**llama, "rope_scaling": {**rope, "rope_type": rope_type}})
    # each as config.json writes it: true, not Python's True
    for field, written in (("original_max_position_embeddings", "'8192'"),
                           ("low_freq_factor", "[1]"), ("factor", "true")):
        value = json.loads(written.replace("'", '"'))
        with pytest.raises(ValueError, match=rf"^config.json rope_scaling.{field} = "
                                             rf"{re.escape(written)} must be a number: fix"):
            spec_from_hf_config({**llama, "rope_scaling": {**rope, field: value}})
    with pytest.raises(ValueError, match=r"^config.json rope_scaling.high_freq_factor is null: "
                                         "llama3 rope scaling needs it as a number: give the "
                                         "model's value$"):
        spec_from_hf_config({**llama, "rope_scaling": {**rope, "high_freq_factor": None}})
    # nested configs and transformers 5's rope per layer type name their path
    with pytest.raises(ValueError, match=r"^config.json text_config.rope_parameters."
                                         r"full_attention.rope_type = 'YARN' is not"):
        spec_from_hf_config({"model_type": "qwen3_5", "text_config": {
            **PRESET_CONFIGS["Qwen3.5-27B"]["text_config"],
            "rope_parameters": {"full_attention": {"rope_type": "YARN", "factor": 4.0}}}})
    # the rope types vLLM builds pass, and so do nulls it reads as not given; a name no list
    # here knows passes too (new models bring new types), its factor applied as vLLM's length
    # rule applies it, and named where the length comes from
    assert spec_from_hf_config(llama).max_model_len == 131_072
    novel = spec_from_hf_config({**llama, "rope_scaling": {"rope_type": "yarm", "factor": 8.0}})
    assert novel.max_model_len == 1_048_576
    assert ("max_model_len 1,048,576 from max_position_embeddings 131,072 x yarm factor 8"
            in novel.source)
    assert spec_from_hf_config({**llama, "rope_scaling": {"type": "mrope", "factor": None,
                                                          "mrope_section": [16, 24, 24]}}
                               ).max_model_len == 131_072


@pytest.mark.parametrize(("name", "change", "message"), [
    # a null size overrides the class default: transformers multiplies None, unnamed (its
    # "unsupported operand type(s) for *: 'int' and 'NoneType'" is Python's, left out)
    ("Falcon-H1-7B", {"mamba_d_head": None}, r"^config.json mamba_d_head is null: transformers' "
     r"falcon_h1 config computes with it; give a whole number or remove the field$"),
    # its mamba_d_ssm may be null (expand x hidden_size): not blamed beside mamba_d_head
    ("Falcon-H1-7B", {"mamba_d_head": None, "mamba_d_ssm": None}, r"config.json mamba_d_head "
     r"is null: transformers' falcon_h1 config computes with it; give"),
    # the config's values as it writes them (8192 heads, Jamba's hidden_size 4096)
    ("Jamba-1.5-Mini", {"num_attention_heads": 8192}, r"jamba config.json num_attention_heads "
     r"= 8192 is more than hidden_size = 4096, which it divides into head_dim: fix the "
     r"config, or give head_dim"),
    ("Llama-3.1-8B", {"torch_dtype": 16}, r"config.json torch_dtype = 16 must be a dtype name"),
    ("Llama-3.1-8B", {"rope_scaling": "abc"}, r"config.json rope_scaling = 'abc' must be an "
     r"object such as \{\"rope_type\": \"yarn\""),
    ("Llama-3.1-8B", {"max_position_embeddings": 10**40}, r"config.json max_position_embeddings"
     r" is a 41-digit number: give the model's context length .* \(at most 1,099,511,627,776\)"),
    ("Nemotron-H-8B", {"mamba_num_heads": 2**62}, r"config.json mamba_num_heads = "
     r"4611686018427387904 is too large to be real: give 1,048,576 or less, or remove the field"),
    ("gpt-oss-20b", {"sliding_window": 2**31 + 1}, r"config.json sliding_window = 2147483649 "
     r"is too large to be real: give 2,147,483,648 or less, or remove the field"),
])
def test_a_config_value_transformers_fails_on_is_named_as_the_config_writes_it(
        name, change, message):
    # not an internal name (mamba2.n_heads, attention.head_dim_k) or transformers' own field
    with pytest.raises(ValueError, match=f"^{message}"):
        spec_from_hf_config({**PRESET_CONFIGS[name], **change})


def test_a_chunk_size_from_transformers_defaults_is_named():
    # bamba's config class defaults mamba_chunk_size to 256: vLLM reads it so, and the source
    # notes name it among the values the config.json did not give
    spec = spec_from_hf_config({"model_type": "bamba"})
    assert spec.mamba_chunk_size == 256
    assert ", mamba_chunk_size 256, " in spec.notes.split("transformers' defaults: ")[1]
    given = spec_from_hf_config({"model_type": "bamba", "mamba_chunk_size": 128})
    assert given.mamba_chunk_size == 128 and "mamba_chunk_size" not in given.notes


def test_qwen3_next_defaults_alone_are_the_80b_a3b():
    """SPEC §2: Qwen3-Next-80B-A3B's cache geometry is transformers' qwen3_next defaults."""
    spec = spec_from_hf_config({"model_type": "qwen3_next"})
    assert spec.layers == load_preset("Qwen3-Next-80B-A3B").layers
    assert spec.mamba_chunk_size is None  # no chunk in a GDN config: vLLM takes 2,048
    tp2 = spec.with_options(tp=2).profile()
    assert (tp2.count(FULL), tp2.count(LINEAR)) == (12, 36)
    assert tp2.kv_bytes_per_slot == 1024
    assert tp2.state_const_bytes == {"conv": 24576, "ssm": 524288}


# Every type read from transformers' defaults alone (transformers 5's config classes): its cache
# layers by kind, kv_bytes_per_slot (K + V: 2 x num_key_value_heads x head_dim, in bf16; MLA's
# kv_lora_rank + qk_rope_head_dim) and a state layer's bytes, by hand from the class defaults.
# head_dim is hidden_size // num_attention_heads where the class has none (vLLM's getattr
# default; GLM-4.5's 4,096 // 96 = 42). A type without attention layers has 0 B a slot.
GDN_DEFAULT_STATE = {  # qwen3_next's and Qwen3.5's: 16 key heads, 32 value heads of 128, kernel 4
    "conv": (2 * 16 * 128 + 32 * 128) * (4 - 1) * BF16, "ssm": 32 * 128 * 128 * BF16}
BAMBA_DEFAULT_STATE = {  # hidden 4,096 x expand 2 = 8,192; 128 heads x 64, 1 group, d_state 256
    "conv": (8192 + 2 * 1 * 256) * (4 - 1) * BF16, "ssm": 128 * 64 * 256 * BF16}
MAMBA_DEFAULT_STATE = {  # hidden 768 x expand 2 = intermediate 1,536, state_size 16, kernel 4
    "conv": 1536 * (4 - 1) * BF16, "ssm": 1536 * 16 * BF16}
INDEXER = 128 + 4  # DeepSeek-V3.2's indexer keys: 128 fp8 bytes and a float32 scale a token
DEFAULTS_READ = {
    "afmoe": ({SLIDING: 24, FULL: 8}, 2 * 16 * 128 * BF16, {}),
    "apertus": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),  # head_dim 4,096 / 32
    "arcee": ({FULL: 32}, 2 * 32 * 80 * BF16, {}),
    # attn_layer_indices None: every layer Mamba2
    "bamba": ({LINEAR: 32}, 0, BAMBA_DEFAULT_STATE),
    "cohere": ({FULL: 40}, 2 * 64 * 128 * BF16, {}),  # head_dim 8,192 / 64
    "cohere2": ({SLIDING: 30, FULL: 10}, 2 * 64 * 128 * BF16, {}),
    "cohere2_moe": ({SLIDING: 30, FULL: 10}, 2 * 64 * 128 * BF16, {}),
    "deepseek_v2": ({FULL: 32}, (512 + 64) * BF16, {}),
    "deepseek_v3": ({FULL: 61}, (512 + 64) * BF16, {}),
    "deepseek_v32": ({FULL: 61}, (512 + 64) * BF16 + INDEXER, {}),
    "ernie4_5": ({FULL: 18}, 2 * 2 * 128 * BF16, {}),
    "ernie4_5_moe": ({FULL: 28}, 2 * 4 * 128 * BF16, {}),  # head_dim 2,560 / 20
    "exaone4": ({SLIDING: 24, FULL: 8}, 2 * 32 * 128 * BF16, {}),  # head_dim 4,096 / 32
    "exaone_moe": ({SLIDING: 24, FULL: 8}, 2 * 32 * 128 * BF16, {}),
    # 32 hybrid layers, attention and Mamba2 side by side: mamba_d_ssm 1,024 = 128 heads x 8
    "falcon_h1": ({FULL: 32, LINEAR: 32}, 2 * 8 * 128 * BF16,
                  {"conv": (1024 + 2 * 1 * 256) * (4 - 1) * BF16, "ssm": 128 * 8 * 256 * BF16}),
    "falcon_mamba": ({LINEAR: 32}, 0, MAMBA_DEFAULT_STATE),
    "flex_olmo": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),  # head_dim 4,096 / 32
    "gemma": ({FULL: 28}, 2 * 16 * 256 * BF16, {}),
    "gemma2": ({SLIDING: 13, FULL: 13}, 2 * 4 * 256 * BF16, {}),
    "gemma3": ({SLIDING: 22, FULL: 4}, 2 * 4 * 256 * BF16, {}),
    "gemma3_text": ({SLIDING: 22, FULL: 4}, 2 * 4 * 256 * BF16, {}),
    # 35 layers, the last num_kv_shared_layers 15 (12 sliding, 3 full) without a cache
    "gemma3n": ({SLIDING: 16, FULL: 4}, 2 * 2 * 256 * BF16, {}),
    "gemma3n_text": ({SLIDING: 16, FULL: 4}, 2 * 2 * 256 * BF16, {}),
    # full layers of global_head_dim 512, sliding ones of head_dim 256 (4 KV heads each)
    "gemma4": ({SLIDING: 25, FULL: 5}, 2 * 4 * 512 * BF16, {}),
    "gemma4_text": ({SLIDING: 25, FULL: 5}, 2 * 4 * 512 * BF16, {}),
    "gemma4_unified": ({SLIDING: 25, FULL: 5}, 2 * 4 * 512 * BF16, {}),
    "gemma4_unified_text": ({SLIDING: 25, FULL: 5}, 2 * 4 * 512 * BF16, {}),
    "glm4": ({FULL: 40}, 2 * 2 * 128 * BF16, {}),
    "glm4_moe": ({FULL: 46}, 2 * 8 * 42 * BF16, {}),  # head_dim 4,096 // 96
    "glm4_moe_lite": ({FULL: 47}, (512 + 64) * BF16, {}),
    "glm_moe_dsa": ({FULL: 78}, (512 + 64) * BF16 + INDEXER, {}),
    "gpt_oss": ({SLIDING: 18, FULL: 18}, 2 * 8 * 64 * BF16, {}),
    "granite": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),  # head_dim 4,096 / 32
    "granite_swa": ({FULL: 6, SLIDING: 18}, 2 * 4 * 128 * BF16, {}),  # head_dim 2,560 / 20
    "granitemoe": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "granitemoe_swa": ({FULL: 8, SLIDING: 24}, 2 * 32 * 128 * BF16, {}),
    "granitemoehybrid": ({LINEAR: 32}, 0, BAMBA_DEFAULT_STATE),  # layer_types all mamba
    "granitemoeshared": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "hunyuan_v1_dense": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "hunyuan_v1_moe": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "hy_v3": ({FULL: 80}, 2 * 8 * 128 * BF16, {}),
    # attention at i % 8 == 4; hidden 4,096 x expand 2 = 8,192, d_state 16, kernel 4
    "jamba": ({LINEAR: 28, FULL: 4}, 2 * 8 * 128 * BF16,
              {"conv": 8192 * (4 - 1) * BF16, "ssm": 8192 * 16 * BF16}),
    "kimi_k2": ({FULL: 61}, (512 + 64) * BF16, {}),  # read as deepseek_v3 (no class of its own)
    "kimi_k25": ({FULL: 61}, (512 + 64) * BF16, {}),
    "lfm2": ({FULL: 32}, 2 * 8 * 80 * BF16, {}),  # layer_types all attention; 2,560 / 32
    # 13 conv layers, conv_L_cache 7 over hidden_size 2,048 (no ssm state)
    "lfm3": ({LINEAR: 13, FULL: 6, SLIDING: 5}, 2 * 4 * 128 * BF16,
             {"conv": 2048 * (7 - 1) * BF16}),
    "llama": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "llama4": ({CHUNKED: 36, FULL: 12}, 2 * 8 * 128 * BF16, {}),
    "llama4_text": ({CHUNKED: 36, FULL: 12}, 2 * 8 * 128 * BF16, {}),
    "mamba": ({LINEAR: 32}, 0, MAMBA_DEFAULT_STATE),
    # 128 heads x 64 = 8,192, 8 groups of d_state 128, kernel 4
    "mamba2": ({LINEAR: 64}, 0, {"conv": (8192 + 2 * 8 * 128) * (4 - 1) * BF16,
                                 "ssm": 128 * 64 * 128 * BF16}),
    "minimax_m2": ({FULL: 62}, 2 * 8 * 128 * BF16, {}),
    "mistral": ({SLIDING: 32}, 2 * 8 * 128 * BF16, {}),  # sliding_window 4,096: every layer
    "mistral3": ({FULL: 40}, 2 * 8 * 128 * BF16, {}),
    "mixtral": ({FULL: 32}, 2 * 8 * 128 * BF16, {}),  # head_dim 4,096 / 32
    "nemotron": ({FULL: 32}, 2 * 48 * 128 * BF16, {}),
    # hybrid_override_pattern of 4: one Mamba2 layer, one MoE, one attention, one MLP; the
    # ssm state in mamba_ssm_cache_dtype float32
    "nemotron_h": ({LINEAR: 1, FULL: 1}, 2 * 8 * 128 * BF16,
                   {"conv": (128 * 64 + 2 * 8 * 128) * (4 - 1) * BF16,
                    "ssm": 128 * 64 * 128 * FP32}),
    "olmo2": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "olmo3": ({SLIDING: 24, FULL: 8}, 2 * 32 * 128 * BF16, {}),
    # GDN of 30 key heads of 96 and 30 value heads of 192; head_dim 3,840 / 30
    "olmo_hybrid": ({LINEAR: 24, FULL: 8}, 2 * 30 * 128 * BF16,
                    {"conv": (2 * 30 * 96 + 30 * 192) * (4 - 1) * BF16,
                     "ssm": 30 * 96 * 192 * BF16}),
    "olmoe": ({FULL: 16}, 2 * 16 * 128 * BF16, {}),  # head_dim 2,048 / 16
    "phi": ({FULL: 24}, 2 * 32 * 64 * BF16, {}),  # head_dim 2,048 / 32
    "phi3": ({FULL: 32}, 2 * 32 * 96 * BF16, {}),  # head_dim 3,072 / 32
    "phimoe": ({FULL: 32}, 2 * 8 * 128 * BF16, {}),
    "qwen2": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "qwen2_5_vl": ({FULL: 80}, 2 * 8 * 128 * BF16, {}),  # head_dim 8,192 / 64
    "qwen2_vl": ({FULL: 80}, 2 * 8 * 128 * BF16, {}),
    "qwen3": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "qwen3_5": ({LINEAR: 24, FULL: 8}, 2 * 4 * 256 * BF16, GDN_DEFAULT_STATE),
    "qwen3_5_moe": ({LINEAR: 30, FULL: 10}, 2 * 2 * 256 * BF16, GDN_DEFAULT_STATE),
    "qwen3_5_moe_text": ({LINEAR: 30, FULL: 10}, 2 * 2 * 256 * BF16, GDN_DEFAULT_STATE),
    "qwen3_5_text": ({LINEAR: 24, FULL: 8}, 2 * 4 * 256 * BF16, GDN_DEFAULT_STATE),
    "qwen3_moe": ({FULL: 24}, 2 * 4 * 64 * BF16, {}),  # head_dim 2,048 / 32
    "qwen3_next": ({LINEAR: 36, FULL: 12}, 2 * 2 * 256 * BF16, GDN_DEFAULT_STATE),
    "qwen3_vl": ({FULL: 32}, 2 * 32 * 128 * BF16, {}),
    "qwen3_vl_moe": ({FULL: 24}, 2 * 16 * 128 * BF16, {}),
    "seed_oss": ({FULL: 64}, 2 * 8 * 128 * BF16, {}),
    "smollm3": ({FULL: 36}, 2 * 4 * 128 * BF16, {}),  # head_dim 2,048 / 16
    "starcoder2": ({FULL: 30}, 2 * 2 * 128 * BF16, {}),  # head_dim 3,072 / 24
    "step3p5": ({FULL: 45}, 2 * 8 * 128 * BF16, {}),
    # 54 Mamba2 layers, 9 of them with the shared attention block beside: 8 mamba heads of
    # mamba_headdim 640 (5,120 = 2,560 x expand 2), 1 group of d_state 64
    "zamba2": ({LINEAR: 54, FULL: 9}, 2 * 32 * 160 * BF16,
               {"conv": (5120 + 2 * 1 * 64) * (4 - 1) * BF16, "ssm": 8 * 640 * 64 * BF16}),
}


def test_every_supported_type_imports_from_transformers_defaults():
    # but a type whose engines need a field the class defaults (kimi_linear's
    # linear_attn_config, lfm2_moe's layer_types, minimax's head_dim) or that transformers does
    # not know (MiniMax-M1's attn_type_list) is refused without it, naming the field
    needs = {"kimi_linear": "linear_attn_config", "lfm2_moe": "layer_types",
             "minimax": "head_dim", "minimax_m1": "attn_type_list",
             "minimax_text_01": "attn_type_list", "mimo_v2_flash": "hybrid_layer_pattern",
             "bailing_hybrid": "layer_group_size", "longcat_flash": "qk_rope_head_dim"}
    for model_type in SUPPORTED_MODEL_TYPES:
        if model_type in needs:
            with pytest.raises(ValueError, match=f"^{model_type} config.json has no "
                                                 f"{needs[model_type]}: "):
                spec_from_hf_config({"model_type": model_type})
            continue
        kinds, kv, state = DEFAULTS_READ[model_type]
        profile = spec_from_hf_config({"model_type": model_type}).profile()
        assert Counter(profile.layer_types) == kinds, model_type
        assert profile.kv_bytes_per_slot == kv, model_type
        assert profile.state_const_bytes == state, model_type
    assert sorted(DEFAULTS_READ) == sorted(set(SUPPORTED_MODEL_TYPES) - set(needs))
    # Gemma 3n's 15 kv-shared layers keep no cache; Gemma 4's sliding layers are 256 wide
    gemma3n = spec_from_hf_config({"model_type": "gemma3n"}).profile()
    assert Counter(gemma3n.kv_shared_layer_types) == {SLIDING: 12, FULL: 3}
    gemma4 = spec_from_hf_config({"model_type": "gemma4"}).profile()
    assert gemma4.sliding_kv_bytes_per_slot == 2 * 4 * 256 * BF16
    # the figures the shared rows stand for
    assert (GDN_DEFAULT_STATE, BAMBA_DEFAULT_STATE, MAMBA_DEFAULT_STATE) == (
        {"conv": 49_152, "ssm": 1_048_576}, {"conv": 52_224, "ssm": 4_194_304},
        {"conv": 9_216, "ssm": 49_152})


# Written-out configs of the remaining types, with their expected bytes.
# Plain GQA and MLA types from their published configs (the cache fields only): layers, and K + V
# (or MLA's latent + rope key, the indexer's 132 B beside it) a token a layer, in bf16.
@pytest.mark.parametrize("cfg, layers, per_token", [
    # MiniMax-M2: attn_type_list all 1 (full), 8 KV heads of 128
    ({"model_type": "minimax_m2", "num_hidden_layers": 62, "num_attention_heads": 48,
      "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 3072,
      "attn_type_list": [1] * 62}, 62, 2 * 8 * 128 * BF16),
    # Apertus-8B: head_dim 4,096 / 32 heads
    ({"model_type": "apertus", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8}, 32, 2 * 8 * 128 * BF16),
    ({"model_type": "seed_oss", "num_hidden_layers": 64, "num_attention_heads": 80,
      "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120}, 64, 2 * 8 * 128 * BF16),
    # ERNIE-4.5-21B-A3B: head_dim 128 given (not 2,560 / 20)
    ({"model_type": "ernie4_5_moe", "num_hidden_layers": 28, "hidden_size": 2560,
      "num_attention_heads": 20, "num_key_value_heads": 4, "head_dim": 128}, 28,
     2 * 4 * 128 * BF16),
    ({"model_type": "ernie4_5", "num_hidden_layers": 18, "hidden_size": 1024,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128}, 18,
     2 * 2 * 128 * BF16),
    ({"model_type": "olmoe", "num_hidden_layers": 16, "hidden_size": 2048,
      "num_attention_heads": 16, "num_key_value_heads": 16}, 16, 2 * 16 * 128 * BF16),
    # Gemma-2B: one KV head of 256
    ({"model_type": "gemma", "num_hidden_layers": 18, "hidden_size": 2048,
      "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256}, 18,
     2 * 1 * 256 * BF16),
    # Command-R: 64 KV heads of 8,192 / 64
    ({"model_type": "cohere", "num_hidden_layers": 40, "hidden_size": 8192,
      "num_attention_heads": 64, "num_key_value_heads": 64}, 40, 2 * 64 * 128 * BF16),
    # Nemotron-4-Minitron-8B: 48 query heads, 8 KV heads of 128
    ({"model_type": "nemotron", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128}, 32,
     2 * 8 * 128 * BF16),
    # phi-2: no num_key_value_heads, so one KV head a query head, of 2,560 / 32 = 80
    ({"model_type": "phi", "num_hidden_layers": 32, "hidden_size": 2560,
      "num_attention_heads": 32}, 32, 2 * 32 * 80 * BF16),
    # Phi-3.5-MoE: 8 KV heads of 4,096 / 32; no window given
    ({"model_type": "phimoe", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "sliding_window": None}, 32,
     2 * 8 * 128 * BF16),
    # AFM-4.5B (arcee): head_dim 128 given
    ({"model_type": "arcee", "num_hidden_layers": 36, "hidden_size": 2560,
      "num_attention_heads": 20, "num_key_value_heads": 4, "head_dim": 128}, 36,
     2 * 4 * 128 * BF16),
    # Hunyuan-7B and -A13B: head_dim null, so 4,096 / 32
    ({"model_type": "hunyuan_v1_dense", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None}, 32,
     2 * 8 * 128 * BF16),
    ({"model_type": "hunyuan_v1_moe", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8}, 32, 2 * 8 * 128 * BF16),
    ({"model_type": "granitemoeshared", "num_hidden_layers": 40, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8}, 40, 2 * 8 * 128 * BF16),
    ({"model_type": "hy_v3", "num_hidden_layers": 80, "hidden_size": 4096,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128}, 80,
     2 * 8 * 128 * BF16),
    ({"model_type": "flex_olmo", "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 32}, 32, 2 * 32 * 128 * BF16),
    # GLM-4.7-Flash: MLA, kv_lora_rank 512 + qk_rope_head_dim 64
    ({"model_type": "glm4_moe_lite", "num_hidden_layers": 47, "num_attention_heads": 20,
      "kv_lora_rank": 512, "qk_rope_head_dim": 64}, 47, (512 + 64) * BF16),
    # GLM-5: DeepSeek-V3.2's MLA and indexer keys (128 fp8 B + a float32 scale)
    ({"model_type": "glm_moe_dsa", "num_hidden_layers": 78, "num_attention_heads": 64,
      "kv_lora_rank": 512, "qk_rope_head_dim": 64, "index_head_dim": 128, "index_topk": 2048},
     78, (512 + 64) * BF16 + 128 + 4),
    # Kimi-K2.5: a DeepSeek-V3 language model under text_config
    ({"model_type": "kimi_k25", "text_config": {
        "model_type": "deepseek_v3", "num_hidden_layers": 61, "num_attention_heads": 64,
        "kv_lora_rank": 512, "qk_rope_head_dim": 64}}, 61, (512 + 64) * BF16),
])
def test_plain_attention_and_mla_types(cfg, layers, per_token):
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == (FULL,) * layers
    assert profile.kv_bytes_per_slot == per_token


def test_starcoder2_and_afmoe_windows():
    # StarCoder2-15B: a model-wide window slides every layer (vLLM's cache_config window)
    star = spec_from_hf_config({
        "model_type": "starcoder2", "num_hidden_layers": 40, "hidden_size": 6144,
        "num_attention_heads": 48, "num_key_value_heads": 4, "sliding_window": 4096}).profile()
    assert star.layer_types == (SLIDING,) * 40 and star.sliding_window == 4096
    assert star.kv_bytes_per_slot == 2 * 4 * 128 * BF16
    # AFMoE: its layer_types, three sliding layers to a full one
    afmoe = spec_from_hf_config({
        "model_type": "afmoe", "num_hidden_layers": 8, "hidden_size": 2048,
        "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
        "sliding_window": 1024, "layer_types": (["sliding_attention"] * 3
                                                + ["full_attention"]) * 2})
    assert afmoe.profile().layer_types == ((SLIDING,) * 3 + (FULL,)) * 2
    assert afmoe.profile().kv_bytes_per_slot == 2 * 4 * 128 * BF16
    assert "No layer pattern" not in afmoe.notes


# K-EXAONE as a TensorRT-LLM test config shapes it: 8 KV heads of 128, three sliding layers
# (window 128) to a full one
K_EXAONE = {
    "model_type": "exaone_moe", "architectures": ["ExaoneMoeForCausalLM"],
    "num_hidden_layers": 8, "hidden_size": 6144, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 128, "sliding_window": 128,
    "sliding_window_pattern": "LLLG", "max_position_embeddings": 262_144,
    "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 2}
# Step-3.5-Flash's config (yevvonlim/Megatron-Bridge's reference copy), cut to 8 layers: 8 KV
# groups of 128 for every layer, full where i % 4 == 0; its layer_types carry 3 more entries for
# the MTP layers (sliding, as the checkpoint's 45 to 47), which transformers moves to
# mtp_layer_types
STEP35 = {
    "model_type": "step3p5", "architectures": ["Step3p5ForCausalLM"], "num_hidden_layers": 8,
    "hidden_size": 4096, "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
    "sliding_window": 512, "num_nextn_predict_layers": 3, "max_position_embeddings": 262_144,
    "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(8)]
    + ["sliding_attention"] * 3,
    "attention_other_setting": {"num_attention_heads": 96, "num_attention_groups": 8,
                                "head_dim": 128}}


def test_exaone_moe_reads_as_exaone_4_with_vllms_window_a_layer():
    spec = spec_from_hf_config(K_EXAONE)
    profile = spec.profile()
    assert profile.layer_types == ((SLIDING,) * 3 + (FULL,)) * 2
    assert profile.kv_bytes_per_slot == 8 * (128 + 128) * BF16 == 4096
    # vLLM's K-EXAONE drafts with one MTP layer unless told, of its layer 0's type: sliding
    assert profile.sliding_window == 128 and spec.mtp_layer_types == ("sliding_attention",)
    assert spec.notes == ("Its 1 MTP layer is sliding_attention, kept only when drafting, "
                          "which FlatKV does not model: \"Add an MTP layer\" (--mtp-layer) adds "
                          "full-attention ones only.")
    none = spec_from_hf_config({**K_EXAONE, "num_nextn_predict_layers": 0})
    assert none.mtp_layer_types == () and none.notes == ""
    with pytest.raises(ValueError, match=re.escape(
            "exaone_moe config.json num_nextn_predict_layers = 20: vLLM reads each MTP layer's "
            "type from layer_types at its index, so give a whole number from 0 to its 8 "
            "layers")):
        spec_from_hf_config({**K_EXAONE, "num_nextn_predict_layers": 20})
    # vLLM slides layer i over sliding_windows[i] where the config lists them: the same window
    # for every sliding layer reads as it (a full layer's entry is not read)
    listed = [128, 128, 128, None] * 2
    assert spec_from_hf_config({**K_EXAONE, "sliding_windows": listed}).profile() == profile
    one_other = [256, 256, 256, 0] * 2
    with pytest.raises(ValueError, match=re.escape(
            "exaone_moe config.json sliding_windows gives its sliding layers 256 where "
            "sliding_window is 128: vLLM slides each layer over its own entry, and FlatKV plans "
            "one window for every sliding layer; a copy with sliding_window 256 and no "
            "sliding_windows plans it")):
        spec_from_hf_config({**K_EXAONE, "sliding_windows": one_other})
    with pytest.raises(ValueError, match="differ in window"):
        spec_from_hf_config({**K_EXAONE, "sliding_windows": [128, 256, 128, 0] * 2})
    with pytest.raises(ValueError, match=re.escape(
            "exaone_moe config.json sliding_windows must list a window for each of its 8 layers "
            "(as vLLM indexes it), got [128, 128]")):
        spec_from_hf_config({**K_EXAONE, "sliding_windows": [128, 128]})
    # a count of ours grouped, the config's own values as it writes them: 1,024 layers, an MTP
    # count of 1025 past them, a list of 2 windows short of them
    wide = {**K_EXAONE, "num_hidden_layers": 1_024,
            "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 256}
    with pytest.raises(ValueError, match=re.escape(
            "exaone_moe config.json num_nextn_predict_layers = 1025: vLLM reads each MTP layer's "
            "type from layer_types at its index, so give a whole number from 0 to its 1,024 "
            "layers")):
        spec_from_hf_config({**wide, "num_nextn_predict_layers": 1_025})
    with pytest.raises(ValueError, match=re.escape(
            "exaone_moe config.json sliding_windows must list a window for each of its 1,024 "
            "layers (as vLLM indexes it), got [128, 128]")):
        spec_from_hf_config({**wide, "sliding_windows": [128, 128]})
    # entries past the layers are not read (vLLM indexes by layer)
    longer = spec_from_hf_config({**K_EXAONE, "sliding_windows": [128] * 9})
    assert longer.profile() == profile
    # vLLM's exaone_moe reads an MTP layer's type as mtp_layer_types, else layer_types, at the
    # MTP layer's index: K-EXAONE's one MTP layer is sliding (its layer 0's type)
    two = spec_from_hf_config({**K_EXAONE, "num_nextn_predict_layers": 2})
    assert two.mtp_layer_types == ("sliding_attention",) * 2
    assert "Its 2 MTP layers are sliding_attention" in two.notes
    # without a drafter, "Add an MTP layer" copies the last full-attention layer
    assert with_mtp_layer(none).layers[-1].label == FULL
    # its MTP layers' types: a list, one per layer
    with pytest.raises(ValueError, match=re.escape(
            "config.json mtp_layer_types = 'sliding_attention' must be a list of layer types")):
        spec_from_hf_config({**K_EXAONE, "num_nextn_predict_layers": 1,
                             "mtp_layer_types": "sliding_attention"})


def test_step3p5_keeps_one_kv_size_and_a_tp_divides_both_query_heads():
    spec = spec_from_hf_config(STEP35)
    profile = spec.profile()
    # the 8 model layers (the MTP entries are the drafter's), all 8 groups x (128 + 128) bf16
    assert profile.layer_types == (FULL,) + (SLIDING,) * 3 + (FULL,) + (SLIDING,) * 3
    assert profile.kv_bytes_per_slot == 8 * 256 * BF16 == 4096 and profile.sliding_window == 512
    # the sliding layers' 96 query heads and the full layers' 64 both split over a TP: 32
    assert spec.attention_heads == 32 == math.gcd(64, 96)
    assert [tp for tp in (1, 2, 4, 8, 16, 32, 64) if spec.splits_over(tp)] == [1, 2, 4, 8, 16, 32]
    # TP 64 divides the full layers' 64 but not the sliding layers' 96: no layer has 32 heads,
    # so the refusal names the divisor as what it is, in the CLI and in the app alike (where
    # the model rides as its JSON, notes and all)
    gcd_words = ("its attention layers have query heads of different counts, whose greatest "
                 "common divisor is 32, and TP 64 does not divide it (engines split the query "
                 "heads over the ranks): choose TP 1, 2, 4, 8, 16 or 32, the TPs up to 64 that "
                 "split the model")
    with pytest.raises(ValueError, match=re.escape(f"{spec.name}: {gcd_words}")):
        spec.with_options(tp=64)
    with pytest.raises(ValueError, match=re.escape(gcd_words)):
        app_model.spec_for(app_model.CUSTOM_SPEC, app_model.spec_to_json(spec), 64)
    # num_attention_groups is transformers' num_key_value_heads: given, not a default (the
    # notes name no default); its 3 MTP layers (the layer_types entries past the model's) are
    # sliding ones, which the MTP button does not add
    assert spec.notes == ("Its sliding layers have 96 query heads and its full layers 64: a tp "
                          "must divide both, so attention_heads reads as 32, their greatest "
                          "common divisor. Its 3 MTP layers are "
                          "sliding_attention, kept only when drafting, which FlatKV does not "
                          "model: \"Add an MTP layer\" (--mtp-layer) adds full-attention ones "
                          "only.")
    # the spec keeps them (a model file too), and adds no full-attention MTP layer for them
    assert spec.mtp_layer_types == ("sliding_attention",) * 3
    # their greatest common divisor is ours, grouped; the heads as the config writes them:
    # 3,072 = 3 x 1,024 and 2,048 = 2 x 1,024 share 1,024
    wide = spec_from_hf_config({**STEP35, "num_attention_heads": 2_048, "attention_other_setting": {
        **STEP35["attention_other_setting"], "num_attention_heads": 3_072}})
    assert wide.attention_heads == 1_024 == math.gcd(2_048, 3_072)
    assert wide.notes.startswith("Its sliding layers have 3072 query heads and its full layers "
                                 "2048: a tp must divide both, so attention_heads reads as "
                                 "1,024, their greatest common divisor.")
    assert ModelSpec.from_dict(spec.to_dict()).mtp_layer_types == spec.mtp_layer_types
    with pytest.raises(ValueError, match=re.escape(
            "Step3p5ForCausalLM's MTP layers are sliding_attention (its config's "
            "mtp_layer_types): an added MTP layer is one full-attention layer, which is not "
            "this drafter, so FlatKV adds none")):
        with_mtp_layer(spec)
    # SGLang gives the sliding layers attention_other_setting's KV groups: 4 there and 8 for
    # vLLM would be two KV sizes
    other = {**STEP35["attention_other_setting"], "num_attention_groups": 4}
    with pytest.raises(ValueError, match=re.escape(
            "step3p5 config.json attention_other_setting.num_attention_groups = 4 is not the 8 "
            "KV groups vLLM gives every layer (num_attention_groups): SGLang gives the "
            "sliding_attention layers 4")):
        spec_from_hf_config({**STEP35, "attention_other_setting": other})
    # ... and its full layers num_attention_groups, 8 unless given, where vLLM reads
    # transformers' num_key_value_heads
    four = {k: v for k, v in STEP35.items() if k != "num_attention_groups"}
    with pytest.raises(ValueError, match=re.escape(
            "num_attention_groups (SGLang's default) = 8 is not the 4 KV groups")):
        spec_from_hf_config({**four, "num_key_value_heads": 4,
                             "attention_other_setting": {"num_attention_groups": 4}})
    # the sliding layers' query heads: named where the config gives them
    # a value of another kind reads as config.json writes it: true, not Python's True
    with pytest.raises(ValueError, match=re.escape(
            "step3p5 config.json attention_other_setting.num_attention_groups = true is not the "
            "8 KV groups vLLM gives every layer (num_attention_groups): SGLang gives the "
            "sliding_attention layers true")):
        spec_from_hf_config({**STEP35, "attention_other_setting": {
            **STEP35["attention_other_setting"], "num_attention_groups": True}})
    with pytest.raises(ValueError, match=re.escape(
            "step3p5 config.json attention_other_setting.num_attention_heads = 12 must be a "
            "positive multiple of the 8 KV groups")):
        spec_from_hf_config({**STEP35, "attention_other_setting": {
            **STEP35["attention_other_setting"], "num_attention_heads": 12}})
    # the sliding query heads as transformers reads them, from either field
    with pytest.raises(ValueError, match=re.escape(
            "step3p5 config.json num_sliding_attention_heads = -96 must be a positive multiple "
            "of the 8 KV groups")):
        spec_from_hf_config({**{k: v for k, v in STEP35.items()
                                if k != "attention_other_setting"},
                             "num_sliding_attention_heads": -96})
    # SGLang reads both from attention_other_setting: one missing, it would not load it
    half = spec_from_hf_config({**STEP35, "attention_other_setting": {"num_attention_groups": 8}})
    assert half.notes.startswith("SGLang 0.5.23 reads the sliding layers' num_attention_heads "
                                 "from attention_other_setting, which this config.json does not "
                                 "give there")
    # without attention_other_setting SGLang 0.5.23 would not load it (it reads the sliding
    # layers' groups there); the query heads are the model's
    bare = spec_from_hf_config({k: v for k, v in STEP35.items()
                                if k != "attention_other_setting"})
    assert bare.attention_heads == 64 and bare.profile() == profile
    assert bare.notes.startswith(
        "SGLang 0.5.23 reads the sliding layers' num_attention_heads and num_attention_groups "
        "from attention_other_setting, which this config.json does not give there: it would "
        "not load it")
    # no sliding layer: no sliding heads to divide, nothing to say of them
    full = spec_from_hf_config({**STEP35, "layer_types": ["full_attention"] * 11})
    assert full.attention_heads == 64 and "query heads" not in full.notes
    # SGLang keeps Step-3.5's sliding layers in a pool of their own (its hybrid SWA list)
    sglang = run_strategy("sglang", profile, budget_bytes=10**10, context_tokens=4096)
    assert sglang.extras["log_lines"][0].startswith("Use sliding window memory pool.")


def test_lfm3_reads_its_conv_layers_beside_full_and_sliding_ones():
    # transformers' defaults, as LFM3's own: 24 layers, full where i % 4 == 2, sliding where
    # i % 4 == 0 (not the first), conv elsewhere; a conv state of (7 - 1) x 2,048 bf16
    spec = spec_from_hf_config({"model_type": "lfm3", "architectures": ["Lfm3ForCausalLM"]})
    profile = spec.profile()
    kinds = [FULL if i % 4 == 2 else SLIDING if i % 4 == 0 and i else LINEAR for i in range(24)]
    assert profile.layer_types == tuple(kinds)
    assert profile.state_const_bytes == {"conv": 6 * 2048 * BF16} and profile.conv_rows == 6
    assert profile.kv_bytes_per_slot == 4 * 256 * BF16 and profile.sliding_window == 256
    assert "so transformers' lfm3 default: 13 linear_attention + 6 full_attention + 5 " \
        "sliding_attention cache layers" in spec.notes
    # vLLM's LFM3 sizes the conv by hidden_size: a conv_dim is not read (LFM2's is)
    assert spec_from_hf_config({"model_type": "lfm3", "architectures": ["Lfm3ForCausalLM"],
                                "conv_dim": 1024}).profile() == profile
    # SGLang has no LFM3 model
    sglang = run_strategy("sglang", profile, budget_bytes=10**10, context_tokens=4096)
    assert not sglang.applies and sglang.reason.startswith("SGLang has no LFM3 model")
    # vLLM's Lfm3 sizes P from the conv widened by the drafted tokens (LFM2's does not, and dies
    # at start-up here): fp8 KV of 1,024 B a token, 3 drafted tokens: 9 rows, 36,864 B, so
    # P = 16 x cdiv(36,864, 16 x 1,024) = 48
    fp8 = spec.with_options(kv_dtype="fp8").profile()
    drafted = StrategyOptions(speculative_tokens=3)
    vllm = run_strategy("vllm", fp8, budget_bytes=10**10, context_tokens=4096, options=drafted)
    assert vllm.block_size == 16 * -(-(9 * 2048 * BF16) // (16 * 1024)) == 48
    lfm2_class = replace(fp8, architectures=("Lfm2ForCausalLM",))
    assert not run_strategy("vllm", lfm2_class, budget_bytes=10**10, context_tokens=4096,
                            options=drafted).applies
    # vLLM 0.31, the last release with mamba cache mode all, has no Lfm3ForCausalLM (0.34's
    # registry has it, 0.31's not): no release runs it in mode all
    all_mode = run_strategy("vllm", profile, budget_bytes=10**10, context_tokens=4096,
                            options=StrategyOptions(mamba_cache_mode="all"))
    assert all_mode.reason == (
        "no vLLM release runs Lfm3ForCausalLM in mamba cache mode all: 0.31, the last release "
        "with that mode, does not serve it, and the later ones that do have no mode all; "
        "choose mamba cache mode align or none")
    assert run_strategy("vllm", profile, budget_bytes=10**10, context_tokens=4096,
                        options=StrategyOptions(mamba_cache_mode="align")).applies


def test_glm5_says_vllm_keeps_its_kv_in_fp8_on_blackwell():
    glm5 = {"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"],
            "num_hidden_layers": 78, "num_attention_heads": 64, "kv_lora_rank": 512,
            "qk_rope_head_dim": 64, "index_head_dim": 128, "index_topk": 2048,
            "max_position_embeddings": 202_752}
    assert spec_from_hf_config(glm5).notes == (
        "vLLM 0.32 and later keep GlmMoeDsaForCausalLM's KV cache in fp8 (fp8_e4m3) on SM 10.x "
        "GPUs (B200, B300, GB200) unless --kv-cache-dtype is given (\"Using fp8 kv-cache for "
        "GlmMoeDsaForCausalLM on SM10x\"): set the KV dtype to fp8 to match such a log.")
    # an fp8 checkpoint's cache is fp8 already; another class says nothing of it
    fp8 = {**glm5, "quantization_config": {**MODELOPT, "kv_cache_quant_algo": "FP8"}}
    assert spec_from_hf_config(fp8).kv_dtype == "float8_e4m3fn"
    assert "Using fp8 kv-cache" not in spec_from_hf_config(fp8).notes
    assert spec_from_hf_config({**glm5, "architectures": ["DeepseekV32ForCausalLM"],
                                "model_type": "deepseek_v32"}).notes == ""


def test_granite_swa_and_cohere2_moe_layer_types():
    # Granite SWA: 20 query heads of 2,560 / 20 = 128, 4 KV heads; its layer_types
    granite = spec_from_hf_config({
        "model_type": "granite_swa", "num_hidden_layers": 4, "hidden_size": 2560,
        "num_attention_heads": 20, "num_key_value_heads": 4, "sliding_window": 128,
        "layer_types": ["full_attention"] + ["sliding_attention"] * 3}).profile()
    assert granite.layer_types == (FULL,) + (SLIDING,) * 3 and granite.sliding_window == 128
    assert granite.kv_bytes_per_slot == 2 * 4 * 128 * BF16
    moe = spec_from_hf_config({
        "model_type": "granitemoe_swa", "num_hidden_layers": 2, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "sliding_window": 512,
        "layer_types": ["sliding_attention", "full_attention"]}).profile()
    assert moe.layer_types == (SLIDING, FULL) and moe.kv_bytes_per_slot == 2 * 8 * 128 * BF16
    # Command A-style MoE: 8 KV heads of 128, three sliding layers to a full one
    cohere = spec_from_hf_config({
        "model_type": "cohere2_moe", "architectures": ["Cohere2MoeForCausalLM"],
        "num_hidden_layers": 8, "hidden_size": 8192, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 128, "sliding_window": 4096,
        "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 2}).profile()
    assert cohere.count(SLIDING) == 6 and cohere.kv_bytes_per_slot == 2 * 8 * 128 * BF16
    assert cohere.architectures == ("Cohere2MoeForCausalLM",)
    # SGLang 0.5.23 keeps Granite SWA's sliding layers in a pool of their own (SWA_SINK_ARCHS,
    # beside gpt-oss): a config without architectures reads as GraniteSWAForCausalLM
    assert granite.architectures == ("GraniteSWAForCausalLM",)
    assert moe.architectures == ("GraniteMoeSWAForCausalLM",)
    for profile in (granite, moe):
        r = run_strategy("sglang", profile, budget_bytes=10**10, context_tokens=4096)
        assert r.extras["log_lines"][0].startswith("Use sliding window memory pool.")


def test_exaone4_reads_its_lettered_window_pattern():
    # EXAONE-4.0-32B: sliding_window_pattern "LLLG" over 64 layers, 3 sliding (window 4,096)
    # then 1 global, as vLLM reads layer_types; 8 KV heads of 128: 4,096 B a token a layer
    cfg = {"model_type": "exaone4", "sliding_window_pattern": "LLLG", "num_hidden_layers": 64,
           "sliding_window": 4096, "num_attention_heads": 40, "num_key_value_heads": 8,
           "head_dim": 128, "hidden_size": 5120}
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == (SLIDING, SLIDING, SLIDING, FULL) * 16
    assert (profile.sliding_window, profile.kv_bytes_per_slot) == (4096, 2 * 8 * 128 * BF16)
    # its layer_types, where listed, are read as listed
    listed = {**cfg, "layer_types": [FULL] * 64}
    assert spec_from_hf_config(listed).profile().layer_types == (FULL,) * 64
    # EXAONE-4.0-1.2B has no window: every layer full (transformers' class divides by 0)
    small = {"model_type": "exaone4", "sliding_window": None, "num_hidden_layers": 30,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64}
    assert spec_from_hf_config(small).profile().layer_types == (FULL,) * 30
    with pytest.raises(ValueError, match="^config.json sliding_window_pattern = 'LLXG': write it "
                       "as letters L \\(sliding\\) and G"):
        spec_from_hf_config({**cfg, "sliding_window_pattern": "LLXG"})
    with pytest.raises(ValueError, match="needs num_hidden_layers to repeat it over"):
        spec_from_hf_config({k: v for k, v in cfg.items() if k != "num_hidden_layers"})


def test_mistral_slides_every_layer_when_window_is_set():
    cfg = {"model_type": "mistral", "num_hidden_layers": 4, "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "sliding_window": 4096}
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == (SLIDING,) * 4 and profile.sliding_window == 4096
    assert profile.kv_bytes_per_slot == 8 * (4096 // 32) * 2 * BF16
    cfg["sliding_window"] = None
    assert spec_from_hf_config(cfg).layer_types == (FULL,) * 4


@pytest.mark.parametrize("model_type", ["qwen2", "qwen3"])
def test_qwen2_qwen3_max_window_layers(model_type):
    cfg = {"model_type": model_type, "architectures": [f"{model_type.title()}ForCausalLM"],
           "num_hidden_layers": 6, "hidden_size": 1024,
           "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64,
           "use_sliding_window": True, "sliding_window": 2048, "max_window_layers": 4,
           "max_position_embeddings": 32_768}
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == (FULL,) * 4 + (SLIDING,) * 2
    assert profile.kv_bytes_per_slot == 4 * (64 + 64) * BF16
    # the engines part from transformers here, and the model's note (shown beside every
    # engine's figures) says how
    spec = spec_from_hf_config(cfg)
    assert spec.notes == (
        "use_sliding_window with max_window_layers 4: layers 4 to 5 slide, as transformers "
        "reads it; vLLM refuses the split (max_window_layers must equal num_hidden_layers); "
        "SGLang slides no layer. Every layout here plans the layers as transformers reads them")
    assert "use_sliding_window" not in spec.source
    for split, kind, says in ((6, FULL, "no layer slides, as transformers reads it; vLLM slides "
                                        "every layer"),
                              (0, SLIDING, "every layer slides, as transformers reads it; vLLM "
                                           "too")):
        cfg["max_window_layers"] = split
        spec = spec_from_hf_config(cfg)
        assert spec.layer_types == (kind,) * 6
        assert spec.notes.startswith(f"use_sliding_window with max_window_layers {split}: "
                                     f"{says}; SGLang slides no layer.")
    # layer_types listed in the config are planned as listed: no note to contradict them
    spec = spec_from_hf_config({**cfg, "max_window_layers": 3, "layer_types": [FULL] * 6})
    assert spec.layer_types == (FULL,) * 6 and spec.notes == ""
    cfg["use_sliding_window"] = False  # Qwen2.5's checkpoints: sliding_window set, unused
    spec = spec_from_hf_config(cfg)
    assert spec.layer_types == (FULL,) * 6 and spec.notes == ""


def test_qwen2_head_dim_falls_back_to_hidden_over_heads():
    cfg = {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 3584,
           "num_attention_heads": 28, "num_key_value_heads": 4}
    assert spec_from_hf_config(cfg).kv_bytes_per_slot() == 4 * (128 + 128) * BF16


@pytest.mark.parametrize("nested", [False, True])
def test_gemma3_text_and_multimodal(nested):
    text = {"num_hidden_layers": 12, "num_attention_heads": 8, "num_key_value_heads": 4,
            "head_dim": 256, "sliding_window": 1024, "sliding_window_pattern": 6}
    cfg = {"model_type": "gemma3", "text_config": text} if nested else {
        "model_type": "gemma3_text", **text}
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == ((SLIDING,) * 5 + (FULL,)) * 2
    assert profile.sliding_window == 1024
    assert profile.kv_bytes_per_slot == 4 * (256 + 256) * BF16


def test_mistral3_reads_a_ministral3_language_model():
    # Ministral 3's text_config under mistral3: GQA, 8 KV heads of 128, bf16 K and V
    spec = spec_from_hf_config({"model_type": "mistral3", "text_config": {
        "model_type": "ministral3", "num_hidden_layers": 34, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128}})
    profile = spec.profile()
    assert profile.layer_types == ("full_attention",) * 34
    assert profile.kv_bytes_per_slot == 8 * 128 * 2 * 2


def test_architectures_come_from_the_config_and_choose_sglangs_pools():
    # Gemma-3-12B's text layers; SGLang keeps no sliding pool for Gemma 3 (not on its list)
    text = {"num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 8,
            "head_dim": 256, "sliding_window": 1024, "sliding_window_pattern": 6}
    cfg = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
           "text_config": text}
    spec = spec_from_hf_config(cfg)
    assert spec.architectures == ("Gemma3ForConditionalGeneration",)
    assert ModelSpec.from_dict(spec.to_dict()).architectures == spec.architectures
    r = run_strategy("sglang", spec.profile(), budget_bytes=40 * 2**30, context_tokens=32_768)
    assert r.capacity_tokens == 40 * 2**30 // (48 * 8 * 512 * BF16) == 109_226
    # none given (a config written from transformers' defaults): read as transformers' class
    # for the type, which a checkpoint names, and said so; SGLang's pools are then Gemma 3's
    unnamed = spec_from_hf_config({**cfg, "architectures": None})
    assert unnamed.architectures == ("Gemma3ForConditionalGeneration",)
    assert ('architectures ["Gemma3ForConditionalGeneration"] (its class for gemma3, which the '
            "engines pick code paths by)") in unnamed.notes
    assert run_strategy("sglang", unnamed.profile(), budget_bytes=40 * 2**30,
                        context_tokens=32_768).capacity_tokens == 109_226
    # a wrapper's checkpoints name the wrapper's class: Llama 4's is on SGLang's list
    scout = spec_from_hf_config({"model_type": "llama4", "text_config": {
        "model_type": "llama4_text", "num_hidden_layers": 4, "num_attention_heads": 40,
        "num_key_value_heads": 8, "head_dim": 128, "attention_chunk_size": 8192}})
    assert scout.architectures == ("Llama4ForConditionalGeneration",)
    assert "Use sliding window memory pool" in run_strategy(
        "sglang", scout.profile(), budget_bytes=40 * 2**30,
        context_tokens=32_768).extras["log_lines"][0]
    text_only = spec_from_hf_config({"model_type": "gemma3_text", **text})
    assert text_only.architectures == ("Gemma3ForCausalLM",)
    assert run_strategy("sglang", text_only.profile(), budget_bytes=40 * 2**30,
                        context_tokens=32_768).capacity_tokens == 109_226
    with pytest.raises(ValueError, match=r"config.json architectures = 'Gemma3' must be a list"):
        spec_from_hf_config({**cfg, "architectures": "Gemma3"})


def test_bamba_attention_indices():
    cfg = {"model_type": "bamba", "num_hidden_layers": 8, "attn_layer_indices": [3, 7],
           "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
           "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_n_groups": 1,
           "mamba_d_conv": 4, "mamba_expand": 2}
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == ((LINEAR,) * 3 + (FULL,)) * 2
    assert profile.state_const_bytes == {"conv": (8192 + 2 * 128) * 3 * BF16,
                                         "ssm": 128 * 64 * 128 * BF16}


def test_deepseek_v2_mla_and_mixtral():
    cfg = {"model_type": "deepseek_v2", "num_hidden_layers": 27, "kv_lora_rank": 512,
           "qk_rope_head_dim": 64}
    assert spec_from_hf_config(cfg).kv_bytes_per_slot() == (512 + 64) * BF16
    mixtral = {"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096,
               "num_attention_heads": 32, "num_key_value_heads": 8}
    assert spec_from_hf_config(mixtral).profile().kv_bytes_per_slot == 8 * 256 * BF16


def test_nemotron_layers_block_type_and_ssm_dtype_from_config():
    cfg = {"model_type": "nemotron_h", "layers_block_type": ["mamba", "mlp", "attention", "moe"],
           "mamba_ssm_cache_dtype": "bfloat16", "torch_dtype": "float16"}
    spec = spec_from_hf_config(cfg)
    assert spec.layer_types == (LINEAR, FULL)
    assert (spec.kv_dtype, spec.conv_dtype, spec.ssm_dtype) == ("float16", "float16", "bfloat16")
    assert spec.source.endswith("; ssm state bfloat16 from the config's mamba_ssm_cache_dtype")
    assert spec.model_layers == 4
    assert spec.layers[0] == Mamba2Layer(128, 64, 128, 8, 4)  # nemotron_h class defaults


def test_vllm_keeps_a_nemotron_h_configs_own_mamba_ssm_cache_dtype():
    # Nemotron-H-8B's config.json naming mamba_ssm_cache_dtype bfloat16: vLLM's NemotronH hook
    # reads it with --mamba-ssm-cache-dtype auto (config.py 1143-1170), so the vLLM column keeps
    # bfloat16, the figures of the preset told --mamba-ssm-cache-dtype bfloat16 (it gave
    # float32's: P 1,040, 2,520 blocks). Conv (8,192 + 2 x 8 x 128) x 3 x 2 = 61,440 B, ssm
    # 128 x 64 x 128 x 2 = 2,097,152 B: a state of 2,158,592 B; 2 x 8 x 128 x 2 = 4,096 B a
    # token; P = 16 x cdiv(2,158,592, 16 x 4,096) = 16 x 33 = 528; 4 attention and 24 Mamba2
    # layers, groups of 4: a block 4 x 528 x 4,096 = 8,650,752 B, 40 GiB // it = 4,964 blocks
    budget = 40 * 2**30
    assert (8_192 + 2 * 8 * 128) * 3 * 2 == 61_440 and 128 * 64 * 128 * 2 == 2_097_152
    assert 16 * -(-2_158_592 // (16 * 4_096)) == 528 and 4 * 528 * 4_096 == 8_650_752
    assert budget // 8_650_752 == 4_964
    spec = spec_from_hf_config({**PRESET_CONFIGS["Nemotron-H-8B"],
                                "mamba_ssm_cache_dtype": "bfloat16"})
    profile = spec.profile()
    assert (profile.ssm_dtype, profile.config_mamba_ssm_cache_dtype) == ("bfloat16", "bfloat16")
    assert profile.state_const_bytes == {"conv": 61_440, "ssm": 2_097_152}
    r = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=8_192)
    assert (r.block_size, r.block_bytes, r.num_blocks) == (528, 8_650_752, 4_964)
    assert r.formulas[0] == ("ssm state bfloat16: the config's mamba_ssm_cache_dtype, which "
                             "vLLM's NemotronHForCausalLM reads with --mamba-ssm-cache-dtype "
                             "auto")
    told = run_strategy("vllm", load_preset("Nemotron-H-8B").profile(), budget_bytes=budget,
                        context_tokens=8_192, options=StrategyOptions(vllm_ssm_dtype="bfloat16"))
    assert (told.block_size, told.block_bytes, told.num_blocks) == (528, 8_650_752, 4_964)
    # the model's ssm dtype edited to float32: vLLM still reads the config's bfloat16 (its
    # hook reads the config, not the weights), and a model file keeps the field
    edited = spec.with_options(ssm_dtype="float32")
    assert edited.config_mamba_ssm_cache_dtype == "bfloat16"
    assert run_strategy("vllm", edited.profile(), budget_bytes=budget,
                        context_tokens=8_192).num_blocks == 4_964
    assert ModelSpec.from_dict(spec.to_dict()) == spec
    assert spec.to_dict()["config_mamba_ssm_cache_dtype"] == "bfloat16"
    # SGLang does not read it: its own float32 (mamba_ssm_dtype unnamed)
    assert spec.config_mamba_ssm_dtype is None
    # "auto": the hook sets the flag's auto, which keeps the model dtype, bfloat16: the same
    auto = spec_from_hf_config({**PRESET_CONFIGS["Nemotron-H-8B"],
                                "mamba_ssm_cache_dtype": "auto"}).profile()
    assert auto.config_mamba_ssm_cache_dtype == "bfloat16"
    assert run_strategy("vllm", auto, budget_bytes=budget, context_tokens=8_192).num_blocks == (
        4_964)
    # naming none: transformers' float32, vLLM's default; ssm 4,194,304 B, state 4,255,744 B,
    # P = 16 x cdiv(4,255,744, 65,536) = 1,040, a block 4 x 1,040 x 4,096 = 17,039,360 B, 2,520
    # blocks
    plain = spec_from_hf_config(PRESET_CONFIGS["Nemotron-H-8B"]).profile()
    assert plain.config_mamba_ssm_cache_dtype is None
    r = run_strategy("vllm", plain, budget_bytes=budget, context_tokens=8_192)
    assert 16 * -(-4_255_744 // 65_536) == r.block_size == 1_040
    assert (r.block_bytes, r.num_blocks) == (4 * 1_040 * 4_096, budget // 17_039_360)
    assert r.num_blocks == 2_520
    # SGLang's mamba_ssm_dtype bfloat16 alone: SGLang keeps bfloat16, vLLM 0.34's hook reads
    # its own default, float32 (the config names no mamba_ssm_cache_dtype, and none is
    # recorded), not SGLang's field: P 1,040, 2,520 blocks; 0.19's default float16
    sglang_only = spec_from_hf_config({**PRESET_CONFIGS["Nemotron-H-8B"],
                                       "mamba_ssm_dtype": "bfloat16"}).profile()
    assert (sglang_only.config_mamba_ssm_dtype, sglang_only.config_mamba_ssm_cache_dtype) == (
        "bfloat16", None)
    r = run_strategy("vllm", sglang_only, budget_bytes=budget, context_tokens=8_192)
    assert (r.block_size, r.num_blocks) == (1_040, 2_520)
    assert r.formulas[0].startswith("ssm state float32: vLLM's default for "
                                    "NemotronHForCausalLM with --mamba-ssm-cache-dtype auto")
    from flatkv.strategies.vllm import ssm_dtype as vllm_ssm_dtype

    assert vllm_ssm_dtype(sglang_only, StrategyOptions(), older=True)[0] == "float16"
    from flatkv.strategies.sglang.state import ssm_dtype as sglang_ssm_dtype

    assert sglang_ssm_dtype(sglang_only, StrategyOptions()) == (
        "bfloat16", "the config's mamba_ssm_dtype")
    # another model's hook reads no such field: Bamba keeps the model dtype, nothing recorded
    bamba = spec_from_hf_config({"model_type": "bamba", "mamba_ssm_cache_dtype": "float32"})
    assert bamba.config_mamba_ssm_cache_dtype is None


def test_sglang_reads_only_the_configs_mamba_ssm_dtype_spelt_as_it_spells_them():
    # SGLang's mamba2_state_dtype: the (text) config's mamba_ssm_dtype when it is float32,
    # bfloat16 or float16, else float32; nemotron_h's mamba_ssm_cache_dtype is vLLM's field
    qwen = {"model_type": "qwen3_next", "num_hidden_layers": 4}
    assert spec_from_hf_config(qwen).config_mamba_ssm_dtype is None
    told = spec_from_hf_config({**qwen, "mamba_ssm_dtype": "bfloat16"})
    assert (told.ssm_dtype, told.config_mamba_ssm_dtype) == ("bfloat16", "bfloat16")
    assert told.profile().config_mamba_ssm_dtype == "bfloat16"
    assert ModelSpec.from_dict(told.to_dict()) == told
    alias = spec_from_hf_config({**qwen, "mamba_ssm_dtype": "bf16"})
    assert (alias.ssm_dtype, alias.config_mamba_ssm_dtype) == ("bfloat16", None)
    assert alias.source.endswith("; SGLang ignores mamba_ssm_dtype 'bf16' (it reads float32, "
                                 "bfloat16, float16) and keeps its ssm state in float32")
    nested = spec_from_hf_config(PRESET_CONFIGS["Qwen3.5-27B"])
    assert nested.config_mamba_ssm_dtype == "float32"  # text_config's, as SGLang reads it
    nemotron = spec_from_hf_config({"model_type": "nemotron_h",
                                    "mamba_ssm_cache_dtype": "bfloat16"})
    assert (nemotron.ssm_dtype, nemotron.config_mamba_ssm_dtype) == ("bfloat16", None)
    # attention only: nothing for SGLang to re-size, and the profile carries nothing
    llama = spec_from_hf_config({"model_type": "llama", "mamba_ssm_dtype": "bfloat16"})
    assert llama.profile().config_mamba_ssm_dtype is None


def test_vllm_reads_a_configs_ssm_dtype_only_for_the_models_its_hooks_name():
    # Qwen3-Next with mamba_ssm_dtype float32: vLLM keeps the state in the model dtype (only
    # Qwen3.5's hook reads the field): conv 49,152 B + ssm 32 x 128 x 128 x 2 B; SGLang reads it
    qwen = spec_from_hf_config({**PRESET_CONFIGS["Qwen3-Next-80B-A3B"],
                                "mamba_ssm_dtype": "float32"})
    assert (qwen.ssm_dtype, qwen.config_mamba_ssm_dtype) == ("bfloat16", "float32")
    assert qwen.state_const_bytes() == {"conv": 49_152, "ssm": 1_048_576}
    assert "; ssm state bfloat16 from the model dtype (vLLM reads mamba_ssm_dtype only for " \
        "Qwen3.5)" in qwen.source
    # Bamba with Nemotron-H's field: the model dtype too
    bamba = spec_from_hf_config({"model_type": "bamba", "mamba_ssm_cache_dtype": "float32"})
    assert bamba.ssm_dtype == bamba.conv_dtype == "bfloat16"
    assert bamba.source.endswith("from the model dtype (vLLM reads mamba_ssm_cache_dtype only "
                                 "for Nemotron-H)")
    # Qwen3.5's own field: float32, 2,097,152 B of ssm state per layer (SPEC section 2)
    assert spec_from_hf_config(PRESET_CONFIGS["Qwen3.5-27B"]).ssm_dtype == "float32"


def test_ssm_dtype_source_is_the_model_dtype_where_no_entry_sets_it():
    spec = spec_from_hf_config({"model_type": "qwen3_next", "torch_dtype": "float16"})
    assert spec.ssm_dtype == "float16"
    assert spec.source.endswith("; ssm state float16 from the model dtype")
    attention_only = spec_from_hf_config({"model_type": "llama"})
    assert "ssm state" not in attention_only.source


def test_jamba_period_and_offset_resolve_like_the_model():
    cfg = {"model_type": "jamba", "num_hidden_layers": 8, "attn_layer_period": 4,
           "attn_layer_offset": 1}
    assert spec_from_hf_config(cfg).layer_types == (LINEAR, FULL, LINEAR, LINEAR) * 2


def test_falcon_h1_every_layer_is_two_cache_layers():
    spec = spec_from_hf_config(PRESET_CONFIGS["Falcon-H1-7B"])
    assert len(spec.layers) == 88 and spec.model_layers == 44
    assert spec.layers[0] == AttentionLayer(2, 128, 128)


def test_model_dtype_default_and_fp32_served_in_bf16():
    assert spec_from_hf_config({"model_type": "llama"}).kv_dtype == "bfloat16"
    # vLLM's --dtype auto casts a float32 checkpoint down to bfloat16: 2 bytes, not 4
    spec = spec_from_hf_config({"model_type": "llama", "torch_dtype": "float32"})
    assert (spec.kv_dtype, spec.conv_dtype, spec.ssm_dtype) == ("bfloat16",) * 3
    assert spec.source.endswith("; float32 checkpoint served in bfloat16, as engines' dtype "
                                "'auto' casts it")
    hybrid = spec_from_hf_config({"model_type": "qwen3_next", "torch_dtype": "float32"})
    assert hybrid.profile().state_const_bytes == {"conv": 8192 * 3 * BF16,  # SPEC §2 conv_dim
                                                  "ssm": 32 * 128 * 128 * BF16}
    # llama's class defaults: 32 KV heads of 128; --kv-dtype float32 still gives 4 bytes
    assert spec.with_options(kv_dtype="float32").kv_bytes_per_slot() == 32 * 128 * 2 * FP32


MODELOPT = {"quant_method": "modelopt", "quant_algo": "NVFP4"}


@pytest.mark.parametrize(("quantization", "kv_dtype"), [
    ({**MODELOPT, "kv_cache_quant_algo": "FP8"}, "float8_e4m3fn"),
    ({**MODELOPT, "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"}},
     "float8_e4m3fn"),
    ({"quant_method": "modelopt", "quantization": {"kv_cache_quant_algo": "fp8"}},
     "float8_e4m3fn"),
    (MODELOPT, "bfloat16"),  # weights only
    ({**MODELOPT, "kv_cache_quant_algo": "NVFP4"}, "bfloat16"),  # vLLM falls back to auto
    # compressed-tensors: vLLM keeps the model dtype unless --kv-cache-dtype fp8 is passed
    ({"quant_method": "compressed-tensors",
      "kv_cache_scheme": {"num_bits": 8, "type": "float", "dynamic": False}}, "bfloat16"),
])
def test_kv_cache_dtype_follows_a_modelopt_checkpoint(quantization, kv_dtype):
    cfg = {**PRESET_CONFIGS["Llama-3.1-8B"], "quantization_config": quantization}
    spec = spec_from_hf_config(cfg)
    assert (spec.kv_dtype, spec.conv_dtype) == (kv_dtype, "bfloat16")
    per_byte = 8 * 128 * 2  # kv heads x (k + v head dims): bytes per token per layer per byte
    assert spec.kv_bytes_per_slot() == per_byte * (1 if kv_dtype.startswith("float8") else BF16)
    assert ("KV cache float8_e4m3fn from quantization_config" in spec.source) == (
        kv_dtype != "bfloat16")


def test_a_kv_scheme_not_applied_is_said():
    cfg = PRESET_CONFIGS["Llama-3.1-8B"]
    nvfp4 = spec_from_hf_config({**cfg, "quantization_config": {
        "quant_method": "modelopt", "kv_cache_quant_algo": "NVFP4"}})
    assert nvfp4.source.endswith("; quantization_config's kv_cache_quant_algo NVFP4 not "
                                 "applied: vLLM falls back to the model dtype for it")
    scheme = {"num_bits": 8, "type": "float", "dynamic": False}
    ct = spec_from_hf_config({**cfg, "quantization_config": {
        "quant_method": "compressed-tensors", "kv_cache_scheme": scheme}})
    assert ct.kv_dtype == "bfloat16"
    assert ct.source.endswith('; quantization_config\'s kv_cache_scheme {"dynamic": false, '
                              '"num_bits": 8, "type": "float"} not applied: vLLM applies a '
                              "compressed-tensors KV scheme only when told (--kv-cache-dtype); "
                              "give the KV dtype to match such a run")
    weights_only = spec_from_hf_config({**cfg, "quantization_config": {"quant_method": "fp8"}})
    assert "quantization_config" not in weights_only.source


def test_configs_saved_by_transformers_5_read_their_tagged_floats():
    # transformers 5 saves time_step_limit (0.0, inf) as [0.0, {"__float__": "Infinity"}]
    cfg = {**PRESET_CONFIGS["Falcon-H1-7B"], "time_step_limit": [0.0, {"__float__": "Infinity"}]}
    assert spec_from_hf_config(json.dumps(cfg)).layers == spec_from_hf_config(
        PRESET_CONFIGS["Falcon-H1-7B"]).layers


# Attention models as their checkpoints write them (cache-relevant fields), read as vLLM reads
# them: per-layer layer_types where the class has them, else one window for every layer.
ATTENTION_CONFIGS = {
    # google/gemma-2-9b: float32 checkpoint; sliding 4096 on even layers (layer 0 slides)
    "gemma2": ({"model_type": "gemma2", "num_hidden_layers": 42, "num_attention_heads": 16,
                "num_key_value_heads": 8, "head_dim": 256, "hidden_size": 3584,
                "sliding_window": 4096, "torch_dtype": "float32"},
               (SLIDING, FULL) * 21, 4096, 8 * 256 * 2 * BF16),
    # CohereForAI/c4ai-command-r7b-12-2024: 3 sliding then 1 full
    "cohere2": ({"model_type": "cohere2", "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "hidden_size": 4096, "sliding_window": 4096,
                 "sliding_window_pattern": 4, "torch_dtype": "bfloat16"},
                (SLIDING, SLIDING, SLIDING, FULL) * 8, 4096, 8 * 128 * 2 * BF16),
    # microsoft/Phi-3-mini-4k-instruct: a model-wide 2047 window, head_dim 3072 / 32 = 96
    "phi3": ({"model_type": "phi3", "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 32, "hidden_size": 3072, "sliding_window": 2047,
              "torch_dtype": "bfloat16"},
             (SLIDING,) * 32, 2047, 32 * 96 * 2 * BF16),
    # allenai/Olmo-3-7B: 3 sliding (4096) then 1 full
    "olmo3": ({"model_type": "olmo3", "num_hidden_layers": 32, "num_attention_heads": 32,
               "num_key_value_heads": 32, "hidden_size": 4096, "sliding_window": 4096},
              (SLIDING, SLIDING, SLIDING, FULL) * 8, 4096, 32 * 128 * 2 * BF16),
    # HuggingFaceTB/SmolLM3-3B: no window
    "smollm3": ({"model_type": "smollm3", "num_hidden_layers": 36, "num_attention_heads": 16,
                 "num_key_value_heads": 4, "hidden_size": 2048},
                (FULL,) * 36, None, 4 * 128 * 2 * BF16),
    # zai-org/GLM-4.5-Air: head_dim 128 given (96 heads x 128 != hidden 4096)
    "glm4_moe": ({"model_type": "glm4_moe", "num_hidden_layers": 46, "num_attention_heads": 96,
                  "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 4096},
                 (FULL,) * 46, None, 8 * 128 * 2 * BF16),
    # mistralai/Mistral-Small-3.1-24B: the language model is text_config
    "mistral3": ({"model_type": "mistral3", "text_config": {
        "model_type": "mistral", "num_hidden_layers": 40, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120, "sliding_window": None}},
        (FULL,) * 40, None, 8 * 128 * 2 * BF16),
    # Qwen/Qwen3-VL-8B-Instruct: text_config
    "qwen3_vl": ({"model_type": "qwen3_vl", "text_config": {
        "model_type": "qwen3_vl_text", "num_hidden_layers": 36, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 4096}},
        (FULL,) * 36, None, 8 * 128 * 2 * BF16),
    # Qwen/Qwen2.5-VL-7B-Instruct: the language model's fields at the top level (transformers
    # builds its text_config from them); sliding_window 32768 beside use_sliding_window false:
    # no layer slides. 4 KV heads x (128 + 128), head_dim 3,584 / 28 heads
    "qwen2_5_vl": ({"model_type": "qwen2_5_vl", "num_hidden_layers": 28,
                    "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_size": 3584,
                    "max_window_layers": 28, "sliding_window": 32768,
                    "use_sliding_window": False, "max_position_embeddings": 128000,
                    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
                    "vision_config": {"depth": 32, "hidden_size": 1280}},
                   (FULL,) * 28, None, 4 * 128 * 2 * BF16),
    # Qwen/Qwen2-VL-7B-Instruct: as Qwen2.5-VL
    "qwen2_vl": ({"model_type": "qwen2_vl", "num_hidden_layers": 28, "num_attention_heads": 28,
                  "num_key_value_heads": 4, "hidden_size": 3584, "sliding_window": 32768,
                  "use_sliding_window": False},
                 (FULL,) * 28, None, 4 * 128 * 2 * BF16),
    # the same model relabelled llama (as a refusal once advised): its use_sliding_window false
    # still keeps every layer full; a Mistral-style window without it slides them all
    "llama": ({"model_type": "llama", "num_hidden_layers": 28, "num_attention_heads": 28,
               "num_key_value_heads": 4, "hidden_size": 3584, "sliding_window": 32768,
               "use_sliding_window": False},
              (FULL,) * 28, None, 4 * 128 * 2 * BF16),
    "mistral": ({"model_type": "mistral", "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "hidden_size": 4096, "sliding_window": 4096},
                (SLIDING,) * 32, 4096, 8 * 128 * 2 * BF16),
    # ibm-granite/granite-3.3-8b-instruct
    "granite": ({"model_type": "granite", "num_hidden_layers": 40, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "hidden_size": 4096},
                (FULL,) * 40, None, 8 * 128 * 2 * BF16),
}


@pytest.mark.parametrize("model_type", sorted(ATTENTION_CONFIGS))
def test_attention_models_as_vllm_reads_them(model_type):
    cfg, layer_types, window, kv_bytes = ATTENTION_CONFIGS[model_type]
    profile = spec_from_hf_config(cfg).profile()
    assert profile.layer_types == layer_types
    assert profile.sliding_window == window
    assert profile.kv_bytes_per_slot == kv_bytes


def test_qwen2_5_vl_serves_at_its_max_position_embeddings():
    # mrope is no length scaling (vLLM reads it as the default rope): 128,000 tokens
    cfg, *_ = ATTENTION_CONFIGS["qwen2_5_vl"]
    assert spec_from_hf_config(cfg).max_model_len == 128_000


def test_zamba2_hybrid_layers_are_attention_then_mamba2():
    # Zyphra/Zamba2-2.7B: 54 Mamba2 layers; 9 of them ("hybrid") also run the shared attention
    # block, which keeps a KV cache of its own at every use (vLLM: one Attention per use, as
    # many KV heads as query heads, attention_head_dim 2 x 2,560 / 32 = 160)
    cfg = {"model_type": "zamba2", "num_hidden_layers": 54, "hidden_size": 2560,
           "num_attention_heads": 32, "mamba_d_state": 64, "mamba_headdim": 64,
           "n_mamba_heads": 80, "mamba_ngroups": 1, "mamba_expand": 2, "mamba_d_conv": 4,
           "torch_dtype": "bfloat16"}
    spec = spec_from_hf_config(cfg)
    profile = spec.profile()
    assert (profile.count(FULL), profile.count(LINEAR)) == (9, 54)
    assert spec.layers[6] == AttentionLayer(32, 160, 160)  # layer 6: attention, then Mamba2
    assert profile.kv_bytes_per_slot == 32 * (160 + 160) * BF16  # 20,480
    # d_inner = 2 x 2,560 = 80 heads x 64: conv (5,120 + 2 x 1 x 64) x 3, ssm 80 x 64 x 64
    assert profile.state_const_bytes == {"conv": 5248 * 3 * BF16, "ssm": 80 * 64 * 64 * BF16}
    # TP 2 (SPEC §2): n_groups 1 raised to 2: conv (5,120 + 2 x 2 x 64) / 2 = 2,688 x 3
    tp2 = spec.with_options(tp=2).profile()
    assert tp2.state_const_bytes == {"conv": 2688 * 3 * BF16, "ssm": 40 * 64 * 64 * BF16}
    assert tp2.kv_bytes_per_slot == 16 * 320 * BF16


def test_kimi_k2_reads_as_deepseek_v3_mla():
    # moonshotai/Kimi-K2-Instruct: transformers has no kimi_k2 class; it is DeepSeek-V3's
    cfg = {"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"],
           "num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
           "num_attention_heads": 64, "hidden_size": 7168, "torch_dtype": "bfloat16"}
    spec = spec_from_hf_config(cfg)
    assert len(spec.layers) == 61
    assert spec.kv_bytes_per_slot() == (512 + 64) * BF16
    assert spec.with_options(tp=8).kv_bytes_per_slot() == (512 + 64) * BF16  # not split by TP




LONGCAT_FLASH = {"model_type": "longcat_flash", "architectures": ["LongcatFlashForCausalLM"],
                 "num_layers": 28, "hidden_size": 6144, "num_attention_heads": 64,
                 "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                 "v_head_dim": 128, "max_position_embeddings": 131_072,
                 "torch_dtype": "bfloat16"}


def test_longcat_flash_keeps_two_mla_caches_a_layer():
    # each decoder layer runs two MLA attentions, each with its cache (vLLM's self_attn.0 and
    # .1; SGLang's num_attention_layers = 2 x num_hidden_layers): 56 latent layers of 1,152 B
    spec = spec_from_hf_config(LONGCAT_FLASH)
    assert (spec.pattern, spec.model_layers, spec.notes) == ("56*mla", 28, "")
    assert "each of its 28 layers runs two MLA attentions" in spec.source
    profile = spec.with_options(tp=8).profile()  # the latent is not split by TP
    assert profile.kv_bytes_per_token == 56 * (512 + 64) * BF16 == 64_512
    # vLLM: 16-token pages of all 56 layers (FLASH_ATTN_MLA's, TRITON_MLA's kernel blocks);
    # SGLang: a token of all 56 layers
    vllm = run_strategy("vllm", profile, budget_bytes=40 * 2**30, context_tokens=131_072)
    assert (vllm.block_size, vllm.num_blocks) == (16, 40 * 2**30 // (16 * 64_512))
    sglang = run_strategy("sglang", profile, budget_bytes=40 * 2**30, context_tokens=131_072)
    assert sglang.logged_tokens == 40 * 2**30 // 64_512 == 665_762
    # where the engines part: num_hidden_layers beside num_layers (transformers halves it into
    # num_layers, SGLang takes it as the decoder layers), and no qk_rope_head_dim
    with pytest.raises(ValueError, match="^longcat_flash config.json gives num_hidden_layers: "
                                         "transformers \\(and vLLM\\) read it as two attentions"):
        spec_from_hf_config({**LONGCAT_FLASH, "num_hidden_layers": 56})
    with pytest.raises(ValueError, match="^longcat_flash config.json has no qk_rope_head_dim: "
                                         "SGLang's LongcatFlashConfig takes 128"):
        spec_from_hf_config({k: v for k, v in LONGCAT_FLASH.items() if k != "qk_rope_head_dim"})


def test_kimi_linear_is_kda_state_layers_and_mla_full_layers():
    spec = spec_from_hf_config(KIMI_LINEAR)
    assert spec.pattern == "(3*kda,mla)*6,2*kda,mla"  # full layers 4, 8, ..., 24 and 27
    assert spec.notes == ""  # every size read is in the config (linear_attn_config's names)
    assert (spec.max_model_len, spec.attention_heads) == (1_048_576, 32)
    profile = spec.profile()
    # MLA: one latent row of kv_lora_rank + qk_rope_head_dim per token, not split by TP
    assert profile.kv_bytes_per_slot == (512 + 64) * BF16 == 1152
    # vLLM's kda_state_shape: conv (32 x 128 + 2 x 32 x 128) by K - 1 = 3 in the model dtype,
    # recurrent (32, 128, 128) in float32 (kda_state_dtype), whatever the model dtype
    assert profile.state_const_bytes == {"conv": 12_288 * 3 * BF16, "ssm": 32 * 128 * 128 * FP32}
    assert spec.ssm_dtype == "float32" and "kda_state_dtype" in spec.source
    tp2 = spec.with_options(tp=2).profile()
    assert tp2.state_const_bytes == {"conv": 6_144 * 3 * BF16, "ssm": 16 * 128 * 128 * FP32}
    assert tp2.kv_bytes_per_slot == 1152
    # vLLM: P from the state over the MLA row, to a multiple of 128 for an MLA hybrid (vLLM
    # 0.27 and later; FlashMLA's 64 before: 960): ceil(1,085,440 / 1,152) = 943 -> 1,024; 7 MLA
    # and 20 KDA layers page in groups of 7: 3 groups of KDA (1 padding layer)
    result = run_strategy("vllm", tp2, budget_bytes=60 * 2**30, context_tokens=None)
    assert result.block_size == 1_024 and result.extras["group_size"] == 7
    assert result.num_blocks == 60 * 2**30 // (1_024 * 1152) // 7
    # 2 drafted tokens: kda_state_shape widens the conv to 3 + 2 rows, and Kimi Linear sizes
    # P with them: 6,144 x 5 x 2 + 1,048,576 = 1,110,016 B, 128 x cdiv(1,110,016, 147,456) =
    # 1,024; 60 GiB // (1,024 x 1,152) // 7 = 7,801 blocks
    drafted = run_strategy("vllm", tp2, budget_bytes=60 * 2**30, context_tokens=None,
                           options=StrategyOptions(speculative_tokens=2))
    assert drafted.extras["drafted_conv_bytes"] == 6_144 * 5 * BF16
    assert (drafted.block_size, drafted.num_blocks) == (1_024, 60 * 2**30 // (1_024 * 1_152) // 7)
    assert drafted.num_blocks == 7_801
    # without linear_attn_config, transformers' class would give a KDA pattern of its own
    # that vLLM and SGLang do not read (their layer lists and sizes live in that dict)
    with pytest.raises(ValueError, match=r"^kimi_linear config.json has no linear_attn_config"):
        spec_from_hf_config({k: v for k, v in KIMI_LINEAR.items() if k != "linear_attn_config"})


BAILING = {"model_type": "bailing_hybrid", "architectures": ["BailingMoeV3ForCausalLM"],
           "num_hidden_layers": 42, "layer_group_size": 6, "num_attention_heads": 32,
           "num_key_value_heads": 32, "head_dim": 128, "kv_lora_rank": 512,
           "qk_rope_head_dim": 64, "short_conv_kernel_size": 4, "no_kda_lora": True,
           "max_position_embeddings": 131_072, "torch_dtype": "bfloat16"}


def test_bailing_hybrid_reads_as_kimi_linear_kda_and_mla_by_layer_group():
    # Ling-3.0-Flash: every 6th layer MLA (5, 11, ..., 41), the others Kimi Delta Attention of
    # num_attention_heads x head_dim (config.json's 128, not the 64 transformers then sets)
    spec = spec_from_hf_config(BAILING)
    assert spec.pattern == "(5*kda,mla)*7"
    assert spec.notes == ""  # every size read is in the config, under its own names
    assert (spec.max_model_len, spec.architectures) == (131_072, ("BailingMoeV3ForCausalLM",))
    assert "max_model_len" not in spec.source  # max_position_embeddings, as written
    # layer_types that agree are read as they are
    assert spec_from_hf_config({**BAILING, "layer_types": (
        ["linear_attention"] * 5 + ["full_attention"]) * 7}).pattern == spec.pattern
    # sizes left to transformers are named by the fields config.json writes: head_dim (not
    # transformers' linear_head_dim), max_position_embeddings once (not its model_max_length)
    thin = spec_from_hf_config({k: v for k, v in BAILING.items()
                                if k not in ("head_dim", "max_position_embeddings")})
    assert thin.notes.startswith("Not in the config.json, so transformers' defaults: head_dim "
                                 "128, max_position_embeddings 262,144; check them")
    profile = spec.profile()
    assert profile.kv_bytes_per_slot == (512 + 64) * BF16 == 1_152
    # conv (32 x 128 + 2 x 32 x 128) by K - 1 = 3 in bf16; recurrent (32, 128, 128) in float32
    assert profile.state_const_bytes == {"conv": 12_288 * 3 * BF16, "ssm": 32 * 128 * 128 * FP32}
    # vLLM: P, a multiple of 128, whose MLA row covers the state: ceil(2,170,880 / 1,152) =
    # 1,885 -> 1,920; 7 MLA and 35 KDA layers page in groups of 7
    result = run_strategy("vllm", profile, budget_bytes=60 * 2**30, context_tokens=None)
    assert (result.block_size, result.extras["group_size"]) == (1_920, 7)
    assert result.num_blocks == 60 * 2**30 // (1_920 * 1_152) // 7
    # vLLM widens the conv by the drafted tokens and sizes P with them (its
    # _get_kda_state_shape_for_config passes num_spec): 12,288 x 5 x 2 + 2,097,152 = 2,220,032
    # B, ceil(/ 1,152) = 1,928 -> 2,048
    drafted = run_strategy("vllm", profile, budget_bytes=60 * 2**30, context_tokens=None,
                           options=StrategyOptions(speculative_tokens=2))
    assert drafted.block_size == 2_048
    # asked for mamba cache mode all (0.29 to 0.31), vLLM runs it in align: no
    # SupportsMambaPrefixCaching
    assert runs_all_as_align(profile) == "BailingMoeV3ForCausalLM"
    # SGLang keeps the KDA state in float32 whatever the config says (KimiLinearCacheParams'
    # default), as for Kimi Linear: 35 x (73,728 + 2,097,152) B a request
    told = spec_from_hf_config({**BAILING, "mamba_ssm_dtype": "bfloat16"}).profile()
    sglang = run_strategy("sglang", told, budget_bytes=60 * 2**30, context_tokens=131_072)
    assert sglang.extras["sglang_ssm_dtype"] == "float32"
    assert sglang.extras["state_slot_bytes"] == 35 * (73_728 + 2_097_152) == 75_980_800
    # no architectures: the class both engines serve it by, not transformers' own
    bare = spec_from_hf_config({k: v for k, v in BAILING.items() if k != "architectures"})
    assert bare.architectures == ("BailingMoeV3ForCausalLM",)
    assert "architectures [\"BailingMoeV3ForCausalLM\"] (the class the engines serve" in bare.notes


@pytest.mark.parametrize("change, said", [
    ({"num_hidden_layers": 20}, "^bailing_hybrid config.json num_hidden_layers = 20 is not a "
     "multiple of layer_group_size = 6: vLLM makes the 2 layers past the last whole group MLA, "
     "transformers KDA, and SGLang refuses the model"),
    ({"use_mla_nope": True}, "^bailing_hybrid config.json use_mla_nope is set: SGLang then "
     "keeps no rotary part"),
    ({"no_kda_lora": False}, "^bailing_hybrid config.json no_kda_lora = false: vLLM's "
     "BailingMoeV3 refuses it"),
    ({"layer_group_size": None}, "^bailing_hybrid config.json has no layer_group_size: it "
     "places the MLA layers \\(the last of each group\\), and the engines' defaults differ: "
     "transformers' 6, vLLM's own BailingMoeV3 config 5, SGLang's 1"),
    ({"short_conv_kernel_size": None}, "^bailing_hybrid config.json has no "
     "short_conv_kernel_size: SGLang's BailingHybridConfig runs Kimi Delta Attention only where "
     "it is given"),
    ({"no_kda_lora": None}, "^bailing_hybrid config.json has no no_kda_lora: "),
    # Python's modulo would place the MLA layers of -6 as of 6
    ({"layer_group_size": -6}, "^bailing_hybrid config.json layer_group_size = -6 must be "
     "positive: the last layer of each group is MLA"),
    # the engines place the layers by layer_group_size alone
    ({"layer_types": ["full_attention"] * 42}, "^bailing_hybrid config.json layer_types "
     "disagree with layer_group_size = 6, by which vLLM and SGLang place the layers"),
    # the config's values as it writes them, the count derived from them grouped: 2,047 =
    # 1 x 1,024 + 1,023 layers, 1,023 past the last whole group
    ({"num_hidden_layers": 2_047, "layer_group_size": 1_024}, "^bailing_hybrid config.json "
     "num_hidden_layers = 2047 is not a multiple of layer_group_size = 1024: vLLM makes the "
     "1,023 layers past the last whole group MLA"),
])
def test_bailing_hybrid_is_refused_where_its_engines_part(change, said):
    cfg = {k: v for k, v in {**BAILING, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=said):
        spec_from_hf_config(cfg)


def test_olmo_hybrid_reads_gdn_layers_as_qwen3_next():
    # OLMo hybrid's GDN layers: vLLM's gated_delta_net_state_shape over the linear_* fields,
    # ssm state in the model dtype (no config field changes it)
    cfg = {"model_type": "olmo_hybrid", "architectures": ["OlmoHybridForCausalLM"],
           "num_hidden_layers": 8, "hidden_size": 3840, "num_attention_heads": 30,
           "num_key_value_heads": 30, "linear_num_key_heads": 30, "linear_num_value_heads": 30,
           "linear_key_head_dim": 96, "linear_value_head_dim": 192, "linear_conv_kernel_dim": 4,
           "max_position_embeddings": 65_536, "torch_dtype": "bfloat16",
           "layer_types": ["linear_attention"] * 3 + ["full_attention"]
           + ["linear_attention"] * 3 + ["full_attention"]}
    spec = spec_from_hf_config(cfg)
    assert spec.pattern == "(3*gdn,full)*2" and spec.notes == ""
    profile = spec.profile()
    assert profile.kv_bytes_per_slot == 30 * (128 + 128) * BF16  # head_dim 3,840 / 30 = 128
    # conv (2 x 30 x 96 + 30 x 192) x 3, ssm 30 x 96 x 192
    assert profile.state_const_bytes == {"conv": 11_520 * 3 * BF16, "ssm": 30 * 96 * 192 * BF16}
    # vLLM has no prefix caching of its state in mode all: it runs align instead
    result = run_strategy("vllm", profile, budget_bytes=40 * 2**30, context_tokens=65_536,
                          options=StrategyOptions(mamba_cache_mode="all"))
    assert result.formulas[0].startswith("mamba cache mode all runs as align: vLLM's "
                                         "OlmoHybridForCausalLM")


@pytest.mark.parametrize("model_type", ["mamba", "falcon_mamba"])
def test_attention_free_mamba1_models_are_state_layers_only(model_type):
    # tiiuae/falcon-mamba-7b's sizes: vLLM's mamba1_state_shape(intermediate_size, state_size,
    # conv_kernel): conv (8,192, 3), ssm (8,192, 16), in the model dtype
    cfg = {"model_type": model_type, "num_hidden_layers": 64, "hidden_size": 4096,
           "intermediate_size": 8192, "state_size": 16, "conv_kernel": 4,
           "torch_dtype": "bfloat16", "architectures": [
               {"mamba": "MambaForCausalLM", "falcon_mamba": "FalconMambaForCausalLM"}[
                   model_type]]}
    spec = spec_from_hf_config(cfg)
    assert spec.pattern == "64*mamba1"
    # no length field (nor in MambaConfig / FalconMambaConfig): vLLM's _get_and_verify_max_len
    # assumes 2,048 with a warning, SGLang's get_context_length 2,048 silently; so does FlatKV
    assert (spec.max_model_len, spec.max_model_len_assumed) == (2_048, True)
    assert spec.notes == assumed_length_note(2_048)
    assert ("so vLLM warns \"The model's config.json does not contain any of the keys to "
            "determine the original maximum length of the model. Assuming the model's maximum "
            "length is 2048.\"; SGLang 0.5.23 assumes 2,048 too, silently." in spec.notes)
    assert "type the context you serve at" in spec.notes
    assert "or add max_position_embeddings to the config.json" in spec.notes
    assert spec.source.endswith("; max_model_len 2,048 from vLLM's assumed length (the "
                                "config.json gives none); ssm state bfloat16 from the model dtype")
    assert ModelSpec.from_dict(spec.to_dict()) == spec  # an export keeps it assumed
    profile = spec.profile()
    # vLLM at 40 GiB, mode none: one group of 64 state layers, a page the state of one layer
    # (conv 8,192 x 3 + ssm 8,192 x 16, 2 B each = 311,296 B), one page a request, so
    # 42,949,672,960 // 311,296 // 64 = 2,155 blocks: "GPU KV cache size: 4,413,440 tokens,
    # Maximum concurrency for 2,048 tokens per request: 2155.00x" (2,155 x 2,048 tokens)
    page = 8192 * 3 * BF16 + 8192 * 16 * BF16
    assert page == 311_296 and 40 * 2**30 // page // 64 == 2_155
    r = run_strategy("vllm", profile, budget_bytes=40 * 2**30, context_tokens=spec.max_model_len)
    assert (r.num_blocks, r.max_concurrency, r.logged_tokens) == (2_155, 2_155, 4_413_440)
    assert r.extras["log_lines"][-1] == ("GPU KV cache size: 4,413,440 tokens, Maximum "
                                         "concurrency for 2,048 tokens per request: 2155.00x")
    assert not profile.has_attention and profile.kv_bytes_per_slot == 0
    assert profile.state_const_bytes == {"conv": 8192 * 3 * BF16, "ssm": 8192 * 16 * BF16}
    assert spec.with_options(tp=4).profile().state_const_bytes == {
        "conv": 2048 * 3 * BF16, "ssm": 2048 * 16 * BF16}


def test_attention_free_mamba2_model_is_state_layers_only():
    # mistralai/Mamba-Codestral-7B-v0.1's sizes: vLLM's mamba2_state_shape with intermediate
    # expand x hidden = 8,192 = 128 heads x 64: conv (8,192 + 2 x 8 x 128, 3), ssm (128, 64, 128)
    cfg = {"model_type": "mamba2", "architectures": ["Mamba2ForCausalLM"],
           "num_hidden_layers": 64, "hidden_size": 4096, "expand": 2,
           "num_heads": 128, "head_dim": 64, "n_groups": 8, "state_size": 128,
           "conv_kernel": 4, "chunk_size": 256, "torch_dtype": "bfloat16"}
    spec = spec_from_hf_config(cfg)
    assert spec.pattern == "64*mamba2" and spec.mamba_chunk_size == 256
    # Mamba2Config gives no length either: vLLM's assumed 2,048, said in the notes
    assert spec.max_model_len_assumed and spec.notes == assumed_length_note(2_048)
    assert spec.profile().state_const_bytes == {"conv": 10_240 * 3 * BF16,
                                                "ssm": 128 * 64 * 128 * BF16}
    # heads that do not cover expand x hidden_size are refused (transformers' class says so)
    with pytest.raises(ValueError, match=r"^this mamba2 config.json does not hold together: .*"
                                         r"hidden_size \* expand \(8192\) must equal "
                                         r"num_heads \* head_dim \(4096\)"):
        spec_from_hf_config({**cfg, "head_dim": 32})




@pytest.mark.parametrize("model_type", ["lfm2", "lfm2_moe"])
def test_lfm2_short_convolutions_keep_a_conv_state_only(model_type):
    classes = {"lfm2": "Lfm2ForCausalLM", "lfm2_moe": "Lfm2MoeForCausalLM"}
    spec = spec_from_hf_config({**LFM2, "model_type": model_type,
                                "architectures": [classes[model_type]]})
    assert spec.pattern == "(2*conv,full)*3,(conv,full)*3,conv" and spec.notes == ""
    assert "ssm state" not in spec.source  # there is none to name a dtype for
    profile = spec.profile()
    # attention: 8 KV heads x (64 + 64) x 2 B (head_dim 2,048 / 32 = 64)
    assert profile.kv_bytes_per_slot == 8 * 128 * BF16 == 2048
    # vLLM's short_conv_state_shape(hidden_size, conv_L_cache): (2,048, 3 - 1) in the model
    # dtype, no ssm (SGLang: a Mamba2 state of state_size 0)
    assert profile.state_const_bytes == {"conv": 2048 * 2 * BF16}
    assert profile.ssm_element_bytes is None and profile.conv_rows == 2  # K - 1, widened by N
    tp2 = spec.with_options(tp=2).profile()
    assert tp2.state_const_bytes == {"conv": 1024 * 2 * BF16}
    # vLLM: the attention page at P 16 (32,768 B) holds the 8,192 B state; 6 attention and 10
    # conv layers page in groups of 6: 3 groups (2 padding layers), 32,768 x 6 B a block
    budget = 8 * 2**30
    vllm = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=128_000)
    assert (vllm.block_size, vllm.block_bytes) == (16, 32_768 * 6)
    assert vllm.num_blocks == budget // 32_768 // 6 == 43_690
    # one request: 128,000 / 16 = 8,000 attention pages and a state page in each conv group
    assert (vllm.concurrency_numerator, vllm.concurrency_denominator) == (43_690, 8_002)
    sglang = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=128_000)
    assert sglang.applies and any("state bytes per layer = conv 8,192 B (no ssm state)" in f
                                  for f in sglang.formulas)
    # drafted tokens: vLLM's ShortConv keeps K - 1 + N rows (PR #50272), LFM2 sizes P without
    # them; 8 rows more = (2,048, 10) x 2 B = 40,960 B, past the 32,768 B page: it fails to
    # start, and (32,768 - 8,192) // (2,048 x 2) = 6 tokens would fit
    eight = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=128_000,
                         options=StrategyOptions(speculative_tokens=8))
    assert not eight.applies and "keep the widened state of 40,960 B" in eight.reason
    assert "at most 6 speculative tokens" in eight.reason
    six = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=128_000,
                       options=StrategyOptions(speculative_tokens=6))
    assert six.block_size == 16 and six.extras["drafted_conv_bytes"] == 2048 * 8 * BF16


def test_lfm2_conv_dim_and_layer_types_as_the_engines_read_them():
    # a conv_dim equal to hidden_size is the published checkpoints'; one apart would size
    # vLLM's LFM2 (conv_dim) and SGLang's (hidden_size) differently: refused
    same = spec_from_hf_config({**LFM2, "conv_dim": 2048})
    assert same.profile().state_const_bytes == {"conv": 2048 * 2 * BF16}
    with pytest.raises(ValueError, match=r"^lfm2 config.json conv_dim = 1024 is not "
                                         r"hidden_size = 2048: vLLM's LFM2 sizes"):
        spec_from_hf_config({**LFM2, "conv_dim": 1024})
    with pytest.raises(ValueError, match=r"^lfm2_moe config.json has no layer_types"):
        spec_from_hf_config({k: v for k, v in LFM2.items() if k != "layer_types"}
                            | {"model_type": "lfm2_moe", "architectures": ["Lfm2MoeForCausalLM"]})


def test_llama4_reads_chunked_layers_from_no_rope_layers():
    spec = spec_from_hf_config(LLAMA4_SCOUT)
    assert spec.pattern == "(3*chunked,full)*12"
    profile = spec.profile()
    assert profile.attention_chunk_size == 8192 and profile.kv_bytes_per_slot == 8 * 256 * BF16
    assert spec.architectures == ("Llama4ForConditionalGeneration",)
    assert spec.max_model_len == 10_485_760  # llama3 rope scaling is not applied again
    text = LLAMA4_SCOUT["text_config"]
    assert spec.notes == ""  # SGLang's every 4th layer is this config's too
    # no_rope_layers given: 1 = RoPE = chunked (vLLM's llama4: nope = value == 0); SGLang still
    # takes every 4th layer as full, and the notes say so
    given = LLAMA4_SCOUT | {"text_config": text | {"no_rope_layers": [1, 0] * 24}}
    assert spec_from_hf_config(given).pattern == "(chunked,full)*24"
    assert spec_from_hf_config(given).notes.startswith(
        "SGLang takes every 4th layer as global attention and the others as chunked, whatever "
        "no_rope_layers says")
    # no chunk: every layer attends globally (transformers' layer_types, vLLM's Attention)
    unchunked = LLAMA4_SCOUT | {"text_config": text | {"attention_chunk_size": None}}
    assert spec_from_hf_config(unchunked).pattern == "48*full"
    assert spec_from_hf_config(unchunked).profile().attention_chunk_size is None
    # the layer list as transformers writes it: vLLM never reads it, so it must agree
    agreeing = LLAMA4_SCOUT | {"text_config": text | {
        "layer_types": ["chunked_attention"] * 3 + ["full_attention"]}}
    agreeing["text_config"]["layer_types"] = agreeing["text_config"]["layer_types"] * 12
    assert spec_from_hf_config(agreeing).pattern == "(3*chunked,full)*12"
    other = LLAMA4_SCOUT | {"text_config": text | {"layer_types": ["full_attention"] * 48}}
    with pytest.raises(ValueError, match="llama4 config.json text_config.layer_types disagree "
                       "with no_rope_layers and attention_chunk_size, which vLLM's llama4 reads"):
        spec_from_hf_config(other)
    with pytest.raises(ValueError, match="text_config.attention_chunk_size = 0 must be positive"):
        spec_from_hf_config(LLAMA4_SCOUT | {"text_config": text | {"attention_chunk_size": 0}})


def test_minimax_m1_is_lightning_state_layers_and_full_attention():
    spec = spec_from_hf_config(MINIMAX_M1)
    assert spec.pattern == "(7*lightning,full)*10" and spec.notes == ""
    assert (spec.max_model_len, spec.attention_heads) == (10_240_000, 64)
    assert "linear_attention_state_dtype" in spec.source and spec.ssm_dtype == "bfloat16"
    profile = spec.profile()
    assert profile.kv_bytes_per_slot == 8 * (128 + 128) * BF16 == 4_096
    # vLLM's linear_attention_state_shape(num_attention_heads, tp, head_dim): (64, 128, 128)
    # in the model dtype, no conv state
    assert profile.state_const_bytes == {"ssm": 64 * 128 * 128 * BF16} == {"ssm": 2_097_152}
    tp8 = spec.with_options(tp=8).profile()
    assert tp8.state_const_bytes == {"ssm": 8 * 128 * 128 * BF16}
    assert tp8.kv_bytes_per_slot == 1 * 256 * BF16
    # vLLM: P = 16 x ceil(2,097,152 / (16 x 4,096)) = 512, whose attention page is the state
    # page exactly; 70 lightning and 10 full layers page in groups of 10 (8 groups)
    budget = 60 * 2**30
    vllm = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=131_072)
    assert (vllm.block_size, vllm.extras["group_size"]) == (512, 10)
    assert vllm.num_blocks == budget // 2_097_152 // 10 == 3_072
    # a request: 131,072 / 512 = 256 attention pages and a state page in each of 7 groups
    assert (vllm.concurrency_numerator, vllm.concurrency_denominator) == (3_072, 256 + 7)
    # no prefix caching of state in mode all: vLLM runs MiniMax in align
    assert runs_all_as_align(profile) == "MiniMaxM1ForCausalLM"
    sglang = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=131_072)
    assert not sglang.applies and sglang.reason.startswith(
        "SGLang has no MiniMax-Text-01 / M1 model")
    # drafted tokens: a state page more per token in each state group, nothing to widen
    drafted = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=131_072,
                           options=StrategyOptions(speculative_tokens=2))
    assert drafted.block_size == 512 and drafted.concurrency_denominator == 256 + 7 * 3
    assert any(f.startswith("speculative tokens 2: no conv state to widen") for f in
               drafted.formulas)


def test_deepseek_v32_keeps_the_indexer_keys_beside_the_latent():
    spec = spec_from_hf_config(DEEPSEEK_V32)
    assert spec.pattern == "61*mla" and spec.max_model_len == 163_840
    assert "lightning indexer's keys" in spec.source
    profile = spec.profile()
    # the latent (512 + 64) x 2 B and the indexer's 128 fp8 keys + a float32 scale per 128
    assert profile.kv_bytes_per_slot == 576 * BF16 + 128 + 4 == 1_284
    assert profile.kernel_block_size == 64  # FlashMLA sparse's kernel block, vLLM's P
    # vLLM: one group of 61 MLA and 61 indexer caches (UniformTypeKVCacheSpecs), its block the
    # sum of their pages: 61 x (64 x 1,152 + 64 x 132) = 5,012,736 B
    budget = 100 * 2**30
    vllm = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=163_840)
    assert (vllm.block_size, vllm.block_bytes) == (64, 61 * (73_728 + 8_448)) == (64, 5_012_736)
    assert vllm.num_blocks == budget // 5_012_736 == 21_420
    assert vllm.logged_tokens == 21_420 * 64 * 163_840 // 163_840  # 2,560 blocks a request
    # SGLang: its cell of 61 x (576 x 2 + 132) B, the tokens floored to its NSA page of 64
    # whatever page size it is given
    sglang = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=163_840)
    assert budget // (61 * 1_284) == 1_370_897
    assert sglang.logged_tokens == 1_370_897 // 64 * 64 == 1_370_880
    assert sglang.formulas[0].startswith("page size 64, not 1: SGLang serves DeepSeek's sparse")
    # its fp8 note is said where the cache is fp8 (656 + 132 B a token a layer), not in bf16
    fp8_note = "with an fp8 KV cache SGLang sizes its pool by the bytes it stores, 656 + 132 B"
    assert not any(f.startswith(fp8_note) for f in sglang.formulas)
    fp8 = run_strategy("sglang", spec.with_options(kv_dtype="fp8").profile(),
                       budget_bytes=budget, context_tokens=163_840)
    assert any(f.startswith(fp8_note) for f in fp8.formulas)
    assert fp8.logged_tokens == budget // (61 * 788) // 64 * 64
    # vLLM too pages it by 64 (FlashMLA sparse's kernel block), whatever kernel block it is
    # told, and says so; a block size of a multiple of 64 stays (vLLM 0.22 and later: a block
    # of several kernel blocks), in half as many blocks at 128; any other does not start
    forced = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=163_840,
                          options=StrategyOptions(kernel_block_size=128))
    assert (forced.block_size, forced.num_blocks) == (64, 21_420)
    # (after the line saying block size 16 is read as none told, which a told 16 vLLM refuses)
    assert forced.formulas[0].startswith("block size 16 read as no --block-size told")
    assert forced.formulas[1] == (
        "kernel block size 64, not 128: DeepSeek-V3.2's sparse MLA runs on FlashMLA sparse, "
        "whose kernel block is 64")
    odd = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=163_840,
                       options=StrategyOptions(block_size=96))
    assert not odd.applies and odd.reason == (
        "vLLM refuses to start: its FlashMLA sparse backend (DeepSeek-V3.2's sparse MLA) pages "
        "by multiples of 64 tokens, and block size 96 is none (\"No valid attention backend "
        "found ... block_size not supported\"): give 64 (what it picks when not told) or 128")
    kept = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=163_840,
                        options=StrategyOptions(block_size=128))
    assert (kept.block_size, kept.num_blocks) == (128, budget // (2 * 5_012_736)) == (128, 10_710)
    assert not vllm.formulas[0].startswith("block size 64")  # the default comes to 64 anyway
    # neither page size is offered for it, as neither engine reads it
    assert "kernel_block_size" not in strategy_fields("vllm", profile)
    assert "sglang_page_size" not in strategy_fields("sglang", profile)
    # the indexer decides, not the name: MLA with an indexer typed by hand pages by 64 too
    by_hand = ModelSpec(name="indexed", layers=(MLALayer(512, 64, index_head_dim=128),) * 2)
    assert by_hand.profile().indexer_bytes_per_slot == 132
    assert run_strategy("sglang", by_hand.profile(), budget_bytes=2**30).block_size == 64
    # an fp8 cache: vLLM's fp8_ds_mla latent, 512 fp8 + 4 float32 scales + 64 bf16 rope = 656 B
    fp8 = spec.with_options(kv_dtype="fp8").profile()
    assert fp8.kv_bytes_per_slot == 512 + 4 * 4 + 64 * 2 + 132 == 788
    # DeepSeek-V3 (no index_topk) keeps the plain latent, 576 fp8 bytes
    v3 = spec_from_hf_config(PRESET_CONFIGS["DeepSeek-V3"]).with_options(kv_dtype="fp8")
    assert v3.profile().kv_bytes_per_slot == 576


@pytest.mark.parametrize(("layers", "shared"), [(35, 15), (30, 10)])  # E4B, E2B
def test_gemma3n_shared_layers_keep_no_cache(layers, shared):
    cfg = {"model_type": "gemma3n", "architectures": ["Gemma3nForConditionalGeneration"],
           "text_config": {"model_type": "gemma3n_text", "num_hidden_layers": layers,
                           "num_kv_shared_layers": shared, "num_attention_heads": 8,
                           "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048,
                           "sliding_window": 512, "max_position_embeddings": 32_768}}
    spec = spec_from_hf_config(cfg)
    # vLLM's gemma3n: layers from num_hidden_layers - num_kv_shared_layers on read layer 18's
    # (sliding) or 19's (full) KV and get no cache: 20 cache layers, four sliding then a full
    assert spec.pattern == "(4*sliding,full)*4" and spec.model_layers == layers
    assert f"its last {shared} layers read an earlier layer's KV" in spec.source
    assert (f"its pool keeps a layer for each of its {layers} layers (its layer ids count "
            f"every model layer), the {shared} shared ones storing nothing") in spec.notes
    profile = spec.profile()
    assert (profile.kv_bytes_per_slot, profile.sliding_window) == (2 * 512 * BF16, 512)
    # vLLM: 16 sliding layers in 4 groups of 4 beside the 4 full: 8 GiB // (16 x 2,048) // 4
    vllm = run_strategy("vllm", profile, budget_bytes=8 * 2**30, context_tokens=32_768)
    assert (vllm.block_bytes, vllm.num_blocks) == (16 * 2_048 * 4, 65_536)
    # SGLang (no hybrid SWA pool for Gemma 3n): one pool a layer of all of them, the shared
    # ones too, every token in each: 8 GiB // (layers x 2,048 B) tokens
    types = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention"  # transformers'
             for i in range(layers)]
    assert profile.kv_shared_layer_types == tuple(types[layers - shared:])
    sglang = run_strategy("sglang", profile, budget_bytes=8 * 2**30, context_tokens=32_768)
    tokens = 8 * 2**30 // (layers * 2_048)
    assert sglang.logged_tokens == tokens
    # the shared layers' pool layers are never written: idle at any request count
    assert dict(sglang.breakdown)["kv_history"] == tokens * (layers - shared) * 2_048
    assert dict(sglang.breakdown)["idle_pool"] == tokens * shared * 2_048
    shared_sliding = sum(t == "sliding_attention" for t in types[layers - shared:])
    assert (f"the {16 + shared_sliding} sliding layers ({shared_sliding} of them kv-shared) keep "
            "every token in the one pool") in sglang.formulas[0]
    # 0 shares none (as a config without the field); under it is no count of layers
    assert spec_from_hf_config({**cfg, "text_config": {**cfg["text_config"],
                                                       "num_kv_shared_layers": 0}}).pattern == (
        f"(4*sliding,full)*{layers // 5}")
    with pytest.raises(ValueError, match="^gemma3n config.json text_config.num_kv_shared_layers "
                                         "= -1 must not be negative: give 0 or more in the field$"):
        spec_from_hf_config({**cfg, "text_config": {**cfg["text_config"],
                                                    "num_kv_shared_layers": -1}})
    with pytest.raises(ValueError, match=rf"num_kv_shared_layers = {layers} leaves none of its "
                                         rf"{layers} layers a KV cache of its own"):
        spec_from_hf_config({**cfg, "text_config": {**cfg["text_config"],
                                                    "num_kv_shared_layers": layers}})


def test_minimax_layer_lists_as_vllm_reads_them():
    # transformers' minimax (the -hf conversions) names the layers in layer_types: the same
    hf = {k: v for k, v in MINIMAX_M1.items() if k != "attn_type_list"} | {
        "model_type": "minimax", "architectures": ["MiniMaxForCausalLM"],
        "layer_types": (["linear_attention"] * 7 + ["full_attention"]) * 10}
    assert spec_from_hf_config(hf).layers == spec_from_hf_config(MINIMAX_M1).layers
    # attn_type_list first, as vLLM's MiniMaxText01Model reads it, then decoder_attention_types
    first = spec_from_hf_config(hf | {"attn_type_list": [1, 0] * 40})
    assert first.pattern == "(full,lightning)*40"
    second = {k: v for k, v in MINIMAX_M1.items() if k != "attn_type_list"} | {
        "decoder_attention_types": [0, 1] * 40, "model_type": "minimax_text_01"}
    assert spec_from_hf_config(second).pattern == "(lightning,full)*40"
    for bad in ([2] * 80, [True] * 80, "01" * 40):
        with pytest.raises(ValueError, match=r"^config.json attn_type_list = .* must be a list "
                                             r"of 0 \(lightning attention\) and 1"):
            spec_from_hf_config(MINIMAX_M1 | {"attn_type_list": bad})
    # a list or an object in the list was a TypeError traceback (unhashable, looked up among
    # the types); refused as any other entry, in the file's words
    for odd in ([0], {"a": 1}):
        with pytest.raises(ValueError) as caught:
            spec_from_hf_config(MINIMAX_M1 | {"attn_type_list": [odd] + [0] * 79})
        shown = json.dumps([odd] + [0] * 79)[:60]  # hf_json.as_written: its first 60
        assert str(caught.value) == (
            f"config.json attn_type_list = {shown} ... must be a list of 0 (lightning attention) "
            "and 1 (full attention), one per layer, as vLLM's MiniMax reads it: fix the field")
    with pytest.raises(ValueError, match=r"^config.json attn_type_list has 40 entries but "
                                         r"num_hidden_layers = 80: give one per layer"):
        spec_from_hf_config(MINIMAX_M1 | {"attn_type_list": [0, 1] * 20})
    # MiniMax-M1's own class without a layer list: vLLM makes every layer full attention,
    # transformers' minimax alternates them; refused rather than guessed
    for without in ({k: v for k, v in MINIMAX_M1.items() if k != "attn_type_list"},
                    MINIMAX_M1 | {"attn_type_list": []}):  # an empty list is none, as in vLLM
        with pytest.raises(ValueError, match=r"^minimax_m1 config.json has no attn_type_list"):
            spec_from_hf_config(without)
    # the state's head_dim has no fallback in vLLM's shape calculator
    with pytest.raises(ValueError, match=r"^minimax_m1 config.json has no head_dim: vLLM's "
                                         r"MiniMax sizes lightning attention's state by it"):
        spec_from_hf_config({k: v for k, v in MINIMAX_M1.items() if k != "head_dim"})


def test_path_and_pasted_text(tmp_path):
    cfg = PRESET_CONFIGS["Llama-3.1-8B"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    from_path = spec_from_hf_config(path)
    from_str_path = spec_from_hf_config(str(path))
    from_text = spec_from_hf_config(json.dumps(cfg))
    from_upload = spec_from_hf_config(json.dumps(cfg).encode())
    assert from_path.layers == from_str_path.layers == from_text.layers == from_upload.layers
    assert str(path) in from_path.source
    with pytest.raises(ValueError, match="uploaded config.json is not valid JSON"):
        spec_from_hf_config(b"\x89PNG not json")
    # JSON saved in Latin-1: said, not read with a replacement character in its name
    latin = '{"model_type": "llama", "_name_or_path": "caf\u00e9"}'.encode("latin-1")
    assert latin.index(b"\xe9") == 45
    with pytest.raises(ValueError, match=r"^uploaded config.json is not UTF-8 \(byte 0xe9 at "
                       r"offset 45\): save it as UTF-8, as JSON files are$"):
        spec_from_hf_config(latin)
    assert spec_from_hf_config(latin.decode("latin-1").encode()).name == "caf\u00e9"
    # Notepad's "Unicode": UTF-16 with its byte-order mark
    with pytest.raises(ValueError, match=r"^uploaded config.json is UTF-16 \(its first bytes "
                       r"are a UTF-16 byte-order mark\): save it as UTF-8, as JSON files are$"):
        spec_from_hf_config('{"model_type": "llama"}'.encode("utf-16"))
    with pytest.raises(ValueError, match="config.json not found"):
        spec_from_hf_config("bad\x00path")


# ---- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("{bad json", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ({}, "no model_type"),
        ({"model_type": "bert"}, "^model_type 'bert' is not supported \\(FlatKV reads "
         f"{len(SUPPORTED_MODEL_TYPES)} model types, listed in full in the README under "
         "--hf-config\\); a model of full attention alone \\(no sliding window\\) whose "
         "config names num_key_value_heads \\(without it llama reads one KV head per query "
         "head\\) reads as llama: set \"model_type\": \"llama\" in a copy; or describe the "
         "model by hand instead"),
        # a near miss is named by the types nearest its spelling
        ({"model_type": "qwen4"}, "^model_type 'qwen4' is not supported \\(FlatKV reads \\d+ "
         "model types, listed in full in the README under --hf-config; nearest by spelling: "
         "qwen3, qwen2, qwen3_5\\); a model of full attention alone"),
        # ... and where those all keep state, no hint that it reads as llama
        ({"model_type": "mamba3"}, "^model_type 'mamba3' is not supported \\(FlatKV reads \\d+ "
         "model types, listed in full in the README under --hf-config; nearest by spelling: "
         "mamba, mamba2, jamba\\); describe the model by hand instead"),
        # a type FlatKV knows it cannot plan yet says why, not the list of supported types
        ({"model_type": "hy_v4"},
         "^model_type 'hy_v4' is not supported yet: HY-V4's indexed MLA layers keep the "
         "indexer's keys only where indexer_types says full, so its layers differ in bytes a "
         "token, which FlatKV does not model \\(one KV size for full layers and one for sliding "
         "ones, one cache a layer\\); no model by hand plans it exactly either, as it keeps "
         "those sizes too$"),
        # a text_config whose model_type is no string says so (it was a TypeError)
        ({"model_type": "foo", "text_config": {"model_type": ["gemma4_text"]}},
         "^config.json text_config.model_type = \\[\"gemma4_text\"\\] must be a string such as "
         "\"llama\": fix the field$"),
        # ... and so does a wrapper whose text_config is one
        # a type FlatKV plans by hand but does not read yet says so
        ({"model_type": "mistral_large4_text"},
         "^model_type 'mistral_large4_text' is not read yet: FlatKV plans its layers, but does "
         "not read Mistral Large 4's config.json: .*; describe the model by hand instead"),
        ({"model_type": "deepseek_v4"}, "^model_type 'deepseek_v4' is not supported yet: "
         "DeepSeek-V4's layers keep compressed caches"),
        # Qwen4-Exp: vLLM's page may be its PLE state's (8,192 channels x 9 rows x 2 B =
        # 147,456 B with its defaults, past the GDN state's 1,097,728 / 8 B at TP 8)
        ({"model_type": "qwen4_exp"}, "^model_type 'qwen4_exp' is not supported yet: "
         "Qwen4-Exp's vLLM sizes its pages by the larger of its GDN state and a short-conv "
         "state for PLE .* by hand, Qwen3.5's GDN and full layers of its sizes plan it exactly "
         "where its GDN state's page is the larger \\(to TP 4 with its defaults\\), QSA is "
         "off and ple_layer_ids is empty$"),
        ({"model_type": "glm5_next"}, "^model_type 'glm5_next' is not supported yet: "
         "GLM-5.3-Flash's MLA layers keep no rotary part \\(qk_rope_head_dim 0\\), the "
         "indexer's keys one row per index_kpool tokens"),
        # Mistral Large 4's config.json is not what vLLM reads (params.json)
        ({"model_type": "mistral_large4"}, "^model_type 'mistral_large4' is not read yet: "
         "FlatKV plans its layers, but does not read Mistral Large 4's config.json: vLLM 0.34 "
         "serves the model from Mistral's params.json"),
        # MiniMax-M3 as the Hub writes it (text_config minimax_m2, sparse_attention_config):
        # its sparse layers' indexer keys would be lost in minimax_m2's reading, so no redirect
        ({"model_type": "minimax_m3_vl", "text_config": {
            "model_type": "minimax_m2", "num_hidden_layers": 4,
            "sparse_attention_config": {"sparse_attention_freq": [0, 1, 1, 1]}}},
         "^model_type 'minimax_m3_vl' is not supported yet: MiniMax-M3's sparse layers "
         "\\(sparse_attention_config's sparse_attention_freq, transformers' minimax_m3_sparse "
         "layers\\) keep the indexer's keys"),
        ({"model_type": "minimax_m3_vl", "text_config": {
            "model_type": "minimax_m3_vl_text", "num_hidden_layers": 2,
            "layer_types": ["full_attention", "minimax_m3_sparse"]}},
         "^model_type 'minimax_m3_vl' is not supported yet: MiniMax-M3's sparse layers"),
        # ... where no layer is sparse, its language model is minimax_m2's, read exactly
        ({"model_type": "minimax_m3_vl", "text_config": {
            "model_type": "minimax_m3_vl_text", "num_hidden_layers": 2}},
         "^model_type 'minimax_m3_vl' without sparse layers is MiniMax-M2's dense model \\(GQA "
         "in every layer\\): load a copy of its text_config alone with \"model_type\": "
         "\"minimax_m2\""),
        ({"model_type": "minimax_m3_vl", "text_config": {
            "model_type": "minimax_m2", "num_hidden_layers": 4,
            "sparse_attention_config": {"sparse_attention_freq": [0, 0, 0, 0]}}},
         "^model_type 'minimax_m3_vl' is not read here, but its text_config \\(model_type "
         "'minimax_m2'\\) is: load a copy of the text_config alone"),
        # a multimodal wrapper of a language model FlatKV reads: load its text_config alone
        ({"model_type": "llava", "text_config": {"model_type": "llama", "num_hidden_layers": 32}},
         "^model_type 'llava' is not read here, but its text_config \\(model_type 'llama'\\) "
         "is: load a copy of the text_config alone \\(the language model keeps the KV cache "
         "the engines page\\), with the wrapper's dtype and quantization_config copied into "
         "it, and architectures \\[\"LlamaForCausalLM\"\\]$"),
        # ... and renamed llama, its class would leave text_config unread: say so
        ({"model_type": "llama", "text_config": {"num_hidden_layers": 32}},
         "^llama config.json has a text_config, which transformers' llama config does not "
         "read: move its fields to the top level \\(or remove it\\)$"),
        ({"model_type": "qwen3", "llm_config": {"num_hidden_layers": 40}},
         "^qwen3 config.json has an llm_config, which"),
        # a wrapper whose language model is not of the kind its reader takes (Mistral 4's MLA
        # under mistral3 would read as GQA heads)
        ({"model_type": "mistral3", "text_config": {"model_type": "mistral4"}},
         "^mistral3 config.json's text_config is model_type 'mistral4', which FlatKV does not "
         "read as mistral3's language model \\(it reads mistral, ministral, ministral3, "
         "mixtral, llama\\); describe the model by hand instead"),
        # ... nor a gemma3n_text, whose KV sharing its own type's rules read
        ({"model_type": "mistral3", "text_config": {"model_type": "gemma3n_text"}},
         "^mistral3 config.json's text_config is model_type 'gemma3n_text', which"),
        # indexer keys on some MLA layers only (vLLM's compute_skip_topk_layers): two sizes
        # (layer i keeps none where max(i - 2 + 1, 0) % 2 is not 0: 2, 4, 6 of 8)
        ({"model_type": "deepseek_v32", "num_hidden_layers": 8, "index_topk_freq": 2},
         "^deepseek_v32 config.json index_topk_freq = 2 \\(index_skip_topk_offset 2\\) leaves 3 "
         "of its 8 layers without the indexer's keys \\(layers 2, 4, 6\\): vLLM keeps them "
         "only on the others, so its MLA layers differ in bytes per token, which FlatKV does "
         "not model \\(one KV size for every attention layer\\); without the field, a copy "
         "plans every layer with the keys, an upper bound$"),
        ({"model_type": "glm_moe_dsa", "num_hidden_layers": 4, "index_topk_pattern": "FFFS"},
         "^glm_moe_dsa config.json index_topk_pattern \\(as transformers reads it: "
         "indexer_types\\) leaves 1 of its 4 layers without the indexer's keys \\(layer 3\\)"),
        ({"model_type": "deepseek_v32", "num_hidden_layers": 3,
          "indexer_types": ["full", "shared", "shared"]},
         "indexer_types leaves 2 of its 3 layers .* \\(layers 1, 2\\)"),
        # what vLLM itself refuses, or cannot read
        ({"model_type": "deepseek_v32", "num_hidden_layers": 8, "index_topk_pattern": 5},
         "^deepseek_v32 config.json index_topk_pattern = 5 must be a string or list of \"F\" / "
         "\"S\" a layer: fix or remove it$"),
        ({"model_type": "deepseek_v32", "num_hidden_layers": 8, "index_topk_freq": 0},
         "^deepseek_v32 config.json index_topk_freq = 0 must be a positive whole number \\(as "
         "vLLM checks it\\): fix or remove it$"),
        ({"model_type": "deepseek_v32", "num_hidden_layers": 3, "indexer_types": ["full"]},
         "^deepseek_v32 config.json indexer_types must hold \"full\" or \"shared\" for each of "
         "its 3 layers \\(as vLLM checks it\\), got \\[\"full\"\\]$"),
        # FlatKV's own model file offered as a config.json
        ({"format": "flatkv-model/1", "name": "x"}, "^this is a FlatKV model file \\(format "
         "'flatkv-model/1'\\), not a config.json: load it as a model file \\(the Model page's "
         "Model JSON, or --model-file\\)$"),
        ({"format": "flatkv-profile/1"}, "^this is a FlatKV raw profile \\(format "
         "'flatkv-profile/1'\\), not a config.json: load it under the Model page's Model JSON "
         "\\(on the command line, give its fields as --layers, --kv-bytes-per-slot and "
         "--state\\)$"),
        # the report `model --json` prints
        ({"name": "x", "kv_bytes_per_slot": 4, "spec": {"format": "flatkv-model/1"}},
         "^this is a model report \\(`model --json`\\), not a config.json: its \"spec\" entry "
         "is a model file \\(--model-file\\)$"),
        # a layer type transformers refuses: which entry (counted from 1, not Python's
        # layer_types[1]), and the spellings beside it (its own message lists every label it
        # knows, cut short)
        ({"model_type": "gpt_oss", "sliding_window": 128, "num_hidden_layers": 3,
          "layer_types": ["sliding_attention", "foo_attention", "full_attention"]},
         "^config.json layer_types, entry 2 of 3, is 'foo_attention', which transformers' "
         "gpt_oss "
         "config does not take \\(the others in it: sliding_attention, full_attention\\): "
         "write the layer's type as the checkpoint's config.json does$"),
        ({"model_type": "granitemoehybrid", "num_hidden_layers": 3,
          "layer_types": ["mamba", "attention", "attn"]},
         "^config.json layer_types, entry 3 of 3, is 'attn', .* \\(the others in it: mamba, "
         "attention\\)"),
        ({"model_type": "qwen3_5", "text_config": {"num_hidden_layers": 2,
                                                   "layer_types": ["linear_attention", "full"]}},
         "^config.json text_config.layer_types, entry 2 of 2, is 'full', which transformers' "
         "qwen3_5 "
         "config"),
        # vLLM picks a model by its architectures: one FlatKV reads names the type to add
        ({"architectures": ["Qwen3ForCausalLM"]}, "^config.json has no model_type: its "
         "architectures name Qwen3ForCausalLM, which is model_type \"qwen3\": add "
         "\"model_type\": \"qwen3\" to it$"),
        ({"architectures": ["XForCausalLM", "MiniMaxM1ForCausalLM"]}, "name "
         "MiniMaxM1ForCausalLM, which is model_type \"minimax_m1\""),
        # a class several types share names the one read here (transformers lists exaone first)
        ({"architectures": ["LlamaForCausalLM"]}, "name LlamaForCausalLM, which is model_type "
         "\"llama\": add"),
        ({"architectures": ["BertForMaskedLM"]}, "^config.json has no model_type: cannot tell "
         "how to read it; add the model's own \\(FlatKV reads \\d+ model types, listed in full "
         "in the README under --hf-config\\)$"),
        ({"model_type": ["llama"]}, "model_type = \\[\"llama\"\\] must be a string such as "
         "\"llama\": fix the field"),
        ({"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 5},
         "num_attention_heads = 32 is not a multiple of num_key_value_heads = 5"),
        ({"model_type": "nemotron_h", "hybrid_override_pattern": "M-X*"},
         "hybrid_override_pattern has 'X' at position 2: use M \\(Mamba\\)"),
        ({"model_type": "llama", "num_attention_heads": 0}, "num_attention_heads = 0 must be"),
        ({"model_type": "qwen3", "head_dim": 0}, "head_dim = 0 must be positive"),
        ({"model_type": "qwen3_5", "text_config": {"head_dim": 0}},
         "text_config.head_dim = 0 must be positive"),
        # what the reader checks past transformers names the nested field as config.json has it
        ({"model_type": "gemma3", "text_config": {"num_attention_heads": 8,
                                                  "num_key_value_heads": 3}},
         "^gemma3 config.json text_config.num_attention_heads = 8 is not a multiple of "
         "text_config.num_key_value_heads = 3: no engine loads such a model; fix the config$"),
        ({"model_type": "qwen3_next", "num_hidden_layers": 10**7}, "too large to be real"),
        # past 30 digits the count of digits, not the digits; past 4,300 Python will not read it
        ("{\"model_type\": \"llama\", \"num_hidden_layers\": " + "1" * 4000 + "}",
         "^config.json num_hidden_layers = a 4000-digit number is too large to be real: give "
         "2,048 or less in the field$"),
        ("{\"model_type\": \"llama\", \"num_hidden_layers\": " + "1" * 4400 + "}",
         "holds a number too long to read \\(Exceeds the limit \\(4300 digits\\) for integer "
         "string conversion\\): no model field is that large, fix the number"),
        # gemma3 reads its text_config: sizes at the top level would silently give way to
        # transformers' defaults (26 layers, head_dim 256, window 4,096)
        ({"model_type": "gemma3", "num_hidden_layers": 4, "num_attention_heads": 8,
          "num_key_value_heads": 4, "head_dim": 128, "sliding_window": 512},
         "config.json num_hidden_layers = 4, sliding_window = 512, head_dim = 128 at the top "
         "level is not read: gemma3 keeps its language model under text_config, where "
         "transformers' defaults stand in \\(num_hidden_layers 26, sliding_window 4,096, "
         "head_dim 256\\); move the fields into text_config"),
        ({"model_type": "qwen3_5", "text_config": {"head_dim": 128}, "num_hidden_layers": 8},
         "config.json num_hidden_layers = 8 at the top level is not read: qwen3_5 keeps its "
         "language model under text_config"),
        # nested past what transformers and our own readers recurse through
        ("{\"model_type\": \"llama\", \"x\": " + "[" * 600 + "1" + "]" * 600 + "}",
         "nests objects or arrays more than 32 deep: too deep to be a model file"),
        ("{\"model_type\": \"llama\", \"x\": " + "{\"a\": " * 40 + "1" + "}" * 40 + "}",
         "nests objects or arrays more than 32 deep"),
        ({"model_type": "nemotron_h", "hybrid_override_pattern": "M" * 20000},
         "hybrid_override_pattern has 20,000 entries, too many to be real: give 2,048 or fewer"),
        ({"model_type": "llama", "num_attention_heads": "many"},
         "config.json num_attention_heads = 'many' must be a whole number: give 1 or more, or "
         "remove the field"),
        ({"model_type": "llama", "text_config": {"num_hidden_layers": "thirty"}},
         "text_config.num_hidden_layers = 'thirty' must be a whole number"),
        # a period of 1.5 read as 3 (16 full layers of 48), NaN as none, an offset of -1 as none
        ({"model_type": "qwen3_next", "full_attention_interval": 1.5},
         "full_attention_interval = 1.5 must be a whole number"),
        ({"model_type": "qwen3_next", "full_attention_interval": float("nan")},
         "full_attention_interval = NaN must be a whole number"),
        ({"model_type": "jamba", "attn_layer_offset": -1}, "attn_layer_offset = -1 must not be "
         "negative"),
        ({"model_type": "bamba", "head_dim": float("inf")}, "head_dim = Infinity must be a whole"),
        ({"model_type": "zamba2", "n_mamba_heads": 0}, "n_mamba_heads = 0 must be positive"),
        ({"model_type": "zamba2", "n_mamba_heads": 7, "hidden_size": 2560, "mamba_expand": 2},
         "config.json n_mamba_heads = 7 does not divide mamba_expand x hidden_size = 5,120"),
        # vLLM sizes the ssm state by mamba_headdim, the conv state by expand x hidden: 8 heads
        # of 128 do not make 5,120
        ({"model_type": "zamba2", "hidden_size": 2560, "mamba_headdim": 128},
         "n_mamba_heads x mamba_headdim = 8 x 128 is not mamba_expand x hidden_size = 5,120: "
         "the mamba heads would not cover the inner dimension; check the model's values; with "
         "mamba_headdim 128, give n_mamba_heads 5,120 / 128 = 40 \\(a config without it gets "
         "transformers' default\\)$"),
        # fields transformers fails on without naming them: the one to blame is found, as
        # config.json writes it (null, not None), without Python's error ("TypeError: 'int'
        # object is not iterable", "property 'layer_types' of 'JambaConfig' object has no setter")
        ({"model_type": "llama", "layer_types": 5},
         "^config.json layer_types = 5 is not a value transformers' llama config takes: "
         "fix or remove the field$"),
        ({"model_type": "qwen3_next", "full_attention_interval": None},
         "config.json full_attention_interval = null is not a value transformers' qwen3_next"),
        ({"model_type": "nemotron_h", "hybrid_override_pattern": 1.5},
         "config.json hybrid_override_pattern = 1.5 is not a value"),
        ({"model_type": "qwen3_5", "text_config": {"quantization_config": "abc"}},
         "config.json text_config.quantization_config = 'abc' is not a value"),
        ({"model_type": "jamba", "layer_types": None},  # a property: transformers derives it
         "^config.json layer_types = null is not a value transformers' jamba config takes: "
         "fix or remove the field$"),
        # nemotron_h counts its layer_types and would drop the config's 52 layers for 3
        ({"model_type": "nemotron_h", "num_hidden_layers": 52,
          "layer_types": ["full_attention"] * 3},
         "config.json num_hidden_layers = 52 but its layer pattern \\(layer_types / "
         "hybrid_override_pattern\\) has 3 layers: make them agree"),
        ({"model_type": "qwen3_next", "layer_types": ["full_attention"]},
         "this qwen3_next config.json does not hold together: `num_hidden_layers` \\(48\\) must "
         "be equal to the number of `layer_types` \\(1\\)"),
        ({"model_type": "llama", "text_config": 5},
         "config.json text_config = 5 must be an object \\(the language model's config\\)"),
        ({"model_type": "gemma3", "text_config": {"vocab_size": "lots"}},
         "^config.json text_config.vocab_size = 'lots' is not a value transformers' gemma3 "
         "config takes: give a whole number, or remove the field$"),
        ({"model_type": "llama", "vocab_size": "lots"},  # a field FlatKV does not read
         "^config.json vocab_size = 'lots' is not a value transformers' llama config takes: "
         "give a whole number, or remove the field$"),
        # transformers' strict check in the config's words, not Python's ("Field
        # 'layers_block_type' with value 7 doesn't match any type in (list[str], <class
        # 'NoneType'>)"; "expected int, got list (value: [['lots']])"), as the fuzzer found them
        ({"model_type": "nemotron_h", "layers_block_type": 7},
         "^config.json layers_block_type = 7 is not a value transformers' nemotron_h config "
         "takes: give a list of strings or null, or remove the field$"),
        ({"model_type": "llama", "vocab_size": [["lots"]]},
         "^config.json vocab_size = \\[\\[\"lots\"\\]\\] is not a value transformers' llama "
         "config takes: give a whole number, or remove the field$"),
        ({"model_type": "llama", "max_position_embeddings": 4096.0},
         "^config.json max_position_embeddings = 4096.0 is not a value transformers' llama "
         "config takes: give a whole number, or remove the field$"),
        # JSON's true, null and NaN, not Python's True, None and nan
        ({"model_type": "llama", "num_hidden_layers": True},
         "^config.json num_hidden_layers = true must be a whole number: give 1 or more, or "
         "remove the field$"),
        ({"model_type": float("nan")},
         "^config.json model_type = NaN must be a string such as \"llama\": fix the field$"),
        ({"model_type": "olmoe", "layer_types": ["full_attention", "M", None, "M"]},
         "^config.json layer_types, entry 2 of 4, is 'M', which transformers' olmoe config does "
         "not take \\(the others in it: full_attention, null\\)"),
        # nemotron_h's own check of its layer list said Python's set of the types it refused
        # ("contains invalid types: {None}. Must be one of: {'mlp', ...}"): the entry instead,
        # in the list the config gives (layer_types, which it reads as layers_block_type)
        ({"model_type": "nemotron_h", "layers_block_type": ["mamba", "foo"]},
         "^config.json layers_block_type, entry 2 of 2, is 'foo', which transformers' "
         "nemotron_h config does not take \\(the others in it: mamba\\)"),
        ({"model_type": "nemotron_h", "layer_types": ["full_attention", "mamba", None]},
         "^config.json layer_types, entry 3 of 3, is null, which transformers' nemotron_h "
         "config does not take \\(the others in it: full_attention, mamba\\)"),
        # no one field to blame: no KeyError of a 19-digit number, no "object has no setter"
        ({"model_type": "nemotron_h", "hybrid_override_pattern": [2**63], "layer_types": [1, 2]},
         "^transformers could not read this nemotron_h config.json, and no one field of it is to "
         "blame: compare its fields with the checkpoint's config.json$"),
        ({"model_type": "jamba", "attn_layer_period": 4, "layer_types": ["x", "M"],
          "layers_block_type": ["mamba"] * 8},
         "^transformers could not read this jamba config.json: its class derives layer_types "
         "from other fields; remove layer_types and check the others against the checkpoint's "
         "config.json$"),
        # a dtype by its field and its value, once, then the dtypes known
        ({"model_type": "llama", "torch_dtype": "float64"},
         "^config.json torch_dtype = 'float64' is an unknown dtype: use one of float32, "),
        ({"model_type": "gemma3", "text_config": {"torch_dtype": "float128"}},
         "^config.json text_config.torch_dtype = 'float128' is an unknown dtype: use one of "),
        # the ssm state's dtype field vLLM reads, nested where the file nests it
        ({"model_type": "nemotron_h", "mamba_ssm_cache_dtype": "fp4"},
         "^config.json mamba_ssm_cache_dtype = 'fp4' is an unknown dtype: use one of "),
        ({"model_type": "qwen3_5", "text_config": {"mamba_ssm_dtype": "fp4"}},
         "^config.json text_config.mamba_ssm_dtype = 'fp4' is an unknown dtype: use one of "),
        ({"model_type": "nemotron_h", "layers_block_type": ["mlp", "moe"]}, "no cache layers"),
        ({"model_type": "gpt_oss", "sliding_window": None}, "sliding_window is not set"),
        ({"model_type": "falcon_h1", "mamba_d_state": None}, "has no mamba_d_state"),
        ({"model_type": "nemotron_h", "chunk_size": 0}, "config.json chunk_size = 0 must be "
         "positive"),
        ({"model_type": "nemotron_h", "chunk_size": 1_048_577}, r"config.json chunk_size = "
         r"1048577 is too large to be real: give 1,048,576 or less, or remove the field"),
        ({"model_type": "falcon_h1", "mamba_chunk_size": 10**30}, "config.json "
         "mamba_chunk_size = a 31-digit number is too large"),
        ({"model_type": "qwen2", "max_window_layers": -1}, "config.json max_window_layers = -1 "
         "must not be negative"),
    ],
)
def test_bad_configs_give_one_clear_error(config, message, capfd):
    with pytest.raises(ValueError, match=message):
        spec_from_hf_config(config).profile()
    assert capfd.readouterr().err == ""  # transformers' own dump of the config stays quiet


LONG = "x" * 1000
LONG_SHOWN = repr("x" * 80) + "... (1,000 characters)"  # units.quoted_value of LONG
BY_HAND = ("describe the model by hand instead (the Model page's 'Edit by hand', or `python -m "
           "flatkv model --preset NAME --export` edited and read back with --model-file)")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        # each quoted a 1,000-character value whole (lines of 1.2 to 1.5 KB); its start now
        ({"model_type": "gemma3", "text_config": {"model_type": LONG}},
         f"gemma3 config.json's text_config is model_type {LONG_SHOWN}, which FlatKV does not "
         f"read as gemma3's language model (it reads gemma3_text); {BY_HAND}"),
        ({"model_type": "qwen3_next", "mtp_layer_types": [LONG]},
         f"config.json mtp_layer_types gives an MTP layer the type {LONG_SHOWN}: an MTP layer "
         "is one of full_attention, sliding_attention, chunked_attention; fix it"),
        ({"model_type": "llama", "_name_or_path": [LONG]},
         # the list's one item by its start, inside the list's brackets
         "config.json's _name_or_path is ['" + "x" * 40 + "'... (1,000 characters)], not text: "
         "give it the model's name or path in printable characters, or drop it (the model is "
         "then named by its architectures, else model_type)"),
        # the dtype named once, by its start (it was twice: 448 characters, 348 now)
        ({"model_type": "llama", "torch_dtype": LONG},
         f"config.json torch_dtype = {LONG_SHOWN} is an unknown dtype: use one of "
         "float32, bfloat16, float16, float8_e4m3fn, float8_e5m2, int8 (aliases: bf16, e4m3, "
         "e5m2, f16, f32, float, float8, float8_e4m3, fp16, fp32, fp8, fp8_e4m3, fp8_e4m3fn, "
         "fp8_e5m2, half, i8)"),
        # short, as before
        ({"model_type": "qwen3_next", "mtp_layer_types": ["mtp"]},
         "config.json mtp_layer_types gives an MTP layer the type 'mtp': an MTP layer is one of "
         "full_attention, sliding_attention, chunked_attention; fix it"),
    ],
)
def test_a_long_config_value_is_quoted_by_its_start(config, message):
    with pytest.raises(ValueError) as caught:
        spec_from_hf_config(config).profile()
    assert str(caught.value) == message


def test_the_field_to_blame_is_found_in_a_few_builds_among_many_fields():
    # a config padded with 1,000 fields of its own: the culprit is still named, by halving
    padded = {"model_type": "llama", **{f"extra_{i}": i for i in range(1_000)},
              "layer_types": 5}
    with pytest.raises(ValueError, match="config.json layer_types = 5 is not a value"):
        spec_from_hf_config(padded)
    builds = []

    def builds_without(drop):
        builds.append(drop)
        return "k637" in drop

    keys = [f"k{i}" for i in range(1_000)]
    assert hf_resolve._one_to_blame(keys, builds_without) == "k637"
    assert len(builds) <= 2 * 10 + 1  # 2 log2(1,000) and one check, not 1,000
    # two fields that must both go: no single one is to blame
    assert hf_resolve._one_to_blame(keys, lambda drop: {"k1", "k900"} <= drop) is None


def test_tp_not_dividing_heads_from_a_config():
    # a config.json's refusal names the key that gave the figure, as the file writes it: 8 KV
    # heads and 32 query heads split over TP 1, 2, 4, 8 (dividing 8), 16 and 32 (multiples of
    # 8 dividing 32)
    spec = spec_from_hf_config(PRESET_CONFIGS["Llama-3.1-8B"])
    assert refused_at(spec, 3) == (
        "config.json num_key_value_heads = 8, the full-attention layers' KV heads, is not "
        "divisible by TP 3: choose TP 1, 2, 4, 8, 16 or 32, the TPs up to 64 that split the "
        "model")
    # 8 KV heads are replicated over 24 ranks, but 32 query heads do not split over them: vLLM
    # refuses ("Total number of attention heads (32) must be divisible by tensor parallel size")
    assert spec.attention_heads == 32 and not spec.splits_over(24)
    with pytest.raises(ValueError, match=r"^config.json num_attention_heads = 32 is not "
                       r"divisible by TP 24 \(engines split the query heads over the ranks\)"):
        spec.with_options(tp=24)
    # Falcon-H1's 2 KV heads over TP 3 (neither divides the other: 1, 2, 4, 6, 12 split its
    # 2 KV, 24 Mamba2 and 12 query heads); a size transformers filled in is said to be its
    # default: qwen3_next's 16 GDN key heads (TPs dividing 16; its 2 KV heads and 16 query
    # heads take them all); Qwen3.5's, in its text_config, by their place there
    falcon_3 = spec_from_hf_config(PRESET_CONFIGS["Falcon-H1-7B"])
    assert refused_at(falcon_3, 3) == (
        "config.json num_key_value_heads = 2, the full-attention layers' KV heads, cannot be "
        "replicated evenly over TP 3 (fewer KV heads than ranks are copied, each onto the same "
        "number of ranks): choose TP 1, 2, 4, 6 or 12, the TPs up to 64 that split the model")
    assert refused_at(spec_from_hf_config({"model_type": "qwen3_next"}), 3) == (
        "linear_num_key_heads = 16 (transformers' default: the config.json gives none), the "
        "linear-attention (Gated DeltaNet) layers' key heads, is not divisible by TP 3: choose "
        "TP 1, 2, 4, 8 or 16, the TPs up to 64 that split the model")
    with pytest.raises(ValueError, match=r"^config.json text_config.linear_num_key_heads = 16, "):
        spec_from_hf_config(PRESET_CONFIGS["Qwen3.5-27B"]).with_options(tp=3)
    # Jamba's d_inner is no one key: mamba_expand 2 x hidden_size 4,096 = 8,192 = 2^13, split
    # by the powers of 2 its 8 KV heads and 32 query heads take (1 to 32)
    assert refused_at(spec_from_hf_config(PRESET_CONFIGS["Jamba-1.5-Mini"]), 3) == (
        "config.json mamba_expand x hidden_size = 8,192, the Mamba layers' inner channels "
        "(d_inner), is not divisible by TP 3: choose TP 1, 2, 4, 8, 16 or 32, the TPs up to 64 "
        "that split the model")
    # Nemotron-H's 8 Mamba2 groups (its config's n_groups) over TP 16: engines copy only one
    # group; its 128 heads, 8 KV heads and 32 query heads take the TPs dividing 8
    assert refused_at(spec_from_hf_config(PRESET_CONFIGS["Nemotron-H-8B"]), 16) == (
        "config.json n_groups = 8, the Mamba2 layers' groups, is not divisible by TP 16 "
        "(engines replicate only a single group across ranks: vLLM's MambaMixer2 asserts "
        "\"num_groups must equal 1\"): choose TP 1, 2, 4 or 8, the TPs up to 64 that split "
        "the model")
    # Qwen2.5-7B: 28 query heads, 4 KV heads; TP 8 replicates the KV heads but splits 28 unevenly
    qwen25 = spec_from_hf_config({"model_type": "qwen2", "num_hidden_layers": 28,
                                  "hidden_size": 3584, "num_attention_heads": 28,
                                  "num_key_value_heads": 4})
    with pytest.raises(ValueError, match=r"^config.json num_attention_heads = 28 is not "
                       r"divisible by TP 8 .*: choose TP 1, 2, 4 or 28, the TPs up to 64"):
        qwen25.with_options(tp=8)
    # Falcon-H1-7B: 12 query heads; the Mamba2 heads (24) and its one group would take TP 8
    falcon = spec_from_hf_config(PRESET_CONFIGS["Falcon-H1-7B"])
    assert [t for t in range(1, 13) if falcon.splits_over(t)] == [1, 2, 4, 6, 12]
    # MLA keeps one latent for every head, but its query heads split all the same
    deepseek = spec_from_hf_config(PRESET_CONFIGS["DeepSeek-V3"])
    assert deepseek.attention_heads == 128 and not deepseek.splits_over(3)
    assert deepseek.with_options(tp=8).profile().kv_bytes_per_slot == (512 + 64) * 2


def test_missing_file():
    with pytest.raises(ValueError, match="config.json not found"):
        spec_from_hf_config("/no/such/config.json")


# ---- fetching by model id -------------------------------------------------------------------


def test_fetch_offline_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match="offline .*--hf-config"):
        fetch_hf_config("Qwen/Qwen3-Next-80B-A3B-Instruct")


def test_fetch_downloads_only_config_json(monkeypatch, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PRESET_CONFIGS["Qwen3-Next-80B-A3B"]))
    calls = []

    def fake_download(**kwargs):
        calls.append(kwargs)
        return str(path)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    monkeypatch.setattr(hf_hub, "hub_reachable", lambda: True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    spec = spec_from_model_id("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert [c["filename"] for c in calls] == ["config.json"]
    assert calls[0]["repo_id"] == "Qwen/Qwen3-Next-80B-A3B-Instruct"
    # named by the id's last part, as a config's _name_or_path is; the owner in the source
    assert spec.name == "Qwen3-Next-80B-A3B-Instruct"
    assert spec.source.startswith("https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert spec.layers == load_preset("Qwen3-Next-80B-A3B").layers


def test_fetch_unreachable_is_one_plain_error(monkeypatch):
    def refuse(**kwargs):
        raise OSError("connection refused")

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)
    monkeypatch.setattr(hf_hub, "hub_reachable", lambda: True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(ValueError, match=r"of a/b: the Hub refused or failed \(OSError\)"):
        fetch_hf_config("a/b")
    monkeypatch.setattr(hf_hub, "hub_reachable", lambda: False)
    with pytest.raises(ValueError, match="cannot be reached from here"):
        fetch_hf_config("a/b")
    with pytest.raises(ValueError, match="not of the form owner/name"):
        fetch_hf_config("not a model id")
    assert hf_hub.is_model_id("Qwen/Qwen3-Next-80B-A3B-Instruct")


def test_pasted_config_text_is_json_never_a_path_or_an_id():
    from flatkv.hf_hub import config_from_pasted_text

    assert config_from_pasted_text(' {"model_type": "llama"} ') == {"model_type": "llama"}
    for text, needle in (("", "Nothing to load: upload a config.json or paste one."),
                         ("Qwen/Qwen3-Next-80B-A3B-Instruct", "it looks like a model id or a path"),
                         ("/tmp/config.json", "it looks like a model id or a path"),
                         ("config.json", "it looks like a model id or a path"),
                         ("{not json", "pasted config.json")):
        with pytest.raises(ValueError, match=re.escape(needle)):
            config_from_pasted_text(text)


GEMMA4 = {"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
          "dtype": "bfloat16",
          "text_config": {"model_type": "gemma4_text", "num_hidden_layers": 60,
                          "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 256,
                          "global_head_dim": 512, "num_global_key_value_heads": 4,
                          "attention_k_eq_v": True, "sliding_window": 1024,
                          "hidden_size": 5376, "max_position_embeddings": 262144,
                          "dtype": "bfloat16"}}


def _gemma4(**text):
    cfg = json.loads(json.dumps(GEMMA4))
    cfg["text_config"].update(text)
    return spec_from_hf_config(cfg)


def test_gemma4_full_layers_keep_their_own_heads():
    # transformers' default pattern for 60 layers: 5 sliding, then a full one; sliding layers
    # keep 16 KV heads x (256 + 256) x 2 B, full ones (per_layer_config: global_head_dim,
    # num_global_key_value_heads with attention_k_eq_v) 4 x (512 + 512) x 2 B
    spec = _gemma4()
    assert [(k.name, k.count, k.kv_bytes_per_token) for k in spec.summary()] == [
        ("sliding", 50, 16 * 512 * BF16), ("full", 10, 4 * 1024 * BF16)]
    profile = spec.profile()
    assert (profile.kv_bytes_per_slot, profile.sliding_kv_bytes_per_slot) == (8_192, 16_384)
    # K and V of each (SGLang logs its sliding pool's from the sliding layers' own): 4 x 512 x
    # 2 B and 16 x 256 x 2 B
    assert (profile.kv_tensor_bytes, profile.sliding_kv_tensor_bytes) == ((4_096, 4_096),
                                                                          (8_192, 8_192))
    assert (profile.sliding_window, spec.max_model_len, spec.attention_heads) == (
        1024, 262_144, 32)
    assert spec.architectures == ("Gemma4ForConditionalGeneration",)  # on SGLang's SWA list
    assert ("Its full-attention layers keep 4 KV heads x 512 (global_head_dim and "
            "num_global_key_value_heads), its sliding ones the config's head_dim and "
            "num_key_value_heads. attention_k_eq_v makes V a copy of K, but vLLM and SGLang "
            "store both, so both count.") in spec.notes
    # without attention_k_eq_v the full layers keep num_key_value_heads, at 512
    assert _gemma4(attention_k_eq_v=False).summary()[1].kv_bytes_per_token == 16 * 1024 * BF16
    # with it but no num_global_key_value_heads, transformers keeps num_key_value_heads too,
    # and the note names that field; a global_head_dim not given is its default, 512, named
    fallback_cfg = json.loads(json.dumps(GEMMA4))
    for field in ("num_global_key_value_heads", "global_head_dim"):
        del fallback_cfg["text_config"][field]
    fallback = spec_from_hf_config(fallback_cfg)
    assert fallback.summary()[1].kv_bytes_per_token == 16 * 1024 * BF16
    assert ("Its full-attention layers keep 16 KV heads x 512 (global_head_dim and "
            "num_key_value_heads)") in fallback.notes
    assert "Not in the config.json, so transformers' defaults: global_head_dim 512" in (
        fallback.notes)
    assert "defaults" not in spec.notes  # both given
    # at TP 4 a rank keeps 4 of the 16 sliding heads and 1 of the 4 full ones
    at4 = spec.with_options(tp=4).profile()
    assert (at4.kv_bytes_per_slot, at4.sliding_kv_bytes_per_slot) == (2_048, 4_096)


def test_gemma4_kv_shared_layers_keep_no_cache_and_bad_heads_are_named():
    # the last 20 of 60 layers read an earlier layer's KV: 40 cache layers, 34 + 6
    shared = _gemma4(num_kv_shared_layers=20)
    assert (len(shared.layers), shared.model_layers) == (40, 60)
    assert [(k.name, k.count) for k in shared.summary()] == [("sliding", 34), ("full", 6)]
    assert "SGLang's Gemma 4 shares the KV too" in shared.notes
    # SGLang's pool keeps a layer for all 60: 16 sliding and 4 full shared ones beside the 34
    # and 6 that keep a cache, so its cell is the unshared model's, 8,192 x 10 + 0.8 x 16,384
    # x 50 = 737,280 B: 58,254 full and 46,603 sliding tokens in 40 GiB
    # (layers 40 to 59 of five sliding then a full one: 40 slides, 41 is full, ...)
    assert shared.profile().kv_shared_layer_types == ("sliding_attention", "full_attention") + (
        ("sliding_attention",) * 5 + ("full_attention",)) * 3
    sglang = run_strategy("sglang", shared.profile(), budget_bytes=40 * 2**30,
                          context_tokens=131_072)
    assert (sglang.logged_tokens, sglang.extras["swa_tokens"]) == (58_254, 46_603)
    # the shared layers' pool bytes (4 full and 16 sliding layers' tokens) are idle whatever
    # runs, and where requests run, the sliding pool's tokens past them are too, in the 34
    # sliding layers that store: at 16,384 tokens the full pool binds (3.56 requests), and 3
    # hold min(1,023 + 8,192, L) = 9,215 sliding tokens each
    kv_shared = 58_254 * 4 * 8_192 + 46_603 * 16 * 16_384
    assert sglang.extras["kv_shared_pool_bytes"] == kv_shared == 14_125_563_904
    assert dict(sglang.breakdown)["idle_pool"] == kv_shared  # none of 131,072 tokens runs
    short = run_strategy("sglang", shared.profile(), budget_bytes=40 * 2**30,
                         context_tokens=16_384)
    idle_swa = (46_603 - 3 * 9_215) * 34 * 16_384
    assert int(short.concurrency) == 3 and short.extras["binding_limit"] == "kv tokens"
    assert dict(short.breakdown)["idle_pool"] == kv_shared + idle_swa
    assert dict(short.breakdown)["kv_history"] == (
        58_254 * 6 * 8_192 + 46_603 * 34 * 16_384 - idle_swa)
    # 55 shared layers would leave no full layer of its own for the shared full ones to read
    with pytest.raises(ValueError, match="num_kv_shared_layers = 55 leaves no full_attention "
                       "layer a cache of its own for the shared ones of that type to read"):
        _gemma4(num_kv_shared_layers=55)
    # the fields transformers pops (so no later check sees them) are named as written
    with pytest.raises(ValueError, match="^config.json text_config.global_head_dim = 0 must be "
                       "positive: give 1 or more, or remove the field$"):
        _gemma4(global_head_dim=0)
    with pytest.raises(ValueError, match="^config.json text_config.num_global_key_value_heads = "
                       "'2' must be a whole number: give 1 or more, or remove the field$"):
        _gemma4(num_global_key_value_heads="2")
    # (no Python None in the words, which a fuzzer of config.json texts flagged)
    with pytest.raises(ValueError, match="^config.json text_config.global_head_dim is null, "
                       "which transformers passes on as the size itself \\(no size\\) instead "
                       "of taking its default: give a whole number or remove the field$"):
        _gemma4(global_head_dim=None)
    with pytest.raises(ValueError, match="text_config.num_attention_heads = 32 is not a multiple "
                       "of text_config.num_global_key_value_heads = 3"):
        _gemma4(num_global_key_value_heads=3)
    # a gemma4_text config alone, with its layer_types
    text = {**GEMMA4["text_config"], "num_hidden_layers": 4,
            "layer_types": ["sliding_attention"] * 3 + ["full_attention"]}
    alone = spec_from_hf_config(text)
    assert [(k.name, k.count, k.kv_bytes_per_token) for k in alone.summary()] == [
        ("sliding", 3, 16_384), ("full", 1, 8_192)]


def test_gemma4_unified_reads_as_gemma4_under_its_own_class():
    # Gemma 4 Unified's language model is Gemma 4's (vLLM runs its text_config as
    # Gemma4ForCausalLM): the same bytes, and SGLang's hybrid SWA pool by its class
    cfg = json.loads(json.dumps(GEMMA4))
    cfg["model_type"], cfg["text_config"]["model_type"] = "gemma4_unified", "gemma4_unified_text"
    cfg["architectures"] = ["Gemma4UnifiedForConditionalGeneration"]
    spec = spec_from_hf_config(cfg)
    assert [(k.name, k.count, k.kv_bytes_per_token) for k in spec.summary()] == [
        ("sliding", 50, 16 * 512 * BF16), ("full", 10, 4 * 1024 * BF16)]
    sglang = run_strategy("sglang", spec.profile(), budget_bytes=40 * 2**30,
                          context_tokens=131_072)
    # a full-pool token: 8,192 x 10 + 0.8 x 16,384 x 50 = 737,280 B, as for Gemma 4
    assert (sglang.logged_tokens, sglang.extras["swa_tokens"]) == (58_254, 46_603)
    # its last num_kv_shared_layers layers keep no cache, as Gemma 4's
    cfg["text_config"]["num_kv_shared_layers"] = 20
    assert len(spec_from_hf_config(cfg).layers) == 40
    # no architectures: transformers' class for the type, the one SGLang lists
    del cfg["architectures"]
    assert spec_from_hf_config(cfg).architectures == ("Gemma4UnifiedForConditionalGeneration",)


MIMO_V2 = {"model_type": "mimo_v2_flash", "architectures": ["MiMoV2FlashForCausalLM"],
           "num_hidden_layers": 48, "hybrid_layer_pattern": [0, 1, 1, 1, 1, 1] * 8,
           "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192,
           "v_head_dim": 128, "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8,
           "swa_head_dim": 192, "swa_v_head_dim": 128, "sliding_window_size": 128,
           "hidden_size": 4096, "max_position_embeddings": 262144, "torch_dtype": "bfloat16"}


def test_mimo_v2_flash_reads_its_sliding_layers_own_fields_as_vllm_does():
    # hybrid_layer_pattern (1 = sliding) decides the layers, not transformers' layer_types;
    # full layers keep 4 KV heads x (192 + 128), sliding ones 8 x (192 + 128), in bf16, over
    # sliding_window_size tokens (transformers' sliding_window is one more)
    spec = spec_from_hf_config(MIMO_V2)
    assert [(k.name, k.count, k.kv_bytes_per_token) for k in spec.summary()] == [
        ("full", 8, 4 * 320 * BF16), ("sliding", 40, 8 * 320 * BF16)]
    profile = spec.profile()
    assert (profile.kv_bytes_per_slot, profile.sliding_kv_bytes_per_slot) == (2_560, 5_120)
    assert profile.kv_tensor_bytes == (4 * 192 * BF16, 4 * 128 * BF16)  # K and V differ
    assert profile.sliding_window == 128 and spec.notes == ""
    from flatkv.strategies import run_strategy
    # vLLM at P 16: sliding pages of 81,920 B, full ones half that, so full layers page by 32
    # tokens; groups of 8: 40 GiB // 81,920 // 8 = 65,536 blocks; a request of 131,072 tokens
    # holds 5 x (ceil((127 + 8,192) / 16) + 1) sliding pages and 131,072 / 32 full ones
    vllm = run_strategy("vllm", profile, budget_bytes=40 * 2**30, context_tokens=131_072)
    assert vllm.num_blocks == 65_536 and vllm.concurrency == Fraction(65_536, 5 * 521 + 4_096)
    # SGLang: a full-pool token costs 2,560 x 8 + 0.8 x 5,120 x 40 = 184,320 B
    sglang = run_strategy("sglang", profile, budget_bytes=40 * 2**30, context_tokens=131_072)
    assert (sglang.logged_tokens, sglang.extras["swa_tokens"]) == (
        40 * 2**30 // 184_320, 233_016 * 4 // 5) == (233_016, 186_412)
    # sliding layers of their own query heads: a tp must divide both counts
    other = spec_from_hf_config({**MIMO_V2, "swa_num_attention_heads": 96})
    assert other.attention_heads == math.gcd(64, 96) == 32
    assert other.notes.startswith("Its sliding layers have 96 query heads and its full layers "
                                  "64: a tp must divide both")
    with pytest.raises(ValueError, match=r"hybrid_layer_pattern = \[0, 1\]: vLLM and SGLang "
                       "read which layers slide from it"):
        spec_from_hf_config({**MIMO_V2, "hybrid_layer_pattern": [0, 1]})


def test_new_types_alone_or_wrapped_name_the_class_their_engines_serve():
    # a wrapper around Ling-3.0-Flash is pointed at BailingMoeV3ForCausalLM, not transformers'
    # BailingHybridForCausalLM, which neither engine registers
    with pytest.raises(ValueError, match=r"and architectures \["
                                         r"\"BailingMoeV3ForCausalLM\"\]"):
        spec_from_hf_config({"model_type": "foo", "text_config": dict(BAILING)})
    # Gemma 4 Unified's language model alone: Gemma4ForCausalLM, on SGLang's hybrid SWA list
    text = {**GEMMA4["text_config"], "model_type": "gemma4_unified_text"}
    alone = spec_from_hf_config(text)
    assert alone.architectures == ("Gemma4ForCausalLM",)
    sglang = run_strategy("sglang", alone.profile(), budget_bytes=40 * 2**30,
                          context_tokens=131_072)
    assert (sglang.logged_tokens, sglang.extras["swa_tokens"]) == (58_254, 46_603)


def test_an_fp8_checkpoint_keeps_its_states_in_bfloat16():
    # no engine keeps a state in 1-byte elements: an fp8 checkpoint's KV is fp8, its GDN
    # states bfloat16 (conv 8,192 x 3 x 2 B = 49,152 B; ssm 32 x 128 x 128 x 2 B), said so
    fp8 = spec_from_hf_config({**PRESET_CONFIGS["Qwen3-Next-80B-A3B"],
                               "torch_dtype": "float8_e4m3fn"})
    assert (fp8.kv_dtype, fp8.conv_dtype, fp8.ssm_dtype) == ("float8_e4m3fn", "bfloat16",
                                                             "bfloat16")
    assert fp8.profile().state_const_bytes == {"conv": 49_152, "ssm": 1_048_576}
    assert fp8.profile().kv_bytes_per_slot == 2 * 256 * 2  # 2 KV heads x 256, K and V, 1 B
    assert ("states kept in bfloat16 beside the float8_e4m3fn checkpoint: no engine keeps a "
            "state in 1-byte elements") in fp8.source
    # an attention-only fp8 checkpoint reads as before: no state, nothing to say
    llama = spec_from_hf_config({**PRESET_CONFIGS["Llama-3.1-8B"],
                                 "torch_dtype": "float8_e4m3fn"})
    assert llama.profile().kv_bytes_per_slot == 8 * 128 * 2 and "states kept" not in llama.source


def test_transformers_warnings_stay_off_the_clis_one_line(tmp_path, capsys):
    # Kimi-Linear's checkpoint writes "rope_scaling": null, which transformers 5 warns is
    # deprecated (a FutureWarning of two lines): the refusal of TP 3 is still one line
    import warnings

    from flatkv.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps({**KIMI_LINEAR, "rope_scaling": None}))
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")  # as a plain `python -m flatkv` shows them once
        assert main(["model", "--hf-config", str(path), "--tp", "3"]) == 2
    assert [str(w.message) for w in shown] == []
    assert capsys.readouterr().err == (
        "python -m flatkv: error: config.json linear_attn_config.num_heads = 32, the "
        "linear-attention (Kimi Delta Attention) layers' heads, is not divisible by TP 3: "
        "choose TP 1, 2, 4, 8, 16 or 32, the TPs up to 64 that split the model\n")


def test_kimi_linear_whose_layer_types_disagree_with_its_kda_layers_is_refused():
    # the engines read linear_attn_config's kda_layers (1-based); transformers' class follows a
    # layer_types given beside it, as a config re-saved by transformers 5 carries: the class
    # default's (6 full layers, 21 KDA) against the checkpoint's 20 KDA layers
    import transformers

    default_types = transformers.KimiLinearConfig().layer_types
    assert default_types.count("linear_attention") == 21
    with pytest.raises(ValueError, match=re.escape(
            "kimi_linear config.json layer_types makes layers [1, 2, 3, 4, 6, 7, 8, 10, 11,")
            ) as caught:
        spec_from_hf_config({**KIMI_LINEAR, "layer_types": default_types})
    assert str(caught.value).endswith(
        "but linear_attn_config's kda_layers is [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, "
        "18, 19, 21, 22, 23, 25, 26]: vLLM and SGLang read kda_layers, transformers layer_types; "
        "drop layer_types (the checkpoints give none) or make them agree")
    # layer_types that agree read as the checkpoint does
    agreeing = ["linear_attention" if i + 1 in KIMI_LINEAR["linear_attn_config"]["kda_layers"]
                else "full_attention" for i in range(27)]
    assert (spec_from_hf_config({**KIMI_LINEAR, "layer_types": agreeing}).profile()
            == spec_from_hf_config(KIMI_LINEAR).profile())


def test_two_layer_pattern_fields_that_disagree_are_refused_and_agreeing_ones_read():
    # nemotron_h's class keeps layer_types over hybrid_override_pattern, granitemoehybrid's
    # layers_block_type over layer_types: a config giving both that disagree was planned by
    # the one kept (52 Mamba2 layers; 40 full ones) without a word
    nemotron, granite = PRESET_CONFIGS["Nemotron-H-8B"], PRESET_CONFIGS["granite-4.0-h-small"]
    with pytest.raises(ValueError, match=re.escape(
            "config.json hybrid_override_pattern (24 linear_attention, 24 mlp, 4 full_attention) "
            "and layer_types (52 linear_attention) give different layers")) as caught:
        spec_from_hf_config({**nemotron, "layer_types": ["mamba"] * 52})
    assert str(caught.value).endswith("make them agree, or give only one")
    with pytest.raises(ValueError, match=re.escape(
            "config.json layer_types (36 linear_attention, 4 full_attention) and "
            "layers_block_type (40 full_attention) give different layers")):
        spec_from_hf_config({**granite, "layers_block_type": ["attention"] * 40})
    with pytest.raises(ValueError, match="hybrid_override_pattern .* and layers_block_type"):
        spec_from_hf_config({**nemotron, "layers_block_type": ["mamba"] * 52})
    # the same pattern in two fields (a config re-saved by transformers 5 beside the
    # checkpoint's) reads as the checkpoint does, old or new layer names alike
    letters = {"M": "mamba", "*": "attention", "-": "mlp"}
    as_list = [letters[letter] for letter in NEMOTRON_PATTERN]
    for extra in ({"layers_block_type": as_list},
                  {"layer_types": [{"mamba": LINEAR, "attention": FULL}.get(x, x)
                                   for x in as_list]}):
        assert (spec_from_hf_config({**nemotron, **extra}).profile()
                == spec_from_hf_config(nemotron).profile())
    assert (spec_from_hf_config({**granite, "layers_block_type": GRANITE_TYPES}).profile()
            == spec_from_hf_config(granite).profile())


def test_architectures_of_another_model_type_are_refused():
    # the engines pick code paths by the class (SGLang's state slots a request changed 5 -> 3):
    # a Qwen3-Next config naming LlamaForCausalLM planned as neither model, without a word
    qwen3_next = PRESET_CONFIGS["Qwen3-Next-80B-A3B"]
    with pytest.raises(ValueError, match=re.escape(
            "config.json architectures names LlamaForCausalLM, the class of model_type "
            "\"llama\", but its model_type is \"qwen3_next\", whose class is "
            "Qwen3NextForCausalLM: the engines pick their code paths by the class")):
        spec_from_hf_config({**qwen3_next, "architectures": ["LlamaForCausalLM"]})
    llama = PRESET_CONFIGS["Llama-3.1-8B"]
    with pytest.raises(ValueError, match="names Qwen3NextForCausalLM, the class of model_type "
                       "\"qwen3_next\", but its model_type is \"llama\""):
        spec_from_hf_config({**llama, "architectures": ["Qwen3NextForCausalLM"]})
    # a class the tables do not know (a custom model's) keeps loading, and so do classes of
    # the type a config is read as, its wrapper's or its language model's
    assert spec_from_hf_config({**llama, "architectures": ["MyLlamaForCausalLM"]}).architectures \
        == ("MyLlamaForCausalLM",)
    qwen3_5_text = {**PRESET_CONFIGS["Qwen3.5-27B"]["text_config"], "model_type": "qwen3_5_text"}
    for cfg in ({**qwen3_5_text, "architectures": ["Qwen3_5ForConditionalGeneration"]},
                {**qwen3_5_text, "architectures": ["Qwen3_5ForCausalLM"]},
                {**PRESET_CONFIGS["Qwen3.5-27B"], "architectures": ["Qwen3_5ForCausalLM"]},
                {**MINIMAX_M1, "model_type": "minimax_text_01"},
                {**PRESET_CONFIGS["DeepSeek-V3"], "model_type": "kimi_k2"}):
        spec_from_hf_config(cfg)


def test_a_null_transformers_computes_with_or_does_not_take_is_named_with_its_fix():
    # yarn's original_max_position_embeddings null: transformers divided by it, and the error
    # named neither the field nor a fix ("unsupported operand type(s) for /: 'int' and
    # 'NoneType'")
    oss = PRESET_CONFIGS["gpt-oss-20b"]
    rope = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
            "original_max_position_embeddings": None}
    with pytest.raises(ValueError, match=re.escape(
            "config.json rope_scaling.original_max_position_embeddings is null: transformers' "
            "gpt_oss config computes with it; give a number or remove the field")):
        spec_from_hf_config({**oss, "rope_scaling": rope})
    with pytest.raises(ValueError, match=re.escape(
            "config.json rope_scaling.original_max_position_embeddings is null: transformers' "
            "deepseek_v3 config")):
        spec_from_hf_config({**PRESET_CONFIGS["DeepSeek-V3"], "rope_scaling": {
            "type": "yarn", "factor": 40, "original_max_position_embeddings": None}})
    with pytest.raises(ValueError, match=re.escape(
            "config.json text_config.rope_parameters.original_max_position_embeddings is null")):
        spec_from_hf_config({"model_type": "qwen3_5", "text_config": {"rope_parameters": {
            "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": None}}})
    # a null transformers' strict check refuses is said in config.json's words, not Python's
    # ("Field 'num_key_value_heads' expected int, got NoneType (value: None)")
    for cfg, message in (
            ({**PRESET_CONFIGS["Qwen3-Next-80B-A3B"], "num_key_value_heads": None},
             "config.json num_key_value_heads is null, which transformers' qwen3_next config "
             "does not take: give a whole number or remove the field"),
            ({"model_type": "llama", "rms_norm_eps": None}, "config.json rms_norm_eps is null, "
             "which transformers' llama config does not take: give a number or remove the field"),
            ({"model_type": "gemma3", "text_config": {"tie_word_embeddings": None}},
             "config.json text_config.tie_word_embeddings is null, which transformers' gemma3 "
             "config does not take: give true/false or remove the field")):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            spec_from_hf_config(cfg)


def test_kimi_linear_layer_lists_are_named_when_they_do_not_give_each_layer_one_kind():
    # transformers' class makes a layer of each entry of linear_attn_config's lists; a layer in
    # neither failed on a layer_types field the config does not hold, a layer 0 was the last
    def kimi(**lists):
        return {**KIMI_LINEAR, "linear_attn_config": {**KIMI_LINEAR["linear_attn_config"],
                                                      **lists}}

    full = KIMI_LINEAR["linear_attn_config"]["full_attn_layers"]
    kda = KIMI_LINEAR["linear_attn_config"]["kda_layers"]
    for cfg, message in (
            (kimi(full_attn_layers=[4, 4, 8]), "config.json linear_attn_config.full_attn_layers "
             "= [4, 4, 8] lists layer 4 twice: list each layer once"),
            (kimi(full_attn_layers=[]), "config.json linear_attn_config lists layers 4, 8, 12, "
             "16, 20, 24, 27 in neither full_attn_layers nor kda_layers: list each of layers 1 "
             "to 27 (num_hidden_layers) in one of them"),
            (kimi(kda_layers=[]), "config.json linear_attn_config lists layers 1, 2, 3, 5, 6,"),
            (kimi(full_attn_layers=full[:-1] + [0]), "config.json "
             "linear_attn_config.full_attn_layers has 0, past the model's layers 1 to 27 "
             "(num_hidden_layers; the list counts from 1): fix the field"),
            (kimi(kda_layers=kda + [4]), "config.json linear_attn_config lists layer 4 in both "
             "full_attn_layers and kda_layers: give each layer one kind"),
            (kimi(kda_layers="1-26"), "config.json linear_attn_config.kda_layers = '1-26' must be "
             "a list of layer numbers (1-based): fix the field"),
            # (fuzz) a null kda_layers was refused as full_attn_layers, the list transformers
            # failed on beside it
            (kimi(kda_layers=None), "config.json linear_attn_config.kda_layers is null, which "
             "transformers does not read as absent: list its layer numbers (1-based) or remove "
             "the field")):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            spec_from_hf_config(cfg)
    # every layer in one list: read as before (all KDA with no full layer too)
    assert spec_from_hf_config(kimi()).pattern == "(3*kda,mla)*6,2*kda,mla"
    all_kda = kimi(full_attn_layers=[], kda_layers=list(range(1, 28)))
    assert spec_from_hf_config(all_kda).pattern == "27*kda"


def test_state_layer_refusals_name_the_config_field_and_fix():
    # "gpt_oss has linear_attention layers but no state kind is known": no field, no fix
    oss = PRESET_CONFIGS["gpt-oss-20b"]
    with pytest.raises(ValueError, match=re.escape(
            "gpt_oss config.json layer_types, entry 1 of 24, is 'linear_attention', but gpt_oss "
            "has no "
            "linear-attention (state) layers: write its layers as the checkpoint's config.json "
            "does (full_attention, sliding_attention), or fix model_type")):
        spec_from_hf_config({**oss, "layer_types": [LINEAR] * oss["num_hidden_layers"]})
    with pytest.raises(ValueError, match=re.escape(
            "gemma3 config.json text_config.layer_types, entry 2 of 2, is 'linear_attention'")):
        spec_from_hf_config({"model_type": "gemma3", "text_config": {
            "num_hidden_layers": 2, "layer_types": [SLIDING, LINEAR]}})
    # a conv kernel of 1 said "gdn.conv_kernel must be at least 2, got 1": FlatKV's name, not
    # the field config.json gives it in
    for cfg, field in (
            ({**PRESET_CONFIGS["Qwen3-Next-80B-A3B"], "linear_conv_kernel_dim": 1},
             "linear_conv_kernel_dim"),
            ({"model_type": "qwen3_5", "text_config": {"linear_conv_kernel_dim": 1}},
             "text_config.linear_conv_kernel_dim"),
            ({**PRESET_CONFIGS["Nemotron-H-8B"], "conv_kernel": 1}, "conv_kernel"),
            ({**PRESET_CONFIGS["granite-4.0-h-small"], "mamba_d_conv": 1}, "mamba_d_conv"),
            ({**PRESET_CONFIGS["Jamba-1.5-Mini"], "mamba_d_conv": 1}, "mamba_d_conv"),
            ({**KIMI_LINEAR, "linear_attn_config": {**KIMI_LINEAR["linear_attn_config"],
                                                    "short_conv_kernel_size": 1}},
             "linear_attn_config.short_conv_kernel_size")):
        with pytest.raises(ValueError, match=f"^config.json {re.escape(field)} = 1 must be at "
                           "least 2: the .* conv state keeps kernel - 1 tokens; check the "
                           "model's value$"):
            spec_from_hf_config(cfg)


def test_a_wrappers_null_text_config_is_refused():
    # transformers reads the null as no text_config and plans its default Qwen3.5 language
    # model (32 layers, 4 KV heads), which only a note mentioned
    qwen3_5 = PRESET_CONFIGS["Qwen3.5-27B"]
    for cfg in ({**qwen3_5, "text_config": None}, {**LLAMA4_SCOUT, "text_config": None},
                {"model_type": "gemma3", "text_config": None}):
        with pytest.raises(ValueError, match=re.escape(
                f"config.json text_config is null: {cfg['model_type']} keeps its language "
                "model's config there, and transformers would plan its default language model "
                "instead; give the text_config as the checkpoint's config.json does")):
            spec_from_hf_config(cfg)


# The figures of each layer kind a TP splits (models.py's _split calls and SplitRefusals)
SPLIT_FIGURES = {AttentionLayer: {"kv_heads"}, GDNLayer: {"k_heads", "v_heads"},
                 Mamba2Layer: {"n_heads", "n_groups"}, Mamba1Layer: {"d_inner"},
                 ShortConvLayer: {"channels"}, LightningLayer: {"heads"}, MLALayer: set()}


def _as_written(cfg, key):
    """The value config.json writes at dotted ``key`` (``linear_attn_config.num_heads``)."""
    for part in key.split("."):
        cfg = cfg.get(part) if isinstance(cfg, dict) else None
    return cfg


def test_a_tp_refusal_names_a_config_key_only_for_a_figure_the_config_gave_after_an_edit():
    # _config_keys was keyed by the layer object: a GDN layer replaced after loading (its head
    # dim edited, its 16 key heads the config's) lost its key and fell to plain words. Keyed by
    # the figure (type, label, field, value), it keeps the key of a figure it keeps, and a
    # figure changed (8 key heads, which the config never gave) is never named by that key
    spec = spec_from_hf_config({"model_type": "qwen3_next", "linear_num_key_heads": 16})
    gdn = spec.kinds["gdn"]

    def edited(**changes):
        new = replace(gdn, **changes)
        return replace(spec, layers=tuple(new if layer == gdn else layer
                                          for layer in spec.layers))

    assert refused_at(edited(head_dim_k=64), 3) == (
        "config.json linear_num_key_heads = 16, the linear-attention (Gated DeltaNet) layers' "
        "key heads, is not divisible by TP 3: choose TP 1, 2, 4, 8 or 16, the TPs up to 64 "
        "that split the model")
    assert refused_at(edited(k_heads=8), 3) == (
        "qwen3_next: its linear-attention (Gated DeltaNet) layers have 8 key heads, and TP 3 "
        "does not divide them: choose TP 1, 2, 4 or 8, the TPs up to 64 that split the model")
    # the Model page's hand editor on the loaded config: its own labels, no config.json key
    draft = app_model.SpecDraft.from_spec(spec).with_field("gdn", "k_heads", 8)
    with pytest.raises(ValueError) as refused:
        draft.to_spec().with_options(tp=3)
    assert app_model.editor_words(str(refused.value), draft.kind_names) == (
        "gdn's k heads = 8 is not divisible by TP = 3: choose a TP that divides it (TP up to 64 "
        "that split the model: 1, 2, 4, 8)")


def test_a_tp_refusal_names_the_key_the_layer_builder_read(monkeypatch):
    # the key a TP refusal names for each figure it splits must be one the reader took that
    # figure from: read through whole_field (Recorded.used, by attribute) with that value, or
    # written in the config.json with it under the name the file uses (Step-3.5's
    # num_attention_groups, Kimi Linear's linear_attn_config.num_heads). Every supported type
    # (its defaults, or the fields it cannot go without), the preset configs and Gemma 4's
    # full layers
    minimax_hf = {k: v for k, v in MINIMAX_M1.items() if k != "attn_type_list"} | {
        "model_type": "minimax", "layer_types": (["linear_attention"] * 7
                                                 + ["full_attention"]) * 10}
    given = {"kimi_linear": KIMI_LINEAR, "minimax_m1": MINIMAX_M1,
             "minimax_text_01": {**MINIMAX_M1, "model_type": "minimax_text_01"},
             "minimax": minimax_hf, "lfm2_moe": {**LFM2, "model_type": "lfm2_moe",
                          "architectures": ["Lfm2MoeForCausalLM"]},
             "mimo_v2_flash": MIMO_V2, "bailing_hybrid": BAILING, "longcat_flash": LONGCAT_FLASH}
    configs = [given.get(model_type, {"model_type": model_type})
               for model_type in SUPPORTED_MODEL_TYPES]
    fallback = json.loads(json.dumps(GEMMA4))
    del fallback["text_config"]["num_global_key_value_heads"]
    configs += [*PRESET_CONFIGS.values(), GEMMA4, fallback,
                {**PRESET_CONFIGS["granite-4.0-h-small"], "n_groups": 1}]
    readers = []
    real = hf_config._recorded
    monkeypatch.setattr(hf_config, "_recorded", lambda *a: readers.append(real(*a)) or readers[-1])
    checked = Counter()
    for cfg in configs:
        spec = spec_from_hf_config(cfg)
        recorded = readers[-1]
        keys = dict(spec._config_keys)
        # every figure a TP splits has its key, by the figure's layer type, label, field and
        # value (MLA's latent none: no TP splits it)
        for layer in dict.fromkeys(spec.layers):
            named = {field for kind, label, field, value in keys
                     if (kind, label) == (layer.kind, layer.label)
                     and value == getattr(layer, field)}
            assert named == SPLIT_FIGURES[type(layer)], (cfg["model_type"], layer)
        for (_, _, _, value), (key, in_file) in keys.items():
            attr = key.removeprefix(recorded.where)
            if " x " in key:  # Jamba's d_inner: the product of two keys read
                assert math.prod(recorded.used[part] for part in key.split(" x ")) == value
            elif recorded.used.get(attr) == value:
                checked[attr] += 1
            else:  # another name for it, as the file writes it
                assert in_file and _as_written(cfg, key) == value, (cfg["model_type"], key)
                checked[key] += 1
    # the keys of each kind of builder were checked: GQA's, GDN's, KDA's (Kimi Linear's by its
    # linear_attn_config; Bailing's by the num_attention_heads it gives them in), Mamba2's
    # (nemotron_h, zamba2, mamba2, Bamba's), Mamba1's, LFM2's, MiniMax's lightning heads,
    # MiMo's sliding heads, Gemma 4's full layers' global heads
    for attr in ("num_key_value_heads", "num_attention_heads", "linear_num_key_heads",
                 "linear_num_value_heads", "linear_attn_config.num_heads",
                 "mamba_num_heads", "n_groups", "n_mamba_heads", "mamba_ngroups", "num_heads",
                 "mamba_n_heads", "mamba_n_groups", "intermediate_size", "hidden_size",
                 "swa_num_key_value_heads", "num_global_key_value_heads"):
        assert checked[attr], attr


def test_a_bad_size_is_refused_by_the_key_config_json_writes_not_transformers_attribute():
    # config.json names a size by an alias transformers maps (Kimi Linear's model_max_length,
    # Step-3.5's num_attention_groups), inside another object (Kimi Linear's linear_attn_config)
    # or by the field transformers copies it from (Bailing's short_conv_kernel_size): a refusal
    # names that key, which the user can find in the file (the fuzz found each refused by
    # transformers' attribute, a key the file does not hold)
    linear = KIMI_LINEAR["linear_attn_config"]
    for cfg, key, shown in (
            ({**KIMI_LINEAR, "model_max_length": 0}, "model_max_length", "0"),
            ({**KIMI_LINEAR, "linear_attn_config": {**linear, "num_heads": 0}},
             "linear_attn_config.num_heads", "0"),
            ({**KIMI_LINEAR, "linear_attn_config": {**linear, "head_dim": -1}},
             "linear_attn_config.head_dim", "-1"),
            ({**KIMI_LINEAR, "linear_attn_config": {**linear, "short_conv_kernel_size": -1}},
             "linear_attn_config.short_conv_kernel_size", "-1"),
            ({**BAILING, "short_conv_kernel_size": 0}, "short_conv_kernel_size", "0"),
            ({**STEP35, "num_attention_groups": 0}, "num_attention_groups", "0"),
            ({**STEP35, "num_attention_groups": 1.5}, "num_attention_groups", "1.5"),
            ({**LLAMA4_SCOUT, "text_config": {**LLAMA4_SCOUT["text_config"],
                                              "max_position_embeddings": 0}},
             "text_config.max_position_embeddings", "0")):
        with pytest.raises(ValueError) as refused:
            spec_from_hf_config(cfg)
        message = str(refused.value)
        assert re.search(rf"config\.json {re.escape(key)}( =| is|,| must)[^:]*"
                         rf"(?<![\d.]){re.escape(shown)}(?![\d.])", message), (key, message)


def test_a_size_too_large_to_be_real_is_refused_by_its_config_key():
    # sizes the precheck does not bound (Kimi Linear's linear_attn_config.num_heads, LFM2's
    # conv_L_cache, a conv kernel past 64) were refused by the layer FlatKV built of them,
    # "gdn.k_heads = ... is too large to be real", a name that is in no config.json (fuzz)
    linear = KIMI_LINEAR["linear_attn_config"]
    for cfg, key, most in (
            ({**KIMI_LINEAR, "linear_attn_config": {**linear, "num_heads": 10**30}},
             "linear_attn_config.num_heads", "1,048,576"),
            ({**KIMI_LINEAR, "linear_attn_config": {**linear, "short_conv_kernel_size": 65}},
             "linear_attn_config.short_conv_kernel_size", "64"),
            ({**LFM2, "conv_L_cache": 2**63}, "conv_L_cache", "64"),
            ({**PRESET_CONFIGS["Nemotron-H-8B"], "conv_kernel": 100}, "conv_kernel", "64")):
        with pytest.raises(ValueError, match=rf"config\.json {re.escape(key)} = .* is too "
                           rf"large to be real: give {most} or less(, or remove| in) the field"):
            spec_from_hf_config(cfg)


def test_a_rope_scaling_missing_its_numbers_or_named_by_nothing_is_refused_by_its_field():
    # (fuzz) a llama3 rope without low_freq_factor, a yarn one without its factor: refused as
    # "rope_scaling = {...} is not a value transformers' llama config takes", not naming the
    # key to add; a yarn original_max_position_embeddings of 0 (transformers divides by it) so
    # too; an empty rope_type scaled Llama-3.1-8B's length 8 times, to 1,048,576, as a type
    llama, deepseek = PRESET_CONFIGS["Llama-3.1-8B"], PRESET_CONFIGS["DeepSeek-V3"]
    rope = {k: v for k, v in llama["rope_scaling"].items() if k != "low_freq_factor"}
    with pytest.raises(ValueError, match=r"^config.json rope_scaling has no low_freq_factor: "
                       r"llama3 rope scaling needs it; add it as the model's config.json "
                       r"gives it$"):
        spec_from_hf_config({**llama, "rope_scaling": rope})
    yarn = {k: v for k, v in deepseek["rope_scaling"].items() if k != "factor"}
    with pytest.raises(ValueError, match=r"^config.json rope_scaling has no factor: yarn rope "
                       r"scaling needs it; add it"):
        spec_from_hf_config({**deepseek, "rope_scaling": yarn})
    scout = LLAMA4_SCOUT["text_config"]
    rope = {k: v for k, v in scout["rope_scaling"].items() if k != "high_freq_factor"}
    with pytest.raises(ValueError, match=r"^config.json text_config.rope_scaling has no "
                       r"high_freq_factor: llama3"):
        spec_from_hf_config({**LLAMA4_SCOUT, "text_config": {**scout, "rope_scaling": rope}})
    for length in (0, -1):
        with pytest.raises(ValueError, match=rf"^config.json rope_scaling."
                           rf"original_max_position_embeddings = {length} must be a positive "
                           r"length in tokens: fix or remove the field$"):
            spec_from_hf_config({**deepseek, "rope_scaling": {
                **deepseek["rope_scaling"], "original_max_position_embeddings": length}})
    for empty in ("", "  "):
        with pytest.raises(ValueError, match=rf"^config.json rope_scaling.rope_type = "
                           rf"'{empty}' is no rope type: use a name such as default, linear, "):
            spec_from_hf_config({**llama, "rope_scaling": {**llama["rope_scaling"],
                                                           "rope_type": empty}})


def test_an_mtp_layer_count_that_is_no_whole_number_is_refused_by_its_field():
    # (fuzz) DeepSeek-V3's num_nextn_predict_layers "8" or -1 passed without a word, Ernie 4.5
    # MoE's "8" was refused in Python's words ("'>' not supported between instances of 'str'
    # and 'int'"), Step-3.5's 1.5 as "no one field of it is to blame"; 0 (no MTP module) and
    # null (the class default) pass
    deepseek, ernie = PRESET_CONFIGS["DeepSeek-V3"], {"model_type": "ernie4_5_moe"}
    for cfg, value, why in ((deepseek, "8", "must be a whole number"),
                            (ernie, "8", "must be a whole number"),
                            (STEP35, 1.5, "must be a whole number"),
                            (deepseek, -1, "must not be negative")):
        with pytest.raises(ValueError, match=rf"^config.json num_nextn_predict_layers = "
                           rf"{re.escape(as_written(value))} {why}: give 0 or more, or remove the "
                           rf"field$"):
            spec_from_hf_config({**cfg, "num_nextn_predict_layers": value})
    for value in (0, None):
        assert spec_from_hf_config({**deepseek, "num_nextn_predict_layers": value}).pattern == (
            spec_from_hf_config(deepseek).pattern)
    # ... but Step-3.5's null is added to its layer count (transformers' TypeError), and was
    # "no one field of it is to blame": named, with the fix
    with pytest.raises(ValueError, match=r"^config.json num_nextn_predict_layers is null, .*: "
                       r"give a whole number or remove the field$"):
        spec_from_hf_config({**STEP35, "num_nextn_predict_layers": None})


def test_a_size_below_its_least_is_refused_with_the_fix():
    # whole_field's refusals said the field and value but not what to do (fuzz)
    with pytest.raises(ValueError, match=r"^lfm2 config.json conv_L_cache = 0 must be positive: "
                                         r"give 1 "
                       r"or more in the field$"):
        spec_from_hf_config({**LFM2, "conv_L_cache": 0})
    with pytest.raises(ValueError, match=r"^deepseek_v32 config.json index_head_dim = -1 must be "
                       r"positive: give 1 or more in the field$"):
        spec_from_hf_config({**DEEPSEEK_V32, "index_head_dim": -1})


def test_step35_sliding_heads_and_null_kv_groups_are_refused_by_their_config_keys():
    # (fuzz) attention_other_setting.num_attention_heads = 1.5 was refused as
    # "num_sliding_attention_heads", the attribute transformers copies it to; a null
    # num_attention_groups as "attention_heads = 32 is not a multiple of full.kv_heads = 64 ...
    # (0 in the Model page's editor)", the planner's words for the MHA it was read as
    other = STEP35["attention_other_setting"]
    with pytest.raises(ValueError, match=r"^config.json attention_other_setting."
                       r"num_attention_heads = 1.5 is not a value transformers' step3p5 config "
                       r"takes: give a whole number"):
        spec_from_hf_config({**STEP35, "attention_other_setting": {
            **other, "num_attention_heads": 1.5}})
    with pytest.raises(ValueError, match=r"^step3p5 config.json num_attention_groups is null: "
                       r"vLLM's Step-3.5 reads the full layers' KV groups from it, SGLang takes "
                       r"8; give the model's value or remove the field$"):
        spec_from_hf_config({**STEP35, "num_attention_groups": None})


def test_sizes_that_do_not_fit_together_are_refused_by_their_config_keys():
    # (fuzz) a layer's own check ("gdn.v_heads = 24 is not a multiple of gdn.k_heads = 16")
    # named FlatKV's layer fields, which no config.json holds: said by the keys that gave them
    qwen3_next = PRESET_CONFIGS["Qwen3-Next-80B-A3B"]
    nemotron, granite = PRESET_CONFIGS["Nemotron-H-8B"], PRESET_CONFIGS["granite-4.0-h-small"]
    for cfg, message in (
            ({**qwen3_next, "linear_num_value_heads": 24}, "config.json "
             "linear_num_value_heads = 24 is not a multiple of linear_num_key_heads = 16"),
            ({**nemotron, "n_groups": 7}, "config.json mamba_num_heads = 128 is not "
             "a multiple of n_groups = 7"),
            ({**granite, "mamba_n_groups": 3}, "config.json mamba_n_heads = 128 "
             "is not a multiple of mamba_n_groups = 3"),
            ({**LFM2, "conv_L_cache": 1}, "config.json conv_L_cache = 1 must be at least 2: the "
             "lfm2 conv state keeps kernel - 1 tokens")):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
            spec_from_hf_config(cfg)


@pytest.mark.parametrize(("config", "message"), [
    # transformers failed in Python's words ("'>' not supported between instances of 'str' and
    # 'int'"), or FlatKV named the whole object the bad
    # entry sits in: the entry itself, as config.json writes it (fuzz)
    ({"model_type": "mistral3", "vision_config": {"head_dim": "8"}},
     "config.json vision_config.head_dim = '8' is not a value transformers' mistral3 config "
     "takes: fix or remove the field"),
    ({**MIMO_V2, "rope_parameters": {"full_attention": {"rope_type": "default"},
                                     "sliding_attention": []}},
     "config.json rope_parameters.sliding_attention = [] is not a value transformers' "
     "mimo_v2_flash config takes: fix or remove the field"),
    ({"model_type": "gemma3", "text_config": {"rope_parameters": {
        "full_attention": 5, "sliding_attention": {"rope_type": "default"}}}},
     "config.json text_config.rope_parameters.full_attention = 5 is not a value transformers' "
     "gemma3 config takes: fix or remove the field"),
], ids=["vision_config", "rope per layer type", "text_config rope"])
def test_a_bad_entry_of_a_nested_object_is_refused_by_its_own_path(config, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        spec_from_hf_config(config)


def test_kimi_linear_kda_sizes_transformers_refuses_are_named_in_linear_attn_config():
    # (fuzz) refused as linear_conv_kernel_dim, the attribute transformers copies it to
    linear = KIMI_LINEAR["linear_attn_config"]
    for value, said in ((1.5, "= 1.5 is not a value transformers' kimi_linear config takes"),
                        (None, "is null, which transformers' kimi_linear config does not take")):
        with pytest.raises(ValueError, match=rf"^config.json linear_attn_config."
                           rf"short_conv_kernel_size {re.escape(said)}: give a whole number"):
            spec_from_hf_config({**KIMI_LINEAR, "linear_attn_config": {
                **linear, "short_conv_kernel_size": value}})


def test_a_layer_count_transformers_filled_in_is_said_to_be_its_default():
    # (fuzz) LFM2's layer_types of 16 without num_hidden_layers: transformers' "`num_hidden_layers`
    # (32) must be equal to the number of `layer_types` (16)" left the 32 unexplained: it is
    # LFM2's class default, the config.json gives none
    lfm2 = {k: v for k, v in LFM2.items() if k != "num_hidden_layers"}
    with pytest.raises(ValueError, match=r"^this lfm2 config.json does not hold together: "
                       r"`num_hidden_layers` \(32\) must be equal to the number of `layer_types` "
                       r"\(16\); the config.json gives no num_hidden_layers, so that is "
                       r"transformers' default: add the model's$"):
        spec_from_hf_config(lfm2)


def test_a_checkpoint_of_no_mtp_module_keeps_an_added_mtp_layer_with_a_note():
    # DeepSeek-V3's config with num_nextn_predict_layers 0 (a checkpoint shipped without its
    # MTP module, as Kimi-K2's): vLLM's DeepSeekMTP builds no layer and takes the draft step
    # modulo 0 layers, SGLang's NextN loader asserts "Only 1 nextn layer is supported", so
    # neither engine's MTP drafting starts; an EAGLE drafter does (SGLang takes the 0 as no MTP
    # layers). The added layer is kept, as a one-layer drafter's attention, and says so
    from flatkv.models import NO_MTP_MODULE
    cfg = PRESET_CONFIGS["DeepSeek-V3"]
    none = spec_from_hf_config({**cfg, "num_nextn_predict_layers": 0})
    one = spec_from_hf_config({**cfg, "num_nextn_predict_layers": 1})
    assert (none.mtp_modules, one.mtp_modules, spec_from_hf_config(cfg).mtp_modules) == (
        0, 1, None)
    drafted = with_mtp_layer(none)
    assert len(drafted.layers) == 62 and drafted.layers[-1] == none.layers[-1]
    assert drafted.profile().kv_bytes_per_token == 62 * (512 + 64) * BF16 == 71_424
    assert drafted.notes.endswith(
        "Without an MTP module, it stands for a one-layer drafter's (EAGLE's) attention of that "
        "shape. This checkpoint has none (config.json num_nextn_predict_layers = 0): vLLM's "
        "and SGLang's MTP drafting do not start on it, so the layer counts such a drafter's; "
        "for MTP drafting, use a checkpoint that ships its MTP module.")
    assert NO_MTP_MODULE not in with_mtp_layer(one).notes
    # a link and a model file carry it: the note survives them
    assert ModelSpec.from_dict(none.to_dict()).mtp_modules == 0
    assert one.with_options(tp=8).to_dict()["mtp_modules"] == 1
    assert "mtp_modules" not in spec_from_hf_config(cfg).to_dict()
    with pytest.raises(ValueError, match="mtp_modules"):
        ModelSpec.from_dict({**none.to_dict(), "mtp_modules": -1})


PHI3_LONGROPE = {"model_type": "phi3", "num_hidden_layers": 32, "hidden_size": 3072,
                 "num_attention_heads": 32, "max_position_embeddings": 131_072,
                 "original_max_position_embeddings": 4_096,
                 "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48,
                                  "long_factor": [1.0] * 48}}


@pytest.mark.parametrize(("cfg", "message"), [
    # an empty layer_types: transformers' words (24 layers, 0 types) kept, the two fields to fix
    ({**PRESET_CONFIGS["gpt-oss-20b"], "layer_types": []},
     "this gpt_oss config.json does not hold together: `num_hidden_layers` (24) must be equal "
     "to the number of `layer_types` (0); fix num_hidden_layers and layer_types in config.json "
     "to the checkpoint's values so they agree, or remove the one that is wrong"),
    # a nested language model's fields by their paths, though transformers names the key alone
    ({**LLAMA4_SCOUT, "text_config": {**LLAMA4_SCOUT["text_config"], "layer_types": []}},
     "this llama4 config.json does not hold together: `num_hidden_layers` (48) must be equal "
     "to the number of `layer_types` (0); fix text_config.num_hidden_layers and "
     "text_config.layer_types in config.json to the checkpoint's values so they agree, or "
     "remove the one that is wrong"),
    # Falcon-H1's null mamba_d_ssm: its class takes mamba_expand x hidden_size = 2 x 3,072 =
    # 6,144, not the heads' 24 x 128 = 3,072; transformers' words name no field the file gives
    ({**PRESET_CONFIGS["Falcon-H1-7B"], "mamba_d_ssm": None},
     "this falcon_h1 config.json does not hold together: The dimensions for the Mamba head "
     "state do not match the model intermediate_size; config.json gives mamba_d_ssm as null, "
     "which transformers fills in for itself: give it the checkpoint's value"),
    # ... beside a rope_scaling of null, as most checkpoints give it: the class has no default
    # for it that the null overrides (the field left out alike), so it is not named with it
    ({**PRESET_CONFIGS["Falcon-H1-7B"], "mamba_d_ssm": None, "rope_scaling": None},
     "this falcon_h1 config.json does not hold together: The dimensions for the Mamba head "
     "state do not match the model intermediate_size; config.json gives mamba_d_ssm as null, "
     "which transformers fills in for itself: give it the checkpoint's value"),
    # 1,000,000 heads beside rope_scaling null: the null was blamed ("config.json gives
    # rope_scaling as null ...: give it the checkpoint's value"), a fix that fixes nothing;
    # transformers' words name no key ("hidden size", "attention heads"): the fields in general
    ({**PRESET_CONFIGS["Llama-3.1-8B"], "num_attention_heads": 1_000_000, "rope_scaling": None},
     "this llama config.json does not hold together: The hidden size (4096) is not a multiple "
     "of the number of attention heads (1000000); fix the fields it names in config.json to "
     "the checkpoint's values, or remove them"),
    # 4,096 x 2 = 8,192 against 128 x 32 = 4,096 (its closing full stop before FlatKV's clause)
    ({"model_type": "mamba2", "num_hidden_layers": 64, "hidden_size": 4096, "expand": 2,
      "num_heads": 128, "head_dim": 32},
     "this mamba2 config.json does not hold together: Inconsistent configuration: hidden_size "
     "* expand (8192) must equal num_heads * head_dim (4096); fix hidden_size, expand, "
     "num_heads and head_dim in config.json to the checkpoint's values so they agree, or "
     "remove the one that is wrong"),
    # a rope entry by the field the file gives it in (transformers says "`rope_parameters`'s
    # short_factor field"): head_dim 3,072 / 32 = 96 takes 48 factors
    ({**PHI3_LONGROPE, "rope_scaling": {**PHI3_LONGROPE["rope_scaling"],
                                        "short_factor": [1.0] * 3}},
     "this phi3 config.json does not hold together: rope_scaling.short_factor must have length "
     "48, got 3; fix rope_scaling.short_factor in config.json to the checkpoint's value"),
])
def test_transformers_consistency_errors_keep_its_words_and_add_a_fix(cfg, message):
    with pytest.raises(ValueError) as caught:
        spec_from_hf_config(cfg)
    assert str(caught.value) == message


def test_transformers_own_value_error_passed_through_gets_a_fix():
    # a ValueError of transformers' that no check of FlatKV reads (none of transformers 5.25's
    # configs in the fuzz raised one bare, so it is made here): its words kept, the field they
    # name given a fix, and a rope named by the field the file gives it in
    cfg = {"model_type": "phi3", "max_position_embeddings": 4_096,
           "rope_scaling": {"type": "longrope", "long_factor": "x"}}
    def blame(where, key):  # (no null here)
        raise AssertionError((where, key))

    said = hf_resolve._unread_text(cfg, ValueError("boom"), "`max_position_embeddings` is 0",
                                   "phi3", blame)
    assert said == ("transformers could not read this phi3 config.json: `max_position_embeddings` "
                    "is 0; fix max_position_embeddings in config.json to the checkpoint's value, "
                    "or remove it")
    said = hf_resolve._unread_text(
        cfg, ValueError("boom"), "`rope_parameters`'s long_factor field must be a list of "
        "numbers, got x.", "phi3", blame)
    assert said == ("transformers could not read this phi3 config.json: rope_scaling.long_factor "
                    "must be a list of numbers, got x; fix rope_scaling.long_factor in config.json "
                    "to the checkpoint's value")


@pytest.mark.parametrize(("field", "value", "message"), [
    # transformers failed on len(5) in Python's words, and the whole rope_scaling was named:
    # 'config.json rope_scaling = {"type": "longrope", "short_factor": 5, ...} is not a value
    # transformers' phi3 config takes'
    ("short_factor", 5, "config.json rope_scaling.short_factor = 5 must be a list of numbers, "
     "one a rotary frequency (longrope rope scaling): give the checkpoint's list"),
    ("long_factor", 1.5, "config.json rope_scaling.long_factor = 1.5 must be a list of numbers, "
     "one a rotary frequency (longrope rope scaling): give the checkpoint's list"),
    ("short_factor", None, "config.json rope_scaling.short_factor is null: longrope rope scaling "
     "needs it as a list of numbers, one a rotary frequency: give the checkpoint's list"),
    ("long_factor", [1.0] * 5 + ["a"] + [1.0] * 42, "config.json rope_scaling.long_factor, "
     "entry 6 of 48, is 'a': give a finite number, as the checkpoint's list does"),
    ("short_factor", [True] * 48, "config.json rope_scaling.short_factor, entry 1 of 48, is "
     "true: give a finite number, as the checkpoint's list does"),
])
def test_a_longrope_factor_list_is_named_by_its_own_path(field, value, message):
    rope = {**PHI3_LONGROPE["rope_scaling"], field: value}
    with pytest.raises(ValueError) as caught:
        spec_from_hf_config({**PHI3_LONGROPE, "rope_scaling": rope})
    assert str(caught.value) == message
    # the same rope in a nested language model, by the path there
    with pytest.raises(ValueError) as nested:
        spec_from_hf_config({"model_type": "gemma3", "text_config": {"rope_scaling": rope}})
    assert str(nested.value) == message.replace("config.json rope_scaling.",
                                                "config.json text_config.rope_scaling.")


def test_a_longrope_of_the_lists_phi3_takes_is_read():
    # 3,072 / 32 heads = head_dim 96: 48 factors a list, as transformers checks; "su" is
    # longrope's older name
    for kind in ("longrope", "su"):
        spec = spec_from_hf_config({**PHI3_LONGROPE, "rope_scaling": {
            **PHI3_LONGROPE["rope_scaling"], "type": kind}})
        # 32 full layers, each K and V of 32 heads x 96 in bf16: 2 x 32 x 96 x 2 = 12,288 bytes
        assert spec.pattern == "32*full"
        assert spec.profile().kv_bytes_per_slot == 2 * 32 * 96 * 2


@pytest.mark.parametrize("value", ["x", "", {}, "LLLG"])
def test_a_layer_types_of_text_or_an_object_is_refused_as_no_list(value):
    # (fuzz) transformers iterates it: "" and {} were refused as "`num_hidden_layers` (32) must
    # be equal to the number of `layer_types` (0)", 0 types the file never gave; "x" by its
    # letter against every label transformers knows
    with pytest.raises(ValueError) as caught:
        spec_from_hf_config({**PRESET_CONFIGS["Llama-3.1-8B"], "layer_types": value})
    assert str(caught.value) == (
        f"config.json layer_types = {as_written(value)} must be a list of the layers' types, one "
        "a layer (such as [\"full_attention\", \"sliding_attention\"]): fix or remove the field")
    # a nested language model's by its path
    with pytest.raises(ValueError, match=r"^config.json text_config.layer_types = "):
        spec_from_hf_config({**LLAMA4_SCOUT, "text_config": {**LLAMA4_SCOUT["text_config"],
                                                             "layer_types": value}})


def test_a_dsa_config_carries_its_learnable_sink_to_the_profile_and_the_export():
    # SGLang 0.5.23 reads bool(getattr(hf_config, "learnable_sink", False)) for DeepSeek's
    # sparse attention (arg_groups/overrides.py 526), a top-level config.json field: the spec
    # and its profile carry it (test_sglang: bfloat16 then on a B200, fp8 refused); the bytes
    # are DeepSeek-V3.2's own, 61 x 1,284 B a token in bfloat16. FlatKV dropped the field
    sinks = spec_from_hf_config(DEEPSEEK_V32_SINKS)
    plain = spec_from_hf_config(DEEPSEEK_V32)
    assert (sinks.learnable_sink, plain.learnable_sink) == (True, False)
    profile = sinks.profile()
    assert profile.learnable_sink and profile.kv_bytes_per_slot == 1_284
    assert replace(profile, learnable_sink=False) == plain.profile() != profile
    assert sinks.source.endswith(
        "; learnable attention sinks (learnable_sink), for which SGLang keeps the sparse "
        "attention's cache in bfloat16 on every GPU")
    assert "learnable" not in plain.source
    # null reads as SGLang's bool(None), false; any other value than true or false is refused
    assert not spec_from_hf_config({**DEEPSEEK_V32, "learnable_sink": None}).learnable_sink
    assert not spec_from_hf_config({**DEEPSEEK_V32, "learnable_sink": False}).learnable_sink
    for value, written in (("true", "'true'"), (1, "1")):
        with pytest.raises(ValueError) as refused:
            spec_from_hf_config({**DEEPSEEK_V32, "learnable_sink": value})
        assert str(refused.value) == (f"deepseek_v32 config.json learnable_sink = {written} must "
                                      "be true or false: fix the field")
    # dense MLA (no index_topk): no sparse attention for SGLang to read it for
    dense = spec_from_hf_config({**PRESET_CONFIGS["DeepSeek-V3"], "learnable_sink": True})
    assert not dense.learnable_sink and not dense.profile().learnable_sink
    # the export (a model file, a link's spec) and the Model page's draft keep it
    exported = sinks.to_dict()
    assert exported["learnable_sink"] is True and "learnable_sink" not in plain.to_dict()
    assert ModelSpec.from_dict(exported) == sinks
    assert ModelSpec.from_dict(exported).profile().learnable_sink
    assert app_model.SpecDraft.from_spec(sinks).to_spec().learnable_sink
    with pytest.raises(ValueError) as refused:
        ModelSpec.from_dict({**exported, "learnable_sink": "yes"})
    assert str(refused.value) == "learnable_sink is 'yes': give true or false"
