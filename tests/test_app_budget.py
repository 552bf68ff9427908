"""The Budget page through streamlit's AppTest: concurrency, the budget and GPU for R requests,
its sweeps and the engine layout picked on it. Expected figures are derived by hand (SPEC.md
section 1); helpers in tests/app_helpers.py."""

from __future__ import annotations

import json

from app_helpers import (
    QWEN35_LINK,
    assert_clean,
    budget_caption,
    layout_figures,
    metrics,
    open_app,
    shown,
)

from flatkv import app_data
from flatkv.app_state import DEFAULT
from flatkv.units import format_bytes, sentence_case


def test_budget_keeps_its_own_settings_when_the_weights_fill_the_gpu():
    at = open_app("app_pages/budget.py", {"weights": "160GB"})
    assert not at.exception
    # 160 GB over the H100's 76,968,728,985 usable bytes: TP 2 leaves 80 GB a rank, too much;
    # TP 3 would leave room but does not split Qwen3-Next's 16 GDN key heads: TP 4
    assert [shown(e) for e in at.error] == [
        "Weights per rank (149.01 GiB) fill the usable memory (71.68 GiB): raise TP (4 is the "
        "least that splits the model and leaves room) or pick a larger GPU"]  # past 79.65 GiB
    assert at.selectbox(key="w.budget_strategy") and at.text_input(key="w.context")
    assert [e.label for e in at.expander] == ["Engine options"]  # flat reads the mamba mode


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
    assert any(shown(e).startswith("Context length (tokens per request) is empty: give e.g. "
                                   "262144, 256K") for e in at.error)
    assert "Concurrency at 128,000 tokens" in metrics(at)
    assert at.query_params["ctx"] == "128000"
    # a link may use the suffixes too
    again = open_app("app_pages/budget.py", {**QWEN35_LINK, "ctx": "256K"})
    assert_clean(again)
    assert "Concurrency at 262,144 tokens" in metrics(again)
    assert not [c.value for c in again.caption if "as vLLM reads it" in c.value]


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
    table = layout_figures(compare)
    assert "capacity (tokens)" not in table.columns
    assert table.loc["vLLM v1", "engine log"] == 203_448_000


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


def test_budget_says_an_engine_that_does_not_serve_the_model_as_a_notice():
    """SGLang serves no Jamba, at any budget: picked under "Whose layout", the page said so
    in a red error, as if something typed were wrong. It is a notice, in Compare's words for
    the layout (kept in its list, its reason under the table), with the layouts to pick
    instead: Jamba's mamba state rules out slab aliasing too (history groups only), and the
    other four have figures at the default budget."""
    at = open_app("app_pages/budget.py", {"model": "Jamba-1.5-Mini", "b_layout": "sglang"})
    assert not at.exception and not at.error
    compare = open_app("app_pages/compare.py", {"model": "Jamba-1.5-Mini"})
    (line,) = [c.value for c in compare.caption if c.value.startswith("**SGLang** does not")]
    assert line == ("**SGLang** does not apply: SGLang has no Jamba model (none in its releases "
                    "up to 0.5.23, October 2026; feature request #1190 is open): compare vLLM's "
                    "layout")
    assert [shown(w) for w in at.warning] == [
        f"{line}. Pick another layout under \"Whose layout\": FlatKV packed slabs, FlatKV per "
        "component, vLLM v1 and two-level pages have figures for this model here."]
    assert [e.label for e in compare.expander if "(does not apply)" in e.label] == [
        "SGLang (does not apply)", "slab aliasing (does not apply)"]
    # nothing to hold requests in: no least budget, no chart
    assert [m.label for m in at.metric] == ["Cache budget per rank"]  # the sidebar's
    assert not at.get("plotly_chart")
    # slab aliasing on Qwen3.5 (state layers) alike: a notice, SGLang among those that apply
    aliased = open_app("app_pages/budget.py", {"model": "Qwen3.5-27B", "b_layout": "aliased"})
    assert not aliased.error
    (notice,) = [shown(w) for w in aliased.warning]
    assert notice.startswith("**slab aliasing** does not apply: the model has state "
                             "layers")
    assert notice.endswith("under \"Whose layout\": FlatKV packed slabs, FlatKV per component, "
                           "vLLM v1, SGLang and two-level pages have figures for this model "
                           "here.")


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


