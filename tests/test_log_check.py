"""Checking FlatKV's start-up log lines against a pasted engine log (flatkv.log_check).

Each log here is built from FlatKV's own lines as the engines print them: real prefixes (vLLM's
process tag, level, time and file; SGLang's time and rank), colour codes, other lines between,
one line per TP rank; the figures the checks expect are derived by hand in comments.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from flatkv.hf_config import spec_from_hf_config
from flatkv.log_check import (
    DIFFERS,
    MAX_LINE_CHARS,
    MAX_LOG_CHARS,
    MISSING,
    SAME,
    check_lines,
    check_log,
    check_report,
    check_result,
    check_rows,
    check_text,
    detect_engine,
    logged_kv_dtype,
    logged_run,
    read_log,
    template,
    vllm_ssm_settings,
)
from flatkv.presets import load_preset
from flatkv.strategies import StrategyOptions, run_strategy
from flatkv.strategies.sglang_log import DRAFTER_POOL

# tiiuae/falcon-mamba-7b's config.json shape (as tests/test_strategies.py's FALCON_MAMBA)
FALCON_MAMBA = {"architectures": ["FalconMambaForCausalLM"], "model_type": "falcon_mamba",
                "hidden_size": 4096, "intermediate_size": 8192, "num_hidden_layers": 64,
                "state_size": 16, "conv_kernel": 4, "torch_dtype": "bfloat16"}
GIB40 = 40 * 2**30  # 42,949,672,960 B


def falcon(engine: str) -> list[str]:
    profile = spec_from_hf_config(FALCON_MAMBA).profile()
    return run_strategy(engine, profile, budget_bytes=GIB40, context_tokens=2048).extras[
        "log_lines"]


def vllm_prefix(rank: int, second: int) -> str:
    """vLLM's prefix on a worker's line, its level coloured as a terminal shows it."""
    return (f"(Worker_TP{rank} pid={4100 + rank}) \x1b[32mINFO\x1b[0m 12-06 07:00:{second:02d} "
            "[gpu_worker.py:297] ")


def sglang_prefix(rank: int, second: int) -> str:
    return f"[2026-12-06 07:01:{second:02d} TP{rank}] "


# vLLM's "Memory after warmup" line with the run's own GPU figures that FlatKV elides (...), in
# vLLM 0.34's words (v1/worker/extensible_kv_cache.py: "Memory after warmup: %s GiB free, %s GiB
# committed to the KV cache, %s GiB kept for transient activations (%s GiB allocated at peak,
# %s GiB of torch reservation growth); %d KV cache blocks (%s GiB) fit within the requested %s
# GiB. Torch may reserve up to %s GiB.")
WARMUP_FIGURES = ("1.25 GiB free, 39.99 GiB committed to the KV cache, 2.1 GiB kept for "
                  "transient activations (1.87 GiB allocated at peak, 2.1 GiB of torch "
                  "reservation growth);", "70.52", "Torch may reserve up to 75.02 GiB.")


def as_logged(line: str) -> str:
    """A FlatKV line as the engine prints it: its elisions filled with the run's figures."""
    for filled in WARMUP_FIGURES:
        line = line.replace("...", filled, 1)
    return line


def engine_log(lines: list[str], prefix, ranks=(0, 1), other_pool: str = "") -> str:
    """A start-up log: each line once a rank (SGLang's scheduler line on the first alone, as
    it logs it), other lines between (weights, a progress bar, a compile line with a colour
    code left without its ESC), and ``other_pool`` last: a line of the same words as one of
    ours, of another pool or model."""
    out = [f"{prefix(0, 0)}Loading weights took 13.97 GiB and 4.2 seconds",
           "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:03<00:00,  1.18it/s]"]
    for i, line in enumerate(lines, 1):
        on = ranks[:1] if line.startswith("max_total_num_tokens=") else ranks
        out += [f"{prefix(rank, i)}{as_logged(line)}" for rank in on]
        out.append(f"{prefix(0, i)}[32mmodel_runner[0m compiled graph {i} of 51 in 0.8 s")
    if other_pool:
        out.append(f"{prefix(0, 59)}{other_pool}")
    return "\n".join(out)


def test_hand_derived_lines_falcon_mamba():
    # vLLM at 40 GiB, mode none: one group of 64 Mamba1 layers, a page one layer's state
    # (conv 8,192 x 3 + ssm 8,192 x 16, bfloat16: 311,296 B), one page a request of 2,048
    # tokens: 42,949,672,960 // 311,296 // 64 = 2,155 blocks = 2,155 x 311,296 x 64 =
    # 42,933,944,320 B = 39.985 GiB ("39.99"); logged tokens 2,155 x 2,048 = 4,413,440,
    # concurrency 2,155 / 1 = 2155.00x
    blocks = GIB40 // 311_296 // 64
    assert (blocks, blocks * 2048) == (2_155, 4_413_440)
    assert falcon("vllm") == [
        "Available KV cache memory: 40.0 GiB",
        f"Memory after warmup: ... {blocks} KV cache blocks ({blocks * 311_296 * 64 / 2**30:.2f}"
        " GiB) fit within the requested ... GiB. ...",
        f"GPU KV cache size: {blocks * 2048:,} tokens, Maximum concurrency for 2,048 tokens per "
        f"request: {blocks:.2f}x"]
    # SGLang: a slot of 64 x (49,152 + 524,288) = 36,700,160 B (its Mamba1 ssm in float32);
    # 42,949,672,960 x 9 / 19 = 20,344,581,928 -> 554 slots, 553 for requests, 553 // 3 = 184
    # running; its sizes count all 554: conv 554 x 64 x 49,152 = 1,742,733,312 B = 1.62 GiB,
    # ssm 554 x 64 x 524,288 = 18,589,155,328 B = 17.31 GiB
    slots = GIB40 * 9 // 19 // (64 * (49_152 + 524_288))
    assert (slots, (slots - 1) // 3) == (554, 184)
    conv, ssm = slots * 64 * 49_152, slots * 64 * 524_288
    assert [f"{b / 2**30:.2f}" for b in (conv, ssm)] == ["1.62", "17.31"]
    assert falcon("sglang")[1] == (f"Mamba Cache is allocated. max_mamba_cache_size: {slots - 1}"
                                   f", conv_state size: 1.62GB, ssm_state size: 17.31GB ")
    assert falcon("sglang")[0].startswith("max_running_requests is capped to 184 by the mamba "
                                          "state cache (max_mamba_cache_size=553, 3 state")


def test_template_masks_figures_not_words():
    t = template("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 920754, K size: 10.54 "
                 "GB, V size: 10.54 GB")
    assert t.figures == ("torch.bfloat16", "920754", "10.54", "10.54")
    assert t.names == ("dtype", "#tokens", "K size (GB)", "V size (GB)")
    # a word's digits are words (bfloat16 in an option's value); an elision is no figure
    assert template("halve it with --mamba-ssm-dtype bfloat16.").figures == ()
    warmup = template(falcon("vllm")[1])
    assert warmup.figures == ("2155", "39.99")
    assert warmup.names == ("KV cache blocks", "KV cache blocks (GiB)")


def test_vllm_log_all_same():
    expected = falcon("vllm")
    log = engine_log(expected, vllm_prefix)
    check = check_log(expected, "vllm", log)
    assert [c.outcome for c in check.lines] == [SAME] * 3
    assert check.log_engine == "vllm" and not check.differs and check.found == 3
    assert check.verdict() == "vLLM: all 3 lines are in the log and agree with it."
    # both ranks' lines, the warm-up line's elided figures (70.52, 4096) not compared; the
    # line numbers count from the paste's first line (2 before the first of ours)
    assert check.lines[1].detail() == ("lines 6 (Worker_TP0 pid=4100), 7 (Worker_TP1 pid=4101) "
                                       "agree")


def test_sglang_log_all_same_with_its_kv_line():
    # Qwen3-Next at 40 GiB and 32,768 tokens: a state cap line, the Mamba line and the KV line
    # whose dtype is a figure too
    profile = load_preset("Qwen3-Next-80B-A3B").profile()
    r = run_strategy("sglang", profile, budget_bytes=GIB40, context_tokens=32_768)
    expected = r.extras["log_lines"]
    assert expected[-2].startswith("KV Cache is allocated. dtype: torch.bfloat16, #tokens: ")
    # then the scheduler's line, on TP0 alone: the pool's tokens, the 52 requests the state
    # pool caps (the first line) at 32,768 tokens
    assert expected[0].startswith("max_running_requests is capped to 52 by the mamba state")
    assert expected[-1] == (f"max_total_num_tokens={r.capacity_tokens}, chunked_prefill_size="
                            "8192, max_prefill_tokens=..., max_running_requests=52, "
                            "context_len=32768")
    check = check_log(expected, "sglang", engine_log(expected, sglang_prefix))
    assert [c.outcome for c in check.lines] == [SAME] * len(expected) == [SAME] * 4
    assert check.log_engine == "sglang"
    assert check.verdict() == "SGLang: all 4 lines are in the log and agree with it."
    assert check.lines[-1].detail() == "line 12 (TP0) agrees"
    # a pool of another model (a drafter's, where FlatKV is told of no drafting) logs the same
    # words: every match must agree, so the line differs, and says which log line does
    drafter = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
               f"{r.capacity_tokens}, K size: 0.01 GB, V size: 0.01 GB")
    check = check_log(expected, "sglang", engine_log(expected, sglang_prefix,
                                                     other_pool=drafter))
    kv = check.lines[-2]
    assert kv.outcome == DIFFERS and check.verdict().startswith("SGLang: 1 of 4 lines differs")
    size = expected[-2].split("K size: ")[1].split(" GB")[0]
    # the third line's ranks are the log's lines 9 and 10 (2 + 3 x 2 + 1), the drafter's the
    # last, after the scheduler's line and its compile line: 2 + 3 x 3 + 2 + 1 = 14
    assert kv.detail() == (f"line 14 (TP0): K size (GB): FlatKV {size}, log 0.01; V size (GB): "
                           f"FlatKV {size}, log 0.01 | lines 9 (TP0), 10 (TP1) agree")


def test_a_drafters_kv_line_after_the_models_is_not_compared():
    # Qwen3-Next at 40 GiB and 32,768 tokens with 2 tokens drafted (MTP): SGLang's draft model
    # gets a token pool of its own after the target's, indexed by the same 923,898 token ids,
    # for its one attention layer: 923,898 x 2 KV heads x 256 x 2 B = 946,071,552 B, 0.88 GB
    # for K and for V (the model's 12 full layers: 10.57 GB each)
    profile = load_preset("Qwen3-Next-80B-A3B").profile()
    r = run_strategy("sglang", profile, budget_bytes=GIB40, context_tokens=32_768,
                     options=StrategyOptions(speculative_tokens=2))
    expected = r.extras["log_lines"]
    assert expected[-2] == ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 923898, "
                            "K size: 10.57 GB, V size: 10.57 GB")
    drafter = expected[-2].replace("10.57", "0.88")
    log = engine_log(expected, sglang_prefix) + "\n" + "\n".join(
        f"{sglang_prefix(rank, 59)}{drafter}" for rank in (0, 1))
    check = check_result(r, read_log(log))
    kv = check.lines[-2]
    assert kv.outcome == SAME
    assert check.verdict() == ("SGLang: all 4 lines are in the log and agree with it; 2 log "
                               f"lines not compared: {DRAFTER_POOL}.")
    # the model's lines are the log's 9 and 10 (2 + 3 x 2 + 1), the drafter's 14 and 15 (after
    # the scheduler's line on TP0 and its compile line)
    assert kv.detail() == (f"lines 9 (TP0), 10 (TP1) agree | lines 14 (TP0), 15 (TP1): not "
                           f"compared, {DRAFTER_POOL}")
    def with_lines(*extra: str) -> str:  # the model's log (13 lines), then these on TP0
        return engine_log(expected, sglang_prefix) + "".join(
            f"\n{sglang_prefix(0, 59)}{line}" for line in extra)

    # what no drafter logs is compared: a KV line of other #tokens (a pool not indexed by the
    # model's tokens), a third KV line of a rank, the scheduler's cap line twice
    kv = check_result(r, read_log(with_lines(drafter.replace("923898", "900000")))).lines[-2]
    assert kv.outcome == DIFFERS
    assert kv.detail().startswith("line 14 (TP0): #tokens: FlatKV 923898, log 900000")
    kv = check_result(r, read_log(with_lines(drafter, drafter.replace("0.88", "0.44")))).lines[-2]
    assert kv.outcome == DIFFERS
    assert kv.detail().startswith("line 15 (TP0): K size (GB): FlatKV 10.57, log 0.44")
    capped = expected[0].replace("capped to 32", "capped to 31")
    cap = check_result(r, read_log(with_lines(capped))).lines[0]
    assert cap.outcome == DIFFERS and cap.detail().startswith("line 14 (TP0): ")
    # the model's own line is compared all the same: one token more on TP1 differs; and TP1's
    # later line, of 923,898 tokens, is no drafter's of that line (a drafter logs its model's
    # #tokens, as its pool is indexed by its token ids), so it is compared too (it was not
    # compared, read as a drafter's by FlatKV's #tokens, its model line's aside)
    off = log.replace("TP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 923898, "
                      "K size: 10.57", "TP1] KV Cache is allocated. dtype: torch.bfloat16, "
                      "#tokens: 923899, K size: 10.57")
    kv = check_result(r, read_log(off)).lines[-2]
    assert kv.outcome == DIFFERS
    assert kv.detail() == ("line 10 (TP1): #tokens: FlatKV 923898, log 923899 | line 15 (TP1): "
                           "K size (GB): FlatKV 10.57, log 0.88; V size (GB): FlatKV 10.57, log "
                           f"0.88 | line 9 (TP0) agrees | line 14 (TP0): not compared, "
                           f"{DRAFTER_POOL}")
    # the run restarted (its launcher's server_args line, 0.5.23's: the fixture, then the same
    # lines): each run's drafter lines are its own, not compared; a rank's second drafter line
    # was compared as one of the first run's, and differed (K size 0.88 for 10.57)
    restart = f"[2026-12-06 07:05:00] {FULL_SERVER_ARGS}"
    twice = check_result(r, read_log(f"{restart}\n{log}\n{restart}\n{log}"))
    assert twice.lines[-2].outcome == SAME
    assert twice.verdict() == ("SGLang: all 4 lines are in the log and agree with it; 4 log "
                               f"lines not compared: {DRAFTER_POOL}.")
    # each run's 15 lines after its restart line: the model's 1 + 9, 10; the drafter's 1 + 14,
    # 15; the second run's 16 lines on (17 + 9, 17 + 14)
    assert twice.lines[-2].detail() == (
        f"lines 10 (TP0), 11 (TP1), 26 (TP0), 27 (TP1) agree | lines 15 (TP0), 16 (TP1), "
        f"31 (TP0), 32 (TP1): not compared, {DRAFTER_POOL}")
    # at other settings (30 GiB: 694,496 tokens, K and V 7.95 GB) the model's lines differ in
    # #tokens too; the drafter's, of their #tokens and other sizes, are still not compared
    # (they were compared, and differed: #tokens 694496, log 923898; K size 7.95, log 0.88)
    r30 = run_strategy("sglang", profile, budget_bytes=30 << 30, context_tokens=32_768,
                       options=StrategyOptions(speculative_tokens=2))
    assert r30.extras["log_lines"][-2] == ("KV Cache is allocated. dtype: torch.bfloat16, "
                                           "#tokens: 694496, K size: 7.95 GB, V size: 7.95 GB")
    kv = check_result(r30, read_log(log)).lines[-2]
    assert kv.outcome == DIFFERS
    assert kv.detail() == ("lines 9 (TP0), 10 (TP1): #tokens: FlatKV 694496, log 923898; K size "
                           "(GB): FlatKV 7.95, log 10.57; V size (GB): FlatKV 7.95, log 10.57 | "
                           f"lines 14 (TP0), 15 (TP1): not compared, {DRAFTER_POOL}")
    # ... but a later line of other #tokens than its model line's is compared there too
    kv = check_result(r30, read_log(with_lines(drafter.replace("923898", "900000")))).lines[-2]
    assert kv.detail().endswith("line 14 (TP0): #tokens: FlatKV 694496, log 900000; K size (GB): "
                                "FlatKV 7.95, log 0.88; V size (GB): FlatKV 7.95, log 0.88")
    # the two ranks' lines pasted without prefixes (no rank named): their model lines, then
    # their drafters', the second drafter line was compared as a later line of the first's
    # one rank, and differed; one drafter line a model line before it is not compared
    bare = "\n".join(line.split("] ", 1)[1] for line in log.splitlines()
                     if "KV Cache is allocated" in line)
    assert bare == "\n".join([expected[-2]] * 2 + [drafter] * 2)
    kv = check_result(r, read_log(bare)).lines[-2]
    assert kv.outcome == SAME
    assert kv.detail() == f"lines 1, 2 agree | lines 3, 4: not compared, {DRAFTER_POOL}"
    kv = check_result(r, read_log(f"{bare}\n{drafter}")).lines[-2]
    assert kv.outcome == DIFFERS and kv.detail().startswith("line 5: K size (GB): FlatKV 10.57, "
                                                            "log 0.88")
    # without tokens drafted no drafter runs: the same later line differs (as a pool of
    # another model in test_sglang_log_all_same_with_its_kv_line)
    plain = run_strategy("sglang", profile, budget_bytes=GIB40, context_tokens=32_768)
    assert "drafter_pool" not in plain.extras
    own = plain.extras["log_lines"]
    log = engine_log(own, sglang_prefix, ranks=(0,), other_pool=own[-2].split(", K size")[0]
                     + ", K size: 0.88 GB, V size: 0.88 GB")
    kv = check_result(plain, read_log(log)).lines[-2]
    assert kv.outcome == DIFFERS and kv.detail().startswith("line 11 (TP0): K size (GB): ")


def test_a_figure_changed_by_one_differs_naming_it():
    expected = falcon("vllm")
    # rank 1 logs one block more than FlatKV (2,156, its GiB then 39.99 still)
    log = engine_log(expected, vllm_prefix).replace(
        "(Worker_TP1 pid=4101) \x1b[32mINFO\x1b[0m 12-06 07:00:02 [gpu_worker.py:297] Memory "
        f"after warmup: {WARMUP_FIGURES[0]} 2155 KV",
        "(Worker_TP1 pid=4101) \x1b[32mINFO\x1b[0m 12-06 07:00:02 [gpu_worker.py:297] Memory "
        f"after warmup: {WARMUP_FIGURES[0]} 2156 KV")
    check = check_log(expected, "vllm", log)
    assert [c.outcome for c in check.lines] == [SAME, DIFFERS, SAME]
    assert check.differs
    assert check.lines[1].detail() == ("line 7 (Worker_TP1 pid=4101): KV cache blocks: FlatKV "
                                       "2155, log 2156 | line 6 (Worker_TP0 pid=4100) agrees")
    assert check.verdict() == "vLLM: 1 of 3 lines differs from the log, 2 agree."
    report = check_report(check)
    assert report[0] == check.verdict()
    assert "  differs: " + expected[1] in report


def test_tokens_one_more_on_every_rank():
    expected = falcon("vllm")
    log = engine_log(expected, vllm_prefix).replace("4,413,440 tokens", "4,413,441 tokens")
    (line,) = [c for c in check_log(expected, "vllm", log).lines if c.outcome == DIFFERS]
    # the log's lines: 2 before ours, then 3 an expected line (2 ranks and a compile line): the
    # third expected line is lines 2 + 3 x 2 + 1 = 9 and 10
    assert line.detail() == ("lines 9 (Worker_TP0 pid=4100), 10 (Worker_TP1 pid=4101): KV cache "
                             "size (tokens): FlatKV 4,413,440, log 4,413,441")


def test_figures_are_compared_exactly():
    expected = falcon("vllm")[2:]
    # separators or none, trailing zeros: the same number
    plain = "GPU KV cache size: 4413440 tokens, Maximum concurrency for 2048 tokens per " \
            "request: 2155.0x"
    assert check_log(expected, "vllm", plain).lines[0].outcome == SAME
    # a difference a float cannot see (4,413,440 and 4,413,440.0000000000001 are one float)
    assert float("4413440.0000000000001") == 4_413_440.0
    close = plain.replace("4413440", "4413440.0000000000001")
    assert check_log(expected, "vllm", close).lines[0].outcome == DIFFERS
    # a number that ends as ours is not ours (14,413,440: a lazy match would take its tail)
    longer = plain.replace("4413440", "14413440")
    assert check_log(expected, "vllm", longer).lines[0].outcome == DIFFERS


