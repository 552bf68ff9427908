"""The Layout page through streamlit's AppTest: P, blocks, padding, the page map and workload,
and the plan set beside the engines'. Expected figures are derived by hand (SPEC.md section 1);
helpers in tests/app_helpers.py."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest
from app_helpers import (
    QWEN35_LINK,
    ROOT,
    STATE_ONLY_LINK,
    assert_clean,
    caption_starting,
    metrics,
    open_app,
    shown,
    tables,
    unescaped,
)

from flatkv import app_data, charts
from flatkv.units import sentence_case

# the state group as the pages name it (app_model.counted_kind)
# the state group as Layout names it (``app_model.group_name``): short, inside metric labels
STATE_KIND = "state"


def test_layout_shows_the_worked_example_from_a_link():
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    assert_clean(at)
    m = metrics(at)
    assert m["P (tokens per page)"] == "1,056"  # ceil(2,146,304 / 2,048) = 1,048 -> x16
    assert m["Block bytes"] == "98.44 MiB"  # 103,219,200 B
    assert m["Blocks"] == "775"  # 80e9 // 103,219,200
    # the capacity of Budget and Compare: one page id holds a request's state pages (mode
    # none), the other 774 hold history: 774 x 1,056; the token slots under the blocks, 775 x
    # 1,056 (under the capacity, with a window's note, the chip took two cells and left Blocks
    # alone on a line beside a hole)
    assert m["Capacity (tokens)"] == "817,344"
    deltas = {mm.label: mm.delta for mm in at.metric}
    assert deltas["Blocks"] == "token slots 818,400 (blocks x P)"
    assert not deltas["Capacity (tokens)"]
    help_texts = {mm.label: mm.help for mm in at.metric}
    assert help_texts["Block bytes"] == "103,219,200 B"
    # the budget (80e9 B = 74.5058 GiB) and what its whole blocks leave: 80e9 - 775 x
    # 103,219,200 = 5,120,000 B = 4.8828 MiB
    assert 80 * 10**9 - 775 * 103_219_200 == 5_120_000
    assert (m["Cache budget per rank"], help_texts["Cache budget per rank"]) == (
        "74.51 GiB", "80,000,000,000 B")  # as the sidebar and Budget name it
    assert (m["Unused"], help_texts["Unused"]) == ("4.88 MiB", "5,120,000 B")
    # by group: 36 state rows of 2,146,304 B and 12 KV rows of 1,056 x 2,048 B; a block one
    # group owns carries the other's rows dead
    groups = at.dataframe[0].value.set_index("group")
    state_rows, kv_rows = 36 * 2_146_304, 12 * 1056 * 2048
    assert (state_rows, kv_rows, state_rows + kv_rows) == (77_266_944, 25_952_256, 103_219_200)
    # each group by its kind, as the metric above names it (the cells read "linear_attention"
    # and "full_attention", the planner's ids)
    assert list(groups.index) == ["state", "full attention"]
    assert groups.loc["state"].tolist() == [36, state_rows, kv_rows,
                                            f"{kv_rows / 103_219_200:.2%}"]
    assert groups.loc["full attention"].tolist() == [12, kv_rows, state_rows,
                                                     f"{state_rows / 103_219_200:.2%}"]
    why = " ".join(md.value for md in at.markdown)
    assert "ceil(2,146,304 / 2,048) = 1,048" in why and "P = 1,056" in why
    # at each alignment under 16, P = a x ceil(1,048 / a): 1,048 = 8 x 131 whole at 1 to 8
    assert [a * -(-1048 // a) for a in (1, 2, 4, 8)] == [1048] * 4
    assert "P with finer alignments: 1 → 1,048, 2 → 1,048, 4 → 1,048, 8 → 1,048" in [
        c.value for c in at.caption]
    # and drawn: the KV row at the requested 64 (131,072 B), the state row, the KV row at P
    (inflation,) = [c for c in at.get("plotly_chart") if "KV row at P = 1,056" in c.proto.spec]
    assert "2,146,304" in inflation.proto.spec and "131,072" in inflation.proto.spec
    # its title one line at every width: within the 70 characters a full-width chart's title
    # line holds at its narrowest (charts.TITLE_WIDTH); the 86 of "... does not fit a page of
    # the requested P: P grows until the KV row covers it" wrapped to two even at 1,400 px
    title = json.loads(inflation.proto.spec)["layout"]["title"]["text"]
    assert title == "A state row outgrows a page of the requested P: P grows until it fits"
    assert len(title) == 69 <= charts.TITLE_WIDTH == 70
    assert at.query_params["block"] == "64"  # the view stays in the URL
    # vLLM's blocks beside ours, at the link's block size 64: A = 64, P = 64 x cdiv(2,146,304,
    # 64 x 2,048) = 64 x 17 = 1,088; pages of 1,088 x 2,048 = 2,228,224 B, 12 a block id
    (vllm,) = [unescaped(c.value) for c in at.caption if c.value.startswith("vLLM at these")]
    assert vllm.startswith("vLLM at these settings (Compare's row): P 1,088, pages of "
                           "2,228,224 B in 12 tensors (group_size). A block id is 12 pages, "
                           "26,738,688 B (25.50 MiB, 24,576 B a token), and belongs to one of 4 "
                           "groups")
    (rows,) = [c for c in at.get("plotly_chart") if "One row per vLLM group" in c.proto.spec]
    # its rows by kind and index, 36 GDN layers in 3 state groups of 12 (they read
    # "linear_attention.2"); every word of the chart in the pages' names, none an id
    spec = json.loads(rows.proto.spec)
    assert spec["layout"]["yaxis"]["categoryarray"] == [
        "state 0", "state 1", "state 2", "full attention"]
    assert "2,228,224" in rows.proto.spec and "_attention" not in rows.proto.spec


def test_layout_says_why_vllm_has_no_blocks_to_draw():
    # 10,000,000 tokens of the worked example at P 1,088 need ceil(10,000,000 / 1,088) =
    # 9,192 pages of its full group and a state page in each of its 3 GDN groups: 9,195
    # blocks of 12 layers x 2,228,224 B = 26,738,688 B, 245,862,236,160 B; an 8 GB budget
    # holds 8e9 // 26,738,688 = 299 blocks, less the null block and the 3 state pages: 295
    # full pages, 295 x 1,088 = 320,960 tokens; a request needs (9,195 + 1) blocks of budget.
    # Our plan still draws its rows.
    at = open_app("app_pages/layout.py", {**QWEN35_LINK, "gpu_mem": "8GB", "ctx": "10000000"})
    assert not at.exception
    (info,) = [unescaped(i.value) for i in at.info if i.value.startswith("vLLM has no layout")]
    assert info == (
        "vLLM has no layout here: vLLM refuses to start: one request of 10,000,000 tokens "
        "needs 245,862,236,160 B of KV cache (228.98 GiB: its pages in every group, 12 layers "
        "a page, at P 1,088), more than the 8,000,000,000 B (7.45 GiB) available less the "
        "26,738,688 B block it holds back as its null block (\"To serve at least one request "
        "with the model's max seq len\"); its estimated maximum model length is 320,960: give "
        "a context of at most 320,960 or a budget of at least 245,888,974,848 B")
    assert not [c for c in at.get("plotly_chart") if "One row per vLLM group" in c.proto.spec]


@pytest.mark.parametrize(
    ("widget", "value", "p", "blocks", "capacity"),
    [
        # block 2,048 already covers the state row: 12 x 2,048 x 2,048 + 36 state rows per
        # block = 127,598,592 B; 80e9 // that = 626 blocks of 2,048 tokens, one of them a
        # request's state: 625 x 2,048 tokens of history
        ("w.block_size", 2048, "2,048", "626", "1,280,000"),
        # alignment 64: P = 1,088; block bytes 12 x 2,048 x 1,088 + 36 state rows = 104,005,632
        # (769 blocks, 768 x 1,088 tokens)
        ("w.alignment", 64, "1,088", "769", "835,584"),
    ],
)
def test_paging_widgets_drive_p_and_blocks(widget, value, p, blocks, capacity):
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    at.sidebar.number_input(key=widget).set_value(value).run()
    assert_clean(at)
    m = metrics(at)
    assert (m["P (tokens per page)"], m["Blocks"], m["Capacity (tokens)"]) == (
        p, blocks, capacity)


def test_layout_names_the_dead_weight_of_one_page():
    # Qwen3-Next at TP 1, P 544: a block holds 36 state rows of 49,152 + 1,048,576 B and 12 KV
    # rows of 2,048 x 544 B; a page the full group owns carries the 36 state rows idle
    at = open_app("app_pages/layout.py", {})
    state_rows, kv_rows = 36 * (49_152 + 1_048_576), 12 * 2_048 * 544
    assert metrics(at)["Dead share of a full attention block"] == (
        f"{state_rows / (state_rows + kv_rows):.2%}") == "74.72%"
    # its help says which group it names, and by what: "carry the most" named no measure
    (dead,) = [x for x in at.metric if x.label == "Dead share of a full attention block"]
    assert dead.help.startswith("Share of a block owned by the full attention group that holds "
                                "other groups' rows: the group whose blocks carry the most "
                                "dead weight.")
    # in the Terms' words (page id; vLLM's "block id" only where vLLM's layout is meant)
    (rows,) = [c for c in at.get("plotly_chart") if "flat_slab_0" in c.proto.spec]
    assert json.loads(rows.proto.spec)["layout"]["title"]["text"] == (
        "One row per slot tensor: one page id's bytes")
    assert ("A page id owned by one group still addresses a row in every slot tensor; the "
            "other groups' rows at that id are dead weight.") in [c.value for c in at.caption]


def test_layout_names_the_padding_its_planner_has():
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    # packed, P 1,056: the page row is the widest row, a KV row of 1,056 x 2,048 = 2,162,688 B;
    # each of the 36 state rows (2,146,304 B) pads 16,384 B: 589,824 B of a uniform-page
    # block of 103,219,200 + 589,824 = 103,809,024 B, 0.568% (as app_data's headline)
    assert metrics(at)["Uniform pages pad the block"] == (
        f"{589_824 / 103_809_024:.2%}") == "0.57%"
    # its help: that padded block is larger than the block, 103,219,200 B; where no row pads
    # (gpt-oss, every row a 2,048 x 16 B KV row) it is the block itself, not "larger" as the
    # help said at 0.00%
    helps = {m.label: m.help for m in at.metric}
    assert "a share of that padded block, larger than Block bytes above. Packed" in helps[
        "Uniform pages pad the block"]
    oss = open_app("app_pages/layout.py", {"model": "gpt-oss-120b"})
    assert metrics(oss)["Uniform pages pad the block"] == "0.00%"
    assert ("a share of that padded block, here Block bytes above: every row is the page row's "
            "size. Packed") in {m.label: m.help for m in oss.metric}[
                "Uniform pages pad the block"]
    at = open_app("app_pages/layout.py", {**QWEN35_LINK, "planner": "per-component"})
    assert_clean(at)
    assert metrics(at)["Padding of a block (per component)"] == "0.00%"
    # its rows are components' pages, not slots' rows
    rows = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]
    assert rows["title"]["text"].startswith("One row per component tensor")
    assert rows["xaxis"]["title"]["text"].startswith("offset in the component's page")


def test_layout_explains_its_terms():
    at = open_app("app_pages/layout.py")
    (terms,) = [e for e in at.expander if e.label == "Terms"]
    text = terms.markdown[0].value
    # the words of ARCHITECTURE.md's glossary, each its own term, as the code uses them
    assert re.findall(r"\*\*([^*]+)\*\*", text) == [
        "Group", "vLLM's groups", "padding layers", "Component", "Row", "Slot tensor", "Page id",
        "page", "block id", "Block", "P", "token slot", "state page", "Dummy page", "Padding",
        "Dead weight"]
    # groups by their kinds, as the page names them; the planner's ids only as the JSON and
    # CSV key them (vLLM's groups read "`linear_attention.0`, `.1`", as no page names them)
    assert ("full attention, sliding attention, chunked\n  attention, or state" in text
            and "The plan's JSON and CSV key them by the planner's ids" in text)
    assert "(state 0, state 1, ...)" in text and "linear_attention.0" not in text
    glossary = (ROOT / "ARCHITECTURE.md").read_text()
    for word in ("group", "component", "row", "slot", "page id", "page", "block", "dead weight"):
        assert f"\n| {word} |" in glossary


def test_layout_keeps_the_uniform_pages_view_across_pages_and_in_the_link():
    at = open_app("app_pages/layout.py", QWEN35_LINK)

    def rows_chart():  # the page-row chart (the inflation chart above it has no padding)
        (rows,) = [c for c in at.get("plotly_chart") if "flat_slab_0" in c.proto.spec]
        return rows.proto.spec.replace(" ", "")

    assert '"name":"padding' not in rows_chart()  # packed rows: no padding
    at.toggle(key="w.uniform_rows").set_value(True).run()
    assert_clean(at)
    assert at.query_params["uniform"] == "1"
    at.switch_page("app_pages/compare.py").run()
    at.switch_page("app_pages/layout.py").run()
    assert at.toggle(key="w.uniform_rows").value
    # the rows are drawn padded to the page row: a padding trace is there
    assert '"name":"padding' in rows_chart()
    again = open_app("app_pages/layout.py", dict(at.query_params))
    assert again.toggle(key="w.uniform_rows").value
    # one tensor per component: every row is its component's own, nothing to pad: no toggle,
    # and the chart says what its rows are
    each = open_app("app_pages/layout.py", {**at.query_params, "planner": "per-component"})
    assert_clean(each)
    assert not [t for t in each.toggle if t.key == "w.uniform_rows"]
    (rows,) = [c for c in each.get("plotly_chart") if "component tensor" in c.proto.spec]
    assert '"name":"padding' not in rows.proto.spec.replace(" ", "")


def test_layouts_padding_toggle_says_its_bytes_or_is_not_offered():
    """The toggle drew nothing visible: on models with no padding nothing at all, on
    Nemotron-H-8B a 4,096 B sliver on a 2,162,688 B row. It now says how much it adds, and is
    left out where every row is the page row.

    Nemotron-H-8B (SPEC): KV 4,096 B a token, state row conv 61,440 + ssm 2,097,152 =
    2,158,592 B. P = 16 x cdiv(2,158,592, 16 x 4,096) = 16 x 33 = 528, page row 528 x 4,096 =
    2,162,688 B: each of the 24 Mamba2 rows is padded by 2,162,688 - 2,158,592 = 4,096 B,
    98,304 B (96.00 KiB) a block. The block holds 4 KV rows and 24 state rows, 4 x 2,162,688 +
    24 x 2,158,592 = 60,456,960 B; padded, 28 x 2,162,688 = 60,555,264 B, of which 98,304 B is
    0.16% (0.1623%)."""
    at = open_app("app_pages/layout.py", {"model": "Nemotron-H-8B"})
    assert_clean(at)
    assert [t.key for t in at.toggle] == ["w.uniform_rows"]
    assert metrics(at)["Uniform pages pad the block"] == "0.16%"
    rows = (f"the 2,162,688 B page row at P 528: 24 {STATE_KIND} rows of 2,158,592 B, padded "
            "by 4,096 B each. 98,304 B (96.00 KiB) a block, 0.16% of the padded block of "
            "60,555,264 B; under 1% of a row, a sliver at this scale (hover a row's end for its "
            "bytes).")
    # worded by what the chart draws: unpadded with the toggle off (it said "Padded to" there)
    assert not at.toggle[0].value
    assert not [c for c in at.caption if c.value.startswith("Padded to the")]
    assert caption_starting(at, "Drawn unpadded") == (
        "Drawn unpadded, as packed slabs allocate the rows; the toggle pads them to " + rows)
    at.toggle[0].set_value(True).run()
    assert caption_starting(at, "Padded to the") == "Padded to " + rows
    assert not [c for c in at.caption if c.value.startswith("Drawn unpadded")]
    # Jamba-1.5-Mini: KV 4,096 B a token, state row 311,296 B, P 80 gives a 327,680 B page
    # row: 28 state rows padded by 16,384 B (5.26% of a row, wide enough to see: no pointer),
    # 458,752 B a block; padded, 32 x 327,680 = 10,485,760 B, of which 458,752 is 4.375%
    jamba = open_app("app_pages/layout.py", {"model": "Jamba-1.5-Mini"})
    assert caption_starting(jamba, "Drawn unpadded") == (
        "Drawn unpadded, as packed slabs allocate the rows; the toggle pads them to "
        f"the 327,680 B page row at P 80: 28 {STATE_KIND} rows of 311,296 B, "
        "padded by 16,384 B each. 458,752 B (448.00 KiB) a block, 4.38% of the padded block "
        "of 10,485,760 B.")
    # the same padding as vLLM logs it, a share of the state row's own bytes: 16,384 /
    # 311,296 = 5.26%, beside our 4.38% of the padded block; each says what it is a share of
    assert 458_752 == 28 * 16_384 and 10_485_760 == 32 * 327_680
    assert f"{458_752 / 10_485_760:.2%}" == "4.38%" and f"{16_384 / 311_296:.2%}" == "5.26%"
    (pad,) = [m for m in jamba.metric if m.label == "Uniform pages pad the block"]
    assert (pad.value, pad.proto.delta) == (
        "4.38%", "5.26% of a state row at P 80")
    assert ("State pages (311,296 B) are padded to the page by 5.26% of their size (\"Padding "
            "mamba page size\")") in " ".join(c.value for c in jamba.caption)
    # Llama-3.1-8B: one row kind, full attention's 8 x 128 x 2 x 2 B x 16 = 65,536 B at P 16;
    # gpt-oss-20b: sliding and full rows both 8 x 64 x 2 x 2 B x 16 = 32,768 B. Nothing to pad.
    for model, row in (("Llama-3.1-8B", "65,536"), ("gpt-oss-20b", "32,768")):
        plain = open_app("app_pages/layout.py", {"model": model})
        assert_clean(plain)
        assert not [t for t in plain.toggle if t.key == "w.uniform_rows"], model
        assert caption_starting(plain, "Every row is the page row") == (
            f"Every row is the page row's {row} B at P 16: uniform pages (vLLM's) would pad "
            "nothing here, so there is no padded view to draw."), model


def test_layout_workload_schedules_the_max_batched_tokens():
    # gpt-oss-20b, P 16, 4 requests of 32,768 tokens (SPEC 3.5): full ceil(4 x 32,768 / 16)
    # + 4 + 1 = 8,197; sliding 4 x ceil(127 / 16) + ceil(S / 16) + 4 + 1: 549 at S = 8,192
    at = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "req": "4", "ctx": "32768"})
    assert_clean(at)

    def pages_caption() -> str:
        text = caption_starting(at, "Pages the groups need")
        return text

    assert "sliding attention: 549, full attention: 8,197" in pages_caption()
    at.text_input(key="w.max_batched_tokens").set_value("512").run()
    assert_clean(at)
    assert "sliding attention: 69, full attention: 8,197" in pages_caption()  # 32 + 32 + 5
    assert at.query_params["mbt"] == "512"
    # an attention-only model without sliding layers has no S to set here
    llama = open_app("app_pages/layout.py", {"model": "Llama-3.1-8B"})
    assert "w.max_batched_tokens" not in {w.key for w in llama.text_input}
    # and no state row inflates its P: no inflation chart
    assert not any("KV row at the requested" in c.proto.spec for c in llama.get("plotly_chart"))


def test_layout_takes_the_largest_workload_a_link_can_ask_for():
    # 4,096 requests of 2^40 tokens, the library's own bound (as the CLI's --context): the
    # page lists only the pool's first ids (listing 2^24 tokens' all took 24 GB and killed the
    # server)
    at = open_app("app_pages/layout.py", {"req": "4096", "ctx": str(1 << 40)})
    assert not at.exception
    (warning,) = [shown(w) for w in at.warning
                  if shown(w).startswith("One request of 1,099,511,627,776 tokens does")]
    assert f"full attention: {-(-4096 * (1 << 40) // 544) + 4096 + 1:,}" in warning
    # one past it is the link's notice, not a figure, its value as the link gives it
    at = open_app(None, {"ctx": str((1 << 40) + 1)})
    assert any("ctx='1099511627777' is more than 1,099,511,627,776 tokens: give "
               "1,099,511,627,776 or fewer (2^40: more is taken for a typo)" in shown(w)
               for w in at.warning)
    # typed in the field, the count is grouped as Live requests' is ("is 99,999,999"), not
    # quoted as typed ("is '99999999999999'"); the cap says it is FlatKV's guard, 2^40
    at = open_app("app_pages/layout.py")
    at.text_input(key="w.context").set_value("99999999999999").run()
    at.number_input(key="w.requests").set_value(99_999_999).run()
    assert [shown(e) for e in at.error] == [
        "Live requests is 99,999,999: give a number from 1 to 4,096",
        "Context length (tokens per request) 99,999,999,999,999 is more than "
        "1,099,511,627,776 tokens: give 1,099,511,627,776 or fewer (2^40: more is taken for a "
        "typo)"]
    at.text_input(key="w.context").set_value("0").run()
    assert "Context length (tokens per request) 0 must be positive: give 1 or more tokens" in [
        shown(e) for e in at.error]


def test_layout_draws_every_page_of_a_workload_that_fills_the_pool():
    # Kimi-Linear at P 1,888 on an H100: 1 request of 1,234,752 tokens (654 x 1,888) needs
    # 654 + 1 + 1 full-history pages (SPEC 3.5: its dummy page in the count) and as many state
    # pages (min(2 + 654 + 1, 656)): 1,312, the whole pool. The map draws all of them, none
    # set apart as a null page (it drew 655 full-attention pages beside a null one). Its full
    # attention keeps MLA's latent, which the page names as the Model page counts the kind:
    # "full attention (MLA)", where caption, key, tile and dead share said "full_attention"
    assert (1_234_752 // 1888, 654 + 1 + 1, min(2 + 654 + 1, 656)) == (654, 656, 656)
    at = open_app("app_pages/layout.py", {"model": "Kimi-Linear-48B-A3B", "ctx": "1234752",
                                          "req": "1", "snap": "1"})
    assert_clean(at)
    assert any(f"{STATE_KIND}: 656, full attention (MLA): 656; 1,312 page ids in the pool" in
               c.value for c in at.caption)
    # the MLA group's block: 7 layers x 1,888 tokens x 1,152 B (a 576-element latent in
    # bfloat16) = 15,224,832 B its own, beside 20 state rows of 2,170,880 B, dead in it:
    # 43,417,600 / 58,642,432 = 74.04%, the larger of the two groups' (the state's 25.96%)
    assert (7 * 1888 * 1152, 20 * 2_170_880) == (15_224_832, 43_417_600)
    assert f"{43_417_600 / (15_224_832 + 43_417_600):.2%}" == "74.04%"
    assert metrics(at)["Dead share of a full attention (MLA) block"] == "74.04%"
    tiles = {i: name for i, (name, _) in bytes_tiles(at).items()}
    assert (tiles["full_attention"], tiles["linear_attention"]) == (
        "full attention (MLA) rows", f"{STATE_KIND} rows")
    (drawn,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if "All 1,312 page ids" in c.proto.spec]
    cells = [v for row in drawn["data"][0]["z"] for v in row if v is not None]
    assert (cells.count(0), cells.count(1), len(cells)) == (656, 656, 1312)
    assert [t["name"] for t in drawn["data"][1:]] == [
        f"{STATE_KIND}: 656 pages", "full attention (MLA): 656 pages", "free: 0 pages"]


def test_layout_says_how_many_requests_fit_and_draws_no_map_of_pages_it_lacks():
    # gpt-oss-20b, 97,870 page ids of P 16 at 2^20 tokens: one request needs 65,536 + 2 full
    # and 8 + 512 + 2 sliding pages (66,060); two need 131,072 + 3 full pages alone
    at = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "ctx": str(1 << 20),
                                          "req": "4"})
    assert_clean(at)
    (warning,) = [shown(w) for w in at.warning if "does not fit" in shown(w)]
    # the conclusion first; no state layers, so no state pages to set apart
    assert warning.startswith("This workload does not fit in this budget: it holds at most "
                              "1 request of 1,048,576 tokens; lower the live requests or "
                              "the context length.\n\nPages the groups need (history, one "
                              "dummy "
                              "page each): ")
    assert not [c for c in at.get("plotly_chart") if "page ids" in c.proto.spec]
    fits = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "ctx": str(1 << 20),
                                            "req": "1"})
    # the map draws the pool's first 2,048 of its 97,870 ids, and says so, and that its
    # legend's pages are the whole pool's: 97,870 - 65,538 - 522 = 31,810 free (the pages
    # each group needs with its dummy page, as the workload text lists them: 65,536 + 1 + 1
    # full, 522 sliding, its window and one step's tokens), none among the 2,048 drawn
    (chart,) = [json.loads(c.proto.spec) for c in fits.get("plotly_chart")
                if "First 2,048 of 97,870 page ids" in c.proto.spec]
    assert chart["layout"]["title"]["text"] == (
        "First 2,048 of 97,870 page ids (the legend counts all)")
    keys = [t["name"] for t in chart["data"] if t.get("type") == "scatter"]
    assert keys[-1] == f"free: {97_870 - 65_538 - 522:,} pages" == "free: 31,810 pages"
    # two groups (full, sliding): the rows of the other's at a block id are dead weight; Llama
    # has one group, whose rows are every row
    other_rows = "the other groups' rows at that id are dead weight"
    assert [c for c in fits.caption if other_rows in c.value]
    llama = open_app("app_pages/layout.py", {"model": "Llama-3.1-8B"})
    assert_clean(llama)
    assert not [c for c in llama.caption if other_rows in c.value]
    # 150 requests of 8,192 tokens fit the map, past the 95.48 at the top (vLLM's count of a
    # whole step in every window, tests/test_app_data.py): the map's caption says why
    more = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "ctx": "8192", "req": "150"})
    assert_clean(more)
    assert [c for c in more.caption if "The 95.48 requests at the top of the page (and on "
            "Budget and Compare) count as vLLM's" in shown(c)]


def test_layout_of_a_state_only_model_has_no_token_slots_and_no_workload():
    at = open_app("app_pages/layout.py", {**STATE_ONLY_LINK, "planner": "per-component"})
    assert_clean(at)
    shown = metrics(at)
    # P 16: a page id is 24 x (32,768 + 1,048,576) B, whatever P
    assert shown["Blocks"] == f"{76_968_728_985 // (24 * (32_768 + 1_048_576)):,}"
    assert shown["Token slots (blocks x P)"] == "—"
    (p,) = [m for m in at.metric if m.label == "P (tokens per page)"]
    assert (p.value, p.proto.delta) == ("16", "nominal: no token history")
    (info,) = [i.value for i in at.info]
    assert info.startswith("A state-only model keeps no history pages")
    assert not at.warning  # the SPEC 3.5 workload of 4 requests is not charged


def test_a_state_only_model_under_packed_slabs_is_a_click_from_the_planner_that_takes_it():
    # packed slabs size P against a history row, and this model has none: the error names the
    # other planner, and a button beside it takes it (the page was empty below the error)
    at = open_app("app_pages/layout.py", STATE_ONLY_LINK)
    assert not at.exception
    (error,) = [shown(e) for e in at.error]
    assert error.endswith('pick the planner "one tensor per component" in the sidebar')
    (button,) = [b for b in at.button if b.key == "planner.per_component"]
    assert button.label == "Plan with one tensor per component"
    assert not at.main.metric  # nothing planned (the sidebar's budget stands)
    button.click().run()
    assert not at.error and not at.exception
    assert at.query_params["planner"] == "per-component"  # in the link
    # the plan of the test above: 24 x (32,768 + 1,048,576) B a page id
    assert metrics(at)["Blocks"] == f"{76_968_728_985 // (24 * (32_768 + 1_048_576)):,}"
    # GPU lab and Budget say it and offer it the same way
    for page in ("app_pages/gpu.py", "app_pages/budget.py"):
        other = open_app(page, STATE_ONLY_LINK)
        assert not other.exception
        assert [b.label for b in other.button if b.key == "planner.per_component"] == [
            "Plan with one tensor per component"], page


def test_the_maps_mode_all_count_is_not_said_to_be_the_log_of_a_model_vllm_runs_in_align():
    # Qwen3-Next asked for mamba cache mode all: FlatKV's layouts keep a state page every P
    # tokens, 1,455 / (482 + 482) = 1.51 requests; vLLM runs its class in align (no prefix
    # caching of state in mode all), 2 state pages a state group: Compare's vLLM row logs
    # int(5,757 / (482 + 3 x 2) x 262,144) = 3,092,547 tokens, not mode all's count
    at = open_app("app_pages/layout.py", {"mamba": "all"})
    assert_clean(at)
    assert f"{1455 / (482 + 482):.2f}" == "1.51"
    assert 5757 * 262_144 // (482 + 3 * 2) == 3_092_547
    compare = open_app("app_pages/compare.py", {"mamba": "all"})
    assert any("vLLM 0.31 prints 3,092,547 (the engine log)" in c.value for c in compare.caption)
    # the map: 1 request, full ceil(262,144 / 544) + 1 + 1 = 484, state 482 + 1 = 483
    said = caption_starting(at, "The map draws 1 live request")
    assert f"{STATE_KIND}: 483, full attention: 484;" in said
    assert said.endswith(
        "State is charged by mamba cache mode, as Budget's and Compare's FlatKV layouts count "
        "it (vLLM runs Qwen3NextForCausalLM in align when asked for all: its log counts align's "
        "state pages): all (1 per P tokens) per request, and a dummy page. The 1.51 requests at "
        "the top of the page count these pages without the map's dummy pages and its page more "
        "a request. \"State pages\" above counts state as SPEC 3.5 does instead: two live pages "
        "a request and a snapshot every P tokens.")
    snap = open_app("app_pages/layout.py", {"mamba": "all", "snap": "1"})
    assert any(c.value.endswith(
        "mamba cache mode all (1 per P tokens) per request, where vLLM's log counts align's (it "
        "runs Qwen3NextForCausalLM in align), and hold 1.51 requests of 262,144 tokens: \"State "
        "pages\" above draws that count.") for c in snap.caption)


def test_layout_says_how_its_state_pages_differ_from_budget():
    # the map's state drawn with prefix-caching snapshots ("State pages", snap=1)
    at = open_app("app_pages/layout.py", {"mamba": "align", "ctx": "32768", "snap": "1"})
    (msg,) = [c.value for c in at.caption if "Pages the groups need" in c.value]
    # default view: 4 requests of 32,768 tokens at P 544; state min(2 x 4 + 131,072 // 544 + 1,
    # ceil(131,072 / 544) + 4 + 1) = min(249, 246)
    assert f"{STATE_KIND}: 246, full attention: 246" in msg
    assert "mamba cache mode align (2 state pages) per request" in msg
    # 2 drafted tokens: each of the 4 requests holds 2 more state pages, 246 + 8; the flat
    # layout keeps the model's conv rows, so P stays 544 and the history pages stay 246
    at = open_app("app_pages/layout.py", {"mamba": "align", "spec_tokens": "2", "ctx": "32768",
                                          "snap": "1"})
    (msg,) = [c.value for c in at.caption if "Pages the groups need" in c.value]
    assert f"{STATE_KIND}: 254, full attention: 246" in msg
    assert ("a snapshot every P tokens (at most the full-history group's count), and 2 more "
            "per request for drafted tokens. Budget and "
            "Compare count the state pages of mamba cache mode align (2 state pages) and 2 more "
            "for drafted tokens per request") in msg


def test_layout_gives_the_state_row_padding_vllm_logs():
    # Qwen3-Next (TP 1) at P 544 pads the 1,097,728 B state row to 544 x 2,048 = 1,114,112 B:
    # "Padding mamba page size by 1.49%", as SPEC 3.1 anchors it at TP 2 (both halve); of the
    # whole block (36 state rows of 48) it is 1.10%
    at = open_app("app_pages/layout.py")
    (pad,) = [m for m in at.metric if m.label == "Uniform pages pad the block"]
    assert pad.value == f"{36 * 16_384 / (48 * 1_114_112):.2%}" == "1.10%"
    # said at this plan's P: vLLM pads at its own, which can differ (SPEC 1's block 64 and
    # alignment 16: ours 1,056, vLLM's 1,088)
    assert pad.proto.delta == (
        f"{16_384 / 1_097_728:.2%} of a state row at P 544") == "1.49% of a state row at P 544"
    # MiniMax-M1's 2,097,152 B state row is 512 tokens of its 4,096 B a token: no padding,
    # said so (not "padded by 0.00%")
    minimax = open_app("app_pages/layout.py", {"model": "MiniMax-M1"})
    (pad,) = [m for m in minimax.metric if m.label == "Uniform pages pad the block"]
    assert 512 * 4_096 == 2_097_152 and pad.value == "0.00%"
    assert pad.proto.delta == "state row fills its page row at P 512"


def test_a_few_bytes_of_padding_do_not_read_as_none():
    """A state row one byte short of its page row read "Uniform pages would pad 0.00%" and
    "state row padded by 0.00%", as if it filled it, beside a caption of 36 B padding (and
    "36 B (36 B)"). Raw bytes, (3 x linear, full) x 12, KV 2,048 B a token, state conv 1 + ssm
    2,097,150 = 2,097,151 B: ceil(2,097,151 / 2,048) = 1,024 slots, P 1,024 (a multiple of
    16), page row 1,024 x 2,048 = 2,097,152 B, each of the 36 state rows 1 B short. Block:
    12 x 2,097,152 + 36 x 2,097,151 = 100,663,260 B; padded 48 x 2,097,152 = 100,663,296 B,
    of which 36 B is 0.0000357...%; 1 B of the state row 0.0000476...%, each rounded half up
    at its first digit."""
    at = open_app("app_pages/layout.py", {
        "model": "custom", "layers": "(3*linear,full)*12", "kv": "2048",
        "state": "conv=1,ssm=2097150", "gpu": "Custom", "gpu_mem": "80GB", "frac": "1"})
    assert_clean(at)
    m = metrics(at)
    help_texts = {mm.label: mm.help for mm in at.metric}
    assert (m["P (tokens per page)"], help_texts["Block bytes"]) == ("1,024", "100,663,260 B")
    (pad,) = [mm for mm in at.metric if mm.label == "Uniform pages pad the block"]
    assert pad.value == "0.00004%"
    assert pad.proto.delta == "0.00005% of a state row at P 1,024"
    assert caption_starting(at, "Drawn unpadded") == (
        "Drawn unpadded, as packed slabs allocate the rows; the toggle pads them to "
        f"the 2,097,152 B page row at P 1,024: 36 {STATE_KIND} rows of 2,097,151 "
        "B, padded by 1 B each. 36 B a block, 0.00004% of the padded block of 100,663,296 B; "
        "under 1% of a row, a sliver at this scale (hover a row's end for its bytes).")
    # the dead share of a block the full group owns, 36 x 2,097,151 / 100,663,260 = 74.99998%,
    # is told at two decimals: only 0 and 100 take more
    assert m["Dead share of a full attention block"] == "75.00%"


def test_layout_says_sglangs_b200_dsa_figure_is_its_fp8_bytes():
    # DeepSeek-V3.2 on a B200 (179.06 GiB x 0.9 = 173,039,262,105 B, 163,840 tokens): our
    # slabs keep 61 x 1,284 B a token, 13.48 requests; SGLang its raw fp8, 61 x 708 B, 62,603
    # pages of 64 over 2,560 a request = 24.45, 1.81x ours: the line says whose bytes those are
    at = open_app("app_pages/layout.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    assert_clean(at)
    assert 173_039_262_105 // (61 * 708) // 64 == 62_603
    assert ("At 163,840 tokens per request, this plan holds 13.48 requests; in the same budget "
            "vLLM v1 13.48 (just under 1.00x ours), SGLang 24.45 (1.81x ours, in fp8_e4m3 at 708 "
            "B a token a layer where ours keeps the model's bfloat16 at 1,284: SGLang's own on a "
            "Blackwell GPU). Compare shows where each layout's bytes go.") in [
                unescaped(c.value) for c in at.caption]


def bytes_tiles(at) -> dict[str, tuple[str, int]]:
    """The bytes chart's tiles of a run (its one trace, named "bytes"), by id: the name each
    is hovered by and its bytes."""
    (bars,) = [t for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]
               if t.get("name") == "bytes"]
    return {i: (data[3], value) for i, data, value in zip(
        bars["ids"], bars["customdata"], bars["y"], strict=True)}


def c_title(spec: dict) -> str:
    """A chart spec's title, "" where it has none."""
    return spec["layout"].get("title", {}).get("text", "")


