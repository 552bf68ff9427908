"""Plotly figures of the app: pure builders, data in, figure out.

One colour per kind everywhere (``COLORS``): full-attention KV is always the same blue, the
conv state always orange, padding always hatched grey, on every page and every chart. Hover
texts carry exact byte counts; axes use binary units (KiB, MiB, GiB) for readability.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import plotly.graph_objects as go
import plotly.io as pio

from flatkv.app_data import PageMap, RowBar, Segment, TreeNode
from flatkv.app_model import layer_rows
from flatkv.gpu_settings import PAGE_MAJOR, TRITON_KERNEL
from flatkv.gpu_view import Series
from flatkv.plan import CHUNKED_ATTENTION, FULL_ATTENTION, LINEAR_ATTENTION, SLIDING_ATTENTION, cdiv
from flatkv.profile import CacheProfile, group_name
from flatkv.strategies import CATEGORY_LABELS
from flatkv.units import (
    concurrency_text,
    concurrency_value,
    count_text,
    format_bytes,
    percent_text,
    tokens_text,
)

COLORS: dict[str, str] = {
    "kv": "#4C78A8",  # full-attention KV history
    "kv_mla": "#4C78A8",  # full attention's, kept as MLA's latent: its blue, named apart
    "kv_sliding": "#72B7B2",  # sliding-window KV history
    # chunked-attention KV history (Llama 4): a yellow of its own (a light blue, as it had
    # before, read as full attention's)
    "kv_chunked": "#EECA3B",
    "conv": "#F58518",  # conv state
    "ssm": "#E45756",  # ssm state
    "state": "#EE9A8F",  # all state tensors together (or one that is neither conv nor ssm)
    "padding": "#BAB0AC",  # hatched
    "padding_layer": "#8C8C8C",  # a whole page vLLM keeps for a padding layer, hatched darker
    "indexer": "#9ECAE9",  # DeepSeek-V3.2's indexer keys, a light shade of the KV's blue
    "dead_weight": "#9D755D",
    "reserved": "#B279A2",
    "unused": "#E2E2E2",
    "group": "#DCE3EC",
    "layer": "#EEF1F5",
    "free": "#F0F0F0",
    # GPU lab: one colour per page move; the state-row copy moves state, so it wears its colour
    "copy": "#3B3B3B",  # the plain device copy every device figure is a share of (dashed)
    "gather": "#54A24B",
    "scatter": "#8E5EA2",
    "state_copy": "#EE9A8F",
    "d2h": "#8C6D31",  # pages to host (its pinned baseline dashed, same colour)
    "h2d": "#D39B1E",  # pages from host
}
LABELS: dict[str, str] = {
    "kv": "KV (full attention)",
    # as the Model page names the kind ("Full attention (MLA)") and its table "mla": it was
    # "KV (full attention)" beside that table's mla, and MLA keeps no K and V
    "kv_mla": "KV (full attention, MLA latent)",
    "kv_sliding": "KV (sliding window)",
    "kv_chunked": "KV (chunked attention)",
    "conv": "conv state",
    "ssm": "ssm state",
    "state": "state",
    "padding": "padding",
    "padding_layer": "padding layer",
    "indexer": "indexer keys",
    "dead_weight": "dead weight",
    "reserved": "reserved",
    "unused": "unused",
    "free": "free",
}
# Breakdown categories of the strategies (and of our planners) -> the kind whose colour they use.
CATEGORY_KIND: dict[str, str] = {
    "kv_history": "kv",
    "state": "state",
    "row_padding": "padding",
    "state_page_padding": "padding",
    "padding_layers": "padding",
    "dead_weight": "dead_weight",
    "idle_pool": "dead_weight",  # reserved and holding nothing: dead weight's kin
    "unused": "unused",
}
HATCH: dict[str, str] = {"row_padding": "/", "state_page_padding": "x", "padding_layers": "\\",
                         "padding": "/", "idle_pool": "."}
# The three kinds of padding side by side in one bar, each a colour of its own (their hatches
# alone are lost on thin slices, and two greys read as one): rows padded to the page row in
# grey, state pages padded in a pale shade of the state's colour, whole padding layers dark.
# SGLang's idle pool beside dead weight, its kin: a pale shade of dead weight's brown, dotted.
CATEGORY_SHADES: dict[str, str] = {"row_padding": COLORS["padding"],
                                   "state_page_padding": "#F6CFC9", "padding_layers": "#6B625E",
                                   "idle_pool": "#D9BFA9"}
# A page map's group (its layer label) -> the colour of its kind: attention groups as their KV,
# a state group as its largest tensor
GROUP_KIND = {FULL_ATTENTION: "kv", SLIDING_ATTENTION: "kv_sliding",
              CHUNKED_ATTENTION: "kv_chunked", LINEAR_ATTENTION: "ssm"}

FONT = "Inter, Segoe UI, Helvetica, Arial, sans-serif"
# the house font's size (px): every chart's text, a tile label's too (ICICLE_TEXT_PX)
FONT_PX = 13


# the legend's order on every chart that draws kinds: KV, state, then padding
_KIND_ORDER = {kind: i for i, kind in enumerate(COLORS)}


def color_of(kind: str) -> str:
    return COLORS.get(kind, COLORS["state"])


# WCAG 2's least contrast ratio for text of a tile label's size (13 px, not "large text")
MIN_CONTRAST = 4.5
LIGHT_TEXT, DARK_TEXT = "#FFFFFF", "#000000"


def relative_luminance(color: str) -> float:
    """WCAG 2's relative luminance of a ``#RRGGBB`` colour: 0 for black, 1 for white (each
    channel linearised from sRGB, then weighted 0.2126 R + 0.7152 G + 0.0722 B)."""
    digits = color.removeprefix("#")
    if len(digits) != 6:
        raise ValueError(f"color={color!r}: a label's fill must be written #RRGGBB")
    channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two colours, (lighter + 0.05) / (darker + 0.05): 1 to 21."""
    lighter, darker = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def label_color(fill: str) -> str:
    """The text colour for a label drawn on ``fill``: white where it reaches MIN_CONTRAST,
    else black. White on every tile read poorly on the light ones (1.74:1 on DeepSeek-V3.2's
    indexer keys, 2.55:1 on the conv state's orange). Black, not the page's #262730: where
    white falls under 4.5:1 the fill's luminance is over 0.183, so black gives at least
    4.67:1, where #262730 gave 3.63:1 on dead weight's brown (white 4.09:1)."""
    return LIGHT_TEXT if contrast_ratio(LIGHT_TEXT, fill) >= MIN_CONTRAST else DARK_TEXT


def _house_template() -> dict:
    """plotly_white, cut to what these charts draw: the page, the x and y axes, and bar, scatter
    and heatmap traces.

    Why cut: plotly validates and deep-copies a figure's whole template at every assignment, and
    st.plotly_chart rebuilds the figure once more. The full template (7 KB of JSON, styling
    every trace type and 3-D, polar and map axes) cost about 80 ms a chart, most of a page's
    rerun; the cut one draws the same pixels.
    """
    white = pio.templates["plotly_white"].to_plotly_json()
    page = ("autotypenumbers", "colorway", "font", "hovermode", "hoverlabel", "paper_bgcolor",
            "plot_bgcolor", "xaxis", "yaxis", "shapedefaults", "annotationdefaults", "title")
    return {"layout": {key: white["layout"][key] for key in page},
            "data": {trace: white["data"][trace] for trace in ("bar", "scatter", "heatmap")}}


HOUSE_TEMPLATE = _house_template()


# Plotly's mode bar (zoom, pan, reset, PNG; _frame.CHART_CONFIG), shown on hover at the top
# right of a chart, and Streamlit's fullscreen button beside it, take the chart's top 30 px
# (measured in Chromium: the bar's buttons from y 2 to 28 of the chart at 1000 and 1440 px). It
# covered the end of any title that reached it: Budget's "Over the block size" in a half-width
# column at 1000 px, Compare's panel heading "concurrency at 262,144 tokens". Every title
# and heading starts under this band, so nothing is ever under the bar, at any width.
MODEBAR_BAND_PX = 34
# A one-line horizontal legend's box at the house font (29 px in Chromium: its top 20 px under
# a one-line title, its bottom 3 px over the plot, as y 1.01 puts it)
LEGEND_LINE_BOX_PX, LEGEND_GAP_PX = 29, 3
# A vertical legend's entries are 19 px apart in Chromium; under the last one its box's 10 px of
# padding, the 13 px Plotly keeps between a legend and the plot it pushes down and a px to spare
# (Budget's four-entry sweep legend, hung from 70 px: its box 86 px tall, the plot pushed from
# 162 to 168.94 px; with 70 + 4 x 19 + 24 = 170 kept, not pushed)
LEGEND_ENTRY_PX, LEGEND_CLEARANCE_PX = 19, 24

