"""``python -m flatkv``: the planner, the models and the comparisons on the command line.

Every command reads a model the same way (``add_profile_arguments`` / ``given_model``) and
prints a readable table, or JSON with ``--json``, with notes on the model and the context on
stderr (``CommandOutput``). Bad input exits with status 2 and one line.

This module is the parser, ``main`` and the commands' wiring (``plan``, ``compare``, ``bench``);
what they read and print lives beside it: ``given_cli`` (the model and the budget),
``plan_cli`` (plan's report), ``notes_cli`` (the notes on the options given), ``log_cli``
(``compare --check-log``), ``strategy_cli`` (the engine options, ``plan --strategy`` and
``compare``'s tables), ``model_cli`` (``model``, ``presets`` and the model options) and
``bench_cli`` (``bench``).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from flatkv import bench_cli, log_check, model_cli, strategy_cli
from flatkv.analysis import PLANNER_STRATEGY, analyze, plan_json
from flatkv.budget import (
    DEFAULT_GPU,
    DEFAULT_MEMORY_FRACTION,
    GPU_PRESETS,
    cache_budget,
    gpu_name,
)
from flatkv.engine_options import strategy_fields
from flatkv.given_cli import (
    GivenModel,
    UsageError,
    add_plan_arguments,
    add_profile_arguments,
    budget_notes,
    budget_source,
    explain_budget,
    given_model,
    positive_int,
    with_given_budget,
)
from flatkv.log_cli import checked_log, logged_run_notes, read_log_file
from flatkv.notes_cli import (
    checkpoint_notes,
    drafter_notes,
    gpu_named,
    idle_option_notes,
    idle_page_notes,
    option_not_read,
    sglang_chunk_notes,
    sglang_page_notes,
    vllm_blocks_read,
)
from flatkv.plan import PACKED_NEEDS_HISTORY, BudgetTooSmall
from flatkv.plan_cli import format_analysis, requests_at, requests_json, requests_text
from flatkv.profile import CacheProfile
from flatkv.strategies import STRATEGIES
from flatkv.strategies.base import StrategyOptions
from flatkv.strategy_notes import budget_too_small_text, layout_lines
from flatkv.units import quoted

PROG = "python -m flatkv"
# bench's default plan: the GPU lab's, the app's default GPU and memory fraction (no weights)
DEFAULT_BUDGET = cache_budget(GPU_PRESETS[DEFAULT_GPU], DEFAULT_MEMORY_FRACTION, 0, 1)


# The value argparse's own messages quote whole, as its repr ("invalid float value: 'xxx...'",
# "invalid choice: 'xxx...' (choose from ...)")
_ARGPARSE_VALUE = re.compile(r"^(.*?invalid (?:\w+ value|choice): )(.+?)( \(choose from .*)?$")


def _short_value(message: str) -> str:
    """``message`` with the value argparse quotes whole shortened as every other message
    quotes one (``units.quoted``: a 5,000-character value made a 5 KB line)."""
    match = _ARGPARSE_VALUE.match(message)
    if match is None or len(match[2]) <= 82:
        return message
    try:
        value = ast.literal_eval(match[2])
    except (ValueError, SyntaxError):
        return message
    return match[1] + quoted(str(value)) + (match[3] or "")


# argparse's prefix on its messages about one argument ("argument --budget/--b: ...",
# "argument command: ..."), the argument's names and the rest
_ARGUMENT_PREFIX = re.compile(r"^argument ((?:-[\w-]+/)*-?[\w-]+): (.*)$", re.DOTALL)
# argparse's words after it, each said in one line naming the flag, the value and the fix
_CHOICE = re.compile(r"^invalid choice: (.+?) \(choose from (.*)\)$", re.DOTALL)
_EXPLICIT_ON_FLAG = re.compile(r"^ignored explicit argument (.*)$")
_NOT_ALLOWED = re.compile(r"^not allowed with argument (.+)$")
_ONE_REQUIRED = re.compile(r"^one of the arguments (.+) is required$")
_REQUIRED = re.compile(r"^the following arguments are required: (.+)$")


def _choices_text(listed: str) -> str:
    """argparse's ``'none', 'align', 'all'`` as a fix reads it: ``none, align or all``."""
    names = [name.strip().strip("'") for name in listed.split(",")]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _one_line(message: str, commands: Sequence[str] = ()) -> str:
    """argparse's ``message`` as every other refusal reads, one line naming the flag, the
    value and the fix: a type function's own words after the flag (``--block-size 0 must be
    positive: give 1 or more``, where argparse said ``argument --block-size: 0 ...``; once
    where they name the flag already), a choice with the ones it takes, a flag without its
    value, two flags that exclude each other, a required one left out (the command: one of
    ``commands``). A flag of two names is named by both (``--a/--b``), for ``main`` to name
    the one typed (``_as_typed``)."""
    message = _short_value(message)
    if match := _ONE_REQUIRED.match(message):
        return f"{_choices_text(', '.join(match[1].split()))} is required: give one of them"
    if (match := _REQUIRED.match(message)) and match[1] == "command" and commands:
        return f"a command is required: give one of {_choices_text(', '.join(commands))}"
    if match:  # every one listed is required: all of them, not one of them
        names = [name.strip() for name in match[1].split(",")]
        if len(names) == 1:
            return f"{names[0]} is required: give it"
        return f"{', '.join(names[:-1])} and {names[-1]} are required: give them"
    match = _ARGUMENT_PREFIX.match(message)
    if match is None:
        return message
    flags, rest = match[1].split("/"), match[2]
    flag = match[1]
    if rest == "expected one argument":
        return (f"{flag} needs a value: give one after it (for a value that starts with '-', "
                f"write {flag}=VALUE)")
    if choice := _CHOICE.match(rest):
        if flag == "command":
            return f"{choice[1]} is not a command: give one of {_choices_text(choice[2])}"
        return f"{flag} {choice[1]} is not one it takes: give {_choices_text(choice[2])}"
    if explicit := _EXPLICIT_ON_FLAG.match(rest):
        return (f"{flag} takes no value (got {explicit[1]}): give the flag alone, or leave it "
                "out")
    if other := _NOT_ALLOWED.match(rest):
        return f"{flag} is not allowed with {other[1]}: give one of them"
    if named := next((name for name in flags if rest.startswith(name + " ")), None):
        # a type function's message that names its flag already: by both its names, for
        # ``_as_typed`` to name the one typed
        return flag + rest[len(named):]
    return f"{flag} {rest}"


