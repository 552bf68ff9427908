"""python -m flatkv: tables, JSON and one-line errors with exit status 2."""

from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flatkv.app_state import AppState, decode_query
from flatkv.budget import GPU_ARCHITECTURES
from flatkv.cli import build_parser, main
from flatkv.units import parse_size

QWEN35 = ["--layers", "(3*linear_attention,full_attention)*12", "--kv-bytes-per-slot", "2048",
          "--state", "conv=49152,ssm=2097152"]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def refused(argv, capsys) -> str:
    """The one error line ``argv`` is refused with: exit status 2, nothing on stdout."""
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "", (code, out)
    return err


def test_plan_json_matches_hand_numbers(capsys):
    code, out, _ = run(["plan", *QWEN35, "--block-size", "64", "--alignment", "16",
                        "--budget", "80GB", "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["geometry"] == {"block_size": 1_056, "block_bytes": 103_219_200, "num_blocks": 775}
    assert d["totals"]["token_slots"] == 818_400
    assert len(d["tensors"]) == 36
    assert d["equalizer"]["needed_slots"] == 1_048


def test_plan_table(capsys):
    code, out, _ = run(["plan", *QWEN35, "--block-size", "64", "--budget", "80GB"], capsys)
    assert code == 0
    # alignment defaults to the block size: ceil(2,146,304 / 2,048) = 1,048 slots, rounded up
    # to a multiple of 64: 1,088, 40 slots more
    assert ("  1,048 > 64: round up to a multiple of 64 -> P = 1,088 (40 token slots of "
            "rounding).") in out.splitlines()
    # block bytes: 12 x 2,048 x 1,088 + 36 x 2,146,304 = 26,738,688 + 77,266,944 = 104,005,632
    # (99.19 MiB); 80e9 // that = 769 blocks (769 x 104,005,632 = 79,980,331,008 B), so
    # 19,668,992 B unused; 769 x 1,088 = 836,672 token slots. Rows in every block, whoever
    # owns it: KV 769 x 26,738,688 = 20,562,051,072 B, state 769 x 77,266,944 =
    # 59,418,279,936 B. Padding each of the 36 state rows up to the page row 2,048 x 1,088 =
    # 2,228,224 B would add 769 x 36 x 81,920 = 2,267,873,280 B.
    table = out[out.index("\nfigure "):out.index("\n(rows by tensor")].split("\n")[3:]
    assert [" ".join(line.split()) for line in table] == [
        "block_size (P) 1,088 tokens",
        "block_bytes 104,005,632 B (99.19 MiB)",
        "num_blocks 769",
        "token slots (num_blocks x P) 836,672",
        "budget 80,000,000,000 B (74.51 GiB)",
        "KV history rows (every block) 20,562,051,072 B (19.15 GiB)",
        "state rows (every block) 59,418,279,936 B (55.34 GiB)",
        "reserved 0 B",
        "unused 19,668,992 B (18.76 MiB)",
        "uniform-page padding (not allocated) 2,267,873,280 B (2.11 GiB)"]
    # a linear block id carries the 12 KV rows dead (26,738,688 / 104,005,632 = 25.71%), a
    # full one the 36 state rows (77,266,944 / 104,005,632 = 74.29%); each group by its kind,
    # as Layout's table names it (the cells read "linear_attention", "full_attention")
    lines = out.split("\n")
    dead = lines.index("Dead weight of the single page-id space (per block id owned by a group):")
    assert [" ".join(line.split()) for line in lines[dead + 3:dead + 5]] == [
        "state 36 77,266,944 26,738,688 25.71%",
        "full attention 12 26,738,688 77,266,944 74.29%"]
    # the bindings keep the planner's ids, as the plan's JSON and CSV write them
    assert "linear_attention[0].conv@0:" in out
    # and says how they differ from --strategy flat's kv history, split by owner, in the
    # compare table's words for its row ("dead weight", as the app's)
    assert "\n(rows by tensor, in every block whichever group owns it; --strategy flat splits " \
        "the same bytes by the group a page id goes to, and counts the other groups' rows as " \
        "dead weight)" in out


def test_per_component_planner(capsys):
    code, out, _ = run(["plan", "--layers", "full*32", "--kv-bytes-per-slot", "4096",
                        "--budget", "1GiB", "--planner", "per-component",
                        "--reserved-bytes-per-block", "65536", "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    per_block = 32 * 4096 * 16 + 65536
    assert d["geometry"]["num_blocks"] == 2**30 // per_block
    assert d["totals"]["reserved_bytes"] == 2**30 // per_block * 65536
    # its table says it pads nothing, not what a uniform page would pad (the packed planner's
    # row: 775 blocks x 36 state rows x (2,048 x 1,056 - 2,146,304) = 457,113,600 B at the
    # same P, SPEC section 1's alignment 16)
    rows = {}
    for planner in ("per-component", "packed"):
        code, out, _ = run(["plan", *QWEN35, "--block-size", "64", "--alignment", "16",
                            "--budget", "80GB", "--planner", planner], capsys)
        assert code == 0
        rows[planner] = [" ".join(line.split()) for line in out.splitlines()
                         if "padding" in line and line.rstrip().endswith(("B", "B)"))]
    assert 775 * 36 * (2_048 * 1_056 - 2_146_304) == 457_113_600
    assert rows == {"per-component": ["padding (a tensor per component: none) 0 B"],
                    "packed": ["uniform-page padding (not allocated) 457,113,600 B (435.94 MiB)"]}
    # state layers alone: blocks of 8 x 2,146,304 B, 40 GiB // 17,170,432 = 2,501 of them, and
    # no token slots (a page id holds no history), where 2,501 x 16 = 40,016 read as tokens
    code, out, _ = run(["plan", "--layers", "8*linear_attention", "--state",
                        "conv=49152,ssm=2097152", "--budget", "40GiB", "--planner",
                        "per-component"], capsys)
    figures = {" ".join(line.split()[:-1]): line.split()[-1] for line in out.splitlines()
               if line.startswith(("num_blocks", "block_size"))}
    assert (40 << 30) // (8 * 2_146_304) == 2_501 and figures["num_blocks"] == "2,501"
    assert ("token slots (num_blocks x P)            - (no attention layer: no token history)"
            ) in out.splitlines()


@pytest.mark.parametrize(
    ("argv", "needle"),
    # (review) not given, it was "--kv-bytes-per-slot is 0", a value no one typed
    [(["plan", "--layers", "full*4", "--budget", "1GB"], "--layers 'full*4' has attention "
      "layers, which need --kv-bytes-per-slot: add it, the bytes one token adds to one attention "
      "layer, e.g. --kv-bytes-per-slot 2048\n"),
     (["plan", "--layers", "full*4", "--kv-bytes-per-slot", "0", "--budget", "1GB"],
      "--kv-bytes-per-slot is 0 but layer_types has attention layers"),
     (["plan", *QWEN35, "--budget", "lots"], "--budget 'lots' is not a size"),
     (["plan", *QWEN35, "--budget", "1MB"], "holds 0 blocks of"),
     (["plan", *QWEN35, "--budget", "1GB", "--block-size", "0"], "must be positive"),
     (["plan", "--layers", "full*", "--kv-bytes-per-slot", "8", "--budget", "1GB"],
      "--layers 'full*': expected"),
     (["plan", "--layers", "linear*4", "--state", "conv", "--budget", "1GB"], "name=bytes"),
     (["plan", "--budget", "1GB"], "no model given"),
     (["plan", *QWEN35], "--budget, --vllm-blocks or --gpu-memory is required: give one of "
      "them"),
     (["frobnicate"], "'frobnicate' is not a command: give one of plan, compare, bench, model "
      "or presets"),
     (["plan", *QWEN35, "--budget", "1e999999999"], "exponent 999999999 is out of range"),
     (["plan", *QWEN35, "--budget", "-5GiB"], "--budget needs a value: give one after it (for "
      "a value that starts with '-', write --budget=VALUE)"),
     (["plan", *QWEN35, "--budget", "80GB", "--context", "0"], "--context 0 must be "
      "positive: give 1 or more tokens"),
     (["plan", *QWEN35, "--budget", "80GB", "--strategy", "flat", "--context", "²"],
      "--context '²' is not a whole number of tokens"),
     (["plan", *QWEN35, "--budget", "80GB", "--margin", "-1"],
      "--margin -1 must not be negative: give 0 or more"),
     (["plan", *QWEN35, "--budget", "80GB", "--strategy", "vllm",
       "--reserved-bytes-per-block", "5000"], "applies to the per-component layout"),
     (["plan", *QWEN35, "--budget", "80GB", "--strategy", "vllm", "--planner", "packed"],
      "--planner chooses the planner without --strategy"),
     (["plan", "--layers", "full*4", "--kv-bytes-per-slot", "1.5", "--budget", "1GB"],
      "--kv-bytes-per-slot '1.5' is not a whole number of bytes (between 1 and 2)"),
     (["plan", *QWEN35, "--budget", "1GB", "--planner", "per-component",
       "--reserved-bytes-per-block", "100.5"], "'100.5' is not a whole number of bytes"),
     (["plan", "--layers", "linear", "--state", "conv=5,conv=6", "--budget", "1GB"],
      "names 'conv' twice"),
     (["compare", "--layers", "2*sliding,2*full", "--kv-bytes-per-slot", "2048", "--budget",
       "1GiB"], "error: --layers '2*sliding,2*full' has sliding-window layers but no "
      "--sliding-window gives their window: add e.g. --sliding-window 4096 (tokens)\n"),
     (["plan", "--layers", "full", "--kv-bytes-per-slot", "8", "--sliding-window", "128",
       "--budget", "1GiB"], "error: --sliding-window is given but --layers 'full' has no "
      "sliding layer: drop --sliding-window or add sliding layers\n"),
     (["plan", "--layers", "linear*4", "--state", "conv=49152", "--budget", "1GiB"],
      "this model has none (no attention layer, only state): add --planner per-component"),
     (["model", "--model-file", "/dev/zero"], "too large for a model file"),
     (["compare", "--preset", "gpt-oss-20b", "--budget", "10GB", "--sliding-window", "4096"],
      "or raw bytes (--sliding-window), not both: the model's own values would be used"),
     (["compare", "--preset", "gpt-oss-20b", "--budget", "10GB", "--sliding-window", ""],
      "or raw bytes (--sliding-window), not both"),  # given empty is given, not dropped
     (["compare", "--layers", "3*chunked,full", "--kv-bytes-per-slot", "4096", "--budget",
       "1GiB"], "error: --layers '3*chunked,full' has chunked layers but no "
      "--attention-chunk-size gives their chunk: add e.g. --attention-chunk-size 8192 "
      "(tokens)\n"),
     (["plan", "--layers", "sliding", "--kv-bytes-per-slot", "8", "--sliding-window", "0",
       "--budget", "1GiB"], "--sliding-window 0 must be positive: give 1 or more tokens"),
     (["plan", "--layers", "chunked", "--kv-bytes-per-slot", "8", "--attention-chunk-size",
       "8,19", "--budget", "1GiB"], "--attention-chunk-size '8,19' is not a whole number of "
      "tokens (commas only group thousands): give e.g. 262144"),
     (["plan", "--layers", "full", "--kv-bytes-per-slot", "8", "--attention-chunk-size", "8192",
       "--budget", "1GiB"], "error: --attention-chunk-size is given but --layers 'full' has "
      "no chunked layer: drop --attention-chunk-size or add chunked layers\n"),
     (["compare", "--preset", "Llama-4-Scout-17B-16E", "--budget", "10GB",
       "--attention-chunk-size", "4096"], "or raw bytes (--attention-chunk-size), not both"),
     (["plan", "--preset", "Qwen3.5-27B", "--budget", "80GB", "--kv-bytes-per-slot", "1",
       "--state", "conv=1"], "raw bytes (--kv-bytes-per-slot, --state), not both"),
     (["bench", "--preset", "Llama-3.1-8B", "--layers", "full"], "raw bytes (--layers), not"),
     # 'cpu' and a line break is no device: on a machine with a GPU it was taken for CUDA
     (["bench", "--preset", "Llama-3.1-8B", "--budget", "1GiB", "--device", "cpu\n"],
      "error: --device 'cpu\\n': not a device; give --device cpu, cuda or cuda:N\n"),
     (["bench", "--layers", "full*2", "--kv-bytes-per-slot", "64", "--reserved-bytes-per-block",
       "10"], "unrecognized argument --reserved-bytes-per-block: python -m flatkv bench "
     "--help lists the options"),  # packed slabs: none
     (["model", "--preset", "Llama-3.1-8B", "--tp", "x"],
      "--tp 'x' is not a whole number: give one in digits, e.g. 2"),
     ([], "a command is required: give one of plan, compare, bench, model or presets"),
     # numbers past what int() parses, and names past a screen, said short
     (["plan", "--layers", "full*1" + "0" * 5000, "--kv-bytes-per-slot", "1", "--budget",
       "1GB"], "(5,006 characters) expands to more than 2,048 cache layers"),
     (["plan", "--layers", "full", "--kv-bytes-per-slot", "9" * 5000, "--budget", "1GB"],
      "(5,000 characters) has too many digits: a size is at most 1 EiB"),
     (["plan", *QWEN35, "--budget", "1GB", "--block-size", "9" * 5000],
      "(5,000 characters) is not a whole number: give one in digits, e.g. 12"),
     (["plan", "--layers", "full," + "y" * 300, "--kv-bytes-per-slot", "1", "--budget", "1GB"],
      "unknown layer kind '" + "y" * 40 + "'... (300 characters):"),
     (["model", "--hf-config", "x" * 300], "config.json not found at '" + "x" * 80 + "'... "
      "(300 characters)"),
     (["plan", *QWEN35, "--budget", "x" * 5000], "(5,000 characters) is not a size"),
     # a unit left out is refused, as the app's memory fields refuse it, not read as 44 B
     (["plan", *QWEN35, "--budget", "44.59"], "--budget '44.59' reads as 44 B: give a unit, "
      "e.g. 44.59GB or 44.59GiB"),
     (["plan", *QWEN35, "--budget", "70B"], "--budget '70B' reads as 70 B (B is bytes, not "
      "billions): give 70GB or 70GiB"),
     (["plan", *QWEN35, "--budget", "100000"], "--budget '100000' reads as 100,000 B: give a "
      "unit, e.g. 80GB or 44.59GiB"),
     (["plan", *QWEN35, "--budget", "1e" + "9" * 5000], "exponent of 5,000 digits is out of"),
     # 10,000 state tensors of 2,048 layers planned for minutes (a layer keeps one or two)
     (["plan", "--layers", "linear*2048", "--state", ",".join(f"t{i}=1" for i in range(10_000)),
       "--budget", "1GiB", "--planner", "per-component"], "error: --state has 10,000 tensors, "
      "too many to be real: give 8 or fewer (a state layer keeps one or two, conv and ssm)\n"),
     # the fix in the flag's terms (leave it unset), not the library's (None)
     (["plan", *QWEN35, "--budget", "1GB", "--alignment", str(2**62)], "--alignment "
      "4,611,686,018,427,387,904 is too large to be real: give 1,099,511,627,776 or less, or "
      "leave it unset for the block size\n")],
)
def test_errors_are_one_line_exit_2(argv, needle, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err
    assert len(err) < 600  # nothing echoed whole


@pytest.mark.parametrize(("config", "needle"), [
    # transformers' strict check and Python's errors, in config.json's words (a fuzzer's
    # findings: "Field 'vocab_size' expected int, got list", "(TypeError: 'bool' object is
    # not iterable)", "= True", "= nan")
    ('{"model_type": "llama", "vocab_size": [["lots"]]}', "error: config.json vocab_size = "
     '[["lots"]] is not a value transformers\' llama config takes: give a whole number, or '
     "remove the field\n"),
    ('{"model_type": "deepseek_v2", "kv_lora_rank": 2, "qk_rope_head_dim": 64, '
     '"layer_types": true}', "error: config.json layer_types = true is not a value "
     "transformers' deepseek_v2 config takes: fix or remove the field\n"),
    ('{"model_type": "llama", "head_dim": NaN}', "error: config.json head_dim = NaN must be a "
     "whole number: give 1 or more, or remove the field\n"),
])
def test_a_bad_config_json_is_one_line_exit_2_in_its_own_words(config, needle, tmp_path,
                                                                capsys):
    path = tmp_path / "config.json"
    path.write_text(config)
    code, out, err = run(["plan", "--hf-config", str(path), "--gpu-memory", "80GB"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.endswith(needle)


@pytest.mark.parametrize("pattern", ["full*0x10", "full*-1", "full*1.5", "full*", "full*1e3"])
def test_a_malformed_repeat_count_is_one_line_exit_2_naming_where(pattern, capsys):
    from flatkv.patterns import parse_layer_pattern

    with pytest.raises(ValueError) as said:
        parse_layer_pattern(pattern)
    code, out, err = run(["plan", "--layers", pattern, "--kv-bytes-per-slot", "8", "--budget",
                          "1GB"], capsys)
    assert code == 2 and out == ""
    # the library's line, whole, said of the flag: "layer pattern 'full*'" named no option
    library = str(said.value)
    assert library.startswith(f"layer pattern '{pattern}'")
    assert err == f"python -m flatkv: error: --layers{library.removeprefix('layer pattern')}\n"
    assert "at character 6" in err and "(3*linear,full)*12" in err


def test_module_entry_point():
    proc = subprocess.run([sys.executable, "-m", "flatkv", "plan", "--layers", "full*2",
                           "--kv-bytes-per-slot", "1", "--budget", "1MiB"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    # two full layers of 1 B a slot at the default P 16: 32 B a block, 2**20 // 32 = 32,768
    assert "\nnum_blocks                                            32,768\n" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "flatkv", "plan", "--budget", "x"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_models_own_state_layers_are_not_named_as_the_state_flag(tmp_path, capsys):
    # a model file whose two GDN kinds keep other state: its message is the model's, not one
    # of --state (which the command was not given): conv (2 x 16 x 128 + 32 x 128) x 3 rows x
    # 2 B = 49,152 and ssm 32 x 128 x 128 x 2 B = 1,048,576; with 16 value heads 36,864 and
    # 524,288
    from flatkv.presets import load_preset

    spec = load_preset("Qwen3-Next-80B-A3B").to_dict()
    spec["kinds"]["gdn16"] = {**spec["kinds"]["gdn"], "v_heads": 16}
    spec["pattern"] = "(3*gdn,full)*11,3*gdn16,full"
    path = tmp_path / "model.json"
    path.write_text(json.dumps(spec))
    assert refused(["model", "--model-file", str(path)], capsys) == (
        "python -m flatkv: error: state layers of 'Qwen3-Next-80B-A3B' differ in state bytes "
        "(gdn: conv 49,152 B + ssm 1,048,576 B; gdn16: conv 36,864 B + ssm 524,288 B): the "
        "planner takes one state_const_bytes; give all state kinds the same geometry\n")


def test_an_empty_kv_bytes_per_slot_is_said_empty_not_read_as_0(capsys):
    # --kv-bytes-per-slot '' read as 0: a model of state layers alone planned without a word,
    # and beside attention layers the error said "is 0"; now said empty, as ' ' was
    for layers in ("linear*12", "(3*linear,full)*12"):
        assert refused(["plan", "--layers", layers, "--kv-bytes-per-slot", "", "--state",
                        "conv=49152", "--budget", "80GB", "--planner", "per-component"],
                       capsys) == (
            "python -m flatkv: error: --kv-bytes-per-slot is empty: give a size such as 4096 or "
            "4KiB\n")


def test_a_blank_state_is_said_missing_in_flag_terms(capsys):
    # --state ' ' passed the check for a missing --state and failed in the profile's words
    # ("give the state tensors, e.g. {'conv': 49152, 'ssm': 2097152}", a Python dict)
    assert refused(["plan", "--layers", "(3*linear,full)*12", "--kv-bytes-per-slot",
                    "4096", "--state", " ", "--budget", "80GB"], capsys) == (
        "python -m flatkv: error: --layers '(3*linear,full)*12' has linear (state) layers but "
        "no --state gives their bytes: add e.g. --state conv=49152,ssm=2097152 (bytes per layer "
        "per TP rank)\n")


def test_reserved_bytes_on_packed_slabs_say_the_flag_that_fixes_it(capsys):
    # the library's words for the planner ("plan with the per-component planner (planner
    # 'per-component')") are no flag; said as --planner per-component, typed or by default
    for planner in ([], ["--planner", "packed"]):
        assert refused(["plan", *QWEN35, "--budget", "1GB", "--reserved-bytes-per-block",
                        "1024", *planner], capsys) == (
            "python -m flatkv: error: --reserved-bytes-per-block applies to the per-component "
            "planner, not packed slabs: add --planner per-component, or drop the option\n")


def test_bench_bounds_block_size_and_alignment_as_plan_does(capsys):
    # bench planned --block-size 2**63 unchecked and asked for "a budget of at least
    # 453,347,182,355,486,019,551,232 B"; now refused as plan refuses it (at most 2**40 tokens)
    for flag in ("--block-size", "--alignment"):
        assert refused(["bench", "--preset", "Llama-3.1-8B", "--max-blocks", "4", flag,
                        str(2**63)], capsys) == (
            f"python -m flatkv: error: {flag} 9,223,372,036,854,775,808 is too large to be "
            "real: give 1,099,511,627,776 or less\n")


def test_bench_threads_past_the_cores_are_grouped(capsys):
    # "--threads = 9223372036854775808 is more than ..." was the one count printed bare; then
    # "--threads = 9,223,...", the library's "field = N", where bench's other messages read
    # "--flag N: what; fix"
    cores = os.cpu_count() or 1
    assert refused(["bench", "--preset", "Llama-3.1-8B", "--max-blocks", "4", "--threads",
                    str(2**63)], capsys) == (
        "python -m flatkv: error: --threads 9,223,372,036,854,775,808 is more than this "
        f"machine's {cores:,} core{'s' if cores > 1 else ''}: give {cores:,} or fewer, or 0 for "
        "torch's choice\n")


def test_benchs_counts_are_refused_in_one_form(capsys):
    # bench's counts said "--repeats must be positive, got 0", "--repeats = 100,000,000 is
    # too large to be real (at most 100)" and "--pages-per-call is 2,000, more than ...",
    # where its others read "--max-blocks 1: ...; give ...": one form now, N grouped
    bench = ["bench", "--preset", "Llama-3.1-8B", "--budget", "1GiB"]
    for argv, said in (
            (["--repeats", "0"], "--repeats 0 must be positive (a bench times one round at "
             "least): give 1 or more, or leave it out for the default"),
            (["--repeats", "100000000"], "--repeats 100,000,000 is more timed rounds than a "
             "bench takes: give 100 or fewer"),
            (["--pages-per-call", "0"], "--pages-per-call 0 must be positive (a call moves one "
             "page at least): give 1 or more, or leave it out for the default"),
            (["--max-blocks", "3", "--pages-per-call", "2000"], "--pages-per-call 2,000 is more "
             "than the 3 blocks of the pool: give at most 3, or raise --max-blocks")):
        assert refused([*bench, *argv], capsys) == f"python -m flatkv: error: {said}\n", argv


def test_argparses_own_messages_quote_a_long_value_by_its_start(capsys):
    # "invalid choice: 'xxx...'" echoed a 5,000-character value whole (a 5 KB line); shortened
    # as every other message quotes a value, and so does a whole-number option's own message
    shown = repr("x" * 80) + "... (5,000 characters)"
    for argv, message in (
            (["--tp", "x" * 5000], f"--tp {shown} is not a whole number: give one in digits, "
             "e.g. 2"),
            (["--planner", "x" * 5000], f"--planner {shown} is not one it takes: give packed or "
             "per-component"),
            (["--tp", "x"], "--tp 'x' is not a whole number: give one in digits, e.g. 2")):
        plan = ["plan", "--preset", "gpt-oss-20b", "--budget", "80GB", *argv]
        assert refused(plan, capsys) == f"python -m flatkv: error: {message}\n"


def test_a_type_error_names_its_flag_once(capsys):
    # argparse prefixed "argument --budget: " to a message that starts with the flag itself
    # ("argument --budget: --budget '1' reads as 1 B: ..."); named once now, and before the
    # type function's message where it does not name the flag (--block-size)
    for argv, message in (
            (["--budget", "1"], "--budget '1' reads as 1 B: give a unit, e.g. 1GB or 1GiB"),
            (["--weights", "x"], "--weights 'x' is not a size: write a number with an optional "
             "unit, e.g. 80GB, 10GiB, 1.5TiB, 12e9 or 4096"),
            (["--reserved-bytes-per-block", "1.5"], "--reserved-bytes-per-block '1.5' is not a "
             "whole number of bytes (between 1 and 2): give whole bytes, e.g. 4096 or 4KiB"),
            (["--max-batched-tokens", "abc"], "--max-batched-tokens 'abc' is not a whole number "
             "of tokens: give e.g. 262144, 256K (262,144) or 128k (128,000)"),
            # typed by its alias: named by that alias, once (it was the --sglang- name)
            (["--chunked-prefill-size", "abc"], "--chunked-prefill-size 'abc' is not a whole "
             "number of tokens: give e.g. 262144, 256K (262,144) or 128k (128,000); or -1 (any "
             "whole number 0 or less, as SGLang reads it, or off) for chunked prefill off"),
            # past int()'s 4,300 digits: its own "Exceeds the limit (4300 digits) for integer
            # string conversion" was the message, under argparse's prefix
            (["--chunked-prefill-size=" + "9" * 5_000], "--chunked-prefill-size "
             f"'{'9' * 24}...' is too long for a token count (5,000 characters): give e.g. "
             "262144, 256K (262,144) or 128k (128,000); or -1 (any whole number 0 or less, as "
             "SGLang reads it, or off) for chunked prefill off"),
            (["--chunked-prefill-size=-" + "9" * 5_000], "--chunked-prefill-size "
             f"'-{'9' * 23}...' must be positive: give 1 or more tokens; or -1 (any whole number 0 "
             "or less, as SGLang reads it, or off) for chunked prefill off"),
            # a plus sign refused before 0 as before 5 ('+0' was read as chunked prefill off)
            (["--chunked-prefill-size", "+0"], "--chunked-prefill-size '+0' has a plus "
             "sign: write it without the sign, e.g. 0, for chunked prefill off"),
            (["--block-size", "0"], "--block-size 0 must be positive: give 1 or more")):
        code, out, err = run(["compare", "--preset", "Llama-3.1-8B", *argv], capsys)
        assert (code, out, err) == (2, "", f"python -m flatkv: error: {message}\n")


def test_a_count_that_argparse_alone_bounds_is_refused_there_below_1_and_past_20_digits(capsys):
    # --block-size, --alignment, --ssm-element-bytes and compare's --requests take no 0 (no
    # page, alignment, element or request of none); nothing after argparse refuses it with a
    # fix (--ssm-element-bytes 0 divided --state's ssm by zero), so argparse does, as it does a
    # number past 20 digits (2**64 = 18,446,744,073,709,551,616 has 20). The strategy options
    # read such numbers and leave them to StrategyOptions, whose refusal names its own fix
    # (test_strategy_cli). 'x' is given the fix nearest 12 that the option takes: 12.
    raw = ["--layers", "full*2,linear", "--kv-bytes-per-slot", "64", "--state", "ssm=128"]
    llama = ["--preset", "Llama-3.1-8B", "--budget", "1GiB"]
    nines = "9" * 21
    for argv, flag in ((["plan", *raw, "--budget", "1GiB"], "--ssm-element-bytes"),
                       (["plan", *llama], "--block-size"), (["plan", *llama], "--alignment"),
                       (["compare", *llama, "--context", "8K"], "--requests")):
        for typed, message in (
                ("0", "0 must be positive: give 1 or more"),
                ("-1", "-1 must be positive: give 1 or more"),
                (nines, f"'{nines}' has over 20 digits, more than any count here: give one in "
                 "digits, e.g. 12"),
                ("x", "'x' is not a whole number: give one in digits, e.g. 12")):
            assert refused([*argv, f"{flag}={typed}"], capsys) == (
                f"python -m flatkv: error: {flag} {message}\n")


def test_a_long_preset_device_or_sglang_ssm_dtype_is_quoted_by_its_start(capsys):
    # --preset, bench's --device and --sglang-ssm-dtype echoed a 5,000-character value whole
    # (5 KB lines); quoted by its start, as units.quoted writes every other value
    shown = repr("x" * 40) + "... (5,000 characters)"
    code, out, err = run(["plan", "--preset", "x" * 5000, "--budget", "80GB"], capsys)
    assert code == 2 and err.startswith(f"python -m flatkv: error: unknown preset {shown}: "
                                        "known presets are DeepSeek-V3, ") and len(err) < 600
    assert refused(["bench", "--preset", "Llama-3.1-8B", "--device", "x" * 5000], capsys) == (
        f"python -m flatkv: error: --device {shown}: not a device; give --device cpu, cuda or "
        "cuda:N\n")
    assert refused(["plan", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                    "--strategy", "sglang", "--sglang-ssm-dtype", "x" * 5000], capsys) == (
        f"python -m flatkv: error: --sglang-ssm-dtype is {shown}: SGLang keeps the ssm state in "
        "one of float32, bfloat16, float16 (SGLANG_MAMBA_SSM_DTYPE), or leave it unset (None) "
        "for SGLang's own choice (the config's mamba_ssm_dtype, else float32)\n")
    assert refused(["plan", "--preset", "Nemotron-H-8B", "--budget", "80GB",
                    "--strategy", "vllm", "--vllm-ssm-dtype", "x" * 5000], capsys) == (
        f"python -m flatkv: error: --vllm-ssm-dtype is {shown}: vLLM keeps the ssm state in "
        "one of float32, bfloat16, float16 (--mamba-ssm-cache-dtype), or leave it unset (None) "
        "for vLLM's own choice (its auto: the model's, Nemotron-H's config "
        "mamba_ssm_cache_dtype, else float32, Kimi Linear's float32)\n")
    code, _, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
                        "--vllm-ssm-dtype", "float32"], capsys)
    assert code == 0 and ("python -m flatkv: note: --vllm-ssm-dtype changes no figure here: "
                          "this model gives it nothing to act on") in err.splitlines()


def test_an_empty_state_beside_a_model_is_refused_as_given(capsys):
    # --state '' was the option's default, so beside a preset it passed unseen, where
    # --sliding-window '' is refused as given; now refused alike
    assert refused(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                    "--state", ""], capsys) == (
        "python -m flatkv: error: give either a model (--preset, --hf-config, --model-file) or "
        "raw bytes (--state), not both: the model's own values would be used and yours "
        "ignored\n")


def test_errors_name_the_option_the_user_typed_not_the_library_field():
    from flatkv.cli import build_parser, in_option_terms

    parser = build_parser()
    assert in_option_terms("cpu_threads 100000 is more than this machine's 2 cores",
                           parser) == "--threads 100000 is more than this machine's 2 cores"
    assert in_option_terms("pages_per_call[0] 0 must be positive: give 1 or more", parser) == (
        "--pages-per-call 0 must be positive: give 1 or more")
    # a state row's name stays with its flag: --state ssm=0
    assert in_option_terms("state_const_bytes['ssm'] 0 must be positive: give 1 or more",
                           parser) == (
        "--state ssm 0 must be positive: give 1 or more")
    # a window's field is its flag's: a model file's message keeps its field (FileFieldError,
    # not read here) and a config.json's names the config
    assert in_option_terms("sliding_window is 0", parser) == "--sliding-window is 0"
    assert in_option_terms("config.json layer_types = 5 is bad", parser) == (
        "config.json layer_types = 5 is bad")


def test_a_windowed_model_without_its_window_names_the_flag_or_the_field_given_by(tmp_path,
                                                                               capsys):
    # --layers with sliding layers and no --sliding-window: the flag to add (the profile's
    # "sliding_window is not set ... (sliding_window in the profile or config, --sliding-window
    # on the command line)" had cli.py keep the field name for every path); a profile file
    # without one: its field, as the file writes it; a config.json: its own words
    assert refused(["compare", "--layers", "2*sliding,full", "--kv-bytes-per-slot", "64",
                    "--budget", "1GiB"], capsys) == (
        "python -m flatkv: error: --layers '2*sliding,full' has sliding-window layers but no "
        "--sliding-window gives their window: add e.g. --sliding-window 4096 (tokens)\n")
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"format": "flatkv-profile/1", "kv_bytes_per_slot": 64,
                                   "layers": ["sliding_attention", "full_attention"]}))
    assert refused(["compare", "--model-file", str(profile), "--budget", "1GiB"], capsys) == (
        "python -m flatkv: error: sliding_window is not set but the model has sliding_attention "
        "layers: give the window in tokens (sliding_window in the profile or config, "
        "--sliding-window on the command line)\n")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 8,
        "num_key_value_heads": 8, "hidden_size": 512,
        "layer_types": ["sliding_attention", "full_attention"]}))
    assert refused(["compare", "--hf-config", str(config), "--budget", "1GiB"], capsys) == (
        "python -m flatkv: error: llama layer 0 is sliding_attention but sliding_window is not "
        "set: add sliding_window to the config\n")


