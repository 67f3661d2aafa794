#!/usr/bin/env python3
"""Every function the C interface declares (tests/core/abi_signatures.inc, one per declaration in
include/rknnxx/abi/) is exported by each host runtime library given, and nothing but rknn_* and
rknnxx_host_* functions is (host/runtime/exports.map).

usage: check_exports.py SIGNATURES_INC LIBRARY..."""
import re
import subprocess
import sys

# Declared but not provided yet (none now). Remove a name here when its function lands; the check
# fails while the list is out of date either way.
NOT_YET = set()


def main():
    declared = set(re.findall(r"RKNNXX_SIGNATURE\((\w+),", open(sys.argv[1]).read()))
    if len(declared) < 30:
        sys.exit(f"{sys.argv[1]}: only {len(declared)} signatures read; the list format changed?")
    failed = False
    for library in sys.argv[2:]:
        out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
        symbols = [line.split() for line in out.splitlines() if len(line.split()) >= 3]
        exported = {fields[-1] for fields in symbols if fields[-2] == "T"}
        everything = {fields[-1].split("@")[0] for fields in symbols}
        missing = sorted(declared - exported - NOT_YET)
        landed = sorted(NOT_YET & exported)
        foreign = sorted(s for s in everything if not s.startswith(("rknn_", "rknnxx_host_")))
        for what, names in (("declared but not exported", missing), ("exported but still listed in NOT_YET", landed),
                            ("exported outside the rknn_ / rknnxx_host_ names", foreign)):
            if names:
                print(f"{library}: {what}: {', '.join(names)}")
                failed = True
        if not failed:
            pending = f" ({len(NOT_YET)} not yet: {', '.join(sorted(NOT_YET))})" if NOT_YET else ""
            print(f"{library}: all {len(declared - NOT_YET)} implemented functions exported{pending}")
    sys.exit(1 if failed else 0)


main()