# Characters a title line holds (Plotly does not wrap), the bar no longer in the way: a full-width
# chart is 506 px wide at its narrowest (at 1000 px, in an expander), a half-width one (Budget's
# two sweeps side by side) 262 px. A 15 px title averages 6.4 px a character ("... requested P:
# P grows", 59 characters: x 400 to 780), up to 7 with capitals and digits; a line ends 10 px
# short of the chart's right edge. Full-width charts (the default) wrap at 70 characters, where
# the old 49 (a width kept clear of the mode bar) broke Layout's titles at 400 px with a blank
# band beside them; half-width ones at 36.
NARROWEST_CHART_PX, HALF_CHART_PX, TITLE_GAP_PX, TITLE_CHAR_PX = 506, 262, 10, 7
TITLE_WIDTH = (NARROWEST_CHART_PX - TITLE_GAP_PX) // TITLE_CHAR_PX  # 70
HALF_TITLE_WIDTH = (HALF_CHART_PX - TITLE_GAP_PX) // TITLE_CHAR_PX  # 36


def title_lines(title: str, width: int = TITLE_WIDTH) -> list[str]:
    """``title`` in lines of ``width`` characters at most (TITLE_WIDTH: a full-width chart's,
    HALF_TITLE_WIDTH: a half-width one's), broken between words only (not in "slot-major")."""
    return textwrap.wrap(title, width, break_on_hyphens=False)


def _house_figure(traces: Sequence, layout: Mapping | None = None, *, title: str = "",
                  height: int | None = None, legend_lines: int = 1, hanging_legend: bool = False,
                  title_width: int = TITLE_WIDTH, headings_px: int | None = None) -> go.Figure:
    """The figure of ``traces`` and ``layout`` in the house style, built in one go.

    Why in one go: plotly re-validates the layout and dispatches callbacks at every
    ``update_layout`` or ``update_xaxes``, 10 to 40 ms each, where the same properties given to
    the constructor cost a few ms; a chart built step by step took 50 to 90 ms of a rerun.
    ``legend_lines``: the lines a horizontal legend may wrap to in a narrow column (a
    half-width chart at 1000 px), each given room under the title; 0 for a legend beside the
    plot (``LEGEND_BESIDE`` in ``layout``), which takes no line under it. ``title_width``: the
    characters a title line holds (``title_lines``). ``headings_px``: room above the plot for
    headings drawn over it (Compare's panel headings), under the mode bar's band.
    ``hanging_legend``: the horizontal legend hangs from under the title in the figure's own
    coordinates, and Plotly moves the plot's top down by the lines it wraps to at the width it
    is drawn (a legend's reserved margin), none reserved in advance unless ``legend_lines``
    is over 1. Lines kept for the narrowest width left a blank band between title and legend
    where the page is wider: 81 px over Compare's "Where the budget goes" (seven categories,
    one line at 1,400 px, room kept for four), 60 px over the GPU lab's sweep. Needs
    ``height`` (the legend's place is a fraction of it). With ``legend_lines`` over 1 too
    (Budget's two sweeps side by side, an entry a line, LEGEND_ENTRY_PX apart): both legends
    start on the same line under their titles and the room of the longer one is kept under
    both, so their plots start level as well (where the longer one pushed its plot alone,
    7 px, or sat on its plot, starting a line higher than the shorter one).

    The top margin, from the top: the mode bar's band (MODEBAR_BAND_PX), the title (18 px a
    line), the legend (20 px a line) and gaps. A chart with neither title, legend nor headings
    (Layout's bytes icicle) starts its plot under the band: the legend's 30 px left a blank
    band over it (69 px from the caption above to the icicle in Chromium, 39 px without)."""
    layout = dict(layout or {})
    lines = title_lines(title, title_width)
    # Plotly hides the key of a one-trace chart; keep it when a trace is named (an unnamed one
    # would be keyed "trace 0")
    layout.setdefault("showlegend", any(getattr(t, "showlegend", False) is not False
                                        and getattr(t, "name", None) for t in traces))
    headings = headings_px is not None  # a row of headings over the plot
    headings_px = headings_px or 0
    top = (MODEBAR_BAND_PX + (50 + 18 * len(lines) if title else
                              30 if layout["showlegend"] or headings else 0) + headings_px)
    total_height = height + MODEBAR_BAND_PX + headings_px if height else None
    # the legend sits on its own line under the title, never over it
    legend = {"orientation": "h", "yanchor": "bottom", "y": 1.01, "x": 0, "xanchor": "left"}
    if hanging_legend and total_height:
        # its top where a one-line legend's top is otherwise (a line's box over the plot's
        # top), never in the mode bar's band
        legend_top = max(MODEBAR_BAND_PX, top - LEGEND_LINE_BOX_PX - LEGEND_GAP_PX)
        legend |= {"yref": "container", "yanchor": "top", "y": 1 - legend_top / total_height}
        if legend_lines > 1:  # an entry a line (vertical), the room of as many kept
            top = legend_top + LEGEND_ENTRY_PX * legend_lines + LEGEND_CLEARANCE_PX
    else:
        top += 20 * (legend_lines - 1)
    return go.Figure(data=list(traces), layout=layout | {
        "template": HOUSE_TEMPLATE,
        # the title starts under the mode bar's band. Plotly sets a title of n lines (n - 1)
        # half lines too high under yanchor "top", cutting its first line off; the pad brings
        # it back down
        "title": {"text": "<br>".join(lines), "x": 0, "xanchor": "left", "y": 1,
                  "yanchor": "top", "yref": "container", "font": {"size": 15},
                  "pad": {"t": MODEBAR_BAND_PX + 10 * (len(lines) - 1)}} if title else None,
        "font": {"family": FONT, "size": FONT_PX},
        "margin": {"l": 10, "r": 10, "b": 10, "t": top},
        "legend": legend | layout.get("legend", {}),
        # the band and headings on top of the height asked for: the plot keeps its height
        "height": total_height,
        "hoverlabel": {"font": {"family": "ui-monospace, monospace"}},
    })


def byte_unit(max_bytes: int) -> tuple[int, str]:
    """The binary unit an axis of values up to ``max_bytes`` reads best in."""
    for scale, name in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if max_bytes >= scale:
            return scale, name
    return 1, "B"


# --------------------------------------------------------------------------------------------
# Layout page


def inflation_figure(bars: Sequence[RowBar], *, title: str = "") -> go.Figure:
    """The page-inflation picture: one horizontal bar per row (top to bottom as given), its
    size written on it; exact bytes on hover. Where two sizes round alike, every bar is
    written in exact bytes: Nemotron-H-8B's state row (2,158,592 B) and the KV row at P 528
    that covers it (2,162,688 B) both read "2.06 MiB", under a title that says one covers
    the other."""
    scale, unit = byte_unit(max(b.nbytes for b in bars)) if bars else (1, "B")
    labels = [b.label for b in bars]
    texts = [format_bytes(b.nbytes) for b in bars]
    if len(set(texts)) < len({b.nbytes for b in bars}):
        texts = [f"{b.nbytes:,} B" for b in bars]
    bar = go.Bar(
        orientation="h", y=labels, x=[b.nbytes / scale for b in bars],
        marker_color=[color_of(b.kind) for b in bars],
        text=texts, textposition="outside", cliponaxis=False,
        customdata=[f"{b.nbytes:,}" for b in bars],
        hovertemplate="%{y}<br>%{customdata} B<extra></extra>",
    )
    longest = max((b.nbytes for b in bars), default=0) / scale
    layout = {"yaxis": {"autorange": "reversed"},
              "xaxis": {"title": f"bytes ({unit})", "range": [0, longest * 1.4]}}  # label room
    return _house_figure([bar], layout, title=title,
                         height=200 + 20 * len(title_lines(title)))


def layout_figure(segments: Sequence[Segment], *, title: str = "",
                  x_title: str = "offset in the slot row", span: str = "row") -> go.Figure:
    """One bar row per slot tensor (or per engine group: ``app_data.vllm_block_segments``);
    each binding drawn at its row offset, padding hatched.

    One trace per kind (not per segment) keeps the figure small for models with 100+ layers.
    The key lists the kinds in the order the bars are read: the top row left to right, by
    offset, then the kinds first drawn in lower rows (gpt-oss-20b's sliding KV, at offset 0,
    before the full KV beside it, where a fixed order of kinds listed the full KV first).
    """
    if not segments:
        return _house_figure([], title=title)
    scale, unit = byte_unit(max(s.end for s in segments))
    slot_names = list(dict.fromkeys(s.slot_name for s in segments))
    row_of = {name: i for i, name in enumerate(slot_names)}
    first_drawn: dict[str, tuple[int, int]] = {}  # kind -> (row, offset) it is first drawn at
    for s in segments:
        at = (row_of[s.slot_name], s.offset)
        first_drawn[s.kind] = min(first_drawn.get(s.kind, at), at)
    by_kind: dict[str, list[Segment]] = {}
    for s in sorted(segments, key=lambda s: (first_drawn[s.kind],
                                             _KIND_ORDER.get(s.kind, len(_KIND_ORDER)))):
        by_kind.setdefault(s.kind, []).append(s)
    traces = []
    for kind, segs in by_kind.items():
        traces.append(
            go.Bar(
                name=LABELS.get(kind, kind),
                orientation="h",
                y=[s.slot_name for s in segs],
                x=[s.nbytes / scale for s in segs],
                base=[s.offset / scale for s in segs],
                marker={
                    "color": color_of(kind),
                    "line": {"color": "white", "width": 0.5},
                    # a padding layer's whole page cross-hatched, a page's padding hatched
                    "pattern": {"shape": {"padding": "/", "padding_layer": "x"}.get(kind, ""),
                                "fgcolor": "#7F7F7F"},
                },
                customdata=[
                    [s.holder, s.component, f"{s.nbytes:,}", f"{s.offset:,}", f"{s.end:,}",
                     format_bytes(s.nbytes)]
                    for s in segs
                ],
                # whose bytes (the layer among those of its kind, and the model's cache layer
                # it is, as the Model page counts them)
                hovertemplate=(
                    "%{y}<br>%{customdata[0]}: %{customdata[1]}<br>"
                    "%{customdata[2]} B (%{customdata[5]})<br>"
                    f"bytes %{{customdata[3]}} .. %{{customdata[4]}} of the {span}"
                    "<extra></extra>"
                ),
            )
        )
    layout = {"yaxis": {"categoryorder": "array", "categoryarray": slot_names,
                        "autorange": "reversed", "title": None},
              "xaxis": {"title": f"{x_title} ({unit})", "rangemode": "tozero"},
              "barmode": "overlay", "bargap": 0.25}
    # the key hangs under the title: a model of four kinds and padding wraps it to three lines
    # at 1000 px (vLLM's groups of a sliding state hybrid), which grew up over the title
    return _house_figure(traces, layout, title=title,
                         height=max(260, 120 + 22 * len(slot_names)), hanging_legend=True)


