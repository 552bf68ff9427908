"""vLLM v1's hybrid KV cache manager (SPEC section 3.1).

- P: ``A * cdiv(state_page, A * attn_bytes_per_token)`` with ``A = max(kernel block size,
  block_size)`` (a block size above the kernel block and off its multiples finds no attention
  backend: refused; so is one off the multiples of 16, which no backend takes, under the
  kernel block too, and DeepSeek-V3.2's sparse MLA told any block off 64s but FlatKV's 16,
  which stands for none told), "Setting attention block size to P tokens" where that is more than
  block_size; the state page is padded up to the attention page ("Padding mamba page size by
  X%"). In mamba cache mode ``all`` (prefix caching
  of state) ``c = lcm(mamba_chunk_size, A)`` replaces A. Attention-only models: P = A.
- Groups: layers of each type split into groups of ``group_size`` layers, ``group_size`` the
  smallest per-type layer count (the largest when it is under 1.5 x the smallest). A type's
  layers are dealt round robin (``layers[i::num]`` to group i), so when ``group_size`` does not
  divide its count the groups that come up short hold padding layers (7 layers in groups of 3:
  3 / 2 / 2, two padding layers), spread over the type's groups: SPEC 3.1's "padding layers fill
  the last" paraphrases vLLM's comment, while 0.34's code (``v1/core/kv_cache_planning.py``)
  deals round robin, as its own example "(sw.0, sw.2), (sw.1, padding)" shows. Either way the
  bytes are the same. Tensor i is shared by layer i of every group, all over
  one block-id space, so a block id is ``group_size`` pages and has no dead weight.
- ``num_blocks = available // page_bytes // group_size``; "Maximum concurrency" is
  ``num_blocks`` over the blocks one request needs summed over groups. A chunked group (Llama
  4's chunked local attention, ``ChunkedLocalAttentionSpec``) needs ``cdiv(min(C +
  max_batched_tokens, L), P)`` blocks, a sliding one a block more than its span (0.26 and later
  count the tokens in flight there: 2 x max_batched_tokens with async scheduling). Chunked layers
  get groups of their own since the hybrid manager serves them by default
  (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 1 since PR #29627); releases
  before it, or that variable at 0, ran them as full attention, every layer in one group.
- The log's "GPU KV cache size" (``logged_tokens``) is ``int(max_concurrency * max_model_len)``
  in current releases (``get_kv_cache_capacity``; one line, "GPU KV cache size: N tokens,
  Maximum concurrency for L tokens per request: X.XXx", since PR #50462; two lines before it,
  as 0.26.0 logs them, issue #50456). vLLM 0.19 and earlier (SPEC 3.1's anchor; 0.19.0 in
  issue #40691) printed ``num_blocks // num_groups * min block size``
  (``older_logged_tokens``), also on two lines, so the line count does not tell them apart:
  the older figure is a multiple of the smallest block size. It is counted on 0.19's own
  layout (``older_release_layout``), whose hybrid P differs where --block-size or the kernel
  block is above 16 or drafted conv rows enter P. The block size of every group is
  P, except a state group's in mamba cache mode none, which is max_model_len.
  ``capacity_tokens`` keeps the convention every strategy shares, so the Compare figures line
  up.
- vLLM refuses to start when one request of the context does not fit the budget less one block
  (its pages in every group, padding layers included). The block is the null block its block
  pool holds back (block 0): since 0.29 (PR #47272) the start-up check subtracts it, while
  "Maximum concurrency" and the KV cache size still count it (a model only earlier releases
  serve, MiniMax's up to 0.23.0, is checked against the whole budget:
  ``vllm_releases.null_block_checked``). The layout then does not apply, and says the
  longest context that fits (vLLM's "estimated maximum model length").
- Mamba cache mode all needs a model class that supports prefix caching of state
  (``SupportsMambaPrefixCaching``). Asked for it, a model without (Qwen3-Next, Qwen3.5, Kimi
  Linear, MiniMax-Text-01, LFM2, PLaMo 2) starts in align ("falling back to 'align' mode"),
  known by the config's architectures; the layout is then align's.

The start-up log's lines are worded in ``vllm_log``, and the facts of particular model classes
and releases (which class runs all as align, which releases log the older figure or serve a
dropped architecture) are tabled in ``vllm_releases``; both are read here, neither reads this.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import NamedTuple

from flatkv.budget import BLACKWELL_MAJOR, capability_text, gpu_models
from flatkv.dtypes import DTYPE_BYTES, ENGINE_DTYPE_NAMES, unstored_kv_dtype_refusal
from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    cdiv,
)
from flatkv.profile import SPARSE_MLA_KERNEL_BLOCK_SIZE, WINDOWED, CacheProfile, group_name
from flatkv.strategies.base import (
    StrategyOptions,
    StrategyResult,
    UnitUse,
    budget_too_small,
    kv_sizes_text,
    n,
    not_applicable,
    refuses_to_start,
    request_pages,
    unit_parts,
)
from flatkv.strategies.paged import finish_paged
from flatkv.strategies.vllm_log import (
    CURRENT_LOG,
    LogFlavour,
    OlderLayout,
    mode_all_log,
    padding_layers_text,
    start_up_log,
    warmup_lines,
    with_logged_tokens,
)
from flatkv.strategies.vllm_releases import (
    ALIGN_INSTEAD_OF_ALL,
    DRAFTED_CONV_SINCE,
    FLASHINFER_GDN_CAPABILITIES,
    FLASHKDA_CAPABILITY_MAJORS,
    FLASHKDA_HEAD_DIM,
    FLASHKDA_REFUSED_KV_DTYPES,
    FLOAT32_SSM_UNLESS_TOLD,
    GDN_CHECKPOINT_CLASSES,
    GDN_CHECKPOINT_GRID,
    KDA_AUTO_SSM_DTYPE,
    KDA_CHECKPOINT_SINCE,
    KDA_FLOAT32_SSM_CLASSES,
    KDA_SSM_DTYPE_CLASSES,
    KDA_SSM_DTYPES,
    LIGHTNING_CLASS,
    MODE_ALL_RELEASE,
    NULL_BLOCK_CHECKED_SINCE,
    OLDER_ALIGNMENT,
    OLDER_CUTLASS_MLA_ALIGNMENT,
    OLDER_FLOAT32_SSM_CLASSES,
    OLDER_FLOAT32_SSM_UNLESS_TOLD,
    OLDER_MLA_ALIGNMENT,
    OLDER_RELEASE,
    OLDER_SSM_DEFAULT,
    OLDER_UNWIDENED_CLASSES,
    OLDER_VLLM_LOG,
    PREFILL_CHECKPOINT_CLASSES,
    RECENT_VLLM_BLOCK_SIZE,
    SERVED_AFTER_MODE_ALL,
    SIZES_P_WITH_DRAFTED_CONV,
    SSM_DEFAULT,
    WINDOW_PLUS_ONE_CLASSES,
    WINDOW_PLUS_ONE_SINCE,
    last_release,
    last_served_text,
    null_block_checked,
    release_key,
)
from flatkv.units import MAX_BYTES, count_text, format_bytes, tokens_text
from flatkv.workload import PoolGroup, longest_fitting


def _indexer_layers_text(profile: CacheProfile, p: int, group_size: int) -> str:
    """DeepSeek-V3.2's indexer keys, which FlatKV counts in each MLA layer's bytes a token,
    are a layer of their own in vLLM (``DeepseekV32IndexerCache``, one a layer): its group then
    holds twice the layers, pages of two sizes, and its kv_cache_config says so. The block's
    bytes, and so every figure, are the same."""
    indexer = profile.indexer_bytes_per_slot
    if not indexer:
        return ""
    mla = profile.kv_bytes_per_slot - indexer
    return (f" (vLLM counts each layer's indexer keys as a layer of its own: "
            f"{n(2 * group_size)} layers in its group, pages of P x {n(mla)} = {n(p * mla)} B "
            f"and P x {n(indexer)} = {n(p * indexer)} B, the same bytes a block)")


def group_size_for(counts: dict[str, int]) -> int:
    """vLLM's group size: the smallest per-type layer count, or the largest when it is below
    1.5 x the smallest (integer test ``2 * max < 3 * min``)."""
    smallest, largest = min(counts.values()), max(counts.values())
    return largest if 2 * largest < 3 * smallest else smallest


DEFAULT_KERNEL_BLOCK_SIZE = 16  # most attention backends (SPEC section 3.1)
# vLLM's get_mamba_chunk_size for a config without mamba_chunk_size / chunk_size (Mamba1, GDN)
DEFAULT_MAMBA_CHUNK_SIZE = 2048


def kernel_block_size(profile: CacheProfile, options: StrategyOptions) -> tuple[int, str]:
    """The attention backend's kernel block size A starts from, and why when it is not given:
    the option, else the model's own (64 for sparse MLA, 16 for dense MLA:
    ``models.MLA_KERNEL_BLOCK_SIZE``), else 16."""
    if options.kernel_block_size is not None:
        return options.kernel_block_size, ""
    if profile.kernel_block_size is not None:
        return profile.kernel_block_size, " (the model's own)"
    return DEFAULT_KERNEL_BLOCK_SIZE, ""


def mamba_chunk_size(profile: CacheProfile, options: StrategyOptions) -> tuple[int, str]:
    """The state kernel's chunk P aligns to in mamba cache mode all, and why when it is not
    given: the option, else the model's own (its config's), else vLLM's 2,048."""
    if options.mamba_chunk_size is not None:
        return options.mamba_chunk_size, ""
    if profile.mamba_chunk_size is not None:
        return profile.mamba_chunk_size, " (the model's own)"
    return DEFAULT_MAMBA_CHUNK_SIZE, " (vLLM's for a config without one)"


def request_bytes(profile: CacheProfile, options: StrategyOptions, counts: dict[str, int],
                  group_size: int, context_tokens: int, block_sizes: Mapping[str, int],
                  page_bytes: int) -> int:
    """What vLLM checks before it starts (``_max_memory_usage_bytes_from_groups``): the KV
    cache one request of ``context_tokens`` needs, its pages in every group, each page
    ``group_size`` layers' pages (padding layers included). vLLM 0.29+ checks it against the
    budget less one block (the null block), so it fits exactly when the request's blocks fit
    ``num_blocks - 1``. ``block_sizes``: each kind's tokens a page."""
    return group_size * page_bytes * sum(
        cdiv(count, group_size)
        * request_pages(kind, context_tokens, block_sizes[kind], options, profile.window(kind))
        for kind, count in counts.items())


def longest_context(profile: CacheProfile, options: StrategyOptions, counts: dict[str, int],
                    group_size: int, budget_bytes: int, context_tokens: int,
                    block_sizes: Mapping[str, int], page_bytes: int) -> int:
    """vLLM's "estimated maximum model length": the longest context up to ``context_tokens``
    whose request fits ``budget_bytes`` (its binary search), 0 when not even one token does."""
    return longest_fitting(lambda tokens: request_bytes(
        profile, options, counts, group_size, tokens, block_sizes, page_bytes) <= budget_bytes,
        context_tokens)


class _PageChoice(NamedTuple):
    """P and its page as one of ``_page_size``'s three cases sizes them (a state hybrid, a model
    of attention alone, a model of state alone), with the formula lines and extras that case
    adds: returned, not appended, so each case reads on its own."""

    p: int  # vLLM's block size P, tokens a page
    page: int  # page_bytes: every page's bytes, the state page padded up to it
    attention_page: int  # P x the attention bytes a token (0 without attention)
    why: str
    formulas: list[str]
    extras: dict[str, object]


def _page_size(profile: CacheProfile, options: StrategyOptions, formulas: list[str],
               extras: dict[str, object]) -> tuple[int, int, int, str]:
    """vLLM's block size P and page: ``(P, page_bytes, attention_page_bytes, why)``. With state
    layers P is the smallest multiple of the attention block size (or of lcm(chunk, it) in
    mamba cache mode all) whose attention page covers the state page, and the state page is
    padded up to it; without, P is the attention block size, and the page that of the kind
    whose token takes the most bytes (where sliding layers keep other heads than full ones).
    Appends formulas and extras."""
    kv = max(profile.kv_bytes_of(label) for label in set(profile.layer_types))
    state = profile.state_bytes_per_layer
    kernel, a, a_text = _attention_block_size(profile, options)
    align, align_text, sym, chunk = _mode_all_alignment(profile, options, a, a_text)
    if chunk is not None:
        extras["mamba_chunk_size"] = chunk
    extras["kernel_block_size"] = kernel  # the backend's; A = max(it, block_size)
    extras["attention_block_size"] = a
    if profile.has_state and profile.has_attention:
        choice = _hybrid_page(kv, state, align, align_text, sym, options.block_size)
    elif profile.has_attention:
        choice = _attention_only_page(kv, a, a_text)
    else:
        choice = _state_only_page(state, align, align_text, sym)
    formulas += choice.formulas
    extras.update(choice.extras)
    return choice.p, choice.page, choice.attention_page, choice.why


def _attention_block_size(profile: CacheProfile,
                          options: StrategyOptions) -> tuple[int, int, str]:
    """``(kernel block size, A, A's derivation)``: the attention block size every P is a
    multiple of, ``A = max(kernel block size, block_size)``, raised where vLLM raises it (an
    MLA hybrid's to MLA_HYBRID_BLOCK; a GDN class's in align with prefill checkpoints to the
    checkpoints' grid), since vLLM picks the attention backend, and so A, before it sizes P."""
    kernel, kernel_why = kernel_block_size(profile, options)
    if not profile.has_attention:
        # no attention layer, no backend: vLLM keeps the block size told
        # (update_block_size_for_backend finds no attention backend and returns)
        return kernel, options.block_size, (f"A = block_size {options.block_size}: no "
                                            "attention layer, so no kernel block")
    a = max(kernel, options.block_size)
    a_text = (f"A = max(kernel block size {kernel}{kernel_why}, block_size "
              f"{options.block_size}) = {a}")
    if profile.mla and profile.has_state and a < MLA_HYBRID_BLOCK:
        # an MLA model (one latent a layer: CacheProfile.mla, as vLLM's model_config.use_mla,
        # platforms/interface.py 1095-1100; not a kernel block, which any model may give)
        # with state layers: Kimi Linear
        a = MLA_HYBRID_BLOCK
        a_text += (f", raised to {a}: an MLA hybrid's block is a multiple of {a} (vLLM 0.27 and "
                   "later, for its MLA decode kernels)")
    if (options.mamba_cache_mode == "align" and options.prefill_checkpoint_blocks
            and GDN_CHECKPOINT_CLASSES.intersection(profile.architectures)
            and a % GDN_CHECKPOINT_GRID):
        # checkpoints of GDN prefill on FlashInfer (the only GDN that keeps them) lie on a grid
        # of 64 tokens, which vLLM aligns a block to in align (_align_hybrid_block_size)
        a = math.lcm(a, GDN_CHECKPOINT_GRID)
        a_text += (f", aligned to {a}: its GDN layers' prefill checkpoints lie on a grid of "
                   f"{GDN_CHECKPOINT_GRID} tokens (FlashInfer prefill, vLLM 0.33 and later)")
    return kernel, a, a_text


