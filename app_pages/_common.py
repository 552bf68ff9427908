"""What every page shares: the app state in the session and the URL, bound widgets, cached
computations, error display and number formats. Streamlit lives here and in the pages only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields, replace
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from flatkv import app_data, app_model, sizing
from flatkv.analysis import PLANNERS, PlanAnalysis, analyze
from flatkv.app_data import markdown_literal as literal
from flatkv.app_model import CUSTOM_SPEC
from flatkv.app_state import (
    CUSTOM_GPU,
    DEFAULT_CONTEXT,
    GPU_PRESETS,
    KV_BLOCKS,
    KV_MEMORY,
    MAX_BLOCK_SIZE,
    MAX_CHECKPOINT_BLOCKS,
    MAX_CONTEXT,
    MAX_REQUESTS,
    MAX_SLOTS_PER_REQUEST,
    MAX_SPECULATIVE_TOKENS,
    MAX_TP,
    MAX_VLLM_BLOCKS,
    MEMORY_SOURCE_TITLES,
    MEMORY_SOURCES,
    MIN_MEM_FRACTION,
    MIN_VLLM_BLOCKS,
    SWA_RATIO_RANGE,
    AppState,
    decode_query,
    encode_query,
    gpu_memory_size,
    kv_memory_size,
)
from flatkv.engine_options import (
    ENGINE_FIELDS,
    ENGINE_OPTIONS,
    SCHEDULING_COLUMN,
    SGLANG_COLUMN,
    VLLM_COLUMN,
)
from flatkv.models import MTP_SUFFIX, ModelSpec, with_mtp_layer
from flatkv.plan import BudgetTooSmall
from flatkv.profile import MAX_CHUNK_SIZE, CacheProfile
from flatkv.strategies import STRATEGIES, StrategyOptions, StrategyResult, run_strategy
from flatkv.strategies.base import (
    MAMBA_CACHE_MODES,
    PADDING_BOUND_RANGE,
    RATIO_RANGE,
    SGLANG_SSM_DTYPES,
    SGLANG_SWA_ARCHITECTURES,
)
from flatkv.strategies.vllm import (
    DEFAULT_KERNEL_BLOCK_SIZE,
    DEFAULT_MAMBA_CHUNK_SIZE,
    DRAFT_WIDENED_CONV,
    MLA_HYBRID_BLOCK,
)
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.units import (
    decimal_tokens_note,
    decimal_unit_note,
    exact_bytes,
    format_bytes,
    format_size,
    memory_size,
    parse_tokens,
    plain_number,
    tokens_text,
)

STATE_KEY = "flatkv.state"
PAGE_KEY = "flatkv.page"  # the page the last run drew
NOTICES_KEY = "flatkv.notices"
ERRORS_KEY = "flatkv.errors"  # field -> why its widget's entry was rejected
REJECTED_SLOT = "flatkv.rejected"  # this run's place, atop the page, to say entries were rejected
_LABELS: dict[str, str] = {}  # field -> its widget's label, for the page's note on rejections
DRAWN_KEY = "flatkv.drawn"
_UNSET = object()  # a key the session does not hold


@dataclass
class DrawnWidgets:
    """Keys of the widgets set from state (``show_value``) on the last run of this page, and on
    this run so far."""

    page: str
    last: frozenset[str]
    now: set[str]  # filled by show_value as this run draws
    finished: bool = False  # set by end_run; a rerun that cuts a run short leaves it False


def start_run(page: str) -> None:
    """Begin a run of ``page``: what the last run drew counts only if it drew the same page.
    A run cut short by a rerun drew only part of the page; the browser still shows the rest
    from the run before, so those keys count as drawn too."""
    ss = st.session_state
    previous = ss.get(DRAWN_KEY)
    last: frozenset[str] = frozenset()
    if previous is not None and previous.page == page:
        last = frozenset(previous.now if previous.finished else previous.last | previous.now)
    ss[DRAWN_KEY] = DrawnWidgets(page, last, set())


def end_run() -> None:
    """Mark this run as drawn to the end (app.py calls it after the page), and forget the
    rejected entries of widgets it did not draw: another setting hid them (a GPU memory field
    gone with GPU Custom), or the page is another; streamlit drops such a widget's entry too,
    so the figures are current again and the page must not say otherwise."""
    ss = st.session_state
    drawn = ss.get(DRAWN_KEY)
    if drawn is not None:
        drawn.finished = True
        errors = ss.get(ERRORS_KEY) or {}
        for field in [f for f in errors if f"w.{f}" not in drawn.now]:
            del errors[field]
        if errors and REJECTED_SLOT in ss:  # the figures below do not use those entries
            names = ", ".join(f'"{_LABELS.get(field, field)}"' for field in errors)
            ss[REJECTED_SLOT].warning(
                f"Rejected: {literal(names)}. Until fixed, every figure uses the last valid "
                f"value; the error shows under the field{'s' if len(errors) > 1 else ''}.",
                icon=":material/error:")


def show_value(key: str, value: Any, *, write: bool = True) -> None:
    """Set the widget of ``key`` to ``value`` before it is drawn, where that is needed.

    Any write tells the browser to reset the widget; a write of an unchanged value, landing
    while the user types into it, would throw the entry away. So a widget this page drew on its
    last run is written only when ``value`` moved away from what it shows. A widget new to this
    run is always written, even when the key holds the same value: that value may belong to the
    same-key widget of another page (streamlit 1.60+ tells keyed widgets apart by key and page
    only, so a widget whose other arguments change keeps its identity), and the new widget
    would start from that value or empty. ``write=False`` only records that the widget is drawn.
    """
    ss = st.session_state
    drawn = ss.get(DRAWN_KEY)
    seen = drawn is not None and key in drawn.last
    if drawn is not None:
        drawn.now.add(key)
    if write and (not seen or ss.get(key, _UNSET) != value):
        ss[key] = value


def state() -> AppState:
    """The current view; on a session's first run it is read from the URL."""
    ss = st.session_state
    if STATE_KEY not in ss:
        decoded, notices = decode_query(st.query_params.to_dict())
        ss[STATE_KEY] = decoded
        ss[NOTICES_KEY] = notices
        ss[ERRORS_KEY] = {}
        sync_url()  # drop what was ignored, so the address bar shows the view as opened
    return ss[STATE_KEY]


