"""Chart builders: the figure carries the data it was given, in the colours of its kinds."""

from __future__ import annotations

import itertools
import math

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from flatkv import app_data, charts
from flatkv.analysis import analyze
from flatkv.app_model import preset_spec
from flatkv.charts import COLORS
from flatkv.profile import CacheProfile
from flatkv.strategies import CATEGORIES, run_strategy

# the state group as the pages name it (app_model.counted_kind)
# the state group as Layout names it (``app_model.group_name``): short, inside metric labels
STATE_KIND = "state"

QWEN35 = CacheProfile((("linear_attention",) * 3 + ("full_attention",)) * 12, 2048,
                      {"conv": 49152, "ssm": 2097152})
MiB = 2**20


@pytest.fixture(scope="module")
def analysis():
    return analyze(QWEN35.components(), block_size=64, alignment=16, budget_bytes=80 * 10**9)


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_byte_unit():
    assert charts.byte_unit(1023) == (1, "B")
    assert charts.byte_unit(4 * MiB) == (MiB, "MiB")
    assert charts.byte_unit(3 * 2**30) == (2**30, "GiB")


def test_layout_figure_draws_each_binding_at_its_offset(analysis):
    fig = charts.layout_figure(app_data.layout_segments(analysis, uniform=True))
    assert {t.name for t in fig.data} == {"conv state", "ssm state", "KV (full attention)",
                                         "padding"}
    kv = _trace(fig, "KV (full attention)")
    assert len(kv.y) == 12 and kv.orientation == "h"
    # row 1 of slot 0 in uniform pages starts at one page row: 2,162,688 B = 2.0625 MiB
    assert kv.base[0] == pytest.approx(2_162_688 / MiB)
    assert kv.x[0] == pytest.approx(2_162_688 / MiB)
    # the hover: whose bytes (the group's layer), exact bytes and in their unit, and where in
    # the row: 1,056 tokens x 2,048 B = 2,162,688 B = 2.0625 MiB, from one page row (the
    # state's 49,152 + 2,097,152 = 2,146,304 B, padded by 16,384 B to 1,056 x 2,048) to two
    assert kv.hovertemplate == ("%{y}<br>%{customdata[0]}: %{customdata[1]}<br>"
                                "%{customdata[2]} B (%{customdata[5]})<br>"
                                "bytes %{customdata[3]} .. %{customdata[4]} of the row"
                                "<extra></extra>")
    assert [list(row) for row in kv.customdata[:2]] == [
        ["full attention #0", "kv", "2,162,688", "2,162,688", "4,325,376", "2.06 MiB"],
        ["full attention #1", "kv", "2,162,688", "2,162,688", "4,325,376", "2.06 MiB"]]
    assert [list(_trace(fig, name).customdata[0]) for name in ("conv state", "ssm state",
                                                               "padding")] == [
        ["state #0", "conv", "49,152", "0", "49,152", "48.00 KiB"],
        ["state #0", "ssm", "2,097,152", "49,152", "2,146,304", "2.00 MiB"],
        ["state #0", "padding", "16,384", "2,146,304", "2,162,688", "16.00 KiB"]]
    assert 1056 * 2048 == 2_162_688 == 2_146_304 + 16_384
    # where the layer types are given, the model's cache layer too: full layer 1 is layer 7
    named = charts.layout_figure(app_data.layout_segments(analysis, uniform=True,
                                                          layer_types=QWEN35.layer_types))
    assert list(_trace(named, "KV (full attention)").customdata[1]) == [
        "full attention #1 (cache layer 7)", "kv", "2,162,688", "2,162,688", "4,325,376",
        "2.06 MiB"]
    # a group by its kind, as Layout names it (the hover read "full_attention #0", the
    # planner's id); MLA's latent said where the full layers keep it
    latent = charts.layout_figure(app_data.layout_segments(analysis, mla=True))
    assert _trace(latent, "KV (full attention, MLA latent)").customdata[0][0] == (
        "full attention (MLA) #0")
    assert fig.layout.xaxis.title.text == "offset in the slot row (MiB)"
    assert kv.marker.color == COLORS["kv"]
    pad = _trace(fig, "padding")
    assert pad.marker.pattern.shape == "/" and pad.marker.color == COLORS["padding"]
    assert pad.x[0] == pytest.approx(16_384 / MiB) and len(pad.x) == 36
    assert fig.layout.barmode == "overlay"
    assert list(fig.layout.yaxis.categoryarray) == [f"flat_slab_{j}" for j in range(36)]
    assert "MiB" in fig.layout.xaxis.title.text


def test_layout_figure_keys_its_kinds_in_the_order_the_bars_are_read(analysis):
    # gpt-oss-20b (12 sliding + 12 full layers, 2,048 B a token each, SPEC): at P 16 each slot
    # row is the sliding layer's 32,768 B at offset 0, then the full layer's at 32,768; its key
    # listed "KV (full attention)" first, by a fixed order of kinds. vLLM's rows: the sliding
    # group's on top. Qwen3.5-like slabs: conv at 0, ssm at 49,152, padding at 2,146,304, KV at
    # 2,162,688 (one page row)
    gpt = CacheProfile(("sliding_attention", "full_attention") * 12, 2048, {},
                       sliding_window=128)
    rows = charts.layout_figure(app_data.layout_segments(
        analyze(gpt.components(), block_size=16, alignment=16, budget_bytes=10**9)))
    assert [t.name for t in rows.data] == ["KV (sliding window)", "KV (full attention)"]
    assert [t.base[0] * 1024 for t in rows.data] == [0, 32_768]  # in KiB
    engine = run_strategy("vllm", gpt, budget_bytes=10**9, context_tokens=4096)
    vllm_rows = app_data.vllm_block_segments(engine, gpt)
    assert vllm_rows[0].slot_name == "sliding attention" and vllm_rows[0].offset == 0
    vllm = charts.layout_figure(vllm_rows)
    assert [t.name for t in vllm.data] == ["KV (sliding window)", "KV (full attention)"]
    padded = charts.layout_figure(app_data.layout_segments(analysis, uniform=True))
    assert [t.name for t in padded.data] == ["conv state", "ssm state", "padding",
                                             "KV (full attention)"]


def test_layout_figure_of_the_largest_example_stays_small():
    falcon = preset_spec("Falcon-H1-7B").profile()
    a = analyze(falcon.components(), block_size=16, budget_bytes=80 * 10**9)
    fig = charts.layout_figure(app_data.layout_segments(a))
    assert len(fig.data) == 3  # one trace per kind, not per binding
    assert sum(len(t.x) for t in fig.data) == 44 * 3


def _tile_names(bars) -> dict[str, str]:
    """The bytes chart's tiles by id: the name each is hovered by (its customdata's last)."""
    return {i: data[3] for i, data in zip(bars.ids, bars.customdata, strict=True)}


def test_icicle_values_and_colours(analysis):
    # QWEN35 in 80e9 B at P 1,056: 775 blocks; state rows 775 x 36 x (49,152 + 2,097,152) B =
    # 59,881,881,600 (its conv 775 x 36 x 49,152 = 1,371,340,800, a layer's 38,092,800), full
    # attention's 775 x 12 x 1,056 x 2,048 = 20,112,998,400, unused 5,120,000: 80e9 in all
    assert analysis.totals.num_blocks == 775
    nodes = app_data.bytes_tree(analysis)
    fig = charts.bytes_icicle(nodes)
    (bars,) = fig.data
    assert bars.type == "bar"
    tiles = {i: (x - w / 2, x + w / 2, base, y) for i, x, w, base, y in zip(
        bars.ids, bars.x, bars.width, bars.base, bars.y, strict=True)}
    # every tile but the budget's, whose column Plotly's icicle kept blank beside the groups (a
    # third of its width): the groups from the plot's left edge, their components, their
    # layers to its right edge, each column's tiles stacked from the top, each as tall as its
    # bytes
    assert "budget" not in tiles and len(tiles) == len(nodes) - 1
    state, conv, conv_1 = (tiles[i] for i in ("linear_attention", "linear_attention/conv",
                                              "linear_attention/conv/1"))
    full, ssm, unused = (tiles[i] for i in ("full_attention", "linear_attention/ssm",
                                            "unused"))
    assert state[:2] == pytest.approx((0, 0.34)) and conv[:2] == pytest.approx((0.34, 0.8))
    assert conv_1[:2] == pytest.approx((0.8, 1))
    assert state[2:] == (0, 59_881_881_600) and conv[2:] == (0, 1_371_340_800)
    assert conv_1[2:] == (38_092_800, 38_092_800) and ssm[2] == 1_371_340_800
    assert full[2:] == (59_881_881_600, 20_112_998_400)
    assert unused[2:] == (80 * 10**9 - 5_120_000, 5_120_000)
    assert fig.layout.yaxis.range == (80 * 10**9, 0)  # the whole budget, top down
    colours = dict(zip(bars.ids, bars.marker.color, strict=True))
    assert colours["full_attention/kv/0"] == colours["full_attention/kv"] == COLORS["kv"]
    assert colours["linear_attention/conv/0"] == COLORS["conv"]
    assert colours["unused"] == COLORS["unused"]
    # the budget in the groups' heading: 80e9 B = 74.51 GiB
    assert [a.text for a in fig.layout.annotations] == [
        "groups (74.51 GiB budget)", "components", "layers"]
    # labels too small to read are hidden, not shrunk (the hover keeps them)
    # a label is hidden rather than shrunk under 12 px (the house font's 13), so no thin tile's
    # label shrinks every other's: gpt-oss-20b's 17 px layer tiles drew all at 10.5 px
    assert (fig.layout.uniformtext.minsize, fig.layout.uniformtext.mode) == (12, "hide")
    assert fig.data[0].textfont.size == 13


