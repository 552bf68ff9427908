"""URL state round trip, fallbacks with notices, the cache budget and the model seam."""

from __future__ import annotations

import base64
import itertools
import json
import re
import zlib
from dataclasses import fields, replace
from fractions import Fraction

import pytest

from flatkv import app_model, app_state, given_cli, gpu_settings, presets, strategy_notes
from flatkv.app_model import CUSTOM, RawModel
from flatkv.app_state import (
    CUSTOM_GPU,
    DEFAULT,
    GPU_PRESETS,
    KV_BLOCKS,
    KV_MEMORY,
    AppState,
    decode_query,
    encode_query,
)
from flatkv.budget import GPU_COMPUTE_CAPABILITIES
from flatkv.engine_options import (
    ENGINE_FIELDS,
    ENGINE_OPTIONS,
    idle_engine_option,
    strategy_fields,
)
from flatkv.models import ModelSpec, with_mtp_layer
from flatkv.presets import list_presets, load_preset
from flatkv.profile import CARRIED_FIELDS, MODEL_ONLY_FIELDS, CacheProfile, profile_to_dict
from flatkv.strategies import STRATEGIES, StrategyOptions, run_strategy
from flatkv.strategies.vllm import checkpoint_blocks_kept, gdn_checkpoint_on
from flatkv.strategies.vllm_releases import FLASHINFER_GDN_CAPABILITIES

QWEN35 = RawModel("(3*linear,full)*12", 2048, (("conv", 49152), ("ssm", 2097152)))


def test_defaults_make_an_empty_query_and_decode_back():
    assert encode_query(DEFAULT) == {}
    assert decode_query({}) == (DEFAULT, [])
    # a key given twice (tp=2&tp=4): the last, said; given twice alike, nothing to say
    state, notices = decode_query({"tp": ["2", "4"], "ctx": ["8192", "8192"]})
    assert (state.tp, state.context) == (4, 8192)
    assert notices == ["The link gives tp 2 times ('2', '4'): using the last, tp='4'."]


def test_a_links_notices_quote_what_it_typed_short_or_long():
    # one rule for what a link typed, short or long (a short value was shown bare, a long one
    # quoted): quoted as repr writes it, odd characters escaped; the app's own key names bare.
    # An unknown key given twice ('zoom') is named once, as ignored: "using the last" of a key
    # the app then ignores had been a notice of its own
    _, notices = decode_query({"tp": ["2", "4\x1b"], "zoom": ["1", "2"], "a b\x1b": "1",
                               "y" * 50: "1", "block": ["8", "x" * 50]})
    assert notices == [
        "The link gives tp 2 times ('2', '4\\x1b'): using the last, tp='4\\x1b'.",
        f"The link gives block 2 times ('8', '{'x' * 40}'... (50 characters)): using the "
        f"last, block='{'x' * 40}'... (50 characters).",
        f"block='{'x' * 50}' is not a whole number: give one from 1 to 1,048,576, e.g. "
        "block=16; using the default (block=16).",
        "tp='4\\x1b' is not a whole number: give one from 1 to 1,024, e.g. tp=2; using the "
        "default (tp=1).",
        f"Ignored unknown link parameters: 'a b\\x1b', '{'y' * 40}'... (50 characters), "
        "'zoom'."]


def test_a_links_fix_for_digits_of_another_script_is_a_value_the_key_takes():
    # tp=-٢ suggested "e.g. -2", which the link then refused as outside 1..1,024; ssm_el=١٢
    # "e.g. 12", past its 8; frac=٠.٠٠١ "e.g. 0.001", under its 0.01
    _, notices = decode_query({"tp": "-٢", "frac": "٠.٠٠١", "sweep_pages": "-٢"})
    assert notices == [
        "frac='٠.٠٠١' is not written in ASCII digits: write it in ASCII digits, e.g. frac=0.9; "
        "using the default (frac=0.9).",
        "tp='-٢' is not written in ASCII digits: write it in ASCII digits, without the minus "
        "sign (it takes no negative number), e.g. tp=2; using the default (tp=1).",
        "sweep_pages='-٢' is not written in ASCII digits: write it in ASCII digits, without "
        "the minus sign (it takes no negative number), e.g. sweep_pages=2; using the default "
        "(sweep_pages=auto)."]
    assert decode_query({"tp": "2", "frac": "0.9", "sweep_pages": "2"})[1] == []
    _, notices = decode_query({"model": "custom", "layers": "full", "kv": "8", "ssm_el": "١٢"})
    assert ("ssm_el='١٢' is not written in ASCII digits: write it in ASCII digits, e.g. "
            "ssm_el=8)") in notices[0]


def test_a_links_tp_fix_is_a_tp_its_model_splits_over():
    # tp='+80' suggested tp=80, which the key takes but Qwen3-Next's 16 key heads do not split
    # over (a second notice followed it): the nearest TP that does, 16; gpt-oss-20b's nearest
    # to 80 is 64; a raw model (per rank) splits over any TP, so 80 as typed
    assert decode_query({"tp": "80"})[1][0].startswith(
        "Qwen3-Next-80B-A3B: its linear-attention (Gated DeltaNet) layers have 16 key heads, "
        "and TP 80 does not divide them")
    for model, fix in (("Qwen3-Next-80B-A3B", 16), ("gpt-oss-20b", 64)):
        for text in ("+80", "٨٠", "+٨٠", "+1_000"):
            (notice,) = decode_query({"model": model, "tp": text})[1]
            assert notice.endswith(f", e.g. tp={fix}; using the default (tp=1)."), notice
        assert decode_query({"model": model, "tp": str(fix)}) == (
            AppState(model=model, tp=fix), [])
    assert decode_query({"tp": "+80"})[1] == [
        "tp='+80' has a plus sign: write it without the sign, e.g. tp=16; using the default "
        "(tp=1)."]
    # 3 lies between 2 and 4, which both split Qwen3-Next: the lower; 16 as typed
    assert decode_query({"tp": "+3"})[1][0].endswith("e.g. tp=2; using the default (tp=1).")
    assert decode_query({"tp": "+16"})[1][0].endswith("e.g. tp=16; using the default (tp=1).")
    raw = {"model": "custom", "layers": "full", "kv": "8"}
    assert decode_query({**raw, "tp": "+80"})[1] == [
        "tp='+80' has a plus sign: write it without the sign, e.g. tp=80; using the default "
        "(tp=1)."]


def test_a_links_whole_numbers_are_read_in_ascii_digits_as_the_cli_reads_them():
    # int() read tp=٢ as 2 and req=+3 as 3; spaces around and underscores between digits read
    state, notices = decode_query({"tp": "٢", "req": "+3", "block": " 1_024 ",
                                   "sweep_blocks": "1, ٤"})
    assert (state.tp, state.requests, state.block_size) == (1, None, 1024)
    assert notices == [
        "tp='٢' is not written in ASCII digits: write it in ASCII digits, e.g. tp=2; using the "
        "default (tp=1).",
        "req='+3' has a plus sign: write it without the sign, e.g. req=3; using the default (4 "
        "live requests, or as many as fit).",
        "sweep_blocks='1, ٤': '٤' is not written in ASCII digits: write it in ASCII digits, "
        "e.g. 4; "
        "using the default (sweep_blocks=auto).",
    ]
    # ... and its fractions and ratios, which float() and Decimal read as 0.8
    state, notices = decode_query({"frac": "٠.٨", "sg_ratio": "+0.8"})
    assert (state.mem_fraction, state.mamba_full_memory_ratio) == (0.9, 0.9)
    assert notices == [
        "frac='٠.٨' is not written in ASCII digits: write it in ASCII digits, e.g. frac=0.8; using "
        "the default (frac=0.9).",
        "sg_ratio='+0.8' has a plus sign: write it without the sign, e.g. sg_ratio=0.8; using the "
        "default (sg_ratio=0.9)."]
    # a chunk past int()'s 4,300 digits: its own "Exceeds the limit (4300 digits)" was the notice
    state, notices = decode_query({"sg_chunk": "9" * 5_000})
    assert state.sglang_chunked_prefill_size is None and notices == [
        f"sg_chunk='{'9' * 24}...' is too long for a token count (5,000 characters): give e.g. "
        "sg_chunk=262144, 256K (262,144) or 128k (128,000); or -1 (any whole number 0 or less, "
        "as SGLang reads it, or off) for chunked prefill off; using the default (sg_chunk=auto)."]
    # ... and one of 0 with a plus sign, read as chunked prefill off where '+5' was refused
    state, notices = decode_query({"sg_chunk": "+0"})
    assert state.sglang_chunked_prefill_size is None and notices == [
        "sg_chunk='+0' has a plus sign: write it without the sign, e.g. sg_chunk=0, for "
        "chunked prefill off; using the default (sg_chunk=auto)."]
    # underscores between digits read, as float() reads them; elsewhere not (Decimal took
    # sg_ratio=_0.5 as 0.5)
    state, notices = decode_query({"sg_ratio": "_0.5", "sg_swa": "0.2_5"})
    assert (state.mamba_full_memory_ratio, state.swa_full_tokens_ratio) == (0.9, 0.25)
    assert notices == [
        "sg_ratio='_0.5': give a number in [0.000001, 1000000] such as 0.9 or 9/10; using "
        "the default (sg_ratio=0.9)."]


def test_round_trip_of_a_custom_model_and_every_setting():
    hybrid = replace(QWEN35, layers="(3*linear,full,sliding)*12", sliding_window=4096)
    state = AppState(model=CUSTOM, raw=hybrid, block_size=64,
                     alignment=16, planner="per-component", gpu="Custom", gpu_memory=80 * 10**9,
                     mem_fraction=0.85, weights=16 * 10**9, tp=2, context=8192, requests=3)
    query = encode_query(state)
    assert query["model"] == "custom"
    assert query["layers"] == "(3*linear,full,sliding)*12"  # as the user wrote it
    assert query["state"] == "conv=49152,ssm=2097152"
    assert query["block"] == "64" and query["align"] == "16" and query["frac"] == "0.85"
    assert all(isinstance(v, str) for v in query.values())
    assert decode_query(query) == (state, [])


def test_every_setting_of_the_view_has_a_link_key_and_round_trips():
    # a field left out of the link codec would silently drop out of shared links: every
    # AppState field but the model's (model, raw, spec, encoded apart) is a URL setting, and a
    # view with each of them off its default reads back the same
    off_default = {
        "block_size": 64, "alignment": 32, "planner": "per-component", "gpu": "Custom",
        "gpu_memory": 96 * 10**9, "kv_memory": 30 * 2**30, "kv_blocks": 6_701, "mem_fraction": 0.85,
        "gpu_arch": "ampere",
        "weights": 16 * 10**9, "tp": 2, "context": 8192, "requests": 3, "hold_requests": 12,
        "uniform_rows": True, "map_snapshots": True, "bytes_focus": "linear_attention/ssm",
        "kernel_block_size": 64, "mamba_cache_mode": "all", "mamba_chunk_size": 128,
        "speculative_tokens": 2, "prefill_checkpoint_blocks": 1,
        "mamba_full_memory_ratio": 0.5, "swa_full_tokens_ratio": 0.25,
        "sglang_slots_per_request": 5, "sglang_max_running_requests": 20,
        "sglang_max_mamba_cache_size": 100,
        "sglang_page_size": 64, "sglang_mamba_track_interval": 512,
        "sglang_mamba_radix_cache_strategy": "extra_buffer_lazy",
        "sglang_kv_cache_dtype": "bfloat16",
        "sglang_ssm_dtype": "bfloat16", "sglang_swa_pool": False, "vllm_ssm_dtype": "bfloat16",
        "max_batched_tokens": 4096, "sglang_chunked_prefill_size": 2048,
        "lcm_padding_bound": 0.1,
        "vllm_hybrid_manager": False, "vllm_async_scheduling": True,
        "sglang_overlap_schedule": False, "sglang_disable_radix_cache": True,
        "sglang_attn_dp_size": 2,
        "budget_strategy": "vllm", "lab_device": "cpu", "lab_kernels": ("torch",),
        "lab_layouts": ("slot-major", "page-major"), "lab_rounds": 3, "lab_max_blocks": 8,
        "lab_pages": 2, "lab_sweep": gpu_settings.SWEEPS[-1], "lab_sweep_pages": (1, 4),
        "lab_sweep_blocks": (16, 64),
    }
    settings = {f.name for f in fields(AppState)} - {"model", "raw", "spec"}
    assert set(off_default) == settings == {name for name, _, _ in app_state._SETTINGS.values()}
    state = replace(DEFAULT, **off_default)
    assert all(getattr(state, f) != getattr(DEFAULT, f) for f in settings)
    query = encode_query(state)
    # one key each, a memory source's own budget key beside it alone (gpu=Custom: gpu_mem)
    assert len(query) == len(settings) - 2 and not {"kv_mem", "kv_blocks"} & set(query)
    kept = replace(state, kv_memory=DEFAULT.kv_memory, kv_blocks=DEFAULT.kv_blocks)
    assert decode_query(query) == (kept, [])
    for gpu, key in ((KV_MEMORY, "kv_mem"), (KV_BLOCKS, "kv_blocks")):
        query = encode_query(replace(state, gpu=gpu))
        assert key in query and "gpu_mem" not in query
        assert decode_query(query)[0] == replace(state, gpu=gpu, gpu_memory=DEFAULT.gpu_memory,
                                                 **{f: getattr(DEFAULT, f) for f in (
                                                     "kv_memory", "kv_blocks")
                                                    if app_state._SETTINGS[key][0] != f})


def test_engine_options_round_trip_and_feed_strategy_options():
    state = AppState(kernel_block_size=64, mamba_cache_mode="all", mamba_chunk_size=128,
                     mamba_full_memory_ratio=0.5, sglang_slots_per_request=5,
                     sglang_ssm_dtype="bfloat16", max_batched_tokens=2048,
                     lcm_padding_bound=0.1)
    query = encode_query(state)
    assert query == {"kernel": "64", "mamba": "all", "chunk": "128", "sg_ratio": "0.5",
                     "sg_slots": "5", "sg_ssm": "bfloat16", "mbt": "2048", "lcm_pad": "0.1"}
    assert decode_query(query) == (state, [])
    options = state.strategy_options()
    assert (options.kernel_block_size, options.mamba_cache_mode, options.mamba_chunk_size) == (
        64, "all", 128)
    # ratios read as their decimals, exactly: 0.5 = 1/2, 0.1 = 1/10
    assert (options.mamba_full_memory_ratio, options.lcm_padding_bound) == (
        Fraction(1, 2), Fraction(1, 10))
    assert (options.sglang_slots_per_request, options.max_batched_tokens) == (5, 2048)
    assert options.sglang_ssm_dtype == "bfloat16"
    # the engines' own defaults: nothing in the link, nothing changed
    assert DEFAULT.changed_engine_options() == {}
    # SGLang's chunked prefill size, not told, is its own on the GPU picked (H100: 8,192), and
    # that GPU's compute capability (an H100's 9.0), which vLLM's MLA backends read
    assert DEFAULT.strategy_options() == StrategyOptions(block_size=16,
                                                         sglang_chunked_prefill_size=8192,
                                                         gpu_compute_capability=(9, 0))
    # alignment left to the block size stays so under another block size (a sweep's), not the
    # 16 of the current one: Qwen3-Next's state row 1,097,728 B needs 1,097,728 / 2,048 = 536
    # KV slots; packed slabs at block 64 round that to 576, not to the 544 of alignment 16
    swept = replace(DEFAULT.strategy_options(), block_size=64)
    assert swept.effective_alignment == 64
    assert run_strategy("flat", DEFAULT.profile(), budget_bytes=10**11,
                        options=swept).block_size == 576
    assert state.changed_engine_options()["kernel_block_size"] == 64


def test_sglang_mamba_track_interval_round_trips_through_the_link():
    # sg_track carries SGLang's --mamba-track-interval; 256 (its default) stays out of a link.
    # Pages of 512 start at 512, refused at 256
    state = AppState(model="Qwen3-Next-80B-A3B", sglang_page_size=512,
                     sglang_mamba_track_interval=512)
    query = encode_query(state)
    assert query == {"sg_page": "512", "sg_track": "512"}  # Qwen3-Next: the default model
    assert decode_query(query) == (state, [])
    assert state.changed_engine_options() == {"sglang_page_size": 512,
                                              "sglang_mamba_track_interval": 512}
    assert "sg_track" not in encode_query(replace(state, sglang_mamba_track_interval=256))
    for interval, applies in ((512, True), (256, False)):
        at = replace(state, sglang_mamba_track_interval=interval)
        assert run_strategy("sglang", at.profile(), budget_bytes=40 << 30,
                            options=at.strategy_options()).applies is applies
    # a refusal's fix SGLang's own 256, not the nearest 1, which splits no page of 512
    for text, why in (("0", "must be positive: e.g. sg_track=256"),
                      ("-512", "must be positive: e.g. sg_track=256"),
                      ("x", "is not a whole number: give one of 1 or more, e.g. sg_track=256")):
        back, notices = decode_query({**query, "sg_track": text})
        assert back.sglang_mamba_track_interval == 256
        assert notices == [f"sg_track={text!r} {why}; using the default (sg_track=256)."]


def test_sglang_mamba_radix_cache_strategy_round_trips_through_the_link():
    # sg_strategy carries SGLang's --mamba-radix-cache-strategy; auto (its default) stays out of
    # a link. extra_buffer_lazy: Qwen3-Next's own S is 3 + 1, not 3 + 2 (SGLang's
    # get_mamba_tracking_slots(lazy=True) = 1)
    state = AppState(model="Qwen3-Next-80B-A3B",
                     sglang_mamba_radix_cache_strategy="extra_buffer_lazy")
    query = encode_query(state)
    assert query == {"sg_strategy": "extra_buffer_lazy"}  # Qwen3-Next: the default model
    assert decode_query(query) == (state, [])
    assert state.changed_engine_options() == {
        "sglang_mamba_radix_cache_strategy": "extra_buffer_lazy"}
    assert state.engine_choices()["sglang_slots_per_request"][0] == 4
    assert AppState(model="Qwen3-Next-80B-A3B").engine_choices()[
        "sglang_slots_per_request"][0] == 5
    assert "sg_strategy" not in encode_query(replace(
        state, sglang_mamba_radix_cache_strategy="auto"))
    # extra_buffer and no_buffer told: without overlap scheduling (sg_overlap=0) Qwen3-Next's
    # S is auto's no_buffer 3, extra_buffer's 3 + 1 (get_mamba_tracking_slots(overlap=False)),
    # no_buffer's 3
    for strategy, slots in (("auto", 3), ("extra_buffer", 4), ("no_buffer", 3)):
        told = AppState(model="Qwen3-Next-80B-A3B", sglang_overlap_schedule=False,
                        sglang_mamba_radix_cache_strategy=strategy)
        assert decode_query(encode_query(told)) == (told, [])
        assert told.engine_choices()["sglang_slots_per_request"][0] == slots
    assert encode_query(replace(state, sglang_mamba_radix_cache_strategy="no_buffer")) == {
        "sg_strategy": "no_buffer"}
    back, notices = decode_query({**query, "sg_strategy": "lazy"})
    assert back.sglang_mamba_radix_cache_strategy == "auto"
    assert notices == ["sg_strategy='lazy' is not one of auto, no_buffer, extra_buffer, "
                       "extra_buffer_lazy: give one of them, e.g. sg_strategy=auto; using the "
                       "default (sg_strategy=auto)."]


def test_sglang_kv_cache_dtype_round_trips_through_the_link():
    # sg_kvdtype carries SGLang's --kv-cache-dtype beside the KV dtype bfloat16; auto (its
    # default) stays out of a link. On the B200 DeepSeek-V3.2 told bfloat16 keeps 61 x (1,152
    # + 132) = 78,324 B a token, not auto's raw fp8 61 x (576 + 132) = 43,188
    state = AppState(model="DeepSeek-V3.2", gpu="B200 192GB", sglang_kv_cache_dtype="bfloat16")
    query = encode_query(state)
    assert query["sg_kvdtype"] == "bfloat16"
    assert decode_query(query) == (state, [])
    assert state.changed_engine_options() == {"sglang_kv_cache_dtype": "bfloat16"}
    assert "sg_kvdtype" not in encode_query(replace(state, sglang_kv_cache_dtype="auto"))
    # SGLang's bf16 alias, which the CLI's --sglang-kv-cache-dtype and StrategyOptions read as
    # bfloat16, is read so in a link too, and written back as bfloat16
    assert decode_query({**query, "sg_kvdtype": "bf16"}) == (state, [])
    back, notices = decode_query({**query, "sg_kvdtype": "fp8_e5m2"})
    assert back.sglang_kv_cache_dtype == "auto"
    assert notices == ["sg_kvdtype='fp8_e5m2' is not one of auto, bfloat16: give one of them, "
                       "e.g. sg_kvdtype=auto; using the default (sg_kvdtype=auto)."]
    # offered on the B200, where it moves SGLang's figures; on the H100 auto keeps bfloat16
    # too, and beside the KV dtype fp8 (told fp8_e4m3 itself) it tells nothing: idle there;
    # DeepSeek-V3's dense MLA keeps its layout on a Blackwell too: never offered
    assert "sglang_kv_cache_dtype" in state.acting_engine_options()
    assert "sglang_kv_cache_dtype" not in replace(state, gpu="H100 80GB").acting_engine_options()
    fp8 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()
    option = next(o for o in ENGINE_OPTIONS if o.field == "sglang_kv_cache_dtype")
    assert idle_engine_option(option, fp8, StrategyOptions(gpu_compute_capability=(10, 0))) == (
        "the KV dtype is float8_e4m3fn, which SGLang is told as it is; bfloat16 told parts "
        "from its auto beside the KV dtype bfloat16, float16 or float32 alone")
    assert "sglang_kv_cache_dtype" not in strategy_fields(
        "sglang", load_preset("DeepSeek-V3").profile())