def _mode_all_alignment(profile: CacheProfile, options: StrategyOptions, a: int,
                        a_text: str) -> tuple[int, str, str, int | None]:
    """``(alignment, its derivation, its symbol, mamba chunk)``: what P is a multiple of. A,
    except a state hybrid's in mamba cache mode all, whose state snapshots fall on the state
    kernel's chunks: ``c = lcm(mamba_chunk_size, A)`` (chunk returned, for the extras; None
    elsewhere). A model of state layers alone keeps A there, as vLLM 0.31 aligns only a
    hybrid's P (said in the derivation)."""
    if options.mamba_cache_mode != "all" or not profile.has_state:
        return a, a_text, "A", None
    if not profile.has_attention:
        # vLLM 0.31 aligns a hybrid's block size only (_align_hybrid_block_size): a model of
        # state layers alone snapshots its state every --block-size tokens (MambaModelConfig)
        return a, (f"{a_text}; mamba cache mode all: a model without attention pages by it, its "
                   f"chunk unused (vLLM {MODE_ALL_RELEASE} aligns only a hybrid's P to the "
                   "chunk)"), "A", None
    chunk, chunk_why = mamba_chunk_size(profile, options)
    align = math.lcm(chunk, a)
    return align, (f"{a_text}; mamba cache mode all: c = lcm(mamba_chunk_size "
                   f"{chunk}{chunk_why}, A) = {align} replaces A"), "c", chunk


def _hybrid_page(kv: int, state: int, align: int, align_text: str, sym: str,
                 block_size: int) -> _PageChoice:
    """A state hybrid's P: the smallest multiple of the alignment ``sym`` whose attention page
    (``kv`` bytes a token) covers the ``state`` page, since every page of the pool is one size;
    the state page is then padded up to the attention page ("Padding mamba page size")."""
    p = align * cdiv(state, align * kv)  # a multiple of the kernel block (run_vllm)
    attn_page = p * kv
    page = max(attn_page, state)
    pad = page - state
    fraction = Fraction(pad, state)
    # logged only where P grows past the block size asked for
    logged = (f" (\"Setting attention block size to {p} tokens\")"
              if block_size < p else "")
    why = (
        f"{align_text}; P = {sym} x cdiv(state page {n(state)} B, {sym} x {n(kv)} B) = "
        f"{align} x {cdiv(state, align * kv)} = {n(p)}, the smallest multiple of {sym} whose "
        f"attention page covers the state page{logged}"
    )
    formulas = [
        f"P = {sym} x cdiv(state_page, {sym} x attn_bytes_per_token) = {align} x "
        f"cdiv({n(state)}, {align} x {n(kv)}) = {n(p)}",
        f"page_bytes = max(P x {n(kv)}, {n(state)}) = {n(page)}; state page padded by "
        f"({n(page)} - {n(state)}) / {n(state)} = {float(fraction) * 100:.2f}% "
        "(\"Padding mamba page size\")",
    ]
    extras = dict(attention_page_bytes=attn_page, state_page_bytes=state,
                  state_padding_fraction=float(fraction), state_padding_exact=[pad, state])
    return _PageChoice(p, page, attn_page, why, formulas, extras)


def _attention_only_page(kv: int, a: int, a_text: str) -> _PageChoice:
    """A model of attention alone pages by A itself: no state page to cover, and the page is
    P x the bytes of the widest kind's token (``kv``)."""
    p = a
    page = attn_page = p * kv
    why = f"P = A: {a_text}; no state page to cover"
    formulas = [f"P = A = {n(p)} ({a_text})", f"page_bytes = P x {n(kv)} = {n(page)}"]
    return _PageChoice(p, page, attn_page, why, formulas, dict(attention_page_bytes=attn_page))


def _state_only_page(state: int, align: int, align_text: str, sym: str) -> _PageChoice:
    """A model of state alone: its page is one state page whatever the tokens, so P (the
    alignment) is nominal, and nothing is padded."""
    why = (
        f"P = {sym} = {n(align)} nominal ({align_text}): a state-only model's page is one state "
        f"page ({n(state)} B), whatever the tokens"
    )
    return _PageChoice(align, state, 0, why, [f"page_bytes = state page = {n(state)}"],
                       dict(state_page_bytes=state, state_padding_fraction=0.0))


# the state kinds whose conv state vLLM widens by a row per drafted token (Mamba1's stays)
DRAFT_WIDENED_CONV = "GDN, KDA, Mamba2 and short-conv"


def drafted_profiles(profile: CacheProfile, speculative_tokens: int, formulas: list[str],
                     extras: dict[str, object],
                     release: str | None = None) -> tuple[CacheProfile, CacheProfile]:
    """``(sizing, kept)``: the profile vLLM sizes P from and the one whose state its layers
    keep, with ``speculative_tokens`` drafted a step. vLLM widens the conv state of GDN (and
    KDA), Mamba2 and short-conv layers from K - 1 to K - 1 + N rows (``num_spec`` in
    ``MambaStateShapeCalculator.gated_delta_net_state_shape`` / ``kda_state_shape`` /
    ``mamba2_state_shape`` / ``short_conv_state_shape``); Mamba1's stays. A hybrid's P is
    sized from the widened state only for the classes of SIZES_P_WITH_DRAFTED_CONV (or a
    profile that names no class), in the releases DRAFTED_CONV_SINCE says; ``release``: the
    release sized (None: a current one; mode all is MODE_ALL_RELEASE's). Appends the formula
    line."""
    if not speculative_tokens or not profile.has_state:
        return profile, profile
    conv = profile.state_const_bytes.get("conv")
    pages = (f"and each state group holds {count_text(speculative_tokens, 'more state page')} a "
             "request "
             "(MambaSpec.num_speculative_blocks)")
    if conv is None:
        formulas.append(f"speculative tokens {speculative_tokens}: no conv state to widen (the "
                        f"state is ssm only, as lightning attention's), {pages}")
        return profile, profile
    if profile.conv_rows is None:
        formulas.append(f"speculative tokens {speculative_tokens}: the conv state is kept as "
                        f"given (vLLM widens only {DRAFT_WIDENED_CONV} conv states, and a model "
                        f"given in bytes names no conv rows), {pages}")
        return profile, profile
    widened = profile.conv_bytes_with_drafts(speculative_tokens)
    rows = profile.conv_rows
    kept = replace(profile, state_const_bytes={**profile.state_const_bytes, "conv": widened},
                   conv_rows=rows + speculative_tokens)
    extras["drafted_conv_bytes"] = widened
    line = (f"speculative tokens {speculative_tokens}: conv state {n(conv)} B of {rows} rows "
            f"widened to {rows} + {speculative_tokens} rows = {n(widened)} B (num_spec in vLLM's "
            f"state shapes), {pages}")
    unwidened = [a for a in profile.architectures if a not in SIZES_P_WITH_DRAFTED_CONV
                 or (release and release_key(DRAFTED_CONV_SINCE.get(a, release))
                     > release_key(release))]
    # (only a hybrid's page is sized ahead by its config: a state-only model's is its state's)
    if profile.has_attention and unwidened and len(unwidened) == len(profile.architectures):
        formulas.append(f"{line}; P is sized from the state without them ({unwidened[0]}'s "
                        "get_mamba_state_shape_from_config passes no num_spec"
                        + (f" in vLLM {release}" if release else "") + ")")
        return profile, kept
    if since := next((DRAFTED_CONV_SINCE[a] for a in profile.architectures
                      if a in DRAFTED_CONV_SINCE), None):
        line += (f"; P is sized from the state with them (vLLM {since} and later; earlier "
                 "releases sized it without them, and failed at start-up where that page did "
                 "not hold them)")
    formulas.append(line)
    return kept, kept


def older_release_layout(profile: CacheProfile, options: StrategyOptions, counts: dict[str, int],
                         budget_bytes: int, context_tokens: int | None,
                         p_now: int) -> OlderLayout | None:
    """vLLM OLDER_RELEASE's layout of a state hybrid, the one its "GPU KV cache size" line
    counts, where it is not the current one at ``p_now`` (None where it is, and for a model
    without state or attention layers, whose P it sized alike). Its P (config.py:200-292) is
    ``max(block_size, a x cdiv(state page, a x attn bytes a token))``, ``a`` OLDER_ALIGNMENT
    (an MLA model's OLDER_MLA_ALIGNMENT, 128 on CUTLASS MLA), in mode all ``lcm(chunk, a)``,
    whose multiple is then its state block size even where --block-size is larger; the state
    page P covers is the one without drafted conv rows for FalconH1, GraniteMoeHybrid and
    Zamba2 (DRAFTED_CONV_SINCE) and for OLDER_UNWIDENED_CLASSES, whose layers keep none
    either; Kimi Linear's ssm state is float32 whatever is told (OLDER_FLOAT32_SSM_CLASSES).
    It did not start where the state its layers keep outgrows the page
    (kv_cache_interface.py:283-290: MambaSpec.page_size_bytes asserts page_size_padded >=
    page_size), where in mode all --block-size is above the state block and no multiple of it
    (the blocks' hashes are the smallest block's), or where one request of the context
    outgrows the whole budget (no null block held back before 0.29). Its classes run mode all
    or fall back to align as MODE_ALL_RELEASE's do (its SupportsMambaPrefixCaching classes are
    0.31's and Bamba: config.py:447-456), so the options come here as they were run."""
    if not (profile.has_state and profile.has_attention):
        return None
    served_ssm = profile.ssm_dtype  # the current release's (``_ssm_as_served``)
    older_ssm, older_ssm_why = ssm_dtype(profile, options, older=True)
    profile = _ssm_in(profile, older_ssm)
    told_ssm = profile.ssm_dtype
    if (OLDER_FLOAT32_SSM_CLASSES.intersection(profile.architectures)
            and told_ssm not in (None, "float32") and "ssm" in profile.state_const_bytes):
        profile = _ssm_in(profile, "float32")
    sized, kept = drafted_profiles(profile, options.speculative_tokens, [], {}, OLDER_RELEASE)
    if OLDER_UNWIDENED_CLASSES.intersection(profile.architectures):
        sized = kept = profile
    kv = max(profile.kv_bytes_of(label) for label in set(profile.layer_types))
    state = sized.state_bytes_per_layer
    align, align_text = OLDER_ALIGNMENT, f"{OLDER_ALIGNMENT} (its kernel alignment)"
    if profile.mla:
        cutlass = options.kernel_block_size == OLDER_CUTLASS_MLA_ALIGNMENT
        align = OLDER_CUTLASS_MLA_ALIGNMENT if cutlass else OLDER_MLA_ALIGNMENT
        align_text = f"{align} (its MLA alignment{' on CUTLASS MLA' if cutlass else ''})"
    if options.mamba_cache_mode == "all":
        chunk = mamba_chunk_size(profile, options)[0]
        align_text = f"lcm(mamba_chunk_size {chunk}, {align_text}) = {math.lcm(chunk, align)}"
        align = math.lcm(chunk, align)
    fit = align * cdiv(state, align * kv)
    p = max(options.block_size, fit)
    min_block = fit if options.mamba_cache_mode == "all" else p
    page = p * kv
    how = (f"vLLM {OLDER_RELEASE}'s P = max(block_size {options.block_size}, a x cdiv(state page "
           f"{n(state)} B, a x {n(kv)} B)) = {n(p)}, a = {align_text}, as its "
           "HybridAttentionMambaModelConfig sizes it"
           + (f", the ssm state in float32, not the {told_ssm} told (its kda_state_dtype)"
              if profile.ssm_dtype != told_ssm else "")
           + (f", the ssm state in {older_ssm} ({older_ssm_why}), not {served_ssm}"
              if older_ssm != served_ssm else "")
           + (f", its state block a x cdiv(...) = {n(fit)} (mamba_block_size)"
              if min_block < p else ""))
    if p % min_block:  # mode all, block_size above the state block and off its multiples
        # (kv_cache_coordinator.py:402-405: every group's block a multiple of the smallest)
        return OlderLayout(p, min_block, 0, (), (
            f"{OLDER_VLLM_LOG} do not start: {how}, which block_size {n(p)} is no multiple of "
            "(HybridKVCacheCoordinator asserts \"block_size must be divisible by "
            "hash_block_size\")"))
    if kept.state_bytes_per_layer > page:
        return OlderLayout(p, min_block, 0, (), (
            f"{OLDER_VLLM_LOG} do not start: {how}, and its page ({n(page)} B) does not hold "
            f"the state its layers keep with the {options.speculative_tokens} drafted conv rows "
            f"({n(kept.state_bytes_per_layer)} B; MambaSpec.page_size_bytes asserts it fits)"))
    if p == p_now and min_block == p_now:
        return None
    pages, _, _ = _pages_by_kind(kept, counts, p, page, page, "")
    block_sizes = {**pages.block_sizes, LINEAR_ATTENTION: min_block}
    group_size = group_size_for(counts)
    num_blocks = budget_bytes // pages.page // group_size
    needed = request_bytes(kept, options, counts, group_size, request_tokens(context_tokens),
                           block_sizes, pages.page)
    if needed > budget_bytes:
        return OlderLayout(p, min_block, num_blocks, (), (
            f"{OLDER_VLLM_LOG} do not start: at {how}, {_request_words(context_tokens)} needs "
            f"{n(needed)} B, more than the {n(budget_bytes)} B available"))
    return OlderLayout(p, min_block, num_blocks, (
        f"{how}; its num_blocks = {n(budget_bytes)} // {n(pages.page)} // {group_size} = "
        f"{n(num_blocks)}",))


def padding_layers(count: int, group_size: int) -> int:
    """Padding layers vLLM adds to a type of ``count`` layers in groups of ``group_size``."""
    return cdiv(count, group_size) * group_size - count


def _pool_groups(counts: dict[str, int], padding: dict[str, int], group_size: int, page: int,
                 attn_pages: Mapping[str, int],
                 state: int, *, mla: bool) -> tuple[list[PoolGroup], list[UnitUse], list[str]]:
    """vLLM's KV cache groups: each layer type cut into ``cdiv(count, group_size)`` groups of
    at most group_size layers, a group short of it padded with whole pages ("padding layers").
    ``attn_pages``: the bytes of history each attention kind keeps in its ``page``. Returns
    the groups, what each uses of one block, and the formula lines of the padding vLLM logs,
    each kind named as Layout names it (``mla``: the profile's)."""
    groups: list[PoolGroup] = []
    uses: list[UnitUse] = []
    pad_lines = []
    for kind, count in counts.items():
        num = cdiv(count, group_size)
        if padding[kind]:
            pad_lines.append(f"{group_name(kind, mla=mla)}: "
                             f"{padding_layers_text(padding[kind], count)} "
                             f"(cdiv({count}, {group_size}) = {num} groups)")
        for i in range(num):
            layers = cdiv(count - i, num)  # layers[i::num] of the type go to group i
            gname = kind if num == 1 else f"{kind}.{i}"
            group = PoolGroup(gname, kind, layers)
            if kind == LINEAR_ATTENTION:
                parts = unit_parts(state=layers * state,
                                   state_page_padding=layers * (page - state))
            else:
                parts = unit_parts(kv_history=layers * attn_pages[kind],
                                   row_padding=layers * (page - attn_pages[kind]))
            parts["padding_layers"] = (group_size - layers) * page
            groups.append(group)
            uses.append(UnitUse(group, parts))

    return groups, uses, pad_lines


def runs_all_as_align(profile: CacheProfile) -> str | None:
    """The model class vLLM runs in mamba cache mode align when asked for all (no prefix caching
    of state in mode all), if any: one of the profile's ``architectures``, else the class that
    serves every state without a conv tensor (MiniMax's lightning attention)."""
    named = next(iter(sorted(ALIGN_INSTEAD_OF_ALL.intersection(profile.architectures))), None)
    if named is None and profile.conv_free_state:
        return LIGHTNING_CLASS
    return named