def test_label_colour_reads_on_its_fill_by_wcag_contrast():
    # WCAG 2: sRGB channel c/255 linearised ((c + 0.055) / 1.055) ** 2.4 (c/12.92 under
    # 0.04045), L = 0.2126 R + 0.7152 G + 0.0722 B, ratio (lighter + 0.05) / (darker + 0.05).
    # #1f77b4: 31, 119, 180 -> 0.01370, 0.18447, 0.45641 -> L 0.16780; white 1.05 / 0.21780
    # = 4.82:1, over 4.5, so white
    assert charts.relative_luminance("#1f77b4") == pytest.approx(0.16780, abs=1e-5)
    assert charts.contrast_ratio("#FFFFFF", "#1f77b4") == pytest.approx(4.821, abs=1e-3)
    assert charts.label_color("#1f77b4") == "#FFFFFF"
    # DeepSeek-V3.2's indexer keys, #9ECAE9: 158, 202, 233 -> 0.34191, 0.59062, 0.81485 ->
    # L 0.55393; white 1.05 / 0.60393 = 1.74:1, so black: 0.60393 / 0.05 = 12.08:1
    assert charts.relative_luminance("#9ECAE9") == pytest.approx(0.55393, abs=1e-5)
    assert charts.contrast_ratio("#9ECAE9", "#FFFFFF") == pytest.approx(1.7386, abs=1e-4)
    assert charts.label_color("#9ECAE9") == "#000000"
    assert charts.contrast_ratio("#000000", "#9ECAE9") == pytest.approx(12.079, abs=1e-3)
    assert (charts.relative_luminance("#FFFFFF"), charts.relative_luminance("#000000")) == (1, 0)
    assert charts.contrast_ratio("#FFFFFF", "#000000") == 21
    # white's ratio at the threshold's edge: 4.5:1 is L 1.05 / 4.5 - 0.05 = 0.18333; #777777's
    # 119 -> 0.18447 (as #1f77b4's green), 4.48:1, black; #767676's 118 -> 0.18116, 4.54:1, white
    assert charts.label_color("#777777") == "#000000"
    assert charts.label_color("#767676") == "#FFFFFF"
    # every fill the charts put text on: the label reads at 4.5:1 or better
    for kind, fill in COLORS.items():
        assert charts.contrast_ratio(charts.label_color(fill), fill) >= 4.5, kind
    with pytest.raises(ValueError, match="color='blue'"):
        charts.label_color("blue")


def test_icicle_labels_of_deepseek_v32_read_on_their_tiles():
    # the KV's blue #4C78A8 (white 4.61:1) keeps white labels; the indexer keys' light blue
    # #9ECAE9 (white 1.74:1), the group's #DCE3EC and unused's #E2E2E2 take black
    profile = preset_spec("DeepSeek-V3.2").profile()
    nodes = app_data.bytes_tree(
        analyze(profile.components(), block_size=64, alignment=16, budget_bytes=80 * 10**9),
        indexer_bytes_per_slot=profile.indexer_bytes_per_slot, mla=profile.mla)
    ic = charts.bytes_icicle(nodes).data[0]
    text = {i: (fill, font) for i, fill, font in zip(ic.ids, ic.marker.color, ic.textfont.color,
                                                     strict=True)}
    assert text["full_attention"] == ("#DCE3EC", "#000000")
    assert text["full_attention/kv"] == text["full_attention/kv/60"] == ("#4C78A8", "#FFFFFF")
    assert text["full_attention/indexer keys"] == text["full_attention/indexer keys/0"] == (
        "#9ECAE9", "#000000")
    assert text["unused"] == ("#E2E2E2", "#000000")
    assert sorted(set(text.values())) == [("#4C78A8", "#FFFFFF"), ("#9ECAE9", "#000000"),
                                          ("#DCE3EC", "#000000"), ("#E2E2E2", "#000000")]


def test_icicle_names_a_tile_too_thin_for_its_label():
    # Qwen3-Next in the default 76,968,728,985 B at P 544: 1,455 blocks of 36 conv rows of
    # 49,152 B, 2,574,581,760 B, 13.7 of the icicle's 410 px: under the 18 px a line of label
    # needs, so Plotly hides it; named for the page. Its 17,340,825 B unused are 0.09 px, no
    # slice to name; the ssm state, 51.15 GiB, keeps two lines
    qwen = preset_spec("Qwen3-Next-80B-A3B").profile()
    a = analyze(qwen.components(), block_size=16, alignment=16, budget_bytes=76_968_728_985)
    assert a.totals.num_blocks == 1_455
    nodes = app_data.bytes_tree(a)
    conv = 36 * 49_152 * 1_455
    assert conv == 2_574_581_760 and 13 < conv * 410 / 76_968_728_985 < 14
    assert charts.icicle_unlabelled(nodes) == [("conv state", conv)]
    ic = charts.bytes_icicle(nodes).data[0]
    texts = dict(zip(ic.ids, ic.texttemplate, strict=True))
    assert texts["linear_attention/conv"] == "%{text} %{customdata[1]}"  # one line, if any
    assert texts["linear_attention/ssm"] == texts["linear_attention"] == (
        "%{text}<br>%{customdata[1]}")
    # every layer tile carries its index and bytes, which Plotly hides where they do not fit
    # at 12 px and shows on a zoom: Qwen3-Next's 84 (12 KV, 36 conv, 36 ssm; 6 px each for the
    # ssm's) had none
    layers = {i: (x, tmpl) for i, x, tmpl in zip(ic.ids, ic.text, ic.texttemplate, strict=True)
              if i.count("/") == 2}
    assert len(layers) == 84 and all(x.startswith("#") for x, _ in layers.values())
    assert layers["linear_attention/ssm/0"] == ("#0", "%{text} %{customdata[1]}")
    # measured in Chromium at 1000 and 1440 px: a line of label (14 px of 13 px text) shows in
    # a tile drawn 20 px tall, not 19; two lines (29.9 px) in 36, not 35. A tile of 20 px
    # takes one line, of 36 two, of 19.9 none (named); a layer's its index either way
    from flatkv.app_data import TreeNode
    tiles = [TreeNode("budget", "", "budget", 4100, "budget"),
             TreeNode("g", "budget", "g", 4100, "group"),
             TreeNode("g/a", "g", "a", 200, "conv"), TreeNode("g/b", "g", "b", 360, "ssm"),
             TreeNode("g/d", "g", "d", 199, "conv"), TreeNode("g/e", "g", "e", 359, "conv"),
             TreeNode("g/c", "g", "c", 3182, "ssm"),
             TreeNode("g/c/0", "g/c", "c #0", 200, "ssm"),
             TreeNode("g/c/1", "g/c", "c #1", 2982, "ssm")]
    drawn = charts.bytes_icicle(tiles).data[0]
    made = dict(zip(drawn.ids, zip(drawn.text, drawn.texttemplate, strict=True), strict=True))
    assert [made[i] for i in ("g/a", "g/b", "g/e", "g/c/0", "g/c/1")] == [
        ("conv state", "%{text} %{customdata[1]}"),
        ("ssm state", "%{text}<br>%{customdata[1]}"), ("conv state", "%{text} %{customdata[1]}"),
        ("#0", "%{text} %{customdata[1]}"), ("#1", "%{text}<br>%{customdata[1]}")]
    assert _tile_names(drawn)["g/c/0"] == "ssm state #0"  # its hover names it, as its component
    assert charts.icicle_unlabelled(tiles) == [("conv state", 199)]


def test_icicle_names_a_label_too_wide_for_its_column_at_1000_px():
    # measured in the groups' column at 1000 px (177 px): a line of label 171 px wide shows,
    # one of 179 px does not, at any height; at 1440 px (326 px) both show. A group's line
    # is its label and its bytes, counted at their longest ("123.45 GiB"): "full attention
    # (MLA) rows" and those, 36 characters, 194.4 px at LABEL_CHAR_PX, over the 176.8 - 2 x 3
    # px: named under the chart where its tile takes a line (30 px), not where it takes two
    # (40 px); "state rows" and its bytes, 21 characters, 113.4 px, fit its line
    from flatkv.app_data import TreeNode

    def chart(px: int, label: str) -> list[TreeNode]:
        nodes = [TreeNode("budget", "", "budget", 410, "budget")]
        for gid, value, name in (("g", px, label), ("h", 410 - px, "h rows")):
            nodes += [TreeNode(gid, "budget", name, value, "group"),
                      TreeNode(f"{gid}/kv", gid, "kv", value, "kv"),
                      TreeNode(f"{gid}/kv/0", f"{gid}/kv", "kv #0", value, "kv")]
        return nodes

    column, line = 0.34 * charts.ICICLE_NARROW_PLOT_PX, 36 * charts.LABEL_CHAR_PX
    assert (column, line) == pytest.approx((176.8, 194.4))
    assert charts.icicle_unlabelled(chart(30, "full attention (MLA) rows")) == [
        ("full attention (MLA) rows", 30)]
    assert charts.icicle_unlabelled(chart(40, "full attention (MLA) rows")) == []
    # and "KV (full attention)" beside it, 30 characters, in the components' 239 px
    assert charts.icicle_unlabelled(chart(30, "state rows")) == []


@pytest.fixture(scope="module")
def gpt_oss_tree():
    """gpt-oss-20b at the default 76,968,728,985 B and P 16 (SPEC 2: 24 layers alternating
    sliding and full, 2,048 B a token): a layer's row 16 x 2,048 = 32,768 B, a block 24 x
    32,768 = 786,432 B, 97,870 blocks, 629,145 B unused; a layer's bytes 32,768 x 97,870 =
    3,207,004,160, a group's (12 layers) 38,484,049,920."""
    spec = preset_spec("gpt-oss-20b").profile()
    a = analyze(spec.components(), block_size=16, alignment=16, budget_bytes=76_968_728_985)
    assert 76_968_728_985 // 786_432 == a.totals.num_blocks == 97_870
    assert 76_968_728_985 - 97_870 * 786_432 == a.totals.unused_bytes == 629_145
    return app_data.bytes_tree(a)


def _tiles(fig) -> dict[str, tuple[float, float, int, int]]:
    """The bytes chart's tiles by id: left and right edges (fractions of the plot's width),
    first byte down the view and bytes."""
    (b,) = fig.data
    return {i: (x - w / 2, x + w / 2, base, y) for i, x, w, base, y in zip(
        b.ids, b.x, b.width, b.base, b.y, strict=True)}


def test_icicle_draws_a_group_alone_as_tall_as_the_plot(gpt_oss_tree):
    # the icicle's click into a part, which the bars lost: the full attention group alone,
    # its 38,484,049,920 B the plot's height (the whole view: the budget's), its KV beside
    # it and the KV's 12 layers, 3,207,004,160 B each, stacked from its top
    whole = _tiles(charts.bytes_icicle(gpt_oss_tree))
    assert whole["full_attention"][2:] == (38_484_049_920, 38_484_049_920)  # under sliding
    fig = charts.bytes_icicle(gpt_oss_tree, focus="full_attention")
    tiles = _tiles(fig)
    assert set(tiles) == {"full_attention", "full_attention/kv",
                          *(f"full_attention/kv/{j}" for j in range(12))}
    assert fig.layout.yaxis.range == (38_484_049_920, 0)
    assert tiles["full_attention"] == pytest.approx((0, 0.34, 0, 38_484_049_920))
    assert tiles["full_attention/kv"] == pytest.approx((0.34, 0.8, 0, 38_484_049_920))
    layers = sorted(v[2:] for i, v in tiles.items() if i.count("/") == 2)
    assert layers == [(k * 3_207_004_160, 3_207_004_160) for k in range(12)]
    assert sum(y for _, y in layers) == tiles["full_attention"][3]  # the parent bar's bytes
    # the hover keeps the share of the whole budget: 3,207,004,160 / 76,968,728,985 = 4.1667%
    (bars,) = fig.data
    hover = {i: c for i, c in zip(bars.ids, bars.customdata, strict=True)}
    assert list(hover["full_attention/kv/1"]) == [
        "3,207,004,160", "2.99 GiB", "4.17%", "KV (full attention) #1",
        "full_attention/kv/1"]  # the last, its id, what a click sends back
    # a click's point as streamlit's selection gives it: its customdata, not Plotly's ids
    point = {"curve_number": 0, "point_index": 5, "customdata": hover["full_attention/kv/1"]}
    assert charts.icicle_clicked_tile(point) == "full_attention/kv/1"
    assert [a.text for a in fig.layout.annotations] == [
        "group (click it to go back)", "components", "layers"]
    # a click selects a tile; the others keep their colour
    assert bars.unselected.marker.opacity == bars.selected.marker.opacity == 1