def engine_expanders(at) -> list[str]:
    """The labels of a page's Engine options expander (Compare also has "Layouts" above it)."""
    return [e.label for e in at.expander if e.label.startswith("Engine options")]


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
    assert "vLLM 0.19's default engine options" in budget_caption(budget)
    assert engine_expanders(budget) == ["Engine options"]
    compare = open_app("app_pages/compare.py", link)
    assert "vLLM 0.19's default engine options (vLLM 0.34's own defaults set " in (
        compare.caption[0].value)
    assert engine_expanders(compare) == ["Engine options"]
    assert not [w for w in compare.number_input if w.key == "w.mamba_chunk_size"]
    compare = open_app("app_pages/compare.py", {**link, "mamba": "all"})
    assert "mamba cache mode all, mamba chunk 128" in compare.caption[0].value
    assert engine_expanders(compare) == ["Engine options (2 changed)"]


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
    # the same words under it as here; 97,870 blocks x 16 = 1,565,920 token slots, half of them
    # each group's, under the blocks
    deltas = {m.label: m.delta for m in at.metric}
    assert deltas["Capacity (tokens)"] == "windows counted as full history"
    assert deltas["Blocks"] == "token slots 1,565,920 (blocks x P)"
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


def test_budget_says_mode_alls_log_figure_is_one_releases():
    # mamba cache mode all: vLLM 0.31 is the last release with it (0.32's modes are align and
    # none), so the figure its log prints is 0.31's alone, as the caption under the metrics
    # says; "0.26 and later" beside it named releases that have no such mode
    at = open_app("app_pages/budget.py", {"model": "Nemotron-H-8B", "mamba": "all",
                                          "b_layout": "vllm"})
    assert_clean(at)
    logged = next(m for m in at.metric if m.label == 'vLLM\'s "GPU KV cache size" (tokens)')
    assert logged.delta == "as vLLM 0.31 logs it"
    assert any(c.value.startswith('To check a log\'s "GPU KV cache size: N tokens" line: vLLM '
                                  f"0.31 prints {logged.value} (the engine log)")
               for c in at.caption)


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
    # and in its help the older releases' of vLLM 0.19's own layout: P = max(64, 16 x
    # cdiv(2,146,304, 16 x 2,048)) = 1,056 (its model_executor/models/config.py:273-280),
    # 80e9 // (1,056 x 2,048) // 12 = 3,082 blocks, 3,082 // 4 groups x 1,056
    logged = next(m for m in at.metric if m.label == 'vLLM\'s "GPU KV cache size" (tokens)')
    assert logged.value == f"{2991 * 32768 // 34:,}"
    assert f"vLLM 0.19 and earlier printed {3082 // 4 * 1056:,} instead (beside it)" in (
        logged.help)
    older = next(m for m in at.metric if m.label == "Older vLLM log (tokens)")
    assert older.value == f"{3082 // 4 * 1056:,}" == "813,120"
    # three token figures side by side: each says which the concurrency (2,991 / 34 requests)
    # reads, int(2,991 / 34 x 32,768) its log's, as the releases since 0.26 print it
    assert (logged.delta, older.delta) == ("as vLLM 0.26 and later log it",
                                           "as vLLM 0.19 and earlier log it")
    assert metrics(at)["Concurrency at 32,768 tokens"] == f"{2991 / 34:.2f}"
    assert older.help.startswith("vLLM's \"GPU KV cache size\" as vLLM 0.19 and earlier printed "
                                 "it: num_blocks // groups x the smallest block size (P; in "
                                 "mamba cache mode none a state group's is min(P, "
                                 "max_model_len); their own P and blocks, where they are "
                                 "not the current layout's: P 1,056 here, a hybrid's a "
                                 "multiple of 16 (64 for MLA) and at least --block-size, not a "
                                 "multiple of it), 813,120 here")
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
    # one request fits while ceil(L / 544) + 1 <= 1,455: L <= 1,454 x 544 = 790,976. Layout's
    # map counts state by mamba cache mode too (none: 1 page) and adds a dummy page a group and
    # a page for the last: ceil(L / 544) + 2 + 2 <= 1,455 while ceil(L / 544) <= 1,451, so its
    # 1,451 x 544 = 789,344 is given beside
    button = at.button(key="budget.longest")
    assert button.label == f"Use the longest context at concurrency 1 ({1454 * 544:,} tokens)"
    assert button.help.endswith(f"and offers {1451 * 544:,} tokens by it for one request.")
    # with the map's state snapshots (snap=1, SPEC 3.5): at L = 544k, full k + 2 and state
    # min(k + 3, k + 2) = k + 2 pages, 2k + 4 <= 1,455 while k <= 725, and at 725 x 544 + 1
    # both take 728: 1,456. Layout's 394,400 is given beside
    snap = open_app("app_pages/budget.py", {"ctx": "1000000", "snap": "1"})
    assert (2 * 725 + 4, 2 * 726 + 4) == (1454, 1456)
    assert snap.button(key="budget.longest").help.endswith(
        f"and offers {725 * 544:,} tokens by it for one request.")


