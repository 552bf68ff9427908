"""Layout page: the page-row layout of the current plan and vLLM's blocks beside it, why P is
P, where bytes go, and which page ids a workload gives each group."""

from __future__ import annotations

import streamlit as st

from app_pages._figures import (
    current_analysis,
    current_strategies,
    longest_by_concurrency,
    plan_caption,
    speculative_note,
)
from app_pages._frame import CACHE_BUDGET, NOT_APPLICABLE, chart, metric_row, table
from app_pages._session import ERRORS_KEY, bind, link_notice, state, update, user_errors
from app_pages._widgets import (
    COMPARE_BUTTON,
    context_note,
    context_widget,
    engine_widget,
    longest_context_button,
    options_text,
    state_group_note,
)
from flatkv import app_data, charts, strategy_notes
from flatkv.analysis import PLANNER_STRATEGY, plan_json
from flatkv.app_state import DEFAULT_REQUESTS, MAX_REQUESTS
from flatkv.profile import group_name
from flatkv.strategies import StrategyResult, last_served_text
from flatkv.units import (
    count_text,
    format_bytes,
    percent_text,
    quoted,
    sentence_case,
    tokens_text,
)


def headline(analysis, ours: StrategyResult, engines: list[StrategyResult]) -> None:
    h = app_data.headline(analysis)
    c = metric_row("plan")
    c.metric("P (tokens per page)", f"{h.block_size:,}",
             delta=app_data.block_size_note(h.block_size, h.requested_block_size,
                                            state().profile().has_attention),
             delta_color="off", delta_arrow="off")
    c.metric("Block bytes", format_bytes(h.block_bytes), help=f"{h.block_bytes:,} B")
    capacity = ours.capacity_tokens if ours.applies else None
    # the token slots under Blocks (num_blocks x P), not under the capacity beside a window's
    # note: the two in one chip took two cells, and left Blocks alone on a line beside a hole
    c.metric("Blocks", f"{h.num_blocks:,}",
             delta=(f"token slots {h.token_slots:,} (blocks x P)"
                    if capacity is not None and capacity != h.token_slots else None),
             delta_color="off", delta_arrow="off")
    if capacity is not None:  # the figure Budget and Compare give, the token slots beside it
        # windowed layers: the capacity counts their pages like full history, as Budget says
        text = strategy_notes.capacity_note(ours, state().profile())
        windowed_note = f" {text}" if text else ""
        counts = strategy_notes.capacity_counts(state().profile().has_state)
        c.metric("Capacity (tokens)", f"{capacity:,}",
                 delta=(strategy_notes.WINDOWS_AS_HISTORY
                        if strategy_notes.windows_as_history(ours, state().profile()) else None),
                 delta_color="off", delta_arrow="off",
                 help=f"{sentence_case(counts)} (tokens), as Budget and Compare count it. "
                 "The token slots under Blocks, num_blocks x P: tokens if every page id held "
                 "history; with several groups sharing the ids, each gets a share, so the "
                 "capacity is lower." + windowed_note)
    elif state().profile().has_attention:
        c.metric("Token slots (blocks x P)", f"{h.token_slots:,}",
                 help="num_blocks x P: tokens if every page id held history.")
    else:
        c.metric("Token slots (blocks x P)", NOT_APPLICABLE, help=f"{strategy_notes.NO_HISTORY}.")
    c = metric_row("budget")
    c.metric(CACHE_BUDGET, format_bytes(h.budget_bytes), help=f"{h.budget_bytes:,} B")
    c.metric("Unused", format_bytes(h.unused_bytes), help=f"{h.unused_bytes:,} B")
    if analysis.planner == "packed":
        state_pad = h.state_row_padding
        # two shares of one padding side by side (Qwen3-Next's 1.10% and 1.49%): each names
        # what it is a share of, so that they do not read as a contradiction
        c.metric("Uniform pages pad the block", percent_text(h.padding_share),
                 delta=None if state_pad is None else
                 f"state row fills its page row at P {h.block_size:,}" if state_pad == 0 else
                 f"{percent_text(state_pad)} of a state row at P {h.block_size:,}",
                 delta_color="off", delta_arrow="off",
                 help="What this plan would pad if its rows were uniform pages, as a "
                 "uniform-page engine such as vLLM makes them, every row padded to the page "
                 "row: a share of that padded block"
                 + (", larger than Block bytes above" if h.padding_share else
                    ", here Block bytes above: every row is the page row's size")
                 + ". Packed slabs do not allocate it: their own padding is 0."
                 + (SCALED_PAGES if state().profile().sliding_kv_bytes_per_slot is not None
                    else "")
                 + ("" if state_pad is None else " Below: the same padding as a share "
                 f"of one state row ({h.state_row_bytes:,} B to {h.page_row_bytes:,} B), "
                 "counted as vLLM logs it (\"Padding mamba page size by x%\"). vLLM pads "
                 "at its own P (Compare), which can differ from this plan's."))
    else:
        c.metric("Padding of a block (per component)", percent_text(h.padding_share),
                 help="Every component is a tensor of its own row size: there is no page "
                 "row to pad to, so no padding by construction.")
    worst = max(h.dead_share_by_group, key=lambda g: g[1])
    # per block of one group, named so (by its kind, as the Model page counts it: "full
    # attention (MLA)", not the planner's full_attention): Compare's dead weight is a share of
    # the whole budget. Its bytes under it name its base, the block, where the sentence below
    # gives the plan's dead weight over the budget (Qwen3-Next TP2: 74.72% beside 74.60%)
    group = group_name(worst[0], mla=state().profile().mla)
    share = next(g for g in analysis.groups if g.group_id == worst[0])
    c.metric(f"Dead share of a {group} block", percent_text(worst[1]),
             delta=f"{format_bytes(share.dead_bytes_per_block)} of the block's "
             f"{format_bytes(share.block_bytes)}", delta_color="off", delta_arrow="off",
             help=f"Share of a block owned by the {group} group that holds other groups' rows: "
             "the group whose blocks carry the most dead weight. Compare counts dead weight over "
             "the whole budget instead: every group's pages in the proportion one request "
             f"needs them at the context length. Here {share.dead_bytes_per_block:,} B of the "
             f"block's {share.block_bytes:,} B.")
    if note := strategy_notes.engines_beside_text(ours, engines, state().profile(),
                                                 state().strategy_options()):
        st.caption(note)
    speculative_note(state().planner)


