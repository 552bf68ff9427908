"""GPU lab page: placeholder until flatkv.gpu lands (its own issue)."""

import streamlit as st

st.title("GPU lab")
st.info(
    "Coming with the GPU lab: on a machine with a CUDA GPU, this page allocates the current "
    "plan's slot tensors and times the page moves an engine makes (gather, scatter, host "
    "mirror, state-row copy) against a plain copy of the same bytes, reporting bytes read + "
    "written per second. Without a GPU it says so and shows nothing else.",
    icon=":material/construction:",
)
