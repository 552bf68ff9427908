"""The numbers the pages show, derived by hand from SPEC.md's worked example."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from fractions import Fraction

import pytest

from flatkv import app_data
from flatkv.analysis import analyze, plan_json
from flatkv.presets import load_preset
from flatkv.profile import CacheProfile
from flatkv.strategies import StrategyOptions, run_strategy

# SPEC section 1: 12 x (3 linear + 1 full); KV 2,048 B/slot; conv 49,152 B; ssm 2,097,152 B.
QWEN35 = CacheProfile((("linear_attention",) * 3 + ("full_attention",)) * 12, 2048,
                      {"conv": 49152, "ssm": 2097152})
STATE_ROW = 49152 + 2097152  # 2,146,304
P = 1056  # ceil(2,146,304 / 2,048) = 1,048 -> multiple of 16
KV_ROW = 2048 * P  # 2,162,688
BLOCK_BYTES = 12 * (KV_ROW + STATE_ROW) + 24 * STATE_ROW  # 103,219,200


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
    assert h.padding_share == pytest.approx(36 * 16_384 / (BLOCK_BYTES + 36 * 16_384))
    # the same padding per state row, as vLLM logs it: 16,384 / 2,146,304
    assert (h.page_row_bytes, h.state_row_bytes) == (KV_ROW, STATE_ROW) == (2_162_688, 2_146_304)
    assert h.state_row_padding == 16_384 / 2_146_304
    shares = dict(h.dead_share_by_group)
    assert shares["full_attention"] == pytest.approx(36 * STATE_ROW / BLOCK_BYTES)
    assert shares["linear_attention"] == pytest.approx(12 * KV_ROW / BLOCK_BYTES)


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
    assert 48 in app_data.block_size_candidates(48)
    b = app_data.budget_candidates(10**9)
    assert b[0] == 10**8 and 10**9 in b and b == sorted(b) and b[-1] <= 2 * 10**9
    # near the largest budget a plan takes (2**60 B) the sweep stops there, not at twice it
    huge = app_data.budget_candidates(9 * 10**17)
    assert 1.15e18 < huge[-1] <= 2**60 and 9 * 10**17 in huge
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


def test_compare_rows_carry_the_strategy_numbers():
    from flatkv.strategies import StrategyOptions, run_strategy

    opts = StrategyOptions(block_size=64, alignment=16)
    flat = run_strategy("flat", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768,
                        options=opts)
    row = app_data.compare_table_row(flat)
    assert row["strategy"] == "FlatKV packed slabs" and row["applies"]
    assert (row["P (tokens)"], row["block bytes"], row["blocks"]) == (1056, BLOCK_BYTES, 775)
    # 775 page ids / (32 full pages + 1 state page) at 32,768 tokens = 23.4848...
    assert row["concurrency"] == 23.48
    # the breakdown columns sum to the budget; unused: what 775 whole blocks leave
    breakdown = {k: v for k, v in row.items() if k.endswith(" (B)")}
    assert sum(breakdown.values()) == 80 * 10**9
    assert breakdown["unused (B)"] == 80 * 10**9 - 775 * BLOCK_BYTES == 5_120_000
    vllm = app_data.compare_table_row(
        run_strategy("vllm", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768, options=opts))
    # A = max(16, 64) = 64; P = 64 x cdiv(2,146,304, 64 x 2,048) = 64 x 17 = 1,088
    # page 1,088 x 2,048 = 2,228,224 B; 80e9 // 2,228,224 // 12 layers per group = 2,991
    assert (vllm["P (tokens)"], vllm["blocks"]) == (1088, 2991)
    # beside one request's page in each of the 3 state groups, as every strategy counts:
    # (2,991 - 3) x 1,088
    assert vllm["capacity (tokens)"] == 3_250_944
    # a concurrency just under a whole number stays under it in the row (vLLM's log says 2.00x):
    # 3,999 blocks of 2 MiB for Llama-3.1-8B, 2,000 a request of 32,000 tokens
    llama = CacheProfile(layer_types=("full_attention",) * 32, kv_bytes_per_slot=4096)
    under = run_strategy("vllm", llama, budget_bytes=3999 * 2**21, context_tokens=32_000)
    assert under.concurrency == Fraction(3999, 2000)
    assert app_data.compare_table_row(under)["concurrency"] == 1.99
    assert under.extras["log_lines"][-1].endswith("per request: 2.00x")
    results = [run_strategy(name, QWEN35, budget_bytes=80 * 10**9, context_tokens=32768,
                            options=opts) for name in ("flat", "vllm", "sglang")]
    text = app_data.logged_capacity_text(results)
    # vLLM: max concurrency x L = 2,991 / (ceil(32,768 / 1,088) = 31 + 3 state pages) x 32,768;
    # older releases 2,991 // 4 groups x 1,088 = 812,736; SGLang: its token pool
    # SGLang: 80e9 x 9 // 19 // (36 x 2,146,304 B) = 490 state slots; the rest // (12 x 2,048 B)
    # = (80e9 - 490 x 77,266,944) // 24,576 = 1,714,648; vLLM 2,991 x 32,768 // 34 = 2,882,620
    assert text == (
        "In the engines' logs: vLLM's \"GPU KV cache size\": 2,882,620 tokens; SGLang's "
        "max_total_num_tokens: 1,714,648 tokens. vLLM's line is max concurrency x max_model_len "
        "(vLLM 0.19 and earlier: 812,736, num_blocks // groups x min block size, a multiple of "
        "the smallest block size; the current figure divided by max_model_len is the logged "
        "concurrency). These count mamba cache mode none: vLLM 0.28 and later start a hybrid "
        "model with prefix caching on, in mamba cache mode align by default; the log says which "
        "(\"Mamba cache mode is set to ...\"): set the same mode here to match such a log. None, "
        "the default here, is --no-enable-prefix-caching or vLLM up to 0.27.")
    # in align, vLLM's own default for a hybrid, nothing to warn of: 2 state pages a request
    # in each of 3 groups, 2,991 x 32,768 // (31 + 6) = 2,648,894
    align = run_strategy("vllm", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768,
                         options=StrategyOptions(block_size=64, alignment=16,
                                                 mamba_cache_mode="align"))
    assert app_data.logged_capacity_text([align]).startswith(
        "In the engines' logs: vLLM's \"GPU KV cache size\": 2,648,894 tokens. ")
    assert "These count" not in app_data.logged_capacity_text([align])
    assert app_data.logged_capacity_text(results[:1]) == ""  # our layout logs nothing
    aliased = app_data.compare_table_row(
        run_strategy("aliased", QWEN35, budget_bytes=80 * 10**9, context_tokens=32768))
    assert not aliased["applies"] and aliased["blocks"] is None


def test_sglangs_own_ssm_dtype_is_named_where_it_changes_the_state():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    # Qwen3-Next at TP 2: conv 24,576 B + ssm 262,144 elements, 2 B in the model (bf16) and 4 B
    # in SGLang's float32
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    assert qwen.state_bytes_per_layer == 24_576 + 262_144 * 2 == 548_864
    results = [run_strategy(name, qwen, budget_bytes=80 * 10**9, context_tokens=32768)
               for name in ("flat", "sglang")]
    assert app_data.sglang_state_text(results, qwen) == (
        "SGLang keeps the ssm state in float32 (SGLang's default ssm dtype; one dtype of its own, "
        "whatever the model's, set in the engine options): 1,073,152 B of state per layer "
        "against the 548,864 B the other layouts keep.")
    told = [run_strategy("sglang", qwen, budget_bytes=80 * 10**9,
                         options=StrategyOptions(sglang_ssm_dtype="bfloat16"))]
    assert app_data.sglang_state_text(told, qwen) == ""  # the same bytes: nothing to say
    assert app_data.sglang_state_text(results[:1], qwen) == ""  # no SGLang here
    llama = profile_for("Llama-3.1-8B", None, 1)
    assert app_data.sglang_state_text(
        [run_strategy("sglang", llama, budget_bytes=80 * 10**9)], llama) == ""  # no state
    # a conv state in float32 is re-sized too: SGLang keeps it in bfloat16 (Nemotron-H-8B:
    # conv 30,720 elements, 122,880 B in float32, 61,440 B in bfloat16; ssm 2,097,152 B in
    # bfloat16, 4,194,304 B in SGLang's float32)
    nemotron = load_preset("Nemotron-H-8B").with_options(conv_dtype="float32").profile()
    assert app_data.sglang_state_text(
        [run_strategy("sglang", nemotron, budget_bytes=80 * 10**9)], nemotron) == (
        "SGLang keeps the ssm state in float32 (SGLang's default ssm dtype; one dtype of its "
        "own, whatever the model's, set in the engine options) and the conv state in bfloat16 "
        "(SGLang's conv dtype, SGLANG_MAMBA_CONV_DTYPE's default, whatever the model's): "
        f"{61_440 + 4_194_304:,} B of state per layer against the {122_880 + 2_097_152:,} B the "
        "other layouts keep.")


def test_sliding_layers_explain_why_one_request_outruns_the_capacity():
    from flatkv.app_model import profile_for

    gpt = profile_for("gpt-oss-20b", None, 1)
    assert app_data.sliding_capacity_text(gpt) == (
        "Sliding-window layers: capacity counts their pages like full history (no window "
        "eviction, as older vLLM logs count them). A request "
        "keeps only its window of "
        "128 tokens there, so one request can run longer than the capacity; concurrency counts "
        "that.")
    assert app_data.sliding_capacity_text(profile_for("Qwen3-Next-80B-A3B", None, 1)) == ""
    assert app_data.sliding_capacity_text(profile_for("Llama-4-Scout-17B-16E", None, 1)) == (
        "Chunked layers: capacity counts their pages like full history (no window eviction, as "
        "older vLLM logs count them). A request keeps only its chunk of 8,192 tokens there, so "
        "one request can run longer than the capacity; concurrency counts that.")
    # the layout chart colours a chunked layer's KV apart from full and sliding KV
    assert [app_data.component_kind(g, "kv") for g in (
        "full_attention", "sliding_attention", "chunked_attention")] == [
        "kv", "kv_sliding", "kv_chunked"]


def test_two_pool_text_explains_sglang_blocks_over_the_budget():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, compare

    budget = 76_968_728_985
    gpt = profile_for("gpt-oss-20b", None, 1)
    results = compare(gpt, budget_bytes=budget, context_tokens=None, options=StrategyOptions())
    # F = 2,048 B per token per layer, 12 full + 12 sliding layers, r_swa = 0.8: a full-pool
    # token costs 2,048 x (12 + 0.8 x 12) = 44,236.8 B
    full = budget * 5 // (2048 * 108)
    assert full == 1_739_925 and full * 24 * 2048 > budget
    assert app_data.two_pool_blocks_text(results, gpt) == (
        "SGLang: a block is one page in both token pools (24,576 B full + 24,576 B sliding), and "
        f"the sliding pool holds {int(0.8 * full):,} tokens against the full pool's {full:,} "
        "(r_swa = 0.8), so blocks x block bytes is more than the budget.")
    # r_swa 1: both pools hold the same tokens, blocks x block bytes fits the budget: no note
    even = compare(profile_for("gpt-oss-20b", None, 1), budget_bytes=budget, context_tokens=None,
                   options=StrategyOptions(swa_full_tokens_ratio=1))
    sglang = next(r for r in even if r.strategy == "sglang")
    assert sglang.num_blocks * sglang.block_bytes <= budget
    assert app_data.two_pool_blocks_text(even, gpt) == ""
    qwen = compare(profile_for("Qwen3-Next-80B-A3B", None, 1), budget_bytes=budget,
                   context_tokens=None, options=StrategyOptions())
    assert app_data.two_pool_blocks_text(qwen, profile_for("Qwen3-Next-80B-A3B", None, 1)) == ""
    # Llama 4: the second pool holds its chunked layers, 36 x 4,096 B a token
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    chunked = compare(scout, budget_bytes=budget, context_tokens=None, options=StrategyOptions())
    full = budget * 5 // (4096 * (5 * 12 + 4 * 36))
    assert app_data.two_pool_blocks_text(chunked, scout) == (
        "SGLang: a block is one page in both token pools (49,152 B full + 147,456 B chunked), "
        f"and the chunked pool holds {int(0.8 * full):,} tokens against the full pool's "
        f"{full:,} (r_swa = 0.8), so blocks x block bytes is more than the budget.")


def test_dead_weight_text_says_what_one_page_id_space_costs():
    from strategy_profiles import gpt_oss_20b, llama_31_8b

    from flatkv.strategies import compare

    # gpt-oss-20b: 12 sliding + 12 full layers of 16 x 2,048 B rows at P 16; a flat page id
    # takes 24 rows and its group uses 12, so half of each block is dead weight
    budget = 10_552 * 24 * 16 * 2048
    results = compare(gpt_oss_20b(), budget_bytes=budget, context_tokens=32_768)
    by = {r.strategy: r for r in results}
    assert by["flat"].bytes_of("dead_weight") == 10_552 * 12 * 16 * 2048 == budget // 2
    assert f"{budget // 2:,}" == "4,149,215,232"  # 3.86 GiB
    # vLLM: the same budget in blocks of 12 pages, 2 x 10,552 of them, for the same pages per
    # request; SGLang's and aliasing's figures are not above it
    assert by["vllm"].num_blocks == 2 * 10_552
    assert by["vllm"].concurrency == 2 * by["flat"].concurrency
    assert max(r.concurrency for r in results if r.applies) == by["vllm"].concurrency
    assert app_data.dead_weight_text(results) == (
        "FlatKV packed slabs: 3.86 GiB (50.00% of the budget) is dead weight. Every page id "
        "takes a row in every slot tensor, and a page one group uses leaves the other groups' "
        "rows in it idle. At this context 2.00x as many requests fit under vLLM v1: a block id "
        "belongs to one group and addresses only its layers' pages.")
    # vLLM with its hybrid manager off: one group of all 24 layers, every token kept; at
    # 131,072 tokens a request needs 8,192 pages there and 8,192 + cdiv(128 - 1 + 8,192, 16) +
    # 1 = 8,713 flat: 8,713 / 8,192 = 1.06x, for another reason than dead weight's absence
    from flatkv.strategies import StrategyOptions, run_strategy
    off = StrategyOptions(vllm_hybrid_manager=False)
    one_group = [run_strategy(name, gpt_oss_20b(), budget_bytes=budget, context_tokens=131_072,
                              options=off) for name in ("flat", "vllm")]
    assert one_group[1].concurrency / one_group[0].concurrency == Fraction(8_713, 8_192)
    assert app_data.dead_weight_text(one_group).endswith(
        "At this context 1.06x as many requests fit under vLLM v1: with its hybrid manager off "
        "every layer keeps every token in one group of pages, all of them in use: here the "
        "sliding layers' history beyond their window costs less than one page-id space's dead "
        "weight.")
    # past any request that fits (10M tokens: flat 0.03, vLLM 0.07), the concurrencies still
    # compare, and no request is said to fit
    long = compare(gpt_oss_20b(), budget_bytes=budget, context_tokens=10_000_000)
    assert max(r.concurrency for r in long if r.applies) < 1
    assert ("At this context 2.00x the concurrency is reached under slab aliasing: "
            in app_data.dead_weight_text(long))
    # one group, one kind of row: no dead weight, nothing to say
    assert app_data.dead_weight_text(compare(llama_31_8b(), budget_bytes=budget)) == ""
    # a best layout that holds no more requests than the flat one (within 1%): no comparison
    flat_only = [by["flat"], by["per-component"]]
    assert app_data.dead_weight_text(flat_only).endswith("leaves the other groups' rows in it "
                                                         "idle.")
    # 0.5% more requests would show as 1.00x: no comparison; 1% more shows as 1.01x
    from dataclasses import replace as with_

    def vllm_at(ratio):
        c = by["flat"].concurrency * ratio
        return with_(by["vllm"], concurrency_numerator=c.numerator,
                     concurrency_denominator=c.denominator)

    assert app_data.dead_weight_text([by["flat"], vllm_at(Fraction(201, 200))]).endswith(
        "rows in it idle.")
    assert app_data.dead_weight_text([by["flat"], vllm_at(Fraction(101, 100))]).endswith(
        "1.01x as many requests fit under vLLM v1: a block id belongs to one group and "
        "addresses only its layers' pages.")


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


def test_every_layout_has_a_title_and_its_options():
    # a layout added to the runners without them would raise KeyError on a page
    from flatkv.engine_options import STRATEGY_FIELDS
    from flatkv.strategies import STRATEGIES

    assert tuple(app_data.STRATEGY_TITLES) == STRATEGIES
    # every layout reads some engine option (max batched tokens at least): a layout left out of
    # every EngineOption's read_by would offer none
    assert all(STRATEGY_FIELDS[s] for s in STRATEGIES)


def test_markdown_literal_escapes_what_streamlit_would_render():
    # emphasis, code, links, LaTeX, HTML, tables, headings, bare-URL links, colour directives,
    # entities: every ASCII punctuation mark gets its backslash, letters and spaces do not
    assert app_data.markdown_literal("a*b_c`d`[e](f) $x$ <b> |t| #h ~s~ \\ :red[w] www.x") == (
        "a\\*b\\_c\\`d\\`\\[e\\]\\(f\\) \\$x\\$ \\<b\\> \\|t\\| \\#h \\~s\\~ \\\\ "
        "\\:red\\[w\\] www\\.x")
    # a leading "- " would open a list, "&amp;" show as "&"; a line break ends the paragraph
    assert app_data.markdown_literal("- Tom &amp; Jerry\n2") == "\\- Tom \\&amp\\; Jerry 2"
    assert app_data.markdown_literal("Qwen3 Next") == "Qwen3 Next"


def test_refusals_in_the_pages_words():
    from flatkv.plan import BudgetTooSmall

    # 3,000 B of budget for blocks of 2,048 B: 1 block; a plan needs 2, 4,096 B
    small = BudgetTooSmall(3_000, 2_048, "4 slots")
    assert app_data.budget_too_small_text(small, "raise the KV cache memory in the sidebar") == (
        "The cache budget per rank, 3,000 B (2.93 KiB), holds 1 block of 2,048 B (2.00 KiB); a "
        "plan needs at least 2, that is 4,096 B (4.00 KiB): raise the KV cache memory in the "
        "sidebar")
    state_only = CacheProfile(layer_types=("linear_attention",) * 4, kv_bytes_per_slot=0,
                              state_const_bytes={"conv": 8, "ssm": 16})
    assert app_data.state_only_text("packed", state_only, ", or another layout") == (
        "Packed slabs size P against a KV history row, and this model has none (no attention "
        "layer, only state): pick the planner \"one tensor per component\" in the sidebar, or "
        "another layout")
    assert app_data.state_only_text("per-component", state_only) is None
    hybrid = CacheProfile(layer_types=("linear_attention", "full_attention"),
                          kv_bytes_per_slot=64, state_const_bytes={"conv": 8})
    assert app_data.state_only_text("packed", hybrid) is None


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
    assert rows[-1] == {"requested block size": 4096, "P": 4096, "capacity (tokens)": 3_883_008,
                        "concurrency": 14.19}
    assert "capacity (tokens)" not in app_data.block_size_sweep_rows(curves, False)[0]
    # nothing fits a tenth of a tiny budget: no figure (a gap in the chart and the table),
    # not a zero that reads as one, and not an error
    tiny = app_data.curves(qwen, "vllm", 10**6, 262_144, options)
    assert tiny.by_budget[0] == app_data.CurvePoint(None, None, None)
    tiny_rows = app_data.block_size_sweep_rows(tiny, True)
    assert tiny_rows[0] == {"requested block size": tiny.block_sizes[0], "P": None,
                            "capacity (tokens)": None, "concurrency": None}


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
    assert app_data.capacity_note(pools, gpt) == app_data.sglang_sliding_pool_text(pools, gpt)
    assert "idle" not in app_data.capacity_note(pools, gpt)
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
    assert app_data.sglang_sliding_pool_text(pools, gpt) == (
        "SGLang: capacity is the full-attention token pool; the sliding-window layers have a "
        f"pool of their own, {pools.extras['swa_tokens']:,} tokens (sliding / full tokens ratio "
        "in the layout options).")
    assert pools.extras["swa_tokens"] == 180_844  # 226,056 full tokens x 0.8, floored
    one_pool = run_strategy("sglang", gpt, budget_bytes=10 * 10**9,
                            options=StrategyOptions(sglang_swa_pool=False))
    assert app_data.sglang_sliding_pool_text(one_pool, gpt) == ""
    assert app_data.sglang_sliding_pool_text(run_strategy("vllm", gpt, budget_bytes=10**10),
                                             gpt) == ""
    # Llama 4's chunked layers ride SGLang's sliding pool, and are named for what they are
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    chunked = run_strategy("sglang", scout, budget_bytes=10 * 10**9)
    assert app_data.sglang_sliding_pool_text(chunked, scout) == (
        "SGLang: capacity is the full-attention token pool; the chunked layers have a pool of "
        f"their own, {chunked.extras['swa_tokens']:,} tokens (sliding / full tokens ratio in "
        "the layout options).")
    # at a context, 47,870 // 16,384 = 2 requests (the chunked pool binds) hold 2 x min(8,192
    # + 8,192, L) chunked tokens: its remainder, less than a request, is no split's idle, so
    # the idle text names the KV pool's alone
    at_context = run_strategy("sglang", scout, budget_bytes=10 * 10**9, context_tokens=16_384)
    assert at_context.extras["binding_limit"] == "swa tokens"
    assert "sliding pool" not in app_data.sglang_idle_split_text(at_context)
    pool_text = app_data.sglang_sliding_pool_text
    assert pool_text(at_context, scout) == pool_text(chunked, scout)
    # 10**10 x 5 // ((5 x 12 + 4 x 36) x 4,096) = 59,838 full tokens, x 0.8
    assert chunked.extras["swa_tokens"] == int(59_838 * 0.8) == 47_870
    assert app_data.sglang_pools_text(scout, StrategyOptions()).startswith(
        "SGLang keeps the chunked layers in a token pool of their own: "
        "Llama4ForConditionalGeneration is on SGLang\\'s hybrid SWA list.")  # Markdown-escaped


def test_layouts_short_of_one_request_are_named_with_their_concurrency():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy

    # Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B a token; 10 GB holds
    # 76,293 tokens, so a 100,000-token request does not fit (76,288 / 100,000 in whole blocks)
    llama = profile_for("Llama-3.1-8B", None, 1)
    flat = run_strategy("flat", llama, budget_bytes=10**10, context_tokens=100_000)
    assert flat.capacity_tokens == 10**10 // (131_072 * 16) * 16 == 76_288
    assert app_data.short_of_one_request_text([flat], 100_000) == (
        "Not even one request of 100,000 tokens fits in: FlatKV packed slabs (0.76). A paged "
        "engine laid out so would refuse to start, as vLLM does when one request of "
        "max_model_len does not fit.")
    # SGLang only warns ("KV pool holds N tokens, fewer than --context-length"): 10 GB of
    # 131,072 B tokens hold 76,293 of them
    sglang = run_strategy("sglang", llama, budget_bytes=10**10, context_tokens=100_000)
    assert sglang.logged_tokens == 10**10 // 131_072 == 76_293
    assert app_data.short_of_one_request_text([sglang], 100_000) == (
        "Not even one request of 100,000 tokens fits in: SGLang (0.76). SGLang starts all the "
        "same, warning that its KV pool holds fewer tokens than --context-length, and refuses "
        "or cuts short the longer requests.")
    # gpt-oss-20b in 400 MB at 8,192 tokens: its full pool's 4 x 10^8 x 5 // (9 x 24,576) =
    # 9,042 tokens hold the context, so no warning; the sliding pool's 9,042 x 4 // 5 = 7,233
    # hold 7,233 / min(127 + 8,192, 8,192) of a request
    gpt = profile_for("gpt-oss-20b", None, 1)
    swa_short = run_strategy("sglang", gpt, budget_bytes=400 * 10**6, context_tokens=8_192)
    assert (swa_short.capacity_tokens, swa_short.concurrency) == (9_042, Fraction(7_233, 8_192))
    assert app_data.short_of_one_request_text([swa_short], 8_192).endswith(
        "SGLang starts all the same without a warning: its KV pool holds the context, and "
        "another of its pools holds less than one request's share.")
    fits = run_strategy("flat", llama, budget_bytes=10**10, context_tokens=50_000)
    assert app_data.short_of_one_request_text([fits], 50_000) == ""


def test_notes_under_the_figures_say_which_layout_does_what():
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    gpt, qwen = profile_for("gpt-oss-20b", None, 1), profile_for("Qwen3-Next-80B-A3B", None, 1)
    llama = profile_for("Llama-3.1-8B", None, 1)
    # SGLang's pools: its own list decides, the option overrides; nothing to say without sliding
    assert app_data.sglang_pools_text(gpt, StrategyOptions()) == (
        "SGLang keeps the sliding-window layers in a token pool of their own: GptOssForCausalLM "
        "is on SGLang\\'s hybrid SWA list. Its sliding-window pool in the engine options "
        "changes this.")
    assert app_data.sglang_pools_text(gpt, StrategyOptions(sglang_swa_pool=False)).startswith(
        "SGLang keeps every token of every layer in one pool: as the SGLang sliding\\-window "
        "pool option sets it")
    assert app_data.sglang_pools_text(llama, StrategyOptions()) == ""
    # mode all: only where there is state to snapshot
    mode_all, mode_none = (StrategyOptions(mamba_cache_mode=m) for m in ("all", "none"))
    assert app_data.mamba_all_text(mode_all, qwen).startswith("Mamba cache mode all: every paged")
    # and only vLLM up to 0.31 has it (0.32's MambaCacheMode is align or none)
    assert "vLLM has it up to 0.31 (0.32 and later run align with prefix caching, none " \
        "without)." in app_data.mamba_all_text(mode_all, qwen)
    assert app_data.mamba_all_text(mode_none, qwen) == app_data.mamba_all_text(mode_all,
                                                                               llama) == ""
    # vLLM runs Qwen3-Next's mode all as align: 2 state pages, + 1 checkpoint + 2 drafted = 5
    drafting = StrategyOptions(mamba_cache_mode="all", prefill_checkpoint_blocks=1,
                               speculative_tokens=2)
    assert "its row counts align's 5 state pages a request" in app_data.mamba_all_text(drafting,
                                                                                      qwen)
    state_only = CacheProfile(("linear_attention",) * 2, 0, {"conv": 8})
    assert app_data.how_to_read_text(qwen, 0).startswith("Capacity: the history the pool holds")
    assert app_data.how_to_read_text(state_only, 0).startswith(
        "No attention layer: the model keeps no token history, only a constant state per "
        "request, so no capacity in tokens. Concurrency:")
    # which concurrency an engine logs, and what SGLang's is, as it logs none
    assert ("Concurrency: requests of this context length the layout holds at once, counted "
            "with the engine's pages per request (vLLM logs it as \"Maximum concurrency\"; "
            "SGLang logs max_running_requests, a cap on requests running at once, not a "
            "concurrency at this length: its figure here is what its binding pool holds, shown "
            "in its math). ") in app_data.how_to_read_text(qwen, 0)
    # what the figures count of speculative decoding: nothing until asked, then the state
    # pages every paged layout adds and vLLM's wider conv state, never a drafter's layers
    assert ("Without speculative decoding: set Speculative tokens under Engine options"
            in app_data.how_to_read_text(qwen, 0))
    assert ("With 2 drafted token(s) a step, a request holds 2 more state page(s) in each "
            "state group in every paged layout, and vLLM widens GDN, KDA, Mamba2 and "
            "short-conv conv states by a row per drafted token (the other layouts keep the "
            "model's conv rows); SGLang's "
            "figures are without speculative decoding. A drafter's own KV layers are not "
            "counted") in app_data.how_to_read_text(qwen, 2)
    assert ("Speculative decoding adds no state pages here. A drafter's own KV layers"
            in app_data.how_to_read_text(llama, 2))
    # Budget and Layout say it beside their figures, SGLang's that it is not modelled
    assert app_data.speculative_text(qwen, "vllm", 2) == (
        "Speculative decoding: these figures count the 2 drafted token(s)' state pages. "
        + app_data.DRAFTER_TEXT)
    assert app_data.speculative_text(qwen, "sglang", 2).startswith(
        "Speculative decoding's state buffers are not modelled for SGLang: these figures are "
        "without them.")
    # once the model carries its MTP layer, the texts say it is counted
    assert app_data.speculative_text(qwen, "vllm", 2, mtp_added=True).endswith(
        "The model's MTP layer is counted as one more full-attention layer, grouped with the "
        "model's as vLLM does.")
    assert app_data.DRAFTER_ADDED_TEXT in app_data.how_to_read_text(qwen, 2, mtp_added=True)
    assert app_data.speculative_text(llama, "vllm", 2) == (
        "Speculative decoding: " + app_data.DRAFTER_TEXT)
    assert app_data.speculative_text(qwen, "vllm", 0) == ""
    # Budget's note under the capacity: SGLang's second pool, or the window's caveat where one
    # pool counts sliding pages like full history; where the engine keeps every token of the
    # sliding layers (SGLang's single pool, vLLM's hybrid manager off), that it does
    two_pools = run_strategy("sglang", gpt, budget_bytes=10**10)
    assert app_data.capacity_note(two_pools, gpt) == app_data.sglang_sliding_pool_text(
        two_pools, gpt)
    assert not app_data.windows_as_history(two_pools, gpt)
    one_pool = run_strategy("sglang", gpt, budget_bytes=10**10,
                            options=StrategyOptions(sglang_swa_pool=False))
    assert app_data.windows_as_history(one_pool, gpt)
    assert app_data.capacity_note(one_pool, gpt) == (
        "Sliding-window layers: without its sliding-window pool, SGLang holds them in its one "
        "token pool and keeps every token, so capacity and concurrency both count them as full "
        "history.")
    # one pool of 10**10 // 49,152 B (24 layers x 2,048 B) tokens, every one of them in a
    # request's count
    assert one_pool.capacity_tokens == 10**10 // (24 * 2_048) == 203_450
    one_pool_at = run_strategy("sglang", gpt, budget_bytes=10**10, context_tokens=131_072,
                               options=StrategyOptions(sglang_swa_pool=False))
    assert one_pool_at.max_concurrency == Fraction(203_450, 131_072)
    vllm = run_strategy("vllm", gpt, budget_bytes=10**10)
    assert app_data.capacity_note(vllm, gpt) == app_data.sliding_capacity_text(gpt) != ""
    promoted = run_strategy("vllm", gpt, budget_bytes=10**10,
                            options=StrategyOptions(vllm_hybrid_manager=False))
    assert app_data.capacity_note(promoted, gpt) == (
        "Sliding-window layers: with its hybrid KV cache manager off, vLLM allocates them as "
        "full attention and keeps every token, so capacity and concurrency both count them as "
        "full history.")
    assert app_data.capacity_note(run_strategy("vllm", qwen, budget_bytes=10**10), qwen) == ""
    # Qwen3-Next TP 1 at 44.59 GiB, L 262,144 under vLLM: older releases logged num_blocks //
    # 4 groups x P
    r = run_strategy("vllm", qwen, budget_bytes=47_878_147_932, context_tokens=262_144)
    assert app_data.logged_tokens_help(r) == (
        "The token count the engine's log prints: max concurrency x max_model_len. vLLM 0.19 "
        f"and earlier printed {r.older_logged_tokens:,} instead: a multiple of the smallest "
        "block size; the current figure divided by max_model_len is the logged concurrency. "
        "The math shows it.")
    assert r.older_logged_tokens == r.num_blocks // 4 * r.block_size


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
        "each): linear_attention: 1,450, full_attention: 1,450; 1,810 page ids in the pool. "
        "A full-history group's count is all requests' tokens over P, rounded up, and a page "
        "more a request for its part-filled last page; a sliding group's, each request's "
        "window pages and one step's tokens.\n\n"
        "State is charged as with state prefix caching: two live pages per request plus a "
        "snapshot every P tokens (at most the full-history group's count). Budget and Compare "
        "count the state pages of mamba cache mode none (1 state page) per request, as the "
        "engine's log does, and hold 3.75 requests of "
        "262,144 tokens.")
    drafting = app_data.workload_text(pages, qwen, context=262_144, mamba_cache_mode="align",
                                      concurrency=flat.max_concurrency, speculative_tokens=2)
    assert ("Budget and Compare count the state pages of mamba cache mode align (2 state pages) "
            "and 2 more for drafted tokens per request, as the engine's log does") in drafting


def test_hold_rows_name_a_layout_no_budget_holds_and_leave_out_a_gpu_not_derived():
    from flatkv.app_model import profile_for
    from flatkv.budget import cache_budget, given_budget
    from flatkv.strategies import run_strategy

    llama = profile_for("Llama-3.1-8B", None, 1)
    results = [run_strategy(s, llama, budget_bytes=10**10, context_tokens=4096)
               for s in ("vllm", "sglang", "flat")]
    # a 2,000,000,000 B GPU at half its memory: 2**30 B of cache needs ceil(2**30 / 0.5) = 2**31
    # B of GPU, more than it has; 2**29 B needs 2**30 B, which it has
    budget = cache_budget(2_000_000_000, 0.5, 0, 1)
    rows = app_data.hold_rows(results, [2**30, None, 2**29], budget, llama)
    assert rows == [
        {"strategy": "vLLM v1", "cache budget (B)": 2**30, "cache budget": "1.00 GiB",
         "GPU memory (B)": 2**31, "GPU memory": "2.00 GiB (more than this GPU's 1.86 GiB)"},
        {"strategy": "SGLang", "cache budget (B)": None, "cache budget": "none holds them",
         "GPU memory (B)": None, "GPU memory": ""},
        {"strategy": "FlatKV packed slabs", "cache budget (B)": 2**29,
         "cache budget": "512.00 MiB", "GPU memory (B)": 2**30, "GPU memory": "1.00 GiB"}]
    # the readable figures lead (a narrow window cuts the table from the right)
    assert list(rows[0]) == ["strategy", "cache budget", "GPU memory", "cache budget (B)",
                             "GPU memory (B)"]
    # a layout that serves no such model does not apply, rather than hold none: SGLang, which
    # has no LFM3 model (nor anything to say of its pools for one)
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.strategies import StrategyOptions

    lfm3 = spec_from_hf_config({"model_type": "lfm3",
                                "architectures": ["Lfm3ForCausalLM"]}).profile()
    sglang = run_strategy("sglang", lfm3, budget_bytes=10**10, context_tokens=4096)
    assert app_data.hold_rows([sglang], [None], budget, lfm3)[0]["cache budget"] == \
        "does not apply"
    assert app_data.sglang_pools_text(lfm3, StrategyOptions()) == ""
    # so does one these options keep from starting at any budget: vLLM's hybrid manager off on
    # Qwen3-Next's state layers; on, a budget too small for them holds "none"
    from flatkv.app_model import profile_for
    from flatkv.sizing import plans_at_some_budget
    qwen, off = profile_for("Qwen3-Next-80B-A3B", None, 1), StrategyOptions(
        vllm_hybrid_manager=False)
    assert not plans_at_some_budget("vllm", qwen, off) and plans_at_some_budget("vllm", qwen)
    vllm = run_strategy("vllm", qwen, budget_bytes=10**10, context_tokens=4096, options=off)
    assert app_data.hold_rows([vllm], [None], budget, qwen, off)[0]["cache budget"] == \
        "does not apply"
    assert app_data.hold_rows([vllm], [None], budget, qwen)[0]["cache budget"] == \
        "none holds them"
    assert budget.beyond_gpu_text(2**31) == "more than this GPU's 1.86 GiB"
    assert budget.beyond_gpu_text(2_000_000_000) == ""  # all of it: not more
    assert budget.beyond_gpu_fix == ("a larger GPU, a higher memory fraction, or more TP "
                                     "(weights and the model's heads split further)")
    # at the whole GPU already, no higher fraction to offer
    assert cache_budget(2_000_000_000, 1.0, 0, 1).beyond_gpu_fix == (
        "a larger GPU or more TP (weights and the model's heads split further)")
    given = app_data.hold_rows(results, [2**30, None, 2**29], given_budget(10**10, 1),
                               llama)
    assert [set(r) for r in given] == [{"strategy", "cache budget (B)", "cache budget"}] * 3


# vLLM's blocks on the Layout page (SPEC 3.1): the worked example's P and page, by hand.
# A = 16; P = 16 x cdiv(2,146,304, 16 x 2,048) = 16 x 66 = 1,056; page = max(1,056 x 2,048,
# 2,146,304) = 2,162,688, the state page padded by 16,384 B; group_size 12 (12 full, 36
# linear): 4 groups, a block id = 12 pages = 25,952,256 B.
VLLM_PAGE = 2_162_688


def _vllm(profile, **options):
    from flatkv.strategies import StrategyOptions, run_strategy
    return run_strategy("vllm", profile, budget_bytes=80 * 10**9, context_tokens=32_768,
                        options=StrategyOptions(**options))


def _rows(segments):
    rows: dict[str, list] = {}
    for s in segments:
        rows.setdefault(s.slot_name, []).append(s)
    return rows


def test_vllm_blocks_of_the_worked_example_one_row_per_group():
    result = _vllm(QWEN35)
    assert (result.block_size, result.block_bytes) == (1056, 12 * VLLM_PAGE) == (1056, 25_952_256)
    rows = _rows(app_data.vllm_block_segments(result, QWEN35))
    # in vLLM's order: each type's groups where its first layer comes (layer 0 is linear)
    assert list(rows) == ["linear_attention.0", "linear_attention.1", "linear_attention.2",
                          "full_attention"]
    for segs in rows.values():
        assert sum(s.nbytes for s in segs) == 25_952_256
        assert segs[-1].end == 25_952_256  # drawn end to end, no gap
    full = rows["full_attention"]
    assert [(s.kind, s.offset, s.nbytes) for s in full[:2]] == [
        ("kv", 0, VLLM_PAGE), ("kv", VLLM_PAGE, VLLM_PAGE)]  # 1,056 x 2,048: no padding
    # tensor j's page of linear_attention.1 holds the type's layer 1 + 3j: conv, ssm, padding
    linear = rows["linear_attention.1"]
    assert [(s.component, s.offset, s.nbytes) for s in linear[3:6]] == [
        ("conv", VLLM_PAGE, 49_152), ("ssm", VLLM_PAGE + 49_152, 2_097_152),
        ("padding", VLLM_PAGE + STATE_ROW, 16_384)]
    assert linear[3].holder == "linear_attention #4 (cache layer 5)"  # cache layers 0,1,2,4,5
    assert full[4].holder == "full_attention #4 (cache layer 19)"  # every 4th: 3, 7, ..., 19
    text = app_data.vllm_block_text(result, QWEN35, analyze(QWEN35.components(), block_size=16,
                                                    alignment=16, budget_bytes=80 * 10**9))
    assert text == (
        "vLLM at these settings (Compare's column): P 1,056, pages of 2,162,688 B in 12 tensors "
        "(group_size). A block id is 12 pages, 25,952,256 B (24.75 MiB, 24,576 B a token), and "
        "belongs to one of 4 groups: tensor j's page holds that group's layer j, so no other "
        "group's rows sit beside it (no dead weight). State pages (2,146,304 B) are padded to "
        "the page by 0.76% (\"Padding mamba page size\"). Our block id above: 103,219,200 B "
        "(98.44 MiB, 97,745.45 B a token) at P 1,056, a row for every group.")
    # a token of P: 12 pages x 2,048 B a token; ours 103,219,200 / 1,056 = 97,745.4545...
    assert 25_952_256 // 1056 == 12 * 2048 and f"{103_219_200 / 1056:,.2f}" == "97,745.45"


def test_vllm_blocks_keep_whole_pages_for_padding_layers():
    # LFM2-1.2B's pattern: 10 short-conv layers, 6 full; group_size 6 (2 x 10 >= 3 x 6), so the
    # conv layers make 2 groups of 5 and each keeps one padding page. P = 16 x cdiv(8,192,
    # 16 x 2,048) = 16; page = max(16 x 2,048, 8,192) = 32,768: conv 8,192 + 24,576 padding
    kinds = {"c": "linear_attention", "f": "full_attention"}
    layers = tuple(kinds[k] for k in "ccfccfccfcfcfcfc")
    profile = CacheProfile(layers, 2048, {"conv": 8192})
    result = _vllm(profile)
    assert (result.block_size, result.extras["group_size"], result.block_bytes) == (
        16, 6, 6 * 32_768)
    rows = _rows(app_data.vllm_block_segments(result, profile))
    conv = rows["linear_attention.0"]
    assert [(s.kind, s.nbytes) for s in conv[:2]] == [("conv", 8192), ("padding", 24_576)]
    assert (conv[-1].kind, conv[-1].component, conv[-1].offset, conv[-1].nbytes,
            conv[-1].layer) == ("padding_layer", "its whole page", 5 * 32_768, 32_768, None)
    assert conv[-1].holder == "a padding layer of linear_attention"
    assert [s.cache_layer for s in conv if s.kind == "conv"] == [0, 3, 6, 9, 13]
    assert "(linear_attention: 2 padding layers)" in app_data.vllm_block_text(
        result, profile, analyze(profile.components(), block_size=16, alignment=16,
                        budget_bytes=80 * 10**9))


def test_vllm_blocks_without_the_hybrid_manager_draw_windowed_layers_as_full():
    # the sliding layers are allocated as full attention, all 8 layers in one group: 8 pages
    # of 16 x 1,024 B, cache layers in model order
    profile = CacheProfile(("sliding_attention", "full_attention") * 4, 1024, {},
                           sliding_window=128)
    (row,) = _rows(app_data.vllm_block_segments(
        _vllm(profile, vllm_hybrid_manager=False), profile)).values()
    assert [(s.kind, s.nbytes, s.cache_layer) for s in row] == [
        ("kv", 16_384, i) for i in range(8)]
    assert row[5].holder == "full_attention #5 (cache layer 5)"
    hybrid = _rows(app_data.vllm_block_segments(_vllm(profile), profile))
    assert [s.kind for s in hybrid["sliding_attention"]] == ["kv_sliding"] * 4


def test_vllm_blocks_draw_the_drafted_conv_rows_vllm_keeps():
    # Qwen3-Next with 2 speculative tokens: conv 8,192 channels x (3 + 2) rows x 2 B = 81,920;
    # vLLM sizes its P with them: 16 x cdiv(81,920 + 1,048,576, 32,768) = 560, page 1,146,880
    profile = load_preset("Qwen3-Next-80B-A3B").profile()
    result = _vllm(profile, speculative_tokens=2)
    assert (result.block_size, result.extras["page_bytes"]) == (560, 1_146_880)
    linear = _rows(app_data.vllm_block_segments(result, profile))["linear_attention.0"]
    assert [(s.component, s.nbytes) for s in linear[:3]] == [
        ("conv", 81_920), ("ssm", 1_048_576), ("padding", 16_384)]


def test_vllm_blocks_draw_deepseek_v32s_indexer_keys_beside_its_latent():
    # one group of 61 layers at P 64 (FlashMLA sparse): a page of 64 x 1,152 B of latent KV and
    # 64 x 132 B of indexer keys, which vLLM caches in a tensor of their own
    from flatkv.presets import load_preset
    profile = load_preset("DeepSeek-V3.2").profile()
    result = _vllm(profile)
    (row,) = _rows(app_data.vllm_block_segments(result, profile)).values()
    assert [(s.kind, s.component, s.offset, s.nbytes) for s in row[:3]] == [
        ("kv", "kv", 0, 64 * 1_152), ("indexer", "indexer keys", 73_728, 64 * 132),
        ("kv", "kv", 82_176, 73_728)]
    assert len(row) == 2 * 61 and result.block_bytes == 61 * 82_176


def test_vllm_block_text_quotes_the_padding_vllm_logs_and_the_state_its_layers_keep():
    # LFM2-1.2B with 2 drafted tokens: vLLM sizes P from its short-conv state without them
    # (Lfm2ForCausalLM), 2,048 channels x 2 rows x 2 B = 8,192 B, padded to the page of
    # 16 x 2,048 = 32,768 B by 300%, and its layers keep 2,048 x (2 + 2) x 2 = 16,384 B there
    from flatkv.presets import load_preset
    profile = load_preset("LFM2-1.2B").profile()
    result = _vllm(profile, speculative_tokens=2)
    analysis = analyze(profile.components(), block_size=16, alignment=16,
                       budget_bytes=80 * 10**9)
    assert ("State pages (8,192 B) are padded to the page by 300.00% (\"Padding mamba page "
            "size\"); the layers keep 16,384 B in them, with the drafted conv rows.") in (
        app_data.vllm_block_text(result, profile, analysis))
    assert result.extras["log_lines"][0].startswith("Padding mamba page size by 300.00% ")
    # the log names the mamba cache mode it counts, and how a default recent run differs
    assert ("It counts mamba cache mode none, as set here (--no-enable-prefix-caching): vLLM "
            "0.28 and later start a hybrid in align") in app_data.start_up_log_text(result)
    assert "It counts mamba cache mode align, as set here." in app_data.start_up_log_text(
        _vllm(profile, mamba_cache_mode="align"))
    # DeepSeek-V3.2: one group, two caches a layer (61 x 2 tensors)
    v32 = load_preset("DeepSeek-V3.2").profile()
    text = app_data.vllm_block_text(_vllm(v32), v32, analysis)
    assert ("P 64, pages of 82,176 B for each of 61 layers, in two tensors a layer (73,728 B "
            "of latent KV, 8,448 B of indexer keys). A block id is 61 pages, 5,012,736 B "
            "(4.78 MiB, 78,324 B a token), and holds a page of every layer (one group: no other "
            "group's rows to sit beside them).") in text
    assert 5_012_736 // 64 == 61 * (1_152 + 132) == 78_324
    assert "mamba cache mode" not in app_data.start_up_log_text(_vllm(v32))  # no state


def test_sglang_start_up_log_says_what_its_sizes_count():
    from flatkv.presets import load_preset
    from flatkv.strategies import StrategyOptions, run_strategy

    def sglang(profile, **options):
        return run_strategy("sglang", profile, budget_bytes=80 * 10**9, context_tokens=32_768,
                            options=StrategyOptions(**options))

    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    result = sglang(qwen)
    text = app_data.start_up_log_text(result)
    assert text == (
        "SGLang's start-up log at these settings, in a current release's words and number "
        "formats: set it beside yours line by line. Its GB are GiB (2^30 B); its sizes count a "
        "page more than #tokens in each KV layer (the page of slot 0, for padded tokens' "
        "writes) and the state pool's padding slot beyond max_mamba_cache_size. Its scheduler then "
        f"logs max_total_num_tokens={result.capacity_tokens}, max_running_requests=97 and "
        "context_len=32768 (without --max-running-requests, the context as its "
        "--context-length) beside figures not modelled here (chunked prefill, available "
        "memory). Releases before 0.5.13 (June 2026) print the KV "
        "lines without \"dtype: ...,\".")
    # 80e9 x 9 // 19 B of state hold 490 slots of 77,266,944 B; the rest 1,714,648 tokens
    assert result.capacity_tokens == (80 * 10**9 - 490 * 77_266_944) // (12 * 2048) == 1_714_648
    # SGLang's _resolve_max_num_reqs: min(4,096 (int(1,714,648 / 32,768 x 512) = 26,791, kept
    # to 2,048..4,096), 1,714,648 // 2, 489 request slots // 5 = 97: Qwen3NextForCausalLM's
    # extra_buffer radix cache, 3 + 2 tracking slots a request)
    assert min(max(min(int(1_714_648 / 32_768 * 512), 4096), 2048), 1_714_648 // 2,
               489 // 5) == 97 == result.extras["max_running_requests"]
    # drafting: its Mamba line would go on to the draft buffers this does not model
    assert "Without speculative decoding: with it, the Mamba line goes on" in (
        app_data.start_up_log_text(sglang(qwen, speculative_tokens=2)))
    # raw bytes: the state lines alone (its warning that 957 request slots // 3, no class's
    # extra buffer, cap the running requests at 319), and nothing said of KV lines
    raw = sglang(CacheProfile(layer_types=qwen.layer_types, kv_bytes_per_slot=2048,
                              state_const_bytes=qwen.state_const_bytes))
    assert [line.split(".")[0] for line in raw.extras["log_lines"]] == [
        f"max_running_requests is capped to {957 // 3} by the mamba state cache "
        "(max_mamba_cache_size=957, 3 state slots per request)", "Mamba Cache is allocated"]
    raw_text = app_data.start_up_log_text(raw)
    assert ("Left out: no KV Cache lines: they need the K / V split and KV dtype, which bytes "
            "typed by hand (or attention layer kinds whose K / V splits differ) do not give.") in (
        raw_text)
    assert "page more than #tokens" not in raw_text and "dtype: ...," not in raw_text
    # a hybrid SWA pool's lines are said to read otherwise before 0.5.17
    gpt = load_preset("gpt-oss-20b").profile()
    assert app_data.start_up_log_text(sglang(gpt)).endswith(
        "Before 0.5.17 (August 2026) a hybrid SWA pool's lines carry no \"Full\" or \"SWA\" "
        "and its SWA line comes first.")


def test_vllm_start_up_log_of_mode_all_run_as_align_begins_with_vllms_fallback():
    from flatkv.presets import load_preset
    from flatkv.strategies.vllm import ALL_AS_ALIGN_LOG
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()  # Qwen3NextForCausalLM: no mode all
    result = _vllm(qwen, mamba_cache_mode="all")
    assert result.extras["log_lines"][0] == ALL_AS_ALIGN_LOG == (
        "Hybrid or mamba-based model detected without support for prefix caching with Mamba "
        "cache 'all' mode: falling back to 'align' mode.")
    assert result.extras["log_lines"][1:] == _vllm(qwen, mamba_cache_mode="align").extras[
        "log_lines"]
    assert ("It counts mamba cache mode align: asked for all, vLLM runs this model in align, "
            "as its first line says.") in app_data.start_up_log_text(result)


def test_vllm_block_chart_tells_padding_layers_and_indexer_keys_apart():
    from flatkv import charts
    from flatkv.presets import load_preset
    lfm2 = load_preset("LFM2-1.2B").profile()
    fig = charts.layout_figure(app_data.vllm_block_segments(_vllm(lfm2), lfm2),
                               x_title="offset in the block", span="block")
    # one legend order on every chart: KV, state, padding, then a padding layer's whole page
    assert [t.name for t in fig.data] == ["KV (full attention)", "conv state", "padding",
                                          "padding layer"]
    assert [t.marker.pattern.shape for t in fig.data][2:] == ["/", "x"]
    assert fig.data[0].hovertemplate.endswith("of the block<extra></extra>")
    v32 = load_preset("DeepSeek-V3.2").profile()
    names = [t.name for t in charts.layout_figure(
        app_data.vllm_block_segments(_vllm(v32), v32)).data]
    assert names == ["KV (full attention)", "indexer keys"]


def test_vllm_block_text_of_a_state_only_model_gives_no_p():
    # 24 state layers of 49,152 + 1,048,576 B: one group, a page one state page; P is nominal
    # (16) in both layouts, so neither is given, nor bytes a token
    profile = CacheProfile(("linear_attention",) * 24, 0, {"conv": 49152, "ssm": 1048576})
    result = _vllm(profile)
    text = app_data.vllm_block_text(result, profile, analyze(
        profile.components(), block_size=16, alignment=16, budget_bytes=80 * 10**9,
        planner="per-component"))
    assert text == (
        "vLLM at these settings (Compare's column): no P (a state-only model's page is one "
        "state page, whatever the tokens), pages of 1,097,728 B in 24 tensors (group_size). A "
        "block id is 24 pages, 26,345,472 B (25.12 MiB), and holds a page of every layer (one "
        "group: no other group's rows to sit beside them). Our block id above: 26,345,472 B "
        "(25.12 MiB), a row for every group.")
    assert 24 * (49_152 + 1_048_576) == 26_345_472


def test_vllm_blocks_add_up_to_its_block_for_every_preset_and_mode():
    from flatkv.presets import list_presets, load_preset
    from flatkv.strategies import StrategyOptions
    drawn = 0
    for name in list_presets():
        profile = load_preset(name).profile()
        for options in ({}, {"mamba_cache_mode": "all"}, {"speculative_tokens": 2},
                        {"vllm_hybrid_manager": False}, {"block_size": 64}):
            result = _vllm(profile, **options)
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


def test_a_vllm_that_would_stop_at_start_up_is_said_to_refuse_not_to_not_apply():
    from flatkv.app_model import profile_for
    from flatkv.strategies import run_strategy
    # Falcon-H1-7B's layers in a class whose config shape passes no num_spec (LFM2's), with 2
    # drafted tokens: its widened state outgrows the page (test_strategies)
    falcon = replace(profile_for("Falcon-H1-7B", None, 1), architectures=("Lfm2ForCausalLM",))
    fails = _vllm(falcon, speculative_tokens=2)
    assert app_data.why_not_label(fails) == "refuses to start"
    assert app_data.why_not_text(fails).startswith(
        "**vLLM v1** refuses to start: it sizes P (1,568) and the page (1,605,632 B)")
    # one request past the budget: vLLM's start-up check (62,500 pages of 65,536 B > 1 MB)
    llama = CacheProfile(("full_attention",) * 2, 2048, {})
    refuses = run_strategy("vllm", llama, budget_bytes=10**6, context_tokens=10**6)
    assert app_data.why_not_text(refuses).startswith(
        "**vLLM v1** refuses to start: one request of 1,000,000 tokens")
    # a layout with no answer for this model still "does not apply"
    aliased = run_strategy("aliased", QWEN35, budget_bytes=10**10, context_tokens=None)
    assert app_data.why_not_text(aliased).startswith(
        "**slab aliasing** does not apply: the model has linear_attention state layers")


def test_sglang_gpu_page_text_names_blackwells_default_page():
    """SGLang 0.5.23 told no --page-size runs pages of 64 tokens on a B200 (TensorRT-LLM's MHA
    and MLA backends), 128 where K and V differ in width (FA4), 1 on Hopper: a note says so
    where the options differ, and with 64 the pool is whole pages of it."""
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    llama = profile_for("Llama-3.1-8B", None, 1)
    options = StrategyOptions()
    assert app_data.sglang_gpu_page_text("B200 192GB", options, llama) == (
        "SGLang 0.5.23 on a B200 runs pages of 64 tokens when not told a page size "
        "(TensorRT-LLM's MHA backend; without speculative decoding) and rounds its pools down "
        "to whole pages: set the SGLang page size to 64 in the engine options to match such a "
        "run's log.")
    assert app_data.sglang_gpu_page_text("H100 80GB", options, llama) == ""
    at_64 = StrategyOptions(sglang_page_size=64)
    assert app_data.sglang_gpu_page_text("B200 192GB", at_64, llama) == ""
    # Llama-3.1-8B keeps 131,072 B a token (32 layers x 8 KV heads x 128 x 2 x bf16): in
    # 10 GiB, 81,920 tokens, already whole pages of 64; a budget a token short loses a page
    r = run_strategy("sglang", llama, budget_bytes=10 * 2**30 - 1, options=at_64)
    assert r.capacity_tokens == (10 * 2**30 // 131_072 - 1) // 64 * 64 == 81_856
    # DeepSeek-V3's MLA: TensorRT-LLM's MLA backend, 64; DeepSeek-V3.2: 64 is its own already
    ds3 = profile_for("DeepSeek-V3", None, 1)
    assert "(TensorRT-LLM's MLA backend;" in app_data.sglang_gpu_page_text("B200 192GB",
                                                                            options, ds3)
    ds32 = profile_for("DeepSeek-V3.2", None, 1)
    assert app_data.sglang_gpu_page_text("B200 192GB", options, ds32) == ""
    # K of 192 and V of 128 a head (MiMo-V2-Flash's shape): FA4, pages of 128
    mimo = CacheProfile(("full_attention",) * 4, 2_560, name="mimo", kv_dtype="bfloat16",
                        kv_tensor_bytes=(1_536, 1_024))
    assert "pages of 128 tokens when not told a page size (FA4, as K and V differ in width" in (
        app_data.sglang_gpu_page_text("B200 192GB", options, mimo))


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


def test_a_mamba2_model_in_align_without_its_checkpoint_block_says_what_later_vllm_keeps():
    # vLLM 0.32+'s MambaMixer2 spec keeps num_prefill_checkpoint_blocks=1: 3 state pages a
    # request in align, where 0.28 to 0.31 (and this default) count 2
    falcon = load_preset("Falcon-H1-7B").profile()
    align = StrategyOptions(mamba_cache_mode="align")
    assert app_data.prefill_checkpoint_text(align, falcon) == (
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.31 did. Since 0.32 vLLM keeps a prefill checkpoint page more for this "
        "model's Mamba2 layers (3 a request): set \"Prefill checkpoint blocks\" to 1 to match a "
        "later log.")
    drafting = replace(align, speculative_tokens=2)  # 2 + 2 drafted, and one more since 0.32
    assert "counts 4 state pages" in app_data.prefill_checkpoint_text(drafting, falcon)
    assert "(5 a request)" in app_data.prefill_checkpoint_text(drafting, falcon)
    # nothing to say: the block kept, another mode, or no Mamba2 class (GDN, a model by hand)
    assert app_data.prefill_checkpoint_text(replace(align, prefill_checkpoint_blocks=1),
                                            falcon) == ""
    assert app_data.prefill_checkpoint_text(StrategyOptions(), falcon) == ""
    assert app_data.prefill_checkpoint_text(
        align, load_preset("Qwen3-Next-80B-A3B").profile()) == ""
    assert app_data.prefill_checkpoint_text(align, replace(falcon, architectures=())) == ""
    # a GDN model, on a GPU whose FlashInfer prefill keeps one (the caller knows the GPU)
    qwen = load_preset("Qwen3-Next-80B-A3B").profile()
    assert app_data.prefill_checkpoint_text(align, qwen, gdn_gpu="H100 80GB") == (
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.32 did. Since 0.33 vLLM keeps a prefill checkpoint page more for this "
        "model's GDN layers on the H100 80GB, whose prefill runs on FlashInfer there (3 a "
        "request): set \"Prefill checkpoint blocks\" to 1 to match a later log.")
    assert app_data.prefill_checkpoint_text(align, falcon, gdn_gpu="H100 80GB").startswith(
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.31 did")  # Mamba2's own rule, whatever the GPU


def test_flats_two_rows_say_why_they_read_the_same():
    # gpt-oss-20b on the H100's 76,968,728,985 B at P 16: both pay 24 layers x 16 x 2,048 =
    # 786,432 B a page id, 76,968,728,985 // 786,432 = 97,870 blocks; packed slabs keep 12
    # slot tensors (12 sliding and 12 full layers, the j-th of each group in one), one per
    # component keeps a tensor per layer, 24
    profile = load_preset("gpt-oss-20b").profile()
    results = [run_strategy(s, profile, budget_bytes=76_968_728_985, context_tokens=131_072)
               for s in ("flat", "per-component", "vllm")]
    assert 76_968_728_985 // (24 * 16 * 2048) == 97_870
    assert app_data.same_flat_figures_text(results) == (
        "FlatKV packed slabs and FlatKV per component read the same: both pay every row of "
        "every layer a page id (786,432 B at P 16), so they hold the same 97,870 blocks. They "
        "differ in tensors: 12 slot tensors (the j-th layer of every group in one) against 24 "
        "tensors, one per component, which can also carry reserved bytes a block (a draft "
        "model's KV).")
    # reserved bytes a block (per component only) set them apart: nothing to explain
    reserved = StrategyOptions(reserved_bytes_per_block=4096)
    apart = [run_strategy(s, profile, budget_bytes=76_968_728_985, context_tokens=131_072,
                          options=reserved) for s in ("flat", "per-component")]
    assert apart[1].num_blocks == 76_968_728_985 // (786_432 + 4096) < 97_870
    assert app_data.same_flat_figures_text(apart) == ""
    assert app_data.same_flat_figures_text(results[1:]) == ""  # packed slabs not run

    # one group of one component a layer (Llama-3.1-8B: 32 layers x 16 x 4,096 B = 2,097,152 B
    # a page id, 76,968,728,985 // 2,097,152 = 36,701 blocks): the same 32 tensors too
    llama = load_preset("Llama-3.1-8B").profile()
    same = [run_strategy(s, llama, budget_bytes=76_968_728_985, context_tokens=131_072)
            for s in ("flat", "per-component")]
    assert 76_968_728_985 // (32 * 16 * 4096) == 36_701
    assert app_data.same_flat_figures_text(same) == (
        "FlatKV packed slabs and FlatKV per component read the same: both pay every row of "
        "every layer a page id (2,097,152 B at P 16), so they hold the same 36,701 blocks, in "
        "the same 32 tensors (a slot holds one layer's rows, as a component does). Only one "
        "tensor per component can also carry reserved bytes a block (a draft model's KV).")