def why(analysis) -> None:
    with st.expander("Why this P, step by step", expanded=True):
        st.markdown("\n".join(f"{i}. {line}" for i, line in
                              enumerate(analysis.why_block_size(), 1)))
        if analysis.finer_alignments and analysis.equalizer.inflated:
            st.caption("P with finer alignments: " + ", ".join(
                f"{a:,} → {p:,}" for a, p in analysis.finer_alignments))
        if bars := app_data.inflation_bars(analysis):
            # one line of TITLE_WIDTH (70) characters, at any width: "... does not fit a
            # page of the requested P: P grows until the KV row covers it" (86) wrapped to
            # two even at 1,400 px; the bars under it name the KV rows that cover it or not
            chart(charts.inflation_figure(
                bars, title="A state row outgrows a page of the requested P: P grows until "
                "it fits"), key="layout.inflation", file_name="inflation.html")


# Where sliding and full layers keep other bytes a token, vLLM pads few of its pages
SCALED_PAGES = (" vLLM pads a history page only where its size does not divide the largest: a "
                "smaller one that divides it holds more tokens instead (its sliding or full "
                "layers' block at a multiple of P; Compare).")


def layout(analysis) -> None:
    st.subheader("Page rows", divider="gray")
    packed = analysis.planner == "packed"  # one tensor per component holds one row kind
    # the toggle only where it draws something: rows narrower than the page row, padded by the
    # bytes it says (Nemotron-H-8B's 4,096 B on a 2,162,688 B row is a thin hatched end)
    padding = (app_data.uniform_padding_text(analysis, mla=state().profile().mla) if packed
               else None)
    uniform = padding is not None and bind(
        st.toggle, "uniform_rows", "Draw rows padded to the widest row (vLLM's page padding)",
        help="Packed slabs allocate rows side by side; a uniform-page engine such as vLLM pads "
        "each row to the widest one (hatched). Only the padding is vLLM's: vLLM gives each "
        "block id to one group, whose layers' pages it holds, not a row of every group (drawn "
        "below).")
    if padding is not None:  # worded by what the chart below draws
        st.caption(app_data.uniform_padding_text(analysis, mla=state().profile().mla,
                                                 drawn=True) if uniform else padding)
    elif packed:
        h = app_data.headline(analysis)
        st.caption(f"Every row is the page row's {h.page_row_bytes:,} B at P {h.block_size:,}: "
                   "uniform pages (vLLM's) would pad nothing here, so there is no padded view "
                   "to draw.")
    profile = state().profile()
    segments = app_data.layout_segments(analysis, uniform=uniform,
                                        layer_types=profile.layer_types,
                                        indexer_bytes_per_slot=profile.indexer_bytes_per_slot or 0,
                                        mla=profile.mla)
    title = "One row per {}: one page id's bytes".format(
        "slot tensor" if packed else "component tensor")
    chart(charts.layout_figure(segments, title=title, x_title="offset in the slot row" if packed
                               else "offset in the component's page"),
          key="layout.rows", file_name="layout.html")
    rows = app_data.dead_weight_rows(analysis, mla=profile.mla)
    if len(analysis.groups) > 1:  # one group owns every page id: no one else's rows
        st.caption("A page id owned by one group still addresses a row in every slot tensor; "
                   "the other groups' rows at that id are dead weight.")
    table(rows, helps=app_data.DEAD_WEIGHT_HELP)


