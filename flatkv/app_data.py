"""What the app's pages show of one plan and its sweeps, derived from a plan analysis or the
strategies' results: pure data, exact ints, no streamlit. The words beside the layouts'
figures (Compare's rows, notes, start-up logs) are ``flatkv.strategy_notes``'.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import islice

from flatkv import sizing
from flatkv.analysis import PlanAnalysis
from flatkv.budget import Budget, printed_range
from flatkv.models import past_max_model_len_text
from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
)
from flatkv.profile import WINDOWED, CacheProfile, group_name, pool_group_name
from flatkv.strategies import (
    StrategyOptions,
    StrategyResult,
    logged_as,
    run_strategy,
)
from flatkv.strategies.sglang import split_idle as sglang_split_idle
from flatkv.strategies.vllm import runs_all_as_align
from flatkv.strategies.vllm_log import format_gib, mamba_padding_percent
from flatkv.strategy_notes import STRATEGY_TITLES, title_of, why_not_text
from flatkv.units import (
    MAX_BYTES,
    MAX_TOKENS,
    and_text,
    concurrency_text,
    concurrency_value,
    count_text,
    exact_bytes,
    format_bytes,
    percent_text,
    sentence_case,
    tokens_text,
)
from flatkv.workload import (
    DEFAULT_SCHEDULED_TOKENS,
    PagePool,
    Workload,
    covers,
    group_pages,
    longest_context,
    max_requests,
    pool_from_plan,
)

# --------------------------------------------------------------------------------------------
# Component kinds: one colour and one name each, on every chart.


def component_kind(group_id: str, component: str, *, mla: bool = False) -> str:
    """``kv`` (full attention; ``kv_mla`` where it is MLA's latent, ``CacheProfile.mla``, so
    that the charts name it as the Model page does), ``kv_sliding``, ``kv_chunked``, ``conv``,
    ``ssm`` or ``state`` (other state)."""
    if component == "kv":
        return {SLIDING_ATTENTION: "kv_sliding", CHUNKED_ATTENTION: "kv_chunked"}.get(
            group_id, "kv_mla" if mla else "kv")
    return component if component in ("conv", "ssm") else "state"


INDEXER_KEYS = "indexer keys"  # DeepSeek-V3.2's indexer keys, drawn apart from the latent


def binding_parts(group_id: str, component: str, nbytes: int, *, indexer: int = 0,
                  mla: bool = False) -> list[tuple[str, str, int]]:
    """A group's component of ``nbytes`` as the charts draw it, (kind, component, bytes): its
    kind (``component_kind``), and a KV row that holds ``indexer`` bytes of DeepSeek-V3.2's
    indexer keys as two parts, the latent, then the keys. The plan packs both in one "kv"
    component; vLLM keeps the keys in a tensor of their own. Layout's page rows, vLLM's
    blocks and the bytes icicle all split it here, so that they name the parts alike."""
    kind = component_kind(group_id, component, mla=mla)
    if component != "kv" or not indexer:
        return [(kind, component, nbytes)]
    return [(kind, "kv", nbytes - indexer), ("indexer", INDEXER_KEYS, indexer)]


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
    dead_share_by_group: tuple[tuple[str, Fraction], ...]  # exact: shown by percent_text
    page_row_bytes: int  # the widest row at P, what a uniform page pads every row to
    state_row_bytes: int  # the widest state (constant) row; 0 without state

    @property
    def padding_share(self) -> Fraction:
        """Share of a uniform-page block that would be padding (packed slabs allocate none),
        exact, so that ``percent_text`` tells a few bytes of it from none."""
        padded = self.block_bytes + self.uniform_padding_per_block
        return Fraction(self.uniform_padding_per_block, padded) if padded else Fraction(0)

    @property
    def state_row_padding(self) -> Fraction | None:
        """What padding the state row to the page row adds, as a share of the state row, counted
        as vLLM logs it ("Padding mamba page size by 1.49% ..."; the same figure when vLLM's P
        is this plan's P). None without state."""
        if not self.state_row_bytes:
            return None
        return Fraction(self.page_row_bytes - self.state_row_bytes, self.state_row_bytes)


def block_size_note(block_size: int, requested: int, has_attention: bool) -> str | None:
    """What the P metric says under it (Layout, GPU lab): that a state-only model's P is
    nominal, its pages holding no tokens; else the size asked where a state row inflated it."""
    if not has_attention:
        return "nominal: no token history"
    return f"requested {requested:,}" if block_size != requested else None


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
    mla: bool = False  # the profile's ``CacheProfile.mla``: its full group named so

    @property
    def end(self) -> int:
        return self.offset + self.nbytes

    @property
    def holder(self) -> str:
        """Whose bytes these are, as the hover names them: ``full attention #4 (cache layer
        19)``, or a padding layer's page; the group by its kind as Layout names it
        (``group_name``), not the planner's ``full_attention``."""
        group = group_name(self.group_id, mla=self.mla)
        if self.layer is None:
            return f"a padding layer of {group}"
        where = "" if self.cache_layer is None else f" (cache layer {self.cache_layer})"
        return f"{group} #{self.layer}{where}"


def layout_segments(analysis: PlanAnalysis, *, uniform: bool = False,
                    layer_types: Sequence[str] = (),
                    indexer_bytes_per_slot: int = 0, mla: bool = False) -> list[Segment]:
    """Segments of every slot row, in slot order.

    ``uniform=False`` is the plan as allocated (packed slabs: rows side by side, no padding).
    ``uniform=True`` draws each row padded to the page row, as a uniform-page engine (vLLM) lays
    it out: row k of a slot starts at ``k * page_row`` and its padding is a segment of its own.
    ``layer_types`` (the profile's) names each binding's cache layer, as the Model page counts
    them: a group's layer j is the j-th layer of its label. ``indexer_bytes_per_slot`` (the
    profile's, DeepSeek-V3.2's 132 B): the part of each KV binding that is indexer keys, drawn
    as a segment of its own after the latent's, as vLLM's blocks draw their own indexer layer
    (the plan packs both in one "kv" component, the bytes a token an engine keeps for it).
    ``mla`` (the profile's ``CacheProfile.mla``): the KV is MLA's latent, named so.
    """
    indexer = analysis.plan.geometry.block_size * indexer_bytes_per_slot
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
                parts = binding_parts(b.group_id, b.component, b.nbytes_per_block,
                                      indexer=indexer, mla=mla)
                offset = start + b.row_offset
                for kind, component, nbytes in parts:
                    out.append(Segment(s.slot, s.name, kind, b.group_id, b.layer, component,
                                       offset, nbytes, cache_layer(b.group_id, b.layer), mla))
                    offset += nbytes
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
                        mla,
                    )
                )
    return out


