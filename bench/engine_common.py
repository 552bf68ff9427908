"""What the engine check scripts (``sglang_check.py``, ``vllm_check.py``) share: stub
modules, the command line (the unzipped wheel, ``--random N --seed S``), one line a setting,
the model of state layers alone both check, and the random settings near the presets
(``perturb_spec``, ``random_budget``, ``edge_or_random_budget`` ...).

An engine imports some packages at module level that need CUDA or a CUDA build of torch
(torchvision, tvm_ffi, xgrammar), though its sizing code never calls them. On a CPU machine
the scripts serve each as an empty module whose every public attribute is a stub class,
instead of editing the engine's files.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import logging
import re
import sys
import types
import warnings
from pathlib import Path

# A model of state layers alone (no preset holds one): Mamba-Codestral-7B's shape, as its
# config.json gives it (Mamba2ForCausalLM, which both engines serve as attention-free)
STATE_ONLY = "Mamba2-only"
STATE_ONLY_CONFIG = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2",
                     "hidden_size": 4096, "num_hidden_layers": 64, "num_heads": 128,
                     "head_dim": 64, "expand": 2, "state_size": 128, "n_groups": 8,
                     "conv_kernel": 4, "vocab_size": 32768, "torch_dtype": "bfloat16"}
# Mamba1 models of state layers alone (SGLang's PURE_MAMBA1_ARCHITECTURES): tiiuae/
# falcon-mamba-7b's config.json shape (FalconMambaForCausalLM; no length field, so 2,048 is
# assumed: ``LENGTH_CONFIGS`` checks that) and state-spaces/mamba-2.8b-hf's (MambaForCausalLM)
FALCON_MAMBA_ONLY = "FalconMamba-only"
FALCON_MAMBA_CONFIG = {"model_type": "falcon_mamba", "num_hidden_layers": 64,
                       "hidden_size": 4096, "intermediate_size": 8192, "state_size": 16,
                       "conv_kernel": 4, "torch_dtype": "bfloat16",
                       "architectures": ["FalconMambaForCausalLM"]}
MAMBA1_ONLY = "Mamba1-only"
MAMBA1_CONFIG = {"model_type": "mamba", "architectures": ["MambaForCausalLM"],
                 "num_hidden_layers": 64, "hidden_size": 2560, "intermediate_size": 5120,
                 "state_size": 16, "conv_kernel": 4, "vocab_size": 50280,
                 "torch_dtype": "float32"}
# the models of state layers alone, by name: the checks' STATE_ONLY and the Mamba1 two
STATE_ONLY_CONFIGS = {STATE_ONLY: STATE_ONLY_CONFIG, MAMBA1_ONLY: MAMBA1_CONFIG,
                      FALCON_MAMBA_ONLY: FALCON_MAMBA_CONFIG}


def model_spec(name: str):
    """The model a setting names: a preset, or a model of state layers alone
    (``STATE_ONLY_CONFIGS``), built from its config.json fields as FlatKV reads a config."""
    from flatkv.hf_config import spec_from_hf_config
    from flatkv.presets import load_preset

    if name in STATE_ONLY_CONFIGS:
        return spec_from_hf_config(STATE_ONLY_CONFIGS[name], name=name)
    return load_preset(name)


class _Anything(type):
    """A stub class whose every attribute is a name (transformers reads enum members such as
    ``InterpolationMode.NEAREST_EXACT`` from torchvision at import time)."""

    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return f"{cls.__name__}.{attr}"


class _StubModule(types.ModuleType):
    """An empty module whose every public attribute is a stub class."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything(attr, (), {})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``_StubModule``s for the named packages and their submodules. ``__version__``
    0.0 keeps transformers' version checks of torchvision false."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__, module.__version__ = [], "0.0"
        return module

    def exec_module(self, module):
        pass


def stub_modules(*names: str) -> None:
    """From now on, import each of ``names`` (and its submodules) as a stub module."""
    sys.meta_path.insert(0, _StubFinder(names))


def stub_submodules(*names: str) -> None:
    """From now on, import each of ``names``, modules inside a real package (vLLM's CUDA-built
    ``vllm._C_stable_libtorch``), as a stub module (and package: a submodule of it found in
    ``names`` too), which ``stub_modules``' finder, matching top-level names, cannot serve."""
    for name in names:
        module = _StubModule(name)
        module.__path__, module.__version__ = [], "0.0"
        sys.modules[name] = module