def test_a_dropped_line_is_not_in_the_log():
    expected = falcon("vllm")
    log = "\n".join(line for line in engine_log(expected, vllm_prefix).splitlines()
                    if "Available KV cache memory" not in line)
    check = check_log(expected, "vllm", log)
    assert [c.outcome for c in check.lines] == [MISSING, SAME, SAME]
    assert check.lines[0].detail() == "no log line has these words"
    assert check.verdict() == ("vLLM: 2 of 3 lines are in the log and agree with it; 1 not in "
                               "it.")


def test_sglang_log_against_vllm_lines():
    log = engine_log(falcon("sglang"), sglang_prefix)
    check = check_log(falcon("vllm"), "vllm", log)
    assert check.log_engine == "sglang" and check.found == 0 and check.other_engine
    assert check.verdict() == ("This log is SGLang's, not vLLM's: check it against SGLang's "
                               "lines.")
    assert [c.outcome for c in check.lines] == [MISSING] * 3


def test_wrapped_and_unprefixed_lines():
    expected = falcon("vllm")
    # a terminal wraps at 80 columns, mid-number: the rest has no prefix and joins its line
    line = vllm_prefix(0, 3) + expected[2]
    wrapped = "\n".join(line[i:i + 80] for i in range(0, len(line), 80))
    assert wrapped.endswith("request: 21\n55.00x")  # 2155.00 split by the wrap
    assert check_log(expected, "vllm", wrapped).lines[2].outcome == SAME
    # a log pasted without prefixes, wrapped: joined where a line alone does not read as ours
    bare = "\n".join(expected[2][i:i + 40] for i in range(0, len(expected[2]), 40))
    check = check_log(expected, "vllm", bare)
    assert check.lines[2].outcome == SAME and check.lines[2].detail() == "line 1 agrees"
    assert check.log_engine == "vllm"  # by its words: "GPU KV cache size"


# SGLang's hybrid SWA split as FlatKV words it for gpt-oss-120b at 40 GiB and 32,768 tokens: 81
# characters, its last figure the line's end
SWA_SPLIT = "Use sliding window memory pool. full_layer_tokens=647269, swa_layer_tokens=517815"


def test_an_unprefixed_line_wrapped_inside_its_last_figure_is_joined():
    # a terminal of 80 columns wraps the bare line one digit before its end: "51781" alone
    # read as the figure said the log differs (FlatKV 517815, log 51781); the digit on the
    # next line is its rest
    assert len(SWA_SPLIT) == 81
    wrapped = f"{SWA_SPLIT[:80]}\n{SWA_SPLIT[80:]}\nnext line"
    assert wrapped.splitlines()[:2] == [SWA_SPLIT[:80], "5"]
    check = check_log([SWA_SPLIT], "sglang", wrapped)
    assert check.lines[0].outcome == SAME and check.lines[0].detail() == "line 1 agrees"
    # a line of its own after it is not its rest, though it starts with digits: a date (Python
    # logging's default), a progress bar, a blank line between
    for after in ("2026-12-06 07:00:00,123 INFO loaded", "100%|##########| 4/4 [00:02<00:00]",
                  "\n5"):
        check = check_log([SWA_SPLIT], "sglang", f"{SWA_SPLIT}\n{after}")
        assert check.lines[0].outcome == SAME, after
    # a figure cut and its rest changed still differs
    check = check_log([SWA_SPLIT], "sglang", f"{SWA_SPLIT[:80]}\n6")
    assert check.lines[0].detail() == "line 1: swa_layer_tokens: FlatKV 517815, log 517816"


def terminal(lines: list[str], width: int) -> str:
    """``lines`` as a terminal of ``width`` columns shows them: each cut every ``width``
    characters, wherever that falls (mid-word, mid-figure)."""
    return "\n".join(line[k:k + width] for line in lines for k in range(0, len(line), width))


# SGLang's lines around SWA_SPLIT in its words, as a paste without prefixes holds them, each
# FlatKV's and the log's alike (no figure of theirs is derived here): a labelled KV line (100
# characters, wider than the split's 81) and the scheduler line, whose context_len SGLang
# follows with the memory left
SWA_KV = ("Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 647269, K size: 2.22 GB, "
          "V size: 2.22 GB")
SWA_SCHEDULER = ("max_total_num_tokens=647269, chunked_prefill_size=8192, max_prefill_tokens=..., "
                 "max_running_requests=..., context_len=131072")


def test_a_wrap_is_joined_where_the_terminals_width_shows_it_and_a_line_of_its_own_is_not():
    # a true wrap: the paste at 80 columns, every line cut there (the KV line after 80 too);
    # the split line's last digit goes on the next line, its rest, and it agrees
    assert (len(SWA_KV), len(SWA_SPLIT)) == (100, 81)
    paste = terminal([SWA_KV, SWA_SPLIT, "next line"], 80)
    assert paste.splitlines()[2:4] == [SWA_SPLIT[:80], "5"]
    check = check_log([SWA_KV, SWA_SPLIT], "sglang", paste)
    assert [c.detail() for c in check.lines] == ["line 1 agrees", "line 3 agrees"]
    # ... and at 124 columns the scheduler line (154 characters, its context_len 131,072 at
    # its characters 122-127) is cut after "131": its rest "072" goes on with SGLang's ", "
    logged = SWA_SCHEDULER.replace("=...", "=16384", 1).replace("=...", "=2048") + (
        ", available_gpu_mem=3.10 GB")
    assert (len(logged), logged.index("context_len=") + len("context_len=")) == (154, 121)
    paste = terminal([SWA_KV, SWA_SPLIT, logged], 124)
    assert paste.splitlines()[2:] == [logged[:124], "072, available_gpu_mem=3.10 GB"]
    check = check_log([SWA_SPLIT, SWA_SCHEDULER], "sglang", paste)
    assert [c.detail() for c in check.lines] == ["line 2 agrees", "line 3 agrees"]
    # a line of its own that starts with a figure after FlatKV's whole line is not its rest:
    # an epoch time (Python logging's %(created)f) read "517815" + "1765004401.250" as
    # swa_layer_tokens 5,178,151,765,004,401.250; a count printed after it, "12 requests"
    for after in ("1765004401.250 INFO Started server process [4100]", "12 requests waiting"):
        (line,) = check_log([SWA_SPLIT], "sglang", f"{SWA_SPLIT}\n{after}").lines
        assert line.detail() == "line 1 agrees", after
    # a line wider than the split's in the paste (the KV line, 97 > 81) shows no terminal cut
    # it at 81: a line of its own after it, though digits then a comma (CUDA_VISIBLE_DEVICES
    # echoed, "0,1,2,3"), is not read as its rest (swa_layer_tokens 5,178,150 before)
    paste = "\n".join([SWA_KV, SWA_SPLIT, "0,1,2,3"])
    check = check_log([SWA_KV, SWA_SPLIT], "sglang", paste)
    assert [c.detail() for c in check.lines] == ["line 1 agrees", "line 2 agrees"]


def _assert_tp1_copy_differs(expected: list[str], bad: str, figure: str) -> None:
    """falcon-mamba's vLLM line on TP0 as FlatKV's, ``bad`` on TP1: the line differs, naming
    TP1's ``figure`` and TP0's agreeing copy."""
    k = 0 if bad.startswith("Available") else 2
    log = f"{vllm_prefix(0, 1)}{expected[k]}\n{vllm_prefix(1, 1)}{bad}"
    line = check_log(expected, "vllm", log).lines[k]
    assert line.outcome == DIFFERS, bad
    assert line.detail().startswith("line 2 (Worker_TP1 pid=4101): "), bad
    assert f", log {figure} | line 1 (Worker_TP0 pid=4100) agrees" in line.detail(), bad


def test_a_line_of_our_words_whose_figure_is_no_number_differs():
    # falcon-mamba's vLLM lines, TP0's as FlatKV's, TP1's with a figure that reads as no
    # number: a damaged copy, a NaN. Such a line went unread, so TP0's alone made "same"
    expected = falcon("vllm")
    for bad, figure in (("Available KV cache memory: nan GiB", "nan"),
                        ("Available KV cache memory: 40.0, GiB", "40.0,"),
                        ("GPU KV cache size: 4,413,4400 tokens, Maximum concurrency for 2,048 "
                         "tokens per request: 2155.00x", "4,413,4400"),
                        ("GPU KV cache size: 4,413,440 tokens, Maximum concurrency for 2,048 "
                         "tokens per request: 2155.0.0x", "2155.0.0")):
        _assert_tp1_copy_differs(expected, bad, figure)
    # nor is it read as SGLang's drafter's pool, whose sizes are numbers of its own
    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100, K size: 0.01 GB, "
          "V size: 0.01 GB")
    log = f"{sglang_prefix(0, 1)}{kv}\n{sglang_prefix(0, 2)}{kv.replace('0.01 GB,', 'nan GB,')}"
    (line,) = check_lines([kv], "sglang", read_log(log), later_pools={kv: DRAFTER_POOL}).lines
    assert line.detail() == "line 2 (TP0): K size (GB): FlatKV 0.01, log nan | line 1 (TP0) agrees"
    # alone in a log it differs too, where it read as not in the log
    (line,) = check_log(expected[:1], "vllm", "Available KV cache memory: NaN GiB").lines
    assert line.detail() == "line 1: KV cache memory (GiB): FlatKV 40.0, log NaN"


def test_a_figure_damaged_by_a_space_differs():
    # a copy's space inside a figure ("40. 0", "4,413, 440", a dtype's "torch.bf oat16") on
    # TP1: its line went unread, so TP0's alone made "same"
    expected = falcon("vllm")
    for bad, figure in (("Available KV cache memory: 40. 0 GiB", "40. 0"),
                        ("GPU KV cache size: 4,413, 440 tokens, Maximum concurrency for 2,048 "
                         "tokens per request: 2155.00x", "4,413, 440")):
        _assert_tp1_copy_differs(expected, bad, figure)
    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100, K size: 0.01 GB, "
          "V size: 0.01 GB")
    log = (f"{sglang_prefix(0, 1)}{kv}\n"
           f"{sglang_prefix(1, 1)}{kv.replace('bfloat16', 'bf oat16')}")
    (line,) = check_log([kv], "sglang", log).lines
    assert line.detail() == ("line 2 (TP1): dtype: FlatKV torch.bfloat16, log torch.bf oat16 | "
                             "line 1 (TP0) agrees")
    # a line of such figures near a megabyte long is read in bounded time (about 0.4 s here):
    # a hang guard, as for the near misses below, not a timing
    long = "GiB " + "Available KV cache memory: 4 0. " * 31_000
    start = time.perf_counter()
    assert check_log(expected[:1], "vllm", long).lines[0].outcome == MISSING
    assert time.perf_counter() - start < 20


def test_a_line_in_the_other_memory_unit_differs_naming_both_units():
    # vLLM prints GiB (format_gib); a log's GB is another release's or a hand edit: the line is
    # found (it read "not in the log") and differs, its value set in FlatKV's unit, at FlatKV's
    # precision: 42.95 GB = 42,950,000,000 B = 40.0004 GiB, which is FlatKV's 40.0
    expected = falcon("vllm")
    (line,) = check_log(expected[:1], "vllm", "Available KV cache memory: 42.95 GB").lines
    assert line.outcome == DIFFERS
    assert line.detail() == ("line 1: KV cache memory (GiB): FlatKV 40.0 GiB, log 42.95 GB (the "
                             "log prints GB, FlatKV GiB: 42.95 GB is 40.0 GiB, as FlatKV's)")
    # 45.00 GB = 45,000,000,000 B = 41.909 GiB
    (line,) = check_log(expected[:1], "vllm", "Available KV cache memory: 45.00 GB").lines
    assert line.detail().endswith("(the log prints GB, FlatKV GiB: 45.00 GB is 41.9 GiB, "
                                  "not FlatKV's 40.0)")
    # on one rank of two, beside a rank that agrees
    log = (f"{vllm_prefix(0, 1)}{expected[0]}\n"
           f"{vllm_prefix(1, 1)}Available KV cache memory: 42.95 GB")
    check = check_log(expected, "vllm", log)
    assert check.lines[0].outcome == DIFFERS
    assert check.lines[0].detail().endswith("| line 1 (Worker_TP0 pid=4100) agrees")
    # SGLang's GB is 1024**3 bytes (sglang_log.GB): its GiB is the same figure, said so
    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100, K size: 0.01 GB, "
          "V size: 0.02 GB")
    (line,) = check_log([kv], "sglang", kv.replace("GB", "GiB")).lines
    assert line.detail() == (
        "line 1: K size (GB): FlatKV 0.01 GB, log 0.01 GiB (the log prints GiB, FlatKV GB, "
        "SGLang's GB being a GiB: 0.01 GiB is 0.01 GB, as FlatKV's); V size (GB): FlatKV "
        "0.02 GB, log 0.02 GiB (the log prints GiB, FlatKV GB, SGLang's GB being a GiB: "
        "0.02 GiB is 0.02 GB, as FlatKV's)")
    # a figure that reads as no number in the other unit differs, both units named
    (line,) = check_log(expected[:1], "vllm", "Available KV cache memory: nan GB").lines
    assert line.detail() == ("line 1: KV cache memory (GiB): FlatKV 40.0 GiB, log nan GB (the "
                             "log prints GB, FlatKV GiB)")


# vLLM 0.34's warm-up line of falcon-mamba's run (WARMUP_FIGURES' format), its figures as one
# printing GB (10**9 B) would give them: the requested 70.52 GiB = 75,718,883,246 B = 75.72 GB;
# the 2,155 blocks' 42,933,944,320 B (test_hand_derived_lines_falcon_mamba) = 42.93 GB
WARMUP_IN_GB = ("Memory after warmup: 1.34 GB free, 42.94 GB committed to the KV cache, 2.25 GB "
                "kept for transient activations (2.01 GB allocated at peak, 2.25 GB of torch "
                "reservation growth); 2155 KV cache blocks (42.93 GB) fit within the requested "
                "75.72 GB. Torch may reserve up to 80.55 GB.")


def test_an_elided_figures_unit_is_its_own_not_a_later_figures():
    # FlatKV's "fit within the requested ... GiB. ...": the requested figure is the run's,
    # elided, and its unit is the one right after it, in either unit. A log whose requested
    # figure is in GB (75.72) read the elision on to the Torch sentence's "75.02 GiB." and
    # took that GiB as the requested figure's; with no GiB after, not in the log at all
    (expected,) = falcon("vllm")[1:2]
    assert expected == ("Memory after warmup: ... 2155 KV cache blocks (39.99 GiB) fit within "
                        "the requested ... GiB. ...")
    requested_gb = as_logged(expected).replace("70.52 GiB.", "75.72 GB.")
    assert "requested 75.72 GB. Torch may reserve up to 75.02 GiB." in requested_gb
    match = template(expected).pattern.match(requested_gb)
    # the pattern's last elision matches nothing: it ends after the requested figure's unit
    assert requested_gb[:match.end()].endswith("the requested 75.72 GB. ")
    without_torch = requested_gb.removesuffix(" Torch may reserve up to 75.02 GiB.")
    for log in (requested_gb, without_torch, vllm_prefix(0, 1) + without_torch):
        (line,) = check_log([expected], "vllm", log).lines
        assert line.outcome == SAME, log
    # a line of the whole in GB is found, and its one compared figure differs naming both units:
    # 42.93 GB = 42,930,000,000 B = 39.98 GiB (39.9817), not FlatKV's 39.99; the elided figures'
    # GB (free, requested, Torch's) are not compared
    (line,) = check_log([expected], "vllm", vllm_prefix(0, 1) + WARMUP_IN_GB).lines
    assert line.detail() == ("line 1 (Worker_TP0 pid=4100): KV cache blocks (GiB): FlatKV 39.99 "
                             "GiB, log 42.93 GB (the log prints GB, FlatKV GiB: 42.93 GB is "
                             "39.98 GiB, not FlatKV's 39.99)")
    # the Available line elided (a budget given as vLLM 0.34's blocks): a log of it in GB is
    # found and agrees, its figure not compared, where it read as not in the log; 44.59 GiB as
    # GB is 47.88 (47,878,518,456 B)
    for available in ("44.59 GiB", "47.88 GB", "47.88GB"):
        log = f"{vllm_prefix(0, 1)}Available KV cache memory: {available}"
        (line,) = check_log(["Available KV cache memory: ... GiB"], "vllm", log).lines
        assert line.outcome == SAME, available
    # a unit word's letters are no unit: "GBs" (no vLLM line) leaves it not in the log
    log = f"{vllm_prefix(0, 1)}Available KV cache memory: 47.88 GBs"
    assert check_log(["Available KV cache memory: ... GiB"], "vllm", log).lines[0].outcome == (
        MISSING)


def test_a_prefixed_line_is_matched_where_its_message_starts():
    # "Full KV Cache is allocated" is not "KV Cache is allocated"
    expected = ["KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100, K size: 0.01 GB, "
                "V size: 0.01 GB"]
    log = sglang_prefix(0, 1) + "Full " + expected[0]
    assert check_log(expected, "sglang", log).lines[0].outcome == MISSING
    fp8 = sglang_prefix(0, 1) + expected[0].replace("bfloat16", "float8_e4m3fn")
    assert check_log(expected, "sglang", fp8).lines[0].detail() == (
        "line 1 (TP0): dtype: FlatKV torch.bfloat16, log torch.float8_e4m3fn")


def test_control_characters_in_a_line_are_shown_not_acted_on():
    # a bidirectional override would reorder what the CLI prints after it; a bell would ring
    (line,) = read_log(f"{sglang_prefix(0, 1)}swa size: 12\u202e34\x07")
    assert line.message == "swa size: 12\ufffd34\ufffd"


def test_detect_engine():
    assert detect_engine(read_log(engine_log(["x"], vllm_prefix))) == "vllm"
    assert detect_engine(read_log(engine_log(["x"], sglang_prefix))) == "sglang"
    assert detect_engine(read_log("nothing to tell\nat all")) is None
    # SGLang's server_args line pasted without its prefix (vLLM logs "non-default args: ")
    assert detect_engine(read_log("server_args={'model_path': 'x', 'tp_size': 1}")) == "sglang"
    # vLLM's key lines pasted alone, without prefixes, in its own words: the blocks fit after
    # warm-up (extensible_kv_cache.py) and the maximum concurrency on its own line, as 0.26
    # logs it (kv_cache_utils.py), each of falcon's run at other settings (2,156 blocks);
    # read as no engine's, a paste of them was told "None of FlatKV's 3 SGLang lines" too
    warmup, size = as_logged(falcon("vllm")[1]), falcon("vllm")[2]
    concurrency = size.split(", ", 1)[1]
    assert concurrency == "Maximum concurrency for 2,048 tokens per request: 2155.00x"
    for bare in (warmup.replace("2155", "2156"), concurrency.replace("2155", "2156"),
                 f"{warmup}\n{concurrency}"):
        assert detect_engine(read_log(bare)) == "vllm"
        check = check_log(falcon("sglang"), "sglang", bare)
        assert check.other_engine and not check.found
        assert check.verdict() == ("This log is vLLM's, not SGLang's: check it against vLLM's "
                                   "lines.")
    # docker compose's service name, or a journal's time and unit, before the prefix
    assert read_log("vllm-1  | " + vllm_prefix(0, 1) + "hello")[0].message == "hello"
    (journal,) = read_log("Dec 06 07:00:01 gpu-node python3[812]: INFO 12-06 07:00:01 "
                          "[gpu_worker.py:297] hello")
    assert (journal.engine, journal.source, journal.message) == ("vllm", "", "hello")


@pytest.mark.parametrize(("text", "message"), [
    ("a" * (MAX_LOG_CHARS + 1), f"the log is {MAX_LOG_CHARS + 1:,} characters, over the "
     f"{MAX_LOG_CHARS:,} this check reads"),
    ("INFO\x00\x00ELF", "the log holds a NUL character (at character 4): it is binary data"),
    ("\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f" * 3, "the log holds 36 control "
     "characters in 36: it reads as binary data"),
])
def test_bad_input_is_refused_with_its_reason(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        check_log(["x"], "vllm", text)


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="engine is 'tgi': give one of vllm, sglang"):
        check_log(["x"], "tgi", "")


def test_a_log_of_none_of_the_lines_says_what_to_paste():
    check = check_log(falcon("vllm"), "vllm", "hello\n\nworld")
    assert check.found == 0 and check.log_engine is None
    assert check.verdict() == ("None of FlatKV's 3 vLLM lines is in this log (2 lines read): "
                               "paste vLLM's start-up log of a run at these settings, from its "
                               "start to its KV cache lines.")


