"""The Model page through streamlit's AppTest: presets, the raw-bytes form, the spec editor,
config.json and model JSON, and the summary's figures. Expected figures are derived by hand
(SPEC.md section 1); helpers in tests/app_helpers.py."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pandas as pd
import pytest
from app_helpers import (
    APP,
    QWEN35_LINK,
    assert_clean,
    caption_starting,
    column_widths,
    joined_tables,
    metrics,
    open_app,
    open_falcon_mamba_config,
    shown,
    tables,
    unescaped,
    vllm_row,
    whole_tables,
)
from streamlit.testing.v1 import AppTest

from flatkv import app_model
from flatkv.app_model import model_names
from flatkv.presets import load_preset
from flatkv.units import format_bytes


def test_model_page_edits_raw_bytes_and_rejects_a_bad_pattern():
    at = open_app("app_pages/model.py")
    assert_clean(at)
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    # a bad value, then the model's own typed back: the preset stays (not a "custom" copy)
    kv = at.number_input(key="edit.kv").value
    at.number_input(key="edit.kv").set_value(-1).run()
    assert at.number_input(key="edit.kv").value == -1 and at.error
    at.number_input(key="edit.kv").set_value(kv).run()
    assert_clean(at)
    assert "model" not in at.query_params and "kv" not in at.query_params
    at.text_input(key="edit.layers").set_value("full*x").run()
    assert not at.exception
    # the library's message as a sentence, as every page's errors are (_session.error_text)
    assert any(shown(e).startswith("Layer pattern 'full*x'") for e in at.error)
    at.text_input(key="edit.layers").set_value("full*32").run()
    at.text_input(key="edit.state").set_value("").run()
    at.number_input(key="edit.kv").set_value(4096).run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "32 layers"
    assert at.query_params["layers"] == "full*32" and at.query_params["kv"] == "4096"
    at.switch_page("app_pages/layout.py").run()
    # full*32 at 4,096 B/slot, block 16: 32 x 4,096 x 16 = 2,097,152 B per block
    assert metrics(at)["Block bytes"] == "2.00 MiB"
    # an emptied number is refused, not read as 0 (no sliding window, no KV): the model stays
    at.switch_page("app_pages/model.py").run()
    at.number_input(key="edit.kv").set_value(None).run()
    assert not at.exception
    assert any(shown(e) == "KV bytes per token per layer is empty: give a whole number. Until "
               "it is fixed, every page (and the summary below) shows the last valid model."
               for e in at.error)
    assert at.query_params["kv"] == "4096"
    at.number_input(key="edit.kv").set_value(4096).run()
    # what the user typed is quoted back as typed, even a field's name
    at.text_input(key="edit.layers").set_value("layer_types*2").run()
    assert [shown(e) for e in at.error][0].startswith(
        "Layer pattern 'layer_types*2' has unknown layer kind 'layer_types': use one of")
    at.text_input(key="edit.layers").set_value("full*32").run()
    # the profile's refusals name its fields as the editor labels them
    at.number_input(key="edit.window").set_value(100).run()
    assert [shown(e) for e in at.error] == [
        '"Sliding window" is 100 but "Layer pattern" has no sliding_attention layer: drop '
        '"Sliding window" or add sliding_attention layers. Until it is fixed, every page (and '
        'the summary below) shows the last valid model.']
    # a None is the field's 0, and the command line's flag is not the editor's to name
    at.number_input(key="edit.window").set_value(0).run()
    at.text_input(key="edit.layers").set_value("sliding*2").run()
    assert [shown(e) for e in at.error][0] == (
        '"Sliding window" is not set but the model has sliding_attention layers: give the '
        'window in tokens. Until it is fixed, every page (and the summary below) shows the '
        'last valid model.')
    at.number_input(key="edit.window").set_value(1024).run()
    at.number_input(key="edit.swa_kv").set_value(8192).run()
    assert [shown(e) for e in at.error][0].startswith(
        '"Sliding layers\' KV bytes" is 8192 but every attention layer slides: give their '
        'bytes as "KV bytes per token per layer", and "Sliding layers\' KV bytes" 0.')


STATE_WITHOUT_STATE_LAYERS = (
    "the layers '(sliding,full)*12' have no linear (state) layer to keep the state tensors "
    "conv=1000000000000: clear the state tensors, or add linear layers to the pattern")


def test_raw_bytes_refuse_state_tensors_no_layer_keeps():
    # gpt-oss-20b's layers keep no state: the Model page took conv=1e12 (a "custom" model in
    # the link) while Layout and Compare refused that model, so every page said another thing
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.state").set_value("conv=1e12").run()
    assert not at.exception
    # the library's "the layers ..." as a sentence
    assert STATE_WITHOUT_STATE_LAYERS.startswith("the layers ")
    assert [shown(e) for e in at.error] == [
        f"The{STATE_WITHOUT_STATE_LAYERS[3:]}. Until it is fixed, every page (and the summary "
        "below) shows the last valid model."]
    assert dict(at.query_params) == {"model": "gpt-oss-20b"}  # the preset stays
    # the same model from a link: a notice, and the default model (on Layout as on Compare)
    linked = open_app(query={
        "model": "custom", "layers": "(sliding,full)*12", "kv": "2048", "window": "128",
        "state": "conv=1000000000000"})
    # (in the link's words: its layers=, as its other notices name its values)
    assert not linked.error and [shown(w) for w in linked.warning] == [
        "The custom model in the link is not valid ("
        f"{STATE_WITHOUT_STATE_LAYERS.replace('the layers ', 'layers=').replace(' have ', ' has ')}"
        "); using the default model (Qwen3-Next-80B-A3B)."]
    assert metrics(linked.switch_page("app_pages/layout.py").run())["Blocks"] == "1,455"


def test_raw_bytes_drop_a_refused_entrys_error_when_another_model_fills_them():
    # the error of a KV entry refused on Qwen3-Next stayed under gpt-oss-20b's own 2,048 B,
    # saying that every page showed the last valid model
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.kv").set_value(-1).run()
    assert [shown(e) for e in at.error] == [
        "KV bytes per token per layer is -1: give a whole number of 0 or more. Until it is "
        "fixed, every page (and the summary below) shows the last valid model."]
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.selectbox(key="w.model").set_value("gpt-oss-20b").run()
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    assert_clean(at)
    assert at.number_input(key="edit.kv").value == 2048  # 8 KV heads x 64 x 2 (K, V) x 2 B

def test_a_model_json_whose_state_no_layer_keeps_is_not_loaded():
    # a raw model JSON was loaded into the link whole, and every other page refused it
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value(
        '{"format": "flatkv-profile/1", "name": "tiny", "layers": "full*2",'
        ' "kv_bytes_per_slot": 64, "state_const_bytes": {"conv": 5}}').run()
    at.button(key="model.load").click().run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "The layers '2*full' have no linear (state) layer to keep the state tensors conv=5: "
        "clear the state tensors, or add linear layers to the pattern. No model JSON was "
        "loaded: every page still shows Qwen3-Next-80B-A3B."]
    assert "model" not in at.query_params

def test_a_chunked_model_shows_its_chunk_and_edits_it_as_raw_bytes():
    at = open_app("app_pages/model.py", {"model": "Llama-4-Scout-17B-16E"})
    assert_clean(at)
    m = metrics(at)
    assert (m["Full attention"], m["Chunked attention"]) == ("12 layers", "36 layers")
    assert m["Attention chunk"] == "8,192 tokens"
    assert m["KV per token, all layers"] == "192.00 KiB"  # 48 layers x 4,096 B
    # past its 8,192-token chunk a token is kept by the 12 full-attention layers alone:
    # 12 x 8 kv heads x (128 + 128) x 2 B = 49,152 B
    assert m["KV per token, past the chunk"] == format_bytes(12 * 8 * 256 * 2) == "48.00 KiB"
    # not what every token of a long request costs: the chunked layers' share stops
    assert caption_starting(at, "Of the 192.00 KiB") == (
        app_model.windowed_kv_note(app_model.profile_for("Llama-4-Scout-17B-16E", None, 1)))
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    assert at.number_input(key="edit.chunk").value == 8192
    at.number_input(key="edit.chunk").set_value(4096).run()
    assert_clean(at)
    assert at.query_params["model"] == "custom" and at.query_params["attn_chunk"] == "4096"
    assert metrics(at)["Attention chunk"] == "4,096 tokens"
    # vLLM on the default H100 (76,968,728,985 B) at 131,072 tokens: blocks of 12 pages of
    # 16 x 4,096 B over 8,192 full pages and 3 chunked groups of ceil((4,096 + 8,192) / 16) =
    # 768 pages a request
    compare = at.switch_page("app_pages/compare.py").run()
    compare.text_input(key="w.context").set_value("131072").run()
    table = compare.dataframe[0].value.set_index("strategy")
    blocks = 76_968_728_985 // (16 * 4096) // 12
    assert blocks == 97_870
    assert table.loc["vLLM v1", "blocks"] == blocks
    assert table.loc["vLLM v1", "concurrency"] == round(blocks / (8192 + 3 * 768), 2) == 9.32
    # no chunk for chunked layers: refused, and the model stays
    at.switch_page("app_pages/model.py").run()
    at.number_input(key="edit.chunk").set_value(0).run()
    assert not at.exception
    assert any(shown(e).startswith('"Attention chunk" is not set but the model has '
                                   "chunked_attention layers") for e in at.error)
    assert at.query_params["attn_chunk"] == "4096"


def test_model_editor_refuses_an_emptied_number():
    # gpt-oss-20b's sliding window emptied: not 0 (no window, every layer full), an error
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key="spec.sliding.sliding_window").set_value(None).run()
    assert not at.exception
    assert any(shown(e).startswith("sliding: sliding window is empty: give a whole number")
               for e in at.error)
    assert at.query_params.get("model", "gpt-oss-20b") == "gpt-oss-20b"  # still the preset
    at.number_input(key="spec.mamba_chunk_size").set_value(None).run()
    # in the field's label's words ("mamba chunk, tokens"), not "mamba chunk size", as a
    # sentence (it read "mamba chunk is empty", where the other pages' errors start capitalised)
    assert any(shown(e).startswith("Mamba chunk is empty") for e in at.error)


def test_model_editor_warns_of_a_kind_no_layer_uses():
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert not at.warning
    at.text_input(key="spec.pattern").set_value("24*full").run()
    assert not at.exception and not at.error
    kind, arch = [shown(w) for w in at.warning]
    assert kind == ("Kind 'sliding' is in no layer: the layer pattern does not name it, so it "
                    "adds nothing to the model.")
    # and the summary: 24 full layers are neither gpt-oss's (24 = 12 sliding + 12 full)
    assert arch.startswith("Architecture GptOssForCausalLM is the class of the presets "
                           "gpt-oss-120b and gpt-oss-20b, whose layers these are not (24*full, "
                           "24 cache layers; gpt-oss-120b's (sliding,full)*18, 36; gpt-oss-20b's "
                           "(sliding,full)*12, 24)")
    assert "Sliding window" not in metrics(at)  # the model is 24 full layers now


def test_a_model_too_large_for_its_link_is_refused_not_written_into_a_dead_link():
    # a name typed long enough that the packed model passes what a link may carry: the link
    # written would reopen as the default model, so the edit is refused where it was made
    rng = random.Random(2)  # random letters: a long name of one letter packs small
    name = "".join(rng.choice(string.ascii_letters) for _ in range(12_000))
    at = open_app("app_pages/model.py", {"model": "Jamba-1.5-Mini"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.text_input(key="spec.name").set_value(name).run()
    (error,) = at.error
    assert "a link could not reopen it: shorten its name" in shown(error)
    assert at.query_params["model"] == "Jamba-1.5-Mini" and "spec" not in at.query_params
    at.text_input(key="spec.name").set_value("Jamba long context").run()  # a short name: taken
    assert_clean(at)
    reopened = open_app("app_pages/model.py", dict(at.query_params))
    assert_clean(reopened)
    assert shown(reopened.subheader[0]) == "Jamba long context"


def test_a_tp_that_does_not_split_the_model_leaves_the_editor_open():
    # Qwen3-Next's 16 GDN key heads do not split over TP 3: one error, and the kinds stay
    # editable (at TP 1) so the user can fix either
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    assert not at.exception
    # in the editor's words: the kind gdn's "k heads" field, the sidebar's TP
    assert [shown(e) for e in at.error] == [
        "gdn's k heads = 16 is not divisible by TP = 3: choose a TP that divides it (TP up to 64 "
        "that split the model: 1, 2, 4, 8, 16). Shown below at TP 1; the other pages "
        "need a TP that splits the model (the sidebar's)."]
    assert at.number_input(key="spec.gdn.k_heads").value == 16
    assert at.text_input(key="spec.pattern").value == "(3*gdn,full)*12"
    # the summary stays, at TP 1: 2 KV heads x (256 + 256) x 2 B = 2,048 B per token
    assert metrics(at)["Cache layers, all kinds"] == "48 layers"
    kinds = at.dataframe[0].value.set_index("name")
    assert kinds.loc["full", "KV B per token"] == 2_048  # a column with gaps: numbers
    assert pd.isna(kinds.loc["gdn", "KV B per token"])  # a state kind keeps no KV: a gap


def _qwen3_next_draft_at_tp_3():
    """The Model page, Edit by hand on Qwen3-Next at TP 3 (its 16 GDN key heads do not
    split), the pattern (3*gdn,full)*6 typed: a draft refused for the TP alone."""
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.sidebar.number_input(key="w.tp").set_value(3).run()
    at.text_input(key="spec.pattern").set_value("(3*gdn,full)*6").run()
    return at


def test_an_edit_at_a_tp_that_does_not_split_the_model_waits_for_one_that_does():
    # an edit at TP 3 (Qwen3-Next's 16 GDN key heads do not split) is refused for the TP, not
    # a traceback (the callback read the model at TP 3); at TP 2 the edit is taken, its error
    # gone: 6 x (3 GDN + 1 full) = 24 layers where the preset has 48
    at = _qwen3_next_draft_at_tp_3()
    assert not at.exception
    tp_3 = ("gdn's k heads = 16 is not divisible by TP = 3: choose a TP that divides it (TP up "
            "to 64 that split the model: 1, 2, 4, 8, 16)")
    assert [shown(e) for e in at.error] == [
        f"The sidebar's TP does not split it: {tp_3}. Until it is fixed, every page (and the "
        "summary below) shows the last valid model.",
        f"{tp_3}. Shown below at TP 1; the other pages need a TP that splits the model (the "
        "sidebar's)."]
    assert metrics(at)["Cache layers, all kinds"] == "48 layers"
    at.sidebar.number_input(key="w.tp").set_value(2).run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "24 layers"
    # the sidebar, drawn before the page took the draft, names the model taken: 24 layers,
    # not the preset's 48 it had shown beside the page's 24 until the next click
    assert shown(at.sidebar.caption[0]) == (
        "Model: **Qwen3-Next-80B-A3B (edited)** · 24 cache layers")
    assert at.text_input(key="spec.pattern").value == "(3*gdn,full)*6"
    assert (at.query_params["model"], at.query_params["tp"]) == ("spec", "2")


def test_a_draft_refused_for_its_tp_is_taken_where_the_tp_changes():
    # the TP field tries the refused draft as it changes, on any page: TP 2 set on Layout
    # shows the draft's 24 layers there at once, where Layout kept the preset's 48 until the
    # Model page was drawn again; TP 5 refuses it again, in TP 5's words
    at = _qwen3_next_draft_at_tp_3()
    at.switch_page("app_pages/layout.py").run()
    at.sidebar.number_input(key="w.tp").set_value(5).run()
    # Layout shows the preset (the draft is refused): in its plain words
    assert shown(at.error[0]).startswith(
        "Qwen3-Next-80B-A3B: its linear-attention (Gated DeltaNet) layers have 16 key heads, "
        "and TP 5 does not divide them")
    at.switch_page("app_pages/model.py").run()
    assert shown(at.error[0]).startswith(
        "The sidebar's TP does not split it: gdn's k heads = 16 is not divisible by TP = 5")
    at.switch_page("app_pages/layout.py").run()
    at.sidebar.number_input(key="w.tp").set_value(2).run()
    assert_clean(at)
    assert shown(at.sidebar.caption[0]) == (
        "Model: **Qwen3-Next-80B-A3B (edited)** · 24 cache layers")
    assert (at.query_params["model"], at.query_params["tp"]) == ("spec", "2")
    at.switch_page("app_pages/model.py").run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "24 layers"
    assert at.text_input(key="spec.pattern").value == "(3*gdn,full)*6"
    # a refused draft waits only while the model it was to replace stays: Falcon-H1-7B, picked
    # at TP 6 (which splits it) over a draft refused there, keeps TP 2
    at.sidebar.number_input(key="w.tp").set_value(6).run()
    at.text_input(key="spec.pattern").set_value("(3*gdn,full)*3").run()
    assert shown(at.error[0]).startswith("The sidebar's TP does not split it")
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.selectbox(key="w.model").set_value("Falcon-H1-7B").run()
    at.sidebar.number_input(key="w.tp").set_value(2).run()
    assert_clean(at)
    assert (at.query_params["model"], at.query_params["tp"]) == ("Falcon-H1-7B", "2")


def test_start_from_scratch_after_a_tp_refusal_is_an_empty_draft_at_any_tp():
    # a draft refused at TP 3 and then dropped (Start from scratch) is not tried again at TP 2:
    # the empty draft says what it lacks as an empty draft does, with no error
    at = _qwen3_next_draft_at_tp_3()
    at.button(key="spec.scratch").click().run()
    at.sidebar.number_input(key="w.tp").set_value(2).run()
    assert_clean(at)
    assert [i.value for i in at.info] == [
        "No kinds yet: add one above, then write the layer pattern over the names. The current "
        "model stays until the draft is complete."]
    # the preset stays until the draft is complete
    assert metrics(at)["Cache layers, all kinds"] == "48 layers"


def test_model_page_names_the_configs_mamba_ssm_dtype():
    at = open_app("app_pages/model.py", {"model": "Qwen3.5-27B"})
    assert any(" · config mamba_ssm_dtype: float32 (SGLang's ssm dtype) · " in shown(c)
               for c in at.caption)
    at = open_app("app_pages/model.py", {})  # Qwen3-Next's config names none
    assert not any("mamba_ssm_dtype:" in shown(c) for c in at.caption)


def test_model_caption_names_the_configs_mamba_ssm_cache_dtype():
    # Nemotron-H's config.json naming mamba_ssm_cache_dtype bfloat16: vLLM's NemotronH hook's
    from test_hf_config import PRESET_CONFIGS

    from flatkv.app_model import summary_caption
    from flatkv.hf_config import spec_from_hf_config

    spec = spec_from_hf_config({**PRESET_CONFIGS["Nemotron-H-8B"],
                                "mamba_ssm_cache_dtype": "bfloat16"})
    assert " · config mamba_ssm_cache_dtype: bfloat16 (vLLM's ssm dtype unless told)" in (
        summary_caption(spec.profile(), spec))
    preset = load_preset("Nemotron-H-8B")
    assert "mamba_ssm_cache_dtype" not in summary_caption(preset.profile(), preset)


def test_model_page_shows_the_sliding_window():
    # gpt-oss-20b: 24 layers, alternating sliding (window 128) and full (SPEC section 2), so
    # 12 of each; Llama has no sliding layer
    oss = metrics(open_app("app_pages/model.py", {"model": "gpt-oss-20b"}))
    assert (oss["Cache layers, all kinds"], oss["Sliding attention"], oss["Full attention"]) == (
        "24 layers", "12 layers", "12 layers")
    assert oss["Sliding window"] == "128 tokens"
    # KV a token: 24 layers x 8 kv heads x (64 + 64) head dims x 2 B (bf16) = 49,152 B within
    # the 128-token window; past it only the 12 full-attention layers keep it: 24,576 B
    assert 24 * 8 * (64 + 64) * 2 == 49_152 and 12 * 8 * (64 + 64) * 2 == 24_576
    assert (oss["KV per token, all layers"], oss["KV per token, past the window"]) == (
        "48.00 KiB", "24.00 KiB")
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    kv = {m.label: m for m in at.metric}
    assert kv["KV per token, all layers"].delta == "a token within the window"
    assert kv["KV per token, past the window"].help.startswith("24,576 B, one TP rank")
    llama = metrics(open_app("app_pages/model.py", {"model": "Llama-3.1-8B"}))
    assert "Sliding window" not in llama and "KV per token, past the window" not in llama


def test_model_page_edits_heads_and_dtypes_of_a_preset():
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert_clean(at)
    # 8 KV heads -> 4: 4 x (128 + 128) x 2 B = 2,048 B per token per layer
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec" and "spec" in at.query_params
    kinds = at.dataframe[0].value
    assert kinds.iloc[0]["KV B per token"] == 2048
    # an altered preset no longer goes by the preset's name, here or in the link
    assert at.text_input(key="spec.name").value == "Llama-3.1-8B (edited)"
    assert shown(at.subheader[0]) == "Llama-3.1-8B (edited)"
    assert "Llama-3.1-8B (edited)" in shown(at.sidebar.caption[0])
    at.text_input(key="spec.name").set_value("Llama-3.1-8B").run()  # not while it differs
    assert shown(at.subheader[0]) == "Llama-3.1-8B (edited)"
    at.number_input(key="spec.full.kv_heads").set_value(8).run()  # changed back: the preset
    assert shown(at.subheader[0]) == "Llama-3.1-8B"
    at.selectbox(key="spec.ssm_dtype").set_value("float32").run()  # no state layer: no change
    assert shown(at.subheader[0]) == "Llama-3.1-8B"
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    # the picker names fp8 as the engines' --kv-cache-dtype does, beside torch's name
    assert at.selectbox(key="spec.kv_dtype").options[3:5] == ["float8_e4m3fn (fp8)",
                                                              "float8_e5m2 (fp8_e5m2)"]
    at.selectbox(key="spec.kv_dtype").set_value("float8_e4m3fn").run()
    assert at.dataframe[0].value.iloc[0]["KV B per token"] == 1024
    assert shown(at.subheader[0]) == "Llama-3.1-8B (edited)"
    # 64 KV heads under Llama's 32 query heads: no model, refused as the config reader does
    at.number_input(key="spec.full.kv_heads").set_value(64).run()
    # in the editor's labels: "attention heads", the kind full's "kv heads"
    assert [shown(e) for e in at.error if "kv heads" in shown(e)] == [
        "Attention heads = 32 is not a multiple of full's kv heads = 64: no engine loads such a "
        "model; check the model's heads, or leave attention heads unset (0 in the Model page's "
        "editor). Until it is fixed, "
        "every page (and the summary below) shows the last valid model."]
    assert at.dataframe[0].value.iloc[0]["KV B per token"] == 1024
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    # a pattern over an unknown kind name: the spec's own message, as st.error
    at.text_input(key="spec.pattern").set_value("full*30,mamba*2").run()
    assert not at.exception
    assert any("unknown kind" in shown(e) for e in at.error)
    # the link reopens the edited model
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert_clean(again)
    assert again.dataframe[0].value.iloc[0]["KV B per token"] == 1024


def test_the_model_summary_gives_kv_per_token_and_state_per_request():
    # Nemotron-H-8B (SPEC.md section 2): 4 attention layers of 8 KV heads x (128 + 128) x 2 B,
    # 24 Mamba2 layers of conv (8,192 + 2 x 8 x 128) x 3 x 2 B + ssm 128 x 64 x 128 x 2 B
    at = open_app("app_pages/model.py", {"model": "Nemotron-H-8B"})
    m = {e.label: (e.value, e.help) for e in at.metric}
    kv, state = 4 * 8 * 256 * 2, 24 * (10_240 * 3 * 2 + 128 * 64 * 128 * 2)
    assert (kv, state) == (16_384, 51_806_208)  # python -m flatkv model's "all layers"
    assert m["KV per token, all layers"] == ("16.00 KiB",
                                             f"{kv:,} B: every attention layer, one TP rank")
    assert m["State per request"] == ("49.41 MiB", f"{state:,} B: every state layer, one TP "
                                      "rank")
    assert f"{state / 2**20:.2f}" == "49.41"
    # TP 2 halves both; a model without state has no state figure
    tp2 = open_app("app_pages/model.py", {"model": "Nemotron-H-8B", "tp": "2"})
    assert {e.label: e.value for e in tp2.metric}["KV per token, all layers"] == "8.00 KiB"
    llama = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    assert "State per request" not in {e.label for e in llama.metric}
    # the layer counts beside them, cache layers not model layers (SPEC 2): 52 model layers,
    # 24 of them MLP layers without a cache, 4 attention and 24 Mamba2 layers with one; the
    # total named as the total, in the kinds' unit (it read "Cache layers 28" beside "Full
    # attention 4 layers", two counts with nothing to say which was which), its help says so
    assert (m["Cache layers, all kinds"], m["Full attention"][0], m["Constant state"][0]) == (
        (f"{4 + 24} layers", "Every layer that keeps a cache, of the kinds beside it (a layer "
         "that keeps both attention and a state counts once for each; an MLP-only layer keeps "
         "none)"), "4 layers", "24 layers")
    # Falcon-H1-7B runs attention and Mamba2 in each of its 44 layers: 44 + 44 cache layers
    falcon = metrics(open_app("app_pages/model.py", {"model": "Falcon-H1-7B"}))
    assert (falcon["Cache layers, all kinds"], falcon["Full attention"],
            falcon["Constant state"]) == (f"{44 + 44} layers", "44 layers", "44 layers")


def test_the_editor_keeps_and_edits_the_mamba_chunk():
    # Nemotron-H's chunk 128 comes with the preset; 256 is an edit the link carries, and vLLM
    # in mode all aligns P to it, its ssm state in float32 (vLLM's NemotronH default: 61,440 +
    # 4,194,304 = 4,255,744 B): 256 x cdiv(4,255,744, 256 x 4,096) = 1,280 (1,152 at 128)
    at = open_app("app_pages/model.py", {"model": "Nemotron-H-8B", "mamba": "all"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.number_input(key="spec.mamba_chunk_size").value == 128
    at.number_input(key="spec.mamba_chunk_size").set_value(256).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    compare = open_app("app_pages/compare.py", dict(at.query_params))
    assert compare.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 1_280
    # 0: none in the config, so vLLM's 2,048: P = 2,048 x cdiv(4,255,744, 2,048 x 4,096)
    at.number_input(key="spec.mamba_chunk_size").set_value(0).run()
    assert_clean(at)
    compare = open_app("app_pages/compare.py", dict(at.query_params))
    assert compare.dataframe[0].value.set_index("strategy").loc["vLLM v1", "P (tokens)"] == 2048


def test_the_editor_keeps_and_edits_the_max_model_len():
    # Qwen3-Next's 262,144 comes with the preset; 131,072 is an edit: the model is renamed,
    # and every page counts a request at the new length until a context is typed
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.number_input(key="spec.max_model_len").value == 262_144
    at.number_input(key="spec.max_model_len").set_value(131_072).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    assert unescaped(at.subheader[0].value) == "Qwen3-Next-80B-A3B (edited)"
    budget = open_app("app_pages/budget.py", dict(at.query_params))
    assert budget.text_input(key="w.context").value == "131,072"
    assert "Concurrency at 131,072 tokens" in metrics(budget)
    # 0: the preset's own length again (its config's), under the preset's name; a model with
    # no config would have none (tests/test_app_state.py), counted at 32,768
    at.number_input(key="spec.max_model_len").set_value(0).run()
    assert_clean(at)
    assert at.number_input(key="spec.max_model_len").value == 262_144
    assert unescaped(at.subheader[0].value) == "Qwen3-Next-80B-A3B"
    budget = open_app("app_pages/budget.py", dict(at.query_params))
    assert budget.text_input(key="w.context").value == "262,144"



@pytest.mark.parametrize(("field", "value", "said"), [
    # in the fields' labels' words ("max model len, tokens", "mamba chunk, tokens")
    ("max_model_len", 2**40 + 1, "Max model len 1,099,511,627,777 is too large to be real: "
     "give 1,099,511,627,776 or less"),
    ("mamba_chunk_size", 2**20 + 1, "Mamba chunk 1,048,577 is too large to be real: give "
     "1,048,576 or less"),
])
def test_the_editor_says_why_a_length_or_chunk_past_its_bound_is_refused(field, value, said):
    # a bound given to streamlit kept the entry on screen unsent: the error went on naming the
    # entry before it (or called the field empty), never this one
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key=f"spec.{field}").set_value(-5).run()
    at.number_input(key=f"spec.{field}").set_value(value).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        f"{said}; check the model's value. Until it is fixed, every page (and the summary "
        "below) shows the last valid model."]
    assert "model" not in at.query_params  # the preset stays the model


FROM_CONFIG = "tokens (vLLM's default `--max-model-len`, from the config)"
TYPED = "tokens (typed in the editor: the pages count at it as vLLM's `--max-model-len`)"


def length_caption(at: AppTest) -> str:
    """The summary's max_model_len part, as the page shows it."""
    caption = unescaped(caption_starting(at, "Per TP rank"))
    return next(p for p in caption.split(" · ") if p.startswith("max_model_len"))


