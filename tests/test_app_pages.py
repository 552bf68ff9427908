"""Every page through streamlit's AppTest: widgets drive the numbers shown, the URL holds the
view, bad input shows st.error. Expected figures are derived by hand (SPEC.md section 1)."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import string
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from flatkv import app_model, gpu_settings, gpu_view, strategy_notes
from flatkv.app_model import model_names
from flatkv.app_state import DEFAULT
from flatkv.presets import load_preset
from flatkv.units import format_bytes, markdown_literal

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ["app_pages/model.py", "app_pages/layout.py", "app_pages/budget.py", "app_pages/compare.py",
         "app_pages/gpu.py"]
# SPEC worked example on a custom 80 GB GPU, all of it for the cache, block 64, alignment 16.
QWEN35_LINK = {
    "model": "custom", "layers": "(3*linear,full)*12", "kv": "2048",
    "state": "conv=49152,ssm=2097152", "gpu": "Custom", "gpu_mem": "80GB", "frac": "1",
    "block": "64", "align": "16",
}
STATE_ROW = 49152 + 2097152


def open_app(page: str | None = None, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query or {})
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def unescaped(text: str) -> str:
    """Markdown text as the page shows it: user text is escaped for Markdown
    (units.markdown_literal), and the backslashes do not show."""
    return re.sub(r"\\(.)", r"\1", text)


def shown(element) -> str:
    return unescaped(element.value)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def caption_starting(at: AppTest, prefix: str) -> str:
    """The one caption of the page that starts with ``prefix``."""
    (caption,) = [c.value for c in at.caption if c.value.startswith(prefix)]
    return caption


def budget_caption(at: AppTest) -> str:
    """Budget's line under its inputs: the model, the layout and the options that act."""
    (line,) = [c.value for c in at.caption if c.value.endswith("are in the sidebar.")]
    return line


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [shown(e) for e in at.exception]
    assert not at.error, [shown(e) for e in at.error]


def test_layout_shows_the_worked_example_from_a_link():
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    assert_clean(at)
    m = metrics(at)
    assert m["P (tokens per page)"] == "1,056"  # ceil(2,146,304 / 2,048) = 1,048 -> x16
    assert m["Block bytes"] == "98.44 MiB"  # 103,219,200 B
    assert m["Blocks"] == "775"  # 80e9 // 103,219,200
    # the capacity of Budget and Compare: one page id holds a request's state pages (mode
    # none), the other 774 hold history: 774 x 1,056; the token slots under it, 775 x 1,056
    assert m["Capacity (tokens)"] == "817,344"
    deltas = {mm.label: mm.delta for mm in at.metric}
    assert deltas["Capacity (tokens)"] == "token slots 818,400 (blocks x P)"
    help_texts = {mm.label: mm.help for mm in at.metric}
    assert help_texts["Block bytes"] == "103,219,200 B"
    # by group: 36 state rows of 2,146,304 B and 12 KV rows of 1,056 x 2,048 B; a block one
    # group owns carries the other's rows dead
    groups = at.dataframe[0].value.set_index("group")
    state_rows, kv_rows = 36 * 2_146_304, 12 * 1056 * 2048
    assert (state_rows, kv_rows, state_rows + kv_rows) == (77_266_944, 25_952_256, 103_219_200)
    assert groups.loc["linear_attention"].tolist() == [36, state_rows, kv_rows,
                                                       f"{kv_rows / 103_219_200:.2%}"]
    assert groups.loc["full_attention"].tolist() == [12, kv_rows, state_rows,
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
    assert at.query_params["block"] == "64"  # the view stays in the URL
    # vLLM's blocks beside ours, at the link's block size 64: A = 64, P = 64 x cdiv(2,146,304,
    # 64 x 2,048) = 64 x 17 = 1,088; pages of 1,088 x 2,048 = 2,228,224 B, 12 a block id
    (vllm,) = [unescaped(c.value) for c in at.caption if c.value.startswith("vLLM at these")]
    assert vllm.startswith("vLLM at these settings (Compare's column): P 1,088, pages of "
                           "2,228,224 B in 12 tensors (group_size). A block id is 12 pages, "
                           "26,738,688 B (25.50 MiB, 24,576 B a token), and belongs to one of 4 "
                           "groups")
    (rows,) = [c for c in at.get("plotly_chart") if "One row per vLLM group" in c.proto.spec]
    assert "linear_attention.2" in rows.proto.spec and "2,228,224" in rows.proto.spec


def test_compare_sets_a_recent_vllms_defaults_in_one_click():
    # SPEC's anchor keeps 0.9 and mode none; the button under Engine options sets what a
    # recent vLLM starts a hybrid with, and the log follows (2 state pages a request)
    at = open_app("app_pages/compare.py")
    (button,) = [b for b in at.button if b.label == "Use vLLM 0.34's defaults"]
    assert button.help.startswith(
        "Sets block size 64 (vLLM 0.34's default --block-size), mamba cache mode align (vLLM "
        "0.28 and later start a hybrid with prefix caching on) and 1 prefill checkpoint block "
        "(vLLM 0.33 and later, for GDN layers, whose prefill runs on FlashInfer on the H100 "
        "80GB), to match")
    # the budget stays: 0.34 sizes its cache after warm-up, which the help says how to give
    assert button.help.endswith("pick \"vLLM KV cache blocks\" in the sidebar and give the N "
                                "of its \"Memory after warmup: ... N KV cache blocks (X GiB) "
                                "fit\" line (0.20 to 0.33: memory fraction 0.92).")
    button.click().run()
    assert_clean(at)
    assert (at.query_params["mamba"], at.query_params["block"]) == ("align", "64")
    assert "frac" not in at.query_params
    assert not [b for b in at.button if b.label == "Use vLLM 0.34's defaults"]
    assert any("It counts mamba cache mode align, as set here." in c.value for c in at.caption)
    # Qwen3-Next on the H100 (76,968,728,985 B): P = 64 x cdiv(1,097,728, 64 x 2,048) = 576,
    # blocks of 12 layers' pages, 76,968,728,985 // (12 x 576 x 2,048) = 5,437; a request of
    # 262,144 tokens holds 456 full pages and 3 state groups x (2 + 1 checkpoint) = 465
    assert at.query_params["ckpt"] == "1"
    table = at.dataframe[0].value.set_index("strategy")
    assert 76_968_728_985 // (12 * 576 * 2048) == 5_437 and -(-262_144 // 576) == 456
    assert table.loc["vLLM v1", "concurrency"] == round(5_437 / 465, 2) == 11.69
    # the expander says whose defaults it now holds
    assert caption_starting(at, "vLLM 0.34's own defaults for this model, as in a log of it "
                            "run with them")
    assert not [c for c in at.caption if c.value.startswith("vLLM 0.19's settings")]
    # a Mamba2 model also gets its prefill checkpoint block (vLLM 0.32 and later): Nemotron-H-8B
    # in 40 GiB at 8,192 tokens, P = 64 x cdiv(2,158,592, 64 x 4,096) = 576, 40 GiB //
    # 2,359,296 B pages // 4 layers a group = 4,551 blocks, a request 8,192 / 576 -> 15 pages
    # + 6 state groups x (2 + 1) pages = 33: 137.91x, as vLLM 0.34 computes it
    link = {"model": "Nemotron-H-8B", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "ctx": "8192"}
    nemotron = open_app("app_pages/compare.py", link)
    (button,) = [b for b in nemotron.button if b.label == "Use vLLM 0.34's defaults"]
    assert button.help.startswith("Sets block size 64 (vLLM 0.34's default --block-size), mamba "
                                  "cache mode align (vLLM 0.28 and later start a hybrid with "
                                  "prefix caching on) and 1 prefill checkpoint block (vLLM 0.32 "
                                  "and later, for Mamba2 layers), to match")
    button.click().run()
    assert_clean(nemotron)
    assert nemotron.query_params["block"] == "64"
    table = nemotron.dataframe[0].value.set_index("strategy")
    assert 40 * 2**30 // (576 * 4_096) // 4 == 4_551 and -(-8_192 // 576) + 6 * 3 == 33
    assert table.loc["vLLM v1", "concurrency"] == round(4_551 / 33, 2) == 137.91


def test_compare_counts_vllms_async_scheduling_for_a_sliding_model():
    # gpt-oss-20b in 40 GiB at block 64: the recent defaults turn async scheduling on (two
    # batches in flight in the window pages), 27,306 / (2,048 + 259) = 11.84x, as vLLM 0.34
    link = {"model": "gpt-oss-20b", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "block": "64"}
    at = open_app("app_pages/compare.py", link)
    (button,) = [b for b in at.button if b.label == "Use vLLM 0.34's defaults"]
    assert button.help.startswith("Sets async scheduling (two batches in flight in the window "
                                  "pages, vLLM 0.26 and later), to match")
    assert at.toggle(key="w.vllm_async_scheduling").value is False
    button.click().run()
    assert_clean(at)
    assert at.query_params["v_async"] == "1" and at.toggle(key="w.vllm_async_scheduling").value
    table = at.dataframe[0].value.set_index("strategy")
    assert table.loc["vLLM v1", "concurrency"] == round(27_306 / 2_307, 2) == 11.84


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
        "26,738,688 B block vLLM holds back as its null block (\"To serve at least one request "
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


def test_url_round_trip_reopens_the_same_view():
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    at.sidebar.number_input(key="w.block_size").set_value(2048).run()
    at.sidebar.number_input(key="w.tp").set_value(2).run()
    link = dict(at.query_params)
    assert link["block"] == "2048" and link["tp"] == "2" and link["layers"] == (
        "(3*linear,full)*12")
    again = open_app("app_pages/layout.py", link)
    assert_clean(again)
    assert metrics(again) == metrics(at)
    assert not again.warning


def test_bad_link_values_fall_back_with_a_notice():
    at = open_app(None, {"block": "lots", "model": "GPT-9", "zoom": "1", "ctx": "32768"})
    assert not at.exception and not at.warning
    # bad input, so st.error, though the page goes on with the defaults
    notices = " ".join(shown(e) for e in at.error)
    assert "block='lots' is not a whole number" in notices
    assert "'GPT-9' is not a known model" in notices
    assert "zoom" in notices
    at.switch_page("app_pages/layout.py").run()
    # Qwen3-Next defaults: state 49,152 + 1,048,576 B over 2,048 B/slot -> 537 -> x16 = 544
    assert metrics(at)["P (tokens per page)"] == "544"
    assert not at.error  # the notice is shown once
    # a setting given twice: the last counts, and the page says so
    twice = open_app(None, {"tp": ["2", "4"], "model": "Qwen3-Next-80B-A3B"})
    assert [shown(e) for e in twice.error] == [
        "The link gives tp 2 times (2, 4): using the last, tp=4."]
    assert twice.session_state["flatkv.state"].tp == 4


def test_bad_inputs_show_st_error_not_a_traceback():
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    at.sidebar.text_input(key="w.gpu_memory").set_value("lots").run()
    assert not at.exception
    assert any("GPU memory 'lots' is not a size" in shown(e) for e in at.error)
    # the page says its figures do not use the rejected entry, whichever page it is
    rejected = ('Rejected: "GPU memory". Until fixed, every figure uses the last valid value; '
                "the error shows under the field.")
    assert [shown(w) for w in at.warning] == [rejected]
    at.switch_page("app_pages/compare.py").run()
    assert [shown(w) for w in at.warning] == [rejected]
    at.switch_page("app_pages/layout.py").run()
    # a GPU from the list hides the field and its entry: the figures are current, no warning
    hidden = open_app("app_pages/layout.py", QWEN35_LINK)
    hidden.sidebar.text_input(key="w.gpu_memory").set_value("lots").run()
    hidden.sidebar.selectbox(key="w.gpu").set_value("H200 141GB").run()
    assert not hidden.warning and not hidden.error
    hidden.switch_page("app_pages/compare.py").run()
    assert not hidden.warning
    # the error names the field by its label, as the warning does
    hidden.sidebar.text_input(key="w.weights").set_value("80").run()  # 80 B? never meant
    assert any(shown(e) == "Model weights '80' reads as 80 B: give a unit, e.g. 80GB or 80GiB"
               for e in hidden.error)
    hidden.sidebar.text_input(key="w.weights").set_value("abc").run()
    assert any(shown(e).startswith("Model weights 'abc' is not a size") for e in hidden.error)
    assert not any("Model weights 0 B" in c.value for c in hidden.sidebar.caption)
    assert [shown(w) for w in hidden.warning] == [rejected.replace("GPU memory",
                                                                   "Model weights (all ranks)")]
    # 0 is refused under the field like any other bad size, and never reaches the link
    at.sidebar.text_input(key="w.gpu_memory").set_value("0").run()
    assert any(shown(e) == "GPU memory is 0: give the memory of one GPU, e.g. 80GB or 141GB"
               for e in at.error)
    assert "gpu_mem" not in at.query_params  # still the default 80GB, which links leave out
    # a budget too small for two blocks: the planner's message, as st.error
    at.sidebar.text_input(key="w.gpu_memory").set_value("100MB").run()
    assert not at.exception
    assert any("a plan needs at least 2" in shown(e) for e in at.error)
    # weights that fill the GPU
    at.sidebar.text_input(key="w.gpu_memory").set_value("80GB").run()
    at.sidebar.text_input(key="w.weights").set_value("200GB").run()
    assert not at.exception
    assert any("fill the usable memory" in shown(e) for e in at.error)


def test_budget_keeps_its_own_settings_when_the_weights_fill_the_gpu():
    at = open_app("app_pages/budget.py", {"weights": "160GB"})
    assert not at.exception
    # 160 GB over the H100's 76,968,728,985 usable bytes: TP 2 leaves 80 GB a rank, too much;
    # TP 3 would leave room but does not split Qwen3-Next's 16 GDN key heads: TP 4
    assert [shown(e) for e in at.error] == [
        "weights per rank (149.01 GiB) fill the usable memory (71.68 GiB): raise TP (4 is the "
        "least that splits the model and leaves room), the memory fraction, or pick a larger "
        "GPU"]
    assert at.selectbox(key="w.budget_strategy") and at.text_input(key="w.context")
    assert [e.label for e in at.expander] == ["Engine options"]  # flat reads the mamba mode


def test_model_page_edits_raw_bytes_and_rejects_a_bad_pattern():
    at = open_app("app_pages/model.py")
    assert_clean(at)
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    # a bad value, then the model's own typed back: the preset stays (not a "custom" copy)
    kv = at.number_input(key="edit.kv").value
    at.number_input(key="edit.kv").set_value(-1).run()
    assert at.number_input(key="edit.kv").value == -1 and at.error
    at.number_input(key="edit.kv").set_value(kv).run()
    assert_clean(at)
    assert "model" not in at.query_params and "kv" not in at.query_params
    at.text_input(key="edit.layers").set_value("full*x").run()
    assert not at.exception
    assert any("layer pattern 'full*x'" in shown(e) for e in at.error)
    at.text_input(key="edit.layers").set_value("full*32").run()
    at.text_input(key="edit.state").set_value("").run()
    at.number_input(key="edit.kv").set_value(4096).run()
    assert_clean(at)
    assert metrics(at)["Cache layers"] == "32"
    assert at.query_params["layers"] == "full*32" and at.query_params["kv"] == "4096"
    at.switch_page("app_pages/layout.py").run()
    # full*32 at 4,096 B/slot, block 16: 32 x 4,096 x 16 = 2,097,152 B per block
    assert metrics(at)["Block bytes"] == "2.00 MiB"
    # an emptied number is refused, not read as 0 (no sliding window, no KV): the model stays
    at.switch_page("app_pages/model.py").run()
    at.number_input(key="edit.kv").set_value(None).run()
    assert not at.exception
    assert any(shown(e) == "KV bytes per token per layer is empty: give a whole number. Until "
               "it is fixed, every page (and the summary below) shows the last valid model."
               for e in at.error)
    assert at.query_params["kv"] == "4096"
    at.number_input(key="edit.kv").set_value(4096).run()
    # what the user typed is quoted back as typed, even a field's name
    at.text_input(key="edit.layers").set_value("layer_types*2").run()
    assert [shown(e) for e in at.error][0].startswith(
        "layer pattern 'layer_types*2' has unknown layer kind 'layer_types': use one of")
    at.text_input(key="edit.layers").set_value("full*32").run()
    # the profile's refusals name its fields as the editor labels them
    at.number_input(key="edit.window").set_value(100).run()
    assert [shown(e) for e in at.error] == [
        '"Sliding window" is 100 but "Layer pattern" has no sliding_attention layer: drop '
        '"Sliding window" or add sliding_attention layers. Until it is fixed, every page (and '
        'the summary below) shows the last valid model.']
    # a None is the field's 0, and the command line's flag is not the editor's to name
    at.number_input(key="edit.window").set_value(0).run()
    at.text_input(key="edit.layers").set_value("sliding*2").run()
    assert [shown(e) for e in at.error][0] == (
        '"Sliding window" is not set but the model has sliding_attention layers: give the '
        'window in tokens. Until it is fixed, every page (and the summary below) shows the '
        'last valid model.')
    at.number_input(key="edit.window").set_value(1024).run()
    at.number_input(key="edit.swa_kv").set_value(8192).run()
    assert [shown(e) for e in at.error][0].startswith(
        '"Sliding layers\' KV bytes" is 8192 but every attention layer slides: give their '
        'bytes as "KV bytes per token per layer", and "Sliding layers\' KV bytes" 0.')


STATE_WITHOUT_STATE_LAYERS = (
    "the layers '(sliding,full)*12' have no linear (state) layer to keep the state tensors "
    "conv=1000000000000: clear the state tensors, or add linear layers to the pattern")


def test_raw_bytes_refuse_state_tensors_no_layer_keeps():
    # gpt-oss-20b's layers keep no state: the Model page took conv=1e12 (a "custom" model in
    # the link) while Layout and Compare refused that model, so every page said another thing
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.state").set_value("conv=1e12").run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        f"{STATE_WITHOUT_STATE_LAYERS}. Until it is fixed, every page (and the summary below) "
        "shows the last valid model."]
    assert dict(at.query_params) == {"model": "gpt-oss-20b"}  # the preset stays
    # the same model from a link: a notice, and the default model (on Layout as on Compare)
    linked = open_app(query={
        "model": "custom", "layers": "(sliding,full)*12", "kv": "2048", "window": "128",
        "state": "conv=1000000000000"})
    assert [shown(e) for e in linked.error] == [
        f"The custom model in the link is not valid ({STATE_WITHOUT_STATE_LAYERS}); using the "
        "default model (Qwen3-Next-80B-A3B)."]
    assert metrics(linked.switch_page("app_pages/layout.py").run())["Blocks"] == "1,455"


def test_raw_bytes_drop_a_refused_entrys_error_when_another_model_fills_them():
    # the error of a KV entry refused on Qwen3-Next stayed under gpt-oss-20b's own 2,048 B,
    # saying that every page showed the last valid model
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.kv").set_value(-1).run()
    assert [shown(e) for e in at.error] == [
        "KV bytes per token per layer is -1: give a whole number of 0 or more. Until it is "
        "fixed, every page (and the summary below) shows the last valid model."]
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.selectbox(key="w.model").set_value("gpt-oss-20b").run()
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    assert_clean(at)
    assert at.number_input(key="edit.kv").value == 2048  # 8 KV heads x 64 x 2 (K, V) x 2 B

def test_a_model_json_whose_state_no_layer_keeps_is_not_loaded():
    # a raw model JSON was loaded into the link whole, and every other page refused it
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value(
        '{"format": "flatkv-profile/1", "name": "tiny", "layers": "full*2",'
        ' "kv_bytes_per_slot": 64, "state_const_bytes": {"conv": 5}}').run()
    at.button(key="model.load").click().run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "the layers '2*full' have no linear (state) layer to keep the state tensors conv=5: "
        "clear the state tensors, or add linear layers to the pattern. No model JSON was "
        "loaded: every page still shows Qwen3-Next-80B-A3B."]
    assert "model" not in at.query_params

def test_a_chunked_model_shows_its_chunk_and_edits_it_as_raw_bytes():
    at = open_app("app_pages/model.py", {"model": "Llama-4-Scout-17B-16E"})
    assert_clean(at)
    m = metrics(at)
    assert (m["Full attention"], m["Chunked attention"]) == ("12 layers", "36 layers")
    assert m["Attention chunk"] == "8,192 tokens"
    assert m["KV per token, all layers"] == "192.00 KiB"  # 48 layers x 4,096 B
    # not what every token of a long request costs: the chunked layers' share stops
    assert caption_starting(at, "Of the 192.00 KiB") == (
        app_model.windowed_kv_note(app_model.profile_for("Llama-4-Scout-17B-16E", None, 1)))
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    assert at.number_input(key="edit.chunk").value == 8192
    at.number_input(key="edit.chunk").set_value(4096).run()
    assert_clean(at)
    assert at.query_params["model"] == "custom" and at.query_params["attn_chunk"] == "4096"
    assert metrics(at)["Attention chunk"] == "4,096 tokens"
    # vLLM on the default H100 (76,968,728,985 B) at 131,072 tokens: blocks of 12 pages of
    # 16 x 4,096 B over 8,192 full pages and 3 chunked groups of ceil((4,096 + 8,192) / 16) =
    # 768 pages a request
    compare = at.switch_page("app_pages/compare.py").run()
    compare.text_input(key="w.context").set_value("131072").run()
    table = compare.dataframe[0].value.set_index("strategy")
    blocks = 76_968_728_985 // (16 * 4096) // 12
    assert blocks == 97_870
    assert table.loc["vLLM v1", "blocks"] == blocks
    assert table.loc["vLLM v1", "concurrency"] == round(blocks / (8192 + 3 * 768), 2) == 9.32
    # no chunk for chunked layers: refused, and the model stays
    at.switch_page("app_pages/model.py").run()
    at.number_input(key="edit.chunk").set_value(0).run()
    assert not at.exception
    assert any(shown(e).startswith('"Attention chunk" is not set but the model has '
                                   "chunked_attention layers") for e in at.error)
    assert at.query_params["attn_chunk"] == "4096"


def test_compare_turns_vllms_hybrid_manager_off():
    # Llama 4 Scout on the default H100 at 131,072 tokens: with the manager, 97,870 blocks of
    # 12 pages over 8,192 + 3 x 1,024 pages a request; without, one group of 48 layers
    at = open_app("app_pages/compare.py", {"model": "Llama-4-Scout-17B-16E", "ctx": "131072"})
    assert_clean(at)
    table = at.dataframe[0].value.set_index("strategy")
    assert table.loc["vLLM v1", "concurrency"] == round(97_870 / (8192 + 3 * 1024), 2) == 8.69
    at.toggle(key="w.vllm_hybrid_manager").set_value(False).run()
    assert_clean(at)
    assert at.query_params["v_hybrid"] == "0"
    assert at.caption[0].value.endswith("engine options: vLLM hybrid KV cache manager off")
    table = at.dataframe[0].value.set_index("strategy")
    blocks = 76_968_728_985 // (16 * 4096) // 48
    assert table.loc["vLLM v1", "blocks"] == blocks == 24_467
    assert table.loc["vLLM v1", "concurrency"] == round(blocks / 8192, 2) == 2.99
    # a state hybrid: vLLM does not start without it, and Compare says why
    qwen = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "v_hybrid": "0"})
    assert not qwen.exception
    assert any("vLLM v1** does not apply: with its hybrid KV cache manager off" in c.value
               for c in qwen.caption)


def test_compare_turns_sglangs_overlap_scheduling_off():
    # Qwen3-Next on the default H100 (76,968,728,985 B) at SGLang page 64: a state slot is 36
    # x 2,146,304 = 77,266,944 B, the state pool budget x 9 / 19 = 36,458,871,624 B holds 471
    # slots, 470 for requests; the extra buffer holds 3 + 2 a request with overlap scheduling
    # (470 // 5 = 94 running), 3 + 1 without (470 // 4 = 117)
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "ctx": "8192",
                                           "sg_page": "64"})
    assert_clean(at)
    assert 76_968_728_985 * 9 // 19 // (36 * 2_146_304) == 471
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang", "concurrency"] == 94
    at.toggle(key="w.sglang_overlap_schedule").set_value(False).run()
    assert_clean(at)
    assert at.query_params["sg_overlap"] == "0"
    assert at.caption[0].value.endswith(
        "engine options: SGLang overlap scheduling off, SGLang page size 64")
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang", "concurrency"] == 117


def test_table_columns_are_as_wide_as_their_largest_figure():
    # left to the grid, Compare's "Where the budget goes" sized vLLM's column by its header
    # and showed 76,968,493,056 B as "8,493,056" at 1000 px; each column now takes its widest
    # text at 6.8 px a character plus 24 px (a tooltip's icon 18 px more), at most 400 px
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(at)
    frame = at.dataframe[-1]
    columns = json.loads(frame.proto.columns)
    widths = {name: columns[name]["width"] for name in frame.value.columns}
    budget = frame.value.set_index("category (bytes)")
    shown = f"{int(budget.loc['kv history', 'vLLM v1']):,}"
    # vLLM's blocks: 12 layers' pages of 16 x 2,048 B, 76,968,728,985 // 393,216 = 195,741
    assert shown == f"{195_741 * 12 * 16 * 2048:,}" == "76,968,493,056"
    assert widths["vLLM v1"] == int(len(shown) * 6.8) + 24 == 119
    assert widths["FlatKV per component"] == int(len("FlatKV per component") * 6.8) + 24
    assert widths["category (bytes)"] == int(len("state page padding") * 6.8) + 24
    # FlatKV's two rows read the same here, and the page says why (test_app_data derives it)
    assert "(786,432 B at P 16), so they hold the same 97,870 blocks" in caption_starting(
        at, "FlatKV packed slabs and FlatKV per component read the same")


@dataclasses.dataclass(frozen=True)
class _AppStateOfAnOlderRelease:
    """What a session holds after the server reloads changed code: a view of the old class,
    without the fields added since (it crashed writing the link: no sglang_overlap_schedule)."""

    model: str = "Llama-3.1-8B"


def test_a_view_of_an_older_app_state_class_is_read_again_from_the_link():
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "sg_overlap": "0"})
    assert_clean(at)
    link = dict(at.query_params)
    at.session_state["flatkv.state"] = _AppStateOfAnOlderRelease()
    at.run()
    assert_clean(at)
    view = at.session_state["flatkv.state"]
    assert (view.model, view.sglang_overlap_schedule) == ("Qwen3-Next-80B-A3B", False)
    assert dict(at.query_params) == link


def test_model_editor_refuses_an_emptied_number():
    # gpt-oss-20b's sliding window emptied: not 0 (no window, every layer full), an error
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key="spec.sliding.sliding_window").set_value(None).run()
    assert not at.exception
    assert any(shown(e).startswith("sliding: sliding window is empty: give a whole number")
               for e in at.error)
    assert at.query_params.get("model", "gpt-oss-20b") == "gpt-oss-20b"  # still the preset
    at.number_input(key="spec.mamba_chunk_size").set_value(None).run()
    assert any(shown(e).startswith("mamba chunk size is empty") for e in at.error)


def test_model_editor_warns_of_a_kind_no_layer_uses():
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert not at.warning
    at.text_input(key="spec.pattern").set_value("24*full").run()
    assert not at.exception and not at.error
    assert [shown(w) for w in at.warning] == [
        "Kind 'sliding' is in no layer: the layer pattern does not name it, so it adds nothing "
        "to the model."]
    assert "Sliding window" not in metrics(at)  # the model is 24 full layers now


def test_captions_say_where_the_budget_comes_from():
    # a screenshot carries its assumptions: the H100's 85,520,809,984 B (79.65 GiB) x 0.9, the
    # weights (0 B unless entered), or the KV cache memory a log gave
    compare = open_app("app_pages/compare.py", {})
    assert shown(compare.caption[0]).startswith(
        "Qwen3-Next-80B-A3B · budget 76,968,728,985 B (71.68 GiB) per rank (79.65 GiB x 0.9, "
        "no weights entered: enter them in the sidebar) · ")
    layout = open_app("app_pages/layout.py", {"weights": "80GB", "tp": "2"})
    # 76,968,728,985 B usable - 40e9 B of weights per rank; the planner named as the sidebar does
    assert shown(layout.caption[0]) == (
        "Qwen3-Next-80B-A3B · packed slabs · budget 36,968,728,985 B (34.43 GiB) per rank "
        "(79.65 GiB x 0.9 - 37.25 GiB of weights per rank)")
    lab = open_app("app_pages/gpu.py", {"weights": "80GB", "tp": "2"})
    assert shown(layout.caption[0]) in [shown(c) for c in lab.caption]
    given = open_app("app_pages/compare.py", {"gpu": "KV cache memory", "kv_mem": "40GiB"})
    assert "per rank (KV cache memory as given) · " in shown(given.caption[0])


def test_layout_names_the_dead_weight_of_one_page():
    # Qwen3-Next at TP 1, P 544: a block holds 36 state rows of 49,152 + 1,048,576 B and 12 KV
    # rows of 2,048 x 544 B; a page the full group owns carries the 36 state rows idle
    at = open_app("app_pages/layout.py", {})
    state_rows, kv_rows = 36 * (49_152 + 1_048_576), 12 * 2_048 * 544
    assert metrics(at)["Dead share of a full_attention block"] == (
        f"{state_rows / (state_rows + kv_rows):.2%}") == "74.72%"


def test_text_a_user_typed_shows_as_typed_not_as_markdown():
    # a pattern quoted back in an error keeps its stars; a name keeps its stars, its $...$ and
    # its [x](url), which would otherwise render as emphasis, LaTeX and a link a URL carries
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.layers").set_value("(3*gdn,full)*").run()
    (error,) = at.error
    assert markdown_literal("'(3*gdn,full)*'") in error.value
    assert "'(3*gdn,full)*'" in shown(error)
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    name = "my*fancy*model $E=mc^2$ [x](http://a.example)"
    at.text_input(key="spec.name").set_value(name).run()
    assert_clean(at)
    escaped = markdown_literal(name)
    assert at.subheader[0].value == escaped and shown(at.subheader[0]) == name
    assert f"**{escaped}**" in at.sidebar.caption[0].value
    at.switch_page("app_pages/compare.py").run()
    assert at.caption[0].value.startswith(escaped + " · budget ")
    # an architecture in SGLang's reason for its pools
    arch = "My*Model[x](http://a.example)"
    gem = open_app("app_pages/compare.py", {
        "model": "custom", "layers": "(sliding,full)*4", "kv": "2048", "window": "128",
        "arch": arch})
    assert_clean(gem)
    (why,) = [c for c in gem.caption if shown(c).startswith("SGLang keeps every token")]
    assert markdown_literal(arch) in why.value and arch in shown(why)
    assert markdown_literal(arch) in gem.selectbox(key="w.sglang_swa_pool").help


def test_a_model_too_large_for_its_link_is_refused_not_written_into_a_dead_link():
    # a name typed long enough that the packed model passes what a link may carry: the link
    # written would reopen as the default model, so the edit is refused where it was made
    rng = random.Random(2)  # random letters: a long name of one letter packs small
    name = "".join(rng.choice(string.ascii_letters) for _ in range(12_000))
    at = open_app("app_pages/model.py", {"model": "Jamba-1.5-Mini"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.text_input(key="spec.name").set_value(name).run()
    (error,) = at.error
    assert "a link could not reopen it: shorten its name" in shown(error)
    assert at.query_params["model"] == "Jamba-1.5-Mini" and "spec" not in at.query_params
    at.text_input(key="spec.name").set_value("Jamba long context").run()  # a short name: taken
    assert_clean(at)
    reopened = open_app("app_pages/model.py", dict(at.query_params))
    assert_clean(reopened)
    assert shown(reopened.subheader[0]) == "Jamba long context"


def test_a_tp_that_does_not_split_the_model_leaves_the_editor_open():
    # Qwen3-Next's 16 GDN key heads do not split over TP 3: one error, and the kinds stay
    # editable (at TP 1) so the user can fix either
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "gdn.k_heads = 16 is not divisible by tp = 3: choose a tp that divides it (tp up to 64 "
        "that split the model: 1, 2, 4, 8, 16). Shown below at TP 1; the other pages "
        "need a TP that splits the model (the sidebar's)."]
    assert at.number_input(key="spec.gdn.k_heads").value == 16
    assert at.text_input(key="spec.pattern").value == "(3*gdn,full)*12"
    # the summary stays, at TP 1: 2 KV heads x (256 + 256) x 2 B = 2,048 B per token
    assert metrics(at)["Cache layers"] == "48"
    kinds = at.dataframe[0].value.set_index("name")
    assert kinds.loc["full", "KV B per token"] == 2_048  # a column with gaps: numbers
    assert pd.isna(kinds.loc["gdn", "KV B per token"])  # a state kind keeps no KV: a gap


def test_model_page_names_the_configs_mamba_ssm_dtype():
    at = open_app("app_pages/model.py", {"model": "Qwen3.5-27B"})
    assert any(" · config mamba_ssm_dtype: float32 (SGLang's ssm dtype) · " in shown(c)
               for c in at.caption)
    at = open_app("app_pages/model.py", {})  # Qwen3-Next's config names none
    assert not any("mamba_ssm_dtype:" in shown(c) for c in at.caption)


def test_model_page_shows_the_sliding_window():
    # gpt-oss-20b slides over 128 tokens (SPEC section 2); Llama has no sliding layer
    assert metrics(open_app("app_pages/model.py", {"model": "gpt-oss-20b"}))[
        "Sliding window"] == "128 tokens"
    assert "Sliding window" not in metrics(open_app("app_pages/model.py",
                                                    {"model": "Llama-3.1-8B"}))


def test_model_page_edits_heads_and_dtypes_of_a_preset():
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert_clean(at)
    # 8 KV heads -> 4: 4 x (128 + 128) x 2 B = 2,048 B per token per layer
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec" and "spec" in at.query_params
    kinds = at.dataframe[0].value
    assert kinds.iloc[0]["KV B per token"] == 2048
    # an altered preset no longer goes by the preset's name, here or in the link
    assert at.text_input(key="spec.name").value == "Llama-3.1-8B (edited)"
    assert shown(at.subheader[0]) == "Llama-3.1-8B (edited)"
    assert "Llama-3.1-8B (edited)" in shown(at.sidebar.caption[0])
    at.text_input(key="spec.name").set_value("Llama-3.1-8B").run()  # not while it differs
    assert shown(at.subheader[0]) == "Llama-3.1-8B (edited)"
    at.number_input(key="spec.full.kv_heads").set_value(8).run()  # changed back: the preset
    assert shown(at.subheader[0]) == "Llama-3.1-8B"
    at.selectbox(key="spec.ssm_dtype").set_value("float32").run()  # no state layer: no change
    assert shown(at.subheader[0]) == "Llama-3.1-8B"
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    # the picker names fp8 as the engines' --kv-cache-dtype does, beside torch's name
    assert at.selectbox(key="spec.kv_dtype").options[3:5] == ["float8_e4m3fn (fp8)",
                                                              "float8_e5m2 (fp8_e5m2)"]
    at.selectbox(key="spec.kv_dtype").set_value("float8_e4m3fn").run()
    assert at.dataframe[0].value.iloc[0]["KV B per token"] == 1024
    assert shown(at.subheader[0]) == "Llama-3.1-8B (edited)"
    # 64 KV heads under Llama's 32 query heads: no model, refused as the config reader does
    at.number_input(key="spec.full.kv_heads").set_value(64).run()
    assert [shown(e) for e in at.error if "kv_heads" in shown(e)] == [
        "attention_heads = 32 is not a multiple of full.kv_heads = 64: no engine loads such a "
        "model; check the model's heads, or leave attention_heads unset (0 in the Model page's "
        "editor). Until it is fixed, "
        "every page (and the summary below) shows the last valid model."]
    assert at.dataframe[0].value.iloc[0]["KV B per token"] == 1024
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    # a pattern over an unknown kind name: the spec's own message, as st.error
    at.text_input(key="spec.pattern").set_value("full*30,mamba*2").run()
    assert not at.exception
    assert any("unknown kind" in shown(e) for e in at.error)
    # the link reopens the edited model
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert_clean(again)
    assert again.dataframe[0].value.iloc[0]["KV B per token"] == 1024


def test_the_model_summary_gives_kv_per_token_and_state_per_request():
    # Nemotron-H-8B (SPEC.md section 2): 4 attention layers of 8 KV heads x (128 + 128) x 2 B,
    # 24 Mamba2 layers of conv (8,192 + 2 x 8 x 128) x 3 x 2 B + ssm 128 x 64 x 128 x 2 B
    at = open_app("app_pages/model.py", {"model": "Nemotron-H-8B"})
    m = {e.label: (e.value, e.help) for e in at.metric}
    kv, state = 4 * 8 * 256 * 2, 24 * (10_240 * 3 * 2 + 128 * 64 * 128 * 2)
    assert (kv, state) == (16_384, 51_806_208)  # python -m flatkv model's "all layers"
    assert m["KV per token, all layers"] == ("16.00 KiB",
                                             f"{kv:,} B: every attention layer, one TP rank")
    assert m["State per request"] == ("49.41 MiB", f"{state:,} B: every state layer, one TP "
                                      "rank")
    assert f"{state / 2**20:.2f}" == "49.41"
    # TP 2 halves both; a model without state has no state figure
    tp2 = open_app("app_pages/model.py", {"model": "Nemotron-H-8B", "tp": "2"})
    assert {e.label: e.value for e in tp2.metric}["KV per token, all layers"] == "8.00 KiB"
    llama = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    assert "State per request" not in {e.label for e in llama.metric}


def test_the_editor_keeps_and_edits_the_mamba_chunk():
    # Nemotron-H's chunk 128 comes with the preset; 256 is an edit the link carries, and vLLM
    # in mode all aligns P to it: 256 x cdiv(2,158,592, 256 x 4,096) = 768 (640 at 128)
    at = open_app("app_pages/model.py", {"model": "Nemotron-H-8B", "mamba": "all"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.number_input(key="spec.mamba_chunk_size").value == 128
    at.number_input(key="spec.mamba_chunk_size").set_value(256).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    compare = open_app("app_pages/compare.py", dict(at.query_params))
    assert compare.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 768
    # 0: none in the config, so vLLM's 2,048: P = 2,048 x cdiv(2,158,592, 2,048 x 4,096)
    at.number_input(key="spec.mamba_chunk_size").set_value(0).run()
    assert_clean(at)
    compare = open_app("app_pages/compare.py", dict(at.query_params))
    assert compare.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 2048


def test_the_editor_keeps_and_edits_the_max_model_len():
    # Qwen3-Next's 262,144 comes with the preset; 131,072 is an edit: the model is renamed,
    # and every page counts a request at the new length until a context is typed
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.number_input(key="spec.max_model_len").value == 262_144
    at.number_input(key="spec.max_model_len").set_value(131_072).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    assert unescaped(at.subheader[0].value) == "Qwen3-Next-80B-A3B (edited)"
    budget = open_app("app_pages/budget.py", dict(at.query_params))
    assert budget.text_input(key="w.context").value == "131,072"
    assert "Concurrency at 131,072 tokens" in metrics(budget)
    # 0: the preset's own length again (its config's), under the preset's name; a model with
    # no config would have none (tests/test_app_state.py), counted at 32,768
    at.number_input(key="spec.max_model_len").set_value(0).run()
    assert_clean(at)
    assert at.number_input(key="spec.max_model_len").value == 262_144
    assert unescaped(at.subheader[0].value) == "Qwen3-Next-80B-A3B"
    budget = open_app("app_pages/budget.py", dict(at.query_params))
    assert budget.text_input(key="w.context").value == "262,144"



@pytest.mark.parametrize(("field", "value", "said"), [
    ("max_model_len", 2**40 + 1, "max_model_len = 1099511627777 is too large to be real "
     "(at most 1,099,511,627,776)"),
    ("mamba_chunk_size", 2**20 + 1, "the model's mamba_chunk_size = 1048577 is too large to "
     "be real (at most 1,048,576)"),
])
def test_the_editor_says_why_a_length_or_chunk_past_its_bound_is_refused(field, value, said):
    # a bound given to streamlit kept the entry on screen unsent: the error went on naming the
    # entry before it (or called the field empty), never this one
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key=f"spec.{field}").set_value(-5).run()
    at.number_input(key=f"spec.{field}").set_value(value).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        f"{said}; check the model's value. Until it is fixed, every page (and the summary "
        "below) shows the last valid model."]
    assert "model" not in at.query_params  # the preset stays the model


FROM_CONFIG = "tokens (vLLM's default `--max-model-len`, from the config)"
TYPED = "tokens (typed in the editor: the pages count at it as vLLM's `--max-model-len`)"


def length_caption(at: AppTest) -> str:
    """The summary's max_model_len part, as the page shows it."""
    caption = unescaped(caption_starting(at, "Per TP rank"))
    return next(p for p in caption.split(" · ") if p.startswith("max_model_len"))


def test_the_summary_says_where_a_presets_max_model_len_comes_from_after_an_edit():
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    assert length_caption(at) == f"max_model_len 262,144 {FROM_CONFIG}"
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    # another field edited: the preset's own length, still its config's
    at.number_input(key="spec.attention_heads").set_value(8).run()
    assert_clean(at)
    assert unescaped(at.subheader[0].value) == "Qwen3-Next-80B-A3B (edited)"
    assert length_caption(at) == f"max_model_len 262,144 {FROM_CONFIG}"
    # the length typed: said so, and a link keeps it so
    at.number_input(key="spec.max_model_len").set_value(131_072).run()
    assert_clean(at)
    assert length_caption(at) == f"max_model_len 131,072 {TYPED}"
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert length_caption(again) == f"max_model_len 131,072 {TYPED}"


def open_falcon_mamba_config() -> AppTest:
    """The Model page with falcon-mamba-7b's config.json loaded: it gives no length field, so
    vLLM (and SGLang) assume 2,048 tokens."""
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(json.dumps({
        "model_type": "falcon_mamba", "num_hidden_layers": 64, "hidden_size": 4096,
        "intermediate_size": 8192, "state_size": 16, "conv_kernel": 4,
        "torch_dtype": "bfloat16", "architectures": ["FalconMambaForCausalLM"]})).run()
    at.button(key="hf.load").click().run()
    return at


def test_the_summary_says_a_no_length_configs_2048_is_assumed_until_a_length_is_typed():
    # falcon-mamba-7b's config.json gives no length field: vLLM assumes 2,048
    at = open_falcon_mamba_config()
    assert_clean(at)
    assumed = ("max_model_len 2,048 tokens, assumed (vLLM's default `--max-model-len` where "
               "the config gives no length: see the note)")
    assert length_caption(at) == assumed
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    # 0 typed: the length as loaded, still vLLM's assumed 2,048 (not the 32,768 of no length)
    at.number_input(key="spec.max_model_len").set_value(0).run()
    assert_clean(at)
    assert at.number_input(key="spec.max_model_len").value == 2_048
    assert length_caption(at) == assumed
    at.number_input(key="spec.max_model_len").set_value(8_192).run()
    assert_clean(at)
    assert length_caption(at) == f"max_model_len 8,192 {TYPED}"
    # 0: the length as loaded, vLLM's assumed 2,048 (not 32,768), said to be assumed
    at.number_input(key="spec.max_model_len").set_value(0).run()
    assert_clean(at)
    assert at.number_input(key="spec.max_model_len").value == 2_048
    assert length_caption(at) == assumed
    budget = open_app("app_pages/budget.py", dict(at.query_params))
    assert budget.text_input(key="w.context").value == "2,048"


def test_the_editor_keeps_and_edits_the_attention_heads():
    # Llama's 32 query heads come with the preset; 24 heads do not split over TP 16 (8 KV heads
    # would): the edit is refused with the reason, the model stays at 32
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "16"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.number_input(key="spec.attention_heads").value == 32
    at.number_input(key="spec.attention_heads").set_value(24).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "The sidebar's TP does not split it: attention_heads = 24 is not divisible by tp = 16: "
        "choose a tp that divides it, as engines split the query heads over the ranks (tp up "
        "to 64 that split the model: 1, 2, 4, 8, 24). Until it is fixed, every page (and the "
        "summary below) shows the last valid model."]
    assert at.query_params["model"] == "Llama-3.1-8B"
    # 0: not checked, so any TP the KV heads take; the link carries the edit
    at.number_input(key="spec.attention_heads").set_value(0).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    again = open_app("app_pages/model.py", {**at.query_params, "tp": "48"})
    assert_clean(again)  # 8 KV heads, each on 6 of 48 ranks
    assert any("attention heads" not in c.value and c.value.startswith("Per TP rank (TP 48)")
               for c in again.caption)