def test_icicle_draws_a_component_alone_across_the_plot(gpt_oss_tree):
    # a component's view: no groups' column; the component 0.46 / 0.66 of the width (its
    # labels the longest), its layers 0.20 / 0.66; 12 layers of 410 px, 34.2 px each, a line
    # of label each (two need 36 px)
    fig = charts.bytes_icicle(gpt_oss_tree, focus="sliding_attention/kv")
    tiles = _tiles(fig)
    assert len(tiles) == 13 and fig.layout.yaxis.range == (38_484_049_920, 0)
    assert tiles["sliding_attention/kv"] == pytest.approx((0, 0.46 / 0.66, 0, 38_484_049_920))
    assert tiles["sliding_attention/kv/11"] == pytest.approx(
        (0.46 / 0.66, 1, 11 * 3_207_004_160, 3_207_004_160))
    assert fig.layout.height == 34 + 410 + 40
    (bars,) = fig.data
    made = dict(zip(bars.ids, zip(bars.text, bars.texttemplate, strict=True), strict=True))
    assert made["sliding_attention/kv/11"] == ("#11", "%{text} %{customdata[1]}")
    assert [a.text for a in fig.layout.annotations] == ["component (click it to go back)",
                                                        "layers"]
    # a tile that has no parts has no view of its own
    for bad in ("sliding_attention/kv/0", "unused", "nope"):
        with pytest.raises(ValueError, match=f"focus: '{bad}' is no group or component"):
            charts.bytes_icicle(gpt_oss_tree, focus=bad)


def test_a_click_on_the_bytes_chart_opens_a_part_and_its_own_tile_goes_back(gpt_oss_tree):
    click = charts.icicle_focus_after_click
    # from the whole view: a group, a component, a layer (its component: 12 layers in 410 px
    # were 17 px each, unlabelled), unused (no parts: as it was)
    assert click(gpt_oss_tree, "budget", "full_attention") == "full_attention"
    assert click(gpt_oss_tree, "budget", "full_attention/kv") == "full_attention/kv"
    assert click(gpt_oss_tree, "budget", "full_attention/kv/3") == "full_attention/kv"
    assert click(gpt_oss_tree, "budget", "unused") == "budget"
    # the focused tile, leftmost and as tall as the plot, goes back up a level
    assert click(gpt_oss_tree, "full_attention/kv", "full_attention/kv") == "full_attention"
    assert click(gpt_oss_tree, "full_attention", "full_attention") == "budget"
    assert click(gpt_oss_tree, "full_attention/kv", "full_attention/kv/3") == (
        "full_attention/kv")
    assert charts.icicle_focus_options(gpt_oss_tree) == {
        "budget": "the whole budget", "sliding_attention": "sliding attention rows",
        "sliding_attention/kv": "sliding attention rows: KV (sliding window)",
        "full_attention": "full attention rows",
        "full_attention/kv": "full attention rows: KV (full attention)"}


def test_a_components_view_grows_until_its_layers_take_a_line_of_label():
    # Qwen3-Next's ssm: 36 layers of 1,048,576 B x 1,455 blocks, 11.4 px each in 410 px;
    # its view 36 x 20 = 720 px tall, each layer 20 px, the least that shows a line in
    # Chromium. Its conv (36 layers too) alike; the groups' views keep 410 px
    qwen = preset_spec("Qwen3-Next-80B-A3B").profile()
    a = analyze(qwen.components(), block_size=16, alignment=16, budget_bytes=76_968_728_985)
    nodes = app_data.bytes_tree(a)
    assert a.totals.num_blocks == 1_455
    ssm = charts.bytes_icicle(nodes, focus="linear_attention/ssm")
    assert ssm.layout.height == 34 + 720 + 40
    assert ssm.layout.yaxis.range == (36 * 1_048_576 * 1_455, 0)
    assert charts.bytes_icicle(nodes, focus="linear_attention").layout.height == 34 + 410 + 40
    # a component of 100 layers stops at 820 px (8.2 px a layer; a drag zooms in)
    from flatkv.app_data import TreeNode
    many = [TreeNode("budget", "", "budget", 100, "budget"),
            TreeNode("g", "budget", "g", 100, "group"), TreeNode("g/c", "g", "c", 100, "kv"),
            *(TreeNode(f"g/c/{j}", "g/c", f"c #{j}", 1, "kv") for j in range(100))]
    assert charts.bytes_icicle(many, focus="g/c").layout.height == 34 + 820 + 40


def test_icicle_names_other_state_tensors_by_their_own_names():
    # a raw model's state tensors h (4,096 B) and c (8,192 B), other state both: the page rows'
    # key names their kind "state", which named both tiles alike (d4be1ac); each keeps its name,
    # as the components a raw model gives, and KV and ssm the key's names
    raw = CacheProfile(layer_types=("linear_attention",) * 3 + ("full_attention",),
                       kv_bytes_per_slot=1_024, state_const_bytes={"h": 4_096, "c": 8_192})
    nodes = app_data.bytes_tree(analyze(raw.components(), block_size=16, budget_bytes=10**8))
    ic = charts.bytes_icicle(nodes).data[0]
    labels = _tile_names(ic)
    assert [labels[i] for i in ("linear_attention/h", "linear_attention/c",
                                "full_attention/kv")] == ["h", "c", "KV (full attention)"]
    assert labels["linear_attention/c/2"] == "c #2"


def test_page_map_and_icicle_name_a_group_by_its_kind_mla_too(analysis):
    # the planner's ids (full_attention, linear_attention) stay the chart's ids; what a reader
    # sees is the kind as the Model page counts it, MLA's full attention named so (its key read
    # "full_attention (1 page)" beside the icicle's "KV (full attention, MLA latent)"); the
    # icicle's group tiles are its rows in every block ("state rows": bytes by tensor, where
    # Compare's "state in use" counts the pages state owns)
    pages = app_data.PageMap(2, ("full_attention", None), {"full_attention": 1}, True, None)
    fig = charts.page_map_figure(pages, columns=2, mla=True)
    assert [t.name for t in fig.data[1:]] == ["full attention (MLA): 1 page", "free: 1 page"]
    assert list(fig.data[0].text[0]) == ["page 0: full attention (MLA)", "page 1: free"]
    ic = charts.bytes_icicle(app_data.bytes_tree(analysis, mla=True)).data[0]
    labels = _tile_names(ic)
    assert [labels[i] for i in ("full_attention", "full_attention/kv", "linear_attention")] == [
        "full attention (MLA) rows", "KV (full attention, MLA latent)", f"{STATE_KIND} rows"]


def test_page_map_marks_each_owner():
    pages = app_data.PageMap(8, ("linear_attention", "full_attention", "full_attention",
                                 None, None, None, None, None),
                             {"linear_attention": 1, "full_attention": 2}, True, None)
    fig = charts.page_map_figure(pages, columns=4)
    grid = fig.data[0]  # a heatmap: its cells scale with the plot, so none overlap
    # colour index by id, 4 a row: linear 0, full 1, free 2
    assert [list(row) for row in grid.z] == [[0, 1, 1, 2], [2, 2, 2, 2]]
    assert list(grid.text[0][:2]) == [f"page 0: {STATE_KIND}", "page 1: full attention"]
    assert grid.text[1][3] == "page 7: free"

    def colour(index):  # the flat band of the colour scale that index falls in
        k = len(fig.data) - 1
        return next(c for edge, c in grid.colorscale if edge > (index + 0.5) / k)

    # the pool's 8 ids less the groups' 1 + 2: 5 free, keyed with their count as the groups'
    legend = [t.name for t in fig.data[1:]]
    assert legend == [f"{STATE_KIND}: 1 page", "full attention: 2 pages", "free: 5 pages"]
    assert colour(1) == _trace(fig, "full attention: 2 pages").marker.color == COLORS["kv"]
    assert colour(2) == _trace(fig, "free: 5 pages").marker.color == COLORS["free"]
    # the map draws the first ids only: the count is the pool's (1,000 ids, 3 handed out), not
    # the drawn ones'; a workload past the pool leaves none free (not a negative count)
    first = charts.page_map_figure(app_data.PageMap(1000, ("full_attention", None), {
        "full_attention": 3}, True, None), columns=2)
    assert first.data[-1].name == "free: 997 pages"
    over = charts.page_map_figure(app_data.PageMap(2, ("full_attention", "full_attention"), {
        "full_attention": 5}, False, 0), columns=2)
    assert over.data[-1].name == "free: 0 pages"


