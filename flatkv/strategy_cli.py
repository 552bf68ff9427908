"""Command-line face of the strategies: ``plan --strategy NAME`` and ``compare``.

``flatkv/cli.py`` owns the program and the profile arguments (``--layers``, ``--kv-bytes-per-slot``,
``--state``, ``--block-size``, ``--alignment``, ``--budget``, ``--preset``); this module adds the
strategy arguments, turns them into ``StrategyOptions``, formats results, and registers the
``compare`` command. It receives the profile helpers as callables, so it does not import cli.py.

Wiring in cli.py::

    from flatkv import strategy_cli
    plan = subparsers.add_parser("plan"); add_profile_arguments(plan)
    strategy_cli.add_strategy_arguments(plan)           # --strategy, --context, ...
    strategy_cli.register(subparsers, add_profile_arguments, profile_from_args)
    ...
    args = parser.parse_args(argv)
    if args.command == "plan" and args.strategy:           # our part of plan
        return strategy_cli.plan_strategy_command(args, profile_from_args)
    return args.func(args)                                 # compare sets func
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import TextIO

from flatkv.profile import CacheProfile
from flatkv.strategies import CATEGORIES, STRATEGIES, StrategyOptions, StrategyResult, compare
from flatkv.strategies import run_strategy as _run_strategy
from flatkv.strategies.base import MAMBA_CACHE_MODES

_SIZE_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE_RE = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int, field: str = "--budget") -> int:
    """Bytes from ``"44.59GiB"``, ``"48GB"``, ``"512 MiB"`` or a plain integer: exact decimal
    arithmetic, rounded down (44.59 GiB is floor(44.59 x 2**30) = 47,878,418,923 bytes)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE_RE.match(str(text))
        unit = match.group(2).lower() if match else ""
        if not match or unit not in _SIZE_UNITS:
            raise ValueError(
                f"{field} is {text!r}: give bytes or a size such as 44.59GiB, 48GB, 512MiB"
            )
        try:
            number = Decimal(match.group(1).replace(",", "").replace("_", ""))
        except InvalidOperation:
            raise ValueError(f"{field} is {text!r}: the number is not readable") from None
        value = int(number * _SIZE_UNITS[unit])  # int() of a positive Decimal rounds down
    if value < 1:
        raise ValueError(f"{field} is {text!r}: give a positive size")
    return value


