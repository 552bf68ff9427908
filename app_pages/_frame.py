"""What frames every page: tables, metrics and charts in the house style, the notices from a
link, and the shared sidebar (model, memory, paging)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from app_pages._figures import take_refused_draft
from app_pages._session import (
    ERRORS_KEY,
    REJECTED_SLOT,
    bind,
    link_notice,
    pop_notices,
    start_run,
    state,
)
from flatkv import strategy_notes
from flatkv.analysis import PLANNER_STRATEGY, PLANNERS
from flatkv.app_state import (
    CUSTOM_GPU,
    GPU_PRESETS,
    KV_BLOCKS,
    KV_MEMORY,
    MAX_BLOCK_SIZE,
    MAX_TP,
    MAX_VLLM_BLOCKS,
    MEMORY_SOURCE_TITLES,
    MEMORY_SOURCES,
    MIN_MEM_FRACTION,
    MIN_VLLM_BLOCKS,
    gpu_memory_size,
    kv_memory_size,
)
from flatkv.budget import ARCH_NOT_SAID, GPU_ARCHITECTURES, gpu_arch_text
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.units import decimal_unit_note, format_bytes, format_size, memory_size, sentence_case
from flatkv.units import markdown_literal as literal

# --------------------------------------------------------------------------------------------
# Display helpers


# Headline metrics sit in a grid: cells of one width, as many a line as fit, each stretched to
# fill the line. A row that wraps keeps its metrics in columns under one another; wrapped as a
# flex row, each line took its metrics' own widths, so Budget's second line started its metrics
# at other places than its first (and than the line under it), and read ragged. 240 px: the
# widest label with its tooltip's icon that takes one cell (Dead share of a sliding_attention
# block, 247 px in Chromium) fits a cell in the main column at 1000 px (540 px: two cells of
# 262) and from
# 1,366 px (905: three of 291) to 1,440 px (979: three of 326); at 210, four cells of 214 px at
# 1,366 px cut vLLM's "GPU KV cache size" (tokens) (231 px). Streamlit styles a keyed container
# by its "st-key-<key>" class.
METRIC_MIN_PX = 240
# A metric whose delta (or label) is wider than a cell at 1000 px (two in the 540 px main column,
# 262 px each) takes two cells (Layout's capacity of a sliding model, "token slots 1,565,920
# (blocks x P) · windows counted as full history", 420 px, was cut in one). A label is measured
# by its characters in the labels' font, Source Sans at 14 px (``LABEL_CHAR_PX``, Chromium's
# widths in six classes, within 1.2 px a character and a few percent over a label: SGLang's
# max_total_num_tokens (tokens) 246 px, counted 254; at 6.6 px a character "Dead share of a
# sliding_attention block", 227 px, counted 257 and took two cells it did not need), its
# tooltip's icon 20 px; a delta 6 px a character in its chip (vLLM's "concurrency x context, as
# vLLM logs it": 230 px).
# Dense: a metric of one cell after a wide one that wrapped fills the cell the wide one left
# (SGLang's max_total_num_tokens (tokens) of a state-only model, third of three at 1,440 px,
# left the line's last cell empty).
# A row of four (none of them two cells wide) reads four a line where each cell gets
# METRIC_QUARTER_PX (232: the main column at 1,440 px is 980 px, four cells of 233), else two
# a line: in the grid above, at 1,440 px (and 1,366, 905 px) it read three and one, the last
# alone on its line. Four only where every metric fits a quarter: one wider (keyed
# ``metric-over-quarter-``: gpt-oss-20b's "Dead share of a sliding attention block" on Layout,
# 250 px counted)
# keeps its row two a line. The least cell is 232 px from 976 px (four cells and their gaps)
# up, else half the row: ``(976px - 100%) * 999`` is 0 or less from 976 px, and huge under it.
# A row in the
# grid of the row right above it (``metrics-under-``: Budget's requests to hold under its
# figures) takes the same columns. A field in a row of metrics (Budget's requests to hold) has
# its tooltip's icon beside its label, as the metrics have: streamlit puts a field's at the
# right edge of its cell (149 px past "Requests to hold" at 1000 px, 120 at 1,440).
METRIC_QUARTER_PX = 232
METRIC_GAP_PX, LABEL_HELP_PX, DELTA_CHAR_PX = 16, 20, 6
METRIC_LABEL_LINE_PX = 19  # a line of a metric's label (its box: 19 px, 38 on two lines)
_FOUR_WIDE = 4 * METRIC_QUARTER_PX + 3 * METRIC_GAP_PX
_WRAPPER = "[data-testid='stLayoutWrapper']"  # a keyed container's wrapper, the rows' siblings
_ROW_OF_FOUR = (f"{_WRAPPER}:has(> [class*='st-key-metrics-'] > :nth-child(4):last-child)"
                ":not(:has(> [class*='st-key-metrics-'] > * > "
                "[class*='st-key-metric-two-cells-']))")
_QUARTERS = _ROW_OF_FOUR + (":not(:has(> [class*='st-key-metrics-'] > * > "
                            "[class*='st-key-metric-over-quarter-']))")
# ... and where one is over a quarter (gpt-oss-20b's "Dead share of a sliding attention block"
# on Layout, 247 px in a 233 px quarter), four a line still where the page gives quarters
# (from 976 px: 1,440 px's 980), in quarters too, so that its columns line up with the row of
# four above it: the wide label wraps to a second line in its quarter, and every label of the
# row keeps two lines' room (METRIC_LABEL_LINE_PX), so their figures stay level. Kept two a
# line, half of each line was blank under a row of four a line; in columns as wide as their
# cells' content, the row started its cells 0, 32, 62 and 59 px left of the row above's (its
# cells 201, 203, 236 and 292 px wide, the row above's 233)
_OVER_QUARTER_ROW = _ROW_OF_FOUR + (":has(> [class*='st-key-metrics-'] > * > "
                                    "[class*='st-key-metric-over-quarter-'])")


def _four_columns(row: str, least: str) -> str:
    """The rule that sets a row of four (``row``: its wrapper), and a row under it, in columns
    of at least ``least``."""
    return (f"{row} > [class*='st-key-metrics-'], {row} + {_WRAPPER} > "
            f"[class*='st-key-metrics-under-'] {{grid-template-columns: repeat(auto-fill, "
            f"minmax({least}, 1fr));}}")


# No line ends with one cell alone where a row has 3 metrics or more (Budget's "GPU memory for
# it", third under its row of four, alone at 1000 and 1,400 px; the Model page's fifth at
# 1000 px). The rows' wrappers are size containers, so a rule knows the columns a width gives
# (``minmax(240px, 1fr)``: two from 496 px, three from 752, four from 1,008): in two columns
# an odd count's last cell spans the line, in three a count of 3k + 1 (not a row of four,
# which reads two and two); a row under a row of four (two columns under 976 px) takes the
# grid's own columns from 752 px where its count is odd (three a line at 1,400 px, 940 px),
# and spans its last cell under that. Rows with a two-cell metric are left as they are (their
# cells are not counted one a column).
# the least widths of three and four columns of METRIC_MIN_PX and their gaps: 752 and 1,008 px
_THREE_COLUMNS_PX, _FOUR_COLUMNS_PX = (n * METRIC_MIN_PX + (n - 1) * METRIC_GAP_PX
                                       for n in (3, 4))
_SPAN = "{grid-column: 1 / -1;}"
_ODD = ":last-child:nth-child(2n+3)"  # the last cell of an odd count of 3 or more
_ONE_CELL_WIDE = ":not(:has(> * > [class*='st-key-metric-two-cells-']))"
_UNDER_FOUR = f"{_ROW_OF_FOUR} + {_WRAPPER} > [class*='st-key-metrics-under-']"
_LONE_CELL_CSS = (
    f"{_WRAPPER}:has(> [class*='st-key-metrics-']) {{container-type: inline-size;}} "
    # two columns (or one)
    f"@container (max-width: {_THREE_COLUMNS_PX - 0.02}px) {{[class*='st-key-metrics-']"
    f"{_ONE_CELL_WIDE} > {_ODD} {_SPAN}}} "
    # under a row of four that reads two and two: the grid's own three columns
    f"@container (min-width: {_THREE_COLUMNS_PX}px) and (max-width: {_FOUR_WIDE - 0.02}px) {{"
    f"{_UNDER_FOUR}:has(> {_ODD}) {{grid-template-columns: repeat(auto-fill, "
    f"minmax({METRIC_MIN_PX}px, 1fr));}}}} "
    # three columns
    f"@container (min-width: {_THREE_COLUMNS_PX}px) and (max-width: {_FOUR_COLUMNS_PX - 0.02}"
    f"px) {{[class*='st-key-metrics-']:not([class*='st-key-metrics-under-']){_ONE_CELL_WIDE}"
    f":not(:has(> :nth-child(4):last-child)) > :last-child:nth-child(3n+4) {_SPAN}}} "
    # a row of four with one over a quarter, where quarters fit (``_OVER_QUARTER_ROW``)
    f"@container (min-width: {_FOUR_WIDE}px) {{{_OVER_QUARTER_ROW} > "
    "[class*='st-key-metrics-'] {grid-template-columns: repeat(4, minmax(0, 1fr));} "
    f"{_OVER_QUARTER_ROW} [data-testid='stMetricLabel'] "
    f"{{min-height: {2 * METRIC_LABEL_LINE_PX}px; align-items: start;}} "
    f"{_OVER_QUARTER_ROW} [class*='st-key-metric-over-quarter-'] [data-testid='stMetricLabel'] "
    ":is(.stMarkdownEllipsis, p) {white-space: normal;}} ")


METRIC_GRID_CSS = ("<style>[class*='st-key-metrics-'] {display: grid !important; "
                   f"grid-template-columns: repeat(auto-fill, minmax({METRIC_MIN_PX}px, 1fr));"
                   "grid-auto-flow: row dense;"
                   "} [class*='st-key-metrics-'] > :has(> [class*='st-key-metric-two-cells-']) "
                   "{grid-column: span 2;} "  # the grid's item is the cell's wrapper
                   + _four_columns(_ROW_OF_FOUR, f"max({METRIC_MIN_PX}px, 50% - 9px)")
                   + _four_columns(_QUARTERS, f"clamp({METRIC_QUARTER_PX}px, "
                                   f"({_FOUR_WIDE}px - 100%) * 999, 50% - 9px)")
                   # a field's tooltip icon beside its label, 6 px on, as the metrics' beside it
                   + "[class*='st-key-metrics-'] [data-testid='stWidgetLabel'] > "
                   "div:has(> [data-testid='stTooltipIcon']) {flex: 0 1 auto; margin-left: 6px;}"
                   + _LONE_CELL_CSS + "</style>")
# px a character of a metric's label: these characters, else 7.6 (digits, most letters)
LABEL_CHAR_PX = ((" i|',.:;jlI", 3.5), ("!f()[]{}-t/\\r", 4.6), ('*?sz"xcvyJYLFek', 6.6),
                 ("&DGUHNOQ", 9.0), ("wMW%m@", 11.2))
LABEL_OTHER_PX = 7.6


def label_px(text: str) -> float:
    """The pixels ``text`` takes as a metric's label (``LABEL_CHAR_PX``)."""
    return sum(next((px for chars, px in LABEL_CHAR_PX if ch in chars), LABEL_OTHER_PX)
               for ch in text)


