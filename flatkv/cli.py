"""``python -m flatkv``: the planner, the models and the comparisons on the command line.

Every command reads a model the same way (``add_profile_arguments`` / ``given_model``) and
prints a readable table, or JSON with ``--json``, with notes on the model and the context on
stderr (``CommandOutput``). Bad input exits with status 2 and one line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace

from flatkv import bench_cli, log_check, model_cli, strategy_cli
from flatkv.analysis import PLANNER_STRATEGY, PLANNERS, PlanAnalysis, analyze, plan_json
from flatkv.budget import (
    DEFAULT_GPU,
    DEFAULT_MEMORY_FRACTION,
    GPU_PRESETS,
    MAX_VLLM_BLOCKS,
    MIN_VLLM_BLOCKS,
    blocks_budget,
    cache_budget,
    fraction_text,
)
from flatkv.engine_options import (
    ENGINE_OPTIONS,
    acting_engine_options,
    idle_engine_option,
    strategy_fields,
)
from flatkv.models import DRAFTER_NOT_COUNTED, mtp_layers_not_full
from flatkv.patterns import parse_layer_pattern
from flatkv.plan import LINEAR_ATTENTION, PACKED_NEEDS_HISTORY, BudgetTooSmall
from flatkv.profile import MAX_WINDOW, CacheProfile
from flatkv.sizing import sglang_budget_search
from flatkv.strategies import STRATEGIES, StrategyResult, model_blocker, run_strategy
from flatkv.strategies.base import ENGINE_NAMES, StrategyOptions
from flatkv.strategies.sglang import CHUNKED_PREFILL_ASSUMED, sglang_default_page
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategies.vllm import checkpoint_blocks_kept
from flatkv.strategies.vllm_log import format_gib
from flatkv.strategy_notes import budget_too_small_text, prefill_checkpoint_text
from flatkv.texttable import text_table
from flatkv.units import (
    concurrency_text,
    count_text,
    exact_bytes,
    format_bytes,
    format_size,
    memory_size,
    parse_named_sizes,
    parse_size,
    parse_tokens,
    positive_size,
    quoted,
    tokens_text,
)

PROG = "python -m flatkv"
# bench's default plan: the GPU lab's, the app's default GPU and memory fraction (no weights)
DEFAULT_BUDGET = cache_budget(GPU_PRESETS[DEFAULT_GPU], DEFAULT_MEMORY_FRACTION, 0, 1)


class UsageError(ValueError):
    """Bad command-line input; main() prints it as one line and exits 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not usage + message
        if message.endswith("expected one argument"):
            message += " (for a value that starts with '-', write --option=VALUE)"
        elif "invalid int value" in message:
            message += ": give a whole number, e.g. 2"
        elif "invalid float value" in message:
            message += ": give a number, e.g. 0.9"
        raise UsageError(message)


# --------------------------------------------------------------------------------------------
# Reading a model: a preset, a Hugging Face config.json, an exported spec, or raw bytes.


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    """A model: a preset, a Hugging Face config.json or an exported spec, or raw bytes."""
    model_cli.add_model_arguments(parser)
    group = parser.add_argument_group("model (raw bytes)")
    group.add_argument(
        "--layers",
        help="cache layer pattern, e.g. '(3*linear_attention,full_attention)*12' "
        "(labels: full, sliding, chunked, linear)",
    )
    group.add_argument(
        "--kv-bytes-per-slot", help="bytes one token adds to one attention layer (needed with "
        "attention layers; 0 for a model of state layers alone)"
    )
    group.add_argument(
        "--sliding-kv-bytes-per-slot", default=None, metavar="BYTES",
        help="bytes one token adds to one sliding layer, where they differ from a full layer's "
        "--kv-bytes-per-slot (Gemma 4's sliding layers keep other heads)"
    )
    group.add_argument(
        "--state", default="", help="state tensors of one linear layer, e.g. conv=49152,ssm=2097152"
    )
    group.add_argument(
        "--sliding-window", default=None, help="tokens a sliding layer keeps (e.g. 4096, 4K)"
    )
    group.add_argument(
        "--attention-chunk-size", default=None,
        help="tokens of a chunk of the chunked layers (Llama 4's chunked local attention)"
    )
    group.add_argument(
        "--ssm-element-bytes", type=_positive_int, default=None, metavar="N",
        help="bytes of one element of --state's ssm tensor (2 bf16, 4 float32): SGLang "
        "re-sizes the ssm state to its own dtype from it, as the app does for an edited "
        "model; without it the ssm bytes are taken as given"
    )


@dataclass(frozen=True)
class GivenModel:
    """The model the arguments name, per TP rank, with what a command says beside its figures:
    the model's notes (sizes transformers filled in, Nemotron-H's ssm dtype) and its
    max_model_len (--context's default, as vLLM's --max-model-len). Raw bytes have neither."""

    profile: CacheProfile
    notes: str = ""
    max_model_len: int | None = None
    max_model_len_assumed: bool = False  # vLLM's 2,048: the config gives no length
    # an MTP module's layer is no full-attention one (Step-3.5's are sliding): --mtp-layer
    # adds none, and the drafter note does not offer it
    drafts_otherwise: bool = False
    tp: int = 1  # the ranks --weights split over
    raw: bool = False  # bytes given by hand: one rank's, --tp refused
    splits_over: Callable[[int], bool] = lambda tp: True  # whether the model splits over a tp
    # its GDN layers' key head dims (vLLM's FlashInfer prefill on a B200 needs 128); none known
    # for raw bytes
    gdn_key_head_dims: frozenset[int] = frozenset()
    # the profile at another TP, None where the model does not split over it (raw bytes: at
    # none, they are one rank's)
    profile_at: Callable[[int], CacheProfile | None] = lambda tp: None

    def stderr_notes(self) -> tuple[str, ...]:
        """The notes as one line, as the app shows them beside the figures."""
        return (f"note on this model: {' '.join(self.notes.split())}",) if self.notes else ()


@dataclass(frozen=True)
class CommandOutput:
    """What a command prints: its figures on stdout, then notes on stderr, each one line (a
    caveat on every figure, kept off stdout so that --json stays clean). An error prints neither:
    it is one line of its own."""

    text: str
    notes: tuple[str, ...] = ()
    status: int = 0  # main's exit status: compare --check-log exits 1 where a figure differs


