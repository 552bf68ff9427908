"""The strategy command line (plan --strategy, compare) through flatkv.cli.main."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest
from strategy_profiles import ANCHOR_BUDGET
from test_cli import RADIX_OFF_UNCHUNKED_NOTE

from flatkv.cli import main
from flatkv.strategies import STRATEGIES

QWEN_ARGS = [
    "--layers", "(3*linear_attention,full_attention)*12",
    "--kv-bytes-per-slot", "1024", "--state", "conv=24576,ssm=524288",
]


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_max_batched_tokens_reads_vllms_suffixes():
    # gpt-oss-20b, S = 2K = 2,048: a sliding request holds ceil(min(127 + 2,048, 8,192) / 16)
    # + 1 = 137 pages, as vLLM's --max-num-batched-tokens 2K would size it
    code, out, err = run(["plan", "--preset", "gpt-oss-20b", "--budget", "40GiB", "--strategy",
                          "vllm", "--context", "8K", "--max-batched-tokens", "2K"])
    assert code == 0, err
    assert "ceil(min(128 - 1 + 2,048, 8,192) / 16) + 1 = 137" in out
    code, out, err = run(["plan", "--preset", "gpt-oss-20b", "--budget", "40GiB",
                          "--max-batched-tokens", "2x"])
    assert code == 2 and err.strip().endswith(
        "--max-batched-tokens '2x' is not a whole number of tokens: give e.g. 262144, 256K "
        "(262,144) or 128k (128,000)")
    assert len(err.strip().splitlines()) == 1


def test_plan_vllm_json_anchor():
    code, out, err = run(["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB",
                          "--context", "262144", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["strategy"] == "vllm"
    assert (d["block_size"], d["num_blocks"], d["older_logged_tokens"]) == (544, 7_162, 973_760)
    assert d["logged_tokens"] == 7_162 * 262_144 // 485 == 3_871_083
    assert d["capacity_tokens"] == (7_162 - 3) * 544
    assert round(d["state_padding_fraction"], 4) == 0.0149
    assert round(d["max_concurrency"], 2) == 14.77
    assert d["block_bytes"] == 12 * 544 * 1024


def test_plan_table_shows_the_math():
    code, out, _ = run(["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB",
                        "--context", "256K"])
    assert code == 0
    assert "7,162" in out and "14.77x" in out
    assert "capacity        3,894,496 tokens" in out  # (7,162 - 3 state pages) x 544
    assert 'engine log      3,871,083 tokens (vLLM\'s "GPU KV cache size")' in out
    assert "older vLLM log  973,760 tokens (vLLM 0.19 and earlier)" in out
    assert "47,878,147,932 // 557,056 // 12 = 7,162" in out
    assert "total" in out


def test_plan_shows_no_older_log_for_options_vllm_0_19_never_ran():
    # align with a prefill checkpoint block (vLLM 0.32+ for Mamba2, 0.33+ for GDN; a model
    # named by no class is told both): the anchor's 7,162 blocks, a request 482 + 3 x (2 + 1)
    # pages, and no "GPU KV cache size" as 0.19 printed it, since 0.19 kept no such block
    args = ["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB", "--context",
            "256K", "--mamba-cache-mode", "align", "--prefill-checkpoint-blocks", "1"]
    code, out, err = run(args)
    assert code == 0, err
    assert f"engine log      {int(7_162 / (482 + 9) * 262_144):,} tokens" in out  # 3,823,778
    assert ("older vLLM log  none: vLLM 0.19 and earlier had no prefill checkpoint blocks "
            "(vLLM 0.32 and later keep them for a Mamba2 class, 0.33 and later for a GDN class; "
            "this model names no class)") in out
    code, out, err = run([*args, "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert (d["num_blocks"], d["logged_tokens"], d["older_logged_tokens"]) == (
        7_162, 3_823_778, None)
    assert d["older_log_none"].startswith("vLLM 0.19 and earlier had no prefill checkpoint")
    # compare keeps the row, vLLM's cell "none", and says why under the table (the row was
    # dropped without a word where no other layout had an older figure)
    code, out, err = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--context", "256K",
                          "--mamba-cache-mode", "align", "--prefill-checkpoint-blocks", "1"])
    assert code == 0, err
    (older,) = [line for line in out.splitlines() if line.startswith("older vLLM log")]
    assert older.split()[4:] == ["-", "-", "none", "-", "n/a", "-"]
    assert ("vllm: no older vLLM log: vLLM 0.19 and earlier had no prefill checkpoint blocks "
            "(vLLM 0.32 and later keep them for a Mamba2 class, 0.33 and later for a GDN class; "
            "this model names no class)") in out.splitlines()


def test_compare_table_and_json():
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--context", "262144"])
    assert code == 0
    header = out.splitlines()[1].split()
    assert header == list(STRATEGIES)
    # the layout it points at by the name this table's column and --strategy give it (it read
    # "see two-level pages, lcm in the CLI", in the CLI)
    assert out.count("aliased does not apply") == 1
    assert next(line for line in out.splitlines() if "aliased does not apply" in line).endswith(
        "a history row grows with P (unequal groups: see lcm)")
    # the state group by kind, not the planner's id (it read "has linear_attention state layers")
    assert "aliased does not apply: the model has state layers: aliasing needs" in out
    logged = next(line for line in out.splitlines() if line.startswith("engine log"))
    # flat, per-component, vllm, sglang, aliased, lcm: only the engines log a figure. SGLang:
    # 47,878,147,932 x 9 // 19 // 19,759,104 B = 1,147 state slots; the rest // 12,288 B
    assert (47_878_147_932 - 1_147 * 19_759_104) // 12_288 == 2_051_957
    assert logged.split()[3:] == ["-", "-", "3,871,083", "2,051,957", "n/a", "-"]
    older = next(line for line in out.splitlines() if line.startswith("older vLLM log"))
    assert older.split()[4:] == ["-", "-", "973,760", "-", "n/a", "-"]
    # each byte figure in its own unit: SGLang leaves 47,878,147,932 - 1,147 x 19,759,104 -
    # 2,051,957 x 12,288 = 8,028 B unused, 7.84 KiB (not a "0.00 GiB" that reads as none)
    assert 47_878_147_932 - 1_147 * 19_759_104 - 2_051_957 * 12_288 == 8_028
    unused = next(line for line in out.splitlines() if line.startswith("unused"))
    assert unused.split()[7:9] == [f"{8_028 / 1024:.2f}", "KiB"]
    dead = next(line for line in out.splitlines() if line.startswith("dead weight"))
    assert dead.split()[6:10] == ["0", "B", "0", "B"]  # vLLM and SGLang carry none
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--json"])
    assert code == 0
    results = json.loads(out)
    assert [r["strategy"] for r in results] == list(STRATEGIES)
    assert all(r["max_concurrency"] is None for r in results)


def test_compare_exact_bytes_prints_the_breakdown_in_bytes():
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--context", "262144",
                        "--exact-bytes"])
    assert code == 0
    rows = {line.split(" (B)")[0]: line.split(" (B)")[1].split()
            for line in out.splitlines() if " (B)  " in line}
    # SGLang's column, as derived in the test above: 2,051,957 tokens of 12,288 B, 8,028 B
    # left over (7.84 KiB without the flag)
    assert rows["kv history in use"][3] == f"{2_051_957 * 12_288:,}"
    assert rows["unused"][3] == "8,028"
    # every column's rows are the whole budget (aliased does not apply: n/a)
    for column in (0, 1, 2, 3, 5):
        assert sum(int(r[column].replace(",", "")) for r in rows.values()) == 47_878_147_932
    assert {r[4] for r in rows.values()} == {"n/a"}
    code, _, err = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--exact-bytes",
                        "--check-log", "-"])
    assert code == 2 and "--exact-bytes with --check-log" in err


def test_compare_says_sglangs_blocks_count_the_full_pool_beside_a_sliding_pool():
    # gpt-oss-120b: 18 full + 18 sliding layers of 8 KV heads x 64 x (K, V) x 2 B = 2,048 B a
    # token. SGLang's full pool: 40 GiB // (2,048 x 18 + 0.8 x 2,048 x 18) tokens, its swa pool
    # 0.8 x as many, so its blocks x block bytes (a page in both pools) is not its budget
    full = (40 << 30) * 5 // (5 * 2_048 * 18 + 4 * 2_048 * 18)
    swa = full * 4 // 5
    assert (full, swa) == (647_269, 517_815)
    code, out, err = run(["compare", "--preset", "gpt-oss-120b", "--budget", "40GiB"])
    assert code == 0, err
    blocks = next(line for line in out.splitlines() if line.startswith("blocks"))
    assert blocks.split()[4] == f"{full:,}"
    assert (f"sglang: block bytes are a page in both pools (full {18 * 2_048:,} + swa "
            f"{18 * 2_048:,} B); blocks are the full pool's {full:,} pages, beside the swa "
            f"pool's {swa:,}") in out.splitlines()
    code, out, err = run(["compare", "--preset", "gpt-oss-120b", "--budget", "40GiB",
                          "--no-sglang-swa-pool"])  # one pool: its blocks are the whole story
    assert code == 0, err
    assert "block bytes are a page in both pools" not in out


def test_compare_names_the_vllm_releases_that_serve_minimax_m1():
    # vLLM dropped MiniMax-M1 after 0.23.0: one line says so under a table where vLLM applies;
    # where it refuses, its reason says it (not twice)
    said = ("vllm: vLLM serves MiniMaxM1ForCausalLM up to 0.23.0 only, so a log of it comes "
            "from such a release: later ones refuse it, their model registry listing it as "
            "previously supported")
    code, out, _ = run(["compare", "--preset", "minimax-m1", "--budget", "40GiB", "--context",
                        "100000"])
    assert code == 0 and out.splitlines()[-1] == said
    code, out, _ = run(["compare", "--preset", "minimax-m1", "--budget", "40GiB"])
    assert code == 0 and said not in out.splitlines()
    assert out.count("vLLM serves MiniMaxM1ForCausalLM up to 0.23.0 only") == 1


def test_compare_says_which_layouts_hold_not_one_request():
    # MiniMax-M1 in 40 GiB at its 10,240,000 tokens: flat's 256 blocks of P 512 leave 255 for
    # history after one request's state page, 255 x 512 = 130,560 tokens = 0.01 of a request;
    # lcm's 1,039,360 tokens 0.10. The table says 0.01x; the note says that is no request.
    code, out, _ = run(["compare", "--preset", "minimax-m1", "--budget", "40GiB"])
    assert code == 0
    assert 130_560 / 10_240_000 < 0.02 and round(1_039_360 / 10_240_000, 2) == 0.10
    assert ("Not even one request of 10,240,000 tokens fits in: flat (0.01), per-component "
            "(0.01), lcm (0.10). A paged engine laid out so would refuse to start, as vLLM does "
            "when one request of max_model_len does not fit.") in out.splitlines()
    code, out, _ = run(["compare", "--preset", "minimax-m1", "--budget", "40GiB", "--context",
                        "100000"])
    assert code == 0 and "Not even one request" not in out


def test_raw_bytes_with_their_ssm_element_size_get_sglangs_figures_of_the_model():
    # Qwen3-Next TP 2 as raw bytes per rank (QWEN_ARGS): its ssm 524,288 B are 262,144 bf16
    # elements, which SGLang keeps in float32, as it does the preset's: the preset's 2,050,805
    # tokens. Taken as given (no element size), the state is half as large and the KV pool
    # larger: 1,147 slots of 36 x 548,864 B, (47,878,147,932 - that) // 12,288 B a token
    raw = [*QWEN_ARGS, "--budget", "44.59GiB", "--context", "262144", "--strategy", "sglang"]

    def logged(argv):
        code, out, _ = run(["plan", *argv])
        assert code == 0
        return next(line for line in out.splitlines() if "engine log" in line)

    preset = logged(["--preset", "Qwen3-Next-80B-A3B", "--tp", "2", *raw[len(QWEN_ARGS):]])
    assert "2,050,805 tokens" in preset
    assert logged([*raw, "--ssm-element-bytes", "2"]) == preset
    assert (47_878_147_932 - 1_147 * 36 * (24_576 + 524_288)) // 12_288 == 2_051_957
    assert "2,051,957 tokens" in logged(raw)
    code, _, err = run(["plan", *raw, "--ssm-element-bytes", "3"])
    assert code == 2 and err == (
        "python -m flatkv: error: --ssm-element-bytes 3 does not divide --state's ssm of "
        "524,288 B: give the element size its ssm bytes are whole elements of (2 for bf16, 4 "
        "for float32), or drop the option\n")
    conv_only = ["--layers", "(3*linear,full)*12", "--kv-bytes-per-slot", "1024", "--state",
                 "conv=24576", "--budget", "1GiB", "--ssm-element-bytes", "2"]
    code, _, err = run(["plan", *conv_only])
    assert code == 2 and "--state has none: add ssm=BYTES to --state, or drop the option" in err


def test_vllm_async_scheduling_flag_counts_two_batches_in_flight():
    # gpt-oss-20b in 40 GiB at block 64 (tests/test_strategies.py): vLLM 0.34's own figures,
    # 27,306 blocks / (2,048 + 259) pages a request, "GPU KV cache size: 1,551,387 tokens"
    args = ["compare", "--preset", "gpt-oss-20b", "--budget", "40GiB", "--block-size", "64"]
    code, out, _ = run([*args, "--vllm-async-scheduling"])
    logged = next(line for line in out.splitlines() if line.startswith("engine log"))
    assert code == 0 and logged.split()[5] == f"{int(27_306 / 2_307 * 131_072):,}" == "1,551,387"
    code, out, _ = run(args)
    logged = next(line for line in out.splitlines() if line.startswith("engine log"))
    assert code == 0 and logged.split()[5] == f"{int(27_306 / 2_179 * 131_072):,}"


def test_compare_says_only_per_component_carries_reserved_rows():
    code, out, _ = run(["compare", "--layers", "full*4", "--kv-bytes-per-slot", "1024",
                        "--budget", "1GB", "--reserved-bytes-per-block", "4096"])
    assert code == 0
    blocks = next(line for line in out.splitlines() if line.startswith("blocks")).split()[1:]
    # P 16: a page id is 4 x 16 x 1,024 = 65,536 B, plus 4,096 reserved in per-component only
    assert blocks[:3] == [f"{10**9 // 65_536:,}", f"{10**9 // (65_536 + 4_096):,}",
                          f"{10**9 // 65_536:,}"]
    assert out.splitlines()[-1] == (
        "per-component carries 4,096 reserved B per page id (--reserved-bytes-per-block, "
        "counted as kv history in use); the other layouts have no reserved rows")


def test_options_reach_the_strategies():
    code, out, _ = run(["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB",
                        "--context", "262144", "--mamba-cache-mode", "align",
                        "--kernel-block-size", "64", "--json"])
    assert code == 0
    d = json.loads(out)
    assert d["block_size"] == 64 * 9  # 64 x cdiv(548,864, 64 x 1,024)
    assert d["max_concurrency_exact"][1] == -(-262_144 // 576) + 3 * 2
    # 2 drafted tokens: a preset's GDN conv state grows from 3 to 5 rows (24,576 -> 40,960 B),
    # P to 16 x cdiv(565,248, 16,384) = 560, and each GDN group holds 2 + 2 pages a request
    code, out, _ = run(["plan", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--strategy",
                        "vllm", "--budget", "44.59GiB", "--context", "262144",
                        "--mamba-cache-mode", "align", "--speculative-tokens", "2", "--json"])
    d = json.loads(out)
    assert (d["block_size"], d["num_blocks"]) == (560, ANCHOR_BUDGET // (560 * 1024) // 12)
    assert d["max_concurrency_exact"] == [6_957, -(-262_144 // 560) + 3 * (2 + 2)]
    code, out, _ = run(["plan", *QWEN_ARGS, "--strategy", "sglang", "--budget", "44.59GiB",
                        "--mamba-full-memory-ratio", "0.5", "--json"])
    assert json.loads(out)["state_slots"] == ANCHOR_BUDGET // 3 // (36 * 548_864)
    code, out, _ = run(["plan", "--preset", "gpt-oss-20b", "--strategy", "sglang", "--budget",
                        "10GB", "--no-sglang-swa-pool", "--json"])
    assert json.loads(out)["capacity_tokens"] == 10**10 // (24 * 2048)
    # a preset's ssm tensors take SGLang's ssm dtype: float32 by default, bfloat16 when told
    for dtype, ssm_bytes in (("float32", 4), ("bfloat16", 2)):
        code, out, _ = run(["plan", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--strategy",
                            "sglang", "--budget", "44.59GiB", "--sglang-ssm-dtype", dtype,
                            "--json"])
        assert json.loads(out)["state_slots"] == ANCHOR_BUDGET * 9 // 19 // (
            36 * (24_576 + 262_144 * ssm_bytes))


def test_sglang_reads_a_configs_mamba_ssm_dtype_unless_told(tmp_path):
    # qwen3_next's defaults (SPEC 2) at TP 2 with mamba_ssm_dtype bfloat16 in the config: SGLang
    # keeps 2-byte ssm elements by default, 4-byte ones when told float32
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "qwen3_next", "mamba_ssm_dtype": "bfloat16"}))
    for told, ssm_bytes in (([], 2), (["--sglang-ssm-dtype", "float32"], 4)):
        code, out, err = run(["plan", "--hf-config", str(config), "--tp", "2", "--strategy",
                              "sglang", "--budget", "44.59GiB", "--json", *told])
        assert code == 0, err
        assert json.loads(out)["state_slots"] == ANCHOR_BUDGET * 9 // 19 // (
            36 * (24_576 + 262_144 * ssm_bytes))


def test_sglangs_log_heading_names_only_the_padding_its_lines_count():
    # bytes typed by hand: no KV lines (said under them), so only the padding slot is counted
    code, out, err = run(["plan", *QWEN_ARGS, "--strategy", "sglang", "--budget", "44.59GiB"])
    assert code == 0, err
    heading = "SGLang's start-up log at these settings (a current release's words; its GB are "
    assert f"{heading}GiB, its sizes count the padding slot):\n  Mamba Cache" in out
    assert out.endswith("  (no KV Cache lines: they need the K / V split and KV dtype, which "
                        "bytes typed by hand (or attention layer kinds whose K / V splits "
                        "differ) do not give)\n")


def test_plan_prints_sglangs_start_up_log():
    # Qwen3-Next TP 1 at the anchor's 44.59 GiB: SGLang keeps its 524,288 ssm elements in
    # float32, so a slot is 36 x (49,152 + 2,097,152) = 77,266,944 B; 293 slots (292 for
    # requests) take 22,639,214,592 B of the 22,679,122,704 B state pool, and the rest holds
    # 1,026,974 tokens of 12 x 2,048 B
    assert ANCHOR_BUDGET * 9 // 19 // (36 * 2_146_304) == 293
    tokens = (ANCHOR_BUDGET - 293 * 36 * 2_146_304) // (12 * 2048)
    assert tokens == 1_026_974
    sizes = (293 * 36 * 49_152, 293 * 36 * 2_097_152, 12 * (tokens + 1) * 1024)
    assert [f"{b / 2**30:.2f}" for b in sizes] == ["0.48", "20.60", "11.75"]
    code, out, err = run(["plan", "--preset", "qwen3-next-80b-a3b", "--strategy", "sglang",
                          "--budget", "44.59GiB"])
    assert code == 0, err
    # at the model's 262,144 tokens its warning first: 292 request slots // 5 (its extra
    # buffer's 3 + 2 a request) = 58 running, under 2,048 (int(1,026,974 / 262,144 x 512) =
    # 2,005, raised to SGLang's least estimate)
    assert (292 // 5, max(int(1_026_974 / 262_144 * 512), 2048)) == (58, 2_048)
    assert out.endswith(
        "SGLang's start-up log at these settings (a current release's words; its GB are GiB, "
        "its sizes count a page a KV layer and the padding slot):\n"
        "  max_running_requests is capped to 58 by the mamba state cache "
        "(max_mamba_cache_size=292, 5 state slots per request). To raise it: increase "
        "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
        "--mamba-ssm-dtype bfloat16.\n"
        "  Mamba Cache is allocated. max_mamba_cache_size: 292, conv_state size: 0.48GB, "
        "ssm_state size: 20.60GB \n"
        "  KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1026974, K size: 11.75 GB, "
        "V size: 11.75 GB\n"
        # the scheduler's line last: the pool, the 8,192 chunk assumed where no GPU is told,
        # the 58 running, the context
        "  max_total_num_tokens=1026974, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=58, context_len=262144\n")


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--budget", "lots"], "--budget"),
        (["--budget", "1GiB", "--context", "0"], "--context"),
        (["--budget", "1GiB", "--mamba-full-memory-ratio", "x"],
         "--mamba-full-memory-ratio is 'x'"),
        (["--budget", "1GiB", "--strategy", "nope"], "--strategy"),
        (["--budget", "1GiB", "--sglang-ssm-dtype", "int8"], "--sglang-ssm-dtype is 'int8'"),
        # underscores only between digits, as float() and so SGLang read a ratio: Decimal took
        # '0_._5' as 0.5 and '1__0' as 10
        (["--budget", "1GiB", "--mamba-full-memory-ratio", "0_._5"],
         "python -m flatkv: error: --mamba-full-memory-ratio is '0_._5': give a number in "
         "[0.000001, 1000000] such as 0.9 or 9/10\n"),
        (["--budget", "1GiB", "--lcm-padding-bound", "1__0"],
         "python -m flatkv: error: --lcm-padding-bound is '1__0': give a number in [0, 10] "
         "such as 0.25 or 1/4\n"),
        (["--budget", "1GiB", "--speculative-tokens", "-1"],
         "--speculative-tokens -1 must not be negative: give 0 or more"),
        # the library's refusals of a flag of two names name the one typed (they named the
        # --sglang- one), as argparse's and the type functions' do
        (["--budget", "1GiB", "--max-mamba-cache-size", "0"],
         "error: --max-mamba-cache-size 0 must be positive: give 1 or more; the state slots for "
         "requests (SGLang's --max-mamba-cache-size), or leave it unset"),
        (["--budget", "1GiB", "--max-running-requests", "0"],
         "error: --max-running-requests 0 must be positive: give 1 or more; the requests SGLang "
         "runs at once (its --max-running-requests), or leave it unset"),
        (["--budget", "1GiB", "--mamba-track-interval", "0"],
         "error: --mamba-track-interval 0 must be positive: give 1 or more; SGLang's "
         "--mamba-track-interval, tokens between the state snapshots of its extra_buffer radix "
         "cache (256 by default), a multiple of the page size"),
        (["--budget", "1GiB", "--sglang-mamba-track-interval", "0"],
         "error: --sglang-mamba-track-interval 0 must be positive: give 1 or more;"),
        (["--budget", "1GiB", "--chunked-prefill-size", "+0"],
         "error: --chunked-prefill-size '+0' has a plus sign: write it without the sign"),
        (["--budget", "1GiB", "--sglang-mamba-track-interval", "2.5"],
         "--sglang-mamba-track-interval '2.5' is not a whole number: give one in digits, e.g. "
         "2"),
    ],
)
def test_bad_input_exits_2_with_one_line(extra, needle):
    code, out, err = run(["compare", *QWEN_ARGS, *extra])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err


@pytest.mark.parametrize("strategy", ["flat", "vllm", "sglang", "aliased"])
def test_plan_strategy_that_does_not_apply_exits_2_as_plan_does(strategy):
    # 1 MB holds no block of Qwen3-Next's layouts (aliasing: no state hybrids at all), so
    # plan --strategy fails as plain plan does; compare still lists it with its reason
    code, out, err = run(["plan", *QWEN_ARGS, "--budget", "1MB", "--strategy", strategy])
    assert code == 2 and out == ""
    # one line, worded as compare's note: an engine's refusal keeps its opening, the engine
    # the subject ("--strategy sglang refuses to start" would make the flag refuse)
    engine = {"sglang": "SGLang", "vllm": "vLLM"}.get(strategy)
    opening = f": {engine} refuses to start: " if engine else " does not apply: "
    assert err.startswith(f"python -m flatkv: error: --strategy {strategy}{opening}")
    assert len(err.strip().splitlines()) == 1
    assert run(["plan", *QWEN_ARGS, "--budget", "1MB"])[0] == 2
    # compare's line reads as Compare's: SGLang's state pool of 0 slots and vLLM's budget of
    # under 2 blocks are start-up refusals (their reasons open "<engine> refuses to start"),
    # FlatKV's and aliasing's short budget does not apply
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "1MB"])
    label = "refuses to start" if engine else "does not apply"
    assert code == 0 and f"\n{strategy} {label}: the " in out


def test_compare_pure_attention_json():
    code, out, _ = run(["compare", "--layers", "full_attention*32", "--kv-bytes-per-slot",
                        "4096", "--budget", "8GiB", "--json"])
    assert code == 0
    flat = json.loads(out)[0]
    assert flat["num_blocks"] == 8 * 2**30 // (32 * 16 * 4096)


def test_mamba_cache_mode_all_and_chunk_size():
    base = ["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB", "--context",
            "262144", "--mamba-cache-mode", "all", "--json"]
    code, out, _ = run(base)
    assert code == 0
    # Qwen3-Next's config names no chunk: vLLM's 2,048; c = lcm(2,048, 16) = 2,048 and
    # P = 2,048 x cdiv(548,864, 2,048 x 1,024) = 2,048
    assert json.loads(out)["block_size"] == 2048
    code, out, _ = run([*base, "--mamba-chunk-size", "256"])
    # c = lcm(256, 16) = 256; P = 256 x cdiv(548,864, 256 x 1,024) = 768.
    assert json.loads(out)["block_size"] == 256 * -(-548_864 // (256 * 1024)) == 768
    code, _, err = run([*base, "--mamba-chunk-size", "0"])
    assert code == 2 and err == ("python -m flatkv: error: --mamba-chunk-size 0 must be "
                                 "positive: give 1 or more, or leave it unset for the model's "
                                 "own (its config's chunk)\n")
    code, out, _ = run([*base, "--mamba-chunk-size", "48"])
    # c = lcm(48, 16) = 48; P = 48 x cdiv(548,864, 48 x 1,024) = 48 x 12 = 576.
    assert code == 0 and json.loads(out)["block_size"] == 576


def test_mode_all_log_lines_are_said_to_be_vllm_031s():
    # Nemotron-H keeps mode all in vLLM 0.31, the last release with it: the heading names the
    # release, the lines are its (its deprecation and model runner warnings first, no line of
    # blocks fit after warm-up), and the note under them says how its memory line reads
    code, out, _ = run(["plan", "--preset", "Nemotron-H-8B", "--strategy", "vllm", "--budget",
                        "40GiB", "--mamba-cache-mode", "all"])
    assert code == 0
    log = out[out.index("vLLM's start-up log"):].splitlines()
    assert log[:3] == [
        "vLLM's start-up log at these settings (vLLM 0.31's words, the last release with mamba "
        "cache mode all):",
        "  Mamba cache mode 'all' is deprecated and will be removed in an upcoming release. If "
        "this is a problem, please open an issue at https://github.com/vllm-project/vllm/issues.",
        "  Model Runner V2 does not yet support mamba cache mode 'all'; using the V1 model "
        "runner instead."]
    assert not any(line.startswith("  Memory after warmup") for line in log)
    assert ("  (vLLM 0.31 sizes its cache by the Available line: it logs no Memory after warmup "
            "line (0.34's))") in log
    # in align the lines are a current release's, with 0.34's warm-up line
    code, out, _ = run(["plan", "--preset", "Nemotron-H-8B", "--strategy", "vllm", "--budget",
                        "40GiB", "--mamba-cache-mode", "align"])
    assert ("vLLM's start-up log at these settings (vLLM 0.34's words, a current release; "
            "mamba cache mode "
            "align):") in out and "  Memory after warmup: ... " in out
    # Qwen3-Next asked for mode all runs 0.31's align: the heading says the mode it ran in
    code, out, _ = run(["plan", "--preset", "Qwen3-Next-80B-A3B", "--strategy", "vllm",
                        "--budget", "40GiB", "--mamba-cache-mode", "all"])
    assert ("vLLM's start-up log at these settings (vLLM 0.31's words, the last release with "
            "mamba cache mode all; mamba cache mode align):") in out


def test_every_strategy_option_has_a_command_line_option_of_its_name():
    # options_from_args matches by name and skips what it does not find: a renamed option
    # would fall back to its default without a word, so every field must have its option
    from dataclasses import fields

    from flatkv.cli import build_parser
    from flatkv.strategies import StrategyOptions

    parser = build_parser()
    for command in ("plan", "compare"):
        args = parser.parse_args([command, "--preset", "Llama-3.1-8B", "--budget", "1GB"])
        missing = [f.name for f in fields(StrategyOptions) if not hasattr(args, f.name)]
        # ... but the one --gpu-memory's preset sets, as the app's GPU pick does
        # (test_the_gpu_preset_sets_its_compute_capability)
        assert missing == ["gpu_compute_capability"], (command, missing)


@pytest.mark.parametrize(("gpu", "capability"), [
    ("H100 80GB", (9, 0)), ("H200 141GB", (9, 0)), ("B200 192GB", (10, 0)),
    ("A100 80GB", (8, 0)), ("a100 40gb", (8, 0)), ("L40S 48GB", (8, 9)),
    ("RTX 4090 24GB", (8, 9)), ("80GB", None)])
def test_the_gpu_preset_sets_its_compute_capability(gpu, capability):
    # Ampere's A100 is SM 8.0, Ada's L40S and RTX 4090 8.9, Hopper's H100 and H200 9.0,
    # Blackwell's B200 10.0 (NVIDIA's CUDA GPU table); a size names no GPU: None, as before
    # the options knew one (a preset in any case, as --gpu-memory reads it)
    from flatkv.cli import build_parser
    from flatkv.strategy_cli import figures_options

    args = build_parser().parse_args(["compare", "--preset", "DeepSeek-V3", "--gpu-memory", gpu])
    assert figures_options(args).gpu_compute_capability == capability


def test_request_context_says_where_the_context_came_from():
    import argparse

    from flatkv.strategy_cli import RequestContext, _tokens_argument

    context = _tokens_argument("--context")  # --context's argparse type: what from_args reads
    untyped = RequestContext.from_args(argparse.Namespace(context=None), 131_072)
    assert (untyped.tokens, untyped.typed) == (131_072, False)
    assert untyped.notes() == ("note: context 131,072 tokens, the model's max_model_len (vLLM's "
                               "default --max-model-len); --context sets another",)
    # an error about that default says so; one about anything else is left as it is
    assert untyped.explain("one request of 131,072 tokens needs 17 GiB") == (
        "one request of 131,072 tokens needs 17 GiB (context 131,072 tokens, the model's "
        "max_model_len (vLLM's default --max-model-len); --context sets another)")
    assert untyped.explain("budget too small") == "budget too small"
    typed = RequestContext.from_args(argparse.Namespace(context=context("128K")), 131_072)
    assert (typed.tokens, typed.notes()) == (131_072, ())
    assert typed.explain("one request of 131,072 tokens") == "one request of 131,072 tokens"
    past = RequestContext.from_args(argparse.Namespace(context=context("131073")), 131_072)
    assert past.tokens == 131_073 and past.notes()[0].startswith(
        "note: the context is past this model's 131,072 tokens: vLLM refuses")
    unknown = RequestContext.from_args(argparse.Namespace(context=None), None)
    assert unknown.tokens is None and unknown.notes() == (
        "note: no --context, and the model gives no max_model_len: no concurrency is counted; "
        "--context N counts requests of N tokens",)


def test_compare_over_contexts_gives_each_layouts_concurrency_at_each_length():
    # Llama-3.1-8B in 10 GB: 131,072 B a token, 4,768 blocks of 16 tokens (76,288 tokens), to
    # its max_model_len of 131,072 from 1,024 and the typed 100,000
    argv = ["compare", "--preset", "Llama-3.1-8B", "--budget", "10000000000", "--context",
            "100000", "--over-contexts"]
    code, out, err = run(argv)
    assert code == 0, err
    lines = out.splitlines()
    start = lines.index("concurrency over context lengths, at this budget:")
    assert lines[start + 1].split() == ["context", "(tokens)", "flat", "per-component", "vllm",
                                        "sglang", "lcm"]  # aliasing applies at no length
    rows = {line.split()[0]: line.split()[1:] for line in lines[start + 3:]}
    assert list(rows) == [f"{1 << k:,}" for k in range(10, 17)] + ["100,000", "131,072"]
    # FlatKV's 76,288 tokens over a request's length; vLLM's 4,768 blocks over 4,096 a request
    # at 65,536 tokens, and none at 100,000 (it refuses to start: a dash)
    assert rows["1,024"][0] == f"{76_288 / 1024:.2f}x" == "74.50x"
    assert rows["65,536"][2] == "1.16x" and rows["100,000"][2] == "-"
    code, out, err = run([*argv, "--json"])
    by_name = {r["strategy"]: r for r in json.loads(out)}
    flat = by_name["flat"]["concurrency_over_contexts"]
    # 76,288 / 1,024 = 149 / 2 in lowest terms
    assert flat[0] == {"context_tokens": 1024, "max_concurrency": 74.5,
                       "max_concurrency_exact": [149, 2]}
    assert by_name["vllm"]["concurrency_over_contexts"][-2] == {
        "context_tokens": 100_000, "max_concurrency": None, "max_concurrency_exact": None}
    assert {d["max_concurrency"] for d in by_name["aliased"]["concurrency_over_contexts"]} == {
        None}
    # raw bytes without --context: one line, exit 2
    code, out, err = run(["compare", *QWEN_ARGS, "--budget", "1GiB", "--over-contexts"])
    assert code == 2 and err.strip().endswith(
        "--over-contexts counts requests of a context: give --context (the model gives no "
        "max_model_len)")


def test_compare_gives_each_layouts_budget_for_the_requests():
    # Llama 4 Scout, 8 requests of 131,072 tokens: vLLM needs 8 x (8,192 + 3 x 1,024) blocks of
    # 786,432 B (tests/test_sizing.py derives it); aliasing does not apply to Scout's groups
    argv = ["compare", "--preset", "Llama-4-Scout-17B-16E", "--budget", "60GiB", "--context",
            "131072", "--requests", "8"]
    code, out, err = run(argv)
    assert code == 0, err
    row = next(line for line in out.splitlines()
               if line.startswith("least budget for 8 requests (B)"))
    cells = row.removeprefix("least budget for 8 requests (B)").split()
    assert cells[STRATEGIES.index("vllm")] == f"{8 * 11_264 * 786_432:,}" == "70,866,960,384"
    assert cells[STRATEGIES.index("aliased")] == "n/a"
    code, out, err = run([*argv, "--json"])
    by_name = {r["strategy"]: r for r in json.loads(out)}
    assert by_name["vllm"]["least_budget_bytes"] == 70_866_960_384
    assert by_name["vllm"]["requests_to_hold"] == 8 and by_name["aliased"]["least_budget_bytes"] \
        is None
    # a model of unknown length with no --context: one line, exit 2
    code, out, err = run(["compare", *QWEN_ARGS, "--budget", "1GiB", "--requests", "2"])
    assert code == 2 and err.strip().endswith(
        "--requests 2 counts requests of a context: give --context (the model gives no "
        "max_model_len)")
    # a layout that does not apply at the given budget still has a budget that holds them
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "1GiB",
                          "--context", "128K", "--requests", "8"])
    row = next(line for line in out.splitlines()
               if line.startswith("least budget for 8 requests (B)"))
    assert row.split()[4 + STRATEGIES.index("vllm")] == f"{128 * 2**30:,}"  # 8 x 16 GiB
    code, out, err = run(["compare", *QWEN_ARGS, "--budget", "1GiB", "--requests", "0"])
    assert code == 2 and "0 must be positive" in err
    # 2**27 requests of 16 GiB need 2**61 B, past the most a plan takes: "none", said under
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "1GiB",
                          "--context", "128K", "--requests", str(2**27)])
    row = next(line for line in out.splitlines() if line.startswith("least budget for"))
    # vLLM does not start at 1 GiB but would at a larger budget: none holds them, as for the
    # others; aliasing plans no such model (one cache group) at any budget: n/a
    assert row.split()[-len(STRATEGIES):] == [
        "n/a" if s == "aliased" else "none" for s in STRATEGIES]
    assert ("none in the least budget row: no budget up to 1,152,921,504,606,846,976 B (1 EiB, "
            "the most a plan takes) holds 134,217,728 requests in that layout (n/a: a layout "
            "that plans no such model at any budget)") in out


def test_compare_says_n_a_where_the_options_keep_a_layout_from_starting_at_any_budget():
    # vLLM's hybrid manager off on Qwen3-Next's state layers: no budget starts it
    code, out, _ = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                        "--no-vllm-hybrid-manager", "--requests", "3"])
    row = next(line for line in out.splitlines() if line.startswith("least budget for"))
    cells = row.removeprefix("least budget for 3 requests (B)").split()
    assert (cells[STRATEGIES.index("vllm")], cells[STRATEGIES.index("aliased")]) == ("n/a",
                                                                                      "n/a")
    assert "none in the least budget row" not in out


def test_compare_says_where_sglangs_figures_leave_speculative_decoding_out():
    # Qwen3-Next's drafted tokens are modelled (no note); a state model beside a sliding-window
    # pool's are not, as its JSON's formulas say
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--context", "262144",
                        "--speculative-tokens", "2"])
    assert code == 0
    assert "not modelled for SGLang" not in out
    code, out, _ = run(["compare", "--layers", "sliding_attention,full_attention,"
                        "linear_attention", "--kv-bytes-per-slot", "2048", "--sliding-window",
                        "128", "--state", "conv=4096,ssm=8192", "--budget", "1GiB", "--context",
                        "4096", "--speculative-tokens", "2"])
    assert code == 0, out
    assert "sglang: speculative tokens: not modelled for SGLang on this model, whose figures " \
        "here are without speculative decoding" in out


def test_raw_bytes_give_sliding_layers_their_own_size():
    # --sliding-kv-bytes-per-slot: Gemma 4's shape, 50 sliding layers of 16 KiB a token and 10
    # full ones of 8,192 B; packed slabs hold 50 x 16 x 16,384 + 10 x 16 x 8,192 B a block
    gemma = ["--layers", "(5*sliding,full)*10", "--kv-bytes-per-slot", "8192",
             "--sliding-kv-bytes-per-slot", "16KiB", "--sliding-window", "1024"]
    code, out, err = run(["compare", *gemma, "--budget", "40GiB", "--context", "128K"])
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("block bytes"))
    assert row.split()[2:4] == ["14,417,920", "14,417,920"]
    # vLLM pages the full layers by 32 tokens, its sliding ones by 16, every page 262,144 B
    assert row.split()[4] == f"{10 * 16 * 16_384:,}"
    assert "full attention's block is 16 x 2 = 32 tokens" in run(
        ["plan", *gemma, "--strategy", "vllm", "--budget", "40GiB", "--context", "128K"])[1]
    # without sliding layers, or beside a model, one line and exit 2
    code, out, err = run(["compare", "--layers", "full*4", "--kv-bytes-per-slot", "8192",
                          "--sliding-kv-bytes-per-slot", "16384", "--budget", "1GiB"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--sliding-kv-bytes-per-slot is 16384 but layer_types has no sliding_attention " \
        "layer" in err
    code, out, err = run(["compare", "--preset", "gpt-oss-20b",
                          "--sliding-kv-bytes-per-slot", "16384", "--budget", "1GiB"])
    assert code == 2 and "raw bytes (--sliding-kv-bytes-per-slot), not both" in err
    # 0 or a negative size: the way out is to drop the option, not "0 or more"
    for size, said in (("0", "--sliding-kv-bytes-per-slot '0' must be positive: "),
                       ("-5", "--sliding-kv-bytes-per-slot '-5' is negative: ")):
        code, out, err = run(["compare", *gemma[:4], "--sliding-kv-bytes-per-slot", size,
                              "--sliding-window", "1024", "--budget", "1GiB"])
        assert code == 2 and err.strip() == (
            f"python -m flatkv: error: {said}give the sliding layers' bytes a token (1 or more), "
            "or drop --sliding-kv-bytes-per-slot where they keep --kv-bytes-per-slot's")
    # past 1 TiB a row (2TiB = 2,199,023,255,552 B): the flag's way out, where the profile's
    # bound gave its hint for a Python caller ("or None when sliding layers add
    # kv_bytes_per_slot too")
    code, out, err = run(["compare", *gemma[:4], "--sliding-kv-bytes-per-slot", "2TiB",
                          "--sliding-window", "1024", "--budget", "1GiB"])
    assert code == 2 and err.strip() == (
        "python -m flatkv: error: --sliding-kv-bytes-per-slot '2TiB' (2,199,023,255,552 B) is "
        "too large to be real: give 1,099,511,627,776 or less, or drop "
        "--sliding-kv-bytes-per-slot where sliding layers keep --kv-bytes-per-slot's")


def _qwen3_next_sglang(*extra: str) -> dict:
    """compare --json's SGLang result for Qwen3-Next-80B-A3B at 40 GiB and 32,768 tokens, with
    ``extra`` options."""
    code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                          "--context", "32768", "--json", *extra])
    assert code == 0, err
    return next(r for r in json.loads(out) if r["strategy"] == "sglang")


def test_compare_takes_sglangs_max_running_requests():
    # Qwen3-Next-80B-A3B at 40 GiB (tests/test_strategies.py's
    # test_sglang_told_max_running_requests_on_a_state_hybrid): 263 state slots, cap 262 // 5 =
    # 52, a pool of 920,754 tokens whatever is told; told 20, SGLang logs min(20, 460,377, 52)
    # = 20, under either spelling; untold, min(4,096, 460,377, 52) = 52
    for flag in ("--max-running-requests", "--sglang-max-running-requests"):
        told = _qwen3_next_sglang(flag, "20")
        assert (told["max_running_requests"], told["kv_tokens"], told["state_slots"]) == (
            20, 920_754, 263)
        assert told["running_requests_told"] is True
    assert _qwen3_next_sglang()["max_running_requests"] == 52
    code, out, err = run(["plan", "--strategy", "sglang", "--preset", "Qwen3-Next-80B-A3B",
                          "--budget", "40GiB", "--context", "32768", "--max-running-requests",
                          "20"])
    assert code == 0, err
    assert ("max_running_requests = min(--max-running-requests 20, T // 2, running cap) = "
            "min(20, 460,377, 52) = 20") in out


def test_compare_takes_sglangs_attention_dp_size():
    # Llama-3.1-8B at TP 8, 40 GiB, 32,768 tokens (tests/test_strategies.py's
    # test_sglang_attention_dp_runs_one_group_at_attention_tp): attention DP 8 runs TP 1, 8 KV
    # heads x 512 B x 32 layers = 131,072 B a token: 42,949,672,960 // 131,072 = 327,680
    # tokens, where TP 8 alone keeps one head a rank (2,621,440); either spelling
    def sglang(*extra: str) -> dict:
        code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--tp", "8", "--budget",
                              "40GiB", "--context", "32768", "--json", *extra])
        assert code == 0, err
        return next(r for r in json.loads(out) if r["strategy"] == "sglang")

    for flag in ("--attn-dp-size", "--sglang-attn-dp-size"):
        group = sglang(flag, "8", "--max-running-requests", "100")
        assert (group["kv_tokens"], group["logged_tokens"], group["max_running_requests"]) == (
            327_680, 327_680, 12)  # max(1, 100 // 8) a group
        assert group["formulas"][0].startswith("attention DP 8: 8 groups with pools of their "
                                               "own, each group runs attention and state "
                                               "layers over TP 8 / 8 = 1 ranks")
    assert sglang()["kv_tokens"] == 2_621_440
    assert sglang("--attn-dp-size", "2")["kv_tokens"] == 1_310_720
    # SGLang's older spelling, as a copied command line gives it (parallel_hook.py 39-62):
    # --dp-size 8 --enable-dp-attention is attention DP 8; --dp-size alone runs replicas of the
    # whole model (each at TP 8 alone); beside a told --attn-dp-size it adds nothing
    assert sglang("--enable-dp-attention", "--dp-size", "8")["kv_tokens"] == 327_680
    assert sglang("--dp-size", "8")["kv_tokens"] == 2_621_440
    assert sglang("--enable-dp-attention")["kv_tokens"] == 2_621_440
    assert sglang("--attn-dp-size", "2", "--enable-dp-attention", "--dp-size", "8"
                  )["kv_tokens"] == 1_310_720
    # where --dp-size counts replicas, a note says the figures are one replica's
    base = ["compare", "--preset", "Llama-3.1-8B", "--tp", "8", "--budget", "40GiB"]
    replicas = ("python -m flatkv: note: --dp-size 8 runs 8 replicas of the whole model in "
                "SGLang{}; the figures are one replica's, each of the 8 holds as many")
    for extra, beside in (
            (["--dp-size", "8"], ""),
            (["--attn-dp-size", "2", "--enable-dp-attention", "--dp-size", "8"],
             " (beside --attn-dp-size 2, SGLang reads --enable-dp-attention as adding nothing)")):
        code, _, err = run([*base, *extra])
        assert code == 0 and replicas.format(beside) in err.splitlines()
    code, _, err = run([*base, "--enable-dp-attention", "--dp-size", "8"])
    assert code == 0 and "replicas" not in err
    # the table's notes say the figures are one group's: 327,680 / 32,768 = 10 requests a
    # group, 8 x 10 = 80 in all, as TP 8 alone holds
    code, out, _ = run(["compare", "--preset", "Llama-3.1-8B", "--tp", "8", "--budget", "40GiB",
                        "--context", "32768", "--attn-dp-size", "8"])
    assert code == 0 and (
        "SGLang's figures are one of its 8 attention-DP groups' (a rank's pools, as it logs "
        "them): each group runs requests of its own, so the 8 hold 8 x 327,680 / 32,768 = 80.00 "
        "requests of 32,768 tokens at once in all; the other layouts' are the whole TP's, "
        "whose ranks share every request.") in out.splitlines()
    # D not dividing the TP: compare lists SGLang's refusal; 0 is bad input
    refused = sglang("--attn-dp-size", "3")
    assert refused["applies"] is False and refused["reason"].startswith(
        "SGLang refuses to start: attention DP 3 does not divide TP 8")
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--tp", "8", "--budget",
                          "40GiB", "--attn-dp-size", "0"])
    assert (code, out) == (2, "")
    assert err.strip() == ("python -m flatkv: error: --attn-dp-size 0 must be positive: "
                           "give 1 or more; SGLang's --attn-dp-size (a divisor of the TP), "
                           "or 1 without attention DP")
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--tp", "8", "--budget",
                          "40GiB", "--enable-dp-attention", "--dp-size", "0"])
    assert (code, out) == (2, "")
    assert err.strip() == ("python -m flatkv: error: --dp-size 0 must be positive: give 1 or "
                           "more; SGLang's --dp-size: with --enable-dp-attention the "
                           "attention DP size (a divisor of the TP), else the replicas of the "
                           "whole model")


def test_compare_takes_sglangs_max_mamba_cache_size():
    # Qwen3-Next-80B-A3B at 40 GiB told 100 slots (tests/test_strategies.py's
    # test_sglang_told_mamba_cache_size_fixes_the_state_slots): 101 slots, (42,949,672,960 -
    # 101 x 77,266,944) // 24,576 = 1,430,082 tokens, max_running_requests min(4,096, 715,041,
    # 100 // 5) = 20
    for flag in ("--max-mamba-cache-size", "--sglang-max-mamba-cache-size"):
        told = _qwen3_next_sglang(flag, "100")
        assert (told["state_slots"], told["kv_tokens"], told["max_running_requests"]) == (
            101, 1_430_082, 20)


def test_compare_takes_sglangs_disable_radix_cache():
    # Qwen3-Next-80B-A3B at 40 GiB (tests/test_strategies.py's
    # test_sglang_disable_radix_cache_on_qwen3_next): with the radix cache off a request holds
    # 1 state slot, so untold min(4,096, 460,377, 262 // 1) = 262 running over the same 263
    # slots and 920,754 tokens; told N = 64, 65 slots and (42,949,672,960 - 65 x 77,266,944)
    # // 24,576 = 1,543,266 tokens, under either spelling
    for flag in ("--disable-radix-cache", "--sglang-disable-radix-cache"):
        off = _qwen3_next_sglang(flag)
        assert (off["slots_per_request"], off["state_slots"], off["kv_tokens"],
                off["max_running_requests"]) == (1, 263, 920_754, 262)
        told = _qwen3_next_sglang(flag, "--max-running-requests", "64")
        assert (told["state_slots"], told["kv_tokens"], told["max_running_requests"]) == (
            65, 1_543_266, 64)
        assert told["state_from_running_requests"] is True
    on = _qwen3_next_sglang("--max-running-requests", "64")
    assert (on["state_slots"], on["kv_tokens"], on["max_running_requests"]) == (263, 920_754, 52)
    # gpt-oss-20b told N = 64: its swa pool the request cap, (127 + 128 + 1 + 1) x 64 + 2 x
    # 8,192 + 1 = 32,833 tokens, the full pool the rest, 1,714,793
    code, out, err = run(["plan", "--strategy", "sglang", "--preset", "gpt-oss-20b", "--budget",
                          "40GiB", "--context", "32768", "--disable-radix-cache",
                          "--max-running-requests", "64"])
    assert code == 0, err
    assert ("swa tokens = SGLang's SWA request cap (--disable-radix-cache, max_running_requests "
            "N = 64 set: SWARequestCapPoolConfigurator, not r_swa) = (W + 128 x D + P + decode) "
            "x N + 2 x chunked prefill + P = (127 + 128 x 1 + 1 + 1) x 64 + 2 x 8,192 + 1 = "
            "32,833 (decode: a page; 2 prefill chunks in flight with overlap scheduling); "
            "32,833") in out
    assert "#tokens: 1714793" in out and "Use sliding window memory pool" not in out


def test_compare_takes_sglangs_mamba_radix_cache_strategy():
    # Qwen3-Next-80B-A3B at 40 GiB, 32,768 tokens: extra_buffer_lazy holds 3 + 1 state slots a
    # request (SGLang's get_mamba_tracking_slots(lazy=True) = 1), so the same 263 slots (262 for
    # requests) and 920,754 tokens run 262 // 4 = 65 requests, not 262 // 5 = 52; under
    # either spelling, as SGLang's command line writes it
    auto = _qwen3_next_sglang()
    assert (auto["slots_per_request"], auto["max_running_requests"]) == (5, 52)
    for flag in ("--mamba-radix-cache-strategy", "--sglang-mamba-radix-cache-strategy"):
        lazy = _qwen3_next_sglang(flag, "extra_buffer_lazy")
        assert (lazy["slots_per_request"], lazy["state_slots"], lazy["kv_tokens"],
                lazy["max_running_requests"]) == (4, 263, 920_754, 65)
    def compare(preset: str, *flags: str) -> tuple[str, str]:
        code, out, err = run(["compare", "--preset", preset, "--budget", "40GiB",
                              "--mamba-radix-cache-strategy", *flags])
        assert code == 0, err
        return out, err

    # SGLang refuses it without overlap scheduling; with its radix cache off it reads none
    out, _ = compare("Qwen3-Next-80B-A3B", "extra_buffer_lazy", "--no-sglang-overlap-schedule")
    assert ("sglang refuses to start: --mamba-radix-cache-strategy extra_buffer_lazy needs "
            "overlap scheduling") in out
    _, err = compare("Qwen3-Next-80B-A3B", "extra_buffer_lazy", "--disable-radix-cache")
    assert ("note: --sglang-mamba-radix-cache-strategy changes no figure here: SGLang's radix "
            "cache is off, so it reads no mamba radix cache strategy") in err
    # on Llama SGLang refuses it ("needs mamba state"): no note says it changes nothing
    out, err = compare("Llama-3.1-8B", "extra_buffer_lazy")
    assert "needs mamba state, got LlamaForCausalLM" in out
    assert "radix-cache-strategy changes no figure" not in err
    # extra_buffer told without overlap scheduling at page 1: 3 + 1 slots, 262 // 4 = 65, where
    # auto runs no_buffer's 3, 262 // 3 = 87 (and no_buffer told too); no_buffer told with
    # overlap scheduling on is refused, as SGLang refuses it
    off = ("--no-sglang-overlap-schedule",)
    for strategy, slots, running in (("auto", 3, 262 // 3), ("extra_buffer", 4, 262 // 4),
                                     ("no_buffer", 3, 262 // 3)):
        told = _qwen3_next_sglang(*off, "--mamba-radix-cache-strategy", strategy)
        assert (told["slots_per_request"], told["state_slots"], told["kv_tokens"],
                told["max_running_requests"]) == (slots, 263, 920_754, running)
    out, _ = compare("Qwen3-Next-80B-A3B", "no_buffer")
    assert ("sglang refuses to start: its no_buffer radix cache "
            "(--mamba-radix-cache-strategy no_buffer) runs without overlap scheduling only") in out
    # no_buffer on Llama: SGLang reads it not at all (no mamba radix cache)
    _, err = compare("Llama-3.1-8B", "no_buffer")
    assert ("note: --sglang-mamba-radix-cache-strategy changes no figure here: SGLang keeps no "
            "mamba radix cache for this model, so it does not read a told no_buffer") in err
    # a value SGLang has not: said, exit 2
    code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                          "--mamba-radix-cache-strategy", "lazy"])
    assert code == 2 and not out
    assert err.endswith("--mamba-radix-cache-strategy 'lazy' is not one of auto, no_buffer, "
                        "extra_buffer, extra_buffer_lazy\n")


def test_chunked_prefill_off_as_sglangs_command_line_writes_it():
    # gpt-oss-20b at 40 GiB, 32,768 tokens (tests/test_strategies.py's
    # test_sglang_chunked_prefill_off_holds_a_whole_prompt_in_the_sliding_pool): SGLang's
    # --chunked-prefill-size -1 turns chunked prefill off, and it reads 0 (or any value <= 0)
    # the same (scheduler.py 1372-1373): a request holds its whole prompt (at most 32,767
    # tokens) in the sliding pool, admitted with a token more reserved, (776,722 - 1 - 1) /
    # 32,767 = 23.70, where the 8,192 chunk leaves the full pool binding at 970,903 / 32,768 =
    # 29.63
    def sglang(*more):
        code, out, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "40GiB",
                              "--context", "32768", "--json", *more])
        assert code == 0, err
        return next(r for r in json.loads(out) if r["strategy"] == "sglang")

    assert sglang()["max_concurrency"] == pytest.approx(970_903 / 32_768)
    # ... and with underscores between digits, as its flag's int() reads them: -1_000 is -1000
    # (it was refused, "give a positive number of tokens"), 0_000 is 0
    for more in (("--chunked-prefill-size", "-1"), ("--chunked-prefill-size=0",),
                 ("--sglang-chunked-prefill-size", "-1"), ("--chunked-prefill-size", "-8"),
                 ("--sglang-chunked-prefill-size=-1_000",), ("--chunked-prefill-size", "0_000")):
        off = sglang(*more)
        assert off["max_concurrency"] == pytest.approx(776_720 / 32_767), more
        assert off["binding_limit"] == "swa tokens"
    # with --disable-radix-cache and N = 64 the request cap would size the sliding pool
    # (32,833 tokens); off, the ratio does (776,722), and --swa-full-tokens-ratio acts again
    assert sglang("--disable-radix-cache", "--max-running-requests", "64")["swa_tokens"] == 32_833
    assert sglang("--disable-radix-cache", "--max-running-requests", "64",
                  "--chunked-prefill-size", "-1")["swa_tokens"] == 776_722
    code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "40GiB",
                        "--disable-radix-cache", "--max-running-requests", "64",
                        "--chunked-prefill-size", "-1"])
    assert code == 0 and RADIX_OFF_UNCHUNKED_NOTE in err.splitlines()
    # what is no whole number of tokens nor a whole number <= 0 is refused, saying -1 is off
    code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "40GiB",
                        "--chunked-prefill-size", "-1.5"])
    assert code == 2 and ("error: --chunked-prefill-size '-1.5' must be positive: give 1 "
                          "or more tokens; or -1 (any whole number 0 or less, as SGLang "
                          "reads it, or off) for chunked prefill off") in err
    # off, as a link writes it, is -1 too: the ratio's 776,722, not the cap's 32,833
    assert sglang("--disable-radix-cache", "--max-running-requests", "64",
                  "--chunked-prefill-size", "off")["swa_tokens"] == 776_722


def _breakdown_lines(preset: str, budget: str) -> list[str]:
    """The breakdown lines of ``plan --strategy vllm`` for ``preset`` at ``budget``."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["plan", "--preset", preset, "--budget", budget, "--strategy",
                     "vllm"]) == 0
    return out.getvalue().split("  breakdown\n")[1].split("  math\n")[0].splitlines()


