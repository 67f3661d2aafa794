#!/usr/bin/env python3
"""The int8 OCR path of `./scripts/demo.sh --int8` (issue 11): renders the project's own calibration set
(examples/ocr/data/make_calibration_set.py), converts the PaddleOCR v4 detector and recognizer to w8a8 with
`rknnxx convert --dataset`, runs examples/ocr on the demo image and checks that it reads the three lines
exactly. Prints one line per check and `N passed, N failed`; exits 77 (skipped) when the models were not
fetched (tests/models/fetch.sh).

  ocr_int8_test.py --rknnxx PATH --ocr PATH --work DIR [--models DIR] [--count N]
"""
import argparse
import os
import sys
from pathlib import Path

from script_checks import check, finish, run

REPO = Path(__file__).resolve().parents[2]
EXPECTED = ["Rockchip NPU 2026", "rknnxx runs on any PC", "OCR on the host runtime"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rknnxx", required=True, type=Path)
    ap.add_argument("--ocr", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--models", type=Path)
    ap.add_argument("--count", type=int, help="calibration images per model (default: the script's, as the demo)")
    a = ap.parse_args()
    models = a.models or Path(os.environ.get("RKNNXX_MODELS") or REPO / "build/models")
    if not all((models / "ocr" / f).exists() for f in ("det.onnx", "rec.onnx", "dict.txt")):
        print(f"skipped: the OCR models are not in {models}/ocr; run tests/models/fetch.sh")
        sys.exit(77)
    a.work.mkdir(parents=True, exist_ok=True)
    converted = a.work / "models"
    converted.mkdir(exist_ok=True)

    calibration = a.work / "calibration"
    rc, out, err, _ = run([sys.executable, REPO / "examples/ocr/data/make_calibration_set.py", calibration] +
                          (["--count", a.count] if a.count else []))
    if not check("make_calibration_set.py renders the calibration set", rc == 0, err.strip()):
        sys.exit(1)

    for m in ("det", "rec"):
        rc, out, err, seconds = run([a.rknnxx, "convert", models / "ocr" / f"{m}.onnx", "-c",
                                     REPO / "examples/ocr" / f"{m}.json", "--dataset", calibration / f"{m}.txt",
                                     "-o", converted / f"{m}.hrknn"])
        if not check(f"convert {m}.onnx to w8a8 ({seconds:.1f} s)", rc == 0, err.strip()):
            sys.exit(1)
    (converted / "dict.txt").write_bytes((models / "ocr/dict.txt").read_bytes())

    rc, out, err, seconds = run([a.ocr, REPO / "examples/ocr/data/rknnxx_demo.png", "--models", converted,
                                 "--output", a.work / "ocr_int8.png"])
    print(out, end="")
    # examples/ocr prints each line as "  [x, y wxh] confidence  text".
    texts = [l.split("] ", 1)[1].split("  ", 1)[1] for l in out.splitlines() if l.startswith("  [") and "] " in l]
    check(f"w8a8 OCR reads the demo image's three lines exactly ({seconds:.1f} s)", rc == 0 and texts == EXPECTED,
          f"read {texts}, stderr {err.strip()!r}")
    finish()


if __name__ == "__main__":
    main()
