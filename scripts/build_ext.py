"""Build the package's C extensions in place, beside their sources (for tests and benches run
from a checkout), with the setuptools already installed: no build isolation, no metadata.

    python scripts/build_ext.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Distribution
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    from setup import EXTENSIONS

    for extension in EXTENSIONS:
        extension.optional = False  # here a failed build is an error, not a fallback
    dist = Distribution({"ext_modules": EXTENSIONS})
    command = build_ext(dist)
    command.inplace = True
    command.ensure_finalized()
    command.run()


if __name__ == "__main__":
    main()