def _shares(lines: list[str]) -> dict[str, str]:
    """A breakdown line's category (the app's words: "kv history in use") -> its share: the words
    before its bytes, "B" and share."""
    return {" ".join(line.split()[:-3]): line.split()[-1] for line in lines}


def test_plan_breakdown_shares_sum_to_the_budget():
    # Falcon-H1-7B under vLLM at 17 GiB: rounded one by one its shares summed to 100.01%
    part = _breakdown_lines("Falcon-H1-7B", "17GiB")
    shares = _shares(part)
    assert shares["kv history in use"] == "99.08%" and shares["state in use"] == "0.77%"
    assert shares["state page padding"] == "0.01%" and shares["unused"] == "0.14%"
    assert sum(int(s[:-1].replace(".", "")) for k, s in shares.items() if k != "total") == 10_000


def test_sglang_mamba_track_interval_flag_takes_a_page_it_divides():
    # SGLang's --mamba-track-interval (256 by default) must be a multiple of --page-size: at
    # 512 pages of 512 start, as SGLang starts them; 384 does not divide 512
    qwen = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB", "--json"]

    def sglang(*extra):
        code, out, _ = run([*qwen, *extra])
        assert code == 0
        return next(r for r in json.loads(out) if r["strategy"] == "sglang")
    refused = sglang("--sglang-page-size", "512")
    assert not refused["applies"] and refused["reason"].endswith(
        "set a page size that divides 256 (1, 2, 4, ..., 256), or --mamba-track-interval 512")
    told = sglang("--sglang-page-size", "512", "--mamba-track-interval", "512")
    assert told["applies"]
    # the interval sizes no pool: the tokens of pages of 256 at 256, in whole pages of 512
    at_256 = sglang("--sglang-page-size", "256")
    assert told["logged_tokens"] == at_256["logged_tokens"] // 512 * 512
    r = sglang("--sglang-page-size", "384", "--sglang-mamba-track-interval", "512",
               "--chunked-prefill-size", "8448")
    assert r["reason"] == (
        "SGLang refuses to start: "
        "its extra_buffer radix cache snapshots Qwen3NextForCausalLM's state every 512 "
        "tokens (--mamba-track-interval 512), which the page size must divide: 384 does not; "
        "set a page size that divides 512 (1, 2, 4, ..., 512), or --mamba-track-interval 768")