def vllm_blocks(analysis, vllm: StrategyResult) -> None:
    st.subheader("The same cache under vLLM", divider="gray")
    if not vllm.applies:
        st.info(f"vLLM has no layout here: {vllm.reason}")
        return
    st.caption(app_data.vllm_block_text(vllm, state().profile(), analysis))
    if last := last_served_text(state().profile()):
        st.caption(f"{last}.")
    segments = app_data.vllm_block_segments(vllm, state().profile())
    chart(charts.layout_figure(
        segments, title="One row per vLLM group: a block id's bytes when it owns it",
        x_title="offset in the block, page j in tensor j", span="block"),
        key="layout.vllm", file_name="vllm_blocks.html")


# The bytes chart's view is AppState.bytes_focus (link key focus, a focus id of
# charts.icicle_focus_options): a click on the chart or a pick in the select beside it sets it;
# the chart's key in the whole view; a focused view's adds its focus, and its select's adds
# ".show": each view draws widgets of its own. A double-click's second click, sent before its
# first click's run had drawn the new view, carried the select's old value (the whole budget)
# back as if picked: the chart went back to the whole view under "state rows: ssm state".
# A widget of the last view sends what it showed (streamlit, which dropped its state when the
# new view's run ended, calls that a change), which changes nothing now
TREE_KEY = "layout.tree"
# its select's width: the longest view's name whole ("full attention (MLA) rows: KV (full
# attention, MLA latent)", DeepSeek-V3's), where the main column's width (900 px at 1440 px)
# stretched a short name across the page
TREE_FOCUS_PX = 440


def focus_notice(focus: str, views: dict[str, str]) -> str:
    """A link's bytes chart view (``focus``) that names no part of this model's budget, in
    the form of a link's other notices: the parts it could name, and the view it opens."""
    parts = [v for v in views if v != charts.ICICLE_ROOT]
    return (f"focus={quoted(focus, 40)} is not a group or component of this model's budget: "
            f"give one of {', '.join(parts)}; using the default (the whole budget, "
            f"focus={charts.ICICLE_ROOT}).")


def where_bytes_go(analysis) -> None:
    st.subheader("Bytes by group, component and layer", divider="gray")
    # the plot is all tiles, so a double-click, the zoom-out the chart had before a click
    # opened a tile, lands on one and opens it as a click does; Plotly's own (``chart``'s
    # on_click turns it off) drew the last view back beside this one's select
    st.caption("By tensor: the bytes each component's rows take in every block, whichever "
               "group owns the block. Compare's \"Where the budget goes\" splits the same "
               "budget by use: each page id goes to one group (in proportion to the pages a "
               "request needs in each at the context length), and its rows in the other "
               "groups' tensors are dead weight. Hover a tile for its exact bytes; click a "
               "group or component to show only its parts (click it again, at the left, to "
               "go back); drag down the chart to zoom in, and zoom out with the toolbar's "
               "house (Reset axes): a double-click opens a group or component as a click "
               "does.")
    profile = state().profile()  # its parts named as the page rows name them
    nodes = app_data.bytes_tree(analysis, indexer_bytes_per_slot=profile.indexer_bytes_per_slot
                                or 0, mla=profile.mla)
    views = charts.icicle_focus_options(nodes)
    ss = st.session_state
    focus = state().bytes_focus
    if focus not in views:  # a link's part this model lacks (another model's drops it)
        link_notice(focus_notice(focus, views))
        focus = update(bytes_focus=charts.ICICLE_ROOT).bytes_focus
    key = TREE_KEY if focus == charts.ICICLE_ROOT else f"{TREE_KEY}:{focus}"

    def picked() -> None:  # the view picked, from this one
        if ss[f"{key}.show"] != focus:  # not the view it showed, resent by a stale select
            update(bytes_focus=ss[f"{key}.show"])

    def clicked() -> None:  # the tile a click selected opens its view, from this one
        points = ss[key].selection.points
        if points:
            update(bytes_focus=charts.icicle_focus_after_click(
                nodes, focus, charts.icicle_clicked_tile(points[0])))

    st.selectbox("Show", options=list(views), index=list(views).index(focus),
                 format_func=views.get, key=f"{key}.show", on_change=picked,
                 width=TREE_FOCUS_PX,
                 help="The chart's view: the whole budget, or one group or component alone "
                 "with its parts, its bytes the plot's height. A click on a tile does the same.")
    chart(charts.bytes_icicle(nodes, focus=focus), key=key, file_name="bytes.html",
          on_click=clicked)
    if thin := charts.icicle_unlabelled(nodes, focus):  # a sliver's name, only a hover gave
        budget = analysis.totals.budget_bytes  # the tree's root
        st.caption("Not labelled above (hover or click it): " + "; ".join(
            f"{label} {format_bytes(n)} ({percent_text(n, budget)} of the budget)"
            for label, n in thin) + ".")