def test_an_edit_the_model_itself_refuses_is_not_blamed_on_the_tp():
    # at TP 2, two full kinds of 8 and 4 KV heads (x (128 + 128) x 2 B) plan at no TP: the
    # error is the model's own, in bytes, not "The sidebar's TP does not split it"
    at = open_app("app_pages/model.py", {"tp": "2"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.button(key="spec.scratch").click().run()
    for _ in range(2):
        at.selectbox(key="spec.new.type").set_value("full attention")
        at.button(key="spec.add").click().run()
    at.number_input(key="spec.full_2.kv_heads").set_value(4).run()
    at.text_input(key="spec.pattern").set_value("full,full_2").run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "attention layers of 'my model' differ in bytes per token (full: 4,096 B; full_2: "
        "2,048 B): the planner takes one size for full and chunked layers; give those kinds "
        "the same geometry. Until it is fixed, every page (and the summary below) shows the "
        "last valid model."]


def built_by_hand(templates: tuple[str, ...], pattern: str,
                  fields: tuple[tuple[str, int], ...] = ()) -> AppTest:
    """The Model page's editor from scratch: a kind of each template, ``fields`` set (``kind.field``
    keys), then the layer pattern; clean at each step."""
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.button(key="spec.scratch").click().run()
    for template in templates:
        at.selectbox(key="spec.new.type").set_value(template)
        at.button(key="spec.add").click().run()
    for key, value in fields:
        at.number_input(key=f"spec.{key}").set_value(value).run()
    assert_clean(at)
    at.text_input(key="spec.pattern").set_value(pattern).run()
    assert_clean(at)
    return at


def _in_page_order(block):
    """The page's elements top to bottom (AppTest keeps them in a tree)."""
    for child in getattr(block, "children", {}).values():
        yield child
        yield from _in_page_order(child)


def test_model_editor_shows_an_error_where_the_edit_was_made():
    # a bad layer pattern: its error under the pattern's rows, above the kinds (at the foot of
    # the editor it sat some 800 px below the field at 1000 px); a kind's bad field: under
    # that kind's fields
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.text_input(key="spec.pattern").set_value("3*gdn,bogus").run()

    def places() -> list[str]:
        return [("error" if type(e).__name__ == "Error" else e.value)
                for e in _in_page_order(at.main)
                if type(e).__name__ == "Error" or (type(e).__name__ == "Markdown"
                                                   and e.value.startswith("**"))]

    assert at.error[0].value.startswith("layer pattern names unknown kind")
    assert places()[:3] == ["error", "**gdn** · gdn", "**full** · attention"]
    at.text_input(key="spec.pattern").set_value("(3*gdn,full)*12").run()
    assert not at.error
    at.number_input(key="spec.gdn.conv_kernel").set_value(-1).run()
    assert places()[:3] == ["**gdn** · gdn", "error", "**full** · attention"]
    # a kind may be named "top" or "new": a place of its own still, the error shown once
    at.number_input(key="spec.gdn.conv_kernel").set_value(4).run()
    at.selectbox(key="spec.new.type").set_value("full attention")
    at.text_input(key="spec.new.name").set_value("top")
    at.button(key="spec.add").click().run()
    at.text_input(key="spec.pattern").set_value("(3*gdn,full)*12,bogus").run()
    assert places().count("error") == 1 and places()[0] == "error"


def test_model_page_builds_a_short_convolution_hybrid_by_hand():
    # LFM2-style: the "short conv" kind keeps a conv state only, (channels, K - 1)
    at = built_by_hand(("full attention", "short conv"), "(2*conv,full)*2", (
        ("full.kv_heads", 8), ("full.head_dim_k", 64), ("full.head_dim_v", 64)))
    assert at.number_input(key="spec.conv.channels").value == 2048  # the template's
    kinds = at.dataframe[0].value.set_index("name")
    # (2,048, 3 - 1) x 2 B = 8,192 B a layer; no ssm tensor, so no ssm column
    assert kinds.loc["conv", "state B per layer"] == 2048 * 2 * 2 == 8_192
    assert kinds.loc["conv", "conv shape"] == "2048 x 2" and "ssm shape" not in kinds.columns
    assert {m.label: m.value for m in at.metric}["State per request"] == "32.00 KiB"  # 4 x 8 KiB
    assert any("cache dtypes: KV bfloat16, conv bfloat16 · " in c.value for c in at.caption)
    assert_clean(open_app("app_pages/compare.py", dict(at.query_params)))


def test_model_page_builds_a_lightning_attention_hybrid_by_hand():
    # MiniMax-style: the "lightning" kind keeps an ssm state only, (heads, head_dim, head_dim)
    at = built_by_hand(("full attention", "lightning"), "(7*lightning,full)*2")
    assert at.number_input(key="spec.lightning.heads").value == 64  # the template's
    kinds = at.dataframe[0].value.set_index("name")
    # (64, 128, 128) x 2 B = 2,097,152 B a layer; no conv tensor, so no conv column
    assert kinds.loc["lightning", "state B per layer"] == 64 * 128 * 128 * 2
    assert kinds.loc["lightning", "ssm shape"] == "64 x 128 x 128"
    assert "conv shape" not in kinds.columns
    assert {m.label: m.value for m in at.metric}["State per request"] == "28.00 MiB"  # 14 x 2
    # the dtypes of the state tensors it keeps: no conv dtype to name
    assert any("cache dtypes: KV bfloat16, ssm bfloat16 · " in c.value for c in at.caption)
    compare = open_app("app_pages/compare.py", dict(at.query_params))
    assert_clean(compare)
    assert any("**SGLang** does not apply: the state layers keep no conv state" in c.value
               for c in compare.caption)


def test_model_page_gives_an_mla_kind_the_lightning_indexer_by_hand():
    # DeepSeek-V3.2-style: MLA's index head dim (0 = none) adds 128 + 4 B a token per layer
    plain = built_by_hand(("MLA",), "4*mla")
    assert plain.number_input(key="spec.mla.index_head_dim").value == 0  # none: plain MLA
    assert plain.dataframe[0].value.set_index("name").loc["mla", "KV B per token"] == 1_152
    at = built_by_hand(("MLA",), "4*mla", (("mla.index_head_dim", 128),))
    assert at.dataframe[0].value.set_index("name").loc["mla", "KV B per token"] == (
        576 * 2 + 128 + 4)
    assert metrics(at)["KV per token, all layers"] == "5.02 KiB"  # 4 x 1,284 = 5,136 B
    # how the 1,284 B add up, under the table (not for the plain latent)
    assert any(shown(c).startswith("mla: 1,284 B a token = (512 + 64) x 2 = 1,152 B of latent "
                                   "+ 128 + 1 x 4 = 132 B of the indexer's keys")
               for c in at.caption)
    assert not any("B of latent" in shown(c) for c in plain.caption)


def test_model_page_builds_a_hybrid_from_scratch():
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.button(key="spec.scratch").click().run()
    assert_clean(at)
    assert any("No kinds yet" in i.value for i in at.info)
    at.selectbox(key="spec.new.type").set_value("full attention")
    at.button(key="spec.add").click().run()
    assert_clean(at)
    assert at.text_input(key="spec.pattern").value == "full"  # one kind is a model already
    for field, value in (("kv_heads", 8), ("head_dim_k", 128), ("head_dim_v", 128)):
        at.number_input(key=f"spec.full.{field}").set_value(value).run()
    at.selectbox(key="spec.new.type").set_value("Mamba2")
    at.button(key="spec.add").click().run()
    for field, value in (("n_heads", 8), ("head_dim", 64), ("d_state", 16), ("n_groups", 1),
                         ("conv_kernel", 4)):
        at.number_input(key=f"spec.mamba2.{field}").set_value(value).run()
    at.text_input(key="spec.pattern").set_value("(mamba2,full)*2").run()
    at.selectbox(key="spec.ssm_dtype").set_value("float32").run()
    assert_clean(at)
    assert metrics(at)["Cache layers"] == "4"
    kinds = at.dataframe[0].value.set_index("name")
    # full: 8 KV heads x (128 + 128) x 2 B (bf16) = 4,096 B per token
    assert kinds.loc["full", "KV B per token"] == 8 * 256 * 2 == 4_096
    # SPEC section 2, Mamba2 at TP 1: d_inner = 8 x 64 = 512; conv (512 + 2 x 1 x 16, 4 - 1) =
    # (544, 3) x 2 B = 3,264; ssm (8, 64, 16) x 4 B (float32) = 32,768; 36,032 B per layer
    assert kinds.loc["mamba2", "state B per layer"] == 544 * 3 * 2 + 8 * 64 * 16 * 4 \
        == 36_032
    assert (kinds.loc["mamba2", "conv shape"], kinds.loc["mamba2", "ssm shape"]) == (
        "544 x 3", "8 x 64 x 16")
    # the config's figures, whole model: a row a field, a column a kind
    geometry = at.dataframe[1].value.set_index("config field")
    assert (geometry.loc["n_heads", "mamba2"], geometry.loc["kv_heads", "full"]) == (8, 8)
    assert pd.isna(geometry.loc["n_heads", "full"])  # no such field: a gap, shown as a dash
    layers = at.dataframe[2].value
    assert list(layers["kind"]) == ["mamba2", "full", "mamba2", "full"]
    assert list(layers["bytes per token"]) == [0, 4096, 0, 4096]
    assert list(layers["state bytes"]) == [36032, 0, 36032, 0]
    assert at.query_params["model"] == "spec"
    again = open_app("app_pages/model.py", dict(at.query_params))  # the link holds the model
    assert_clean(again)
    assert list(again.dataframe[2].value["state bytes"]) == [36032, 0, 36032, 0]
    # a taken or bad kind name is refused with the reason; the draft stays
    at.text_input(key="spec.new.name").set_value("2bad")
    at.button(key="spec.add").click().run()
    assert not at.exception
    assert any("kind name '2bad' must start with a letter" in shown(e) for e in at.error)
    assert any(shown(e).endswith("Until it is fixed, every page (and the summary below) shows "
                                "the last valid model.") for e in at.error)
    # so is a full-attention kind named after the state layers' type (the pages print both)
    at.selectbox(key="spec.new.type").set_value("full attention")
    at.text_input(key="spec.new.name").set_value("linear_attention")
    at.button(key="spec.add").click().run()
    assert not at.exception
    assert any("kind name 'linear_attention' names another layer type: this kind's layers are "
               "full_attention; name it 'full_attention' or a name that is no layer type"
               in shown(e) for e in at.error)
    # removing a kind removes its layers: (mamba2,full)*2 -> 2*mamba2, a state-only model
    at.button(key="spec.full.remove").click().run()
    assert_clean(at)
    assert at.text_input(key="spec.pattern").value == "2*mamba2"
    assert metrics(at)["Cache layers"] == "2"
    assert list(at.dataframe[2].value["state bytes"]) == [36032, 36032]


def test_a_config_json_that_does_not_split_over_the_sidebar_tp_is_refused():
    # 12 KV heads over TP 8: the load says why and the current model stays; TP 24 would
    # replicate the KV heads but not split the 12 query heads
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "8"})
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(json.dumps({
        "model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 12,
        "num_key_value_heads": 12, "hidden_size": 768})).run()
    at.button(key="hf.load").click().run()
    assert [shown(e) for e in at.error] == [
        "The sidebar's TP does not split it: full.kv_heads = 12 is not divisible by tp = 8: "
        "choose a tp that divides the KV heads or is a multiple of them (tp up to 64 that split "
        "the model: 1, 2, 3, 4, 6, 12). No config.json was loaded: every page still shows "
        "Llama-3.1-8B."]
    assert at.query_params["model"] == "Llama-3.1-8B" and shown(at.subheader[0]) == "Llama-3.1-8B"


def test_the_uploaders_limit_is_the_json_readers():
    # streamlit's maxUploadSize is in MiB (x 1024 x 1024 where it receives a file): the
    # uploader says the 8 MiB FlatKV reads, not streamlit's 200MB default
    import tomllib

    from flatkv.jsonfile import MAX_JSON_BYTES

    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == MAX_JSON_BYTES == 8 * 2**20


def test_a_model_file_comes_back_at_its_own_tp():
    # exported at TP 2, loaded at the sidebar's TP 1: its figures are TP 2's (1 of Qwen3-Next's
    # 2 KV heads of 256 a rank, K and V in bfloat16: 1,024 B a token a layer), said once
    exported = load_preset("Qwen3-Next-80B-A3B").with_options(tp=2).to_dict()
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value(json.dumps(exported)).run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert at.query_params["tp"] == "2"
    assert at.dataframe[0].value.iloc[-1]["KV B per token"] == 1 * 256 * 2 * 2
    assert [shown(i) for i in at.info if "model file's" in shown(i)] == [
        "TP 2, the model file's, replaces the sidebar's TP 1: its figures are the file's. Change "
        "TP in the sidebar to see another."]
    at.run()
    assert not [i for i in at.info if "model file's" in shown(i)]
    # a file without a TP (written by hand) takes the sidebar's, as any model does
    at.text_area(key="model.paste").set_value(
        json.dumps({k: v for k, v in exported.items() if k != "tp"})).run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert at.query_params["tp"] == "2"
    assert not [i for i in at.info if "model file's" in shown(i)]
    # a file at a TP that does not split its model is refused as it is read
    at.text_area(key="model.paste").set_value(json.dumps({**exported, "tp": 3})).run()
    at.button(key="model.load").click().run()
    assert shown(at.error[0]).startswith("gdn.k_heads = 16 is not divisible by tp = 3")
    assert at.query_params["tp"] == "2"


def test_a_config_json_the_app_does_not_read_says_what_to_do_on_the_page():
    # mamba3 is no model type FlatKV reads: the way out is to describe the model by hand, which
    # the command line says with its own commands and the page the reader would open; on the
    # Model page it says what to do there
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.hf_resolve import BY_HAND, BY_HAND_ADVICE, BY_HAND_ON_PAGE

    config = json.dumps({"model_type": "mamba3"})
    with pytest.raises(ValueError) as cli:
        spec_from_hf_config(config.encode())
    assert str(cli.value).endswith(BY_HAND) and "python -m flatkv" in BY_HAND
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(config).run()
    at.button(key="hf.load").click().run()
    (error,) = [shown(e) for e in at.error]
    assert error == str(cli.value).replace(BY_HAND, BY_HAND_ON_PAGE) + (
        ". No config.json was loaded: every page still shows Qwen3-Next-80B-A3B.")
    assert error.startswith("model_type 'mamba3' is not supported")
    assert (f"; {BY_HAND_ADVICE}: pick the preset nearest it under Preset above, then change "
            "what differs under Edit by hand.") in error
    assert "python -m" not in error and "--model-file" not in error
    assert "Model page's" not in error  # the page the reader is on


