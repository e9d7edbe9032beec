"""``logging.level``, ``logging.format`` and ``logging.output``: the gateway replica's own log.

The gateway's logger (``rayfleet.llm_gateway``) gets one handler of its own: JSON lines
(the platform's formatter, ``rayfleet.logs.JsonFormatter``) or text, on stdout when
``output`` is empty (the spec's default), else appended to that file (relative to
``data_dir`` unless absolute; every record is one ``write`` on an ``O_APPEND`` file, so
the replicas of a node can share it). Secrets are redacted in both formats. Building
the app again (a redeploy, tests) replaces the handler rather than adding another.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from deployments.llm_gateway.config import LoggingConfig
from rayfleet.logs import JsonFormatter, TextFormatter

LOGGER = "rayfleet.llm_gateway"


def configure(cfg: LoggingConfig, output: Path | None) -> logging.Logger:
    """Apply ``logging.*`` to the gateway's logger; an output file that cannot be opened stops the start."""
    if output is None:
        handler: logging.Handler = logging.StreamHandler(sys.stdout)
    else:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(output, encoding="utf-8")
        except OSError as exc:
            raise ValueError(
                f"logging.output: cannot write to {output} ({exc.strerror or type(exc).__name__})"
            ) from None
    handler.setFormatter(JsonFormatter() if cfg.format == "json" else TextFormatter())
    handler._llm_gateway = True  # type: ignore[attr-defined]
    logger = logging.getLogger(LOGGER)
    for old in [h for h in logger.handlers if getattr(h, "_llm_gateway", False)]:
        logger.removeHandler(old)
        old.close()
    logger.addHandler(handler)
    logger.setLevel(cfg.level.upper())
    logger.propagate = False
    return logger