def test_layout_names_mla_and_the_indexer_keys_alike_in_its_charts():
    """DeepSeek-V3.2's layers keep MLA's latent (the Model page's kind "mla"), not K and V:
    the charts' key said "KV (full attention)". And the bytes icicle folded the indexer keys
    into "kv" where the page rows drew them apart. Now each chart names the parts alike:
    the latent as MLA's, the keys apart. By hand at the default budget (76,968,728,985 B) and
    P 16: a block is 61 layers x 16 x 1,284 B = 1,253,184 B, 61,418 of them; a layer's latent
    16 x (1,284 - 132) = 18,432 B a block, its keys 16 x 132 = 2,112."""
    at = open_app("app_pages/layout.py", {"model": "DeepSeek-V3.2"})
    assert_clean(at)
    assert 76_968_728_985 // (61 * 16 * 1_284) == 61_418
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (rows,) = [s for s in specs if "One row per slot" in c_title(s)]
    (vllm,) = [s for s in specs if "One row per vLLM group" in c_title(s)]
    for chart in (rows, vllm):
        assert [t["name"] for t in chart["data"]] == ["KV (full attention, MLA latent)",
                                                      "indexer keys"]
    (latent,) = [t for t in rows["data"] if t["name"].startswith("KV")]
    assert round(latent["x"][0] * 2**10) == 18_432  # KiB on the axis
    tiles = {i: name for i, (name, _) in bytes_tiles(at).items()}
    values = {i: value for i, (_, value) in bytes_tiles(at).items()}
    assert [tiles[i] for i in ("full_attention/kv", "full_attention/indexer keys")] == [
        "KV (full attention, MLA latent)", "indexer keys"]
    assert (values["full_attention/kv"], values["full_attention/indexer keys"]) == (
        61 * 61_418 * 18_432, 61 * 61_418 * 2_112) == (69_055_451_136, 7_912_603_776)
    assert (tiles["full_attention/indexer keys/0"], values["full_attention/indexer keys/0"]) == (
        "indexer keys #0", 61_418 * 2_112)
    # DeepSeek-V3's MLA keeps no indexer: one part, named as MLA's
    dsv3 = open_app("app_pages/layout.py", {"model": "DeepSeek-V3"})
    (rows,) = [json.loads(c.proto.spec) for c in dsv3.get("plotly_chart")
               if "One row per slot" in c.proto.spec]
    assert [t["name"] for t in rows["data"]] == ["KV (full attention, MLA latent)"]
    # a model of K and V keeps its name; its icicle's parts as its key names them
    llama = open_app("app_pages/layout.py", {"model": "Llama-3.1-8B"})
    (rows,) = [json.loads(c.proto.spec) for c in llama.get("plotly_chart")
               if "One row per slot" in c.proto.spec]
    assert [t["name"] for t in rows["data"]] == ["KV (full attention)"]
    assert bytes_tiles(llama)["full_attention/kv"][0] == "KV (full attention)"