def given_model(args: argparse.Namespace) -> GivenModel:
    """The model of --preset / --hf-config / --model-file, or of raw bytes (--layers ...)."""
    spec = model_cli.model_from_args(args)
    if spec is not None:
        _refuse_raw_bytes_beside_a_model(args)
        if isinstance(spec, CacheProfile):  # --model-file of raw bytes
            return GivenModel(spec, raw=True)
        return GivenModel(spec.profile(), spec.notes, spec.max_model_len,
                          max_model_len_assumed=spec.max_model_len_assumed,
                          drafts_otherwise=bool(mtp_layers_not_full(spec.mtp_layer_types)),
                          tp=spec.tp, splits_over=spec.splits_over,
                          gdn_key_head_dims=spec.gdn_key_head_dims,
                          profile_at=lambda tp: spec.with_options(tp=tp).profile()
                          if spec.splits_over(tp) else None)
    return GivenModel(_raw_profile(args), raw=True)


def _refuse_raw_bytes_beside_a_model(args: argparse.Namespace) -> None:
    """Raw-bytes options beside a model would be ignored: refused instead."""
    raw = [flag for flag, value in (  # --state's default is "", the others' None
        ("--layers", args.layers), ("--kv-bytes-per-slot", args.kv_bytes_per_slot),
        ("--sliding-kv-bytes-per-slot", args.sliding_kv_bytes_per_slot),
        ("--state", args.state or None), ("--sliding-window", args.sliding_window),
        ("--attention-chunk-size", args.attention_chunk_size),
        ("--ssm-element-bytes", args.ssm_element_bytes))
        if value is not None]
    if raw:
        raise UsageError(f"give either a model (--preset, --hf-config, --model-file) or "
                         f"raw bytes ({', '.join(raw)}), not both: the model's own values "
                         "would be used and yours ignored")


def _window_tokens(text: str | None, flag: str) -> int | None:
    return None if text is None else parse_tokens(text, flag, maximum=MAX_WINDOW)


def _sliding_kv_bytes(text: str | None) -> int | None:
    """--sliding-kv-bytes-per-slot's bytes, None where not given (sliding layers keep
    --kv-bytes-per-slot's)."""
    flag = "--sliding-kv-bytes-per-slot"
    return None if text is None else positive_size(
        text, flag, f"the sliding layers' bytes a token (1 or more), or drop {flag} where they "
        "keep --kv-bytes-per-slot's")


def _raw_profile(args: argparse.Namespace) -> CacheProfile:
    """Bytes per TP rank as --layers, --kv-bytes-per-slot (and --sliding-kv-bytes-per-slot),
    --state, --sliding-window, --attention-chunk-size and --ssm-element-bytes give them."""
    if not args.layers:
        raise UsageError(
            "no model given: pass --preset NAME (see `presets`), --hf-config PATH, or --layers "
            "with --kv-bytes-per-slot / --state"
        )
    if any(getattr(args, opt) is not None for opt in ("tp", "kv_dtype", "conv_dtype",
                                                      "ssm_dtype")):
        raise UsageError("--tp and the dtype options apply to a model (--preset, --hf-config); "
                         "with --layers give bytes per TP rank directly")
    if getattr(args, "mtp_layer", False):
        raise UsageError("--mtp-layer copies a model's last full-attention layer (--preset, "
                         "--hf-config, --model-file); with --layers, add the MTP layer to the "
                         "pattern")
    labels = parse_layer_pattern(args.layers)
    if args.state and LINEAR_ATTENTION not in labels:
        raise UsageError(f"--state is given but --layers {quoted(args.layers)} has no linear "
                         "(state) layer: drop --state or add linear layers")
    if not args.state and LINEAR_ATTENTION in labels:
        raise UsageError(f"--layers {quoted(args.layers)} has linear (state) layers but no --state "
                         "gives their bytes: add e.g. --state conv=49152,ssm=2097152 (bytes per "
                         "layer per TP rank)")
    state = parse_named_sizes(args.state, field="--state")
    element = args.ssm_element_bytes
    if element is not None and "ssm" not in state:
        raise UsageError(f"--ssm-element-bytes {element} sizes an ssm tensor, but --state has "
                         "none: add ssm=BYTES to --state, or drop the option")
    if element is not None and state["ssm"] % element:
        raise UsageError(f"--ssm-element-bytes {element} does not divide --state's ssm of "
                         f"{state['ssm']:,} B: give the element size its ssm bytes are whole "
                         "elements of (2 for bf16, 4 for float32), or drop the option")
    return CacheProfile(
        layer_types=tuple(labels),
        kv_bytes_per_slot=parse_size(args.kv_bytes_per_slot or "0",
                                     field="--kv-bytes-per-slot", whole=True),
        sliding_kv_bytes_per_slot=_sliding_kv_bytes(args.sliding_kv_bytes_per_slot),
        state_const_bytes=state,
        sliding_window=_window_tokens(args.sliding_window, "--sliding-window"),
        attention_chunk_size=_window_tokens(args.attention_chunk_size, "--attention-chunk-size"),
        ssm_element_bytes=args.ssm_element_bytes,
        name="custom",
    )


# --------------------------------------------------------------------------------------------
# plan


def _whole_number(text: str) -> int | None:
    """``text`` as an int; None where it is not one, or is past 20 characters (2**64 has 20
    digits: no count here is larger, and int() of a huge string is slow)."""
    try:
        return int(text) if len(text) <= 20 else None
    except ValueError:
        return None


def _positive_int(text: str) -> int:
    value = _whole_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a whole number up to 2**64")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be positive: give 1 or more")
    return value


def _vllm_blocks(text: str) -> int:
    """--vllm-blocks: the N of vLLM's "N KV cache blocks" line, as many as a budget may be."""
    value = _whole_number(text)
    if value is None or not MIN_VLLM_BLOCKS <= value <= MAX_VLLM_BLOCKS:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not a count of vLLM blocks: give the N of its \"Memory after "
            f"warmup: ... N KV cache blocks\" line, {MIN_VLLM_BLOCKS} to {MAX_VLLM_BLOCKS:,}")
    return value


def _gpu_name(text: str) -> str:
    """--gpu-memory: a GPU preset's name in any case and spacing (``h100 80gb``) as its own
    (``H100 80GB``), as --preset reads a model's, so its budget and its notes follow; anything
    else as typed, a size for with_given_budget to read."""
    key = " ".join(text.split()).casefold()
    return next((name for name in GPU_PRESETS if name.casefold() == key), text)


