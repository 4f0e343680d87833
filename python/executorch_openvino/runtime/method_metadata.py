"""A method's signature as the ``.pte`` records it (:class:`MethodMetadata`), read by this package's native code
(``_native.program_signatures``) without importing ``executorch.runtime``, whose import takes seconds
(it imports ``executorch.exir``: 4.3 s of a 4.4 s first load on an Intel Xeon, 2 cores, measured for issue 50).

The methods are named as those of ExecuTorch's pybindings' ``MethodMeta`` and ``TensorInfo``, so code written
for ``executorch.runtime``'s ``Method.metadata`` reads these too.
"""

from __future__ import annotations

# ExecuTorch's Tag codes (runtime/core/tag.h) of the values a method takes or returns.
TAG_NAMES = {0: "None", 1: "Tensor", 2: "String", 3: "Double", 4: "Int", 5: "Bool", 6: "ListBool",
             7: "ListDouble", 8: "ListInt", 9: "ListTensor", 10: "ListScalar", 11: "ListOptionalTensor"}


class TensorMetadata:
    """One tensor input or output: ``sizes()`` (a tuple of ints; a dynamic dimension's upper bound),
    ``dtype()`` (ExecuTorch's ScalarType code, an int: 6 is float32), ``dim_order()``, ``nbytes()`` (of
    ``sizes()``) and ``is_memory_planned()``."""

    __slots__ = ("_entry",)

    def __init__(self, entry: dict):
        self._entry = entry

    def sizes(self) -> tuple:
        return tuple(self._entry["sizes"])

    def dtype(self) -> int:
        return self._entry["dtype"]

    def dim_order(self) -> tuple:
        return tuple(self._entry["dim_order"])

    def nbytes(self) -> int:
        return self._entry["nbytes"]

    def is_memory_planned(self) -> bool:
        return self._entry["memory_planned"]

    def __repr__(self) -> str:
        return (f"TensorMetadata(sizes={list(self.sizes())}, dtype={self.dtype()}, "
                f"is_memory_planned={self.is_memory_planned()}, nbytes={self.nbytes()})")


class MethodMetadata:
    """A method's name, inputs and outputs, from its ``.pte``'s metadata (no method is loaded).

    ``input_tensor_meta(i)`` and ``output_tensor_meta(i)`` return a :class:`TensorMetadata`; they raise
    ``IndexError`` for an index out of range and for a value that is not a tensor (an int, a bool, ...,
    whose kind ``input_tag(i)`` names: "Int"), as ExecuTorch's ``MethodMeta`` does."""

    __slots__ = ("_name", "_signature")

    def __init__(self, name: str, signature: dict):
        self._name, self._signature = name, signature

    def name(self) -> str:
        return self._name

    def num_inputs(self) -> int:
        return len(self._signature["inputs"])

    def num_outputs(self) -> int:
        return len(self._signature["outputs"])

    def input_tag(self, index: int) -> str:
        return TAG_NAMES.get(self._value("inputs", index)["tag"], "unknown")

    def output_tag(self, index: int) -> str:
        return TAG_NAMES.get(self._value("outputs", index)["tag"], "unknown")

    def input_tensor_meta(self, index: int) -> TensorMetadata:
        return self._tensor("inputs", index)

    def output_tensor_meta(self, index: int) -> TensorMetadata:
        return self._tensor("outputs", index)

    def backends(self) -> list:
        """``[(backend id, registered in this process)]`` of the method's delegates."""
        return list(self._signature["backends"])

    def _value(self, kind: str, index: int) -> dict:
        values = self._signature[kind]
        if not 0 <= index < len(values):
            raise IndexError(f"method '{self._name}' has {len(values)} {kind}; index {index} is out of range")
        return values[index]

    def _tensor(self, kind: str, index: int) -> TensorMetadata:
        entry = self._value(kind, index)
        if "sizes" not in entry:
            raise IndexError(f"{kind[:-1]} {index} of method '{self._name}' is not a tensor "
                               f"(ExecuTorch tag {TAG_NAMES.get(entry['tag'], entry['tag'])})")
        return TensorMetadata(entry)

    def __repr__(self) -> str:
        inputs = ", ".join(repr(self.input_tensor_meta(i)) if "sizes" in v else self.input_tag(i)
                           for i, v in enumerate(self._signature["inputs"]))
        outputs = ", ".join(repr(self.output_tensor_meta(i)) if "sizes" in v else self.output_tag(i)
                            for i, v in enumerate(self._signature["outputs"]))
        return f"MethodMetadata(name='{self._name}', inputs=[{inputs}], outputs=[{outputs}])"
