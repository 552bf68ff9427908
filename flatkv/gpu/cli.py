"""``python -m flatkv bench``: time a model's page movers on this machine.

``register(subparsers)`` adds the subcommand to the main parser (flatkv/cli.py). The model comes
from a CacheProfile; until the model layer provides ``--preset`` / ``--hf-config``, the raw
planner inputs below stand in (``add_raw_profile_arguments`` / ``raw_profile_from_args``):
pass the project's own pair to ``register`` to replace them.

Bad input exits with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from flatkv.plan import FULL_ATTENTION, LINEAR_ATTENTION, SLIDING_ATTENTION, plan_tensors
from flatkv.profile import CacheProfile

if TYPE_CHECKING:
    from flatkv.gpu.bench import BenchResult

AddProfileArguments = Callable[[argparse.ArgumentParser], None]
ProfileFromArgs = Callable[[argparse.Namespace], CacheProfile]

LAYER_LETTERS = {"F": FULL_ATTENTION, "S": SLIDING_ATTENTION, "L": LINEAR_ATTENTION}
DEFAULT_BUDGET_GIB = 64


# --------------------------------------------------------------------------------------------
# Stand-ins for the model layer's profile arguments (replace via register(...)).


def add_raw_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """The planner's raw inputs: layer pattern, KV bytes per slot, state tensors."""
    parser.add_argument(
        "--layers", required=True, metavar="PATTERN",
        help="cache layers as letters F (full), S (sliding), L (linear/state), with repeats: "
             "'LLLF*12' is 12 x (3 linear + 1 full); join terms with commas",
    )
    parser.add_argument("--kv-bytes-per-slot", type=int, default=0, metavar="BYTES",
                        help="bytes one token adds to one attention layer (K and V)")
    parser.add_argument("--state", default="", metavar="NAME=BYTES,...",
                        help="state tensors of one linear layer, e.g. conv=49152,ssm=2097152")


def parse_layers(pattern: str) -> tuple[str, ...]:
    """``'LLLF*12,F'`` -> layer labels; ValueError naming the bad term."""
    labels: list[str] = []
    for term in pattern.replace(" ", "").split(","):
        letters, _, times = term.partition("*")
        if not letters:
            raise ValueError(f"--layers term {term!r} is empty: write e.g. 'LLLF*12'")
        bad = sorted(set(letters) - set(LAYER_LETTERS))
        if bad:
            raise ValueError(
                f"--layers term {term!r} has unknown letter(s) {bad}: use F (full), "
                "S (sliding), L (linear)"
            )
        if times and (not times.isdigit() or int(times) < 1):
            raise ValueError(f"--layers term {term!r}: the repeat after '*' must be a positive "
                             "whole number")
        labels.extend(LAYER_LETTERS[c] for c in letters * (int(times) if times else 1))
    return tuple(labels)


def parse_state(text: str) -> dict[str, int]:
    """``'conv=49152,ssm=2097152'`` -> ``{'conv': 49152, 'ssm': 2097152}`` (order kept)."""
    out: dict[str, int] = {}
    for item in filter(None, text.replace(" ", "").split(",")):
        name, sep, value = item.partition("=")
        if not sep or not name or not value.isdigit():
            raise ValueError(f"--state item {item!r} must be NAME=BYTES, e.g. ssm=2097152")
        out[name] = int(value)
    return out


def raw_profile_from_args(args: argparse.Namespace) -> CacheProfile:
    return CacheProfile(
        layer_types=parse_layers(args.layers),
        kv_bytes_per_slot=args.kv_bytes_per_slot,
        state_const_bytes=parse_state(args.state),
        name=args.layers,
    )


# --------------------------------------------------------------------------------------------
# The subcommand.


def _add_if_missing(parser: argparse.ArgumentParser, flag: str, **kwargs: object) -> None:
    if flag not in parser._option_string_actions:  # the profile arguments may already have it
        parser.add_argument(flag, **kwargs)