class _Parser(argparse.ArgumentParser):
    """Every command's parser: no abbreviated option (``--mod`` read as --model-file, ``--bud``
    as --budget: a copied command's typo planned something), and argparse's errors in one
    line of our form (``_one_line``), exiting 2 as every refusal does."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # one line, not usage + message
        commands = next((tuple(a.choices) for a in self._actions
                         if isinstance(a, argparse._SubParsersAction)), ())
        raise UsageError(_one_line(message, commands))


# A flag of two names as ``_one_line`` gives it (--sglang-mamba-track-interval/--mamba-...)
_ALIASES = re.compile(r"(?<![\w-])--[\w-]+(?:/--[\w-]+)+")


def _as_typed(message: str, argv: Sequence[str]) -> str:
    """``message`` with each flag of two names named as ``argv`` typed it (the longer where
    neither is typed)."""
    def typed(match: re.Match[str]) -> str:
        names = match[0].split("/")
        return next((name for name in names for token in argv
                     if token == name or token.startswith(name + "=")), max(names, key=len))

    return _ALIASES.sub(typed, message)


@dataclass(frozen=True)
class CommandOutput:
    """What a command prints: its figures on stdout, then notes on stderr, each one line (a
    caveat on every figure, kept off stdout so that --json stays clean). An error prints neither:
    it is one line of its own."""

    text: str
    notes: tuple[str, ...] = ()
    status: int = 0  # main's exit status: compare --check-log exits 1 where a figure differs


# --------------------------------------------------------------------------------------------
# Commands


def _plan_command(args: argparse.Namespace) -> CommandOutput:
    """``plan``, its errors about the budget told where a budget --gpu-memory or --vllm-blocks
    derives comes from and which of those options raises it (the user typed no --budget)."""
    model = given_model(args)
    args = with_given_budget(args, model)
    try:
        return _plan_at_budget(args, model)
    except BudgetTooSmall as small:  # as the app says it, with the options given
        if (source := budget_source(args)) is None:
            raise
        raise UsageError(f"{budget_too_small_text(small, source[1])} (the budget is "
                         f"{source[0]})") from None
    except ValueError as exc:
        raise ValueError(explain_budget(args, " ".join(str(exc).split()))) from None


def _plan_at_budget(args: argparse.Namespace, model: GivenModel) -> CommandOutput:
    """``plan``: the planner's plan (packed slabs or per component), with --context the
    requests its own layout counts; with --strategy, that layout's figures instead."""
    profile = model.profile
    options = strategy_cli.options_from_args(args)  # validate every option, used or not
    if args.strategy:
        return _plan_strategy(args, model, options)
    planner = args.planner or "packed"
    if args.reserved_bytes_per_block and planner == "packed":  # the library says planner='...'
        raise UsageError("--reserved-bytes-per-block applies to the per-component planner, not "
                         "packed slabs: add --planner per-component, or drop the option")
    # with --context the plan's own layout counts requests, and reads its options
    counting = PLANNER_STRATEGY[planner] if args.context is not None else None
    if unread := option_not_read(options, counting, vllm_blocks_read(model, args, options),
                                 strategy_cli.arch_flag(args)):
        flag, suggest, _ = unread
        if counting is not None:
            raise UsageError(f"{flag} is not read by this plan's layout ({counting}), which "
                             f"counts the requests: use {suggest}, or compare")
        raise UsageError(f"{flag} acts on a layout's figures, which the planner alone does not "
                         f"count: add {suggest}, or use compare")
    if planner == "packed" and not profile.has_attention:
        raise UsageError(f"{PACKED_NEEDS_HISTORY}: add --planner per-component")
    analysis = analyze(
        profile.components(),
        block_size=args.block_size,
        alignment=args.alignment,
        budget_bytes=args.budget,
        planner=planner,
        reserved_bytes_per_block=args.reserved_bytes_per_block,
    )
    # with --context, this plan's layout counted at it, as Layout counts its plan
    context = (strategy_cli.RequestContext.from_args(args, model.max_model_len,
                                                     model.max_model_len_assumed)
               if args.context is not None else None)
    requests = None if context is None else requests_at(context, profile, planner, args.budget,
                                                         options)
    if args.json:
        text = plan_json(analysis, profile.name,
                         requests=None if requests is None else requests_json(requests))
    else:
        text = format_analysis(analysis, title=profile.name, mla=profile.mla)
        if requests is not None:
            text += "\n\n" + requests_text(requests)
    idle = idle_option_notes(options, profile, (counting,), **_idle_at(args)) if counting else ()
    return CommandOutput(text, model.stderr_notes() + budget_notes(args)
                         + (context.notes() if context else ()) + drafter_notes(args, model)
                         + idle)


