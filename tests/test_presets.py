"""Bundled presets: every preset's layers and bytes computed by hand here (SPEC.md §2's rows
from its arithmetic, the others from their checkpoints' config.json), and the file format."""

from __future__ import annotations

import json
import os

import pytest

from flatkv.hf_config import spec_from_hf_config
from flatkv.models import ModelSpec
from flatkv.presets import PRESET_DIR, list_presets, load_model_file, load_preset
from flatkv.profile import profile_to_dict

BF16, FP32 = 2, 4
FULL, SLIDING, LINEAR = "full_attention", "sliding_attention", "linear_attention"
CHUNKED = "chunked_attention"

# name -> (cache layers by label, kv_bytes_per_slot, state_const_bytes), TP 1, by hand
EXPECTED = {
    "Qwen3-Next-80B-A3B": (
        {FULL: 12, LINEAR: 36},
        2 * (256 + 256) * BF16,  # 2,048
        {"conv": (2 * 16 * 128 + 32 * 128) * (4 - 1) * BF16,  # 49,152
         "ssm": 32 * 128 * 128 * BF16},  # 524,288 elements
    ),
    "Qwen3.5-27B": (
        {FULL: 16, LINEAR: 48},
        4 * (256 + 256) * BF16,
        {"conv": (2 * 16 * 128 + 48 * 128) * 3 * BF16, "ssm": 48 * 128 * 128 * FP32},
    ),
    "Nemotron-H-8B": (
        {FULL: 4, LINEAR: 24},
        8 * (128 + 128) * BF16,  # 4,096
        {"conv": (128 * 64 + 2 * 8 * 128) * 3 * BF16,  # 61,440
         "ssm": 128 * 64 * 128 * BF16},  # 2,097,152
    ),
    "Jamba-1.5-Mini": (
        {FULL: 4, LINEAR: 28},
        8 * (128 + 128) * BF16,
        {"conv": 8192 * 3 * BF16, "ssm": 8192 * 16 * BF16},  # 49,152; 262,144
    ),
    "Falcon-H1-7B": (
        {FULL: 44, LINEAR: 44},
        2 * (128 + 128) * BF16,  # 1,024
        {"conv": (24 * 128 + 2 * 1 * 256) * 3 * BF16,  # 21,504
         "ssm": 24 * 128 * 256 * BF16},  # 1,572,864
    ),
    "granite-4.0-h-small": (
        {FULL: 4, LINEAR: 36},
        8 * (128 + 128) * BF16,
        {"conv": (128 * 64 + 2 * 1 * 128) * 3 * BF16,  # 50,688 (d_inner 8,192)
         "ssm": 128 * 64 * 128 * BF16},  # 2,097,152
    ),
    "gpt-oss-20b": ({SLIDING: 12, FULL: 12}, 8 * (64 + 64) * BF16, {}),
    "gpt-oss-120b": ({SLIDING: 18, FULL: 18}, 8 * (64 + 64) * BF16, {}),
    "Llama-3.1-8B": ({FULL: 32}, 8 * (128 + 128) * BF16, {}),
    # 36 chunked local attention layers (chunks of 8,192) and 12 global ones, 8 x 128
    "Llama-4-Scout-17B-16E": ({CHUNKED: 36, FULL: 12}, 8 * (128 + 128) * BF16, {}),
    "DeepSeek-V3": ({FULL: 61}, (512 + 64) * BF16, {}),  # 1,152
    # and the lightning indexer's keys: 128 fp8 bytes and a float32 scale = 132 B a token
    "DeepSeek-V3.2": ({FULL: 61}, (512 + 64) * BF16 + 128 + 4, {}),  # 1,284
    "Kimi-Linear-48B-A3B": (
        {FULL: 7, LINEAR: 20},
        (512 + 64) * BF16,  # 1,152: MLA full layers
        {"conv": (32 * 128 + 2 * 32 * 128) * (4 - 1) * BF16,  # 73,728
         "ssm": 32 * 128 * 128 * FP32},  # 2,097,152: KDA's recurrent state in float32
    ),
    "LFM2-1.2B": (
        {FULL: 6, LINEAR: 10},
        8 * (64 + 64) * BF16,  # 2,048
        {"conv": 2048 * (3 - 1) * BF16},  # 8,192: a short conv keeps no ssm state
    ),
    "MiniMax-M1": (
        {FULL: 10, LINEAR: 70},
        8 * (128 + 128) * BF16,  # 4,096
        {"ssm": 64 * 128 * 128 * BF16},  # 2,097,152: lightning attention keeps no conv state
    ),
}


