#!/usr/bin/python3
"""w8a8 accuracy of the torchvision classifiers (issue 11), the way a toolkit user measures it: each model is
converted float and w8a8 (normal, mmse, kl_divergence) with `rknnxx convert`, calibrated on 20 N(0, 1) arrays
(what the seeded exports were made for), then 10 other arrays run through every converted model with
`rknnxx run`; the logits of each w8a8 model are compared with the float model's (cosine, top-1 agreement).
Prints one line per check and `N passed, N failed`; exits 77 (skipped) when the models were not fetched
(tests/models/fetch.sh).

  vision_int8_test.py --rknnxx PATH --work DIR [--models DIR] [--calibration N] [--samples N]
"""
import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from script_checks import check, finish, run

REPO = Path(__file__).resolve().parents[2]
NETWORKS = ("resnet18", "mobilenet_v2")
ALGORITHMS = ("normal", "mmse", "kl_divergence")
# The bound on the worst logits cosine of a w8a8 model against the float one. Top-1 agreement is reported,
# but random-weight classifiers have flat logits whose top two often lie closer than any int8 rounding: the
# check is that every input whose float top-1 leads the runner-up by more than twice the largest logit error
# of the w8a8 model (a lead that rounding cannot overturn) keeps its class.
MIN_COSINE = 0.95


def gaussian_arrays(folder, seed, count):
    """count .npy files of N(0, 1) float32 in the model's NCHW order, one generator seed per set."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    files = []
    for i in range(count):
        f = folder / f"{i:03d}.npy"
        np.save(f, rng.standard_normal((1, 3, 224, 224), dtype=np.float32))
        files.append(f)
    return files


def logits(rknnxx, model, array, out_dir):
    rc, _, err, _ = run([rknnxx, "run", model, "-i", array, "-o", out_dir, "--json"])
    if rc != 0:
        raise RuntimeError(f"rknnxx run {model.name} {array.name}: {err.strip()}")
    return np.load(out_dir / "output_0.npy").astype(np.float64).ravel()


def lead(logits):
    """How far the top class leads the runner-up."""
    top2 = np.sort(logits)[-2:]
    return float(top2[1] - top2[0])


def cosine(a, b):
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rknnxx", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--models", type=Path)
    ap.add_argument("--calibration", type=int, default=20, help="calibration arrays per model (default 20)")
    ap.add_argument("--samples", type=int, default=10, help="test arrays per model (default 10)")
    a = ap.parse_args()
    models = a.models or Path(os.environ.get("RKNNXX_MODELS") or REPO / "build/models")
    if not all((models / "vision" / f"{n}.onnx").exists() for n in NETWORKS):
        print(f"skipped: the vision models are not in {models}/vision; run tests/models/fetch.sh")
        sys.exit(77)
    work = a.work
    calibration = gaussian_arrays(work / "calibration", 0, a.calibration)
    (work / "dataset.txt").write_text("".join(f"{f.relative_to(work)}\n" for f in calibration))
    tests = gaussian_arrays(work / "test", 1000, a.samples)
    out_dir = work / "out"
    out_dir.mkdir(exist_ok=True)

    for net in NETWORKS:
        onnx = models / "vision" / f"{net}.onnx"
        converted = {}
        for algorithm in (None,) + ALGORITHMS:
            tag = algorithm or "float"
            config = work / f"{net}_{tag}.json"
            config.write_text(json.dumps({"target_platform": "rk3588"} |
                                         ({"quantized_algorithm": algorithm} if algorithm else {})))
            target = work / f"{net}_{tag}.hrknn"
            rc, _, err, seconds = run([a.rknnxx, "convert", onnx, "-c", config, "-o", target] +
                                      (["--dataset", work / "dataset.txt"] if algorithm else []))
            what = f"w8a8 {algorithm}, {a.calibration} calibration arrays" if algorithm else "float16"
            if check(f"convert {net} ({what}) in {seconds:.1f} s", rc == 0, err.strip()):
                converted[tag] = target
        if "float" not in converted:
            continue
        reference = [logits(a.rknnxx, converted["float"], t, out_dir) for t in tests]
        for algorithm in ALGORITHMS:
            if algorithm not in converted:
                continue
            got = [logits(a.rknnxx, converted[algorithm], t, out_dir) for t in tests]
            cos = [cosine(g, r) for g, r in zip(got, reference)]
            agree = sum(int(np.argmax(g) == np.argmax(r)) for g, r in zip(got, reference))
            decisive = [(g, r) for g, r in zip(got, reference) if lead(r) > 2 * np.max(np.abs(g - r))]
            kept = sum(int(np.argmax(g) == np.argmax(r)) for g, r in decisive)
            check(f"{net} w8a8 {algorithm:13s}: logits cosine mean {np.mean(cos):.5f}, min {min(cos):.5f}; "
                  f"top-1 agreement {agree}/{len(tests)} ({kept}/{len(decisive)} with a decisive lead)",
                  min(cos) > MIN_COSINE and kept == len(decisive),
                  f"bounds: cosine > {MIN_COSINE}, every decisive top-1 kept")
    finish()


if __name__ == "__main__":
    main()
