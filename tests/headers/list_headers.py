#!/usr/bin/env python3
"""Prints every public header under include/ relative to it, one a line."""
import pathlib, sys
root = pathlib.Path(sys.argv[1])
for p in sorted(root.rglob('*.h*')):
    # impl/src.hpp is the one translation unit of separate compilation, not a header to include
    if p.suffix in ('.h', '.hpp') and p.relative_to(root).as_posix() != 'rknnxx/impl/src.hpp':
        print(p.relative_to(root).as_posix())
