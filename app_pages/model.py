"""Model page: pick a preset, load a config.json or a model JSON, or edit one by hand; shows
the cache layers and their bytes. The model chosen here is the current model on every page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import streamlit as st

from app_pages._figures import TP_REFUSED, refuse_draft, tp_refusal, use_spec
from app_pages._frame import EXPANDER_COLUMN_PX, MAIN_COLUMN_PX, chart, metric_row, table
from app_pages._session import (
    error_text,
    forget_kept,
    kept_text,
    show_value,
    state,
    update,
    user_errors,
    whole_number,
    whole_number_field,
)
from flatkv import app_model, charts
from flatkv.app_model import (
    CUSTOM,
    CUSTOM_SPEC,
    DTYPE_FIELDS,
    KIND_TEMPLATES,
    OPTIONAL_FIELDS,
    RAW_LABELS,
    RawModel,
    SpecDraft,
    field_label,
    widget_label,
)
from flatkv.app_state import DEFAULT_CONTEXT
from flatkv.dtypes import KNOWN_DTYPES, STATE_DTYPES, UNSTORED_KV_HELP, dtype_label
from flatkv.hf_config import spec_from_hf_config
from flatkv.hf_hub import config_from_pasted_text
from flatkv.hf_resolve import (
    SUPPORTED_MODEL_TYPES,
    TYPES_LISTED_ON_PAGE,
    on_the_model_page,
)
from flatkv.jsonfile import parse_json_object
from flatkv.models import FIELD_MINIMUMS, ModelSpec
from flatkv.patterns import parse_layer_pattern
from flatkv.presets import preset_class_note
from flatkv.profile import MLA_KIND_NAME, profile_to_dict
from flatkv.tp_split import file_words
from flatkv.units import count_text, format_bytes, sentence_case
from flatkv.units import markdown_literal as literal

# the raw-bytes widgets
RAW_KEYS = ("edit.layers", "edit.kv", "edit.swa_kv", "edit.state", "edit.window",
            "edit.chunk")
ss = st.session_state


# ---- raw profile (bytes) -------------------------------------------------------------------



def _fill_raw(raw: RawModel) -> None:
    ss["edit.layers"] = raw.layers
    ss["edit.kv"] = raw.kv_bytes_per_slot
    ss["edit.swa_kv"] = raw.sliding_kv_bytes_per_slot or 0
    ss["edit.state"] = app_model.format_state_text(raw.state)
    ss["edit.window"] = raw.sliding_window or 0
    ss["edit.chunk"] = raw.attention_chunk_size or 0
    # the model edited: what no widget shows (kernel block size, architectures, ssm element
    # size, the config's mamba_ssm_dtype and chunk, the KV dtype and split:
    # profile.CARRIED_FIELDS) is carried from it
    ss["edit.raw"] = raw
    ss.pop("edit.error", None)  # an entry refused before is gone from the fields: its error too


def _whole(key: str, label: str, least: int = 0) -> int:
    """A number field's whole value; an emptied field is refused (read as 0, a sliding window
    or chunk would be silently turned off), and so is one under ``least`` (1 for a size that
    has no "0 = none"), in the field's own words."""
    value = ss[key]
    if value is None:
        raise ValueError(f"{label} is empty: give a whole number")
    value = whole_number(label, value, least)  # a whole_number_field: a fraction as typed
    if value < least:  # the fields take any number, so that this says what is wrong
        raise ValueError(f"{label} is {value:,}: give a whole number of {least} or more")
    return value


def _apply_raw() -> None:
    try:
        edited = ss.get("edit.raw") or RawModel("", 0)
        layers = parse_layer_pattern(ss["edit.layers"])
        if edited.kv_shared_layer_types and layers != parse_layer_pattern(edited.layers):
            # the kv-shared layers read layers of the model edited: not those of other layers
            # (the same layers written another way keep them)
            edited = replace(edited, kv_shared_layer_types=())
        if edited.architectures and set(layers) != set(parse_layer_pattern(edited.layers)):
            # other kinds of layer are another model: not the edited one's class (a Llama's
            # name on a hybrid of state layers), which engines key their pools on
            edited = replace(edited, architectures=())
        raw = replace(edited, layers=ss["edit.layers"],
                      sliding_window=_whole("edit.window", RAW_LABELS["sliding_window"]) or None,
                      attention_chunk_size=_whole(
                          "edit.chunk", RAW_LABELS["attention_chunk_size"]) or None,
                      ).with_sliding_kv(_whole(
                          "edit.swa_kv", RAW_LABELS["sliding_kv_bytes_per_slot"]) or None,
                      ).with_kv(_whole("edit.kv", RAW_LABELS["kv_bytes_per_slot"])).with_state(
            app_model.parse_state_text(ss["edit.state"]))
        raw.profile()
    except ValueError as exc:
        ss["edit.error"] = app_model.in_raw_labels(str(exc))
        return
    ss.pop("edit.error", None)
    if raw != edited or state().raw is not None:  # (the model's own bytes typed back: it stays)
        update(model=CUSTOM, raw=raw, spec=None)


