#!/usr/bin/env python3
"""Drives the built `rknnxx` tool and `examples/ocr` as a user would, and checks what they print,
write and exit with. Prints one line per check and `N passed, N failed` at the end.

  cli_test.py --rknnxx PATH [--ocr PATH] --work DIR [--models DIR] [--light]

--light: only the checks that need no real model (wrong paths, corrupt files, bad options), and
those on the small generated dyncnn model when tests/models/fetch.sh has made it.
Otherwise the real models from tests/models/fetch.sh are converted into DIR first; when they
have not been fetched the test exits 77 (skipped) and says so.
"""
import argparse
import json
import os
import re
import stat
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import crafted_onnx  # noqa: E402  (the crafted ONNX models of issue 12, shared with the fuzzer's seeds)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host_runtime"))
import make_int8_model  # noqa: E402  (the small CNN and calibration set of the int8 runtime tests)
import make_qdq_model  # noqa: E402  (the QDQ models of the QAT tests)

import numpy as np

# Converted float models hold float16 tensors, as on the NPU (inspect shows FP16), and the host
# runtime emulates that storage: outputs differ from ONNX Runtime's float32 ones by about 5e-3
# (max-normalised), not the 1e-4 of the engine's own float32 tests.
FP16_TOLERANCE = 2e-2

OCR_EXPECTED = ["Rockchip NPU 2026", "rknnxx runs on any PC", "OCR on the host runtime"]

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))


def run(cmd, timeout=600):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def fails_one_line(name, cmd, needle):
    """The command exits non-zero with one line on stderr that names the problem."""
    rc, out, err = run(cmd)
    lines = [l for l in err.splitlines() if l.strip()]
    ok = rc != 0 and len(lines) == 1 and needle.lower() in lines[0].lower()
    check(name, ok, f"exit {rc}, stderr {err.strip()!r}")


def fails_usage(name, cmd, needle):
    """A usage error: exit 2 (not CLI11's internal 104-109) and one line on stderr naming the problem."""
    rc, out, err = run(cmd)
    lines = [l for l in err.splitlines() if l.strip()]
    check(name, rc == 2 and len(lines) == 1 and needle.lower() in lines[0].lower(), f"exit {rc}, stderr {err.strip()!r}")


def write_png(path, width, height, channels, value=128, color=None):
    """A minimal PNG (no library needed): gray (1), gray+alpha (2), RGB (3) or RGBA (4); every pixel
    `value` in every channel, or the channel values `color`."""
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    pixel = bytes(color) if color else bytes([value]) * channels
    raw = b"".join(b"\x00" + pixel * width for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) +
                           chunk(b"IEND", b""))


def light_checks(tool, work):
    missing = work / "missing.hrknn"
    fails_one_line("inspect: missing model", [tool, "inspect", missing], "no such model file")
    fails_one_line("run: missing model", [tool, "run", missing, "--input", work / "x.npy"], "no such model file")
    fails_one_line("bench: missing model", [tool, "bench", missing], "no such model file")
    corrupt = work / "corrupt.hrknn"
    corrupt.write_bytes(b"this is not a model" * 10)
    fails_one_line("inspect: corrupt model", [tool, "inspect", corrupt], "rknn_init")
    fails_one_line("run: corrupt model", [tool, "run", corrupt, "--input", work / "x.npy"], "rknn_init")
    fails_one_line("inspect: a directory as the model", [tool, "inspect", work], "not a model file")
    rc, out, err = run([tool, "inspect"])
    check("inspect: no model argument is a usage error", rc != 0 and "model" in err.lower(), err.strip())
    rc, out, err = run([tool, "--help"])
    check("--help lists every subcommand",
          rc == 0 and all(c in out for c in ("inspect", "run", "bench", "convert", "accuracy")), out)
    bad_config = work / "bad_config.json"
    bad_config.write_text('{"target_platform": "rk9999"}')
    onnx = work / "not_a_model.onnx"
    onnx.write_bytes(b"\x08\x07garbage")
    fails_one_line("convert: bad target_platform", [tool, "convert", onnx, "-c", bad_config], "target_platform")
    # The runtime's own explanation comes with the failure, without -v; -v adds the runtime's log.
    fails_one_line("inspect model.onnx: says it is an ONNX model to convert (without -v)", [tool, "inspect", onnx],
                   "looks like an ONNX model; convert it")
    rc, out, err = run([tool, "-v", "inspect", onnx])
    check("inspect -v model.onnx: the same reason, plus the runtime's own log line",
          rc == 1 and "looks like an ONNX model" in err.splitlines()[-1] and "E RKNN:" in err, err)
    # Exit codes: 0 success, 1 failure, 2 usage; documented in --help.
    rc, out, err = run([tool, "--help"])
    check("--help documents the exit codes", rc == 0 and "0 success, 1 failure" in out and "2 usage error" in out, out)
    rc, out, err = run([tool, "run", "--help"])
    check("run --help documents the exit codes and the new options",
          rc == 0 and "2 usage error" in out and all(o in out for o in ("--core-mask", "--bgr", "--resize")), out)
    rc, out, err = run([tool, "--version"])
    check("--version prints the version", rc == 0 and out.startswith("rknnxx 0."), f"exit {rc}: {out!r} {err!r}")
    fails_usage("no subcommand: usage error, exit 2", [tool], "subcommand")
    fails_usage("inspect without a model: usage error, exit 2", [tool, "inspect"], "model")
    fails_usage("unknown option: usage error, exit 2", [tool, "inspect", corrupt, "--bogus"], "--bogus")
    fails_usage("bench -n -5 says what is wrong with -n", [tool, "bench", corrupt, "-n", "-5"],
                "-5 is not a whole number from 1 to")
    fails_usage("bench --threads 0 says what is wrong", [tool, "bench", corrupt, "--threads", "0"],
                "0 is not a whole number from 1 to 256")
    fails_usage("run --resize sideways is a usage error", [tool, "run", corrupt, "-i", onnx, "--resize", "sideways"],
                "sideways")
    fails_usage("run --core-mask 9 is a usage error naming the choices", [tool, "run", corrupt, "-i", onnx,
                "--core-mask", "9"], "not a core mask")
    fails_usage("profile -n 0 is a usage error", [tool, "profile", corrupt, "-n", "0"], "0 is not a whole number")
    # No runtime: what was tried, and the two ways to fix it.
    env = dict(os.environ, RKNNXX_RUNTIME=str(work / "no_such_runtime.so"))
    p = subprocess.run([str(tool), "inspect", str(corrupt)], capture_output=True, text=True, env=env, timeout=60)
    check("no runtime: the error lists what was tried and both fixes (RKNNXX_RUNTIME, LD_LIBRARY_PATH)",
          p.returncode == 1 and "no rknn runtime could be loaded" in p.stderr and "no_such_runtime.so:" in p.stderr
          and "RKNNXX_RUNTIME" in p.stderr and "LD_LIBRARY_PATH" in p.stderr, p.stderr)

    convert_checks(tool, work)
    newer_opset_checks(tool, work)
    quantize_checks(tool, work)


