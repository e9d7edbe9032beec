"""`both_passes`: run a test once with the compiled per-path passes (`_fastpaths.c`) and once
with their pure-Python twins (`passes.py`). The compiled run fails, rather than skips, when the
extension is not built: `pip install -e .` (make install) or `python scripts/build_ext.py`
builds it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deployments.ignore_gen import passes


@pytest.fixture(params=["compiled", "python"])
def both_passes(request: pytest.FixtureRequest) -> Iterator[str]:
    compiled = request.param == "compiled"
    if compiled:
        assert passes.compiled_available(), "the C extension is not built: python scripts/build_ext.py"
    assert passes.use_compiled(compiled) is compiled
    try:
        yield request.param
    finally:
        passes.use_compiled(True)
