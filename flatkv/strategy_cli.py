"""Command-line face of the strategies: ``plan --strategy NAME`` and ``compare``.

``flatkv/cli.py`` owns the program and ``flatkv/given_cli.py`` the model arguments and
``--budget``/``--block-size``/``--alignment``/``--json``; this module adds the strategy
arguments, turns them into ``StrategyOptions`` and formats results as text or JSON.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from flatkv.budget import (
    GPU_ARCHITECTURES,
    GPU_COMPUTE_CAPABILITIES,
    GPU_PRESETS,
    compute_capability,
    gpu_arch_of,
    gpu_arch_text,
)
from flatkv.engine_options import ENGINE_FIELDS, engine_help
from flatkv.models import past_max_model_len_text
from flatkv.plan import check_int
from flatkv.profile import SPARSE_MLA_KERNEL_BLOCK_SIZE, CacheProfile
from flatkv.sizing import (
    ContextCurves,
    context_candidates,
    context_curves,
    least_budget_for_requests,
    plans_at_some_budget,
)
from flatkv.strategies import (
    CATEGORIES,
    CATEGORY_LABELS,
    CONCURRENCY_COLUMN,
    LOGGED_COLUMN,
    OLDER_LOGGED_COLUMN,
    STRATEGIES,
    StrategyOptions,
    StrategyResult,
    compare,
    logged_as,
)
from flatkv.strategies import run_strategy as _run_strategy
from flatkv.strategies.base import (
    MAMBA_CACHE_MODES,
    MAX_ATTN_DP_SIZE,
    SGLANG_KV_CACHE_DTYPES,
    SGLANG_RADIX_CACHE_STRATEGIES,
    ratio_text,
    sglang_kv_cache_dtype_named,
    start_up_log_title,
)
from flatkv.strategies.sglang import (
    CHUNKED_PREFILL_ASSUMED,
    SPECULATIVE_NOT_MODELLED,
    parse_chunked_prefill,
    sglang_default_chunked_prefill,
)
from flatkv.strategies.sglang_log import logged_padding
from flatkv.strategies.vllm_log import log_words, memory_log_note, with_available_elided
from flatkv.strategies.vllm_releases import (
    OLDER_VLLM_LOG,
    last_served_note,
)
from flatkv.strategy_notes import (
    attention_dp_text,
    kv_dtype_marks,
    kv_dtypes_apart_text,
    older_log_none,
    option_why_not_line,
    short_of_one_request_text,
    stored_kv_dtype,
    unlogged_why,
    why_not_line,
)
from flatkv.texttable import text_table
from flatkv.units import (
    MAX_BLOCK_SIZE,
    MAX_BYTES,
    concurrency_text,
    count_text,
    exact_bytes,
    format_bytes,
    memory_size,
    parse_tokens,
    quoted,
    shares_text,
    tokens_text,
    whole_example,
    whole_number,
)

# where a strategy command's context came from when --context is not given
CONTEXT_FROM_MODEL = ("context {:,} tokens, the model's max_model_len (vLLM's default "
                      "--max-model-len); --context sets another")
# ... where that length is vLLM's assumed one (the config gives none)
CONTEXT_ASSUMED = ("context {:,} tokens, the max_model_len vLLM assumes for a config.json with "
                   "no length field; --context sets another")


def _tokens_argument(flag: str) -> Callable[[str], int]:
    """An argparse type for a token count with vLLM's suffixes (``2K``, ``8192``); a bad entry
    is argparse's one-line error, in parse_tokens' words."""
    def parse(text: str) -> int:
        try:
            return parse_tokens(text, flag)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def read_whole_argument(text: str, least: int, most: int | None,
                        example: int | None = None) -> int | None:
    """The whole number ``text`` writes (``units.whole_number``: ASCII digits, ``1_000`` read;
    ``١٢`` and ``+3`` refused with their fix, one from ``least`` to ``most``, else
    ``example``, by default the one nearest 12, as argparse's one line), None where it writes
    none, which the option words with what it takes: one reader for every whole-number
    option, so that each refuses the same typing alike."""
    try:
        return whole_number(text, quoted(text), least=least, most=most, example=example)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def whole_argument_in(least: int, most: int | None = None,
                      example: int | None = None) -> Callable[[str], int]:
    """An argparse type for a whole number (``read_whole_argument``); argparse's one-line error
    where it is none. Whether 0 is meaningful is the option's ``least``: 0 where a count may be
    none (--speculative-tokens, --margin, --threads), 1 where it may not (a size, a TP, a
    request count). A number out of ``least`` to ``most`` is read, for the option's own check
    (StrategyOptions') to refuse in its words, with a fix in its terms ("or leave it unset for
    the model's own"); the bounds choose only the fix a refusal suggests, so that it is one the
    option takes: ``--tp ٠`` was told "e.g. 0", which --tp then refused as not positive. An
    option with no such check refuses the range itself (``given_cli.positive_int``).
    ``example`` is the fix where the typed value gives none (by default the one nearest 12)."""
    example = whole_example(least, most) if example is None else example

    def whole(text: str) -> int:
        value = read_whole_argument(text, least, most, example)
        if value is None:
            raise argparse.ArgumentTypeError(f"{quoted(text)} is not a whole number: give one "
                                             f"in digits, e.g. {example}")
        return value

    return whole


whole_argument = whole_argument_in(0, example=2)  # a count of 0 or more
positive_argument = whole_argument_in(1, example=2)  # a count of 1 or more
attn_dp_argument = whole_argument_in(1, MAX_ATTN_DP_SIZE, example=2)


def chunked_prefill_argument(text: str) -> int:
    """An argparse type for SGLang's --chunked-prefill-size (``sglang.parse_chunked_prefill``:
    tokens, or chunked prefill off); a bad entry is argparse's one-line error."""
    try:
        return parse_chunked_prefill(text, "--sglang-chunked-prefill-size")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def radix_cache_strategy_argument(text: str) -> str:
    """An argparse type for SGLang's --mamba-radix-cache-strategy: one of its values
    (``SGLANG_RADIX_CACHE_STRATEGIES``)."""
    if text in SGLANG_RADIX_CACHE_STRATEGIES:
        return text
    raise argparse.ArgumentTypeError(
        f"{quoted(text, 40)} is not one of {', '.join(SGLANG_RADIX_CACHE_STRATEGIES)}")


def kv_cache_dtype_argument(text: str) -> str:
    """An argparse type for SGLang's --kv-cache-dtype beside the KV dtype bfloat16
    (``SGLANG_KV_CACHE_DTYPES``; its "bf16" read as bfloat16, as SGLang reads it); its fp8
    values say they are the KV dtype itself (--kv-dtype), which SGLang is told as it is."""
    value = sglang_kv_cache_dtype_named(text)
    if value in SGLANG_KV_CACHE_DTYPES:
        return value
    shown = quoted(text, 40)
    if text in ("fp8_e4m3", "fp8_e5m2"):
        # SGLang refuses fp8_e5m2 for DeepSeek's sparse attention (sglang.dsa_dtype_refusal),
        # which this type cannot tell: the fix names what every model takes
        dsa = (", or fp8_e4m3 or bfloat16 for DeepSeek's sparse attention, which SGLang "
               "refuses in fp8_e5m2" if text == "fp8_e5m2" else "")
        raise argparse.ArgumentTypeError(
            f"{shown} is the KV dtype itself, which SGLang is told as it is: give --kv-dtype "
            f"{text}{dsa} (and auto or bfloat16 here, which tell bfloat16 apart from SGLang's "
            "auto)")
    raise argparse.ArgumentTypeError(
        f"{shown} is not one of {', '.join(SGLANG_KV_CACHE_DTYPES)}")


def _sglang_flag(parser: argparse.ArgumentParser, name: str, **kwargs: Any) -> None:
    """An option SGLang takes as ``--NAME``: here ``--sglang-NAME`` beside the other SGLang
    options, and ``--NAME`` as one copies it from an SGLang command line; its value in
    StrategyOptions' ``sglang_`` field of that name."""
    parser.add_argument(f"--sglang-{name}", f"--{name}",
                        dest="sglang_" + name.replace("-", "_"), **kwargs)


# How an engine option's --help names the others: by its flag (an option SGLang takes as --NAME
# is --sglang-NAME first, ``_sglang_flag``).
ENGINE_FLAGS = {field: "--" + field.replace("_", "-") for field in ENGINE_FIELDS}


def _engine_help(field: str, own: str = "") -> str:
    """An engine option's --help: what the engines do with it as the app's tooltip says it too
    (``engine_help``), naming other options by their flags, and ``own``, what only the CLI
    says (its default, its flags)."""
    return engine_help(field, ENGINE_FLAGS) + (f" ({own})" if own else "")


def _add_vllm_arguments(parser: argparse.ArgumentParser, defaults: StrategyOptions) -> None:
    """The options vLLM names, from the kernel block size to its hybrid manager: the block a
    kernel reads and the state pages a request holds (--speculative-tokens, its
    num_speculative_tokens, drafts in SGLang too), in the order --help lists them."""
    parser.add_argument("--kernel-block-size", type=positive_argument,
                        default=defaults.kernel_block_size,
         metavar="A", help=_engine_help("kernel_block_size",
                                        "default: a raw model's own, else 16; DeepSeek-V3.2's "
                                        f"sparse MLA runs at {SPARSE_MLA_KERNEL_BLOCK_SIZE} "
                                        "whatever this says"))
    parser.add_argument("--mamba-cache-mode", choices=MAMBA_CACHE_MODES,
                        default=defaults.mamba_cache_mode,
                        help=_engine_help("mamba_cache_mode",
                                          f"default {defaults.mamba_cache_mode}"))
    parser.add_argument("--speculative-tokens", type=whole_argument,
                        default=defaults.speculative_tokens,
                        metavar="N", help=_engine_help(
                            "speculative_tokens", "--mtp-layer adds an MTP module's; default "
                            f"{defaults.speculative_tokens}"))
    parser.add_argument("--prefill-checkpoint-blocks", type=whole_argument,
                        default=defaults.prefill_checkpoint_blocks, metavar="K",
                        help=_engine_help("prefill_checkpoint_blocks",
                                          f"default {defaults.prefill_checkpoint_blocks}"))
    parser.add_argument("--mamba-chunk-size", type=positive_argument,
                        default=defaults.mamba_chunk_size,
                        help=_engine_help("mamba_chunk_size",
                                          "default: the model's own, as vLLM takes it"))
    parser.add_argument("--vllm-ssm-dtype", default=None, metavar="DTYPE",
         help=_engine_help("vllm_ssm_dtype",
                           "as --mamba-ssm-cache-dtype would; default: vLLM's own (auto)"))
    parser.add_argument("--vllm-hybrid-manager", action=argparse.BooleanOptionalAction,
         default=None, help=_engine_help("vllm_hybrid_manager",
                                         "--no-vllm-hybrid-manager turns it off"))


def _add_sglang_arguments(parser: argparse.ArgumentParser, defaults: StrategyOptions) -> None:
    """SGLang's options, from its pool ratios to its prefill chunk, each spelled as SGLang's
    own flag where one exists (``_sglang_flag``: --max-running-requests beside
    --sglang-max-running-requests)."""
    parser.add_argument("--mamba-full-memory-ratio", default=None, metavar="R",
         help=_engine_help("mamba_full_memory_ratio",
                           f"default {ratio_text(defaults.mamba_full_memory_ratio)}"))
    parser.add_argument("--swa-full-tokens-ratio", default=None, metavar="R",
         help=_engine_help("swa_full_tokens_ratio",
                           f"default {ratio_text(defaults.swa_full_tokens_ratio)}"))
    parser.add_argument("--sglang-slots-per-request", type=positive_argument,
         default=defaults.sglang_slots_per_request, metavar="S",
         help=_engine_help("sglang_slots_per_request", "default: SGLang's own"))
    _sglang_flag(parser, "max-running-requests", type=positive_argument,
         default=defaults.sglang_max_running_requests, metavar="N",
         help=_engine_help("sglang_max_running_requests", "default: SGLang's own"))
    _sglang_flag(parser, "max-mamba-cache-size", type=positive_argument,
         default=defaults.sglang_max_mamba_cache_size, metavar="M",
         help=_engine_help("sglang_max_mamba_cache_size", "default: SGLang's own"))
    parser.add_argument("--sglang-overlap-schedule", action=argparse.BooleanOptionalAction,
         default=None, help=_engine_help("sglang_overlap_schedule",
                                         "--no-sglang-overlap-schedule turns it off"))
    # SGLang's own spelling, which its refusals and a command line copied from it give
    parser.add_argument("--disable-overlap-schedule", dest="sglang_overlap_schedule",
         action="store_false", default=argparse.SUPPRESS,
         help="SGLang's own flag: --no-sglang-overlap-schedule")
    _sglang_flag(parser, "disable-radix-cache", action="store_true", default=None,
         help=_engine_help("sglang_disable_radix_cache"))
    _sglang_flag(parser, "attn-dp-size", type=attn_dp_argument,
         default=defaults.sglang_attn_dp_size,
         metavar="D", help=_engine_help("sglang_attn_dp_size",
                                        f"default {defaults.sglang_attn_dp_size}: none"))
    parser.add_argument("--enable-dp-attention", action="store_true",
         help="SGLang's older spelling of attention DP, as a command line copied from it "
         "gives it: with --dp-size D, --attn-dp-size D (where that is not told)")
    parser.add_argument("--dp-size", type=attn_dp_argument, default=None, metavar="N",
         help="SGLang's --dp-size: with --enable-dp-attention, the attention DP size; without "
         "it, N replicas of the whole model, each holding the figures shown")
    parser.add_argument("--sglang-page-size", type=whole_argument_in(
                            1, MAX_BLOCK_SIZE, example=defaults.sglang_page_size),
                        default=defaults.sglang_page_size,
         help=_engine_help("sglang_page_size", f"default {defaults.sglang_page_size}, as "
                           "SGLang on Hopper and Ampere"))
    _sglang_flag(parser, "mamba-track-interval", type=positive_argument,
         default=defaults.sglang_mamba_track_interval, metavar="T",
         help=_engine_help("sglang_mamba_track_interval",
                           f"default {defaults.sglang_mamba_track_interval}, as SGLang"))
    _sglang_flag(parser, "mamba-radix-cache-strategy", type=radix_cache_strategy_argument,
         default=None, metavar="{" + ",".join(SGLANG_RADIX_CACHE_STRATEGIES) + "}",
         help=_engine_help("sglang_mamba_radix_cache_strategy", "default auto, as SGLang"))
    # --sglang- alone: a bare --kv-cache-dtype is vLLM's too, whose values are --kv-dtype's
    parser.add_argument("--sglang-kv-cache-dtype", type=kv_cache_dtype_argument, default=None,
         metavar="{" + ",".join(SGLANG_KV_CACHE_DTYPES) + "}",
         help=_engine_help("sglang_kv_cache_dtype", "default auto, as SGLang"))
    parser.add_argument("--sglang-ssm-dtype", default=None, metavar="DTYPE",
         help=_engine_help("sglang_ssm_dtype",
                           "as SGLANG_MAMBA_SSM_DTYPE would; default: SGLang's own"))
    parser.add_argument("--sglang-swa-pool", action=argparse.BooleanOptionalAction,
         default=None, help=_engine_help("sglang_swa_pool", "--sglang-swa-pool and "
                                         "--no-sglang-swa-pool force it; default: SGLang's own"))
    _sglang_flag(parser, "chunked-prefill-size",
         type=chunked_prefill_argument, default=None, metavar="C",
         help=_engine_help("sglang_chunked_prefill_size", "default: SGLang's own on the GPU "
                           f"--gpu-memory names; {CHUNKED_PREFILL_ASSUMED:,} where none does"))


def add_strategy_arguments(
    parser: argparse.ArgumentParser, *, include_strategy: bool = True
) -> None:
    """--strategy (unless ``include_strategy`` is False), --context and the strategy options.
    Options given_cli.py already defines (--block-size, --alignment, --json) are left to it."""
    defaults = StrategyOptions()
    if include_strategy:
        parser.add_argument("--strategy", choices=STRATEGIES, default=None,
             help="lay the cache out as this engine / layout would (default: the flat plan)")
    # read as it is parsed (an int), so that a bad --context is told before argparse's missing
    # budget, which it checks after every argument: `compare --context -5` said only that one
    # of --budget --vllm-blocks --gpu-memory is required
    parser.add_argument("--context", default=None, metavar="L",
         type=_tokens_argument("--context"),
         help="context length in tokens for max concurrency and the workload: 262144, 256K "
         "(262,144) or 128k (128,000), suffixes as vLLM's --max-model-len reads them "
         "(default: the model's max_model_len, as vLLM's --max-model-len: from its config, "
         "or the 2,048 vLLM assumes where the config gives no length)")
    _add_vllm_arguments(parser, defaults)
    _add_sglang_arguments(parser, defaults)
    parser.add_argument("--max-batched-tokens", default=defaults.max_batched_tokens,
         type=_tokens_argument("--max-batched-tokens"), metavar="S",
         help=_engine_help("max_batched_tokens", f"default {defaults.max_batched_tokens}"))
    parser.add_argument("--vllm-async-scheduling", action=argparse.BooleanOptionalAction,
         default=None, help=_engine_help("vllm_async_scheduling", "default off"))
    parser.add_argument("--lcm-padding-bound", default=None, metavar="F",
         help=_engine_help("lcm_padding_bound",
                           f"default {ratio_text(defaults.lcm_padding_bound)}"))
    parser.add_argument("--lcm-alignment-bytes", type=positive_argument,
                        default=defaults.lcm_alignment_bytes,
         help="lcm: parent block bytes are a multiple of this (default "
         f"{defaults.lcm_alignment_bytes})")
    parser.add_argument("--margin", type=whole_argument, default=defaults.margin,
         help=f"workload: safety pages per group (default {defaults.margin})")
    # --gpu-memory's GPU sets it where a preset (``figures_options``), as the app's GPU pick
    # does; these flags where the budget names no preset's GPU (--budget, --vllm-blocks, a size)
    parser.add_argument("--gpu-arch", choices=list(GPU_ARCHITECTURES), default=None,
         help="the GPU's architecture, for a budget that names no GPU preset (--budget, "
         "--vllm-blocks, a --gpu-memory size): "
         f"{', '.join(map(gpu_arch_text, GPU_ARCHITECTURES))}. Both engines read it: vLLM's "
         "MLA backends (none for DeepSeek-V3.2 on SM 8.x, no fp8 MLA cache on SM 8.0) and "
         "SGLang's (DeepSeek's sparse attention in fp8 on a Blackwell). Default: not said, the "
         "figures a Hopper's and the notes saying what others do. A --gpu-memory preset sets "
         "it; another beside it is refused")
    parser.add_argument("--sglang-blackwell", action="store_true", default=None,
         help="shorthand for --gpu-arch blackwell: both engines run on a Blackwell GPU (a "
         "B200), where SGLang stores DeepSeek's sparse attention in fp8 (its trtllm DSA "
         "layout) and vLLM runs MLA on FLASHINFER_MLA; --gpu-memory \"B200 192GB\" implies it")


def options_from_args(args: argparse.Namespace) -> StrategyOptions:
    """StrategyOptions from parsed arguments: every field of the same name; one not given
    (absent or None) keeps its default (alignment's default is None: the block size). SGLang's
    older ``--dp-size N --enable-dp-attention`` is attention DP N where --attn-dp-size is 1,
    as SGLang turns it (parallel_hook.py 39-62)."""
    given = {f.name: getattr(args, f.name) for f in fields(StrategyOptions)
             if getattr(args, f.name, None) is not None}
    if (arch := told_gpu_arch(args)) is not None:
        given["gpu_compute_capability"] = GPU_ARCHITECTURES[arch]
    if (dp_size := getattr(args, "dp_size", None)) is not None:
        check_int("--dp-size", dp_size, minimum=1, maximum=MAX_ATTN_DP_SIZE,
                  hint="SGLang's --dp-size: with --enable-dp-attention the attention DP size "
                  "(a divisor of the TP), else the replicas of the whole model")
        if getattr(args, "enable_dp_attention", False) and given.get(
                "sglang_attn_dp_size", 1) == 1:
            given["sglang_attn_dp_size"] = dp_size
    return StrategyOptions(**given)


def replica_notes(args: argparse.Namespace) -> tuple[str, ...]:
    """SGLang's ``--dp-size N`` where it is not attention DP (without --enable-dp-attention, or
    beside an --attn-dp-size other than 1, where SGLang drops that flag: parallel_hook.py
    39-62): N replicas of the whole model, each holding the figures shown. The figures are a
    replica's; said so that a command copied from a DP run is not read as one model's."""
    dp_size = getattr(args, "dp_size", None)
    attn_dp = getattr(args, "sglang_attn_dp_size", None) or 1
    enabled = getattr(args, "enable_dp_attention", False)
    if dp_size is None or dp_size == 1 or (enabled and attn_dp == 1):
        return ()
    beside = (f" (beside --attn-dp-size {attn_dp}, SGLang reads --enable-dp-attention as adding "
              "nothing)" if enabled else "")
    return (f"note: --dp-size {dp_size} runs {dp_size} replicas of the whole model in SGLang"
            f"{beside}; the figures are one replica's, each of the {dp_size} holds as many",)


def told_gpu_arch(args: argparse.Namespace) -> str | None:
    """The GPU architecture told (``budget.GPU_ARCHITECTURES``' name): --gpu-arch's, or
    blackwell for --sglang-blackwell, its shorthand; None where neither is. Both, naming two,
    are refused (ValueError naming both)."""
    arch, blackwell = getattr(args, "gpu_arch", None), getattr(args, "sglang_blackwell", None)
    if blackwell and arch not in (None, "blackwell"):
        raise ValueError(f"--sglang-blackwell says the GPU is a Blackwell, but --gpu-arch "
                         f"{arch} says another: drop one of them")
    return "blackwell" if blackwell else arch


def arch_flag(args: argparse.Namespace) -> str:
    """The flag that told the architecture, as typed: "--gpu-arch ampere", "--sglang-blackwell";
    "" where neither is. The notes and refusals on it name this one, not its equivalent."""
    if (arch := getattr(args, "gpu_arch", None)) is not None:
        return f"--gpu-arch {arch}"
    return "--sglang-blackwell" if getattr(args, "sglang_blackwell", None) else ""


def figures_options(args: argparse.Namespace) -> StrategyOptions:
    """``options_from_args`` as the layouts' figures take them: SGLang's chunked prefill size, where
    not told, its own on the GPU --gpu-memory names (``sglang_default_chunked_prefill``, by the
    GPU's memory: 16,384 on a B200's), else the 8,192 assumed; and the GPU's compute capability
    (``gpu_compute_capability``: a --gpu-memory preset's, else the architecture told by --gpu-arch
    or --sglang-blackwell, else None), by which vLLM's MLA backends refuse some models on an
    A100, L40S or RTX 4090 and SGLang stores DeepSeek's sparse attention raw in fp8 on a
    Blackwell. The chunk stays by memory where an architecture is told: SGLang picks it by the
    GPU's memory alone (``CHUNKED_PREFILL_TIERS``), so a budget of no GPU keeps the one assumed.
    The options as told (``options_from_args``) say what was set, for the notes on options set
    but unread. An architecture told beside a preset of another is refused (ValueError naming
    both)."""
    told = options_from_args(args)
    gpu = getattr(args, "gpu_memory", None)
    by_gpu = compute_capability(gpu)  # the preset decides; a size leaves it to the flags
    if by_gpu is not None and told.gpu_compute_capability not in (None, by_gpu):
        arch = gpu_arch_of(by_gpu)
        raise ValueError(
            f"{arch_flag(args)} says the GPU is {gpu_arch_text(told_gpu_arch(args))}, but "
            f"--gpu-memory {quoted(gpu)} is {gpu_arch_text(arch)}: drop {arch_flag(args)}, or "
            "give --gpu-memory as a size, or a preset of that architecture ("
            + ", ".join(quoted(name) for name, capability in GPU_COMPUTE_CAPABILITIES.items()
                        if capability == told.gpu_compute_capability) + ")")
    options = replace(told, gpu_compute_capability=by_gpu or told.gpu_compute_capability)
    if options.sglang_chunked_prefill_size is not None:
        return options
    return replace(options, sglang_chunked_prefill_size=sglang_default_chunked_prefill(
        _gpu_bytes(args)))


def _gpu_bytes(args: argparse.Namespace) -> int | None:
    """The memory of the GPU --gpu-memory names (a preset or a size); None without it, or
    where it does not read as one (the budget it derives refuses it, naming the fix)."""
    text = getattr(args, "gpu_memory", None)
    if text is None:
        return None
    if text in GPU_PRESETS:
        return GPU_PRESETS[text]
    try:
        return memory_size(text, "--gpu-memory")
    except ValueError:
        return None


@dataclass(frozen=True)
class RequestContext:
    """The context a strategy command counts requests at: --context, else the model's
    max_model_len as vLLM takes --max-model-len (None for raw bytes without one), and what the
    user is told of where it came from."""

    tokens: int | None
    model_len: int | None  # the model's max_model_len, where its config gives one
    typed: bool  # --context was given
    assumed: bool = False  # model_len is vLLM's 2,048 for a config that gives no length

    @classmethod
    def from_args(cls, args: argparse.Namespace, model_len: int | None,
                  assumed: bool = False) -> RequestContext:
        context = getattr(args, "context", None)
        if context is not None:
            # (already tokens: --context's argparse type parses it, _tokens_argument)
            return cls(context, model_len, typed=True, assumed=assumed)
        return cls(model_len, model_len, typed=False, assumed=assumed)

    def notes(self) -> tuple[str, ...]:
        """Notes for stderr: where an untyped context came from, why none is counted, or that
        a typed one is past what the engines take without an override."""
        if not self.typed:
            if self.model_len is None:
                return ("note: no --context, and the model gives no max_model_len: no "
                        "concurrency is counted; --context N counts requests of N tokens",)
            return (f"note: {self._from_model()}",)
        if self.model_len is not None and self.tokens > self.model_len:
            return ("note: the context is "
                    f"{past_max_model_len_text(self.model_len, assumed=self.assumed)}",)
        return ()

    def explain(self, message: str) -> str:
        """``message`` with where the context came from, when it is about a context the user
        did not type (a default that does not fit); other messages as they are."""
        if self.typed or self.model_len is None or f"{self.model_len:,} tokens" not in message:
            return message
        return f"{message} ({self._from_model()})"

    def _from_model(self) -> str:
        """Where an untyped context came from: the model's length, or vLLM's assumed one."""
        return (CONTEXT_ASSUMED if self.assumed else CONTEXT_FROM_MODEL).format(self.model_len)


# --------------------------------------------------------------------------------------------
# Formatting.


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _concurrency_text(result: StrategyResult) -> str:
    if result.max_concurrency is None:
        return "-"
    return f"{concurrency_text(result.max_concurrency)}x"


def format_result_table(result: StrategyResult, unlogged: str = "") -> str:
    """One result that applies as aligned text: figures, breakdown (exact bytes and share), the
    math. ``unlogged``: why no vLLM release logs vLLM's figure here
    (``strategy_notes.unlogged_why``), said on its engine log row and log heading."""
    head = f"{result.strategy}: {result.profile_name or 'profile'}, "
    head += f"budget {exact_bytes(result.budget_bytes)}"
    if result.context_tokens is not None:
        head += f", context {tokens_text(result.context_tokens)}"
    lines = [head]
    rows = [
        ("block size", f"{_cell(result.block_size)} tokens" if result.block_size else "-"),
        ("why", result.why_block_size),
        ("block bytes", f"{_cell(result.block_bytes)} B per block id"),
        ("blocks", _cell(result.num_blocks)),
        ("capacity", f"{_cell(result.capacity_tokens)} tokens"
         if result.capacity_tokens is not None else "- (no token history)"),
    ]
    if result.logged_tokens is not None:
        rows.append(("engine log", f"{_cell(result.logged_tokens)} tokens " + (
            f"(in no vLLM log: {unlogged})" if unlogged and result.strategy == "vllm"
            else f"({logged_as(result.strategy)})")))
    if result.older_logged_tokens is not None:
        rows.append(("older vLLM log", f"{_cell(result.older_logged_tokens)} tokens "
                     f"({OLDER_VLLM_LOG})"))
    elif result.logged_tokens is not None and (none_why := older_log_none(result)):
        rows.append(("older vLLM log", f"none: {none_why}"))
    if result.context_tokens is not None:
        rows.append((
            CONCURRENCY_COLUMN,
            f"{_concurrency_text(result)} at {tokens_text(result.context_tokens)} "
            f"({result.concurrency_numerator:,} / {result.concurrency_denominator:,})",
        ))
    width = max(len(k) for k, _ in rows)
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]
    lines.append("  breakdown")
    num_width = max(len(f"{b:,}") for _, b in result.breakdown)
    cat_width = max(len(CATEGORY_LABELS[c]) for c in CATEGORIES)
    rows = (*result.breakdown, ("total", result.budget_bytes))
    shares = shares_text([b for _, b in result.breakdown], result.budget_bytes)
    shares.append(shares_text([result.budget_bytes], result.budget_bytes,
                              digits=len(shares[0].partition(".")[2]))[0])  # the total, 100
    share_width = max(len(s) for s in shares)
    for (category, nbytes), share in zip(rows, shares):
        lines.append(f"    {CATEGORY_LABELS.get(category, category).ljust(cat_width)}  "
                     f"{nbytes:>{num_width},} B  "
                     f"{share:>{share_width}}%")
    lines.append("  math")
    lines += [f"    {f}" for f in result.formulas]
    return "\n".join(lines + _start_up_log_lines(result, unlogged))


