"""What the generator tests share: the tree's root, the header, the
generators (scripts/regen_api) importable, and reading a file of the tree."""

from __future__ import annotations

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(REPO, "include", "cuabi", "cuabi.h")
sys.path.insert(0, os.path.join(REPO, "scripts", "regen_api"))


def read(path: str) -> str:
    """The text of ``path``, relative to the tree's root."""
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()
