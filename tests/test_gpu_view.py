"""The GPU lab page's pure helpers: sweep planning, table rows, chart series and exports of
benchmark results built by hand (no timing asserted), and no torch at import."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from flatkv import gpu_settings, gpu_view
from flatkv.bench_cli import format_result
from flatkv.gpu.bench import BenchResult, Figure
from flatkv.gpu.pool import AllocationReport
from flatkv.plan import components_from_layers, plan_component_tensors, plan_tensors

PAGE = 1568  # the small plan of tests/gpu/gpu_plans.py: slot rows 864 + 352 + 352 B


def figure(op, impl, payload, gbps, baseline="copy", copy_gbps=20.0, peak=None):
    counted = 2 * payload if baseline == "copy" else payload
    return Figure(op, impl, payload, counted, counted / gbps / 1e9, (counted / gbps / 1e9,),
                  gbps, baseline, gbps / copy_gbps, gbps / peak if peak else None)


def result(pages=8, page=PAGE, gbps=(20.0, 10.0, 16.0), peak=None, cap="max_blocks", block=16,
           layout="slot-major"):
    """A run of ``pages`` pages per call: copy, gather and scatter at ``gbps``, a state copy of
    ``pages`` pairs of three 352-byte state rows at 5 GB/s."""
    call = pages * page
    copy, gather, scatter = gbps
    figures = (
        figure("copy", "copy", call, copy, copy_gbps=copy, peak=peak),
        figure("gather", "torch", call, gather, copy_gbps=copy, peak=peak),
        figure("scatter", "torch", call, scatter, copy_gbps=copy, peak=peak),
        figure("state_copy", "torch", pages * 1056, 5.0, copy_gbps=copy, peak=peak),
    )
    allocation = AllocationReport("cpu", page, 637, 40, 637 * page, 40 * page, (), cap,
                                  layout)
    return BenchResult("cpu", "test cpu", "2.x", None, allocation, page, block, pages, call, 1056,
                       peak, 1, 1, ("torch",), "torch", figures)


def test_the_module_and_the_charts_import_without_torch():
    code = ("import sys, flatkv.gpu_view, flatkv.charts; "
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    # the URL code reads the lab's settings from gpu_settings, not from the page's view code
    code = ("import sys, flatkv.app_state; "
            "sys.exit('flatkv.gpu_view' in sys.modules or 'torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_parse_counts():
    assert gpu_settings.parse_counts(" 16, 4,1 ,4", "pages per call", maximum=20) == (1, 4, 16)
    assert gpu_settings.parse_counts("1_024", "block sizes", maximum=2048) == (1024,)
    with pytest.raises(ValueError, match="pages per call: 'x' is not a whole number"):
        gpu_settings.parse_counts("1, x", "pages per call", maximum=20)
    with pytest.raises(ValueError, match="pages per call: '21' is out of range; give values "
                       "from 1 to 20"):
        gpu_settings.parse_counts("21", "pages per call", maximum=20)
    # a count out of range as typed, not regrouped (10,000,000 reads as another figure)
    with pytest.raises(ValueError, match="^sweep_pages: '1_000_000_0' is out of range; give "
                       "values from 1 to 20$"):
        gpu_settings.parse_counts("1, 1_000_000_0", "sweep_pages", maximum=20)
    with pytest.raises(ValueError, match="block sizes is empty"):
        gpu_settings.parse_counts(" , ", "block sizes", maximum=20)
    # a count grouped by thousands commas read as two (8 and 192): refused, not guessed; a list
    # without spaces whose items are not three digits reads as one
    assert gpu_settings.parse_counts("1,4,16", "pages per call", maximum=20) == (1, 4, 16)
    for text, said in (("8,192", "'8,192'"), ("1, 64,128,256", "'64,128,256'")):
        with pytest.raises(ValueError) as caught:
            gpu_settings.parse_counts(text, "sweep_blocks", maximum=10**6)
        plain = said.strip("'")
        assert str(caught.value) == (
            f"sweep_blocks: {said} reads as one number grouped by commas, where a comma "
            f"separates counts: write {plain.replace(',', '')} for one count, or "
            f"{plain.replace(',', ', ')} for several")
    # ... and the rest of a '1, 024': a leading zero
    with pytest.raises(ValueError) as caught:
        gpu_settings.parse_counts("1, 024", "sweep_blocks", maximum=10**6)
    assert str(caught.value) == ("sweep_blocks: '024' has a leading zero: write the count "
                                 "without it, e.g. 24")


def test_check_counts_and_counts_text():
    assert gpu_settings.check_counts((1, 4), "pages per call", maximum=4) == (1, 4)
    with pytest.raises(ValueError, match="pages per call: 8 is out of range; give values from "
                       "1 to 4"):
        # a link's list, a small pool
        gpu_settings.check_counts((1, 8), "pages per call", maximum=4)
    assert gpu_settings.counts_text((1, 4, 16)) == "1, 4, 16"
    text = gpu_settings.counts_text((1, 4, 16))
    assert gpu_settings.parse_counts(text, "x", maximum=16) == (1, 4, 16)


def test_pick_device_prefers_the_first_gpu_and_falls_back_with_a_notice():
    gpus = ("cpu", "cuda:0", "cuda:1")
    assert gpu_view.pick_device(None, gpus) == ("cuda:0", None)
    assert gpu_view.pick_device(None, ("cpu",)) == ("cpu", None)
    assert gpu_view.pick_device("cuda", gpus) == ("cuda:0", None)
    assert gpu_view.pick_device("cpu", gpus) == ("cpu", None)
    assert gpu_view.pick_device("cuda:1", gpus) == ("cuda:1", None)
    assert gpu_view.pick_device("cuda:1", ("cpu",)) == (
        "cpu", "device='cuda:1': this machine has no cuda:1 (it has cpu); using cpu.")
    assert gpu_view.pick_device("cuda:2", gpus)[0] == "cuda:0"
    with pytest.raises(ValueError, match="device='tpu' is not a device: give cpu, cuda or cuda:N"):
        gpu_settings.check_device_name("device", "tpu")
    # a name with a line break after it (a link's cpu%0A), digits other than 0-9, or an index
    # past what int() reads: no device, where '$' and '\\d' let them pass as cpu or cuda:N
    for text in ("cpu\n", "cuda:1\n", "cuda:\u0663", "cuda:" + "9" * 5000):
        with pytest.raises(ValueError, match="is not a device: give cpu, cuda or cuda:N"):
            gpu_settings.check_device_name("device", text)


def test_pick_kernels_keeps_what_runs_here():
    assert gpu_view.pick_kernels(None, ("torch",)) == ("torch",)
    assert gpu_view.pick_kernels(None, ("torch", "triton")) == ("torch", "triton")
    assert gpu_view.pick_kernels(("triton",), ("torch", "triton")) == ("triton",)
    assert gpu_view.pick_kernels(("triton",), ("torch",)) == ("torch",)  # a CUDA link, no CUDA


def test_pages_per_call_values():
    assert gpu_view.pages_per_call_values(10) == (1, 2, 4)  # half the pool: 5
    assert gpu_view.pages_per_call_values(2) == (1,)
    # 4,096 blocks: 1 .. 2,048 is 12 powers (indices 0 .. 11), too many for 5 points: every
    # ceil(11 / 4) = 3rd down from 2**11 (2**11, 2**8, 2**5, 2**2), and 1
    assert gpu_view.pages_per_call_values(4096) == (1, 4, 32, 256, 2048)
    # 64 blocks: 1 .. 32 is 6 powers: every 2nd down from 32, and 1 (rounding evenly spaced
    # indices gave 1, 2, 4, 16, 32: no 8)
    assert gpu_view.pages_per_call_values(64) == (1, 2, 8, 32)
    assert gpu_view.pages_per_call_values(128) == (1, 4, 16, 64)
    # 16,384 blocks: indices 13, 9, 5, 1 by 4; 2**1 sits half a stride or less from 1: left out
    assert gpu_view.pages_per_call_values(16384) == (1, 32, 512, 8192)


def test_block_size_values():
    assert gpu_view.block_size_values(64, 64, top=1 << 20) == (16, 32, 64, 128, 256)
    assert gpu_view.block_size_values(1, 1, top=1 << 20) == (1, 2, 4)
    assert gpu_view.block_size_values(512, 512, top=1024) == (128, 256, 512, 1024)
    # a hybrid model: block 16 equalizes to P = 544; smaller requests give about P again
    assert gpu_view.block_size_values(16, 544, top=1 << 20) == (16, 1088, 2176)
    assert gpu_view.block_size_values(16, 544, top=2000) == (16, 1088)


def test_plans_for_block_sizes_keeps_each_page_once():
    # LLLF, KV 64 B per token slot, state row conv 96 + ssm 256 = 352 B: ceil(352 / 64) = 6 tokens.
    comps = components_from_layers(layer_types=["linear_attention"] * 3 + ["full_attention"],
                                   kv_bytes_per_slot=64, state_const_bytes={"conv": 96, "ssm": 256})
    swept = gpu_view.plans_for_block_sizes(comps, [2, 4, 8, 16384], alignment=None,
                                           budget_bytes=1_000_000, planner="packed")
    # block 2: P = 6 (a multiple of 2); block 4: P = 8; block 8: P = 8 again, skipped;
    # block 16,384: one KV row is 64 x 16,384 = 1,048,576 B, more than the budget
    assert [p.geometry.block_size for p in swept.plans] == [6, 8]
    assert swept.block_sizes == (2, 4)
    # a page of 3 x 352 + 8 x 64 = 1,568 B
    assert swept.skipped[0] == "block size 8: P = 8, the same 1,568 B page as block size 4"
    # at P 16,384 a block is 3 x 352 + 16,384 x 64 = 1,049,632 B; two of them 2,099,264 B
    assert swept.skipped[1] == (
        "block size 16,384: the budget of 1,000,000 B holds 0 blocks of 1,049,632 B (one row in "
        "every slot); a plan needs at least 2: give a budget of at least 2,099,264 B")
    # a state-only model's page does not grow with P: one page, timed once
    state_only = components_from_layers(layer_types=["linear_attention"] * 2, kv_bytes_per_slot=0,
                                        state_const_bytes={"conv": 96, "ssm": 256})
    swept = gpu_view.plans_for_block_sizes(state_only, [4, 16, 64], alignment=None,
                                           budget_bytes=1_000_000, planner="per-component")
    assert swept.block_sizes == (4,) and swept.plans[0].geometry.block_bytes == 2 * 352
    assert swept.skipped[1] == "block size 64: P = 64, the same 704 B page as block size 4"


def test_cap_reason_text():
    assert gpu_view.cap_reason_text("max_blocks", 40) == "your cap of 40 blocks"
    assert gpu_view.cap_reason_text("default pool", 256) == (
        "the default pool size (512.00 MiB on the CPU, 8.00 GiB on CUDA, within 40% of free "
        "memory)")
    assert gpu_view.cap_reason_text("plan", 637) == "the plan's own size (the whole plan fits)"


def raw_gather_baseline(rows: list[dict]) -> str:
    (gather,) = [r for r in rows if r["operation"] == "gather"]
    return gather["baseline"]


def test_result_rows_show_bytes_and_shares():
    rows = gpu_view.result_rows([result()])
    # the screen names operations briefly (the charts in full); the CSV keeps the JSON's keys
    assert [(r["operation"], r["kernel"]) for r in rows] == [
        ("copy", "copy"), ("gather", "torch"), ("scatter", "torch"), ("state rows", "torch")]
    assert [r["operation"] for r in gpu_view.result_rows([result()], text=False)] == [
        "copy", "gather", "scatter", "state_copy"]
    assert gpu_view.result_rows([result()], text=False)[1]["implementation"] == "torch"
    assert gpu_view.value_span([4]) == "4" and gpu_view.value_span([8, 1, 2]) == "1 to 8"
    gather = rows[1]
    # a page-bytes sweep plans each block size anew: each row says which P it ran
    assert list(gather)[:4] == ["P (tokens)", "page bytes", "pages", "pool"]
    # the figures before the timings and bytes behind them (a scrolled table shows them), under
    # short headers; the CSV keeps the long ones
    assert list(gather)[4:] == ["operation", "kernel", "GB/s", "share", "baseline",
                                "median (ms)", "rounds (ms)", "bytes per call",
                                "bytes counted"]
    assert list(gpu_view.result_rows([result()], text=False)[1])[:8] == [
        "P (tokens)", "page bytes", "pages per call", "pool layout", "operation",
        "implementation", "GB/s", "share of baseline"]
    # the median's unit in its header (not in a tooltip), the rounds' tooltip says of what
    assert set(gpu_view.RESULT_HELP) == {"pages", "share", "rounds (ms)", "peak",
                                         "page-major / slot-major"}
    assert gather["pool"] == "slot"
    assert gpu_view.result_rows([result(layout="page-major")])[0]["pool"] == "page"
    assert gpu_view.result_rows([result(layout="page-major")], text=False)[0][
        "pool layout"] == "page-major"
    assert (gather["P (tokens)"], gather["page bytes"]) == (16, PAGE)
    assert gpu_view.result_rows([result(block=160)])[0]["P (tokens)"] == 160
    assert gather["bytes per call"] == 8 * PAGE == 12_544  # pages per call x page bytes
    assert gather["bytes counted"] == 25_088  # read + written
    # a share just short of the baseline's does not read as the baseline's own 100.0%:
    # 19.992 / 20 GB/s = 99.96% of copy, a decimal more than the baseline's 100.0%
    near = gpu_view.result_rows([result(gbps=(20.0, 19.992, 16.0))])
    assert [row["share"] for row in near[:2]] == ["100.0%", "99.96%"]
    from flatkv.bench_cli import format_result  # the bench command's lines, alike

    lines = format_result(result(gbps=(20.0, 19.992, 16.0), peak=20.0)).splitlines()
    assert [line.split("  ")[-1].strip() for line in lines if line.startswith(
        ("copy ", "gather "))] == ["100.0% of copy, 100.0% of nominal peak",
                                   "99.96% of copy, 99.96% of nominal peak"]
    # the baseline in the operation column's words, as the row that timed it names it
    assert (gather["GB/s"], gather["share"], gather["baseline"]) == (10.0, "50.0%", "copy")
    assert raw_gather_baseline(gpu_view.result_rows([result()], text=False)) == "copy"
    assert rows[3]["bytes per call"] == 8 * 1056
    assert gather["median (ms)"] == round(25_088 / 10e9 * 1e3, 3)
    assert gather["rounds (ms)"] == f"{gather['median (ms)']:.3f} (one round)"  # one sample
    from dataclasses import replace

    spread = replace(result(), figures=(replace(result().figures[1], samples_s=(0.003, 0.0011,
                                                                                 0.002)),))
    assert gpu_view.result_rows([spread])[0]["rounds (ms)"] == "1.100 to 3.000"
    raw_gather = gpu_view.result_rows([result()], text=False)[1]
    assert raw_gather["min (ms)"] == raw_gather["max (ms)"] == gather["median (ms)"]
    assert "peak" not in gather  # no device with a known peak
    peaked = gpu_view.result_rows([result(peak=40.0)])
    assert peaked[1]["peak"] == "25.0%"  # 10 of 40 GB/s
    # on the screen after the median (before it, a CUDA run's median sat past 540 px at
    # 1000 px), in the CSV after the baseline, which the share beside it is of
    assert list(peaked[1])[8:11] == ["baseline", "median (ms)", "peak"]
    raw = gpu_view.result_rows([result(peak=40.0)], text=False)
    assert raw[1]["share of baseline"] == 0.5 and raw[1]["share of nominal peak"] == 0.25
    assert list(raw[1])[8:11] == ["baseline", "share of nominal peak", "median (ms)"]


def test_allocation_rows_one_per_plan():
    rows = gpu_view.allocation_rows([result(pages=2), result(pages=4),
                                     result(page=3136, cap="plan")])
    assert [(r.page_bytes, r.allocated_bytes, r.limited_by) for r in rows] == [
        (PAGE, 40 * PAGE, "your cap of 40 blocks"),
        (3136, 40 * 3136, "the plan's own size (the whole plan fits)")]
    assert rows[0].table_row()["planned bytes"] == 637 * PAGE
    # each plan's P beside its page bytes: a page-bytes sweep's results table leaves it here
    assert list(rows[0].table_row())[:3] == ["page bytes", "P (tokens)", "planned blocks"]
    assert [r.table_row()["P (tokens)"] for r in rows] == [16, 16]


def test_bandwidth_series_over_pages_and_page_bytes():
    runs = [result(pages=4, gbps=(20.0, 12.0, 14.0)), result(pages=1, gbps=(18.0, 6.0, 9.0))]
    series = gpu_view.bandwidth_series(runs, "pages_per_call")
    assert [s.name for s in series] == ["copy (baseline)", "gather (torch)",
                                        "scatter (torch)", "state rows (torch)"]
    gather = series[1]
    assert gather.x == (1, 4) and gather.gbps == (6.0, 12.0)  # sorted by pages per call
    assert gather.call_bytes == (PAGE, 4 * PAGE)
    assert series[0].is_baseline and not gather.is_baseline and series[3].kind == "state_copy"
    # each series keeps its figures' baseline (these hand-built ones compare the state-row copy
    # with the device copy); built without one, a move falls back to BASELINE_OF's
    assert [s.compared_with for s in series] == ["copy"] * 4
    assert gpu_view.Series("state_copy", "torch", (1,), (4.0,), (1056,)).compared_with == (
        "state_bytes_copy")
    assert gpu_view.OPERATION_KIND["state_bytes_copy"] == "state_copy"  # the move's colour
    by_page = gpu_view.bandwidth_series([result(page=3136), result()], "page_bytes")
    assert by_page[0].x == (PAGE, 3136)
    with pytest.raises(ValueError, match="x must be"):
        gpu_view.bandwidth_series(runs, "tokens")


def test_bandwidth_series_name_the_layout_when_a_run_timed_both():
    # both layouts of one call share the copy (same rounds): one baseline series
    runs = [result(pages=1, gbps=(20.0, 8.0, 9.0)), result(pages=1, gbps=(20.0, 16.0, 17.0),
                                                           layout="page-major")]
    series = gpu_view.bandwidth_series(runs, "pages_per_call")
    assert [s.name for s in series] == [
        "copy (baseline)", "gather (torch, slot-major)", "scatter (torch, slot-major)",
        "state rows (torch, slot-major)", "gather (torch, page-major)",
        "scatter (torch, page-major)", "state rows (torch, page-major)"]
    assert series[0].gbps == (20.0,) and series[4].gbps == (16.0,)
    # one layout: the caption says which, the names stay short
    assert gpu_view.bandwidth_series(runs[1:], "pages_per_call")[1].name == "gather (torch)"
    # allocation rows: the same blocks and bytes in both layouts, so one row per plan
    assert len(gpu_view.allocation_rows(runs)) == 1
    # page-major against slot-major: one row per move, none for the shared copy
    rows = gpu_view.layout_rows(runs)
    assert [(r["operation"], r["slot-major GB/s"], r["page-major GB/s"],
             r["page-major / slot-major"]) for r in rows] == [
        ("gather", 8.0, 16.0, "2.00x"), ("scatter", 9.0, 17.0, "1.89x"),
        ("state rows", 5.0, 5.0, "1.00x")]
    assert gpu_view.layout_rows(runs, text=False)[0]["page-major / slot-major"] == 2.0
    # a ratio that is not one does not read as one: 9.96 / 10.0 = 0.996, not "1.00x"
    close = [result(pages=1, gbps=(20.0, 10.0, 9.0)),
             result(pages=1, gbps=(20.0, 9.96, 9.0), layout="page-major")]
    assert gpu_view.layout_rows(close)[0]["page-major / slot-major"] == "0.996x"
    assert list(rows[0])[3:7] == ["operation", "kernel", "page-major / slot-major",
                                  "rounds apart"]
    assert gpu_view.layout_rows(runs[:1]) == []  # one layout: nothing to set side by side
    # one round each cannot tell: any two different timings would be "apart"
    assert [r["rounds apart"] for r in rows] == [
        "too few rounds to tell (1): time 5 or more rounds"] * 3
    assert [r["rounds apart"] for r in gpu_view.layout_rows(runs, text=False)] == [None] * 3
    # ... which the screen says once, under the table, not in a column of its own
    shown, note = gpu_view.apart_said_once(rows)
    assert [list(r) for r in shown] == [[k for k in rows[0] if k != "rounds apart"]] * 3
    assert note == "With 1 round a layout, too few to tell whether they overlap: time 5 or more."

    def gather_rounds(run, samples):
        return replace(run, figures=(run.figures[0], replace(run.figures[1], samples_s=samples),
                                     *run.figures[2:]))

    # five rounds each: 1.0 to 1.2 ms against 2.0 to 2.2 ms are apart (by chance 2 orders of
    # C(10, 5) = 252)
    apart = [gather_rounds(runs[0], (1.0e-3, 1.2e-3, 1.1e-3, 1.05e-3, 1.15e-3)),
             gather_rounds(runs[1], (2.0e-3, 2.2e-3, 2.1e-3, 2.05e-3, 2.15e-3))]
    assert gpu_view.layout_rows(apart)[0]["rounds apart"] == "yes"
    assert gpu_view.apart_said_once(gpu_view.layout_rows(apart)) == (
        gpu_view.layout_rows(apart), "")  # rows that can tell keep the column
    assert gpu_view.layout_rows(apart, text=False)[0]["rounds apart"] is True
    # rounds of 1.0 to 3.0 ms against 2.4 to 2.6 ms: the ratio is inside the noise
    noisy = [gather_rounds(runs[0], (1.0e-3, 3.0e-3, 2.0e-3, 1.5e-3, 2.8e-3)),
             gather_rounds(runs[1], (2.5e-3, 2.4e-3, 2.6e-3, 2.45e-3, 2.55e-3))]
    assert gpu_view.layout_rows(noisy)[0]["rounds apart"] == "no: the rounds overlap"
    three = [gather_rounds(runs[0], (1.0e-3, 1.1e-3, 1.2e-3)),
             gather_rounds(runs[1], (2.0e-3, 2.1e-3, 2.2e-3))]  # apart by chance 1 time in 10
    assert gpu_view.layout_rows(three)[0]["rounds apart"] == (
        "too few rounds to tell (3): time 5 or more rounds")
    # the gather row's 3 rounds beside the others' 1: the column stays, each row saying its
    # own; its row alone is said once, in the plural
    assert gpu_view.apart_said_once(gpu_view.layout_rows(three))[1] == ""
    assert gpu_view.apart_said_once(gpu_view.layout_rows(three)[:1])[1] == (
        "With 3 rounds a layout, too few to tell whether they overlap: time 5 or more.")
    # the screen drops columns one run repeats on every row; a sweep's vary, and stay
    shown = gpu_view.varying_columns(gpu_view.result_rows(runs))
    assert "page bytes" not in shown[0] and shown[0]["operation"] == "copy"
    swept = gpu_view.varying_columns(gpu_view.result_rows([result(pages=1), result(pages=4)]))
    assert {r["pages"] for r in swept} == {1, 4} and "P (tokens)" not in swept[0]
    # a page-bytes sweep: one P to each page size, so P is left to the pools' table and the
    # baseline ends inside 540 px; a page size run at two P (a state-only model) keeps it
    by_bytes = gpu_view.varying_columns(gpu_view.result_rows(
        [result(block=16), result(page=2 * PAGE, block=32)]))
    assert list(by_bytes[0])[:2] == ["page bytes", "operation"]
    assert {r["page bytes"] for r in by_bytes} == {PAGE, 2 * PAGE}
    same_bytes = gpu_view.varying_columns(gpu_view.result_rows(
        [result(block=16), result(block=32)]))
    assert list(same_bytes[0])[0] == "P (tokens)"
    table = gpu_view.result_rows(runs)
    assert [(r["pool"], r["operation"]) for r in table] == [
        ("both", "copy"), ("slot", "gather"), ("slot", "scatter"), ("slot", "state rows"),
        ("page", "gather"), ("page", "scatter"), ("page", "state rows")]


def cuda_result(layout="slot-major"):
    """A CUDA run of an H200 with state rows, both kernels and the host mirror: every operation
    the table can name, GB/s of four digits, a known peak (figures made up)."""
    call, state = 8 * PAGE, 8 * 1056
    figures = (
        figure("copy", "copy", call, 3012.5, copy_gbps=3012.5, peak=4800.0),
        figure("gather", "torch", call, 1234.56, copy_gbps=3012.5, peak=4800.0),
        figure("gather", "triton", call, 2345.67, copy_gbps=3012.5, peak=4800.0),
        figure("scatter", "torch", call, 1111.11, copy_gbps=3012.5, peak=4800.0),
        figure("scatter", "triton", call, 2222.22, copy_gbps=3012.5, peak=4800.0),
        figure("state_bytes_copy", "copy", state, 100.0, baseline="state_bytes_copy",
               copy_gbps=100.0, peak=4800.0),
        figure("state_copy", "torch", state, 80.0, baseline="state_bytes_copy",
               copy_gbps=100.0, peak=4800.0),
        figure("pinned_d2h", "copy", call, 52.1, baseline="pinned_d2h", copy_gbps=52.1),
        figure("d2h", "torch", call, 48.2, baseline="pinned_d2h", copy_gbps=52.1),
        figure("pinned_h2d", "copy", call, 53.4, baseline="pinned_h2d", copy_gbps=53.4),
        figure("h2d", "torch", call, 49.9, baseline="pinned_h2d", copy_gbps=53.4),
    )
    run = result(layout=layout, peak=4800.0)
    return replace(run, device="cuda", device_name="NVIDIA H200", figures=figures)


def shown_widths(rows: list[dict]) -> dict[str, int]:
    """Each column's width as the page's table sizes it (its tooltip's icon included)."""
    from app_pages._frame import _shown_number, column_width

    return {c: column_width(c, [v if isinstance(v, str) else _shown_number(v)
                                for v in (r[c] for r in rows) if v is not None],
                            c in gpu_view.RESULT_HELP) for c in rows[0]}


def test_a_cuda_runs_table_shows_its_figures_through_the_median_at_1000_px():
    """On CUDA the host mirror's names ("pinned copy from host": 166 px in the operation and
    the baseline columns each) put the median of a state hybrid's run past the 540 px main
    column, and with both pool layouts ("pool layout": 98 px more) its baseline too. Under the
    table's short names (OPERATION_NAMES, said in full under it) the median ends inside it
    for one layout, and the baseline for both."""
    from app_pages._frame import MAIN_COLUMN_PX

    rows = gpu_view.varying_columns(gpu_view.result_rows([cuda_result()]))
    columns = list(rows[0])
    read = columns[:columns.index("median (ms)") + 1]
    assert read == ["operation", "kernel", "GB/s", "share", "baseline", "median (ms)"]
    widths = shown_widths(rows)
    assert sum(widths[c] for c in read) == 506 <= MAIN_COLUMN_PX, widths
    # 92 + 64 + 78 + 82 + 92 + 98: "state copy" and "state rows" the longest names; the
    # median's 11 characters x 6.8 px + 24 px, with no tooltip
    assert [widths[c] for c in read] == [92, 64, 78, 82, 92, 98]
    assert [r["operation"] for r in rows] == [
        "copy", "gather", "gather", "scatter", "scatter", "state copy", "state rows",
        "D2H copy", "to host", "H2D copy", "from host"]
    assert {r["baseline"] for r in rows} == {"copy", "state copy", "D2H copy", "H2D copy"}
    assert rows[-1]["GB/s"] == 49.9 and rows[0]["GB/s"] == 3012.5
    # both layouts: the pool column (51 px: "pool", "both") first; through the baseline
    # inside the column
    both = gpu_view.varying_columns(gpu_view.result_rows(
        [cuda_result(), cuda_result("page-major")]))
    assert [(r["pool"], r["operation"]) for r in both][:3] == [
        ("both", "copy"), ("slot", "gather"), ("slot", "gather")]
    assert {r["pool"] for r in both} == {"both", "slot", "page"}
    widths = shown_widths(both)
    columns = list(both[0])
    assert columns[:7] == ["pool", "operation", "kernel", "GB/s", "share", "baseline",
                           "median (ms)"]
    assert sum(widths[c] for c in columns[:6]) == 459 <= MAIN_COLUMN_PX
    # every short name in full under the table, each once, in the rows' order
    assert gpu_view.table_names_text([cuda_result(), cuda_result("page-major")]) == (
        "In the table and the chart, copy is torch's copy_ of the same bytes on the device; "
        "gather and scatter move pages by page id out of the pool and back; state copy is a "
        "copy of as many bytes as the state rows; state rows is the state-row copy (a page's "
        "state rows to other page ids); D2H and H2D copy are one pinned copy of the same "
        "bytes to and from the host; to host and from host move pages to and from a pinned "
        "host buffer; pool slot and page are the slot-major and page-major pools, both a "
        "baseline timed once for the two.")
    # the CSV keeps the keys and the long layout names
    raw = gpu_view.result_rows([cuda_result(), cuda_result("page-major")], text=False)
    assert {r["pool layout"] for r in raw} == {"shared", "slot-major", "page-major"}
    assert {r["operation"] for r in raw} >= {"pinned_h2d", "h2d", "state_bytes_copy"}


def test_pool_text_and_sweep_title_say_what_a_run_holds():
    assert gpu_view.pool_text(8, 131_072, 1) == (
        "A run allocates 8 blocks x 131,072 B = 1.00 MiB, plus two call-sized buffers (staging "
        "and the copy's).")
    assert "= 1.00 MiB per pool layout, 2.00 MiB for both, plus" in gpu_view.pool_text(
        8, 131_072, 2)  # both layouts: "for all 2" read oddly
    assert "= 1.00 MiB per pool layout, 3.00 MiB for all 3, plus" in gpu_view.pool_text(
        8, 131_072, 3)
    assert gpu_view.pool_text(4096, 131_072, 1, capped_by_user=False).startswith(
        "A run allocates up to 4,096 blocks x 131,072 B = 512.00 MiB")
    assert gpu_view.pool_text(1, 131_072, 1).startswith("A run allocates 1 block x 131,072 B")
    # 8 pages of 1,568 B and of 3,136 B: pages per call held, bytes per call moved
    mixed = [result(pages=8), result(pages=8, page=3136)]
    assert gpu_view.sweep_title(mixed, "page bytes") == (
        "Bandwidth vs page bytes, 8 pages per call (12.25 KiB to 24.50 KiB)")
    same = [result(pages=8, page=3136), result(pages=16)]  # 25,088 B per call both
    assert gpu_view.sweep_title(same, "page bytes") == (
        "Bandwidth vs page bytes, 24.50 KiB per call (8 to 16 pages)")
    assert gpu_view.sweep_title(same[:1], "page bytes") == (
        "Bandwidth vs page bytes, 24.50 KiB per call")
    assert gpu_view.sweep_title([result(pages=2), result(pages=4, page=3136)],
                                "page bytes").endswith("3.06 KiB to 12.25 KiB per call")
    # a pool of one or two blocks sweeps page bytes a page a call: "1 page per call"
    assert gpu_view.sweep_title([result(pages=1), result(pages=1, page=3136)], "page bytes") == (
        "Bandwidth vs page bytes, 1 page per call (1.53 KiB to 3.06 KiB)")


def test_exports():
    settings = gpu_view.LabSettings("cpu", ("torch",), ("slot-major",), 1, 40, (8,), (),
                                    "one run")
    run = gpu_view.LabRun((result(),), "tiny", ("tiny", None), 0.5, settings)
    data = json.loads(gpu_view.results_json(run))
    assert (data["model"], data["sweep"], data["max_blocks"]) == ("tiny", "one run", 40)
    assert data["results"][0]["gather_gbps"] == 10.0
    assert data["results"][0]["call_bytes"] == 12_544
    rows = list(csv.DictReader(io.StringIO(gpu_view.results_csv(run.results))))
    assert rows[1]["operation"] == "gather" and rows[1]["bytes per call"] == "12544"
    assert rows[1]["share of baseline"] == "0.5"
    assert "layouts" not in data  # one layout timed: nothing side by side
    # both layouts timed: the JSON sets them side by side as the page does (gather 10 vs 16)
    both = gpu_view.LabRun((result(), result(gbps=(20.0, 16.0, 18.0), layout="page-major")),
                           "tiny", ("tiny", None), 0.5, settings)
    layouts = json.loads(gpu_view.results_json(both))["layouts"]
    assert [(r["operation"], r["page-major / slot-major"]) for r in layouts] == [
        ("gather", 1.6), ("scatter", 18.0 / 16.0), ("state_copy", 1.0)]
    assert layouts[0]["rounds apart"] is None  # one round each cannot tell


def test_summary_keeps_the_state_copy_when_triton_is_preferred():
    from dataclasses import replace

    base = result()
    triton_gather = figure("gather", "triton", 8 * PAGE, 12.0, copy_gbps=20.0)
    fused = replace(base, implementations=("torch", "triton"), preferred="triton",
                    figures=(*base.figures, triton_gather))
    out = fused.summary()
    assert out["gather_gbps"] == 12.0  # the preferred (fused) mover's
    assert out["state_copy_gbps"] == 5.0  # torch's, the only state-row copy there is
    assert fused.figure("state_copy", "triton") is None  # asked by name: none


def test_a_run_is_stale_when_the_planner_changes_though_p_and_block_bytes_do_not():
    # Qwen3-Next-like: 12 x (3 GDN + 1 full); packed slabs (36 slots: slot j holds GDN layer j
    # and, for j < 12, full layer j) and one tensor per component share P and block bytes, so
    # a geometry key would call an old run current
    comps = components_from_layers(
        layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 12,
        kv_bytes_per_slot=1024, state_const_bytes={"conv": 24576, "ssm": 524288})
    packed = plan_tensors(comps, block_size=16, alignment=16, budget_bytes=10**9)
    each = plan_component_tensors(comps, block_size=packed.geometry.block_size,
                                  budget_bytes=10**9)
    assert packed.geometry == each.geometry
    assert (len(packed.tensors), len(each.tensors)) == (36, 84)  # 36 x (conv, ssm) + 12 KV
    assert gpu_view.plan_key("m", packed) != gpu_view.plan_key("m", each)
    assert gpu_view.plan_key("m", packed) == gpu_view.plan_key(
        "m", plan_tensors(comps, block_size=16, alignment=16, budget_bytes=10**9))
    assert gpu_view.plan_key("m", packed) != gpu_view.plan_key("other", packed)
    # what the page says of a kept run: current, another plan, other settings
    settings = gpu_view.LabSettings("cpu", ("torch",), ("slot-major",), 3, None, (None,),
                                    (packed,), "one run")
    run = gpu_view.LabRun((result(),), "m", gpu_view.plan_key("m", packed), 0.5, settings)
    assert gpu_view.stale_text(run, "m", packed, settings) == ""
    assert gpu_view.stale_text(run, "m", packed, None) == ""  # an entry rejected: cannot tell
    assert gpu_view.stale_text(run, "m", each, settings).startswith(
        "These results are for an earlier model or plan")
    more_rounds = gpu_view.LabSettings("cpu", ("torch",), ("slot-major",), 5, None, (None,),
                                       (packed,), "one run")
    assert gpu_view.stale_text(run, "m", packed, more_rounds).startswith(
        "These results are for other run settings")


def test_a_kept_run_says_what_it_measured_on():
    settings = gpu_view.LabSettings("cpu", ("torch",), ("slot-major", "page-major"), 1, 40,
                                    (8,), (), "one run")
    both = (result(layout="page-major"), result())
    run = gpu_view.LabRun(both, "a*b", ("a*b", None), 1.5, settings)
    # the name as typed (no Markdown emphasis), the layouts in their usual order
    assert gpu_view.run_caption(run) == (
        "a\\*b on cpu (test cpu) · torch 2.x · slot-major and page-major pools · 1 timed "
        "round after 1 warm-up · 1.5 s")
    # a triton that timed nothing (installed beside torch on a CPU) is not what it ran on
    untimed = replace(result(), triton_version="3.9.0")
    assert untimed.versions_text == "torch 2.x"
    assert format_result(untimed).splitlines()[0] == "device  cpu (test cpu), torch 2.x"
    timed = replace(untimed, implementations=("torch", "triton"))
    assert timed.versions_text == "torch 2.x, triton 3.9.0"
    assert format_result(timed).splitlines()[0].endswith("torch 2.x, triton 3.9.0")
    # 8 pages of 1,568 B
    assert gpu_view.bars_title(both) == (
        "Bandwidth, 8 pages of 1.53 KiB per call, slot-major vs page-major")
    one = [replace(r, pages_per_call=1) for r in both]  # one page a call: no plural
    assert gpu_view.bars_title(one).startswith("Bandwidth, 1 page of 1.53 KiB per call")


def _rounds(run, **samples_ms):
    """``run`` with the timed rounds of the figures named (operation=ms, ...) replaced."""
    return replace(run, figures=tuple(
        replace(f, samples_s=tuple(ms / 1e3 for ms in samples_ms[f.operation]))
        if f.operation in samples_ms else f for f in run.figures))


def test_noise_text_names_the_figures_whose_rounds_spread_widely():
    # rounds built by hand: no timing here. Every figure within 1.5x: nothing to say
    quiet = _rounds(result(), copy=(1.0, 1.2, 1.5), gather=(2.0, 2.9), scatter=(3.0,) * 5)
    assert gpu_view.noisy_figures([quiet]) == [] and gpu_view.noise_text([quiet]) == ""
    # 1.5x exactly is not over it; a single round says nothing about spread
    assert gpu_view.noise_text([_rounds(result(), gather=(2.0, 3.0))]) == ""
    noisy = _rounds(result(), copy=(4.955, 6.0, 15.29), gather=(2.0, 3.1),
                    state_copy=(1.0, 1.0, 2.0))
    figures = gpu_view.noisy_figures([noisy])
    assert [(n.name, round(n.spread, 2)) for n in figures] == [
        ("copy (baseline)", 3.09), ("state rows (torch)", 2.0),
        ("gather (torch)", 1.55)]  # widest first
    assert gpu_view.noise_text([noisy]) == (
        "Noisy: copy (baseline) rounds spread from 4.955 to 15.290 ms (3.09x); "
        "state rows (torch) rounds spread from 1.000 to 2.000 ms (2.00x); gather (torch) "
        "rounds spread from 2.000 to 3.100 ms (1.55x). Medians this unsteady can differ by as "
        "much in the next run, so a difference between figures smaller than that may be "
        "noise: rerun, or raise Timed rounds.")
    # past three, the rest are counted; a threshold of one's own
    four = _rounds(noisy, scatter=(1.0, 1.9))
    assert gpu_view.noise_text([four]).count("rounds spread") == 3
    assert "; 1 more figure over 1.5x." in gpu_view.noise_text([four])
    # fewer than three: no count of the rest (it read "-2 more figures" on the GPU lab)
    one = gpu_view.noise_text([noisy], threshold=2.5)
    assert one.startswith("Noisy: copy (baseline) rounds spread from 4.955 to 15.290 ms "
                          "(3.09x). Medians")
    assert "more figure" not in one


def test_noise_text_names_the_sweeps_point_and_counts_a_shared_baseline_once():
    runs = [_rounds(result(pages=1), gather=(1.0, 2.0)), _rounds(result(pages=4))]
    assert [n.name for n in gpu_view.noisy_figures(runs)] == [
        "gather (torch) at 1 page per call"]
    by_page = [_rounds(result(page=3136), scatter=(1.0, 3.0)), result()]
    assert [n.name for n in gpu_view.noisy_figures(by_page)] == [
        "scatter (torch) at 3.06 KiB pages"]
    # both layouts in the same rounds: the copy they share once, each layout's move named
    both = [_rounds(result(), copy=(1.0, 2.0), gather=(1.0, 2.0)),
            _rounds(result(layout="page-major"), copy=(1.0, 2.0), gather=(1.0, 2.0))]
    assert [n.name for n in gpu_view.noisy_figures(both)] == [
        "copy (baseline)", "gather (torch, slot-major)", "gather (torch, page-major)"]


def test_a_move_faster_than_its_copy_baseline_says_the_baseline_ran_slow():
    # figures built by hand, no timing: bench --preset gpt-oss-20b --device cpu printed a gather
    # of 9.75 GB/s, 9.75 / 6.66 = 146.4% of its copy, and said nothing of it
    cold = result(gbps=(6.66, 9.75, 6.0))
    assert round(9.75 / 6.66, 4) == 1.464
    said = gpu_view.over_baseline_text([cold])
    assert said == (
        "Baseline slow: gather (torch) at 146.4% of copy. A page move should not outrun a "
        "plain copy of the same bytes timed in the same rounds, so that copy likely ran slow (a "
        "cold cache, a busy machine) and its shares read high: rerun, or raise Timed rounds.")
    assert format_result(cold).splitlines()[-1] == "note: " + said.replace(
        "Timed rounds", "--repeats")
    # up to 105% is timing noise (20 x 1.05 = 21 GB/s): nothing said, in the CLI neither
    near = result(gbps=(20.0, 21.0, 16.0))
    assert gpu_view.over_baseline_text([near]) == ""
    assert not format_result(near).splitlines()[-1].startswith("note:")
    assert "scatter (torch) at 106.0% of copy" in gpu_view.over_baseline_text(
        [result(gbps=(20.0, 10.0, 21.2))])