def _size(field: str, *, whole: bool = False, memory: bool = False) -> Callable[[str], int]:
    """A size argument; ``memory``: read as the app's memory fields read one, a bare number
    under a MiB (``44.59``) or bytes under a MiB (``70B``) refused as a unit left out."""
    def parse(text: str) -> int:
        try:
            if memory:
                return memory_size(text, field)
            return parse_size(text, field=field, whole=whole)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def add_plan_arguments(
    parser: argparse.ArgumentParser, *, planner: bool = True, default_budget: int | None = None,
    reserved: bool = True,
) -> None:
    """The plan's options; ``reserved=False`` leaves out --reserved-bytes-per-block (bench plans
    packed slabs, which have no reserved rows). Without a default budget, --vllm-blocks may
    give it instead of --budget."""
    group = parser.add_argument_group("plan")
    group.add_argument(
        "--block-size",
        type=_positive_int,
        default=StrategyOptions.block_size,
        help=f"requested tokens per page (default {StrategyOptions.block_size})",
    )
    group.add_argument(
        "--alignment",
        type=_positive_int,
        default=None,
        help="an inflated page size is a multiple of this (default: block size)",
    )
    budget = group.add_mutually_exclusive_group(required=default_budget is None)
    budget.add_argument(
        "--budget",
        default=default_budget,
        type=_size("--budget", memory=True),
        help="memory for the cache: 80GB, 10GiB, 1.5TiB or 12e9 bytes (a bare number under "
        "a MiB is refused as a size missing its unit)"
        + (f" (default {format_bytes(default_budget)}: {DEFAULT_GPU} x "
           f"{DEFAULT_MEMORY_FRACTION:g}, as the app's GPU lab plans by default)"
           if default_budget else ""),
    )
    if default_budget is None:
        budget.add_argument(
            "--vllm-blocks", type=_vllm_blocks, default=None, metavar="N",
            help="the budget as vLLM 0.34 logs it after warm-up (\"Memory after warmup: ... N "
            "KV cache blocks (X GiB) fit\"): N of vLLM's blocks at the vLLM options given, "
            "exact where its X GiB is rounded; every layout gets those bytes")
        budget.add_argument(
            "--gpu-memory", type=_gpu_name, default=None, metavar="GPU",
            help="the budget as the app's sidebar derives it: one GPU's memory (80GB, or one "
            f"of {', '.join(repr(name) for name in GPU_PRESETS)} as nvidia-smi reports it, "
            "any case) x "
            "--memory-fraction, less --weights / TP")
        group.add_argument(
            "--memory-fraction", type=float, default=None, metavar="F",
            help=f"with --gpu-memory: the share an engine may use, vLLM's "
            f"--gpu-memory-utilization (default {DEFAULT_MEMORY_FRACTION}, vLLM's before 0.20; "
            "0.92 from 0.20 to 0.33; vLLM 0.34 on CUDA takes 1.0 and sizes its cache after "
            "warm-up: give --vllm-blocks to match its log)")
        group.add_argument(
            "--weights", type=_size("--weights", memory=True), default=None,
            help="with --gpu-memory: the model's weights on all ranks (2 B a parameter in bf16, "
            "so 160GB for 80B; default 0), each rank holding 1 / TP of them")
    if reserved:
        group.add_argument(
            "--reserved-bytes-per-block",
            default=0,
            type=_size("--reserved-bytes-per-block", whole=True),
            help="per-component: bytes of co-resident rows per block id (a draft model's KV)",
        )
    if planner:
        group.add_argument(
            "--planner",
            choices=PLANNERS,
            default=None,
            help="without --strategy: packed slabs (default) or one tensor per component",
        )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def with_given_budget(args: argparse.Namespace, model: GivenModel) -> argparse.Namespace:
    """``args`` with --gpu-memory or --vllm-blocks turned into its --budget; as they were
    without either."""
    if getattr(args, "gpu_memory", None) is None:
        unread = [flag for flag, value in (("--memory-fraction", "memory_fraction"),
                                           ("--weights", "weights"))
                  if getattr(args, value, None) is not None]
        if unread:
            many = len(unread) > 1
            raise UsageError(f"{' and '.join(unread)} appl{'y' if many else 'ies'} only with "
                             f"--gpu-memory, whose budget {'they derive' if many else 'it derives'}"
                             f": give --gpu-memory too, or drop {'them' if many else 'it'}")
        return with_vllm_blocks(args, model)
    gpu = GPU_PRESETS.get(args.gpu_memory)
    if gpu is None:
        try:
            gpu = memory_size(args.gpu_memory, "--gpu-memory")
        except ValueError as exc:
            raise UsageError(f"{exc} (or one of {', '.join(map(repr, GPU_PRESETS))})") from None
    fraction = (DEFAULT_MEMORY_FRACTION if args.memory_fraction is None
                else args.memory_fraction)
    if not 0 < fraction <= 1:  # (NaN too)
        raise UsageError(f"--memory-fraction {fraction_text(fraction)} is outside (0, 1]: give "
                         "the share of the GPU an engine may use, e.g. 0.9")
    try:
        budget = cache_budget(gpu, fraction, args.weights or 0, model.tp,
                              splits=model.splits_over)
    except ValueError as exc:
        if model.raw and args.weights:  # its advice to raise --tp does not apply to raw bytes
            raise UsageError(
                f"--gpu-memory {args.gpu_memory}: --weights {format_bytes(args.weights)} fill "
                f"its usable memory: raw bytes are one rank's, so give --weights as one rank's "
                "share, or a larger --gpu-memory or --memory-fraction") from None
        raise UsageError(f"--gpu-memory {args.gpu_memory}: {exc}") from None
    return argparse.Namespace(**{**vars(args), "budget": budget.cache_bytes,
                                 "derived_budget": budget})


def with_vllm_blocks(args: argparse.Namespace, model: GivenModel) -> argparse.Namespace:
    """``args`` with --vllm-blocks N turned into its --budget: N x the bytes of one vLLM block
    at the options given (``strategies.vllm.block_bytes``); as they were without it."""
    if getattr(args, "vllm_blocks", None) is None:
        return args
    each = vllm_block_bytes(model.profile, strategy_cli.options_from_args(args))
    try:
        budget = blocks_budget(args.vllm_blocks, each, 1).cache_bytes
    except ValueError as exc:  # more bytes than any budget
        raise UsageError(f"--vllm-blocks {args.vllm_blocks:,}: {exc}") from None
    return argparse.Namespace(**{**vars(args), "budget": budget, "vllm_block_bytes": each})