def test_after_a_config_json_the_last_preset_can_be_picked_again():
    # the picker showed the last preset while a loaded config.json was the model, so picking
    # that preset changed nothing; now it shows none, and any preset picked is a change
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(json.dumps({
        "model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "hidden_size": 512})).run()
    at.button(key="hf.load").click().run()
    assert metrics(at)["Cache layers"] == "4"
    at.segmented_control(key="model.source").set_value("Preset").run()
    assert_clean(at)
    assert at.selectbox(key="w.model").value is None
    assert "The current model is not a preset" in shown(at.info[0])
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert_clean(at)
    assert at.query_params["model"] == "Llama-3.1-8B" and metrics(at)["Cache layers"] == "32"


def test_model_page_loads_a_config_json_and_model_json():
    at = open_app("app_pages/model.py")
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert_clean(at)
    assert at.query_params["model"] == "Llama-3.1-8B"
    assert metrics(at)["Cache layers"] == "32"
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(json.dumps({
        "model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "hidden_size": 512, "torch_dtype": "bfloat16"})).run()
    at.text_input(key="hf.name").set_value("tiny-llama").run()
    at.button(key="hf.load").click().run()
    assert_clean(at)
    assert metrics(at)["Cache layers"] == "4"
    # 2 KV heads x (64 + 64) x 2 B = 512 B per token per layer (head_dim 512 / 8 = 64)
    assert at.dataframe[0].value.iloc[0]["KV B per token"] == 512
    assert shown(at.subheader[0]) == "tiny-llama"
    assert at.text_input(key="hf.name").value == ""  # the name went with its config
    # back from another page, the source is still config.json (the model came from it)
    at.switch_page("app_pages/layout.py").run()
    at.switch_page("app_pages/model.py").run()
    assert at.segmented_control(key="model.source").value == "config.json"
    # a hybrid's source says where its ssm dtype came from, and the link keeps it
    at.text_area(key="hf.paste").set_value('{"model_type": "nemotron_h"}').run()
    at.button(key="hf.load").click().run()
    assert shown(at.subheader[0]) != "tiny-llama"  # named from its own config
    why = "ssm state float32 from transformers' default for mamba_ssm_cache_dtype"
    assert any(shown(c).endswith(why) for c in at.caption)
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert any(shown(c).endswith(why) for c in again.caption)
    # pasted text is JSON, never taken for a path or a model id; a failed load says that the
    # model shown (on every page) is still the one before
    current = shown(at.subheader[0])
    kept = f". No config.json was loaded: every page still shows {current}."
    at.text_area(key="hf.paste").set_value("hello this is not json {").run()
    at.button(key="hf.load").click().run()
    assert [shown(e) for e in at.error] == [
        "pasted config.json is not valid JSON (line 1, column 1: Expecting value)" + kept]
    assert shown(at.subheader[0]) == current
    at.text_area(key="hf.paste").set_value(" meta-llama/Llama-3.1-8B\n").run()
    at.button(key="hf.load").click().run()
    assert [shown(e) for e in at.error] == [
        "'meta-llama/Llama-3.1-8B' is not JSON: it looks like a model id or a path. Paste the "
        "contents of the config.json or upload the file (the app does not fetch from the Hub; "
        "python -m flatkv model --hf-config ID does)" + kept]
    at.text_area(key="hf.paste").set_value("/models/llama/config.json").run()
    at.button(key="hf.load").click().run()
    assert shown(at.error[0]).startswith("'/models/llama/config.json' is not JSON: it looks like "
                                        "a model id or a path.")
    # an owner/name past a file name's 255 bytes: the same refusal, not a traceback from
    # asking the file system whether such a path exists
    at.text_area(key="hf.paste").set_value("x" * 300 + "/y").run()
    at.button(key="hf.load").click().run()
    assert not at.exception
    assert shown(at.error[0]).startswith(f"'{'x' * 300}/y' is not JSON: it looks like a model "
                                        "id or a path.")
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value('{"model_type": "llama"}').run()
    at.button(key="model.load").click().run()
    assert [shown(e) for e in at.error] == [
        "this is a Hugging Face config.json (model_type 'llama'), not a model JSON: load it "
        f"under Source: config.json. No model JSON was loaded: every page still shows {current}."]
    at.text_area(key="model.paste").set_value(
        '{"format": "flatkv-profile/1", "name": "tiny", "layers": "linear,full",'
        ' "kv_bytes_per_slot": 64, "state_const_bytes": {"ssm": 4096}}').run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert metrics(at)["Cache layers"] == "2"
    assert at.query_params["layers"] == "linear,full"  # as a person writes it
    at.text_area(key="model.paste").set_value("{broken").run()
    at.button(key="model.load").click().run()
    assert any("not valid JSON" in shown(e) for e in at.error)


def test_budget_page_concurrency_by_hand():
    at = open_app("app_pages/budget.py", QWEN35_LINK)
    assert_clean(at)
    m = metrics(at)
    assert m["Blocks"] == "775"
    # one request's state takes 1 page id, the full-attention group the other 774:
    # 774 x 1,056 = 817,344 tokens
    assert m["Capacity (tokens)"] == f"{774 * 1056:,}" == "817,344"
    # 32,768 tokens: ceil(32,768 / 1,056) = 32 full pages + 1 state page; 775 / 33 = 23.48
    assert m["Concurrency at 32,768 tokens"] == "23.48"
    helps = {mm.label: mm.help for mm in at.metric}
    assert helps["Blocks"] == "103,219,200 B each, P = 1,056"
    assert helps["Concurrency at 32,768 tokens"].startswith(
        "Requests of this context the cache holds at once")
    # the curves: over the budget in GiB, from a tenth of it (8e9 B: 77 blocks, 76 x 1,056
    # tokens, 77 / 33 = 2.33 requests) to the current point; over the block size, the
    # current P = 64 on both curves
    budget_traces, size_traces = (json.loads(c.proto.spec)["data"]
                                  for c in at.get("plotly_chart"))
    by_budget, by_size = ({t["name"]: t for t in traces}
                          for traces in (budget_traces, size_traces))
    tokens, requests = by_budget["capacity (tokens)"], by_budget["concurrency at 32,768 tokens"]
    # (concurrency drawn exact, shown with two decimals in its hover)
    assert (tokens["x"][0], tokens["y"][0], requests["y"][0]) == (8e9 / 2**30, 80_256, 77 / 33)
    assert 8 * 10**9 // 103_219_200 == 77 and requests["customdata"][0] == "2.33"
    assert [(t["x"], t["y"]) for t in budget_traces if t["name"] == "current"] == [
        ([80e9 / 2**30], [817_344]), ([80e9 / 2**30], [775 / 33])]
    at_64 = by_size["capacity (tokens)"]["x"].index(64)
    assert (by_size["capacity (tokens)"]["y"][at_64],
            by_size["concurrency at 32,768 tokens"]["y"][at_64]) == (817_344, 775 / 33)
    at.text_input(key="w.context").set_value("1056").run()
    assert metrics(at)["Concurrency at 1,056 tokens"] == f"{775 / 2:.2f}"
    assert len(at.get("plotly_chart")) == 2
    # a short toolbar (zoom, pan, reset, PNG): no select tools over a half-width chart's title
    for element in at.get("plotly_chart"):
        config = json.loads(element.proto.config)
        assert config["displaylogo"] is False
        assert set(config["modeBarButtonsToRemove"]) == {
            "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d"}


def test_context_reads_vllm_suffixes_and_refuses_an_emptied_field():
    at = open_app("app_pages/budget.py", QWEN35_LINK)
    # 128k is 128,000 tokens, as vLLM's --max-model-len reads it: ceil(128,000 / 1,056) = 122
    # full pages + 1 state page; 775 / 123 = 6.30
    at.text_input(key="w.context").set_value("128k").run()
    assert_clean(at)
    assert metrics(at)["Concurrency at 128,000 tokens"] == f"{775 / 123:.2f}" == "6.30"
    assert at.query_params["ctx"] == "128000"
    assert at.text_input(key="w.context").value == "128,000"
    # and says so beside the uppercase count, 128 x 1,024, models' lengths are trained at
    assert ("128,000 tokens is 128k (k: 10^3, as vLLM reads it); 128K is 131,072."
            in [c.value for c in at.caption])
    # an emptied field is refused under it, and the figures keep the last valid context, not 1
    at.text_input(key="w.context").set_value("").run()
    assert not at.exception
    assert any(shown(e).startswith("Context length (tokens per request) is empty: give whole "
                                   "tokens such as 262144, 256K") for e in at.error)
    assert "Concurrency at 128,000 tokens" in metrics(at)
    assert at.query_params["ctx"] == "128000"
    # a link may use the suffixes too
    again = open_app("app_pages/budget.py", {**QWEN35_LINK, "ctx": "256K"})
    assert_clean(again)
    assert "Concurrency at 262,144 tokens" in metrics(again)
    assert not [c.value for c in again.caption if "as vLLM reads it" in c.value]


def test_an_emptied_or_out_of_range_number_is_refused_under_its_field():
    # streamlit would put an emptied field's minimum in (TP 1, block size 1) or keep an entry out
    # of range on screen unsent; here both are refused, and the figures keep the last valid value
    at = open_app("app_pages/budget.py", QWEN35_LINK)
    before = metrics(at)
    at.sidebar.number_input(key="w.tp").set_value(None).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "Tensor parallel (TP) is empty: give a number from 1 to 1,024"]
    assert metrics(at) == before and "tp" not in at.query_params  # still TP 1
    at.sidebar.number_input(key="w.tp").set_value(0).run()
    assert [shown(e) for e in at.error] == [
        "Tensor parallel (TP) is 0: give a number from 1 to 1,024"]
    at.sidebar.number_input(key="w.block_size").set_value(0).run()
    assert ("Block size (tokens) is 0: give a number from 1 to 1,048,576"
            in [shown(e) for e in at.error])
    assert metrics(at) == before
    # a ratio says its range as it reads it
    sg = open_app("app_pages/compare.py", QWEN35_LINK)
    sg.number_input(key="w.lcm_padding_bound").set_value(50.0).run()
    assert "Two-level padding bound is 50: give a number from 0 to 10" in [
        shown(e) for e in sg.error]
    # ... without exponents (it read "from 1e-06 to 1e+06")
    sg.number_input(key="w.mamba_full_memory_ratio").set_value(0.0).run()
    assert ("Mamba / full memory ratio r is 0: give a number from 0.000001 to 1000000"
            in [shown(e) for e in sg.error])
    # mended, the field's value is taken again
    at.sidebar.number_input(key="w.tp").set_value(2).run()
    at.sidebar.number_input(key="w.block_size").set_value(64).run()
    assert_clean(at)
    assert at.query_params["tp"] == "2" and at.query_params["block"] == "64"


def test_budget_page_follows_the_gpu_settings():
    at = open_app("app_pages/budget.py", {"gpu": "H100 80GB", "frac": "0.9",
                                          "weights": "16GB", "tp": "2"})
    assert_clean(at)
    # 81,559 MiB x 0.9 floored, minus 8 GB per rank = 68,968,728,985 B
    # per rank, as the sidebar, the chart's axis and "Budget for R" say: at TP 2 each rank's
    main = [m for m in at.main.metric if m.label.startswith("Cache budget")]
    assert [(m.label, m.value) for m in main] == [("Cache budget per rank", "64.23 GiB")]
    assert at.sidebar.metric[0].help == "68,968,728,985 B"
    # the budget to hold R requests is set against that cache budget, not the GPU's memory.
    # Qwen3-Next at TP 2 in FlatKV's layout: a block of 12 x 544 x 1,024 + 36 x 548,864 =
    # 26,443,776 B, 2,608 of them in the budget; a request of 262,144 tokens is 482 full
    # pages + 1 state page, so 2,608 / 483 = 5.40 fit and the field offers 6: 2,898 blocks
    block = 12 * 544 * 1_024 + 36 * 548_864
    assert (block, 68_968_728_985 // block) == (26_443_776, 2_608)
    need = 6 * 483 * block
    assert need == 76_634_062_848 and need - 68_968_728_985 == 7_665_333_863
    budget = next(mm for mm in at.metric if mm.label.startswith("Budget for "))
    assert (budget.label, budget.value, budget.delta) == (
        "Budget for 6 requests", "71.37 GiB", "7.14 GiB more than now")
    assert budget.help.startswith("76,634,062,848 B")


def test_budget_page_derives_the_budget_and_the_gpu_for_r_in_exact_bytes():
    # Qwen3-Next at TP 2 on an H200 with 160 GB of weights: 143,771 MiB = 150,754,820,096 B,
    # x 0.9 floored = 135,679,338,086 B, less 80e9 B a rank = 55,679,338,086 B. In GiB alone
    # the line did not check by hand: 126.36 - 74.51 = 51.85, shown 51.86
    at = open_app("app_pages/budget.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                          "gpu": "H200 141GB", "weights": "160GB"})
    assert_clean(at)
    assert 143_771 * 2**20 == 150_754_820_096 and 150_754_820_096 * 9 // 10 == 135_679_338_086
    (line,) = [i.value for i in at.info if "usable" in i.value]
    assert line == ("150,754,820,096 B (140.40 GiB) x 0.9 = 135,679,338,086 B (126.36 GiB) "
                    "usable - weights 80,000,000,000 B (74.51 GiB) per rank (TP 2) = "
                    "55,679,338,086 B (51.86 GiB) for the cache per rank")
    # 2,105 blocks of 26,443,776 B, 483 a request of 262,144 tokens (482 full + 1 state):
    # 4.36 fit, 5 asked: 5 x 483 blocks; the GPU that leaves them beside 80e9 B of weights at
    # 0.9 is ceil((63,861,719,040 + 80e9) / 0.9)
    need = 5 * 483 * 26_443_776
    assert need == 63_861_719_040 and -(-(need + 80 * 10**9) * 10 // 9) == 159_846_354_489
    gpu = next(mm for mm in at.metric if mm.label == "GPU memory for it")
    assert (gpu.value, gpu.help) == ("148.87 GiB", (
        "ceil((63,861,719,040 B + 80,000,000,000 B of weights per rank) / 0.9) = "
        "159,846,354,489 B: the least GPU memory that leaves that budget at this memory "
        "fraction and these weights."))


def test_compare_page_lists_every_strategy():
    at = open_app("app_pages/compare.py", QWEN35_LINK)
    assert_clean(at)
    # the figures a reviewer reads first come first (a narrow window cuts from the right):
    # those every layout has, then the engines' own log counts (blank for ours)
    assert list(at.dataframe[0].value.columns) == ["strategy", "concurrency",
                                                   "capacity (tokens)", "P (tokens)", "blocks",
                                                   "engine log", "older vLLM log",
                                                   "block bytes", "note"]
    # the row names stay in view while a narrow window scrolls the figures sideways
    columns = json.loads(at.dataframe[0].proto.columns)
    assert columns["strategy"]["pinned"] is True
    assert "pinned" not in columns["concurrency"]
    # on screen P and capacity are headed short, their unit in the tooltip (18 px), so that at
    # 1000 px (540 px of table) the layout and its four figures fit: int(chars x 6.8) + 24 a
    # column, strategy 160 ("FlatKV per component", 20), concurrency 98 (its header, 11),
    # capacity 103 ("3,250,944", 9, + 18), P 76 ("1,056", 5, + 18), blocks 85 ("1,714,648",
    # SGLang's token pool, 9): 522 px
    assert (columns["capacity (tokens)"]["label"], columns["P (tokens)"]["label"]) == (
        "capacity", "P")
    assert [columns[c]["width"] for c in ("strategy", "concurrency", "capacity (tokens)",
                                          "P (tokens)", "blocks")] == [160, 98, 103, 76, 85]
    table = at.dataframe[0].value.set_index("strategy")
    # every layout, as the capacity chart and the least-budget table list them: slab aliasing
    # (no equal history groups in a state hybrid) with no figures and why, the others no note
    assert list(table.index) == ["FlatKV packed slabs", "FlatKV per component", "vLLM v1",
                                 "SGLang", "slab aliasing", "two-level pages"]
    aliasing = table.loc["slab aliasing"]
    assert aliasing["note"] == "n/a"  # "does not apply", short for a last column
    assert aliasing.drop("note").isna().all()
    assert table.drop(index="slab aliasing")["note"].isna().all()
    flat = table.loc["FlatKV packed slabs"]
    assert (flat["P (tokens)"], flat["blocks"], flat["block bytes"]) == (1056, 775, 103_219_200)
    # under the table, the layouts whose P is not the block size asked: the state row of
    # 2,146,304 B needs ceil(2,146,304 / 2,048) = 1,048 token slots, 1,056 at alignment 16;
    # vLLM's 1,088 below; two-level pages keep 64, SGLang its page size 1
    assert -(-2_146_304 // 2048) == 1048 and -(-1048 // 16) * 16 == 1056
    assert ("Tokens a page, where not the size asked (the block size 64; SGLang's page size "
            "1): FlatKV packed slabs 1,056; FlatKV per component 1,056; vLLM v1 1,088. A state "
            "row inflates P, or the engine pages by a size of its own; each layout's Formulas "
            "below say why.") in [
                c.value for c in at.caption]
    vllm = table.loc["vLLM v1"]
    # P = 64 x cdiv(2,146,304, 64 x 2,048) = 1,088; 80e9 // 2,228,224 // 12 = 2,991 blocks
    assert (vllm["P (tokens)"], vllm["blocks"]) == (1088, 2991)
    # the log's "GPU KV cache size": max concurrency x L = 2,991 / (31 + 3 state pages) x
    # 32,768; SGLang logs its token pool; our layouts log nothing (a dash)
    assert vllm["engine log"] == 2991 * 32768 // 34 == 2_882_620
    sglang = table.loc["SGLang"]
    # its token pool: 80e9 x 9 // 19 B of state hold 490 slots of 36 x 2,146,304 B; the rest
    # over 12 layers x 2,048 B
    assert (80 * 10**9 - 490 * 36 * 2_146_304) // (12 * 2048) == 1_714_648
    assert sglang["engine log"] == sglang["capacity (tokens)"] == 1_714_648
    assert pd.isna(flat["engine log"])  # a gap, shown as a dash
    # vLLM 0.19 and earlier: num_blocks // 4 groups x P, beside it; no other layout logs it
    assert vllm["older vLLM log"] == 2991 // 4 * 1088 == 812_736
    assert pd.isna(sglang["older vLLM log"]) and pd.isna(flat["older vLLM log"])
    # state layers: no equal history groups, so aliasing is listed with its reason instead
    assert any("slab aliasing** does not apply: the model has linear_attention state layers"
               in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 3
    # the bars draw the table's figures: capacity (vLLM's 2,991 blocks less 3 state pages,
    # x 1,088), concurrency (2,991 / 34 = 87.97), and each layout's budget in GB (80e9 B =
    # 74.51 GiB, its stack adding up to it)
    capacity, contexts, where = (json.loads(c.proto.spec)["data"]
                                 for c in at.get("plotly_chart"))
    tokens, requests = ({name: x for name, x in zip(bars["y"], bars["x"], strict=True)}
                        for bars in capacity)
    assert (tokens["vLLM v1"], tokens["SGLang"]) == ((2991 - 3) * 1088, 1_714_648)
    assert requests["vLLM v1"] == 87.97
    # and the layout that does not apply keeps its row, a word in place of its bar
    assert requests == {**{name: table.loc[name, "concurrency"] for name in table.index},
                        "slab aliasing": 0}
    assert capacity[1]["text"][4] == capacity[0]["text"][4] == "does not apply"  # its row
    stacked = {}
    for bars in where:
        for name, x in zip(bars["y"], bars["x"], strict=True):
            stacked[name] = stacked.get(name, 0) + x
    assert all(round(total, 6) == round(80e9 / 2**30, 6) for total in stacked.values())
    # over context lengths: raw bytes give no max_model_len, so the powers of two from 1,024
    # to the page's 32,768 tokens, a line a layout that has figures, the table's diamonds
    lines = {t["name"]: t for t in contexts}
    # (every layout holds more than 10 requests at every length: no one-request line)
    assert list(lines) == ["FlatKV packed slabs", "FlatKV per component",
                           "vLLM v1", "SGLang", "two-level pages", "at 32,768 tokens"]
    assert lines["vLLM v1"]["x"] == [1 << k for k in range(10, 16)]
    diamonds = lines["at 32,768 tokens"]
    assert dict(zip(diamonds["customdata"], diamonds["y"], strict=True)) == {
        name: x for name, x in requests.items() if name != "slab aliasing"}
    # at 1,024 tokens a request is one page of history and the state's pages: 775 / (1 + 1)
    # in FlatKV's layout, 2,991 / (1 + 3) in vLLM's
    assert lines["FlatKV packed slabs"]["y"][0] == 775 / 2 == 387.5
    assert lines["vLLM v1"]["y"][0] == 2991 / 4 == 747.75
    assert "slab aliasing" not in lines  # it applies at no length
    # a layout a column, under its short name so the table fits 1000 px
    (sweep,) = [d.value for d in at.dataframe if "context" in d.value.columns]
    assert list(sweep.columns) == ["context", "packed", "per component", "vLLM",
                                   "SGLang", "two-level"]
    assert list(sweep["context"]) == [1 << k for k in range(10, 16)]
    assert list(sweep["vLLM"].iloc[[0, -1]]) == [747.75, 87.97]
    # a state model: SGLang's cap on running requests, whatever their length, is named: 490
    # slots less the padding one, 3 a request, 489 // 3 = 163
    assert any(c.value.endswith("SGLang's line is flat where its state pool binds: 163 running "
                                "requests (489 request slots, 3 a request) whatever their "
                                "length, its max_running_requests.") for c in at.caption)
    # after the budgets to hold and the context lengths' table
    # a row a category, a column a layout (it fits the page's width)
    frame = at.dataframe[3].value
    assert list(frame.columns) == ["category (bytes)", "FlatKV packed slabs",
                                   "FlatKV per component", "vLLM v1", "SGLang", "two-level pages"]
    breakdown = frame.set_index("category (bytes)").T
    assert list(breakdown.columns) == ["kv history", "state", "row padding",
                                       "state page padding", "padding layers",
                                       "dead weight", "idle pool", "unused"]
    # Every layout's breakdown adds up to the 80 GB budget, to the byte.
    assert all(int(row.sum()) == 80 * 10**9 for _, row in breakdown.iterrows())
    # only SGLang splits its budget statically (test_strategies derives such slices by hand):
    # at 32,768 tokens its KV pool binds, 1,714,648 // 32,768 = 52 requests, holding 52 x 3 of
    # its 489 request slots; the other 333 slots of 36 x 2,146,304 = 77,266,944 B sit idle, the
    # pool's tokens all count as history (each request's pages), the 157 slots in use (and the
    # padding slot) as state, and 8,192 B of the budget, under a token's 12 x 2,048 B, unused
    idle = breakdown["idle pool"].astype(int)
    assert not idle.drop("SGLang").any()
    slot = 36 * STATE_ROW
    assert (1_714_648 // 32_768, 489 - 52 * 3, slot) == (52, 333, 77_266_944)
    assert dict(breakdown.loc["SGLang"].astype(int)) == {
        "kv history": 1_714_648 * 12 * 2048, "state": (52 * 3 + 1) * slot,
        "row padding": 0, "state page padding": 0, "padding layers": 0, "dead weight": 0,
        "idle pool": 333 * slot, "unused": 8192}
    assert 333 * slot == 25_729_892_352 and 157 * slot == 12_130_910_208
    assert 80 * 10**9 - 490 * slot - 1_714_648 * 12 * 2048 == 8192
    # flat: what 775 blocks of 103,219,200 B leave of the budget
    assert int(breakdown.loc["FlatKV packed slabs"]["unused"]) == 80 * 10**9 - 775 * 103_219_200
    codes = " ".join(c.value for c in at.code)
    assert "num_blocks = budget // block_bytes = 80,000,000,000 // 103,219,200 = 775" in codes
    # under vLLM's math, the lines its start-up log prints here, in its words: P 1,088 (as
    # "%d"), the state page of 2,146,304 B padded to 2,228,224 (100 x 81,920 / 2,146,304 =
    # 3.82%), 80e9 B = 74.51 GiB, and the KV cache size at 32,768 tokens
    (log,) = [c.value for c in at.code if c.value.startswith("Setting attention block")]
    assert log.splitlines() == [
        "Setting attention block size to 1088 tokens to ensure that attention page size is >= "
        "mamba page size.",
        "Padding mamba page size by 3.82% to ensure that mamba page size and attention page "
        "size are exactly equal.",
        "Available KV cache memory: 74.51 GiB",
        # 80e9 // 2,228,224 // 12 = 2,991 blocks of 12 pages: 79,975,415,808 B = 74.48 GiB
        "Memory after warmup: ... 2991 KV cache blocks (74.48 GiB) fit within the requested "
        "... GiB. ...",
        "GPU KV cache size: 2,882,620 tokens, Maximum concurrency for 32,768 tokens per "
        "request: 87.97x"]
    assert f"{2991 / 34:.2f}" == "87.97" and f"{80e9 / 2**30:.2f}" == "74.51"
    # under SGLang's math, its state pool's line: 80e9 x 9 // 19 B hold 490 slots of 36 layers
    # (489 for requests, one its padding slot), conv 490 x 36 x 49,152 B = 0.81 GiB, ssm 490 x
    # 36 x 2,097,152 B = 34.45 GiB; a model typed as bytes names no K / V split: no KV line
    assert 80 * 10**9 * 9 // 19 // (36 * 2_146_304) == 490
    assert (f"{490 * 36 * 49_152 / 2**30:.2f}", f"{490 * 36 * 2_097_152 / 2**30:.2f}") == (
        "0.81", "34.45")
    # after its warning that 489 request slots // 3 a request (a model of bytes names no
    # class's extra buffer) cap the running requests at 163, under its estimate of 4,096
    (sglang_log,) = [c.value for c in at.code if c.value.startswith("max_running_requests")]
    assert sglang_log == (
        "max_running_requests is capped to 163 by the mamba state cache "
        "(max_mamba_cache_size=489, 3 state slots per request). To raise it: increase "
        "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
        "--mamba-ssm-dtype bfloat16.\n"
        "Mamba Cache is allocated. max_mamba_cache_size: 489, conv_state size: "
        "0.81GB, ssm_state size: 34.45GB \n"
        # its scheduler's: the rest, (80e9 - 490 x 77,266,944) // (12 x 2,048) = 1,714,648
        # tokens (test_strategy_notes derives it), the 8,192 chunk of an 80 GB GPU
        "max_total_num_tokens=1714648, chunked_prefill_size=8192, max_prefill_tokens=..., "
        "max_running_requests=163, context_len=32768")
    captions = [c.value for c in at.caption]
    assert ("SGLang's start-up log at these settings, in a current release's words and number "
            "formats: set it beside yours line by line. Its GB are GiB (2^30 B); its sizes count "
            "the state pool's padding slot beyond max_mamba_cache_size. Left out: no KV Cache "
            "lines: they need the K / V split and KV dtype, which bytes typed by hand (or "
            "attention layer kinds whose K / V splits differ) do not give. Its scheduler's line "
            "(TP rank 0 alone) comes last: max_running_requests is SGLang's own, from the "
            "token pool over context_len (the context here, as --context-length), or the state "
            "pool's cap where lower; chunked_prefill_size is the one set, else SGLang's own by "
            "the GPU's memory (2,048 under 20 GiB, 4,096 under 60 GiB, 8,192 under 160 GiB, "
            "16,384 above; 8,192 where the budget names no GPU), -1 with chunked prefill off as "
            "SGLang's help gives it (a log's 0, told and off too, agrees); max_prefill_tokens "
            "is not modelled (\"...\" reads as anything), nor the memory left that follows "
            "(available_gpu_mem); with SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 it gives the pool "
            "kept after CUDA graph capture, whose tokens and requests differ.") in captions
    assert ("vLLM's start-up log at these settings, in a current release's words and number "
            "formats: set it beside yours line by line. vLLM 0.34 on CUDA logs the Available "
            "line before warm-up, as an estimate, and sizes its cache by the blocks it fits "
            "after it (the Memory after warmup line, its GPU figures the run's: elided); up to "
            "0.33 the Available line is the cache. It counts mamba cache mode none, as set here "
            "(--no-enable-prefix-caching): vLLM 0.28 and later start a hybrid in align and log "
            "\"Mamba cache mode is set to 'align'\"; set align to match such a log. Releases "
            "before the one-line KV cache size (vLLM PR #50462; 0.26.0 still has two) print it "
            "and the concurrency on two lines; vLLM 0.19 and earlier print 812,736 tokens there "
            "(older_logged_tokens in the math).") in captions
    # one capacity convention in the table and chart: vLLM's 2,991 blocks less 3 state pages;
    # its log lines, current and older (2,991 // 4 groups x 1,088), are quoted apart
    assert vllm["capacity (tokens)"] == (2991 - 3) * 1088
    assert ("In the engines' logs: vLLM's \"GPU KV cache size\": 2,882,620 tokens; SGLang's "
            "max_total_num_tokens: 1,714,648 tokens. vLLM's line is max concurrency x "
            "max_model_len (vLLM 0.19 and earlier: 812,736, num_blocks // groups x min block "
            "size, a multiple of the smallest block size; the current figure divided by "
            "max_model_len is the logged concurrency). These count mamba cache mode none: vLLM "
            "0.28 and later start a hybrid model with prefix caching on, in mamba cache mode "
            "align by default; the log says which (\"Mamba cache mode is set to ...\"): set the "
            "same mode here to match such a log. None, the default here, is "
            "--no-enable-prefix-caching or vLLM up to 0.27.") in captions
    # a strategy that does not apply says why under the table and once in its expander
    assert sum("state layers: aliasing" in c.value for c in at.caption) == 2
    assert "state layers: aliasing" not in codes
    # what the engine figures leave out is said beside them
    assert any("Without speculative decoding" in c.value for c in at.caption)
    # and why the flat layout holds fewer requests: its dead weight, from the breakdown above
    dead = int(breakdown.loc["FlatKV packed slabs"]["dead weight"])
    assert any(c.value.startswith(f"FlatKV packed slabs: {format_bytes(dead)} ")
               for c in at.caption)


def test_compare_says_where_an_engine_pages_by_a_size_of_its_own():
    # DeepSeek-V3.2's sparse MLA: vLLM's FlashMLA sparse and SGLang's NSA page by 64 tokens
    # (SPEC 3.1: 64 for MLA), whatever the block size (16) or SGLang's page size (1) asked
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2"})
    assert_clean(at)
    assert ("Tokens a page, where not the size asked (the block size 16; SGLang's page size "
            "1): vLLM v1 64; SGLang 64 (its page size asked: 1). A state row inflates P, or the "
            "engine pages by a size of its own; each layout's Formulas below say why.") in [
                c.value for c in at.caption]
    # a plain attention model pages at the sizes asked: nothing to say
    llama = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B"})
    assert not [c for c in llama.caption if c.value.startswith("Tokens a page")]
    # sliding layers of their own heads (16 x 1,024 B a token) beside full ones (8,192 B):
    # vLLM gives every page 16 x 16,384 = 262,144 B, so a full layer's holds 262,144 / 8,192
    # = 32 tokens; the table's P is the least, 16
    gemma = open_app("app_pages/compare.py", {
        "model": "custom", "layers": "(5*sliding,full)*10", "kv": "8192", "swa_kv": "16384",
        "window": "1024"})
    assert 16 * 16_384 // 8192 == 32
    assert ("Tokens a page, where not the size asked (the block size 16; SGLang's page size "
            "1): vLLM v1 16, full_attention 32. A state row inflates P, or the engine pages by "
            "a size of its own; each layout's Formulas below say why.") in [
                c.value for c in gemma.caption]


def vllm_row(at: AppTest):
    return at.dataframe[0].value.set_index("strategy").loc["vLLM v1"]


def test_prefill_checkpoint_blocks_show_in_align_and_reach_the_figures():
    # Qwen3-Next TP 2 in 44.59 GiB as vLLM 0.33+ runs it on Hopper (test_strategies): kernel
    # block 64, align, 1 checkpoint block: P 576, 6,764 blocks, 6,764 / (456 + 3 x 3) = 14.55x
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory",
            "kv_mem": "44.59GiB", "ctx": "262144", "kernel": "64"}
    at = open_app("app_pages/compare.py", link)
    assert not [w for w in at.number_input if w.key == "w.prefill_checkpoint_blocks"]  # none
    at.selectbox(key="w.mamba_cache_mode").set_value("align").run()
    at.number_input(key="w.prefill_checkpoint_blocks").set_value(1).run()
    assert_clean(at)
    vllm = vllm_row(at)
    assert (vllm["P (tokens)"], vllm["blocks"], vllm["concurrency"]) == (576, 6_764, 14.55)
    assert vllm["engine log"] == 6_764 * 262_144 // 465
    assert at.query_params["ckpt"] == "1"
    assert "A request holds align (2 state pages) + 1 checkpoint." in [c.value
                                                                      for c in at.caption]
    assert "prefill checkpoint blocks 1" in at.caption[0].value
    # back in mode none the blocks are not held and the field goes
    at.selectbox(key="w.mamba_cache_mode").set_value("none").run()
    assert not [w for w in at.number_input if w.key == "w.prefill_checkpoint_blocks"]


def test_compare_kernel_block_size_drives_vllm_p():
    # block 16: A = max(kernel 16, 16) = 16; P = 16 x cdiv(2,146,304, 16 x 2,048 = 32,768) =
    # 16 x 66 = 1,056; page max(1,056 x 2,048, 2,146,304) = 2,162,688; 36 linear + 12 full
    # layers, group_size 12; 80e9 // 2,162,688 // 12 = 36,991 // 12 = 3,082 blocks
    at = open_app("app_pages/compare.py", {**QWEN35_LINK, "block": "16"})
    assert_clean(at)
    assert (vllm_row(at)["P (tokens)"], vllm_row(at)["blocks"]) == (1056, 3082)
    at.number_input(key="w.kernel_block_size").set_value(64).run()
    assert_clean(at)
    # A = max(64, 16) = 64; P = 64 x cdiv(2,146,304, 131,072) = 64 x 17 = 1,088;
    # page 2,228,224 B; 80e9 // 2,228,224 // 12 = 35,903 // 12 = 2,991 blocks
    assert (vllm_row(at)["P (tokens)"], vllm_row(at)["blocks"]) == (1088, 2991)
    assert at.query_params["kernel"] == "64"
    assert "Engine options (1 changed)" in [e.label for e in at.expander]
    assert "engine options: kernel block 64" in at.caption[0].value


def engine_option_widgets() -> dict:
    """The widget of each engine option Compare draws, by field, over models that between them
    show every one: state (mode all shows the chunk size, for a model vLLM runs in mode all;
    align the prefill checkpoint blocks) and sliding-window layers."""
    from flatkv.engine_options import ENGINE_FIELDS

    widgets = {}
    for query in ({"model": "Nemotron-H-8B", "mamba": "all"}, {"model": "gpt-oss-20b"},
                  {"model": "Nemotron-H-8B", "mamba": "align"}):
        at = open_app("app_pages/compare.py", query)
        assert_clean(at)
        widgets |= {w.key[2:]: w for kind in (at.number_input, at.selectbox, at.text_input,
                                              at.toggle)
                    for w in kind if w.key and w.key[2:] in ENGINE_FIELDS}
    return widgets


def test_every_engine_option_has_a_column_and_a_widget():
    from app_pages._widgets import ENGINE_COLUMNS
    from flatkv.engine_options import ENGINE_FIELDS

    in_columns = [f for _, group in ENGINE_COLUMNS for f in group]
    assert sorted(in_columns) == sorted(ENGINE_FIELDS)  # each once, none left out
    assert set(engine_option_widgets()) == set(ENGINE_FIELDS)
    # the shared column is titled by the parts it shows: Qwen3-Next has speculative tokens (a
    # scheduling option) and the two-level bound; gpt-oss no two-level padding bound, only
    # speculative tokens (SGLang's running cap) and max batched tokens
    qwen = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    assert {"**vLLM**", "**SGLang**", "**Scheduling and two-level pages**"} <= {
        shown(m) for m in qwen.markdown}
    sliding = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert "**Scheduling**" in {shown(m) for m in sliding.markdown}
    # DeepSeek-V3: the two-level bound (MLA: 61 x 1,152 B pads) and speculative tokens, which
    # move SGLang's running cap though it keeps no state
    mla = open_app("app_pages/compare.py", {"model": "DeepSeek-V3"})
    assert "**Scheduling and two-level pages**" in {shown(m) for m in mla.markdown}
    assert [n.label for n in mla.number_input if n.key == "w.speculative_tokens"] == [
        "Speculative tokens"]


def test_each_engine_options_help_is_written_once_for_the_cli_and_the_app():
    """What the engines do with an option is said once (``engine_options.engine_help``): the
    CLI's --help and the widget's tooltip each begin with it, naming other options their own
    way (flags, the captions' labels), then add only their own words. Written apart, the two
    drifted: the page size's named DeepSeek's sparse 64 and the prefill chunk it must divide
    only in the app; the prefill checkpoint blocks' said B200 under CUDA 13 on the CLI,
    without the key heads of 128 FlashInfer needs there."""
    from flatkv.cli import build_parser
    from flatkv.engine_options import ENGINE_OPTIONS, engine_help
    from flatkv.strategy_cli import ENGINE_FLAGS

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    widgets = engine_option_widgets()
    for option in ENGINE_OPTIONS:
        said = engine_help(option.field, ENGINE_FLAGS)
        for command in ("plan", "compare"):
            (action,) = [a for a in commands[command]._actions if a.dest == option.field]
            assert action.help.startswith(said), (command, option.field)
            assert ENGINE_FLAGS[option.field] in action.option_strings  # the name it is given
        assert widgets[option.field].help.startswith(engine_help(option.field)), option.field
    # one text, each surface's names: the CLI names the flag, the app the option's label
    spec = ("SGLang verifies N + 1 tokens a step (--speculative-num-steps N, topk 1), keeps "
            "their states in buffers sized with its state slots out of the state budget (a "
            "state hybrid with one token pool; its figures say where not modelled), and runs "
            "at most 48 requests at once, for any model (its speculative hook's reset), or {} "
            "where told.")
    (tokens,) = [a for a in commands["compare"]._actions if a.dest == "speculative_tokens"]
    assert spec.format("--sglang-max-running-requests") in tokens.help
    assert spec.format("SGLang max running requests") in widgets["speculative_tokens"].help
    # ... and its own words after: the CLI its flags and default, the app where a field starts
    assert tokens.help.endswith("(--mtp-layer adds an MTP module's; default 0)")
    assert widgets["speculative_tokens"].help.endswith(
        "\"Add an MTP layer\", beside the figures, adds an MTP module's.")
    assert widgets["kernel_block_size"].help.endswith("whatever this says. Starts at the "
                                                      "model's own.")


def test_mamba_cache_mode_align_drives_concurrency_on_compare_and_budget():
    at = open_app("app_pages/compare.py", QWEN35_LINK)
    table = at.dataframe[0].value.set_index("strategy")
    # vLLM at 32,768 tokens, P 1,088: full cdiv(32,768, 1,088) = 31 blocks + 3 state groups x 1
    # (mode none) = 34 blocks per request; 2,991 / 34 = 87.97
    assert table.loc["vLLM v1", "concurrency"] == 87.97
    # flat (P 1,056, 775 blocks): ceil(32,768 / 1,056) = 32 full pages + 1 state page; 775 / 33
    assert table.loc["FlatKV packed slabs", "concurrency"] == round(775 / 33, 2) == 23.48
    at.selectbox(key="w.mamba_cache_mode").set_value("align").run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("strategy")
    # mode align: 2 state pages per state group: 2,991 / (31 + 3 x 2) = 80.84
    assert table.loc["vLLM v1", "concurrency"] == round(2991 / 37, 2) == 80.84
    # flat: 32 full pages + 2 state pages; 775 / 34 = 22.79; capacity (775 - 2) x 1,056
    flat = table.loc["FlatKV packed slabs"]
    assert (flat["concurrency"], flat["capacity (tokens)"]) == (22.79, 773 * 1056)
    assert at.query_params["mamba"] == "align"
    at.switch_page("app_pages/budget.py").run()  # the Budget page uses the same options
    assert_clean(at)
    m = metrics(at)
    assert "engine options: mamba cache mode align" in budget_caption(at)
    assert m["Concurrency at 32,768 tokens"] == "22.79"
    assert m["Capacity (tokens)"] == f"{773 * 1056:,}" == "816,288"


def test_budget_page_names_and_offers_only_the_options_its_layout_reads():
    at = open_app("app_pages/budget.py", {**QWEN35_LINK, "kernel": "64", "sg_ratio": "0.5",
                                          "lcm_pad": "0.1"})
    assert_clean(at)
    # vLLM's kernel block, SGLang's ratio and the two-level bound do not act on the flat layout
    assert "default engine options" in budget_caption(at)
    assert "kernel block" not in budget_caption(at)
    keys = {w.key for w in (*at.number_input, *at.selectbox, *at.text_input)}
    # state layers, no sliding ones: the mamba cache mode acts, max batched tokens does not
    assert "w.mamba_cache_mode" in keys
    assert not keys & {"w.kernel_block_size", "w.mamba_full_memory_ratio",
                       "w.sglang_slots_per_request", "w.lcm_padding_bound",
                       "w.max_batched_tokens"}
    sliding = open_app("app_pages/budget.py", {"model": "gpt-oss-20b"})
    keys = {w.key for w in (*sliding.number_input, *sliding.selectbox, *sliding.text_input)}
    assert "w.max_batched_tokens" in keys and "w.mamba_cache_mode" not in keys
    help_text = {m.label: m.help for m in at.metric}["Capacity (tokens)"]
    assert "beside one request's state" in help_text
    # (775 - 1 state page) x 1,056: the same convention as Compare's table
    assert metrics(at)["Capacity (tokens)"] == f"{774 * 1056:,}"
    assert at.query_params["kernel"] == "64"  # kept for Compare


def test_chunk_size_shows_in_mode_all_only():
    at = open_app("app_pages/compare.py", QWEN35_LINK)
    assert not [w for w in at.number_input if w.key == "w.mamba_chunk_size"]
    at.selectbox(key="w.mamba_cache_mode").set_value("all").run()
    at.number_input(key="w.mamba_chunk_size").set_value(128).run()
    assert_clean(at)
    # mode all: c = lcm(chunk 128, A 64) = 128; P = 128 x cdiv(2,146,304, 128 x 2,048) =
    # 128 x 9 = 1,152
    assert vllm_row(at)["P (tokens)"] == 1152
    assert (at.query_params["mamba"], at.query_params["chunk"]) == ("all", "128")


def test_engine_options_round_trip_through_the_link():
    at = open_app("app_pages/compare.py", QWEN35_LINK)
    at.number_input(key="w.kernel_block_size").set_value(128).run()
    at.selectbox(key="w.mamba_cache_mode").set_value("align").run()
    at.number_input(key="w.mamba_full_memory_ratio").set_value(0.5).run()
    at.number_input(key="w.sglang_slots_per_request").set_value(5).run()
    at.number_input(key="w.lcm_padding_bound").set_value(0.1).run()
    assert_clean(at)
    # no sliding layers: max batched tokens (a sliding request's pages) acts on nothing here
    assert not [w for w in at.text_input if w.key == "w.max_batched_tokens"]
    link = dict(at.query_params)
    assert {k: link[k] for k in ("kernel", "mamba", "sg_ratio", "sg_slots", "lcm_pad")} \
        == {"kernel": "128", "mamba": "align", "sg_ratio": "0.5", "sg_slots": "5",
            "lcm_pad": "0.1"}
    assert "chunk" not in link  # defaults stay implicit
    again = open_app("app_pages/compare.py", link)
    assert_clean(again)
    assert not again.warning
    assert again.dataframe[0].value.equals(at.dataframe[0].value)
    # kernel 128: A = 128, P = 128 x cdiv(2,146,304, 262,144) = 128 x 9 = 1,152
    assert vllm_row(again)["P (tokens)"] == 1152
    assert again.number_input(key="w.sglang_slots_per_request").value == 5
    sliding = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    sliding.text_input(key="w.max_batched_tokens").set_value("2K").run()
    assert_clean(sliding)
    assert sliding.query_params["mbt"] == "2048"
    # no state layers: the mamba options act on nothing
    assert not [w for w in sliding.number_input if w.key == "w.mamba_full_memory_ratio"]


def test_bad_engine_options_in_the_link_fall_back_with_a_notice():
    at = open_app(None, {**QWEN35_LINK, "kernel": "0", "mamba": "bogus"})
    assert not at.exception
    notices = " ".join(shown(e) for e in at.error)
    assert "kernel=0 is outside 1..1,048,576; using the default (kernel=auto)" in notices
    assert "mamba='bogus' is not one of none, align, all; using the default (mamba=none)" in notices
    assert "kernel" not in at.query_params and "mamba" not in at.query_params
    at.switch_page("app_pages/compare.py").run()
    assert_clean(at)
    assert at.selectbox(key="w.mamba_cache_mode").value == "none"
    assert (vllm_row(at)["P (tokens)"], vllm_row(at)["blocks"]) == (1088, 2991)


@pytest.mark.parametrize("model", model_names())
def test_every_page_renders_for_every_example(model):
    at = open_app(None, {"model": model})
    for page in PAGES:
        at.switch_page(page).run()
        assert_clean(at)
    assert at.query_params.get("model", DEFAULT.model) == model  # the default stays implicit


# GPU lab: a raw model of two full-attention layers at 4,096 B per token, block 16 (alignment
# = block size, no state row to cover): P = 16, page = 2 x 4,096 x 16 = 131,072 B.
TINY_LINK = {"model": "custom", "layers": "full*2", "kv": "4096", "block": "16", "device": "cpu"}
TINY_PAGE = 131_072


@pytest.fixture()
def small_flush(monkeypatch):
    """Flush 1 MiB before each timed call, not the last-level cache: these check the flow."""
    from flatkv.gpu import bench

    monkeypatch.setattr(bench, "_cache_flush_bytes", lambda device: 1 << 20)


def tiny_run(at: AppTest, *, pages: int = 3) -> AppTest:
    at.number_input(key="w.lab_max_blocks").set_value(8)
    at.number_input(key="w.lab_pages").set_value(pages)
    at.number_input(key="w.lab_rounds").set_value(1)
    return at.button(key="gpu.run").click().run()


def test_gpu_page_runs_a_cpu_benchmark(small_flush):
    import torch

    at = open_app("app_pages/gpu.py", TINY_LINK)
    assert_clean(at)
    no_gpu = any("No CUDA GPU on this machine" in i.value for i in at.info)
    assert no_gpu == (not torch.cuda.is_available())
    assert at.selectbox(key="w.lab_device").options[0] == "cpu"
    assert metrics(at)["Block bytes"] == "128.00 KiB"
    assert not at.dataframe  # nothing measured yet
    tiny_run(at)
    assert_clean(at)
    # the first column (text, pandas' str dtype here) stays pinned as the table scrolls
    first = at.dataframe[0].value.columns[0]
    assert json.loads(at.dataframe[0].proto.columns)[first]["pinned"] is True
    rows = at.dataframe[0].value.set_index("operation")
    # the table's short names (the chart names them alike); no state rows in this model
    assert list(rows.index) == ["copy", "gather", "scatter"]
    assert set(rows["bytes per call"]) == {3 * TINY_PAGE}  # 3 pages per call x 131,072 B
    # one run: P and the page are the headline's (2 x 4,096 x 16 = TINY_PAGE), not a column
    assert "P (tokens)" not in rows.columns and "page bytes" not in rows.columns
    assert "layout" not in rows.columns  # one layout ran: the setting says which
    assert metrics(at)["P (tokens per page)"] == "16"
    assert set(rows["bytes counted"]) == {2 * 3 * TINY_PAGE}  # read + written
    assert rows.loc["gather", "kernel"] == "torch"
    m = metrics(at)
    assert m["Allocated blocks"] == "8" and m["Allocated bytes"] == "1.00 MiB"  # 8 x 131,072
    assert "your cap of 8 blocks" in " ".join(c.value for c in at.caption)
    # of the plan: the H100's 71.68 GiB (76,968,728,985 B) in blocks of 2 x 4,096 x 16 B
    planned = 76_968_728_985 // TINY_PAGE * TINY_PAGE
    assert ("Pool limited by your cap of 8 blocks: 8 blocks x 131,072 B = 1,048,576 B (1.00 "
            f"MiB) of the planned {planned:,} B ({format_bytes(planned)}).") in [
                c.value for c in at.caption]
    assert len(at.get("plotly_chart")) == 1
    kept = at.session_state["gpu.last_run"]
    at.run()  # a rerun shows the kept result, it does not time again
    assert at.session_state["gpu.last_run"] is kept
    assert set(at.dataframe[0].value["bytes per call"]) == {3 * TINY_PAGE}
    # other settings: the kept result stays, marked as theirs; the same settings again: not
    stale = "These results are for other run settings than the ones above"
    at.number_input(key="w.lab_rounds").set_value(2).run()
    assert any(i.value.startswith(stale) for i in at.info)
    at.number_input(key="w.lab_rounds").set_value(1).run()
    assert not any(i.value.startswith(stale) for i in at.info)


def test_gpu_page_warns_where_a_figures_rounds_spread_widely(small_flush):
    from dataclasses import replace

    at = tiny_run(open_app("app_pages/gpu.py", TINY_LINK))
    assert_clean(at)
    # one timed round: no spread to judge
    assert not [w for w in at.warning if w.value.startswith("Noisy")]
    # the kept run's gather rounds set by hand (no timing asserted): 1 to 3 ms
    kept = at.session_state["gpu.last_run"]
    spread = [replace(r, figures=tuple(replace(f, samples_s=(1e-3, 2e-3, 3e-3))
                                       if f.operation == "gather" else f for f in r.figures))
              for r in kept.results]
    at.session_state["gpu.last_run"] = replace(kept, results=tuple(spread))
    at.run()
    assert_clean(at)
    (noise,) = [w.value for w in at.warning if w.value.startswith("Noisy")]
    assert noise.startswith("Noisy: gather (torch) rounds spread from 1.000 to 3.000 ms (3.00x)")
    assert noise.endswith("rerun, or raise Timed rounds.")


def test_gpu_results_table_shows_its_figures_whole_at_1000_px(small_flush):
    """The table scrolls at 1000 px; its edge cut the baseline column's text ("devic", "copy
    c"). Operation, kernel, GB/s, share and baseline now end inside the main column, for a run
    with state rows and both kernels (rows built by hand, shown in the page's own table)."""
    from test_gpu_view import figure, result

    from app_pages._frame import MAIN_COLUMN_PX

    at = tiny_run(open_app("app_pages/gpu.py", TINY_LINK))
    kept = at.session_state["gpu.last_run"]
    run = result()
    state = (figure("state_bytes_copy", "copy", 8 * 1056, 30.0, baseline="state_bytes_copy"),
             figure("state_copy", "torch", 8 * 1056, 25.0, baseline="state_bytes_copy"),
             figure("gather", "triton", 8 * 1568, 4321.09))  # an H200's GB/s
    run = dataclasses.replace(run, figures=run.figures[:3] + state)
    at.session_state["gpu.last_run"] = dataclasses.replace(kept, results=(run,))
    at.run()
    assert_clean(at)
    shown_rows = at.dataframe[0].value
    assert "state copy" in set(shown_rows["baseline"])
    widths = {col: c.get("width") for col, c in json.loads(at.dataframe[0].proto.columns).items()}
    columns = list(shown_rows.columns)
    read = columns[:columns.index("baseline") + 1]
    assert read == ["operation", "kernel", "GB/s", "share", "baseline"]
    assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX


def test_gpu_sweep_table_shows_its_figures_whole_at_1000_px(small_flush):
    """After a pages-per-call sweep the pages column comes first, and under the headers "pages
    per call" and "share of baseline" the baseline column began past the scroll edge at 1000 px
    (576 px for this run, 625 px with state rows). Pages through baseline now end inside the
    main column, for the page's own sweep and for one with state rows (built by hand)."""
    from test_gpu_view import figure, result

    from app_pages._frame import MAIN_COLUMN_PX

    at = open_app("app_pages/gpu.py", TINY_LINK)
    at.number_input(key="w.lab_max_blocks").set_value(8)
    at.segmented_control(key="w.lab_sweep").set_value("pages per call").run()
    at.number_input(key="w.lab_rounds").set_value(1)
    at.button(key="gpu.run").click().run()
    assert_clean(at)

    def read_widths() -> tuple[list[str], dict[str, int]]:
        widths = {col: c.get("width")
                  for col, c in json.loads(at.dataframe[0].proto.columns).items()}
        columns = list(at.dataframe[0].value.columns)
        return columns[:columns.index("baseline") + 1], widths

    read, widths = read_widths()
    assert len(read) == 6 and read[0].startswith("pages")
    assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}
    kept = at.session_state["gpu.last_run"]
    state = (figure("state_bytes_copy", "copy", 8 * 1056, 30.0, baseline="state_bytes_copy"),
             figure("state_copy", "torch", 8 * 1056, 25.0, baseline="state_bytes_copy"))
    swept = tuple(dataclasses.replace(r, figures=r.figures[:3] + state)
                  for r in (result(pages=1), result(pages=4)))
    at.session_state["gpu.last_run"] = dataclasses.replace(kept, results=swept)
    at.run()
    assert_clean(at)
    assert "state copy" in set(at.dataframe[0].value["baseline"])
    read, widths = read_widths()
    assert len(read) == 6 and read[0].startswith("pages")
    assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}


def test_gpu_results_median_ends_inside_the_main_column_at_1000_px(small_flush):
    """A state hybrid's CPU run: operation and baseline named the state-size copy (126 px each),
    and the median, under "median (ms)", ended on the 540 px edge with a 16 px longer header; a
    known peak's "share of nominal peak" (166 px) came before it. With both pool layouts timed,
    the "pool layout" column (98 px) put the median at 493 to 576 px for the page's own run
    (x 873 to 956 in a 1000 px window, the column ending at x 920), and past the edge for a
    state hybrid. Under the table's short names (a 64 px layout column, "state copy", said in
    full under the table) the columns through the median end inside the main column in one
    layout and in both, and the peak's share follows it as "peak"."""
    from test_gpu_view import figure, result

    from app_pages._frame import MAIN_COLUMN_PX

    at = tiny_run(open_app("app_pages/gpu.py", TINY_LINK))
    kept = at.session_state["gpu.last_run"]

    def state_run(layout: str):
        run = result(gbps=(7.32, 2.21, 1.79), peak=50.0, layout=layout)  # a made-up peak
        state = (figure("state_bytes_copy", "copy", 8 * 1056, 0.25, baseline="state_bytes_copy"),
                 dataclasses.replace(  # a slow state copy's median: 30.224 ms
                     figure("state_copy", "torch", 8 * 1056, 0.08, baseline="state_bytes_copy"),
                     median_s=0.030224))
        return dataclasses.replace(run, figures=run.figures[:3] + state)

    said = []  # the short names in full under the table, and the runs they were for
    for layouts, first in (((gpu_settings.SLOT_MAJOR,), []),
                           (gpu_settings.POOL_LAYOUTS, ["pool"])):
        runs = tuple(state_run(layout) for layout in layouts)
        at.session_state["gpu.last_run"] = dataclasses.replace(kept, results=runs)
        at.run()
        assert_clean(at)
        config = json.loads(at.dataframe[0].proto.columns)
        widths = {col: c.get("width") for col, c in config.items()}
        columns = list(at.dataframe[0].value.columns)
        read = columns[:columns.index("median (ms)") + 1]
        assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}
        assert read == [*first, "operation", "kernel", "GB/s", "share", "baseline",
                        "median (ms)"]
        assert columns[len(read)] == "peak"
        assert list(at.dataframe[0].value["median (ms)"])[-1] == 30.224
        # the unit in the header, no tooltip; the rounds' tooltip says what it is the median of
        assert "help" not in config["median (ms)"]
        assert config["rounds (ms)"]["help"] == (
            "The fastest and the slowest of the timed rounds, one call's time each: the median "
            "(ms) is their median, and GB/s the bytes counted over it.")
        assert config["peak"]["help"].startswith("Share of nominal peak: ")
        names = [c.value for c in at.caption if c.value.startswith("In the table and the chart, ")]
        said.append((names, runs))
    assert all(names == [gpu_view.table_names_text(runs)] for names, runs in said)
    assert "state copy" in set(at.dataframe[0].value["baseline"])
    # both layouts: 51 + 92 + 64 + 51 + 82 + 92 + 98 = 530 px, the baselines shared (under
    # "layout" and "shared", 64 px, and "median (ms)" the median ended at 543 px)
    assert [widths[c] for c in read] == [51, 92, 64, 51, 82, 92, 98]
    assert list(at.dataframe[0].value["pool"]) == ["both", "slot", "slot", "both", "slot",
                                                   "page", "page", "page"]
    assert names[0].endswith("pool slot and page are the slot-major and page-major pools, "
                             "both a baseline timed once for the two.")
    # the page's own run in both layouts: its median ends inside the column too
    at.session_state["gpu.last_run"] = kept
    at.pills(key="w.lab_layouts").set_value(list(gpu_settings.POOL_LAYOUTS)).run()
    at.button(key="gpu.run").click().run()
    assert_clean(at)
    widths = {col: c.get("width") for col, c in json.loads(at.dataframe[0].proto.columns).items()}
    columns = list(at.dataframe[0].value.columns)
    read = columns[:columns.index("median (ms)") + 1]
    assert read[0] == "pool" and sum(widths[c] for c in read) <= MAIN_COLUMN_PX, widths


def test_gpu_page_bytes_sweep_shows_its_baseline_at_1000_px(small_flush):
    """A page-bytes sweep's table began with P and page bytes (92 px each): its baseline began
    past the 540 px edge. One P to each page size, P is left to the table of pools allocated
    above it (a row a plan), and page bytes through baseline end inside the main column."""
    from test_gpu_view import PAGE, result

    from app_pages._frame import MAIN_COLUMN_PX
    from flatkv import gpu_settings

    at = tiny_run(open_app("app_pages/gpu.py", TINY_LINK))
    kept = at.session_state["gpu.last_run"]
    swept = (result(gbps=(6.62, 2.21, 2.03)), result(page=2 * PAGE, block=32,
                                                     gbps=(10.71, 3.93, 3.89)))
    swept = tuple(dataclasses.replace(r, figures=r.figures[:3]) for r in swept)
    at.session_state["gpu.last_run"] = dataclasses.replace(
        kept, results=swept,
        settings=dataclasses.replace(kept.settings, sweep=gpu_settings.PAGE_BYTES))
    at.run()
    assert_clean(at)
    pools, figures = at.dataframe[0], at.dataframe[1]
    assert list(pools.value.columns)[:2] == ["page bytes", "P (tokens)"]
    assert list(pools.value["P (tokens)"]) == [16, 32]
    widths = {col: c.get("width") for col, c in json.loads(figures.proto.columns).items()}
    columns = list(figures.value.columns)
    read = columns[:columns.index("baseline") + 1]
    assert read == ["page bytes", "operation", "kernel", "GB/s", "share", "baseline"]
    assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}
    assert list(figures.value["page bytes"]) == [PAGE] * 3 + [2 * PAGE] * 3


def test_model_summary_figures_end_inside_the_main_column_at_1000_px():
    """Every preset's kinds table (the Model page's summary) gives its figures, through "state
    B per layer", whole at 1000 px: sized as the page's table sizes them, they end inside the
    main column (a "1,097,7" seen there was the scroll edge's cut, not the column's)."""
    from app_pages._frame import MAIN_COLUMN_PX, _shown_number, column_width
    from flatkv.app_model import preset_spec, spec_kind_rows

    for name in model_names():
        rows = spec_kind_rows(preset_spec(name))
        columns = list(rows[0])
        figures = columns[:columns.index("state B per layer") + 1] if (
            "state B per layer" in columns) else columns[:columns.index("KV B per token") + 1]
        widths = [column_width(c, [v if isinstance(v, str) else _shown_number(v)
                                   for v in (r[c] for r in rows) if v is not None])
                  for c in figures]
        assert sum(widths) <= MAIN_COLUMN_PX, (name, dict(zip(figures, widths)))


def test_gpu_page_sweeps_pages_per_call(small_flush):
    at = open_app("app_pages/gpu.py", TINY_LINK)
    at.number_input(key="w.lab_max_blocks").set_value(8)
    at.segmented_control(key="w.lab_sweep").set_value("pages per call").run()
    assert at.text_input(key="w.lab_sweep_pages").value == "1, 2, 4"  # up to half of 8 blocks
    at.text_input(key="w.lab_sweep_pages").set_value("1, 2").run()
    at.number_input(key="w.lab_rounds").set_value(1)
    at.button(key="gpu.run").click().run()
    assert_clean(at)
    gather = at.dataframe[0].value.query("operation == 'gather'")
    assert list(gather["bytes per call"]) == [TINY_PAGE, 2 * TINY_PAGE]
    assert len(at.get("plotly_chart")) == 1
    # the figures cover the whole sweep, not its first run: 128 KiB = TINY_PAGE
    assert metrics(at)["Pages per call"] == "1 to 2"
    (call,) = [m for m in at.metric if m.label == "Bytes per call"]
    assert (call.value, call.proto.delta) == ("256.00 KiB", "from 128.00 KiB")
    assert any(c.value.startswith("No host mirror figures on the CPU") for c in at.caption)


def test_gpu_page_says_one_page_a_call_in_the_singular(small_flush):
    # one page of 2 x 4,096 x 16 = 131,072 B a call: "1 page", not "1 pages"
    at = tiny_run(open_app("app_pages/gpu.py", TINY_LINK), pages=1)
    assert_clean(at)
    (call,) = [m for m in at.metric if m.label == "Bytes per call"]
    assert (call.value, call.help) == ("128.00 KiB", "131,072 B = 1 page x 131,072 B")
    assert metrics(at)["Pages per call"] == "1"


def test_gpu_page_times_both_pool_layouts_side_by_side(small_flush):
    at = open_app("app_pages/gpu.py", TINY_LINK)
    assert at.pills(key="w.lab_layouts").value == ["slot-major"]  # how the plan allocates
    at.pills(key="w.lab_layouts").set_value(["page-major", "slot-major"]).run()
    assert at.query_params["layouts"] == "slot-major,page-major"
    tiny_run(at)
    # said before the run: 8 blocks of 131,072 B, once per layout
    assert any("A run allocates 8 blocks x 131,072 B = 1.00 MiB per pool layout, 2.00 MiB for "
               "both" in c.value for c in at.caption)
    assert_clean(at)
    rows = at.dataframe[0].value
    gather = rows.query("operation == 'gather'")
    assert list(gather["pool"]) == ["slot", "page"]
    assert set(gather["bytes per call"]) == {3 * TINY_PAGE}  # the same pages either way
    assert metrics(at)["Allocated blocks"] == "8"  # one plan: the same pool size in each layout
    assert metrics(at)["Allocated bytes (each layout)"] == "1.00 MiB"  # 8 x 131,072 B, not 2
    assert any("slot-major and page-major pools" in c.value for c in at.caption)
    (fig,) = at.get("plotly_chart")
    assert "gather (torch, page-major)" in fig.proto.spec
    compared = at.dataframe[1].value.set_index("operation")  # page-major against slot-major
    gather = compared.loc["gather"]
    ratio = gather["page-major GB/s"] / gather["slot-major GB/s"]
    assert gather["page-major / slot-major"] == f"{ratio:.2f}x" or abs(
        float(gather["page-major / slot-major"][:-1]) - ratio) < 0.011  # from unrounded GB/s
    assert list(compared.index) == ["gather", "scatter"]  # the shared copy has no row
    at.pills(key="w.lab_layouts").set_value([]).run()
    assert any("pool layout: pick at least one" in shown(e) for e in at.error)
    assert at.button(key="gpu.run").disabled


def test_gpu_page_says_the_device_is_busy(small_flush, monkeypatch):
    from flatkv.gpu import bench, device_lock

    lock = device_lock("cpu")
    assert lock.try_acquire()
    try:
        at = open_app("app_pages/gpu.py", TINY_LINK)
        tiny_run(at)
        assert not at.exception and not at.error
        assert any("Another session is benchmarking cpu" in shown(w) for w in at.warning)
        assert not at.dataframe  # nothing ran
        # the other run holds the memory: still "busy", not "does not fit"
        monkeypatch.setattr(bench, "free_memory_bytes", lambda device: 1)
        at.run()
        assert not at.error
        assert any("Another session is benchmarking cpu" in shown(w) for w in at.warning)
    finally:
        lock.release()


def test_gpu_page_shows_bad_settings_as_errors(small_flush):
    at = open_app("app_pages/gpu.py", TINY_LINK)
    at.number_input(key="w.lab_max_blocks").set_value(1)
    at.button(key="gpu.run").click().run()
    assert not at.exception
    assert any(shown(e) == "Max blocks is 1: a benchmark's pool holds two pages at least; give 2 "
               "or more, or 0 for automatic" for e in at.error)
    at.number_input(key="w.lab_max_blocks").set_value(8)
    at.segmented_control(key="w.lab_sweep").set_value("pages per call").run()
    at.text_input(key="w.lab_sweep_pages").set_value("2, lots").run()
    assert not at.exception
    assert any("pages per call: 'lots' is not a whole number" in shown(e) for e in at.error)
    # an emptied field that the sweep then turns off drops its entry: nothing left in error
    # holds the run back (the field shows the view's value again)
    empty = open_app("app_pages/gpu.py", {**TINY_LINK, "max_blocks": "8"})
    empty.number_input(key="w.lab_pages").set_value(None).run()
    assert [shown(e) for e in empty.error] == [
        "Pages per call (0 = automatic) is empty: give a number from 0 to "
        f"{gpu_settings.MAX_POOL_BLOCKS:,}"]
    empty.segmented_control(key="w.lab_sweep").set_value("pages per call").run()
    assert_clean(empty)
    assert not empty.warning
    assert empty.number_input(key="w.lab_pages").disabled
    assert empty.number_input(key="w.lab_pages").value == 0
    assert not empty.button(key="gpu.run").disabled


def test_gpu_lab_settings_come_from_the_link_and_go_back_to_it(small_flush):
    at = open_app("app_pages/gpu.py", {**TINY_LINK, "max_blocks": "8", "rounds": "1",
                                       "sweep": "pages per call", "sweep_pages": "1,2"})
    assert_clean(at)
    assert at.number_input(key="w.lab_max_blocks").value == 8
    assert at.number_input(key="w.lab_rounds").value == 1
    assert at.segmented_control(key="w.lab_sweep").value == "pages per call"
    assert at.text_input(key="w.lab_sweep_pages").value == "1, 2"
    at.button(key="gpu.run").click().run()
    assert_clean(at)
    gather = at.dataframe[0].value.query("operation == 'gather'")
    assert list(gather["bytes per call"]) == [TINY_PAGE, 2 * TINY_PAGE]
    at.text_input(key="w.lab_sweep_pages").set_value("1, 4").run()
    assert at.query_params["sweep_pages"] == "1,4"
    at.text_input(key="w.lab_sweep_pages").set_value("1, 2, 4").run()  # the suggestion: auto
    assert "sweep_pages" not in at.query_params
    at.segmented_control(key="w.lab_sweep").set_value("one run").run()
    assert "sweep" not in at.query_params and at.query_params["max_blocks"] == "8"


def test_gpu_lab_link_to_a_device_this_machine_lacks_falls_back():
    at = open_app("app_pages/gpu.py", {**TINY_LINK, "device": "cuda:7", "kernels": "triton"})
    assert not at.exception and not at.error
    assert any("This machine has no cuda:7" in shown(w) for w in at.warning)
    assert "device" not in at.query_params  # the address bar shows the device in use
    import torch

    if not torch.cuda.is_available():
        assert at.selectbox(key="w.lab_device").value == "cpu"
        assert at.pills(key="w.lab_kernels").value == ["torch"]  # no triton without CUDA
        assert any("triton does not run on cpu here: timing torch." in shown(w)
                   for w in at.warning)


def test_gpu_lab_blocks_a_run_until_a_bad_setting_is_fixed(small_flush):
    at = open_app("app_pages/gpu.py", {**TINY_LINK, "max_blocks": "8",
                                       "sweep": "pages per call", "sweep_pages": "1,16"})
    assert not at.exception
    # 16 pages per call in a pool of 8 blocks: a link's list meets a smaller pool
    assert any("pages per call: 16 is out of range; give values from 1 to 8" in shown(e)
               for e in at.error)
    assert at.button(key="gpu.run").disabled  # shown, but not clickable until it is fixed
    at.text_input(key="w.lab_sweep_pages").set_value("1, x").run()
    assert any("'x' is not a whole number" in shown(e) for e in at.error)
    assert at.button(key="gpu.run").disabled
    at.text_input(key="w.lab_sweep_pages").set_value("1, 2").run()
    assert_clean(at)
    assert not at.button(key="gpu.run").disabled


def test_gpu_lab_refuses_a_run_that_would_not_fit_in_memory(monkeypatch):
    from flatkv.gpu import bench

    monkeypatch.setattr(bench, "free_memory_bytes", lambda device: 8 * 10**9)
    # Qwen3-Next at block 2**20: P = 2**20, pages of 25,809,321,984 B; two of them are the
    # least a benchmark moves, far past 80% of 8 GB: an error, not an out-of-memory kill
    at = open_app("app_pages/gpu.py", {"block": "1048576", "device": "cpu"})
    assert metrics(at)["Block bytes"] == "24.04 GiB"
    # said before Run on the CPU, where free memory is cheap to read: Run stays disabled
    assert any("this benchmark needs" in shown(e) and "plan a smaller block size" in shown(e)
               for e in at.error)
    assert at.button(key="gpu.run").disabled
    assert not at.exception and not at.dataframe
    from flatkv.gpu import device_lock

    assert not device_lock("cpu").locked()


def test_layout_names_the_padding_its_planner_has():
    at = open_app("app_pages/layout.py", QWEN35_LINK)
    # packed, P 1,056: the page row is the widest row, a KV row of 1,056 x 2,048 = 2,162,688 B;
    # each of the 36 state rows (2,146,304 B) pads 16,384 B: 589,824 B of a uniform-page
    # block of 103,219,200 + 589,824 = 103,809,024 B, 0.568% (as app_data's headline)
    assert metrics(at)["Uniform pages would pad"] == f"{589_824 / 103_809_024:.2%}" == (
        "0.57%")
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
        "page", "Block", "P", "token slot", "state page", "Dummy page", "Padding", "Dead weight"]
    glossary = (ROOT / "ARCHITECTURE.md").read_text()
    for word in ("group", "component", "row", "slot", "page id", "page", "block", "dead weight"):
        assert f"\n| {word} |" in glossary


@pytest.mark.parametrize("page", PAGES)
def test_a_bad_setting_is_explained_once_on_the_page(page):
    at = open_app(page, {"model": "Qwen3-Next-80B-A3B"})
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    assert not at.exception
    # one error box; the sidebar only points at it
    assert [shown(e).split(". Shown below")[0] for e in at.error] == [
        "gdn.k_heads = 16 is not divisible by tp = 3: choose a tp that divides it (tp up to 64 "
        "that split the model: 1, 2, 4, 8, 16)"]
    assert any("the page says why" in c.value for c in at.sidebar.caption)
    at.sidebar.number_input(key="w.tp").set_value(1).run()
    at.sidebar.text_input(key="w.weights").set_value("200GB").run()
    fill = "weights per rank (186.26 GiB) fill the usable memory (71.68 GiB)"
    side = " ".join(c.value for c in at.sidebar.caption)
    if page == "app_pages/model.py":  # no budget on the Model page: the sidebar says why
        assert not at.error and fill in side
    else:
        assert [fill in shown(e) for e in at.error] == [True] and fill not in side


def test_compare_takes_sglang_page_size_and_sliding_ratio():
    # gpt-oss-20b: 12 full + 12 sliding layers of 2,048 B per token; a 10 GB budget (frac 1)
    link = {"model": "gpt-oss-20b", "gpu": "Custom", "gpu_mem": "10GB", "frac": "1"}
    at = open_app("app_pages/compare.py", link)
    sglang = at.dataframe[0].value.set_index("strategy").loc["SGLang"]
    # defaults r_swa 0.8, page 1: a full-pool token costs 2,048 x (12 + 0.8 x 12) = 44,236.8 B,
    # 10**10 // 44,236.8 = 226,056 (226,056.7)
    assert sglang["capacity (tokens)"] == 226_056
    at.number_input(key="w.swa_full_tokens_ratio").set_value(0.5).run()
    at.number_input(key="w.sglang_page_size").set_value(64).run()
    assert_clean(at)
    assert (at.query_params["sg_swa"], at.query_params["sg_page"]) == ("0.5", "64")
    # 10**10 // (2,048 x (12 + 0.5 x 12)) = 271,267 (271,267.4), whole pages of 64: 271,232
    sglang = at.dataframe[0].value.set_index("strategy").loc["SGLang"]
    assert (sglang["capacity (tokens)"], sglang["P (tokens)"]) == (271_232, 64)
    # a model without sliding layers is not offered the sliding ratio
    plain = open_app("app_pages/compare.py", {**link, "model": "Llama-3.1-8B"})
    assert not [w for w in plain.number_input if w.key == "w.swa_full_tokens_ratio"]
    assert not [w for w in plain.selectbox if w.key == "w.sglang_swa_pool"]
    # without its hybrid SWA pool (an architecture not on SGLang's list) one pool holds every
    # token of all 24 layers: 10**10 // 49,152 = 203,450, in whole pages of 64: 203,392; the
    # ratio of a pool it no longer has is not offered
    pool = at.selectbox(key="w.sglang_swa_pool")
    # the selectbox shows what is in effect, not an empty placeholder
    assert pool.value == "auto" and pool.format_func("auto") == "auto (on)"
    assert ("auto is SGLang's own choice; for this model on, GptOssForCausalLM is on SGLang's "
            "hybrid SWA list.") in unescaped(pool.help)
    pool.set_value("off").run()
    assert_clean(at)
    assert at.query_params["sg_swa_pool"] == "0"
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang",
                                                             "capacity (tokens)"] == 203_392
    assert not [w for w in at.number_input if w.key == "w.swa_full_tokens_ratio"]


def test_compare_names_sglangs_page_on_a_b200():
    # told no page size, SGLang 0.5.23 runs pages of 64 on a B200: the note says so until the
    # options agree, and then the pool is whole pages of 64
    link = {"model": "gpt-oss-20b", "gpu": "B200 192GB"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    notes = [shown(c) for c in at.caption if c.value.startswith("SGLang 0.5.23 on a B200")]
    assert len(notes) == 1 and "pages of 64 tokens" in notes[0]
    at.number_input(key="w.sglang_page_size").set_value(64).run()
    assert not [c for c in at.caption if c.value.startswith("SGLang 0.5.23 on a B200")]
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang", "P (tokens)"] == 64
    on_h100 = open_app("app_pages/compare.py", {**link, "gpu": "H100 80GB"})
    assert not [c for c in on_h100.caption if c.value.startswith("SGLang 0.5.23 on a")]


def test_compare_follows_sglangs_sliding_pool_choice_for_the_architecture():
    # Gemma-3-12B's cache as raw bytes, its config's architecture carried in the link: SGLang
    # keeps every token of all 48 layers in one pool, 40 GiB // (48 x 8,192) = 109,226 tokens
    link = {"model": "custom", "layers": "(5*sliding_attention,full_attention)*8",
            "kv": "8192", "window": "1024", "arch": "Gemma3ForConditionalGeneration",
            "gpu": "Custom", "gpu_mem": "40GiB", "frac": "1"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert at.dataframe[0].value.set_index("strategy").loc[
        "SGLang", "capacity (tokens)"] == 109_226
    assert any(shown(c).startswith("SGLang keeps every token of every layer in one pool: "
                                   "Gemma3ForConditionalGeneration is not on SGLang's hybrid SWA "
                                   "list") for c in at.caption)
    assert at.selectbox(key="w.sglang_swa_pool").format_func("auto") == "auto (off)"
    assert not [w for w in at.number_input if w.key == "w.swa_full_tokens_ratio"]
    # on, as the user may force it: 40 GiB // (8,192 x (8 + 0.8 x 40)) = 131,072 (exactly)
    at.selectbox(key="w.sglang_swa_pool").set_value("on").run()
    assert_clean(at)
    assert at.query_params["sg_swa_pool"] == "1"
    assert at.dataframe[0].value.set_index("strategy").loc[
        "SGLang", "capacity (tokens)"] == 131_072
    # its capacity is now the full pool alone, the others' count sliding pages as history: the
    # capacity bars do not rank the layouts, and the page says so (not while one pool held all)
    ranks = [shown(c) for c in at.caption if shown(c).startswith("Capacity does not rank")]
    assert ranks == [
        "Capacity does not rank these layouts: SGLang's is its full-attention pool alone (its "
        "sliding layers keep a pool of their own), the others' count sliding pages as full "
        "history. Concurrency counts each the way its engine holds requests: compare that."]
    at.selectbox(key="w.sglang_swa_pool").set_value("auto").run()
    assert not [c for c in at.caption if shown(c).startswith("Capacity does not rank")]
    # Llama 4's chunked layers keep SGLang's other pool: named as chunked, not sliding
    scout = open_app("app_pages/compare.py", {"model": "Llama-4-Scout-17B-16E", "ctx": "131072"})
    assert [shown(c) for c in scout.caption if shown(c).startswith("Capacity does not")] == [
        "Capacity does not rank these layouts: SGLang's is its full-attention pool alone (its "
        "chunked layers keep a pool of their own), the others' count chunked pages as full "
        "history. Concurrency counts each the way its engine holds requests: compare that."]


def test_options_another_option_idles_are_neither_offered_nor_named():
    # a sliding ratio of 0.5 in the link: named while SGLang keeps its sliding pool, dropped from
    # the caption (and the field) once the pool is off; the chunk size likewise outside mode all
    link = {"model": "gpt-oss-20b", "gpu": "Custom", "gpu_mem": "10GB", "frac": "1",
            "sg_swa": "0.5"}
    at = open_app("app_pages/compare.py", link)
    assert "SGLang sliding/full tokens ratio 0.5" in at.caption[0].value
    at = open_app("app_pages/compare.py", {**link, "sg_swa_pool": "0"})
    assert_clean(at)
    assert at.caption[0].value.endswith("engine options: SGLang sliding-window pool off")
    chunk = {**QWEN35_LINK, "chunk": "128"}
    assert "mamba chunk" not in open_app("app_pages/compare.py", chunk).caption[0].value
    at = open_app("app_pages/compare.py", {**chunk, "mamba": "all"})
    assert at.caption[0].value.endswith(
        "engine options: mamba cache mode all, mamba chunk 128")
    # and in mode all the page says plainly which release the vLLM column is: 0.31, the last
    # with it, its start-up lines too (Qwen3.5 falls back to align there)
    captions = [c.value for c in at.caption]
    assert any("so in this mode the vLLM column is vLLM 0.31's: its figures and its start-up "
               "log lines are that release's." in c for c in captions)
    assert any(c.startswith("vLLM's start-up log at these settings, in vLLM 0.31's words (the "
                            "last release with mamba cache mode all)") for c in captions)


def test_budget_says_sliding_pages_count_as_history_only_where_they_do():
    # vLLM counts gpt-oss-20b's sliding pages like history: the window note; SGLang without its
    # sliding pool and vLLM with its hybrid manager off keep every token of every layer: a note
    # that says so; SGLang with its pool: its own note, and no tag
    link = {"model": "gpt-oss-20b", "gpu": "Custom", "gpu_mem": "10GB", "frac": "1"}

    def notes(query: dict) -> list[str]:
        at = open_app("app_pages/budget.py", {**link, **query})
        assert_clean(at)
        tag = {m.label: m.delta for m in at.metric}["Capacity (tokens)"]
        return [tag] + [c.value.split(":")[1].split(",")[0].strip() for c in at.caption
                        if c.value.startswith(("Sliding-window layers", "SGLang: capacity"))]

    full_history = "windows counted as full history"
    assert notes({"b_layout": "vllm"}) == [full_history, "capacity counts their pages like "
                                           "full history (no window eviction"]
    assert notes({"b_layout": "sglang"}) == ["", "capacity is the full-attention token pool; "
                                             "the sliding-window layers have a pool of their "
                                             "own"]
    assert notes({"b_layout": "sglang", "sg_swa_pool": "0"}) == [
        full_history, "without its sliding-window pool"]
    assert notes({"b_layout": "vllm", "v_hybrid": "0"}) == [
        full_history, "with its hybrid KV cache manager off"]


def test_the_profile_cache_key_changes_with_every_field():
    # a field left out of the key lets two models share cached figures: ssm tensors of equal
    # bytes in bfloat16 and in float32 size SGLang's float32 state differently
    from dataclasses import fields, replace

    from app_pages._figures import profile_key
    from flatkv.app_model import profile_for

    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    gpt = profile_for("gpt-oss-20b", None, 1)
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    assert (qwen.ssm_element_bytes, gpt.sliding_window) == (2, 128)
    changes = [
        (qwen, "layer_types", qwen.layer_types[::-1]),
        (replace(qwen, kv_tensor_bytes=()), "kv_bytes_per_slot", 1),
        (qwen, "state_const_bytes", {**qwen.state_const_bytes, "conv": 6}),
        (gpt, "sliding_window", 256), (qwen, "name", "other"), (qwen, "kernel_block_size", 64),
        (replace(qwen, ssm_dtype=None), "ssm_element_bytes", 4),
        (gpt, "architectures", ("Gemma3ForCausalLM",)),
        (qwen, "config_mamba_ssm_dtype", "bfloat16"), (qwen, "mamba_chunk_size", 64),
        (qwen, "conv_rows", 1), (gpt, "indexer_bytes_per_slot", 132),
        (scout, "attention_chunk_size", 4096), (qwen, "kv_dtype", "float16"),
        (qwen, "kv_tensor_bytes", (1024,)), (qwen, "conv_element_bytes", 4),
        (gpt, "sliding_kv_bytes_per_slot", 4096),
        (gpt, "kv_shared_layer_types", ("sliding_attention",)),
        (replace(gpt, sliding_kv_bytes_per_slot=4096), "sliding_kv_tensor_bytes", (2048, 2048)),
        (qwen, "ssm_dtype", "float16"),  # bfloat16's bytes: vLLM's KDA refuses this one
        # the TP behind the bytes, and the profiles at TP / D SGLang's attention DP reads
        (qwen, "tp", 4), (qwen, "attention_dp_profiles", ()),
    ]
    assert {f.name for f in fields(qwen)} == {name for _, name, _ in changes}, \
        "give each new field of CacheProfile a change here"
    for profile, name, value in changes:
        assert profile_key(replace(profile, **{name: value})) != profile_key(profile), name
    assert profile_key(replace(qwen)) == profile_key(qwen)


def test_a_vllm_log_taken_with_speculative_decoding_checks_out():
    # the anchor served with 2 drafted tokens and no drafter layers (ngram) in align (vLLM
    # 0.28's default with prefix caching): GDN conv 3 -> 5 rows, state 565,248 B, P 560,
    # 47,878,147,932 // 573,440 // 12 = 6,957 blocks, a request 469 + 3 x (2 + 2) = 481
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory",
            "kv_mem": "44.59GiB", "ctx": "262144", "mamba": "align", "spec_tokens": "2"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    vllm = vllm_row(at)
    assert (vllm["P (tokens)"], vllm["blocks"], vllm["engine log"],
            vllm["concurrency"]) == (560, 6_957, 6_957 * 262_144 // 481, 14.46)
    assert [w.value for w in at.number_input if w.label == "Speculative tokens"] == [2]
    # the mode's pages read with the drafted ones, under the mode's fixed choices
    assert at.selectbox(key="w.mamba_cache_mode").options == [
        "none (1 page)", "align (2 pages)", "all (1 per P)"]
    assert "A request holds align (2 state pages) + 2 drafted." in [c.value for c in at.caption]
    assert any("With 2 drafted token(s) a step" in c.value for c in at.caption)
    budget = open_app("app_pages/budget.py", {**link, "b_layout": "vllm"})
    assert any(c.value.startswith("Speculative decoding: these figures count the 2 drafted")
               for c in budget.caption)
    # with its MTP layer (one click): 13 full-attention layers, groups of 13, 47,878,147,932
    # // 573,440 // 13 = 6,422 blocks, the same 481 a request: 13.35x
    budget.button(key="mtp.add").click().run()
    assert_clean(budget)
    shown = metrics(budget)
    assert (shown["Blocks"], shown["Concurrency at 262,144 tokens"]) == ("6,422", "13.35")
    assert shown['vLLM\'s "GPU KV cache size" (tokens)'] == f"{int(6_422 / 481 * 262_144):,}"
    assert budget.query_params["model"] == "spec"  # an edited model now
    assert not budget.button  # added once
    assert any("The model's MTP layer is counted" in c.value for c in budget.caption)
    at.number_input(key="w.speculative_tokens").set_value(0).run()  # back to the default
    assert vllm_row(at)["P (tokens)"] == 544 and "spec_tokens" not in at.query_params


def test_a_vllm_log_checks_out_from_its_kv_cache_memory():
    # SPEC 3.1's anchor as a reviewer has it: Qwen3-Next TP 2, "Available KV cache memory:
    # 44.59 GiB", max_model_len 262,144; vLLM logged 973,760 tokens and 14.77x
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory",
            "kv_mem": "44.59GiB", "ctx": "262144"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    vllm = vllm_row(at)
    assert (vllm["P (tokens)"], vllm["blocks"], vllm["engine log"],
            vllm["concurrency"]) == (544, 7_162, 3_871_083, 14.77)
    # that log's two lines are an older release's: its 973,760 is named under the table
    assert any("vLLM 0.19 and earlier: 973,760" in c.value for c in at.caption)
    assert [w.value for w in at.sidebar.text_input] == ["44.59GiB"]  # no fraction, no weights
    assert not at.sidebar.slider
    budget = open_app("app_pages/budget.py", {**link, "b_layout": "vllm"})
    # int(7,162 / 485 x 262,144): current vLLM's one-line log
    assert metrics(budget)['vLLM\'s "GPU KV cache size" (tokens)'] == f"{7_162 * 262_144 // 485:,}"
    # and beside it SPEC 3.1's anchor log, vLLM 0.19's 7,162 // 4 groups x 544
    assert metrics(budget)["Older vLLM log (tokens)"] == f"{7_162 // 4 * 544:,}" == "973,760"
    # the log's 44.59 GiB is any of 44.585 to 44.595 GiB: 47,872,779,224 to 47,883,516,641 B
    # (test_budget), // 6,684,672 B a block (12 pages of 544 x 1,024 B) = 7,161 to 7,163
    # blocks, int(7,161 / 485 x 262,144) to int(7,163 / 485 x 262,144) tokens logged
    assert (47_872_779_224 // 6_684_672, 47_883_516_641 // 6_684_672) == (7_161, 7_163)
    rounding = (
        "A log prints this memory to 0.01 GiB (44.59 GiB, as vLLM prints it), so the budget "
        "is any of 47,872,779,224 to 47,883,516,641 B; over those, blocks 7,161 to 7,163 "
        "(vLLM v1); vLLM's \"GPU "
        f"KV cache size\" {7_161 * 262_144 // 485:,} to {7_163 * 262_144 // 485:,} tokens. The "
        "figures above read it as 47,878,147,932 B.")
    assert rounding in [unescaped(c.value) for c in budget.caption]
    assert rounding in [unescaped(c.value) for c in at.caption]
    # where the rounding decides whether vLLM starts: Llama-3.1-8B at 131,056 tokens needs
    # 8,191 blocks of 32 x 16 x 4,096 = 2 MiB, and the null block one more: exactly 16 GiB,
    # which 16.00 GiB's low end lacks
    assert (8_191 + 1) * 32 * 16 * 4_096 == 16 * 2**30 and 131_056 == 8_191 * 16
    edge = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                            "kv_mem": "16GiB", "ctx": "131056",
                                            "b_layout": "vllm"})
    assert_clean(edge)
    low = 16 * 2**30 - 2**30 // 200  # ceil(15.995 GiB)
    assert ("A log prints this memory to 0.01 GiB (16.0 GiB, as vLLM prints it), so the "
            f"budget is any of {low:,} to {16 * 2**30 + 2**30 // 200:,} B, and "
            f"vLLM v1 does not apply at {low:,} B: whether the engine had enough, the log's "
            "rounding hides.") == unescaped(next(c.value for c in edge.caption
                                                  if "prints" in c.value))
    # the largest budget a plan takes draws, with no range (past 2**53 B a float print rounds
    # otherwise)
    top = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                           "kv_mem": "1073741824GiB", "b_layout": "vllm"})
    assert_clean(top)
    assert not [c for c in top.caption if "prints this memory" in c.value]
    # a budget not typed from a log says nothing of rounding
    typed = open_app("app_pages/budget.py", {**link, "kv_mem": "47878147933B", "b_layout": "vllm"})
    assert not [c for c in typed.caption if "prints this memory" in c.value]


def test_a_new_memory_source_starts_from_the_figures_shown():
    # Custom starts at the GPU picked before (the H200's 143,771 MiB, not 80 GB); KV cache
    # memory at the budget the sidebar had: floor(143,771 MiB x 0.9) = 135,679,338,086 B
    at = open_app("app_pages/compare.py", {"gpu": "H200 141GB"})
    before = at.sidebar.metric[0].help
    at.sidebar.selectbox(key="w.gpu").set_value("Custom").run()
    assert at.query_params["gpu_mem"] == "143771MiB" and at.sidebar.metric[0].help == before
    at.sidebar.selectbox(key="w.gpu").set_value("KV cache memory").run()
    assert at.query_params["kv_mem"] == f"{143_771 * 2**20 * 9 // 10}B" == "135679338086B"
    assert at.sidebar.metric[0].help == before == "135,679,338,086 B"
    # the field groups the bytes as the help does; the link keeps them plain
    assert at.sidebar.text_input(key="w.kv_memory").value == "135,679,338,086B"
    at.sidebar.text_input(key="w.kv_memory").set_value("135,679,338,087B").run()
    assert_clean(at)
    assert at.query_params["kv_mem"] == "135679338087B"
    assert at.sidebar.metric[0].help == "135,679,338,087 B"


def test_help_texts_name_the_memory_sources_as_the_gpu_picker_shows_them():
    # 'pick "vLLM KV cache blocks" above' must find an option that reads so (it read "vLLM
    # blocks (from a log)")
    at = open_app("app_pages/budget.py", {"gpu": "KV cache memory"})
    labels = at.sidebar.selectbox(key="w.gpu").options
    assert labels[-2:] == ["KV cache memory (log)", "vLLM KV cache blocks (log)"]
    helps = [w.help or "" for w in (*at.sidebar.selectbox, *at.sidebar.text_input,
                                     *at.sidebar.number_input)]
    fraction = open_app("app_pages/budget.py", {}).sidebar
    helps += [w.help or "" for w in (*fraction.slider, *fraction.text_input)]
    named = {name for text in helps for name in re.findall(r'pick "([^"]+)"', text)}
    assert named == {"vLLM KV cache blocks", "KV cache memory"}
    assert all(any(label.startswith(f"{name} (") for label in labels) for name in named)


def test_a_kv_memory_in_decimal_units_says_what_the_binary_one_would_be():
    # SGLang prints GiB as "GB": 44.59GB typed from its log is 10^9 bytes here, 7% short
    at = open_app("app_pages/compare.py", {"gpu": "KV cache memory", "kv_mem": "44.59GB"})
    assert_clean(at)
    assert at.sidebar.metric[0].help == "44,590,000,000 B"
    assert [c.value for c in at.sidebar.caption if "comes from an engine's log" in c.value] == [
        "44.59GB is 44,590,000,000 B (GB: 10^9 bytes). If it comes from an engine's log, write "
        f"44.59GiB ({4459 * 2**30 // 100:,} B): logs count GiB, SGLang's too where it prints "
        '"GB".']
    at.sidebar.text_input(key="w.kv_memory").set_value("44.59GiB").run()
    assert at.sidebar.metric[0].help == "47,878,147,932 B"
    assert not [c for c in at.sidebar.caption if "comes from an engine's log" in c.value]


def test_compare_sizes_sglang_ssm_state_in_its_own_dtype():
    # Qwen3-Next TP 2, a 40 GiB budget: SGLang keeps the ssm state (262,144 elements) in
    # float32 unless told; the state pool is 40 GiB x 9 / 19, a slot 36 GDN layers
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "Custom", "gpu_mem": "40GiB",
            "frac": "1"}
    budget = 40 * 2**30

    def tokens(ssm_bytes: int) -> int:
        slot = 36 * (24_576 + 262_144 * ssm_bytes)
        return (budget - budget * 9 // 19 // slot * slot) // (12 * 1_024)

    at = open_app("app_pages/compare.py", link)
    sglang = at.dataframe[0].value.set_index("strategy").loc["SGLang"]
    assert sglang["capacity (tokens)"] == tokens(4) == 1_841_509
    at.selectbox(key="w.sglang_ssm_dtype").set_value("bfloat16").run()
    assert_clean(at)
    assert at.query_params["sg_ssm"] == "bfloat16"
    sglang = at.dataframe[0].value.set_index("strategy").loc["SGLang"]
    assert sglang["capacity (tokens)"] == tokens(2)
    # a model without state layers is not offered it
    plain = open_app("app_pages/compare.py", {**link, "model": "Llama-3.1-8B", "tp": "1"})
    assert not [w for w in plain.selectbox if w.key == "w.sglang_ssm_dtype"]


def test_sglang_takes_the_ssm_dtype_a_config_names_unless_told():
    # the same Qwen3-Next TP 2 as raw bytes whose config said mamba_ssm_dtype bfloat16 (the
    # link's cfg_ssm): SGLang's default is then bfloat16, 2 B an element, as SGLang reads it
    from dataclasses import replace

    from flatkv.app_model import RawModel, profile_for
    from flatkv.app_state import AppState, encode_query

    preset = replace(profile_for("Qwen3-Next-80B-A3B", None, 2),
                     config_mamba_ssm_dtype="bfloat16")
    link = {**encode_query(AppState(model="custom", raw=RawModel.from_profile(preset), tp=2)),
            "gpu": "Custom", "gpu_mem": "40GiB", "frac": "1"}
    assert link["cfg_ssm"] == "bfloat16"
    budget, slot = 40 * 2**30, 36 * (24_576 + 262_144 * 2)
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    sglang = at.dataframe[0].value.set_index("strategy").loc["SGLang"]
    assert sglang["capacity (tokens)"] == (budget - budget * 9 // 19 // slot * slot) // (
        12 * 1_024) == 1_840_621
    ssm = at.selectbox(key="w.sglang_ssm_dtype")
    assert ssm.format_func(ssm.value) == "auto (bfloat16)"
    assert "for this model bfloat16, the config's mamba_ssm_dtype." in ssm.help
    assert not any("SGLang keeps the ssm state" in c.value for c in at.caption)  # same bytes
    ssm.set_value("float32").run()  # SGLANG_MAMBA_SSM_DTYPE overrides the config
    assert at.query_params["sg_ssm"] == "float32"
    slot = 36 * (24_576 + 262_144 * 4)
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang", "capacity (tokens)"] == (
        budget - budget * 9 // 19 // slot * slot) // (12 * 1_024) == 1_841_509


def test_compare_a_state_only_model_shows_no_capacity_and_no_none():
    at = open_app("app_pages/compare.py", {"model": "custom", "layers": "4*linear", "kv": "0",
                                           "state": "conv=49152"})
    assert_clean(at)
    table = at.dataframe[0].value.set_index("strategy")
    assert "capacity (tokens)" not in table.columns  # no attention layer: no token history
    # SGLang keeps state in per-request slots: no page size, a gap (shown as a dash)
    assert pd.isna(table.loc["SGLang", "P (tokens)"])
    assert table.loc["vLLM v1", "P (tokens)"] == 16
    # 4 layers x 49,152 B = 196,608 B a block; the default budget // that
    budget = int(DEFAULT.gpu_bytes * 0.9)
    assert table.loc["vLLM v1", "blocks"] == budget // 196_608
    assert any("no token history" in c.value for c in at.caption)
    fig = at.get("plotly_chart")[0].proto.spec
    assert '"capacity (tokens)"' not in fig and "concurrency\\u003cbr\\u003eat 32,768 tokens" in fig


def test_kernel_block_size_starts_at_the_models_own():
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3"})
    assert_clean(at)
    # MLA: vLLM's FlashMLA kernel blocks of 64 make P 64, not the requested 16
    assert at.number_input(key="w.kernel_block_size").value == 64
    assert vllm_row(at)["P (tokens)"] == 64
    assert "kernel" not in at.query_params
    at.number_input(key="w.kernel_block_size").set_value(16).run()
    assert vllm_row(at)["P (tokens)"] == 16 and at.query_params["kernel"] == "16"
    at.number_input(key="w.kernel_block_size").set_value(64).run()  # the model's own: auto
    assert "kernel" not in at.query_params
    at.switch_page("app_pages/model.py").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    at.switch_page("app_pages/compare.py").run()
    assert at.number_input(key="w.kernel_block_size").value == 16


def test_budget_page_for_a_state_only_model_has_no_capacity():
    at = open_app("app_pages/budget.py", {"model": "custom", "layers": "4*linear", "kv": "0",
                                          "state": "conv=49152", "planner": "per-component"})
    assert_clean(at)
    m = metrics(at)
    assert m["Capacity (tokens)"] == "—"
    # one request holds one state page of 4 x 49,152 B; P 16 at the default block size
    budget = DEFAULT.budget().cache_bytes
    assert m["Blocks"] == f"{budget // 196_608:,}"
    assert m["Concurrency at 32,768 tokens"] == f"{budget // 196_608:,}.00"
    assert "capacity (tokens)" not in at.dataframe[0].value.columns
    # in vLLM's layout its log still counts tokens: mode none, the mamba block size is
    # max_model_len, one block a request: 10**10 // (4 x 49,152) = 50,862 blocks x 4,000
    vllm = open_app("app_pages/budget.py", {
        "model": "custom", "layers": "4*linear", "kv": "0", "state": "conv=49152",
        "b_layout": "vllm", "ctx": "4000", "gpu": "Custom", "gpu_mem": "10GB", "frac": "1"})
    assert_clean(vllm)
    m = metrics(vllm)
    assert m["Capacity (tokens)"] == "—" and m["Blocks"] == f"{10**10 // 196_608:,}" == "50,862"
    assert m['vLLM\'s "GPU KV cache size" (tokens)'] == f"{50_862 * 4000:,}" == "203,448,000"
    # older releases printed num_blocks // groups x the block size, here the same figure: the
    # help gives one
    assert {x.label: x.help for x in vllm.metric}[
        'vLLM\'s "GPU KV cache size" (tokens)'] == (
        "The token count the engine's log prints: max concurrency x max_model_len. The math "
        "shows it.")
    # Compare shows the same log figure, with no capacity column
    compare = vllm.switch_page("app_pages/compare.py").run()
    table = compare.dataframe[0].value.set_index("strategy")
    assert "capacity (tokens)" not in table.columns
    assert table.loc["vLLM v1", "engine log"] == 203_448_000


def test_a_state_model_keeps_its_ssm_element_size_as_raw_bytes():
    # the default Qwen3-Next (TP 1, ssm 524,288 elements of 2 B) edited as raw bytes: SGLang
    # still keeps the ssm state in float32, 49,152 + 524,288 x 4 = 2,146,304 B a layer
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.kv").set_value(4096).run()  # now a raw profile
    assert_clean(at)
    assert at.query_params["model"] == "custom" and at.query_params["ssm_el"] == "2"
    assert at.query_params["ssm_dtype"] == "bfloat16"  # its name rides with it
    at.switch_page("app_pages/compare.py").run()
    assert any("2,146,304 B of state per layer" in c.value for c in at.caption)
    # the form says so, and clearing the box takes the bytes as given (as --state does)
    at.switch_page("app_pages/model.py").run()
    assert at.checkbox(key="edit.ssm_el").value is True
    assert at.checkbox(key="edit.ssm_el").label == (
        "ssm tensor in 2-byte elements (bfloat16), as the model edited had it")
    at.checkbox(key="edit.ssm_el").uncheck().run()
    assert_clean(at)
    assert "ssm_el" not in at.query_params and not at.checkbox
    assert "ssm_dtype" not in at.query_params  # the name goes with the size
    at.switch_page("app_pages/compare.py").run()
    assert not any("of state per layer" in c.value for c in at.caption)  # as given: no re-size
    # an ssm tensor of 3 bytes is no whole count of 2-byte elements: its bytes taken as given
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.state").set_value("conv=49152,ssm=3").run()
    assert_clean(at)
    assert "ssm_el" not in at.query_params


def test_an_mla_model_keeps_its_kernel_block_size_as_raw_bytes():
    from flatkv.app_model import load_model_json
    from flatkv.profile import profile_to_dict

    at = open_app("app_pages/model.py", {"model": "DeepSeek-V3"})
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.kv").set_value(2 * 1152).run()  # now a raw profile
    assert_clean(at)
    # the kernel block size is part of the raw model, not an engine option the user set
    assert at.query_params["model"] == "custom" and at.query_params["model_kernel"] == "64"
    assert "kernel" not in at.query_params
    at.switch_page("app_pages/compare.py").run()
    assert vllm_row(at)["P (tokens)"] == 64  # still FlashMLA's 64, not 16
    assert "changed" not in at.expander[0].label
    at.switch_page("app_pages/model.py").run()
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert "model_kernel" not in at.query_params and "kernel" not in at.query_params
    at.switch_page("app_pages/compare.py").run()
    assert vllm_row(at)["P (tokens)"] == 16  # nothing of DeepSeek's 64 is left
    # the profile JSON export carries it too
    profile = load_preset("DeepSeek-V3").profile()
    exported = json.dumps(profile_to_dict(profile))
    assert json.loads(exported)["kernel_block_size"] == 64
    assert load_model_json(exported).kernel_block_size == 64


def test_gpu_lab_runs_on_the_default_device(small_flush):
    import torch

    # no device in the link: the first GPU where there is one (every kernel it runs), else cpu
    link = {k: v for k, v in TINY_LINK.items() if k != "device"}
    at = open_app("app_pages/gpu.py", link)
    expected = "cuda:0" if torch.cuda.is_available() else "cpu"
    assert at.selectbox(key="w.lab_device").value == expected
    tiny_run(at, pages=2)
    assert_clean(at)
    assert at.session_state["gpu.last_run"].results[0].device == expected
    rows = at.dataframe[0].value
    assert set(rows["bytes per call"]) == {2 * TINY_PAGE}
    from flatkv.gpu import bench

    assert set(rows["kernel"]) - {"copy"} == set(bench.available_implementations(expected))


def test_gpu_lab_pages_per_call_follow_the_sweep_and_the_pool():
    at = open_app("app_pages/gpu.py", {**TINY_LINK, "max_blocks": "8", "pages": "99"})
    assert not at.exception
    # a single run may move the whole pool, not more
    assert [shown(e) for e in at.error] == [
        "Pages per call is 99, more than the 8 blocks of the pool: give at most 8, or raise Max "
        "blocks"]
    assert at.button(key="gpu.run").disabled
    # no cap told: the automatic pool is 512 MiB of 131,072-byte pages, 4,096 of the plan's
    # blocks, a share of free memory rather than a cap to raise
    auto = open_app("app_pages/gpu.py", {**TINY_LINK, "pages": "5000"})
    assert [shown(e) for e in auto.error] == [
        "Pages per call is 5,000, more than the 4,096 blocks of the pool: give at most 4,096, "
        "or set Max blocks (the automatic pool is a safe share of free memory; a run checks "
        "that a larger one fits)"]
    at.segmented_control(key="w.lab_sweep").set_value("pages per call").run()
    assert_clean(at)  # the sweep list gives the pages: the field is off, not in error
    assert at.number_input(key="w.lab_pages").disabled
    assert not at.button(key="gpu.run").disabled
    # a cap past the plan: the pool is all 8 of its blocks (1 MiB of blocks of 2 layers x 16
    # tokens x 4,096 B = 131,072 B), which no higher cap raises, so the fix is not the cap
    at = open_app("app_pages/gpu.py", {**TINY_LINK, "gpu": "KV cache memory", "kv_mem": "1MiB",
                                       "max_blocks": "99", "pages": "9"})
    assert metrics(at)["Planned blocks"] == f"{(1 << 20) // (2 * 16 * 4096)}" == "8"
    assert [shown(e) for e in at.error] == [
        "Pages per call is 9, more than the 8 blocks of the pool: give at most 8, the plan's "
        "blocks (a larger cache budget or a smaller block size plans more)"]
    assert at.button(key="gpu.run").disabled


def test_compare_says_when_not_one_request_fits():
    # Qwen3-Next at block 2**20: vLLM P 1,048,576; a request of 32,768 tokens takes 1 full page
    # and 3 state pages of 4 groups' blocks, and 2 blocks hold only half of one
    at = open_app("app_pages/compare.py", {"block": "1048576", "ctx": "32768"})
    assert_clean(at)
    # vLLM checks one request's pages in every group before it starts: 48 layers x one page
    # of 1,048,576 x 2,048 B = 103,079,215,104 B (96 GiB) > the 71.68 GiB budget
    assert at.dataframe[0].value.set_index("strategy").loc["vLLM v1", "note"] == (
        "won't start")  # listed without figures
    refusal = (f"**vLLM v1** refuses to start: one request of 32,768 "
               f"tokens needs {48 * 1_048_576 * 2_048:,} B of KV cache (96.00 GiB")
    assert any(c.value.startswith(refusal) for c in at.caption)
    assert [e.label for e in at.expander if e.label.startswith("vLLM v1")] == [
        "vLLM v1 (refuses to start)"]
    notes = [c.value for c in at.caption if c.value.startswith("Not even one request")]
    # two-level pages: a parent page is the full payload, 12 x 2**20 x 2,048 B; it holds
    # 652 state blocks of 36 x 1,097,728 B; the budget holds 2 parents, less the null one:
    # 1 parent for a request of 1 + 1/652 parents, 652 / 653 = 0.998 of one
    parent = 12 * 2**20 * 2_048
    assert (parent // (36 * 1_097_728), 76_968_728_985 // parent - 1) == (652, 1)
    assert 652 * 100 // 653 == 99  # cut, not rounded: 1.00 would read as a request that fits
    assert len(notes) == 1 and "two-level pages (0.99)" in notes[0]
    assert "FlatKV packed slabs" not in notes[0]  # 1.00: one request fits there



def test_compare_gives_vllms_reason_for_a_float16_kda_state():
    # Kimi Linear with its ssm state in float16 (the Model page's ssm dtype): vLLM 0.34's KDA
    # takes float32 or bfloat16 only, so Compare shows no vLLM figures but its reason; in
    # bfloat16 (the same bytes) vLLM v1 has its row, P 1,024 and 5,201 blocks of 8,257,536 B
    from flatkv.app_model import pack_spec, spec_to_json

    kimi = load_preset("Kimi-Linear-48B-A3B")
    links = {dtype: {"model": "spec", "ctx": "32768", "gpu": "KV cache memory",
                     "kv_mem": "40GiB",
                     "spec": pack_spec(spec_to_json(kimi.with_options(ssm_dtype=dtype)))}
             for dtype in ("float16", "bfloat16")}
    at = open_app("app_pages/compare.py", links["float16"])
    assert_clean(at)
    assert at.dataframe[0].value.set_index("strategy").loc["vLLM v1", "note"] == (
        "won't start")  # listed without figures
    assert "SGLang" in " ".join(at.dataframe[0].value["strategy"].tolist())
    refusal = ("**vLLM v1** refuses to start: KimiLinearForCausalLM's KDA layers keep their "
               "recurrent (ssm) state in float32 or bfloat16 only, and this model's ssm state "
               "is float16")
    assert any(unescaped(c.value).startswith(refusal) for c in at.caption)
    assert [e.label for e in at.expander if e.label.startswith("vLLM v1")] == [
        "vLLM v1 (refuses to start)"]
    at = open_app("app_pages/compare.py", links["bfloat16"])
    assert_clean(at)
    table = at.dataframe[0].value.set_index("strategy")
    assert table.loc["vLLM v1", "blocks"] == 5_201
    assert not any("KDA layers keep" in unescaped(c.value) for c in at.caption)

def test_compare_over_context_lengths_stops_a_line_where_vllm_refuses_to_start():
    # Llama-3.1-8B in 10 GB of cache: 131,072 B a token, 4,768 blocks of 16 tokens (76,288),
    # so vLLM refuses to start at its max_model_len of 131,072 tokens and runs at 65,536
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                           "kv_mem": "10GB"})
    assert_clean(at)
    (fig,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
              if "Concurrency over context length" in c.proto.spec]
    lines = {t["name"]: t for t in fig["data"]}
    assert lines["vLLM v1"]["x"] == [1 << k for k in range(10, 18)]
    assert lines["vLLM v1"]["y"][-1] is None  # no figure: the line stops
    # FlatKV's layout has one: 76,288 / 131,072 of a request, under the dashed one request
    assert lines["FlatKV packed slabs"]["y"][-1] == round(76_288 / 131_072, 2) == 0.58
    assert lines["1 request"]["y"] == [1, 1]
    # no diamond for vLLM, which has no figure at the page's length
    assert "vLLM v1" not in lines["at 131,072 tokens"]["customdata"]
    (sweep,) = [d.value for d in at.dataframe if "context" in d.value.columns]
    # a gap (shown as a dash) beside a figure: at 65,536 tokens vLLM's 4,768 blocks over the
    # 4,096 a request of them takes
    assert sweep["vLLM"].iloc[-2] == round(4768 / 4096, 2) and pd.isna(sweep["vLLM"].iloc[-1])
    assert list(sweep["packed"].iloc[[0, -1]]) == [76_288 / 1024, 0.58]
    # no state pool to cap Llama's requests: its caption does not speak of one
    caption = caption_starting(at, "Each point is")
    assert caption.endswith("Lines that coincide draw as one. vLLM's line is its log's Maximum "
                            "concurrency, from its KV blocks alone: its --max-num-seqs caps the "
                            "requests it runs too.")


def test_compare_says_in_its_last_column_which_layout_wont_start():
    # Llama-3.1-8B in 10,000,000,000 B at 100,000 tokens: vLLM's blocks, 10**10 // 2,097,152
    # = 4,768 of 16 tokens less its null block, hold 76,272 tokens, not one request, so it
    # refuses to start; one full group gives slab aliasing nothing to alias
    assert (10**10 // 2_097_152 - 1) * 16 == 76_272 < 100_000
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                           "kv_mem": "10000000000B", "ctx": "100000"})
    assert_clean(at)
    notes = at.dataframe[0].value.set_index("strategy")["note"].dropna().to_dict()
    assert notes == {"vLLM v1": "won't start", "slab aliasing": "n/a"}
    config = json.loads(at.dataframe[0].proto.columns)["note"]
    assert config["help"] == strategy_notes.HEADLINE_HELP["note"]
    assert "won't start, the engine refuses to start at these settings" in config["help"]


def test_compare_a_column_of_gaps_only_stays_numbers():
    # Qwen3-Next with vLLM's hybrid manager off: vLLM does not start, so no row has an older
    # vLLM log figure; the column of dashes was text, its dashes left-aligned beside the
    # right-aligned ones of the engine log column
    at = open_app("app_pages/compare.py", {"v_hybrid": "0"})
    assert_clean(at)
    frame = at.dataframe[0].value
    vllm = frame.set_index("strategy").loc["vLLM v1"]
    assert vllm["note"] == "n/a" and vllm.drop("note").isna().all()
    assert frame["older vLLM log"].isna().all()
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["older vLLM log"]["type_config"] == config["engine log"]["type_config"] == {
        "type": "number", "format": "localized"}


def test_compare_context_table_keeps_its_context_column_in_view_at_1000_px():
    # gpt-oss-20b: six layouts (slab aliasing applies) beside the context, 607 px of columns in
    # the expander's 504 at 1000 px; the table scrolls sideways, and the context of a row
    # scrolled to "two-level" went out of view with it
    from app_pages._frame import EXPANDER_COLUMN_PX

    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(at)
    (frame,) = [d for d in at.dataframe if "context" in d.value.columns]
    config = json.loads(frame.proto.columns)
    columns = list(frame.value.columns)
    assert columns == ["context", "packed", "per component", "vLLM", "SGLang", "aliasing",
                       "two-level"]
    assert sum(config[c]["width"] for c in columns) > EXPANDER_COLUMN_PX
    assert config["context"]["pinned"] is True
    assert [c for c in columns[1:] if "pinned" in config[c]] == []
    assert list(frame.value["context"]) == [1 << k for k in range(10, 18)]  # 1,024 to 131,072


def test_compare_context_table_of_five_layouts_fits_its_expander_at_1000_px():
    # Qwen3-Next (slab aliasing does not apply): the context and five layouts under "packed
    # slabs" took 515 px in the expander's 504 (Chromium: two-level's column cut by 20 px);
    # under "packed" 474. Widths as the page sizes them: 6.8 px a character and 24 px each
    # (context "262,144" 71, packed "485.00" 64, per component 112, vLLM "1,151.40" 78,
    # SGLang 64, two-level 85).
    from app_pages._frame import EXPANDER_COLUMN_PX

    at = open_app("app_pages/compare.py")
    assert_clean(at)
    (frame,) = [d for d in at.dataframe if "context" in d.value.columns]
    config = json.loads(frame.proto.columns)
    columns = list(frame.value.columns)
    assert columns == ["context", "packed", "per component", "vLLM", "SGLang", "two-level"]
    assert [config[c]["width"] for c in columns] == [71, 64, 112, 78, 64, 85]
    assert sum(config[c]["width"] for c in columns) == 474 <= EXPANDER_COLUMN_PX


def test_budget_draws_a_layout_that_does_not_start_here_across_the_page():
    """Where the layout does not start at this budget there is no block-size sweep: its budget
    chart was drawn in the left of two columns beside a blank half (SGLang's beside a note
    alone). It takes the page's width. Here one request of 131,056 tokens of Llama-3.1-8B
    needs 16 GiB in vLLM, and the budget is 1 GiB."""
    at = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                          "kv_mem": "1GiB", "ctx": "131056", "b_layout": "vllm"})
    assert not at.exception and at.error  # the page says why it does not start
    (fig,) = at.get("plotly_chart")
    assert "current: does not start" in fig.proto.spec
    assert not [c for column in at.columns for c in column.get("plotly_chart")]
    # SGLang has no block-size sweep either: its chart too, with the note that says why
    sglang = open_app("app_pages/budget.py", {"b_layout": "sglang"})
    assert_clean(sglang)
    assert len(sglang.get("plotly_chart")) == 1
    assert not [c for column in sglang.columns for c in column.get("plotly_chart")]
    assert any(c.value.startswith("SGLang's token pool does not page by the block size")
               for c in sglang.caption)
    # a layout that starts keeps its block-size sweep beside the budget chart
    started = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "b_layout": "vllm"})
    assert_clean(started)
    assert len([c for column in started.columns for c in column.get("plotly_chart")]) == 2


