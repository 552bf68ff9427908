"""Reading JSON a user hands us (config.json, exported model specs): bounded and with one clear
error, never a hang on ``/dev/zero`` or a RecursionError on a hostile nesting."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from flatkv.units import quoted, quoted_value

# Real config.json files and model specs are a few KiB, nested a few levels (text_config,
# rope_scaling, quantization_config); readers after this one recurse per level.
MAX_JSON_BYTES = 8 * 1024 * 1024
MAX_JSON_DEPTH = 32


def _depth(data: Any) -> int:
    """How deeply ``data`` nests objects and arrays (a scalar is 0), without recursion."""
    deepest, todo = 0, [(data, 0)]
    while todo:
        value, level = todo.pop()
        children = (value.values() if isinstance(value, dict)
                    else value if isinstance(value, list) else None)
        if children is None:
            continue
        deepest = max(deepest, level + 1)
        if deepest > MAX_JSON_DEPTH:
            break
        todo.extend((child, level + 1) for child in children)
    return deepest


class _DuplicateKey(Exception):
    """A key an object names twice (raised inside json.loads, said by parse_json_object)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict, a key named twice refused (``json`` keeps the last one
    silently: a model file with "kv_heads": 8 and, further down, "kv_heads": 2 planned 2)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


def parse_json_object(text: str | bytes, where: str, *,
                      unique_keys: bool = False) -> dict[str, Any]:
    """The JSON object in ``text``; ValueError naming ``where`` and what is wrong.
    ``unique_keys``: an object naming a key twice is refused (our model files: a config.json
    keeps the last, as transformers reads it)."""
    if len(text) > MAX_JSON_BYTES:
        # "over": a file is read no further than one past the bound (/dev/zero has no length),
        # so its length read is no length of the file
        raise ValueError(f"{where} is over {MAX_JSON_BYTES:,} characters, too large for a model "
                         f"file: give one of {MAX_JSON_BYTES:,} characters or fewer")
    if isinstance(text, bytes) and text.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(f"{where} is UTF-16 (its first bytes are a UTF-16 byte-order mark): "
                         "save it as UTF-8, as JSON files are")
    undecoded = None
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:  # JSON is UTF-8: a Latin-1 "café" must not read
            undecoded, text = exc, text.decode("utf-8", errors="replace")  # as "caf\ufffd"
    text = text.removeprefix("\ufeff")  # a byte-order mark, as Windows editors save files
    if not text.strip():  # "not valid JSON (line 1, column 1: Expecting value)" said less
        raise ValueError(f"{where} is empty: give the model's JSON, its fields between "
                         "{ and }")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys if unique_keys else None)
    except _DuplicateKey as exc:
        raise ValueError(f"{where} names {quoted(exc.args[0], 40)} twice in one object: keep "
                         "one (JSON readers keep the last, silently)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{where} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply to be a model file") from None
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise ValueError(f"{where} holds a number too long to read ({exc.args[0].split(':')[0]}"
                         "): no model field is that large, fix the number") from None
    if undecoded is not None:  # JSON but for its encoding (garbage is "not valid JSON")
        raise ValueError(f"{where} is not UTF-8 (byte {undecoded.object[undecoded.start]:#04x} "
                         f"at offset {undecoded.start:,}): save it as UTF-8, as JSON files are")
    if _depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"{where} nests objects or arrays more than {MAX_JSON_DEPTH} deep: "
                         "too deep to be a model file")
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a JSON object, not {_json_kind(data)}: give the "
                         "model's fields between { and }")
    return data


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (null, an array), not Python's (NoneType, list)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return ("a number" if isinstance(value, (int, float)) else
            "a string" if isinstance(value, str) else "an array")


def read_json_file(path: str | Path, *, unique_keys: bool = False) -> dict[str, Any]:
    """The JSON object in the file at ``path``, reading at most MAX_JSON_BYTES + 1 bytes
    (``unique_keys``: as parse_json_object)."""
    if not isinstance(path, (str, Path)):  # an int would be read as a file descriptor
        raise ValueError(f"path is {quoted_value(path)}: give the path of a JSON file")
    where = quoted(str(path))
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):  # open() would wait for a writer, forever
            raise OSError(0, "it is a pipe, not a file")
        with open(path, "rb") as handle:
            raw = handle.read(MAX_JSON_BYTES + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ValueError(f"cannot read {where}: {reason}; give the path of a JSON file") from None
    return parse_json_object(raw, where, unique_keys=unique_keys)