def test_plan_breakdown_tells_nearly_all_of_the_budget_from_all_of_it():
    # Llama-3.1-8B under vLLM at 80 GB: 32 layers x 16 x 4,096 B = 2,097,152 B a block id,
    # 80e9 // 2,097,152 = 38,146 of them, 79,997,960,192 B (99.99745%) of KV beside 2,039,808 B
    # (0.00255%) unused, which two decimals read 100.00% and 0.00%; with three, 99.997% and
    # 0.003% (the units the cuts lose to the larger remainder, .55 over .45), the rows alike
    part = _breakdown_lines("Llama-3.1-8B", "80GB")
    shares = _shares(part)
    assert (shares["kv history in use"], shares["unused"], shares["state in use"],
            shares["total"]) == (
        "99.997%", "0.003%", "0.000%", "100.000%")
    assert part[0].endswith("B   99.997%") and part[-1].endswith("B  100.000%")  # aligned


def test_sglang_slots_per_request_past_the_state_pool_groups_its_counts():
    # "fewer than 1001: one running request needs 1000" printed the two counts bare beside
    # grouped ones; Qwen3-Next at 80 GB, S = 1,000: the pool's 37,894,736,842 B hold
    # 37,894,736,842 // 77,266,944 = 490 slots, fewer than 1,000 + 1 (one for padding)
    assert 37_894_736_842 // 77_266_944 == 490
    code, out, err = run(["plan", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                          "--strategy", "sglang", "--sglang-slots-per-request", "1000"])
    assert code == 2 and out == "" and err == (
        "python -m flatkv: error: --strategy sglang: SGLang refuses to start: "
        "the state pool "
        "(37,894,736,842 B) holds 490 slots of 77,266,944 B, fewer than 1,001: one running "
        "request needs 1,000 and one is kept for padding; a budget of 163,282,223,104 B or "
        "more holds them, or SGLang slots per request (--sglang-slots-per-request) of 489, the "
        "most this state pool holds\n")