def _two_pools_note(result: StrategyResult) -> str:
    """Why SGLang's blocks times its block bytes are not its pools beside a sliding-window pool:
    its block is a page in both pools, its blocks the full pool's pages ("" otherwise)."""
    x = result.extras
    if "swa_page_bytes" not in x:
        return ""
    return (f"{result.strategy}: block bytes are a page in both pools (full "
            f"{_cell(x['full_page_bytes'])} + swa {_cell(x['swa_page_bytes'])} B); blocks are "
            f"the full pool's {_cell(result.num_blocks)} pages, beside the swa pool's "
            f"{_cell(x['swa_tokens'] // result.block_size)}")


def _start_up_log_lines(result: StrategyResult, unlogged: str = "") -> list[str]:
    """An engine's start-up log lines at these settings (vLLM's, SGLang's), under a heading, to
    set beside a real log (none for other layouts, or where the engine does not start); vLLM's
    heading says no release's words where ``unlogged`` says why none logs them."""
    log = result.extras.get("log_lines") if result.applies else None
    if not log:
        return []
    x = result.extras
    said = ""
    if "state_page_bytes" in x and not (x.get("log_release") and x["mamba_cache_mode"] == "all"):
        # vLLM with state: the mode it counts (the heading of mode all's lines names it)
        said = f"; mamba cache mode {x['mamba_cache_mode']}"
    elif result.strategy == "sglang":  # what its sizes count beyond its own counts
        page, slot = logged_padding(x)
        padding = ["a page a KV layer"] * page + ["the padding slot"] * slot
        said = "; its GB are GiB" + (f", its sizes count {' and '.join(padding)}"
                                     if padding else "")
    notes = list(x.get("log_left_out", ()))
    if result.strategy == "vllm":  # how its memory lines read
        notes.append(memory_log_note(result))
    words = (f"no release's words: {unlogged}" if unlogged and result.strategy == "vllm"
             else log_words(result))
    return [f"{start_up_log_title(result.strategy)} ({words}{said}):",
            *(f"  {line}" for line in log), *(f"  ({why})" for why in notes)]