def test_a_blank_line_ends_a_wrapped_line():
    # the rest of a wrapped line joins it; after a blank line a line stands alone
    lines = read_log(f"{sglang_prefix(1, 2)}Use sliding window\n memory pool.\n\nnext one")
    assert [(x.number, x.source, x.engine, x.message) for x in lines] == [
        (1, "TP1", "sglang", "Use sliding window memory pool."), (4, "", None, "next one")]


def test_a_long_log_of_near_misses_is_read_in_time():
    # a line of 47,619 "Memory after warmup: " (1,000,000 characters, the most read) searched
    # from each for its elided rest took minutes; the elision's bound and a line's make it
    # linear, and each line is tested for the words of ours before it is searched
    import time

    start = time.perf_counter()
    for text in ("Memory after warmup: " * (MAX_LOG_CHARS // 21),
                 "\n".join(["Memory after warmup: " * 190] * 250)):
        assert check_log(falcon("vllm"), "vllm", text).found == 0
    assert time.perf_counter() - start < 20


def test_a_line_of_unterminated_terminal_titles_is_read_in_time():
    # 333,000 ESC ] (an OSC, a terminal title, opened and never ended by its BEL): each was
    # searched to the line's end for a BEL, 90 s for one line of 999,000 characters; an OSC
    # ends at the next ESC (its ST, ESC \\) as at a BEL, so each search stops there
    import time

    start = time.perf_counter()
    (line,) = read_log("\x1b]" * 333_000)
    assert time.perf_counter() - start < 20
    assert line.message == "\ufffd]" * (MAX_LINE_CHARS // 2)  # the ESCs shown, to the line's most
    # a title ended by ESC \\ is dropped whole, and text before a later BEL is kept
    (line,) = read_log("\x1b]0;title\x1b\\INFO ready\x07")
    assert line.message == "INFO ready\ufffd"


# Real start-up logs, a few lines each, as the engines printed them (prefixes included). They
# are read as they are; FlatKV is set to what they imply where a preset holds the model.

# vLLM 0.10.2, Qwen3-Next-80B-A3B-Instruct at TP=2 in bf16, max model len 262,144 (its
# default), an H200 each rank: SPEC 3.1's anchor. A user's terminal log kept in a public GitHub
# repository (the search index's file 7292846353; its repository is not named there), lines
# 15-16, 120-125 and 126 of it. That release logs the KV cache size and the concurrency on two
# lines, the size as num_blocks // groups x P (7,162 // 4 x 544 = 973,760), and no "Memory
# after warmup" line (vLLM 0.34's).
ANCHOR_LOG = """\
(APIServer pid=1804347) INFO 10-23 15:10:22 [config.py:390] Setting attention block size to 544 \
tokens to ensure that attention page size is >= mamba page size.
(APIServer pid=1804347) INFO 10-23 15:10:22 [config.py:411] Padding mamba page size by 1.49% to \
ensure that mamba page size and attention page size are exactly equal.
INFO 10-23 15:10:28 [__init__.py:216] Automatically detected platform cuda.
(Worker_TP1 pid=1806414) INFO 10-23 15:14:30 [gpu_worker.py:298] Available KV cache memory: \
44.59 GiB
(Worker_TP0 pid=1806413) INFO 10-23 15:14:30 [gpu_worker.py:298] Available KV cache memory: \
44.59 GiB
(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: \
973,760 tokens
(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1032] Maximum concurrency \
for 262,144 tokens per request: 14.77x
(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: \
973,760 tokens
(EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1032] Maximum concurrency \
for 262,144 tokens per request: 14.77x
Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████| 67/67 [00:06<00:00, \
10.53it/s]"""

# vLLM 0.24.0, one GPU (its engine process "EngineCore", no DP rank), max model len 131,072:
# https://github.com/noonghunna/club-3090/issues/612 (a Qwen3.6-35B-A3B NVFP4 checkpoint with
# an fp8 KV cache, which no preset holds). The two-line form with the current figure:
# int(4.33... x 131,072) = 567,978.
CLUB_3090_LOG = """\
(EngineCore pid=107) INFO 07-06 22:52:09 [gpu_worker.py:508] Available KV cache memory: 5.98 GiB
(EngineCore pid=107) INFO 07-06 22:52:09 [kv_cache_utils.py:2146] GPU KV cache size: 567,978 \
tokens
(EngineCore pid=107) INFO 07-06 22:52:09 [kv_cache_utils.py:2147] Maximum concurrency for \
131,072 tokens per request: 4.33x"""

# SGLang (ktransformers' build, before 0.5.13: no dtype in the KV line) at TP=2, a Qwen3.5 MoE
# model: https://github.com/kvcache-ai/ktransformers/issues/1870 . Its Mamba line ends in a
# space, as SGLang's f-string writes it.
SPACE = " "
KTRANSFORMERS_LOG = f"""\
[2026-02-27 17:10:28 TP0] Using KV cache dtype: torch.bfloat16
[2026-02-27 17:10:28 TP0] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: \
0.13GB, ssm_state size: 7.29GB{SPACE}
[2026-02-27 17:10:28 TP1] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: \
0.13GB, ssm_state size: 7.29GB{SPACE}
[2026-02-27 17:10:28 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB
[2026-02-27 17:10:28 TP0] Memory pool end. avail mem=4.02 GB
[2026-02-27 17:10:28 TP1] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB
[2026-02-27 17:10:29 TP0] max_total_num_tokens=580364, chunked_prefill_size=2048, \
max_prefill_tokens=16384, max_running_requests=1, context_len=8192, available_gpu_mem=3.63 GB"""


def test_sglang_s_scheduler_line_against_a_real_log_its_unmodelled_figures_elided():
    from flatkv.strategies.sglang_log import scheduler_line

    # FlatKV's scheduler line at the ktransformers log's figures: 580,364 tokens, a chunk of
    # 2,048, 1 running request, context 8,192; max_prefill_tokens (16384 there) and the memory
    # left are elided, so the line agrees, found on TP0 alone (SGLang logs it on rank 0)
    line = scheduler_line(580_364, 2_048, 1, 8_192)
    assert line == ("max_total_num_tokens=580364, chunked_prefill_size=2048, "
                    "max_prefill_tokens=..., max_running_requests=1, context_len=8192")
    lines = read_log(KTRANSFORMERS_LOG)
    (same,) = check_lines([line], "sglang", lines).lines
    assert (same.outcome, same.detail()) == (SAME, "line 7 (TP0) agrees")
    # each figure FlatKV gives is compared, named by its key
    other = scheduler_line(580_365, 4_096, 2, 16_384)
    (differs,) = check_lines([other], "sglang", lines).lines
    assert differs.outcome == DIFFERS
    assert differs.detail() == (
        "line 7 (TP0): max_total_num_tokens: FlatKV 580365, log 580364; chunked_prefill_size: "
        "FlatKV 4096, log 2048; max_running_requests: FlatKV 2, log 1; context_len: FlatKV "
        "16384, log 8192")
    # chunked prefill off, as SGLang's help gives it (-1), and no context (neither context_len
    # nor the max_running_requests it sets: elided); SGLang prints the chunk it was told and
    # reads any 0 or less as off, so a logged 0 or -5 agrees with FlatKV's -1; a chunk differs
    off = scheduler_line(580_364, -1, None, None)
    assert off == ("max_total_num_tokens=580364, chunked_prefill_size=-1, "
                   "max_prefill_tokens=..., max_running_requests=..., context_len=...")
    details = []
    for told in ("-1", "0", "-5", "2048"):
        logged = read_log(KTRANSFORMERS_LOG.replace("chunked_prefill_size=2048",
                                                    f"chunked_prefill_size={told}"))
        details.append(check_lines([off], "sglang", logged).lines[0].detail())
    assert details == ["line 7 (TP0) agrees", "line 7 (TP0) agrees", "line 7 (TP0) agrees",
                       "line 7 (TP0): chunked_prefill_size: FlatKV -1, log 2048"]
    # the other figures still count where both say off
    recount = read_log(KTRANSFORMERS_LOG.replace("chunked_prefill_size=2048",
                                                 "chunked_prefill_size=0"))
    assert check_lines([scheduler_line(580_365, -1, None, None)], "sglang",
                       recount).lines[0].detail() == (
        "line 7 (TP0): max_total_num_tokens: FlatKV 580365, log 580364")
    assert scheduler_line(None, None, None, None) == ""
    # FlatKV's chunk beside a log's chunked prefill off: the figure differs, signed
    off = read_log(KTRANSFORMERS_LOG.replace("chunked_prefill_size=2048",
                                             "chunked_prefill_size=-1"))
    (chunk,) = check_lines([line], "sglang", off).lines
    assert chunk.detail() == "line 7 (TP0): chunked_prefill_size: FlatKV 2048, log -1"


def anchor_result():
    from flatkv.units import parse_size

    profile = load_preset("Qwen3-Next-80B-A3B").with_options(tp=2).profile()
    return run_strategy("vllm", profile, budget_bytes=parse_size("44.59GiB"),
                        context_tokens=262_144)


def test_the_anchor_log_of_vllm_0_10_2():
    from flatkv.log_check import check_result

    r = anchor_result()
    assert (r.num_blocks, r.older_logged_tokens, r.logged_tokens) == (7_162, 973_760, 3_871_083)
    check = check_result(r, read_log(ANCHOR_LOG))
    assert check.log_engine == "vllm" and check.log_lines == 10
    assert [c.outcome for c in check.lines] == [SAME, SAME, SAME, MISSING, SAME]
    assert check.verdict() == ("vLLM: 4 of 5 lines are in the log and agree with it; 1 not in "
                               "it.")
    assert check.lines[0].detail() == "line 1 (APIServer pid=1804347) agrees"
    assert check.lines[2].detail() == ("lines 4 (Worker_TP1 pid=1806414), 5 (Worker_TP0 "
                                       "pid=1806413) agree")
    # 0.34's "Memory after warmup" line: this release has none
    assert check.lines[3].expected.startswith("Memory after warmup: ... 7162 KV cache blocks")
    # FlatKV's one line (3,871,083 tokens, current releases) is found as the two lines of
    # 0.19 and earlier, their size 973,760: it agrees, logged twice by the engine process
    assert check.lines[4].expected.startswith("GPU KV cache size: 3,871,083 tokens, ")
    assert check.lines[4].detail() == (
        "lines 6-7 (EngineCore_DP0 pid=1805889), 8-9 (EngineCore_DP0 pid=1805889), on two "
        "lines, its tokens as vLLM 0.19 and earlier count them, agree")
    # ... and quoted as the log has it, in that form: no log line says 3,871,083
    assert check.lines[4].shown == check_rows(check)[4]["FlatKV's line"] == (
        "GPU KV cache size: 973,760 tokens / Maximum concurrency for 262,144 tokens per "
        "request: 14.77x")
    assert check.lines[0].shown == check.lines[0].expected  # FlatKV's own line: as it is
    # a block fewer in the log (7,161 // 4 x 544 = 973,760 still; 14.76x): the concurrency
    # is named as the figure that differs
    fewer = ANCHOR_LOG.replace("14.77x", "14.76x", 1)
    kv = check_result(r, read_log(fewer)).lines[4]
    assert kv.outcome == DIFFERS and kv.shown == check.lines[4].shown  # the form it differs in
    assert kv.detail() == (
        "lines 6-7 (EngineCore_DP0 pid=1805889), on two lines, its tokens as vLLM 0.19 and "
        "earlier count them: Maximum concurrency (x): FlatKV 14.77, log 14.76 | lines 8-9 "
        "(EngineCore_DP0 pid=1805889), on two lines, its tokens as vLLM 0.19 and earlier count "
        "them, agree")


def test_the_two_line_form_of_vllm_0_24_with_the_current_figure():
    from flatkv.strategies.vllm_log import TWO_LINE_FORM

    # FlatKV's lines at the log's figures, its KV line given its two-line form as
    # with_logged_tokens words it
    kv = ("GPU KV cache size: 567,978 tokens, Maximum concurrency for 131,072 tokens per "
          "request: 4.33x")
    forms = {kv: ((TWO_LINE_FORM, kv.replace(", Maximum", "\nMaximum")),)}
    check = check_lines(["Available KV cache memory: 5.98 GiB", kv], "vllm",
                        read_log(CLUB_3090_LOG), forms)
    assert [c.outcome for c in check.lines] == [SAME, SAME]
    assert check.lines[1].detail() == ("lines 2-3 (EngineCore pid=107), on two lines, as vLLM "
                                       "0.26 logs it (0.31 and later log one), agree")
    # a token more in FlatKV's figure: named as the single line names it
    more = kv.replace("567,978", "567,979")
    check = check_lines([more], "vllm", read_log(CLUB_3090_LOG),
                        {more: ((TWO_LINE_FORM, more.replace(", Maximum", "\nMaximum")),)})
    assert check.lines[0].detail() == (
        "lines 2-3 (EngineCore pid=107), on two lines, as vLLM 0.26 logs it (0.31 and later "
        "log one): KV cache size (tokens): FlatKV 567,979, log 567,978")
    # without the forms the two lines are not FlatKV's one
    assert check_lines([kv], "vllm", read_log(CLUB_3090_LOG)).lines[0].outcome == MISSING


def test_a_real_sglang_log_of_tp_ranks_and_its_older_kv_line():
    from flatkv.strategies.sglang_log import older_forms

    lines = read_log(KTRANSFORMERS_LOG)
    assert [x.source for x in lines[:2]] == ["TP0", "TP0"] and lines[2].source == "TP1"
    # FlatKV's words at the log's figures (its KV line with the dtype 0.5.13 and later print)
    expected = ["Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, "
                "ssm_state size: 7.29GB ",
                "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 580364, K size: 4.15 GB, "
                "V size: 4.15 GB"]
    check = check_lines(expected, "sglang", lines, older_forms(expected))
    assert check.log_engine == "sglang"
    assert [c.outcome for c in check.lines] == [SAME, SAME]
    assert check.lines[0].detail() == "lines 2 (TP0), 3 (TP1) agree"
    assert check.lines[1].detail() == ("lines 4 (TP0), 6 (TP1), without its dtype, as SGLang "
                                       "before 0.5.13 logs it, agree")
    # the dtype of the form is not compared (it has none); a token more is named
    more = [expected[1].replace("580364", "580365")]
    (kv,) = check_lines(more, "sglang", lines, older_forms(more)).lines
    assert kv.detail() == ("lines 4 (TP0), 6 (TP1), without its dtype, as SGLang before 0.5.13 "
                           "logs it: #tokens: FlatKV 580365, log 580364")


def test_engine_prefixes_as_their_loggers_write_them():
    # vLLM 0.34's ColoredFormatter (vllm/logging_utils/formatter.py) on vllm/logger.py's
    # _FORMAT, after VLLM_LOGGING_PREFIX "node3 ": a cyan process tag, a green level, a grey
    # time and file; a message of two lines carries the prefix on each ("\r\n" and it)
    tag = "\x1b[0;36m(EngineCore_DP0 pid=88)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m12-06 07:00:01" \
          "\x1b[0m \x1b[90m[kv_cache_utils.py:1170]\x1b[0m "
    log = f"node3 {tag}GPU KV cache size: 9 tokens\r\nnode3 {tag}Maximum concurrency x"
    assert [(x.engine, x.source, x.message) for x in read_log(log)] == [
        ("vllm", "EngineCore_DP0 pid=88", "GPU KV cache size: 9 tokens"),
        ("vllm", "EngineCore_DP0 pid=88", "Maximum concurrency x")]
    # the same with its ESCs lost in a copy
    (lost,) = read_log(tag.replace("\x1b", "") + "hello")
    assert (lost.engine, lost.source, lost.message) == ("vllm", "EngineCore_DP0 pid=88", "hello")
    # SGLang's configure_logger: milliseconds with SGLANG_LOG_MS, its DP / TP / EP ranks (PR
    # #10622's log), none at TP 1, and a prefix with brackets of its own (an encoder's)
    assert [(x.source, x.message) for x in read_log(
        "[2025-12-26 23:01:33.120 DP0 TP0 EP0] a\n"
        "[2026-02-27 17:10:28] b\n"
        "[2026-02-27 17:10:28 encode_dp_worker[0]] c")] == [
        ("DP0 TP0 EP0", "a"), ("", "b"), ("encode_dp_worker[0]", "c")]


def test_lines_between_an_engines_that_are_no_wrapped_rest():
    # a progress bar after the anchor log's last KV line is a line of its own (joined on, its
    # "67/67" would run on from "14.77x"); a worker's print after its process tag alone, and
    # the tag alone, are that process's lines
    lines = read_log(ANCHOR_LOG)
    assert lines[-2].message == "Maximum concurrency for 262,144 tokens per request: 14.77x"
    assert (lines[-1].number, lines[-1].engine) == (10, None)
    assert lines[-1].message.startswith("Capturing CUDA graphs (mixed prefill-decode")
    log = ("(APIServer pid=1804347) INFO 10-23 15:10:19 [__init__.py:1815] Using max model len "
           "262144\n(APIServer pid=1804347) `torch_dtype` is deprecated! Use `dtype` instead!\n"
           "(Worker_TP0 pid=1806413) \n(pid=9, ip=10.0.0.2) ray worker")
    assert [(x.engine, x.source, x.message) for x in read_log(log)] == [
        ("vllm", "APIServer pid=1804347", "Using max model len 262144"),
        ("vllm", "APIServer pid=1804347", "`torch_dtype` is deprecated! Use `dtype` instead!"),
        ("vllm", "Worker_TP0 pid=1806413", ""),
        ("vllm", "pid=9, ip=10.0.0.2", "ray worker")]


@pytest.mark.parametrize(("line", "names"), [
    # the x of the concurrency is the concurrency's, not "tokens per request"'s
    ("GPU KV cache size: 1,736,095 tokens, Maximum concurrency for 262,144 tokens per request: "
     "6.62x", ["KV cache size (tokens)", "tokens per request", "Maximum concurrency (x)"]),
    ("Setting attention block size to 544 tokens to ensure that attention page size is >= "
     "mamba page size.", ["attention block size (tokens)"]),
    ("Add 4 padding layers, may waste at most 8.33% KV cache memory",
     ["padding layers", "waste at most (%)"]),
    ("Memory after warmup: ... 3212 KV cache blocks (39.99 GiB) fit within the requested ... "
     "GiB. ...", ["KV cache blocks", "KV cache blocks (GiB)"]),
    ("max_running_requests is capped to 52 by the mamba state cache (max_mamba_cache_size=262, "
     "5 state slots per request).",
     ["max_running_requests is capped", "max_mamba_cache_size", "state slots"]),
    ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 920754, K size: 10.54 GB, V size: "
     "10.54 GB", ["dtype", "#tokens", "K size (GB)", "V size (GB)"]),
    # SGLang's Mamba line while drafting puts no comma after a size: the unit glued to the
    # figure before ("11.46GB") is that figure's, not a word of the next one's name
    ("Mamba Cache is allocated. max_mamba_cache_size: 162, conv_state size: 0.27GB, ssm_state "
     "size: 11.46GB intermediate_ssm_state_cache size: 6.96GB intermediate_conv_window_cache "
     "size: 0.09GB ", ["max_mamba_cache_size", "conv_state size (GB)", "ssm_state size (GB)",
                       "intermediate_ssm_state_cache size (GB)",
                       "intermediate_conv_window_cache size (GB)"]),
])
def test_a_figure_is_named_by_the_words_that_say_what_it_counts(line, names):
    assert list(template(line).names) == names


def test_the_logged_run_gives_its_blocks_memory_and_context_once_they_agree():
    from flatkv.log_check import LoggedRun, logged_run

    # falcon-mamba-7b in 40 GiB at 2,048 tokens: 42,949,672,960 // 311,296 // 64 = 2,155 blocks
    lines = [vllm_prefix(rank, 1) + as_logged(line) for rank in (0, 1)
             for line in falcon("vllm")]
    run = logged_run(read_log("\n".join(lines)))
    assert run == LoggedRun(blocks=42_949_672_960 // 311_296 // 64, memory="40.0 GiB",
                            context=2_048, least_tp=2) and run.blocks == 2_155  # TP0, TP1
    # a second run in the same log with another context: that figure is not told; an SGLang
    # line never is read for it
    other = lines[-1].replace("2,048 tokens per request", "4,096 tokens per request")
    assert logged_run(read_log("\n".join([*lines, other]))).context is None
    sglang = sglang_prefix(0, 2) + "Maximum concurrency for 8,192 tokens per request: 1.00x"
    assert logged_run(read_log("\n".join([*lines, sglang]))).context == 2_048


def test_an_available_line_in_gb_is_offered_as_its_budget_exactly():
    from flatkv.log_check import LoggedRun, RunSettings, logged_changes, logged_run
    from flatkv.log_check import printed_available as printed

    # SPEC's anchor log with its Available lines as a build printing GB (10**9 B) would print
    # them: the 44.59 GiB budget (floor(44.59 x 2**30) = 47,878,147,932 B) is 47.88 GB. Its
    # figure is read as printed, "47.88 GB", a budget of 47,880,000,000 B exactly (its P, 544,
    # the "Setting attention block size" line's, read too)
    gb = ANCHOR_LOG.replace("44.59 GiB", "47.88 GB")
    assert logged_run(read_log(gb)) == LoggedRun(memory="47.88 GB", context=262_144,
                                                 least_tp=2, vllm_block_size=544)
    assert logged_run(read_log(gb.replace("47.88 GB", "47.88 GBs"))).memory is None
    # the settings' own figure in both units, each to 0.01 as printed: 40 GiB =
    # 42,949,672,960 B = 40.0 GiB = 42.95 GB; 47,880,000,000 B = 44.5917 GiB = 44.59 GiB
    assert printed(40 << 30) == ("40.0 GiB", "42.95 GB")
    assert printed(47_880_000_000) == ("44.59 GiB", "47.88 GB")
    assert printed(47_878_147_932) == ("44.59 GiB", "47.88 GB")
    now = RunSettings(tp=2, attn_dp=1, mamba_cache_mode="none", context=262_144, chunk=8_192,
                      available=printed(40 << 30))
    # offered at 40 GiB, as the GiB figure is; not where the settings print it already, in
    # either unit (47.9 GB is 47.90 GB: the same number as printed)
    assert logged_changes(LoggedRun(memory="47.88 GB"), now, lambda c: now) == {
        "kv_memory": "47.88 GB"}
    for memory in ("42.95 GB", "40.0 GiB", "40.00 GiB"):
        assert logged_changes(LoggedRun(memory=memory), now, lambda c: now) == {}, memory
    at_47 = RunSettings(tp=2, attn_dp=1, mamba_cache_mode="none", context=262_144,
                        chunk=8_192, available=printed(47_900_000_000))
    assert logged_changes(LoggedRun(memory="47.9 GB"), at_47, lambda c: at_47) == {}
    # FlatKV's 44.59 GiB line beside the log's 47.88 GB differs in its unit alone (47.88 GB
    # is 44.59 GiB): no setting changes that, so it is no figure a setting would make agree;
    # 45.00 GB (41.91 GiB) differs in value too
    r = anchor_result()
    (line,) = [c for c in check_result(r, read_log(gb)).lines
               if c.expected.startswith("Available")]
    assert line.outcome == DIFFERS and line.value_differences == 0
    assert line.detail().endswith("(the log prints GB, FlatKV GiB: 47.88 GB is 44.59 GiB, as "
                                  "FlatKV's)")
    (line,) = check_log(falcon("vllm")[:1], "vllm", "Available KV cache memory: 45.00 GB").lines
    assert line.value_differences == 1


def test_the_logged_run_gives_the_tp_its_settings_line_names():
    from flatkv.log_check import logged_run

    # vLLM's engine config line (config/vllm.py 2904), SGLang's server_args: a dict since its
    # arg groups (entrypoints/engine.py 311), a ServerArgs(...) before
    vllm = ("(EngineCore_DP0 pid=1805889) INFO 10-23 15:10:30 [core.py:77] Initializing a V1 LLM "
            "engine (v0.10.2) with config: model='Qwen/Qwen3-Next-80B-A3B-Instruct', "
            "max_seq_len=262144, tensor_parallel_size=2, pipeline_parallel_size=1, "
            "data_parallel_size=1")
    assert logged_run(read_log(vllm)).tp == 2
    for server_args in ("server_args={'model_path': 'x', 'tp_size': 4, 'dp_size': 1}",
                        "server_args=ServerArgs(model_path='x', tp_size=4, dp_size=1)"):
        assert logged_run(read_log(f"[2026-12-06 07:00:00] {server_args}")).tp == 4
    # without a settings line, the ranks the prefixes name, the least TP that has them:
    # vLLM's workers TP0 to TP3 (a pipeline stage's, an expert-parallel one's too), SGLang's
    # TP5 among its DP and EP ranks; a rank TP0 alone says nothing (a TP 1 run names none);
    # a settings line says the TP itself
    assert logged_run(read_log("\n".join(vllm_prefix(rank, 1) + "x" for rank in range(4)))
                      ).least_tp == 4
    for worker in ("Worker_PP1_TP1", "Worker_TP1_EP1", "Worker_TP1_DCP1"):
        assert logged_run(read_log(f"({worker} pid=7) INFO 12-06 07:00:01 [a.py:1] x")
                          ).least_tp == 2, worker
    assert logged_run(read_log("[2025-12-26 23:01:33.120 DP1 TP5 EP5] a")).least_tp == 6
    assert logged_run(read_log("[2026-12-06 07:01:01 TP10] a")).least_tp == 11
    assert logged_run(read_log(sglang_prefix(0, 1) + "a")).least_tp is None
    told = logged_run(read_log(vllm + "\n" + vllm_prefix(3, 1) + "x"))
    assert (told.tp, told.least_tp) == (2, None)
    # two runs of other TPs: not told; a line of neither engine's settings: not read
    assert logged_run(read_log(vllm + "\n" + vllm.replace("size=2", "size=4"))).tp is None
    assert logged_run(read_log("[2026-12-06 07:00:00] tp_size=4")).tp is None


def test_a_logged_figure_of_thousands_of_digits_is_not_read():
    from flatkv.log_check import logged_run

    # a line reads 100,000 characters: a figure of 5,000 digits (past the 4,300 int() reads)
    # is no run's and is not read, where it raised int()'s own ValueError ("Exceeds the limit
    # (4300 digits) for integer string conversion") as compare --check-log's error line;
    # the line's other figures are read, and a figure of 20 digits still is
    huge = "9" * 5_000
    run = logged_run(read_log(f"[2026-12-06 07:00:00] server_args={{'tp_size': 2, "
                              f"'page_size': {huge}, 'mamba_track_interval': {huge}, "
                              f"'attn_dp_size': {huge}}}"))
    assert (run.tp, run.sglang_page_size, run.sglang_mamba_track_interval, run.attn_dp) == (
        2, None, None, None)
    run = logged_run(read_log(f"[2026-12-06 07:00:00 TP0] max_total_num_tokens={huge}, "
                              f"chunked_prefill_size=-{huge}, context_len=32768"))
    assert (run.sglang_tokens, run.chunk, run.context) == (None, None, 32_768)
    assert logged_run(read_log(f"[2026-12-06 07:00:00] server_args={{'tp_size': {'9' * 20}}}")
                      ).tp == 99_999_999_999_999_999_999


def test_the_logged_run_gives_sglangs_attention_dp_from_its_server_args():
    from flatkv.log_check import logged_run

    # 0.5.23's resolved dict gives attn_dp_size (its deprecated enable_dp_attention reports
    # the width, dp_size 1: the width is read); before its arg groups, --dp-size with
    # --enable-dp-attention, and without it attention over the whole TP (D 1: dp_size
    # replicas of the whole model)
    for server_args, d in (
            ("{'tp_size': 8, 'attn_dp_size': 8, 'dp_size': 1, 'enable_dp_attention': True}", 8),
            ("ServerArgs(tp_size=8, dp_size=4, enable_dp_attention=True)", 4),
            ("{'tp_size': 8, 'attn_dp_size': 1}", 1),
            ("ServerArgs(tp_size=8, dp_size=2, enable_dp_attention=False)", 1),
            ("{'tp_size': 8, 'dp_size': 2, 'enable_dp_attention': False}", 1),
            # the settings line says nothing of attention DP: not told
            ("ServerArgs(tp_size=8, dp_size=2)", None)):
        assert logged_run(read_log(f"[2026-12-06 07:00:00] server_args={server_args}")
                          ).attn_dp == d, server_args


# SGLang's server_args of a run at --page-size 64 and --mamba-track-interval 512 (its dict)
PAGE_64_SERVER_ARGS = "server_args={'tp_size': 1, 'page_size': 64, 'mamba_track_interval': 512}"


def qwen3_next_sglang_lines_at_page_64() -> list[str]:
    """Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 262,144 tokens run at page 64 and track
    interval 512 (its extra_buffer radix cache tracks state): its token pool keeps whole pages,
    920,754 // 64 = 14,386 pages = 920,704 tokens (920,754 at page 1)."""
    lines = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                         budget_bytes=40 << 30, context_tokens=262_144,
                         options=StrategyOptions(sglang_page_size=64,
                                                 sglang_mamba_track_interval=512)
                         ).extras["log_lines"]
    assert "#tokens: 920704," in lines[2]
    return lines