def parse_tokens(text: str | int, field: str = "--context") -> int:
    """Tokens from ``"262144"``, ``"262,144"`` or ``"256k"`` (k = 1,024 tokens, as context
    lengths are counted: 128k is 131,072)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        raw = str(text).strip().lower().replace(",", "").replace("_", "")
        scale = 1
        if raw.endswith("k"):
            raw, scale = raw[:-1], 1024
        elif raw.endswith("m"):
            raw, scale = raw[:-1], 1024 * 1024
        if not raw.isdigit():
            raise ValueError(f"{field} is {text!r}: give whole tokens such as 262144 or 256k")
        value = int(raw) * scale
    if value < 1:
        raise ValueError(f"{field} is {text!r}: give a positive number of tokens")
    return value


def _arg(parser: argparse.ArgumentParser, *names: str, **kwargs) -> None:
    """Add an argument unless the parser (cli.py's profile arguments) already has it."""
    if any(name in parser._option_string_actions for name in names):
        return
    parser.add_argument(*names, **kwargs)


def add_strategy_arguments(
    parser: argparse.ArgumentParser, *, include_strategy: bool = True
) -> None:
    """--strategy (unless ``include_strategy`` is False), --context and the strategy options.
    Options cli.py already defines (--block-size, --alignment, --json) are left to it."""
    defaults = StrategyOptions()
    if include_strategy:
        _arg(parser, "--strategy", choices=STRATEGIES, default=None,
             help="lay the cache out as this engine / layout would (default: the flat plan)")
    _arg(parser, "--context", default=None, metavar="L",
         help="context length in tokens (262144 or 256k) for max concurrency and the workload")
    _arg(parser, "--kernel-block-size", type=int, default=defaults.kernel_block_size,
         metavar="A", help="vllm: the attention backend's kernel block size A (default 16)")
    _arg(parser, "--mamba-cache-mode", choices=MAMBA_CACHE_MODES,
         default=defaults.mamba_cache_mode,
         help="vllm: state pages per request, none = 1, align = 2 (default none)")
    _arg(parser, "--mamba-full-memory-ratio", default="0.9", metavar="R",
         help="sglang: state pool gets budget x R / (1 + R) (default 0.9)")
    _arg(parser, "--swa-full-tokens-ratio", default="0.8", metavar="R",
         help="sglang: sliding-window pool tokens relative to the full pool (default 0.8)")
    _arg(parser, "--sglang-slots-per-request", type=int,
         default=defaults.sglang_slots_per_request, metavar="S",
         help="sglang: state slots one running request holds (default 3)")
    _arg(parser, "--sglang-page-size", type=int, default=defaults.sglang_page_size,
         help="sglang: tokens per KV page (default 1)")
    _arg(parser, "--max-batched-tokens", type=int, default=defaults.max_batched_tokens,
         help="tokens scheduled per step; sizes sliding-window pages (default 8192)")
    _arg(parser, "--lcm-padding-bound", default="0.25", metavar="F",
         help="lcm: largest padding accepted for any group (default 0.25)")
    _arg(parser, "--lcm-alignment-bytes", type=int, default=defaults.lcm_alignment_bytes,
         help="lcm: parent block bytes are a multiple of this (default 256)")
    _arg(parser, "--reserved-bytes-per-block", type=int, default=0,
         help="per-component: co-resident bytes per block id outside the plan (default 0)")
    _arg(parser, "--margin", type=int, default=0,
         help="workload: safety pages per group (default 0)")


def options_from_args(args: argparse.Namespace) -> StrategyOptions:
    """StrategyOptions from parsed arguments (missing ones take their defaults)."""
    defaults = StrategyOptions()
    names = (
        "block_size", "alignment", "kernel_block_size", "mamba_cache_mode",
        "mamba_full_memory_ratio", "swa_full_tokens_ratio", "sglang_slots_per_request",
        "sglang_page_size", "max_batched_tokens", "lcm_padding_bound", "lcm_alignment_bytes",
        "reserved_bytes_per_block", "margin",
    )
    values = {}
    for name in names:
        value = getattr(args, name, None)
        values[name] = getattr(defaults, name) if value is None and name != "alignment" else value
    return StrategyOptions(**values)


def budget_from_args(args: argparse.Namespace) -> int:
    """Budget bytes from ``args.budget`` (an int, or a size string cli.py left unparsed)."""
    budget = getattr(args, "budget", None)
    if budget is None:
        raise ValueError("--budget is missing: give the cache budget, e.g. --budget 44.59GiB")
    return parse_size(budget)


def context_from_args(args: argparse.Namespace) -> int | None:
    context = getattr(args, "context", None)
    return None if context is None else parse_tokens(context)


# --------------------------------------------------------------------------------------------
# Formatting.


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.2f} GiB"


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _concurrency_text(result: StrategyResult) -> str:
    if result.max_concurrency is None:
        return "-"
    return f"{result.max_concurrency:,.2f}x"


def format_result_table(result: StrategyResult) -> str:
    """One result as aligned text: figures, breakdown (exact bytes and share), the math."""
    head = f"{result.strategy}: {result.profile_name or 'profile'}, "
    head += f"budget {result.budget_bytes:,} B ({_gib(result.budget_bytes)})"
    if result.context_tokens is not None:
        head += f", context {result.context_tokens:,} tokens"
    lines = [head]
    if not result.applies:
        lines.append(f"  does not apply: {result.reason}")
        return "\n".join(lines)
    rows = [
        ("block size", f"{_cell(result.block_size)} tokens" if result.block_size else "-"),
        ("why", result.why_block_size),
        ("block bytes", f"{_cell(result.block_bytes)} B per block id"),
        ("blocks", _cell(result.num_blocks)),
        ("capacity", f"{_cell(result.capacity_tokens)} tokens"
         if result.capacity_tokens is not None else "- (no token history)"),
    ]
    if result.context_tokens is not None:
        rows.append((
            "max concurrency",
            f"{_concurrency_text(result)} at {result.context_tokens:,} tokens "
            f"({result.concurrency_numerator:,} / {result.concurrency_denominator:,})",
        ))
    width = max(len(k) for k, _ in rows)
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]
    lines.append("  breakdown")
    num_width = max(len(f"{b:,}") for _, b in result.breakdown)
    cat_width = max(len(c) for c in CATEGORIES)
    for category, nbytes in (*result.breakdown, ("total", result.budget_bytes)):
        share = 100 * nbytes / result.budget_bytes
        lines.append(f"    {category.ljust(cat_width)}  {nbytes:>{num_width},} B  {share:6.2f}%")
    lines.append("  math")
    lines += [f"    {f}" for f in result.formulas]
    return "\n".join(lines)


