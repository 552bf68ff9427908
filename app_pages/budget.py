"""Budget page: what-if over GPU memory and block size; capacity and concurrency curves."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from app_pages._common import (
    NOT_APPLICABLE,
    _profile_key,
    bind,
    chart,
    current_analysis,
    current_strategies,
    engine_options,
    metric_row,
    options_key,
    state,
    table,
    user_errors,
)
from flatkv import app_data, charts
from flatkv.app_data import PLANNER_STRATEGY, STRATEGY_TITLES
from flatkv.app_state import MAX_CONTEXT, layout_fields_for
from flatkv.profile import CacheProfile
from flatkv.strategies import StrategyOptions, run_strategy
from flatkv.units import concurrency_text, concurrency_value, format_bytes


def _point(strategy, profile, budget, context, options) -> tuple[int, float, int]:
    """(capacity tokens, concurrency, P) of one sweep point; zeros where nothing fits (and
    capacity 0 for a state-only model, whose charts leave capacity out)."""
    try:
        r = run_strategy(strategy, profile, budget_bytes=budget, context_tokens=context,
                         options=options)
    except ValueError:
        return 0, 0.0, 0
    if not r.applies:
        return 0, 0.0, 0
    return r.capacity_tokens or 0, r.max_concurrency or 0.0, r.block_size or 0


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: _profile_key, StrategyOptions: options_key})
def sweeps(
    profile: CacheProfile, strategy: str, budget: int, context: int, options: StrategyOptions,
    alignment: int | None,
) -> tuple[list[int], list[tuple], list[int], list[tuple]]:
    """Both curves of one view (pure, cached): budgets and block sizes with their points. The
    block-size sweep keeps ``alignment`` (None: each block size is its own alignment)."""
    budgets = app_data.budget_candidates(budget)
    by_budget = [_point(strategy, profile, b, context, options) for b in budgets]
    sizes = app_data.block_size_candidates(options.block_size)
    by_size = [_point(strategy, profile, budget, context,
                      replace(options, block_size=b, alignment=alignment)) for b in sizes]
    return budgets, by_budget, sizes, by_size


CAPACITY_HELP = (
    "The history the pool holds beside one request's state: every attention group (sliding "
    "ones too, without window eviction) N pages of P tokens, each state group that request's "
    "state pages (the mamba cache mode's count), as on Compare. \"The math\" shows it with "
    "the numbers.")
NO_HISTORY_HELP = ("No attention layer: the model keeps no token history, only a constant state "
                   "per request, so there is no capacity in tokens; concurrency still counts.")

st.title("Budget")
with user_errors():
    s = state()
    b = s.budget()
    strategy = PLANNER_STRATEGY[s.planner]
    acting = layout_fields_for(s.profile())  # only the options that act on this model
    st.caption(f"{s.profile().name} · {STRATEGY_TITLES[strategy]} · "
               f"{s.engine_options_text(acting, defaults='default layout options')} · "
               "GPU, memory fraction, weights and TP are in the sidebar.")
    st.info(b.explain(s.mem_fraction, s.tp), icon=":material/calculate:")
    bind(st.number_input, "context", "Context length (tokens per request)", min_value=1,
         max_value=MAX_CONTEXT, step=1024)
    if acting:
        engine_options(acting, label="Layout options",
                       note="What our layouts read of the engine options (the others are on "
                       "Compare); the link keeps what you change.")
    s = state()
    (r,) = current_strategies(s, (strategy,))
    if not r.applies:
        current_analysis(s)  # says it in the page's words: budget too small, state only
        raise ValueError(r.reason)
    c = metric_row()
    c.metric("Cache budget", format_bytes(b.cache_bytes), help=f"{b.cache_bytes:,} B")
    history = r.capacity_tokens is not None  # a state-only model keeps no token history
    c.metric("Capacity (tokens)", f"{r.capacity_tokens:,}" if history else NOT_APPLICABLE,
                help=CAPACITY_HELP if history else NO_HISTORY_HELP)
    c.metric(f"Concurrency at {s.context:,} tokens", concurrency_text(r.max_concurrency))
    c.metric("Blocks", f"{r.num_blocks:,}", help=f"{r.block_bytes:,} B each, P = "
                f"{r.block_size:,}")
    if history and (note := app_data.sliding_capacity_text(s.profile())):
        st.caption(note)
    with st.expander("The math"):
        st.code("\n".join(r.formulas), language=None, wrap_lines=True)
    budgets, by_budget, sizes, by_size = sweeps(s.profile(), strategy, b.cache_bytes,
                                                s.context, s.strategy_options(), s.alignment)
    left, right = st.columns(2)
    with left:
        chart(charts.sweep_figure(
            [x / 2**30 for x in budgets], [p[0] for p in by_budget] if history else None,
            [p[1] for p in by_budget],
            current_x=b.cache_bytes / 2**30, current_capacity=r.capacity_tokens,
            current_concurrency=r.max_concurrency, x_title="cache budget per rank (GiB)",
            context=s.context, title="Over the budget"),
            key="budget.by_budget", file_name="capacity_by_budget.html")
    with right:
        chart(charts.sweep_figure(
            sizes, [p[0] for p in by_size] if history else None, [p[1] for p in by_size],
            current_x=s.block_size,
            current_capacity=r.capacity_tokens, current_concurrency=r.max_concurrency,
            x_title="requested block size (tokens)", context=s.context, log_x=True,
            title="Over the block size"),
            key="budget.by_size", file_name="capacity_by_block_size.html")
    sweep = pd.DataFrame({"requested block size": sizes, "P": [p[2] for p in by_size],
                          **({"capacity (tokens)": [p[0] for p in by_size]} if history else {}),
                          "concurrency": [concurrency_value(p[1]) for p in by_size]})
    with st.expander("Block-size sweep as a table"):
        table(sweep, formats={"concurrency": "accounting"})
        st.download_button("Sweep as CSV", data=sweep.to_csv(index=False),
                           file_name="block_size_sweep.csv", mime="text/csv",
                           key="budget.csv", on_click="ignore", icon=":material/download:")