def test_budget_points_a_state_only_model_at_the_planner_that_takes_it():
    at = open_app("app_pages/budget.py", {"model": "custom", "layers": "4*linear", "kv": "0",
                                          "state": "conv=49152"})
    assert not at.exception
    assert any("pick the planner \"one tensor per component\" in the sidebar" in shown(e)
               for e in at.error)
    # no least budget for a layout that plans no such model at any budget: only the error
    assert not [m for m in at.metric if m.label.startswith("Budget for")]
    # a layout short of one request at this budget still says what would hold one: 4 layers
    # of 49,152 B need 196,608 B a request, and a block more of vLLM's null
    small = open_app("app_pages/budget.py", {"model": "custom", "layers": "4*linear", "kv": "0",
                                             "state": "conv=49152", "b_layout": "vllm",
                                             "gpu": "KV cache memory", "kv_mem": "100KB"})
    assert small.error and metrics(small)["Budget for 1 request"] == format_bytes(2 * 196_608)


def test_with_both_model_and_budget_wrong_the_sidebar_names_the_budget_reason():
    at = open_app("app_pages/layout.py", {"model": "Qwen3-Next-80B-A3B", "weights": "500GB"})
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    assert [shown(e) for e in at.error] == [
        "gdn.k_heads = 16 is not divisible by tp = 3: choose a tp that divides it (tp up to 64 "
        "that split the model: 1, 2, 4, 8, 16)"]
    side = " ".join(c.value for c in at.sidebar.caption)
    assert "weights per rank" in side and "fill the usable memory" in side


