"""What the app's pages show, derived from a plan analysis or from the engine strategies'
results: pure data, exact ints, no streamlit.

Pages call these, hand the results to ``flatkv.charts`` and render, so the tests pin what they
show without a browser. Headline metrics read the fields of a ``PlanAnalysis``,
``StrategyResult`` or ``Budget`` directly; the Model page's tables come from
``flatkv.app_model`` and the GPU lab's from ``flatkv.gpu_view``.
"""

from __future__ import annotations

import csv
import heapq
import io
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import islice

from flatkv import sizing
from flatkv.analysis import PlanAnalysis
from flatkv.budget import Budget, printed_range
from flatkv.models import DRAFTER_NOT_COUNTED, past_max_model_len_text
from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LINEAR_ATTENTION,
    PACKED_NEEDS_HISTORY,
    SLIDING_ATTENTION,
    BudgetTooSmall,
)
from flatkv.profile import WINDOWED, CacheProfile
from flatkv.strategies import (
    LOGGED_COLUMN,
    StrategyOptions,
    StrategyResult,
    logged_as,
    model_blocker,
    run_strategy,
)
from flatkv.strategies.base import ratio_text, start_up_log_title, state_pages_per_request
from flatkv.strategies.sglang import CONV_DTYPE as SGLANG_CONV_DTYPE
from flatkv.strategies.sglang import CONV_DTYPE_WHY as SGLANG_CONV_DTYPE_WHY
from flatkv.strategies.sglang import OLDER_KV_LOG as OLDER_SGLANG_KV_LOG
from flatkv.strategies.sglang import OLDER_SWA_LOG as OLDER_SGLANG_SWA_LOG
from flatkv.strategies.sglang import logged_padding as sglang_logged_padding
from flatkv.strategies.sglang import sglang_default_page, swa_label
from flatkv.strategies.sglang import split_idle as sglang_split_idle
from flatkv.strategies.sglang import swa_pool as sglang_swa_pool
from flatkv.strategies.vllm import (
    ALIGN_BY_DEFAULT,
    DRAFT_WIDENED_CONV,
    FAILS_AT_START_UP,
    GDN_CHECKPOINT_CLASSES,
    OLDER_VLLM_LOG,
    OLDER_VLLM_TELL,
    PREFILL_CHECKPOINT_CLASSES,
    REFUSES_TO_START,
    WARMUP_LOG_NOTE,
    all_as_align_why,
    mamba_padding_percent,
    runs_all_as_align,
)
from flatkv.units import (
    MAX_BYTES,
    concurrency_text,
    concurrency_value,
    count_text,
    exact_bytes,
    format_bytes,
    sentence_case,
    tokens_text,
)
from flatkv.workload import (
    DEFAULT_SCHEDULED_TOKENS,
    Workload,
    covers,
    group_pages,
    max_requests,
    pool_from_plan,
)

# Streamlit renders text as Markdown (emphasis, links, code), LaTeX ($...$) and its own
# directives (:red[...]). What a user typed (a model name, a layer pattern quoted back in an
# error) must read as typed: a name like "a*b*c" would lose its stars, "[x](http://...)" would
# become a link that a shared URL carries, and so would a bare "http://..." or "www."; a
# leading "- " would start a list, "&amp;" would show as "&". A backslash makes any ASCII
# punctuation literal, so every one gets one; a line break would end the caption's paragraph.
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")


