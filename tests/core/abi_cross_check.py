#!/usr/bin/env python3
"""Compiles the ABI headers (and the device layer's ioctl declarations) with a cross compiler
(syntax only) with their layout assertions active, in C11 and C++20, and proves that the assertions really use that target's numbers: a
probe with a wrong 32-bit ARM size must fail and the right one must pass.
Prints 'abi_<abi>: N passed, M failed'."""
import argparse, pathlib, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--abi', choices=['a32', 'lp64'], required=True)
ap.add_argument('--cc', required=True)
ap.add_argument('--cxx', required=True)
ap.add_argument('--include', required=True)
ap.add_argument('--tests', required=True)
a = ap.parse_args()

warn = ['-Wall', '-Wextra', '-Wpedantic', '-Werror']
headers = ['c_api.h', 'c_matmul_api.h', 'c_custom_op.h']
marker = 'RKNNXX_ABI_A32' if a.abi == 'a32' else 'RKNNXX_ABI_LP64'
# rknn_input is 24 bytes on 32-bit ARM and 32 on LP64 (the struct's two pointers and padding).
right, wrong = ('99, 24', '32, 25') if a.abi == 'a32' else ('32, 99', '33, 24')

passed = failed = 0
def compile(lang, source, expect_ok, what):
    global passed, failed
    with tempfile.TemporaryDirectory() as d:
        ext = '.c' if lang == 'c' else '.cpp'
        f = pathlib.Path(d) / ('probe' + ext)
        f.write_text(source)
        cmd = ([a.cc, '-std=c11'] if lang == 'c' else [a.cxx, '-std=c++20']) + warn + \
              ['-fsyntax-only', '-I', a.include, '-I', a.tests, str(f)]
        r = subprocess.run(cmd, capture_output=True, text=True)
    ok = (r.returncode == 0) == expect_ok
    if ok:
        passed += 1
    else:
        failed += 1
        print(f'FAILED: {what} ({lang}): expected {"success" if expect_ok else "failure"}')
        print(' '.join(cmd))
        print(r.stderr[-3000:])
    return ok

for lang in ('c', 'cxx'):
    for h in headers:
        compile(lang, f'#include <rknnxx/abi/{h}>\n', True, f'{h} alone')
    compile(lang, '#include <rknnxx/abi/c_api.h>\n'
                  f'#ifndef {marker}\n#error "the {a.abi} layout assertions are not selected"\n#endif\n',
            True, f'{a.abi} assertions selected')
    compile(lang, f'#include <rknnxx/abi/c_api.h>\nRKNNXX_ABI_SIZE(rknn_input, {right});\n', True,
            'a probe with the right size passes')
    compile(lang, f'#include <rknnxx/abi/c_api.h>\nRKNNXX_ABI_SIZE(rknn_input, {wrong});\n', False,
            'a probe with a wrong size fails')
compile('c', (pathlib.Path(a.tests) / 'abi_c_check.c').read_text(), True, 'the C program and its signature checks')
# The device layer's ioctl structs and request numbers (include/rknnxx/device/ioctl.hpp) are pinned for both
# ABIs by their static assertions: the 32-bit ARM ones are proven only here.
compile('cxx', '#include <rknnxx/device/dma_buf.hpp>\n#include <rknnxx/device/npu_device.hpp>\n', True,
        'the device layer with its ioctl layout assertions')

print(f'abi_{a.abi}: {passed} passed, {failed} failed')
sys.exit(1 if failed else 0)
