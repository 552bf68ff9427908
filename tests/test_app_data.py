"""The numbers the pages show, derived by hand from SPEC.md's worked example."""

from __future__ import annotations

import csv
import io
import json
import re
from fractions import Fraction

import pytest
from strategy_profiles import BLOCK_BYTES, KV_ROW, QWEN35, STATE_ROW, vllm_at_80gb

from flatkv import app_data, strategy_notes
from flatkv.analysis import analyze, plan_json
from flatkv.presets import load_preset
from flatkv.profile import CacheProfile

# the state group as the pages name it (app_model.counted_kind)
# the state group as Layout names it (``app_model.group_name``): short, inside metric labels
STATE_KIND = "state"

# SPEC section 1: 12 x (3 linear + 1 full); KV 2,048 B/slot; conv 49,152 B; ssm 2,097,152 B.


@pytest.fixture(scope="module")
def analysis():
    return analyze(QWEN35.components(), block_size=64, alignment=16, budget_bytes=80 * 10**9)


def test_headline_of_the_worked_example(analysis):
    h = app_data.headline(analysis)
    assert BLOCK_BYTES == 103_219_200
    assert (h.requested_block_size, h.block_size, h.block_bytes) == (64, 1056, 103_219_200)
    assert h.num_blocks == 80 * 10**9 // 103_219_200 == 775
    assert h.token_slots == 775 * 1056 == 818_400
    assert h.unused_bytes == 80 * 10**9 - 775 * 103_219_200
    # uniform pages pad each of the 36 state rows from 2,146,304 to 2,162,688 B
    assert h.uniform_padding_per_block == 36 * (KV_ROW - STATE_ROW)
    # exact shares (Fractions), so that a few bytes of padding do not read as none
    assert h.padding_share == Fraction(36 * 16_384, BLOCK_BYTES + 36 * 16_384)
    # the same padding per state row, as vLLM logs it: 16,384 / 2,146,304
    assert (h.page_row_bytes, h.state_row_bytes) == (KV_ROW, STATE_ROW) == (2_162_688, 2_146_304)
    assert h.state_row_padding == Fraction(16_384, 2_146_304)
    shares = dict(h.dead_share_by_group)
    assert shares["full_attention"] == Fraction(36 * STATE_ROW, BLOCK_BYTES)
    assert shares["linear_attention"] == Fraction(12 * KV_ROW, BLOCK_BYTES)


def test_packed_segments_sit_at_their_row_offsets(analysis):
    segs = app_data.layout_segments(analysis)
    slot0 = [s for s in segs if s.slot == 0]
    # slot 0: linear row [conv | ssm] first (the pattern starts with linear), then the kv row
    assert [(s.kind, s.offset, s.nbytes) for s in slot0] == [
        ("conv", 0, 49152), ("ssm", 49152, 2097152), ("kv", STATE_ROW, KV_ROW)]
    slot12 = [s for s in segs if s.slot == 12]
    assert [(s.kind, s.offset, s.nbytes) for s in slot12] == [
        ("conv", 0, 49152), ("ssm", 49152, 2097152)]
    assert len(segs) == 12 * 3 + 24 * 2
    assert {s.slot_name for s in segs} == {f"flat_slab_{j}" for j in range(36)}
    assert not any(s.kind == "padding" for s in segs)


