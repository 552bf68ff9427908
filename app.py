"""FlatKV Explorer: the Streamlit app. Navigation and the shared sidebar; pages live in pages/.

Run: ``streamlit run app.py``. The whole view (model, settings, page) lives in the URL.
"""

from __future__ import annotations

import streamlit as st

from pages._common import FRAMED_KEY, frame, sync_url

st.set_page_config(page_title="FlatKV Explorer", page_icon=":material/view_module:",
                   layout="wide")

PAGES = [
    st.Page("pages/model.py", title="Model", icon=":material/schema:", url_path="model",
            default=True),
    st.Page("pages/layout.py", title="Layout", icon=":material/view_week:", url_path="layout"),
    st.Page("pages/budget.py", title="Budget", icon=":material/memory:", url_path="budget"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:",
            url_path="compare"),
    st.Page("pages/gpu.py", title="GPU lab", icon=":material/speed:", url_path="gpu"),
]


nav = st.navigation(PAGES)
st.session_state[FRAMED_KEY] = True
try:
    frame()
    nav.run()
finally:
    del st.session_state[FRAMED_KEY]
sync_url()
