"""Container-runtime applications: docker setup, compose deploy/update, logs, removal.

A compose file comes from the configured `compose_dir` (paths are confined to
it) or, only when `compose_allow_urls` is on, from an https URL whose host
resolves to public addresses only (no redirects are followed).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import socket
import time
from urllib.parse import urlsplit

import httpx
import yaml

from rayfleet.ssh import SSHTarget

from . import commands as cmd
from .config import LxcConfig
from .containers import each_container
from .errors import BadRequest, CommandFailed, NodeDown
from .hosts import Steps, Target
from .responses import BulkDone
from .service import HostResult, R, confined

APP_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


async def setup(t: Target, vmid: str, enable_nesting: bool) -> HostResult:
    steps = t.steps()
    async with t.locked([vmid]):
        status = await steps.run(cmd.pct("status", vmid))
        if "running" not in status.stdout:
            raise BadRequest(f"instance {vmid} must be running to set up the container runtime")
        config = await steps.run(cmd.pct("config", vmid))
        values = dict(line.split(": ", 1) for line in config.stdout.splitlines() if ": " in line)
        features = values.get("features", "")
        unprivileged = values.get("unprivileged", "0") == "1"
        needed = ["nesting=1"] + (["keyctl=1"] if unprivileged else [])
        missing = [f for f in needed if f not in features.split(",")]
        steps.out.clear()
        if missing:
            if not enable_nesting:
                raise BadRequest(
                    f"instance {vmid} lacks {', '.join(missing)}; pass enable_nesting: true to set it "
                    "(the container is restarted)"
                )
            kept = [f for f in features.split(",") if f and f.split("=")[0] not in {m.split("=")[0] for m in missing}]
            await steps.run(cmd.pct_set(vmid, {"features": ",".join(kept + missing)}))
            await steps.run(cmd.pct("reboot", vmid))
            steps.note(f"Enabled {', '.join(missing)} and restarted instance {vmid}.")
        await steps.run(cmd.pct_exec(vmid, ["apt-get", "update"]))
        await steps.run(
            cmd.pct_exec(vmid, ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "docker.io"])
        )
        v2 = await t.run(
            cmd.pct_exec(
                vmid, ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "docker-compose-v2"]
            )
        )
        if v2.ok:
            steps.note(v2.stdout)
        else:
            await steps.run(
                cmd.pct_exec(
                    vmid, ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "docker-compose"]
                )
            )
    steps.note(f"Container runtime and compose tool installed in instance {vmid}.")
    return R(steps.text())


async def run(t: Target, vmid: str, words: list[str]) -> HostResult:
    result = await t.run(cmd.pct_exec(vmid, ["docker", "run", *words]))
    if not result.ok:
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return R(result.stdout)


async def load_compose(config: LxcConfig, source: object) -> tuple[str, str]:
    """(compose text, app name = first service) from a confined path or an allowed URL."""
    if not isinstance(source, str) or not source.strip():
        raise BadRequest("'compose_file' must be a path inside the compose directory or an https URL")
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", source):
        text = await _fetch(config, source)
    else:
        path = confined(config.compose_dir, source, "compose_file")
        if not path.is_file():
            raise BadRequest(f"'compose_file' {source} is not a file in the compose directory")
        if path.stat().st_size > config.compose_max_bytes:
            raise BadRequest("'compose_file' is too large")
        text = path.read_text(errors="replace")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        raise BadRequest("'compose_file' is not valid YAML") from None
    services = doc.get("services") if isinstance(doc, dict) else None
    if not isinstance(services, dict) or not services:
        raise BadRequest("'compose_file' has no services")
    app = str(next(iter(services)))
    if not APP_NAME.fullmatch(app):
        raise BadRequest("the first service name must be lower-case letters, digits, '_' or '-'")
    return text, app


async def _fetch(config: LxcConfig, url: str) -> str:
    if not config.compose_allow_urls:
        raise BadRequest("compose URLs are disabled (compose_allow_urls: false)")
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.username or parts.password:
        raise BadRequest("compose URLs must be https://host/path without credentials")
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(parts.hostname, parts.port or 443, type=socket.SOCK_STREAM)
    except OSError:
        raise BadRequest(f"cannot resolve {parts.hostname}") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise BadRequest("compose URLs must not point at private, loopback or link-local addresses")
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=15) as client:
        try:
            response = await client.get(url)
        except httpx.HTTPError as exc:
            raise BadRequest(f"fetching the compose file failed: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise BadRequest(f"fetching the compose file answered HTTP {response.status_code}")
    if len(response.content) > config.compose_max_bytes:
        raise BadRequest("'compose_file' is too large")
    return response.text


async def _push(t: Target, vmid: str, steps: Steps, text: str, dest: str) -> None:
    """`text` staged on the node holding the container (where `pct push` reads it), then pushed."""
    staged = f"/var/tmp/lws-{vmid}-{int(time.time() * 1000)}-{dest.rsplit('/', 1)[-1]}"
    node = await t.holding(vmid)

    async def put(key: str, host: SSHTarget) -> None:
        await node.pool.put_bytes(key, host, text.encode(), staged)

    try:
        await node.transfer(put)
    except NodeDown:
        raise
    except Exception as exc:
        raise CommandFailed(f"staging {dest} on the host failed: {exc}", steps.text(), 1) from None
    try:
        await steps.run(cmd.pct_exec(vmid, ["mkdir", "-p", dest.rsplit("/", 1)[0]]))
        await steps.run(cmd.pct("push", vmid, staged, dest))
    finally:
        with contextlib.suppress(CommandFailed):  # the node gone meanwhile: nothing to remove there
            await node.run(["rm", "-f", staged])


async def deploy(t: Target, vmid: str, action: str, compose: tuple[str, str], auto_start: bool) -> HostResult:
    """`compose` is `load_compose`'s answer, read by the route (a bad file is a 400, never a failed job)."""
    text, app = compose
    path = f"{cmd.APPS_DIR}/{app}/docker-compose.yml"
    steps = t.steps()
    async with t.locked([vmid]):
        if action == "install":
            await _push(t, vmid, steps, text, path)
            await steps.run(cmd.compose(vmid, app, "up", "-d"), keep_stderr=True)
            if auto_start:
                await _push(t, vmid, steps, cmd.systemd_unit(app), f"/etc/systemd/system/lws-{app}.service")
                await steps.run(cmd.pct_exec(vmid, ["systemctl", "enable", f"lws-{app}.service"]), keep_stderr=True)
            steps.note(f"Application '{app}' installed in instance {vmid} ({path}).")
        elif action == "uninstall":
            await steps.run(cmd.compose(vmid, app, "down"), keep_stderr=True)
            await steps.run(cmd.pct_exec(vmid, ["rm", "-f", path]))
            steps.note(f"Application '{app}' uninstalled from instance {vmid}.")
        elif action == "status":
            await steps.run(cmd.compose(vmid, app, "ps"))
        else:
            await steps.run(cmd.compose(vmid, app, action), keep_stderr=True)
            steps.note(f"Application '{app}': {action} done.")
    return R(steps.text())