def update(**changes: Any) -> AppState:
    """Change the view; the URL follows at once. Widget callbacks call it before the page
    draws; a page may also drop a setting this machine cannot honour while it draws (the GPU
    lab's device from a link), before the widget that shows it."""
    new = replace(state(), **changes).after(state())
    st.session_state[STATE_KEY] = new
    sync_url()
    return new


def sync_url(*, page: str | None = None) -> None:
    """Write the view into the URL (only values that differ from the defaults). ``page``: the
    page this run drew (app.py's call after it); on the first run of a page the view is written
    even where the query string already holds it, as the browser's address bar may not: a
    sidebar link clears it, and a walk-through saw it stay clear on a fresh server."""
    target = encode_query(state())
    ss = st.session_state
    switched = page is not None and ss.get(PAGE_KEY) != page
    if page is not None:
        ss[PAGE_KEY] = page
    if switched or st.query_params.to_dict() != target:
        st.query_params.from_dict(target)


def pop_notices() -> list[str]:
    state()  # a first run decodes the URL, and leaves its notices
    return st.session_state.pop(NOTICES_KEY, None) or []


def bind(
    widget: Callable[..., Any],
    field: str,
    label: str,
    *,
    to_widget: Callable[[Any], Any] = lambda v: v,
    from_widget: Callable[[Any], Any] = lambda v: v,
    also: Callable[[Any], dict[str, Any]] = lambda v: {},
    **kwargs: Any,
) -> Any:
    """A widget whose value is the AppState field ``field``.

    The state, not the widget, is the source of truth: a widget that was not drawn on the last
    run (another page) is set from the state, so it shows the current view. A value the field
    rejects leaves the state as it was and shows why under the widget. ``also`` gives other
    fields to change with it, from the new value and the state before the change.
    """
    ss = st.session_state
    key = f"w.{field}"
    if getattr(widget, "__name__", "") == "number_input":
        kwargs, from_widget = _checked_number(label, kwargs, from_widget)
    if kwargs.get("disabled"):  # a field that is off takes no entry: show the state's value
        ss[ERRORS_KEY].pop(field, None)
    # a rejected entry stays on screen, next to its error
    show_value(key, to_widget(getattr(state(), field)), write=field not in ss[ERRORS_KEY])

    is_selectbox = getattr(widget, "__name__", "") == "selectbox"

    def changed() -> None:
        if is_selectbox and ss[key] not in kwargs["options"]:
            # streamlit sends a selectbox's label back, and deserializes one that a label
            # function no longer gives to that text itself: keep the state, show it again
            ss[key] = to_widget(getattr(state(), field))
            return
        try:
            value = from_widget(ss[key])
            update(**{field: value, **also(value)})
            ss[ERRORS_KEY].pop(field, None)
        except ValueError as exc:
            ss[ERRORS_KEY][field] = str(exc)

    _LABELS[field] = label
    value = widget(label, key=key, on_change=changed, **kwargs)
    error = ss[ERRORS_KEY].get(field)
    if error:
        owner = getattr(widget, "__self__", st)
        owner.error(literal(error))
    return value


