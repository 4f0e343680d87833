"""``OpenVINOBackendConfig``: what :class:`~executorch_openvino.lifecycle.OpenVINOBackend` lowers and runs with.

A frozen dataclass that checks itself when made, turns into plain data and
back (``to_dict``/``from_dict``, ``to_json``/``from_json``), and has a stable
``key()`` for naming what was built with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field

from .compile_specs import KEYWORD_DEFAULTS, check_option

_WHAT = "OpenVINOBackendConfig field"
# Bumped when a field's meaning changes, so key() of the old meaning cannot collide with the new.
_KEY_VERSION = 1


@dataclass(frozen=True)
class OpenVINOBackendConfig:
    """How a module is lowered to OpenVINO and how its compiled model runs.

    Fields (all text, checked when the config is made):

    ``device``
        OpenVINO device name, upper case: ``"CPU"`` (default), ``"GPU"``,
        ``"GPU.1"``, ``"NPU"``, ``"AUTO"``, ``"HETERO:GPU,CPU"``, ... Whether
        the device exists is checked when the program is loaded.
    ``inference_precision``
        ``INFERENCE_PRECISION_HINT``: ``"f32"``, ``"f16"``, ``"bf16"`` or ``""``
        (default). ``""`` means f32 on CPU (and on ``AUTO`` or device lists
        naming CPU), where OpenVINO's own default would be bf16 or f16
        (:mod:`executorch_openvino.contract.compile_specs`), and the device's default elsewhere.
    ``performance_hint``
        OpenVINO's ``PERFORMANCE_HINT``: ``"LATENCY"`` (default; OpenVINO
        2025.4/2026.4's CPU default too), ``"THROUGHPUT"``,
        ``"CUMULATIVE_THROUGHPUT"``, or ``""`` to pass none. ``THROUGHPUT``
        splits the device into streams for concurrent infer requests, but the
        delegate runs one request per partition at a time, so one call uses
        one stream's share of the cores: on CPU it is slower per call
        (docs/user-guide/openvino-backend.md).
    ``numerics``
        ``"exact"`` (default) or ``"fast"``: whether operations OpenVINO computes
        differently from PyTorch stay on ExecuTorch's kernels (docs/user-guide/numerics.md).
    ``model_cache_dir``
        A folder for OpenVINO's compiled-model cache, used when this backend
        loads its program (``executorch_openvino.set_cache_dir``), made
        absolute when the config is made; ``None`` (default): the process-wide
        setting, no cache unless ``set_cache_dir`` was called.

    Raises ``ValueError`` naming the field and its allowed values, and
    ``TypeError`` for a value that is not text.
    """

    device: str = KEYWORD_DEFAULTS["device"]
    inference_precision: str = KEYWORD_DEFAULTS["inference_precision"]
    performance_hint: str = "LATENCY"  # OpenVINOBackend's own choice: one request at a time, its latency first
    numerics: str = KEYWORD_DEFAULTS["numerics"]
    model_cache_dir: str | None = field(default=None)

    def __post_init__(self):
        for name in ("device", "inference_precision", "performance_hint", "numerics"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"{_WHAT} {name!r} is a {type(value).__name__} ({value!r}); give text")
            check_option(name, value, _WHAT)
        cache = self.model_cache_dir
        if cache is not None:
            if isinstance(cache, os.PathLike):
                object.__setattr__(self, "model_cache_dir", os.fspath(cache))
            elif not isinstance(cache, str):
                raise TypeError(f"{_WHAT} 'model_cache_dir' is a {type(cache).__name__}; "
                                "give a folder path as text, or None for no model cache")
            folder = os.fspath(cache)
            if folder == "":
                raise ValueError(f"{_WHAT} 'model_cache_dir' is empty; give a folder, or None for no model cache")
            folder = os.path.abspath(folder)
            object.__setattr__(self, "model_cache_dir", folder)
            if os.path.exists(folder) and not os.path.isdir(folder):
                raise ValueError(f"{_WHAT} 'model_cache_dir' is {folder!r}, a file; give a folder "
                                 "(it is created if missing), or None")

    def to_dict(self) -> dict:
        """The fields as a JSON-ready dict (``{"device": "CPU", ...}``)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> OpenVINOBackendConfig:
        """The config ``values`` describes; absent fields take their defaults.

        Raises ``TypeError`` when ``values`` is not a dict, ``ValueError`` naming
        the known fields for an unknown one, and what the constructor raises.
        """
        if not isinstance(values, dict):
            raise TypeError(f"OpenVINOBackendConfig.from_dict takes a dict, got {type(values).__name__}")
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown {_WHAT}{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                             f"the fields are {', '.join(known)}")
        return cls(**values)

    def to_json(self, path) -> None:
        """Writes ``to_dict()`` as JSON to ``path``, readable and writable by its owner only (mode 0o600).

        The file is replaced atomically, so a reader never sees half of it and
        an existing file's wider permissions are not kept. Raises ``OSError``
        naming ``path`` when its folder cannot be written.
        """
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        try:
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".config-", suffix=".json")  # created 0o600
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write the config to {path!r}: {exc.strerror}") from None
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(self.to_dict(), file, indent=2, sort_keys=True)
                file.write("\n")
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise

    @classmethod
    def from_json(cls, path) -> OpenVINOBackendConfig:
        """Reads a file written by :meth:`to_json`. Raises ``ValueError`` for a file that is not UTF-8 JSON."""
        with open(path, encoding="utf-8") as file:
            try:
                values = json.load(file)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ValueError(f"{os.fspath(path)!r} is not a JSON config: {exc}") from exc
        return cls.from_dict(values)

    def describe(self) -> str:
        """The fields that differ from the defaults, ``"device=GPU, performance_hint=THROUGHPUT"``,
        or ``"defaults"`` when none does."""
        default = OpenVINOBackendConfig()
        changed = [f"{f.name}={getattr(self, f.name)!r}" if getattr(self, f.name) == "" else
                   f"{f.name}={getattr(self, f.name)}"
                   for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(default, f.name)]
        return ", ".join(changed) or "defaults"

    def key(self) -> str:
        """A 16-hex-digit SHA-256 digest of the fields: equal configs give equal keys in every
        process and Python version (unlike ``hash()``, which is salted per process)."""
        text = json.dumps({"version": _KEY_VERSION, **self.to_dict()}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