def test_spec_literal_values():
    """The figures SPEC.md prints, against the arithmetic above."""
    e = EXPECTED
    assert e["Qwen3-Next-80B-A3B"][2] == {"conv": 49152, "ssm": 1048576}
    assert e["Nemotron-H-8B"][1:] == (4096, {"conv": 61440, "ssm": 2097152})
    assert e["Jamba-1.5-Mini"][2] == {"conv": 49152, "ssm": 262144}
    assert e["Falcon-H1-7B"][1:] == (1024, {"conv": 21504, "ssm": 1572864})
    assert e["granite-4.0-h-small"][2] == {"conv": 50688, "ssm": 2097152}
    assert e["DeepSeek-V3"][1] == 1152 and e["gpt-oss-20b"][1] == 2048


# name -> (the checkpoint its source names first, model_layers, max_model_len), by hand from
# each config.json: the context is max_position_embeddings (DeepSeek's 4,096 x yarn 40 =
# 163,840, gpt-oss's 4,096 x 32 = 131,072 already multiplied out; Llama-4-Scout's 10 x 2**20);
# granite-4.0-h-small's source gives none. Nemotron-H-8B's 52 layers are the 52 characters of
# its hybrid_override_pattern (MLP layers too); Falcon-H1's 44 each hold attention and Mamba2.
SOURCES = {
    "Qwen3-Next-80B-A3B": ("Qwen/Qwen3-Next-80B-A3B-Instruct", 48, 262_144),
    "Qwen3.5-27B": ("Qwen/Qwen3.5-27B", 64, 262_144),
    "Nemotron-H-8B": ("nvidia/Nemotron-H-8B-Base-8K", 52, 8_192),
    "Jamba-1.5-Mini": ("ai21labs/AI21-Jamba-1.5-Mini", 32, 262_144),
    "Falcon-H1-7B": ("tiiuae/Falcon-H1-7B", 44, 262_144),
    "granite-4.0-h-small": ("ibm-granite/granite-4.0-h-small", 40, None),
    "gpt-oss-20b": ("openai/gpt-oss-20b", 24, 131_072),
    "gpt-oss-120b": ("openai/gpt-oss-120b", 36, 131_072),
    "Llama-3.1-8B": ("meta-llama/Llama-3.1-8B", 32, 131_072),
    "Llama-4-Scout-17B-16E": ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 48, 10_485_760),
    "DeepSeek-V3": ("deepseek-ai/DeepSeek-V3", 61, 163_840),
    "DeepSeek-V3.2": ("deepseek-ai/DeepSeek-V3.2", 61, 163_840),
    "Kimi-Linear-48B-A3B": ("moonshotai/Kimi-Linear-48B-A3B-Instruct", 27, 1_048_576),
    "LFM2-1.2B": ("LiquidAI/LFM2-1.2B", 16, 128_000),
    "MiniMax-M1": ("a MiniMax-M1", 80, 10_240_000),  # two checkpoints share it: none named
}


def test_every_preset_has_its_bytes_derived_here():
    assert sorted(list_presets(), key=str.lower) == sorted(EXPECTED, key=str.lower)
    assert sorted(SOURCES) == sorted(EXPECTED)
    assert len("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-") == 52
    assert 4096 * 40 == 163_840 and 4096 * 32 == 131_072 and 10 * 2**20 == 10_485_760


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_preset_bytes(name):
    counts, kv, state = EXPECTED[name]
    spec = load_preset(name)
    profile = spec.profile()
    assert {label: profile.count(label) for label in counts} == counts
    assert len(profile.layer_types) == sum(counts.values())
    assert profile.kv_bytes_per_slot == kv
    assert profile.state_const_bytes == state
    assert spec.tp == 1
    # each preset names its source: the checkpoint's config first, and the context it gives
    checkpoint, model_layers, max_model_len = SOURCES[name]
    assert spec.source.startswith(f"{checkpoint} config")
    assert (spec.model_layers, spec.max_model_len) == (model_layers, max_model_len)
    if max_model_len is not None:
        assert f"; max_model_len {max_model_len:,}: " in spec.source
    # the totals the Model page shows: a token's KV over every attention layer, a request's
    # state over every state layer (the model report's, from the spec's kinds)
    attention = len(profile.layer_types) - counts.get(LINEAR, 0)
    assert profile.kv_bytes_per_token == kv * attention == spec.kv_bytes_per_token_all_layers()
    assert (profile.state_bytes_per_request == sum(state.values()) * counts.get(LINEAR, 0)
            == spec.state_bytes_per_request())