# The bytes chart (``bytes_icicle``): an icicle drawn in bars, a column a level: the groups'
# rows (with reserved and unused beside them, the whole budget down the column), their
# components, and those components' layers, each tile its share of the budget down the plot's
# ICICLE_PLOT_PX. Plotly's own icicle kept a column for the budget's root tile, even with the root
# dropped (a blank one then): a third of the chart's width (320 of 960 px at 1,440 px) for one
# figure, which the groups' heading now gives. A click on a group or component draws it alone
# (``bytes_icicle``'s ``focus``), as the icicle's click did.
# A tile's label (ICICLE_TEXT_PX) takes two lines from TWO_LINES_PX, one ("conv state 2.40
# GiB") from ONE_LINE_PX and where the line is no wider than its column less TEXT_PAD_PX a side;
# Plotly hides any other (``uniformtext``), and the page names the tile under the chart
# (``icicle_unlabelled``): Qwen3-Next's conv slice, 14 px under its ssm state, had no label.
# Measured in Chromium (Layout at 1000 and 1440 px, tiles of 14 to 40 px): a line of 13 px
# text is 14 px tall and shows in a tile drawn 20 px tall, not 19; two lines (29.9 px) in 36,
# not 35; a line 171 px wide shows in the groups' 177 px column at 1000 px, one 179 px wide
# does not, whatever the height. Plotly draws a bar's edges on whole pixels, a tile of h px
# as floor(h) or ceil(h): from 20 px always 20 or more, where 19.4 px drew 20 and showed its
# label. None shrank to fit at 12 px: each showed at 13 px or not at all.
# Layers' tiles are thin for most models (Qwen3-Next's 84 in 410 px): each carries its label,
# which Plotly hides where it does not fit; a drag down the chart zooms every column in until
# it does, and a component's view (a click on it) grows the plot, up to ICICLE_TALL_PLOT_PX, for
# a line of label a layer (``_icicle_plot_px``); their hover names them.
# A tile under VISIBLE_PX is no slice to name (its white border fills it: the few MiB unused
# of most budgets), and Layout's "Unused" metric gives those bytes.
ICICLE_PLOT_PX, ONE_LINE_PX, TWO_LINES_PX, VISIBLE_PX = 410, 20, 36, 3
ICICLE_TALL_PLOT_PX = 820  # a component's view at most: 41 layers at 20 px (Qwen3-Next's 36: 720)
# the plot's width where Layout is narrowest (1000 px: 177 + 239 + 104 px of columns), the
# padding Plotly keeps a side of a label, and the width of a character of a label at 13 px,
# a little over the 5.1 to 5.3 px measured ("KV (full attention) 2.00 GiB" 143.6 px): a label
# wider than its column there is named under the chart, though wider pages show it
ICICLE_NARROW_PLOT_PX, TEXT_PAD_PX, LABEL_CHAR_PX = 520, 3, 5.4
# the labels' size (the house font's 13 px) and the least Plotly shrinks them to: every label
# shown is drawn at the size of the smallest, so a least of 10 let one layer's label fitting
# a 17 px tile at 10.5 px shrink the whole chart's (gpt-oss-20b's 12 layers a component at
# 1,440 px); at 12 such a label is hidden instead
ICICLE_TEXT_PX, ICICLE_MIN_TEXT_PX = FONT_PX, 12
# the columns' spans across the plot, left to right: groups, components, layers; the
# components' the widest (their labels are the longest: "KV (full attention, MLA latent)")
ICICLE_COLUMNS = ((0.0, 0.34), (0.34, 0.8), (0.8, 1.0))
# the figure's height under the mode bar's band, past the plot: the headings' row over it
# (30 px, as a legend's) and the bottom margin (10)
ICICLE_FRAME_PX = 30 + 10


def _icicle_labels(nodes: Sequence[TreeNode]) -> list[str]:
    """A component as the page rows' key names it ("indexer keys", "ssm state"), but other
    state by its tensor's name: the key's "state" would name a raw model's h and c alike, two
    tiles side by side; its layers by the component's label and their index ("KV (full
    attention) #1", where the tree's own "kv #1" named a layer unlike its component), by its
    parent, a group: not by the "/"s of its id, which a tensor name may hold."""
    groups = {n.id for n in nodes if n.kind == "group"}  # a component's parent, by the tree
    parents = {n.id: n.parent for n in nodes}
    labels: dict[str, str] = {}  # a parent's before its children's (``bytes_tree``'s order)
    for n in nodes:
        if n.parent in groups:
            labels[n.id] = n.label if n.kind == "state" else LABELS.get(n.kind, n.label)
        elif parents.get(n.parent) in groups:  # a layer: its component's label, its index
            labels[n.id] = f"{labels[n.parent]} #{n.label.rpartition('#')[2]}"
        else:
            labels[n.id] = n.label
    return [labels[n.id] for n in nodes]


def _icicle_tiles(nodes: Sequence[TreeNode]) -> dict[str, tuple[int, int]]:
    """Each node's column (1: groups, 2: components, 3: layers; 0: the budget, not drawn) and
    its first byte down the column: its parent's first byte and its elder siblings' bytes
    (``nodes`` lists a parent before its children, as ``bytes_tree`` does)."""
    tiles: dict[str, tuple[int, int]] = {}
    taken: dict[str, int] = {}  # bytes of a node's children placed so far
    for n in nodes:
        depth, first = (0, 0) if not n.parent else (tiles[n.parent][0] + 1,
                                                     tiles[n.parent][1] + taken[n.parent])
        if n.parent:
            taken[n.parent] += n.value
        tiles[n.id], taken[n.id] = (depth, first), 0
    return tiles


ICICLE_ROOT = "budget"  # the id of bytes_tree's root: the whole budget's view, unfocused


def _icicle_view(nodes: Sequence[TreeNode], focus: str) -> list[tuple[TreeNode, str]]:
    """The tiles a view draws, each with its label: under the whole budget (``ICICLE_ROOT``)
    every tile but the budget's; focused on a group or component, that tile, as tall as the
    plot, and its descendants, as Plotly's icicle drew a clicked tile and what lies under it.
    ``ValueError`` for a focus that is no tile with parts (a layer, unused, reserved)."""
    by_id = {n.id: n for n in nodes}
    parents = {n.parent for n in nodes}
    if focus not in by_id or focus not in parents:
        raise ValueError(f"focus: {focus!r} is no group or component of this chart; use one of "
                         f"{', '.join(i for i in by_id if i in parents)}")

    def under(n: TreeNode) -> bool:  # n is the focus or lies under it
        while n.id != focus and n.parent:
            n = by_id[n.parent]
        return n.id == focus

    return [(n, label) for n, label in zip(nodes, _icicle_labels(nodes), strict=True)
            if n.parent and under(n)]


def _icicle_columns(first: int) -> list[tuple[float, float]]:
    """The spans of the columns a view draws, from level ``first`` (1: groups, 2: components)
    to the layers, ``ICICLE_COLUMNS``' own spans stretched across the plot: a component's
    view gives it 0.70 of the width and its layers 0.30, as the whole view gives 0.46 and 0.20."""
    spans = ICICLE_COLUMNS[first - 1:]
    lo, width = spans[0][0], spans[-1][1] - spans[0][0]
    return [((a - lo) / width, (b - lo) / width) for a, b in spans]


def _icicle_plot_px(nodes: Sequence[TreeNode], focus: str = ICICLE_ROOT) -> int:
    """The plot's height in the view of ``focus``: ICICLE_PLOT_PX, but a component's view
    grows until its thinnest layer takes a line of label (ONE_LINE_PX), up to
    ICICLE_TALL_PLOT_PX: at 410 px Qwen3-Next's 36 ssm layers were 11.4 px each, unlabelled
    in the view one opens to read them; at 720 px each is 20 px, its label shown."""
    by_id = {n.id: n for n in nodes}
    layers = [n.value for n in nodes if n.parent == focus]
    if by_id[focus].parent in ("", ICICLE_ROOT) or not min(layers):  # not a component
        return ICICLE_PLOT_PX
    return min(ICICLE_TALL_PLOT_PX,
               max(ICICLE_PLOT_PX, cdiv(by_id[focus].value * ONE_LINE_PX, min(layers))))


