"""Standalone server: ``python -m deployments.lxc [--config config/lxc.yaml]``.

`api.debug: false` (the default) runs the production server: uvicorn without
access log and with proxy headers off. `api.debug: true` runs the development
server: uvicorn with debug logging and the access log. The auto-reloader and
any interactive debugger stay off in both modes (spec §1).
"""

from __future__ import annotations

import argparse
import sys

import uvicorn

from .app import create_app
from .config import load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deployments.lxc")
    parser.add_argument("--config", default="config/lxc.yaml")
    args = parser.parse_args(argv)
    try:
        config = load(args.config)
        app = create_app(config, state=None)
    except ValueError as exc:
        print(f"lxc: refusing to start: {exc}", file=sys.stderr)
        return 2
    if config.api.debug:
        uvicorn.run(app, host=config.api.host, port=config.api.port, log_level="debug", access_log=True, reload=False)
    else:
        uvicorn.run(
            app,
            host=config.api.host,
            port=config.api.port,
            log_level=config.api.log_level,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            reload=False,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
