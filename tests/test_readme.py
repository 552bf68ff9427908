"""The README's prose figures, derived again from the CLI's JSON.

The README's worked examples quote figures a reader will set beside an engine's log. Its CLI
examples print their own figures, but its prose does not: these figures drifted once, when
SGLang's state slots per request went from 3 to 5. Each test here runs the setting the README
names and checks that the README's sentence, built from the run's figures, is still in it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from flatkv.cli import main
from flatkv.presets import load_preset
from flatkv.strategies import StrategyOptions, run_strategy

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_text() -> str:
    """The README with every run of whitespace (line breaks included) as one space."""
    return re.sub(r"\s+", " ", README.read_text())


def compare(capsys, *args: str) -> dict[str, dict]:
    """``python -m flatkv compare ... --json``: each layout's result by its name."""
    assert main(["compare", *args, "--json"]) == 0
    return {r["strategy"]: r for r in json.loads(capsys.readouterr().out)}


def assert_in_readme(sentence: str) -> None:
    assert sentence in readme_text(), f"the README no longer says: {sentence}"


def test_sglangs_running_cap_over_lengths(capsys):
    # Qwen3-Next on an H200 with 80 GB of weights: the state pool's request slots cap SGLang's
    # requests at every short length, its KV tokens over L at the long ones
    results = compare(capsys, "--preset", "Qwen3-Next-80B-A3B", "--budget", "55679338086",
                      "--over-contexts")
    sglang, vllm = results["sglang"], results["vllm"]
    cap = sglang["running_request_cap"]
    assert cap == sglang["request_state_slots"] // sglang["slots_per_request"] == 340 // 5
    points = [(p["context_tokens"], p["max_concurrency"])
              for p in sglang["concurrency_over_contexts"]]
    capped = [length for length, held in points if held == cap]
    uncapped = [length for length, held in points if held < cap]
    assert max(capped) < min(uncapped)
    assert_in_readme(
        f"holds {cap} requests in SGLang at any length up to {max(capped):,} tokens, since its "
        f"state pool has {sglang['request_state_slots']} request slots and a request holds "
        f"{sglang['slots_per_request']}, and {sglang['kv_tokens']:,} / L from "
        f"{min(uncapped):,} on")
    by_length = {p["context_tokens"]: p["max_concurrency"]
                 for p in vllm["concurrency_over_contexts"]}
    assert_in_readme(f"vLLM holds {by_length[1024]:.2f} at 1,024 tokens and "
                     f"{by_length[262_144]:.2f} at 262,144")


def test_one_byte_more_can_hold_fewer_sglang_requests(capsys):
    args = ("--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--context", "20000")
    at = compare(capsys, *args, "--budget", "1386512383", "--requests", "3")["sglang"]
    more = compare(capsys, *args, "--budget", "1386512384")["sglang"]
    # by hand: slots of 36 x (24,576 + 1,048,576) = 38,633,472 B; floor(B x 9 / 19) is
    # 656,769,023 B at the first budget (16 slots: 15 // 5 = 3 running, KV (B - 16 slots) //
    # 12,288 = 62,530 tokens, 3.13 requests: 3 bind) and 656,769,024 = 17 slots a byte later
    # (16 // 5 = 3 running, KV (B - 17 slots) // 12,288 = 59,386 tokens: 2.9693 requests)
    assert (at["state_slots"], at["kv_tokens"], at["max_concurrency"]) == (16, 62_530, 3)
    assert (more["state_slots"], more["kv_tokens"], more["running_request_cap"]) == (
        17, 59_386, 3)
    assert more["max_concurrency"] == round(59_386 / 20_000, 4) == 2.9693
    assert_in_readme(f"1,386,512,383 B holds {at['max_concurrency']:.2f} requests of 20,000 "
                     f"tokens, 1,386,512,384 B {more['max_concurrency']:.2f})")
    assert_in_readme(f"least budget from which every larger one holds them "
                     f"({at['least_budget_bytes']:,} B there)")