def budget_notes(args: argparse.Namespace) -> tuple[str, ...]:
    """Where a budget of --gpu-memory or --vllm-blocks comes from, said beside the figures."""
    if (derived := getattr(args, "derived_budget", None)) is not None:
        return (f"note: budget {derived.explanation}",)
    if getattr(args, "vllm_blocks", None) is None:
        return ()
    return (f"note: budget {args.vllm_blocks:,} vLLM blocks x {args.vllm_block_bytes:,} B = "
            f"{args.budget:,} B ({format_bytes(args.budget)}) per rank, a block the bytes of "
            "vLLM's layout at these options",)


def _budget_source(args: argparse.Namespace) -> tuple[str, str] | None:
    """Where a budget that --gpu-memory or --vllm-blocks derives comes from, and the options
    that raise it: the sidebar's fix (``Budget.how_to_raise``) in the flags the user gave. None
    for a --budget given as it is."""
    if getattr(args, "vllm_blocks", None) is not None:
        return (f"{args.vllm_blocks:,} vLLM blocks x {args.vllm_block_bytes:,} B = "
                f"{args.budget:,} B per rank", "raise --vllm-blocks")
    derived = getattr(args, "derived_budget", None)
    if derived is None:
        return None
    raise_ = ["--gpu-memory"] + (["--memory-fraction"] if derived.fraction < 1 else [])
    fix = f"raise {' or '.join(raise_)}" + (", or lower --weights" if args.weights else "")
    return f"--gpu-memory {quoted(args.gpu_memory)}: {derived.explanation}", fix


def explain_budget(args: argparse.Namespace, message: str) -> str:
    """``message`` with where the budget came from and the options that raise it, when it is
    about a budget --gpu-memory or --vllm-blocks derives (the user gave no --budget to
    raise: "give at least N B" says the bytes, not the option); other messages as they
    are."""
    source = _budget_source(args)
    if source is None or "budget" not in message:
        return message
    return f"{message} (the budget is {source[0]}: {source[1]})"


def _plan_command(args: argparse.Namespace) -> CommandOutput:
    """``plan``, its errors about the budget told where a budget --gpu-memory or --vllm-blocks
    derives comes from and which of those options raises it (the user typed no --budget)."""
    model = given_model(args)
    args = with_given_budget(args, model)
    try:
        return _plan_at_budget(args, model)
    except BudgetTooSmall as small:  # as the app says it, with the options given
        if (source := _budget_source(args)) is None:
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
    # with --context the plan's own layout counts requests, and reads its options
    counting = PLANNER_STRATEGY[planner] if args.context is not None else None
    if unread := _option_not_read(options, counting, _vllm_blocks_read(model, args, options)):
        flag, layout, _ = unread
        if counting is not None:
            raise UsageError(f"{flag} is not read by this plan's layout ({counting}), which "
                             f"counts the requests: use --strategy {layout} (a layout that "
                             "reads it), or compare")
        raise UsageError(f"{flag} acts on a layout's figures, which the planner alone does not "
                         f"count: add --strategy {layout} (a layout that reads it), or use "
                         "compare")
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
    requests = None if context is None else _requests_at(context, profile, planner, args.budget,
                                                         options)
    if args.json:
        text = plan_json(analysis, profile.name,
                         requests=None if requests is None else _requests_json(requests))
    else:
        text = format_analysis(analysis, title=profile.name)
        if requests is not None:
            text += "\n\n" + requests_text(requests)
    idle = idle_option_notes(options, profile, (counting,)) if counting else ()
    return CommandOutput(text, model.stderr_notes() + budget_notes(args)
                         + (context.notes() if context else ()) + drafter_notes(args, model)
                         + idle)


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
    if unread := _option_not_read(options, args.strategy,
                                  _vllm_blocks_read(model, args, options)):
        flag, layout, instead = unread
        raise UsageError(f"{flag} is not read by --strategy {args.strategy}{instead}: use "
                         f"--strategy {layout} (a layout that reads it), or compare, which "
                         "shows every layout")
    output = _counting_requests(model, args, strategy_cli.plan_strategy_text)
    return replace(output, notes=output.notes + strategy_cli.replica_notes(args)
                   + idle_option_notes(options, profile, (args.strategy,))
                   + idle_page_notes(args, profile, options)
                   + sglang_chunk_notes(args, profile, options, (args.strategy,))
                   + (checkpoint_notes(options, model, _gpu_named(args))
                      if "prefill_checkpoint_blocks" in strategy_fields(args.strategy, profile)
                      else ()))


def drafter_notes(args: argparse.Namespace, model: GivenModel) -> tuple[str, ...]:
    """With drafted tokens, that the figures leave a drafter's own KV layers out unless
    --mtp-layer (or --layers) puts one in: the app's note, with the flag for its button (not
    for a model whose MTP layers are not full attention: its notes say so)."""
    if not getattr(args, "speculative_tokens", 0) or not model.profile.has_attention or getattr(
            args, "mtp_layer", False):
        return ()
    how = ("With --layers, add it to the pattern" if args.layers else
           "This model's MTP layers are not full attention (its notes say which), so "
           "--mtp-layer adds none" if model.drafts_otherwise else "Add one with --mtp-layer")
    return (f"note on speculative decoding: {DRAFTER_NOT_COUNTED} {how}.",)


def _requests_at(context: strategy_cli.RequestContext, profile: CacheProfile, planner: str,
                 budget: int, options: StrategyOptions) -> StrategyResult:
    """This plan's layout (flat for packed slabs, per-component for one tensor per component)
    counted at the context, as the app's Layout page counts its plan."""
    result = run_strategy(PLANNER_STRATEGY[planner], profile, budget_bytes=budget,
                          context_tokens=context.tokens, options=options)
    if not result.applies:
        raise ValueError(f"--context {context.tokens:,}: {result.reason}")
    return result


def _requests_json(result: StrategyResult) -> dict[str, object]:
    """The plan's requests in --json: the counting layout's own fields, as its to_dict
    writes them, under "layout" rather than "strategy" (a plan is no strategy)."""
    fields = result.to_dict()
    return {"layout": fields["strategy"],
            **{key: fields[key] for key in ("context_tokens", "max_concurrency",
                                            "max_concurrency_exact")}}