@dataclass(frozen=True)
class Held:
    """``compare --requests R``: each layout's least cache budget for R requests (None where no
    budget holds them), and whether the layout plans no such model at any budget."""

    requests: int
    budgets: Sequence[int | None]
    blocked: Sequence[bool]


def format_comparison_table(results: Sequence[StrategyResult],
                            held: Held | None = None, *, exact_bytes: bool = False,
                            kv_dtypes: tuple[str, Mapping[str, str], str] | None = None,
                            unlogged: str = "") -> str:
    """Strategies side by side: one column each, figures then the breakdown, each cell in the
    binary unit that reads best for it (``format_bytes``), or in bytes with ``exact_bytes`` (a
    reviewer setting a row beside an engine's byte count); strategies that do not apply are
    listed with their reason under the table. ``held``: each strategy's
    least budget for R requests, a row of its own. ``kv_dtypes``: (the model's KV dtype, a
    layout -> the one it stores where another, the line that says so) where they differ
    (``strategy_notes.kv_dtype_marks``): a row of each layout's KV dtype under its concurrency,
    the line among the notes, as Compare marks and says it. ``unlogged``: why no vLLM release
    logs vLLM's figure here (``strategy_notes.unlogged_why``): its engine log cell is none,
    a line says why, as Compare's note does, and its log heading says so."""
    if not results:
        return "(no strategies)"
    table: list[list[str]] = []

    def row(label: str, values: Sequence[str]) -> None:
        table.append([label, *values])

    def each(fn: Callable[[StrategyResult], str]) -> list[str]:
        return [fn(r) if r.applies else "n/a" for r in results]

    row("block size (tokens)", each(lambda r: _cell(r.block_size)))
    row("block bytes", each(lambda r: _cell(r.block_bytes)))
    row("blocks", each(lambda r: _cell(r.num_blocks)))
    row("capacity (tokens)", each(lambda r: _cell(r.capacity_tokens)))
    if any(r.logged_tokens is not None for r in results):
        row(LOGGED_COLUMN, each(lambda r: "none" if unlogged and r.strategy == "vllm"
                                and r.logged_tokens is not None else _cell(r.logged_tokens)))
    if any(r.older_logged_tokens is not None or older_log_none(r) for r in results):
        row(OLDER_LOGGED_COLUMN,
            each(lambda r: "none" if older_log_none(r) else _cell(r.older_logged_tokens)))
    if any(r.context_tokens is not None for r in results):
        row(CONCURRENCY_COLUMN, each(_concurrency_text))
    if kv_dtypes is not None:
        row("kv dtype", each(lambda r: kv_dtypes[1].get(r.strategy, kv_dtypes[0])))
    if held is not None:
        row(f"least budget for {count_text(held.requests, 'request')} (B)",
            [_cell(b) if b is not None else "n/a" if blocked else "none"
             for b, blocked in zip(held.budgets, held.blocked, strict=True)])
    cell = _cell if exact_bytes else format_bytes
    for category in CATEGORIES:
        # each in its own unit: 14,745 B is 14.40 KiB, not a 0.00 GiB that reads as none
        label = CATEGORY_LABELS[category]
        row(f"{label} (B)" if exact_bytes else label,
            each(lambda r, c=category: cell(r.bytes_of(c))))
    lines = text_table(["", *(r.strategy for r in results)], table).splitlines()
    first = results[0]
    title = f"{first.profile_name or 'profile'}: budget {first.budget_bytes:,} B"
    if first.context_tokens is not None:
        title += f", context {tokens_text(first.context_tokens)}"
    notes = [why_not_line(r.strategy, r, r.reason) for r in results if not r.applies]
    if kv_dtypes is not None:
        notes.append(kv_dtypes[2])
    if first.context_tokens is not None and (short := short_of_one_request_text(
            results, first.context_tokens, name=lambda r: r.strategy)):
        notes.append(short)
    notes += [note for r in results if r.applies and (note := _two_pools_note(r))]
    # an older log row left empty by options vLLM 0.19 never ran says why, as plan's table does
    notes += [f"{r.strategy}: no older vLLM log: {why}" for r in results
              if r.applies and (why := older_log_none(r))]
    notes += [f"vllm: no engine log: its {r.logged_tokens:,} tokens are in no vLLM log, as "
              f"{unlogged} (--prefill-checkpoint-blocks 0 gives a log's figure)"
              for r in results if unlogged and r.strategy == "vllm" and r.applies
              and r.logged_tokens is not None]
    if dp := attention_dp_text(results):
        notes.append(dp)
    # what the figures leave out, as its math says (the JSON's formulas)
    notes += [f"{r.strategy}: {SPECULATIVE_NOT_MODELLED}" for r in results
              if r.applies and SPECULATIVE_NOT_MODELLED in r.formulas]
    if held is not None and any(b is None and not blocked
                                for b, blocked in zip(held.budgets, held.blocked, strict=True)):
        notes.append(f"none in the least budget row: no budget up to {MAX_BYTES:,} B (1 EiB, "
                     f"the most a plan takes) holds {count_text(held.requests, 'request')} in "
                     "that layout (n/a: a layout that plans no such model at any budget)")
    log = [line for r in results for line in _start_up_log_lines(r, unlogged)]
    return "\n".join([title, *lines, *notes, *log])