def test_compare_takes_sglangs_kv_cache_dtype_told_bfloat16_on_a_blackwell():
    # DeepSeek-V3.2 on the B200: SGLang's auto keeps its DSA cache raw in fp8, 61 x (576 + 132)
    # = 43,188 B a token; --sglang-kv-cache-dtype bfloat16 (and SGLang's bf16) keeps 61 x
    # (1,152 + 132) = 78,324 B, as on a Hopper: 192,265,846,784 B x 0.9 = 173,039,262,105 B
    # holds 173,039,262,105 // 78,324 = 2,209,275 tokens, 2,209,216 in pages of 64
    budget = 173_039_262_105
    assert budget // (61 * 1_284) // 64 * 64 == 2_209_216
    assert budget // (61 * 708) // 64 * 64 == 4_006_592

    def sglang(*flags: str) -> tuple[int, str]:
        code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", *flags, "--json"])
        assert code == 0, err
        (result,) = [r for r in json.loads(out) if r["strategy"] == "sglang"]
        return result["capacity_tokens"], err

    b200 = ("--gpu-memory", "B200 192GB")
    assert sglang(*b200)[0] == 4_006_592
    for told in ("bfloat16", "bf16"):
        tokens, err = sglang(*b200, "--sglang-kv-cache-dtype", told)
        assert tokens == 2_209_216
        assert ("note: SGLang 0.5.23 on a B200 told --kv-cache-dtype bfloat16 keeps DeepSeek's "
                "sparse attention in bfloat16, 1,152 + 132 = 1,284 B a token a layer, as on a "
                "Hopper: these figures are that layout's") in err
    # on an H100 SGLang's auto keeps bfloat16 too: the flag changes nothing, and says so
    tokens, err = sglang("--gpu-memory", "H100 80GB", "--sglang-kv-cache-dtype", "bfloat16")
    assert tokens == sglang("--gpu-memory", "H100 80GB")[0]
    assert ("note: --sglang-kv-cache-dtype changes no figure here: SGLang keeps DeepSeek's "
            "sparse attention in bfloat16 off a Blackwell GPU, told bfloat16 or not (its auto "
            "picks bfloat16 below compute capability 10)") in err
    # its fp8 values are the KV dtype itself; another value is not SGLang's: exit 2, one line
    for value, said in (("fp8_e4m3", "'fp8_e4m3' is the KV dtype itself, which SGLang is told "
                         "as it is: give --kv-dtype fp8_e4m3 (and auto or bfloat16 here, which "
                         "tell bfloat16 apart from SGLang's auto)"),
                        ("fp8_e5m2", "'fp8_e5m2' is the KV dtype itself, which SGLang is told "
                         "as it is: give --kv-dtype fp8_e5m2, or fp8_e4m3 or bfloat16 for "
                         "DeepSeek's sparse attention, which SGLang refuses in fp8_e5m2 (and "
                         "auto or bfloat16 here, which tell bfloat16 apart from SGLang's auto)"),
                        ("float16", "'float16' is not one of auto, bfloat16")):
        code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", *b200,
                              "--sglang-kv-cache-dtype", value])
        assert code == 2 and not out and err.count("\n") == 1
        assert err.endswith(f"--sglang-kv-cache-dtype {said}\n")
    # the KV dtype fp8_e5m2 SGLang refuses for DeepSeek's sparse attention, on any GPU
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", *b200, "--kv-dtype",
                          "fp8_e5m2"])
    assert code == 0, err
    assert ("sglang refuses to start: DeepSeek's sparse attention in the KV dtype "
            "float8_e5m2 (--kv-cache-dtype fp8_e5m2) is refused by 0.5.23: ") in out