def requests_text(result: StrategyResult) -> str:
    """How many requests of the context the plan holds, the exact fraction beside it."""
    return (f"Requests of {tokens_text(result.context_tokens or 0)} (--context): "
            f"{concurrency_text(result.max_concurrency or 0.0)} = "
            f"{result.concurrency_numerator:,} / {result.concurrency_denominator:,}, as "
            f"`plan --strategy {result.strategy}` and `compare` count them")


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
    log = None if args.check_log is None else _read_log(args.check_log)  # bad input first
    model = given_model(args)
    checked: list[log_check.LogCheck] = []
    counted: list[tuple[argparse.Namespace, int | None]] = []  # the settings checked at

    def command(a: argparse.Namespace, profile: CacheProfile, context: int | None) -> str:
        if log is None:
            return strategy_cli.compare_text(a, profile, context, model_len=model.max_model_len)
        counted.append((a, context))
        checked.extend(_checked_log(a, profile, context, log))
        if a.json:
            return json.dumps([{"engine": c.engine, "verdict": c.verdict(),
                                "lines": log_check.check_rows(c)} for c in checked], indent=2)
        return "\n".join(line for c in checked for line in log_check.check_report(c))

    output = _counting_requests(model, with_given_budget(args, model), command)
    output = replace(output, status=int(any(c.differs for c in checked)))
    if log is not None and output.status:
        output = replace(output, notes=output.notes + _logged_run_notes(
            *counted[0], log_check.logged_run(log_check.read_log(log)), model))
    options = strategy_cli.options_from_args(args)
    idle = idle_option_notes(options, model.profile, STRATEGIES)
    return replace(output, notes=output.notes + strategy_cli.replica_notes(args)
                   + sglang_page_notes(args, model.profile, options)
                   + sglang_chunk_notes(args, model.profile, options, STRATEGIES)
                   + idle + checkpoint_notes(options, model, _gpu_named(args)))


# The flag that sets each of a log's run's settings (``log_check.logged_changes``' names)
_LOGGED_FLAGS = {"tp": "--tp", "sglang_attn_dp_size": "--attn-dp-size",
                 "mamba_cache_mode": "--mamba-cache-mode", "vllm_blocks": "--vllm-blocks",
                 "kv_memory": "--budget", "sglang_budget": "--budget", "context": "--context",
                 "sglang_chunked_prefill_size": "--sglang-chunked-prefill-size"}
# ... and the RunSettings field each sets
_SETTING_FIELDS = {"sglang_attn_dp_size": "attn_dp",
                   "sglang_chunked_prefill_size": "chunk"}


def _logged_run_notes(args: argparse.Namespace, context: int | None, run: log_check.LoggedRun,
                      model: GivenModel) -> tuple[str, ...]:
    """Where lines differ, the flags that check the log at its own run's settings
    (``log_check.logged_changes``: those these flags (``args``, with the budget they give) do
    not give), since at other settings every figure differs for that alone (the Compare
    page's offer). The blocks vLLM fits are known here only where --vllm-blocks gives them;
    the budget that sizes SGLang's pools as its log gives them is searched at the log's TP
    (raw bytes are one rank's: at theirs alone, and at another the note names --tp)."""
    options = strategy_cli.figures_options(args)
    profile = model.profile

    def at(taken: Mapping[str, object]) -> log_check.RunSettings:
        then = replace(now, **{_SETTING_FIELDS.get(name, name): value
                               for name, value in taken.items()
                               if name in ("tp", "context", *_SETTING_FIELDS)})
        ranked = profile if then.tp == now.tp else model.profile_at(then.tp)
        if ranked is None:
            return replace(then, sglang_tokens=None, sglang_state_slots=None,
                           sglang_budget=None)
        return _with_sglang_pool(then, ranked, replace(
            options, sglang_attn_dp_size=then.attn_dp, sglang_chunked_prefill_size=then.chunk,
            mamba_cache_mode=taken.get("mamba_cache_mode", options.mamba_cache_mode)),
            args.budget)

    now = _with_sglang_pool(log_check.RunSettings(
        tp=profile.tp, attn_dp=options.sglang_attn_dp_size,
        mamba_cache_mode=options.mamba_cache_mode, context=context,
        chunk=options.sglang_chunked_prefill_size,
        vllm_blocks=(args.vllm_blocks,) if getattr(args, "vllm_blocks", None) else (),
        # with --vllm-blocks its Available line is elided: the budget is the blocks'
        available=() if getattr(args, "vllm_blocks", None) else (
            f"{format_gib(args.budget)} GiB",),
        gpu_chunk=options.sglang_chunked_prefill_size if (
            getattr(args, "gpu_memory", None) is not None
            and getattr(args, "sglang_chunked_prefill_size", None) is None
            and options.sglang_chunked_prefill_size != CHUNKED_PREFILL_ASSUMED) else None),
        profile, options, args.budget)
    changes = log_check.logged_changes(run, now, at)
    if not changes:
        return ()
    replaced = []  # the flags those take the place of: the CLI refuses both
    if {"kv_memory", "sglang_budget", "vllm_blocks"} & changes.keys():
        if getattr(args, "gpu_memory", None) is not None:
            replaced.append("--gpu-memory")
        elif getattr(args, "vllm_blocks", None) is not None and "vllm_blocks" not in changes:
            replaced.append("--vllm-blocks")
    if "sglang_attn_dp_size" in changes and getattr(args, "enable_dp_attention", False):
        replaced.append("--enable-dp-attention --dp-size")  # it sets D where --attn-dp-size is 1
    flags = " ".join(f"{_LOGGED_FLAGS[name]} "
                     + (format_size(value) if name == "sglang_budget"
                        else str(value).replace(" ", ""))
                     for name, value in changes.items())
    instead = f" (in place of {' and '.join(replaced)})" if replaced else ""
    return (f"note: this log's run had {flags}{instead}: every figure differs at other "
            "settings, so check it again with those",)


def _with_sglang_pool(settings: log_check.RunSettings, profile: CacheProfile,
                      options: StrategyOptions, budget: int) -> log_check.RunSettings:
    """``settings`` with SGLang's token pool and state slots at ``budget`` there, and the
    search for the
    budget that gives it a log's (``sizing.sglang_budget_search``)."""
    r = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=settings.context,
                     options=options)
    return replace(settings, **log_check.sglang_pool_settings(r),
                   sglang_budget=sglang_budget_search(profile, settings.context, options))


