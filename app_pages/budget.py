"""Budget page: what-if over GPU memory and block size for one layout ("Whose layout");
capacity and concurrency curves, and the least budget and GPU memory that hold R requests."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app_pages._figures import (
    cached_curves,
    cached_least_budget,
    cached_longest_context,
    current_analysis,
    current_strategies,
    longest_by_map,
    speculative_note,
)
from app_pages._frame import CACHE_BUDGET, NOT_APPLICABLE, chart, height_for_rows, metric_row, table
from app_pages._session import PageDone, bind, state, user_errors
from app_pages._widgets import (
    COMPARE_BUTTON,
    context_note,
    context_widget,
    engine_options,
    hold_default_note,
    hold_requests_widget,
    log_options_text,
    longest_context_button,
    model_note,
    options_text,
)
from flatkv import app_data, charts, sizing, strategy_notes
from flatkv.analysis import PLANNER_STRATEGY
from flatkv.app_state import AppState
from flatkv.budget import Budget, fraction_text
from flatkv.strategies import OLDER_LOGGED_COLUMN, STRATEGIES, StrategyResult, logged_as
from flatkv.strategies.vllm_releases import OLDER_VLLM_LOG
from flatkv.strategy_notes import STRATEGY_TITLES
from flatkv.units import (
    MAX_BYTES,
    concurrency_text,
    count_text,
    format_bytes,
    sentence_case,
    tokens_text,
)
from flatkv.units import markdown_literal as literal

WHOSE_LAYOUT = "Whose layout"  # the picker's label, which the notices name


def capacity_help(has_state: bool) -> str:
    """The capacity metric's help: what it counts (``strategy_notes.capacity_counts``), a
    state group's pages only where the model has state layers, and then why concurrency can
    read under capacity over the context."""
    state = (", each state group that request's state pages (the mamba cache mode's count, "
             "plus one per speculative token)" if has_state else "")
    return (f"{sentence_case(strategy_notes.capacity_counts(has_state))}: every attention "
            "group (sliding and chunked ones too, without window eviction) N pages of P "
            f"tokens{state}, as on Compare{strategy_notes.state_once_clause(has_state)}. "
            "\"The math\" shows it with the numbers.")


SGLANG_CAPACITY_HELP = (
    "SGLang's token pool (its log's max_total_num_tokens): the tokens every full-attention "
    "layer holds, which its static split of the budget fixes (sliding-window layers keep theirs "
    "in a pool of their own where SGLang has one). \"The math\" shows it with the numbers.")
CONCURRENCY_HELP = (
    "Requests of this context the cache holds at once: the blocks (or units) it has over those "
    "one request needs at this context, every layer's pages and its state together, as vLLM's "
    "log prints it (\"Maximum concurrency for N tokens per request: 14.77x\"). A fraction "
    "means the last request only partly fits. \"The math\" shows it with the numbers.")
SGLANG_CONCURRENCY_HELP = (
    "Requests of this context SGLang's pools hold at once: its token pool's tokens over one "
    "request's (and its sliding-window pool's over a request's window, where it keeps one), at "
    "most its state slots over the slots a running request holds (a model with state layers). "
    "SGLang's log prints no such figure: its max_running_requests is a cap it sets (the math "
    "gives it). A fraction means the last request only partly fits. \"The math\" shows it with "
    "the numbers.")
NO_HISTORY_HELP = (f"{strategy_notes.NO_HISTORY}, so there is no capacity in tokens; concurrency "
                   "still counts.")


def block_size_sweep(s: AppState, r: StrategyResult, b: Budget, swept: app_data.Curves,
                     history: bool, right: DeltaGenerator, legend_lines: int) -> None:
    """The curve over the requested block size (in ``right``, its legend given the room of the
    budget chart's beside it) and its table; under the curve, where the budget is given as
    vLLM's blocks, that the sweep holds its bytes (``app_data.vllm_blocks_sweep_text``)."""
    by_size = swept.by_block_size
    with right:
        chart(charts.sweep_figure(
            swept.block_sizes, [p.capacity_tokens for p in by_size] if history else None,
            [p.concurrency for p in by_size],
            current_x=s.block_size,
            current_capacity=r.capacity_tokens, current_concurrency=r.max_concurrency,
            x_title=app_data.SWEEP_BLOCK_AXIS, context=s.context_length(), log_x=True,
            title="Over the block size", legend_lines=legend_lines),
            key="budget.by_size", file_name="capacity_by_block_size.html")
        if note := app_data.block_size_floor_text(swept, s.profile().has_state):
            st.caption(note)  # flat where P outgrows the size asked
        if note := app_data.block_size_gaps_text(swept):
            st.caption(note)  # where the curve has no point, and why
        if note := app_data.vllm_blocks_sweep_text(b, s.block_size):
            st.caption(note)
    sweep = pd.DataFrame(app_data.block_size_sweep_rows(swept, history))
    with st.expander("Block-size sweep as a table"):  # every size in view (13 of them)
        table(sweep, formats={"concurrency": "accounting"}, height=height_for_rows(len(sweep)))
        st.download_button("Sweep as CSV", data=sweep.to_csv(index=False),
                           file_name="block_size_sweep.csv", mime="text/csv",
                           key="budget.csv", on_click="ignore", icon=":material/download:")


def budget_to_hold(s: AppState, r: StrategyResult, b: Budget, strategy: str,
                   context: int) -> tuple[int, int | None]:
    """The what-if backwards: the least cache budget (and GPU memory) for R requests of the
    context, R one more than fit until a number is typed. Returns R and that budget (None
    where no budget holds them), which the budget chart marks."""
    row = metric_row("hold", under=True)  # its cells under the figures'
    left, middle, right = row.container(), row.container(), row.container()
    with left:  # a layout that does not apply at this budget: what would hold one request
        # SGLang with the KV dtype it stores where not the model's, as Compare marks it
        marks = strategy_notes.kv_dtype_marks([r], s.profile(), s.strategy_options())
        fitting = int(r.concurrency) if r.applies else 0
        fit = f"fit in {strategy_notes.marked_title(strategy, marks)}"
        requests = hold_requests_widget(fitting, context, fit=fit)
    need = cached_least_budget(s.profile(), strategy, requests, context, s.strategy_options())
    if why := hold_default_note(fitting, fit, "Compare starts from the layout that holds most"):
        st.caption(why)  # under the row, whatever fills its cells
    label = f"Budget for {count_text(requests, 'request')}"
    if need is None:
        middle.metric(label, NOT_APPLICABLE, help=f"No budget up to {format_bytes(MAX_BYTES)} "
                      f"holds {count_text(requests, 'request')} of {tokens_text(context)} in this "
                      "layout.")
        return requests, None
    more = need - b.cache_bytes
    steps = sizing.steps_down(strategy, s.profile())
    middle.metric(label, format_bytes(need),
                  delta=f"{format_bytes(abs(more))} {'more' if more >= 0 else 'less'} than now",
                  delta_color="off", delta_arrow="off",
                  help=strategy_notes.least_budget_help(need, requests, context, strategy,
                                                        counted_above=r.applies,
                                                        steps_down=bool(steps)))
    if note := strategy_notes.below_a_step_text(r, need, requests):
        st.caption(note)
    if b.given:
        return requests, need
    gpu = b.gpu_bytes_for(need)
    right.metric("GPU memory for it", format_bytes(gpu),
                 help=f"ceil(({need:,} B + {b.weights_per_rank:,} B of weights per rank) / "
                 f"{fraction_text(b.fraction)}) = {gpu:,} B: the least GPU memory that leaves "
                 "that budget at this memory fraction and these weights.")
    if beyond := b.beyond_gpu_text(gpu):
        right.caption(f"{sentence_case(beyond)}: {b.beyond_gpu_fix(need)}.")
    return requests, need


def budget_chart(s: AppState, r: StrategyResult, b: Budget, strategy: str, need: int | None,
                 requests: int, *, alone: bool = False
                 ) -> tuple[app_data.Curves, int, DeltaGenerator]:
    """The chart over the budget (left of two columns), on to the least budget for the
    requests to hold (``need``), starred; drawn where the layout does not start at this budget
    too, as that budget is then the one to see. Returns the curves, the lines of its legend
    (the chart beside it takes as many, so the panels sit level) and the right column.
    ``alone``: no block-size sweep goes beside it (the layout does not start here, or it is
    SGLang's, which pages by its own page size): the chart takes the page's width, not half of
    it beside a blank half, and the returned column is the one it is drawn in."""
    context = s.context_length()
    swept = cached_curves(s.profile(), strategy, b.cache_bytes, context, s.strategy_options(),
                          need)
    target = app_data.budget_target(swept, need, requests)
    if alone:
        left = right = st.container()
    else:
        left, right = st.columns(2)
    with left:
        chart(charts.sweep_figure(
            [x / 2**30 for x in swept.budgets],
            [p.capacity_tokens for p in swept.by_budget] if s.profile().has_attention
            else None,
            [p.concurrency for p in swept.by_budget],
            current_x=b.cache_bytes / 2**30, current_capacity=r.capacity_tokens,
            current_concurrency=r.max_concurrency, x_title="cache budget per rank (GiB)",
            context=context, title="Over the budget",
            target=target, wide=alone),
            key="budget.by_budget", file_name="capacity_by_budget.html")
    legend_lines = charts.sweep_legend_lines(s.profile().has_attention, target is not None)
    return swept, legend_lines, right


def longest_context_offer(s: AppState, r: StrategyResult, b: Budget, context: int) -> None:
    """Where the layout holds not even one request of the context: the longest context at
    which its concurrency reaches one request in this budget, a click away, its help saying
    what Layout's map offers where it draws this layout (``app_data.longest_context_help``)."""
    longest_context_button(
        cached_longest_context(s.profile(), r.strategy, b.cache_bytes, context,
                               s.strategy_options()), "budget.longest", "concurrency",
        app_data.longest_context_help("concurrency", longest_by_map(s, r), context))


st.title("Budget")
with user_errors():
    s = state()
    ours = PLANNER_STRATEGY[s.planner]  # the sidebar's planner, unless another layout is picked
    c1, c2 = st.columns(2)
    with c1:
        bind(st.selectbox, "budget_strategy", WHOSE_LAYOUT, options=list(STRATEGIES),
             format_func=STRATEGY_TITLES.get, to_widget=lambda v: v or ours,
             from_widget=lambda v: None if v == ours else v,
             help="Whose capacity the what-if sweeps: our planner (the sidebar's) or an "
             "engine's layout (vLLM v1, SGLang), counted as on Compare.")
    with c2:
        context_widget(with_note=False)
    context_note()
    strategy = s.budget_strategy or ours
    acting = s.acting_engine_options((strategy,))  # only the options that act on this model
    st.caption(f"{literal(s.profile().name)} · {STRATEGY_TITLES[strategy]} · "
               f"{options_text(acting, COMPARE_BUTTON)} · "
               "GPU, memory fraction, weights and TP are in the sidebar.")
    model_note(s)
    if acting:
        engine_options(acting, label="Engine options",
                       note="What this layout reads of the engine options; the link keeps what "
                       "you change.")
    b = s.budget()  # after the page's own settings: a budget in error leaves them usable
    st.info(b.explanation, icon=":material/calculate:")
    (r,) = current_strategies(s, (strategy,))
    context = s.context_length()
    if not r.applies:
        # what would hold one request, where some budget does (not for a model the layout
        # cannot plan at all: the notice below says why)
        holds = cached_least_budget(s.profile(), strategy, 1, context,
                                    s.strategy_options()) is not None
        if holds:
            requests, need = budget_to_hold(s, r, b, strategy, context)
        if strategy == ours:
            # says it in the page's words: budget too small, state only
            current_analysis(s, other_choice=f", or another layout under \"{WHOSE_LAYOUT}\"")
        if not holds:
            # it plans no such model at any budget (SGLang serves no Jamba): a notice, as
            # Compare keeps the layout and says why under its table, naming those that do
            st.warning(strategy_notes.pick_another_text(r, current_strategies(s),
                                                        WHOSE_LAYOUT))
            raise PageDone
        st.error(strategy_notes.why_not_text(r))
        # one request of the context outgrows this budget (vLLM refuses to start): the
        # longest one it holds, if any
        longest_context_offer(s, r, b, context)
        budget_chart(s, r, b, strategy, need, requests, alone=True)  # where it comes to start
        raise PageDone
    c = metric_row("figures")
    c.metric(CACHE_BUDGET, format_bytes(b.cache_bytes), help=f"{b.cache_bytes:,} B")
    history = r.capacity_tokens is not None  # a state-only model keeps no token history
    c.metric("Capacity (tokens)", f"{r.capacity_tokens:,}" if history else NOT_APPLICABLE,
             delta=strategy_notes.WINDOWS_AS_HISTORY
             if strategy_notes.windows_as_history(r, s.profile()) else None,
             delta_color="off", delta_arrow="off",
             help=(SGLANG_CAPACITY_HELP if strategy == "sglang"
                   else capacity_help(s.profile().has_state))
             if history else NO_HISTORY_HELP)
    # three token figures side by side: each says which one the concurrency reads
    # (none where vLLM 0.19 ran no such layout: the caption under them says why)
    older = r.older_logged_tokens not in (None, r.logged_tokens)
    since = strategy_notes.logged_since(s.profile(), s.strategy_options())
    if r.logged_tokens is not None and r.logged_tokens != r.capacity_tokens:
        c.metric(f"{logged_as(strategy)} (tokens)", f"{r.logged_tokens:,}",
                 delta=strategy_notes.logged_delta(r, since)
                 if older or strategy_notes.older_log_none(r) else None,
                 delta_color="off", delta_arrow="off",
                 help=strategy_notes.logged_tokens_help(r))
    if older:
        c.metric(sentence_case(OLDER_LOGGED_COLUMN), f"{r.older_logged_tokens:,}",
                 delta=f"as {OLDER_VLLM_LOG} log it", delta_color="off",
                 delta_arrow="off", help=strategy_notes.older_logged_tokens_help(r))
    c.metric(f"Concurrency at {tokens_text(context)}", concurrency_text(r.max_concurrency),
             help=SGLANG_CONCURRENCY_HELP if strategy == "sglang" else CONCURRENCY_HELP)
    c.metric("Blocks", f"{r.num_blocks:,}", help=f"{r.block_bytes:,} B each, " + (
        f"P = {r.block_size:,}" if r.block_size else "state slots: no pages of tokens") + (
        ": SGLang's blocks are its token pool's pages (--page-size tokens), a page in every "
        "KV layer" if strategy == "sglang" and r.block_size else ""))
    if quote := strategy_notes.which_log_text(r, log_options_text(), since):
        st.caption(quote)  # which of the three token figures is which release's
    if rounding := strategy_notes.logged_rounding_text([r]):  # 5.99 beside its log's 6.00x
        st.caption(rounding)
    requests, need = budget_to_hold(s, r, b, strategy, context)
    if note := strategy_notes.short_of_one_request_text([r], context):
        st.caption(note)
        longest_context_offer(s, r, b, context)
    if note := strategy_notes.mode_fallback_text(r, s.profile()):
        st.caption(note)
    if "prefill_checkpoint_blocks" in acting and (note := strategy_notes.prefill_checkpoint_text(
            s.strategy_options(), s.profile(),
            gdn_gpu=s.gpu_named() if s.vllm_checkpoint_blocks() else "")):
        st.caption(note)
    speculative_note(strategy)
    if b.rounded_in_log and (note := app_data.printed_budget_text(
            s.profile(), strategy, b.cache_bytes, context, s.strategy_options())):
        st.caption(note)
    if note := strategy_notes.capacity_note(r, s.profile()):
        st.caption(note)
    if note := app_data.sglang_idle_split_text(r):  # what its pools reserve and leave unused
        st.caption(literal(note))
    with st.expander("The math"):
        st.code("\n".join(r.formulas), language=None, wrap_lines=True)
    # SGLang's token pool pages by its own page size, not the block size: no sweep beside it
    swept, legend_lines, right = budget_chart(s, r, b, strategy, need, requests,
                                              alone=strategy == "sglang")
    if strategy == "sglang":
        right.caption("SGLang's token pool does not page by the block size, so there is no "
                      "block-size sweep: its page size is one of the layout options above."
                      if s.profile().has_attention else "SGLang keeps state in per-request "
                      "slots, not pages: there is no block-size sweep.")
    else:
        block_size_sweep(s, r, b, swept, history, right, legend_lines)