def test_the_summary_says_where_a_presets_max_model_len_comes_from_after_an_edit():
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    assert length_caption(at) == f"max_model_len 262,144 {FROM_CONFIG}"
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    # another field edited: the preset's own length, still its config's
    at.number_input(key="spec.attention_heads").set_value(8).run()
    assert_clean(at)
    assert unescaped(at.subheader[0].value) == "Qwen3-Next-80B-A3B (edited)"
    assert length_caption(at) == f"max_model_len 262,144 {FROM_CONFIG}"
    # the length typed: said so, and a link keeps it so
    at.number_input(key="spec.max_model_len").set_value(131_072).run()
    assert_clean(at)
    assert length_caption(at) == f"max_model_len 131,072 {TYPED}"
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert length_caption(again) == f"max_model_len 131,072 {TYPED}"


def test_the_summary_says_a_no_length_configs_2048_is_assumed_until_a_length_is_typed():
    # falcon-mamba-7b's config.json gives no length field: vLLM assumes 2,048
    at = open_falcon_mamba_config()
    assert_clean(at)
    assumed = ("max_model_len 2,048 tokens, assumed (vLLM's default `--max-model-len` where "
               "the config gives no length: see the note)")
    assert length_caption(at) == assumed
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    # 0 typed: the length as loaded, still vLLM's assumed 2,048 (not the 32,768 of no length)
    at.number_input(key="spec.max_model_len").set_value(0).run()
    assert_clean(at)
    assert at.number_input(key="spec.max_model_len").value == 2_048
    assert length_caption(at) == assumed
    at.number_input(key="spec.max_model_len").set_value(8_192).run()
    assert_clean(at)
    assert length_caption(at) == f"max_model_len 8,192 {TYPED}"
    # 0: the length as loaded, vLLM's assumed 2,048 (not 32,768), said to be assumed
    at.number_input(key="spec.max_model_len").set_value(0).run()
    assert_clean(at)
    assert at.number_input(key="spec.max_model_len").value == 2_048
    assert length_caption(at) == assumed
    budget = open_app("app_pages/budget.py", dict(at.query_params))
    assert budget.text_input(key="w.context").value == "2,048"