def _read_log(path: str) -> str:
    """The text of --check-log's file (``-``: stdin), as much as ``log_check`` reads; a
    UsageError naming the path and the fix where it cannot be read or is no log's text."""
    limit = 4 * log_check.MAX_LOG_CHARS  # UTF-8 takes at most 4 bytes a character
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as file:
                data = file.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"--check-log {quoted(path)}: cannot read it ({exc.strerror or exc}): "
                         "give an engine's log file, or - to read it from stdin") from None
    if len(data) > limit:
        raise UsageError(f"--check-log {quoted(path)} is over {limit:,} bytes: give the "
                         f"engine's start-up part (this check reads "
                         f"{log_check.MAX_LOG_CHARS:,} characters)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--check-log {quoted(path)}: byte {exc.start:,} "
                         f"({data[exc.start:exc.start + 1]!r}) is not UTF-8 text: give the "
                         "engine's log as text") from None
    try:
        return log_check.check_text(text)
    except ValueError as exc:
        raise UsageError(f"--check-log {quoted(path)}: {exc}") from None


def _checked_log(args: argparse.Namespace, profile: CacheProfile, context: int | None,
                 log: str) -> list[log_check.LogCheck]:
    """FlatKV's start-up lines of each engine at these settings checked against ``log``, for
    the engines whose lines it holds; ValueError where it holds none of either's."""
    lines = log_check.read_log(log)
    if not lines:
        raise ValueError(f"--check-log {quoted(args.check_log)} holds no line of text: give the "
                         "engine's start-up log, from its start to its KV cache lines")
    checks = [log_check.check_result(r, lines) for r in strategy_cli.compared(args, profile,
                                                                              context)
              if r.strategy in ENGINE_NAMES and r.applies and r.extras.get("log_lines")]
    if not checks:
        raise ValueError(f"--check-log {quoted(args.check_log)}: neither "
                         f"{' nor '.join(ENGINE_NAMES.values())} starts at these settings, so "
                         "FlatKV has no start-up line to check (compare without --check-log "
                         "says why): give settings an engine starts at")
    if not (found := [c for c in checks if c.found]):
        reads = log_check.detect_engine(lines)
        said = f" (it reads as {ENGINE_NAMES[reads]}'s)" if reads else ""
        raise ValueError(f"--check-log {quoted(args.check_log)}: none of the start-up lines "
                         f"{' or '.join(ENGINE_NAMES[c.engine] for c in checks)}"
                         f" logs at these settings is in its {count_text(len(lines), 'line')}"
                         f"{said}: give the log of a run at these settings, from its start to "
                         "its KV cache lines")
    return found


def _gpu_named(args: argparse.Namespace) -> str:
    """The GPU preset --gpu-memory names ("H100 80GB"), or "" for a size or none."""
    return getattr(args, "gpu_memory", None) or ""


def checkpoint_notes(options: StrategyOptions, model: GivenModel,
                     gpu: str = "") -> tuple[str, ...]:
    """Where a Mamba2 model runs align without the prefill checkpoint block vLLM 0.32 and
    later keep, or a GDN model on ``gpu`` (--gpu-memory's name) whose prefill runs on
    FlashInfer there (0.33 and later): the flag that matches their logs (the Compare page's
    note)."""
    profile = model.profile
    kept = checkpoint_blocks_kept(profile, gpu if gpu in GPU_PRESETS else None,
                                  set(model.gdn_key_head_dims))
    gdn_gpu = gpu if kept else ""
    return (f"note: {text}",) if (text := prefill_checkpoint_text(
        options, profile, fix="give --prefill-checkpoint-blocks 1", gdn_gpu=gdn_gpu)) else ()


def sglang_page_notes(args: argparse.Namespace, profile: CacheProfile,
                      options: StrategyOptions) -> tuple[str, ...]:
    """Where --gpu-memory names a GPU on which SGLang runs pages of more than a token when
    not told, and --sglang-page-size is not that page: the page its default run takes."""
    default = sglang_default_page(_gpu_named(args), profile, options)
    if default is None or options.sglang_page_size == default.page:
        return ()
    return (f"note: {default.said}: --sglang-page-size {default.page} matches such a run's "
            "log",)


def sglang_chunk_notes(args: argparse.Namespace, profile: CacheProfile,
                       options: StrategyOptions, strategies: Sequence[str]) -> tuple[str, ...]:
    """Where SGLang's figures read its chunked prefill size here, none is told, and the GPU
    --gpu-memory names runs another than the 8,192 of an H100 or H200 (a B200's 16,384): the
    chunk they take, which the flag sets."""
    if (options.sglang_chunked_prefill_size is not None
            or "sglang_chunked_prefill_size" not in acting_engine_options(profile, options,
                                                                          strategies)):
        return ()
    chunk = strategy_cli.figures_options(args).sglang_chunked_prefill_size
    if chunk == CHUNKED_PREFILL_ASSUMED:
        return ()
    return (f"note: SGLang's figures take a prefill chunk of {chunk:,} tokens, its own "
            f"--chunked-prefill-size on --gpu-memory {args.gpu_memory} (it picks it by the "
            "GPU's memory): --sglang-chunked-prefill-size sets another",)


def _bench_command(args: argparse.Namespace) -> CommandOutput:
    model = given_model(args)
    return CommandOutput(bench_cli.bench_text(args, model.profile), model.stderr_notes())


# The options the planner reads without --strategy; the others act on layouts' figures.
_PLANNER_OPTIONS = ("block_size", "alignment", "reserved_bytes_per_block")
# The layouts that read each of the others, and the block size and alignment (the planner's,
# which some layouts read too): the app's engine options, the two-level layout's alignment,
# and the workload margin of the paged layouts (the first is the one suggested). SGLang reads
# neither the block size nor the alignment (its page is --sglang-page-size); vLLM and aliased
# read the block size alone (vLLM's page is a multiple of max(--kernel-block-size,
# --block-size)); flat, per-component and lcm (its candidate pages) read both.
# --reserved-bytes-per-block is per-component's, refused on its own (_plan_strategy).
_READ_BY = {"block_size": ("flat", "per-component", "vllm", "aliased", "lcm"),
            "alignment": ("flat", "per-component", "lcm"),
            **{o.field: o.read_by for o in ENGINE_OPTIONS},
            "lcm_alignment_bytes": ("lcm",),
            "margin": ("flat", "per-component", "vllm", "aliased", "lcm")}
# What a layout reads in place of an option it does not, said beside the refusal.
_READ_INSTEAD = {("block_size", "sglang"): "SGLang's page is --sglang-page-size",
                 ("alignment", "sglang"): "SGLang's page is --sglang-page-size",
                 ("alignment", "vllm"): "vLLM's page is a multiple of max(--kernel-block-size, "
                                        "--block-size)",
                 ("alignment", "aliased"): "aliased pages hold --block-size tokens as given"}


