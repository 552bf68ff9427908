"""What spans the pages, through streamlit's AppTest: the sidebar, links and URL state, moving
between pages, errors and notices every page gives, the shared table and metric sizing, and the
figures Compare and Budget show beside the CLI's at the same settings. Expected figures are
derived by hand (SPEC.md section 1); helpers in tests/app_helpers.py."""

from __future__ import annotations

import dataclasses
import json
import random
import re

import pytest
from app_helpers import (
    QWEN35_LINK,
    ROOT,
    STATE_ONLY_LINK,
    TINY_LINK,
    assert_clean,
    bytes_by_category,
    caption_starting,
    category_tables,
    column_widths,
    layout_figures,
    least_budgets,
    metrics,
    open_app,
    shown,
    unescaped,
)
from streamlit.testing.v1 import AppTest

from flatkv import app_model
from flatkv.app_model import model_names
from flatkv.app_state import DEFAULT, decode_query, encode_query
from flatkv.units import error_sentence, markdown_literal

# a preset's refusal in plain words, not its file's gdn.k_heads: TP 1, 2, 4, 8 and 16 divide
# Qwen3-Next's 16 GDN key heads (its 2 KV heads and 16 query heads take them too)
QWEN3_NEXT_AT_TP_3 = (
    "Qwen3-Next-80B-A3B: its linear-attention (Gated DeltaNet) layers have 16 key heads, and TP "
    "3 does not divide them: choose TP 1, 2, 4, 8 or 16, the TPs up to 64 that split the model")
PAGES = ["app_pages/model.py", "app_pages/layout.py", "app_pages/budget.py", "app_pages/compare.py",
         "app_pages/gpu.py"]


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
    # the page goes on with the defaults: st.warning, as it shows figures (it was st.error,
    # as if nothing could be shown)
    assert not at.exception and not at.error
    notices = " ".join(shown(w) for w in at.warning)
    assert "block='lots' is not a whole number" in notices
    assert "'GPT-9' is not a known model" in notices
    assert "zoom" in notices
    assert [w.icon for w in at.warning] == [":material/link_off:"] * 3
    at.switch_page("app_pages/layout.py").run()
    # Qwen3-Next defaults: state 49,152 + 1,048,576 B over 2,048 B/slot -> 537 -> x16 = 544
    assert metrics(at)["P (tokens per page)"] == "544"
    assert not at.warning and not at.error  # the notice is shown once
    # a setting given twice: the last counts, and the page says so
    twice = open_app(None, {"tp": ["2", "4"], "model": "Qwen3-Next-80B-A3B"})
    assert [shown(w) for w in twice.warning] == [
        "The link gives tp 2 times ('2', '4'): using the last, tp='4'."]
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
    assert any(shown(e) == "GPU memory '0' must be positive: give the memory of one GPU, e.g. "
               "80GB or 141GB" for e in at.error)
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


def test_a_library_error_reads_as_a_sentence_where_it_opens_with_prose():
    # 200 GB of weights on the H100 80GB (85,520,809,984 B x 0.9 = 76,968,728,985 B usable,
    # 71.68 GiB): the budget's error opens "weights per rank", written to follow "error: " on
    # the CLI's line; the page starts its sentence with a capital
    assert 200 * 10**9 / 2**30 > 186.26 and 85_520_809_984 * 9 // 10 == 76_968_728_985
    at = open_app("app_pages/layout.py", {"weights": "200GB"})
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "Weights per rank (186.26 GiB) fill the usable memory (71.68 GiB): raise TP (4 is the "
        "least that splits the model and leaves room) or pick a larger GPU"]
    # a message that opens with a name keeps its case: a flag, a key, a file, a quote, a
    # model_type before its file, a field and its value, an engine's own spelling
    kept = ["--budget 3 is", "kv_mem=3 is", "layer_types has", "config.json has", "'x' is",
            "llama config.json has", "kind 'x' is not", "strategy is 'x'", "count must be",
            "vLLM refuses to start", "gdn.v_heads is", "plain"]
    assert [error_sentence(m) for m in kept] == kept
    assert [error_sentence(m) for m in ("the budget of 1 B", "memory fraction is 2")] == [
        "The budget of 1 B", "Memory fraction is 2"]


def test_a_table_too_wide_for_its_place_is_the_fewest_runs_of_columns_that_fit():
    from app_pages._frame import column_runs

    # Compare's bytes by category at 1000 px: "state page padding" 146 px, then a layout's
    # exact bytes 119 each; five took 146 + 5 x 119 = 741 px of 538, three take 503
    assert 146 + 5 * 119 == 741 and 146 + 3 * 119 == 503 <= 538 < 146 + 4 * 119
    assert column_runs(146, [119] * 5, 538) == [range(0, 3), range(3, 5)]
    assert column_runs(146, [119] * 6, 538) == [range(0, 3), range(3, 6)]
    assert column_runs(146, [119] * 4, 538) == [range(0, 2), range(2, 4)]  # not three and one
    assert column_runs(146, [119] * 3, 538) == [range(0, 3)]  # it fits: one table
    # gpt-oss-20b's six layouts over context lengths in an expander's 504 px: 71 + 495 = 566
    assert column_runs(71, [64, 112, 78, 78, 78, 85], 504) == [range(0, 3), range(3, 6)]
    assert column_runs(100, [600, 50], 538) == [range(0, 1), range(1, 2)]  # too wide alone
    assert column_runs(100, [], 538) == [range(0)]  # the first column alone: one table