def test_the_editor_keeps_and_edits_the_attention_heads():
    # Llama's 32 query heads come with the preset; 24 heads do not split over TP 16 (8 KV heads
    # would): the edit is refused with the reason, the model stays at 32
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "16"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.number_input(key="spec.attention_heads").value == 32
    at.number_input(key="spec.attention_heads").set_value(24).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "The sidebar's TP does not split it: attention heads = 24 is not divisible by TP = 16: "
        "choose a TP that divides it, as engines split the query heads over the ranks (TP up "
        "to 64 that split the model: 1, 2, 4, 8, 24). Until it is fixed, every page (and the "
        "summary below) shows the last valid model."]
    assert at.query_params["model"] == "Llama-3.1-8B"
    # 0: not checked, so any TP the KV heads take; the link carries the edit
    at.number_input(key="spec.attention_heads").set_value(0).run()
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    again = open_app("app_pages/model.py", {**at.query_params, "tp": "48"})
    assert_clean(again)  # 8 KV heads, each on 6 of 48 ranks
    assert any("attention heads" not in c.value and c.value.startswith("Per TP rank (TP 48)")
               for c in again.caption)


def test_an_edit_the_model_itself_refuses_is_not_blamed_on_the_tp():
    # at TP 2, two full kinds of 8 and 4 KV heads (x (128 + 128) x 2 B) plan at no TP: the
    # error is the model's own, in bytes, not "The sidebar's TP does not split it"
    at = open_app("app_pages/model.py", {"tp": "2"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.button(key="spec.scratch").click().run()
    for _ in range(2):
        at.selectbox(key="spec.new.type").set_value("full attention")
        at.button(key="spec.add").click().run()
    at.number_input(key="spec.full_2.kv_heads").set_value(4).run()
    at.text_input(key="spec.pattern").set_value("full,full_2").run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        "Attention layers of 'my model' differ in bytes per token (full: 4,096 B; full_2: "
        "2,048 B): the planner takes one size for full and chunked layers; give those kinds "
        "the same geometry. Until it is fixed, every page (and the summary below) shows the "
        "last valid model."]


def built_by_hand(templates: tuple[str, ...], pattern: str,
                  fields: tuple[tuple[str, int], ...] = ()) -> AppTest:
    """The Model page's editor from scratch: a kind of each template, ``fields`` set (``kind.field``
    keys), then the layer pattern; clean at each step."""
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.button(key="spec.scratch").click().run()
    for template in templates:
        at.selectbox(key="spec.new.type").set_value(template)
        at.button(key="spec.add").click().run()
    for key, value in fields:
        at.number_input(key=f"spec.{key}").set_value(value).run()
    assert_clean(at)
    at.text_input(key="spec.pattern").set_value(pattern).run()
    assert_clean(at)
    return at


def _in_page_order(block):
    """The page's elements top to bottom (AppTest keeps them in a tree)."""
    for child in getattr(block, "children", {}).values():
        yield child
        yield from _in_page_order(child)


def test_a_pattern_in_other_digits_suggests_the_whole_pattern_in_both_editors_which_take_it():
    # each editor's refusal said "e.g. 12", no pattern: the fix is the pattern in ASCII digits,
    # and typed back it is the model (Raw bytes: 12 full layers, its state cleared; by hand:
    # Qwen3-Next's 48)
    until = ". Until it is fixed, every page (and the summary below) shows the last valid model."
    for source, key, typed, at_char, fix, layers in (
            ("Raw bytes", "edit.layers", "full*١٢", 6, "full*12", "12 layers"),
            ("Edit by hand", "spec.pattern", "(3*gdn,full)*١٢", 14, "(3*gdn,full)*12",
             "48 layers")):
        at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
        at.segmented_control(key="model.source").set_value(source).run()
        if source == "Raw bytes":
            at.text_input(key="edit.state").set_value("").run()
        at.text_input(key=key).set_value(typed).run()
        assert [shown(e) for e in at.error] == [
            f"Layer pattern '{typed}': repeat count '١٢' at character {at_char} is not written "
            f"in ASCII digits: write it in ASCII digits, e.g. {fix}{until}"]
        at.text_input(key=key).set_value(fix).run()
        assert_clean(at)
        assert metrics(at)["Cache layers, all kinds"] == layers


def test_model_editor_shows_an_error_where_the_edit_was_made():
    # a bad layer pattern: its error under the pattern's rows, above the kinds (at the foot of
    # the editor it sat some 800 px below the field at 1000 px); a kind's bad field: under
    # that kind's fields
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.text_input(key="spec.pattern").set_value("3*gdn,bogus").run()

    def places() -> list[str]:
        return [("error" if type(e).__name__ == "Error" else e.value)
                for e in _in_page_order(at.main)
                if type(e).__name__ == "Error" or (type(e).__name__ == "Markdown"
                                                   and e.value.startswith("**"))]

    assert at.error[0].value.startswith("Layer pattern names unknown kind")
    assert places()[:3] == ["error", "**gdn** · gdn", "**full** · attention"]
    at.text_input(key="spec.pattern").set_value("(3*gdn,full)*12").run()
    assert not at.error
    at.number_input(key="spec.gdn.conv_kernel").set_value(-1).run()
    assert places()[:3] == ["**gdn** · gdn", "error", "**full** · attention"]
    # a kind may be named "top" or "new": a place of its own still, the error shown once
    at.number_input(key="spec.gdn.conv_kernel").set_value(4).run()
    at.selectbox(key="spec.new.type").set_value("full attention")
    at.text_input(key="spec.new.name").set_value("top")
    at.button(key="spec.add").click().run()
    at.text_input(key="spec.pattern").set_value("(3*gdn,full)*12,bogus").run()
    assert places().count("error") == 1 and places()[0] == "error"


def test_model_page_builds_a_short_convolution_hybrid_by_hand():
    # LFM2-style: the "short conv" kind keeps a conv state only, (channels, K - 1)
    at = built_by_hand(("full attention", "short conv"), "(2*conv,full)*2", (
        ("full.kv_heads", 8), ("full.head_dim_k", 64), ("full.head_dim_v", 64)))
    assert at.number_input(key="spec.conv.channels").value == 2048  # the template's
    kinds = at.dataframe[0].value.set_index("name")
    # (2,048, 3 - 1) x 2 B = 8,192 B a layer; no ssm tensor, so no ssm column
    assert kinds.loc["conv", "state B per layer"] == 2048 * 2 * 2 == 8_192
    assert kinds.loc["conv", "conv shape"] == "2048 x 2" and "ssm shape" not in kinds.columns
    assert {m.label: m.value for m in at.metric}["State per request"] == "32.00 KiB"  # 4 x 8 KiB
    assert any("cache dtypes: KV bfloat16, conv bfloat16 · " in c.value for c in at.caption)
    assert_clean(open_app("app_pages/compare.py", dict(at.query_params)))


def test_model_page_builds_a_lightning_attention_hybrid_by_hand():
    # MiniMax-style: the "lightning" kind keeps an ssm state only, (heads, head_dim, head_dim)
    at = built_by_hand(("full attention", "lightning"), "(7*lightning,full)*2")
    assert at.number_input(key="spec.lightning.heads").value == 64  # the template's
    kinds = joined_tables(at, "name")
    # (64, 128, 128) x 2 B = 2,097,152 B a layer; no conv tensor, so no conv column
    assert kinds.loc["lightning", "state B per layer"] == 64 * 128 * 128 * 2
    assert kinds.loc["lightning", "ssm shape"] == "64 x 128 x 128"
    assert "conv shape" not in kinds.columns
    assert {m.label: m.value for m in at.metric}["State per request"] == "28.00 MiB"  # 14 x 2
    # the dtypes of the state tensors it keeps: no conv dtype to name
    assert any("cache dtypes: KV bfloat16, ssm bfloat16 · " in c.value for c in at.caption)
    compare = open_app("app_pages/compare.py", dict(at.query_params))
    assert_clean(compare)
    assert any("**SGLang** does not apply: the state layers keep no conv state" in c.value
               for c in compare.caption)


def test_model_page_gives_an_mla_kind_the_lightning_indexer_by_hand():
    # DeepSeek-V3.2-style: MLA's index head dim (0 = none) adds 128 + 4 B a token per layer
    plain = built_by_hand(("MLA",), "4*mla")
    assert plain.number_input(key="spec.mla.index_head_dim").value == 0  # none: plain MLA
    assert plain.dataframe[0].value.set_index("name").loc["mla", "KV B per token"] == 1_152
    at = built_by_hand(("MLA",), "4*mla", (("mla.index_head_dim", 128),))
    assert at.dataframe[0].value.set_index("name").loc["mla", "KV B per token"] == (
        576 * 2 + 128 + 4)
    assert metrics(at)["KV per token, all layers"] == "5.02 KiB"  # 4 x 1,284 = 5,136 B
    # how the 1,284 B add up, under the table (not for the plain latent)
    assert any(shown(c).startswith("mla: 1,284 B a token = (512 + 64) x 2 = 1,152 B of latent "
                                   "+ 128 + 1 x 4 = 132 B of the indexer's keys")
               for c in at.caption)
    assert not any("B of latent" in shown(c) for c in plain.caption)


def test_model_page_builds_a_hybrid_from_scratch():
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.button(key="spec.scratch").click().run()
    assert_clean(at)
    assert any("No kinds yet" in i.value for i in at.info)
    at.selectbox(key="spec.new.type").set_value("full attention")
    at.button(key="spec.add").click().run()
    assert_clean(at)
    assert at.text_input(key="spec.pattern").value == "full"  # one kind is a model already
    for field, value in (("kv_heads", 8), ("head_dim_k", 128), ("head_dim_v", 128)):
        at.number_input(key=f"spec.full.{field}").set_value(value).run()
    at.selectbox(key="spec.new.type").set_value("Mamba2")
    at.button(key="spec.add").click().run()
    for field, value in (("n_heads", 8), ("head_dim", 64), ("d_state", 16), ("n_groups", 1),
                         ("conv_kernel", 4)):
        at.number_input(key=f"spec.mamba2.{field}").set_value(value).run()
    at.text_input(key="spec.pattern").set_value("(mamba2,full)*2").run()
    at.selectbox(key="spec.ssm_dtype").set_value("float32").run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "4 layers"
    kinds = joined_tables(at, "name")
    # the pattern (mamba2,full)*2 gives each kind 2 of the 4 layers
    assert (kinds.loc["mamba2", "layers"], kinds.loc["full", "layers"]) == (2, 2)
    # full: 8 KV heads x (128 + 128) x 2 B (bf16) = 4,096 B per token
    assert kinds.loc["full", "KV B per token"] == 8 * 256 * 2 == 4_096
    # SPEC section 2, Mamba2 at TP 1: d_inner = 8 x 64 = 512; conv (512 + 2 x 1 x 16, 4 - 1) =
    # (544, 3) x 2 B = 3,264; ssm (8, 64, 16) x 4 B (float32) = 32,768; 36,032 B per layer
    assert kinds.loc["mamba2", "state B per layer"] == 544 * 3 * 2 + 8 * 64 * 16 * 4 \
        == 36_032
    assert (kinds.loc["mamba2", "conv shape"], kinds.loc["mamba2", "ssm shape"]) == (
        "544 x 3", "8 x 64 x 16")
    # the model's geometry, whole model: a row a field, a column a kind, the fields by FlatKV's
    # names (n_heads, kv_heads), which config.json does not use, said so
    assert ("Heads, dims and state shapes, whole model, by the Model JSON's field names (the "
            "bytes above are per TP rank):") in [c.value for c in at.caption]
    geometry = joined_tables(at, "field")
    assert (geometry.loc["n_heads", "mamba2"], geometry.loc["kv_heads", "full"]) == (8, 8)
    assert pd.isna(geometry.loc["n_heads", "full"])  # no such field: a gap, shown as a dash
    layers = joined_tables(at, "cache layer")
    assert list(layers["kind"]) == ["mamba2", "full", "mamba2", "full"]
    assert list(layers["bytes per token"]) == [0, 4096, 0, 4096]
    assert list(layers["state bytes"]) == [36032, 0, 36032, 0]
    assert at.query_params["model"] == "spec"
    again = open_app("app_pages/model.py", dict(at.query_params))  # the link holds the model
    assert_clean(again)
    assert list(joined_tables(again, "cache layer")["state bytes"]) == [36032, 0, 36032, 0]
    # a taken or bad kind name is refused with the reason; the draft stays
    at.text_input(key="spec.new.name").set_value("2bad")
    at.button(key="spec.add").click().run()
    assert not at.exception
    # as a sentence (it read "kind name '2bad' ...", where Layout's errors start capitalised)
    assert any(shown(e).startswith("Kind name '2bad' must start with a letter")
               for e in at.error)
    assert any(shown(e).endswith("Until it is fixed, every page (and the summary below) shows "
                                "the last valid model.") for e in at.error)
    # so is a full-attention kind named after the state layers' type (the pages print both)
    at.selectbox(key="spec.new.type").set_value("full attention")
    at.text_input(key="spec.new.name").set_value("linear_attention")
    at.button(key="spec.add").click().run()
    assert not at.exception
    # the ids a user types as a kind's name stay as typed (Model JSON values)
    assert any("Kind name 'linear_attention' names another layer type: this kind's layers are "
               "full_attention; name it 'full_attention' or a name that is no layer type"
               in shown(e) for e in at.error)
    # removing a kind removes its layers: (mamba2,full)*2 -> 2*mamba2, a state-only model
    at.button(key="spec.full.remove").click().run()
    assert_clean(at)
    assert at.text_input(key="spec.pattern").value == "2*mamba2"
    assert metrics(at)["Cache layers, all kinds"] == "2 layers"
    assert list(joined_tables(at, "cache layer")["state bytes"]) == [36032, 36032]


# a config.json whose 12 heads (KV and query) split over TP 1, 2, 3, 4, 6 and 12 only
LLAMA_12_HEADS = {"model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 12,
                  "num_key_value_heads": 12, "hidden_size": 768}


def test_a_config_json_that_does_not_split_over_the_sidebar_tp_is_refused():
    # 12 KV heads over TP 8: the load says why and the current model stays; TP 24 would
    # replicate the KV heads but not split the 12 query heads
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "8"})
    _paste_config(at, LLAMA_12_HEADS)
    assert [shown(e) for e in at.error] == [
        "The sidebar's TP does not split it: config.json num_key_value_heads = 12, the "
        "full-attention layers' KV heads, is not divisible by TP 8: choose TP 1, 2, 3, 4, 6 or "
        "12, the TPs up to 64 that split the model. No config.json was loaded: every page still "
        "shows Llama-3.1-8B."]
    assert at.query_params["model"] == "Llama-3.1-8B" and shown(at.subheader[0]) == "Llama-3.1-8B"