def _drop_ssm_element() -> None:
    """The ssm tensor's bytes taken as given from now on (the box cleared): its element size
    and dtype dropped."""
    ss["edit.raw"] = replace(ss["edit.raw"], ssm_element_bytes=None, ssm_dtype=None)
    _apply_raw()


# ---- spec editor -----------------------------------------------------------------------------
# The draft (app_model.SpecDraft) is the editor's source of truth: every run shows it in the
# widgets (show_value), every change makes a new draft, and a draft that builds a valid model
# becomes the model.

DRAFT = "spec.draft"
# the number field whose entry was refused (-5, emptied): it keeps showing that entry beside the
# error, so that typing the draft's value back is a change that clears it
REFUSED = "spec.refused"
# where the last edit was made: its error shows there, in view of the field just edited, not a
# screen away. Tuples, so that no kind's name (a kind may be named "top") is taken for a place.
EDITED_AT = "spec.edited_at"
ROWS_ABOVE = ("rows above the kinds",)
KIND_LIST = ("kinds added or removed",)


class _TpDoesNotSplit(ValueError):
    """A model that plans at TP 1 but not at the sidebar's TP (``_use_spec``): its draft is
    tried again as the TP changes (``TP_REFUSED``)."""


def _kind_place(kind: str) -> tuple[str, str]:
    return ("kind", kind)


def _spec_key(field: str, kind: str | None = None) -> str:
    return f"spec.{kind}.{field}" if kind else f"spec.{field}"


def _set_draft(draft: SpecDraft) -> None:
    """Keep the draft; make it the current model when it is complete and valid."""
    ss[DRAFT] = draft
    ss.pop(TP_REFUSED, None)
    try:
        spec = draft.to_spec()
        _use_spec(spec, drafted=True)
    except _TpDoesNotSplit as exc:
        ss["spec.error"] = str(exc)
        refuse_draft(spec)
        return
    except ValueError as exc:
        ss["spec.error"] = str(exc)
        return
    ss.pop("spec.error", None)


def _edited(change) -> bool:
    """A widget callback: the draft changed by ``change(draft)``; a bad change shows why."""
    try:
        old = ss[DRAFT]
        draft = change(old)
    except ValueError as exc:
        ss["spec.error"] = str(exc)
        return False
    ss.pop(REFUSED, None)
    # at the sidebar's TP: one that does not split the model (TP 3 for 16 heads) has none,
    # and the page says so above the editor
    current = state().plannable_tp()[0].model_spec()
    if draft == old and current is not None and SpecDraft.from_spec(current) == old:
        # the value it had (a refused entry typed back) and the model in step with the draft:
        # the model stays as loaded (its source and notes kept), and nothing is wrong
        ss.pop("spec.error", None)
        return True
    draft = draft.kv_shared_kept_from(old)
    _set_draft(draft.named_for_its_figures())
    return True


def _edit_text(field: str) -> None:
    ss[EDITED_AT] = ROWS_ABOVE
    _edited(lambda d: replace(d, **{field: ss[_spec_key(field)]}))


def _edit_name() -> None:
    """The Name field's callback: an emptied name is refused in its field (it titled every
    page "edited model" unasked), kept empty beside the error until a name is typed."""
    if not ss[_spec_key("name")].strip():
        ss[EDITED_AT] = ROWS_ABOVE
        ss["spec.error"] = ("Name is empty: type the model's name (every page titles its "
                            "figures with it)")
        ss[REFUSED] = _spec_key("name")
        return
    _edit_text("name")


def _edit_number(key: str, label: str, change, least: int = 0) -> None:
    """A whole-number field's callback: the draft changed by ``change(draft, value)``, or the
    entry refused, kept in its field beside the error (``REFUSED``)."""
    try:
        value = _whole(key, label, least)
    except ValueError as exc:
        ss["spec.error"] = str(exc)
        ss[REFUSED] = key
        return
    _edited(lambda d: change(d, value))


def _edit_architectures() -> None:
    ss[EDITED_AT] = ROWS_ABOVE
    _edited(lambda d: d.with_architectures(ss[_spec_key("architectures")]))


def _edit_optional(field: str) -> None:
    """A whole-number field of the draft where 0 means none (query heads, the mamba chunk,
    the max model len)."""
    ss[EDITED_AT] = ROWS_ABOVE
    _edit_number(_spec_key(field), field_label(field),
                 lambda d, value: d.with_optional(field, value))


def _edit_field(kind: str, field: str) -> None:
    ss[EDITED_AT] = _kind_place(kind)
    _edit_number(_spec_key(field, kind), f"{kind}: {field_label(field)}",
                 lambda d, value: d.with_field(kind, field, value),
                 least=0 if field in OPTIONAL_FIELDS else FIELD_MINIMUMS.get(field, 1))


