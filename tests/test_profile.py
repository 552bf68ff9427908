"""CacheProfile: the model-independent input of plans and strategies, and its errors."""

from __future__ import annotations

import pytest

from flatkv.profile import CacheProfile


def test_profile_components_and_counts():
    p = CacheProfile(["linear_attention", "linear_attention", "full_attention"], 1024,
                     {"conv": 24_576, "ssm": 524_288}, name="tiny")
    assert p.count("linear_attention") == 2 and p.has_state and p.has_attention
    assert p.state_bytes_per_layer == 24_576 + 524_288
    assert [(c.group_id, c.layer, c.component, c.bytes_per_slot, c.const_bytes)
            for c in p.components()] == [
        ("linear_attention", 0, "conv", 0, 24_576), ("linear_attention", 0, "ssm", 0, 524_288),
        ("linear_attention", 1, "conv", 0, 24_576), ("linear_attention", 1, "ssm", 0, 524_288),
        ("full_attention", 0, "kv", 1024, 0)]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(layer_types=[], kv_bytes_per_slot=1), "layer_types is empty"),
     (dict(layer_types=["mlp"], kv_bytes_per_slot=1),
      "unknown label 'mlp': use one of full_attention"),
     # a string is no list of labels (it would be one per letter), None no mapping
     (dict(layer_types="full_attention", kv_bytes_per_slot=1),
      "layer_types is 'full_attention': give a list of labels"),
     (dict(layer_types=None, kv_bytes_per_slot=1), "layer_types is None: give a list"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0, state_const_bytes=None),
      "state_const_bytes is None: give a mapping"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1, name=None),
      "name is None, not text: give the model's name"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=0), "kv_bytes_per_slot is 0"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=-1),
      "kv_bytes_per_slot -1 must not be negative: give 0 or more"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1.5),
      r"kv_bytes_per_slot 1\.5 \(float\) must be a whole number: give 0 or more"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0), "state_const_bytes is empty"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"ssm": 0}),
      r"state_const_bytes\['ssm'\] 0 must be positive: give 1 or more"),
     (dict(layer_types=["sliding_attention"], kv_bytes_per_slot=8, sliding_window=0),
      "sliding_window 0 must be positive: give 1 or more"),
     # Llama 4's chunked layers take their chunk, and a chunk needs chunked layers
     (dict(layer_types=["chunked_attention", "full_attention"], kv_bytes_per_slot=8),
      "attention_chunk_size is not set but the model has chunked_attention layers: give the "
      "chunk in tokens"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, attention_chunk_size=8192),
      "attention_chunk_size is 8192 but layer_types has no chunked_attention layer: drop "
      "attention_chunk_size or add chunked_attention layers"),
     (dict(layer_types=["chunked_attention"], kv_bytes_per_slot=8, attention_chunk_size=0),
      "attention_chunk_size 0 must be positive: give 1 or more"),
     # a terabyte per token or per state tensor is a typo; a link's 2**60 became 0 in the
     # browser's number field
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=2**40 + 1),
      r"kv_bytes_per_slot 1,099,511,627,777 is too large to be real: give 1,099,511,627,776 or "
      r"less"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"conv": 2**60}),
      r"state_const_bytes\['conv'\] 1,152,921,504,606,846,976 is too large"),
     # the caps the app's link reads them with: a model it writes, it reopens
     (dict(layer_types=["sliding_attention"], kv_bytes_per_slot=8, sliding_window=2**31 + 1),
      r"sliding_window 2,147,483,649 is too large to be real: give 2,147,483,648 or less"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, kernel_block_size=10**30),
      "kernel_block_size a 31-digit number is too large to be real"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"conv": 8, "ssm": 6}, ssm_element_bytes=4),
      "ssm_element_bytes is 4 but state_const_bytes has an ssm tensor of 6 B"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"conv": 8}, ssm_element_bytes=2),
      "ssm_element_bytes is 2 but state_const_bytes has no ssm tensor"),
     # the ssm dtype's name stands beside its element size, never alone or against it
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"ssm": 8}, ssm_element_bytes=2, ssm_dtype="float32"),
      r"ssm_dtype is float32 \(4-byte elements\) but ssm_element_bytes is 2"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"ssm": 8}, ssm_dtype="float16"),
      r"ssm_dtype is float16 \(2-byte elements\) but ssm_element_bytes is None"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"ssm": 8}, ssm_element_bytes=1, ssm_dtype="int8"),
      "ssm_dtype is 'int8': give one of float32, bfloat16, float16"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={"ssm": 8}, ssm_element_bytes=2, ssm_dtype="fp16"),
      "ssm_dtype is 'fp16': give one of float32, bfloat16, float16"),
     (dict(layer_types=[["full_attention"]], kv_bytes_per_slot=8),
      r"layer_types holds \['full_attention'\]: give labels such as"),
     # a link writes architectures comma-separated: "A,B" or " C " would not read back as
     # itself (and "GptOssForCausalLM " would leave SGLang's list while its link joined it)
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, architectures=("A,B",)),
      r"architectures is \('A,B',\): 'A,B' is not a class name: give a list of class names"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8,
           architectures=("GptOssForCausalLM ",)), "architectures is"),
     # class names, as the engines look them up (a link's arch took any text), a few at most
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, architectures=("Gemma 3",)),
      r"^architectures is \('Gemma 3',\): 'Gemma 3' is not a class name: give a list of class "
      r"names, as config.json has them, e.g. \[\"GptOssForCausalLM\"\], or none$"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, architectures=("A" * 101,)),
      r"'A{40}'\.\.\. \(101 characters\) is longer than a class name \(at most 100 characters\)"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, architectures=tuple("ABCDEFGHI")),
      r"architectures is \(.*\): 9 architectures, more than a config.json lists \(at most 8\)"),
     # the tensors SGLang logs an attention layer by add up to its bytes, in a known dtype
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, kv_tensor_bytes=(4, 2)),
      r"kv_tensor_bytes \(4, 2\) does not add up to kv_bytes_per_slot=8: give \(K, V\) or "
      r"\(latent,\) bytes that add up to kv_bytes_per_slot, and the KV dtype \(the engines' "
      r"logs name it\), or \(\)"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, kv_tensor_bytes=(4, 0, 4)),
      "kv_tensor_bytes 0 must be positive: give 1 or more"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, kv_dtype="bfloat16",
           kv_tensor_bytes=(4, 2, 2)), r"kv_tensor_bytes \(4, 2, 2\) holds more than two sizes"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, kv_tensor_bytes=(4, 4)),
      r"kv_tensor_bytes \(4, 4\) comes without kv_dtype: give"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, kv_dtype="bf16"),
      "kv_dtype is 'bf16': give one of float32, bfloat16, float16, float8_e4m3fn, float8_e5m2, "
      "int8, or None when it is unknown"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0, state_const_bytes={"conv": 8},
           kv_tensor_bytes=(1,)), r"kv_tensor_bytes \(1,\) does not add up to kv_bytes_per_slot=0"),
     # a sliding layer's own bytes need sliding layers, and other attention layers beside them
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=8, sliding_kv_bytes_per_slot=16),
      "sliding_kv_bytes_per_slot is 16 but layer_types has no sliding_attention layer: drop "
      "it, or add sliding layers"),
     (dict(layer_types=["sliding_attention"], kv_bytes_per_slot=8, sliding_window=4,
           sliding_kv_bytes_per_slot=16),
      "sliding_kv_bytes_per_slot is 16 but every attention layer slides: give their bytes as "
      "kv_bytes_per_slot, and sliding_kv_bytes_per_slot None"),
     (dict(layer_types=["full_attention", "sliding_attention"], kv_bytes_per_slot=8,
           sliding_window=4, sliding_kv_bytes_per_slot=0),
      "sliding_kv_bytes_per_slot 0 must be positive: give 1 or more, or None when"),
     (dict(layer_types=["full_attention", "sliding_attention"], kv_bytes_per_slot=8,
           sliding_window=4, sliding_kv_bytes_per_slot=16, indexer_bytes_per_slot=4),
      "beside a lightning indexer"),
     # the indexer's keys are part of a token's KV bytes: at most one byte fewer (it said
     # "too large to be real (at most -1)" for a model without attention)
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_284, indexer_bytes_per_slot=1_284),
      r"^indexer_bytes_per_slot is 1284 but kv_bytes_per_slot is 1284: the indexer's keys are a "
      r"part of a token's KV bytes \(DeepSeek-V3.2's 132 of 1,284 B in bfloat16\), so give "
      r"fewer bytes than kv_bytes_per_slot, or None without an indexer$"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0, state_const_bytes={"conv": 8},
           indexer_bytes_per_slot=132),
      r"^indexer_bytes_per_slot is 132 but kv_bytes_per_slot is 0: "),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_284, indexer_bytes_per_slot=0),
      "indexer_bytes_per_slot 0 must be positive: give 1 or more; the indexer's part"),
     # the raw fp8 layout's bytes hold the indexer's keys and a latent: none without keys
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_152,
           dsa_raw_fp8_bytes_per_slot=576),
      r"^dsa_raw_fp8_bytes_per_slot is 576 beside indexer_bytes_per_slot None: it is a token's "
      r"raw fp8 latent and the indexer's keys \(DeepSeek-V3.2's 576 \+ 132\), so give more bytes "
      r"than the keys, or None without an indexer$"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_284, indexer_bytes_per_slot=132,
           dsa_raw_fp8_bytes_per_slot=132),
      r"^dsa_raw_fp8_bytes_per_slot is 132 beside indexer_bytes_per_slot 132: "),
     # checked after the keys it is set beside, as a whole number of bytes a token could be
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_284, indexer_bytes_per_slot="132",
           dsa_raw_fp8_bytes_per_slot=708),
      r"^indexer_bytes_per_slot '132' \(str\) must be a whole number"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_284, indexer_bytes_per_slot=132,
           dsa_raw_fp8_bytes_per_slot=1 << 41),
      r"^dsa_raw_fp8_bytes_per_slot 2,199,023,255,552 is too large to be real"),
     (dict(layer_types=["full_attention"], kv_bytes_per_slot=1_284, indexer_bytes_per_slot=132,
           dsa_raw_fp8_bytes_per_slot=True),
      r"^dsa_raw_fp8_bytes_per_slot True \(bool\) must be a whole number"),
     # more state tensors than a layer keeps: 10,000 (raw bytes, --state) planned for minutes
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0,
           state_const_bytes={f"t{i}": 1 for i in range(9)}),
      r"^state_const_bytes has 9 tensors, too many to be real: give 8 or fewer \(a state layer "
      r"keeps one or two, conv and ssm\)$"),
     # a state tensor named as the history would be drawn (and coloured) as attention KV
     (dict(layer_types=["full_attention", "linear_attention"], kv_bytes_per_slot=8,
           state_const_bytes={"kv": 64}),
      "state_const_bytes has a tensor named 'kv', the attention layers' history: name the "
      "state tensor otherwise, e.g. 'state'"),
     # GDN key head dims (vLLM's prefill kernel reads them): whole numbers of 1 or more, each
     # checked before the set is hashed (a list in it was a TypeError)
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0, state_const_bytes={"ssm": 64},
           gdn_key_head_dims=[[128]]),
      r"^gdn_key_head_dims \[128\] \(list\) must be a whole number: give 1 or more; a GDN "
      "layer's key head dim$"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0, state_const_bytes={"ssm": 64},
           gdn_key_head_dims={0}),
      "^gdn_key_head_dims 0 must be positive: give 1 or more; a GDN layer's key head dim$"),
     (dict(layer_types=["linear_attention"], kv_bytes_per_slot=0, state_const_bytes={"ssm": 64},
           gdn_key_head_dims="128"),
      r"^gdn_key_head_dims is '128': give a set of head dims, e.g. \{128\}, or an empty one "
      "where not known$")],
)
def test_profile_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CacheProfile(**kwargs)


