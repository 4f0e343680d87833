"""Compile specs of the OpenVINO delegate: what they mean and how they are checked.

Keys (bytes values, UTF-8):

``device``
    The OpenVINO device name the runtime compiles the partition for, e.g.
    ``"CPU"`` (default) or ``"GPU"``. OpenVINO's names are case-sensitive and
    upper case, so a name with lower-case letters is refused at lowering; the
    name itself is checked against the devices OpenVINO finds when the program
    is loaded (a plugin may exist only on the target machine).
``inference_precision``
    OpenVINO's ``INFERENCE_PRECISION_HINT``: ``"f32"``, ``"f16"``, ``"bf16"`` or
    ``""`` for the default. On ``CPU`` (and ``AUTO``, or any device list naming
    ``CPU``) the default is ``f32``: OpenVINO itself
    would compute in bf16 on x86 CPUs with bf16 units and in f16 on ARM, which
    gave a max abs error of 0.099 on MiniLM against 1.2e-5 in f32 (measured with
    OpenVINO 2026.4.1, docs/design.md). The native runtime applies the same rule.

``performance_hint``
    OpenVINO's ``PERFORMANCE_HINT``: ``"LATENCY"`` (one inference at a time as
    fast as possible), ``"THROUGHPUT"`` (several streams for concurrent infer
    requests), ``"CUMULATIVE_THROUGHPUT"`` (several devices at once, for
    ``AUTO``/``MULTI``), or ``""`` (default) to pass none, leaving the
    device's own default (``LATENCY`` on CPU in OpenVINO 2025.4 and 2026.4).
    The runtime applies it when it compiles the partition;
    ``last_compile_report()`` shows what the compiled model took.

``numerics``
    ``"exact"`` (default) or ``"fast"``. Read at lowering only (the runtime
    ignores it; what it decides is written into the IR). ``exact`` keeps on ExecuTorch's CPU kernels every operation
    that OpenVINO's CPU plugin computes differently from PyTorch where
    PyTorch's answer is exact (int64 in 32 bits, integer reductions and
    comparisons through float32, float64 in float32, subnormal and -0.0
    constants flushed to zero: the table in docs/user-guide/numerics.md, measured with
    OpenVINO 2025.4.1 and 2026.4.1), keeps activations float32 inside matmuls with compressed weights
    (``DYNAMIC_QUANTIZATION_GROUP_SIZE=0`` in the IR) and a fused KV cache float32. ``fast`` delegates
    those operations anyway, and leaves OpenVINO's CPU defaults: activations quantized to 8 bits in groups
    of 32 inside compressed matmuls, the KV cache in f16.

``weight_compression``
    ``""`` (default: weights kept as the program has them), ``"int8"`` or ``"int4"``: weight-only
    compression of the partition's IR by NNCF (``nncf.compress_weights`` on the OpenVINO model, the
    same call optimum-intel makes for OpenVINO GenAI's models). ``"int8"`` is NNCF's ``INT8_ASYM``, one
    scale and zero point per output channel; ``"int4"`` is ``INT4_SYM`` in groups of
    ``weight_group_size`` values of a row with one scale each, the embedding and the output layer in
    ``INT8_ASYM`` (NNCF's rule for them), as executorch's own ``openvino_4wo``. OpenVINO keeps the
    compressed constants and decompresses them inside its matmul and gather kernels. Read at lowering
    only; needs NNCF (``pip install 'executorch-openvino[quantize]'``).
``weight_group_size``
    Values per scale for ``"int4"`` (default ``"128"``; ``"-1"``: one scale per output channel). A
    smaller group is more accurate and larger. Each compressed row's length must be a multiple of it.
``weight_ratio``
    The share of the ``"int4"`` layers' weights NNCF puts in 4 bits (default ``"1.0"``); the rest
    stays in 8 bits (NNCF picks the layers by a data-free sensitivity measure).

``gguf_weights``
    The path of a GGUF file the program's weights were read from (transformers dequantizes its blocks to
    float32). Each matmul or embedding weight equal to one of its ``Q4_0``, ``Q4_1`` or ``Q8_0`` tensors
    (rows may be reordered) is written as that tensor's own blocks, which OpenVINO's CPU plugin
    decompresses inside its kernels: the same numbers as the file, at its size. Other weights follow
    ``weight_compression``. Read at lowering only (the file must be there then, not where the program
    runs); needs the ``gguf`` package.

``input_ranges``
    JSON ``{"input name": [low, high], ...}``: integer inputs of the program whose values the user
    promises lie in ``[low, high]`` (an LLM's positions: ``[0, context - 1]``), both within
    ``-16777215..16777215`` (the check compares through float32). With ``numerics="exact"``,
    integer arithmetic on them is then delegated where the range proves it exact (OpenVINO computes
    int64 in int32 and compares integers through float32), and the delegate checks the promise on every
    call: a value outside fails the call, naming the input and its range. Names are those of
    ``ExportedProgram.graph_signature.user_inputs``; each must name an integer input.

``program_state``
    Written by :meth:`OpenVINOPartitioner.partition` for each partition, not
    given by users: ``"none"`` when the whole exported program keeps nothing
    between calls (no buffer or parameter it changes, no custom objects or
    tokens), ``"mutable"`` otherwise. ``load_method`` runs calls of a program
    concurrently, on several loaded copies, only when every OpenVINO partition
    says ``"none"``: each copy would hold its own copy of any state. The
    runtime ignores any other value, and older lowerings lack the key (their
    calls are serialised). OpenVINO never sees it.

When a key is given twice the last value wins, here and in the runtime.

The keys, their defaults, their allowed values and which side reads each have one definition,
``compile_specs.json`` beside this module, which this module reads and from which the build writes the
runtime's ``compile_spec_keys.h``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Iterable
from pathlib import Path

def definition(name: str) -> dict:
    """A JSON file of this folder (compile_specs.json, processed_blob_layout.json); ``RuntimeError`` naming it when
    it is not JSON."""
    path = Path(__file__).parent / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RuntimeError(f"{path} is not valid JSON ({exc}): this installation of executorch-openvino is "
                           "damaged or was edited; install it again") from exc


_SPECS = definition("compile_specs.json")["keys"]
# The keys a user gives; the partitioner writes program_state itself.
USER_KEYS = tuple(key for key, spec in _SPECS.items() if "written_by" not in spec)
KEYS = tuple(_SPECS)
DEFAULTS = {key: spec["default"] for key, spec in _SPECS.items()}
# The same as the Python keywords take them (lower, export_llm, OpenVINOPartitioner, make_compile_specs): the
# group size an int, the ratio a float. tests/lowering/test_compile_specs.py checks every keyword default is one.
KEYWORD_DEFAULTS = {**DEFAULTS, "weight_group_size": int(DEFAULTS["weight_group_size"]),
                    "weight_ratio": float(DEFAULTS["weight_ratio"])}


def _allowed_values(key: str) -> str:
    """"'a', 'b', or '' for <what empty means>" (or "'a' and 'b'", or "'a'") of a key with a list of values."""
    spec = _SPECS[key]
    named = [repr(v) for v in spec["values"] if v]
    if "" in spec["values"]:
        named.append("''" + (f" for {spec['empty_means']}" if "empty_means" in spec else ""))
        return named[0] if len(named) == 1 else f"{', '.join(named[:-1])}, or {named[-1]}"
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"


def allowed_values(key: str) -> tuple[str, ...]:
    """The values compile_specs.json allows for ``key`` (``KeyError`` for a key without a list)."""
    return tuple(_SPECS[key]["values"])


def _check_listed(key: str, value: str, what: str) -> None:
    """Raises ``ValueError`` when ``value`` is not among the key's listed values (naming who writes the key, if
    not the user)."""
    if value not in _SPECS[key]["values"]:
        written_by = _SPECS[key].get("written_by")
        note = f" ({written_by} writes it)" if written_by else ""
        raise ValueError(f"{what} {key!r} is {value!r}; allowed values are {_allowed_values(key)}{note}")
# Keys executorch 1.5.1's own OpenVINO backend passes to OpenVINO's compile, and this package's way to the same.
_UPSTREAM_KEYS = {
    "cache_dir": ". OpenVINO's model cache is set where the program runs here: "
                 "executorch_openvino.set_cache_dir(path) before loading it",
    "model_caching": ". OpenVINO's model cache is set where the program runs here: "
                     "executorch_openvino.set_cache_dir(path) before loading it",
}


@dataclass(frozen=True)
class OpenVINOOptions:
    """The options a list of compile specs resolves to.

    ``inference_precision`` is the value the runtime passes as
    ``INFERENCE_PRECISION_HINT`` (``""``: none, OpenVINO's device default).
    """

    # compile_specs.json's defaults (the precision: the CPU's, as resolve_options gives it for device "CPU")
    device: str = KEYWORD_DEFAULTS["device"]
    inference_precision: str = _SPECS["inference_precision"]["default_on_cpu"]
    numerics: str = KEYWORD_DEFAULTS["numerics"]
    performance_hint: str = KEYWORD_DEFAULTS["performance_hint"]
    weight_compression: str = KEYWORD_DEFAULTS["weight_compression"]
    weight_group_size: int = KEYWORD_DEFAULTS["weight_group_size"]
    weight_ratio: float = KEYWORD_DEFAULTS["weight_ratio"]
    gguf_weights: str = KEYWORD_DEFAULTS["gguf_weights"]
    input_ranges: tuple = ()  # ((name, low, high), ...)


def make_compile_specs(device: str = KEYWORD_DEFAULTS["device"],
                       inference_precision: str = KEYWORD_DEFAULTS["inference_precision"],
                       numerics: str = KEYWORD_DEFAULTS["numerics"],
                       performance_hint: str = KEYWORD_DEFAULTS["performance_hint"],
                       weight_compression: str = KEYWORD_DEFAULTS["weight_compression"],
                       weight_group_size: int = KEYWORD_DEFAULTS["weight_group_size"],
                       weight_ratio: float = KEYWORD_DEFAULTS["weight_ratio"],
                       gguf_weights: str = KEYWORD_DEFAULTS["gguf_weights"]) -> list:
    """Builds the ExecuTorch ``CompileSpec`` list for the delegate, unchecked: :func:`resolve_options` checks it
    (the partitioner calls it once, at construction, and raises ``ValueError`` for an empty device, a precision
    outside ``f32``, ``f16``, ``bf16``, ``""``, numerics other than ``exact``/``fast``, a performance hint or a
    weight compression outside the values compile_specs.json lists, or a ``gguf_weights`` path not ending in
    ``.gguf``). ``performance_hint``, ``gguf_weights`` and the weight compression keys are written only when
    given, so programs without them load with delegates that predate the keys.
    """
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    specs = [
        CompileSpec("device", device.encode()),
        CompileSpec("inference_precision", inference_precision.encode()),
        CompileSpec("numerics", numerics.encode()),
    ]
    if performance_hint:
        specs.append(CompileSpec("performance_hint", performance_hint.encode()))
    if weight_compression:
        specs += [CompileSpec("weight_compression", weight_compression.encode()),
                  CompileSpec("weight_group_size", str(weight_group_size).encode()),
                  CompileSpec("weight_ratio", str(weight_ratio).encode())]
    if gguf_weights:
        specs.append(CompileSpec("gguf_weights", str(gguf_weights).encode()))
    return specs


def program_state_spec(exported_program):
    """The ``program_state`` compile spec of ``exported_program``: ``"none"`` only when it keeps nothing between calls.

    State lives in the buffers and parameters it changes (kept in each loaded
    copy's memory), custom objects and effect tokens; a user input it changes
    in place is written back through an output on every call, which keeps
    nothing.
    """
    from executorch.exir.backend.compile_spec_schema import CompileSpec
    from torch.export.graph_signature import InputKind, OutputKind

    signature = exported_program.graph_signature
    stateless = (all(spec.kind in (InputKind.USER_INPUT, InputKind.PARAMETER, InputKind.BUFFER,
                                   InputKind.CONSTANT_TENSOR) for spec in signature.input_specs)
                 and all(spec.kind in (OutputKind.USER_OUTPUT, OutputKind.USER_INPUT_MUTATION)
                         for spec in signature.output_specs))
    return CompileSpec("program_state", b"none" if stateless else b"mutable")


def may_run_on_cpu(device: str) -> bool:
    """True for ``CPU`` and devices that may pick it (``AUTO``, ``HETERO:GPU,CPU``, ``MULTI:CPU``): the rule's
    data is ``compile_specs.json``'s ``cpu_devices``, which the delegate's ``may_run_on_cpu`` reads too."""
    cpu = _SPECS["device"]["cpu_devices"]
    return cpu["containing"] in device or device in cpu["named"]


def openvino_properties(options: OpenVINOOptions) -> dict[str, str]:
    """The OpenVINO compile properties of ``options``, as the delegate passes them: each key's
    ``openvino_property`` in ``compile_specs.json`` (``INFERENCE_PRECISION_HINT``, ``PERFORMANCE_HINT``) for a
    value other than ``""``."""
    return {spec["openvino_property"]: getattr(options, key) for key, spec in _SPECS.items()
            if "openvino_property" in spec and getattr(options, key)}


def check_option(key: str, value: str, what: str = "compile spec") -> None:
    """Raises ``ValueError`` when ``value`` is not allowed for ``key``, naming the allowed values.

    ``what`` names the setting in the message ("compile spec", "OpenVINOBackendConfig field").
    """
    if key == "device":
        if not value:
            raise ValueError(f"{what} 'device' is empty; give an OpenVINO device such as 'CPU'")
        if any(c.isspace() for c in value):
            raise ValueError(f"{what} 'device' is {value!r}; OpenVINO device names have no spaces "
                             f"(did you mean {''.join(value.split())!r}?)")
        if value != value.upper():
            # OpenVINO 2025.4/2026.4: 'Device with "cpu" name is not registered'.
            raise ValueError(f"{what} 'device' is {value!r}; OpenVINO device names are upper case "
                             f"(did you mean {value.upper()!r}?)")
    elif key in _SPECS and "values" in _SPECS[key]:
        _check_listed(key, value, what)
    elif key == "input_ranges":
        parse_input_ranges(value, what)
    elif key == "gguf_weights":
        if not value.lower().endswith(".gguf"):
            raise ValueError(f"{what} 'gguf_weights' is {value!r}; give the path of the .gguf file the program's "
                             "weights were read from")
    elif key == "weight_group_size":
        if not (value.lstrip("-").isdigit() and (int(value) == -1 or int(value) > 0)):
            raise ValueError(f"{what} 'weight_group_size' is {value!r}; give a positive number of values per "
                             "scale, e.g. '128', or '-1' for one scale per output channel")
    elif key == "weight_ratio":
        try:
            ratio = float(value)
        except ValueError:
            ratio = -1.0
        if not 0.0 < ratio <= 1.0:
            raise ValueError(f"{what} 'weight_ratio' is {value!r}; give the share of weights in 4 bits, a number "
                             "in (0, 1], e.g. '1.0'")
    elif key in _SPECS:  # a key added to compile_specs.json without a check of its values
        raise NotImplementedError(f"compile_specs.json has the key {key!r} without a list of values: give it "
                                  "`values` there, or a branch in compile_specs.check_option that checks it")
    else:
        hint = _UPSTREAM_KEYS.get(key, "")
        raise ValueError(f"unknown {what} {key!r}; the OpenVINO delegate knows {', '.join(USER_KEYS)}{hint}")


def parse_input_ranges(value: str, what: str = "compile spec") -> tuple:
    """``((name, low, high), ...)`` of an ``input_ranges`` value; ``ValueError`` naming the problem."""
    import json

    try:
        ranges = json.loads(value) if value else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} 'input_ranges' is not JSON ({exc}); give e.g. "
                         f"'{{\"cache_position\": [0, 511]}}'") from exc
    if not isinstance(ranges, dict):
        raise ValueError(f"{what} 'input_ranges' must be a JSON object of input name -> [low, high]")
    found = []
    for name, bounds in ranges.items():
        if (not isinstance(bounds, list) or len(bounds) != 2
                or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
                or bounds[0] > bounds[1] or bounds[0] <= -2**24 or bounds[1] >= 2**24):
            # The check compares through float32 (OpenVINO's integer comparisons): exact below 2**24.
            raise ValueError(f"{what} 'input_ranges' gives {name!r} {bounds!r}: give [low, high], integers with "
                             f"low <= high, both within -16777215..16777215")
        found.append((name, bounds[0], bounds[1]))
    return tuple(found)


def input_ranges_spec(ranges: dict):
    """The ``input_ranges`` compile spec of ``{input name: (low, high)}``."""
    import json

    from executorch.exir.backend.compile_spec_schema import CompileSpec

    for name, bounds in ranges.items():
        if not isinstance(bounds, (tuple, list)) or len(bounds) != 2 or not all(
                isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            raise ValueError(f"input_ranges gives {name!r} {bounds!r}: give (low, high), two ints")
    value = json.dumps({name: [low, high] for name, (low, high) in ranges.items()})
    parse_input_ranges(value)
    return CompileSpec("input_ranges", value.encode())


def resolve_options(specs: Iterable) -> OpenVINOOptions:
    """Checks compile specs and returns what they mean; the last duplicate wins.

    Raises ``ValueError`` naming the key and the allowed values for an unknown
    key, an empty or lower-case device, or an unknown precision, and ``TypeError``
    for a value that is not bytes.
    """
    values = {}
    for spec in specs:
        key = spec.key
        if not isinstance(spec.value, (bytes, bytearray, memoryview)):
            raise TypeError(f"compile spec {key!r} has a {type(spec.value).__name__} value {spec.value!r}: "
                            f"compile spec values are bytes, e.g. CompileSpec({key!r}, "
                            f"{str(spec.value).encode()!r})")
        try:
            value = bytes(spec.value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"compile spec {key!r} is not UTF-8 text") from exc
        check_option(key, value)
        values[key] = value
    values = {**DEFAULTS, **values}
    device, precision = values["device"], values["inference_precision"]
    if may_run_on_cpu(device) and precision == "":
        precision = _SPECS["inference_precision"]["default_on_cpu"]
    return OpenVINOOptions(device=device, inference_precision=precision, numerics=values["numerics"],
                           performance_hint=values["performance_hint"],
                           weight_compression=values["weight_compression"],
                           weight_group_size=int(values["weight_group_size"]),
                           weight_ratio=float(values["weight_ratio"]),
                           gguf_weights=values["gguf_weights"],
                           input_ranges=parse_input_ranges(values["input_ranges"]))