def test_the_logged_run_gives_sglangs_page_size_and_track_interval_from_its_server_args():
    from dataclasses import replace

    from flatkv.log_check import LoggedRun, RunSettings, logged_changes, logged_run
    from flatkv.log_check import sglang_page_settings as page_settings

    # SGLang's server_args (its dict since its arg groups, a ServerArgs(...) before) gives its
    # --page-size and --mamba-track-interval; a page_size of None (left to SGLang) and another
    # field ending in page_size (hicache_page_size) are not read
    for server_args in ("server_args={'tp_size': 1, 'hicache_page_size': 1, 'page_size': 64, "
                        "'mamba_track_interval': 512}",
                        "server_args=ServerArgs(tp_size=1, hicache_page_size=1, page_size=64, "
                        "mamba_track_interval=512)"):
        run = logged_run(read_log(f"[2026-12-06 07:00:00] {server_args}"))
        assert run == LoggedRun(tp=1, sglang_page_size=64, sglang_mamba_track_interval=512)
    run = logged_run(read_log("[2026-12-06 07:00:00] server_args=ServerArgs("
                              "hicache_page_size=1, page_size=None, mamba_track_interval=256)"))
    assert run == LoggedRun(sglang_mamba_track_interval=256)
    # a vLLM line of those words is not SGLang's
    assert logged_run(read_log(vllm_prefix(0, 1) + "server_args={'page_size': 64}")) == (
        LoggedRun())
    # the settings hold each where it acts on SGLang's figures or checks: a page for Llama (no
    # track interval: no state), both for Qwen3-Next (its extra_buffer radix cache), neither
    # for DeepSeek-V3.2, whose sparse attention runs pages of 64 whatever is told
    options = StrategyOptions()
    # (the overlap and the radix cache strategy beside the interval: ``test_..._overlap_...``,
    # ``test_..._mamba_radix_cache_strategy``)
    assert [{k: v for k, v in page_settings(load_preset(name).profile(), options).items()
             if k in ("sglang_page_size", "sglang_mamba_track_interval")} for name in (
        "Llama-3.1-8B", "Qwen3-Next-80B-A3B", "DeepSeek-V3.2")] == [
        {"sglang_page_size": 1, "sglang_mamba_track_interval": None},
        {"sglang_page_size": 1, "sglang_mamba_track_interval": 256},
        {"sglang_page_size": None, "sglang_mamba_track_interval": None}]
    # a log's that the settings lack is offered, after the mode, before the budget and context
    now = RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=4_096, chunk=8_192,
                      sglang_page_size=1, sglang_mamba_track_interval=256)
    run = LoggedRun(sglang_page_size=64, sglang_mamba_track_interval=512, tp=2, context=8_192)
    assert list(logged_changes(run, now, lambda c: now).items()) == [
        ("tp", 2), ("sglang_page_size", 64), ("sglang_mamba_track_interval", 512),
        ("context", 8_192)]
    # not where the settings hold none (it acts on nothing there), where they agree, nor past
    # what the pages take (a page of 2**20 + 1 tokens; an interval past 2**40)
    unset = replace(now, sglang_page_size=None, sglang_mamba_track_interval=None)
    assert logged_changes(run, unset, lambda c: unset) == {"tp": 2, "context": 8_192}
    assert logged_changes(LoggedRun(sglang_page_size=1, sglang_mamba_track_interval=256), now,
                          lambda c: now) == {}
    assert logged_changes(LoggedRun(sglang_page_size=2**20 + 1,
                                    sglang_mamba_track_interval=2**40 + 1), now,
                          lambda c: now) == {}
    assert logged_changes(LoggedRun(sglang_page_size=2**20), now, lambda c: now) == {
        "sglang_page_size": 2**20}


# SGLang's server_args of a run at --mamba-radix-cache-strategy extra_buffer_lazy (its dict)
LAZY_SERVER_ARGS = "server_args={'tp_size': 1, 'mamba_radix_cache_strategy': 'extra_buffer_lazy'}"


# SGLang 0.5.23's whole server_args line of a Qwen3-Next run with extra_buffer_lazy: its 546
# fields in arg_groups/field_order.py's order, each at its fields/*.py default but the run's
# (model_path, tp_size 1, page_size 1, the strategy, the memory fraction, chunk and context),
# 18,265 characters, its strategy at character 10,917 (a line of its dict is that long)
FULL_SERVER_ARGS = (Path(__file__).resolve().parents[1] / "assets" / "fixtures"
                    / "sglang-0.5.23-server-args-qwen3-next-lazy.txt").read_text().strip()


def test_a_whole_sglang_server_args_line_is_read_to_its_end():
    # its strategy and track interval sit past character 10,000 of 18,265: a line cut at 4,000
    # read its TP and page size but neither of them, so a real log's strategy was never offered
    assert len(FULL_SERVER_ARGS) == 18_265
    assert FULL_SERVER_ARGS.index("'mamba_radix_cache_strategy': 'extra_buffer_lazy'") == 10_917
    assert FULL_SERVER_ARGS.index("'mamba_track_interval': 256") == 11_001
    run = logged_run(read_log(f"[2026-12-06 07:00:00] {FULL_SERVER_ARGS}"))
    assert (run.tp, run.attn_dp, run.sglang_page_size, run.sglang_mamba_track_interval,
            run.sglang_mamba_radix_cache_strategy, run.sglang_overlap_schedule) == (
        1, 1, 1, 256, "extra_buffer_lazy", True)


def test_a_log_of_lines_at_the_most_a_line_holds_is_checked_in_time():
    # 1 MB of lines of MAX_LINE_CHARS, each one of FlatKV's lines' openings over and over (each
    # opening a match to try, its figures and elisions to search): a hang guard, as each runs in
    # well under a second here
    expected = qwen3_next_sglang_lazy_lines()
    openings = [line[:40] for line in expected] + [FULL_SERVER_ARGS[:40]]
    log = "\n".join("[2026-12-06 07:00:00 TP0] " + (opening * (MAX_LINE_CHARS // 40))
                    for opening in openings * 2)[:MAX_LOG_CHARS]
    assert len(log) == MAX_LOG_CHARS
    start = time.perf_counter()
    check = check_log(expected, "sglang", log)
    assert time.perf_counter() - start < 30
    assert check.count(SAME) == 0


def qwen3_next_sglang_lazy_lines() -> list[str]:
    """Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 32,768 tokens run with extra_buffer_lazy:
    the same 262 state slots and 920,754 tokens as auto, but a running request holds 3 + 1
    slots, not 3 + 2, so max_running_requests is 262 // 4 = 65, not 262 // 5 = 52."""
    assert (262 // 4, 262 // 5) == (65, 52)
    return _qwen3_next_sglang_lines_of_4_slots(StrategyOptions(
        sglang_mamba_radix_cache_strategy="extra_buffer_lazy"))


def _qwen3_next_sglang_lines_of_4_slots(options: StrategyOptions) -> list[str]:
    """Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 32,768 tokens at ``options``, which
    hold 4 state slots a running request: 262 request slots, 262 // 4 = 65 running, 920,754
    tokens."""
    lines = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                         budget_bytes=40 << 30, context_tokens=32_768,
                         options=options).extras["log_lines"]
    assert lines[0].startswith("max_running_requests is capped to 65 by the mamba state cache "
                               "(max_mamba_cache_size=262, 4 state slots per request)")
    assert "#tokens: 920754," in lines[2] and "max_running_requests=65," in lines[3]
    return lines


def test_the_logged_run_gives_sglangs_mamba_radix_cache_strategy_from_its_server_args():
    from dataclasses import replace

    from flatkv.log_check import (
        LoggedRun,
        RunSettings,
        check_result,
        logged_changes,
        logged_run,
        sglang_page_settings,
    )

    # its dict and its ServerArgs(...) quote the strategy alike; explicit extra_buffer and
    # no_buffer are read as logged
    for server_args, told in (
            ("{'tp_size': 1, 'mamba_radix_cache_strategy': 'extra_buffer_lazy'}",
             "extra_buffer_lazy"),
            ("ServerArgs(tp_size=1, mamba_radix_cache_strategy='auto')", "auto"),
            ("ServerArgs(tp_size=1, mamba_radix_cache_strategy='no_buffer')", "no_buffer")):
        run = logged_run(read_log(f"[2026-12-06 07:00:00] server_args={server_args}"))
        assert run == LoggedRun(tp=1, sglang_mamba_radix_cache_strategy=told), server_args
    # the settings hold it where the interval acts, on a model of SGLang's extra_buffer radix
    # cache: Qwen3-Next, not Llama (no state) nor LFM2 (no_buffer only: SGLang refuses it);
    # as SGLang logs it, auto as the cache it picks (extra_buffer with overlap scheduling)
    lazy = StrategyOptions(sglang_mamba_radix_cache_strategy="extra_buffer_lazy")
    assert [sglang_page_settings(load_preset(name).profile(), options)[
        "sglang_mamba_radix_cache_strategy"] for name, options in (
        ("Qwen3-Next-80B-A3B", StrategyOptions()), ("Qwen3-Next-80B-A3B", lazy),
        ("Llama-3.1-8B", StrategyOptions()), ("LFM2-1.2B", StrategyOptions()))] == [
        "extra_buffer", "extra_buffer_lazy", None, None]
    # the Qwen3-Next lazy log checked at auto: its two lines of max_running_requests (the
    # cap line and the scheduler line) differ, 65 logged, 52 at auto (262 // 5), its pools
    # agree; the strategy is offered, and (back) auto where a log ran auto
    profile = load_preset("Qwen3-Next-80B-A3B").profile()
    log = read_log("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line}" for i, line in enumerate(
        (LAZY_SERVER_ARGS, *qwen3_next_sglang_lazy_lines()))))
    at_auto = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768)
    assert "capped to 52 by" in at_auto.extras["log_lines"][0]
    assert check_result(at_auto, log).count(DIFFERS) == 2
    now = RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=32_768, chunk=8_192,
                      **sglang_page_settings(profile, StrategyOptions()))
    assert logged_changes(logged_run(log), now, lambda c: now) == {
        "sglang_mamba_radix_cache_strategy": "extra_buffer_lazy"}
    at_lazy = replace(now, sglang_mamba_radix_cache_strategy="extra_buffer_lazy")
    assert logged_changes(LoggedRun(sglang_mamba_radix_cache_strategy="auto"), at_lazy,
                          lambda c: at_lazy) == {"sglang_mamba_radix_cache_strategy": "auto"}
    # nothing where they agree (a logged extra_buffer is what auto runs here), nor where the
    # model runs no extra buffer (None); a logged no_buffer is offered
    assert logged_changes(LoggedRun(sglang_mamba_radix_cache_strategy="extra_buffer_lazy"),
                          at_lazy, lambda c: at_lazy) == {}
    assert logged_changes(LoggedRun(sglang_mamba_radix_cache_strategy="extra_buffer"), now,
                          lambda c: now) == {}
    unset = replace(now, sglang_mamba_radix_cache_strategy=None)
    assert logged_changes(logged_run(log), unset, lambda c: unset) == {}
    assert logged_changes(LoggedRun(sglang_mamba_radix_cache_strategy="no_buffer"), now,
                          lambda c: now) == {"sglang_mamba_radix_cache_strategy": "no_buffer"}


# SGLang 0.5.23's server_args line (ServerArgs.resolved_dict, its fields in field_order.py's
# order, most left out here) of Qwen3-Next-80B-A3B run with --disable-overlap-schedule
# --mamba-radix-cache-strategy extra_buffer: the strategy as told, where auto would log the
# no_buffer it picks without overlap scheduling at page 1
EXTRA_BUFFER_SERVER_ARGS = (
    "server_args={'model_path': 'Qwen/Qwen3-Next-80B-A3B-Instruct', 'context_length': 32768, "
    "'kv_cache_dtype': 'auto', 'mem_fraction_static': 0.85, 'max_running_requests': None, "
    "'chunked_prefill_size': 8192, 'page_size': 1, 'disable_radix_cache': False, "
    "'disable_overlap_schedule': True, 'tp_size': 1, 'attn_dp_size': 1, "
    "'enable_dp_attention': False, 'max_mamba_cache_size': None, 'mamba_ssm_dtype': None, "
    "'mamba_full_memory_ratio': 0.9, 'mamba_radix_cache_strategy': 'extra_buffer', "
    "'uses_mamba_radix_cache': True, 'mamba_track_interval': 256, "
    "'linear_attn_backend': 'triton'}")