def _add_kind() -> None:
    ss[EDITED_AT] = KIND_LIST
    if _edited(lambda d: d.with_kind(ss["spec.new.type"], ss["spec.new.name"])):
        ss["spec.new.name"] = ""


def _remove_kind(kind: str) -> None:
    ss[EDITED_AT] = KIND_LIST
    _edited(lambda d: d.without_kind(kind))


def _start_empty() -> None:
    ss[DRAFT] = SpecDraft()
    ss.pop("spec.error", None)
    ss.pop(REFUSED, None)
    ss.pop(TP_REFUSED, None)  # the refused draft is gone: no retry of the empty one at a new TP


def _use_spec(spec: ModelSpec, tp: int | None = None, *, drafted: bool = False) -> None:
    """Make ``spec`` the current model at ``tp`` (None: the sidebar's); ValueError, and nothing
    changes, when it does not plan there (a loaded config.json or model JSON as much as an
    edit, ``drafted``: the editor's draft, which it keeps)."""
    at = state().tp if tp is None else tp
    spec.with_options(tp=1).profile()  # an error of the model itself is not the TP's
    app_model.check_link_size(spec)  # the link written must reopen it
    try:
        if at != 1:
            spec.with_options(tp=at).profile()
    except ValueError as exc:  # (a model file's own TP was checked as it was read)
        raise _TpDoesNotSplit(tp_refusal(exc, spec if drafted else None)) from None
    if at != state().tp:
        update(tp=at)
    use_spec(spec, drafted=drafted)


def _show_draft(draft: SpecDraft) -> None:
    """Set every editor widget from the draft (before they are drawn), where it differs, but
    the field whose entry was refused, which shows it until it changes."""
    def show(key: str, value) -> None:
        show_value(key, value, write=key != ss.get(REFUSED))

    show(_spec_key("name"), draft.name)
    show(_spec_key("pattern"), draft.pattern)
    show(_spec_key("architectures"), ", ".join(draft.architectures))
    for d in DTYPE_FIELDS:
        show(_spec_key(d), getattr(draft, d))
    show(_spec_key("attention_heads"), draft.attention_heads or 0)
    show(_spec_key("mamba_chunk_size"), draft.mamba_chunk_size or 0)
    show(_spec_key("max_model_len"), draft.max_model_len or 0)
    for kind, geometry in draft.kinds:
        for field, value in geometry:
            if field != "kind":
                show(_spec_key(field, kind), value or 0)


FIELDS_PER_ROW = 3  # a kind's geometry fields
# A row of the editor's fields keeps its boxes on one line where a label wraps and the others do
# not (at 1000 px "Layer pattern (over the kind names below)" took two lines and its box sat
# 21 px below Name's). Bottom alignment is safe here: the editor's errors are drawn under the
# rows (``_spec_error_at``), never in a column, where one would push its row's boxes down.
FIELD_ROW = {"vertical_alignment": "bottom"}
# which layers' tensors each dtype sizes (a kind without the tensor ignores it)
_DTYPE_HELP = {
    "kv_dtype": "K and V of attention layers, MLA's latent (an indexer's keys stay fp8); "
                f"{UNSTORED_KV_HELP}.",
    "conv_dtype": "The conv state of GDN, Mamba and short-conv layers (lightning attention "
                  "keeps none).",
    "ssm_dtype": "The recurrent state of GDN, Mamba and lightning attention layers (a short "
                 "conv keeps none).",
}


def _spec_error_at(place: tuple[str, ...]) -> None:
    """The draft's error, drawn here if the edit that caused it was made here (EDITED_AT)."""
    if ss.get("spec.error") and ss.get(EDITED_AT, KIND_LIST) == place:
        st.error(error_text(ss["spec.error"].rstrip(".")) + ". Until it is fixed, every page (and "
                 "the summary below) shows the last valid model.")


def spec_editor(spec: ModelSpec | None) -> None:
    """The hand editor: the draft of ``spec`` (refilled where the model changed), the model's
    own fields, each kind's fields with their errors where they were made, a row to add a
    kind, and what the draft still lacks."""
    draft = _filled_draft(spec)
    _show_draft(draft)
    _model_fields()
    _spec_error_at(ROWS_ABOVE)
    for name, geometry in draft.kinds:
        _kind_fields(name, geometry)
    _add_kind_row()
    _draft_footer(draft)


def _filled_draft(spec: ModelSpec | None) -> SpecDraft:
    """The session's draft, made afresh from ``spec`` (or empty) when the model or its spec
    changed since it was filled, its error and refusal dropped with it."""
    key = (state().model, state().spec)
    if DRAFT not in ss or ss.get("spec.filled") != key:
        ss[DRAFT] = SpecDraft() if spec is None else SpecDraft.from_spec(spec)
        ss.pop("spec.error", None)
        ss.pop(REFUSED, None)
        ss.pop(TP_REFUSED, None)
        ss["spec.filled"] = key
    return ss[DRAFT]


