"""`model` / `presets` subcommands and the model options `plan` takes instead of raw bytes."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"

from flatkv.cli import main  # noqa: E402
from flatkv.model_cli import add_model_arguments, model_from_args, register  # noqa: E402
from flatkv.presets import list_presets  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def run(argv, capsys):
    """``python -m flatkv argv``'s exit code and stdout, asserted a success (0, nothing on
    stderr): it called the command's function past the CLI, whose 0 could not fail."""
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    return code, out


def test_model_json_qwen3_next_tp2(capsys):
    code, out = run(["model", "--preset", "Qwen3-Next-80B-A3B", "--tp", "2", "--kv-dtype",
                     "bf16", "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["layer_types"] == (["linear_attention"] * 3 + ["full_attention"]) * 12
    assert report["layer_types"].count("full_attention") == 12
    assert report["layer_types"].count("linear_attention") == 36
    assert report["kv_bytes_per_slot"] == 1 * (256 + 256) * 2 == 1024
    assert report["state_const_bytes"] == {"conv": (2 * 8 * 128 + 16 * 128) * 3 * 2,
                                           "ssm": 16 * 128 * 128 * 2}
    assert report["state_const_bytes"] == {"conv": 24576, "ssm": 524288}
    assert report["tp"] == 2 and report["pattern"] == "(3*gdn,full)*12"
    assert report["kv_bytes_per_token_all_layers"] == 12 * 1024
    assert report["state_bytes_per_request"] == 36 * (24576 + 524288)
    assert report["config_mamba_ssm_dtype"] is None  # Qwen3-Next's config names none


def test_model_names_the_configs_mamba_ssm_dtype_sglang_reads(capsys):
    # Qwen3.5's text_config says mamba_ssm_dtype float32: SGLang keeps its ssm state in it
    _, out = run(["model", "--preset", "Qwen3.5-27B", "--json"], capsys)
    report = json.loads(out)
    assert report["config_mamba_ssm_dtype"] == report["spec"]["config_mamba_ssm_dtype"] == (
        "float32")
    _, text = run(["model", "--preset", "Qwen3.5-27B"], capsys)
    assert "\nconfig mamba_ssm_dtype: float32 (SGLang keeps its ssm state in it)\n" in text


def test_model_names_the_configs_mamba_ssm_cache_dtype_vllm_reads(capsys, tmp_path):
    # Nemotron-H's config.json naming mamba_ssm_cache_dtype bfloat16: vLLM's NemotronH hook
    # keeps the ssm state in it (SGLang does not read it); a config naming none says nothing
    from test_hf_config import PRESET_CONFIGS

    config = tmp_path / "config.json"
    config.write_text(json.dumps({**PRESET_CONFIGS["Nemotron-H-8B"],
                                  "mamba_ssm_cache_dtype": "bfloat16"}))
    _, out = run(["model", "--hf-config", str(config), "--json"], capsys)
    report = json.loads(out)
    assert report["config_mamba_ssm_cache_dtype"] == report["spec"][
        "config_mamba_ssm_cache_dtype"] == "bfloat16"
    assert report["config_mamba_ssm_dtype"] is None
    _, text = run(["model", "--hf-config", str(config)], capsys)
    assert ("\nconfig mamba_ssm_cache_dtype: bfloat16 (vLLM keeps its ssm state in it unless "
            "told)\n") in text
    _, out = run(["model", "--preset", "Nemotron-H-8B", "--json"], capsys)
    assert json.loads(out)["config_mamba_ssm_cache_dtype"] is None


def test_model_json_without_state_has_empty_state(capsys):
    _, out = run(["model", "--preset", "llama-3.1-8b", "--kv-dtype", "fp8", "--json"], capsys)
    report = json.loads(out)
    assert report["state_const_bytes"] == {}
    assert report["kv_bytes_per_slot"] == 8 * (128 + 128) * 1


def test_model_report_says_how_deepseek_v32s_fp8_bytes_add_up(capsys):
    # 512 fp8 + 4 float32 scales + 64 bfloat16 rope values, then 128 + 4 B of indexer keys
    _, text = run(["model", "--preset", "DeepSeek-V3.2", "--kv-dtype", "fp8"], capsys)
    assert ("\n     61 x mla (mla: kv_lora_rank=512, qk_rope_head_dim=64, index_head_dim=128): "
            "788 B per token per layer\n    mla: 788 B a token = 512 + 4 x 4 + 64 x 2 = 656 B "
            "of latent (fp8 with a float32 scale per 128, its rope part in bfloat16: vLLM's "
            "fp8_ds_mla, SGLang's alike) + 128 + 1 x 4 = 132 B of the indexer's keys (fp8 with a "
            "float32 scale per 128, whatever the KV dtype)\n") in text
    assert 512 + 4 * 4 + 64 * 2 + 128 + 4 == 788
    _, plain = run(["model", "--preset", "DeepSeek-V3", "--kv-dtype", "fp8"], capsys)
    assert "B of latent" not in plain
    # its full layers keep MLA's latent: their group named so, as Layout names it
    assert "cache layers: 61 from 61 model layers (61 full attention (MLA))\n" in plain


def test_model_report_of_chunked_attention(capsys):
    _, text = run(["model", "--preset", "Llama-4-Scout-17B-16E"], capsys)
    # each group by its kind, as Layout names it (it read "36 chunked_attention, 12
    # full_attention"); the JSON report keys the planner's ids
    assert "cache layers: 48 from 48 model layers (36 chunked attention, 12 full attention)" in text
    # unset fields (no window, no chunk) are no part of a kind's geometry
    assert ("\n     36 x chunked (attention: kv_heads=8, head_dim_k=128, head_dim_v=128, "
            "attention_chunk_size=8192): 4,096 B per token per layer\n"
            "     12 x full (attention: kv_heads=8, head_dim_k=128, head_dim_v=128): 4,096 B per "
            "token per layer\n") in text
    assert "\nattention_chunk_size: 8,192\n" in text and "sliding_window" not in text
    assert "all layers: 196,608 B KV per token" in text  # 48 x 4,096
    # not what every token of a long request costs: the chunked layers' share stops growing
    assert ("\n  Of the 192.00 KiB (196,608 B) a token adds, the 36 chunked layers' 144.00 KiB "
            "(147,456 B) is needed for the tokens of a request's current 8,192-token chunk "
            "only") in text
    _, out = run(["model", "--preset", "Llama-4-Scout-17B-16E", "--json"], capsys)
    report = json.loads(out)
    assert (report["attention_chunk_size"], report["sliding_window"]) == (8192, None)
    assert report["counts"] == {"chunked_attention": 36, "full_attention": 12}


def test_model_text_and_export(capsys, tmp_path):
    _, text = run(["model", "--preset", "nemotron-h-8b", "--ssm-dtype", "fp32"], capsys)
    # 24 Mamba2 layers in the state group, 4 attention layers (52 - 24 MLP layers)
    assert "cache layers: 28 from 52 model layers (24 state, 4 full attention)\n" in text
    assert "\nattention heads: 32 (query heads; a tp must divide them)\n" in text
    # the config's chunk_size 128, which vLLM's P aligns to in mamba cache mode all
    assert "\nmamba chunk: 128 tokens (vLLM aligns P to it in mamba cache mode all)\n" in text
    _, jamba = run(["model", "--preset", "jamba-1.5-mini"], capsys)  # Mamba1: no chunk
    assert "\nmamba chunk: none in the config (vLLM takes 2,048 in mamba cache mode all)\n" in (
        jamba)
    # a model of state layers alone (Mamba-Codestral-7B's config, its chunk_size 256): vLLM
    # 0.31, the last with mode all, snapshots it every block size tokens, its chunk unused
    codestral = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2",
                 "hidden_size": 4096, "num_hidden_layers": 64, "num_heads": 128, "head_dim": 64,
                 "expand": 2, "state_size": 128, "n_groups": 8, "conv_kernel": 4,
                 "chunk_size": 256, "vocab_size": 32768, "torch_dtype": "bfloat16"}
    _, mamba2 = run(["model", "--hf-config", json.dumps(codestral)], capsys)
    assert ("\nmamba chunk: unused (vLLM 0.31 snapshots the state of a model without attention "
            "layers every block size tokens in mamba cache mode all)\n" in mamba2)
    _, qwen = run(["model", "--preset", "qwen3-next-80b-a3b"], capsys)
    assert ("\nmamba chunk: unused (vLLM runs Qwen3NextForCausalLM in mamba cache mode align "
            "when asked for all)\n" in qwen)
    _, llama = run(["model", "--preset", "llama-3.1-8b"], capsys)
    assert "mamba chunk" not in llama  # no state
    # float32 ssm: 128 heads x 64 x 128 x 4 B = 4,194,304; conv (8,192 + 2 x 8 x 128) x 3 x 2 B
    # = 61,440 (SPEC §2); 4,255,744 B a layer, 24 of them 102,137,856 B a request; KV 8 x
    # (128 + 128) x 2 B = 4,096 B a token a layer, 16,384 over the 4 attention layers
    assert text.split("\n")[9:14] == [
        "     24 x mamba2 (mamba2: n_heads=128, head_dim=64, d_state=128, n_groups=8, "
        "conv_kernel=4): state conv 61,440 + ssm 4,194,304 = 4,255,744 B per layer",
        "      4 x full (attention: kv_heads=8, head_dim_k=128, head_dim_v=128): 4,096 B per "
        "token per layer",
        "kv_bytes_per_slot: 4,096",
        "state_const_bytes: conv 61,440, ssm 4,194,304",
        "all layers: 16,384 B KV per token, 102,137,856 B state per request"]
    _, exported = run(["model", "--preset", "nemotron-h-8b", "--tp", "2", "--export"], capsys)
    path = tmp_path / "nemotron-tp2.json"
    path.write_text(exported)
    _, again = run(["model", "--model-file", str(path), "--json"], capsys)
    report = json.loads(again)
    assert report["tp"] == 2
    assert report["attention_heads"] == report["spec"]["attention_heads"] == 32  # exported too
    assert report["mamba_chunk_size"] == report["spec"]["mamba_chunk_size"] == 128
    # a bad chunk in a model file is the model's field, not the plan's --mamba-chunk-size
    path.write_text(exported.replace('"mamba_chunk_size": 128', '"mamba_chunk_size": 0'))
    capsys.readouterr()
    assert main(["model", "--model-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: the model's mamba_chunk_size 0 must be positive: give 1 or "
        "more; check the model's value\n")
    assert report["state_const_bytes"] == {"conv": (128 * 64 + 2 * 8 * 128) // 2 * 3 * 2,
                                           "ssm": 64 * 64 * 128 * 2}


def test_a_long_value_in_a_model_file_is_one_short_line(capsys, tmp_path):
    # a kv_dtype of a 1,000-character string was quoted whole: a 1,251-character line; 312 now,
    # the list's item by its first 40 characters and its length (units.quoted_value), the list
    # closed, the dtypes as before
    data = json.loads((ROOT / "assets" / "presets" / "llama-3.1-8b.json").read_text())
    data["kv_dtype"] = ["x" * 1000]
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data))
    assert main(["model", "--model-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: kv_dtype: unknown dtype ['" + "x" * 40 + "'... (1,000 "
        "characters)]: use one of float32, bfloat16, float16, float8_e4m3fn, float8_e5m2, int8 "
        "(aliases: bf16, e4m3, e5m2, f16, f32, float, float8, float8_e4m3, fp16, fp32, fp8, "
        "fp8_e4m3, fp8_e4m3fn, fp8_e5m2, half, i8)\n")


def test_model_from_hf_config_path_and_dir(capsys, tmp_path):
    cfg = {"model_type": "gpt_oss", "num_hidden_layers": 4, "num_key_value_heads": 8,
           "head_dim": 64, "sliding_window": 128, "architectures": ["GptOssForCausalLM"]}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    for arg in (str(tmp_path / "config.json"), str(tmp_path)):
        _, out = run(["model", "--hf-config", arg, "--json"], capsys)
        report = json.loads(out)
        assert report["layer_types"] == ["sliding_attention", "full_attention"] * 2
        assert report["sliding_window"] == 128
        assert report["kv_bytes_per_slot"] == 8 * 128 * 2
        assert report["architectures"] == report["spec"]["architectures"] == [
            "GptOssForCausalLM"]
    _, text = run(["model", "--hf-config", str(tmp_path)], capsys)
    assert "\narchitectures: GptOssForCausalLM\n" in text


def test_presets_lists_names(capsys):
    _, out = run(["presets"], capsys)
    assert out.split("\n")[:-1] == list_presets()
    _, out = run(["presets", "--json"], capsys)
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["Falcon-H1-7B"]["cache_layers"] == 88


def test_plan_style_options():
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    assert model_from_args(parser.parse_args([])) is None
    spec = model_from_args(parser.parse_args(["--preset", "gpt-oss-20b", "--tp", "4"]))
    assert spec.tp == 4 and spec.kv_bytes_per_slot() == 2 * 128 * 2
    with pytest.raises(SystemExit):  # argparse: one source only
        parser.parse_args(["--preset", "a", "--hf-config", "b"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["model", "--preset", "nope"], "unknown preset 'nope'"),
        (["model", "--preset", "llama-3.1-8b", "--tp", "3"], "TP 3 does not divide them"),
        (["model", "--preset", "llama-3.1-8b", "--tp", "0"],
         "--tp 0 must be positive: give 1 or more; the number of GPUs"),
        (["model", "--preset", "llama-3.1-8b", "--kv-dtype", "fp4"], "unknown dtype 'fp4'"),
        (["model"], "model needs a source"),
        (["model", "--hf-config", "{oops"], "not valid JSON"),
        (["model", "--hf-config", '{"model_type": "llama", "num_hidden_layers": 10000000}'],
         "too large to be real"),
        (["model", "--hf-config", '{"model_type": "qwen3", "head_dim": 0}'], "head_dim = 0"),
        (["model", "--hf-config", '{"model_type": "t5"}'], "not supported"),
        (["model", "--hf-config", "no/such"], "could not fetch config.json of no/such: offline"),
        # an owner/name whose name is past what a file system takes (255 bytes): still an id,
        # not a traceback from asking whether such a path exists
        (["model", "--hf-config", "x" * 300 + "/y"], f"could not fetch config.json of "
         f"{'x' * 300}/y: offline (HF_HUB_OFFLINE is set) and not in the local cache"),
        (["model", "--hf-config", "/no/such/config.json"], "config.json not found"),
        (["model", "--hf-config", ""], "--hf-config is empty: give a config.json path"),
        (["model", "--hf-config", "[1]"], "pasted config.json must hold a JSON object, not an "
         "array"),
        # a dtype of a tensor the model keeps none of would change no figure
        (["model", "--preset", "llama-3.1-8b", "--ssm-dtype", "fp8"],
         "--ssm-dtype fp8: Llama-3.1-8B keeps no ssm state, so it changes no figure; drop "
         "--ssm-dtype"),
        (["model", "--preset", "minimax-m1", "--conv-dtype", "fp8"],
         "--conv-dtype fp8: MiniMax-M1 keeps no conv state"),
        (["model", "--hf-config", '{"model_type": "mamba", "num_hidden_layers": 2}',
          "--kv-dtype", "fp8"], "keeps no attention layers, so it changes no figure"),
    ],
)
def test_errors_are_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m flatkv: error: ")
    assert message in lines[0]