def newer_opset_checks(tool, work):
    """Issue 15: a model of opset 21 converts and runs; a form of opset 18 the engine lacks is refused naming it."""
    folder = work / "opset21"
    folder.mkdir(exist_ok=True)
    int_attribute = lambda name, v: crafted_onnx.f_bytes(  # noqa: E731  AttributeProto: name 1, i 3, type 20 (INT)
        5, crafted_onnx.f_bytes(1, name) + crafted_onnx.f_int(3, v) + crafted_onnx.f_int(20, 2))
    # x [1, 1, 3, 3] -> Conv (2x2 ones, bias -14) -> Relu -> ReduceMean over axes [2, 3] (an input from opset 18 on).
    nodes = [crafted_onnx.node("Conv", ["x", "w", "bias"], ["c"], "conv"),
             crafted_onnx.node("Relu", ["c"], ["r"], "relu"),
             crafted_onnx.node("ReduceMean", ["r", "axes"], ["y"], "mean", int_attribute("keepdims", 0))]
    initializers = [make_int8_model.float_tensor("w", [1, 1, 2, 2], [1, 1, 1, 1]),
                    make_int8_model.float_tensor("bias", [1], [-14]), crafted_onnx.tensor("axes", [2], [2, 3])]
    onnx = folder / "conv_relu_mean.onnx"
    onnx.write_bytes(crafted_onnx.model(nodes, initializers,
                                        [crafted_onnx.value_info("x", crafted_onnx.FLOAT, [1, 1, 3, 3])],
                                        [crafted_onnx.value_info("y", crafted_onnx.FLOAT, [1, 1])], opset=21))
    config = folder / "config.json"
    config.write_text('{"target_platform": "rk3588"}')
    out = folder / "conv_relu_mean.hrknn"
    rc, o, e = run([tool, "convert", onnx, "-c", config, "-o", out])
    check("convert: a model of opset 21 (Conv, Relu, ReduceMean-18) converts", rc == 0 and out.is_file(),
          f"{o!r} {e!r}")
    x = folder / "x.npy"
    np.save(x, np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3))
    rc, o, e = run([tool, "run", out, "-i", x, "-o", folder / "out"])
    got = np.load(folder / "out" / "output_0.npy") if rc == 0 and (folder / "out" / "output_0.npy").exists() else None
    # Windows of 2x2 ones over 1..9: 12, 16, 24, 28; minus 14 and Relu: 0, 2, 10, 14; their mean 6.5.
    check("run: the opset-21 model computes mean(relu(conv)) = 6.5", got is not None and got.size == 1
          and abs(float(got.reshape(-1)[0]) - 6.5) <= 6.5 * FP16_TOLERANCE, f"exit {rc}: {o!r} {e!r} {got!r}")
    resize = folder / "antialias.onnx"
    scales = make_int8_model.float_tensor("scales", [4], [1, 1, 0.5, 0.5])
    resize.write_bytes(crafted_onnx.model(
        [crafted_onnx.node("Resize", ["x", "", "scales"], ["y"], "shrink", int_attribute("antialias", 1))], [scales],
        [crafted_onnx.value_info("x", crafted_onnx.FLOAT, [1, 1, 4, 4])],
        [crafted_onnx.value_info("y", crafted_onnx.FLOAT, [1, 1, 2, 2])], opset=18))
    fails_one_line_with("convert: Resize-18 antialias=1 is refused naming the node, operator, opset and attribute",
                        [tool, "convert", resize, "-c", config, "-o", folder / "refused.hrknn"],
                        ["node 'shrink' (Resize)", "opset 18", "antialias=1"])


def quantize_checks(tool, work):
    """Issue 11: convert --dataset makes a w8a8 model the runtime reports as INT8 AFFINE; refusals name the key or line."""
    folder = work / "int8"
    make_int8_model.main(folder)
    config = folder / "config.json"
    config.write_text('{"target_platform": "rk3588", "mean_values": [[120, 110, 100]], "std_values": [[60, 64, 58]]}')
    onnx, dataset, out = folder / "small_cnn.onnx", folder / "dataset.txt", folder / "small_cnn.hrknn"
    rc, o, e = run([tool, "convert", "--help"])
    check("convert --help documents --dataset", rc == 0 and "--dataset" in o and "DATASET.txt" in o, o)
    rc, o, e = run([tool, "convert", onnx, "-c", config, "--dataset", dataset, "-o", out, "--json"])
    try:
        j = json.loads(o) if rc == 0 else {}
    except ValueError:
        j = {}
    q = j.get("quantization") or {}
    check("convert --dataset: a w8a8 model, calibrated on the 16 samples with normal, weights per channel",
          q.get("dtype") == "w8a8" and q.get("samples") == 16 and q.get("algorithm") == "normal"
          and q.get("method") == "channel", f"exit {rc}: {o[:2000]} {e[:2000]}")
    tensors = j.get("inputs", []) + j.get("outputs", [])
    check("convert --dataset: inputs and outputs are INT8 AFFINE, one byte an element",
          len(tensors) == 3 and all(t["type"] == "INT8" and t["quantization"]["type"] == "affine_asymmetric"
                                    and t["size"] == t["n_elems"] for t in tensors), o[:2000])
    rc, o, e = run([tool, "convert", onnx, "-c", config, "-o", folder / "float.hrknn", "--json"])
    check("convert without --dataset: a float model", rc == 0 and json.loads(o)["quantization"] is None, o[:2000])
    rc, o, e = run([tool, "inspect", out])
    check("inspect shows the quantized model's INT8 tensors and how it was quantized",
          rc == 0 and "INT8 NHWC 1x8x8x3, affine_asymmetric" in o and "w8a8 (normal on 16 samples, weights per channel)"
          in o, o[:2000])
    w4 = folder / "w4a16.json"
    w4.write_text('{"target_platform": "rk3588", "quantized_dtype": "w4a16"}')
    fails_one_line("convert --dataset: w4a16 on rk3588 is refused naming the key and the platform",
                   [tool, "convert", onnx, "-c", w4, "--dataset", dataset], "quantized_dtype")
    bad = folder / "bad_dataset.txt"
    bad.write_text("sample_00.npy\nno_such_sample.npy\n")
    fails_one_line("convert --dataset: a missing sample names the dataset line",
                   [tool, "convert", onnx, "-c", config, "--dataset", bad], "bad_dataset.txt:2")
    hybrid_checks(tool, folder)
    qdq_checks(tool, work, config)