def test_sglang_attention_dp_size_round_trips_through_the_link():
    # sg_dp carries SGLang's --attn-dp-size; 1 (none) is the default and stays out of a link
    state = AppState(model="Llama-3.1-8B", tp=8, sglang_attn_dp_size=8)
    query = encode_query(state)
    assert query == {"model": "Llama-3.1-8B", "tp": "8", "sg_dp": "8"}
    assert decode_query(query) == (state, [])
    assert state.strategy_options().sglang_attn_dp_size == 8
    assert state.changed_engine_options() == {"sglang_attn_dp_size": 8}
    assert "sg_dp" not in encode_query(replace(state, sglang_attn_dp_size=1))
    # the SGLang figures it feeds: one group's pool at attention TP 8 / 8 = 1, all 8 KV heads,
    # 32 layers x 8 x 512 B: 42,949,672,960 // 131,072 = 327,680 tokens (2,621,440 without)
    for d, tokens in ((8, 327_680), (1, 2_621_440)):
        at = replace(state, sglang_attn_dp_size=d)
        assert run_strategy("sglang", at.profile(), budget_bytes=40 << 30,
                            options=at.strategy_options()).capacity_tokens == tokens
    # a bad value falls back to none, saying so
    for text, why in (("0", "must be positive: give sg_dp=1"),
                      ("x", "is not a whole number: give one from 1 to 1,024, e.g. sg_dp=12")):
        back, notices = decode_query({"tp": "8", "sg_dp": text})
        assert back.sglang_attn_dp_size == 1
        assert notices == [f"sg_dp={text!r} {why}; using the default (sg_dp=1)."]


def test_gpu_lab_settings_round_trip_through_the_link():
    state = AppState(lab_device="cuda:1", lab_kernels=("triton",), lab_rounds=5,
                     lab_max_blocks=8, lab_pages=3, lab_sweep="pages per call",
                     lab_sweep_pages=(1, 2, 4), lab_sweep_blocks=(16, 64),
                     lab_layouts=("slot-major", "page-major"))
    query = encode_query(state)
    assert query == {"device": "cuda:1", "kernels": "triton", "layouts": "slot-major,page-major",
                     "rounds": "5", "max_blocks": "8", "pages": "3", "sweep": "pages per call",
                     "sweep_pages": "1,2,4", "sweep_blocks": "16,64"}
    assert decode_query(query) == (state, [])
    # "auto" is each default's name in a link; kernels are kept in one order, once each
    assert decode_query({"device": "auto", "rounds": "auto"}) == (DEFAULT, [])
    assert decode_query({"kernels": "triton,torch,torch"})[0].lab_kernels == ("torch", "triton")
    assert decode_query({"layouts": "page-major,slot-major"})[0].lab_layouts == (
        "slot-major", "page-major")
    assert "layouts" not in encode_query(AppState(lab_layouts=("slot-major",)))  # the default


def test_a_raw_model_carries_its_kv_dtype_and_split_while_its_kv_bytes_stand():
    # Qwen3-Next as raw bytes keeps what SGLang's KV line needs: K and V of 1,024 B in bf16
    raw = RawModel.from_profile(app_model.profile_for("Qwen3-Next-80B-A3B", None, 1))
    assert (raw.kv_dtype, raw.kv_tensor_bytes) == ("bfloat16", (1024, 1024))
    query = encode_query(AppState(model=CUSTOM, raw=raw))
    assert (query["kv_dtype"], query["kv_split"]) == ("bfloat16", "1024,1024")
    assert decode_query(query)[0].raw == raw
    for bad, why in (("1024,1024,0", "kv_split='1024,1024,0' holds 3 numbers, which is "
                                      "more than 2: give 2 or less"),
                     ("1024,x", "kv_split='x' is not a whole number")):
        state, notices = decode_query({**query, "kv_split": bad})
        assert state.raw is None and why in notices[0]
    # a kv edited in the link (fp8's 1,024 B), or a split without its dtype: the model stays,
    # its bytes as given, and the notice says what was dropped
    for link, why in (({**query, "kv": "1024"}, "does not add up to kv=1024"),
                      ({k: v for k, v in query.items() if k != "kv_dtype"},
                       "comes without kv_dtype")):
        state, notices = decode_query(link)
        assert (state.raw.kv_tensor_bytes, state.raw.kv_dtype) == ((), None)
        assert state.raw.layers == raw.layers and notices == [
            f"kv_split=1024,1024 {why}: the model is kept without its K / V split and KV "
            "dtype, which only SGLang's KV log lines need."]
    # an alias reads as the CLI reads it
    assert decode_query({**query, "kv_dtype": "bf16"})[0].raw == raw
    # typed bytes: an unchanged 2,048 keeps them, another number drops them (bytes as given)
    assert raw.with_kv(2048) is raw
    other = raw.with_kv(4096)
    assert (other.kv_bytes_per_slot, other.kv_dtype, other.kv_tensor_bytes) == (4096, None, ())
    assert "kv_split" not in encode_query(AppState(model=CUSTOM, raw=other))


def test_a_raw_model_keeps_its_sliding_layers_k_v_split_while_their_bytes_stand():
    # Gemma 4 as raw bytes: sliding layers of 16,384 B (K and V 8,192 each) beside full ones
    # of 8,192 B; the link carries both splits and reopens to the same model
    raw = RawModel("(5*sliding,full)*2", 8192, sliding_window=1024, kv_dtype="bfloat16",
                   kv_tensor_bytes=(4096, 4096), sliding_kv_bytes_per_slot=16384,
                   sliding_kv_tensor_bytes=(8192, 8192))
    state = AppState(model=CUSTOM, raw=raw)
    query = encode_query(state)
    assert query["swa_split"] == "8192,8192" and query["swa_kv"] == "16384"
    assert decode_query(query) == (state, [])
    # the sliding bytes edited in the link: the split is dropped, the model kept, and said so
    edited, notices = decode_query({**query, "swa_kv": "12288"})
    assert edited.raw.sliding_kv_tensor_bytes == () and edited.raw.kv_tensor_bytes == (4096,
                                                                                      4096)
    assert notices == ["swa_split=8192,8192 does not add up to swa_kv=12288: the model is kept "
                       "without its sliding layers' K / V split, which only SGLang's SWA KV log "
                       "line needs."]
    # the full layers' split dropped takes the KV dtype, and with it the sliding split
    bare, notices = decode_query({k: v for k, v in query.items() if k != "kv_dtype"})
    assert (bare.raw.kv_dtype, bare.raw.kv_tensor_bytes, bare.raw.sliding_kv_tensor_bytes) == (
        None, (), ())
    assert notices == ["kv_split=4096,4096 comes without kv_dtype: the model is kept without "
                       "its K / V split (and its sliding layers') and KV dtype, which only "
                       "SGLang's KV log lines need."]
    # a sliding split with no sliding bytes beside it
    _, notices = decode_query({k: v for k, v in query.items() if k != "swa_kv"})
    assert notices == ["swa_split=8192,8192 comes without swa_kv: the model is kept without "
                       "its sliding layers' K / V split, which only SGLang's SWA KV log line "
                       "needs."]
    # typed bytes: an unchanged sliding size keeps the split, another drops it
    assert raw.with_sliding_kv(16384) is raw
    assert raw.with_sliding_kv(12288).sliding_kv_tensor_bytes == ()
    assert raw.with_kv(4096).sliding_kv_tensor_bytes == ()  # the KV dtype goes: so does it


def test_a_raw_model_carries_its_kernel_block_size_in_the_link():
    raw = RawModel("full*61", 1152, kernel_block_size=64)  # DeepSeek-V3 as raw bytes
    state = AppState(model=CUSTOM, raw=raw)
    query = encode_query(state)
    assert query["model_kernel"] == "64" and "kernel" not in query
    assert decode_query(query) == (state, [])
    assert state.profile().kernel_block_size == 64
    _, notices = decode_query({**query, "model_kernel": "0"})
    assert "custom model in the link is not valid (model_kernel='0' must be positive" in notices[0]
    # the largest window and kernel block a profile takes reopen from the link it writes
    widest = AppState(model=CUSTOM, raw=RawModel("sliding,full", 8, sliding_window=2**31,
                                                 kernel_block_size=2**20))
    assert widest.profile().sliding_window == 2**31
    assert decode_query(encode_query(widest)) == (widest, [])


def test_a_preset_as_raw_bytes_keeps_its_ssm_element_size_and_sglangs_state():
    # Qwen3-Next at TP 2 as raw bytes: ssm 262,144 elements of 2 B, which SGLang keeps in
    # float32: 24,576 + 262,144 x 4 = 1,073,152 B a layer, as for the preset itself
    preset = app_model.profile_for("Qwen3-Next-80B-A3B", None, 2)
    raw = RawModel.from_profile(preset)
    assert raw.ssm_element_bytes == 2 and raw.profile(preset.name) == preset
    state = AppState(model=CUSTOM, raw=raw, tp=2)
    query = encode_query(state)
    assert query["ssm_el"] == "2" and decode_query(query) == (state, [])
    sglang = run_strategy("sglang", state.profile(), budget_bytes=10**11)
    assert sglang.extras["state_layer_bytes"] == 24_576 + 262_144 * 4 == 1_073_152
    # exported and loaded again: the same profile
    loaded = app_model.load_model_json(json.dumps(profile_to_dict(preset)))
    assert loaded == preset
    # new state tensors keep the element size while the ssm tensor is whole elements of it
    assert raw.with_state((("conv", 8), ("ssm", 6))).ssm_element_bytes == 2
    assert raw.with_state((("conv", 8), ("ssm", 7))).ssm_element_bytes is None
    assert raw.with_state((("conv", 8),)).ssm_element_bytes is None
    _, notices = decode_query({**query, "ssm_el": "3"})  # 524,288 B is no whole 3-byte count
    assert "ssm_el=3 but state has an ssm tensor of 524288 B" in notices[0]  # its keys
    # its conv rows (3, which vLLM widens per drafted token) ride in the link, and stay while
    # the conv tensor does: other conv bytes may be other rows, so they are then taken as given
    assert (raw.conv_rows, query["conv_rows"]) == (3, "3")
    assert raw.with_state((("conv", 24_576), ("ssm", 6))).conv_rows == 3
    assert raw.with_state((("conv", 32_768), ("ssm", 6))).conv_rows is None
    # so does its conv element size (2 B, bfloat16: SGLang re-sizes a conv of another)
    assert (raw.conv_element_bytes, query["conv_el"]) == (2, "2")
    assert raw.with_state((("conv", 24_576), ("ssm", 6))).conv_element_bytes == 2
    assert raw.with_state((("conv", 32_768), ("ssm", 6))).conv_element_bytes is None


@pytest.mark.parametrize("preset", presets.list_presets())
def test_every_preset_survives_raw_bytes_the_link_and_the_export_whole(preset):
    # RawModel, the link and the profile JSON carry CacheProfile's fields: one left out (as the
    # ssm element size once was) changes a figure without a word
    profile = app_model.profile_for(preset, None, 1)
    raw = RawModel.from_profile(profile)
    assert raw.profile(profile.name) == profile
    state = AppState(model=CUSTOM, raw=raw)
    assert decode_query(encode_query(state))[0].profile() == replace(profile, name=CUSTOM)
    assert app_model.load_model_json(json.dumps(profile_to_dict(profile))) == profile
    # the GDN layers' key head dims are outside equality (they restate the model): said apart
    for back in (raw.profile(), decode_query(encode_query(state))[0].profile(),
                 app_model.load_model_json(json.dumps(profile_to_dict(profile)))):
        assert back.gdn_key_head_dims == profile.gdn_key_head_dims


def k3_and_qwen_on_the_gpus_that_keep_their_checkpoint_block():
    """A Kimi-K3 shape (Kimi-Linear's bytes under KimiK3ForConditionalGeneration: FlashKDA on
    a Hopper, heads of 128 alone) and Qwen3-Next (FlashInfer's GDN prefill on a Blackwell,
    heads of 128 alone), each with the compute capability at which vLLM 0.34 keeps their
    prefill checkpoint block only where the key head dims are known to be 128."""
    kimi = app_model.profile_for("Kimi-Linear-48B-A3B", None, 1)
    return ((replace(kimi, architectures=("KimiK3ForConditionalGeneration",)), (9, 0)),
            (app_model.profile_for("Qwen3-Next-80B-A3B", None, 1), (10, 0)))


def test_a_raw_model_keeps_its_gdn_key_head_dims_through_the_link_and_the_export():
    # raw bytes once read no dims back (not known): 0 checkpoint blocks at these GPUs where
    # the models keep 1; now the link's gdn_dims and the JSON's gdn_key_head_dims carry them
    for profile, capability in k3_and_qwen_on_the_gpus_that_keep_their_checkpoint_block():
        assert profile.gdn_key_head_dims == {128}
        assert checkpoint_blocks_kept(profile, capability) == 1
        assert checkpoint_blocks_kept(replace(profile, gdn_key_head_dims=()), capability) == 0
        query = encode_query(AppState(model=CUSTOM, raw=RawModel.from_profile(profile)))
        exported = profile_to_dict(profile)
        assert (query["gdn_dims"], exported["gdn_key_head_dims"]) == ("128", [128])
        for back in (decode_query(query)[0].raw.profile(),
                     app_model.load_model_json(json.dumps(exported))):
            assert back.gdn_key_head_dims == {128}
            assert checkpoint_blocks_kept(back, capability) == 1
        # dims not known stay not known: no key, no field, as before
        bare = RawModel.from_profile(replace(profile, gdn_key_head_dims=()))
        assert "gdn_dims" not in encode_query(AppState(model=CUSTOM, raw=bare))
        assert "gdn_key_head_dims" not in profile_to_dict(bare.profile())
    for bad, why in (("0", "gdn_dims='0' must be positive: e.g. gdn_dims=128"),
                     ("x", "gdn_dims='x' is not a whole number: give one from 1 to 1,048,576, "
                           "e.g. gdn_dims=128"),
                     ("1,2,3,4,5", "gdn_dims='1,2,3,4,5' holds 5 numbers, which is more than 4: "
                                   "give 4 or less")):
        state, notices = decode_query({**query, "gdn_dims": bad})
        assert state.raw is None and notices == [
            f"The custom model in the link is not valid ({why}); using the default model "
            "(Qwen3-Next-80B-A3B)."]
    for bad, why in (([0], "gdn_key_head_dims 0 must be positive: give 1 or more; a GDN "
                           "layer's key head dim"),
                     (["128"], "gdn_key_head_dims '128' (str) must be a whole number: give 1 "
                               "or more; a GDN layer's key head dim"),
                     (128, "gdn_key_head_dims is 128: give a set of head dims, e.g. {128}, or "
                           "an empty one where not known")):
        with pytest.raises(ValueError) as caught:
            app_model.load_model_json(json.dumps({**exported, "gdn_key_head_dims": bad}))
        assert str(caught.value) == why


def test_raw_models_carry_every_cache_profile_field():
    # a new CacheProfile field must join CARRIED_FIELDS (and a link key) or get its own form,
    # or be a model's alone (MODEL_ONLY_FIELDS: the TP behind its bytes, for attention DP)
    own_form = {"layer_types", "kv_bytes_per_slot", "state_const_bytes", "name"}
    assert {f.name for f in fields(CacheProfile)} == (own_form | set(CARRIED_FIELDS)
                                                      | set(MODEL_ONLY_FIELDS))
    assert [name for name, _p, _w in app_state._CARRIED_KEYS.values()] == list(
        CARRIED_FIELDS)
    # a link key names one thing: a model's field or a setting, never both (Llama 4's chunk
    # once took the mamba chunk option's "chunk")
    assert not set(app_state._CARRIED_KEYS) & set(app_state._SETTINGS)


def test_a_raw_model_carries_its_sliding_layers_own_bytes_in_the_link_and_the_export():
    # Gemma 4's shape as raw bytes: its sliding layers' 16,384 B a token ride as swa_kv
    raw = RawModel("(5*sliding,full)*10", 8_192, sliding_window=1_024,
                   sliding_kv_bytes_per_slot=16_384)
    query = encode_query(AppState(model=CUSTOM, raw=raw))
    assert (query["kv"], query["swa_kv"]) == ("8192", "16384")
    assert decode_query(query)[0].raw == raw
    profile = raw.profile()
    assert profile.kv_bytes_per_token == 50 * 16_384 + 10 * 8_192
    exported = profile_to_dict(profile)
    assert exported["sliding_kv_bytes_per_slot"] == 16_384
    assert app_model.load_model_json(json.dumps(exported)) == profile
    # on a model without sliding layers the link's value is refused, with its key named
    state, notices = decode_query({"model": CUSTOM, "layers": "full*4", "kv": "8192",
                                   "swa_kv": "16384"})
    assert state.raw is None and "swa_kv=16384 but layers has no sliding_attention layer" \
        in notices[0]
    # state layers without state=: the fix in the link's own syntax, not a Python dict
    _, notices = decode_query({"model": CUSTOM, "layers": "(3*linear,full)*12", "kv": "2048"})
    assert notices == ["The custom model in the link is not valid (layers="
                       "'(3*linear,full)*12' has linear (state) layers but no state gives "
                       "their bytes: give the state tensors of one layer per TP rank, e.g. "
                       "state=conv=49152,ssm=2097152); using the default model "
                       "(Qwen3-Next-80B-A3B)."]
    # 0 (none of its own) is the link without swa_kv: the value names its least, not a range
    # to 2^60
    _, notices = decode_query({**query, "swa_kv": "0"})
    assert notices == ["The custom model in the link is not valid (swa_kv='0' must be "
                       "positive: give swa_kv=1); using the default model (Qwen3-Next-80B-A3B)."]


def test_a_raw_model_carries_its_attention_chunk_in_the_link():
    raw = RawModel("(3*chunked,full)*12", 4096, attention_chunk_size=8192)
    state = AppState(model=CUSTOM, raw=raw, mamba_chunk_size=256)
    query = encode_query(state)
    assert query["attn_chunk"] == "8192" and query["chunk"] == "256"
    assert decode_query(query) == (state, [])
    assert state.profile().attention_chunk_size == 8192


@pytest.mark.parametrize(("arch", "why"), [
    ("Gemma 3", "arch='Gemma 3': 'Gemma 3' is not a class name"),
    ("<b>Llama</b>", "arch='<b>Llama</b>': '<b>Llama</b>' is not a class name"),
    ("Llama,3B", "arch='Llama,3B': '3B' is not a class name"),
    # letters alone, but one past the 100 characters a class name takes: said so, not "is not a
    # class name", which sent the reader to look for a bad character there is none of
    ("A" * 101, f"arch='{'A' * 80}'... (101 characters): '{'A' * 40}'... (101 characters) is "
     "longer than a class name (at most 100 characters)"),
    (",".join("ABCDEFGHI"), "arch='A,B,C,D,E,F,G,H,I': 9 architectures, more than a "
     "config.json lists (at most 8)"),
])
def test_a_links_architectures_must_be_class_names(arch, why):
    # the engines look a model's architectures up by class name (SGLang's sliding-window pool
    # list, vLLM's checkpointing GDN classes): any other text (the link took any) is refused as
    # the link's other bad values are, with a notice, not carried to the Model page
    state, notices = decode_query({"model": "custom", "layers": "full*4", "kv": "8",
                                   "arch": arch})
    assert state == DEFAULT
    assert notices == [
        f"The custom model in the link is not valid ({why}: give the config.json's "
        "architectures, comma-separated, e.g. arch=Gemma3ForConditionalGeneration); using the "
        f"default model ({DEFAULT.model})."]