def wheel_from_command_line(description: str, package: str, version: str,
                            *others: tuple[str, str],
                            companions: tuple[tuple[str, str], ...] = ()
                            ) -> tuple[str, argparse.Namespace]:
    """The folder ``--<package>`` names, holding the engine's unzipped wheel (``unzipped_wheel``),
    and the parsed arguments (``--random N --seed S``: the randomized mode, off by default),
    with the engine's own warnings silenced (the check's lines say what they would). ``other``:
    ``(flag, help)`` of another release's wheel the check may take instead of ``--<package>``
    (one of them is given; its folder is returned, ``args.<flag>`` says which); several may
    be. ``companions``: ``(flag, help)`` of a folder one of them may take beside it (None where
    not given)."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=description)
    wheels = parser.add_mutually_exclusive_group(required=True)
    wheels.add_argument(f"--{package}", help=f"the unzipped {package} {version} wheel")
    for flag, text in others:
        wheels.add_argument(f"--{flag}", help=text)
    for flag, text in companions:
        parser.add_argument(f"--{flag}", metavar="DIR", help=text)
    parser.add_argument("--random", type=int, default=0, metavar="N",
                        help="check N random settings near the presets instead of the fixed ones")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="the random settings' first seed: setting i is drawn from S + i")
    args = parser.parse_args()
    given = next((g for flag, _ in others if (g := getattr(args, flag.replace("-", "_")))),
                 None)
    return unzipped_wheel(parser, given or getattr(args, package), package), args


def unzipped_wheel(parser: argparse.ArgumentParser, directory: str, package: str) -> str:
    """``directory``, where it holds the engine's unzipped wheel (a ``package`` folder in it);
    else the parser's one-line error (exit status 2), not an ImportError deep in a traceback."""
    if not (Path(directory) / package / "__init__.py").is_file():
        parser.error(f"{directory} holds no {package}/ package: unzip the {package} wheel there "
                     f"(see this script's docstring)")
    return directory


def show(figures: dict) -> str:
    """One side's figures in the order its dict gives them, or its refusal."""
    if "refused" in figures:
        return f"refused ({figures['refused']})"
    return " ".join(f"{k}={v}" if isinstance(v, str) else f"{k}={v:,}"
                    for k, v in figures.items() if v is not None)


def report(engine: str, setting: str, by_engine: dict, by_flatkv: dict) -> bool:
    """Print one setting's line (``ok`` or ``BAD``, the engine's figures, FlatKV's) and say
    whether they agree: the same figures, or both refusing (their words differ)."""
    same = by_engine == by_flatkv or ("refused" in by_engine and "refused" in by_flatkv)
    print(f"{'ok ' if same else 'BAD'} {setting} | {engine}: {show(by_engine)} | "
          f"flatkv: {show(by_flatkv)}")
    return same


# config.json files with none of the length keys the engines read, nor a class default for one
# (vLLM's _get_and_verify_max_len assumes 2,048 and warns, SGLang's get_context_length returns
# 2,048 silently): tiiuae/falcon-mamba-7b's sizes, mistralai/Mamba-Codestral-7B-v0.1's, and a
# Mamba whose linear rope factor vLLM applies to the 2,048 it assumed (SGLang does not);
# beside them, lengths given (LlamaConfig's class default, a Mamba config with
# max_position_embeddings), where neither assumes anything. vllm_check sizes each at its length.
LENGTH_CONFIGS = {
    "falcon-mamba-7b": FALCON_MAMBA_CONFIG,
    "Mamba-Codestral-7B": {"model_type": "mamba2", "architectures": ["Mamba2ForCausalLM"],
                           "num_hidden_layers": 64, "hidden_size": 4096, "expand": 2,
                           "num_heads": 128, "head_dim": 64, "n_groups": 8,
                           "state_size": 128, "conv_kernel": 4, "chunk_size": 256,
                           "torch_dtype": "bfloat16"},
    "mamba-linear-rope-x4": {"model_type": "mamba", "num_hidden_layers": 24,
                             "hidden_size": 768, "intermediate_size": 1536,
                             "state_size": 16, "conv_kernel": 4, "torch_dtype": "bfloat16",
                             "architectures": ["MambaForCausalLM"],
                             "rope_scaling": {"type": "linear", "factor": 4}},
    "mamba-given-4096": {"model_type": "mamba", "num_hidden_layers": 24, "hidden_size": 768,
                         "intermediate_size": 1536, "state_size": 16, "conv_kernel": 4,
                         "torch_dtype": "bfloat16", "architectures": ["MambaForCausalLM"],
                         "max_position_embeddings": 4096},
    "llama-class-default": {"model_type": "llama", "num_hidden_layers": 4,
                            "torch_dtype": "bfloat16"},
}