def test_a_tp_that_does_not_split_the_model_is_said_in_the_words_of_its_source(tmp_path,
                                                                               capsys):
    # Qwen3-Next's 16 GDN key heads over TP 3: TP 1, 2, 4, 8 and 16 divide them (its 2 KV heads
    # take those, its 16 query heads too; 32 leaves half a key head). A preset's user saw no
    # file: plain words; a config.json's, the key it wrote; a model file's, its own fields
    from flatkv.presets import load_preset

    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "model_type": "qwen3_next", "num_hidden_layers": 4, "num_attention_heads": 16,
        "num_key_value_heads": 2, "linear_num_key_heads": 16, "linear_num_value_heads": 32}))
    model_file = tmp_path / "model.json"
    model_file.write_text(json.dumps(load_preset("Qwen3-Next-80B-A3B").to_dict()))
    choose = "choose TP 1, 2, 4, 8 or 16, the TPs up to 64 that split the model"
    for flags, said in (
            (["--preset", "qwen3-next-80b-a3b"],
             "Qwen3-Next-80B-A3B: its linear-attention (Gated DeltaNet) layers have 16 key "
             f"heads, and TP 3 does not divide them: {choose}"),
            (["--hf-config", str(config)],
             "config.json linear_num_key_heads = 16, the linear-attention (Gated DeltaNet) "
             f"layers' key heads, is not divisible by TP 3: {choose}"),
            (["--model-file", str(model_file)],
             "gdn.k_heads = 16 is not divisible by tp = 3: choose a tp that divides it (tp up "
             "to 64 that split the model: 1, 2, 4, 8, 16)")):
        assert main(["model", *flags, "--tp", "3"]) == 2
        assert capsys.readouterr().err == f"python -m flatkv: error: {said}\n"