def _tile_px(nodes: Sequence[TreeNode], focus: str = ICICLE_ROOT) -> dict[str, float]:
    """The height of each tile the view of ``focus`` draws, by id: its share of the focus's
    bytes of the plot's height (``_icicle_plot_px``; the budget's in the whole view)."""
    (total,) = [n.value for n in nodes if n.id == focus]
    plot = _icicle_plot_px(nodes, focus)
    return {n.id: n.value * plot / total if total else 0.0
            for n, _ in _icicle_view(nodes, focus)}


def _label_fits(text: str, px: float, column: tuple[float, float]) -> bool:
    """Whether Plotly shows a tile's label (``_icicle_text``'s ``text``, then its bytes) in a
    tile ``px`` tall in ``column`` (its span) at the narrowest page: two lines from
    TWO_LINES_PX, one from ONE_LINE_PX where the line fits the column's width."""
    if px >= TWO_LINES_PX:
        return True
    width = (column[1] - column[0]) * ICICLE_NARROW_PLOT_PX - 2 * TEXT_PAD_PX
    return px >= ONE_LINE_PX and len(f"{text} 123.45 GiB") * LABEL_CHAR_PX <= width


def icicle_unlabelled(nodes: Sequence[TreeNode],
                      focus: str = ICICLE_ROOT) -> list[tuple[str, int]]:
    """The tiles of ``bytes_icicle`` (of the view of ``focus``) whose label Plotly hides at
    the narrowest page (``_label_fits``: too thin for a line, or its line too wide for its
    column) yet a slice one sees (VISIBLE_PX or more), as (label, bytes), but layers (thin
    for most models, their component named): the page names them under the chart, where
    they would otherwise be a coloured sliver whose name only a hover gives."""
    heights, tiles = _tile_px(nodes, focus), _icicle_tiles(nodes)
    first = max(tiles[focus][0], 1)
    columns = _icicle_columns(first)
    return [(label, n.value) for n, label in _icicle_view(nodes, focus)
            if tiles[n.id][0] <= 2 and heights[n.id] >= VISIBLE_PX
            and not _label_fits(label, heights[n.id], columns[tiles[n.id][0] - first])]


def icicle_focus_options(nodes: Sequence[TreeNode]) -> dict[str, str]:
    """The views of ``bytes_icicle`` one can pick, by focus id: the whole budget, each group
    and each of its components (a component by its group and its own label: two groups' KV
    would read alike), in the chart's order, top down."""
    parents = {n.parent for n in nodes}
    labels = dict(zip((n.id for n in nodes), _icicle_labels(nodes), strict=True))
    return {n.id: ("the whole budget" if not n.parent else labels[n.id]
                   if n.parent == ICICLE_ROOT else f"{labels[n.parent]}: {labels[n.id]}")
            for n in nodes if n.id in parents}


def icicle_clicked_tile(point: Mapping[str, Sequence[object]]) -> str:
    """The id of the ``bytes_icicle`` tile a click selected, from a point of streamlit's
    selection, which carries the point's customdata but not Plotly's ``ids``: the chart puts
    the id last in its customdata for this."""
    return str(point["customdata"][-1])


def icicle_focus_after_click(nodes: Sequence[TreeNode], focus: str, clicked: str) -> str:
    """The view a click on tile ``clicked`` opens from the view of ``focus``: the focused tile
    (drawn leftmost, as tall as the plot) goes back up a level, as Plotly's icicle did; a
    group or component is focused; a layer focuses its component, which draws its layers
    tall enough to read; reserved and unused, which have no parts, leave the view as it is."""
    by_id = {n.id: n for n in nodes}
    parents = {n.parent for n in nodes}
    if clicked == focus and focus != ICICLE_ROOT:
        return by_id[focus].parent
    if clicked in parents:
        return clicked
    node = by_id.get(clicked)
    if node is not None and node.parent not in ("", ICICLE_ROOT):
        return node.parent  # a layer: its component
    return focus


def _icicle_text(depth: int, label: str, px: float) -> tuple[str, str]:
    """A tile's text and its template: a layer's by its index alone ("#5 2.99 GiB", its
    component beside it), any other's its label; on one line under TWO_LINES_PX. Every tile
    carries its text, however thin: Plotly hides what does not fit at ICICLE_MIN_TEXT_PX
    (``uniformtext``), and shows it once a zoom makes the tile tall enough (Qwen3-Next's 48
    ssm layers, 6 px each, named none of them before)."""
    text = label.rpartition(" ")[2] if depth == 3 else label
    return text, ("%{text} %{customdata[1]}" if px < TWO_LINES_PX
                  else "%{text}<br>%{customdata[1]}")


def _icicle_headings(nodes: Sequence[TreeNode], focus: str, first: int) -> list[str]:
    """The columns' headings, the levels from ``first`` by name, the groups' with the budget;
    a focused view's first column holds the focus alone, and its heading says how to go back
    up."""
    levels = ["groups", "components", "layers"][first - 1:]
    if focus == ICICLE_ROOT:
        (budget,) = [n.value for n in nodes if not n.parent]
        return [f"groups ({format_bytes(budget)} budget)", *levels[1:]]
    return [f"{levels[0][:-1]} (click it to go back)", *levels[1:]]


def bytes_icicle(nodes: Sequence[TreeNode], *, title: str = "",
                 focus: str = ICICLE_ROOT) -> go.Figure:
    """Bytes of the budget by group, component and layer, a column each (``ICICLE_COLUMNS``),
    values exact in the hover; the budget in the groups' heading. ``focus``: a group or
    component drawn alone, as tall as the plot, beside its parts (``_icicle_view``), the way
    Plotly's icicle drew a clicked tile; the page opens it on a click
    (``icicle_focus_after_click``). The hover's share of the budget is ours (``percent_text``),
    not a rounded ratio, which read a group of Llama-3.1-8B's rows "100.00% of the budget"
    beside 2,039,808 B unused at 80 GB, and those "0.00%". One trace, a tile a bar: its ``ids``,
    ``y`` (bytes) and ``customdata[3]`` (the tile's name, the last its id, which a click's
    selection carries back: ``icicle_clicked_tile``), a column's tiles stacked top down from
    their ``base`` (bytes from the focus's top); ``text`` the label drawn (``_icicle_text``). A
    tile under VISIBLE_PX has no white border, which would hide its colour (Qwen3-Next's 36 conv
    layers, 0.4 px each, read as a blank band)."""
    (budget,) = [n.value for n in nodes if not n.parent]
    drawn = _icicle_view(nodes, focus)
    heights, tiles = _tile_px(nodes, focus), _icicle_tiles(nodes)
    top_depth, top = tiles[focus]
    (total,) = [n.value for n in nodes if n.id == focus]
    first = max(top_depth, 1)  # the whole view draws no budget column
    columns = _icicle_columns(first)
    spans = [columns[tiles[n.id][0] - first] for n, _ in drawn]
    texts = [_icicle_text(tiles[n.id][0], label, heights[n.id]) for n, label in drawn]
    bars = go.Bar(
        ids=[n.id for n, _ in drawn],
        x=[(lo + hi) / 2 for lo, hi in spans],
        width=[hi - lo for lo, hi in spans],
        y=[n.value for n, _ in drawn],
        base=[tiles[n.id][1] - top for n, _ in drawn],
        marker={"color": [color_of(n.kind) for n, _ in drawn],
                "line": {"color": "white", "width": [int(heights[n.id] >= VISIBLE_PX)
                                                     for n, _ in drawn]}},
        # a clicked tile is selected, which would fade every other; a view the click leaves
        # as it is (unused) stays as bright
        selected={"marker": {"opacity": 1}}, unselected={"marker": {"opacity": 1}},
        customdata=[[f"{n.value:,}", format_bytes(n.value), percent_text(n.value, budget),
                     label, n.id] for n, label in drawn],
        hovertemplate="%{customdata[3]}<br>%{customdata[0]} B (%{customdata[1]})<br>"
        "%{customdata[2]} of the budget<extra></extra>",
        text=[text for text, _ in texts], texttemplate=[template for _, template in texts],
        textposition="inside", insidetextanchor="start", textangle=0,
        # each label black or white, whichever its tile's fill reads under (``label_color``)
        textfont={"size": ICICLE_TEXT_PX,
                  "color": [label_color(color_of(n.kind)) for n, _ in drawn]},
        name="bytes", showlegend=False,
    )
    headings = [{"text": text, "x": (lo + hi) / 2, "xref": "paper", "xanchor": "center",
                 "y": 1.0, "yref": "paper", "yanchor": "bottom", "showarrow": False}
                for text, (lo, hi) in zip(_icicle_headings(nodes, focus, first), columns,
                                          strict=True)]
    # a label too small to read at 10 px (a conv slice beside the ssm's) is left out, not
    # shrunk to a smear; its hover still says it, and the page names it under the chart. A
    # drag zooms down the columns only (their widths stay), a double click zooms back out
    return _house_figure([bars], {
        "uniformtext": {"minsize": ICICLE_MIN_TEXT_PX, "mode": "hide"}, "showlegend": False,
        "annotations": headings, "bargap": 0, "dragmode": "zoom",
        "xaxis": {"range": [0, 1], "visible": False, "fixedrange": True},
        "yaxis": {"range": [total, 0], "visible": False}},
        title=title, height=_icicle_plot_px(nodes, focus) + ICICLE_FRAME_PX, headings_px=0)