def test_sweep_figure_marks_the_current_point():
    fig = charts.sweep_figure([1, 2, 4], [10, 20, 30], [1.0, 2.0, 3.0], current_x=2,
                              current_capacity=20, current_concurrency=2.0,
                              x_title="block", context=4096, log_x=True)
    current = _trace(fig, "current")
    assert (current.x[0], current.y[0]) == (2, 20)
    assert list(_trace(fig, "capacity (tokens)").y) == [10, 20, 30]
    # two panels on one x axis (on twin y axes from zero, proportional lines would coincide)
    assert _trace(fig, "capacity (tokens)").yaxis == "y"
    assert _trace(fig, "concurrency at 4,096 tokens").yaxis == "y2"
    assert fig.layout.xaxis.matches == "x2" or fig.layout.xaxis2.matches == "x"
    assert fig.layout.yaxis.title.text == "tokens" and fig.layout.yaxis2.title.text == "requests"
    assert fig.layout.yaxis.tickformat == "~s"  # as on Compare's capacity bars
    assert fig.layout.xaxis.type == fig.layout.xaxis2.type == "log"
    # a hover names its x axis: "block 2: 20 tokens", not a bare "2"
    assert current.hovertemplate == ("current<br>block: %{x:,}<br>%{y:,} tokens"
                                     "<extra></extra>")
    # ticks at the powers of two, not a log axis' 1 2 5 10; level, the ends padded
    assert list(fig.layout.xaxis2.tickvals) == [1, 2, 4]
    assert fig.layout.xaxis2.tickangle == 0
    assert list(fig.layout.xaxis2.range) == pytest.approx([-0.08, math.log10(4) + 0.08])
    # 13 powers from 1 to 4k: every other one, from the top, so half a page's width holds them
    wide = charts.sweep_figure([1, 16, 1024, 4096], [1, 2, 3, 4], [1.0] * 4, current_x=16,
                               current_capacity=2, current_concurrency=1.0, x_title="block",
                               context=4096, log_x=True)
    assert list(wide.layout.xaxis2.ticktext) == ["1", "4", "16", "64", "256", "1K", "4K"]
    assert charts._power_text(1 << 20) == "1M" and charts._power_text(1 << 19) == "512K"
    # concurrency is drawn exact, its hover as shown elsewhere (0.998 -> 0.99, never 1.00); a
    # point without a figure is a gap; a state-only model draws no capacity
    fig = charts.sweep_figure([1, 2, 4], None, [652 / 653, 2.0, None], current_x=1,
                              current_capacity=None, current_concurrency=652 / 653,
                              x_title="block", context=4096)
    line = _trace(fig, "concurrency at 4,096 tokens")
    assert list(line.y) == [652 / 653, 2.0, None]
    assert list(line.customdata) == ["0.99", "2.00", None] and not line.connectgaps
    # a linear x axis (the budget) read to 0.01; a log one (block sizes) in whole numbers
    assert line.hovertemplate == "block: %{x:,.2f}<br>%{customdata} requests<extra></extra>"
    assert _trace(wide, "concurrency at 4,096 tokens").hovertemplate == (
        "block: %{x:,}<br>%{customdata} requests<extra></extra>")
    assert not [t for t in fig.data if t.name == "capacity (tokens)"]
    # a layout that does not start at the current budget: the budget marked at 0 requests
    refused = charts.sweep_figure([1, 2, 4], None, [None, None, 3.0], current_x=1,
                                  current_capacity=None, current_concurrency=None,
                                  x_title="budget", context=4096)
    now = _trace(refused, "current: does not start")
    assert (list(now.x), list(now.y)) == ([1], [0])
    assert [t.name for t in refused.data].count("current") == 0
    # requests and a linear budget axis in plain figures: no "5µ" requests, no "5M" GiB
    for axis in (fig.layout.xaxis, fig.layout.yaxis, wide.layout.yaxis2):
        assert (axis.exponentformat, axis.separatethousands) == ("none", True)


def test_a_budget_axis_of_millions_of_gib_keeps_its_tick_labels_apart():
    """At a context of 10^11 tokens the least budget for one request is some 12 million GiB:
    left to Plotly, the half-width chart's budget axis read "0 5,000,000 10,000,000", labels
    touching. It runs from zero at a round step whose labels, a label's width and two
    characters apart, fit the narrowest plot it is drawn in; at tens of GiB as finely as fit."""
    top = 12_500_000.0
    x = [7.17 + i * (top - 7.17) / 39 for i in range(40)]
    fig = charts.sweep_figure(x, [int(v) for v in x], [v / top for v in x], current_x=71.68,
                              current_capacity=71, current_concurrency=71.68 / top,
                              x_title="cache budget per rank (GiB)", context=10**11,
                              target=(top, 1.0, "least budget for 1 request"))
    axis = fig.layout.xaxis2
    assert (list(axis.tickvals), list(axis.ticktext)) == ([0, 10_000_000], ["0", "10,000,000"])
    # from zero, each end padded 3% so the current point near 0 draws whole
    assert list(axis.range) == pytest.approx([-0.03 * top, 1.03 * top])
    assert fig.layout.xaxis.tickvals == axis.tickvals
    assert (axis.exponentformat, axis.separatethousands) == ("none", True)  # no "10M" GiB

    def apart(axis, span):  # pixels between neighbours against the room their labels need
        return [((b - a) / span * charts.NARROW_PLOT_PX,
                 (max(len(ta), len(tb)) + 2) * charts.TICK_CHAR_PX)
                for (a, ta), (b, tb) in itertools.pairwise(zip(axis.tickvals, axis.ticktext))]

    assert all(room >= need for room, need in apart(axis, top))
    assert charts.NARROW_PLOT_PX == 160 and charts.TICK_CHAR_PX == 7  # 128 px >= 84 px
    # tens of GiB: every 20 (every 10 would be 20 px apart, 28 needed); a fraction of a GiB
    # keeps the step's decimals, zero reads "0"
    tens = charts.sweep_figure([8.0, 80.0], None, [1.0, 10.0], current_x=8.0,
                               current_capacity=None, current_concurrency=1.0,
                               x_title="GiB", context=4096)
    assert list(tens.layout.xaxis.ticktext) == ["0", "20", "40", "60", "80"]
    assert all(room >= need for room, need in apart(tens.layout.xaxis, 80.0))
    small = charts.sweep_figure([0.0005, 0.002], None, [1.0, 4.0], current_x=0.0005,
                                current_capacity=None, current_concurrency=1.0,
                                x_title="GiB", context=4096)
    assert list(small.layout.xaxis.ticktext) == ["0", "0.001", "0.002"]


def test_sweep_figure_marks_the_least_budget_for_the_requests_to_hold():
    plain = charts.sweep_figure([1, 2, 4], [10, 20, 30], [1.0, 2.0, 3.0], current_x=2,
                                current_capacity=20, current_concurrency=2.0, x_title="GiB",
                                context=4096)
    fig = charts.sweep_figure([1, 2, 4], [10, 20, 30], [1.0, 2.0, 3.0], current_x=2,
                              current_capacity=20, current_concurrency=2.0, x_title="GiB",
                              context=4096, target=(4.0, 3.0, "least budget for 3 requests"))
    star = _trace(fig, "least budget for 3 requests")
    assert (star.x[0], star.y[0], star.customdata[0]) == (4.0, 3.0, "3.00")
    assert star.yaxis == "y2" and star.marker.symbol == "star"  # on the concurrency panel
    assert star.hovertemplate == ("least budget for 3 requests<br>GiB: %{x:,.2f}<br>"
                                  "%{customdata} requests<extra></extra>")
    # its legend entry gets a line of its own under the title: an entry's 19 px more
    assert fig.layout.margin.t == plain.layout.margin.t + 19
    assert len(fig.data) == len(plain.data) + 1
    # a chart beside it without a star takes the same room, so the panels sit level
    level = charts.sweep_figure([1, 2, 4], [10, 20, 30], [1.0, 2.0, 3.0], current_x=2,
                                current_capacity=20, current_concurrency=2.0, x_title="GiB",
                                context=4096, legend_lines=4)
    assert level.layout.margin.t == fig.layout.margin.t
    # across the page (nothing beside it) its four entries wrap two a line: the band, a
    # line's 30 px and 20 more, where an entry a line under the band took 4 x 19 + 24 px
    wide = charts.sweep_figure([1, 2, 4], [10, 20, 30], [1.0, 2.0, 3.0], current_x=2,
                               current_capacity=20, current_concurrency=2.0, x_title="GiB",
                               context=4096, target=(4.0, 3.0, "least budget for 3 requests"),
                               wide=True)
    assert (wide.layout.margin.t, fig.layout.margin.t) == (34 + 30 + 20, 34 + 19 * 4 + 24)


def test_compare_bars_keep_category_colours():
    fig = charts.breakdown_bars(
        ["a", "b"], [[("kv_history", 3 * MiB), ("row_padding", MiB)], [("kv_history", MiB),
                                                                       ("unused", 3 * MiB)]])
    kv = _trace(fig, "kv history in use")
    assert list(kv.x) == [3.0, 1.0] and kv.marker.color == COLORS["kv"]
    pad = _trace(fig, "row padding")
    assert list(pad.x) == [1.0, 0.0] and pad.marker.pattern.shape == "/"
    # the legend's words in the hover, the bytes exact and in their unit
    assert pad.hovertemplate == ("%{y}<br>row padding: %{customdata[0]} B (%{customdata[1]})"
                                 "<extra></extra>")
    assert [list(row) for row in pad.customdata] == [["1,048,576", "1.00 MiB"], ["0", "0 B"]]
    assert [list(row) for row in kv.customdata] == [["3,145,728", "3.00 MiB"],
                                                    ["1,048,576", "1.00 MiB"]]
    assert _trace(fig, "unused").marker.color == COLORS["unused"]
    assert fig.layout.barmode == "stack"
    # the key reads left to right as the slices stack, under the title as every chart's
    assert (fig.layout.legend.traceorder, fig.layout.legend.orientation) == ("normal", "h")
    # the three paddings: three colours apart, so a thin slice is told apart without its
    # hatch (the two greys 0x9A918D and 0xBAB0AC, 54 apart, read as one)
    pads = charts.breakdown_bars(["a"], [[("row_padding", 1), ("state_page_padding", 1),
                                          ("padding_layers", 1)]])
    assert pad.marker.color == COLORS["padding"]
    shades = [t.marker.color for t in pads.data]  # row, state page, layers
    assert shades[0] == COLORS["padding"]
    rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in shades]
    assert min(math.dist(a, b) for a, b in itertools.combinations(rgb, 2)) >= 60
    # every category a strategy's breakdown can hold has its colour; state is the state's
    assert set(charts.CATEGORY_KIND) == set(CATEGORIES)
    state = charts.breakdown_bars(["a"], [[("state", 1), ("dead_weight", 1)]])
    assert [t.marker.color for t in state.data] == [COLORS["state"], COLORS["dead_weight"]]
    # a category no bar uses gets no trace, so no legend entry
    used = charts.breakdown_bars(["a", "b"], [[("kv_history", 5), ("state", 0)],
                                              [("kv_history", 2), ("state", 0), ("unused", 1)]])
    assert [t.name for t in used.data] == ["kv history in use", "unused"]
    # the key in the categories' order, whichever bar uses one first: SGLang's idle pool (its
    # own pale, dotted shade of dead weight's brown) before unused, though a flat bar came first
    idle = charts.breakdown_bars(["flat", "sglang"], [
        [("kv_history", 2), ("dead_weight", 1), ("unused", 1)],
        [("kv_history", 2), ("idle_pool", 1), ("unused", 1)]])
    assert [t.name for t in idle.data] == ["kv history in use", "dead weight", "idle pool",
                                              "unused"]
    pool = _trace(idle, "idle pool")
    assert pool.marker.pattern.shape == "." and pool.marker.color != COLORS["dead_weight"]
    bars = charts.capacity_bars(["a", "b"], [818_400, 64_896], [23.48, 1.9], context=32768)
    assert list(bars.data[0].text) == ["818,400", "64,896"]
    assert list(bars.data[1].x) == [23.48, 1.9] and list(bars.data[1].y) == ["a", "b"]
    assert bars.data[0].orientation == bars.data[1].orientation == "h"
    # token axes tick alike on every chart (500k, 1M, 1.5M), not 600k on one and 0.5M on another
    assert bars.layout.xaxis.tickformat == "~s" and bars.layout.xaxis2.tickformat is None
    # room for the labels outside the longest bars
    assert list(bars.layout.xaxis.range) == [0, 818_400 * 1.45]
    assert list(bars.layout.xaxis2.range) == [0, 23.48 * 1.3]
    # a layout with no figures keeps its row, in the table's order, its word where a bar
    # would be, in both panels
    told = charts.capacity_bars(["vLLM v1", "a"], [None, 818_400], [None, 23.48],
                                context=32768, absent={"vLLM v1": "refuses to start"})
    assert list(told.data[0].y) == list(told.data[1].y) == ["vLLM v1", "a"]
    assert list(told.data[0].x) == [0, 818_400] and list(told.data[1].x) == [0, 23.48]
    assert list(told.data[0].text) == ["refuses to start", "818,400"]
    assert list(told.data[1].text) == ["refuses to start", "23.48"]
    assert list(told.data[0].hovertext) == ["refuses to start", "818,400 tokens"]
    assert list(told.data[1].hovertext) == ["refuses to start", "23.48 requests"]
    assert list(told.layout.xaxis.range) == [0, 818_400 * 1.45]  # the word adds no width


