"""The vLLM anchor of SPEC §3.1 end to end: a Qwen3-Next-80B-A3B-Instruct config.json written out
field by field, read through transformers, planned at TP=2 in bf16, laid out as vLLM does.

vLLM's own log for that run: "Setting attention block size to 544 tokens", "Padding mamba page
size by 1.49%", 7,162 blocks, "GPU KV cache size: 973,760 tokens", "Maximum concurrency for
262,144 tokens per request: 14.77x" (a release that logs them on two lines; current ones print
max concurrency x max_model_len as the size, on one line with the concurrency).
"""

from __future__ import annotations

import json
from fractions import Fraction

from flatkv.cli import main
from flatkv.hf_config import spec_from_hf_config
from flatkv.strategies import run_strategy
from flatkv.units import parse_size

QWEN3_NEXT_CONFIG = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "num_hidden_layers": 48,
    "full_attention_interval": 4,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "torch_dtype": "bfloat16",
}


def test_vllm_anchor_from_config_json(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(QWEN3_NEXT_CONFIG))
    profile = spec_from_hf_config(path).with_options(tp=2).profile()
    # Per TP rank: 1 kv head x (256 + 256) x 2 B; conv (2*16*128 + 32*128)/2 x 3 x 2 B;
    # ssm 32/2 x 128 x 128 x 2 B.
    assert profile.kv_bytes_per_slot == 1 * 512 * 2 == 1_024
    conv = (2 * 16 * 128 + 32 * 128) // 2 * 3 * 2
    assert profile.state_const_bytes == {"conv": conv, "ssm": 16 * 128 * 128 * 2}
    assert conv == 24_576
    assert (profile.count("full_attention"), profile.count("linear_attention")) == (12, 36)

    budget = parse_size("44.59GiB")
    r = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=262_144)
    assert r.block_size == 16 * -(-(24_576 + 524_288) // (16 * 1_024)) == 544
    # (557,056 - 548,864) / 548,864 = 8,192 / 548,864 = 1 / 67 = 0.0149
    assert r.extras["state_padding_fraction"] == 1 / 67
    assert round(r.extras["state_padding_fraction"], 4) == 0.0149
    assert r.num_blocks == budget // 557_056 // 12 == 7_162
    assert r.older_logged_tokens == 7_162 // 4 * 544 == 973_760  # "GPU KV cache size"
    assert r.logged_tokens == 7_162 * 262_144 // 485 == 3_871_083  # current vLLM's line
    # the convention every strategy shares: 3 state groups hold one request's page each
    assert r.capacity_tokens == (7_162 - 3) * 544 == 3_894_496
    assert r.concurrency_denominator == -(-262_144 // 544) + 3 == 485
    assert r.concurrency == Fraction(7_162, 485) and round(r.max_concurrency, 2) == 14.77


def test_vllm_anchor_through_the_cli(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(QWEN3_NEXT_CONFIG))
    code = main(["plan", "--hf-config", str(path), "--tp", "2", "--kv-dtype", "bf16",
                 "--strategy", "vllm", "--budget", "44.59GiB", "--context", "262144", "--json"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["strategy"], d["block_size"], d["num_blocks"], d["older_logged_tokens"]) == (
        "vllm", 544, 7_162, 973_760)
    assert d["logged_tokens"] == 3_871_083  # int(7,162 / 485 x 262,144)
    assert d["capacity_tokens"] == 3_894_496
    assert round(d["state_padding_fraction"], 4) == 0.0149
    assert round(d["max_concurrency"], 2) == 14.77
    # the lines vLLM logs at start-up, as it words and formats them (current release)
    assert d["log_lines"] == [
        "Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size.",
        # 100 x (557,056 - 548,864) / 548,864 = 1.4925...
        "Padding mamba page size by 1.49% to ensure that mamba page size and attention page "
        "size are exactly equal.",
        "Available KV cache memory: 44.59 GiB",  # floor(44.59 x 2**30) B, to 0.01 GiB
        # 7,162 blocks x 12 pages x 557,056 B = 47,875,620,864 B = 44.587 GiB (vLLM 0.34)
        "Memory after warmup: ... 7162 KV cache blocks (44.59 GiB) fit within the requested ... "
        "GiB. ...",
        "GPU KV cache size: 3,871,083 tokens, Maximum concurrency for 262,144 tokens per "
        "request: 14.77x",
    ]
    main(["plan", "--hf-config", str(path), "--tp", "2", "--strategy", "vllm", "--budget",
          "44.59GiB", "--context", "262144"])
    text = capsys.readouterr().out
    assert text.endswith(
        "vLLM's start-up log at these settings (vLLM 0.34's words, a current release; mamba "
        "cache mode "
        "none):\n"
        "  Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size.\n"
        "  Padding mamba page size by 1.49% to ensure that mamba page size and attention page "
        "size are exactly equal.\n"
        "  Available KV cache memory: 44.59 GiB\n"
        "  Memory after warmup: ... 7162 KV cache blocks (44.59 GiB) fit within the requested "
        "... GiB. ...\n"
        "  GPU KV cache size: 3,871,083 tokens, Maximum concurrency for 262,144 tokens per "
        "request: 14.77x\n"
        "  (vLLM 0.34 on CUDA logs the Available line before warm-up, as an estimate, and sizes "
        "its cache by the blocks it fits after it (the Memory after warmup line, its GPU figures "
        "the run's: elided); up to 0.33 the Available line is the cache)\n")
    main(["compare", "--hf-config", str(path), "--tp", "2", "--budget", "44.59GiB",
          "--context", "262144"])
    # SGLang's after vLLM's: 587 slots of 36 x (24,576 + 262,144 float32 elements x 4) B in
    # its 22,679,122,704 B state pool, 2,050,805 tokens of 12 x 1,024 B in the rest; conv
    # 587 x 36 x 24,576 B = 0.48 GiB, ssm 587 x 36 x 1,048,576 B = 20.64 GiB, K (and V) 12 x
    # 2,050,806 x 512 B = 11.73 GiB
    assert (4459 * 2**30 // 100 - 587 * 36 * 1_073_152) // 12_288 == 2_050_805
    # and its warning first: 586 request slots // 5 a request (Qwen3NextForCausalLM's
    # extra_buffer radix cache) = 117 running, under int(2,050,805 / 262,144 x 512) = 4,005
    assert (586 // 5, int(2_050_805 / 262_144 * 512)) == (117, 4_005)
    assert capsys.readouterr().out.endswith(
        text[text.index("vLLM's start-up log"):]
        + "SGLang's start-up log at these settings (a current release's words; its GB are GiB, "
        "its sizes count a page a KV layer and the padding slot):\n"
        "  max_running_requests is capped to 117 by the mamba state cache "
        "(max_mamba_cache_size=586, 5 state slots per request). To raise it: increase "
        "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
        "--mamba-ssm-dtype bfloat16.\n"
        "  Mamba Cache is allocated. max_mamba_cache_size: 586, conv_state size: 0.48GB, "
        "ssm_state size: 20.64GB \n"
        "  KV Cache is allocated. dtype: torch.bfloat16, #tokens: 2050805, K size: 11.73 GB, "
        "V size: 11.73 GB\n"
        "  max_total_num_tokens=2050805, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=117, context_len=262144\n")