def test_falcon_h1s_checkpoint_block_at_both_block_sizes(capsys):
    args = ("--preset", "Falcon-H1-7B", "--budget", "40GiB", "--context", "32768",
            "--mamba-cache-mode", "align", "--prefill-checkpoint-blocks", "1")
    small, large = (compare(capsys, *args, "--block-size", block)["vllm"]
                    for block in ("16", "64"))
    pages = {r["block_size"]: r["max_concurrency_exact"] for r in (small, large)}
    assert pages == {1_568: [607, 24], 1_600: [595, 24]}
    assert_in_readme(
        f"`--block-size 16`, gives P {small['block_size']:,}, {small['num_blocks']} / 24 = "
        f"{small['max_concurrency']:.2f}x and {small['logged_tokens']:,} tokens with it, as "
        f"FlatKV does; at 64, P {large['block_size']:,}, {large['num_blocks']} / 24 = "
        f"{large['max_concurrency']:.2f}x)")


def test_falcon_h1s_drafted_conv_rows_raise_p_at_block_16_only(capsys):
    args = ("--preset", "Falcon-H1-7B", "--budget", "40GiB", "--context", "32768",
            "--mamba-cache-mode", "align")
    p = {(block, drafted): compare(capsys, *args, "--block-size", block,
                                   "--speculative-tokens", drafted)["vllm"]["block_size"]
         for block in ("16", "64") for drafted in ("0", "2")}
    assert p[("64", "2")] == p[("64", "0")]
    assert_in_readme(f"Falcon-H1-7B with N = 2 gets P {p[('16', '2')]:,} at `--block-size 16` "
                     f"({p[('16', '0')]:,} without; {p[('64', '0')]:,} either way at 64)")


def test_spec_anchor_in_align_with_and_without_a_checkpoint_and_drafts(capsys):
    # SPEC 3.1's anchor: Qwen3-Next at TP 2 in 44.59 GiB, at its max_model_len
    args = ("--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--budget", "44.59GiB",
            "--mamba-cache-mode", "align")
    align = compare(capsys, *args)["vllm"]
    checkpoint = compare(capsys, *args, "--prefill-checkpoint-blocks", "1")["vllm"]
    drafted = compare(capsys, *args, "--speculative-tokens", "2")["vllm"]
    assert checkpoint["max_concurrency_exact"] == [6_764, 456 + 3 * 3]
    assert_in_readme(f"`--mamba-cache-mode align` gives that anchor "
                     f"{align['max_concurrency']:.2f}x and {align['logged_tokens']:,} tokens")
    assert_in_readme(f"gives that anchor P {checkpoint['block_size']}, "
                     f"{checkpoint['num_blocks']:,} blocks and "
                     f"{checkpoint['max_concurrency']:.2f}x (6,764 / (456 + 3 x 3))")
    assert_in_readme(f"gets P {drafted['block_size']}, {drafted['num_blocks']:,} blocks and "
                     f"{drafted['max_concurrency']:.2f}x ({align['block_size']}, "
                     f"{align['num_blocks']:,} and {align['max_concurrency']:.2f}x without)")


def test_least_budget_for_scouts_requests_and_llamas_one_request(capsys):
    scout = compare(capsys, "--preset", "Llama-4-Scout-17B-16E", "--context", "131072",
                    "--budget", "80GB", "--requests", "8")["vllm"]
    blocks = scout["least_budget_bytes"] // scout["block_bytes"]
    assert blocks * scout["block_bytes"] == scout["least_budget_bytes"]
    assert_in_readme(f"Scout's 8 requests of 131,072 tokens need {blocks:,} vLLM blocks of "
                     f"{scout['block_bytes']:,} B ({scout['least_budget_bytes']:,} B)")
    llama = compare(capsys, "--preset", "Llama-3.1-8B", "--context", "1000000",
                    "--budget", "200GB", "--requests", "1")["vllm"]
    assert_in_readme(f"1,000,000 tokens of Llama-3.1-8B need "
                     f"{llama['least_budget_bytes'] // llama['block_bytes']:,} blocks")
    gpt_oss = compare(capsys, "--preset", "gpt-oss-20b", "--context", "10000000",
                      "--budget", "80GB", "--requests", "1")["flat"]
    assert_in_readme(f"gpt-oss-20b at 10,000,000 tokens needs "
                     f"{gpt_oss['least_budget_bytes'] / (1 << 30):.2f} GiB for one request in "
                     f"packed slabs")


