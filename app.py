"""FlatKV Explorer: the Streamlit app. Navigation and the shared sidebar; pages live in pages/.

Run: ``streamlit run app.py``. The whole view (model, settings, page) lives in the URL.
"""

from __future__ import annotations

import streamlit as st

from flatkv.analysis import PLANNERS
from flatkv.app_state import CUSTOM_GPU, GPU_PRESETS, MAX_BLOCK_SIZE, MAX_TP
from flatkv.units import format_bytes, parse_size
from pages._common import bind, pop_notices, state, sync_url, user_errors

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


def size_text(n: int) -> str:
    """A byte count as the user would type it: 80GB, 12GiB, or plain bytes."""
    for scale, unit in ((10**12, "TB"), (2**40, "TiB"), (10**9, "GB"), (2**30, "GiB"),
                        (10**6, "MB"), (2**20, "MiB")):
        if n and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def sidebar() -> None:
    s = state()
    side = st.sidebar
    with user_errors():
        profile = s.profile()
        side.caption(f"Model: **{profile.name}** · {len(profile.layer_types)} cache layers")

    side.subheader("Memory", divider="gray")
    gpu = bind(side.selectbox, "gpu", "GPU", options=[*GPU_PRESETS, CUSTOM_GPU],
               help="Memory one GPU (one TP rank) offers, as nvidia-smi reports it.")
    if gpu == CUSTOM_GPU:
        bind(side.text_input, "gpu_memory", "GPU memory", to_widget=size_text,
             from_widget=lambda t: parse_size(t, field="GPU memory"),
             help="e.g. 80GB, 141GB, 79.2GiB or bytes")
    bind(side.slider, "mem_fraction", "Memory fraction", min_value=0.05, max_value=1.0,
         step=0.01, help="Share of the GPU memory the engine may use (vLLM's "
         "gpu_memory_utilization).")
    bind(side.text_input, "weights", "Model weights (all ranks)", to_widget=size_text,
         from_widget=lambda t: parse_size(t, field="weights"),
         help="Weights, activations and anything else resident; each TP rank holds 1/TP.")
    bind(side.number_input, "tp", "Tensor parallel (TP)", min_value=1, max_value=MAX_TP,
         step=1)
    with user_errors():
        budget = state().budget()
        side.metric("Cache budget per rank", format_bytes(budget.cache_bytes),
                    help=f"{budget.cache_bytes:,} B")

    side.subheader("Paging", divider="gray")
    bind(side.number_input, "block_size", "Block size (tokens)", min_value=1,
         max_value=MAX_BLOCK_SIZE, step=1, help="Requested tokens per page (vLLM --block-size).")
    bind(side.number_input, "alignment", "Alignment (0 = block size)", min_value=0,
         max_value=MAX_BLOCK_SIZE, step=1, to_widget=lambda v: v or 0,
         from_widget=lambda v: int(v) or None,
         help="An inflated page size is rounded up to a multiple of this.")
    bind(side.selectbox, "planner", "Planner", options=list(PLANNERS),
         format_func=lambda p: {"packed": "packed slabs", "per-component":
                                "one tensor per component"}[p])
    side.caption("The link in the address bar holds this whole view: copy it to share.")


nav = st.navigation(PAGES)
for notice in pop_notices():
    st.warning(notice, icon=":material/link_off:")
sidebar()
nav.run()
sync_url()