def test_a_context_no_request_fits_offers_the_longest_that_does():
    # Llama-4-Scout's own 10,485,760 tokens on the default H100: 0.04 of a request. The button
    # under the note sets the longest context one request fits by Budget's concurrency, 23,443
    # x 16 = 375,088 tokens (24,467 page ids over 1,024 chunked + ceil(L / 16) full a request:
    # by hand in tests/test_sizing.py)
    at = open_app("app_pages/budget.py", {"model": "Llama-4-Scout-17B-16E"})
    assert_clean(at)
    assert metrics(at)["Concurrency at 10,485,760 tokens"] == "0.04"
    assert [c for c in at.caption if c.value.startswith("Not even one request of 10,485,760")]
    button = at.button(key="budget.longest")
    assert button.label == "Use the longest context at concurrency 1 (375,088 tokens)"
    # Layout's count, the map's workload (SPEC 3.5), named and given in the help: 23,439 x 16
    # = 375,024, by hand in tests/test_workload.py
    assert button.help == (
        f"{sentence_case(app_data.LONGEST_BY['concurrency'])}. Layout counts "
        f"{app_data.LONGEST_BY['map']}, and offers 375,024 tokens by it for one request.")
    button.click().run()
    assert_clean(at)
    assert at.query_params["ctx"] == "375088"
    # 24,467 / (1,024 + 23,443) = 1 request exactly, and no note nor button past it
    assert metrics(at)["Concurrency at 375,088 tokens"] == "1.00"
    assert not [c for c in at.caption if c.value.startswith("Not even one request")]
    assert not [b for b in at.button if b.key == "budget.longest"]
    # vLLM refuses to start at 10,485,760 tokens: the same button under its refusal, to the
    # length at which its concurrency reaches one request
    vllm = open_app("app_pages/budget.py", {"model": "Llama-4-Scout-17B-16E", "b_layout": "vllm"})
    assert [e for e in vllm.error if "refuses to start" in e.value]
    # (the Layout page draws our planner's pages, not vLLM's: no figure of its beside)
    assert vllm.button(key="budget.longest").help == (
        f"{sentence_case(app_data.LONGEST_BY['concurrency'])}.")
    vllm.button(key="budget.longest").click().run()
    assert_clean(vllm)
    assert float(metrics(vllm)[f"Concurrency at {int(vllm.query_params['ctx']):,} tokens"]) >= 1
    # a context that one request fits: no button
    assert not [b for b in open_app("app_pages/budget.py").button if b.key == "budget.longest"]


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
    # more than the H100's 81,559 MiB (79.65 GiB): said beside the figure; the 80 GiB of
    # cache are more than the whole GPU too, so no higher memory fraction is offered
    assert 95_443_717_689 > 81_559 * 2**20 and 80 * 2**30 > 81_559 * 2**20
    assert ("More than this GPU's 79.65 GiB: a larger GPU or more TP (weights and the "
            "model's heads split further).") in [c.value for c in at.caption]
    # on an 85 GiB GPU the 80 GiB fit beside no weights at fraction 1: a higher one is offered
    roomy = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "131072",
                                             "gpu": "Custom", "gpu_mem": "85GiB"})
    assert metrics(roomy)["Budget for 5 requests"] == "80.00 GiB"  # 76.5 GiB hold 4.78
    assert ("More than this GPU's 85.00 GiB: a larger GPU, a higher memory fraction, or more "
            "TP (weights and the model's heads split further).") in [c.value for c in
                                                                     roomy.caption]
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
        "you give a number: 5, one more than the 4 that fit in FlatKV packed slabs.")
    # and on screen, with Compare's other start (one link read 4 here and 12 there, with no
    # word on why); a typed number, which both pages hold, has no such line
    why = ("5 requests until you give a number: one more than the 4 that fit in FlatKV packed "
           "slabs; Compare starts from the layout that holds most.")
    assert why in [c.value for c in roomy.caption]
    assert not [c.value for c in at.caption if "until you give a number" in c.value]
    # at 128 tokens 4,587 requests fit (76,968,728,985 // 2**21 = 36,701 blocks of 16 tokens,
    # 8 a request): the field offers its largest, 4,096, and says so, as that budget is less
    # than now, not one more than fit
    short = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B", "ctx": "128"})
    assert 76_968_728_985 // 2**21 // 8 == 4_587
    assert short.number_input(key="w.hold_requests").value == 4_096
    assert short.number_input(key="w.hold_requests").help.endswith(
        "Until you give a number: 4,096, the most this field takes (4,587 fit in FlatKV "
        "packed slabs already).")
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
    # the gaps say why under the chart, each run by its largest size: at 1 to 8 vLLM's kernel
    # pages by 16 (the chart and the table only left them blank), at 4,096 the request
    assert sweep["concurrency"].isna().tolist() == [True] * 4 + [False] * 8 + [True]
    (gaps,) = [c.value for c in at.caption if c.value.startswith("No figure at block sizes")]
    assert gaps.startswith(
        "No figure at block sizes 1 to 8 and 4,096 (the table's —). At 8: **vLLM v1** refuses "
        "to start: its attention backend pages by multiples of 16 tokens, and block size 8 is "
        "none (")
    assert (" At 4,096: **vLLM v1** refuses to start: one request of 262,144 tokens needs "
            f"{(262_144 // 4_096 + 3) * 12 * 4_096 * 1_024:,} B of KV cache") in gaps
    # every size in the table says its unit, as the chart's axis does (a bare "P" of 544 beside
    # a capacity in tokens read as bytes)
    assert list(sweep.columns) == ["block size (tokens)", "P (tokens)", "capacity (tokens)",
                                   "concurrency"]
    layout = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]
    assert "requested block size (tokens)" in [axis.get("title", {}).get("text") for name, axis
                                               in layout.items() if name.startswith("xaxis")]