def test_budget_caption_names_only_options_that_act():
    # max batched tokens sizes sliding-window pages; Qwen3.5-like layers have none
    at = open_app("app_pages/budget.py", {**QWEN35_LINK, "mbt": "2048", "mamba": "align"})
    assert_clean(at)
    assert "engine options: mamba cache mode align" in budget_caption(at)
    assert "max batched tokens" not in budget_caption(at)
    # the chunk size acts in mamba cache mode "all" only: in mode none it is not named, shown
    # or counted as changed, on Budget or on Compare
    link = {**QWEN35_LINK, "chunk": "128"}
    budget = open_app("app_pages/budget.py", {**link, "b_layout": "vllm"})  # vLLM reads it
    assert "default engine options" in budget_caption(budget)
    assert [e.label for e in budget.expander][0] == "Engine options"
    compare = open_app("app_pages/compare.py", link)
    assert compare.caption[0].value.endswith(
        "vLLM 0.19's default engine options (Engine options offers vLLM 0.34's)")
    assert [e.label for e in compare.expander][0] == "Engine options"
    assert not [w for w in compare.number_input if w.key == "w.mamba_chunk_size"]
    compare = open_app("app_pages/compare.py", {**link, "mamba": "all"})
    assert "mamba cache mode all, mamba chunk 128" in compare.caption[0].value
    assert [e.label for e in compare.expander][0] == "Engine options (2 changed)"


def test_an_edit_does_not_tell_the_browser_to_reset_the_other_widgets():
    # A widget written from the state is sent to the browser with set_value, which overwrites
    # whatever the user is typing into it at that moment (CI lost a "Pages per call" entry typed
    # while the run for "Max blocks" was under way). Only a value the widget lacks is written.
    at = open_app("app_pages/gpu.py", TINY_LINK)
    at.number_input(key="w.lab_max_blocks").set_value(8).run()
    assert_clean(at)
    assert {w.key for w in keyed_widgets(at)} >= {"w.lab_pages", "w.lab_rounds", "w.block_size",
                                                  "w.lab_kernels", "w.mem_fraction"}
    assert [w.key for w in keyed_widgets(at) if w.proto.set_value] == []
    assert at.number_input(key="w.lab_max_blocks").value == 8
    for page in PAGES:  # and a plain rerun of any page resets nothing
        at.switch_page(page).run()
        at.run()
        assert [w.key for w in keyed_widgets(at) if w.proto.set_value] == [], page
    # the spec editor: an edit writes back only the field it changes (the name, "(edited)")
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    assert {w.key for w in keyed_widgets(at)} >= {"spec.pattern", "spec.full.head_dim_k"}
    assert [w.key for w in keyed_widgets(at) if w.proto.set_value] == ["spec.name"]
    at.run()
    assert [w.key for w in keyed_widgets(at) if w.proto.set_value] == []


def keyed_widgets(at: AppTest) -> list:
    """Every keyed widget AppTest sees, main area and sidebar, whatever its type."""
    found = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "set_value") and getattr(node, "key", None):
            found.append(node)
        children = getattr(node, "children", None)
        for child in children.values() if isinstance(children, dict) else ():
            walk(child)

    walk(at._tree)
    return found


def test_a_widget_on_the_next_page_shows_the_view_not_its_minimum():
    # streamlit tells same-key widgets of different pages apart; the key still holds the last
    # page's value, so the new widget must be written, or it starts from its minimum (1)
    at = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "ctx": "65536", "mbt": "4096"})
    for page in ("app_pages/budget.py", "app_pages/compare.py", "app_pages/layout.py",
                 "app_pages/budget.py", "app_pages/layout.py"):
        at.switch_page(page).run()
        assert_clean(at)
        values = {w.key: w.value for w in at.text_input}
        assert values["w.context"] == "65,536", page
        assert values["w.max_batched_tokens"] == "4,096", page  # every page offers it for sliding


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


def test_models_tables_fit_the_page_at_1000_px():
    """Jamba-1.5-Mini's cache-layer table ran past the 540 px of table at 1000 px (its conv and
    ssm shapes cut), and its config figures, a column a field, past it too. The kind goes
    last, two headers are short on screen (the data keeps their names), and the config's
    figures stand a row a field, a column a kind."""
    at = open_app(None, {"model": "Jamba-1.5-Mini"})
    assert_clean(at)
    kinds = at.dataframe[0]
    assert list(kinds.value.columns) == ["name", "layers", "KV B per token",
                                         "state B per layer", "conv shape", "ssm shape", "kind"]
    config = json.loads(kinds.proto.columns)
    assert [config[c]["label"] for c in ("KV B per token", "state B per layer", "conv shape",
                                         "ssm shape")] == ["KV B/token", "state B/layer",
                                                           "conv", "ssm"]
    # int(characters x 6.8) + 24 a column, by the longer of header and cells, and 18 for a
    # tooltip's icon: name 64 ("mamba1"), layers 64, "KV B/token" 92 + 18, "state B/layer"
    # 112 + 18 (their tooltips say what the short headers leave out), "conv" 78 (cells
    # "8192 x 3"), "ssm" 85 ("8192 x 16"): 531 px, in the 540 px of table
    widths = [config[c]["width"] for c in ("name", "layers", "KV B per token",
                                           "state B per layer", "conv shape", "ssm shape")]
    assert widths == [64, 64, 110, 130, 78, 85] and sum(widths) == 531
    assert config["KV B per token"]["help"].startswith("KV B per token: the bytes a layer")
    assert config["state B per layer"]["help"].startswith("state B per layer: the constant")
    assert kinds.value.set_index("name").loc["mamba1", "ssm shape"] == "8192 x 16"
    # Jamba-1.5-Mini's config: Mamba1 d_inner 8,192, d_state 16, conv kernel 4; attention 8
    # KV heads of 128
    geometry = at.dataframe[1].value
    assert list(geometry.columns) == ["config field", "mamba1", "full"]
    by_field = geometry.set_index("config field")
    assert [by_field.loc[f, "mamba1"] for f in ("d_inner", "d_state", "conv_kernel")] == [
        8192, 16, 4]
    assert (by_field.loc["kv_heads", "full"], by_field.loc["head_dim_k", "full"]) == (8, 128)
    assert pd.isna(by_field.loc["kv_heads", "mamba1"])


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
    assert metrics(at)["Uniform pages would pad"] == "0.16%"
    assert caption_starting(at, "Padded to the") == (
        "Padded to the 2,162,688 B page row at P 528: 24 linear_attention rows of 2,158,592 B, "
        "padded by 4,096 B each. 98,304 B (96.00 KiB) a block, 0.16% of the padded block of "
        "60,555,264 B; under 1% of a row, a sliver at this scale (hover a row's end for its "
        "bytes).")
    # Jamba-1.5-Mini: KV 4,096 B a token, state row 311,296 B, P 80 gives a 327,680 B page
    # row: 28 state rows padded by 16,384 B (5.26% of a row, wide enough to see: no pointer),
    # 458,752 B a block; padded, 32 x 327,680 = 10,485,760 B, of which 458,752 is 4.375%
    jamba = open_app("app_pages/layout.py", {"model": "Jamba-1.5-Mini"})
    assert caption_starting(jamba, "Padded to the") == (
        "Padded to the 327,680 B page row at P 80: 28 linear_attention rows of 311,296 B, "
        "padded by 16,384 B each. 458,752 B (448.00 KiB) a block, 4.38% of the padded block "
        "of 10,485,760 B.")
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

    assert "sliding_attention: 549, full_attention: 8,197" in pages_caption()
    at.text_input(key="w.max_batched_tokens").set_value("512").run()
    assert_clean(at)
    assert "sliding_attention: 69, full_attention: 8,197" in pages_caption()  # 32 + 32 + 5
    assert at.query_params["mbt"] == "512"
    # an attention-only model without sliding layers has no S to set here
    llama = open_app("app_pages/layout.py", {"model": "Llama-3.1-8B"})
    assert "w.max_batched_tokens" not in {w.key for w in llama.text_input}
    # and no state row inflates its P: no inflation chart
    assert not any("KV row at the requested" in c.proto.spec for c in llama.get("plotly_chart"))


def test_sliding_model_says_why_concurrency_passes_one_above_the_capacity():
    # gpt-oss-20b at 1M tokens: capacity 782,960 (sliding pages counted as history, SPEC 3.3)
    # yet 1.55 requests fit, since a request keeps only 128 tokens in the sliding layers
    at = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "ctx": "1000000"})
    assert_clean(at)
    assert metrics(at)["Capacity (tokens)"] == f"{97_870 // 2 * 16:,}"  # 2 groups share ids
    # per request: full ceil(1e6 / 16) = 62,500 pages; sliding ceil((128 - 1 + 8,192) / 16) + 1
    assert metrics(at)["Concurrency at 1,000,000 tokens"] == f"{97_870 / (62_500 + 521):.2f}"
    # said under the figure, beside the larger concurrency
    assert {m.label: m.delta for m in at.metric}["Capacity (tokens)"] == (
        "windows counted as full history")
    note = [c.value for c in at.caption if c.value.startswith("Sliding-window layers")]
    assert len(note) == 1 and "window of 128 tokens" in note[0]
    at.switch_page("app_pages/compare.py").run()
    assert sum(c.value.startswith("Sliding-window layers") for c in at.caption) == 1
    # Layout gives the same capacity; its help says the same why, a windowless model's does not
    at.switch_page("app_pages/layout.py").run()
    help_text = {m.label: m.help for m in at.metric}["Capacity (tokens)"]
    assert note[0] in help_text and metrics(at)["Capacity (tokens)"] == f"{97_870 // 2 * 16:,}"
    # 97,870 blocks x 16 = 1,565,920 token slots, half of them each group's
    assert {m.label: m.delta for m in at.metric}["Capacity (tokens)"] == (
        "token slots 1,565,920 (blocks x P) · windows counted as full history")
    llama = open_app("app_pages/layout.py", {"model": "Llama-3.1-8B"})
    assert "Sliding" not in {m.label: m.help for m in llama.metric}["Capacity (tokens)"]
    assert not {m.label: m.delta for m in llama.metric}["Capacity (tokens)"]
    assert not {m.label: m.delta for m in open_app(
        "app_pages/budget.py", {"model": "Llama-3.1-8B"}).metric}["Capacity (tokens)"]
    # SGLang with its hybrid SWA pool: the capacity is the full-attention pool, no window in it
    # (76,968,728,985 // (2,048 x (12 + 0.8 x 12)) = 1,739,925); with one pool, it is
    sglang = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "b_layout": "sglang"})
    assert metrics(sglang)["Capacity (tokens)"] == "1,739,925"
    assert not {m.label: m.delta for m in sglang.metric}["Capacity (tokens)"]
    # its idle pool said under the figures, as on Compare: 13 requests of 131,072 run, and the
    # sliding pool's 1,391,940 - 13 x 8,319 = 1,283,793 tokens x 24,576 B sit idle
    assert ("SGLang's idle pool: with 13 requests of 131,072 tokens running, 29.38 GiB of its "
            "sliding pool (1,283,793 tokens) sit idle (40.99% of the budget)") in "\n".join(
        shown(c) for c in sglang.caption)
    # said once: the note on its pools leaves the idle tokens to it
    assert sum("sit idle" in shown(c) for c in sglang.caption) == 1
    one_pool = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "b_layout": "sglang",
                                                "sg_swa_pool": "0"})
    assert {m.label: m.delta for m in one_pool.metric}["Capacity (tokens)"] == (
        "windows counted as full history")


def test_layout_takes_the_largest_workload_a_link_can_ask_for():
    # 4,096 requests of 2^40 tokens, the library's own bound (as the CLI's --context): the
    # page lists only the pool's first ids (listing 2^24 tokens' all took 24 GB and killed the
    # server)
    at = open_app("app_pages/layout.py", {"req": "4096", "ctx": str(1 << 40)})
    assert not at.exception
    (warning,) = [shown(w) for w in at.warning
                  if shown(w).startswith("One request of 1,099,511,627,776 tokens with")]
    assert f"full_attention: {-(-4096 * (1 << 40) // 544) + 4096 + 1:,}" in warning
    # one past it is the link's notice, not a figure
    at = open_app(None, {"ctx": str((1 << 40) + 1)})
    assert any("ctx is '1099511627777': give at most 1,099,511,627,776 tokens" in shown(e)
               for e in at.error)


def test_layout_draws_every_page_of_a_workload_that_fills_the_pool():
    # Kimi-Linear at P 1,888 on an H100: 1 request of 1,234,752 tokens (654 x 1,888) needs
    # 654 + 1 + 1 full-history pages (SPEC 3.5: its dummy page in the count) and as many state
    # pages (min(2 + 654 + 1, 656)): 1,312, the whole pool. The map draws all of them, none
    # set apart as a null page (it drew 655 full-attention pages beside a null one)
    assert (1_234_752 // 1888, 654 + 1 + 1, min(2 + 654 + 1, 656)) == (654, 656, 656)
    at = open_app("app_pages/layout.py", {"model": "Kimi-Linear-48B-A3B", "ctx": "1234752",
                                          "req": "1"})
    assert_clean(at)
    assert any("linear_attention: 656, full_attention: 656; 1,312 page ids in the pool" in
               c.value for c in at.caption)
    (drawn,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if "First 1,312 page ids" in c.proto.spec]
    cells = [v for row in drawn["data"][0]["z"] for v in row if v is not None]
    assert (cells.count(0), cells.count(1), len(cells)) == (656, 656, 1312)
    assert [t["name"] for t in drawn["data"][1:]] == [
        "linear_attention (656 pages)", "full_attention (656 pages)", "free"]


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
    assert [c for c in fits.get("plotly_chart") if "First 2,048 page ids" in c.proto.spec]
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


STATE_ONLY_LINK = {"model": "custom", "layers": "linear*24", "kv": "0",
                   "state": "conv=32768,ssm=1MiB"}


@pytest.mark.parametrize("page", ["app_pages/layout.py", "app_pages/budget.py",
                                  "app_pages/gpu.py"])
def test_packed_slabs_refuse_a_state_only_model_naming_the_setting(page):
    at = open_app(page, STATE_ONLY_LINK)
    assert not at.exception
    (error,) = [shown(e) for e in at.error]
    assert error.endswith('pick the planner "one tensor per component" in the sidebar' + (
        ', or another layout under "Whose layout"' if page.endswith("budget.py") else ""))


@pytest.mark.parametrize("page", ["app_pages/layout.py", "app_pages/budget.py",
                                  "app_pages/gpu.py"])
def test_a_budget_too_small_for_two_blocks_names_the_sidebar_settings(page):
    # default model (Qwen3-Next TP 1, block 16): blocks of 52,887,552 B; a 1 KB GPU at 0.9
    # leaves 900 B, no block at all
    at = open_app(page, {"gpu": "Custom", "gpu_mem": "1KB"})
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "The cache budget per rank, 900 B, holds 0 blocks of 52,887,552 B (50.44 MiB); a "
        "plan needs at least 2, that is 105,775,104 B (100.88 MiB): raise the GPU memory or "
        "the memory fraction, or lower the model weights, in the sidebar"]


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