def markdown_literal(text: str) -> str:
    """``text`` escaped so that streamlit's Markdown shows it character for character, on one
    line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.splitlines()))


# --------------------------------------------------------------------------------------------
# Component kinds: one colour and one name each, on every chart.


def component_kind(group_id: str, component: str) -> str:
    """``kv`` (full attention), ``kv_sliding``, ``kv_chunked``, ``conv``, ``ssm`` or ``state``
    (other state)."""
    if component == "kv":
        return {SLIDING_ATTENTION: "kv_sliding", CHUNKED_ATTENTION: "kv_chunked"}.get(group_id,
                                                                                     "kv")
    return component if component in ("conv", "ssm") else "state"


# --------------------------------------------------------------------------------------------
# Headline figures


@dataclass(frozen=True)
class Headline:
    requested_block_size: int
    block_size: int
    block_bytes: int
    num_blocks: int
    token_slots: int
    budget_bytes: int
    unused_bytes: int
    uniform_padding_per_block: int  # what padding rows to the page row would add per block
    dead_share_by_group: tuple[tuple[str, float], ...]
    page_row_bytes: int  # the widest row at P, what a uniform page pads every row to
    state_row_bytes: int  # the widest state (constant) row; 0 without state

    @property
    def padding_share(self) -> float:
        """Share of a uniform-page block that would be padding (packed slabs allocate none)."""
        padded = self.block_bytes + self.uniform_padding_per_block
        return self.uniform_padding_per_block / padded if padded else 0.0

    @property
    def state_row_padding(self) -> float | None:
        """What padding the state row to the page row adds, as a share of the state row, counted
        as vLLM logs it ("Padding mamba page size by 1.49% ..."; the same figure when vLLM's P
        is this plan's P). None without state."""
        if not self.state_row_bytes:
            return None
        return (self.page_row_bytes - self.state_row_bytes) / self.state_row_bytes


def headline(analysis: PlanAnalysis) -> Headline:
    t = analysis.totals
    return Headline(
        requested_block_size=analysis.equalizer.requested_block_size,
        block_size=t.block_size,
        block_bytes=t.block_bytes,
        num_blocks=t.num_blocks,
        token_slots=t.token_slots,
        budget_bytes=t.budget_bytes,
        unused_bytes=t.unused_bytes,
        uniform_padding_per_block=t.uniform_padding_bytes // t.num_blocks,
        dead_share_by_group=tuple((g.group_id, g.dead_share) for g in analysis.groups),
        page_row_bytes=analysis.equalizer.page_row_bytes,
        state_row_bytes=analysis.equalizer.max_const,
    )


# --------------------------------------------------------------------------------------------
# The page-row layout


@dataclass(frozen=True)
class Segment:
    """One drawn piece of a slot row: a binding, or the padding a uniform page would add."""

    slot: int
    slot_name: str
    kind: str  # component_kind(...) or "padding"
    group_id: str
    layer: int | None  # the layer's index among those of its kind (our group's layer j);
    # None for a page no layer holds (vLLM's padding layer)
    component: str  # "padding" for padding
    offset: int  # bytes from the start of the slot row
    nbytes: int
    cache_layer: int | None = None  # the layer's index among the model's cache layers

    @property
    def end(self) -> int:
        return self.offset + self.nbytes

    @property
    def holder(self) -> str:
        """Whose bytes these are, as the hover names them: ``full_attention #4 (cache layer
        19)``, or a padding layer's page."""
        if self.layer is None:
            return f"a padding layer of {self.group_id}"
        where = "" if self.cache_layer is None else f" (cache layer {self.cache_layer})"
        return f"{self.group_id} #{self.layer}{where}"


def layout_segments(analysis: PlanAnalysis, *, uniform: bool = False,
                    layer_types: Sequence[str] = ()) -> list[Segment]:
    """Segments of every slot row, in slot order.

    ``uniform=False`` is the plan as allocated (packed slabs: rows side by side, no padding).
    ``uniform=True`` draws each row padded to the page row, as a uniform-page engine (vLLM) lays
    it out: row k of a slot starts at ``k * page_row`` and its padding is a segment of its own.
    ``layer_types`` (the profile's) names each binding's cache layer, as the Model page counts
    them: a group's layer j is the j-th layer of its label.
    """
    where: dict[str, list[int]] = {}
    for i, label in enumerate(layer_types):
        where.setdefault(label, []).append(i)

    def cache_layer(group_id: str, layer: int) -> int | None:
        indices = where.get(group_id, [])
        return indices[layer] if layer < len(indices) else None

    out: list[Segment] = []
    for s in analysis.slots:
        for k, row in enumerate(s.rows):
            start = k * row.page_row_bytes if uniform else row.offset
            for b in row.bindings:
                out.append(
                    Segment(
                        s.slot,
                        s.name,
                        component_kind(b.group_id, b.component),
                        b.group_id,
                        b.layer,
                        b.component,
                        start + b.row_offset,
                        b.nbytes_per_block,
                        cache_layer(b.group_id, b.layer),
                    )
                )
            if uniform and row.padding_bytes:
                out.append(
                    Segment(
                        s.slot,
                        s.name,
                        "padding",
                        row.group_id,
                        row.layer,
                        "padding",
                        start + row.used_bytes,
                        row.padding_bytes,
                        cache_layer(row.group_id, row.layer),
                    )
                )
    return out


def vllm_block_segments(result: StrategyResult, profile: CacheProfile) -> list[Segment]:
    """vLLM's layout drawn as ``layout_segments`` draws ours: one row per KV cache group, the
    bytes of one block id when that group owns it (a block id is one group's in vLLM).

    vLLM allocates ``group_size`` tensors of ``num_blocks`` pages; tensor j's page of a block
    holds layer j of the group that owns it: its KV for P tokens, or its state (conv, ssm)
    padded to the page ("Padding mamba page size"); DeepSeek-V3.2's indexer keys, which vLLM
    caches in a tensor of their own in the same group, are drawn beside the latent's KV in
    the page of their layer. A group short of ``group_size`` layers leaves whole pages to
    padding layers. Row j of group i of a kind is the kind's layer
    ``i + j x groups of the kind`` (vLLM deals ``layers[i::num]`` to group i); windowed layers
    vLLM promoted to full attention (its hybrid manager off) count as full, as it allocates
    them, and where their pages differ in size from the full layers' (one group of pages of two
    sizes: ``extras["layer_page_bytes"]``) each layer's page is its own size, back to back.
    Every row adds up to ``result.block_bytes``.
    """
    if not result.applies or result.strategy != "vllm":
        raise ValueError(f"vllm_block_segments needs an applying vllm result, got "
                         f"{result.strategy!r} (applies: {result.applies})")
    extras = result.extras
    page, size = extras["page_bytes"], extras["group_size"]
    groups = extras["groups"]
    # the pages of tensors 0 .. size - 1, and where each starts in a block
    pages = extras.get("layer_page_bytes", [page] * size)
    starts = [sum(pages[:j]) for j in range(size + 1)]
    kinds = {g["kind"] for g in groups}
    where: dict[str, list[int]] = {}
    for i, label in enumerate(profile.layer_types):
        where.setdefault(label if label in kinds else FULL_ATTENTION, []).append(i)
    state_parts = {**profile.state_const_bytes}
    if "drafted_conv_bytes" in extras:  # the conv rows drafted tokens add, as vLLM keeps them
        state_parts["conv"] = extras["drafted_conv_bytes"]
    if profile.has_state and sum(state_parts.values()) != extras["state_page_bytes"]:
        raise ValueError(f"state parts {state_parts} do not add up to vLLM's state page "
                         f"{extras['state_page_bytes']:,} B (an accounting bug)")
    of_kind = {kind: sum(g["kind"] == kind for g in groups) for kind in kinds}
    seen = dict.fromkeys(kinds, 0)  # groups of each kind met so far: this one's index i
    out: list[Segment] = []
    for row, group in enumerate(groups):
        kind, name = group["kind"], group["name"]
        index, seen[kind] = seen[kind], seen[kind] + 1
        if kind == LINEAR_ATTENTION:
            parts = [(component_kind(kind, c), c, nbytes) for c, nbytes in state_parts.items()]
        else:  # DeepSeek-V3.2's indexer keys: a cache of their own beside the latent's
            indexer = result.block_size * (profile.indexer_bytes_per_slot or 0)
            kv_kind = component_kind(kind, "kv")
            # a kind's own history bytes where its page is padded to a larger kind's
            history = extras.get("kind_history_bytes", {}).get(kind,
                                                               extras["attention_page_bytes"])
            parts = [(kv_kind, "kv", history - indexer)]
            if indexer:
                parts.append(("indexer", "indexer keys", indexer))
        for j in range(size):
            start = starts[j]
            if j >= group["layers"]:
                out.append(Segment(row, name, "padding_layer", kind, None, "its whole page",
                                   start, page))
                continue
            layer = index + j * of_kind[kind]
            cache = where[kind][layer]
            if "layer_page_bytes" in extras:  # each layer's history fills its own page
                parts = [(component_kind(kind, "kv"), "kv", pages[j])]
            for part_kind, component, nbytes in parts:
                out.append(Segment(row, name, part_kind, kind, layer, component, start, nbytes,
                                   cache))
                start += nbytes
            if start < starts[j + 1]:
                out.append(Segment(row, name, "padding", kind, layer, "padding",
                                   start, starts[j + 1] - start, cache))
    return out


def vllm_block_text(result: StrategyResult, profile: CacheProfile,
                    analysis: PlanAnalysis) -> str:
    """What ``vllm_block_segments`` draws, in figures, beside one block id of our plan."""
    extras = result.extras
    page, size, groups = extras["page_bytes"], extras["group_size"], extras["groups"]
    padding = [f"{kind}: {count_text(n_pad, 'padding layer')}"
               for kind, n_pad in extras["padding_layers_per_type"].items() if n_pad]
    tensors = f"pages of {page:,} B in {count_text(size, 'tensor')} (group_size)"
    if sizes := extras.get("layer_page_bytes"):  # one group, each layer's page its own size
        tensors = ("pages of two sizes in " + count_text(size, "tensor") + ", one a layer: "
                   + " and ".join(f"{sizes.count(b):,} of {b:,} B" for b in sorted(set(sizes)))
                   + " (its hybrid KV cache manager off: every layer in one group)")
    if profile.indexer_bytes_per_slot:  # two caches a layer: the latent's and the indexer's
        indexer = result.block_size * profile.indexer_bytes_per_slot
        tensors = (f"pages of {page:,} B for each of {size:,} layers, in two tensors a layer "
                   f"({page - indexer:,} B of latent KV, {indexer:,} B of indexer keys)")
    state_pad = ""
    if "attention_page_bytes" in extras and "state_page_bytes" in extras:
        kept = extras["state_page_bytes"]
        sized = extras.get("sized_state_page_bytes", kept)  # what P and the log line count
        state_pad = (f" State pages ({sized:,} B) are padded to the page by "
                     f"{mamba_padding_percent(page, sized):.2f}% (\"Padding mamba page size\")"
                     + (f"; the layers keep {kept:,} B in them, with the drafted conv rows"
                        if kept != sized else "") + ".")
    holds = ("holds a page of every layer (one group: no other group's rows to sit beside "
             "them)" if len(groups) == 1 else
             f"belongs to one of {len(groups):,} groups: tensor j's page holds that group's "
             "layer j, so no other group's rows sit beside it (no dead weight)")
    ours = analysis.totals
    # a state-only model's P is nominal (its page is one state page, whatever the tokens):
    # no P and no bytes a token to compare
    tokens = profile.has_attention
    p = (f"P {result.block_size:,}" if tokens else
         "no P (a state-only model's page is one state page, whatever the tokens)")
    if scaled := {kind: size for kind, size in extras.get("block_sizes", {}).items()
                  if size != result.block_size}:  # smaller pages of more tokens (Gemma 4)
        p += " (" + ", ".join(f"{kind} {size:,}" for kind, size in scaled.items()) + (
            ": its layers keep fewer bytes a token, so their page of the same bytes holds more "
            "tokens)")
    # a block's bytes a token at P: not one figure where some groups' blocks hold more tokens
    theirs = (f", {_per_token(result.block_bytes, result.block_size)}"
              if tokens and not scaled else "")
    ours_per = (f", {_per_token(ours.block_bytes, ours.block_size)}) at P {ours.block_size:,}"
                if tokens else ")")
    return (
        f"vLLM at these settings (Compare's column): {p}, {tensors}. A block id is "
        f"{count_text(size, 'page')}, {result.block_bytes:,} B "
        f"({format_bytes(result.block_bytes)}{theirs}), and {holds}." + state_pad
        + (f" Groups short of {size:,} layers keep whole pages for padding layers "
           f"({'; '.join(padding)})." if padding else "")
        + f" Our block id above: {ours.block_bytes:,} B ({format_bytes(ours.block_bytes)}"
        f"{ours_per}, a row for every group."
    )


def _per_token(block_bytes: int, block_size: int) -> str:
    """A block's bytes per token of P, so blocks of different P compare: ``78,324 B a token``
    (two decimals where P does not divide it)."""
    per = Fraction(block_bytes, block_size)
    shown = f"{per.numerator:,}" if per.denominator == 1 else f"{float(per):,.2f}"
    return f"{shown} B a token"


# --------------------------------------------------------------------------------------------
# Bytes by group / layer / component (the icicle)


@dataclass(frozen=True)
class TreeNode:
    id: str
    parent: str  # "" for the root
    label: str
    value: int  # bytes over the whole budget; a parent is the exact sum of its children
    kind: str  # component kind, "group", "budget", "unused" or "reserved"


def bytes_tree(analysis: PlanAnalysis) -> list[TreeNode]:
    """Budget -> group -> component -> layer, plus reserved and unused; sums are exact.

    Components sit above layers so the top levels stay readable for models with 100+ layers
    (kv of all full-attention layers, ssm of all state layers); one layer is a click deeper.
    """
    n = analysis.totals.num_blocks
    leaves: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for s in analysis.slots:
        for row in s.rows:
            comps = leaves.setdefault(row.group_id, {})
            for b in row.bindings:
                comps.setdefault(b.component, []).append((row.layer, b.nbytes_per_block * n))
    nodes = [TreeNode("budget", "", "budget", analysis.totals.budget_bytes, "budget")]
    for gid, comps in leaves.items():
        nodes.append(TreeNode(gid, "budget", gid, sum(v for c in comps.values() for _, v in c),
                              "group"))
        for comp, layers in comps.items():
            cid = f"{gid}/{comp}"
            kind = component_kind(gid, comp)
            nodes.append(TreeNode(cid, gid, comp, sum(v for _, v in layers), kind))
            nodes.extend(TreeNode(f"{cid}/{layer}", cid, f"{comp} #{layer}", v, kind)
                         for layer, v in layers)
    t = analysis.totals
    if t.reserved_bytes:
        nodes.append(TreeNode("reserved", "budget", "reserved", t.reserved_bytes, "reserved"))
    if t.unused_bytes:
        nodes.append(TreeNode("unused", "budget", "unused", t.unused_bytes, "unused"))
    return nodes


# --------------------------------------------------------------------------------------------
# Why P grows: a state row against the KV rows


@dataclass(frozen=True)
class RowBar:
    """One bar of the page-inflation picture: a row's bytes, and what kind of row it is."""

    label: str
    nbytes: int
    kind: str  # "kv" or "ssm" (the chart colours)


def inflation_bars(analysis: PlanAnalysis) -> list[RowBar]:
    """Why a state row inflates P, as three bars: the widest KV history row at the requested
    P, the widest state row (constant in P), and the KV row at the P that covers it. Empty when
    P was not inflated (no state row, or the requested P already covers it)."""
    eq = analysis.equalizer
    if not eq.inflated:
        return []
    return [
        RowBar(f"KV row at the requested P = {eq.requested_block_size:,}",
               eq.max_linear * eq.requested_block_size, "kv"),
        RowBar("state row (the same at any P)", eq.max_const, "ssm"),
        RowBar(f"KV row at P = {eq.block_size:,}", eq.max_linear * eq.block_size, "kv"),
    ]


# --------------------------------------------------------------------------------------------
# Which page ids a workload hands to which group


@dataclass(frozen=True)
class PageMap:
    """Page id -> owning group for a workload (SPEC section 3.5). Each group's count holds its
    one dummy page (SPEC's "+ 1"), so no id is set apart besides: the map draws exactly the
    pages ``covers`` counts (a null page at id 0 on top of them drew one page too few of the
    last group when the pages filled the pool)."""

    num_blocks: int
    owners: tuple[str | None, ...]  # index = page id; None = free
    per_group: dict[str, int]  # pages each group needs (flatkv.workload.group_pages)
    fits: bool
    # requests of this context the pool holds when the workload does not fit; None when it does
    max_requests: int | None


def _page_run(index: int, group_id: str, pages: int) -> Iterator[tuple[float, int, str]]:
    """Group ``group_id``'s pages as (position in the run, group index, group id), in order."""
    return (((2 * k + 1) / (2 * pages), index, group_id) for k in range(pages))


def page_assignment(
    analysis: PlanAnalysis, *, requests: int, context: int, sliding_window: int | None = None,
    attention_chunk_size: int | None = None, scheduled_tokens: int = DEFAULT_SCHEDULED_TOKENS,
    speculative_tokens: int = 0, limit: int = 4096,
) -> PageMap:
    """The pages each group needs for ``requests`` at ``context`` with ``scheduled_tokens`` per
    step and ``speculative_tokens`` drafted (SPEC 3.5, through ``flatkv.workload``), handed out
    from one page-id space as the requests grow: the groups' pages interleave in proportion, so
    every id belongs to exactly one group at a time. At most ``limit`` ids are listed."""
    pool = pool_from_plan(analysis.plan, sliding_window=sliding_window,
                          attention_chunk_size=attention_chunk_size)
    work = Workload(requests, context, scheduled_tokens, speculative_tokens=speculative_tokens)
    per_group = group_pages(pool, work)
    shown = min(pool.num_units, limit)
    # k-th page of group g lands at fraction (k + 1/2) / n_g of the run: a proportional merge.
    # Each group's run is already in order, so a lazy merge yields the first ids without
    # listing every page (a link may ask for 4,096 requests of 2**40 tokens: up to 10^14 pages).
    runs = [_page_run(i, gid, n) for i, (gid, n) in enumerate(per_group.items())]
    owners: list[str | None] = [gid for _, _, gid in islice(heapq.merge(*runs), shown)]
    owners += [None] * (shown - len(owners))
    fits = covers(pool, work)
    most = None if fits else max_requests(pool, context_tokens=context,
                                          scheduled_tokens=scheduled_tokens,
                                          speculative_tokens=speculative_tokens)
    return PageMap(pool.num_units, tuple(owners), per_group, fits, most)


@dataclass(frozen=True)
class LivePages:
    """Layout's page-id map of its live requests: ``drawn`` of them, and whether that is the
    default cut to what fits (``fitted``: the page says so)."""

    pages: PageMap
    drawn: int
    fitted: bool


def live_pages(analysis: PlanAnalysis, requested: int | None, default: int,
               **workload) -> LivePages:
    """The map of the requests typed, or until one is, of ``default`` requests, or as many as
    fit where fewer do (at least one, which then does not fit); ``workload``: the rest of
    ``page_assignment``'s arguments."""
    pages = page_assignment(analysis, requests=requested or default, **workload)
    if requested is not None or pages.fits:
        return LivePages(pages, requested or default, False)
    drawn = max(pages.max_requests, 1)
    return LivePages(page_assignment(analysis, requests=drawn, **workload), drawn, True)


# Each mamba cache mode with the state pages it gives one request (the engine option's choices).
MAMBA_MODE_TEXT = {
    "none": "none (1 state page)",
    "align": "align (2 state pages)",
    "all": "all (1 per P tokens)",
}
# The same, short enough for the engine options' selectbox in a third of the page at 1000 px
# (its label says they are state pages).
MAMBA_MODE_CHOICES = {"none": "none (1 page)", "align": "align (2 pages)", "all": "all (1 per P)"}


def mamba_mode_text(mode: str, checkpoint_blocks: int = 0, speculative_tokens: int = 0) -> str:
    """A mode with the state pages it gives one request: ``align (2 state pages) + 1
    checkpoint + 2 drafted``; checkpoint blocks count in align only, as vLLM keeps them."""
    text = MAMBA_MODE_TEXT[mode]
    if mode == "align" and checkpoint_blocks:
        text += f" + {checkpoint_blocks} checkpoint"
    return text + (f" + {speculative_tokens} drafted" if speculative_tokens else "")


def workload_text(pages: PageMap, profile: CacheProfile, *, context: int, mamba_cache_mode: str,
                  concurrency: float | None, speculative_tokens: int = 0,
                  checkpoint_blocks: int = 0, cut: tuple[int, int] | None = None) -> str:
    """What the Layout page's workload needs of the pool (SPEC 3.5), and where its state count
    differs from Budget's and Compare's: it charges prefix-cache snapshots, they the mode's
    state pages, so both figures are given; then whether it fits. ``cut``: the default
    requests and the fewer drawn where those did not fit (said first, as a refusal is). One
    paragraph each: what to act on, the pages counted, how state is charged."""
    per = ", ".join(f"{g}: {n:,}" for g, n in pages.per_group.items())
    drafted = " and drafted tokens' pages" if speculative_tokens and profile.has_state else ""
    kept = f"history, live state and snapshots{drafted}" if profile.has_state else "history"
    text = (f"Pages the groups need ({kept}, one dummy page each): {per}; "
            f"{pages.num_blocks:,} page ids in the pool. A full-history group's count is all "
            "requests' tokens over P, rounded up, and a page more a request for its "
            "part-filled last page; a sliding group's, each request's window pages and one "
            "step's tokens.")
    if profile.has_state:
        held = ("" if concurrency is None else
                f", and hold {concurrency_text(concurrency)} requests of {tokens_text(context)}")
        text += ("\n\nState is charged as with state prefix caching: two live pages per request "
                 "plus a snapshot every P tokens (at most the full-history group's count)"
                 + (f", and {speculative_tokens} more per request for drafted tokens"
                    if speculative_tokens else "")
                 + ". Budget and Compare count the state pages of "
                 f"mamba cache mode {mamba_mode_text(mamba_cache_mode, checkpoint_blocks)}"
                 + (f" and {speculative_tokens} more for drafted tokens" if speculative_tokens
                    else "")
                 + f" per request, as the engine's log does{held}.")
    charged = " with its state snapshots" if profile.has_state else ""
    counted = ("" if not profile.has_state or concurrency is None else
               f" (Budget's and Compare's {concurrency_text(concurrency)} count the state "
               "pages as the engine's log does: the last paragraph here)")
    if pages.fits and cut is not None:  # said first: why the map draws fewer
        default, drawn = cut
        # two counts of requests on one page: each named by what it counts
        top = ("" if not profile.has_state or concurrency is None else
               f" The {concurrency_text(concurrency)} requests at the top of the page count "
               "the state pages as the engine's log does (the last paragraph here).")
        text = (f"The map draws {count_text(drawn, 'live request')} of {tokens_text(context)}, "
                f"not the default {default:,}: {drawn:,} {'fits' if drawn == 1 else 'fit'}"
                f"{charged if drawn == 1 else charged.replace('its', 'their')}.{top}"
                f"\n\n{text}")
    elif not pages.fits:  # said first: it is what the reader acts on
        if pages.max_requests:
            text = (f"This workload{charged} does not fit in this budget: it holds at most "
                    f"{count_text(pages.max_requests, 'request')} of {tokens_text(context)}"
                    f"{counted}; lower the live requests or the context length.\n\n{text}")
        else:  # fewer requests would not help
            text = (f"One request of {tokens_text(context)}{charged} does not fit in this "
                    f"budget{counted}: lower the context length.\n\n{text}")
    return text


def model_context_text(context: int | None, max_model_len: int | None,
                       fallback: int) -> str | None:
    """The context set (None: the model's) beside the one vLLM serves the model at unless told
    (its --max-model-len default, from the config: its log's "Maximum concurrency for N tokens
    per request" is at that N); None where the pages count at the model's own or at a typed
    one for a model of unknown length. With neither, the pages count at ``fallback``, an
    assumption every figure rests on, so the text says so."""
    if context is None and max_model_len is None:
        return (f"No max_model_len is known for this model, so the pages count at {fallback:,} "
                "tokens, an assumption: type the context you serve at (vLLM's log names it "
                "in \"Maximum concurrency for N tokens per request\").")
    if context is None or max_model_len is None or context == max_model_len:
        return None
    if context > max_model_len:
        return sentence_case(past_max_model_len_text(max_model_len,
                                                     code=lambda flag: f"`{flag}`")) + "."
    return (f"vLLM serves this model at {max_model_len:,} tokens unless told: its default "
            "`--max-model-len`, from the config, and the length its log gives the maximum "
            "concurrency at.")


def sglang_idle_split_text(r: StrategyResult) -> str:
    """Under Compare's "Where the budget goes": SGLang's idle pool slice. The pool layers it
    keeps for kv-shared layers, never written, and what its static split leaves of the pools
    that do not bind at the requests that run; a paged layout's idle rows are its dead weight,
    which depends on no request count. Empty where neither is there (one pool, no kv-shared
    layer, or no request running)."""
    if r.strategy != "sglang" or not r.applies:
        return ""
    said = []
    if shared := r.extras.get("kv_shared_pool_bytes"):
        said.append(f"SGLang keeps a pool layer for each kv-shared layer and never writes it: "
                    f"{format_bytes(shared)} ({shared / r.budget_bytes:.2%} of the budget) sit "
                    "idle at any request count.")
    if parts := sglang_split_idle(r):
        idle = sum(nbytes for _, nbytes in parts)
        whose = "Its" if said else "SGLang's"
        said.append(
            f"{whose} idle pool: with "
            f"{count_text(int(r.concurrency), 'request')} of {tokens_text(r.context_tokens)} "
            "running, " + " and ".join(f"{format_bytes(nbytes)} of its {what}" + (
                f" ({r.extras['idle_swa_tokens_at_context']:,} tokens)"
                if what == "sliding pool" else "") for what, nbytes in parts)
            + f" sit idle ({idle / r.budget_bytes:.2%} of the budget), left so by its static "
            "split; a paged layout's idle rows are its dead weight.")
    return " ".join(said)


# --------------------------------------------------------------------------------------------
# Sweeps for the budget page


def block_size_candidates(current: int, *, top: int = 4096) -> list[int]:
    """Powers of two up to ``top`` and the current block size, sorted."""
    sizes = {1 << k for k in range(top.bit_length()) if 1 << k <= top}
    sizes.add(current)
    return sorted(sizes)


def budget_candidates(current: int, *, reach: int | None = None, points: int = 40) -> list[int]:
    """From a tenth of the current budget to twice it, evenly, with the current budget in; and
    on to a quarter past ``reach`` (the least budget for the requests to hold), or down to a
    quarter under it, where it lies outside, so the chart shows where they come to fit (a
    context of millions of tokens can need many times this GPU's budget for one request, a
    short one a sliver of it). Never past MAX_BYTES, the largest budget a plan takes."""
    top, bottom = current * 2, current // 10
    if reach is not None:
        top, bottom = max(top, reach + reach // 4), min(bottom, reach - reach // 4)
    lo, hi = max(1, bottom), min(top, max(current, MAX_BYTES))
    step = (hi - lo) // (points - 1)
    values = {lo + i * step for i in range(points)} | {current}
    if reach is not None:  # within [lo, hi] by their making: a point of the sweep
        values.add(reach)
    return sorted(values)


@dataclass(frozen=True)
class CurvePoint:
    """One point of the Budget page's curves: a layout's figures at one budget or block size.
    None where the layout has no figure there (it does not start, or holds too few blocks), a
    gap in the charts and the table, never a zero that reads as a figure; capacity and P are
    None for a model without attention too (its charts leave capacity out)."""

    capacity_tokens: int | None
    concurrency: float | None
    block_size: int | None  # P

    @classmethod
    def of(cls, r: StrategyResult) -> CurvePoint:
        if not r.applies:
            return cls(None, None, None)
        return cls(r.capacity_tokens, r.max_concurrency, r.block_size)


@dataclass(frozen=True)
class Curves:
    """A layout's figures over budgets around the current one and over block sizes (the
    options' alignment kept: None makes each block size its own)."""

    budgets: list[int]
    by_budget: list[CurvePoint]
    block_sizes: list[int]
    by_block_size: list[CurvePoint]


def budget_target(swept: Curves, need: int | None, requests: int
                  ) -> tuple[float, float, str] | None:
    """The Budget chart's mark of the least budget for ``requests``: (GiB, the concurrency
    there, its name), or None where no budget holds them (or the curves were swept without
    it)."""
    if need is None or need not in swept.budgets:
        return None
    held = swept.by_budget[swept.budgets.index(need)].concurrency  # R or more: it holds them
    return need / 2**30, held, f"least budget for {count_text(requests, 'request')}"


def curves(profile: CacheProfile, strategy: str, budget: int, context: int,
           options: StrategyOptions, reach: int | None = None) -> Curves:
    """Both curves of the Budget page, each point a full ``run_strategy`` (so every layout is
    counted as on Compare); the budgets run on to ``reach`` (``budget_candidates``). A
    ValueError is the caller's to show, never a zero."""
    def point(budget_bytes: int, opts: StrategyOptions) -> CurvePoint:
        return CurvePoint.of(run_strategy(strategy, profile, budget_bytes=budget_bytes,
                                          context_tokens=context, options=opts))

    budgets = budget_candidates(budget, reach=reach)
    sizes = block_size_candidates(options.block_size)
    return Curves(budgets, [point(b, options) for b in budgets], sizes,
                  [point(budget, replace(options, block_size=b)) for b in sizes])


def context_chart_text(curves: sizing.ContextCurves, context: int,
                       results: Sequence[StrategyResult]) -> str:
    """How to read Compare's concurrency-over-context chart: where its points come from, what
    a stop and a flat stretch mean, and what caps the engines' lines beside their KV: vLLM's is
    its log's figure (KV blocks alone), SGLang's is capped by its state pool's running requests
    (with the figures, from ``results``, the table's runs) where the model keeps state."""
    text = (f"Each point is the concurrency of the table at the top, at this budget, with that "
            f"context length in place of {tokens_text(context)}; the diamonds are the table's "
            "own, and a line only joins the points. Where a line stops, the layout has no "
            "figure at that length (vLLM refuses to start when one request of it does not "
            "fit). Lines that coincide draw as one.")
    if "vllm" in curves.concurrency:
        text += (" vLLM's line is its log's Maximum concurrency, from its KV blocks alone: its "
                 "--max-num-seqs caps the requests it runs too.")
    sglang = next((r for r in results if r.strategy == "sglang" and r.applies), None)
    if "sglang" in curves.concurrency and sglang is not None and (
            cap := sglang.extras.get("running_request_cap")) is not None:
        text += (f" SGLang's line is flat where its state pool binds: {cap:,} running requests "
                 f"({sglang.extras['request_state_slots']:,} request slots, "
                 f"{sglang.extras['slots_per_request']} a request) whatever their length, its "
                 "max_running_requests.")
    return text


def context_sweep_rows(curves: sizing.ContextCurves) -> list[dict]:
    """Compare's concurrency-over-context chart as table rows: a context a row, a layout a
    column (its title), concurrency as engines log it, None where the layout has no figure."""
    return [{"context (tokens)": c,
             **{STRATEGY_TITLES[s]: None if values[i] is None else concurrency_value(values[i])
                for s, values in curves.concurrency.items()}}
            for i, c in enumerate(curves.contexts)]


def printed_budget_text(profile: CacheProfile, strategy: str, cache_bytes: int, context: int,
                        options: StrategyOptions) -> str:
    """A budget typed from a log line is rounded to 0.01 GiB: what the layout's figures are
    over every budget that prints the same (``budget.printed_range``), so a block or a few
    logged tokens off the engine's log read as rounding, not as a wrong formula. The paged
    layouts' figures grow with the budget, so the ends of the range bound them; where the
    layout applies at the top only, it says so. Empty when the budget is not such a printed
    value, the layout does not apply at the top, or for SGLang: its pools trade a state slot
    for KV tokens within the range (not monotonic), and it logs its pools' sizes, not a
    budget line."""
    if strategy == "sglang" or (span := printed_range(cache_bytes)) is None:
        return ""
    low, high = (run_strategy(strategy, profile, budget_bytes=b, context_tokens=context,
                              options=options) for b in span)
    if not high.applies:
        return ""
    text = (f"A log prints this memory to 0.01 GiB ({cache_bytes / 2**30:.2f} GiB), so the "
            f"budget is any of {low.budget_bytes:,} to {high.budget_bytes:,} B")
    name = title_of(high)
    if not low.applies:
        return (f"{text}, and {name} does not apply at {low.budget_bytes:,} B: whether the "
                "engine had enough, the log's rounding hides.")

    def between(a: int | None, b: int | None) -> str:
        return f"{a:,}" if a == b else f"{a:,} to {b:,}"

    figures = [f"blocks {between(low.num_blocks, high.num_blocks)} ({name})"]
    if low.logged_tokens is not None and high.logged_tokens is not None:
        figures.append(f"{logged_as(strategy)} {between(low.logged_tokens, high.logged_tokens)}"
                       " tokens")
    return (f"{text}; over those, " + "; ".join(figures) + ". The figures above read it as "
            f"{cache_bytes:,} B.")


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
# Exports


def bindings_csv(analysis: PlanAnalysis) -> str:
    """One line per binding: slot tensor, group, layer, component, offsets and bytes."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["tensor", "slot", "group_id", "layer", "component", "offset", "row_offset",
         "nbytes_per_block", "tensor_nbytes"]
    )
    for s in analysis.slots:
        for row in s.rows:
            for b in row.bindings:
                w.writerow(
                    [s.name, s.slot, b.group_id, b.layer, b.component, b.offset, b.row_offset,
                     b.nbytes_per_block, s.tensor_bytes]
                )
    return buf.getvalue()


def rows_csv(rows: Sequence[dict]) -> str:
    """CSV of a list of flat dicts (the keys of the first row are the header)."""
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# Engine strategies (flatkv.strategies): Compare's rows, and the notes Compare and Budget
# print under their figures

STRATEGY_TITLES = {
    "flat": "FlatKV packed slabs",
    "per-component": "FlatKV per component",
    "vllm": "vLLM v1",
    "sglang": "SGLang",
    "aliased": "slab aliasing",
    "lcm": "two-level pages",
}


# The layouts as a narrow table's headers name them (a column a layout at 1000 px)
STRATEGY_SHORT_TITLES = {"flat": "packed slabs", "per-component": "per component",
                         "vllm": "vLLM", "sglang": "SGLang", "aliased": "aliasing",
                         "lcm": "two-level"}


def title_of(result: StrategyResult) -> str:
    """A result's layout as the pages name it (``STRATEGY_TITLES``)."""
    return STRATEGY_TITLES.get(result.strategy, result.strategy)


def why_not_label(result: StrategyResult) -> str:
    """How a layout that has no figures here is labelled: vLLM that would start and then stop
    "refuses to start" (its reason says how), any other "does not apply"."""
    return ("refuses to start" if result.reason.startswith((REFUSES_TO_START, FAILS_AT_START_UP))
            else "does not apply")


def why_not_text(result: StrategyResult) -> str:
    """A layout with no figures here and its reason, as Compare lists it under its table."""
    reason = result.reason  # a refusal's reason opens with it: not said twice
    for opening in (REFUSES_TO_START, FAILS_AT_START_UP):
        reason = reason.removeprefix(f"{opening}: ")
    return f"**{title_of(result)}** {why_not_label(result)}: {reason}"


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


def engines_beside_text(ours: StrategyResult, engines: Sequence[StrategyResult],
                        profile: CacheProfile) -> str:
    """Layout draws our plan only; one line puts its concurrency beside the engines' in the
    same budget (a design review's first question), each as a multiple of ours; an engine that
    refuses says whether it serves no such model (``model_blocker``) or does not start here.
    Empty when ours has no concurrency (no context, or it does not apply)."""
    if not ours.applies or not ours.max_concurrency:
        return ""
    beside = [f"{title_of(r)} {concurrency_text(r.max_concurrency)} "
              f"({float(r.concurrency / ours.concurrency):,.2f}x ours)" if r.applies else
              f"{title_of(r)} does not serve this model" if model_blocker(r.strategy, profile)
              else f"{title_of(r)} does not start" for r in engines
              if not r.applies or r.max_concurrency is not None]
    if not any(r.applies for r in engines):
        return ""
    held = concurrency_text(ours.max_concurrency)
    held = (f"holds {held} requests" if ours.max_concurrency >= 1
            else f"holds no whole request ({held} of one)")
    return (f"At {tokens_text(ours.context_tokens or 0)} per request, this plan {held}; in the "
            "same budget " + ", ".join(beside) + ". Compare shows where each layout's bytes go"
            + (" and why a layout does not apply." if len(beside) > sum(r.applies
                                                                       for r in engines)
               else "."))


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
        "concurrency": (None if result.max_concurrency is None
                        else concurrency_value(result.max_concurrency)),
        **{breakdown_column(cat): v for cat, v in result.breakdown},
        "note": result.reason,
    }


def hold_rows(results: Sequence[StrategyResult], budgets: Sequence[int | None],
              budget: Budget, profile: CacheProfile,
              options: StrategyOptions | None = None) -> list[dict]:
    """Compare's table of the least cache budget each layout needs for the requests to hold
    (``budgets``, None where no budget does) and the GPU memory that leaves it at the page's
    budget (its columns left out for a budget given as a log gives it), said where it is more
    than the page's GPU. A layout that lays out ``profile`` at these ``options`` at no budget
    (``sizing.plans_at_some_budget``: aliasing Scout's unequal groups, SGLang for LFM3, vLLM's
    hybrid manager off on a state hybrid) "does not apply": "none holds them" would read as a
    budget too small."""
    rows = []
    for r, need in zip(results, budgets, strict=True):
        none = ("does not apply" if need is None
                and not sizing.plans_at_some_budget(r.strategy, profile, options)
                else "none holds them")
        # the readable figures first (a narrow window cuts the table from the right), the
        # exact bytes after them
        row = {"strategy": title_of(r),
               "cache budget": none if need is None else format_bytes(need)}
        gpu = None if need is None else budget.gpu_bytes_for(need)
        if not budget.given:
            beyond = "" if gpu is None else budget.beyond_gpu_text(gpu)
            row["GPU memory"] = "" if gpu is None else format_bytes(gpu) + (
                f" ({beyond})" if beyond else "")
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


def speculative_text(profile: CacheProfile, strategy: str, speculative_tokens: int, *,
                     mtp_added: bool = False) -> str:
    """Budget's and Layout's word on speculative decoding where tokens are drafted: what the
    layout's figures count of it (SGLang: its state buffers, nothing), and whether a drafter's
    layers are in the model (``mtp_added``: an MTP layer was added). Empty without drafted
    tokens or attention layers."""
    if not speculative_tokens or not profile.has_attention:
        return ""
    drafter = DRAFTER_ADDED_TEXT if mtp_added else DRAFTER_TEXT
    if strategy == "sglang":
        return ("Speculative decoding's state buffers are not modelled for SGLang: these "
                f"figures are without them. {drafter}")
    counted = (f"these figures count the {speculative_tokens} drafted token(s)' state pages. "
               if profile.has_state else "")
    return f"Speculative decoding: {counted}{drafter}"


# What a capacity counts and why a model without attention has none: Compare's note, Budget's
# and Layout's metric helps say it in these words
CAPACITY_COUNTS = "the history the pool holds beside one request's state"
NO_HISTORY = ("No attention layer: the model keeps no token history, only a constant state per "
              "request")


def how_to_read_text(profile: CacheProfile, speculative_tokens: int, *,
                     mtp_added: bool = False) -> str:
    """What Compare's capacity and concurrency count, under the charts they explain too, and
    what they count of speculative decoding."""
    has_history = profile.has_attention
    capacity = (f"Capacity: {CAPACITY_COUNTS}, counted the same way for every paged layout; "
                "SGLang: its token pool, which its static split of the budget fixes. "
                if has_history else f"{NO_HISTORY}, so no capacity in tokens. ")
    drafter = DRAFTER_ADDED_TEXT if mtp_added else DRAFTER_TEXT
    if not profile.has_state:
        drafting = f"Speculative decoding adds no state pages here. {drafter}"
    elif speculative_tokens:
        drafting = (f"With {speculative_tokens} drafted token(s) a step, a request holds "
                    f"{speculative_tokens} more state page(s) in each state group in every "
                    f"paged layout, and vLLM widens {DRAFT_WIDENED_CONV} conv states by a row "
                    "per drafted token (the other layouts keep the model's conv rows); SGLang's "
                    f"figures are without speculative decoding. {drafter}")
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
    """Where the GPU picked is one SGLang runs with pages of more than a token when not told
    (Blackwell): the page size its default run takes, where the engine options differ; empty
    elsewhere."""
    default = sglang_default_page(gpu, profile)
    if default is None or options.sglang_page_size == default.page:
        return ""
    return (f"{default.said} and rounds its pools down to whole pages: set the SGLang page size "
            f"to {default.page} in the engine options to match such a run's log.")


def mamba_all_text(options: StrategyOptions, profile: CacheProfile) -> str:
    """Mamba cache mode all keeps a snapshot every P tokens, so a layout's P decides how many:
    say so where it acts (a model with state), and where vLLM runs the model in align instead,
    with the state pages align holds under ``options``. Empty otherwise."""
    if options.mamba_cache_mode != "all" or not profile.has_state:
        return ""
    text = ("Mamba cache mode all: every paged layout keeps a state snapshot every P tokens of "
            "its own P (vLLM first aligns its P to lcm(chunk, A)), so a small P, such as "
            "two-level pages' requested block size, means many snapshots. vLLM has it up to "
            "0.31 (0.32 and later run align with prefix caching, none without).")
    if aligning := runs_all_as_align(profile):
        held = state_pages_per_request(replace(options, mamba_cache_mode="align"), 0, 1)
        text += (f" Not vLLM here: {all_as_align_why(aligning)}; its row counts align's "
                 f"{held} state pages a request, and its P is not aligned to the chunk.")
    return text


def prefill_checkpoint_text(options: StrategyOptions, profile: CacheProfile, *,
                            fix: str = 'set "Prefill checkpoint blocks" to 1',
                            gdn_gpu: str = "") -> str:
    """A Mamba2 model (its vLLM class runs MambaMixer2) in mamba cache mode align without
    prefill checkpoint blocks: that is vLLM 0.28 to 0.31's count. Since 0.32 MambaMixer2's
    spec keeps one a request (``num_prefill_checkpoint_blocks=1``), so a later log holds fewer
    requests: say what to set (``fix``, in the page's words or the CLI's). Likewise a GDN model
    on ``gdn_gpu``, a GPU its prefill runs on FlashInfer on (0.33 and later; the caller knows
    the GPU: ``AppState.vllm_checkpoint_blocks``). Empty otherwise (a model by hand names no
    class)."""
    if options.mamba_cache_mode != "align" or options.prefill_checkpoint_blocks:
        return ""
    held = state_pages_per_request(options, 0, 1)
    if PREFILL_CHECKPOINT_CLASSES.intersection(profile.architectures):
        since, layers = ("vLLM 0.28 to 0.31 did. Since 0.32",
                         "this model's Mamba2 layers")
    elif gdn_gpu and GDN_CHECKPOINT_CLASSES.intersection(profile.architectures):
        since, layers = ("vLLM 0.28 to 0.32 did. Since 0.33",
                         f"this model's GDN layers on the {gdn_gpu}, whose prefill runs on "
                         "FlashInfer there")
    else:
        return ""
    return (f"Mamba cache mode align counts {held} state pages a request in each state group "
            f"here, as {since} vLLM keeps a prefill checkpoint page more for {layers} "
            f"({held + 1} a request): {fix} to match a later log.")


def mode_fallback_text(r: StrategyResult, profile: CacheProfile) -> str:
    """Budget's word where vLLM ran the mamba cache mode asked for as another (all as align):
    the figures are the other mode's. Empty otherwise."""
    if r.extras.get("mamba_cache_mode_asked") != "all" or not (
            aligning := runs_all_as_align(profile)):
        return ""
    return f"{all_as_align_why(aligning)}: these are align's figures."


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
    older = ("" if r.older_logged_tokens in (None, r.logged_tokens) else
             f" {OLDER_VLLM_LOG} printed {r.older_logged_tokens:,} instead: {OLDER_VLLM_TELL}.")
    return ("The token count the engine's log prints: max concurrency x max_model_len."
            f"{older} The math shows it.")


def block_size_sweep_rows(curves: Curves, has_history: bool) -> list[dict]:
    """The Budget page's block-size sweep as table rows (capacity left out without history;
    a gap where the layout has no figure at that block size)."""
    return [{"requested block size": size, "P": p.block_size,
             **({"capacity (tokens)": p.capacity_tokens} if has_history else {}),
             "concurrency": None if p.concurrency is None else concurrency_value(p.concurrency)}
            for size, p in zip(curves.block_sizes, curves.by_block_size, strict=True)]


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


def page_sizes_text(results: Sequence[StrategyResult], options: StrategyOptions) -> str:
    """Compare's word under its table where a layout's P is not the size asked (the block
    size; SGLang's own page size for SGLang), or some of its groups page by another (vLLM's
    full layers beside sliding ones of their own heads): which, and that each one's Formulas
    say why (a state row inflates it, or the engine pages by a size of its own: vLLM's kernel
    block, SGLang's NSA page, one page size for every group). Empty where every P is the one
    asked."""
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
        sizes = [f"{r.block_size:,}", *(f"{label} {size:,}" for label, size in groups.items())]
        other.append(f"{title_of(r)} {', '.join(sizes)}" + (
            f" (its page size asked: {asked(r):,})" if r.strategy == "sglang" else ""))
    if not other:
        return ""
    return (f"Tokens a page, where not the block size asked ({options.block_size:,}): "
            f"{'; '.join(other)}. A state row inflates P, or the engine pages by a size of its "
            "own; each layout's Formulas below say why.")


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
    only r_swa x as many pages. Empty when no layout here has two pools, or the product stays
    within the budget (r_swa of 1 or more)."""
    for r in results:
        if (r.applies and "swa_page_bytes" in r.extras
                and r.num_blocks * r.block_bytes > r.budget_bytes):  # r_swa < 1
            x, which = r.extras, WINDOWED[swa_label(profile)].name
            return (f"{title_of(r)}: a block is one page in both "
                    f"token pools ({x['full_page_bytes']:,} B full + {x['swa_page_bytes']:,} B "
                    f"{which}), and the {which} pool holds {x['swa_tokens']:,} tokens against "
                    f"the full pool's {r.num_blocks * r.block_size:,} (r_swa = "
                    f"{ratio_text(x['swa_full_tokens_ratio'])}), so blocks x block bytes is more "
                    "than the budget.")
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
            f"({dead / worst.budget_bytes:.2%} of the budget) is dead weight. Every page id "
            "takes a row in every slot tensor, and a page one group uses leaves the other "
            "groups' rows in it idle.")
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
            text += (f" At this context {concurrency_text(ratio)}x {fit} under "
                     f"{title_of(best)}: {why}.")
    return text


def start_up_log_text(r: StrategyResult) -> str:
    """What the start-up log lines under an engine's math are, and how older releases print
    them."""
    if r.strategy == "sglang":
        return sglang_start_up_log_text(r)
    text = f"{_log_lines_are(r)} {WARMUP_LOG_NOTE}."
    for left_out in r.extras.get("log_left_out", ()):
        text += f" {sentence_case(left_out)}."
    if r.extras.get("state_page_bytes") is not None:  # a state model: which mode it counts
        mode = r.extras["mamba_cache_mode"]
        if r.extras.get("mamba_cache_mode_asked") == "all":
            text += (" It counts mamba cache mode align: asked for all, vLLM runs this model in "
                     "align, as its first line says.")
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
    if r.logged_tokens is not None:
        text += f" Its scheduler then logs max_total_num_tokens={r.logged_tokens}"
        if (running := x.get("max_running_requests")) is not None:
            text += (f", max_running_requests={running} and context_len={r.context_tokens} "
                     "(without --max-running-requests, the context as its --context-length)")
        text += " beside figures not modelled here (chunked prefill, available memory)."
    if "kv" in pools:
        text += f" {OLDER_SGLANG_KV_LOG}"
    if "hybrid swa" in pools:
        text += f" {OLDER_SGLANG_SWA_LOG}"
    return text


def _log_lines_are(r: StrategyResult) -> str:
    """The opening of what an engine's start-up log lines under its math are."""
    return (f"{start_up_log_title(r.strategy)}, in a current release's words and number "
            "formats: set it beside yours line by line.")


def recent_vllm_help(changes: dict[str, object], architectures: tuple[str, ...] = (),
                     gpu: str = "", checkpoint_blocks: int | None = None) -> str:
    """What the "vLLM 0.34's defaults" button sets (``AppState.recent_vllm_changes``) for a
    model of ``architectures`` on ``gpu``, where vLLM 0.34 keeps ``checkpoint_blocks``
    (``AppState.vllm_checkpoint_blocks``: None, not known). A GDN model's checkpoint block
    depends on the GPU, so where it is not kept the help says where it would be."""
    gdn = bool(GDN_CHECKPOINT_CLASSES.intersection(architectures))
    checkpoint = (f"(vLLM 0.33 and later, for GDN layers, whose prefill runs on FlashInfer on "
                  f"the {gpu})" if gdn else "(vLLM 0.32 and later, for Mamba2 layers)")
    gdn_elsewhere = ""
    if gdn and checkpoint_blocks != 1:
        where = (f"not on the {gpu}" if checkpoint_blocks == 0
                 else "pick the GPU, or set Prefill checkpoint blocks to 1 for a log of one")
        gdn_elsewhere = (" vLLM 0.33 and later keep a prefill checkpoint block more for this "
                         "model's GDN layers on an H100 or H200, or a B200 with key heads of "
                         f"128 (CUDA 13), where their prefill runs on FlashInfer: {where}.")
    kept = ("1 prefill checkpoint block " + checkpoint
            if changes.get("prefill_checkpoint_blocks") else
            "no prefill checkpoint blocks (vLLM 0.34 keeps none for this model's state layers"
            + (f" on the {gpu})" if gdn else ")"))
    said = {"block_size": f"block size {changes.get('block_size')} (vLLM 0.34's default "
                          "--block-size)",
            "mamba_cache_mode": "mamba cache mode align (vLLM 0.28 and later start a hybrid "
                                "with prefix caching on)",
            "prefill_checkpoint_blocks": kept,
            "vllm_async_scheduling": "async scheduling (two batches in flight in the window "
                                     "pages, vLLM 0.26 and later)"}
    parts = [said[k] for k in changes]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    moves = (" The block size is the sidebar's: FlatKV's layouts and the others page by it "
             "too." if "block_size" in changes else "")
    return ("Sets " + listed + ", to match a log of vLLM 0.34 run with its defaults; the "
            "older defaults of the vLLM 0.19 log these figures are checked against are kept "
            "here until changed." + moves + gdn_elsewhere +
            " The budget stays: vLLM 0.34 "
            "on CUDA sizes its cache after warm-up, so pick \"vLLM KV cache blocks\" in the "
            "sidebar and give the N of its \"Memory after warmup: ... N KV cache blocks (X GiB) "
            "fit\" line (0.20 to 0.33: memory fraction 0.92).")


def logged_capacity_text(results: Sequence[StrategyResult]) -> str:
    """What the engines' own logs say, to check against a real log. vLLM's "GPU KV cache size"
    is max concurrency x max_model_len in current releases; 0.19 and earlier printed one page
    per P tokens in every group, state groups too. Empty when no engine logs one here."""
    parts = [f"{logged_as(r.strategy)}: {r.logged_tokens:,} tokens"
             for r in results
             if r.applies and r.logged_tokens is not None]
    if not parts:
        return ""
    text = "In the engines' logs: " + "; ".join(parts) + "."
    for r in results:
        if r.strategy == "vllm" and r.applies and r.older_logged_tokens is not None:
            text += (f" vLLM's line is max concurrency x max_model_len ({OLDER_VLLM_LOG}: "
                     f"{r.older_logged_tokens:,}, num_blocks // groups x min block size, "
                     f"{OLDER_VLLM_TELL}).")
        if (r.strategy == "vllm" and r.applies and "state_page_bytes" in r.extras
                and r.extras["mamba_cache_mode"] == "none"):
            text += f" These count mamba cache mode none: {ALIGN_BY_DEFAULT}."
    return text


# What a reviewer reads first comes first: a narrow window cuts the table from the right. The
# figures an engine's log prints (concurrency, its token count, P, blocks) lead; capacity, this
# tool's convention for every layout alike, follows them.
HEADLINE_COLUMNS = ("strategy", "concurrency", LOGGED_COLUMN, "P (tokens)", "blocks",
                    "capacity (tokens)", "block bytes")
# The two token columns count differently, and a reader meets them side by side: each says how
HEADLINE_HELP = {
    LOGGED_COLUMN: "What the engine itself logs, to set beside its log: vLLM's \"GPU KV cache "
                   "size\" (max concurrency x max_model_len), SGLang's max_total_num_tokens. "
                   "Our layouts log none.",
    "capacity (tokens)": f"This tool's count, alike for every layout: {CAPACITY_COUNTS} (every "
                         "attention group N pages of P tokens, each state group one request's "
                         "state pages); SGLang's full token pool. Not an engine's log line: see "
                         f"{LOGGED_COLUMN}.",
}


def breakdown_column(category: str) -> str:
    """``kv_history`` -> ``kv history (B)``: the chart legend's words, with the unit."""
    return f"{category.replace('_', ' ')} (B)"