def test_layout_sets_its_plan_beside_the_engines():
    # the worked example at 32,768 tokens: packed slabs 775 blocks / (32 full + 1 state pages)
    # = 23.48; vLLM 2,991 / 34 = 87.97, 2,991 x 33 / (34 x 775) = 3.75x ours; SGLang: 80e9 x
    # 9 // 19 holds 490 slots of 36 x 2,146,304 B, the KV pool (80e9 - 490 x 77,266,944) //
    # (12 x 2,048) = 1,714,648 tokens / 32,768 = 52.33, 1,714,648 x 33 / (32,768 x 775) = 2.23x
    assert (80 * 10**9 - 490 * 77_266_944) // 24_576 == 1_714_648
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    assert_clean(at)
    assert (round(2_991 * 33 / (34 * 775), 2), round(1_714_648 * 33 / (32_768 * 775), 2)) == (
        3.75, 2.23)
    # why vLLM holds 3.75x ours, in bytes: of 775 page ids 752 are full attention's and 23
    # state's (775 x 32 / 33 = 751.52 and 23.48, the larger remainder rounded up), each
    # carrying the other group's rows dead: 752 x 36 x 2,146,304 + 23 x 12 x 1,056 x 2,048 =
    # 58,701,643,776 B = 54.67 GiB, 73.38% of 80e9; vLLM's groups keep none
    dead = 752 * 77_266_944 + 23 * 25_952_256
    assert (dead, f"{dead / 2**30:.2f}", f"{dead / 8e10:.2%}") == (
        58_701_643_776, "54.67", "73.38%")
    assert ("At 32,768 tokens per request, this plan holds 23.48 requests; in the same budget "
            "vLLM v1 87.97 (3.75x ours), SGLang 52.33 (2.23x ours). Compare shows where each "
            "layout's bytes go. Most of the gap is dead weight: 54.67 GiB in this plan (73.38% "
            "of the budget), none in vLLM v1's.") in [unescaped(c.value) for c in at.caption]
    compare = open_app("app_pages/compare.py", QWEN35_LINK).dataframe[0].value
    assert list(compare.set_index("strategy").loc[["FlatKV packed slabs", "vLLM v1", "SGLang"],
                                                  "concurrency"]) == [23.48, 87.97, 52.33]
    # at 4M tokens: 775 / (ceil(4,194,304 / 1,056) + 1) = 0.20 of one request; vLLM's one
    # request needs more than its budget (it does not start); SGLang's pool 1,714,648 tokens
    long = open_app("app_pages/layout.py", {**QWEN35_LINK, "ctx": "4M"})
    (line,) = [unescaped(c.value) for c in long.caption if c.value.startswith("At ")]
    assert f"{775 / (-(-4_194_304 // 1_056) + 1):.2f}" == "0.20"
    # all 775 page ids are full attention's (775 x 3,972 / 3,973 = 774.80 and 0.20), each with
    # 36 state rows dead: 74.85% of the budget, more than the gap, as SGLang fits our requests
    # in 775 x 4,194,304 / (3,973 x 1,714,648) = 47.72% of it (a gap of 52.28%)
    assert f"{775 * 4_194_304 / (3_973 * 1_714_648):.2%}" == "47.72%"
    assert f"{1 - 775 * 4_194_304 / (3_973 * 1_714_648):.2%}" == "52.28%"
    assert line == (
        "At 4,194,304 tokens per request, this plan holds no whole request (0.20 of one); in "
        "the same budget vLLM v1 does not start, SGLang 0.41 "
        f"({1_714_648 * 3_973 / (4_194_304 * 775):.2f}x ours). Compare shows where each "
        "layout's bytes go and why a layout does not apply. Dead weight is more than the "
        f"whole gap: {775 * 77_266_944 / 2**30:.2f} GiB in this plan "
        f"({775 * 77_266_944 / 8e10:.2%} of the budget), none in SGLang's; SGLang fits "
        "this plan's requests in 47.72% of the budget, a gap of 52.28%.")