def test_layout_says_how_its_state_pages_differ_from_budget():
    at = open_app("app_pages/layout.py", {"mamba": "align", "ctx": "32768"})
    (msg,) = [c.value for c in at.caption if "Pages the groups need" in c.value]
    # default view: 4 requests of 32,768 tokens at P 544; state min(2 x 4 + 131,072 // 544 + 1,
    # ceil(131,072 / 544) + 4 + 1) = min(249, 246)
    assert "linear_attention: 246, full_attention: 246" in msg
    assert "mamba cache mode align (2 state pages) per request" in msg
    # 2 drafted tokens: each of the 4 requests holds 2 more state pages, 246 + 8; the flat
    # layout keeps the model's conv rows, so P stays 544 and the history pages stay 246
    at = open_app("app_pages/layout.py", {"mamba": "align", "spec_tokens": "2", "ctx": "32768"})
    (msg,) = [c.value for c in at.caption if "Pages the groups need" in c.value]
    assert "linear_attention: 254, full_attention: 246" in msg
    assert ("a snapshot every P tokens (at most the full-history group's count), and 2 more "
            "per request for drafted tokens. Budget and "
            "Compare count the state pages of mamba cache mode align (2 state pages) and 2 more "
            "for drafted tokens per request") in msg


def test_a_presets_caveat_shows_where_its_figures_do():
    # Nemotron-H-8B is planned in bf16 as SPEC.md has it; vLLM and transformers keep float32
    for page in ("app_pages/model.py", "app_pages/compare.py"):
        at = open_app(page, {"model": "Nemotron-H-8B"})
        shown_text = [shown(e) for e in at.info] + [shown(c) for c in at.caption]
        assert any("default nemotron_h's to float32 (mamba_ssm_cache_dtype), twice the state "
                   "bytes" in t for t in shown_text), page
        if page.endswith("compare.py"):  # and under vLLM's log, what the log is of
            assert any("ssm state in float32 unless --mamba-ssm-cache-dtype or the config's "
                       "mamba_ssm_cache_dtype names another dtype: these lines keep it in "
                       "2-byte elements" in t for t in shown_text)
    assert not any("Note on this model" in shown(c)
                   for c in open_app("app_pages/compare.py", {}).caption)  # no notes: no line


def test_model_page_names_the_cache_dtypes():
    at = open_app("app_pages/model.py", {"model": "Nemotron-H-8B"})
    assert any(c.value == "Per TP rank (TP 1) · cache dtypes: KV bfloat16, conv bfloat16, ssm "
               "bfloat16 · 32 attention heads (a TP must divide them) · max_model_len 8,192 tokens "
               "(vLLM's default `--max-model-len`, from the config) · architecture: "
               "NemotronHForCausalLM · mamba chunk: 128 tokens (vLLM aligns P to it in mamba "
               "cache mode all)." for c in at.caption)
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "2"})
    assert any(c.value == "Per TP rank (TP 2) · cache dtypes: KV bfloat16 · 32 attention heads "
               "(a TP must divide them) · max_model_len 131,072 tokens (vLLM's default "
               "`--max-model-len`, from the config) · architecture: LlamaForCausalLM."
               for c in at.caption)
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    assert any(c.value == "Per TP rank (TP 1) · cache dtypes: KV bfloat16 · 64 attention heads "
               "(a TP must divide them) · max_model_len 131,072 tokens (vLLM's default "
               "`--max-model-len`, from the config) · architecture: GptOssForCausalLM."
               for c in at.caption)


def test_layout_gives_the_state_row_padding_vllm_logs():
    # Qwen3-Next (TP 1) at P 544 pads the 1,097,728 B state row to 544 x 2,048 = 1,114,112 B:
    # "Padding mamba page size by 1.49%", as SPEC 3.1 anchors it at TP 2 (both halve); of the
    # whole block (36 state rows of 48) it is 1.10%
    at = open_app("app_pages/layout.py")
    (pad,) = [m for m in at.metric if m.label == "Uniform pages would pad"]
    assert pad.value == f"{36 * 16_384 / (48 * 1_114_112):.2%}" == "1.10%"
    # said at this plan's P: vLLM pads at its own, which can differ (SPEC 1's block 64 and
    # alignment 16: ours 1,056, vLLM's 1,088)
    assert pad.proto.delta == f"state row padded by {16_384 / 1_097_728:.2%} at P 544" == (
        "state row padded by 1.49% at P 544")
    # MiniMax-M1's 2,097,152 B state row is 512 tokens of its 4,096 B a token: no padding,
    # said so (not "padded by 0.00%")
    minimax = open_app("app_pages/layout.py", {"model": "MiniMax-M1"})
    (pad,) = [m for m in minimax.metric if m.label == "Uniform pages would pad"]
    assert 512 * 4_096 == 2_097_152 and pad.value == "0.00%"
    assert pad.proto.delta == "state row fills its page row at P 512"


def test_the_planner_hint_stays_off_a_budget_error():
    # with the budget wrong as well, the page explains the budget, without the planner hint
    at = open_app("app_pages/layout.py", {**STATE_ONLY_LINK, "weights": "500GB"})
    assert not at.exception
    (error,) = [shown(e) for e in at.error]
    assert "weights" in error and "pick the planner" not in error


def test_sidebar_says_when_no_weights_are_set():
    def note(at):
        return [c.value for c in at.sidebar.caption if c.value.startswith("Model weights 0 B")]

    assert len(note(open_app("app_pages/layout.py"))) == 1  # the default view: weights 0 B
    assert note(open_app("app_pages/layout.py", {"weights": "80GB"})) == []


def test_budget_sweeps_an_engine_layout_picked_on_the_page():
    at = open_app("app_pages/budget.py", QWEN35_LINK)
    assert at.selectbox(key="w.budget_strategy").value == "flat"  # the sidebar's planner
    at.selectbox(key="w.budget_strategy").set_value("vllm").run()
    assert_clean(at)
    assert at.query_params["b_layout"] == "vllm"
    # as on Compare: P = 64 x cdiv(2,146,304, 64 x 2,048) = 1,088; page 2,228,224 B;
    # 80e9 // 2,228,224 // 12 groups = 2,991 blocks
    assert metrics(at)["Blocks"] == "2,991"
    # beside the capacity, the figure vLLM's log prints: 2,991 / 34 pages a request x 32,768,
    # and in its help the older releases' 2,991 // 4 groups x 1,088
    logged = next(m for m in at.metric if m.label == 'vLLM\'s "GPU KV cache size" (tokens)')
    assert logged.value == f"{2991 * 32768 // 34:,}"
    assert f"vLLM 0.19 and earlier printed {2991 // 4 * 1088:,} instead (beside it)" in (
        logged.help)
    older = next(m for m in at.metric if m.label == "Older vLLM log (tokens)")
    assert older.value == f"{2991 // 4 * 1088:,}"
    # three token figures side by side: each says which the concurrency (2,991 / 34 requests)
    # reads, int(2,991 / 34 x 32,768) its log's
    assert (logged.delta, older.delta) == ("concurrency x context, as vLLM logs it",
                                           "as vLLM 0.19 and earlier log it")
    assert metrics(at)["Concurrency at 32,768 tokens"] == f"{2991 / 34:.2f}"
    assert older.help.startswith("vLLM's \"GPU KV cache size\" as vLLM 0.19 and earlier printed "
                                 "it: num_blocks // groups x the smallest block size (P; in "
                                 "mamba cache mode none a state group's is min(P, "
                                 "max_model_len)), 812,736 here")
    # vLLM's own option, at the model's kernel block 16: A = max(16, block 64) = 64 above
    assert at.number_input(key="w.kernel_block_size").value == 16
    assert len(at.get("plotly_chart")) == 2  # over the budget and over the block size
    at.selectbox(key="w.budget_strategy").set_value("sglang").run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 1  # no block-size sweep: SGLang pages by its own
    assert any("does not page by the block size" in c.value for c in at.caption)
    # gpt-oss-20b, 10 GB: full pool 10**10 // (2,048 x (12 + 0.8 x 12)) = 226,056 tokens;
    # the sliding pool floor(0.8 x 226,056) = 180,844
    oss = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "gpu": "Custom",
                                           "gpu_mem": "10GB", "frac": "1", "b_layout": "sglang"})
    assert metrics(oss)["Capacity (tokens)"] == "226,056"
    assert not [k for k in metrics(oss) if "log" in k]  # SGLang logs its capacity: no second
    assert any(c.value.startswith("SGLang: capacity is the full-attention token pool; the "
                                  "sliding-window layers have a pool of their own, 180,844")
               for c in oss.caption)
    at.selectbox(key="w.budget_strategy").set_value("flat").run()  # back to the planner's
    assert "b_layout" not in at.query_params


def test_compare_when_no_layout_fits_blames_the_budget_not_the_model():
    at = open_app("app_pages/compare.py", {"gpu": "Custom", "gpu_mem": "1KB"})
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "No layout fits this budget: each says why below. Raise the GPU memory or the memory "
        "fraction, or lower the model weights, in the sidebar."]
    assert not at.get("plotly_chart")  # no empty chart or table above the error
    # the one table: what each layout needs to hold one request, the question this budget asks
    (held,) = [df.value for df in at.dataframe]
    assert at.number_input(key="w.hold_requests").value == 1
    # vLLM: P = 544 (SPEC 2), a block 12 x 544 x 2,048 B; one request of 262,144 tokens is
    # 482 full pages + 3 state pages = 485 blocks, and vLLM keeps a null block: 486
    vllm = held[held["strategy"] == "vLLM v1"].iloc[0]
    assert vllm["cache budget (B)"] == 486 * 12 * 544 * 2_048 == 6_497_501_184
    assert not any("the model has no attention layer" in c.value for c in at.caption)
    # with the KV cache memory given, the fix is that memory: fraction and weights do not act
    given = open_app("app_pages/compare.py", {"gpu": "KV cache memory", "kv_mem": "1KB"})
    assert [shown(e) for e in given.error] == [
        "No layout fits this budget: each says why below. Raise the KV cache memory in the "
        "sidebar."]
    layout = open_app("app_pages/layout.py", {"gpu": "KV cache memory", "kv_mem": "1KB"})
    (error,) = [shown(e) for e in layout.error]
    assert error.startswith("The cache budget per rank, 1,000 B, holds 0 blocks")
    assert error.endswith(": raise the KV cache memory in the sidebar")
    # an option no layout reads for the model is neither offered nor named as changed
    plain = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "sg_swa": "0.5"})
    assert "sliding/full" not in plain.caption[0].value
    assert not [w for w in plain.number_input if w.key == "w.swa_full_tokens_ratio"]


def test_budget_says_when_not_one_request_fits():
    # the default model on the default budget holds 0.79 of a request of 10**6 tokens: the
    # same note as Compare's
    at = open_app("app_pages/budget.py", {"ctx": "1000000"})
    assert_clean(at)
    notes = [c.value for c in at.caption if c.value.startswith("Not even one request")]
    assert notes == ["Not even one request of 1,000,000 tokens fits in: FlatKV packed slabs "
                     "(0.79). A paged engine laid out so would refuse to start, as vLLM does "
                     "when one request of max_model_len does not fit."]
    # Qwen3-Next's blocks of P 544: 12 x 544 x 2,048 + 36 x 1,097,728 = 52,887,552 B, 1,455
    # in the budget; a request holds ceil(10**6 / 544) = 1,839 history pages and a state
    # page: 1,455 / 1,840
    assert 76_968_728_985 // (12 * 544 * 2_048 + 36 * 1_097_728) == 1_455
    assert metrics(at)["Blocks"] == "1,455"
    assert {mm.label: mm.help for mm in at.metric}["Blocks"].endswith("P = 544")
    assert f"{1455 / (-(-10**6 // 544) + 1):.2f}" == "0.79"
    assert metrics(at)["Concurrency at 1,000,000 tokens"] == "0.79"


def test_compare_names_sglangs_own_ssm_dtype():
    # the default model, Qwen3-Next at TP 1: conv 49,152 B + ssm 32 x 128 x 128 elements, bf16
    # in the model (1,097,728 B a layer), float32 in SGLang (49,152 + 2,097,152 = 2,146,304 B)
    at = open_app("app_pages/compare.py", {})
    assert_clean(at)
    assert ("SGLang keeps the ssm state in float32 (SGLang's default ssm dtype; one dtype of "
            "its own, whatever the model's, set in the engine options): 2,146,304 B of state per "
            "layer against the 1,097,728 B the other layouts keep.") in [unescaped(c.value)
                                                                         for c in at.caption]


def test_mamba_chunk_starts_at_the_models_own_in_mode_all():
    # Nemotron-H-8B's config says chunk_size 128: in mamba cache mode all vLLM aligns P to
    # c = lcm(128, 16) = 128, P = 128 x cdiv(2,158,592, 128 x 4,096) = 128 x 5 = 640
    link = {"model": "Nemotron-H-8B", "gpu": "Custom", "gpu_mem": "80GB", "frac": "1",
            "mamba": "all"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    chunk = at.number_input(key="w.mamba_chunk_size")
    assert chunk.value == 128 and "chunk" not in at.query_params  # the model's own: no link key
    assert at.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 640
    # another chunk is the user's: 256 x cdiv(2,158,592, 256 x 4,096) = 256 x 3 = 768
    chunk.set_value(256).run()
    assert_clean(at)
    assert at.query_params["chunk"] == "256"
    assert at.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 768
    # back to 128 is the model's own again, and the link forgets it
    at.number_input(key="w.mamba_chunk_size").set_value(128).run()
    assert "chunk" not in at.query_params
    # a model whose config names no chunk (Jamba, Mamba1) starts at vLLM's 2,048:
    # P = 2,048 x cdiv(311,296, 2,048 x 4,096) = 2,048
    jamba = open_app("app_pages/compare.py", {**link, "model": "Jamba-1.5-Mini"})
    assert jamba.number_input(key="w.mamba_chunk_size").value == 2048
    assert jamba.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 2048
    # vLLM runs Qwen3-Next in align when asked for all: no chunk to set, P at TP 1 is
    # 16 x cdiv(1,097,728, 16 x 2,048) = 16 x 34 = 544, not lcm(2,048, 16) x 1 = 2,048 (all)
    qwen = open_app("app_pages/compare.py", {**link, "model": "Qwen3-Next-80B-A3B"})
    assert_clean(qwen)
    assert not [w for w in qwen.number_input if w.key == "w.mamba_chunk_size"]
    assert qwen.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 544
    assert any("Not vLLM here: vLLM's Qwen3NextForCausalLM does not support prefix caching of "
               "state in mode all" in c.value for c in qwen.caption)
    # Budget on vLLM says so beside its figures, not only in the math
    budget = open_app("app_pages/budget.py", {**link, "model": "Qwen3-Next-80B-A3B",
                                              "b_layout": "vllm"})
    assert_clean(budget)
    assert ("vLLM's Qwen3NextForCausalLM does not support prefix caching of state in mode all, "
            "so vLLM starts it in align (\"falling back to 'align' mode\"): these are align's "
            "figures, as vLLM 0.31 (the last release with mode all) counts them.") in [
                unescaped(c.value) for c in budget.caption]


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
    assert ("At 32,768 tokens per request, this plan holds 23.48 requests; in the same budget "
            "vLLM v1 87.97 (3.75x ours), SGLang 52.33 (2.23x ours). Compare shows where each "
            "layout's bytes go.") in [unescaped(c.value) for c in at.caption]
    compare = open_app("app_pages/compare.py", QWEN35_LINK).dataframe[0].value
    assert list(compare.set_index("strategy").loc[["FlatKV packed slabs", "vLLM v1", "SGLang"],
                                                  "concurrency"]) == [23.48, 87.97, 52.33]
    # at 4M tokens: 775 / (ceil(4,194,304 / 1,056) + 1) = 0.20 of one request; vLLM's one
    # request needs more than its budget (it does not start); SGLang's pool 1,714,648 tokens
    long = open_app("app_pages/layout.py", {**QWEN35_LINK, "ctx": "4M"})
    (line,) = [unescaped(c.value) for c in long.caption if c.value.startswith("At ")]
    assert f"{775 / (-(-4_194_304 // 1_056) + 1):.2f}" == "0.20"
    assert line == (
        "At 4,194,304 tokens per request, this plan holds no whole request (0.20 of one); in "
        "the same budget vLLM v1 does not start, SGLang 0.41 "
        f"({1_714_648 * 3_973 / (4_194_304 * 775):.2f}x ours). Compare shows where each "
        "layout's bytes go and why a layout does not apply.")


def test_layout_tells_a_ratio_near_one_from_one():
    # DeepSeek-V3 in 40 GiB of KV cache at 163,840 tokens: 61 MLA layers of (512 + 64) x 2 B
    # = 70,272 B a token. Our blocks of 16 tokens: 42,949,672,960 // (16 x 70,272) = 38,199
    # (611,184 tokens); vLLM's MLA blocks of 64: 9,549 (611,136); SGLang's pages of one token:
    # 611,191. All three read 3.73 requests; vLLM holds 48 tokens fewer than ours (38,196 /
    # 38,199 = 0.99992, cut to 0.999 where 1.00 would say as many), SGLang 7 more (1.0000115)
    budget = 40 * 2**30
    assert (budget // (16 * 70_272), budget // (64 * 70_272), budget // 70_272) == (
        38_199, 9_549, 611_191)
    ours = Fraction(38_199 * 16, 163_840)
    vllm, sglang = Fraction(9_549, 163_840 // 64), Fraction(611_191, 163_840)
    assert (f"{float(vllm / ours):.5f}", f"{float(sglang / ours):.7f}") == ("0.99992",
                                                                          "1.0000115")
    at = open_app("app_pages/layout.py", {"model": "DeepSeek-V3", "gpu": "KV cache memory",
                                          "kv_mem": "40GiB"})
    assert_clean(at)
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line == ("At 163,840 tokens per request, this plan holds 3.73 requests; in the same "
                    "budget vLLM v1 3.73 (0.999x ours), SGLang 3.73 (1.00001x ours). Compare "
                    "shows where each layout's bytes go.")


def test_layout_says_which_engine_serves_no_such_model():
    # MiniMax-M1 at 131,072 tokens in the default budget (79.65 GiB x 0.9 = 76,968,728,985 B):
    # our plan's blocks of 80 rows of 2 MiB (P 512), a request 256 full pages and one state
    # page; vLLM's 2 MiB pages in 8 groups of 10 layers, a request 256 + 7 state pages. SGLang
    # has no MiniMax-M1 model: it serves no such model, whatever the budget.
    at = open_app("app_pages/layout.py", {"model": "MiniMax-M1", "ctx": "131072"})
    assert_clean(at)
    ours = Fraction(76_968_728_985 // (80 * 2**21), 256 + 1)
    vllm = Fraction(76_968_728_985 // 2**21 // 10, 256 + 7)
    (line,) = [unescaped(c.value) for c in at.caption if c.value.startswith("At ")]
    assert line == (
        f"At 131,072 tokens per request, this plan holds {float(ours):.2f} requests; in the "
        f"same budget vLLM v1 {float(vllm):.2f} ({float(vllm / ours):.2f}x ours), SGLang does "
        "not serve this model. Compare shows where each layout's bytes go and why a layout "
        "does not apply.")
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


def test_planned_blocks_bytes_budget_and_unused_are_the_worked_example():
    # (3 GDN + 1 full) x 12 at block 64 / align 16 on 80 GB (SPEC section 1): P 1,056,
    # 103,219,200 B a block, 80e9 // that = 775 blocks; 775 x 103,219,200 = 79,994,880,000 B
    # planned; 80e9 - that = 5,120,000 B unused
    lab = open_app("app_pages/gpu.py", QWEN35_LINK)
    assert_clean(lab)
    m = metrics(lab)
    assert (m["Planned blocks"], m["Planned bytes"]) == ("775", "74.50 GiB")
    # the headline's P and block as Layout's: ceil(2,146,304 / 2,048) = 1,048 token slots for
    # the state row, 1,056 at alignment 16; 36 state rows + 12 KV rows of 1,056 x 2,048 B
    slots = -(-2_146_304 // 2048)
    assert (slots, 16 * -(-slots // 16)) == (1048, 1056)
    assert 36 * 2_146_304 + 12 * 1056 * 2048 == 103_219_200
    assert m["P (tokens per page)"] == "1,056"
    assert next(x.help for x in lab.metric if x.label == "Block bytes").startswith(
        "103,219,200 B: one page id over every slot tensor (36 of them)")
    # one tensor per component has no slot tensors: Qwen3-Next at TP 2, 36 GDN layers' conv
    # and ssm and 12 KV tensors, 84; its block 36 x 548,864 + 12 x 544 x 1,024 B
    per = open_app("app_pages/gpu.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                        "planner": "per-component"})
    assert 36 * 548_864 + 12 * 544 * 1_024 == 26_443_776 and 36 * 2 + 12 == 84
    assert next(x.help for x in per.metric if x.label == "Block bytes").startswith(
        "26,443,776 B: one page id over every component tensor (84 of them)")
    # at the app's default budget, as `python -m flatkv bench` plans without --budget
    # (tests/gpu): Llama-3.1-8B's 2 MiB blocks in 76,968,728,985 B
    llama = open_app("app_pages/gpu.py", {"model": "Llama-3.1-8B"})
    assert metrics(llama)["Planned blocks"] == f"{76_968_728_985 // (32 * 16 * 4096):,}"
    assert next(x.help for x in lab.metric if x.label == "Planned bytes") == (
        "79,994,880,000 B")
    layout = open_app("app_pages/layout.py", QWEN35_LINK)
    m = {x.label: (x.value, x.help) for x in layout.metric}
    assert m["Budget"] == ("74.51 GiB", "80,000,000,000 B")
    assert m["Unused"] == ("4.88 MiB", "5,120,000 B")


def test_the_sidebar_shows_the_cache_budget_per_rank():
    # 81,559 MiB x 0.9 = 76,968,728,985 B usable (floored); weights 16 GB over TP 2 leave
    # 76,968,728,985 - 8,000,000,000 = 68,968,728,985 B = 64.23 GiB for the cache
    at = open_app("app_pages/model.py", {"gpu": "H100 80GB", "frac": "0.9", "weights": "16GB",
                                         "tp": "2"})
    (side,) = [x for x in at.sidebar.metric if x.label == "Cache budget per rank"]
    assert (side.value, side.help) == ("64.23 GiB", "68,968,728,985 B")


def test_a_config_engines_read_differently_says_so_beside_every_figure():
    # qwen2 with use_sliding_window and max_window_layers 14 of 28: transformers slides layers
    # 14 to 27, vLLM refuses the split, SGLang slides none; the note travels in the link and
    # shows on Model (an info box) and Compare (beside the engines' rows)
    from flatkv.app_model import pack_spec, spec_to_json
    from flatkv.hf_config import spec_from_hf_config

    spec = spec_from_hf_config({
        "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "num_hidden_layers": 28,
        "hidden_size": 3584,
        "num_attention_heads": 28, "num_key_value_heads": 4, "use_sliding_window": True,
        "sliding_window": 4096, "max_window_layers": 14, "max_position_embeddings": 32768},
        name="qwen2-swa")
    link = {"model": "spec", "spec": pack_spec(spec_to_json(spec))}
    note = ("use_sliding_window with max_window_layers 14: layers 14 to 27 slide, as "
            "transformers reads it; vLLM refuses the split (max_window_layers must equal "
            "num_hidden_layers); SGLang slides no layer. Every layout here plans the layers as "
            "transformers reads them")
    model = open_app("app_pages/model.py", link)
    assert_clean(model)
    assert markdown_literal(note) in [i.value for i in model.info]
    for page in ("app_pages/compare.py", "app_pages/budget.py"):
        at = open_app(page, link)
        assert_clean(at)
        assert any(c.value == f"Note on this model: {markdown_literal(note)}"
                   for c in at.caption), page


def test_a_chunk_set_for_one_model_goes_with_models_of_the_same_own_chunk():
    # Nemotron-H-8B's own chunk is 128; 256 set for it stays on Falcon-H1-7B (own 128 too)
    # and is dropped on granite-4.0-h-small (own 256) or Jamba (none: 2,048), which start at
    # their own
    link = {"model": "Nemotron-H-8B", "mamba": "all", "chunk": "256"}
    for preset, kept in (("Falcon-H1-7B", True), ("granite-4.0-h-small", False),
                         ("Jamba-1.5-Mini", False)):
        at = open_app("app_pages/model.py", link)
        at.selectbox(key="w.model").set_value(preset).run()
        assert_clean(at)
        assert at.query_params.get("chunk") == ("256" if kept else None), preset


def test_the_context_is_the_models_until_one_is_typed():
    # Qwen3-Next's config.json: max_position_embeddings 262,144, vLLM's default --max-model-len:
    # the pages count a request at it, as vLLM's log does, until a context is typed
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    assert_clean(at)
    assert at.text_input(key="w.context").value == "262,144" and "ctx" not in at.query_params
    assert not [c for c in at.caption if "unless told" in c.value]
    at.text_input(key="w.context").set_value("32K").run()
    assert at.query_params["ctx"] == "32768"
    assert [c.value for c in at.caption if "unless told" in c.value] == [
        "vLLM serves this model at 262,144 tokens unless told: its default `--max-model-len`, "
        "from the config, and the length its log gives the maximum concurrency at."]
    at.button(key="context.own").click().run()  # "Use the model's 262,144 tokens"
    assert_clean(at)
    assert "ctx" not in at.query_params and at.text_input(key="w.context").value == "262,144"
    assert not [b for b in at.button if b.key == "context.own"]
    # following the model, the context follows a new one: Llama-3.1-8B's 131,072
    at.switch_page("app_pages/model.py").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    at.switch_page("app_pages/budget.py").run()
    assert at.text_input(key="w.context").value == "131,072"
    assert "Concurrency at 131,072 tokens" in metrics(at)
    # past it: vLLM and SGLang refuse such a length unless told to allow it
    past = open_app("app_pages/budget.py", {"model": "Nemotron-H-8B", "ctx": "16384"})
    assert [unescaped(c.value) for c in past.caption if "Past this" in c.value] == [
        "Past this model's 8,192 tokens: vLLM refuses a `--max-model-len` above the length its "
        "config gives unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`, SGLang a `--context-length` "
        "unless `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`."]
    # a model whose length is not known (granite-4.0-h-small's config was not seen): 32,768
    granite = open_app("app_pages/layout.py", {"model": "granite-4.0-h-small"})
    assert_clean(granite)
    assert granite.text_input(key="w.context").value == "32,768"
    assert not [c for c in granite.caption if "unless told" in c.value]
    # every figure rests on that 32,768, so the field says it is assumed (no length to go back to)
    assumed = ("No max_model_len is known for this model, so the pages count at 32,768 tokens, "
               "an assumption: type the context you serve at (vLLM's log names it in \"Maximum "
               "concurrency for N tokens per request\").")
    assert [unescaped(c.value) for c in granite.caption if "No max_model_len" in c.value] == [
        assumed]
    assert not [b for b in granite.button if b.key == "context.own"]
    granite.text_input(key="w.context").set_value("128K").run()
    assert granite.query_params["ctx"] == "131072"
    assert not [c for c in granite.caption if "No max_model_len" in c.value]
    model = open_app("app_pages/model.py", {"model": "granite-4.0-h-small", "ctx": "65536"})
    assert [c.value for c in model.caption if "max_model_len" in c.value][0].startswith(
        "Per TP rank (TP 1) · cache dtypes: KV bfloat16, conv bfloat16, ssm bfloat16 · 32 "
        "attention heads (a TP must divide them) · max_model_len not known (the pages count at "
        "the 65,536 tokens typed)")
    untyped = open_app("app_pages/model.py", {"model": "granite-4.0-h-small"})
    assert "max_model_len not known (the pages count at 32,768 tokens until a context is typed " \
        "on Layout, Budget or Compare)" in [c.value for c in untyped.caption
                                             if "max_model_len" in c.value][0]
    # a typed context leaves the model's own length as the config gives it
    nemotron = open_app("app_pages/model.py", {"model": "Nemotron-H-8B", "ctx": "16384"})
    assert any("max_model_len 8,192 tokens" in c.value for c in nemotron.caption)


def test_a_default_workload_of_which_not_one_request_fits_is_said_not_warned():
    # Qwen3.5-27B at its own 262,144 tokens on an H100: P 784, 374 page ids. Budget counts one
    # state page a request (mode none, as the engine's log): 374 / (ceil(262,144 / 784) + 1) =
    # 374 / 336 = 1.11; the map's workload charges the state snapshots too, and one request
    # needs 337 page ids in each group: not one fits. Untyped, that is said (info, the field at
    # 1, no "lower the live requests"); typed, it is a warning.
    at = open_app("app_pages/layout.py", {"model": "Qwen3.5-27B"})
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
        "linear_attention: 337, full_attention: 337; 374 page ids in the pool. A full-history "
        "group's count is all requests' tokens over P, rounded up, and a page more a request "
        "for its part-filled last page; a sliding group's, each request's window pages and "
        "one step's tokens.")
    budget = open_app("app_pages/budget.py", {"model": "Qwen3.5-27B"})
    assert metrics(budget)["Concurrency at 262,144 tokens"] == "1.11"
    typed = open_app("app_pages/layout.py", {"model": "Qwen3.5-27B", "req": "1"})
    assert not typed.info and [shown(w) for w in typed.warning] == [info]


def test_a_workload_that_does_not_fit_offers_the_one_that_does():
    # Qwen3-Next at its own 262,144 tokens on an H100 (71.68 GiB, P 544): 4 requests with their
    # state snapshots need more page ids than the pool has, 1 fits. Until a number is typed the
    # map draws the 1 and says why; 4 typed get the warning, and the button shows that map.
    default = open_app("app_pages/layout.py")
    assert_clean(default)
    assert not default.warning and "req" not in default.query_params
    assert default.number_input(key="w.requests").value == 1
    # beside it the plan's requests at the top of the page, which count 1 state page each:
    # 1,455 page ids over ceil(262,144 / 544) = 482 history pages + 1 state page a request
    assert f"{1455 / (-(-262144 // 544) + 1):.2f}" == "3.01"
    said = caption_starting(default, "The map draws 1")
    assert said.startswith(
        "The map draws 1 live request of 262,144 tokens, not the default 4: 1 fits with its "
        "state snapshots. The 3.01 requests at the top of the page count the state pages as the "
        "engine's log does (the last paragraph here).\n\nPages the groups ")
    assert said.endswith("Budget and Compare count the state pages of mamba cache mode none (1 "
                         "state page) per request, as the engine's log does, and hold 3.01 "
                         "requests of 262,144 tokens.")
    # in mamba cache mode align with 2 checkpoint blocks, 2 + 2 state pages a request:
    # 1,455 / (482 + 4) = 2.99, and the caption says which pages it counts
    assert f"{1455 / (482 + 2 + 2):.2f}" == "2.99"
    align = open_app("app_pages/layout.py", {"mamba": "align", "ckpt": "2"})
    assert any(c.value.startswith("The map draws 1 live request") and "The 2.99 requests at "
               "the top of the page count" in c.value and c.value.endswith(
                   "mamba cache mode align (2 state pages) + 2 checkpoint per request, as the "
                   "engine's log does, and hold 2.99 requests of 262,144 tokens.")
               for c in align.caption)
    # the pool's 1,455 page ids, all drawn (under the map's 2,048)
    assert [c for c in default.get("plotly_chart") if "First 1,455 page ids" in c.proto.spec]
    # untyped, the field follows the context: 4 fit at 32,768 tokens, 1 again at 262,144
    default.text_input(key="w.context").set_value("32K").run()
    assert default.number_input(key="w.requests").value == 4
    assert not [c for c in default.caption if "The map draws" in c.value]
    default.text_input(key="w.context").set_value("256K").run()
    assert default.number_input(key="w.requests").value == 1 and "req" not in default.query_params
    # gpt-oss-20b at 32,768 tokens: its 4 fit, and the field says 4 (no caption)
    roomy = open_app("app_pages/layout.py", {"model": "gpt-oss-20b", "ctx": "32768"})
    assert roomy.number_input(key="w.requests").value == 4
    assert not [c for c in roomy.caption if "do not fit" in c.value]
    at = open_app("app_pages/layout.py", {"req": "4"})
    assert_clean(at)
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("This workload with its state snapshots does not fit in this "
                              "budget: it holds at most 1 request of 262,144 tokens")
    at.button(key="layout.fit").click().run()
    assert_clean(at)
    assert at.query_params["req"] == "1" and not at.warning
    msg = caption_starting(at, "Pages the groups need")
    # SPEC 3.5, one request of 262,144 tokens at P 544, no margin: history ceil(262,144 / 544)
    # + 1 + 1 = 484; state min(2 x 1 + 262,144 // 544 + 1, 484) = min(484, 484)
    assert f"linear_attention: {min(2 + 262_144 // 544 + 1, 482 + 2)}, full_attention: " \
        f"{-(-262_144 // 544) + 1 + 1}" in msg


def test_budget_gives_the_least_budget_and_gpu_for_the_requests_to_hold():
    # Llama-3.1-8B (131,072 B a token) on the default H100: 76,968,728,985 B holds 4.48
    # requests of 131,072 tokens (16 GiB each), so the field offers 5: 80 GiB of cache, and
    # the GPU memory whose 0.9 leaves it, ceil(85,899,345,920 / 0.9)
    at = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "131072"})
    assert_clean(at)
    assert at.number_input(key="w.hold_requests").value == 5
    m = metrics(at)
    assert m["Budget for 5 requests"] == "80.00 GiB"
    deltas = {mm.label: mm.delta for mm in at.metric}
    assert 5 * 2**34 - 76_968_728_985 == 8_930_616_935  # 8.32 GiB
    assert deltas["Budget for 5 requests"] == "8.32 GiB more than now"
    assert -(-5 * 2**34 * 10 // 9) == 95_443_717_689
    assert m["GPU memory for it"] == "88.89 GiB"
    assert "= 95,443,717,689 B" in {mm.label: mm.help for mm in at.metric}["GPU memory for it"]
    # more than the H100's 81,559 MiB (79.65 GiB): said beside the figure
    assert 95_443_717_689 > 81_559 * 2**20
    assert ("More than this GPU's 79.65 GiB: a larger GPU, a higher memory fraction, or more "
            "TP (weights and the model's heads split further).") in [c.value for c in at.caption]
    # a number typed travels in the link; 2 requests need 32 GiB, 39.68 GiB less than now
    at.number_input(key="w.hold_requests").set_value(2).run()
    assert at.query_params["hold"] == "2"
    assert metrics(at)["Budget for 2 requests"] == "32.00 GiB"
    assert not [c.value for c in at.caption if c.value.startswith("More than this GPU")]
    assert {mm.label: mm.delta for mm in at.metric}["Budget for 2 requests"] == (
        "39.68 GiB less than now")
    # a budget given as an engine logs it has no GPU to size
    given = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "131072",
                                             "gpu": "KV cache memory", "kv_mem": "40GiB"})
    assert metrics(given)["Budget for 3 requests"] == "48.00 GiB"  # 2.5 fit: 3 x 16 GiB
    assert "GPU memory for it" not in metrics(given)
    assert at.number_input(key="w.hold_requests").help == (
        "Requests of 131,072 tokens at once, for the least cache budget that holds them. Until "
        "you give a number: 5, one more than fit.")
    # at 128 tokens 4,587 requests fit (76,968,728,985 // 2**21 = 36,701 blocks of 16 tokens,
    # 8 a request): the field offers its largest, 4,096, and says so, as that budget is less
    # than now, not one more than fit
    short = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "128"})
    assert 76_968_728_985 // 2**21 // 8 == 4_587
    assert short.number_input(key="w.hold_requests").value == 4_096
    assert short.number_input(key="w.hold_requests").help.endswith(
        "Until you give a number: 4,096, the most this field takes (4,587 fit already).")
    assert metrics(short)["Budget for 4,096 requests"] == format_bytes(4_096 * 8 * 2**21)


def test_budget_chart_runs_on_to_the_least_budget_for_the_requests_to_hold():
    # Llama-3.1-8B at 131,072 tokens: 16 GiB a request, so 20 requests need 320 GiB, past
    # twice the H100's 76,968,728,985 B: the sweep runs to a quarter past 320 GiB and stars it
    at = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "131072",
                                          "hold": "20"})
    assert_clean(at)
    assert metrics(at)["Budget for 20 requests"] == "320.00 GiB"
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if "Over the budget" in c.proto.spec]
    star = next(t for t in spec["data"] if t["name"] == "least budget for 20 requests")
    assert (star["x"], star["y"], star["customdata"]) == ([320.0], [20.0], ["20.00"])
    line = next(t for t in spec["data"] if t["name"] == "concurrency at 131,072 tokens")
    # 39 steps from 76,968,728,985 // 10 to 320 GiB + 80 GiB
    lo, hi = 76_968_728_985 // 10, 400 * 2**30
    assert line["x"][0] == lo / 2**30 and line["x"][-1] == (lo + 39 * ((hi - lo) // 39)) / 2**30
    assert 399.99 < line["x"][-1] <= 400
    # a least budget under a tenth of this one takes the chart down to it: gpt-oss-20b holds
    # one request of 131,072 tokens in 8,192 + 521 blocks of 786,432 B (flat, 6.38 GiB)
    low = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "hold": "1"})
    assert metrics(low)["Budget for 1 request"] == "6.38 GiB"
    assert (f"{8_713 * 786_432:,} B per rank: the least cache budget that holds 1 request of "
            "131,072 tokens, counted as the concurrency above.") in {
                m.label: m.help for m in low.metric}["Budget for 1 request"]
    (low_spec,) = [json.loads(c.proto.spec) for c in low.get("plotly_chart")
                   if "Over the budget" in c.proto.spec]
    star = next(t for t in low_spec["data"] if t["name"] == "least budget for 1 request")
    assert (star["x"], star["y"]) == ([8_713 * 786_432 / 2**30], [1.0])
    # a layout that does not start at this budget: the chart still runs on to where it does
    # (vLLM's hybrid manager off on gpt-oss-20b: 10,000,000 tokens x 24 layers x 2,048 B =
    # 491,520,000,000 B, beside its null block), the current budget marked at 0 requests
    refused = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "ctx": "10000000",
                                               "b_layout": "vllm", "v_hybrid": "0"})
    assert any("refuses to start" in shown(e) for e in refused.error)
    assert metrics(refused)["Budget for 1 request"] == "457.76 GiB"
    # vLLM's least budgets: its logged concurrency, which leaves the null block out, but for
    # one request, which needs it to start
    assert {m.label: m.help for m in refused.metric}["Budget for 1 request"].endswith(
        "holds 1 request of 10,000,000 tokens, counted as this layout's concurrency. vLLM's "
        "logged concurrency leaves its null block out; to start, one request's blocks need it "
        "beside them, so for one request it is counted.")
    (over,) = [json.loads(c.proto.spec) for c in refused.get("plotly_chart")]
    assert "Over the budget" in over["layout"]["title"]["text"]
    assert [t["name"] for t in over["data"]] == [
        "capacity (tokens)", "concurrency at 10,000,000 tokens", "current: does not start",
        "least budget for 1 request"]
    now = over["data"][2]  # the default budget: an H100's 79.65 GiB x 0.9 = 76,968,728,985 B
    assert (now["x"], now["y"]) == ([76_968_728_985 / 2**30], [0])
    assert over["data"][3]["x"] == [(491_520_000_000 + 786_432) / 2**30]
    # the page ends there, but the run still writes the view into the link (st.stop() skipped
    # it): a link cleared by a sidebar click comes back whole
    refused.query_params.clear()
    refused.run()
    assert refused.query_params["ctx"] == "10000000" and refused.query_params["v_hybrid"] == "0"
    # the block-size chart beside it keeps as much legend room: their panels sit level
    (by_size,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
                  if "Over the block size" in c.proto.spec]
    assert by_size["layout"]["margin"]["t"] == spec["layout"]["margin"]["t"]


