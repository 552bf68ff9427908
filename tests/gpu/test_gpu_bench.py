"""The benchmark harness (structure, bytes counted, progress, lock) and the bench command.
No measured time is asserted (stand-in clocks drive the figures' arithmetic): speed goals live in
bench/gpu_bench.py."""

import json
import threading

import pytest
import torch
from gpu_plans import small_plan

from flatkv import gpu_settings
from flatkv.cli import main
from flatkv.gpu import bench
from flatkv.gpu.bench import DeviceBusy, device_lock, run_benchmark
from flatkv.gpu_view import plans_for_block_sizes


def test_benchmark_counts_read_plus_written_bytes(device):
    calls = []
    result = run_benchmark(small_plan(), device=device, max_blocks=40, pages_per_call=8,
                           repeats=2, warmup=1, progress=lambda f, m: calls.append((f, m)))
    call = 8 * 1568
    assert (result.page_bytes, result.pages_per_call, result.call_bytes) == (1568, 8, call)
    assert result.allocation.allocated_blocks == 40 and result.allocation.planned_blocks == 637
    # a call moves 8 pages of 1,568 B = 12,544 B, counted read + written: 25,088 B; the state
    # copy 8 pages' 3 state rows of 352 B = 8,448 B, 16,896 counted; each against a plain
    # copy of the same bytes (the GPU adds its host copies after these)
    device_moves = [("copy", "copy", "copy", call, 2 * call),
                    ("gather", "torch", "copy", call, 2 * call),
                    ("scatter", "torch", "copy", call, 2 * call),
                    ("state_bytes_copy", "copy", "state_bytes_copy", 8 * 3 * 352, 16_896),
                    ("state_copy", "torch", "state_bytes_copy", 8 * 3 * 352, 16_896)]
    shown = [(f.operation, f.implementation, f.baseline, f.payload_bytes, f.counted_bytes)
             for f in result.figures]
    if device == "cpu":
        assert shown == device_moves
    else:
        assert set(device_moves) <= set(shown)
    for f in result.figures:
        # the median of two samples is their mean; GB/s is the counted bytes over it
        assert len(f.samples_s) == 2 and f.median_s == sum(f.samples_s) / 2 > 0
        assert f.gbps == f.counted_bytes / f.median_s / 1e9
    gather = result.figure("gather", "torch")
    assert gather.payload_bytes == call
    copy = result.figure("copy")
    assert gather.share_of_baseline == pytest.approx(gather.gbps / copy.gbps)
    # 8 pairs x 3 state rows of 352 B, read and written.
    assert result.figure("state_copy", "torch").counted_bytes == 2 * 8 * 1056
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    if device == "cuda":
        assert result.figure("h2d").baseline == "pinned_h2d"
        assert result.figure("d2h").counted_bytes == call  # over the bus, counted once


def test_default_pages_per_call_is_capped_at_half_the_pool():
    # 64 MiB of 1568-byte pages is far more than a 40-block pool: half of it, 20 pages.
    result = run_benchmark(small_plan(), device="cpu", max_blocks=40, repeats=1, warmup=0)
    assert result.pages_per_call == 20


def test_summary_has_the_json_keys():
    summary = run_benchmark(small_plan(), device="cpu", max_blocks=10, pages_per_call=2,
                            repeats=1, warmup=0).summary()
    for key in ("device", "gather_gbps", "scatter_gbps", "copy_gbps", "gather_share_of_copy",
                "planned_bytes", "allocated_bytes", "counting"):
        assert key in summary
    assert summary["allocated_bytes"] == 10 * 1568
    json.dumps(summary)  # plain data only


def test_sweep_over_page_sizes_and_pages_per_call():
    from gpu_plans import small_components

    # Block 4 and 8 both equalize to P = 8 (kept once); block 16 gives a 1024-byte KV row.
    plans = plans_for_block_sizes(small_components(), [4, 8, 16], alignment=None,
                                  budget_bytes=200_000, planner="packed").plans
    assert [p.geometry.block_size for p in plans] == [8, 16]
    results = bench.run_sweep(plans, device="cpu", max_blocks=12, pages_per_call=[1, 3],
                              repeats=1, warmup=0)
    assert [(r.page_bytes, r.pages_per_call) for r in results] == [
        (1568, 1), (1568, 3), (2080, 1), (2080, 3)]