def test_a_raw_model_carries_its_architectures_in_the_link():
    # Gemma 3 as raw bytes stays off SGLang's sliding-pool list, as its config says
    raw = RawModel("(5*sliding,full)*8", 8192, sliding_window=1024,
                   architectures=("Gemma3ForConditionalGeneration",))
    state = AppState(model=CUSTOM, raw=raw)
    query = encode_query(state)
    assert query["arch"] == "Gemma3ForConditionalGeneration"
    assert decode_query(query) == (state, [])
    assert state.profile().architectures == ("Gemma3ForConditionalGeneration",)
    assert RawModel.from_profile(state.profile()) == raw
    assert "arch" not in encode_query(AppState(model=CUSTOM, raw=replace(raw, architectures=())))
    # as a config.json lists them, one or a few, a space after each comma as typed
    two = decode_query({**query, "arch": "LlamaForCausalLM, Gemma3ForConditionalGeneration"})
    assert two[0].raw.architectures == ("LlamaForCausalLM", "Gemma3ForConditionalGeneration")
    assert two[1] == []
    # the SGLang pool option: None (by architecture) is the default, on / off are 1 / 0
    assert decode_query({"sg_swa_pool": "0"})[0].sglang_swa_pool is False
    assert encode_query(AppState(sglang_swa_pool=True)) == {"sg_swa_pool": "1"}
    assert decode_query({"sg_swa_pool": "auto"}) == (DEFAULT, [])


def test_a_preset_is_linked_by_name():
    state = AppState(model="Llama-3.1-8B")
    assert encode_query(state) == {"model": "Llama-3.1-8B"}
    assert decode_query({"model": "Llama-3.1-8B"})[0].profile().layer_types == (
        ("full_attention",) * 32)


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"block": "abc"}, "block_size", "block='abc' is not a whole number"),
        ({"block": "0"}, "block_size", "block='0' must be positive"),
        ({"frac": "1.5"}, "mem_fraction", "frac='1.5' is outside 0.01..1: e.g. frac=0.9"),
        # the slider shows 4 decimals: a fifth would be counted unseen, not rounded away
        ({"frac": "0.912345"}, "mem_fraction", "frac='0.912345' has more than 4 decimals: give "
         "at most 4, e.g. 0.9123"),
        ({"gpu": "Z900"}, "gpu", "gpu='Z900' is not one of"),
        ({"weights": "lots"}, "weights", "weights='lots' is not a size"),
        # a bare number under a MiB is a size typed without its unit, not 80 B of weights
        ({"weights": "80"}, "weights", "weights='80' reads as 80 B: give a unit, e.g. "
         "weights=80GB or 80GiB"),
        ({"gpu": "Custom", "gpu_mem": "141"}, "gpu_memory", "gpu_mem='141' reads as 141 B"),
        ({"weights": "0.5"}, "weights", "weights='0.5' reads as 0 B: give a unit"),  # not 0 B
        ({"weights": "80."}, "weights", "weights='80.' reads as 80 B: give a unit"),
        # thousands commas read as parse_size reads them, not as Python's float() error
        ({"weights": "1,000"}, "weights", "weights='1,000' reads as 1,000 B: give a unit, e.g. "
         "weights=1000GB or 1000GiB"),
        ({"weights": "1,000B"}, "weights", "weights='1,000B' reads as 1,000 B (B is bytes, not "
         "billions): a model of 1000 billion parameters takes 2000GB in bf16: give weights=2000GB"),
        # 70B is how a parameter count is written, not 70 bytes of weights
        ({"weights": "70B"}, "weights", "weights='70B' reads as 70 B (B is bytes, not billions): "
         "a model of 70 billion parameters takes 140GB in bf16: give weights=140GB"),
        ({"weights": "0.5B"}, "weights", "weights='0.5B' reads as 0 B (B is bytes, not "
         "billions): a model of 0.5 billion parameters takes 1GB in bf16: give weights=1GB"),
        # (fuzz) under a byte once floored: refused as typed (kv_mem=1e-10GB planned a 0 B
        # budget's refusal, naming 0)
        ({"kv_mem": "1e-10GB"}, "kv_memory", "kv_mem='1e-10GB' reads as 0 B, under one byte: "
         "give a size of 1 B or more, e.g. kv_mem=80GB"),
        ({"weights": "1e-13TB"}, "weights", "weights='1e-13TB' reads as 0 B, under one byte: "
         "give 0 for none, or a size of 1 B or more, e.g. weights=80GB"),
        ({"gpu": "Custom", "gpu_mem": "141 B"}, "gpu_memory",
         "gpu_mem='141 B' reads as 141 B (B is bytes, not billions): give gpu_mem=141GB or 141GiB"),
        ({"planner": "magic"}, "planner", "planner='magic'"),
        ({"tp": "-2"}, "tp", "tp='-2' must be positive"),
        ({"kernel": "0"}, "kernel_block_size", "kernel='0' must be positive"),
        ({"mamba": "bogus"}, "mamba_cache_mode", "mamba='bogus' is not one of none, align, all"),
        ({"chunk": "x"}, "mamba_chunk_size", "chunk='x' is not a whole number"),
        ({"sg_ratio": "0"}, "mamba_full_memory_ratio", "sg_ratio='0': give a number in"),
        ({"sg_slots": "0"}, "sglang_slots_per_request", "sg_slots='0' must be positive"),
        ({"sg_maxrun": "0"}, "sglang_max_running_requests", "sg_maxrun='0' must be positive"),
        ({"sg_mamba_size": "-1"}, "sglang_max_mamba_cache_size",
         "sg_mamba_size='-1' must be positive"),
        ({"sg_swa": "2"}, "swa_full_tokens_ratio", "sg_swa='2': give a number in [0.000001, 1]"),
        ({"sg_page": "0"}, "sglang_page_size", "sg_page='0' must be positive"),
        ({"sg_track": "0"}, "sglang_mamba_track_interval", "sg_track='0' must be positive"),
        ({"sg_track": "2.5"}, "sglang_mamba_track_interval", "sg_track='2.5' is not a whole"),
        ({"sg_ssm": "int8"}, "sglang_ssm_dtype",
         "sg_ssm='int8' is not one of float32, bfloat16, float16"),
        ({"mbt": "-1"}, "max_batched_tokens", "mbt='-1' must be positive: give 1 or more tokens"),
        ({"mbt": str(2**40 + 1)}, "max_batched_tokens",
         "mbt='1099511627777' is more than 1,099,511,627,776 tokens: give "
         "1,099,511,627,776 or fewer"),
        ({"lcm_pad": "11"}, "lcm_padding_bound",
         "lcm_pad='11': give a number in [0, 10] such as 0.25 or 1/4"),
        ({"device": "tpu:0"}, "lab_device", "device='tpu:0' is not a device"),
        ({"kernels": "cuda"}, "lab_kernels", "kernels='cuda' is not a list of torch / triton"),
        ({"layouts": "rows"}, "lab_layouts",
         "layouts='rows' is not a list of slot-major / page-major"),
        ({"rounds": "0"}, "lab_rounds", "rounds='0' must be positive"),
        ({"max_blocks": "-1"}, "lab_max_blocks", "max_blocks='-1' must not be negative"),
        ({"max_blocks": "1"}, "lab_max_blocks",
         "max_blocks='1': a benchmark's pool holds two pages at least; give max_blocks=2 or "
         "more, or 0"),
        ({"sweep": "all"}, "lab_sweep", "sweep='all' is not one of one run, pages per call"),
        ({"sweep_pages": "1,0"}, "lab_sweep_pages", "sweep_pages='1,0': '0' is out of range"),
        ({"sweep_blocks": "x"}, "lab_sweep_blocks", "sweep_blocks='x' is not a whole number"),
    ],
)
def test_a_bad_setting_falls_back_to_its_default_with_a_notice(params, field, words):
    state, notices = decode_query({**params, "ctx": "4096"})
    assert getattr(state, field) == getattr(DEFAULT, field)
    assert state.context == 4096  # the good values of the same link are kept
    assert len(notices) == 1 and words in notices[0] and "using the default" in notices[0]


def test_a_links_long_value_is_named_by_its_start_not_echoed_whole():
    # 5,000 characters of junk in any key (a link pasted into itself): each notice names the
    # value's start and its length, as the CLI's errors do, not a 5 KB (or 10 KB) box
    from flatkv.app_state import _CARRIED_KEYS, _SETTINGS

    junk = "x" * 5_000
    links = [{key: junk} for key in [*_SETTINGS, "model", junk]]
    links += [{"model": "custom", "layers": "full", "kv": "8", key: junk}
              for key in [*_CARRIED_KEYS, "layers", "state"]]
    links.append({"tp": ["1", junk]})
    # a negative size of 5,000 digits: its whole repr (5,106 characters)
    links.append({"gpu": "Custom", "gpu_mem": "-" + "9" * 5_000})
    for link in links:
        _, notices = decode_query(link)
        assert notices and all(len(n) < 600 for n in notices), (list(link)[0][:20], notices)
    _, (notice,) = decode_query({"block": junk})
    assert notice == (f"block='{'x' * 80}'... (5,000 characters) is not a whole number: give "
                      "one from 1 to 1,048,576, e.g. block=16; using the default (block=16).")


def test_a_links_whole_number_refusal_gives_a_value_the_key_takes_and_echoes_it_as_typed():
    # "tp='+-1' is not a whole number; using the default (tp=1)" said no fix, and
    # sg_page=1_000_000_0 came back regrouped, "sg_page=10,000,000", another figure
    _, notices = decode_query({"tp": "+-1", "sg_page": "1_000_000_0", "sg_track": "x",
                               "ssm_el": "x"})
    assert notices == [
        "tp='+-1' is not a whole number: give one from 1 to 1,024, e.g. tp=2; using the "
        "default (tp=1).",
        # its fix SGLang's own page, 1, as where it is no number (a page past 256 splits no
        # track interval of 256: SGLang would not start)
        "sg_page='1_000_000_0' is more than 1,048,576: e.g. sg_page=1; using the default "
        "(sg_page=1).",
        # a bound past any real one is not named: its lower bound alone
        "sg_track='x' is not a whole number: give one of 1 or more, e.g. sg_track=256; using "
        "the default (sg_track=256).",
        "Ignored link parameter ssm_el: only a model given as raw bytes (model=custom) reads "
        "it; the link's model is Qwen3-Next-80B-A3B."]
    # the example is one the key takes: a raw model's ssm_el takes 1 to 8
    _, notices = decode_query({"model": "custom", "layers": "full", "kv": "8", "ssm_el": "x"})
    assert "ssm_el='x' is not a whole number: give one from 1 to 8, e.g. ssm_el=8)" in notices[0]
    for key, value in (("tp", "2"), ("sg_track", "12"), ("sg_page", "1_000_000")):
        assert decode_query({key: value})[1] == []


def test_a_links_range_or_choice_refusal_gives_a_value_the_key_takes_as_the_link_writes_it():
    # "block='0' must be positive", "mamba='bogus' is not one of none, align, all" said
    # the range or the options and no value to give, where a number's refusal said "e.g. tp=2"
    assert decode_query({"block": "0", "rounds": "500", "req": "5000", "max_blocks": "-1",
                         "sg_track": "0"})[1] == [
        "block='0' must be positive: e.g. block=16; using the default (block=16).",
        "req='5000' is more than 4,096: give req=4096; using the default (4 live requests, or "
        "as many as fit).",
        # SGLang's default, 256, not the nearest 1: pages of 512 split no interval of 1
        "sg_track='0' must be positive: e.g. sg_track=256; using the default (sg_track=256).",
        "rounds='500' is more than 100: give rounds=100; using the default (rounds=auto).",
        "max_blocks='-1' must not be negative: give max_blocks=0; using the default "
        "(max_blocks=0)."]
    # a size (block, kernel, chunk, window, blocks) out of range is given a typical one, as
    # frac's 0.9: block=1 (the nearest) read as a size to use; a count keeps the nearest
    assert decode_query({"align": "2000000", "kernel": "0", "chunk": "0", "kv_blocks": "1"}
                        )[1] == [
        "align='2000000' is more than 1,048,576: e.g. align=16; using the default "
        "(align=auto).",
        "kv_blocks='1' must be at least 2: e.g. kv_blocks=6000; using the default "
        "(kv_blocks=6000).",
        "kernel='0' must be positive: e.g. kernel=16; using the default (kernel=auto).",
        "chunk='0' must be positive: e.g. chunk=256; using the default (chunk=auto)."]
    raw = {"model": "custom", "layers": "sliding,full", "kv": "8"}
    for key, typical in (("window", 4096), ("model_chunk", 256), ("attn_chunk", 8192),
                         ("model_kernel", 16)):
        assert f"{key}='0' must be positive: " in (
            notice := decode_query({**raw, key: "0"})[1][0])
        assert f": e.g. {key}={typical})" in notice
    # a TP past 1,024: the nearest the model splits over, Llama-3.1-8B's 32 query heads
    assert decode_query({"model": "Llama-3.1-8B", "tp": "2048"})[1] == [
        "tp='2048' is more than 1,024: give tp=32; using the default (tp=1)."]
    # an option typed in another case or a letter off: that option, else the first
    assert decode_query({"mamba": "ALL", "planner": "packd", "sweep": "all"})[1] == [
        "planner='packd' is not one of packed, per-component: give one of them, e.g. "
        "planner=packed; using the default (planner=packed).",
        "mamba='ALL' is not one of none, align, all: give one of them, e.g. mamba=all; using "
        "the default (mamba=none).",
        "sweep='all' is not one of one run, pages per call, page bytes: give one of them, e.g. "
        "sweep=one run; using the default (sweep=one run)."]
    # a GPU by its chip alone: the preset of that chip (the first whose words start so), where
    # each gave the first option, H100 80GB, another GPU (B200: a Blackwell, 192 GB)
    for typed, meant in (("B200", "B200 192GB"), ("h200", "H200 141GB"), ("A100", "A100 80GB"),
                         ("4090", "RTX 4090 24GB"), ("L40S", "L40S 48GB")):
        (notice,) = decode_query({"gpu": typed})[1]
        assert notice.split("e.g. ", 1)[1].split(";")[0] == f"gpu={meant}"
        assert decode_query({"gpu": meant})[1] == []
    for key, value in (("block", "1"), ("req", "4096"), ("rounds", "100"), ("mamba", "all"),
                       ("planner", "packed"), ("sweep", "one run")):
        assert decode_query({key: value})[1] == []
    assert decode_query({"model": "Llama-3.1-8B", "tp": "32"})[1] == []


def test_every_link_notice_names_its_keys_value_as_key_equals_value():
    # ratios, tokens and sizes wrote "sg_ratio '+0.8'", "ctx is '0'", "gpu_mem '80'" where the
    # other keys write frac='٠.٨': one form (a list's keys name the item they refuse, its part)
    from flatkv.app_state import _SETTINGS

    assert decode_query({"sg_ratio": "+0.8", "ctx": "0", "gpu": "Custom", "gpu_mem": "80",
                         "sg_chunk": "+5", "lcm_pad": "x"})[1] == [
        "gpu_mem='80' reads as 80 B: give a unit, e.g. gpu_mem=80GB or 80GiB; using the default "
        "(gpu_mem=80GB).",
        "ctx='0' must be positive: give 1 or more tokens; using the default (the model's "
        "max_model_len, else 32,768).",
        "sg_ratio='+0.8' has a plus sign: write it without the sign, e.g. sg_ratio=0.8; using "
        "the default (sg_ratio=0.9).",
        "sg_chunk='+5' has a plus sign: write it without the sign, e.g. sg_chunk=5; using the "
        "default (sg_chunk=auto).",
        "lcm_pad='x': give a number in [0, 10] such as 0.25 or 1/4; using the default "
        "(lcm_pad=0.25)."]
    for key in set(_SETTINGS) - {"sweep_pages", "sweep_blocks"}:
        for value in ("x", "+5", "-٢", "0", "-5", "1e99", "0.5", " "):
            for notice in decode_query({key: value})[1]:
                assert not notice.startswith(key) or notice.startswith(
                    (f"{key}=", f"{key} is empty")), notice
    # ... and so every value it suggests: gpu_mem='٨٠' gave "e.g. 80GB", tp='+8' "e.g. 8",
    # weights='70B' "give 140GB" (a list's keys suggest an item: not one key=value)
    for key in set(_SETTINGS) - {"sweep_pages", "sweep_blocks"}:
        for value in ("x", "+8", "٨", "-٢", "+0", "٠", "80", "0.5", "70B", "1e99", "9" * 50):
            for notice in decode_query({key: value})[1]:
                for fix in re.findall(r"(?:e\.g\.|: give) ([0-9]\S*)", notice):
                    raise AssertionError(f"{key}: a bare fix {fix} in {notice!r}")
                for fix in re.findall(r"e\.g\. (\S+)", notice):
                    assert fix.startswith(f"{key}="), notice


def test_a_links_huge_number_is_named_by_its_start_not_written_whole():
    # 400 nines in a whole-number key: "kv_blocks=9,999,...,999 is outside ..." ran 608
    # characters, "sweep_pages: 9,999,..." 642 (a fuzzer's finding); a key's value is named
    # as typed, by its start and length, a list's count by its digits
    from flatkv.app_state import _SETTINGS

    nines = "9" * 400
    for key in [*_SETTINGS, "window", "ssm_el", "model_kernel"]:
        link = {"model": "custom", "layers": "sliding*2,full", "kv": "8", key: nines}
        _, notices = decode_query(link)
        assert all(len(n) < 300 for n in notices), (key, notices)
    assert decode_query({"kv_blocks": nines})[1] == [
        f"kv_blocks='{'9' * 80}'... (400 characters) is more than 2,147,483,648: e.g. "
        "kv_blocks=6000; using the default (kv_blocks=6000)."]
    # "-" and 40 digits, as typed (its minus sign was once lost: "a 40-digit number")
    assert decode_query({"tp": "-" + "1" * 40})[1] == [
        f"tp='-{'1' * 40}' must be positive: give tp=1; using the default (tp=1)."]
    assert decode_query({"sweep_pages": nines})[1] == [
        f"sweep_pages='{'9' * 80}'... (400 characters) is out of range; give values from 1 to "
        "1,099,511,627,776; using the default (sweep_pages=auto)."]
    # a ratio's text: its start quoted, then its length, where the quote was left open
    # ("sg_ratio is '999...999...: give a number")
    assert decode_query({"sg_ratio": nines})[1] == [
        f"sg_ratio='{'9' * 64}'... (400 characters): give a number in [0.000001, 1000000] "
        "such as 0.9 or 9/10; using the default (sg_ratio=0.9)."]
    # a value short of 80 characters stays whole, as typed
    # its fix the nearest TP the default model (Qwen3-Next, 16 key heads) splits over
    assert decode_query({"tp": "2048"})[1] == ["tp='2048' is more than 1,024: give tp=16; "
                                               "using the default (tp=1)."]


@pytest.mark.parametrize(("extra", "why"), [
    # a profile's field names and "or None" were the notice's words, not the link's keys
    ({"conv_rows": "5"}, "conv_rows=5 but state has no conv tensor: give the rows of a "
     "conv tensor that is whole rows, or leave it out"),
    ({"ssm_dtype": "float32"}, "ssm_dtype is float32 (4-byte elements) but the link gives no "
     "ssm_el: give the element size of that dtype, or leave ssm_dtype out"),
    ({"indexer": "99999"}, "indexer=99999 but kv=4096: the indexer's keys are a part of "
     "a token's KV bytes (DeepSeek-V3.2's 132 of 1,284 B in bfloat16), so give fewer bytes "
     "than kv, or leave it out without an indexer"),
    ({"kv": "0"}, "kv=0 but layers has attention layers: give the bytes one token adds to "
     "one attention layer"),
    # without the profile's hint for a profile file and the command line, which a link is not
    ({"layers": "sliding*2,full"}, "the link gives no window but the model has "
     "sliding_attention "
     "layers: give the window in tokens"),
])
def test_a_broken_custom_model_in_a_link_is_named_by_the_links_keys(extra, why):
    link = {"model": "custom", "layers": "full*2", "kv": "4096", **extra}
    state, notices = decode_query(link)
    assert state.model == DEFAULT.model
    assert notices == [f"The custom model in the link is not valid ({why}); using the default "
                       "model (Qwen3-Next-80B-A3B)."]