def test_an_architecture_of_100_characters_is_a_class_name():
    # the longest a class name is taken at, one under the 101 refused above
    name = "A" * 100
    profile = CacheProfile(layer_types=["full_attention"], kv_bytes_per_slot=8,
                           architectures=(name,))
    assert profile.architectures == (name,)


def test_conv_rows_name_the_conv_state_vllm_widens_per_drafted_token():
    from flatkv.app_model import profile_for

    # GDN (Qwen3-Next) and Mamba2 (Nemotron-H) conv states are K - 1 = 3 rows; Mamba1 (Jamba)
    # is kept at K - 1 by vLLM, so it names none
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    assert qwen.conv_rows == 3 and qwen.conv_bytes_with_drafts(2) == 24_576 // 3 * 5
    assert profile_for("Nemotron-H-8B", None, 1).conv_rows == 3
    jamba = profile_for("Jamba-1.5-Mini", None, 1)
    assert jamba.conv_rows is None
    assert jamba.conv_bytes_with_drafts(2) == jamba.state_const_bytes["conv"]
    assert profile_for("Llama-3.1-8B", None, 1).conv_rows is None  # no state layers
    with pytest.raises(ValueError, match="conv_rows is 5 but state_const_bytes has a conv "
                                         "tensor of 24576 B"):
        CacheProfile(("linear_attention",), 0, {"conv": 24_576, "ssm": 8}, conv_rows=5)
    with pytest.raises(ValueError, match="conv_rows is 3 but state_const_bytes has no conv"):
        CacheProfile(("linear_attention",), 0, {"ssm": 8}, conv_rows=3)