# --- randomized mode (--random N --seed S): shapes near the presets' -------------------------

# Field values a perturbed kind draws from: sizes real checkpoints use, and a few odd ones
# (head dim 80 / 96 / 192, a window of 1,000, a conv kernel of 2 or 3) that no preset has.
KIND_CHOICES = {
    "attention": {"kv_heads": (1, 2, 4, 8, 16), "head_dim_k": (64, 80, 96, 128, 192, 256),
                  "sliding_window": (64, 128, 512, 1000, 4096, 8191),
                  "attention_chunk_size": (1024, 2048, 8192)},
    "mla": {"kv_lora_rank": (256, 512), "qk_rope_head_dim": (32, 64),
            "index_head_dim": (128, 256)},
    "gdn": {"k_heads": (2, 4, 8, 16, 32), "head_dim_k": (64, 128, 256),
            "head_dim_v": (64, 128, 256), "conv_kernel": (2, 3, 4)},
    "mamba2": {"n_heads": (8, 24, 32, 64, 128), "head_dim": (32, 64, 128),
               "d_state": (16, 64, 128, 256), "n_groups": (1, 2, 4, 8), "conv_kernel": (2, 3, 4)},
    "mamba1": {"d_inner": (1024, 2048, 4096, 8192), "d_state": (8, 16, 32),
               "conv_kernel": (2, 3, 4)},
    "short_conv": {"channels": (512, 1024, 2048, 3072), "conv_kernel": (2, 3, 4)},
}


def perturb_kind(rng, geometry: dict) -> dict:
    """One kind's geometry (``CacheLayer.geometry()``) with each field redrawn from
    ``KIND_CHOICES`` half the time; a field the preset leaves unset (no window, no indexer)
    stays unset, so a layer keeps its label. Ties the engines' own rules keep: K and V head
    dims equal (one head size), GDN value heads a multiple of key heads, Mamba2 groups dividing
    the heads."""
    out = dict(geometry)
    for name, choices in KIND_CHOICES.get(out["kind"], {}).items():
        if out.get(name) is not None and rng.random() < 0.5:
            out[name] = rng.choice(choices)
    if out["kind"] == "attention":
        out["head_dim_v"] = out["head_dim_k"]
    if out["kind"] == "gdn" and (out["v_heads"] % out["k_heads"] or rng.random() < 0.5):
        out["v_heads"] = out["k_heads"] * rng.choice((1, 2, 3, 4))
    if out["kind"] == "mamba2" and out["n_heads"] % out["n_groups"]:
        out["n_groups"] = 1
    return out


def perturb_pattern(rng, pattern: str, *, keep_inner: bool = False) -> str:
    """The layer pattern with each repeat count redrawn in [1, 2n] (hybrid ratios and layer
    counts both move: ``(3*gdn,full)*12`` may become ``(5*gdn,full)*2``); with
    ``keep_inner`` only the last count, for a model whose engine config fixes the period (SGLang
    places Llama 4's chunked layers by ``(i + 1) % 4``)."""
    counts = list(re.finditer(r"\d+", pattern))
    out, last = [], 0
    for i, m in enumerate(counts):
        n = int(m.group())
        new = n if keep_inner and i < len(counts) - 1 else rng.randint(1, 2 * n)
        out += [pattern[last:m.start()], str(new)]
        last = m.end()
    return "".join(out) + pattern[last:]


def perturb_spec(rng, spec, *, keep_inner: bool = False):
    """``spec`` perturbed (``perturbed_once``), redrawn until FlatKV takes the shape."""
    while (perturbed := perturbed_once(rng, spec, keep_inner=keep_inner)) is None:
        pass
    return perturbed