def test_compare_int8_refuses_both_engines_and_their_fix_runs(capsys):
    # neither vLLM nor SGLang keeps a KV cache in int8 (their --kv-cache-dtype and --dtype name
    # none), so at --kv-dtype int8 both engine columns say why and name the fix, while FlatKV's
    # own layout keeps int8: Llama-3.1-8B in 40 GiB, 40 GiB // (32 x 16 x 2,048) = 40,960
    # blocks. At the fix, --kv-dtype fp8, vLLM runs those 40,960 blocks and SGLang
    # 40 GiB // (32 x 2,048) = 655,360 tokens
    def results(dtype):
        code, out, _ = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "40GiB",
                            "--kv-dtype", dtype, "--json"], capsys)
        assert code == 0
        return {r["strategy"]: r for r in json.loads(out)}

    fix = "; set the KV dtype to float8_e4m3fn (fp8) or bfloat16"
    int8 = results("int8")
    assert int8["flat"]["num_blocks"] == (40 << 30) // (32 * 16 * 2_048) == 40_960
    assert not int8["vllm"]["applies"] and not int8["sglang"]["applies"]
    assert int8["vllm"]["reason"].startswith(
        "vLLM refuses to start: no KV cache in int8 in 0.31 to 0.34: ")
    assert int8["sglang"]["reason"].startswith(
        "SGLang refuses to start: no KV cache in int8 in 0.5.23: ")
    assert int8["vllm"]["reason"].endswith(fix) and int8["sglang"]["reason"].endswith(fix)
    fp8 = results("fp8")
    assert (fp8["vllm"]["block_size"], fp8["vllm"]["num_blocks"]) == (16, 40_960)
    assert fp8["sglang"]["logged_tokens"] == (40 << 30) // (32 * 2_048) == 655_360
    # --kv-dtype's help says so where int8 is offered
    with pytest.raises(SystemExit) as exited:
        main(["compare", "--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert ("--kv-dtype D KV cache dtype (bf16, fp8, float32, ...; int8 is FlatKV's layouts' "
            "alone: vLLM and SGLang keep no cache in it)") in " ".join(out.split())


def test_an_unknown_dtype_names_the_dtype_option_typed(capsys):
    # "kv_dtype: unknown dtype '1'" named the library field for --kv-dtype 1 (the field was
    # rewritten before a space, not before a colon); a model file's own kv_dtype keeps its name
    assert refused(["plan", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                    "--kv-dtype", "1"], capsys) == (
        "python -m flatkv: error: --kv-dtype: unknown dtype '1': use one of float32, bfloat16, "
        "float16, float8_e4m3fn, float8_e5m2, int8 (aliases: bf16, e4m3, e5m2, f16, f32, float, "
        "float8, float8_e4m3, fp16, fp32, fp8, fp8_e4m3, fp8_e4m3fn, fp8_e5m2, half, i8)\n")


def test_raw_layers_and_state_are_refused_together_in_flag_terms(capsys):
    # state layers need their bytes, and --state needs state layers: each names the flag to fix
    code, out, err = run(["plan", "--layers", "(3*linear,full)*12", "--kv-bytes-per-slot",
                          "2048", "--budget", "80GB"], capsys)
    assert (code, err) == (2, "python -m flatkv: error: --layers '(3*linear,full)*12' has "
                              "linear (state) layers but no --state gives their bytes: add e.g. "
                              "--state conv=49152,ssm=2097152 (bytes per layer per TP rank)\n")
    code, out, err = run(["plan", "--layers", "full*4", "--kv-bytes-per-slot", "2048",
                          "--state", "conv=100", "--budget", "80GB"], capsys)
    assert (code, err) == (2, "python -m flatkv: error: --state is given but --layers 'full*4' "
                              "has no linear (state) layer: drop --state or add linear layers\n")
    # a refusal's GiB figures carry thousands separators, as its bytes do
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--budget", "80GB", "--strategy",
                          "vllm", "--context", "16M"], capsys)
    assert code == 2 and "(2.00 TiB: its pages in every group" in err


def test_a_state_rows_error_names_its_flag_and_name(capsys):
    code, out, err = run(["plan", "--layers", "full,linear", "--kv-bytes-per-slot", "512",
                          "--state", "ssm=0", "--budget", "1GiB"], capsys)
    assert (code, err) == (2, "python -m flatkv: error: --state ssm '0' must be positive: give a "
                              "size of 1 byte or more, or leave the tensor out\n")


def test_plan_refuses_the_options_its_layout_would_drop(capsys):
    # the planner alone reads the block size, the alignment and the reserved bytes: a layout's
    # option would leave the plan as it is, so it is refused with a layout that reads it
    args = ["plan", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--budget", "44.59GiB"]
    for option, flag, layout in ((["--mamba-cache-mode", "all"], "--mamba-cache-mode", "flat"),
                                 (["--kernel-block-size", "64"], "--kernel-block-size", "vllm"),
                                 (["--swa-full-tokens-ratio", "0.5"], "--swa-full-tokens-ratio",
                                  "sglang"),
                                 (["--no-sglang-swa-pool"], "--no-sglang-swa-pool", "sglang")):
        code, out, err = run([*args, *option], capsys)
        assert (code, out) == (2, "")
        assert err == (f"python -m flatkv: error: {flag} acts on a layout's figures, which the "
                       f"planner alone does not count: add --strategy {layout} (a layout that "
                       "reads it), or use compare\n")
    # its default changes nothing, and the planner's own options still apply
    code, out, err = run([*args, "--mamba-cache-mode", "none", "--block-size", "32"], capsys)
    assert code == 0 and err == "" and out.startswith("Plan (packed): Qwen3-Next-80B-A3B")
    code, out, err = run([*args, "--mamba-cache-mode", "all", "--strategy", "vllm"], capsys)
    assert code == 0 and "mode all" in out
    # a layout that does not read an option says which one does
    code, out, err = run([*args, "--strategy", "vllm", "--swa-full-tokens-ratio", "0.5"], capsys)
    assert (code, out) == (2, "")
    assert err == ("python -m flatkv: error: --swa-full-tokens-ratio is not read by --strategy "
                   "vllm: use --strategy sglang (a layout that reads it), or compare, which "
                   "shows every layout\n")
    code, out, err = run([*args, "--strategy", "sglang", "--swa-full-tokens-ratio", "0.5"], capsys)
    assert code == 0 and out.startswith("sglang: Qwen3-Next-80B-A3B")


def test_a_layout_refuses_the_block_size_or_alignment_it_does_not_read(capsys):
    # SGLang pages by --sglang-page-size, vLLM by max(kernel block, block size), aliased by the
    # block size as given: --alignment (and SGLang's --block-size) printed the figures without
    # it, exit 0; now refused in one line as every other unread option
    args = ["plan", "--preset", "qwen3-next-80b-a3b", "--budget", "40GiB"]
    for strategy, option, instead in (
            ("vllm", ["--alignment", "7"], "vLLM's page is a multiple of "
             "max(--kernel-block-size, --block-size)"),
            ("sglang", ["--alignment", "7"], "SGLang's page is --sglang-page-size"),
            ("sglang", ["--block-size", "64"], "SGLang's page is --sglang-page-size")):
        code, out, err = run([*args, "--strategy", strategy, *option], capsys)
        assert (code, out) == (2, "")
        assert err == (f"python -m flatkv: error: {option[0]} is not read by --strategy "
                       f"{strategy} ({instead}): use --strategy flat (a layout that reads it), "
                       "or compare, which shows every layout\n")
    # the default block size is no option given; the layouts that read them take them
    code, out, err = run([*args, "--strategy", "sglang"], capsys)
    assert code == 0 and out.startswith("sglang: Qwen3-Next-80B-A3B")
    for strategy, option in (("flat", "--alignment"), ("per-component", "--alignment"),
                             ("vllm", "--block-size"), ("lcm", "--block-size")):
        code, out, err = run([*args, "--strategy", strategy, option, "64"], capsys)
        assert code == 0 and "changes no figure" not in err
    # lcm reads the alignment (its candidate pages), but here the block size asked meets the
    # padding bound, so it tries no other page: a note says so
    code, out, err = run([*args, "--strategy", "lcm", "--alignment", "7"], capsys)
    assert code == 0 and out.startswith("lcm: Qwen3-Next-80B-A3B")
    assert ("python -m flatkv: note: --alignment 7 changes no figure here: lcm tries pages at "
            "multiples of it only where --block-size pads a group past --lcm-padding-bound, "
            "and here it does not\n") in err
    # compare runs every layout: an option some read is no error there
    code, out, _ = run(["compare", *args[1:], "--alignment", "7", "--block-size", "64"], capsys)
    assert code == 0 and out.startswith("Qwen3-Next-80B-A3B: budget")


def test_vllm_blocks_read_the_vllm_options_that_size_its_block(capsys):
    # --vllm-blocks N is N x vLLM's block at the options given: --block-size 64 changes that
    # budget, so SGLang's figures read it; --alignment, which vLLM does not read, is refused
    args = ["plan", "--preset", "qwen3-next-80b-a3b", "--vllm-blocks", "1000", "--strategy",
            "sglang"]
    code, out, err = run([*args, "--block-size", "64"], capsys)
    assert code == 0
    code, plain, _ = run(args, capsys)
    assert plain.splitlines()[0] != out.splitlines()[0]  # another budget
    code, out, err = run([*args, "--alignment", "64"], capsys)
    assert code == 2 and "--alignment is not read by --strategy sglang" in err


def test_a_models_notes_go_to_stderr_beside_the_figures(tmp_path, capsys):
    # {"model_type": "llama"} plans as LlamaConfig's 32 layers of 32 KV heads: the figures
    # (stdout) are the defaults', and stderr says so in one line; JSON stays clean
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "llama"}')
    code, out, err = run(["plan", "--hf-config", str(config), "--budget", "80GB", "--json"],
                         capsys)
    assert code == 0 and json.loads(out)["geometry"]["block_bytes"] == 32 * 16 * 16_384
    assert err == ("python -m flatkv: note on this model: Not in the config.json, so "
                   "transformers' defaults: num_hidden_layers 32, num_attention_heads 32, "
                   "num_key_value_heads 32, head_dim 128, max_position_embeddings 2,048, "
                   "architectures [\"LlamaForCausalLM\"] (its class for llama, which the "
                   "engines pick code paths by); check them against the model's config.\n")
    code, out, err = run(["compare", "--preset", "Nemotron-H-8B", "--budget", "80GB"], capsys)
    assert code == 0 and err.startswith("python -m flatkv: note on this model: This preset "
                                        "keeps the ssm state in bfloat16")
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
                          "--context", "8192"], capsys)
    assert code == 0 and err == ""


def test_the_context_defaults_to_the_models_max_model_len(capsys):
    # as vLLM's --max-model-len: Qwen3-Next's 262,144 gives SPEC 3.1's anchor with no --context
    args = ["--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--budget", "44.59GiB"]
    code, out, err = run(["plan", *args, "--strategy", "vllm", "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    assert (result["context_tokens"], result["num_blocks"]) == (262_144, 7_162)
    assert result["max_concurrency_exact"] == [7_162, 485]  # 14.77x, as README derives it
    assert err == ("python -m flatkv: note: context 262,144 tokens, the model's max_model_len "
                   "(vLLM's default --max-model-len); --context sets another\n")
    # where that default does not fit, the error says where the context came from
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--budget", "10GiB",
                          "--strategy", "vllm"], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("python -m flatkv: error: --strategy vllm: vLLM "
                          "refuses to start: one request of 131,072 tokens needs")
    assert err.endswith(" (context 131,072 tokens, the model's max_model_len (vLLM's default "
                        "--max-model-len); --context sets another)\n")
    # an error that is not about the context says nothing of it
    code, out, err = run(["plan", "--preset", "DeepSeek-V3", "--budget", "1GiB",
                          "--strategy", "aliased"], capsys)
    assert code == 2 and "aliased does not apply" in err and "max_model_len" not in err
    # its group named by kind, as Layout names it, MLA's latent said (it read "full_attention")
    assert err == ("python -m flatkv: error: --strategy aliased does not apply: one cache group "
                   "(full attention (MLA), 61 layers): nothing to alias, flat already uses every "
                   "row of every block id\n")
    code, out, err = run(["compare", *args, "--context", "32K"], capsys)
    assert code == 0 and err == "" and "context 32,768 tokens" in out.splitlines()[0]
    code, out, err = run(["compare", *args, "--context", "300K"], capsys)
    assert code == 0 and "context 307,200 tokens" in out.splitlines()[0]
    assert err == ("python -m flatkv: note: the context is past this model's 262,144 tokens: "
                   "vLLM refuses a --max-model-len above the length its config gives unless "
                   "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, SGLang a --context-length unless "
                   "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1\n")
    # raw bytes have no config to take it from: no context, no concurrency, and stderr says why
    no_context = ("python -m flatkv: note: no --context, and the model gives no max_model_len: "
                  "no concurrency is counted; --context N counts requests of N tokens\n")
    code, out, err = run(["compare", *QWEN35, "--budget", "80GB"], capsys)
    assert code == 0 and err == no_context and "context" not in out.splitlines()[0]
    # nor does a preset whose config was not seen (granite-4.0-h-small)
    code, out, err = run(["plan", "--preset", "granite-4.0-h-small", "--budget", "40GiB",
                          "--strategy", "vllm"], capsys)
    assert code == 0 and "\n  concurrency " not in out and err.endswith(no_context)
    code, out, err = run(["plan", "--preset", "granite-4.0-h-small", "--budget", "40GiB",
                          "--strategy", "vllm", "--context", "32K"], capsys)
    # 40 GiB // 2,162,688 B pages // 4 layers a group = 4,964 blocks; a request of 32,768
    # tokens holds 9 state pages and ceil(32,768 / 528) = 63 full ones: 4,964 / 72 = 68.94
    assert 40 * 2**30 // 2_162_688 // 4 == 4964 and f"{4964 / (9 + 63):.2f}" == "68.94"
    assert code == 0 and "no --context" not in err
    assert "\n  concurrency     68.94x at 32,768 tokens (4,964 / 72)" in out


FALCON_MAMBA = {"model_type": "falcon_mamba", "num_hidden_layers": 64, "hidden_size": 4096,
                "intermediate_size": 8192, "state_size": 16, "conv_kernel": 4,
                "torch_dtype": "bfloat16", "architectures": ["FalconMambaForCausalLM"]}
# vLLM's warning for a config.json with none of the length keys it reads, as the note quotes it
VLLM_ASSUMES = ("vLLM warns \"The model's config.json does not contain any of the keys to "
                "determine the original maximum length of the model. Assuming the model's "
                "maximum length is 2048.\"")


# vLLM's start-up lines for falcon-mamba-7b at 40 GiB and 2,048 tokens, derived by hand: one
# group of 64 state layers, pages of 8,192 x (3 + 16) x 2 B = 311,296 B, one a request: 40 GiB
# // 311,296 // 64 = 2,155 blocks (2,155 x 311,296 x 64 B = 39.985 GiB), 2,155 x 2,048 =
# 4,413,440 tokens, 2,155 / 1 requests; in a log with vLLM's prefixes and the run's own
# figures where FlatKV elides them (free, used, requested)
FALCON_VLLM_LOG = "\n".join(f"(EngineCore_DP0 pid=812) INFO 12-06 07:00:0{i} [gpu_worker.py:3{i}] "
                            f"{line}" for i, line in enumerate((
                                "Available KV cache memory: 40.0 GiB",
                                # vLLM 0.34's words (v1/worker/extensible_kv_cache.py)
                                "Memory after warmup: 1.31 GiB free, 39.99 GiB committed to the "
                                "KV cache, 2.1 GiB kept for transient activations (1.87 GiB "
                                "allocated at peak, 2.1 GiB of torch reservation growth); 2155 "
                                "KV cache blocks (39.99 GiB) fit within the requested 70.52 GiB. "
                                "Torch may reserve up to 75.02 GiB.",
                                "GPU KV cache size: 4,413,440 tokens, Maximum concurrency for "
                                "2,048 tokens per request: 2155.00x")))


def test_compare_check_log_exit_codes(tmp_path, capsys, monkeypatch):
    assert 40 * 2**30 // 311_296 // 64 == 2_155 and 2_155 * 2_048 == 4_413_440
    assert f"{2_155 * 311_296 * 64 / 2**30:.2f}" == "39.99"
    config = tmp_path / "config.json"
    config.write_text(json.dumps(FALCON_MAMBA))
    given = ["compare", "--hf-config", str(config), "--budget", "40GiB", "--check-log"]
    log = tmp_path / "vllm.log"
    log.write_text(FALCON_VLLM_LOG)
    code, out, _ = run([*given, str(log)], capsys)
    # the lines found agree: 0, and only vLLM's are printed (SGLang's are not in this log)
    assert code == 0
    assert out.splitlines()[0] == "vLLM: all 3 lines are in the log and agree with it."
    assert "  same: Available KV cache memory: 40.0 GiB" in out.splitlines()
    assert "SGLang" not in out
    # one block more, read from stdin: 1, naming the figure
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        FALCON_VLLM_LOG.replace("2155 KV", "2156 KV").encode())))
    code, out, _ = run([*given, "-"], capsys)
    assert code == 1
    assert out.splitlines()[0] == "vLLM: 1 of 3 lines differs from the log, 2 agree."
    assert ("    line 2 (EngineCore_DP0 pid=812): KV cache blocks: FlatKV 2155, log 2156"
            in out.splitlines())
    # the budget as the log's 2,155 blocks: the Available line (vLLM's estimate before
    # warm-up, 40.0 GiB, where the blocks are 39.99) is found, its figure not compared
    blocks = ["compare", "--hf-config", str(config), "--vllm-blocks", "2155", "--check-log"]
    code, out, _ = run([*blocks, str(log)], capsys)
    assert code == 0 and "  same: Available KV cache memory: ... GiB" in out.splitlines()
    code, out, _ = run([*given, str(log), "--json"], capsys)
    (vllm,) = json.loads(out)
    assert vllm["engine"] == "vllm" and [r["outcome"] for r in vllm["lines"]] == ["same"] * 3
    # options whose rows the check does not print: refused
    code, _, err = run([*given, str(log), "--requests", "4"], capsys)
    assert code == 2 and err == ("python -m flatkv: error: --requests with --check-log: the "
                                 "log's check prints in place of the table they add to; run "
                                 "them without --check-log\n")
    # bad input: 2, one line each
    for text, said in ((None, f"--check-log '{tmp_path}/none.log': cannot read it (No such "
                              "file or directory)"),
                       (b"hello\nworld\n", f"--check-log '{tmp_path}/none.log': none of the "
                        "start-up lines vLLM or SGLang logs at these settings is in its 2 "
                        "lines"),
                       # an SGLang log (its server_args line): SGLang's lines alone, where
                       # vLLM's were named too, as if a vLLM log lacked them
                       (b"server_args={'model_path': 'tiiuae/falcon-mamba-7b'}\n",
                        f"--check-log '{tmp_path}/none.log': none of the start-up lines SGLang "
                        "logs at these settings is in its 1 line (it reads as SGLang's)"),
                       (b"\x7fELF\x02\xff\x00", f"--check-log '{tmp_path}/none.log': byte 5 "
                        "(b'\\xff') is not UTF-8 text")):
        if text is not None:
            (tmp_path / "none.log").write_bytes(text)
        code, out, err = run([*given, str(tmp_path / "none.log")], capsys)
        assert code == 2 and out == "" and len(err.splitlines()) == 1
        assert err.startswith(f"python -m flatkv: error: {said}")


# what the note adds where it names --sglang-kv-cache-dtype bfloat16 for DeepSeek's sparse
# attention without sinks: a config's learnable_sink, told none, logs the same
SINKS_ALIKE = (" (or a run told no --kv-cache-dtype of the model's config.json with "
               "learnable_sink: true logs the same lines, as SGLang keeps that in bfloat16 "
               "there too: give that config instead if so)")


def assert_log_run_named(argv, flags, capsys, tail=""):
    """``compare --check-log`` at ``argv`` exits 1 with its one note line naming ``flags``, the
    flags of the log's own run that ``argv`` does not give (its lines differ for that alone),
    and ``tail`` after them."""
    code, _, err = run(argv, capsys)
    assert code == 1 and (f"python -m flatkv: note: this log's run had {flags}: every figure "
                          f"differs at other settings, so check it again with those{tail}"
                          ) in err.splitlines()


def assert_qwen3_next_sglang_log_run_taken(tmp_path, capsys, lines, context, flags):
    """``compare --check-log`` of Qwen3-Next-80B-A3B's SGLang ``lines`` (its server_args
    first) at 40 GiB and ``context`` tokens names ``flags``, its run's, in its note; with them
    given, every line agrees and nothing is named."""
    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(lines)))
    argv = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB", "--context",
            str(context), "--check-log", str(log)]
    assert_log_run_named(argv, flags, capsys)
    code, out, err = run([*argv, *flags.split()], capsys)
    assert code == 0 and "this log's run had" not in err
    assert out.splitlines()[0] == "SGLang: all 4 lines are in the log and agree with it."


def test_compare_check_log_names_sglangs_page_size_and_track_interval(tmp_path, capsys):
    # Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 262,144 tokens, run at --page-size 64
    # and --mamba-track-interval 512: 920,704 tokens, not page 1's 920,754, so its KV and
    # scheduler lines differ at page 1; its server_args names both, and the note names both
    # flags (the interval sizes nothing, but SGLang checks it against the page); with them,
    # every line agrees and nothing is named
    from test_log_check import PAGE_64_SERVER_ARGS, qwen3_next_sglang_lines_at_page_64

    assert_qwen3_next_sglang_log_run_taken(
        tmp_path, capsys, (PAGE_64_SERVER_ARGS, *qwen3_next_sglang_lines_at_page_64()),
        262_144, "--sglang-page-size 64 --mamba-track-interval 512")


@pytest.mark.parametrize("server_args", ["LAZY_SERVER_ARGS", "FULL_SERVER_ARGS"])
def test_compare_check_log_names_sglangs_mamba_radix_cache_strategy(tmp_path, capsys,
                                                                   server_args):
    # Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 32,768 tokens run with extra_buffer_lazy:
    # max_running_requests 262 // 4 = 65 where auto's is 262 // 5 = 52 (its cap and scheduler
    # lines differ); its server_args names the strategy and the note its flag; with it, every
    # line agrees and nothing is named. FULL_SERVER_ARGS: SGLang 0.5.23's whole line, 18,265
    # characters, its strategy past the 10,000th
    import test_log_check
    from test_log_check import qwen3_next_sglang_lazy_lines

    assert_qwen3_next_sglang_log_run_taken(
        tmp_path, capsys, (getattr(test_log_check, server_args), *qwen3_next_sglang_lazy_lines()),
        32_768, "--mamba-radix-cache-strategy extra_buffer_lazy")


def test_compare_check_log_names_sglangs_overlap_scheduling_off(tmp_path, capsys):
    # Qwen3-Next-80B-A3B's SGLang lines at 40 GiB and 32,768 tokens run with
    # --disable-overlap-schedule (its server_args: disable_overlap_schedule True, auto logged as
    # the no_buffer it picks): max_running_requests 262 // 3 = 87 where the defaults' overlap
    # gives 262 // 5 = 52 (its cap and scheduler lines differ); the note names
    # --no-sglang-overlap-schedule alone (no --mamba-radix-cache-strategy no_buffer, which
    # beside overlap on SGLang refuses: auto logs no_buffer once overlap is off); with it,
    # every line agrees and nothing is named
    from test_log_check import OVERLAP_OFF_SERVER_ARGS, qwen3_next_sglang_overlap_off_lines

    assert_qwen3_next_sglang_log_run_taken(
        tmp_path, capsys, (OVERLAP_OFF_SERVER_ARGS, *qwen3_next_sglang_overlap_off_lines()),
        32_768, "--no-sglang-overlap-schedule")
    # a run of extra_buffer told without overlap (65 running: 3 + 1) names both flags
    from test_log_check import EXTRA_BUFFER_SERVER_ARGS, qwen3_next_sglang_extra_buffer_lines

    assert_qwen3_next_sglang_log_run_taken(
        tmp_path, capsys, (EXTRA_BUFFER_SERVER_ARGS, *qwen3_next_sglang_extra_buffer_lines()),
        32_768, "--no-sglang-overlap-schedule --mamba-radix-cache-strategy extra_buffer")


def test_compare_check_log_names_sglang_on_a_blackwell_for_a_b200_log(tmp_path, capsys):
    # DeepSeek-V3.2's SGLang lines on a B200 in 40 GiB (tests/test_log_check.py: 994,432
    # tokens in float8_e4m3fn, chunk 16,384) checked at a budget of 40 GiB: the dtype and
    # tokens differ (a Hopper's bfloat16, 548,352), and the note names --sglang-blackwell
    # beside the chunk; with them every line agrees
    from test_log_check import deepseek_v32_b200_sglang_lines

    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(deepseek_v32_b200_sglang_lines())))
    v32 = ["compare", "--preset", "DeepSeek-V3.2", "--check-log", str(log)]
    code, out, _ = run([*v32, "--budget", "40GiB"], capsys)
    assert code == 1 and out.splitlines()[:3] == [
        "SGLang: both lines differ from the log.",
        "  differs: KV Cache is allocated. dtype: torch.bfloat16, #tokens: 548352, KV size: "
        "40.00 GB",
        "    line 1 (TP0): dtype: FlatKV torch.bfloat16, log torch.float8_e4m3fn; #tokens: "
        "FlatKV 548352, log 994432"]
    assert_log_run_named([*v32, "--budget", "40GiB"],
                         "--sglang-blackwell --sglang-chunked-prefill-size 16384", capsys)
    code, out, err = run([*v32, "--budget", "40GiB", "--sglang-blackwell",
                          "--sglang-chunked-prefill-size", "16384"], capsys)
    assert code == 0 and "this log's run had" not in err
    # told --sglang-kv-cache-dtype bfloat16 (idle off a Blackwell, and on one a Hopper's 1,284
    # B again): the Blackwell with auto, which gives the log's 708 B, not a budget
    assert_log_run_named([*v32, "--budget", "40GiB", "--sglang-kv-cache-dtype", "bfloat16"],
                         "--sglang-blackwell --sglang-kv-cache-dtype auto "
                         "--sglang-chunked-prefill-size 16384", capsys)
    # ... beside a Hopper's preset, with the budget of the log's own that leaves it
    assert_log_run_named([*v32, "--gpu-memory", "H100 80GB", "--sglang-kv-cache-dtype",
                          "bfloat16"], "--sglang-blackwell --sglang-kv-cache-dtype auto "
                         "--budget 42947529216B --sglang-chunked-prefill-size 16384 (in place "
                         "of --gpu-memory)", capsys)
    assert out.splitlines()[0] == "SGLang: both lines are in the log and agree with it."
    # the note the B200 preset gives, beside a budget of no preset too (it was not said)
    assert ("python -m flatkv: note: SGLang 0.5.23 on a Blackwell GPU keeps DeepSeek's sparse "
            "attention in fp8_e4m3 where no --kv-cache-dtype is told") in err
    # at 30 GiB the budget too, the least that sizes 994,432 tokens of 61 x 708 B
    assert 994_432 * 61 * 708 == 42_947_529_216
    assert_log_run_named([*v32, "--budget", "30GiB"], "--sglang-blackwell --budget "
                         "42947529216B --sglang-chunked-prefill-size 16384", capsys)
    # on a Hopper's preset, with that budget in its place; on the B200's, its Blackwell kept
    # beside the budget that leaves it
    assert_log_run_named([*v32, "--gpu-memory", "H100 80GB"],
                         "--sglang-blackwell --budget 42947529216B "
                         "--sglang-chunked-prefill-size 16384 (in place of --gpu-memory)", capsys)
    assert_log_run_named([*v32, "--gpu-memory", "B200 192GB"],
                         "--budget 42947529216B --sglang-blackwell "
                         "--sglang-chunked-prefill-size 16384 (in place of --gpu-memory)", capsys)


