"""The app's state in the session and the URL, bound widgets and how a bad entry is shown:
what every page reads and writes through. Streamlit lives here and in the pages only."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from flatkv.app_state import AppState, decode_query, encode_query
from flatkv.units import error_sentence, plain_number
from flatkv.units import markdown_literal as literal

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
    this run so far. Not frozen: one object a run, filled as the run draws its widgets."""

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


KEPT_PREFIX = "flatkv.kept."  # + a text widget's key: its text, kept apart from the widget


def _keep_text(key: str) -> None:
    st.session_state[KEPT_PREFIX + key] = st.session_state[key]


def kept_text(widget: Callable[..., str], label: str, key: str, **kwargs: Any) -> str:
    """A text area or text input (``widget``: ``st.text_area``, ``st.text_input``) whose text
    survives runs that do not draw it. Streamlit drops the value of a widget a run does not
    draw, so a paste (an engine log, a config.json not yet loaded) or the name typed for it
    went empty on a trip to another page or another source; the session keeps each entry
    apart from the widget and restores it. Text emptied by hand is kept empty."""
    show_value(key, st.session_state.get(KEPT_PREFIX + key, ""))
    return widget(label, key=key, on_change=_keep_text, args=(key,), **kwargs)


def forget_kept(key: str) -> None:
    """Empty the kept text of ``key``: its widget shows nothing from the next time it is drawn
    (a name typed for one load is not offered for the next)."""
    st.session_state.pop(KEPT_PREFIX + key, None)


def state() -> AppState:
    """The current view; on a session's first run it is read from the URL, and again where
    the session holds a view of an older AppState class (the code changed under a running
    server, which reloads the module: that view lacks the new fields). The URL holds the
    whole view either way."""
    ss = st.session_state
    if type(ss.get(STATE_KEY)) is not AppState:
        params = st.query_params  # every value of a key given twice, which the notice names
        decoded, notices = decode_query({k: params.get_all(k) for k in params})
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
        owner.error(error_text(error))
    return value


def whole_number_field(step: int = 1) -> dict[str, Any]:
    """st.number_input's arguments for a field of whole numbers: a float field (its step a
    float) shown as typed ("%g": 16, not 16.00). Streamlit's int field cuts a typed fraction
    to its whole part, in the browser and again on the server (24.5 gave a block size of 24,
    without a word, and every figure followed); a float field sends 24.5 as typed, and
    ``whole_number`` refuses it under the field."""
    return {"step": float(step), "format": "%g"}


def whole_number(label: str, value: float, least: int | None = None,
                 most: int | None = None, takes: Callable[[int], bool] = lambda n: True) -> int:
    """A whole-number field's entry (see ``whole_number_field``) as an int; a fraction is
    refused in the field's words, with the nearest whole numbers either side that the field
    takes (``least`` to ``most``, and ``takes``): a head dim of 0.5 suggests 1, not "0 or 1",
    and the GPU lab's Max blocks, which refuses 1, suggests "0 or 2" for 0.5."""
    if float(value).is_integer():
        return int(value)
    low = math.floor(value)

    def fits(n: int) -> bool:
        return (least is None or n >= least) and (most is None or n <= most) and takes(n)

    below = next((n for n in range(low, low - _NEAR_STEPS, -1) if fits(n)), None)
    above = next((n for n in range(low + 1, low + 1 + _NEAR_STEPS) if fits(n)), None)
    near = [n for n in (below, above) if n is not None]
    if not near:  # past the range: its nearer end
        near = [least if least is not None and low < least else most]
    raise ValueError(f"{label} is {plain_number(value)}: give a whole number, such as "
                     f"{' or '.join(f'{n:,}' for n in near)}")


# how far either side of a typed fraction ``whole_number`` looks for a whole number the field
# takes (a field refuses a value or two inside its range, as Max blocks refuses 1)
_NEAR_STEPS = 4


def _takes(from_widget: Callable[[Any], Any]) -> Callable[[int], bool]:
    """Whether ``from_widget`` takes a whole number: the field's own checks past its range."""
    def takes(n: int) -> bool:
        try:
            from_widget(n)
        except ValueError:
            return False
        return True
    return takes


def _checked_number(label: str, kwargs: dict[str, Any],
                    from_widget: Callable[[Any], Any]) -> tuple[dict[str, Any], Callable]:
    """A number input's range, checked here rather than by streamlit: streamlit puts the
    minimum into an emptied field (TP 1, block size 1, and every figure follows) and keeps an
    entry out of range on screen without sending it (the figures stay as they were, unsaid).
    Here an emptied or out-of-range entry is refused under the field, like any bad entry. So
    streamlit gets no bounds: its - / + step past them too, and the field says why it refuses.
    A field of whole numbers (int bounds) is a ``whole_number_field``: a typed fraction is
    refused too, rather than cut."""
    if "min_value" not in kwargs or "max_value" not in kwargs:
        raise TypeError(f"bind(number_input, {label!r}) needs min_value and max_value")
    low, high = kwargs.pop("min_value"), kwargs.pop("max_value")
    whole = isinstance(low, int)
    shown = (lambda v: f"{v:,}") if whole else plain_number
    wanted = f"give a number from {shown(low)} to {shown(high)}"
    if whole:
        kwargs = {**kwargs, **whole_number_field(kwargs.get("step", 1))}

    def checked(value: Any) -> Any:
        if value is None:
            raise ValueError(f"{label} is empty: {wanted}")
        if whole:
            value = whole_number(label, value, low, high, _takes(from_widget))
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


def link_notice(notice: str) -> None:
    """A link's value the view does not use, said as a warning: the page shows its figures with
    a default in its place (``frame``'s, from ``decode_query``; a page's, for what only the page
    can check, as Layout's bytes chart view)."""
    st.warning(error_text(notice), icon=":material/link_off:")


def error_text(message: str) -> str:
    """A library message as a page's st.error or st.warning shows it: a sentence where it opens
    with prose (``error_sentence``: "mamba chunk is empty" -> "Mamba chunk is empty"; a flag,
    a key or a field and its value as spelt), its Markdown taken literally. Every page's
    error goes through it, so none starts in the library's lower case, which is written to
    follow "error: " on the CLI's line."""
    return literal(error_sentence(message))


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a ValueError (bad input) as st.error with its message, never as a traceback: as a
    sentence where it opens with prose (``error_sentence``), the library's own lower case
    written to follow "error: " on the CLI's line."""
    try:
        yield
    except PageDone:
        pass
    except MarkdownError as exc:
        st.error(str(exc))
    except ValueError as exc:
        st.error(error_text(str(exc)))