def _capability(args: argparse.Namespace) -> tuple[int, int] | None:
    """The figures' GPU (``strategy_cli.figures_options``: a GPU preset's capability, or the
    architecture told), as the notes on options that change nothing read it."""
    return strategy_cli.figures_options(args).gpu_compute_capability


def _idle_at(args: argparse.Namespace) -> dict[str, object]:
    """``idle_option_notes``' figures: the GPU (``_capability``), the architecture flag as
    typed, and the budget and context its note on an architecture compares figures at."""
    return {"capability": _capability(args), "arch_flag": strategy_cli.arch_flag(args),
            "budget_bytes": args.budget, "context_tokens": getattr(args, "context", None)}


def _plan_strategy(args: argparse.Namespace, model: GivenModel,
                   options: StrategyOptions) -> CommandOutput:
    """``plan --strategy NAME``: that layout's figures at the context, with the notes on options
    it does not act on; an option it does not read (or the planner's) refused."""
    profile = model.profile
    if args.planner is not None:
        raise UsageError("--planner chooses the planner without --strategy; with --strategy "
                         "use --strategy flat or --strategy per-component")
    if args.reserved_bytes_per_block and args.strategy != "per-component":
        raise UsageError(f"--reserved-bytes-per-block applies to the per-component layout, "
                         f"not --strategy {args.strategy}")
    if unread := option_not_read(options, args.strategy,
                                  vllm_blocks_read(model, args, options),
                                  strategy_cli.arch_flag(args)):
        flag, suggest, instead = unread
        raise UsageError(f"{flag} is not read by --strategy {args.strategy}{instead}: use "
                         f"{suggest}, or compare, which shows every layout")
    output = _counting_requests(model, args, strategy_cli.plan_strategy_text)
    return replace(output, notes=output.notes + strategy_cli.replica_notes(args)
                   + idle_option_notes(options, profile, (args.strategy,), **_idle_at(args))
                   + idle_page_notes(args, profile, options)
                   + sglang_chunk_notes(args, profile, options, (args.strategy,))
                   + (checkpoint_notes(options, model, gpu_named(args))
                      if "prefill_checkpoint_blocks" in strategy_fields(args.strategy, profile)
                      else ()))


