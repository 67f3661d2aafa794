"""RKNN-Toolkit-Lite2's interface over rknnxx: `from rknnlite.api import RKNNLite` (docs/python.md)."""