def test_sweep_over_pool_layouts_allocates_each_plan_in_each_layout():
    calls = []
    results = bench.run_sweep([small_plan()], device="cpu", max_blocks=12, pages_per_call=[1, 3],
                              repeats=1, warmup=0, layouts=["slot-major", "page-major"],
                              progress=lambda f, m: calls.append(m))
    assert [(r.layout, r.pages_per_call) for r in results] == [
        ("slot-major", 1), ("page-major", 1), ("slot-major", 3), ("page-major", 3)]
    # the same blocks and bytes either way: only where a page's rows sit differs
    assert {(r.allocation.allocated_blocks, r.allocation.allocated_bytes) for r in results} == {
        (12, 12 * 1568)}
    assert [r.summary()["pool_layout"] for r in results[:2]] == ["slot-major", "page-major"]
    assert "allocating the plan (slot-major, page-major) on cpu" in calls
    # 3 pages of 1,568 B: the buffers' size as the page shows sizes
    assert "allocating buffers (3 pages, 4.59 KiB a call)" in calls
    # timed in the same rounds against one copy: both layouts' shares use the same baseline
    slot, paged = results[2], results[3]
    assert slot.figure("copy") == paged.figure("copy")
    for op, baseline in (("gather", "copy"), ("scatter", "copy"),
                         ("state_copy", "state_bytes_copy")):
        assert slot.figure(op).samples_s != paged.figure(op).samples_s  # each its own moves
        assert slot.figure(op).share_of_baseline == pytest.approx(
            slot.figure(op).gbps / paged.figure(baseline).gbps)
    assert [f.operation for f in paged.figures] == [
        "copy", "gather", "scatter", "state_bytes_copy", "state_copy"]
    # the state rows' copy is set against a copy of as many bytes: 3 pages' state rows of
    # 3 x 352 B (small_plan: 3 linear layers of conv 96 + ssm 256), not the 3 x 1,568 B call
    rows = paged.figure("state_bytes_copy")
    assert rows.payload_bytes == paged.figure("state_copy").payload_bytes == 3 * 3 * 352
    assert (rows.counted_bytes, rows.baseline, rows.share_of_baseline) == (
        2 * 3 * 3 * 352, "state_bytes_copy", 1.0)
    with pytest.raises(ValueError, match="names a layout twice"):
        bench.run_sweep([small_plan()], device="cpu", max_blocks=12,
                        layouts=["page-major", "page-major"])


def test_each_layouts_figures_come_from_its_own_pool(monkeypatch):
    # a gather that (by a stand-in clock) takes 50 ms on the page-major pool and 1 ms on the
    # slot-major one: only that result's median shows it (no real time is measured)
    from flatkv.gpu import kernels

    slow = []

    def gather(pool, ids, staging):
        slow.append(pool.layout == "page-major")
        return kernels.gather(pool, ids, staging)

    class Clock:
        def __init__(self, device):
            self.flush = torch.empty(8, dtype=torch.int64)  # the run frees it with its buffers

        def __call__(self, fn, key=None):
            slow.clear()
            fn()
            return 0.05 if any(slow) else 0.001

    mover = kernels.Mover("torch", gather, kernels.scatter)
    monkeypatch.setattr(kernels, "available_movers", lambda device: (mover,))
    monkeypatch.setattr(bench, "_Timer", Clock)
    slot, paged = bench.run_sweep([small_plan()], device="cpu", max_blocks=8, pages_per_call=[2],
                                  repeats=3, warmup=0, layouts=["slot-major", "page-major"])
    assert (slot.layout, paged.layout) == ("slot-major", "page-major")
    assert paged.figure("gather").samples_s == (0.05,) * 3
    assert slot.figure("gather").samples_s == (0.001,) * 3
    assert slot.figure("scatter").samples_s == paged.figure("scatter").samples_s == (0.001,) * 3


def test_figures_are_medians_over_bytes_read_and_written():
    # copy and gather of 2,000 B counted (1,000 read + 1,000 written), timed three rounds:
    # medians 2 us and 4 us (not the fastest round), so 1.0 and 0.5 GB/s, gather at 50% of copy
    variants = [bench._Variant("copy", "copy", 1000, 2000, lambda r: None),
                bench._Variant("gather", "torch", 1000, 2000, lambda r: None, pool=0)]
    figures = dict(bench._figures(variants, [[1e-6, 3e-6, 2e-6], [4e-6, 5e-6, 4e-6]],
                                  peak=4.0))
    copy, gather = figures[None], figures[0]
    assert (copy.median_s, gather.median_s) == (2e-6, 4e-6)
    assert copy.gbps == pytest.approx(2000 / 2e-6 / 1e9) == pytest.approx(1.0)
    assert gather.gbps == pytest.approx(0.5)
    assert gather.share_of_baseline == pytest.approx(0.5)
    assert gather.share_of_peak == pytest.approx(0.5 / 4.0)