def _checked_number(label: str, kwargs: dict[str, Any],
                    from_widget: Callable[[Any], Any]) -> tuple[dict[str, Any], Callable]:
    """A number input's range, checked here rather than by streamlit: streamlit puts the
    minimum into an emptied field (TP 1, block size 1, and every figure follows) and keeps an
    entry out of range on screen without sending it (the figures stay as they were, unsaid).
    Here an emptied or out-of-range entry is refused under the field, like any bad entry. So
    streamlit gets no bounds: its - / + step past them too, and the field says why it refuses."""
    if "min_value" not in kwargs or "max_value" not in kwargs:
        raise TypeError(f"bind(number_input, {label!r}) needs min_value and max_value")
    low, high = kwargs.pop("min_value"), kwargs.pop("max_value")
    shown = (lambda v: f"{v:,}") if isinstance(low, int) else plain_number
    wanted = f"give a number from {shown(low)} to {shown(high)}"

    def checked(value: Any) -> Any:
        if value is None:
            raise ValueError(f"{label} is empty: {wanted}")
        if not low <= value <= high:
            raise ValueError(f"{label} is {shown(value)}: {wanted}")
        return from_widget(value)

    return {**kwargs, "value": None}, checked


class MarkdownError(ValueError):
    """A ValueError whose message the app wrote as Markdown (a layout's name in bold, as
    Compare lists it): shown as Markdown, where any other message is shown character for
    character."""


class PageDone(Exception):
    """Raised where a page has shown all it can (its error, and what still helps beside it):
    ``user_errors`` ends the page there quietly, and app.py still writes the link and closes
    the run, which ``st.stop()`` would skip."""


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a ValueError (bad input) as st.error with its message, never as a traceback."""
    try:
        yield
    except PageDone:
        pass
    except MarkdownError as exc:
        st.error(str(exc))
    except ValueError as exc:
        st.error(literal(str(exc)))


# --------------------------------------------------------------------------------------------
# Cached computations: pure functions of hashable arguments.


def profile_key(p: CacheProfile) -> tuple:
    """Every field of the profile (a new field cannot be left out of the cache key)."""
    return tuple(tuple(v.items()) if isinstance(v, dict) else v
                 for v in (getattr(p, f.name) for f in fields(p)))


@st.cache_data(max_entries=128, show_spinner=False, hash_funcs={CacheProfile: profile_key})
def cached_analysis(profile: CacheProfile, block_size: int, alignment: int, budget: int,
                    planner: str) -> PlanAnalysis:
    return analyze(profile.components(), block_size=block_size, alignment=alignment,
                   budget_bytes=budget, planner=planner)


def options_key(o: StrategyOptions) -> tuple:
    """Every knob of the options, so a cache keys on each one."""
    return astuple(o)


@st.cache_data(max_entries=128, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_strategies(profile: CacheProfile, names: tuple[str, ...], budget: int, context: int,
                      options: StrategyOptions) -> list[StrategyResult]:
    return [run_strategy(n, profile, budget_bytes=budget, context_tokens=context,
                         options=options) for n in names]


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_curves(profile: CacheProfile, strategy: str, budget: int, context: int,
                  options: StrategyOptions, reach: int | None) -> app_data.Curves:
    """The Budget page's curves: a run of every layout point each, so worth keeping."""
    return app_data.curves(profile, strategy, budget, context, options, reach)


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_least_budget(profile: CacheProfile, strategy: str, requests: int, context: int,
                        options: StrategyOptions) -> int | None:
    """The Budget page's least budget for its requests to hold: a bisection of many runs."""
    return sizing.least_budget_for_requests(strategy, profile, requests=requests,
                                            context_tokens=context, options=options)


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_context_curves(profile: CacheProfile, budget: int, contexts: tuple[int, ...],
                          options: StrategyOptions) -> sizing.ContextCurves:
    """Compare's concurrency over context lengths: a run of every layout a length."""
    return sizing.context_curves(profile, budget, contexts, options, STRATEGIES)


def current_strategies(s: AppState | None = None, names: tuple[str, ...] = STRATEGIES
                       ) -> list[StrategyResult]:
    """The engine strategies for the current view (all of them by default)."""
    s = s or state()
    return cached_strategies(s.profile(), names, s.budget().cache_bytes, s.context_length(),
                             s.strategy_options())


def plan_caption(a: PlanAnalysis) -> str:
    """The line under a plan page's title: model, planner, budget and where the budget comes
    from (a screenshot then carries its assumptions)."""
    s = state()
    return (f"{literal(s.profile().name)} · {app_data.PLANNER_TITLES[a.planner]} · budget "
            f"{exact_bytes(a.totals.budget_bytes)} per rank ({s.budget().derivation})")


def use_spec(spec: ModelSpec) -> None:
    """Make ``spec`` the current model, an edited one (the Model page shows it so)."""
    text = app_model.spec_to_json(spec)
    update(model=CUSTOM_SPEC, spec=text, raw=None)
    st.session_state["spec.filled"] = (CUSTOM_SPEC, text)


def mtp_added() -> bool:
    """Whether the current model carries an added MTP layer (``models.with_mtp_layer``)."""
    s = state()
    return s.model == CUSTOM_SPEC and s.model_spec().name.endswith(MTP_SUFFIX)


def speculative_note(strategy: str) -> None:
    """Where tokens are drafted: what ``strategy``'s figures count of speculative decoding,
    and a button that adds an MTP module's attention layer to the model when it has none (no
    engine option counts a drafter's layers)."""
    s = state()
    added = mtp_added()
    note = app_data.speculative_text(s.profile(), strategy, s.speculative_tokens,
                                     mtp_added=added)
    if note:
        st.caption(note)
        mtp_button()