def test_a_loaded_config_json_moved_to_a_tp_that_does_not_split_it_is_refused_in_plain_words():
    # loaded at TP 1, the model rides in the link as the app's model JSON, which its user never
    # wrote: at TP 8 its 12 KV heads are named in words, not as full.kv_heads (the JSON's field)
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    _paste_config(at, LLAMA_12_HEADS)
    assert_clean(at)
    assert at.query_params["model"] == "spec"
    name = shown(at.subheader[0])
    at.sidebar.number_input(key="w.tp").set_value(8).run()
    assert not at.exception
    # the TPs that split 12 heads (KV and query alike): 1, 2, 3, 4, 6, 12
    assert [shown(e).split(". Shown below")[0] for e in at.error] == [
        f"{name}: its full-attention layers have 12 KV heads, and TP 8 does not divide them: "
        "choose TP 1, 2, 3, 4, 6 or 12, the TPs up to 64 that split the model"]


def test_the_uploaders_limit_is_the_json_readers():
    # streamlit's maxUploadSize is in MiB (x 1024 x 1024 where it receives a file): the
    # uploader says the 8 MiB FlatKV reads, not streamlit's 200MB default
    import tomllib

    from flatkv.jsonfile import MAX_JSON_BYTES

    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == MAX_JSON_BYTES == 8 * 2**20


def test_a_model_file_comes_back_at_its_own_tp():
    # exported at TP 2, loaded at the sidebar's TP 1: its figures are TP 2's (1 of Qwen3-Next's
    # 2 KV heads of 256 a rank, K and V in bfloat16: 1,024 B a token a layer), said once
    exported = load_preset("Qwen3-Next-80B-A3B").with_options(tp=2).to_dict()
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value(json.dumps(exported)).run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert at.query_params["tp"] == "2"
    assert at.dataframe[0].value.iloc[-1]["KV B per token"] == 1 * 256 * 2 * 2
    assert [shown(i) for i in at.info if "model file's" in shown(i)] == [
        "TP 2, the model file's, replaces the sidebar's TP 1: its figures are the file's. Change "
        "TP in the sidebar to see another."]
    at.run()
    assert not [i for i in at.info if "model file's" in shown(i)]
    # a file without a TP (written by hand) takes the sidebar's, as any model does
    at.text_area(key="model.paste").set_value(
        json.dumps({k: v for k, v in exported.items() if k != "tp"})).run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert at.query_params["tp"] == "2"
    assert not [i for i in at.info if "model file's" in shown(i)]
    # a file at a TP that does not split its model is refused as it is read
    at.text_area(key="model.paste").set_value(json.dumps({**exported, "tp": 3})).run()
    at.button(key="model.load").click().run()
    assert shown(at.error[0]).startswith("gdn.k_heads = 16 is not divisible by tp = 3")
    assert at.query_params["tp"] == "2"


def test_a_malformed_repeat_count_shows_the_patterns_error_on_the_page():
    from flatkv.patterns import parse_layer_pattern

    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    for pattern in ("full*0x10", "full*-1", "full*1.5", "full*", "full*1e3"):
        with pytest.raises(ValueError) as said:
            parse_layer_pattern(pattern)
        at.text_input(key="edit.layers").set_value(pattern).run()
        assert not at.exception
        (error,) = [shown(e) for e in at.error]
        assert str(said.value).startswith("layer pattern ")  # the library's, a sentence here
        assert error.startswith(f"L{str(said.value)[1:]}. Until it is fixed")
        assert "at character 6" in error


