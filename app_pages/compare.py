"""Compare page: every strategy side by side for the current model and budget."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app_pages._common import bind, chart, current_analysis, state, table, user_errors
from flatkv import app_data, charts
from flatkv.app_state import MAX_CONTEXT


def rows() -> list[app_data.CompareRow]:
    s = state()
    profile = s.profile()
    return [app_data.planner_row(current_analysis(s, planner=p), profile, s.context)
            for p in ("packed", "per-component")]


st.title("Compare")
st.caption("Engine strategies (vLLM, SGLang, slab aliasing, two-level pages) join this table "
           "when flatkv.strategies lands; today it compares our two planners.")
with user_errors():
    bind(st.number_input, "context", "Context length (tokens per request)", min_value=1,
         max_value=MAX_CONTEXT, step=1024)
    s = state()
    result = rows()
    shown = [r for r in result if r.applies]
    frame = pd.DataFrame([r.table_row() for r in result])
    table(frame)
    names = [r.name for r in shown]
    chart(charts.capacity_bars(names, [r.capacity_tokens for r in shown],
                               [r.max_concurrency for r in shown], context=s.context),
          key="compare.capacity", file_name="capacity.html")
    chart(charts.breakdown_bars(names, [r.breakdown for r in shown],
                                title="Where the budget goes"),
          key="compare.breakdown", file_name="breakdown.html")
    st.subheader("Formulas", divider="gray")
    for r in result:
        with st.expander(r.name):
            st.code("\n".join(r.formulas), language=None)
    c1, c2 = st.columns(2)
    c1.download_button("Comparison as CSV", data=frame.to_csv(index=False),
                       file_name="comparison.csv", mime="text/csv", key="compare.csv",
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Comparison as JSON", data=json.dumps(
        [{**r.table_row(), "breakdown": dict(r.breakdown), "formulas": list(r.formulas)}
         for r in result], indent=2), file_name="comparison.json", mime="application/json",
        key="compare.json", on_click="ignore", icon=":material/download:")