def _counting_requests(
    model: GivenModel, args: argparse.Namespace,
    command: Callable[[argparse.Namespace, CacheProfile, int | None], str],
) -> CommandOutput:
    """A strategy command at --context, else the model's max_model_len; its notes say where the
    context came from, and an error about a context the user did not type says so too."""
    context = strategy_cli.RequestContext.from_args(args, model.max_model_len,
                                                    model.max_model_len_assumed)
    try:
        text = command(args, model.profile, context.tokens)
    except ValueError as exc:
        raise ValueError(context.explain(" ".join(str(exc).split()))) from None
    return CommandOutput(text, model.stderr_notes() + budget_notes(args) + context.notes()
                         + drafter_notes(args, model))


def _compare_command(args: argparse.Namespace) -> CommandOutput:
    """``compare``, or with --check-log the check of that log in the table's place: both run
    through ``_counting_requests`` (``command``), so the log is checked at the context compare
    counts, and exit 1 where a figure differs."""
    if args.check_log is not None and (unread := [flag for flag, given in (
            ("--requests", args.requests is not None), ("--over-contexts", args.over_contexts),
            ("--exact-bytes", args.exact_bytes))
            if given]):
        raise UsageError(f"{' and '.join(unread)} with --check-log: the log's check prints in "
                         "place of the table they add to; run them without --check-log")
    log = None if args.check_log is None else read_log_file(  # bad input first
        args.check_log, say=lambda line: print(f"{PROG}: {line}", file=sys.stderr, flush=True))
    model = given_model(args)
    checked: list[log_check.LogCheck] = []
    counted: list[tuple[argparse.Namespace, int | None]] = []  # the settings checked at

    def command(a: argparse.Namespace, profile: CacheProfile, context: int | None) -> str:
        if log is None:
            return strategy_cli.compare_text(a, profile, context, model_len=model.max_model_len,
                                             raw=model.raw)
        counted.append((a, context))
        checked.extend(checked_log(a, profile, context, log))
        if a.json:
            return json.dumps([{"engine": c.engine, "verdict": c.verdict(),
                                "lines": log_check.check_rows(c)} for c in checked], indent=2)
        return "\n".join(line for c in checked for line in log_check.check_report(c))

    output = _counting_requests(model, with_given_budget(args, model), command)
    output = replace(output, status=int(any(c.differs for c in checked)))
    if log is not None and output.status:
        output = replace(output, notes=output.notes + logged_run_notes(
            *counted[0], log_check.logged_run(log_check.read_log(log)), model))
    options = strategy_cli.options_from_args(args)
    idle = idle_option_notes(options, model.profile, STRATEGIES, **_idle_at(args))
    return replace(output, notes=output.notes + strategy_cli.replica_notes(args)
                   + sglang_page_notes(args, model.profile, options)
                   + sglang_chunk_notes(args, model.profile, options, STRATEGIES)
                   + idle + checkpoint_notes(options, model, gpu_named(args)))


def _bench_command(args: argparse.Namespace) -> CommandOutput:
    model = given_model(args)
    return CommandOutput(bench_cli.bench_text(args, model.profile), model.stderr_notes())