def test_preset_orders_and_windows():
    labels = load_preset("Qwen3-Next-80B-A3B").layer_types
    assert labels == (LINEAR, LINEAR, LINEAR, FULL) * 12
    jamba = load_preset("jamba-1.5-mini").layer_types
    assert [i for i, t in enumerate(jamba) if t == FULL] == [4, 12, 20, 28]
    nemotron = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
    expected = [{"M": LINEAR, "*": FULL}[c] for c in nemotron if c != "-"]
    assert list(load_preset("Nemotron-H-8B").layer_types) == expected
    assert load_preset("Falcon-H1-7B").layer_types == (FULL, LINEAR) * 44
    gpt = load_preset("gpt-oss-20b").profile()
    assert gpt.layer_types == (SLIDING, FULL) * 12 and gpt.sliding_window == 128
    scout = load_preset("Llama-4-Scout-17B-16E").profile()
    assert scout.layer_types == (CHUNKED, CHUNKED, CHUNKED, FULL) * 12
    assert scout.attention_chunk_size == 8192 and scout.sliding_window is None
    assert load_preset("Nemotron-H-8B").model_layers == 52


def test_qwen_next_tp2_matches_the_vllm_log():
    profile = load_preset("Qwen3-Next-80B-A3B").with_options(tp=2, kv_dtype="bf16").profile()
    assert profile.kv_bytes_per_slot == 1 * (256 + 256) * BF16 == 1024
    assert profile.state_const_bytes == {
        "conv": (2 * 8 * 128 + 16 * 128) * 3 * BF16,  # 24,576
        "ssm": 16 * 128 * 128 * BF16,  # 524,288
    }


def test_lookup_is_case_insensitive_by_name_or_stem():
    assert load_preset("qwen3-next-80b-a3b") == load_preset("QWEN3-NEXT-80B-A3B")
    assert load_preset(" DeepSeek-V3 ").name == "DeepSeek-V3"


def test_unknown_preset_lists_the_names():
    with pytest.raises(ValueError, match="unknown preset 'Llama-9'.*DeepSeek-V3.*Qwen3-Next"):
        load_preset("Llama-9")


@pytest.mark.parametrize("path", sorted(PRESET_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_preset_files_are_canonical_exports(path):
    """A preset is exactly what ModelSpec.to_dict writes, so export -> load is the same format."""
    data = json.loads(path.read_text())
    spec = ModelSpec.from_dict(data)
    assert spec.to_dict() == data


def test_export_and_load_again(tmp_path):
    spec = load_preset("Nemotron-H-8B").with_options(tp=2, ssm_dtype="float32")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(spec.to_dict()))
    assert load_model_file(path) == spec
    # the Model page's export of raw bytes reads back as the profile it was
    profile = spec.profile()
    path.write_text(json.dumps(profile_to_dict(profile)))
    assert load_model_file(path) == profile
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_model_file(path)
    with pytest.raises(ValueError, match="cannot read .*missing.json.*: No such file"):
        load_model_file(tmp_path / "missing.json")


def test_model_files_are_read_bounded(tmp_path):
    """A device or a hostile file gives one clear error, not a hang or a RecursionError."""
    with pytest.raises(ValueError, match="too large for a model file"):
        load_model_file("/dev/zero")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_model_file(deep)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError, match="must hold a JSON object, not an array"):
        load_model_file(listed)
    # a pipe would block open() until a writer came: refused from its file type
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="cannot read .*fifo.*: it is a pipe, not a file"):
        load_model_file(fifo)
    with pytest.raises(ValueError, match="config.json at .*fifo.* is not a file"):
        spec_from_hf_config(fifo)
    with pytest.raises(ValueError, match="path is 0: give the path of a JSON file"):
        load_model_file(0)  # not file descriptor 0, standard input