def test_both_layouts_share_the_default_share_of_free_memory(monkeypatch):
    # 1 GB free: one pool may take 40% (400,000,000 // 1,568 = 255,102 blocks); two pools
    # held at once take 40% between them (200,000,000 // 1,568 = 127,551 each)
    monkeypatch.setattr(bench, "free_memory_bytes", lambda device: 10**9)
    monkeypatch.setattr(bench, "_cache_flush_bytes", lambda device: 1 << 20)
    plan = small_plan(budget=10**9)  # 637,755 blocks planned: the cap decides
    assert bench.check_sweep_fits([plan], "cpu", None, [1], pools=1) == [255_102]
    assert bench.check_sweep_fits([plan], "cpu", None, [1], pools=2) == [127_551]
    for args, message in ((([plan], "cpu", 0, [1]), "max_blocks 0 must be at least 2: give 2 or "
                                                     "more"),
                          (([plan], "cpu", None, []), "pages_per_call is empty"),
                          (([plan], "cpu", None, [1], 0),
                           "pools 0 must be positive: give 1 or more")):
        with pytest.raises(ValueError, match=message):
            bench.check_sweep_fits(*args)


def test_figures_are_reported_baseline_first_then_its_moves():
    from flatkv.gpu.bench import Figure, in_report_order

    def fig(op, impl):
        return Figure(op, impl, 1, 1, 1.0, (1.0,), 1.0, "copy", 1.0, None)

    timed = [fig("copy", "copy"), fig("pinned_d2h", "copy"), fig("pinned_h2d", "copy"),
             fig("gather", "torch"), fig("scatter", "torch"), fig("gather", "triton"),
             fig("d2h", "torch"), fig("h2d", "torch"), fig("d2h", "triton")]
    assert [(f.operation, f.implementation) for f in in_report_order(timed)] == [
        ("copy", "copy"), ("gather", "torch"), ("gather", "triton"), ("scatter", "torch"),
        ("pinned_d2h", "copy"), ("d2h", "torch"), ("d2h", "triton"), ("pinned_h2d", "copy"),
        ("h2d", "torch")]
    for bad, message in (([], "layouts is empty"),
                         (["slot-major", "pages"], r"layouts\[1\]='pages' is not a pool layout: "
                          "choose one of slot-major, page-major"),
                         ("page-major", r"layouts='page-major' is one name: pass a list")):
        with pytest.raises(ValueError, match=message):
            bench.run_sweep([small_plan()], device="cpu", max_blocks=12, layouts=bad)


def test_lock_is_shared_per_device_and_refuses_a_second_run():
    lock = device_lock("cpu")
    assert device_lock("cpu")._lock is lock._lock
    assert lock.try_acquire()
    try:
        seen = []
        worker = threading.Thread(target=lambda: seen.append(device_lock("cpu").try_acquire()))
        worker.start()
        worker.join()
        assert seen == [False]
        with pytest.raises(DeviceBusy, match="already running on cpu"):
            run_benchmark(small_plan(), device="cpu", max_blocks=4, repeats=1, warmup=0)
    finally:
        lock.release()
    assert not lock.locked()


def test_repeats_and_threads_are_bounded(monkeypatch):
    # a hundred million rounds would run for days; torch.set_num_threads(100_000) crashes
    with pytest.raises(ValueError, match="repeats 101 is too large to be real: give 100 or less"):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, repeats=101)
    monkeypatch.setattr(gpu_settings.os, "cpu_count", lambda: 16)
    with pytest.raises(ValueError, match="cpu_threads 17 is more than this machine's 16 "
                       "cores: give 16 or fewer"):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, repeats=1, cpu_threads=17)