def mtp_button() -> None:
    """With drafted tokens, a button that adds an MTP module's attention layer to a model that
    has a full-attention layer and no added one yet."""
    s = state()
    spec = s.model_spec()
    if not s.speculative_tokens or spec is None or mtp_added():
        return
    try:
        with_mtp = with_mtp_layer(spec)
    except ValueError:  # no full-attention layer to copy
        return
    st.button("Add an MTP layer", on_click=use_spec, args=(with_mtp,), icon=":material/add:",
              key="mtp.add", help=f"Makes the model {with_mtp.name}: one more cache layer "
              "shaped as its last full-attention layer, an edited model (Model page).")


def current_analysis(s: AppState | None = None, *, other_choice: str = "") -> PlanAnalysis:
    """The plan analysis of the current view, its refusals in the page's words."""
    s = s or state()
    profile, budget = s.profile(), s.budget()  # their errors carry no planner hint
    try:
        return cached_analysis(profile, s.block_size, s.effective_alignment, budget.cache_bytes,
                               s.planner)
    except BudgetTooSmall as small:
        raise ValueError(app_data.budget_too_small_text(small, budget.how_to_raise)) from None
    except ValueError:
        message = app_data.state_only_text(s.planner, profile, other_choice)
        if message is None:
            raise
        raise ValueError(message) from None


# --------------------------------------------------------------------------------------------
# Display helpers


def metric_row():
    """A row of headline metrics that wraps onto another line where the page is too narrow for
    them all (in st.columns they would be cut short with an ellipsis): call .metric on it."""
    return st.container(horizontal=True)


def table(rows: Any, *, height: int | str = "auto", formats: dict[str, str] | None = None) -> None:
    """A dataframe with thousands separators on its whole numbers (exact bytes stay readable);
    ``formats`` gives a column another NumberColumn format (e.g. ``"accounting"``: two decimals
    and thousands separators, as the charts label). A figure that does not apply to a row is a
    gap, shown as a dash, in a column that stays numbers, so it sorts as numbers. A first
    column of text names the rows, so it stays pinned while a wide table scrolls sideways (at
    1000 px)."""
    import pandas as pd

    # rows as given: a column of whole numbers with gaps stays whole numbers (not NaN floats)
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, dtype=object)
    df = df.copy()
    config: dict[str, Any] = {}
    for col in df.columns:
        values = df[col].dropna()
        if df[col].dtype != object or not len(values):
            continue
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            df[col] = df[col].astype("Int64")
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            df[col] = pd.to_numeric(df[col])  # fractional figures (concurrency) stay numbers
    config.update({
        col: st.column_config.NumberColumn(format=(formats or {}).get(col, "localized"))
        for col in df.columns
        if pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col])
    })
    first = df.columns[0] if len(df.columns) else None
    if first is not None and first not in config and (
            pd.api.types.is_object_dtype(df[first]) or pd.api.types.is_string_dtype(df[first])):
        config[first] = st.column_config.TextColumn(pinned=True)
    st.dataframe(df, hide_index=True, width="stretch", column_config=config, height=height,
                 placeholder=NOT_APPLICABLE)


NOT_APPLICABLE = "—"  # a table cell whose figure does not apply to its row


CHART_CONFIG = {"displaylogo": False,
                "modeBarButtonsToRemove": ["select2d", "lasso2d", "zoomIn2d", "zoomOut2d",
                                           "autoScale2d"]}


def chart(fig: go.Figure, *, key: str, file_name: str) -> None:
    """A chart and its HTML export (built only when downloaded). The toolbar keeps zoom, pan,
    reset and the PNG export: box and lasso select and the zoom steps select nothing here, and
    the full toolbar covered a half-width chart's title at 1000 px."""
    st.plotly_chart(fig, key=key, config=CHART_CONFIG)
    st.download_button(
        "Chart as HTML", data=lambda: fig.to_html(include_plotlyjs="cdn", full_html=True),
        file_name=file_name, mime="text/html", key=f"{key}.html", on_click="ignore",
        icon=":material/download:",
    )


# --------------------------------------------------------------------------------------------
# The frame around every page: notices from the link, and the shared sidebar.


def frame(page: str, *, page_shows_budget: bool = True) -> None:
    """What app.py draws around every page: notices from the link, and the shared sidebar.
    ``page``: the page this run draws; ``page_shows_budget``: the page explains a bad cache
    budget itself (all but Model)."""
    start_run(page)
    for notice in pop_notices():
        st.warning(literal(notice), icon=":material/link_off:")
    st.session_state[REJECTED_SLOT] = st.empty()  # end_run fills it: which widgets are drawn
    sidebar(page_shows_budget)