def mamba_chunk_text(profile: CacheProfile, name: Callable[[str], str] = str) -> str | None:
    """What vLLM does with the model's mamba chunk, for the Model page and the CLI's model
    report alike: unused where it runs mode all as align or the model has no attention layers
    (no hybrid P to align), the config's chunk (P aligns to it in mode all), or its default
    where the config has none; None without state layers. ``name``
    writes the architecture (the page: as Markdown that shows it as typed)."""
    if not profile.has_state:
        return None
    if aligning := runs_all_as_align(profile):
        return (f"unused (vLLM runs {name(aligning)} in mamba cache mode align when asked for "
                "all)")
    if not profile.has_attention:  # vLLM 0.31 aligns only a hybrid's P to it
        return (f"unused (vLLM {MODE_ALL_RELEASE} snapshots the state of a model without "
                "attention layers every block size tokens in mamba cache mode all)")
    if profile.mamba_chunk_size:
        return (f"{profile.mamba_chunk_size:,} tokens (vLLM aligns P to it in mamba cache mode "
                "all)")
    return (f"none in the config (vLLM takes {DEFAULT_MAMBA_CHUNK_SIZE:,} in mamba cache mode "
            "all)")


def gdn_checkpoint_on(capability: tuple[int, int] | None, profile: CacheProfile) -> bool:
    """Whether vLLM 0.34 keeps a GDN model's prefill checkpoint block on a GPU of
    ``capability`` (a GPU preset's, ``budget.compute_capability``, or the architecture told): a
    GDN_CHECKPOINT_CLASSES model whose GDN layers' key head dims (``gdn_key_head_dims``) the
    GPU's FlashInfer prefill takes."""
    if capability not in FLASHINFER_GDN_CAPABILITIES or not GDN_CHECKPOINT_CLASSES.intersection(
            profile.architectures):
        return False
    needed = FLASHINFER_GDN_CAPABILITIES[capability]
    # (dims not known, raw bytes: not there)
    return needed is None or profile.gdn_key_head_dims == {needed}


# What vLLM 0.34 does with a KDA model FlashKDA takes on no GPU (``flashkda_refusal`` says why)
TRITON_KDA_EVERYWHERE = ("vLLM 0.34 prefills this model's KDA layers on Triton on every GPU, "
                         "and keeps none for them")


def flashkda_refusal(profile: CacheProfile) -> str:
    """Why FlashKDA runs a KDA_CHECKPOINT_SINCE model's prefill on no GPU, in words after
    TRITON_KDA_EVERYWHERE's; "" where it may (on FLASHKDA_CAPABILITY_MAJORS' GPUs) or the model
    is no such class. FlashKDA takes heads of FLASHKDA_HEAD_DIM (``gdn_key_head_dims``) in
    bfloat16 alone, on any GPU, so a model whose KV cache is in FLASHKDA_REFUSED_KV_DTYPES
    (--kv-cache-dtype auto keeps the model's dtype) runs on Triton everywhere. Heads not known
    (raw bytes: a Kimi-K3 exported and loaded back, whose heads are 128) are no refusal: that
    read "on Triton on every GPU ...: this model's KDA heads are not known", a claim of what
    vLLM does where FlatKV does not know (``kda_checkpoint_on`` takes none there, as
    ``gdn_checkpoint_on`` does)."""
    if not set(KDA_CHECKPOINT_SINCE).intersection(profile.architectures):
        return ""
    if profile.gdn_key_head_dims and profile.gdn_key_head_dims != {FLASHKDA_HEAD_DIM}:
        dims = ", ".join(f"{d:,}" for d in sorted(profile.gdn_key_head_dims))
        return (f"FlashKDA takes heads of {FLASHKDA_HEAD_DIM} alone, and this model's KDA heads "
                f"are {dims}")
    if profile.kv_dtype in FLASHKDA_REFUSED_KV_DTYPES:
        return (f"FlashKDA takes bfloat16 alone, and a {profile.kv_dtype} KV cache is a model run "
                f"in {profile.kv_dtype}")
    return ""


def kda_checkpoint_on(capability: tuple[int, int] | None, profile: CacheProfile) -> bool:
    """Whether vLLM 0.34 keeps a KDA model's prefill checkpoint block on a GPU of
    ``capability``: a KDA_CHECKPOINT_SINCE class FlashKDA takes (``flashkda_refusal``: heads
    of FLASHKDA_HEAD_DIM in bfloat16) on a GPU it runs on (FLASHKDA_CAPABILITY_MAJORS);
    elsewhere it prefills on Triton, with none."""
    return (capability is not None and capability[0] in FLASHKDA_CAPABILITY_MAJORS
            and bool(set(KDA_CHECKPOINT_SINCE).intersection(profile.architectures))
            # (dims not known, raw bytes: not there)
            and profile.gdn_key_head_dims == {FLASHKDA_HEAD_DIM}
            and not flashkda_refusal(profile))


def checkpoint_blocks_kept(profile: CacheProfile,
                           capability: tuple[int, int] | None) -> int | None:
    """The prefill checkpoint blocks vLLM 0.34 keeps a request of this model in align, run on
    a GPU of ``capability`` (a GPU preset's or the architecture told; None: not known): 1 for
    a Mamba2 class; for a GDN class 1 where its prefill runs on FlashInfer
    (``gdn_checkpoint_on``), for a KDA class where it runs on FlashKDA
    (``kda_checkpoint_on``: Kimi-K3's, Glm5Next's), 0 on another GPU, None on one not known;
    0 for a KDA class FlashKDA takes on no GPU (``flashkda_refusal``: heads not of 128, or
    float16), whatever the GPU (heads not known, raw bytes: 0 on a GPU told, None at none),
    and for other state layers (Kimi-Linear's KDA among them: Triton alone); None without
    state (nothing to keep). The app's button and notes and the CLI's notes all read it."""
    if not profile.has_state:
        return None
    if PREFILL_CHECKPOINT_CLASSES.intersection(profile.architectures):
        return 1
    kda = set(KDA_CHECKPOINT_SINCE).intersection(profile.architectures)
    if (not kda and not GDN_CHECKPOINT_CLASSES.intersection(profile.architectures)
            or flashkda_refusal(profile)):
        return 0
    if capability is None:
        return None
    if kda:
        return int(kda_checkpoint_on(capability, profile))
    return int(gdn_checkpoint_on(capability, profile))


# An MLA model with state layers pages by a multiple of this (vLLM 0.27 and later:
# _align_hybrid_block_size, as the TRTLLM / FlashInfer MLA decode kernels need)
MLA_HYBRID_BLOCK = 128
# FlashMLA's kernel block (mla/flashmla.py get_supported_kernel_block_sizes: [64], vLLM 0.31 and
# 0.34): the block vLLM runs a dense MLA cache in fp8 at on a Hopper where told no --block-size
# (``unasked_mla_block_text``)
FLASHMLA_BLOCK_SIZE = 64
# FLASHINFER_MLA's kernel blocks (mla/flashinfer_mla.py 204-205: [32, 64], 0.31 and 0.34), the
# first MLA backend cuda.py lists on a Blackwell (SM 10): told no --block-size there vLLM 0.34
# keeps its default 64, 0.31 raises its 16 to the least, 32 (``unasked_mla_block_text``)
FLASHINFER_MLA_BLOCK_SIZES = (32, 64)
# What vLLM 0.34 does with a dense MLA cache in fp8 on an SM 8.x GPU, told no --block-size,
# said where no GPU is said (``gpu_compute_capability`` None: no preset, no architecture
# told), which FlatKV then takes for a Hopper (``unasked_mla_block_text``): TRITON_MLA, the
# one MLA backend valid there (cuda.py 146-152), at the default 64, on SM 8.9; on SM 8.0 its
# fp8 check refuses to start (triton_mla.py 227-238), which a GPU preset or architecture of
# SM 8.0 makes the layout's refusal (``gpu_mla_refusal``)
SM8X_FP8_MLA = (
    "No GPU preset names the GPU, nor is its architecture told, and FlatKV takes it for a "
    "Hopper; on an SM 8.x GPU (A100, L40S, RTX 4090) vLLM 0.34 runs MLA on TRITON_MLA (FlashMLA's "
    "dense kernel runs on a Hopper alone, FLASH_ATTN_MLA on SM 9, FLASHINFER_MLA on SM 10), at "
    "its default 64 told none: on an L40S or RTX 4090 (SM 8.9) a block size of 64 matches a "
    "log of a run told none too. On an A100 (SM 8.0) vLLM 0.34 refuses to start an fp8 MLA "
    "cache (\"FP8 KV cache is not supported by the Triton MLA backend ... native FP8 (fp8e4nv) "
    "requires SM89+. Re-run with --kv-cache-dtype bfloat16.\"): set the KV dtype to bfloat16 "
    "there (pick an A100 GPU preset or tell the architecture ampere, and FlatKV shows vLLM "
    "refusing to start)")
# The least compute capability at which vLLM 0.34's TRITON_MLA keeps an fp8 cache
# (TritonMLAImpl.__init__, triton_mla.py 227-238: has_device_capability(89), "native FP8
# (fp8e4nv) requires SM89+"; 0.31's alike, 200-210), the one MLA backend valid on SM 8.x
TRITON_MLA_FP8_SINCE = (8, 9)
# The compute capability majors on which vLLM 0.34 has a sparse MLA backend (DeepSeek-V3.2's
# DSA): cuda.py's _get_backend_priorities lists FLASHINFER_MLA_SPARSE and FLASHMLA_SPARSE on
# SM 10 (95-129), FLASHINFER_MLA_SPARSE_SM120 on SM 12 (131-135), and on any other
# FLASH_ATTN_MLA_SPARSE, FLASHMLA_SPARSE and FLASHINFER_MLA_SPARSE_SM90 (137-152), whose
# supports_compute_capability take majors 9 (flashattn_mla_sparse.py 82-83,
# flashinfer_mla_sparse_sm90.py 189-190) and 9 or 10 (flashmla_sparse.py 210-211)
# (flashinfer_mla_sparse.py 108-109: 10; 195-196: 12); 0.31 alike
SPARSE_MLA_MAJORS = (9, 10, 12)
# FLASHINFER_MLA_SPARSE's kernel block (mla/flashinfer_mla_sparse.py 96-97: MultipleOf(32)),
# the sparse MLA backend vLLM 0.34 runs on a Blackwell told a --block-size of 32s off FlashMLA
# sparse's 64s, beside an indexer of 64 alone (``_sparse_block_refusal``)
BLACKWELL_SPARSE_MLA_BLOCK = 32
# The compute capability major of a Hopper, whose MLA backends (FLASH_ATTN_MLA, FLASHMLA) set
# the block vLLM runs told none, as a Blackwell's (budget.BLACKWELL_MAJOR: FLASHINFER_MLA) do
HOPPER_MAJOR = 9
# The warning vLLM 0.31 and 0.34 log where a --block-size told refused higher-priority
# backends for their block alone (cuda.py get_attn_backend_cls, 0.34 528-548, 0.31 505-524:
# those before the one picked whose one invalid reason is "block_size not supported", named in
# priority order), %s for the block, the names and the backend run
PRECLUDED_LOG = ("--block-size %d precluded higher-priority backend(s) %s. Using %s instead, "
                 "which may result in reduced performance. Consider removing --block-size to "
                 "auto-select the optimal block size.")
# batches in flight with async scheduling at one pipeline stage (VllmConfig.max_concurrent_batches)
ASYNC_BATCHES_IN_FLIGHT = 2
# How a reason begins where vLLM would start and then stop (not a layout it has no answer for)
REFUSES_TO_START, FAILS_AT_START_UP = refuses_to_start("vLLM"), "vLLM fails at start-up"

# Since vLLM 0.28 (PR #50991, "enable prefix cache by default", which names align the default
# mode) a hybrid model starts with prefix caching on; before, and with
# --no-enable-prefix-caching, in mode none (SPEC 3.1's anchor). Its log names the mode.
ALIGN_BY_DEFAULT = (
    "vLLM 0.28 and later start a hybrid model with prefix caching on, in mamba cache mode align "
    "by default; the log says which (\"Mamba cache mode is set to ...\"): set the same mode "
    "here to match such a log. Mode none, the default here, is --no-enable-prefix-caching or "
    "vLLM up to 0.27"
)


def all_as_align_why(model_class: str) -> str:
    """Why vLLM runs ``model_class`` in align when asked for mamba cache mode all."""
    return (f"vLLM's {model_class} does not support prefix caching of state in mode all, so "
            "vLLM starts it in align (\"falling back to 'align' mode\")")


# SPARSE_MLA_KERNEL_BLOCK_SIZE (profile.py), as vLLM runs it: DeepSeek-V3.2's sparse MLA (a
# config with an index_topk): FlashMLA sparse pages by 64 tokens,
# which vLLM picks itself when --block-size is not given (0.22 to 0.30 log "Setting kv cache
# block size to 64 for FLASHMLA_SPARSE backend.", 0.31 to 0.33 "... backend(s)."; 0.34's
# default is 64). A --block-size that is a multiple of 64 stays (a block may hold several
# kernel blocks since 0.22); any other fails the backend's check and vLLM does not start.


def _window_as_served(profile: CacheProfile,
                      options: StrategyOptions) -> tuple[CacheProfile, str]:
    """The profile with the window vLLM's sliding layers keep, and why where it is not the
    config's (``WINDOW_PLUS_ONE_CLASSES``)."""
    window = profile.sliding_window
    model_class = next(iter(sorted(WINDOW_PLUS_ONE_CLASSES.intersection(profile.architectures))),
                       None)
    if window is None or model_class is None or not options.vllm_hybrid_manager:
        return profile, ""  # (with the hybrid manager off, no layer keeps a window)
    return replace(profile, sliding_window=window + 1), (
        f"sliding window {n(window)} + 1 = {n(window + 1)} tokens: vLLM {WINDOW_PLUS_ONE_SINCE} "
        f"and later run {model_class}'s sliding layers over sliding_window + 1 tokens, as the "
        "model was trained (earlier releases over the window as given)")


def vllm_blocker(profile: CacheProfile) -> str:
    """Why FlatKV's vLLM layout serves no model of this profile ("" when it may): sliding
    layers of other KV bytes than the full ones beside state layers (no such model is known:
    P would be sized from the state against two attention pages), not modelled."""
    if profile.has_state and (sizes := kv_sizes_text(profile)):
        return (f"{sizes}, beside state layers: FlatKV does not model vLLM's page size for "
                "such a model")
    return ""


def ssm_dtype_refusal(profile: CacheProfile, told: str | None) -> str:
    """Why vLLM 0.34 does not start with the --mamba-ssm-cache-dtype ``told``
    (``StrategyOptions.vllm_ssm_dtype``), "" where it does: a KDA class
    (``KDA_SSM_DTYPE_CLASSES``) keeps its recurrent state in float32 or bfloat16 only, so a
    told float16 is refused, whatever the model's own ssm dtype. Its auto (none told) keeps
    float32 whatever the model's (``ssm_dtype``), so a model's float16 is no refusal."""
    arch = next(iter(sorted(KDA_SSM_DTYPE_CLASSES.intersection(profile.architectures))), None)
    if arch is None or told is None or told in KDA_SSM_DTYPES or (
            "ssm" not in profile.state_const_bytes):
        return ""
    return (f"{REFUSES_TO_START}: {arch}'s KDA layers keep their recurrent (ssm) state in "
            f"{' or '.join(KDA_SSM_DTYPES)} only, and --mamba-ssm-cache-dtype {told} is told "
            f"(--mamba-ssm-cache-dtype {told}: \"KDA recurrent state supports only auto, "
            f"float32, and bfloat16; got {told}\"): set vLLM's ssm cache dtype "
            "(--vllm-ssm-dtype) to bfloat16 or float32, or leave it auto")


