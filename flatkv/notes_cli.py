"""The notes a command prints on stderr beside its figures about the options given, and which
layouts read each option.

An engine option, --block-size or --alignment that changes no figure (``idle_option_notes``,
``idle_page_notes``); SGLang's page and prefill chunk and vLLM's prefill checkpoint block on the
GPU --gpu-memory names (``sglang_page_notes``, ``sglang_chunk_notes``, ``checkpoint_notes``); a
drafter's layers left out of the figures (``drafter_notes``). And the option that ``plan``
refuses since its layout does not read it (``option_not_read``, from ``_READ_BY``): a note
would leave it unsaid. The words shared with the app come from ``strategy_notes`` and
``engine_options``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import fields, replace

from flatkv import strategy_cli
from flatkv.budget import compute_capability, gpu_arch_of, gpu_words
from flatkv.engine_options import (
    ENGINE_OPTIONS,
    acting_engine_options,
    idle_at_its_value,
    idle_engine_option,
    strategy_fields,
)
from flatkv.given_cli import GivenModel
from flatkv.models import DRAFTER_NOT_COUNTED
from flatkv.profile import CacheProfile
from flatkv.strategies import model_blocker, run_strategy
from flatkv.strategies.base import StrategyOptions
from flatkv.strategies.sglang import (
    CHUNKED_PREFILL_ASSUMED,
    sglang_gpu_note,
)
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategies.vllm import checkpoint_blocks_kept
from flatkv.strategy_notes import arch_idle_why, prefill_checkpoint_text


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


def gpu_named(args: argparse.Namespace) -> str:
    """The GPU preset --gpu-memory names ("H100 80GB"), or "" for a size or none."""
    return getattr(args, "gpu_memory", None) or ""


def checkpoint_notes(options: StrategyOptions, model: GivenModel,
                     gpu: str = "") -> tuple[str, ...]:
    """Where a Mamba2 model runs align without the prefill checkpoint block vLLM 0.32 and
    later keep, or a GDN model on ``gpu`` (--gpu-memory's name), or the architecture told
    (``options``' capability, where ``gpu`` names no preset), whose prefill runs on FlashInfer
    there (0.33 and later), or a KDA model (Kimi-K3's, Glm5Next's) whose prefill runs on
    FlashKDA there: the flag that matches their logs (the Compare page's note)."""
    profile = model.profile
    capability = compute_capability(gpu) or options.gpu_compute_capability
    kept = checkpoint_blocks_kept(profile, capability)
    gdn_gpu = gpu_words(gpu, capability) if kept else ""
    return (f"note: {text}",) if (text := prefill_checkpoint_text(
        options, profile, fix="give --prefill-checkpoint-blocks 1", gdn_gpu=gdn_gpu)) else ()


def sglang_page_notes(args: argparse.Namespace, profile: CacheProfile,
                      options: StrategyOptions) -> tuple[str, ...]:
    """The CLI's words for ``sglang_gpu_note`` on the GPU --gpu-memory names (Blackwell: the
    page SGLang runs in place of --sglang-page-size, why it would not start with these options,
    or the KV dtype and bytes it stores DeepSeek's sparse attention in there, which these
    figures take), the fix a flag."""
    if (default := sglang_gpu_note(gpu_named(args), profile, options, _flag_setting)) is None:
        return ()
    if isinstance(default, str):
        return (f"note: {default}",)
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


# The options the planner reads without --strategy; the others act on layouts' figures.
_PLANNER_OPTIONS = ("block_size", "alignment", "reserved_bytes_per_block")
# The layouts that read each of the others, and the block size and alignment (the planner's,
# which some layouts read too): the app's engine options, the two-level layout's alignment,
# and the workload margin of the paged layouts (the first is the one suggested). SGLang reads
# neither the block size nor the alignment (its page is --sglang-page-size); vLLM and aliased
# read the block size alone (vLLM's page is a multiple of max(--kernel-block-size,
# --block-size)); flat, per-component and lcm (its candidate pages) read both.
# --reserved-bytes-per-block is per-component's, refused on its own (cli._plan_strategy).
_READ_BY = {"block_size": ("flat", "per-component", "vllm", "aliased", "lcm"),
            "alignment": ("flat", "per-component", "lcm"),
            **{o.field: o.read_by for o in ENGINE_OPTIONS},
            "lcm_alignment_bytes": ("lcm",),
            # the GPU's architecture (--gpu-arch, any of them): vLLM's MLA refusals on SM 8.x
            # and its note on the block it runs a dense MLA cache at told none
            # (``vllm.unasked_mla_block_text``); SGLang's DSA layout on a Blackwell GPU and its
            # note on DSA kernels on SM 8.x; both are suggested (``option_not_read``)
            "gpu_compute_capability": ("vllm", "sglang"),
            "margin": ("flat", "per-component", "vllm", "aliased", "lcm")}
# What a layout reads in place of an option it does not, said beside the refusal.
_READ_INSTEAD = {("block_size", "sglang"): "SGLang's page is --sglang-page-size",
                 ("alignment", "sglang"): "SGLang's page is --sglang-page-size",
                 ("alignment", "vllm"): "vLLM's page is a multiple of max(--kernel-block-size, "
                                        "--block-size)",
                 ("alignment", "aliased"): "aliased pages hold --block-size tokens as given"}


def _flag_as_typed(field: str, value: object, arch_flag: str = "") -> str:
    """The flag that sets option ``field`` to ``value``: ``--mamba-cache-mode``, and for an
    option turned off ``--no-sglang-swa-pool``; the GPU's capability as its architecture was
    told (``arch_flag``: ``strategy_cli.arch_flag``, else ``gpu_arch_flag``)."""
    if field == "gpu_compute_capability":
        return arch_flag or gpu_arch_flag(value)
    return f"--{'no-' if value is False else ''}{field.replace('_', '-')}"


def gpu_arch_flag(capability: tuple[int, int]) -> str:
    """The flag that tells the GPU of ``capability`` where the budget names no preset: its
    shorthand --sglang-blackwell on a Blackwell (the flag links and log offers print), else
    ``--gpu-arch NAME`` (``budget.GPU_ARCHITECTURES``)."""
    arch = gpu_arch_of(capability)
    return "--sglang-blackwell" if arch == "blackwell" else f"--gpu-arch {arch}"


def _flag_setting(field: str, value: object) -> str:
    """The flags that set option ``field`` to ``value``: ``--sglang-disable-radix-cache``,
    ``--sglang-mamba-radix-cache-strategy extra_buffer``."""
    return _flag_as_typed(field, value) + ("" if isinstance(value, bool) else f" {value}")


def idle_option_notes(options: StrategyOptions, profile: CacheProfile,
                      strategies: Sequence[str], *,
                      capability: tuple[int, int] | None = None,
                      arch_flag: str = "", budget_bytes: int | None = None,
                      context_tokens: int | None = None) -> tuple[str, ...]:
    """A note for each engine option set to other than its default that changes no figure of
    ``strategies`` for this model (``engine_options.acting_engine_options``), or none at the
    value set (``engine_options.idle_at_its_value``): the figures are right, but a command that
    names the option reads as if it counted. ``options`` as told (what was set);
    ``capability``: the figures' GPU (``strategy_cli.figures_options``: a GPU preset's, where
    ``options`` may say none was told), as SGLang's KV cache dtype acts on a Blackwell;
    ``arch_flag``: the flag that told the architecture, as typed (``strategy_cli.arch_flag``),
    which the note on an architecture that changes nothing names, its figures compared at
    ``budget_bytes`` and ``context_tokens`` (none without a budget)."""
    defaults = StrategyOptions()
    told = options
    options = replace(options, gpu_compute_capability=capability
                      or options.gpu_compute_capability)
    acting = acting_engine_options(profile, options, strategies)
    notes = []
    for option in ENGINE_OPTIONS:
        value = getattr(options, option.field)
        if value == getattr(defaults, option.field):
            continue
        if option.field in acting:  # it acts here, but maybe not at this value
            why = idle_at_its_value(option, profile, options)
            if not why:
                continue
        elif any(option.field in strategy_fields(s, profile) for s in strategies):
            why = idle_engine_option(option, profile, options)  # another option idles it
        elif all(model_blocker(s, profile) for s in strategies if s in option.read_by):
            why = "no layout that reads it serves this model"
        else:  # no layers of its kind, or a page or mode the model fixes
            why = "this model gives it nothing to act on"
        notes.append(f"note: {_flag_as_typed(option.field, value)} changes no figure here: {why}")
    # the architecture told (a preset's is not), its figures at the options they take
    arch = replace(options, gpu_compute_capability=told.gpu_compute_capability)
    return (*notes, *_idle_arch_note(arch, profile, strategies, arch_flag, budget_bytes,
                                     context_tokens))


def _idle_arch_note(options: StrategyOptions, profile: CacheProfile,
                    strategies: Sequence[str], arch_flag: str = "",
                    budget_bytes: int | None = None,
                    context_tokens: int | None = None) -> tuple[str, ...]:
    """An architecture told (``arch_flag`` as typed: --gpu-arch NAME, --sglang-blackwell)
    where it moves no figure of ``strategies`` from a Hopper's, the GPU taken where none is
    told (``strategy_notes.arch_idle_why``, at ``budget_bytes``): the note that it changes no
    figure, as for an engine option, since it is no ``ENGINE_OPTIONS`` entry; one rule for
    every architecture (an Ampere told on Llama said nothing while a Blackwell did). The page
    SGLang runs on a Blackwell, or why it would not start, the Blackwell notes say beside it
    (``sglang_page_notes``)."""
    if options.gpu_compute_capability is None or budget_bytes is None:
        return ()
    why = arch_idle_why(profile, options, strategies, budget_bytes, context_tokens)
    flag = _flag_as_typed("gpu_compute_capability", options.gpu_compute_capability, arch_flag)
    return (f"note: {flag} changes no figure here: {why}",) if why else ()


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


def option_not_read(options: StrategyOptions, strategy: str | None,
                     budget_reads: Callable[[str], bool] = lambda field: False,
                     arch_flag: str = "") -> tuple[str, str, str] | None:
    """The flag as typed (``--mamba-cache-mode``, ``--no-sglang-swa-pool``) of the first option
    set to other than its default that ``strategy`` (None: the planner alone) does not read,
    nor the budget (``budget_reads``: --vllm-blocks sizes it by vLLM's block at the options
    given; the architecture as ``arch_flag`` typed it), the layouts to suggest in its place
    ("--strategy sglang (a layout that reads it)": the first reader; the GPU's architecture
    names both engines, as either reads any architecture, where naming one sent an ampere
    told to SGLang alone while vLLM's refusals move with it), with what ``strategy`` reads
    instead where that says more;
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
        readers = _READ_BY[f.name] if f.name == "gpu_compute_capability" else _READ_BY[
            f.name][:1]
        suggest = (" or ".join(f"--strategy {name}" for name in readers)
                   + (" (layouts that read it)" if len(readers) > 1 else
                      " (a layout that reads it)"))
        return _flag_as_typed(f.name, value, arch_flag), suggest, instead and f" ({instead})"
    return None


def vllm_blocks_read(model: GivenModel, args: argparse.Namespace,
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
