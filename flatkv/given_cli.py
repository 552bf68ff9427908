"""What every command reads off its command line besides its own options: the model and the
budget.

The model (``add_profile_arguments`` / ``given_model``): a preset, a Hugging Face config.json or
an exported spec (``model_cli``'s options), or raw bytes (--layers, --kv-bytes-per-slot,
--state ...), read into a ``GivenModel``. The plan's options and the budget
(``add_plan_arguments`` / ``with_given_budget``): --budget as given, or derived from
--gpu-memory or --vllm-blocks, with the note and the error text that say where it came from
(``budget_notes``, ``explain_budget``). Bad input is a ``UsageError`` naming the flag, which
``flatkv.cli.main`` prints as one line, exiting 2; every command-line module raises it, so it
lives here, at the bottom of their imports.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from flatkv import model_cli, strategy_cli
from flatkv.analysis import PLANNERS
from flatkv.budget import (
    DEFAULT_GPU,
    DEFAULT_MEMORY_FRACTION,
    GPU_PRESETS,
    MAX_VLLM_BLOCKS,
    MEM_FRACTION_DECIMALS,
    MIN_MEM_FRACTION,
    MIN_VLLM_BLOCKS,
    blocks_budget,
    cache_budget,
    fraction_text,
    gpu_name,
    takes_mem_fraction,
    too_many_decimals,
)
from flatkv.models import mtp_layers_not_full
from flatkv.patterns import parse_layer_pattern
from flatkv.plan import (
    CHUNKED_ATTENTION,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    bound_fix,
    bound_refusal,
)
from flatkv.profile import MAX_ROW_BYTES, MAX_WINDOW, WINDOWED, CacheProfile
from flatkv.strategies.base import StrategyOptions
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategies.vllm_releases import RECENT_VLLM_BLOCK_SIZE
from flatkv.units import (
    decimal_number,
    format_bytes,
    gpu_memory_size,
    memory_size,
    parse_named_sizes,
    parse_size,
    parse_tokens,
    positive_size,
    quoted,
    renamed,
)


class UsageError(ValueError):
    """Bad command-line input; main() prints it as one line and exits 2."""


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
        "--state", default=None,
        help="state tensors of one linear layer, e.g. conv=49152,ssm=2097152"
    )
    group.add_argument(
        "--sliding-window", default=None, help="tokens a sliding layer keeps (e.g. 4096, 4K)"
    )
    group.add_argument(
        "--attention-chunk-size", default=None,
        help="tokens of a chunk of the chunked layers (Llama 4's chunked local attention)"
    )
    group.add_argument(
        "--ssm-element-bytes", type=positive_int, default=None, metavar="N",
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
    # the profile at another TP, None where the model does not split over it (raw bytes: at
    # none, they are one rank's)
    profile_at: Callable[[int], CacheProfile | None] = lambda tp: None

    def stderr_notes(self) -> tuple[str, ...]:
        """The notes as one line, as the app shows them beside the figures."""
        return (f"note on this model: {' '.join(self.notes.split())}",) if self.notes else ()


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
                          profile_at=lambda tp: spec.with_options(tp=tp).profile()
                          if spec.splits_over(tp) else None)
    return GivenModel(_raw_profile(args), raw=True)


def _refuse_raw_bytes_beside_a_model(args: argparse.Namespace) -> None:
    """Raw-bytes options beside a model would be ignored: refused instead."""
    raw = [flag for flag, value in (  # each None where not given ('' given empty is given)
        ("--layers", args.layers), ("--kv-bytes-per-slot", args.kv_bytes_per_slot),
        ("--sliding-kv-bytes-per-slot", args.sliding_kv_bytes_per_slot),
        ("--state", args.state), ("--sliding-window", args.sliding_window),
        ("--attention-chunk-size", args.attention_chunk_size),
        ("--ssm-element-bytes", args.ssm_element_bytes))
        if value is not None]
    if raw:
        raise UsageError(f"give either a model (--preset, --hf-config, --model-file) or "
                         f"raw bytes ({', '.join(raw)}), not both: the model's own values "
                         "would be used and yours ignored")


def _window_tokens(text: str | None, flag: str, label: str, args: argparse.Namespace,
                   labels: list[str]) -> int | None:
    """--sliding-window's / --attention-chunk-size's tokens, None where not given; given
    beside no layer of ``label``, or not given beside such layers, refused in the flags' terms
    as --state is (the profile's words, "drop sliding_window", name no option)."""
    if text is None:
        if label in labels:
            windowed = WINDOWED[label]
            example = 8192 if label == CHUNKED_ATTENTION else 4096  # Llama 4's chunk, a window
            raise UsageError(f"--layers {quoted(args.layers)} has {windowed.layers} but no "
                             f"{flag} gives their {windowed.noun}: add e.g. {flag} {example} "
                             "(tokens)")
        return None
    tokens = parse_tokens(text, flag, maximum=MAX_WINDOW)
    if label not in labels:
        name = WINDOWED[label].name
        raise UsageError(f"{flag} is given but --layers {quoted(args.layers)} has no {name} "
                         f"layer: drop {flag} or add {name} layers")
    return tokens


def _sliding_kv_bytes(text: str | None) -> int | None:
    """--sliding-kv-bytes-per-slot's bytes, None where not given (sliding layers keep
    --kv-bytes-per-slot's)."""
    flag = "--sliding-kv-bytes-per-slot"
    if text is None:
        return None
    nbytes = positive_size(text, flag, f"the sliding layers' bytes a token (1 or more), or "
                           f"drop {flag} where they keep --kv-bytes-per-slot's")
    # bounded here, in the flag's words: the profile's bound says "or None" to a Python caller
    return _row_bytes(flag, text, nbytes,
                      hint=f", or drop {flag} where sliding layers keep --kv-bytes-per-slot's")


def _row_bytes(flag: str, text: str, nbytes: int, *, hint: str = "") -> int:
    """``nbytes``, read from ``text`` for a row's bytes, bounded by MAX_ROW_BYTES as typed
    (``--kv-bytes-per-slot '2TiB' (2,199,023,255,552 B) is too large to be real: give
    1,099,511,627,776 or less``): the profile's bound names the bytes alone, a figure no one
    typed."""
    if (wrong := bound_refusal(nbytes, 0, MAX_ROW_BYTES)) is not None:
        raise ValueError(f"{flag} {quoted(text)} ({nbytes:,} B) {wrong}: "
                         f"{bound_fix(nbytes, 0, MAX_ROW_BYTES)}{hint}")
    return nbytes


def _raw_profile(args: argparse.Namespace) -> CacheProfile:
    """Bytes per TP rank as --layers, --kv-bytes-per-slot (and --sliding-kv-bytes-per-slot),
    --state, --sliding-window, --attention-chunk-size and --ssm-element-bytes give them."""
    if args.layers is None:  # (given empty: said so, below)
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
    try:
        labels = parse_layer_pattern(args.layers)
    except ValueError as exc:  # in the flag's name: "layer pattern 'zz'" named no option
        raise UsageError(renamed(str(exc), "layer pattern", args.layers,
                                 f"--layers {quoted(args.layers)}")) from None
    if args.kv_bytes_per_slot is None and any(label != LINEAR_ATTENTION for label in labels):
        # not given: the profile's "--kv-bytes-per-slot is 0" named a value no one typed
        raise UsageError(f"--layers {quoted(args.layers)} has attention layers, which need "
                         "--kv-bytes-per-slot: add it, the bytes one token adds to one "
                         "attention layer, e.g. --kv-bytes-per-slot 2048")
    state_text = args.state or ""  # not given, or given empty: no state tensors
    if state_text and LINEAR_ATTENTION not in labels:
        raise UsageError(f"--state is given but --layers {quoted(args.layers)} has no linear "
                         "(state) layer: drop --state or add linear layers")
    if not state_text.strip() and LINEAR_ATTENTION in labels:  # ' ' gives no bytes either
        raise UsageError(f"--layers {quoted(args.layers)} has linear (state) layers but no --state "
                         "gives their bytes: add e.g. --state conv=49152,ssm=2097152 (bytes per "
                         "layer per TP rank)")
    state = parse_named_sizes(state_text, field="--state")
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
        # not given: 0 (a model of state layers alone); given empty: said so, not read as 0
        kv_bytes_per_slot=0 if args.kv_bytes_per_slot is None else _row_bytes(
            "--kv-bytes-per-slot", args.kv_bytes_per_slot,
            parse_size(args.kv_bytes_per_slot, field="--kv-bytes-per-slot", whole=True)),
        sliding_kv_bytes_per_slot=_sliding_kv_bytes(args.sliding_kv_bytes_per_slot),
        state_const_bytes=state,
        sliding_window=_window_tokens(args.sliding_window, "--sliding-window",
                                      SLIDING_ATTENTION, args, labels),
        attention_chunk_size=_window_tokens(args.attention_chunk_size, "--attention-chunk-size",
                                            CHUNKED_ATTENTION, args, labels),
        ssm_element_bytes=args.ssm_element_bytes,
        name="custom",
    )