def metric_px(label: str, delta: str | None = None, has_help: bool = False) -> int:
    """The pixels a metric's label (and its tooltip's icon) or its delta chip take."""
    return int(max(label_px(label) + (LABEL_HELP_PX if has_help else 0),
                   len(delta or "") * DELTA_CHAR_PX))


def metric_cell_px() -> int:
    """A metric cell's width at 1000 px: two cells and their gap in the main column."""
    return (MAIN_COLUMN_PX - METRIC_GAP_PX) // 2


class MetricRow:
    """A row of headline metrics (``metric_row``): ``.metric`` as st.metric, ``.container()``
    a cell for widgets."""

    def __init__(self, name: str, *, under: bool = False) -> None:
        self._name, self._keyed = name, 0
        self._row = st.container(horizontal=True,
                                 key=f"metrics-{'under-' if under else ''}{name}")

    def container(self):
        return self._row.container()

    def metric(self, label: str, value: Any, delta: Any = None, **kwargs: Any) -> None:
        px = metric_px(label, delta if isinstance(delta, str) else None, bool(kwargs.get("help")))
        kind = ("two-cells" if px > metric_cell_px()
                else "over-quarter" if px > METRIC_QUARTER_PX else None)
        if kind:  # a cell of its own, keyed by what it needs (METRIC_GRID_CSS)
            self._keyed += 1
            cell = self._row.container(key=f"metric-{kind}-{self._name}-{self._keyed}")
        else:
            cell = self._row
        cell.metric(label, value, delta, **kwargs)