def _model_fields() -> None:
    """The fields of the model as a whole: name, layer pattern, dtypes, and the optional
    attention heads, mamba chunk and max model len."""
    # the fields of a row on one line (``FIELD_ROW``): at 1000 px the pattern's label wraps
    c1, c2 = st.columns(2, **FIELD_ROW)  # [1, 2] cut "Qwen3-Next-80B-A3B (edited)" at 1000 px
    c1.text_input("Name", key="spec.name", on_change=_edit_name,
                  placeholder="required")
    c2.text_input("Layer pattern (over the kind names below)", key="spec.pattern",
                  on_change=_edit_text, args=("pattern",),
                  help="e.g. (3*gdn,full)*12 or (mamba2,full)*2; the names are the kinds")
    arch, _ = st.columns(2, **FIELD_ROW)
    arch.text_input("Architecture (empty = none)", key=_spec_key("architectures"),
                    on_change=_edit_architectures, placeholder="e.g. Qwen3NextForCausalLM",
                    help="The config.json's architectures (class names, comma-separated), as "
                    "loaded. vLLM and SGLang choose pools, defaults and refusals by the class "
                    "(SGLang's sliding-window pool and model list, vLLM's mamba cache mode "
                    "fallback): a model made from a preset keeps the preset's until changed "
                    "here. Empty: a model of no class the engines list, sized by its layers "
                    "alone.")
    for col, d in zip(st.columns(len(DTYPE_FIELDS), **FIELD_ROW), DTYPE_FIELDS):
        col.selectbox(widget_label(d.replace("_", " ")),
                      KNOWN_DTYPES if d == "kv_dtype" else STATE_DTYPES,
                      key=_spec_key(d), format_func=dtype_label,
                      on_change=_edit_text, args=(d,), help=_DTYPE_HELP[d])
    # no max_value: streamlit keeps an entry past it on screen without sending it, and the
    # error under the fields went on naming the entry before (the model's check says the bound)
    heads, chunk, length = st.columns(3, **FIELD_ROW)
    heads.number_input("Attention heads (0 = not checked)", key=_spec_key("attention_heads"),
                       **whole_number_field(), value=None, on_change=_edit_optional,
                       args=("attention_heads",),
                       help="The config's num_attention_heads (query heads). No cache holds "
                       "them, but engines split them over TP and refuse a TP that does not "
                       "divide them.")
    chunk.number_input("Mamba chunk, tokens (0 = none)", key=_spec_key("mamba_chunk_size"),
                       **whole_number_field(64), value=None,
                       on_change=_edit_optional, args=("mamba_chunk_size",),
                       help="The config's mamba_chunk_size / chunk_size (128 or 256 in Mamba2 "
                       "configs): vLLM aligns P to it in mamba cache mode all, 2,048 with none. "
                       "Only a model with state layers reads it.")
    length.number_input("Max model len, tokens (0 = as loaded)", key=_spec_key("max_model_len"),
                        **whole_number_field(1024), value=None,
                        on_change=_edit_optional, args=("max_model_len",),
                        help="vLLM's default --max-model-len: the config's "
                        "max_position_embeddings, times a rope scaling factor where one "
                        "applies. Every page counts a request at it until a context is typed. "
                        "0 (or the length loaded) goes back to the model's as loaded: its "
                        "config's, or the 2,048 vLLM assumes for a config that gives none (a "
                        "link reopens a typed length as the one loaded); a model with no "
                        f"config then has none, and the pages count at {DEFAULT_CONTEXT:,}.")


def _kind_fields(name: str, geometry: tuple[tuple[str, object], ...]) -> None:
    """One kind's heading with its Remove button, its fields three a row, and the draft's
    error where the edit that caused it was made in this kind."""
    kind = dict(geometry)["kind"]
    fields = [f for f, _ in geometry if f != "kind"]
    # button columns wide enough for their labels in a 1000 px window (else "Rem…")
    head, remove = st.columns([3, 1], vertical_alignment="bottom")
    head.markdown(f"**{literal(name)}** · {kind}")
    remove.button("Remove", key=f"spec.{name}.remove", on_click=_remove_kind, args=(name,),
                  icon=":material/delete:", type="tertiary",
                  help="Remove this kind and its layers")
    # three fields a row: five in one row cut 128 to "12" beside the field's buttons at
    # 1000 px
    cols = [col for start in range(0, len(fields), FIELDS_PER_ROW)
            for col in st.columns(FIELDS_PER_ROW, **FIELD_ROW)][:len(fields)]
    for col, field in zip(cols, fields):
        none = " (0 = none)" if field in OPTIONAL_FIELDS else ""
        col.number_input(widget_label(field_label(field)) + none,
                         key=_spec_key(field, name),
                         **whole_number_field(), value=None, on_change=_edit_field,
                         args=(name, field))
    _spec_error_at(_kind_place(name))