def perturbed_once(rng, spec, *, keep_inner: bool = False):
    """A copy of the preset ``spec`` with its kinds (``perturb_kind``) and its pattern
    (``perturb_pattern``) perturbed, query heads a multiple of every kind's KV heads (so tp
    splits them alike), every attention kind of one KV geometry (each keeps its window or
    chunk: the presets' configs give one KV head count and head dim for all attention layers,
    and FlatKV refuses full and chunked kinds of two sizes), Kimi's KDA of one head count and
    head dim for keys and values (its config has no other), under the preset's name + "~";
    None where FlatKV rejects the shape."""
    from flatkv.models import ModelSpec
    from flatkv.patterns import parse_pattern

    data = spec.to_dict()
    data["name"] = spec.name + "~"
    data["kinds"] = {k: perturb_kind(rng, g) for k, g in data["kinds"].items()}
    if spec.architectures[:1] == ("KimiLinearForCausalLM",):  # KDA: one head count and dim
        for g in data["kinds"].values():  # (linear_attn_config's num_heads, head_dim)
            if g["kind"] == "gdn":
                g.update(k_heads=g["v_heads"], head_dim_k=g["head_dim_v"])
    attention = [g for g in data["kinds"].values() if g["kind"] == "attention"]
    for g in attention[1:]:  # one num_key_value_heads and head_dim in each preset's config
        g.update({f: attention[0][f] for f in ("kv_heads", "head_dim_k", "head_dim_v")})
    data["pattern"] = perturb_pattern(rng, data["pattern"], keep_inner=keep_inner)
    heads = [g["kv_heads"] for g in data["kinds"].values() if "kv_heads" in g]
    if "attention_heads" in data and heads:
        data["attention_heads"] = max(heads) * rng.choice((1, 2, 4, 8))
    if spec.model_layers is not None and 2 * spec.model_layers == len(spec.layers):
        # Falcon-H1: attention and Mamba2 in each model layer
        data["model_layers"] = len(parse_pattern(data["pattern"])) // 2
    else:
        data.pop("model_layers", None)  # the preset's count no longer holds
    try:
        return ModelSpec.from_dict(data)
    except ValueError:
        return None


def random_budget(rng) -> int:
    """Bytes log-uniform between 16 MiB and 80 GiB, any integer (odd ones included)."""
    return int(2 ** rng.uniform(24, 36.33))


def random_context(rng, spec) -> int:
    """A context length up to the model's max_model_len (131,072 where it gives none): a
    common one or any."""
    most = spec.max_model_len or 131_072
    return min(most, rng.choice((2048, 8192, 32_768, 131_072, rng.randint(1, most))))


def random_running_requests(rng) -> int | None:
    """A told cap on running requests (SGLang's --max-running-requests) one draw in four, as
    users type them: 1, a power of two up to 1,024, or any up to a million (past what any pool
    here holds: the engine cuts it to T // 2); None (not told: the engine's own) else."""
    if rng.random() >= 0.25:
        return None
    return rng.choice((1, 2 ** rng.randint(1, 10), rng.randint(1, 10**6)))


def random_state_slots(rng) -> int | None:
    """Told state slots for requests (SGLang's --max-mamba-cache-size) one draw in five: fewer
    than a request holds, a few, hundreds or any up to 5,000 (past what small budgets hold:
    the engine refuses); None (the engine sizes them from the budget) else."""
    if rng.random() >= 0.2:
        return None
    return rng.choice((1, 4, 5, 16, 100, rng.randint(1, 5_000)))


def edge_or_random_budget(rng, refused) -> int:
    """One draw in five at the edge the engine starts at (``refused(budget)`` bisected: the
    least budget it starts at, or one byte under), else ``random_budget``."""
    if rng.random() >= 0.2:
        return random_budget(rng)
    return least_starting_budget(refused) - rng.randint(0, 1)


def least_starting_budget(refused) -> int:
    """The least budget the engine starts at: ``refused(budget)`` bisected up to 1 TiB."""
    low, high = 0, 1 << 40
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if refused(mid) else (low, mid)
    return high


def spec_label(spec) -> str:
    """A perturbed model in one line: name, tp, pattern and each kind's geometry values."""
    return f"{spec.name} tp={spec.tp} {spec.pattern} " + " ".join(
        f"{n}={','.join(str(v) for v in g.geometry().values() if v is not None and v != g.kind)}"
        for n, g in spec.kinds.items())