def test_one_colour_per_kind_across_charts(analysis):
    strip = charts.layer_strip(QWEN35)
    assert _trace(strip, "full attention").marker.color == COLORS["kv"]
    full = _trace(strip, "full attention")
    # 12 full layers at 3, 7, ..., 47: each drawn one layer wide, not as wide as their spacing.
    assert list(full.x) == list(range(3, 48, 4)) and list(full.width) == [0.9] * 12
    # its hover names the legend's kind beside the group's layer, as Layout's hover does: the
    # group by its kind, as Layout names it (it read the planner's "full_attention")
    assert full.hovertemplate == ("cache layer %{x}: %{customdata[3]} (full attention "
                                  "#%{customdata[0]})<br>%{customdata[1]} B per token, "
                                  "%{customdata[2]} B state<extra></extra>")
    # full layer j (the planner's group layer) of 2,048 B a token, no state
    assert [list(row) for row in full.customdata[:2]] == [[0, "2,048", "0", "full attention"],
                                                         [1, "2,048", "0", "full attention"]]
    state = _trace(strip, "constant state (linear attention, Mamba, short conv)")
    assert state.hovertemplate == full.hovertemplate.replace("(full attention ", "(state ")
    assert state.marker.color == COLORS["ssm"]  # the state group's colour, by its name
    assert list(state.customdata[1]) == [1, "0", "2,146,304",  # 49,152 + 2,097,152
                                         "constant state (linear attention, Mamba, short conv)"]
    assert list(strip.layout.xaxis.range) == [-0.5, 47.5]  # whole layers, not -0.4 .. 0.4
    assert strip.layout.xaxis.dtick is None  # 48 layers: plotly's own steps (0, 5, 10, ...)
    small = charts.layer_strip(CacheProfile(("linear_attention",) * 4, 0, {"conv": 8}))
    assert small.layout.xaxis.dtick == 1  # 4 layers: 0 1 2 3, not half steps read 0 1 1 2
    layout = charts.layout_figure(app_data.layout_segments(analysis))
    bars = charts.breakdown_bars(["x"], [[("kv_history", 1)]])
    assert (_trace(layout, "KV (full attention)").marker.color
            == _trace(bars, "kv history in use").marker.color == COLORS["kv"])
    assert len(set(COLORS[k] for k in ("kv", "kv_sliding", "kv_chunked", "conv", "ssm", "state",
                                       "padding", "dead_weight", "reserved", "unused"))) == 10


# GPU lab: series built by hand (flatkv.gpu_view.Series), GB/s in, traces out.

def _lab_series():
    from flatkv.gpu_view import Series

    return [Series("copy", "copy", (1, 4), (18.0, 20.0), (1568, 6272)),
            Series("gather", "torch", (1, 4), (6.0, 12.0), (1568, 6272)),
            Series("scatter", "triton", (1, 4), (9.0, 14.0), (1568, 6272)),
            Series("state_bytes_copy", "copy", (1, 4), (21.0, 16.0), (1056, 4224)),
            Series("state_copy", "torch", (1, 4), (4.0, 5.0), (1056, 4224))]


def test_bandwidth_bars_mark_each_bar_against_its_own_baseline():
    fig = charts.bandwidth_bars(_lab_series())
    bars = [t for t in fig.data if t.type == "bar"]
    assert [t.name for t in bars] == ["copy (baseline)", "gather (torch)",
                                     "scatter (triton)", "state copy (baseline)",
                                     "state rows (torch)"]
    assert [t.x[0] for t in bars] == [18.0, 6.0, 9.0, 21.0, 4.0]  # a single run: first point
    # the state bytes' copy wears the state-row copy's colour, not the device copy's
    assert [t.marker.color for t in bars] == [COLORS["copy"], COLORS["gather"],
                                             COLORS["scatter"], COLORS["state_copy"],
                                             COLORS["state_copy"]]
    # the label inside each bar as its fill reads: white on the copy's #3B3B3B (11.20:1) and
    # the scatter's #8E5EA2 (4.91:1), black on the gather's #54A24B (white 3.16:1, black
    # 6.65:1) and the state copy's #EE9A8F (white 2.18:1)
    assert [t.insidetextfont.color for t in bars] == ["#FFFFFF", "#000000", "#FFFFFF",
                                                     "#000000", "#000000"]
    assert bars[0].marker.pattern.shape == "/" and bars[1].marker.pattern.shape == ""
    assert bars[3].marker.pattern.shape == "/"
    # each baseline a tick across its own bar and the bars measured against it, no further
    copy, state = (t for t in fig.data if t.type == "scatter")
    assert copy.name == "copy (baseline)" and state.name == (
        "state copy (baseline)")
    assert list(copy.x) == [18.0, 18.0, None] * 2 + [18.0, 18.0]
    assert list(copy.y) == [-0.45, 0.45, None, 0.55, 1.45, None, 1.55, 2.45]  # bars 0, 1, 2
    assert list(state.x) == [21.0, 21.0, None, 21.0, 21.0]
    assert list(state.y) == [2.55, 3.45, None, 3.55, 4.45]  # bars 3 and 4
    assert (copy.line.dash, copy.line.color) == ("dash", COLORS["copy"])
    assert (state.line.dash, state.line.color) == ("dashdot", COLORS["state_copy"])
    assert fig.layout.showlegend  # the two marks keyed by name
    assert list(fig.layout.yaxis.ticktext) == [t.name for t in bars]
    # the hover: its GB/s, and its bytes per call exact (1,568 B = 1.53 KiB) and in their unit
    assert bars[1].hovertemplate == ("gather (torch)<br>%{x:,.2f} GB/s<br>%{customdata[0]} B "
                                     "(%{customdata[1]}) per call<extra></extra>")
    assert [[list(row) for row in t.customdata] for t in bars] == [
        [["1,568", "1.53 KiB"]]] * 3 + [[["1,056", "1.03 KiB"]]] * 2
    assert (copy.hovertemplate, state.hovertemplate) == (
        "copy (baseline): %{x:,.2f} GB/s<extra></extra>",
        "state copy (baseline): %{x:,.2f} GB/s<extra></extra>")
    # a series that names its baseline is marked against that one; host moves against their
    # pinned copies
    from flatkv.gpu_view import Series

    host = charts.bandwidth_bars([
        Series("copy", "copy", (1,), (18.0,), (1568,)),
        Series("pinned_d2h", "copy", (1,), (25.0,), (1568,)),
        Series("d2h", "torch", (1,), (20.0,), (1568,), baseline="pinned_d2h")])
    marks = {t.name: list(t.y) for t in host.data if t.type == "scatter"}
    assert marks == {"copy (baseline)": [-0.45, 0.45],
                     "D2H copy (baseline)": [0.55, 1.45, None, 1.55, 2.45]}


def test_context_figure_draws_a_line_a_layout_and_marks_the_pages_context():
    contexts = [1024, 2048, 4096, 5000]
    fig = charts.context_figure(contexts, [
        ("flat", "FlatKV packed slabs", [8.0, 4.0, 2.0, 1.6384]),
        ("per-component", "FlatKV per component", [8.0, 4.0, 2.0, 1.6384]),
        ("vllm", "vLLM v1", [652 / 653, 0, None, None]),
    ], context=5000)
    flat, vllm = _trace(fig, "FlatKV packed slabs"), _trace(fig, "vLLM v1")
    assert list(flat.x) == contexts and list(flat.y) == [8.0, 4.0, 2.0, 1.64]
    # drawn as shown elsewhere (0.998 -> 0.99); a zero, which a log axis cannot draw, and no
    # figure both break the line
    assert list(vllm.y) == [0.99, None, None, None]
    # FlatKV's two planners share a colour, per component dotted over packed slabs
    per = _trace(fig, "FlatKV per component")
    assert per.line.color == flat.line.color == COLORS["kv"] and per.line.dash == "dot"
    assert vllm.line.color == COLORS["conv"]
    # the page's context marked on each line that has a figure there
    marks = _trace(fig, "at 5,000 tokens")
    assert list(marks.x) == [5000, 5000] and list(marks.y) == [1.64, 1.64]
    assert list(marks.customdata) == ["FlatKV packed slabs", "FlatKV per component"]
    one = _trace(fig, "1 request")
    assert (list(one.x), list(one.y), one.line.dash) == ([1024, 5000], [1, 1], "dash")
    # log both ways: the powers of two ticked on x, and the page's context in full in place
    # of the 4k beside it; a decade a label on y, from the one under 0.99 to the one over 8,
    # padded by 0.05 of a decade so a point on one stays in view
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    # (every tick in full: 5,000 is no whole number of k, and one axis writes one way)
    assert list(fig.layout.xaxis.ticktext) == ["1,024", "2,048", "5,000"]
    # a sweep over 1k to 8M (Llama 4 Scout's 10M context): every other power from the top,
    # the first point's too, and the context in place of the 8M beside it
    scout = charts.context_figure([1 << k for k in range(10, 24)] + [10_485_760],
                                  [("flat", "FlatKV packed slabs", [1.0] * 15)],
                                  context=10_485_760)
    assert list(scout.layout.xaxis.ticktext) == ["1K", "2K", "8K", "32K", "128K", "512K", "2M",
                                                 "10M"]
    # Llama 4 Scout's 10,485,760 tokens short enough to fit at the axis' end; DeepSeek-V3.2's
    # 163,840 = 160 x 1,024 in K as 64K is; 128,000 (= 125 x 1,024) and 1,536 in full (no
    # "125K" that reads as 125,000)
    assert [charts._power_text(n) for n in (10_485_760, 163_840, 128_000, 1_536, 512)] == [
        "10M", "160K", "128,000", "1,536", "512"]
    # one way of writing an axis: DeepSeek-V3.2's sweep to 163,840 read "64K" beside
    # "163,840"; now all in K (1,024, as the app reads K). A context of 100,000 puts every
    # tick in full, as many as clear each other in 260 px (7 px a character, 8 between):
    # Llama 4 Scout's eight ran together
    def ticks(contexts, context):
        return list(charts.context_figure(contexts, [("flat", "FlatKV packed slabs",
                                                      [1.0] * len(contexts))],
                                          context=context).layout.xaxis.ticktext)

    assert ticks([1 << k for k in range(10, 18)] + [163_840], 163_840) == [
        "1K", "2K", "4K", "8K", "16K", "32K", "64K", "160K"]
    scout_100k = sorted([1 << k for k in range(10, 24)] + [100_000, 10_485_760])
    # 1,024 to 10,485,760 is 4.01 decades, + 0.16 of padding: 62.4 px a decade; 100,000 and
    # 1,048,576 are 1.02 decades (63.6 px) apart, under the (7 + 9) x 3.5 + 8 = 64 px they need
    assert ticks(scout_100k, 100_000) == ["1,024", "8,192", "100,000", "8,388,608"]
    assert ticks(sorted([1 << k for k in range(10, 19)] + [100_000]), 100_000) == [
        "1,024", "4,096", "16,384", "100,000"]
    assert fig.layout.yaxis.dtick == 1 and list(fig.layout.yaxis.range) == [-1.05, 1.05]
    assert fig.layout.yaxis.tickformat == ","  # 1,000,000 requests, not an SI 1M
    # each computed point marked, the lines only join them
    assert flat.mode == vllm.mode == "lines+markers"
    assert (flat.marker.symbol, per.marker.symbol, vllm.marker.symbol) == (
        "circle", "circle-open", "square")
    assert flat.hovertemplate == ("FlatKV packed slabs<br>%{x:,} tokens<br>%{y:,.2f} requests"
                                  "<extra></extra>")
    # every layout has a style of its own, and two-level pages are dashed over vLLM's line
    from flatkv.strategies import STRATEGIES
    assert set(charts.LAYOUT_LINES) == set(STRATEGIES)
    assert charts.LAYOUT_LINES["lcm"]["line"]["dash"] == "dash"
    # no layout near one request: no dashed line to stretch the axis down to it
    many = charts.context_figure([1024, 2048], [("vllm", "vLLM v1", [832.8, 594.86])],
                                 context=2048)
    assert [t.name for t in many.data] == ["vLLM v1", "at 2,048 tokens"]
    assert list(many.layout.yaxis.range) == [1.95, 3.05]  # 100 to 1,000, padded