def test_table_columns_are_as_wide_as_their_largest_figure():
    # left to the grid, Compare's "Where the budget goes" sized vLLM's column by its header
    # and showed 76,968,493,056 B as "8,493,056" at 1000 px; each column now takes its widest
    # text at 6.8 px a character plus 24 px (a tooltip's icon 18 px more), at most 400 px
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    assert_clean(at)
    widths = {name: width for frame in category_tables(at)
              for name, width in column_widths(frame).items()}
    budget = bytes_by_category(at)
    shown = f"{int(budget.loc['kv history in use', 'vLLM']):,}"
    # vLLM's blocks: 12 layers' pages of 16 x 2,048 B, 76,968,728,985 // 393,216 = 195,741
    assert shown == f"{195_741 * 12 * 16 * 2048:,}" == "76,968,493,056"
    assert widths["vLLM"] == int(len(shown) * 6.8) + 24 == 119
    # its header, short, is narrower than its figures
    assert widths["per component"] == 119 > int(len("per component") * 6.8) + 24
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


def test_captions_say_where_the_budget_comes_from():
    # a screenshot carries its assumptions: the H100's 85,520,809,984 B (79.65 GiB) x 0.9, the
    # weights (0 B unless entered), or the KV cache memory a log gave
    compare = open_app("app_pages/compare.py", {})
    assert shown(compare.caption[0]).startswith(
        "Qwen3-Next-80B-A3B · budget 76,968,728,985 B (71.68 GiB) per rank (79.65 GiB x 0.9, "
        "no weights entered: enter them in the sidebar) · ")
    layout = open_app("app_pages/layout.py", {"weights": "80GB", "tp": "2"})
    # 76,968,728,985 B usable - 40e9 B of weights per rank; the planner named as the sidebar does
    budget_line, defaults = shown(layout.caption[0]).split(" · vLLM 0.19's", 1)
    assert budget_line == (
        "Qwen3-Next-80B-A3B · packed slabs · budget 36,968,728,985 B (34.43 GiB) per rank "
        "(79.65 GiB x 0.9 - 37.25 GiB of weights per rank)")
    # Layout draws vLLM's layout too, so its caption says whose vLLM options (the lab's not)
    assert defaults.startswith(" default engine options (vLLM 0.34's own defaults set ")
    lab = open_app("app_pages/gpu.py", {"weights": "80GB", "tp": "2"})
    assert budget_line in [shown(c) for c in lab.caption]
    given = open_app("app_pages/compare.py", {"gpu": "KV cache memory", "kv_mem": "40GiB"})
    assert "per rank (KV cache memory as given) · " in shown(given.caption[0])


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
    # an architecture in SGLang's reason for its pools: a class name (a link takes no other),
    # whose underscores Markdown would read as bold
    arch = "My__Fancy__Model"
    gem = open_app("app_pages/compare.py", {
        "model": "custom", "layers": "(sliding,full)*4", "kv": "2048", "window": "128",
        "arch": arch})
    assert_clean(gem)
    (why,) = [c for c in gem.caption if shown(c).startswith("SGLang keeps every token")]
    assert markdown_literal(arch) in why.value and arch in shown(why)
    assert markdown_literal(arch) in gem.selectbox(key="w.sglang_swa_pool").help


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


@pytest.mark.parametrize("model", model_names())
def test_every_page_renders_for_every_example(model):
    at = open_app(None, {"model": model})
    for page in PAGES:
        at.switch_page(page).run()
        assert_clean(at)
    assert at.query_params.get("model", DEFAULT.model) == model  # the default stays implicit


@pytest.mark.parametrize("page", PAGES)
def test_a_bad_setting_is_explained_once_on_the_page(page):
    at = open_app(page, {"model": "Qwen3-Next-80B-A3B"})
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    assert not at.exception
    # one error box; the sidebar only points at it
    assert [shown(e).split(". Shown below")[0] for e in at.error] == [
        QWEN3_NEXT_AT_TP_3]
    assert any("the page says why" in c.value for c in at.sidebar.caption)
    at.sidebar.number_input(key="w.tp").set_value(1).run()
    at.sidebar.text_input(key="w.weights").set_value("200GB").run()
    fill = "weights per rank (186.26 GiB) fill the usable memory (71.68 GiB)"
    side = " ".join(c.value for c in at.sidebar.caption)
    if page == "app_pages/model.py":  # no budget on the Model page: the sidebar says why
        assert not at.error and fill in side
    else:
        # the page's error starts its sentence with a capital (error_sentence)
        assert [f"W{fill[1:]}" in shown(e) for e in at.error] == [True] and fill not in side