def _add_kind_row() -> None:
    """The bordered row that adds a kind: its type, its name, the button."""
    with st.container(border=True):
        a, b, c3 = st.columns([2, 2, 1.3], vertical_alignment="bottom")
        a.selectbox("New kind", list(KIND_TEMPLATES), key="spec.new.type")
        b.text_input("Its name", key="spec.new.name", placeholder="e.g. full, gdn, mamba2",
                     help="The name the layer pattern uses; empty: a name from the type.")
        c3.button("Add kind", key="spec.add", on_click=_add_kind, icon=":material/add:")


def _draft_footer(draft: SpecDraft) -> None:
    """Below the kinds: an error made in a place no longer drawn, what an empty or unbuilt
    draft lacks, and how editing works, beside Start from scratch."""
    drawn = (ROWS_ABOVE, *(_kind_place(name) for name, _ in draft.kinds))
    if ss.get(EDITED_AT, KIND_LIST) not in drawn:  # kinds added or removed, or a kind now gone
        _spec_error_at(ss.get(EDITED_AT, KIND_LIST))
    if not ss.get("spec.error") and not draft.kinds:
        st.info("No kinds yet: add one above, then write the layer pattern over the names. "
                "The current model stays until the draft is complete.")
    for note in draft.unbuilt_kind_notes():
        st.warning(literal(note), icon=":material/warning:")
    left, right = st.columns([2, 1], vertical_alignment="center")
    left.caption("Heads, dims and state shapes per kind; TP is in the sidebar. Any change makes "
                 "an edited copy, carried whole in the link; the model changes when the draft "
                 "is complete.")
    right.button("Start from scratch", key="spec.scratch", on_click=_start_empty,
                 icon=":material/restart_alt:")


# ---- page -------------------------------------------------------------------------------------


def _pick_preset() -> None:
    if ss["w.model"] is not None:
        update(model=ss["w.model"], raw=None, spec=None)


def _preset_source(s) -> None:
    names = app_model.model_names()
    # no preset shown while the model is not one: any preset picked then is a change, the one
    # last shown included
    show_value("w.model", s.model if s.model in names else None)
    st.selectbox("Preset", names, key="w.model", on_change=_pick_preset,
                 placeholder="Pick a preset",
                 help="Bundled model specifications (assets/presets): layer kinds, head "
                 "geometry, state shapes and dtypes from each model's config.json.")
    if s.model not in names:
        st.info("The current model is not a preset; pick one to replace it.")


@contextmanager
def _nothing_loaded_on_error(what: str) -> Iterator[None]:
    """A load that fails says, beside why, that the current model stays on every page: the
    page below still shows it, which must not read as the config's figures. A model in raw
    bytes is said to be one: its name, custom on every page, alone read as no model at all."""
    try:
        yield
    except ValueError as exc:
        said = on_the_model_page(exc)  # what to do here, not on the command line
        said = said if said.endswith(".") else f"{said}."
        raise ValueError(f"{said} No {what} was loaded: every page still shows "
                         f"{_current_model_words('the model before')}.") from None


def _current_model_words(unplannable: str) -> str:
    """The current model as a note names it: its name at TP 1 where the sidebar's TP does not
    split it, as the summary shows it; a model in raw bytes said to be one (its name, custom
    on every page, alone read as no model at all); ``unplannable`` for a model that plans at
    no TP (the summary says why)."""
    try:
        current = state().plannable_tp()[0].profile().name
    except ValueError:
        return unplannable
    return f"the model given in raw bytes ({current})" if state().model == CUSTOM else current


# + a pasted box's key: the text a Load read from it, and the model that load made current
LOADED_FROM = "flatkv.loaded_from."


def _loaded_from(key: str, text: str) -> None:
    """Record that ``text`` in the box ``key`` is what the current model was loaded from."""
    s = state()
    ss[LOADED_FROM + key] = (text, s.model, s.spec, s.raw)


def _unloaded_note(key: str, text: str) -> None:
    """Under a paste box whose text is not the current model's (pasted and not loaded, kept
    through a trip to another page; or loaded, then another model picked): a line saying so,
    as the summary below goes on showing another model beside the pasted text."""
    s = state()
    if text.strip() and ss.get(LOADED_FROM + key) != (text, s.model, s.spec, s.raw):
        current = literal(_current_model_words("the model before"))
        st.caption(f"Not loaded: every page shows {current} until you click Load.")