def metric_row(name: str, *, under: bool = False) -> MetricRow:
    """A row of headline metrics (``name``: its key on the page) that wraps onto another line
    where the page is too narrow for them all (in st.columns they would be cut short with an
    ellipsis), in columns (``METRIC_GRID_CSS``): call .metric on it, or draw a cell of widgets
    in ``.container()``. ``under``: the row sits in the grid of the row right above it, its
    cells under that row's."""
    return MetricRow(name, under=under)


# Headers on screen in the pages' words where the data keeps the code's (its CSV, the CLI's JSON
# and the tests read "strategy"): a row of Compare's tables is a layout, as every page says it
_SHOWN_AS = {"strategy": "layout"}


def table(rows: Any, *, height: int | str = "auto", formats: dict[str, str] | None = None,
          helps: dict[str, str] | None = None, labels: dict[str, str] | None = None,
          fit_px: int | None = None, runs: Sequence[Sequence[str]] | None = None) -> None:
    """A dataframe with thousands separators on its whole numbers (exact bytes stay readable);
    ``formats`` gives a column another NumberColumn format (e.g. ``"accounting"``: two decimals
    and thousands separators, as the charts label). A figure that does not apply to a row is a
    gap, shown as a dash, in a column that stays numbers, so it sorts as numbers. The first
    column names the rows (a layout, or a context length in numbers), so it stays pinned where a
    table wider than its place scrolls sideways. ``helps``: a column's tooltip, where its header
    alone could mislead. Every column is as wide as its header and cells (``column_width``).
    ``labels``: a shorter header on screen for a column (the data, its CSV and the tests keep
    the full name), where the full one would push the columns after it past the edge at 1000 px,
    or the pages' word for the code's (``_SHOWN_AS``). ``fit_px``: the width the table must fit
    without a sideways scroll (``MAIN_COLUMN_PX``, ``EXPANDER_COLUMN_PX``); where its columns
    are wider, it is drawn as a few tables one under another, each its first column and a run of
    the others (``column_runs``), every figure whole and in view. ``runs``: the columns (after
    the first) of each of those tables where the page groups them by what they say (Compare's
    figures, and its block bytes and log counts), at any width. A split table is drawn whole
    too, and the page's style shows the whole where its place holds it (``split_table_css``)."""
    import pandas as pd

    # rows as given: a column of whole numbers with gaps stays whole numbers (not NaN floats)
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, dtype=object)
    df = df.copy()
    config: dict[str, Any] = {}
    for col in df.columns:
        values = df[col].dropna()
        if df[col].dtype != object:
            continue
        # whole numbers, or gaps only: a column of figures none of whose rows apply (vLLM's
        # older log line where vLLM does not start) stays numbers, its dashes aligned as theirs
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            if all(abs(v) < 2**63 for v in values):
                df[col] = df[col].astype("Int64")
            else:  # past int64 (SGLang's least budget at r = 1e-06, 10**21 B): exact as text
                df[col] = df[col].map(lambda v: v if v is None else f"{v:,}")
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            df[col] = pd.to_numeric(df[col])  # fractional figures (concurrency) stay numbers
    helps, labels = helps or {}, {**_SHOWN_AS, **(labels or {})}
    config.update({
        col: st.column_config.NumberColumn(
            labels.get(col), format=(formats or {}).get(col, "localized"), help=helps.get(col),
            pinned=True if col == df.columns[0] else None,
            width=column_width(labels.get(col, col), [_shown_number(v) for v in df[col].dropna()],
                               bool(helps.get(col))))
        for col in df.columns
        if pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col])
    })
    for i, col in enumerate(df.columns):
        if col not in config and (pd.api.types.is_object_dtype(df[col])
                                  or pd.api.types.is_string_dtype(df[col])):
            config[col] = st.column_config.TextColumn(
                labels.get(col), pinned=True if i == 0 else None, help=helps.get(col),
                width=column_width(labels.get(col, col), [str(v) for v in df[col].dropna()],
                                   bool(helps.get(col))))
    first, rest = df.columns[0], list(df.columns[1:])
    def width(col: str) -> int:  # a column left to Streamlit (a bool's) counts as none
        return config.get(col, {}).get("width", 0)

    def draw(run: Iterable[int]) -> None:
        shown = [first, *(rest[i] for i in run)]
        st.dataframe(df[shown], hide_index=True, width="stretch",
                     column_config={c: config[c] for c in shown if c in config}, height=height,
                     placeholder=NOT_APPLICABLE)

    parts = ([[rest.index(c) for c in run] for run in runs] if runs
             else column_runs(width(first), [width(c) for c in rest], fit_px) if fit_px
             else [range(len(rest))])
    if len(parts) == 1:
        draw(parts[0])
        return
    # the page does not know its width: the whole table and its runs both, the page's CSS
    # showing the whole where its place holds it (``split_table_css``), the runs elsewhere
    name = f"{zlib.crc32('|'.join(map(str, df.columns)).encode()):08x}"
    with st.container(key=f"table-fit-{name}"):
        st.html(split_table_css(name, width(first) + sum(width(c) for c in rest)))
        with st.container(key=f"table-whole-{name}"):
            draw(range(len(rest)))
        with st.container(key=f"table-runs-{name}"):
            for part in parts:
                draw(part)


