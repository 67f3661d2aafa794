#!/usr/bin/env python3
"""Prints every public header under include/ relative to it, one a line."""
import pathlib, sys
root = pathlib.Path(sys.argv[1])
for p in sorted(root.rglob('*.h*')):
    if p.suffix in ('.h', '.hpp'):
        print(p.relative_to(root).as_posix())