def test_layout_says_in_bytes_why_an_engine_holds_more():
    """A design review's next question after "vLLM v1 11.87 (3.94x ours)": why. Qwen3-Next at
    the defaults (76,968,728,985 B, 262,144 tokens; by hand in test_strategy_notes): blocks of
    12 KV rows of 544 x 2,048 B and 36 state rows of 1,097,728 B, 1,455 of them, 1,452 full
    attention's and 3 state's; the rows of the other group at each are dead weight, 1,452 x
    39,518,208 + 3 x 13,369,344 = 57,420,546,048 B, vLLM's groups none. Where no engine holds
    more (MiniMax-M1's), no sentence."""
    at = open_app("app_pages/layout.py", {"model": "Qwen3-Next-80B-A3B"})
    assert_clean(at)
    dead = 1_452 * 36 * 1_097_728 + 3 * 12 * 544 * 2_048
    assert (dead, f"{dead / 2**30:.2f}", f"{dead / 76_968_728_985:.2%}") == (
        57_420_546_048, "53.48", "74.60%")
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line == (
        "At 262,144 tokens per request, this plan holds 3.01 requests; in the same budget vLLM "
        "v1 11.87 (3.94x ours), SGLang 6.30 (2.09x ours). Compare shows where each layout's "
        "bytes go. Most of the gap is dead weight: 53.48 GiB in this plan (74.60% of the "
        "budget), none in vLLM v1's.")
    # beside the metric's share of one block, 36 state rows dead in a full-attention block of
    # 12 x 544 x 2,048 + 36 x 1,097,728 = 52,887,552 B: 74.72%. Each percentage names its
    # base (a block, the budget), so the two near-equal figures do not read as one mistyped
    assert f"{36 * 1_097_728 / (12 * 544 * 2_048 + 36 * 1_097_728):.2%}" == "74.72%"
    assert metrics(at)["Dead share of a full attention block"] == "74.72%"
    # ... its base under it, the block's bytes: 36 x 1,097,728 = 39,518,208 B (37.69 MiB) of
    # 52,887,552 B (50.44 MiB), where the share beside read as the same figure
    (share,) = [x for x in at.metric if x.label == "Dead share of a full attention block"]
    assert 36 * 1_097_728 == 39_518_208 and 12 * 544 * 2_048 + 36 * 1_097_728 == 52_887_552
    assert share.proto.delta == "37.69 MiB of the block's 50.44 MiB"
    assert share.help.endswith("Here 39,518,208 B of the block's 52,887,552 B.")
    # the same bytes on Compare, in its "where the budget goes" table: ours and vLLM's
    compare = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    (goes,) = [d.value.set_index("category (bytes)") for d in tables(compare)
               if "packed" in d.value.columns and "category (bytes)" in d.value.columns]
    assert list(goes.loc["dead weight", ["packed", "vLLM"]]) == [dead, 0]
    minimax = open_app("app_pages/layout.py", {"model": "MiniMax-M1"})
    (line,) = [unescaped(c.value) for c in minimax.caption if c.value.startswith("At ")]
    assert "gap" not in line