# --------------------------------------------------------------------------------------------
# Entry point


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="FlatKV Explorer: paged KV-cache layouts of hybrid LLMs, planned exactly.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    plan = sub.add_parser("plan", help="plan one model's cache and account for every byte")
    add_profile_arguments(plan)
    add_plan_arguments(plan)
    strategy_cli.add_strategy_arguments(plan)
    plan.set_defaults(run=_plan_command)

    compare = sub.add_parser("compare", help="every engine layout side by side",
                             description="Every engine layout side by side, a column each: "
                             + " ".join(layout_lines(ids=True)))
    add_profile_arguments(compare)
    add_plan_arguments(compare, planner=False)
    strategy_cli.add_strategy_arguments(compare, include_strategy=False)
    compare.add_argument("--requests", type=positive_int, default=None, metavar="R",
                         help="also give each layout's least cache budget per rank that holds R "
                         "requests of the context at once (SGLang beside a state pool: the "
                         "least from which every larger budget holds them)")
    compare.add_argument("--over-contexts", action="store_true",
                         help="also give each layout's max concurrency at the budget over "
                         "context lengths: every power of two from 1,024 tokens to the model's "
                         "max_model_len or the context, whichever is longer, the context and "
                         "the model's max_model_len")
    compare.add_argument("--exact-bytes", action="store_true",
                         help="print the budget's breakdown rows in exact bytes (they read in "
                         "the binary unit that suits each cell, to 0.01 of it, otherwise)")
    compare.add_argument("--check-log", metavar="PATH", default=None,
                         help="check an engine's start-up log (a file, or - for stdin) against "
                         "the lines vLLM and SGLang log at these settings: prints each line as "
                         "same, differs (each figure, FlatKV's and the log's) or not in the "
                         "log, in place of the table; exits 1 where a figure differs")
    compare.set_defaults(run=_compare_command)

    bench = sub.add_parser(
        "bench",
        help="time gather / scatter / host copies of a model's pages on this machine",
        description="Allocate a model's flat plan (capped by --max-blocks) and time its page "
        "movers against a plain copy of the same bytes measured in the same run.",
    )
    add_profile_arguments(bench)
    # by default the GPU lab's plan: the app's default GPU and memory fraction
    add_plan_arguments(bench, planner=False, default_budget=DEFAULT_BUDGET.cache_bytes,
                       reserved=False)
    bench_cli.add_bench_arguments(bench)
    bench.set_defaults(run=_bench_command)

    model_cli.register(sub)
    for command in sub.choices.values():
        _given_once(command)
    return parser


_GIVEN = "_options_given"  # the namespace's record of the options met: dest -> {flag: as read}


class _Once:
    """An option's action that refuses to be met twice in one command line: argparse keeps the
    last value silently (``--budget 80GB --budget 1GB`` planned 1 GB; ``--sglang-swa-pool
    --no-sglang-swa-pool`` read as off), so a copied command with an option left in would plan
    something else than it says. Two spellings of one setting that agree are taken
    (``--disable-overlap-schedule --no-sglang-overlap-schedule``: both turn overlap off, as a
    command line copied from SGLang beside FlatKV's own flag may give them); that contradict,
    refused, the message naming both values (what is wrong is that they differ); one spelling
    twice, refused even after the other agreed (``--chunked-prefill-size 4096
    --sglang-chunked-prefill-size 4096 --sglang-chunked-prefill-size 4096`` passed)."""

    def __call__(self, parser, namespace, values, option_string=None):
        met = namespace.__dict__.setdefault(_GIVEN, {}).setdefault(self.dest, {})
        before = getattr(namespace, self.dest, None)
        super().__call__(parser, namespace, values, option_string)
        # the value as read (a flag's is the flag itself): 8192, not the converted repr
        said = option_string if values in (None, []) else f"{option_string} {values}"
        if option_string in met:
            parser.error(f"{option_string} is given again: give it once")
        if met and getattr(namespace, self.dest) != before:
            first = next(iter(met.values()))
            parser.error(f"{said} is given after {first}, which says otherwise: give one of "
                         "them")
        met[option_string] = said