def test_sglangs_radix_cache_off_sizes_the_state_and_the_swa_pool_from_n(capsys):
    args = ("--budget", "40GiB", "--context", "32768", "--max-running-requests", "64")
    on, off = (compare(capsys, "--preset", "Qwen3-Next-80B-A3B", *args, *more)["sglang"]
               for more in ((), ("--disable-radix-cache",)))
    assert (off["state_slots"], off["kv_tokens"]) == (65, 1_543_266)
    assert_in_readme(
        f"N = 64: {off['state_slots']} slots and {off['kv_tokens']:,} tokens, against "
        f"{on['state_slots']} and {on['kv_tokens']:,} with the radix cache)")
    on, off = (compare(capsys, "--preset", "gpt-oss-20b", *args, *more)["sglang"]
               for more in ((), ("--disable-radix-cache",)))
    assert off["swa_request_cap"] == off["swa_tokens"]
    assert_in_readme(
        f"(gpt-oss-20b there: {off['swa_tokens']:,} sliding and {off['kv_tokens']:,} full "
        f"tokens, against {on['swa_tokens']:,} and {on['kv_tokens']:,})")


def test_sglangs_radix_cache_off_holds_its_caps_requests_in_the_sliding_pool(capsys):
    from flatkv.units import concurrency_text

    # gpt-oss-20b in 40 GiB at 32,768 tokens, N = 7: the cap's pool, 257 x 7 + 2 x 8,192 + 1,
    # holds 7 live windows of 127 + 128 + 1 + 1 = 257 beside the two chunks in flight; a whole
    # 8,192 chunk beside each window (127 + 8,192 = 8,319), as with the radix cache, 2.19
    off = compare(capsys, "--preset", "gpt-oss-20b", "--budget", "40GiB", "--context", "32768",
                  "--max-running-requests", "7", "--disable-radix-cache")["sglang"]
    assert off["swa_tokens"] == 257 * 7 + 2 * 8_192 + 1 and off["max_concurrency"] == 7
    assert_in_readme(
        f"gpt-oss-20b there at N = 7 and 32,768 tokens holds the 7 its cap was sized for "
        f"(({off['swa_tokens']:,} - 2 x 8,192 - 1) / 257 = "
        f"{concurrency_text(off['max_concurrency'])}x), where a whole chunk beside each window "
        f"would have held {concurrency_text(off['swa_tokens'] / 8_319)}x.")


def test_sglangs_chunked_prefill_size_is_its_own_by_the_gpus_memory(capsys):
    from flatkv.units import concurrency_text

    # a B200 (183,359 MiB, over 160 GiB): SGLang's default chunk is 16,384, its window span
    # W - 1 + 16,384 a request in the sliding pool
    args = ("--preset", "gpt-oss-20b", "--gpu-memory", "B200 192GB", "--context", "16384")
    own, told = (compare(capsys, *args, *more)["sglang"]
                 for more in ((), ("--sglang-chunked-prefill-size", "8192")))
    assert own["max_concurrency"] < told["max_concurrency"]
    # 190.9989 shows as 190.99 (concurrency_text: under a whole number of requests it stays
    # under it, never 191.00)
    assert_in_readme(f"B200 at 16,384 tokens: {concurrency_text(own['max_concurrency'])}x, "
                     f"against {concurrency_text(told['max_concurrency'])}x at 8,192)")