def test_compare_gives_each_layouts_budget_for_the_requests_to_hold():
    # Scout on an H200 at 131,072 tokens: vLLM holds 15.32 requests, the most, so the field
    # offers 16; vLLM needs 16 x (8,192 + 3 x 1,024) blocks of 786,432 B (tests/test_sizing.py)
    # and the GPU whose 0.9 leaves that, ceil(141,733,920,768 / 0.9)
    link = {"model": "Llama-4-Scout-17B-16E", "gpu": "H200 141GB", "ctx": "131072"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert at.number_input(key="w.hold_requests").value == 16
    assert at.number_input(key="w.hold_requests").help.endswith(
        "Until you give a number: 16, one more than fit in the layout that holds most.")
    held = next(df.value for df in at.dataframe if "cache budget (B)" in df.value.columns)
    vllm = held[held["strategy"] == "vLLM v1"].iloc[0]
    # (aliasing's row has no figure: a gap, which the table shows as a dash)
    assert vllm["cache budget (B)"] == 16 * 11_264 * 786_432 == 141_733_920_768
    assert vllm["cache budget"] == "132.00 GiB"
    assert vllm["GPU memory (B)"] == -(-141_733_920_768 * 10 // 9) == 157_482_134_187
    # more than the H200's 143,771 MiB (140.40 GiB): 157,482,134,187 B is 146.67 GiB
    assert vllm["GPU memory"] == "146.67 GiB (over 140.40 GiB)"
    # aliasing does not apply to Scout's groups at any budget (not a budget too small)
    assert held[held["strategy"] == "slab aliasing"].iloc[0]["cache budget"] == "does not apply"
    # the same setting as Budget's: a number typed there sizes here, and no GPU for a given
    # budget
    given = open_app("app_pages/compare.py", {**link, "hold": "8", "gpu": "KV cache memory",
                                              "kv_mem": "60GiB"})
    held = next(df.value for df in given.dataframe if "cache budget (B)" in df.value.columns)
    assert held[held["strategy"] == "vLLM v1"].iloc[0]["cache budget (B)"] == 70_866_960_384
    assert "GPU memory (B)" not in held.columns
    # the caption says SGLang's least budget is one from which every larger one holds them
    # only where one byte more can hold fewer: beside a state pool (Qwen3-Next), not for
    # Scout, whose SGLang pools have no slot steps
    said = [c.value for c in at.caption if c.value.startswith("The least cache budget")]
    assert said == ["The least cache budget per rank that holds 16 requests of 131,072 tokens "
                    "in each layout, and the GPU memory that leaves it."]
    qwen = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "hold": "2"})
    assert [c.value for c in qwen.caption if c.value.startswith("The least cache budget")] == [
        "The least cache budget per rank that holds 2 requests of 262,144 tokens in each "
        "layout (SGLang beside a state pool: from which every larger one holds them), and the "
        "GPU memory that leaves it."]


def test_budget_to_hold_where_the_layout_refuses_steps_or_the_default_is_past_the_field():
    # vLLM refuses Llama-3.1-8B at 1,000,000 tokens on an H100 (122.07 GiB a request): the page
    # still says what holds one, ceil(1e6 / 16) = 62,500 blocks of 16 x 131,072 B and the null
    # block its start-up check counts
    refused = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "1000000",
                                               "b_layout": "vllm"})
    # Markdown, as Compare lists it: the layout's name in bold, not literal asterisks
    assert any(e.value.startswith("**vLLM v1** refuses to start: one request of ")
               for e in refused.error)
    assert refused.number_input(key="w.hold_requests").value == 1
    assert metrics(refused)["Budget for 1 request"] == "122.07 GiB"
    assert f"{62_501 * 16 * 131_072:,} B per rank" in {
        m.label: m.help for m in refused.metric}["Budget for 1 request"]
    # 100-token requests: 5,871 fit, more than the field takes: it offers its largest, 4,096
    short = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "100"})
    assert short.number_input(key="w.hold_requests").value == 4096
    # SGLang, Qwen3-Next at TP 2, 1,386,512,383 B, 3 state slots a request (as without its
    # overlap scheduling): 3.13 requests of 20,000 tokens fit, yet the budget from which every
    # larger one holds 3 is 1,394,049,024 B (tests/test_sizing.py)
    step = open_app("app_pages/budget.py", {
        "model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory",
        "kv_mem": "1386512383B", "ctx": "20000", "b_layout": "sglang", "hold": "3",
        "sg_slots": "3"})
    assert_clean(step)
    assert metrics(step)["Concurrency at 20,000 tokens"] == "3.13"
    assert metrics(step)["Budget for 3 requests"] == "1.30 GiB"  # 1,394,049,024 B
    assert "from which every larger one holds 3" in {
        m.label: m.help for m in step.metric}["Budget for 3 requests"]
    assert any(c.value.startswith("This budget holds 3 requests too, but some budgets up to "
                                  "1.30 GiB do not") for c in step.caption)
    # Llama keeps no state: SGLang's figure is the plain least budget, no slot steps
    llama = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "131072",
                                             "b_layout": "sglang"})
    assert "every larger one" not in {m.label: m.help for m in llama.metric}[
        "Budget for 5 requests"]


def test_compare_says_what_sglangs_static_split_leaves_idle():
    # the figures of tests/test_app_data.py's idle split, under "Where the budget goes"
    at = open_app("app_pages/compare.py", {
        "model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory",
        "kv_mem": "55679338086", "ctx": "131072"})
    assert_clean(at)
    assert ("SGLang's idle pool: with 18 requests of 131,072 tokens "
            "running, 21.26 GiB of its state pool sit idle (41.01% of the budget), left so "
            "by its static split; a paged layout's idle rows are its dead weight.") in [
        shown(c) for c in at.caption]


def test_a_failed_load_at_a_tp_that_does_not_split_the_model_keeps_its_own_error():
    # Llama-3.1-8B's 8 KV heads do not split over TP 3 (the summary shows it at TP 1): a bad
    # paste still says why it failed, not why the current model does not plan at TP 3
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "3"})
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value("{broken").run()
    at.button(key="hf.load").click().run()
    assert not at.exception
    assert [shown(e) for e in at.error if "No config.json was loaded" in shown(e)] == [
        "pasted config.json is not valid JSON (line 1, column 2: Expecting property name "
        "enclosed in double quotes). No config.json was loaded: every page still shows "
        "Llama-3.1-8B."]


def test_a_budget_of_vllm_blocks_matches_a_vllm_0_34_log():
    # "Memory after warmup: ... 6701 KV cache blocks (44.17 GiB) fit" with Qwen3-Next at TP 2,
    # block 64, align: 6,701 blocks of 7,077,888 B (test_budget), 462 a request: 14.50x and
    # 3,802,222 tokens; read as 44.17 GiB, 6,700 blocks
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "vLLM KV cache blocks",
            "kv_blocks": "6701", "block": "64", "mamba": "align", "ctx": "262144"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    vllm = vllm_row(at)
    assert (vllm["blocks"], vllm["engine log"], vllm["concurrency"]) == (
        6_701, 3_802_222, 14.5)
    assert at.sidebar.number_input(key="w.kv_blocks").value == 6_701
    assert not [s for s in at.sidebar.slider if s.label == "Memory fraction"]
    assert "per rank (6,701 vLLM blocks of 6.75 MiB as given) · " in shown(at.caption[0])
    assert any("Memory after warmup: ... 6701 KV cache blocks (44.17 GiB) fit" in c.value
               for c in at.code)
    # and how its two memory lines read
    assert any("vLLM 0.34 on CUDA logs the Available line before warm-up, as an estimate, and "
               "sizes its cache by the blocks it fits after it" in c.value for c in at.caption)
    # the least budgets for R requests, with no GPU memory to run back to
    assert [list(d.value.columns) for d in at.dataframe][1] == [
        "strategy", "cache budget", "cache budget (B)"]
    assert any(c.value.endswith("A budget given as an engine logs it has no GPU memory to "
                                "derive.") for c in at.caption)
    # no "a log prints this to 0.01 GiB" range: the blocks are exact
    assert not [c for c in at.caption if "prints this memory to 0.01 GiB" in c.value]
    # picked from "KV cache memory", the blocks start at what that budget holds: 44.17 GiB
    # is 6,700 blocks, so the figures move by the one block the rounding lost
    given = open_app("app_pages/compare.py", {**link, "gpu": "KV cache memory",
                                              "kv_mem": "44.17GiB"})
    assert vllm_row(given)["blocks"] == 6_700
    given.sidebar.selectbox(key="w.gpu").set_value("vLLM KV cache blocks").run()
    assert_clean(given)
    assert given.query_params["kv_blocks"] == "6700"
    given.sidebar.number_input(key="w.kv_blocks").set_value(6_701).run()
    assert vllm_row(given)["blocks"] == 6_701
    # a budget of more blocks than a link holds starts at the most it does (1 B a token
    # and layer: pages of 16 B, so H200's 126.86 GB would be 7.9e9 blocks)
    tiny = open_app("app_pages/compare.py", {"model": "custom", "layers": "full", "kv": "1",
                                             "gpu": "H200 141GB"})
    tiny.sidebar.selectbox(key="w.gpu").set_value("vLLM KV cache blocks").run()
    assert_clean(tiny)
    assert tiny.query_params["kv_blocks"] == str(2**31)


def test_a_sliding_mtp_drafter_gets_no_full_attention_mtp_button():
    # Step-3.5 drafts with three sliding MTP layers: Compare, with tokens drafted, offers no
    # "Add an MTP layer" (a full-attention one), and its notes say why
    from test_hf_config import STEP35

    from flatkv.app_model import pack_spec, spec_to_json
    from flatkv.hf_config import spec_from_hf_config

    link = {"model": "spec", "spec": pack_spec(spec_to_json(spec_from_hf_config(STEP35))),
            "spec_tokens": "2"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert not [b for b in at.button if b.key == "mtp.add"]
    said = markdown_literal("Its 3 MTP layers are sliding_attention, kept only when drafting, "
                            "which FlatKV does not model")
    assert any(said in c.value for c in at.caption)
    # a drafter whose MTP layer is full attention still gets the button
    qwen = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "spec_tokens": "2"})
    assert [b for b in qwen.button if b.key == "mtp.add"]


def test_sliding_layers_of_their_own_bytes_in_compare_and_layout():
    # Gemma 4's shape as raw bytes in 40 GiB at 131,072 tokens (tests/test_strategies.py): vLLM
    # pages full layers by 32 tokens beside sliding ones of 16, 16,384 blocks, 5 x 577 + 4,096
    # a request; SGLang 58,254 full tokens (cell 8,192 x 10 + 0.8 x 16,384 x 50 = 737,280 B)
    link = {"model": "custom", "layers": "(5*sliding,full)*10", "kv": "8192", "swa_kv": "16384",
            "window": "1024", "ctx": "131072", "gpu": "KV cache memory", "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    vllm = vllm_row(at)
    assert (vllm["P (tokens)"], vllm["blocks"], vllm["concurrency"]) == (
        16, 16_384, round(16_384 / 6_981, 2))
    assert vllm["engine log"] == int(16_384 / 6_981 * 131_072)
    table = at.dataframe[0].value.set_index("strategy")
    assert table.loc["SGLang", "engine log"] == (40 << 30) // 737_280 == 58_254
    assert table.loc["slab aliasing", "note"] == "n/a"  # rows of two sizes share
    # no slab
    layout = open_app("app_pages/layout.py", link)
    assert_clean(layout)
    assert metrics(layout)["Block bytes"] == format_bytes(50 * 16 * 16_384 + 10 * 16 * 8_192)
    said = caption_starting(layout, "vLLM at these settings")
    assert said.startswith(
        "vLLM at these settings (Compare's column): P 16 (full_attention 32: its layers keep "
        "fewer bytes a token, so their page of the same bytes holds more tokens), pages of "
        f"{16 * 16_384:,} B in 10 tensors (group_size). A block id is 10 pages, "
        f"{10 * 16 * 16_384:,} B (2.50 MiB), and")  # no one figure a token: 16 or 32 tokens
    (pad,) = [m for m in layout.metric if m.label == "Uniform pages would pad"]
    assert "vLLM pads a history page only where its size does not divide the largest" in pad.help


def test_budget_sweeps_leave_a_gap_where_the_layout_does_not_start():
    # Qwen3-Next at TP 2 in 3.1 GiB: at block size 4,096 vLLM's page is 4,096 x 1,024 B and a
    # block 12 of them, 48 MiB; one request of 262,144 tokens needs 64 + 3 of them and the
    # budget holds 66, less the null block: vLLM refuses to start, so the point is no figure
    budget = int(3.1 * 2**30)
    assert budget // (4_096 * 1_024 * 12) == 66 < 262_144 // 4_096 + 3 + 1
    at = open_app("app_pages/budget.py", {"gpu": "KV cache memory", "kv_mem": "3.1GiB",
                                          "tp": "2", "b_layout": "vllm"})
    assert_clean(at)
    by_size = {t["name"]: t for t in json.loads(at.get("plotly_chart")[1].proto.spec)["data"]}
    assert by_size["capacity (tokens)"]["x"][-1] == 4_096
    assert by_size["capacity (tokens)"]["y"][-1] is None
    assert by_size["concurrency at 262,144 tokens"]["y"][-1] is None
    sweep = next(d.value for d in at.dataframe if "block size (tokens)" in d.value.columns)
    assert sweep.iloc[-1][["P (tokens)", "capacity (tokens)", "concurrency"]].isna().all()
    # every size in the table says its unit, as the chart's axis does (a bare "P" of 544 beside
    # a capacity in tokens read as bytes)
    assert list(sweep.columns) == ["block size (tokens)", "P (tokens)", "capacity (tokens)",
                                   "concurrency"]
    layout = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]
    assert "block size (tokens)" in [axis.get("title", {}).get("text") for name, axis
                                     in layout.items() if name.startswith("xaxis")]


def test_budget_block_size_sweep_table_fits_its_expander_at_1000_px(monkeypatch):
    # Qwen3-Next's sweep under unit-bearing headers: a first column headed "requested block
    # (tokens)" (187 px) put the table at 516 px in the expander's 504 (Chromium), concurrency
    # cut to "2.9"; "block size (tokens)", the sidebar's own words, is 153 px. Its 13 sizes
    # (1 to 4,096) are all in view: at the grid's own height 1,024 to 4,096 sat under a scroll.
    import streamlit as st

    from app_pages._frame import EXPANDER_COLUMN_PX

    heights = {}  # a table's height as the page asks for it (AppTest does not show it)
    dataframe = st.dataframe

    def spy(data, **kwargs):
        heights[tuple(data.columns)] = kwargs.get("height")
        return dataframe(data, **kwargs)

    monkeypatch.setattr(st, "dataframe", spy)
    at = open_app("app_pages/budget.py")
    assert_clean(at)
    sizes = [2**i for i in range(13)]
    assert heights[("block size (tokens)", "P (tokens)", "capacity (tokens)", "concurrency")] \
        == 35 * (len(sizes) + 1) + 3  # 35 px a row and the header's, and the border
    frame = next(d for d in at.dataframe if "block size (tokens)" in d.value.columns)
    config = json.loads(frame.proto.columns)
    widths = {col: config[col]["width"] for col in frame.value.columns}  # the index is hidden
    assert list(widths) == ["block size (tokens)", "P (tokens)", "capacity (tokens)",
                            "concurrency"]
    assert sum(widths.values()) <= EXPANDER_COLUMN_PX, widths
    assert list(frame.value["block size (tokens)"]) == sizes


def test_budget_says_what_sglangs_capacity_and_blocks_count():
    # SGLang's capacity is its token pool and its blocks the pool's pages of --page-size tokens
    at = open_app("app_pages/budget.py", {"b_layout": "sglang"})
    assert_clean(at)
    helps = {m.label: m.help for m in at.metric}
    assert helps["Capacity (tokens)"].startswith("SGLang's token pool (its log's "
                                                 "max_total_num_tokens)")
    assert metrics(at)["Capacity (tokens)"] == metrics(at)["Blocks"]  # pages of 1 token
    assert helps["Blocks"].endswith("P = 1: SGLang's blocks are its token pool's pages "
                                    "(--page-size tokens), a page in every KV layer")
    vllm = open_app("app_pages/budget.py", {"b_layout": "vllm"})
    assert {m.label: m.help for m in vllm.metric}["Capacity (tokens)"].startswith(
        "The history the pool holds beside one request's state")


def test_budget_says_how_sglangs_concurrency_is_counted():
    # gpt-oss-20b in 40 GiB: SGLang's full pool is 42,949,672,960 // (2,048 x (12 + 0.8 x 12))
    # = 970,903 tokens, its sliding pool 0.8 x that, 776,722; a request of 131,072 tokens
    # holds 131,072 full and min(128 - 1 + 8,192, 131,072) = 8,319 sliding ones: the full pool
    # binds, 970,903 / 131,072 = 7.41. No blocks over blocks, and no line of SGLang's log
    assert int(42_949_672_960 / (2_048 * (12 + 0.8 * 12))) == 970_903
    assert 776_722 // 8_319 > 970_903 // 131_072 and f"{970_903 / 131_072:.2f}" == "7.41"
    at = open_app("app_pages/budget.py", {"model": "gpt-oss-20b", "b_layout": "sglang",
                                          "gpu": "KV cache memory", "kv_mem": "40GiB"})
    assert_clean(at)
    (conc,) = [m for m in at.metric if m.label == "Concurrency at 131,072 tokens"]
    assert conc.value == "7.41"
    assert conc.help.startswith("Requests of this context SGLang's pools hold at once: its "
                                "token pool's tokens over one request's")
    assert "vLLM" not in conc.help and "SGLang's log prints no such figure" in conc.help
    vllm = open_app("app_pages/budget.py", {"b_layout": "vllm"})
    assert "as vLLM's log prints it" in [m.help for m in vllm.metric
                                          if m.label.startswith("Concurrency at")][0]


def test_raw_bytes_edit_the_sliding_layers_own_kv_bytes():
    # Gemma 4's shape as raw bytes: the editor shows the sliding layers' 16,384 B beside the
    # full layers' 8,192 B; 0 makes them one size, and a pattern without sliding layers
    # needs 0 there (the error says why, and clearing it gets the model back)
    link = {"model": "custom", "layers": "(5*sliding,full)*10", "kv": "8192", "swa_kv": "16384",
            "window": "1024"}
    at = open_app("app_pages/model.py", link)
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    assert at.number_input(key="edit.swa_kv").value == 16_384
    assert metrics(at)["KV per token, all layers"] == format_bytes(50 * 16_384 + 10 * 8_192)
    at.number_input(key="edit.swa_kv").set_value(0).run()
    assert_clean(at)
    assert "swa_kv" not in at.query_params
    assert metrics(at)["KV per token, all layers"] == format_bytes(60 * 8_192)
    at.number_input(key="edit.swa_kv").set_value(4_096).run()
    assert at.query_params["swa_kv"] == "4096"
    at.text_input(key="edit.layers").set_value("full*4").run()
    at.number_input(key="edit.window").set_value(0).run()  # its window goes too
    assert any(shown(e).startswith('"Sliding layers\' KV bytes" is 4096 but "Layer pattern" '
                                   "has no sliding_attention layer") for e in at.error)
    at.number_input(key="edit.swa_kv").set_value(0).run()
    assert_clean(at)
    assert at.query_params["layers"] == "full*4" and metrics(at)["Cache layers"] == "4"


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
        "vLLM at these settings (Compare's column): P 16, pages of two sizes in 60 tensors, one "
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


def test_kv_shared_layers_are_named_and_dropped_when_the_layers_are_edited():
    # Gemma 4 with 20 kv-shared layers: the summary says SGLang keeps a pool layer for them;
    # an edit of the layer pattern leaves the layers they read, so they go with it (they used
    # to stay hidden, or to leave an error no widget could mend)
    from test_hf_config import _gemma4

    from flatkv import app_model
    spec = _gemma4(num_kv_shared_layers=20)
    at = open_app("app_pages/model.py", {
        "model": "spec", "spec": app_model.pack_spec(app_model.spec_to_json(spec))})
    said = "20 more layers read earlier layers' KV (no cache of their own; SGLang keeps a pool " \
           "layer for each)"
    assert any(said in c.value for c in at.caption)
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    # a window edited keeps the layers as they are: the shared ones stay (SGLang's pool too)
    at.number_input(key="spec.sliding.sliding_window").set_value(2048).run()
    assert_clean(at)
    assert any(said in c.value for c in at.caption)
    kept = app_model.spec_from_json(app_model.unpack_spec(at.query_params["spec"]))
    assert kept.kv_shared_layer_types == spec.kv_shared_layer_types
    assert kept.profile().sliding_window == 2048
    at.text_input(key="spec.pattern").set_value("full*20").run()
    assert_clean(at)
    assert not any("read earlier layers' KV" in c.value for c in at.caption)
    edited = app_model.spec_from_json(app_model.unpack_spec(at.query_params["spec"]))
    assert edited.kv_shared_layer_types == ()
    # as raw bytes: the summary names them, and the same layers written another way keep them
    raw = open_app("app_pages/model.py", {
        "model": "spec", "spec": app_model.pack_spec(app_model.spec_to_json(spec))})
    raw.segmented_control(key="model.source").set_value("Raw bytes").run()
    pattern = raw.text_input(key="edit.layers")
    assert pattern.value == "(5*sliding,full)*6,4*sliding"  # short names, as one writes them
    pattern.set_value("(5*sliding_attention,full_attention)*6,4*sliding_attention").run()
    assert_clean(raw)
    assert raw.query_params["kv_shared"] == "sliding,(full,5*sliding)*3,full"  # as `layers`
    assert any(said in c.value for c in raw.caption)


def test_raw_bytes_of_other_layer_kinds_drop_the_edited_models_architecture():
    # Llama-3.1-8B as raw bytes: its class is carried (engines key pools on it) while its
    # layers keep their kinds; made a hybrid of state layers, it is another model, and the
    # summary no longer names LlamaForCausalLM
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.layers").set_value("full*16").run()
    assert_clean(at)
    assert at.query_params["arch"] == "LlamaForCausalLM"
    at.text_input(key="edit.layers").set_value("(3*linear,full)*8").run()
    at.text_input(key="edit.state").set_value("conv=49152,ssm=2097152").run()
    assert_clean(at)
    assert at.query_params["layers"] == "(3*linear,full)*8" and "arch" not in at.query_params
    assert not any("LlamaForCausalLM" in shown(m) for m in at.markdown)


def test_model_page_number_fields_say_what_is_wrong_with_a_negative():
    # the fields take any number (a minimum would make the browser swallow -5 without a word):
    # a negative one gets an error naming the field and the fix, and the model stays
    link = {"model": "custom", "layers": "(5*sliding,full)*10", "kv": "8192", "window": "1024"}
    at = open_app("app_pages/model.py", link)
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.window").set_value(-5).run()
    assert [shown(e) for e in at.error][0].startswith(
        "Sliding window is -5: give a whole number of 0 or more")
    assert at.query_params["window"] == "1024"
    at.number_input(key="edit.window").set_value(2048).run()
    assert_clean(at)
    assert at.query_params["window"] == "2048"
    # by hand: a kind's field
    from test_hf_config import _gemma4

    from flatkv import app_model
    spec = app_model.pack_spec(app_model.spec_to_json(_gemma4()))
    hand = open_app("app_pages/model.py", {"model": "spec", "spec": spec})
    hand.segmented_control(key="model.source").set_value("Edit by hand").run()
    kv_heads = hand.number_input(key="spec.full.kv_heads").value
    hand.number_input(key="spec.full.kv_heads").set_value(-1).run()
    # a size with no "0 = none": 1 or more, and 0 refused in the same words
    assert any("full: kv heads is -1: give a whole number of 1 or more" in shown(e)
               for e in hand.error)
    assert hand.query_params["spec"] == spec
    hand.number_input(key="spec.full.kv_heads").set_value(0).run()
    assert [shown(e) for e in hand.error if "kv heads" in shown(e)] == [
        "full: kv heads is 0: give a whole number of 1 or more. Until it is fixed, every page "
        "(and the summary below) shows the last valid model."]
    # a conv kernel keeps K - 1 rows of state: its least is 2, said as the field's own
    qwen = open_app("app_pages/model.py")
    qwen.segmented_control(key="model.source").set_value("Edit by hand").run()
    qwen.number_input(key="spec.gdn.conv_kernel").set_value(1).run()
    assert [shown(e) for e in qwen.error] == [
        "gdn: conv kernel is 1: give a whole number of 2 or more. Until it is fixed, every page "
        "(and the summary below) shows the last valid model."]
    hand.number_input(key="spec.full.kv_heads").set_value(-1).run()
    # the entry stays in its field beside the error (it used to jump back to the model's
    # value, so typing that value back changed nothing and the error stayed): typing the
    # model's value back clears it, the model as it was
    assert hand.number_input(key="spec.full.kv_heads").value == -1
    hand.run()
    assert hand.number_input(key="spec.full.kv_heads").value == -1
    hand.number_input(key="spec.full.kv_heads").set_value(kv_heads).run()
    assert_clean(hand)
    assert hand.number_input(key="spec.full.kv_heads").value == kv_heads
    assert hand.query_params["spec"] == spec
    # an emptied field the same
    hand.number_input(key="spec.full.kv_heads").set_value(None).run()
    assert any("full: kv heads is empty" in shown(e) for e in hand.error)
    assert hand.number_input(key="spec.full.kv_heads").value is None
    hand.number_input(key="spec.full.kv_heads").set_value(kv_heads).run()
    assert_clean(hand)
    # a draft the sidebar's TP does not split, a refused entry, then that draft's value typed
    # back: the TP's error comes back, as the model still is the last valid one
    at_tp = open_app("app_pages/model.py", {"model": "spec", "spec": spec, "tp": "32"})
    at_tp.segmented_control(key="model.source").set_value("Edit by hand").run()
    at_tp.number_input(key="spec.attention_heads").set_value(48).run()
    tp_error = [shown(e) for e in at_tp.error]
    assert any("The sidebar's TP does not split it" in e for e in tp_error)
    at_tp.number_input(key="spec.attention_heads").set_value(-1).run()
    assert any("is -1" in shown(e) for e in at_tp.error)
    at_tp.number_input(key="spec.attention_heads").set_value(48).run()
    assert [shown(e) for e in at_tp.error] == tp_error
    assert at_tp.query_params["spec"] == spec


def test_compare_and_budget_tell_a_mamba2_model_in_align_of_vllm_032s_checkpoint_page():
    link = {"model": "Falcon-H1-7B", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "ctx": "32768", "mamba": "align"}
    said = ("Since 0.32 vLLM keeps a prefill checkpoint page more for this model's Mamba2 "
            "layers (3 a request): set \"Prefill checkpoint blocks\" to 1 to match a later log.")
    for page, query in (("app_pages/compare.py", link),
                        ("app_pages/budget.py", {**link, "b_layout": "vllm"})):
        at = open_app(page, query)
        assert_clean(at)
        assert [c for c in at.caption if said in shown(c)], page
        at = open_app(page, {**query, "ckpt": "1"})  # kept: 607 / 24, nothing to say
        assert not [c for c in at.caption if "Since 0.32" in shown(c)], page
    assert metrics(at)["Concurrency at 32,768 tokens"] == "25.29"  # Budget's vLLM, 607 / 24


def test_compares_table_shows_the_layouts_figures_whole_at_1000_px():
    """At 1000 px the table scrolls past 540 px. Behind the two engine log columns, P, blocks
    and capacity began past that edge; the figures every layout has now come first, so the
    layout (pinned) and its concurrency, capacity, P and blocks end inside the main column,
    at the default view and at the worked example's. The log columns follow, scrolled to."""
    from app_pages._frame import MAIN_COLUMN_PX

    for link in ({}, QWEN35_LINK):
        at = open_app("app_pages/compare.py", link)
        assert_clean(at)
        widths = {col: c.get("width")
                  for col, c in json.loads(at.dataframe[0].proto.columns).items()}
        columns = list(at.dataframe[0].value.columns)
        read = columns[:5]
        assert read == ["strategy", "concurrency", "capacity (tokens)", "P (tokens)", "blocks"]
        assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}
        assert columns[5:7] == ["engine log", "older vLLM log"]


def test_compares_least_budget_table_shows_its_gpu_memory_whole_at_1000_px():
    """The least budget's table said a GPU memory past the GPU's as "288.68 GiB (more than this
    GPU's 74.51 GiB)" (316 px): with the layout and budget columns it ran past the 540 px edge
    and cut its end. "(over 74.51 GiB)" ends inside it; its tooltip says over what and what
    brings it within."""
    from app_pages._frame import MAIN_COLUMN_PX

    at = open_app("app_pages/compare.py", QWEN35_LINK)
    assert_clean(at)
    (frame,) = [d for d in at.dataframe if "GPU memory" in d.value.columns]
    config = json.loads(frame.proto.columns)
    widths = {col: c.get("width") for col, c in config.items()}
    columns = list(frame.value.columns)
    read = columns[:columns.index("GPU memory") + 1]
    assert read == ["strategy", "cache budget", "GPU memory"]
    assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}
    rows = {r["strategy"]: r for r in frame.value.to_dict("records")}
    # 80GB = 80,000,000,000 B = 74.51 GiB, the whole of it at fraction 1 and no weights: the
    # GPU memory is the cache budget
    assert rows["FlatKV packed slabs"]["GPU memory"] == "288.68 GiB (over 74.51 GiB)"
    assert rows["FlatKV packed slabs"]["GPU memory (B)"] == rows["FlatKV packed slabs"][
        "cache budget (B)"]
    assert config["GPU memory"]["help"] == (
        "The GPU memory whose share leaves this cache budget per rank, at the sidebar's memory "
        "fraction, weights and TP. \"Over\": more than this GPU's 74.51 GiB; a larger GPU or "
        "more TP (weights and the model's heads split further) brings it within.")


def test_compares_two_token_columns_each_say_how_they_count():
    # capacity (this tool's convention) and the engine's own log line sit side by side with
    # different figures (Qwen3-Next on an H100: vLLM 3,130,176 and 3,111,676): each header's
    # tooltip says which is which
    at = open_app("app_pages/compare.py")
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["engine log"]["help"].startswith(
        "Tokens the engine itself logs, to set beside its log: vLLM's \"GPU KV cache size\"")
    assert config["capacity (tokens)"]["help"].startswith(
        "Tokens, this tool's count, alike for every layout: the history the pool holds")
    # P, headed "P" on screen, says what it counts too
    assert config["P (tokens)"]["help"] == "Tokens a page holds: the block size the layout sets."
    assert "help" not in config["blocks"]


def test_compares_sglang_slots_field_starts_at_sglangs_own_for_the_model():
    # Qwen3-Next at 40 GiB and 32,768 tokens: SGLang's extra buffer holds 5 slots a request,
    # 262 request slots // 5 = 52 running (what SGLang 0.5.23's own sizing gave a helper);
    # typed 3 (as without overlap scheduling), 262 // 3 = 87, and the link says so
    link = {"model": "Qwen3-Next-80B-A3B", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "ctx": "32768"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert at.number_input(key="w.sglang_slots_per_request").value == 5
    assert "sg_slots" not in at.query_params
    assert any("max_running_requests is capped to 52 by the mamba state cache" in c.value
               for c in at.code)
    at.number_input(key="w.sglang_slots_per_request").set_value(3).run()
    assert_clean(at)
    assert at.query_params["sg_slots"] == "3"
    assert any("max_running_requests is capped to 87 by the mamba state cache" in c.value
               for c in at.code)


def test_an_mtp_layer_that_would_make_a_dead_link_is_not_offered():
    # a Llama named so long that it just fits a link, but with the MTP layer (its " + MTP layer"
    # suffix and note) it would not: Compare says why instead of offering the button
    from dataclasses import replace

    from flatkv.app_model import MAX_SPEC_URL, pack_spec, spec_to_json
    from flatkv.models import with_mtp_layer

    rng = random.Random(3)
    letters = "".join(rng.choice(string.ascii_letters) for _ in range(12_000))
    llama = load_preset("Llama-3.1-8B")

    def packed(spec):
        return len(pack_spec(spec_to_json(spec)))

    low, high = 0, len(letters)  # the shortest name whose MTP model is too long for a link
    while low < high:
        mid = (low + high) // 2
        if packed(with_mtp_layer(replace(llama, name=letters[:mid]))) > MAX_SPEC_URL:
            high = mid
        else:
            low = mid + 1
    spec = replace(llama, name=letters[:low])
    assert packed(spec) <= MAX_SPEC_URL < packed(with_mtp_layer(spec))
    at = open_app("app_pages/compare.py", {"model": "spec", "spec": pack_spec(spec_to_json(spec)),
                                           "spec_tokens": "2"})
    assert_clean(at)
    assert not [b for b in at.button if b.key == "mtp.add"]
    assert any("No \"Add an MTP layer\" here: the model packed for the link is" in c.value
               and "a link could not reopen it" in c.value for c in at.caption)


# Where each whole-number field shows: a page, its link, and the model source to pick first
WHOLE_FIELD_VIEWS = (
    ("app_pages/layout.py", {"gpu": "vLLM KV cache blocks"}, None),  # + the blocks field
    ("app_pages/layout.py", {}, None),
    ("app_pages/budget.py", QWEN35_LINK, None),
    ("app_pages/compare.py", QWEN35_LINK, None),
    ("app_pages/gpu.py", TINY_LINK, None),
    ("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"}, "Edit by hand"),
    ("app_pages/model.py", {"model": "gpt-oss-20b"}, "Raw bytes"),
)


def _open_view(page: str, link: dict, source: str | None) -> AppTest:
    at = open_app(page, link)
    if source:
        at.segmented_control(key="model.source").set_value(source).run()
    return at


def test_whole_number_fields_refuse_a_typed_fraction_rather_than_cut_it():
    """Streamlit's int number_input cut a typed fraction to its whole part, in the browser and
    again on the server (int(2.5)): a block size of 24.5 gave P 24 without a word. Every whole
    number field is now a float field shown as typed ("%g"), and a fraction is refused under
    it in its words (whole_number), the view left as it was."""
    from streamlit.proto.NumberInput_pb2 import NumberInput as NumberInputProto

    from flatkv.units import plain_number

    fields: dict[str, tuple] = {}
    for page, link, source in WHOLE_FIELD_VIEWS:
        at = _open_view(page, link, source)
        assert_clean(at)
        for box in at.number_input:
            # no int field anywhere: each would cut a fraction again
            assert box.proto.data_type == NumberInputProto.FLOAT, (page, box.label)
            if box.proto.format == "%g":  # a whole-number field (the ratios are "%.4g")
                fields.setdefault(box.key, (page, link, source))
    assert {"w.tp", "w.block_size", "w.alignment", "w.kv_blocks", "w.hold_requests",
            "w.requests", "w.lab_rounds", "w.lab_max_blocks", "w.lab_pages",
            "spec.attention_heads", "spec.mamba_chunk_size", "spec.max_model_len",
            "edit.kv", "edit.swa_kv", "edit.window", "edit.chunk"} <= set(fields)
    assert any(k.startswith("spec.") and k.count(".") == 2 for k in fields)  # a kind's fields
    for key, (page, link, source) in fields.items():
        at = _open_view(page, link, source)
        box = at.number_input(key=key)
        if box.disabled:
            continue
        whole = int(box.value or 1)
        before = dict(at.query_params)
        box.set_value(whole + 0.5).run()
        assert not at.exception, key
        said = f"is {plain_number(whole + 0.5)}: give a whole number, such as {whole:,} or " \
               f"{whole + 1:,}"
        errors = [shown(e) for e in at.error]
        assert any(said in e for e in errors), (key, errors)
        if key.startswith("w."):  # a bound field: its label, word for word
            assert f"{box.label} {said}" in errors, (key, errors)
        assert dict(at.query_params) == before, key  # no figure moved to the cut value


def test_compare_takes_sglangs_max_running_requests():
    # Qwen3-Next-80B-A3B at 40 GiB of KV cache memory, 3 tokens drafted (tests/
    # test_strategies.py's test_sglang_told_max_running_requests_sizes_the_draft_token_buffers):
    # SGLang reserves its draft-token buffers for min(48, 28) + 1 = 29 requests untold, so its
    # pool is (42,949,672,960 - 144 x 77,266,944 - 77,266,944 x 29 x 4) // 24,576 = 930,186
    # tokens; told 20, for min(20, 28) + 1 = 21: (42,949,672,960 - 144 x 77,266,944 -
    # 77,266,944 x 21 x 4) // 24,576 = 1,030,794 tokens
    link = {"model": "Qwen3-Next-80B-A3B", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "spec_tokens": "3"}
    at = open_app("app_pages/compare.py", link)
    widget = at.number_input(key="w.sglang_max_running_requests")
    assert widget.value == 0  # 0: SGLang's own
    slot, budget = 77_266_944, 40 << 30

    def sglang_tokens():
        return at.dataframe[0].value.set_index("strategy").loc["SGLang", "capacity (tokens)"]

    assert sglang_tokens() == (budget - 144 * slot - slot * 29 * 4) // 24_576 == 930_186
    widget.set_value(20).run()
    assert_clean(at)
    assert at.query_params["sg_maxrun"] == "20"
    assert sglang_tokens() == (budget - 144 * slot - slot * 21 * 4) // 24_576 == 1_030_794
    # the note under the charts says the running requests told, not the hook's 48
    (read,) = [c.value for c in at.caption if c.value.startswith("Capacity: ")]
    assert "for up to 20 running requests (--max-running-requests), in buffers" in read
    at.number_input(key="w.sglang_max_running_requests").set_value(0).run()
    (read,) = [c.value for c in at.caption if c.value.startswith("Capacity: ")]
    assert "for up to 48 running requests (its speculative default), in buffers" in read
    assert "sg_maxrun" not in at.query_params and sglang_tokens() == 930_186
    # told 100 state slots beside 3 drafted tokens: 101 slots and buffers for min(48, 100 //
    # 5) + 1 = 21 requests leave (42,949,672,960 - 101 x 77,266,944 - 77,266,944 x 21 x 4) //
    # 24,576 = 1,165,986 tokens
    at.number_input(key="w.sglang_max_mamba_cache_size").set_value(100).run()
    assert_clean(at)
    assert at.query_params["sg_mamba_size"] == "100"
    assert sglang_tokens() == (budget - 101 * slot - slot * 21 * 4) // 24_576 == 1_165_986
    # a model without attention: SGLang resolves max_running_requests from its token pool of
    # context_len tokens over no layers, and takes told state slots: both offered
    state_only = open_app("app_pages/compare.py", {"model": "custom", "layers": "linear*4",
                                                   "kv": "0", "state": "conv=4096"})
    assert {w.key for w in state_only.number_input} >= {
        "w.sglang_max_running_requests", "w.sglang_max_mamba_cache_size"}