def _start_memory_fields(gpu: str) -> dict[str, int]:
    """Where a newly picked memory source starts: Custom from the GPU picked before, KV cache
    memory from the budget the sidebar had, so neither quietly changes the figures."""
    s = state()
    if gpu == CUSTOM_GPU and s.gpu in GPU_PRESETS:
        return {"gpu_memory": GPU_PRESETS[s.gpu]}
    if gpu in (KV_MEMORY, KV_BLOCKS) and s.gpu != gpu:
        try:
            cache = s.budget().cache_bytes
            if gpu == KV_MEMORY:
                return {"kv_memory": cache}
            blocks = cache // vllm_block_bytes(s.profile(), s.strategy_options())
            return {"kv_blocks": min(MAX_VLLM_BLOCKS, max(MIN_VLLM_BLOCKS, blocks))}
        except ValueError:  # no budget to start from: the field keeps its value
            return {}
    return {}


def _size_text(nbytes: int) -> str:
    """A memory field's text: short where a unit says it exactly, else bytes grouped in threes
    (a budget carried over from a GPU: 76,968,728,985B)."""
    return format_size(nbytes, grouped=True)


def sidebar(page_shows_budget: bool = True) -> None:
    """The model in one line, then the memory and paging settings every page shares."""
    side = st.sidebar
    model_ok = True
    try:  # the page shows the full error; the sidebar only points at it
        profile = state().profile()
        side.caption(f"Model: **{literal(profile.name)}** · {len(profile.layer_types)} cache "
                     "layers")
    except ValueError:
        model_ok = False
        side.caption(":red[Model: not valid with these settings; the page says why.]")
    _memory_settings(side, explained_on_page=page_shows_budget and model_ok)
    _paging_settings(side)
    side.caption("The link in the address bar holds this whole view: copy it to share.")


def _memory_settings(side: Any, *, explained_on_page: bool) -> None:
    """GPU (or an engine's logged KV cache memory), memory fraction, weights and TP, and the
    cache budget per rank they give; ``explained_on_page``: a bad budget is the page's error
    (the sidebar points at it), else the sidebar says it."""
    side.subheader("Memory", divider="gray")
    gpu = bind(side.selectbox, "gpu", "GPU", options=[*GPU_PRESETS, *MEMORY_SOURCES],
               format_func=lambda g: MEMORY_SOURCE_TITLES.get(g, g),
               also=_start_memory_fields,
               help="Memory one GPU (one TP rank) offers, as nvidia-smi reports it (H100 "
               "80GB: 81,559 MiB); or the KV cache memory of one rank itself, as an engine's "
               "log gives it. CUDA's total, which vLLM's gpu_memory_utilization and SGLang's "
               "mem fraction multiply, is less by what the driver reserves (nvidia-smi -q: FB "
               "Memory Total less Reserved; torch.cuda.mem_get_info()[1]), and varies with the "
               "driver: about 79.19 GiB on an H100 80GB, 139.80 GiB on an H200. To match a "
               "log, choose Custom with that total, the KV cache memory the log names, or "
               "the KV cache blocks vLLM 0.34 logs.")
    if gpu == CUSTOM_GPU:
        bind(side.text_input, "gpu_memory", "GPU memory", to_widget=_size_text,
             from_widget=gpu_memory_size,
             help="e.g. 80GB, 141GB, 79.2GiB or bytes")
    if gpu == KV_MEMORY:
        bind(side.text_input, "kv_memory", "KV cache memory per rank", to_widget=_size_text,
             from_widget=kv_memory_size,
             help="What the engine has for the cache on one rank, e.g. 44.59GiB from vLLM's "
             "\"Available KV cache memory: 44.59 GiB\" (read as floor(44.59 x 2**30) bytes). "
             "vLLM 0.34 on CUDA sizes its cache after warm-up: pick \"vLLM KV cache blocks\" "
             "above and give the N of its \"Memory after warmup: ... N KV cache blocks (X GiB) "
             "fit\" line (X is rounded to 0.01 GiB, a block or two). The memory fraction and "
             "weights do not apply.")
        if "kv_memory" not in st.session_state[ERRORS_KEY] and (
                note := decimal_unit_note(state().kv_memory)):
            side.caption(note)
    elif gpu == KV_BLOCKS:
        bind(side.number_input, "kv_blocks", "vLLM KV cache blocks per rank",
             min_value=MIN_VLLM_BLOCKS,
             max_value=MAX_VLLM_BLOCKS, step=1,
             help="The N of vLLM 0.34's \"Memory after warmup: ... N KV cache blocks (X GiB) "
             "fit\" line: the budget is N of vLLM's blocks at the engine options set "
             "here (a block is a page in each of its group_size tensors), so vLLM's figures "
             "match its log exactly and the other layouts get the same bytes. The memory "
             "fraction and weights do not apply.")
    else:
        bind(side.slider, "mem_fraction", "Memory fraction", min_value=MIN_MEM_FRACTION,
             max_value=1.0, step=0.01, format="%.4g",  # a link's 0.955 shows as 0.955
             help="Share of the GPU memory the engine may use (vLLM's gpu_memory_utilization: "
             "0.92 by default since vLLM 0.20, 0.9 before; SGLang's --mem-fraction-static). "
             "The default here is 0.9, the older vLLM's: set 0.92 to match a recent vLLM "
             "left at its default. "
             "vLLM 0.34 sizes its cache after warm-up: to match its log, pick \"vLLM KV cache "
             "blocks\" above and give the blocks it logs.")
        bind(side.text_input, "weights", "Model weights (all ranks)", to_widget=_size_text,
             from_widget=lambda t: memory_size(t, "Model weights", weights=True),
             help="The model's weights, all ranks together (2 B a parameter in bf16): each "
             "TP rank holds 1/TP of it. For the budget an engine would have, add what each "
             "rank keeps besides (activations, CUDA graphs) times TP, as that is per rank, "
             "not split; or pick \"KV cache memory\" above and give the memory its log "
             "prints.")
    bind(side.number_input, "tp", "Tensor parallel (TP)", min_value=1, max_value=MAX_TP,
         step=1, help="Each rank holds weights / TP, and a model's KV heads and state "
         "tensors split across the ranks: every figure is per rank. A model "
         "given in raw bytes is already per rank, so TP only splits its weights.")
    try:
        budget = state().budget()
        side.metric("Cache budget per rank", format_bytes(budget.cache_bytes),
                    help=f"{budget.cache_bytes:,} B")
        if (state().weights == 0 and gpu not in (KV_MEMORY, KV_BLOCKS)
                and "weights" not in st.session_state[ERRORS_KEY]):  # its error says enough
            side.caption("Model weights 0 B: all of the memory share goes to the cache. An "
                         "engine loads the weights first: enter them (2 B per parameter in "
                         "bf16, so 160GB for 80B) for the budget it would have.")
    except ValueError as exc:
        # a page stops at the first error: with the model wrong too, it explains only that
        side.caption(":red[Cache budget per rank: none; the page says why.]"
                     if explained_on_page else f":red[Cache budget per rank: none. {exc}]")