def _config_source(s) -> None:
    upload = st.file_uploader("Hugging Face config.json", type=["json"], key="hf.upload")
    pasted = kept_text(st.text_area, "…or paste it", "hf.paste", height=140)
    _unloaded_note("hf.paste", pasted)
    if ss.pop("hf.loaded", False):  # a name names one load, not the next config's
        forget_kept("hf.name")
    name = kept_text(st.text_input, "Model name", "hf.name", placeholder="from the config")
    # the list a refused model_type's error points at, above it (a browser has no README open)
    with st.expander(f"{TYPES_LISTED_ON_PAGE} ({len(SUPPORTED_MODEL_TYPES)})"):
        st.markdown(literal(", ".join(SUPPORTED_MODEL_TYPES)))
    if st.button("Load config.json", key="hf.load", type="primary"):
        with _nothing_loaded_on_error("config.json"):
            given = app_model.one_source(upload and upload.getvalue(), pasted, "config.json")
            config = given if isinstance(given, bytes) else config_from_pasted_text(given or "")
            _use_spec(spec_from_hf_config(config, name=name.strip() or None))
        _loaded_from("hf.paste", pasted)
        ss["hf.loaded"] = True
        st.rerun()


def _model_json_source(s) -> None:
    upload = st.file_uploader("Model JSON (exported from this page)", type=["json"],
                              key="model.upload")
    pasted = kept_text(st.text_area, "…or paste it", "model.paste", height=140)
    _unloaded_note("model.paste", pasted)
    if tp_set := ss.pop("model.tp_set", None):
        st.info(f"TP {tp_set[1]}, the model file's, replaces the sidebar's TP {tp_set[0]}: its "
                "figures are the file's. Change TP in the sidebar to see another.",
                icon=":material/info:")
    if st.button("Load", key="model.load", type="primary"):
        text = app_model.one_source(upload and upload.getvalue(), pasted, "model JSON")
        if not text:
            raise ValueError("Nothing to load: upload a model JSON file or paste one.")
        with _nothing_loaded_on_error("model JSON"):
            loaded = app_model.load_model_json(text)
            if isinstance(loaded, ModelSpec):
                # a file's own TP (an export's) where it gives one, not ModelSpec's default 1
                own_tp = "tp" in parse_json_object(text, "model JSON")
                _use_spec(loaded, loaded.tp if own_tp else None)
                if own_tp and loaded.tp != s.tp:  # said once, on the run the load reruns into
                    ss["model.tp_set"] = (s.tp, loaded.tp)
            else:
                raw = RawModel.from_profile(loaded)
                raw.profile()  # what every page plans from: a model they refuse is not loaded
                update(model=CUSTOM, raw=raw, spec=None)
                _fill_raw(raw)
        _loaded_from("model.paste", pasted)
        st.rerun()


def _by_hand_source(s) -> None:
    # edited at TP 1: a TP that does not split the model leaves the editor usable (the summary
    # below says what the TP breaks)
    spec = None if s.model == CUSTOM else app_model.spec_for(s.model, s.spec, 1)
    if spec is None:
        st.info("The current model is a raw profile (edit it under Raw bytes): build a model "
                "here from scratch, kind by kind.")
    spec_editor(spec)


def _raw_bytes_source(s) -> None:
    if any(k not in ss for k in RAW_KEYS) or ss.get("edit.filled") != (s.model, s.spec, s.tp):
        _fill_raw(s.raw or RawModel.from_profile(s.profile()))
        ss["edit.filled"] = (s.model, s.spec, s.tp)
    c1, c2 = st.columns(2)  # [2, 1] cut the state tensors' value at 1000 px
    c1.text_input(RAW_LABELS["layer_types"], key="edit.layers", on_change=_apply_raw,
                  help="e.g. (3*linear,full)*12 or full*32; kinds: full, sliding, chunked, "
                  "linear")
    c2.text_input(f"{RAW_LABELS['state_const_bytes']} of one linear layer (bytes)",
                  key="edit.state",
                  on_change=_apply_raw, help="name=bytes pairs, e.g. conv=49152,ssm=2MiB")
    # the numbers a row of their own: beside the pattern, 4,096 showed as "409" at 1000 px
    c3, c6 = st.columns(2)  # four a row cut 8192 to "81" at 1000 px
    c3.number_input(RAW_LABELS["kv_bytes_per_slot"], key="edit.kv", **whole_number_field(),
                    value=None, on_change=_apply_raw,
                    help="Bytes one token adds to one full (or chunked) attention layer, and to "
                    "a sliding one unless the field beside it gives its own")
    c6.number_input(f"{RAW_LABELS['sliding_kv_bytes_per_slot']} (0 = the same)",
                    key="edit.swa_kv", **whole_number_field(),
                    value=None, on_change=_apply_raw,
                    help="Bytes one token adds to one sliding layer, where its heads differ "
                    "from the full layers' (Gemma 4: 16 KV heads x 256 beside 4 x 512); 0: "
                    "the KV bytes beside it")
    c4, c5 = st.columns(2)
    c4.number_input(f"{RAW_LABELS['sliding_window']} (0 = none)", key="edit.window",
                    **whole_number_field(),
                    value=None, on_change=_apply_raw,
                    help="Tokens a sliding layer keeps: its last W")
    c5.number_input(f"{RAW_LABELS['attention_chunk_size']} (0 = none)", key="edit.chunk",
                    **whole_number_field(),
                    value=None, on_change=_apply_raw,
                    help="Tokens of a chunk of chunked layers (Llama 4's chunked local "
                    "attention): a chunked layer keeps the tokens of its own chunk")
    carried = ss.get("edit.raw")
    if carried is not None and carried.ssm_element_bytes:  # say so: it changes SGLang's bytes
        show_value("edit.ssm_el", True)
        dtype = f" ({carried.ssm_dtype})" if carried.ssm_dtype else ""
        st.checkbox(f"ssm tensor in {carried.ssm_element_bytes}-byte elements{dtype}, as the "
                    "model edited had it", key="edit.ssm_el", on_change=_drop_ssm_element,
                    help="SGLang keeps the ssm state in a dtype of its own, so it re-sizes an "
                    "ssm tensor whose element size is known (Compare says by how much; the "
                    "command line's --ssm-element-bytes N does the same). Clear it to take the "
                    "bytes as given, as --state alone does.")
    if ss.get("edit.error"):
        st.error(error_text(ss["edit.error"].rstrip(".")) + ". Until it is fixed, every page (and "
                 "the summary below) shows the last valid model.")
    st.caption("Bytes per TP rank, as an engine sees them; the sidebar's TP only splits the "
               "weights here.")


