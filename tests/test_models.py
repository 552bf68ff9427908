"""Model specifications: bytes per kind and TP rank (SPEC.md §2), patterns, export, errors."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flatkv import hf_config, hf_hub, plan
from flatkv.dtypes import canonical_dtype, dtype_bytes
from flatkv.models import (
    EXAMPLE_GEOMETRY,
    LAYER_KINDS,
    AttentionLayer,
    GDNLayer,
    LightningLayer,
    Mamba1Layer,
    Mamba2Layer,
    MLALayer,
    ModelSpec,
    ShortConvLayer,
    kind_name,
    layer_from_dict,
)
from flatkv.patterns import format_pattern, layer_runs, parse_pattern
from flatkv.presets import load_preset
from flatkv.profile import CacheProfile
from flatkv.tp_split import PLAIN


def refused_at(spec: ModelSpec, tp: int) -> str:
    """Why ``spec`` at ``tp`` is refused, as its ValueError says it."""
    with pytest.raises(ValueError) as refused:
        spec.with_options(tp=tp)
    return str(refused.value)


QWEN_NEXT_GDN = GDNLayer(k_heads=16, v_heads=32, head_dim_k=128, head_dim_v=128, conv_kernel=4)
QWEN_NEXT_ATTN = AttentionLayer(kv_heads=2, head_dim_k=256, head_dim_v=256)


def qwen_next(**options) -> ModelSpec:
    return ModelSpec.from_pattern(
        name="qwen-next", kinds={"gdn": QWEN_NEXT_GDN, "full": QWEN_NEXT_ATTN},
        pattern="(3*gdn,full)*12", **options,
    )


# ---- dtypes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "canonical", "nbytes"),
    [
        ("float32", "float32", 4), ("fp32", "float32", 4), ("torch.float32", "float32", 4),
        ("bf16", "bfloat16", 2), ("BFloat16", "bfloat16", 2), ("half", "float16", 2),
        ("fp16", "float16", 2), ("fp8", "float8_e4m3fn", 1), ("fp8_e5m2", "float8_e5m2", 1),
        ("float8_e4m3fn", "float8_e4m3fn", 1), ("int8", "int8", 1),
    ],
)
def test_dtype_names_and_aliases(name, canonical, nbytes):
    assert canonical_dtype(name) == canonical
    assert dtype_bytes(name) == nbytes


@pytest.mark.parametrize("bad", ["fp9", "float64", "", None, "bfloat"])
def test_unknown_dtype_lists_known_names(bad):
    with pytest.raises(ValueError, match="unknown dtype.*float32, bfloat16, float16"):
        dtype_bytes(bad)


@pytest.mark.parametrize(("field", "dtype", "canonical"), [
    ("ssm_dtype", "fp8", "float8_e4m3fn"), ("conv_dtype", "int8", "int8"),
    ("ssm_dtype", "float8_e5m2", "float8_e5m2")])
def test_no_state_is_kept_in_one_byte_elements(field, dtype, canonical):
    # vLLM's mamba cache dtypes and SGLang's are float32, bfloat16, float16: an fp8 ssm would
    # halve Qwen3-Next's 1,048,576 B state into a figure no engine has
    spec = load_preset("Qwen3-Next-80B-A3B")
    with pytest.raises(ValueError, match=(
            f"^{field} is {canonical}: no engine keeps a state in it \\(vLLM's and SGLang's "
            "state dtypes are float32, bfloat16, float16\\); give one of those$")):
        spec.with_options(**{field: dtype})
    assert spec.with_options(ssm_dtype="float32").profile().state_const_bytes["ssm"] == 2**21
    # the KV cache does take them
    assert spec.with_options(kv_dtype="fp8").profile().kv_bytes_per_slot == 1_024


# ---- bytes per kind, per TP rank -------------------------------------------------------------


def test_attention_bytes_split_and_replicated():
    attn = AttentionLayer(kv_heads=8, head_dim_k=128, head_dim_v=128)
    assert attn.kv_bytes_per_slot(1, "bfloat16") == 8 * (128 + 128) * 2  # 4,096
    assert attn.kv_bytes_per_slot(4, "bfloat16") == 2 * (128 + 128) * 2  # 1,024
    assert attn.kv_bytes_per_slot(8, "fp8") == 1 * (128 + 128) * 1  # 256
    # fewer KV heads than ranks: one head per rank (replicated), not a fraction
    assert attn.kv_bytes_per_slot(16, "bf16") == 1 * 256 * 2
    # K and V head dims may differ
    assert AttentionLayer(4, 192, 128).kv_bytes_per_slot(2, "float32") == 2 * (192 + 128) * 4


def test_attention_heads_not_divisible_by_tp_is_an_error():
    with pytest.raises(ValueError, match="kv_heads = 8 is not divisible by tp = 3"):
        AttentionLayer(8, 128, 128).kv_bytes_per_slot(3, "bfloat16")
    with pytest.raises(ValueError, match="cannot be replicated evenly over tp = 8"):
        AttentionLayer(3, 128, 128).kv_bytes_per_slot(8, "bfloat16")


def test_mla_is_not_split_by_tp():
    mla = MLALayer(kv_lora_rank=512, qk_rope_head_dim=64)
    assert mla.kv_bytes_per_slot(1, "bfloat16") == (512 + 64) * 2 == 1152
    assert mla.kv_bytes_per_slot(8, "bfloat16") == 1152


def test_gdn_state_per_rank():
    # conv (2*16*128 + 32*128) x (4-1) x 2 B; ssm 32 x 128 x 128 elements
    assert QWEN_NEXT_GDN.state_bytes(1, "bf16", "bf16") == {
        "conv": (2 * 16 * 128 + 32 * 128) * 3 * 2,  # 49,152
        "ssm": 32 * 128 * 128 * 2,  # 1,048,576
    }
    assert QWEN_NEXT_GDN.state_shapes(2) == {"conv": (2 * 8 * 128 + 16 * 128, 3),
                                             "ssm": (16, 128, 128)}
    assert QWEN_NEXT_GDN.state_bytes(2, "bf16", "float32") == {
        "conv": 24576, "ssm": 16 * 128 * 128 * 4,
    }
    with pytest.raises(ValueError, match="gdn.k_heads = 16 is not divisible by tp = 3"):
        QWEN_NEXT_GDN.state_bytes(3, "bf16", "bf16")


def test_mamba2_state_per_rank_and_group_replication():
    nemotron = Mamba2Layer(n_heads=128, head_dim=64, d_state=128, n_groups=8, conv_kernel=4)
    assert nemotron.state_bytes(1, "bf16", "bf16") == {
        "conv": (128 * 64 + 2 * 8 * 128) * 3 * 2,  # 61,440
        "ssm": 128 * 64 * 128 * 2,  # 2,097,152
    }
    assert nemotron.state_bytes(4, "bf16", "bf16") == {
        "conv": (128 * 64 + 2 * 8 * 128) // 4 * 3 * 2,
        "ssm": 32 * 64 * 128 * 2,
    }
    one_group = Mamba2Layer(n_heads=128, head_dim=64, d_state=128, n_groups=1, conv_kernel=4)
    # tp 2 does not divide 1 group: groups are raised to 2, one per rank
    assert one_group.state_shapes(2)["conv"] == ((128 * 64 + 2 * 2 * 128) // 2, 3)
    assert one_group.state_shapes(1)["conv"] == (128 * 64 + 2 * 1 * 128, 3)
    with pytest.raises(ValueError, match="n_groups = 16 is not divisible by tp = 32"):
        Mamba2Layer(n_heads=128, head_dim=64, d_state=128, n_groups=16, conv_kernel=4
                    ).state_shapes(32)
    # every group serves whole heads, and every key head whole value heads: engines refuse
    # anything else, so does the model
    with pytest.raises(ValueError, match=r"^mamba2.n_heads = 128 is not a multiple of "
                       "mamba2.n_groups = 12: no engine loads such a model"):
        Mamba2Layer(n_heads=128, head_dim=64, d_state=128, n_groups=12, conv_kernel=4)
    with pytest.raises(ValueError, match=r"^gdn.v_heads = 3 is not a multiple of gdn.k_heads "
                       "= 16"):
        GDNLayer(k_heads=16, v_heads=3, head_dim_k=128, head_dim_v=128, conv_kernel=4)
    # only a single group is replicated (vLLM's MambaMixer2 asserts n_groups % tp == 0 or
    # n_groups == 1): Nemotron-H's 8 groups at TP 16 are refused, not raised to 16
    with pytest.raises(ValueError, match="n_groups = 8 is not divisible by tp = 16"):
        nemotron.state_shapes(16)


def test_mamba1_state_per_rank():
    jamba = Mamba1Layer(d_inner=8192, d_state=16, conv_kernel=4)
    assert jamba.state_bytes(1, "bf16", "bf16") == {"conv": 8192 * 3 * 2, "ssm": 8192 * 16 * 2}
    assert jamba.state_bytes(2, "bf16", "fp32") == {"conv": 4096 * 3 * 2, "ssm": 4096 * 16 * 4}


def test_mla_with_the_lightning_indexer_keeps_its_keys_per_token():
    # DeepSeek-V3.2: the latent and 128 fp8 indexer bytes with a float32 scale per 128; in fp8
    # the latent is FlashMLA sparse's, 512 fp8 + 4 float32 scales + 64 bfloat16 rope values
    v32 = MLALayer(kv_lora_rank=512, qk_rope_head_dim=64, index_head_dim=128)
    assert v32.kv_bytes_per_slot(1, "bf16") == 576 * 2 + 132 == 1_284
    assert v32.kv_bytes_per_slot(8, "fp8") == 512 + 16 + 128 + 132 == 788  # not split by TP
    assert MLALayer(512, 64).kv_bytes_per_slot(1, "fp8") == 576  # a plain latent
    with pytest.raises(ValueError, match=r"mla.index_head_dim 0 must be positive: give 1 or more"):
        MLALayer(512, 64, index_head_dim=0)
    assert layer_from_dict(v32.geometry()) == v32
    # the Model page and the model report say how those bytes add up; plain layers need not
    assert v32.kv_bytes_note(1, "fp8") == (
        "788 B a token = 512 + 4 x 4 + 64 x 2 = 656 B of latent (fp8 with a float32 scale per "
        "128, its rope part in bfloat16: vLLM's fp8_ds_mla, SGLang's alike) + 128 + 1 x 4 = 132 B "
        "of the indexer's keys (fp8 with a float32 scale per 128, whatever the KV dtype)")
    assert v32.kv_bytes_note(1, "bf16").startswith(
        "1,284 B a token = (512 + 64) x 2 = 1,152 B of latent + 128 + 1 x 4 = 132 B of the ")
    assert MLALayer(512, 64).kv_bytes_note(1, "fp8") == ""
    assert AttentionLayer(8, 128, 128).kv_bytes_note(1, "bf16") == ""
    spec = ModelSpec.from_pattern(name="v32", kinds={"mla": v32}, pattern="mla*2",
                                  kv_dtype="fp8")
    assert spec.kv_bytes_notes() == [f"mla: {v32.kv_bytes_note(1, 'fp8')}"]


def read_back_hybrid(state_layer, name: str) -> ModelSpec:
    """``(2*name,full)*2`` of ``state_layer`` and 8 x 128 attention, which exports and reads
    back as itself."""
    spec = ModelSpec.from_pattern(name=f"{name}-like", pattern=f"(2*{name},full)*2", kinds={
        name: state_layer, "full": AttentionLayer(kv_heads=8, head_dim_k=128, head_dim_v=128)})
    assert ModelSpec.from_dict(spec.to_dict()) == spec
    return spec


def test_short_conv_state_per_rank_is_conv_only():
    # LFM2's gated short convolution: (channels / tp, K - 1) in the conv dtype, no ssm tensor
    lfm2 = ShortConvLayer(channels=2048, conv_kernel=3)
    assert lfm2.state_bytes(1, "bf16", "fp32") == {"conv": 2048 * 2 * 2}
    assert lfm2.state_bytes(4, "fp32", "bf16") == {"conv": 512 * 2 * 4}
    with pytest.raises(ValueError, match=r"short_conv.channels = 2,048 is not divisible by tp = 3"):
        lfm2.state_shapes(3)
    spec = read_back_hybrid(lfm2, "conv")
    assert spec.to_dict()["kinds"]["conv"] == {"kind": "short_conv", "channels": 2048,
                                               "conv_kernel": 3}


def test_lightning_state_per_rank_is_ssm_only():
    # MiniMax's lightning attention: vLLM's linear_attention_state_shape (heads / tp, head_dim,
    # head_dim) in the ssm dtype, no conv tensor
    m1 = LightningLayer(heads=64, head_dim=128)
    assert m1.state_bytes(1, "bf16", "bf16") == {"ssm": 64 * 128 * 128 * 2} == {"ssm": 2_097_152}
    assert m1.state_bytes(8, "fp32", "bf16") == {"ssm": 8 * 128 * 128 * 2}
    with pytest.raises(ValueError, match=r"lightning.heads = 64 is not divisible by tp = 3"):
        m1.state_shapes(3)
    spec = read_back_hybrid(m1, "lightning")
    assert spec.to_dict()["kinds"]["lightning"] == {"kind": "lightning", "heads": 64,
                                                    "head_dim": 128}
    profile = spec.profile()
    assert profile.state_const_bytes == {"ssm": 2_097_152} and profile.conv_rows is None
    assert profile.ssm_element_bytes == 2
    with pytest.raises(ValueError, match=r"both None: a state layer keeps at least one"):
        plan.state_const_bytes(None, 2, None, 2)


@pytest.mark.parametrize(
    ("cls", "kwargs", "message"),
    [
        (AttentionLayer, {"kv_heads": 0, "head_dim_k": 128, "head_dim_v": 128}, "kv_heads"),
        (ShortConvLayer, {"channels": 2048, "conv_kernel": 1}, "short_conv.conv_kernel"),
        (LightningLayer, {"heads": 64, "head_dim": 0}, "lightning.head_dim"),
        (AttentionLayer, {"kv_heads": 8, "head_dim_k": 0, "head_dim_v": 128}, "head_dim_k"),
        (AttentionLayer, {"kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128.0}, "head_dim_v"),
        (AttentionLayer, {"kv_heads": True, "head_dim_k": 1, "head_dim_v": 1}, "kv_heads"),
        (AttentionLayer, {"kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128,
                          "sliding_window": 0}, "sliding_window"),
        (GDNLayer, {"k_heads": 16, "v_heads": 32, "head_dim_k": 128, "head_dim_v": 128,
                    "conv_kernel": 1}, "conv_kernel"),
        (Mamba2Layer, {"n_heads": 10**7, "head_dim": 64, "d_state": 128, "n_groups": 1,
                       "conv_kernel": 4}, "too large to be real"),
        (MLALayer, {"kv_lora_rank": -1, "qk_rope_head_dim": 64}, "kv_lora_rank"),
    ],
)
def test_bad_geometry_is_rejected(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls(**kwargs)


# ---- ModelSpec -> CacheProfile ----------------------------------------------------------------


def test_qwen_next_profile_tp1_and_tp2():
    spec = qwen_next()
    profile = spec.profile()
    assert isinstance(profile, CacheProfile)
    # every fourth layer full attention, 48 in all
    assert profile.layer_types == (("linear_attention",) * 3 + ("full_attention",)) * 12
    assert profile.count("full_attention") == 12 and profile.count("linear_attention") == 36
    assert profile.kv_bytes_per_slot == 2 * (256 + 256) * 2 == 2048
    assert profile.state_const_bytes == {"conv": 49152, "ssm": 32 * 128 * 128 * 2}
    tp2 = spec.with_options(tp=2, kv_dtype="bf16").profile()
    assert tp2.kv_bytes_per_slot == 1 * (256 + 256) * 2 == 1024
    assert tp2.state_const_bytes == {"conv": 24576, "ssm": 16 * 128 * 128 * 2}  # 524,288
    assert list(profile.state_const_bytes) == ["conv", "ssm"]  # row order
    comps = tp2.components()
    assert len(comps) == 12 + 36 * 2
    # K and V apart, as SGLang logs them: 2 heads x 256 x 2 B each, one head at TP 2
    assert (profile.kv_dtype, profile.kv_tensor_bytes) == ("bfloat16", (1024, 1024))
    assert tp2.kv_tensor_bytes == (512, 512)


def test_with_options_changes_only_what_is_given():
    spec = qwen_next()
    changed = spec.with_options(ssm_dtype="fp32")
    assert (changed.tp, changed.kv_dtype, changed.conv_dtype, changed.ssm_dtype) == (
        1, "bfloat16", "bfloat16", "float32")
    assert changed.state_const_bytes()["ssm"] == 32 * 128 * 128 * 4
    assert changed.with_options(kv_dtype="fp8").kv_bytes_per_slot() == 2 * 512 * 1
    with pytest.raises(ValueError, match="tp 0 must be positive: give 1 or more; the "
                       "number of GPUs"):
        spec.with_options(tp=0)
    with pytest.raises(ValueError, match="kv_dtype: unknown dtype"):
        spec.with_options(kv_dtype="fp4")


def test_falcon_style_double_layers_and_mixed_sliding():
    spec = ModelSpec.from_pattern(
        name="falcon-like",
        kinds={"attn": AttentionLayer(2, 128, 128),
               "ssm": Mamba2Layer(24, 128, 256, 1, 4)},
        pattern="(attn,ssm)*3",
    )
    assert spec.layer_types == ("full_attention", "linear_attention") * 3
    assert spec.profile().state_const_bytes == {
        "conv": (24 * 128 + 2 * 1 * 256) * 3 * 2, "ssm": 24 * 128 * 256 * 2}
    gpt = ModelSpec.from_pattern(
        name="gpt-oss-like",
        kinds={"s": AttentionLayer(8, 64, 64, sliding_window=128), "f": AttentionLayer(8, 64, 64)},
        pattern="(s,f)*2",
    )
    profile = gpt.profile()
    assert profile.layer_types == ("sliding_attention", "full_attention") * 2
    assert profile.sliding_window == 128
    assert profile.kv_bytes_per_slot == 8 * 128 * 2


def test_chunked_attention_layers_carry_their_chunk_to_the_profile():
    spec = ModelSpec.from_pattern(
        name="llama4-like",
        kinds={"c": AttentionLayer(8, 128, 128, attention_chunk_size=8192),
               "f": AttentionLayer(8, 128, 128)},
        pattern="(3*c,f)*2")
    profile = spec.profile()
    assert profile.layer_types == ("chunked_attention",) * 3 + ("full_attention",) + (
        "chunked_attention",) * 3 + ("full_attention",)
    assert profile.attention_chunk_size == 8192 and profile.sliding_window is None
    assert profile.kv_bytes_per_slot == 8 * 256 * 2
    assert kind_name(AttentionLayer(8, 128, 128, attention_chunk_size=8192)) == "chunked"
    with pytest.raises(ValueError, match="a layer is sliding or chunked, give one"):
        AttentionLayer(8, 128, 128, sliding_window=128, attention_chunk_size=8192)
    two = ModelSpec(name="two", layers=(AttentionLayer(8, 64, 64, attention_chunk_size=8192),
                                        AttentionLayer(8, 64, 64, attention_chunk_size=4096)))
    # the chunks as figures, not a Python list ("[4096, 8192]"), found by fuzzing the editor
    with pytest.raises(ValueError, match="^chunked layers of 'two' have different chunks "
                       r"\(4,096 and 8,192 tokens\): the planner takes one attention_chunk_size; "
                       "give those kinds the same chunk$"):
        two.profile()


def test_profile_names_the_tensors_sglang_logs_an_attention_layer_by():
    # MLA: one latent tensor (V3.2's fp8 latent 656 B and its indexer keys 132 B counted in it)
    v32 = ModelSpec(name="v32", layers=(MLALayer(512, 64, index_head_dim=128),),
                    kv_dtype="fp8").profile()
    assert (v32.kv_dtype, v32.kv_tensor_bytes) == ("float8_e4m3fn", (656 + 132,))
    # K and V of different head dims: 8 heads x 192 and 8 x 128, 2 B each
    mha = ModelSpec(name="kv", layers=(AttentionLayer(8, 192, 128),)).profile()
    assert mha.kv_tensor_bytes == (8 * 192 * 2, 8 * 128 * 2) == (3072, 2048)
    # kinds of equal bytes that split apart name no split (their dtype still); a state-only
    # model neither
    apart = ModelSpec(name="apart", layers=(AttentionLayer(8, 192, 128),
                                            AttentionLayer(8, 160, 160))).profile()
    assert (apart.kv_bytes_per_slot, apart.kv_tensor_bytes, apart.kv_dtype) == (
        5120, (), "bfloat16")
    state = ModelSpec(name="state", layers=(Mamba2Layer(8, 64, 128, 1, 4),)).profile()
    assert (state.kv_tensor_bytes, state.kv_dtype) == ((), None)


def test_profile_refuses_attention_layers_of_different_bytes():
    layers = (AttentionLayer(8, 128, 128), AttentionLayer(4, 128, 128))
    spec = ModelSpec(name="mixed", layers=layers)
    # each kind's bytes a token: 8 and 4 heads x (128 + 128) x 2 B
    with pytest.raises(ValueError, match=r"differ in bytes per token \(full: 4,096 B; "
                                         r"full_2: 2,048 B\)"):
        spec.profile()
    # the summary still shows both, per kind
    rows = spec.summary()
    assert [(r.name, r.kv_bytes_per_token) for r in rows] == [("full", 4096), ("full_2", 2048)]
    # many kinds are named six at most, one of each size first, not in a line of 12 KB (256
    # kinds): six kinds of 8 heads x 256 B of K + V dims x 2 B = 4,096 B, one of 4 heads 2,048 B
    splits = ((128, 128), (192, 64), (64, 192), (160, 96), (96, 160), (224, 32))
    many = ModelSpec(name="many", layers=tuple(AttentionLayer(8, k, v) for k, v in splits)
                     + (AttentionLayer(4, 128, 128),))
    with pytest.raises(ValueError, match=r"differ in bytes per token \(full: 4,096 B; full_2: "
                                         r"4,096 B; full_3: 4,096 B; full_4: 4,096 B; full_5: "
                                         r"4,096 B; full_7: 2,048 B; and 1 more kind\): "):
        many.profile()


def test_profile_refuses_state_layers_of_different_bytes_and_windows():
    spec = ModelSpec(name="s", layers=(QWEN_NEXT_GDN, Mamba1Layer(8192, 16, 4)))
    # GDN: conv (2 x 16 x 128 + 32 x 128) x 3 x 2 B, ssm 32 x 128 x 128 x 2 B; Mamba-1: conv
    # 8,192 x 3 x 2 B, ssm 8,192 x 16 x 2 B
    with pytest.raises(ValueError, match=r"differ in state bytes \(gdn: conv 49,152 B \+ ssm "
                                         r"1,048,576 B; mamba1: conv 49,152 B \+ ssm 262,144 B\)"):
        spec.profile()
    layers = (AttentionLayer(8, 64, 64, 128), AttentionLayer(8, 64, 64, 256))
    spec = ModelSpec(name="w", layers=layers)
    with pytest.raises(ValueError, match="different windows"):
        spec.profile()


def test_summary_rows_and_totals():
    spec = qwen_next(tp=2)
    rows = {r.name: r for r in spec.summary()}
    assert rows["gdn"].count == 36 and rows["full"].count == 12
    assert rows["gdn"].state_bytes_per_layer == 24576 + 524288
    assert rows["gdn"].state_shapes == {"conv": (4096, 3), "ssm": (16, 128, 128)}
    assert rows["full"].kv_bytes_per_token == 1024
    assert spec.kv_bytes_per_token_all_layers() == 12 * 1024
    assert spec.state_bytes_per_request() == 36 * (24576 + 524288)


def test_spec_validation_errors():
    with pytest.raises(ValueError, match="layers is empty"):
        ModelSpec(name="x", layers=())
    with pytest.raises(ValueError, match="name is '', which is blank"):
        ModelSpec(name="", layers=(QWEN_NEXT_ATTN,))
    with pytest.raises(ValueError, match="layers holds 10,001 cache layers, too many to be "
                       "real: give 2,048 or fewer"):
        ModelSpec(name="x", layers=(QWEN_NEXT_ATTN,) * 10_001)
    with pytest.raises(ValueError, match=r"layers\[1\] .* must be a cache layer: give one "):
        ModelSpec(name="x", layers=(QWEN_NEXT_ATTN, "full"))
    with pytest.raises(ValueError, match="gdn.k_heads = 16 is not divisible by tp = 3"):
        qwen_next(tp=3)


# ---- patterns ---------------------------------------------------------------------------------


def test_parse_pattern_forms():
    assert parse_pattern("(3*gdn,full)*2") == ["gdn", "gdn", "gdn", "full"] * 2
    assert parse_pattern("gdn*2, full") == ["gdn", "gdn", "full"]
    assert parse_pattern("2*(a,3*b)") == ["a", "b", "b", "b"] * 2
    assert parse_pattern(" a ") == ["a"]
    assert layer_runs(["a", "a", "b", "a"]) == [("a", 2), ("b", 1), ("a", 1)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "^layer pattern is empty: write one name per cache layer"),
        ("(a,b", r"expected '\)'"),
        ("a,,b", "expected a layer name at character 3, got ','"),
        ("0*a", "repeat count '0' at character 1 must be positive: give 1 or more"),
        ("a;b", "unexpected ';'"),
        ("(a)*10000000", "more than 2,048 cache layers"),
        ("((a)*1000)*1000000000", "more than 2,048 cache layers"),
        ("a b", "unexpected 'b'"),
    ],
)
def test_parse_pattern_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_pattern(text)


def test_format_pattern_is_compact():
    assert format_pattern(["gdn", "gdn", "gdn", "full"] * 12) == "(3*gdn,full)*12"
    assert format_pattern(["full"] * 32) == "32*full"
    assert format_pattern(["s", "f"] * 12) == "(s,f)*12"
    nemotron = list("MMMM*MMMMM*MMMMM*MMMMM*MMMMM".replace("*", "A"))
    assert format_pattern(nemotron) == "4*M,(A,5*M)*4"


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=60))
def test_format_then_parse_round_trips(names):
    assert parse_pattern(format_pattern(names)) == names


# ---- export format ---------------------------------------------------------------------------


def test_to_dict_from_dict_round_trip_is_exact():
    spec = qwen_next(tp=2, ssm_dtype="fp32", source="test", notes="n", model_layers=48,
                     attention_heads=16)
    data = spec.to_dict()
    assert data["pattern"] == "(3*gdn,full)*12" and data["attention_heads"] == 16
    assert data["kinds"]["full"] == {"kind": "attention", "kv_heads": 2, "head_dim_k": 256,
                                     "head_dim_v": 256, "sliding_window": None,
                                     "attention_chunk_size": None}
    back = ModelSpec.from_dict(data)
    assert back == spec
    assert back.to_dict() == data
    assert back.kinds == spec.kinds


def test_query_heads_given_limit_the_tp_and_unknown_ones_do_not():
    assert qwen_next(tp=16, attention_heads=16).attention_heads == 16  # 16 splits every count
    with pytest.raises(ValueError, match="attention_heads 0 must be positive: give 1 or more"):
        qwen_next(attention_heads=0)
    # 2 KV heads and 6 query heads: TP 4 replicates the KV heads but splits 6 unevenly; TP 6
    # replicates the KV heads three times and splits 6
    layer = {"full": AttentionLayer(2, 128, 128)}
    assert ModelSpec.from_pattern(name="m", kinds=layer, pattern="full*2", tp=4).splits_over(4)
    with pytest.raises(ValueError, match=r"^attention_heads = 6 is not divisible by tp = 4: "
                       r"choose a tp that divides it, as engines split the query heads over the "
                       r"ranks \(tp up to 64 that split the model: 1, 2, 6\)"):
        ModelSpec.from_pattern(name="m", kinds=layer, pattern="full*2", tp=4, attention_heads=6)
    # a KV head serves a whole group of query heads: 64 KV heads under 32 query heads, or 8
    # under 31, is no model (the config.json reader refuses it too), by the kind's own name
    for heads, kv in ((32, 64), (31, 8)):
        with pytest.raises(ValueError, match=rf"^attention_heads = {heads} is not a multiple of "
                           rf"att.kv_heads = {kv}: no engine loads such a model; check the "
                           "model's heads, or leave attention_heads unset \\(0 in the Model "
                           "page's editor\\)$"):
            ModelSpec.from_pattern(name="m", kinds={"att": AttentionLayer(kv, 128, 128)},
                                   pattern="att*2", attention_heads=heads)


def test_from_dict_keeps_user_kind_names():
    data = qwen_next().to_dict()
    data["kinds"] = {"lin": data["kinds"]["gdn"], "att": data["kinds"]["full"]}
    data["pattern"] = "(lin,lin,lin,att)*12"
    spec = ModelSpec.from_dict(data)
    assert spec.pattern == "(3*lin,att)*12"
    assert spec.layers == qwen_next().layers


def test_a_kind_named_after_another_layer_type_is_refused():
    # a full-attention kind named linear_attention would print beside the planner's
    # linear_attention group (the GDN layers) and say the opposite; its own label is fine
    data = qwen_next().to_dict()
    data["kinds"] = {"gdn": data["kinds"]["gdn"], "linear_attention": data["kinds"]["full"]}
    data["pattern"] = "(3*gdn,linear_attention)*12"
    with pytest.raises(ValueError, match="kind name 'linear_attention' names another layer "
                       "type: this kind's layers are full_attention; name it 'full_attention' "
                       "or a name that is no layer type"):
        ModelSpec.from_dict(data)
    data["kinds"] = {"linear_attention": data["kinds"]["gdn"],
                     "sliding_attention": data["kinds"]["linear_attention"]}
    data["pattern"] = "(3*linear_attention,sliding_attention)*12"
    with pytest.raises(ValueError, match="kind name 'sliding_attention' names another layer "
                       "type: this kind's layers are full_attention"):
        ModelSpec.from_dict(data)
    data["kinds"]["full_attention"] = data["kinds"].pop("sliding_attention")
    data["pattern"] = "(3*linear_attention,full_attention)*12"
    assert ModelSpec.from_dict(data).layers == qwen_next().layers


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("kinds"), "missing 'kinds'"),
        (lambda d: d.pop("pattern"), "missing 'pattern'"),
        (lambda d: d.update(kinds={}), "kinds must be a non-empty object"),
        (lambda d: d.update(extra=1), "unknown field 'extra': fields are "),
        (lambda d: d.update(format="other/9"), "not supported"),
        (lambda d: d["kinds"]["full"].update(kind="rwkv"), "kind = 'rwkv' is unknown"),
        (lambda d: d["kinds"]["full"].pop("kv_heads"), "missing field 'kv_heads'"),
        (lambda d: d["kinds"]["full"].update(kv_heads=0),
         "attention.kv_heads 0 must be positive: give 1 or more"),
        (lambda d: d["kinds"]["full"].update(head_dim_k=0),
         "attention.head_dim_k 0 must be positive: give 1 or more"),
        (lambda d: d["kinds"]["full"].update(heads=2),
         "unknown field 'heads': fields are kv_heads, "),
        (lambda d: d["kinds"]["gdn"].update(k_heads="16"),
         r"gdn.k_heads '16' \(str\) must be a whole number: give 1 or more"),
        (lambda d: d.update(pattern="(gdn,full)*10000000"), "too large to be real|more than"),
        (lambda d: d.update(pattern="(gdn,fulll)*2"),
         "unknown kind 'fulll': known kinds are 'gdn', 'full'"),
        (lambda d: d.update(tp=2.0), r"tp 2\.0 \(float\) must be a whole number: give 1 or more"),
        (lambda d: d.update(tp=10**6), "too large to be real"),
        (lambda d: d.update(kv_dtype="fp4"), "unknown dtype 'fp4'"),
        (lambda d: d.update(name=None), "model specification name is None, not text"),
    ],
)
def test_from_dict_errors(mutate, message):
    data = qwen_next().to_dict()
    mutate(data)
    with pytest.raises(ValueError, match=message):
        ModelSpec.from_dict(data)


def test_from_dict_rejects_non_objects():
    with pytest.raises(ValueError, match="must be a JSON object"):
        ModelSpec.from_dict([1, 2])
    with pytest.raises(ValueError, match="must be an object with a 'kind'"):
        layer_from_dict("attention")


def llama_file_error(mutate) -> str:
    """The error of Llama-3.1-8B's model file as ``mutate`` changes it."""
    data = load_preset("Llama-3.1-8B").to_dict()
    mutate(data)
    with pytest.raises(ValueError) as caught:
        ModelSpec.from_dict(data)
    return str(caught.value)