def _paging_settings(side: Any) -> None:
    """Block size, alignment and planner: how the planner pages the cache."""
    side.subheader("Paging", divider="gray")
    bind(side.number_input, "block_size", "Block size (tokens)", min_value=1,
         max_value=MAX_BLOCK_SIZE, step=1, help="Requested tokens per page (vLLM's "
         "--block-size: 16 by default up to 0.33, 64 from 0.34; 16 here, as in the vLLM 0.19 "
         "log these figures are checked against).")
    bind(side.number_input, "alignment", "Alignment (0 = block size)", min_value=0,
         max_value=MAX_BLOCK_SIZE, step=1, to_widget=lambda v: v or 0,
         from_widget=lambda v: int(v) or None,
         help="An inflated page size is rounded up to a multiple of this.")
    bind(side.selectbox, "planner", "Planner", options=list(PLANNERS),
         format_func=app_data.PLANNER_TITLES.get)


# --------------------------------------------------------------------------------------------
# Engine options: the strategies' knobs (Compare and Budget pages share them).

def _typed_ratio(v: float) -> float:
    return round(float(v), 6)  # the widget's float steps (0.9500000000000001) as typed


# Engine options that are counts: label, range and help.
_COUNT_WIDGETS = {
    "sglang_page_size": (
        "Page size (tokens)", 1, MAX_BLOCK_SIZE,
        "SGLang's --page-size: tokens per page of its token pool, which it rounds down to "
        "whole pages. Told none, 0.5.23 runs 1 on Hopper and Ampere, 64 on Blackwell "
        "(TensorRT-LLM backends; 128 on FA4 where K and V differ in width), and 64 for "
        "DeepSeek's sparse attention everywhere (applied here whatever this says)."),
    "sglang_slots_per_request": (
        "State slots per request S", 1, MAX_SLOTS_PER_REQUEST,
        "SGLang: 3 to 5 by radix-cache mode: the running-request cap is (slots - 1) // S, slot 0 "
        "being the padding slot."),
    "prefill_checkpoint_blocks": (
        "Prefill checkpoint blocks", 0, MAX_CHECKPOINT_BLOCKS,
        "Mamba cache mode align: state pages a request holds beyond its 2 for prefill "
        "checkpoints. vLLM 0.32 and later keep 1 for Mamba2 layers (Nemotron-H, Falcon-H1, "
        "Granite 4.0-H), 0.33 and later for GDN layers whose prefill runs on FlashInfer "
        "(Qwen3-Next and Qwen3.5 on Hopper, which also align P to 64: set the kernel block "
        "size to 64); 0 otherwise and in earlier releases."),
    "speculative_tokens": (
        "Speculative tokens", 0, MAX_SPECULATIVE_TOKENS,
        "Tokens drafted per step (vLLM's num_speculative_tokens, MTP or EAGLE); 0 serves "
        "without speculative decoding. A request holds that many more state pages in each "
        "state group, in every paged layout, as vLLM counts them; vLLM also widens "
        f"{DRAFT_WIDENED_CONV} conv states by a row per drafted token, which can raise its P. "
        "Not modelled "
        "for SGLang. A drafter's own layers count once they are in the model: \"Add an MTP "
        "layer\", beside the figures, adds an MTP module's."),
}

