"""The Compare page through streamlit's AppTest: every layout's row, the engine options and
their columns, context sweeps and the least budgets. Expected figures are derived by hand
(SPEC.md section 1); Compare's pasted-log check is in tests/test_app_log_check.py, helpers in
tests/app_helpers.py."""

from __future__ import annotations

import json
import math
import random
import re
import string

import pandas as pd
from app_helpers import (
    QWEN35_LINK,
    assert_clean,
    budget_caption,
    bytes_by_category,
    caption_starting,
    category_tables,
    column_widths,
    layout_figures,
    least_budgets,
    metrics,
    open_app,
    shown,
    tables,
    unescaped,
    vllm_row,
    whole_tables,
)

from flatkv.app_state import DEFAULT
from flatkv.presets import load_preset
from flatkv.units import format_bytes, markdown_literal

STATE_ROW = 49152 + 2097152


def test_pages_with_vllm_figures_say_whose_defaults_in_one_wording_at_the_top():
    # Qwen3-Next TP2: vLLM's figures run with vLLM 0.19's defaults (SPEC 3.1's anchor: mode
    # none, 14.77x at 44.59 GiB), which a vLLM 0.34 run with its own does not (mode align alone
    # gives 14.68x there); Compare, Budget and Layout say so in the same words under their
    # titles, where Budget said "default engine options" and Layout nothing
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2"}
    # (the words read "a vLLM 0.34 run with its own sets block size 64 ...", a noun missing)
    differs = ("vLLM 0.19's default engine options (vLLM 0.34's own defaults set block "
               "size 64, mamba cache mode align and 1 prefill checkpoint block, at which its "
               "figures differ: \"Use vLLM 0.34's defaults\" under ")
    compare = open_app("app_pages/compare.py", link)
    assert_clean(compare)
    assert compare.caption[0].value.endswith(differs + "Engine options)")
    budget = open_app("app_pages/budget.py", link)
    assert_clean(budget)
    assert budget_caption(budget).endswith(
        f"· {differs}Compare's Engine options) · GPU, memory fraction, weights and TP are in "
        "the sidebar.")
    layout = open_app("app_pages/layout.py", link)
    assert_clean(layout)
    assert layout.caption[0].value.endswith(differs + "Compare's Engine options)")
    # the log caption names the settings by the same words, and the lines' release apart
    assert any(c.value.startswith("To check a log's") and "run with vLLM 0.19's default "
               "engine options (what vLLM 0.34's own defaults set: under the title); vLLM "
               "0.19 and earlier printed" in c.value for c in compare.caption)
    assert any(c.value.startswith("vLLM's start-up log at these settings, in vLLM 0.34's words "
                                  "(a current release) and number formats")
               for c in compare.caption)


def test_the_defaults_caption_says_differ_only_where_vllms_figures_move():
    # DeepSeek-V3.2's sparse MLA pages are 64 tokens at any block size asked: on the H100 at
    # 0.9 vLLM holds 15,354 blocks of P 64 (5,012,736 B) at 16 and at 64, so block size 64 moves
    # nothing; Llama-3.1-8B's P goes 2,097,152 B x 36,701 blocks -> 8,388,608 B x 9,175
    same = ("vLLM 0.19's default engine options (vLLM 0.34's own defaults set block size "
            "64, at which its figures are the same here: \"Use vLLM 0.34's defaults\" under "
            "Engine options)")
    deepseek = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2"})
    assert_clean(deepseek)
    assert deepseek.caption[0].value.endswith(same)
    assert (vllm_row(deepseek)["P (tokens)"], vllm_row(deepseek)["blocks"]) == (64, 15354)
    llama = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B"})
    assert_clean(llama)
    assert llama.caption[0].value.endswith(same.replace("are the same here", "differ"))