LLAMA_LAYER = ('{"kind": "attention", "kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128}')


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        # each said what was wrong and not what to write ("model specification is missing
        # 'name'", "source must be a string, got None"); now the fix, with a value to copy
        (lambda d: d.pop("name"),
         "model specification is missing 'name': add the model's name, e.g. \"name\": \"custom\""),
        (lambda d: d.pop("kinds"),
         "model specification is missing 'kinds': add its cache-layer geometries by name, e.g. "
         f'"kinds": {{"full": {LLAMA_LAYER}}}'),
        (lambda d: d.pop("pattern"),
         "model specification is missing 'pattern': add its layers in order, over the kinds' "
         'names, e.g. "pattern": "32*full"'),
        (lambda d: d.update(source=None),
         'source None must be a string: give text, e.g. "meta-llama/Llama-3.1-8B '
         'config.json", or leave it out'),
        (lambda d: d.update(notes=3),
         'notes 3 must be a string: give text, e.g. "KV cache in FP8 as served.", or '
         "leave it out"),
        (lambda d: d.update(format="x"),
         "format = 'x' is not supported: this version reads 'flatkv-model/1'; give \"format\": "
         '"flatkv-model/1" or leave it out'),
        (lambda d: [d["kinds"]["full"].pop(k) for k in ("kv_heads", "head_dim_v")],
         "kinds['full'] (attention) is missing fields 'kv_heads', 'head_dim_v': give kv_heads, "
         f"head_dim_k, head_dim_v, e.g. {LLAMA_LAYER}"),
        (lambda d: d["kinds"].update(full="attention"),
         "kinds['full'] 'attention' must be an object with a 'kind': give one such as "
         f"{LLAMA_LAYER}"),
        # MAX_CACHE_LAYERS = 2,048
        (lambda d: d.update(kinds={f"k{i}": d["kinds"]["full"] for i in range(2049)}),
         "kinds has 2,049 entries, too many to be real: give 2,048 or fewer, one per distinct "
         "layer geometry"),
    ],
)
def test_a_model_file_error_gives_the_fix(mutate, message):
    assert llama_file_error(mutate) == message