def test_compare_text_names_its_figures_in_the_apps_words():
    # The text said "max concurrency" and kv_history, dead_weight, ... where Compare's tables
    # say "concurrency" and "kv history", "dead weight" for the same figures: a row of the text
    # is the app's column (headline_rows) or its category (budget_by_category_rows), word for
    # word. The JSON keeps the code's keys, which users parse.
    from strategy_profiles import ANCHOR_CONTEXT, qwen3_next_tp2

    from flatkv.strategies import compare
    from flatkv.strategy_notes import BUDGET_GOES, budget_by_category_rows, headline_rows

    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", str(ANCHOR_BUDGET), "--context",
                        str(ANCHOR_CONTEXT)])
    assert code == 0
    lines = out.splitlines()
    width = len(lines[2].split()[0])  # the rule under the header: the label column's dashes
    labels = [line[:width].rstrip() for line in lines[3:]]
    labels = labels[:labels.index("unused") + 1]  # the table's rows; its notes follow
    results = compare(qwen3_next_tp2(), budget_bytes=ANCHOR_BUDGET,
                      context_tokens=ANCHOR_CONTEXT)
    categories = [row[BUDGET_GOES] for row in budget_by_category_rows(results)]
    assert categories == ["kv history in use", "state in use", "row padding", "state page padding",
                          "padding layers", "dead weight", "idle pool", "unused"]
    assert labels[-len(categories):] == categories
    assert "concurrency" in headline_rows(results, True)[0] and "concurrency" in labels
    assert not any("_" in label or label.startswith("max ") for label in labels)
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", str(ANCHOR_BUDGET), "--context",
                        str(ANCHOR_CONTEXT), "--json"])
    assert code == 0 and all("max_concurrency" in r for r in json.loads(out))
    assert all("kv_history" in r["breakdown"] for r in json.loads(out) if r["applies"])