def format_comparison_table(results: Sequence[StrategyResult]) -> str:
    """Strategies side by side: one column each, figures then the breakdown in GiB; strategies
    that do not apply are listed with their reason under the table."""
    if not results:
        return "(no strategies)"
    header = ["", *(r.strategy for r in results)]
    table: list[list[str]] = [header]

    def row(label: str, values: Sequence[str]) -> None:
        table.append([label, *values])

    def each(fn: Callable[[StrategyResult], str]) -> list[str]:
        return [fn(r) if r.applies else "n/a" for r in results]

    row("block size (tokens)", each(lambda r: _cell(r.block_size)))
    row("block bytes", each(lambda r: _cell(r.block_bytes)))
    row("blocks", each(lambda r: _cell(r.num_blocks)))
    row("capacity (tokens)", each(lambda r: _cell(r.capacity_tokens)))
    if any(r.context_tokens is not None for r in results):
        row("max concurrency", each(_concurrency_text))
    for category in CATEGORIES:
        row(category, each(lambda r, c=category: _gib(r.bytes_of(c))))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = []
    for i, line in enumerate(table):
        cells = [line[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    first = results[0]
    title = f"{first.profile_name or 'profile'}: budget {first.budget_bytes:,} B"
    if first.context_tokens is not None:
        title += f", context {first.context_tokens:,} tokens"
    notes = [f"{r.strategy} does not apply: {r.reason}" for r in results if not r.applies]
    return "\n".join([title, *lines, *notes])


# --------------------------------------------------------------------------------------------
# Commands.


def _fail(err: Exception, stderr: TextIO) -> int:
    print(f"error: {err}", file=stderr)
    return 2


def _inputs(args, profile_from_args):
    profile = profile_from_args(args) if callable(profile_from_args) else profile_from_args
    if not isinstance(profile, CacheProfile):
        raise ValueError("the profile arguments did not give a CacheProfile")
    return profile, budget_from_args(args), context_from_args(args), options_from_args(args)


def plan_strategy_command(
    args: argparse.Namespace,
    profile_from_args: Callable[[argparse.Namespace], CacheProfile] | CacheProfile,
    *, stdout: TextIO | None = None, stderr: TextIO | None = None,
) -> int:
    """``plan --strategy NAME``: print one result (table, or JSON with --json). Exit 0, or 2
    with one line on stderr for bad input."""
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        profile, budget, context, options = _inputs(args, profile_from_args)
        result = _run_strategy(args.strategy, profile, budget_bytes=budget,
                               context_tokens=context, options=options)
    except ValueError as err:
        return _fail(err, stderr)
    if getattr(args, "json", False):
        print(json.dumps(result.to_dict(), indent=2), file=stdout)
    else:
        print(format_result_table(result), file=stdout)
    return 0


def compare_command(
    args: argparse.Namespace,
    profile_from_args: Callable[[argparse.Namespace], CacheProfile] | CacheProfile,
    *, stdout: TextIO | None = None, stderr: TextIO | None = None,
) -> int:
    """``compare``: every strategy side by side (table, or a JSON list with --json)."""
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        profile, budget, context, options = _inputs(args, profile_from_args)
        results = compare(profile, budget_bytes=budget, context_tokens=context, options=options)
    except ValueError as err:
        return _fail(err, stderr)
    if getattr(args, "json", False):
        print(json.dumps([r.to_dict() for r in results], indent=2), file=stdout)
    else:
        print(format_comparison_table(results), file=stdout)
    return 0


def register(
    subparsers: argparse._SubParsersAction,
    add_profile_arguments: Callable[[argparse.ArgumentParser], None],
    profile_from_args: Callable[[argparse.Namespace], CacheProfile],
) -> argparse.ArgumentParser:
    """Add the ``compare`` command; its ``func`` default runs it: ``args.func(args) -> int``."""
    parser = subparsers.add_parser(
        "compare",
        help="every engine layout side by side for one model and budget",
        description="Compare flat, per-component, vLLM, SGLang, aliased and two-level layouts.",
    )
    add_profile_arguments(parser)
    add_strategy_arguments(parser, include_strategy=False)
    _arg(parser, "--json", action="store_true", help="print a JSON list of results")
    parser.set_defaults(func=lambda args: compare_command(args, profile_from_args))
    return parser