def test_a_stale_model_or_a_broken_custom_model_falls_back_to_the_default_model():
    state, notices = decode_query({"model": "GPT-9"})
    assert state.model == DEFAULT.model and "'GPT-9' is not a known model" in notices[0]
    assert "(one of DeepSeek-V3, DeepSeek-V3.2, Falcon-H1-7B, gpt-oss-120b," in notices[0]
    state, notices = decode_query({"model": "custom", "layers": "full*x", "kv": "2048"})
    assert state.model == DEFAULT.model and state.raw is None
    assert "custom model in the link is not valid" in notices[0] and "full*x" in notices[0]
    # state layers without state tensors: the profile rejects it
    state, notices = decode_query({"model": "custom", "layers": "linear*4,full", "kv": "64"})
    assert state.model == DEFAULT.model and "no state gives their bytes" in notices[0]
    # an edited model's packed spec cut or mangled: said in the link's words, not zlib's
    state, notices = decode_query({"model": "spec", "spec": "garbage"})
    assert state.model == DEFAULT.model
    assert "spec value is damaged: it is not a model packed by this app (a link cut short?)" \
        in notices[0] and "Error -3" not in notices[0]
    # (link fuzz) no spec, or one that packs nothing ('x' 'x9c' as base64, eJw): the editor's
    # "model JSON is empty: give the model's JSON", which no one opening a link can do
    fallback = "using the default model (Qwen3-Next-80B-A3B)."
    for link in ({"model": "spec"}, {"model": "spec", "spec": ""}):
        assert decode_query(link)[1] == [
            "The model in the link is not valid (the link gives no spec, the model it packs: "
            f"copy the whole link again); {fallback}"]
    assert decode_query({"model": "spec", "spec": "eJw"})[1] == [
        "The model in the link is not valid (spec value is damaged: it is not a model packed by "
        f"this app (a link cut short?); copy the whole link again); {fallback}"]
    # one longer than any link the app writes: its length, the bound and the fix, where it
    # read "spec is 8,193 characters long: at most 8,192" with no fix
    assert decode_query({"model": "spec", "spec": "A" * 8193})[1] == [
        "The model in the link is not valid (spec is 8,193 characters long, which is more than "
        f"8,192: give 8,192 or less, as the links this app writes do); {fallback}"]


def test_a_hand_typed_preset_name_finds_its_preset_in_any_case_or_by_its_file():
    # the CLI's --preset takes these too; the link is then written with the display name
    for typed in ("jamba-1.5-mini", "JAMBA-1.5-MINI", "nemotron-h-8b", " Qwen3.5-27b "):
        state, notices = decode_query({"model": typed})
        assert notices == [] and state.model == presets.preset_name(typed)
        assert encode_query(state)["model"] == state.model
    assert [decode_query({"model": t})[0].model for t in ("jamba-1.5-mini", "qwen3.5-27b")] == [
        "Jamba-1.5-Mini", "Qwen3.5-27B"]


def test_unknown_parameters_are_named_and_streamlit_ones_ignored():
    state, notices = decode_query({"zoom": "2", "embed": "true", "block": ["8", "32"]})
    assert state.block_size == 32  # the last of repeated values, as st.query_params reads it
    assert notices == ["The link gives block 2 times ('8', '32'): using the last, block='32'.",
                       "Ignored unknown link parameter: 'zoom'."]
    # many of them: five named, then how many more (5,000 unknown keys made a notice of
    # 33,924 characters)
    _, notices = decode_query({**{f"k{i}": "1" for i in range(5_000)},
                               "tp": [str(i) for i in range(5_000)]})
    # the count with its thousands separator, as the 4,995 beside it and the notice under it
    assert notices == ["The link gives tp 5,000 times ('0', '1', '2', '3', '4', and 4,995 more): "
                       "using the last, tp='4999'.",
                       "tp='4999' is more than 1,024: give tp=16; using the default (tp=1).",
                       "Ignored unknown link parameters: 'k0', 'k1', 'k10', 'k100', 'k1000', "
                       "and 4,995 more."]



def test_model_parameters_another_model_reads_are_named_not_dropped_silently():
    # a raw model's keys beside a preset (kv_dtype=fp8 does not make DeepSeek-V3's cache fp8),
    # or without model=custom, and an edited model's spec beside another model: said, not
    # silently read as the default or the preset
    state, notices = decode_query({"model": "DeepSeek-V3", "kv_dtype": "fp8", "tp": "8"})
    assert state.model == "DeepSeek-V3" and state.raw is None and state.tp == 8
    assert notices == ["Ignored link parameter kv_dtype: only a model given as raw bytes "
                       "(model=custom) reads it; the link's model is DeepSeek-V3."]
    state, notices = decode_query({"layers": "full*4", "kv": "100"})
    assert state.model == DEFAULT.model and notices == [
        "Ignored link parameters kv, layers: only a model given as raw bytes (model=custom) "
        f"reads them; the link's model is {DEFAULT.model}."]
    state, notices = decode_query({"model": "custom", "layers": "full*4", "kv": "100",
                                   "spec": "abc"})
    assert state.model == CUSTOM and notices == [
        "Ignored link parameter spec: only an edited model (model=spec) reads it; the "
        "link's model is custom."]
    # every link the app writes reads back with no notice
    for model in ("Jamba-1.5-Mini", CUSTOM):
        raw = RawModel("full*4", 100, kv_dtype="float8_e4m3fn") if model == CUSTOM else None
        assert decode_query(encode_query(replace(DEFAULT, model=model, raw=raw)))[1] == []


@pytest.mark.parametrize("gpu", sorted(GPU_PRESETS))
def test_every_gpu_preset_is_the_memory_its_name_says(gpu):
    # nvidia-smi's MiB; vendors name a card in GB (B200 192GB: 183,359 MiB = 192.3 GB) or in
    # GiB (H200 141GB: 143,771 MiB = 140.4 GiB): the preset is within 1% of one of them
    named = int(re.search(r"(\d+)GB$", gpu).group(1))
    nbytes = GPU_PRESETS[gpu]
    assert nbytes % 2**20 == 0
    assert min(abs(nbytes / 10**9 - named), abs(nbytes / 2**30 - named)) < named / 100
    # the sidebar's budget starts from exactly these bytes
    budget = AppState(gpu=gpu, mem_fraction=1.0, weights=0).budget()
    assert budget.gpu_bytes == budget.cache_bytes == nbytes


def test_state_text_parses_units_and_rejects_junk():
    assert app_model.parse_state_text("conv=49152, ssm=2MiB") == (
        ("conv", 49152), ("ssm", 2097152))
    assert app_model.parse_state_text("") == ()
    for bad in ("conv", "conv=1,conv=2", "=5", "conv=abc"):
        with pytest.raises(ValueError):
            app_model.parse_state_text(bad)


def test_a_load_reads_one_source_the_upload_or_the_paste():
    assert app_model.one_source(b"{}", "", "config.json") == b"{}"
    assert app_model.one_source(None, '{"a": 1}', "config.json") == '{"a": 1}'
    assert app_model.one_source(None, "", "config.json") is None
    assert app_model.one_source(b"", "  \n", "config.json") == b""  # blank paste: the file
    # both given: neither is loaded under the name the user typed for the other
    with pytest.raises(ValueError, match=re.escape(
            "Both an uploaded model JSON and pasted text are given: remove the file (the x "
            "beside its name) or clear the pasted text, then load again.")):
        app_model.one_source(b"{}", '{"a": 1}', "model JSON")


def test_model_json_round_trip_and_errors():
    profile = QWEN35.profile("Qwen3.5-like")
    assert app_model.load_model_json(json.dumps(profile_to_dict(profile))) == profile
    spec = app_model.preset_spec("Llama-3.1-8B")
    assert app_model.load_model_json(json.dumps(spec.to_dict())) == spec
    with pytest.raises(ValueError, match="not valid JSON"):
        app_model.load_model_json("{nope")
    with pytest.raises(ValueError, match="format"):
        app_model.load_model_json('{"format": "other/1"}')
    # a key given twice is refused, as the CLI's --model-file refuses it: a JSON reader keeps
    # the last silently, so kv_heads 8 then 2 would plan 2
    twice = json.dumps(spec.to_dict()).replace('"name": ', '"name": "first", "name": ', 1)
    with pytest.raises(ValueError, match=re.escape(
            "model JSON names 'name' twice in one object: keep one (JSON readers keep the last, "
            "silently)")):
        app_model.load_model_json(twice)
    with pytest.raises(ValueError, match=r'a raw profile \(kv_bytes_per_slot, layers\): add '
                       '"format": "flatkv-profile/1"'):
        app_model.load_model_json('{"layers": "full*4", "kv_bytes_per_slot": 64}')
    # the keys it found, not both names whatever it holds
    with pytest.raises(ValueError, match=r'a raw profile \(layers\): add "format"'):
        app_model.load_model_json('{"layers": "full*4"}')
    with pytest.raises(ValueError, match="layer pattern"):
        app_model.load_model_json(json.dumps(
            {"format": app_model.PROFILE_FORMAT, "layers": "full*", "kv_bytes_per_slot": 4}))
    # a misspelt key would plan DeepSeek-V3's MLA at block 16 instead of its kernel's 64
    mla = {"format": app_model.PROFILE_FORMAT, "layers": "full*61", "kv_bytes_per_slot": 1152}
    assert app_model.load_model_json(json.dumps({**mla, "kernel_block_size": 64})
                                     ).kernel_block_size == 64
    with pytest.raises(ValueError, match="unknown key 'kernel_block_sise': a flatkv-profile/1 "
                       "file holds "):
        app_model.load_model_json(json.dumps({**mla, "kernel_block_sise": 64}))
    # a state tensor name must read back from a link's name=bytes pairs
    for name in ("a,b", "x=y", " conv", ""):
        with pytest.raises(ValueError, match="state_const_bytes has a tensor named"):
            app_model.load_model_json(json.dumps(
                {"format": app_model.PROFILE_FORMAT, "layers": "linear,full",
                 "kv_bytes_per_slot": 4, "state_const_bytes": {name: 64}}))


def test_presets_and_tp_give_the_spec_reference_bytes():
    qn = AppState(model="Qwen3-Next-80B-A3B").profile()
    assert (qn.count("full_attention"), qn.count("linear_attention")) == (12, 36)
    assert qn.kv_bytes_per_slot == 2 * 2 * 256 * 2  # K and V, 2 heads x 256, bf16
    assert qn.state_const_bytes == {"conv": 49_152, "ssm": 32 * 128 * 128 * 2}
    # SPEC section 2, TP=2 (vLLM run log): 1,024 B/token, conv 24,576 B, ssm 524,288 B
    tp2 = AppState(model="Qwen3-Next-80B-A3B", tp=2).profile()
    assert tp2.kv_bytes_per_slot == 1024
    assert tp2.state_const_bytes == {"conv": 24_576, "ssm": 524_288}
    assert app_model.largest_model() == "Falcon-H1-7B"  # 44 attention + 44 Mamba2 layers
    assert "Qwen3-Next-80B-A3B" in app_model.model_names()