def test_compare_check_log_offers_a_blackwell_in_place_of_a_told_gpu_arch(tmp_path, capsys):
    # the same B200 log checked at a budget told --gpu-arch hopper (or ampere): the Blackwell is
    # offered in place of that architecture; the note named --sglang-blackwell alone, which
    # added to that command was refused ("--sglang-blackwell says the GPU is a Blackwell, but
    # --gpu-arch hopper says another: drop one of them"); taken, every line agrees
    from test_log_check import deepseek_v32_b200_sglang_lines

    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(deepseek_v32_b200_sglang_lines())))
    v32 = ["compare", "--preset", "DeepSeek-V3.2", "--check-log", str(log), "--budget", "40GiB"]
    for arch in ("hopper", "ampere"):
        assert_log_run_named([*v32, "--gpu-arch", arch], "--sglang-blackwell "
                             f"--sglang-chunked-prefill-size 16384 (in place of --gpu-arch {arch})",
                             capsys)
    # beside a Hopper's preset told hopper too, both are named
    assert_log_run_named([*v32[:-2], "--gpu-memory", "H100 80GB", "--gpu-arch", "hopper"],
                         "--sglang-blackwell --budget 42947529216B --sglang-chunked-prefill-size "
                         "16384 (in place of --gpu-memory and --gpu-arch hopper)", capsys)
    code, out, err = run([*v32, "--sglang-blackwell", "--sglang-chunked-prefill-size", "16384"],
                         capsys)
    assert code == 0 and "this log's run had" not in err
    assert out.splitlines()[0] == "SGLang: both lines are in the log and agree with it."
    # told blackwell already, nothing is offered in its place
    code, _, err = run([*v32, "--gpu-arch", "blackwell", "--sglang-chunked-prefill-size", "16384"],
                       capsys)
    assert code == 0 and "this log's run had" not in err


def test_notes_on_the_architecture_name_the_flag_typed(capsys):
    # --gpu-arch blackwell and its shorthand --sglang-blackwell tell one GPU; a note on it names
    # the one typed: the idle note (Qwen3-Next stored on a Blackwell as on a Hopper) and plan's
    # refusal of a layout that does not read it named --sglang-blackwell for --gpu-arch
    # blackwell, a flag the command did not give
    qwen = ["--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"]
    idle = ("python -m flatkv: note: {} changes no figure here: SGLang stores this model's "
            "cache on a Blackwell GPU as on a Hopper")
    for flags in (["--gpu-arch", "blackwell"], ["--sglang-blackwell"]):
        typed = " ".join(flags)
        for command in (["compare"], ["plan", "--strategy", "sglang"]):
            code, _, err = run([*command, *qwen, *flags], capsys)
            assert code == 0 and [line for line in err.splitlines() if "changes no figure" in line
                                  ] == [line for line in err.splitlines()
                                        if line.startswith(idle.format(typed))] != []
        assert refused(["plan", "--strategy", "flat", *qwen, *flags], capsys) == (
            f"python -m flatkv: error: {typed} is not read by --strategy flat: use --strategy "
            "vllm or --strategy sglang (layouts that read it), or compare, which shows every "
            "layout\n")
    code, _, err = run(["plan", "--strategy", "vllm", *qwen, "--gpu-arch", "blackwell"], capsys)
    assert code == 0 and ("python -m flatkv: note: --gpu-arch blackwell changes no figure here: "
                          "vLLM's figures take the block size as told on any GPU") in err


def deepseek_v3_sglang_log(tmp_path, kv_dtype: str):
    """A log of SGLang's start-up lines for DeepSeek-V3 at TP 8 in ``kv_dtype`` with
    65,718,725,760 B of KV cache a rank and 32,768 tokens (FlatKV's lines there; its MLA latent
    of 576 elements a token a layer is whole on each rank)."""
    from flatkv.presets import load_preset
    from flatkv.strategies import run_strategy
    from flatkv.strategies.base import StrategyOptions

    profile = load_preset("DeepSeek-V3").with_options(kv_dtype=kv_dtype, tp=8).profile()
    lines = run_strategy("sglang", profile, budget_bytes=65_718_725_760, context_tokens=32_768,
                         options=StrategyOptions()).extras["log_lines"]
    log = tmp_path / f"sglang-{kv_dtype}.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(lines)))
    return log


def test_compare_check_log_off_an_a100_preset_keeps_its_ampere(tmp_path, capsys):
    # DeepSeek-V3 at TP 8 in fp8 on the A100 80GB with 90 GB of weights: 81,920 MiB x 0.9 -
    # 11,250,000,000 B = 66,059,411,328 B a rank. An SGLang log of 1,870,410 tokens (61 x 576
    # B = 35,136 B a token: 1,870,410 x 35,136 = 65,718,725,760 B) offers that budget in place
    # of --gpu-memory, with --gpu-arch ampere, the preset's: the offer took none, so vLLM's
    # column took a Hopper and showed 65,718,725,760 // (61 x 16 x 576) = 116,900 blocks at
    # P 16, where on the A100 (SM 8.0) TRITON_MLA, its one MLA backend, keeps no fp8 cache
    # and vLLM won't start (a clause said so). Taken, vLLM still refuses. In bfloat16 (which
    # TRITON_MLA keeps on SM 8.0) the same budget is offered (1,870,410 / 2 = 935,205 tokens
    # of 61 x 1,152 B) with no architecture, as there the Ampere moves no figure from a
    # Hopper's (strategy_notes.arch_reader; a budget of no GPU takes a Hopper), as an
    # L40S's Ada moves none of Llama's (test_compare_check_log_names_the_flags_of_the_logs_own_run)
    assert 85_899_345_920 * 9 // 10 - 90_000_000_000 // 8 == 66_059_411_328
    assert 1_870_410 * 61 * 576 == 935_205 * 61 * 1_152 == 65_718_725_760
    assert 65_718_725_760 // (61 * 16 * 576) == 116_900
    base = ["compare", "--preset", "DeepSeek-V3", "--tp", "8", "--gpu-memory", "A100 80GB",
            "--weights", "90GB", "--context", "32K", "--check-log"]
    code, out, _ = run([*base[:-1], "--kv-dtype", "fp8"], capsys)
    assert code == 0 and "vllm refuses to start: on SM 8.0 (A100)" in out
    assert_log_run_named(
        [*base, str(deepseek_v3_sglang_log(tmp_path, "fp8")), "--kv-dtype", "fp8"],
        "--budget 65718725760B --gpu-arch ampere (in place of --gpu-memory)", capsys)
    taken = ["compare", "--preset", "DeepSeek-V3", "--tp", "8", "--kv-dtype", "fp8",
             "--budget", "65718725760B", "--context", "32K"]
    code, out, _ = run([*taken, "--gpu-arch", "ampere"], capsys)
    assert code == 0 and "vllm refuses to start: on SM 8.0 (A100)" in out
    code, out, _ = run(taken, capsys)  # none said: a Hopper's figures
    (blocks,) = [line.split() for line in out.splitlines() if line.startswith("blocks ")]
    assert code == 0 and blocks[3] == "116,900"  # vLLM's column: flat, per-component, vllm
    assert_log_run_named(
        [*base, str(deepseek_v3_sglang_log(tmp_path, "bfloat16")), "--kv-dtype", "bfloat16"],
        "--budget 65718725760B (in place of --gpu-memory)", capsys)


def test_check_log_asks_whether_the_architecture_moves_a_figure_at_the_offered_settings(
        tmp_path, capsys, monkeypatch):
    # whether the offer adds the A100's --gpu-arch ampere is asked of the command it offers:
    # its budget, 1,870,410 x 61 x 576 = 65,718,725,760 B (SGLang's searched bytes), not the
    # 66,059,411,328 B the A100 80GB's preset gives (81,920 MiB x 0.9 - 90 GB / 8), its
    # context (32,768) and the preset's architecture, SM 8.0. No preset and model FlatKV knows
    # moves a figure by the architecture at one budget and not another (vLLM's MLA refusals
    # are the model's and the GPU's; a B200's Blackwell is offered as --sglang-blackwell), so
    # the question is read where it is asked
    from flatkv import log_cli
    from flatkv.strategy_notes import arch_matters

    asked = []

    def spy(profile, options, budget_bytes, context_tokens, *args):
        asked.append((budget_bytes, context_tokens, options.gpu_compute_capability))
        return arch_matters(profile, options, budget_bytes, context_tokens, *args)

    monkeypatch.setattr(log_cli, "arch_matters", spy)
    assert_log_run_named(
        ["compare", "--preset", "DeepSeek-V3", "--tp", "8", "--gpu-memory", "A100 80GB",
         "--weights", "90GB", "--context", "32K", "--kv-dtype", "fp8", "--check-log",
         str(deepseek_v3_sglang_log(tmp_path, "fp8"))],
        "--budget 65718725760B --gpu-arch ampere (in place of --gpu-memory)", capsys)
    assert asked == [(65_718_725_760, 32_768, (8, 0))]


# vLLM 0.34's start-up log of Qwen3-Next-80B-A3B on an H100 in mamba cache mode align at
# 32,768 tokens, run with its defaults: its GDN prefill runs on FlashInfer there, so it keeps
# 1 prefill checkpoint block a request, and 2,275 KV cache blocks fit after warm-up. P 576
# (block 64 raised until its 12 attention layers' page covers a GDN state page); a request
# holds cdiv(32,768, 576) = 57 full pages and 3 state groups x (2 + 1 checkpoint) = 9 state
# pages: 2,275 / 66 = 34.47x. FlatKV's own lines at those settings, the run's GPU figures given
QWEN3_NEXT_H100_VLLM_LOG = "\n".join(
    f"(EngineCore_DP0 pid=812) INFO 12-06 07:00:0{i} [gpu_worker.py:3{i}] {line}"
    for i, line in enumerate((
        "Setting attention block size to 576 tokens to ensure that attention page size is >= "
        "mamba page size.",
        "Padding mamba page size by 7.46% to ensure that mamba page size and attention page "
        "size are exactly equal.",
        "Available KV cache memory: 31.5 GiB",
        "Memory after warmup: 1.31 GiB free, 29.99 GiB committed to the KV cache, 2.1 GiB kept "
        "for transient activations (1.87 GiB allocated at peak, 2.1 GiB of torch reservation "
        "growth); 2275 KV cache blocks (29.99 GiB) fit within the requested 70.52 GiB. Torch "
        "may reserve up to 75.02 GiB.",
        "GPU KV cache size: 1,129,503 tokens, Maximum concurrency for 32,768 tokens per "
        "request: 34.47x")))


# vLLM 0.34's log of Qwen3-Next-80B-A3B in mamba cache mode none at 32,768 tokens, told
# --block-size 16 (the anchor's, which the CLI takes untold; 0.34's own 64 aligns P to 64:
# 576): a GDN layer's state of 3 x 8,192 x 2 B conv + 32 x 128 x 128 x 2 B = 1,097,728 B over
# 2,048 B a token of attention is 536 tokens, P = 544 on the kernel's 16 (padded 1.49%),
# 2,409 blocks fit, a request holds cdiv(32,768, 544) = 61 full pages and 3 state groups x 1
# page (no checkpoint block in mode none): 2,409 / 64 = 37.64x
QWEN3_NEXT_H100_NONE_VLLM_LOG = "\n".join(
    f"(EngineCore_DP0 pid=812) INFO 12-06 07:00:0{i} [gpu_worker.py:3{i}] {line}"
    for i, line in enumerate((
        "Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size.",
        "Padding mamba page size by 1.49% to ensure that mamba page size and attention page "
        "size are exactly equal.",
        "Available KV cache memory: 30.0 GiB",
        "Memory after warmup: 1.31 GiB free, 29.99 GiB committed to the KV cache, 2.1 GiB kept "
        "for transient activations (1.87 GiB allocated at peak, 2.1 GiB of torch reservation "
        "growth); 2409 KV cache blocks (29.99 GiB) fit within the requested 70.52 GiB. Torch "
        "may reserve up to 75.02 GiB.",
        "GPU KV cache size: 1,233,408 tokens, Maximum concurrency for 32,768 tokens per "
        "request: 37.64x")))


def test_check_log_off_an_h100_in_mode_none_offers_its_hopper_for_vllm_034s_align(
        tmp_path, capsys):
    # that log checked at the H100 80GB preset in mode none: the offer of its 2,409 blocks
    # leaves the preset. No figure of mode none reads the GPU, but vLLM 0.34's own mode for a
    # hybrid, align, keeps Qwen3-Next's GDN a checkpoint block on a Hopper and none known at
    # no GPU said (strategy_notes.checkpoint_reads_arch, in any mode now): --gpu-arch hopper
    # is offered, as Compare keeps it (test_app_log_check's ..._in_mode_none_keep_its_hopper);
    # it was not ("--vllm-blocks 2409 (in place of --gpu-memory)"). Run with it, every line
    # agrees; at a budget the note that it changes no figure says why it is there
    # (test_an_architecture_is_not_said_to_change_nothing_where_vllm_keeps_a_checkpoint_by_it)
    assert 3 * 8_192 * 2 + 32 * 128 * 128 * 2 == 1_097_728 and -(-1_097_728 // 2_048) == 536
    assert -(-536 // 16) * 16 == 544 and f"{544 * 2_048 / 1_097_728 - 1:.2%}" == "1.49%"
    assert f"{2_409 / (-(-32_768 // 544) + 3):.2f}" == "37.64"
    log = tmp_path / "vllm.log"
    log.write_text(QWEN3_NEXT_H100_NONE_VLLM_LOG)
    qwen = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--context", "32768", "--check-log",
            str(log)]
    code, _, err = run([*qwen, "--gpu-memory", "H100 80GB"], capsys)
    assert code == 1 and err.splitlines()[-1] == (
        "python -m flatkv: note: this log's run had --vllm-blocks 2409 --gpu-arch hopper (in "
        "place of --gpu-memory): every figure differs at other settings, so check it again "
        "with those")
    code, out, _ = run([*qwen, "--vllm-blocks", "2409", "--gpu-arch", "hopper"], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "vLLM: all 5 lines are in the log and agree with it.")


def test_check_log_off_an_h100_offers_its_hopper_where_the_checkpoint_note_reads_it(
        tmp_path, capsys):
    # that log checked at the H100 80GB preset in align, told no checkpoint block: the offer
    # of its 2,275 blocks leaves the preset, and the Hopper moves no figure (checkpoint blocks
    # are as told) but says vLLM 0.34 keeps Qwen3-Next's GDN a checkpoint block there, which
    # no GPU said leaves unknown (strategy_notes.arch_matters): --gpu-arch hopper is offered
    # (it was not, and the run it offered showed 4 lines apart with no note of the fix), and
    # run with it the note names the fix, with which every line agrees
    assert f"{2_275 / (57 + 3 * 3):.2f}" == "34.47" and -(-32_768 // 576) == 57
    log = tmp_path / "vllm.log"
    log.write_text(QWEN3_NEXT_H100_VLLM_LOG)
    base = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--mamba-cache-mode", "align",
            "--context", "32768", "--check-log", str(log)]
    assert_log_run_named([*base, "--gpu-memory", "H100 80GB"],
                         "--vllm-blocks 2275 --gpu-arch hopper (in place of --gpu-memory)",
                         capsys)
    code, _, err = run([*base, "--vllm-blocks", "2275", "--gpu-arch", "hopper"], capsys)
    assert code == 1 and (
        "python -m flatkv: note: Mamba cache mode align counts 2 state pages a request in each "
        "state group here, as vLLM 0.28 to 0.32 did. Since 0.33 vLLM keeps a prefill "
        "checkpoint page more for this model's GDN layers on the Hopper GPU (SM 9.0), whose "
        "prefill runs on FlashInfer there (3 a request): give --prefill-checkpoint-blocks 1 to "
        "match a later log.") in err.splitlines()
    code, out, _ = run([*base, "--vllm-blocks", "2275", "--gpu-arch", "hopper",
                        "--prefill-checkpoint-blocks", "1"], capsys)
    assert code == 0 and out.splitlines()[0].startswith("vLLM: all 5 lines are in the log")


def test_check_log_off_the_preset_adds_no_architecture_where_one_is_said(tmp_path, capsys):
    # the A100 80GB's ampere is added to a budget offered only where the settings left say
    # no GPU: beside --gpu-arch ampere (kept with the budget offered) vLLM still refuses an fp8
    # MLA cache on SM 8.0, and with a B200 log's Blackwell offered it takes a Blackwell
    from test_log_check import deepseek_v32_b200_sglang_lines

    v3 = ["compare", "--preset", "DeepSeek-V3", "--tp", "8", "--gpu-memory", "A100 80GB",
          "--weights", "90GB", "--context", "32K", "--kv-dtype", "fp8", "--check-log",
          str(deepseek_v3_sglang_log(tmp_path, "fp8"))]
    assert_log_run_named([*v3, "--gpu-arch", "ampere"],
                         "--budget 65718725760B (in place of --gpu-memory)", capsys)
    code, out, _ = run(["compare", "--preset", "DeepSeek-V3", "--tp", "8", "--budget",
                        "65718725760B", "--context", "32K", "--kv-dtype", "fp8", "--gpu-arch",
                        "ampere"], capsys)
    assert code == 0 and "vllm refuses to start: on SM 8.0 (A100)" in out
    log = tmp_path / "b200.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(deepseek_v32_b200_sglang_lines())))
    assert_log_run_named(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "A100 80GB",
                          "--check-log", str(log)],
                         "--sglang-blackwell --budget 42947529216B --sglang-chunked-prefill-size "
                         "16384 (in place of --gpu-memory)", capsys)


def offered_argv(argv, err):
    """``argv`` as the note in ``err`` offers it run: the flags it names in place of (with
    their values) and those it gives a new value dropped, its flags added (a flag given twice
    is refused, as is --budget beside --vllm-blocks). Each flag offered and replaced takes a
    value (no on / off flag among them)."""
    note = next(line for line in err.splitlines() if "this log's run had " in line)
    offered = note.split("this log's run had ")[1].split(": every figure")[0]
    offered, _, instead = offered.partition(" (in place of ")
    flags = offered.split()
    dropped = {*flags[::2], *instead.rstrip(")").split(" and ")} - {""}
    kept, words = [], iter(argv)
    for word in words:
        if word in dropped:
            next(words)  # its value
        else:
            kept.append(word)
    return [*kept, *flags]


def test_compare_check_log_names_the_vllm_ssm_dtype_a_logs_p_gives(tmp_path, capsys):
    # Nemotron-H-8B's default vLLM log (its hook's float32: P 1,040, 2,520 blocks at 40 GiB)
    # checked at the preset told --vllm-ssm-dtype bfloat16 (P 528): the note names float32,
    # whose P the log's is, beside its blocks, in place of --budget (the CLI refuses
    # --vllm-blocks beside it: it offered them as if added); run as offered every line agrees
    from test_log_check import nemotron_h_default_vllm_log

    assert 30 * 2**30 // (4 * 1_040 * 4_096) == 1_890
    log = tmp_path / "vllm.log"
    log.write_text(nemotron_h_default_vllm_log())
    argv = ["compare", "--preset", "Nemotron-H-8B", "--context", "8192", "--check-log",
            str(log)]
    for told, flags in (
            (["--budget", "40GiB", "--vllm-ssm-dtype", "bfloat16"],
             "--vllm-ssm-dtype float32 --vllm-blocks 2520 (in place of --budget)"),
            # at 30 GiB, P agrees (1,040): 30 GiB // 17,039,360 = 1,890 blocks, not 2,520
            (["--budget", "30GiB"], "--vllm-blocks 2520 (in place of --budget)"),
            (["--gpu-memory", "80GB"], "--vllm-blocks 2520 (in place of --gpu-memory)"),
            (["--vllm-blocks", "2000"], "--vllm-blocks 2520")):
        code, _, err = run([*argv, *told], capsys)
        assert code == 1 and (f"python -m flatkv: note: this log's run had {flags}: every "
                              "figure differs at other settings, so check it again with those"
                              ) in err.splitlines()
        code, out, err = run(offered_argv([*argv, *told], err), capsys)
        assert code == 0 and "this log's run had" not in err, err
        assert out.splitlines()[0] == "vLLM: all 5 lines are in the log and agree with it."


def deepseek_v32_vllm_log(tmp_path):
    """vLLM's start-up lines for DeepSeek-V3.2 on an H100 (SM 9.0) in 40 GiB at 163,840 tokens:
    P 64, 61 x 64 x (1,152 + 132) = 5,012,736 B a block, 42,949,672,960 // that = 8,568
    blocks, 8,568 x 64 = 548,352 tokens, 548,352 / 163,840 = 3.35x, as EngineCore logs them."""
    assert (61 * 64 * 1_284, (40 << 30) // 5_012_736, 8_568 * 64) == (5_012_736, 8_568, 548_352)
    lines = ["Available KV cache memory: 40.0 GiB",
             "Memory after warmup: ... 8568 KV cache blocks (40.0 GiB) fit within the requested "
             "... GiB. ...",
             "GPU KV cache size: 548,352 tokens, Maximum concurrency for 163,840 tokens per "
             "request: 3.35x"]
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(f"(EngineCore_DP0 pid=1) INFO 12-06 07:00:0{i} [x.py:1] {line}"
                             for i, line in enumerate(lines)))
    return log


def test_compare_check_log_of_an_engine_that_wont_start_here_says_why(tmp_path, capsys):
    # DeepSeek-V3.2's vLLM log from an H100 checked at the A100 preset (SM 8.0), where vLLM
    # has no sparse MLA backend: vLLM's column has no lines, so the error is vLLM's refusal
    # and where the log came from, not "none of the start-up lines SGLang logs ... (it reads
    # as vLLM's)"; at the H100's 40 GiB every line is found
    log = deepseek_v32_vllm_log(tmp_path)
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "A100 80GB",
                          "--check-log", str(log)], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"python -m flatkv: error: --check-log '{log}': this log is vLLM's, "
                          "but here vLLM refuses to start: on SM 8.0 (A100) it has no sparse "
                          "MLA backend for DeepSeek's sparse attention (its indexer), in any KV "
                          "dtype: ")
    assert err.endswith("pick a GPU of SM 9.0 or 10.0 (H100, H200, B200); the log's run was on "
                        "another GPU or at other settings\n")
    code, out, _ = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                        "--check-log", str(log)], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "vLLM: all 3 lines are in the log and agree with it.")


def test_compare_check_log_of_a_b200_log_at_hopper_fp8_names_the_blackwell_not_a_budget(
        tmp_path, capsys):
    # The same B200 log checked at --kv-dtype fp8 --budget 40GiB: a Hopper's fp8 DSA layout,
    # 61 x 788 B a token, logged in float8_e4m3fn as the B200's 61 x 708 B is; 42,949,672,960
    # // (61 x 788) = 893,519, 893,504 tokens in pages of 64 against the log's 994,432. The
    # note named --budget 47800357376B (994,432 x 61 x 788), at which the KV size line still
    # differs (44.52 GB for 40.00); it names --sglang-blackwell, and with it every line agrees
    from test_log_check import deepseek_v32_b200_sglang_lines

    assert (40 << 30) // (61 * 788) // 64 * 64 == 893_504
    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(deepseek_v32_b200_sglang_lines())))
    argv = ["compare", "--preset", "DeepSeek-V3.2", "--kv-dtype", "fp8", "--budget", "40GiB",
            "--check-log", str(log)]
    code, out, _ = run(argv, capsys)
    assert code == 1 and out.splitlines()[2] == (
        "    line 1 (TP0): #tokens: FlatKV 893504, log 994432")
    assert_log_run_named(argv, "--sglang-blackwell --sglang-chunked-prefill-size 16384", capsys)
    code, out, err = run([*argv, "--sglang-blackwell", "--sglang-chunked-prefill-size", "16384"],
                         capsys)
    assert code == 0 and "this log's run had" not in err
    assert out.splitlines()[0] == "SGLang: both lines are in the log and agree with it."
    # at 30 GiB or an H100's preset neither gives its tokens: the KV size it prints for them
    # names the Blackwell, beside its budget, 994,432 x 61 x 708 B (not x 788: 47800357376B)
    assert 994_432 * 61 * 708 == 42_947_529_216
    fp8 = ["compare", "--preset", "DeepSeek-V3.2", "--kv-dtype", "fp8", "--check-log", str(log)]
    assert_log_run_named([*fp8, "--budget", "30GiB"], "--sglang-blackwell --budget "
                         "42947529216B --sglang-chunked-prefill-size 16384", capsys)
    assert_log_run_named([*fp8, "--gpu-memory", "H100 80GB"],
                         "--sglang-blackwell --budget 42947529216B "
                         "--sglang-chunked-prefill-size 16384 (in place of --gpu-memory)", capsys)
    code, out, _ = run([*fp8, "--sglang-blackwell", "--budget", "42947529216B",
                        "--sglang-chunked-prefill-size", "16384"], capsys)
    assert code == 0
    assert out.splitlines()[0] == "SGLang: both lines are in the log and agree with it."


def test_compare_check_log_of_a_b200_log_with_a_drafter_names_the_blackwell_by_the_models_size(
        tmp_path, capsys):
    # The B200 log with one token drafted (MTP): the model's KV line, 994,432 tokens in 40.00 GB
    # ((994,432 + 64) x 61 x 708 B), then its drafter's of the same tokens for its one layer,
    # (994,432 + 64) x 708 B = 0.66 GB, then the scheduler's (48 running). At --kv-dtype fp8
    # --budget 30GiB neither layout gives the log's tokens, and the model's 40.00 GB names the
    # Blackwell beside its budget, 994,432 x 61 x 708 B; read as two sizes, the note named the
    # budget of those tokens in 788 B alone, --budget 47800357376B (44.52 GB). Taken, both
    # lines agree and the drafter's line is not compared
    from flatkv.presets import load_preset
    from flatkv.strategies import StrategyOptions, run_strategy

    assert f"{(994_432 + 64) * 708 / 2**30:.2f}" == "0.66"
    kv, scheduler = run_strategy(
        "sglang", load_preset("DeepSeek-V3.2").profile(), budget_bytes=40 << 30,
        context_tokens=163_840, options=StrategyOptions(
            gpu_compute_capability=(10, 0), sglang_chunked_prefill_size=16_384,
            speculative_tokens=1)
    ).extras["log_lines"]
    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate((kv, kv.replace("40.00", "0.66"),
                                                       scheduler))))
    def argv(budget: str) -> list[str]:
        return ["compare", "--preset", "DeepSeek-V3.2", "--kv-dtype", "fp8", "--budget", budget,
                "--speculative-tokens", "1", "--sglang-chunked-prefill-size", "16384",
                "--check-log", str(log)]

    assert_log_run_named(argv("30GiB"), "--sglang-blackwell --budget 42947529216B", capsys)
    # there (670,080 tokens of 788 B, (670,080 + 64) x 61 x 788 B = 30.00 GB) the drafter's
    # line, of the model's line's #tokens and another size, is not compared, as at the log's
    # settings and as the Compare page shows it: it was shown as differing (30.00, log 0.66)
    assert f"{(670_080 + 64) * 61 * 788 / 2**30:.2f}" == "30.00"
    code, out, _ = run(argv("30GiB"), capsys)
    assert code == 1 and out.splitlines()[:3] == [
        "SGLang: both lines differ from the log; 1 log line not compared: the drafter's own "
        "pool, logged after the model's (speculative decoding).",
        "  differs: KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 670080, KV size: "
        "30.00 GB",
        "    line 1 (TP0): #tokens: FlatKV 670080, log 994432; KV size (GB): FlatKV 30.00, log "
        "40.00 | line 2 (TP0): not compared, the drafter's own pool, logged after the model's "
        "(speculative decoding)"]
    code, out, _ = run([*argv("42947529216B"), "--sglang-blackwell"], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "SGLang: both lines are in the log and agree with it; 1 log line not compared: the "
        "drafter's own pool, logged after the model's (speculative decoding).")
    # a TP 2 run's lines pasted without prefixes: both ranks' model lines, then both
    # drafters', name no rank; read as one rank's, the second drafter line was a size of its
    # own (0.66 beside 40.00: no one size), and the note named --budget 47800357376B alone
    sized = kv.replace("40.00", "0.66")
    log.write_text("\n".join((kv, kv, sized, sized, scheduler.replace("=...", "=16384"))))
    assert_log_run_named(argv("30GiB"), "--sglang-blackwell --budget 42947529216B", capsys)
    code, out, _ = run([*argv("42947529216B"), "--sglang-blackwell"], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "SGLang: both lines are in the log and agree with it; 2 log lines not compared: the "
        "drafter's own pool, logged after the model's (speculative decoding).")
    # ... and at the budget of those tokens in 788 B (44.52 GB), off a Blackwell, both ranks'
    # model lines differ alike (40.00) and both drafters' are not compared; the second model
    # line was not compared, as a drafter's, and the first drafter's compared (0.66)
    assert f"{(994_432 + 64) * 61 * 788 / 2**30:.2f}" == "44.52"
    code, out, _ = run(argv("47800357376B"), capsys)
    assert code == 1 and out.splitlines()[2] == (
        "    lines 1, 2: KV size (GB): FlatKV 44.52, log 40.00 | lines 3, 4: not compared, the "
        "drafter's own pool, logged after the model's (speculative decoding)")
    drafted = "the drafter's own pool, logged after the model's (speculative decoding)"

    def checked(*told: str, budget: str = "30GiB", prefix: str = "TP0") -> tuple[int, list[str]]:
        """The run's exit code and first 3 lines of output, the lines ``told`` logged with
        SGLang's ``prefix`` (``""`` at TP 1: it names no rank), then the scheduler's line."""
        log.write_text("\n".join(f"[2026-12-06 07:00:00{prefix and ' ' + prefix}] {line}"
                                 for line in (*told, scheduler.replace("=...", "=16384"))))
        code, out, _ = run([*argv(budget), *(["--sglang-blackwell"] if budget.endswith("6B")
                                             else [])], capsys)
        return code, out.splitlines()[:3]

    # a later line of the model's #tokens, larger (44.52 GB: a restart on a Hopper, no
    # server_args line between), is no drafter's (its pool is the smaller): compared at 30 GiB
    # as at the log's settings; it was not compared, as the drafter's
    code, out = checked(kv, kv.replace("40.00", "44.52"))
    assert code == 1 and out[0] == "SGLang: both lines differ from the log."
    assert out[2] == ("    line 1 (TP0): #tokens: FlatKV 670080, log 994432; KV size (GB): FlatKV "
                      "30.00, log 40.00 | line 2 (TP0): #tokens: FlatKV 670080, log 994432; KV "
                      "size (GB): FlatKV 30.00, log 44.52")
    # a later line of other #tokens than the model line's is no drafter's (a drafter logs its
    # model's), whether its #tokens are FlatKV's (670,080 at 30 GiB) or not: compared; at 30 GiB
    # it was not compared, as one that differs from FlatKV's in its size alone
    other = kv.replace("994432", "670080").replace("40.00", "25.00")
    code, out = checked(kv, other)
    assert code == 1 and out[0] == "SGLang: both lines differ from the log."
    assert out[2].endswith(" | line 2 (TP0): KV size (GB): FlatKV 30.00, log 25.00")
    code, out = checked(kv, other, budget="42947529216B")
    assert code == 1 and out[2] == ("    line 2 (TP0): #tokens: FlatKV 994432, log 670080; KV "
                                    "size (GB): FlatKV 40.00, log 25.00 | line 1 (TP0) agrees")
    # the run restarted with no server_args line between: each model line's drafter is not
    # compared, on TP0 as at TP 1 (no rank named); on TP0 the second drafter's was compared
    # (exit 1: KV size 0.66 for 40.00)
    for prefix in ("TP0", ""):
        code, out = checked(kv, sized, kv, sized, budget="42947529216B", prefix=prefix)
        assert (code, out[0]) == (0, "SGLang: both lines are in the log and agree with it; 2 "
                                     f"log lines not compared: {drafted}.")