async def update(t: Target, vmid: str, compose: tuple[str, str]) -> HostResult:
    text, app = compose
    path = f"{cmd.APPS_DIR}/{app}/docker-compose.yml"
    steps = t.steps()
    async with t.locked([vmid]):
        await _push(t, vmid, steps, text, path)
        await steps.run(cmd.compose(vmid, app, "pull"), keep_stderr=True)
        await steps.run(cmd.compose(vmid, app, "up", "-d"), keep_stderr=True)
    steps.note(f"Application '{app}' updated in instance {vmid}.")
    return R(steps.text())


async def logs(t: Target, vmid: str, name: str, tail: str) -> HostResult:
    words = ["docker", "logs"] + (["--tail", tail] if tail != "all" else []) + [name]
    result = await t.run(cmd.pct_exec(vmid, words))
    if not result.ok:
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return R(result.stdout + result.stderr)


async def containers(t: Target, vmid: str) -> HostResult:
    result = await t.run(cmd.pct_exec(vmid, ["docker", "ps", "-a"]))
    if not result.ok:
        raise CommandFailed(result.stderr, result.stdout, result.rc)
    return R(result.stdout)


RUNTIME_PACKAGES = ("docker.io", "docker-compose", "docker-compose-v2")
INSTALLED = "install ok installed"


async def installed_runtime(steps: Steps, vmid: str, purge: bool) -> list[str]:
    """The runtime packages dpkg has installed in the container (with `purge`, also those removed
    with their conffiles left). `dpkg-query` exits 1 when it names a package it never saw."""
    query = ["dpkg-query", "-W", "-f", "${Package} ${Status}\\n", *RUNTIME_PACKAGES]
    result = await steps.run(cmd.pct_exec(vmid, query), ok=(0, 1))
    found = []
    for line in result.stdout.splitlines():
        package, _, status = line.partition(" ")
        if status == INSTALLED or (purge and status.endswith("config-files")):
            found.append(package)
    return found


async def _purge_docker(steps: Steps, vmid: str) -> str:
    """Every Docker container (running ones too) with its anonymous volumes, then every volume,
    then unused images and networks; returns what went."""
    ids = (await steps.run(cmd.pct_exec(vmid, ["docker", "ps", "-a", "-q"]))).stdout.split()
    if ids:
        await steps.run(cmd.pct_exec(vmid, ["docker", "rm", "-f", "-v", *ids]))
    volumes = (await steps.run(cmd.pct_exec(vmid, ["docker", "volume", "ls", "-q"]))).stdout.split()
    if volumes:
        await steps.run(cmd.pct_exec(vmid, ["docker", "volume", "rm", "-f", *volumes]))
    await steps.run(cmd.pct_exec(vmid, ["docker", "system", "prune", "-a", "-f"]))
    return f"{len(ids)} container(s) and {len(volumes)} volume(s) removed"


async def remove(t: Target, vmids: list[str], purge: bool) -> BulkDone:
    """Remove the runtime packages that are installed (only those: apt fails on a name it cannot
    find). With `purge`: first every Docker container, volume, image and network, then
    `apt-get purge` (conffiles too); without, `apt-get remove` and the data stays."""

    async def one(vmid: str, steps: Steps) -> tuple[str, str | None]:
        packages = await installed_runtime(steps, vmid, purge)
        if not packages:
            return "nothing installed", None
        done = []
        if purge and "docker.io" in packages:
            done.append(await _purge_docker(steps, vmid))
        verb = "purge" if purge else "remove"
        await steps.run(cmd.pct_exec(vmid, ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", verb, "-y", *packages]))
        return f"{'purged' if purge else 'removed'} {', '.join(packages)}" + (f"; {done[0]}" if done else ""), None

    return await each_container(t, vmids, one)