def test_segments_name_the_cache_layer_the_model_page_counts(analysis):
    # (3 linear, 1 full) x 12: the full group's layer j is cache layer 4j + 3, the linear
    # group's layer j is cache layer 4 (j // 3) + j % 3; the padding names its row's layer
    segs = app_data.layout_segments(analysis, uniform=True, layer_types=QWEN35.layer_types)
    for s in segs:
        expected = (4 * s.layer + 3 if s.group_id == "full_attention"
                    else 4 * (s.layer // 3) + s.layer % 3)
        assert s.cache_layer == expected
        assert QWEN35.layer_types[s.cache_layer] == s.group_id
    assert {s.cache_layer for s in segs if s.kind == "kv"} == set(range(3, 48, 4))
    assert not any(s.cache_layer is not None for s in app_data.layout_segments(analysis))


def test_uniform_segments_pad_every_state_row_to_the_page_row(analysis):
    segs = app_data.layout_segments(analysis, uniform=True)
    slot0 = [(s.kind, s.offset, s.nbytes) for s in segs if s.slot == 0]
    assert slot0 == [("conv", 0, 49152), ("ssm", 49152, 2097152),
                     ("padding", STATE_ROW, KV_ROW - STATE_ROW), ("kv", KV_ROW, KV_ROW)]
    assert sum(1 for s in segs if s.kind == "padding") == 36


def test_bytes_tree_sums_exactly_to_the_budget(analysis):
    nodes = app_data.bytes_tree(analysis)
    by_id = {n.id: n for n in nodes}
    assert by_id["budget"].value == 80 * 10**9
    for node in nodes:
        kids = [n.value for n in nodes if n.parent == node.id]
        if kids:
            assert sum(kids) == node.value, node.id
    assert by_id["full_attention"].value == 775 * 12 * KV_ROW
    assert by_id["linear_attention/ssm"].value == 775 * 36 * 2097152
    assert by_id["linear_attention/ssm/5"].value == 775 * 2097152
    assert by_id["linear_attention/ssm/5"].kind == "ssm"
    assert by_id["full_attention/kv/11"].parent == "full_attention/kv"
    assert by_id["unused"].value == 80 * 10**9 - 775 * BLOCK_BYTES


def test_page_assignment_follows_the_spec_workload(analysis):
    # SPEC 3.5, R = 2, L = 2,000, P = 1,056: T = 4,000; full ceil(4,000 / 1,056) + 2 + 1 = 7;
    # state min(2 x 2 + 4,000 // 1,056 + 1, 7) = min(8, 7) = 7
    pages = app_data.page_assignment(analysis, requests=2, context=2000)
    assert pages.per_group == {"linear_attention": 7, "full_attention": 7}
    # each count holds its group's dummy page: 14 ids, none set apart besides
    assert pages.owners[:14].count("full_attention") == 7
    assert pages.owners[:14].count("linear_attention") == 7
    assert set(pages.owners[14:]) == {None} and len(pages.owners) == 775
    assert pages.fits and pages.max_requests is None  # counted only when it does not fit
    # proportional interleaving: ids alternate while both groups need the same count
    assert pages.owners[:4] == ("linear_attention", "full_attention") * 2
    big = app_data.page_assignment(analysis, requests=400, context=32768)
    # full: ceil(400 x 32,768 / 1,056) + 401 = 12,413 + 401 > 775 page ids
    assert not big.fits and len(big.owners) == 775
    # R = 12: T = 393,216, full ceil(T / 1,056) + 13 = 386, state min(24 + 372 + 1, 386) = 386,
    # 772 ids of 775; R = 13: full 404 + 14 = 418, twice that is 836: 12 fit
    assert big.max_requests == 12


def test_page_assignment_interleaves_unequal_groups_in_proportion():
    swa = CacheProfile(("sliding_attention", "full_attention") * 2, 1024, {}, 128, "swa")
    a = analyze(swa.components(), block_size=16, budget_bytes=10**8)
    pages = app_data.page_assignment(a, requests=3, context=4096, sliding_window=128)
    # SPEC 3.5, T = 12,288, P = 16, S = 8,192: full 768 + 3 + 1; sliding 3 x ceil(127 / 16)
    # + ceil(8,192 / 16) + 3 + 1
    assert pages.per_group == {"sliding_attention": 540, "full_attention": 772}
    # S = 512: the sliding group's scheduled pages fall from ceil(8,192 / 16) to ceil(512 / 16)
    fewer = app_data.page_assignment(a, requests=3, context=4096, sliding_window=128,
                                     scheduled_tokens=512)
    assert fewer.per_group == {"sliding_attention": 3 * 8 + 32 + 3 + 1, "full_attention": 772}
    handed = pages.owners[:540 + 772]
    assert handed.count("sliding_attention") == 540 and handed.count("full_attention") == 772
    # the k-th page of a group of n sits at (2k + 1) / 2n of the run: full at 1/1,544,
    # 3/1,544, 5/1,544, 7/1,544 (6.5, 19.4, 32.4, 45.3 per 10^4), sliding at 1/1,080, 3/1,080,
    # 5/1,080 (9.3, 27.8, 46.3 per 10^4); so F S F S F F S
    s, f = "sliding_attention", "full_attention"
    assert handed[:7] == (f, s, f, s, f, f, s)
    # every prefix of the run gives each group its share of the ids, give or take one
    for k in range(1, len(handed) + 1):
        sliding = handed[:k].count("sliding_attention")
        assert abs(sliding - k * 540 / (540 + 772)) <= 1, k


def test_page_assignment_lists_only_the_ids_it_shows(analysis):
    # 4,096 requests of 2^24 tokens need 10^8 pages per group: only the first ids are listed
    pages = app_data.page_assignment(analysis, requests=4096, context=1 << 24, limit=2048)
    full = -(-4096 * (1 << 24) // 1056) + 4096 + 1
    assert pages.per_group == {"linear_attention": full, "full_attention": full}
    assert len(pages.owners) == 775 and not pages.fits
    assert pages.owners[:6] == ("linear_attention", "full_attention") * 3
    # not one request fits: the page offers the longest context the map's requests fit at.
    # 4,096 fit at no length (400 of 1 token already need 402 + 402 ids): one request's, full
    # ceil(L / 1,056) + 2 and state min(3 + L // 1,056, that); at L = 385 x 1,056 both 387,
    # 774 ids; one token more 388 + 388
    assert pages.max_requests == 0 and pages.longest_context == 385 * 1056 == 406_560
    assert pages.longest_requests == 1
    # 4 requests: full ceil(4L / 1,056) + 5 and state min(9 + 4L // 1,056, that); at L = 382 x
    # 264 both 387; one token more 388 + 388
    four = app_data.page_assignment(analysis, requests=4, context=1 << 24, limit=2048)
    assert (four.longest_context, four.longest_requests) == (382 * 264, 4) == (100_848, 4)
    assert app_data.page_assignment(analysis, requests=4, context=100_848).fits
    assert not app_data.page_assignment(analysis, requests=4, context=100_849).fits


def test_the_two_longest_contexts_are_named_apart():
    # Layout's button counts the map's workload (SPEC 3.5), Budget's the concurrency (the
    # engine's pages a request): worded apart, each with the rule it counts by, and the other
    # page's figure for one request where that page draws the layout
    assert app_data.longest_context_label(375_024, "map") == (
        "Use the longest context whose pages fit (375,024 tokens)")
    assert app_data.longest_context_label(87_588, "map", 4) == (
        "Use the longest context 4 requests' pages fit (87,588 tokens)")
    assert app_data.longest_context_label(375_088, "concurrency") == (
        "Use the longest context at concurrency 1 (375,088 tokens)")
    by_map = ("the longest context at which the map's workload fits the page ids (SPEC 3.5, "
              "which adds a dummy page a group and a page a request for its last page and "
              "counts one step's tokens apart; state pages as the map counts them, by mamba "
              "cache mode or with a snapshot every P tokens)")
    by_concurrency = ("the longest context at which the concurrency reaches one request (the "
                      "engine's pages a request, SPEC 3.1, state pages by mamba cache mode)")
    assert {"map": by_map, "concurrency": by_concurrency} == app_data.LONGEST_BY
    assert app_data.longest_context_help("map", 375_088, 10_485_760) == (
        "T" + by_map[1:] + ". Budget counts " + by_concurrency
        + ", and offers 375,088 tokens by it for one request.")
    assert app_data.longest_context_help("concurrency", 375_024, 10_485_760) == (
        "T" + by_concurrency[1:] + ". Layout counts " + by_map
        + ", and offers 375,024 tokens by it for one request.")
    # the other page holds a request of the context itself (its count the smaller there)
    assert app_data.longest_context_help("concurrency", 10_485_760, 10_485_760).endswith(
        "and holds one request of 10,485,760 tokens by it.")
    assert app_data.longest_context_help("concurrency", None, 1000) == (
        "T" + by_concurrency[1:] + ".")


def test_live_pages_draw_the_default_or_as_many_as_fit(analysis):
    # 4 requests of 32,768 tokens (the default) fit 775 page ids? R = 12 fit (above): yes
    default = app_data.live_pages(analysis, None, 4, context=32768)
    assert (default.drawn, default.fitted, default.pages.fits) == (4, False, True)
    # 400 by default: cut to the 12 that fit, and drawn so
    cut = app_data.live_pages(analysis, None, 400, context=32768)
    assert (cut.drawn, cut.fitted) == (12, True) and cut.pages.fits
    assert cut.pages == app_data.page_assignment(analysis, requests=12, context=32768)
    # a number typed is drawn as it is, fitting or not
    typed = app_data.live_pages(analysis, 400, 4, context=32768)
    assert (typed.drawn, typed.fitted, typed.pages.fits) == (400, False, False)
    # where not one fits, one is drawn, not fitting
    none = app_data.live_pages(analysis, None, 4, context=1 << 24)
    assert (none.drawn, none.fitted, none.pages.fits) == (1, True, False)


def test_sweep_candidates():
    assert app_data.block_size_candidates(64) == [1 << k for k in range(13)]
    assert app_data.block_size_candidates(48) == [1, 2, 4, 8, 16, 32, 48, 64, 128, 256, 512,
                                                  1_024, 2_048, 4_096]
    # a tenth to twice 10**9 in 39 steps of (2 x 10**9 - 10**8) // 39 = 48,717,948 B (the last
    # 1,999,999,972, 28 B short of 2 x 10**9), and 10**9 itself between the 19th and the 20th
    b = app_data.budget_candidates(10**9)
    assert b == sorted({10**8 + i * 48_717_948 for i in range(40)} | {10**9})
    assert (len(b), b[18:21], b[-1]) == (41, [976_923_064, 10**9, 1_025_641_012], 1_999_999_972)
    # near the largest budget a plan takes (2**60 B) the sweep stops there, not at twice it:
    # from 9 x 10**16 in 39 steps of (2**60 - 9 x 10**16) // 39 = 27,254,397,554,021,717 B,
    # the last 1,152,921,504,606,846,963 = 2**60 - 13
    huge = app_data.budget_candidates(9 * 10**17)
    assert huge == sorted({9 * 10**16 + i * 27_254_397_554_021_717 for i in range(40)}
                          | {9 * 10**17})
    assert huge[-1] == 1_152_921_504_606_846_963 == 2**60 - 13
    # a least budget past twice this one: the sweep runs on to a quarter past it, with it in
    # (gpt-oss-20b at 10M tokens needs 458 GiB for one request beside an H100's 72 GiB)
    far = app_data.budget_candidates(10**9, reach=8 * 10**9)
    step = (10**10 - 10**8) // 39
    assert far == sorted({10**8 + i * step for i in range(40)} | {10**9, 8 * 10**9})
    # 39 steps of 9,900,000,000 // 39 = 253,846,153 B end 33 B short of 10**10
    assert far[-1] == 10**8 + 39 * step == 10**10 - 33
    # one inside the range is a point of it; one left of it takes the range down to a quarter
    # under it (gpt-oss-20b holds 1 request in 6.38 GiB of an H100's 71.68)
    assert app_data.budget_candidates(10**9, reach=5 * 10**8) == sorted({*b, 5 * 10**8})
    low = app_data.budget_candidates(10**9, reach=4 * 10**7)
    step = (2 * 10**9 - 3 * 10**7) // 39
    assert low == sorted({3 * 10**7 + i * step for i in range(40)} | {10**9, 4 * 10**7})


def test_context_sweep_rows_give_a_dash_where_a_layout_has_no_figure():
    from flatkv.app_model import profile_for
    from flatkv.sizing import context_curves
    from flatkv.strategies import StrategyOptions

    # Qwen3-Next at 55,679,338,086 B: SGLang's 340 request slots // 5 a request (its
    # extra_buffer radix cache) = 68 running at 1,024 tokens, its 1,193,494 KV tokens over
    # 262,144 (test_sizing derives both)
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 1)
    curves = context_curves(qwen, 55_679_338_086, [1024, 262_144], StrategyOptions(), ["sglang"])
    rows = app_data.context_sweep_rows(curves)
    assert 340 // 5 == 68
    assert rows[0] == {"context (tokens)": 1024, "SGLang": 68.0}
    assert rows[-1] == {"context (tokens)": 262_144, "SGLang": 4.55}  # 1,193,494 / 262,144
    # a layout without a figure at a length is None in its row (the page shows a dash):
    # Llama-3.1-8B's 76,288 tokens in 10 GB hold no request of 131,072 in vLLM
    llama = profile_for("Llama-3.1-8B", None, 1)
    llama_rows = app_data.context_sweep_rows(context_curves(
        llama, 10**10, [65_536, 131_072], StrategyOptions(), ["vllm"]))
    assert [r["vLLM v1"] for r in llama_rows] == [round(4768 / 4096, 2), None]


def test_context_chart_text_names_what_caps_each_engines_line():
    from flatkv.app_model import profile_for
    from flatkv.sizing import context_curves
    from flatkv.strategies import STRATEGIES, StrategyOptions, compare

    # Qwen3-Next at 55,679,338,086 B: SGLang's 341 state slots, one padding, 5 a request
    # (Qwen3NextForCausalLM's extra_buffer radix cache; test_sizing derives them)
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 1)
    results = compare(qwen, budget_bytes=55_679_338_086, context_tokens=262_144)
    curves = context_curves(qwen, 55_679_338_086, [1024, 262_144], StrategyOptions(),
                            STRATEGIES)
    text = app_data.context_chart_text(curves, 262_144, results)
    assert text.startswith("Each point is the concurrency of the table at the top, at this "
                           "budget, with that context length in place of 262,144 tokens;")
    assert text.endswith(" vLLM's line is its log's Maximum concurrency, from its KV blocks "
                         "alone: its --max-num-seqs caps the requests it runs too. SGLang's "
                         "line is flat where its state pool binds: 68 running requests (340 "
                         "request slots, 5 a request) whatever their length, its "
                         "max_running_requests.")
    # Qwen3-Next at 40 GiB (test_strategies: 263 slots untold, 52 a cap; drafting 3 tokens,
    # 144 slots, 28): told --max-running-requests 20, SGLang logs 20 but its pools stay, so
    # the line stays at 52 and the text no longer calls 52 its max_running_requests; drafting,
    # its buffers are reserved for 20 + 1 requests and the line is flat at 20, which it said
    # was 28
    def sglang_line(**told):
        options = StrategyOptions(sglang_max_running_requests=20, **told)
        curves = context_curves(qwen, 40 << 30, [1024, 4096], options, ["sglang"])
        said = app_data.context_chart_text(
            curves, 4096, compare(qwen, budget_bytes=40 << 30, context_tokens=4096,
                                  options=options))
        return curves.concurrency["sglang"], said[said.index(" SGLang's line"):]

    assert sglang_line() == ([52, 52], (
        " SGLang's line is flat where its state pool binds: 52 running requests (262 request "
        "slots, 5 a request) whatever their length; it logs max_running_requests=20, a cap on "
        "the requests it runs that leaves its pools as they are."))
    assert sglang_line(speculative_tokens=3) == ([20, 20], (
        " SGLang's line is flat at 20 running requests whatever their length: its "
        "max_running_requests, the requests it reserves draft-token buffers for (its 143 "
        "request slots, 5 a request, would hold 28)."))
    # no state: no cap to name; no vLLM line: nothing to say of it
    llama = profile_for("Llama-3.1-8B", None, 1)
    plain = app_data.context_chart_text(
        context_curves(llama, 10**10, [1024], StrategyOptions(), ["flat", "sglang"]), 1024,
        compare(llama, budget_bytes=10**10, context_tokens=1024))
    assert plain.endswith("Lines that coincide draw as one.")


def test_exports(analysis):
    data = json.loads(plan_json(analysis, QWEN35.name))
    assert data["geometry"] == {"block_size": 1056, "block_bytes": 103_219_200,
                                "num_blocks": 775}
    lines = list(csv.DictReader(io.StringIO(app_data.bindings_csv(analysis))))
    assert len(lines) == 84
    assert lines[2] == {"tensor": "flat_slab_0", "slot": "0", "group_id": "full_attention",
                        "layer": "0", "component": "kv", "offset": str(STATE_ROW),
                        "row_offset": "0", "nbytes_per_block": str(KV_ROW),
                        "tensor_nbytes": str(775 * (KV_ROW + STATE_ROW))}
    assert app_data.rows_csv([{"a": 1, "b": 2}]) == "a,b\n1,2\n"


def test_sliding_layers_explain_why_one_request_outruns_the_capacity():
    from flatkv.app_model import profile_for

    gpt = profile_for("gpt-oss-20b", None, 1)
    assert strategy_notes.sliding_capacity_text(gpt) == (
        "Sliding-window layers: capacity counts their pages like full history (no window "
        "eviction, as older vLLM logs count them). A request "
        "keeps only its window of "
        "128 tokens there, so one request can run longer than the capacity; concurrency counts "
        "that.")
    assert strategy_notes.sliding_capacity_text(profile_for("Qwen3-Next-80B-A3B", None, 1)) == ""
    assert strategy_notes.sliding_capacity_text(profile_for("Llama-4-Scout-17B-16E", None, 1)) == (
        "Chunked layers: capacity counts their pages like full history (no window eviction, as "
        "older vLLM logs count them). A request keeps only its chunk of 8,192 tokens there, so "
        "one request can run longer than the capacity; concurrency counts that.")
    # the layout chart colours a chunked layer's KV apart from full and sliding KV
    assert [app_data.component_kind(g, "kv") for g in (
        "full_attention", "sliding_attention", "chunked_attention")] == [
        "kv", "kv_sliding", "kv_chunked"]


def test_inflation_bars_show_why_the_state_row_inflates_p(analysis):
    # the worked example: at the requested P = 64 a KV row is 2,048 x 64 = 131,072 B, the
    # state row 2,146,304 B; P = 1,056 makes the KV row 2,162,688 B, which covers it
    bars = app_data.inflation_bars(analysis)
    assert [(b.nbytes, b.kind) for b in bars] == [(2048 * 64, "kv"), (STATE_ROW, "ssm"),
                                                  (KV_ROW, "kv")]
    assert [b.label for b in bars] == ["KV row at the requested P = 64",
                                       "state row (the same at any P)", "KV row at P = 1,056"]
    # a requested P that already covers the state row is not inflated: nothing to draw
    wide = analyze(QWEN35.components(), block_size=2048, alignment=16, budget_bytes=80 * 10**9)
    assert app_data.inflation_bars(wide) == []


def test_budget_curves_by_hand():

    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions

    # Qwen3-Next TP 2 under vLLM at 44.59 GiB (SPEC 3.1: P 544, 7,162 blocks at block size 16)
    qwen, budget = profile_for("Qwen3-Next-80B-A3B", None, 2), 47_878_147_932
    options = StrategyOptions(block_size=16)
    curves = app_data.curves(qwen, "vllm", budget, 262_144, options)
    # from a tenth of the budget to twice it in 39 even steps, the budget itself among them
    lo, step = budget // 10, (2 * budget - budget // 10) // 39
    assert curves.budgets == sorted({lo + i * step for i in range(40)} | {budget})
    # 47,878,147,932 // 10; 39 steps of (95,756,295,864 - 4,787,814,793) // 39 =
    # 2,332,525,155 B end 26 B short of twice the budget
    assert (curves.budgets[0], curves.budgets[-1], len(curves.budgets)) == (
        4_787_814_793, 4_787_814_793 + 39 * 2_332_525_155, 41) == (
        4_787_814_793, 2 * budget - 26, 41)
    assert curves.block_sizes == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    here = curves.by_budget[curves.budgets.index(budget)]
    assert here == curves.by_block_size[curves.block_sizes.index(16)]
    assert here.block_size == 544
    # 12 full + 36 GDN layers: 3 state groups; (7,162 - 3 state pages) x 544 tokens; a request
    # of 262,144 tokens takes cdiv(262,144, 544) = 482 pages + 3 state pages: 7,162 / 485
    assert here == app_data.CurvePoint(3_894_496, 7162 / 485, 544)
    # block size 4,096: page 4,096 x 1,024 B = 4,194,304 B > the 548,864 B state; 12 layers a
    # block: 47,878,147,932 // 4,194,304 // 12 = 951 blocks, (951 - 3) x 4,096 tokens, 951 / 67
    assert curves.by_block_size[-1] == app_data.CurvePoint(3_883_008, 951 / 67, 4096)
    # 15 requests need 15 x 485 = 7,275 blocks of 12 tensors x 544 x 1,024 B = 6,684,672 B:
    # 48,630,988,800 B, inside twice the budget: a point of the sweep, marked at 15 requests
    need = 7275 * 12 * 544 * 1024
    reaching = app_data.curves(qwen, "vllm", budget, 262_144, options, need)
    assert reaching.budgets == sorted({*curves.budgets, need})
    assert app_data.budget_target(reaching, need, 15) == (
        48_630_988_800 / 2**30, 15.0, "least budget for 15 requests")
    assert app_data.budget_target(curves, need, 15) is None  # not swept: not marked
    assert app_data.budget_target(reaching, None, 15) is None  # nothing holds them
    rows = app_data.block_size_sweep_rows(curves, True)
    assert rows[-1] == {"block size (tokens)": 4096, "P (tokens)": 4096,
                        "capacity (tokens)": 3_883_008, "concurrency": 14.19}
    assert "capacity (tokens)" not in app_data.block_size_sweep_rows(curves, False)[0]
    # nothing fits a tenth of a tiny budget: no figure (a gap in the chart and the table),
    # not a zero that reads as one, and not an error
    tiny = app_data.curves(qwen, "vllm", 10**6, 262_144, options)
    assert tiny.by_budget[0] == app_data.CurvePoint(None, None, None)
    tiny_rows = app_data.block_size_sweep_rows(tiny, True)
    assert tiny_rows[0] == {"block size (tokens)": tiny.block_sizes[0], "P (tokens)": None,
                            "capacity (tokens)": None, "concurrency": None}


def test_block_size_gaps_say_which_sizes_have_no_figure_and_why():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions

    # gpt-oss-20b under vLLM on the H100 at 0.9: its attention backend pages by 16, so the
    # sweep's 1, 2, 4 and 8 have no figure; from 16 on every size has one
    gpt = profile_for("gpt-oss-20b", None, 1)
    curves = app_data.curves(gpt, "vllm", 76_968_728_985, 131_072, StrategyOptions(block_size=16))
    assert [p.concurrency is None for p in curves.by_block_size] == [True] * 4 + [False] * 9
    assert [bool(p.why_not) for p in curves.by_block_size] == [True] * 4 + [False] * 9
    assert app_data.block_size_gaps_text(curves) == (
        "No figure at block sizes 1 to 8 (the table's —). At 8: **vLLM v1** refuses to start: "
        "its attention backend pages by multiples of 16 tokens, and block size 8 is none (\"No "
        "valid attention backend found ... block_size not supported\"): give 16.")
    # Llama-3.1-8B (32 layers of 8 KV heads x (128 + 128) x 2 B = 4,096 B a token) in 512 MiB
    # at 262,144 tokens: no size has a figure, for three reasons, each run said apart (one run
    # "1 to 4,096" gave 4,096's reason alone, as if the backend took 1 to 8): 1 to 8 the
    # backend's pages; 16 to 2,048 the request, 262,144 x 4,096 x 32 = 34,359,738,368 B, more
    # than the budget (2,048's blocks, 512 MiB // (2,048 x 4,096) // 32 = 2, are enough); at
    # 4,096 a block of 4,096 x 4,096 B a layer leaves 1, and vLLM needs 2
    llama = profile_for("Llama-3.1-8B", None, 1)
    small = app_data.curves(llama, "vllm", 2**29, 262_144, StrategyOptions(block_size=16))
    assert all(p.why_not for p in small.by_block_size)
    assert (262_144 * 4_096 * 32, 2**29 // (2_048 * 4_096) // 32, 2**29 // 4_096**2 // 32) == (
        34_359_738_368, 2, 1)
    text = app_data.block_size_gaps_text(small)
    assert text.startswith(
        "No figure at block sizes 1 to 8, 16 to 2,048 and 4,096 (the table's —). At 8: "
        "**vLLM v1** refuses to start: its attention backend pages by multiples of 16 tokens")
    assert ("At 2,048: **vLLM v1** refuses to start: one request of 262,144 tokens needs "
            "34,359,738,368 B of KV cache") in text
    assert ("At 4,096: **vLLM v1** refuses to start: the budget of 536,870,912 B holds "
            "num_blocks = 536,870,912 // 16,777,216 // 32 = 1 and vLLM needs at least 2") in text
    # a point's reason is not part of its figures: equal points stay equal
    assert app_data.CurvePoint(None, None, None, "a") == app_data.CurvePoint(None, None, None)
    # our planner plans every size: nothing to say
    flat = app_data.curves(gpt, "flat", 76_968_728_985, 131_072, StrategyOptions(block_size=16))
    assert app_data.block_size_gaps_text(flat) == ""


def test_sglang_idle_split_says_what_its_static_pools_leave_idle_at_the_context():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy

    # Qwen3-Next at TP 2 with 55,679,338,086 B: 682 state slots of 38,633,472 B (one pads) and
    # 2,386,988 kv tokens of 12,288 B; the kv tokens bind: 18 requests of 131,072 run (5 slots
    # each, Qwen3NextForCausalLM's extra_buffer radix cache), so 681 - 90 = 591 slots sit idle
    # (the kv pool's 2,386,988 - 18 x 131,072 = 27,692 tokens left are less than a request,
    # which any layout may leave)
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    r = run_strategy("sglang", qwen, budget_bytes=55_679_338_086, context_tokens=131_072)
    assert (r.extras["state_slots"], r.extras["state_slot_bytes"]) == (682, 38_633_472)
    assert r.extras["kv_tokens"] == 2_386_988 and int(r.concurrency) == 18
    assert r.extras["binding_limit"] == "kv tokens"
    idle = (681 - 18 * 5) * 38_633_472
    assert idle == 22_832_381_952 and f"{idle / 55_679_338_086:.2%}" == "41.01%"
    # its math names the state taken out (the 682 slots less the 591 idle: 90 in use and the
    # padding slot), and no kv term, none of it idle
    assert (f"state = {682 * 38_633_472:,} - state idle {idle:,} = {91 * 38_633_472:,}"
            in r.formulas) and not any("kv idle" in f for f in r.formulas)
    assert app_data.sglang_idle_split_text(r) == (
        "SGLang's idle pool: with 18 requests of 131,072 tokens running, "
        "21.26 GiB of its state pool sit idle (41.01% of the budget), left so by its static "
        "split; a paged layout's idle rows are its dead weight.")
    # gpt-oss-20b's sliding pool beside the full one: in 10 GB at 131,072 tokens the full
    # pool binds (226,056 tokens: 1 request); the sliding pool's 180,844 tokens keep
    # min(128 - 1 + 8,192, L) = 8,319 of them a request, the rest idle
    gpt = profile_for("gpt-oss-20b", None, 1)
    pools = run_strategy("sglang", gpt, budget_bytes=10 * 10**9, context_tokens=131_072)
    assert (pools.extras["kv_tokens"], pools.extras["swa_tokens"]) == (226_056, 180_844)
    assert pools.extras["binding_limit"] == "kv tokens" and int(pools.concurrency) == 1
    # 172,525 tokens x 2,048 B x 12 sliding layers = 4,239,974,400 B (3.95 GiB, 42.40%)
    idle_swa = (180_844 - 8_319) * 2_048 * 12
    assert pools.extras["idle_swa_bytes_at_context"] == idle_swa == 4_239_974_400
    assert app_data.sglang_idle_split_text(pools) == (
        "SGLang's idle pool: with 1 request of 131,072 tokens running, "
        "3.95 GiB of its sliding pool (172,525 tokens) sit idle (42.40% of the budget), left "
        "so by its static split; a paged layout's idle rows are its dead weight.")
    # Budget's note under the capacity names the sliding pool, and leaves its idle to this
    assert (strategy_notes.capacity_note(pools, gpt)
            == strategy_notes.sglang_sliding_pool_text(pools, gpt))
    assert "idle" not in strategy_notes.capacity_note(pools, gpt)
    # Gemma 3n E4B-shaped (35 layers, the last 15 reading earlier layers' KV), one pool: the
    # shared layers' pool layers are idle at any request count, 8 GiB // 71,680 = 119,837
    # tokens x 15 x 2,048 B = 3,681,392,640 B (3.43 GiB, 42.86%)
    from flatkv.hf_config import spec_from_hf_config
    gemma3n = spec_from_hf_config({
        "model_type": "gemma3n_text", "num_hidden_layers": 35, "num_kv_shared_layers": 15,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
        "hidden_size": 2048, "sliding_window": 512}).profile()
    shared = run_strategy("sglang", gemma3n, budget_bytes=8 * 2**30, context_tokens=32_768)
    assert shared.extras["kv_shared_pool_bytes"] == 119_837 * 15 * 2_048 == 3_681_392_640
    assert app_data.sglang_idle_split_text(shared) == (
        "SGLang keeps a pool layer for each kv-shared layer and never writes it: 3.43 GiB "
        "(42.86% of the budget) sit idle at any request count.")
    # one pool, another layout, or no request running: nothing to say
    llama = profile_for("Llama-3.1-8B", None, 1)
    assert app_data.sglang_idle_split_text(
        run_strategy("sglang", llama, budget_bytes=10**10, context_tokens=4096)) == ""
    assert app_data.sglang_idle_split_text(
        run_strategy("vllm", qwen, budget_bytes=55_679_338_086, context_tokens=131_072)) == ""


def test_sglang_two_pools_are_named_only_for_sglang_with_its_sliding_pool():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    gpt = profile_for("gpt-oss-20b", None, 1)
    pools = run_strategy("sglang", gpt, budget_bytes=10 * 10**9)
    assert strategy_notes.sglang_sliding_pool_text(pools, gpt) == (
        "SGLang: capacity is the full-attention token pool; the sliding-window layers have a "
        f"pool of their own, {pools.extras['swa_tokens']:,} tokens (sliding / full tokens ratio "
        "in the layout options).")
    assert pools.extras["swa_tokens"] == 180_844  # 226,056 full tokens x 0.8, floored
    one_pool = run_strategy("sglang", gpt, budget_bytes=10 * 10**9,
                            options=StrategyOptions(sglang_swa_pool=False))
    assert strategy_notes.sglang_sliding_pool_text(one_pool, gpt) == ""
    assert strategy_notes.sglang_sliding_pool_text(run_strategy("vllm", gpt, budget_bytes=10**10),
                                             gpt) == ""
    # Llama 4's chunked layers ride SGLang's sliding pool, and are named for what they are
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    chunked = run_strategy("sglang", scout, budget_bytes=10 * 10**9)
    assert strategy_notes.sglang_sliding_pool_text(chunked, scout) == (
        "SGLang: capacity is the full-attention token pool; the chunked layers have a pool of "
        f"their own, {chunked.extras['swa_tokens']:,} tokens (sliding / full tokens ratio in "
        "the layout options).")
    # at a context, 47,870 // 16,384 = 2 requests (the chunked pool binds) hold 2 x min(8,192
    # + 8,192, L) chunked tokens: its remainder, less than a request, is no split's idle, so
    # the idle text names the KV pool's alone
    at_context = run_strategy("sglang", scout, budget_bytes=10 * 10**9, context_tokens=16_384)
    assert at_context.extras["binding_limit"] == "swa tokens"
    assert "sliding pool" not in app_data.sglang_idle_split_text(at_context)
    pool_text = strategy_notes.sglang_sliding_pool_text
    assert pool_text(at_context, scout) == pool_text(chunked, scout)
    # 10**10 x 5 // ((5 x 12 + 4 x 36) x 4,096) = 59,838 full tokens, x 0.8
    assert chunked.extras["swa_tokens"] == int(59_838 * 0.8) == 47_870
    assert strategy_notes.sglang_pools_text(scout, StrategyOptions()).startswith(
        "SGLang keeps the chunked layers in a token pool of their own: "
        "Llama4ForConditionalGeneration is on SGLang\\'s hybrid SWA list.")  # Markdown-escaped


def test_workload_text_gives_both_state_counts_where_they_differ():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy

    # SPEC's anchor: Qwen3-Next TP 2 in 44.59 GiB, P 544, 1,810 page ids; 3 requests of 262,144
    # tokens (T = 786,432): full ceil(T / 544) + 3 + 1 = 1,450; state min(2 x 3 + T // 544 + 1,
    # 1,450) = 1,450; 2,900 > 1,810. One request: 484 + 484 fits; two: 967 + 967 do not.
    qwen, budget = profile_for("Qwen3-Next-80B-A3B", None, 2), 47_878_147_932
    a = analyze(qwen.components(), block_size=16, alignment=None, budget_bytes=budget)
    pages = app_data.page_assignment(a, requests=3, context=262_144, sliding_window=None,
                                     scheduled_tokens=8192, limit=2048)
    # the engine's count: 482 full pages + 1 state page a request, 1,810 / 483 = 3.75
    flat = run_strategy("flat", qwen, budget_bytes=budget, context_tokens=262_144)
    assert flat.max_concurrency == pytest.approx(1810 / 483)
    text = app_data.workload_text(pages, qwen, context=262_144, mamba_cache_mode="none",
                                  concurrency=flat.max_concurrency)
    assert text == (
        "This workload with its state snapshots does not fit in this budget: it holds at "
        "most 1 request of 262,144 tokens (Budget's and Compare's 3.75 count the state pages "
        "as the engine's log does: the last paragraph here); "
        "lower the live requests or the context length.\n\n"
        "Pages the groups need (history, live state and snapshots, one dummy page "
        f"each): {STATE_KIND}: 1,450, full attention: 1,450; 1,810 page ids in the "
        "pool. "
        "A full-history group's count is all requests' tokens over P, rounded up, and a page "
        "more a request for its last page (SPEC 3.5): part-filled, or, where its context "
        "fills its pages exactly, a new one for its next step's token.\n\n"
        "State is charged as with state prefix caching: two live pages per request plus a "
        "snapshot every P tokens (at most the full-history group's count). Budget and Compare "
        "count the state pages of mamba cache mode none (1 state page) per request, as the "
        "engine's log does, and hold 3.75 requests of "
        "262,144 tokens: \"State pages\" above draws that count.")
    drafting = app_data.workload_text(pages, qwen, context=262_144, mamba_cache_mode="align",
                                      concurrency=flat.max_concurrency, speculative_tokens=2)
    assert ("Budget and Compare count the state pages of mamba cache mode align (2 state pages) "
            "and 2 more for drafted tokens per request, as the engine's log does") in drafting


def test_a_context_filling_its_pages_exactly_still_counts_a_page_more_a_request():
    from flatkv.app_model import profile_for

    # gpt-oss-20b, 4 requests of 131,072 = 8,192 x 16 tokens at P 16: no request's last page
    # is part-filled, yet SPEC 3.5 counts ceil(524,288 / 16) + 4 + 1 = 32,773 full pages, not
    # 32,769: each request's next step's token needs a new page. The text says so, not only
    # "part-filled" (it said only that).
    oss = profile_for("gpt-oss-20b", None, 1)
    a = analyze(oss.components(), block_size=16, alignment=None, budget_bytes=10**11)
    pages = app_data.page_assignment(a, requests=4, context=131_072, sliding_window=128,
                                     limit=2048)
    assert pages.per_group["full_attention"] == 4 * 131_072 // 16 + 4 + 1 == 32_773
    text = app_data.workload_text(pages, oss, context=131_072, mamba_cache_mode="none",
                                  concurrency=None)
    assert ("rounded up, and a page more a request for its last page (SPEC 3.5): part-filled, "
            "or, where its context fills its pages exactly, a new one for its next step's "
            "token; a sliding group's") in text


def test_workload_text_says_why_a_sliding_workload_holds_more_than_the_concurrency():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy

    # gpt-oss-20b (12 sliding layers of window 128, 12 full; 2,048 B a token a layer) in the
    # default H100's 76,968,728,985 B at P 16: a page id holds 12 x 2,048 x 16 x 2 B (both
    # groups' rows, one page-id space) = 786,432 B, 97,870 of them. vLLM's "Maximum
    # concurrency" charges a request of 8,192 tokens 512 full pages and cdiv(min(127 + 8,192,
    # 8,192), 16) + 1 = 513 sliding: 97,870 / 1,025 = 95.48. The workload (SPEC 3.5) charges R
    # requests 8R + 512 + R + 1 sliding and 512R + R + 1 full pages: 522R + 514 <= 97,870 for
    # R <= 186, so the workload of 4,096 requests says it holds at most 186.
    oss, budget = profile_for("gpt-oss-20b", None, 1), 76_968_728_985
    a = analyze(oss.components(), block_size=16, alignment=None, budget_bytes=budget)
    flat = run_strategy("flat", oss, budget_bytes=budget, context_tokens=8_192)
    assert flat.max_concurrency == pytest.approx(97_870 / 1_025)
    pages = app_data.page_assignment(a, requests=4_096, context=8_192, sliding_window=128,
                                     scheduled_tokens=8_192, limit=2048)
    assert pages.num_blocks == budget // 786_432 == 97_870
    assert pages.max_requests == (97_870 - 514) // 522 == 186
    text = app_data.workload_text(pages, oss, context=8_192, mamba_cache_mode="none",
                                  concurrency=flat.max_concurrency, scheduled_tokens=8_192)
    assert text.startswith(
        "This workload does not fit in this budget: it holds at most 186 requests of 8,192 "
        "tokens (Budget's and Compare's 95.48 count a step in every window as the engine's log "
        "does: the last paragraph here); lower the live requests or the context length.")
    assert text.endswith(
        "The 95.48 requests at the top of the page (and on Budget and Compare) count as vLLM's "
        "\"Maximum concurrency\" does: each request is charged its window of 128 tokens plus a "
        "whole step of 8,192 scheduled tokens (at most its context), as though every request "
        "were in its prefill step at once. This workload charges the step's tokens once, for "
        "all requests together, so it can hold more requests.")
    # drawn: 150 requests, more than 95.48, say why; 95, fewer, need not
    for drawn, said in ((150, True), (95, False)):
        fits = app_data.page_assignment(a, requests=drawn, context=8_192, sliding_window=128,
                                        scheduled_tokens=8_192, limit=2048)
        assert fits.fits
        text = app_data.workload_text(fits, oss, context=8_192, mamba_cache_mode="none",
                                      concurrency=flat.max_concurrency, requests=drawn)
        assert ("Maximum concurrency" in text) is said
    # a model without windows keeps the text it had: no such paragraph
    llama = profile_for("Llama-3.1-8B", None, 1)
    b = analyze(llama.components(), block_size=16, alignment=None, budget_bytes=budget)
    plain = app_data.workload_text(
        app_data.page_assignment(b, requests=4, context=8_192, limit=2048), llama,
        context=8_192, mamba_cache_mode="none", concurrency=10.0)
    assert plain.startswith("Pages the groups need") and "\n\n" not in plain
    # and only a windowed model's says how a sliding group counts its pages (Llama's, as
    # Qwen3-Next's above, has no sliding group to count)
    assert plain.endswith("a page more a request for its last page (SPEC 3.5): part-filled, "
                          "or, where its context fills its pages exactly, a new one for its "
                          "next step's token.")
    assert text.count("a sliding group's, each request's window pages and one step's tokens")


def test_workload_text_names_a_chunked_group_by_its_chunk():
    from flatkv.app_model import profile_for

    # Llama-4-Scout's chunked layers (chunk 8,192) count as a sliding group does (SPEC 3.5,
    # W the chunk): one request of 32,768 tokens at P 16 with 8,192 scheduled tokens keeps
    # ceil(8,191 / 16) + ceil(8,192 / 16) + 1 + 1 = 1,026 chunked pages and 32,768 / 16 + 1 +
    # 1 = 2,050 full ones; the text names the group "chunked" and its span a chunk, not a
    # sliding group's window (it said so of Llama 4's too)
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    a = analyze(scout.components(), block_size=16, alignment=None, budget_bytes=10**10)
    pages = app_data.page_assignment(a, requests=1, context=32_768, attention_chunk_size=8_192,
                                     scheduled_tokens=8_192, limit=2048)
    assert dict(pages.per_group) == {"chunked_attention": 1_026, "full_attention": 2_050}
    text = app_data.workload_text(pages, scout, context=32_768, mamba_cache_mode="none",
                                  concurrency=None, scheduled_tokens=8_192)
    assert text.endswith("where its context fills its pages exactly, a new one for its next "
                         "step's token; a chunked group's, each request's chunk pages and one "
                         "step's tokens.")
    assert "sliding" not in text


# vLLM's blocks on the Layout page (SPEC 3.1): the worked example's P and page, by hand.
# A = 16; P = 16 x cdiv(2,146,304, 16 x 2,048) = 16 x 66 = 1,056; page = max(1,056 x 2,048,
# 2,146,304) = 2,162,688, the state page padded by 16,384 B; group_size 12 (12 full, 36
# linear): 4 groups, a block id = 12 pages = 25,952,256 B.
VLLM_PAGE = 2_162_688


def _rows(segments):
    rows: dict[str, list] = {}
    for s in segments:
        rows.setdefault(s.slot_name, []).append(s)
    return rows


def test_vllm_blocks_of_the_worked_example_one_row_per_group():
    result = vllm_at_80gb(QWEN35)
    assert (result.block_size, result.block_bytes) == (1056, 12 * VLLM_PAGE) == (1056, 25_952_256)
    rows = _rows(app_data.vllm_block_segments(result, QWEN35))
    # in vLLM's order: each type's groups where its first layer comes (layer 0 is linear);
    # named by kind as Layout names its groups, a kind's several groups by index (they read
    # "linear_attention.0" ... "full_attention", the result's ids, which its JSON keeps)
    assert list(rows) == ["state 0", "state 1", "state 2", "full attention"]
    assert [g["name"] for g in result.extras["groups"]] == [
        "linear_attention.0", "linear_attention.1", "linear_attention.2", "full_attention"]
    for segs in rows.values():
        assert sum(s.nbytes for s in segs) == 25_952_256
        assert segs[-1].end == 25_952_256  # drawn end to end, no gap
    full = rows["full attention"]
    assert [(s.kind, s.offset, s.nbytes) for s in full[:2]] == [
        ("kv", 0, VLLM_PAGE), ("kv", VLLM_PAGE, VLLM_PAGE)]  # 1,056 x 2,048: no padding
    # tensor j's page of state group 1 holds the type's layer 1 + 3j: conv, ssm, padding
    linear = rows["state 1"]
    assert [(s.component, s.offset, s.nbytes) for s in linear[3:6]] == [
        ("conv", VLLM_PAGE, 49_152), ("ssm", VLLM_PAGE + 49_152, 2_097_152),
        ("padding", VLLM_PAGE + STATE_ROW, 16_384)]
    assert linear[3].holder == "state #4 (cache layer 5)"  # cache layers 0,1,2,4,5
    assert full[4].holder == "full attention #4 (cache layer 19)"  # every 4th: 3, 7, ..., 19
    text = app_data.vllm_block_text(result, QWEN35, analyze(QWEN35.components(), block_size=16,
                                                    alignment=16, budget_bytes=80 * 10**9))
    assert text == (
        "vLLM at these settings (Compare's row): P 1,056, pages of 2,162,688 B in 12 tensors "
        "(group_size). A block id is 12 pages, 25,952,256 B (24.75 MiB, 24,576 B a token), and "
        "belongs to one of 4 groups: tensor j's page holds that group's layer j, so no other "
        "group's rows sit beside it (no dead weight). State pages (2,146,304 B) are padded to "
        "the page by 0.76% of their size (\"Padding mamba page size\"). Our block above: "
        "103,219,200 B (98.44 MiB, 97,745.45 B a token) at P 1,056, a row for every group.")
    # a token of P: 12 pages x 2,048 B a token; ours 103,219,200 / 1,056 = 97,745.4545...
    assert 25_952_256 // 1056 == 12 * 2048 and f"{103_219_200 / 1056:,.2f}" == "97,745.45"


def test_vllm_blocks_keep_whole_pages_for_padding_layers():
    # LFM2-1.2B's pattern: 10 short-conv layers, 6 full; group_size 6 (2 x 10 >= 3 x 6), so the
    # conv layers make 2 groups of 5 and each keeps one padding page. P = 16 x cdiv(8,192,
    # 16 x 2,048) = 16; page = max(16 x 2,048, 8,192) = 32,768: conv 8,192 + 24,576 padding
    kinds = {"c": "linear_attention", "f": "full_attention"}
    layers = tuple(kinds[k] for k in "ccfccfccfcfcfcfc")
    profile = CacheProfile(layers, 2048, {"conv": 8192})
    result = vllm_at_80gb(profile)
    assert (result.block_size, result.extras["group_size"], result.block_bytes) == (
        16, 6, 6 * 32_768)
    rows = _rows(app_data.vllm_block_segments(result, profile))
    conv = rows["state 0"]
    assert [(s.kind, s.nbytes) for s in conv[:2]] == [("conv", 8192), ("padding", 24_576)]
    assert (conv[-1].kind, conv[-1].component, conv[-1].offset, conv[-1].nbytes,
            conv[-1].layer) == ("padding_layer", "its whole page", 5 * 32_768, 32_768, None)
    assert conv[-1].holder == "a padding layer of state"
    assert [s.cache_layer for s in conv if s.kind == "conv"] == [0, 3, 6, 9, 13]
    assert "(state: 2 padding layers)" in app_data.vllm_block_text(
        result, profile, analyze(profile.components(), block_size=16, alignment=16,
                        budget_bytes=80 * 10**9))


def test_vllm_blocks_without_the_hybrid_manager_draw_windowed_layers_as_full():
    # the sliding layers are allocated as full attention, all 8 layers in one group: 8 pages
    # of 16 x 1,024 B, cache layers in model order
    profile = CacheProfile(("sliding_attention", "full_attention") * 4, 1024, {},
                           sliding_window=128)
    (row,) = _rows(app_data.vllm_block_segments(
        vllm_at_80gb(profile, vllm_hybrid_manager=False), profile)).values()
    assert [(s.kind, s.nbytes, s.cache_layer) for s in row] == [
        ("kv", 16_384, i) for i in range(8)]
    assert row[5].holder == "full attention #5 (cache layer 5)"
    hybrid = _rows(app_data.vllm_block_segments(vllm_at_80gb(profile), profile))
    assert [s.kind for s in hybrid["sliding attention"]] == ["kv_sliding"] * 4


def test_vllm_blocks_draw_the_drafted_conv_rows_vllm_keeps():
    # Qwen3-Next with 2 speculative tokens: conv 8,192 channels x (3 + 2) rows x 2 B = 81,920;
    # vLLM sizes its P with them: 16 x cdiv(81,920 + 1,048,576, 32,768) = 560, page 1,146,880
    profile = load_preset("Qwen3-Next-80B-A3B").profile()
    result = vllm_at_80gb(profile, speculative_tokens=2)
    assert (result.block_size, result.extras["page_bytes"]) == (560, 1_146_880)
    linear = _rows(app_data.vllm_block_segments(result, profile))["state 0"]
    assert [(s.component, s.nbytes) for s in linear[:3]] == [
        ("conv", 81_920), ("ssm", 1_048_576), ("padding", 16_384)]


def test_vllm_blocks_draw_deepseek_v32s_indexer_keys_beside_its_latent():
    # one group of 61 layers at P 64 (FlashMLA sparse): a page of 64 x 1,152 B of latent KV and
    # 64 x 132 B of indexer keys, which vLLM caches in a tensor of their own
    from flatkv.presets import load_preset
    profile = load_preset("DeepSeek-V3.2").profile()
    result = vllm_at_80gb(profile)
    (row,) = _rows(app_data.vllm_block_segments(result, profile)).values()
    # (the latent's kind kv_mla: full attention's KV, named as MLA's latent)
    assert [(s.kind, s.component, s.offset, s.nbytes) for s in row[:3]] == [
        ("kv_mla", "kv", 0, 64 * 1_152), ("indexer", "indexer keys", 73_728, 64 * 132),
        ("kv_mla", "kv", 82_176, 73_728)]
    assert len(row) == 2 * 61 and result.block_bytes == 61 * 82_176


def test_vllm_block_text_quotes_the_padding_vllm_logs_and_the_state_its_layers_keep():
    # LFM2-1.2B with 2 drafted tokens: vLLM sizes P from its short-conv state without them
    # (Lfm2ForCausalLM), 2,048 channels x 2 rows x 2 B = 8,192 B, padded to the page of
    # 16 x 2,048 = 32,768 B by 300%, and its layers keep 2,048 x (2 + 2) x 2 = 16,384 B there
    from flatkv.presets import load_preset
    profile = load_preset("LFM2-1.2B").profile()
    result = vllm_at_80gb(profile, speculative_tokens=2)
    analysis = analyze(profile.components(), block_size=16, alignment=16,
                       budget_bytes=80 * 10**9)
    assert ("State pages (8,192 B) are padded to the page by 300.00% of their size (\"Padding "
            "mamba page size\"); the layers keep 16,384 B in them, with the drafted conv "
            "rows.") in (
        app_data.vllm_block_text(result, profile, analysis))
    assert result.extras["log_lines"][0].startswith("Padding mamba page size by 300.00% ")
    # the log names the mamba cache mode it counts, and how a default recent run differs
    assert ("It counts mamba cache mode none, as set here (--no-enable-prefix-caching): vLLM "
            "0.28 and later start a hybrid in align") in strategy_notes.start_up_log_text(result)
    assert "It counts mamba cache mode align, as set here." in strategy_notes.start_up_log_text(
        vllm_at_80gb(profile, mamba_cache_mode="align"))
    # DeepSeek-V3.2: one group, two caches a layer (61 x 2 tensors)
    v32 = load_preset("DeepSeek-V3.2").profile()
    text = app_data.vllm_block_text(vllm_at_80gb(v32), v32, analysis)
    assert ("P 64, pages of 82,176 B for each of 61 layers, in two tensors a layer (73,728 B "
            "of latent KV, 8,448 B of indexer keys). A block id is 61 pages, 5,012,736 B "
            "(4.78 MiB, 78,324 B a token), and holds a page of every layer (one group: no other "
            "group's rows to sit beside them).") in text
    assert 5_012_736 // 64 == 61 * (1_152 + 132) == 78_324
    assert "mamba cache mode" not in strategy_notes.start_up_log_text(vllm_at_80gb(v32))  # no state


def test_vllm_block_chart_tells_padding_layers_and_indexer_keys_apart():
    from flatkv import charts
    from flatkv.presets import load_preset
    lfm2 = load_preset("LFM2-1.2B").profile()
    fig = charts.layout_figure(app_data.vllm_block_segments(vllm_at_80gb(lfm2), lfm2),
                               x_title="offset in the block", span="block")
    # the key in the order the bars are read: the top row (state 0) left to right, its conv
    # page at 0, that page's padding, then the padding layer's whole page at 163,840; the full
    # attention group's KV is first drawn on the last row
    assert [t.name for t in fig.data] == ["conv state", "padding", "padding layer",
                                          "KV (full attention)"]
    assert [t.marker.pattern.shape for t in fig.data][1:3] == ["/", "x"]
    assert fig.data[0].hovertemplate.endswith("of the block<extra></extra>")
    v32 = load_preset("DeepSeek-V3.2").profile()
    names = [t.name for t in charts.layout_figure(
        app_data.vllm_block_segments(vllm_at_80gb(v32), v32)).data]
    # MLA keeps a latent, not K and V: named so, as the Model page counts its layers
    assert names == ["KV (full attention, MLA latent)", "indexer keys"]


def test_vllm_block_text_of_a_state_only_model_gives_no_p():
    # 24 state layers of 49,152 + 1,048,576 B: one group, a page one state page; P is nominal
    # (16) in both layouts, so neither is given, nor bytes a token
    profile = CacheProfile(("linear_attention",) * 24, 0, {"conv": 49152, "ssm": 1048576})
    result = vllm_at_80gb(profile)
    text = app_data.vllm_block_text(result, profile, analyze(
        profile.components(), block_size=16, alignment=16, budget_bytes=80 * 10**9,
        planner="per-component"))
    # 26,345,472 B = 25.125 MiB exactly: 25.13 MiB, rounded half up
    assert text == (
        "vLLM at these settings (Compare's row): no P (a state-only model's page is one "
        "state page, whatever the tokens), pages of 1,097,728 B in 24 tensors (group_size). A "
        "block id is 24 pages, 26,345,472 B (25.13 MiB), and holds a page of every layer (one "
        "group: no other group's rows to sit beside them). Our block above: 26,345,472 B "
        "(25.13 MiB), a row for every group.")
    assert 24 * (49_152 + 1_048_576) == 26_345_472


def test_vllm_blocks_add_up_to_its_block_for_every_preset_and_mode():
    from flatkv.presets import list_presets, load_preset
    from flatkv.strategies import StrategyOptions
    drawn = 0
    for name in list_presets():
        profile = load_preset(name).profile()
        for options in ({}, {"mamba_cache_mode": "all"}, {"speculative_tokens": 2},
                        {"vllm_hybrid_manager": False}, {"block_size": 64}):
            result = vllm_at_80gb(profile, **options)
            if not result.applies:
                continue
            rows = _rows(app_data.vllm_block_segments(result, profile))
            assert len(rows) == result.extras["num_groups"], (name, options)
            for segs in rows.values():
                assert sum(s.nbytes for s in segs) == result.block_bytes, (name, options)
                assert all(a.end == b.offset for a, b in zip(segs, segs[1:])), (name, options)
            drawn += 1
    assert drawn >= 50
    with pytest.raises(ValueError, match="needs an applying vllm result, got 'sglang'"):
        from flatkv.strategies import run_strategy
        app_data.vllm_block_segments(run_strategy(
            "sglang", QWEN35, budget_bytes=80 * 10**9, context_tokens=None,
            options=StrategyOptions()), QWEN35)


@pytest.mark.parametrize(("mode", "checkpoints", "drafted"),
                         [("none", 0, 0), ("none", 0, 2), ("align", 0, 0), ("align", 1, 0),
                          ("align", 3, 2)])
def test_a_mode_text_adds_up_to_the_state_pages_a_request_holds(mode, checkpoints, drafted):
    # the engine options' caption restates the rule state_pages_per_request codes once: its
    # figures must add up to it ("align (2 state pages) + 3 checkpoint + 2 drafted" is 7)
    from flatkv.strategies import StrategyOptions
    from flatkv.strategies.base import state_pages_per_request

    text = app_data.mamba_mode_text(mode, checkpoints, drafted)
    options = StrategyOptions(mamba_cache_mode=mode, prefill_checkpoint_blocks=checkpoints,
                              speculative_tokens=drafted)
    assert sum(int(d) for d in re.findall(r"\d+", text)) == state_pages_per_request(
        options, 32_768, 544)
    assert app_data.mamba_mode_text("all") == "all (1 per P tokens)"




def test_dead_weight_rows_by_hand_under_the_clis_headers():
    # Kimi-Linear-48B-A3B at TP 1, block 16: P 1,888; 20 KDA rows of 2,170,880 B and 7 MLA rows
    # of 1,888 x 1,152 = 2,174,976 B a block id
    kimi = load_preset("Kimi-Linear-48B-A3B").profile()
    a = analyze(kimi.components(), block_size=16, alignment=16, budget_bytes=76_968_728_985)
    state, kv = 20 * 2_170_880, 7 * 1_888 * 1_152
    assert (state, kv) == (43_417_600, 15_224_832)
    # each group by its kind, as Layout's metrics name it: Kimi's full layers keep MLA's
    # latent (the cells read "linear_attention" and "full_attention")
    assert app_data.dead_weight_rows(a, mla=kimi.mla) == [
        {"group": "state", "layers": 20, "used B/block": state, "dead B/block": kv,
         "dead share": f"{kv / (state + kv):.2%}"},
        {"group": "full attention (MLA)", "layers": 7, "used B/block": kv,
         "dead B/block": state,
         "dead share": "74.04%"}]
    assert set(app_data.DEAD_WEIGHT_HELP) <= set(app_data.dead_weight_rows(a)[0])


def test_deepseek_v32s_rows_draw_its_indexer_keys_apart_from_the_latent():
    # DeepSeek-V3.2: 1,284 B a token = the latent's (512 + 64) x 2 = 1,152 B + 132 B of
    # indexer keys; at P 16 a layer's row is 20,544 B: 18,432 B of KV then 2,112 B of keys,
    # as vLLM's blocks draw its indexer layer
    profile = load_preset("DeepSeek-V3.2").profile()
    assert (profile.kv_bytes_per_slot, profile.indexer_bytes_per_slot) == (1_284, 132)
    a = analyze(profile.components(), block_size=16, alignment=16, budget_bytes=10**10)
    segs = app_data.layout_segments(a, indexer_bytes_per_slot=132)
    assert [(s.kind, s.component, s.offset, s.nbytes) for s in segs if s.slot == 0] == [
        ("kv", "kv", 0, 18_432), ("indexer", "indexer keys", 18_432, 2_112)]
    assert len(segs) == 2 * 61
    assert sum(s.nbytes for s in segs) == 61 * 16 * 1_284
    # without the indexer's bytes a row is one KV segment, as the plan binds it
    assert [(s.kind, s.nbytes) for s in app_data.layout_segments(a) if s.slot == 0] == [
        ("kv", 20_544)]
