"""What the engine check scripts (``sglang_check.py``, ``vllm_check.py``) share: stub
modules, and one line a setting.

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
import sys
import types
import warnings
from pathlib import Path


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


def wheel_from_command_line(description: str, package: str, version: str) -> str:
    """The folder ``--<package>`` names, holding the engine's unzipped wheel (``unzipped_wheel``),
    with the engine's own warnings silenced (the check's lines say what they would)."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(f"--{package}", required=True,
                        help=f"the unzipped {package} {version} wheel")
    return unzipped_wheel(parser, getattr(parser.parse_args(), package), package)


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
    return " ".join(f"{k}={v:,}" for k, v in figures.items() if v is not None)


def report(engine: str, setting: str, by_engine: dict, by_flatkv: dict) -> bool:
    """Print one setting's line (``ok`` or ``BAD``, the engine's figures, FlatKV's) and say
    whether they agree: the same figures, or both refusing (their words differ)."""
    same = by_engine == by_flatkv or ("refused" in by_engine and "refused" in by_flatkv)
    print(f"{'ok ' if same else 'BAD'} {setting} | {engine}: {show(by_engine)} | "
          f"flatkv: {show(by_flatkv)}")
    return same