def page_map_figure(pages: PageMap, *, columns: int = 64, title: str = "",
                    mla: bool = False) -> go.Figure:
    """Page ids as a grid of cells (row by row, ``columns`` a row), coloured by the group that
    owns each id. A heatmap: its cells scale with the plot, where fixed-size markers overlapped
    at narrow widths and the last group drawn hid the others. The legend names each group with
    the pages it needs, and the pool's pages left free (the map draws its first ids only: a
    model whose requests took 136 of 1,273 ids drew a wall of grey keyed plain "free"). A
    group is named by its kind, as the layer strip keys it (``group_name``; ``mla``: the
    profile's), not by the planner's id: "full attention (MLA): 3 pages"."""
    names: list[str] = []  # legend labels, by colour index
    colors: list[str] = []
    index: dict[str | None, int] = {}
    owner_names: dict[str | None, str] = {None: "free"}
    for gid in dict.fromkeys(o for o in pages.owners if o is not None):
        n = pages.per_group[gid]
        index[gid] = len(names)
        owner_names[gid] = group_name(gid, mla=mla)
        names.append(f"{owner_names[gid]}: {count_text(n, 'page')}")
        colors.append(color_of(GROUP_KIND.get(gid, "state")))
    index[None] = len(names)
    free = max(0, pages.num_blocks - sum(pages.per_group.values()))  # none where none fit
    names.append(f"free: {count_text(free, 'page')}")
    colors.append(COLORS["free"])
    rows = max(1, cdiv(len(pages.owners), columns))
    z: list[list[int | None]] = [[None] * columns for _ in range(rows)]
    text: list[list[str]] = [[""] * columns for _ in range(rows)]
    for pid, owner in enumerate(pages.owners):
        r, c = divmod(pid, columns)
        z[r][c] = index[owner]
        text[r][c] = f"page {pid}: {owner_names[owner]}"
    k = len(colors)  # one flat band of the colour scale per colour index
    scale = [[edge / k, color] for i, color in enumerate(colors) for edge in (i, i + 1)]
    cells = go.Heatmap(
        z=z, text=text, hovertemplate="%{text}<extra></extra>", colorscale=scale,
        zmin=-0.5, zmax=k - 0.5, showscale=False, xgap=1, ygap=1, name="page ids",
    )
    keys = [go.Scatter(x=[None], y=[None], mode="markers", name=name,  # legend entries only
                       marker={"symbol": "square", "size": 11, "color": color})
            for name, color in zip(names, colors, strict=True)]
    layout = {"xaxis": {"visible": False}, "yaxis": {"visible": False, "autorange": "reversed"}}
    # the key hangs under the title: a group a key, each with its count, wraps to more lines
    # than one at 1000 px
    return _house_figure([cells, *keys], layout, title=title,
                         height=min(900, 90 + 14 * rows), hanging_legend=True)


# --------------------------------------------------------------------------------------------
# Budget page

# Token axes in SI steps with no trailing zeros (500k, 1M, 1.5M), the same on every chart:
# Plotly's default switches between 600k and 0.5M by range.
TOKEN_TICKS = "~s"
# Requests and GiB in plain figures: an SI prefix on a count of requests or on GiB (Plotly's
# default at extremes: "5µ" requests at a context of 10^11 tokens, "5M" GiB) reads as a bug
PLAIN_TICKS = {"exponentformat": "none", "separatethousands": True}


# A linear axis' ticks fit the narrowest plot the app draws one in: a sweep chart in a half-width
# column at 1000 px keeps about 160 px between its y axis and its right edge (measured in
# Chromium), and a tick label takes about 7 px a character (Plotly's 12 px digits), two more
# characters of room between neighbours. Left to Plotly, 10^11-token contexts gave budgets of
# millions of GiB ticked "0 5,000,000 10,000,000", the labels touching.
NARROW_PLOT_PX, TICK_CHAR_PX = 160, 7
# The share of a linear x axis' range left beyond each end, so a marker there draws whole
X_PAD = 0.03


def _plain_axis(low: float, high: float) -> dict:
    """A linear axis over ``[low, high]`` ticked in plain figures (``PLAIN_TICKS``) at a round
    step, 1, 2 or 5 times a power of ten: the finest whose labels do not run together in
    ``NARROW_PLOT_PX`` ("20 40 60 80" at tens of GiB), else the coarsest that still gives two
    ticks ("0 10,000,000" where millions of GiB do not fit three). Labels keep the step's
    decimals (0.25, 0.50; zero is "0"). A range of one value keeps Plotly's own ticks."""
    if not high > low:
        return dict(PLAIN_TICKS)
    span = Fraction(high) - Fraction(low)
    top = math.floor(math.log10(span))
    best = None
    for step in (m * Fraction(10) ** k for k in range(top - 2, top + 2) for m in (1, 2, 5)):
        ticks = [i * step for i in range(math.ceil(Fraction(low) / step),
                                         math.floor(Fraction(high) / step) + 1)]
        if len(ticks) < 2:  # coarser steps hold fewer still
            break
        digits = max(0, -math.floor(math.log10(step)))
        best = ticks, [f"{float(t):,.{digits}f}" if t else "0" for t in ticks]
        if step / span * NARROW_PLOT_PX >= (max(map(len, best[1])) + 2) * TICK_CHAR_PX:
            break
    if best is None:
        return dict(PLAIN_TICKS)
    ticks, texts = best
    return PLAIN_TICKS | {"tickvals": [float(t) for t in ticks], "ticktext": texts}


def _power_text(n: int) -> str:
    """A tick in binary units where it is a whole number of them: 512, 1K, 64K, 160K
    (DeepSeek-V3.2's 163,840 tokens, 160 x 1,024, as 64K is 65,536), 1M, 10M (Llama 4 Scout's
    10,485,760 tokens, which fits at the axis' end); another number in full, and a round
    decimal too (128,000 is 125 x 1,024, but no "125K" to a reader who typed it). Capital K
    as the app reads it (``units.parse_tokens``: 64K is 65,536, 64k is 64,000)."""
    if n < 1024 or n % 1024 or n % 1000 == 0:
        return f"{n:,}"
    return f"{n >> 20}M" if n % (1 << 20) == 0 else f"{n >> 10}K"


def _powers_of_two_axis(low: float, high: float, marked: float | None = None) -> dict:
    """A log axis over powers of two (block sizes, context lengths) ticked at each power (a
    log axis says 1 2 5 10), short enough to stay level (rotated, the last one fell off), the
    ends padded to show them. ``marked`` (the page's own value) is ticked too, in place of a
    power too close to read beside it (less than twice or half it). One axis, one way of
    writing: every tick as ``_power_text`` writes it where it writes each in units (or one
    under 1,024 in full), else every tick in full (the 163,840 tokens of DeepSeek-V3.2 read in full
    beside "64K" and "1M" on one axis)."""
    ticks = [1 << k for k in range(int(high).bit_length()) if low <= 1 << k <= high]
    if len(ticks) > 8:  # every other power, from the top: 13 ran together in half a page;
        # the first point keeps its tick (1,024 tokens, where a sweep starts)
        ticks = sorted({*ticks[::-2], ticks[0]})
    if marked is not None and marked not in ticks:
        ticks = [t for t in ticks if max(t, marked) / min(t, marked) >= 2] + [int(marked)]
    ticks = sorted(ticks)
    texts = [_power_text(t) for t in ticks]
    if not all(text.isdigit() or not text[-1].isdigit() for text in texts):  # 512, 1K, 2M
        ticks = _spaced_in_full(ticks, low, high, marked)
        texts = [f"{t:,}" for t in ticks]
    return {"type": "log", "tickvals": ticks, "ticktext": texts,
            "tickangle": 0, "range": [math.log10(low) - 0.08, math.log10(high) + 0.08]}


# An axis of ticks in full is drawn for the narrowest plot it gets: Compare's context chart at
# 1000 px, about 260 px beside its legend; a tick's figure about 7 px a character (Plotly's 12
# px), and 8 px between two. Llama 4 Scout's sweep to 8,388,608 tokens with a context of 100,000
# ran its eight ticks in full into one another ("1,0242,048").
FULL_TICKS_PLOT_PX, TICK_CHAR_PX, TICK_GAP_PX = 260, 7, 8


def _spaced_in_full(ticks: list[int], low: float, high: float,
                    marked: float | None) -> list[int]:
    """Of ``ticks``, those whose figures in full do not run into each other at
    ``FULL_TICKS_PLOT_PX``: the marked one first, then the first (where a sweep starts), then
    the powers from the top, each kept where it clears every one kept before it."""
    per_decade = FULL_TICKS_PLOT_PX / (math.log10(high) - math.log10(low) + 0.16)

    def clears(a: int, b: int) -> bool:
        room = abs(math.log10(a) - math.log10(b)) * per_decade
        return room >= (len(f"{a:,}") + len(f"{b:,}")) * TICK_CHAR_PX / 2 + TICK_GAP_PX

    order = ([int(marked)] if marked in ticks else []) + sorted(
        (t for t in ticks if t != marked), key=lambda t: (t != ticks[0], -t))
    kept: list[int] = []
    for t in order:
        if all(clears(t, k) for k in kept):
            kept.append(t)
    return sorted(kept)