def test_a_json_file_of_no_object_names_what_it_holds_in_jsons_words(tmp_path, capsys):
    # JSON's names for what the file holds (null, not Python's NoneType), and the fix; an
    # empty (or blank) file said empty (it read "is not valid JSON (line 1, column 1:
    # Expecting value)")
    fix = "give the model's fields between { and }"
    empty = "is empty: give the model's JSON, its fields between { and }"
    for text, message in (("null", f"must hold a JSON object, not null: {fix}"),
                          ("[1, 2]", f"must hold a JSON object, not an array: {fix}"),
                          ("42", f"must hold a JSON object, not a number: {fix}"),
                          ('"Qwen/Qwen3-Next-80B-A3B"',
                           f"must hold a JSON object, not a string: {fix}"),
                          ("true", f"must hold a JSON object, not true: {fix}"),
                          ("", empty), (" \n", empty)):
        path = tmp_path / "config.json"
        path.write_text(text)
        for flag in ("--hf-config", "--model-file"):
            assert main(["model", flag, str(path)]) == 2
            assert capsys.readouterr().err == f"python -m flatkv: error: '{path}' {message}\n"


def test_a_config_json_saved_with_a_byte_order_mark_reads(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"model_type": "llama", "num_hidden_layers": 2}')
    assert main(["model", "--hf-config", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cache_layers"] == 2


def test_malformed_model_file(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text('{"name": "x", "kinds": {}, "pattern": "a"}')
    assert main(["model", "--model-file", str(path)]) == 2
    assert "kinds must be a non-empty object" in capsys.readouterr().err
    # the report `model --json` prints holds a model file under "spec": said, not its fields
    _, report = run(["model", "--preset", "Llama-3.1-8B", "--json"], capsys)
    path.write_text(report)
    assert main(["model", "--model-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: this is a model report (`model --json`), not a model file: "
        "its \"spec\" entry is one, or write one with `model --export`\n")
    path.write_text(json.dumps(json.loads(report)["spec"]))
    assert main(["model", "--model-file", str(path)]) == 0


def test_module_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "flatkv", "model", "--preset", "qwen3-next-80b-a3b",
         "--tp", "2", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["kv_bytes_per_slot"], report["state_const_bytes"]) == (
        1024, {"conv": 24576, "ssm": 524288})
    proc = subprocess.run(
        [sys.executable, "-m", "flatkv", "model", "--preset", "x"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_registers_on_the_main_cli_parser_class():
    """The subcommands plug into flatkv.cli's parser (one-line errors, `run` convention)."""
    from flatkv.cli import _Parser

    parser = _Parser(prog="python -m flatkv")
    register(parser.add_subparsers(dest="command", required=True, parser_class=_Parser))
    args = parser.parse_args(["model", "--preset", "DeepSeek-V3", "--tp", "8", "--json"])
    report = json.loads(args.run(args))
    assert report["kv_bytes_per_slot"] == (512 + 64) * 2  # MLA is not split by tp
    with pytest.raises(ValueError, match="^--tp needs a value: give one after it"):
        parser.parse_args(["model", "--tp"])


@pytest.mark.parametrize(("preset", "dtypes"), [
    ("Llama-3.1-8B", "kv bfloat16"),  # no state: no state dtype to name
    ("Qwen3.5-27B", "kv bfloat16, conv bfloat16, ssm float32"),  # its config's mamba_ssm_dtype
    ("MiniMax-M1", "kv bfloat16, ssm bfloat16"),  # lightning attention keeps no conv state
])
def test_model_report_names_the_dtypes_of_the_tensors_the_model_keeps(preset, dtypes, capsys):
    _, out = run(["model", "--preset", preset], capsys)
    assert out.splitlines()[0] == f"{preset}  (tp 1; {dtypes}; bytes per TP rank)"
    # past TP 1 the kinds' heads stay the whole model's beside bytes per rank: Llama's 8 KV
    # heads at TP 8 keep 1 x 256 x 2 = 512 B a token a layer on a rank
    if preset == "Llama-3.1-8B":
        _, out = run(["model", "--preset", preset, "--tp", "8"], capsys)
        lines = out.splitlines()
        assert lines[0] == (f"{preset}  (tp 8; {dtypes}; bytes per TP rank, heads and dims of "
                            "the whole model)")
        assert any(line.strip().startswith("32 x full (attention: kv_heads=8,")
                   and line.endswith(": 512 B per token per layer") for line in lines)


def test_model_text_past_tp_1_gives_a_ranks_state_shapes_and_replicated_heads(capsys):
    # Falcon-H1-7B at TP 4 (SPEC §2): its 2 KV heads are fewer than the ranks, so each keeps
    # 1 x (128 + 128) x 2 B = 512 B a token; Mamba2's 1 group is raised to 4, so a rank's conv
    # has 3,072 / 4 + 2 x 4 x 256 / 4 = 1,280 channels x (4 - 1), its ssm 24 / 4 = 6 heads
    _, out = run(["model", "--preset", "Falcon-H1-7B", "--tp", "4"], capsys)
    lines = out.splitlines()
    assert any(line.endswith(
        "conv_kernel=4): state conv 7,680 + ssm 393,216 = 400,896 B per layer (a rank's "
        "shapes: conv 1,280 x 3, ssm 6 x 128 x 256)") for line in lines)
    assert (1280 * 3 * 2, 6 * 128 * 256 * 2) == (7680, 393216)
    assert "    Fewer KV heads than TP ranks (2 KV heads over TP 4: each rank holds 1, each head " \
        "sits on 2 ranks): kv_heads per rank = max(1, kv_heads // tp), each head replicated, " \
        "so such a kind's KV bytes per token above are one whole head's." in lines
    # at TP 1 the geometry is a rank's: no shapes repeated, no note
    _, out = run(["model", "--preset", "Falcon-H1-7B"], capsys)
    assert "a rank's shapes" not in out and "Fewer KV heads" not in out


def test_an_export_from_a_config_json_takes_the_name_and_source_given(capsys, tmp_path):
    # without them a config.json's model is named by its model_type (it names no
    # architectures) and its source holds the
    # path it was read at, which a preset must not carry
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen3", "num_hidden_layers": 4,
                                "num_attention_heads": 8, "num_key_value_heads": 2,
                                "head_dim": 64, "torch_dtype": "bfloat16"}))
    _, plain = run(["model", "--hf-config", str(path), "--export"], capsys)
    assert json.loads(plain)["name"] == "qwen3"
    assert json.loads(plain)["source"].startswith(f"config.json at {path} (model_type qwen3)")
    _, named = run(["model", "--hf-config", str(path), "--export", "--name", " Toy-4L ",
                    "--source", "a made-up Qwen3 of 4 layers"], capsys)
    spec = json.loads(named)
    assert (spec["name"], spec["source"]) == ("Toy-4L", "a made-up Qwen3 of 4 layers")
    assert {k: v for k, v in spec.items() if k not in ("name", "source")} == {
        k: v for k, v in json.loads(plain).items() if k not in ("name", "source")}
    _, text = run(["model", "--hf-config", str(path), "--name", "Toy-4L"], capsys)
    assert text.startswith("Toy-4L")
    capsys.readouterr()
    assert main(["model", "--preset", "llama-3.1-8b", "--source", "  "]) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: --source is empty: give the model's source, or leave the flag "
        "out to keep the one it has\n")


def test_model_file_of_raw_bytes_plans_as_the_same_bytes_typed(tmp_path, capsys):
    """The Model page's export of a model typed by hand (flatkv-profile/1) reads back under
    --model-file: the same figures as the bytes given as options, one rank's, so --tp and the
    dtypes are refused, and `model` (which shows layer kinds) points to plan / compare."""
    from flatkv.app_model import RawModel
    from flatkv.profile import profile_to_dict

    raw = RawModel("(3*linear,full)*12", 2048, (("conv", 49152), ("ssm", 2097152)))
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(profile_to_dict(raw.profile())))
    typed = ["--layers", "(3*linear,full)*12", "--kv-bytes-per-slot", "2048",
             "--state", "conv=49152,ssm=2097152"]
    budget = ["--budget", "40GiB", "--context", "131072", "--json"]
    capsys.readouterr()
    assert main(["compare", "--model-file", str(path), *budget]) == 0
    by_file = json.loads(capsys.readouterr().out)
    assert main(["compare", *typed, *budget]) == 0
    assert by_file == json.loads(capsys.readouterr().out)
    # the flat layout: a linear layer's 2,146,304 B of state fit a page row of 2,048 B a
    # token at P >= 1,048, aligned up to the block size 16: P 1,056
    assert by_file[0]["profile"] == "custom" and by_file[0]["block_size"] == 1_056
    for extra in (["--tp", "2"], ["--ssm-dtype", "fp32"]):
        capsys.readouterr()
        assert main(["compare", "--model-file", str(path), *budget, *extra]) == 2
        assert capsys.readouterr().err == (
            f"python -m flatkv: error: {extra[0]} with --model-file {path}: it holds raw bytes "
            "per TP rank (flatkv-profile/1), with no layer kinds to split or re-type; drop the "
            "option, or export the model as a specification\n")
    capsys.readouterr()
    assert main(["model", "--model-file", str(path)]) == 2
    assert capsys.readouterr().err.startswith(
        f"python -m flatkv: error: --model-file {path} holds raw bytes (flatkv-profile/1), "
        "with no layer kinds for `model` to show: plan or compare it instead")
    # raw-bytes options beside it would be ignored: refused as beside any model
    assert main(["compare", "--model-file", str(path), "--kv-bytes-per-slot", "4096",
                 *budget]) == 2
    assert "give either a model" in capsys.readouterr().err


