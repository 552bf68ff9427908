"""Budget page: what-if over GPU memory and block size; capacity and concurrency curves."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages._common import bind, chart, current_analysis, state, table, user_errors
from flatkv import app_data, charts
from flatkv.analysis import sweep_block_sizes, sweep_budgets
from flatkv.app_state import MAX_CONTEXT
from flatkv.units import format_bytes


@st.cache_data(max_entries=64, show_spinner=False)
def _sweeps(layer_types, kv, state_items, window, block_size, alignment, budget, planner,
            context):
    """Both curves for one view (pure, cached): x values, capacities, concurrencies."""
    from flatkv.profile import CacheProfile

    profile = CacheProfile(layer_types, kv, dict(state_items), window)
    comps = profile.components()
    budgets = app_data.budget_candidates(budget)
    by_budget = sweep_budgets(comps, budgets, block_size=block_size, alignment=alignment,
                              planner=planner)
    sizes = app_data.block_size_candidates(block_size)
    by_size = sweep_block_sizes(comps, sizes, budget_bytes=budget,
                                alignment=None if alignment == block_size else alignment,
                                planner=planner)
    return (
        [b / 2**30 for b in budgets], [p.capacity_tokens for p in by_budget],
        app_data.concurrency_curve(profile, by_budget, context),
        sizes, [p.capacity_tokens for p in by_size],
        app_data.concurrency_curve(profile, by_size, context),
        [p.block_size for p in by_size],
    )


st.title("Budget")
with user_errors():
    s = state()
    b = s.budget()
    st.caption("GPU, memory fraction, weights and TP are in the sidebar.")
    st.info(b.explain(s.mem_fraction, s.tp), icon=":material/calculate:")
    bind(st.number_input, "context", "Context length (tokens per request)", min_value=1,
         max_value=MAX_CONTEXT, step=1024)
    s = state()
    a = current_analysis(s)
    profile = s.profile()
    per_request = app_data.pages_per_request(profile, a.totals.block_size, s.context)
    conc = app_data.max_concurrency(a.totals.num_blocks, per_request)
    c = st.columns(4)
    c[0].metric("Cache budget", format_bytes(b.cache_bytes), help=f"{b.cache_bytes:,} B")
    c[1].metric("Capacity (tokens)", f"{a.totals.capacity_tokens:,}")
    c[2].metric(f"Concurrency at {s.context:,} tokens", f"{conc:.2f}")
    c[3].metric("Pages per request", f"{sum(per_request.values()):,}",
                help=", ".join(f"{g}: {n:,}" for g, n in per_request.items()))
    st.caption(
        "Concurrency = blocks / pages one request holds: full attention ceil(L / P), sliding "
        "window ceil((W - 1) / P) + 1 (at most ceil(L / P)), state 1 page per request."
    )
    (bx, bcap, bconc, sx, scap, sconc, sp) = _sweeps(
        profile.layer_types, profile.kv_bytes_per_slot,
        tuple(profile.state_const_bytes.items()), profile.sliding_window, s.block_size,
        s.effective_alignment, b.cache_bytes, s.planner, s.context)
    left, right = st.columns(2)
    with left:
        chart(charts.sweep_figure(
            bx, bcap, bconc, current_x=b.cache_bytes / 2**30,
            current_capacity=a.totals.capacity_tokens, current_concurrency=conc,
            x_title="cache budget (GiB)", context=s.context, title="Over the budget"),
            key="budget.by_budget", file_name="capacity_by_budget.html")
    with right:
        chart(charts.sweep_figure(
            sx, scap, sconc, current_x=s.block_size,
            current_capacity=a.totals.capacity_tokens, current_concurrency=conc,
            x_title="requested block size (tokens)", context=s.context, log_x=True,
            title="Over the block size"),
            key="budget.by_size", file_name="capacity_by_block_size.html")
    sweep = pd.DataFrame({"requested block size": sx, "P": sp, "capacity (tokens)": scap,
                          "concurrency": [round(x, 2) for x in sconc]})
    with st.expander("Block-size sweep as a table"):
        table(sweep)
        st.download_button("Sweep as CSV", data=sweep.to_csv(index=False),
                           file_name="block_size_sweep.csv", mime="text/csv",
                           key="budget.csv", on_click="ignore", icon=":material/download:")