def test_more_pages_per_call_than_the_plan_has_blocks_is_not_fixed_by_the_cap():
    # a cap of 1,000 blocks over a plan of 637 (1,000,000 B // 1,568 B, gpu_plans): the pool
    # is the whole plan, so raising max blocks would not make room for 700 pages a call
    with pytest.raises(ValueError, match=r"pages per call is 700, more than the 637 blocks "
                       r"of the pool: give at most 637, the plan's blocks \(a larger cache "
                       r"budget or a smaller block size plans more\)$"):
        run_benchmark(small_plan(), device="cpu", max_blocks=1000, pages_per_call=700, repeats=1)


def test_lock_is_released_after_a_failed_run(monkeypatch):
    # refused before anything is held: more pages per call than the pool has blocks
    with pytest.raises(ValueError, match=r"pages per call is 99, more than the 4 blocks of "
                       "the pool: give at most 4, or raise max blocks"):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, pages_per_call=99, repeats=1)

    def fail(*args, **kwargs):
        raise ValueError("the pool could not be filled")

    monkeypatch.setattr(bench, "fill_random", fail)  # fails while the lock is held
    with pytest.raises(ValueError, match="could not be filled"):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, pages_per_call=2, repeats=1)
    assert not device_lock("cpu").locked()


def test_a_benchmark_that_would_not_fit_is_refused_before_allocating(monkeypatch):
    # 1 GB free: a benchmark may take 800,000,000 B. A page of 25,809,321,984 B (Qwen3-Next
    # at block 2**20) needs 2 blocks + 2 x 1 page + the cache flush + the page ids (8 B for
    # each of the 2 blocks while a set is drawn, 2 x 4 sets x 2 x 1 page): refused, nothing
    # held.
    monkeypatch.setattr(bench, "free_memory_bytes", lambda device: 10**9)
    monkeypatch.setattr(bench, "_cache_flush_bytes", lambda device: 1 << 20)
    page = 1568
    big = small_plan()
    monkeypatch.setattr(bench, "_page_bytes", lambda plan: 25_809_321_984 if plan is big
                        else page)
    allocated = []
    monkeypatch.setattr(bench, "allocate_pool", lambda *a, **k: allocated.append(a))
    need = 2 * 25_809_321_984 + 2 * 25_809_321_984 + (1 << 20) + 8 * (2 + 16)
    with pytest.raises(bench.PoolAllocationError, match=(
            rf"this benchmark needs {need:,} bytes \(96.15 GiB\) on cpu .* has 1,000,000,000 "
            r"bytes \(953.67 MiB\) free and a benchmark may take 80% of it: plan a smaller "
            "block size")):
        run_benchmark(big, device="cpu")
    assert allocated == [] and not device_lock("cpu").locked()
    # while another session benchmarks the device its memory is low because of that run:
    # this one is told the device is busy, not that it does not fit
    lock = device_lock("cpu")
    assert lock.try_acquire()
    try:
        with pytest.raises(DeviceBusy):
            run_benchmark(big, device="cpu")
    finally:
        lock.release()
    # a sweep is checked whole before any of it runs: the small plan is not timed first
    with pytest.raises(bench.PoolAllocationError, match="plan a smaller block size"):
        bench.run_sweep([small_plan(), big], device="cpu")
    assert allocated == []
    # the default pool is 512 MiB of pages within 40% of free memory: 400,000,000 // 1,568
    monkeypatch.setattr(bench, "_page_bytes", lambda plan: page)
    cpu = torch.device("cpu")
    assert bench.default_max_blocks(small_plan(), cpu, bench.free_memory_bytes(cpu)) == 255_102
    # pages of one byte would make 512 Mi blocks (4 GiB of page ids a set): 4 Mi at most
    monkeypatch.setattr(bench, "_page_bytes", lambda plan: 1)
    assert bench.default_max_blocks(small_plan(), cpu) == 1 << 22
    monkeypatch.setattr(bench, "_page_bytes", lambda plan: page)
    # a pool too large for the share is refused with what to lower: 637 blocks x 1,568 B
    # (998,816) + 2 x 1 page (3,136) + 1 MiB of flush + page ids 8 x (637 + 16) (5,224) =
    # 2,055,752 B; 80% of 2 MB is 1.6 MB
    monkeypatch.setattr(bench, "free_memory_bytes", lambda device: 2 * 10**6)
    # 1,600,000 - 3,136 - 1,048,576 - 8 x 16 = 548,160 B left for blocks of 1,568 B and an
    # 8-byte id each: at most 347
    with pytest.raises(bench.PoolAllocationError, match=r"needs 2,055,752 bytes \(1.96 MiB\) on "
                       "cpu .* lower max blocks to at most 347, or pages per call"):
        run_benchmark(small_plan(), device="cpu", max_blocks=637, pages_per_call=1)
    # a page asks the same before offering Run: the caps, or the same refusal
    assert bench.check_sweep_fits([small_plan()], "cpu", 300, [1], 1) == [300]
    with pytest.raises(bench.PoolAllocationError, match="at most 347"):
        bench.check_sweep_fits([small_plan()], "cpu", 637, [1], 1)
    # no cap told: the pool is 40% of free memory, 800,000 // 1,568 = 510 of the 637 blocks
    # planned, which a cap may raise (the fit check then decides), not "raise" an unset cap
    with pytest.raises(ValueError, match=r"pages per call is 600, more than the 510 blocks "
                       r"of the pool: give at most 510, or set max blocks \(the automatic pool "
                       r"is a safe share of free memory; a run checks that a larger one fits\)$"):
        bench.check_sweep_fits([small_plan()], "cpu", None, [600], 1)
    # both layouts hold two pools at once (one set of page ids): 2 x 998,816 + 3,136 + 1 MiB +
    # 5,224, and half the blocks fit
    with pytest.raises(bench.PoolAllocationError, match=r"needs 3,054,568 bytes .* \(2 pools "
                       r"\(one per layout\) of 637 blocks of 1,568 bytes.* at most 174,"):
        bench.run_sweep([small_plan()], device="cpu", max_blocks=637, pages_per_call=[1],
                        layouts=["slot-major", "page-major"])
    assert allocated == []