# --------------------------------------------------------------------------------------------
# The plan's options and the budget


def _fraction_argument(text: str) -> float:
    """--memory-fraction: a number (``units.decimal_number``: ``٠.٩`` and ``+0.9`` refused
    with their fix), and a word that is no number said so, with the fix."""
    try:
        value = decimal_number(text, quoted(text), takes=takes_mem_fraction)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value is None:
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a number: give the share of "
                                         "the GPU an engine may use, e.g. 0.9")
    return value


_count = strategy_cli.whole_argument_in(1)
# Digits of the largest count ``positive_int`` takes: 2**64 has 20, and no count here is larger
MAX_COUNT_DIGITS = 20


def positive_int(text: str) -> int:
    """A count or size of 1 or more (--block-size, --alignment, --ssm-element-bytes, compare's
    --requests: a page, an alignment, an element or a request count of 0 means nothing), read
    as every whole-number option reads one (``strategy_cli.whole_argument_in``), and refused
    here below 1 or past ``MAX_COUNT_DIGITS`` digits, where the strategy options leave their
    range to StrategyOptions: no later check refuses these with a fix (--ssm-element-bytes 0
    divided --state's ssm by zero; --block-size's names none)."""
    value = _count(text)
    if (wrong := bound_refusal(value, 1)) is not None:
        raise argparse.ArgumentTypeError(f"{value} {wrong}: {bound_fix(value, 1)}")
    if len(str(value)) > MAX_COUNT_DIGITS:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} has over {MAX_COUNT_DIGITS} digits, more than any count here: "
            "give one in digits, e.g. 12")
    return value