def test_compare_check_log_offers_no_budget_at_which_the_kv_size_line_still_differs(
        tmp_path, capsys):
    # A Hopper's fp8 DeepSeek-V3.2 log (42,949,672,960 // (61 x 788) = 893,519, 893,504 tokens
    # in pages of 64, KV size (893,504 + 64) x 61 x 788 B = 40.00 GB) checked at the B200
    # preset (auto: the raw 61 x 708 B, 4,006,592 tokens, logged in float8_e4m3fn too) was
    # offered --budget 38588650752B (893,504 x 61 x 708) with the Blackwell kept: there the
    # tokens agree and the KV line reads (893,504 + 64) x 61 x 708 B = 35.94 GB, so the note's
    # "check it again with those" left a line differing. No budget makes 708 B a token print
    # the log's 40.00 GB: nothing is offered, and the dtype and sizes differ line by line
    from flatkv.presets import load_preset
    from flatkv.strategies import StrategyOptions, run_strategy

    lines = run_strategy("sglang", load_preset("DeepSeek-V3.2").with_options(
        kv_dtype="fp8").profile(), budget_bytes=40 << 30, context_tokens=163_840,
        options=StrategyOptions(sglang_chunked_prefill_size=16_384)).extras["log_lines"]
    assert lines[0] == ("KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 893504, "
                        "KV size: 40.00 GB")
    assert 893_504 * 61 * 708 == 38_588_650_752
    assert f"{(893_504 + 64) * 61 * 708 / 2**30:.2f}" == "35.94"
    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(lines)))
    argv = ["compare", "--preset", "DeepSeek-V3.2", "--check-log", str(log)]
    code, out, err = run([*argv, "--gpu-memory", "B200 192GB"], capsys)
    assert code == 1 and out.splitlines()[0] == "SGLang: both lines differ from the log."
    assert "this log's run had" not in err
    # the offer it made: its KV line still differs there
    code, out, _ = run([*argv, "--budget", "38588650752B", "--sglang-blackwell",
                        "--sglang-chunked-prefill-size", "16384"], capsys)
    assert "#tokens: 893504, KV size: 35.94 GB" in out
    # the log's own settings, a Hopper told fp8 in 40 GiB: every line agrees
    code, out, err = run([*argv, "--kv-dtype", "fp8", "--budget", "40GiB",
                          "--sglang-chunked-prefill-size", "16384"], capsys)
    assert code == 0 and "this log's run had" not in err
    assert out.splitlines()[0] == "SGLang: both lines are in the log and agree with it."
    # at a Hopper's bfloat16 settings (548,352 tokens in torch.bfloat16) the dtype's name
    # differs and the Blackwell's is the log's, so --sglang-blackwell was offered, a run the
    # log's KV size is not: 708 B print (893,504 + 64) x 61 x 708 B = 35.94 GB for its tokens,
    # and taken, the B200's 994,432 tokens differ again. Nothing is offered: the dtype differs
    code, out, err = run([*argv, "--budget", "40GiB", "--sglang-chunked-prefill-size",
                          "16384"], capsys)
    assert code == 1 and out.splitlines()[2] == (
        "    line 1 (TP0): dtype: FlatKV torch.bfloat16, log torch.float8_e4m3fn; #tokens: FlatKV "
        "548352, log 893504")
    assert "this log's run had" not in err


def test_compare_check_log_names_sglangs_kv_cache_dtype_for_a_b200_log_told_bfloat16(
        tmp_path, capsys):
    # DeepSeek-V3.2's SGLang lines on the B200 told --kv-cache-dtype bfloat16 (173,039,262,105
    # B // (61 x 1,284) = 2,209,275 tokens, 2,209,216 in pages of 64, torch.bfloat16) checked
    # at the B200 preset: auto's raw fp8 4,006,592 tokens differ, and the note names the flag
    # (not a budget sizing 2,209,216 tokens of 708 B); with it every line agrees
    from test_log_check import deepseek_v32_b200_bfloat16_lines

    assert 173_039_262_105 // (61 * 1_284) // 64 * 64 == 2_209_216
    lines = deepseek_v32_b200_bfloat16_lines(173_039_262_105)
    assert lines[0].startswith("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 2209216,")
    log = tmp_path / "sglang.log"
    log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line.replace('=...', '=16384')}"
                             for i, line in enumerate(lines)))
    b200 = ["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "B200 192GB",
            "--check-log", str(log)]
    assert_log_run_named(b200, "--sglang-kv-cache-dtype bfloat16", capsys, tail=SINKS_ALIKE)
    code, out, err = run([*b200, "--sglang-kv-cache-dtype", "bfloat16"], capsys)
    assert code == 0 and "this log's run had" not in err
    assert out.splitlines()[0] == "SGLang: both lines are in the log and agree with it."
    assert "--sglang-kv-cache-dtype changes no figure" not in err


def test_sglangs_dsa_on_an_sm8x_gpu_is_noted_as_unchecked_kernels(capsys):
    # DeepSeek-V3.2 on the A100 preset, or a budget told ada: SGLang's figures are the Hopper
    # layout its start-up takes (61 x 1,284 B a token), and a note says its FlashMLA / DeepGEMM
    # kernels are not checked there; on the H100 preset no such note
    def notes(*flags):
        code, _, err = run(["compare", "--preset", "DeepSeek-V3.2", *flags], capsys)
        assert code == 0
        return [line for line in err.splitlines() if "may fail at its first forward" in line]

    (a100,) = notes("--gpu-memory", "A100 80GB")
    assert a100.startswith("python -m flatkv: note: SGLang 0.5.23 starts DeepSeek's sparse "
                           "attention on the A100 80GB as on a Hopper")
    (ada,) = notes("--budget", "40GiB", "--gpu-arch", "ada")
    assert "on the Ada GPU (SM 8.9) as on a Hopper" in ada
    assert notes("--gpu-memory", "H100 80GB") == [] and notes("--budget", "40GiB") == []


def test_sglang_blackwell_flag_sets_the_b200_layout_and_is_refused_beside_a_hopper(capsys):
    # --budget 40GiB --sglang-blackwell: the B200 preset's layout, 61 x (576 + 132) B a token:
    # 42,949,672,960 // 43,188 = 994,481, 994,432 in pages of 64 (a Hopper's 61 x 1,284 B:
    # 548,352); beside the B200's preset it adds nothing, beside a Hopper's it is refused
    def sglang(*flags):
        code, out, _ = run(["compare", "--preset", "DeepSeek-V3.2", *flags, "--json"], capsys)
        assert code == 0
        (result,) = [r for r in json.loads(out) if r["strategy"] == "sglang"]
        return result

    assert sglang("--budget", "40GiB", "--sglang-blackwell")["capacity_tokens"] == 994_432
    assert sglang("--budget", "40GiB")["capacity_tokens"] == 548_352
    b200 = ("--gpu-memory", "B200 192GB")
    assert sglang(*b200, "--sglang-blackwell") == sglang(*b200)
    assert refused(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "H100 80GB",
                    "--sglang-blackwell"], capsys) == (
        "python -m flatkv: error: --sglang-blackwell says the GPU is blackwell (SM 10.0: B200), "
        "but --gpu-memory 'H100 80GB' is hopper (SM 9.0: H100, H200): drop --sglang-blackwell, "
        "or give --gpu-memory as a size, or a preset of that architecture ('B200 192GB')\n")
    # it is --gpu-arch blackwell's shorthand: the same figures, both engines' (vLLM's too)
    code, out, _ = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB", "--json",
                        "--gpu-arch", "blackwell"], capsys)
    assert code == 0 and json.loads(out) == json.loads(run(
        ["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB", "--json",
         "--sglang-blackwell"], capsys)[1])
    assert refused(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                    "--sglang-blackwell", "--gpu-arch", "hopper"], capsys) == (
        "python -m flatkv: error: --sglang-blackwell says the GPU is a Blackwell, but "
        "--gpu-arch hopper says another: drop one of them\n")


def test_gpu_arch_tells_vllm_an_a100_where_the_budget_names_no_preset(capsys):
    # --budget 40GiB --gpu-arch ampere: vLLM on SM 8.0, as the A100 presets: DeepSeek-V3.2 has
    # no sparse MLA backend there, so vLLM won't start, with the A100 80GB preset's own reason;
    # told nothing, the same budget keeps today's Hopper figures (vLLM's P 64 and
    # 61 x 64 x 1,284 = 5,012,736 B blocks: 40 GiB // that = 8,568); SGLang's column and the
    # other layouts do not move (SM 8.0 is no Blackwell)
    def results(*flags):
        code, out, _ = run(["compare", "--preset", "DeepSeek-V3.2", *flags, "--json"], capsys)
        assert code == 0
        return {r["strategy"]: r for r in json.loads(out)}

    told = results("--budget", "40GiB", "--gpu-arch", "ampere")
    preset = results("--gpu-memory", "A100 80GB")
    unsaid = results("--budget", "40GiB")
    assert told["vllm"]["applies"] is False
    assert told["vllm"]["reason"] == preset["vllm"]["reason"]
    assert told["vllm"]["reason"].startswith(
        "vLLM refuses to start: on SM 8.0 (A100) it has no sparse MLA backend")
    assert (unsaid["vllm"]["block_size"], unsaid["vllm"]["block_bytes"],
            unsaid["vllm"]["num_blocks"]) == (64, 61 * 64 * 1_284, (40 << 30) // 5_012_736)
    assert {k: v for k, v in told.items() if k != "vllm"} == {
        k: v for k, v in unsaid.items() if k != "vllm"}
    # beside a --gpu-memory preset of another architecture it is refused, one line, exit 2;
    # beside its own, or a size, it is taken
    assert refused(["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "H100 80GB",
                    "--gpu-arch", "ampere"], capsys) == (
        "python -m flatkv: error: --gpu-arch ampere says the GPU is ampere (SM 8.0: A100), but "
        "--gpu-memory 'H100 80GB' is hopper (SM 9.0: H100, H200): drop --gpu-arch ampere, or "
        "give --gpu-memory as a size, or a preset of that architecture ('A100 80GB', "
        "'A100 40GB')\n")
    assert results("--gpu-memory", "A100 80GB", "--gpu-arch", "ampere") == preset
    assert results("--gpu-memory", "80GB", "--gpu-arch", "ampere")["vllm"]["reason"] == (
        preset["vllm"]["reason"])
    # a name no architecture has: listed in GPU_ARCHITECTURES' order, as a link's refusal and
    # AppState.gpu_capability's list them (the link's put hopper first)
    code, _, err = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                        "--gpu-arch", "volta"], capsys)
    assert (code, err) == (2, "python -m flatkv: error: --gpu-arch 'volta' is not one it takes: "
                              "give ampere, ada, hopper or blackwell\n")
    assert list(GPU_ARCHITECTURES) == ["ampere", "ada", "hopper", "blackwell"]
    assert "is not one of ampere, ada, hopper, blackwell: " in decode_query(
        {"gpu": "Custom", "gpu_arch": "volta"})[1][0]
    with pytest.raises(ValueError, match="^gpu_arch is 'volta': give one of ampere, ada, "
                                         "hopper, blackwell "):
        AppState(gpu="Custom", gpu_arch="volta").gpu_capability()


def test_an_sm8x_gpu_preset_makes_vllm_refuse_deepseek_sparse_and_an_fp8_mla_cache(capsys):
    # --gpu-memory "A100 80GB" is SM 8.0: vLLM 0.34 has no sparse MLA backend there (nor on
    # the L40S's SM 8.9), and its TRITON_MLA keeps no fp8 cache below SM 8.9; the same bytes
    # given as a size (81,920 MiB: no GPU named) keep today's figures, vLLM's P 64 and
    # 61 x 64 x 1,284 = 5,012,736 B blocks for DeepSeek-V3.2, and only vLLM's column moves
    def compare(preset, gpu, *flags):
        code, out, err = run(["compare", "--preset", preset, "--gpu-memory", gpu, *flags],
                             capsys)
        assert code == 0
        return out, err

    def figures(preset, gpu, *flags):
        code, out, _ = run(["compare", "--preset", preset, "--gpu-memory", gpu, *flags,
                            "--json"], capsys)
        assert code == 0
        return {r["strategy"]: r for r in json.loads(out)}

    sparse_line = ("vllm refuses to start: on SM 8.0 (A100) it has no sparse MLA backend for "
                   "DeepSeek's sparse attention (its indexer), in any KV dtype: ")
    out, _ = compare("DeepSeek-V3.2", "A100 80GB")
    (line,) = [x for x in out.splitlines() if x.startswith("vllm ")]
    assert line.startswith(sparse_line) and line.endswith(
        "pick a GPU of SM 9.0 or 10.0 (H100, H200, B200)")
    a100, size = figures("DeepSeek-V3.2", "A100 80GB"), figures("DeepSeek-V3.2", "81920MiB")
    assert (size["vllm"]["applies"], size["vllm"]["block_size"],
            size["vllm"]["block_bytes"]) == (True, 64, 5_012_736)
    assert not a100["vllm"]["applies"] and a100["vllm"]["reason"].startswith(
        sparse_line.replace("vllm", "vLLM", 1))
    assert {k: v for k, v in a100.items() if k != "vllm"} == {
        k: v for k, v in size.items() if k != "vllm"}
    out, _ = compare("DeepSeek-V3.2", "L40S 48GB")
    assert "vllm refuses to start: on SM 8.9 (L40S, RTX 4090) it has no sparse MLA" in out
    # DeepSeek-V3 in fp8 on the A100: refused with TRITON_MLA's error; on plan --strategy
    # vllm one line and exit 2, as vLLM's other start refusals
    out, _ = compare("DeepSeek-V3", "A100 40GB", "--kv-dtype", "fp8")
    assert ("vllm refuses to start: on SM 8.0 (A100) its one MLA backend is TRITON_MLA" in out
            and "Re-run with --kv-cache-dtype bfloat16.\"): set the KV dtype to bfloat16" in out)
    assert refused(["plan", "--strategy", "vllm", "--preset", "DeepSeek-V3", "--kv-dtype", "fp8",
                    "--gpu-memory", "A100 80GB"], capsys).startswith(
        "python -m flatkv: error: --strategy vllm: vLLM refuses to start: on SM 8.0 (A100) its "
        "one MLA backend is TRITON_MLA")
    # ... in bfloat16 (its fix) it starts there, as on a size of the same memory
    assert figures("DeepSeek-V3", "A100 80GB")["vllm"] == figures("DeepSeek-V3", "81920MiB")["vllm"]


def test_sglang_blackwell_in_plan_is_read_by_the_engines_and_noted_where_it_acts_on_nothing(
        capsys):
    # plan --sglang-blackwell raised KeyError 'sglang_blackwell' (no layout was listed as
    # reading it): the planner alone refuses it as any SGLang option, --strategy sglang
    # takes the Blackwell layout, 994,432 tokens of 61 x 708 B in 40 GiB (a Hopper's 548,352)
    v32 = ["plan", "--preset", "DeepSeek-V3.2", "--budget", "40GiB"]
    assert refused([*v32, "--sglang-blackwell"], capsys) == (
        "python -m flatkv: error: --sglang-blackwell acts on a layout's figures, which the "
        "planner alone does not count: add --strategy vllm or --strategy sglang (layouts that "
        "read it), or use compare\n")
    # vLLM reads it for its dense MLA block note alone (was refused as "not read by --strategy
    # vllm" while compare's vLLM note moved with it): figures unchanged, the note the
    # Blackwell's (FLASHINFER_MLA: 0.34 told none runs 64, 0.31 32; was none there), and a
    # note says it moves no figure
    v3_fp8 = ["plan", "--preset", "DeepSeek-V3", "--kv-dtype", "fp8", "--budget", "40GiB",
              "--strategy", "vllm"]
    code, hopper, hopper_err = run(v3_fp8, capsys)
    assert code == 0 and "P 16 is a block size told: told none, vLLM runs an fp8 MLA" in hopper
    code, blackwell, err = run([*v3_fp8, "--sglang-blackwell"], capsys)
    assert code == 0 and "FlashMLA's kernel block" not in blackwell
    # 40 GiB // (61 x 64 x 576 B) = 19,099 blocks of 64, 1,222,336 tokens; of 32, 38,199,
    # 1,222,368 tokens
    assert (40 * 2**30 // (61 * 64 * 576), 40 * 2**30 // (61 * 32 * 576)) == (19_099, 38_199)
    assert (19_099 * 64, 38_199 * 32) == (1_222_336, 1_222_368)
    assert ("P 16 is a block size told: told none, vLLM runs an MLA cache on a Blackwell on "
            "FLASHINFER_MLA, its first MLA backend there, for a qk_nope_head_dim of 64, 128 "
            "or 192 (DeepSeek's 128; FlatKV's model spec does not carry it, and taken for one "
            "of them here: for another 0.34 runs CUTLASS_MLA, at 128), whose kernel blocks are "
            "32 and 64: 0.34 at its default 64 (19,099 blocks of 64, 1,222,336 tokens here; "
            "no line), 0.31, whose default is 16, at 32 (38,199 blocks of 32, 1,222,368 "
            "tokens here; it logs") in " ".join(blackwell.split())
    assert "76,398" in hopper and "76,398" in blackwell  # 40 GiB // (61 x 16 x 576 B)
    assert 40 * 2**30 // (61 * 16 * 576) == 76_398
    assert err.splitlines() == [*hopper_err.splitlines(), (
        "python -m flatkv: note: --sglang-blackwell changes no figure here: vLLM's figures "
        "take the block size as told on any GPU; a Blackwell in place of a Hopper moves only "
        "the note on the block vLLM runs a dense MLA cache at when told no --block-size "
        "(FLASHINFER_MLA first on a "
        "Blackwell, in bfloat16 or fp8; FlashMLA on a Hopper, in fp8)")]
    code, out, _ = run([*v32, "--strategy", "sglang", "--sglang-blackwell", "--json"], capsys)
    assert code == 0 and json.loads(out)["capacity_tokens"] == 994_432
    # a model without DeepSeek's sparse attention: the figures a Hopper's, which a note says
    # (it passed in silence), in compare and in plan; DeepSeek-V3.2 takes no such note
    idle = ("python -m flatkv: note: --sglang-blackwell changes no figure here: SGLang stores "
            "this model's cache on a Blackwell GPU as on a Hopper; only DeepSeek's sparse "
            "attention (a model with an indexer, such as DeepSeek-V3.2) is stored otherwise "
            "there (the page and backend SGLang runs there, where they differ from the ones "
            "told, a note of their own says)")
    # (Qwen3-Next's GDN layers: in align, vLLM 0.34's own, the GPU moves their checkpoint
    # block, which the note adds: strategy_notes.ALIGN_CHECKPOINT_READS_GPU)
    align = ("; in mamba cache mode align, vLLM 0.34's own for a hybrid, the GPU decides "
             "whether vLLM keeps a prefill checkpoint block for this model (not known where no "
             "GPU is said)")
    for argv, after in ((["compare", "--preset", "gpt-oss-120b", "--budget", "40GiB"], ""),
                        (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"],
                         align),
                        (["plan", "--strategy", "sglang", "--preset", "DeepSeek-V3", "--budget",
                          "40GiB"], "")):
        code, told, err = run([*argv, "--sglang-blackwell", "--json"], capsys)
        assert code == 0 and idle + after in err.splitlines(), argv
        assert told == run([*argv, "--json"], capsys)[1], argv
    code, _, err = run(["compare", *v32[1:], "--sglang-blackwell"], capsys)
    assert code == 0 and "changes no figure" not in err
    # a Blackwell told says what the B200 preset says of SGLang's page there, the GPU named as
    # a Blackwell one: gpt-oss runs TensorRT-LLM's MHA backend at pages of 64 (the page note
    # showed on the preset alone, and the note above said the layouts differ only for DSA)
    page = ("note: SGLang 0.5.23 on a {} runs pages of 64 tokens when not told a page size "
            "(TensorRT-LLM's MHA backend): --sglang-page-size 64 matches such a run's log")
    oss = ["compare", "--preset", "gpt-oss-120b"]
    assert page.format("B200") in run([*oss, "--gpu-memory", "B200 192GB"], capsys)[2]
    assert page.format("Blackwell GPU") in run([*oss, "--budget", "40GiB", "--sglang-blackwell"],
                                               capsys)[2]
    assert "runs pages of 64" not in run([*oss, "--budget", "40GiB"], capsys)[2]


def test_sglang_blackwell_beside_a_kv_dtype_sglang_refuses_says_the_refusal(capsys):
    # DeepSeek-V3.2 in int8 or fp8_e5m2 with --sglang-blackwell: SGLang refuses the KV dtype
    # on any GPU, so the Blackwell changes no figure, but the note said "SGLang stores this
    # model's cache on a Blackwell GPU as on a Hopper; only DeepSeek's sparse attention (...
    # such as DeepSeek-V3.2) is stored otherwise there", of DeepSeek-V3.2 itself; it now says
    # why, as --sglang-kv-cache-dtype's note beside it does
    for kv_dtype, canonical in (("int8", "int8"), ("fp8_e5m2", "float8_e5m2")):
        code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                              "--kv-dtype", kv_dtype, "--sglang-blackwell", "--json"], capsys)
        sglang = next(r for r in json.loads(out) if r["strategy"] == "sglang")
        assert code == 0 and not sglang["applies"], kv_dtype
        assert (
            "python -m flatkv: note: --sglang-blackwell changes no figure here: SGLang does not "
            f"start this model in the KV dtype {canonical} (its refusal says why)"
            in err.splitlines()), kv_dtype
        assert "as on a Hopper" not in err


def test_sglang_blackwell_beside_an_export_with_learnable_sinks_says_bfloat16(capsys, tmp_path):
    # DeepSeek-V3.2's raw-bytes export with learnable_sink (flatkv-profile/1) and
    # --sglang-blackwell: SGLang keeps it in bfloat16 there as on a Hopper (1,284 B, 40 GiB ->
    # 548,352 tokens either way), and the note said "only DeepSeek's sparse attention (a model
    # with an indexer, such as DeepSeek-V3.2) is stored otherwise there" of such a model itself
    from test_hf_config import DEEPSEEK_V32_SINKS

    from flatkv.hf_config import spec_from_hf_config
    from flatkv.profile import profile_to_dict

    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    export = tmp_path / "sinks.json"
    export.write_text(json.dumps(profile_to_dict(
        spec_from_hf_config(DEEPSEEK_V32_SINKS).profile())))
    code, out, err = run(["compare", "--model-file", str(export), "--budget", "40GiB",
                          "--sglang-blackwell", "--json"], capsys)
    sglang = next(r for r in json.loads(out) if r["strategy"] == "sglang")
    assert code == 0 and sglang["capacity_tokens"] == 548_352
    # the export's dtype names its latent's 576 elements ((1,284 - 132) / 2), so its note is
    # the config's own, which names the raw 708 B its auto keeps without the sinks (it said
    # "--sglang-blackwell changes no figure here", as the raw width was not known)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(DEEPSEEK_V32_SINKS))
    notes = [run(["compare", source, str(path), "--budget", "40GiB", "--sglang-blackwell",
                  "--json"], capsys)[2] for source, path in (("--model-file", export),
                                                            ("--hf-config", config))]
    said = ("python -m flatkv: note: SGLang 0.5.23 on a Blackwell GPU keeps DeepSeek's sparse "
            "attention with learnable attention sinks (the config's learnable_sink) in bfloat16 "
            "on its flashmla_sparse DSA backends (_dsa_kv_cache_dtype_default picks fp8_e4m3 at "
            "compute capability 10 only without them, overrides.py 526-535; "
            "_dsa_split_backend_resolution 644-663): 1,152 + 132 = 1,284 B a token a layer, as "
            "on a Hopper: these figures are that layout's (without them, told none, it keeps "
            "fp8_e4m3 there, the raw 576 + 132 = 708 B)")
    assert [said in note.splitlines() for note in notes] == [True, True]
    assert "stored otherwise there" not in err


def test_check_log_told_bfloat16_names_learnable_sinks_as_the_other_run_alike(capsys, tmp_path):
    # A B200 log of DeepSeek-V3.2's config with learnable_sink true, told no --kv-cache-dtype:
    # bfloat16, 40 GiB // (61 x 1,284) = 548,359 -> 548,352 tokens, KV size (548,352 + 64) x 61
    # x 1,284 B = 40.00 GB. Checked at the preset on a Blackwell (auto: raw fp8, 994,432) the
    # note said "this log's run had --sglang-kv-cache-dtype bfloat16", a flag the run never
    # had: it now names the config's learnable_sink too, which logs the same lines; checked at
    # the config itself every line agrees and nothing is offered
    from test_hf_config import DEEPSEEK_V32_SINKS

    assert (40 << 30) // (61 * 1_284) // 64 * 64 == 548_352
    assert f"{(548_352 + 64) * 61 * 1_284 / 2**30:.2f}" == "40.00"
    log = tmp_path / "sglang.log"
    log.write_text("[2026-12-06 07:01:00 TP0] KV Cache is allocated. dtype: torch.bfloat16, "
                   "#tokens: 548352, KV size: 40.00 GB\n")
    assert_log_run_named(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                          "--sglang-blackwell", "--check-log", str(log)],
                         "--sglang-kv-cache-dtype bfloat16", capsys, tail=SINKS_ALIKE)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(DEEPSEEK_V32_SINKS))
    code, out, err = run(["compare", "--hf-config", str(config), "--budget", "40GiB",
                          "--sglang-blackwell", "--check-log", str(log)], capsys)
    assert code == 0 and "this log's run had" not in err
    assert ("  same: KV Cache is allocated. dtype: torch.bfloat16, #tokens: 548352, KV size: "
            "40.00 GB") in out.splitlines()


def test_a_value_given_to_a_flag_that_takes_none_says_so(capsys):
    # argparse said "argument --sglang-blackwell: ignored explicit argument '1'": neither that
    # the flag takes no value nor what to type
    for flag, value in (("--sglang-blackwell", "1"), ("--json", "yes"),
                        ("--disable-overlap-schedule", "0")):
        assert refused(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                        f"{flag}={value}"], capsys) == (
            f"python -m flatkv: error: {flag} takes no value (got '{value}'): give the flag "
            "alone, or leave it out\n")