# The sources of a model, in the order the picker offers them, each with what it draws.
SOURCES = {"Preset": _preset_source, "config.json": _config_source,
           "Model JSON": _model_json_source, "Edit by hand": _by_hand_source,
           "Raw bytes": _raw_bytes_source}


def picker() -> None:
    s = state()
    # back on the page, the source last used (streamlit forgets a widget another page did not
    # draw): a loaded config.json comes back under config.json, a broken draft under its editor
    default = ss.get("model.source.last") or {
        CUSTOM: "Raw bytes", CUSTOM_SPEC: "Edit by hand"}.get(s.model, "Preset")
    source = st.segmented_control("Source", list(SOURCES), key="model.source", default=default,
                                  required=True)  # a second click must not deselect it
    ss["model.source.last"] = source
    SOURCES[source](s)


# The cache-layer table's headers on screen (its data keeps the full names): shorter, so that
# the state shapes are in view at 1000 px, the byte columns' tooltips with them
CACHE_LAYERS = "Cache layers, all kinds"  # the summary's total, beside each kind's count
KIND_LABELS = {"KV B per token": "KV B/token", "state B per layer": "state B/layer",
               "conv shape": "conv", "ssm shape": "ssm"}
KIND_HELPS = {"KV B per token": "KV B per token: the bytes a layer of this kind keeps a token, "
              "per TP rank",
              "state B per layer": "state B per layer: the constant state (conv + ssm, or the "
              "recurrent state) a layer of this kind keeps a request, per TP rank"}
# The per-layer table's headers on screen, in the kinds table's words: in full its six columns
# took 590 px of the expander's 504 at 1000 px (MiniMax-M1), and its state bytes were cut
LAYER_LABELS = {"cache layer": "layer", "bytes per token": "KV B/token", "state bytes": "state B"}
# FlatKV's field names (the Model JSON's and the editor's), not config.json's: "config field"
# beside k_heads read as a key to look up in the config (Qwen3-Next's is linear_num_key_heads)
GEOMETRY_FIELD = "field"


def geometry_by_field(rows: list[dict]) -> list[dict]:
    """The model's geometry a row a field, a column a kind (``spec_geometry_rows`` turned):
    a few kinds across and the fields down, where a column a field (eight or more, most
    blank for each kind) ran past the table's edge at 1000 px."""
    fields = [key for key in (rows[0] if rows else {}) if key != "name"]
    return [{GEOMETRY_FIELD: field, **{row["name"]: row[field] for row in rows}}
            for field in fields]