def hybrid_checks(tool, folder):
    """Issue 11: convert --dataset --auto-hybrid keeps the layers past the threshold in float16 and lists them."""
    config = folder / "hybrid.json"
    config.write_text('{"target_platform": "rk3588"}')
    onnx, dataset, out = folder / "hybrid_mlp.onnx", folder / "hybrid_dataset.txt", folder / "hybrid_mlp.hrknn"
    rc, o, e = run([tool, "convert", "--help"])
    check("convert --help documents --auto-hybrid and its thresholds",
          rc == 0 and "--auto-hybrid" in o and "auto_hybrid_cos_thresh" in o, o)
    rc, o, e = run([tool, "convert", onnx, "-c", config, "--dataset", dataset, "--auto-hybrid", "-o", out, "--json"])
    try:
        j = json.loads(o) if rc == 0 else {}
    except ValueError:
        j = {}
    layers = j.get("float16_layers") or []
    check("convert --auto-hybrid --json: z's Gemm kept in float16, with its single cosine and distance",
          len(layers) == 1 and layers[0]["name"] == "z" and layers[0]["op_type"] == "Gemm"
          and layers[0]["cosine"] < 0.98 and layers[0]["euclidean"] > 0, f"exit {rc}: {o[:2000]} {e[:2000]}")
    outputs = j.get("outputs", [])
    check("convert --auto-hybrid: the float16 layer's output is FLOAT16 without parameters, the other INT8",
          len(outputs) == 2 and outputs[0]["type"] == "FP16" and outputs[0]["size"] == 2 * outputs[0]["n_elems"]
          and outputs[1]["type"] == "INT8", o[:2000])
    rc, o, e = run([tool, "convert", onnx, "-c", config, "--dataset", dataset, "--auto-hybrid", "-o", out])
    check("convert --auto-hybrid: the table of float16 layers",
          rc == 0 and "1 layer kept in float16" in o and "single cos" in o
          and any(line.split()[:2] == ["z", "Gemm"] for line in o.splitlines()), o[:2000])
    none = folder / "hybrid_none.json"
    none.write_text('{"target_platform": "rk3588", "auto_hybrid_cos_thresh": -1}')
    rc, o, e = run([tool, "convert", onnx, "-c", none, "--dataset", dataset, "--auto-hybrid", "-o", out])
    check("convert --auto-hybrid: no layer past the threshold keeps none and says so",
          rc == 0 and "no layer past the thresholds" in o, o[:2000])
    rc, o, e = run([tool, "convert", onnx, "-c", none, "--dataset", dataset, "-o", out, "--json"])
    check("convert without --auto-hybrid: the thresholds are unused, no float16 layers listed",
          rc == 0 and "float16_layers" not in json.loads(o), o[:2000])
    fails_usage("convert --auto-hybrid without --dataset: usage error", [tool, "convert", onnx, "-c", config,
                "--auto-hybrid"], "--auto-hybrid needs --dataset")
    w8a16 = folder / "hybrid_w8a16.json"
    w8a16.write_text('{"target_platform": "rk3562", "quantized_dtype": "w8a16"}')
    fails_one_line_with("convert --auto-hybrid with w8a16: refused naming both",
                        [tool, "convert", onnx, "-c", w8a16, "--dataset", dataset, "--auto-hybrid"],
                        ["w8a16", "w8a8", "hybrid"])


def qdq_checks(tool, work, config):
    """Issue 11: a QDQ (QAT) model converts without --dataset to w8a8 with its pairs' parameters."""
    folder = work / "qdq"
    make_qdq_model.main(folder)
    expected = {}
    for line in (folder / "qdq_cnn.txt").read_text().splitlines():
        name, scale, zp = line.split()
        expected[name] = (float(scale), int(zp))
    onnx, out = folder / "qdq_cnn.onnx", folder / "qdq_cnn.hrknn"
    rc, o, e = run([tool, "convert", "--help"])
    check("convert --help documents QDQ models", rc == 0 and "QDQ" in o and "QuantizeLinear" in o, o)
    rc, o, e = run([tool, "convert", onnx, "-c", config, "-o", out, "--json"])
    try:
        j = json.loads(o) if rc == 0 else {}
    except ValueError:
        j = {}
    q = j.get("quantization") or {}
    check("convert a QDQ model: w8a8 with no samples", q.get("dtype") == "w8a8" and q.get("samples") == 0,
          f"exit {rc}: {o[:2000]} {e[:2000]}")
    attrs = [(t["name"], t["type"], t["quantization"].get("scale"), t["quantization"].get("zero_point"))
             for t in j.get("inputs", []) + j.get("outputs", [])]
    want = [(n, "INT8", as_float32(expected[p][0]), expected[p][1])
            for n, p in (("image", "image"), ("y", "y"), ("score", "pooled"))]
    check("convert a QDQ model: INT8 AFFINE inputs and outputs with the graph's scales and zero points",
          [(n, t, as_float32(s) if s is not None else None, z) for n, t, s, z in attrs] == want, f"{attrs} {want}")
    rc, o, e = run([tool, "inspect", out])
    check("inspect says where a QDQ model's parameters came from",
          rc == 0 and "w8a8 (from QuantizeLinear/DequantizeLinear pairs)" in o, o[:2000])
    fails_one_line("convert a QDQ model with pairs around some layers only: refused naming the tensor",
                   [tool, "convert", folder / "qdq_partial.onnx", "-c", config], "'y' (output of node 'conv2' (Conv))")
    fails_one_line("convert a QDQ model with --dataset: refused",
                   [tool, "convert", onnx, "-c", config, "--dataset", folder / "qdq_cnn.txt"], "without a dataset")


