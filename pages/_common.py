"""What every page shares: the app state in the session and the URL, bound widgets, cached
computations, error display and number formats. Streamlit lives here and in the pages only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from flatkv.analysis import PlanAnalysis, analyze
from flatkv.app_state import AppState, decode_query, encode_query
from flatkv.profile import CacheProfile
from flatkv.units import format_bytes

STATE_KEY = "flatkv.state"
NOTICES_KEY = "flatkv.notices"
ERRORS_KEY = "flatkv.errors"


def state() -> AppState:
    """The current view; on a session's first run it is read from the URL."""
    ss = st.session_state
    if STATE_KEY not in ss:
        decoded, notices = decode_query(st.query_params.to_dict())
        ss[STATE_KEY] = decoded
        ss[NOTICES_KEY] = notices
        ss[ERRORS_KEY] = {}
    return ss[STATE_KEY]


def update(**changes: Any) -> AppState:
    new = replace(state(), **changes)
    st.session_state[STATE_KEY] = new
    return new


def sync_url() -> None:
    """Write the view into the URL (only values that differ from the defaults)."""
    target = encode_query(state())
    if st.query_params.to_dict() != target:
        st.query_params.from_dict(target)


def pop_notices() -> list[str]:
    return st.session_state.pop(NOTICES_KEY, None) or []


def bind(
    widget: Callable[..., Any],
    field: str,
    label: str,
    *,
    to_widget: Callable[[Any], Any] = lambda v: v,
    from_widget: Callable[[Any], Any] = lambda v: v,
    **kwargs: Any,
) -> Any:
    """A widget whose value is the AppState field ``field``.

    The state, not the widget, is the source of truth: a widget that was not drawn on the last
    run (another page) starts again from the state. A value the field rejects leaves the state
    as it was and shows why under the widget.
    """
    ss = st.session_state
    key = f"w.{field}"
    if key not in ss:
        ss[key] = to_widget(getattr(state(), field))

    def changed() -> None:
        try:
            update(**{field: from_widget(ss[key])})
            ss[ERRORS_KEY].pop(field, None)
        except ValueError as exc:
            ss[ERRORS_KEY][field] = str(exc)

    value = widget(label, key=key, on_change=changed, **kwargs)
    error = ss[ERRORS_KEY].get(field)
    if error:
        owner = getattr(widget, "__self__", st)
        owner.error(error)
    return value


def set_widget(field: str, value: Any) -> None:
    """Move a bound widget to ``value`` (from a callback, before the widget is drawn)."""
    st.session_state[f"w.{field}"] = value


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a ValueError (bad input) as st.error with its message, never as a traceback."""
    try:
        yield
    except ValueError as exc:
        st.error(str(exc))


# --------------------------------------------------------------------------------------------
# Cached computations: pure functions of hashable arguments.


def _profile_key(p: CacheProfile) -> tuple:
    return (p.layer_types, p.kv_bytes_per_slot, tuple(p.state_const_bytes.items()),
            p.sliding_window, p.name)


@st.cache_data(max_entries=128, show_spinner=False, hash_funcs={CacheProfile: _profile_key})
def cached_analysis(profile: CacheProfile, block_size: int, alignment: int, budget: int,
                    planner: str) -> PlanAnalysis:
    return analyze(profile.components(), block_size=block_size, alignment=alignment,
                   budget_bytes=budget, planner=planner)


def current_analysis(s: AppState | None = None, *, planner: str | None = None) -> PlanAnalysis:
    s = s or state()
    return cached_analysis(s.profile(), s.block_size, s.effective_alignment,
                           s.budget().cache_bytes, planner or s.planner)


# --------------------------------------------------------------------------------------------
# Display helpers


def fmt_bytes(n: int) -> str:
    """``103,219,200 B (98.44 MiB)``: exact bytes first, the readable size after."""
    return f"{n:,} B ({format_bytes(n)})" if abs(n) >= 1024 else f"{n:,} B"


def chart(fig: go.Figure, *, key: str, file_name: str) -> None:
    """A chart and its HTML export (built only when downloaded)."""
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
    st.download_button(
        "Chart as HTML", data=lambda: fig.to_html(include_plotlyjs="cdn", full_html=True),
        file_name=file_name, mime="text/html", key=f"{key}.html", on_click="ignore",
        icon=":material/download:",
    )