def test_the_context_charts_legend_sits_beside_its_plot():
    # Compare's context chart: eight entries, the widest "FlatKV per component" (160 px), two
    # a line: four lines at 1000 px, two at 1,440 px (where the four lines' room left 60 px
    # blank). Its legend is beside the plot, an entry a line, as tall at every width: no line
    # under the title
    context = charts.context_figure(
        [1024, 2048], [(k, title, [900.0, 9.0]) for k, title in (
            ("flat", "FlatKV packed slabs"), ("per-component", "FlatKV per component"),
            ("vllm", "vLLM v1"), ("sglang", "SGLang"), ("aliased", "slab aliasing"),
            ("lcm", "two-level pages"))], context=2048, title="Concurrency over context length")
    assert len(context.data) == 8  # the six, one request and the context's marks
    legend = context.layout.legend
    assert (legend.orientation, legend.x, legend.xanchor, legend.y, legend.yanchor) == (
        "v", 1.02, "left", 1, "top")
    # the mode bar's band, a title line and its gaps, less the legend line a top legend has
    assert context.layout.margin.t == 34 + 50 + 18 - 20


def _legend_top_px(fig) -> float:
    """Where a hanging legend's top sits, in px from the figure's top."""
    legend = fig.layout.legend
    assert (legend.yref, legend.yanchor, legend.orientation) == ("container", "top", "h")
    return (1 - legend.y) * fig.layout.height


def test_wrapping_legends_hang_under_the_title_with_no_room_kept_for_their_lines():
    """Compare's "Where the budget goes" (seven categories) and the GPU lab's sweep and bars
    kept room for the lines their key wraps to at 1000 px (four and three): at 1,400 px, where
    the key takes one line, that room was a blank band between title and key (81 px over
    Compare's bars in Chromium, title bottom at 50 px, key at 131). The key now hangs from
    under the title (its top at 70 px, 20 px under a one-line title's bottom: the band, 50 px
    of gaps and 18 of title, less a 29 px key line and its 3 px gap) in the figure's own
    coordinates, and Plotly moves the plot down by the lines it takes at the width drawn
    (measured: the plot's top at 109 px at 1,400 px, where it was 162; at 166 px at 1000 px,
    the key's three lines from 70 to 156)."""
    from flatkv.gpu_view import Series

    cats = ["kv_history", "state", "row_padding", "state_page_padding", "dead_weight",
            "idle_pool", "unused"]
    fig = charts.breakdown_bars(["a"], [[(c, 1) for c in cats]], title="Where the budget goes")
    assert [t.name for t in fig.data] == ["kv history in use", "state in use", *(
        c.replace("_", " ") for c in cats[2:])]
    two = charts.breakdown_bars(["a"], [[("kv_history", 1), ("unused", 1)]], title="t")
    # no line kept for the key past its first: seven categories or two, the same top margin
    assert fig.layout.margin.t == two.layout.margin.t == 34 + 50 + 18
    # one bar: 260 px asked for, and the mode bar's band on top
    assert fig.layout.height == 260 + 34
    assert _legend_top_px(fig) == pytest.approx(34 + 50 + 18 - 29 - 3) == 70
    assert _legend_top_px(fig) > 34 + 18  # under the title's line, never over it
    # untitled: the key right under the mode bar's band, not in it (64 - 32 would be 32)
    bare = charts.breakdown_bars(["a"], [[("kv_history", 1)]])
    assert (bare.layout.margin.t, _legend_top_px(bare)) == (34 + 30, pytest.approx(34))
    # a sweep of six figures under a two-line title: its key under the second line
    names = ("copy", "copy"), ("gather", "torch"), ("scatter", "torch"), (
        "state_copy", "torch"), ("d2h", "torch"), ("h2d", "torch")
    series = [Series(op, impl, (1, 4), (5.0, 8.0), (1568, 6272)) for op, impl in names]
    sweep = charts.bandwidth_sweep(series, x="pages_per_call", title=(
        "Bandwidth vs pages per call, 201.75 MiB per call across the whole sweep of pages"))
    assert sweep.layout.title.text.count("<br>") == 1
    assert sweep.layout.margin.t == 34 + 50 + 2 * 18
    assert sweep.layout.height == 420 + 34
    assert _legend_top_px(sweep) == pytest.approx(34 + 50 + 2 * 18 - 32) == 88
    bars = charts.bandwidth_bars(_lab_series(), title="Bandwidth")
    assert (bars.layout.margin.t, _legend_top_px(bars)) == (34 + 50 + 18, pytest.approx(70))
    # Budget's side-by-side sweeps hang theirs too, but keep their room: their plots must sit
    # level. Untitled: the key under the band, four entries of 19 px and 24 of box and gap
    level = charts.sweep_figure([1, 2], [1, 2], [1.0, 2.0], current_x=1, current_capacity=1,
                                current_concurrency=1.0, x_title="x", context=16,
                                legend_lines=4)
    legend = level.layout.legend
    assert (legend.yref, legend.yanchor, legend.orientation) == ("container", "top", "v")
    assert (1 - legend.y) * level.layout.height == pytest.approx(34)
    assert level.layout.margin.t == 34 + 19 * 4 + 24


def test_the_model_and_layout_pages_keys_hang_under_their_titles(analysis):
    """A model by hand of state, sliding and full layers, at 1000 px: the Model page's strip
    key ("constant state (linear attention, Mamba, short conv)", "sliding attention", "full
    attention") and Layout's vLLM blocks key (two KV kinds, conv, ssm and padding) wrap to
    three lines, which grew up over "Cache layers in model order" and "One row per vLLM group:
    ..." (seen in Chromium) while a line was all the room kept. Those keys, and the page map's
    (a group a key, each with its count), hang from under the title as Compare's do: the top
    of each under a one-line title at 34 + 50 + 18 - 29 - 3 = 70 px, the margin the title's
    alone (no line kept for the key), and Plotly moves the plot down by the lines it takes."""
    mixed = CacheProfile((("linear_attention",) * 2 + ("sliding_attention", "full_attention"))
                         * 6, 2048, {"conv": 49152, "ssm": 2097152}, sliding_window=4096)
    strip = charts.layer_strip(mixed, title="Cache layers in model order")
    assert [t.name for t in strip.data] == [
        "constant state (linear attention, Mamba, short conv)", "sliding attention",
        "full attention"]
    rows = charts.layout_figure(app_data.layout_segments(analysis), title="t")
    pages = charts.page_map_figure(app_data.PageMap(2, (None, "full_attention"), {
        "full_attention": 1}, True, None), title="t")
    for fig in (strip, rows, pages):
        assert fig.layout.margin.t == 34 + 50 + 18
        assert _legend_top_px(fig) == pytest.approx(70)
    # the strip's key takes its lines from the plot: a line (20 px) a kind past the first is
    # added to its 190 px, so three wrapped lines leave its cells the height one line does
    one = charts.layer_strip(CacheProfile(("full_attention",) * 4, 2048, {}))
    assert len(one.data) == 1 and one.layout.height == 190 + 34
    assert strip.layout.height == 190 + 2 * 20 + 34