def as_float32(x):
    """A float32 value as JSON carries it, for comparison."""
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def fails_one_line_with(name, cmd, needles, seconds=None):
    """As fails_one_line, with several things the line must name, and optionally a time limit."""
    started = time.monotonic()
    rc, out, err = run(cmd)
    took = time.monotonic() - started
    lines = [l for l in err.splitlines() if l.strip()]
    ok = rc != 0 and len(lines) == 1 and all(n.lower() in lines[0].lower() for n in needles)
    if seconds is not None and took > seconds:
        ok = False
        err += f" (took {took:.1f} s, more than {seconds} s)"
    check(name, ok, f"exit {rc}, stderr {err.strip()[:2000]!r}")
    return err


def convert_checks(tool, work):
    """Issue 12: what convert refuses (naming the node, tensor, limit, key or file), and where it writes."""
    models = crafted_onnx.write_all(work / "crafted")
    config = work / "rk3588.json"
    config.write_text('{"target_platform": "rk3588"}')

    def convert_fails(name, model, needles, config_path=config, seconds=None):
        return fails_one_line_with(f"convert: {name}", [tool, "convert", models[model], "-c", config_path, "-o",
                                                        work / "refused.hrknn"], needles, seconds)

    # Element counts that wrap 64 bits: refused naming the node and the value, no crash.
    convert_fails("ConstantOfShape to [2^32, 2^32]", "overflow_constant_of_shape",
                  ["node 'fill' (ConstantOfShape)", "'big'", "overflows 64 bits"])
    convert_fails("Expand to [2^32, 2^32]", "overflow_expand", ["node 'expand' (Expand)", "'big'", "overflows 64 bits"])
    convert_fails("Tile to [2^32, 2^32]", "overflow_tile", ["node 'tile' (Tile)", "'big'", "overflows 64 bits"])
    convert_fails("Tile to 4 TiB", "huge_tile", ["node 'tile' (Tile)", "'big'", "4294967295 bytes"])
    # What rknn_tensor_attr cannot describe, naming the limit.
    convert_fails("rank 20 input", "rank_20", ["input 0 'x'", "rank 20", "RKNN_MAX_DIMS (16)"])
    convert_fails("dim 2^32", "dim_2_32", ["input 0 'x'", "4294967296", "32-bit dims"])
    huge = work / "huge_dynamic.json"
    huge.write_text('{"target_platform": "rk3588", "dynamic_input": [[[1, 1, 100000, 100000]]]}')
    convert_fails("100000x100000 dynamic shape, quickly", "dynamic_image",
                  ["input 'image'", "float32 [1, 1, 100000, 100000]", "4294967295 bytes"], huge, seconds=5)
    # Config problems, naming the input and both counts, or the key.
    means = work / "seven_means.json"
    means.write_text('{"target_platform": "rk3588", "mean_values": [[1, 2, 3, 4, 5, 6, 7]]}')
    convert_fails("7 means for a 3-channel input", "rgb_image",
                  ["mean_values[0] has 7 values", "input 0 ('image') has 3 channels"], means)
    duplicate = work / "duplicate_key.json"
    duplicate.write_text('{"target_platform": "rk3588", "target_platform": "rk3566"}')
    convert_fails("a key given twice", "rgb_image", ['"target_platform" is given twice'], duplicate)
    nested = work / "duplicate_nested_key.json"
    nested.write_text('{"target_platform": "rk3588", "op_target": {"conv": "cpu", "conv": "npu"}}')
    convert_fails("a key given twice in op_target", "rgb_image", ['"op_target" gives the key "conv" twice'], nested)
    long_key = work / "long_key.json"
    long_key.write_text('{"target_platform": "rk3588", "' + "k" * (1 << 20) + '": 1}')
    err = convert_fails("a 1 MB unknown key is cut in the message", "rgb_image", ["unknown key", "(1048576 bytes)"],
                        long_key)
    check("convert: the 1 MB key's message stays short", len(err) < 2000, f"{len(err)} bytes")

    # A good conversion says how many inputs the model has.
    out = work / "rgb.hrknn"
    rc, o, e = run([tool, "convert", models["rgb_image"], "-c", config, "-o", out])
    check("convert: reports 1 input", rc == 0 and re.search(r"\b1 input\b", o) and "0 inputs" not in o and out.is_file(),
          f"{o!r} {e!r}")
    rc, o, e = run([tool, "convert", models["rgb_image"], "-c", config, "-o", out])
    check("convert: replaces a regular file", rc == 0 and out.is_file(), e)
    check("convert: leaves no temporary file", sorted(p.name for p in work.glob("rgb.hrknn*")) == ["rgb.hrknn"],
          str(list(work.glob("rgb.hrknn*"))))

    # -o writes a regular file only: a symlink, a directory, a FIFO or a device is refused and left alone.
    target = work / "symlink_target.txt"
    target.write_text("keep me")
    link = work / "link.hrknn"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)
    fails_one_line_with("convert -o SYMLINK is refused", [tool, "convert", models["rgb_image"], "-c", config, "-o", link],
                        ["is a symbolic link", "regular file"])
    check("convert -o SYMLINK leaves the link and its target", link.is_symlink() and target.read_text() == "keep me")
    folder = work / "a_folder.hrknn"
    folder.mkdir(exist_ok=True)
    fails_one_line_with("convert -o DIRECTORY is refused",
                        [tool, "convert", models["rgb_image"], "-c", config, "-o", folder], ["is a directory"])
    fifo = work / "fifo.hrknn"
    if not fifo.exists():
        os.mkfifo(fifo)
    fails_one_line_with("convert -o FIFO is refused (and does not block)",
                        [tool, "convert", models["rgb_image"], "-c", config, "-o", fifo], ["is a FIFO"], seconds=30)
    check("convert -o FIFO leaves the FIFO", stat.S_ISFIFO(os.lstat(fifo).st_mode))
    fails_one_line_with("convert: an unwritable output says why",
                        [tool, "convert", models["rgb_image"], "-c", config, "-o", work / "missing_dir" / "x.hrknn"],
                        ["cannot write", "No such file or directory"])
    if os.geteuid() == 0:  # as root the attack replaced /dev/full: a device node of our own stands in for it
        device = work / "full.hrknn"
        try:
            if not device.exists():
                os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        except OSError as e:  # a container without CAP_MKNOD
            print(f"skip convert -o DEVICE: {e}")
            return
        fails_one_line_with("convert -o DEVICE is refused", [tool, "convert", models["rgb_image"], "-c", config,
                                                            "-o", device], ["is a device"])
        check("convert -o DEVICE leaves the device node", stat.S_ISCHR(os.lstat(device).st_mode))