def test_the_fixes_examples_are_valid():
    # an example that no longer loads would send the user from one error to another
    for kind in LAYER_KINDS:
        assert layer_from_dict({"kind": kind, **EXAMPLE_GEOMETRY[kind]}).kind == kind
    spec = ModelSpec.from_dict({"name": "custom", "kinds": {"full": json.loads(LLAMA_LAYER)},
                                "pattern": "32*full"})
    # Llama-3.1-8B's cache: 32 layers of 8 KV heads x (128 + 128) dims
    assert spec.layers == load_preset("Llama-3.1-8B").layers
    with pytest.raises(ValueError) as caught:
        ModelSpec.from_dict([1])
    assert str(caught.value) == (
        "a model specification (list) must be a JSON object: give one such as "
        f'{{"name": "custom", "kinds": {{"full": {LLAMA_LAYER}}}, "pattern": "32*full"}} '
        "(`model --export` writes one)")


LONG = "x" * 1000
# units.quoted_value: a string's first 80 characters and its length; a list's items, each by
# its start (at most half the 80), inside its closed brackets
LONG_SHOWN = repr("x" * 80) + "... (1,000 characters)"
LONG_LISTED = "[" + repr("x" * 40) + "... (1,000 characters)]"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        # a 1,000-character value was quoted whole: a line of ~1.1 KB
        (lambda d: d["kinds"]["full"].update(sliding_window=LONG),
         f"kinds['full']: attention.sliding_window {LONG_SHOWN} (str) must be a whole number: "
         "give 1 or more; check the model's value"),
        (lambda d: d["kinds"]["full"].update(kind=LONG),
         f"kinds['full'].kind = {LONG_SHOWN} is unknown: use one of ['attention', 'mla', 'gdn', "
         "'mamba2', 'mamba1', 'short_conv', 'lightning']"),
        (lambda d: d["kinds"].update(full=LONG),
         f"kinds['full'] {LONG_SHOWN} must be an object with a 'kind': give one such as "
         f"{LLAMA_LAYER}"),
        (lambda d: d.update(source=[LONG]),
         f"source {LONG_LISTED} must be a string: give text, e.g. \"meta-llama/Llama-3.1-8B "
         'config.json", or leave it out'),
        (lambda d: d.update(name=[LONG]),
         f"model specification name is {LONG_LISTED}, not text: give the model's name in "
         "printable characters, e.g. 'custom'"),
        (lambda d: d.update(format=LONG),
         f"format = {LONG_SHOWN} is not supported: this version reads 'flatkv-model/1'; give "
         '"format": "flatkv-model/1" or leave it out'),
        (lambda d: d.update(mtp_layer_types=[LONG]),
         f"mtp_layer_types is {LONG_LISTED}: give the MTP modules' layer types, each one of "
         "full_attention, sliding_attention, chunked_attention, or none"),
        (lambda d: d.update(config_mamba_ssm_dtype=LONG),
         f"config_mamba_ssm_dtype is {LONG_SHOWN}: give the config's mamba_ssm_dtype as SGLang "
         "reads it (float32, bfloat16, float16), or None when the config names none"),
        (lambda d: d.update(max_model_len_typed=LONG),
         f"max_model_len_typed is {LONG_SHOWN}: give true or false"),
        # a short value is quoted whole, as before
        (lambda d: d["kinds"]["full"].update(sliding_window="8"),
         "kinds['full']: attention.sliding_window '8' (str) must be a whole number: give 1 or "
         "more; check the model's value"),
        (lambda d: d.update(mtp_layer_types=["mtp"]),
         "mtp_layer_types is ['mtp']: give the MTP modules' layer types, each one of "
         "full_attention, sliding_attention, chunked_attention, or none"),
    ],
)
def test_a_long_value_in_a_model_file_is_quoted_by_its_start(mutate, message):
    assert llama_file_error(mutate) == message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: hf_config.resolve_config(None),
         "config is NoneType: give the config.json as a dict"),
        (lambda: AttentionLayer(8, 64, 64).kv_bytes_per_slot(0, "bf16"),
         "tp 0 must be positive: give 1 or more"),
        (lambda: plan.plan_tensors(None, block_size=16, alignment=16, budget_bytes=10**9),
         "components is None: give a list of ComponentSpec"),
        (lambda: hf_config.spec_from_hf_config({"model_type": "llama"}, source=5),
         "source is 5: give a line of text"),
    ],
)
def test_library_calls_with_the_wrong_kind_of_argument_raise_valueerror(call, message):
    # not a TypeError, AttributeError or ZeroDivisionError from deep inside
    with pytest.raises(ValueError, match=message):
        call()