def qwen3_next_sglang_extra_buffer_lines() -> list[str]:
    """Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 32,768 tokens run without overlap
    scheduling, extra_buffer told: the same 262 request state slots and 920,754 tokens as auto,
    but 3 + 1 slots a running request where auto runs no_buffer's 3, so max_running_requests
    is 262 // 4 = 65, not 262 // 3 = 87."""
    assert (262 // 4, 262 // 3) == (65, 87)
    return _qwen3_next_sglang_lines_of_4_slots(StrategyOptions(
        sglang_overlap_schedule=False, sglang_mamba_radix_cache_strategy="extra_buffer"))


def test_a_logged_extra_buffer_or_no_buffer_is_offered_where_it_acts():
    from dataclasses import replace

    from flatkv.log_check import RunSettings, check_result, logged_changes, logged_run
    from flatkv.log_check import sglang_page_settings as page_settings

    # its server_args gives the strategy, page, interval and TP; at the settings without
    # overlap scheduling auto runs no_buffer (logged "no_buffer"): the cap and scheduler lines
    # differ, 65 logged, 87 there; extra_buffer is offered, alone (page, interval, TP agree)
    profile = load_preset("Qwen3-Next-80B-A3B").profile()
    log = read_log("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line}" for i, line in enumerate(
        (EXTRA_BUFFER_SERVER_ARGS, *qwen3_next_sglang_extra_buffer_lines()))))
    run = logged_run(log)
    assert (run.tp, run.sglang_page_size, run.sglang_mamba_track_interval,
            run.sglang_mamba_radix_cache_strategy) == (1, 1, 256, "extra_buffer")
    off = StrategyOptions(sglang_overlap_schedule=False)
    at_auto = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                           options=off)
    assert "capped to 87 by" in at_auto.extras["log_lines"][0]
    assert check_result(at_auto, log).count(DIFFERS) == 2

    def settings(options: StrategyOptions) -> RunSettings:
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=32_768,
                           chunk=8_192, **page_settings(profile, options))

    now = settings(off)
    assert now.sglang_mamba_radix_cache_strategy == "no_buffer"
    assert logged_changes(run, now, lambda c: now) == {
        "sglang_mamba_radix_cache_strategy": "extra_buffer"}
    # taken, every line agrees and nothing more is offered
    taken = replace(off, sglang_mamba_radix_cache_strategy="extra_buffer")
    at_taken = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                            options=taken)
    assert check_result(at_taken, log).count(DIFFERS) == 0
    assert logged_changes(run, settings(taken), lambda c: settings(taken)) == {}
    # a run of auto with overlap scheduling logs the extra_buffer it picks: beside the same
    # settings, no change; beside overlap off (no_buffer there), extra_buffer is offered
    on_log = read_log("[2026-12-06 07:00:00 TP0] " + EXTRA_BUFFER_SERVER_ARGS.replace(
        "'disable_overlap_schedule': True", "'disable_overlap_schedule': False"))
    on = settings(StrategyOptions())
    assert logged_changes(logged_run(on_log), on, lambda c: on) == {}
    # a run of auto without overlap scheduling logs no_buffer and overlap off: beside overlap
    # on, overlap off is offered, and no_buffer is what auto logs once it is taken (no told
    # no_buffer beside overlap on, which SGLang refuses); nothing beside overlap off
    no_log = read_log("[2026-12-06 07:00:00 TP0] " + EXTRA_BUFFER_SERVER_ARGS.replace(
        "'extra_buffer'", "'no_buffer'"))
    assert logged_changes(logged_run(no_log), on, lambda c: settings(
        replace(StrategyOptions(), **c))) == {"sglang_overlap_schedule": False}
    assert logged_changes(logged_run(no_log), now, lambda c: now) == {}


# SGLang 0.5.23's server_args line (ServerArgs.resolved_dict, its fields in field_order.py's
# order, most left out here) of Qwen3-Next-80B-A3B run with --disable-overlap-schedule alone:
# its strategy auto logged as the no_buffer it picks without overlap scheduling at page 1
# (overrides._mamba_radix_cache_resolution 480-486)
OVERLAP_OFF_SERVER_ARGS = EXTRA_BUFFER_SERVER_ARGS.replace("'extra_buffer'", "'no_buffer'")
# ... and as a ServerArgs(...), the form before its arg groups
OVERLAP_OFF_SERVER_ARGS_OLDER = (
    "server_args=ServerArgs(model_path='Qwen/Qwen3-Next-80B-A3B-Instruct', "
    "context_length=32768, kv_cache_dtype='auto', mem_fraction_static=0.85, "
    "max_running_requests=None, chunked_prefill_size=8192, page_size=1, "
    "disable_radix_cache=False, disable_overlap_schedule=True, enable_mixed_chunk=False, "
    "tp_size=1, pp_size=1, dp_size=1, enable_dp_attention=False, "
    "enable_two_batch_overlap=False, mamba_full_memory_ratio=0.9, "
    "mamba_radix_cache_strategy='no_buffer', mamba_track_interval=256)")


def qwen3_next_sglang_overlap_off_lines() -> list[str]:
    """Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 32,768 tokens run without overlap
    scheduling (auto: no_buffer): the same 262 request state slots and 920,754 tokens as with
    it, but 3 slots a running request where overlap's extra_buffer holds 3 + 2, so
    max_running_requests is 262 // 3 = 87, not 262 // 5 = 52."""
    assert (262 // 3, 262 // 5) == (87, 52)
    lines = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                         budget_bytes=40 << 30, context_tokens=32_768,
                         options=StrategyOptions(sglang_overlap_schedule=False)
                         ).extras["log_lines"]
    assert lines[0].startswith("max_running_requests is capped to 87 by the mamba state cache "
                               "(max_mamba_cache_size=262, 3 state slots per request)")
    assert "#tokens: 920754," in lines[2] and "max_running_requests=87," in lines[3]
    return lines


def test_the_logged_run_gives_sglangs_overlap_scheduling_from_its_server_args():
    from flatkv.log_check import LoggedRun, logged_run
    from flatkv.log_check import sglang_page_settings as page_settings
    from flatkv.strategies.sglang import logged_overlap

    # its dict and its ServerArgs(...) give disable_overlap_schedule True or False: overlap
    # off or on; another field of those words (enable_two_batch_overlap) is not read, nor a
    # value that is no bool. Quoted, as SGLang's repr of a bool never is (an edited paste),
    # it is read as the bool it says: it went unread, unsaid
    for server_args, on in (("{'tp_size': 1, 'disable_overlap_schedule': True}", False),
                            ("{'tp_size': 1, 'disable_overlap_schedule': False}", True),
                            ("ServerArgs(tp_size=1, disable_overlap_schedule=True, "
                             "enable_two_batch_overlap=False)", False),
                            ("ServerArgs(tp_size=1, enable_two_batch_overlap=False)", None),
                            ("{'tp_size': 1, 'disable_overlap_schedule': 'True'}", False),
                            ("{'tp_size': 1, 'disable_overlap_schedule': 'False'}", True),
                            ('ServerArgs(tp_size=1, disable_overlap_schedule="True")', False),
                            ("{'tp_size': 1, 'disable_overlap_schedule': 'True\"}", None),
                            ("{'tp_size': 1, 'disable_overlap_schedule': 'yes'}", None),
                            ("{'tp_size': 1, 'disable_overlap_schedule': Trueish}", None)):
        run = logged_run(read_log(f"[2026-12-06 07:00:00] server_args={server_args}"))
        assert run == LoggedRun(tp=1, sglang_overlap_schedule=on), server_args
    for server_args in (OVERLAP_OFF_SERVER_ARGS, OVERLAP_OFF_SERVER_ARGS_OLDER):
        run = logged_run(read_log(f"[2026-12-06 07:00:00 TP0] {server_args}"))
        assert (run.tp, run.sglang_page_size, run.sglang_overlap_schedule,
                run.sglang_mamba_radix_cache_strategy) == (1, 1, False, "no_buffer")
    # what SGLang logs at the settings (its resolved value): overlap as told, and off where
    # auto picks no_buffer, which it turns overlap off for: LFM2's at its defaults (no extra
    # buffer), not Qwen3-Next's with it off told extra_buffer, nor where the radix cache is
    # off (no strategy picked) or the model keeps no state (Llama)
    qwen, lfm2, llama = (load_preset(name).profile() for name in (
        "Qwen3-Next-80B-A3B", "LFM2-1.2B", "Llama-3.1-8B"))
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert [logged_overlap(profile, options) for profile, options in (
        (qwen, StrategyOptions()), (qwen, off), (lfm2, StrategyOptions()),
        (qwen, StrategyOptions(sglang_disable_radix_cache=True)), (llama, StrategyOptions()),
        (qwen, StrategyOptions(sglang_mamba_radix_cache_strategy="extra_buffer")))] == [
        True, False, False, True, True, True]
    # the settings hold it where it sets S: an extra_buffer radix cache model (Qwen3-Next,
    # Nemotron-H), not LFM2 (no_buffer whatever it is) nor Llama (no state), and not where S
    # is told or the radix cache is off (it sets nothing there)
    nemotron = load_preset("Nemotron-H-8B").profile()
    assert [page_settings(profile, options)["sglang_overlap_schedule"] for profile, options in (
        (qwen, StrategyOptions()), (qwen, off), (nemotron, off), (lfm2, StrategyOptions()),
        (llama, StrategyOptions()), (qwen, StrategyOptions(sglang_slots_per_request=5)),
        (qwen, StrategyOptions(sglang_disable_radix_cache=True)))] == [
        True, False, False, None, None, None, None]


def test_a_logged_overlap_off_is_offered_with_the_strategy_it_resolves_to():
    from dataclasses import replace

    from flatkv.log_check import RunSettings, check_result, logged_changes, logged_run
    from flatkv.log_check import sglang_page_settings as page_settings
    from flatkv.strategies.sglang import lazy_overlap_refusal, no_buffer_refusal

    profile = load_preset("Qwen3-Next-80B-A3B").profile()

    def settings(options: StrategyOptions) -> RunSettings:
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=32_768,
                           chunk=8_192, **page_settings(profile, options))

    def at(base: StrategyOptions):
        return lambda taken: settings(replace(base, **taken))

    def lines_at(options: StrategyOptions):
        return run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                            options=options)

    # a run with --disable-overlap-schedule (its server_args: overlap off, auto as no_buffer)
    # checked at the defaults: its cap and scheduler lines differ, 87 logged, 52 there (3 + 2
    # slots with overlap), its pools agree
    for server_args in (OVERLAP_OFF_SERVER_ARGS, OVERLAP_OFF_SERVER_ARGS_OLDER):
        log = read_log("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line}" for i, line in
                                 enumerate((server_args, *qwen3_next_sglang_overlap_off_lines()))))
        at_default = lines_at(StrategyOptions())
        assert "capped to 52 by" in at_default.extras["log_lines"][0]
        check = check_result(at_default, log)
        assert (check.count(DIFFERS), check.count(SAME)) == (2, 2)
        # overlap off is offered, alone: taken, auto logs the no_buffer it picks, as the log
        # does (a told no_buffer beside overlap on would be refused: no_buffer_refusal)
        run = logged_run(log)
        assert logged_changes(run, settings(StrategyOptions()), at(StrategyOptions())) == {
            "sglang_overlap_schedule": False}
        assert no_buffer_refusal(profile, StrategyOptions(
            sglang_mamba_radix_cache_strategy="no_buffer")) is not None
        off = StrategyOptions(sglang_overlap_schedule=False)
        check = check_result(lines_at(off), log)
        assert (check.count(DIFFERS), check.found) == (0, 4)
        assert logged_changes(run, settings(off), at(off)) == {}
    # beside extra_buffer_lazy told (overlap on), both: overlap off, and no_buffer, as lazy
    # without overlap is refused (lazy_overlap_refusal); taken together SGLang takes them
    # (no_buffer told with overlap off) and every line agrees
    lazy = StrategyOptions(sglang_mamba_radix_cache_strategy="extra_buffer_lazy")
    assert logged_changes(run, settings(lazy), at(lazy)) == {
        "sglang_overlap_schedule": False, "sglang_mamba_radix_cache_strategy": "no_buffer"}
    assert lazy_overlap_refusal(replace(lazy, sglang_overlap_schedule=False)) is not None
    both = replace(lazy, sglang_overlap_schedule=False,
                   sglang_mamba_radix_cache_strategy="no_buffer")
    assert no_buffer_refusal(profile, both) is None
    assert check_result(lines_at(both), log).count(DIFFERS) == 0
    # a run of extra_buffer told without overlap, checked at the defaults: both, overlap off
    # then extra_buffer (auto there would log no_buffer); taken, every line agrees (65: 3 + 1)
    told = read_log("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line}" for i, line in enumerate(
        (EXTRA_BUFFER_SERVER_ARGS, *qwen3_next_sglang_extra_buffer_lines()))))
    assert list(logged_changes(logged_run(told), settings(StrategyOptions()),
                               at(StrategyOptions())).items()) == [
        ("sglang_overlap_schedule", False), ("sglang_mamba_radix_cache_strategy", "extra_buffer")]
    # a run of the defaults checked without overlap: overlap on, and auto logs extra_buffer
    on_log = read_log("[2026-12-06 07:00:00 TP0] " + EXTRA_BUFFER_SERVER_ARGS.replace(
        "'disable_overlap_schedule': True", "'disable_overlap_schedule': False"))
    off = StrategyOptions(sglang_overlap_schedule=False)
    assert logged_changes(logged_run(on_log), settings(off), at(off)) == {
        "sglang_overlap_schedule": True}


def test_lfm2s_overlap_turned_off_by_sglang_itself_is_no_offer():
    from flatkv.log_check import RunSettings, check_result, logged_changes, logged_run
    from flatkv.log_check import sglang_page_settings as page_settings

    # LFM2-1.2B run at SGLang's defaults: auto picks no_buffer (no extra buffer for it) and
    # turns overlap scheduling off itself, so its server_args logs disable_overlap_schedule
    # True though none was told; checked at the defaults, every line agrees and nothing is
    # offered (overlap sets no slot of LFM2's: 3 a running request either way, and its lines
    # at overlap off are the defaults')
    profile = load_preset("LFM2-1.2B").profile()
    result = run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768)
    assert run_strategy("sglang", profile, budget_bytes=40 << 30, context_tokens=32_768,
                        options=StrategyOptions(sglang_overlap_schedule=False)
                        ).extras["log_lines"] == result.extras["log_lines"]
    server_args = ("server_args={'model_path': 'LiquidAI/LFM2-1.2B', 'context_length': 32768, "
                   "'chunked_prefill_size': 8192, 'page_size': 1, 'disable_radix_cache': False, "
                   "'disable_overlap_schedule': True, 'tp_size': 1, 'attn_dp_size': 1, "
                   "'mamba_radix_cache_strategy': 'no_buffer', 'uses_mamba_radix_cache': True, "
                   "'mamba_track_interval': 256}")
    log = read_log("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate((server_args,
                                                       *result.extras["log_lines"]))))
    check = check_result(result, log)
    assert not check.differs and check.found == len(result.extras["log_lines"])
    now = RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=32_768, chunk=8_192,
                      **page_settings(profile, StrategyOptions()))
    assert now.sglang_overlap_schedule is None
    assert logged_run(log).sglang_overlap_schedule is False
    assert logged_changes(logged_run(log), now, lambda c: now) == {}


def test_the_log_reader_reads_figures_in_ascii_digits_only():
    from flatkv.log_check import logged_run

    # re's \d matches any Unicode digit and int() and Decimal read them ("٢" is 2, "２" is 2):
    # a figure in Arabic-Indic or fullwidth digits, or one run on by such a digit, is no
    # number, in a settings line, a scheduler line, a rank's prefix or a line checked
    for said in ("'tp_size': ٢", "'tp_size': ２", "'tp_size': 2٢", "'page_size': ٦٤"):
        run = logged_run(read_log(f"[2026-12-06 07:00:00] server_args={{{said}}}"))
        assert (run.tp, run.sglang_page_size) == (None, None), said
    assert logged_run(read_log("[2026-12-06 07:00:00] server_args={'tp_size': 2}")).tp == 2
    assert logged_run(read_log(vllm_prefix(0, 1) + "Initializing a V1 LLM engine with config: "
                               "tensor_parallel_size=٤, pipeline_parallel_size=1")).tp is None
    assert logged_run(read_log("[2026-12-06 07:00:00 TP٣] x")).least_tp is None
    assert logged_run(read_log(vllm_prefix(0, 1) + "Available KV cache memory: ٤٤.59 GiB")
                      ).memory is None
    scheduler = ("max_total_num_tokens=327680, chunked_prefill_size=8192, "
                 "max_prefill_tokens=16384, max_running_requests=4096, context_len=8192")
    run = logged_run(read_log(sglang_prefix(0, 1) + scheduler.replace("8192", "٨١٩٢")))
    assert (run.sglang_tokens, run.chunk, run.context) == (327_680, None, None)
    # FlatKV's line beside a log whose figure is in other digits: it differs, naming what the
    # log holds (read as 327680 before, and agreeing)
    for digits in ("٣٢٧٦٨٠", "３２７６８０", "32768٠"):
        (line,) = check_log([scheduler], "sglang", sglang_prefix(0, 1) + scheduler.replace(
            "327680", digits)).lines
        assert line.outcome == DIFFERS
        assert line.detail() == f"line 1 (TP0): max_total_num_tokens: FlatKV 327680, log {digits}"
    # ... the line's last figure too, whole (its loose figure ends where the line or a ", "
    # does: it read as the first character, 8, before, and the context as differing beside
    # a damaged figure elsewhere)
    for tail in ("", ", available_gpu_mem=10.50"):
        (line,) = check_log([scheduler], "sglang", sglang_prefix(0, 1) + scheduler.replace(
            "context_len=8192", "context_len=8١٩٢") + tail).lines
        assert line.detail() == "line 1 (TP0): context_len: FlatKV 8192, log 8١٩٢", tail


def test_the_logged_run_gives_the_mamba_cache_mode_vllm_says_it_set():
    from flatkv.log_check import logged_run

    # vLLM 0.28 and later on a hybrid with prefix caching (models/config.py 1096-1101), or
    # without it (1112-1116); 0.31 told all (config/cache.py 346)
    prefix = "(EngineCore_DP0 pid=9) INFO 12-06 07:00:00 [config.py:1] "
    said = {"Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default when "
            "prefix caching is enabled": "align",
            "Mamba cache mode is set to 'none' when prefix caching is disabled": "none",
            "Mamba cache mode 'all' is deprecated and will be removed in an upcoming release. "
            "If this is a problem, please open an issue at https://github.com/vllm-project/"
            "vllm/issues.": "all"}
    for line, mode in said.items():
        assert logged_run(read_log(prefix + line)).mamba_cache_mode == mode
    # two modes said (two runs): not told
    assert logged_run(read_log("\n".join(prefix + line for line in said))).mamba_cache_mode \
        is None


def test_the_logged_run_of_sglang_is_its_scheduler_lines_context_and_chunk():
    from flatkv.log_check import LoggedRun, logged_run
    from flatkv.strategies.base import CHUNKED_PREFILL_OFF

    # the ktransformers log's scheduler line: context_len 8,192, a chunk of 2,048, its token
    # pool of 580,364 tokens, beside 82 state slots (its Mamba Cache line), ranks TP0 and TP1
    # (TP 2); SGLang logs no budget the pages take
    assert logged_run(read_log(KTRANSFORMERS_LOG)) == LoggedRun(
        context=8_192, chunk=2_048, least_tp=2, sglang_tokens=580_364, sglang_state_slots=82)
    # chunked prefill off: SGLang prints what it was told, and reads any 0 or less as off
    for told in ("-1", "0", "-5"):
        off = KTRANSFORMERS_LOG.replace("chunked_prefill_size=2048",
                                        f"chunked_prefill_size={told}")
        assert logged_run(read_log(off)).chunk == CHUNKED_PREFILL_OFF
    # two runs of other contexts: not told; a vLLM line of another context: not told either
    second = KTRANSFORMERS_LOG.splitlines()[-1].replace("context_len=8192", "context_len=4096")
    assert logged_run(read_log(KTRANSFORMERS_LOG + "\n" + second)) == LoggedRun(
        chunk=2_048, least_tp=2, sglang_tokens=580_364, sglang_state_slots=82)
    vllm = vllm_prefix(0, 1) + "Maximum concurrency for 2,048 tokens per request: 1.00x"
    assert logged_run(read_log(KTRANSFORMERS_LOG + "\n" + vllm)).context is None
    # a vLLM line of no scheduler's words is not read as SGLang's
    assert logged_run(read_log(vllm_prefix(0, 1) + "chunked_prefill_size=4096")).chunk is None