def test_the_defaults_caption_says_vllm_refuses_where_it_wont_start_under_them():
    # Nemotron-H-8B at 256 MiB of KV cache memory, 4,096 tokens: vLLM starts it at vLLM 0.19's
    # defaults (mode none), but under 0.34's (block 64, align, 1 checkpoint block) its request
    # holds cdiv(4,096, 1,088) = 4 pages of its 4 attention layers and 6 groups of 4 Mamba2
    # layers x (2 + 1 checkpoint) = 22 blocks of 4 layers x 1,088 x 4,096 B = 17,825,792 B,
    # 392,167,424 B, more than 268,435,456 B less the null block: it won't start. The caption
    # said "and its figures differ", of figures vLLM has none of there
    assert -(-4_096 // 1_088) + 6 * (2 + 1) == 22 and 4 * 1_088 * 4_096 == 17_825_792
    assert 22 * 17_825_792 == 392_167_424 > (256 << 20) - 17_825_792
    at = open_app("app_pages/compare.py", {"model": "Nemotron-H-8B", "gpu": "KV cache memory",
                                           "kv_mem": "256MiB", "ctx": "4096"})
    assert_clean(at)
    assert vllm_row(at)["blocks"] > 0
    assert at.caption[0].value.endswith(
        "vLLM 0.19's default engine options (vLLM 0.34's own defaults set block size 64, "
        "mamba cache mode align and 1 prefill checkpoint block, and vLLM refuses to start here "
        "under them (Compare says why once they are set): \"Use vLLM 0.34's defaults\" "
        "under Engine options)")
    # Compare gives vLLM a row, and its reason a line under the table; Layout and Budget have
    # neither, and said "its column says why" too
    for page in ("app_pages/layout.py", "app_pages/budget.py"):
        other = open_app(page, {"model": "Nemotron-H-8B", "gpu": "KV cache memory",
                                "kv_mem": "256MiB", "ctx": "4096"})
        assert_clean(other)
        words = ("vLLM 0.19's default engine options (vLLM 0.34's own defaults set block "
                 "size 64, mamba cache mode align and 1 prefill checkpoint block, and vLLM "
                 "refuses to start here under them (Compare says why once they are set): "
                 "\"Use vLLM 0.34's defaults\" under Compare's Engine options)")
        assert any(f"{words} · " in f"{c.value} · " for c in other.caption), page
    at.button(key="options.recent_vllm").click().run()
    assert not at.exception
    assert any("one request of 4,096 tokens needs 392,167,424 B of KV cache" in shown(c)
               for c in [*at.caption, *at.markdown, *at.warning, *at.info])


def test_the_defaults_words_where_vllm_has_no_figures_under_them_now_either():
    # Qwen3-Next on 3 vLLM KV cache blocks: vLLM refuses at vLLM 0.19's defaults (a request of
    # its 262,144 tokens needs more) and under 0.34's, so the words say "too"; settings the
    # pages cannot take (a block size of 0, which no release's defaults give: the guard) say
    # so, where "its figures differ" stood for both
    from app_pages._widgets import _recent_vllm_figures
    from flatkv.app_state import KV_BLOCKS, KV_MEMORY, AppState

    s = AppState(model="Qwen3-Next-80B-A3B", gpu=KV_BLOCKS, kv_blocks=3)
    recent = s.recent_vllm_changes()
    assert recent == {"block_size": 64, "mamba_cache_mode": "align"}
    assert _recent_vllm_figures(s, recent) == {
        "differs": True, "refused": "vLLM refuses to start here under them too (Compare says "
                                    "why once they are set)"}
    # the other way round: DeepSeek-V3.2 told block 32, which vLLM 0.34's sparse MLA backend
    # refuses, starts at its own 64 (P 64): "its figures differ" read as if it ran at both
    deepseek = AppState(model="DeepSeek-V3.2", gpu=KV_MEMORY, kv_memory=40 << 30, block_size=32)
    assert deepseek.recent_vllm_changes() == {"block_size": 64}
    assert _recent_vllm_figures(deepseek, {"block_size": 64}) == {
        "differs": True, "refused": "vLLM starts here under them, not under these"}
    assert _recent_vllm_figures(s, {"block_size": 0}) == {
        "refused": "these settings cannot take them (block_size 0 must be positive: give 1 "
                   "or more)"}


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
    table = layout_figures(at)
    assert 76_968_728_985 // (12 * 576 * 2048) == 5_437 and -(-262_144 // 576) == 456
    assert table.loc["vLLM v1", "concurrency"] == round(5_437 / 465, 2) == 11.69
    # the expander says whose defaults it now holds
    assert caption_starting(at, "vLLM 0.34's own defaults for this model, as in a log of it "
                            "run with them")
    assert not [c for c in at.caption if c.value.startswith("vLLM 0.19's settings")]
    # a Mamba2 model also gets its prefill checkpoint block (vLLM 0.32 and later): Nemotron-H-8B
    # in 40 GiB at 8,192 tokens, its ssm state in float32 (vLLM's NemotronH default):
    # 61,440 + 128 x 64 x 128 x 4 = 4,255,744 B, P = 64 x cdiv(4,255,744, 64 x 4,096) = 1,088,
    # 40 GiB // 4,456,448 B pages // 4 layers a group = 2,409 blocks, a request 8,192 / 1,088
    # -> 8 pages + 6 state groups x (2 + 1) pages = 26: 92.65x, as vLLM 0.34 computes it
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
    table = layout_figures(nemotron)
    assert 64 * -(-(61_440 + 128 * 64 * 128 * 4) // (64 * 4_096)) == 1_088
    assert 40 * 2**30 // (1_088 * 4_096) // 4 == 2_409 and -(-8_192 // 1_088) + 6 * 3 == 26
    assert table.loc["vLLM v1", "concurrency"] == round(2_409 / 26, 2) == 92.65


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
    table = layout_figures(at)
    assert table.loc["vLLM v1", "concurrency"] == round(27_306 / 2_307, 2) == 11.84


def test_compare_turns_vllms_hybrid_manager_off():
    # Llama 4 Scout on the default H100 at 131,072 tokens: with the manager, 97,870 blocks of
    # 12 pages over 8,192 + 3 x 1,024 pages a request; without, one group of 48 layers
    at = open_app("app_pages/compare.py", {"model": "Llama-4-Scout-17B-16E", "ctx": "131072"})
    assert_clean(at)
    table = layout_figures(at)
    assert table.loc["vLLM v1", "concurrency"] == round(97_870 / (8192 + 3 * 1024), 2) == 8.69
    at.toggle(key="w.vllm_hybrid_manager").set_value(False).run()
    assert_clean(at)
    assert at.query_params["v_hybrid"] == "0"
    assert at.caption[0].value.endswith("engine options: vLLM hybrid KV cache manager off")
    table = layout_figures(at)
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
    assert layout_figures(at).loc["SGLang", "concurrency"] == 94
    at.toggle(key="w.sglang_overlap_schedule").set_value(False).run()
    assert_clean(at)
    assert at.query_params["sg_overlap"] == "0"
    assert at.caption[0].value.endswith(
        "engine options: SGLang overlap scheduling off, SGLang page size 64")
    assert layout_figures(at).loc["SGLang", "concurrency"] == 117


def test_compare_tags_a_capacity_that_counts_windows_as_full_history():
    """Budget and Layout tag gpt-oss-20b's capacity "windows counted as full history"; Compare's
    capacity column's tooltip does too, and the note why sits right under the table (it was
    among the notes under the charts). Qwen3-Next has no windows: no tag, its note absent."""
    def capacity_help(at):
        return json.loads(tables(at)[0].proto.columns)["capacity (tokens)"]["help"]

    sliding = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(sliding)
    assert capacity_help(sliding).endswith(
        "Sliding and chunked layers: windows counted as full history (the note under the "
        "table).")
    captions = [c.value for c in sliding.caption]
    note = next(i for i, c in enumerate(captions)
                if c.startswith("Sliding-window layers: capacity counts their pages like full "
                                "history"))
    least = next(i for i, c in enumerate(captions)
                 if c.startswith("The least cache budget per rank"))
    assert note < least  # under the table, before the least budgets and the charts
    qwen = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    assert "windows counted" not in capacity_help(qwen)
    assert "concurrency charges every request its own state" in capacity_help(qwen)
    assert not [c for c in qwen.caption if "like full history" in c.value]


def test_compare_page_lists_every_strategy():
    at = open_app("app_pages/compare.py", QWEN35_LINK)
    assert_clean(at)
    # the figures a reviewer reads first come first, those every layout has; then a table of
    # each block's bytes and the engines' own log counts (blank for ours)
    assert [list(d.value.columns) for d in tables(at)[:2]] == [
        ["strategy", "concurrency", "capacity (tokens)", "P (tokens)", "blocks"],
        ["strategy", "block bytes", "engine log", "older vLLM log"]]
    # the row names stay in view while a narrow window scrolls the figures sideways
    columns = json.loads(tables(at)[0].proto.columns)
    assert columns["strategy"]["pinned"] is True
    assert "pinned" not in columns["concurrency"]
    # on screen P and capacity are headed short, their unit in the tooltip (18 px), so that at
    # 1000 px (540 px of table) the layout and its four figures fit: int(chars x 6.8) + 24 a
    # column, strategy 160 ("FlatKV per component", 20), concurrency 98 (its header, 11),
    # capacity 103 ("3,250,944", 9, + 18), P 76 ("1,056", 5, + 18), blocks 85 ("1,714,648",
    # SGLang's token pool, 9): 522 px; "vLLM v1 (won't start)" would make it 528
    assert (columns["capacity (tokens)"]["label"], columns["P (tokens)"]["label"]) == (
        "capacity", "P")
    # a row is a layout, as the pages say it (the data, its CSV and the CLI keep "strategy")
    assert columns["strategy"]["label"] == "layout"
    assert [columns[c]["width"] for c in ("strategy", "concurrency", "capacity (tokens)",
                                          "P (tokens)", "blocks")] == [160, 98, 103, 76, 85]
    table = layout_figures(at)
    # every layout, as the capacity chart and the least-budget table list them: slab aliasing
    # (no equal history groups in a state hybrid) with no figures, why in short by its name
    assert list(table.index) == ["FlatKV packed slabs", "FlatKV per component", "vLLM v1",
                                 "SGLang", "slab aliasing (n/a)", "two-level pages"]
    assert table.loc["slab aliasing (n/a)"].isna().all()  # "does not apply", short
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
    # vLLM 0.19 and earlier: num_blocks // 4 groups x P of its own layout, beside it: P =
    # max(64, 16 x cdiv(2,146,304, 16 x 2,048)) = 1,056 (0.19.0's models/config.py:273-280,
    # a multiple of 16 above --block-size, not of A = 64), 80e9 // (1,056 x 2,048) // 12 =
    # 3,082 blocks; no other layout logs it
    assert 80 * 10**9 // (1056 * 2048) // 12 == 3082
    assert vllm["older vLLM log"] == 3082 // 4 * 1056 == 813_120
    assert pd.isna(sglang["older vLLM log"]) and pd.isna(flat["older vLLM log"])
    # state layers: no equal history groups, so aliasing is listed with its reason instead,
    # under the table and in its expander, naming the layout it points at as the page does
    # (it read "see two-level pages, lcm in the CLI")
    assert any("slab aliasing** does not apply: the model has state layers"
               in c.value for c in at.caption)
    whys = [c.value for c in at.caption if "state layers: aliasing" in c.value]
    assert len(whys) == 2 and all(
        why.endswith("(unequal groups: see two-level pages)") for why in whys), whys
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
    assert requests == {**{name: table.loc[name, "concurrency"] for name in table.index
                           if name != "slab aliasing (n/a)"}, "slab aliasing": 0}
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
    (sweep,) = [d.value for d in tables(at) if "context" in d.value.columns]
    assert list(sweep.columns) == ["context", "packed", "per component", "vLLM",
                                   "SGLang", "two-level"]
    assert list(sweep["context"]) == [1 << k for k in range(10, 16)]
    assert list(sweep["vLLM"].iloc[[0, -1]]) == [747.75, 87.97]
    # a state model: SGLang's cap on running requests, whatever their length, is named: 490
    # slots less the padding one, 3 a request, 489 // 3 = 163
    assert any(c.value.endswith("SGLang's line is flat where its state pool binds: 163 running "
                                "requests (489 request slots, 3 a request) whatever their "
                                "length, its max_running_requests.") for c in at.caption)
    # after the budgets to hold and the context lengths' table: a row a category, a column a
    # layout under its short name, three and two of them (the page's width takes three)
    assert [list(d.value.columns) for d in tables(at)[-2:]] == [
        ["category (bytes)", "packed", "per component", "vLLM"],
        ["category (bytes)", "SGLang", "two-level"]]
    breakdown = bytes_by_category(at).rename(columns={
        "packed": "FlatKV packed slabs", "per component": "FlatKV per component",
        "vLLM": "vLLM v1", "two-level": "two-level pages"}).T
    assert list(breakdown.index) == ["FlatKV packed slabs", "FlatKV per component", "vLLM v1",
                                     "SGLang", "two-level pages"]
    assert list(breakdown.columns) == ["kv history in use", "state in use", "row padding",
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
        "kv history in use": 1_714_648 * 12 * 2048, "state in use": (52 * 3 + 1) * slot,
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
    assert ("vLLM's start-up log at these settings, in vLLM 0.34's words (a current release) "
            "and number "
            "formats: set it beside yours line by line. vLLM 0.34 on CUDA logs the Available "
            "line before warm-up, as an estimate, and sizes its cache by the blocks it fits "
            "after it (the Memory after warmup line, its GPU figures the run's: elided); up to "
            "0.33 the Available line is the cache. It counts mamba cache mode none, as set here "
            "(--no-enable-prefix-caching): vLLM 0.28 and later start a hybrid in align and log "
            "\"Mamba cache mode is set to 'align'\"; set align to match such a log. Releases "
            "before the one-line KV cache size (vLLM PR #50462; 0.26.0 still has two) print it "
            "and the concurrency on two lines; vLLM 0.19 and earlier print 813,120 tokens there "
            "(older_logged_tokens in the math).") in captions
    # one capacity convention in the table and chart: vLLM's 2,991 blocks less 3 state pages;
    # its log lines, current and older (vLLM 0.19's own layout: P 1,056, 3,082 blocks,
    # 3,082 // 4 groups x 1,056 = 813,120), are quoted apart
    assert vllm["capacity (tokens)"] == (2991 - 3) * 1088
    assert ("In the engines' logs: vLLM's \"GPU KV cache size\": 2,882,620 tokens; SGLang's "
            "max_total_num_tokens: 1,714,648 tokens. vLLM's line is max concurrency x "
            "max_model_len (vLLM 0.19 and earlier: 813,120, num_blocks // groups x min block "
            "size, a multiple of the smallest block size; the current figure divided by "
            "max_model_len is the logged concurrency). These count mamba cache mode none: vLLM "
            "0.28 and later start a hybrid model with prefix caching on, in mamba cache mode "
            "align by default; the log says which (\"Mamba cache mode is set to ...\"): set the "
            "same mode here to match such a log. Mode none, the default here, is "
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


def test_compare_names_the_shown_and_the_logged_concurrency_where_they_differ():
    # DeepSeek-V3.2 on the H100 (76,968,728,985 B): 61 MLA layers of 1,284 B a token, pages of
    # 64, 15,354 blocks; a request of 163,840 tokens takes 2,560 of them: 5.9976... requests,
    # shown 5.99 (a request that does not fit never looks whole) where vLLM's %.2f logs 6.00x
    assert 76_968_728_985 // (61 * 1_284) // 64 == 15_354 and 163_840 // 64 == 2_560
    assert (f"{15_354 / 2_560:.2f}", 15_354 * 100 // 2_560) == ("6.00", 599)
    rounding = ("vLLM's concurrency reads 5.99 here: 15,354 / 2,560 = 5.9976... requests, cut "
                "to two decimals so that a request that does not fit never looks whole; vLLM's "
                "log rounds it (%.2f): \"Maximum concurrency ...: 6.00x\".")
    for page in ("compare", "budget"):
        at = open_app(f"app_pages/{page}.py", {"model": "DeepSeek-V3.2", "b_layout": "vllm"})
        assert_clean(at)
        assert rounding in [c.value for c in at.caption]
    # only where the two differ: Qwen3-Next's 14.77 is its log's too
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                           "gpu": "KV cache memory", "kv_mem": "44.59GiB"})
    assert not [c for c in at.caption if c.value.startswith("vLLM's concurrency reads")]


def test_compare_says_where_an_engine_pages_by_a_size_of_its_own():
    # DeepSeek-V3.2's sparse MLA: vLLM's FlashMLA sparse and SGLang's NSA page by 64 tokens
    # (SPEC 3.1: 64 for MLA), whatever the block size (16) or SGLang's page size (1) asked
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2"})
    assert_clean(at)
    # SGLang's page size asked is said once, in the lead: "SGLang 64 (its page size asked:
    # 1)" beside it said it twice
    assert ("Tokens a page, where not the size asked (the block size 16; SGLang's page size "
            "1): vLLM v1 64; SGLang 64. A state row inflates P, or the engine pages by a size "
            "of its own; each layout's Formulas below say why.") in [
                c.value for c in at.caption]
    # where SGLang has no layout (it serves no Jamba), its page size asked is not said:
    # Jamba's state row of 311,296 B takes 16 x cdiv(311,296, 16 x 4,096) = 80 tokens a page
    jamba = open_app("app_pages/compare.py", {"model": "Jamba-1.5-Mini"})
    assert 16 * -(-311_296 // (16 * 4096)) == 80
    assert ("Tokens a page, where not the size asked (the block size 16): FlatKV packed slabs "
            "80; FlatKV per component 80; vLLM v1 80. A state row inflates P, or the engine "
            "pages by a size of its own; each layout's Formulas below say why.") in [
                c.value for c in jamba.caption]
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
            "1): vLLM v1 16, full attention 32. A state row inflates P, or the engine pages by "
            "a size of its own; each layout's Formulas below say why.") in [
                c.value for c in gemma.caption]


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
    align the prefill checkpoint blocks), sliding-window layers and DeepSeek's sparse
    attention on the B200 (SGLang's KV cache dtype told)."""
    from flatkv.engine_options import ENGINE_FIELDS

    widgets = {}
    for query in ({"model": "Nemotron-H-8B", "mamba": "all"}, {"model": "gpt-oss-20b"},
                  {"model": "Nemotron-H-8B", "mamba": "align"},
                  {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"}):
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
            # SGLang's own spelling beside ours (--disable-overlap-schedule) names ours alone
            action, *aliases = [a for a in commands[command]._actions if a.dest == option.field]
            assert [a.help for a in aliases] == [
                "SGLang's own flag: --no-sglang-overlap-schedule"] * len(aliases)
            assert len(aliases) == (option.field == "sglang_overlap_schedule")
            assert action.help.startswith(said), (command, option.field)
            assert ENGINE_FLAGS[option.field] in action.option_strings  # the name it is given
        assert widgets[option.field].help.startswith(engine_help(option.field)), option.field
        # ... and adds only words of its own: Attention DP size's tooltip ended "D must divide
        # the TP; 1 is none. 1 is none; it must divide the TP."
        own = widgets[option.field].help[len(engine_help(option.field)):]
        assert not [said for said in re.split(r"[.;:]\s+", own.strip().rstrip("."))
                    if said and said in engine_help(option.field)], option.field
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
    table = layout_figures(at)
    # vLLM at 32,768 tokens, P 1,088: full cdiv(32,768, 1,088) = 31 blocks + 3 state groups x 1
    # (mode none) = 34 blocks per request; 2,991 / 34 = 87.97
    assert table.loc["vLLM v1", "concurrency"] == 87.97
    # flat (P 1,056, 775 blocks): ceil(32,768 / 1,056) = 32 full pages + 1 state page; 775 / 33
    assert table.loc["FlatKV packed slabs", "concurrency"] == round(775 / 33, 2) == 23.48
    at.selectbox(key="w.mamba_cache_mode").set_value("align").run()
    assert_clean(at)
    table = layout_figures(at)
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
    assert tables(again)[0].value.equals(tables(at)[0].value)
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
    assert not at.error  # the page shows its figures, with defaults: warnings
    notices = " ".join(shown(w) for w in at.warning)
    assert ("kernel='0' must be positive: e.g. kernel=16; using the default (kernel=auto)"
            in notices)
    assert ("mamba='bogus' is not one of none, align, all: give one of them, e.g. mamba=none; "
            "using the default (mamba=none)") in notices
    assert "kernel" not in at.query_params and "mamba" not in at.query_params
    at.switch_page("app_pages/compare.py").run()
    assert_clean(at)
    assert at.selectbox(key="w.mamba_cache_mode").value == "none"
    assert (vllm_row(at)["P (tokens)"], vllm_row(at)["blocks"]) == (1088, 2991)


def test_compare_takes_sglang_page_size_and_sliding_ratio():
    # gpt-oss-20b: 12 full + 12 sliding layers of 2,048 B per token; a 10 GB budget (frac 1)
    link = {"model": "gpt-oss-20b", "gpu": "Custom", "gpu_mem": "10GB", "frac": "1"}
    at = open_app("app_pages/compare.py", link)
    sglang = layout_figures(at).loc["SGLang"]
    # defaults r_swa 0.8, page 1: a full-pool token costs 2,048 x (12 + 0.8 x 12) = 44,236.8 B,
    # 10**10 // 44,236.8 = 226,056 (226,056.7)
    assert sglang["capacity (tokens)"] == 226_056
    at.number_input(key="w.swa_full_tokens_ratio").set_value(0.5).run()
    at.number_input(key="w.sglang_page_size").set_value(64).run()
    assert_clean(at)
    assert (at.query_params["sg_swa"], at.query_params["sg_page"]) == ("0.5", "64")
    # 10**10 // (2,048 x (12 + 0.5 x 12)) = 271,267 (271,267.4), whole pages of 64: 271,232
    sglang = layout_figures(at).loc["SGLang"]
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
    assert layout_figures(at).loc["SGLang",
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
    assert layout_figures(at).loc["SGLang", "P (tokens)"] == 64
    on_h100 = open_app("app_pages/compare.py", {**link, "gpu": "H100 80GB"})
    assert not [c for c in on_h100.caption if c.value.startswith("SGLang 0.5.23 on a")]


def test_compare_names_sglangs_refusal_on_a_b200():
    # Nemotron-H on a B200 without overlap scheduling: SGLang 0.5.23's no_buffer radix cache
    # refuses the TensorRT-LLM backend its override runs there; the note says so until the
    # options start it (the radix cache off: then its page, 64), and not on an H100
    link = {"model": "Nemotron-H-8B", "gpu": "B200 192GB", "sg_overlap": "0"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    notes = [shown(c) for c in at.caption if c.value.startswith("SGLang 0.5.23 on a B200")]
    assert len(notes) == 1 and notes[0].startswith(
        "SGLang 0.5.23 on a B200 would not start this model with these options")
    at = open_app("app_pages/compare.py", {**link, "sg_noradix": "1"})
    assert [shown(c) for c in at.caption if c.value.startswith("SGLang 0.5.23 on a B200")] == [
        "SGLang 0.5.23 on a B200 runs pages of 64 tokens when not told a page size "
        "(TensorRT-LLM's MHA backend) and rounds its pools down to whole pages: set the SGLang "
        "page size to 64 in the engine options to match such a run's log."]
    on_h100 = open_app("app_pages/compare.py", {**link, "gpu": "H100 80GB"})
    assert not [c for c in on_h100.caption if c.value.startswith("SGLang 0.5.23 on a")]
    # DeepSeek-V3.2: its trtllm DSA backends' raw fp8 layout there, which the figures take,
    # said once with its dtype and bytes
    v32 = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    assert_clean(v32)
    assert [shown(c) for c in v32.caption if c.value.startswith("SGLang 0.5.23 on a B200")] == [
        "SGLang 0.5.23 on a B200 keeps DeepSeek's sparse attention in fp8_e4m3 where no "
        "--kv-cache-dtype is told, on its trtllm DSA backends, which store the raw latent beside "
        "the index keys, 576 + 132 = 708 B a token a layer (kv_cache_configurator.py "
        "3425-3440): these figures are that layout's (told bfloat16 it keeps 1,284 B, as on a "
        "Hopper)."]


def test_compare_takes_sglangs_kv_cache_dtype_told_bfloat16_on_a_b200():
    # DeepSeek-V3.2 on the B200 (192,265,846,784 B x 0.9 = 173,039,262,105 B): SGLang's auto
    # stores its DSA cache raw in fp8, 61 x (576 + 132) B a token, 4,006,592 tokens in pages of
    # 64; told bfloat16, 61 x (1,152 + 132) = 78,324 B, 173,039,262,105 // 78,324 = 2,209,275,
    # 2,209,216 in pages of 64, as on a Hopper
    assert 173_039_262_105 // (61 * 708) // 64 * 64 == 4_006_592
    assert 173_039_262_105 // (61 * 1_284) // 64 * 64 == 2_209_216
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    assert_clean(at)
    widget = at.selectbox(key="w.sglang_kv_cache_dtype")
    assert (widget.value, widget.options) == ("auto", ["auto", "bfloat16"])
    # marked: its KV dtype is not the others' (test_compare_marks_sglangs_other_kv_dtype_...)
    assert layout_figures(at).loc[
        "SGLang (fp8_e4m3 KV)", "capacity (tokens)"] == 4_006_592
    widget.set_value("bfloat16").run()
    assert_clean(at)
    assert at.query_params["sg_kvdtype"] == "bfloat16"
    assert layout_figures(at).loc[
        "SGLang", "capacity (tokens)"] == 2_209_216
    assert [shown(c) for c in at.caption if c.value.startswith("SGLang 0.5.23 on a B200")] == [
        "SGLang 0.5.23 on a B200 told --kv-cache-dtype bfloat16 keeps DeepSeek's sparse "
        "attention in bfloat16, 1,152 + 132 = 1,284 B a token a layer, as on a Hopper: these "
        "figures are that layout's (told none, it keeps fp8_e4m3 there, the raw 576 + 132 = "
        "708 B)."]
    # on an H100 SGLang's auto keeps bfloat16 too: no widget to set
    on_h100 = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "H100 80GB"})
    assert_clean(on_h100)
    assert not [w for w in on_h100.selectbox if w.key == "w.sglang_kv_cache_dtype"]


def test_compare_follows_sglangs_sliding_pool_choice_for_the_architecture():
    # Gemma-3-12B's cache as raw bytes, its config's architecture carried in the link: SGLang
    # keeps every token of all 48 layers in one pool, 40 GiB // (48 x 8,192) = 109,226 tokens
    link = {"model": "custom", "layers": "(5*sliding_attention,full_attention)*8",
            "kv": "8192", "window": "1024", "arch": "Gemma3ForConditionalGeneration",
            "gpu": "Custom", "gpu_mem": "40GiB", "frac": "1"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert layout_figures(at).loc[
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
    assert layout_figures(at).loc[
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
    # and in mode all the page says plainly which release vLLM's row is: 0.31, the last with
    # it, its start-up lines too (Qwen3.5 falls back to align there); the table gives each
    # layout a row (it said "the vLLM column")
    captions = [c.value for c in at.caption]
    assert any("so in this mode vLLM's row is vLLM 0.31's: its figures and its start-up "
               "log lines are that release's." in c for c in captions)
    assert any(c.startswith("vLLM's start-up log at these settings, in vLLM 0.31's words (the "
                            "last release with mamba cache mode all)") for c in captions)


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
    assert any("With 2 drafted tokens a step" in c.value for c in at.caption)
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
    sglang = layout_figures(at).loc["SGLang"]
    assert sglang["capacity (tokens)"] == tokens(4) == 1_841_509
    at.selectbox(key="w.sglang_ssm_dtype").set_value("bfloat16").run()
    assert_clean(at)
    assert at.query_params["sg_ssm"] == "bfloat16"
    sglang = layout_figures(at).loc["SGLang"]
    assert sglang["capacity (tokens)"] == tokens(2)
    # a model without state layers is not offered it
    plain = open_app("app_pages/compare.py", {**link, "model": "Llama-3.1-8B", "tp": "1"})
    assert not [w for w in plain.selectbox if w.key == "w.sglang_ssm_dtype"]


def test_compare_sizes_vllms_nemotron_h_ssm_state_in_vllms_own_dtype():
    # Nemotron-H-8B in 40 GiB: vLLM's NemotronH hook keeps the ssm state in float32 unless
    # told, 61,440 + 4,194,304 = 4,255,744 B a state page: P = 16 x cdiv(4,255,744, 16 x
    # 4,096) = 1,040, 40 GiB // (1,040 x 4,096) // 4 = 2,520 blocks; told bfloat16 (the
    # preset's 2,097,152 B): 16 x cdiv(2,158,592, 65,536) = 528, 40 GiB // (528 x 4,096) // 4
    link = {"model": "Nemotron-H-8B", "gpu": "KV cache memory", "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    ssm = at.selectbox(key="w.vllm_ssm_dtype")
    assert ssm.format_func(ssm.value) == "auto (float32)"
    vllm = layout_figures(at).loc["vLLM v1"]
    assert (vllm["P (tokens)"], vllm["blocks"]) == (1_040, 2_520)
    assert 40 * 2**30 // (1_040 * 4_096) // 4 == 2_520
    ssm.set_value("bfloat16").run()
    assert_clean(at)
    assert at.query_params["v_ssm"] == "bfloat16"
    vllm = layout_figures(at).loc["vLLM v1"]
    assert (vllm["P (tokens)"], vllm["blocks"]) == (528, 40 * 2**30 // (528 * 4_096) // 4)
    # a model without state layers is not offered it
    plain = open_app("app_pages/compare.py", {**link, "model": "Llama-3.1-8B"})
    assert not [w for w in plain.selectbox if w.key == "w.vllm_ssm_dtype"]


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
    sglang = layout_figures(at).loc["SGLang"]
    assert sglang["capacity (tokens)"] == (budget - budget * 9 // 19 // slot * slot) // (
        12 * 1_024) == 1_840_621
    ssm = at.selectbox(key="w.sglang_ssm_dtype")
    assert ssm.format_func(ssm.value) == "auto (bfloat16)"
    assert "for this model bfloat16, the config's mamba_ssm_dtype." in ssm.help
    assert not any("SGLang keeps the ssm state" in c.value for c in at.caption)  # same bytes
    ssm.set_value("float32").run()  # SGLANG_MAMBA_SSM_DTYPE overrides the config
    assert at.query_params["sg_ssm"] == "float32"
    slot = 36 * (24_576 + 262_144 * 4)
    assert layout_figures(at).loc["SGLang", "capacity (tokens)"] == (
        budget - budget * 9 // 19 // slot * slot) // (12 * 1_024) == 1_841_509


def test_compare_a_state_only_model_shows_no_capacity_and_no_none():
    at = open_app("app_pages/compare.py", {"model": "custom", "layers": "4*linear", "kv": "0",
                                           "state": "conv=49152"})
    assert_clean(at)
    table = layout_figures(at)
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
    # dense MLA: vLLM's FLASH_ATTN_MLA / TRITON_MLA kernel blocks of 16 keep the requested 16
    assert at.number_input(key="w.kernel_block_size").value == 16
    assert vllm_row(at)["P (tokens)"] == 16
    assert "kernel" not in at.query_params
    at.number_input(key="w.kernel_block_size").set_value(64).run()  # FlashMLA's, told
    assert vllm_row(at)["P (tokens)"] == 64 and at.query_params["kernel"] == "64"
    at.number_input(key="w.kernel_block_size").set_value(16).run()  # the model's own: auto
    assert "kernel" not in at.query_params
    at.switch_page("app_pages/model.py").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    at.switch_page("app_pages/compare.py").run()
    assert at.number_input(key="w.kernel_block_size").value == 16


def test_compare_says_when_not_one_request_fits():
    # Qwen3-Next at block 2**20: vLLM P 1,048,576; a request of 32,768 tokens takes 1 full page
    # and 3 state pages of 4 groups' blocks, and 2 blocks hold only half of one
    at = open_app("app_pages/compare.py", {"block": "1048576", "ctx": "32768"})
    assert_clean(at)
    # vLLM checks one request's pages in every group before it starts: 48 layers x one page
    # of 1,048,576 x 2,048 B = 103,079,215,104 B (96 GiB) > the 71.68 GiB budget
    assert layout_figures(at).loc["vLLM v1 (won't start)"].isna(
        ).all()  # listed without figures
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



def test_compare_says_vllm_wont_start_deepseek_sparse_mla_or_an_fp8_mla_cache_on_an_a100():
    # the A100 preset is SM 8.0 (budget.GPU_COMPUTE_CAPABILITIES): vLLM 0.34 has no sparse MLA
    # backend there (its three need SM 9, FlashMLA sparse SM 9 or 10), so DeepSeek-V3.2 does
    # not start in any KV dtype; DeepSeek-V3's fp8 cache neither (TRITON_MLA, its one MLA
    # backend there, needs SM 8.9 for fp8). Each column reads "won't start", its caption
    # vLLM's error and the fix; on the H100 (the default GPU) vLLM's column has figures
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "A100 80GB"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1 (won't start)"].isna().all()
    (line,) = [shown(c) for c in at.caption if shown(c).startswith("**vLLM v1** ")]
    assert line.startswith("**vLLM v1** refuses to start: on SM 8.0 (A100) it has no sparse MLA "
                           "backend for DeepSeek's sparse attention (its indexer), in any KV "
                           "dtype: ")
    assert line.endswith("pick a GPU of SM 9.0 or 10.0 (H100, H200, B200)")
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1", "P (tokens)"] == 64
    # DeepSeek-V3's bytes as a model of one 576 B latent a layer (kv_split=576: MLA) in fp8
    link = {"model": "custom", "layers": "full*61", "kv": "576", "model_kernel": "16",
            "kv_split": "576", "kv_dtype": "float8_e4m3fn"}
    at = open_app("app_pages/compare.py", {**link, "gpu": "A100 40GB"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1 (won't start)"].isna().all()
    (line,) = [shown(c) for c in at.caption if shown(c).startswith("**vLLM v1** ")]
    assert line.startswith("**vLLM v1** refuses to start: on SM 8.0 (A100) its one MLA backend "
                           "is TRITON_MLA")
    assert "set the KV dtype to bfloat16, or pick a GPU of SM 8.9 or later" in line
    # on the L40S (SM 8.9) TRITON_MLA keeps fp8: P 16, 61 x 16 x 576 = 562,176 B a block
    at = open_app("app_pages/compare.py", {**link, "gpu": "L40S 48GB"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1", "block bytes"] == 61 * 16 * 576 == 562_176


def test_a_memory_source_picked_off_a_preset_keeps_its_architecture_in_the_select():
    # DeepSeek-V3.2 on the A100 80GB (SM 8.0, where vLLM has no sparse MLA backend): its
    # budget is 81,920 MiB x 0.9 = 72 GiB = 77,309,411,328 B. Custom, KV cache memory or
    # vLLM's blocks picked off it took no architecture (a Hopper): vLLM's "won't start" became
    # figures. Now the select shows Ampere, the link says it, and vLLM still refuses; vLLM's
    # blocks have no size there (the page says why; the field keeps its 6,000). Set to not
    # said, vLLM's block is 61 layers x 64 tokens x (576 x 2 + 132) B = 5,012,736 B again (a
    # Hopper's)
    assert 81_920 * 2**20 * 9 // 10 == 72 * 2**30 == 77_309_411_328
    assert 61 * 64 * (576 * 2 + 132) == 5_012_736
    for source in ("Custom", "KV cache memory", "vLLM KV cache blocks"):
        at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "A100 80GB"})
        at.sidebar.selectbox(key="w.gpu").set_value(source).run()
        assert at.sidebar.selectbox(key="w.gpu_arch").value == "ampere"
        assert at.query_params["gpu_arch"] == "ampere"
        if source == "vLLM KV cache blocks":
            assert at.sidebar.number_input(key="w.kv_blocks").value == 6_000
            (error,) = [shown(e) for e in at.error]
            assert error.startswith("vLLM's blocks have no size here: vLLM refuses to start: "
                                    "on SM 8.0 (A100) it has no sparse MLA backend")
        else:
            assert_clean(at)
            assert layout_figures(at).loc["vLLM v1 (won't start)"].isna().all()
        # the user can still change it
        at.sidebar.selectbox(key="w.gpu_arch").set_value("").run()
        assert_clean(at)
        assert "gpu_arch" not in at.query_params
        assert vllm_row(at)["block bytes"] == 5_012_736
    # the B200's Blackwell kept: SGLang's DSA layout 61 x 708 B a token, not a Hopper's 1,284
    # (183,359 MiB x 0.9 = 173,039,262,105 B // (61 x 708) in pages of 64: 4,006,592 tokens)
    assert 173_039_262_105 // (61 * 708) // 64 * 64 == 4_006_592
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    at.sidebar.selectbox(key="w.gpu").set_value("Custom").run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="w.gpu_arch").value == "blackwell"
    assert layout_figures(at).loc["SGLang (fp8_e4m3 KV)", "engine log"] == 4_006_592
    # an old link with a budget and no gpu_arch still says none
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "KV cache memory"})
    assert_clean(at)
    assert at.sidebar.selectbox(key="w.gpu_arch").value == ""


def test_compare_says_vllm_wont_start_in_a_budget_of_one_block_or_less():
    # DeepSeek-V3.2 in 3,000,000 B of KV cache: vLLM's block is 61 layers x a page of 64 tokens
    # x (576 x 2 + 132) B = 61 x 82,176 = 5,012,736 B, so the budget holds none, which vLLM 0.34
    # raises at start-up ("No available memory for the cache blocks"): "won't start", not
    # "n/a". Our block of 1,253,184 B fits twice, so the page has a table
    assert 64 * (576 * 2 + 132) == 82_176 and 61 * 82_176 == 5_012_736
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "KV cache memory",
                                           "kv_mem": "3MB"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1 (won't start)"].isna().all()
    # one request of 163,840 tokens: 2,560 blocks of 64, beside the null block
    needed = 163_840 // 64 * 5_012_736
    assert (
        f"**vLLM v1** refuses to start: the budget of 3,000,000 B holds num_blocks = 3,000,000 "
        f"// 82,176 // 61 = 0 and vLLM needs at least 2 (\"No available memory for the cache "
        f"blocks\"), and one request of 163,840 tokens needs {needed:,} B beside the null "
        f"block's 5,012,736 B; give at least {needed + 5_012_736:,} B") in [
            c.value for c in at.caption]


def test_compare_gives_vllms_reason_for_a_float16_kda_state():
    # Kimi Linear told vLLM's ssm cache dtype float16 (v_ssm): vLLM 0.34's KDA takes float32 or
    # bfloat16 only, so Compare shows no vLLM figures but its reason; the model's own ssm dtype
    # float16 (the Model page's) is no refusal: vLLM's auto keeps float32 whatever it, P 1,920
    # and 2,774 blocks of 7 x 1,920 x 1,152 = 15,482,880 B at 40 GiB, and its line says so
    from flatkv.app_model import pack_spec, spec_to_json

    kimi = load_preset("Kimi-Linear-48B-A3B")
    links = {dtype: {"model": "spec", "ctx": "32768", "gpu": "KV cache memory",
                     "kv_mem": "40GiB",
                     "spec": pack_spec(spec_to_json(kimi.with_options(ssm_dtype=dtype)))}
             for dtype in ("float16", "float32")}
    at = open_app("app_pages/compare.py", {**links["float32"], "v_ssm": "float16"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1 (won't start)"].isna(
        ).all()  # listed without figures
    assert "SGLang" in " ".join(tables(at)[0].value["strategy"].tolist())
    refusal = ("**vLLM v1** refuses to start: KimiLinearForCausalLM's KDA layers keep their "
               "recurrent (ssm) state in float32 or bfloat16 only, and --mamba-ssm-cache-dtype "
               "float16 is told")
    assert any(unescaped(c.value).startswith(refusal) for c in at.caption)
    assert [e.label for e in at.expander if e.label.startswith("vLLM v1")] == [
        "vLLM v1 (refuses to start)"]
    at = open_app("app_pages/compare.py", links["float16"])
    assert_clean(at)
    table = layout_figures(at)
    assert 40 * 2**30 // (7 * 1_920 * 1_152) == table.loc["vLLM v1", "blocks"] == 2_774
    assert not any("KDA layers keep" in unescaped(c.value) for c in at.caption)
    ssm = at.selectbox(key="w.vllm_ssm_dtype")  # its auto names what vLLM keeps
    assert ssm.format_func(ssm.value) == "auto (float32)"

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
    (sweep,) = [d.value for d in tables(at) if "context" in d.value.columns]
    # a gap (shown as a dash) beside a figure: at 65,536 tokens vLLM's 4,768 blocks over the
    # 4,096 a request of them takes
    assert sweep["vLLM"].iloc[-2] == round(4768 / 4096, 2) and pd.isna(sweep["vLLM"].iloc[-1])
    assert list(sweep["packed"].iloc[[0, -1]]) == [76_288 / 1024, 0.58]
    # no state pool to cap Llama's requests: its caption does not speak of one
    caption = caption_starting(at, "Each point is")
    assert caption.endswith("Lines that coincide draw as one. vLLM's line is its log's Maximum "
                            "concurrency, from its KV blocks alone: its --max-num-seqs caps the "
                            "requests it runs too.")


def test_compare_says_beside_a_layouts_name_that_it_wont_start():
    # Llama-3.1-8B in 10,000,000,000 B at 100,000 tokens: vLLM's blocks, 10**10 // 2,097,152
    # = 4,768 of 16 tokens less its null block, hold 76,272 tokens, not one request, so it
    # refuses to start; one full group gives slab aliasing nothing to alias
    assert (10**10 // 2_097_152 - 1) * 16 == 76_272 < 100_000
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                           "kv_mem": "10000000000B", "ctx": "100000"})
    assert_clean(at)
    assert list(tables(at)[0].value["strategy"]) == [
        "FlatKV packed slabs", "FlatKV per component", "vLLM v1 (won't start)", "SGLang",
        "slab aliasing (n/a)", "two-level pages"]
    # the lines under the table say why in full
    assert any(shown(c).startswith("**vLLM v1** refuses to start") for c in at.caption)
    assert json.loads(tables(at)[0].proto.columns)["strategy"]["width"] == int(21 * 6.8) + 24


def test_compare_says_what_each_layout_is():
    # "two-level pages" and "slab aliasing" were titles alone until their Formulas' math:
    # "Layouts", as Layout's "Terms", says what each row of the table is, in the table's order
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(at)
    (layouts,) = [e for e in at.expander if e.label == "Layouts"]
    items = layouts.markdown[0].value.split("\n")
    rows = list(tables(at)[0].value["strategy"])
    assert rows == ["FlatKV packed slabs", "FlatKV per component", "vLLM v1", "SGLang",
                    "slab aliasing", "two-level pages"]
    assert [item.split("**")[1] for item in items] == rows
    assert items[5].startswith("- **two-level pages**: parent blocks of B bytes, each bound to "
                               "one group while in use and holding K of its pages")
    assert items[4].startswith("- **slab aliasing**: KV history groups of equal layer counts")


def test_compare_a_column_of_gaps_only_stays_numbers():
    # Qwen3-Next with vLLM's hybrid manager off: vLLM does not start, so no row has an older
    # vLLM log figure; the column of dashes was text, its dashes left-aligned beside the
    # right-aligned ones of the engine log column
    at = open_app("app_pages/compare.py", {"v_hybrid": "0"})
    assert_clean(at)
    frame = tables(at)[1].value  # the block bytes and the log counts, under the figures
    assert frame.set_index("strategy").loc["vLLM v1 (n/a)"].isna().all()
    assert frame["older vLLM log"].isna().all()
    config = json.loads(tables(at)[1].proto.columns)
    assert config["older vLLM log"]["type_config"] == config["engine log"]["type_config"] == {
        "type": "number", "format": "localized"}


def test_compare_context_table_of_six_layouts_is_two_tables_that_fit_at_1000_px():
    # gpt-oss-20b: six layouts (slab aliasing applies) beside the context, 566 px of columns in
    # the expander's 504 at 1000 px; the table scrolled sideways and cut "two-level". Now two
    # tables of three, each with the context (pinned): 71 + 64 + 112 + 78 = 325 and
    # 71 + 78 + 78 + 85 = 312 px
    from app_pages._frame import EXPANDER_COLUMN_PX

    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(at)
    frames = [d for d in tables(at) if "context" in d.value.columns]
    assert [list(d.value.columns) for d in frames] == [
        ["context", "packed", "per component", "vLLM"],
        ["context", "SGLang", "aliasing", "two-level"]]
    assert [sum(column_widths(d).values()) for d in frames] == [325, 312]
    assert 325 + 312 - 71 == 566 > EXPANDER_COLUMN_PX  # as one table
    # ... which the page draws too, for an expander that holds it (904 px at 1,400 px)
    (whole,) = [d for d in whole_tables(at) if "context" in d.value.columns]
    assert sum(column_widths(whole).values()) == 566
    for frame in frames:
        config = json.loads(frame.proto.columns)
        assert config["context"]["pinned"] is True
        assert [c for c in frame.value.columns[1:] if "pinned" in config[c]] == []
        assert list(frame.value["context"]) == [1 << k for k in range(10, 18)]  # to 131,072


def test_compare_context_table_of_five_layouts_fits_its_expander_at_1000_px():
    # Qwen3-Next (slab aliasing does not apply): the context and five layouts under "packed
    # slabs" took 515 px in the expander's 504 (Chromium: two-level's column cut by 20 px);
    # under "packed" 474. Widths as the page sizes them: 6.8 px a character and 24 px each
    # (context "262,144" 71, packed "485.00" 64, per component 112, vLLM "1,151.40" 78,
    # SGLang 64, two-level 85).
    from app_pages._frame import EXPANDER_COLUMN_PX

    at = open_app("app_pages/compare.py")
    assert_clean(at)
    (frame,) = [d for d in tables(at) if "context" in d.value.columns]
    config = json.loads(frame.proto.columns)
    columns = list(frame.value.columns)
    assert columns == ["context", "packed", "per component", "vLLM", "SGLang", "two-level"]
    assert [config[c]["width"] for c in columns] == [71, 64, 112, 78, 64, 85]
    assert sum(config[c]["width"] for c in columns) == 474 <= EXPANDER_COLUMN_PX


def test_compare_when_no_layout_fits_blames_the_budget_not_the_model():
    at = open_app("app_pages/compare.py", {"gpu": "Custom", "gpu_mem": "1KB"})
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "No layout fits this budget: each says why below. Raise the GPU memory or the memory "
        "fraction, or lower the model weights, in the sidebar."]
    assert not at.get("plotly_chart")  # no empty chart or table above the error
    # the one table (its exact bytes under it): what each layout needs to hold one request,
    # the question this budget asks
    assert len(tables(at)) == 2
    held = least_budgets(at)
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
    # c = lcm(128, 16) = 128; its ssm state in float32 (vLLM's NemotronH default), 61,440 +
    # 4,194,304 = 4,255,744 B: P = 128 x cdiv(4,255,744, 128 x 4,096) = 128 x 9 = 1,152
    link = {"model": "Nemotron-H-8B", "gpu": "Custom", "gpu_mem": "80GB", "frac": "1",
            "mamba": "all"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    chunk = at.number_input(key="w.mamba_chunk_size")
    assert chunk.value == 128 and "chunk" not in at.query_params  # the model's own: no link key
    assert layout_figures(at).loc["vLLM v1", "P (tokens)"] == 1_152
    # another chunk is the user's: 256 x cdiv(4,255,744, 256 x 4,096) = 256 x 5 = 1,280
    chunk.set_value(256).run()
    assert_clean(at)
    assert at.query_params["chunk"] == "256"
    assert layout_figures(at).loc["vLLM v1", "P (tokens)"] == 1_280
    # back to 128 is the model's own again, and the link forgets it
    at.number_input(key="w.mamba_chunk_size").set_value(128).run()
    assert "chunk" not in at.query_params
    # a model whose config names no chunk (Jamba, Mamba1) starts at vLLM's 2,048:
    # P = 2,048 x cdiv(311,296, 2,048 x 4,096) = 2,048
    jamba = open_app("app_pages/compare.py", {**link, "model": "Jamba-1.5-Mini"})
    assert jamba.number_input(key="w.mamba_chunk_size").value == 2048
    assert layout_figures(jamba).loc["vLLM v1", "P (tokens)"] == 2048
    # vLLM runs Qwen3-Next in align when asked for all: no chunk to set, P at TP 1 is
    # 16 x cdiv(1,097,728, 16 x 2,048) = 16 x 34 = 544, not lcm(2,048, 16) x 1 = 2,048 (all)
    qwen = open_app("app_pages/compare.py", {**link, "model": "Qwen3-Next-80B-A3B"})
    assert_clean(qwen)
    assert not [w for w in qwen.number_input if w.key == "w.mamba_chunk_size"]
    assert layout_figures(qwen).loc["vLLM v1", "P (tokens)"] == 544
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


def test_compare_gives_each_layouts_budget_for_the_requests_to_hold():
    # Scout on an H200 at 131,072 tokens: vLLM (and two-level pages) hold 15.32 requests, the
    # most, so the field offers 16; vLLM needs 16 x (8,192 + 3 x 1,024) blocks of 786,432 B
    # (tests/test_sizing.py) and the GPU whose 0.9 leaves that, ceil(141,733,920,768 / 0.9)
    link = {"model": "Llama-4-Scout-17B-16E", "gpu": "H200 141GB", "ctx": "131072"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert at.number_input(key="w.hold_requests").value == 16
    assert at.number_input(key="w.hold_requests").help.endswith(
        "Until you give a number: 16, one more than the 15 that fit in vLLM v1 and two-level "
        "pages, the layouts that hold most.")
    held = least_budgets(at)
    vllm = held[held["strategy"] == "vLLM v1"].iloc[0]
    # (aliasing's row has no figure: a gap, which the table shows as a dash)
    assert vllm["cache budget (B)"] == 16 * 11_264 * 786_432 == 141_733_920_768
    assert vllm["cache budget"] == "132.00 GiB"
    assert vllm["GPU memory (B)"] == -(-141_733_920_768 * 10 // 9) == 157_482_134_187
    # more than the H200's 143,771 MiB (140.40 GiB): 157,482,134,187 B is 146.67 GiB
    assert vllm["GPU memory"] == "146.67 GiB (over 140.40 GiB)"
    # aliasing does not apply to Scout's groups at any budget (not a budget too small), and
    # has no GPU memory to derive: a gap in both its GPU cells, shown as a dash as every
    # missing figure is (an empty string showed a blank cell beside the dashes)
    aliasing = held[held["strategy"] == "slab aliasing"].iloc[0]
    assert aliasing["cache budget"] == "does not apply"
    assert pd.isna(aliasing["GPU memory"]) and pd.isna(aliasing["GPU memory (B)"])
    # the same setting as Budget's: a number typed there sizes here, and no GPU for a given
    # budget
    given = open_app("app_pages/compare.py", {**link, "hold": "8", "gpu": "KV cache memory",
                                              "kv_mem": "60GiB"})
    held = least_budgets(given)
    assert held[held["strategy"] == "vLLM v1"].iloc[0]["cache budget (B)"] == 70_866_960_384
    assert "GPU memory (B)" not in held.columns
    # the caption says SGLang's least budget is one from which every larger one holds them
    # only where one byte more can hold fewer: beside a state pool (Qwen3-Next), not for
    # Scout, whose SGLang pools have no slot steps
    said = [c.value for c in at.caption if c.value.startswith("The least cache budget")]
    # and, with no number typed, on screen why 16 (Budget's own layout there, FlatKV packed
    # slabs, holds fewer, so one link read 4 there and 12 here with no word on why)
    assert said == ["The least cache budget per rank that holds 16 requests of 131,072 tokens "
                    "in each layout, and the GPU memory that leaves it. 16 requests until you "
                    "give a number: one more than the 15 that fit in vLLM v1 and two-level pages, "
                    "the layouts that hold most; Budget starts from the layout it shows."]
    # where layouts tie for most, each is named, as the table's own concurrency column gives
    # them (floored: concurrency_value never rounds up to a whole request): Qwen3-Next's vLLM
    # holds 11.87 and two-level pages 11.81, 11 each; DeepSeek-V3's every layout 6 at its
    # 163,840 tokens, where it named FlatKV packed slabs alone as holding most
    for model in ("Qwen3-Next-80B-A3B", "DeepSeek-V3"):
        view = open_app("app_pages/compare.py", {"model": model})
        table = next(df.value for df in view.dataframe if "concurrency" in df.value.columns)
        applies = table[table["concurrency"].notna()]
        held = {row.strategy: math.floor(row.concurrency) for row in applies.itertuples()}
        most = max(held.values())
        named = [name for name, n in held.items() if n == most]
        where = ("every layout that applies" if len(named) == len(held) else
                 f"{' and '.join(named)}, the layouts that hold most")
        assert len(named) > 1, model  # a tie, the case this names
        why = (f"{most + 1} requests until you give a number: one more than the {most} that "
               f"fit in {where}; Budget starts from the layout it shows.")
        assert [c.value for c in view.caption if why in c.value], (model, why)
    qwen = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "hold": "2"})
    assert [c.value for c in qwen.caption if c.value.startswith("The least cache budget")] == [
        "The least cache budget per rank that holds 2 requests of 262,144 tokens in each "
        "layout (SGLang beside a state pool: from which every larger one holds them), and the "
        "GPU memory that leaves it."]
    # not where SGLang has no figure to say it of: it serves no Jamba, whose state pool would
    # step as Qwen3-Next's (a state hybrid), and its row reads "does not apply"
    jamba = open_app("app_pages/compare.py", {"model": "Jamba-1.5-Mini", "hold": "2"})
    held = least_budgets(jamba)
    assert held[held["strategy"] == "SGLang"].iloc[0]["cache budget"] == "does not apply"
    assert [c.value for c in jamba.caption if c.value.startswith("The least cache budget")] == [
        "The least cache budget per rank that holds 2 requests of 262,144 tokens in each "
        "layout, and the GPU memory that leaves it."]


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
    assert [list(d.value.columns) for d in tables(at)][2:4] == [
        ["strategy", "cache budget"], ["strategy", "cache budget (B)"]]
    assert any("A budget given as an engine logs it has no GPU memory to derive." in c.value
               for c in at.caption)
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
    table = layout_figures(at)
    assert table.loc["SGLang", "engine log"] == (40 << 30) // 737_280 == 58_254
    assert table.loc["slab aliasing (n/a)"].isna().all()  # rows of two sizes share
    # no slab
    layout = open_app("app_pages/layout.py", link)
    assert_clean(layout)
    assert metrics(layout)["Block bytes"] == format_bytes(50 * 16 * 16_384 + 10 * 16 * 8_192)
    said = caption_starting(layout, "vLLM at these settings")
    assert said.startswith(
        "vLLM at these settings (Compare's row): P 16 (full attention 32: its layers keep "
        "fewer bytes a token, so their page of the same bytes holds more tokens), pages of "
        f"{16 * 16_384:,} B in 10 tensors (group_size). A block id is 10 pages, "
        f"{10 * 16 * 16_384:,} B (2.50 MiB), and")  # no one figure a token: 16 or 32 tokens
    (pad,) = [m for m in layout.metric if m.label == "Uniform pages pad the block"]
    assert "vLLM pads a history page only where its size does not divide the largest" in pad.help


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


def test_a_table_split_at_1000_px_is_drawn_whole_where_its_place_holds_it():
    """Compare's bytes by category, Qwen3-Next's five layouts: 146 + 5 x 119 = 741 px of
    columns, two tables in the main column's 540 px at 1000 px, and two at 1,400 px too (940
    px), where one holds them: the script does not know the page's width. It draws both, the
    whole table and its runs, each in a keyed block, and a style shows the whole where its
    place is 743 px wide or more (its columns and a px of border a side), the runs under. So
    do the layouts' figures and, under them, their block bytes and log counts (853 px)."""
    from app_pages._frame import MAIN_COLUMN_PX, split_table_css

    at = open_app("app_pages/compare.py")
    assert_clean(at)
    wholes = {d.value.columns[0]: d for d in whole_tables(at)}
    assert list(wholes) == ["strategy", "category (bytes)"]  # the contexts' (474 px) fit
    whole = wholes["category (bytes)"]
    runs = category_tables(at)
    assert [list(d.value.columns) for d in runs] == [
        ["category (bytes)", "packed", "per component", "vLLM"],
        ["category (bytes)", "SGLang", "two-level"]]
    assert list(whole.value.columns) == [
        "category (bytes)", "packed", "per component", "vLLM", "SGLang", "two-level"]
    assert list(column_widths(whole).values()) == [146, 119, 119, 119, 119, 119]
    assert MAIN_COLUMN_PX < 741 + 2 <= 940
    assert whole.value.set_index("category (bytes)").equals(bytes_by_category(at))
    figures = wholes["strategy"]
    assert list(figures.value.columns) == [
        "strategy", "concurrency", "capacity (tokens)", "P (tokens)", "blocks", "block bytes",
        "engine log", "older vLLM log"]
    assert sum(column_widths(figures).values()) == 853
    assert figures.value.set_index("strategy").equals(layout_figures(at))
    # the styles, by the tables' keys: the runs hidden from their whole's width, the whole under
    css = {re.search(r"table-fit-(\w+)", h.proto.body).group(1): h.proto.body
           for h in at.get("html") if "table-fit-" in h.proto.body}
    assert sorted(css.values()) == sorted(
        split_table_css(name, px) for name, px in zip(css, (853, 741), strict=True))
    category = next(c for c in css.values() if "min-width: 743px" in c)
    # the whole is hidden outside the query, by its own key (no :has() needed): a browser
    # without container queries or :has() shows the runs alone, where it showed both
    name = next(n for n, c in css.items() if c == category)
    shown_by_query = category.split("@container", 1)
    assert (f"[class*='st-key-table-fit-{name}'] [class*='st-key-table-whole-{name}'] "
            "{display: none;}") in shown_by_query[0]
    assert (f"[class*='st-key-table-whole-{name}'] {{display: flex;}}" in shown_by_query[1]
            and f"[class*='st-key-table-runs-{name}'] {{display: none;}}" in shown_by_query[1])
    assert "max-width" not in category


def test_every_compare_table_fits_its_column_at_1000_px():
    """At 1000 px the main column is 538 px wide and an expander's 504; Compare's three tables
    of exact bytes were 762 to 853 px (Qwen3-Next: its figures with the log counts and block
    bytes 853, the least budgets with their exact bytes 762, the bytes by category 823), and
    their last columns were read only by scrolling sideways. Now each table's columns, as the
    page sizes them (6.8 px a character, 24 a column, 18 a tooltip's icon), end inside the
    column it sits in, for the models the README shows and gpt-oss-20b's six layouts; and
    every figure is still on the page (the log counts, the block and budget bytes, every
    layout's bytes by category)."""
    from app_pages._frame import EXPANDER_COLUMN_PX, MAIN_COLUMN_PX

    for link in ({}, QWEN35_LINK, {"model": "DeepSeek-V3.2"}, {"model": "Jamba-1.5-Mini"},
                 {"model": "Llama-3.1-8B"}, {"model": "gpt-oss-20b"}):
        at = open_app("app_pages/compare.py", link)
        assert_clean(at)
        folded = {id(d) for e in at.expander for d in e.dataframe}
        for frame in tables(at):  # as drawn at 1000 px (not the whole of one split there)
            widths = column_widths(frame)
            fit = EXPANDER_COLUMN_PX if id(frame) in folded else MAIN_COLUMN_PX
            assert sum(widths.values()) <= fit, (link, widths)
        # in view first: each layout's figures, its least budget in words; under them (the
        # exact budgets in an expander) the block bytes, log counts and exact budgets
        headers = [list(d.value.columns) for d in tables(at)]
        assert headers[:2] == [
            ["strategy", "concurrency", "capacity (tokens)", "P (tokens)", "blocks"],
            ["strategy", "block bytes", "engine log", "older vLLM log"]]
        assert headers[2] == ["strategy", "cache budget", "GPU memory"]
        assert id(tables(at)[3]) in folded and headers[3] == [
            "strategy", "cache budget (B)", "GPU memory (B)"]
        # every layout that applies has its bytes by category, each table led by the category
        applying = layout_figures(at).dropna(subset=["concurrency"]).index
        assert len(bytes_by_category(at).columns) == len(applying), link
        assert all(d.value.columns[0] == "category (bytes)" for d in category_tables(at))


def test_compares_least_budget_table_shows_its_gpu_memory_whole_at_1000_px():
    """The least budget's table said a GPU memory past the GPU's as "288.68 GiB (more than this
    GPU's 74.51 GiB)" (316 px): with the layout and budget columns it ran past the 540 px edge
    and cut its end. "(over 74.51 GiB)" ends inside it; its tooltip says over what and what
    brings it within."""
    from app_pages._frame import MAIN_COLUMN_PX

    at = open_app("app_pages/compare.py", QWEN35_LINK)
    assert_clean(at)
    (frame,) = [d for d in tables(at) if "GPU memory" in d.value.columns]
    config = json.loads(frame.proto.columns)
    widths = {col: c.get("width") for col, c in config.items()}
    read = list(frame.value.columns)
    assert read == ["strategy", "cache budget", "GPU memory"]  # the exact bytes under it
    assert sum(widths[c] for c in read) <= MAIN_COLUMN_PX, {c: widths[c] for c in read}
    rows = {r["strategy"]: r for r in least_budgets(at).to_dict("records")}
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
    # capacity (this tool's convention) and the engine's own log line, one table under the
    # other, have different figures (Qwen3-Next on an H100: vLLM 3,130,176 and 3,111,676):
    # each header's tooltip says which is which
    at = open_app("app_pages/compare.py")
    config = json.loads(tables(at)[0].proto.columns) | json.loads(tables(at)[1].proto.columns)
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
        return layout_figures(at).loc["SGLang", "capacity (tokens)"]

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
        return layout_figures(at).loc["SGLang", "capacity (tokens)"]

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
        return layout_figures(at).loc["SGLang", "concurrency"]

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
    assert widget.label == "Chunked prefill size (0 = automatic, -1 = off)"
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


def _lines_at(text: str, room_px: float) -> int:
    """The lines a label takes wrapped at its spaces into ``room_px``, each word's pixels
    counted as a metric's label's (the same font and size)."""
    from app_pages._frame import label_px

    lines, line = 1, ""
    for word in text.split():
        if line and label_px(f"{line} {word}") > room_px:
            lines, line = lines + 1, word
        else:
            line = f"{line} {word}".strip()
    return lines


def test_engine_option_labels_say_0_as_the_rest_of_the_app_and_fit_a_third_at_1000_px():
    # the rest of the app says what 0 stands for as "(0 = automatic)" (the GPU lab's fields),
    # "(0 = none)" (the Model page's): the engine options said "(0: auto)" and
    # "(0: auto, -1: off)"
    from flatkv.engine_options import ENGINE_FIELDS

    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2"})
    assert_clean(at)
    labels = {w.key.removeprefix("w."): w.label for w in (*at.number_input, *at.selectbox)
              if w.key and w.key.removeprefix("w.") in ENGINE_FIELDS}
    assert {f: labels[f] for f in labels if "(0" in labels[f]} == {
        "sglang_max_running_requests": "Max running requests (0 = automatic)",
        "sglang_max_mamba_cache_size": "Max mamba cache size (0 = automatic)",
        "sglang_chunked_prefill_size": "Chunked prefill size (0 = automatic, -1 = off)"}
    assert not [label for label in labels.values() if ": " in label]
    # a third of the page at 1000 px: the expander's three columns give a label 142 px of text
    # beside its tooltip's icon (measured in Chromium); "Kernel block size A (tokens)" and the
    # three above take two lines there (measured: 41 px high, a line 19), none three; 15
    # labels: the 11 number fields and 4 selectboxes (the mamba cache mode, vLLM's ssm cache
    # dtype, SGLang's ssm dtype and its mamba radix cache strategy; the 3 toggles' short
    # labels, one line)
    assert labels["vllm_ssm_dtype"] == "ssm cache dtype"
    assert len(labels) == 15 and all(_lines_at(label, 142) <= 2 for label in labels.values())
    assert _lines_at("Chunked prefill size (0 = automatic, -1 = off)", 142) == 2
    assert _lines_at("Chunked prefill size (0 = automatic, -1 = chunked prefill off)", 142) == 3


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
    assert layout_figures(at).loc["SGLang", "concurrency"] == 94
    at.toggle(key="w.sglang_disable_radix_cache").set_value(True).run()
    assert_clean(at)
    assert at.query_params["sg_noradix"] == "1"
    assert at.caption[0].value.endswith(
        "engine options: SGLang --disable-radix-cache on, SGLang page size 64")
    assert (76_968_728_985 - 471 * 77_266_944) // 24_576 // 64 == 25_797
    assert layout_figures(at).loc["SGLang", "concurrency"] == round(
        25_797 / 128, 2) == 201.54


def test_compare_says_a_track_interval_that_changes_no_figure():
    # Qwen3-Next at SGLang's default page 1: 512 passes SGLang's checks as 256 does, and the
    # interval sizes nothing, so the figures stay; a caption says why, and the widget stays
    # to take another value (it acts: at pages of 512 it decides whether SGLang starts)
    link = {"model": "Qwen3-Next-80B-A3B", "ctx": "8192"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    before = layout_figures(at).loc["SGLang"].to_dict()
    note = ("SGLang mamba track interval 512 changes no figure here: SGLang sizes no pool or "
            "slot by it and only checks it at start-up")
    assert not any(note in c.value for c in at.caption)
    at.number_input(key="w.sglang_mamba_track_interval").set_value(512).run()
    assert_clean(at)
    assert any(note in c.value for c in at.caption)
    assert at.number_input(key="w.sglang_mamba_track_interval").value == 512
    assert layout_figures(at).loc["SGLang"].to_dict() == before


def test_compare_takes_sglangs_mamba_track_interval():
    # Qwen3-Next on the default H100 at SGLang page 512, context 8,192: SGLang's extra buffer
    # snapshots every --mamba-track-interval (256) tokens, which pages of 512 do not divide,
    # so SGLang does not start; told 512 it does, with the state slots of any page
    # (test_compare_turns_sglangs_radix_cache_off: 471, 470 // 5 = 94 running)
    link = {"model": "Qwen3-Next-80B-A3B", "ctx": "8192", "sg_page": "512"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    widget = at.number_input(key="w.sglang_mamba_track_interval")
    assert widget.value == 256
    assert any("SGLang** refuses to start: its extra_buffer radix cache snapshots "
               "Qwen3NextForCausalLM's state every 256 tokens (--mamba-track-interval, "
               "SGLang's default), which the page size must divide: 512 does not; set a page "
               "size that divides 256 (1, 2, 4, ..., 256), or --mamba-track-interval 512"
               in c.value for c in at.caption)
    widget.set_value(512).run()
    assert_clean(at)
    assert at.query_params["sg_track"] == "512"
    assert at.caption[0].value.endswith(
        "engine options: SGLang page size 512, SGLang mamba track interval 512")
    assert layout_figures(at).loc["SGLang", "concurrency"] == 94
    # the link alone reopens that view; a bad value falls back to 256 with a notice
    again = open_app("app_pages/compare.py", {**link, "sg_track": "512"})
    assert_clean(again)
    assert again.number_input(key="w.sglang_mamba_track_interval").value == 512
    assert layout_figures(again).loc["SGLang", "concurrency"] == 94
    bad = open_app(None, {**link, "sg_track": "0"})
    assert not bad.exception
    assert not bad.exception and not bad.error
    assert ("sg_track='0' must be positive: e.g. sg_track=256; using the default "
            "(sg_track=256).") in " ".join(shown(w) for w in bad.warning)
    bad.switch_page("app_pages/compare.py").run()
    assert_clean(bad)
    assert bad.number_input(key="w.sglang_mamba_track_interval").value == 256
    assert "sg_track" not in bad.query_params


def test_compare_names_sglang_once_in_a_start_refusal():
    # Nemotron-H-8B (mamba chunk 128) at --mamba-track-interval 64: SGLang's Mamba2 backend
    # asserts the interval is at least the chunk, so it does not start. The caption read
    # "**SGLang** refuses to start: SGLang's Mamba2 backend needs ..."; the opening names the
    # engine, so the reason says "its"
    at = open_app("app_pages/compare.py", {"model": "Nemotron-H-8B", "sg_track": "64"})
    assert_clean(at)
    assert "SGLang (won't start)" in tables(at)[0].value.set_index("strategy").index
    line = next(shown(c) for c in at.caption if shown(c).startswith("**SGLang** refuses"))
    assert line == (
        "**SGLang** refuses to start: its Mamba2 backend needs the track interval, 64 tokens "
        "(--mamba-track-interval 64), at least NemotronHForCausalLM's mamba chunk of 128 tokens "
        "with its extra_buffer radix cache (\"mamba_track_interval (64) must be >= "
        "mamba_chunk_size (128)\"): set --mamba-track-interval 128")
    assert "SGLang's" not in line


def test_compare_takes_sglangs_mamba_radix_cache_strategy():
    # Qwen3-Next on the default H100, context 8,192: 470 request slots either way
    # (test_compare_takes_sglangs_mamba_track_interval) and 1,651,041 tokens, 201 requests of
    # 8,192; auto holds 3 + 2 slots a request, 470 // 5 = 94 running, extra_buffer_lazy 3 + 1
    # (get_mamba_tracking_slots(lazy=True) = 1), 470 // 4 = 117: the state cap binds both
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "ctx": "8192"})
    assert_clean(at)
    widget = at.selectbox(key="w.sglang_mamba_radix_cache_strategy")
    assert (widget.value, widget.options) == (
        "auto", ["auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"])
    sglang = layout_figures(at).loc["SGLang"]
    assert (sglang["concurrency"], sglang["capacity (tokens)"]) == (94, 1_651_041)
    widget.set_value("extra_buffer_lazy").run()
    assert_clean(at)
    assert at.query_params["sg_strategy"] == "extra_buffer_lazy"
    assert at.caption[0].value.endswith(
        "engine options: SGLang mamba radix cache strategy extra_buffer_lazy")
    sglang = layout_figures(at).loc["SGLang"]
    assert (sglang["concurrency"], sglang["capacity (tokens)"]) == (117, 1_651_041)
    # overlap scheduling off: SGLang refuses it, and says how to start
    at.toggle(key="w.sglang_overlap_schedule").set_value(False).run()
    assert_clean(at)
    assert any("SGLang** refuses to start: --mamba-radix-cache-strategy "
               "extra_buffer_lazy needs overlap scheduling" in c.value for c in at.caption)


def test_compare_takes_sglangs_extra_buffer_and_no_buffer_told():
    # Qwen3-Next on the default H100, context 8,192, overlap scheduling off (sg_overlap=0): 470
    # request slots and 1,651,041 tokens whatever the strategy (201 requests of 8,192). Auto
    # runs no_buffer there, 3 slots a request, 470 // 3 = 156 running; extra_buffer told runs
    # the extra buffer, 3 + 1 (get_mamba_tracking_slots(overlap=False) = 1), 470 // 4 = 117;
    # no_buffer told is auto's 156. The state cap binds each (1,651,041 // 8,192 = 201)
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "ctx": "8192",
                                           "sg_overlap": "0"})
    assert_clean(at)
    widget = at.selectbox(key="w.sglang_mamba_radix_cache_strategy")
    for strategy, running in (("auto", 470 // 3), ("extra_buffer", 470 // 4),
                              ("no_buffer", 470 // 3)):
        widget.set_value(strategy).run()
        assert_clean(at)
        assert at.query_params.get("sg_strategy", "auto") == strategy
        sglang = layout_figures(at).loc["SGLang"]
        assert (sglang["concurrency"], sglang["capacity (tokens)"]) == (running, 1_651_041)
    assert at.caption[0].value.endswith("SGLang mamba radix cache strategy no_buffer")
    # overlap scheduling on: SGLang refuses no_buffer told, and says how to start
    at.toggle(key="w.sglang_overlap_schedule").set_value(True).run()
    assert_clean(at)
    assert any("SGLang** refuses to start: its no_buffer radix cache "
               "(--mamba-radix-cache-strategy no_buffer) runs without overlap scheduling only"
               in c.value for c in at.caption)


def test_compare_explains_sglangs_two_pools_sized_by_its_swa_request_cap():
    # gpt-oss-20b on a 40 GiB cache, SGLang's max_running_requests 64: 12 full and 12 sliding
    # layers of 2,048 B a token (24,576 B a pool's token), so a block is one page (P 1) in both
    # pools. With its radix cache the pools split by r_swa 0.8 (970,903 full, 776,722 sliding
    # tokens: test_sglang_disable_radix_cache_sizes_the_swa_pool_from_its_request_cap). The
    # radix cache off sizes the sliding pool by SGLang's SWA request cap, (127 + 128 + 1 + 1) x
    # 64 + 2 x 8,192 + 1 = 32,833 tokens, the full pool the rest: (42,949,672,960 - 32,833 x
    # 24,576) // 24,576 = 1,714,793. The note read r_swa from the result, which has none
    # there: a KeyError, a traceback in place of the page (found by fuzzing the widgets).
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b", "gpu": "KV cache memory",
                                           "kv_mem": "40GiB", "sg_maxrun": "64"})
    assert_clean(at)
    note = "SGLang: a block is one page in both token pools (24,576 B full + 24,576 B sliding), "
    assert note + ("and the sliding pool holds 776,722 tokens against the full pool's 970,903 "
                   "(r_swa = 0.8), so blocks x block bytes is more than the budget."
                   ) in [c.value for c in at.caption]
    at.toggle(key="w.sglang_disable_radix_cache").set_value(True).run()
    assert_clean(at)
    assert 257 * 64 + 2 * 8_192 + 1 == 32_833
    assert ((40 << 30) - 32_833 * 24_576) // 24_576 == 1_714_793
    assert 1_714_793 * 2 * 24_576 > 40 << 30  # blocks x block bytes past the budget
    assert note + ("and the sliding pool holds 32,833 tokens against the full pool's 1,714,793 "
                   "(sized by SGLang's SWA request cap, not r_swa), so blocks x block bytes is "
                   "more than the budget.") in [c.value for c in at.caption]


def test_a_least_budget_past_int64_shows_exact_not_a_crash():
    # qwen3.5-27b at r = 1e-06 holding 1,378 requests: SGLang's least cache budget is
    # 1,060,829,605,852,544,960 B, and at memory fraction 0.05 its GPU memory 20 times that,
    # 21,216,592,117,050,899,200 B, past int64 (9.2e18): the table cast it to Int64 and the
    # page showed streamlit's redacted OverflowError; now the cell is the exact figure as text
    at = open_app("app_pages/compare.py", query={"model": "qwen3.5-27b", "sg_ratio": "1e-06",
                                                  "hold": "1378", "frac": "0.05"})
    assert not at.exception
    (hold,) = [d.value for d in tables(at) if "GPU memory (B)" in d.value.columns]
    sglang = hold.set_index("strategy").loc["SGLang"]
    assert int(sglang["cache budget (B)"]) == 1_060_829_605_852_544_960
    assert sglang["GPU memory (B)"] == f"{1_060_829_605_852_544_960 * 20:,}"


def test_compares_capacity_words_speak_of_state_only_where_the_model_has_state():
    # gpt-oss-120b has no state layers: the column's help and the note under the charts said
    # "beside one request's state"
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-120b"})
    assert_clean(at)
    config = json.loads(tables(at)[0].proto.columns)
    assert config["capacity (tokens)"]["help"].startswith(
        "Tokens, this tool's count, alike for every layout: the history the pool holds (every "
        "attention group N pages of P tokens); SGLang's")
    assert any(c.value.startswith("Capacity: the history the pool holds, counted the same way")
               for c in at.caption)
    assert not any("beside one request's state" in c.value for c in at.caption)


def test_compare_says_both_engines_keep_no_int8_cache_and_takes_the_fix():
    # Llama-3.1-8B's bytes (32 layers of K and V 1,024 + 1,024 B) in int8: neither engine keeps
    # a cache in it, so both columns have no figures and say why and the fix, while FlatKV's
    # layouts keep int8's 1-byte elements: 76,968,728,985 // (32 x 16 x 2,048) = 73,403
    # blocks. In float8_e4m3fn (the fix) both run those bytes: vLLM the same 73,403 blocks of
    # P 16, SGLang 76,968,728,985 // (32 x 2,048) = 1,174,449 tokens at page 1
    budget = 76_968_728_985
    link = {"model": "custom", "layers": "full*32", "kv": "2048", "kv_split": "1024,1024"}
    at = open_app("app_pages/compare.py", {**link, "kv_dtype": "int8"})
    assert not at.exception and not at.error
    table = layout_figures(at)
    # each engine would not start in int8 (a flag with no such choice): "won't start" for both
    assert {"vLLM v1 (won't start)", "SGLang (won't start)"} <= set(table.index)
    assert table.loc["FlatKV packed slabs", "blocks"] == budget // (32 * 16 * 2_048) == 73_403
    fix = ("so no run of it stores this cache in int8; set the KV dtype to float8_e4m3fn (fp8) "
           "or bfloat16")
    lines = [shown(c) for c in at.caption]
    assert any(line.startswith("**vLLM v1** refuses to start: no KV cache in int8 in 0.31 to "
                               "0.34: ") and line.endswith(fix) for line in lines)
    assert any(line.startswith("**SGLang** refuses to start: no KV cache in int8 in 0.5.23: ")
               and line.endswith(fix) for line in lines)
    at = open_app("app_pages/compare.py", {**link, "kv_dtype": "float8_e4m3fn"})
    assert not at.exception and not at.error
    table = layout_figures(at)
    assert (table.loc["vLLM v1", "P (tokens)"], table.loc["vLLM v1", "blocks"]) == (16, 73_403)
    assert table.loc["SGLang", "blocks"] == budget // (32 * 2_048) == 1_174_449


def test_compare_labels_an_sglang_start_refusal_wont_start_and_an_unserved_model_na():
    # DeepSeek-V3.2's bytes (61 layers of 656 B latent and scales + 132 B indexer keys, its
    # architecture) in float8_e5m2: SGLang serves the model but would not start it in that KV
    # dtype (_dsa_kv_cache_dtype_default asserts, overrides.py 541-544), so its column reads
    # "won't start", as vLLM's does, where it read "(n/a)" as for a model SGLang does not serve.
    # In float8_e4m3fn (the fix it names) it runs at its page 64: 76,968,728,985 //
    # (61 x 64 x 788) = 25,019 pages. Jamba, which SGLang does not serve, keeps "(n/a)"
    budget = 76_968_728_985
    link = {"model": "custom", "layers": "full*61", "kv": "788", "kv_split": "788",
            "indexer": "132", "arch": "DeepseekV32ForCausalLM", "model_kernel": "64"}
    at = open_app("app_pages/compare.py", {**link, "kv_dtype": "float8_e5m2"})
    assert not at.exception and not at.error
    table = layout_figures(at)
    assert {"vLLM v1 (won't start)", "SGLang (won't start)"} <= set(table.index)
    assert table.loc["SGLang (won't start)"].isna().all()
    (line,) = [shown(c) for c in at.caption if shown(c).startswith("**SGLang** ")]
    assert line.startswith("**SGLang** refuses to start: DeepSeek's sparse attention in the "
                           "KV dtype float8_e5m2 (--kv-cache-dtype fp8_e5m2) is refused by "
                           "0.5.23: ")
    assert line.endswith("set the KV dtype to float8_e4m3fn (fp8; --kv-cache-dtype fp8_e4m3) or "
                         "bfloat16")
    at = open_app("app_pages/compare.py", {**link, "kv_dtype": "float8_e4m3fn"})
    table = layout_figures(at)
    assert (table.loc["SGLang", "P (tokens)"], table.loc["SGLang", "blocks"]) == (
        64, budget // (61 * 64 * 788)) == (64, 25_019)
    jamba = open_app("app_pages/compare.py", {"model": "Jamba-1.5-Mini"})
    assert "SGLang (n/a)" in set(tables(jamba)[0].value["strategy"])
    assert any(shown(c).startswith("**SGLang** does not apply: SGLang has no Jamba model")
               for c in jamba.caption)


def test_compare_labels_sglangs_attention_dp_refusal_wont_start_and_jamba_na():
    # Llama-3.1-8B at TP 8 with attention DP 3: SGLang's server args assert "tp_size must be
    # divisible by attn_dp_size * attn_cp_size" and 3 divides no 8, so SGLang would not start
    # at that setting: its column reads "won't start", as a KV dtype it keeps no cache in does
    # (it read "(n/a)", as for a model it does not serve), and the line under the table names
    # the divisors of 8 that do. Jamba, which SGLang does not serve, keeps "(n/a)"
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "tp": "8", "sg_dp": "3"})
    assert_clean(at)
    strategies = set(tables(at)[0].value["strategy"])
    assert "SGLang (won't start)" in strategies and "SGLang (n/a)" not in strategies
    (line,) = [shown(c) for c in at.caption if shown(c).startswith("**SGLang** ")]
    assert line == ("**SGLang** refuses to start: attention DP 3 does not divide TP 8 "
                    "(\"tp_size must be divisible by attn_dp_size * attn_cp_size\"): give an "
                    "attention DP size that divides the TP (1, 2, 4 or 8)")
    jamba = set(open_app("app_pages/compare.py", {"model": "Jamba-1.5-Mini"})
                .dataframe[0].value["strategy"])
    assert "SGLang (n/a)" in jamba and "SGLang (won't start)" not in jamba


def test_compare_says_vllm_refuses_an_mla_cache_in_fp8_e5m2_and_takes_the_fix():
    # a dense MLA model of DeepSeek-V3's bytes (61 layers of one 576 B latent, kv_split=576,
    # kernel block 16) in float8_e5m2: no MLA backend of vLLM 0.31 to 0.34 takes it, so its
    # column won't start and says why and the fix; in float8_e4m3fn (the fix) it runs at P 16,
    # 61 x 16 x 576 B a block. The same bytes split into K and V (288 + 288: not MLA) start
    link = {"model": "custom", "layers": "full*61", "kv": "576", "model_kernel": "16",
            "kv_split": "576"}
    at = open_app("app_pages/compare.py", {**link, "kv_dtype": "float8_e5m2"})
    assert not at.exception and not at.error
    table = layout_figures(at)
    assert "vLLM v1 (won't start)" in table.index
    reason = ("vLLM refuses to start: no MLA attention backend of its releases 0.31 to 0.34 on an "
              "NVIDIA GPU takes the KV dtype float8_e5m2 (--kv-cache-dtype fp8_e5m2) for a "
              "dense MLA model: on a Hopper FLASH_ATTN_MLA takes auto, float16 and bfloat16, "
              "FLASHMLA and TRITON_MLA fp8 (fp8_e4m3) too, and FLASHINFER_MLA runs on SM 10 alone, "
              "where it, CUTLASS_MLA and TOKENSPEED_MLA take fp8_e4m3 at most (\"No valid "
              "attention backend found for cuda ... kv_cache_dtype not supported\"): set the KV "
              "dtype to float8_e4m3fn (--kv-dtype fp8, e4m3) or bfloat16")
    assert reason in [shown(c) for c in at.caption]
    at = open_app("app_pages/compare.py", {**link, "kv_dtype": "float8_e4m3fn"})
    table = layout_figures(at)
    assert table.loc["vLLM v1", "P (tokens)"] == 16
    assert table.loc["vLLM v1", "block bytes"] == 61 * 16 * 576 == 562_176
    at = open_app("app_pages/compare.py", {**link, "kv_split": "288,288",
                                           "kv_dtype": "float8_e5m2"})
    assert not at.exception and not at.error
    table = layout_figures(at)
    assert "vLLM v1 (won't start)" not in table.index
    assert table.loc["vLLM v1", "P (tokens)"] == 16
    assert table.loc["vLLM v1", "block bytes"] == 61 * 16 * 576 == 562_176


def test_compare_keeps_a_learnable_sink_dsa_model_in_bfloat16_on_a_b200():
    # DeepSeek-V3.2 on the B200 preset (173,039,262,105 B): SGLang's auto stores the raw fp8
    # 61 x 708 B a token, 4,006,592 tokens in pages of 64; its config with learnable_sink true
    # keeps bfloat16 there (overrides.py 532-535), 61 x 1,284 B, 2,209,216 tokens, where
    # FlatKV showed 4,006,592; in fp8 SGLang refuses it (527-531): "won't start"
    from test_hf_config import DEEPSEEK_V32_SINKS

    from flatkv.app_model import pack_spec, spec_to_json
    from flatkv.hf_config import spec_from_hf_config

    assert 173_039_262_105 // (61 * 708) // 64 * 64 == 4_006_592
    assert 173_039_262_105 // (61 * 1_284) // 64 * 64 == 2_209_216
    sinks = spec_from_hf_config(DEEPSEEK_V32_SINKS, name="DeepSeek-V3.2 sinks")

    def sglang_row(query: dict):
        at = open_app("app_pages/compare.py", {"gpu": "B200 192GB", **query})
        assert_clean(at)
        return layout_figures(at)

    plain = sglang_row({"model": "DeepSeek-V3.2"})  # marked: fp8_e4m3 beside bfloat16
    assert plain.loc["SGLang (fp8_e4m3 KV)", "engine log"] == 4_006_592
    table = sglang_row({"model": "spec", "spec": pack_spec(spec_to_json(sinks))})
    assert table.loc["SGLang", "engine log"] == 2_209_216
    fp8 = sglang_row({"model": "spec", "spec": pack_spec(spec_to_json(
        sinks.with_options(kv_dtype="fp8")))})
    assert fp8.loc["SGLang (won't start)"].isna().all()


def test_compare_says_the_block_vllm_runs_dense_mla_at_told_none_on_a_b200():
    # DeepSeek-V3 (bfloat16: 61 layers of (512 + 64) x 2 = 1,152 B a token) on the B200 preset
    # (183,359 MiB x 0.9 = 173,039,262,105 B): vLLM's figures at P 16 (TRITON_MLA, told 16),
    # 173,039,262,105 // (61 x 16 x 1,152) = 153,901 blocks; told none FLASHINFER_MLA runs 64
    # in 0.34 (38,475 blocks, 2,462,400 tokens) and 32 in 0.31 (76,950, 2,462,400). The note
    # was off on a Blackwell; on an H100 in bfloat16 there is none (FLASH_ATTN_MLA runs 16).
    # Told 16 vLLM 0.34 warns of the backends refused for the block alone (cuda.py 528-548):
    # FLASHINFER_MLA (blocks [32, 64]) and CUTLASS_MLA ([128]), in priority order
    budget = 183_359 * 2**20 * 9 // 10
    assert budget // (61 * 16 * 1_152) == 153_901
    assert (budget // (61 * 64 * 1_152), budget // (61 * 32 * 1_152)) == (38_475, 76_950)
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3", "gpu": "B200 192GB"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1", "blocks"] == 153_901
    (vllm,) = [c.value for c in at.code if c.value.startswith("P 16 is a block size told")]
    assert vllm.splitlines()[0] == (
        "P 16 is a block size told: told none, vLLM runs an MLA cache on a Blackwell on "
        "FLASHINFER_MLA, its first MLA backend there, for a qk_nope_head_dim of 64, 128 or "
        "192 (DeepSeek's 128; FlatKV's model spec does not carry it, and taken for one of them "
        "here: for another 0.34 runs CUTLASS_MLA, at 128), whose kernel blocks are 32 and 64: "
        "0.34 at its default 64 (38,475 blocks of 64, 2,462,400 tokens here; no line), 0.31, whose "
        "default is 16, at 32 (76,950 blocks of 32, 2,462,400 tokens here; it logs \"Setting "
        "kv cache block size to 32 for FLASHINFER_MLA backend(s).\"), while told 16, no "
        "multiple of 32, it runs on TRITON_MLA at 16, as these figures do, and logs "
        "\"--block-size 16 precluded higher-priority backend(s) FLASHINFER_MLA, CUTLASS_MLA. "
        "Using TRITON_MLA instead, which may result in reduced performance. Consider removing "
        "--block-size to auto-select the optimal block size.\" (FLASH_ATTN_MLA and FLASHMLA's "
        "dense kernel are refused on SM 10 whatever the block, so not named): a block size of "
        "64 (32 for 0.31) here matches a Blackwell's log of a run told none")
    on_h100 = open_app("app_pages/compare.py", {"model": "DeepSeek-V3", "gpu": "H100 80GB"})
    assert_clean(on_h100)
    assert not [c for c in on_h100.code if "is a block size told" in c.value]


def test_compare_marks_sglangs_other_kv_dtype_where_its_concurrency_is_the_dtypes():
    # DeepSeek-V3.2 on the B200: SGLang's auto stores the raw fp8, 576 + 132 = 708 B a token a
    # layer, FlatKV and vLLM the model's bfloat16, 576 x 2 + 132 = 1,284: 4,006,592 tokens
    # (24.45 requests of 163,840) to 2,209,264 (13.48) is the dtype's. Both tables mark SGLang
    # beside its name, one line under them says it and how to compare like for like (the
    # CLI's alike: test_strategy_cli.DSV32_APART)
    from app_pages._frame import MAIN_COLUMN_PX

    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    assert_clean(at)
    head, logs = tables(at)[:2]
    assert list(head.value["strategy"]) == list(logs.value["strategy"]) == [
        "FlatKV packed slabs", "FlatKV per component", "vLLM v1", "SGLang (fp8_e4m3 KV)",
        "slab aliasing (n/a)", "two-level pages"]
    assert [f"{v:.2f}" for v in head.value["concurrency"].dropna()] == [
        "13.48", "13.48", "13.48", "24.45", "13.48"]
    assert list(head.value["capacity (tokens)"].dropna()) == [
        2_209_264, 2_209_264, 2_209_216, 4_006_592, 2_208_912]
    # the mark is no wider than "slab aliasing (n/a)": the table still fits 1000 px
    assert sum(column_widths(head).values()) <= MAIN_COLUMN_PX
    assert sum(column_widths(logs).values()) <= MAIN_COLUMN_PX
    (apart,) = [shown(c) for c in at.caption if shown(c).startswith("SGLang stores")]
    assert apart == (
        "SGLang stores this model's KV in fp8_e4m3, 708 B a token a layer, where the other "
        "layouts keep the model's bfloat16, 1,284 B: its concurrency beside theirs is the "
        "dtype's bytes, not its layout's. Like for like: KV cache dtype told bfloat16 (SGLang, "
        "under Engine options) keeps SGLang in bfloat16 too, 1,284 B, or the kv dtype "
        "float8_e4m3fn (fp8) under the Model page's Edit by hand puts every layout in "
        "fp8_e4m3.")
    # told bfloat16, SGLang keeps 1,284 B as the others, 2,209,216 tokens: no mark, no line
    told = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB",
                                             "sg_kvdtype": "bfloat16"})
    assert_clean(told)
    assert "SGLang" in list(told.dataframe[0].value["strategy"])
    assert not [c for c in told.caption if shown(c).startswith("SGLang stores")]
    # on an H100 SGLang's auto keeps bfloat16 too
    hopper = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2"})
    assert "SGLang" in list(hopper.dataframe[0].value["strategy"])
    assert not [c for c in hopper.caption if shown(c).startswith("SGLang stores")]


def test_compare_offers_raw_bytes_only_the_like_for_like_they_take():
    # DeepSeek-V3.2 as raw bytes on the B200 (a profile export loaded, or a link's raw model):
    # SGLang still stores fp8_e4m3, 708 B to the model's 1,284, but Raw bytes has no kv dtype
    # to set, so the line offers only SGLang told bfloat16, which puts it back at 1,284 B
    from flatkv.app_model import RawModel
    from flatkv.app_state import AppState, encode_query

    raw = RawModel.from_profile(load_preset("DeepSeek-V3.2").profile())
    link = {**encode_query(AppState(model="custom", raw=raw)), "gpu": "B200 192GB"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert "SGLang (fp8_e4m3 KV)" in list(tables(at)[0].value["strategy"])
    (apart,) = [shown(c) for c in at.caption if shown(c).startswith("SGLang stores")]
    assert apart == (
        "SGLang stores this model's KV in fp8_e4m3, 708 B a token a layer, where the other "
        "layouts keep the model's bfloat16, 1,284 B: its concurrency beside theirs is the "
        "dtype's bytes, not its layout's. Like for like: KV cache dtype told bfloat16 (SGLang, "
        "under Engine options) keeps SGLang in bfloat16 too, 1,284 B.")
    told = open_app("app_pages/compare.py", {**link, "sg_kvdtype": "bfloat16"})
    assert_clean(told)
    assert "SGLang" in list(told.dataframe[0].value["strategy"])
    assert not [c for c in told.caption if shown(c).startswith("SGLang stores")]


def test_compare_marks_sglangs_kv_dtype_in_the_least_budget_table_and_the_charts():
    # DeepSeek-V3.2 on the B200: SGLang holds most, 24 requests of 163,840 tokens (24.45), by
    # fp8_e4m3's 708 B to the others' 1,284 (13.48): the requests to hold say whose they are
    # with the mark, as do the least-budget tables and the charts; the mark is as long as
    # "FlatKV per component" (20 characters), so the table keeps its 511 px of the 540
    from app_pages._frame import MAIN_COLUMN_PX

    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    assert_clean(at)
    budgets = least_budgets(at)
    assert list(budgets["strategy"]) == [
        "FlatKV packed slabs", "FlatKV per component", "vLLM v1", "SGLang (fp8_e4m3 KV)",
        "slab aliasing", "two-level pages"]
    (words,) = [d for d in tables(at) if "cache budget" in d.value.columns]
    assert sum(column_widths(words).values()) <= MAIN_COLUMN_PX
    assert caption_starting(at, "The least cache budget per rank").endswith(
        "25 requests until you give a number: one more than the 24 that fit in SGLang "
        "(fp8_e4m3 KV), the layout that holds most; Budget starts from the layout it shows.")
    capacity, contexts, where = (json.loads(c.proto.spec)["data"]
                                 for c in at.get("plotly_chart"))
    assert "SGLang (fp8_e4m3 KV)" in capacity[0]["y"] and "SGLang" not in capacity[0]["y"]
    assert "SGLang (fp8_e4m3 KV)" in [t["name"] for t in contexts]
    assert all("SGLang (fp8_e4m3 KV)" in bars["y"] for bars in where)
    # the bytes-by-category table and the concurrency-by-context one, a column a layout under
    # its short title, mark it too (they read "SGLang" under the charts' marked key)
    columns = [list(d.value.columns) for d in tables(at)]
    categories = [c for c in columns if c[0] == "category (bytes)"]
    contexts_table = [c for c in columns if c[0] == "context"]
    assert [c for c in categories + contexts_table if "SGLang (fp8_e4m3 KV)" in c]
    assert not [c for c in categories + contexts_table if "SGLang" in c]
    # Budget on SGLang says it too
    budget = open_app("app_pages/budget.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB",
                                              "b_layout": "sglang"})
    assert_clean(budget)
    assert ("25 requests until you give a number: one more than the 24 that fit in SGLang "
            "(fp8_e4m3 KV); Compare starts from the layout that holds most.") in [
        shown(c) for c in budget.caption]


def _quoted_on_compare_and_budget(link: dict, quote: str, older: str | None):
    """The which-log caption ``quote`` on Compare and on Budget's vLLM layout at ``link``, and
    the older vLLM log's figure ``older`` in Compare's log table and as Budget's metric (None:
    a dash, and no metric); Budget's "GPU KV cache size" metric, for its delta."""
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert quote in [c.value for c in at.caption]
    logs = tables(at)[1].value
    cell = logs.loc[logs["strategy"] == "vLLM v1", "older vLLM log"].iloc[0]
    assert (None if pd.isna(cell) else f"{cell:,}") == older
    budget = open_app("app_pages/budget.py", {**link, "b_layout": "vllm"})
    assert quote in [c.value for c in budget.caption]
    assert [m.value for m in budget.metric if m.label == "Older vLLM log (tokens)"] == (
        [older] if older else [])
    return next(m for m in budget.metric if m.label == 'vLLM\'s "GPU KV cache size" (tokens)')


def test_checkpoint_blocks_told_to_a_class_vllm_keeps_none_are_no_releases_log():
    # Jamba-1.5-Mini in align told 1 prefill checkpoint block: vLLM 0.34's MambaMixer keeps
    # none (MambaSpec's default), so the figure is a what-if no release logs. 40 GiB of
    # 32,768 blocks, a request 7 state groups x (2 + 1) + ceil(262,144 / 80) = 21 + 3,277 pages:
    # int(32,768 / 3,298 x 262,144) = 2,604,589; the caption and Budget's delta say no release
    # prints it (they named 0.32 to 0.34)
    link = {"model": "Jamba-1.5-Mini", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "ctx": "262144", "mamba": "align", "ckpt": "1"}
    assert -(-262_144 // 80) == 3_277 and 32_768 * 262_144 // (7 * 3 + 3_277) == 2_604_589
    quote = ('To check a log\'s "GPU KV cache size: N tokens" line: no vLLM release prints '
             "2,604,589 (the engine log) run with the engine options and block size set here; "
             "no older vLLM log: vLLM 0.19 and earlier had no prefill checkpoint blocks (no "
             "vLLM release up to 0.34 keeps them for JambaForCausalLM). Capacity is this "
             "tool's count: no engine logs it.")
    logged = _quoted_on_compare_and_budget(link, quote, None)
    assert (logged.value, logged.delta) == ("2,604,589", "no vLLM release logs it")


def test_compares_engine_log_line_quotes_no_what_if_of_checkpoint_blocks_no_release_keeps():
    # Jamba-1.5-Mini in align told 1 prefill checkpoint block (40 GiB, 262,144 tokens): vLLM's
    # 32,768 x 262,144 // (7 x 3 + 3,277) = 2,604,589 is no release's log (MambaMixer keeps
    # none), so the note under the charts says why in place of quoting it as the engines'
    # log line (it read 'In the engines' logs: vLLM's "GPU KV cache size": 2,604,589 tokens.')
    link = {"model": "Jamba-1.5-Mini", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "ctx": "262144", "mamba": "align", "ckpt": "1"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    captions = [c.value for c in at.caption]
    assert not [c for c in captions if c.startswith("In the engines' logs")]
    assert not [c for c in captions if 'vLLM\'s "GPU KV cache size": 2,604,589' in c]
    assert ("Not in any vLLM log: vLLM's 2,604,589 tokens, as these figures count 1 prefill "
            "checkpoint block a request in align and no vLLM release up to 0.34 keeps them for "
            "JambaForCausalLM (Prefill checkpoint blocks 0 gives a log's figure).") in captions
    # told none, as vLLM keeps: 32,768 x 262,144 // (7 x 2 + 3,277) = 2,610,129, a log line
    assert 32_768 * 262_144 // (7 * 2 + 3_277) == 2_610_129
    at = open_app("app_pages/compare.py", {**link, "ckpt": "0"})
    assert_clean(at)
    assert caption_starting(at, "In the engines' logs: ").startswith(
        'In the engines\' logs: vLLM\'s "GPU KV cache size": 2,610,129 tokens. ')


def test_the_anchor_says_which_log_figure_is_which_release():
    # SPEC 3.1's anchor (Qwen3-Next TP 2, 44.59 GiB): three token figures, capacity 3,894,496
    # (7,159 pages x 544, this tool's), the engine log int(7,162 / 485 x 262,144)
    # and the older log 7,162 // 4 groups x 544: the caption under the tables says which one
    # a current vLLM's "GPU KV cache size" line prints and whose options the figures take
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory",
            "kv_mem": "44.59GiB", "ctx": "262144"}
    quote = ('To check a log\'s "GPU KV cache size: N tokens" line: vLLM 0.26 to 0.34 (a '
             f"current release) prints {7_162 * 262_144 // 485:,} (the engine log) run with "
             "vLLM 0.19's default engine options (what vLLM 0.34's own defaults set: under "
             f"the title); vLLM 0.19 and earlier printed {7_162 // 4 * 544:,} (the "
             "older vLLM log); vLLM 0.20 to 0.25 are not checked against these figures "
             "(0.23.0's code already logs max concurrency x max_model_len). Capacity is this "
             "tool's count: no engine logs it.")
    assert "3,871,083" in quote and "973,760" in quote
    logged = _quoted_on_compare_and_budget(link, quote, "973,760")
    assert logged.delta == "as vLLM 0.26 and later log it"
    # told the block size 64, the figures are no longer 0.19's defaults
    budget = open_app("app_pages/budget.py", {**link, "b_layout": "vllm", "block": "64"})
    assert any(c.value.startswith('To check a log\'s "GPU KV cache size: N tokens" line')
               and "run with the engine options and block size set here;" in c.value
               for c in budget.caption)


def test_which_log_caption_says_what_is_known_of_the_releases_between():
    # gpt-oss-20b on the H100: 0.26 to 0.34 log one figure, 0.19 and earlier another; the
    # caption named nothing between, where 0.23.0's code logs the current form (0.20 to 0.22
    # not read): it says those releases are not checked
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(at)
    (quote,) = [c.value for c in at.caption if c.value.startswith("To check a log's")]
    assert "vLLM 0.26 to 0.34 (a current release) prints " in quote
    assert quote.endswith(" (the older vLLM log); vLLM 0.20 to 0.25 are not checked against "
                          "these figures (0.23.0's code already logs max concurrency x "
                          "max_model_len). Capacity is this tool's count: no engine logs it.")


def test_compare_says_an_architecture_that_moves_no_figure_changes_none():
    # the sidebar's GPU architecture on KV cache memory, as the CLI's --gpu-arch notes it:
    # ampere or blackwell on Qwen3-Next moves no figure from a Hopper's, and a line says so,
    # and that in align, vLLM 0.34's own, the GDN layers' checkpoint block reads the GPU (the
    # "vLLM 0.34's defaults" button sets none at no GPU said: strategy_notes.arch_reader);
    # ampere on DeepSeek-V3.2 makes vLLM refuse (no line); hopper, the select's value off an
    # H100 and the GPU taken where none is said, no line
    def idle(model: str, arch: str) -> list[str]:
        at = open_app("app_pages/compare.py", {"model": model, "gpu": "KV cache memory",
                                               "gpu_arch": arch})
        assert_clean(at)
        return [shown(c) for c in at.caption if "changes no figure" in shown(c)]

    assert idle("Qwen3-Next-80B-A3B", "ampere") == [
        "GPU architecture ampere (SM 8.0: A100) changes no figure here: vLLM and SGLang lay "
        "this model out on an SM 8.0 GPU as on a Hopper, the GPU the figures take where none "
        "is said; in mamba cache mode align, vLLM 0.34's own for a hybrid, the GPU decides "
        "whether vLLM keeps a prefill checkpoint block for this model (not known where no GPU "
        "is said)."]
    (blackwell,) = idle("Qwen3-Next-80B-A3B", "blackwell")
    assert blackwell.startswith("GPU architecture blackwell (SM 10.0: B200) changes no figure "
                                "here: SGLang stores this model's cache on a Blackwell GPU as "
                                "on a Hopper")
    assert idle("Qwen3-Next-80B-A3B", "hopper") == idle("DeepSeek-V3.2", "ampere") == []
    assert idle("DeepSeek-V3.2", "blackwell") == []


def test_the_log_figure_of_options_only_later_releases_run_names_those_releases():
    # Qwen3-Next with vLLM 0.34's defaults on the H100: block 64, mode align and one prefill
    # checkpoint block a state group, which GDN layers keep since 0.33 alone (0.26 to 0.32
    # keep none and log another figure). P = 64 x ceil(1,097,728 / (2,048 x 64)) = 576;
    # 76,968,728,985 // (576 x 2,048) // 12 = 5,437 blocks; a request 456 full + 3 x (2 + 1)
    link = {"block": "64", "mamba": "align", "ckpt": "1"}
    assert 64 * -(-1_097_728 // (2_048 * 64)) == 576
    assert 76_968_728_985 // (576 * 2_048) // 12 == 5_437
    assert (-(-262_144 // 576), 5_437 * 262_144 // (456 + 9)) == (456, 3_065_111)
    # vLLM 0.19 kept no checkpoint block, so no older log figure is this layout's: the caption
    # says why, Compare's cell is a dash and Budget shows no such metric
    quote = ('To check a log\'s "GPU KV cache size: N tokens" line: vLLM 0.33 to 0.34 (a '
             "current release) prints 3,065,111 (the engine log) run with vLLM 0.34's own "
             "defaults; no older vLLM log: vLLM 0.19 and earlier had no prefill checkpoint "
             "blocks (vLLM 0.33 and later keep them). Capacity is this tool's count: no engine "
             "logs it.")
    logged = _quoted_on_compare_and_budget(link, quote, None)
    assert (logged.value, logged.delta) == ("3,065,111", "as vLLM 0.33 and later log it")
    # a Mamba2 model's checkpoint block came in 0.32
    nemotron = open_app("app_pages/compare.py", {**link, "model": "Nemotron-H-8B"})
    assert any(c.value.startswith('To check a log\'s "GPU KV cache size: N tokens" line: vLLM '
                                  "0.32 to 0.34 (a current release) prints")
               for c in nemotron.caption)


def test_compares_start_up_log_heading_of_checkpoint_blocks_no_release_keeps_says_so():
    # Jamba-1.5-Mini in align told 1 prefill checkpoint block: vLLM's lines under its formulas
    # are no release's (MambaMixer keeps no checkpoint block: strategy_notes.unlogged_why, the
    # rule of the note above and the CLI's heading); they read "in a current release's words"
    link = {"model": "Jamba-1.5-Mini", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "ctx": "262144", "mamba": "align", "ckpt": "1"}
    at = open_app("app_pages/compare.py", link)
    assert_clean(at)
    assert [c.value for c in at.caption if c.value.startswith(
        "vLLM's start-up log at these settings, in no release's words (these figures count 1 "
        "prefill checkpoint block a request in align and no vLLM release up to 0.34 keeps them "
        "for JambaForCausalLM) and number formats")]


def test_compare_says_vllm_wont_start_deepseek_v3_2_told_block_32_or_48():
    # block 32 or 48 is told (FlatKV's 16 alone stands for none told): vLLM 0.34's sparse MLA
    # backends on a Hopper page by 64s, so it finds none, where FlatKV ran P 64 (8,568 blocks
    # of 40 GiB) before; at 16 vLLM v1 has its row, P 64, and its math says a told 16 is refused
    for block in ("32", "48"):
        at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "H100 80GB",
                                               "block": block})
        assert_clean(at)
        assert layout_figures(at).loc["vLLM v1 (won't start)"].isna().all()
        assert any(f"block size {block} is none (\"No valid attention backend found" in c.value
                   for c in at.caption)
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "H100 80GB",
                                           "block": "16"})
    assert_clean(at)
    assert layout_figures(at).loc["vLLM v1", "P (tokens)"] == 64
    assert any(c.value.startswith("block size 16 read as no --block-size told: vLLM then picks "
                                  "64") for c in at.code)


def test_a_linked_raw_kda_model_keeps_its_key_head_dims_and_so_its_checkpoint_page():
    # a Kimi-K3 shape as raw bytes in a link (Kimi-Linear's bytes under
    # KimiK3ForConditionalGeneration) on the H100 in align: gdn_dims=128 says its KDA layers
    # prefill on FlashKDA there, so vLLM 0.34 keeps a checkpoint block (1), as the model does;
    # the link without it (every raw link before) reads the dims as not known: 0, no line
    from dataclasses import replace

    from flatkv.app_model import CUSTOM, RawModel, profile_for
    from flatkv.app_state import AppState, encode_query

    k3 = replace(profile_for("Kimi-Linear-48B-A3B", None, 1),
                 architectures=("KimiK3ForConditionalGeneration",))
    link = encode_query(AppState(model=CUSTOM, raw=RawModel.from_profile(k3),
                                 mamba_cache_mode="align"))
    assert link["gdn_dims"] == "128"
    said = ("Mamba cache mode align counts 2 state pages a request in each state group here, "
            "as vLLM 0.28 to 0.30 did. Since 0.31 vLLM keeps a prefill checkpoint page more "
            "for this model's KDA layers on the H100 80GB, whose prefill runs on FlashKDA there "
            "(3 a request): set \"Prefill checkpoint blocks\" to 1 to match a later log.")
    for query, lines in ((link, [said]),
                         ({k: v for k, v in link.items() if k != "gdn_dims"}, [])):
        at = open_app("app_pages/compare.py", query)
        assert_clean(at)
        assert [shown(c) for c in at.caption if "checkpoint page" in shown(c)] == lines
