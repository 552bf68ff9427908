"""Command-line pieces of the model layer: ``model`` and ``presets`` subcommands, and the model
options that other subcommands (``plan``) accept instead of raw bytes.

``flatkv.given_cli`` puts ``add_model_arguments(parser)`` on any parser and reads them back with
``model_from_args(args)``; ``flatkv.cli`` wires in ``register(subparsers)`` for
the two subcommands (each sets ``run``, like ``flatkv.cli``'s commands: ``args.run(args)``
returns the text to print). Errors are ValueErrors with one-line messages; ``flatkv.cli.main``
prints them as one line on stderr and exits 2.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from flatkv.app_model import windowed_kv_note
from flatkv.dtypes import UNSTORED_KV_HELP, canonical_dtype
from flatkv.models import MAX_TP, ModelSpec, with_mtp_layer
from flatkv.presets import (
    list_presets,
    load_model_file,
    load_preset,
    preset_class_note,
    preset_name,
)
from flatkv.profile import PROFILE_FORMAT, CacheProfile, group_name
from flatkv.strategies.vllm import mamba_chunk_text
from flatkv.strategy_cli import whole_argument_in
from flatkv.units import quoted


class FileFieldError(ValueError):
    """An error about a field of a model file or config.json, in the file's own words:
    ``flatkv.cli`` prints it as it is, never as the option of the same name (a file's ``tp``
    is not --tp, its ``kernel_block_size`` not vLLM's --kernel-block-size), which the user
    did not type."""


def _read_model(read: Callable[[str], ModelSpec | CacheProfile], path: str
                ) -> ModelSpec | CacheProfile:
    """``read(path)``, its errors ``FileFieldError``s."""
    try:
        return read(path)
    except FileFieldError:
        raise
    except ValueError as exc:
        raise FileFieldError(str(exc)) from None


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the model source options (--preset, --hf-config, --model-file) and --tp and dtypes."""
    group = parser.add_argument_group("model (instead of raw bytes)")
    source = group.add_mutually_exclusive_group()
    source.add_argument("--preset", metavar="NAME",
                        help="a bundled model preset (see `presets`), any case")
    source.add_argument("--hf-config", metavar="PATH",
                        help="a Hugging Face config.json file, or a model id such as "
                             "Qwen/Qwen3-Next-80B-A3B-Instruct (fetched when online)")
    source.add_argument("--model-file", metavar="PATH",
                        help="a model exported as JSON: a specification (preset format, "
                        "flatkv-model/1) or the Model page's raw bytes (flatkv-profile/1)")
    group.add_argument("--tp", type=whole_argument_in(1, MAX_TP, example=2), metavar="N",
                       help="tensor-parallel size; bytes are per TP rank (default: the model's)")
    group.add_argument("--kv-dtype", metavar="D",
                       help=f"KV cache dtype (bf16, fp8, float32, ...; {UNSTORED_KV_HELP})")
    group.add_argument("--conv-dtype", metavar="D", help="conv state dtype")
    group.add_argument("--ssm-dtype", metavar="D", help="ssm state dtype")
    group.add_argument("--mtp-layer", action="store_true",
                       help="add an MTP module's attention layer (Qwen3-Next, Qwen3.5, "
                       "DeepSeek-V3): the model's last full-attention layer once more, whose KV "
                       "vLLM keeps with the model's (plan and compare count it with "
                       "--speculative-tokens)")


def model_from_args(args: argparse.Namespace) -> ModelSpec | CacheProfile | None:
    """The ModelSpec the parsed options describe, or the raw profile a --model-file holds (bytes
    per TP rank, as the Model page exports raw bytes); None when no model source was given."""
    preset = getattr(args, "preset", None)
    hf_config = getattr(args, "hf_config", None)
    model_file = getattr(args, "model_file", None)
    if preset is not None:
        spec = load_preset(preset)
    elif hf_config is not None:
        spec = _read_model(spec_from_hf_argument, hf_config)
    elif model_file is not None:
        _refuse_a_preset_named_as_a_file(model_file)
        spec = _read_model(load_model_file, model_file)
        if isinstance(spec, CacheProfile):
            return _raw_model_file(args, spec)
    else:
        return None
    dtypes = {key: getattr(args, key, None) for key in ("kv_dtype", "conv_dtype", "ssm_dtype")}
    _refuse_unread_dtypes(spec, dtypes)
    spec = spec.with_options(tp=getattr(args, "tp", None), **dtypes)
    return with_mtp_layer(spec) if getattr(args, "mtp_layer", False) else spec


def _refuse_a_preset_named_as_a_file(model_file: str) -> None:
    """A --model-file that is no file but a preset's name: ``--model-file DeepSeek-V3.2``
    read as a path that is not there ("cannot read ... give the path of a JSON file" named
    neither the flag nor the preset)."""
    if (name := preset_name(model_file)) is not None and not Path(model_file).exists():
        raise FileFieldError(f"--model-file {quoted(model_file)} is no file but a preset's "
                             f"name: give --preset {name}")


def _raw_model_file(args: argparse.Namespace, profile: CacheProfile) -> CacheProfile:
    """A raw profile file: one rank's bytes with no layer kinds, so nothing to re-split or
    re-type."""
    given = [flag for flag, key in (("--tp", "tp"), ("--kv-dtype", "kv_dtype"),
                                    ("--conv-dtype", "conv_dtype"), ("--ssm-dtype", "ssm_dtype"),
                                    ("--mtp-layer", "mtp_layer"))
             if getattr(args, key, None) not in (None, False)]
    if given:
        raise ValueError(f"{', '.join(given)} with --model-file {args.model_file}: it holds raw "
                         f"bytes per TP rank ({PROFILE_FORMAT}), with no layer kinds to split or "
                         "re-type; drop the option, or export the model as a specification")
    return profile


def _refuse_unread_dtypes(spec: ModelSpec, dtypes: dict[str, str | None]) -> None:
    """A dtype option for a tensor the model keeps none of would change no figure: refused, so
    that --ssm-dtype fp8 on Llama-3.1-8B is not read as an answer about fp8 state."""
    kept = set(spec.state_dtypes())
    has_attention = any(not layer.is_state for layer in spec.kinds.values())
    for key, value in dtypes.items():
        tensor = key.removesuffix("_dtype")
        if value is None or (has_attention if tensor == "kv" else tensor in kept):
            continue
        try:  # a name that is no dtype said so first (quoted, a long one by its start)
            canonical_dtype(value)
        except ValueError as exc:
            raise ValueError(f"{key}: {exc}") from None
        flag = f"--{tensor}-dtype"
        what = "no attention layers" if tensor == "kv" else f"no {tensor} state"
        raise ValueError(f"{flag} {value}: {spec.name} keeps {what}, so it changes no figure; "
                         f"drop {flag}")


def spec_from_hf_argument(value: str) -> ModelSpec:
    """--hf-config: a config.json path, pasted JSON, or a Hub model id (owner/name)."""
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.hf_hub import is_model_id, spec_from_model_id

    text = value.strip()
    if not text:
        raise ValueError("--hf-config is empty: give a config.json path, its JSON text, or a "
                         "model id such as Qwen/Qwen3-Next-80B-A3B-Instruct")
    if text.startswith(("{", "[")):  # pasted JSON (a list is refused as no config)
        return spec_from_hf_config(text)
    try:
        folder = Path(text).is_dir() and (Path(text) / "config.json").is_file()
    except OSError:  # a name too long for the file system: read_json_file says so
        folder = False
    if folder:
        return spec_from_hf_config(Path(text) / "config.json")
    if is_model_id(text):
        return spec_from_model_id(text)
    return spec_from_hf_config(Path(text))


def model_report(spec: ModelSpec) -> dict[str, Any]:
    """Everything `model --json` prints: the planner's view (layer_types, kv_bytes_per_slot,
    state_const_bytes) plus per-kind rows, totals and the exportable spec."""
    profile = spec.profile()
    return {
        "name": spec.name,
        "source": spec.source,
        "architectures": list(spec.architectures),
        "config_mamba_ssm_dtype": spec.config_mamba_ssm_dtype,  # SGLang's ssm dtype, if set
        # vLLM's NemotronH hook's, where a config.json names it
        "config_mamba_ssm_cache_dtype": spec.config_mamba_ssm_cache_dtype,
        "notes": spec.notes,
        "tp": spec.tp,
        "kv_dtype": spec.kv_dtype,
        "conv_dtype": spec.conv_dtype,
        "ssm_dtype": spec.ssm_dtype,
        "layer_types": list(profile.layer_types),
        "kv_bytes_per_slot": profile.kv_bytes_per_slot,
        # a sliding layer's bytes a token where they differ from a full layer's (Gemma 4)
        "sliding_kv_bytes_per_slot": profile.sliding_kv_bytes_per_slot,
        "state_const_bytes": dict(profile.state_const_bytes),
        "sliding_window": profile.sliding_window,
        "attention_chunk_size": profile.attention_chunk_size,
        "cache_layers": len(spec.layers),
        "model_layers": spec.model_layers,
        "attention_heads": spec.attention_heads,  # query heads: they limit the TPs
        # the config's chunk, which vLLM's P aligns to in mode all; null: none (vLLM: 2,048)
        "mamba_chunk_size": profile.mamba_chunk_size,
        # vLLM's default --max-model-len, from the config; null: unknown
        "max_model_len": spec.max_model_len,
        # true: the config gives no length, so it is the 2,048 vLLM assumes (the notes say so)
        "max_model_len_assumed": spec.max_model_len_assumed,
        # true: typed in the Model page's editor (a model file it exported), not the config's
        "max_model_len_typed": spec.max_model_len_typed,
        "counts": {label: profile.count(label) for label in dict.fromkeys(profile.layer_types)},
        "pattern": spec.pattern,
        "kinds": [
            {
                "name": row.name,
                "kind": row.kind,
                "label": row.label,
                "count": row.count,
                "geometry": row.geometry,
                "kv_bytes_per_token": row.kv_bytes_per_token,
                "state_shapes": {k: list(v) for k, v in row.state_shapes.items()},
                "state_bytes": row.state_bytes,
            }
            for row in spec.summary()
        ],
        "kv_bytes_per_token_all_layers": spec.kv_bytes_per_token_all_layers(),
        "state_bytes_per_request": spec.state_bytes_per_request(),
        "spec": spec.to_dict(),
    }


def format_model_text(spec: ModelSpec) -> str:
    """The human-readable `model` output (exact integers, thousands separated)."""
    report = model_report(spec)
    dtypes = "".join(f", {tensor} {dtype}" for tensor, dtype in spec.state_dtypes().items())
    # past TP 1 the kinds' heads and dims are still the whole model's, as the config gives them
    whole = ", heads and dims of the whole model" if report["tp"] > 1 else ""
    lines = [f"{report['name']}  (tp {report['tp']}; kv {report['kv_dtype']}{dtypes}; bytes per "
             f"TP rank{whole})"]
    if report["config_mamba_ssm_dtype"]:
        lines.append(f"config mamba_ssm_dtype: {report['config_mamba_ssm_dtype']} (SGLang keeps "
                     "its ssm state in it)")
    if report["config_mamba_ssm_cache_dtype"]:
        lines.append(f"config mamba_ssm_cache_dtype: {report['config_mamba_ssm_cache_dtype']} "
                     "(vLLM keeps its ssm state in it unless told)")
    if report["source"]:
        lines.append(f"source: {report['source']}")
    if report["notes"]:
        lines.append(f"notes: {report['notes']}")
    if report["architectures"]:
        lines.append(f"architectures: {', '.join(report['architectures'])}")
    if note := preset_class_note(spec):  # as the Model page says it
        lines.append(f"note: {note}; keep it for a model of that class, else set the model "
                     "file's \"architectures\" to the model's own class, or [] for none")
    # each group by its kind, as Layout names it (the JSON report keys the planner's ids); the
    # profile built once (it builds one for every attention-DP split)
    mla = spec.profile().mla
    counts = ", ".join(f"{n} {group_name(label, mla=mla)}" for label, n in report["counts"].items())
    model_layers = (
        f" from {report['model_layers']} model layers" if report["model_layers"] else ""
    )
    lines.append(f"cache layers: {report['cache_layers']}{model_layers} ({counts})")
    if report["attention_heads"]:
        lines.append(f"attention heads: {report['attention_heads']} (query heads; a tp must "
                     "divide them)")
    if report["max_model_len"]:
        whence = ("typed in the Model page's editor, as vLLM's --max-model-len"
                  if report["max_model_len_typed"] else "vLLM's default --max-model-len, "
                  + ("assumed: the config gives no length, see the notes"
                     if report["max_model_len_assumed"] else "from the config"))
        lines.append(f"max_model_len: {report['max_model_len']:,} tokens ({whence}; "
                     "--context's default)")
    if chunk := mamba_chunk_text(spec.profile()):
        lines.append(f"mamba chunk: {chunk}")
    lines.append(f"pattern: {report['pattern']}")
    for row in report["kinds"]:
        # a field left unset (no window, no chunk, no indexer) is not part of the geometry
        geometry = ", ".join(f"{k}={v}" for k, v in row["geometry"].items()
                             if k != "kind" and v is not None)
        if row["state_bytes"]:
            parts = " + ".join(f"{k} {v:,}" for k, v in row["state_bytes"].items())
            total = sum(row["state_bytes"].values())
            what = f"state {parts} = {total:,} B per layer"
            if report["tp"] > 1:  # the geometry is the whole model's: the shapes a rank keeps
                what += " (a rank's shapes: " + ", ".join(
                    f"{k} {' x '.join(f'{d:,}' for d in v)}"
                    for k, v in row["state_shapes"].items()) + ")"
        else:
            what = f"{row['kv_bytes_per_token']:,} B per token per layer"
        lines.append(f"  {row['count']:>5} x {row['name']} ({row['kind']}: {geometry}): {what}")
    lines += [f"    {note}" for note in spec.kv_bytes_notes()]
    if note := spec.replication_note():
        lines.append(f"    {note}")
    lines.append(f"kv_bytes_per_slot: {report['kv_bytes_per_slot']:,}")
    if report["sliding_kv_bytes_per_slot"] is not None:
        lines.append(f"sliding_kv_bytes_per_slot: {report['sliding_kv_bytes_per_slot']:,}")
    if report["state_const_bytes"]:
        parts = ", ".join(f"{k} {v:,}" for k, v in report["state_const_bytes"].items())
        lines.append(f"state_const_bytes: {parts}")
    for field_name in ("sliding_window", "attention_chunk_size"):
        if report[field_name] is not None:
            lines.append(f"{field_name}: {report[field_name]:,}")
    lines.append(
        f"all layers: {report['kv_bytes_per_token_all_layers']:,} B KV per token, "
        f"{report['state_bytes_per_request']:,} B state per request"
    )
    if note := windowed_kv_note(spec.profile()):  # a sliding / chunked share: its window only
        lines.append(f"  {note}")
    return "\n".join(lines)


def model_command(args: argparse.Namespace) -> str:
    """`model`: the report as text, JSON (--json) or the exportable spec (--export)."""
    spec = model_from_args(args)
    if spec is None:
        raise ValueError(
            "model needs a source: give --preset NAME, --hf-config PATH or --model-file PATH"
        )
    if isinstance(spec, CacheProfile):
        raise ValueError(f"--model-file {args.model_file} holds raw bytes ({PROFILE_FORMAT}), "
                         "with no layer kinds for `model` to show: plan or compare it instead "
                         f"(python -m flatkv compare --model-file {args.model_file} ...)")
    for flag in ("name", "source"):
        text = getattr(args, flag, None)
        if text is not None and not text.strip():
            raise ValueError(f"--{flag} is empty: give the model's {flag}, or leave the flag out "
                             "to keep the one it has")
        if text is not None:
            spec = replace(spec, **{flag: text.strip()})
    if getattr(args, "export", False):
        return json.dumps(spec.to_dict(), indent=2)
    if getattr(args, "json", False):
        return json.dumps(model_report(spec), indent=2)
    return format_model_text(spec)


def presets_command(args: argparse.Namespace) -> str:
    """`presets`: one name a line, or names, cache layers, patterns and sources as JSON."""
    names = list_presets()
    if not getattr(args, "json", False):
        return "\n".join(names)
    rows = []
    for name in names:
        spec = load_preset(name)
        rows.append({"name": name, "cache_layers": len(spec.layers), "pattern": spec.pattern,
                     "source": spec.source})
    return json.dumps(rows, indent=2)


def register(subparsers: Any) -> None:
    """Add the `model` and `presets` subcommands to an argparse subparsers object."""
    model = subparsers.add_parser(
        "model", help="show a model's cache layers and bytes per TP rank",
        description="Show a model's cache layers (labels, bytes per token, state bytes) per TP "
                    "rank, from a preset, a config.json or an exported model file.",
    )
    add_model_arguments(model)
    out = model.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report as JSON")
    out.add_argument("--export", action="store_true",
                     help="print the model specification (preset format) to save and reload")
    named = model.add_argument_group(
        "naming", "A config.json's model is named by its _name_or_path's last part, else its "
        "model_type, and its source says where it was read: give both before --export saves "
        "it as a preset.")
    named.add_argument("--name", metavar="TEXT", help="the model's name, as the app lists it")
    named.add_argument("--source", metavar="TEXT",
                       help="where the numbers come from (the checkpoint, a link to its config)")
    model.set_defaults(run=model_command)

    presets = subparsers.add_parser("presets", help="list the bundled model presets")
    presets.add_argument("--json", action="store_true",
                         help="names, cache layers, layer patterns and sources as JSON")
    presets.set_defaults(run=presets_command)