# The KV dtype no MLA attention backend of vLLM 0.31 to 0.34 on an NVIDIA GPU takes, dense or
# sparse: each backend's ``supported_kv_cache_dtypes`` (mla/flashattn_mla.py 42-46: auto,
# float16, bfloat16; mla/flashmla.py 48-54, mla/triton_mla.py 113-119, mla/flashinfer_mla.py
# 195-201, mla/cutlass_mla.py 40-46: those and fp8, fp8_e4m3; mla/flashattn_mla_sparse.py
# 43-47: auto, float16, bfloat16; mla/flashmla_sparse.py 156-162: fp8 as fp8_ds_mla;
# mla/flashinfer_mla_sparse.py 87-93, mla/flashinfer_mla_sparse_sm90.py 148-153: fp8_e4m3 at
# most) over every MLA backend platforms/cuda.py's ``_get_backend_priorities`` lists (SM 10:
# 119-129, SM 12: 131-135, SM 9 and others: 146-151), so its selector finds none and raises
# "No valid attention backend found" (cuda.py 512-516); lines are 0.34's, and 0.31's backends
# name no fp8_e5m2 either. ROCm's AITER MLA takes it (both releases): not modelled.
MLA_REFUSED_KV_DTYPE = "float8_e5m2"
# The model dtype no MLA attention backend of vLLM 0.31 to 0.34 on an NVIDIA GPU runs: each
# backend's ``supported_dtypes`` is float16 and bfloat16 at most (0.34: mla/flashattn_mla.py 41,
# flashmla.py 47, triton_mla.py 112, flashinfer_mla.py 194, cutlass_mla.py 39,
# tokenspeed_mla.py 102; sparse: flashattn_mla_sparse.py 42, flashmla_sparse.py 155,
# flashinfer_mla_sparse.py 86, flashinfer_mla_sparse_sm90.py 147: bfloat16 alone for the last
# two), which backend.py's validate_configuration reads (307-308, "dtype not supported") from
# the MLA layer's torch.get_default_dtype(), the model's --dtype (mla_attention.py 524-541).
# vLLM's --kv-cache-dtype has no float32: its auto keeps the model's dtype, so a float32 KV
# cache is a model told --dtype float32 (--dtype auto serves a float32 checkpoint in a 2-byte
# dtype: config/model.py 2484-2486), and the selector raises as for MLA_REFUSED_KV_DTYPE
MLA_REFUSED_MODEL_DTYPE = "float32"


def runs_mla(profile: CacheProfile) -> bool:
    """Whether vLLM runs ``profile``'s attention on its MLA backends, dense or sparse: its
    layers keep MLA's latent (``CacheProfile.mla``: one tensor a layer), or DeepSeek's
    lightning indexer, which sits beside MLA alone (so bytes given with an indexer and no
    latent split are MLA too). What ``mla_dtype_refusal`` reads, as each MLA backend refuses
    the dtypes it names."""
    return profile.mla or profile.indexer_bytes_per_slot is not None


def runs_dense_mla(profile: CacheProfile) -> bool:
    """Whether vLLM runs ``profile`` on its dense MLA backends (FLASH_ATTN_MLA, FLASHMLA,
    TRITON_MLA, ...): MLA (``runs_mla``) with no indexer, which is sparse MLA's, paged by
    FlashMLA sparse's own kernel block whatever is told (``SPARSE_MLA_KERNEL_BLOCK_SIZE``).
    What the FlashMLA block note (``unasked_mla_block_text``) and the TRITON_MLA fallback of
    a block size told (``_run_overridden``) read: each is a dense backend's choice."""
    return runs_mla(profile) and profile.indexer_bytes_per_slot is None


def mla_dtype_refusal(profile: CacheProfile) -> str:
    """Why vLLM 0.31 to 0.34 do not start an MLA model (``runs_mla``: one latent tensor a
    layer; or DeepSeek's lightning indexer, which sits beside MLA alone) whose KV
    dtype is float8_e5m2 (``MLA_REFUSED_KV_DTYPE``) or float32 (``MLA_REFUSED_MODEL_DTYPE``:
    the model's own dtype then, which no MLA backend runs), on any NVIDIA GPU, "" elsewhere:
    on a Hopper FLASH_ATTN_MLA, FLASHMLA and TRITON_MLA take no e5m2 and FLASHINFER_MLA runs
    on SM 10 alone, where it takes fp8_e4m3 at most too; sparse MLA's backends alike. Not
    ``kernel_block_size``, which any model may give (a backend's block other than 16). Bytes
    with no dtype named, or no latent split nor indexer (a raw model that says nothing of
    MLA), are taken as given (as the other engine's ``dsa_dtype_refusal``)."""
    if not runs_mla(profile):
        return ""
    if profile.kv_dtype == MLA_REFUSED_MODEL_DTYPE:
        return (f"{REFUSES_TO_START}: no MLA attention backend of its releases 0.31 to 0.34 on "
                f"an NVIDIA GPU runs a model in {MLA_REFUSED_MODEL_DTYPE}, which a "
                f"{MLA_REFUSED_MODEL_DTYPE} KV cache asks (its --kv-cache-dtype has no float32: "
                "auto keeps the model's --dtype): each takes float16 and bfloat16 at most (\"No "
                "valid attention backend found for cuda ... dtype not supported\"): set the KV "
                "dtype to bfloat16, as its --dtype auto serves a float32 checkpoint")
    if profile.kv_dtype != MLA_REFUSED_KV_DTYPE:
        return ""
    if profile.indexer_bytes_per_slot is not None:
        backends = ("DeepSeek's sparse MLA: FLASH_ATTN_MLA_SPARSE takes auto, float16 and "
                    "bfloat16, FLASHMLA_SPARSE fp8 as its fp8_ds_mla, FLASHINFER_MLA_SPARSE "
                    "(a Hopper's and a Blackwell's) fp8_e4m3 at most")
    else:
        backends = ("a dense MLA model: on a Hopper FLASH_ATTN_MLA takes auto, float16 and "
                    "bfloat16, FLASHMLA and TRITON_MLA fp8 (fp8_e4m3) too, and FLASHINFER_MLA "
                    "runs on SM 10 alone, where it, CUTLASS_MLA and TOKENSPEED_MLA take "
                    "fp8_e4m3 at most")
    return (f"{REFUSES_TO_START}: no MLA attention backend of its releases 0.31 to 0.34 on an "
            f"NVIDIA GPU takes the KV dtype {MLA_REFUSED_KV_DTYPE} (--kv-cache-dtype "
            f"{ENGINE_DTYPE_NAMES[MLA_REFUSED_KV_DTYPE]}) for {backends} (\"No valid attention "
            "backend found for cuda ... kv_cache_dtype not supported\"): set the KV dtype to "
            "float8_e4m3fn (--kv-dtype fp8, e4m3) or bfloat16")


# An attention cache without MLA reads no compute capability here: vLLM 0.34 starts it on every
# GPU preset with the same pool. In fp8 below SM 9, FLASH_ATTN (whose fp8 needs FA3 on SM 9.x:
# v1/attention/backends/fa_utils.py 306-311) gives way to cuda.py's next backend, FLASHINFER
# (cuda.py 166-177), or TRITON_ATTN for gpt-oss's sinks; both keep the block told none (16:
# backend.py get_preferred_block_size 158-166), a smallest kernel block of 16 (flashinfer.py
# 587-606, triton_attn.py 339-340; interface.py 1078-1085 aligns a hybrid's block to it) and
# the bytes (no customize_spec of their own). bench/vllm_check.py check_gpu_attention runs
# that selector on each GPU preset's capability
def gpu_mla_refusal(profile: CacheProfile, options: StrategyOptions) -> str:
    """Why vLLM 0.34 does not start an MLA model (``runs_mla``) on the GPU the options name
    (``options.gpu_compute_capability``, a GPU preset's), "" where it does or no GPU is
    named (the figures then a Hopper's, as before the GPU was known):

    - DeepSeek's sparse MLA (an indexer) on a GPU with no sparse MLA backend
      (``SPARSE_MLA_MAJORS``: an SM 8.x GPU, the A100, L40S and RTX 4090 presets), in any KV
      dtype: cuda.py lists FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, TRITON_MLA and the three
      sparse backends there (137-152); the dense ones answer "sparse not supported"
      (backend.py validate_configuration 324-326), the sparse ones "compute capability not
      supported" (331-332), so the selector raises "No valid attention backend found"
      (cuda.py 512-516) as the model's MLA layers are built;
    - a dense MLA cache in fp8 (float8_e4m3fn; e5m2 is refused on any GPU first,
      ``mla_dtype_refusal``) below SM 8.9 (``TRITON_MLA_FP8_SINCE``: the A100 presets),
      where TRITON_MLA is the one MLA backend valid (FLASH_ATTN_MLA: major 9,
      flashattn_mla.py 69-70; FLASHMLA: 9 or 10, flashmla.py 73-74; FLASHINFER_MLA: 10,
      flashinfer_mla.py 220-221) and its impl raises at start-up (triton_mla.py 227-238),
      whatever the block or kernel block size.

    Each quotes vLLM's error and gives the fix; the reason opens with ``REFUSES_TO_START``,
    so Compare labels vLLM's row "won't start" and the CLI prints it as vLLM's other start-up
    refusals."""
    capability = options.gpu_compute_capability
    if capability is None or not runs_mla(profile):
        return ""
    here = (f"on SM {capability_text(capability)} "
            f"({gpu_models(lambda c: c == capability)})")
    if profile.indexer_bytes_per_slot is not None:
        if capability[0] in SPARSE_MLA_MAJORS:
            return ""
        return (f"{REFUSES_TO_START}: {here} it has no sparse MLA backend for DeepSeek's "
                "sparse attention (its indexer), in any KV dtype: the sparse backends it lists "
                "there, FLASH_ATTN_MLA_SPARSE, FLASHMLA_SPARSE and FLASHINFER_MLA_SPARSE_SM90, "
                "run on SM 9 (FLASHMLA_SPARSE on SM 10 too), and its dense ones run no sparse "
                "MLA (\"No valid attention backend found for cuda ... TRITON_MLA: [sparse not "
                "supported] ... FLASHMLA_SPARSE: [compute capability not supported], "
                "FLASHINFER_MLA_SPARSE_SM90: [compute capability not supported ...]}\"): "
                "pick a GPU of SM 9.0 or 10.0 "
                f"({gpu_models(lambda c: c[0] in SPARSE_MLA_MAJORS)})")
    if profile.kv_dtype != "float8_e4m3fn" or capability >= TRITON_MLA_FP8_SINCE:
        return ""
    return (f"{REFUSES_TO_START}: {here} its one MLA backend is TRITON_MLA (FLASH_ATTN_MLA, "
            "FLASHMLA and FLASHINFER_MLA run on SM 9 or 10 alone), which keeps no fp8 cache "
            "below SM 8.9 (\"FP8 KV cache is not supported by the Triton MLA backend on ... "
            f"(compute capability {capability_text(capability)}); native FP8 (fp8e4nv) "
            "requires SM89+. Re-run with --kv-cache-dtype bfloat16.\"): set the KV dtype to "
            "bfloat16, or pick a GPU of SM 8.9 or later "
            f"({gpu_models(lambda c: c >= TRITON_MLA_FP8_SINCE)})")


# ``ssm_dtype``'s reason where vLLM keeps the model's own ssm dtype (no formula line of its own)
MODELS_SSM_DTYPE = "the model's ssm dtype"


def ssm_dtype(profile: CacheProfile, options: StrategyOptions, *, older: bool = False
              ) -> tuple[str | None, str]:
    """The dtype vLLM keeps the ssm state in, and why, as a current release decides it (0.31
    to 0.34; ``older``: 0.19's, whose NemotronH hook defaults to float16): --mamba-ssm-cache-dtype
    where told (``options.vllm_ssm_dtype``); else, its auto:

    - for a KDA class that hands the flag to kda_state_dtype (KDA_SSM_DTYPE_CLASSES), float32
      whatever the model's ssm dtype (a told float16 is ``ssm_dtype_refusal``'s);
    - for the classes whose config hook picks it (FLOAT32_SSM_UNLESS_TOLD; in 0.19 the first
      two of them alone, OLDER_FLOAT32_SSM_UNLESS_TOLD), the config's mamba_ssm_cache_dtype
      (``profile.config_mamba_ssm_cache_dtype``; never SGLang's mamba_ssm_dtype,
      ``profile.config_mamba_ssm_dtype``, which the hook does not read), else the hook's
      default;
    - else the model's ssm dtype.

    A lightning model reads no such flag (``lightning_dtype_text``) and raw bytes have no dtype
    to change: the model's there too."""
    told = options.vllm_ssm_dtype
    if profile.ssm_element_bytes is None or profile.conv_free_state:
        return profile.ssm_dtype, MODELS_SSM_DTYPE
    if KDA_FLOAT32_SSM_CLASSES.intersection(profile.architectures):
        # its KDA state dtype is asked without the flag (``_kda_state_as_served`` keeps it in
        # float32), so a told one moves nothing and is no line of its own
        return profile.ssm_dtype, f"{MODELS_SSM_DTYPE} (its KDA layers read no flag)"
    if told is not None:
        return told, "--mamba-ssm-cache-dtype, as the option sets it"
    if kda := next(iter(sorted(KDA_SSM_DTYPE_CLASSES.intersection(profile.architectures))),
                   None):
        if profile.ssm_dtype == KDA_AUTO_SSM_DTYPE:  # the model's already: no line of its own
            return profile.ssm_dtype, f"{MODELS_SSM_DTYPE} (--mamba-ssm-cache-dtype auto)"
        return KDA_AUTO_SSM_DTYPE, (f"vLLM's {kda} keeps KDA's recurrent state in float32 with "
                                    "--mamba-ssm-cache-dtype auto (its kda_state_dtype), "
                                    "whatever the model's dtype; told bfloat16 "
                                    "(--vllm-ssm-dtype), it keeps that")
    hooked = OLDER_FLOAT32_SSM_UNLESS_TOLD if older else FLOAT32_SSM_UNLESS_TOLD
    arch = next(iter(sorted(hooked.intersection(profile.architectures))), None)
    if arch is None:
        return profile.ssm_dtype, f"{MODELS_SSM_DTYPE} (--mamba-ssm-cache-dtype auto)"
    release = f"vLLM {OLDER_RELEASE}'s" if older else "vLLM's"
    if (config := profile.config_mamba_ssm_cache_dtype) is not None:
        return (config, f"the config's mamba_ssm_cache_dtype, which {release} {arch} reads "
                        "with --mamba-ssm-cache-dtype auto")
    return (OLDER_SSM_DEFAULT if older else SSM_DEFAULT,
            f"{release} default for {arch} with --mamba-ssm-cache-dtype auto")


def _ssm_in(profile: CacheProfile, dtype: str | None) -> CacheProfile:
    """The profile with its ssm tensor in ``dtype``, re-sized by its element bytes (the
    profile as it is where ``dtype`` is None or its own, or the element size is unknown)."""
    element = profile.ssm_element_bytes
    if dtype is None or dtype == profile.ssm_dtype or element is None:
        return profile
    ssm = profile.state_const_bytes["ssm"] // element * DTYPE_BYTES[dtype]
    return replace(profile, state_const_bytes={**profile.state_const_bytes, "ssm": ssm},
                   ssm_element_bytes=DTYPE_BYTES[dtype], ssm_dtype=dtype)