def test_an_edited_spec_travels_in_the_link():
    spec = app_model.preset_spec("Llama-3.1-8B").with_options(kv_dtype="float8_e4m3fn",
                                                              name="Llama fp8")
    state = AppState(model="spec", spec=app_model.spec_to_json(spec), block_size=32)
    # the spec as the link carries it: compact JSON of the link's fields in their order (TP 1),
    # zlib level 9, base64url without its "=" padding
    source = load_preset("Llama-3.1-8B").source
    spec_json = json.dumps({
        "format": "flatkv-model/1", "name": "Llama fp8", "source": source, "model_layers": 32,
        "attention_heads": 32, "max_model_len": 131_072, "architectures": ["LlamaForCausalLM"],
        "kv_dtype": "float8_e4m3fn", "conv_dtype": "bfloat16", "ssm_dtype": "bfloat16",
        "kinds": {"full": {"kind": "attention", "kv_heads": 8, "head_dim_k": 128,
                           "head_dim_v": 128, "sliding_window": None,
                           "attention_chunk_size": None}},
        "pattern": "32*full"}, separators=(",", ":"))
    assert state.spec == spec_json and len(spec_json) == 586
    packed = zlib.compress(spec_json.encode(), 9)
    query = encode_query(state)
    assert query == {"model": "spec", "block": "32",
                     "spec": base64.urlsafe_b64encode(packed).decode().rstrip("=")}
    # 4 characters per 3 zlib bytes (359 bytes, 479 characters with this machine's zlib; the
    # bytes are zlib's to choose), shorter than the raw JSON's 586
    assert len(query["spec"]) == -(-len(packed) * 4 // 3) < len(spec_json)
    back, notices = decode_query(query)
    assert notices == [] and back == state
    assert back.profile().kv_bytes_per_slot == 8 * 256 * 1  # 8 KV heads x (128 + 128), fp8
    assert back.profile().name == "Llama fp8"
    # a config's architectures travel too: SGLang's sliding pool depends on them
    gpt = app_model.preset_spec("gpt-oss-20b").with_options(name="gpt-oss edited")
    carried = decode_query(encode_query(AppState(model="spec", spec=app_model.spec_to_json(gpt))))
    assert carried[0].profile().architectures == ("GptOssForCausalLM",)
    # and its context, vLLM's --max-model-len unless given
    assert carried[0].model_spec().max_model_len == 131_072
    draft = app_model.SpecDraft.from_spec(gpt).with_field("full", "kv_heads", 4)
    assert draft.to_spec().max_model_len == 131_072  # an edit keeps it


def test_a_damaged_spec_or_a_tp_the_heads_refuse_falls_back_with_a_notice():
    state, notices = decode_query({"model": "spec", "spec": "bm90IGEgc3BlYw"})
    assert state.model == DEFAULT.model and "not valid" in notices[0]
    state, notices = decode_query({"tp": "3"})  # 16 GDN key heads over 3 ranks
    assert state.tp == 1 and "TP 3 does not divide them" in notices[0]


def test_layer_rows_and_kind_summary_by_hand():
    profile = QWEN35.profile()
    rows = app_model.layer_rows(profile)
    assert len(rows) == 48
    # its group as Layout names it (it read the planner's "full_attention", "linear_attention")
    assert rows[3] == {"cache layer": 3, "kind": "full attention", "group": "full attention",
                       "slot": 0, "bytes per token": 2048, "state bytes": 0}
    assert rows[4]["slot"] == 3 and rows[4]["state bytes"] == 49152 + 2097152
    assert rows[4]["group"] == "state"
    kinds = {k["kind"]: k for k in app_model.kind_summary(profile)}
    assert kinds["full attention"] == {"kind": "full attention", "layers": 12,
                                       "KV B per token": 2048, "state B per layer": None}
    assert kinds["constant state (linear attention, Mamba, short conv)"] == {
        "kind": "constant state (linear attention, Mamba, short conv)", "layers": 36,
        "KV B per token": None,
        "state B per layer": 49152 + 2097152}
    # an attention-only model: no state columns
    llama = app_model.kind_summary(app_model.profile_for("Llama-3.1-8B", None, 1))
    assert llama == [{"kind": "full attention", "layers": 32, "KV B per token": 4096}]


# ---- the hand editor's draft (app_model.SpecDraft) ----------------------------------------


def small_hybrid() -> app_model.SpecDraft:
    draft = app_model.SpecDraft(name="small").with_kind("full attention").with_kind("Mamba2")
    for field, value in (("n_heads", 8), ("head_dim", 64), ("d_state", 16), ("n_groups", 1)):
        draft = draft.with_field("mamba2", field, value)
    return replace(draft, pattern="(mamba2,full)*2")


def test_a_draft_builds_a_hybrid_kind_by_kind():
    draft = app_model.SpecDraft().with_kind("full attention")
    assert draft.kind_names == ["full"] and draft.pattern == "full"  # one kind is a model
    spec = small_hybrid().to_spec()
    assert spec.pattern == "(mamba2,full)*2"
    profile = spec.profile()
    assert profile.layer_types == ("linear_attention", "full_attention") * 2
    # full template: 8 KV heads x (128 + 128) x 2 B = 4,096 B per token
    assert profile.kv_bytes_per_slot == 4096
    # SPEC section 2 Mamba2: conv ((8 x 64 + 2 x 1 x 16), 3) x 2 B; ssm (8, 64, 16) x 2 B
    assert profile.state_const_bytes == {"conv": 544 * 3 * 2, "ssm": 8 * 64 * 16 * 2}
    # the draft of a spec gives the spec back, with what SGLang reads of the config it came from
    assert app_model.SpecDraft.from_spec(spec).to_spec() == spec
    from_config = replace(spec, architectures=("NemotronHForCausalLM",),
                          config_mamba_ssm_dtype="float16")
    assert app_model.SpecDraft.from_spec(from_config).to_spec() == from_config


def test_a_drafts_model_errors_speak_the_editors_words():
    # the model file's keys (kinds['gdn'], gdn.v_heads) become the kind's name and the labels
    # of its fields, as the hand editor shows them
    draft = app_model.SpecDraft().with_kind("GDN", "lin").with_kind("full attention")
    draft = replace(draft, pattern="(lin,full)*2").with_field("lin", "v_heads", 2)
    with pytest.raises(ValueError) as refused:
        draft.to_spec()
    assert str(refused.value).startswith("lin: v heads = 2 is not a multiple of k heads = ")
    assert app_model.editor_words("kinds['full']: attention.head_dim_k 99 is too large") == (
        "full: head dim k 99 is too large")
    assert app_model.editor_words("full_attention.kv_heads") == "full_attention.kv_heads"
    # a model's own check names a kind's field under the kind's name, and the model's fields
    # and the TP by their keys (the hand editor showed "gdn.k_heads ... tp = 128"): the
    # editor's labels; a quoted entry stays as typed
    assert app_model.editor_words(
        "gdn.k_heads = 16 is not divisible by tp = 128: choose a tp that divides it", ["gdn"]) == (
        "gdn's k heads = 16 is not divisible by TP = 128: choose a TP that divides it")
    assert app_model.editor_words(
        "the model's mamba_chunk_size 9 is too large; attention_heads = 3; max_model_len = 1; "
        "'tp.x'", ["tp"]) == "mamba chunk 9 is too large; attention heads = 3; max model len " \
        "= 1; 'tp.x'"


def test_draft_names_kinds_and_refuses_bad_names():
    draft = app_model.SpecDraft().with_kind("full attention").with_kind("full attention")
    assert draft.kind_names == ["full", "full_2"]
    assert draft.with_kind("GDN", "lin").kind_names[-1] == "lin"
    with pytest.raises(ValueError, match="kind name 'full' is taken"):
        draft.with_kind("MLA", "full")
    with pytest.raises(ValueError, match="kind name '2x' must start with a letter"):
        draft.with_kind("MLA", "2x")
    with pytest.raises(ValueError, match="kind type 'moe' is unknown"):
        draft.with_kind("moe")
    with pytest.raises(ValueError, match="has no field 'n_heads'"):
        draft.with_field("full", "n_heads", 4)


def test_draft_window_zero_is_full_attention_and_sliding_kinds_keep_theirs():
    draft = app_model.SpecDraft().with_kind("sliding attention")
    assert draft.to_spec().profile().sliding_window == 128
    assert draft.with_field("sliding", "sliding_window", 0).to_spec().profile().layer_types == (
        ("full_attention",))


def test_draft_refuses_an_edit_that_makes_a_kind_other_than_its_layer_type_name():
    # a sliding kind named sliding_attention (its own type: taken), its window set to 0: its
    # layers would be full_attention under a name that says sliding. The editor has no rename,
    # so the refusal names what it can do (the model's own said "name it 'full_attention'")
    draft = app_model.SpecDraft().with_kind("sliding attention", "sliding_attention")
    with pytest.raises(ValueError, match=re.escape(
            "kind 'sliding_attention' is named after its layer type: sliding window 0 would "
            "make its layers full_attention; keep its sliding window, or remove the kind and "
            "add a full_attention kind under another name")):
        draft.with_field("sliding_attention", "sliding_window", 0)
    # a window of another size keeps the type; a kind not named after a type takes any edit
    assert draft.with_field("sliding_attention", "sliding_window", 4096).to_spec().profile(
        ).sliding_window == 4096
    full = app_model.SpecDraft().with_kind("full attention", "full_attention")
    with pytest.raises(ValueError, match="kind 'full_attention' is named after its layer type: "
                       "attention chunk 8192 would make its layers chunked_attention"):
        full.with_field("full_attention", "attention_chunk_size", 8192)
    plain = app_model.SpecDraft().with_kind("sliding attention")
    assert plain.with_field("sliding", "sliding_window", 0).to_spec().profile().layer_types == (
        ("full_attention",))


def test_draft_chunked_kind_takes_llama4s_chunk_and_a_window_or_a_chunk_not_both():
    draft = app_model.SpecDraft().with_kind("full attention").with_kind("chunked attention")
    assert draft.kind_names == ["full", "chunked"]
    profile = replace(draft, pattern="(3*chunked,full)*2").to_spec().profile()
    assert profile.attention_chunk_size == 8192 and profile.count("chunked_attention") == 6
    # a chunk of 0 is none: the kind attends globally
    unchunked = draft.with_field("chunked", "attention_chunk_size", 0)
    assert replace(unchunked, pattern="chunked").to_spec().profile().layer_types == (
        "full_attention",)
    with pytest.raises(ValueError, match="a layer is sliding or chunked, give one"):
        replace(draft.with_field("chunked", "sliding_window", 128),
                pattern="chunked").to_spec()


def test_a_draft_says_why_a_kind_is_not_in_its_model():
    # a kind no layer names adds nothing; two kinds of one geometry are one kind of the model
    draft = replace(app_model.SpecDraft().with_kind("full attention").with_kind("full attention")
                    .with_kind("GDN"), pattern="(3*gdn,full)*2,full_2")
    assert list(draft.to_spec().kinds) == ["gdn", "full"]
    assert draft.unbuilt_kind_notes() == [
        "Kinds 'full' and 'full_2' have the same geometry, so the model counts them as one kind, "
        "'full' (the cache is the same)."]
    apart = draft.with_field("full_2", "sliding_window", 128)  # a sliding kind now
    assert list(apart.to_spec().kinds) == ["gdn", "full", "full_2"]
    assert apart.to_spec().profile().count("sliding_attention") == 1
    assert apart.unbuilt_kind_notes() == []
    unused = replace(apart, pattern="(3*gdn,full)*2")
    assert unused.unbuilt_kind_notes() == [
        "Kind 'full_2' is in no layer: the layer pattern does not name it, so it adds nothing "
        "to the model."]
    assert replace(unused, pattern="full*(").unbuilt_kind_notes() == []  # its error says why


def test_removing_a_kind_drops_its_layers_from_the_pattern():
    draft = small_hybrid().without_kind("full")
    assert draft.kind_names == ["mamba2"] and draft.pattern == "2*mamba2"
    assert draft.to_spec().profile().layer_types == ("linear_attention",) * 2
    assert app_model.pattern_without("(3*gdn,full)*12", "gdn") == "12*full"
    assert app_model.pattern_without("full*(", "full") == "full*("  # left for the user to fix
    with pytest.raises(ValueError, match=r"the layer pattern is empty: .* e.g. 2\*mamba2"):
        replace(draft, pattern=" ").to_spec()
    with pytest.raises(ValueError, match="has no kinds yet"):
        app_model.SpecDraft().to_spec()
    with pytest.raises(ValueError, match="unknown kind"):
        replace(small_hybrid(), pattern="full,gdn").to_spec()


def test_a_memory_fraction_the_slider_cannot_show_falls_back():
    # The sidebar slider starts at 0.01 (budget.MIN_MEM_FRACTION, the CLI's least too): a
    # link below it would crash the widget.
    state, notices = decode_query({"frac": "0.005"})
    assert state.mem_fraction == DEFAULT.mem_fraction
    assert notices == ["frac='0.005' is outside 0.01..1: e.g. frac=0.9; using the default "
                       "(frac=0.9)."]
    # the context's default is the model's length, not a figure (nor "ctx=None")
    state, notices = decode_query({"ctx": "0"})
    assert state.context is None and len(notices) == 1
    assert notices[0].endswith("; using the default (the model's max_model_len, else 32,768).")
    state, notices = decode_query({"req": "0"})
    assert state.requests is None
    assert notices == ["req='0' must be positive: give req=1; using the default (4 live "
                       "requests, or as many as fit)."]
    assert decode_query({"frac": "0.01"})[0].mem_fraction == 0.01
    # 4 decimals, the slider's (and the CLI's --memory-fraction's, budget.takes_mem_fraction),
    # counted exactly: 80e9 x 0.8503 = 8e6 x 8,503 = 68,024,000,000 B, where the binary float
    # gives 68,023,999,999; the H100 preset's 85,520,809,984 x 8,503 = 727,183,447,293,952,
    # / 10,000 = 72,718,344,729.3952, floored
    state, notices = decode_query({"gpu": "Custom", "gpu_mem": "80GB", "frac": "0.8503"})
    assert notices == [] and state.budget().cache_bytes == 8 * 10**6 * 8_503 == 68_024_000_000
    assert int(80e9 * 0.8503) == 68_023_999_999
    assert 85_520_809_984 * 8_503 == 727_183_447_293_952
    assert decode_query({"frac": "0.8503"})[0].budget().cache_bytes == 72_718_344_729
    state, notices = decode_query({"frac": "0.85031"})
    assert state.mem_fraction == DEFAULT.mem_fraction
    assert notices == ["frac='0.85031' has more than 4 decimals: give at most 4, e.g. 0.8503; "
                       "using the default (frac=0.9)."]


def test_notices_write_defaults_as_a_link_would():
    _, notices = decode_query({"gpu_mem": "lots", "align": "-3"})
    assert any(n.endswith("using the default (gpu_mem=80GB).") for n in notices)
    assert any(n.endswith("using the default (align=auto).") for n in notices)
    state, notices = decode_query({"uniform": "yes"})
    assert (state.uniform_rows, notices) == (
        False, ["uniform='yes' is not 0 or 1; using the default (uniform=0)."])
    assert decode_query({"uniform": "1"})[0].uniform_rows
    _, notices = decode_query({"gpu": "Custom", "gpu_mem": "0"})
    assert notices == ["gpu_mem='0' must be positive: give the memory of one GPU, e.g. "
                       "gpu_mem=80GB or 141GB; using the default (gpu_mem=80GB)."]


def test_kv_cache_memory_is_the_budget_as_a_log_gives_it():
    # vLLM's "Available KV cache memory: 44.59 GiB" reads as floor(44.59 x 2**30) bytes; the
    # fraction and the weights do not apply
    query = {"gpu": "KV cache memory", "kv_mem": "44.59GiB", "frac": "0.5", "weights": "80GB"}
    state, notices = decode_query(query)
    assert notices == []
    budget = state.budget()
    assert budget.cache_bytes == 47_878_147_932 and budget.given
    assert budget.explanation.startswith(
        "47,878,147,932 B (44.59 GiB) of KV cache memory per rank, as given")
    assert encode_query(state) == query
    _, notices = decode_query({"gpu": "KV cache memory", "kv_mem": "0"})
    assert notices == ["kv_mem='0' must be positive: give the KV cache memory of one rank, e.g. "
                       "kv_mem=44.59GiB as vLLM logs it; using the default (kv_mem=40GiB)."]
    # a negative one asks for the same, not for "0 or more", which 0 then refuses
    _, notices = decode_query({"gpu": "KV cache memory", "kv_mem": "-5GB"})
    assert notices == ["kv_mem='-5GB' is negative: give the KV cache memory of one rank, e.g. "
                       "kv_mem=44.59GiB as vLLM logs it; using the default (kv_mem=40GiB)."]
    _, notices = decode_query({"gpu": "Custom", "gpu_mem": "-5GB"})
    assert notices[0].startswith("gpu_mem='-5GB' is negative: give the memory of one GPU")


def test_layout_fields_are_the_options_that_act_on_the_model():

    # state, no sliding: the state pages a request holds
    assert strategy_fields("flat", QWEN35.profile()) == ("mamba_cache_mode", "speculative_tokens",
                                                        "prefill_checkpoint_blocks")
    assert strategy_fields("flat", load_preset("gpt-oss-20b").profile()) == ("max_batched_tokens",)
    assert strategy_fields("flat", load_preset("Llama-3.1-8B").profile()) == ()
    # the chunk P aligns to in mode all: a hybrid's that keeps mode all (Nemotron-H); not a
    # model of state layers alone, which vLLM 0.31 snapshots every block size tokens
    assert "mamba_chunk_size" in strategy_fields("vllm", load_preset("Nemotron-H-8B").profile())
    assert "mamba_chunk_size" not in strategy_fields("vllm", STATE_ONLY)


# 3 full + 5 sliding layers: two-level pages pad the full group's parents by 5/3 - 1 = 2/3
UNEQUAL_ATTENTION = CacheProfile(layer_types=("full_attention",) * 3 + ("sliding_attention",) * 5,
                                 kv_bytes_per_slot=1024, sliding_window=128, name="3+5")
# Each engine option set away from its default, both ways where it has two (every one of them
# changes some figure somewhere); the padding bound lower too, to 0, where any padding shows
OTHER_VALUES = dict(kernel_block_size=(64,), mamba_cache_mode=("align", "all"),
                    speculative_tokens=(2,), prefill_checkpoint_blocks=(1,),
                    mamba_chunk_size=(128,), mamba_full_memory_ratio=(Fraction(1, 2),),
                    swa_full_tokens_ratio=(Fraction(1, 2),), sglang_slots_per_request=(5,),
                    sglang_max_running_requests=(20,), sglang_max_mamba_cache_size=(100,),
                    sglang_page_size=(64,), sglang_mamba_track_interval=(64, 512),
                    sglang_mamba_radix_cache_strategy=("extra_buffer_lazy",),
                    sglang_kv_cache_dtype=("bfloat16",),
                    sglang_ssm_dtype=("bfloat16", "float16"),
                    vllm_ssm_dtype=("float32", "float16"),
                    sglang_swa_pool=(False,), vllm_hybrid_manager=(False,),
                    sglang_overlap_schedule=(False,), sglang_disable_radix_cache=(True,),
                    sglang_attn_dp_size=(2,),
                    max_batched_tokens=(512,), vllm_async_scheduling=(True,),
                    sglang_chunked_prefill_size=(2048,),
                    lcm_padding_bound=(Fraction(7, 10), Fraction(0)))
# A raw model whose 3 layers of 100 B per token pad two-level parents (300 B is off the 256 B
# parent alignment) though its groups are alike
OFF_ALIGNMENT = CacheProfile(layer_types=("full_attention",) * 3, kv_bytes_per_slot=100,
                             name="3x100")
# SPEC section 1's hybrid as raw bytes: no ssm dtype, so SGLang's ssm dtype cannot re-size it
RAW_HYBRID = CacheProfile(layer_types=("linear_attention",) * 3 + ("full_attention",),
                          kv_bytes_per_slot=2048,
                          state_const_bytes={"conv": 49152, "ssm": 2097152}, name="raw")


# An attention-free model (Mamba's): flat and two-level pages have no history to page
STATE_ONLY = CacheProfile(layer_types=("linear_attention",) * 4, kv_bytes_per_slot=0,
                          state_const_bytes={"conv": 49152, "ssm": 2097152}, name="state only")


def figures(result) -> tuple:
    return (result.applies, result.reason, result.block_size, result.block_bytes,
            result.num_blocks, result.capacity_tokens, result.logged_tokens,
            result.concurrency_numerator, result.concurrency_denominator, result.breakdown)


@pytest.mark.parametrize("model", [*list_presets(), "3+5", "3x100", "raw", "state only"])
def test_an_option_not_offered_for_a_model_changes_none_of_its_figures(model):
    # strategy_fields decides which engine options Budget and Compare show; an option it
    # leaves out for a model must not move that model's figures under that layout, at the
    # default block size or at 1 (the smallest payloads, the most alignment padding)
    raws = {"3+5": UNEQUAL_ATTENTION, "3x100": OFF_ALIGNMENT, "raw": RAW_HYBRID,
            "state only": STATE_ONLY}
    profile = raws.get(model) or load_preset(model).profile()
    assert set(OTHER_VALUES) == set(ENGINE_FIELDS)
    budget = 40 * 2**30
    applies = dict.fromkeys(STRATEGIES, False)
    for strategy, block_size in itertools.product(STRATEGIES, (16, 1)):
        offered = strategy_fields(strategy, profile)
        base = run_strategy(strategy, profile, budget_bytes=budget, context_tokens=32_768,
                            options=StrategyOptions(block_size=block_size))
        applies[strategy] |= base.applies
        for field, values in OTHER_VALUES.items():
            for value in values:
                moved = run_strategy(
                    strategy, profile, budget_bytes=budget, context_tokens=32_768,
                    options=StrategyOptions(block_size=block_size, **{field: value}))
                applies[strategy] |= moved.applies
                if field not in offered:
                    assert figures(moved) == figures(base), (strategy, block_size, field, value)
    # and a layout that serves the model under none of them at either block size (SGLang for a
    # state without a conv tensor, aliasing for a state hybrid; vLLM refuses block size 1 for
    # any attention, so block 16 decides there) is offered none
    for strategy in STRATEGIES:
        assert applies[strategy] or strategy_fields(strategy, profile) == (), strategy
    if model == "MiniMax-M1":  # SGLang has no MiniMax-M1 model
        assert strategy_fields("sglang", profile) == ()
        assert strategy_fields("vllm", profile) != ()
    # the models that need the bound for no other reason than alignment are offered it
    if model in ("DeepSeek-V3", "3x100"):
        assert "lcm_padding_bound" in strategy_fields("lcm", profile)


def test_the_padding_bound_decides_two_level_pages_for_unequal_attention_groups():
    # why the bound is offered for 3 + 5 layers: at 1/4 no P fits, at 7/10 it does (a parent
    # holds the 5 sliding rows; 5 // 3 = 1 page of 3 full rows in it pads by 2/3, 66.67%)
    refused = run_strategy("lcm", UNEQUAL_ATTENTION, budget_bytes=2**30)
    assert not refused.applies
    assert refused.reason.endswith("pads full_attention by 66.67%; raise the two-level padding "
                                   "bound (--lcm-padding-bound) to accept it")
    r = run_strategy("lcm", UNEQUAL_ATTENTION, budget_bytes=2**30,
                     options=StrategyOptions(lcm_padding_bound=Fraction(7, 10)))
    assert r.applies and r.block_size == 16


def test_each_engine_option_is_a_strategy_knob_an_app_field_and_a_link_setting():
    # ENGINE_OPTIONS is the one list the app derives its option tables from; what it cannot
    # derive (the knob, the field, the link key, the layouts) must exist for each entry
    knobs = {f.name for f in fields(StrategyOptions)}
    state_fields = {f.name: f.default for f in fields(AppState)}
    link_fields = {field for field, _, _ in app_state._SETTINGS.values()}
    for option in ENGINE_OPTIONS:
        assert option.field in knobs and option.field in link_fields, option.field
        # the app starts where the engines do
        default = getattr(StrategyOptions(), option.field)
        assert state_fields[option.field] == (float(default) if isinstance(default, Fraction)
                                              else default), option.field
        assert option.read_by and set(option.read_by) <= set(STRATEGIES), option.field
    assert len(set(ENGINE_FIELDS)) == len(ENGINE_FIELDS)


def test_strategy_fields_are_what_each_layout_reads_of_the_model():

    hybrid, sliding = QWEN35.profile(), load_preset("gpt-oss-20b").profile()
    # vLLM's hybrid manager off: a state hybrid does not start, sliding layers keep every token
    assert strategy_fields("vllm", hybrid) == ("kernel_block_size", "mamba_cache_mode",
                                               "speculative_tokens", "prefill_checkpoint_blocks",
                                               "mamba_chunk_size", "vllm_hybrid_manager")
    assert strategy_fields("vllm", sliding) == ("kernel_block_size", "vllm_hybrid_manager",
                                                "max_batched_tokens", "vllm_async_scheduling")
    # ... and a model of one kind is the same either way
    assert "vllm_hybrid_manager" not in strategy_fields("vllm",
                                                        load_preset("Llama-3.1-8B").profile())
    assert strategy_fields("sglang", hybrid) == ("speculative_tokens", "mamba_full_memory_ratio",
                                                 "sglang_slots_per_request",
                                                 "sglang_max_running_requests",
                                                 "sglang_max_mamba_cache_size",
                                                 "sglang_disable_radix_cache",
                                                 "sglang_attn_dp_size", "sglang_page_size",
                                                 "sglang_mamba_radix_cache_strategy",
                                                 "sglang_chunked_prefill_size")
    # (the prefill chunk for any model SGLang pages: a chunk of part pages is refused)
    # drafting moves SGLang's max_running_requests to 48 for any model (not the paged layouts'
    # figures without state)
    assert strategy_fields("sglang", sliding) == ("speculative_tokens", "swa_full_tokens_ratio",
                                                  "sglang_max_running_requests",
                                                  "sglang_disable_radix_cache",
                                                  "sglang_attn_dp_size",
                                                  "sglang_page_size",
                                                  "sglang_mamba_radix_cache_strategy",
                                                  "sglang_swa_pool",
                                                  "sglang_chunked_prefill_size")
    # SGLang's ssm dtype re-sizes a model's ssm tensors; raw bytes (QWEN35 here) have no dtype.
    # Its mamba radix cache strategy acts on every model it serves: extra_buffer_lazy sets S
    # where its extra buffer runs, and SGLang refuses it elsewhere (told_buffer_refusal)
    # overlap scheduling sets the tracking slots of the architectures SGLang runs with its
    # extra_buffer radix cache (Qwen3-Next's), not of others (the raw hybrid names none)
    assert strategy_fields("sglang", load_preset("Qwen3-Next-80B-A3B").profile()) == (
        "speculative_tokens", "mamba_full_memory_ratio", "sglang_slots_per_request",
        "sglang_max_running_requests", "sglang_max_mamba_cache_size",
        "sglang_disable_radix_cache", "sglang_attn_dp_size", "sglang_overlap_schedule",
        "sglang_page_size", "sglang_mamba_track_interval", "sglang_mamba_radix_cache_strategy",
        "sglang_ssm_dtype", "sglang_chunked_prefill_size")
    assert "sglang_overlap_schedule" not in strategy_fields(
        "sglang", load_preset("LFM2-1.2B").profile())
    # two-level pages pad only where payloads differ: a state row beside KV rows, or attention
    # groups of unequal layer counts (gpt-oss: 12 + 12 alike; 3 full + 5 sliding: not)
    assert strategy_fields("lcm", load_preset("Llama-3.1-8B").profile()) == ()
    assert strategy_fields("lcm", sliding) == ("max_batched_tokens",)
    assert strategy_fields("lcm", hybrid) == ("mamba_cache_mode", "speculative_tokens",
                                              "prefill_checkpoint_blocks", "lcm_padding_bound")
    # SGLang's draft-token buffers are modelled for a state model with one token pool or none
    # (not beside a sliding-window pool)
    assert "speculative_tokens" in strategy_fields("sglang", hybrid)
    assert strategy_fields("lcm", UNEQUAL_ATTENTION) == ("max_batched_tokens",
                                                         "lcm_padding_bound")
    # a state-only model: SGLang splits its budget by r all the same, keeps a token pool of
    # context_len tokens over no layers (paged, and resolving max_running_requests), takes
    # told state slots and drafts
    state_only = decode_query({"model": "custom", "layers": "linear*4", "kv": "0",
                               "state": "conv=4096"})[0].profile()
    assert strategy_fields("sglang", state_only) == (
        "speculative_tokens", "mamba_full_memory_ratio", "sglang_slots_per_request",
        "sglang_max_running_requests", "sglang_max_mamba_cache_size",
        "sglang_disable_radix_cache", "sglang_attn_dp_size", "sglang_page_size",
        "sglang_mamba_radix_cache_strategy", "sglang_chunked_prefill_size")
    # the Budget page's layout: None is the sidebar planner's own; a link keeps another
    state, notices = decode_query({"b_layout": "vllm"})
    assert (state.budget_strategy, notices) == ("vllm", [])
    assert encode_query(state)["b_layout"] == "vllm"
    assert "b_layout" not in encode_query(decode_query({})[0])


def test_the_kv_per_token_of_windowed_layers_is_said_to_stop_at_their_window():
    # "KV per token, all layers" counts sliding and chunked layers too: a reader must not take
    # it for what each token of a long request costs (SPEC 5: calculators over-count so)
    gpt_oss = app_model.profile_for("gpt-oss-20b", None, 1)
    assert gpt_oss.kv_bytes_per_token == 49_152
    assert app_model.windowed_kv_note(gpt_oss) == (
        "Of the 48.00 KiB (49,152 B) a token adds, the 12 sliding-window layers' 24.00 KiB "
        "(24,576 B) is needed for the last 128 tokens of a request only (their window), the 12 "
        "full-attention layers' 24.00 KiB for every token of the context: a layout that frees "
        "what falls out of the window keeps less than 48.00 KiB a token of a long request "
        "(Compare counts what each layout keeps).")
    scout = app_model.profile_for("Llama-4-Scout-17B-16E", None, 1)
    assert app_model.windowed_kv_note(scout).startswith(
        "Of the 192.00 KiB (196,608 B) a token adds, the 36 chunked layers' 144.00 KiB "
        "(147,456 B) is needed for the tokens of a request's current 8,192-token chunk only "
        "(their chunk), the 12 full-attention layers' 48.00 KiB for every token of the context: "
        "a layout that frees what falls out of the chunk keeps less than 192.00 KiB")
    mistral = app_model.RawModel("sliding*32", 4096, sliding_window=4096).profile()
    assert app_model.windowed_kv_note(mistral).startswith(
        "Every attention layer here is a sliding-window layer: the 128.00 KiB (131,072 B) a "
        "token adds is needed for the last 4,096 tokens only (their window), however long the "
        "request")
    for plain in ("Llama-3.1-8B", "Qwen3-Next-80B-A3B"):
        assert app_model.windowed_kv_note(app_model.profile_for(plain, None, 1)) == ""


def test_the_summary_caption_says_what_the_bytes_are_per():
    falcon = app_model.spec_for("Falcon-H1-7B", None, 2)
    assert app_model.summary_caption(falcon.profile(), falcon) == (
        "Per TP rank (TP 2) · cache dtypes: KV bfloat16, conv bfloat16, ssm bfloat16 · 12 "
        "attention heads (a TP must divide them) · max_model_len 262,144 tokens "
        "(vLLM's default `--max-model-len`, from the config) · architecture: "
        "FalconH1ForCausalLM · mamba "
        "chunk: 128 tokens (vLLM aligns P to it in mamba cache mode all).")
    qwen35 = app_model.spec_for("Qwen3.5-27B", None, 1)  # its config names float32 for SGLang
    assert app_model.summary_caption(qwen35.profile(), qwen35) == (
        "Per TP rank (TP 1) · cache dtypes: KV bfloat16, conv bfloat16, ssm float32 · 24 "
        "attention heads (a TP must divide them) · max_model_len 262,144 tokens "
        "(vLLM's default `--max-model-len`, from the config) · architecture: "
        "Qwen3\\_5ForConditionalGeneration "
        "· config mamba_ssm_dtype: float32 (SGLang's ssm dtype) · mamba chunk: unused "
        "(vLLM runs Qwen3\\_5ForConditionalGeneration in mamba cache mode align when asked "
        "for all).")
    # the Model page and the CLI's model report say the same of the chunk: Jamba has none
    jamba = app_model.spec_for("Jamba-1.5-Mini", None, 1)
    assert app_model.summary_caption(jamba.profile(), jamba).endswith(
        " · mamba chunk: none in the config (vLLM takes 2,048 in mamba cache mode all).")
    gpt = app_model.spec_for("gpt-oss-20b", None, 1)  # the architecture as typed (Markdown)
    assert app_model.summary_caption(gpt.profile(), gpt).endswith(
        " · architecture: GptOssForCausalLM.")
    # raw bytes are per rank already: no dtypes or heads to name
    assert app_model.summary_caption(QWEN35.profile(), None) == "Per TP rank (TP as given)."
    # a chunk carried by a model without state layers names nothing that acts
    attention_only = RawModel("4*full", 4096, mamba_chunk_size=128).profile()
    assert app_model.summary_caption(attention_only, None) == "Per TP rank (TP as given)."


def test_replication_note_when_tp_passes_the_kv_heads():
    # Llama-3.1-8B: 8 KV heads of 128; at TP 16 each rank holds one whole head (SPEC §2):
    # 1 x (128 + 128) x 2 B = 512 B per token, not 8 / 16 of 4,096
    spec = app_model.spec_for("Llama-3.1-8B", None, 16)
    assert app_model.spec_kind_rows(spec) == [  # no state: no state columns
        {"name": "full", "kind": "attention", "layers": 32, "KV B per token": 512}]
    # Falcon-H1 at TP 2: 1 of its 2 KV heads a rank, (128 + 128) x 2 B = 512 B; Mamba2 conv
    # (3,072 + 2 x 2 groups (1 raised to TP) x 256) / 2 = 2,048 channels x 3, ssm 24 / 2 = 12
    # heads x 128 x 256; dashes (None) where a kind has no such figure
    falcon = app_model.spec_kind_rows(app_model.spec_for("Falcon-H1-7B", None, 2))
    assert falcon == [
        {"name": "full", "kind": "attention", "layers": 44, "KV B per token": 512,
         "state B per layer": None, "conv shape": None, "ssm shape": None},
        {"name": "mamba2", "kind": "mamba2", "layers": 44, "KV B per token": None,
         "state B per layer": (2048 * 3 + 12 * 128 * 256) * 2, "conv shape": "2048 x 3",
         "ssm shape": "12 x 128 x 256"}]
    # beside it the config's own figures, for the whole model: 8 heads, not one a rank
    assert app_model.spec_geometry_rows(spec) == [
        {"name": "full", "kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128}]
    # a hybrid: one column per field of any kind, None where a kind has none
    qwen = app_model.spec_for("Qwen3-Next-80B-A3B", None, 1)
    assert app_model.spec_geometry_rows(qwen) == [
        {"name": "gdn", "k_heads": 16, "v_heads": 32, "head_dim_k": 128, "head_dim_v": 128,
         "conv_kernel": 4, "kv_heads": None},
        {"name": "full", "k_heads": None, "v_heads": None, "head_dim_k": 256, "head_dim_v": 256,
         "conv_kernel": None, "kv_heads": 2}]
    assert spec.replication_note() == (
        "Fewer KV heads than TP ranks (8 KV heads over TP 16: each rank holds 1, each head sits "
        "on 2 ranks): kv_heads per rank = max(1, kv_heads // tp), each head replicated, so such a "
        "kind's KV bytes per token above are one whole head's.")
    assert app_model.spec_for("Llama-3.1-8B", None, 8).replication_note() is None


# Two attention kinds of different bytes per token: a valid spec that plans at no TP.
TWO_KV_SIZES = json.dumps({
    "format": "flatkv-model/1", "name": "odd", "model_layers": 2, "kv_dtype": "bfloat16",
    "kinds": {"a": {"kind": "attention", "kv_heads": 8, "head_dim_k": 64, "head_dim_v": 64},
              "b": {"kind": "attention", "kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128}},
    "pattern": "a,b"})


def test_a_tp_the_model_does_not_split_falls_back_to_tp_1_with_the_reason():
    falcon = AppState(model="Falcon-H1-7B", tp=8)  # 12 query heads
    at_one, why = falcon.plannable_tp()
    assert at_one == AppState(model="Falcon-H1-7B", tp=1)
    assert why.startswith("Falcon-H1-7B: it has 12 query heads, and TP 8 does not divide them")
    assert AppState(model="Falcon-H1-7B", tp=4).plannable_tp() == (
        AppState(model="Falcon-H1-7B", tp=4), "")


def test_a_link_whose_model_cannot_plan_falls_back_and_says_why():
    # a TP the heads do not split over: the same model at TP 1
    state, notices = decode_query({"model": "Llama-3.1-8B", "tp": "3"})
    assert (state.model, state.tp) == ("Llama-3.1-8B", 1)
    assert notices == ["Llama-3.1-8B: its full-attention layers have 8 KV heads, and TP 3 does "
                       "not divide them: choose TP 1, 2, 4, 8, 16 or 32, the TPs up to 64 that "
                       "split the model; using TP 1."]  # 32 query heads
    # a model that plans at no TP: the default model, at the link's TP where it splits
    odd = {"model": app_model.CUSTOM_SPEC, "spec": app_model.pack_spec(TWO_KV_SIZES)}
    why = ("attention layers of 'odd' differ in bytes per token (a: 2,048 B; b: 4,096 B): the "
           "planner takes one size for full and chunked layers; give those kinds the same "
           "geometry; ")
    state, notices = decode_query(odd)
    assert (state.model, state.spec, state.tp) == (DEFAULT.model, None, 1)
    assert notices == [why + f"using the default model ({DEFAULT.model})."]
    state, notices = decode_query({**odd, "tp": "2"})
    assert (state.model, state.tp) == (DEFAULT.model, 2)
    # Qwen3-Next's 16 GDN key heads do not split over 3 either: TP 1, and the model's own reason
    state, notices = decode_query({**odd, "tp": "3"})
    assert (state.model, state.tp) == (DEFAULT.model, 1)
    assert notices == [why + f"using the default model ({DEFAULT.model}) at TP 1."]
    state.profile()  # every fallback plans


def test_an_edited_preset_goes_by_its_name_only_with_its_figures():
    draft = app_model.SpecDraft.from_spec(load_preset("Llama-3.1-8B"))
    assert draft.named_for_its_figures() == draft  # unchanged: the preset's name
    fewer_heads = draft.with_field("full", "kv_heads", 4).named_for_its_figures()
    assert fewer_heads.name == "Llama-3.1-8B (edited)"
    back = fewer_heads.with_field("full", "kv_heads", 8).named_for_its_figures()
    assert back.name == "Llama-3.1-8B"  # changed back: the preset's figures, its name
    renamed = replace(draft, name="my llama")
    assert renamed.named_for_its_figures() == renamed  # not a preset's name: left alone
    broken = replace(fewer_heads, pattern="")
    assert broken.named_for_its_figures() == broken  # not a model yet: named once it builds
    # the query heads hold no bytes but decide the TPs: other heads, another model
    assert replace(draft, attention_heads=None).named_for_its_figures().name == (
        "Llama-3.1-8B (edited)")


def test_an_option_set_to_what_the_engine_picks_for_the_model_is_no_change():
    # vLLM's kernel block: Qwen3-Next's own is 16, DeepSeek-V3's dense MLA 16 too
    # (FLASH_ATTN_MLA's), so FlashMLA's 64 is a change; SGLang's ssm dtype: float32 without a
    # config mamba_ssm_dtype; its sliding pool: on for gpt-oss (on its list)
    qwen, deepseek = AppState(kernel_block_size=16), AppState(model="DeepSeek-V3",
                                                               kernel_block_size=64, tp=8)
    assert qwen.changed_engine_options() == {}
    assert deepseek.changed_engine_options() == {"kernel_block_size": 64}
    assert replace(deepseek, kernel_block_size=16).changed_engine_options() == {}
    assert AppState(sglang_ssm_dtype="float32").changed_engine_options() == {}
    assert AppState(sglang_ssm_dtype="bfloat16").changed_engine_options() == {
        "sglang_ssm_dtype": "bfloat16"}
    # vLLM's: Nemotron-H's float32 is vLLM's own (its NemotronH hook's default), bfloat16 not
    nemotron = AppState(model="Nemotron-H-8B", vllm_ssm_dtype="float32")
    assert nemotron.engine_choices()["vllm_ssm_dtype"] == (
        "float32", "vLLM's default for NemotronHForCausalLM with --mamba-ssm-cache-dtype auto")
    assert nemotron.changed_engine_options() == {}
    assert replace(nemotron, vllm_ssm_dtype="bfloat16").changed_engine_options() == {
        "vllm_ssm_dtype": "bfloat16"}
    gpt = AppState(model="gpt-oss-20b", sglang_swa_pool=True)
    assert gpt.changed_engine_options() == {}
    assert replace(gpt, sglang_swa_pool=False).engine_options_text() == (
        "engine options: SGLang sliding-window pool off")


def test_a_chunk_stays_only_with_models_of_the_same_own_chunk():
    nemotron = AppState(model="Nemotron-H-8B", mamba_chunk_size=256)
    # set just now, or nothing set: kept as it is
    assert nemotron.after(AppState(model="Nemotron-H-8B")) == nemotron
    assert AppState(model="Falcon-H1-7B").after(nemotron).mamba_chunk_size is None
    # another model of the same own chunk (128) keeps it; another own chunk (granite's 256,
    # Llama's none) drops it
    assert replace(nemotron, model="Falcon-H1-7B").after(nemotron).mamba_chunk_size == 256
    assert replace(nemotron, model="granite-4.0-h-small").after(nemotron).mamba_chunk_size is None
    assert replace(nemotron, model="Llama-3.1-8B").after(nemotron).mamba_chunk_size is None


def test_an_mtp_layer_is_the_models_last_full_attention_layer_once_more():
    qwen = app_model.preset_spec("Qwen3-Next-80B-A3B")
    mtp = with_mtp_layer(qwen)
    assert mtp.name == "Qwen3-Next-80B-A3B + MTP layer"
    assert mtp.layers == (*qwen.layers, qwen.layers[3])  # layer 3 is the first full one
    assert mtp.profile().count("full_attention") == 13 and len(mtp.layers) == 49
    # it rides in the link as an edited model, whole
    text = app_model.spec_to_json(mtp)
    assert app_model.spec_for(app_model.CUSTOM_SPEC, text, 2) == mtp.with_options(tp=2)
    # DeepSeek-V3's MTP module attends with MLA, as its layers do
    deepseek = with_mtp_layer(app_model.preset_spec("DeepSeek-V3"))
    assert deepseek.layers[-1] == deepseek.layers[0] and len(deepseek.layers) == 62
    # a sliding window is not an MTP module's: gpt-oss copies its full layer, not the last
    gpt = app_model.preset_spec("gpt-oss-20b")
    assert with_mtp_layer(gpt).layers[-1].sliding_window is None
    state_only = ModelSpec("mamba", (app_model.preset_spec("Nemotron-H-8B").layers[0],))
    with pytest.raises(ValueError, match="mamba has no full-attention layer: an MTP module's"):
        with_mtp_layer(state_only)


def test_the_context_is_the_models_max_model_len_until_one_is_set():
    # vLLM's default --max-model-len: Qwen3-Next's 262,144, Nemotron-H-8B's 8,192
    assert DEFAULT.context is None and DEFAULT.context_length() == 262_144
    assert AppState(model="Nemotron-H-8B").context_length() == 8_192
    assert AppState(model="Nemotron-H-8B", context=16_384).context_length() == 16_384
    # the length does not depend on the TP: Llama at TP 3 (32 heads do not split) keeps 131,072
    assert AppState(model="Llama-3.1-8B", tp=3).context_length() == 131_072
    # no length to take: raw bytes, a preset whose length is not known, a spec in error
    raw = AppState(model=CUSTOM, raw=RawModel("4*full", 4096))
    assert raw.context_length() == app_state.DEFAULT_CONTEXT == 32_768
    assert AppState(model="granite-4.0-h-small").context_length() == 32_768
    assert AppState(model="spec", spec="not a spec").context_length() == 32_768
    # a length past the context field's range is still the model's (the CLI takes it too)
    long = app_model.preset_spec("Llama-3.1-8B").with_options(name="long")
    long = replace(long, max_model_len=2**30)
    assert AppState(model="spec", spec=app_model.spec_to_json(long)).context_length() == 2**30
    # a link without ctx follows the model; one with it keeps what it says
    assert decode_query({"model": "DeepSeek-V3"})[0].context_length() == 163_840
    assert encode_query(AppState(model="DeepSeek-V3", context=163_840))["ctx"] == "163840"


def test_a_config_without_a_length_counts_at_the_2048_vllm_assumes_until_one_is_typed():
    from flatkv.app_data import model_context_text
    from flatkv.hf_config import spec_from_hf_config

    # Mamba2Config gives no length field: vLLM assumes 2,048 (with a warning), and the pages
    # count at it, not at DEFAULT_CONTEXT, saying it is assumed
    spec = spec_from_hf_config({"model_type": "mamba2", "num_hidden_layers": 4,
                                "hidden_size": 256, "num_heads": 8, "head_dim": 64})
    state = AppState(model="spec", spec=app_model.spec_to_json(spec))
    assert (state.context_length(), state.model_max_len(), state.model_max_len_assumed()) == (
        2_048, 2_048, True)
    assert not DEFAULT.model_max_len_assumed()  # Qwen3-Next's 262,144 is its config's
    # past it, vLLM takes the --max-model-len told, SGLang refuses unless allowed
    assert model_context_text(8_192, 2_048, app_state.DEFAULT_CONTEXT, assumed=True) == (
        "Past the 2,048 tokens assumed for this model (its config gives no length): vLLM "
        "takes any `--max-model-len` told, SGLang refuses a `--context-length` above 2,048 "
        "unless `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`.")
    # a rope factor scales vLLM's assumed length (linear x4: 8,192), not SGLang's: past it,
    # SGLang's limit is still its unscaled 2,048 (get_context_length), not 8,192
    assert model_context_text(10_000, 8_192, app_state.DEFAULT_CONTEXT, assumed=True) == (
        "Past the 8,192 tokens assumed for this model (its config gives no length): vLLM "
        "takes any `--max-model-len` told, SGLang refuses a `--context-length` above 2,048 "
        "unless `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`.")
    assert model_context_text(1_024, 2_048, app_state.DEFAULT_CONTEXT, assumed=True) == (
        "vLLM serves this model at 2,048 tokens unless told: its default `--max-model-len`, "
        "assumed for a config with no length, and the length its log gives the maximum "
        "concurrency at.")
    # a length typed in the editor is the model's, no longer assumed; the same one keeps it
    draft = app_model.SpecDraft.from_spec(spec)
    assert draft.max_model_len_assumed and draft.to_spec().max_model_len_assumed
    assert draft.with_optional("max_model_len", 2_048).to_spec().max_model_len_assumed
    typed = draft.with_optional("max_model_len", 4_096).to_spec()
    assert (typed.max_model_len, typed.max_model_len_assumed) == (4_096, False)
    assert draft.with_optional("attention_heads", 8).max_model_len_assumed
    # a spec file that says assumed without a length is refused, naming the fix
    with pytest.raises(ValueError, match="max_model_len_assumed is true without a "
                       "max_model_len: give the length assumed"):
        ModelSpec.from_dict({**spec.to_dict(), "max_model_len": None})


def test_the_summary_says_where_the_max_model_len_comes_from_after_an_edit():
    from flatkv.hf_config import spec_from_hf_config

    def length_part(spec: ModelSpec) -> str:
        caption = app_model.summary_caption(spec.profile(), spec)
        return next(p for p in caption.split(" · ") if p.startswith("max_model_len"))

    from_config = "tokens (vLLM's default `--max-model-len`, from the config)"
    typed = "tokens (typed in the editor: the pages count at it as vLLM's `--max-model-len`)"
    qwen = app_model.preset_spec("Qwen3-Next-80B-A3B")
    draft = app_model.SpecDraft.from_spec(qwen)
    assert length_part(qwen) == f"max_model_len 262,144 {from_config}"
    # another field edited: the preset's own length, still its config's (the edit has no source)
    heads = draft.with_optional("attention_heads", 8).to_spec()
    assert (heads.source, heads.max_model_len_typed) == ("", False)
    assert length_part(heads) == f"max_model_len 262,144 {from_config}"
    # typed: said so, and a link keeps it so
    edited = draft.with_optional("max_model_len", 131_072)
    spec = edited.to_spec()
    assert (spec.max_model_len, spec.max_model_len_typed, spec.max_model_len_assumed) == (
        131_072, True, False)
    assert length_part(spec) == f"max_model_len 131,072 {typed}"
    linked = app_model.spec_from_json(app_model.spec_to_json(spec))
    assert length_part(linked) == f"max_model_len 131,072 {typed}"
    # reopened from a link, 0 keeps the link's typed length (the preset's is not in the link),
    # where before it fell to no length at all and the pages counted at 32,768
    reopened = app_model.SpecDraft.from_spec(linked)
    for back in (0, 131_072):
        assert reopened.with_optional("max_model_len", back).to_spec() == linked
    shorter = reopened.with_optional("max_model_len", 65_536).to_spec()
    assert (shorter.max_model_len, shorter.max_model_len_typed) == (65_536, True)
    # 0, or the length loaded typed back: the config's again, and the preset's name with it
    for back in (0, 262_144):
        again = edited.with_optional("max_model_len", back)
        assert again.to_spec() == draft.to_spec()
        assert again.named_for_its_figures().name == "Qwen3-Next-80B-A3B"
    # a config with no length: vLLM's assumed 2,048; typed 8,192 is typed; 0 is 2,048 assumed
    mamba = app_model.SpecDraft.from_spec(spec_from_hf_config(
        {"model_type": "mamba2", "num_hidden_layers": 4, "hidden_size": 256, "num_heads": 8,
         "head_dim": 64}))
    assert length_part(mamba.to_spec()).startswith("max_model_len 2,048 tokens, assumed")
    longer = mamba.with_optional("max_model_len", 8_192)
    assert length_part(longer.to_spec()) == f"max_model_len 8,192 {typed}"
    back = longer.with_optional("max_model_len", 0).to_spec()
    assert (back.max_model_len, back.max_model_len_assumed, back.max_model_len_typed) == (
        2_048, True, False)
    # a model with no config has no length to go back to: 0 is unknown (32,768 counted)
    scratch = app_model.SpecDraft().with_kind("full attention")
    assert scratch.with_optional("max_model_len", 4_096).to_spec().max_model_len_typed
    assert scratch.with_optional("max_model_len", 4_096).with_optional(
        "max_model_len", 0).to_spec().max_model_len is None
    # a model file that calls a length both typed and assumed, or typed without one, is refused
    with pytest.raises(ValueError, match="max_model_len_assumed and max_model_len_typed are "
                       "both true: a length typed is not assumed; drop max_model_len_assumed"):
        ModelSpec.from_dict({**mamba.to_spec().to_dict(), "max_model_len_typed": True})
    with pytest.raises(ValueError, match="max_model_len_typed is true without a "
                       "max_model_len: give the length typed or drop max_model_len_typed"):
        ModelSpec.from_dict({**qwen.to_dict(), "max_model_len": None,
                             "max_model_len_typed": True})
    with pytest.raises(ValueError, match="max_model_len_typed is 1: give true or false"):
        ModelSpec.from_dict({**qwen.to_dict(), "max_model_len_typed": 1})


def test_what_a_recent_vllm_sets_apart_from_this_views_defaults():
    default = app_state.DEFAULT  # Qwen3-Next on an H100: SPEC's anchor, 16, none
    assert (default.gpu, default.block_size, default.mamba_cache_mode) == ("H100 80GB", 16,
                                                                           "none")
    # its GDN layers' prefill runs on FlashInfer on an H100, H200 and B200 (key heads of 128),
    # which keep a checkpoint block (vLLM 0.33); not on an A100; not known where no GPU is named
    assert default.recent_vllm_changes() == {"block_size": 64, "mamba_cache_mode": "align",
                                             "prefill_checkpoint_blocks": 1}
    for gpu, kept in (("H200 141GB", 1), ("B200 192GB", 1), ("A100 80GB", 0),
                      ("KV cache memory", None), ("vLLM KV cache blocks", None)):
        view = replace(default, gpu=gpu)
        assert view.vllm_checkpoint_blocks() == kept
        assert view.recent_vllm_changes().get("prefill_checkpoint_blocks") == (kept or None)
    # an architecture told where no preset names the GPU is known as its presets are
    for arch, kept, named in (("hopper", 1, "Hopper GPU (SM 9.0)"),
                              ("blackwell", 1, "Blackwell GPU (SM 10.0)"),
                              ("ampere", 0, "Ampere GPU (SM 8.0)"), ("", None, "")):
        view = replace(default, gpu="KV cache memory", gpu_arch=arch)
        assert (view.vllm_checkpoint_blocks(), view.gpu_named()) == (kept, named), arch
    assert replace(default, gpu_arch="ampere").gpu_named() == "H100 80GB"
    # set on an H100, then the A100 picked: the button takes it back to vLLM's 0 there
    kept_on_a100 = replace(default, gpu="A100 80GB", block_size=64, mamba_cache_mode="align",
                           prefill_checkpoint_blocks=1)
    assert kept_on_a100.recent_vllm_changes() == {"prefill_checkpoint_blocks": 0}
    assert not kept_on_a100.runs_recent_vllm_defaults()
    # Mamba2 keeps one on any GPU; other state layers (Kimi's KDA) none; no state: nothing
    assert replace(default, model="Nemotron-H-8B", gpu="A100 80GB").vllm_checkpoint_blocks() == 1
    assert replace(default, model="Kimi-Linear-48B-A3B").vllm_checkpoint_blocks() == 0
    assert replace(default, model="Llama-3.1-8B").vllm_checkpoint_blocks() is None
    # Hopper takes any key head dim, known or not (a raw profile names none); a B200 needs 128,
    # Qwen3-Next's (16 key heads x 128)
    qwen = presets.load_preset("Qwen3-Next-80B-A3B").profile()
    assert (qwen.gdn_key_head_dims, qwen.architectures) == ({128}, ("Qwen3NextForCausalLM",))
    assert gdn_checkpoint_on((9, 0), replace(qwen, gdn_key_head_dims=()))
    assert not gdn_checkpoint_on((10, 0), replace(qwen, gdn_key_head_dims=()))
    assert not gdn_checkpoint_on((10, 0), replace(qwen, gdn_key_head_dims={256}))
    # by each preset's compute capability: FlashInfer's GDN prefill on SM 9.0 (H100, H200) at
    # any key head dim, on SM 10.x (B200) at 128 alone; the A100s, L40S and RTX 4090 none
    kept = {dims: {gpu for gpu, capability in GPU_COMPUTE_CAPABILITIES.items()
                   if gdn_checkpoint_on(capability, replace(qwen, gdn_key_head_dims=dims))}
            for dims in (frozenset({128}), frozenset({256}))}
    assert kept == {frozenset({128}): {"H100 80GB", "H200 141GB", "B200 192GB"},
                    frozenset({256}): {"H100 80GB", "H200 141GB"}}
    assert set(FLASHINFER_GDN_CAPABILITIES) <= set(GPU_COMPUTE_CAPABILITIES.values())
    # the button's help says where a GDN checkpoint block would be kept where it is not
    archs = default.profile()
    said = ("vLLM 0.33 and later keep a prefill checkpoint block more for this model's GDN "
            "layers on an H100 or H200, or a B200 with key heads of 128 (CUDA 13), where their "
            "prefill runs on FlashInfer: ")
    for gpu, where in (("A100 80GB", "not on the A100 80GB."), ("KV cache memory", (
            "pick the GPU or its architecture, or set Prefill checkpoint blocks to 1 for a log "
            "of one."))):
        view = replace(default, gpu=gpu)
        help_text = strategy_notes.recent_vllm_help(view.recent_vllm_changes(), archs, gpu,
                                              view.vllm_checkpoint_blocks())
        assert said + where in help_text
    set_already = replace(default, prefill_checkpoint_blocks=1)  # on the H100: no such line
    assert "GDN layers on an H100" not in strategy_notes.recent_vllm_help(
        set_already.recent_vllm_changes(), archs, set_already.gpu,
        set_already.vllm_checkpoint_blocks())
    assert strategy_notes.recent_vllm_help(kept_on_a100.recent_vllm_changes(), archs, "A100 80GB",
                                     0).startswith(
        "Sets no prefill checkpoint blocks (vLLM 0.34 keeps none for this model's state "
        "layers on the A100 80GB), to match")
    llama = replace(default, model="Llama-3.1-8B", gpu="A100 80GB")
    assert "GDN" not in strategy_notes.recent_vllm_help(llama.recent_vllm_changes(),
                                                  llama.profile(), llama.gpu)
    # an attention-only model has no mamba cache mode to set; the memory is never set (0.34
    # sizes its cache after warm-up)
    assert replace(default, model="Llama-3.1-8B").recent_vllm_changes() == {"block_size": 64}
    assert replace(default, block_size=64, mamba_cache_mode="align",
                   prefill_checkpoint_blocks=1).recent_vllm_changes() == {}
    # a sliding model's window pages count async scheduling's two batches in flight (0.26)
    assert replace(default, model="gpt-oss-20b").recent_vllm_changes() == {
        "block_size": 64, "vllm_async_scheduling": True}
    # a Mamba2 model's layers keep a prefill checkpoint block in align (vLLM 0.32)
    assert replace(default, model="Nemotron-H-8B", block_size=64,
                   mamba_cache_mode="align").recent_vllm_changes() == {
        "prefill_checkpoint_blocks": 1}
    # a model current vLLM no longer serves gets no current defaults: its log is older
    assert replace(default, model="MiniMax-M1").recent_vllm_changes() == {}


def test_a_models_mtp_layer_types_survive_the_link_and_the_editor():
    # Step-3.5's sliding drafter: once the app stores the model (its link, at another TP, or
    # the hand editor's draft) "Add an MTP layer" must still refuse it
    from test_hf_config import STEP35

    from flatkv.hf_config import spec_from_hf_config

    spec = spec_from_hf_config(STEP35)
    packed = app_model.pack_spec(app_model.spec_to_json(spec))
    again = app_model.spec_for(app_model.CUSTOM_SPEC, app_model.unpack_spec(packed), 2)
    assert again.mtp_layer_types == ("sliding_attention",) * 3
    draft = app_model.SpecDraft.from_spec(spec)
    assert draft.to_spec().mtp_layer_types == ("sliding_attention",) * 3
    with pytest.raises(ValueError, match="so FlatKV adds none"):
        with_mtp_layer(again)
    # a short name a layout, for the narrow table
    from flatkv.strategy_notes import STRATEGY_SHORT_TITLES
    assert set(STRATEGY_SHORT_TITLES) == set(STRATEGIES)


def test_a_kv_shared_models_shared_layers_ride_in_its_links_and_files():
    # Gemma 4 with 20 kv-shared layers: SGLang keeps a pool layer for each, so the link, the
    # model file, the hand editor's draft and a raw export keep their types
    from test_hf_config import _gemma4

    spec = _gemma4(num_kv_shared_layers=20)
    shared = spec.kv_shared_layer_types
    assert (shared.count("sliding_attention"), shared.count("full_attention")) == (16, 4)
    assert ModelSpec.from_dict(spec.to_dict()).kv_shared_layer_types == shared
    linked = app_model.unpack_spec(app_model.pack_spec(app_model.spec_to_json(spec)))
    assert app_model.spec_from_json(linked).kv_shared_layer_types == shared
    assert app_model.SpecDraft.from_spec(spec).to_spec().kv_shared_layer_types == shared
    raw = app_model.RawModel.from_profile(spec.profile())
    state = AppState(model=CUSTOM, raw=raw)
    assert decode_query(encode_query(state))[0].raw.kv_shared_layer_types == shared
    exported = profile_to_dict(spec.profile())
    assert app_model.load_model_json(json.dumps(exported)).kv_shared_layer_types == shared


@pytest.mark.parametrize(("raw", "said"), [
    (RawModel("full*2", 0), '"KV bytes per token per layer" is 0 but "Layer pattern" has '
     "attention layers"),
    (RawModel("full*2", -5), '"KV bytes per token per layer" -5 must not be negative: give 0 or '
     "more"),
    (RawModel("sliding*2", 1024), '"Sliding window" is not set but the model has '
     "sliding_attention layers: give the window in tokens"),
    (RawModel("full*2", 1024, sliding_window=100), '"Sliding window" is 100 but "Layer '
     'pattern" has no sliding_attention layer: drop "Sliding window" or add'),
    (RawModel("full*2", 1024, attention_chunk_size=8), '"Attention chunk" is 8 but "Layer '
     'pattern" has no chunked_attention layer: drop "Attention chunk"'),
    (RawModel("full*2", 1024, sliding_kv_bytes_per_slot=512), "\"Sliding layers' KV bytes\" "
     'is 512 but "Layer pattern" has no sliding_attention layer'),
    (RawModel("linear*2", 1024, (("conv", 0),)), '"State tensors" conv 0 must be positive: '
     "give 1 or more"),
    # past 1 TiB (2**40 B) a row: the profile's hint for a Python caller says "or None", which
    # the field ("0 = the same") takes as 0
    (RawModel("(sliding,full)*2", 1024, sliding_window=128, sliding_kv_bytes_per_slot=2**41),
     "\"Sliding layers' KV bytes\" 2,199,023,255,552 is too large to be real: give "
     '1,099,511,627,776 or less, or 0 when sliding layers add "KV bytes per token per layer" '
     "too"),
])
def test_the_raw_editors_errors_name_its_fields_by_their_labels(raw, said):
    # the profile's messages name its fields (kv_bytes_per_slot); the editor relabels them by
    # pattern, so a message reworded past the patterns must fail here, not show a field name
    with pytest.raises(ValueError) as caught:
        raw.profile()
    shown = app_model.in_raw_labels(str(caught.value))
    assert said in shown
    assert not [f for f in app_model.RAW_LABELS if f in shown], shown
    assert "command line" not in shown  # the CLI's hint is for the CLI
    assert "None" not in shown  # no field takes it: each says what its 0 means


def test_sglang_slots_per_request_start_at_sglangs_own_for_the_model():
    # unset (None), the app shows what SGLang 0.5.23 picks for the model's class: 5 with its
    # extra_buffer radix cache (Qwen3NextForCausalLM), 3 without (Lfm2ForCausalLM)
    qwen = AppState(model="Qwen3-Next-80B-A3B")
    assert qwen.sglang_slots_per_request is None
    assert qwen.engine_choices()["sglang_slots_per_request"] == (
        5, "5 for Qwen3NextForCausalLM: its extra_buffer radix cache, 3 + 2 tracking slots "
        "with overlap scheduling")
    assert AppState(model="LFM2-1.2B").engine_choices()["sglang_slots_per_request"] == (
        3, "3 for Lfm2ForCausalLM: its no_buffer radix cache")
    # with the radix cache off (the link's sg_noradix=1), 1 for any model: its mamba ratio
    off, notices = decode_query({"model": "Qwen3-Next-80B-A3B", "sg_noradix": "1"})
    assert notices == [] and off.sglang_disable_radix_cache is True
    assert off.engine_choices()["sglang_slots_per_request"][0] == 1
    assert encode_query(off)["sg_noradix"] == "1"
    # a link keeps "auto" for it, and a number typed
    assert decode_query({"sg_slots": "auto"})[0].sglang_slots_per_request is None
    assert encode_query(replace(qwen, sglang_slots_per_request=3))["sg_slots"] == "3"


def test_sglang_chunked_prefill_size_is_the_gpus_own_unless_set():
    # SGLang picks --chunked-prefill-size by the GPU's memory (memory_hook.py 87-177): the
    # B200's 183,359 MiB is past 160 GiB, 16,384; the H200's 143,771 MiB 8,192; an A100 40GB's
    # 40,960 MiB 4,096; a custom 40 GB (38,147 MiB) 4,096 too. A budget that names no GPU takes
    # the 8,192 assumed, and says so; one set is taken on any GPU.
    def chunk(**settings):
        state = AppState(model="gpt-oss-20b", **settings)
        own, why = state.engine_choices()["sglang_chunked_prefill_size"]
        return state.strategy_options().sglang_chunked_prefill_size, own, why

    assert chunk(gpu="B200 192GB") == (16_384, 16_384, "as SGLang 0.5.23 picks it by the "
                                                        "GPU's memory on the B200 192GB")
    assert chunk(gpu="H200 141GB")[0] == 8_192
    assert chunk(gpu="A100 40GB")[0] == 4_096
    assert chunk(gpu="Custom", gpu_memory=40 * 10**9) == (
        4_096, 4_096, "as SGLang 0.5.23 picks it by the GPU's memory on this GPU")
    for source in ("KV cache memory", "vLLM KV cache blocks"):
        assert chunk(gpu=source) == (8_192, 8_192, "assumed: the budget names no GPU, and SGLang "
                                            "picks it by the GPU's memory (8,192 on an H100 or "
                                            "H200)")
    assert chunk(gpu="B200 192GB", sglang_chunked_prefill_size=2_048)[:2] == (2_048, 16_384)
    # set to SGLang's own on the GPU picked it is no change; a link carries it
    state = AppState(model="gpt-oss-20b", gpu="B200 192GB", sglang_chunked_prefill_size=16_384)
    assert state.changed_engine_options() == {}
    assert encode_query(state)["sg_chunk"] == "16384"
    assert decode_query(encode_query(state)) == (state, [])


def test_the_gpu_picked_tells_sglang_whether_it_runs_on_a_blackwell():
    # the B200 alone (compute capability 10): there SGLang keeps DeepSeek-V3.2's DSA cache in
    # its raw fp8 layout, 61 x (576 + 132) B a token, which its figures then take; no engine
    # option changes it, and no other GPU preset sets it. A budget that names no preset's GPU
    # (Custom, KV cache memory, vLLM's blocks) takes the sidebar's "GPU architecture"
    # (gpu_arch, link gpu_arch=blackwell; an older link's sg_bw=1), which a preset does not read
    def blackwell(gpu: str, arch: str = "") -> bool:
        return AppState(model="DeepSeek-V3.2", gpu=gpu,
                        gpu_arch=arch).strategy_options().blackwell

    assert blackwell("B200 192GB") and blackwell("B200 192GB", "blackwell")
    assert blackwell("B200 192GB", "hopper")  # the preset says, whatever a link gave
    for gpu in ("H100 80GB", "H200 141GB", "A100 80GB"):
        assert not blackwell(gpu) and not blackwell(gpu, "blackwell"), gpu
    for gpu in ("Custom", "KV cache memory", "vLLM KV cache blocks"):
        assert not blackwell(gpu) and blackwell(gpu, "blackwell"), gpu
        assert not blackwell(gpu, "hopper") and not blackwell(gpu, "ampere"), gpu
    told = AppState(model="DeepSeek-V3.2", gpu="KV cache memory", gpu_arch="blackwell")
    assert encode_query(told)["gpu_arch"] == "blackwell"
    assert decode_query(encode_query(told)) == (told, [])
    # an older link's sg_bw=1 opens the same view, and writes gpu_arch back; sg_bw=0 says none
    old = {"model": "DeepSeek-V3.2", "gpu": "KV cache memory", "sg_bw": "1"}
    assert decode_query(old) == (told, [])
    assert encode_query(decode_query(old)[0]) == {
        "model": "DeepSeek-V3.2", "gpu": "KV cache memory", "gpu_arch": "blackwell"}
    assert decode_query({**old, "sg_bw": "0"}) == (replace(told, gpu_arch=""), [])
    # unread beside a preset: no link writes it there; a link that gives it is read as the
    # preset says, silently on the preset's own, with a notice naming both beside another
    assert "gpu_arch" not in encode_query(replace(told, gpu="H100 80GB"))
    assert decode_query({"gpu": "B200 192GB", "sg_bw": "1"}) == (
        AppState(gpu="B200 192GB"), [])
    assert decode_query({"gpu": "A100 40GB", "gpu_arch": "ampere"}) == (
        AppState(gpu="A100 40GB"), [])
    assert decode_query({"gpu": "H100 80GB", "sg_bw": "1"}) == (AppState(gpu="H100 80GB"), [
        "sg_bw=1 says the GPU is blackwell (SM 10.0: B200), but gpu=H100 80GB is hopper "
        "(SM 9.0: H100, H200); using the preset's (pick a preset of that architecture, or a "
        "memory source: Custom, KV cache memory, vLLM KV cache blocks)."])
    b200 = AppState(gpu="B200 192GB")
    assert decode_query({"gpu": "B200 192GB", "gpu_arch": "ada"}) == (b200, [
        "gpu_arch=ada says the GPU is ada (SM 8.9: L40S, RTX 4090), but gpu=B200 192GB is "
        "blackwell (SM 10.0: B200); using the preset's (pick a preset of that architecture, or "
        "a memory source: Custom, KV cache memory, vLLM KV cache blocks)."])
    # a name no architecture has: the default, said in the select's words (not "a Hopper
    # taken", which read as if FlatKV took the user's GPU for an H100: budget.ARCH_NOT_SAID)
    # (listed in GPU_ARCHITECTURES' order, as the CLI and gpu_capability list them: it put the
    # default GPU's first, "hopper, ampere, ada, blackwell"; the example stays the default's)
    assert decode_query({"gpu": "Custom", "gpu_arch": "volta"}) == (AppState(gpu="Custom"), [
        "gpu_arch='volta' is not one of ampere, ada, hopper, blackwell: give one of them, e.g. "
        "gpu_arch=hopper; using the default (no architecture said, the figures as on a "
        "Hopper)."])
    r = run_strategy("sglang", told.profile(), budget_bytes=40 << 30,
                     options=told.strategy_options())
    assert r.capacity_tokens == 994_432
    state = AppState(model="DeepSeek-V3.2", gpu="B200 192GB")
    assert state.changed_engine_options() == {} and "gpu_arch" not in encode_query(state)
    r = run_strategy("sglang", state.profile(), budget_bytes=40 << 30,
                     options=state.strategy_options())
    assert r.capacity_tokens == (40 << 30) // (61 * (576 + 132)) // 64 * 64 == 994_432


def test_an_architecture_told_on_a_budget_of_no_preset_is_the_presets_to_vllm():
    # an A100 told on KV cache memory (gpu_arch=ampere) is what the A100 preset is to vLLM:
    # DeepSeek-V3.2 has no sparse MLA backend on SM 8.x, so vLLM won't start, with the
    # A100 preset's very reason; not said, the figures stay a Hopper's (vLLM starts)
    from flatkv.strategies.vllm import gpu_mla_refusal

    told = AppState(model="DeepSeek-V3.2", gpu="KV cache memory", gpu_arch="ampere")
    preset = AppState(model="DeepSeek-V3.2", gpu="A100 80GB")
    assert told.gpu_capability() == preset.gpu_capability() == (8, 0)
    reason = gpu_mla_refusal(told.profile(), told.strategy_options())
    assert reason == gpu_mla_refusal(preset.profile(), preset.strategy_options())
    assert reason.startswith("vLLM refuses to start: on SM 8.0 (A100) it has no sparse MLA")
    r = run_strategy("vllm", told.profile(), budget_bytes=told.budget().cache_bytes,
                     options=told.strategy_options())
    assert (r.applies, r.reason) == (False, reason)
    unsaid = replace(told, gpu_arch="")
    assert unsaid.gpu_capability() is None
    assert run_strategy("vllm", unsaid.profile(), budget_bytes=unsaid.budget().cache_bytes,
                        options=unsaid.strategy_options()).applies
    assert decode_query(encode_query(told)) == (told, [])
    assert encode_query(told)["gpu_arch"] == "ampere"


def test_a_source_that_leaves_a_preset_keeps_its_architecture():
    # off the A100 80GB (SM 8.0) the select is set to ampere, off the B200 to blackwell, off
    # the H100 to hopper, whatever was told before the preset; none is set picking a preset,
    # nor off a source of no preset (the select there is the user's)
    a100 = AppState(model="DeepSeek-V3.2", gpu="A100 80GB", gpu_arch="blackwell")
    for source in (CUSTOM_GPU, KV_MEMORY, KV_BLOCKS):
        assert a100.arch_kept_off(source) == {"gpu_arch": "ampere"}
        assert AppState(gpu="B200 192GB").arch_kept_off(source) == {"gpu_arch": "blackwell"}
        assert AppState(gpu="H100 80GB").arch_kept_off(source) == {"gpu_arch": "hopper"}
        assert AppState(gpu=KV_MEMORY, gpu_arch="ada").arch_kept_off(source) == {}
    assert a100.arch_kept_off("H100 80GB") == {}
    kept = replace(a100, gpu=KV_MEMORY, **a100.arch_kept_off(KV_MEMORY))
    assert kept.gpu_capability() == a100.gpu_capability() == (8, 0)
    assert encode_query(kept)["gpu_arch"] == "ampere"
    # a link with a budget and no gpu_arch still says none
    assert decode_query({"gpu": KV_MEMORY})[0].gpu_capability() is None


def test_a_link_names_a_gpu_in_any_case_as_the_cli_does():
    # gpu=b200 192gb is the B200 preset, as --gpu-memory 'b200 192gb' is (one function reads
    # both, budget.gpu_name), and the link written back gives its own name; sg_bw=1 beside it
    # is the B200's own and says nothing, as beside gpu=B200 192GB
    b200 = AppState(gpu="B200 192GB")
    for text in ("b200 192gb", " B200   192GB ", "b200 192GB"):
        assert decode_query({"gpu": text}) == (b200, []), text
        assert decode_query({"gpu": text, "sg_bw": "1"}) == (b200, []), text
        assert given_cli.gpu_name(text) == "B200 192GB"
    assert encode_query(decode_query({"gpu": "b200 192gb"})[0]) == {"gpu": "B200 192GB"}
    assert b200.gpu_bytes == 183_359 * 2**20 == 192_265_846_784
    assert decode_query({"gpu": "h100 80gb", "sg_bw": "1"}) == (AppState(), [
        "sg_bw=1 says the GPU is blackwell (SM 10.0: B200), but gpu=H100 80GB is hopper "
        "(SM 9.0: H100, H200); using the preset's (pick a preset of that architecture, or a "
        "memory source: Custom, KV cache memory, vLLM KV cache blocks)."])
    # a name no preset has in any case is still refused as typed
    state, notices = decode_query({"gpu": "b300 288gb"})
    assert state == AppState() and notices[0].startswith("gpu='b300 288gb' is not one of")


def test_an_sglang_page_has_one_bound_in_the_link_the_sidebar_and_the_options():
    # sg_page stops at 2**20 = 1,048,576 tokens, as the sidebar's field and --sglang-page-size
    # (StrategyOptions' check, which the CLI reads through) do: the CLI took up to 2**40
    assert 2**20 == 1_048_576
    assert decode_query({"sg_page": "1048576"}) == (AppState(sglang_page_size=1_048_576), [])
    assert decode_query({"sg_page": "1048577"}) == (AppState(), [
        "sg_page='1048577' is more than 1,048,576: e.g. sg_page=1; using the default "
        "(sg_page=1)."])
    assert StrategyOptions(sglang_page_size=1_048_576).sglang_page_size == 1_048_576
    with pytest.raises(ValueError, match=r"^sglang_page_size 1,048,577 is too large to be "
                                         r"real: give 1,048,576 or less; SGLang's --page-size"):
        StrategyOptions(sglang_page_size=1_048_577)


def test_sglang_chunked_prefill_off_rides_a_link():
    # SGLang's --chunked-prefill-size -1 (chunked prefill off) is -1 in the options on any
    # GPU, a change from SGLang's own, and "off" in a link, which also reads what SGLang reads
    # as off (any whole number 0 or less), as the CLI does; what is neither tokens nor off is
    # refused with the default kept
    off = AppState(model="gpt-oss-20b", gpu="B200 192GB", sglang_chunked_prefill_size=-1)
    assert off.strategy_options().sglang_chunked_prefill_size == -1
    assert off.changed_engine_options() == {"sglang_chunked_prefill_size": -1}
    assert off.engine_options_text() == "engine options: SGLang chunked prefill size off (-1)"
    assert encode_query(off)["sg_chunk"] == "off"
    assert decode_query(encode_query(off)) == (off, [])
    assert decode_query({"model": "gpt-oss-20b", "gpu": "B200 192GB", "sg_chunk": "-1"}) == (
        off, [])
    for text in ("0", "-5", "OFF", "-1_000", "0_0"):  # underscores as int() reads them
        assert decode_query({"model": "gpt-oss-20b", "gpu": "B200 192GB", "sg_chunk": text}
                            ) == (off, []), text
    state, notes = decode_query({"model": "gpt-oss-20b", "sg_chunk": "-1.5"})
    assert state.sglang_chunked_prefill_size is None
    assert notes == ["sg_chunk='-1.5' must be positive: give 1 or more tokens; or -1 (any whole "
                     "number 0 or less, as SGLang reads it, or off) for chunked prefill off; "
                     "using the default (sg_chunk=auto)."]


@pytest.mark.parametrize("text", ["x", "+-1", "٠", "-٢", "+0", "٢٠٠٠٠٠٠٠٠٠٠٠", "0.0x", "٠.٠",
                                  "٠GB", "+8", "0", "-5", "99999999999", "bogus"])
def test_every_link_keys_suggested_fix_is_one_the_key_takes(text):
    # a notice's "e.g." (or "give key=", out of range) fed back must open without a notice:
    # frac='0.0x' gave no fix, gpu_mem='٠' "e.g. 0" (then refused as 0 B); the page and track
    # interval's example is SGLang's own default (sg_page 12, the example before, splits no
    # track interval of 256). "0", "-5", 11 nines and "bogus": a range's or a choice's refusal,
    # which named the range or the options and no value to give
    from flatkv.app_state import _SETTINGS, _SOURCE_KEYS

    assert DEFAULT.sglang_mamba_track_interval % DEFAULT.sglang_page_size == 0
    suggested = 0
    for key in _SETTINGS:
        for notice in decode_query({key: text})[1]:
            if "e.g. " in notice:
                fix = notice.split("e.g. ", 1)[1]
            elif f": give {key}=" in notice:
                fix = notice.split(f": give {key}=", 1)[1]
            else:
                continue
            fix = fix.split(";", 1)[0].split(" or ")[0].split(", ")[0].split(" as ")[0]
            fix = fix.removeprefix(f"{key}=").strip("'")
            suggested += 1
            # a budget key with the gpu that reads it, as the app writes it (alone it picks
            # its source, and says so)
            gpu = {"gpu": _SOURCE_KEYS[key]} if key in _SOURCE_KEYS else {}
            assert decode_query({key: fix, **gpu})[1] == [], (key, text, notice)
    assert suggested >= 10


def test_a_links_sglang_page_and_memory_fraction_refusals_suggest_values_that_run():
    # sg_page='٠' suggested 12, which the link read and SGLang then refused on Qwen3-Next (12
    # splits no track interval of 256); now its default page, with which SGLang starts
    (notice,) = decode_query({"sg_page": "٠"})[1]
    page = int(notice.split("e.g. sg_page=", 1)[1].split(";", 1)[0])
    for size, applies in ((12, False), (page, True)):
        at = replace(DEFAULT, sglang_page_size=size)
        assert run_strategy("sglang", at.profile(), budget_bytes=40 << 30,
                            options=at.strategy_options()).applies is applies
    # frac='0.0x' said "is not a number" and no fix
    assert decode_query({"frac": "0.0x"})[1] == [
        "frac='0.0x' is not a number: give one from 0.01 to 1, e.g. frac=0.9; using the "
        "default (frac=0.9)."]


@pytest.mark.parametrize(("extra", "why"), [
    # the raw model's own keys in the form of the link's other notices, key=value: what is
    # wrong; fix, where they were named "kv '+8'", "layer pattern 'zz'", "state tensors 'x'"
    ({"kv": "+8"}, "kv='+8' has a plus sign: write it without the sign, e.g. kv=8"),
    # a row's bytes by a row's example, not kv=80GB
    ({"kv": "x"}, "kv='x' is not a size: write a number with an optional unit, e.g. kv=4096 "
     "or 4KiB"),
    ({"layers": "zz"}, "layers='zz' has unknown layer kind 'zz': use one of attention, attn, "
     "chunked, chunked_attention, full, full_attention, gdn, linear, linear_attention, mamba, "
     "sliding, sliding_attention, state, swa"),
    ({"layers": ""}, "layers='' is empty: write one name per cache layer, e.g. "
     "layers=(3*linear,full)*12"),
    ({"layers": "0*full"}, "layers='0*full': repeat count '0' at character 1 must be positive: "
     "give 1 or more, or leave the item out, e.g. layers=(3*linear,full)*12"),
    ({"state": "x"}, "state='x': write name=bytes pairs, e.g. state=conv=49152,ssm=2097152"),
    # an entry's own example stays the entry's
    ({"layers": "linear*2,full", "state": "conv=x"}, "state='conv=x': conv 'x' is not a "
     "size: write a number with an optional unit, e.g. 4096 or 4KiB"),
    ({"kv_shared": "zz"}, "kv_shared='zz' has unknown layer kind 'zz': use one of attention, "
     "attn, chunked, chunked_attention, full, full_attention, gdn, linear, linear_attention, "
     "mamba, sliding, sliding_attention, state, swa"),
])
def test_a_custom_models_bad_key_is_said_as_key_value(extra, why):
    state, notices = decode_query({"model": "custom", "layers": "full*2", "kv": "4096", **extra})
    assert state.model == DEFAULT.model and state.raw is None
    assert notices == [f"The custom model in the link is not valid ({why}); using the default "
                       "model (Qwen3-Next-80B-A3B)."]


@pytest.mark.parametrize(("key", "typed", "why", "fix"), [
    ("layers", "full*١٢", "repeat count '١٢' at character 6 is not written in ASCII digits: "
     "write it in ASCII digits", "full*12"),
    ("layers", "(3*linear,full)*١٢", "repeat count '١٢' at character 17 is not written in "
     "ASCII digits: write it in ASCII digits", "(3*linear,full)*12"),
    ("layers", "full*+3", "repeat count '+3' at character 6 has a plus sign: write it without "
     "the sign", "full*3"),
    ("kv_shared", "full*١٢", "repeat count '١٢' at character 6 is not written in ASCII digits: "
     "write it in ASCII digits", "full*12"),
])
def test_a_links_pattern_in_other_digits_suggests_the_whole_pattern_which_the_link_takes(
        key, typed, why, fix):
    # it suggested "e.g. layers=12", no pattern: the fix is the pattern in ASCII digits
    link = {"model": "custom", "layers": "full*12", "kv": "4096"}
    if "linear" in typed:  # linear layers keep a state
        link["state"] = "conv=49152,ssm=2097152"
    state, notices = decode_query({**link, key: typed})
    assert state.raw is None
    assert notices == [f"The custom model in the link is not valid ({key}={typed!r}: {why}, "
                       f"e.g. {key}={fix}); using the default model (Qwen3-Next-80B-A3B)."]
    state, notices = decode_query({**link, key: fix})
    assert notices == []
    if key == "layers":
        assert state.raw.layers == fix
    else:  # the shared layers' labels, 12 full ones
        assert state.raw.kv_shared_layer_types == ("full_attention",) * 12


def test_a_custom_model_without_layers_is_told_to_give_them():
    # it read as an empty pattern the link never gave: "layer pattern is empty"
    _, notices = decode_query({"model": "custom", "kv": "4096"})
    assert notices == ["The custom model in the link is not valid (the link gives no layers: "
                       "give the cache layers' pattern, e.g. layers=(3*linear,full)*12); using "
                       "the default model (Qwen3-Next-80B-A3B)."]


@pytest.mark.parametrize(("params", "said"), [
    # the lab's lists: which names are none of the options, and a fix as the link writes it
    ({"kernels": "torch,cuda"}, "kernels='torch,cuda' is not a list of torch / triton: 'cuda' "
     "is none of them; give one or more, comma-separated, e.g. kernels=torch,triton; using "
     "the default (kernels=auto)."),
    ({"layouts": ""}, "layouts='' is not a list of slot-major / page-major; give one or more, "
     "comma-separated, e.g. layouts=slot-major,page-major; using the default "
     "(layouts=slot-major)."),
    ({"sweep_blocks": ";"}, "sweep_blocks=';' is empty; give a list such as "
     "sweep_blocks=1,4,16; using the default (sweep_blocks=auto)."),
    ({"sweep_pages": "0"}, "sweep_pages='0' is out of range; give values from 1 to "
     "1,099,511,627,776; using the default (sweep_pages=auto)."),
    ({"max_blocks": "1"}, "max_blocks='1': a benchmark's pool holds two pages at least; give "
     "max_blocks=2 or more, or 0 for automatic; using the default (max_blocks=0)."),
    # its fix no 1, which it then refused: the nearest it takes, the lower of 0 and 2
    ({"max_blocks": "+1"}, "max_blocks='+1' has a plus sign: write it without the sign, e.g. "
     "max_blocks=0; using the default (max_blocks=0)."),
])
def test_the_gpu_labs_link_keys_are_said_as_key_value(params, said):
    assert decode_query(params)[1] == [said]


def test_a_raw_model_carries_learnable_sink_in_the_link_and_the_export():
    # DeepSeek-V3.2 with learnable attention sinks as raw bytes: SGLang keeps its sparse
    # attention in bfloat16 then and refuses fp8 (test_sglang), so the flag rides along as
    # sink=1, written only when set, as the export writes learnable_sink only when true
    profile = replace(app_model.profile_for("DeepSeek-V3.2", None, 1), learnable_sink=True)
    raw = RawModel.from_profile(profile)
    assert raw.learnable_sink and raw.profile(profile.name) == profile
    query = encode_query(AppState(model=CUSTOM, raw=raw))
    assert query["sink"] == "1"
    assert decode_query(query)[0].raw == raw
    assert profile_to_dict(profile)["learnable_sink"] is True
    assert app_model.load_model_json(json.dumps(profile_to_dict(profile))) == profile
    plain = RawModel.from_profile(replace(profile, learnable_sink=False))
    assert "sink" not in encode_query(AppState(model=CUSTOM, raw=plain))
    assert "learnable_sink" not in profile_to_dict(plain.profile())
    state, notices = decode_query({**query, "sink": "2"})
    assert state.raw is None and "sink='2' is not 0 or 1" in notices[0]


def test_a_link_or_export_refuses_learnable_sink_beside_no_indexer():
    # learnable_sink is read by SGLang for DeepSeek's sparse attention alone: sink=1 on a raw
    # model of no indexer keys (Llama-3.1-8B's 32 x 4,096 B) was carried in silence, written
    # back into the link and the export, a flag that said something of nothing
    query = {"model": CUSTOM, "layers": "32*full_attention", "kv": "4096", "sink": "1"}
    state, notices = decode_query(query)
    assert state.raw is None and state.model == app_state.DEFAULT.model
    assert notices == [
        "The custom model in the link is not valid (sink is true beside no indexer: "
        "learnable attention sinks are DeepSeek's sparse attention's alone, so give the "
        "indexer's keys too, or leave it out without an indexer); using the default model "
        f"({app_state.DEFAULT.model})."]
    export = {"format": "flatkv-profile/1", "name": "raw", "layers": "32*full_attention",
              "kv_bytes_per_slot": 4096, "state_const_bytes": {}, "sliding_window": None,
              "learnable_sink": True}
    with pytest.raises(ValueError, match="learnable_sink is true beside no "
                                         "indexer_bytes_per_slot"):
        app_model.load_model_json(json.dumps(export))
    # beside the keys it is read (DeepSeek-V3.2's 132 of 1,284 B)
    state, notices = decode_query({**query, "kv": "1284", "indexer": "132"})
    assert state.raw.learnable_sink and notices == []


def test_the_gpu_picked_sets_the_compute_capability_vllm_reads():
    # each GPU preset's (budget.GPU_COMPUTE_CAPABILITIES: A100 8.0, L40S and RTX 4090 8.9, H100
    # and H200 9.0, B200 10.0); a budget of no preset (Custom, KV cache memory, vLLM's blocks)
    # names no GPU: None where no architecture is said, so its figures are today's, and the
    # architecture's capability where one is (link gpu_arch; the gpu carries a preset's)
    def capability(gpu: str, **more) -> tuple[int, int] | None:
        return AppState(model="DeepSeek-V3.2", gpu=gpu,
                        **more).strategy_options().gpu_compute_capability

    assert [capability(g) for g in ("A100 80GB", "A100 40GB", "L40S 48GB", "RTX 4090 24GB",
                                    "H100 80GB", "H200 141GB", "B200 192GB")] == [
        (8, 0), (8, 0), (8, 9), (8, 9), (9, 0), (9, 0), (10, 0)]
    for gpu in ("Custom", "KV cache memory", "vLLM KV cache blocks"):
        assert capability(gpu) is None, gpu
        assert [capability(gpu, gpu_arch=a) for a in ("ampere", "ada", "hopper", "blackwell")
                ] == [(8, 0), (8, 9), (9, 0), (10, 0)], gpu
    assert capability("H100 80GB", gpu_arch="ampere") == (9, 0)  # the preset's, not told
    # a name no architecture has, where it is read, is refused, not taken for a Hopper (the
    # link refuses it before: decode_query), and beside a preset left unread
    for bad in ("volta", "Blackwell"):
        with pytest.raises(ValueError) as err:
            capability("KV cache memory", gpu_arch=bad)
        assert str(err.value) == (
            f"gpu_arch is {bad!r}: give one of ampere, ada, hopper, blackwell (budget."
            "GPU_ARCHITECTURES), or '' where the architecture is not said")
    assert capability("A100 80GB", gpu_arch="volta") == (8, 0)
    assert "gpu_compute_capability" not in {f for f, _, _ in app_state._SETTINGS.values()}



def test_a_budget_key_given_without_a_gpu_picks_its_memory_source():
    # vLLM's "Available KV cache memory: 44.59 GiB" pasted as kv_mem=44.59GiB opened the H100's
    # budget (85,520,809,984 B x 0.9 = 76,968,728,985 B a rank at TP 2), in silence: the key
    # picks its source, int(44.59 x 2^30) = 47,878,147,932 B a rank; said, as older links
    # carrying kv_mem beside the default gpu (not written) opened on the H100's budget
    qwen = {"model": "Qwen3-Next-80B-A3B", "tp": "2"}
    state, notices = decode_query({**qwen, "kv_mem": "44.59GiB"})
    assert notices == ["kv_mem given without gpu: read as gpu=KV cache memory (add gpu=H100 "
                       "80GB for the H100 80GB's own budget)."] and state.gpu == KV_MEMORY
    assert state.budget().cache_bytes == int(Fraction("44.59") * 2**30) == 47_878_147_932
    assert encode_query(state) == {"tp": "2", "gpu": KV_MEMORY, "kv_mem": "44.59GiB"}
    assert decode_query(encode_query(state)) == (state, [])  # the app's own link: no notice
    custom, notices = decode_query({"gpu_mem": "100GB"})
    assert notices == ["gpu_mem given without gpu: read as gpu=Custom (add gpu=H100 80GB for "
                       "the H100 80GB's own budget)."] and custom == AppState(gpu=CUSTOM_GPU,
                                                                    gpu_memory=10**11)
    blocks, notices = decode_query({"kv_blocks": "6701"})
    assert notices == ["kv_blocks given without gpu: read as gpu=vLLM KV cache blocks (add "
                       "gpu=H100 80GB for the H100 80GB's own budget)."]
    assert blocks == AppState(gpu=KV_BLOCKS, kv_blocks=6_701)
    # beside a gpu of another source: read as that gpu's budget, and said
    h100, notices = decode_query({**qwen, "gpu": "H100 80GB", "kv_mem": "44.59GiB"})
    assert h100.gpu == "H100 80GB" and h100.budget().cache_bytes == 76_968_728_985
    assert notices == [
        "Ignored kv_mem='44.59GiB': only gpu=KV cache memory reads it, and the budget here is "
        "gpu=H100 80GB; using that budget (give gpu=KV cache memory, or leave gpu out, to use "
        "kv_mem)."]
    assert decode_query({"gpu": "Custom", "gpu_mem": "100GB", "kv_mem": "3GiB"}) == (custom, [
        "Ignored kv_mem='3GiB': only gpu=KV cache memory reads it, and the budget here is "
        "gpu=Custom; using that budget (give gpu=KV cache memory to use kv_mem)."])
    assert len(decode_query({"gpu": "Custom", "gpu_mem": "1GB", "kv_mem": "3GiB",
                             "kv_blocks": "50"})[1]) == 2  # one notice a key ignored
    # two sources and no gpu to choose: the default's budget, said
    assert decode_query({"gpu_mem": "100GB", "kv_mem": "3GiB"}) == (AppState(), [
        "Ignored gpu_mem='100GB', kv_mem='3GiB': each is another kind of budget (gpu=Custom, "
        "gpu=KV cache memory), and the link gives no gpu to choose; using the default "
        "(gpu=H100 80GB): give the gpu whose budget the link means."])
    # a link writes a budget key only beside its source, so that none of its own is refused
    assert encode_query(replace(state, gpu="H100 80GB")) == {"tp": "2"}  # (the model default)
    assert encode_query(replace(custom, gpu=KV_MEMORY)) == {"gpu": KV_MEMORY}