def test_window_is_the_sliding_window_or_the_chunk_of_a_label():
    profile = CacheProfile(layer_types=("sliding_attention", "chunked_attention",
                                        "full_attention"), kv_bytes_per_slot=8,
                           sliding_window=128, attention_chunk_size=8192)
    assert profile.window("sliding_attention") == 128
    assert profile.window("chunked_attention") == 8192
    assert profile.window("full_attention") is None
    assert profile.window("linear_attention") is None
    # both keep history: every token adds to them
    assert profile.kv_bytes_per_token == 3 * 8


def test_sliding_layers_of_their_own_bytes_keep_them_in_every_count():
    # Gemma 4's shape: 5 sliding layers of 16 KV heads x (256 + 256) x 2 B = 16,384 B a token
    # beside each full layer of 4 x (512 + 512) x 2 B = 8,192 B
    gemma = CacheProfile(layer_types=["sliding_attention"] * 5 + ["full_attention"],
                         kv_bytes_per_slot=8_192, sliding_kv_bytes_per_slot=16_384,
                         sliding_window=1_024)
    assert [gemma.kv_bytes_of(label) for label in
            ("full_attention", "sliding_attention", "linear_attention")] == [8_192, 16_384, 0]
    assert gemma.kv_bytes_per_token == 5 * 16_384 + 8_192 == 90_112
    assert [(c.group_id, c.bytes_per_slot) for c in gemma.components()] == (
        [("sliding_attention", 16_384)] * 5 + [("full_attention", 8_192)])
    # the same bytes as a full layer's are no size of their own
    same = CacheProfile(layer_types=["sliding_attention", "full_attention"], kv_bytes_per_slot=8,
                        sliding_kv_bytes_per_slot=8, sliding_window=4)
    assert same.sliding_kv_bytes_per_slot is None
    assert same == CacheProfile(layer_types=["sliding_attention", "full_attention"],
                                kv_bytes_per_slot=8, sliding_window=4)