# Engine options that are ratios: label, range (as the URL reads it) and help.
_RATIO_WIDGETS = {
    "mamba_full_memory_ratio": ("Mamba / full memory ratio r", RATIO_RANGE,
                                "SGLang: the state pool gets budget x r / (1 + r)."),
    "swa_full_tokens_ratio": ("Sliding / full tokens ratio", SWA_RATIO_RANGE,
                              "SGLang's --swa-full-tokens-ratio, between 0 and 1: the "
                              "sliding-window pool's tokens relative to the full pool's."),
    "lcm_padding_bound": ("Two-level padding bound", PADDING_BOUND_RANGE,
                          "The largest padding a two-level layout accepts for any group."),
}

# Engine options whose default is the model's own (None in the state): label, step, largest
# value, help; the widget shows what the engine picks for the model and stores None while it is
# left there.
_OWN_DEFAULT_WIDGETS = {
    "kernel_block_size": (
        "Kernel block size A (tokens)", 16, MAX_BLOCK_SIZE,
        "vLLM: the attention backend's smallest kernel block size: 16 on most, 32 for "
        "FlashInfer with head 256 on Blackwell, 64 for MLA (FlashMLA; 128 for CUTLASS MLA). "
        "A = max(this, block size). Starts at the model's own. vLLM 0.34 runs an MLA model's "
        "block size of 16, 32 or 48 as it is (FLASH_ATTN_MLA, TRITON_MLA): set 16 for such a "
        f"run. An MLA hybrid's (Kimi-Linear's) A is at least {MLA_HYBRID_BLOCK}, as vLLM 0.27 "
        "and later raise it."),
    "mamba_chunk_size": (
        "Mamba chunk size (tokens)", 64, MAX_CHUNK_SIZE,
        "vLLM, mamba cache mode all: P aligns to lcm(chunk, A). Starts at the model's own: "
        "its config's mamba_chunk_size / chunk_size, else 2,048 as vLLM takes it."),
}
_FALLBACK = {"kernel_block_size": DEFAULT_KERNEL_BLOCK_SIZE,
             "mamba_chunk_size": DEFAULT_MAMBA_CHUNK_SIZE}


def model_note(s: AppState) -> None:
    """The model's caveat on its figures (a preset's, or what engines read differently in its
    config.json) beside the engines' figures."""
    if (spec := s.model_spec()) is not None and spec.notes:
        st.caption(f"Note on this model: {literal(spec.notes)}")


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
                  f"times a rope scaling factor where one applies), else {DEFAULT_CONTEXT:,}.",
                  shown=lambda _: state().context_length())
    if with_note:
        context_note()


def hold_requests_widget(fitting: int, context: int, *, fit: str = "fit") -> int:
    """The requests the least budget is asked for (one URL setting, Budget's and Compare's):
    one more than the ``fitting`` requests (at most the field's largest, said so) until one is
    typed. ``fit``: whose requests those are, as the help says them ("fit in the layout that
    holds most" on Compare). Returns the number to size for."""
    default = min(fitting + 1, MAX_REQUESTS)
    why = (f"one more than {fit}" if default > fitting else
           f"the most this field takes ({fitting:,} {fit} already)")
    bind(st.number_input, "hold_requests", "Requests to hold", min_value=1,
         max_value=MAX_REQUESTS, step=1, to_widget=lambda v: v or default,
         from_widget=lambda v: None if int(v) == default else int(v),
         help=f"Requests of {tokens_text(context)} at once, for the least cache budget that "
         f"holds them. Until you give a number: {default:,}, {why}.")
    return state().hold_requests or default


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
    if not (note := app_data.model_context_text(s.context, own, DEFAULT_CONTEXT)):
        return
    st.caption(note)
    if own is not None:
        st.button(f"Use the model's {own:,} tokens", key="context.own", type="tertiary",
                  on_click=update, kwargs={"context": None}, icon=":material/straighten:")


# Engine options that are on / off toggles: field -> (label, help). Labels short: a third of
# the page at 1000 px cut "Hybrid KV cache manager" and "Async scheduling".
_TOGGLE_WIDGETS = {
    "vllm_hybrid_manager": (
        "Hybrid manager",
        "vLLM's hybrid KV cache manager, on by default. Off is "
        "--disable-hybrid-kv-cache-manager (some KV connectors turn it off too): sliding "
        "and chunked layers then keep every token, allocated as full attention in one "
        "group (where sliding layers keep other heads than full ones, as Gemma 4's, a block "
        "is a page of each layer's own size), and a model with state layers does not start. "
        "vLLM releases before PR "
        "#29627 ran Llama 4's chunked layers so by default (unless "
        "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1)."),
    "vllm_async_scheduling": (
        "Async sched.",
        "Window pages sized by async scheduling's two batches in flight: vLLM 0.26 and "
        "later size the pages a sliding-window or chunked request holds by the tokens in "
        "flight, 2 x max batched tokens with async scheduling (their default). Off counts "
        "one step's tokens, as those releases with --no-async-scheduling and every release "
        "before 0.26 do (the vLLM 0.19 log these figures are checked against)."),
}


