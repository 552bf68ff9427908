"""Widgets the pages share: the context and requests fields, and the engine options (the
strategies' knobs that Compare and Budget show)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import streamlit as st

from app_pages._figures import current_strategies
from app_pages._session import ERRORS_KEY, bind, state, update
from flatkv import app_data, app_model, strategy_notes
from flatkv.app_state import (
    DEFAULT_CONTEXT,
    MAX_BLOCK_SIZE,
    MAX_CHECKPOINT_BLOCKS,
    MAX_CONTEXT,
    MAX_MAMBA_CACHE_SIZE,
    MAX_REQUESTS,
    MAX_RUNNING_REQUESTS,
    MAX_SLOTS_PER_REQUEST,
    MAX_SPECULATIVE_TOKENS,
    SWA_RATIO_RANGE,
    AppState,
)
from flatkv.engine_options import (
    ENGINE_DEFAULTS,
    ENGINE_FIELDS,
    ENGINE_OPTIONS,
    SCHEDULING_COLUMN,
    SGLANG_COLUMN,
    VLLM_COLUMN,
    engine_help,
)
from flatkv.profile import MAX_CHUNK_SIZE
from flatkv.strategies.base import (
    CHUNKED_PREFILL_OFF,
    MAMBA_CACHE_MODES,
    MAX_ATTN_DP_SIZE,
    PADDING_BOUND_RANGE,
    RATIO_RANGE,
    SGLANG_KV_CACHE_DTYPES,
    SGLANG_RADIX_CACHE_STRATEGIES,
    SGLANG_SSM_DTYPES,
)
from flatkv.strategies.sglang import NO_BUFFER_SLOTS
from flatkv.strategies.vllm import (
    DEFAULT_KERNEL_BLOCK_SIZE,
    DEFAULT_MAMBA_CHUNK_SIZE,
)
from flatkv.strategies.vllm_releases import ANCHOR_OPTIONS
from flatkv.units import MAX_TOKENS, count_text, decimal_tokens_note, parse_tokens, tokens_text
from flatkv.units import markdown_literal as literal

# --------------------------------------------------------------------------------------------
# Engine options: the strategies' knobs (Compare and Budget pages share them).

def _typed_ratio(v: float) -> float:
    return round(float(v), 6)  # the widget's float steps (0.9500000000000001) as typed


def _help(field: str, own: str = "") -> str:
    """An engine option's tooltip: what the engines do with it, as the CLI's --help says it too
    (``engine_help``, naming other options by the captions' labels), then ``own``: what only
    the widget says (what auto or 0 stands for, where it starts, the model's own value)."""
    return f"{engine_help(field)} {own}" if own else engine_help(field)


# Engine options that are counts: label, range and what the widget adds to their help.
_COUNT_WIDGETS = {
    "sglang_page_size": ("Page size (tokens)", 1, MAX_BLOCK_SIZE, ""),
    "sglang_mamba_track_interval": ("Mamba track interval (tokens)", 1, MAX_TOKENS, ""),
    # engine_help says "D must divide the TP; 1 is none." already
    "sglang_attn_dp_size": ("Attention DP size", 1, MAX_ATTN_DP_SIZE, ""),
    "prefill_checkpoint_blocks": (
        "Prefill checkpoint blocks", 0, MAX_CHECKPOINT_BLOCKS, ""),
    "speculative_tokens": (
        "Speculative tokens", 0, MAX_SPECULATIVE_TOKENS,
        "\"Add an MTP layer\", beside the figures, adds an MTP module's."),
}

# Engine options that are ratios: label and range (as the URL reads it).
_RATIO_WIDGETS = {
    "mamba_full_memory_ratio": ("Mamba / full memory ratio r", RATIO_RANGE),
    "swa_full_tokens_ratio": ("Sliding / full tokens ratio", SWA_RATIO_RANGE),
    "lcm_padding_bound": ("Two-level padding bound", PADDING_BOUND_RANGE),
}

# Engine options whose default is the model's own (None in the state): label, step, largest
# value, what the widget adds to their help; the widget shows what the engine picks for the
# model and stores None while it is left there.
_OWN_DEFAULT_WIDGETS = {
    "kernel_block_size": ("Kernel block size A (tokens)", 16, MAX_BLOCK_SIZE,
                          "Starts at the model's own."),
    "sglang_slots_per_request": ("State slots per request S", 1, MAX_SLOTS_PER_REQUEST,
                                 "Starts at SGLang's own for the model."),
    "mamba_chunk_size": ("Mamba chunk size (tokens)", 64, MAX_CHUNK_SIZE,
                         "Starts at the model's own."),
}
_FALLBACK = {"kernel_block_size": DEFAULT_KERNEL_BLOCK_SIZE,
             "mamba_chunk_size": DEFAULT_MAMBA_CHUNK_SIZE,
             "sglang_slots_per_request": NO_BUFFER_SLOTS}


def model_note(s: AppState) -> None:
    """The model's caveat on its figures (a preset's, or what engines read differently in its
    config.json) beside the engines' figures."""
    if (spec := s.model_spec()) is not None and spec.notes:
        st.caption(f"Note on this model: {literal(spec.notes)}")


def state_group_note(s: AppState) -> None:
    """Which of the model's kinds the planner's state group ("state" on the pages and in their
    Formulas, ``linear_attention`` in the plan's JSON) holds, in the Model page's words
    (Nemotron-H's mamba2)."""
    if text := app_model.state_group_text(s.model_spec()):
        st.caption(text)


def tokens_widget(field: str, label: str, help: str,
                  shown: Callable[[Any], int] = lambda v: v) -> None:
    """A token count typed as vLLM's command line takes it (262144, 256K or 128k), shown with
    thousands separators (``shown``: the count a field's value stands for); an emptied or
    unreadable entry is refused under the field."""
    bind(st.text_input, field, label, to_widget=lambda v: f"{shown(v):,}",
         from_widget=lambda text: parse_tokens(text, label, maximum=MAX_CONTEXT), help=help)


def context_widget(*, with_note: bool = True) -> None:
    """The context length every page counts a request's pages at (one URL setting): the
    model's own (vLLM's default --max-model-len) until one is typed, and a click away after.
    ``with_note`` False: a page that puts the field in a column calls ``context_note`` below
    the columns, where its line does not wrap in a third of the page."""
    tokens_widget("context", "Context length (tokens per request)",
                  "Tokens one request holds: 262144, 256K (262,144) or 128k (128,000), as "
                  "vLLM's --max-model-len reads them. Until you give one: the model's "
                  "max_model_len, vLLM's default, from its config (max_position_embeddings, "
                  "times a rope scaling factor where one applies; the 2,048 vLLM assumes "
                  f"where the config gives no length), else {DEFAULT_CONTEXT:,}.",
                  shown=lambda _: state().context_length())
    if with_note:
        context_note()


def hold_default(fitting: int, fit: str) -> tuple[int, str]:
    """The requests to hold until a number is typed, one more than the ``fitting`` requests
    (at most the field's largest), and why, in words: ``fit`` says whose requests those are
    ("fit in FlatKV packed slabs"), as Budget and Compare count from different layouts."""
    default = min(fitting + 1, MAX_REQUESTS)
    return default, (f"one more than the {fitting:,} that {fit}" if default > fitting else
                     f"the most this field takes ({fitting:,} {fit} already)")


def hold_requests_widget(fitting: int, context: int, *, fit: str) -> int:
    """The requests the least budget is asked for (one URL setting, Budget's and Compare's):
    ``hold_default`` until one is typed. Returns the number to size for."""
    default, why = hold_default(fitting, fit)
    bind(st.number_input, "hold_requests", "Requests to hold", min_value=1,
         max_value=MAX_REQUESTS, step=1, to_widget=lambda v: v or default,
         from_widget=lambda v: None if int(v) == default else int(v),
         help=f"Requests of {tokens_text(context)} at once, for the least cache budget that "
         f"holds them. Until you give a number: {default:,}, {why}.")
    return state().hold_requests or default


def hold_default_note(fitting: int, fit: str, elsewhere: str) -> str:
    """Where no number is typed, the default on screen with its reason and the other page's
    (``elsewhere``): one link opened 4 requests on Budget and 12 on Compare, with no word on
    why but a tooltip's; ``""`` once a number is typed (both pages then hold it)."""
    if state().hold_requests is not None:
        return ""
    default, why = hold_default(fitting, fit)
    return f"{count_text(default, 'request')} until you give a number: {why}; {elsewhere}."


def context_note() -> None:
    """What the context field's figure rests on, where it is not the model's own length: a
    typed context past or below it (with a button back to it), or an assumed one."""
    s = state()
    own = s.model_max_len()
    if "context" in st.session_state[ERRORS_KEY]:
        return
    # a typed context that reads as 128k (128,000) beside 128K (131,072), 2.4% more: said,
    # unless it is the model's own length (LFM2's is 128,000)
    if s.context is not None and s.context != own and (
            decimal := decimal_tokens_note(s.context)):
        st.caption(decimal)
    if not (note := app_data.model_context_text(s.context, own, DEFAULT_CONTEXT,
                                                assumed=s.model_max_len_assumed())):
        return
    st.caption(note)
    if own is not None:
        st.button(f"Use the model's {own:,} tokens", key="context.own", type="tertiary",
                  on_click=update, kwargs={"context": None}, icon=":material/straighten:")


def longest_context_button(longest: int | None, key: str, by: str, help: str,
                           requests: int = 1) -> None:
    """Under a context that not even one request fits, the ``longest`` that does (by the
    page's own count, ``by``: Layout's "map", Budget's "concurrency", worded apart by
    ``app_data.longest_context_label``, ``help`` saying why the other page's differs; none
    where no length fits) a click away: the page's dead end otherwise (Llama-4-Scout's own
    10,485,760 tokens on one H100). ``requests``: how many Layout's is the longest for, said
    where more than one (beside "One request of ... does not fit", 4 requests' 87,588 tokens
    read as one request's)."""
    if longest:
        st.button(app_data.longest_context_label(longest, by, requests), key=key, help=help,
                  type="tertiary", on_click=update, kwargs={"context": longest},
                  icon=":material/fit_screen:")


# Engine options that are on / off toggles: field -> label. Labels short: a third of the page
# at 1000 px cut "Hybrid KV cache manager" and "Async scheduling".
_TOGGLE_WIDGETS = {
    "vllm_hybrid_manager": "Hybrid manager",
    "sglang_overlap_schedule": "Overlap sched.",
    "sglang_disable_radix_cache": "Radix cache off",
    "vllm_async_scheduling": "Async sched.",
}


def engine_widget(field: str) -> None:
    """The bound widget of one engine option (an AppState field of ENGINE_FIELDS): a number
    field from one of the tables above, else the option's own widget below."""
    if field in _RATIO_WIDGETS:
        label, (low, high) = _RATIO_WIDGETS[field]
        bind(st.number_input, field, label, min_value=float(low), max_value=float(high),
             step=0.05, format="%.4g", from_widget=_typed_ratio, help=_help(field))
    elif field in _COUNT_WIDGETS:
        label, low, high, own = _COUNT_WIDGETS[field]
        bind(st.number_input, field, label, min_value=low, max_value=high, step=1,
             help=_help(field, own))
    elif field in _OWN_DEFAULT_WIDGETS:
        label, step, largest, own = _OWN_DEFAULT_WIDGETS[field]
        try:
            model_default = state().engine_choices()[field][0]  # the model's own
        except ValueError:  # the page shows why; the widget still needs a value
            model_default = _FALLBACK[field]
        bind(st.number_input, field, label, min_value=1, max_value=largest, step=step,
             to_widget=lambda v: v or model_default,
             from_widget=lambda v: None if int(v) == model_default else int(v),
             help=_help(field, own))
    elif field in _TOGGLE_WIDGETS:
        bind(st.toggle, field, _TOGGLE_WIDGETS[field], help=_help(field))
    elif field in _OWN_WIDGETS:
        _OWN_WIDGETS[field]()
    else:  # a new ENGINE_FIELDS entry needs its widget here
        raise KeyError(f"no widget for the engine option {field!r}")


def _mamba_cache_mode_widget() -> None:
    # fixed labels (bind says why); the pages with checkpoints and drafted ones below
    bind(st.selectbox, "mamba_cache_mode", "Mamba cache mode", options=list(MAMBA_CACHE_MODES),
         format_func=app_data.MAMBA_MODE_CHOICES.get,
         help=_help("mamba_cache_mode",
                    f"The default here is {ENGINE_DEFAULTS.mamba_cache_mode}."))
    s = state()
    held = app_data.mamba_mode_text(s.mamba_cache_mode, s.prefill_checkpoint_blocks,
                                    s.speculative_tokens)
    if held != app_data.mamba_mode_text(s.mamba_cache_mode):
        st.caption(f"A request holds {held}.")


def _sglang_swa_pool_widget() -> None:
    by_model, why = state().engine_choices()["sglang_swa_pool"]
    # text choices: a selectbox holding None shows its placeholder, not SGLang's choice;
    # "auto" short enough that the choice shows in a third of the page at 1000 px
    choices = {"auto": f"auto ({'on' if by_model else 'off'})", "on": "On", "off": "Off"}
    values = {"auto": None, "on": True, "off": False}
    bind(st.selectbox, "sglang_swa_pool", "Sliding-window pool", options=list(choices),
         format_func=choices.get,
         to_widget=lambda v: next(k for k, x in values.items() if x is v),
         from_widget=values.get,
         help=_help("sglang_swa_pool", "auto is SGLang's own choice; for this model "
                    f"{'on' if by_model else 'off'}, {literal(why)}."))


def _ssm_dtype_widget(field: str, label: str, how: str, whose: str) -> None:
    """An engine's ssm state dtype select: auto (the engine's own choice for this model, named)
    or one of the dtypes both engines take (SGLANG_SSM_DTYPES: vLLM 0.31 to 0.34's MambaDType
    too, less auto)."""
    by_model, why = state().engine_choices()[field]
    choices = {"auto": f"auto ({by_model})", **{dtype: dtype for dtype in SGLANG_SSM_DTYPES}}
    bind(st.selectbox, field, label, options=list(choices), format_func=choices.get,
         to_widget=lambda v: "auto" if v is None else v,
         from_widget=lambda k: None if k == "auto" else k,
         help=_help(field, f"Choosing a dtype here runs as {how} would; auto is {whose} own "
                    f"choice; for this model {by_model}, {why}."))


def _sglang_ssm_dtype_widget() -> None:
    _ssm_dtype_widget("sglang_ssm_dtype", "ssm state dtype", "SGLANG_MAMBA_SSM_DTYPE",
                      "SGLang's")


def _vllm_ssm_dtype_widget() -> None:
    _ssm_dtype_widget("vllm_ssm_dtype", "ssm cache dtype", "--mamba-ssm-cache-dtype", "vLLM's")


def _sglang_mamba_radix_cache_strategy_widget() -> None:
    bind(st.selectbox, "sglang_mamba_radix_cache_strategy", "Mamba radix cache",
         options=list(SGLANG_RADIX_CACHE_STRATEGIES),
         help=_help("sglang_mamba_radix_cache_strategy", "auto is SGLang's own choice."))


def _sglang_kv_cache_dtype_widget() -> None:
    bind(st.selectbox, "sglang_kv_cache_dtype", "KV cache dtype told",
         options=list(SGLANG_KV_CACHE_DTYPES),
         help=_help("sglang_kv_cache_dtype", "auto is SGLang's own choice."))


def _max_batched_tokens_widget() -> None:
    tokens_widget("max_batched_tokens", "Max batched tokens", _help("max_batched_tokens"))


def _sglang_chunked_prefill_size_widget() -> None:
    own, why = state().engine_choices()["sglang_chunked_prefill_size"]
    _auto_count_widget(
        "sglang_chunked_prefill_size", "Chunked prefill size (0 = automatic, -1 = off)",
        MAX_CONTEXT,
        _help("sglang_chunked_prefill_size", "In this field 0 leaves it to SGLang (not "
              f"SGLang's own 0, which is off: enter -1 for that); here {own:,}, {why}."),
        minimum=CHUNKED_PREFILL_OFF)


def _auto_count_widget(field: str, label: str, maximum: int, help: str, *,
                       minimum: int = 0) -> None:
    """A whole-number engine option where 0 stands for "not told" (None): a number field
    cannot show the engine's own figure, which depends on its pools and the context.
    ``minimum`` below 0 offers the option's own values under it (-1: chunked prefill off)."""
    bind(st.number_input, field, label, min_value=minimum, max_value=maximum, step=1,
         to_widget=lambda v: v or 0, from_widget=lambda v: int(v) or None, help=help)


def _sglang_max_running_requests_widget() -> None:
    _auto_count_widget(
        "sglang_max_running_requests", "Max running requests (0 = automatic)", MAX_RUNNING_REQUESTS,
        _help("sglang_max_running_requests", "0 leaves it to SGLang."))


def _sglang_max_mamba_cache_size_widget() -> None:
    _auto_count_widget(
        "sglang_max_mamba_cache_size", "Max mamba cache size (0 = automatic)", MAX_MAMBA_CACHE_SIZE,
        _help("sglang_max_mamba_cache_size", "0 leaves it to SGLang."))


# the engine options whose widget is not a plain number field: field -> draws it
_OWN_WIDGETS = {
    "mamba_cache_mode": _mamba_cache_mode_widget,
    "sglang_max_running_requests": _sglang_max_running_requests_widget,
    "sglang_max_mamba_cache_size": _sglang_max_mamba_cache_size_widget,
    "sglang_chunked_prefill_size": _sglang_chunked_prefill_size_widget,
    "sglang_swa_pool": _sglang_swa_pool_widget,
    "sglang_ssm_dtype": _sglang_ssm_dtype_widget,
    "vllm_ssm_dtype": _vllm_ssm_dtype_widget,
    "sglang_mamba_radix_cache_strategy": _sglang_mamba_radix_cache_strategy_widget,
    "sglang_kv_cache_dtype": _sglang_kv_cache_dtype_widget,
    "max_batched_tokens": _max_batched_tokens_widget,
}


# Engine options by column of the expander; the chunk size shows in mamba cache mode "all" only.
ENGINE_COLUMNS = tuple(
    (title, tuple(o.field for o in ENGINE_OPTIONS if o.column == title))
    for title in (VLLM_COLUMN, SGLANG_COLUMN, SCHEDULING_COLUMN))


def _column_title(title: str, shown: list[str]) -> str:
    """The title of a column of engine options: the shared last column is titled by the parts
    it shows (scheduling options, the two-level pages' bound, or both)."""
    if title != SCHEDULING_COLUMN:
        return title
    parts = (["Scheduling"] if any(f != "lcm_padding_bound" for f in shown) else []) + (
        ["two-level pages"] if "lcm_padding_bound" in shown else [])
    return " and ".join(parts).capitalize()


def recent_vllm_button(key: str) -> None:
    """"Use vLLM 0.34's defaults": the settings a log of vLLM 0.34 run with its defaults has,
    where this view keeps vLLM 0.19's, SPEC's anchor (none where it matches already)."""
    s = state()
    if changes := s.recent_vllm_changes():
        help_text = strategy_notes.recent_vllm_help(changes, s.profile(),
                                                    s.gpu_named(), s.vllm_checkpoint_blocks())
        st.button("Use vLLM 0.34's defaults", on_click=update, kwargs=changes, key=key,
                  icon=":material/update:", help=help_text)


def log_options_text() -> str:
    """Whose engine options the vLLM figures are run with, for ``which_log_text``: vLLM 0.19's
    defaults until changed (SPEC 3.1's anchor log), which a current release runs only when
    told; 0.34's own once the button set them."""
    s = state()
    if s.runs_recent_vllm_defaults():
        return "vLLM 0.34's own defaults"
    if s.changed_engine_options(s.acting_engine_options()) or (
            s.block_size != ENGINE_DEFAULTS.block_size):
        return "the engine options and block size set here"
    # what vLLM 0.34's own defaults set is said under the page's title (options_text)
    return (f"{ANCHOR_OPTIONS} (what vLLM 0.34's own defaults set: under the title)"
            if s.recent_vllm_changes() else ANCHOR_OPTIONS)


# Where the pages without the button send a reader for it (recent_vllm_button)
COMPARE_BUTTON = "Compare's Engine options"


def options_text(names: tuple[str, ...] = ENGINE_FIELDS,
                 button_where: str = "Engine options") -> str:
    """Whose engine options the page's figures run with, for the line under its title: those
    changed, else ``strategy_notes.defaults_text`` (the words of every page showing vLLM
    figures); ``button_where``: where "Use vLLM 0.34's defaults" is."""
    s = state()
    if s.changed_engine_options(names):  # the options said: no defaults text, no runs for it
        return s.engine_options_text(names)
    recent = s.recent_vllm_changes()
    return strategy_notes.defaults_text(recent, button_where,
                                        **_recent_vllm_figures(s, recent) if recent else {})


def _recent_vllm_figures(s: AppState, recent: dict[str, Any]) -> dict[str, Any]:
    """Whether vLLM's figures move with vLLM 0.34's own defaults (``recent``), as
    ``defaults_text`` takes it: two cached runs of vLLM alone, at these settings and at those.
    DeepSeek-V3.2 on the H100 keeps P 64 and 15,354 blocks either way. Where vLLM has no
    figures under them (``recent_refusal_text``: Nemotron-H-8B at 256 MiB in align), or the
    pages cannot take them (the error), that, not "its figures differ"."""
    try:
        now = current_strategies(s, ("vllm",))[0]
    except ValueError:  # the page says why: no figures to set beside
        return {}
    try:
        then = current_strategies(replace(s, **recent).after(s), ("vllm",))[0]
    except ValueError as exc:
        return {"refused": f"these settings cannot take them ({exc})"}
    return {"differs": not strategy_notes.same_figures(now, then),
            "refused": strategy_notes.recent_refusal_text(then, now)}


def engine_options(fields: tuple[str, ...] = ENGINE_FIELDS, *, label: str = "Engine options",
                   note: str = "vLLM 0.19's settings until changed, as in the log these "
                   "figures are checked against (0.34's own defaults differ); the link keeps "
                   "what you change.") -> None:
    """An expander of engine options, each a bound AppState field (in the URL too); ``fields``
    picks the ones that change what the page shows."""
    every_engine = fields == ENGINE_FIELDS  # then say whose options they are
    acting = state().acting_engine_options()
    fields = tuple(f for f in fields if f in acting)  # an idle option is neither shown nor counted
    changed = state().changed_engine_options(fields)
    # keyed: its label changes with the count, and it must stay open while the user edits
    with st.expander(label + (f" ({len(changed)} changed)" if changed else ""),
                     icon=":material/tune:", key=f"options.{label}"):
        columns = [(title, [f for f in group if f in fields]) for title, group in ENGINE_COLUMNS]
        columns = [(_column_title(title, group), group) for title, group in columns if group]
        for (title, group), column in zip(columns, st.columns(3), strict=False):
            with column:
                if every_engine:
                    st.markdown(f"**{title}**")
                for field in group:
                    engine_widget(field)
        if every_engine and state().runs_recent_vllm_defaults():
            note = ("vLLM 0.34's own defaults for this model, as in a log of it run with "
                    "them (not those of the vLLM 0.19 log the tests check against); the link "
                    "keeps what you change.")
        st.caption(note)
        if every_engine:
            recent_vllm_button("options.recent_vllm")
