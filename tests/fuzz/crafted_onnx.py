#!/usr/bin/env python3
"""The crafted ONNX models of issue 12 (sizes that overflow, shapes the runtime cannot describe),
hand-encoded in the protobuf wire format so that no onnx package is needed. They are seeds for the
ONNX fuzzer (tests/fuzz/run.sh) and inputs of the convert checks (tests/tools/cli_test.py).

  crafted_onnx.py OUT_DIR     writes every model as OUT_DIR/<name>.onnx (each well under 2 KB)
"""
import struct
import sys
from pathlib import Path

FLOAT, INT8, INT64 = 1, 3, 7
TWO_32 = 1 << 32


def varint(v):
    v &= (1 << 64) - 1  # negative int64 as ten bytes, as protobuf does
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_int(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def tensor(name, dims, int64s):
    """An int64 initializer (TensorProto: dims 1, data_type 2, name 8, raw_data 9)."""
    return (b"".join(f_int(1, d) for d in dims) + f_int(2, INT64) + f_bytes(8, name) +
            f_bytes(9, b"".join(struct.pack("<q", v) for v in int64s)))


def value_info(name, elem_type, dims):
    """ValueInfoProto with a tensor type; a str dim is symbolic (dim_param)."""
    shape = b"".join(f_bytes(1, f_bytes(2, d) if isinstance(d, str) else f_int(1, d)) for d in dims)
    tensor_type = f_int(1, elem_type) + f_bytes(2, shape)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor_type))


def node(op, inputs, outputs, name, attributes=b""):
    return (b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs) + f_bytes(3, name) +
            f_bytes(4, op) + attributes)


def model(nodes, initializers, inputs, outputs, opset=13):
    graph = (b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, "crafted") +
             b"".join(f_bytes(5, t) for t in initializers) + b"".join(f_bytes(11, v) for v in inputs) +
             b"".join(f_bytes(12, v) for v in outputs))
    return f_int(1, 8) + f_bytes(8, f_bytes(1, "") + f_int(2, opset)) + f_bytes(7, graph)


def sliced_into_sum(maker, maker_initializer):
    """x [1, 1] + Slice(<big> [2^32, 2^32], [0, 0], [1, 1]): the graphs that crashed convert and run."""
    return model([maker, node("Slice", ["big", "starts", "ends"], ["corner"], "slice"),
                  node("Add", ["x", "corner"], ["y"], "add")],
                 [maker_initializer, tensor("starts", [2], [0, 0]), tensor("ends", [2], [1, 1])],
                 [value_info("x", FLOAT, [1, 1])], [value_info("y", FLOAT, [1, 1])])


def identity(elem_type, dims):
    return model([node("Identity", ["x"], ["y"], "identity")], [], [value_info("x", elem_type, dims)],
                 [value_info("y", elem_type, dims)])


MODELS = {
    # Element counts that wrap 64 bits (issue 12).
    "overflow_constant_of_shape": sliced_into_sum(node("ConstantOfShape", ["shape"], ["big"], "fill"),
                                                  tensor("shape", [2], [TWO_32, TWO_32])),
    "overflow_expand": sliced_into_sum(node("Expand", ["x", "shape"], ["big"], "expand"),
                                       tensor("shape", [2], [TWO_32, TWO_32])),
    "overflow_tile": sliced_into_sum(node("Tile", ["x", "repeats"], ["big"], "tile"),
                                     tensor("repeats", [2], [TWO_32, TWO_32])),
    # Counts in 64 bits, but 4 TiB: beyond any tensor the runtime can describe.
    "huge_tile": sliced_into_sum(node("Tile", ["x", "repeats"], ["big"], "tile"),
                                 tensor("repeats", [2], [1 << 20, 1 << 20])),
    # Inputs the runtime's rknn_tensor_attr cannot describe.
    "rank_20": identity(FLOAT, [1] * 20),
    "dim_2_32": identity(INT8, [1, TWO_32]),
    # A dynamic image input (dynamic_input chooses its sizes) and a static 3-channel one.
    "dynamic_image": model([node("Relu", ["image"], ["y"], "relu")], [],
                           [value_info("image", FLOAT, [1, 1, "H", "W"])], [value_info("y", FLOAT, [1, 1, "H", "W"])]),
    "rgb_image": model([node("Relu", ["image"], ["y"], "relu")], [], [value_info("image", FLOAT, [1, 3, 4, 4])],
                       [value_info("y", FLOAT, [1, 3, 4, 4])]),
}


def write_all(folder):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, data in MODELS.items():
        assert len(data) < 2048, name
        paths[name] = folder / f"{name}.onnx"
        paths[name].write_bytes(data)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_all(sys.argv[1])