def summary() -> None:
    s, tp_problem = state().plannable_tp()  # a TP that does not split the model: TP 1, why
    spec = s.model_spec()
    if (tp_problem and spec is not None and ss.get("model.source") == "Edit by hand"
            and (refusal := spec.tp_refusal(state().tp)) is not None):
        # under the editor, its words (``gdn's k heads``), whatever the model's own (a preset's
        # plain words)
        tp_problem = app_model.editor_words(file_words(refusal), spec.kinds)
    if tp_problem:
        st.error(f"{error_text(tp_problem)}. Shown below at TP 1; the other pages need a TP that "
                 "splits the model (the sidebar's).")
    profile = s.profile()
    st.subheader(literal(profile.name), divider="gray")
    if spec is not None and spec.source:
        st.caption(literal(spec.source))
    if spec is not None and spec.notes:  # a preset's caveat (Nemotron-H's ssm dtype)
        st.info(literal(spec.notes), icon=":material/info:")
    kinds = app_model.kind_summary(profile)
    metrics = metric_row("model")
    # the total in the kinds' own unit, and named as the total: "Cache layers 48" beside "Full
    # attention 12 layers" read as two counts of one thing
    metrics.metric(CACHE_LAYERS, count_text(len(profile.layer_types), "layer"),
                   help="Every layer that keeps a cache, of the kinds beside it (a layer that "
                   "keeps both attention and a state counts once for each; an MLP-only layer "
                   "keeps none)")
    for kind in kinds:
        # "Constant state", what the kinds in its name share in the help: in full, the label
        # was cut short in a grid cell ("Constant state (linear attention, Mamba, s...")
        name, _, kinds_in = sentence_case(kind["kind"]).partition(" (")
        if kind["kind"] == MLA_KIND_NAME:  # "Full attention (MLA)", whole
            name, kinds_in = sentence_case(kind["kind"]), ""
        metrics.metric(name, count_text(kind["layers"], "layer"), help=(
            f"Layers that keep one state a request whatever its length: "
            f"{kinds_in.removesuffix(')')}" if kinds_in
            else app_model.MLA_KIND_HELP if kind["kind"] == MLA_KIND_NAME else None))
    if profile.sliding_window is not None:
        metrics.metric("Sliding window", f"{profile.sliding_window:,} tokens",
                       help="Tokens a sliding-window layer keeps (attends to)")
    if profile.attention_chunk_size is not None:
        metrics.metric("Attention chunk", f"{profile.attention_chunk_size:,} tokens",
                       help="A chunked layer attends to (and keeps) the tokens of its own chunk")
    # the two figures a cache is sized by, per TP rank (the CLI's model report's "all layers")
    if profile.has_attention:
        # with sliding or chunked layers, what a token within their span costs and what one
        # past it does (the full-attention layers' alone): 48 and 24 KiB for gpt-oss-20b
        span = app_model.windowed_span(profile)
        metrics.metric("KV per token, all layers", format_bytes(profile.kv_bytes_per_token),
                       delta=f"a token within the {span}" if span else None,
                       delta_color="off", delta_arrow="off",
                       help=f"{profile.kv_bytes_per_token:,} B: every attention layer, one "
                       "TP rank" + ("; the sliding or chunked layers' share is needed for "
                                    "their window (chunk) only, as the line below says"
                                    if span else ""))
        if span:
            past = app_model.kv_bytes_past_window(profile)
            metrics.metric(f"KV per token, past the {span}", format_bytes(past),
                           help=f"{past:,} B, one TP rank: what a token older than the {span} "
                           "costs, in the layers that keep every token (full attention) alone")
    if profile.has_state:
        metrics.metric("State per request", format_bytes(profile.state_bytes_per_request),
                       help=f"{profile.state_bytes_per_request:,} B: every state layer, one "
                       "TP rank")
    if note := app_model.windowed_kv_note(profile):
        st.caption(note)
    st.caption(app_model.summary_caption(profile, spec, s.context))
    if spec is not None and (note := preset_class_note(spec)):
        st.warning(f"{literal(sentence_case(note))}. Keep it for a model of that class; else "
                   "type the model's own class in the architecture field (Source: Edit by "
                   "hand), or clear it.", icon=":material/warning:")
    # a model with state in two tables at 1000 px, each led by the kind's name: what the kinds
    # are with their KV bytes, then their state bytes and shapes (in one, Nemotron-H-8B's
    # seven columns took 657 px of the 540 and MiniMax-M1's kind was cut to "kinc")
    table(app_model.spec_kind_rows(spec) if spec is not None else kinds, labels=KIND_LABELS,
          helps=KIND_HELPS, fit_px=MAIN_COLUMN_PX)
    for note in spec.kv_bytes_notes() if spec is not None else ():
        st.caption(literal(note))
    if spec is not None:
        st.caption("Heads, dims and state shapes, whole model, by the Model JSON's field names "
                   "(the bytes above are per TP rank):")
        table(geometry_by_field(app_model.spec_geometry_rows(spec)), fit_px=MAIN_COLUMN_PX)
    if spec is not None and (note := spec.replication_note()):
        st.caption(note)
    names = spec.layer_names if spec is not None else None
    layers = app_model.layer_rows(profile, names)
    chart(charts.layer_strip(profile, names, title="Cache layers in model order"),
          key="model.strip", file_name="layers.html")
    with st.expander(f"Per-layer table ({len(layers)} cache layers)"):
        table(layers, height=300, labels=LAYER_LABELS, fit_px=EXPANDER_COLUMN_PX)
    data = spec.to_dict() if spec is not None else profile_to_dict(profile)
    st.download_button(
        "Model as JSON", data=json.dumps(data, indent=2),
        file_name=f"{profile.name.replace(' ', '_')}.json", mime="application/json",
        key="model.export", on_click="ignore", icon=":material/download:",
        help="Load it again with Source: Model JSON.",
    )


st.title("Model")
st.caption("The model chosen here is the current model on every page.")
with user_errors():
    picker()
with user_errors():
    summary()
