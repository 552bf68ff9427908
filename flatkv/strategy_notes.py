"""What the pages and the CLI say about the engine strategies' results: Compare's rows and
titles, and the notes Compare, Budget and ``python -m flatkv`` print beside the figures (why a
layout does not apply, what a capacity counts, the engines' start-up logs, the options a model
needs to match an engine's log). Pure text from ``StrategyResult``s, no streamlit.

``flatkv.app_data`` holds the views of one plan (layouts, page maps, sweeps); this module holds
the words about many layouts, so the CLI can print them without the app's data module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction

from flatkv import sizing
from flatkv.budget import GPU_ARCHITECTURES, Budget, capability_text, gpu_arch_text
from flatkv.dtypes import canonical_dtype
from flatkv.engine_options import ENGINE_OPTIONS, idle_at_its_value, sglang_dtype_refused
from flatkv.models import DRAFTER_NOT_COUNTED
from flatkv.plan import (
    PACKED_NEEDS_HISTORY,
    SLIDING_ATTENTION,
    BudgetTooSmall,
)
from flatkv.profile import WINDOWED, CacheProfile, group_name
from flatkv.strategies import (
    CATEGORIES,
    CATEGORY_LABELS,
    CONCURRENCY_COLUMN,
    LOGGED_COLUMN,
    OLDER_LOGGED_COLUMN,
    StrategyOptions,
    StrategyResult,
    logged_as,
    model_blocker,
    run_strategy,
)
from flatkv.strategies.aliased import TWO_LEVEL_HINT
from flatkv.strategies.base import (
    ENGINE_NAMES,
    ratio_text,
    start_up_log_title,
    state_pages_per_request,
)
from flatkv.strategies.sglang import CHUNKED_PREFILL_ASSUMED as SGLANG_CHUNKED_PREFILL_ASSUMED
from flatkv.strategies.sglang import CONV_DTYPE as SGLANG_CONV_DTYPE
from flatkv.strategies.sglang import CONV_DTYPE_WHY as SGLANG_CONV_DTYPE_WHY
from flatkv.strategies.sglang import (
    SGLANG_REFUSES_TO_START,
    sglang_blocker,
    sglang_dsa_stored,
    sglang_gpu_note,
    swa_label,
)
from flatkv.strategies.sglang import (
    SPECULATIVE_RUNNING_REQUESTS as SGLANG_SPECULATIVE_RUNNING_REQUESTS,
)
from flatkv.strategies.sglang import chunked_prefill_tiers_text as sglang_chunked_prefill_tiers_text
from flatkv.strategies.sglang import draft_tokens as sglang_draft_tokens
from flatkv.strategies.sglang import swa_pool as sglang_swa_pool
from flatkv.strategies.sglang_log import OLDER_KV_LOG as OLDER_SGLANG_KV_LOG
from flatkv.strategies.sglang_log import OLDER_SWA_LOG as OLDER_SGLANG_SWA_LOG
from flatkv.strategies.sglang_log import logged_padding as sglang_logged_padding
from flatkv.strategies.vllm import (
    ALIGN_BY_DEFAULT,
    DRAFT_WIDENED_CONV,
    FAILS_AT_START_UP,
    REFUSES_TO_START,
    TRITON_KDA_EVERYWHERE,
    all_as_align_why,
    checkpoint_blocks_kept,
    flashkda_refusal,
    runs_all_as_align,
    unasked_mla_block_text,
)
from flatkv.strategies.vllm_log import log_words, memory_log_note
from flatkv.strategies.vllm_releases import (
    ANCHOR_OPTIONS,
    CURRENT_RELEASE,
    GDN_CHECKPOINT_CLASSES,
    KDA_CHECKPOINT_SINCE,
    MODE_ALL_RELEASE,
    OLDER_VLLM_LOG,
    OLDER_VLLM_TELL,
    PREFILL_CHECKPOINT_CLASSES,
    UNCHECKED_LOG_RELEASES,
    checkpoint_since,
    checkpoints_kept,
    class_keeping_no_checkpoints,
    release_before,
)
from flatkv.units import (
    and_text,
    concurrency_text,
    concurrency_value,
    count_text,
    exact_bytes,
    format_bytes,
    markdown_literal,
    percent_text,
    sentence_case,
    times_words,
    tokens_text,
)

# --------------------------------------------------------------------------------------------
# SGLang's sliding-window pool


# The engines that read the GPU's architecture, and a result's fields that are figures (not
# words: its notes and formulas may name the GPU where no figure moves), with the refusal
# shown in their place (vLLM refuses DeepSeek-V3.2 on SM 8.x where, at a context no request
# of fits, a Hopper is refused too: both refuse, for another reason each)
GPU_READERS = ("vllm", "sglang")
_FIGURE_FIELDS = ("applies", "reason", "block_size", "block_bytes", "num_blocks", "capacity_tokens",
                  "logged_tokens", "older_logged_tokens", "concurrency_numerator",
                  "concurrency_denominator", "breakdown")


# What reads the GPU architecture told, against no GPU said (``arch_reader``): the one rule of
# ``arch_matters`` (any of them) and ``arch_idle_why`` (silent where a figure, or in align the
# checkpoint block, reads it)
ARCH_CHECKPOINT = "checkpoint"
ARCH_FIGURES = "figures"
ARCH_NOTE = "note"


def arch_reader(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                context_tokens: int | None, strategies: Sequence[str] = GPU_READERS, *,
                results: Sequence[StrategyResult] = ()) -> str:
    """What reads the GPU architecture in ``options`` here, against no GPU said; "" where
    nothing does (or none is said). ARCH_FIGURES: a figure (``_FIGURE_FIELDS``, against
    those of no GPU said, a Hopper's: vLLM's refusals on SM 8.x, SGLang's DSA layout on a
    Blackwell), checked first of all but align's checkpoint block. ARCH_CHECKPOINT: the prefill
    checkpoint block vLLM 0.34 keeps a GDN or KDA model in align, its own mode for a hybrid
    (``checkpoint_reads_arch``: not known where no GPU is said), which the checkpoint note
    reads in align and the "vLLM 0.34's defaults" button in any mode (no figure of mode none
    or all moves with it). ARCH_NOTE: a note alone, beside figures it leaves as they are:
    SGLang's GPU note (``sglang_gpu_note``: its page on a Blackwell) or vLLM's on the block it
    runs a dense MLA cache at told none (``vllm.unasked_mla_block_text``: FLASHINFER_MLA's on a
    Blackwell, FlashMLA's on a Hopper). ``results``: layouts already run at these options,
    budget and context (the page's own), taken in place of a run of theirs, so that a page
    asking runs each layout once more, at no GPU said."""
    if options.gpu_compute_capability is None:
        return ""
    checkpoint = checkpoint_reads_arch(profile, options, strategies)
    if checkpoint and options.mamba_cache_mode == "align":
        return ARCH_CHECKPOINT  # (checkpoint blocks are as told: no figure moves by them)
    said = replace(options, gpu_compute_capability=None)
    noted = "sglang" in strategies and (sglang_gpu_note("", profile, options)
                                        != sglang_gpu_note("", profile, said))
    for strategy, at, none in _runs_by_arch(profile, options, budget_bytes, context_tokens,
                                            strategies, results):
        if _figures(at) != _figures(none):
            return ARCH_FIGURES
        noted = noted or (strategy == "vllm" and unasked_mla_block_text(profile, options, at)
                          != unasked_mla_block_text(profile, said, none))
    return ARCH_CHECKPOINT if checkpoint else ARCH_NOTE if noted else ""


def arch_matters(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                 context_tokens: int | None, strategies: Sequence[str] = GPU_READERS, *,
                 results: Sequence[StrategyResult] = ()) -> bool:
    """Whether the GPU architecture in ``options`` matters to ``strategies`` here, against no
    GPU said: anything reads it (``arch_reader``), a figure, the prefill checkpoint block or a
    note. The one rule for a log's offer leaving a GPU preset, in the app (``_log_check``) and
    the CLI (``log_cli``), which carries the preset's architecture where this holds: Qwen3-Next
    off an H100 in mode none keeps its Hopper, which the "vLLM 0.34's defaults" button's
    checkpoint block reads (without it the button sets none and its help asks for the GPU)."""
    return bool(arch_reader(profile, options, budget_bytes, context_tokens, strategies,
                            results=results))


def checkpoint_reads_arch(profile: CacheProfile, options: StrategyOptions,
                          strategies: Sequence[str] = GPU_READERS) -> bool:
    """Whether the prefill checkpoint blocks vLLM 0.34 keeps this model in align read the GPU
    architecture in ``options`` (``vllm.checkpoint_blocks_kept``: a GDN or KDA class's, by
    the prefill backend the GPU runs; not known where no GPU is said, but for a KDA model
    FlashKDA runs on no GPU, whose 0 no GPU moves), in any mode: align is
    vLLM 0.34's own for a hybrid (prefix caching on), which the checkpoint note reads in align
    and the "vLLM 0.34's defaults" button sets from none or all, with the GPU's checkpoint
    block (``AppState.recent_vllm_changes``; none known at no GPU, and its help asks for one).
    Mode none's figures keep no checkpoint block (vLLM 0.34's ``MambaSpec
    .max_memory_usage_bytes``: 1 + speculative pages), so a figure moves in no mode."""
    capability = options.gpu_compute_capability
    return ("vllm" in strategies and capability is not None
            and checkpoint_blocks_kept(profile, capability)
            != checkpoint_blocks_kept(profile, None))


def _figures(r: StrategyResult) -> tuple:
    """``r``'s figures (``_FIGURE_FIELDS``), which the GPU's architecture may move."""
    return tuple(getattr(r, name) for name in _FIGURE_FIELDS)


def _runs_by_arch(profile: CacheProfile, options: StrategyOptions, budget_bytes: int,
                  context_tokens: int | None, strategies: Sequence[str],
                  results: Sequence[StrategyResult]):
    """Each GPU reader of ``strategies`` with its result at ``options`` (one of ``results``
    where given) and at no GPU said, run as asked for (``any`` stops at the first apart)."""
    said = replace(options, gpu_compute_capability=None)
    ran = {r.strategy: r for r in results}

    def run(strategy: str, opts: StrategyOptions) -> StrategyResult:
        return run_strategy(strategy, profile, budget_bytes=budget_bytes,
                            context_tokens=context_tokens, options=opts)

    for s in strategies:
        if s in GPU_READERS and options.gpu_compute_capability is not None:
            yield s, ran[s] if s in ran else run(s, options), run(s, said)


# a Blackwell told in vLLM's figures: none moves from a Hopper's, the FlashMLA note reads it (an
# SM 8.x GPU moves vLLM's refusals: not "the GPU")
VLLM_ON_BLACKWELL = ("vLLM's figures take the block size as told on any GPU; a Blackwell in place "
                     "of a Hopper moves only the note on the block vLLM runs a dense MLA cache at "
                     "when told no "
                     "--block-size (FLASHINFER_MLA first on a Blackwell, in bfloat16 or fp8; "
                     "FlashMLA on a Hopper, in fp8)")


def arch_idle_why(profile: CacheProfile, options: StrategyOptions, strategies: Sequence[str],
                  budget_bytes: int, context_tokens: int | None, *,
                  results: Sequence[StrategyResult] = ()) -> str:
    """Why the GPU architecture in ``options`` changes no figure of ``strategies``, for the
    CLI's note on --gpu-arch and Compare's on the sidebar's select alike; "" where none is
    said or something other than a note reads it (``arch_reader``, the rule ``arch_matters``
    keeps too). A Hopper is the GPU taken where none is said; an SM 8.x GPU moves vLLM's
    refusals alone (DeepSeek-V3.2, an fp8 MLA cache on an A100); a Blackwell SGLang's DSA
    layout alone, so the words say what it stores as a Hopper does, or why SGLang does not
    start the model there (its KV dtype; learnable sinks kept in bfloat16).

    One rule with ``arch_matters``, ``arch_reader``, and where they part, why: these words
    say what moves no figure, so they stand beside a note alone (ARCH_NOTE: a dense MLA
    cache's block, SGLang's page on a Blackwell; at no GPU said that note is a Hopper's, the
    GPU these words name, and they point to it), and beside the prefill checkpoint block of
    vLLM 0.34's align in mode none or all, with ``ALIGN_CHECKPOINT_READS_GPU`` after them (why
    the log's offer carried the GPU: Qwen3-Next's --gpu-arch hopper in mode none said "the
    figures take a Hopper where no GPU is said" alone). In align they do not: at no GPU said
    the checkpoint block is not known, not a Hopper's, so the checkpoint note and the "vLLM
    0.34's defaults" button read the GPU, and "as on a Hopper" would be untrue of them.
    """
    capability = options.gpu_compute_capability
    reader = arch_reader(profile, options, budget_bytes, context_tokens, strategies,
                         results=results)
    if capability is None or reader == ARCH_FIGURES or (
            reader == ARCH_CHECKPOINT and options.mamba_cache_mode == "align"):
        return ""
    why = _idle_arch_words(profile, options, strategies)
    return f"{why}; {ALIGN_CHECKPOINT_READS_GPU}" if reader == ARCH_CHECKPOINT else why


# Beside an architecture idle in mamba cache mode none or all where vLLM 0.34's own align keeps
# a GDN or KDA model's prefill checkpoint block by it (``arch_reader``'s ARCH_CHECKPOINT)
ALIGN_CHECKPOINT_READS_GPU = ("in mamba cache mode align, vLLM 0.34's own for a hybrid, the "
                              "GPU decides whether vLLM keeps a prefill checkpoint block for "
                              "this model (not known where no GPU is said)")


def _idle_arch_words(profile: CacheProfile, options: StrategyOptions,
                     strategies: Sequence[str]) -> str:
    """``arch_idle_why``'s words for the architecture in ``options``, which moves no figure of
    ``strategies``: the GPU the figures take, or what SGLang stores on a Blackwell."""
    capability = options.gpu_compute_capability
    if capability == GPU_ARCHITECTURES["hopper"]:
        return "the figures take a Hopper where no GPU is said"
    if not options.blackwell:
        engines = [ENGINE_NAMES[s] for s in GPU_READERS if s in strategies]
        return (f"{' and '.join(engines)} {'lay' if len(engines) > 1 else 'lays'} this model "
                f"out on an SM {capability_text(capability)} GPU as on a Hopper, the GPU the "
                "figures take where none is said")
    if "sglang" not in strategies:  # plan --strategy vllm
        return VLLM_ON_BLACKWELL
    return ("no layout that reads it serves this model" if sglang_blocker(profile) else
            sglang_dtype_refused(profile) or
            ("SGLang keeps DeepSeek's sparse attention with learnable attention sinks (the "
             "config's learnable_sink) in bfloat16 on a Blackwell GPU as on a Hopper"
             if profile.learnable_sink else None) or
            "SGLang stores this model's cache on a Blackwell GPU as on a Hopper; only "
            "DeepSeek's sparse attention (a model with an indexer, such as DeepSeek-V3.2) is "
            "stored otherwise there (the page and backend SGLang runs there, where they differ "
            "from the ones told, a note of their own says)")


def arch_idle_text(arch: str, profile: CacheProfile, options: StrategyOptions,
                   budget_bytes: int, context_tokens: int | None, *,
                   results: Sequence[StrategyResult] = ()) -> str:
    """Compare's line for the sidebar's GPU architecture ``arch`` (``AppState.gpu_arch``,
    read where the budget names no preset) where it changes no figure (``arch_idle_why``), as
    the CLI's note on --gpu-arch says it; not a Hopper, the select's value off an H100 or H200
    preset (``AppState.arch_kept_off``) and the GPU taken where none is said, whose line would
    stand under every such page. Empty elsewhere. ``results``: the page's layouts at these
    settings, not run again (``arch_reader``)."""
    if arch in ("", "hopper"):
        return ""
    why = arch_idle_why(profile, options, GPU_READERS, budget_bytes, context_tokens,
                        results=results)
    return f"GPU architecture {gpu_arch_text(arch)} changes no figure here: {why}." if why else ""


def swa_layers_text(profile: CacheProfile) -> str:
    """What SGLang's sliding-window pool holds of this model: its sliding-window layers, or
    Llama 4's chunked layers, which SGLang runs as sliding ones."""
    return WINDOWED[swa_label(profile) or SLIDING_ATTENTION].layers


def sglang_sliding_pool_text(r: StrategyResult, profile: CacheProfile) -> str:
    """SGLang with its sliding-window pool: capacity counts the full pool; name the other (what
    the requests that run leave idle in it is ``sglang_idle_split_text``'s). Empty for any
    other result."""
    if r.strategy != "sglang" or not r.extras.get("kv_tokens") or "swa_tokens" not in r.extras:
        return ""
    return (f"SGLang: capacity is the full-attention token pool; the {swa_layers_text(profile)} "
            f"have a pool of their own, {r.extras['swa_tokens']:,} tokens (sliding / full tokens "
            "ratio in the layout options).")


# --------------------------------------------------------------------------------------------
# Compare's rows and the layouts' titles

STRATEGY_TITLES = {
    "flat": "FlatKV packed slabs",
    "per-component": "FlatKV per component",
    "vllm": "vLLM v1",
    "sglang": "SGLang",
    "aliased": "slab aliasing",
    "lcm": "two-level pages",
}


# The layouts as a narrow table's headers name them (a column a layout at 1000 px): "packed"
# (64 px), where "packed slabs" (105 px) put Qwen3-Next's five layouts and context at 515 px in
# an expander's 504 and cut two-level's column
STRATEGY_SHORT_TITLES = {"flat": "packed", "per-component": "per component",
                         "vllm": "vLLM", "sglang": "SGLang", "aliased": "aliasing",
                         "lcm": "two-level"}


# What each layout is, a line each, where its title alone is jargon: Compare's "Layouts" (as
# Layout's "Terms") and the CLI's compare --help (whose columns name the layouts by their ids)
STRATEGY_SUMMARIES = {
    "flat": "our planner, one page-id space for every group; slot tensor j packs the j-th "
            "layer of every group side by side, so a page id pays a row of every layer (the "
            "rows of the groups that do not own it are dead weight), and P grows until a "
            "history row covers the widest state row",
    "per-component": "the same page ids and P as packed slabs, a tensor per component "
                     "instead of packed rows; it can also carry reserved bytes a block (a "
                     "draft model's KV)",
    "vllm": "vLLM's hybrid KV cache manager, each kind's layers cut into groups of group_size "
            "that share page tensors; a block id belongs to one group and holds a page of "
            "each of its layers, every page of one size (a state page padded to it)",
    "sglang": "SGLang's pools, a token pool for KV (its page size in tokens a page; sliding "
              "layers in a pool of their own for the architectures it lists) beside a state "
              "pool of request slots, split by a static ratio",
    "aliased": "KV history groups of equal layer counts and one row size share a slab per "
               "layer j; a page id belongs to one group at a time, so no dead weight",
    "lcm": "parent blocks of B bytes, each bound to one group while in use and holding K of "
           "its pages (K by group), so groups of unequal page sizes share one pool; state "
           "does not inflate P",
}


def layout_lines(*, ids: bool = False) -> list[str]:
    """Each layout by its title and what it is (``STRATEGY_SUMMARIES``), in Compare's order:
    the app's names bold, as a list item reads them; ``ids``: plain, each led by its id, as the
    CLI's columns and --strategy name it."""
    return [(f"{key} ({STRATEGY_TITLES[key]})" if ids else f"**{STRATEGY_TITLES[key]}**")
            + f": {STRATEGY_SUMMARIES[key]}." for key in STRATEGY_TITLES]


def title_of(result: StrategyResult) -> str:
    """A result's layout as the pages name it (``STRATEGY_TITLES``)."""
    return STRATEGY_TITLES.get(result.strategy, result.strategy)


def reason_text(result: StrategyResult) -> str:
    """Why a layout has no figures here, as the pages say it: the layout a reason points at
    by its title, where the library (and the CLI) give its id (``TWO_LEVEL_HINT``)."""
    return result.reason.replace(TWO_LEVEL_HINT,
                                 f"unequal groups: see {STRATEGY_TITLES['lcm']}")


# How a layout with no figures here is labelled (``why_not_label``), and in a table's last
# column, where it is short (``WHY_NOT_SHORT``)
DOES_NOT_APPLY, WONT_START = "does not apply", "refuses to start"
# How an engine's reason opens where it would not start at these settings, or would start and
# then stop (``base.refuses_to_start``): vLLM's and SGLang's alike
START_REFUSALS = (REFUSES_TO_START, FAILS_AT_START_UP, SGLANG_REFUSES_TO_START)


def why_not_label(result: StrategyResult) -> str:
    """How a layout that has no figures here is labelled: an engine that would not start at
    these settings, or would start and then stop, "refuses to start" (its reason says how:
    ``START_REFUSALS``), any other (a model it does not serve) "does not apply"."""
    return WONT_START if result.reason.startswith(START_REFUSALS) else DOES_NOT_APPLY


def why_not_line(name: str, result: StrategyResult, reason: str) -> str:
    """``name`` (a layout's title or id), its ``why_not_label`` and ``reason`` (the result's,
    as the page or the CLI words it) less a refusal's opening (``START_REFUSALS``), which the
    label already says: "SGLang refuses to start: attention DP 3 ...", not "does not apply:
    SGLang refuses to start: ...". Compare's line under its table and the CLI's ``compare``
    note alike, so both read a refusal the same way."""
    for opening in START_REFUSALS:
        reason = reason.removeprefix(f"{opening}: ")
    return f"{name} {why_not_label(result)}: {reason}"


def option_why_not_line(option: str, result: StrategyResult) -> str:
    """``plan --strategy``'s one error line (exit 2) where the layout has no figures, worded
    by ``why_not_label`` as ``compare``'s note is: a model it does not serve "does not apply";
    a start refusal keeps its opening, the engine its subject, since ``option`` (the flag as
    typed) is no engine: "--strategy sglang: SGLang refuses to start: attention DP 3 ...", not
    "--strategy sglang does not apply: SGLang refuses to start: ..."."""
    if why_not_label(result) == WONT_START:
        return f"{option}: {result.reason}"
    return why_not_line(option, result, result.reason)


def why_not_text(result: StrategyResult) -> str:
    """A layout with no figures here and its reason, as Compare lists it under its table."""
    return why_not_line(f"**{title_of(result)}**", result, reason_text(result))


def pick_another_text(result: StrategyResult, results: Sequence[StrategyResult],
                      control: str) -> str:
    """Budget's notice where its one layout plans no such model at any budget (SGLang serves
    no Jamba, slab aliasing takes no state layer): Compare's line for it (``why_not_text``),
    then the layouts of ``results`` that have figures here, to pick under ``control``. A
    notice, not an error: the model is valid and other layouts plan it; where the engine does
    not serve it nothing typed is wrong, and where it would not start at a setting (a KV dtype
    it keeps no cache in) the line names the fix, another layout or that setting."""
    line = why_not_text(result).rstrip(".")
    others = [title_of(r) for r in results if r.applies and r.strategy != result.strategy]
    if not others:
        return f"{line}."
    names = and_text(others)
    return (f"{line}. Pick another layout under \"{control}\": {names} "
            f"{'has' if len(others) == 1 else 'have'} figures for this model here.")


# The app's planner setting -> its name in the sidebar (PLANNER_STRATEGY: the layout that plans
# the same way).
PLANNER_TITLES = {"packed": "packed slabs", "per-component": "one tensor per component"}


def state_only_text(planner: str, profile: CacheProfile, other_choice: str = "") -> str | None:
    """What every page says when packed slabs refuse a model without attention, in the reader's
    terms (the planner's own words name a library function); None where it does not apply.
    ``other_choice`` names a control of the page that also picks another layout."""
    if planner == "packed" and not profile.has_attention:
        return (f"{sentence_case(PACKED_NEEDS_HISTORY)}: pick the planner "
                f"\"{PLANNER_TITLES['per-component']}\" in the sidebar{other_choice}")
    return None


def sglang_other_bytes(profile: CacheProfile,
                       options: StrategyOptions | None) -> tuple[str, int] | None:
    """(SGLang's KV dtype, its bytes a token a layer) where SGLang at ``options`` stores other
    bytes a token than the model's (``sglang_dsa_stored``), which FlatKV's layouts and vLLM
    keep; None where it stores the model's, or no options are known. Its figures beside ours
    are then the bytes', not the layout's: Layout's multiple and Compare's table say so."""
    stored = options and sglang_dsa_stored(profile, options)
    return stored if stored and stored[1] != profile.kv_bytes_per_slot else None


def sglang_other_dtype(profile: CacheProfile,
                       options: StrategyOptions | None) -> tuple[str, int] | None:
    """``sglang_other_bytes`` where they are another dtype's too: SGLang's fp8_e4m3 for
    DeepSeek's sparse attention on a Blackwell beside the model's bfloat16 (708 B a token a
    layer to 1,284 for DeepSeek-V3.2), its bfloat16 beside a float32 model's; not an fp8 model
    on a Blackwell (fp8 both, SGLang's raw 708 B to vLLM's 788 B layout: a layout's
    difference), nor a float16 model's bfloat16 (the same bytes)."""
    stored = sglang_other_bytes(profile, options)
    return stored if stored and canonical_dtype(stored[0]) != profile.kv_dtype else None


def stored_kv_dtype(result: StrategyResult, profile: CacheProfile,
                    options: StrategyOptions | None) -> str | None:
    """The KV dtype layout ``result`` stores: SGLang's own where it keeps DeepSeek's sparse
    attention in another (``sglang_dsa_stored``: fp8_e4m3 on a Blackwell, bfloat16 for a
    float16 or float32 model), else the model's; None where the layout does not apply (it
    stores nothing: the CLI's table says n/a) or the model names no KV dtype. ``compare
    --json`` gives it a layout, as the table's kv dtype row does where they differ."""
    if not result.applies:
        return None
    stored = result.strategy == "sglang" and options and sglang_dsa_stored(profile, options)
    return canonical_dtype(stored[0]) if stored else profile.kv_dtype


def kv_dtype_marks(results: Sequence[StrategyResult], profile: CacheProfile,
                   options: StrategyOptions | None) -> dict[str, str]:
    """A layout -> the KV dtype it stores where it is not the model's (SGLang's, where
    ``sglang_other_dtype``), for Compare's table to mark beside its name: its bytes a token,
    and with them its concurrency, differ by dtype there, not by layout. Empty elsewhere."""
    stored = sglang_other_dtype(profile, options)
    return {r.strategy: stored[0] for r in results
            if stored and r.strategy == "sglang" and r.applies}


def marked_title(strategy: str, kv_dtypes: Mapping[str, str] | None,
                 titles: Mapping[str, str] = STRATEGY_TITLES) -> str:
    """A layout's title (``titles``: a table's short ones, ``STRATEGY_SHORT_TITLES``, in its
    columns) with the KV dtype it stores where ``kv_dtype_marks`` marks it ("SGLang (fp8_e4m3
    KV)"): Compare's tables, the least budget's among them, and the "fit in" of both pages'
    requests to hold, where SGLang holds most by its dtype's bytes."""
    dtype = (kv_dtypes or {}).get(strategy)
    title = titles.get(strategy, strategy)
    return f"{title} ({dtype} KV)" if dtype else title


def kv_dtypes_apart_text(marks: Mapping[str, str], profile: CacheProfile,
                         options: StrategyOptions | None, *, sglang_told: str,
                         kv_dtype_set: Callable[[str], str] | None) -> str:
    """The sentence under Compare's table (and the CLI's) where SGLang stores another KV dtype
    than the other layouts (``marks``, the caller's ``kv_dtype_marks``, made once a render):
    the two dtypes and their bytes a token a layer, and how to compare like for like, each
    way where it does: SGLang told bfloat16 (``sglang_told``, the engine option as the page or
    the CLI names it) where told so it stores the model's bytes (a bfloat16 model's, or
    float16's as many: compared as bytes, not dtype names), or the model's KV dtype set to
    SGLang's (``kv_dtype_set(dtype)``: the page's field, the CLI's flag), every layout in it;
    None where the model has no KV dtype to set (raw bytes: the Model page's Raw bytes, a
    profile file, which --kv-dtype refuses). Empty where they store one."""
    if not marks:
        return ""
    dtype, stored = sglang_other_dtype(profile, options)
    ways = []
    if sglang_other_bytes(profile, replace(options, sglang_kv_cache_dtype="bfloat16")) is None:
        model = f"{profile.kv_bytes_per_slot:,} B"
        kept = (f"bfloat16 too, {model}" if profile.kv_dtype == "bfloat16"
                else f"bfloat16, {model} as {profile.kv_dtype}'s")
        ways.append(f"{sglang_told} keeps SGLang in {kept}")
    if kv_dtype_set is not None:
        ways.append(f"{kv_dtype_set(dtype)} puts every layout in {dtype}")
    like = f" Like for like: {', or '.join(ways)}." if ways else ""
    return (f"SGLang stores this model's KV in {dtype}, {stored:,} B a token a layer, where "
            f"the other layouts keep the model's {profile.kv_dtype}, "
            f"{profile.kv_bytes_per_slot:,} B: its concurrency beside theirs is the dtype's "
            f"bytes, not its layout's.{like}")


def engines_beside_text(ours: StrategyResult, engines: Sequence[StrategyResult],
                        profile: CacheProfile, options: StrategyOptions | None = None) -> str:
    """Layout draws our plan only; one line puts its concurrency beside the engines' in the
    same budget (a design review's first question), each as a multiple of ours; an engine that
    refuses says whether it serves no such model (``model_blocker``) or does not start here.
    Where SGLang's figures at ``options`` store other bytes than the model's (DeepSeek's
    sparse attention on a Blackwell GPU, or in bfloat16 for a float32 model:
    ``sglang_dsa_stored``), its multiple says so, as it is then the bytes', not the layout's.
    Where no engine starts, the line still gives ours: it is the page's only concurrency, which
    the workload's note points at. Where an engine holds more, a last sentence says in bytes
    why (``gap_text``), SGLang left out of it where its stored bytes differ (the multiple
    already says so). Empty when ours has no concurrency (no context, or it does not apply)."""
    if not ours.applies or not ours.max_concurrency:
        return ""
    stored = sglang_other_bytes(profile, options)
    sglang_bytes_differ = stored is not None
    other_bytes = (f", in {stored[0]} at {stored[1]:,} B a token a layer where ours keeps the "
                   f"model's {profile.kv_dtype or 'KV'} at {profile.kv_bytes_per_slot:,}: "
                   + ("SGLang's own whatever the model's dtype" if stored[0] == "bfloat16"
                      else "SGLang's own on a Blackwell GPU")
                   if sglang_bytes_differ else "")
    beside = [f"{title_of(r)} {concurrency_text(r.max_concurrency)} "
              f"({times_words(r.concurrency / ours.concurrency)} ours"
              f"{other_bytes if r.strategy == 'sglang' else ''})" if r.applies else
              f"{title_of(r)} does not serve this model" if model_blocker(r.strategy, profile)
              else f"{title_of(r)} does not start" for r in engines
              if not r.applies or r.max_concurrency is not None]
    if not beside:
        return ""
    held = concurrency_text(ours.max_concurrency)
    held = (f"holds {held} requests" if ours.max_concurrency >= 1
            else f"holds no whole request ({held} of one)")
    # SGLang's lead in other bytes than ours is the bytes', not a layout's: no gap to explain
    gap = gap_text(ours, [r for r in engines
                          if not (r.strategy == "sglang" and sglang_bytes_differ)])
    return (f"At {tokens_text(ours.context_tokens or 0)} per request, this plan {held}; in the "
            "same budget " + ", ".join(beside) + ". Compare shows where each layout's bytes go"
            + (" and why a layout does not apply." if len(beside) > sum(r.applies
                                                                       for r in engines)
               else ".") + (f" {gap}" if gap else ""))


# Compare's categories of bytes that hold a request's tokens or state; every other category
# of a breakdown holds nothing (padding, dead weight, idle pools, unused)
HELD_CATEGORIES = ("kv_history", "state")
# The gap sentence's subject for a category whose label alone is no noun there ("Most of the
# gap is unused" read as the gap not used); the others read as they are on Compare
_GAP_NOUNS = {"unused": "unused bytes", "idle_pool": "idle pool bytes",
              "padding_layers": "padding layers' bytes"}


# How far a category's bytes may pass the gap and still read as "most of the gap": its bytes and
# the gap differ by the few bytes a layout rounds otherwise (vLLM's 34 pages a request to our 33
# on the SPEC example at 32,768 tokens: dead weight 1.001x the gap), a remainder no one asks
# about
_WITHIN_GAP = Fraction(101, 100)


def gap_category(ours: StrategyResult, engine: StrategyResult) -> tuple[str, Fraction] | None:
    """Where ``engine`` holds more requests than ``ours`` in the same budget, the breakdown
    category (Compare's "where the budget goes") in which ours keeps the most bytes more than
    the engine of those that hold nothing, and those bytes over the gap. The gap is the part
    of the budget the engine's layout saves on our requests: budget x (1 - ours' concurrency
    / the engine's). A design review asks why packed slabs hold 3.94x fewer Qwen3-Next
    requests than vLLM v1; the answer is in bytes, not in the multiple: dead weight, 74.60% of
    the budget, where the gap is 74.62%.

    Not the sum of what ours keeps empty beyond the engine: that is the gap only where the
    engine keeps as many bytes a request as ours. Where no whole request fits, SGLang's
    pools count as held and a request's share of them is larger than ours: Llama-4-Scout at
    its 10,485,760 tokens, our dead weight 74.92% of the budget against a gap of 15.13%
    (1.18x ours), over 99.99% of that sum. None where ours holds as many or more, or keeps no
    more bytes that hold nothing than the engine (its lead is then in how it counts a
    request's bytes, not in what ours leaves empty). "More" is by a multiple of at least 1.01
    to two decimals, as the line gives multiples: at DeepSeek-V3's 1.0000009x ours the gap is
    86.40 KiB unused, a remainder no one asks about."""
    if not (ours.applies and engine.applies and ours.concurrency and engine.concurrency
            and 200 * engine.concurrency >= 201 * ours.concurrency):
        return None
    mine, theirs = dict(ours.breakdown), dict(engine.breakdown)
    excess = {c: mine.get(c, 0) - theirs.get(c, 0) for c in CATEGORIES
              if c not in HELD_CATEGORIES}
    category = max(excess, key=lambda c: excess[c])  # the first of a tie, in CATEGORIES order
    if sum(excess.values()) <= 0:  # the engine leaves as much empty; else the largest is > 0
        return None
    gap = ours.budget_bytes * (1 - ours.concurrency / engine.concurrency)
    return category, excess[category] / gap


def gap_text(ours: StrategyResult, engines: Sequence[StrategyResult]) -> str:
    """One sentence after Layout's line beside the engines: the category of bytes that makes
    most of the gap to the engine that holds the most requests (``gap_category``), its bytes
    in our plan and in the engine's, as Compare's breakdown gives them. Where those bytes are
    more than the whole gap, it says so, how much of the budget the engine fits our
    requests in, and the gap that leaves: "most of the gap is dead weight: 53.70 GiB" beside
    SGLang's 1.18x ours read as SGLang giving those bytes to requests. Empty where no engine
    holds more requests than ours, or the best one's lead is not in such bytes."""
    held = [r for r in engines if r.applies and r.concurrency is not None]
    if not held:
        return ""
    best = max(held, key=lambda r: r.concurrency)
    found = gap_category(ours, best)
    if found is None:
        return ""
    category, of_gap = found
    mine, theirs = dict(ours.breakdown)[category], dict(best.breakdown)[category]
    noun = _GAP_NOUNS.get(category, CATEGORY_LABELS[category])
    # the share named by its base, the budget: beside Layout's dead share of a block (74.72%
    # over Qwen3-Next's 74.60% here), a bare percentage read as that one mistyped
    figures = (f"{format_bytes(mine)} in this plan "
               f"({percent_text(mine, ours.budget_bytes)} of the budget), "
               f"{format_bytes(theirs) if theirs else 'none'} in {title_of(best)}'s")
    if of_gap > _WITHIN_GAP:
        fits = ours.concurrency / best.concurrency
        verb = "are" if noun.endswith("bytes") else "is"
        # the gap in its own words: "more than the whole gap" beside "1.18x ours" alone left
        # the reader to take 84.87% from 100% to find what it is more than
        return (f"{sentence_case(noun)} {verb} more than the whole gap: {figures}; "
                f"{title_of(best)} fits this plan's requests in {percent_text(fits)} of the "
                f"budget, a gap of {percent_text(1 - fits)}.")
    return f"{'Most' if 2 * of_gap > 1 else 'The largest part'} of the gap is {noun}: {figures}."


def budget_too_small_text(small: BudgetTooSmall, how_to_raise: str) -> str:
    """A plan's refusal of a budget under two blocks, with the bytes it needs and the fix."""
    return (f"The cache budget per rank, {exact_bytes(small.budget_bytes)}, holds "
            f"{count_text(small.blocks, 'block')} of {exact_bytes(small.block_bytes)}; a plan "
            f"needs at least 2, that is {exact_bytes(2 * small.block_bytes)}: {how_to_raise}")


def compare_table_row(result: StrategyResult) -> dict:
    """One layout's line of the Compare table and its CSV: None where a figure does not apply
    (the page shows a dash)."""
    return {
        "strategy": title_of(result),
        "applies": result.applies,
        "P (tokens)": result.block_size,
        "block bytes": result.block_bytes,
        "blocks": result.num_blocks,
        "capacity (tokens)": result.capacity_tokens,
        LOGGED_COLUMN: result.logged_tokens,
        OLDER_LOGGED_COLUMN: result.older_logged_tokens,
        CONCURRENCY_COLUMN: (None if result.max_concurrency is None
                        else concurrency_value(result.max_concurrency)),
        **{breakdown_column(cat): v for cat, v in result.breakdown},
        "note": reason_text(result),
    }


def hold_help(budget: Budget) -> dict[str, str]:
    """The tooltip of ``hold_rows``' GPU memory column: what "over" in it means. The cell said
    "(more than this GPU's 74.51 GiB)", 316 px, which with the layout and budget columns
    ran past the 540 px main column at 1000 px and cut its end; "(over 74.51 GiB)" fits."""
    return {"GPU memory": "The GPU memory whose share leaves this cache budget per rank, at the "
                          "sidebar's memory fraction, weights and TP. \"Over\": more than this "
                          f"GPU's {format_bytes(budget.gpu_bytes)}; {budget.beyond_gpu_fix()} "
                          "brings it within."}


def hold_rows(results: Sequence[StrategyResult], budgets: Sequence[int | None],
              budget: Budget, profile: CacheProfile,
              options: StrategyOptions | None = None,
              kv_dtypes: Mapping[str, str] | None = None) -> list[dict]:
    """Compare's table of the least cache budget each layout needs for the requests to hold
    (``budgets``, None where no budget does) and the GPU memory that leaves it at the page's
    budget (its columns left out for a budget given as a log gives it), said where it is more
    than the page's GPU. A layout that lays out ``profile`` at these ``options`` at no budget
    (``sizing.plans_at_some_budget``: aliasing Scout's unequal groups, SGLang for LFM3, vLLM's
    hybrid manager off on a state hybrid) "does not apply": "none holds them" would read as a
    budget too small. Where no budget holds them there is no GPU memory to derive: its cells
    are None, a gap the table shows as a dash like every other figure that does not apply
    (an empty string left the cell blank). ``kv_dtypes``: SGLang marked with the KV dtype it
    stores where not the model's (``marked_title``), as Compare's table above it."""
    rows = []
    for r, need in zip(results, budgets, strict=True):
        none = (DOES_NOT_APPLY if need is None
                and not sizing.plans_at_some_budget(r.strategy, profile, options)
                else "none holds them")
        # the readable figures first (a narrow window cuts the table from the right), the
        # exact bytes after them
        row = {"strategy": marked_title(r.strategy, kv_dtypes),
               "cache budget": none if need is None else format_bytes(need)}
        gpu = None if need is None else budget.gpu_bytes_for(need)
        if not budget.given:  # "over" the GPU's memory, short: hold_help says it whole
            over = "" if gpu is None else budget.beyond_gpu_text(gpu, short=True)
            row["GPU memory"] = None if gpu is None else format_bytes(gpu) + (
                f" ({over})" if over else "")
        row["cache budget (B)"] = need
        if not budget.given:
            row["GPU memory (B)"] = gpu
        rows.append(row)
    return rows


# A drafter's attention layers are the model's to add: vLLM puts an MTP module's layer in the
# model's full-attention group (equal specs group together), which no engine option models.
DRAFTER_TEXT = (f"{DRAFTER_NOT_COUNTED} With tokens drafted, \"Add an MTP layer\" adds it "
                "where the model's MTP layer is full attention (the model's notes say where it "
                "is not); the Model page edits any model.")
DRAFTER_ADDED_TEXT = ("The model's MTP layer is counted as one more full-attention layer, "
                      "grouped with the model's as vLLM does.")


def sglang_speculative_text(profile: CacheProfile, speculative_tokens: int,
                            options: StrategyOptions | None = None) -> str:
    """What SGLang's figures count of speculative decoding with ``speculative_tokens`` (N)
    drafted a step: for a state hybrid it models, its draft-token state buffers and its 48
    running requests (``options``' --max-running-requests where told); else that they are
    without it."""
    options = replace(options or StrategyOptions(), speculative_tokens=speculative_tokens)
    told = options.sglang_max_running_requests
    running = (f"{told:,} running requests (--max-running-requests)" if told is not None else
               f"{SGLANG_SPECULATIVE_RUNNING_REQUESTS} running requests (its speculative "
               "default)")
    share = ""  # each attention-DP group runs its share
    if (groups := options.sglang_attn_dp_size) > 1:
        total = SGLANG_SPECULATIVE_RUNNING_REQUESTS if told is None else told
        share = (f", max(1, {total:,} // {groups}) = {max(1, total // groups):,} in each of "
                 f"its {groups} attention-DP groups")
        running += share
    if sglang_draft_tokens(profile, options):
        return (f"SGLang verifies {speculative_tokens + 1} tokens a step "
                f"(--speculative-num-steps {speculative_tokens}, topk 1) and keeps each "
                f"token's state, for up to {running}, in "
                "buffers it sizes with its state slots out of the state budget: its figures "
                "count them, and leave out its drafter's KV, which a path-less MTP drafter "
                "keeps in a pool of its own beyond the budget.")
    if profile.has_state:
        return ("SGLang's draft-token state buffers are not modelled on this model (a state "
                "model beside a sliding-window pool, or without attention): its figures are "
                "without speculative decoding.")
    if told is not None:
        return ("SGLang keeps the same pools for a model without state layers, and runs at "
                f"most {told:,} requests at once{share}, as --max-running-requests tells it "
                f"(its speculative hook's {SGLANG_SPECULATIVE_RUNNING_REQUESTS} only where none is "
                "told; its log and these figures show it).")
    return (f"SGLang keeps the same pools for a model without state layers, and runs at most "
            f"{SGLANG_SPECULATIVE_RUNNING_REQUESTS} requests at once{share} (its speculative "
            "hook's reset of max_running_requests, which its log and these figures show).")


def speculative_text(profile: CacheProfile, strategy: str, speculative_tokens: int, *,
                     mtp_added: bool = False, options: StrategyOptions | None = None) -> str:
    """Budget's and Layout's word on speculative decoding where tokens are drafted: what the
    layout's figures count of it (SGLang: ``sglang_speculative_text`` at ``options``), and
    whether a drafter's layers are in the model (``mtp_added``: an MTP layer was added). Empty
    without drafted tokens or attention layers."""
    if not speculative_tokens or not profile.has_attention:
        return ""
    drafter = DRAFTER_ADDED_TEXT if mtp_added else DRAFTER_TEXT
    if strategy == "sglang":
        return (f"Speculative decoding: "
                f"{sglang_speculative_text(profile, speculative_tokens, options)} {drafter}")
    # the count's possessive: "1 drafted token's", "2 drafted tokens'"
    owner = count_text(speculative_tokens, "drafted token") + (
        "'s" if speculative_tokens == 1 else "'")
    counted = (f"these figures count the {owner} state pages. " if profile.has_state else "")
    return f"Speculative decoding: {counted}{drafter}"


def capacity_counts(has_state: bool) -> str:
    """What a capacity counts, in the words Compare's note and table, Budget's and Layout's
    metric helps use. The state part only where the model has state layers: gpt-oss's and
    DeepSeek-V3's said "beside one request's state" with no state to be beside."""
    return "the history the pool holds" + (" beside one request's state" if has_state else "")


def capacity_pages(has_state: bool) -> str:
    """How a capacity counts its pages (every layout alike): a state group's share only where
    the model has state layers, as ``capacity_counts`` says it."""
    return "every attention group N pages of P tokens" + (
        ", each state group one request's state pages" if has_state else "")


# Why a model without attention has no capacity
NO_HISTORY = ("No attention layer: the model keeps no token history, only a constant state per "
              "request")


def how_to_read_text(profile: CacheProfile, speculative_tokens: int, *,
                     mtp_added: bool = False, options: StrategyOptions | None = None) -> str:
    """What Compare's capacity and concurrency count, under the charts they explain too, and
    what they count of speculative decoding (SGLang's at ``options``: a told
    --max-running-requests replaces its 48)."""
    has_history = profile.has_attention
    capacity = (f"Capacity: {capacity_counts(profile.has_state)}, counted the same way for "
                "every paged layout; SGLang: its token pool, which its static split of the "
                "budget fixes. "
                if has_history else f"{NO_HISTORY}, so no capacity in tokens. ")
    drafter = DRAFTER_ADDED_TEXT if mtp_added else DRAFTER_TEXT
    if not profile.has_state:
        drafting = f"Speculative decoding adds no state pages here. {drafter}"
    elif speculative_tokens:
        wider = (profile.conv_bytes_with_drafts(speculative_tokens)
                 - profile.state_const_bytes.get("conv", 0))
        kept = ("the other layouts keep the model's conv rows" + (
            f": an engine whose kernels verify drafts in the conv state as vLLM's do would "
            f"widen them too, {wider:,} B more a state layer here" if wider else ""))
        drafting = (f"With {count_text(speculative_tokens, 'drafted token')} a step, a request "
                    f"holds {count_text(speculative_tokens, 'more state page')} in each state "
                    "group in every "
                    f"paged layout, and vLLM widens {DRAFT_WIDENED_CONV} conv states by a row "
                    f"per drafted token ({kept}). "
                    f"{sglang_speculative_text(profile, speculative_tokens, options)} "
                    f"{drafter}")
    else:
        drafting = ("Without speculative decoding: set Speculative tokens under Engine options "
                    f"to count the state pages drafted tokens hold. {drafter}")
    return (capacity + "Concurrency: requests of this context length the layout holds at once, "
            "counted with the engine's pages per request (vLLM logs it as \"Maximum "
            "concurrency\"; SGLang logs max_running_requests, a cap on requests running at "
            "once, not a concurrency at this length: its figure here is what its binding pool "
            "holds, shown in its math). " + drafting)


def sglang_pools_text(profile: CacheProfile, options: StrategyOptions) -> str:
    """Whether SGLang gives the sliding-window (or chunked) layers a token pool of their own
    (only for the architectures on its list, unless the options say otherwise), and why. Empty
    without such layers, or for a model SGLang does not serve (LFM3's: nothing to say of its
    pools)."""
    if swa_label(profile) is None or model_blocker("sglang", profile):
        return ""
    own_pool, why = sglang_swa_pool(profile, options)
    return ((f"SGLang keeps the {swa_layers_text(profile)} in a token pool of their own"
             if own_pool else "SGLang keeps every token of every layer in one pool")
            + f": {markdown_literal(why)}. Its sliding-window pool in the engine options "
            "changes this.")


def sglang_gpu_page_text(gpu: str, options: StrategyOptions, profile: CacheProfile) -> str:
    """Compare's words for ``sglang_gpu_note`` on the GPU picked (Blackwell: the page SGLang
    runs in place of the engine options', why it would not start with them, or the KV dtype
    and bytes it stores DeepSeek's sparse attention in there, which these figures take), the
    fix an engine option; empty elsewhere."""
    if (default := sglang_gpu_note(gpu, profile, options)) is None:
        return ""
    if isinstance(default, str):
        return f"{default}."
    return (f"{default.said} and rounds its pools down to whole pages: set the SGLang page size "
            f"to {default.page} in the engine options to match such a run's log.")


def idle_values_text(options: StrategyOptions, profile: CacheProfile,
                     acting: Sequence[str]) -> str:
    """Compare's line for each engine option among ``acting`` (those the page offers) that
    changes no figure at the value set (``engine_options.idle_at_its_value``: SGLang's track
    interval where only its start-up checks read it, and it passes them as its default does),
    as the CLI's notes say it (``notes_cli.idle_option_notes``): its widget stays, to take
    another value, so the user is not left guessing why the figures did not move. Empty
    where none."""
    return " ".join(
        f"{option.label} {getattr(options, option.field)} changes no figure here: {why}."
        for option in ENGINE_OPTIONS
        if option.field in acting and (why := idle_at_its_value(option, profile, options)))


def mamba_all_text(options: StrategyOptions, profile: CacheProfile) -> str:
    """Mamba cache mode all keeps a snapshot every P tokens, so a layout's P decides how many:
    say so where it acts (a model with state), and where vLLM runs the model in align instead,
    with the state pages align holds under ``options``. Empty otherwise."""
    if options.mamba_cache_mode != "all" or not profile.has_state:
        return ""
    text = ("Mamba cache mode all: every paged layout keeps a state snapshot every P tokens of "
            "its own P (vLLM first aligns a hybrid's P to lcm(chunk, A)), so a small P, such as "
            f"two-level pages' requested block size, means many snapshots. vLLM has it up to "
            f"{MODE_ALL_RELEASE} (0.32 and later run align with prefix caching, none without), "
            f"so in this mode vLLM's row is vLLM {MODE_ALL_RELEASE}'s: its figures and its "
            "start-up log lines are that release's.")
    if aligning := runs_all_as_align(profile):
        # (0.31's align keeps no prefill checkpoint block: they came in 0.32 and 0.33)
        held = state_pages_per_request(replace(options, mamba_cache_mode="align",
                                               prefill_checkpoint_blocks=0), 0, 1)
        text += (f" Not vLLM here: {all_as_align_why(aligning)}; its row counts "
                 f"{MODE_ALL_RELEASE}'s align, {held} state pages a request (no prefill "
                 "checkpoint block in that release), and its P is not aligned to the chunk.")
    return text


def prefill_checkpoint_text(options: StrategyOptions, profile: CacheProfile, *,
                            fix: str = 'set "Prefill checkpoint blocks" to 1',
                            gdn_gpu: str = "") -> str:
    """A Mamba2 model (its vLLM class runs MambaMixer2) in mamba cache mode align without
    prefill checkpoint blocks: that is vLLM 0.28 to 0.31's count. Since 0.32 MambaMixer2's
    spec keeps one a request (``num_prefill_checkpoint_blocks=1``), so a later log holds fewer
    requests: say what to set (``fix``, in the page's words or the CLI's). Likewise a GDN model
    on ``gdn_gpu``, a GPU its prefill runs on FlashInfer on (0.33 and later), and a KDA model
    (Kimi-K3's, Glm5Next's) on one its prefill runs on FlashKDA on (``KDA_CHECKPOINT_SINCE``;
    the caller knows the GPU: ``AppState.vllm_checkpoint_blocks``). Empty otherwise (a model
    by hand names no class)."""
    if options.mamba_cache_mode != "align" or options.prefill_checkpoint_blocks:
        return ""
    held = state_pages_per_request(options, 0, 1)
    if PREFILL_CHECKPOINT_CLASSES.intersection(profile.architectures):
        layers = "this model's Mamba2 layers"
    elif gdn_gpu and set(KDA_CHECKPOINT_SINCE).intersection(profile.architectures):
        layers = (f"this model's KDA layers on the {gdn_gpu}, whose prefill runs on FlashKDA "
                  "there")
    elif gdn_gpu and GDN_CHECKPOINT_CLASSES.intersection(profile.architectures):
        layers = (f"this model's GDN layers on the {gdn_gpu}, whose prefill runs on "
                  "FlashInfer there")
    else:
        return ""
    # (mode align came in 0.28; the release that brought the class's checkpoint block, one)
    since = checkpoint_since(profile)
    return (f"Mamba cache mode align counts {held} state pages a request in each state group "
            f"here, as vLLM 0.28 to {release_before(since)} did. Since {since} vLLM keeps a "
            f"prefill checkpoint page more for {layers} ({held + 1} a request): {fix} to match "
            "a later log.")


def mode_fallback_text(r: StrategyResult, profile: CacheProfile) -> str:
    """Budget's word where vLLM ran the mamba cache mode asked for as another (all as align):
    the figures are the other mode's. Empty otherwise."""
    if r.extras.get("mamba_cache_mode_asked") != "all" or not (
            aligning := runs_all_as_align(profile)):
        return ""
    return (f"{all_as_align_why(aligning)}: these are align's figures, as vLLM "
            f"{MODE_ALL_RELEASE} (the last release with mode all) counts them.")


def windows_as_history(r: StrategyResult, profile: CacheProfile) -> bool:
    """Whether ``r``'s capacity counts sliding-window and chunked pages like full history: every
    layout's with such layers but SGLang's with its hybrid SWA pool, whose capacity is its
    full-attention pool. The figure's tag on Budget and Layout; ``capacity_note`` says why."""
    return (r.capacity_tokens is not None and bool(profile.windowed_labels)
            and not r.extras.get("sglang_swa_pool"))


def capacity_note(r: StrategyResult, profile: CacheProfile) -> str:
    """The note under one layout's capacity: SGLang's sliding-window pool where it has one;
    where windows count as full history, either that the engine keeps every token of them (vLLM
    with its hybrid manager off, SGLang without its SWA pool) or why a request can outrun the
    capacity (``sliding_capacity_text``). Empty for a model without history or sliding
    layers."""
    if text := sglang_sliding_pool_text(r, profile):
        return text
    if not windows_as_history(r, profile):
        return ""
    if r.extras.get("windows_as_full") or r.extras.get("sglang_swa_pool") is False:
        layers = " and ".join(WINDOWED[label].layers for label in profile.windowed_labels)
        how = ("with its hybrid KV cache manager off, vLLM allocates them as full attention"
               if r.strategy == "vllm" else
               "without its sliding-window pool, SGLang holds them in its one token pool")
        return (f"{sentence_case(layers)}: {how} and keeps every token, so capacity and "
                "concurrency both count them as full history.")
    return sliding_capacity_text(profile)


def logged_tokens_help(r: StrategyResult) -> str:
    """Where the engine log's token count comes from, for the Budget page's metric."""
    if r.strategy == "sglang" and r.capacity_tokens is None:  # state layers alone
        return ("The token count SGLang's log prints: max_total_num_tokens, a token pool of "
                "context_len tokens over no layers (a model of state layers alone), holding no "
                "bytes; its requests still take their tokens' indices there. The math shows it.")
    if r.strategy == "sglang":
        return ("The token count SGLang's log prints: max_total_num_tokens, its full token "
                "pool. The math shows it.")
    if r.older_logged_tokens in (None, r.logged_tokens):
        return ("The token count the engine's log prints: max concurrency x max_model_len. The "
                "math shows it.")
    return ("The token count later vLLM releases print (0.26 and 0.34 checked): max "
            f"concurrency x max_model_len. {OLDER_VLLM_LOG} printed "
            f"{r.older_logged_tokens:,} instead (beside it). The math shows both.")


def older_logged_tokens_help(r: StrategyResult) -> str:
    """What the older vLLM log's token count is, for the Budget page's metric beside the
    current one (the form SPEC 3.1's anchor log prints)."""
    own = r.extras.get("older_block_size")
    own_p = (f"; their own P and blocks, where they are not the current layout's: P "
             f"{own:,} here, a hybrid's a multiple of 16 (64 for MLA) and at least "
             "--block-size, not a multiple of it" if own is not None else "")
    return (f"vLLM's \"GPU KV cache size\" as {OLDER_VLLM_LOG} printed it: num_blocks // "
            f"groups x the smallest block size (P; in mamba cache mode none a state group's is "
            f"min(P, max_model_len){own_p}), {r.older_logged_tokens:,} here; the math shows "
            f"it. Tell a log's release by the figure: {OLDER_VLLM_TELL}.")


# The first vLLM release whose "GPU KV cache size" is max concurrency x max_model_len (module
# docstring of vllm_releases: 0.19.0 logs num_blocks // groups x P, 0.26.0 this)
LOGGED_SINCE = "0.26"


def logged_since(profile: CacheProfile, options: StrategyOptions) -> str:
    """The first vLLM release whose log can print the engine log's figure under ``options``:
    LOGGED_SINCE, or where the state keeps prefill checkpoint blocks (mode align), the release
    that brought them (a KDA class's, GDN's 0.33, else Mamba2's 0.32: ``checkpoint_since``,
    ``PREFILL_CHECKPOINTS_SINCE``), as an
    earlier release keeps none and logs another figure; "" where no release up to
    CURRENT_RELEASE keeps the model's class any (``class_keeping_no_checkpoints``: Jamba), so
    the figure told some is no release's log."""
    if not (profile.has_state and options.mamba_cache_mode == "align"
            and options.prefill_checkpoint_blocks):
        return LOGGED_SINCE
    return "" if class_keeping_no_checkpoints(profile) else checkpoint_since(profile)


def unlogged_why(profile: CacheProfile, options: StrategyOptions) -> str:
    """Why no vLLM release logs vLLM's "GPU KV cache size" under ``options`` (``logged_since``
    "": prefill checkpoint blocks told to a class none keeps them for, Jamba's), for Compare's
    note, the CLI's engine log row and start-up log heading alike; "" where one logs it."""
    if logged_since(profile, options):
        return ""
    blocks = options.prefill_checkpoint_blocks
    return (f"these figures count {blocks} prefill checkpoint block{'s' if blocks > 1 else ''} "
            f"a request in align and {checkpoints_kept(profile)}")


def logged_delta(r: StrategyResult, since: str = LOGGED_SINCE) -> str:
    """Whose log prints a vLLM layout's ``logged_tokens``, beside the figure: the one release
    its lines are (``extras["log_release"]``: mamba cache mode all's MODE_ALL_RELEASE, which
    later releases do not have), else ``since`` (``logged_since``) and later."""
    if release := r.extras.get("log_release"):
        return f"as vLLM {release} logs it"
    return f"as vLLM {since} and later log it" if since else "no vLLM release logs it"


def which_log_text(r: StrategyResult, options: str, since: str = LOGGED_SINCE) -> str:
    """Which of a vLLM layout's three token figures to quote against a log, where the older
    log's differs from the current one's: the engine log's is what a current release prints as
    "GPU KV cache size: N tokens", run with the engine options the page holds (``options``:
    whose they are, vLLM 0.19's defaults until changed), the older one what SPEC 3.1's anchor
    release printed on that line, and capacity no log's; ``since``: the first release the
    options run on (``logged_since``). Where those releases ran no such layout it says why
    they print no figure of it (``older_log_none``). Empty where there is one figure."""
    none_why = older_log_none(r)
    if r.strategy != "vllm" or r.logged_tokens is None or (
            r.older_logged_tokens in (None, r.logged_tokens) and not none_why):
        return ""
    release = r.extras.get("log_release")
    logs = (f"vLLM {release}" if release
            else f"vLLM {since} to {CURRENT_RELEASE} (a current release)" if since
            else "no vLLM release")
    older = (f"no older vLLM log: {none_why}" if none_why else
             f"{OLDER_VLLM_LOG} printed {r.older_logged_tokens:,} (the older vLLM log)")
    if not none_why and not release and since == LOGGED_SINCE:  # the releases between
        older += f"; {UNCHECKED_LOG_RELEASES}"
    return (f"To check a log's \"GPU KV cache size: N tokens\" line: {logs} prints "
            f"{r.logged_tokens:,} (the engine log) run with {options}; {older}. Capacity is "
            "this tool's count: no engine logs it.")


def logged_rounding_text(results: Sequence[StrategyResult]) -> str:
    """Where vLLM's concurrency as shown (``concurrency_value``: cut to two decimals under a
    whole number, so a request that does not fit never looks whole) and as its log's %.2f
    prints it differ (DeepSeek-V3.2 on the H100: 15,354 / 2,560 = 5.9976..., shown 5.99, logged
    6.00x), both, and why; "" where they agree."""
    for r in results:
        if r.strategy != "vllm" or not r.applies or r.max_concurrency is None:
            continue
        logged, shown = f"{r.max_concurrency:.2f}", concurrency_text(r.max_concurrency)
        if logged != shown:
            exact = math.floor(r.max_concurrency * 10_000) / 10_000
            return (f"vLLM's concurrency reads {shown} here: {r.concurrency_numerator:,} / "
                    f"{r.concurrency_denominator:,} = {exact:.4f}... requests, cut to two "
                    "decimals so that a request that does not fit never looks whole; vLLM's "
                    f"log rounds it (%.2f): \"Maximum concurrency ...: {logged}x\".")
    return ""


def older_log_none(r: StrategyResult) -> str:
    """Why a vLLM layout shows no older vLLM log figure: vLLM 0.19 and earlier ran no such
    layout (``extras["older_log_none"]``); "" where it has one, or for another engine."""
    return str(r.extras.get("older_log_none", "")) if r.strategy == "vllm" else ""


def short_of_one_request_text(results: Sequence[StrategyResult], context: int,
                              name: Callable[[StrategyResult], str] = title_of) -> str:
    """The layouts whose concurrency is under one request at ``context``: their figures are
    fractions of a request that does not fit (vLLM refuses to start when one request of
    max_model_len does not fit). Empty when every layout holds one. ``name``: how a layout is
    named (the pages' titles; the CLI's columns)."""
    under = [r for r in results
             if r.applies and r.max_concurrency is not None and r.max_concurrency < 1]
    if not under:
        return ""
    short = ", ".join(f"{name(r)} ({concurrency_text(r.max_concurrency)})" for r in under)
    paged = [r for r in under if r.strategy != "sglang"]
    text = f"Not even one request of {tokens_text(context)} fits in: {short}."
    if paged:
        text += (" A paged engine laid out so would refuse to start, as vLLM does when one "
                 "request of max_model_len does not fit.")
    sglang = next((r for r in under if r.strategy == "sglang"), None)
    if sglang is not None:  # tp_worker.get_worker_info warns where the (full) pool is short
        text += (" SGLang starts all the same" + (
            ", warning that its KV pool holds fewer tokens than --context-length, and refuses "
            "or cuts short the longer requests." if (sglang.capacity_tokens or 0) < context
            else " without a warning: its KV pool holds the context, and another of its pools "
            "holds less than one request's share."))
    return text


# Under a capacity whose sliding or chunked pages count as full history (sliding_capacity_text)
WINDOWS_AS_HISTORY = "windows counted as full history"


def sliding_capacity_text(profile: CacheProfile) -> str:
    """Why, with sliding-window or chunked layers, one request can outrun the capacity:
    capacity counts their pages like full history (no window eviction, as SPEC 3.3's measured
    pools and older vLLM logs count them), while a request keeps only its window or chunk
    there. Empty without such layers."""
    windowed = [(label, WINDOWED[label]) for label in profile.windowed_labels]
    if not windowed:
        return ""
    layers = " and ".join(w.layers.removesuffix(" layers") for _, w in windowed)
    kept = " and ".join(f"its {w.noun} of {profile.window(label):,} tokens"
                        for label, w in windowed)
    return (f"{sentence_case(layers)} layers: capacity counts their pages like full history "
            "(no window eviction, as older vLLM logs count them). A request keeps only "
            f"{kept} there, so one request can run longer than the capacity; concurrency "
            "counts that.")


def same_flat_figures_text(results: Sequence[StrategyResult]) -> str:
    """Why FlatKV's two rows read the same, where they do: both pay every row of every layer a
    page id, at the same P, so blocks and requests match; they differ in tensors (a slot
    tensor per j-th layer of every group, or one per component) and in the reserved bytes a
    block only one tensor per component can carry. Empty where they differ or one does not
    apply."""
    by_name = {r.strategy: r for r in results if r.applies}
    flat, per = by_name.get("flat"), by_name.get("per-component")
    if flat is None or per is None or (flat.block_size, flat.block_bytes, flat.num_blocks) != (
            per.block_size, per.block_bytes, per.num_blocks):
        return ""
    slots, tensors = flat.extras["slots"], per.extras["tensors"]
    same = (f"{STRATEGY_TITLES['flat']} and {STRATEGY_TITLES['per-component']} read the same: "
            f"both pay every row of every layer a page id ({flat.block_bytes:,} B at P "
            f"{flat.block_size:,}), so they hold the same {flat.num_blocks:,} blocks")
    carries = "can also carry reserved bytes a block (a draft model's KV)"
    if slots == tensors:  # one group of one component a layer: the same tensors too
        return (f"{same}, in the same {count_text(slots, 'tensor')} (a slot holds one layer's "
                f"rows, as a component does). Only one tensor per component {carries}.")
    return (f"{same}. They differ in tensors: {count_text(slots, 'slot tensor')} (the j-th "
            f"layer of every group in one) against {count_text(tensors, 'tensor')}, one per "
            f"component, which {carries}.")


def page_sizes_text(results: Sequence[StrategyResult], options: StrategyOptions, *,
                    mla: bool) -> str:
    """Compare's word under its table where a layout's P is not the size asked (the block
    size; SGLang's own page size for SGLang), or some of its groups page by another (vLLM's
    full layers beside sliding ones of their own heads): which, and that each one's Formulas
    say why (a state row inflates it, or the engine pages by a size of its own: vLLM's kernel
    block, SGLang's NSA page, one page size for every group). Empty where every P is the one
    asked. A group by its kind, as Layout names it (``group_name``; ``mla``: the profile's),
    not by the result's ``extras["block_sizes"]`` keys, the planner's ids the JSON prints."""
    def asked(r: StrategyResult) -> int:
        return options.sglang_page_size if r.strategy == "sglang" else options.block_size

    other = []
    for r in results:
        if not r.applies or r.block_size is None:
            continue
        groups = {label: size for label, size in r.extras.get("block_sizes", {}).items()
                  if size != r.block_size}
        if r.block_size == asked(r) and not groups:
            continue
        sizes = [f"{r.block_size:,}", *(f"{group_name(label, mla=mla)} {size:,}"
                                        for label, size in groups.items())]
        # SGLang's size asked is the lead's: said again beside its entry it read twice
        other.append(f"{title_of(r)} {', '.join(sizes)}")
    if not other:
        return ""
    # SGLang's page size asked only where SGLang has a layout (it serves no Jamba)
    sglang = any(r.strategy == "sglang" and r.applies for r in results)
    return (f"Tokens a page, where not the size asked (the block size {options.block_size:,}"
            + (f"; SGLang's page size {options.sglang_page_size:,}" if sglang else "")
            + f"): {'; '.join(other)}. A state row inflates P, or the engine pages by a size "
            "of its own; each layout's Formulas below say why.")


def capacity_ranks_apart_text(results: Sequence[StrategyResult], profile: CacheProfile) -> str:
    """Why Compare's capacity bars may rank the layouts otherwise than its concurrency bars:
    SGLang with its sliding-window pool (its chunked layers' too) counts its full-attention
    pool alone, every other layout those layers' pages as full history. Empty unless SGLang has
    that pool here."""
    sglang = next((r for r in results if r.applies and r.extras.get("sglang_swa_pool")), None)
    if sglang is None or not any(r.applies and r is not sglang for r in results):
        return ""
    name = WINDOWED[swa_label(profile)].name
    return (f"Capacity does not rank these layouts: SGLang's is its full-attention pool alone "
            f"(its {name} layers keep a pool of their own), the others' count {name} pages as "
            "full history. Concurrency counts each the way its engine holds requests: compare "
            "that.")


def two_pool_blocks_text(results: Sequence[StrategyResult], profile: CacheProfile) -> str:
    """Why blocks x block bytes can exceed the budget: SGLang with full and sliding (or chunked)
    layers keeps two token pools, and its block is one page in both while the swa pool holds
    only r_swa x as many pages (or its SWA request cap's, with the radix cache off and a request
    limit). Empty when no layout here has two pools, or the product stays within the budget
    (r_swa of 1 or more)."""
    for r in results:
        if (r.applies and "swa_page_bytes" in r.extras
                and r.num_blocks * r.block_bytes > r.budget_bytes):  # r_swa < 1
            x, which = r.extras, WINDOWED[swa_label(profile)].name
            # the radix cache off with a request limit: the sliding pool is SGLang's SWA request
            # cap, and no r_swa split the pools (its extras hold none)
            sized = ("sized by SGLang's SWA request cap, not r_swa" if "swa_request_cap" in x
                     else f"r_swa = {ratio_text(x['swa_full_tokens_ratio'])}")
            return (f"{title_of(r)}: a block is one page in both "
                    f"token pools ({x['full_page_bytes']:,} B full + {x['swa_page_bytes']:,} B "
                    f"{which}), and the {which} pool holds {x['swa_tokens']:,} tokens against "
                    f"the full pool's {r.num_blocks * r.block_size:,} ({sized}), so blocks x "
                    "block bytes is more than the budget.")
    return ""


def sglang_state_text(results: Sequence[StrategyResult], profile: CacheProfile) -> str:
    """SGLang keeps every ssm tensor in a dtype of its own (float32 unless the config or the
    engine options name another) and every conv tensor in bfloat16: say so where that makes its
    state per layer differ from the model's, which the other layouts use.
    Empty when SGLang does not apply, the model has no state, or the bytes agree."""
    for r in results:
        if r.strategy != "sglang" or not r.applies or "state_layer_bytes" not in r.extras:
            continue
        ours, model = r.extras["state_layer_bytes"], profile.state_bytes_per_layer
        if ours == model:
            return ""
        resized = {name for name, nbytes in r.extras["state_tensor_bytes"].items()
                   if nbytes != profile.state_const_bytes[name]}
        kept = []
        if "ssm" in resized:
            dtype, why = r.extras["sglang_ssm_dtype"], r.extras["sglang_ssm_dtype_source"]
            kept.append(f"the ssm state in {dtype} ({why}; one dtype of its own, whatever the "
                        "model's, set in the engine options)")
        if "conv" in resized:
            kept.append(f"the conv state in {SGLANG_CONV_DTYPE} ({SGLANG_CONV_DTYPE_WHY}, "
                        "whatever the model's)")
        return (f"SGLang keeps {' and '.join(kept)}: {ours:,} B of state per layer against the "
                f"{model:,} B the other layouts keep.")
    return ""


# Why a layout keeps no dead weight, for the Compare page's dead-weight note.
NO_DEAD_WEIGHT_BECAUSE = {
    "vllm": "a block id belongs to one group and addresses only its layers' pages",
    "sglang": "each kind of cache has a pool of its own",
    "aliased": "equal history groups share one page-id space over the same bytes",
    "lcm": "a parent block holds one group's pages only",
}

# vLLM with its hybrid manager off: one group, its windowed layers promoted to full attention
WINDOWS_AS_FULL_BECAUSE = ("with its hybrid manager off every layer keeps every token in one "
                           "group of pages, all of them in use: here the sliding layers' history "
                           "beyond their window costs less than one page-id space's dead weight")


def dead_weight_text(results: Sequence[StrategyResult]) -> str:
    """Why one page-id space can hold far fewer requests than an engine's layout: a page id
    takes a row in every slot tensor, and a page one group uses leaves the rows of the other
    groups idle (dead weight, SPEC section 1). Names the layout that holds the most requests
    and how many times more. Empty when no layout here has dead weight."""
    applying = [r for r in results if r.applies]
    heavy = [r for r in applying if r.bytes_of("dead_weight")]
    if not heavy:
        return ""
    worst = max(heavy, key=lambda r: r.bytes_of("dead_weight"))
    dead = worst.bytes_of("dead_weight")
    text = (f"{title_of(worst)}: {format_bytes(dead)} "
            f"({percent_text(dead, worst.budget_bytes)} of the budget) is dead weight. Every "
            "page id takes a row in every slot tensor, and a page one group uses leaves the "
            "other groups' rows in it idle.")
    counted = [r for r in applying if r.concurrency is not None]
    if worst.concurrency and counted:
        best = max(counted, key=lambda r: r.concurrency)
        ratio = best.concurrency / worst.concurrency
        if ratio >= Fraction(101, 100) and not best.bytes_of("dead_weight"):  # shows as > 1.00
            why = (WINDOWS_AS_FULL_BECAUSE if best.extras.get("windows_as_full")
                   else NO_DEAD_WEIGHT_BECAUSE.get(best.strategy, "it keeps no dead weight"))
            # (where not one request fits, the concurrencies still compare: no "fit")
            fit = ("as many requests fit" if worst.concurrency >= 1 else
                   "the concurrency is reached")
            text += (f" At this context {times_words(ratio)} {fit} under "
                     f"{title_of(best)}: {why}.")
    return text


def start_up_log_text(r: StrategyResult, unlogged: str = "") -> str:
    """What the start-up log lines under an engine's math are, and how older releases print
    them; vLLM's no release's words where ``unlogged`` says why (``unlogged_why``)."""
    if r.strategy == "sglang":
        return sglang_start_up_log_text(r)
    text = f"{_log_lines_are(r, unlogged)} {memory_log_note(r)}."
    for left_out in r.extras.get("log_left_out", ()):
        text += f" {sentence_case(left_out)}."
    if r.extras.get("state_page_bytes") is not None:  # a state model: which mode it counts
        mode = r.extras["mamba_cache_mode"]
        if r.extras.get("mamba_cache_mode_asked") == "all":
            text += (" It counts mamba cache mode align: asked for all, vLLM runs this model in "
                     "align, as its second line says (its first, that mode all is going).")
        else:
            text += (f" It counts mamba cache mode {mode}, as set here" + (
                " (--no-enable-prefix-caching): vLLM 0.28 and later start a hybrid in align and "
                "log \"Mamba cache mode is set to 'align'\"; set align to match such a log"
                if mode == "none" else "") + ".")
    if r.logged_tokens is not None:
        text += (" Releases before the one-line KV cache size (vLLM PR #50462; 0.26.0 still has "
                 "two) print it and the concurrency on two lines")
        text += (f"; {OLDER_VLLM_LOG} print {r.older_logged_tokens:,} tokens there "
                 "(older_logged_tokens in the math)." if r.older_logged_tokens is not None
                 else ".")
    return text


def sglang_start_up_log_text(r: StrategyResult) -> str:
    """What SGLang's start-up log lines are: its GB are GiB, its sizes count the rows its pool
    counts leave out, which lines are left out and why, and what it logs next and in older
    releases."""
    x = r.extras
    pools = x.get("logged_pools", [])
    text = f"{_log_lines_are(r)} Its GB are GiB (2^30 B)"
    page, slot = sglang_logged_padding(x)
    counted = (["a page more than #tokens in each KV layer (the page of slot 0, for padded "
                "tokens' writes)"] if page else []) + (
        ["the state pool's padding slot beyond max_mamba_cache_size"] if slot else [])
    if counted:
        text += "; its sizes count " + " and ".join(counted)
    text += "."
    if left_out := x.get("log_left_out"):
        text += f" Left out: {'; '.join(left_out)}."
    if x.get("speculative_not_modelled"):
        text += (" Without speculative decoding: with it, the Mamba line goes on to its draft "
                 "tokens' buffers.")
    elif x.get("sglang_draft_tokens"):
        text += (" With speculative decoding: the Mamba line goes on to the draft tokens' "
                 "buffers MambaPool allocates (on a CUDA GPU), and the drafter's own KV pool "
                 "logs lines of its own, not shown.")
    if x.get("scheduler_line"):
        text += f" Its scheduler's line (TP rank 0 alone) comes last: {_scheduler_figures(r)}."
    if "kv" in pools:
        text += f" {OLDER_SGLANG_KV_LOG}"
    if "hybrid swa" in pools:
        text += f" {OLDER_SGLANG_SWA_LOG}"
    return text


def _running_requests_source(x: dict[str, object]) -> str:
    """Where the max_running_requests of SGLang's scheduler line comes from."""
    share = (f"a group's share (// {groups}) of " if (groups := x.get("attention_dp_groups"))
             else "")
    if x.get("running_requests_told"):
        return (f"{share}--max-running-requests as told, or fewer where the pools hold fewer, "
                "whatever the context")
    if x.get("running_cap_from_speculative_hook"):
        return (f"{share}the {SGLANG_SPECULATIVE_RUNNING_REQUESTS} its speculative hook sets, "
                "or fewer where the pools hold fewer")
    return ("SGLang's own, from the token pool over context_len (the context here, as "
            "--context-length)" + (", or the state pool's cap where lower"
                                   if x.get("running_request_cap") else ""))


def _chunk_source(x: dict[str, object]) -> str:
    """Where the chunked_prefill_size of SGLang's scheduler line comes from."""
    groups = x.get("attention_dp_groups")
    return ("chunked_prefill_size is the one set, else SGLang's own by the GPU's memory ("
            f"{sglang_chunked_prefill_tiers_text()}; {SGLANG_CHUNKED_PREFILL_ASSUMED:,} where "
            "the budget names no GPU)" + (f", // {groups} a group under attention DP"
                                         if groups else "")
            + ", -1 with chunked prefill off as SGLang's help gives it (a log's 0, told and off "
            "too, agrees)")


def _scheduler_figures(r: StrategyResult) -> str:
    """Where the figures of SGLang's scheduler line come from, and which it elides."""
    x = r.extras
    said = []
    if (running := x.get("max_running_requests")) is not None:
        said.append(f"max_running_requests is {_running_requests_source(x)}")
    if r.context_tokens is None:
        said.append("context_len (the model's own, not known here)"
                    + (" is elided" if running is not None else
                       " and the max_running_requests it sets are elided"))
    said.append(_chunk_source(x))
    said.append("max_prefill_tokens is not modelled (\"...\" reads as anything), nor the "
                "memory left that follows (available_gpu_mem); with "
                "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 it gives the pool kept after CUDA graph "
                "capture, whose tokens and requests differ")
    return "; ".join(said)


def _log_lines_are(r: StrategyResult, unlogged: str = "") -> str:
    """The opening of what an engine's start-up log lines under its math are."""
    words = (f"no release's words ({unlogged})" if unlogged
             else log_words(r, in_brackets=True))
    return (f"{start_up_log_title(r.strategy)}, in {words} and "
            "number formats: set it beside yours line by line.")


def defaults_text(recent: Mapping[str, object], button_where: str = "Engine options",
                  differs: bool = True, refused: str = "") -> str:
    """Whose engine options a view left at the app's defaults runs, in the one wording every page
    showing vLLM figures puts near its top: ANCHOR_OPTIONS (SPEC 3.1's anchor log), and what a
    CURRENT_RELEASE run with its own defaults sets apart (``recent``:
    ``AppState.recent_vllm_changes``), whether its figures differ (``differs``: Qwen3-Next TP2
    at 44.59 GiB: 14.77x at these, 14.68x in mode align alone; DeepSeek-V3.2 on the H100: P 64
    and 15,354 blocks either way, as its MLA pages are 64 tokens at any size asked,
    ``same_figures``), with where the button that sets them is. ``refused``: why there are no
    figures under them to differ (``recent_refusal_text``: Nemotron-H-8B at 256 MiB, whose
    request no longer fits in align; or the error of settings the pages cannot take), said in
    place of "its figures differ", which read as if vLLM ran there."""
    if not recent:
        return ANCHOR_OPTIONS
    said = {"block_size": lambda v: f"block size {v}",
            "mamba_cache_mode": lambda v: f"mamba cache mode {v}",
            "prefill_checkpoint_blocks": lambda v: count_text(v, "prefill checkpoint block"),
            "vllm_async_scheduling": lambda v: "async scheduling"}
    parts = [said[k](v) for k, v in recent.items()]
    listed = and_text(parts)
    # "vLLM 0.34's own defaults set ..., at which its figures ...": the words read "a vLLM
    # 0.34 run with its own sets block size 64", a noun missing, at the top of every page
    figures = (f", and {refused}" if refused else
               f", at which its figures {'differ' if differs else 'are the same here'}")
    return (f"{ANCHOR_OPTIONS} (vLLM {CURRENT_RELEASE}'s own defaults set {listed}{figures}: "
            f"\"Use vLLM {CURRENT_RELEASE}'s defaults\" under "
            f"{button_where})")


def recent_refusal_text(then: StrategyResult, now: StrategyResult) -> str:
    """Where vLLM has no figures on one side of vLLM 0.34's own defaults (``then``: its run
    with them, ``AppState.recent_vllm_changes`` taken; ``now``: at the view's), that, for
    ``defaults_text``, in place of "its figures differ", which read as if vLLM ran at both:
    "vLLM refuses to start here under them" (its ``why_not_label``), "too" where it does at
    the view's; "vLLM starts here under them, not under these" where it refuses at the view's
    alone (DeepSeek-V3.2 told block 32, which its sparse MLA backend refuses: 0.34's 64 runs
    it). The reason is left to Compare's line under its table once they are set (a request's
    bytes and the budget's: too long for a line every page puts near its top), on the page
    every page's button names ("its column" read as a column of vLLM's that neither Compare,
    whose vLLM is a row, nor Layout or Budget has). "" where vLLM runs at both."""
    if then.applies:
        return "" if now.applies else "vLLM starts here under them, not under these"
    return (f"vLLM {why_not_label(then)} here under them{'' if now.applies else ' too'} "
            "(Compare says why once they are set)")


def same_figures(a: StrategyResult, b: StrategyResult) -> bool:
    """Whether two runs of a layout show the same figures: whether it applies (and why not),
    P, the blocks, the tokens held and logged, the concurrency and the bytes by category. Not
    the block size asked, which a model may not take (DeepSeek-V3.2's sparse MLA pages are
    64 tokens at 16 or 64), nor the formulas, which name it."""
    def shown(r: StrategyResult) -> tuple:
        return (r.applies, r.reason, r.block_bytes, r.num_blocks, r.capacity_tokens,
                r.logged_tokens, r.older_logged_tokens, r.concurrency_numerator,
                r.concurrency_denominator, r.breakdown)
    return shown(a) == shown(b)


def recent_vllm_help(changes: dict[str, object], profile: CacheProfile,
                     gpu: str = "", checkpoint_blocks: int | None = None) -> str:
    """What the "vLLM 0.34's defaults" button sets (``AppState.recent_vllm_changes``) for
    ``profile``'s model on ``gpu``, where vLLM 0.34 keeps ``checkpoint_blocks``
    (``AppState.vllm_checkpoint_blocks``: None, not known). A GDN or KDA model's checkpoint
    block depends on the GPU, so where it is not kept the help says where it would be; a KDA
    model FlashKDA takes on no GPU (``flashkda_refusal``) keeps none on any, and the help says
    why."""
    architectures = profile.architectures
    gdn = bool(GDN_CHECKPOINT_CLASSES.intersection(architectures))
    kda = set(KDA_CHECKPOINT_SINCE).intersection(architectures)
    since = checkpoint_since(profile)  # (a KDA class's release, the first of its classes)
    if kda:
        checkpoint = (f"(vLLM {since} and later, for KDA layers, whose prefill runs on FlashKDA "
                      f"on the {gpu})")
    elif gdn:
        checkpoint = (f"(vLLM 0.33 and later, for GDN layers, whose prefill runs on FlashInfer "
                      f"on the {gpu})")
    else:
        checkpoint = "(vLLM 0.32 and later, for Mamba2 layers)"
    never = flashkda_refusal(profile)
    gdn_elsewhere = ""
    if (gdn or kda) and checkpoint_blocks != 1 and not never:
        where = (f"not on the {gpu}" if checkpoint_blocks == 0
                 else "pick the GPU or its architecture, or set Prefill checkpoint blocks to 1 "
                 "for a log of one")
        gdn_elsewhere = (f" vLLM {since} and later keep a prefill checkpoint block more for "
                         "this model's KDA layers on an H100, H200 or B200 with heads of 128 "
                         "in bfloat16, where their prefill runs on FlashKDA" if kda else
                         " vLLM 0.33 and later keep a prefill checkpoint block more for this "
                         "model's GDN layers on an H100 or H200, or a B200 with key heads of "
                         "128 (CUDA 13), where their prefill runs on FlashInfer") + f": {where}."
    kept = ("1 prefill checkpoint block " + checkpoint
            if changes.get("prefill_checkpoint_blocks") else
            f"no prefill checkpoint blocks ({TRITON_KDA_EVERYWHERE}: {never})" if never else
            "no prefill checkpoint blocks (vLLM 0.34 keeps none for this model's state layers"
            + (f" on the {gpu})" if gdn or kda else ")"))
    said = {"block_size": f"block size {changes.get('block_size')} (vLLM 0.34's default "
                          "--block-size)",
            "mamba_cache_mode": "mamba cache mode align (vLLM 0.28 and later start a hybrid "
                                "with prefix caching on)",
            "prefill_checkpoint_blocks": kept,
            "vllm_async_scheduling": "async scheduling (two batches in flight in the window "
                                     "pages, vLLM 0.26 and later)"}
    parts = [said[k] for k in changes]
    listed = and_text(parts)
    moves = (" The block size is the sidebar's: FlatKV's layouts and the others page by it "
             "too." if "block_size" in changes else "")
    return ("Sets " + listed + ", to match a log of vLLM 0.34 run with its defaults; the "
            "older defaults of the vLLM 0.19 log these figures are checked against are kept "
            "here until changed." + moves + gdn_elsewhere +
            " The budget stays: vLLM 0.34 "
            "on CUDA sizes its cache after warm-up, so pick \"vLLM KV cache blocks\" in the "
            "sidebar and give the N of its \"Memory after warmup: ... N KV cache blocks (X GiB) "
            "fit\" line (0.20 to 0.33: memory fraction 0.92).")


def attention_dp_text(results: Sequence[StrategyResult]) -> str:
    """Where SGLang runs attention DP (``sglang_attn_dp_size`` D > 1): its figures are one
    group's, as SGLang logs them, and each of the D groups runs requests of its own over pools
    of its own, so the deployment holds D times its concurrency ("" otherwise). The other
    layouts' figures are the whole TP's: its ranks hold every request's heads."""
    for r in results:
        if r.strategy != "sglang" or not r.applies or not (
                groups := r.extras.get("attention_dp_groups")):
            continue
        text = (f"SGLang's figures are one of its {groups} attention-DP groups' (a rank's pools, "
                "as it logs them): each group runs requests of its own")
        if r.concurrency is not None:
            text += (f", so the {groups} hold {groups} x {r.concurrency_numerator:,} / "
                     f"{r.concurrency_denominator:,} = "
                     f"{concurrency_text(groups * r.concurrency)} requests of "
                     f"{tokens_text(r.context_tokens)} at once in all")
        return text + "; the other layouts' are the whole TP's, whose ranks share every request."
    return ""


def logged_capacity_text(results: Sequence[StrategyResult], profile: CacheProfile | None = None,
                         options: StrategyOptions | None = None) -> str:
    """What the engines' own logs say, to check against a real log. vLLM's "GPU KV cache size"
    is max concurrency x max_model_len in current releases; 0.19 and earlier printed one page
    per P tokens in every group, state groups too. Where no vLLM release logs vLLM's figure
    under ``options`` (``logged_since`` "": prefill checkpoint blocks told to a class none
    keeps them for, Jamba's), it is not quoted as a log line: the words say why. Empty when no
    engine logs one here."""
    no_log = (unlogged_why(profile, options) if profile is not None and options is not None
              else "")
    parts = [f"{logged_as(r.strategy)}: {r.logged_tokens:,} tokens"
             for r in results
             if r.applies and r.logged_tokens is not None
             and not (no_log and r.strategy == "vllm")]
    text = "In the engines' logs: " + "; ".join(parts) + "." if parts else ""
    for r in results:
        if no_log and r.strategy == "vllm" and r.applies and r.logged_tokens is not None:
            text += (f" Not in any vLLM log: vLLM's {r.logged_tokens:,} tokens, as {no_log} "
                     "(Prefill checkpoint blocks 0 gives a log's figure).")
    for r in results:
        if r.strategy == "vllm" and r.applies and r.older_logged_tokens is not None:
            text += (f" vLLM's line is max concurrency x max_model_len ({OLDER_VLLM_LOG}: "
                     f"{r.older_logged_tokens:,}, num_blocks // groups x min block size, "
                     f"{OLDER_VLLM_TELL}).")
        if (r.strategy == "vllm" and r.applies and "state_page_bytes" in r.extras
                and r.extras["mamba_cache_mode"] == "none"):
            text += f" These count mamba cache mode none: {ALIGN_BY_DEFAULT}."
    return text.strip()


# What a reviewer reads first: the figures every layout has (concurrency, capacity, P,
# blocks), the layout and its four in 522 px at most, inside the 538 of the main column at
# 1000 px. The block's exact bytes and the engines' own log counts (blank for our layouts) are
# a table of their own under it (``LOG_COLUMNS``): one table of all eight columns was 853 px
# wide at 1000 px, and the log columns and block bytes were read only by scrolling sideways.
HEADLINE_COLUMNS = ("strategy", CONCURRENCY_COLUMN, "capacity (tokens)", "P (tokens)", "blocks")
# the layout, its block's bytes and the log lines' tokens: 525 px at most ("block bytes"
# 98 to 112 for 11 to 13 digits, "engine log" 110 and "older vLLM log" 137 with their
# tooltips' icons, "vLLM v1 (won't start)" 166)
LOG_COLUMNS = ("strategy", "block bytes", LOGGED_COLUMN, OLDER_LOGGED_COLUMN)
# Compare's table on screen heads the two log columns without "(tokens)" (their tooltips say
# it): under the full names, strategy, concurrency and both log columns took 627 px, and the
# older log's column began past the table's scroll edge at 1000 px (540 px). The CSV, the JSON
# and the CLI keep the full names.
HEADLINE_SCREEN_NAMES = {LOGGED_COLUMN: "engine log", OLDER_LOGGED_COLUMN: "older vLLM log"}
# and, on screen only (the table's data keeps them whole), its figures' headers short, their
# units in their tooltips: "capacity (tokens)" and "P (tokens)" took 58 px more, and blocks
# began past the table's edge at 1000 px
HEADLINE_LABELS = {"capacity (tokens)": "capacity", "P (tokens)": "P"}
# Compare's table names a layout with no figures here "(n/a)" or "(won't start)" beside its
# name (``why_not_label``'s "does not apply" and "refuses to start", short: the strategy column
# stays 160 to 166 px and has no tooltip, whose icon would take 18 more, so the figures after
# it stay in view at 1000 px); the line under the table gives the reason in full. In a last
# column of their own they were past the edge at 1000 px (a row of dashes read as empty) and
# cut at 1,400.
WHY_NOT_SHORT = {DOES_NOT_APPLY: "n/a", WONT_START: "won't start"}

def state_once_clause(has_state: bool) -> str:
    """Why concurrency can read under capacity over the context (Qwen3-Next at 1,929 blocks:
    1,048,832 tokens, 4 x 262,144 and more, yet 3.99 requests): capacity sets one request's
    state aside, concurrency charges each request its own. The capacity helps' clause; empty
    without state layers."""
    return ("; concurrency charges every request its own state, so it can read under capacity "
            "over the context" if has_state else "")


def headline_help(has_state: bool, windows: bool = False) -> dict[str, str]:
    """Compare's column tooltips. The two token columns count differently, and a reader meets
    them side by side: each says how; the capacity's says a state group's share only where
    the model has state layers (``capacity_counts``), and, as Budget's and Layout's tag do,
    that windows count as full history where ``windows``: a layout here counts them so
    (``windows_as_history``; the note under the table says why)."""
    tag = (f" Sliding and chunked layers: {WINDOWS_AS_HISTORY} (the note under the table)."
           if windows else "")
    return {
        HEADLINE_SCREEN_NAMES[LOGGED_COLUMN]:
            "Tokens the engine itself logs, to set beside its log: vLLM's \"GPU KV cache size\" "
            "(max concurrency x max_model_len, as later releases print it: 0.26 and 0.34 "
            "checked), SGLang's max_total_num_tokens. Our layouts log none.",
        HEADLINE_SCREEN_NAMES[OLDER_LOGGED_COLUMN]:
            f"Tokens in vLLM's \"GPU KV cache size\" as {OLDER_VLLM_LOG} printed it: "
            "num_blocks // groups x the smallest block size (the math shows which). Tell the "
            f"two apart by the figure: {OLDER_VLLM_TELL}. A dash where those releases ran no "
            "such layout (the line under the table says why).",
        "P (tokens)": "Tokens a page holds: the block size the layout sets.",
        "capacity (tokens)": f"Tokens, this tool's count, alike for every layout: "
                             f"{capacity_counts(has_state)} ({capacity_pages(has_state)})"
                             f"{state_once_clause(has_state)}; SGLang's full token pool. Not "
                             f"an engine's log line: see {HEADLINE_SCREEN_NAMES[LOGGED_COLUMN]}."
                             + tag,
    }


def headline_rows(results: Sequence[StrategyResult], has_history: bool,
                  columns: Sequence[str] = HEADLINE_COLUMNS,
                  kv_dtypes: Mapping[str, str] | None = None) -> list[dict]:
    """Compare's table as the page shows it: a row a layout, its ``columns`` in order
    (``HEADLINE_COLUMNS``, or ``LOG_COLUMNS`` for the table under it; no capacity for a model
    that keeps no token history), the log columns under their ``HEADLINE_SCREEN_NAMES``. A
    layout with no figures here is listed too, as the chart and the least-budget table list
    it: its figures gaps, why in short beside its name (``WHY_NOT_SHORT``; it was left out,
    and the table read as if the layout did not exist). ``kv_dtypes``: a layout's KV dtype
    where it stores another than the model's (``kv_dtype_marks``), marked beside its name
    ("SGLang (fp8_e4m3 KV)", as short as "slab aliasing (n/a)": in a column of their own the
    dtypes took 96 px more than the 540 at 1000 px); the line under the table names both."""
    columns = [c for c in columns if has_history or c != "capacity (tokens)"]
    rows = []
    for r, row in zip(results, map(compare_table_row, results), strict=True):
        if not r.applies:
            row = {**row, "strategy": f"{row['strategy']} ({WHY_NOT_SHORT[why_not_label(r)]})"}
        else:
            row = {**row, "strategy": marked_title(r.strategy, kv_dtypes)}
        rows.append({HEADLINE_SCREEN_NAMES.get(c, c): row[c] for c in columns})
    return rows


# The first column of Compare's "where the budget goes" table, a row a category
BUDGET_GOES = "category (bytes)"


def budget_by_category_rows(results: Sequence[StrategyResult],
                            kv_dtypes: Mapping[str, str] | None = None,
                            titles: Mapping[str, str] = STRATEGY_TITLES) -> list[dict]:
    """Compare's table of where each layout's budget goes: a row a category, a column a layout
    that applies, so it is as wide as the layouts and fits a laptop's page (a column a
    category, nine of them, scrolled sideways even at 1,440 px). A column is titled as
    ``marked_title`` titles it (``titles``: the page's short ones), SGLang's with the KV dtype
    it stores where ``kv_dtypes`` marks it, as Compare's other tables and charts name it."""
    shown = [r for r in results if r.applies]
    categories = list(dict.fromkeys(cat for r in shown for cat, _ in r.breakdown))
    return [{BUDGET_GOES: CATEGORY_LABELS[cat],
             **{marked_title(r.strategy, kv_dtypes, titles): dict(r.breakdown).get(cat)
                for r in shown}} for cat in categories]


def least_budget_help(need: int, requests: int, context: int, strategy: str, *,
                      counted_above: bool, steps_down: bool) -> str:
    """Budget's help under the least cache budget for ``requests``: what it holds, counted how,
    and why a budget below it can hold them too where the layout steps down (SGLang beside a
    state pool) or why one request counts vLLM's null block."""
    return (f"{need:,} B per rank: the least cache budget "
            + ("from which every larger one " if steps_down else "that ")
            + f"holds {count_text(requests, 'request')} of {tokens_text(context)}, "
            + ("counted as the concurrency above" if counted_above else
               "counted as this layout's concurrency")
            + (" (SGLang's state pool gains a slot at some budgets and its KV memory "
               "loses that slot's bytes, so a budget just below such a step can hold "
               "them too)." if steps_down else ".")
            + (" vLLM's logged concurrency leaves its null block out; to start, one "
               "request's blocks need it beside them, so for one request it is counted."
               if strategy == "vllm" else ""))


def below_a_step_text(r: StrategyResult, need: int, requests: int) -> str:
    """Where the budget already holds ``requests`` but the least budget from which every
    larger one does (``need``) is higher: SGLang's state pool steps (empty otherwise)."""
    if need <= r.budget_bytes or not r.applies or r.concurrency < requests:
        return ""
    return (f"This budget holds {count_text(requests, 'request')} too, but some budgets up to "
            f"{format_bytes(need)} do not: SGLang's state pool gains a slot there and its KV "
            "memory loses that slot's bytes.")


def breakdown_column(category: str) -> str:
    """``kv_history`` -> ``kv history (B)``: the chart legend's words, with the unit."""
    return f"{CATEGORY_LABELS[category]} (B)"