def test_a_budget_in_vllm_blocks_elides_the_available_memory_vllm_estimates():
    from flatkv.strategies.vllm_log import with_available_elided

    profile = spec_from_hf_config(FALCON_MAMBA).profile()
    # 2,155 blocks of 311,296 x 64 B = 42,933,944,320 B: 39.99 GiB, where the run's log said
    # 40.0 before warm-up; the line is kept, its figure elided, so a log's line is found
    blocks = run_strategy("vllm", profile, budget_bytes=2_155 * 311_296 * 64,
                          context_tokens=2048)
    assert "Available KV cache memory: 39.99 GiB" in blocks.extras["log_lines"]
    elided = with_available_elided(blocks).extras["log_lines"]
    assert elided == ["Available KV cache memory: ... GiB" if line.startswith("Available")
                      else line for line in blocks.extras["log_lines"]]
    check = check_lines(elided, "vllm", read_log("\n".join(
        vllm_prefix(0, 1) + as_logged(line) for line in falcon("vllm"))))
    assert not check.differs and check.found == 3
    # SGLang's lines have no such line: unchanged
    sglang = run_strategy("sglang", profile, budget_bytes=GIB40, context_tokens=2048)
    assert with_available_elided(sglang) is sglang


def test_a_check_of_one_line_says_it_in_the_singular():
    # A model typed by hand in bytes (32 full layers of 4,096 B a token) has one SGLang line,
    # its scheduler's (no KV Cache lines without the K / V split): 40 GiB / (32 x 4,096 B) =
    # 327,680 tokens; max_running_requests = min(max(min(int(327,680 / 8,192 x 512), 4,096),
    # 2,048), 327,680 // 2) = 4,096. The verdict says "its one line", never "all 1 lines" or
    # "None of FlatKV's 1 SGLang lines".
    from flatkv.plan import FULL_ATTENTION
    from flatkv.profile import CacheProfile

    typed = CacheProfile(layer_types=(FULL_ATTENTION,) * 32, kv_bytes_per_slot=4_096,
                         name="typed")
    expected = run_strategy("sglang", typed, budget_bytes=GIB40,
                            context_tokens=8_192).extras["log_lines"]
    assert expected == ["max_total_num_tokens=327680, chunked_prefill_size=8192, "
                        "max_prefill_tokens=..., max_running_requests=4096, context_len=8192"]
    log = engine_log(expected, sglang_prefix)
    assert check_log(expected, "sglang", log).verdict() == (
        "SGLang: its one line is in the log and agrees with it.")
    assert check_log(expected, "sglang", "nothing here\n").verdict() == (
        "FlatKV's one SGLang line is not in this log (1 line read): paste SGLang's start-up "
        "log of a run at these settings, from its start to its KV cache lines.")
    differs = log.replace("max_total_num_tokens=327680", "max_total_num_tokens=1")
    assert check_log(expected, "sglang", differs).verdict() == (
        "SGLang: its one line differs from the log.")


def test_a_check_of_two_lines_says_both_and_of_all_differing_says_so():
    # Llama-3.1-8B in 40 GiB at 4,096 tokens: SGLang's KV line (327,680 tokens of 32 x 4,096
    # B, K and V 20.00 GB each) and its scheduler line
    r = run_strategy("sglang", load_preset("Llama-3.1-8B").profile(), budget_bytes=GIB40,
                     context_tokens=4_096)
    expected = r.extras["log_lines"]
    assert expected == [
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 327680, K size: 20.00 GB, "
        "V size: 20.00 GB",
        "max_total_num_tokens=327680, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=4096, context_len=4096"]
    log = engine_log(expected, sglang_prefix)
    assert check_log(expected, "sglang", log).verdict() == (
        "SGLang: both lines are in the log and agree with it.")
    # every line differs: said so, not "2 of 2 lines differ, 0 agree"
    other = log.replace("327680", "327679")
    assert check_log(expected, "sglang", other).verdict() == (
        "SGLang: both lines differ from the log.")
    # one differs: counted
    one = log.replace("context_len=4096", "context_len=8192")
    assert check_log(expected, "sglang", one).verdict() == (
        "SGLang: 1 of 2 lines differs from the log, 1 agrees.")


def test_lines_are_numbered_as_an_editor_numbers_them():
    # str.splitlines also breaks at a form feed, a vertical tab, NEL (U+0085) and U+2028/9,
    # which an editor shows inside a line: "second" is the paste's line 2, not 3. CR LF and a
    # lone CR (a progress bar redrawn) end a line, as an editor shows them.
    for inside in ("\x0c", "\x0b", "\x85", "\u2028", "\u2029", "\x1c"):
        log = (f"[2026-12-06 07:00:00 TP0] page{inside}break\r\n"
               "[2026-12-06 07:00:01 TP0] second\r[2026-12-06 07:00:02 TP0] third\n")
        assert [(x.number, x.message) for x in read_log(log)] == [
            (1, "page\ufffdbreak"), (2, "second"), (3, "third")], repr(inside)


# SGLang (Dec 2025, before 0.5.13: no dtype; before 0.5.17: a hybrid SWA pool's lines without
# "Full" or "SWA"), XiaomiMiMo/MiMo-V2-Flash at TP=4, lines as the PR's description pasted
# them: https://github.com/sgl-project/sglang/pull/15464 . Each rank logs its SWA sub-pool's
# line, then its full one's, then the SWAKVPool line (swa_memory_pool.py of those releases
# builds swa_kv_pool, then full_kv_pool); the excerpt starts after TP0's and TP3's SWA lines.
# Its SWA sub-pool is the larger (41.76 + 27.84 GB; 4.82 + 3.21 GB its full one), each of
# 1,496,958 tokens: 41.76 + 27.84 + 4.82 + 3.21 = 77.63 GB, the SWAKVPool line's. No preset
# holds MiMo-V2-Flash (its K and V heads differ), so FlatKV's lines are worded at its figures.
MIMO_LOG = """\
[2025-12-19 07:42:57 TP2] KV Cache is allocated. #tokens: 1496958, K size: 41.76 GB, V size: \
27.84 GB
[2025-12-19 07:42:57 TP1] KV Cache is allocated. #tokens: 1496958, K size: 41.76 GB, V size: \
27.84 GB
[2025-12-19 07:42:57 TP2] KV Cache is allocated. #tokens: 1496958, K size: 4.82 GB, V size: \
3.21 GB
[2025-12-19 07:42:57 TP2] SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958
[2025-12-19 07:42:57 TP0] KV Cache is allocated. #tokens: 1496958, K size: 4.82 GB, V size: \
3.21 GB
[2025-12-19 07:42:57 TP0] SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958
[2025-12-19 07:42:57 TP2] Memory pool end. avail mem=22.56 GB
[2025-12-19 07:42:57 TP1] KV Cache is allocated. #tokens: 1496958, K size: 4.82 GB, V size: \
3.21 GB
[2025-12-19 07:42:57 TP0] Memory pool end. avail mem=22.59 GB
[2025-12-19 07:42:57 TP1] SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958
[2025-12-19 07:42:57 TP1] Memory pool end. avail mem=22.56 GB
[2025-12-19 07:42:57 TP3] KV Cache is allocated. #tokens: 1496958, K size: 4.82 GB, V size: \
3.21 GB
[2025-12-19 07:42:57 TP3] SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958
[2025-12-19 07:42:57 TP3] Memory pool end. avail mem=22.71 GB"""


def mimo_lines(full_k: str = "4.82") -> list[str]:
    """FlatKV's words for a hybrid SWA pool (0.5.17 and later: labelled, with the dtype) at
    the MiMo log's figures; ``full_k`` the full sub-pool's K size."""
    return [f"Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1496958, K size: "
            f"{full_k} GB, V size: 3.21 GB",
            "SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1496958, K size: 41.76 "
            "GB, V size: 27.84 GB",
            "SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958"]


def test_a_real_sglang_hybrid_swa_log_of_unlabelled_sub_pool_lines():
    from flatkv.strategies.sglang_log import OLDEST_SWA_FORM, older_forms

    expected = mimo_lines()
    check = check_lines(expected, "sglang", read_log(MIMO_LOG), older_forms(expected))
    assert [c.outcome for c in check.lines] == [SAME, SAME, SAME]
    # each unlabelled line read as the sub-pool its place says: the full line is the one after
    # a rank's SWA line (TP2: lines 1 and 3; TP1: 2 and 8), the SWA line the one before its
    # full line; TP0's and TP3's full lines (5, 12) follow no SWA line in the excerpt, and
    # no KV line follows them: neither line of FlatKV's reads them
    form = f", {OLDEST_SWA_FORM},"
    assert check.lines[0].detail() == f"lines 1-3 (TP2), 2-8 (TP1){form} agree"
    assert check.lines[1].detail() == f"lines 1-3 (TP2), 2-8 (TP1){form} agree"
    assert check.lines[2].detail() == "lines 4 (TP2), 6 (TP0), 10 (TP1), 13 (TP3) agree"
    # a figure of the full sub-pool that differs is named in the Full line, not the SWA one
    other = mimo_lines(full_k="4.83")
    check = check_lines(other, "sglang", read_log(MIMO_LOG), older_forms(other))
    assert [c.outcome for c in check.lines] == [DIFFERS, SAME, SAME]
    assert check.lines[0].detail() == (f"lines 1-3 (TP2), 2-8 (TP1){form[:-1]}: K size (GB): "
                                       "FlatKV 4.83, log 4.82")


def test_sglang_hybrid_swa_lines_of_0_5_13_to_0_5_16_and_0_5_23s_va_upper_bound():
    from flatkv.strategies.sglang_log import OLDER_SWA_FORM, VA_BOUND_FORM, older_forms

    expected = mimo_lines()
    # 0.5.13 to 0.5.16: the dtype, no label (0.5.23's f-string in memory_pool.py's
    # _finalize_allocation_log where a pool has no allocation_label, "KV Cache is allocated.
    # dtype: {self.dtype}, #tokens: ..."), filled with MIMO_LOG's figures
    with_dtype = MIMO_LOG.replace("KV Cache is allocated. #tokens",
                                  "KV Cache is allocated. dtype: torch.bfloat16, #tokens")
    check = check_lines(expected, "sglang", read_log(with_dtype), older_forms(expected))
    assert [c.outcome for c in check.lines] == [SAME, SAME, SAME]
    assert check.lines[0].detail() == f"lines 1-3 (TP2), 2-8 (TP1), {OLDER_SWA_FORM}, agree"
    # 0.5.23 where it sizes the pool after CUDA graph capture: each line's f-string
    # (memory_pool.py 2088, swa_memory_pool.py 133) with post_capture_active, at FlatKV's
    # figures: read as the form that names it, its figures compared
    va = [line.replace("KV Cache is allocated.", "KV Cache VA upper bound.").replace(
        "SWAKVPool mem usage:", "SWAKVPool VA upper bound:") for line in expected]
    assert va[0].startswith("Full KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: ")
    log = "\n".join(sglang_prefix(0, i) + line for i, line in enumerate(va, 1))
    check = check_lines(expected, "sglang", read_log(log), older_forms(expected))
    assert [c.detail() for c in check.lines] == [f"line {i} (TP0), {VA_BOUND_FORM}, agrees"
                                                 for i in (1, 2, 3)]


# vLLM 0.19.0 on an H20, Qwen3.5-27B in bf16 at TP=1, --max-model-len 32768 (--load-format
# dummy): https://github.com/vllm-project/vllm/issues/40691 , its two lines as the issue
# quotes them (each in its own code span, the time cut from the prefix). That release logs
# the size as num_blocks // groups x P and no Available line: the run's budget is not said.
QWEN35_27B_LOG = """\
INFO [kv_cache_utils.py:1319] GPU KV cache size: 290,864 tokens
INFO [kv_cache_utils.py:1324] Maximum concurrency for 32,768 tokens per request: 33.04x"""


def test_a_real_vllm_log_whose_two_figures_give_its_blocks():
    from flatkv.log_check import check_result
    from flatkv.strategies.base import StrategyOptions
    from flatkv.strategies.vllm import block_bytes

    profile = load_preset("Qwen3.5-27B").profile()
    unit = block_bytes(profile, StrategyOptions())  # a block id's bytes: 16 pages
    # Qwen3.5-27B: 48 GDN and 16 full attention layers, groups of 16: 4 groups; P = 784 (a
    # state page of 3,207,168 B over 16 x 4,096 B a token, rounded up). 290,864 / 784 = 371 =
    # N // 4: N is 1,484 to 1,487; mode none (vLLM before 0.28), a request holds 1 page of
    # each state group and ceil(32,768 / 784) = 42 of attention: 45, and only 1,487 / 45 =
    # 33.044 prints 33.04 (1,486 / 45 = 33.02). The budget is given as those blocks.
    assert 290_864 == 371 * 784 and [n // 4 for n in (1_484, 1_487)] == [371, 371]
    assert [f"{n / (3 + 42):.2f}" for n in range(1_484, 1_488)] == [
        "32.98", "33.00", "33.02", "33.04"]
    r = run_strategy("vllm", profile, budget_bytes=1_487 * unit,
                     context_tokens=32_768)
    assert (r.block_size, r.num_blocks, r.older_logged_tokens) == (784, 1_487, 290_864)
    check = check_result(r, read_log(QWEN35_27B_LOG))
    kv = check.lines[-1]
    assert kv.outcome == SAME and kv.detail() == (
        "lines 1-2, on two lines, its tokens as vLLM 0.19 and earlier count them, agree")
    # its lines of 0.34 (the block size, the padding, the memory) are not in these two
    assert [c.outcome for c in check.lines] == [MISSING] * 4 + [SAME]
    # a block fewer: the concurrency (33.02x) differs, the older size (1,486 // 4 x 784) not
    fewer = run_strategy("vllm", profile, budget_bytes=1_486 * unit,
                         context_tokens=32_768)
    assert check_result(fewer, read_log(QWEN35_27B_LOG)).lines[-1].detail() == (
        "lines 1-2, on two lines, its tokens as vLLM 0.19 and earlier count them: Maximum "
        "concurrency (x): FlatKV 33.02, log 33.04")


# vLLM 0.34's KV cache size line (kv_cache_utils.py's update_kv_cache_capacity), its pools
# named by _kv_cache_device_name: "GPU" on CUDA and ROCm, "XPU" or "CPU" on those platforms,
# "GPU + host" with HiSparse
VLLM_KV_SIZE_FORMAT = ("%s KV cache size: %s tokens, Maximum concurrency for %s tokens per "
                       "request: %.2fx")


@pytest.mark.parametrize("pools", ["XPU", "CPU", "GPU + host"])
def test_vllm_0_34s_kv_size_line_of_other_pools(pools):
    from flatkv.log_check import check_result

    profile = spec_from_hf_config(FALCON_MAMBA).profile()
    r = run_strategy("vllm", profile, budget_bytes=GIB40, context_tokens=2048)
    # the logger's own %-formatting of its arguments: 2,155 blocks of one page a request
    line = VLLM_KV_SIZE_FORMAT % (pools, f"{r.logged_tokens:,}", f"{2048:,}", r.max_concurrency)
    assert line == (f"{pools} KV cache size: 4,413,440 tokens, Maximum concurrency for 2,048 "
                    "tokens per request: 2155.00x")
    log = "(EngineCore pid=7) INFO 12-06 07:00:09 [kv_cache_utils.py:1174] " + line
    kv = check_result(r, read_log(log)).lines[-1]
    assert kv.outcome == SAME
    assert kv.detail().startswith(f'line 1 (EngineCore pid=7), named "{pools} KV cache size", '
                                  "as vLLM 0.34 logs it ")
    # a token more in the log is named as FlatKV's own line names it
    more = check_result(r, read_log(log.replace("4,413,440", "4,413,441"))).lines[-1]
    assert more.detail().endswith(": KV cache size (tokens): FlatKV 4,413,440, log 4,413,441")
    # and an unprefixed paste of it reads as vLLM's
    assert detect_engine(read_log(line)) == "vllm"


def test_a_labelled_sglang_log_pasted_without_prefixes_is_not_read_as_its_older_form():
    from flatkv.strategies.sglang_log import older_forms

    # 0.5.17 and later, pasted bare: "SWA KV Cache is allocated. dtype: ..." holds the words
    # of the unlabelled form ("KV Cache is allocated. dtype: ..."), as does the Full line; a
    # log line that reads as one of FlatKV's own lines is that line, never another's form
    # (read as the SWA line's form, the Full line and its figures would differ from it)
    expected = mimo_lines()
    log = "\n".join([expected[0], "Memory pool end. avail mem=22.56 GB", *expected[1:]])
    check = check_lines(expected, "sglang", read_log(log), older_forms(expected))
    assert [c.detail() for c in check.lines] == ["line 1 agrees", "line 3 agrees",
                                                 "line 4 agrees"]


def test_a_vllm_0_31_log_of_mamba_cache_mode_all_reads_as_flatkvs_mode_all_lines():
    from flatkv.log_check import check_result
    from flatkv.strategies import StrategyOptions

    # Nemotron-H in mode all, as vLLM 0.31 (the last release with it) logs its start-up: each
    # line from 0.31's own format string (config/cache.py, config/vllm.py, platforms/
    # interface.py, v1/worker/gpu_worker.py, v1/core/kv_cache_utils.py) at its figures: P =
    # 128 x cdiv(2,158,592, 128 x 4,096) = 640, the state padded to 640 x 4,096 = 2,621,440 B,
    # 40 GiB of 4,096 blocks, a request of 8,192 tokens 13 + 6 x 13 = 91 of them; a run told
    # --mamba-ssm-cache-dtype bfloat16 (the preset's 2,097,152 B ssm state; told, vLLM's
    # NemotronH hook logs no "Updating mamba_ssm_cache_dtype" line)
    profile = load_preset("Nemotron-H-8B").profile()
    r = run_strategy("vllm", profile, budget_bytes=GIB40, context_tokens=8192,
                     options=StrategyOptions(mamba_cache_mode="all", vllm_ssm_dtype="bfloat16"))
    padding = "%.2f" % (100 * (2_621_440 - 2_158_592) / 2_158_592)
    concurrency = VLLM_KV_SIZE_FORMAT % ("GPU", f"{int(4096 / 91 * 8192):,}", f"{8192:,}",
                                         4096 / 91)
    log = "\n".join([
        "WARNING 12-06 07:00:00 [cache.py:345] Mamba cache mode 'all' is deprecated and will be "
        "removed in an upcoming release. If this is a problem, please open an issue at "
        "https://github.com/vllm-project/vllm/issues.",
        "WARNING 12-06 07:00:01 [vllm.py:754] Model Runner V2 does not yet support mamba cache "
        "mode 'all'; using the V1 model runner instead.",
        "(EngineCore pid=7) INFO 12-06 07:00:05 [interface.py:989] Setting attention block size "
        "to 640 tokens to ensure that attention page size is >= mamba page size.",
        "(EngineCore pid=7) INFO 12-06 07:00:05 [interface.py:1013] Padding mamba page size by "
        f"{padding}% to ensure that mamba page size and attention page size are exactly equal.",
        "(EngineCore pid=7) INFO 12-06 07:00:09 [gpu_worker.py:692] Available KV cache memory: "
        f"{round(GIB40 / 2**30, 2)} GiB",
        f"(EngineCore pid=7) INFO 12-06 07:00:09 [kv_cache_utils.py:2464] {concurrency}"])
    check = check_result(r, read_log(log))
    # every line of FlatKV's is in it, figures the same, and none is 0.34's warm-up line
    assert [c.outcome for c in check.lines] == [SAME] * 6
    assert concurrency == ("GPU KV cache size: 368,730 tokens, Maximum concurrency for 8,192 "
                           "tokens per request: 45.01x")
    # the same run in align is 0.34's lines: its warm-up line is not in a 0.31 log
    align = run_strategy("vllm", profile, budget_bytes=GIB40, context_tokens=8192,
                         options=StrategyOptions(mamba_cache_mode="align",
                                                 vllm_ssm_dtype="bfloat16"))
    assert MISSING in [c.outcome for c in check_result(align, read_log(log)).lines]


def test_logged_changes_are_what_the_settings_lack_in_the_order_a_reader_takes_them():
    from dataclasses import replace

    from flatkv.log_check import LoggedRun, RunSettings, logged_changes
    from flatkv.strategies.base import CHUNKED_PREFILL_OFF

    now = RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=4_096, chunk=8_192,
                      vllm_blocks=(2_155,), available=("40.0 GiB",))
    at_dp = replace(now, tp=8, attn_dp=8, vllm_blocks=(), available=())

    def at(changes):  # the settings with TP, DP and mode taken: what the budget is read at
        assert set(changes) <= {"tp", "sglang_attn_dp_size", "mamba_cache_mode"}
        return at_dp if changes else now

    # TP, attention DP and mode first; then at those, the blocks (none fit there yet), the
    # context, and a group's chunk 1,024 x 8 = 8,192: the chunk already taken, not offered
    run = LoggedRun(blocks=3_000, memory="40.0 GiB", context=8_192, chunk=1_024, tp=8,
                    mamba_cache_mode="align", attn_dp=8)
    assert list(logged_changes(run, now, at).items()) == [
        ("tp", 8), ("sglang_attn_dp_size", 8), ("mamba_cache_mode", "align"),
        ("vllm_blocks", 3_000), ("context", 8_192)]
    # figures the settings give already: nothing; the Available memory where no blocks are
    # logged; chunked prefill off stays -1 whatever D
    assert logged_changes(LoggedRun(blocks=2_155, context=4_096, chunk=8_192), now, at) == {}
    assert logged_changes(LoggedRun(memory="44.59 GiB"), now, at) == {"kv_memory": "44.59 GiB"}
    assert logged_changes(LoggedRun(memory="40.0 GiB"), now, at) == {}
    assert logged_changes(LoggedRun(chunk=CHUNKED_PREFILL_OFF, attn_dp=8), now, at) == {
        "sglang_attn_dp_size": 8, "sglang_chunked_prefill_size": CHUNKED_PREFILL_OFF}
    # what no page or flag takes is left out: TP 0 or past 1,024, an unknown mode, blocks
    # out of vLLM's range, a context past 2^40 tokens; a profile of bytes (TP None) takes none
    assert logged_changes(LoggedRun(tp=0, mamba_cache_mode="auto", blocks=0,
                                    context=2**41), now, at) == {}
    assert logged_changes(LoggedRun(tp=2_048), now, at) == {}
    assert logged_changes(LoggedRun(tp=2), replace(now, tp=None), at) == {}
    # ... nor an Available memory no budget field takes: 0 B, or past 1 EiB (2**60 B is
    # 1,073,741,824 GiB, which --budget and the KV cache memory field still take)
    assert logged_changes(LoggedRun(memory="0.00 GiB"), now, at) == {}
    assert logged_changes(LoggedRun(memory="1073741824.01 GiB"), now, at) == {}
    assert logged_changes(LoggedRun(memory="1073741824.00 GiB"), now, at) == {
        "kv_memory": "1073741824.00 GiB"}
    # the least TP a log's ranks name (TP0, TP1: 2 at least) is offered where the settings
    # have fewer, never in place of more (a TP 4 log pasted with ranks 0 and 1 alone)
    assert logged_changes(LoggedRun(least_tp=2), now, at) == {"tp": 2}
    assert logged_changes(LoggedRun(least_tp=2), replace(now, tp=4), at) == {}
    assert logged_changes(LoggedRun(tp=4, least_tp=2), now, at) == {"tp": 4}