def uniform_padding_text(analysis: PlanAnalysis, *, mla: bool = False,
                         drawn: bool = False) -> str | None:
    """What drawing the rows padded to the page row adds, in exact bytes, for the Layout page's
    toggle: which rows are padded (their group as the pages name its kind, ``group_name``;
    ``mla``: the profile's) and by how much, the padding a block and its share of the padded
    block (the headline's "Uniform pages pad the block"), worded by whether the chart is
    ``drawn`` padded (the toggle on) or as packed slabs allocate it (it said "Padded to" beside
    an unpadded chart). None where no row is narrower than the page row (every row is one size:
    Llama-3.1-8B, gpt-oss-20b), so the toggle would draw nothing new."""
    h = headline(analysis)
    if not h.uniform_padding_per_block:
        return None
    padded: dict[tuple[str, int, int], int] = {}  # (group, row bytes, padding) -> rows
    for s in analysis.slots:
        for row in s.rows:
            if row.padding_bytes:
                key = (row.group_id, row.used_bytes, row.padding_bytes)
                padded[key] = padded.get(key, 0) + 1
    which = "; ".join(f"{count_text(n, f'{group_name(group, mla=mla)} row')} of {used:,} B, "
                      f"padded by {pad:,} B each" for (group, used, pad), n in padded.items())
    block = h.block_bytes + h.uniform_padding_per_block
    # under 1% of a row, the hatched end is a pixel or two wide: say where to find it
    widest = max(pad for _, _, pad in padded)
    sliver = ("; under 1% of a row, a sliver at this scale (hover a row's end for its bytes)"
              if widest * 100 < h.page_row_bytes else "")
    to_row = f"the {h.page_row_bytes:,} B page row at P {h.block_size:,}: {which}."
    opening = (f"Padded to {to_row}" if drawn else "Drawn unpadded, as packed slabs allocate "
               f"the rows; the toggle pads them to {to_row}")
    return (f"{opening} {exact_bytes(h.uniform_padding_per_block)} a block, "
            f"{percent_text(h.padding_share)} of the padded block of {block:,} B{sliver}.")


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
    if "ssm_bytes" in extras:  # the ssm state in vLLM's dtype, where not the profile's
        state_parts["ssm"] = extras["ssm_bytes"]
    if profile.has_state and sum(state_parts.values()) != extras["state_page_bytes"]:
        raise ValueError(f"state parts {state_parts} do not add up to vLLM's state page "
                         f"{extras['state_page_bytes']:,} B (an accounting bug)")
    of_kind = {kind: sum(g["kind"] == kind for g in groups) for kind in kinds}
    seen = dict.fromkeys(kinds, 0)  # groups of each kind met so far: this one's index i
    out: list[Segment] = []
    mla = profile.mla
    for row, group in enumerate(groups):
        kind = group["kind"]
        index, seen[kind] = seen[kind], seen[kind] + 1
        # a row by its kind as Layout names it, and its index where the kind makes several
        # groups ("state 1"), not vLLM's result's id ("linear_attention.1", the JSON's)
        name = pool_group_name(group["name"], kind, mla=mla)
        if kind == LINEAR_ATTENTION:
            parts = [(component_kind(kind, c), c, nbytes) for c, nbytes in state_parts.items()]
        else:  # DeepSeek-V3.2's indexer keys: a cache of their own beside the latent's
            indexer = result.block_size * (profile.indexer_bytes_per_slot or 0)
            # a kind's own history bytes where its page is padded to a larger kind's
            history = extras.get("kind_history_bytes", {}).get(kind,
                                                               extras["attention_page_bytes"])
            parts = binding_parts(kind, "kv", history, indexer=indexer, mla=profile.mla)
        for j in range(size):
            start = starts[j]
            if j >= group["layers"]:
                out.append(Segment(row, name, "padding_layer", kind, None, "its whole page",
                                   start, page, mla=mla))
                continue
            layer = index + j * of_kind[kind]
            cache = where[kind][layer]
            if "layer_page_bytes" in extras:  # each layer's history fills its own page
                parts = [(component_kind(kind, "kv", mla=profile.mla), "kv", pages[j])]
            for part_kind, component, nbytes in parts:
                out.append(Segment(row, name, part_kind, kind, layer, component, start, nbytes,
                                   cache, mla))
                start += nbytes
            if start < starts[j + 1]:
                out.append(Segment(row, name, "padding", kind, layer, "padding",
                                   start, starts[j + 1] - start, cache, mla))
    return out


