"""Compare page: every engine strategy side by side for the current model and budget, with
the least budget each needs for R requests, concurrency over context lengths, the engines'
start-up log lines and the check of a pasted log against them (``_log_check``)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app_pages._figures import (
    cached_context_curves,
    cached_least_budget,
    current_strategies,
    mtp_added,
    mtp_button,
)
from app_pages._frame import EXPANDER_COLUMN_PX, MAIN_COLUMN_PX, chart, height_for_rows, table
from app_pages._log_check import log_check_section
from app_pages._session import state, user_errors
from app_pages._widgets import (
    context_widget,
    engine_options,
    hold_default_note,
    hold_requests_widget,
    log_options_text,
    model_note,
    options_text,
    state_group_note,
)
from flatkv import app_data, charts, sizing, strategy_notes
from flatkv.app_state import GPU_PRESETS, AppState
from flatkv.dtypes import canonical_dtype, dtype_label
from flatkv.strategies import CONCURRENCY_COLUMN, StrategyResult
from flatkv.strategies.vllm_releases import last_served_note
from flatkv.strategy_notes import title_of
from flatkv.units import count_text, exact_bytes, sentence_case, tokens_text
from flatkv.units import markdown_literal as literal

# the first column of the bytes table under "Where the budget goes": its rows' categories


def charts_of(results: list[StrategyResult], has_history: bool, context: int,
              marks: dict[str, str]) -> None:
    """Capacity and concurrency bars (a layout with no figures a row that says why), and where
    each layout's budget goes (with its table), SGLang named with the KV dtype it stores where
    not the model's, as in the tables (no longer than "FlatKV per component", whose row and
    legend entry the charts already make room for): ``marks``, the page's
    ``strategy_notes.kv_dtype_marks``."""
    s = state()
    shown = [r for r in results if r.applies]
    absent = {title_of(r): strategy_notes.why_not_label(r) for r in results if not r.applies}
    chart(charts.capacity_bars(
        [strategy_notes.marked_title(r.strategy, marks) for r in results],
        [r.capacity_tokens or 0 if r.applies else None for r in results] if has_history
        else None,
        [r.max_concurrency or 0.0 if r.applies else None for r in results], context=context,
        absent=absent), key="compare.capacity", file_name="capacity.html")
    concurrency_over_context(s, context, marks)
    chart(charts.breakdown_bars([strategy_notes.marked_title(r.strategy, marks) for r in shown],
                                [r.breakdown for r in shown],
                                title="Where the budget goes"),
          key="compare.breakdown", file_name="breakdown.html")
    st.caption("By use: in one page-id space each page id goes to one group, in proportion to "
               "the pages a request needs in each at this context length; its rows in the other "
               "groups' tensors are dead weight. Layout's \"Bytes by group, component and "
               "layer\" splits the same budget by tensor instead.")
    for r in shown:
        if note := app_data.sglang_idle_split_text(r):
            st.caption(literal(note))
    # a layout a column under its short name, in as many tables as fit the main column at
    # 1000 px (Qwen3-Next's five under their titles took 823 px of 538): the exact bytes whole
    table(pd.DataFrame(strategy_notes.budget_by_category_rows(
        results, marks, strategy_notes.STRATEGY_SHORT_TITLES)), fit_px=MAIN_COLUMN_PX)


def concurrency_over_context(s: AppState, context: int,
                             marks: dict[str, str] | None = None) -> None:
    """Each layout's max concurrency at this budget over context lengths (powers of two to the
    model's max_model_len, that length and the page's), as a chart and as a table; ``marks``:
    SGLang's KV dtype beside its name in the legend, where not the model's."""
    curves = cached_context_curves(
        s.profile(), s.budget().cache_bytes,
        tuple(sizing.context_candidates(context, s.model_max_len())), s.strategy_options())
    lines = [(k, strategy_notes.marked_title(k, marks), v) for k, v in curves.concurrency.items()]
    chart(charts.context_figure(curves.contexts, lines, context=context,
                                title="Concurrency over context length"),
          key="compare.contexts", file_name="concurrency_by_context.html")
    st.caption(app_data.context_chart_text(curves, context, current_strategies(s)))
    rows = pd.DataFrame(app_data.context_sweep_rows(curves), dtype=object)
    with st.expander("Concurrency over context length as a table"):
        # every row in view (a length a row, 15 at most up to 10M tokens), a column a layout
        # under its short name, marked as the chart's key is (the CSV keeps the full ones); at
        # 1000 px five layouts take 474 px of the expander's 504, and six (gpt-oss-20b's: 566)
        # are two tables of three
        short = {strategy_notes.STRATEGY_TITLES[k]: strategy_notes.marked_title(
            k, marks, strategy_notes.STRATEGY_SHORT_TITLES) for k in curves.concurrency}
        table(rows.rename(columns=short | {"context (tokens)": "context"}),
              formats={name: "accounting" for name in short.values()},
              height=height_for_rows(len(rows)), fit_px=EXPANDER_COLUMN_PX)
        st.download_button("Concurrency by context as CSV", data=rows.to_csv(index=False),
                           file_name="concurrency_by_context.csv", mime="text/csv",
                           key="compare.contexts.csv", on_click="ignore",
                           icon=":material/download:")


def most_held(results: list[StrategyResult],
              marks: dict[str, str] | None = None) -> tuple[int, str]:
    """The whole requests the layout that holds most holds, and whose they are in words: each
    layout that holds as many named (DeepSeek-V3's six all hold 6, which named the first alone
    "the layout that holds most"), SGLang with the KV dtype it stores where ``marks`` say
    (DeepSeek-V3.2 on a B200: it holds most by fp8_e4m3's bytes)."""
    applying = [r for r in results if r.applies]
    most = max((int(r.concurrency) for r in applying), default=0)
    tied = [strategy_notes.marked_title(r.strategy, marks) for r in applying
            if int(r.concurrency) == most]
    if not applying:
        return 0, "fit in any layout"
    if len(tied) == 1:
        return most, f"fit in {tied[0]}, the layout that holds most"
    if len(tied) == len(applying):
        return most, "fit in every layout that applies"
    return most, f"fit in {', '.join(tied[:-1])} and {tied[-1]}, the layouts that hold most"


def budgets_to_hold(s: AppState, results: list[StrategyResult], context: int,
                    marks: dict[str, str]) -> None:
    """Each layout's least cache budget (and GPU memory) for R requests of the context, R one
    more than the layout that holds most until a number is typed (Budget's field); a layout
    that does not apply at this budget too, as one that holds none is where it helps most;
    ``marks``, the page's ``strategy_notes.kv_dtype_marks``, names SGLang by its dtype."""
    # the field's label level with the caption's first line: set at the bottom, beside the
    # caption's seven lines at 1000 px, the field sat 89 px low with blank room above it
    left, right = st.columns([1, 2], vertical_alignment="top")
    with left:
        fitting, fit = most_held(results, marks)
        requests = hold_requests_widget(fitting, context, fit=fit)
    budgets = [cached_least_budget(s.profile(), r.strategy, requests, context,
                                   s.strategy_options()) for r in results]
    budget = s.budget()
    # where one byte more can hold fewer, and SGLang has a figure to say so of (it serves no
    # Jamba: the clause stood beside its "does not apply")
    steps = sizing.steps_down("sglang", s.profile()) and any(
        need is not None for r, need in zip(results, budgets, strict=True)
        if r.strategy == "sglang")
    right.caption(f"The least cache budget per rank that holds "
                  f"{count_text(requests, 'request')} of {tokens_text(context)} in each layout"
                  + (" (SGLang beside a state pool: from which every larger one holds them)"
                     if steps else "")
                  + (". A budget given as an engine logs it has no GPU memory to derive."
                     if budget.given else ", and the GPU memory that leaves it.")
                  + (f" {why}" if (why := hold_default_note(
                      fitting, fit, "Budget starts from the layout it shows")) else ""))
    rows = pd.DataFrame(strategy_notes.hold_rows(results, budgets, budget, s.profile(),
                                                 s.strategy_options(), marks), dtype=object)
    # the bytes in words, and under them (folded) the exact bytes: as one table Qwen3-Next's
    # took 762 px of the 538 at 1000 px, and "GPU memory (B)" was a sideways scroll away
    exact = [c for c in rows.columns if c.endswith("(B)")]
    table(rows.drop(columns=exact), helps=strategy_notes.hold_help(budget))
    with st.expander("These budgets in exact bytes"):
        table(rows[["strategy", *exact]], height=height_for_rows(len(rows)))


st.title("Compare")
with user_errors():
    s = state()
    profile = s.profile()  # first: a TP that does not split the model is the page's error,
    b = s.budget()  # a budget the weights fill too is the sidebar's
    st.caption(f"{literal(profile.name)} · budget {exact_bytes(b.cache_bytes)} per rank "
               f"({b.derivation}) · "
               f"block size {s.block_size:,}, alignment {s.effective_alignment:,} · "
               f"{options_text(s.acting_engine_options())}")
    # what each layout is, as Layout's "Terms" says its words: a title alone ("two-level
    # pages", "slab aliasing") was jargon until its Formulas' math
    with st.expander("Layouts", icon=":material/menu_book:"):
        st.markdown("\n".join(f"- {line}" for line in strategy_notes.layout_lines()))
    model_note(s)
    state_group_note(s)  # the Formulas' state group, in the model's kinds
    context_widget()
    engine_options()
    results = current_strategies(s)
    context = s.context_length()
    # a layout that stores another KV dtype than the others marked beside its name: the
    # tables, the sentence under them, the requests to hold and the charts alike
    marks = strategy_notes.kv_dtype_marks(results, profile, s.strategy_options())
    shown = [r for r in results if r.applies]
    # object columns keep whole numbers whole where a figure does not apply (None, not NaN)
    frame = pd.DataFrame([strategy_notes.compare_table_row(r) for r in results], dtype=object)
    # a state-only model keeps no token history: no capacity column or chart
    has_history = s.profile().has_attention
    if not shown:  # first what is wrong and how to fix it, then each layout's reason
        st.error(f"No layout fits this budget: each says why below. "
                 f"{sentence_case(s.budget().how_to_raise)}.")
    else:
        # accounting: thousands separators and always two decimals (65.50, 391,483.00)
        # the capacity column's tooltip tags windows counted as full history, as Budget's and
        # Layout's metric do, and the note why sits right under the table (it was the 3rd of
        # the notes under the charts, a screen away from the column)
        helps = strategy_notes.headline_help(s.profile().has_state, has_history and any(
            strategy_notes.windows_as_history(r, s.profile()) for r in shown))
        # each layout's block bytes and the engines' log counts, a table of their own right
        # under its figures: beside them they made it 853 px wide in the 538 at 1000 px; one
        # table where the page holds it (940 px at 1,400 px)
        figures = pd.DataFrame(strategy_notes.headline_rows(
            results, has_history, (*strategy_notes.HEADLINE_COLUMNS,
                                   *strategy_notes.LOG_COLUMNS[1:]), marks), dtype=object)
        logs = [strategy_notes.HEADLINE_SCREEN_NAMES.get(c, c)
                for c in strategy_notes.LOG_COLUMNS[1:]]
        table(figures, formats={CONCURRENCY_COLUMN: "accounting"}, helps=helps,
              labels=strategy_notes.HEADLINE_LABELS,
              runs=[[c for c in figures.columns[1:] if c not in logs], logs])
        since = strategy_notes.logged_since(profile, s.strategy_options())
        for r in shown:  # which log figure is which release's, right under them
            if quote := strategy_notes.which_log_text(r, log_options_text(), since):
                st.caption(quote)
        if rounding := strategy_notes.logged_rounding_text(shown):  # 5.99 beside 6.00x
            st.caption(rounding)
        if apart := strategy_notes.kv_dtypes_apart_text(
                marks, profile, s.strategy_options(),
                sglang_told="KV cache dtype told bfloat16 (SGLang, under Engine options)",
                # raw bytes have no kv dtype to set (no field under Raw bytes)
                kv_dtype_set=None if s.model_spec() is None else lambda d: (
                    f"the kv dtype {dtype_label(canonical_dtype(d))} under the Model page's "
                    "Edit by hand")):
            st.caption(apart)
        if sizes := strategy_notes.page_sizes_text(results, s.strategy_options(),
                                                   mla=s.profile().mla):
            st.caption(sizes)
        if same := strategy_notes.same_flat_figures_text(results):
            st.caption(same)
        if has_history and (windows := strategy_notes.sliding_capacity_text(s.profile())):
            st.caption(windows)
    for r in results:
        if not r.applies:
            st.caption(strategy_notes.why_not_text(r))
    budgets_to_hold(s, results, context, marks)
    if shown:
        charts_of(results, has_history, context, marks)
    # how to read the figures, under the charts they explain too
    st.caption(strategy_notes.how_to_read_text(s.profile(), s.speculative_tokens,
                                               mtp_added=mtp_added(),
                                               options=s.strategy_options()))
    mtp_button()
    dropped = last_served_note(results, s.profile())  # the vLLM releases that serve it
    for note in (f"{dropped}." if dropped else "",
                 strategy_notes.dead_weight_text(results),
                 strategy_notes.capacity_ranks_apart_text(results, s.profile()),
                 strategy_notes.attention_dp_text(results),
                 strategy_notes.logged_capacity_text(results, s.profile(),
                                                     s.strategy_options()),
                 strategy_notes.two_pool_blocks_text(results, s.profile()),
                 strategy_notes.sglang_state_text(results, s.profile()),
                 strategy_notes.short_of_one_request_text(results, context),
                 strategy_notes.sglang_pools_text(s.profile(), s.strategy_options()),
                 strategy_notes.sglang_gpu_page_text(s.gpu, s.strategy_options(), s.profile()),
                 strategy_notes.idle_values_text(s.strategy_options(), s.profile(),
                                                 s.acting_engine_options()),
                 strategy_notes.arch_idle_text(
                     "" if s.gpu in GPU_PRESETS else s.gpu_arch, s.profile(),
                     s.strategy_options(), b.cache_bytes, context, results=results),
                 strategy_notes.mamba_all_text(s.strategy_options(), s.profile()),
                 strategy_notes.prefill_checkpoint_text(
                     s.strategy_options(), s.profile(),
                     gdn_gpu=s.gpu_named() if s.vllm_checkpoint_blocks() else ""),
                 app_data.printed_budget_text(s.profile(), "vllm", b.cache_bytes, context,
                                              s.strategy_options()) if b.rounded_in_log else ""):
        if note:
            st.caption(note)
    st.subheader("Formulas", divider="gray")
    for r in results:
        why_not = "" if r.applies else f" ({strategy_notes.why_not_label(r)})"
        with st.expander(title_of(r) + why_not):
            if not r.applies:
                st.caption(strategy_notes.reason_text(r))
                continue
            if r.why_block_size:
                st.caption(r.why_block_size)
            st.code("\n".join(r.formulas), language=None, wrap_lines=True)
            if log := r.extras.get("log_lines"):
                st.caption(strategy_notes.start_up_log_text(r, strategy_notes.unlogged_why(
                    s.profile(), s.strategy_options()) if r.strategy == "vllm" else ""))
                # wrapped to be read whole, each log line numbered so that a wrap is not
                # taken for a line of its own (the copy button gives them unwrapped)
                st.code("\n".join(log), language=None, wrap_lines=True, line_numbers=True)
    c1, c2 = st.columns(2)
    c1.download_button("Comparison as CSV", data=frame.to_csv(index=False),
                       file_name="comparison.csv", mime="text/csv", key="compare.csv",
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Comparison as JSON",
                       data=lambda: json.dumps([r.to_dict() for r in results], indent=2),
                       file_name="comparison.json", mime="application/json",
                       key="compare.json", on_click="ignore", icon=":material/download:")
    log_check_section(results)
