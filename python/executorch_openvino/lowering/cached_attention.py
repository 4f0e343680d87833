"""A static KV cache's attention given to OpenVINO as the stateful attention its CPU plugin fuses.

An LLM exported with a static cache (transformers' ``StaticCache``, ExecuTorch's own LLM exports) writes
each call's keys and values into a ``(1, kv_heads, context, head_dim)`` buffer at the call's positions
(``index_put``/``index_copy`` on dimension 2), then attends over the whole buffer with a mask that allows
slot ``j`` to query ``i`` when ``j <= position[i]``. Converted as it is, every decode step transposes,
scatters into and attends over all ``context`` slots.

OpenVINO's CPU plugin has a fused node for the other way of keeping a cache (its ``StatefulSDPAFusion``,
read in OpenVINO's source, 2025.4 and 2026.4): ``ReadValue`` -> ``Gather`` (beam order) -> ``Concat`` of
the new keys -> (grouped-query ``Unsqueeze`` -> ``Broadcast`` -> ``Reshape``) ->
``ScaledDotProductAttention``, with the ``Concat`` also written back by ``Assign``. That node appends in
place, attends over the filled length only and reads fewer key/value heads without copies.

:func:`rewrite` gives a partition that form, where it can prove it computes what the static cache did:

- each attention's keys and values come from such a write (with the grouped-query copies, or none) of a
  buffer the partition keeps as state, and every layer writes at the same positions;
- each mask is the static cache's causal mask of those positions, checked by evaluating the partition's
  own mask and position computations on sample positions (a sliding window or padding mask fails this and
  keeps the static form).

The cache then grows by each call's tokens. A second state holds the position of every cached entry; a
call starting at position ``p`` masks the entries at ``p`` or later (a rewind: ExecuTorch's runners and
``generate(start_position=)``) and appends its own. A call whose start leaves a gap (the cache holds fewer
than ``p`` positions) is refused by a check output, since the static cache would have attended to slots
never written. A call at position 0 starts a new sequence: the delegate gives the method a new infer
request, and so an empty cache, when the partition input that :data:`~executorch_openvino.contract.processed_blob.
RESTART_STATE_PREFIX` names starts with 0 (``native/delegate/partition_executor.cpp``).
"""

from __future__ import annotations

import dataclasses

import torch

from .ops import add_call, op_name

aten = torch.ops.aten

# Where an entry no longer counts: above every position (ExecuTorch's positions are int64).
_MASKED_POSITION = 2**62
# Where the grouped-query copies name the cache's length: expand's (1, kv, rep, length, dim), view's (1, heads,
# length, dim).
_LENGTH_AXIS = {"aten.expand_copy.default": 3, "aten.view_copy.default": 2}
_GQA_CHAIN = ("aten.unsqueeze_copy.default", "aten.expand_copy.default", "dim_order_ops._clone_dim_order.default",
              "aten.view_copy.default", "aten.clone.default")
_PREFILLS = ((0, 1), (0, 3), (2, 1), (5, 2), (1, 4))  # (start, tokens), kept within the context
_DECODE_SAMPLES = 64  # single-token calls spread over the whole context, its last position included