def test_the_profile_cache_key_changes_with_every_field():
    # a field left out of the key lets two models share cached figures: ssm tensors of equal
    # bytes in bfloat16 and in float32 size SGLang's float32 state differently
    from dataclasses import fields, replace

    from app_pages._figures import profile_key
    from flatkv.app_model import profile_for

    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    gpt = profile_for("gpt-oss-20b", None, 1)
    scout = profile_for("Llama-4-Scout-17B-16E", None, 1)
    dsa = profile_for("DeepSeek-V3.2", None, 1)
    assert (qwen.ssm_element_bytes, gpt.sliding_window) == (2, 128)
    assert dsa.dsa_raw_fp8_bytes_per_slot == 576 + 132
    assert qwen.gdn_key_head_dims == {128}
    changes = [
        (qwen, "layer_types", qwen.layer_types[::-1]),
        (replace(qwen, kv_tensor_bytes=()), "kv_bytes_per_slot", 1),
        (qwen, "state_const_bytes", {**qwen.state_const_bytes, "conv": 6}),
        (gpt, "sliding_window", 256), (qwen, "name", "other"), (qwen, "kernel_block_size", 64),
        (replace(qwen, ssm_dtype=None), "ssm_element_bytes", 4),
        (gpt, "architectures", ("Gemma3ForCausalLM",)),
        (qwen, "config_mamba_ssm_dtype", "bfloat16"), (qwen, "mamba_chunk_size", 64),
        (qwen, "config_mamba_ssm_cache_dtype", "bfloat16"),
        (qwen, "conv_rows", 1), (gpt, "indexer_bytes_per_slot", 132),
        (scout, "attention_chunk_size", 4096), (qwen, "kv_dtype", "float16"),
        (qwen, "kv_tensor_bytes", (1024,)), (qwen, "conv_element_bytes", 4),
        (gpt, "sliding_kv_bytes_per_slot", 4096),
        (gpt, "kv_shared_layer_types", ("sliding_attention",)),
        (replace(gpt, sliding_kv_bytes_per_slot=4096), "sliding_kv_tensor_bytes", (2048, 2048)),
        (qwen, "ssm_dtype", "float16"),  # bfloat16's bytes: vLLM's KDA refuses this one
        # the TP behind the bytes, and the profiles at TP / D SGLang's attention DP reads
        (qwen, "tp", 4), (qwen, "attention_dp_profiles", ()),
        # SGLang's raw fp8 DSA row on a Blackwell (DeepSeek-V3.2's 576 + 132 B a token)
        (dsa, "dsa_raw_fp8_bytes_per_slot", 576 + 132 + 1),
        # SGLang keeps a DSA model with learnable sinks in bfloat16 on a Blackwell
        (dsa, "learnable_sink", True),
        # vLLM 0.34 keeps a GDN model's prefill checkpoint block on a B200 at key head dim 128
        # alone (equal bytes at 64 x 2 heads: the figures differ, equality does not see it)
        (qwen, "gdn_key_head_dims", frozenset({64})),
    ]
    assert {f.name for f in fields(qwen)} == {name for _, name, _ in changes}, \
        "give each new field of CacheProfile a change here"
    for profile, name, value in changes:
        assert profile_key(replace(profile, **{name: value})) != profile_key(profile), name
    assert profile_key(replace(qwen)) == profile_key(qwen)


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


@pytest.mark.parametrize("page", PAGES)
def test_with_both_model_and_budget_wrong_the_page_names_the_tp_and_the_sidebar_the_budget(page):
    # the TP that does not split the model is the page's error on every page, the weights
    # that fill the memory the sidebar's: Compare showed only the weights, its sidebar
    # pointing at the page for the model's error the page did not give
    at = open_app(page, {"model": "Qwen3-Next-80B-A3B", "weights": "500GB"})
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    assert not at.exception
    assert [shown(e).split(". Shown below")[0] for e in at.error] == [
        QWEN3_NEXT_AT_TP_3]
    side = " ".join(c.value for c in at.sidebar.caption)
    assert "weights per rank" in side and "fill the usable memory" in side


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


