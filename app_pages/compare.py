"""Compare page: every engine strategy side by side for the current model and budget."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app_pages._common import (
    chart,
    context_widget,
    current_strategies,
    engine_options,
    state,
    table,
    user_errors,
)
from flatkv import app_data, charts
from flatkv.app_data import markdown_literal as literal
from flatkv.strategies.sglang import swa_pool as sglang_swa_pool
from flatkv.units import exact_bytes


def charts_of(shown, applies, frame, has_history: bool, context: int) -> None:
    """Capacity and concurrency bars, and where each layout's budget goes."""
    names = [r.name for r in shown]
    chart(charts.capacity_bars(names, [r.capacity_tokens or 0 for r in shown] if has_history
                               else None,
                               [r.max_concurrency or 0.0 for r in shown], context=context),
          key="compare.capacity", file_name="capacity.html")
    chart(charts.breakdown_bars(names, [r.breakdown for r in shown],
                                title="Where the budget goes"),
          key="compare.breakdown", file_name="breakdown.html")
    st.caption("By use: in one page-id space each page id goes to one group, in proportion to "
               "the pages a request needs in each at this context length; its rows in the other "
               "groups' tensors are dead weight. Layout's \"Bytes by group, component and "
               "layer\" splits the same budget by tensor instead.")
    table(applies[["strategy"] + [c for c in frame.columns if c.endswith(" (B)")]])


st.title("Compare")
with user_errors():
    s = state()
    b = s.budget()
    st.caption(f"{literal(s.profile().name)} · budget {exact_bytes(b.cache_bytes)} per rank "
               f"({b.derivation(s.mem_fraction)}) · "
               f"block size {s.block_size:,}, alignment {s.effective_alignment:,} · "
               f"{s.engine_options_text(s.acting_engine_options())}")
    context_widget()
    engine_options()
    s = state()
    results = current_strategies(s)
    rows = [app_data.CompareRow.from_result(r) for r in results]
    shown = [r for r in rows if r.applies]
    # object columns keep whole numbers whole where a figure does not apply (None, not NaN)
    frame = pd.DataFrame([r.table_row() for r in rows], dtype=object)
    applies = frame[frame["applies"].astype(bool)]
    # a state-only model keeps no token history: no capacity column or chart
    has_history = s.profile().has_attention
    columns = [c for c in app_data.HEADLINE_COLUMNS
               if has_history or c != "capacity (tokens)"]
    if not shown:  # first what is wrong and how to fix it, then each layout's reason
        how = s.budget().how_to_raise
        st.error(f"No layout fits this budget: each says why below. {how[0].upper()}{how[1:]}.")
    else:
        # accounting: thousands separators and always two decimals (65.50, 391,483.00)
        table(applies[columns], formats={"concurrency": "accounting"})
    for r in rows:
        if not r.applies:
            st.caption(f"**{r.name}** does not apply: {r.reason}")
    if shown:
        charts_of(shown, applies, frame, has_history, s.context)
    # how to read the figures, under the charts they explain too
    st.caption(("Capacity: the history the pool holds beside one request's state, counted "
                "the same way for every paged layout; SGLang: its token pool, which its "
                "static split of the budget fixes. "
                if has_history else "No capacity in tokens: the model has no attention layer, "
                "so it keeps no token history, only a constant state per request. ")
               + "Concurrency: requests of this context length the layout holds at once, "
               "counted with the engine's pages per request. vLLM and SGLang as they serve "
               "without speculative decoding: MTP or EAGLE adds draft layers and state pages "
               "(README).")
    for note in (app_data.dead_weight_text(results),
                 app_data.sliding_capacity_text(s.profile()) if has_history else "",
                 app_data.logged_capacity_text(results), app_data.two_pool_blocks_text(results),
                 app_data.sglang_state_text(results, s.profile()),
                 app_data.short_of_one_request_text(results, s.context)):
        if note:
            st.caption(note)
    if "sliding_attention" in s.profile().layer_types:
        own_pool, why = sglang_swa_pool(s.profile(), s.strategy_options())
        st.caption(("SGLang keeps the sliding-window layers in a token pool of their own"
                    if own_pool else "SGLang keeps every token of every layer in one pool")
                   + f": {literal(why)}. Its sliding-window pool in the "
                   "engine options changes this.")
    if s.mamba_cache_mode == "all" and s.profile().has_state:
        st.caption("Mamba cache mode all: every paged layout keeps a state snapshot every P "
                   "tokens of its own P (vLLM first aligns its P to lcm(chunk, A)), so a small "
                   "P, such as two-level pages' requested block size, means many snapshots.")
    st.subheader("Formulas", divider="gray")
    for r in rows:
        with st.expander(r.name + ("" if r.applies else " (does not apply)")):
            if not r.applies:
                st.caption(r.reason)
                continue
            if r.why_block_size:
                st.caption(r.why_block_size)
            st.code("\n".join(r.formulas), language=None, wrap_lines=True)
    c1, c2 = st.columns(2)
    c1.download_button("Comparison as CSV", data=frame.to_csv(index=False),
                       file_name="comparison.csv", mime="text/csv", key="compare.csv",
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Comparison as JSON",
                       data=lambda: json.dumps([r.to_dict() for r in results], indent=2),
                       file_name="comparison.json", mime="application/json",
                       key="compare.json", on_click="ignore", icon=":material/download:")