def _flag_as_typed(field: str, value: object) -> str:
    """The flag that sets option ``field`` to ``value``: ``--mamba-cache-mode``, and for an
    option turned off ``--no-sglang-swa-pool``."""
    return f"--{'no-' if value is False else ''}{field.replace('_', '-')}"


def idle_option_notes(options: StrategyOptions, profile: CacheProfile,
                      strategies: Sequence[str]) -> tuple[str, ...]:
    """A note for each engine option set to other than its default that changes no figure of
    ``strategies`` for this model (``engine_options.acting_engine_options``): the figures are right,
    but a command that names the option reads as if it counted."""
    defaults = StrategyOptions()
    acting = acting_engine_options(profile, options, strategies)
    notes = []
    for option in ENGINE_OPTIONS:
        value = getattr(options, option.field)
        if value == getattr(defaults, option.field) or option.field in acting:
            continue
        if any(option.field in strategy_fields(s, profile) for s in strategies):
            why = idle_engine_option(option, profile, options)  # another option idles it
        elif all(model_blocker(s, profile) for s in strategies if s in option.read_by):
            why = "no layout that reads it serves this model"
        else:  # no layers of its kind, or a page or mode the model fixes
            why = "this model gives it nothing to act on"
        notes.append(f"note: {_flag_as_typed(option.field, value)} changes no figure here: {why}")
    return tuple(notes)


# Why a layout that reads --block-size / --alignment may take no figure from it.
_PAGE_IDLE_WHY = {
    ("alignment", "lcm"): "lcm tries pages at multiples of it only where --block-size pads a "
                          "group past --lcm-padding-bound, and here it does not",
    ("block_size", "vllm"): "vLLM's page is a multiple of max(kernel block, block size), and "
                            "here the kernel block or the state rows set it",
}


def idle_page_notes(args: argparse.Namespace, profile: CacheProfile,
                    options: StrategyOptions) -> tuple[str, ...]:
    """A note for --block-size or --alignment set off its default where ``--strategy`` reads
    it but its figures are those without it (lcm's alignment where the block size asked meets
    the padding bound): the figures are right, but the command reads as if it counted."""
    defaults = StrategyOptions()

    def figures(opts: StrategyOptions) -> dict[str, object]:
        return run_strategy(args.strategy, profile, budget_bytes=args.budget,
                            context_tokens=None, options=opts).to_dict()

    notes = []
    for field in ("block_size", "alignment"):
        value = getattr(options, field)
        if value == getattr(defaults, field) or args.strategy not in _READ_BY[field]:
            continue
        if figures(options) == figures(replace(options, **{field: getattr(defaults, field)})):
            why = _PAGE_IDLE_WHY.get((field, args.strategy),
                                     "this model gives it nothing to act on")
            notes.append(f"note: --{field.replace('_', '-')} {value} changes no figure here: "
                         f"{why}")
    return tuple(notes)


def _option_not_read(options: StrategyOptions, strategy: str | None,
                     budget_reads: Callable[[str], bool] = lambda field: False,
                     ) -> tuple[str, str, str] | None:
    """The flag as typed (``--mamba-cache-mode``, ``--no-sglang-swa-pool``) of the first option
    set to other than its default that ``strategy`` (None: the planner alone) does not read,
    nor the budget (``budget_reads``: --vllm-blocks sizes it by vLLM's block at the options
    given), and a layout that does, with what ``strategy`` reads instead where that says more;
    None where there is none. plan would print the same figures and drop such an option
    unsaid."""
    defaults = StrategyOptions()
    for f in fields(StrategyOptions):
        value = getattr(options, f.name)
        if (f.name == "reserved_bytes_per_block" or value == getattr(defaults, f.name)
                or (f.name in _PLANNER_OPTIONS if strategy is None
                    else strategy in _READ_BY[f.name]) or budget_reads(f.name)):
            continue
        instead = _READ_INSTEAD.get((f.name, strategy), "")
        return _flag_as_typed(f.name, value), _READ_BY[f.name][0], instead and f" ({instead})"
    return None


def _vllm_blocks_read(model: GivenModel, args: argparse.Namespace,
                      options: StrategyOptions) -> Callable[[str], bool]:
    """Whether an option changes the budget --vllm-blocks gives (vLLM's block bytes at the
    options, ``with_vllm_blocks``): such an option is read by every layout's figures. Without
    --vllm-blocks no option does (the budget is --budget's or --gpu-memory's)."""
    if getattr(args, "vllm_blocks", None) is None:
        return lambda field: False
    defaults = StrategyOptions()

    def reads(field: str) -> bool:
        if "vllm" not in _READ_BY.get(field, ()):
            return False
        unset = replace(options, **{field: getattr(defaults, field)})
        try:
            return vllm_block_bytes(model.profile, unset) != args.vllm_block_bytes
        except ValueError:  # vLLM does not start without it: it sizes the budget
            return True

    return reads