def _ssm_as_served(profile: CacheProfile, options: StrategyOptions) -> tuple[CacheProfile, str]:
    """The profile with its ssm state in the dtype vLLM keeps it in (``ssm_dtype``), and the
    formula line saying which and where from: "" where it is the model's, as --mamba-ssm-cache-dtype
    auto keeps it for most models."""
    dtype, why = ssm_dtype(profile, options)
    if dtype is None or why.startswith(MODELS_SSM_DTYPE):
        return profile, ""
    served = _ssm_in(profile, dtype)
    line = f"ssm state {dtype}: {why}"
    if served is not profile:
        element, ssm = profile.ssm_element_bytes, profile.state_const_bytes["ssm"]
        given = profile.ssm_dtype or f"{element}-byte elements"
        line += (f", not the model's {given}: {n(ssm // element)} elements x "
                 f"{DTYPE_BYTES[dtype]} = {n(served.state_const_bytes['ssm'])} B a layer, not "
                 f"{n(ssm)} B")
    return served, line


def _kda_state_as_served(profile: CacheProfile) -> tuple[CacheProfile, str]:
    """The profile with the ssm state vLLM keeps for a KDA_FLOAT32_SSM_CLASSES model: float32
    whatever --mamba-ssm-cache-dtype says, so an ssm tensor of smaller elements is re-sized to
    4 B an element; and why, "" where nothing changes (float32 already, no such class, or raw
    bytes whose element size is unknown: taken as given)."""
    arch = next(iter(sorted(KDA_FLOAT32_SSM_CLASSES.intersection(profile.architectures))), None)
    element = profile.ssm_element_bytes
    if arch is None or element in (None, 4):
        return profile, ""
    ssm = profile.state_const_bytes["ssm"]
    kept = ssm // element * 4
    given = profile.ssm_dtype or f"{element}-byte elements"
    return (replace(profile, state_const_bytes={**profile.state_const_bytes, "ssm": kept},
                    ssm_element_bytes=4, ssm_dtype="float32"),
            f"ssm state in float32, not {given}: vLLM's {arch} asks its KDA state dtype "
            "without --mamba-ssm-cache-dtype (kda_state_dtype's auto), so it keeps the "
            f"recurrent state in float32 whatever that says: {n(ssm // element)} elements x 4 = "
            f"{n(kept)} B a layer, not {n(ssm)} B")


def lightning_dtype_text(profile: CacheProfile) -> str:
    """Which vLLM flag a lightning-attention model's state dtype is (LIGHTNING_CLASS, which
    serves every state without a conv tensor), "" for any other model: its
    get_mamba_state_dtype_from_config hands linear_attention_state_dtype the model's dtype
    and --mamba-cache-dtype alone (vLLM 0.23.0, the last release serving it), so
    --mamba-ssm-cache-dtype, the ssm dtype of every other state model, leaves it as it is."""
    if not profile.conv_free_state or profile.ssm_dtype is None:
        return ""
    return (f"lightning state in {profile.ssm_dtype} (the ssm dtype): vLLM's "
            f"{LIGHTNING_CLASS} keeps it in --mamba-cache-dtype's dtype (auto: the model's) "
            "and reads no --mamba-ssm-cache-dtype, so set the ssm dtype to what "
            "--mamba-cache-dtype gives to match a log")


# Why vLLM 0.31 to 0.34 keep no plain cache in FlatKV's int8 (``dtypes.UNSTORED_KV_DTYPE``,
# 1-byte elements and no more), for any model: --kv-cache-dtype's CacheDType (0.34:
# config/cache.py 44-67, its validator raising "Invalid kv_cache_dtype" 505-510; 0.31:
# config/cache.py 39-58) names int8 only as int8_per_token_head, which TRITON_ATTN alone takes
# and which keeps a float32 scale beside each head's K and V, (head_size + head_size_v) + 8 B a
# head a token (TritonAttentionBackend.customize_spec, 0.34's triton_attn.py 308-319, 0.31's
# 276-287): Llama-3.1-8B's 8 heads keep 8 x (256 + 8) = 2,112 B a layer, not int8's 2,048, a
# layout FlatKV does not model; --dtype (ModelDType: 0.34's config/model.py 106, 0.31's 99)
# names no int8 either. torch_utils' STR_DTYPE_TO_TORCH_DTYPE maps "int8", which no flag reaches
VLLM_NO_INT8 = ("neither its --kv-cache-dtype (config/cache.py 44-67: \"Invalid "
                "kv_cache_dtype\", 505-510; 0.31's 39-58) nor its --dtype (auto, half, float16, "
                "bfloat16, float, float32: config/model.py 106) names int8, and its "
                "int8_per_token_head is not these bytes: int8 beside a float32 scale for each "
                "head's K and V, (head_size + head_size_v) + 8 B a head a token, on TRITON_ATTN "
                "alone (triton_attn.py 308-319)")


def int8_kv_refusal(profile: CacheProfile) -> str:
    """Why vLLM 0.31 to 0.34 do not start ``profile``'s KV cache in int8, for any model and
    GPU (``VLLM_NO_INT8``), "" for any other KV dtype, bytes with no dtype named too."""
    refusal = unstored_kv_dtype_refusal(profile.kv_dtype, "0.31 to 0.34", VLLM_NO_INT8)
    return f"{REFUSES_TO_START}: {refusal}" if refusal else ""


def start_refusal(profile: CacheProfile, options: StrategyOptions) -> str:
    """The first of vLLM's refusals ``run_vllm`` checks before any layout (its docstring's
    first item, in that order), "" where none applies: the GPU's is last, so a caller can tell
    whether the GPU alone is what stops vLLM."""
    return (vllm_blocker(profile) or int8_kv_refusal(profile)
            or ssm_dtype_refusal(profile, options.vllm_ssm_dtype)
            or mla_dtype_refusal(profile) or gpu_mla_refusal(profile, options))