def _check_log_on_a_named_pipe(tmp_path) -> tuple[subprocess.Popen, pathlib.Path]:
    """``compare --check-log`` started on a new named pipe (os.mkfifo), and the pipe."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(FALCON_MAMBA))
    fifo = tmp_path / "engine.log"
    os.mkfifo(fifo)
    return subprocess.Popen(
        [sys.executable, "-m", "flatkv", "compare", "--hf-config", str(config), "--budget",
         "40GiB", "--check-log", str(fifo)],
        cwd=pathlib.Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True), fifo


def test_check_log_on_a_named_pipe_nothing_writes_to_says_it_waits_and_stops_on_ctrl_c(
        tmp_path):
    # a FIFO no one writes to blocked without a word until killed; pipes stay readable
    # (<(cmd) is one), so after 2 s it says what it waits for, and Ctrl-C stops it in one line
    import select
    import signal

    proc, fifo = _check_log_on_a_named_pipe(tmp_path)
    try:
        # a hang guard, not a timing: starting Python and transformers on a loaded 2-core
        # machine has taken over 20 s
        ready, _, _ = select.select([proc.stderr], [], [], 90)
        assert ready, "no word on stderr in 90 s"
        waiting = proc.stderr.readline()
        assert waiting == (f"python -m flatkv: waiting for a writer on the named pipe "
                           f"'{fifo}' (--check-log); Ctrl-C stops\n")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130 and out == ""  # 128 + SIGINT, as a shell reports it
    assert err == "python -m flatkv: stopped (Ctrl-C)\n"


@pytest.mark.parametrize("stage", ["parser", "output"])
def test_ctrl_c_while_building_the_parser_or_printing_the_output_is_one_line_and_130(
        stage, monkeypatch, capsys):
    # Ctrl-C lands wherever the process is: building the parser, or writing a long output to
    # a pipe a pager holds (SIGINT reaches the whole pipeline); each was a traceback, as only
    # the command's run was guarded
    import builtins

    from flatkv import cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    if stage == "parser":
        monkeypatch.setattr(cli, "build_parser", interrupted)
    else:
        real_print = builtins.print
        monkeypatch.setattr(builtins, "print", lambda *a, **k: (
            interrupted() if k.get("file") is None else real_print(*a, **k)))
    try:
        code, out, err = run(["presets"], capsys)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped main: a traceback")
    assert (code, out, err) == (130, "", "python -m flatkv: stopped (Ctrl-C)\n")


def test_check_log_reads_a_named_pipe_written_to(tmp_path):
    # the same pipe with a writer: read as any log, without the waiting line
    proc, fifo = _check_log_on_a_named_pipe(tmp_path)
    try:
        with open(fifo, "w") as writer:  # opens once the command opens its end
            writer.write(FALCON_VLLM_LOG)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0 and "waiting" not in err
    assert out.splitlines()[0] == "vLLM: all 3 lines are in the log and agree with it."


def test_compare_check_log_names_the_flags_of_the_logs_own_run(tmp_path, capsys):
    from flatkv.strategies.sglang_log import scheduler_line

    config = tmp_path / "config.json"
    config.write_text(json.dumps(FALCON_MAMBA))
    log = tmp_path / "vllm.log"
    log.write_text(FALCON_VLLM_LOG)
    # checked at 30 GiB and 4,096 tokens, the log's 2,155 blocks and 2,048 tokens differ: the
    # note names the flags of its own run, with which its lines agree, the blocks in place of
    # --budget (the CLI refuses both)
    other = ["compare", "--hf-config", str(config), "--budget", "30GiB", "--context", "4096",
             "--check-log", str(log)]
    assert_log_run_named(other, "--vllm-blocks 2155 --context 2048 (in place of --budget)",
                         capsys)
    own = ["compare", "--hf-config", str(config), "--vllm-blocks", "2155", "--context", "2048",
           "--check-log", str(log)]
    code, _, err = run(own, capsys)
    assert code == 0 and "this log's run had" not in err
    # SGLang's scheduler line: Llama-3.1-8B in 40 GiB (327,680 tokens of 32 x 4,096 B; its KV
    # line agrees at any context) run at 8,192 tokens with a chunk of 2,048; checked at 4,096
    # with the 8,192 chunk assumed where no GPU is named, its context and chunk are named
    sglang = tmp_path / "sglang.log"
    sglang.write_text(
        "[2026-12-06 07:00:00 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
        "327680, K size: 20.00 GB, V size: 20.00 GB\n[2026-12-06 07:00:09 TP0] "
        + scheduler_line(327_680, 2_048, 4_096, 8_192).replace("...", "16384"))
    llama = ["compare", "--preset", "llama-3.1-8b", "--budget", "40GiB", "--check-log",
             str(sglang)]
    assert_log_run_named(
        [*llama, "--context", "4096"],
        "--context 8192 --sglang-chunked-prefill-size 2048", capsys)
    code, out, err = run([*llama, "--context", "8192", "--sglang-chunked-prefill-size", "2048"],
                         capsys)
    assert code == 0 and out.splitlines()[0] == (
        "SGLang: both lines are in the log and agree with it.")
    # SGLang logs no budget: a log of 300,000 tokens (K and V 18.31 GB) names the budget that
    # sizes its pool so, 300,000 x 131,072 B = 39,321,600,000 B (tests/test_sizing.py)
    small = tmp_path / "small.log"
    small.write_text(sglang.read_text().replace("327680", "300000").replace("20.00", "18.31"))
    at_log = ["compare", "--preset", "llama-3.1-8b", "--context", "8192",
              "--sglang-chunked-prefill-size", "2048", "--check-log"]
    assert 39_321_600_000 == 37_500 * 2**20  # the flag as one types it, exactly
    assert_log_run_named([*at_log, str(small), "--budget", "40GiB"], "--budget 37500MiB", capsys)
    code, out, err = run([*at_log, str(small), "--budget", "37500MiB"], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "SGLang: both lines are in the log and agree with it.")
    # at another TP the budget is searched at the log's TP: 4 KV heads a rank, 65,536 B a
    # token, 300,000 tokens from 19,660,800,000 B = 18,750 MiB; taken, both lines agree
    tp2 = tmp_path / "tp2.log"
    tp2.write_text("[2026-12-06 07:00:00] server_args={'tp_size': 2}\n" + small.read_text()
                   .replace("18.31", "9.16"))
    assert 300_000 * 65_536 == 19_660_800_000 == 18_750 * 2**20
    assert_log_run_named(
        [*at_log, str(tp2), "--budget", "40GiB"],
        "--tp 2 --budget 18750MiB", capsys)
    code, out, _ = run([*at_log, str(tp2), "--budget", "18750MiB", "--tp", "2"], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "SGLang: both lines are in the log and agree with it.")
    # on a GPU's budget the note names the budget in place of --gpu-memory (the CLI refuses
    # both), and keeps the chunk SGLang takes on that GPU where none is told (an L40S 48GB's
    # 4,096): a log of Llama-3.1-8B's lines at 300,000 tokens and that chunk, then agrees
    l40s = tmp_path / "l40s.log"
    l40s.write_text(small.read_text().replace("chunked_prefill_size=2048",
                                              "chunked_prefill_size=4096"))
    gpu = ["compare", "--preset", "llama-3.1-8b", "--context", "8192", "--check-log", str(l40s)]
    assert_log_run_named(
        [*gpu, "--gpu-memory", "L40S 48GB"],
        "--budget 37500MiB --sglang-chunked-prefill-size 4096 (in place of --gpu-memory)", capsys)
    code, out, _ = run([*gpu, "--budget", "37500MiB", "--sglang-chunked-prefill-size", "4096"],
                       capsys)
    assert code == 0 and out.splitlines()[0] == (
        "SGLang: both lines are in the log and agree with it.")
    # a model of state layers alone logs its context as its tokens whatever the budget: its
    # slots name the budget (tests/test_sizing.py: 591 request slots from 21,459,224,349 B;
    # conv 592 x 8 x 49,152 B = 0.22 GiB, ssm 592 x 8 x 2,097,152 B = 9.25 GiB)
    mamba = tmp_path / "mamba.log"
    mamba.write_text(
        "[2026-12-06 07:00:00] Mamba Cache is allocated. max_mamba_cache_size: 591, conv_state "
        "size: 0.22GB, ssm_state size: 9.25GB\n[2026-12-06 07:00:09] "
        + scheduler_line(4_096, 8_192, 197, 4_096))
    states = ["compare", "--layers", "8*linear_attention", "--state",
              "conv=49152,ssm=2097152", "--context", "4096", "--check-log", str(mamba)]
    assert_log_run_named([*states, "--budget", "40GiB"], "--budget 21459224349B", capsys)
    code, out, _ = run([*states, "--budget", "21459224349B"], capsys)
    assert code == 0 and out.splitlines()[0] == (  # the cap warning was left out of the log
        "SGLang: 2 of 3 lines are in the log and agree with it; 1 not in it.")
    # SPEC's anchor log with its engine config line (TP 2, 44.59 GiB) checked at TP 1 and 40
    # GiB: its TP and budget are named
    from test_log_check import ANCHOR_LOG

    anchor = tmp_path / "anchor.log"
    anchor.write_text("(EngineCore_DP0 pid=1805889) INFO 10-23 15:10:30 [core.py:77] "
                      "Initializing a V1 LLM engine (v0.10.2) with config: model='Qwen/Qwen3-"
                      "Next-80B-A3B-Instruct', tensor_parallel_size=2, pipeline_parallel_size=1\n"
                      + ANCHOR_LOG)

    def named_then_taken(log: pathlib.Path, budget: str) -> tuple[int, str]:
        """The log's TP 2 and ``budget`` named at TP 1 and 40 GiB; taken, nothing named again:
        the exit code and the check's first line there."""
        assert_log_run_named(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                              "--check-log", str(log)], f"--tp 2 --budget {budget}", capsys)
        code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2",
                              "--budget", budget, "--check-log", str(log)], capsys)
        assert "this log's run had" not in err
        return code, out.splitlines()[0]

    assert named_then_taken(anchor, "44.59GiB")[0] == 0
    # its Available lines in GB, as a build printing GB would (44.59 GiB is 47.88 GB): the
    # budget named is the figure as printed, 47,880,000,000 B; at it the Available line
    # differs in its unit alone (exit 1)
    in_gb = tmp_path / "gb.log"
    in_gb.write_text(anchor.read_text().replace("44.59 GiB", "47.88 GB"))
    assert named_then_taken(in_gb, "47.88GB") == (
        1, "vLLM: 1 of 5 lines differs from the log, 3 agree; 1 not in the log.")
    # an Available memory of 0.00 GiB (a run that had no room) is no budget --budget takes:
    # the note names the TP alone, not a --budget 0.00GiB that the CLI would refuse
    empty = tmp_path / "empty.log"
    empty.write_text(anchor.read_text().replace("44.59 GiB", "0.00 GiB"))
    assert_log_run_named(
        ["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB", "--check-log",
         str(empty)],
        "--tp 2", capsys)
    # a log that says vLLM set mamba cache mode align, its lines FlatKV's at align: the flag
    from flatkv.presets import load_preset
    from flatkv.strategies import StrategyOptions, run_strategy

    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    aligned = run_strategy("vllm", qwen, budget_bytes=40 << 30, context_tokens=262_144,
                           options=StrategyOptions(mamba_cache_mode="align"))
    mode = tmp_path / "align.log"
    mode.write_text("\n".join(
        "(EngineCore_DP0 pid=9) INFO 12-06 07:00:00 [x.py:1] " + line.replace("...", "0")
        for line in ("Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default "
                     "when prefix caching is enabled", *aligned.extras["log_lines"])))
    qwen_args = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                 "--check-log", str(mode)]
    # (its 3,212 blocks at align, vLLM 0.34's figure, named too: the CLI names each figure
    # of the log's run its flags do not give, in place of --budget: the CLI refuses both)
    blocks = aligned.num_blocks
    assert_log_run_named(qwen_args, f"--mamba-cache-mode align --vllm-blocks {blocks} (in place "
                         "of --budget)", capsys)
    assert blocks == 3_212
    code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--vllm-blocks",
                        str(blocks), "--mamba-cache-mode", "align", "--check-log", str(mode)],
                       capsys)
    assert code == 0 and "this log's run had" not in err
    # SGLang's server_args with attention DP 8 (DeepSeek-V3 at TP 8: a group's chunk 8,192 //
    # 8 = 1,024 in its scheduler line): the flag is named, and the chunk it logs is a group's,
    # 8 x 1,024 = the 8,192 assumed, so no chunk flag
    grouped = run_strategy("sglang", load_preset("DeepSeek-V3").with_options(tp=8).profile(),
                           budget_bytes=40 << 30, context_tokens=163_840,
                           options=StrategyOptions(sglang_attn_dp_size=8,
                                                   sglang_chunked_prefill_size=8_192))
    dp_log = tmp_path / "dp.log"
    dp_log.write_text("\n".join(f"[2026-12-06 07:00:0{i} DP0 TP0 EP0] {line}" for i, line in
                                enumerate(("server_args={'tp_size': 8, 'attn_dp_size': 8}",
                                           *grouped.extras["log_lines"]))))
    deepseek = ["compare", "--preset", "DeepSeek-V3", "--tp", "8", "--budget", "40GiB",
                "--check-log", str(dp_log)]
    assert_log_run_named(deepseek, "--attn-dp-size 8", capsys)
    code, _, err = run([*deepseek, "--attn-dp-size", "8"], capsys)
    assert code == 0 and "this log's run had" not in err
    # the same log's lines at attention DP 1, checked with the older spelling's D 2: the flag
    # is named in place of that spelling (a given --attn-dp-size 1 beside it still runs D 2,
    # as SGLang turns it), and taken, all agree
    whole = run_strategy("sglang", load_preset("DeepSeek-V3").with_options(tp=8).profile(),
                         budget_bytes=40 << 30, context_tokens=163_840,
                         options=StrategyOptions(sglang_chunked_prefill_size=8_192))
    dp_log.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP0] {line}" for i, line in
                                enumerate(("server_args={'tp_size': 8, 'attn_dp_size': 1}",
                                           *whole.extras["log_lines"]))))
    assert_log_run_named(
        [*deepseek, "--enable-dp-attention", "--dp-size", "2"],
        "--attn-dp-size 1 (in place of --enable-dp-attention --dp-size)", capsys)
    code, _, err = run([*deepseek, "--attn-dp-size", "1"], capsys)
    assert code == 0 and "this log's run had" not in err
    # a log's ranks give the least TP it ran at (Llama-3.1-8B's lines at TP 2, ranks TP0 and
    # TP1, 4 KV heads a rank): named where the flags give fewer, not where they give more
    tp2 = run_strategy("sglang", load_preset("Llama-3.1-8B").with_options(tp=2).profile(),
                       budget_bytes=40 << 30, context_tokens=8_192,
                       options=StrategyOptions(sglang_chunked_prefill_size=8_192))
    ranks = tmp_path / "ranks.log"
    ranks.write_text("\n".join(f"[2026-12-06 07:00:0{i} TP{rank}] {line}"
                               for rank in (0, 1)
                               for i, line in enumerate(tp2.extras["log_lines"])))
    llama = ["compare", "--preset", "Llama-3.1-8B", "--budget", "40GiB", "--context", "8192",
             "--check-log", str(ranks)]
    assert_log_run_named(llama, "--tp 2", capsys)
    code, _, err = run([*llama, "--tp", "2"], capsys)
    assert code == 0 and "this log's run had" not in err
    code, _, err = run([*llama, "--tp", "4"], capsys)  # half the heads a rank: a budget
    assert code == 1 and "--tp" not in err  # halved would size its pool so, not a TP named


def test_compare_check_log_where_neither_engine_starts(tmp_path, capsys):
    # MiniMax-M1 at 40 GiB: vLLM refuses (one request of 10,240,000 tokens needs 390.76 GiB)
    # and SGLang has no such model; FlatKV has no start-up line to check, which the error says
    # (it said the lines "an engine logs" were not in the log's 1 line, asking for another log)
    log = tmp_path / "vllm.log"
    log.write_text(FALCON_VLLM_LOG)
    code, out, err = run(["compare", "--preset", "MiniMax-M1", "--budget", "40GiB",
                          "--check-log", str(log)], capsys)
    assert code == 2 and out == ""
    assert err == (f"python -m flatkv: error: --check-log '{log}': neither vLLM nor SGLang "
                   "starts at these settings, so FlatKV has no start-up line to check (compare "
                   "without --check-log says why): give settings an engine starts at\n")


def test_compare_check_log_at_int8_offers_the_kv_dtype_the_log_names(tmp_path, capsys):
    # Llama-3.1-8B at --kv-dtype int8, which neither engine keeps: SGLang's log of an fp8 run
    # in 40 GiB (40 GiB // (32 x 2,048) = 655,360 tokens, K and V each 655,360 x 32 x 1,024 B
    # = 20.00 GB of SGLang's 2**30 B) names torch.float8_e4m3fn, so the error offers
    # --kv-dtype fp8, at which the line agrees; a log that names no dtype keeps the error
    # that says no engine starts
    assert 40 * 2**30 // (32 * 2_048) == 655_360 and 655_360 * 32 * 1_024 == 20 * 2**30
    kv = "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 655360, K size: 20.00 GB, "
    log = tmp_path / "sglang.log"
    log.write_text(f"[2026-12-06 07:01:00 TP0] {kv}V size: 20.00 GB\n")
    llama = ["compare", "--preset", "Llama-3.1-8B", "--budget", "40GiB", "--check-log", str(log)]
    assert refused([*llama, "--kv-dtype", "int8"], capsys) == (
        f"python -m flatkv: error: --check-log '{log}': neither vLLM nor SGLang keeps a KV cache "
        "in int8, so FlatKV has no start-up line to check; this log's run kept its KV cache in "
        "float8_e4m3fn: check it again with --kv-dtype fp8\n")
    code, out, _ = run([*llama, "--kv-dtype", "fp8"], capsys)
    assert code == 0 and f"  same: {kv}V size: 20.00 GB\n" in out
    log.write_text(f"[2026-12-06 07:01:00 TP0] {kv.replace('dtype: torch.float8_e4m3fn, ', '')}"
                   "V size: 20.00 GB\n")
    assert "starts at these settings" in refused([*llama, "--kv-dtype", "int8"], capsys)


def test_compare_check_log_at_int8_of_raw_bytes_names_the_files_bytes_in_the_logs_dtype(
        tmp_path, capsys):
    # A raw --model-file of MLA bytes in int8, 61 layers of a 576-byte latent (1-byte
    # elements), takes no --kv-dtype. SGLang's log of a bfloat16 run in 40 GiB at page 64
    # keeps 2 bytes an element, 1,152 a token a layer: 42,949,672,960 // (61 x 1,152) =
    # 611,191 tokens, 611,136 in whole pages of 64, KV size (611,136 + 64) x 61 x 1,152 B =
    # 40.00 GB (2**30 B). The error names the file's fields at bfloat16, the bytes doubled
    # (kept at 576 they would size 1,222,336 tokens), and with them the line agrees. A log of
    # fp8, whose elements are int8's 1 byte, changes the dtype alone
    assert (40 << 30) // (61 * 1_152) == 611_191 and 611_191 // 64 * 64 == 611_136
    assert f"{(611_136 + 64) * 61 * 1_152 / 2**30:.2f}" == "40.00"
    assert (40 << 30) // (61 * 576) // 64 * 64 == 1_222_336
    raw = {"format": "flatkv-profile/1", "name": "mla", "layers": "61*full_attention",
           "kv_bytes_per_slot": 576, "kv_dtype": "int8", "kv_tensor_bytes": [576]}
    model = tmp_path / "mla.json"
    model.write_text(json.dumps(raw))
    log = tmp_path / "sglang.log"
    kv = "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 611136, KV size: 40.00 GB"
    log.write_text(f"[2026-12-06 07:01:00 TP0] {kv}\n")
    argv = ["compare", "--model-file", str(model), "--budget", "40GiB", "--context", "163840",
            "--sglang-page-size", "64", "--check-log", str(log)]
    assert refused(argv, capsys) == (
        f"python -m flatkv: error: --check-log '{log}': neither vLLM nor SGLang keeps a KV cache "
        "in int8, so FlatKV has no start-up line to check; this log's run kept its KV cache in "
        f"bfloat16: --model-file '{model}' holds raw bytes, which --kv-dtype does not re-type: "
        'check it again with the file\'s "kv_dtype": "bfloat16", "kv_bytes_per_slot": 1152, '
        '"kv_tensor_bytes": [1152] (its int8 bytes are elements of 1 byte, which bfloat16 keeps '
        "in 2)\n")
    model.write_text(json.dumps({**raw, "kv_dtype": "bfloat16", "kv_bytes_per_slot": 1_152,
                                 "kv_tensor_bytes": [1_152]}))
    code, out, _ = run(argv, capsys)
    assert code == 0 and f"  same: {kv}\n" in out
    model.write_text(json.dumps(raw))
    log.write_text(f"[2026-12-06 07:01:00 TP0] {kv.replace('bfloat16', 'float8_e4m3fn')}\n")
    assert refused(argv, capsys).endswith(
        'check it again with the file\'s "kv_dtype": "float8_e4m3fn" (int8\'s and '
        "float8_e4m3fn's elements are 1 byte alike)\n")
    # bytes that hold an indexer's keys (DeepSeek-V3.2's 656 + 132 B in int8) are not
    # re-sized: the error says why, and to give them again
    model.write_text(json.dumps({**raw, "kv_bytes_per_slot": 788, "kv_tensor_bytes": [788],
                                 "indexer_bytes_per_slot": 132, "kernel_block_size": 64}))
    log.write_text(f"[2026-12-06 07:01:00 TP0] {kv}\n")
    assert refused(argv, capsys).endswith(
        "holds raw bytes, which --kv-dtype does not re-type, and its kv_bytes_per_slot 788 "
        "holds an indexer's keys (indexer_bytes_per_slot 132, fp8 whatever the KV dtype) and "
        "fp8_ds_mla scales, which bfloat16's element size does not scale; give the KV bytes in "
        'bfloat16 again, with "kv_dtype": "bfloat16"\n')
    # bytes past a profile's bound once doubled: the field, why and the fix, after "its" (it
    # read "and its in bfloat16, kv_bytes_per_slot = ..., with ...", naming no fix)
    model.write_text(json.dumps({**raw, "layers": "4*full_attention",
                                 "kv_bytes_per_slot": 1 << 40, "kv_tensor_bytes": []}))
    assert refused(argv, capsys).endswith(
        "holds raw bytes, which --kv-dtype does not re-type, and its kv_bytes_per_slot "
        "2,199,023,255,552 is too large to be real once re-sized from int8's 1-byte elements "
        "to bfloat16's 2 (1,099,511,627,776 or less); give the KV bytes in bfloat16 again, "
        'with "kv_dtype": "bfloat16"\n')


def test_a_config_without_a_length_is_counted_at_the_2048_vllm_assumes(tmp_path, capsys):
    # falcon-mamba-7b's config.json gives no length field: vLLM (and SGLang) assume 2,048, and
    # so do `model` and `compare`, saying so and naming the fix
    config = tmp_path / "config.json"
    config.write_text(json.dumps(FALCON_MAMBA))
    code, out, err = run(["model", "--hf-config", str(config)], capsys)
    assert code == 0 and err == ""
    assert ("max_model_len: 2,048 tokens (vLLM's default --max-model-len, assumed: the config "
            "gives no length, see the notes; --context's default)") in out.splitlines()
    notes = next(line for line in out.splitlines() if line.startswith("notes: "))
    assert VLLM_ASSUMES in notes and notes.endswith(
        "type the context you serve at (vLLM takes any --max-model-len; SGLang refuses a "
        "--context-length above 2,048 unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1), or "
        "add max_position_embeddings to the config.json.")
    code, out, err = run(["model", "--hf-config", str(config), "--json"], capsys)
    report = json.loads(out)
    assert (report["max_model_len"], report["max_model_len_assumed"]) == (2_048, True)
    assert report["max_model_len_typed"] is False
    # a length typed in the Model page's editor (its export) is said to be typed
    typed = tmp_path / "typed.json"
    typed.write_text(json.dumps({**{k: v for k, v in report["spec"].items()
                                    if k != "max_model_len_assumed"},
                                 "max_model_len": 8_192, "max_model_len_typed": True}))
    code, out, err = run(["model", "--model-file", str(typed)], capsys)
    assert code == 0 and ("max_model_len: 8,192 tokens (typed in the Model page's editor, as "
                          "vLLM's --max-model-len; --context's default)") in out.splitlines()
    code, out, err = run(["model", "--model-file", str(typed), "--json"], capsys)
    assert [json.loads(out)[k] for k in ("max_model_len", "max_model_len_assumed",
                                         "max_model_len_typed")] == [8_192, False, True]
    # compare counts at 2,048: one group of 64 state layers, pages of 8,192 x (3 + 16) x 2 B =
    # 311,296 B, one a request: 40 GiB // 311,296 // 64 = 2,155 blocks, 2,155 x 2,048 tokens
    assert 40 * 2**30 // (8192 * 19 * 2) // 64 == 2_155 and 2_155 * 2_048 == 4_413_440
    code, out, err = run(["compare", "--hf-config", str(config), "--budget", "40GiB"], capsys)
    assert code == 0 and "context 2,048 tokens" in out.splitlines()[0]
    assert ("  GPU KV cache size: 4,413,440 tokens, Maximum concurrency for 2,048 tokens per "
            "request: 2155.00x") in out.splitlines()
    said = err.splitlines()
    assert said[0].startswith("python -m flatkv: note on this model: The config.json gives no "
                              "length field") and VLLM_ASSUMES in said[0]
    assert said[-1] == ("python -m flatkv: note: context 2,048 tokens, the max_model_len vLLM "
                        "assumes for a config.json with no length field; --context sets another")
    # a longer context typed: vLLM takes it as told (no refusal to allow), SGLang does not
    code, out, err = run(["compare", "--hf-config", str(config), "--budget", "40GiB",
                          "--context", "8192"], capsys)
    assert code == 0 and ("  GPU KV cache size: 17,653,760 tokens, Maximum concurrency for "
                          "8,192 tokens per request: 2155.00x") in out.splitlines()
    assert err.splitlines()[-1] == (
        "python -m flatkv: note: the context is past the 2,048 tokens assumed for this model "
        "(its config gives no length): vLLM takes any --max-model-len told, SGLang refuses a "
        "--context-length above 2,048 unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")


def test_plan_with_a_context_says_how_many_requests_the_plan_holds(capsys):
    # the worked example at the default block 16: P 1,056, 80e9 // 103,219,200 = 775 blocks; a
    # request of 128k = 128,000 tokens holds ceil(128,000 / 1,056) = 122 history pages and 1
    # state page: 775 / 123 = 6.30, as Layout counts its plan (and plan --strategy flat)
    code, out, err = run(["plan", *QWEN35, "--budget", "80GB", "--context", "128k"], capsys)
    assert code == 0 and err == ""
    assert out.rstrip().endswith(
        "Requests of 128,000 tokens (--context): 6.30 = 775 / 123, as `plan --strategy flat` "
        "and `compare` count them")
    assert f"{775 / 123:.2f}" == "6.30"
    code, out, _ = run(["plan", *QWEN35, "--budget", "80GB", "--context", "128k", "--json"],
                       capsys)
    assert json.loads(out)["requests"] == {
        "layout": "flat", "context_tokens": 128_000, "max_concurrency": 775 / 123,
        "max_concurrency_exact": [775, 123]}
    # one tensor per component counts its own layout; without --context, no requests
    code, out, _ = run(["plan", *QWEN35, "--budget", "80GB", "--context", "128k",
                        "--planner", "per-component"], capsys)
    assert "as `plan --strategy per-component` and `compare` count them" in out
    code, out, _ = run(["plan", *QWEN35, "--budget", "80GB", "--json"], capsys)
    assert "requests" not in json.loads(out)
    # the layout that counts them reads its options: gpt-oss-20b at 40 GiB (54,613 blocks of
    # P 16), 32K tokens with 16 tokens scheduled a step: 2,048 full pages and
    # ceil((127 + 16) / 16) + 1 = 10 sliding pages a request
    args = ["plan", "--preset", "gpt-oss-20b", "--budget", "40GiB", "--context", "32K"]
    code, out, _ = run([*args, "--max-batched-tokens", "16"], capsys)
    assert code == 0 and out.rstrip().endswith(
        f"Requests of 32,768 tokens (--context): {54_613 / 2_058:.2f} = 54,613 / 2,058, as "
        "`plan --strategy flat` and `compare` count them")
    code, _, err = run([*args, "--swa-full-tokens-ratio", "0.5"], capsys)
    assert code == 2 and err == (
        "python -m flatkv: error: --swa-full-tokens-ratio is not read by this plan's layout "
        "(flat), which counts the requests: use --strategy sglang (a layout that reads it), or "
        "compare\n")


# A value off its default for each option the CLI's _READ_BY names the readers of.
_OFF_DEFAULT = {
    "kernel_block_size": 32, "mamba_cache_mode": "align", "speculative_tokens": 2,
    "prefill_checkpoint_blocks": 1, "mamba_chunk_size": 128, "mamba_full_memory_ratio": "0.5",
    "swa_full_tokens_ratio": "0.5", "sglang_slots_per_request": 5, "sglang_page_size": 64,
    "sglang_max_running_requests": 20, "sglang_max_mamba_cache_size": 100,
    "sglang_ssm_dtype": "bfloat16", "vllm_ssm_dtype": "bfloat16",  # Nemotron-H's (float32)
    "sglang_swa_pool": True, "max_batched_tokens": 65_536,
    "sglang_chunked_prefill_size": 2_048,
    "lcm_padding_bound": "0.01", "lcm_alignment_bytes": 1 << 20, "margin": 4,
    "vllm_hybrid_manager": False, "vllm_async_scheduling": True,
    "sglang_overlap_schedule": False, "sglang_disable_radix_cache": True, "block_size": 64,
    "alignment": 7, "sglang_attn_dp_size": 2,
    "sglang_mamba_track_interval": 64,  # under Nemotron-H-8B's mamba chunk of 128: refused
    "sglang_mamba_radix_cache_strategy": "extra_buffer_lazy",  # S 4 on Qwen3-Next, not 5
    # a Blackwell (--sglang-blackwell): DeepSeek-V3.2's 708 B a token a layer, not 1,284
    "gpu_compute_capability": (10, 0),
    "sglang_kv_cache_dtype": "bfloat16"}  # on a Blackwell, DeepSeek-V3.2's 1,284 B, not 708


@pytest.mark.parametrize("field", sorted(_OFF_DEFAULT))
def test_the_layouts_said_to_read_an_option_are_those_whose_figures_it_changes(field):
    """_READ_BY (the app's EngineOption.read_by, and two of the CLI's own) decides which flags
    a layout refuses as unread, and the app's captions: a layout it leaves out must keep its
    figures and formulas under the option, and each it names must change them for some
    preset. SGLang's note that it does not model speculative tokens is no reading."""
    from dataclasses import replace

    from flatkv.notes_cli import _READ_BY
    from flatkv.presets import list_presets, load_preset
    from flatkv.strategies import STRATEGIES, StrategyOptions, run_strategy
    from flatkv.strategies.sglang import SPECULATIVE_NOT_MODELLED

    profiles = [load_preset(name).profile() for name in list_presets()]
    # the Blackwell moves vLLM's note on the block of an fp8 dense MLA cache told none
    profiles.append(load_preset("DeepSeek-V3").with_options(kv_dtype="fp8").profile())

    def figures(strategy, profile, options):
        result = run_strategy(strategy, profile, budget_bytes=40 << 30,
                              context_tokens=131_072, options=options).to_dict()
        result["formulas"] = [f for f in result["formulas"] if f != SPECULATIVE_NOT_MODELLED]
        result.pop("speculative_not_modelled", None)  # the same note, as a flag
        return result

    readers = set()
    # the chunk acts in "all", checkpoints in "align"; lcm's alignment where the block size
    # asked pads a group past a tighter padding bound (LFM2-1.2B's at 0.05); SGLang's KV cache
    # dtype on a Blackwell alone (elsewhere its auto keeps bfloat16 too)
    on_blackwell = (StrategyOptions(gpu_compute_capability=(10, 0)),) * (
        field == "sglang_kv_cache_dtype")
    for base in (*(StrategyOptions(mamba_cache_mode=mode) for mode in ("none", "align", "all")),
                 StrategyOptions(lcm_padding_bound="0.05"), *on_blackwell):
        changed = replace(base, **{field: _OFF_DEFAULT[field]})
        readers |= {s for s in STRATEGIES
                    if any(figures(s, p, base) != figures(s, p, changed) for p in profiles)}
    assert readers == set(_READ_BY[field])
    assert set(_OFF_DEFAULT) == set(_READ_BY)


def test_window_options_read_tokens_as_the_context_does(capsys):
    # --sliding-window 4K is 4,096 tokens (vLLM's suffixes), not an argparse error
    def compare(window: str) -> str:
        assert main(["compare", "--layers", "(5*sliding,full)*2", "--kv-bytes-per-slot", "4096",
                     "--sliding-window", window, "--budget", "10GiB", "--context", "32768",
                     "--json"]) == 0
        return capsys.readouterr().out
    assert compare("4K") == compare("4096") != compare("4k")  # 4k: 4,000 tokens


def test_mtp_layer_adds_the_drafters_attention_as_vllm_groups_it(capsys):
    # Qwen3-Next at TP 2 with 2 drafted tokens: conv 8,192 B a row x (3 + 2) rows = 40,960 B
    # + ssm 524,288 B = 565,248 B; P = 16 x cdiv(565,248, 16 x 1,024) = 560, page 573,440 B.
    # Its MTP layer makes 13 full layers beside 36 GDN: groups of 13 (36 is not under 1.5 x
    # 13), so a block id is 13 pages. A request of 262,144 tokens (mode none): 469 full pages
    # + 3 GDN groups x (1 + 2) state pages = 478 blocks
    budget = parse_size("44.59GiB", field="--budget")
    blocks = budget // 573_440 // 13
    assert blocks == 6_422
    argv = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--budget", "44.59GiB",
            "--speculative-tokens", "2", "--json"]
    code, out, err = run([*argv, "--mtp-layer"], capsys)
    assert code == 0
    vllm = next(r for r in json.loads(out) if r["strategy"] == "vllm")
    assert (vllm["block_size"], vllm["num_blocks"]) == (560, blocks)
    assert vllm["logged_tokens"] == blocks * 262_144 // 478 == 3_521_943
    assert "note on this model: An MTP module's attention layer added" in err
    assert "note on speculative decoding" not in err
    # without it the figures leave the drafter's layer out (groups of 12: 6,957 blocks), and
    # a note says so and how to add it
    code, out, err = run(argv, capsys)
    vllm = next(r for r in json.loads(out) if r["strategy"] == "vllm")
    assert vllm["num_blocks"] == budget // 573_440 // 12 == 6_957
    assert ("note on speculative decoding: A drafter's own KV layers are not counted until "
            "they are added to the model" in err and err.rstrip().endswith(
                "Add one with --mtp-layer."))
    # no drafted tokens, no note; raw bytes have no layer to copy
    _, _, err = run(argv[:-3] + ["--json"], capsys)
    assert "speculative decoding" not in err
    code, _, err = run(["compare", "--layers", "full_attention", "--kv-bytes-per-slot", "1024",
                        "--budget", "1GiB", "--mtp-layer"], capsys)
    assert code == 2 and "--mtp-layer copies a model's last full-attention layer" in err


