"""examples/python/ocr.py, the OCR pipeline written against Lite2's interface, on the demo image with the
PaddleOCR v4 models (tests/models/fetch.sh; skipped without them): it reads the three lines examples/ocr
reads (tests/tools/cli_test.py checks the C++ demo for the same strings) and, when examples/ocr is built,
prints exactly the lines the C++ demo prints (boxes, confidences, texts); with the direction classifier it
reads the image turned upside down."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DEMO_IMAGE = REPO / "examples/ocr/data/rknnxx_demo.png"
EXPECTED = ["Rockchip NPU 2026", "rknnxx runs on any PC", "OCR on the host runtime"]


def models_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("RKNNXX_MODELS") or os.environ.get("RKNNXX_MODELS_DEFAULT")
                        or REPO / "build/models")


@pytest.fixture(scope="module")
def ocr_models(tmp_path_factory) -> pathlib.Path:
    """det.hrknn, rec.hrknn, cls.hrknn and dict.txt, converted as ./scripts/demo.sh converts them (about a
    second together)."""
    models = models_dir()
    sources = {name: models / "ocr" / f"{name}.onnx" for name in ("det", "rec", "cls")}
    if not all(p.exists() for p in sources.values()) or not (models / "ocr/dict.txt").exists():
        pytest.skip(f"the PaddleOCR models are not in {models}/ocr: run tests/models/fetch.sh")
    out = tmp_path_factory.mktemp("ocr")
    for name, onnx in sources.items():
        config = REPO / ("examples/python/cls.json" if name == "cls" else f"examples/ocr/{name}.json")
        done = subprocess.run([os.environ["RKNNXX_TOOL"], "convert", str(onnx), "-c", str(config), "-o",
                               str(out / f"{name}.hrknn")], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"rknnxx convert {name}:\n{done.stdout}\n{done.stderr}"
    (out / "dict.txt").write_bytes((models / "ocr/dict.txt").read_bytes())
    return out


def text_lines(stdout: str):
    """The '  [   x,   y    wxh  ] 0.987  TEXT' lines."""
    return [line for line in stdout.splitlines() if line.startswith("  [") and "] " in line]


def test_the_ocr_example_reads_the_demo_image(ocr_models):
    example = pathlib.Path(os.environ["RKNNXX_EXAMPLES"]) / "ocr.py"
    env = dict(os.environ)
    env.pop("RKNNXX_RUNTIME", None)
    done = subprocess.run([sys.executable, str(example), str(DEMO_IMAGE), "--models", str(ocr_models)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = text_lines(done.stdout)
    assert [line.split("] ", 1)[1].split("  ", 1)[1] for line in lines] == EXPECTED, done.stdout

    cpp = os.environ.get("RKNNXX_OCR_EXAMPLE")
    if cpp and pathlib.Path(cpp).exists():
        ran = subprocess.run([cpp, str(DEMO_IMAGE), "--models", str(ocr_models), "--output",
                              str(ocr_models / "annotated.png")], capture_output=True, text=True, env=env, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert lines == text_lines(ran.stdout), (done.stdout, ran.stdout)


def test_the_direction_classifier_turns_upside_down_lines(ocr_models, tmp_path):
    """The demo image turned by 180 degrees (as an .npy array): the classifier turns each line back, so the
    lines read are the demo's, last first."""
    sys.path.insert(0, os.environ["RKNNXX_EXAMPLES"])
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in examples/
    try:
        from ocr import read_png
    finally:
        sys.path.pop(0)
        sys.dont_write_bytecode = writes_bytecode
    turned = tmp_path / "turned.npy"
    np.save(turned, np.ascontiguousarray(read_png(DEMO_IMAGE)[::-1, ::-1]))
    example = pathlib.Path(os.environ["RKNNXX_EXAMPLES"]) / "ocr.py"
    done = subprocess.run([sys.executable, str(example), str(turned), "--models", str(ocr_models), "--cls",
                           str(ocr_models / "cls.hrknn")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    texts = [line.split("] ", 1)[1].split("  ", 1)[1] for line in text_lines(done.stdout)]
    assert texts == EXPECTED[::-1], done.stdout


def test_the_ocr_example_names_a_missing_file(tmp_path):
    example = pathlib.Path(os.environ["RKNNXX_EXAMPLES"]) / "ocr.py"
    done = subprocess.run([sys.executable, str(example), str(DEMO_IMAGE), "--models", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == f"ocr: {tmp_path / 'det.hrknn'}: no such file (the detection model)"