def engine_widget(field: str) -> None:
    """The bound widget of one engine option (an AppState field of ENGINE_FIELDS): a number
    field from one of the tables above, else the option's own widget below."""
    if field in _RATIO_WIDGETS:
        label, (low, high), text = _RATIO_WIDGETS[field]
        bind(st.number_input, field, label, min_value=float(low), max_value=float(high),
             step=0.05, format="%.4g", from_widget=_typed_ratio, help=text)
    elif field in _COUNT_WIDGETS:
        label, low, high, text = _COUNT_WIDGETS[field]
        bind(st.number_input, field, label, min_value=low, max_value=high, step=1, help=text)
    elif field in _OWN_DEFAULT_WIDGETS:
        label, step, largest, text = _OWN_DEFAULT_WIDGETS[field]
        try:
            model_default = state().engine_choices()[field][0]  # the model's own
        except ValueError:  # the page shows why; the widget still needs a value
            model_default = _FALLBACK[field]
        bind(st.number_input, field, label, min_value=1, max_value=largest, step=step,
             to_widget=lambda v: v or model_default,
             from_widget=lambda v: None if int(v) == model_default else int(v), help=text)
    elif field in _TOGGLE_WIDGETS:
        label, text = _TOGGLE_WIDGETS[field]
        bind(st.toggle, field, label, help=text)
    elif field in _OWN_WIDGETS:
        _OWN_WIDGETS[field]()
    else:  # a new ENGINE_FIELDS entry needs its widget here
        raise KeyError(f"no widget for the engine option {field!r}")


def _mamba_cache_mode_widget() -> None:
    # fixed labels (bind says why); the pages with checkpoints and drafted ones below
    bind(st.selectbox, "mamba_cache_mode", "Mamba cache mode", options=list(MAMBA_CACHE_MODES),
         format_func=app_data.MAMBA_MODE_CHOICES.get,
         help="State pages one request holds: 1 (none), 2 (align), or one every P tokens "
         "(all: prefix caching of state), plus one per speculative token. Every paged "
         "layout counts them this way. vLLM "
         "0.28 and later turn prefix caching on for hybrid models, in align by default "
         "(the log names the mode); none, the default here, is "
         "--no-enable-prefix-caching or vLLM up to 0.27. vLLM 0.32 and later have no "
         "mode all, and keep prefill checkpoint blocks in align (its own field).")
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
         help="SGLang keeps sliding-window layers (and Llama 4's chunked ones) in a token "
         "pool of their own (its hybrid "
         f"SWA pool) only for the architectures on its list: {SGLANG_SWA_ARCHITECTURES}; "
         "for the others (Gemma 2 / 3, Cohere2, Mistral) every layer keeps every token in "
         f"one pool. auto is SGLang's own choice; for this model "
         f"{'on' if by_model else 'off'}, {literal(why)}.")


def _sglang_ssm_dtype_widget() -> None:
    by_model, why = state().engine_choices()["sglang_ssm_dtype"]
    choices = {"auto": f"auto ({by_model})", **{dtype: dtype for dtype in SGLANG_SSM_DTYPES}}
    bind(st.selectbox, "sglang_ssm_dtype", "ssm state dtype", options=list(choices),
         format_func=choices.get,
         to_widget=lambda v: "auto" if v is None else v,
         from_widget=lambda k: None if k == "auto" else k,
         help="SGLang keeps every state layer's ssm tensor in one dtype, whatever the "
         "model's: SGLANG_MAMBA_SSM_DTYPE when set (choose it here), else the config's "
         f"mamba_ssm_dtype, else float32. auto is SGLang's own choice; for this model "
         f"{by_model}, {why}. vLLM keeps the model's ssm dtype.")


def _max_batched_tokens_widget() -> None:
    tokens_widget("max_batched_tokens", "Max batched tokens", "Tokens scheduled per step "
                  "(vLLM's --max-num-batched-tokens); sizes the pages a sliding-window or "
                  "chunked request holds. vLLM 0.26 and later size them by the tokens in "
                  "flight, twice this with async scheduling (vLLM's own option).")


# the engine options whose widget is not a plain number field: field -> draws it
_OWN_WIDGETS = {
    "mamba_cache_mode": _mamba_cache_mode_widget,
    "sglang_swa_pool": _sglang_swa_pool_widget,
    "sglang_ssm_dtype": _sglang_ssm_dtype_widget,
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
    if changes := state().recent_vllm_changes():
        st.button("Use vLLM 0.34's defaults", on_click=update, kwargs=changes, key=key,
                  icon=":material/update:", help=app_data.recent_vllm_help(changes))


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
        st.caption(note)
        if every_engine:
            recent_vllm_button("options.recent_vllm")
