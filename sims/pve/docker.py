"""`docker` and `docker compose` inside a simulated container."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from .cli import Result
from .compose import parse_compose
from .model import Container


def _cid(name: str) -> str:
    return hashlib.sha256(f"{name}{time.time()}".encode()).hexdigest()


def _ports(spec: Any) -> list[dict[str, int]]:
    ports = []
    for item in spec or []:
        text = str(item)
        parts = text.split(":")
        if len(parts) >= 2 and parts[-2].isdigit() and parts[-1].split("/")[0].isdigit():
            ports.append({"host_port": int(parts[-2]), "container_port": int(parts[-1].split("/")[0])})
    return ports


class Docker:
    """Interprets one docker argv against ``ct["docker"]``."""

    def __init__(self, ct: Container) -> None:
        self.ct = ct
        self.state = ct["docker"]

    def _nesting(self) -> bool:
        return "nesting=1" in str(self.ct["config"].get("features", ""))

    def _no_nesting(self) -> Result:
        return Result(
            "",
            "docker: Error response from daemon: failed to create task for container: "
            "failed to create shim task: OCI runtime create failed: runc create failed: "
            "unable to start container process: error during container init: "
            "open sysctl net.ipv4.ip_unprivileged_port_start file: permission denied: unknown.\n",
            126,
        )

    def run(self, args: list[str]) -> Result:
        if not args:
            return Result("", "Usage:  docker [OPTIONS] COMMAND\n", 1)
        cmd, rest = args[0], args[1:]
        if cmd == "compose":
            return self.compose(rest)
        if cmd == "ps":
            return self.ps(show_all="-a" in rest or "--all" in rest)
        if cmd == "logs":
            return self.logs(rest)
        if cmd == "run":
            return self.run_container(rest)
        if cmd == "system" and rest[:1] == ["prune"]:
            removed = len(self.state["containers"])
            self.state["containers"] = {}
            self.state["images"] = []
            return Result(f"Deleted Containers: {removed}\nTotal reclaimed space: {removed * 42}MB\n")
        if cmd in ("stop", "start", "rm", "restart"):
            out = []
            for name in rest:
                if name.startswith("-"):
                    continue
                if name not in self.state["containers"]:
                    return Result("", f"Error response from daemon: No such container: {name}\n", 1)
                if cmd == "rm":
                    del self.state["containers"][name]
                else:
                    self.state["containers"][name]["status"] = "exited" if cmd == "stop" else "running"
                out.append(name)
            return Result("\n".join(out) + "\n")
        if cmd == "version":
            return Result("Client:\n Version:           24.0.7\nServer:\n Engine:\n  Version:          24.0.7\n")
        return Result("", f"docker: '{cmd}' is not a docker command.\nSee 'docker --help'\n", 1)

    def ps(self, show_all: bool) -> Result:
        lines = ["CONTAINER ID   IMAGE          COMMAND   CREATED   STATUS    PORTS     NAMES"]
        for name, c in sorted(self.state["containers"].items()):
            if c["status"] != "running" and not show_all:
                continue
            ports = ", ".join(f"0.0.0.0:{p['host_port']}->{p['container_port']}/tcp" for p in c.get("ports", []))
            status = "Up 1 minute" if c["status"] == "running" else "Exited (0) 1 minute ago"
            lines.append(f'{c["id"][:12]}   {c["image"]:<14} "/entry"  1 min     {status}  {ports}  {name}')
        return Result("\n".join(lines) + "\n")

    def logs(self, args: list[str]) -> Result:
        tail = None
        names = []
        i = 0
        while i < len(args):
            if args[i] in ("--tail", "-n"):
                tail = args[i + 1]
                i += 2
                continue
            if args[i].startswith("--tail="):
                tail = args[i].split("=", 1)[1]
            elif not args[i].startswith("-"):
                names.append(args[i])
            i += 1
        if len(names) != 1:
            return Result("", '"docker logs" requires exactly 1 argument.\n', 1)
        c = self.state["containers"].get(names[0])
        if c is None:
            return Result("", f"Error response from daemon: No such container: {names[0]}\n", 1)
        lines = c.get("logs", [])
        if tail not in (None, "all"):
            lines = lines[-int(tail) :] if int(tail) > 0 else []
        return Result("".join(line + "\n" for line in lines))

    def run_container(self, args: list[str]) -> Result:
        if not self._nesting():
            return self._no_nesting()
        name = None
        ports: list[str] = []
        i = 0
        image = None
        while i < len(args):
            word = args[i]
            if word in ("--name",):
                name = args[i + 1]
                i += 2
                continue
            if word in ("-p", "--publish"):
                ports.append(args[i + 1])
                i += 2
                continue
            if word in ("-e", "--env", "-v", "--volume", "--restart", "--network"):
                i += 2
                continue
            if word.startswith("-"):
                i += 1
                continue
            image = word
            break
        if image is None:
            return Result("", '"docker run" requires at least 1 argument.\n', 1)
        name = name or f"{image.split(':')[0].split('/')[-1]}_{len(self.state['containers']) + 1}"
        if name in self.state["containers"]:
            return Result(
                "",
                f'docker: Error response from daemon: Conflict. The container name "/{name}" is already in use.\n',
                125,
            )
        cid = _cid(name)
        self.state["containers"][name] = {
            "id": cid,
            "image": image,
            "status": "running",
            "ports": _ports(ports),
            "logs": [f"{image} started"],
            "project": None,
        }
        if image not in self.state["images"]:
            self.state["images"].append(image)
        return Result(cid + "\n")

    def compose(self, args: list[str]) -> Result:
        project = None
        file = None
        i = 0
        while i < len(args) and args[i].startswith("-"):
            if args[i] in ("-p", "--project-name"):
                project = args[i + 1]
            elif args[i] in ("-f", "--file"):
                file = args[i + 1]
            i += 2
        verb, _rest = (args[i], args[i + 1 :]) if i < len(args) else ("", [])
        if file is None or project is None:
            return Result("", "no configuration file provided: not found\n", 1)
        text = self.ct["files"].get(file)
        if text is None:
            return Result("", f"open {file}: no such file or directory\n", 1)
        try:
            services = parse_compose(text)
        except ValueError as exc:
            return Result("", f"yaml: {exc}\n", 15)
        names = {svc: f"{project}-{svc}-1" for svc in services}
        containers = self.state["containers"]
        if verb == "up":
            if not self._nesting():
                return self._no_nesting()
            lines = []
            for svc, cname in names.items():
                spec = services[svc] or {}
                image = str(spec.get("image", f"{project}-{svc}"))
                existing = containers.get(cname)
                if existing and existing["image"] == image:
                    existing["status"] = "running"
                    lines.append(f" Container {cname}  Running")
                    continue
                containers[cname] = {
                    "id": _cid(cname),
                    "image": image,
                    "status": "running",
                    "ports": _ports(spec.get("ports")),
                    "project": project,
                    "logs": [f"{svc} | starting {image}", f"{svc} | ready"],
                }
                lines.append(f" Container {cname}  {'Recreated' if existing else 'Started'}")
            return Result("", "\n".join(lines) + "\n")
        if verb == "down":
            lines = []
            for cname in names.values():
                if containers.pop(cname, None) is not None:
                    lines.append(f" Container {cname}  Removed")
            lines.append(f" Network {project}_default  Removed")
            return Result("", "\n".join(lines) + "\n")
        if verb in ("start", "stop", "restart"):
            lines = []
            for cname in names.values():
                if cname in containers:
                    containers[cname]["status"] = "exited" if verb == "stop" else "running"
                    lines.append(f" Container {cname}  {verb.capitalize()}ed".replace("Stoped", "Stopped"))
            return Result("", "\n".join(lines) + "\n")
        if verb == "ps":
            out = ["NAME             IMAGE            SERVICE   STATUS"]
            for svc, cname in names.items():
                c = containers.get(cname)
                if c:
                    out.append(
                        f"{cname:<16} {c['image']:<16} {svc:<9} {'Up' if c['status'] == 'running' else 'Exited'}"
                    )
            return Result("\n".join(out) + "\n")
        if verb == "pull":
            return Result("", "".join(f" {svc} Pulled\n" for svc in names))
        return Result("", f'unknown docker command: "compose {verb}"\n', 1)
