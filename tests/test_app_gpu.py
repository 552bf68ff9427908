"""The GPU lab page through streamlit's AppTest: a small CPU benchmark, its tables and sweeps,
its settings and link, and what it refuses. Expected figures are derived by hand (SPEC.md
section 1); helpers in tests/app_helpers.py."""

from __future__ import annotations

import dataclasses
import json

import pytest
from app_helpers import (
    QWEN35_LINK,
    STATE_ONLY_LINK,
    TINY_LINK,
    assert_clean,
    metrics,
    open_app,
    shown,
)
from streamlit.testing.v1 import AppTest

from flatkv import gpu_settings, gpu_view
from flatkv.units import format_bytes

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
    # each row's bytes in the table under it, its rows named alike (one round: no rounds)
    moved = at.dataframe[1].value.set_index("operation")
    assert list(moved.columns) == ["kernel", "bytes per call", "bytes counted"]
    assert list(moved.index) == list(rows.index) and list(moved["kernel"]) == list(rows["kernel"])
    assert set(moved["bytes per call"]) == {3 * TINY_PAGE}  # 3 pages per call x 131,072 B
    # one run: P and the page are the headline's (2 x 4,096 x 16 = TINY_PAGE), not a column
    assert "P (tokens)" not in rows.columns and "page bytes" not in rows.columns
    assert "layout" not in rows.columns  # one layout ran: the setting says which
    assert metrics(at)["P (tokens per page)"] == "16"
    assert set(moved["bytes counted"]) == {2 * 3 * TINY_PAGE}  # read + written
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
    assert set(at.dataframe[1].value["bytes per call"]) == {3 * TINY_PAGE}
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
    # the kept run's gather set at 146.4% of its copy (bench's gpt-oss-20b CPU run: 9.75 GB/s
    # against 6.66): the page says the copy ran slow
    over = [replace(r, figures=tuple(replace(f, share_of_baseline=9.75 / 6.66)
                                     if f.operation == "gather" else f for f in r.figures))
            for r in kept.results]
    at.session_state["gpu.last_run"] = replace(kept, results=tuple(over))
    at.run()
    assert_clean(at)
    (slow,) = [w.value for w in at.warning if w.value.startswith("Baseline slow")]
    assert slow.startswith("Baseline slow: gather (torch) at 146.4% of copy. ")


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
                 dataclasses.replace(  # a slow state copy's median: 30.224 ms, of two rounds
                     figure("state_copy", "torch", 8 * 1056, 0.08, baseline="state_bytes_copy"),
                     median_s=0.030224, samples_s=(0.030224, 0.031)))
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
        # the rounds and bytes in the table under it, each row named by the same columns
        moved = json.loads(at.dataframe[1].proto.columns)
        assert list(at.dataframe[1].value.columns) == [
            *first, "operation", "kernel", "rounds (ms)", "bytes per call", "bytes counted"]
        assert list(at.dataframe[1].value["rounds (ms)"])[-1] == "30.224 to 31.000"
        assert "Each row's timed rounds and bytes:" in [c.value for c in at.caption]
        assert moved["rounds (ms)"]["help"] == (
            "The fastest and the slowest of the timed rounds, one call's time each; the median "
            "(ms) is the median of all the timed rounds, and GB/s the bytes counted over it.")
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


def test_gpu_page_sweeps_pages_per_call(small_flush):
    at = open_app("app_pages/gpu.py", TINY_LINK)
    at.number_input(key="w.lab_max_blocks").set_value(8)
    at.segmented_control(key="w.lab_sweep").set_value("pages per call").run()
    assert at.text_input(key="w.lab_sweep_pages").value == "1, 2, 4"  # up to half of 8 blocks
    at.text_input(key="w.lab_sweep_pages").set_value("1, 2").run()
    at.number_input(key="w.lab_rounds").set_value(1)
    at.button(key="gpu.run").click().run()
    assert_clean(at)
    gather = at.dataframe[1].value.query("operation == 'gather'")  # the bytes under the figures
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
    moved = at.dataframe[1].value.query("operation == 'gather'")  # its bytes, named alike
    assert list(moved["pool"]) == ["slot", "page"]
    assert set(moved["bytes per call"]) == {3 * TINY_PAGE}  # the same pages either way
    assert metrics(at)["Allocated blocks"] == "8"  # one plan: the same pool size in each layout
    assert metrics(at)["Allocated bytes (each layout)"] == "1.00 MiB"  # 8 x 131,072 B, not 2
    assert any("slot-major and page-major pools" in c.value for c in at.caption)
    (fig,) = at.get("plotly_chart")
    assert "gather (torch, page-major)" in fig.proto.spec
    compared = at.dataframe[2].value.set_index("operation")  # page-major against slot-major
    gather = compared.loc["gather"]
    # the ratio is of unrounded GB/s: it lies between the ratios the shown GB/s allow, each
    # within 0.005 of its own (a fixed tolerance failed where slot-major read 0.2 GB/s)
    page, slot = gather["page-major GB/s"], gather["slot-major GB/s"]
    told = float(gather["page-major / slot-major"].removesuffix("x"))
    assert (page - 0.005) / (slot + 0.005) - 0.005 <= told <= (page + 0.005) / (slot - 0.005) \
        + 0.005, (page, slot, told)
    assert list(compared.index) == ["gather", "scatter"]  # the shared copy has no row
    # one round a layout cannot tell noise from a layout's effect (MIN_ROUNDS_APART, 5): the
    # note under the table says so in plain words ("Rounds apart: cannot tell from 1 round:
    # time 5 or more." read as a riddle), and the column it stands for is gone
    assert "rounds apart" not in compared.columns
    assert any(c.value.endswith("Where their rounds overlap, the ratio is within this "
                                "machine's noise: time more rounds. With 1 round a layout, too "
                                "few to tell whether they overlap: time 5 or more.")
               for c in at.caption)
    at.pills(key="w.lab_layouts").set_value([]).run()
    # as a sentence, as every page's errors (it read "pool layout: pick ...")
    assert any(shown(e).startswith("Pool layout: pick at least one") for e in at.error)
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


