"""Model page: pick a model or edit one; shows its cache layers and their bytes."""

from __future__ import annotations

import json

import streamlit as st

from app_pages._common import chart, set_widget, state, table, update, user_errors
from flatkv import app_model, charts
from flatkv.app_model import CUSTOM, RawModel

SOURCES = ("Example model", "Edit by hand", "Load JSON")
EDITOR = ("edit.layers", "edit.kv", "edit.state", "edit.window")


def _fill_editor(raw: RawModel) -> None:
    st.session_state["edit.layers"] = raw.layers
    st.session_state["edit.kv"] = raw.kv_bytes_per_slot
    st.session_state["edit.state"] = app_model.format_state_text(raw.state)
    st.session_state["edit.window"] = raw.sliding_window or 0


def _pick_example() -> None:
    name = st.session_state["w.model"]
    update(model=name, raw=None)
    _fill_editor(RawModel.from_profile(app_model.EXAMPLES[name]))


def _apply_edit() -> None:
    ss = st.session_state
    try:
        raw = RawModel(
            layers=ss["edit.layers"],
            kv_bytes_per_slot=int(ss["edit.kv"]),
            state=app_model.parse_state_text(ss["edit.state"]),
            sliding_window=int(ss["edit.window"]) or None,
        )
        raw.profile()
    except ValueError as exc:
        ss["edit.error"] = str(exc)
        return
    ss.pop("edit.error", None)
    update(model=CUSTOM, raw=raw)


def _load_json(text: str) -> None:
    profile = app_model.profile_from_json(text)
    raw = RawModel.from_profile(profile)
    update(model=CUSTOM, raw=raw)
    _fill_editor(raw)
    st.session_state.pop("edit.error", None)


def picker() -> None:
    s = state()
    source = st.segmented_control("Source", SOURCES, key="model.source",
                                  default=SOURCES[1] if s.model == CUSTOM else SOURCES[0])
    if any(k not in st.session_state for k in EDITOR):
        _fill_editor(s.raw or RawModel.from_profile(s.profile()))
    if source == SOURCES[0]:
        names = app_model.model_names()
        if st.session_state.get("w.model") not in names:
            set_widget("model", s.model if s.model in names else names[0])
        st.selectbox("Model", names, key="w.model", on_change=_pick_example,
                     help="Built-in examples with per-rank bytes from SPEC.md (TP=1).")
        if s.model == CUSTOM:
            st.info("The current model is the hand-edited one; pick an example to replace it.")
    elif source == SOURCES[1]:
        c1, c2 = st.columns([3, 1])
        c1.text_input("Layer pattern", key="edit.layers", on_change=_apply_edit,
                      help="e.g. (3*linear,full)*12 or full*32; kinds: full, sliding, linear")
        c2.number_input("KV bytes per token per layer", key="edit.kv", min_value=0, step=1,
                        on_change=_apply_edit)
        c3, c4 = st.columns([3, 1])
        c3.text_input("State tensors of one linear layer (bytes)", key="edit.state",
                      on_change=_apply_edit, help="name=bytes pairs, e.g. conv=49152,ssm=2MiB")
        c4.number_input("Sliding window (0 = none)", key="edit.window", min_value=0, step=1,
                        on_change=_apply_edit)
        if st.session_state.get("edit.error"):
            st.error(st.session_state["edit.error"])
        elif s.model != CUSTOM:
            st.caption(f"Editing a copy of {s.model}: change a field to make it the model.")
    else:
        upload = st.file_uploader("Model JSON (exported from this page)", type=["json"])
        pasted = st.text_area("…or paste it", key="model.paste", height=120)
        if st.button("Load", key="model.load", type="primary"):
            text = upload.getvalue() if upload is not None else pasted
            if not text:
                st.error("Nothing to load: upload a model JSON file or paste one.")
            else:
                _load_json(text)
                st.rerun()


def summary() -> None:
    s = state()
    profile = s.profile()
    st.subheader(profile.name)
    kinds = app_model.kind_summary(profile)
    cols = st.columns(4)
    cols[0].metric("Cache layers", f"{len(profile.layer_types):,}")
    for col, row in zip(cols[1:], kinds):
        col.metric(row["kind"][0].upper() + row["kind"][1:], f"{row['layers']:,} layers")
    table(kinds)
    layers = app_model.layer_rows(profile)
    chart(charts.layer_strip(layers, title="Cache layers in model order"), key="model.strip",
          file_name="layers.html")
    with st.expander(f"Per-layer table ({len(layers)} cache layers)"):
        table(layers, height=300)
    st.download_button(
        "Model as JSON", data=json.dumps(app_model.profile_to_dict(profile), indent=2),
        file_name=f"{profile.name.replace(' ', '_')}.json", mime="application/json",
        key="model.export", on_click="ignore", icon=":material/download:",
        help="Load it again with Source: Load JSON.",
    )


st.title("Model")
st.caption("The model chosen here is the current model on every page.")
with user_errors():
    picker()
with user_errors():
    summary()