def format_analysis(analysis: PlanAnalysis, *, title: str = "", max_slots: int = 12) -> str:
    """The plan as a terminal report: why P, totals, dead weight, then the slot rows."""
    t = analysis.totals
    out = [f"Plan ({analysis.planner}){': ' + title if title else ''}", ""]
    out += ["Why this block size:"] + [f"  {line}" for line in analysis.why_block_size()]
    out += [
        "",
        text_table(
            ["figure", "value"],
            [
                ["block_size (P)", f"{t.block_size:,} tokens"],
                ["block_bytes", exact_bytes(t.block_bytes)],
                ["num_blocks", f"{t.num_blocks:,}"],
                # no history row: a page id holds no tokens (the Layout page's dash)
                ["token slots (num_blocks x P)", f"{t.token_slots:,}" if any(
                    g.group_id != LINEAR_ATTENTION for g in analysis.groups)
                 else "- (no attention layer: no token history)"],
                ["budget", exact_bytes(t.budget_bytes)],
                # rows in every block, whoever owns it; `compare` splits them by owner
                ["KV history rows (every block)", exact_bytes(t.kv_history_bytes)],
                ["state rows (every block)", exact_bytes(t.state_bytes)],
                ["reserved", exact_bytes(t.reserved_bytes)],
                ["unused", exact_bytes(t.unused_bytes)],
                # packed slabs: what padding every row to the page row would add; one tensor
                # per component has no page row to pad to
                ["uniform-page padding (not allocated)", exact_bytes(t.uniform_padding_bytes)]
                if analysis.planner == "packed" else
                ["padding (a tensor per component: none)", exact_bytes(t.uniform_padding_bytes)],
            ],
        ),
        "(rows by tensor, in every block whichever group owns it; --strategy flat splits the "
        "same bytes by the group a page id goes to, and counts the other groups' rows as "
        "dead_weight)",
    ]
    out += [
        "",
        "Dead weight of the single page-id space (per block id owned by a group):",
        text_table(
            ["group", "layers", "used B/block", "dead B/block", "dead share"],
            [
                [
                    g.group_id,
                    g.num_layers,
                    f"{g.used_bytes_per_block:,}",
                    f"{g.dead_bytes_per_block:,}",
                    f"{g.dead_share:.2%}",
                ]
                for g in analysis.groups
            ],
        ),
    ]
    rows = []
    for s in analysis.slots[:max_slots]:
        rows.append(
            [
                s.name,
                f"{s.row_bytes:,}",
                f"{s.tensor_bytes:,}",
                " | ".join(
                    f"{b.group_id}[{b.layer}].{b.component}@{b.offset:,}:{b.nbytes_per_block:,}"
                    for r in s.rows
                    for b in r.bindings
                ),
            ]
        )
    out += [
        "",
        f"Slot tensors ({len(analysis.slots)}):",
        text_table(
            ["tensor", "row B", "tensor B", "bindings (group[layer].component@offset:bytes)"], rows
        ),
    ]
    if len(analysis.slots) > max_slots:
        out.append(f"... {len(analysis.slots) - max_slots} more slot tensors (--json lists all)")
    return "\n".join(out)


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

    compare = sub.add_parser("compare", help="every engine layout side by side")
    add_profile_arguments(compare)
    add_plan_arguments(compare, planner=False)
    strategy_cli.add_strategy_arguments(compare, include_strategy=False)
    compare.add_argument("--requests", type=_positive_int, default=None, metavar="R",
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


_GIVEN = "_options_given"  # the namespace's record of the options met, dest -> as typed


class _Once:
    """An option's action that refuses to be met twice in one command line: argparse keeps the
    last value silently (``--budget 80GB --budget 1GB`` planned 1 GB; ``--sglang-swa-pool
    --no-sglang-swa-pool`` read as off), so a copied command with an option left in would plan
    something else than it says."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if (first := given.get(self.dest)) is not None:
            again = "again" if first == option_string else f"after {first}"
            parser.error(f"{option_string} is given {again}: give "
                         + ("it once" if first == option_string else "one of them"))
        given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


def _given_once(parser: argparse.ArgumentParser) -> None:
    """Every option of ``parser`` (but --help) refuses a second mention (``_Once``)."""
    for action in parser._actions:
        if (action.option_strings and not isinstance(action, (argparse._HelpAction, _Once))):
            action.__class__ = type(f"Once{type(action).__name__}", (_Once, type(action)), {})


# Library fields whose command-line option has another name.
_OPTION_DEST = {"cpu_threads": "threads", "budget_bytes": "budget", "context_tokens": "context",
                "state_const_bytes": "state"}
# Fields a config.json sets too: its message names where to set it, flag or config.
_MODEL_FIELDS = {"sliding_window", "attention_chunk_size"}
# A field, then a list index (dropped: the flag's value is the list) or a state name (kept).
_LEADING_FIELD = re.compile(r"^([a-z][a-z0-9_]*)(?:\[\d+\]|\['([^']*)'\])?(?= )")


def _options(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's dest and its long flag, over every subcommand."""
    flags: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags.update(_options(sub))
        elif action.option_strings:
            flags[action.dest] = max(action.option_strings, key=len)
    return flags


def in_option_terms(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with the library field it starts with (``mamba_full_memory_ratio is
    '0'``) named by the option the user typed (``--mamba-full-memory-ratio is '0'``)."""
    match = _LEADING_FIELD.match(message)
    if match is None or match[1] in _MODEL_FIELDS:
        return message
    flag = _options(parser).get(_OPTION_DEST.get(match[1], match[1]))
    if flag is None:
        return message
    return flag + (f" {match[2]}" if match[2] else "") + message[match.end():]


def _unknown_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """Why the first --option of ``argv`` that its command does not know (nor abbreviates), or
    the first word after the command that no option takes as its value (no command has
    positional arguments), is refused, which argparse would say only after a missing required
    option ("--budget is required" for a misspelt --budgte), and for a stray word without the
    --help pointer ("unrecognized arguments: extra"); None where every token is known."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    at = next((i for i, t in enumerate(argv) if not t.startswith("-")), len(argv))
    if at < len(argv) and argv[at] not in commands.choices:
        return None  # a misspelt command, or an option's value before it: argparse says
    command = argv[at] if at < len(argv) else None
    known = (commands.choices[command] if command else parser)._option_string_actions
    where = f"{PROG} {command}" if command else PROG
    after_dashes = False  # past "--", every token is a positional: none is wanted
    for i, token in enumerate(argv[at + 1:] if command else argv):
        if token == "--" and not after_dashes:
            after_dashes = True
            continue
        name = token.split("=", 1)[0]
        previous = argv[at + i] if command else None  # the option this may be the value of
        is_value = (not after_dashes and previous is not None and previous.startswith("-")
                    and "=" not in previous and _takes_a_value(known, previous))
        if after_dashes or (command and not token.startswith("-") and not is_value):
            # "--gpu-memory H100 80GB" unquoted: the name's second word is the stray one
            gpu = _gpu_name(f"{(previous or '').split('=', 1)[-1]} {token}")
            if not after_dashes and gpu in GPU_PRESETS:
                return (f"unrecognized argument {token}: a GPU's name holds a space, so quote "
                        f"it: --gpu-memory '{gpu}'")
            return f"unrecognized argument {token}: {where} --help lists the options"
        if (name.startswith("--") and not any(k.startswith(name) for k in known)
                and not is_value):
            return f"unrecognized argument {name}: {where} --help lists the options"
    return None


def _takes_a_value(known: Mapping[str, argparse.Action], option: str) -> bool:
    """Whether ``option`` (as typed, perhaps abbreviated) takes a value, so that the token
    after it is that value, whatever it looks like."""
    actions = {a for k, a in known.items() if k.startswith(option)}
    return len(actions) == 1 and actions.pop().nargs != 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if unknown := _unknown_option(parser, argv):
            raise UsageError(unknown)
        args = parser.parse_args(argv)
        vars(args).pop(_GIVEN, None)
        output = args.run(args)
    except ValueError as exc:  # UsageError included
        message = in_option_terms(" ".join(str(exc).split()), parser)
        print(f"{PROG}: error: {message}", file=sys.stderr)
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
    return output.status