def test_sglangs_chunked_prefill_off_holds_a_whole_prompt_in_the_sliding_pool(capsys):
    from flatkv.units import concurrency_text

    args = ("--preset", "gpt-oss-20b", "--budget", "40GiB", "--context", "32768")
    own, off = (compare(capsys, *args, *more)["sglang"]
                for more in ((), ("--chunked-prefill-size", "-1")))
    assert (own["binding_limit"], off["binding_limit"]) == ("kv tokens", "swa tokens")
    # a prompt of at most 32,767 tokens, admitted with a token more reserved: (swa - 2) / 32,767
    assert off["max_concurrency"] == (off["swa_tokens"] - 2) / 32_767
    assert_in_readme(f"gpt-oss-20b in 40 GiB at 32,768 tokens: ({off['swa_tokens']:,} - 2) / "
                     f"32,767 = {concurrency_text(off['max_concurrency'])}x, the sliding pool "
                     f"binding, against {concurrency_text(own['max_concurrency'])}x at 8,192)")


def test_sglangs_attention_dp_at_tp_8(capsys):
    # Llama-3.1-8B at TP 8 in 40 GiB: 8 KV heads of 512 B, 32 layers; one head a rank at TP
    # 8, two at attention TP 4 (D = 2), all eight at TP 1 (D = 8)
    args = ("--tp", "8", "--budget", "40GiB", "--context", "32768")
    llama = [compare(capsys, "--preset", "Llama-3.1-8B", *args, "--attn-dp-size", d)["sglang"]
             for d in ("1", "2", "8")]
    assert [r["kv_tokens"] for r in llama] == [(40 << 30) // (32 * h * 512) for h in (1, 2, 8)]
    assert llama[2]["max_concurrency"] == 327_680 / 32_768 == 10
    assert_in_readme(f"Llama-3.1-8B at TP 8 in 40 GiB: {llama[0]['kv_tokens']:,} tokens without "
                     f"it (one KV head a rank), {llama[1]['kv_tokens']:,} at D = 2 and "
                     f"{llama[2]['kv_tokens']:,} at D = 8 (all 8 heads, "
                     f"{llama[2]['max_concurrency']:.0f} requests of 32,768 tokens)")
    # DeepSeek-V3: (512 + 64) x 2 B x 61 layers = 70,272 B a token on every rank
    deepseek = [compare(capsys, "--preset", "DeepSeek-V3", *args, "--attn-dp-size", d,
                        "--max-running-requests", "100")["sglang"] for d in ("1", "8")]
    assert {r["kv_tokens"] for r in deepseek} == {(40 << 30) // 70_272}
    assert [r["max_running_requests"] for r in deepseek] == [100, 100 // 8]
    assert_in_readme(f"its pool stays ({deepseek[1]['kv_tokens']:,} tokens) and only the chunk "
                     f"and told counts move (`--max-running-requests 100` at D = 8: "
                     f"{deepseek[1]['max_running_requests']} a group)")


def test_the_readme_lists_every_model_type_read():
    # the config.json errors point at this list: it is FlatKV's, in full and in order
    import re

    from flatkv.hf_config import SUPPORTED_MODEL_TYPES

    readme = README.read_text()
    start = readme.index("Every model_type read, in full: ")
    listed = readme[start:readme.index(".", start)].split(": ", 1)[1]
    assert re.findall(r"`(\w+)`", listed) == list(SUPPORTED_MODEL_TYPES)


ROOT = README.parent
DOCS = ("README.md", "ARCHITECTURE.md")
# where a cited `module.name` lives (`plan.TensorPlan`, `sglang.dp.attention_dp`, `_session.bind`)
MODULE_DIRS = ("flatkv", "flatkv/strategies", "app_pages", "bench", "tests")
# a cited path inside the repository (`strategies/vllm.py` is under flatkv/); others are engines'
REPO_DIRS = {"flatkv", "app_pages", "tests", "bench", "assets", ".ci", "strategies", "gpu"}


def cited() -> list[str]:
    """Every `span` of README.md and ARCHITECTURE.md."""
    return [span for doc in DOCS for span in re.findall(r"`([^`\n]+)`", (ROOT / doc).read_text())]


def module_of(dotted: str) -> Path | None:
    rel = dotted.replace(".", "/")
    return next((p for base in MODULE_DIRS
                 for p in (ROOT / base / f"{rel}.py", ROOT / base / rel / "__init__.py")
                 if p.is_file()), None)


def defines(path: Path, name: str) -> bool:
    """``name`` is a def, class, assignment or field of ``path`` (a package re-exports it)."""
    text = path.read_text()
    if path.name == "__init__.py":
        return re.search(rf"\b{name}\b", text) is not None
    return re.search(rf"^\s*(?:(?:def|class)\s+{name}\b|{name}\s*[:=])", text, re.M) is not None


def test_the_first_screen_shows_the_app_and_ci_s_own_test_command():
    first = README.read_text().split("\n## ")[0]
    (image,) = re.findall(r"!\[[^]]+\]\(([^)]+)\)", first)
    assert (ROOT / image).is_file()
    commands = [line for line in (ROOT / ".ci/run").read_text().splitlines() if "pytest" in line]
    assert len(commands) == 1 and commands[0] in first.splitlines()


def test_every_name_the_docs_cite_exists():
    # a renamed function, test or file leaves the newcomer's map pointing nowhere; names the
    # docs cite from the engines' code (vLLM's, SGLang's) resolve to no module here and pass
    classes = {m[1]: p for p in ROOT.glob("flatkv/**/*.py")
               for m in re.finditer(r"^class (\w+)", p.read_text(), re.M)}
    tests = "\n".join(p.read_text() for p in ROOT.glob("tests/**/*.py"))
    missing = []
    for span in cited():
        span = re.sub(r"\S*<\w+>\S*", " ", span)  # a placeholder: tests/test_app_<page>.py
        for path in re.findall(r"[\w.]+/[\w./]*\w", span):
            if path.split("/")[0] in REPO_DIRS and not any(
                    (ROOT / base / path).exists() for base in ("", "flatkv")):
                missing.append(path)
        span = re.sub(r"[\w./-]+\.(?:py|json|md|sh|log)\b", " ", span)
        missing += [t for t in re.findall(r"\btest_\w+", span)
                    if not re.search(rf"^def {t}\(", tests, re.M)]
        for dotted in re.findall(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", span):
            parts = dotted.split(".")
            for i in range(len(parts) - 1, 0, -1):
                if path := module_of(".".join(parts[:i])):
                    missing += [dotted] * (not defines(path, parts[i]))
                    break
            else:
                if parts[0] in classes:
                    missing += [dotted] * (not defines(classes[parts[0]], parts[1]))
    assert missing == []


def test_deepseek_v32_on_a_b200_takes_sglangs_trtllm_dsa_layout(capsys):
    # 40 GiB: a Hopper's bfloat16 DSA token is 61 x (1,152 + 132) B, SGLang's trtllm DSA one on
    # a B200 61 x (576 + 132) B (fp8_e4m3, the raw latent), which SGLang's figures take there
    # (--budget names no GPU: a Hopper's): both in whole pages of 64
    (sglang,) = [r for name, r in compare(capsys, "--preset", "DeepSeek-V3.2", "--budget",
                                          "40GiB").items() if name.startswith("sglang")]
    assert sglang["capacity_tokens"] == (40 << 30) // (61 * (1_152 + 132)) // 64 * 64
    raw = (40 << 30) // (61 * (576 + 132)) // 64 * 64
    on_b200 = run_strategy("sglang", load_preset("DeepSeek-V3.2").profile(),
                           budget_bytes=40 << 30,
                           options=StrategyOptions(gpu_compute_capability=(10, 0)))
    assert on_b200.capacity_tokens == raw == 994_432
    assert_in_readme(f"40 GiB holds {raw:,} tokens where a Hopper's bfloat16 (1,152 + 132 B) "
                     f"holds {sglang['capacity_tokens']:,}")


def test_a_float32_deepseek_v32s_sglang_column_is_bfloat16s(capsys):
    # on an H100 80GB (85,520,809,984 B x 0.9): SGLang keeps DeepSeek's sparse attention in
    # bfloat16 whatever the model's dtype, 61 x (1,152 + 132) B a token in pages of 64; FlatKV's
    # own float32 layout 61 x (2,304 + 132) B in blocks of 16
    results = compare(capsys, "--preset", "DeepSeek-V3.2", "--gpu-memory", "H100 80GB",
                      "--kv-dtype", "float32")
    budget = 85_520_809_984 * 9 // 10
    assert results["sglang"]["capacity_tokens"] == budget // (61 * 1_284) // 64 * 64
    assert results["flat"]["capacity_tokens"] == budget // (61 * 2_436) // 16 * 16
    assert_in_readme(f"on an H100 80GB {results['sglang']['capacity_tokens']:,} tokens where "
                     "FlatKV's own float32 layout, 2,304 + 132 B, holds "
                     f"{results['flat']['capacity_tokens']:,}")


def test_deepseek_v3s_kernel_block_departs_from_spec(capsys):
    # SPEC 3.1 says 64 for MLA; vLLM 0.34 runs a dense MLA model's told block of 16 at 16
    # (FLASH_ATTN_MLA, TRITON_MLA) and its own default block size, 64, at 64: 42,949,672,960
    # // (16 x 70,272) = 38,199 blocks (611,184 tokens), // (64 x 70,272) = 9,549 (611,136)
    args = ("--preset", "DeepSeek-V3", "--budget", "40GiB")
    told, untold = (compare(capsys, *args, "--block-size", block)["vllm"] for block in ("16",
                                                                                        "64"))
    assert (told["block_size"], told["num_blocks"], told["capacity_tokens"]) == (
        16, 38_199, 611_184)
    assert (untold["block_size"], untold["num_blocks"], untold["capacity_tokens"]) == (
        64, 9_549, 611_136)
    assert_in_readme(
        f"FlatKV's default for DeepSeek-V3 in 40 GiB is P {told['block_size']}, "
        f"{told['num_blocks']:,} blocks, {told['capacity_tokens']:,} tokens, where FlashMLA's 64 "
        f"gave P {untold['block_size']}, {untold['num_blocks']:,} and "
        f"{untold['capacity_tokens']:,}. Those are vLLM 0.34's figures untold")


def test_raw_bytes_take_a_logs_kv_dtype_at_its_element_size():
    # Llama-3.1-8B's raw bytes in int8, K and V 1,024 each: a bfloat16 log's dtype offered
    # doubles them (log_check.raw_kv_in), fp8's keeps them
    from flatkv.log_check import raw_kv_in
    from flatkv.profile import CacheProfile

    raw = CacheProfile(layer_types=("full_attention",) * 32, kv_bytes_per_slot=2_048,
                       kv_tensor_bytes=(1_024, 1_024), kv_dtype="int8")
    assert raw_kv_in(raw, "float8_e4m3fn") == {"kv_dtype": "float8_e4m3fn"}
    resized = raw_kv_in(raw, "bfloat16")["kv_bytes_per_slot"]
    assert_in_readme(f"bfloat16 keeps 2 ({raw.kv_bytes_per_slot:,} B a token a layer become "
                     f"{resized:,})")


def test_a_drafters_kv_size_beside_the_models():
    # DeepSeek-V3.2 on a B200 in 40 GiB: the model's KV line at 61 layers of 708 B, its MTP
    # drafter's pool of the same tokens at one layer
    (kv, _) = run_strategy("sglang", load_preset("DeepSeek-V3.2").profile(),
                           budget_bytes=40 << 30, context_tokens=163_840,
                           options=StrategyOptions(gpu_compute_capability=(10, 0))
                           ).extras["log_lines"]
    tokens = int(kv.split("#tokens: ")[1].split(",")[0])
    assert kv.endswith(f"KV size: {(tokens + 64) * 61 * 708 / 2**30:.2f} GB")
    assert_in_readme(f"(({tokens:,} + 64) x 61 x 708 B = {(tokens + 64) * 61 * 708 / 2**30:.2f} "
                     f"GB, not 788 B's {(tokens + 64) * 61 * 788 / 2**30:.2f}: the model's KV "
                     "line, where a drafter's pool logs its own after it in each rank, an MTP "
                     f"layer's ({tokens:,} + 64) x 708 B = {(tokens + 64) * 708 / 2**30:.2f} GB)")


def test_readme_counts_the_b200_settings_sglang_check_runs(monkeypatch):
    # bench/sglang_check.py's B200 rows (b200_rows): the README said 523, the count when
    # DeepSeek-V3.2's told --kv-cache-dtype rows came (5e87ea3); the model KV dtype rows
    # (float32 / float16, told none or bfloat16) made 559 and the learnable_sink config's 48
    # (4 pages x 2 overlaps, told none with and without drafting, told each of 3 dtypes, and
    # in float16) 607, and its list named neither
    import importlib

    monkeypatch.syspath_prepend(str(README.parent / "bench"))  # it imports engine_common
    check = importlib.import_module("sglang_check")
    rows = check.b200_rows()
    assert sum(row[0] == check.SINKS for row in rows) == len(check.B200_PAGES) * 2 * 6 == 48
    assert (f"`bench/sglang_check.py` runs {len(rows)} settings through SGLang's own "
            "resolution as on a B200") in readme_text()
    assert ("DeepSeek-V3.2 and GLM-5 in a model KV dtype of float32 or float16, told none or "
            "bfloat16; DeepSeek-V3.2's config with `learnable_sink: true`, told each dtype and "
            "in float16;") in readme_text()


def test_nemotron_hs_vllm_column_keeps_vllms_float32_ssm_state(capsys):
    # the preset's bf16 ssm state (2,097,152 B) in float32: 4,194,304 B, + 61,440 B of conv;
    # P = 16 x cdiv(4,255,744, 65,536) = 1,040; 40 GiB // (1,040 x 4,096) // 4 = 2,520
    vllm = compare(capsys, "--preset", "Nemotron-H-8B", "--budget", "40GiB")["vllm"]
    told = compare(capsys, "--preset", "Nemotron-H-8B", "--budget", "40GiB",
                   "--vllm-ssm-dtype", "bfloat16")["vllm"]
    assert 128 * 64 * 128 * 4 == 4_194_304 and 16 * -(-(61_440 + 4_194_304) // 65_536) == 1_040
    assert 40 * 2**30 // (1_040 * 4_096) // 4 == 2_520
    assert (vllm["block_size"], vllm["num_blocks"]) == (1_040, 2_520)
    assert (told["block_size"], told["num_blocks"]) == (528, 40 * 2**30 // (528 * 4_096) // 4)
    text = readme_text()
    assert (f"P = 16 x cdiv(4,255,744, 16 x 4,096) = 1,040, 2,520 blocks at 40 GiB "
            f"({vllm['max_concurrency']:.2f}x at 8,192 tokens; 528, {told['num_blocks']:,} and "
            f"{told['max_concurrency']:.2f}x told bfloat16)") in text
    assert vllm["formulas"][0].startswith(
        "ssm state float32: vLLM's default for NemotronHForCausalLM")
    assert "\"ssm state float32: vLLM's default for NemotronHForCausalLM\"" in text