def test_plan_strategy_words_a_refusal_as_compare_does():
    # Llama-3.1-8B at TP 8, attention DP 3: SGLang would not start (3 does not divide 8, whose
    # divisors are 1, 2, 4 and 8). plan --strategy read "--strategy sglang does not apply:
    # SGLang refuses to start: ..."; now the refusal as compare's note says it, its opening
    # kept so the engine, not the flag, refuses. One line, exit 2.
    args = ["--preset", "Llama-3.1-8B", "--tp", "8", "--attn-dp-size", "3", "--budget", "80GB"]
    why = ("attention DP 3 does not divide TP 8 (\"tp_size must be divisible by attn_dp_size * "
           "attn_cp_size\"): give an attention DP size that divides the TP (1, 2, 4 or 8)")
    code, out, err = run(["plan", *args, "--strategy", "sglang"])
    assert (code, out) == (2, "")
    assert err == f"python -m flatkv: error: --strategy sglang: SGLang refuses to start: {why}\n"
    code, out, _ = run(["compare", *args])
    assert code == 0 and f"\nsglang refuses to start: {why}\n" in out
    # a model SGLang does not serve is no refusal: "does not apply", as compare says it
    code, out, err = run(["plan", "--preset", "Jamba-1.5-Mini", "--budget", "80GB",
                          "--strategy", "sglang"])
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith("python -m flatkv: error: --strategy sglang does not apply: SGLang has "
                          "no Jamba model (")
    code, out, _ = run(["compare", "--preset", "Jamba-1.5-Mini", "--budget", "80GB"])
    assert code == 0 and "\nsglang does not apply: SGLang has no Jamba model (" in out