def register(
    subparsers: argparse._SubParsersAction,
    *,
    add_profile_arguments: AddProfileArguments | None = None,
    profile_from_args: ProfileFromArgs | None = None,
) -> argparse.ArgumentParser:
    """Add ``bench`` to ``subparsers``; ``args.func(args)`` then runs it and returns the exit
    status. Without the two callables the raw planner inputs stand in for the model."""
    parser = subparsers.add_parser(
        "bench",
        help="time gather / scatter / host copies of a model's pages on this machine",
        description="Allocate a model's flat plan (capped) and time its page movers against a "
                    "plain copy of the same bytes measured in the same run.",
    )
    (add_profile_arguments or add_raw_profile_arguments)(parser)
    _add_if_missing(parser, "--block-size", type=int, default=64, metavar="P",
                    help="requested token slots per page (default 64)")
    _add_if_missing(parser, "--alignment", type=int, default=None, metavar="N",
                    help="multiple an inflated page size rounds up to (default: the block size)")
    _add_if_missing(parser, "--budget-gib", type=int, default=DEFAULT_BUDGET_GIB, metavar="GIB",
                    help=f"memory budget the plan is made for (default {DEFAULT_BUDGET_GIB} GiB); "
                         "the benchmark allocates at most --max-blocks of it")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    parser.add_argument("--max-blocks", type=int, default=None, metavar="N",
                        help="allocate at most N blocks (default: 512 MiB on the CPU, 8 GiB on "
                             "CUDA, less if free memory is short)")
    parser.add_argument("--pages-per-call", type=int, default=None, metavar="N",
                        help="pages each gather / scatter moves (default: 64 MiB on the CPU, "
                             "256 MiB on CUDA, at most half the pool)")
    parser.add_argument("--repeats", type=int, default=None, metavar="N",
                        help="timed rounds (default 7 on the CPU, 15 on CUDA)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=lambda args: run_bench_command(args, profile_from_args))
    return parser


def run_bench_command(args: argparse.Namespace,
                      profile_from_args: ProfileFromArgs | None = None) -> int:
    """Run the benchmark for parsed ``args``; print the result; return the exit status."""
    from flatkv.gpu.bench import DeviceBusy, run_benchmark

    try:
        profile = (profile_from_args or raw_profile_from_args)(args)
        if args.budget_gib is None or args.budget_gib < 1:
            raise ValueError(f"--budget-gib must be a positive whole number, got "
                             f"{args.budget_gib}")
        plan = plan_tensors(
            profile.components(),
            block_size=args.block_size,
            alignment=args.alignment if args.alignment is not None else args.block_size,
            budget_bytes=args.budget_gib << 30,
        )
        result = run_benchmark(
            plan,
            device=args.device,
            max_blocks=args.max_blocks,
            pages_per_call=args.pages_per_call,
            repeats=args.repeats,
        )
    except (ValueError, DeviceBusy) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print(format_result(result))
    return 0


def format_result(result: BenchResult) -> str:
    """The result as a short human-readable table."""
    a = result.allocation
    lines = [
        f"device  {result.device} ({result.device_name}), torch {result.torch_version}"
        + (f", triton {result.triton_version}" if result.triton_version else ""),
        f"plan    {a.planned_blocks} blocks x {a.page_bytes} B = {a.planned_bytes} B; allocated "
        f"{a.allocated_blocks} blocks = {a.allocated_bytes} B (limited by {a.cap_reason})",
        f"call    {result.pages_per_call} pages x {result.page_bytes} B = {result.call_bytes} B",
        "",
        f"{'operation':<12}{'impl':<8}{'GB/s':>10}  share",
    ]
    for f in result.figures:
        share = f"{f.share_of_baseline:6.1%} of {f.baseline}"
        if f.share_of_peak is not None:
            share += f", {f.share_of_peak:.1%} of nominal peak"
        lines.append(f"{f.operation:<12}{f.implementation:<8}{f.gbps:>10.2f}  {share}")
    lines += ["", result.counting]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (``python -m flatkv.gpu.cli bench ...``) until flatkv/cli.py
    registers the subcommand."""
    parser = argparse.ArgumentParser(prog="python -m flatkv")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
