"""GPU lab page: allocate the current plan on a device and time its page moves against a plain
copy of the same bytes. flatkv.gpu (torch) is imported here, when the page is drawn, never by
the rest of the app; the numbers shown come from flatkv.gpu_view."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from app_pages._figures import current_analysis, plan_caption
from app_pages._frame import chart, metric_row, table
from app_pages._session import ERRORS_KEY, bind, error_text, state, update, user_errors
from flatkv import app_data, charts, gpu_settings, gpu_view
from flatkv.analysis import PlanAnalysis
from flatkv.app_state import MAX_BLOCK_SIZE
from flatkv.plan import FlatMemoryPlan
from flatkv.units import exact_bytes, format_bytes, sentence_case

LAST_RUN = "gpu.last_run"
# The run settings every sweep shows (AppState fields); each sweep adds its own list.
LAB_FIELDS = ("lab_device", "lab_kernels", "lab_layouts", "lab_rounds", "lab_max_blocks",
              "lab_pages", "lab_sweep")


def _max_blocks_from_widget(value: object) -> int:
    return gpu_settings.check_max_blocks("Max blocks", int(value))


def plan_headline(a: PlanAnalysis) -> None:
    geo = a.plan.geometry
    c = metric_row("plan")
    c.metric("P (tokens per page)", f"{geo.block_size:,}",
             delta=app_data.block_size_note(geo.block_size, a.equalizer.requested_block_size,
                                            state().profile().has_attention),
             delta_color="off", delta_arrow="off")
    c.metric("Block bytes", format_bytes(geo.block_bytes),
             help=f"{geo.block_bytes:,} B: one page id over every slot tensor "
             f"({len(a.plan.tensors):,} of them"
             f"{', one per component' if a.planner == 'per-component' else ''}), as Layout's "
             "Block bytes. The movers move it as one page: the sweeps and tables below call it "
             "page bytes")
    c.metric("Planned blocks", f"{geo.num_blocks:,}")
    planned = sum(t.nbytes for t in a.plan.tensors)
    c.metric("Planned bytes", format_bytes(planned), help=f"{planned:,} B")


def settings(bench, devices: tuple[str, ...], a: PlanAnalysis) -> gpu_view.LabSettings | None:
    """The run's settings: widgets bound to the view, so a link reopens the same run. Returns
    None while a setting is rejected (its error shows under its widget or below them)."""
    device, impls, default_rounds = _run_widgets(bench, devices)
    s = state()
    # the pool a run would get, for the suggestions; no free-memory query here (on CUDA that
    # would open a context on the GPU at every render): the run checks memory itself
    pool = min(s.lab_max_blocks or bench.default_max_blocks(a.plan, device),
               a.plan.geometry.num_blocks)
    swept = _sweep_widget(s, pool, a)
    if swept is None:
        return None
    counts, plans = swept
    if not _fits(bench, device, plans, counts):
        return None
    return gpu_view.LabSettings(
        device=device, implementations=gpu_view.pick_kernels(s.lab_kernels, impls),
        layouts=s.lab_layouts, repeats=s.lab_rounds or default_rounds,
        max_blocks=s.lab_max_blocks or None, counts=counts, plans=plans, sweep=s.lab_sweep)


def _run_widgets(bench, devices: tuple[str, ...]) -> tuple[str, tuple[str, ...], int]:
    """Device, kernels, pool layouts, rounds, block cap, pages per call and the sweep's kind;
    returns the device, the kernels it runs and its default rounds."""
    device, notice = gpu_view.pick_device(state().lab_device, devices)
    if notice:
        st.warning(error_text(notice), icon=":material/link_off:")
        update(lab_device=None)
    kind = gpu_view.device_type(device)
    impls = bench.available_implementations(device)
    missing = [k for k in state().lab_kernels or () if k not in impls]
    if missing:
        st.warning(f"{' and '.join(missing)} does not run on {device} here: timing "
                   f"{', '.join(gpu_view.pick_kernels(state().lab_kernels, impls))}.",
                   icon=":material/link_off:")
    c = st.columns(2)  # rows of two: pills side by side are cut short in a narrow column
    bind(c[0].selectbox, "lab_device", "Device", options=devices,
         to_widget=lambda v: gpu_view.pick_device(v, devices)[0],
         help="cpu, or each CUDA GPU torch sees; the first GPU when there is one")
    bind(c[1].pills, "lab_kernels", "Kernels", options=impls, selection_mode="multi",
         to_widget=lambda v: list(gpu_view.pick_kernels(v, impls)),
         from_widget=lambda chosen: _kernels_from_widget(chosen, impls),
         help="torch: the reference movers (index_select / index_copy_). triton: one fused "
         "launch over all slots (CUDA with triton installed).")
    c = st.columns(2)
    bind(c[0].pills, "lab_layouts", "Pool layout", options=gpu_settings.POOL_LAYOUTS,
         selection_mode="multi", to_widget=list, from_widget=_layouts_from_widget,
         help=gpu_view.POOL_LAYOUT_HELP + " Pick both to time them side by side, in the same "
         "rounds against one copy.")
    default_rounds = gpu_view.PAGE_REPEATS[kind]
    bind(c[1].number_input, "lab_rounds", "Timed rounds", min_value=1,
         max_value=gpu_settings.MAX_REPEATS, step=1,
         to_widget=lambda v: min(v or default_rounds, gpu_settings.MAX_REPEATS),
         from_widget=lambda v: None if int(v) == default_rounds else int(v),
         help=f"Medians over this many rounds, after {gpu_settings.WARMUP_ROUNDS} warm-up rounds.")
    c = st.columns(2)
    bind(c[0].number_input, "lab_max_blocks", "Max blocks (0 = automatic)", min_value=0,
         max_value=gpu_settings.MAX_POOL_BLOCKS, step=1, from_widget=_max_blocks_from_widget,
         help="Allocate at most this many of the plan's blocks. Automatic: pages of "
         f"{gpu_view.per_device_text(gpu_settings.DEFAULT_POOL_BYTES)}, within "
         f"{gpu_settings.DEFAULT_SHARE_PERCENT}% of free memory and at least 2 pages. A run "
         f"that would not fit in {gpu_settings.BENCH_SHARE_PERCENT}% of free memory is refused "
         "before anything is allocated.")
    bind(c[1].number_input, "lab_pages", "Pages per call (0 = automatic)", min_value=0,
         max_value=gpu_settings.MAX_POOL_BLOCKS, step=1, from_widget=int,
         disabled=state().lab_sweep == gpu_settings.PAGES_PER_CALL,  # the sweep list gives them
         help="Pages one gather / scatter moves. Automatic: the fewest pages that move at least "
         f"{gpu_view.per_device_text(gpu_settings.DEFAULT_CALL_BYTES)}, at most half the pool "
         "(so a sweep over page bytes moves other bytes a call as the pages grow).")
    # a row of its own: three choices side by side are wider than a third of the page
    bind(st.segmented_control, "lab_sweep", "Sweep", options=gpu_settings.SWEEPS, required=True,
         from_widget=lambda v: v or gpu_settings.SWEEPS[0])
    return device, impls, default_rounds


def _sweep_widget(s, pool: int, a: PlanAnalysis
                  ) -> tuple[tuple[int | None, ...], tuple[FlatMemoryPlan, ...]] | None:
    """The sweep's list (pages per call, or block sizes) and what the run then times: its pages
    per call and its plans. None while an entry is rejected (the page shows why)."""
    sweep_field = None
    if s.lab_sweep == gpu_settings.PAGES_PER_CALL:
        sweep_field, top = "lab_sweep_pages", pool  # a call's pages come from the pool
        suggested = gpu_view.pages_per_call_values(pool)
        bind(st.text_input, sweep_field, "Pages per call to sweep",
             to_widget=lambda v: gpu_settings.counts_text(v or suggested),
             from_widget=lambda t: _counts_from_widget(t, "pages per call", top, suggested),
             help=f"At most the pool's {pool:,} blocks; the suggestion goes up to half of it.")
    elif s.lab_sweep == gpu_settings.PAGE_BYTES:
        sweep_field, top = "lab_sweep_blocks", MAX_BLOCK_SIZE
        suggested = gpu_view.block_size_values(s.block_size, a.plan.geometry.block_size,
                                               top=top)
        bind(st.text_input, sweep_field, "Block sizes to sweep (tokens)",
             to_widget=lambda v: gpu_settings.counts_text(v or suggested),
             from_widget=lambda t: _counts_from_widget(t, "block sizes", top, suggested),
             help="Each is planned like the current one (same model, budget, planner and "
             "alignment); P may round up to cover the state rows.")
    if set(LAB_FIELDS + (sweep_field,)) & set(st.session_state[ERRORS_KEY]):
        return None  # a rejected entry stays on screen with its error; nothing runs
    s = state()
    if sweep_field != "lab_sweep_blocks":  # a page-bytes sweep plans other pages
        st.caption(gpu_view.pool_text(pool, a.plan.geometry.block_bytes, len(s.lab_layouts),
                                      capped_by_user=bool(s.lab_max_blocks)))
    if sweep_field is None:
        try:
            gpu_settings.check_pages_fit_pool("Pages per call", s.lab_pages, pool, "Max blocks",
                                              a.plan.geometry.num_blocks,
                                              capped_by_user=bool(s.lab_max_blocks))
        except ValueError as exc:
            st.error(error_text(str(exc)))
            return None
        return (s.lab_pages or None,), (a.plan,)
    if sweep_field == "lab_sweep_pages":
        try:  # a link's list may exceed this pool: say so under the list, keep Run disabled
            return gpu_settings.check_counts(s.lab_sweep_pages or suggested, "pages per call",
                                             maximum=top), (a.plan,)
        except ValueError as exc:
            st.error(error_text(str(exc)))
            return None
    swept = gpu_view.plans_for_block_sizes(
        s.profile().components(), s.lab_sweep_blocks or suggested, alignment=s.alignment,
        budget_bytes=s.budget().cache_bytes, planner=a.planner)
    for why in swept.skipped:
        st.caption(f"Skipped {why}")
    if not swept.plans:
        raise ValueError("block sizes: none of them gives a plan in this budget; try smaller "
                         "ones")
    return (s.lab_pages or None,), tuple(swept.plans)


def _fits(bench, device: str, plans: tuple[FlatMemoryPlan, ...],
          counts: tuple[int | None, ...]) -> bool:
    """Whether the run fits in free memory, said before Run where asking is cheap (the CPU; on
    CUDA it would open a context), and not while another session's run holds the memory (the
    page says the device is busy)."""
    if gpu_view.device_type(device) != "cpu" or bench.device_lock(device).locked():
        return True
    s = state()
    try:
        bench.check_sweep_fits(plans, device, s.lab_max_blocks or None, counts,
                               len(s.lab_layouts))
    except bench.PoolAllocationError as exc:
        st.error(error_text(str(exc)))
        return False
    return True


def _kernels_from_widget(chosen: list[str], available: tuple[str, ...]) -> tuple[str, ...] | None:
    if not chosen:
        raise ValueError("kernels: pick at least one (torch runs everywhere)")
    if set(chosen) == set(available):
        return None
    return gpu_settings.in_order(chosen, gpu_settings.KERNELS)


def _layouts_from_widget(chosen: list[str]) -> tuple[str, ...]:
    if not chosen:
        raise ValueError(f"pool layout: pick at least one ({gpu_settings.SLOT_MAJOR} is the "
                         "engines' default)")
    return gpu_settings.in_order(chosen, gpu_settings.POOL_LAYOUTS)


def _counts_from_widget(text: str, field: str, maximum: int,
                        suggested: tuple[int, ...]) -> tuple[int, ...] | None:
    values = gpu_settings.parse_counts(text, field, maximum=maximum)
    return None if values == suggested else values


def run(bench, cfg: gpu_view.LabSettings, a: PlanAnalysis) -> None:
    """Time the settings with live progress; keep the result in the session (reruns show it)."""
    device = cfg.device
    started = time.perf_counter()
    with st.status(f"Benchmarking on {device}", expanded=True) as status:
        bar = st.progress(0.0, text="starting")

        def progress(fraction: float, message: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=message)

        try:
            results = bench.run_sweep(
                cfg.plans, device=device, max_blocks=cfg.max_blocks,
                pages_per_call=cfg.counts, repeats=cfg.repeats,
                implementations=cfg.implementations, layouts=cfg.layouts,
                progress=progress)
        except bench.DeviceBusy:
            status.update(label=f"{device} is busy", state="error", expanded=False)
            st.warning(f"Another session is benchmarking {device}: run again when it is done.",
                       icon=":material/hourglass_top:")
            return
        except ValueError:
            status.update(label="The benchmark could not run", state="error", expanded=False)
            raise
        seconds = time.perf_counter() - started
        status.update(label=f"Measured on {device} in {seconds:.1f} s", state="complete",
                      expanded=False)
    model = state().profile().name
    st.session_state[LAST_RUN] = gpu_view.LabRun(
        results, model, gpu_view.plan_key(model, a.plan), seconds, cfg)


def show(last: gpu_view.LabRun, a: PlanAnalysis, cfg: gpu_view.LabSettings | None) -> None:
    """The kept run; marked stale when the model, the plan or (valid) run settings moved."""
    results = last.results
    first = results[0]
    st.subheader("Results", divider="gray")
    st.caption(gpu_view.run_caption(last))
    if stale := gpu_view.stale_text(last, state().profile().name, a.plan, cfg):
        st.info(stale, icon=":material/history:")
    allocation = gpu_view.allocation_rows(results)
    if len(allocation) == 1:
        al = allocation[0]
        c = metric_row("run")
        # (each pool layout allocates the same blocks, one after the other)
        each = " (each layout)" if gpu_view.several_layouts(results) else ""
        c.metric(f"Allocated bytes{each}", format_bytes(al.allocated_bytes),
                 delta=f"of {format_bytes(al.planned_bytes)} planned", delta_color="off",
                 delta_arrow="off",
                 help=f"{al.allocated_bytes:,} B of {al.planned_bytes:,} B")
        c.metric("Allocated blocks", f"{al.allocated_blocks:,}",
                 delta=f"of {al.planned_blocks:,} planned", delta_color="off",
                 delta_arrow="off")
        # a pages-per-call sweep ran on this one pool: give the range it covered
        pages = [r.pages_per_call for r in results]
        calls = [r.call_bytes for r in results]
        c.metric("Pages per call", gpu_view.value_span(pages))
        c.metric("Bytes per call", format_bytes(max(calls)),  # a range would not fit
                 delta=f"from {format_bytes(min(calls))}" if len(set(calls)) > 1 else None,
                 delta_color="off", delta_arrow="off",
                 help=f"{gpu_view.value_span(calls)} B = {gpu_view.value_span(pages)} "
                 f"{'page' if max(pages) == 1 else 'pages'} x {first.page_bytes:,} B")
        st.caption(f"Pool limited by {al.limited_by}: {al.allocated_blocks:,} blocks x "
                   f"{al.page_bytes:,} B = {exact_bytes(al.allocated_bytes)} of the planned "
                   f"{exact_bytes(al.planned_bytes)}.")
    else:
        st.caption("Pools allocated, one per plan (each pool layout holds the same blocks):")
        table([r.table_row() for r in allocation])
    if noise := gpu_view.noise_text(results):  # said before the figures it puts in doubt
        st.warning(noise, icon=":material/ssid_chart:")
    if slow := gpu_view.over_baseline_text(results):  # a share over 105%: the copy ran slow
        st.warning(slow, icon=":material/ssid_chart:")
    results_tables(results)
    if first.device == "cpu":
        st.caption(gpu_view.NO_HOST_MIRROR)
    if first.nominal_peak_gbps is None:
        st.caption(f"No nominal peak bandwidth is known for {first.device_name}.")
    st.caption(sentence_case(first.counting) + ". A baseline is timed in the same rounds as "
               "the moves measured against it: a reference, not a ceiling, so a move can beat "
               "it (over 100%) where its kernel streams memory better.")
    if last.settings.sweep == gpu_settings.ONE_RUN:
        fig = charts.bandwidth_bars(gpu_view.bandwidth_series(results, "pages_per_call"),
                                    title=gpu_view.bars_title(results))
        chart(fig, key="gpu.bars", file_name="bandwidth.html")
    else:
        x = "pages_per_call" if last.settings.sweep == gpu_settings.PAGES_PER_CALL else "page_bytes"
        fig = charts.bandwidth_sweep(gpu_view.bandwidth_series(results, x), x=x,
                                     title=gpu_view.sweep_title(results, last.settings.sweep))
        chart(fig, key=f"gpu.sweep.{x}", file_name=f"bandwidth_vs_{x}.html")
    compared = gpu_view.layout_rows(results)
    if compared:
        st.markdown(f"**{gpu_settings.PAGE_MAJOR.capitalize()} against {gpu_settings.SLOT_MAJOR}**")
        shown, apart_note = gpu_view.apart_said_once(gpu_view.varying_columns(compared))
        table(pd.DataFrame(shown),
              formats={f"{k} GB/s": "%.2f" for k in gpu_settings.POOL_LAYOUTS},
              helps=gpu_view.RESULT_HELP, labels=gpu_view.LAYOUT_LABELS)
        st.caption("Both layouts hold the same bytes and were timed in the same rounds against "
                   "one copy, so the ratio is the layout's effect. Where their rounds overlap, "
                   "the ratio is within this machine's noise: time more rounds."
                   + (f" {apart_note}" if apart_note else ""))
    c1, c2 = st.columns(2)
    c1.download_button("Results as JSON", data=gpu_view.results_json(last),
                       file_name="gpu_bench.json", mime="application/json", key="gpu.json",
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Results as CSV", data=gpu_view.results_csv(results),
                       file_name="gpu_bench.csv", mime="text/csv", key="gpu.csv",
                       on_click="ignore", icon=":material/download:")


def results_tables(results: tuple) -> None:
    """The results: the figures, then each row's timed rounds and bytes (named by the same
    columns up to GB/s). A run of one timed round has no rounds column: its one round is the
    median beside the figure (the run's caption says one round)."""
    rows = gpu_view.varying_columns(gpu_view.result_rows(results))
    names = list(rows[0])[:list(rows[0]).index("GB/s")]  # what each row timed
    one_round = all(len(f.samples_s) == 1 for r in results for f in r.figures)
    detail = [c for c in gpu_view.DETAIL_COLUMNS if not (one_round and c == gpu_view.ROUNDS_COLUMN)]
    table(pd.DataFrame([{k: v for k, v in row.items() if k not in gpu_view.DETAIL_COLUMNS}
                        for row in rows]),
          formats={"GB/s": "%.2f", gpu_view.MEDIAN_COLUMN: "%.3f"}, helps=gpu_view.RESULT_HELP)
    st.caption(gpu_view.table_names_text(results))
    st.caption(f"Each row's {'bytes' if one_round else 'timed rounds and bytes'}:")
    table(pd.DataFrame([{k: row[k] for k in (*names, *detail)} for row in rows]),
          helps=gpu_view.RESULT_HELP, labels=gpu_view.DETAIL_LABELS)


def main() -> None:
    st.title("GPU lab")
    st.caption("Allocates the current plan on a device (one tensor per slot, or one page-major "
               "buffer) and times the page moves an engine makes (gather, scatter, host mirror, "
               "state-row copy) against a plain copy of the same bytes.")
    a = None
    with user_errors():
        a = current_analysis()
    if a is None:  # the model or the sidebar settings are invalid: the error says why
        return
    st.caption(plan_caption(a))
    plan_headline(a)
    cfg = None  # the run settings, once valid
    with user_errors():
        from flatkv.gpu import bench  # torch: only when this page is drawn

        devices = bench.available_devices()
        if not gpu_view.has_gpu(devices):
            st.info(gpu_view.NO_GPU, icon=":material/memory:")
        cfg = settings(bench, devices, a)
        if cfg is not None and bench.device_lock(cfg.device).locked():
            st.warning(f"Another session is benchmarking {cfg.device} now.",
                       icon=":material/hourglass_top:")
        if st.button("Run benchmark", type="primary", icon=":material/play_arrow:",
                     key="gpu.run", disabled=cfg is None,
                     help="Fix the settings marked in red first." if cfg is None else None):
            run(bench, cfg, a)
    last = st.session_state.get(LAST_RUN)
    if last is not None:
        show(last, a, cfg)


main()
