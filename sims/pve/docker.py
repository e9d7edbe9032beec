"""`docker` and `docker compose` inside a simulated container."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from .cli import Result
from .compose import parse_compose
from .model import Container, DockerVolume


def _cid(name: str) -> str:
    return hashlib.sha256(f"{name}{time.time()}".encode()).hexdigest()


def _short_flags(args: list[str]) -> str:
    """The letters of the short options among `args` (`-aq` and `-a -q` alike)."""
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


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
            flags = _short_flags(rest)
            return self.ps(show_all="a" in flags or "--all" in rest, quiet="q" in flags or "--quiet" in rest)
        if cmd == "logs":
            return self.logs(rest)
        if cmd == "run":
            return self.run_container(rest)
        if cmd == "system" and rest[:1] == ["prune"]:
            return self.prune(rest[1:])
        if cmd == "volume":
            return self.volume(rest)
        if cmd == "rm":
            return self.rm(rest)
        if cmd in ("stop", "start", "restart"):
            out = []
            for ref in (w for w in rest if not w.startswith("-")):
                name = self._find(ref)
                if name is None:
                    return Result("", f"Error response from daemon: No such container: {ref}\n", 1)
                self.state["containers"][name]["status"] = "exited" if cmd == "stop" else "running"
                out.append(ref)
            return Result("\n".join(out) + "\n")
        if cmd == "version":
            return Result("Client:\n Version:           24.0.7\nServer:\n Engine:\n  Version:          24.0.7\n")
        return Result("", f"docker: '{cmd}' is not a docker command.\nSee 'docker --help'\n", 1)

    def _find(self, ref: str) -> str | None:
        """A container's name from its name or an id prefix (as the daemon resolves them)."""
        if ref in self.state["containers"]:
            return ref
        hits = [n for n, c in self.state["containers"].items() if len(ref) >= 1 and c["id"].startswith(ref)]
        return hits[0] if len(hits) == 1 else None

    def _volumes(self) -> dict[str, DockerVolume]:
        return self.state.setdefault("volumes", {})

    def _in_use(self, volume: str) -> list[str]:
        return [c["id"] for c in self.state["containers"].values() if volume in c.get("volumes", [])]

    def rm(self, args: list[str]) -> Result:
        """`docker rm [-f] [-v] REF...`: a running container only with -f; -v takes its anonymous volumes."""
        flags = _short_flags(args)
        force = "f" in flags or "--force" in args
        volumes = "v" in flags or "--volumes" in args
        out, err = [], []
        for ref in (w for w in args if not w.startswith("-")):
            name = self._find(ref)
            if name is None:
                err.append(f"Error response from daemon: No such container: {ref}")
                continue
            c = self.state["containers"][name]
            if c["status"] == "running" and not force:
                err.append(
                    f"Error response from daemon: You cannot remove a running container {c['id']}. "
                    "Stop the container before attempting removal or force remove"
                )
                continue
            del self.state["containers"][name]
            if volumes:
                for vol in c.get("volumes", []):
                    meta = self._volumes().get(vol)
                    if meta is not None and meta["anonymous"] and not self._in_use(vol):
                        self._volumes().pop(vol, None)
            out.append(ref)
        return Result("".join(f"{o}\n" for o in out), "".join(f"{e}\n" for e in err), 1 if err else 0)

    def volume(self, args: list[str]) -> Result:
        verb, rest = (args[0], args[1:]) if args else ("", [])
        if verb == "ls":
            names = sorted(self._volumes())
            if "-q" in rest or "--quiet" in rest:
                return Result("".join(f"{n}\n" for n in names))
            return Result("DRIVER    VOLUME NAME\n" + "".join(f"local     {n}\n" for n in names))
        if verb == "rm":
            force = "-f" in rest or "--force" in rest
            out, err = [], []
            for name in (w for w in rest if not w.startswith("-")):
                if name not in self._volumes():
                    if not force:
                        err.append(f"Error response from daemon: get {name}: no such volume")
                    continue
                users = self._in_use(name)
                if users:
                    err.append(f"Error response from daemon: remove {name}: volume is in use - [{', '.join(users)}]")
                    continue
                del self._volumes()[name]
                out.append(name)
            return Result("".join(f"{o}\n" for o in out), "".join(f"{e}\n" for e in err), 1 if err else 0)
        return Result("", f"docker: unknown command: docker volume {verb}\n", 1)

    def prune(self, args: list[str]) -> Result:
        """`docker system prune`: stopped containers, unused networks, dangling images (all unused with
        -a), unused anonymous volumes with --volumes (Docker 23+ keeps named ones). Without -f it asks,
        and with no terminal to answer it removes nothing. Running containers are never touched."""
        flags = _short_flags(args)
        if "f" not in flags and "--force" not in args:
            return Result(
                "WARNING! This will remove:\n  - all stopped containers\nAre you sure you want to continue? [y/N] "
            )
        containers = self.state["containers"]
        stopped = [n for n, c in containers.items() if c["status"] != "running"]
        for name in stopped:
            del containers[name]
        lines = ["Deleted Containers:", *(_cid(n) for n in stopped), ""]
        if "--volumes" in args:
            unused = [v for v, meta in self._volumes().items() if meta.get("anonymous") and not self._in_use(v)]
            for name in unused:
                del self._volumes()[name]
            lines += ["Deleted Volumes:", *unused, ""]
        if "a" in flags or "--all" in args:
            used = {c["image"] for c in containers.values()}
            self.state["images"] = [i for i in self.state["images"] if i in used]
        lines.append(f"Total reclaimed space: {len(stopped) * 42}MB")
        return Result("\n".join(lines) + "\n")

    def ps(self, show_all: bool, quiet: bool = False) -> Result:
        lines = [] if quiet else ["CONTAINER ID   IMAGE          COMMAND   CREATED   STATUS    PORTS     NAMES"]
        for name, c in sorted(self.state["containers"].items()):
            if c["status"] != "running" and not show_all:
                continue
            if quiet:
                lines.append(c["id"][:12])
                continue
            ports = ", ".join(f"0.0.0.0:{p['host_port']}->{p['container_port']}/tcp" for p in c.get("ports", []))
            status = "Up 1 minute" if c["status"] == "running" else "Exited (0) 1 minute ago"
            lines.append(f'{c["id"][:12]}   {c["image"]:<14} "/entry"  1 min     {status}  {ports}  {name}')
        return Result("".join(line + "\n" for line in lines))

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
        mounts: list[str] = []
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
            if word in ("-v", "--volume") and i + 1 < len(args):
                mounts.append(args[i + 1])
                i += 2
                continue
            if word in ("-e", "--env", "--restart", "--network"):
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
            "volumes": self._mount(name, mounts),
        }
        if image not in self.state["images"]:
            self.state["images"].append(image)
        return Result(cid + "\n")

    def _mount(self, container: str, mounts: list[str], prefix: str = "") -> list[str]:
        """The volumes `-v` (or a compose service's `volumes:`) creates: `name:/path` a named volume
        (a compose one is prefixed with its project), `/path` an anonymous one; host paths none."""
        names = []
        for spec in mounts:
            source, sep, _target = spec.partition(":")
            if sep and source.startswith(("/", ".", "~")):
                continue
            if sep:
                name, anonymous = prefix + source, False
            else:
                name, anonymous = hashlib.sha256(f"{container}:{spec}".encode()).hexdigest(), True
            self._volumes().setdefault(name, DockerVolume(anonymous=anonymous))
            names.append(name)
        return names

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
                mounts = [str(m) for m in spec.get("volumes") or [] if isinstance(m, str)]
                containers[cname] = {
                    "id": _cid(cname),
                    "image": image,
                    "status": "running",
                    "ports": _ports(spec.get("ports")),
                    "project": project,
                    "logs": [f"{svc} | starting {image}", f"{svc} | ready"],
                    "volumes": self._mount(cname, mounts, prefix=f"{project}_"),
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