def test_logged_changes_give_the_budget_that_sizes_sglangs_pools_as_logged():
    from dataclasses import replace

    from flatkv.log_check import LoggedRun, RunSettings, logged_changes

    # SGLang logs its pools, not a budget: the budget comes from the search the settings
    # carry, run at the context and chunk taken (SGLang's request cap, and so its state slots,
    # can follow the context), with the state slots its log gives; it is said before them
    asked = []

    def budget_at(context):
        def search(tokens, slots):
            asked.append((context, tokens, slots))
            return 1_000 * tokens if tokens % 2 == 0 else None  # odd: no budget gives them
        return search

    now = RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=4_096, chunk=8_192,
                      sglang_tokens=327_680, sglang_budget=budget_at(4_096))

    def at(changes):
        context = changes.get("context", 4_096)
        return replace(now, context=context, sglang_tokens=327_680 if context == 4_096
                       else 300_000, sglang_budget=budget_at(context))

    run = LoggedRun(context=8_192, sglang_tokens=300_002, sglang_state_slots=82)
    assert list(logged_changes(run, now, at).items()) == [
        ("sglang_budget", 300_002_000), ("context", 8_192)]
    assert asked == [(8_192, 300_002, 82)]
    # the pool the settings already give: none searched; no budget found: none offered
    assert logged_changes(LoggedRun(sglang_tokens=327_680), now, at) == {}
    assert logged_changes(LoggedRun(sglang_tokens=300_001), now, at) == {}
    # no search where the settings carry none (a command at another TP), nor past 2^40 tokens,
    # nor beside vLLM's blocks or memory (a log of both engines: vLLM's budget is told)
    assert logged_changes(run, replace(now, sglang_budget=None), lambda c: replace(
        at(c), sglang_budget=None)) == {"context": 8_192}
    assert logged_changes(LoggedRun(sglang_tokens=2**41), now, at) == {}
    assert logged_changes(LoggedRun(memory="44.59 GiB", sglang_tokens=300_002), now, at) == {
        "kv_memory": "44.59 GiB"}
    # nor at a TP the log's run did not have and the pages cannot take (past 1,024): a
    # budget there would size pools of other heads
    assert logged_changes(LoggedRun(tp=1_025, sglang_tokens=300_002), now, at) == {}
    assert asked == [(8_192, 300_002, 82), (4_096, 300_001, None)]
    # a budget of its own taken off a GPU (gpu_chunk: the chunk SGLang took there, 16,384 on
    # a B200) keeps that chunk, after the budget; a chunk the log gives wins; no budget, none
    gpu = replace(now, chunk=16_384, gpu_chunk=16_384)
    assert list(logged_changes(LoggedRun(sglang_tokens=300_002), gpu, lambda c: gpu).items()) \
        == [("sglang_budget", 300_002_000), ("sglang_chunked_prefill_size", 16_384)]
    assert logged_changes(LoggedRun(memory="44.59 GiB", chunk=4_096), gpu, lambda c: gpu) == {
        "kv_memory": "44.59 GiB", "sglang_chunked_prefill_size": 4_096}
    assert logged_changes(LoggedRun(context=8_192), gpu, lambda c: gpu) == {"context": 8_192}


def test_a_gpus_chunk_is_kept_only_where_the_gpu_chose_it():
    from flatkv.log_check import kept_gpu_chunk

    # a B200's 16,384, taken on its preset and not told: kept; told, off a GPU, or the 8,192
    # assumed without one: nothing to keep
    assert kept_gpu_chunk(16_384, told=False, on_gpu=True) == 16_384
    assert kept_gpu_chunk(16_384, told=True, on_gpu=True) is None
    assert kept_gpu_chunk(16_384, told=False, on_gpu=False) is None
    assert kept_gpu_chunk(8_192, told=False, on_gpu=True) is None


def deepseek_v32_b200_sglang_lines() -> list[str]:
    """FlatKV's SGLang start-up lines for DeepSeek-V3.2 on a B200 in 40 GiB at its context of
    163,840 and the B200's chunk of 16,384: its trtllm DSA raw layout, 61 x (576 + 132) =
    43,188 B a token, so 42,949,672,960 // 43,188 = 994,481 tokens, 994,432 in whole pages of
    64 (as the B200 preset's figures: tests/test_app_state.py), logged in float8_e4m3fn."""
    lines = run_strategy("sglang", load_preset("DeepSeek-V3.2").profile(),
                         budget_bytes=40 << 30, context_tokens=163_840,
                         options=StrategyOptions(gpu_compute_capability=(10, 0),
                                                 sglang_chunked_prefill_size=16_384)
                         ).extras["log_lines"]
    assert (40 << 30) // (61 * (576 + 132)) == 994_481 and 994_481 // 64 * 64 == 994_432
    assert lines[0] == ("KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 994432, "
                        "KV size: 40.00 GB")
    return lines


def deepseek_v32_b200_bfloat16_lines(budget: int = 40 << 30) -> list[str]:
    """FlatKV's SGLang start-up lines for DeepSeek-V3.2 on a B200 told --kv-cache-dtype
    bfloat16 in ``budget`` bytes at its context of 163,840 and the B200's chunk of 16,384: 61 x
    (1,152 + 132) = 78,324 B a token, a Hopper's, logged in bfloat16."""
    return run_strategy("sglang", load_preset("DeepSeek-V3.2").profile(), budget_bytes=budget,
                        context_tokens=163_840,
                        options=StrategyOptions(gpu_compute_capability=(10, 0),
                                                sglang_kv_cache_dtype="bfloat16",
                                                sglang_chunked_prefill_size=16_384)
                        ).extras["log_lines"]


def test_a_b200_log_of_deepseek_v32_offers_the_blackwell_setting_where_it_acts():
    from dataclasses import replace

    from flatkv.log_check import (
        RunSettings,
        logged_changes,
        logged_run,
        sglang_blackwell_settings,
        sglang_pool_settings,
    )

    v32 = load_preset("DeepSeek-V3.2").profile()
    run = logged_run(read_log("\n".join(deepseek_v32_b200_sglang_lines())))
    assert (run.sglang_kv_dtype, run.sglang_tokens, run.chunk) == (
        "float8_e4m3fn", 994_432, 16_384)

    def settings(blackwell: bool, *, preset: bool = False) -> RunSettings:
        options = StrategyOptions(gpu_compute_capability=(10, 0) if blackwell else None)
        r = run_strategy("sglang", v32, budget_bytes=40 << 30, options=options)
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=163_840,
                           chunk=16_384, **sglang_pool_settings(r),
                           **sglang_blackwell_settings(v32, options, preset=preset))

    hopper, b200 = settings(False), settings(True)
    # a Hopper's 40 GiB: 42,949,672,960 // (61 x 1,284) = 548,359, 548,352 in pages of 64
    assert (40 << 30) // (61 * 1_284) == 548_359
    assert (hopper.sglang_kv_dtype, hopper.sglang_tokens) == ("bfloat16", 548_359 // 64 * 64)
    assert (b200.sglang_kv_dtype, b200.sglang_tokens) == ("float8_e4m3fn", 994_432)
    assert (hopper.sglang_blackwell, b200.sglang_blackwell) == (False, True)

    def at(changes):
        return b200 if changes.get("sglang_blackwell") else hopper

    # the settings on no Blackwell: it alone makes every figure agree (the same 40 GiB)
    assert logged_changes(run, hopper, at) == {"sglang_blackwell": True}
    assert logged_changes(run, b200, at) == {}
    # beside a Hopper's preset only with the log's own budget, which leaves the preset
    assert logged_changes(run, replace(hopper, blackwell_preset=True), at) == {}
    # a model a Blackwell stores as a Hopper does: not compared, never offered
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert sglang_blackwell_settings(qwen, StrategyOptions(), preset=False) == {
        "sglang_blackwell": None, "blackwell_preset": False}
    assert logged_changes(run, replace(hopper, sglang_blackwell=None), at) == {}
    # a log in another dtype than the Blackwell layout's: not offered
    other = replace(run, sglang_kv_dtype="float8_e5m2")
    assert "sglang_blackwell" not in logged_changes(other, hopper, at)


def test_a_b200_log_of_deepseek_v32_on_hopper_fp8_settings_offers_the_blackwell_by_its_sizes():
    # A Hopper's fp8 DSA layout (--kv-dtype fp8: 656 + 132 = 788 B a token a layer with its
    # scales) logs torch.float8_e4m3fn, as the B200's raw 708 B does: the dtype's name alone
    # offered no Blackwell, and the budget that sizes the log's 994,432 tokens in 788 B,
    # 994,432 x 61 x 788 = 47,800,357,376 B, left its KV size line at (994,432 + 64) x 61 x
    # 788 B = 44.52 GB beside the log's 40.00 ((994,432 + 64) x 61 x 708 B). At the same 40
    # GiB the Hopper's fp8 holds 42,949,672,960 // (61 x 788) = 893,519 tokens, 893,504 in
    # pages of 64, the Blackwell the log's 994,432: the tokens tell them apart. At 30 GiB
    # neither gives the log's tokens (670,080 and 745,856), and the KV size the log prints
    # for its tokens does: the Blackwell is offered beside the budget its layout takes,
    # 994,432 x 61 x 708 = 42,947,529,216 B, at which every figure agrees
    from dataclasses import replace

    from flatkv.log_check import (
        RunSettings,
        logged_changes,
        logged_run,
        sglang_blackwell_settings,
        sglang_pool_settings,
    )

    v32 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="fp8").profile()
    run = logged_run(read_log("\n".join(deepseek_v32_b200_sglang_lines())))
    assert (run.sglang_kv_dtype, run.sglang_tokens, run.sglang_kv_size) == (
        "float8_e4m3fn", 994_432, "40.00")

    def settings(blackwell: bool, budget: int = 40 << 30) -> RunSettings:
        options = StrategyOptions(gpu_compute_capability=(10, 0) if blackwell else None,
                                  sglang_chunked_prefill_size=16_384)
        r = run_strategy("sglang", v32, budget_bytes=budget, context_tokens=163_840,
                         options=options)
        token_bytes = 61 * (708 if blackwell else 788)  # the least budget that sizes tokens
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=163_840,
                           chunk=16_384, **sglang_pool_settings(r),
                           sglang_budget=lambda tokens, slots: tokens * token_bytes,
                           **sglang_blackwell_settings(v32, options, preset=False))

    hopper, b200 = settings(False), settings(True)
    assert (40 << 30) // (61 * 788) == 893_519 and 893_519 // 64 * 64 == 893_504
    assert (hopper.sglang_kv_dtype, hopper.sglang_tokens) == ("float8_e4m3fn", 893_504)
    assert (b200.sglang_kv_dtype, b200.sglang_tokens) == ("float8_e4m3fn", 994_432)
    # a page of 64 tokens over 61 layers: 64 x 61 x 788 and 64 x 61 x 708 B
    assert (hopper.sglang_pool_page, b200.sglang_pool_page) == (
        (64, 3_076_352), (64, 2_764_032))
    assert 994_432 * 61 * 788 == 47_800_357_376
    assert f"{(994_432 + 64) * 61 * 788 / 2**30:.2f}" == "44.52"
    assert f"{(994_432 + 64) * 61 * 708 / 2**30:.2f}" == "40.00"

    def at(changes):
        return b200 if changes.get("sglang_blackwell") else hopper

    assert logged_changes(run, hopper, at) == {"sglang_blackwell": True}
    # the log's tokens at the settings already (its run was theirs): nothing offered
    assert logged_changes(replace(run, sglang_tokens=893_504), hopper, at) == {}
    # at 30 GiB: (30 << 30) // (61 x 788) = 670,139 -> 670,080, // (61 x 708) = 745,861 ->
    # 745,856; the Blackwell and its budget for the log's tokens
    hopper30, b200_30 = settings(False, 30 << 30), settings(True, 30 << 30)
    assert (30 << 30) // (61 * 788) == 670_139 and (30 << 30) // (61 * 708) == 745_861
    assert (hopper30.sglang_tokens, b200_30.sglang_tokens) == (670_080, 745_856)

    def at30(changes):
        return b200_30 if changes.get("sglang_blackwell") else hopper30

    assert logged_changes(run, hopper30, at30) == {"sglang_blackwell": True,
                                                   "sglang_budget": 42_947_529_216}
    # a Hopper's fp8 log of those tokens (44.52 GB): its budget alone, no Blackwell
    hopper_log = replace(run, sglang_kv_size="44.52")
    assert logged_changes(hopper_log, hopper30, at30) == {"sglang_budget": 47_800_357_376}
    assert logged_changes(hopper_log, hopper, at) == {"sglang_budget": 47_800_357_376}
    # a log whose KV size is not read (two told): the tokens alone, which give the Blackwell
    # at 40 GiB, none at 30 GiB
    assert logged_changes(replace(run, sglang_kv_size=None), hopper, at) == {
        "sglang_blackwell": True}
    assert "sglang_blackwell" not in logged_changes(
        replace(run, sglang_kv_size=None), hopper30, at30)
    # at the budget the dtype's name alone offered, 47,800,357,376 B, the Hopper's fp8 holds
    # the log's tokens (47,800,357,376 // (61 x 788) = 994,432, whole pages of 64) and its KV
    # line says 44.52 GB for the log's 40.00: the tokens agreeing, nothing was offered. The
    # Blackwell is, beside the budget its layout takes (there 47,800,357,376 // (61 x 708) =
    # 1,106,797 -> 1,106,752 tokens), at which the B200 holds 994,432 tokens again
    hopper_b, b200_b = settings(False, 47_800_357_376), settings(True, 47_800_357_376)
    assert (hopper_b.sglang_tokens, b200_b.sglang_tokens) == (994_432, 1_106_752)
    assert settings(True, 42_947_529_216).sglang_tokens == 994_432

    def at_b(changes):
        return b200_b if changes.get("sglang_blackwell") else hopper_b

    assert logged_changes(run, hopper_b, at_b) == {"sglang_blackwell": True,
                                                   "sglang_budget": 42_947_529_216}
    # a Hopper's fp8 log of those tokens (44.52 GB) is that run: nothing
    assert logged_changes(hopper_log, hopper_b, at_b) == {}


def test_logged_run_reads_sglangs_kv_size_told_once():
    # the KV line's one figure, with or without its dtype (releases before 0.5.13)
    line = "[2026-12-06 07:00:00 TP{}] KV Cache is allocated. {}#tokens: {}, KV size: {} GB"

    def kv_size(*lines: tuple[int, str, int, str]) -> str | None:
        return logged_run(read_log("\n".join(line.format(*told) for told in lines))
                          ).sglang_kv_size

    assert kv_size((0, "dtype: torch.float8_e4m3fn, ", 994_432, "40.00")) == "40.00"
    assert kv_size((0, "", 994_432, "40.00")) == "40.00"
    # a drafter's pool (DeepSeek-V3.2's MTP layer: (994,432 + 64) x 1 x 708 B = 0.66 GB),
    # logged after the model's in each rank with its #tokens, is not the model's: 40.00, on
    # one rank or on each of two, their lines interleaved
    assert f"{(994_432 + 64) * 708 / 2**30:.2f}" == "0.66"
    model, drafter = (0, "", 994_432, "40.00"), (0, "", 994_432, "0.66")
    assert kv_size(model, drafter) == "40.00"
    assert kv_size(model, (1, *model[1:]), drafter, (1, *drafter[1:])) == "40.00"
    # a second line that no drafter logs says no one size: other #tokens (another run's
    # pool), or a larger one (a Hopper's fp8 of those tokens, 44.52 GB), or one in a rank that
    # logged no model's line before it
    assert kv_size(model, (0, "", 900_000, "36.20")) is None
    assert kv_size(model, (0, "", 994_432, "44.52")) is None
    assert kv_size(model, (1, *drafter[1:])) is None
    # a model's line, its drafter's, then a second run's model line alike: one size again
    assert kv_size(model, drafter, model, drafter) == "40.00"
    # a restarted run, told by its server_args line (SGLang's launcher logs it once a run,
    # before any rank's pools; 0.5.23's, the fixture): its first KV line of a rank is its
    # model's, never the drafter's of the run before, whatever its size. A Hopper's fp8 run of
    # 893,504 tokens, (893,504 + 64) x 61 x 788 B = 40.00 GB, restarted on a B200 at the same
    # tokens, x 708 B = 35.94 GB: two sizes, no one (read as a drafter's, it gave 40.00)
    assert [f"{(893_504 + 64) * 61 * b / 2**30:.2f}" for b in (788, 708)] == ["40.00", "35.94"]
    hopper, b200 = (0, "", 893_504, "40.00"), (0, "", 893_504, "35.94")
    restart = f"[2026-12-06 07:05:00] {FULL_SERVER_ARGS}"

    def runs(*told: tuple[int, str, int, str] | str) -> str | None:
        return logged_run(read_log("\n".join(t if isinstance(t, str) else line.format(*t)
                                              for t in told))).sglang_kv_size

    assert runs(hopper, restart, b200) is None
    # without its start between them the lines alone do not tell it from a drafter's: 40.00
    assert runs(hopper, b200) == "40.00"
    # each run with its drafter: one size, the model's
    assert runs(restart, model, drafter, restart, model, drafter) == "40.00"
    # pasted without prefixes, two ranks' lines name no rank: TP0's and TP1's model lines,
    # then their drafters' (each rank allocates the model's pool, then the drafter's), read
    # as one rank's made the second drafter line a size of its own, and no one size was read
    bare = line.split("] ", 1)[1]

    def unranked(*told: tuple[str, int, str]) -> str | None:
        return logged_run(read_log("\n".join(bare.format(*t) for t in told))).sglang_kv_size

    assert unranked(model[1:], model[1:], drafter[1:], drafter[1:]) == "40.00"
    assert unranked(model[1:], drafter[1:], model[1:], drafter[1:]) == "40.00"
    # one drafter line a model line still: a third of those sizes is no drafter's
    assert unranked(model[1:], model[1:], drafter[1:], drafter[1:], drafter[1:]) is None
    # a line of other #tokens is another run's (a run's ranks all log its #tokens: SGLang
    # sizes each by the least memory across them), and leaves none of the model lines before
    # it to draft: the Hopper's run of 893,504 tokens, another run's of 1,000,000, then the
    # B200's of 893,504 (35.94 GB) is three runs, no one size (it read 40.00, the last taken
    # for the first's drafter), without prefixes or with TP 1's, which names no rank
    runs3 = [("", 893_504, "40.00"), ("", 1_000_000, "40.00"), ("", 893_504, "35.94")]
    assert unranked(*runs3) is None
    assert logged_run(read_log("\n".join(
        f"[2026-12-06 07:00:00] {bare.format(*t)}" for t in runs3))).sglang_kv_size is None
    # ... nor is a drafter-sized line of the first run's #tokens after the second's its drafter
    assert unranked(*runs3[:2], ("", 893_504, "0.66")) is None


