#!/usr/bin/python3
"""The real networks of the operator-coverage tests (issue 15) as a user runs them: every case of
ref/networks.json (tests/models/fetch.sh; the models of export_networks.py) is converted with
`rknnxx convert` and run once through the C interface with `rknnxx run` on the case's inputs, and
each output is compared with ONNX Runtime's under the references' rule, max|a - ref| / max|ref|.

A converted float model holds float16 tensors and computes with float16 activations, as on the
board, so the bounds are those of the engine's float16 runs of the classifiers and OCR models
(tests/models/engine_models_test.cpp): worst element within 2e-2, mean within 5e-3. The QDQ model
converts to w8a8 and runs in int8 with the pairs' parameters; ONNX Runtime runs the same pairs in
float, so the two differ where a rounding lands on the other side of a half step, each such flip
moving a value by a whole step of its tensor; its bounds are its manifest's (cases.mjs says why).

A detector's outputs (a manifest with "detection": boxes [N, 4], scores [N], labels [N], N decided
by its post-processing while running) are compared as a set, since float16 may order two close
scores the other way: the same N, and every reference detection matched by one of the same label
whose box corners and score are within the worst-element bound (boxes relative to the largest
coordinate). The export's score threshold keeps every score away from it (export_networks.py).

Prints one line per check, with the errors and times measured, and `N passed, N failed`; exits 77
(skipped) when the networks were not fetched.

  networks_test.py --rknnxx PATH --work DIR [--models DIR] [--case NAME ...]
"""
import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "quantize"))
from script_checks import check, finish, run  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MAX_BOUND = 2e-2  # engine_models_test.cpp's kFloat16Bound
MEAN_BOUND = 5e-3  # engine_models_test.cpp's kFloat16MeanBound


def errors(got, want):
    """(max, mean) of |got - want| over max|want|: the references' rule and its average."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.max(np.abs(want)))
    diff = np.abs(got - want)
    return float(diff.max()) / scale, float(diff.mean()) / scale


def match_detections(name, got, want, bound):
    """Checks a detector's (boxes, scores, labels) against the reference's as a set (the docstring)."""
    (gb, gs, gl), (wb, ws, wl) = got, want
    if not check(f"{name}: {len(ws)} detections, as ONNX Runtime (got {len(gs)})", len(gs) == len(ws) and len(ws) > 0,
                 f"scores {np.round(gs, 4).tolist()} against {np.round(ws, 4).tolist()}"):
        return
    scale = float(np.max(np.abs(wb)))
    unmatched = list(range(len(gs)))
    worst_box, worst_score, missing = 0.0, 0.0, []
    for i in np.argsort(-ws, kind="stable"):
        candidates = [j for j in unmatched if gl[j] == wl[i]]
        if not candidates:
            missing.append(int(i))
            continue
        j = min(candidates, key=lambda j: float(np.max(np.abs(gb[j] - wb[i]))))
        box, score = float(np.max(np.abs(gb[j] - wb[i]))) / scale, abs(float(gs[j]) - float(ws[i]))
        if box > bound or score > bound:
            missing.append(int(i))
            continue
        unmatched.remove(j)
        worst_box, worst_score = max(worst_box, box), max(worst_score, score)
    check(f"{name}: every detection matches one of ONNX Runtime's (label, box within {bound:g} of the largest "
          f"coordinate: worst {worst_box:.3g}, score within {bound:g}: worst {worst_score:.3g})", not missing,
          f"reference detections without a match: {missing}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rknnxx", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--models", type=Path)
    ap.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    a = ap.parse_args()
    models = a.models or Path(os.environ.get("RKNNXX_MODELS") or REPO / "build/models")
    index = models / "ref" / "networks.json"
    if not index.exists():
        print(f"skipped: no real networks in {models} ({index} is missing); run tests/models/fetch.sh")
        sys.exit(77)
    cases = [c for c in json.loads(index.read_text()) if not a.case or c["case"] in a.case]
    a.work.mkdir(parents=True, exist_ok=True)
    config = a.work / "rk3588.json"
    config.write_text(json.dumps({"target_platform": "rk3588"}))

    for entry in cases:
        name = entry["case"]
        ref = models / entry["dir"]
        manifest = json.loads((ref / "manifest.json").read_text())
        onnx = models / manifest["model"]
        converted = a.work / f"{name}.hrknn"
        converted.unlink(missing_ok=True)
        rc, out, err, convert_s = run([a.rknnxx, "convert", onnx, "-c", config, "-o", converted, "--json"], timeout=1800)
        if not check(f"{name}: rknnxx convert {onnx.name} ({convert_s:.1f} s)", rc == 0 and converted.exists(),
                     (err or out).strip()[-2000:]):
            continue
        quantization = json.loads(out).get("quantization")
        out_dir = a.work / f"{name}_out"
        inputs = [ref / t["file"] for t in manifest["inputs"]]
        rc, out, err, run_s = run([a.rknnxx, "run", converted, "--input", *inputs, "-o", out_dir, "--json"],
                                  timeout=1800)
        if not check(f"{name}: rknnxx run ({run_s:.1f} s)", rc == 0, (err or out).strip()[-2000:]):
            continue
        mode = "w8a8 from the model's QDQ pairs" if quantization else "float16 activations"
        if manifest.get("detection"):
            # OUTPUT_ATTR reports the largest shape, what a board program allocates; the run gives
            # the actual count (docs/c-interface.md#run-time-output-shapes).
            rc, out, err, _ = run([a.rknnxx, "inspect", converted, "--json"], timeout=600)
            dims = [o["normal"]["dims"] for o in json.loads(out)["outputs"]] if rc == 0 else None
            check(f"{name}: OUTPUT_ATTR reports the bounds [[100, 4], [100], [100]] (detections_per_img)",
                  dims == [[100, 4], [100], [100]], f"got {dims} {err.strip()[-500:]}")
            got = [np.load(out_dir / f"output_{i}.npy") for i in range(3)]
            want = [np.load(ref / t["file"]) for t in manifest["outputs"]]
            match_detections(name, got, want, MAX_BOUND)
            continue
        # The float16 bounds, or the case's own when wider (the QDQ model's: cases.mjs says why).
        max_bound = max(MAX_BOUND, manifest["tolerance"]["max"])
        mean_bound = max(MEAN_BOUND, manifest["tolerance"].get("mean", 0))
        for i, t in enumerate(manifest["outputs"]):
            got, want = np.load(out_dir / f"output_{i}.npy"), np.load(ref / t["file"])
            if not check(f"{name}: output {i} '{t['name']}' has the reference's shape {list(want.shape)}",
                         got.shape == want.shape, f"got {list(got.shape)}"):
                continue
            worst, mean = errors(got, want)
            check(f"{name}: output {i} '{t['name']}' matches ONNX Runtime ({mode}): relative error {worst:.3g} "
                  f"(bound {max_bound:g}), mean {mean:.3g} (bound {mean_bound:g})",
                  worst <= max_bound and mean <= mean_bound)
    finish()


if __name__ == "__main__":
    main()
