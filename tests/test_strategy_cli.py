"""The strategy command line, wired the way flatkv/cli.py wires it, with stand-in profile
arguments (cli.py's real ones replace these when the branches meet)."""

from __future__ import annotations

import argparse
import io
import json

import pytest
from strategy_profiles import ANCHOR_BUDGET

from flatkv import strategy_cli
from flatkv.profile import CacheProfile
from flatkv.strategies import STRATEGIES


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """Stand-in for cli.py: --layers 'linear_attention*3,full_attention' (repeat with --repeat)."""
    parser.add_argument("--layers", required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--kv-bytes-per-slot", type=int, default=0)
    parser.add_argument("--state", default="")
    parser.add_argument("--sliding-window", type=int, default=None)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--alignment", type=int, default=None)
    parser.add_argument("--budget", required=True)
    parser.add_argument("--json", action="store_true")


def profile_from_args(args: argparse.Namespace) -> CacheProfile:
    layers: list[str] = []
    for part in args.layers.split(","):
        label, _, times = part.partition("*")
        layers += [label] * int(times or 1)
    state = {}
    for item in filter(None, args.state.split(",")):
        key, _, value = item.partition("=")
        state[key] = int(value)
    return CacheProfile(tuple(layers) * args.repeat, args.kv_bytes_per_slot, state,
                        args.sliding_window, "test model")


def main(argv: list[str], stdout: io.StringIO, stderr: io.StringIO) -> int:
    """What cli.py does: plan (with --strategy) and compare."""
    parser = argparse.ArgumentParser(prog="flatkv")
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan")
    add_profile_arguments(plan)
    strategy_cli.add_strategy_arguments(plan)
    strategy_cli.register(sub, add_profile_arguments, profile_from_args)
    args = parser.parse_args(argv)
    if args.command == "plan":
        assert args.strategy, "this stand-in only runs plan --strategy"
        return strategy_cli.plan_strategy_command(args, profile_from_args, stdout=stdout,
                                                  stderr=stderr)
    return strategy_cli.compare_command(args, profile_from_args, stdout=stdout, stderr=stderr)


QWEN_ARGS = [
    "--layers", "linear_attention*3,full_attention", "--repeat", "12",
    "--kv-bytes-per-slot", "1024", "--state", "conv=24576,ssm=524288",
]


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


def test_parse_size_is_exact():
    assert strategy_cli.parse_size("44.59GiB") == 4459 * 2**30 // 100 == ANCHOR_BUDGET
    assert strategy_cli.parse_size("48GB") == 48 * 10**9
    assert strategy_cli.parse_size("512 MiB") == 512 * 2**20
    assert strategy_cli.parse_size("1,000") == 1000
    for bad in ("lots", "-3GiB", "0", "4 parsecs"):
        with pytest.raises(ValueError, match="--budget"):
            strategy_cli.parse_size(bad)


def test_parse_tokens():
    assert strategy_cli.parse_tokens("262144") == strategy_cli.parse_tokens("256k") == 262_144
    with pytest.raises(ValueError, match="--context"):
        strategy_cli.parse_tokens("long")


def test_plan_vllm_json_anchor():
    code, out, err = run(["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB",
                          "--context", "262144", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["strategy"] == "vllm"
    assert (d["block_size"], d["num_blocks"], d["capacity_tokens"]) == (544, 7_162, 973_760)
    assert round(d["state_padding_fraction"], 4) == 0.0149
    assert round(d["max_concurrency"], 2) == 14.77
    assert d["block_bytes"] == 12 * 544 * 1024


def test_plan_table_shows_the_math():
    code, out, _ = run(["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB",
                        "--context", "256k"])
    assert code == 0
    assert "7,162" in out and "973,760" in out and "14.77x" in out
    assert "47,878,147,932 // 557,056 // 12 = 7,162" in out
    assert "total" in out


def test_compare_table_and_json():
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--context", "262144"])
    assert code == 0
    header = out.splitlines()[1].split()
    assert header == list(STRATEGIES)
    assert "aliased does not apply" in out
    code, out, _ = run(["compare", *QWEN_ARGS, "--budget", "44.59GiB", "--json"])
    assert code == 0
    results = json.loads(out)
    assert [r["strategy"] for r in results] == list(STRATEGIES)
    assert all(r["max_concurrency"] is None for r in results)


def test_options_reach_the_strategies():
    code, out, _ = run(["plan", *QWEN_ARGS, "--strategy", "vllm", "--budget", "44.59GiB",
                        "--context", "262144", "--mamba-cache-mode", "align",
                        "--kernel-block-size", "64", "--json"])
    assert code == 0
    d = json.loads(out)
    assert d["block_size"] == 64 * 9  # 64 x cdiv(548,864, 64 x 1,024)
    assert d["max_concurrency_exact"][1] == -(-262_144 // 576) + 3 * 2
    code, out, _ = run(["plan", *QWEN_ARGS, "--strategy", "sglang", "--budget", "44.59GiB",
                        "--mamba-full-memory-ratio", "0.5", "--json"])
    assert json.loads(out)["state_slots"] == ANCHOR_BUDGET // 3 // (36 * 548_864)


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--budget", "lots"], "--budget"),
        (["--budget", "1GiB", "--context", "0"], "--context"),
        (["--budget", "1GiB", "--mamba-full-memory-ratio", "x"], "mamba_full_memory_ratio"),
    ],
)
def test_bad_input_exits_2_with_one_line(extra, needle):
    code, out, err = run(["compare", *QWEN_ARGS, *extra])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_register_sets_func(capsys):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    strategy_cli.register(sub, add_profile_arguments, profile_from_args)
    args = parser.parse_args(["compare", "--layers", "full_attention*32",
                              "--kv-bytes-per-slot", "4096", "--budget", "8GiB", "--json"])
    assert args.func(args) == 0
    flat = json.loads(capsys.readouterr().out)[0]
    assert flat["num_blocks"] == 8 * 2**30 // (32 * 16 * 4096)