def test_bandwidth_sweep_over_pages_and_page_bytes():
    fig = charts.bandwidth_sweep(_lab_series(), x="pages_per_call")
    copy = _trace(fig, "copy (baseline)")
    assert list(copy.x) == [1, 4] and list(copy.y) == [18.0, 20.0]
    assert copy.line.dash == "dash" and copy.line.color == COLORS["copy"]
    # the two baselines cross (18 < 21, 20 > 16): told apart by dash, colour, marker and name
    state = _trace(fig, "state copy (baseline)")
    assert list(state.y) == [21.0, 16.0]
    assert (state.line.dash, state.line.color) == ("dashdot", COLORS["state_copy"])
    assert copy.marker.symbol == state.marker.symbol == "square-open"
    assert copy.marker.color != state.marker.color
    gather = _trace(fig, "gather (torch)")
    assert gather.line.dash == "solid" and gather.line.color == COLORS["gather"]
    assert _trace(fig, "scatter (triton)").marker.symbol == "diamond"
    # the hover counts pages as said: one page a call is "1 page per call", not "1 pages"
    # and the bytes a call: 1,568 B = 1.53 KiB, 4 x 1,568 = 6,272 B = 6.125 KiB (half up: 6.13)
    assert [list(row) for row in gather.customdata] == [
        ["1 page per call", "1,568", "1.53 KiB"], ["4 pages per call", "6,272", "6.13 KiB"]]
    assert gather.hovertemplate == ("gather (torch)<br>%{y:,.2f} GB/s<br>%{customdata[0]}<br>"
                                    "%{customdata[1]} B (%{customdata[2]}) per call"
                                    "<extra></extra>")
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.title.text == "pages per call"
    # ticks only at the swept values (a log axis labels 1.5, 2.5 ... pages otherwise)
    assert list(fig.layout.xaxis.tickvals) == [1, 4] and list(fig.layout.xaxis.ticktext) == [
        "1", "4"]
    from flatkv.gpu_view import Series

    by_bytes = charts.bandwidth_sweep([Series("gather", "torch", (MiB, 4 * MiB), (5.0, 7.0),
                                              (MiB, 4 * MiB))], x="page_bytes")
    assert list(by_bytes.data[0].x) == [1.0, 4.0]
    assert by_bytes.layout.xaxis.title.text == "page bytes"  # the ticks carry their units
    assert list(by_bytes.layout.xaxis.ticktext) == ["1.00 MiB", "4.00 MiB"]  # each in its unit
    assert by_bytes.data[0].customdata[1][0] == "page 4,194,304 B"
    # a run over both pool layouts: page-major movers dotted, the shared baseline dashed
    both = charts.bandwidth_sweep([
        Series("copy", "copy", (1, 4), (18.0, 20.0), (1568, 6272)),
        Series("gather", "torch", (1, 4), (6.0, 12.0), (1568, 6272), "slot-major", True),
        Series("gather", "torch", (1, 4), (11.0, 15.0), (1568, 6272), "page-major", True)],
        x="pages_per_call")
    assert [(t.name, t.line.dash) for t in both.data] == [
        ("copy (baseline)", "dash"), ("gather (torch, slot-major)", "solid"),
        ("gather (torch, page-major)", "dot")]


def test_each_page_move_has_its_own_colour():
    moves = ["copy", "gather", "scatter", "state_copy", "d2h", "h2d"]
    assert len({COLORS[m] for m in moves}) == len(moves)
    assert COLORS["state_copy"] == COLORS["state"]  # it moves state rows


def test_inflation_figure_draws_each_row_with_its_size():
    from flatkv.app_data import RowBar

    bars = [RowBar("KV row at the requested P = 16", 32_768, "kv"),
            RowBar("state row (the same at any P)", 1_097_728, "ssm"),
            RowBar("KV row at P = 544", 1_114_112, "kv")]
    fig = charts.inflation_figure(bars)
    (bar,) = fig.data
    assert list(bar.x) == [32_768 / 2**20, 1_097_728 / 2**20, 1_114_112 / 2**20]  # MiB
    assert list(bar.text) == ["32.00 KiB", "1.05 MiB", "1.06 MiB"]
    assert list(bar.customdata) == ["32,768", "1,097,728", "1,114,112"]
    assert list(bar.marker.color) == [COLORS["kv"], COLORS["ssm"], COLORS["kv"]]
    assert fig.layout.xaxis.title.text == "bytes (MiB)"
    # Nemotron-H-8B at P 528: the state row 2,158,592 B (2.0586 MiB) and the KV row that
    # covers it, 4,096 B x 528 = 2,162,688 B (2.0625 MiB), both round to "2.06 MiB": every bar
    # then reads in exact bytes, so the covering one reads larger; the bars' lengths stay
    assert 4096 * 528 == 2_162_688
    close = charts.inflation_figure([RowBar("KV row at the requested P = 16", 65_536, "kv"),
                                     RowBar("state row (the same at any P)", 2_158_592, "ssm"),
                                     RowBar("KV row at P = 528", 2_162_688, "kv")])
    (bar,) = close.data
    assert list(bar.text) == ["65,536 B", "2,158,592 B", "2,162,688 B"]
    assert list(bar.x) == [65_536 / 2**20, 2_158_592 / 2**20, 2_162_688 / 2**20]
    assert close.layout.xaxis.title.text == "bytes (MiB)"


def test_a_long_title_wraps_and_is_padded_down_into_view():
    title = ("A state row does not fit a page of the requested P: P grows until the KV row "
             "covers it")
    fig = charts.inflation_figure([], title=title)
    # 70 characters a line (a full-width chart): two lines, the second pushed 10 px down
    # (Plotly sets an n-line title (n - 1) half lines too high and cuts its first line off)
    # under the mode bar's 34 px band, with room above the plot: 34 + 50 + 18 a line
    assert fig.layout.title.text == ("A state row does not fit a page of the requested P: P "
                                     "grows until the<br>KV row covers it")
    assert (fig.layout.title.pad.t, fig.layout.margin.t) == (34 + 10, 34 + 50 + 2 * 18)
    one_line = charts.inflation_figure([], title="Short")
    assert (one_line.layout.title.pad.t, one_line.layout.margin.t) == (34, 34 + 50 + 18)
    # the band comes on top of the height asked for (200 + 20 a title line): the plot keeps it
    assert (fig.layout.height, one_line.layout.height) == (200 + 40 + 34, 200 + 20 + 34)


def test_every_title_and_heading_starts_under_the_mode_bar(analysis):
    """Plotly's mode bar (and Streamlit's fullscreen button), shown on hover at a chart's top
    right, covered titles at 1000 px: Budget's "Over the block size" in a half-width column,
    Compare's panel heading "concurrency at 262,144 tokens" (at 1440 px the camera touched
    it). Every title now starts under a band of 34 px kept for the bar, whatever its width,
    so it may use the chart's whole width."""
    assert charts.MODEBAR_BAND_PX == 34
    for name, fig in _every_chart(analysis).items():
        title = fig.layout.title
        if title.text:
            lines = title.text.count("<br>") + 1
            assert (title.y, title.yref, title.yanchor) == (1, "container", "top"), name
            # the pad puts its first line's top at the band's end, under the bar
            assert title.pad.t == 34 + 10 * (lines - 1), name
            assert fig.layout.margin.t >= 34 + 50 + 18 * lines, name
        else:
            assert fig.layout.margin.t >= 34, name
    # untitled with a legend, a line of it under the band; Layout's bytes chart, with no
    # legend, the line of its columns' headings (13 px) there, its plot 410 px as before
    assert charts.breakdown_bars(["a"], [[("kv_history", 1)]]).layout.margin.t == 34 + 30
    icicle = charts.bytes_icicle(app_data.bytes_tree(analysis))
    assert (icicle.layout.showlegend, icicle.layout.margin.t) == (False, 34 + 30)
    assert [(a.y, a.yanchor) for a in icicle.layout.annotations] == [(1, "bottom")] * 3
    assert icicle.layout.height - 34 - 30 - icicle.layout.margin.b == 410
    # Compare's panel headings, two lines of 16 px (42 px) standing on the plot, start under
    # the band: the plot's top at 34 + 30 + 16 = 80 px, the headings' at 38
    bars = charts.capacity_bars(["a"], [10], [1.0], context=262_144)
    assert [a.text for a in bars.layout.annotations] == ["capacity",
                                                         "concurrency<br>at 262,144 tokens"]
    assert bars.layout.margin.t == 34 + 30 + 16 and bars.layout.margin.t - 42 > 34
    assert bars.layout.height == 260 + 34 + 16  # the plot keeps its 260 px


def test_full_width_titles_use_the_width_and_half_width_ones_stay_in_theirs(analysis):
    """Titles wrapped at 49 characters (a width kept clear of the mode bar) broke Layout's
    full-width titles at about 400 px with a blank band beside them. With the bar above the
    title, a full-width chart (506 px at its narrowest, at 1000 px) holds 70 characters a line
    at 7 px a character, 10 px short of its edge; a half-width one (Budget's sweeps, 262 px)
    holds 36."""
    assert (charts.TITLE_WIDTH, charts.HALF_TITLE_WIDTH) == (70, 36)
    assert 70 * 7 + 10 <= 506 < 71 * 7 + 10 and 36 * 7 + 10 <= 262 < 37 * 7 + 10
    vllm = "One row per vLLM group: a block id's bytes when it owns it"  # 58 characters
    fig = charts.layout_figure(app_data.layout_segments(analysis), title=vllm)
    assert fig.layout.title.text == vllm  # one line now, where it took two
    assert charts.bytes_icicle(app_data.bytes_tree(analysis), title=vllm).layout.title.text == vllm
    # between words, not inside "slot-major"
    assert charts.title_lines("Bandwidth, 2 pages of 128.00 KiB per call, slot-major vs "
                              "page-major", 36) == ["Bandwidth, 2 pages of 128.00 KiB per",
                                                    "call, slot-major vs page-major"]
    # Budget's sweeps: half-width beside each other, full-width (``wide``) alone
    long = "Over the budget, up to the least budget for 23 requests"  # 55 characters

    def sweep(wide: bool):
        return charts.sweep_figure([1, 2], [1, 2], [1.0, 2.0], current_x=1, current_capacity=1,
                                   current_concurrency=1.0, x_title="x", context=16,
                                   title=long, wide=wide)
    assert sweep(False).layout.title.text == ("Over the budget, up to the least<br>budget for "
                                              "23 requests")
    assert sweep(True).layout.title.text == long


def test_the_layer_strip_colours_each_layer_by_its_label_not_its_name():
    # the strip keys each cell by its layer label (the profile's layer_types), so no map turns
    # Layout's names ("full attention (MLA)", "state") back into kinds (GROUP_NAME_KIND did)
    assert not hasattr(charts, "GROUP_NAME_KIND")
    spec = preset_spec("DeepSeek-V3")
    strip = charts.layer_strip(spec.profile(), spec.layer_names)
    (mla,) = strip.data
    assert mla.marker.color == COLORS["kv"] and list(mla.x) == list(range(61))
    assert "(full attention (MLA) #%{customdata[0]})" in mla.hovertemplate
    # Jamba's 28 Mamba layers and 4 full ones (one in 8: 4, 12, 20, 28): two traces, each
    # coloured by its label's GROUP_KIND entry
    jamba = charts.layer_strip(preset_spec("Jamba-1.5-Mini").profile())
    by_colour = {t.marker.color: list(t.x) for t in jamba.data}
    assert by_colour == {COLORS["ssm"]: [i for i in range(32) if i % 8 != 4],
                         COLORS["kv"]: [4, 12, 20, 28]}


