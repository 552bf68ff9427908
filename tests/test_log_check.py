"""Checking FlatKV's start-up log lines against a pasted engine log (flatkv.log_check).

Each log here is built from FlatKV's own lines as the engines print them: real prefixes (vLLM's
process tag, level, time and file; SGLang's time and rank), colour codes, other lines between,
one line per TP rank; the figures the checks expect are derived by hand in comments.
"""

from __future__ import annotations

import re

import pytest

from flatkv.hf_config import spec_from_hf_config
from flatkv.log_check import (
    DIFFERS,
    MAX_LOG_CHARS,
    MISSING,
    SAME,
    check_log,
    check_report,
    check_text,
    detect_engine,
    read_log,
    template,
)
from flatkv.presets import load_preset
from flatkv.strategies import run_strategy

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


# vLLM's "Memory after warmup" line with the run's own GPU figures that FlatKV elides (...)
WARMUP_FIGURES = ("free 1.25 GiB, used 77.50 GiB of 79.19 GiB;", "70.52",
                  "Setting num_gpu_blocks 4096.")


def as_logged(line: str) -> str:
    """A FlatKV line as the engine prints it: its elisions filled with the run's figures."""
    for filled in WARMUP_FIGURES:
        line = line.replace("...", filled, 1)
    return line


def engine_log(lines: list[str], prefix, ranks=(0, 1), other_pool: str = "") -> str:
    """A start-up log: each line once a rank, other lines between (weights, a progress bar, a
    compile line with a colour code left without its ESC), and ``other_pool`` last: a line of
    the same words as one of ours, of another pool or model."""
    out = [f"{prefix(0, 0)}Loading weights took 13.97 GiB and 4.2 seconds",
           "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:03<00:00,  1.18it/s]"]
    for i, line in enumerate(lines, 1):
        out += [f"{prefix(rank, i)}{as_logged(line)}" for rank in ranks]
        out.append(f"{prefix(0, i)}[32mmodel_runner[0m compiled graph {i} of 51 in 0.8 s")
    if other_pool:
        out.append(f"{prefix(0, 59)}{other_pool}")
    return "\n".join(out)


def test_hand_derived_lines_falcon_mamba():
    # vLLM at 40 GiB, mode none: one group of 64 Mamba1 layers, a page one layer's state
    # (conv 8,192 x 3 + ssm 8,192 x 16, bfloat16: 311,296 B), one page a request of 2,048
    # tokens: 42,949,672,960 // 311,296 // 64 = 2,155 blocks = 2,155 x 311,296 x 64 =
    # 42,934,927,360 B = 39.986 GiB ("39.99"); logged tokens 2,155 x 2,048 = 4,413,440,
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
    assert expected[-1].startswith("KV Cache is allocated. dtype: torch.bfloat16, #tokens: ")
    check = check_log(expected, "sglang", engine_log(expected, sglang_prefix))
    assert [c.outcome for c in check.lines] == [SAME] * len(expected) == [SAME] * 3
    assert check.log_engine == "sglang"
    assert check.verdict() == "SGLang: all 3 lines are in the log and agree with it."
    # a pool of another model (a drafter's) logs the same words: every match must agree, so
    # the line differs, and says which log line does
    drafter = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
               f"{r.capacity_tokens}, K size: 0.01 GB, V size: 0.01 GB")
    check = check_log(expected, "sglang", engine_log(expected, sglang_prefix,
                                                     other_pool=drafter))
    kv = check.lines[-1]
    assert kv.outcome == DIFFERS and check.verdict().startswith("SGLang: 1 of 3 lines differs")
    size = expected[-1].split("K size: ")[1].split(" GB")[0]
    # the third line's ranks are the log's lines 9 and 10 (2 + 3 x 2 + 1), the drafter's the
    # last, 2 + 3 x 3 + 1 = 12
    assert kv.detail() == (f"line 12 (TP0): K size (GB): FlatKV {size}, log 0.01; V size (GB): "
                           f"FlatKV {size}, log 0.01 | lines 9 (TP0), 10 (TP1) agree")


def test_a_figure_changed_by_one_differs_naming_it():
    expected = falcon("vllm")
    # rank 1 logs one block more than FlatKV (2,156, its GiB then 39.99 still)
    log = engine_log(expected, vllm_prefix).replace(
        "(Worker_TP1 pid=4101) \x1b[32mINFO\x1b[0m 12-06 07:00:02 [gpu_worker.py:297] Memory "
        "after warmup: free 1.25 GiB, used 77.50 GiB of 79.19 GiB; 2155 KV",
        "(Worker_TP1 pid=4101) \x1b[32mINFO\x1b[0m 12-06 07:00:02 [gpu_worker.py:297] Memory "
        "after warmup: free 1.25 GiB, used 77.50 GiB of 79.19 GiB; 2156 KV")
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