# The current budget's mark where the layout does not start there
NOT_STARTED = "current: does not start"


# The most ticks a requests axis takes: its panel is some 150 px tall in a half-width chart at
# 1000 px, where Plotly, left to itself, ticked 0 5 10 under a line at 11.23 requests, the top
# of the line read against no tick
REQUEST_TICKS = 5


def _covering_axis(high: float) -> dict:
    """A requests axis from 0 to a round tick at or over ``high`` (the top of its lines and
    marks), so that the highest figure reads between two ticks: the finest step, 1, 2 or 5
    times a power of ten, that does it in REQUEST_TICKS ticks or fewer (11.87 requests: 0 5 10
    15). No figure over 0: Plotly's own."""
    if not high > 0:
        return {"rangemode": "tozero"} | PLAIN_TICKS
    top = math.floor(math.log10(high))
    for step in (m * Fraction(10) ** k for k in range(top - 1, top + 2) for m in (1, 2, 5)):
        count = math.ceil(Fraction(high) / step)
        if count + 1 <= REQUEST_TICKS:
            break
    digits = max(0, -math.floor(math.log10(step)))
    ticks = [i * step for i in range(count + 1)]
    return PLAIN_TICKS | {"tickvals": [float(t) for t in ticks],
                          "ticktext": [f"{float(t):,.{digits}f}" if t else "0" for t in ticks],
                          # a mark on the top tick drawn whole
                          "range": [0, float(ticks[-1]) * (1 + X_PAD)]}


def _sweep_panels(x_axis: dict, *, two_panels: bool, requests_high: float = 0
                  ) -> tuple[dict, dict, dict]:
    """``sweep_figure``'s axes and the axis pair of its top and bottom panel: with
    ``two_panels`` (capacity above concurrency) the axes as make_subplots(rows=2,
    shared_xaxes=True) sets them (it took 35 ms a chart), the bottom x axis carrying the ticks
    and the top one following it; else one panel, both traces on it. ``requests_high``: the
    top of the requests drawn, which its ticks cover (``_covering_axis``)."""
    requests = {"title": "requests"} | _covering_axis(requests_high)
    top = {"xaxis": "x", "yaxis": "y"}
    if not two_panels:
        return {"xaxis": x_axis, "yaxis": requests}, top, top
    axes = {"xaxis": {k: v for k, v in x_axis.items() if k != "title"}
            | {"anchor": "y", "matches": "x2", "showticklabels": False},
            "yaxis": {"anchor": "x", "domain": [0.56, 1.0], "title": "tokens",
                      "rangemode": "tozero", "tickformat": TOKEN_TICKS},
            "xaxis2": x_axis | {"anchor": "y2"},
            "yaxis2": requests | {"anchor": "x2", "domain": [0.0, 0.44]}}
    return axes, top, {"xaxis": "x2", "yaxis": "y2"}


def _current_concurrency_mark(current_x: float, concurrency: float | None, at: str,
                              marker: dict, panel: dict, *, in_legend: bool) -> go.Scatter:
    """The current budget's mark on the concurrency line; where the layout does not start
    there (``concurrency`` None), a red cross at 0 requests, so the gap to where the line
    starts shows. ``in_legend``: the one "current" entry where no capacity panel gives it."""
    if concurrency is not None:
        return go.Scatter(x=[current_x], y=[concurrency],
                          customdata=[concurrency_text(concurrency)],
                          showlegend=in_legend, name="current", mode="markers",
                          marker=marker,
                          hovertemplate="current<br>" + at + "<br>%{customdata} requests"
                          "<extra></extra>", **panel)
    return go.Scatter(x=[current_x], y=[0], name=NOT_STARTED, mode="markers",
                      marker=marker | {"symbol": "x", "color": "#b3261e"}, cliponaxis=False,
                      hovertemplate=NOT_STARTED + "<br>" + at + "<extra></extra>", **panel)


def sweep_figure(
    x: Sequence[float], capacity: Sequence[int | None] | None,
    concurrency: Sequence[float | None], *,
    current_x: float, current_capacity: int | None, current_concurrency: float | None,
    x_title: str,
    context: int, log_x: bool = False, title: str = "",
    target: tuple[float, float, str] | None = None, legend_lines: int = 0, wide: bool = False,
) -> go.Figure:
    """Capacity (tokens, top panel) and concurrency at ``context`` (bottom panel) over ``x``,
    sharing the x axis, the current point marked in both; only concurrency when capacity is
    None (a state-only model). Two panels, not two y axes: both figures grow in proportion to
    the budget, so on twin axes from zero their lines lie on top of each other. A point
    without a figure (None: the layout does not start there) is a gap in the line. Concurrency
    is drawn exact, and its hover shows it as elsewhere (``units.concurrency_text``).
    ``target``: (x, concurrency, name) of a point to mark on the concurrency line too, the
    least budget for the requests to hold. ``legend_lines``: at least this many lines of legend
    room, so that two charts side by side keep their panels level. ``wide``: the chart takes
    the page's width (nothing beside it), where its legend wraps to fewer lines. Where
    ``current_concurrency`` is None (the layout does not start at this budget) the current
    budget is marked at 0 requests instead, so the gap to where the lines start shows."""
    rows = 2 if capacity is not None else 1
    at = f"{x_title}: %{{x:{',' if log_x else ',.2f'}}}"  # hovers name the x axis
    current = {"color": "#222", "size": 11, "symbol": "diamond"}
    # a linear x axis (the budget) runs from zero, as the panels' y axes do: ticks from 0
    # leave room for two readable labels where millions of GiB fit no three. Its ends are
    # padded (Plotly's autorange pads for markers; a range from exactly 0 cut the current
    # point's diamond in half where it sits near 0)
    marked = [current_x] + ([target[0]] if target is not None else [])
    low, high = min(0, *x, *marked), max([*x, *marked])
    x_axis = {"title": x_title} | (
        _powers_of_two_axis(min(x), max(x), current_x) if log_x
        else _plain_axis(low, high) | {"range": [low - X_PAD * (high - low),
                                                 high + X_PAD * (high - low)]})
    requests_high = max((c for c in (*concurrency, current_concurrency,
                                     target[1] if target is not None else None)
                         if c is not None), default=0)
    axes, top, bottom = _sweep_panels(x_axis, two_panels=capacity is not None,
                                      requests_high=requests_high)
    if not wide:  # side by side: an entry a line in both, hung from under the title
        axes["legend"] = {"orientation": "v"}
    traces = []
    if capacity is not None:
        traces.append(
            go.Scatter(x=list(x), y=list(capacity), name="capacity (tokens)", mode="lines",
                       line={"color": COLORS["kv"], "width": 2.5},
                       hovertemplate=at + "<br>%{y:,} tokens<extra></extra>", **top))
        if current_concurrency is not None:
            traces.append(
                go.Scatter(x=[current_x], y=[current_capacity], name="current", mode="markers",
                           marker=current,
                           hovertemplate="current<br>" + at + "<br>%{y:,} tokens<extra></extra>",
                           **top))
    traces.append(
        go.Scatter(x=list(x), y=list(concurrency),
                   customdata=[None if c is None else concurrency_text(c) for c in concurrency],
                   name=f"concurrency at {tokens_text(context)}", mode="lines",
                   line={"color": COLORS["conv"], "width": 2.5},
                   hovertemplate=at + "<br>%{customdata} requests<extra></extra>", **bottom))
    traces.append(_current_concurrency_mark(current_x, current_concurrency, at, current,
                                            bottom, in_legend=capacity is None))
    if target is not None:
        target_x, target_concurrency, target_name = target
        traces.append(go.Scatter(
            x=[target_x], y=[target_concurrency], customdata=[concurrency_text(target_concurrency)],
            name=target_name, mode="markers",
            marker={"color": COLORS["conv"], "size": 12, "symbol": "star",
                    "line": {"color": "#222", "width": 1}},
            hovertemplate=target_name + "<br>" + at + "<br>%{customdata} requests<extra></extra>",
            **bottom))
    entries = sweep_legend_lines(capacity is not None, target is not None, wide=wide)
    return _house_figure(traces, axes, title=title, height=500 if rows == 2 else 380,
                         legend_lines=max(entries, legend_lines), hanging_legend=not wide,
                         title_width=TITLE_WIDTH if wide else HALF_TITLE_WIDTH)


def sweep_legend_lines(capacity: bool, target: bool, *, wide: bool = False) -> int:
    """The lines ``sweep_figure``'s legend takes, an entry a line in a half-width column at
    1000 px: the concurrency line, the current point (or its mark where the layout does not
    start), and the capacity line and the target where there are. ``wide``: across the main
    column (540 px at 1000 px), two entries a line; reserving one a line there left a blank
    band of 40 to 60 px over the chart."""
    entries = 2 + capacity + target
    return cdiv(entries, 2) if wide else entries


# --------------------------------------------------------------------------------------------
# Compare page


