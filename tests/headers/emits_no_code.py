#!/usr/bin/env python3
"""Including a header costs no code: every object of the self-contained header translation units (one
header each, nothing else) defines no function. A function there is a body the compiler emitted in every
translation unit that includes the header, used or not, as a key function defined inline does
(docs/separate-compilation.md#compile-cost).
Usage: emits_no_code.py NM LIBRARY..."""
import subprocess, sys

nm, libraries = sys.argv[1], sys.argv[2:]
failures = []
for library in libraries:
    out = subprocess.run([nm, '-C', '--defined-only', library], capture_output=True, text=True, check=True).stdout
    obj = None
    for line in out.splitlines():
        if line.endswith(':'):
            obj = line[:-1]
        elif line.strip():
            parts = line.split(maxsplit=2)  # address, kind, name
            # Global and weak functions (a sanitizer's per-object constructors are local: 't').
            if len(parts) == 3 and parts[1] in ('T', 'W', 'i'):
                failures.append(f'{obj}: {parts[2]}')
for f in failures:
    print(f'emits code: {f}')
print(f'emits_no_code: {len(libraries)} libraries, {len(failures)} functions emitted')
sys.exit(1 if failures else 0)