def test_a_one_kind_chart_keeps_its_key(analysis):
    # DeepSeek-V3: 61 MLA layers, one trace; Plotly would hide the legend of a lone trace
    spec = preset_spec("DeepSeek-V3")
    strip = charts.layer_strip(spec.profile(), spec.layer_names, title="layers")
    assert len(strip.data) == 1 and strip.layout.showlegend is True
    # a chart that hides its legend on purpose (the capacity bars name each bar) keeps it hidden
    bars = charts.capacity_bars(["a"], [10], [1.0], context=16)
    assert bars.layout.showlegend is False
    # a lone unnamed trace (the bars name their rows on the axis) gets no "trace 0" key
    why = charts.inflation_figure(app_data.inflation_bars(analysis))
    assert len(why.data) == 1 and not why.data[0].name and why.layout.showlegend is False


def _every_chart(analysis) -> dict:
    """One figure of each builder, from the data the app gives it."""
    series = _lab_series()
    return {
        "inflation": charts.inflation_figure(app_data.inflation_bars(analysis), title="t"),
        "layout": charts.layout_figure(app_data.layout_segments(analysis), title="t"),
        "icicle": charts.bytes_icicle(app_data.bytes_tree(analysis), title="t"),
        "page map": charts.page_map_figure(app_data.PageMap(2, (None, "full_attention"), {
            "full_attention": 1}, True, None), title="t"),
        "sweep": charts.sweep_figure([1, 2], [1, 2], [1.0, 2.0], current_x=1,
                                     current_capacity=1, current_concurrency=1.0, x_title="x",
                                     context=16),
        "capacity": charts.capacity_bars(["a"], [10], [1.0], context=16),
        "breakdown": charts.breakdown_bars(["a"], [[("kv_history", 1)]]),
        "strip": charts.layer_strip(QWEN35),
        "bandwidth": charts.bandwidth_bars(series),
        "bandwidth sweep": charts.bandwidth_sweep(series, x="pages_per_call"),
    }


def test_every_chart_wears_plotly_white_cut_to_what_it_draws(analysis):
    white = pio.templates["plotly_white"].to_plotly_json()
    house = charts.HOUSE_TEMPLATE
    # what the cut template keeps is plotly_white's own styling, unchanged
    assert all(house["layout"][key] == white["layout"][key] for key in house["layout"])
    assert house["layout"]["plot_bgcolor"] == "white" and "polar" not in house["layout"]
    for name, fig in _every_chart(analysis).items():
        assert fig.layout.template == go.layout.Template(house), name
        # each trace type a chart draws keeps plotly_white's styling of it (a new trace type
        # needs its entry in the cut template, or it would draw in plotly's defaults)
        for trace in fig.data:
            assert trace.type in house["data"] or trace.type not in white["data"], (name,
                                                                                    trace.type)


def test_the_capacity_panels_sit_side_by_side_on_one_axis_of_names():
    # built by hand as make_subplots(cols=2, shared_yaxes=True, horizontal_spacing=0.06) would
    bars = charts.capacity_bars(["a", "b"], [818_400, 64_896], [23.48, 1.9], context=32768)
    assert (bars.data[0].xaxis, bars.data[0].yaxis, bars.data[1].xaxis, bars.data[1].yaxis) == (
        "x", "y", "x2", "y2")
    assert list(bars.layout.xaxis.domain) == [0.0, 0.47]
    assert list(bars.layout.xaxis2.domain) == pytest.approx([0.53, 1.0])
    # one column of names, on the left; the right panel follows it, top down as the table
    assert bars.layout.yaxis2.matches == "y" and bars.layout.yaxis2.showticklabels is False
    assert bars.layout.yaxis.autorange == bars.layout.yaxis2.autorange == "reversed"
    headings = [(a.text, a.x) for a in bars.layout.annotations]
    assert headings == [("capacity", 0.235),
                        ("concurrency<br>at 32,768 tokens", pytest.approx(0.765))]
    # each x axis says its unit: the concurrency's figures (23.48, 1.90) count requests, which
    # its heading ("at 32,768 tokens") left unsaid
    assert (bars.layout.xaxis.title.text, bars.layout.xaxis2.title.text) == ("tokens",
                                                                            "requests")
    alone = charts.capacity_bars(["a"], None, [1.0], context=16)  # a state-only model
    assert [(a.text, a.x) for a in alone.layout.annotations] == [("concurrency<br>at 16 tokens",
                                                                   0.5)]
    assert alone.layout.xaxis.title.text == "requests"
    assert list(alone.layout.xaxis.domain) == [0.0, 1.0] and "xaxis2" not in alone.layout


def test_the_sweep_panels_share_one_x_axis():
    fig = charts.sweep_figure([1, 2, 4], [10, 20, 30], [1.0, 2.0, 3.0], current_x=2,
                              current_capacity=20, current_concurrency=2.0, x_title="block",
                              context=4096, log_x=True)
    # tokens on top, requests below; the bottom axis carries the ticks and the top follows it
    assert list(fig.layout.yaxis.domain) == [0.56, 1.0]
    assert list(fig.layout.yaxis2.domain) == [0.0, 0.44]
    assert fig.layout.xaxis.matches == "x2" and fig.layout.xaxis.showticklabels is False
    assert fig.layout.xaxis2.title.text == "block" and fig.layout.xaxis.title.text is None
    assert fig.layout.xaxis.type == fig.layout.xaxis2.type == "log"
    assert [(t.xaxis, t.yaxis) for t in fig.data] == [("x", "y")] * 2 + [("x2", "y2")] * 2


def test_icicle_hover_tells_nearly_all_of_the_budget_from_all_of_it():
    # Llama-3.1-8B at 80 GB: a block is 32 layers x 16 tokens x 4,096 B = 2,097,152 B;
    # 80e9 // 2,097,152 = 38,146 blocks, 79,997,960,192 B of KV rows (99.99745% of the budget),
    # and 2,039,808 B unused (0.00254%), which plotly's percentRoot:.2% read as 100.00% and 0.00%
    llama = preset_spec("Llama-3.1-8B").profile()
    a = analyze(llama.components(), block_size=16, budget_bytes=80 * 10**9)
    assert (a.totals.num_blocks, a.totals.unused_bytes) == (38_146, 2_039_808)
    ic = charts.bytes_icicle(app_data.bytes_tree(a)).data[0]
    hover = dict(zip(ic.ids, (c[2] for c in ic.customdata)))
    assert (hover["full_attention"], hover["unused"]) == ("99.997%", "0.003%")
    assert hover["full_attention/kv/0"] == "3.12%"  # 1 of 32 layers: 3.1249%
    assert "%{customdata[2]} of the budget" in ic.hovertemplate
    assert "percentRoot" not in ic.hovertemplate


def test_side_by_side_sweeps_key_an_entry_a_line_and_tick_requests_over_their_top():
    """Budget's two sweeps at 1000 px: "Over the budget" keyed its four entries a line each
    (they wrap), "Over the block size" its three on one line, so the two read unlike; and the
    requests axis, left to Plotly, ticked 0 5 10 under a line at 11.23 requests."""
    by_budget = charts.sweep_figure(
        [7.0, 71.68], [80_000, 790_976], [1.1, 11.23], current_x=71.68,
        current_capacity=790_976, current_concurrency=11.23, x_title="budget",
        context=262_144, target=(72.47, 12.0, "least budget for 12 requests"))
    by_size = charts.sweep_figure(
        [1, 16, 4096], [790_976] * 3, [11.23, 11.23, 10.5], current_x=16,
        current_capacity=790_976, current_concurrency=11.23, x_title="block",
        context=262_144, log_x=True, legend_lines=4)
    assert by_budget.layout.legend.orientation == by_size.layout.legend.orientation == "v"
    # the same room above both plots: the key under the band (untitled), 4 entries of 19 px,
    # 24 px of box and gap
    assert by_budget.layout.margin.t == by_size.layout.margin.t == 34 + 19 * 4 + 24
    # ticks a round step apart from 0 to over the top figure: 12 requests under 15
    assert list(by_budget.layout.yaxis2.ticktext) == ["0", "5", "10", "15"]
    assert list(by_size.layout.yaxis2.ticktext) == ["0", "5", "10", "15"]
    assert list(by_size.layout.yaxis2.range) == [0, 15 * 1.03]
    # hundreds of requests: 0 to 800 by 200 over 727.5; under one request in tenths
    assert charts._covering_axis(727.5)["ticktext"] == ["0", "200", "400", "600", "800"]
    assert charts._covering_axis(0.998)["ticktext"] == ["0", "0.5", "1.0"]
    # across the page (SGLang's alone) the legend stays horizontal, two entries a line
    wide = charts.sweep_figure([1.0, 2.0], [1, 2], [1.0, 2.0], current_x=2.0,
                               current_capacity=2, current_concurrency=2.0, x_title="budget",
                               context=4096, wide=True)
    assert wide.layout.legend.orientation == "h"


def test_side_by_side_sweeps_hang_their_legends_from_one_line_over_level_plots():
    """Budget's two sweeps at 1000 px (DeepSeek-V3.2, GPU Custom): "Over the budget" keys four
    entries, "Over the block size" three (or two, one panel, where the sweep keeps no
    capacity). Both legends sat on their plots (yanchor bottom), so the left one started a
    line higher than the right one under the same titles. Now both hang from the same line
    under the title, the room of four entries kept above both plots."""
    entries = charts.sweep_legend_lines(True, True)
    assert entries == 4  # capacity, current, concurrency, least budget
    by_budget = charts.sweep_figure(
        [7.0, 71.68], [80_000, 919_248], [1.1, 5.61], current_x=67.06,
        current_capacity=919_248, current_concurrency=5.61, x_title="budget",
        context=163_840, title="Over the budget",
        target=(71.71, 6.0, "least budget for 6 requests"))
    by_size = [charts.sweep_figure(
        [1, 16, 4096], capacity, [5.61, 5.61, 5.5], current_x=16,
        current_capacity=919_248, current_concurrency=5.61, x_title="block",
        context=163_840, log_x=True, title="Over the block size", legend_lines=entries)
        for capacity in ([919_248] * 3, None)]
    # the band, a one-line title (50 + 18), 3 more legend lines than one
    title_top = charts.MODEBAR_BAND_PX + 50 + 18
    for fig in (by_budget, *by_size):
        legend = fig.layout.legend
        assert (legend.orientation, legend.yref, legend.yanchor) == ("v", "container", "top")
        # its top in px from the figure's top, whatever the figure's height (500 or 380 + band):
        # 70, where a one-line legend's box starts over a plot under a one-line title
        legend_top = title_top - charts.LEGEND_LINE_BOX_PX - charts.LEGEND_GAP_PX
        assert round((1 - legend.y) * fig.layout.height) == legend_top == 70
        # the plot under four entries 19 px apart and 24 px of box and gap (Chromium pushed it
        # to 168.94 px where 162 was kept: 20 px a line after a line's 32)
        assert fig.layout.margin.t == legend_top + 19 * entries + 24 == 170
    assert by_size[0].layout.height == 534 and by_size[1].layout.height == 414