def capacity_bars(
    names: Sequence[str], capacity: Sequence[int | None] | None,
    concurrency: Sequence[float | None], *, context: int, title: str = "",
    absent: Mapping[str, str] | None = None,
) -> go.Figure:
    """Capacity in tokens and concurrency at ``context`` per strategy, side by side; only
    concurrency when ``capacity`` is None (a state-only model keeps no token history).
    Horizontal bars: the layouts' names read once, on the left, at any page width (under
    columns, rotated names ran into each other on a narrow page), as in the breakdown below.
    ``absent``: layouts with no figures here (None in both), by name, and the word that says
    why ("refuses to start"), drawn in their row where a bar would be, so that no layout
    vanishes unsaid."""
    absent = absent or {}

    def panel(values: Sequence, label: Callable, unit: str) -> tuple[list, list, list]:
        """Bar lengths, the text beside each bar, and its hover text."""
        bars = [0 if name in absent else v for name, v in zip(names, values, strict=True)]
        texts = [absent.get(name) or label(v) for name, v in zip(names, values, strict=True)]
        hovers = [absent.get(name) or f"{label(v)} {unit}"
                  for name, v in zip(names, values, strict=True)]
        return bars, texts, hovers

    values, texts, hovers = panel([None if c is None else concurrency_value(c)
                                   for c in concurrency], concurrency_text, "requests")
    concurrency_bars = go.Bar(y=list(names), x=values, orientation="h",
                              marker_color=COLORS["conv"], name="concurrency", text=texts,
                              textposition="outside", cliponaxis=False, hovertext=hovers,
                              hovertemplate="%{y}<br>%{hovertext}<extra></extra>")
    # each axis titled with its unit: the concurrency's read as bare figures (7.49, 14.98)
    # under a heading that names tokens, not what the figures count
    concurrency_axis = {"title": "requests", "range": [0, max(values, default=0) * 1.3 or 1]}
    panels = [(f"concurrency<br>at {tokens_text(context)}", concurrency_bars, concurrency_axis)]
    if capacity is not None:
        tokens, texts, hovers = panel(capacity, "{:,}".format, "tokens")
        token_bars = go.Bar(y=list(names), x=tokens, orientation="h",
                            marker_color=COLORS["kv"], name="capacity", text=texts,
                            textposition="outside", cliponaxis=False, hovertext=hovers,
                            hovertemplate="%{y}<br>%{hovertext}<extra></extra>")
        # room on the right for the longest label outside its bar
        capacity_axis = {"title": "tokens", "tickformat": TOKEN_TICKS,
                         "range": [0, max(tokens, default=0) * 1.45 or 1]}
        panels.insert(0, ("capacity", token_bars, capacity_axis))
    # side by side on one y axis, as make_subplots(cols, shared_yaxes=True) sets them (it took
    # 35 ms a chart); each panel titled above it
    gap = 0.06
    width = (1 - gap * (len(panels) - 1)) / len(panels)
    traces, layout, headings = [], {"showlegend": False}, []
    for i, (heading, bars, x_axis) in enumerate(panels):
        n = "" if i == 0 else str(i + 1)
        left = i * (width + gap)
        traces.append(bars.update(xaxis=f"x{n}", yaxis=f"y{n}"))
        layout[f"xaxis{n}"] = x_axis | {"anchor": f"y{n}", "domain": [left, left + width]}
        # the table's order, top down; the names read once, on the left
        layout[f"yaxis{n}"] = {"anchor": f"x{n}", "autorange": "reversed"} | (
            {"matches": "y", "showticklabels": False} if i else {})
        headings.append({"text": heading, "x": left + width / 2, "xanchor": "center",
                         "xref": "paper", "y": 1.0, "yanchor": "bottom", "yref": "paper",
                         "showarrow": False, "font": {"size": 16}})
    layout["annotations"] = headings
    # the two-line headings (16 px) rise 42 px over the plot: 16 px more than a title-less
    # chart's room, so they start under the mode bar's band
    return _house_figure(traces, layout, title=title, height=max(260, 120 + 40 * len(names)),
                         headings_px=HEADINGS_PX)


HEADINGS_PX = 16


# Compare's context chart: a colour and a marker a layout. Lines that coincide must show
# through: FlatKV's two planners share a colour, per component dotted with open circles over
# packed slabs' (their figures are most often the same), two-level pages dashed with open
# diamonds over vLLM's squares, which they often follow.
LAYOUT_LINES: dict[str, dict[str, dict]] = {
    "flat": {"line": {"color": COLORS["kv"]}, "marker": {"symbol": "circle"}},
    "per-component": {"line": {"color": COLORS["kv"], "dash": "dot"},
                      "marker": {"symbol": "circle-open", "size": 11}},
    "vllm": {"line": {"color": COLORS["conv"]}, "marker": {"symbol": "square"}},
    "sglang": {"line": {"color": COLORS["gather"]}, "marker": {"symbol": "triangle-up"}},
    "aliased": {"line": {"color": COLORS["scatter"], "dash": "dashdot"},
                "marker": {"symbol": "x"}},
    "lcm": {"line": {"color": COLORS["ssm"], "dash": "dash"},
            "marker": {"symbol": "diamond-open", "size": 11}},
}


def context_figure(
    contexts: Sequence[int], lines: Sequence[tuple[str, str, Sequence[float | None]]], *,
    context: int, title: str = "",
) -> go.Figure:
    """Max concurrency over context length, a line per layout (``(strategy, name, values)``,
    a value per context, None where the layout has no figure: its line breaks there), each
    computed point marked (a line only joins them). Log on both axes, y over whole decades:
    concurrency falls about as 1 / context, from hundreds of requests to under one. The
    page's ``context`` is ticked and marked on each line; where some layout comes near one
    request (under 10), one request is dashed: under it a request of that length does not
    fit. Concurrency is drawn as shown elsewhere (``units.concurrency_value``; a zero, which a
    log axis cannot draw, is left out)."""
    at = "%{x:,} tokens<br>%{y:,.2f} requests<extra></extra>"
    here = contexts.index(context)
    traces, marks_x, marks_y, marks_name, drawn = [], [], [], [], []
    for strategy, name, values in lines:
        shown = [None if v is None or concurrency_value(v) <= 0 else concurrency_value(v)
                 for v in values]
        drawn += [v for v in shown if v is not None]
        style = LAYOUT_LINES.get(strategy, {})
        traces.append(go.Scatter(x=list(contexts), y=shown, name=name, mode="lines+markers",
                                 line={"width": 2.5, **style.get("line", {})},
                                 marker={"size": 7, **style.get("marker", {})},
                                 hovertemplate=f"{name}<br>{at}"))
        if shown[here] is not None:
            marks_x.append(context)
            marks_y.append(shown[here])
            marks_name.append(name)
    if drawn and min(drawn) < 10:
        traces.insert(0, go.Scatter(x=[contexts[0], contexts[-1]], y=[1, 1], name="1 request",
                                    mode="lines", hoverinfo="skip",
                                    line={"color": COLORS["padding_layer"], "width": 1.5,
                                          "dash": "dash"}))
        drawn.append(1)
    traces.append(go.Scatter(x=marks_x, y=marks_y, name=f"at {tokens_text(context)}",
                             mode="markers", customdata=marks_name,
                             marker={"color": "#222", "size": 10, "symbol": "diamond"},
                             hovertemplate="%{customdata}<br>" + at))
    # a label a decade (0.1, 1, 10, 100; Plotly's 2 and 5 between them read as figures of
    # their own), from the decade under the lowest point to the one over the highest
    decades = ([math.floor(math.log10(min(drawn))), math.ceil(math.log10(max(drawn)))]
               if drawn else [0, 1])
    if decades[0] == decades[1]:
        decades[1] += 1
    layout = {"xaxis": {"title": "context length (tokens)"}
              | _powers_of_two_axis(contexts[0], contexts[-1], context),
              # padded a little: a point or the one-request line on a decade stays in view
              # requests in full (1,000,000; 0.01): an SI "1M" would sit under an x axis whose
              # M is 2**20 tokens
              "yaxis": {"title": "max concurrency (requests, log)", "type": "log", "dtick": 1,
                        "tickformat": ",", "range": [decades[0] - 0.05, decades[1] + 0.05]}}
    return _house_figure(traces, layout | {"legend": LEGEND_BESIDE}, title=title, height=460,
                         legend_lines=0)


