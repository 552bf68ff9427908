"""FlatKV Explorer: the Streamlit app. Navigation and the shared sidebar; pages live in app_pages/
(not pages/: a pages/ folder puts streamlit in its older multipage mode until a first run of
st.navigation, so a link to /layout on a fresh server would skip this script).

Run: ``streamlit run app.py``. The whole view (model, settings, page) lives in the URL.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_pages._frame import frame
from app_pages._session import end_run, sync_url

# A local icon: a :material/...: one is fetched from fonts.gstatic.com, which fails offline.
st.set_page_config(page_title="FlatKV Explorer", layout="wide",
                   page_icon=str(Path(__file__).parent / "assets" / "favicon.png"))

PAGES = [
    # The default page: streamlit serves it at "/" (not at /model).
    st.Page("app_pages/model.py", title="Model", icon=":material/schema:", default=True,
            url_path="model-page"),  # served at "/"; "model" is MODEL_PATH's
    st.Page("app_pages/layout.py", title="Layout", icon=":material/view_week:",
            url_path="layout"),
    st.Page("app_pages/budget.py", title="Budget", icon=":material/memory:",
            url_path="budget"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:",
            url_path="compare"),
    st.Page("app_pages/gpu.py", title="GPU lab", icon=":material/speed:", url_path="gpu"),
]
# /model, as one types it from the other pages' paths: streamlit knows the default page only as
# "/", so this hidden page takes the path and the run below moves to Model, link and all.
MODEL_PATH = st.Page(lambda: None, title="Model", url_path="model", visibility="hidden")


nav = st.navigation([*PAGES, MODEL_PATH])
if nav is MODEL_PATH:
    st.switch_page(PAGES[0], query_params=st.query_params.to_dict())
page = nav.url_path or "model"  # the default page, Model, is served at "/"
frame(page, page_shows_budget=page != "model")  # the Model page has no budget of its own
nav.run()
sync_url(page=page)  # streamlit clears the query string on a page switch: write it back
end_run()