def test_a_derived_budget_too_small_names_the_options_that_gave_it(capsys):
    # no --budget was given: "give a budget of at least ..." named none of the options to
    # change; the app's words (budget_too_small_text) with the flags given, and where the
    # budget came from
    # (5 GB x 0.01, the least fraction taken: 1e-9 of an H100 is refused now, as by the app)
    args = ["plan", "--preset", "qwen3-next-80b-a3b", "--gpu-memory", "5GB"]
    code, out, err = run([*args, "--memory-fraction", "0.01"], capsys)
    assert (code, out) == (2, "")
    assert 5 * 10**9 // 100 == 50_000_000 < 2 * 52_887_552
    assert err == (
        "python -m flatkv: error: The cache budget per rank, 50,000,000 B (47.68 MiB), holds 0 "
        "blocks of 52,887,552 B (50.44 MiB); a plan needs at least 2, that is 105,775,104 B "
        "(100.88 MiB): raise --gpu-memory or --memory-fraction (the budget is --gpu-memory "
        "'5GB': 5,000,000,000 B (4.66 GiB) x 0.01 = 50,000,000 B (47.68 MiB) usable - weights "
        "0 B per rank (TP 1) = 50,000,000 B (47.68 MiB) for the cache per rank)\n")
    # a layout's refusal says it too; at a fraction of 1, the weights are what to lower
    code, _, err = run([*args, "--memory-fraction", "0.01", "--strategy", "vllm"], capsys)
    assert code == 2 and err.endswith(
        "(the budget is --gpu-memory '5GB': 5,000,000,000 B (4.66 GiB) x 0.01 = 50,000,000 B "
        "(47.68 MiB) usable - weights 0 B per rank (TP 1) = 50,000,000 B (47.68 MiB) for the "
        "cache per rank: raise --gpu-memory or --memory-fraction)\n")
    args = ["plan", "--preset", "qwen3-next-80b-a3b", "--gpu-memory", "H100 80GB"]
    code, _, err = run([*args, "--memory-fraction", "1", "--weights", "79.6GiB", "--strategy",
                        "lcm"], capsys)
    assert code == 2 and err.endswith(": raise --gpu-memory, or lower --weights)\n")
    code, _, err = run(["plan", "--preset", "qwen3-next-80b-a3b", "--vllm-blocks", "2",
                        "--strategy", "sglang"], capsys)
    assert code == 2 and err.endswith(
        "(the budget is 2 vLLM blocks x 13,369,344 B = 26,738,688 B per rank: raise "
        "--vllm-blocks)\n")
    # a --budget given is the one to raise, as before
    code, _, err = run(["plan", "--preset", "qwen3-next-80b-a3b", "--budget", "1MiB"], capsys)
    assert code == 2 and err.rstrip().endswith("give a budget of at least 105,775,104 B")


def test_vllm_blocks_give_the_budget_as_vllm_0_34_logs_it(capsys):
    # "Memory after warmup: ... 6701 KV cache blocks (44.17 GiB) fit": 6,701 blocks of 12
    # pages of 576 x 1,024 B (block 64, align) = 47,428,927,488 B; a request 456 + 3 x 2 = 462
    argv = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--block-size", "64",
            "--mamba-cache-mode", "align", "--json"]
    code, out, err = run([*argv, "--vllm-blocks", "6701"], capsys)
    assert code == 0
    results = json.loads(out)
    assert {r["budget_bytes"] for r in results} == {6_701 * 7_077_888}  # every layout's
    vllm = next(r for r in results if r["strategy"] == "vllm")
    assert (vllm["num_blocks"], vllm["logged_tokens"]) == (6_701, 3_802_222)
    assert ("note: budget 6,701 vLLM blocks x 7,077,888 B = 47,428,927,488 B (44.17 GiB) per "
            "rank, a block the bytes of vLLM's layout at these options") in err
    # plan --strategy reads it too; one budget, not two; vLLM needs two blocks
    code, out, _ = run(["plan", *argv[1:7], "--strategy", "vllm", "--vllm-blocks", "6701",
                        "--json"], capsys)
    assert code == 0 and json.loads(out)["num_blocks"] == 6_701
    code, _, err = run([*argv, "--vllm-blocks", "6701", "--budget", "40GiB"], capsys)
    assert code == 2 and "--budget is not allowed with --vllm-blocks: give one of them" in err
    for blocks in ("0", "1", str(2**31 + 1), "many"):
        code, _, err = run([*argv, "--vllm-blocks", blocks], capsys)
        assert code == 2 and err.count("\n") == 1
        assert (f"--vllm-blocks '{blocks}' is not a count of vLLM blocks: give "
                "the N of its \"Memory after warmup: ... N KV cache blocks\" line, 2 to "
                "2,147,483,648") in err


def test_a_budget_from_gpu_memory_fraction_and_weights_as_the_app_derives_it(capsys):
    # the H100's 81,559 MiB x 0.9, floored, less 16 GB of weights over TP 2: the Budget page's
    # 68,968,728,985 B (tests/test_app_budget.py); Qwen3-Next's flat block at TP 2 is
    # 12 x 544 x 1,024 + 36 x 548,864 = 26,443,776 B, 2,608 of them
    assert 81_559 * 2**20 * 9 // 10 - 8 * 10**9 == 68_968_728_985
    code, out, err = run(["plan", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--gpu-memory",
                          "H100 80GB", "--weights", "16GB", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["geometry"]["num_blocks"] == 68_968_728_985 // 26_443_776 == 2_608
    assert ("note: budget 85,520,809,984 B (79.65 GiB) x 0.9 = 76,968,728,985 B (71.68 GiB) "
            "usable - weights 8,000,000,000 B (7.45 GiB) per rank (TP 2) = 68,968,728,985 B "
            "(64.23 GiB) for the cache per rank\n") in err
    # the fraction as typed, every digit, its bytes exact: 80e9 x 0.8503 = 8e6 x 8,503 =
    # 68,024,000,000 B, where the binary float 0.8503 gives 68,023,999,999.99999 (1 B short)
    assert 8 * 10**6 * 8_503 == 68_024_000_000 and int(80e9 * 0.8503) == 68_023_999_999
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                          "--memory-fraction", "0.8503", "--json"], capsys)
    assert code == 0 and ("x 0.8503 = 68,024,000,000 B (63.35 GiB) usable" in err)
    assert json.loads(out)["totals"]["budget_bytes"] == 68_024_000_000
    # at most 4 decimals, as the app's link and slider take it (budget.MEM_FRACTION_DECIMALS):
    # it took 0.9000001 (72,000,008,000 B) where the link refused frac=0.9000001
    from flatkv.app_state import decode_query
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                          "--memory-fraction", "0.9000001"], capsys)
    assert (code, out) == (2, "")
    assert err == ("python -m flatkv: error: --memory-fraction 0.9000001 has more than 4 "
                   "decimals: give at most 4, e.g. 0.9\n")
    assert decode_query({"frac": "0.9000001"})[1] == [
        "frac='0.9000001' has more than 4 decimals: give at most 4, e.g. 0.9; using the "
        "default (frac=0.9)."]
    # and out of range, as typed: ":g" wrote 1.0000001 as 1, "outside (0, 1]"
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                          "--memory-fraction", "1.0000001"], capsys)
    assert (code, out) == (2, "")
    assert err == ("python -m flatkv: error: --memory-fraction 1.0000001 is outside 0.01..1: "
                   "give the share of the GPU an engine may use, e.g. 0.9\n")
    # one rule with the app's link (budget.MIN_MEM_FRACTION): 0.01 was taken here and refused
    # there (frac below 0.05); both take 0.01 now and refuse 0.005, in like words
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                          "--memory-fraction", "0.005"], capsys)
    assert (code, err) == (2, "python -m flatkv: error: --memory-fraction 0.005 is outside "
                              "0.01..1: give the share of the GPU an engine may use, e.g. 0.9\n")
    assert decode_query({"frac": "0.005"})[1] == [
        "frac='0.005' is outside 0.01..1: e.g. frac=0.9; using the default (frac=0.9)."]
    assert decode_query({"frac": "0.01"})[0].mem_fraction == 0.01
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                          "--memory-fraction", "0.01", "--json"], capsys)
    assert code == 0 and "x 0.01 = 800,000,000 B (762.94 MiB) usable" in err
    # a size as well as a preset; the fraction as given
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                          "--memory-fraction", "0.5"], capsys)
    assert code == 0 and out.startswith("Llama-3.1-8B: budget 40,000,000,000 B")
    # what cannot derive a budget: one line, exit 2
    for argv, said in (
            (["--budget", "1GB", "--weights", "1GB"],
             "--weights applies only with --gpu-memory, whose budget it derives: give "
             "--gpu-memory too, or drop it"),
            (["--budget", "1GB", "--weights", "1GB", "--memory-fraction", "0.5"],
             "--memory-fraction and --weights apply only with --gpu-memory, whose budget they "
             "derive: give --gpu-memory too, or drop them"),
            (["--gpu-memory", "80GB", "--memory-fraction", "1.5"],
             "--memory-fraction 1.5 is outside 0.01..1"),
            # NaN is no figure outside a range: it read "nan is outside (0, 1]"
            (["--gpu-memory", "80GB", "--memory-fraction", "NaN"],
             "--memory-fraction is not a number (NaN): give the share of the GPU an engine "
             "may use, e.g. 0.9"),
            (["--gpu-memory", "H100"], "--gpu-memory 'H100' is not a size: write a number with "
             "an optional unit, e.g. 80GB, 10GiB, 1.5TiB, 12e9 or 4096 (or one of 'H100 80GB',"),
            # 16 GB of weights on one rank leave nothing of 12 GB x 0.9: TP 2 would
            (["--gpu-memory", "12GB", "--weights", "16GB"],
             "weights per rank (14.90 GiB) fill the usable memory (10.06 GiB): raise TP (2 is "
             "the least that splits the model and leaves room)")):
        code, out, err = run(["compare", "--preset", "Llama-3.1-8B", *argv], capsys)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    # raw bytes are one rank's (--tp is refused with them): the fix is one rank's weights
    code, out, err = run(["compare", "--layers", "full*32", "--kv-bytes-per-slot", "4096",
                          "--gpu-memory", "A100 40GB", "--weights", "80GB"], capsys)
    assert code == 2 and err.strip().endswith(
        "--weights 74.51 GiB fill its usable memory: raw bytes are one rank's, so give --weights "
        "as one rank's share, or a larger --gpu-memory or --memory-fraction")


def test_a_tp_that_does_not_split_the_model_is_said_before_weights_that_do_not_fit(capsys):
    # gpt-oss-20b's 8 KV heads at TP 6, and 80 GB of weights in 8 GB x 0.9: the TP is the
    # more basic problem (no TP 6 budget to speak of), so the one line names it, as the app's
    # pages do
    for command in ("plan", "compare"):
        code, _, err = run([command, "--preset", "gpt-oss-20b", "--tp", "6", "--gpu-memory",
                            "8GB", "--weights", "80GB"], capsys)
        assert code == 2 and err.strip().splitlines() == [
            "python -m flatkv: error: gpt-oss-20b: its sliding-window attention layers have 8 "
            "KV heads, and TP 6 does not divide them: choose TP 1, 2, 4, 8, 16, 32 or 64, the "
            "TPs up to 64 that split the model"], err


def test_compare_on_a_b200_names_sglangs_default_page(capsys):
    """SGLang 0.5.23 told no page size runs pages of 64 on a B200: a note says which flag
    matches such a run, and none once it is given (or on a Hopper GPU)."""
    b200 = ["compare", "--preset", "gpt-oss-20b", "--gpu-memory", "B200 192GB"]
    code, _, err = run(b200, capsys)
    assert code == 0 and ("python -m flatkv: note: SGLang 0.5.23 on a B200 runs pages of 64 "
                          "tokens when not told a page size (TensorRT-LLM's MHA backend): "
                          "--sglang-page-size 64 matches such a run's log\n") in err
    code, out, err = run([*b200, "--sglang-page-size", "64", "--json"], capsys)
    assert code == 0 and "SGLang 0.5.23" not in err
    # 173,039,262,105 B (179.06 GiB x 0.9): 2,048 x (12 + 0.8 x 12) = 44,236.8 B a full-pool
    # token, 3,911,632 tokens, whole pages of 64: 3,911,616
    sglang = next(r for r in json.loads(out) if r["strategy"] == "sglang")
    assert int(173_039_262_105 // 44_236.8) // 64 * 64 == sglang["capacity_tokens"] == 3_911_616
    _, _, err = run([*b200[:-1], "H100 80GB"], capsys)
    assert "SGLang 0.5.23" not in err


def test_compare_on_a_b200_names_the_page_or_refusal_in_place_of_the_options(capsys):
    """On a B200 SGLang 0.5.23 runs DeepSeek-V3 at 64 where told 16 (TensorRT-LLM's MLA
    backend), and Nemotron-H without overlap scheduling not at all: a note says which."""
    b200 = ["compare", "--preset", "DeepSeek-V3", "--gpu-memory", "B200 192GB"]
    code, _, err = run([*b200, "--sglang-page-size", "16"], capsys)
    assert code == 0 and ("python -m flatkv: note: SGLang 0.5.23 on a B200 runs pages of 64 "
                          "tokens where told a page size of 16 (TensorRT-LLM's MLA backend "
                          "takes pages of 32 or 64 tokens alone): --sglang-page-size 64 matches "
                          "such a run's log\n") in err
    code, _, err = run([*b200, "--sglang-page-size", "32"], capsys)
    assert code == 0 and "SGLang 0.5.23" not in err
    nemotron = ["compare", "--preset", "Nemotron-H-8B", "--gpu-memory", "B200 192GB",
                "--no-sglang-overlap-schedule"]
    code, _, err = run(nemotron, capsys)
    assert code == 0 and ("python -m flatkv: note: SGLang 0.5.23 on a B200 would not start "
                          "this model with these options (\"no_buffer do not support "
                          "trtllm_mha attention backend.\", mamba_hook.py 161-163)") in err
    # ... and names the flags that start it, where the app names its options in words
    assert ("which its no_buffer mamba radix cache refuses; --sglang-overlap-schedule, "
            "--sglang-mamba-radix-cache-strategy extra_buffer (where the model takes it) or "
            "--sglang-disable-radix-cache starts it; the figures shown are of these settings, "
            "which it would not run\n") in err
    _, _, err = run([*nemotron[:-2], "H100 80GB", nemotron[-1]], capsys)
    assert "SGLang 0.5.23" not in err
    # DeepSeek-V3.2 on a B200: its trtllm DSA backends' raw fp8 layout, which the figures take:
    # 192,265,846,784 B x 0.9 = 173,039,262,105 B over 61 x (576 + 132) B a token, whole pages
    # of 64; on an H100 the bfloat16 61 x (1,152 + 132), as before
    b200 = ["compare", "--preset", "DeepSeek-V3.2", "--gpu-memory", "B200 192GB", "--json"]
    code, out, err = run(b200, capsys)
    assert code == 0 and ("python -m flatkv: note: SGLang 0.5.23 on a B200 keeps DeepSeek's "
                          "sparse attention in fp8_e4m3 where no --kv-cache-dtype is told, on "
                          "its trtllm DSA backends, which store the raw latent beside the index "
                          "keys, 576 + 132 = 708 B a token a layer (kv_cache_configurator.py "
                          "3425-3440): these figures are that layout's (told bfloat16 it keeps "
                          "1,284 B, as on a Hopper)\n") in err
    (sglang,) = [r for r in json.loads(out) if r["strategy"] == "sglang"]
    assert sglang["capacity_tokens"] == 173_039_262_105 // (61 * 708) // 64 * 64 == 4_006_592
    _, out, err = run([*b200[:4], "H100 80GB", "--json"], capsys)
    (sglang,) = [r for r in json.loads(out) if r["strategy"] == "sglang"]
    # 85,520,809,984 B x 0.9 = 76,968,728,985 B
    assert sglang["capacity_tokens"] == 76_968_728_985 // (61 * 1_284) // 64 * 64 == 982_656
    assert "SGLang 0.5.23" not in err


def test_a_gpu_named_in_any_case_is_that_gpu(capsys):
    """--gpu-memory reads a GPU's name in any case and spacing, as --preset reads a model's:
    "b200 192gb" is the B200's 183,359 MiB x 0.9 = 173,039,262,105 B (its SGLang page note
    too), not a size that does not parse."""
    code, out, err = run(["compare", "--preset", "gpt-oss-20b", "--gpu-memory", " b200  192gb",
                          "--json"], capsys)
    assert code == 0, err
    assert 183_359 * 2**20 * 9 // 10 == 173_039_262_105
    assert {r["budget_bytes"] for r in json.loads(out)} == {173_039_262_105}
    assert "SGLang 0.5.23 on a B200 runs pages of 64 tokens" in err
    # 173,039,262,105 / 2**30 = 161.155 GiB; in GiB alone 179.06 x 0.9 = 161.154 would not check
    assert 183_359 * 2**20 == 192_265_846_784
    assert ("budget 192,265,846,784 B (179.06 GiB) x 0.9 = 173,039,262,105 B (161.16 GiB) "
            "usable") in err
    # --sglang-blackwell beside it is the B200's own, as beside 'B200 192GB' (the link's
    # gpu=b200 192gb&sg_bw=1 too: test_app_state); beside 'h100 80gb' refused naming the H100
    v32 = ["compare", "--preset", "DeepSeek-V3.2", "--json"]
    code, told, err = run([*v32, "--gpu-memory", "b200 192gb", "--sglang-blackwell"], capsys)
    assert code == 0, err
    assert told == run([*v32, "--gpu-memory", "B200 192GB"], capsys)[1]
    code, _, err = run([*v32, "--gpu-memory", "h100 80gb", "--sglang-blackwell"], capsys)
    assert code == 2 and "but --gpu-memory 'H100 80GB' is hopper (SM 9.0" in err


def test_sglang_page_size_stops_where_the_link_and_the_sidebar_do(capsys):
    """--sglang-page-size takes up to 2**20 = 1,048,576 tokens, a link's sg_page's bound (it
    took up to 2**40, where a page outgrows any context); past it exit 2 in one line."""
    args = ["compare", "--preset", "gpt-oss-20b", "--budget", "40GiB", "--json"]
    code, out, err = run([*args, "--sglang-page-size", "1048576"], capsys)
    assert code == 0, err
    assert any(r["strategy"] == "sglang" for r in json.loads(out))
    code, out, err = run([*args, "--sglang-page-size", "1048577"], capsys)
    assert code == 2 and out == ""
    assert err == ("python -m flatkv: error: --sglang-page-size 1,048,577 is too large to be "
                   "real: give 1,048,576 or less; SGLang's --page-size: tokens per page of its "
                   "token pool, 1 on most backends, 64 on Blackwell's\n")


def test_a_gpu_name_left_unquoted_is_refused_with_the_quoting_fix(capsys):
    """A GPU's name holds a space: unquoted, its second word is a stray argument, and the error
    says to quote the name rather than only pointing to --help."""
    for typed in (["--gpu-memory", "h100", "80gb"], ["--gpu-memory=H100", "80GB"]):
        code, out, err = run(["compare", "--preset", "gpt-oss-20b", *typed], capsys)
        assert code == 2 and out == ""
        assert err == (f"python -m flatkv: error: unrecognized argument {typed[-1]}: a GPU's "
                       "name holds a space, so quote it: --gpu-memory 'H100 80GB'\n")
    # a stray word that with the one before it names no GPU keeps the --help pointer
    code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--gpu-memory", "H100 80GB",
                        "80GB"], capsys)
    assert code == 2 and err.endswith("unrecognized argument 80GB: python -m flatkv compare "
                                      "--help lists the options\n")


def test_a_bad_context_is_told_before_a_missing_budget(capsys):
    # --context is read as argparse parses it: `compare --context -5` without a budget said
    # only that one of --budget --vllm-blocks --gpu-memory is required, and the -5 came next
    code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--context", "-5"],
                         capsys)
    assert (code, out, err) == (
        2, "", "python -m flatkv: error: --context -5 must be positive: give 1 or more tokens\n")
    # with a budget, the same words; a good context without one: the missing budget
    code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--context", "-5",
                        "--budget", "1GiB"], capsys)
    assert err == "python -m flatkv: error: --context -5 must be positive: give 1 or more tokens\n"
    code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--context", "256K"],
                       capsys)
    assert code == 2 and err == ("python -m flatkv: error: --budget, --vllm-blocks or "
                                 "--gpu-memory is required: give one of them\n")


def test_memory_fraction_help_says_what_vllm_034_leaves_it_at():
    """vLLM 0.34's CacheConfig.resolved_gpu_memory_utilization is 1.0 with its extensible KV
    cache (CUDA's default), 0.92 without: the help named 0.92 as the current default, which
    sends a reader matching a 0.34 log to the wrong fraction instead of --vllm-blocks."""
    from flatkv.cli import build_parser

    plan = next(a for a in build_parser()._actions if a.dest == "command").choices["plan"]
    (fraction,) = [a for a in plan._actions if a.dest == "memory_fraction"]
    assert fraction.help == (
        "with --gpu-memory: the share an engine may use (0.01 to 1, at most 4 decimals, as "
        "the app's slider), vLLM's --gpu-memory-utilization (default 0.9, vLLM's before "
        "0.20; 0.92 from 0.20 to 0.33; vLLM 0.34 on CUDA takes 1.0 and sizes its cache after "
        "warm-up: give --vllm-blocks to match its log)")


def test_speculative_tokens_and_context_help_say_what_the_engines_do():
    """SGLang's drafting on a state hybrid is modelled (its buffers and its 48 running
    requests, or --max-running-requests told): the help said "not modelled for sglang"."""
    from flatkv.cli import build_parser

    compare = next(a for a in build_parser()._actions if a.dest == "command").choices["compare"]
    (tokens,) = [a for a in compare._actions if a.dest == "speculative_tokens"]
    # --context's default says where a config gives no length, as the app's context field does
    (context,) = [a for a in compare._actions if a.dest == "context"]
    assert context.help.endswith("(default: the model's max_model_len, as vLLM's "
                                 "--max-model-len: from its config, or the 2,048 vLLM assumes "
                                 "where the config gives no length)")
    assert tokens.help.endswith(
        "SGLang verifies N + 1 tokens a step (--speculative-num-steps N, topk 1), keeps their "
        "states in buffers sized with its state slots out of the state budget (a state hybrid "
        "with one token pool; its figures say where not modelled), and runs at most 48 "
        "requests at once, for any model (its speculative hook's reset), or "
        "--sglang-max-running-requests where told. A drafter's own layers count once they are "
        "in the model. (--mtp-layer adds an MTP module's; default 0)")


def test_output_that_cannot_be_written_is_one_line_not_a_traceback():
    # a full disk (/dev/full): the error in one line, exit 1 (the input was fine)
    root = pathlib.Path(__file__).resolve().parent.parent
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "flatkv", "presets"], cwd=root,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == ("python -m flatkv: error: cannot write the output: No space left on "
                           "device\n")


def test_output_the_terminals_encoding_cannot_hold_is_one_line_not_a_traceback():
    # a model named 'café' printed where stdout is ASCII (PYTHONIOENCODING, a Latin-1 locale,
    # a Windows code page): one line that says how, exit 1 (the input was fine)
    root = pathlib.Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "flatkv", "model", "--hf-config",
                           '{"model_type": "llama", "num_hidden_layers": 2}', "--name", "café"],
                          cwd=root, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONIOENCODING": "ascii", "HF_HUB_OFFLINE": "1"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("python -m flatkv: error: cannot write the output: its character "
                           "U+00E9 is not in this terminal's encoding (ascii); set "
                           "PYTHONIOENCODING=utf-8\n")


def test_an_option_given_twice_is_refused(capsys):
    # argparse keeps the last value silently: --budget 80GB --budget 1GB planned 1 GB
    for argv, said in (
            (["plan", "--preset", "Llama-3.1-8B", "--budget", "80GB", "--budget", "1GB"],
             "--budget is given again: give it once"),
            (["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB", "--sglang-swa-pool",
              "--no-sglang-swa-pool"],
             "--no-sglang-swa-pool is given after --sglang-swa-pool, which says otherwise: give "
             "one of them"),
            (["model", "--preset", "Llama-3.1-8B", "--preset", "gpt-oss-20b"],
             "--preset is given again: give it once"),
            (["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB", "--tp", "2", "--tp=4"],
             "--tp is given again: give it once"),
            # one setting's two spellings that disagree: SGLang's own and FlatKV's
            (["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
              "--chunked-prefill-size", "4096", "--sglang-chunked-prefill-size", "8192"],
             "--sglang-chunked-prefill-size 8192 is given after --chunked-prefill-size 4096, which "
             "says otherwise: give one of them"),
            # one spelling twice, after the other agreed: refused as alone (it passed)
            (["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
              "--chunked-prefill-size", "4096", "--sglang-chunked-prefill-size", "4_096",
              "--sglang-chunked-prefill-size", "4096"],
             "--sglang-chunked-prefill-size is given again: give it once"),
            # the values as read: -1_000 is chunked prefill off (-1), 256K 262,144 tokens
            (["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
              "--chunked-prefill-size", "256K", "--sglang-chunked-prefill-size=-1_000"],
             "--sglang-chunked-prefill-size -1 is given after --chunked-prefill-size 262144, "
             "which says otherwise: give one of them"),
            # the same flag twice, even alike: as it was
            (["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
              "--disable-overlap-schedule", "--disable-overlap-schedule"],
             "--disable-overlap-schedule is given again: give it once")):
        code, out, err = run(argv, capsys)
        assert (code, out, err) == (2, "", f"python -m flatkv: error: {said}\n"), argv
    # once each, as before; the record of what was given stays out of the arguments
    code, out, _ = run(["plan", "--preset", "Llama-3.1-8B", "--budget", "80GB", "--tp", "2",
                        "--json"], capsys)
    assert code == 0 and json.loads(out)["geometry"]["block_bytes"] == 32 * 16 * 2_048
    # two spellings of one setting that agree are taken: the chunk as one alone gives it
    def chunk(*flags):
        code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
                              *flags, "--json"], capsys)
        assert code == 0, err
        return [r["log_lines"] for r in json.loads(out) if r["strategy"] == "sglang"]

    assert chunk("--chunked-prefill-size", "4096", "--sglang-chunked-prefill-size",
                 "4_096") == chunk("--sglang-chunked-prefill-size", "4096")


def test_options_that_change_no_figure_are_noted(capsys):
    # the figures stand, but a command naming the option would read as if it counted
    code, out, err = run(["plan", "--strategy", "vllm", "--preset", "Qwen3-Next-80B-A3B",
                          "--tp", "2", "--budget", "44.59GiB", "--context", "262144",
                          "--prefill-checkpoint-blocks", "3"], capsys)
    # SPEC 3.1's anchor, as without the option: 7,162 blocks over ceil(262,144 / 544) = 482
    # full pages and 3 state groups' one page each
    assert code == 0 and "  concurrency     14.77x at 262,144 tokens (7,162 / 485)" in (
        out.splitlines())
    assert ("python -m flatkv: note: --prefill-checkpoint-blocks changes no figure here: it "
            "acts only in mamba cache mode align") in err.splitlines()
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
                          "--mamba-cache-mode", "align", "--sglang-ssm-dtype", "float32"], capsys)
    assert code == 0
    assert [line for line in err.splitlines() if "changes no figure" in line] == [
        "python -m flatkv: note: --mamba-cache-mode changes no figure here: this model gives it "
        "nothing to act on",
        "python -m flatkv: note: --sglang-ssm-dtype changes no figure here: this model gives it "
        "nothing to act on"]
    # where every layout that reads it serves no such model (SGLang, for Jamba), that says
    # so; a plan that counts requests notes its layout's idle options as well
    code, out, err = run(["compare", "--preset", "Jamba-1.5-Mini", "--budget", "80GB",
                          "--sglang-slots-per-request", "4"], capsys)
    assert ("python -m flatkv: note: --sglang-slots-per-request changes no figure here: no "
            "layout that reads it serves this model") in err.splitlines()
    code, out, err = run(["plan", "--preset", "Llama-3.1-8B", "--budget", "80GB", "--context",
                          "8192", "--mamba-cache-mode", "all"], capsys)
    assert code == 0 and ("python -m flatkv: note: --mamba-cache-mode changes no figure here: "
                          "this model gives it nothing to act on") in err.splitlines()
    # SGLang's sliding / full ratio without its sliding pool
    code, out, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "80GB",
                          "--no-sglang-swa-pool", "--swa-full-tokens-ratio", "0.5"], capsys)
    assert ("python -m flatkv: note: --swa-full-tokens-ratio changes no figure here: SGLang "
            "keeps no sliding-window pool of its own here") in err.splitlines()
    # overlap scheduling where the slots a request holds are told; and on a model SGLang
    # runs without its extra buffer (LFM2: no_buffer, whatever the scheduling)
    code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                          "--no-sglang-overlap-schedule", "--sglang-slots-per-request", "4"],
                         capsys)
    assert ("python -m flatkv: note: --no-sglang-overlap-schedule changes no figure here: SGLang "
            "slots per request is set, which overlap scheduling would decide"
            ) in err.splitlines()
    code, out, err = run(["compare", "--preset", "LFM2-1.2B", "--budget", "80GB",
                          "--no-sglang-overlap-schedule"], capsys)
    assert ("python -m flatkv: note: --no-sglang-overlap-schedule changes no figure here: this "
            "model gives it nothing to act on") in err.splitlines()
    # an option that acts: no note
    code, out, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "80GB",
                          "--swa-full-tokens-ratio", "0.5"], capsys)
    assert code == 0 and "changes no figure" not in err
    code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                          "--no-sglang-overlap-schedule", "--json"], capsys)
    assert code == 0 and "changes no figure" not in err
    sglang = next(r for r in json.loads(out) if r["strategy"] == "sglang")
    assert sglang["slots_per_request"] == 3  # no_buffer at page size 1
    assert sglang["running_request_cap"] == sglang["request_state_slots"] // 3