def small_model_checks(tool, work, models):
    """The options that need a model, on the small generated dyncnn (a 62 KB ONNX file)."""
    onnx = models / "dyn/dyncnn.onnx"
    if not onnx.exists():
        print(f"skipped: {onnx} is missing (tests/models/fetch.sh); the small-model checks did not run")
        return
    config = work / "dyncnn_rk3566.json"
    config.write_text(json.dumps({"target_platform": "rk3566", "mean_values": [[123.675, 116.28, 103.53]],
                                  "std_values": [[58.395, 57.12, 57.375]], "custom_string": "cli test model",
                                  "dynamic_input": [[[1, 3, 96, 96]], [[1, 3, 64, 64]]]}))
    model = work / "dyncnn_rk3566.hrknn"
    rc, out, err = run([tool, "convert", onnx, "-c", config, "-o", model])
    check("convert: the summary counts the model's 1 input and 2 outputs",
          rc == 0 and "rk3566" in out and "1 input," in out and "2 outputs" in out, out + err)
    rc, out, err = run([tool, "convert", onnx, "-c", config, "-o", model, "--json"])
    try:
        j = json.loads(out)
        check("convert --json: platform, inputs with their normalization, outputs, shapes",
              rc == 0 and j["target_platform"] == "rk3566" and len(j["inputs"]) == 1 and len(j["outputs"]) == 2
              and j["inputs"][0]["preprocess"]["mean"] == [123.675, 116.28, 103.53] and j["dynamic_shapes"] == 2
              and j["custom_string"] == "cli test model" and j["output"] == str(model), out[:400])
    except (ValueError, KeyError, IndexError) as e:
        check("convert --json: parses", False, f"{e}: {out[:200]} {err}")

    rc, out, err = run([tool, "inspect", model])
    check("inspect: shows the target platform, mean/std and the custom string",
          rc == 0 and "target:   rk3566" in out
          and "mean/std: input 0: mean [123.675, 116.28, 103.53], std [58.395, 57.12, 57.375]" in out
          and 'custom string: "cli test model"' in out, out + err)
    rc, out, err = run([tool, "inspect", model, "--json"])
    try:
        j = json.loads(out)
        check("inspect --json: model_file has target_platform and preprocess",
              j["model_file"]["target_platform"] == "rk3566" and j["model_file"]["preprocess"][0]["std"][2] == 57.375,
              out[:300])
    except (ValueError, KeyError, IndexError) as e:
        check("inspect --json: parses", False, f"{e}: {err}")

    # run: --core-mask on a single-core chip says why; --resize and --bgr change what is fed.
    image = work / "wide.png"
    write_png(image, 64, 32, 3, color=(200, 60, 10))
    fails_one_line("run --core-mask 1 on a single-core chip says why (without -v)",
                   [tool, "run", model, "-i", image, "--core-mask", "1", "-o", work / "out_mask"], "single NPU core")
    results = {}
    for name, extra in (("stretch", []), ("letterbox", ["--resize", "letterbox"]),
                        ("letterbox_bgr", ["--resize", "letterbox", "--bgr"])):
        outdir = work / f"out_{name}"
        rc, out, err = run([tool, "run", model, "-i", image, "-o", outdir, "--shape", "1x3x64x64"] + extra)
        results[name] = np.load(outdir / "output_0.npy") if rc == 0 and (outdir / "output_0.npy").exists() else None
        check(f"run {' '.join(extra) or '(stretch)'}: runs and says how the image was fit", rc == 0 and (
            "letterboxed" if "letterbox" in name else "stretched") in out and ("BGR" in out) == ("bgr" in name),
              out + err)
    if all(r is not None for r in results.values()):
        check("run: letterbox feeds other pixels than stretch, and --bgr others than RGB",
              not np.array_equal(results["stretch"], results["letterbox"])
              and not np.array_equal(results["letterbox"], results["letterbox_bgr"]))
    rc, out, err = run([tool, "run", model, "-i", image, "--shape", "1x3x64x64", "-o", work / "out_json", "--json",
                        "--resize", "letterbox", "--bgr"])
    try:
        j = json.loads(out)
        check("run --json: the input says resize and channel order",
              j["inputs"][0]["resize"] == "letterbox" and j["inputs"][0]["channel_order"] == "BGR", out[:300])
    except (ValueError, KeyError, IndexError) as e:
        check("run --json: parses", False, f"{e}: {err}")

    # profile
    svg = work / "profile.svg"
    rc, out, err = run([tool, "profile", model, "-n", "2", "--svg", svg])
    rows = [l.split() for l in out.splitlines() if l.startswith("  ") and len(l.split()) >= 4 and l.split()[0].isdigit()]
    times = [float(r[2]) for r in rows]
    check("profile: a table of operators, slowest first, with types and a by-type summary",
          rc == 0 and len(rows) >= 3 and times == sorted(times, reverse=True) and "Conv" in out
          and "by operator type:" in out, out + err)
    text = svg.read_text() if svg.exists() else ""
    check("profile --svg: an SVG bar chart naming operators with their ms",
          text.startswith("<svg") and text.rstrip().endswith("</svg>") and "<rect" in text and " ms (" in text
          and "Conv" in text, text[:300])
    rc, out, err = run([tool, "profile", model, "--json"])
    try:
        j = json.loads(out)
        ms = [o["ms"] for o in j["operators"]]
        check("profile --json: every operator sorted by time, shares summing to 1, time per type",
              rc == 0 and len(ms) >= 3 and ms == sorted(ms, reverse=True)
              and abs(sum(o["share"] for o in j["operators"]) - 1) < 1e-6 and "Conv" in j["by_type"]
              and j["total_ms"] > 0, out[:300])
        # The columns split where the runtime's table does: each name is the node's, with no piece of
        # the shape column in it.
        check("profile --json: operator names are the nodes' (the table's columns parsed as such)",
              all(o["name"].startswith("node '") and "]" not in o["name"] for o in j["operators"]),
              [o["name"] for o in j["operators"]][:5])
    except (ValueError, KeyError, IndexError) as e:
        check("profile --json: parses", False, f"{e}: {err}")