def _vllm_blocks(text: str) -> int:
    """--vllm-blocks: the N of vLLM's "N KV cache blocks" line, as many as a budget may be."""
    value = strategy_cli.read_whole_argument(text, MIN_VLLM_BLOCKS, MAX_VLLM_BLOCKS)
    if value is None or not MIN_VLLM_BLOCKS <= value <= MAX_VLLM_BLOCKS:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not a count of vLLM blocks: give the N of its \"Memory after "
            f"warmup: ... N KV cache blocks\" line, {MIN_VLLM_BLOCKS} to {MAX_VLLM_BLOCKS:,}")
    return value


def _size(field: str, *, whole: bool = False, memory: bool = False,
          weights: bool = False, positive: str = "") -> Callable[[str], int]:
    """A size argument; ``memory``: read as the app's memory fields read one, a bare number
    under a MiB (``44.59``) or bytes under a MiB (``70B``) refused as a unit left out;
    ``weights``: as the app's weights read (``70B`` is 140GB in bf16; 0 is none);
    ``positive``: the fix for 0 or a negative size (``positive_size``), which ``memory_size``
    alone asks to be 0 or more: --budget -1GB was told "give a size of 0 or more", and 0 then
    "--budget 0 must be positive: give 1 or more", where 1 is refused as a unit left out."""
    def parse(text: str) -> int:
        try:
            if positive:
                return positive_size(text, field, positive, memory_size, example="80GB")
            if memory:
                return memory_size(text, field, weights=weights)
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
        type=positive_int,
        default=StrategyOptions.block_size,
        help=f"requested tokens per page (default {StrategyOptions.block_size}, SPEC 3.1's "
        "anchor, as vLLM before 0.34 runs and any told it, but for a dense MLA cache: in "
        "fp8 on a Hopper FlashMLA's 64, on a Blackwell FLASHINFER_MLA's 32; vLLM 0.34 told "
        "no --block-size "
        f"runs {RECENT_VLLM_BLOCK_SIZE}: give {RECENT_VLLM_BLOCK_SIZE} to match its log)",
    )
    group.add_argument(
        "--alignment",
        type=positive_int,
        default=None,
        help="an inflated page size is a multiple of this (default: block size)",
    )
    budget = group.add_mutually_exclusive_group(required=default_budget is None)
    budget.add_argument(
        "--budget",
        default=default_budget,
        type=_size("--budget", memory=True, positive="a size such as 80GB or 10GiB"),
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
            "--gpu-memory", type=gpu_name, default=None, metavar="GPU",
            help="the budget as the app's sidebar derives it: one GPU's memory (80GB, or one "
            f"of {', '.join(repr(name) for name in GPU_PRESETS)} as nvidia-smi reports it, "
            "any case) x "
            "--memory-fraction, less --weights / TP")
        group.add_argument(
            "--memory-fraction", type=_fraction_argument, default=None, metavar="F",
            help=f"with --gpu-memory: the share an engine may use ({MIN_MEM_FRACTION} to 1, "
            f"at most {MEM_FRACTION_DECIMALS} decimals, as the app's slider), vLLM's "
            f"--gpu-memory-utilization (default {DEFAULT_MEMORY_FRACTION}, vLLM's before 0.20; "
            "0.92 from 0.20 to 0.33; vLLM 0.34 on CUDA takes 1.0 and sizes its cache after "
            "warm-up: give --vllm-blocks to match its log)")
        group.add_argument(
            "--weights", type=_size("--weights", memory=True, weights=True), default=None,
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
            gpu = gpu_memory_size(args.gpu_memory, "--gpu-memory")
        except ValueError as exc:
            raise UsageError(f"{exc} (or one of {', '.join(map(repr, GPU_PRESETS))})") from None
    fraction = (DEFAULT_MEMORY_FRACTION if args.memory_fraction is None
                else args.memory_fraction)
    # the app's link's rule (MIN_MEM_FRACTION), in its words; NaN too, which argparse's float
    # read from 'nan' or 'NaN'
    if not MIN_MEM_FRACTION <= fraction <= 1:
        what = ("is not a number (NaN)" if fraction != fraction
                else f"{fraction_text(fraction)} is outside {MIN_MEM_FRACTION}..1")
        raise UsageError(f"--memory-fraction {what}: give the share of the GPU an engine may "
                         "use, e.g. 0.9")
    if not takes_mem_fraction(fraction):  # the link's rule too: the slider shows 4 decimals
        raise UsageError(f"--memory-fraction {fraction_text(fraction)} "
                         f"{too_many_decimals(fraction)}")
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


def budget_source(args: argparse.Namespace) -> tuple[str, str] | None:
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
    source = budget_source(args)
    if source is None or "budget" not in message:
        return message
    return f"{message} (the budget is {source[0]}: {source[1]})"