def vllm_block_text(result: StrategyResult, profile: CacheProfile,
                    analysis: PlanAnalysis) -> str:
    """What ``vllm_block_segments`` draws, in figures, beside one block id of our plan."""
    extras = result.extras
    page, size, groups = extras["page_bytes"], extras["group_size"], extras["groups"]
    padding = [f"{group_name(kind, mla=profile.mla)}: {count_text(n_pad, 'padding layer')}"
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
        # a share of the state page's own bytes, as vLLM logs it: beside ours "of the padded
        # block" (Jamba-1.5-Mini's 5.26% and 4.38%) each says what it is a share of
        state_pad = (f" State pages ({sized:,} B) are padded to the page by "
                     f"{mamba_padding_percent(page, sized):.2f}% of their size (\"Padding mamba "
                     "page size\")"
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
        p += " (" + ", ".join(f"{group_name(kind, mla=profile.mla)} {size:,}"
                              for kind, size in scaled.items()) + (
            ": its layers keep fewer bytes a token, so their page of the same bytes holds more "
            "tokens)")
    # a block's bytes a token at P: not one figure where some groups' blocks hold more tokens
    theirs = (f", {_per_token(result.block_bytes, result.block_size)}"
              if tokens and not scaled else "")
    ours_per = (f", {_per_token(ours.block_bytes, ours.block_size)}) at P {ours.block_size:,}"
                if tokens else ")")
    return (
        f"vLLM at these settings (Compare's row): {p}, {tensors}. A block id is "
        f"{count_text(size, 'page')}, {result.block_bytes:,} B "
        f"({format_bytes(result.block_bytes)}{theirs}), and {holds}." + state_pad
        + (f" Groups short of {size:,} layers keep whole pages for padding layers "
           f"({'; '.join(padding)})." if padding else "")
        + f" Our block above: {ours.block_bytes:,} B ({format_bytes(ours.block_bytes)}"
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


def dead_weight_rows(analysis: PlanAnalysis, *, mla: bool = False) -> list[dict]:
    """Layout's table of dead weight, a group a row, under the CLI's headers (``plan``'s table):
    bytes a block id holds for its owner and for no one, and the dead share. Short headers: at
    1000 px the five columns fit the main column, the dead share in view. A group by its kind,
    as the page's metrics name it (``group_name``; ``mla``: the profile's)."""
    return [{"group": group_name(g.group_id, mla=mla), "layers": g.num_layers,
             "used B/block": g.used_bytes_per_block,
             "dead B/block": g.dead_bytes_per_block,
             "dead share": percent_text(g.dead_share)}
            for g in analysis.groups]


DEAD_WEIGHT_HELP = {
    "dead B/block": "Bytes of a block id this group owns that sit in the other groups' rows: "
                    "allocated, holding nothing while this group owns it (used B/block: its "
                    "own rows).",
}


def bytes_tree(analysis: PlanAnalysis, *, indexer_bytes_per_slot: int = 0,
               mla: bool = False) -> list[TreeNode]:
    """Budget -> group -> component -> layer, plus reserved and unused; sums are exact.

    Components sit above layers so the top levels stay readable for models with 100+ layers
    (kv of all full-attention layers, ssm of all state layers); one layer is a click deeper.
    The components are those the page rows draw (``kv_parts``): DeepSeek-V3.2's indexer keys
    (``indexer_bytes_per_slot``, the profile's) apart from the latent, where they were folded
    into "kv"; ``mla`` names the KV as MLA's latent (``CacheProfile.mla``). A group's tile is
    named by its kind and "rows" (``group_name``: "full attention (MLA) rows"), its id the
    planner's: its rows in every block, whichever group owns it, where Compare's "state in use"
    (``CATEGORY_LABELS``) counts the pages a group owns.
    """
    n = analysis.totals.num_blocks
    indexer = analysis.plan.geometry.block_size * indexer_bytes_per_slot
    leaves: dict[str, dict[tuple[str, str], list[tuple[int, int]]]] = {}
    for s in analysis.slots:
        for row in s.rows:
            comps = leaves.setdefault(row.group_id, {})
            for b in row.bindings:
                for kind, comp, nbytes in binding_parts(row.group_id, b.component,
                                                        b.nbytes_per_block, indexer=indexer,
                                                        mla=mla):
                    comps.setdefault((comp, kind), []).append((row.layer, nbytes * n))
    nodes = [TreeNode("budget", "", "budget", analysis.totals.budget_bytes, "budget")]
    for gid, comps in leaves.items():
        nodes.append(TreeNode(gid, "budget", f"{group_name(gid, mla=mla)} rows",
                              sum(v for c in comps.values() for _, v in c), "group"))
        for (comp, kind), layers in comps.items():
            cid = f"{gid}/{comp}"
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
    # where not even one request fits: the longest context the map's requests fit at (one
    # request's where they fit at none; at most the context field's largest; 0 if none), which
    # the page offers (unsought where ``page_assignment`` is told not to offer it); None
    # otherwise; and how many requests fit at it
    longest_context: int | None = None
    longest_requests: int = 1


def _longest_context(pool: PagePool, requests: int, **workload) -> tuple[int, int]:
    """The longest context at which ``requests`` requests fit and that count, so that the
    page's button leads to a map of the requests typed (one request's, 4 x longer for
    Llama-4-Scout's 4, warned again there); one request's where that many fit at no length."""
    if requests > 1 and (longest := longest_context(pool, limit=MAX_TOKENS, requests=requests,
                                                    **workload)):
        return longest, requests
    return longest_context(pool, limit=MAX_TOKENS, **workload), 1


# The longest context each page offers where not even one request fits, named apart: they
# answer two questions, by the two counts of a request's pages (ARCHITECTURE.md), so they differ
# (Llama-4-Scout on the default H100: 375,024 tokens on Layout, 375,088 on Budget, the 4 pages
# of the former's dummy page and last page in each of its 2 groups).
LONGEST_BY = {
    "map": ("the longest context at which the map's workload fits the page ids (SPEC 3.5, which "
            "adds a dummy page a group and a page a request for its last page and counts one "
            "step's tokens apart; state pages as the map counts them, by mamba cache mode or "
            "with a snapshot every P tokens)"),
    "concurrency": ("the longest context at which the concurrency reaches one request (the "
                    "engine's pages a request, SPEC 3.1, state pages by mamba cache mode)"),
}
LONGEST_PAGE = {"map": "Layout", "concurrency": "Budget"}


def longest_context_label(longest: int, by: str, requests: int = 1) -> str:
    """The button that sets the ``longest`` context by ``by``'s count (``LONGEST_BY``), worded
    so that Layout's ("whose pages fit") and Budget's ("at concurrency 1") are told apart;
    ``requests``: how many Layout's is the longest for, said where more than one."""
    if by == "concurrency":
        return f"Use the longest context at concurrency 1 ({longest:,} tokens)"
    fit = "whose pages fit" if requests == 1 else f"{requests:,} requests' pages fit"
    return f"Use the longest context {fit} ({longest:,} tokens)"


def longest_context_help(by: str, other: int | None, context: int) -> str:
    """The help of a page's longest-context button: the rule it counts by (``LONGEST_BY``), and
    what the other page counts and offers for one request (``other``: its longest under
    ``context``, or at least ``context`` where that page holds a request of the context; None
    where the other page does not draw this layout), so a reader comparing the pages sees why
    they differ."""
    text = f"{sentence_case(LONGEST_BY[by])}."
    if other is None:
        return text
    (other_by,) = set(LONGEST_BY) - {by}
    page = LONGEST_PAGE[other_by]
    return text + (f" {page} counts {LONGEST_BY[other_by]}, " + (
        f"and holds one request of {tokens_text(context)} by it." if other >= context
        else f"and offers {other:,} tokens by it for one request."))


def _page_run(index: int, group_id: str, pages: int) -> Iterator[tuple[float, int, str]]:
    """Group ``group_id``'s pages as (position in the run, group index, group id), in order."""
    return (((2 * k + 1) / (2 * pages), index, group_id) for k in range(pages))


def page_assignment(
    analysis: PlanAnalysis, *, requests: int, context: int, sliding_window: int | None = None,
    attention_chunk_size: int | None = None, scheduled_tokens: int = DEFAULT_SCHEDULED_TOKENS,
    speculative_tokens: int = 0, state_mode: str | None = None, checkpoint_blocks: int = 0,
    limit: int = 4096, offer_longest: bool = True,
) -> PageMap:
    """The pages each group needs for ``requests`` at ``context`` with ``scheduled_tokens`` per
    step and ``speculative_tokens`` drafted (SPEC 3.5, through ``flatkv.workload``; state by
    ``state_mode``, None for prefix-caching snapshots, and ``checkpoint_blocks``), handed out
    from one page-id space as the requests grow: the groups' pages interleave in proportion, so
    every id belongs to exactly one group at a time. At most ``limit`` ids are listed.
    ``offer_longest`` False leaves the longest context unsought (a search over the context),
    for a map ``live_pages`` throws away where not even one request fits."""
    pool = pool_from_plan(analysis.plan, sliding_window=sliding_window,
                          attention_chunk_size=attention_chunk_size)
    rest = {"scheduled_tokens": scheduled_tokens, "speculative_tokens": speculative_tokens,
            "state_mode": state_mode, "checkpoint_blocks": checkpoint_blocks}
    work = Workload(requests, context, **rest)
    per_group = group_pages(pool, work)
    shown = min(pool.num_units, limit)
    # k-th page of group g lands at fraction (k + 1/2) / n_g of the run: a proportional merge.
    # Each group's run is already in order, so a lazy merge yields the first ids without
    # listing every page (a link may ask for 4,096 requests of 2**40 tokens: up to 10^14 pages).
    runs = [_page_run(i, gid, n) for i, (gid, n) in enumerate(per_group.items())]
    owners: list[str | None] = [gid for _, _, gid in islice(heapq.merge(*runs), shown)]
    owners += [None] * (shown - len(owners))
    fits = covers(pool, work)
    most = None if fits else max_requests(pool, context_tokens=context, **rest)
    longest, held = (None, 1) if most != 0 or not offer_longest else _longest_context(
        pool, requests, **rest)
    return PageMap(pool.num_units, tuple(owners), per_group, fits, most, longest, held)


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
    ``page_assignment``'s arguments. Until requests are typed the first map is drawn only where
    they fit, which leaves it no longest context to seek."""
    pages = page_assignment(analysis, requests=requested or default,
                            offer_longest=requested is not None, **workload)
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


def _windowed_step_text(profile: CacheProfile, concurrency: float | None,
                        scheduled_tokens: int, held: int | None) -> str:
    """Why a sliding (or chunked) model's workload holds more requests than the concurrency
    at the top of Layout, Budget and Compare: that one is vLLM's "Maximum concurrency", which
    charges every request a whole step of scheduled tokens in each window (``request_pages``),
    while the workload charges one step's tokens once, for all requests together (SPEC 3.5).
    Empty without windowed layers, or where the workload (``held`` requests: those it fits,
    or those drawn) holds no more than that concurrency."""
    if (concurrency is None or not profile.windowed_labels or held is None
            or held <= concurrency):
        return ""
    nouns = " and ".join(f"{WINDOWED[label].noun} of {profile.window(label):,} tokens"
                         for label in profile.windowed_labels)
    return (f"The {concurrency_text(concurrency)} requests at the top of the page (and on "
            "Budget and Compare) count as vLLM's \"Maximum concurrency\" does: each request "
            f"is charged its {nouns} plus a whole step of {scheduled_tokens:,} scheduled "
            "tokens (at most its context), as though every request were in its prefill step at "
            "once. This workload charges the step's tokens once, for all requests together, so "
            "it can hold more requests.")


def workload_text(pages: PageMap, profile: CacheProfile, *, context: int, mamba_cache_mode: str,
                  concurrency: float | None, speculative_tokens: int = 0,
                  checkpoint_blocks: int = 0, cut: tuple[int, int] | None = None,
                  scheduled_tokens: int = DEFAULT_SCHEDULED_TOKENS,
                  requests: int | None = None, snapshots: bool = True) -> str:
    """What the Layout page's workload needs of the pool (SPEC 3.5), and how it charges state:
    with ``snapshots``, prefix-cache snapshots, where Budget and Compare count the mode's state
    pages, so both figures are given; without, the mode's pages, as they do. Then whether it
    fits. ``cut``: the default
    requests and the fewer drawn where those did not fit (said first, as a refusal is);
    ``requests``: those the map draws; each group named as the pages name its kind
    (``group_name``). One paragraph each: what to act on, the pages counted,
    how state is charged, and why a sliding model's workload holds more requests than the
    concurrency at the top of the page."""
    per = ", ".join(f"{group_name(g, mla=profile.mla)}: {n:,}"
                    for g, n in pages.per_group.items())
    # a windowed group by its own name and span: Llama 4's chunked group keeps chunk pages
    windowed = [WINDOWED[label] for label in profile.windowed_labels]
    drafted = " and drafted tokens' pages" if speculative_tokens and profile.has_state else ""
    kept = ("history" if not profile.has_state else
             f"history, live state and snapshots{drafted}" if snapshots else
             f"history, the mode's state pages{drafted}")
    text = (f"Pages the groups need ({kept}, one dummy page each): {per}; "
            f"{pages.num_blocks:,} page ids in the pool. A full-history group's count is all "
            "requests' tokens over P, rounded up, and a page more a request for its last "
            "page (SPEC 3.5): part-filled, or, where its context fills its pages exactly, a "
            "new one for its next step's token"
            # the sliding count only beside a windowed group (it was said of DeepSeek-V3's)
            + (f"; a {' or '.join(w.name for w in windowed)} group's, each request's "
               f"{' or '.join(w.noun for w in windowed)} pages and one step's tokens."
               if windowed else "."))
    mode = mamba_mode_text(mamba_cache_mode, checkpoint_blocks)
    drafted_more = (f" and {speculative_tokens} more for drafted tokens" if speculative_tokens
                    else "")
    # a model vLLM runs in align when asked for all: FlatKV's layouts count all, its log align
    aligning = mamba_cache_mode == "all" and profile.has_state and runs_all_as_align(profile)
    if profile.has_state and not snapshots:
        held = ("" if concurrency is None else
                f" The {concurrency_text(concurrency)} requests at the top of the page count "
                "these pages without the map's dummy pages and its page more a request.")
        whose = ("as the engine's log, Budget and Compare count it" if not aligning else
                 f"as Budget's and Compare's FlatKV layouts count it (vLLM runs {aligning} in "
                 "align when asked for all: its log counts align's state pages)")
        # mode all keeps a snapshot every P tokens itself: the other count is SPEC 3.5's
        other = ("With state prefix caching (\"State pages\" above), a request also keeps a "
                 "snapshot every P tokens." if mamba_cache_mode != "all" else
                 "\"State pages\" above counts state as SPEC 3.5 does instead: two live pages "
                 "a request and a snapshot every P tokens.")
        text += (f"\n\nState is charged by mamba cache mode, {whose}: {mode}{drafted_more} per "
                 f"request, and a dummy page.{held} {other}")
    elif profile.has_state:
        held = ("" if concurrency is None else
                f", and hold {concurrency_text(concurrency)} requests of {tokens_text(context)}")
        text += ("\n\nState is charged as with state prefix caching: two live pages per request "
                 "plus a snapshot every P tokens (at most the full-history group's count)"
                 + (f", and {speculative_tokens} more per request for drafted tokens"
                    if speculative_tokens else "")
                 + ". Budget and Compare count the state pages of "
                 f"mamba cache mode {mode}{drafted_more} per request, "
                 + ("as the engine's log does" if not aligning else
                    f"where vLLM's log counts align's (it runs {aligning} in align)")
                 + f"{held}: \"State pages\" above draws that count.")
    held = pages.max_requests if not pages.fits else requests
    if windowed := _windowed_step_text(profile, concurrency, scheduled_tokens, held):
        text += f"\n\n{windowed}"
    state_differs = profile.has_state and snapshots
    charged = " with its state snapshots" if state_differs else ""
    # what the concurrency at the top counts otherwise than this workload
    differs = ("the state pages" if state_differs else
               "a step in every " + " and ".join(WINDOWED[label].noun
                                                 for label in profile.windowed_labels))
    counted = ("" if concurrency is None or not (state_differs or windowed) else
               f" (Budget's and Compare's {concurrency_text(concurrency)} count {differs} as "
               "the engine's log does: the last paragraph here)")
    if pages.fits and cut is not None:  # said first: why the map draws fewer
        default, drawn = cut
        # two counts of requests on one page: each named by what it counts
        top = ("" if concurrency is None or not (state_differs or windowed) else
               f" The {concurrency_text(concurrency)} requests at the top of the page count "
               f"{differs} as the engine's log does (the last paragraph here).")
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
                       fallback: int, assumed: bool = False) -> str | None:
    """The context set (None: the model's) beside the one vLLM serves the model at unless told
    (its --max-model-len default, from the config: its log's "Maximum concurrency for N tokens
    per request" is at that N); None where the pages count at the model's own or at a typed
    one for a model of unknown length. With neither, the pages count at ``fallback``, an
    assumption every figure rests on, so the text says so. ``assumed``: max_model_len is the
    2,048 vLLM assumes for a config without a length (the model's note says so)."""
    if context is None and max_model_len is None:
        return (f"No max_model_len is known for this model, so the pages count at {fallback:,} "
                "tokens, an assumption: type the context you serve at (vLLM's log names it "
                "in \"Maximum concurrency for N tokens per request\").")
    if context is None or max_model_len is None or context == max_model_len:
        return None
    if context > max_model_len:
        return sentence_case(past_max_model_len_text(max_model_len,
                                                     code=lambda flag: f"`{flag}`",
                                                     assumed=assumed)) + "."
    whence = "assumed for a config with no length" if assumed else "from the config"
    return (f"vLLM serves this model at {max_model_len:,} tokens unless told: its default "
            f"`--max-model-len`, {whence}, and the length its log gives the maximum "
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
                    f"{format_bytes(shared)} ({percent_text(shared, r.budget_bytes)} of the "
                    "budget) sit idle at any request count.")
    if parts := sglang_split_idle(r):
        idle = sum(nbytes for _, nbytes in parts)
        whose = "Its" if said else "SGLang's"
        said.append(
            f"{whose} idle pool: with "
            f"{count_text(int(r.concurrency), 'request')} of {tokens_text(r.context_tokens)} "
            "running, " + " and ".join(f"{format_bytes(nbytes)} of its {what}" + (
                f" ({r.extras['idle_swa_tokens_at_context']:,} tokens)"
                if what == "sliding pool" else "") for what, nbytes in parts)
            + f" sit idle ({percent_text(idle, r.budget_bytes)} of the budget), left so by its "
            "static split; a paged layout's idle rows are its dead weight.")
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
    # why there is no figure, as Compare words it (``why_not_text``): the sweep's gaps say it
    why_not: str = field(default="", compare=False)

    @classmethod
    def of(cls, r: StrategyResult) -> CurvePoint:
        if not r.applies:
            return cls(None, None, None, why_not_text(r))
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
        x = sglang.extras
        running = x.get("max_running_requests")
        if x.get("sglang_draft_tokens") and running is not None and running < cap:
            # drafting: its buffers are reserved for max_running_requests (told, or the hook's
            # 48), which caps the line below the state pool's cap
            text += (f" SGLang's line is flat at {running:,} running requests whatever their "
                     "length: its max_running_requests, the requests it reserves draft-token "
                     f"buffers for (its {x['request_state_slots']:,} request slots, "
                     f"{x['slots_per_request']} a request, would hold {cap:,}).")
        else:
            text += (f" SGLang's line is flat where its state pool binds: {cap:,} running "
                     f"requests ({x['request_state_slots']:,} request slots, "
                     f"{x['slots_per_request']} a request) whatever their length"
                     + (", its max_running_requests." if running in (None, cap) else
                        f"; it logs max_running_requests={running}, a cap on the requests it "
                        "runs that leaves its pools as they are."))
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
    """A budget typed from a log line is rounded to 0.01 GiB (printed as vLLM prints it, 40.0
    GiB, so a reader finds it in the log): what the layout's figures are
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
    text = (f"A log prints this memory to 0.01 GiB ({format_gib(cache_bytes)} GiB, as vLLM "
            f"prints it), so the budget is any of {low.budget_bytes:,} to "
            f"{high.budget_bytes:,} B")
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


# the requested block size, as the sidebar names it; the Budget chart's x axis says the same
SWEEP_BLOCK_COLUMN = "block size (tokens)"
# ... and the chart's x axis, which has room to say it is the size asked, not P (a state
# hybrid's curve is flat over the sizes its P outgrows: block_size_floor_text)
SWEEP_BLOCK_AXIS = "requested block size (tokens)"


def block_size_sweep_rows(curves: Curves, has_history: bool) -> list[dict]:
    """The Budget page's block-size sweep as table rows (capacity left out without history;
    a gap where the layout has no figure at that block size). Each size headed by its unit,
    as the chart's axis and Compare's "P (tokens)": a bare "P" of a state hybrid (544) could
    read as bytes or pages beside a capacity in tokens. The headers keep the table inside an
    expander at 1000 px ("requested block (tokens)" pushed concurrency 12 px past its edge)."""
    return [{SWEEP_BLOCK_COLUMN: size, "P (tokens)": p.block_size,
             **({"capacity (tokens)": p.capacity_tokens} if has_history else {}),
             "concurrency": None if p.concurrency is None else concurrency_value(p.concurrency)}
            for size, p in zip(curves.block_sizes, curves.by_block_size, strict=True)]


def block_size_floor_text(curves: Curves, has_state: bool) -> str:
    """Why the block-size sweep moves at its small sizes only as P does, where P outgrows the
    size asked: the least P the sweep reaches, whether each P is a multiple of the size asked,
    and P at the sizes under that least (Qwen3-Next TP2's packed slabs: 536 at sizes 1 to 8, a state
    row of 548,864 B over 1,024 B a token, then 544 at 16 and 32, 576 at 64; vLLM's 544 at 16
    and 32, 576, 640, 768, its concurrency 23.74x, 23.74x, 23.69x, 23.70x, 23.64x) and what a
    large P costs (SPEC 3.1). Empty where the smallest size swept is its own P (the LCM pages'
    P outgrows 1,024 alone, no floor)."""
    points = [(size, p) for size, p in zip(curves.block_sizes, curves.by_block_size,
                                           strict=True) if p.block_size is not None]
    sizes = [(size, p.block_size) for size, p in points]
    if not sizes or sizes[0][1] <= sizes[0][0]:
        return ""
    floor = min(p for _, p in sizes)
    why = ("a state row outgrows smaller pages" if has_state
           else "the engine pages by a size of its own")
    multiple = (", a multiple of the size asked" if all(p % size == 0 for size, p in sizes)
                else "")
    steps = []  # P by the sizes under the floor, the sizes of one P together
    for size, p in sizes:
        if size < floor:
            if steps and steps[-1][0] == p:
                steps[-1][1].append(size)
            else:
                steps.append((p, [size]))
    said = "; ".join(f"{p:,} at {_sizes_text(at)}" for p, at in steps)
    # said only where the sweep shows it: one P, one concurrency
    by_p = {p.block_size: p.concurrency for _, p in points}
    as_p = ("; the curve moves only as P does" if all(
        by_p[p.block_size] == p.concurrency for _, p in points) else "")
    return (f"The x axis is the block size asked; P, the tokens a page ends up with, is never "
            f"under {floor:,} here (P >= {floor:,}: {why}){multiple}: {said} (the sweep's "
            f"table gives P at each size){as_p}. A large P has costs these figures leave out "
            "(SPEC 3.1): "
            "prefix-cache hits come in whole pages of P tokens, and kernels that want "
            "P <= 128 break.")


def block_size_gaps_text(curves: Curves) -> str:
    """Why the block-size sweep has no figure at some sizes (a gap in its curve, "—" in its
    table), which the chart alone leaves unsaid: the sizes, a run of the sweep's neighbours
    refused alike together, and each run's reason at its largest size (vLLM v1 on gpt-oss-20b:
    none at 1 to 8, as its attention backend pages by multiples of 16 tokens; on Qwen3-Next TP 2
    in 3.1 GiB none at 4,096 too, where one request no longer fits). Neighbours refused for
    another reason start a run of their own (``_why_kind``): in 2 GiB every size of Qwen3-Next
    TP 2 fails, 1 to 8 on the backend's pages and 16 to 4,096 on the request, and one run of
    1 to 4,096 gave the request's reason alone, as if the backend took 1 to 8. Empty where
    every size has its figures."""
    runs: list[list[tuple[int, str]]] = []  # (size, why not) of neighbours refused alike
    kind = None  # the refusal's kind at the size before (None: it has its figures)
    for size, p in zip(curves.block_sizes, curves.by_block_size, strict=True):
        before, kind = kind, _why_kind(p.why_not) if p.why_not else None
        if kind is not None:
            if kind == before:
                runs[-1].append((size, p.why_not))
            else:
                runs.append([(size, p.why_not)])
    if not runs:
        return ""
    many = len(runs) > 1 or len(runs[0]) > 1
    why = " ".join(f"At {run[-1][0]:,}: {run[-1][1].rstrip('.')}." for run in runs)
    # "1 to 8, 16 to 2,048 and 4,096"
    sizes_said = and_text([_sizes_text([size for size, _ in run]) for run in runs])
    return f"No figure at block size{'s' if many else ''} {sizes_said} (the table's —). {why}"


def _why_kind(why_not: str) -> str:
    """A refusal's kind: its words before its first figure ("refuses to start: one request of"
    at every size a request outgrows the budget, whatever its bytes; "... its attention
    backend pages by multiples of" where the backend refuses the size). A figure is a number
    standing alone: the 1 of "vLLM v1" is part of a name."""
    return re.split(r"(?<!\w)\d", why_not, maxsplit=1)[0]


def _sizes_text(sizes: list[int]) -> str:
    """Block sizes as the floor's words list them: "64", "16 and 32", "1 to 8"."""
    if len(sizes) == 1:
        return f"{sizes[0]:,}"
    return f"{sizes[0]:,} {'and' if len(sizes) == 2 else 'to'} {sizes[-1]:,}"


def vllm_blocks_sweep_text(budget: Budget, block_size: int) -> str:
    """Which budget the block-size sweep holds where it is given as vLLM's blocks: the sweep
    keeps this budget's bytes (N blocks of vLLM's block at the sidebar's block size) at every
    size, while the CLI's ``--vllm-blocks N --block-size b`` works out a new budget at each b
    (N of vLLM's blocks at b's bytes, ``given_cli.with_vllm_blocks``): the two read alike and
    part at any other size. Empty for a budget given otherwise, whose bytes both hold."""
    if budget.vllm_blocks is None:
        return ""
    n = budget.vllm_blocks
    return (f"The sweep holds this budget's bytes at every block size: {n:,} vLLM blocks x "
            f"{budget.cache_bytes // n:,} B at block size {block_size:,} = "
            f"{budget.cache_bytes:,} B ({format_bytes(budget.cache_bytes)}). The command "
            f"line's `--vllm-blocks {n} --block-size b` works out a new budget at each b "
            f"instead: {n:,} vLLM blocks of that size's bytes.")


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