def test_available_devices_lists_the_cpu_then_each_gpu():
    devices = bench.available_devices()
    assert devices[0] == "cpu"
    assert devices[1:] == tuple(f"cuda:{i}" for i in range(len(devices) - 1))
    assert len(devices) - 1 == (torch.cuda.device_count() if torch.cuda.is_available() else 0)


def test_available_implementations_offer_what_runs_compiled(device):
    impls = bench.available_implementations(device)
    assert impls[0] == "torch"  # the reference mover runs everywhere
    if device == "cpu":  # the Triton interpreter is too slow to time: not offered on the CPU
        assert impls == ("torch",)
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
        bench.available_implementations("tpu")


def test_unknown_implementation_is_refused():
    with pytest.raises(ValueError, match="implementation 'cuda-graph' cannot run on cpu"):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, implementations=["cuda-graph"])


# --------------------------------------------------------------------------------------------
# The command line.

ARGS = ["bench", "--layers", "3*linear_attention,full_attention", "--kv-bytes-per-slot", "64",
        "--state", "conv=96,ssm=256", "--block-size", "4", "--max-blocks", "20",
        "--pages-per-call", "4", "--repeats", "1"]


def test_cli_json(capsys, monkeypatch):
    # a stand-in clock (no real time is measured): each variant, in the order the CPU run
    # times them, takes these seconds in the timed round; the 2 warm-up rounds take 1 s,
    # which no figure may show
    timed = {0: ("copy", 2e-6), 1: ("state_bytes_copy", 3e-6), 2: ("gather", 4e-6),
             3: ("scatter", 5e-6), 4: ("state_copy", 8e-6)}

    class Clock:
        def __init__(self, device):
            self.flush = torch.empty(8, dtype=torch.int64)  # the run frees it with its buffers
            self.rounds = {}

        def __call__(self, fn, key=None):
            fn()
            self.rounds[key] = self.rounds.get(key, 0) + 1
            return 1.0 if self.rounds[key] <= 2 else timed[key][1]

    monkeypatch.setattr(bench, "_Timer", Clock)
    assert main(ARGS + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == "cpu"
    # P: ceil(352 / 64) = 6 > 4 -> 8; block = 3 x 352 state + 8 x 64 KV = 1,568 B.
    assert out["page_bytes"] == 3 * 352 + 8 * 64 == 1568 and out["call_bytes"] == 4 * 1568
    assert out["block_size"] == 8 and out["pool_layout"] == "slot-major"
    # By default the GPU lab's budget, an H100 80GB (85,520,809,984 B) x 0.9 = 76,968,728,985
    # B: // 1,568 = 49,087,199 blocks planned, as the page plans them
    assert 85_520_809_984 * 9 // 10 == 76_968_728_985
    assert out["planned_blocks"] == 76_968_728_985 // 1568 == 49_087_199
    assert out["allocated_blocks"] == 20
    assert {f["operation"]: f["median_s"] for f in out["figures"]} == dict(timed.values())
    # a call of 4 pages x 1,568 = 6,272 B moves 12,544 B read + written: the copy in 2 us is
    # 6.272 GB/s, gather in 4 us 3.136, scatter in 5 us 2.5088; the state rows of 4 pages, 4 x
    # 3 x 352 = 4,224 B, 8,448 B counted: their plain copy in 3 us 2.816, state_copy in 8 us
    # 1.056; rounded to 0.01 GB/s, each share of its baseline to 0.0001
    assert {key: out[key] for key in out if key.endswith(("_gbps", "_copy"))} == {
        "copy_gbps": 6.27, "gather_gbps": 3.14, "scatter_gbps": 2.51,
        "state_bytes_copy_gbps": 2.82, "state_copy_gbps": 1.06,
        "gather_share_of_copy": 0.5, "scatter_share_of_copy": 0.4,
        "state_copy_share_of_state_bytes_copy": 0.375, "nominal_peak_gbps": None}
    assert main(ARGS + ["--json", "--pool-layout", "page-major"]) == 0
    paged = json.loads(capsys.readouterr().out)
    assert paged["pool_layout"] == "page-major"
    assert (paged["page_bytes"], paged["allocated_bytes"]) == (1568, 20 * 1568)  # same pool


def test_cli_refuses_a_state_only_model_in_one_line(capsys):
    assert main(["bench", "--layers", "linear", "--state", "conv=100"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "packed slabs size P against a KV history row, and this model has none (no attention "
        "layer, only state); bench times packed slabs only: give a model with attention "
        "layers")


def test_cli_text(capsys):
    assert main(ARGS) == 0
    text = capsys.readouterr().out
    # 20 blocks of 1,568 B
    assert ("plan    49,087,199 blocks x 1,568 B = 76,968,728,032 B; allocated 20 blocks = "
            "31,360 B (limited by your cap of 20 blocks)") in text
    assert "call    4 pages x 1,568 B = 6,272 B" in text
    assert "gather" in text and "of copy" in text
    assert "(1 thread)" in text.splitlines()[0]  # the CPU default
    assert main([*ARGS, "--threads", "2"]) == 0
    assert "(2 threads)" in capsys.readouterr().out.splitlines()[0]
    assert "pool    slot-major: 3 slot tensors, one allocation each" in text
    # the default cap, and a plan small enough to fit whole, say what limited the pool
    assert main([a for a in ARGS if a not in ("--max-blocks", "20")]) == 0
    assert "(limited by the default pool size (512.00 MiB on the CPU, 8.00 GiB on CUDA, within " \
        "40% of free memory))" in capsys.readouterr().out
    small = ["bench", "--layers", "full*2", "--kv-bytes-per-slot", "64", "--budget", "64KiB",
             "--device", "cpu", "--pages-per-call", "2", "--repeats", "1"]
    assert main(small) == 0
    assert "(limited by the plan's own size (the whole plan fits))" in capsys.readouterr().out
    assert main([*ARGS, "--threads", "-1"]) == 2
    assert capsys.readouterr().err == ("python -m flatkv: error: --threads -1 must not be "
                                       "negative: give 1 or more, or 0 for torch's choice\n")
    assert main([*ARGS, "--pool-layout", "page-major"]) == 0
    assert ("pool    page-major: 3 slot tensors in one buffer, each page's slot rows back to "
            "back") in capsys.readouterr().out


def test_cli_preset_with_budget(capsys):
    assert main(["bench", "--preset", "llama-3.1-8b", "--budget", "1GiB", "--max-blocks", "4",
                 "--pages-per-call", "2", "--repeats", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 32 layers x 16 tokens x 4,096 B = 2 MiB per block; 1 GiB holds 512.
    assert out["page_bytes"] == 32 * 16 * 4096 and out["planned_blocks"] == 512
    # without --budget, the GPU lab's default plan: 76,968,728,985 B // 2 MiB = 36,701 blocks,
    # as the page plans Llama-3.1-8B
    assert main(["bench", "--preset", "llama-3.1-8b", "--max-blocks", "4", "--pages-per-call",
                 "2", "--repeats", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["planned_blocks"] == 76_968_728_985 // (32 * 16 * 4096) == 36_701


@pytest.mark.parametrize(("extra", "message"), [
    (["--device", "cuda:99"], "cuda"),
    (["--layers", "LLXF"], "unknown layer kind 'LLXF':"),
    (["--state", "conv"], "name=bytes"),
    # the form of every bound, "--max-blocks 1 must be at least 2 (why): <fix>"
    # (plan.bound_refusal); it said "must be at least 2, got 1", then "--max-blocks 1: ..."
    (["--max-blocks", "1"], "--max-blocks 1 must be at least 2 (a benchmark's pool holds two "
     "pages): give 2 or more, or leave it out for automatic\n"),
    (["--max-blocks", "0"], "--max-blocks 0 must be at least 2 (a benchmark's pool holds two "
     "pages): give 2 or more, or leave it out for automatic\n"),
    (["--device", "tpu"], "--device 'tpu': not a device; give --device cpu, cuda or cuda:N\n"),
    # 21 pages a call of a pool capped at 20 blocks
    (["--pages-per-call", "21"], "--pages-per-call 21 is more than the 20 blocks of the pool: "
     "give at most 20, or raise --max-blocks"),
    (["--pool-layout", "rows"], "--pool-layout 'rows' is not one it takes: give slot-major or "
     "page-major\n"),
])
def test_cli_bad_input_exits_2_with_one_line(capsys, extra, message):
    # each in place of the same option of ARGS (an option given twice is refused as such)
    flag = extra[0]
    args = ARGS[:ARGS.index(flag)] + ARGS[ARGS.index(flag) + 2:] if flag in ARGS else ARGS
    assert main(args + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m flatkv: error: ") and err.count("\n") == 1
    assert message in err


def test_cli_and_library_bound_threads_and_repeats_by_one_helper(capsys, monkeypatch):
    # bench's --threads and --repeats are refused past the library's own bounds
    # (gpu_settings.most_bench_count: this machine's cores, MAX_REPEATS), read where both ask:
    # at 4 cores and 5 rounds at most, --threads 5 and --repeats 6 are refused in the flags'
    # words as the library refuses cpu_threads 5 and repeats 6 (the CLI kept its own copies:
    # os.cpu_count read twice, MAX_REPEATS imported by name, so it took 100 rounds here)
    monkeypatch.setattr(gpu_settings.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(gpu_settings, "MAX_REPEATS", 5)
    for extra, said in ((["--threads", "5"], "--threads 5 is more than this machine's 4 cores: "
                         "give 4 or fewer, or 0 for torch's choice\n"),
                        (["--repeats", "6"], "--repeats 6 is more timed rounds than a bench "
                         "takes: give 5 or fewer\n")):
        flag = extra[0]  # in place of ARGS' own
        args = ARGS[:ARGS.index(flag)] + ARGS[ARGS.index(flag) + 2:] if flag in ARGS else ARGS
        assert main(args + extra) == 2
        assert capsys.readouterr().err == f"python -m flatkv: error: {said}"
    with pytest.raises(ValueError, match="repeats 6 is too large to be real: give 5 or less"):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, repeats=6)
    with pytest.raises(ValueError, match="cpu_threads 5 is more than this machine's 4 "):
        run_benchmark(small_plan(), device="cpu", max_blocks=4, repeats=1, cpu_threads=5)


def test_cli_device_this_machine_lacks_is_refused_in_the_flags_words(capsys, monkeypatch):
    # "--device is 'cuda' but torch ... sees no CUDA GPU: use device 'cpu'" (the library's
    # words, its field renamed): now "--device 'cuda': <what is wrong>; <fix>", as --max-blocks
    args = ARGS  # (no --device: the default cpu)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main([*args, "--device", "cuda"]) == 2
    assert capsys.readouterr().err == (
        f"python -m flatkv: error: --device 'cuda': torch {torch.__version__} sees no CUDA GPU; "
        "give --device cpu\n")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for count, fix in ((1, "cuda:0"), (2, "cuda:0 to cuda:1")):
        monkeypatch.setattr(torch.cuda, "device_count", lambda count=count: count)
        assert main([*args, "--device", "cuda:5"]) == 2
        devices = "1 CUDA device" if count == 1 else "2 CUDA devices"
        assert capsys.readouterr().err == (
            f"python -m flatkv: error: --device 'cuda:5': this machine has {devices}; give "
            f"--device {fix}\n")


def test_cpu_benchmarks_run_on_one_thread_and_restore_torchs_setting():
    before = torch.get_num_threads()
    r = run_benchmark(small_plan(), device="cpu", max_blocks=10, pages_per_call=2, repeats=1,
                      warmup=0)
    assert r.device_name.endswith("(1 thread)")  # the threads the figures were timed with
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="cpu_threads 0 must be positive: give 1 or more"):
        run_benchmark(small_plan(), device="cpu", max_blocks=10, cpu_threads=0)
    r = run_benchmark(small_plan(), device="cpu", max_blocks=10, pages_per_call=2, repeats=1,
                      warmup=0, cpu_threads=None)  # torch's own setting
    assert r.device_name.endswith(f"({before} thread{'s' if before != 1 else ''})")


def test_a_cuda_benchmark_checks_the_pinned_host_buffer_too(monkeypatch):
    # No GPU is needed: the check reads free memory per device. 64 GB free on the GPU, 1 GB on
    # the host: 20 blocks of 1,568 B fit the GPU, but 1 GB cannot pin 600,000 pages per call.
    free = {"cuda": 64 * 10**9, "cpu": 10**9}
    monkeypatch.setattr(bench, "free_memory_bytes", lambda device: free[device.type])
    monkeypatch.setattr(bench, "_cache_flush_bytes", lambda device: 1 << 20)
    cuda = torch.device("cuda", 0)
    bench._check_fits(small_plan(), cuda, 20, [10], bench._free_bytes(cuda))  # fits both
    with pytest.raises(bench.PoolAllocationError, match=(
            r"this benchmark needs 940,800,000 bytes \(897.22 MiB\) on cpu \(a pinned buffer of "
            "600,000 page.* may take 80% of it: lower pages per call")):
        # 600,000 x 1,568 B pinned
        bench._check_fits(small_plan(), cuda, 637, [600_000], bench._free_bytes(cuda))


@pytest.mark.parametrize("name, gbps", [
    # torch.cuda.get_device_name's names; peaks from NVIDIA's data sheets (GB/s)
    ("NVIDIA H200", 4800.0),
    ("NVIDIA H100 80GB HBM3", 3350.0),  # SXM
    ("NVIDIA H100 NVL", 3900.0),
    ("NVIDIA H100 PCIe", 2000.0),
    ("NVIDIA A100-SXM4-80GB", 2039.0),
    ("NVIDIA A100 80GB PCIe", 1935.0),
    ("NVIDIA A100-SXM4-40GB", 1555.0),
    ("NVIDIA A100-PCIE-40GB", 1555.0),
    ("NVIDIA B200", 8000.0),
    ("NVIDIA GH200 480GB", None),  # not an H200: its HBM differs by variant
    ("NVIDIA L40S", None),
])
def test_nominal_peak_takes_the_longest_matching_name_first(name, gbps):
    assert bench.nominal_peak_for_name(name) == gbps


def test_no_nominal_peak_on_the_cpu():
    assert bench.nominal_peak_gbps(torch.device("cpu")) is None


def test_cli_names_its_flags_when_the_staging_buffers_run_out_of_memory(capsys, monkeypatch):
    def out_of_memory(keep, nbytes, device, pin=False):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.12 KiB")

    monkeypatch.setattr(bench, "_alloc", out_of_memory)
    assert main(ARGS) == 2
    # 4 pages of 1,568 B a call: the message names this command's flags, and the pool is freed
    assert capsys.readouterr().err == (
        "python -m flatkv: error: out of memory on cpu allocating staging buffers of 6,272 bytes "
        "(4 pages a call): pass fewer --pages-per-call or a smaller --max-blocks (CUDA out of "
        "memory. Tried to allocate 6.12 KiB)\n")
    assert not device_lock("cpu").locked()


def test_cli_names_its_flags_when_memory_runs_out_while_timing(capsys, monkeypatch):
    # a kernel's own scratch (Triton compiling, say) can run out after every buffer is in place
    def out_of_memory(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 MiB")

    monkeypatch.setattr(bench, "_time_rounds", out_of_memory)
    assert main(ARGS) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: out of memory on cpu timing calls of 6,272 bytes (4 pages a "
        "call): pass fewer --pages-per-call or a smaller --max-blocks (CUDA out of memory. "
        "Tried to allocate 2.00 MiB)\n")
    assert not device_lock("cpu").locked()
