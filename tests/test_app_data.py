"""The numbers the pages show, derived by hand from SPEC.md's worked example."""

from __future__ import annotations

import csv
import io
import json

import pytest

from flatkv import app_data
from flatkv.analysis import analyze
from flatkv.app_model import EXAMPLES
from flatkv.profile import CacheProfile

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
    assert h.capacity_tokens == 775 * 1056 == 818_400
    assert h.unused_bytes == 80 * 10**9 - 775 * 103_219_200
    # uniform pages pad each of the 36 state rows from 2,146,304 to 2,162,688 B
    assert h.uniform_padding_per_block == 36 * (KV_ROW - STATE_ROW)
    assert h.padding_share == pytest.approx(36 * 16_384 / (BLOCK_BYTES + 36 * 16_384))
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


def test_pages_per_request_and_concurrency():
    # ceil(32,768 / 1,056) = 32 full pages (31 x 1,056 = 32,736 < 32,768), one state page
    per = app_data.pages_per_request(QWEN35, 1056, 32768)
    assert per == {"linear_attention": 1, "full_attention": 32}
    assert app_data.max_concurrency(775, per) == pytest.approx(775 / 33)
    oss = EXAMPLES["gpt-oss-20b"]  # window 128
    assert app_data.pages_per_request(oss, 16, 32768) == {
        "sliding_attention": 127 // 16 + 1 + 1, "full_attention": 2048}
    assert app_data.pages_per_request(oss, 16, 100)["sliding_attention"] == 7  # ceil(100/16)


def test_vllm_anchor_concurrency_formula():
    # SPEC 3.1: 7,162 blocks, P 544, 262,144 tokens: 482 full pages + 3 state groups x 1 page
    assert pytest.approx(14.77, abs=0.005) == 7162 / (-(-262144 // 544) + 3)


def test_page_assignment_hands_ids_out_in_arrival_order():
    pages = app_data.page_assignment(QWEN35, block_size=1056, num_blocks=10, requests=2,
                                     context=2000)
    lin, full = "linear_attention", "full_attention"
    assert pages.owners == (None, (lin, 0), (full, 0), (full, 0), (lin, 1), (full, 1),
                            (full, 1), None, None, None)
    assert pages.per_group == {lin: 2, full: 4} and pages.fits
    tight = app_data.page_assignment(QWEN35, block_size=1056, num_blocks=6, requests=2,
                                     context=2000)
    assert not tight.fits and len(tight.owners) == 6


def test_sweep_candidates():
    assert app_data.block_size_candidates(64) == [1 << k for k in range(13)]
    assert 48 in app_data.block_size_candidates(48)
    b = app_data.budget_candidates(10**9)
    assert b[0] == 10**8 and 10**9 in b and b == sorted(b) and b[-1] <= 2 * 10**9


def test_exports(analysis):
    data = json.loads(app_data.plan_json(analysis, QWEN35))
    assert data["geometry"] == {"block_size": 1056, "block_bytes": 103_219_200,
                                "num_blocks": 775}
    lines = list(csv.DictReader(io.StringIO(app_data.bindings_csv(analysis))))
    assert len(lines) == 84
    assert lines[2] == {"tensor": "flat_slab_0", "slot": "0", "group_id": "full_attention",
                        "layer": "0", "component": "kv", "offset": str(STATE_ROW),
                        "row_offset": "0", "nbytes_per_block": str(KV_ROW),
                        "tensor_nbytes": str(775 * (KV_ROW + STATE_ROW))}
    assert app_data.rows_csv([{"a": 1, "b": 2}]) == "a,b\n1,2\n"


def test_planner_rows_show_their_formulas(analysis):
    row = app_data.planner_row(analysis, QWEN35, 32768)
    assert (row.block_size, row.block_bytes, row.num_blocks, row.capacity_tokens) == (
        1056, 103_219_200, 775, 818_400)
    assert sum(v for _, v in row.breakdown) == 80 * 10**9
    text = "\n".join(row.formulas)
    assert "16 x ceil(ceil(2,146,304 / 2,048) / 16)" in text
    assert "num_blocks = 80,000,000,000 // 103,219,200 = 775" in text
    assert "capacity = 775 x 1,056 = 818,400 tokens" in text
    per = analyze(QWEN35.components(), block_size=64, budget_bytes=80 * 10**9,
                  planner="per-component")
    prow = app_data.planner_row(per, QWEN35, 32768)
    # no equalizing: 12 kv rows at 64 slots + 36 state rows
    assert prow.block_bytes == 12 * 2048 * 64 + 36 * STATE_ROW == 78_839_808
    assert (prow.num_blocks, prow.capacity_tokens) == (1014, 64_896)
