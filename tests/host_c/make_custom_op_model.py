#!/usr/bin/env python3
"""Models with a custom operator, for the custom-operator tests (docs/custom-operators.md).

  make_custom_op_model.py OUT_DIR

writes, with the hand-made protobuf encoding of tests/fuzz/crafted_onnx.py (no onnx or numpy package):
  OUT_DIR/custom_op_f32.onnx      x float32 [1,3,4,4] -> rknnxx.test.ScaleShift -> y -> Relu -> z [1,3,4,4]
  OUT_DIR/custom_op_f16.onnx      x float16 -> ScaleShift -> y float16 -> Cast -> z float32 (no Relu)
  OUT_DIR/custom_op_undeclared.onnx  the float32 one without value_info for y (its shape cannot be known)
ScaleShift computes y = alpha * x + beta[c] (c the channel, axis 1) and has the attributes
alpha (float 2.0), beta (floats [1, -2, 0.5]), axis (int 1), mode (string "affine") and
table (a float32 tensor [2] = [3, 4]).
"""
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
from crafted_onnx import FLOAT, f_bytes, f_int, key, node, value_info  # noqa: E402

FLOAT16 = 10
DOMAIN = "rknnxx.test"
# AttributeProto.type
A_FLOAT, A_INT, A_STRING, A_TENSOR, A_FLOATS = 1, 2, 3, 4, 6


def float_attribute(name, value):
    """AttributeProto: name 1, f 2 (fixed32), type 20."""
    return f_bytes(5, f_bytes(1, name) + key(2, 5) + struct.pack("<f", value) + f_int(20, A_FLOAT))


def floats_attribute(name, values):
    """floats 7, one fixed32 each (not packed, as proto2 writes them)."""
    return f_bytes(5, f_bytes(1, name) + b"".join(key(7, 5) + struct.pack("<f", v) for v in values) +
                   f_int(20, A_FLOATS))


def int_attribute(name, value):
    return f_bytes(5, f_bytes(1, name) + f_int(3, value) + f_int(20, A_INT))


def string_attribute(name, value):
    return f_bytes(5, f_bytes(1, name) + f_bytes(4, value) + f_int(20, A_STRING))


def tensor_attribute(name, values):
    """t 5: a float32 TensorProto (dims 1, data_type 2, raw_data 9)."""
    proto = f_int(1, len(values)) + f_int(2, FLOAT) + f_bytes(9, b"".join(struct.pack("<f", v) for v in values))
    return f_bytes(5, f_bytes(1, name) + f_bytes(5, proto) + f_int(20, A_TENSOR))


def custom_model(elem_type, declare_y=True):
    attributes = (float_attribute("alpha", 2.0) + floats_attribute("beta", [1.0, -2.0, 0.5]) +
                  int_attribute("axis", 1) + string_attribute("mode", "affine") + tensor_attribute("table", [3.0, 4.0]))
    scale = node("ScaleShift", ["x"], ["y"], "scale", attributes) + f_bytes(7, DOMAIN)  # NodeProto.domain 7
    # Relu has no float16 kernel in the host engine: the float16 model casts instead.
    last = node("Relu", ["y"], ["z"], "relu") if elem_type == FLOAT else node("Cast", ["y"], ["z"], "cast", int_attribute("to", FLOAT))
    dims = [1, 3, 4, 4]
    graph = (f_bytes(1, scale) + f_bytes(1, last) + f_bytes(2, "custom_op") +
             f_bytes(11, value_info("x", elem_type, dims)) + f_bytes(12, value_info("z", FLOAT, dims)))
    if declare_y:
        graph += f_bytes(13, value_info("y", elem_type, dims))  # GraphProto.value_info 13
    opsets = f_bytes(8, f_bytes(1, "") + f_int(2, 13)) + f_bytes(8, f_bytes(1, DOMAIN) + f_int(2, 1))
    return f_int(1, 8) + opsets + f_bytes(7, graph)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "custom_op_f32.onnx").write_bytes(custom_model(FLOAT))
    (out / "custom_op_f16.onnx").write_bytes(custom_model(FLOAT16))
    (out / "custom_op_undeclared.onnx").write_bytes(custom_model(FLOAT, declare_y=False))


main()