def test_a_presets_caveat_shows_where_its_figures_do():
    # Nemotron-H-8B is planned in bf16 as SPEC.md has it; vLLM and transformers keep float32,
    # and vLLM's figures do (it said "the vLLM column": Compare gives vLLM a row, the CLI a
    # column, the Model page neither)
    for page in ("app_pages/model.py", "app_pages/compare.py"):
        at = open_app(page, {"model": "Nemotron-H-8B"})
        shown_text = [shown(e) for e in at.info] + [shown(c) for c in at.caption]
        assert any("default nemotron_h's to float32 (mamba_ssm_cache_dtype), twice the state "
                   "bytes: vLLM's figures keep float32, as vLLM does unless told" in t
                   for t in shown_text), page
        if page.endswith("compare.py"):  # and under vLLM's log, the line it leaves out
            assert any("vLLM logs \"Updating mamba_ssm_cache_dtype to 'float32' for NemotronH "
                       "model\" as its config hook picks the ssm dtype" in t for t in shown_text)
    assert not any("Note on this model" in shown(c)
                   for c in open_app("app_pages/compare.py", {}).caption)  # no notes: no line


def test_the_planner_hint_stays_off_a_budget_error():
    # with the budget wrong as well, the page explains the budget, without the planner hint
    at = open_app("app_pages/layout.py", {**STATE_ONLY_LINK, "weights": "500GB"})
    assert not at.exception
    (error,) = [shown(e) for e in at.error]
    assert error.startswith("Weights per rank") and "pick the planner" not in error


def test_sidebar_says_when_no_weights_are_set():
    def note(at):
        return [c.value for c in at.sidebar.caption if c.value.startswith("Model weights 0 B")]

    assert len(note(open_app("app_pages/layout.py"))) == 1  # the default view: weights 0 B
    assert note(open_app("app_pages/layout.py", {"weights": "80GB"})) == []


def test_the_sidebar_shows_the_cache_budget_per_rank():
    # 81,559 MiB x 0.9 = 76,968,728,985 B usable (floored); weights 16 GB over TP 2 leave
    # 76,968,728,985 - 8,000,000,000 = 68,968,728,985 B = 64.23 GiB for the cache
    at = open_app("app_pages/model.py", {"gpu": "H100 80GB", "frac": "0.9", "weights": "16GB",
                                         "tp": "2"})
    (side,) = [x for x in at.sidebar.metric if x.label == "Cache budget per rank"]
    assert (side.value, side.help) == ("64.23 GiB", "68,968,728,985 B")


def test_the_sidebar_says_what_each_planner_is():
    # "packed slabs" and "one tensor per component" alone are jargon: the Planner's help says
    # each in Compare's words for its layout, and which pages plan with it
    at = open_app("app_pages/model.py")
    (planner,) = [x for x in at.sidebar.selectbox if x.label == "Planner"]
    assert planner.options == ["packed slabs", "one tensor per component"]
    assert planner.help.startswith(
        "Packed slabs: our planner, one page-id space for every group; slot tensor j packs the "
        "j-th layer of every group side by side")
    assert (". One tensor per component: the same page ids and P as packed slabs, a tensor per "
            "component instead of packed rows") in planner.help
    assert planner.help.endswith(
        "Layout, GPU lab and Budget (until another layout is picked there) plan with it.")


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


def test_a_hand_made_links_spec_holding_a_tp_says_in_plain_words_which_parameter_gives_it():
    # the app writes a spec at TP 1 and the TP as tp=; a spec JSON holding tp 3, which
    # Qwen3-Next's 16 GDN key heads do not split, refused the model in the JSON's field words
    # ("gdn.k_heads = 16 is not divisible by tp = 3") and fell back to the default model
    spec = json.loads(app_model.spec_to_json(app_model.preset_spec("Qwen3-Next-80B-A3B")))
    link = {"model": "spec", "spec": app_model.pack_spec(json.dumps({**spec, "tp": 3}))}
    at = open_app(None, link)
    assert not at.exception and not at.error
    assert [shown(w) for w in at.warning] == [
        "The link's spec holds tp 3, which is not read there: a link gives the TP as its tp "
        "parameter, and TP 3 does not split the model: Qwen3-Next-80B-A3B: its "
        "linear-attention (Gated DeltaNet) layers have 16 key heads, and TP 3 does not divide "
        "them: choose TP 1, 2, 4, 8 or 16, the TPs up to 64 that split the model."]
    state = at.session_state["flatkv.state"]
    assert (state.model, state.tp) == ("spec", 1)  # the link's model kept, at its tp (none: 1)
    # one that splits it: named as the tp parameter to give
    two = {**link, "spec": app_model.pack_spec(json.dumps({**spec, "tp": 2}))}
    at = open_app(None, two)
    assert [shown(w) for w in at.warning] == [
        "The link's spec holds tp 2, which is not read there: a link gives the TP as its tp "
        "parameter (tp=2)."]
    assert at.session_state["flatkv.state"].tp == 1
    # tp=4 given beside it is the TP, and the notice names it, not the spec's as one to give
    at = open_app(None, {**two, "tp": "4"})
    assert [shown(w) for w in at.warning] == [
        "The link's spec holds tp 2, which is not read there: a link gives the TP as its tp "
        "parameter, as this one does."]
    assert at.session_state["flatkv.state"].tp == 4


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
        near = f"{whole:,} or {whole + 1:,}"
        if key == "w.lab_max_blocks":  # 1.5 (from 0, automatic): it takes no 1, two pages at least
            near = "0 or 2"
        said = f"is {plain_number(whole + 0.5)}: give a whole number, such as {near}"
        errors = [shown(e) for e in at.error]
        assert any(said in e for e in errors), (key, errors)
        if key.startswith("w."):  # a bound field: its label, word for word
            assert f"{box.label} {said}" in errors, (key, errors)
        assert dict(at.query_params) == before, key  # no figure moved to the cut value