# The map's two counts of a request's state pages (AppState.map_snapshots), fixed labels
STATE_PAGES_CHOICES = {False: "by mamba cache mode, as the engine's log and the top of the page",
                       True: "with prefix-caching snapshots, one every P tokens"}


def page_ids(analysis, ours: StrategyResult) -> None:
    st.subheader("Which page ids a workload hands to which group", divider="gray")
    profile = state().profile()
    if not profile.has_attention:
        st.info("A state-only model keeps no history pages: a request holds its state pages "
                "only, whatever its length, so the workload model (history plus a state "
                "snapshot every P tokens) does not apply. Budget and Compare count the requests "
                "that fit.")
        return
    # the map before the fields: until a number is typed, the field shows the requests drawn
    s = state()
    context = s.context_length()
    if profile.has_state:  # which state count the map draws: the headline's by default
        bind(st.radio, "map_snapshots", "State pages", options=[False, True], horizontal=True,
             format_func=lambda snap: STATE_PAGES_CHOICES[snap],
             help="How the map charges a request's state pages. By mamba cache mode (the "
             "sidebar's engine options): as the engine's log, the concurrency at the top of the "
             "page, Budget and Compare count them. With prefix-caching snapshots (SPEC 3.5): "
             "two live pages a request and a snapshot every P tokens, what caching the state "
             "of every prefix costs.")
    workload = {"context": context, "sliding_window": profile.sliding_window,
                "attention_chunk_size": profile.attention_chunk_size, **s.map_workload(),
                "limit": 2048}
    live = app_data.live_pages(analysis, s.requests, DEFAULT_REQUESTS, **workload)
    pages, drawn, fitted = live.pages, live.drawn, live.fitted
    # S sizes the window pages of a sliding or chunked request
    sliding = bool(profile.windowed_labels)
    fields = ("requests", "context", *(("max_batched_tokens",) if sliding else ()))
    # the boxes on one line where a label wraps (a third of the page at 1000 px: "Context length
    # (tokens per request)" took two lines and its box sat 21 px below the others), unless a
    # field's error is drawn under it in its column: aligned at the bottom, the other boxes
    # would move down beside the error
    shown_error = any(f in st.session_state[ERRORS_KEY] for f in fields)
    columns = st.columns(len(fields), vertical_alignment="top" if shown_error else "bottom")
    with columns[0]:
        bind(st.number_input, "requests", "Live requests", min_value=1, max_value=MAX_REQUESTS,
             step=1, to_widget=lambda v: drawn if v is None else v,
             help="Requests of the context length, each with its history"
             + (" and state pages" if profile.has_state else " pages")
             + f". Until you give a number: {DEFAULT_REQUESTS}, or as many as fit if fewer.")
    with columns[1]:
        context_widget(with_note=False)
    if sliding:
        with columns[2]:
            engine_widget("max_batched_tokens")
    context_note()
    msg = app_data.workload_text(pages, profile, context=context,
                                 mamba_cache_mode=s.mamba_cache_mode,
                                 concurrency=ours.max_concurrency if ours.applies else None,
                                 speculative_tokens=s.speculative_tokens,
                                 checkpoint_blocks=s.prefill_checkpoint_blocks,
                                 cut=(DEFAULT_REQUESTS, drawn) if fitted else None,
                                 scheduled_tokens=s.max_batched_tokens, requests=drawn,
                                 snapshots=s.map_snapshots)
    if not pages.fits:  # no map: it would hand out pages the pool does not have
        # a warning for a workload typed; the default one is only said (the context is the
        # model's own, and no fewer requests fit)
        (st.warning if s.requests is not None else st.info)(msg)
        if pages.max_requests:  # the map of the workload that does fit, a click away
            st.button(f"Show {count_text(pages.max_requests, 'request')} of "
                      f"{tokens_text(context)}", key="layout.fit", type="tertiary",
                      on_click=update, kwargs={"requests": pages.max_requests},
                      icon=":material/fit_screen:")
        else:  # not even one request: the context that takes one
            longest_context_button(
                pages.longest_context, "layout.longest", "map",
                app_data.longest_context_help("map", longest_by_concurrency(s, ours, context)
                                              if pages.longest_context else None, context),
                pages.longest_requests)
        return
    st.caption(msg)
    # the whole pool or its first ids, said which: "First 1,273 page ids" over a pool of 1,273
    # read as the start of a larger one; of the first, that the legend's pages are the whole
    # pool's ("free: 27,491 pages" beside a map of the first 2,048 ids, none of them free)
    shown = len(pages.owners)
    title = (f"All {shown:,} page ids" if shown == pages.num_blocks
             else f"First {shown:,} of {pages.num_blocks:,} page ids (the legend counts all)")
    chart(charts.page_map_figure(pages, title=title, mla=profile.mla), key="layout.pages",
          file_name="page_ids.html")


