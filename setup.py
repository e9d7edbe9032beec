"""The compiled part of the package: the ignore generator's per-path passes (optional at run
time: deployments/ignore_gen falls back to identical pure Python when it is not built).
Everything else is declared in pyproject.toml. `python setup.py` is not needed: pip builds
it (`pip install -e .`, `pip wheel .`); `python scripts/build_ext.py` builds it in place."""

from setuptools import Extension, setup

EXTENSIONS = [
    Extension(
        "deployments.ignore_gen._fastpaths",
        sources=["deployments/ignore_gen/_fastpaths.c"],
        extra_compile_args=["-O3", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        optional=True,  # no compiler: the package installs and the Python twins serve
    ),
    Extension(
        "deployments.memory._rank",
        sources=["deployments/memory/_rank.c"],
        extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        optional=True,  # not built: full-text search ranks with FTS5's own bm25() (same order, slower)
    ),
]

if __name__ == "__main__":
    setup(ext_modules=EXTENSIONS)