def test_a_typed_fraction_below_a_fields_least_suggests_only_whole_numbers_it_takes():
    # 0.5 KV heads suggested "such as 0 or 1", and 0 is refused in turn (a walk of odd
    # entries over the hand editor found it); the sidebar's TP likewise, and 1,024.5 past TP's
    # most suggested 1,025
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key="spec.full.kv_heads").set_value(0.5).run()
    assert any("full: kv heads is 0.5: give a whole number, such as 1." in shown(e)
               for e in at.error), [shown(e) for e in at.error]
    for typed, said in ((0.5, "such as 1"), (1024.5, "such as 1,024"), (2.5, "such as 2 or 3")):
        at.number_input(key="w.tp").set_value(typed).run()
        assert f"Tensor parallel (TP) is {typed:g}: give a whole number, {said}" in [
            shown(e) for e in at.error], typed


def test_a_metric_too_wide_for_a_grid_cell_takes_two():
    # the grid's cell at 1000 px: two in the 540 px main column, a 16 px gap between them
    from app_pages._frame import METRIC_MIN_PX, label_px, metric_cell_px, metric_px

    assert metric_cell_px() == (540 - 16) // 2 == 262 >= METRIC_MIN_PX
    # as many cells a line as fit: two at 1000 px, three at 1,366 (905 px) and 1,440 (979)
    assert [(w + 16) // (METRIC_MIN_PX + 16) for w in (540, 905, 979)] == [2, 3, 3]
    # a label counted by its characters, a few percent over Chromium's widths (its tooltip's
    # icon 20 px more): vLLM's logged tokens on Budget fit one cell (239 px; 210 + 20 in
    # Chromium), as do its delta (38 x 6 = 228; 230) and gpt-oss's dead share on Layout (254;
    # 227 + 20, where at 6.6 px a character it counted 277 and took two); a sliding model's
    # capacity on Layout, its delta of 68 characters (408 px; 420), takes two, as does SGLang's
    # label (273; 246 + 20, cut in one cell)
    assert metric_px("vLLM's \"GPU KV cache size\" (tokens)",
                     "concurrency x context, as vLLM logs it", True) == 239
    assert metric_px("Dead share of a sliding_attention block", None, True) == 254 <= 262
    assert metric_px("Capacity (tokens)", "token slots 1,565,920 (blocks x P) · windows "
                     "counted as full history", True) == 68 * 6 == 408
    assert metric_px("SGLang's max_total_num_tokens (tokens)", None, True) == 273 > 262
    # the six classes: a space 3.5 px, "t" 4.6, "s" 6.6, digits 7.6, "D" 9.0, "m" 11.2
    assert label_px(" ts7Dm") == 3.5 + 4.6 + 6.6 + 7.6 + 9.0 + 11.2


def test_a_metric_row_keys_each_metric_wider_than_a_quarter_or_a_cell_by_its_kind():
    # the grid (METRIC_GRID_CSS) reads a metric's width off its key, no browser needed to see
    # it: one of a quarter (232 px, four in the 980 px main column at 1,440 px less three
    # gaps of 16: 233 each) goes straight in the row; one wider, an "over-quarter" cell of its own
    # (a row of four holding it stays two a line); one wider than a cell at 1000 px (262), a
    # "two-cells" one. Budget's requests to hold sit in the grid of the figures above
    from app_pages._frame import METRIC_QUARTER_PX, metric_cell_px, metric_px

    assert (980 - 3 * 16) // 4 == 233 >= METRIC_QUARTER_PX == 232
    assert (905 - 3 * 16) // 4 == 214 < METRIC_QUARTER_PX  # 1,366 px: two a line
    labels = ["Blocks", "Dead share of a full_attention block",
              "SGLang's max_total_num_tokens (tokens)"]
    # 38 px ("Blocks": B, l, o, c, k, s at 7.6, 3.5, 7.6, 6.6, 6.6, 6.6); the dead share 214
    # and its icon 20; SGLang's 253 and its icon (test above)
    assert [metric_px(labels[0]), metric_px(labels[1], None, True),
            metric_px(labels[2], None, True)] == [38, 234, 273]
    assert 38 <= METRIC_QUARTER_PX < 234 <= metric_cell_px() < 273
    at = AppTest.from_string(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from app_pages._frame import metric_row\n"
        "row = metric_row('t')\n"
        f"for label in {labels!r}:\n"
        "    row.metric(label, 1, help='h' if label != 'Blocks' else None)\n"
        "metric_row('hold', under=True).metric('Blocks', 2)\n").run()
    assert not at.exception
    rows = [b for b in at.main.children.values() if b.type == "flex_container"]
    # a block's id: "$$ID-<hash>-<key>"
    assert [b.proto.id.split("-", 2)[2] for b in rows] == ["metrics-t", "metrics-under-hold"]
    cells = list(rows[0].children.values())
    assert cells[0].type == "metric" and cells[0].label == "Blocks"
    assert [(c.proto.id.split("-", 2)[2], c.children[0].label)
            for c in cells[1:]] == [("metric-over-quarter-t-1", labels[1]),
                                    ("metric-two-cells-t-2", labels[2])]


def test_layout_and_compare_name_the_kinds_the_planners_state_group_holds():
    # Nemotron-H-8B: the pages' state group (their Formulas' too), linear_attention in the
    # plan's JSON, the Model page's kind mamba2: both pages say which is which. Its 52
    # layers are 24 Mamba2, 4 attention and 24 MLP (hybrid_override_pattern's M, * and -): 28
    # cache layers, 24 of them mamba2
    from flatkv.app_model import spec_for

    spec = spec_for("Nemotron-H-8B", None, 1)
    assert spec.layer_names.count("mamba2") == 24 and len(spec.layer_names) == 28
    said = ("The state group (`linear_attention` in the plan's JSON) holds every state layer, "
            "whatever its kind: here the model's 24 mamba2 layers.")
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


# Entries a user may type into a number or a text field: edge values, values the heads do not
# split over, sizes and tokens in odd spellings, none at all.
ODD_NUMBERS = [0.0, 1.0, -1.0, 3.0, 2.5, 1e20, None, 4097.0, 65536.0]
ODD_TEXTS = ["", " ", "1e3", "128K", "0x10", "ünïcødé", "1,024", "-5", "80GB", "full*2"]
# words of a Python error, never of a message the app wrote for the user
PYTHON_WORDS = ("Traceback", "NoneType", "ZeroDivision", "KeyError", "object has no attribute",
                "invalid literal", "unsupported operand", "index out of range", "or None")


def _odd_entry(rng: random.Random, at: AppTest) -> None:
    """Sets one number field, text field or toggle of the page (sidebar too) to an odd entry."""
    fields = [("n", w) for w in at.number_input] + [("t", w) for w in at.text_input] + [
        ("b", w) for w in at.toggle]
    kind, widget = rng.choice(fields)
    value = {"n": lambda: rng.choice(ODD_NUMBERS), "t": lambda: rng.choice(ODD_TEXTS),
             "b": lambda: not widget.value}[kind]()
    widget.set_value(value).run()


@pytest.mark.parametrize("seed", [0, 1, 14, 29])
def test_odd_entries_in_a_row_leave_no_traceback_and_a_link_that_reopens(seed):
    # a seeded walk of odd entries (edge values, sizes and tokens in odd spellings, empty
    # fields) over Layout, Budget and Compare's fields, the sidebar's too, from gpt-oss-20b
    # (sliding and full layers) or Qwen3-Next (state and full), SGLang's max running requests
    # 64: each step shows its errors as the app words them, never a
    # traceback, and the link the page writes opens the same view without a notice. Such a
    # walk found Compare's KeyError with SGLang's radix cache off and a max running requests
    # (seeds 14 and 29 on Compare: fixed in two_pool_blocks_text).
    rng = random.Random(seed)
    page = ["app_pages/layout.py", "app_pages/budget.py", "app_pages/compare.py"][seed % 3]
    at = open_app(page, {"model": rng.choice(["gpt-oss-20b", "Qwen3-Next-80B-A3B"]),
                         "sg_maxrun": "64"})
    for step in range(8):
        _odd_entry(rng, at)
        said = [shown(e) for e in (*at.error, *at.warning)]
        assert not at.exception, (seed, step)
        assert not [s for s in said if any(w in s for w in PYTHON_WORDS)], (seed, step, said)
        link = {k: at.query_params[k] for k in at.query_params}
        reopened, notices = decode_query(link)
        if notices:  # only a TP the model's heads do not split, which the page says too
            assert all(n.endswith("; using TP 1.") and n.removesuffix("; using TP 1.") in said
                       for n in notices), (seed, step, notices)
        else:
            assert encode_query(reopened) == link, (seed, step)


# config.json texts to mutate: a model of each kind the Model page reads (full attention; full
# and linear attention; Mamba, attention and MLP letters)
CONFIGS = [
    {"model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 8,
     "num_key_value_heads": 2, "hidden_size": 512, "torch_dtype": "bfloat16"},
    {"model_type": "qwen3_next", "num_hidden_layers": 8, "full_attention_interval": 4,
     "num_key_value_heads": 2, "head_dim": 256, "linear_num_value_heads": 32},
    {"model_type": "nemotron_h", "hybrid_override_pattern": "M-M*-M-", "mamba_num_heads": 128,
     "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8},
]
# what a config.json field may hold by mistake: JSON's true, null, NaN, a string, a nested list
ODD_FIELDS = [True, None, float("nan"), float("inf"), -1, 0, 1.5, "4096", [["x"]], {}, 2**63]
ODD_LAYER_TYPES = ["full_attention", "linear_attention", "sliding_attention", "M", None, 3]
# Python's words, outside the text a message quotes back (a typed 'None' stays the user's)
PYTHON_IN_CONFIG = re.compile(r"\b(True|False|None|nan|inf|\w+Error|NoneType)\b|<class|"
                              r"expected \w+, got|\w\[\d+\]")
QUOTED_TEXT = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def _odd_config(rng: random.Random) -> str:
    """One of CONFIGS with a field dropped, set to an odd value, or a layer_types of odd length
    and kinds; or no JSON object at all."""
    config = dict(rng.choice(CONFIGS))
    change = rng.randrange(4)
    if change == 0:
        del config[rng.choice([k for k in config if k != "model_type"])]
    elif change == 1:
        config[rng.choice(list(config))] = rng.choice(ODD_FIELDS)
    elif change == 2:
        config["layer_types"] = [rng.choice(ODD_LAYER_TYPES) for _ in range(rng.randint(0, 9))]
    else:
        return rng.choice(["", "[]", "{", "null", "meta-llama/Llama-3.1-8B", "ünïcødé"])
    return json.dumps(config)


@pytest.mark.parametrize("seed", [7])
def test_odd_config_json_texts_in_a_row_are_refused_in_the_files_words(seed):
    # a seeded walk of mutated config.json texts pasted and loaded on the Model page: no
    # traceback, an error in the file's words (JSON's true / null / NaN, "entry 2 of 3", never
    # Python's True / None / nan, "Field 'x' expected int, got list", "layer_types[1]"), and
    # a config taken shows Layout's figures whole (seed 7 takes 3 of its 6). Such a walk found
    # those Python words (seed 7 fails on 75c15a5's parent, as 9 of seeds 0 to 11 do)
    rng = random.Random(seed)
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("config.json").run()
    for step in range(6):
        text = _odd_config(rng)
        at.text_area(key="hf.paste").set_value(text).run()
        at.button(key="hf.load").click().run()
        assert not at.exception, (seed, step, text)
        said = [shown(e) for e in at.error]
        assert not [s for s in said if PYTHON_IN_CONFIG.search(QUOTED_TEXT.sub("", s))], (
            seed, step, text, said)
        if not said:  # taken: Layout plans it, its figures whole numbers of bytes
            layout = at.switch_page("app_pages/layout.py").run()
            assert_clean(layout)
            block = metrics(layout)["Block bytes"]
            assert re.fullmatch(r"[\d,.]+ (B|KiB|MiB|GiB)", block), (seed, step, block)
            at.switch_page("app_pages/model.py").run()
            at.segmented_control(key="model.source").set_value("config.json").run()


# The same settings as a link and as `python -m flatkv compare` flags, with vLLM's figures derived
# by hand: (budget B, P, blocks, concurrency)
SAME_SETTINGS = [
    # SPEC 3.1's anchor: 44.59 GiB; P = 16 x cdiv(548,864, 16 x 1,024) = 544, a page
    # max(544 x 1,024, 548,864) = 557,056 B, groups of 12 layers; a request of 262,144 tokens
    # holds 3 state pages and cdiv(262,144, 544) = 482 full ones
    ({"model": "Qwen3-Next-80B-A3B", "tp": "2", "gpu": "KV cache memory", "kv_mem": "44.59GiB"},
     ["--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--budget", "44.59GiB"],
     (int(44.59 * 2**30), -(-548_864 // (16 * 1024)) * 16, 47_878_147_932 // 557_056 // 12,
      round(7_162 / (3 + 482), 2))),
    # gpt-oss-20b on the B200 preset (memory fraction and weights derived on both sides, SGLang's
    # chunk by that GPU's memory): 183,359 MiB x 0.9 - 13 GB; pages of 64 x 2,048 B, groups of
    # 12; at 16,384 tokens a request holds 256 full pages and, async scheduling keeping 2 x 8,192
    # tokens in flight, cdiv(min(128 - 1 + 16,384, 16,384), 64) + 1 = 257 sliding ones
    ({"model": "gpt-oss-20b", "gpu": "B200 192GB", "weights": "13GB", "ctx": "16384",
      "block": "64", "v_async": "1"},
     ["--preset", "gpt-oss-20b", "--gpu-memory", "B200 192GB", "--weights", "13GB", "--context",
      "16384", "--block-size", "64", "--vllm-async-scheduling"],
     (183_359 * 2**20 * 9 // 10 - 13 * 10**9, 64, 160_039_262_105 // (64 * 2048) // 12,
      round(101_750 / (256 + 257), 2))),
]


@pytest.mark.parametrize("link, flags, vllm_by_hand", SAME_SETTINGS,
                         ids=["spec-anchor", "gpt-oss-b200"])
def test_the_cli_and_the_compare_and_budget_pages_give_the_same_figures(capsys, link, flags,
                                                                         vllm_by_hand):
    # each surface reads the settings and formats the figures its own way (a table's cells, a
    # metric's text, JSON), so a setting read or defaulted apart on one shows as a figure apart
    import pandas as pd

    from flatkv.cli import main
    from flatkv.strategies import OLDER_LOGGED_COLUMN, logged_as
    from flatkv.strategy_notes import STRATEGY_TITLES
    from flatkv.units import concurrency_text, concurrency_value, format_bytes, sentence_case

    requests = 8
    assert main(["compare", *flags, "--requests", str(requests), "--json"]) == 0
    results = {r["strategy"]: r for r in json.loads(capsys.readouterr().out)}
    vllm = results["vllm"]
    assert (vllm["budget_bytes"], vllm["block_size"], vllm["num_blocks"],
            concurrency_value(vllm["max_concurrency"])) == vllm_by_hand
    link = {**link, "hold": str(requests)}
    compare = open_app("app_pages/compare.py", link)
    assert_clean(compare)
    table = layout_figures(compare)
    least = least_budgets(compare).set_index("strategy")
    applying = [name for name, r in results.items() if r["applies"]]
    assert {"vllm", "sglang", "flat"} <= set(applying)
    assert {STRATEGY_TITLES[name] for name in applying} <= set(table.index)
    columns = {"P (tokens)": "block_size", "blocks": "num_blocks", "block bytes": "block_bytes",
               "capacity (tokens)": "capacity_tokens", "engine log": "logged_tokens",
               "older vLLM log": "older_logged_tokens", "concurrency": "max_concurrency"}
    for name in applying:
        r, row = results[name], table.loc[STRATEGY_TITLES[name]]
        shown_row = {column: None if pd.isna(row[column]) else row[column] for column in columns}
        shown_row["least budget"] = least.loc[STRATEGY_TITLES[name], "cache budget (B)"]
        assert shown_row == {**{column: r[key] for column, key in columns.items()},
                             "concurrency": concurrency_value(r["max_concurrency"]),
                             "least budget": r["least_budget_bytes"]}, name
        budget = open_app("app_pages/budget.py", {**link, "b_layout": name})
        assert_clean(budget)
        shown_metrics = metrics(budget)
        expected = {"Cache budget per rank": format_bytes(r["budget_bytes"]),
                    "Capacity (tokens)": f"{r['capacity_tokens']:,}",
                    f"Concurrency at {r['context_tokens']:,} tokens":
                        concurrency_text(r["max_concurrency"]),
                    "Blocks": f"{r['num_blocks']:,}",
                    f"Budget for {requests} requests": format_bytes(r["least_budget_bytes"])}
        if r["logged_tokens"] not in (None, r["capacity_tokens"]):
            expected[f"{logged_as(name)} (tokens)"] = f"{r['logged_tokens']:,}"
        if r["older_logged_tokens"] not in (None, r["logged_tokens"]):
            expected[sentence_case(OLDER_LOGGED_COLUMN)] = f"{r['older_logged_tokens']:,}"
        assert {k: shown_metrics.get(k) for k in expected} == expected, name


def test_a_links_kv_memory_without_a_gpu_is_the_budget_and_one_beside_a_preset_is_said():
    # Layout at Qwen3-Next TP 2 with vLLM's "Available KV cache memory: 44.59 GiB": the
    # cache budget a rank is int(44.59 x 2^30) = 47,878,147,932 B, not the H100's
    # 85,520,809,984 x 0.9 = 76,968,728,985 B
    link = {"model": "Qwen3-Next-80B-A3B", "tp": "2", "kv_mem": "44.59GiB"}
    at = open_app("app_pages/layout.py", link)
    assert_clean(at) and not at.warning
    assert at.sidebar.selectbox(key="w.gpu").value == "KV cache memory"
    assert at.query_params["gpu"] == "KV cache memory"
    assert "47,878,147,932 B" in " ".join(m.proto.help for m in at.metric)
    beside = open_app(None, {**link, "gpu": "H100 80GB"})  # (the notice shows on opening)
    assert_clean(beside)
    assert [shown(w) for w in beside.warning] == [
        "Ignored kv_mem='44.59GiB': only gpu=KV cache memory reads it, and the budget here is "
        "gpu=H100 80GB; using that budget (give gpu=KV cache memory, or leave gpu out, to use "
        "kv_mem)."]
    beside.switch_page("app_pages/layout.py").run()
    assert "76,968,728,985 B" in " ".join(m.proto.help for m in beside.metric)
    assert "kv_mem" not in beside.query_params