def test_a_fraction_that_is_not_a_number_says_what_to_give(capsys):
    code, _, err = run(["plan", "--preset", "Llama-3.1-8B", "--gpu-memory", "80GB",
                        "--memory-fraction", "90%"], capsys)
    assert (code, err) == (2, "python -m flatkv: error: --memory-fraction '90%' is not a "
                              "number: give the share of the GPU an engine may use, e.g. 0.9\n")


def test_an_unknown_option_is_named_before_a_missing_required_one(capsys):
    # argparse said "--budget is required" for a misspelt --budgte
    for argv, said in ((["compare", "--preset", "Llama-3.1-8B", "--budgte", "80GB"],
                        "unrecognized argument --budgte: python -m flatkv compare --help lists "
                        "the options"),
                       (["--bogus"], "unrecognized argument --bogus: python -m flatkv --help "
                        "lists the options"),
                       # a one-dash option too, which argparse named without the pointer
                       (["plan", "--preset", "Llama-3.1-8B", "--budget", "1GB", "-x"],
                        "unrecognized argument -x: python -m flatkv plan --help lists the "
                        "options")):
        code, out, err = run(argv, capsys)
        assert (code, out, err) == (2, "", f"python -m flatkv: error: {said}\n")
    # an abbreviation is no option (argparse took --bud for --budget, --mod for --model-file)
    assert run(["plan", "--preset", "Llama-3.1-8B", "--bud", "80GB"], capsys) == (
        2, "", "python -m flatkv: error: unrecognized argument --bud: python -m flatkv plan "
        "--help lists the options\n")


def test_a_ratio_out_of_range_gets_an_example_of_its_kind(capsys):
    # the padding bound's example was the memory ratio's "0.9 or 9/10"; it takes [0, 10], a
    # share of a page wasted, 1/4 by default
    for flag, value, said in (
            ("--lcm-padding-bound", "11", "[0, 10] such as 0.25 or 1/4"),
            ("--lcm-padding-bound", "x", "[0, 10] such as 0.25 or 1/4"),
            ("--mamba-full-memory-ratio", "0", "[0.000001, 1000000] such as 0.9 or 9/10")):
        code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "10GB", flag,
                              value], capsys)
        assert (code, out, err) == (2, "", f"python -m flatkv: error: {flag} is '{value}': "
                                    f"give a number in {said}\n")
    assert run(["compare", "--preset", "Llama-3.1-8B", "--budget", "10GB",
                "--lcm-padding-bound", "1/4"], capsys)[0] == 0


def test_a_stray_word_after_any_command_gets_the_help_pointer(capsys):
    # argparse said "unrecognized arguments: extra", with no pointer; no command takes a
    # positional argument, and a stray word is named before a missing required option
    llama = ["--preset", "Llama-3.1-8B", "--budget", "80GB"]
    for argv in (["presets", "extra"], ["model", "--preset", "Llama-3.1-8B", "extra"],
                 ["plan", *llama, "extra"], ["plan", "--budget=80GB", "extra"],
                 ["compare", "extra"], ["bench", "extra", "--max-blocks", "4"],
                 ["presets", "--", "extra"]):
        code, out, err = run(argv, capsys)
        assert (code, out, err) == (2, "", f"python -m flatkv: error: unrecognized argument "
                                    f"extra: python -m flatkv {argv[0]} --help lists the "
                                    "options\n"), argv
    # an option's value is not stray
    assert run(["plan", *llama], capsys)[0] == 0


def test_a_misspelt_command_or_a_value_like_an_option_is_argparses_to_say(capsys):
    for argv, said in (
            (["plna", "--preset", "Llama-3.1-8B", "--budget", "1GB"],
             "'plna' is not a command: give one of plan, compare, bench, model or presets"),
            (["plan", "--layers", "--foo"], "--layers needs a value: give one after it (for a "
             "value that starts with '-', write --layers=VALUE)")):
        code, out, err = run(argv, capsys)
        assert (code, err) == (2, f"python -m flatkv: error: {said}\n"), argv


def test_a_mamba2_model_in_align_is_told_the_flag_of_vllm_032s_checkpoint_page(capsys):
    falcon = ["--preset", "Falcon-H1-7B", "--budget", "40GiB", "--context", "32768",
              "--mamba-cache-mode", "align"]
    said = ("note: Mamba cache mode align counts 2 state pages a request in each state group "
            "here, as vLLM 0.28 to 0.31 did. Since 0.32 vLLM keeps a prefill checkpoint page "
            "more for this model's Mamba2 layers (3 a request): give "
            "--prefill-checkpoint-blocks 1 to match a later log.")
    code, _, err = run(["compare", *falcon], capsys)
    assert code == 0 and said in err
    code, _, err = run(["plan", *falcon, "--strategy", "vllm"], capsys)
    assert code == 0 and said in err
    # given, the figures are 0.34's (607 / 24) and the note has nothing to say
    code, out, err = run(["compare", *falcon, "--prefill-checkpoint-blocks", "1"], capsys)
    # P = 16 x ceil((21,504 + 1,572,864) / (16 x 1,024)) = 1,568, pages of 1,605,632 B, 44
    # layers a group: 40 GiB // 1,605,632 // 44 = 607 blocks; a request ceil(32,768 / 1,568)
    # = 21 full pages + 3 state pages = 24; 607 / 24 = 25.29, and vLLM's line
    # int(607 / 24 x 32,768) = 828,757 tokens
    assert code == 0 and "Since 0.32" not in err and (
        "  GPU KV cache size: 828,757 tokens, Maximum concurrency for 32,768 tokens per "
        "request: 25.29x") in out.splitlines()
    # a GDN model: on an H100 named by --gpu-memory (its prefill on FlashInfer), not an A100
    qwen = ["--preset", "Qwen3-Next-80B-A3B", "--context", "32768", "--mamba-cache-mode",
            "align"]
    code, _, err = run(["compare", *qwen, "--gpu-memory", "H100 80GB"], capsys)
    assert code == 0 and (
        "note: Mamba cache mode align counts 2 state pages a request in each state group here, "
        "as vLLM 0.28 to 0.32 did. Since 0.33 vLLM keeps a prefill checkpoint page more for "
        "this model's GDN layers on the H100 80GB, whose prefill runs on FlashInfer there (3 a "
        "request): give --prefill-checkpoint-blocks 1 to match a later log.") in err
    code, _, err = run(["compare", *qwen, "--gpu-memory", "A100 80GB"], capsys)
    assert code == 0 and "Since 0.33" not in err


def test_compare_says_vllm_refuses_to_start_in_a_budget_of_one_block_or_less(capsys):
    # DeepSeek-V3.2 in 3,000,000 B: vLLM's block of 61 x 82,176 = 5,012,736 B does not fit,
    # which vLLM raises at start-up; the note reads it as a refusal, as Compare's "won't start"
    args = ["--preset", "DeepSeek-V3.2", "--budget", "3000000", "--context", "163840"]
    code, out, err = run(["compare", *args], capsys)
    assert code == 0 and err == ""
    assert ("vllm refuses to start: the budget of 3,000,000 B holds num_blocks = 3,000,000 // "
            "82,176 // 61 = 0 and vLLM needs at least 2") in out
    code, out, err = run(["plan", *args, "--strategy", "vllm"], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith(
        "python -m flatkv: error: --strategy vllm: vLLM refuses to start: the budget of "
        "3,000,000 B holds num_blocks = 3,000,000 // 82,176 // 61 = 0 and vLLM needs at least 2")


def test_compare_gives_vllms_reason_for_a_float16_kda_state(capsys):
    # Kimi Linear told --vllm-ssm-dtype float16: vLLM 0.34's KDA takes float32 or bfloat16 only,
    # so compare shows no vLLM figures and says why, plan exits 2 with that one line; SGLang
    # keeps its figures. The model's own --ssm-dtype float16 or bf16 is no refusal: vLLM's
    # auto keeps float32 whatever it (kda_state_dtype), the float32 figures: P 128 x
    # cdiv(73,728 + 2,097,152, 128 x 1,152) = 1,920, a block 7 x 1,920 x 1,152 = 15,482,880 B,
    # 40 GiB // it = 2,774 blocks; told bf16, P 1,024: 7 x 1,024 x 1,152 = 8,257,536 B, 5,201
    args = ["--preset", "Kimi-Linear-48B-A3B", "--budget", "40GiB", "--context", "32K"]
    why = ("vLLM refuses to start: KimiLinearForCausalLM's KDA layers keep their recurrent "
           "(ssm) state in float32 or bfloat16 only, and --mamba-ssm-cache-dtype float16 is "
           "told")
    code, out, err = run(["compare", *args, "--vllm-ssm-dtype", "float16"], capsys)
    assert code == 0 and err == ""
    # its line says the refusal once, as Compare's does: "vllm refuses to start: KimiLinear..."
    assert f"vllm {why.replace('vLLM refuses', 'refuses')}" in out
    row = next(line for line in out.splitlines() if line.startswith("blocks "))
    assert row.split()[3] == "n/a"  # flat, per-component, vllm, sglang, ...
    code, out, _ = run(["compare", *args, "--vllm-ssm-dtype", "float16", "--json"], capsys)
    results = {r["strategy"]: r for r in json.loads(out)}
    assert results["vllm"]["applies"] is False and results["vllm"]["reason"].startswith(why)
    assert results["vllm"]["num_blocks"] is None and results["sglang"]["applies"] is True
    code, out, err = run(["plan", *args, "--vllm-ssm-dtype", "fp16", "--strategy", "vllm"],
                         capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"python -m flatkv: error: --strategy vllm: {why}")
    assert 7 * 1_920 * 1_152 == 15_482_880 and 40 * 2**30 // 15_482_880 == 2_774
    for dtype in ("float16", "bf16"):
        code, out, _ = run(["plan", *args, "--ssm-dtype", dtype, "--strategy", "vllm",
                            "--json"], capsys)
        result = json.loads(out)
        assert code == 0 and (result["block_size"], result["block_bytes"],
                              result["num_blocks"]) == (1_920, 15_482_880, 2_774)
    code, out, _ = run(["plan", *args, "--vllm-ssm-dtype", "bf16", "--strategy", "vllm",
                        "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and (result["block_size"], result["block_bytes"], result["num_blocks"]) == (
        1_024, 8_257_536, 5_201)


# What --disable-radix-cache leaves to act on without state and with chunked prefill off
# (gpt-oss-20b): the note test_strategy_cli's chunk test reads too
RADIX_OFF_UNCHUNKED_NOTE = (
    "python -m flatkv: note: --sglang-disable-radix-cache changes no figure here: without state "
    "it acts only on a sliding-window pool of SGLang's own beside full layers (its request "
    "cap, and the tokens it frees behind each window), with chunked prefill on: off, a whole "
    "prompt goes into that pool, sized by the ratio, as with the radix cache")

def test_disable_radix_cache_notes_where_it_changes_no_figure(capsys):
    # without state, --disable-radix-cache acts only on a hybrid SWA pool, and only with
    # chunked prefill on: its request cap where max running requests is set, and the sliding
    # tokens it frees behind each window (the sliding pool's concurrency and idle tokens)
    # whether or not: gpt-oss-20b untold or told 64 notes nothing, with chunked prefill off it
    # says so; Llama 3.1 (full attention alone) is offered it nowhere
    for more in ([], ["--max-running-requests", "64"]):
        code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "80GB",
                            "--disable-radix-cache", *more], capsys)
        assert code == 0 and "changes no figure" not in err, more
    code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "80GB",
                        "--disable-radix-cache", "--chunked-prefill-size", "-1"], capsys)
    assert code == 0 and RADIX_OFF_UNCHUNKED_NOTE in err.splitlines()
    code, _, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "80GB",
                        "--disable-radix-cache"], capsys)
    assert ("python -m flatkv: note: --sglang-disable-radix-cache changes no figure here: this "
            "model gives it nothing to act on") in err.splitlines()
    # a state hybrid whose S is told: the state from the budget either way, nothing left
    code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                        "--disable-radix-cache", "--sglang-slots-per-request", "4"], capsys)
    assert ("python -m flatkv: note: --sglang-disable-radix-cache changes no figure here: SGLang "
            "slots per request is set, which the radix cache would decide") in err.splitlines()
    # and what it idles: overlap scheduling (which sets S through the radix cache), the
    # sliding / full ratio where the request cap sizes that pool
    code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB",
                        "--disable-radix-cache", "--no-sglang-overlap-schedule"], capsys)
    assert ("python -m flatkv: note: --no-sglang-overlap-schedule changes no figure here: "
            "SGLang's radix cache is off, so it decides no state slots a request holds"
            ) in err.splitlines()
    code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "80GB",
                        "--disable-radix-cache", "--max-running-requests", "64",
                        "--swa-full-tokens-ratio", "0.5"], capsys)
    assert ("python -m flatkv: note: --swa-full-tokens-ratio changes no figure here: SGLang "
            "sizes its sliding-window pool from its request cap here (--disable-radix-cache "
            "with max running requests set)") in err.splitlines()


def test_mamba_track_interval_notes_where_no_extra_buffer_checks_it(capsys):
    # only SGLang's extra_buffer radix cache reads --mamba-track-interval: with the radix cache
    # off (or no_buffer) 64 is checked by nothing, so Nemotron-H-8B (chunk 128) starts
    code, _, err = run(["compare", "--preset", "Nemotron-H-8B", "--budget", "80GB",
                        "--disable-radix-cache", "--mamba-track-interval", "64"], capsys)
    assert code == 0 and ("python -m flatkv: note: --sglang-mamba-track-interval changes no "
                          "figure here: SGLang runs no extra_buffer radix cache here, the only "
                          "one that tracks state") in err.splitlines()


def test_mamba_track_interval_notes_where_it_passes_every_check_as_256_does(capsys):
    # Qwen3-Next at SGLang's page size 1, nothing drafted: SGLang's extra buffer reads 512
    # but sizes nothing by it, and 512 and 256 pass its checks alike: the figures are the
    # default's, and the note says why. At pages of 512, 256 is refused and 512 is not: no note
    note = ("python -m flatkv: note: --sglang-mamba-track-interval changes no figure here: "
            "SGLang sizes no pool or slot by it and only checks it at start-up (the page size "
            "divides it; it is at least the tokens verified a step and a Mamba2 model's "
            "chunk), which it passes here as SGLang's default of 256 does")
    args = ["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "80GB"]
    code, told, err = run([*args, "--mamba-track-interval", "512"], capsys)
    assert code == 0 and note in err.splitlines()
    assert told == run(args, capsys)[1]
    code, _, err = run([*args, "--mamba-track-interval", "512", "--sglang-page-size", "512"],
                       capsys)
    assert code == 0 and "track-interval" not in err


def test_disable_radix_cache_without_a_sliding_pool_says_the_pool_is_what_is_missing(capsys):
    # gpt-oss-20b with its SWA pool turned off and max running requests told (64): SGLang's
    # request cap has no sliding pool to size, so --disable-radix-cache changes no figure;
    # the note said it needs max running requests told, which it is
    code, _, err = run(["compare", "--preset", "gpt-oss-20b", "--budget", "80GB",
                        "--disable-radix-cache", "--max-running-requests", "64",
                        "--no-sglang-swa-pool"], capsys)
    assert code == 0 and ("python -m flatkv: note: --sglang-disable-radix-cache changes no "
                          "figure here: without state it acts only on a sliding-window pool of "
                          "SGLang's own beside full layers, and SGLang keeps none here") in (
        err.splitlines())


def test_compare_check_log_of_blank_lines_says_it_holds_no_text(tmp_path, capsys):
    # a file of blank lines (CR LF, spaces, tabs): it said none of the lines "is in its 0
    # lines", asking for a log of a run at these settings; the log holds no text at all
    log = tmp_path / "blank.log"
    log.write_bytes(b"\r\n  \r\n\t\n\n")
    code, out, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                          "--check-log", str(log)], capsys)
    assert code == 2 and out == ""
    assert err == (f"python -m flatkv: error: --check-log '{log}' holds no line of text: give "
                   "the engine's start-up log, from its start to its KV cache lines\n")
    log.write_bytes(b"")  # an empty file alike
    assert run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                "--check-log", str(log)], capsys)[2] == err


def test_compare_check_log_of_the_real_anchor_log(tmp_path, capsys):
    # vLLM 0.10.2's log of SPEC 3.1's anchor (tests/test_log_check.py's ANCHOR_LOG): its KV
    # cache size on two lines, as that release counts it (7,162 // 4 x 544 = 973,760), reads
    # as FlatKV's one line in that form and agrees; its release has no "Memory after warmup"
    from test_log_check import ANCHOR_LOG

    log = tmp_path / "anchor.log"
    log.write_text(ANCHOR_LOG, encoding="utf-8")
    code, out, _ = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--budget",
                        "44.59GiB", "--context", "262144", "--check-log", str(log)], capsys)
    assert code == 0
    assert out.splitlines()[0] == ("vLLM: 4 of 5 lines are in the log and agree with it; 1 not "
                                   "in it.")
    assert out.splitlines()[-2:] == [
        "  same: GPU KV cache size: 973,760 tokens / Maximum concurrency for 262,144 tokens "
        "per request: 14.77x",  # the form the log has, not FlatKV's 3,871,083 on one line
        "    (lines 6-7 (EngineCore_DP0 pid=1805889), 8-9 (EngineCore_DP0 pid=1805889), on two "
        "lines, its tokens as vLLM 0.19 and earlier count them, agree)"]


def test_sglang_takes_the_gpus_own_chunked_prefill_size(capsys):
    # gpt-oss-20b on a B200 at 16K: SGLang's own --chunked-prefill-size there is 16,384
    # (memory_hook.py 160-168), so a request holds min(127 + 16,384, 16,384) = 16,384 sliding
    # tokens: 3,129,326 / 16,384 = 190.99 binds before the full pool's 3,911,658 / 16,384 =
    # 238.75 (test_sglang_chunked_prefill_size_sizes_a_sliding_request_not_max_batched_tokens);
    # told 8,192, the H100's and H200's own, 127 + 8,192 sliding tokens and the full pool binds
    def sglang(*more):
        code, out, _ = run(["compare", "--preset", "gpt-oss-20b", "--gpu-memory", "B200 192GB",
                            "--context", "16K", "--json", *more], capsys)
        assert code == 0
        return next(r for r in json.loads(out) if r["strategy"] == "sglang")

    assert sglang()["max_concurrency"] == pytest.approx(3_129_326 / 16_384)
    _, _, err = run(["compare", "--preset", "gpt-oss-20b", "--gpu-memory", "B200 192GB",
                     "--context", "16K"], capsys)
    assert ("note: SGLang's figures take a prefill chunk of 16,384 tokens, its own "
            "--chunked-prefill-size on --gpu-memory B200 192GB (it picks it by the GPU's "
            "memory): --sglang-chunked-prefill-size sets another") in err
    assert sglang("--chunked-prefill-size", "8192")["max_concurrency"] == pytest.approx(
        3_911_658 / 16_384)
    # H200 141GB: 8,192 its own, as before; its cache floor(143,771 MiB x 0.9) =
    # 135,679,338,086 B, full floor(135,679,338,086 / (24,576 x 1.8)) = 3,067,114 tokens, swa
    # 0.8 x as many over 8,319: the full pool binds, 3,067,114 / 16,384 = 187.20
    code, out, _ = run(["compare", "--preset", "gpt-oss-20b", "--gpu-memory", "H200 141GB",
                        "--context", "16K", "--json"], capsys)
    h200 = next(r for r in json.loads(out) if r["strategy"] == "sglang")
    assert h200["kv_tokens"] == 3_067_114
    assert h200["max_concurrency"] == pytest.approx(3_067_114 / 16_384)
    _, _, err = run(["compare", "--preset", "gpt-oss-20b", "--gpu-memory", "H200 141GB",
                     "--context", "16K"], capsys)
    assert "prefill chunk" not in err  # its own is the 8,192 assumed without a GPU
    # a model without a sliding pool at page size 1: the chunk moves no pool, but SGLang's
    # scheduler line prints it, so no note says it changes nothing
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "40GiB",
                          "--context", "16K", "--chunked-prefill-size", "2048"], capsys)
    assert code == 0 and err == ""
    assert ("  max_total_num_tokens=327680, chunked_prefill_size=2048, max_prefill_tokens=..., "
            "max_running_requests=4096, context_len=16384") in out.splitlines()
    # at page 48 the chunk decides whether SGLang starts: 8,192 is 170 x 48 + 32 and refused,
    # chunked prefill off starts it (40 GiB over 131,072 B a token: 327,680 tokens, in whole
    # pages of 48 327,648), with no note
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "40GiB",
                          "--context", "16K", "--sglang-page-size", "48", "--json"], capsys)
    refused = next(r for r in json.loads(out) if r["strategy"] == "sglang")
    assert not refused["applies"] and "or -1 (chunked prefill off)" in refused["reason"]
    code, out, err = run(["compare", "--preset", "Llama-3.1-8B", "--budget", "40GiB",
                          "--context", "16K", "--sglang-page-size", "48",
                          "--chunked-prefill-size", "-1", "--json"], capsys)
    off = next(r for r in json.loads(out) if r["strategy"] == "sglang")
    assert code == 0 and "chunked-prefill-size" not in err
    assert off["kv_tokens"] == 40 * 2**30 // 131_072 // 48 * 48 == 327_648


@pytest.mark.parametrize(("layers", "message"), [
    ("zz", "--layers 'zz' has unknown layer kind 'zz': use one of attention, attn, chunked, "
     "chunked_attention, full, full_attention, gdn, linear, linear_attention, mamba, sliding, "
     "sliding_attention, state, swa"),
    ("full,x", "--layers 'full,x' has unknown layer kind 'x': use one of attention, attn, "
     "chunked, chunked_attention, full, full_attention, gdn, linear, linear_attention, mamba, "
     "sliding, sliding_attention, state, swa"),
    # given empty: said so, where it said "no model given: pass ... --layers"
    ("", "--layers '' is empty: write one name per cache layer, e.g. (3*linear,full)*12"),
    ("(full", "--layers '(full': expected ')' at character 6, got the end of the pattern "
     "(write it like (3*linear,full)*12)"),
    ("full*0", "--layers 'full*0': repeat count '0' at character 6 must be positive: give 1 or "
     "more, or "
     "leave the item out, e.g. (3*linear,full)*12"),
    ("full*3000", "--layers 'full*3000' expands to more than 2,048 cache layers, which is "
     "too large to be real: give 2,048 or less"),
    ("(" * 33 + "full" + ")" * 33, "--layers '" + "(" * 33 + "full" + ")" * 33 + "' nests "
     "parentheses more than 32 deep (at character 33): write it flatter, e.g. (3*gdn,full)*12"),
])
def test_a_bad_layer_pattern_is_refused_naming_the_layers_flag(layers, message, capsys):
    # the pattern parser's words named no option: "layer pattern 'zz' has unknown ..."
    for command in ("plan", "compare", "bench"):
        assert refused([command, "--layers", layers, "--kv-bytes-per-slot", "8", "--budget",
                        "1GB"], capsys) == f"python -m flatkv: error: {message}\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["model", "--preset", "Llama-3.1-8B", "--tp", "٢"],
     "--tp '٢' is not written in ASCII digits: write it in ASCII digits, e.g. 2"),
    (["plan", *QWEN35, "--budget", "80GB", "--block-size", "６４"],
     "--block-size '６４' is not written in ASCII digits: write it in ASCII digits, "
     "e.g. 64"),
    (["compare", *QWEN35, "--budget", "80GB", "--speculative-tokens", "+3"],
     "--speculative-tokens '+3' has a plus sign: write it without the sign, e.g. 3"),
    # ... but not '+-1', which int() refuses, and whose '-1' each of these flags refuses
    (["model", "--preset", "Llama-3.1-8B", "--tp", "+-1"],
     "--tp '+-1' is not a whole number: give one in digits, e.g. 2"),
    (["bench", *QWEN35, "--threads", "١"],
     "--threads '١' is not written in ASCII digits: write it in ASCII digits, e.g. 1"),
    (["plan", *QWEN35, "--budget", "８0GB"],
     "--budget '８0GB' is not written in ASCII digits: write it in ASCII digits, e.g. 80GB"),
    (["compare", *QWEN35, "--budget", "80GB", "--context", "٨K"],
     "--context '٨K' is not written in ASCII digits: write it in ASCII digits, e.g. 8K"),
    (["plan", "--layers", "full*١٢", "--kv-bytes-per-slot", "64", "--budget", "80GB"],
     "--layers 'full*١٢': repeat count '١٢' at character 6 is not written in ASCII "
     "digits: write it in ASCII digits, e.g. full*12"),
    # a fraction or ratio too: float() and Decimal read these as 0.8 and 0.9
    (["compare", *QWEN35, "--gpu-memory", "80GB", "--memory-fraction", "٠.٨"],
     "--memory-fraction '٠.٨' is not written in ASCII digits: write it in ASCII "
     "digits, e.g. 0.8"),
    (["compare", *QWEN35, "--gpu-memory", "80GB", "--memory-fraction", "+0.8"],
     "--memory-fraction '+0.8' has a plus sign: write it without the sign, e.g. 0.8"),
    (["compare", *QWEN35, "--budget", "80GB", "--mamba-full-memory-ratio", "٩/١٠"],
     "--mamba-full-memory-ratio '٩/١٠' is not written in ASCII digits: write it in ASCII "
     "digits, e.g. 9/10"),
])
def test_a_number_in_other_digits_or_with_a_plus_sign_is_refused_naming_flag_value_and_fix(
        argv, message, capsys):
    # each of these int() (and so an engine's own flag) reads: refused with the value to write
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err == f"python -m flatkv: error: {message}\n"


def test_a_layer_pattern_in_other_digits_suggests_the_whole_pattern_which_the_cli_takes(capsys):
    # --layers 'full*١٢' suggested "e.g. 12", which --layers refuses as no layer kind: the fix
    # is the pattern in ASCII digits, and it plans 12 full layers of 64 B a token
    argv = ["plan", "--kv-bytes-per-slot", "64", "--budget", "80GB", "--json"]
    err = refused([*argv, "--layers", "full*١٢"], capsys)
    fix = err.rpartition("e.g. ")[2].strip()
    assert (err, fix) == ("python -m flatkv: error: --layers 'full*١٢': repeat count '١٢' at "
                          "character 6 is not written in ASCII digits: write it in ASCII "
                          "digits, e.g. full*12\n", "full*12")
    code, out, _ = run([*argv, "--layers", fix], capsys)
    assert code == 0 and json.loads(out)["geometry"]["block_bytes"] == 12 * 64 * 16 == 12_288


def test_a_whole_number_option_reads_spaces_around_it_and_underscores_between_digits(capsys):
    spaced = run(["plan", *QWEN35, "--budget", "80GB", "--block-size", " 1_0 ", "--json"],
                 capsys)
    plain = run(["plan", *QWEN35, "--budget", "80GB", "--block-size", "10", "--json"], capsys)
    assert spaced[0] == 0 and spaced == plain


def test_sglangs_own_disable_overlap_schedule_flag_turns_overlap_scheduling_off(capsys):
    # SGLang's own spelling, which its no_buffer refusal names: Qwen3-Next at TP 1, 40 GiB and
    # 32,768 tokens holds 262 request state slots; with overlap scheduling a running request
    # holds 3 + 2 (262 // 5 = 52 running), without it auto runs no_buffer's 3 (262 // 3 = 87)
    def sglang(*flags):
        code, out, _ = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                            "--context", "32768", *flags, "--json"], capsys)
        assert code == 0
        (row,) = [r for r in json.loads(out) if r["strategy"] == "sglang"]
        return row["request_state_slots"], row["slots_per_request"], row["max_running_requests"]

    assert sglang() == (262, 5, 262 // 5)
    assert sglang("--disable-overlap-schedule") == sglang("--no-sglang-overlap-schedule") == (
        262, 3, 262 // 3)
    # both spellings of overlap off agree: taken, in either order (they exited 2); the two
    # that contradict are refused, in either order
    assert sglang("--disable-overlap-schedule", "--no-sglang-overlap-schedule") == sglang(
        "--no-sglang-overlap-schedule", "--disable-overlap-schedule") == (262, 3, 262 // 3)
    for first, then in (("--disable-overlap-schedule", "--sglang-overlap-schedule"),
                        ("--sglang-overlap-schedule", "--disable-overlap-schedule")):
        code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB",
                            first, then], capsys)
        assert code == 2 and err.splitlines()[-1].endswith(
            f"{then} is given after {first}, which says otherwise: give one of them")


def test_mtp_layer_on_a_checkpoint_of_no_mtp_module_says_engines_mtp_will_not_start(
        tmp_path, capsys):
    # DeepSeek-V3's shape, num_nextn_predict_layers 0: the layer is added (62 MLA layers of
    # 1,152 B a token) and a note says the engines' MTP drafting does not start on it
    cfg = {"model_type": "deepseek_v3", "num_hidden_layers": 61, "num_attention_heads": 128,
           "kv_lora_rank": 512, "qk_rope_head_dim": 64, "num_nextn_predict_layers": 0}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, err = run(["model", "--hf-config", str(path), "--mtp-layer", "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["kv_bytes_per_token_all_layers"] == 62 * 1_152 == 71_424
    assert report["notes"].endswith(
        "This checkpoint has none (config.json num_nextn_predict_layers = 0): vLLM's and "
        "SGLang's MTP drafting do not start on it, so the layer counts such a drafter's; for "
        "MTP drafting, use a checkpoint that ships its MTP module.")


def test_block_size_and_kernel_block_help_say_vllm_034s_own():
    """FlatKV's default block size is SPEC 3.1's 16, which vLLM 0.34 runs only when told (its
    own is 64): DeepSeek-V3's default vLLM figures are P 16, 38,199 blocks, where a 0.34 log
    told nothing says 9,549 of P 64. And a preset's kernel block is not always 16: DeepSeek-V3.2
    runs at FlashMLA sparse's 64, whatever --kernel-block-size says."""
    from flatkv.cli import build_parser

    compare = next(a for a in build_parser()._actions if a.dest == "command").choices["compare"]
    (block,) = [a for a in compare._actions if a.dest == "block_size"]
    (kernel,) = [a for a in compare._actions if a.dest == "kernel_block_size"]
    assert block.help == (
        "requested tokens per page (default 16, SPEC 3.1's anchor, as vLLM before 0.34 runs "
        "and any told it, but for a dense MLA cache: in fp8 on a Hopper FlashMLA's 64, on a "
        "Blackwell FLASHINFER_MLA's 32; vLLM 0.34 told no --block-size runs 64: give 64 to "
        "match its log)")
    assert kernel.help.endswith("(default: a raw model's own, else 16; DeepSeek-V3.2's sparse "
                                "MLA runs at 64 whatever this says)")


@pytest.mark.parametrize(("argv", "flag", "typed"), [
    (["model", "--preset", "Llama-3.1-8B"], "--tp", "٠"),
    (["model", "--preset", "Llama-3.1-8B"], "--tp", "٢٠٠٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"], "--sglang-page-size",
     "٠"),
    (["plan", "--preset", "Llama-3.1-8B", "--budget", "40GiB", "--strategy", "sglang"],
     "--sglang-page-size", "٢٠٠٠٠٠٠٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"], "--kernel-block-size",
     "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"], "--mamba-chunk-size",
     "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"],
     "--sglang-slots-per-request", "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"],
     "--max-running-requests", "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"],
     "--max-mamba-cache-size", "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"], "--attn-dp-size", "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"], "--dp-size", "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"],
     "--mamba-track-interval", "٠"),
    (["compare", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"],
     "--lcm-alignment-bytes", "٠"),
    (["plan", "--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"], "--tp", "+-1"),
])
def test_the_fix_a_whole_number_option_suggests_is_one_that_option_takes(argv, flag, typed,
                                                                          capsys):
    # '٠' read is 0, which these options refuse as not positive; '٢٠٠٠' is past --tp's 1,024:
    # the "e.g." must be a value the option then takes, fed back as the user would
    code, _, err = run([*argv, flag, typed], capsys)
    assert code == 2 and f"{typed!r}" in err
    fix = err.rstrip("\n").rsplit("e.g. ", 1)[1]
    code, _, err = run([*argv, flag, fix, "--json"], capsys)
    assert code == 0, err


