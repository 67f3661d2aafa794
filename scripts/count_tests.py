#!/usr/bin/env python3
"""Adds up the results of every suite into the closing line 'N passed, N failed'.

Arguments are build folders (their meson-logs/testlog.json is read) and 'step:NAME'
for a build step that failed before its tests could run (each counts as one failure).
A doctest executable counts its test cases; a test that prints its own
'N passed, N failed' line counts those; any other test counts as one.
"""
import json, pathlib, re, sys

DOCTEST = re.compile(r'\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed')
PLAIN = re.compile(r'^(?:\w+: )?(\d+) passed, (\d+) failed', re.M)

passed = failed = 0
for arg in sys.argv[1:]:
    if arg.startswith('step:'):
        print(f'counted as failed: build step {arg[5:]!r}')
        failed += 1
        continue
    log = pathlib.Path(arg) / 'meson-logs' / 'testlog.json'
    if not log.exists():
        continue
    for line in log.read_text().splitlines():
        t = json.loads(line)
        ok = t['result'] in ('OK', 'EXPECTEDFAIL', 'SKIP')
        if t['result'] == 'SKIP':
            continue
        out = t.get('stdout') or ''
        m = DOCTEST.findall(out) or [(None, a, b) for a, b in PLAIN.findall(out)]
        if m:
            p, f = int(m[-1][1]), int(m[-1][2])
            if not ok and f == 0:
                f = 1  # crashed or failed after its summary: never let it pass silently
            passed, failed = passed + p, failed + f
        elif ok:
            passed += 1
        else:
            failed += 1
        if not ok:
            print(f'failed: {arg}: {t["name"]} ({t["result"]})')
print(f'{passed} passed, {failed} failed')
sys.exit(1 if failed else 0)