# A table's box is its columns and a px of border each side (Chromium)
TABLE_BORDER_PX = 2


def split_table_css(name: str, columns_px: int) -> str:
    """The style that shows a split table (``table``: keyed ``table-fit-<name>``) whole where its
    place holds its ``columns_px`` and its borders, else its runs, one under another: Compare's
    bytes by category (Qwen3-Next's, 741 px of columns) took two tables at 1,440 px as at
    1000 px, the page's width unknown to the script. Its place is a size container, so the
    rule reads its width, the main column's or an expander's. The whole is hidden unless the
    container query shows it, and each keyed block is hidden by its own class, not only by
    :has(): a browser without container queries or :has() shows the runs alone, not both."""
    fit = f"[class*='st-key-table-fit-{name}']"
    keyed = {kind: f"{fit} [class*='st-key-table-{kind}-{name}']" for kind in ("whole", "runs")}
    # each keyed block's wrapper, hidden with it (an empty wrapper still took a gap of 16 px);
    # a rule of its own, as a browser drops a rule whose selector it cannot read
    wrapper = {kind: f"{fit} > {_WRAPPER}:has(> [class*='st-key-table-{kind}-{name}'])"
               for kind in ("whole", "runs")}
    wide = columns_px + TABLE_BORDER_PX
    # Streamlit lays both out as flex boxes (1.67, Chromium), which the query gives back
    return (f"<style>{fit} {{container-type: inline-size;}} "
            f"{keyed['whole']} {{display: none;}} {wrapper['whole']} {{display: none;}} "
            f"@container (min-width: {wide}px) {{"
            f"{keyed['whole']} {{display: flex;}} {wrapper['whole']} {{display: flex;}} "
            f"{keyed['runs']} {{display: none;}} {wrapper['runs']} {{display: none;}}}}</style>")