# --------------------------------------------------------------------------------------------
# Commands.


def plan_strategy_text(args: argparse.Namespace, profile: CacheProfile,
                       context: int | None) -> str:
    """``plan --strategy NAME``: one result as a table, or JSON with --json (``to_dict``:
    groups by id in its keys and fields, by kind in its formulas' words). A layout with no
    figures here is an error (exit 2, as ``plan`` without --strategy), worded as ``compare``'s
    note (``option_why_not_line``); ``compare`` lists it."""
    options = figures_options(args)
    result = _run_strategy(args.strategy, profile, budget_bytes=args.budget,
                           context_tokens=context, options=options)
    if not result.applies:
        raise ValueError(option_why_not_line(f"--strategy {args.strategy}", result))
    if args.json:
        return json.dumps(result.to_dict(), indent=2)
    return format_result_table(result, unlogged_why(profile, options))


def _needed_context(context: int | None, flag: str) -> int:
    """The context an option that counts requests of one needs; ValueError naming the option
    when there is none (raw bytes without --context)."""
    if context is None:
        raise ValueError(f"{flag} counts requests of a context: give --context (the model "
                         "gives no max_model_len)")
    return context


def format_context_sweep(curves: ContextCurves) -> str:
    """``compare --over-contexts``: each layout's max concurrency at the budget over context
    lengths, a length a row ("-" where the layout has no figure: vLLM refuses to start)."""
    rows = [[f"{c:,}", *(_cell(None) if values[i] is None else f"{concurrency_text(values[i])}x"
                         for values in curves.concurrency.values())]
            for i, c in enumerate(curves.contexts)]
    return "\n".join([f"{CONCURRENCY_COLUMN} over context lengths, at this budget:",
                      text_table(["context (tokens)", *curves.concurrency], rows)])