def _model_file_error(tmp_path, capsys, data, command="plan"):
    """The one line `plan --model-file` says of a model file holding ``data`` (exit 2)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main([command, "--model-file", str(path), "--budget", "40GiB"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    return err.removeprefix("python -m flatkv: error: ").rstrip("\n")


# what a name must be, said after where it was read
_NAME_FIX = "give the model's name in printable characters, e.g. 'custom'"


@pytest.mark.parametrize("name", [{"a": 1}, 0, [], True, None, ""])
def test_a_raw_bytes_model_files_name_is_text(name, tmp_path, capsys):
    # a flatkv-profile/1 file took a name of any JSON type (a title "{'a': 1}"), as a
    # flatkv-model/1 file does not
    from flatkv.app_model import RawModel
    from flatkv.profile import profile_to_dict

    data = profile_to_dict(RawModel("(3*linear,full)*12", 2048,
                                    (("conv", 49152), ("ssm", 2097152))).profile())
    data["name"] = name
    why = "which is blank" if name == "" else "not text"
    assert _model_file_error(tmp_path, capsys, data) == (
        f"model JSON name is {name!r}, {why}: {_NAME_FIX}")


def test_a_model_files_fields_are_named_as_the_file_names_them(tmp_path, capsys):
    # a field of the file read as the option of the same name: "--tp must be a whole number,
    # got '2'" (the user typed no --tp), a raw file's kernel_block_size 0 as vLLM's
    # --kernel-block-size and its state tensor as "--state conv"
    data = json.loads((ROOT / "assets" / "presets" / "llama-3.1-8b.json").read_text())
    data["tp"] = "2"
    assert _model_file_error(tmp_path, capsys, data) == (
        "tp '2' (str) must be a whole number: give 1 or more; the number of GPUs the model is "
        "split over")
    raw = {"format": "flatkv-profile/1", "layers": "(3*linear,full)*12",
           "kv_bytes_per_slot": 4096, "state_const_bytes": {"conv": 0, "ssm": 2097152}}
    assert _model_file_error(tmp_path, capsys, raw) == (
        "state_const_bytes['conv'] 0 must be positive: give 1 or more")
    raw["state_const_bytes"]["conv"] = 49152
    raw["kernel_block_size"] = 0
    assert _model_file_error(tmp_path, capsys, raw) == (
        "kernel_block_size 0 must be positive: give 1 or more")
    # --tp typed is still named as typed
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**data, "tp": 1}))
    assert main(["plan", "--model-file", str(path), "--budget", "40GiB", "--tp", "0"]) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: --tp 0 must be positive: give 1 or more; the number of GPUs "
        "the model is split over\n")


def test_a_model_file_naming_a_key_twice_is_refused(tmp_path, capsys):
    # JSON readers keep the last of a key named twice: kv_heads 8, then 2 further down,
    # planned 2 without a word (a model file is typed by hand, a config.json is not: it is
    # read as transformers reads it)
    path = tmp_path / "m.json"
    path.write_text('{"name": "m", "kinds": {"full": {"kind": "attention", "kv_heads": 8, '
                    '"head_dim_k": 128, "head_dim_v": 128, "kv_heads": 2}}, '
                    '"pattern": "full*32"}')
    assert main(["model", "--model-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"python -m flatkv: error: '{path}' names 'kv_heads' twice in one object: keep one "
        "(JSON readers keep the last, silently)\n")


def test_a_dtype_for_a_tensor_the_model_lacks_is_named_a_dtype_first(capsys):
    # "--conv-dtype : gpt-oss-20b keeps no conv state" for '' (the value unseen), and a
    # 5,000-character value echoed whole (a 5 KB line); a name that is no dtype is said so,
    # quoted and by its start, as it is for a model that keeps the tensor
    names = ("use one of float32, bfloat16, float16, float8_e4m3fn, float8_e5m2, int8 (aliases: "
             "bf16, e4m3, e5m2, f16, f32, float, float8, float8_e4m3, fp16, fp32, fp8, fp8_e4m3, "
             "fp8_e4m3fn, fp8_e5m2, half, i8)")
    for value, shown in (("", "''"), ("x" * 5000, repr("x" * 80) + "... (5,000 characters)")):
        assert main(["model", "--preset", "gpt-oss-20b", "--conv-dtype", value]) == 2
        assert capsys.readouterr().err == (
            f"python -m flatkv: error: --conv-dtype: unknown dtype {shown}: {names}\n")


def test_a_huge_mtp_layer_count_is_refused_before_transformers_lists_it(tmp_path, capsys):
    # Step-3.5's config class lists num_hidden_layers + num_nextn_predict_layers layer types:
    # at 2**63 it grew past 2.6 GB in 20 s without end; refused as a layer count is
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "step3p5", "num_hidden_layers": 8,
                                "num_nextn_predict_layers": 2**63}))
    assert main(["model", "--hf-config", str(path)]) == 2
    assert capsys.readouterr().err == (
        "python -m flatkv: error: config.json num_nextn_predict_layers = "
        "9223372036854775808 is too large to be real: give 2,048 or less in the field\n")


def test_an_empty_architecture_name_is_refused(tmp_path, capsys):
    # architectures [""] loaded (the empty name, falsy, slipped past the class-name check) and
    # printed "architectures: " with nothing after it; refused as "A B" is
    data = json.loads((ROOT / "assets" / "presets" / "llama-3.1-8b.json").read_text())
    data["architectures"] = [""]
    assert _model_file_error(tmp_path, capsys, data) == (
        "architectures is ('',): '' is not a class name: give a list of class names, as "
        'config.json has them, e.g. ["GptOssForCausalLM"], or none')


def test_a_raw_bytes_model_files_fields_of_another_type_are_refused(tmp_path, capsys):
    # state_const_bytes false read as no state, kv_tensor_bytes {} as no K / V split: both
    # loaded a model of bytes the file does not say
    data = {"format": "flatkv-profile/1", "name": "gpt-oss-20b",
            "layers": "(sliding_attention,full_attention)*12", "kv_bytes_per_slot": 2048,
            "state_const_bytes": False, "sliding_window": 128, "kv_dtype": "bfloat16",
            "kv_tensor_bytes": {}}
    assert _model_file_error(tmp_path, capsys, data) == (
        'model JSON state_const_bytes is False: give an object of tensor name: bytes, e.g. '
        '{"conv": 49152}, or {} for a model without state layers')
    data["state_const_bytes"] = {}
    assert _model_file_error(tmp_path, capsys, data) == (
        "kv_tensor_bytes is {}: give (K, V) or (latent,) bytes")
    data["kv_tensor_bytes"] = [1024, 1024]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    assert main(["plan", "--model-file", str(path), "--budget", "40GiB"]) == 0


def test_a_models_name_that_would_act_on_the_terminal_is_refused(tmp_path, capsys):
    # a config's _name_or_path of escape codes and a line break printed raw as every table's
    # title ("num_blocks 999999" on a line of its own); refused, its characters escaped, where
    # the model is read: a config, either model file, or --name
    config = {"model_type": "qwen3_next", "num_hidden_layers": 48,
              "full_attention_interval": 4, "hidden_size": 2048, "num_attention_heads": 16,
              "num_key_value_heads": 2, "head_dim": 256, "linear_num_key_heads": 16,
              "linear_num_value_heads": 32, "linear_key_head_dim": 128,
              "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
              "torch_dtype": "bfloat16", "architectures": ["Qwen3NextForCausalLM"],
              "max_position_embeddings": 262144,
              "_name_or_path": "evil\u001b[2J\u001b[31mRED\nnum_blocks 999999\r"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    capsys.readouterr()
    assert main(["compare", "--hf-config", str(path), "--budget", "40GiB"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        "python -m flatkv: error: config.json's _name_or_path is "
        "'evil\\x1b[2J\\x1b[31mRED\\nnum_blocks 999999\\r': it holds the control character "
        "'\\x1b', which a terminal would act on rather than show: give it the model's name or "
        "path in printable characters, or drop it (the model is then named by its "
        "architectures, else model_type)\n")
    # a real model's name in any script reads as it is
    config["_name_or_path"] = "Qwen/Qwen3-Next-80B-A3B-Ínstruct-模型"
    path.write_text(json.dumps(config))
    assert main(["compare", "--hf-config", str(path), "--budget", "40GiB"]) == 0
    assert capsys.readouterr().out.startswith("Qwen3-Next-80B-A3B-Ínstruct-模型: budget")
    # a model file of either format, and --name, the same
    _, spec = run(["model", "--preset", "Qwen3-Next-80B-A3B", "--export"], capsys)
    data = json.loads(spec)
    data["name"] = "a\u202eb"  # a bidi override reorders what follows it
    assert _model_file_error(tmp_path, capsys, data) == (
        "model specification name is 'a\\u202eb': it holds the control character '\\u202e', "
        f"which a terminal would act on rather than show: {_NAME_FIX}")
    data["name"] = "x"
    data["notes"] = "fine\nline \x1b[2J"
    assert _model_file_error(tmp_path, capsys, data).startswith(
        "notes is 'fine\\nline \\x1b[2J': it holds the control character '\\x1b'")
    capsys.readouterr()
    assert main(["model", "--preset", "Qwen3-Next-80B-A3B", "--name", "a\rb"]) == 2
    assert capsys.readouterr().err.startswith(
        "python -m flatkv: error: --name is 'a\\rb': it holds the control character '\\r'")


def test_model_says_a_model_files_class_is_a_presets_of_other_layers(tmp_path, capsys):
    # the Model page's export of a hybrid made from Qwen3-Next (its class kept): the CLI says
    # what the page says (test_app_model.WALK_NOTE); the class cleared, or a model naming its
    # source (a config.json as loaded), or the preset's layers with an MTP layer: nothing
    from dataclasses import replace

    from flatkv.app_model import SpecDraft
    from flatkv.models import with_mtp_layer
    from flatkv.presets import load_preset, preset_class_note

    qwen = load_preset("Qwen3-Next-80B-A3B")
    draft = replace(SpecDraft.from_spec(qwen), name="walk-hybrid", pattern="(2*gdn,full)*10")
    path = tmp_path / "walk.json"
    path.write_text(json.dumps(draft.to_dict()))
    code, out = run(["model", "--model-file", str(path)], capsys)
    note = ("note: architecture Qwen3NextForCausalLM is the class of the preset "
            "Qwen3-Next-80B-A3B, whose layers these are not ((2*gdn,full)*10, 30 cache layers; "
            "Qwen3-Next-80B-A3B's (3*gdn,full)*12, 48): vLLM and SGLang choose their pools, "
            "defaults and refusals by the class, so every engine's figures here are a "
            "Qwen3NextForCausalLM's; keep it for a model of that class, else set the model "
            "file's \"architectures\" to the model's own class, or [] for none\n")
    assert "\narchitectures: Qwen3NextForCausalLM\n" + note in out
    path.write_text(json.dumps(replace(draft, architectures=()).to_dict()))
    code, out = run(["model", "--model-file", str(path)], capsys)
    assert "architectures" not in out and "note:" not in out
    spec = draft.to_spec()  # the draft names the preset it was made from
    assert spec.edited_from == "Qwen3-Next-80B-A3B"
    assert preset_class_note(spec) and not preset_class_note(replace(spec, edited_from=""))
    assert not preset_class_note(with_mtp_layer(qwen))  # the preset's layers and its MTP's


def test_a_config_jsons_model_keeps_its_class_in_a_model_file_without_a_note(tmp_path,
                                                                              capsys):
    # Llama-3.1-70B's config.json: LlamaForCausalLM is Llama-3.1-8B's class too, on 80 layers
    # of its own, by right. Its export, its source taken out (or edited in the Model page,
    # which writes none), said nothing wrong yet got the note; a preset's export whose pattern
    # is edited in the file (its source, the preset's, kept) gets it
    config = tmp_path / "l70.json"
    config.write_text(json.dumps({
        "model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192,
        "num_attention_heads": 64, "num_key_value_heads": 8,
        "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
        "architectures": ["LlamaForCausalLM"]}))
    _, exported = run(["model", "--hf-config", str(config), "--export"], capsys)
    data = json.loads(exported)
    del data["source"]
    path = tmp_path / "l70-model.json"
    path.write_text(json.dumps(data))
    _, out = run(["model", "--model-file", str(path)], capsys)
    assert "\narchitectures: LlamaForCausalLM\n" in out and "note:" not in out
    _, exported = run(["model", "--preset", "Llama-3.1-8B", "--export"], capsys)
    data = {**json.loads(exported), "pattern": "80*full"}
    path.write_text(json.dumps(data))
    _, out = run(["model", "--model-file", str(path)], capsys)
    assert ("\nnote: architecture LlamaForCausalLM is the class of the preset Llama-3.1-8B, "
            "whose layers these are not (80*full, 80 cache layers; Llama-3.1-8B's 32*full, 32)"
            in out)