def accuracy_checks(tool, work, models):
    """rknnxx accuracy (issue 11) on the small dyncnn: the table, the CSV/JSON/SVG files, --json, and
    one-line errors for what is wrong."""
    onnx = models / "dyn/dyncnn.onnx"
    if not onnx.exists():
        print(f"skipped: {onnx} is missing (tests/models/fetch.sh); the accuracy checks did not run")
        return
    folder = work / "accuracy_data"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    for i in range(3):  # the MaxShape of dynamic_input below, normalized already (mean 0, std 1)
        np.save(folder / f"sample_{i}.npy", rng.standard_normal((1, 3, 64, 64)).astype(np.float32))
    dataset = folder / "dataset.txt"
    dataset.write_text("sample_0.npy\nsample_1.npy\n\nsample_2.npy\n")  # relative to the dataset's folder
    config = work / "accuracy.json"
    config.write_text(json.dumps({"target_platform": "rk3588", "quantized_algorithm": "normal",
                                  "dynamic_input": [[[1, 3, 48, 48]], [[1, 3, 64, 64]]]}))
    out_dir = work / "accuracy_out"
    base = [tool, "accuracy", onnx, "-c", config, "--dataset", dataset]
    rc, out, err = run(base + ["-o", out_dir])
    lines = out.splitlines()
    header = next((i for i, l in enumerate(lines) if "entire cos" in l and "single cos" in l), None)
    rows = [l for l in lines[header + 1:] if l.startswith("  ")] if header is not None else []
    cosines = []
    for r in rows:
        try:
            cosines += [float(r.split()[-4]), float(r.split()[-2])]
        except (ValueError, IndexError):
            cosines.append(None)
    check("accuracy: a table of every calibrated tensor, input first, with cosines in [-1, 1]",
          rc == 0 and len(rows) >= 4 and rows[0].split()[2] == "input"
          and all(c is not None and -1 <= c <= 1 for c in cosines) and "calibrated on 3 samples" in out, out + err)
    check("accuracy: the table's columns are aligned", len({len(lines[header])} | {len(r) for r in rows}) == 1
          if rows else False, "\n".join(lines[:6]))
    check("accuracy: stderr is quiet when it is not a terminal (no progress bar)", err == "", err)
    csv_path, json_path, svg_path = (out_dir / f"accuracy.{e}" for e in ("csv", "json", "svg"))
    try:
        import csv
        with open(csv_path, newline="") as f:
            table = list(csv.DictReader(f))
        report = json.loads(json_path.read_text())
        check("accuracy: accuracy.csv has a row per tensor with both cosines and distances",
              len(table) == len(rows) and all(float(t["single_cosine"]) <= 1 + 1e-9 and float(t["entire_euclidean"]) >= 0
                                              for t in table), str(table[:2]))
        check("accuracy: accuracy.json names the settings and lists the same tensors",
              report["quantized_algorithm"] == "normal" and report["quantized_method"] == "channel"
              and report["calibration_samples"] == 3 and [l["name"] for l in report["layers"]] == [t["name"] for t in table]
              and report["layers"][0]["op_type"] == "input", json_path.read_text()[:300])
        svg = svg_path.read_text()
        check("accuracy: accuracy.svg plots entire and single per tensor, named",
              svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and svg.count("<polyline") == 2
              and "entire" in svg and "single" in svg and table[-1]["name"] in svg, svg[:300])
    except (OSError, ValueError, KeyError, IndexError) as e:
        check("accuracy: writes accuracy.csv, accuracy.json, accuracy.svg", False, str(e))
    rc, out, err = run(base + ["-o", out_dir, "--json", "-i", folder / "sample_2.npy"])
    try:
        j = json.loads(out)
        check("accuracy --json -i: JSON on stdout for the given input, as in the file",
              rc == 0 and j["inputs"] == [str(folder / "sample_2.npy")] and j == json.loads(json_path.read_text()),
              out[:300])
    except ValueError as e:
        check("accuracy --json: parses", False, f"{e}: {out[:200]} {err}")
    rc, out, err = run([tool, "accuracy", "--help"])
    check("accuracy --help explains entire and single and lists the options",
          rc == 0 and "entire" in out and "single" in out and all(o in out for o in ("--dataset", "-i", "-o", "--json")),
          out)

    # What is wrong, in one line.
    fails_usage("accuracy without --dataset: usage error", [tool, "accuracy", onnx, "-c", config], "--dataset")
    fails_usage("accuracy --threads 0: usage error", base + ["--threads", "0"], "0 is not a whole number")
    wrong_shape = folder / "wrong_shape.npy"
    np.save(wrong_shape, np.zeros((1, 3, 32, 32), np.float32))
    fails_one_line_with("accuracy -i: an array of another shape names the expected one",
                        base + ["-o", out_dir, "-i", wrong_shape], ["wrong_shape.npy", "[1, 3, 64, 64]"])
    fails_usage("accuracy -i: two files for a model of one input", base + ["-i", wrong_shape, wrong_shape],
                "the model has 1 input")
    missing = folder / "missing.txt"
    missing.write_text("sample_0.npy\nnot_there.npy\n")
    fails_one_line_with("accuracy: a dataset line with a missing file names the line and the file",
                        [tool, "accuracy", onnx, "-c", config, "--dataset", missing, "-o", out_dir],
                        ["missing.txt:2", "not_there.npy"])
    w4 = work / "accuracy_w4a16.json"
    w4.write_text(json.dumps({"target_platform": "rk3588", "quantized_dtype": "w4a16",
                              "dynamic_input": [[[1, 3, 64, 64]]]}))
    fails_one_line_with("accuracy: a quantized_dtype the platform lacks is refused naming both",
                        [tool, "accuracy", onnx, "-c", w4, "--dataset", dataset], ["w4a16", "rk3588"])
    a_file = work / "accuracy_not_a_dir"
    a_file.write_text("x")
    fails_one_line_with("accuracy -o FILE: says it is not a directory", base + ["-o", a_file], ["not a directory"])


