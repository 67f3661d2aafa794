"""Prints where `meson install` puts the Python package for this interpreter and prefix (python/meson.build):
the interpreter's own site-packages when it lies under the prefix (Debian's python3 with the prefix
/usr/local: /usr/local/lib/python3.11/dist-packages, on its sys.path), else its layout under the prefix
(<prefix>/lib/python3.X/site-packages, for PYTHONPATH or a virtualenv made there)."""
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/")
own = sysconfig.get_path("platlib")
if own.startswith(prefix + "/"):
    print(own)
else:
    print(sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