def test_a_b200_log_told_bfloat16_offers_sglangs_kv_cache_dtype():
    # DeepSeek-V3.2 on a B200 told --kv-cache-dtype bfloat16 in 40 GiB: its KV line in
    # torch.bfloat16, 61 x 1,284 B a token, 548,352 tokens (a Hopper's lines); at the B200's
    # settings (auto: fp8_e4m3, 994,432) the dtype and tokens differ, and bfloat16 told alone
    # makes them agree (not a budget that sizes 548,352 tokens of 708 B); the reverse too
    from dataclasses import replace

    from flatkv.log_check import (
        RunSettings,
        logged_changes,
        logged_run,
        sglang_kv_cache_dtype_settings,
        sglang_pool_settings,
    )

    v32 = load_preset("DeepSeek-V3.2").profile()

    def settings(told: str, *, blackwell: bool = True) -> RunSettings:
        options = StrategyOptions(gpu_compute_capability=(10, 0) if blackwell else None,
                                  sglang_kv_cache_dtype=told,
                                  sglang_chunked_prefill_size=16_384)
        r = run_strategy("sglang", v32, budget_bytes=40 << 30, context_tokens=163_840,
                         options=options)
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=163_840,
                           chunk=16_384, **sglang_pool_settings(r), sglang_blackwell=blackwell,
                           **sglang_kv_cache_dtype_settings(v32, options))

    auto, told = settings("auto"), settings("bfloat16")
    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    assert (told.sglang_kv_dtype, told.sglang_tokens) == ("bfloat16", 548_352)
    assert (auto.sglang_kv_dtype, auto.sglang_tokens) == ("float8_e4m3fn", 994_432)
    assert (auto.sglang_kv_cache_dtype, told.sglang_kv_cache_dtype) == ("auto", "bfloat16")

    def at(changes):
        return told if changes.get("sglang_kv_cache_dtype", "auto") == "bfloat16" else auto

    bf16_run = logged_run(read_log("\n".join(deepseek_v32_b200_bfloat16_lines())))
    assert (bf16_run.sglang_kv_dtype, bf16_run.sglang_tokens) == ("bfloat16", 548_352)
    assert logged_changes(bf16_run, auto, at) == {"sglang_kv_cache_dtype": "bfloat16"}
    assert logged_changes(bf16_run, told, at) == {}
    fp8_run = logged_run(read_log("\n".join(deepseek_v32_b200_sglang_lines())))
    assert logged_changes(fp8_run, told, at) == {"sglang_kv_cache_dtype": "auto"}
    # off a Blackwell it acts on nothing (auto keeps bfloat16 there): not compared
    hopper = settings("auto", blackwell=False)
    assert hopper.sglang_kv_cache_dtype is None
    assert "sglang_kv_cache_dtype" not in logged_changes(
        bf16_run, hopper, lambda changes: hopper)
    # a dtype neither gives (fp8_e5m2): not offered
    assert "sglang_kv_cache_dtype" not in logged_changes(
        replace(bf16_run, sglang_kv_dtype="float8_e5m2"), auto, at)


def test_a_b200_log_of_auto_on_hopper_settings_told_bfloat16_offers_the_blackwell_with_auto():
    # DeepSeek-V3.2's SGLang lines on a B200 of auto in 40 GiB (float8_e4m3fn, 61 x (576 +
    # 132) = 43,188 B a token, 994,432 tokens in pages of 64) pasted on Hopper settings told
    # --kv-cache-dtype bfloat16 (idle there: 61 x 1,284 B, 548,352 tokens in torch.bfloat16).
    # The Blackwell alone keeps the told bfloat16's 1,284 B (a Hopper's layout, torch.bfloat16
    # again), so the offer is the Blackwell with auto: every figure agrees at the same 40 GiB,
    # where a budget alone would size 994,432 tokens of 78,324 B, a figure no run had
    from dataclasses import replace

    from flatkv.log_check import (
        RunSettings,
        logged_changes,
        logged_run,
        sglang_blackwell_settings,
        sglang_kv_cache_dtype_settings,
        sglang_pool_settings,
    )

    v32 = load_preset("DeepSeek-V3.2").profile()

    def settings(blackwell: bool, told: str, *, preset: bool = False,
                 budget: int = 40 << 30) -> RunSettings:
        options = StrategyOptions(gpu_compute_capability=(10, 0) if blackwell else None,
                                  sglang_kv_cache_dtype=told,
                                  sglang_chunked_prefill_size=16_384)
        r = run_strategy("sglang", v32, budget_bytes=budget, context_tokens=163_840,
                         options=options)
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=163_840,
                           chunk=16_384, **sglang_pool_settings(r),
                           **sglang_blackwell_settings(v32, options, preset=preset),
                           **sglang_kv_cache_dtype_settings(v32, options))

    assert (40 << 30) // (61 * 708) // 64 * 64 == 994_432
    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    hopper = settings(False, "bfloat16")
    assert (hopper.sglang_kv_dtype, hopper.sglang_tokens) == ("bfloat16", 548_352)
    assert (hopper.sglang_blackwell, hopper.sglang_kv_cache_dtype) == (False, None)  # idle
    b200_told = settings(True, "bfloat16")
    assert (b200_told.sglang_kv_dtype, b200_told.sglang_tokens) == ("bfloat16", 548_352)
    b200_auto = settings(True, "auto")
    assert (b200_auto.sglang_kv_dtype, b200_auto.sglang_tokens) == ("float8_e4m3fn", 994_432)
    asked = []

    def at(changes):
        asked.append(dict(changes))
        if not changes.get("sglang_blackwell"):
            return hopper
        return b200_auto if changes.get("sglang_kv_cache_dtype") == "auto" else b200_told

    run = logged_run(read_log("\n".join(deepseek_v32_b200_sglang_lines())))
    assert (run.sglang_kv_dtype, run.sglang_tokens) == ("float8_e4m3fn", 994_432)
    assert logged_changes(run, hopper, at) == {"sglang_blackwell": True,
                                               "sglang_kv_cache_dtype": "auto"}
    # the Blackwell alone tried first (told auto, it alone is offered: the test above)
    assert asked[:2] == [{"sglang_blackwell": True},
                         {"sglang_blackwell": True, "sglang_kv_cache_dtype": "auto"}]
    # beside a Hopper's preset, which fixes the GPU, neither (auto is idle off a Blackwell);
    # with a budget of the log's own (its 994,432 tokens of 708 B), both, beside the budget
    assert logged_changes(run, replace(hopper, blackwell_preset=True), at) == {}
    # with a budget of the log's own (30 GiB on a Hopper's preset: 32,212,254,720 // 43,188 =
    # 745,861, 745,856 in pages of 64, not the log's), both, beside the least budget that
    # sizes its 994,432 tokens of 61 x 708 B (searched: here that product, by hand)
    assert (30 << 30) // (61 * 708) == 745_861
    assert 994_432 * 61 * 708 == 42_947_529_216
    at_30 = settings(True, "auto", budget=30 << 30)
    assert at_30.sglang_tokens == 745_856
    at_30 = replace(at_30, sglang_budget=lambda tokens, slots: tokens * 61 * 708)
    hopper_30 = settings(False, "bfloat16", preset=True, budget=30 << 30)
    assert hopper_30.blackwell_preset and hopper_30.sglang_blackwell is False
    told_30 = settings(True, "bfloat16", budget=30 << 30)

    def at_preset(changes):
        if not changes.get("sglang_blackwell"):
            return hopper_30
        return at_30 if changes.get("sglang_kv_cache_dtype") == "auto" else told_30

    assert logged_changes(run, hopper_30, at_preset) == {
        "sglang_blackwell": True, "sglang_kv_cache_dtype": "auto",
        "sglang_budget": 42_947_529_216}
    # a log in a dtype neither gives: neither offered
    other = replace(run, sglang_kv_dtype="float8_e5m2")
    assert not {"sglang_blackwell", "sglang_kv_cache_dtype"} & logged_changes(
        other, hopper, at).keys()


def test_an_h100_log_of_a_float32_deepseek_v32_agrees_in_sglangs_bfloat16():
    # SGLang keeps DeepSeek's sparse attention in bfloat16 on a Hopper whatever the model's
    # dtype (it takes no float32 --kv-cache-dtype; its auto picks bfloat16 below SM 10,
    # overrides.py 532-535): on an H100 80GB's 85,520,809,984 x 0.9 = 76,968,728,985 B, 61 x
    # 1,284 B a token holds 982,696 tokens, 982,656 in pages of 64, 61 x (982,656 + 64) x
    # 1,284 B = 71.68 GiB, and int(982,656 / 163,840 x 512) = 3,070 running requests. Such a
    # log of a float32 model, in torch.bfloat16, agrees line for line (FlatKV printed
    # torch.float32, #tokens: 517952, from float32's 61 x 2,436 B, and it differed)
    budget = 85_520_809_984 * 9 // 10
    assert budget // (61 * 1_284) // 64 * 64 == 982_656
    assert f"{61 * (982_656 + 64) * 1_284 / 2**30:.2f}" == "71.68"
    assert int(982_656 / 163_840 * 512) == 3_070
    log = """\
[2026-12-07 09:00:00 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 982656, KV size: \
71.68 GB
[2026-12-07 09:00:01 TP0] max_total_num_tokens=982656, chunked_prefill_size=8192, \
max_prefill_tokens=16384, max_running_requests=3070, context_len=163840, available_gpu_mem=5.1 GB"""
    f32 = load_preset("DeepSeek-V3.2").with_options(kv_dtype="float32").profile()
    r = run_strategy("sglang", f32, budget_bytes=budget, context_tokens=163_840)
    check = check_result(r, read_log(log))
    assert not check.differs and check.found == 2


def test_a_log_names_the_kv_dtype_its_run_kept_where_the_settings_keep_int8():
    # no engine keeps a KV cache in int8, so at int8 FlatKV has no line to check: SGLang's KV
    # line names the dtype its run kept, the fix (canonical, as --kv-dtype takes it)
    def named(line: str, kv_dtype: str | None = "int8") -> str | None:
        return logged_kv_dtype(logged_run(read_log(f"[2026-12-06 07:01:00 TP0] {line}")),
                               kv_dtype)

    fp8 = ("KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 655360, K size: "
           "20.00 GB, V size: 20.00 GB")
    assert named(fp8) == "float8_e4m3fn"
    assert named(fp8.replace("float8_e4m3fn", "bfloat16")) == "bfloat16"
    assert named(fp8.replace("float8_e4m3fn", "float8_e5m2")) == "float8_e5m2"
    # settings in a dtype an engine keeps start already: their lines say what differs
    assert named(fp8, "bfloat16") is None and named(fp8, None) is None
    # SGLang's lines before the dtype was logged, a store FlatKV does not know (fp4's uint8)
    assert named(fp8.replace("dtype: torch.float8_e4m3fn, ", "")) is None
    assert named(fp8.replace("float8_e4m3fn", "uint8")) is None
    # vLLM's lines FlatKV reads give bytes and tokens, no dtype
    assert logged_kv_dtype(logged_run(read_log(ANCHOR_LOG)), "int8") is None


def test_raw_bytes_take_a_logs_kv_dtype_at_its_element_size():
    # raw bytes in int8 are 1-byte elements: fp8's are 1 byte too (the bytes stand), bfloat16
    # keeps 2 (every KV byte count doubles: Llama-3.1-8B's 2,048 B a token a layer, K and V
    # 1,024 each, are 4,096 and 2,048 + 2,048), float32 4. Gemma-4-like sliding layers of
    # their own bytes scale alike. Of 788 B a token a layer with an indexer's 132 fp8 bytes
    # and, at 1 byte, fp8_ds_mla's scales (DeepSeek-V3.2: 656 + 132), no element size gives
    # bfloat16's 1,152 + 132 = 1,284: they must be given again
    from dataclasses import replace

    from flatkv.log_check import raw_kv_in
    from flatkv.profile import CacheProfile

    llama = CacheProfile(layer_types=("full_attention",) * 32, kv_bytes_per_slot=2_048,
                         kv_dtype="int8", kv_tensor_bytes=(1_024, 1_024))
    assert raw_kv_in(llama, "float8_e4m3fn") == {"kv_dtype": "float8_e4m3fn"}
    assert raw_kv_in(llama, "bfloat16") == {"kv_dtype": "bfloat16", "kv_bytes_per_slot": 4_096,
                                            "kv_tensor_bytes": (2_048, 2_048)}
    assert raw_kv_in(llama, "float32")["kv_bytes_per_slot"] == 8_192
    gemma = CacheProfile(layer_types=("sliding_attention", "full_attention"),
                         kv_bytes_per_slot=2_048, kv_tensor_bytes=(1_024, 1_024),
                         sliding_kv_bytes_per_slot=4_096, sliding_kv_tensor_bytes=(2_048, 2_048),
                         sliding_window=1_024, kv_dtype="int8")
    assert raw_kv_in(gemma, "bfloat16") == {
        "kv_dtype": "bfloat16", "kv_bytes_per_slot": 4_096, "kv_tensor_bytes": (2_048, 2_048),
        "sliding_kv_bytes_per_slot": 8_192, "sliding_kv_tensor_bytes": (4_096, 4_096)}
    indexed = CacheProfile(layer_types=("full_attention",) * 61, kv_bytes_per_slot=788,
                           kv_tensor_bytes=(788,), indexer_bytes_per_slot=132,
                           kernel_block_size=64, kv_dtype="int8")
    assert 656 + 132 == 788 and (512 + 64) * 2 + 132 == 1_284 != 2 * 788
    def refusal(profile: CacheProfile, dtype: str) -> str:
        with pytest.raises(ValueError) as refused:
            raw_kv_in(profile, dtype)
        return str(refused.value)

    assert refusal(indexed, "bfloat16") == (
        "kv_bytes_per_slot 788 holds an indexer's keys (indexer_bytes_per_slot 132, fp8 "
        "whatever the KV dtype) and fp8_ds_mla scales, which bfloat16's element size does not "
        "scale; give the KV bytes in bfloat16 again")
    assert raw_kv_in(indexed, "float8_e4m3fn") == {"kv_dtype": "float8_e4m3fn"}
    # bytes of no dtype, of no whole elements once re-sized, or past a profile's bound once
    # re-sized, are not carried over either
    with pytest.raises(ValueError, match="^kv_dtype is None: the KV bytes name no dtype"):
        raw_kv_in(replace(llama, kv_dtype=None, kv_tensor_bytes=()), "bfloat16")
    with pytest.raises(ValueError, match=r"^kv_bytes_per_slot 2049 is no whole number of "
                       r"float8_e4m3fn's 1-byte elements once re-sized from bfloat16's 2; "):
        raw_kv_in(replace(llama, kv_dtype="bfloat16", kv_bytes_per_slot=2_049,
                          kv_tensor_bytes=()), "float8_e4m3fn")
    huge = replace(llama, kv_bytes_per_slot=1 << 39, kv_tensor_bytes=())
    assert raw_kv_in(huge, "bfloat16")["kv_bytes_per_slot"] == 1 << 40  # MAX_ROW_BYTES
    # said as the other reasons are, the re-sizing and the fix after the field (it read "in
    # float32, kv_bytes_per_slot = ...", which the CLI and the page put after "its")
    assert refusal(huge, "float32") == (
        "kv_bytes_per_slot 2,199,023,255,552 is too large to be real once re-sized from int8's "
        "1-byte elements to float32's 4 (1,099,511,627,776 or less); give the KV bytes in "
        "float32 again")


def nemotron_h_default_vllm_log() -> str:
    """vLLM 0.34's start-up lines for Nemotron-H-8B in 40 GiB at 8,192 tokens with
    --mamba-ssm-cache-dtype auto (its hook's float32: 61,440 + 1,048,576 x 4 = 4,255,744 B a
    state page, P = 16 x cdiv(4,255,744, 16 x 4,096) = 1,040, 40 GiB // (4 x 1,040 x 4,096) =
    2,520 blocks), as EngineCore logs them (FlatKV's lines, vLLM's own code giving the same:
    bench/vllm_check.py)."""
    assert 16 * -(-4_255_744 // (16 * 4_096)) == 1_040
    assert 40 * 2**30 // (4 * 1_040 * 4_096) == 2_520
    r = run_strategy("vllm", load_preset("Nemotron-H-8B").profile(), budget_bytes=40 * 2**30,
                     context_tokens=8_192)
    assert (r.block_size, r.num_blocks) == (1_040, 2_520)
    return "\n".join(f"(EngineCore_DP0 pid=1) INFO 12-06 07:00:0{i} [x.py:1] {line}"
                     for i, line in enumerate(r.extras["log_lines"]))


def test_a_vllm_logs_p_names_the_ssm_dtype_that_gives_it():
    # the default log of Nemotron-H (float32, P 1,040) checked at the preset told bfloat16 (P
    # 16 x cdiv(61,440 + 2,097,152, 65,536) = 528): P is read off its "Setting attention block
    # size" line and float32, whose P it is, offered by name; at float32 nothing is; a P no
    # dtype gives (1,000) offers none; a model whose P no ssm dtype moves compares none
    from flatkv.log_check import RunSettings, logged_changes

    assert 16 * -(-2_158_592 // 65_536) == 528
    run = logged_run(read_log(nemotron_h_default_vllm_log()))
    assert (run.vllm_block_size, run.blocks) == (1_040, 2_520)
    # the same words vLLM logs for a quantized primary KV page's block, or an XPU's multiple
    # (platforms/interface.py 935, xpu.py 519), are no hybrid's P: not read
    prefix = "(EngineCore_DP0 pid=1) INFO 12-06 07:00:00 [x.py:1] "
    for other in ("Setting attention block size to 64 tokens so the quantized primary KV page "
                  "covers the higher-precision padded-spec page.",
                  "[XPU]Setting attention block size to 1040 tokens to ensure multiple of 64."):
        assert logged_run(read_log(prefix + other)).vllm_block_size is None
    profile = load_preset("Nemotron-H-8B").profile()

    def settings(**options) -> RunSettings:
        return RunSettings(tp=1, attn_dp=1, mamba_cache_mode="none", context=8_192,
                           chunk=8_192, vllm_blocks=(2_520,), **vllm_ssm_settings(
                               profile, StrategyOptions(**options)))

    def at(changes) -> RunSettings:
        return settings(vllm_ssm_dtype=changes.get("vllm_ssm_dtype", "bfloat16"))

    told = settings(vllm_ssm_dtype="bfloat16")
    assert (told.vllm_ssm_dtype, told.vllm_block_size) == ("bfloat16", 528)
    assert logged_changes(run, told, at) == {"vllm_ssm_dtype": "float32"}
    auto = settings()
    assert (auto.vllm_ssm_dtype, auto.vllm_block_size) == (None, 1_040)
    assert logged_changes(run, auto, lambda c: auto) == {}
    assert logged_changes(replace(run, vllm_block_size=1_000), told, at) == {}
    llama = vllm_ssm_settings(load_preset("Llama-3.1-8B").profile(), StrategyOptions())
    assert llama == {"vllm_ssm_dtype": None, "vllm_block_size": None}
    # a told float16 Kimi Linear: refused, so no P (its float16 is never offered)
    kimi = vllm_ssm_settings(load_preset("Kimi-Linear-48B-A3B").profile(),
                             StrategyOptions(vllm_ssm_dtype="float16"))
    assert kimi == {"vllm_ssm_dtype": "float16", "vllm_block_size": None}