# DeepSeek-V3.2's MLA latent, 512 + 64 = 576 elements, and its indexer's 132 B of keys a token a
# layer: bfloat16 576 x 2 + 132 = 1,284 B (FlatKV's, vLLM's); SGLang's auto on a Blackwell, raw
# fp8, 576 + 132 = 708; float32 576 x 4 + 132 = 2,436
DSV32_APART = (
    "SGLang stores this model's KV in fp8_e4m3, 708 B a token a layer, where the other layouts "
    "keep the model's bfloat16, 1,284 B: its concurrency beside theirs is the dtype's bytes, "
    "not its layout's. Like for like: --sglang-kv-cache-dtype bf16 keeps SGLang in bfloat16 "
    "too, 1,284 B, or --kv-dtype fp8_e4m3 puts every layout in fp8_e4m3.")


def test_compare_marks_sglangs_other_kv_dtype_and_says_how_to_compare_like_for_like():
    # the B200: SGLang's 24.45x (4,006,592 / 163,840 tokens) beside FlatKV's 13.48x
    # (2,209,264 / 163,840) is fp8_e4m3's 708 B to bfloat16's 1,284 (the budget's tokens,
    # test above): a kv dtype row under the concurrency, and the line among the notes
    assert 576 * 2 + 132 == 1_284 and 576 + 132 == 708 and 576 * 4 + 132 == 2_436
    assert (f"{4_006_592 / 163_840:.2f}", f"{2_209_264 / 163_840:.2f}") == ("24.45", "13.48")
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "B200 192GB"])
    assert code == 0, err
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("concurrency"))
    assert lines[i].split() == ["concurrency", "13.48x", "13.48x", "13.48x", "24.45x", "n/a",
                                "13.48x"]
    assert lines[i + 1].split() == ["kv", "dtype", "bfloat16", "bfloat16", "bfloat16",
                                    "fp8_e4m3", "n/a", "bfloat16"]
    assert DSV32_APART in lines
    # told bfloat16, SGLang keeps 1,284 B as the others (13.48x): no row, no line
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "B200 192GB",
                          "--sglang-kv-cache-dtype", "bf16"])
    assert code == 0 and "kv dtype" not in out and "SGLang stores" not in out
    # an fp8 model: SGLang is told fp8_e4m3 (its raw 708 B, vLLM's layout 656 + 132 = 788):
    # one dtype, the bytes a layout's, so nothing is marked
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "B200 192GB",
                          "--kv-dtype", "fp8_e4m3"])
    assert code == 0 and "kv dtype" not in out and "SGLang stores" not in out
    # float32 on an H100: SGLang keeps bfloat16, 1,284 B to 2,436, and cannot be told float32:
    # the model's KV dtype is the one way to like for like (vLLM serves no float32 DSA: n/a)
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "H100 80GB",
                          "--kv-dtype", "float32"])
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("kv dtype"))
    assert row.split() == ["kv", "dtype", "float32", "float32", "n/a", "bfloat16", "n/a",
                           "float32"]
    assert ("SGLang stores this model's KV in bfloat16, 1,284 B a token a layer, where the "
            "other layouts keep the model's float32, 2,436 B: its concurrency beside theirs is "
            "the dtype's bytes, not its layout's. Like for like: --kv-dtype bfloat16 puts every "
            "layout in bfloat16.") in out.splitlines()
    # float16 on an H100: SGLang's bfloat16 is float16's bytes, 1,284: nothing to mark
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "H100 80GB",
                          "--kv-dtype", "float16"])
    assert code == 0 and "kv dtype" not in out