def test_a_model_id_is_a_string():
    assert hf_hub.is_model_id("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert not hf_hub.is_model_id(None)


def test_a_tp_that_does_not_split_a_kind_names_the_kind_as_the_model_does():
    # the error names "global", the kind's name in this model and on the Model page, not the
    # layer type "attention" every attention kind shares
    with pytest.raises(ValueError, match=r"^global\.kv_heads = 8 is not divisible by tp = 3"):
        ModelSpec.from_pattern(name="m", kinds={"global": AttentionLayer(8, 128, 128)},
                               pattern="global*4", tp=3)
    # the preset's own file read as a model file (its user wrote it): its field names
    model_file = ModelSpec.from_dict(load_preset("Qwen3-Next-80B-A3B").to_dict())
    with pytest.raises(ValueError, match=r"^gdn\.k_heads = 16 is not divisible by tp = 3"):
        model_file.with_options(tp=3)


def test_a_tp_that_does_not_split_a_preset_is_said_in_plain_words():
    # a preset's user never saw its file: no "gdn.k_heads". Qwen3-Next's 16 GDN key heads split
    # over the TPs dividing 16 (1, 2, 4, 8, 16), its 2 KV heads over 1, 2 and any even TP, its
    # 16 query heads over the divisors of 16: TP 1, 2, 4, 8 and 16 (32 leaves half a key head)
    assert refused_at(load_preset("Qwen3-Next-80B-A3B"), 3) == (
        "Qwen3-Next-80B-A3B: its linear-attention (Gated DeltaNet) layers have 16 key heads, "
        "and TP 3 does not divide them: choose TP 1, 2, 4, 8 or 16, the TPs up to 64 that "
        "split the model")
    # Falcon-H1-7B's 2 KV heads: TP 3 neither divides 2 nor is a multiple of it; its 24
    # Mamba2 heads and 12 query heads take 1, 2, 4, 6 and 12 of the TPs 2 takes (2 and its
    # even multiples); 8 leaves 1.5 query heads a rank, 24 half of one
    assert refused_at(load_preset("Falcon-H1-7B"), 3) == (
        "Falcon-H1-7B: its full-attention layers have 2 KV heads, and TP 3 neither divides them "
        "nor is a multiple of them (fewer KV heads than ranks are copied, each onto the same "
        "number of ranks): choose TP 1, 2, 4, 6 or 12, the TPs up to 64 that split the model")
    # Nemotron-H-8B's 8 Mamba2 groups over TP 16: its 128 heads split, the groups do not, and
    # only one group is copied; TPs dividing 8 (the 32 query heads and 8 KV heads take them)
    assert refused_at(load_preset("Nemotron-H-8B"), 16) == (
        "Nemotron-H-8B: its Mamba2 layers have 8 groups, and TP 16 does not divide them "
        "(engines replicate only a single group across ranks: vLLM's MambaMixer2 asserts "
        "\"num_groups must equal 1\"): choose TP 1, 2, 4 or 8, the TPs up to 64 that split "
        "the model")
    # DeepSeek-V3's MLA splits over any TP; its 128 query heads over the powers of 2 to 64
    assert refused_at(load_preset("DeepSeek-V3"), 6) == (
        "DeepSeek-V3: it has 128 query heads, and TP 6 does not divide them (engines split the "
        "query heads over the ranks): choose TP 1, 2, 4, 8, 16, 32 or 64, the TPs up to 64 that "
        "split the model")
    # the figures, for a caller that words them its own way (the hand editor does)
    refusal = load_preset("DeepSeek-V3").tp_refusal(6)
    assert (refusal.field, refusal.value, refusal.tp, refusal.fits) == (
        "attention_heads", 128, 6, (1, 2, 4, 8, 16, 32, 64))
    assert load_preset("DeepSeek-V3").tp_refusal(8) is None


def test_a_refusal_lists_the_tps_that_split_the_model_or_counts_them():
    # 1 KV head and 720 query heads (2^4 x 3^2 x 5): the TPs up to 64 dividing 720 are 1, 2,
    # 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 24, 30, 36, 40, 45, 48 and 60 (21); the first
    # 8 listed
    spec = replace(ModelSpec.from_pattern(name="m", kinds={"a": AttentionLayer(1, 128, 128)},
                                          pattern="a*2", attention_heads=720), _origin=PLAIN)
    assert refused_at(spec, 7) == (
        "m: it has 720 query heads, and TP 7 does not divide them (engines split the query "
        "heads over the ranks): choose TP 1, 2, 3, 4, 5, 6, 8, 9, ... (the 21 TPs up to 64 that "
        "split the model)")
    # 7 KV heads under 7 query heads: TP 7 splits both, 2 neither; past 7 the query heads
    # do not split, so 1 and 7 alone
    seven = replace(spec, layers=(AttentionLayer(7, 128, 128),) * 2, attention_heads=7, tp=1,
                    _kind_names=())
    assert refused_at(seven, 2) == (
        "m: its full-attention layers have 7 KV heads, and TP 2 does not divide them: choose "
        "TP 1 or 7, the TPs up to 64 that split the model")
    # one GDN key head splits over TP 1 alone
    one = replace(seven, layers=(GDNLayer(1, 2, 128, 128, 4),), attention_heads=None)
    assert refused_at(one, 2) == (
        "m: its linear-attention (Gated DeltaNet) layers have 1 key head, and TP 2 does not "
        "divide it: choose "
        "TP 1, the only TP up to 64 that splits the model")


def test_a_models_mtp_layer_types_are_checked_and_kept():
    spec = load_preset("Qwen3-Next-80B-A3B")
    sliding = ModelSpec.from_dict({**spec.to_dict(), "mtp_layer_types": ["sliding_attention"]})
    assert sliding.mtp_layer_types == ("sliding_attention",)
    # a TP or dtype change keeps them, and so does the export
    assert sliding.with_options(tp=2, kv_dtype="fp8").mtp_layer_types == ("sliding_attention",)
    assert sliding.to_dict()["mtp_layer_types"] == ["sliding_attention"]
    assert "mtp_layer_types" not in spec.to_dict()  # none given: a full-attention MTP layer
    for bad in ("sliding_attention", ["linear_attention"], [1]):
        with pytest.raises(ValueError, match="mtp_layer_types is .*: give the MTP modules' "
                                             "layer types, each one of full_attention, "
                                             "sliding_attention, chunked_attention, or none"):
            ModelSpec.from_dict({**spec.to_dict(), "mtp_layer_types": bad})


def test_sliding_layers_of_other_heads_give_the_profile_their_own_bytes():
    # Gemma 4's shape: sliding layers of 16 KV heads x 256, full ones of 4 x 512, bf16
    sliding, full = AttentionLayer(16, 256, 256, sliding_window=1_024), AttentionLayer(4, 512, 512)
    spec = ModelSpec(name="g", layers=(sliding,) * 5 + (full,))
    profile = spec.profile()
    assert profile.kv_bytes_per_slot == spec.kv_bytes_per_slot() == 4 * (512 + 512) * 2 == 8_192
    assert profile.sliding_kv_bytes_per_slot == 16 * (256 + 256) * 2 == 16_384
    # SGLang's K / V log lines take the full layers' split
    assert (profile.kv_tensor_bytes, profile.kv_dtype) == ((4_096, 4_096), "bfloat16")
    # at TP 4 each rank keeps a quarter of the sliding heads and one of the 4 full ones
    assert spec.with_options(tp=4).profile().sliding_kv_bytes_per_slot == 4 * 512 * 2
    # every layer sliding: one size, kv_bytes_per_slot
    assert ModelSpec(name="s", layers=(sliding,)).profile().kv_bytes_per_slot == 16_384
    # two sliding kinds of other bytes are still one size too many
    other = AttentionLayer(8, 256, 256, sliding_window=1_024)
    with pytest.raises(ValueError, match="differ in bytes per token .* one size for sliding"):
        ModelSpec(name="two", layers=(sliding, other, full)).profile()


def test_an_mtp_layer_note_follows_the_models_notes_as_a_sentence():
    from flatkv.models import with_mtp_layer
    nemotron = load_preset("Nemotron-H-8B")
    assert nemotron.notes.endswith("under the Model page's Edit by hand).")
    for spec in (nemotron, replace(nemotron, notes=nemotron.notes.removesuffix("."))):
        notes = with_mtp_layer(spec).notes
        assert notes.count("Edit by hand). An MTP module's attention layer added") == 1, notes
    assert with_mtp_layer(replace(nemotron, notes="")).notes.startswith("An MTP module's")


def test_an_added_mtp_layer_on_a_model_without_mtp_modules_stands_for_an_eagle_head():
    # Llama 3.1 8B has no MTP module: it drafts with a one-layer EAGLE head shaped as its own
    # attention (8 KV heads of 128, bf16), whose KV vLLM keeps in the same pool
    from flatkv.models import with_mtp_layer
    llama = load_preset("Llama-3.1-8B")
    drafted = with_mtp_layer(llama)
    assert len(drafted.layers) == len(llama.layers) + 1 == 33
    assert drafted.layers[-1] == llama.layers[-1]
    assert drafted.profile().kv_bytes_per_token == 33 * 2 * 8 * 128 * 2 == 135_168
    assert "it stands for a one-layer drafter's (EAGLE's) attention of that shape" in drafted.notes


def test_learnable_sink_is_refused_where_no_layer_keeps_the_indexer():
    # the sinks are DeepSeek's sparse attention's (SGLang reads learnable_sink for it alone):
    # a model file of dense MLA (DeepSeek-V3, no index_head_dim) or of plain attention with
    # learnable_sink true was kept and written back while its profile read False; refused now,
    # as a raw profile's is (CacheProfile._check_indexer)
    why = ("learnable_sink is true beside no MLA kind with an index_head_dim: learnable "
           "attention sinks are DeepSeek's sparse attention's alone, so give the indexer's "
           "index_head_dim too, or leave learnable_sink out without an indexer")
    for name in ("DeepSeek-V3", "Llama-3.1-8B"):
        data = {**load_preset(name).to_dict(), "learnable_sink": True}
        with pytest.raises(ValueError) as refused:
            ModelSpec.from_dict(data)
        assert str(refused.value) == why, name
        with pytest.raises(ValueError, match="^learnable_sink is true beside no MLA kind"):
            replace(load_preset(name), learnable_sink=True)
    # beside the indexer's keys (DeepSeek-V3.2) it is kept, exported and read by the profile
    sinks = replace(load_preset("DeepSeek-V3.2"), learnable_sink=True)
    assert sinks.to_dict()["learnable_sink"] is True
    assert ModelSpec.from_dict(sinks.to_dict()).profile().learnable_sink