def _samples(context: int) -> list:
    """(start, tokens) calls whose masks, compared with the causal one, cover every row a mask can differ in
    by a window or sink of any size: prefills at the start and at the end, and decode steps across the
    context (a sliding window shorter than the context shows in the last row)."""
    decode = {(p, 1) for p in range(0, context, max(1, context // _DECODE_SAMPLES))} | {(context - 1, 1)}
    ends = {(max(0, context - n), n) for n in (2, 3)}
    return sorted({*_PREFILLS, *decode, *ends})


@dataclasses.dataclass
class CachedAttention:
    """What :func:`rewrite` changed: the names of the cache buffers that now grow, the partition input that
    restarts the state at 0, the placeholder and output of the positions' state, and the check output's
    message."""

    caches: tuple
    restart_input: str
    positions_input: str
    positions_value: object  # the positions placeholder's fake value
    check_message: str


@dataclasses.dataclass
class _Layer:
    attention: torch.fx.Node
    writes: tuple  # (key write, value write): index_put/index_copy nodes
    chains: tuple  # per write, the grouped-query nodes between it and the attention (may be empty)


def rewrite(program: torch.export.ExportedProgram, states: dict) -> CachedAttention | None:
    """Rewrites the partition `program` (edge dialect, after ``model_state.expose_updated_buffers``: the
    buffers it keeps as state are user inputs, `states` maps their placeholder names to their starting
    values) into the fused form; returns what changed, or None (nothing changed) where the program is
    not a static cache's attention as proven above."""
    layers = _find_layers(program, set(states))
    if not layers or _reads_other_state(program, states, layers):
        return None
    # Each write's positions (index checks may have made each its own copy): proven equal below.
    positions = list(dict.fromkeys(_write_positions(w) for layer in layers for w in layer.writes))
    restart_input = _prove_static_cache(program, layers, positions, states)
    if restart_input is None:
        return None
    graph = program.graph
    idx = positions[0]
    caches = tuple(w.args[0].name for layer in layers for w in layer.writes)
    last_placeholder = [n for n in graph.nodes if n.op == "placeholder"][-1]
    context = layers[0].writes[0].args[0].meta["val"].shape[2]
    with graph.inserting_after(last_placeholder):
        past = graph.placeholder("exov_cached_positions")
    with idx.meta["val"].fake_mode:
        past.meta["val"] = torch.empty(context, dtype=torch.int64)
    with graph.inserting_before(idx.next):  # before the first attention reads the mask
        start = add_call(graph, aten.select_copy.int, idx, 0, 0)
        stale = add_call(graph, aten.ge.Tensor, past, start)
        kept = add_call(graph, aten.masked_fill.Scalar, past, stale, _MASKED_POSITION)
        present = add_call(graph, aten.cat.default, [kept, idx], 0)
        allowed = add_call(graph, aten.le.Tensor, add_call(graph, aten.unsqueeze_copy.default, present, 0),
                           add_call(graph, aten.unsqueeze_copy.default, idx, 1))
        mask = add_call(graph, aten.unsqueeze_copy.default,
                        add_call(graph, aten.unsqueeze_copy.default, allowed, 0), 0)
        # The positions before `start` must all be held: a gap would have read slots never written.
        earlier = add_call(graph, aten._to_copy.default, add_call(graph, aten.lt.Tensor, past, start),
                           dtype=torch.int64)
        held = add_call(graph, aten.sum.dim_IntList, earlier, [0])
        gap = add_call(graph, aten.ne.Tensor, held, start)
    for layer in layers:
        for write, chain in zip(layer.writes, layer.chains):
            with graph.inserting_before(write):
                grown = add_call(graph, aten.cat.default, [write.args[0], _written_values(write)], 2)
            write.replace_all_uses_with(grown)
            graph.erase_node(write)
            _make_length_dynamic(chain)
        args = list(layer.attention.args)
        args[3] = mask
        layer.attention.args = tuple(args)
    _add_io(program, past, [present, gap])
    graph.eliminate_dead_code()
    graph.lint()
    program.graph_module.recompile()
    return CachedAttention(caches=caches, restart_input=restart_input, positions_input=past.name,
                           positions_value=past.meta["val"],
                           check_message="a call started at a position past the end of the KV cache; "
                                         "start a new sequence at position 0")


def _reads_other_state(program, states: dict, layers: list) -> bool:
    """Whether the partition reads a state other than the caches (a counter, say): a new sequence gives the
    method a new infer request, which would start that state over too. A ``copy`` into a state reads only
    its shape (transformers' ``cumulative_length``)."""
    caches = {w.args[0] for layer in layers for w in layer.writes}
    for node in program.graph.nodes:
        if node.op != "placeholder" or node.name not in states or node in caches:
            continue
        if any(not (op_name(u.target) == "aten.copy.default" and u.args[0] is node and node not in u.args[1:])
               for u in node.users if u.op == "call_function") or any(u.op != "call_function" for u in node.users):
            return True
    return False


def _find_layers(program, cache_names: set) -> list:
    """Every attention of `program` as a :class:`_Layer`, or [] when one is not over a cache write."""
    layers = []
    for node in program.graph.nodes:
        if node.op != "call_function" or op_name(node.target) != "aten.scaled_dot_product_attention.default":
            continue
        if len(node.args) < 4 or not isinstance(node.args[3], torch.fx.Node) or node.kwargs.get("enable_gqa"):
            return []
        if node.kwargs.get("is_causal") or (len(node.args) > 5 and node.args[5]):
            return []
        found = [_cache_write(value, cache_names) for value in node.args[1:3]]
        if any(f is None for f in found):
            return []  # an attention not over a cache: leave the whole program as it is
        (key, key_chain), (value, value_chain) = found
        layers.append(_Layer(node, (key, value), (key_chain, value_chain)))
    return layers


def _cache_write(node, cache_names: set):
    """``(write, chain)`` when `node` is a cache write seen through the grouped-query copies, else None."""
    chain = []
    while isinstance(node, torch.fx.Node) and node.op == "call_function" and op_name(node.target) in _GQA_CHAIN:
        if len(node.users) != 1:
            return None
        chain.append(node)
        node = node.args[0]
    if not isinstance(node, torch.fx.Node) or node.op != "call_function":
        return None
    name = op_name(node.target)
    buffer = node.args[0]
    if not (isinstance(buffer, torch.fx.Node) and buffer.op == "placeholder" and buffer.name in cache_names):
        return None
    value = buffer.meta.get("val")
    if not isinstance(value, torch.Tensor) or value.dim() != 4 or value.shape[0] != 1:
        return None
    if name == "aten.index_put.default":
        indices = node.args[1]
        if len(node.args) > 3 and node.args[3] or len(indices) != 3 or indices[0] is not None or indices[1] is not None:
            return None
    elif name == "aten.index_copy.default":
        if node.args[1] != 2:
            return None
    else:
        return None
    values, positions = _written_values(node).meta.get("val"), _write_positions(node).meta.get("val")
    if not (isinstance(values, torch.Tensor) and isinstance(positions, torch.Tensor) and values.dim() == 4
            and positions.dim() == 1 and str(values.shape[2]) == str(positions.shape[0])
            and [values.shape[i] for i in (0, 1, 3)] == [value.shape[i] for i in (0, 1, 3)]):
        return None  # values broadcast along the positions, or of another shape
    # The buffer feeds only this write, the write only its chain (or the attention) and the new state.
    outputs = [u for u in node.users if u.op == "output"]
    if len(buffer.users) != 1 or len(outputs) != 1 or len(node.users) > 2 or not _gqa_chain(chain, value.shape[2]):
        return None
    return node, list(reversed(chain))


def _gqa_chain(chain: list, length) -> bool:
    """The copies between a write and the attention (`chain`, from the attention up) are none, or
    ``unsqueeze(2) -> expand(.., length, ..) -> (clone) -> view(.., length, ..)`` of the cache's `length`."""
    if not chain:
        return True
    names = [op_name(n.target) for n in reversed(chain)]
    if names[0] != "aten.unsqueeze_copy.default" or chain[-1].args[1] != 2:
        return False
    for node, name in zip(reversed(chain), names):
        axis = _LENGTH_AXIS.get(name)
        if axis is not None and (len(node.args[1]) != axis + 2 or node.args[1][axis] != length):
            return False
    return True


def _write_positions(write: torch.fx.Node):
    return write.args[1][2] if op_name(write.target) == "aten.index_put.default" else write.args[2]


def _written_values(write: torch.fx.Node):
    return write.args[2] if op_name(write.target) == "aten.index_put.default" else write.args[3]


def _make_length_dynamic(chain: list) -> None:
    """The grouped-query copies take the grown length (-1) where they named the cache's length."""
    for node in chain:
        name = op_name(node.target)
        if name in _LENGTH_AXIS:
            sizes = list(node.args[1])
            sizes[_LENGTH_AXIS[name]] = -1
            node.args = (node.args[0], sizes, *node.args[2:])
        source = node.args[0].meta["val"]
        with source.fake_mode:  # (ATen's views: the edge ops' own kernels read sizes as ints)
            if name == "aten.unsqueeze_copy.default":
                node.meta["val"] = source.unsqueeze(node.args[1])
            elif name == "aten.expand_copy.default":
                node.meta["val"] = source.expand(node.args[1]).clone()
            elif name == "aten.view_copy.default":
                node.meta["val"] = source.reshape(node.args[1])
            else:
                node.meta["val"] = source.clone()


def _prove_static_cache(program, layers: list, positions: list, states: dict) -> str | None:
    """The name of the user input whose first value is the call's start position, when on every sample
    the layers' positions are ``start..start+n-1`` and each mask is the static cache's causal mask of
    them, whatever the states they read hold (their starting values and others); else None."""
    masks = [layer.attention.args[3] for layer in layers]
    targets = list(dict.fromkeys([*positions, *masks]))
    evaluate, user_inputs = _evaluator(program, targets, set(states))
    if evaluate is None:
        return None
    candidates = [n for n in user_inputs if _rank1_int(n) and n.name not in states]
    if len(candidates) != 1:
        return None
    context = layers[0].writes[0].args[0].meta["val"].shape[2]
    slots = torch.arange(context)
    read_states = [n for n in user_inputs if n.name in states]
    fillings = [{n: states[n.name] for n in read_states}, {n: _other_values(states[n.name]) for n in read_states}]
    for (start, count), filling in ((sample, f) for sample in _samples(context) for f in fillings):
        if start + count > context:
            continue
        try:
            values = evaluate(candidates[0], torch.arange(start, start + count), count, filling)
        except Exception:  # noqa: BLE001 - a computation we cannot run here keeps the static form
            return None
        expected_positions = torch.arange(start, start + count)
        causal = slots.unsqueeze(0) <= expected_positions.unsqueeze(1)
        for node in positions:
            got = values[node]
            if got.dtype != torch.int64 or not torch.equal(got, expected_positions):
                return None
        for node in masks:
            if not _same_mask(values[node], causal):
                return None
    return candidates[0].name


def _same_mask(mask: torch.Tensor, causal: torch.Tensor) -> bool:
    if mask.dim() < 2 or any(s != 1 for s in mask.shape[:-2]):
        return False
    mask = mask.reshape(mask.shape[-2:])
    if mask.shape != causal.shape:
        return False
    if mask.dtype == torch.bool:
        return torch.equal(mask, causal)
    if not mask.is_floating_point():
        return False
    return bool(torch.all(mask[causal] == 0)) and bool(torch.all(mask[~causal] <= -1e30))


def _rank1_int(node: torch.fx.Node) -> bool:
    value = node.meta.get("val")
    return isinstance(value, torch.Tensor) and value.dim() == 1 and value.dtype == torch.int64


def _other_values(values: torch.Tensor) -> torch.Tensor:
    """Values unlike `values`, of its shape and dtype: a computation that gives the same with both does
    not depend on them."""
    if values.dtype == torch.bool:
        return ~values
    return values + 7 if not values.is_floating_point() else values + torch.randn(values.shape).to(values.dtype)


def _evaluator(program, targets: list, states: set):
    """``(evaluate, user_inputs)``: `evaluate(positions_input, positions, count, filling)` runs the
    computation of `targets` with the program's own constants, the positions input set, every symbolic size
    input set to `count` and the states read (placeholder names in `states`) from `filling`; ``(None,
    ...)`` when the targets read another user input or a size of another symbol."""
    signature = program.graph_signature
    needed, pending = set(), list(targets)
    while pending:
        node = pending.pop()
        if node in needed:
            continue
        needed.add(node)
        pending.extend(node.all_input_nodes)
    user_inputs = [n for n in needed if n.op == "placeholder" and n.name in signature.user_inputs]
    tensors = [n for n in user_inputs if isinstance(n.meta.get("val"), torch.Tensor) and n.name not in states]
    sizes = [n for n in user_inputs if isinstance(n.meta.get("val"), torch.SymInt)]
    if len(tensors) != 1 or not _rank1_int(tensors[0]):
        return None, user_inputs
    length = tensors[0].meta["val"].shape[0]
    if any(str(n.meta["val"]) != str(length) for n in sizes):
        return None, user_inputs
    constants = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
                 **signature.inputs_to_lifted_tensor_constants}
    state = {**program.state_dict, **program.constants}
    order = [n for n in program.graph.nodes if n in needed]

    def evaluate(positions_input, positions, count, filling):
        env = {}
        for node in order:
            if node.op == "placeholder":
                if node is positions_input:
                    env[node] = positions
                elif node in filling:
                    env[node] = filling[node].clone()
                elif node in sizes:
                    env[node] = count
                elif node.name in constants:
                    env[node] = state[constants[node.name]]
                else:
                    raise KeyError(node.name)
            elif node.op == "call_function":
                args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda a: env[a])
                # A size written into the graph as a symbol: the count (reading it otherwise would fix
                # the program's dynamic size at its example's value).
                args, kwargs = torch.utils._pytree.tree_map(
                    lambda a: _size_value(a, length, count), (args, kwargs))
                env[node] = node.target(*args, **kwargs)
            else:
                raise KeyError(node.name)
        return env

    return evaluate, user_inputs


def _size_value(value, length, count):
    if isinstance(value, torch.SymInt):
        if str(value) != str(length):
            raise ValueError(f"a size {value} other than the positions' count")
        return count
    return value


def _add_io(program, past: torch.fx.Node, outputs: list) -> None:
    """Registers `past` as the last user input and `outputs` as the last user outputs."""
    from torch.export.graph_signature import InputKind, InputSpec, OutputKind, OutputSpec, TensorArgument

    signature = program.graph_signature
    signature.input_specs.append(InputSpec(kind=InputKind.USER_INPUT, arg=TensorArgument(name=past.name),
                                           target=None, persistent=None))
    output = next(n for n in program.graph.nodes if n.op == "output")
    output.args = (tuple(output.args[0]) + tuple(outputs),)
    signature.output_specs.extend(OutputSpec(kind=OutputKind.USER_OUTPUT, arg=TensorArgument(name=o.name), target=None)
                                  for o in outputs)
    call = program.module_call_graph[0].signature
    if call is not None:
        user_inputs = [s.arg.name for s in signature.input_specs if s.kind == InputKind.USER_INPUT]
        call.in_spec = torch.utils._pytree.tree_flatten((tuple(user_inputs), {}))[1]
        call.out_spec = torch.utils._pytree.tree_flatten(tuple(output.args[0]))[1]


def move_state_before_checks(model, position: int, checks: int):
    """Moves the positions' state result (after the `checks` index checks but the last one, the gap
    check) to `position`, where the converted model's outputs line up with the partition's."""
    import openvino as ov

    results = list(model.get_results())
    state = results.pop(position + checks - 1)
    results.insert(position, state)
    return ov.Model(results, model.get_parameters(), model.get_friendly_name())


def finish(model, cached: CachedAttention, variables: dict, restart: int, exact: bool):
    """Returns `model` (after ``model_state.keep_as_state``; `variables` maps placeholder names to variable
    ids) in the form OpenVINO's CPU plugin fuses: each cache's ``ReadValue`` read through a ``Gather`` in
    beam order (one beam, index 0, computed so that it is not folded away), input `restart` named for the
    delegate, and the KV cache kept in float32 when `exact`, else float16 (OpenVINO's ``KV_CACHE_PRECISION``,
    which OpenVINO reads from the IR's ``runtime_options``)."""
    import openvino as ov
    from openvino import opset13

    from ..contract.processed_blob import RESTART_STATE_PREFIX

    caches = {variables[name] for name in cached.caches}
    reads = [op for op in model.get_ordered_ops() if op.get_type_name() == "ReadValue"]
    positions = next(op for op in reads if op.get_variable_id() == variables[cached.positions_input])
    # 0 * (cached entries), as int32 [1]: a value OpenVINO cannot fold, as its beam index must be.
    count = opset13.shape_of(positions, "i32")
    beam = opset13.multiply(count, opset13.constant([0], ov.Type.i32))
    for read in reads:
        if read.get_variable_id() not in caches:
            continue
        targets = list(read.output(0).get_target_inputs())
        gathered = opset13.gather(read, beam, opset13.constant(0, ov.Type.i64))
        for target in targets:
            target.replace_source_output(gathered.output(0))
    parameter = model.input(restart)
    parameter.get_tensor().set_names({RESTART_STATE_PREFIX + cached.restart_input})
    # u8, OpenVINO's CPU default, moved a tiny Llama's logits by up to 0.41 (of about 0.5) where f16 moved
    # them 6e-5 (2026.4.1, numerics="fast", a tester's measurement).
    model.set_rt_info("f32" if exact else "f16", ["runtime_options", "KV_CACHE_PRECISION"])
    model.validate_nodes_and_infer_types()
    return model