def exports(analysis) -> None:
    st.subheader("Export", divider="gray")
    profile = state().profile()
    c1, c2 = st.columns(2)
    c1.download_button("Plan as JSON", data=plan_json(analysis, profile.name),
                       file_name="plan.json", mime="application/json", key="layout.json",
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Bindings as CSV", data=app_data.bindings_csv(analysis),
                       file_name="plan_bindings.csv", mime="text/csv", key="layout.csv",
                       on_click="ignore", icon=":material/download:")


# The reference planner's words, for a reader new to them (teaching, design reviews).
TERMS = """
- **Group**: the cache layers of one kind: full attention, sliding attention, chunked
  attention, or state (every GDN, Mamba or other state layer, whatever the Model page calls
  it). The plan's JSON and CSV key them by the planner's ids: `full_attention`,
  `sliding_attention`, `chunked_attention`, `linear_attention` (state).
  **vLLM's groups** are smaller: each kind cut into groups of `group_size` layers that share
  its page tensors (state 0, state 1, ...), one a block id owns at a time; a group
  short of `group_size` layers gets **padding layers**, whole pages that hold nothing.
- **Component**: one cache tensor of a cache layer: `kv`, the K/V history of an attention
  layer; `conv` and `ssm`, the state of a GDN / Mamba layer (a short conv keeps conv only,
  lightning attention ssm only).
- **Row**: everything one (group, layer) keeps at one page id: its components side by side. A
  history row grows with P (bytes per token x P); a state row is the same at any P.
- **Slot tensor** (`flat_slab_j`): packed slabs put the j-th layer of every group in tensor j;
  its row at a page id is the sum of those layers' rows.
- **Page id**: one index into every slot tensor at once, owned by one group at a time; that
  group's rows there are its **page**. vLLM calls it a **block id**.
- **Block**: everything at a page id, across every slot tensor; the plan allocates
  `num_blocks` of them. A page holds P tokens of history (**P**: the requested block size,
  grown until the widest history row covers the widest state row), one **token slot** each:
  a token's bytes in a history row. A state layer's page holds one request's state: a
  **state page**.
- **Dummy page**: one page id each group keeps that no request's tokens fill (the "+ 1" in
  the pages a workload needs).
- **Padding**: bytes a row leaves empty when every row is padded to the widest one (uniform
  pages: vLLM pads its state page to the attention page); packed slabs do not allocate it.
- **Dead weight**: a page id owned by one group still has rows in every other group's slot
  tensor; those rows hold nothing.
"""

st.title("Layout")
with user_errors():
    a = current_analysis()
    # its vLLM figures (the headline's, "The same cache under vLLM") run with these options
    st.caption(f"{plan_caption(a)} · {options_text(button_where=COMPARE_BUTTON)}")
    state_group_note(state())
    with st.expander("Terms", icon=":material/menu_book:"):
        st.markdown(TERMS)
    # our planner's strategy and the engines', in one cached run: the headline's capacity, its
    # line beside the engines and the workload note read them
    ours, *engines = current_strategies(
        names=(PLANNER_STRATEGY[a.planner], "vllm", "sglang"))
    headline(a, ours, engines)
    why(a)
    layout(a)
    vllm_blocks(a, next(r for r in engines if r.strategy == "vllm"))
    where_bytes_go(a)
    page_ids(a, ours)
    exports(a)