def run_vllm(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """vLLM's layout, after the settings and model facts vLLM itself overrides; each says so in
    the result (its first formula line, or its reason where vLLM refuses). In the order they
    apply:

    - here, first: the ssm state in the dtype vLLM keeps it in (``_ssm_as_served``:
      --mamba-ssm-cache-dtype told, else Nemotron-H's config hook's, Kimi Linear's float32,
      else the model's); then
      a KV cache in int8, which vLLM keeps none in (``int8_kv_refusal``), a
      KDA model's ssm state in a dtype vLLM refuses (``ssm_dtype_refusal``), an
      MLA model's KV cache in fp8_e5m2 or float32, which no MLA backend takes
      (``mla_dtype_refusal``), an MLA model the GPU named has no backend for
      (``gpu_mla_refusal``: sparse MLA on SM 8.x, an fp8 dense MLA cache on SM 8.0), or
      one it keeps in float32 whatever it is told (``_kda_state_as_served``); then window
      pages sized by async scheduling's batches in flight, and Cohere2's sliding layers a
      window a token wider (``_window_as_served``);
    - in ``_run_overridden``: a block size off the attention backend's kernel blocks refused,
      DeepSeek-V3.2's sparse MLA at FlashMLA sparse's 64 whatever the kernel option (at
      FlatKV's block 16, none told, which ``sparse_block_text`` says), and mamba
      cache mode all run as align for a model that cannot cache its state's prefix;
    - then ``_run_vllm``, the layout itself (P, groups, blocks, concurrency, its log lines),
      and a dense MLA model's fp8 cache at a P vLLM told no block size does not run it at
      said so (``unasked_mla_block_text``);
    - last, here again: a lightning-attention model says which flag its state dtype is
      (``lightning_dtype_text``), and an architecture current releases dropped names the
      releases that serve it."""
    if blocker := start_refusal(profile, options):
        return not_applicable("vllm", budget_bytes, blocker, profile_name=profile.name,
                              context_tokens=context_tokens)
    given_ssm = profile.state_const_bytes.get("ssm")
    profile, ssm_line = _ssm_as_served(profile, options)
    # (with the hybrid manager off, windows are promoted to full attention: no window pages)
    in_flight = options.vllm_async_scheduling and options.vllm_hybrid_manager and bool(
        profile.windowed_labels)
    tokens = options.max_batched_tokens * (ASYNC_BATCHES_IN_FLIGHT if in_flight else 1)
    profile, wider = _window_as_served(profile, options)
    profile, float32_state = _kda_state_as_served(profile)
    result = _run_overridden(profile, budget_bytes=budget_bytes, context_tokens=context_tokens,
                             options=replace(options, max_batched_tokens=tokens))
    if unasked := unasked_mla_block_text(profile, options, result):
        result = _explained(result, unasked)
    if result.applies and (sparse_block := sparse_block_text(profile, options)):
        result = _explained(result, sparse_block)
    if in_flight:
        result = _explained(result, (
            f"tokens in flight {ASYNC_BATCHES_IN_FLIGHT} x {n(options.max_batched_tokens)} = "
            f"{n(tokens)} in the window pages below: async scheduling keeps "
            f"{ASYNC_BATCHES_IN_FLIGHT} batches in flight, and vLLM 0.26 and later size a "
            "windowed request's pages by them (max_in_flight_tokens)"))
    if wider:
        result = _explained(result, wider)
    if float32_state:
        result = _explained(result, float32_state)
    if ssm_line and result.applies:  # (beside figures, not a refusal's reason)
        result = _explained(result, ssm_line)
    if result.applies and profile.state_const_bytes.get("ssm") != given_ssm:
        # the ssm bytes a state page holds, where vLLM keeps another dtype than the profile's
        result = replace(result, extras={**result.extras,
                                         "ssm_bytes": profile.state_const_bytes["ssm"]})
    dtype_note = lightning_dtype_text(profile)
    if dtype_note and result.applies:  # (beside figures, not a refusal's reason)
        result = _explained(result, dtype_note)
    last = last_served_text(profile)
    return _explained(result, last) if last else result


def unasked_mla_block_text(profile: CacheProfile, options: StrategyOptions,
                           result: StrategyResult) -> str:
    """Where ``result`` lays out a dense MLA model's cache at a P that moves vLLM off the
    backend it runs told no block size, that this is a block size told, and the block vLLM
    runs told none: FlatKV has no "not told". On a Hopper (SM 9.0), an fp8 (e4m3) cache at a
    P no multiple of FlashMLA's 64: cuda.py's ``_get_backend_priorities`` puts
    FLASH_ATTN_MLA first, which takes no fp8 cache
    (mla/flashattn_mla.py ``supported_kv_cache_dtypes``: auto, float16, bfloat16), so with no
    block size in its selector (selector.py: None where not user_specified_block_size) vLLM
    picks FLASHMLA, whose kernel block is 64, and ``Platform.update_block_size_for_backend``
    sets the block to its ``get_preferred_block_size``: 0.31 (default 16) raises it to 64 and
    logs "Setting kv cache block size to 64 for FLASHMLA backend(s).", 0.34 keeps its default
    64 (config/cache.py ``DEFAULT_BLOCK_SIZE``). Told a P of 16s but no 64s (16, 48, 80, ...)
    vLLM runs TRITON_MLA at the block told (FlashMLA refuses it), as these figures do. On a
    Hopper in bfloat16 FLASH_ATTN_MLA runs told none and told any P of 16s alike (kernel
    blocks ``MultipleOf(16)``, flashattn_mla.py 49-50): 0.31 at its 16, 0.34 at its 64, which
    ``get_preferred_block_size`` keeps (attention/backend.py 158-166) with no line, as for any
    model (0.34's default, ``RECENT_VLLM_BLOCK_SIZE``, which the block size's help says): no
    note.

    On a Blackwell known (``StrategyOptions.blackwell``: the B200 preset's, or one told where
    no preset names the GPU), bfloat16 and fp8 alike (``_blackwell_unasked_text``): cuda.py puts
    FLASHINFER_MLA first on SM 10 (0.34 119-129, 0.31 120-130), which takes both (flashinfer_mla.py
    194-201), on SM 10 alone (220-221), at kernel blocks of 32 and 64 (204-205; DeepSeek-V3's
    qk_nope_head_dim 128 is among the [64, 128, 192] it takes, 240-249; FlatKV's MLA spec keeps
    kv_lora_rank and qk_rope_head_dim alone, so the note takes the model's for one of them and
    says so: for another, or a config without one, which vLLM reads as 1, FLASHINFER_MLA is not
    valid, and told none 0.34 runs CUTLASS_MLA, next on SM 10 (TOKENSPEED_MLA takes R1's dims
    alone), at its 128, cutlass_mla.py 49-50, backend.py 158-166), so told none 0.34 keeps its
    default 64 (``get_preferred_block_size``: 64 % 32 == 0; no line, interface.py 785-791) and 0.31
    raises its 16 to min(32, 64) = 32 and logs "Setting kv cache block size to 32 for FLASHINFER_MLA
    backend(s)." (interface.py 687-697, backend.py 154-162); told a P no multiple of 32, no backend
    before TRITON_MLA takes it (TOKENSPEED_MLA's kernel blocks are 32 and 64 too, CUTLASS_MLA's 128,
    FLASH_ATTN_MLA runs on SM 9 alone, FLASHMLA's dense kernel on a Hopper alone: ops/flashmla.py
    60-61), so vLLM runs TRITON_MLA at the P told. A P of 32s runs FLASHINFER_MLA as told: no note.

    Where TRITON_MLA runs a P told, 0.31 and 0.34 warn of the backends that P alone refused
    (``PRECLUDED_LOG``: those before TRITON_MLA whose one invalid reason is "block_size not
    supported"), which the note quotes: on a Hopper FLASHMLA (FLASH_ATTN_MLA is refused for the
    fp8 cache, FLASHINFER_MLA for SM 10 too), on a Blackwell FLASHINFER_MLA and CUTLASS_MLA
    (128s), and TOKENSPEED_MLA between them in fp8 where its package is installed. Not among
    the log lines (``vllm_log``), on a Hopper preset too: the line names the backends whose
    one invalid reason is the block, and FLASHMLA's are two where vLLM was built without
    FlashMLA's kernels (its supports_combination, flashmla.py 77-96, gives
    ``is_flashmla_dense_supported``'s reason, ops/flashmla.py 33-62: "vllm._flashmla_C is not
    available ..."), and then no line is logged; FlatKV cannot tell the build, nor whether
    tokenspeed_mla is installed. Where no GPU preset names the GPU it may be an SM 8.x GPU too,
    where FlashMLA's dense kernel is refused and no line is logged.

    Empty elsewhere: a kernel block told (a backend picked), sparse MLA (FlashMLA sparse's 64
    already) and an MLA hybrid (its 128s). On SM 8.x cuda.py lists FLASH_ATTN_MLA, FLASHMLA,
    FLASHINFER_MLA, TRITON_MLA (cuda.py 146-152), and FLASHMLA is not valid (ops/flashmla.py
    ``is_flashmla_dense_supported`` 60-61: SM 9.0 alone), nor are FLASH_ATTN_MLA (flashattn_mla.py
    69-70: major 9) and FLASHINFER_MLA (flashinfer_mla.py 220-221: major 10), so it runs TRITON_MLA
    (any capability, ``MultipleOf(16)``: triton_mla.py 126-133) told a block size or not, whose
    ``get_preferred_block_size`` keeps 0.34's default 64 (attention/backend.py 158-166; no "Setting
    kv cache block size" line), as for any model: on a GPU preset of SM 8.9 (L40S, RTX 4090) no
    note. On SM 8.0 (the A100 presets) 0.34 does not start an fp8 cache at all: TritonMLAImpl raises
    "FP8 KV cache is not supported by the Triton MLA backend ... requires SM89+. Re-run with
    --kv-cache-dtype bfloat16." (triton_mla.py 227-238; 0.31 alike), the layout's refusal there
    (``gpu_mla_refusal``). Where no GPU preset names the GPU (``gpu_compute_capability`` None) the
    figures are a Hopper's and the note says all of that (``SM8X_FP8_MLA``); on a Hopper preset it
    says a Hopper's alone. Dense MLA read by the latent (``runs_dense_mla``: ``mla_dtype_refusal``'s
    MLA, less sparse MLA), not by the kernel block alone, which any model may give (Llama's K and V
    at a kernel block of 32) or none (a raw latent of 576 B with no kernel block: vLLM's figures
    take 16 for it). Lines are 0.34's unless said."""
    if (not result.applies or not runs_dense_mla(profile)
            or options.kernel_block_size is not None):
        return ""
    # the one capability, a GPU preset's or the architecture told: a B200's, or a Blackwell
    # told where none names the GPU
    if options.blackwell:
        return _blackwell_unasked_text(profile, options, result)
    capability = options.gpu_compute_capability  # None: a Hopper taken, SM 8.x said too
    if (profile.kv_dtype != "float8_e4m3fn" or result.block_size % FLASHMLA_BLOCK_SIZE == 0
            or (capability is not None and capability[0] != HOPPER_MAJOR)):
        return ""
    sm8x = capability is None
    return (f"P {n(result.block_size)} is a block size told: told none, vLLM runs an fp8 MLA "
            f"cache on a Hopper at {FLASHMLA_BLOCK_SIZE}, FlashMLA's kernel block "
            f"({_told_none_gives(profile, options, result, FLASHMLA_BLOCK_SIZE)}), as "
            "FLASH_ATTN_MLA, its first MLA backend there, takes no fp8 cache (0.31, whose "
            "default is 16, logs \"Setting kv cache block size to 64 for FLASHMLA "
            f"backend(s).\"; 0.34's default is 64), while told {n(result.block_size)}, no "
            f"multiple of 64, it runs on TRITON_MLA at {n(result.block_size)}, as these figures "
            "do, and on a Hopper logs \""
            + PRECLUDED_LOG % (result.block_size, "FLASHMLA", "TRITON_MLA")
            + "\" (FLASHMLA refused for its block alone; FLASH_ATTN_MLA for the fp8 cache, so "
            "not named"
            + ("; on an SM 8.x GPU no line, as FLASHMLA's dense kernel is refused there too"
               if sm8x else "")
            + f"): a block size of {FLASHMLA_BLOCK_SIZE} here matches a Hopper's log of a run "
            "told none" + (f". {SM8X_FP8_MLA}" if sm8x else ""))


def _blackwell_unasked_text(profile: CacheProfile, options: StrategyOptions,
                            result: StrategyResult) -> str:
    """``unasked_mla_block_text`` on a Blackwell: where P is no multiple of FLASHINFER_MLA's
    least kernel block (32), the blocks 0.34 (its default 64) and 0.31 (32) run told none,
    each with its blocks and tokens at this budget (this layout at that block size), or that
    too few fit for vLLM to start."""
    least = min(FLASHINFER_MLA_BLOCK_SIZES)
    if result.block_size % least == 0:
        return ""
    at_least = _run_overridden(profile, budget_bytes=result.budget_bytes,
                               context_tokens=result.context_tokens,
                               options=replace(options, block_size=least))
    # 0.34's 64 is twice 0.31's 32: its figures from the one run (a KeyError if they part)
    figures = {least: _block_figures(at_least),
               2 * least: _doubled_block_figures(profile, options, at_least, least)}

    def gives(block: int) -> str:
        return _gives_text(figures[block], block)

    told = n(result.block_size)
    # refused for the block alone: FLASHINFER_MLA (32s) and CUTLASS_MLA (128s); TOKENSPEED_MLA
    # (fp8 alone, 32s) too where its package is installed (its check says so, otherwise)
    precluded = "FLASHINFER_MLA, CUTLASS_MLA"
    tokenspeed = ("where the tokenspeed_mla package is installed TOKENSPEED_MLA is named "
                  "between them, as it takes an fp8 cache at blocks of 32 and 64 too; "
                  if profile.kv_dtype == "float8_e4m3fn" else "")
    return (f"P {told} is a block size told: told none, vLLM runs an MLA cache on a Blackwell "
            "on FLASHINFER_MLA, its first MLA backend there, for a qk_nope_head_dim of 64, 128 "
            "or 192 (DeepSeek's 128; FlatKV's model spec does not carry it, and taken for one "
            "of them here: for another 0.34 runs CUTLASS_MLA, at 128), whose kernel blocks are "
            f"{least} and {max(FLASHINFER_MLA_BLOCK_SIZES)}: 0.34 at its default "
            f"{RECENT_VLLM_BLOCK_SIZE} ({gives(RECENT_VLLM_BLOCK_SIZE)}; no line), 0.31, "
            f"whose default is 16, at {least} ({gives(least)}; it logs \"Setting kv cache "
            f"block size to {least} for FLASHINFER_MLA backend(s).\"), while told {told}, no "
            f"multiple of {least}, it runs on TRITON_MLA at {told}, as these figures do, and "
            f"logs \"{PRECLUDED_LOG % (result.block_size, precluded, 'TRITON_MLA')}\" "
            f"({tokenspeed}FLASH_ATTN_MLA and FLASHMLA's dense kernel are refused on SM 10 "
            f"whatever the block, so not named): a block size of {RECENT_VLLM_BLOCK_SIZE} "
            f"({least} for 0.31) here matches a Blackwell's log of a run told none")


def _told_none_gives(profile: CacheProfile, options: StrategyOptions, result: StrategyResult,
                     block: int) -> str:
    """What a block vLLM runs told no block size gives at ``result``'s budget and context (this
    layout at that block size), for ``unasked_mla_block_text``'s notes: its blocks and tokens,
    or that too few fit for vLLM to start (it needs 2)."""
    at = _run_overridden(profile, budget_bytes=result.budget_bytes,
                         context_tokens=result.context_tokens,
                         options=replace(options, block_size=block))
    return _gives_text(_block_figures(at), block)


def _gives_text(figures: tuple[int, int] | None, block: int) -> str:
    """``_told_none_gives``' words for a layout's (blocks, tokens) at ``block``, None where it
    does not start."""
    if figures is None:
        return f"too few blocks of {block} to start in this budget"
    return f"{n(figures[0])} blocks of {block}, {n(figures[1])} tokens here"


def _block_figures(result: StrategyResult) -> tuple[int, int] | None:
    """A vLLM layout's (blocks, tokens), None where it does not start."""
    return (result.num_blocks, result.capacity_tokens) if result.applies else None


def _doubled_block_figures(profile: CacheProfile, options: StrategyOptions,
                           at: StrategyResult, block: int) -> tuple[int, int] | None:
    """``_block_figures`` at twice the block size ``at`` ran at (``block``): 0.34's 64 beside
    0.31's 32 in the Blackwell note, from ``at`` without a second run where every layer is full
    attention, as in every dense MLA model FlatKV reads (the note's, whose hybrids page by
    128s): one group of all the layers, a page P x the bytes a token (``_attention_only_page``),
    so the block of 2P is twice P's, its blocks ``budget // 2 unit = blocks // 2`` and its
    tokens blocks x 2P. vLLM starts on it while the budget is past one block and one request's
    ``cdiv(L, 2P)`` blocks fit beside the null block (``_too_few_blocks``,
    ``_one_request_refusal``; none where ``at`` does not start, which needs less: its unit is
    half and ``2 cdiv(L, 2P) >= cdiv(L, P)``). Any other model runs again at 2P."""
    if set(profile.layer_types) != {FULL_ATTENTION}:
        return _block_figures(_run_overridden(
            profile, budget_bytes=at.budget_bytes, context_tokens=at.context_tokens,
            options=replace(options, block_size=2 * block)))
    if not at.applies:
        return None
    unit, budget = 2 * at.block_bytes, at.budget_bytes
    needed = cdiv(request_tokens(at.context_tokens), 2 * block) * unit
    if budget <= unit or needed > budget - _held_back(profile, unit):
        return None
    return budget // unit, budget // unit * 2 * block


def block_bytes(profile: CacheProfile, options: StrategyOptions) -> int:
    """The bytes of one vLLM block id at these options: its page in each of its tensors (what
    ``num_blocks`` divides the budget by: ``page_bytes x group_size``, or the pages of two sizes
    of its one group with the hybrid manager off, ``_one_group_of_two_page_sizes``). vLLM 0.34
    on CUDA sizes its cache after warm-up and logs the blocks it fits ("Memory after warmup:
    ... N KV cache blocks (X GiB) fit"): N of these are its cache exactly, where X is rounded
    to 0.01 GiB. ValueError with vLLM's reason where its layout does not apply."""
    result = run_vllm(profile, budget_bytes=MAX_BYTES, context_tokens=None, options=options)
    if not result.applies:
        raise ValueError(f"vLLM's blocks have no size here: {result.reason}")
    return result.block_bytes


def _run_overridden(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions,
) -> StrategyResult:
    """vLLM's layout after the settings vLLM overrides (see ``run_vllm``)."""
    # vLLM 0.34 picks each layer's backend by the block size told, before it sizes P: one whose
    # kernel blocks do not divide it is not valid. FlatKV has no "not told": its default, 16
    # (0.19's default), stands for it, so DeepSeek-V3.2's sparse MLA at 16 runs at vLLM's own
    # pick, FlashMLA sparse's 64, whatever the kernel option (``sparse_block_text`` says a told
    # 16 is refused), while 32 and 48 are told (``_sparse_block_refusal``). A block size of 16s
    # under the kernel block of another model reads as vLLM's own pick, A = max(kernel,
    # block_size), as when not told, and a backend pinned by a kernel block told refuses one
    # under it. A dense MLA model's own is 16
    # (models.MLA_KERNEL_BLOCK_SIZE); a profile's own larger one (FlashMLA's 64, as FlatKV
    # exported MLA models before) is not the whole choice either: TRITON_MLA, the fallback on
    # every GPU, takes any multiple of 16, so only a block size off those is refused. Dense MLA
    # read by the latent (runs_dense_mla), as vLLM's selector reads use_mla: TRITON_MLA runs MLA
    # alone, so a K and V model's own kernel block (Llama's 32) is its backend's, taken as given.
    # A block size off the multiples of 16 is no pick to read, for any model with attention
    # layers: told a block size, the selector checks every backend against it (selector.py
    # 134-138) as each layer is built, before a hybrid's block is aligned to its state
    # (interface.py 776-797, after load_model), and every CUDA backend pages by 16s or more
    # (FLASH_ATTN, TRITON_ATTN, FLEX_ATTENTION and every MLA backend's MultipleOf(16) or more,
    # FLASHINFER's least 16, sparse MLA's 32s and 64s), so --block-size 8 (or 1, or 24 under a
    # kernel block of 32) finds none and vLLM raises "No valid attention backend found" (cuda.py
    # 512-517), as it does told 24 over a kernel of 16 (bench/vllm_check.py check_told_blocks runs
    # that selector). vLLM 0.31, whose mode all FlatKV gives, does the same (selector.py
    # 131-135, its backends' 16s; --vllm-all checks blocks 8 and 24). A smaller kernel block
    # told (a backend of its own) is taken as given. A model of state layers alone builds no
    # attention layer, so nothing refuses its block, which vLLM keeps (_attention_block_size).
    block = options.block_size
    sparse = profile.indexer_bytes_per_slot is not None
    kernel = SPARSE_MLA_KERNEL_BLOCK_SIZE if sparse else kernel_block_size(profile, options)[0]
    mla_fallback = runs_dense_mla(profile) and options.kernel_block_size is None
    if mla_fallback:
        kernel = min(kernel, DEFAULT_KERNEL_BLOCK_SIZE)
    # 16: no CUDA backend takes a block off its multiples; a smaller kernel told is its own
    least = min(kernel, DEFAULT_KERNEL_BLOCK_SIZE)
    if sparse and block % kernel and block != DEFAULT_KERNEL_BLOCK_SIZE:
        return not_applicable("vllm", budget_bytes, _sparse_block_refusal(block, options),
                              profile_name=profile.name, context_tokens=context_tokens)
    if profile.has_attention and block % kernel and (block > kernel or block % least):
        lower, higher = block // kernel * kernel, n(cdiv(block, kernel) * kernel)
        fixes = f"{n(lower)} or {higher}" if lower else higher
        whose = ("TRITON_MLA, the MLA backend of the least kernel block on every GPU,"
                 if mla_fallback else "its attention backend")
        reason = (
            f"{whose} pages by multiples of {kernel} tokens, and block size {n(block)} is "
            f"none (\"No valid attention backend found ... block_size not supported\"): give "
            f"{fixes}")
        return not_applicable("vllm", budget_bytes, f"{REFUSES_TO_START}: {reason}",
                              profile_name=profile.name, context_tokens=context_tokens)
    kernel_off = options.kernel_block_size not in (None, SPARSE_MLA_KERNEL_BLOCK_SIZE)
    if profile.indexer_bytes_per_slot is not None and kernel_off:
        result = _run_overridden(profile, budget_bytes=budget_bytes,
                                 context_tokens=context_tokens,
                                 options=replace(options, kernel_block_size=None))
        why = (f"kernel block size {SPARSE_MLA_KERNEL_BLOCK_SIZE}, not "
               f"{options.kernel_block_size}: DeepSeek-V3.2's sparse MLA runs on FlashMLA "
               f"sparse, whose kernel block is {SPARSE_MLA_KERNEL_BLOCK_SIZE}")
        return _explained(result, why)
    if not (options.mamba_cache_mode == "all" and profile.has_state):
        return _run_vllm(profile, budget_bytes=budget_bytes, context_tokens=context_tokens,
                         options=options)
    # mode all is vLLM 0.31's (MODE_ALL_RELEASE), the last release with it: its figures, and
    # its start-up lines (mode_all_log), worded so as the layout is sized
    if unserved := SERVED_AFTER_MODE_ALL.intersection(profile.architectures):
        return not_applicable("vllm", budget_bytes, (
            f"no vLLM release runs {min(unserved)} in mamba cache mode all: {MODE_ALL_RELEASE}, "
            "the last release with that mode, does not serve it, and the later ones that do "
            "have no mode all; choose mamba cache mode align or none"),
            profile_name=profile.name, context_tokens=context_tokens)
    if not (aligning := runs_all_as_align(profile)):
        return _run_vllm(profile, budget_bytes=budget_bytes, context_tokens=context_tokens,
                         options=options, log=mode_all_log(
                             fallback=False, drafting=bool(options.speculative_tokens)))
    # 0.31's align: no prefill checkpoint block (Mamba2's came in 0.32, GDN's in 0.33); its
    # lines say all was asked (mode_all_log's fallback)
    result = _run_vllm(profile, budget_bytes=budget_bytes, context_tokens=context_tokens,
                       options=replace(options, mamba_cache_mode="align",
                                       prefill_checkpoint_blocks=0),
                       log=mode_all_log(fallback=True))
    return _explained(result, f"mamba cache mode all runs as align: {all_as_align_why(aligning)}")


def _sparse_block_refusal(block: int, options: StrategyOptions) -> str:
    """Why vLLM 0.34 does not run DeepSeek-V3.2's sparse MLA told ``--block-size block``, no
    multiple of FlashMLA sparse's 64 (``SPARSE_MLA_KERNEL_BLOCK_SIZE``) nor FlatKV's 16, which
    stands for none told: on a Blackwell (SM 10) a multiple of 32 passes the selector, on
    FLASHINFER_MLA_SPARSE (``BLACKWELL_SPARSE_MLA_BLOCK``: mla/flashinfer_mla_sparse.py 96-97,
    FLASHMLA_SPARSE's 64 refused for the block), and the worker then finds no kernel block
    that serves it and the indexer's keys beside it, DEEPSEEK_V32_INDEXER's 64 alone
    (mla/indexer.py 237-238; v1/worker/utils.py prepare_kernel_block_sizes 685-692,
    select_common_block_size 508-549, raising "No common block size"): it fails at start-up.
    Any other block, or on any other GPU (a Hopper's sparse backends page by 64s; no GPU said
    is a Hopper's), the selector finds no backend (cuda.py 512-517)."""
    kernel = SPARSE_MLA_KERNEL_BLOCK_SIZE
    lower, higher = block // kernel * kernel, cdiv(block, kernel) * kernel
    fixes = f"give {kernel} (what it picks when not told)" + (f" or {n(higher)}" if lower else "")
    capability = options.gpu_compute_capability
    if (capability is not None and capability[0] == BLACKWELL_MAJOR
            and block % BLACKWELL_SPARSE_MLA_BLOCK == 0):
        return (f"{FAILS_AT_START_UP}: told --block-size {n(block)} on SM "
                f"{capability_text(capability)} ({gpu_models(lambda c: c == capability)}) it "
                "runs DeepSeek-V3.2's sparse MLA on FLASHINFER_MLA_SPARSE, which pages by "
                f"multiples of {BLACKWELL_SPARSE_MLA_BLOCK} tokens, but its indexer's keys "
                f"(DEEPSEEK_V32_INDEXER) page by {kernel} alone, and no kernel block serves both "
                f"(\"No common block size for {block} ... DEEPSEEK_V32_INDEXER: [{kernel}])\"): "
                f"{fixes}")
    return (f"{REFUSES_TO_START}: its FlashMLA sparse backend (DeepSeek-V3.2's sparse MLA) pages "
            f"by multiples of {kernel} tokens, and block size {n(block)} is none (\"No valid "
            f"attention backend found ... block_size not supported\"): {fixes}")


def sparse_block_text(profile: CacheProfile, options: StrategyOptions) -> str:
    """Where FlatKV's block size 16 runs DeepSeek-V3.2's sparse MLA (an indexer), what it reads
    it as: vLLM told no --block-size (its 0.19 default; FlashMLA sparse's 64 then), since a
    --block-size 16 told is refused by vLLM 0.34 on a Hopper (and a Blackwell: its sparse
    backends page by 64s and 32s). "" elsewhere."""
    if (profile.indexer_bytes_per_slot is None
            or options.block_size != DEFAULT_KERNEL_BLOCK_SIZE):
        return ""
    return (f"block size {DEFAULT_KERNEL_BLOCK_SIZE} read as no --block-size told: vLLM then "
            f"picks {SPARSE_MLA_KERNEL_BLOCK_SIZE}, FlashMLA sparse's (these figures); told "
            f"--block-size {DEFAULT_KERNEL_BLOCK_SIZE}, vLLM 0.34 refuses DeepSeek-V3.2's sparse "
            "MLA on a Hopper (\"No valid attention backend found ... block_size not "
            "supported\"; a Blackwell's sparse backends page by 64s and 32s alike): leave "
            "--block-size out of vLLM's command line to match these figures")


def _explained(result: StrategyResult, why: str) -> StrategyResult:
    """``result`` of a setting vLLM overrode, saying why: after the reason it refuses with, or
    as the first formula line where it applies."""
    if not result.applies:
        return replace(result, reason=f"{result.reason} ({why})")
    return replace(result, formulas=(why, *result.formulas))


def _drafted_state_refusal(sizing: CacheProfile, state: int, p: int, page: int) -> str:
    """Why vLLM fails at start-up when the drafted conv rows widen the state past the page P
    was sized for (without them), and how many speculative tokens this P would take."""
    most = (page - sizing.state_bytes_per_layer) // sizing.conv_row_bytes  # drafted rows held
    return (
        f"{FAILS_AT_START_UP}: it sizes P ({n(p)}) and the page ({n(page)} B) from the state "
        f"without the drafted conv rows, and its layers keep the widened state of {n(state)} B, "
        "which the page does not hold (MambaSpec.page_size_bytes asserts page_size_padded >= "
        "page_size); "
        + (f"at this P it starts with at most {count_text(most, 'speculative token')}" if most
           else "at this P it starts only without speculative decoding")
        + "; a larger P (kernel block size, block size or mode all) pads the page more, and "
        "may hold the drafted rows")


def request_tokens(context_tokens: int | None) -> int:
    """The tokens of the one request vLLM's start-up check sizes: the context, or without one
    a single token. vLLM always has a max_model_len (the model's own where none is given), and
    every max_model_len asks at least this much, so a layout that cannot hold one token's pages
    beside the null block never starts, whatever the context."""
    return 1 if context_tokens is None else context_tokens


def _request_words(context_tokens: int | None) -> str:
    """How a refusal names the one request vLLM checks (``request_tokens``)."""
    if context_tokens is None:
        return "one request of 1 token (the least any max_model_len asks; no context given)"
    return f"one request of {tokens_text(context_tokens)}"


def _too_few_blocks(profile: CacheProfile, budget_bytes: int, context_tokens: int | None,
                    num_blocks: int, unit_bytes: int, needed: int, division: str,
                    held: int) -> StrategyResult | None:
    """vLLM's refusal where the budget is one block or less: vLLM 0.29 and later check the
    budget less the null block's one (``held``; check_enough_kv_cache_memory), and at 0 B or
    less say "No available memory for the cache blocks" (``division``: the arithmetic of
    ``num_blocks``), with the least budget that starts: two blocks, and one request's
    ``needed`` bytes beside the null block. vLLM raises it at start-up, so the reason opens as
    its other start refusals do (``REFUSES_TO_START``): Compare's "won't start". Past one
    block, the request check refuses (``_one_request_refusal``), as vLLM does. None where the
    budget is past one block, and where the releases serving the model hold nothing back
    (``held`` 0: 0.23.0 says "No available memory" only at 0 B, so its request check refuses
    first, at ``needed`` B)."""
    if budget_bytes > unit_bytes or (not held and needed > budget_bytes):
        return None
    least = max(2 * unit_bytes, needed + held)
    request = (f", and {_request_words(context_tokens)} needs {n(needed)} B beside the null "
               f"block's {n(unit_bytes)} B" if least > 2 * unit_bytes else "")
    # vLLM 0.34, vllm/v1/core/kv_cache_planning.py:106-108 (_check_enough_kv_cache_memory):
    # "if available_memory <= 0: raise ValueError("No available memory for the cache blocks.
    # ..."", raised while the engine starts
    return budget_too_small(
        "vllm", budget_bytes,
        holds=f"num_blocks = {division} = {num_blocks} and vLLM needs at least 2 (\"No "
        "available memory for the cache blocks\")" + request,
        least_bytes=least, profile_name=profile.name, context_tokens=context_tokens,
        refusal=REFUSES_TO_START)


def _held_back(profile: CacheProfile, unit_bytes: int) -> int:
    """The bytes vLLM's start-up check holds back from the budget: the null block's one block
    (``null_block_checked``), else none."""
    return unit_bytes if null_block_checked(profile) else 0


def _one_request_refusal(profile: CacheProfile, context_tokens: int | None, needed: int,
                         budget_bytes: int, held: int, block: str,
                         longest: int) -> StrategyResult:
    """vLLM's refusal where one request of max_model_len (``request_tokens``) does not fit
    beside the null block (``held``: its bytes; 0 where the releases serving the model checked
    the whole budget), in its words, with the longest context that would fit and the budget
    this one needs (``extras["longest_context"]``, Budget's figure for vLLM); ``block``: what
    a request's ``needed`` bytes are made of."""
    least, last = needed + held, last_release(profile)
    return not_applicable("vllm", budget_bytes, (
        f"{REFUSES_TO_START}: {_request_words(context_tokens)} needs {n(needed)} B "
        f"of KV cache ({format_bytes(needed)}: {block}), more than the {n(budget_bytes)} B "
        f"({format_bytes(budget_bytes)}) available"
        + (f" less the {n(held)} B block it holds back as its null block" if held or not last
           else f" (up to {last[1]}, the last release serving the model, it weighs the "
           f"request against the whole budget; {'.'.join(map(str, NULL_BLOCK_CHECKED_SINCE))} "
           "and later hold the null block back)")
        + " (\"To serve at least one request with the model's max seq len\"); "
        + (f"its estimated maximum model length is {n(longest)}: give a context of at most "
           f"{n(longest)} or a budget of at least {n(least)} B" if longest else
           f"not even one token fits: give a budget of at least {n(least)} B")),
        profile_name=profile.name, context_tokens=context_tokens,
        extras={"longest_context": longest})


HYBRID_MANAGER_OFF = "hybrid KV cache manager off (--disable-hybrid-kv-cache-manager)"
# vLLM's config turns the manager off itself for chunked attention with an EAGLE-family drafter
EAGLE_WITH_CHUNKS = (
    "with speculative decoding: vLLM turns its hybrid KV cache manager off for chunked local "
    "attention when the drafter reads the target's hidden states (EAGLE, EAGLE-3, MTP and "
    "the like); with such a drafter, "
    "count that with the hybrid KV cache manager off (--no-vllm-hybrid-manager)")


def without_hybrid_manager(profile: CacheProfile, formulas: list[str]) -> CacheProfile | str:
    """The profile vLLM allocates without its hybrid KV cache manager (or, for sliding layers
    of their own bytes a token, the profile as it is, for ``_one_group_of_two_page_sizes``),
    or why it does not start. It promotes sliding and chunked layers to full attention where
    the model has full layers (``_promote_local_kv_cache_specs``: every token kept, one group),
    keeps a model of one kind as it is, and refuses what it cannot make one kind: state layers
    beside attention, sliding beside chunked layers without full ones."""
    windowed = profile.windowed_labels
    kinds = set(profile.layer_types)
    if ((profile.has_state and len(kinds) > 1)
            or (len(windowed) > 1 and FULL_ATTENTION not in kinds)):
        return (f"with its {HYBRID_MANAGER_OFF} vLLM does not start on a model whose layers "
                "cannot all be allocated as one kind (\"Failed to promote local KV cache specs "
                "to one unified type\"): "
                + ("state layers keep no token history" if profile.has_state else
                   "sliding and chunked layers without full ones")
                + "; keep the hybrid manager on")
    if (sizes := kv_sizes_text(profile)) and FULL_ATTENTION in kinds:
        if CHUNKED_ATTENTION in kinds:
            return (f"with its {HYBRID_MANAGER_OFF} vLLM promotes the sliding and chunked "
                    f"layers to full attention in one group of pages of two sizes ({sizes}), "
                    "which FlatKV does not model beside chunked layers; keep the hybrid "
                    "manager on")
        return profile
    if not windowed or FULL_ATTENTION not in kinds:
        formulas.append(f"{HYBRID_MANAGER_OFF}: no change, every cache layer of this model is "
                        "of one kind")
        return profile
    promoted = ", ".join(f"{profile.count(label)} {WINDOWED[label].name}" for label in windowed)
    formulas.append(f"{HYBRID_MANAGER_OFF}: the {promoted} layers are allocated as full "
                    "attention, every token kept (vLLM's _promote_local_kv_cache_specs), all "
                    f"{len(profile.layer_types)} layers in one group")
    return _as_full_attention(profile)


def _as_full_attention(profile: CacheProfile) -> CacheProfile:
    """``profile`` with its sliding and chunked layers full attention, every token kept, as
    vLLM's ``_promote_local_kv_cache_specs`` allocates them (their own bytes a token are the
    caller's to keep: ``_one_group_of_two_page_sizes``); kv-shared layers, which vLLM keeps no
    cache for, follow the layers they read."""
    def promote(labels: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(FULL_ATTENTION if label in WINDOWED else label for label in labels)

    return replace(profile, sliding_window=None, attention_chunk_size=None,
                   sliding_kv_bytes_per_slot=None, sliding_kv_tensor_bytes=(),
                   layer_types=promote(profile.layer_types),
                   kv_shared_layer_types=promote(profile.kv_shared_layer_types))


def _ssm_update_left_out(profile: CacheProfile, options: StrategyOptions) -> str:
    """The line vLLM logs where its config hook picks the ssm dtype (FLOAT32_SSM_UNLESS_TOLD,
    --mamba-ssm-cache-dtype auto), which these lines leave out; "" where it logs none."""
    arch = next(iter(sorted(FLOAT32_SSM_UNLESS_TOLD.intersection(profile.architectures))), None)
    if arch is None or options.vllm_ssm_dtype is not None or profile.ssm_dtype is None:
        return ""
    return (f"vLLM logs \"Updating mamba_ssm_cache_dtype to '{profile.ssm_dtype}' for NemotronH "
            "model\" as its config hook picks the ssm dtype (--mamba-ssm-cache-dtype auto), "
            "before the block size lines (after the first in mamba cache mode all), left out "
            "here")


def _run_vllm(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions, log: LogFlavour = CURRENT_LOG,
) -> StrategyResult:
    """vLLM's layout with every option as given (the module docstring's rules: P, groups,
    ``num_blocks = available // page_bytes // group_size``, concurrency and the logged tokens),
    its start-up lines in ``log``'s words (a current release's unless told); ``run_vllm``
    first applies what vLLM overrides."""
    def refuse(reason: str) -> StrategyResult:
        return not_applicable("vllm", budget_bytes, reason, profile_name=profile.name,
                              context_tokens=context_tokens)

    extras = _opening_extras(profile, options)
    managed, formulas = _as_managed(profile, budget_bytes=budget_bytes,
                                    context_tokens=context_tokens, options=options, log=log)
    if isinstance(managed, StrategyResult):  # refused, or one group of pages of two sizes
        return managed
    if options.mamba_cache_mode == "none" and managed.has_state:
        formulas.append(f"mamba cache mode none (1 state page a request): {ALIGN_BY_DEFAULT}")
    # the profile P is sized for (the state as vLLM sizes it), and the one its layers keep (a
    # drafted conv state widened): the same unless tokens are drafted
    # the release whose rules size the drafted state: the log's (0.31 in mode all, its fallback
    # to align too), None for a current one
    release = None if log.current else log.release
    sized_for_p, kept = drafted_profiles(managed, options.speculative_tokens, formulas, extras,
                                         release)
    p, page, attn_page, why = _page_size(sized_for_p, options, formulas, extras)
    if kept is not sized_for_p:  # its layers keep a wider state in the page P was sized for
        if kept.state_bytes_per_layer > page:
            return refuse(_drafted_state_refusal(sized_for_p, kept.state_bytes_per_layer, p,
                                                 page))
        widened_extras, widened_line = _widened_state_kept(sized_for_p, kept, page)
        extras.update(widened_extras)
        formulas.append(widened_line)
    # by each type's first layer, as vLLM's same_type_layers meets them: its group ids follow
    counts = {k: kept.count(k) for k in dict.fromkeys(kept.layer_types)}
    pages, pages_lines, pages_extras = _pages_by_kind(kept, counts, p, page, attn_page, why)
    formulas += pages_lines
    extras.update(pages_extras)
    older = older_release_layout(managed, options, counts, budget_bytes, context_tokens, p)
    return _grouped_layout(kept, sized_for_p, options, budget_bytes=budget_bytes,
                           context_tokens=context_tokens, counts=counts, pages=pages,
                           formulas=formulas, extras=extras, log=log, older=older)


def _opening_extras(profile: CacheProfile, options: StrategyOptions) -> dict[str, object]:
    """The extras every vLLM layout opens with, before P, with its hybrid KV cache manager on
    or off: the mamba cache mode, whether windowed layers keep every token as full ones (off),
    and the line the start-up log prints that these leave out where vLLM's config hook picks
    the ssm dtype (``_ssm_update_left_out``), so the Compare page and the CLI can say so."""
    extras: dict[str, object] = {"mamba_cache_mode": options.mamba_cache_mode}
    if not options.vllm_hybrid_manager and profile.windowed_labels:
        extras["windows_as_full"] = True  # its windowed layers keep every token, as full ones
    if left_out := _ssm_update_left_out(profile, options):
        extras["log_left_out"] = [left_out]
    return extras


def _as_managed(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions, log: LogFlavour,
) -> tuple[CacheProfile | StrategyResult, list[str]]:
    """``(profile, formula lines)``: the profile as vLLM's KV cache manager takes it, and the
    lines that open the layout's formulas. With the hybrid manager on that is the profile as
    given (a line where EAGLE drafts beside chunked layers); off, the profile with its windows
    promoted to full attention (``without_hybrid_manager``), or in place of a profile the
    result already: the refusal where vLLM does not start, or ``_one_group_of_two_page_sizes``
    where sliding layers keep other bytes a token than the full ones."""
    formulas: list[str] = []
    if options.vllm_hybrid_manager:
        if options.speculative_tokens and CHUNKED_ATTENTION in profile.layer_types:
            formulas.append(EAGLE_WITH_CHUNKS)
        return profile, formulas
    unified = without_hybrid_manager(profile, formulas)
    if isinstance(unified, str):
        return not_applicable("vllm", budget_bytes, unified, profile_name=profile.name,
                              context_tokens=context_tokens), formulas
    if unified.sliding_kv_bytes_per_slot is not None:
        return _one_group_of_two_page_sizes(unified, budget_bytes=budget_bytes,
                                            context_tokens=context_tokens,
                                            options=options, log=log), formulas
    return unified, formulas


def _widened_state_kept(sized_for_p: CacheProfile, kept: CacheProfile,
                        page: int) -> tuple[dict[str, object], str]:
    """``(extras, formula line)`` where drafted tokens widen the state the layers keep past the
    one P was sized for (``drafted_profiles``), and the page still holds it (the caller refuses
    first where it does not, ``_drafted_state_refusal``): the state page's figures are then
    the widened state's, padded less, and the line says so."""
    state = kept.state_bytes_per_layer
    extras = dict(state_page_bytes=state, state_padding_exact=[page - state, state],
                  state_padding_fraction=float(Fraction(page - state, state)),
                  sized_state_page_bytes=sized_for_p.state_bytes_per_layer)
    return extras, (f"the layers keep the widened state ({n(state)} B) in that page: "
                    f"padded by {n(page - state)} B")


class _Pages(NamedTuple):
    """vLLM's pages at P by kind, as its groups and blocks are laid out over them
    (``_pages_by_kind``)."""

    p: int  # vLLM's block size P
    attention_page: int  # P x the attention bytes a token, as _page_size sized it (the log's)
    page: int  # page_bytes: every page's bytes, one size over every kind
    block_sizes: dict[str, int]  # tokens a page by kind, in the model's order of kinds
    history: dict[str, int]  # the bytes of history a page keeps by kind (the rest: row padding)
    why: str  # why P


def _pages_by_kind(profile: CacheProfile, counts: dict[str, int], p: int, page: int,
                   attention_page: int, why: str) -> tuple[_Pages, list[str], dict[str, object]]:
    """``(pages, formula lines, extras)``: every kind's page at P. Each is the page
    ``_page_size`` found, of P tokens, unless sliding layers keep other bytes a token than
    full ones (Gemma 4): vLLM then makes every page one size (``_unified_pages``), a smaller
    kind's block holding more tokens or its page padded, which the lines, the why of P and
    the extras say (``older_releases_refuse`` where a page is padded, not scaled)."""
    block_sizes = dict.fromkeys(counts, p)
    history = dict.fromkeys(counts, attention_page)
    if profile.sliding_kv_bytes_per_slot is None:
        return _Pages(p, attention_page, page, block_sizes, history, why), [], {}
    formulas: list[str] = []
    page, block_sizes, history = _unified_pages(profile, counts, p, formulas)
    why += ("; " + ", ".join(f"{group_name(kind, mla=profile.mla)} {n(size)}"
                             for kind, size in block_sizes.items())
            + " tokens a page, every page of one size")
    extras: dict[str, object] = dict(attention_page_bytes=page, block_sizes=block_sizes,
                                      kind_history_bytes=history)
    if any(size < page for size in history.values()):  # a page padded, not scaled
        extras["older_releases_refuse"] = True
    return _Pages(p, attention_page, page, block_sizes, history, why), formulas, extras


def _grouped_layout(
    profile: CacheProfile, sized_for_p: CacheProfile, options: StrategyOptions, *,
    budget_bytes: int, context_tokens: int | None, counts: dict[str, int], pages: _Pages,
    formulas: list[str], extras: dict[str, object], log: LogFlavour,
    older: OlderLayout | None = None,
) -> StrategyResult:
    """vLLM's layout over ``pages``: the layer types in groups of ``group_size`` layers
    (``_pool_groups``), a block id ``group_size`` pages (one in each tensor the groups
    share), so ``num_blocks = available // page_bytes // group_size``; then the refusals vLLM
    starts with (fewer than two blocks, or one request of the context past the budget less
    the null block) or the figures and log lines. ``profile`` is the one whose layers keep
    the state, ``sized_for_p`` the one P was sized for (the log's, in ``log``'s words);
    ``counts``: layers by type; ``older``: OLDER_RELEASE's layout where it is another, for
    the older log's figure. Appends formulas and extras."""
    group_size = group_size_for(counts)
    padding = {k: padding_layers(c, group_size) for k, c in counts.items()}
    groups, uses, pad_lines = _pool_groups(counts, padding, group_size, pages.page,
                                           pages.history, profile.state_bytes_per_layer,
                                           mla=profile.mla)
    extras["log_lines"] = start_up_log(sized_for_p, options, pages.p, pages.attention_page,
                                       budget_bytes, counts, padding, log)
    unit_bytes = pages.page * group_size
    num_blocks = budget_bytes // pages.page // group_size
    # what one request of the context needs, beside the null block (vLLM 0.29+ checks it;
    # a model served only before 0.29 against the whole budget: _held_back)
    asked = request_tokens(context_tokens)
    needed = request_bytes(profile, options, counts, group_size, asked, pages.block_sizes,
                           pages.page)
    held = _held_back(profile, unit_bytes)
    if too_few := _too_few_blocks(
            profile, budget_bytes, context_tokens, num_blocks, unit_bytes, needed,
            f"{n(budget_bytes)} // {n(pages.page)} // {group_size}", held):
        return too_few
    extras["log_lines"] += warmup_lines(num_blocks, unit_bytes, log)
    formulas += _group_lines(profile, counts, pages, group_size, len(groups), pad_lines,
                             budget_bytes, num_blocks)
    extras.update(group_size=group_size, num_groups=len(groups),
                  padding_layers_per_type=padding, page_bytes=pages.page)
    if needed > budget_bytes - held:  # less the null block (vLLM 0.29+)
        return _one_request_refusal(
            profile, context_tokens, needed, budget_bytes, held,
            f"its pages in every group, {group_size} layers a page, at P {n(pages.p)}",
            longest_context(profile, options, counts, group_size, budget_bytes - held,
                            asked, pages.block_sizes, pages.page))
    result = finish_paged(
        "vllm", profile, budget_bytes=budget_bytes, context_tokens=context_tokens,
        options=options, block_size=pages.p, unit_bytes=unit_bytes, num_units=num_blocks,
        uses=uses, why_block_size=pages.why, formulas=formulas, extras=extras,
        kind_block_sizes=pages.block_sizes,
    )
    return with_logged_tokens(result, profile, options, len(groups), log, older)


def _group_lines(profile: CacheProfile, counts: dict[str, int], pages: _Pages,
                 group_size: int, num_groups: int, pad_lines: list[str], budget_bytes: int,
                 num_blocks: int) -> list[str]:
    """The formula lines of vLLM's groups and blocks: group_size from the layers a type (and
    the groups it makes), each type's padding layers, and num_blocks' division, so a reader
    can redo each figure."""
    counts_text = ", ".join(f"{c} {group_name(k, mla=profile.mla)}" for k, c in counts.items())
    return [
        f"group_size = {group_size} (layers per type: {counts_text}); "
        f"{count_text(num_groups, 'group')}"
        + _indexer_layers_text(profile, pages.p, group_size),
        *pad_lines,
        f"num_blocks = available // page_bytes // group_size = {n(budget_bytes)} // "
        f"{n(pages.page)} // {group_size} = {n(num_blocks)}",
    ]


def _one_group_of_two_page_sizes(
    profile: CacheProfile, *, budget_bytes: int, context_tokens: int | None,
    options: StrategyOptions, log: LogFlavour,
) -> StrategyResult:
    """vLLM with its hybrid KV cache manager off on full layers beside sliding ones of other
    bytes a token (Gemma 4). ``_promote_local_kv_cache_specs`` makes the sliding layers full
    attention, each keeping its own heads, so every token is kept; their pages then differ in
    size, and ``UniformTypeKVCacheSpecs`` puts every layer in ONE group, where a block is a page
    in each layer's own tensor, of that layer's size, and costs their sum
    (``kv_cache_planning._get_kv_cache_groups_uniform_type``, vLLM 0.34). P is the attention
    block size, num_blocks = available // block bytes, and a request takes cdiv(L, P) blocks,
    as for a model of full layers alone."""
    name = "vllm"
    counts = {k: profile.count(k) for k in dict.fromkeys(profile.layer_types)}
    kernel, kernel_why = kernel_block_size(profile, options)
    p = max(kernel, options.block_size)
    pages = {kind: p * profile.kv_bytes_of(kind) for kind in counts}
    unit_bytes = sum(pages[label] for label in profile.layer_types)
    layers = len(profile.layer_types)
    sliding = profile.count(SLIDING_ATTENTION)
    why = (f"P = A = max(kernel block size {kernel}{kernel_why}, block_size "
           f"{options.block_size}) = {p}")
    formulas = [
        f"{HYBRID_MANAGER_OFF}: the {sliding} sliding layers are allocated as full attention, "
        "every token kept, each with its own heads (vLLM's _promote_local_kv_cache_specs); "
        f"with pages of two sizes all {layers} layers are ONE group (UniformTypeKVCacheSpecs), "
        "a block a page in each layer's own tensor",
        why,
        "block_bytes = " + " + ".join(
            f"{c} x P x {n(profile.kv_bytes_of(kind))}" for kind, c in counts.items())
        + " = " + " + ".join(f"{c} x {n(pages[kind])}" for kind, c in counts.items())
        + f" = {n(unit_bytes)}",
    ]
    num_blocks = budget_bytes // unit_bytes
    promoted = _as_full_attention(profile)
    # one request: cdiv(L, P) blocks, beside the null block (vLLM 0.29+ checks it)
    asked = request_tokens(context_tokens)
    needed = cdiv(asked, p) * unit_bytes
    if too_few := _too_few_blocks(profile, budget_bytes, context_tokens, num_blocks, unit_bytes,
                                  needed, f"{n(budget_bytes)} // {n(unit_bytes)}", unit_bytes):
        return too_few
    if needed > budget_bytes - unit_bytes:
        return _one_request_refusal(
            profile, context_tokens, needed, budget_bytes, unit_bytes,
            f"{cdiv(asked, p):,} blocks of {layers} pages, one a layer, at P {n(p)}",
            # the longest context whose cdiv(L, P) blocks fit: whole blocks of P tokens
            min(asked, (budget_bytes - unit_bytes) // unit_bytes * p))
    formulas.append(f"num_blocks = available // block_bytes = {n(budget_bytes)} // "
                    f"{n(unit_bytes)} = {n(num_blocks)}")
    log_lines = start_up_log(promoted, options, p, p * profile.kv_bytes_per_slot, budget_bytes,
                             {FULL_ATTENTION: layers}, {FULL_ATTENTION: 0}, log)
    log_lines += warmup_lines(num_blocks, unit_bytes, log)
    group = PoolGroup(FULL_ATTENTION, FULL_ATTENTION, layers)
    extras: dict[str, object] = {
        "mamba_cache_mode": options.mamba_cache_mode, "windows_as_full": True,
        "kernel_block_size": kernel, "attention_block_size": p, "log_lines": log_lines,
        "group_size": layers, "num_groups": 1, "padding_layers_per_type": {FULL_ATTENTION: 0},
        "page_bytes": max(pages.values()), "attention_page_bytes": max(pages.values()),
        # each layer's page, in the order of the model's cache layers: the block's tensors
        "layer_page_bytes": [pages[label] for label in profile.layer_types],
    }
    result = finish_paged(
        name, promoted, budget_bytes=budget_bytes, context_tokens=context_tokens,
        options=options, block_size=p, unit_bytes=unit_bytes, num_units=num_blocks,
        uses=[UnitUse(group, unit_parts(kv_history=unit_bytes))], why_block_size=why,
        formulas=formulas, extras=extras)
    return with_logged_tokens(result, promoted, options, 1, log)


def _unified_pages(profile: CacheProfile, counts: dict[str, int], p: int,
                   formulas: list[str]) -> tuple[int, dict[str, int], dict[str, int]]:
    """vLLM's one page size over attention kinds of other bytes a token (sliding layers of
    other heads than the full ones: Gemma 4), as kv_cache_planning's
    unify_kv_cache_spec_page_size makes it: every page is the largest kind's, a smaller page
    whose size divides it holds that many times more tokens (its block size scaled), one that
    does not is padded up. ``(page bytes, tokens a page by kind, history bytes a page by
    kind)``; appends the formula."""
    def name(kind: str) -> str:  # as Layout names the kind's group
        return group_name(kind, mla=profile.mla)

    own = {kind: p * profile.kv_bytes_of(kind) for kind in counts}
    page = max(own.values())
    block_sizes, history, said = {}, {}, []
    for kind, nbytes in own.items():
        ratio, rest = divmod(page, nbytes)
        block_sizes[kind] = p * ratio if not rest else p
        history[kind] = page if not rest else nbytes
        if ratio > 1 and not rest:
            said.append(f"{name(kind)}'s block is {n(p)} x {ratio} = {n(p * ratio)} tokens")
        elif rest:
            said.append(f"{name(kind)}'s page is padded by {n(page - nbytes)} B, as its size "
                        "does not "
                        "divide the largest")
    pages = ", ".join(f"{name(kind)} {n(p)} x {n(profile.kv_bytes_of(kind))} = {n(nbytes)}"
                      for kind, nbytes in own.items())
    formulas.append(f"page sizes by kind at P = {n(p)}: {pages} B; every page is the "
                    f"largest, {n(page)} B (vLLM's unify_kv_cache_spec_page_size): "
                    + "; ".join(said))
    return page, block_sizes, history
