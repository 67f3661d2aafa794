#!/usr/bin/env python3
"""Records the result of a test run outside meson (consumer builds, fuzzing) as a meson test
log, so that count_tests.py adds it up with the rest.

    record_result.py FOLDER NAME EXIT_CODE SUMMARY_LINE
"""
import json, pathlib, sys

folder, name, code, summary = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
logs = pathlib.Path(folder) / 'meson-logs'
logs.mkdir(parents=True, exist_ok=True)
(logs / 'testlog.json').write_text(json.dumps(
    {'name': name, 'result': 'OK' if code == '0' else 'FAIL', 'stdout': summary + '\n'}) + '\n')