def test_layout_tells_a_ratio_near_one_from_one():
    # DeepSeek-V3 in 40 GiB of KV cache at 163,840 tokens: 61 MLA layers of (512 + 64) x 2 B
    # = 70,272 B a token. Our blocks of 16 tokens: 42,949,672,960 // (16 x 70,272) = 38,199
    # (611,184 tokens); vLLM's on FlashMLA (kernel block 64, told: vLLM's own pick is 16, as
    # ours) in blocks of 64: 9,549 (611,136); SGLang's pages of one token:
    # 611,191. All three read 3.73 requests; vLLM holds 48 tokens fewer than ours (38,196 /
    # 38,199 = 0.99992, to its first digit of its own 0.9999, where 1.00 would say as many),
    # SGLang 7 more (1.0000115, 1.00001): a multiple under 1.01, no gap to explain
    budget = 40 * 2**30
    assert (budget // (16 * 70_272), budget // (64 * 70_272), budget // 70_272) == (
        38_199, 9_549, 611_191)
    ours = Fraction(38_199 * 16, 163_840)
    vllm, sglang = Fraction(9_549, 163_840 // 64), Fraction(611_191, 163_840)
    assert (f"{float(vllm / ours):.5f}", f"{float(sglang / ours):.7f}") == ("0.99992",
                                                                          "1.0000115")
    at = open_app("app_pages/layout.py", {"model": "DeepSeek-V3", "gpu": "KV cache memory",
                                          "kv_mem": "40GiB", "kernel": "64"})
    assert_clean(at)
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line == ("At 163,840 tokens per request, this plan holds 3.73 requests; in the same "
                    "budget vLLM v1 3.73 (just under 1.00x ours), SGLang 3.73 (just over 1.00x "
                    "ours). Compare "
                    "shows where each layout's bytes go.")
    # at vLLM's own kernel block, 16, its blocks are ours: as many requests, 1.00x
    at = open_app("app_pages/layout.py", {"model": "DeepSeek-V3", "gpu": "KV cache memory",
                                          "kv_mem": "40GiB"})
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert "vLLM v1 3.73 (1.00x ours), SGLang 3.73 (just over 1.00x ours)" in line


def test_layout_says_a_multiple_that_reads_whole_and_is_not_in_words():
    # gpt-oss-20b in the default 76,968,728,985 B at 131,072 tokens: our block is both groups'
    # 12 rows of 2,048 x 16 B, 786,432 B, 97,870 of them; vLLM's one group's 12 pages,
    # 393,216 B, 195,741. A request takes 8,192 full pages and cdiv(127 + 8,192, 16) + 1 = 521
    # sliding in both, so vLLM holds 195,741 / 97,870 = 2.0000102x ours: "just over 2.00x"
    # (it read "2.00001x", and "2.00x" would say exactly twice)
    assert (76_968_728_985 // 786_432, 76_968_728_985 // 393_216) == (97_870, 195_741)
    assert 8_192 + -(-(127 + 8_192) // 16) + 1 == 8_713
    assert f"{97_870 / 8_713:.2f}" == "11.23" and f"{195_741 / 8_713:.2f}" == "22.47"
    assert 195_741 > 2 * 97_870 and f"{195_741 / 97_870:.2f}" == "2.00"
    at = open_app("app_pages/layout.py", {"model": "gpt-oss-20b"})
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line.startswith("At 131,072 tokens per request, this plan holds 11.23 requests; in "
                           "the same budget vLLM v1 22.47 (just over 2.00x ours), SGLang")


def test_layout_names_the_icicle_tiles_too_thin_for_a_label():
    # Qwen3-Next's conv state, 36 x 49,152 B x 1,455 blocks = 2,574,581,760 B (2.40 GiB,
    # 3.34% of 76,968,728,985 B), is a 13.7 px sliver under its ssm state: named under the
    # chart; Llama-3.1-8B's icicle labels every slice it shows (its unused, 1,153,433 B, is
    # under a pixel)
    at = open_app("app_pages/layout.py")
    assert f"{2_574_581_760 / 76_968_728_985:.2%}" == "3.34%"
    assert caption_starting(at, "Not labelled") == (
        "Not labelled above (hover or click it): conv state 2.40 GiB (3.34% of the budget).")
    llama = open_app("app_pages/layout.py", {"model": "Llama-3.1-8B"})
    assert not [c for c in llama.caption if c.value.startswith("Not labelled")]


def bytes_view(at) -> dict:
    """The bytes chart's spec of a run: its figure's layout (height, y range, headings)."""
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if any(t.get("name") == "bytes" for t in json.loads(c.proto.spec)["data"])]
    return spec


def show_select(at):
    """Layout's "Show" select beside the bytes chart: its key names the view it was drawn
    in (app_pages/layout.py's TREE_KEY)."""
    (select,) = [s for s in at.selectbox if s.label == "Show"]
    return select


def test_layouts_bytes_chart_shows_one_group_or_component_alone():
    """The icicle's click into a part, lost when the chart became bars: "Show" (or a click on
    a tile, the browser's test) draws a group or component alone, its bytes the plot's height,
    beside its parts. By hand, Qwen3-Next at the default 76,968,728,985 B: P 544, a block 36
    state rows of 49,152 + 1,048,576 B and 12 KV rows of 544 x 2,048 = 1,114,112 B,
    52,887,552 B, 1,455 blocks; the state rows 36 x 1,097,728 x 1,455 = 57,498,992,640 B, of
    them conv 36 x 49,152 x 1,455 = 2,574,581,760 and ssm 36 x 1,048,576 x 1,455 =
    54,924,410,880 (a layer's 1,525,678,080)."""
    at = open_app("app_pages/layout.py")
    assert 76_968_728_985 // (36 * 1_097_728 + 12 * 1_114_112) == 1_455
    # a double-click lands on a tile and opens it (the browser's test): the caption zooms out
    # with the toolbar's Reset axes, where it said a double-click did
    assert caption_starting(at, "By tensor").endswith(
        "drag down the chart to zoom in, and zoom out with the toolbar's house (Reset axes): "
        "a double-click opens a group or component as a click does.")
    show = show_select(at)
    assert show.key == "layout.tree.show" and show.value == "budget"
    assert show.options == [
        "the whole budget", "state rows", "state rows: conv state", "state rows: ssm state",
        "full attention rows", "full attention rows: KV (full attention)"]
    whole = bytes_tiles(at)
    assert len(whole) == 2 + 3 + 84 + 1  # groups, components, layers, unused
    show.set_value("linear_attention").run()
    assert_clean(at)
    assert show_select(at).key == "layout.tree:linear_attention.show"
    tiles = bytes_tiles(at)
    # the group and its parts only, each tile's bytes as in the whole view
    assert set(tiles) == {"linear_attention", "linear_attention/conv", "linear_attention/ssm",
                          *(f"linear_attention/{c}/{j}" for c in ("conv", "ssm")
                            for j in range(36))}
    assert {i: v for i, (_, v) in tiles.items()} == {i: whole[i][1] for i in tiles}
    group, conv, ssm = (tiles[i][1] for i in ("linear_attention", "linear_attention/conv",
                                              "linear_attention/ssm"))
    assert (group, conv, ssm) == (57_498_992_640, 2_574_581_760, 54_924_410_880)
    assert conv + ssm == group == sum(tiles[f"linear_attention/ssm/{j}"][1]
                                      + tiles[f"linear_attention/conv/{j}"][1]
                                      for j in range(36))
    spec = bytes_view(at)
    (bars,) = spec["data"]
    bases = dict(zip(bars["ids"], bars["base"], strict=True))
    # the plot's height is the group's bytes, its parts stacked from its top
    assert spec["layout"]["yaxis"]["range"] == [57_498_992_640, 0]
    assert (bases["linear_attention"], bases["linear_attention/conv"],
            bases["linear_attention/ssm"]) == (0, 0, 2_574_581_760)
    assert [a["text"] for a in spec["layout"]["annotations"]] == [
        "group (click it to go back)", "components", "layers"]
    # conv, 2,574,581,760 / 57,498,992,640 of 410 px = 18.4 px, still too thin to label
    assert caption_starting(at, "Not labelled").startswith("Not labelled above (hover or "
                                                          "click it): conv state 2.40 GiB")
    # a component: its layers, 1,525,678,080 B each, the plot grown to 36 x 20 = 720 px for a
    # line of label a layer (410 px gave each 11.4)
    show_select(at).set_value("linear_attention/ssm").run()
    tiles = bytes_tiles(at)
    assert len(tiles) == 1 + 36 and tiles["linear_attention/ssm"][1] == 54_924_410_880
    assert {v for i, (_, v) in tiles.items() if i.count("/") == 2} == {1_525_678_080}
    spec = bytes_view(at)
    assert spec["layout"]["yaxis"]["range"] == [54_924_410_880, 0]
    assert spec["layout"]["height"] == 34 + 720 + 30 + 10
    assert [a["text"] for a in spec["layout"]["annotations"]] == [
        "component (click it to go back)", "layers"]
    assert not [c for c in at.caption if c.value.startswith("Not labelled")]
    # back to the whole budget
    show_select(at).set_value("budget").run()
    assert bytes_tiles(at) == whole
    # the view is the session's: kept off the page and back (the select's state, which
    # streamlit drops off its page, is not where it lives)
    show_select(at).set_value("linear_attention/ssm").run()
    at.switch_page("app_pages/model.py").run()
    at.switch_page("app_pages/layout.py").run()
    assert show_select(at).value == "linear_attention/ssm"
    assert len(bytes_tiles(at)) == 37
    # another model, picked on the Model page, which has no such part: its whole view
    at.switch_page("app_pages/model.py").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    at.switch_page("app_pages/layout.py").run()
    assert_clean(at)
    assert show_select(at).value == "budget"
    assert "full_attention/kv" in bytes_tiles(at)


def test_a_link_opens_the_bytes_chart_on_its_focus_and_says_a_part_the_model_lacks():
    """The chart's view travels in the link (``focus``, a focus id, written only off the whole
    budget): a link shared in a review opened on the whole budget. Qwen3-Next's ssm state at
    the default budget, by hand: 36 layers x 1,048,576 B x 1,455 blocks = 54,924,410,880 B."""
    at = open_app("app_pages/layout.py", {"focus": "linear_attention/ssm"})
    assert_clean(at)
    assert not at.warning
    assert show_select(at).value == "linear_attention/ssm"
    tiles = bytes_tiles(at)
    assert 36 * 1_048_576 * 1_455 == 54_924_410_880
    assert len(tiles) == 1 + 36 and tiles["linear_attention/ssm"][1] == 54_924_410_880
    assert bytes_view(at)["layout"]["yaxis"]["range"] == [54_924_410_880, 0]
    assert at.query_params["focus"] == "linear_attention/ssm"
    # a pick writes it, the whole budget removes it
    show_select(at).set_value("linear_attention").run()
    assert at.query_params["focus"] == "linear_attention"
    show_select(at).set_value("budget").run()
    assert "focus" not in at.query_params and len(bytes_tiles(at)) == 2 + 3 + 84 + 1
    # a part the model lacks (Llama's KV, on Qwen3-Next): the whole budget, and a notice
    lacking = open_app("app_pages/layout.py", {"focus": "full_attention/ssm"})
    assert_clean(lacking)
    assert [unescaped(w.value) for w in lacking.warning] == [
        "focus='full_attention/ssm' is not a group or component of this model's budget: give "
        "one of linear_attention, linear_attention/conv, linear_attention/ssm, full_attention,"
        " full_attention/kv; using the default (the whole budget, focus=budget)."]
    assert show_select(lacking).value == "budget" and "focus" not in lacking.query_params
    assert len(bytes_tiles(lacking)) == 2 + 3 + 84 + 1
    # junk is refused as any key's, by the link's notices (on the page it opens)
    junk = open_app(query={"focus": " "})
    assert [unescaped(w.value) for w in junk.warning] == [
        "focus=' ' is not a part's name: give a group or a group/component, as Layout's bytes "
        "chart names them, e.g. focus=linear_attention/ssm; using the default (the whole "
        "budget, focus=budget)."]
    # another model drops the focus silently: its parts are its own
    at.query_params.clear()
    show_select(at).set_value("linear_attention/ssm").run()
    at.switch_page("app_pages/model.py").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert "focus" not in at.query_params
    at.switch_page("app_pages/layout.py").run()
    assert_clean(at)
    assert not at.warning and show_select(at).value == "budget"


def test_layout_says_where_dead_weight_is_more_than_the_gap():
    # Llama-4-Scout at its own 10,485,760 tokens: SGLang holds 1.18x ours, and our dead weight,
    # 57,665,126,400 B (53.70 GiB, 74.92% of the budget), is near five times the gap: SGLang
    # fits our requests in (24,467 / 656,384) / (460,568 / 10,485,760) = 84.87% of the budget
    # (by hand in test_strategy_notes). It said "Most of the gap is dead weight"
    at = open_app("app_pages/layout.py", {"model": "Llama-4-Scout-17B-16E"})
    assert_clean(at)
    assert f"{24_467 * 10_485_760 / (656_384 * 460_568):.2%}" == "84.87%"
    assert f"{1 - 24_467 * 10_485_760 / (656_384 * 460_568):.2%}" == "15.13%"
    dead = (24_429 * 36 + 38 * 12) * 65_536
    assert (f"{dead / 2**30:.2f}", f"{dead / 76_968_728_985:.2%}") == ("53.70", "74.92%")
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line.endswith(
        "SGLang 0.04 (1.18x ours). Compare shows where each layout's bytes go and why a layout "
        "does not apply. Dead weight is more than the whole gap: 53.70 GiB in this plan (74.92% "
        "of the budget), none in SGLang's; SGLang fits this plan's requests in 84.87% of the "
        "budget, a gap of 15.13%.")
    # at 262,144 tokens vLLM v1 holds 3.58x ours, and dead weight, 72.06% of the budget, is the
    # gap, 1 - (24,467 / 17,408) / (97,870 / 19,456) = 72.06%: most of it
    at = open_app("app_pages/layout.py", {"model": "Llama-4-Scout-17B-16E", "ctx": "262144"})
    assert_clean(at)
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line.endswith(
        "Most of the gap is dead weight: 51.65 GiB in this plan (72.06% of the budget), none in "
        "vLLM v1's.")


def test_layout_says_which_engine_serves_no_such_model():
    # MiniMax-M1 at 131,072 tokens in the default budget (79.65 GiB x 0.9 = 76,968,728,985 B):
    # our plan's blocks of 80 rows of 2 MiB (P 512), a request 256 full pages and one state
    # page; vLLM's 2 MiB pages in 8 groups of 10 layers, a request 256 + 7 state pages. SGLang
    # has no MiniMax-M1 model: it serves no such model, whatever the budget.
    at = open_app("app_pages/layout.py", {"model": "MiniMax-M1", "ctx": "131072"})
    assert_clean(at)
    ours = Fraction(76_968_728_985 // (80 * 2**21), 256 + 1)
    vllm = Fraction(76_968_728_985 // 2**21 // 10, 256 + 7)
    # why vLLM holds more: of our 458 page ids 456 are full attention's and 2 state's (458 x
    # 256 / 257 = 456.22 and 1.78, the larger remainder rounded up), each with the other
    # group's rows dead, 70 state rows at a full page id and 10 KV rows at a state one
    assert 76_968_728_985 // (80 * 2**21) == 458
    dead = (456 * 70 + 2 * 10) * 2**21
    assert (dead, f"{dead / 2**30:.2f}") == (66_983_034_880, "62.38")
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line == (
        f"At 131,072 tokens per request, this plan holds {float(ours):.2f} requests; in the "
        f"same budget vLLM v1 {float(vllm):.2f} ({float(vllm / ours):.2f}x ours), SGLang does "
        "not serve this model. Compare shows where each layout's bytes go and why a layout "
        f"does not apply. Most of the gap is dead weight: {dead / 2**30:.2f} GiB in this plan "
        f"({dead / 76_968_728_985:.2%} of the budget), none in vLLM v1's.")
    assert f"{float(ours):.2f}" == "1.78"
    # vLLM's figures stand, for the releases that serve it (its registry: up to 0.23.0), said
    # under its blocks here and among Compare's notes
    dropped = ("vLLM serves MiniMaxM1ForCausalLM up to 0.23.0 only, so a log of it comes from "
               "such a release: later ones refuse it, their model registry listing it as "
               "previously supported.")
    assert dropped in [unescaped(c.value) for c in at.caption]
    compare = open_app("app_pages/compare.py", {"model": "MiniMax-M1", "ctx": "131072"})
    assert_clean(compare)
    assert dropped in [unescaped(c.value) for c in compare.caption]
    # no current release's defaults are offered for it; where vLLM refuses (its whole 10,240,000
    # tokens do not fit), its reason says it, once
    assert not [b for b in compare.button if b.label == "Use vLLM 0.34's defaults"]
    refused = open_app("app_pages/compare.py", {"model": "MiniMax-M1"})
    assert_clean(refused)
    captions = [unescaped(c.value) for c in refused.caption]
    assert dropped not in captions  # no note of its own beside the reason
    assert any(c.startswith("**vLLM v1** refuses to start") and c.endswith(
        f"({dropped[:-1]})") for c in captions)


def test_a_default_workload_of_which_not_one_request_fits_is_said_not_warned():
    # Qwen3.5-27B at its own 262,144 tokens on an H100: P 784, 374 page ids. Budget counts one
    # state page a request (mode none, as the engine's log): 374 / (ceil(262,144 / 784) + 1) =
    # 374 / 336 = 1.11; the map's workload with the state snapshots ("State pages", snap=1)
    # charges a snapshot every P tokens, and one request needs 337 page ids in each group: not
    # one fits. Untyped, that is said (info, the field at 1, no "lower the live requests");
    # typed, it is a warning.
    at = open_app("app_pages/layout.py", {"model": "Qwen3.5-27B", "snap": "1"})
    assert_clean(at)
    # its state row: conv 61,440 + ssm 48 x 128 x 128 x 4 B = 3,207,168 B = 783 x 4,096 (a
    # token of its 16 full layers), so P = 784 (a multiple of 16); a block is 16 x 784 x
    # 4,096 + 48 x 3,207,168 B, 374 of them in the H100's 76,968,728,985 B
    assert 61_440 + 48 * 128 * 128 * 4 == 3_207_168 == 783 * 4_096
    assert 76_968_728_985 // (16 * 784 * 4_096 + 48 * 3_207_168) == 374
    assert (metrics(at)["P (tokens per page)"], metrics(at)["Blocks"]) == ("784", "374")
    assert not at.warning and at.number_input(key="w.requests").value == 1
    (info,) = [shown(i) for i in at.info]
    assert info.startswith(
        "One request of 262,144 tokens with its state snapshots does not fit in this budget "
        f"(Budget's and Compare's {374 / (-(-262_144 // 784) + 1):.2f} count the "
        "state pages as the engine's log does: the last paragraph here): lower the context "
        "length.\n\nPages the "
        "groups need (history, live state and snapshots, one dummy page each): "
        f"{STATE_KIND}: 337, full attention: 337; 374 page ids in the pool. A full-history "
        "group's count is all requests' tokens over P, rounded up, and a page more a request "
        "for its last page (SPEC 3.5): part-filled, or, where its context fills its pages "
        "exactly, a new one for its next step's token.")
    budget = open_app("app_pages/budget.py", {"model": "Qwen3.5-27B"})
    assert metrics(budget)["Concurrency at 262,144 tokens"] == "1.11"
    typed = open_app("app_pages/layout.py", {"model": "Qwen3.5-27B", "req": "1", "snap": "1"})
    assert not typed.info and [shown(w) for w in typed.warning] == [info]
    # by mamba cache mode, the map's default, as Budget: 335 + 1 + 1 full pages and 1 + 1
    # state pages, 339 of the 374 ids: the one request Budget's 1.11 holds is drawn
    by_mode = open_app("app_pages/layout.py", {"model": "Qwen3.5-27B"})
    assert_clean(by_mode)
    assert not by_mode.info and by_mode.number_input(key="w.requests").value == 1
    assert -(-262_144 // 784) == 335
    assert f"{STATE_KIND}: 2, full attention: 337; 374 page ids" in caption_starting(
        by_mode, "The map draws 1 live request of 262,144 tokens, not the default 4: 1 fits.")


def test_a_context_that_fits_no_request_offers_the_longest_that_does():
    # Llama-4-Scout's own 10,485,760 tokens on an H100 (24,467 blocks at P 16): one request
    # needs ceil(10,485,760 / 16) + 2 = 655,362 full pages, so no map, only "lower the context
    # length". The button sets the longest that fits, 23,439 x 16 = 375,024 tokens (by hand in
    # tests/test_workload.py): 1,026 chunked + 23,441 full pages = the whole pool
    at = open_app("app_pages/layout.py", {"model": "Llama-4-Scout-17B-16E"})
    assert_clean(at)
    refusal = "One request of 10,485,760 tokens does not fit in this budget: lower the context"
    assert [i for i in at.info if shown(i).startswith(refusal)]
    assert not [c for c in at.get("plotly_chart") if "page ids" in c.proto.spec]
    button = at.button(key="layout.longest")
    assert button.label == "Use the longest context whose pages fit (375,024 tokens)"
    # named apart from Budget's, which counts the engine's pages a request (1,024 chunked +
    # ceil(L / 16) full, no dummy page, no page for the last one: 23,443 x 16 = 375,088, by
    # hand in tests/test_sizing.py), and its figure given, so the two pages' 64 tokens apart
    # read as two counts, not as one of them wrong
    assert button.help == (
        f"{sentence_case(app_data.LONGEST_BY['map'])}. Budget counts "
        f"{app_data.LONGEST_BY['concurrency']}, and offers 375,088 tokens by it for one request.")
    button.click().run()
    assert_clean(at)
    assert at.query_params["ctx"] == "375024" and not at.warning
    assert not [i for i in at.info if "does not fit" in shown(i)]
    # the default 4 requests cut to the 1 that fits, its pages the whole pool
    assert "chunked attention: 1,026, full attention: 23,441; 24,467 page ids in the pool" in \
        caption_starting(at, "The map draws 1 live request of 375,024 tokens, not the default 4")
    assert [c for c in at.get("plotly_chart") if "of 24,467 page ids" in c.proto.spec]
    # a context that fits, or one that fits fewer requests than typed: no such button
    assert not [b for b in at.button if b.key == "layout.longest"]
    # typed requests: the longest context they all fit at (87,588 for 4, by hand in
    # tests/test_workload.py), so the click leads to their map, not to another warning
    typed = open_app("app_pages/layout.py", {"model": "Llama-4-Scout-17B-16E", "req": "4"})
    button = typed.button(key="layout.longest")
    assert button.label == "Use the longest context 4 requests' pages fit (87,588 tokens)"
    assert button.help.endswith("offers 375,088 tokens by it for one request.")
    # at Budget's 375,088 the map does not fit one request (23,445 full pages + 1,026 chunked
    # over 24,467 ids), while Budget's concurrency is 24,467 / 24,467 = 1: the help says so
    edge = open_app("app_pages/layout.py", {"model": "Llama-4-Scout-17B-16E", "ctx": "375088"})
    assert 23_445 + 1_026 > 24_467 == 1_024 + 375_088 // 16
    assert edge.button(key="layout.longest").label == (
        "Use the longest context whose pages fit (375,024 tokens)")
    assert edge.button(key="layout.longest").help.endswith(
        "and holds one request of 375,088 tokens by it.")
    # Budget set to vLLM's layout offers vLLM's own 1,516,752 tokens (tests/test_app_budget.py),
    # not our 375,088: Layout's help names its rule alone, no figure Budget does not show
    engine = open_app("app_pages/layout.py", {"model": "Llama-4-Scout-17B-16E", "b_layout": "vllm"})
    assert engine.button(key="layout.longest").help == (
        f"{sentence_case(app_data.LONGEST_BY['map'])}.")
    button.click().run()
    assert_clean(typed)
    assert typed.query_params["ctx"] == "87588" and not typed.warning
    assert "chunked attention: 2,565, full attention: 21,902; 24,467 page ids in the pool" in \
        caption_starting(typed, "Pages the groups need")
    four = open_app("app_pages/layout.py", {"req": "4"})  # Qwen3-Next: 3 requests fit
    assert [b for b in four.button if b.key == "layout.fit"]
    assert not [b for b in four.button if b.key == "layout.longest"]


def test_a_workload_that_does_not_fit_offers_the_one_that_does():
    # Qwen3-Next at its own 262,144 tokens on an H100 (71.68 GiB, P 544, 1,455 page ids): 4
    # requests need more page ids than the pool has. Until a number is typed the map draws as
    # many as fit and says why; 4 typed get the warning, and the button shows that map.
    default = open_app("app_pages/layout.py")
    assert_clean(default)
    assert not default.warning and "req" not in default.query_params
    # the map counts the state pages as the top of the page does, by mamba cache mode (none:
    # 1 a request), so the two agree at first sight: the concurrency is 1,455 page ids over
    # ceil(262,144 / 544) = 482 history pages + 1 state page a request, 3.01; the map's 3
    # requests take full ceil(3 x 262,144 / 544) + 3 + 1 = 1,450 and state 3 x 1 + 1 = 4
    # pages (a dummy page a group), 1,454 of the 1,455 ids; 4 take 1,933 + 5
    assert f"{1455 / (-(-262144 // 544) + 1):.2f}" == "3.01"
    assert (-(-3 * 262_144 // 544) + 3 + 1, 3 * 1 + 1) == (1450, 4)
    assert -(-4 * 262_144 // 544) + 4 + 1 + 4 + 1 > 1455
    assert default.number_input(key="w.requests").value == 3
    assert default.radio(key="w.map_snapshots").value is False
    said = caption_starting(default, "The map draws 3")
    assert said.startswith(
        "The map draws 3 live requests of 262,144 tokens, not the default 4: 3 fit.\n\n"
        "Pages the groups need (history, the mode's state pages, one dummy page each): "
        f"{STATE_KIND}: 4, full attention: 1,450; 1,455 page ids in the pool.")
    assert said.endswith(
        "State is charged by mamba cache mode, as the engine's log, Budget and Compare count "
        "it: none (1 state page) per request, and a dummy page. The 3.01 requests at the top "
        "of the page count these pages without the map's dummy pages and its page more a "
        "request. With state prefix caching (\"State pages\" above), a request also keeps a "
        "snapshot every P tokens.")
    (chart,) = [json.loads(c.proto.spec) for c in default.get("plotly_chart")
                if "All 1,455 page ids" in c.proto.spec]
    assert [t["name"] for t in chart["data"][1:]] == [
        "full attention: 1,450 pages", f"{STATE_KIND}: 4 pages", "free: 1 page"]
    # the other count a click away, in the link: with state prefix caching a request keeps
    # two live pages and a snapshot every P tokens (SPEC 3.5), and one request fits: history
    # ceil(262,144 / 544) + 1 + 1 = 484; state min(2 x 1 + 262,144 // 544 + 1, 484) = 484
    default.radio(key="w.map_snapshots").set_value(True).run()
    assert_clean(default)
    assert default.query_params["snap"] == "1"
    assert default.number_input(key="w.requests").value == 1
    said = caption_starting(default, "The map draws 1")
    assert said.startswith(
        "The map draws 1 live request of 262,144 tokens, not the default 4: 1 fits with its "
        "state snapshots. The 3.01 requests at the top of the page count the state pages as the "
        "engine's log does (the last paragraph here).\n\nPages the groups ")
    assert f"{STATE_KIND}: {min(2 + 262_144 // 544 + 1, 482 + 2)}, full attention: " \
        f"{-(-262_144 // 544) + 1 + 1}" in said
    assert said.endswith("Budget and Compare count the state pages of mamba cache mode none (1 "
                         "state page) per request, as the engine's log does, and hold 3.01 "
                         "requests of 262,144 tokens: \"State pages\" above draws that count.")
    # the link restores it; back to the default, the link drops it
    again = open_app("app_pages/layout.py", {"snap": "1"})
    assert again.radio(key="w.map_snapshots").value is True
    assert again.number_input(key="w.requests").value == 1
    default.radio(key="w.map_snapshots").set_value(False).run()
    assert "snap" not in default.query_params
    assert default.number_input(key="w.requests").value == 3
    # in mamba cache mode align with 2 checkpoint blocks, 2 + 2 state pages a request:
    # 1,455 / (482 + 4) = 2.99; the map: full 1,446 + 4 and state 3 x 4 + 1 = 13 for 3
    # requests, 1,463 > 1,455, so 2 fit; with snapshots, the caption says which pages it counts
    assert f"{1455 / (482 + 2 + 2):.2f}" == "2.99"
    assert 1450 + 3 * 4 + 1 > 1455
    align = open_app("app_pages/layout.py", {"mamba": "align", "ckpt": "2"})
    assert caption_starting(align, "The map draws 2 live requests").endswith(
        "Compare count it: align (2 state pages) + 2 checkpoint per request, and a dummy page. "
        "The 2.99 requests at the top of the page count these pages without the map's dummy "
        "pages and its page more a request. With state prefix caching (\"State pages\" "
        "above), a request also keeps a snapshot every P tokens.")
    align = open_app("app_pages/layout.py", {"mamba": "align", "ckpt": "2", "snap": "1"})
    assert any(c.value.startswith("The map draws 1 live request") and "The 2.99 requests at "
               "the top of the page count" in c.value and c.value.endswith(
                   "mamba cache mode align (2 state pages) + 2 checkpoint per request, as the "
                   "engine's log does, and hold 2.99 requests of 262,144 tokens: \"State "
                   "pages\" above draws that count.")
               for c in align.caption)
    # untyped, the field follows the context: 4 fit at 32,768 tokens, 3 again at 262,144
    default.text_input(key="w.context").set_value("32K").run()
    assert default.number_input(key="w.requests").value == 4
    assert not [c for c in default.caption if "The map draws" in c.value]
    default.text_input(key="w.context").set_value("256K").run()
    assert default.number_input(key="w.requests").value == 3 and "req" not in default.query_params
    # gpt-oss-20b at 32,768 tokens: its 4 fit, and the field says 4 (no caption); no state,
    # so no choice of state pages
    roomy = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "ctx": "32768"})
    assert roomy.number_input(key="w.requests").value == 4
    assert not [c for c in roomy.caption if "do not fit" in c.value]
    assert not [r for r in roomy.radio if r.key == "w.map_snapshots"]
    at = open_app("app_pages/layout.py", {"req": "4"})
    assert_clean(at)
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("This workload does not fit in this budget: it holds at most 3 "
                              "requests of 262,144 tokens; lower the live requests")
    at.button(key="layout.fit").click().run()
    assert_clean(at)
    assert at.query_params["req"] == "3" and not at.warning
    snap = open_app("app_pages/layout.py", {"req": "4", "snap": "1"})
    (warning,) = [w.value for w in snap.warning]
    assert warning.startswith("This workload with its state snapshots does not fit in this "
                              "budget: it holds at most 1 request of 262,144 tokens")


def test_layout_draws_vllms_one_group_of_two_page_sizes_without_its_hybrid_manager():
    # Gemma 4 (50 sliding layers of 16,384 B a token, 10 full of 8,192 B) with vLLM's hybrid
    # manager off: one group of 60 tensors, a block 50 x 16 x 16,384 + 10 x 16 x 8,192 =
    # 14,417,920 B at P 16; 76,968,728,985 // that = 5,338 blocks, 2,048 a request of 32,768
    from test_hf_config import _gemma4

    from flatkv import app_model
    link = {"model": "spec", "spec": app_model.pack_spec(app_model.spec_to_json(_gemma4())),
            "v_hybrid": "0", "ctx": "32768"}
    at = open_app("app_pages/layout.py", link)
    assert_clean(at)
    assert 50 * 16 * 16_384 + 10 * 16 * 8_192 == 14_417_920
    assert 76_968_728_985 // 14_417_920 == 5_338
    text = caption_starting(at, "vLLM at these settings")
    assert text.startswith(
        "vLLM at these settings (Compare's row): P 16, pages of two sizes in 60 tensors, one "
        "a layer: 10 of 131,072 B and 50 of 262,144 B (its hybrid KV cache manager off: every "
        "layer in one group). A block id is 60 pages, 14,417,920 B (13.75 MiB, 901,120 B a "
        "token)")
    (rows,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if "One row per vLLM group" in c.proto.spec]
    (kv,) = [t for t in rows["data"] if t["name"] == "KV (full attention)"]
    # a bar a layer, each its own page: the 6th (cache layer 5, full) twice the others
    assert [round(w * 2**20) for w in kv["x"][:7]] == [262_144] * 5 + [131_072, 262_144]
    budget = open_app("app_pages/budget.py", {**link, "b_layout": "vllm"})
    assert metrics(budget)["Blocks"] == "5,338"
    assert metrics(budget)["Capacity (tokens)"] == f"{5_338 * 16:,}"
    assert metrics(budget)["Concurrency at 32,768 tokens"] == f"{5_338 / 2_048:.2f}" == "2.61"
    # the blocks vLLM logs, given as the budget: as many blocks of the pages' sum (the largest
    # page times 60 tensors made 5,338 typed blocks 5,823)
    logged = open_app("app_pages/budget.py", {**link, "b_layout": "vllm",
                                              "gpu": "vLLM KV cache blocks", "kv_blocks": "5338"})
    assert_clean(logged)
    assert metrics(logged)["Blocks"] == "5,338"
    assert logged.sidebar.metric[0].help == f"{5_338 * 14_417_920:,} B"


def test_layouts_capacity_help_speaks_of_state_only_where_the_model_has_state():
    # DeepSeek-V3 has no state layers; Qwen3-Next's default has 36 GDN layers of it
    dsv3 = open_app("app_pages/layout.py", {"model": "DeepSeek-V3"})
    assert_clean(dsv3)
    assert {m.label: m.help for m in dsv3.metric}["Capacity (tokens)"].startswith(
        "The history the pool holds (tokens), as Budget and Compare count it.")
    qwen = open_app("app_pages/layout.py")
    assert {m.label: m.help for m in qwen.metric}["Capacity (tokens)"].startswith(
        "The history the pool holds beside one request's state (tokens), as Budget")


def test_layout_and_compare_name_state_by_tensor_and_by_use_apart():
    # Qwen3-Next at the defaults: 1,455 blocks of 36 state rows of 1,097,728 B and 12 KV rows
    # of 544 x 2,048 B. Layout's icicle counts bytes by tensor, every block's rows whichever
    # group owns it: state rows 1,455 x 36 x 1,097,728 B = 53.55 GiB; Compare counts them by
    # use, the 3 page ids state owns: 3 x 36 x 1,097,728 B = 113.06 MiB. Both said "state"
    assert 1455 * 36 * 1_097_728 == 57_498_992_640
    assert f"{57_498_992_640 / 2**30:.2f}" == "53.55"
    assert (3 * 36 * 1_097_728, f"{3 * 36 * 1_097_728 / 2**20:.2f}") == (118_554_624, "113.06")
    at = open_app("app_pages/layout.py")
    tiles = bytes_tiles(at)
    assert tiles["linear_attention"] == ("state rows", 57_498_992_640)
    assert tiles["full_attention"] == ("full attention rows", 1455 * 12 * 544 * 2048)
    compare = open_app("app_pages/compare.py")
    (goes,) = [d.value.set_index("category (bytes)") for d in tables(compare)
               if "packed" in d.value.columns and "category (bytes)" in d.value.columns]
    assert goes.loc["state in use", "packed"] == 118_554_624
    assert "state" not in goes.index and "kv history" not in goes.index
    (bars,) = [json.loads(c.proto.spec) for c in compare.get("plotly_chart")
               if "Where the budget goes" in c.proto.spec]
    assert [t["name"] for t in bars["data"]][:2] == ["kv history in use", "state in use"]