def convert(tool, onnx, config, out, config_json):
    Path(config).write_text(json.dumps(config_json))
    if out.exists() and out.stat().st_mtime >= max(Path(onnx).stat().st_mtime, Path(config).stat().st_mtime):
        return True
    rc, o, e = run([tool, "convert", onnx, "-c", config, "-o", out])
    check(f"convert {Path(onnx).name}", rc == 0 and out.exists(), e.strip())
    return rc == 0


def model_checks(tool, ocr, work, models, repo, examples_off=False):
    # A static classifier and a dynamic-shape CNN (the SDK guide's shape set).
    mobilenet = work / "mobilenet_v2.hrknn"
    dyncnn = work / "dyncnn.hrknn"
    if not convert(tool, models / "vision/mobilenet_v2.onnx", work / "mobilenet.json", mobilenet,
                   {"target_platform": "rk3588"}):
        return
    if not convert(tool, models / "dyn/dyncnn.onnx", work / "dyncnn.json", dyncnn,
                   {"target_platform": "rk3588",
                    "dynamic_input": [[[1, 3, 224, 224]], [[1, 3, 192, 192]], [[1, 3, 160, 160]]]}):
        return

    # inspect
    rc, out, err = run([tool, "inspect", mobilenet])
    check("inspect: text names runtime, SDK, native attributes, static shapes",
          rc == 0 and "runtime:" in out and "SDK" in out and "native NHWC" in out and "static model" in out,
          out + err)
    rc, out, err = run([tool, "inspect", mobilenet, "--json"])
    try:
        j = json.loads(out)
        check("inspect --json: parses, input NHWC 1x224x224x3, output 1x1000, static",
              j["inputs"][0]["normal"]["dims"] == [1, 224, 224, 3] and j["inputs"][0]["normal"]["format"] == "NHWC"
              and j["outputs"][0]["normal"]["dims"] == [1, 1000] and j["dynamic_shapes"] is None
              and j["runtime"]["kind"] in ("host", "vendor") and "native" in j["inputs"][0]
              and j["sdk_version"]["api"] != "", out[:400])
    except (ValueError, KeyError, IndexError) as e:
        check("inspect --json: parses", False, f"{e}: {out[:200]} {err}")
    rc, out, err = run([tool, "inspect", dyncnn, "--json"])
    try:
        j = json.loads(out)
        check("inspect --json: dynamic model lists its 3 shapes in NHWC",
              j["dynamic_shapes"] == [[[1, 224, 224, 3]], [[1, 192, 192, 3]], [[1, 160, 160, 3]]], str(j["dynamic_shapes"]))
    except (ValueError, KeyError) as e:
        check("inspect --json: dynamic model parses", False, f"{e}: {err}")

    # run: reference input (NCHW float32 .npy) -> the ONNX Runtime reference output
    ref = models / "ref/mobilenet_v2"
    outdir = work / "run_mobilenet"
    rc, out, err = run([tool, "run", mobilenet, "--input", ref / "input_0.npy", "-o", outdir])
    ok = rc == 0 and (outdir / "output_0.npy").exists()
    if ok:
        got = np.load(outdir / "output_0.npy")
        want = np.load(ref / "output_0.npy")
        rel = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        ok = got.shape == want.shape and rel <= FP16_TOLERANCE
        err += f" rel error {rel}"
    check("run: .npy input, output_0.npy equals the ONNX Runtime reference", ok, err.strip())
    check("run: text summary has the runtime line and a top-5", "runtime: " in out and "top-5:" in out, out)
    rc, out, err = run([tool, "run", mobilenet, "--input", ref / "input_0.npy", "-o", outdir, "--json"])
    try:
        j = json.loads(out)
        want_top = int(np.argmax(np.load(ref / "output_0.npy")))
        check("run --json: parses, top-5 led by the reference's argmax",
              len(j["outputs"][0]["top"]) == 5 and j["outputs"][0]["top"][0]["class"] == want_top
              and j["outputs"][0]["dims"] == [1, 1000], out[:300])
    except (ValueError, KeyError, IndexError) as e:
        check("run --json: parses", False, f"{e}: {err}")
    demo_png = repo / "examples/ocr/data/rknnxx_demo.png"
    rc, out, err = run([tool, "run", mobilenet, "--input", demo_png, "-o", outdir])
    check("run: a PNG is resized to the input (224x224 RGB)", rc == 0 and "image" in out, out + err)

    # bad inputs
    np.save(work / "f64.npy", np.zeros((1, 3, 224, 224), dtype=np.float64))
    fails_one_line("run: .npy of the wrong dtype", [tool, "run", mobilenet, "--input", work / "f64.npy"], "float64")
    np.save(work / "small.npy", np.zeros((1, 3, 32, 32), dtype=np.float32))
    fails_one_line("run: .npy of the wrong shape", [tool, "run", mobilenet, "--input", work / "small.npy"], "1x3x32x32")
    (work / "corrupt.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    fails_one_line("run: corrupt .npy", [tool, "run", mobilenet, "--input", work / "corrupt.npy"], "corrupt.npy")
    fails_one_line("run: missing input file", [tool, "run", mobilenet, "--input", work / "nothing.npy"], "no such file")
    write_png(work / "gray.png", 40, 30, 1)
    fails_one_line("run: gray image for an RGB input", [tool, "run", mobilenet, "--input", work / "gray.png"], "gray")
    write_png(work / "rgba.png", 40, 30, 4)
    fails_one_line("run: RGBA image for an RGB input", [tool, "run", mobilenet, "--input", work / "rgba.png"], "RGBA")
    (work / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    fails_one_line("run: corrupt PNG", [tool, "run", mobilenet, "--input", work / "broken.png"], "broken.png")
    fails_one_line("run: --shape on a static model",
                   [tool, "run", mobilenet, "--input", ref / "input_0.npy", "--shape", "1x3x224x224"], "static")
    fails_one_line("run: two inputs for a one-input model",
                   [tool, "run", mobilenet, "--input", ref / "input_0.npy", ref / "input_0.npy"], "1 input")

    # dynamic shapes
    ref192 = models / "ref/dyncnn_192x192"
    out192 = work / "run_dyn192"
    rc, out, err = run([tool, "run", dyncnn, "--input", ref192 / "input_0.npy", "-o", out192])
    ok = rc == 0 and "group 1" in out
    if ok:
        for k in (0, 1):
            got, want = np.load(out192 / f"output_{k}.npy"), np.load(ref192 / f"output_{k}.npy")
            ok = ok and got.shape == want.shape and float(np.max(np.abs(got - want)) / np.max(np.abs(want))) <= FP16_TOLERANCE
    check("run: a dynamic model picks the shape of the .npy (192x192) and matches the reference", ok, out + err)
    rc, out, err = run([tool, "run", dyncnn, "--input", demo_png, "--shape", "1x3x160x160", "-o", work / "run_dyn160",
                        "--json"])
    try:
        j = json.loads(out)
        check("run --shape 1x3x160x160 (NCHW) with an image: group 2, features 1x32x40x40",
              rc == 0 and j["shape_group"] == 2 and j["outputs"][1]["dims"] == [1, 32, 40, 40], out[:300] + err)
    except (ValueError, KeyError, IndexError) as e:
        check("run --shape --json parses", False, f"{e}: {err}")
    fails_one_line("run: --shape outside the shape set",
                   [tool, "run", dyncnn, "--input", demo_png, "--shape", "1x3x100x100"], "not in the model's shape set")
    fails_one_line("run: --shape that is not a shape", [tool, "run", dyncnn, "--input", demo_png, "--shape", "big"],
                   "not a shape")

    # bench
    rc, out, err = run([tool, "bench", mobilenet, "-n", "3", "-w", "1", "--json"])
    try:
        j = json.loads(out)
        g, z = j["general"], j["zero_copy"]
        check("bench --json: general and zero-copy phases with min <= median <= p99, throughput",
              all(g[p]["min_ms"] <= g[p]["median_ms"] <= g[p]["p99_ms"] for p in ("inputs_set", "run", "outputs_get", "total"))
              and g["total"]["count"] == 3 and g["throughput_per_s"] > 0 and z["run"]["count"] == 3
              and z["throughput_per_s"] > 0, out[:400])
    except (ValueError, KeyError) as e:
        check("bench --json: parses", False, f"{e}: {err}")
    check("bench: no progress bar when stderr is not a terminal", "\r" not in err, repr(err[:200]))
    rc, out, err = run([tool, "bench", dyncnn, "-n", "2", "-w", "0", "--threads", "2", "--shape", "1x160x160x3",
                        "--core-mask", "0"])
    check("bench: text, --threads 2 (a dynamic model: one context each), --core-mask, --shape (NHWC)",
          rc == 0 and "inputs_set" in out and "zero-copy" in out and "2 contexts" in out and "group 2" in out, out + err)
    rc, out, err = run([tool, "bench", mobilenet, "-n", "2", "-w", "1", "--threads", "2", "--json"])
    try:
        j = json.loads(out)
        check("bench --threads 2 --json: a pool of duplicated contexts", rc == 0 and j["parallel"]["total"]["count"] == 4
              and j["parallel"]["throughput_per_s"] > 0, out[:300])
    except (ValueError, KeyError, TypeError) as e:
        check("bench --threads 2 --json: parses", False, f"{e}: {err}")
    fails_one_line("bench: bad --core-mask", [tool, "bench", mobilenet, "--core-mask", "7"], "core mask")

    # OCR: the demo's models, image and text
    if ocr is None and examples_off:
        print("skipped: the OCR example's checks (a build with -Dexamples=false)")
        return
    if ocr is None or not ocr.exists():
        check("examples/ocr built (libstb-dev)", False, f"{ocr} is missing")
        return
    ocr_models = work / "ocr"
    ocr_models.mkdir(exist_ok=True)
    det_cfg = json.loads((repo / "examples/ocr/det.json").read_text())
    rec_cfg = json.loads((repo / "examples/ocr/rec.json").read_text())
    if not (convert(tool, models / "ocr/det.onnx", ocr_models / "det.json", ocr_models / "det.hrknn", det_cfg) and
            convert(tool, models / "ocr/rec.onnx", ocr_models / "rec.json", ocr_models / "rec.hrknn", rec_cfg)):
        return
    (ocr_models / "dict.txt").write_bytes((models / "ocr/dict.txt").read_bytes())
    annotated = work / "ocr_annotated.png"
    rc, out, err = run([ocr, demo_png, "--models", ocr_models, "--output", annotated])
    # "  [   x,   y    wxh  ] 0.987  TEXT"
    texts = [l.split("] ", 1)[1].split("  ", 1)[1] for l in out.splitlines() if l.startswith("  [") and "] " in l]
    check("ocr: reads the demo image's three lines exactly", rc == 0 and texts == OCR_EXPECTED, f"{texts} {out} {err}")
    check("ocr: says which runtime ran", "runtime: host" in out or "runtime: vendor" in out, out)
    check("ocr: writes the annotated image", annotated.exists() and annotated.read_bytes()[:4] == b"\x89PNG")
    fails_one_line("ocr: missing image", [ocr, work / "nothing.png", "--models", ocr_models], "nothing.png")
    fails_one_line("ocr: missing models", [ocr, demo_png, "--models", work / "no_models"], "no such file")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rknnxx", required=True)
    ap.add_argument("--ocr")
    ap.add_argument("--examples-off", action="store_true", help="the build has no examples: skip the OCR checks")
    ap.add_argument("--work", required=True)
    ap.add_argument("--models")
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("--light", action="store_true")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    tool = Path(a.rknnxx)
    light_checks(tool, work)
    models = Path(a.models or os.environ.get("RKNNXX_MODELS") or Path(a.repo) / "build/models")
    small_model_checks(tool, work, models)
    accuracy_checks(tool, work, models)
    if not a.light:
        needed = ["vision/mobilenet_v2.onnx", "dyn/dyncnn.onnx", "ocr/det.onnx", "ocr/rec.onnx", "ocr/dict.txt",
                  "ref/mobilenet_v2/input_0.npy", "ref/dyncnn_192x192/input_0.npy"]
        if not all((models / n).exists() for n in needed):
            print(f"skipped: the real models are not in {models}; run tests/models/fetch.sh")
            sys.exit(77)
        model_checks(tool, Path(a.ocr) if a.ocr else None, work, models, Path(a.repo), a.examples_off)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