def test_edit_by_hand_starts_from_a_model_loaded_after_it_was_opened():
    # the editor, opened on Qwen3-Next, then falcon-mamba-7b's config.json loaded: the editor
    # showed Qwen3-Next's (3*gdn,full)*12 under falcon-mamba's title, and an edit to it would
    # have replaced the model loaded
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert at.text_input(key="spec.pattern").value == "(3*gdn,full)*12"
    at = open_falcon_mamba_config(at)
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert_clean(at)
    assert shown(at.subheader[0]) == "FalconMambaForCausalLM"  # its config names no path
    assert at.text_input(key="spec.pattern").value == "64*mamba1"  # Mamba-1 layers
    assert metrics(at)["Cache layers, all kinds"] == "64 layers"
    # so with an MTP layer added on Budget (2 drafted tokens): 48 + 1 layers, the editor's too
    at = open_app("app_pages/model.py", {"spec_tokens": "2"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.switch_page("app_pages/budget.py").run()
    at.button(key="mtp.add").click().run()
    at.switch_page("app_pages/model.py").run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "49 layers"
    assert (at.text_input(key="spec.name").value, at.text_input(key="spec.pattern").value) == (
        "Qwen3-Next-80B-A3B + MTP layer", "(3*gdn,full)*11,3*gdn,2*full")


def test_a_failed_load_over_a_raw_model_says_the_raw_model_stays():
    # a raw model shows as "custom" (the page's title, the sidebar): "every page still shows
    # custom" read as no model named at all
    at = open_app("app_pages/model.py", QWEN35_LINK)
    assert shown(at.subheader[0]) == "custom"
    kept = "every page still shows the model given in raw bytes (custom)."
    _paste_config(at, "not json")
    assert [shown(e) for e in at.error] == [
        f"pasted config.json is not valid JSON (line 1, column 1: Expecting value). No "
        f"config.json was loaded: {kept}"]
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value('{"x": 1}').run()
    at.button(key="model.load").click().run()
    assert shown(at.error[0]).endswith(f"No model JSON was loaded: {kept}")
    assert shown(at.subheader[0]) == "custom"


def _load_config_text(config: str) -> AppTest:
    return _paste_config(open_app("app_pages/model.py"), config)


def _paste_config(at: AppTest, config: str | dict) -> AppTest:
    """``at`` after pasting ``config`` (text, or a dict as its JSON) as a config.json and
    loading it."""
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(
        config if isinstance(config, str) else json.dumps(config)).run()
    at.button(key="hf.load").click().run()
    return at


# Configs FlatKV does not read, each refused with a way out: the command line's names its own
# commands, flags and the README; the Model page's what to do on it
_UNREAD_CONFIGS = {
    "unknown type": {"model_type": "mamba3"},
    "not read yet": {"model_type": "mistral_large4"},
    "wrapper of another language model": {
        "model_type": "mistral3", "text_config": {"model_type": "qwen2"}},
    "no model_type": {},
}


@pytest.mark.parametrize("config", _UNREAD_CONFIGS.values(), ids=list(_UNREAD_CONFIGS))
def test_a_config_json_the_app_does_not_read_says_what_to_do_on_the_page(config):
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.hf_resolve import ConfigError

    text = json.dumps(config)
    with pytest.raises(ConfigError) as cli:
        spec_from_hf_config(text.encode())
    at = _load_config_text(text)
    (error,) = [shown(e) for e in at.error]
    # the error carries the page's words: none of them found by editing the command line's
    assert error == cli.value.on_page + (
        ". No config.json was loaded: every page still shows Qwen3-Next-80B-A3B.")
    for cli_only in ("python -m", "--model-file", "--hf-config", "README", "Model page's"):
        assert cli_only not in error  # no command, no flag, no page but the one it is on
    assert str(cli.value) != cli.value.on_page


def test_a_config_json_transformers_finds_inconsistent_says_its_words_and_a_fix_on_the_page():
    # Falcon-H1-7B's config with mamba_d_ssm null: transformers' class takes mamba_expand x
    # hidden_size = 2 x 3,072 = 6,144 for it, not the heads' 24 x 128 = 3,072, and says so in
    # words that name no field of the file; the page keeps them and says which field to give
    from test_hf_config import PRESET_CONFIGS

    at = _load_config_text(json.dumps({**PRESET_CONFIGS["Falcon-H1-7B"], "mamba_d_ssm": None}))
    assert [shown(e) for e in at.error] == [
        "this falcon_h1 config.json does not hold together: The dimensions for the Mamba head "
        "state do not match the model intermediate_size; config.json gives mamba_d_ssm as null, "
        "which transformers fills in for itself: give it the checkpoint's value. No config.json "
        "was loaded: every page still shows Qwen3-Next-80B-A3B."]
    assert not at.exception


def test_a_config_json_of_a_type_the_app_does_not_read_is_described_by_hand_on_the_page():
    # mamba3 is no model type FlatKV reads: the way out is to describe the model by hand, and
    # the types it does read are listed on the page, not in a README section of a CLI flag
    from flatkv.hf_config import SUPPORTED_MODEL_TYPES, spec_from_hf_config

    with pytest.raises(ValueError) as cli:
        spec_from_hf_config(b'{"model_type": "mamba3"}')
    # the command line's message, as it was
    assert str(cli.value) == (
        f"model_type 'mamba3' is not supported (FlatKV reads {len(SUPPORTED_MODEL_TYPES)} model "
        "types, listed in full in the README under --hf-config; nearest by spelling: mamba, "
        "mamba2, jamba); describe the model by hand instead (the Model page's 'Edit by hand', "
        "or `python -m flatkv model --preset NAME --export` edited and read back with "
        "--model-file)")
    at = _load_config_text('{"model_type": "mamba3"}')
    (error,) = [shown(e) for e in at.error]
    assert error == (
        f"model_type 'mamba3' is not supported (FlatKV reads {len(SUPPORTED_MODEL_TYPES)} model "
        "types, listed under 'Model types FlatKV reads' above; nearest by spelling: mamba, "
        "mamba2, jamba); describe the model by hand instead: pick the preset nearest it under "
        "Preset above, then change what differs under Edit by hand. No config.json was loaded: "
        "every page still shows Qwen3-Next-80B-A3B.")
    (listing,) = [e for e in at.expander
                  if e.label == f"Model types FlatKV reads ({len(SUPPORTED_MODEL_TYPES)})"]
    assert [unescaped(m.value) for m in listing.markdown] == [
        ", ".join(SUPPORTED_MODEL_TYPES)]


def test_after_a_config_json_the_last_preset_can_be_picked_again():
    # the picker showed the last preset while a loaded config.json was the model, so picking
    # that preset changed nothing; now it shows none, and any preset picked is a change
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    _paste_config(at, {
        "model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "hidden_size": 512})
    assert metrics(at)["Cache layers, all kinds"] == "4 layers"
    at.segmented_control(key="model.source").set_value("Preset").run()
    assert_clean(at)
    assert at.selectbox(key="w.model").value is None
    assert "The current model is not a preset" in shown(at.info[0])
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert_clean(at)
    assert at.query_params["model"] == "Llama-3.1-8B"
    assert metrics(at)["Cache layers, all kinds"] == "32 layers"


def test_model_page_loads_a_config_json_and_model_json():
    at = open_app("app_pages/model.py")
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert_clean(at)
    assert at.query_params["model"] == "Llama-3.1-8B"
    assert metrics(at)["Cache layers, all kinds"] == "32 layers"
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(json.dumps({
        "model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "hidden_size": 512, "torch_dtype": "bfloat16"})).run()
    at.text_input(key="hf.name").set_value("tiny-llama").run()
    at.button(key="hf.load").click().run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "4 layers"
    # 2 KV heads x (64 + 64) x 2 B = 512 B per token per layer (head_dim 512 / 8 = 64)
    assert at.dataframe[0].value.iloc[0]["KV B per token"] == 512
    assert shown(at.subheader[0]) == "tiny-llama"
    assert at.text_input(key="hf.name").value == ""  # the name went with its config
    # back from another page, the source is still config.json (the model came from it)
    at.switch_page("app_pages/layout.py").run()
    at.switch_page("app_pages/model.py").run()
    assert at.segmented_control(key="model.source").value == "config.json"
    # a hybrid's source says where its ssm dtype came from, and the link keeps it
    at.text_area(key="hf.paste").set_value('{"model_type": "nemotron_h"}').run()
    at.button(key="hf.load").click().run()
    assert shown(at.subheader[0]) == "nemotron_h"  # named from its own config: no class
    # a config that names its class but no _name_or_path (Jamba-1.5-Mini's) goes by the class,
    # not by its family's model_type "jamba"
    at.text_area(key="hf.paste").set_value(json.dumps(
        {"model_type": "jamba", "architectures": ["JambaForCausalLM"]})).run()
    at.button(key="hf.load").click().run()
    assert_clean(at)
    assert shown(at.subheader[0]) == "JambaForCausalLM"
    at.text_area(key="hf.paste").set_value('{"model_type": "nemotron_h"}').run()
    at.button(key="hf.load").click().run()
    why = "ssm state float32 from transformers' default for mamba_ssm_cache_dtype"
    assert any(shown(c).endswith(why) for c in at.caption)
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert any(shown(c).endswith(why) for c in again.caption)
    # pasted text is JSON, never taken for a path or a model id; a failed load says that the
    # model shown (on every page) is still the one before
    current = shown(at.subheader[0])
    kept = f". No config.json was loaded: every page still shows {current}."
    at.text_area(key="hf.paste").set_value("hello this is not json {").run()
    at.button(key="hf.load").click().run()
    assert [shown(e) for e in at.error] == [
        "pasted config.json is not valid JSON (line 1, column 1: Expecting value)" + kept]
    assert shown(at.subheader[0]) == current
    at.text_area(key="hf.paste").set_value(" meta-llama/Llama-3.1-8B\n").run()
    at.button(key="hf.load").click().run()
    assert [shown(e) for e in at.error] == [
        "'meta-llama/Llama-3.1-8B' is not JSON: it looks like a model id or a path. Paste the "
        "contents of the config.json or upload the file (the app does not fetch from the Hub; "
        "python -m flatkv model --hf-config ID does)" + kept]
    at.text_area(key="hf.paste").set_value("/models/llama/config.json").run()
    at.button(key="hf.load").click().run()
    assert shown(at.error[0]).startswith("'/models/llama/config.json' is not JSON: it looks like "
                                        "a model id or a path.")
    # an owner/name past a file name's 255 bytes: the same refusal, not a traceback from
    # asking the file system whether such a path exists
    at.text_area(key="hf.paste").set_value("x" * 300 + "/y").run()
    at.button(key="hf.load").click().run()
    assert not at.exception
    # quoted by its start (units.quoted), as the other messages quote a value: 300 + 2
    assert shown(at.error[0]).startswith(f"'{'x' * 80}'... (302 characters) is not JSON: it "
                                        "looks like a model id or a path.")
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    at.text_area(key="model.paste").set_value('{"model_type": "llama"}').run()
    at.button(key="model.load").click().run()
    assert [shown(e) for e in at.error] == [
        "this is a Hugging Face config.json (model_type 'llama'), not a model JSON: load it "
        f"under Source: config.json. No model JSON was loaded: every page still shows {current}."]
    at.text_area(key="model.paste").set_value(
        '{"format": "flatkv-profile/1", "name": "tiny", "layers": "linear,full",'
        ' "kv_bytes_per_slot": 64, "state_const_bytes": {"ssm": 4096}}').run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "2 layers"
    assert at.query_params["layers"] == "linear,full"  # as a person writes it
    at.text_area(key="model.paste").set_value("{broken").run()
    at.button(key="model.load").click().run()
    assert any("not valid JSON" in shown(e) for e in at.error)


def test_model_summary_figures_end_inside_the_main_column_at_1000_px():
    """Every preset's kinds table (the Model page's summary) gives its figures, through "state
    B per layer", whole at 1000 px: sized as the page's table sizes them, they end inside the
    main column (a "1,097,7" seen there was the scroll edge's cut, not the column's)."""
    from app_pages._frame import MAIN_COLUMN_PX, _shown_number, column_width
    from flatkv.app_model import preset_spec, spec_kind_rows

    for name in model_names():
        rows = spec_kind_rows(preset_spec(name))
        columns = list(rows[0])
        figures = columns[:columns.index("state B per layer") + 1] if (
            "state B per layer" in columns) else columns[:columns.index("KV B per token") + 1]
        widths = [column_width(c, [v if isinstance(v, str) else _shown_number(v)
                                   for v in (r[c] for r in rows) if v is not None])
                  for c in figures]
        assert sum(widths) <= MAIN_COLUMN_PX, (name, dict(zip(figures, widths)))


def test_a_state_model_keeps_its_ssm_element_size_as_raw_bytes():
    # the default Qwen3-Next (TP 1, ssm 524,288 elements of 2 B) edited as raw bytes: SGLang
    # still keeps the ssm state in float32, 49,152 + 524,288 x 4 = 2,146,304 B a layer
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.kv").set_value(4096).run()  # now a raw profile
    assert_clean(at)
    assert at.query_params["model"] == "custom" and at.query_params["ssm_el"] == "2"
    assert at.query_params["ssm_dtype"] == "bfloat16"  # its name rides with it
    at.switch_page("app_pages/compare.py").run()
    assert any("2,146,304 B of state per layer" in c.value for c in at.caption)
    # the form says so, and clearing the box takes the bytes as given (as --state does)
    at.switch_page("app_pages/model.py").run()
    assert at.checkbox(key="edit.ssm_el").value is True
    assert at.checkbox(key="edit.ssm_el").label == (
        "ssm tensor in 2-byte elements (bfloat16), as the model edited had it")
    at.checkbox(key="edit.ssm_el").uncheck().run()
    assert_clean(at)
    assert "ssm_el" not in at.query_params and not at.checkbox
    assert "ssm_dtype" not in at.query_params  # the name goes with the size
    at.switch_page("app_pages/compare.py").run()
    assert not any("of state per layer" in c.value for c in at.caption)  # as given: no re-size
    # an ssm tensor of 3 bytes is no whole count of 2-byte elements: its bytes taken as given
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.state").set_value("conv=49152,ssm=3").run()
    assert_clean(at)
    assert "ssm_el" not in at.query_params


def test_the_model_page_counts_mla_layers_as_full_attention_of_mla():
    """DeepSeek-V3's 61 layers read "Full attention 61 layers" above a table whose kind is
    "mla": the count now names them as the table does, and its help says what MLA keeps,
    as the Layout charts name the bytes ("KV (full attention, MLA latent)")."""
    for name in ("DeepSeek-V3", "DeepSeek-V3.2"):
        at = open_app("app_pages/model.py", {"model": name})
        assert_clean(at)
        m = metrics(at)
        assert m["Full attention (MLA)"] == "61 layers" and "Full attention" not in m
        assert {x.label: x.help for x in at.metric}["Full attention (MLA)"] == (
            "Full-attention layers that keep MLA's latent (one compressed vector a token, "
            "which the attention expands to K and V) in place of K and V")
        assert list(at.dataframe[0].value["kind"]) == ["mla"]
    # K and V keep the plain name, with no help
    llama = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    assert metrics(llama)["Full attention"] == "32 layers"
    assert {x.label: x.help for x in llama.metric}["Full attention"] == ""


def test_a_raw_mla_model_names_its_layers_as_its_counts_do():
    """Raw bytes of one latent a layer (kv_split=576: CacheProfile.mla) counted "Full
    attention (MLA) 61 layers" above a layer strip and a per-layer table that named the same
    layers "full attention"; every place now says "full attention (MLA)". Raw K and V (288 +
    288) keep "full attention" everywhere."""
    link = {"model": "custom", "layers": "full*61", "kv": "576", "kv_dtype": "bfloat16"}
    for split, kind in (("576", "full attention (MLA)"), ("288,288", "full attention")):
        at = open_app("app_pages/model.py", {**link, "kv_split": split})
        assert_clean(at)
        assert metrics(at)[kind[0].upper() + kind[1:]] == "61 layers"
        strip = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
                 if "Cache layers in model order" in c.proto.spec]
        assert [t["name"] for t in strip[0]["data"]] == [kind]
        per_layer = joined_tables(at, "cache layer")
        assert set(per_layer["kind"]) == {kind} and len(per_layer) == 61


def test_an_mla_model_keeps_its_kernel_block_size_as_raw_bytes():
    from flatkv.app_model import load_model_json
    from flatkv.profile import profile_to_dict

    at = open_app("app_pages/model.py", {"model": "DeepSeek-V3"})
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.kv").set_value(2 * 1152).run()  # now a raw profile
    assert_clean(at)
    # the kernel block size is part of the raw model, not an engine option the user set
    # (a dense MLA model's 16: FLASH_ATTN_MLA's and TRITON_MLA's, vLLM's picks)
    assert at.query_params["model"] == "custom" and at.query_params["model_kernel"] == "16"
    assert "kernel" not in at.query_params
    at.switch_page("app_pages/compare.py").run()
    assert vllm_row(at)["P (tokens)"] == 16  # A = max(16, block 16)
    assert "changed" not in at.expander[0].label
    at.switch_page("app_pages/model.py").run()
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    assert "model_kernel" not in at.query_params and "kernel" not in at.query_params
    at.switch_page("app_pages/compare.py").run()
    assert vllm_row(at)["P (tokens)"] == 16  # no kernel block of its own: vLLM's usual 16
    # the profile JSON export carries it too
    profile = load_preset("DeepSeek-V3").profile()
    exported = json.dumps(profile_to_dict(profile))
    assert json.loads(exported)["kernel_block_size"] == 16
    assert load_model_json(exported).kernel_block_size == 16


def test_models_tables_fit_the_page_at_1000_px():
    """At 1000 px the main column is 540 px of table and an expander's 504. The cache-layer
    table of a model with state took 593 to 657 px (MiniMax-M1's kind cut to "kinc",
    Nemotron-H-8B's seven columns 657) and the per-layer table 583 to 590 px in its expander.
    Now the kinds table of a model with state stands as two, each led by the kind's name (what
    the kinds are with their KV bytes; their state bytes and shapes), a few headers are short
    on screen (the data keeps their names), and every table of every preset (and a raw MLA
    model's, its kind "full attention (MLA)") ends inside its column, every figure still on
    the page."""
    from app_pages._frame import EXPANDER_COLUMN_PX, MAIN_COLUMN_PX
    from flatkv.app_model import model_names, preset_spec, spec_kind_rows

    raw_mla = {"model": "custom", "layers": "full*61", "kv": "576", "kv_split": "576"}
    for link in [{"model": name} for name in model_names()] + [raw_mla]:
        at = open_app("app_pages/model.py", link)
        assert_clean(at)
        folded = {id(d) for e in at.expander for d in e.dataframe}
        for frame in tables(at):  # as drawn at 1000 px (not the whole of one split there)
            fit = EXPANDER_COLUMN_PX if id(frame) in folded else MAIN_COLUMN_PX
            assert sum(column_widths(frame).values()) <= fit, (link, column_widths(frame))
        if link is raw_mla:
            continue
        # every kind's figures, joined from its tables, as the spec gives them
        rows = spec_kind_rows(preset_spec(link["model"]))
        kinds = joined_tables(at, "name")
        assert list(kinds.columns) == [c for c in rows[0] if c != "name"], link
        # drawn whole too, for a place that holds it (1,400 px): the same figures
        assert [w.value.set_index("name").equals(kinds) for w in whole_tables(at)
                if w.value.columns[0] == "name"] in ([], [True]), link
        assert [[None if pd.isna(v) else v for v in kinds.loc[r["name"]]] for r in rows] == [
            [v for c, v in r.items() if c != "name"] for r in rows], link
    at = open_app(None, {"model": "Jamba-1.5-Mini"})
    first, state_tables = (d for d in tables(at) if d.value.columns[0] == "name")
    assert list(first.value.columns) == ["name", "kind", "layers", "KV B per token"]
    assert list(state_tables.value.columns) == ["name", "state B per layer", "conv shape",
                                                "ssm shape"]
    config = json.loads(first.proto.columns) | json.loads(state_tables.proto.columns)
    assert [config[c]["label"] for c in ("KV B per token", "state B per layer", "conv shape",
                                         "ssm shape")] == ["KV B/token", "state B/layer",
                                                           "conv", "ssm"]
    # int(characters x 6.8) + 24 a column, by the longer of header and cells, and 18 for a
    # tooltip's icon: name 64 ("mamba1"), kind 85 ("attention"), layers 64, "KV B/token"
    # 92 + 18; then name 64, "state B/layer" 112 + 18 (the tooltips say what the short headers
    # leave out), "conv" 78 (cells "8192 x 3"), "ssm" 85 ("8192 x 16"): 323 and 357 px of 540,
    # where one table took 616
    assert list(column_widths(first).values()) == [64, 85, 64, 110]
    assert list(column_widths(state_tables).values()) == [64, 130, 78, 85]
    assert config["KV B per token"]["help"].startswith("KV B per token: the bytes a layer")
    assert config["state B per layer"]["help"].startswith("state B per layer: the constant")
    kinds = joined_tables(at, "name")
    assert kinds.loc["mamba1", "ssm shape"] == "8192 x 16"
    assert list(kinds["kind"]) == ["mamba1", "attention"]
    # Jamba-1.5-Mini's config: Mamba1 d_inner 8,192, d_state 16, conv kernel 4; attention 8
    # KV heads of 128
    geometry = next(d.value for d in at.dataframe if d.value.columns[0] == "field")
    assert list(geometry.columns) == ["field", "mamba1", "full"]
    by_field = geometry.set_index("field")
    assert [by_field.loc[f, "mamba1"] for f in ("d_inner", "d_state", "conv_kernel")] == [
        8192, 16, 4]
    assert (by_field.loc["kv_heads", "full"], by_field.loc["head_dim_k", "full"]) == (8, 128)
    assert pd.isna(by_field.loc["kv_heads", "mamba1"])
    # the per-layer table in the kinds table's words: "layer" 5 x 6.8 + 24 = 58 (of 98 for
    # "cache layer"), "KV B/token" 92 (126), "state B" 85 ("2,097,152"; 98): MiniMax-M1's
    # six columns 503 px of the expander's 504, where they took 590
    at = open_app(None, {"model": "MiniMax-M1"})
    (layers,) = [d for d in at.dataframe if d.value.columns[0] == "cache layer"]
    config = json.loads(layers.proto.columns)
    assert [config[c]["label"] for c in ("cache layer", "bytes per token", "state bytes")] == [
        "layer", "KV B/token", "state B"]
    # its group as Layout names it: "full attention" 14 x 6.8 + 24 = 119 (the planner's
    # "linear_attention" took 132): the six columns 490 px
    assert column_widths(layers) == {"cache layer": 58, "kind": 85, "group": 119, "slot": 51,
                                     "bytes per token": 92, "state bytes": 85}
    # MiniMax-M1: 7 lightning layers then a full one; 64 x 128 x 128 x 2 B = 2,097,152 B a
    # state layer, 8 KV heads x 128 x 2 (K, V) x 2 B = 4,096 B a token a full one
    assert list(layers.value["state bytes"][:8]) == [2_097_152] * 7 + [0]
    assert list(layers.value["bytes per token"][:8]) == [0] * 7 + [4_096]


def test_model_page_names_the_cache_dtypes():
    at = open_app("app_pages/model.py", {"model": "Nemotron-H-8B"})
    assert any(c.value == "Per TP rank (TP 1) · cache dtypes: KV bfloat16, conv bfloat16, ssm "
               "bfloat16 · 32 attention heads (a TP must divide them) · max_model_len 8,192 tokens "
               "(vLLM's default `--max-model-len`, from the config) · architecture: "
               "NemotronHForCausalLM · mamba chunk: 128 tokens (vLLM aligns P to it in mamba "
               "cache mode all)." for c in at.caption)
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "2"})
    assert any(c.value == "Per TP rank (TP 2) · cache dtypes: KV bfloat16 · 32 attention heads "
               "(a TP must divide them) · max_model_len 131,072 tokens (vLLM's default "
               "`--max-model-len`, from the config) · architecture: LlamaForCausalLM."
               for c in at.caption)
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    assert any(c.value == "Per TP rank (TP 1) · cache dtypes: KV bfloat16 · 64 attention heads "
               "(a TP must divide them) · max_model_len 131,072 tokens (vLLM's default "
               "`--max-model-len`, from the config) · architecture: GptOssForCausalLM."
               for c in at.caption)


def test_a_failed_load_at_a_tp_that_does_not_split_the_model_keeps_its_own_error():
    # Llama-3.1-8B's 8 KV heads do not split over TP 3 (the summary shows it at TP 1): a bad
    # paste still says why it failed, not why the current model does not plan at TP 3
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B", "tp": "3"})
    _paste_config(at, "{broken")
    assert not at.exception
    assert [shown(e) for e in at.error if "No config.json was loaded" in shown(e)] == [
        "pasted config.json is not valid JSON (line 1, column 2: Expecting property name "
        "enclosed in double quotes). No config.json was loaded: every page still shows "
        "Llama-3.1-8B."]


def test_raw_bytes_edit_the_sliding_layers_own_kv_bytes():
    # Gemma 4's shape as raw bytes: the editor shows the sliding layers' 16,384 B beside the
    # full layers' 8,192 B; 0 makes them one size, and a pattern without sliding layers
    # needs 0 there (the error says why, and clearing it gets the model back)
    link = {"model": "custom", "layers": "(5*sliding,full)*10", "kv": "8192", "swa_kv": "16384",
            "window": "1024"}
    at = open_app("app_pages/model.py", link)
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    assert at.number_input(key="edit.swa_kv").value == 16_384
    assert metrics(at)["KV per token, all layers"] == format_bytes(50 * 16_384 + 10 * 8_192)
    at.number_input(key="edit.swa_kv").set_value(0).run()
    assert_clean(at)
    assert "swa_kv" not in at.query_params
    assert metrics(at)["KV per token, all layers"] == format_bytes(60 * 8_192)
    at.number_input(key="edit.swa_kv").set_value(4_096).run()
    assert at.query_params["swa_kv"] == "4096"
    at.text_input(key="edit.layers").set_value("full*4").run()
    at.number_input(key="edit.window").set_value(0).run()  # its window goes too
    assert any(shown(e).startswith('"Sliding layers\' KV bytes" is 4096 but "Layer pattern" '
                                   "has no sliding_attention layer") for e in at.error)
    at.number_input(key="edit.swa_kv").set_value(0).run()
    assert_clean(at)
    assert at.query_params["layers"] == "full*4"
    assert metrics(at)["Cache layers, all kinds"] == "4 layers"
    # past 1 TiB a row (2**41 B): refused with the field's own way out, its 0, where the
    # profile's hint said "or None" (found by fuzzing the widgets)
    at.text_input(key="edit.layers").set_value("(5*sliding,full)*10").run()
    at.number_input(key="edit.window").set_value(1024).run()
    at.number_input(key="edit.swa_kv").set_value(2**41).run()
    assert [shown(e) for e in at.error] == [
        "\"Sliding layers' KV bytes\" 2,199,023,255,552 is too large to be real: give "
        '1,099,511,627,776 or less, or 0 when sliding layers add "KV bytes per token per layer" '
        'too. '
        "Until it is fixed, every page (and the summary below) shows the last valid model."]
    assert at.query_params["layers"] == "(5*sliding,full)*10" and "swa_kv" not in at.query_params


def test_kv_shared_layers_are_named_and_dropped_when_the_layers_are_edited():
    # Gemma 4 with 20 kv-shared layers: the summary says SGLang keeps a pool layer for them;
    # an edit of the layer pattern leaves the layers they read, so they go with it (they used
    # to stay hidden, or to leave an error no widget could mend)
    from test_hf_config import _gemma4

    from flatkv import app_model
    spec = _gemma4(num_kv_shared_layers=20)
    at = open_app("app_pages/model.py", {
        "model": "spec", "spec": app_model.pack_spec(app_model.spec_to_json(spec))})
    said = "20 more layers read earlier layers' KV (no cache of their own; SGLang keeps a pool " \
           "layer for each)"
    assert any(said in c.value for c in at.caption)
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    # a window edited keeps the layers as they are: the shared ones stay (SGLang's pool too)
    at.number_input(key="spec.sliding.sliding_window").set_value(2048).run()
    assert_clean(at)
    assert any(said in c.value for c in at.caption)
    kept = app_model.spec_from_json(app_model.unpack_spec(at.query_params["spec"]))
    assert kept.kv_shared_layer_types == spec.kv_shared_layer_types
    assert kept.profile().sliding_window == 2048
    at.text_input(key="spec.pattern").set_value("full*20").run()
    assert_clean(at)
    assert not any("read earlier layers' KV" in c.value for c in at.caption)
    edited = app_model.spec_from_json(app_model.unpack_spec(at.query_params["spec"]))
    assert edited.kv_shared_layer_types == ()
    # as raw bytes: the summary names them, and the same layers written another way keep them
    raw = open_app("app_pages/model.py", {
        "model": "spec", "spec": app_model.pack_spec(app_model.spec_to_json(spec))})
    raw.segmented_control(key="model.source").set_value("Raw bytes").run()
    pattern = raw.text_input(key="edit.layers")
    assert pattern.value == "(5*sliding,full)*6,4*sliding"  # short names, as one writes them
    pattern.set_value("(5*sliding_attention,full_attention)*6,4*sliding_attention").run()
    assert_clean(raw)
    assert raw.query_params["kv_shared"] == "sliding,(full,5*sliding)*3,full"  # as `layers`
    assert any(said in c.value for c in raw.caption)


def test_raw_bytes_of_other_layer_kinds_drop_the_edited_models_architecture():
    # Llama-3.1-8B as raw bytes: its class is carried (engines key pools on it) while its
    # layers keep their kinds; made a hybrid of state layers, it is another model, and the
    # summary no longer names LlamaForCausalLM
    at = open_app("app_pages/model.py", {"model": "Llama-3.1-8B"})
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.text_input(key="edit.layers").set_value("full*16").run()
    assert_clean(at)
    assert at.query_params["arch"] == "LlamaForCausalLM"
    at.text_input(key="edit.layers").set_value("(3*linear,full)*8").run()
    at.text_input(key="edit.state").set_value("conv=49152,ssm=2097152").run()
    assert_clean(at)
    assert at.query_params["layers"] == "(3*linear,full)*8" and "arch" not in at.query_params
    assert not any("LlamaForCausalLM" in shown(m) for m in at.markdown)


def test_model_page_number_fields_say_what_is_wrong_with_a_negative():
    # the fields take any number (a minimum would make the browser swallow -5 without a word):
    # a negative one gets an error naming the field and the fix, and the model stays
    link = {"model": "custom", "layers": "(5*sliding,full)*10", "kv": "8192", "window": "1024"}
    at = open_app("app_pages/model.py", link)
    at.segmented_control(key="model.source").set_value("Raw bytes").run()
    at.number_input(key="edit.window").set_value(-5).run()
    assert [shown(e) for e in at.error][0].startswith(
        "Sliding window is -5: give a whole number of 0 or more")
    assert at.query_params["window"] == "1024"
    at.number_input(key="edit.window").set_value(2048).run()
    assert_clean(at)
    assert at.query_params["window"] == "2048"
    # by hand: a kind's field
    from test_hf_config import _gemma4

    from flatkv import app_model
    spec = app_model.pack_spec(app_model.spec_to_json(_gemma4()))
    hand = open_app("app_pages/model.py", {"model": "spec", "spec": spec})
    hand.segmented_control(key="model.source").set_value("Edit by hand").run()
    kv_heads = hand.number_input(key="spec.full.kv_heads").value
    hand.number_input(key="spec.full.kv_heads").set_value(-1).run()
    # a size with no "0 = none": 1 or more, and 0 refused in the same words
    assert any("full: kv heads is -1: give a whole number of 1 or more" in shown(e)
               for e in hand.error)
    assert hand.query_params["spec"] == spec
    hand.number_input(key="spec.full.kv_heads").set_value(0).run()
    assert [shown(e) for e in hand.error if "kv heads" in shown(e)] == [
        "full: kv heads is 0: give a whole number of 1 or more. Until it is fixed, every page "
        "(and the summary below) shows the last valid model."]
    # a conv kernel keeps K - 1 rows of state: its least is 2, said as the field's own
    qwen = open_app("app_pages/model.py")
    qwen.segmented_control(key="model.source").set_value("Edit by hand").run()
    qwen.number_input(key="spec.gdn.conv_kernel").set_value(1).run()
    assert [shown(e) for e in qwen.error] == [
        "gdn: conv kernel is 1: give a whole number of 2 or more. Until it is fixed, every page "
        "(and the summary below) shows the last valid model."]
    hand.number_input(key="spec.full.kv_heads").set_value(-1).run()
    # the entry stays in its field beside the error (it used to jump back to the model's
    # value, so typing that value back changed nothing and the error stayed): typing the
    # model's value back clears it, the model as it was
    assert hand.number_input(key="spec.full.kv_heads").value == -1
    hand.run()
    assert hand.number_input(key="spec.full.kv_heads").value == -1
    hand.number_input(key="spec.full.kv_heads").set_value(kv_heads).run()
    assert_clean(hand)
    assert hand.number_input(key="spec.full.kv_heads").value == kv_heads
    assert hand.query_params["spec"] == spec
    # an emptied field the same
    hand.number_input(key="spec.full.kv_heads").set_value(None).run()
    assert any("full: kv heads is empty" in shown(e) for e in hand.error)
    assert hand.number_input(key="spec.full.kv_heads").value is None
    hand.number_input(key="spec.full.kv_heads").set_value(kv_heads).run()
    assert_clean(hand)
    # a draft the sidebar's TP does not split, a refused entry, then that draft's value typed
    # back: the TP's error comes back, as the model still is the last valid one
    at_tp = open_app("app_pages/model.py", {"model": "spec", "spec": spec, "tp": "32"})
    at_tp.segmented_control(key="model.source").set_value("Edit by hand").run()
    at_tp.number_input(key="spec.attention_heads").set_value(48).run()
    tp_error = [shown(e) for e in at_tp.error]
    assert any("The sidebar's TP does not split it" in e for e in tp_error)
    at_tp.number_input(key="spec.attention_heads").set_value(-1).run()
    assert any("is -1" in shown(e) for e in at_tp.error)
    at_tp.number_input(key="spec.attention_heads").set_value(48).run()
    assert [shown(e) for e in at_tp.error] == tp_error
    assert at_tp.query_params["spec"] == spec


def test_a_config_json_without_a_length_is_counted_at_the_2048_vllm_assumes():
    # falcon-mamba-7b's config.json gives no length field: vLLM assumes 2,048 (with a warning)
    # and SGLang too; the Model page says so beside the figures and names the fix, and the
    # pages count a request at 2,048 until a context is typed
    at = open_falcon_mamba_config()
    assert_clean(at)
    (note,) = [shown(i) for i in at.info if "no length field" in shown(i)]
    assert note.startswith("The config.json gives no length field (max_position_embeddings, "
                           "n_positions, max_seq_len, seq_length, model_max_length, ...), so "
                           "vLLM warns \"The model's config.json does not contain any of the "
                           "keys to determine the original maximum length of the model. "
                           "Assuming the model's maximum length is 2048.\"; SGLang 0.5.23 "
                           "assumes 2,048 too, silently.")
    assert note.endswith("type the context you serve at (vLLM takes any --max-model-len; "
                         "SGLang refuses a --context-length above 2,048 unless "
                         "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1), or add "
                         "max_position_embeddings to the config.json.")
    assumed = ("max_model_len 2,048 tokens, assumed (vLLM's default `--max-model-len` where "
               "the config gives no length: see the note)")
    assert assumed in unescaped(caption_starting(at, "Per TP rank"))
    # a link keeps it assumed
    again = open_app("app_pages/model.py", dict(at.query_params))
    assert assumed in unescaped(caption_starting(again, "Per TP rank"))
    # Compare counts vLLM at 2,048: 40 GiB // 311,296 B state pages // 64 layers = 2,155
    # blocks, one a request (tests/test_cli.py derives them): vLLM's log line at 2,048 tokens
    link = {**at.query_params, "gpu": "KV cache memory", "kv_mem": "40GiB"}
    compare = open_app("app_pages/compare.py", link)
    assert_clean(compare)
    text = "\n".join(shown(e) for e in (*compare.code, *compare.markdown, *compare.caption))
    assert ("GPU KV cache size: 4,413,440 tokens, Maximum concurrency for 2,048 tokens per "
            "request: 2155.00x") in text


def test_a_checkpoint_of_no_mtp_module_keeps_saying_so_through_a_link_and_the_editor():
    # DeepSeek-V3 read off a config.json with num_nextn_predict_layers 0: the link and the
    # hand editor carry the 0, so "Add an MTP layer" still says the engines' MTP drafting
    # does not start on this checkpoint (models.NO_MTP_MODULE)
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.models import NO_MTP_MODULE, with_mtp_layer
    spec = spec_from_hf_config({"model_type": "deepseek_v3", "num_hidden_layers": 61,
                                "num_attention_heads": 128, "kv_lora_rank": 512,
                                "qk_rope_head_dim": 64, "num_nextn_predict_layers": 0})
    linked = app_model.spec_from_json(app_model.unpack_spec(app_model.pack_spec(
        app_model.spec_to_json(spec))))
    edited = app_model.SpecDraft.from_spec(spec).to_spec()
    for kept in (linked, edited):
        assert kept.mtp_modules == 0
        assert with_mtp_layer(kept).notes.endswith(NO_MTP_MODULE)


def test_an_edit_that_takes_the_indexer_away_drops_learnable_sink():
    # DeepSeek-V3.2 loaded from a config with learnable_sink true (SGLang reads it for the
    # sparse attention alone); index_head_dim 0 in the editor makes it dense MLA, where a model
    # file with the flag is refused: the edit drops it instead of failing, and the link's
    # model no longer carries it
    from test_hf_config import DEEPSEEK_V32_SINKS

    from flatkv.hf_config import spec_from_hf_config

    sinks = spec_from_hf_config(DEEPSEEK_V32_SINKS, name="DeepSeek-V3.2 sinks")
    packed = app_model.pack_spec(app_model.spec_to_json(sinks))
    assert json.loads(app_model.unpack_spec(packed))["learnable_sink"] is True
    at = open_app("app_pages/model.py", {"model": "spec", "spec": packed})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.number_input(key="spec.mla.index_head_dim").set_value(0).run()
    assert_clean(at)
    edited = json.loads(app_model.unpack_spec(at.query_params["spec"]))
    assert edited["kinds"]["mla"].get("index_head_dim") is None and "learnable_sink" not in edited
    # the indexer typed back: the sinks the model was loaded with are back too
    at.number_input(key="spec.mla.index_head_dim").set_value(128).run()
    assert_clean(at)
    assert json.loads(app_model.unpack_spec(at.query_params["spec"]))["learnable_sink"] is True


WALK_NOTE = (  # Qwen3-Next-80B-A3B is (3*gdn,full)*12: 36 + 12 = 48 layers; (2*gdn,full)*10
    # is 20 + 10 = 30
    "Architecture Qwen3NextForCausalLM is the class of the preset Qwen3-Next-80B-A3B, whose "
    "layers these are not ((2*gdn,full)*10, 30 cache layers; Qwen3-Next-80B-A3B's "
    "(3*gdn,full)*12, 48): vLLM and SGLang choose their pools, defaults and refusals by the "
    "class, so every engine's figures here are a Qwen3NextForCausalLM's")


def test_the_hand_editor_sets_the_architecture_and_says_when_a_presets_is_kept():
    # a hybrid made from the default preset kept Qwen3NextForCausalLM, unseen: the editor has
    # its field (as loaded), a warning says the layers are not the preset's, and clearing it
    # makes a model of no class (vLLM's mode-all fallback to align, keyed on the class, goes)
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    field = at.text_input(key="spec.architectures")
    assert field.value == "Qwen3NextForCausalLM" and not at.warning
    at.text_input(key="spec.pattern").set_value("(2*gdn,full)*10").run()
    assert_clean(at)
    (warning,) = at.warning
    assert shown(warning) == WALK_NOTE + (
        ". Keep it for a model of that class; else type the model's own class in the "
        "architecture field (Source: Edit by hand), or clear it.")
    spec = json.loads(app_model.unpack_spec(at.query_params["spec"]))
    assert spec["architectures"] == ["Qwen3NextForCausalLM"]
    (line,) = [c for c in at.caption if shown(c).startswith("Per TP rank")]
    assert ("mamba chunk: unused (vLLM runs Qwen3NextForCausalLM in mamba cache mode align "
            "when asked for all)") in shown(line)
    # a bad class name is refused in the field's words, and the model stays
    at.text_input(key="spec.architectures").set_value("Qwen3 Next").run()
    assert [shown(e) for e in at.error] == [
        "architecture: 'Qwen3 Next' is not a class name: type the config.json's "
        "architectures, comma-separated (e.g. Qwen3NextForCausalLM), or clear the field for "
        "none. Until it is fixed, every page (and the summary below) shows the last valid "
        "model."]
    assert json.loads(app_model.unpack_spec(at.query_params["spec"]))["architectures"] == [
        "Qwen3NextForCausalLM"]
    # cleared: no class, no warning, and vLLM's chunk is the model's own again
    at.text_input(key="spec.architectures").set_value("").run()
    assert_clean(at)
    assert not at.warning
    assert "architectures" not in json.loads(app_model.unpack_spec(at.query_params["spec"]))
    (line,) = [c for c in at.caption if shown(c).startswith("Per TP rank")]
    assert "architecture:" not in shown(line)
    assert shown(line).endswith(
        "mamba chunk: none in the config (vLLM takes 2,048 in mamba cache mode all).")
    # its own class, typed: carried by the link, which reopens it in the field
    at.text_input(key="spec.architectures").set_value(" WalkHybridForCausalLM , X2 ").run()
    assert_clean(at)
    assert not at.warning  # a class no preset has: the model's own
    link = dict(at.query_params)
    assert json.loads(app_model.unpack_spec(link["spec"]))["architectures"] == [
        "WalkHybridForCausalLM", "X2"]
    again = open_app("app_pages/model.py", link)
    again.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert_clean(again)
    assert again.text_input(key="spec.architectures").value == "WalkHybridForCausalLM, X2"
    assert dict(again.query_params) == link


def test_a_presets_class_is_no_warning_on_its_own_layers():
    # the preset's layers with another dtype are the preset's: no warning
    at = open_app("app_pages/model.py", {"model": "gpt-oss-20b"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.selectbox(key="spec.kv_dtype").set_value("float8_e4m3fn").run()
    assert_clean(at)
    assert not at.warning
    at.text_input(key="spec.pattern").set_value("(sliding,full)*2").run()
    assert_clean(at)
    (warning,) = at.warning  # both presets of the class, 24 and 36 layers
    assert shown(warning).startswith(
        "Architecture GptOssForCausalLM is the class of the presets gpt-oss-120b and "
        "gpt-oss-20b, whose layers these are not ((sliding,full)*2, 4 cache layers; "
        "gpt-oss-120b's (sliding,full)*18, 36; gpt-oss-20b's (sliding,full)*12, 24)")
    at.text_input(key="spec.pattern").set_value("(sliding,full)*12").run()
    at.number_input(key="spec.full.kv_heads").set_value(4).run()
    (warning,) = at.warning  # the pattern kept, a kind changed
    assert "((sliding,full)*12, 24 cache layers; gpt-oss-120b's (sliding,full)*18, 36; " \
           "gpt-oss-20b's kinds differ in heads, dims or state)" in shown(warning)


LLAMA_70B = {"model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192,
             "num_attention_heads": 64, "num_key_value_heads": 8,
             "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
             "architectures": ["LlamaForCausalLM"]}


def test_an_edited_config_json_keeps_its_own_class_without_a_warning():
    # Llama-3.1-70B's config.json loaded: LlamaForCausalLM, the class of the preset
    # Llama-3.1-8B (32 layers), is this model's own (80 layers). The editor writes no source,
    # so the warning read any edit as a preset's class kept: it warned on a rename. A model
    # seeded from no preset gets no such warning, whatever is edited after
    at = _paste_config(open_app("app_pages/model.py"), LLAMA_70B)
    assert_clean(at)
    assert not at.warning
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.text_input(key="spec.name").set_value("Llama-3.1-70B").run()
    assert_clean(at)
    assert not at.warning
    spec = json.loads(app_model.unpack_spec(at.query_params["spec"]))
    assert spec["name"] == "Llama-3.1-70B" and spec["architectures"] == ["LlamaForCausalLM"]
    assert "edited_from" not in spec and "source" not in spec
    at.text_input(key="spec.pattern").set_value("40*full").run()  # its layers edited too
    assert_clean(at)
    assert not at.warning


def test_a_preset_edited_and_renamed_keeps_its_class_warning_through_a_link():
    # the walkthrough's hybrid from the default preset, renamed: still Qwen3-Next's class on
    # other layers, said after the rename and in the link it writes (which names the preset
    # the model was made from); its class cleared, no warning
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    at.text_input(key="spec.pattern").set_value("(2*gdn,full)*10").run()
    at.text_input(key="spec.name").set_value("walk-hybrid").run()
    assert_clean(at)
    (warning,) = at.warning
    assert shown(warning).startswith(WALK_NOTE)
    link = dict(at.query_params)
    spec = json.loads(app_model.unpack_spec(link["spec"]))
    assert spec["name"] == "walk-hybrid" and spec["edited_from"] == "Qwen3-Next-80B-A3B"
    again = open_app("app_pages/model.py", link)
    assert_clean(again)
    (warning,) = again.warning
    assert shown(warning).startswith(WALK_NOTE)
    again.segmented_control(key="model.source").set_value("Edit by hand").run()
    again.text_input(key="spec.pattern").set_value("(3*gdn,full)*12").run()  # its own again
    assert_clean(again)
    assert not again.warning


def test_an_architecture_refused_names_it_once():
    # a class name longer than MAX_CLASS_NAME_CHARS (100): said once, cut at 40 characters and
    # its length; it read "architecture 'XXX...'... (101 characters): 'XXX...'... (101
    # characters) is longer than a class name"
    from flatkv.profile import MAX_CLASS_NAME_CHARS
    long = "X" * (MAX_CLASS_NAME_CHARS + 1)
    with pytest.raises(ValueError) as refused:
        app_model.SpecDraft().with_architectures(f"LlamaForCausalLM, {long}")
    assert str(refused.value) == (
        f"architecture: {'X' * 40!r}... (101 characters) is longer than a class name (at most "
        "100 characters): type the config.json's architectures, comma-separated (e.g. "
        "Qwen3NextForCausalLM), or clear the field for none")


def test_the_editor_refuses_an_empty_name_and_labels_its_fields_in_sentence_case():
    at = open_app("app_pages/model.py", {"model": "Qwen3-Next-80B-A3B"})
    at.segmented_control(key="model.source").set_value("Edit by hand").run()
    assert_clean(at)
    # every label starts a sentence, tensors and formats in capitals (KV, SSM, K, V)
    labels = [w.label for w in (*at.text_input, *at.selectbox, *at.number_input)
              if w.key and w.key.startswith("spec.") and not w.key.startswith("spec.new")]
    assert {"Name", "Architecture (empty = none)", "KV dtype", "Conv dtype", "SSM dtype",
            "Attention heads (0 = not checked)", "Mamba chunk, tokens (0 = none)",
            "Max model len, tokens (0 = as loaded)", "KV heads", "Head dim K", "K heads",
            "V heads", "Conv kernel"} <= set(labels)
    assert all(label[:1].isupper() for label in labels), labels
    # an emptied name is refused in its field, not made "edited model": the model stays
    at.text_input(key="spec.name").set_value("  ").run()
    assert [shown(e) for e in at.error] == [
        "Name is empty: type the model's name (every page titles its figures with it). Until "
        "it is fixed, every page (and the summary below) shows the last valid model."]
    assert shown(at.subheader[0]) == "Qwen3-Next-80B-A3B"
    at.text_input(key="spec.name").set_value("mine").run()
    assert_clean(at)
    assert shown(at.subheader[0]) == "mine"


def test_a_configs_mamba_ssm_cache_dtype_travels_in_a_link_to_the_model_and_compare_pages():
    # Nemotron-H-8B's config.json naming mamba_ssm_cache_dtype bfloat16, carried by a spec
    # link: the Model page names it, the page's link gives it back as it came, and Compare's
    # vLLM column reads it: P = 16 x cdiv(61,440 + 2,097,152, 65,536) = 528, a block 4 x 528 x
    # 4,096 = 8,650,752 B, 40 GiB // it = 4,964 blocks (float32's 1,040 and 2,520 without it)
    from test_hf_config import PRESET_CONFIGS

    from flatkv.app_state import AppState, encode_query
    from flatkv.hf_config import spec_from_hf_config

    assert 16 * -(-2_158_592 // 65_536) == 528 and (40 << 30) // 8_650_752 == 4_964
    spec = spec_from_hf_config({**PRESET_CONFIGS["Nemotron-H-8B"],
                                "mamba_ssm_cache_dtype": "bfloat16"})
    link = encode_query(AppState(model="spec", spec=app_model.spec_to_json(spec)))
    at = open_app("app_pages/model.py", link)
    assert_clean(at)
    assert any(" · config mamba_ssm_cache_dtype: bfloat16 (vLLM's ssm dtype unless told)" in
               shown(c) for c in at.caption)
    assert at.query_params["spec"] == link["spec"]
    at = open_app("app_pages/compare.py", {**link, "gpu": "Custom", "gpu_mem": "40GiB",
                                           "frac": "1", "ctx": "8192"})
    assert_clean(at)
    vllm = vllm_row(at)
    assert (vllm["P (tokens)"], vllm["blocks"]) == (528, 4_964)
    # as raw bytes (the link's cfg_ssm_cache), and edited by hand, it stays
    raw = encode_query(AppState(model="custom", raw=app_model.RawModel.from_profile(
        spec.profile())))
    assert raw["cfg_ssm_cache"] == "bfloat16"
    at = open_app("app_pages/compare.py", {**raw, "gpu": "Custom", "gpu_mem": "40GiB",
                                           "frac": "1", "ctx": "8192"})
    assert_clean(at)
    assert (vllm_row(at)["P (tokens)"], vllm_row(at)["blocks"]) == (528, 4_964)
    assert at.query_params["cfg_ssm_cache"] == "bfloat16"
    assert app_model.SpecDraft.from_spec(spec).to_spec().config_mamba_ssm_cache_dtype == (
        "bfloat16")


def test_a_pasted_config_or_model_json_is_kept_through_a_trip_to_another_page():
    # streamlit drops a widget's value on a run that does not draw it: text pasted and not yet
    # loaded went empty after a look at Layout or at another source; the session keeps it apart
    config = json.dumps({"model_type": "llama", "num_hidden_layers": 2})
    exported = json.dumps(load_preset("Qwen3-Next-80B-A3B").to_dict())
    at = open_app("app_pages/model.py")
    for source, key, text in (("config.json", "hf.paste", config),
                              ("Model JSON", "model.paste", exported)):
        at.segmented_control(key="model.source").set_value(source).run()
        at.text_area(key=key).set_value(text).run()
        at.switch_page("app_pages/layout.py").run()
        assert_clean(at)
        at.switch_page("app_pages/model.py").run()
        assert_clean(at)
        assert at.segmented_control(key="model.source").value == source
        assert at.text_area(key=key).value == text
        at.segmented_control(key="model.source").set_value("Preset").run()
        at.segmented_control(key="model.source").set_value(source).run()
        assert at.text_area(key=key).value == text
        # nothing was loaded on the way: the model is still the default preset
        assert "model" not in at.query_params
        # emptied by hand, it stays empty
        at.text_area(key=key).set_value("").run()
        at.switch_page("app_pages/layout.py").run()
        at.switch_page("app_pages/model.py").run()
        assert at.text_area(key=key).value == ""


def test_a_model_name_typed_for_a_config_is_kept_through_a_trip_to_another_page():
    # the name box under the paste box lost its entry the same way the paste did: typed, a look
    # at Layout or at another source, and it was empty
    config = json.dumps({"model_type": "llama", "num_hidden_layers": 2,
                         "num_attention_heads": 8, "num_key_value_heads": 2,
                         "hidden_size": 512})
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_input(key="hf.name").set_value("tiny-llama").run()
    at.switch_page("app_pages/layout.py").run()
    assert_clean(at)
    at.switch_page("app_pages/model.py").run()
    assert_clean(at)
    assert at.text_input(key="hf.name").value == "tiny-llama"
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.segmented_control(key="model.source").set_value("config.json").run()
    assert at.text_input(key="hf.name").value == "tiny-llama"
    # emptied by hand, it stays empty
    at.text_input(key="hf.name").set_value("").run()
    at.switch_page("app_pages/layout.py").run()
    at.switch_page("app_pages/model.py").run()
    assert at.text_input(key="hf.name").value == ""
    # a name names one load: loaded, it goes, and a trip does not bring it back
    at.text_input(key="hf.name").set_value("tiny-llama").run()
    at.text_area(key="hf.paste").set_value(config).run()
    at.button(key="hf.load").click().run()
    assert_clean(at)
    assert shown(at.subheader[0]) == "tiny-llama"
    assert at.text_input(key="hf.name").value == ""
    at.switch_page("app_pages/layout.py").run()
    at.switch_page("app_pages/model.py").run()
    assert at.text_input(key="hf.name").value == ""
    assert at.text_area(key="hf.paste").value == config  # the config stays, to load again


def test_a_kept_paste_that_is_not_the_current_model_says_so():
    # a paste kept through page trips (862952a) sits beside a summary of another model: pasted
    # and not loaded, or loaded and then another model picked. A line under the box says
    # which model every page shows until Load; none where the box holds the current model's
    def unloaded(at: AppTest) -> list[str]:
        return [unescaped(c.value) for c in at.caption if c.value.startswith("Not loaded")]

    config = json.dumps({"model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 8,
                         "num_key_value_heads": 2, "hidden_size": 512,
                         "torch_dtype": "bfloat16"})
    at = open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("config.json").run()
    assert unloaded(at) == []  # an empty box says nothing
    at.text_area(key="hf.paste").set_value(config).run()
    assert unloaded(at) == [
        "Not loaded: every page shows Qwen3-Next-80B-A3B until you click Load."]
    at.button(key="hf.load").click().run()
    assert_clean(at)
    assert metrics(at)["Cache layers, all kinds"] == "4 layers"
    assert unloaded(at) == []
    at.switch_page("app_pages/layout.py").run()
    at.switch_page("app_pages/model.py").run()
    assert at.text_area(key="hf.paste").value == config and unloaded(at) == []
    # another model picked: the loaded text comes back on the way, said not to be the model
    at.segmented_control(key="model.source").set_value("Preset").run()
    at.selectbox(key="w.model").set_value("Llama-3.1-8B").run()
    at.segmented_control(key="model.source").set_value("config.json").run()
    assert at.text_area(key="hf.paste").value == config
    assert unloaded(at) == ["Not loaded: every page shows Llama-3.1-8B until you click Load."]
    # the Model JSON box is its own: a load there says nothing of the config's box
    exported = json.dumps(load_preset("Qwen3-Next-80B-A3B").to_dict())
    at.segmented_control(key="model.source").set_value("Model JSON").run()
    assert at.text_area(key="model.paste").value == "" and unloaded(at) == []
    at.text_area(key="model.paste").set_value(exported).run()
    at.button(key="model.load").click().run()
    assert_clean(at)
    assert unloaded(at) == []
    at.segmented_control(key="model.source").set_value("config.json").run()
    assert unloaded(at) == [
        "Not loaded: every page shows Qwen3-Next-80B-A3B until you click Load."]