def test_compare_takes_sglangs_attention_dp_size():
    # Llama-3.1-8B at TP 8 in 40 GiB of KV cache memory (tests/test_strategies.py's
    # test_sglang_attention_dp_runs_one_group_at_attention_tp): TP 8 keeps one of its 8 KV
    # heads a rank, 32 layers x 512 B = 16,384 B a token: 42,949,672,960 // 16,384 =
    # 2,621,440 tokens; attention DP 8 runs attention at TP 1, all 8 heads: 327,680 tokens
    link = {"model": "Llama-3.1-8B", "tp": "8", "gpu": "KV cache memory", "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    widget = at.number_input(key="w.sglang_attn_dp_size")
    assert widget.value == 1  # none

    def sglang_tokens():
        return at.dataframe[0].value.set_index("strategy").loc["SGLang", "capacity (tokens)"]

    assert sglang_tokens() == (40 << 30) // (32 * 512) == 2_621_440
    widget.set_value(8).run()
    assert_clean(at)
    assert at.query_params["sg_dp"] == "8"
    assert sglang_tokens() == (40 << 30) // (32 * 8 * 512) == 327_680
    # a caption says the figures are one group's: at the model's 131,072 tokens 327,680 /
    # 131,072 = 2.50 requests a group, 8 x 2.5 = 20 in all
    assert ("SGLang's figures are one of its 8 attention-DP groups' (a rank's pools, as it "
            "logs them): each group runs requests of its own, so the 8 hold 8 x 327,680 / "
            "131,072 = 20.00 requests of 131,072 tokens at once in all; the other layouts' are "
            "the whole TP's, whose ranks share every request.") in [c.value for c in at.caption]
    # ... and a link carries it: the same figure from the link alone
    assert open_app("app_pages/compare.py", {**link, "sg_dp": "8"}).dataframe[0].value \
        .set_index("strategy").loc["SGLang", "capacity (tokens)"] == 327_680
    at.number_input(key="w.sglang_attn_dp_size").set_value(1).run()
    assert "sg_dp" not in at.query_params and sglang_tokens() == 2_621_440


def test_compare_takes_sglangs_chunked_prefill_size_by_the_gpu():
    # gpt-oss-20b on a B200 at 16K (tests/test_cli.py's
    # test_sglang_takes_the_gpus_own_chunked_prefill_size): SGLang's own chunk there is 16,384,
    # so a request holds 16,384 sliding tokens and its swa pool binds at 3,129,326 / 16,384 =
    # 190.99; told 8,192 (an H100's), 8,319 sliding tokens and the full pool binds at
    # 3,911,658 / 16,384 = 238.75
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b", "gpu": "B200 192GB",
                                           "ctx": "16K"})
    widget = at.number_input(key="w.sglang_chunked_prefill_size")
    assert widget.value == 0 and "here 16,384, as SGLang 0.5.23 picks it" in widget.help

    def sglang_concurrency():
        return at.dataframe[0].value.set_index("strategy").loc["SGLang", "concurrency"]

    assert sglang_concurrency() == 190.99  # shown to two places
    widget.set_value(8192).run()
    assert_clean(at)
    assert at.query_params["sg_chunk"] == "8192"
    assert sglang_concurrency() == 238.75
    # -1 turns chunked prefill off, as SGLang's --chunked-prefill-size -1: a request holds its
    # whole prompt (at most 16,383 tokens) in the sliding pool, admitted with a token more
    # reserved (estimate_swa_kv_tokens: 16,383 + 1), (3,129,326 - 1 - 1) / 16,383 = 191.01;
    # "off" in the link
    widget = at.number_input(key="w.sglang_chunked_prefill_size")
    assert widget.label == "Chunked prefill size (0: auto, -1: off)"
    assert "-1 turns chunked prefill off" in widget.help
    widget.set_value(-1).run()
    assert_clean(at)
    assert at.query_params["sg_chunk"] == "off"
    assert sglang_concurrency() == 191.01
    # by another span: the formulas say which (auto read it as min(127 + 16,384, L))
    codes = " ".join(c.value for c in at.code)
    assert ("swa span = p = L - 1 in whole pages = 16,383, admitted with its reservation "
            "16,384 (estimate_swa_kv_tokens of p and 1 output token, window 127): with chunked "
            "prefill off a request's whole prompt goes into the sliding pool in one forward"
            ) in codes
    assert "(3,129,326 - 1 - 1) / 16,383 = 3,129,324 / 16,383" in codes


def test_a_config_json_without_a_length_is_counted_at_the_2048_vllm_assumes():
    # falcon-mamba-7b's config.json gives no length field: vLLM assumes 2,048 (with a warning)
    # and SGLang too; the Model page says so beside the figures and names the fix, and the
    # pages count a request at 2,048 until a context is typed
    at = open_falcon_mamba_config()
    assert_clean(at)
    (note,) = [shown(i) for i in at.info if "no length field" in shown(i)]
    assert note.startswith("The config.json gives no length field (max_position_embeddings, "
                           "n_positions, max_seq_len, seq_length, model_max_length, ...), so "
                           "vLLM warns \"The model's config.json does not contain any of the "
                           "keys to determine the original maximum length of the model. "
                           "Assuming the model's maximum length is 2048.\"; SGLang 0.5.23 "
                           "assumes 2,048 too, silently.")
    assert note.endswith("type the context you serve at (vLLM takes any --max-model-len; "
                         "SGLang refuses a --context-length above 2,048 unless "
                         "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1), or add "
                         "max_position_embeddings to the config.json.")
    assumed = ("max_model_len 2,048 tokens, assumed (vLLM's default `--max-model-len` where "
               "the config gives no length: see the note)")
    assert assumed in unescaped(caption_starting(at, "Per TP rank"))
    # a link keeps it assumed
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert assumed in unescaped(caption_starting(again, "Per TP rank"))
    # Compare counts vLLM at 2,048: 40 GiB // 311,296 B state pages // 64 layers = 2,155
    # blocks, one a request (tests/test_cli.py derives them): vLLM's log line at 2,048 tokens
    link = {**at.query_params, "gpu": "KV cache memory", "kv_mem": "40GiB"}
    compare = open_app("app_pages/compare.py", link)
    assert_clean(compare)
    text = "\n".join(shown(e) for e in (*compare.code, *compare.markdown, *compare.caption))
    assert ("GPU KV cache size: 4,413,440 tokens, Maximum concurrency for 2,048 tokens per "
            "request: 2155.00x") in text


def test_compare_turns_sglangs_radix_cache_off():
    # Qwen3-Next on the default H100 (76,968,728,985 B) at SGLang page 64, context 8,192
    # (test_compare_turns_sglangs_overlap_scheduling_off): 471 state slots, 470 for requests,
    # 470 // 5 = 94 running with the radix cache. Off (--disable-radix-cache) a request holds
    # one slot, so the cap is 470 and the KV pool binds: (76,968,728,985 - 471 x 77,266,944) //
    # 24,576 = 1,651,042 tokens, 1,651,008 in pages of 64 = 25,797 pages, 128 a request:
    # 25,797 / 128 = 201.54
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "ctx": "8192",
                                           "sg_page": "64"})
    assert_clean(at)
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang", "concurrency"] == 94
    at.toggle(key="w.sglang_disable_radix_cache").set_value(True).run()
    assert_clean(at)
    assert at.query_params["sg_noradix"] == "1"
    assert at.caption[0].value.endswith(
        "engine options: SGLang --disable-radix-cache on, SGLang page size 64")
    assert (76_968_728_985 - 471 * 77_266_944) // 24_576 // 64 == 25_797
    assert at.dataframe[0].value.set_index("strategy").loc["SGLang", "concurrency"] == round(
        25_797 / 128, 2) == 201.54


def test_compare_checks_the_real_anchor_log_in_its_older_form():
    # vLLM 0.10.2's log of SPEC 3.1's anchor (tests/test_log_check.py's ANCHOR_LOG) at its
    # settings: its two-line KV cache size of 973,760 tokens (7,162 // 4 x 544) reads as
    # FlatKV's one line of 3,871,083 in that release's form, and agrees
    from test_log_check import ANCHOR_LOG

    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                           "ctx": "262144", "gpu": "KV cache memory",
                                           "kv_mem": "44.59GiB"})
    at.text_area(key="compare.check_log").set_value(ANCHOR_LOG).run()
    assert_clean(at)
    assert [shown(s) for s in at.success] == [
        "vLLM: 4 of 5 lines are in the log and agree with it; 1 not in it."]
    rows = at.table[0].value
    assert list(rows["outcome"]) == [":green[same]"] * 3 + [":orange[not in the log]",
                                                             ":green[same]"]
    assert unescaped(rows["in the log"].iloc[-1]) == (
        "lines 6-7 (EngineCore_DP0 pid=1805889), 8-9 (EngineCore_DP0 pid=1805889), on two "
        "lines, its tokens as vLLM 0.19 and earlier count them, agree")
    assert any("Other forms of a line are read too (vLLM's KV cache size on two lines, as "
               "older releases log it" in c.value for c in at.caption)


def offers_after_pasting(at: AppTest, log: str) -> list[str]:
    """Compare's offers of a log's settings ("This log's run had ...") after ``log`` is pasted
    into its log check (no exception raised)."""
    at.text_area(key="compare.check_log").set_value(log).run()
    assert not at.exception
    return [shown(i) for i in at.info if "This log's run had" in shown(i)]


def as_sglang_log(lines: list[str]) -> str:
    """SGLang's start-up ``lines`` (FlatKV's, its elided figures given: max_prefill_tokens
    16384) as its TP0 logs them, a second apart."""
    return "\n".join(f"[2026-12-06 07:01:0{i} TP0] {line.replace('=...', '=16384')}"
                     for i, line in enumerate(lines))


def take_offer(at: AppTest) -> list[str]:
    """Compare after its "Use the log's settings" is clicked (no exception raised): the
    verdicts of the engines whose lines all agree."""
    at.button(key="compare.log_settings").click().run()
    assert not at.exception
    return [shown(s) for s in at.success]


def offer_taken(link: dict, log: str) -> tuple[str, list[str], dict]:
    """Compare at ``link`` with ``log`` pasted: its one offer of the log's settings, and once
    taken (no error shown) the verdicts that agree and the link it is at."""
    at = open_app("app_pages/compare.py", link)
    (offer,) = offers_after_pasting(at, log)
    agreed = take_offer(at)
    assert_clean(at)
    return offer, agreed, dict(at.query_params)


def test_compare_takes_an_sglang_logs_context_and_chunk_from_its_scheduler_line():
    # Llama-3.1-8B in 40 GiB of KV cache: SGLang's KV line is the budget's alone (327,680
    # tokens of 32 x 4,096 B); its scheduler line gives the run's context and chunk. A log of
    # a run at 8,192 tokens and a 2,048 chunk, checked at 4,096 tokens: the scheduler line
    # differs (context_len, the chunk, and max_running_requests: min(max(min(int(327,680 /
    # 4,096 x 512), 4,096), 2,048), 163,840) = 4,096 here, 20,480 -> 4,096 there too), so the
    # log's settings are offered, and taken, all agree
    from flatkv.strategies.sglang_log import scheduler_line

    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 327680, K size: 20.00 GB, "
          "V size: 20.00 GB")
    log = as_sglang_log([kv, scheduler_line(327_680, 2_048, 4_096, 8_192)
                         + ", available_gpu_mem=3.10 GB"])
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                           "gpu": "KV cache memory", "kv_mem": "40GiB"})
    at.text_area(key="compare.check_log").set_value(log).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == ["SGLang: 1 of 2 lines differs from the log, 1 agrees."]
    (offer,) = [shown(i) for i in at.info if "This log's run had" in shown(i)]
    assert offer.startswith("This log's run had 8,192 tokens a request and SGLang's prefill "
                            "chunk of 2,048 tokens: the figures here are at other settings")
    agreed = take_offer(at)
    assert_clean(at)
    assert (at.query_params["ctx"], at.query_params["sg_chunk"]) == ("8192", "2048")
    assert agreed == [
        "SGLang: both lines are in the log and agree with it."]
    # chunked prefill off in the log (-1): offered as off, and taken
    at.text_area(key="compare.check_log").set_value(
        log.replace("chunked_prefill_size=2048", "chunked_prefill_size=-1")).run()
    (offer,) = [shown(i) for i in at.info if "This log's run had" in shown(i)]
    assert offer.startswith("This log's run had SGLang's chunked prefill off: ")
    agreed = take_offer(at)
    assert at.query_params["sg_chunk"] == "off"
    assert agreed == [
        "SGLang: both lines are in the log and agree with it."]


def test_compare_offers_the_budget_that_sizes_an_sglang_logs_pools_at_its_state_slots():
    # Nemotron-H-8B's SGLang lines at 17,000,000,999 B and 32,768 tokens: 551,345 tokens
    # beside 77 request state slots (78 with the padding slot, of 102,137,856 B each); 4
    # attention layers x 8 KV heads x 128 x 2 x 2 B = 16,384 B a token. The log gives no
    # budget: the least with those slots and that pool is 78 x 102,137,856 + 551,345 x 16,384
    # = 16,999,989,248 B (a first budget of 551,345 tokens with 78 request slots lies past
    # it, tests/test_sizing.py), offered on pages at 40 GiB, and taken, all lines agree
    from flatkv.strategies import run_strategy

    own = run_strategy("sglang", load_preset("Nemotron-H-8B").profile(),
                       budget_bytes=17_000_000_999, context_tokens=32_768).extras["log_lines"]
    assert own[1].startswith("Mamba Cache is allocated. max_mamba_cache_size: 77,")
    assert own[3].startswith("max_total_num_tokens=551345, ")
    log = as_sglang_log(own)
    assert 78 * 102_137_856 + 551_345 * 16_384 == 16_999_989_248
    offer, agreed, taken = offer_taken({"model": "Nemotron-H-8B", "ctx": "32768",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB"}, log)
    assert offer == ("This log's run had SGLang's token pool of 551,345 tokens (a rank with "
                     "16,999,989,248 B of KV cache memory sizes its pools so): the figures here "
                     "are at other settings, so its lines differ for that alone. Take its "
                     "settings, then read the check again.")
    assert taken["kv_mem"] == "16999989248B"
    assert agreed == ["SGLang: all 4 lines are in the log and agree with it."]


def test_compare_offers_the_budget_of_an_sglang_log_of_state_layers_alone_by_its_slots():
    # Nemotron-H-8B's 24 Mamba2 layers alone: SGLang logs the context as its tokens at any
    # budget, so its 98 request slots (state slots of 24 x (61,440 + 4,194,304) B, its float32
    # ssm) name the budget: the least that gives them, 98 where a byte less gives 97
    from dataclasses import replace

    from flatkv.app_model import pack_spec, spec_to_json
    from flatkv.strategies import run_strategy

    nemotron = load_preset("Nemotron-H-8B")
    mamba = replace(nemotron, name="Mamba2 alone",
                    layers=tuple(layer for layer in nemotron.layers if layer.kind == "mamba2"))
    own = run_strategy("sglang", mamba.profile(), budget_bytes=20 << 30,
                       context_tokens=8_192).extras["log_lines"]
    assert own[1].startswith("Mamba Cache is allocated. max_mamba_cache_size: 98,")
    link = {"model": "spec", "spec": pack_spec(spec_to_json(mamba)), "ctx": "8192",
            "gpu": "KV cache memory", "kv_mem": "40GiB"}
    offer, agreed, taken = offer_taken(link, as_sglang_log(own))
    budget = int(taken["kv_mem"].removesuffix("B"))
    slots = [run_strategy("sglang", mamba.profile(), budget_bytes=b, context_tokens=8_192
                          ).extras["request_state_slots"] for b in (budget - 1, budget)]
    assert slots == [97, 98] and budget <= 20 << 30
    assert offer == ("This log's run had SGLang's 98 request state slots (a rank with "
                     f"{budget:,} B of KV cache memory sizes its pools so): the figures here "
                     "are at other settings, so its lines differ for that alone. Take its "
                     "settings, then read the check again.")
    assert agreed == ["SGLang: all 3 lines are in the log and agree with it."]


def test_an_sglang_budget_taken_on_gpu_pages_keeps_the_gpus_chunk():
    # Qwen3-Next-80B-A3B at TP 2 on B200 pages, whose chunk SGLang picks by its memory
    # (16,384): a log of its lines at 170e9 B, 7,282,539 tokens beside 2,083 request slots,
    # 2,084 x 38,633,472 + 7,282,539 x 12,288 = 169,999,994,880 B. Its budget takes the pages
    # off the B200 (to KV cache memory, whose chunk is the 8,192 assumed), so the B200's chunk
    # is kept as told, and taken all 4 lines agree (its scheduler line differed in the chunk)
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    lines = run_strategy("sglang", profile_for("Qwen3-Next-80B-A3B", None, 2),
                         budget_bytes=170 * 10**9, context_tokens=262_144,
                         options=StrategyOptions(sglang_chunked_prefill_size=16_384)
                         ).extras["log_lines"]
    log = as_sglang_log(lines)
    assert 2_084 * 38_633_472 + 7_282_539 * 12_288 == 169_999_994_880
    offer, agreed, taken = offer_taken({"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                        "gpu": "B200 192GB"}, log)
    assert offer == ("This log's run had SGLang's token pool of 7,282,539 tokens "
                     "(a rank with 169,999,994,880 B of KV cache memory sizes its pools so) and "
                     "SGLang's prefill chunk of 16,384 tokens (the B200 192GB's, kept): the "
                     "figures here are at other settings, so its lines differ for that alone. "
                     "Take its settings, then read the check again.")
    assert (taken["kv_mem"], taken["sg_chunk"]) == ("169999994880B", "16384")
    assert agreed == ["SGLang: all 4 lines are in the log and agree with it."]


def test_compare_offers_only_the_log_settings_the_pages_lack_and_says_when_they_are_not_all():
    # falcon-mamba-7b's vLLM log (2,155 blocks at 40 GiB, 2,048 tokens: tests/test_cli.py) on
    # pages at 40 GiB of KV cache memory but 4,096 tokens: the blocks vLLM fits are the same
    # (40 GiB // 311,296 // 64 = 2,155), so only the context is offered, and taken it is
    # all that differed
    from test_cli import FALCON_VLLM_LOG

    from flatkv.strategies import StrategyOptions, run_strategy

    link = {**open_falcon_mamba_config().query_params, "gpu": "KV cache memory",
            "kv_mem": "40GiB", "ctx": "4096"}
    at = open_app("app_pages/compare.py", link)
    (offer,) = offers_after_pasting(at, FALCON_VLLM_LOG)
    assert offer == ("This log's run had 2,048 tokens a request: the figures here are at other "
                     "settings, so its lines differ for that alone. Take its settings, then "
                     "read the check again.")
    # SGLang's lines of Llama-3.1-8B at 8,192 tokens, whose token pool is 300,000 tokens (a
    # budget these pages do not have, which its log does not give): the budget that sizes the
    # pool so is offered beside the context, 300,000 tokens x 32 layers x 2 x 8 heads x 128 x
    # 2 B = 39,321,600,000 B (K and V 300,000 x 65,536 B = 18.31 GiB each), and taken, both
    # lines agree
    from flatkv.strategies.sglang_log import scheduler_line

    assert (300_000 * 32 * 2 * 8 * 128 * 2, f"{300_000 * 65_536 / 2**30:.2f}") == (
        39_321_600_000, "18.31")
    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 300000, K size: 18.31 GB, "
          "V size: 18.31 GB")
    log = as_sglang_log([kv, scheduler_line(300_000, 8_192, 4_096, 8_192)])
    offer, agreed, taken = offer_taken({"model": "Llama-3.1-8B", "ctx": "4096",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB"}, log)
    assert offer == ("This log's run had SGLang's token pool of 300,000 tokens (a rank with "
                     "39,321,600,000 B of KV cache memory sizes its pools so) and 8,192 tokens a "
                     "request: the figures here are at other settings, so its lines differ for "
                     "that alone. Take its settings, then read the check again.")
    assert (taken["kv_mem"], taken["ctx"]) == ("37500MiB", "8192")  # exact
    assert agreed == ["SGLang: both lines are in the log and agree with it."]
    # the same log of a model of half the KV heads (K and V 9.16 GB): taken, its KV line
    # would still differ, and the offer says so
    half = log.replace("18.31 GB", "9.16 GB")
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                           "gpu": "KV cache memory", "kv_mem": "40GiB"})
    (offer,) = offers_after_pasting(at, half)
    assert offer == ("This log's run had SGLang's token pool of 300,000 tokens (a rank with "
                     "39,321,600,000 B of KV cache memory sizes its pools so) and 8,192 tokens a "
                     "request: take them, and 1 line would still differ, so other settings "
                     "differ too (an engine release's defaults, the TP, attention DP, the "
                     "weights).")
    # a chunk the pages cannot run (1,000 at page 64: SGLang refuses a chunk of part pages)
    # would leave no line of SGLang's to agree: nothing is offered
    paged = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                              "gpu": "KV cache memory", "kv_mem": "40GiB",
                                              "sg_page": "64"})
    own = run_strategy("sglang", load_preset("Llama-3.1-8B").profile(), budget_bytes=40 << 30,
                       context_tokens=4_096,
                       options=StrategyOptions(sglang_page_size=64)).extras["log_lines"]
    refused = "\n".join(f"[2026-12-06 07:01:0{i} TP0] {line}" for i, line in enumerate(
        [own[0], own[1].replace("=...", "=16384").replace("chunked_prefill_size=8192",
                                                         "chunked_prefill_size=1000")]))
    paged.text_area(key="compare.check_log").set_value(refused).run()
    assert [shown(e) for e in paged.error] == [
        "SGLang: 1 of 2 lines differs from the log, 1 agrees."]
    assert not [i for i in paged.info if "This log's run had" in shown(i)]
    # a vLLM 0.34 log of gpt-oss-20b run with its defaults on an H100 80GB (0.9: 71.68 GiB),
    # blocks of 64 tokens in two groups of 12 layers, 64 x 2,048 x 12 = 1,572,864 B a block:
    # 76,968,728,985 // 1,572,864 = 48,935, where the pages keep 0.19's (blocks of 16): its
    # budget is the pages' own, so only 0.34's defaults are offered, and taken, its lines agree
    vllm_034 = "\n".join(f"(EngineCore_DP0 pid=4123) INFO 12-06 07:00:0{i} [x.py:1] {line}"
                         for i, line in enumerate((
        "Available KV cache memory: 71.68 GiB",
        "Memory after warmup: 74.21 GiB free, 2.50 GiB committed to the KV cache, 1.12 GiB "
        "kept for transient activations (0.98 GiB allocated at peak, 0.14 GiB of torch "
        "reservation growth); 48935 KV cache blocks (71.68 GiB) fit within the requested "
        "71.68 GiB. Torch may reserve up to 4.61 GiB.",
        "GPU KV cache size: 2,780,237 tokens, Maximum concurrency for 131,072 tokens per "
        "request: 21.21x")))
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    at.text_area(key="compare.check_log").set_value(vllm_034).run()
    assert [shown(e) for e in at.error] == ["vLLM: 2 of 3 lines differ from the log, 1 agrees."]
    (offer,) = [shown(i) for i in at.info if "This log's run had" in shown(i)]
    assert offer == ("This log's run had vLLM 0.34's defaults: the figures here are at other "
                     "settings, so its lines differ for that alone. Take its settings, then "
                     "read the check again.")
    agreed = take_offer(at)
    assert (at.query_params["block"], at.query_params["v_async"]) == ("64", "1")
    assert agreed == [
        "vLLM: all 3 lines are in the log and agree with it."]


def test_compare_takes_a_logs_tp_from_its_settings_line_or_its_ranks():
    # SPEC's anchor log (vLLM 0.10.2, Qwen3-Next-80B-A3B at TP 2, 44.59 GiB, 262,144 tokens:
    # tests/test_log_check.py) with its engine config line, on pages at TP 1 and the default
    # GPU: its TP and Available memory are offered, and taken, its lines agree (0.34's blocks
    # line is not in a 0.10 log)
    from test_log_check import ANCHOR_LOG

    config = ("(EngineCore_DP0 pid=1805889) INFO 10-23 15:10:30 [core.py:77] Initializing a V1 "
              "LLM engine (v0.10.2) with config: model='Qwen/Qwen3-Next-80B-A3B-Instruct', "
              "max_seq_len=262144, tensor_parallel_size=2, pipeline_parallel_size=1")
    # without the config line its workers' prefixes, Worker_TP0 and Worker_TP1, give TP 2:
    # offered and taken alike (the offer used to leave the TP, and a line still differed)
    assert "(Worker_TP1 pid=" in ANCHOR_LOG and "tensor_parallel_size" not in ANCHOR_LOG
    for log in (config + "\n" + ANCHOR_LOG, ANCHOR_LOG):
        offer, agreed, taken = offer_taken({"model": "Qwen3-Next-80B-A3B"}, log)
        assert offer.startswith("This log's run had TP 2 and 44.59 GiB of KV cache memory a "
                                "rank (its \"Available KV cache memory\" line): the figures "
                                "here are at other settings")
        assert (taken["tp"], taken["kv_mem"]) == ("2", "44.59GiB")
        assert agreed == ["vLLM: 4 of 5 lines are in the log and agree with it; 1 not in it."]


def test_compare_takes_the_mamba_cache_mode_a_vllm_log_says_it_set():
    # Qwen3-Next-80B-A3B on the default pages (mamba cache mode none): a vLLM 0.28+ log of a
    # run with prefix caching says it set align, and its lines are FlatKV's at align; the mode
    # is offered, and taken, they agree
    from dataclasses import replace

    from flatkv.app_state import AppState
    from flatkv.strategies import run_strategy

    aligned = replace(AppState(model="Qwen3-Next-80B-A3B"), mamba_cache_mode="align")
    vllm = run_strategy("vllm", aligned.profile(), budget_bytes=aligned.budget().cache_bytes,
                        context_tokens=aligned.context_length(),
                        options=aligned.strategy_options())
    prefix = "(EngineCore_DP0 pid=9) INFO 12-06 07:00:00 [x.py:1] "
    log = "\n".join(prefix + line.replace("...", "0") for line in (
        "Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default when prefix "
        "caching is enabled", *vllm.extras["log_lines"]))
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    (offer,) = offers_after_pasting(at, log)
    assert offer.startswith("This log's run had vLLM's mamba cache mode align: the figures "
                            "here are at other settings")
    agreed = take_offer(at)
    assert at.query_params["mamba"] == "align"
    n = len(vllm.extras["log_lines"])
    assert agreed == [
        f"vLLM: all {n} lines are in the log and agree with it."]


def test_compare_takes_a_logs_attention_dp_from_its_server_args():
    # DeepSeek-V3 at TP 8 with attention DP 8 in 40 GiB of KV cache memory: a group's pool is
    # the same 611,191 tokens (an MLA latent is whole at any TP), its chunk 8,192 // 8 = 1,024
    # and the scheduler line says so; pasted on pages without attention DP, D is offered (not
    # a chunk of 1,024), and taken, both lines agree
    from flatkv.strategies import StrategyOptions, run_strategy

    grouped = run_strategy("sglang", load_preset("DeepSeek-V3").with_options(tp=8).profile(),
                           budget_bytes=40 << 30, context_tokens=163_840,
                           options=StrategyOptions(sglang_attn_dp_size=8,
                                                   sglang_chunked_prefill_size=8_192))
    assert ", chunked_prefill_size=1024, " in grouped.extras["scheduler_line"]
    log = "\n".join(f"[2026-12-06 07:00:0{i} DP0 TP0 EP0] {line}" for i, line in enumerate((
        "server_args={'tp_size': 8, 'attn_dp_size': 8, 'dp_size': 1}",
        *(line.replace("=...", "=16384") for line in grouped.extras["log_lines"]))))
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3", "tp": "8",
                                           "gpu": "KV cache memory", "kv_mem": "40GiB"})
    (offer,) = offers_after_pasting(at, log)
    assert offer.startswith("This log's run had SGLang's attention DP 8: the figures here are "
                            "at other settings")
    agreed = take_offer(at)
    assert at.query_params["sg_dp"] == "8" and "sg_chunk" not in at.query_params
    assert agreed == [
        "SGLang: both lines are in the log and agree with it."]


def test_compare_takes_a_groups_chunk_times_its_attention_dp():
    # gpt-oss-20b at TP 2, attention DP 2, 40 GiB: SGLang logs a group's chunk, 8,192 // 2 =
    # 4,096 at its own 8,192; a log of 4,096 there agrees, and one of 2,048 a group was run
    # with 4,096 told, which the offer takes (not 2,048, which FlatKV would halve again)
    from flatkv.strategies import StrategyOptions, run_strategy

    link = {"model": "gpt-oss-20b", "tp": "2", "sg_dp": "2", "gpu": "KV cache memory",
            "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    sglang = run_strategy("sglang", load_preset("gpt-oss-20b").with_options(tp=2).profile(),
                          budget_bytes=40 << 30, context_tokens=131_072,
                          options=StrategyOptions(sglang_attn_dp_size=2,
                                                  sglang_chunked_prefill_size=8_192))
    scheduler = sglang.extras["scheduler_line"]
    assert ", chunked_prefill_size=4096, " in scheduler
    log = "[2026-12-06 07:01:09 TP0] " + scheduler.replace("=...", "=16384").replace(
        "chunked_prefill_size=4096", "chunked_prefill_size=2048")
    (offer,) = offers_after_pasting(at, log)
    assert offer.startswith("This log's run had SGLang's prefill chunk of 4,096 tokens (2,048 a "
                            "group of 2): the figures here are at other settings")
    agreed = take_offer(at)
    assert at.query_params["sg_chunk"] == "4096"
    assert agreed == [
        f"SGLang: 1 of {len(sglang.extras['log_lines'])} lines are in the log and agree with "
        f"it; {len(sglang.extras['log_lines']) - 1} not in it."]


def test_compare_checks_a_pasted_engine_log():
    # falcon-mamba-7b in 40 GiB at 2,048 tokens: vLLM's three lines, derived by hand in
    # tests/test_cli.py (2,155 blocks, 4,413,440 tokens), pasted as a prefixed vLLM log
    from test_cli import FALCON_VLLM_LOG

    link = {**open_falcon_mamba_config().query_params, "gpu": "KV cache memory",
            "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    area = at.text_area(key="compare.check_log")
    # nothing pasted: the area alone, no verdict or table
    assert area.value == "" and not at.success and not at.table and not at.warning
    area.set_value(FALCON_VLLM_LOG).run()
    assert_clean(at)
    (verdict,) = [shown(s) for s in at.success]
    assert verdict == "vLLM: all 3 lines are in the log and agree with it."
    (table,) = at.table
    rows = table.value
    assert list(rows["outcome"]) == [":green[same]"] * 3
    # FlatKV's lines as code, as in a log (Markdown showed ">=" as a "≥")
    assert rows["FlatKV's line"][0] == "` Available KV cache memory: 40.0 GiB `"
    # SGLang's lines are not in this log: no table of them, no noise
    assert "compare.check_log" not in str(dict(at.query_params))  # the link stays short
    # one block more in the log: the verdict is an error and the row names the figure
    at.text_area(key="compare.check_log").set_value(
        FALCON_VLLM_LOG.replace("2155 KV", "2156 KV")).run()
    assert [shown(e) for e in at.error] == ["vLLM: 1 of 3 lines differs from the log, 2 agree."]
    detail = [unescaped(v) for v in at.table[0].value["in the log"]]
    assert detail[1] == "line 2 (EngineCore_DP0 pid=812): KV cache blocks: FlatKV 2155, log 2156"
    # the pages at 30 GiB: every figure differs for that alone, so the log's run is offered
    # (its 2,155 blocks after warm-up and its 2,048 tokens); taken, the blocks line and the
    # size line agree again, and the Available line (vLLM's estimate before warm-up, which the
    # blocks do not give back: 2,155 x 311,296 x 64 B is 39.99 GiB) is found, not compared
    at.text_area(key="compare.check_log").set_value(FALCON_VLLM_LOG).run()
    assert not [i for i in at.info if "This log's run had" in shown(i)]  # all agree: no offer
    at30 = open_app("app_pages/compare.py", {**link, "kv_mem": "30GiB"})
    (offer,) = offers_after_pasting(at30, FALCON_VLLM_LOG)
    assert offer.startswith("This log's run had 2,155 vLLM KV cache blocks a rank (fit after "
                            "warm-up): the figures here are at other settings")
    agreed = take_offer(at30)
    assert_clean(at30)
    assert (at30.query_params["gpu"], at30.query_params["kv_blocks"]) == (
        "vLLM KV cache blocks", "2155")
    assert agreed == [
        "vLLM: all 3 lines are in the log and agree with it."]
    assert at30.table[0].value["FlatKV's line"][0] == "` Available KV cache memory: ... GiB `"
    # an SGLang log: vLLM's lines say so, SGLang's (its Mamba line of 553 request slots, 1.62 /
    # 17.31 GB: tests/test_log_check.py derives them; its scheduler's line: a token pool of no
    # layers of context_len 2,048 tokens, 553 // 3 = 184 running, the 8,192 chunk assumed
    # where the GPU is not told) are checked; its cap warning is not pasted
    sglang = ("[2026-12-06 07:01:02 TP0] Mamba Cache is allocated. max_mamba_cache_size: 553, "
              "conv_state size: 1.62GB, ssm_state size: 17.31GB\n"
              "[2026-12-06 07:01:09 TP0] max_total_num_tokens=2048, chunked_prefill_size=8192, "
              "max_prefill_tokens=16384, max_running_requests=184, context_len=2048, "
              "available_gpu_mem=10.00 GB")
    at.text_area(key="compare.check_log").set_value(sglang).run()
    assert_clean(at)
    assert [shown(s) for s in at.success] == [
        "SGLang: 2 of 3 lines are in the log and agree with it; 1 not in it."]
    # bad input: an error that names the problem, no traceback
    for bad, said in (("\x00" * 10, "The log holds a NUL character (at character 0)"),
                      ("x" * 1_000_001, "The log is 1,000,001 characters, over the 1,000,000 "
                       "this check reads")):
        at.text_area(key="compare.check_log").set_value(bad).run()
        assert not at.exception and not at.table
        (error,) = [shown(e) for e in at.error]
        assert error.startswith(said)


def test_a_metric_too_wide_for_a_grid_cell_takes_two():
    # the grid's cell at 1000 px: two in the 540 px main column, a 16 px gap between them
    from app_pages._frame import METRIC_MIN_PX, metric_cell_px, metric_px

    assert metric_cell_px() == (540 - 16) // 2 == 262 >= METRIC_MIN_PX
    # as many cells a line as fit: two at 1000 px, three at 1,366 (905 px) and 1,440 (979)
    assert [(w + 16) // (METRIC_MIN_PX + 16) for w in (540, 905, 979)] == [2, 3, 3]
    # vLLM's logged tokens on Budget fit one (35 x 6.6 + 20 = 251 px; 231 in Chromium), as does
    # its delta (38 x 6 = 228; 230); a sliding model's capacity on Layout, its delta of 68
    # characters (408 px; 420), takes two, as does SGLang's label (38 x 6.6 + 20 = 270)
    assert metric_px("vLLM's \"GPU KV cache size\" (tokens)",
                     "concurrency x context, as vLLM logs it", True) == 251
    assert metric_px("Capacity (tokens)", "token slots 1,565,920 (blocks x P) · windows "
                     "counted as full history", True) == 68 * 6 == 408
    assert metric_px("SGLang's max_total_num_tokens (tokens)", None, True) == 270


def test_layout_and_compare_name_the_kinds_the_planners_state_group_holds():
    # Nemotron-H-8B: the planner's group is linear_attention (its groups, the page rows, the
    # aliasing line), the Model page's kind mamba2: both pages say which is which. Its 52
    # layers are 24 Mamba2, 4 attention and 24 MLP (hybrid_override_pattern's M, * and -): 28
    # cache layers, 24 of them mamba2
    from flatkv.app_model import spec_for

    spec = spec_for("Nemotron-H-8B", None, 1)
    assert spec.layer_names.count("mamba2") == 24 and len(spec.layer_names) == 28
    said = ("`linear_attention` is the planner's name for every state layer, whatever its "
            "kind: here the model's 24 mamba2 layers.")
    for page in ("layout", "compare"):
        at = open_app(f"app_pages/{page}.py", {"model": "Nemotron-H-8B"})
        assert_clean(at)
        assert said in [c.value for c in at.caption], page
    # a kind named otherwise than its kind (LFM2's conv layers, short convolutions) says both;
    # a model without state says nothing
    lfm2 = spec_for("LFM2-1.2B", None, 1)
    assert app_model.state_group_text(lfm2).endswith(
        f"here the model's {lfm2.layer_names.count('conv')} conv layers (short_conv).")
    assert app_model.state_group_text(spec_for("Llama-3.1-8B", None, 1)) == ""
    assert app_model.state_group_text(None) == ""
