"""What the end-to-end test scripts of this folder share (ocr_int8_test.py, vision_int8_test.py): one line
per check, the commands they time, and the closing `N passed, N failed` that scripts/count_tests.py reads."""
import subprocess
import sys
import time

results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok or not detail else f": {detail}"), flush=True)
    return ok


def run(cmd, timeout=900):
    """Runs a command; returns its exit code, stdout, stderr and wall time in seconds."""
    started = time.monotonic()
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - started


def finish():
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)