# A legend of an entry a line right of the plot, its top level with the plot's: as tall at every
# width. Compare's context chart, eight entries, took four lines under its title at 1000 px, and
# the same four lines' room (an 80 px band, 60 px of it blank) at 1,440 px, where Plotly wraps
# them to two; beside the plot it leaves no band at either width, and the plot takes the width
# the legend does not (the widest entry, "FlatKV per component", about 160 px).
LEGEND_BESIDE = {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"}


def breakdown_bars(
    names: Sequence[str], breakdowns: Sequence[Sequence[tuple[str, int]]], *, title: str = ""
) -> go.Figure:
    """Stacked bars: where each strategy's budget goes (one trace per category that any bar
    uses: a legend of seven entries for one used slice reads as missing data)."""
    used = {c for b in breakdowns for c, v in b if v}
    # in the strategies' order (kv, state, padding, dead weight, idle, unused), whichever bar
    # uses a category first
    categories = sorted(used, key=lambda c: list(CATEGORY_KIND).index(c))
    traces = []
    biggest = max((sum(v for _, v in b) for b in breakdowns), default=1)
    scale, unit = byte_unit(biggest)
    for cat in categories:
        values = [dict(b).get(cat, 0) for b in breakdowns]
        kind = CATEGORY_KIND[cat]  # every breakdown category has one (a test keeps them so)
        label = CATEGORY_LABELS[cat]  # the legend's words in the hover too, and the CLI's
        traces.append(go.Bar(
            name=label, orientation="h", y=list(names),
            x=[v / scale for v in values],
            marker={"color": CATEGORY_SHADES.get(cat, color_of(kind)),
                    "line": {"color": "white", "width": 0.5},
                    "pattern": {"shape": HATCH.get(cat, ""), "fgcolor": "#7F7F7F"}},
            customdata=[[f"{v:,}", format_bytes(v)] for v in values],
            hovertemplate=f"%{{y}}<br>{label}: %{{customdata[0]}} B (%{{customdata[1]}})"
            "<extra></extra>",
        ))
    layout = {"barmode": "stack", "xaxis": {"title": f"bytes of the budget ({unit})"},
              "yaxis": {"autorange": "reversed"},
              # keys left to right as the slices stack (plotly reverses a stacked bar's key)
              "legend": {"traceorder": "normal"}}
    # the key hangs under the title: at 1000 px its seven categories take four lines, which
    # grew up over the title when one was reserved, and one at 1,400 px
    return _house_figure(traces, layout, title=title, height=max(260, 140 + 44 * len(names)),
                         hanging_legend=True)


# --------------------------------------------------------------------------------------------
# Model page


def layer_strip(profile: CacheProfile, names: Sequence[str] | None = None, *,
                title: str = "") -> go.Figure:
    """The cache layers in model order, one cell each, coloured by kind: ``layer_rows``' rows
    (``names``: a spec's kind names, as its table shows them), each beside its layer label
    from ``profile.layer_types``, which keys its colour (``GROUP_KIND``) and its trace; the
    row's group is Layout's name for it, shown in the hover, never read back into a kind."""
    layers = layer_rows(profile, names)
    traces = []
    by_label: dict[str, list[Mapping]] = {}
    for row, label in zip(layers, profile.layer_types, strict=True):
        by_label.setdefault(label, []).append(row)
    for label, rows in by_label.items():
        group = rows[0]["group"]
        traces.append(go.Bar(
            name=rows[0]["kind"], x=[r["cache layer"] for r in rows], y=[1] * len(rows),
            # One layer wide each: plotly would size a bar by its trace's spacing of x values.
            width=[0.9] * len(rows),
            marker={"color": color_of(GROUP_KIND[label]),
                    "line": {"color": "white", "width": 1}},
            customdata=[[r["slot"], f"{r['bytes per token']:,}", f"{r['state bytes']:,}",
                         r["kind"]] for r in rows],
            # the legend's kind, and the planner's group and its layer j (Layout's words)
            hovertemplate="cache layer %{x}: %{customdata[3]} (" + group
            + " #%{customdata[0]})"
            "<br>%{customdata[1]} B per token, %{customdata[2]} B state<extra></extra>",
        ))
    last = max((r["cache layer"] for r in layers), default=0)  # whole layers on the axis
    layout = {"barmode": "overlay", "bargap": 0.05, "yaxis": {"visible": False},
              "xaxis": {"title": "cache layer", "range": [-0.5, last + 0.5], "tickformat": "d",
                        **({"dtick": 1} if last < 16 else {})}}  # auto steps of 0.5: 0 1 1 2
    # the key hangs under the title: a hand-made model's "constant state (linear attention,
    # Mamba, short conv)" beside two attention kinds takes three lines at 1000 px, which grew
    # up over the title. Plotly takes a hanging key's lines from the plot, so the figure keeps
    # a key line (20 px) a kind past the first: three lines left the cells 18 px tall of 58
    return _house_figure(traces, layout, title=title, height=190 + 20 * (len(traces) - 1),
                         hanging_legend=True)


# --------------------------------------------------------------------------------------------
# GPU lab


# A baseline's dash: the device copy dashed, the copy of the state bytes dash-dotted (it also
# wears the state-row copy's colour), so the two never read as one line where they cross; the
# pinned copies dashed in their host moves' colours.
BASELINE_DASH = {"copy": "dash", "state_bytes_copy": "dashdot"}


def _series_style(s: Series) -> dict:
    """Baselines dashed (BASELINE_DASH), movers solid (dotted for the page-major pool when a run
    timed both layouts; the layouts share their baselines); triton with diamonds, torch with
    circles, baselines with open squares."""
    paged = s.named_layout and s.layout == PAGE_MAJOR
    dash = (BASELINE_DASH.get(s.operation, "dash") if s.is_baseline
            else "dot" if paged else "solid")
    symbol = ("square-open" if s.is_baseline
              else "diamond" if s.implementation == TRITON_KERNEL else "circle")
    return {
        "line": {"color": color_of(s.kind), "width": 2 if s.is_baseline else 2.5, "dash": dash},
        "marker": {"color": color_of(s.kind), "size": 8, "symbol": symbol},
    }


BASELINE_TICK = 0.45  # half the height of a baseline's mark across a bar (bars are 0.7 high)


def bandwidth_bars(series: Sequence[Series], *, title: str = "") -> go.Figure:
    """One run: a bar per figure (GB/s), baselines hatched, and each baseline marked across its
    own bar and every bar measured against it (a dashed tick at its GB/s, in its style: the
    device copy across gather and scatter, the copy of the state bytes across the state-row
    copy, a pinned copy across its host move). The first point of each series is shown."""
    traces = []
    names = [s.name for s in series]
    for i, s in enumerate(series):
        traces.append(go.Bar(
            name=s.name, orientation="h", y=[i], x=[s.gbps[0]],
            marker={"color": color_of(s.kind), "line": {"color": "white", "width": 0.5},
                    # faint stripes: the bar's label must stay readable over them
                    "pattern": {"shape": "/" if s.is_baseline else "",
                                "fgcolor": "rgba(255, 255, 255, 0.4)", "solidity": 0.2}},
            # inside the bar from its start where it fits: clear of the baseline marks
            text=[f"{s.gbps[0]:,.2f} GB/s"], textposition="auto", insidetextanchor="start",
            # black or white as the bar's fill reads (outside it, the page's text colour)
            insidetextfont={"color": label_color(color_of(s.kind))},
            cliponaxis=False,
            customdata=[[f"{s.call_bytes[0]:,}", format_bytes(s.call_bytes[0])]],
            hovertemplate=f"{s.name}<br>%{{x:,.2f}} GB/s<br>%{{customdata[0]}} B "
            "(%{customdata[1]}) per call<extra></extra>",
            showlegend=False,
        ))
    for b in (s for s in series if s.is_baseline):
        rows = [i for i, s in enumerate(series) if s.compared_with == b.operation]
        xs: list[float | None] = []
        ys: list[float | None] = []
        for i in rows:  # one tick a bar, the ticks apart (None breaks the line)
            xs += [b.gbps[0], b.gbps[0], None]
            ys += [i - BASELINE_TICK, i + BASELINE_TICK, None]
        style = _series_style(b)["line"]
        traces.append(go.Scatter(
            name=b.name, x=xs[:-1], y=ys[:-1], mode="lines",
            line={"color": style["color"], "width": 2.5, "dash": style["dash"]},
            hovertemplate=f"{b.name}: %{{x:,.2f}} GB/s<extra></extra>",
        ))
    top = max((s.gbps[0] for s in series), default=1.0)
    layout = {"yaxis": {"tickvals": list(range(len(names))), "ticktext": names,
                        "autorange": "reversed", "title": None},
              # room on the right for the label of the longest bar
              "xaxis": {"title": "GB/s (1e9 bytes per second)", "range": [0, top * 1.18]},
              "bargap": 0.3}
    return _house_figure(traces, layout, title=title, height=max(260, 130 + 40 * len(series)),
                         hanging_legend=True)


def bandwidth_sweep(
    series: Sequence[Series], *, x: str, title: str = ""
) -> go.Figure:
    """GB/s of every figure over pages per call (``x="pages_per_call"``) or page bytes
    (``x="page_bytes"``), log x; the device copy (and the host baselines) dashed."""
    traces = []
    pages = x == "pages_per_call"
    biggest = max((v for s in series for v in s.x), default=1)
    scale = 1 if pages else byte_unit(biggest)[0]
    for s in series:
        traces.append(go.Scatter(
            name=s.name, x=[v / scale for v in s.x], y=list(s.gbps), mode="lines+markers",
            **_series_style(s),
            customdata=[[f"{count_text(v, 'page')} per call" if pages else f"page {v:,} B",
                         f"{c:,}", format_bytes(c)] for v, c in zip(s.x, s.call_bytes)],
            hovertemplate=f"{s.name}<br>%{{y:,.2f}} GB/s<br>%{{customdata[0]}}"
            + "<br>%{customdata[1]} B (%{customdata[2]}) per call<extra></extra>",
        ))
    # ticks at the swept values only: a log axis would label 1.5 or 3 pages per call
    swept = sorted({v for s in series for v in s.x})
    layout = {"xaxis": {"type": "log", "title": "pages per call" if pages else "page bytes",
                        "tickmode": "array", "tickvals": [v / scale for v in swept],
                        "ticktext": [f"{v:,}" if pages else format_bytes(v) for v in swept]},
              "yaxis": {"title": "GB/s (1e9 bytes per second)", "rangemode": "tozero"}}
    return _house_figure(traces, layout, title=title, height=420, hanging_legend=True)
