"""Where a config.json comes from besides a file: a Hub model id (only its config.json is
fetched, from the local cache when offline) and text pasted into the app (which fetches
nothing, so a pasted id or path is refused with what to do instead). Reading a config is
``flatkv.hf_config``'s job."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from flatkv.hf_config import last_part, spec_from_hf_config
from flatkv.hf_json import load_config_dict
from flatkv.jsonfile import parse_json_object
from flatkv.models import ModelSpec
from flatkv.units import quoted_value

_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*")


def config_from_pasted_text(text: str) -> dict:
    """A config.json pasted into a text box: JSON, never a path or a model id (the app fetches
    nothing), so a pasted id or path is refused with what to do instead."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("Nothing to load: upload a config.json or paste one.")
    if not stripped.startswith(("{", "[")) and (
            is_model_id(stripped) or stripped.endswith(".json") or "/" in stripped):
        raise ValueError(
            f"{quoted_value(stripped)} is not JSON: it looks like a model id or a path. Paste "
            "the contents "
            "of the config.json or upload the file (the app does not fetch from the Hub; "
            "python -m flatkv model --hf-config ID does)"
        )
    return parse_json_object(text, "pasted config.json")


def is_model_id(text: str) -> bool:
    """Whether ``text`` looks like a Hub model id (``owner/name``) rather than a file path."""
    if not (isinstance(text, str) and _MODEL_ID.fullmatch(text)):
        return False
    try:
        return not Path(text).exists()
    except OSError:  # a name past what the file system takes (255 bytes): no path, so an id
        return True


def _offline() -> bool:
    flag = os.environ.get("HF_HUB_OFFLINE", "")
    return flag.strip().lower() in {"1", "true", "yes", "on"}


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the Hub's host accepts a connection within ``timeout_s`` (no HTTP, no retries).

    huggingface_hub retries a failing download for about half a minute and logs each retry;
    asking the socket first turns "no network" into an immediate, plain answer. Behind a proxy
    the socket cannot tell, so the answer is yes and huggingface_hub decides.
    """
    import socket

    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    from urllib.parse import urlparse

    try:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    except (ImportError, AttributeError):  # pragma: no cover - older huggingface_hub
        endpoint = "https://huggingface.co"
    url = urlparse(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "huggingface.co", port), timeout_s):
            return True
    except OSError:
        return False


def fetch_hf_config(model_id: str, *, revision: str | None = None) -> dict[str, Any]:
    """Download only ``config.json`` of ``model_id`` from the Hugging Face Hub (or its cache).

    Offline (HF_HUB_OFFLINE=1) or when the Hub cannot be reached, only the local cache is used;
    when the file cannot be had the ValueError says why plainly and suggests passing the file.
    """
    if not isinstance(model_id, str) or not _MODEL_ID.fullmatch(model_id):
        raise ValueError(
            f"model id {quoted_value(model_id)} is not of the form owner/name (e.g. "
            "Qwen/Qwen3-Next-80B-A3B-Instruct)"
        )
    try:
        import huggingface_hub
        from huggingface_hub.utils import logging as hub_logging
    except ImportError as exc:  # pragma: no cover - huggingface_hub is a runtime dependency
        raise ValueError(f"fetching a config by model id needs huggingface_hub: {exc}") from None
    if _offline():
        local_only, why = True, "offline (HF_HUB_OFFLINE is set) and not in the local cache"
    elif not hub_reachable():
        local_only, why = True, "the Hugging Face Hub cannot be reached from here (offline?) " \
            "and it is not in the local cache"
    else:
        local_only, why = False, ""
    verbosity = hub_logging.get_verbosity()
    hub_logging.set_verbosity_error()
    try:
        path = huggingface_hub.hf_hub_download(
            repo_id=model_id, filename="config.json", revision=revision,
            local_files_only=local_only, etag_timeout=10,
        )
    except Exception as exc:  # missing, gated, refused: one plain message
        reason = why or f"the Hub refused or failed ({type(exc).__name__})"
        raise ValueError(
            f"could not fetch config.json of {model_id}: {reason}; download config.json "
            "elsewhere and pass its path with --hf-config"
        ) from None
    finally:
        hub_logging.set_verbosity(verbosity)
    return load_config_dict(Path(path))


def spec_from_model_id(model_id: str, *, revision: str | None = None) -> ModelSpec:
    """A ModelSpec from a Hub model id, fetching only its config.json, named by the id's last
    part as a config's _name_or_path is (the owner stays in the source)."""
    cfg = fetch_hf_config(model_id, revision=revision)
    return spec_from_hf_config(
        cfg, name=last_part(model_id), source=f"https://huggingface.co/{model_id} config.json"
    )