def test_compare_offers_only_the_like_for_like_flags_the_model_takes(tmp_path):
    # DeepSeek-V3.2 exported as raw bytes (flatkv-profile/1): --kv-dtype refuses a profile file
    # (exit 2), so the line offers the one flag it takes, which puts SGLang back at 1,284 B
    from flatkv.presets import load_preset
    from flatkv.profile import profile_to_dict

    path = tmp_path / "dsv32_profile.json"
    path.write_text(json.dumps(profile_to_dict(load_preset("DeepSeek-V3.2").profile())))
    b200 = ["compare", "--model-file", str(path), "--gpu-memory", "B200 192GB"]
    code, out, err = run(b200)
    assert code == 0, err
    assert DSV32_APART.split(", or ")[0] + "." in out.splitlines()
    assert "--kv-dtype" not in out
    assert run([*b200, "--kv-dtype", "fp8_e4m3"])[0] == 2  # what it no longer offers
    code, out, err = run([*b200, "--sglang-kv-cache-dtype", "bf16"])
    assert code == 0 and "SGLang stores" not in out and "kv dtype" not in out
    # float16 on the B200: told bfloat16, SGLang keeps 576 x 2 + 132 = 1,284 B, float16's
    # bytes as much as bfloat16's (it said only --kv-dtype, the dtype names differing)
    f16 = ["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "B200 192GB",
           "--kv-dtype", "float16"]
    code, out, err = run(f16)
    assert code == 0, err
    assert ("SGLang stores this model's KV in fp8_e4m3, 708 B a token a layer, where the other "
            "layouts keep the model's float16, 1,284 B: its concurrency beside theirs is the "
            "dtype's bytes, not its layout's. Like for like: --sglang-kv-cache-dtype bf16 keeps "
            "SGLang in bfloat16, 1,284 B as float16's, or --kv-dtype fp8_e4m3 puts every "
            "layout in fp8_e4m3.") in out.splitlines()
    code, out, err = run([*f16, "--sglang-kv-cache-dtype", "bf16"])
    assert code == 0 and "SGLang stores" not in out and "kv dtype" not in out


def test_compare_json_gives_the_kv_dtype_each_layout_stores():
    # the table's kv dtype row, a layout at a time, in the model's dtype names: DeepSeek-V3.2
    # on the B200, SGLang's raw fp8 (aliasing does not apply: none); told bfloat16, bfloat16;
    # float16 on an H100, SGLang's bfloat16 (as many bytes, so the table marks nothing)
    def dtypes(*flags):
        code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", *flags, "--json"])
        assert code == 0, err
        return {d["strategy"]: d["kv_dtype"] for d in json.loads(out)}

    b200 = ("--gpu-memory", "B200 192GB")
    assert dtypes(*b200) == {"flat": "bfloat16", "per-component": "bfloat16",
                             "vllm": "bfloat16", "sglang": "float8_e4m3fn", "aliased": None,
                             "lcm": "bfloat16"}
    assert dtypes(*b200, "--sglang-kv-cache-dtype", "bf16")["sglang"] == "bfloat16"
    assert dtypes("--gpu-memory", "H100 80GB", "--kv-dtype", "float16") == {
        "flat": "float16", "per-component": "float16", "vllm": "float16",
        "sglang": "bfloat16", "aliased": None, "lcm": "float16"}


def test_compare_refuses_deepseek_v3_2_told_block_32_and_says_16_is_read_as_none():
    # DeepSeek-V3.2 told --block-size 32 (no GPU said: a Hopper's, whose sparse MLA backends
    # page by 64s): vLLM 0.34 finds no backend, where FlatKV ran P 64 (8,568 blocks, 548,352
    # tokens) with no word; at its default 16 (no block told, P 64) the math says a told 16 is
    # refused on a Hopper
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                          "--block-size", "32"])
    assert code == 0, err
    assert ("vllm refuses to start: its FlashMLA sparse backend (DeepSeek-V3.2's sparse MLA) "
            "pages by multiples of 64 tokens, and block size 32 is none (\"No valid attention "
            "backend found ... block_size not supported\"): give 64 (what it picks when not "
            "told)") in out.splitlines()
    code, out, err = run(["plan", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                          "--strategy", "vllm"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[lines.index("  math") + 1].startswith(
        "    block size 16 read as no --block-size told: vLLM then picks 64, FlashMLA sparse's "
        "(these figures); told --block-size 16, vLLM 0.34 refuses DeepSeek-V3.2's sparse MLA on "
        "a Hopper")