def test_a_typed_fraction_in_max_blocks_suggests_only_caps_the_lab_takes():
    # 0.5 suggested "such as 0 or 1", and the lab's two-page minimum then refused 1
    at = open_app("app_pages/gpu.py", TINY_LINK)
    for typed, said in ((0.5, "0 or 2"), (1.5, "0 or 2"), (2.5, "2 or 3")):
        at.number_input(key="w.lab_max_blocks").set_value(typed).run()
        assert not at.exception
        assert f"Max blocks (0 = automatic) is {typed:g}: give a whole number, such as " \
               f"{said}" in [shown(e) for e in at.error], typed


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
    assert any(shown(e).startswith("Pages per call: 'lots' is not a whole number")
               for e in at.error)
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
    gather = at.dataframe[1].value.query("operation == 'gather'")  # the bytes under the figures
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
    assert any("device='cuda:7': this machine has no cuda:7 (it has cpu" in shown(w)
               for w in at.warning)
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
    assert any(shown(e).startswith("Pages per call: 16 is out of range; give values from 1 to 8")
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
    # as a sentence (the library's "this benchmark needs ...")
    assert any(shown(e).startswith("This benchmark needs") and "plan a smaller block size"
               in shown(e) for e in at.error)
    assert at.button(key="gpu.run").disabled
    assert not at.exception and not at.dataframe
    from flatkv.gpu import device_lock

    assert not device_lock("cpu").locked()


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
    assert set(at.dataframe[1].value["bytes per call"]) == {2 * TINY_PAGE}
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
    # one tensor per component: a slot tensor each, Qwen3-Next at TP 2's 36 GDN layers' conv
    # and ssm and 12 KV tensors, 84; its block 36 x 548,864 + 12 x 544 x 1,024 B
    per = open_app("app_pages/gpu.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                        "planner": "per-component"})
    assert 36 * 548_864 + 12 * 544 * 1_024 == 26_443_776 and 36 * 2 + 12 == 84
    assert next(x.help for x in per.metric if x.label == "Block bytes").startswith(
        "26,443,776 B: one page id over every slot tensor (84 of them, one per component)")
    # at the app's default budget, as `python -m flatkv bench` plans without --budget
    # (tests/gpu): Llama-3.1-8B's 2 MiB blocks in 76,968,728,985 B
    llama = open_app("app_pages/gpu.py", {"model": "Llama-3.1-8B"})
    assert metrics(llama)["Planned blocks"] == f"{76_968_728_985 // (32 * 16 * 4096):,}"
    assert next(x.help for x in lab.metric if x.label == "Planned bytes") == (
        "79,994,880,000 B")
    layout = open_app("app_pages/layout.py", QWEN35_LINK)
    m = {x.label: (x.value, x.help) for x in layout.metric}
    assert m["Cache budget per rank"] == ("74.51 GiB", "80,000,000,000 B")
    assert m["Unused"] == ("4.88 MiB", "5,120,000 B")


def test_gpu_lab_says_what_its_page_size_is_as_layout_does():
    # a state-only model's P is nominal (its pages hold no tokens); Qwen3-Next's 544 is the
    # state row's inflation of the 16 asked (SPEC section 1: a state row of 49,152 +
    # 1,048,576 B over 2,048 B a token, ceil(1,097,728 / 2,048) = 536, aligned to 16), as
    # Layout says it
    state = open_app("app_pages/gpu.py", {**STATE_ONLY_LINK, "planner": "per-component"})
    assert_clean(state)
    (p,) = [m for m in state.metric if m.label == "P (tokens per page)"]
    assert (p.value, p.proto.delta) == ("16", "nominal: no token history")
    layout = open_app("app_pages/layout.py")
    gpu = open_app("app_pages/gpu.py")
    (at_layout,) = [m for m in layout.metric if m.label == "P (tokens per page)"]
    (at_gpu,) = [m for m in gpu.metric if m.label == "P (tokens per page)"]
    assert (at_gpu.value, at_gpu.proto.delta) == (at_layout.value, at_layout.proto.delta) == (
        "544", "requested 16")


def test_gpu_lab_names_a_swept_pages_per_call_past_two_pools_in_its_words(monkeypatch):
    from flatkv.gpu import bench

    # 2 GiB free, both pool layouts: each automatic pool is 40% of 1 GiB, 429,496,729 B, so
    # 3,276 pages of 131,072 B, where the page's suggestion (no free memory read) is the
    # 512 MiB default, 4,096 pages. A swept 4,000 passes the list's check and is refused
    # before Run; the refusal named the entry "pages_per_call[2]", the library's index, not
    # the lab's words (found by fuzzing the widgets)
    monkeypatch.setattr(bench, "free_memory_bytes", lambda device: 2 << 30)
    at = open_app("app_pages/gpu.py", {**TINY_LINK, "layouts": "slot-major,page-major",
                                       "sweep": "pages per call", "sweep_pages": "1,2,4000"})
    assert not at.exception
    assert (1 << 30) * 40 // 100 // TINY_PAGE == 3_276 and (512 << 20) // TINY_PAGE == 4_096
    assert [shown(e) for e in at.error] == [
        "Pages per call is 4,000, more than the 3,276 blocks of the pool: give at most 3,276, "
        "or set max blocks (the automatic pool is a safe share of free memory; a run checks "
        "that a larger one fits)"]
    assert at.query_params["sweep_pages"] == "1,2,4000"  # the list as given, to mend