def test_a_preset_given_as_model_file_or_model_is_pointed_at_preset(tmp_path, monkeypatch,
                                                                     capsys):
    # '--model-file DeepSeek-V3.2' said "cannot read 'DeepSeek-V3.2': No such file or
    # directory; give the path of a JSON file", naming neither the flag nor the preset
    said = ("python -m flatkv: error: --model-file '{typed}' is no file but a preset's name: "
            "give --preset {name}\n")
    for argv, typed, name in (
            (["model", "--model-file", "qwen3-next-80b-a3b"], "qwen3-next-80b-a3b",
             "Qwen3-Next-80B-A3B"),
            (["model", "--model-file", "Llama-3.1-8B"], "Llama-3.1-8B", "Llama-3.1-8B")):
        assert run(argv, capsys) == (2, "", said.format(typed=typed, name=name)), argv
    # --model is no option (argparse read it, and --mod, as an abbreviated --model-file): it
    # points at the three sources, vLLM's --model (a Hugging Face id) being --hf-config here
    assert run(["compare", "--model", "DeepSeek-V3.2", "--budget", "40GiB"], capsys) == (
        2, "", "python -m flatkv: error: unrecognized argument --model: give --preset NAME (a "
        "bundled model), --hf-config PATH (a config.json, or a Hugging Face model id as "
        "vLLM's --model takes) or --model-file PATH (a model exported as JSON)\n")
    assert run(["model", "--mod", "qwen3-next-80b-a3b"], capsys) == (
        2, "", "python -m flatkv: error: unrecognized argument --mod: python -m flatkv model "
        "--help lists the options\n")
    # a file of that name is read as the file it is: the preset exported there
    monkeypatch.chdir(tmp_path)
    from flatkv.presets import load_preset
    (tmp_path / "Llama-3.1-8B").write_text(json.dumps(load_preset("Llama-3.1-8B").to_dict()))
    assert run(["model", "--model-file", "Llama-3.1-8B", "--json"], capsys)[0] == 0
    # a path that is neither keeps its words
    assert run(["model", "--model-file", "no-such.json"], capsys)[2] == (
        "python -m flatkv: error: cannot read 'no-such.json': No such file or directory; give "
        "the path of a JSON file\n")


def test_compare_help_names_each_column_as_the_app_names_its_layout(capsys):
    """compare's columns name the layouts by their ids (flat ... lcm), the app by titles
    ("two-level pages"): a reviewer setting the CLI beside Compare had nothing that said which
    was which, nor what either is. compare --help now leads each id with the app's title and
    a line on what the layout is, the text of Compare's "Layouts"."""
    code, out, _ = run(["compare", "--preset", "gpt-oss-20b", "--budget", "40GiB"], capsys)
    assert code == 0
    header = out.splitlines()[1].split()
    assert header == ["flat", "per-component", "vllm", "sglang", "aliased", "lcm"]
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    named = ["flat (FlatKV packed slabs): our planner", "per-component (FlatKV per component): ",
             "vllm (vLLM v1): vLLM's hybrid KV cache manager", "sglang (SGLang): SGLang's pools",
             "aliased (slab aliasing): ", "lcm (two-level pages): parent blocks"]
    assert [text.index(n) for n in named] == sorted(text.index(n) for n in named)
    assert [n.split(" (")[0] for n in named] == header


def test_model_file_export_of_deepseek_v32_on_a_b200_takes_the_raw_fp8_layout(capsys, tmp_path):
    # The Model page's raw-bytes export of DeepSeek-V3.2 (flatkv-profile/1: bytes, KV dtype,
    # split, indexer keys, architecture; no raw fp8 width) was taken as given on a B200, 61 x
    # 1,284 B (2,209,216 tokens) with a note that the latent width is unknown, where the preset
    # holds 4,006,592: the dtype names the latent's elements, (1,284 - 132) / 2 = 576 (float32:
    # (2,436 - 132) / 4), so SGLang's auto stores the raw 576 + 132 = 708 B a token a layer;
    # told --sglang-kv-cache-dtype bfloat16, 1,284 B, as the preset. The B200's budget:
    # 183,359 MiB x 0.9 = 173,039,262,105 B
    from flatkv.presets import load_preset
    from flatkv.profile import profile_to_dict

    budget = 183_359 * 2**20 * 9 // 10
    assert (1_284 - 132) // 2 == (2_436 - 132) // 4 == 576
    assert budget // (61 * 708) // 64 * 64 == 4_006_592
    assert budget // (61 * 1_284) // 64 * 64 == 2_209_216

    def sglang(*argv):
        code, out, _ = run(["compare", *argv, "--gpu-memory", "B200 192GB", "--json"], capsys)
        assert code == 0
        (result,) = [r for r in json.loads(out) if r["strategy"] == "sglang"]
        return result["capacity_tokens"]

    told = ("--sglang-kv-cache-dtype", "bfloat16")
    for dtype in ("bfloat16", "float16", "float32"):
        export = tmp_path / f"v32-{dtype}.json"
        export.write_text(json.dumps(profile_to_dict(
            load_preset("DeepSeek-V3.2").with_options(kv_dtype=dtype).profile())))
        assert '"dsa_raw_fp8_bytes_per_slot"' not in export.read_text()
        assert sglang("--model-file", str(export)) == 4_006_592, dtype
        assert sglang("--model-file", str(export), *told) == 2_209_216, dtype
    assert sglang("--preset", "DeepSeek-V3.2") == 4_006_592
    assert sglang("--preset", "DeepSeek-V3.2", *told) == 2_209_216


def test_gpu_arch_tells_vllms_gdn_checkpoint_block_as_its_presets_do(capsys):
    # Qwen3-Next in align: vLLM 0.33 and later keep a prefill checkpoint block for its GDN
    # layers where their prefill runs on FlashInfer (SM 9.0 any key head dim, SM 10.0 at 128;
    # vllm_releases.FLASHINFER_GDN_CAPABILITIES): on a budget told hopper the note the H100
    # preset gives, the GPU named by its architecture; told ampere (no FlashInfer GDN prefill)
    # or told nothing (not known), no note. 2 state pages a request, 3 with it
    def notes(*flags):
        code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--mamba-cache-mode",
                            "align", *flags], capsys)
        assert code == 0
        return [line for line in err.splitlines() if "prefill checkpoint" in line]

    said = ("python -m flatkv: note: Mamba cache mode align counts 2 state pages a request in "
            "each state group here, as vLLM 0.28 to 0.32 did. Since 0.33 vLLM keeps a prefill "
            "checkpoint page more for this model's GDN layers on the {}, whose prefill runs on "
            "FlashInfer there (3 a request): give --prefill-checkpoint-blocks 1 to match a "
            "later log.")
    assert notes("--budget", "40GiB", "--gpu-arch", "hopper") == [
        said.format("Hopper GPU (SM 9.0)")]
    assert notes("--gpu-memory", "H100 80GB") == [said.format("H100 80GB")]
    assert notes("--budget", "40GiB", "--gpu-arch", "ampere") == []
    assert notes("--budget", "40GiB") == []


def test_gpu_arch_refused_by_a_layout_that_does_not_read_it_names_both_engines(capsys):
    # plan --strategy flat --gpu-arch ampere was refused with "use --strategy sglang" alone,
    # while vLLM reads an ampere too (on an Ampere it refuses DeepSeek-V3.2: no sparse MLA
    # backend on SM 8.x): each architecture names both engines, which read any of them
    v32 = ["--preset", "DeepSeek-V3.2", "--budget", "40GiB"]
    for arch in ("ampere", "ada", "hopper", "blackwell"):
        assert refused(["plan", "--strategy", "flat", *v32, "--gpu-arch", arch], capsys) == (
            f"python -m flatkv: error: --gpu-arch {arch} is not read by --strategy flat: use "
            "--strategy vllm or --strategy sglang (layouts that read it), or compare, which "
            "shows every layout\n")
    # both suggestions are taken: vLLM refuses the Ampere, SGLang plans it
    code, _, err = run(["plan", "--strategy", "vllm", *v32, "--gpu-arch", "ampere"], capsys)
    assert code == 2 and "SM 8.0" in err
    code, _, _ = run(["plan", "--strategy", "sglang", *v32, "--gpu-arch", "ampere"], capsys)
    assert code == 0
    # a planner-only plan and one counting requests name both too
    assert refused(["plan", *v32, "--gpu-arch", "ampere"], capsys) == (
        "python -m flatkv: error: --gpu-arch ampere acts on a layout's figures, which the "
        "planner alone does not count: add --strategy vllm or --strategy sglang (layouts that "
        "read it), or use compare\n")
    # an option read by one layout still names the first alone
    assert refused(["plan", "--strategy", "flat", *v32, "--swa-full-tokens-ratio", "0.5"],
                   capsys).endswith("use --strategy sglang (a layout that reads it), or "
                                    "compare, which shows every layout\n")


def test_every_architecture_told_that_moves_no_figure_says_so_once(capsys):
    # --gpu-arch blackwell on Qwen3-Next noted that it changes no figure, while ampere, ada
    # and hopper said nothing though they move none either: one rule now
    # (strategy_notes.arch_reader against a Hopper, the GPU taken where none is told)
    qwen = ["--preset", "Qwen3-Next-80B-A3B", "--budget", "40GiB"]
    both = ("vLLM and SGLang lay this model out on an SM {} GPU as on a Hopper, the GPU the "
            "figures take where none is said")
    whys = {"ampere": both.format("8.0"), "ada": both.format("8.9"),
            "hopper": "the figures take a Hopper where no GPU is said",
            "blackwell": "SGLang stores this model's cache on a Blackwell GPU as on a Hopper; "}
    for arch, why in whys.items():
        code, _, err = run(["compare", *qwen, "--gpu-arch", arch], capsys)
        idle = [line for line in err.splitlines() if "changes no figure" in line]
        assert code == 0 and len(idle) == 1 and idle[0].startswith(
            f"python -m flatkv: note: --gpu-arch {arch} changes no figure here: {why}"), arch
    code, _, err = run(["plan", "--strategy", "vllm", *qwen, "--gpu-arch", "ampere"], capsys)
    assert code == 0 and ("python -m flatkv: note: --gpu-arch ampere changes no figure here: "
                          "vLLM lays this model out on an SM 8.0 GPU as on a Hopper") in err
    # where it moves one, nothing: vLLM refuses DeepSeek-V3.2 on SM 8.x, SGLang stores it in
    # 708 B a token a layer on a Blackwell; a preset's architecture is not told
    v32 = ["--preset", "DeepSeek-V3.2", "--budget", "40GiB"]
    for arch in ("ampere", "ada", "blackwell"):
        code, _, err = run(["compare", *v32, "--gpu-arch", arch], capsys)
        assert code == 0 and "changes no figure" not in err, arch
    code, _, err = run(["compare", "--preset", "Qwen3-Next-80B-A3B", "--gpu-memory",
                        "A100 80GB"], capsys)
    assert code == 0 and "changes no figure" not in err


def test_an_architecture_that_only_changes_a_refusal_is_not_said_to_change_no_figure(capsys):
    # DeepSeek-V3.2 at a 1M context in 40 GiB: on a Hopper vLLM refuses it too (one request
    # of 1,048,576 tokens needs more than the budget), so every figure was None both ways and
    # --gpu-arch ampere was noted as changing none ('vLLM and SGLang lay this model out on an
    # SM 8.0 GPU as on a Hopper') beside vLLM's refusal 'on SM 8.0 (A100) it has no sparse
    # MLA backend': the refusal shown in the figures' place moves with the architecture
    code, out, err = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                          "--context", "1M", "--gpu-arch", "ampere"], capsys)
    assert code == 0 and "vllm refuses to start: on SM 8.0 (A100)" in out
    assert "changes no figure" not in err
    code, out, _ = run(["compare", "--preset", "DeepSeek-V3.2", "--budget", "40GiB",
                        "--context", "1M"], capsys)
    assert code == 0 and "vllm refuses to start: one request of 1,048,576 tokens" in out


def test_an_architecture_is_not_said_to_change_nothing_where_vllm_keeps_a_checkpoint_by_it(
        capsys):
    # Qwen3-Next in mamba cache mode align: vLLM 0.34 keeps its GDN layers' prefill checkpoint
    # block where FlashInfer runs their prefill (a Hopper: the checkpoint note names it), not
    # on SM 8.0; the figures take --prefill-checkpoint-blocks as told, so none moves, but the
    # note said 'vLLM lays this model out on an SM 8.0 GPU as on a Hopper' (and beside a
    # Hopper told, that it changes nothing, above the note that reads it)
    qwen = ["plan", "--strategy", "vllm", "--preset", "Qwen3-Next-80B-A3B", "--budget",
            "40GiB", "--mamba-cache-mode", "align"]
    code, _, err = run([*qwen, "--gpu-arch", "hopper"], capsys)
    assert code == 0 and "changes no figure" not in err
    assert "keeps a prefill checkpoint page more for this model's GDN layers on the Hopper" in err
    code, _, err = run([*qwen, "--gpu-arch", "ampere"], capsys)
    assert code == 0 and "changes no figure" not in err
    assert "prefill checkpoint page more" not in err  # none kept on SM 8.0
    # mode none's figures keep no checkpoint block: the note stays, and says that align,
    # vLLM 0.34's own, reads the GPU (strategy_notes.arch_reader, the rule of the log's offer
    # too: it said the GPU moved nothing, and the offer off an H100 in mode none dropped it)
    for arch, why in (("ampere", "vLLM lays this model out on an SM 8.0 GPU as on a Hopper, the "
                                 "GPU the figures take where none is said"),
                      ("hopper", "the figures take a Hopper where no GPU is said")):
        code, _, err = run([*qwen[:-2], "--gpu-arch", arch], capsys)
        assert code == 0 and [line for line in err.splitlines() if "changes no figure" in line
                              ] == [f"python -m flatkv: note: --gpu-arch {arch} changes no "
                                    f"figure here: {why}; in mamba cache mode align, vLLM "
                                    "0.34's own for a hybrid, the GPU decides whether vLLM "
                                    "keeps a prefill checkpoint block for this model (not "
                                    "known where no GPU is said)"]
    # a model whose checkpoint block no GPU moves (Llama: none) keeps the words alone
    code, _, err = run(["plan", "--strategy", "vllm", "--preset", "Llama-3.1-8B", "--budget",
                        "40GiB", "--gpu-arch", "ampere"], capsys)
    assert code == 0 and err.splitlines()[-1] == (
        "python -m flatkv: note: --gpu-arch ampere changes no figure here: vLLM lays this model "
        "out on an SM 8.0 GPU as on a Hopper, the GPU the figures take where none is said")


def test_checkpoint_blocks_told_to_a_class_vllm_keeps_none_are_in_no_log_row_or_heading(capsys):
    # Jamba-1.5-Mini in align told 1 prefill checkpoint block (40 GiB, 262,144 tokens): vLLM's
    # 32,768 x 262,144 // (7 x 3 + 3,277) = 2,604,589 is no release's log (MambaMixer keeps
    # none: strategy_notes.unlogged_why, the rule of Compare's "Not in any vLLM log"), so
    # compare's engine log cell is none with a line saying why, and plan's row and both start-up
    # log headings say so (they read 2,604,589 and a current release's words); told 0, the
    # figure a log prints, 32,768 x 262,144 // (14 + 3,277) = 2,610,129, stays
    assert 32_768 * 262_144 // (7 * 3 + 3_277) == 2_604_589
    assert 32_768 * 262_144 // (7 * 2 + 3_277) == 2_610_129
    why = ("these figures count 1 prefill checkpoint block a request in align and no vLLM "
           "release up to 0.34 keeps them for JambaForCausalLM")
    jamba = ["--preset", "Jamba-1.5-Mini", "--budget", "40GiB", "--context", "262144",
             "--mamba-cache-mode", "align"]
    code, out, _ = run(["compare", *jamba, "--prefill-checkpoint-blocks", "1"], capsys)
    (row,) = [line.split() for line in out.splitlines() if line.startswith("engine log")]
    assert code == 0 and row[5] == "none" and "2,604,589" not in row  # flat, per-comp., vllm
    lines = out.splitlines()
    assert (f"vllm: no engine log: its 2,604,589 tokens are in no vLLM log, as {why} "
            "(--prefill-checkpoint-blocks 0 gives a log's figure)") in lines
    heading = (f"vLLM's start-up log at these settings (no release's words: {why}; mamba cache "
               "mode align):")
    assert heading in lines
    code, out, _ = run(["plan", "--strategy", "vllm", *jamba, "--prefill-checkpoint-blocks",
                        "1"], capsys)
    assert code == 0 and f"  engine log      2,604,589 tokens (in no vLLM log: {why})" in (
        out.splitlines())
    assert heading in out.splitlines()
    code, out, _ = run(["compare", *jamba], capsys)
    (row,) = [line.split() for line in out.splitlines() if line.startswith("engine log")]
    assert code == 0 and row[5] == "2,610,129"
    assert ("vLLM's start-up log at these settings (vLLM 0.34's words, a current release; "
            "mamba cache mode align):") in out.splitlines()


def test_required_arguments_left_out_are_each_required():
    # argparse lists every required argument left out: all of them are required, so the line
    # says "and" (it said "--a or --b is required: give it", as if one would do)
    from flatkv.cli import _one_line

    assert _one_line("the following arguments are required: --a, --b") == (
        "--a and --b are required: give them")
    assert _one_line("the following arguments are required: --a, --b, --c") == (
        "--a, --b and --c are required: give them")
    assert _one_line("the following arguments are required: --a") == "--a is required: give it"
    assert _one_line("one of the arguments --a --b is required") == (
        "--a or --b is required: give one of them")


@pytest.mark.parametrize(("argv", "flag"), [
    (["plan", *QWEN35, "--budget", "1GB", "--strategy=--"], "--strategy"),
    (["plan", "--preset=--", "--budget", "1GB"], "--preset"),
    (["compare", "--preset", "Llama-3.1-8B", "--budget", "1GB", "--tp=--"], "--tp"),
    (["model", "--preset", "Llama-3.1-8B", "--name=--"], "--name"),
    (["model", "--hf-config=--"], "--hf-config"),
])
def test_a_flag_given_dashes_for_its_value_is_refused(argv, flag, capsys):
    # (fuzz) argparse (3.11) drops the "--" of --flag=-- and hands the flag [] unchecked:
    # --strategy=-- planned the default layout with exit 0, --preset=-- was "unknown preset
    # '[]'", --tp=-- "must be a whole number, got [] (list)", --name=-- and --hf-config=-- a
    # traceback (AttributeError: 'list' object has no attribute 'strip')
    assert refused(argv, capsys) == (
        f"python -m flatkv: error: {flag} -- is not a value: '--' ends the options; give {flag} "
        f"a value, e.g. {flag}=VALUE\n")


def test_a_lone_double_dash_is_refused_with_the_pointer(capsys):
    # no command takes positionals: argparse said "unrecognized arguments: --", no fix
    assert refused(["model", "--preset", "Llama-3.1-8B", "--"], capsys) == (
        "python -m flatkv: error: unrecognized argument --: python -m flatkv model --help lists "
        "the options\n")


# compare's options that take a value, but the paths (a file, a Hugging Face id fetched online)
_COMPARE = next(a for a in build_parser()._actions if a.dest == "command").choices["compare"]
_VALUE_FLAGS = sorted(a.option_strings[0] for a in _COMPARE._actions if a.option_strings
                      and a.nargs != 0 and a.option_strings[0] not in (
                          "-h", "--hf-config", "--model-file", "--check-log"))
# what fuzzing the flags turned up (--flag=-- among them) and text of any kind
_ODD_VALUES = st.sampled_from([
    "0", "-1", "-0", "1" + "0" * 30, "1e999", "nan", "inf", "", " ", "--", "=", "٣", "½",
    "40 GiB", "40GB", "-1GiB", "0.5", "1_000", "+5", "１２", "😀", "x" * 300, "None", "[]",
]) | st.text(max_size=12)


@settings(max_examples=40, deadline=None, derandomize=True,  # the same 40 in every run: a
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # red CI is a real one
@given(flag=st.sampled_from(_VALUE_FLAGS), value=_ODD_VALUES, glued=st.booleans())
@example(flag="--gpu-arch", value="--", glued=True)  # [] as a dict key: a TypeError
def test_any_value_of_any_flag_is_a_result_or_one_line(flag, value, glued, capsys):
    # the standard: a command's output (0), or one line naming the flag and the fix (2);
    # never a traceback (argparse's [] for --flag=-- reached .strip() in model_cli)
    base = ["compare", "--preset", "Llama-3.1-8B", "--budget", "1GiB"]
    argv = [*base, f"{flag}={value}"] if glued else [*base, flag, value]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1, (argv, err)
        assert err.startswith("python -m flatkv: error: "), (argv, err)


def test_a_size_under_one_byte_is_refused_as_typed(capsys):
    # (fuzz) 1e-10GB floors to 0 B, which compare refused as "--budget 0 must be positive" and
    # plan as "the budget of 0 B holds 0 blocks", naming a value no one typed
    for command in ("plan", "compare"):
        assert refused([command, "--preset", "Llama-3.1-8B", "--budget", "1e-10GB"], capsys) == (
            "python -m flatkv: error: --budget '1e-10GB' reads as 0 B, under one byte: give a "
            "size of 1 B or more, e.g. 80GB\n")
    # weights take 0 (none) as well
    assert refused(["compare", "--preset", "Llama-3.1-8B", "--gpu-memory", "H100 80GB",
                    "--weights", "1e-10GB"], capsys) == (
        "python -m flatkv: error: --weights '1e-10GB' reads as 0 B, under one byte: give 0 for "
        "none, or a size of 1 B or more, e.g. 80GB\n")


def test_weights_in_billions_of_parameters_get_the_apps_advice(capsys):
    # --weights 70B said "give 70GB or 70GiB" where the app's weights link says what 70 billion
    # parameters take in bf16 (2 B each): 140GB
    assert refused(["compare", "--preset", "Llama-3.1-8B", "--gpu-memory", "H100 80GB",
                    "--weights", "70B"], capsys) == (
        "python -m flatkv: error: --weights '70B' reads as 70 B (B is bytes, not billions): a "
        "model of 70 billion parameters takes 140GB in bf16: give 140GB\n")


@pytest.mark.parametrize(("argv", "flag"), [
    (["model", "--name", "--", "--preset", "Llama-3.1-8B"], "--name"),
    (["model", "--preset", "Llama-3.1-8B", "--name", "--"], "--name"),
    (["plan", "--preset", "Llama-3.1-8B", "--budget", "--", "--tp", "2"], "--budget"),
])
def test_a_flag_followed_by_a_lone_double_dash_is_said_to_get_no_value(argv, flag, capsys):
    # the "--" ended the options, so the flag had no value; argparse named the next flag instead
    # ("unrecognized argument --preset", "unrecognized argument --tp") or the "--" itself
    assert refused(argv, capsys) == (
        f"python -m flatkv: error: {flag} got no value: '--' ends the options; give {flag} a "
        f"value, e.g. {flag}=VALUE\n")


@pytest.mark.parametrize(("typed", "why"), [
    ("0", "'0' must be positive"), ("0GB", "'0GB' must be positive"),
    ("-1GB", "'-1GB' is negative")])
def test_a_budget_of_0_or_less_is_refused_with_a_fix_the_flag_takes(typed, why, capsys):
    # (review) compare said "--budget 0 must be positive: give 1 or more; the cache budget in
    # bytes" (0GB named as 0, and --budget 1 is refused as a unit left out), plan "the budget of
    # 0 B holds 0 blocks", and -1GB "give a size of 0 or more", which is refused in turn
    for command in ("plan", "compare"):
        assert refused([command, "--preset", "Llama-3.1-8B", f"--budget={typed}"], capsys) == (
            f"python -m flatkv: error: --budget {why}: give a size such as 80GB or 10GiB\n")
    code, _, _ = run(["plan", "--preset", "Llama-3.1-8B", "--budget=80GB"], capsys)
    assert code == 0  # the fix given runs


def test_a_bare_size_under_one_byte_gets_a_unit_fix_that_reads(capsys):
    # (review) --budget 1e-10 was told "give a unit, e.g. 1e-10GB", which is under one byte
    assert refused(["plan", "--preset", "Llama-3.1-8B", "--budget", "1e-10"], capsys) == (
        "python -m flatkv: error: --budget '1e-10' reads as 0 B: give a unit, e.g. 80GB or "
        "44.59GiB\n")
    assert refused(["plan", "--preset", "Llama-3.1-8B", "--budget", "0.5"], capsys) == (
        "python -m flatkv: error: --budget '0.5' reads as 0 B: give a unit, e.g. 0.5GB or "
        "0.5GiB\n")


@pytest.mark.parametrize(("typed", "bytes_"), [("2TiB", "2,199,023,255,552"),
                                                ("2e12", "2,000,000,000,000")])
def test_a_row_past_its_bound_is_named_as_typed(typed, bytes_, capsys):
    # (review) --kv-bytes-per-slot 2TiB was "--kv-bytes-per-slot 2,199,023,255,552 is too large
    # to be real", a figure no one typed; the bound (1 TiB) itself plans
    assert refused(["plan", "--layers", "full*4", "--kv-bytes-per-slot", typed, "--budget",
                    "1GB"], capsys) == (
        f"python -m flatkv: error: --kv-bytes-per-slot '{typed}' ({bytes_} B) is too large to be "
        "real: give 1,099,511,627,776 or less\n")
    code, _, _ = run(["plan", "--layers", "full*4", "--kv-bytes-per-slot", "1099511627776",
                      "--budget", "9000TB"], capsys)
    assert code == 0


def test_a_model_file_past_the_bound_is_not_given_a_length_it_lacks(tmp_path, capsys):
    # (review) a file is read to one past MAX_JSON_BYTES: one of 8,400,012 characters (and
    # /dev/zero) was said to be "8,388,609 characters", a length it does not have
    big = tmp_path / "big.json"
    big.write_text('{"a": "' + "x" * 8_400_004 + '"}')
    for flag in ("--model-file", "--hf-config"):
        assert refused(["compare", flag, str(big), "--budget", "1GB"], capsys) == (
            f"python -m flatkv: error: '{big}' is over 8,388,608 characters, too large for a "
            "model file: give one of 8,388,608 characters or fewer\n")


def test_a_flag_taking_no_value_given_dashes_is_told_it_takes_none(capsys):
    # (review) --json=-- was told "give --json a value, e.g. --json=VALUE", which --json=x
    # then refused as "takes no value"
    assert refused(["compare", "--preset", "Llama-3.1-8B", "--budget", "1GB", "--json=--"],
                   capsys) == ("python -m flatkv: error: --json takes no value (got '--'): give "
                               "the flag alone, or leave it out\n")
    # a misspelt command is said as such, not its flag's '--'
    assert refused(["bogus", "--x=--"], capsys).startswith(
        "python -m flatkv: error: 'bogus' is not a command: give one of ")


def test_a_raw_export_keeps_its_gdn_key_head_dims_so_compare_tells_its_checkpoint_page(
        tmp_path, capsys):
    # a Kimi-K3 shape (Kimi-Linear's bytes under KimiK3ForConditionalGeneration) on an H100
    # and Qwen3-Next on a B200, exported as raw bytes (the Model page's JSON): vLLM 0.34 keeps
    # a prefill checkpoint block for them there (FlashKDA, FlashInfer: key heads of 128), and
    # the export's gdn_key_head_dims [128] says so to compare in align, as the model does;
    # the same export without the field (dims not known, as every raw export read before)
    # keeps 0 blocks there and says nothing
    from dataclasses import replace

    from flatkv.app_model import profile_for
    from flatkv.profile import profile_to_dict

    k3 = replace(profile_for("Kimi-Linear-48B-A3B", None, 1),
                 architectures=("KimiK3ForConditionalGeneration",))
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 1)
    for profile, gpu, since, kind, kernel in (
            (k3, "H100 80GB", "0.31", "KDA", "FlashKDA"),
            (qwen, "B200 192GB", "0.33", "GDN", "FlashInfer")):
        said = (f"Since {since} vLLM keeps a prefill checkpoint page more for this model's "
                f"{kind} layers on the {gpu}, whose prefill runs on {kernel} there (3 a "
                "request): give --prefill-checkpoint-blocks 1 to match a later log.")
        data = profile_to_dict(profile)
        assert data["gdn_key_head_dims"] == [128]
        bare = {k: v for k, v in data.items() if k != "gdn_key_head_dims"}
        errs = []
        for name, body in (("dims.json", data), ("bare.json", bare)):
            (tmp_path / name).write_text(json.dumps(body))
            code, _out, err = run(["compare", "--model-file", str(tmp_path / name),
                                   "--gpu-memory", gpu, "--mamba-cache-mode", "align",
                                   "--json"], capsys)
            assert code == 0
            errs.append(said in err)
        assert errs == [True, False], gpu
    (tmp_path / "bad.json").write_text(json.dumps({**data, "gdn_key_head_dims": [0]}))
    assert refused(["compare", "--model-file", str(tmp_path / "bad.json"), "--budget", "1GiB"],
                   capsys).strip() == ("python -m flatkv: error: gdn_key_head_dims 0 must be "
                                       "positive: give 1 or more; a GDN layer's key head dim")
