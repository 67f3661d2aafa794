#!/usr/bin/env python3
"""Compile-fail tests: every *.cpp here must NOT compile with -DRKNNXX_COMPILE_FAIL, failing with
the diagnostic named by its '// expect: REGEX' line, and its good twin (the same file without the
macro) MUST compile cleanly with the same flags, so that a test cannot pass through an unrelated
typo. Usage: run.py --sources DIR --include DIR -- COMPILER [FLAGS...]
Prints 'compile_fail: N passed, M failed'."""
import argparse, concurrent.futures, os, pathlib, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument('--sources', required=True)
ap.add_argument('--include', required=True)
ap.add_argument('--jobs', type=int, default=2)
ap.add_argument('compiler', nargs=argparse.REMAINDER)
a = ap.parse_args()
compiler = [c for c in a.compiler if c != '--']
flags = ['-fsyntax-only', '-Wall', '-Wextra', '-Wpedantic', '-Werror', '-I', a.include]
env = dict(os.environ, LC_ALL='C')  # plain quotes in diagnostics

def run(path):
    text = path.read_text()
    m = re.search(r'^// expect: (.+)$', text, re.M)
    if not m:
        return path.name, False, 'no "// expect: REGEX" line'
    expect = re.compile(m.group(1).strip())
    good = subprocess.run(compiler + flags + [str(path)], capture_output=True, text=True, env=env)
    if good.returncode != 0:
        return path.name, False, 'the good twin does not compile:\n' + good.stderr[-4000:]
    bad = subprocess.run(compiler + flags + ['-DRKNNXX_COMPILE_FAIL', str(path)], capture_output=True, text=True, env=env)
    if bad.returncode == 0:
        return path.name, False, 'compiled, but must not'
    if not expect.search(bad.stdout + bad.stderr):
        return path.name, False, f'failed without the expected diagnostic /{expect.pattern}/:\n' + bad.stderr[-4000:]
    return path.name, True, ''

files = sorted(pathlib.Path(a.sources).glob('*.cpp'))
passed = failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
    for name, ok, why in pool.map(run, files):
        print(f'{"ok    " if ok else "FAILED"} {name}')
        if ok:
            passed += 1
        else:
            failed += 1
            print('  ' + why.replace('\n', '\n  '))
print(f'compile_fail: {passed} passed, {failed} failed')
sys.exit(1 if failed or not files else 0)