def column_runs(first_px: int, widths: list[int], fit_px: int) -> list[range]:
    """The fewest runs of columns (``widths``, after a first column of ``first_px`` that each
    run repeats) of near equal counts that each end inside ``fit_px``: Compare's bytes by
    category, a column a layout, took 823 px of the 538 at 1000 px for Qwen3-Next's five
    layouts and scrolled the last two out of view; in runs of three and two they fit (a column
    alone wider than ``fit_px`` still gets a run of its own)."""
    count = len(widths)
    for runs in range(1, count + 1):
        size = -(-count // runs)
        parts = [range(i, min(i + size, count)) for i in range(0, count, size)]
        if all(first_px + sum(widths[i] for i in part) <= fit_px for part in parts):
            return parts
    # a column a run; a table of its first column alone is one run of none
    return [range(i, i + 1) for i in range(count)] or [range(0)]


NOT_APPLICABLE = "—"  # a table cell whose figure does not apply to its row
# The budget per rank by one name on every page that shows it (Layout's said "Budget" beside
# the sidebar's "Cache budget per rank", one figure by two names)
CACHE_BUDGET = "Cache budget per rank"


def height_for_rows(rows: int) -> int:
    """A table's height in pixels with all ``rows`` and the header in view (35 px a row, and
    the border): a short table under an expander, read whole, with no scroll of its own."""
    return 35 * (rows + 1) + 3


# Pixels a character of a cell or header takes (Source Sans at the table's size: 6 to 7 on
# average, measured in Chromium), a cell's padding with the header's icons, a tooltip's icon,
# and the widest column.
_CHAR_PX, _CELL_PX, _HELP_PX, _MOST_PX = 6.8, 24, 18, 400
# The main column's width at 1000 px with the sidebar open (measured in Chromium): a table wider
# than it scrolls, and its right edge cuts whatever column lies there ("devic", "1,097,7"). The
# columns a table is read by come first and should end inside it.
MAIN_COLUMN_PX = 540
EXPANDER_COLUMN_PX = 504  # the same inside an expander, less its padding (measured too)


def _shown_number(value: Any) -> str:
    """A number as the table shows it, near enough to size its column: thousands separated,
    two decimals for a fraction."""
    return f"{value:,}" if float(value).is_integer() else f"{value:,.2f}"


def column_width(header: str, cells: list[str], has_help: bool = False) -> int:
    """Pixels that show the header and every cell whole. Left to the grid, a column took its
    header's width and cut the leading digits off larger numbers (vLLM's "76,968,493,056"
    read "8,493,056" at 1000 px), a text cell its end; a long text column stops at 400 px."""
    chars = max([len(str(header))] + [len(c) for c in cells])
    return min(int(chars * _CHAR_PX) + _CELL_PX + (_HELP_PX if has_help else 0), _MOST_PX)


CHART_CONFIG = {"displaylogo": False,
                "modeBarButtonsToRemove": ["select2d", "lasso2d", "zoomIn2d", "zoomOut2d",
                                           "autoScale2d"]}


def chart(fig: go.Figure, *, key: str, file_name: str,
          on_click: Callable[[], None] | None = None) -> None:
    """A chart and its HTML export (built only when downloaded). The toolbar keeps zoom, pan,
    reset and the PNG export: box and lasso select and the zoom steps select nothing here, and
    the full toolbar covered a half-width chart's title at 1000 px. ``on_click``: run before
    the rerun a click on a point makes (the point in ``st.session_state[key]``'s selection);
    a drag still zooms (the figure's own dragmode), where streamlit's default for a selecting
    chart is a pan. Its double-click is two clicks and resets nothing: its first click is a
    click on a point, which may draw another figure, and Plotly's reset of the axes, landing
    after it, reset a figure no longer drawn (the toolbar's Reset axes zooms out)."""
    if on_click is None:
        st.plotly_chart(fig, key=key, config=CHART_CONFIG)
    else:
        st.plotly_chart(fig, key=key, config={**CHART_CONFIG, "doubleClick": False},
                        on_select=on_click, selection_mode="points")
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
    budget itself (all but Model). A link's notice is a warning: the page shows its figures
    with a default in place of what the link gave (``decode_query`` never refuses a link); an
    error is for what cannot be shown (a model or budget the pages refuse)."""
    start_run(page)
    st.html(METRIC_GRID_CSS)  # a style alone takes no room on the page
    for notice in pop_notices():
        link_notice(notice)
    st.session_state[REJECTED_SLOT] = st.empty()  # end_run fills it: which widgets are drawn
    sidebar(page_shows_budget)


def _start_memory_fields(gpu: str) -> dict[str, Any]:
    """Where a newly picked memory source starts: Custom from the GPU picked before, KV cache
    memory from the budget the sidebar had, so neither quietly changes the figures; and off a
    preset, the GPU architecture select from the preset's (``AppState.arch_kept_off``: it
    took none there, a Hopper, so DeepSeek-V3.2 left an A100 to start on vLLM and a B200's
    SGLang 708 B layout became 1,284 B)."""
    s = state()
    arch = s.arch_kept_off(gpu)
    if gpu == CUSTOM_GPU and s.gpu in GPU_PRESETS:
        return {"gpu_memory": GPU_PRESETS[s.gpu], **arch}
    if gpu in (KV_MEMORY, KV_BLOCKS) and s.gpu != gpu:
        try:
            cache = s.budget().cache_bytes
            if gpu == KV_MEMORY:
                return {"kv_memory": cache, **arch}
            # the block at the options the blocks source runs at, the preset's architecture
            # kept (on an A100 vLLM refuses DeepSeek-V3.2, and has no block)
            at_blocks = replace(s, gpu=KV_BLOCKS, **arch)
            blocks = cache // vllm_block_bytes(at_blocks.profile(), at_blocks.strategy_options())
            return {"kv_blocks": min(MAX_VLLM_BLOCKS, max(MIN_VLLM_BLOCKS, blocks)), **arch}
        except ValueError:  # no budget to start from: the field keeps its value
            return arch
    return arch


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


def _gpu_arch_setting(side: Any) -> None:
    """The GPU's architecture, where the budget names no preset's GPU (Custom, KV cache memory,
    vLLM's blocks): both engines read it (``AppState.gpu_capability``): vLLM's MLA backends
    (none for DeepSeek-V3.2 on an Ampere or Ada, no fp8 MLA cache on an Ampere) and SGLang's
    DeepSeek sparse attention layout (fp8 on a Blackwell); a B200's log is checked only so.
    "" (not said) keeps the figures a Hopper's, as a preset of none did."""
    bind(side.selectbox, "gpu_arch", "GPU architecture", options=["", *GPU_ARCHITECTURES],
         format_func=lambda arch: gpu_arch_text(arch) if arch else ARCH_NOT_SAID,
         help="The GPU the engines run on, which the GPU presets say themselves; here the "
         "budget names no GPU. vLLM 0.34 has no sparse MLA backend on SM 8.x (DeepSeek-V3.2 "
         "won't start on an Ampere or Ada) and no fp8 MLA cache on SM 8.0; SGLang 0.5.23 on a "
         "Blackwell keeps DeepSeek's sparse attention (DeepSeek-V3.2, GLM-5) in fp8_e4m3 on "
         "its trtllm DSA backends, the latent raw beside the index keys (576 + 132 = 708 B a "
         "token a layer for DeepSeek-V3.2), where a Hopper keeps 1,152 + 132 B in bfloat16. "
         "Not said, the figures are a Hopper's and the notes say what other GPUs do. SGLang's "
         "prefill chunk goes by the GPU's memory, not its architecture.")


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
    if gpu not in GPU_PRESETS:  # a preset says it
        _gpu_arch_setting(side)
    if gpu not in (KV_MEMORY, KV_BLOCKS):
        bind(side.slider, "mem_fraction", "Memory fraction", min_value=MIN_MEM_FRACTION,
             max_value=1.0, step=0.01, format="%.4g",  # a link's 0.955 shows as 0.955
             help="Share of the GPU memory the engine may use (vLLM's gpu_memory_utilization; "
             "SGLang's --mem-fraction-static). The default here is 0.9, vLLM's before 0.20; "
             "vLLM 0.20 to 0.33 default to 0.92. vLLM 0.34 on CUDA takes 1.0 and sizes its "
             "cache after warm-up: to match its log, pick \"vLLM KV cache blocks\" above and "
             "give the blocks it logs.")
        bind(side.text_input, "weights", "Model weights (all ranks)", to_widget=_size_text,
             from_widget=lambda t: memory_size(t, "Model weights", weights=True),
             help="The model's weights, all ranks together (2 B a parameter in bf16): each "
             "TP rank holds 1/TP of it. For the budget an engine would have, add what each "
             "rank keeps besides (activations, CUDA graphs) times TP, as that is per rank, "
             "not split; or pick \"KV cache memory\" above and give the memory its log "
             "prints.")
    bind(side.number_input, "tp", "Tensor parallel (TP)", min_value=1, max_value=MAX_TP,
         step=1, also=take_refused_draft,  # the Model page's draft refused at the TP before
         help="Each rank holds weights / TP, and a model's KV heads and state tensors split "
         "across the ranks: every figure is per rank. A model given in raw bytes is already "
         "per rank, so TP only splits its weights.")
    try:
        budget = state().budget()
        side.metric(CACHE_BUDGET, format_bytes(budget.cache_bytes),
                    help=f"{budget.cache_bytes:,} B")
        if (state().weights == 0 and gpu not in (KV_MEMORY, KV_BLOCKS)
                and "weights" not in st.session_state[ERRORS_KEY]):  # its error says enough
            side.caption("Model weights 0 B: all of the memory share goes to the cache. An "
                         "engine loads the weights first: enter them (2 B per parameter in "
                         "bf16, so 160GB for 80B) for the budget it would have.")
    except ValueError as exc:
        # a page stops at the first error: with the model wrong too, it explains only that
        side.caption(f":red[{CACHE_BUDGET}: none; the page says why.]"
                     if explained_on_page else f":red[{CACHE_BUDGET}: none. {exc}]")


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
    # what each planner is, in Compare's words for its layout (its title alone is jargon)
    bind(side.selectbox, "planner", "Planner", options=list(PLANNERS),
         format_func=strategy_notes.PLANNER_TITLES.get,
         help=" ".join(f"{sentence_case(strategy_notes.PLANNER_TITLES[p])}: "
                       f"{strategy_notes.STRATEGY_SUMMARIES[PLANNER_STRATEGY[p]]}."
                       for p in PLANNERS)
         + " Layout, GPU lab and Budget (until another layout is picked there) plan with it.")