def test_a_models_ssm_dtype_rides_beside_its_element_size():
    # 2-byte elements are bfloat16 or float16, which vLLM's KDA takes and refuses: a model's
    # profile names which, raw bytes none; the model JSON keeps it
    from flatkv.presets import load_preset
    from flatkv.profile import profile_from_dict, profile_to_dict

    kimi = load_preset("Kimi-Linear-48B-A3B")
    assert (kimi.profile().ssm_dtype, kimi.profile().ssm_element_bytes) == ("float32", 4)
    half = kimi.with_options(ssm_dtype="fp16").profile()  # an alias, canonical in the profile
    assert (half.ssm_dtype, half.ssm_element_bytes) == ("float16", 2)
    assert half.state_const_bytes == {"conv": 73_728, "ssm": 2_097_152 // 2}
    assert profile_to_dict(half)["ssm_dtype"] == "float16"
    assert profile_from_dict(profile_to_dict(half)) == half
    # no ssm tensor (LFM2's conv alone, an attention model): no ssm dtype
    assert load_preset("LFM2-1.2B").profile().ssm_dtype is None
    assert load_preset("Llama-3.1-8B").profile().ssm_dtype is None
    assert "ssm_dtype" not in profile_to_dict(load_preset("LFM2-1.2B").profile())
