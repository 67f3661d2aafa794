"""rknnlite.api: RKNNLite, the RKNN-Toolkit-Lite2 interface, over rknnxx (docs/python.md)."""

from .rknn_lite import RKNNLite

__all__ = ["RKNNLite"]