def compared(args: argparse.Namespace, profile: CacheProfile,
             context: int | None) -> list[StrategyResult]:
    """Every strategy's result at the command's settings, as ``compare`` prints and
    ``--check-log`` checks them: with --vllm-blocks, vLLM's Available line elided (its own
    estimate before warm-up, which the blocks do not give back)."""
    results = compare(profile, budget_bytes=args.budget, context_tokens=context,
                      options=figures_options(args))
    if getattr(args, "vllm_blocks", None) is not None:
        results = [with_available_elided(r) for r in results]
    return results


def comparison_json(results: Sequence[StrategyResult], profile: CacheProfile,
                    options: StrategyOptions, held: Held | None = None,
                    swept: ContextCurves | None = None) -> str:
    """``compare --json``: each result's ``to_dict`` with the KV dtype its layout stores
    (``kv_dtype``, ``stored_kv_dtype``: SGLang's float8_e4m3fn beside the model's bfloat16
    for DeepSeek-V3.2 on a B200, the table's kv dtype row), ``--requests``' least budget
    (``held``) and ``--over-contexts``' concurrency at each context (``swept``, exact in
    lowest terms beside the float) where given. Its ``kv_dtype`` is one stable id for every
    layout, the library's
    (``dtypes.canonical_dtype``: what --kv-dtype and a model file take, SGLang's log's torch
    dtype, "float8_e4m3fn"), where the text's kv dtype row and Compare's marks write the word
    SGLang is told and refuses by ("fp8_e4m3", its --kv-cache-dtype), as its users type it."""
    dicts = [{**r.to_dict(), "kv_dtype": stored_kv_dtype(r, profile, options)}
             for r in results]
    if held is not None:
        for d, budget in zip(dicts, held.budgets, strict=True):
            d.update(requests_to_hold=held.requests, least_budget_bytes=budget)
    if swept is not None:
        for d in dicts:
            values = swept.concurrency.get(d["strategy"], [None] * len(swept.contexts))
            d["concurrency_over_contexts"] = [
                {"context_tokens": c, "max_concurrency": None if v is None else float(v),
                 "max_concurrency_exact": None if v is None else [v.numerator, v.denominator]}
                for c, v in zip(swept.contexts, values, strict=True)]
    return json.dumps(dicts, indent=2)