def test_budget_block_size_sweep_says_the_size_is_asked_and_ps_floor():
    # Qwen3-Next TP2: a state row of 548,864 B over 1,024 B a token slot takes 536 slots, so
    # our packed slabs' P is 536 at the sizes 1 to 8 (their own alignment) and vLLM's
    # 16 x cdiv(548,864, 16 x 1,024) = 544 (its kernel block of 16) up to 32; above, each P is
    # the least multiple of the size asked that holds the row (64 x 9 = 576, 128 x 5 = 640,
    # 256 x 3 = 768, 512 x 2 = 1,024). "Flat until the size asked passes 544" was wrong: vLLM's
    # concurrency is 23.74x, 23.74x, 23.69x, 23.70x, 23.64x at 16 to 256, moving as P does
    assert -(-548_864 // 1_024) == 536 and 16 * -(-548_864 // (16 * 1_024)) == 544
    assert [b * -(-536 // b) for b in (16, 32, 64, 128, 256, 512)] == [544, 544, 576, 640, 768,
                                                                       1024]
    trade = ("(the sweep's table gives P at each size); the curve moves only as P does. A "
             "large P has costs these figures leave out (SPEC 3.1): prefix-cache hits come in "
             "whole pages of P tokens, and kernels that want P <= 128 break.")
    steps = "544 at 16 and 32; 576 at 64; 640 at 128; 768 at 256; 1,024 at 512"
    for layout, floor, said in (("flat", 536, f"536 at 1 to 8; {steps}"), ("vllm", 544, steps)):
        at = open_app("app_pages/budget.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                              "b_layout": layout})
        assert_clean(at)
        assert (f"The x axis is the block size asked; P, the tokens a page ends up with, is "
                f"never under {floor} here (P >= {floor}: a state row outgrows smaller pages), "
                f"a multiple of the size asked: {said} {trade}") in [c.value for c in at.caption]
        spec = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]
        assert "requested block size (tokens)" in [
            axis.get("title", {}).get("text") for name, axis in spec.items()
            if name.startswith("xaxis")]
    # the LCM pages' P is the size asked from 1 (5,120 at 1,024): no floor, where the line
    # said "never under 1"
    lcm = open_app("app_pages/budget.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                           "b_layout": "lcm"})
    assert_clean(lcm)
    assert not [c for c in lcm.caption if c.value.startswith("The x axis is the block size")]
    # a model whose P is the size asked at every size: no such line
    at = open_app("app_pages/budget.py", {"model": "Llama-3.1-8B"})
    assert not [c for c in at.caption if c.value.startswith("The x axis is the block size")]


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


def test_budgets_capacity_help_speaks_of_state_only_where_the_model_has_state():
    # gpt-oss-120b has no state layers: its help said "beside one request's state" and "each
    # state group that request's state pages", of a state it does not have
    oss = open_app("app_pages/budget.py", {"model": "gpt-oss-120b"})
    assert_clean(oss)
    assert {m.label: m.help for m in oss.metric}["Capacity (tokens)"] == (
        "The history the pool holds: every attention group (sliding and chunked ones too, "
        "without window eviction) N pages of P tokens, as on Compare. \"The math\" shows it "
        "with the numbers.")
    # Qwen3-Next's (state layers) says why its concurrency can read under capacity / context
    qwen = open_app("app_pages/budget.py", {"model": "Qwen3-Next-80B-A3B"})
    assert {m.label: m.help for m in qwen.metric}["Capacity (tokens)"].endswith(
        "as on Compare; concurrency charges every request its own state, so it can read under "
        "capacity over the context. \"The math\" shows it with the numbers.")


def test_budget_says_its_block_size_sweep_holds_a_budget_of_vllm_blocks_in_bytes(capsys):
    # a budget given as vLLM's blocks: the sweep over the block size keeps its bytes, where
    # `--vllm-blocks N --block-size b` counts N blocks at each b; a caption says which
    from flatkv.cli import main

    link = {**QWEN35_LINK, "gpu": "vLLM KV cache blocks", "kv_blocks": "3000"}
    at = open_app("app_pages/budget.py", link)
    assert_clean(at)
    # vLLM's block at block size 64: its attention page holds the state's 49,152 + 2,097,152 =
    # 2,146,304 B, 1,048 tokens of 2,048 B, up to 1,088 (the next multiple of 64); a block is
    # that page in each of a group's 12 layers (12 full, 36 linear): 1,088 x 2,048 x 12
    each = 1_088 * 2_048 * 12
    assert each == 26_738_688 and 3_000 * each == 80_216_064_000
    notes = [c.value for c in at.caption if c.value.startswith("The sweep holds")]
    assert notes == [
        "The sweep holds this budget's bytes at every block size: 3,000 vLLM blocks x "
        "26,738,688 B at block size 64 = 80,216,064,000 B (74.71 GiB). The command line's "
        "`--vllm-blocks 3000 --block-size b` works out a new budget at each b instead: 3,000 "
        "vLLM blocks of that size's bytes."]
    assert round(80_216_064_000 / 2**30, 2) == 74.71
    # the command line at block size 16: vLLM's page 1,056 tokens (the multiple of 16 from
    # 1,048), 3,000 x 1,056 x 2,048 x 12 = 77,856,768,000 B, another budget than the sweep's
    code = main(["plan", "--layers", "(3*linear,full)*12", "--kv-bytes-per-slot", "2048",
                 "--state", "conv=49152,ssm=2097152", "--vllm-blocks", "3000", "--block-size",
                 "16", "--alignment", "16"])
    assert code == 0 and 3_000 * 1_056 * 2_048 * 12 == 77_856_768_000
    assert ("note: budget 3,000 vLLM blocks x 25,952,256 B = 77,856,768,000 B (72.51 GiB) per "
            "rank") in capsys.readouterr().err
    # a budget given in bytes (a GPU's memory, here) is held by both alike: no caption
    plain = open_app("app_pages/budget.py", QWEN35_LINK)
    assert not [c for c in plain.caption if c.value.startswith("The sweep holds")]