def _given_once(parser: argparse.ArgumentParser) -> None:
    """Every option of ``parser`` (but --help) refuses a second mention (``_Once``)."""
    for action in parser._actions:
        if (action.option_strings and not isinstance(action, (argparse._HelpAction, _Once))):
            action.__class__ = type(f"Once{type(action).__name__}", (_Once, type(action)), {})


# Library fields whose command-line option has another name.
_OPTION_DEST = {"cpu_threads": "threads", "budget_bytes": "budget", "context_tokens": "context",
                "state_const_bytes": "state"}
# Options whose name is also a word a model's own message starts with ("state layers of 'X'
# differ"): no library field (--state's is state_const_bytes), so never read as the option.
_OPTION_WORDS = {"state"}
# A field, then a list index (dropped: the flag's value is the list) or a state name (kept),
# before a space or a colon ("kv_dtype: unknown dtype '1'").
_LEADING_FIELD = re.compile(r"^([a-z][a-z0-9_]*)(?:\[\d+\]|\['([^']*)'\])?(?=:? )")


def _options(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's dest and its flag, over every subcommand: a flag of two long names by
    both (``--sglang-mamba-track-interval/--mamba-track-interval``), for ``_as_typed`` to
    name the one typed."""
    flags: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags.update(_options(sub))
        elif action.option_strings:
            names = [name for name in action.option_strings if name.startswith("--")]
            flags[action.dest] = "/".join(names) or max(action.option_strings, key=len)
    return flags


def in_option_terms(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with the library field it starts with (``mamba_full_memory_ratio is
    '0'``) named by the option the user typed (``--mamba-full-memory-ratio is '0'``)."""
    match = _LEADING_FIELD.match(message)
    if match is None or match[1] in _OPTION_WORDS:
        return message
    flag = _options(parser).get(_OPTION_DEST.get(match[1], match[1]))
    if flag is None:
        return message
    return flag + (f" {match[2]}" if match[2] else "") + message[match.end():]


def _unknown_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """Why the first --option of ``argv`` that its command does not know (none is abbreviated;
    --model points at the three model sources), or
    the first word after the command that no option takes as its value (no command has
    positional arguments), is refused, which argparse would say only after a missing required
    option ("--budget is required" for a misspelt --budgte), and for a stray word without the
    --help pointer ("unrecognized arguments: extra"); None where every token is known."""
    at, command, known = _command_options(parser, argv)
    if known is None:
        return None  # a misspelt command, or an option's value before it: argparse says
    where = f"{PROG} {command}" if command else PROG
    after_dashes = False  # past "--", every token is a positional: none is wanted
    for i, token in enumerate(argv[at + 1:] if command else argv):
        previous = argv[at + i] if command else None  # the option this may be the value of
        is_value = (not after_dashes and previous is not None and previous.startswith("-")
                    and "=" not in previous and _takes_a_value(known, previous))
        if token == "--" and not after_dashes:
            if is_value:  # "--name -- --preset X": argparse named --preset, not the valueless
                return _dashes_end_options(previous, "got no value")
            after_dashes = True
            continue
        name = token.split("=", 1)[0]
        if after_dashes or (command and not token.startswith("-") and not is_value):
            # "--gpu-memory H100 80GB" unquoted: the name's second word is the stray one
            gpu = gpu_name(f"{(previous or '').split('=', 1)[-1]} {token}")
            if not after_dashes and gpu in GPU_PRESETS:
                return (f"unrecognized argument {token}: a GPU's name holds a space, so quote "
                        f"it: --gpu-memory '{gpu}'")
            return f"unrecognized argument {token}: {where} --help lists the options"
        if (name.startswith("-") and name != "-" and name not in known
                and not is_value):  # -x too, which argparse said without the pointer
            if name == "--model" and "--model-file" in known:
                return _NO_MODEL_FLAG
            return f"unrecognized argument {name}: {where} --help lists the options"
    if after_dashes:  # a "--" with nothing after it: argparse said so without the pointer
        return f"unrecognized argument --: {where} --help lists the options"
    return None


# --model is no option (argparse read it as an abbreviated --model-file): vLLM's --model, a
# Hugging Face id or path, is --hf-config here, and a preset's name is --preset's
_NO_MODEL_FLAG = ("unrecognized argument --model: give --preset NAME (a bundled model), "
                  "--hf-config PATH (a config.json, or a Hugging Face model id as vLLM's --model "
                  "takes) or --model-file PATH (a model exported as JSON)")


def _command_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[
        int, str | None, Mapping[str, argparse.Action] | None]:
    """Where the command of ``argv`` is (its index, else len(argv)), its name (None before
    one) and the options it knows by name; None for those where the first word is no command
    (a misspelt one, or an option's value before it), which argparse says."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    at = next((i for i, t in enumerate(argv) if not t.startswith("-")), len(argv))
    if at < len(argv) and argv[at] not in commands.choices:
        return at, None, None
    command = argv[at] if at < len(argv) else None
    return at, command, (commands.choices[command] if command else parser)._option_string_actions


def _dashes_as_value(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """Why ``--flag=--`` is refused, or None where no option is given ``--`` so: argparse
    (Python 3.11) drops the ``--`` and hands the flag an empty list unchecked, so
    ``--strategy=--`` planned the default layout without a word, ``--preset=--`` was "unknown
    preset '[]'", ``--tp=--`` "must be a whole number, got []" and ``--name=--`` a
    traceback. A flag that takes no value is told so, as for ``--json=x``: "give --json a
    value" was a fix it refuses."""
    if (known := _command_options(parser, argv)[2]) is None:
        return None  # no command: argparse names the misspelt one
    for token in argv:
        if token == "--":
            return None  # past it every token is a positional, which _unknown_option refuses
        name, given, value = token.partition("=")
        if given and value == "--" and name.startswith("--"):
            if name in known and not _takes_a_value(known, name):
                return (f"{name} takes no value (got '--'): give the flag alone, or leave it "
                        "out")
            return _dashes_end_options(name, "-- is not a value")
    return None


def _dashes_end_options(flag: str, what: str) -> str:
    """Why ``flag``, given ``--`` for its value (``what`` says how), is refused, and the fix."""
    return f"{flag} {what}: '--' ends the options; give {flag} a value, e.g. {flag}=VALUE"


def _takes_a_value(known: Mapping[str, argparse.Action], option: str) -> bool:
    """Whether ``option`` (as typed: options are never abbreviated) takes a value, so that
    the token after it is that value, whatever it looks like."""
    action = known.get(option)
    return action is not None and action.nargs != 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m flatkv``: the command's output and status; a ValueError one line and 2, and
    Ctrl-C, wherever it lands (building the parser, the command, writing a long output a pager
    holds), one line and 130 (128 + SIGINT, as a shell reports it), never a traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # e.g. a named pipe no one writes to (--check-log)
        print(f"{PROG}: stopped (Ctrl-C)", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if unknown := _unknown_option(parser, argv) or _dashes_as_value(parser, argv):
            raise UsageError(unknown)
        args = parser.parse_args(argv)
        vars(args).pop(_GIVEN, None)
        output = args.run(args)
    except ValueError as exc:  # UsageError included
        message = " ".join(str(exc).split())
        if not isinstance(exc, model_cli.FileFieldError):  # a file's field is no option
            message = in_option_terms(message, parser)
        print(f"{PROG}: error: {_as_typed(message, argv)}", file=sys.stderr)
        return 2
    if isinstance(output, str):  # `model` and `presets` have no notes
        output = CommandOutput(output)
    try:
        print(output.text)
        for note in output.notes:
            print(f"{PROG}: {note}", file=sys.stderr)
    except BrokenPipeError:  # `| head` closed the pipe: not an error of ours
        sys.stderr.close()
    except OSError as exc:  # a full disk, a closed file: said in one line, not a traceback
        print(f"{PROG}: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except UnicodeEncodeError as exc:  # a name stdout's encoding (ascii, a code page) lacks
        print(f"{PROG}: error: cannot write the output: its character "
              f"U+{ord(exc.object[exc.start]):04X} is not in this terminal's encoding "
              f"({exc.encoding}); set PYTHONIOENCODING=utf-8", file=sys.stderr)
        return 1
    return output.status