def compare_text(args: argparse.Namespace, profile: CacheProfile, context: int | None, *,
                 model_len: int | None = None, raw: bool = False) -> str:
    """``compare``: every strategy side by side, as a table or a JSON list with --json.
    ``model_len``: the model's max_model_len, where --over-contexts sweeps to at least.
    ``raw``: a model of raw bytes (a profile file), which --kv-dtype refuses: the like for like
    line offers no --kv-dtype."""
    options = figures_options(args)
    results = compared(args, profile, context)
    held = None
    if args.requests is not None:
        counted = _needed_context(context, f"--requests {args.requests}")
        budgets = [least_budget_for_requests(r.strategy, profile, requests=args.requests,
                                             context_tokens=counted, options=options)
                   for r in results]
        # where none holds them: none, or a layout these options start at no budget (n/a)
        held = Held(args.requests, budgets, [
            b is None and not plans_at_some_budget(r.strategy, profile, options)
            for r, b in zip(results, budgets, strict=True)])
    swept = None
    if args.over_contexts:
        swept = context_curves(
            profile, args.budget,
            context_candidates(_needed_context(context, "--over-contexts"), model_len),
            options, [r.strategy for r in results])
    if args.json:
        return comparison_json(results, profile, options, held, swept)
    marks = kv_dtype_marks(results, profile, options)
    apart = kv_dtypes_apart_text(marks, profile, options,
                                 sglang_told="--sglang-kv-cache-dtype bf16",
                                 kv_dtype_set=None if raw else lambda d: f"--kv-dtype {d}")
    table = format_comparison_table(results, held, exact_bytes=args.exact_bytes,
                                    kv_dtypes=(profile.kv_dtype, marks, apart) if marks else None,
                                    unlogged=unlogged_why(profile, options))
    if swept is not None:
        table += "\n" + format_context_sweep(swept)
    reserved = options.reserved_bytes_per_block
    if reserved:  # one column carries rows the others do not: say so beside the figures
        table += (f"\nper-component carries {reserved:,} reserved B per page id "
                  f"(--reserved-bytes-per-block, counted as {CATEGORY_LABELS['kv_history']}); "
                  "the other layouts have no reserved rows")
    if last := last_served_note(results, profile):
        table += f"\nvllm: {last}"
    return table
