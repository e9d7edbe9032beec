"""`pvesh`: the API paths the container API uses, with PVE's answers."""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from .cli import Result, ToolError, check_vmid, param_error, parse_options
from .clusterapi import cluster_status, ct_summary, resources
from .model import NO_QUORUM, Container, NodeModel
from .nodestatus import node_status

NODE_NAME = re.compile(r"^(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")
GROUP_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9\-_]+$")
RULE_OPTIONS = {
    "type": "str",
    "action": "str",
    "proto": "str",
    "sport": "str",
    "dport": "str",
    "source": "str",
    "dest": "str",
    "enable": "int",
    "comment": "str",
    "iface": "str",
    "macro": "str",
    "pos": "int",
    "log": "str",
    "digest": "str",
    "delete": "str",
    "moveto": "int",
    "icmp-type": "str",
}
RULE_FIELDS = (
    "type",
    "action",
    "proto",
    "sport",
    "dport",
    "source",
    "dest",
    "enable",
    "comment",
    "iface",
    "macro",
    "log",
    "icmp-type",
)
ACTIONS = ("ACCEPT", "DROP", "REJECT")


def _digest(obj: Any) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode()).hexdigest()


class Pvesh:
    def __init__(self, model: NodeModel) -> None:
        self.model = model

    async def run(self, args: list[str], stdin: bytes) -> Result:
        if len(args) < 2 or args[0] not in ("get", "set", "create", "delete", "ls", "usage"):
            raise ToolError(
                "ERROR: unknown command 'pvesh " + " ".join(args[:1]) + "'\nUSAGE: pvesh <COMMAND> [ARGS] [OPTIONS]"
            )
        verb, path, rest = args[0], "/" + args[1].strip("/"), args[2:]
        fmt = "text"
        if "--output-format" in rest:
            i = rest.index("--output-format")
            fmt = rest[i + 1] if i + 1 < len(rest) else ""
            rest = rest[:i] + rest[i + 2 :]
            if fmt not in ("text", "json", "json-pretty", "yaml"):
                raise param_error(
                    "output-format",
                    f"value '{fmt}' does not have a value in the enumeration 'text, json, json-pretty, yaml'",
                )
        for noise in ("--quiet", "--noproxy"):
            if noise in rest:
                rest.remove(noise)
        data = self.dispatch(verb, path, rest)
        return Result(self._format(data, fmt))

    @staticmethod
    def _format(data: Any, fmt: str) -> str:
        if data is None:
            return ""
        if fmt == "json":
            return json.dumps(data, separators=(",", ":")) + "\n"
        if fmt == "json-pretty":
            return json.dumps(data, indent=4, sort_keys=True) + "\n"
        if isinstance(data, (str, int, float)):
            return f"{data}\n"
        if isinstance(data, dict):
            width = max((len(k) for k in data), default=3)
            return "".join(f"{k:<{width}} : {v}\n" for k, v in sorted(data.items()))
        if isinstance(data, list) and data and isinstance(data[0], dict):
            keys = sorted({k for row in data for k in row})
            return "\t".join(keys) + "\n" + "".join("\t".join(str(r.get(k, "")) for k in keys) + "\n" for r in data)
        return "".join(f"{item}\n" for item in data)

    # -------------------------------------------------------------- routing
    def dispatch(self, verb: str, path: str, args: list[str]) -> Any:
        parts = path.strip("/").split("/")
        fw = self.model.data["firewall"]
        node = self.model.node
        if parts == ["cluster", "nextid"] and verb == "get":
            _, opts = parse_options(args, {"vmid": "int"})
            if "vmid" in opts:
                if int(opts["vmid"]) in self.model.all_vmids():
                    raise param_error("vmid", f"VM {int(opts['vmid'])} already exists")
                return int(opts["vmid"])
            return self.model.next_free_vmid()
        if parts == ["cluster", "firewall", "options"]:
            if verb == "get":
                return dict(fw["options"])
            if verb == "set":
                _, opts = parse_options(args, {"enable": "int", "policy_in": "str", "policy_out": "str"})
                self._cfs_lock("firewall-cluster")
                fw["options"].update({k: int(v) if v.isdigit() else v for k, v in opts.items()})
                self.model.save()
                return None
        if parts[:3] == ["cluster", "firewall", "groups"]:
            return self._groups(verb, parts[3:], args)
        if parts == ["nodes"] and verb == "get":
            return [{"node": n, "status": "online", "type": "node"} for n in self.model.data["cluster"]["nodes"]]
        if len(parts) >= 3 and parts[0] == "nodes" and parts[2] in ("lxc", "qemu", "status"):
            if not NODE_NAME.match(parts[1]):
                raise param_error("node", "invalid format - value does not look like a valid node name")
            if parts[1] != node:
                return self._proxied(parts[1]).dispatch(verb, path, args)
            if parts[2] == "status" and len(parts) == 3 and verb == "get":
                return node_status(self.model)
            if parts[2] == "qemu" and len(parts) == 3 and verb == "get":
                return []  # the simulator runs containers only
            if parts[2] == "lxc":
                return self._lxc(verb, parts[3:], args)
        if len(parts) == 2 and parts[0] == "storage" and verb == "get":
            return self._storage(parts[1])
        if parts == ["cluster", "resources"] and verb == "get":
            return resources(self.model, args)
        if parts == ["cluster", "status"] and verb == "get":
            return cluster_status(self.model)
        raise ToolError(f"No '{verb}' handler defined for '{path}'")

    def _storage(self, name: str) -> dict[str, Any]:
        """`/storage/<id>`: the storage's entry of `storage.cfg` (PVE: `storage '<id>' does not exist`)."""
        store = self.model.storages.get(name)
        if store is None:
            raise ToolError(f"storage '{name}' does not exist")
        entry: dict[str, Any] = {"storage": name, "type": store["type"], "content": ",".join(store["content"])}
        if "path" in store:
            entry["path"] = store["path"]
        if store.get("shared"):
            entry["shared"] = 1
        return entry | {"digest": _digest(entry)}

    def _cfs_lock(self, lockid: str) -> None:
        """The cfs lock a write handler takes before anything else (`lock_clusterfw_conf`, `lock_vmfw_conf`):
        refused, with PVE's lines, while the cluster has no quorum."""
        refusal = self.model.cfs_lock_refusal(lockid)
        if refusal is not None:
            raise ToolError(refusal)

    def _proxied(self, name: str) -> Pvesh:
        """Another node's API, as pvesh reaches it (the API proxies to the node that owns the path)."""
        other = self.model.cluster.node(name) if self.model.cluster is not None else None
        if other is not None:
            return Pvesh(other)
        # A node that is not in the cluster's node list is looked up by name (PVE::Cluster::remote_node_ip),
        # which fails here as it does on a node whose resolver does not know the name.
        raise ToolError(
            f"hostname lookup '{name}' failed - failed to get address info for: {name}: Name or service not known"
        )

    # ------------------------------------------------------------- firewall
    def _groups(self, verb: str, rest: list[str], args: list[str]) -> Any:
        groups = self.model.data["firewall"]["groups"]
        if not rest:
            if verb == "get":
                return [
                    {"group": g, "comment": v.get("comment", ""), "digest": _digest(v)}
                    if v.get("comment")
                    else {"group": g, "digest": _digest(v)}
                    for g, v in sorted(groups.items())
                ]
            if verb == "create":
                _, opts = parse_options(args, {"group": "str", "comment": "str", "rename": "str", "digest": "str"})
                name = opts.get("group", "")
                if not name:
                    raise param_error("group", "property is missing and it is not optional")
                if not GROUP_NAME.match(name) or len(name) > 18:
                    raise param_error("group", "invalid format - security group name '" + name + "' is not valid")
                self._cfs_lock("firewall-cluster")
                if name in groups:
                    raise ToolError(f"security group '{name}' already exists")
                groups[name] = {"comment": opts.get("comment", ""), "rules": []}
                self.model.save()
                return None
            raise ToolError(f"No '{verb}' handler defined for '/cluster/firewall/groups'")
        name = rest[0]
        if verb != "get":  # every write holds the cluster firewall's lock, taken before the group is looked up
            self._cfs_lock("firewall-cluster")
        if name not in groups:
            raise ToolError(f"no such security group '{name}'")
        group = groups[name]
        if len(rest) == 1:
            if verb == "get":
                return [dict(rule, pos=i, digest=_digest(group["rules"])) for i, rule in enumerate(group["rules"])]
            if verb == "delete":
                if group["rules"]:
                    raise ToolError(f"Security group '{name}' is not empty")
                if self._group_referenced(name):
                    raise ToolError(f"Security group '{name}' is used by a container or the cluster")
                del groups[name]
                self.model.save()
                return None
            if verb == "create":
                group["rules"].insert(0, self._rule(args, is_group_ref=False))
                self.model.save()
                return None
        if len(rest) == 2 and rest[1].isdigit():
            return self._rule_at(group["rules"], int(rest[1]), verb, args, False)
        raise ToolError(f"No '{verb}' handler defined for '/cluster/firewall/groups/{'/'.join(rest)}'")

    def _group_referenced(self, name: str) -> bool:
        for ct in self.model.containers.values():
            for rule in ct.get("firewall", {}).get("rules", []):
                if rule.get("type") == "group" and rule.get("action") == name:
                    return True
        return False

    def _rule(self, args: list[str], is_group_ref: bool) -> dict[str, Any]:
        _, opts = parse_options(args, RULE_OPTIONS)
        rtype = opts.get("type")
        if rtype is None:
            raise param_error("type", "property is missing and it is not optional")
        if rtype not in ("in", "out", "group", "forward"):
            raise param_error(
                "type", f"value '{rtype}' does not have a value in the enumeration 'in, out, forward, group'"
            )
        action = opts.get("action")
        if action is None:
            raise param_error("action", "property is missing and it is not optional")
        if rtype == "group":
            if not is_group_ref:
                raise ToolError("security groups cannot reference groups")
            if action not in self.model.data["firewall"]["groups"]:
                raise ToolError(f"security group '{action}' does not exist")
        elif action not in ACTIONS:
            raise param_error("action", "value does not match the regex pattern")
        proto = opts.get("proto")
        if (
            proto is not None
            and proto not in ("tcp", "udp", "icmp", "icmpv6", "sctp", "esp", "ah", "gre")
            and not proto.isdigit()
        ):
            raise ToolError(f"unknown protocol '{proto}'")
        for port_key in ("sport", "dport"):
            value = opts.get(port_key)
            if value is not None:
                if proto not in ("tcp", "udp", "sctp"):
                    raise ToolError(f"protocol '{proto}' does not support ports")
                for piece in re.split(r"[,:]", value):
                    if not piece.isdigit() or not 0 < int(piece) < 65536:
                        raise ToolError(f"invalid port '{value}'")
        rule: dict[str, Any] = {}
        for key in RULE_FIELDS:
            if key in opts:
                rule[key] = int(opts[key]) if key == "enable" else opts[key]
        rule.setdefault("enable", 0)
        return rule

    def _rule_at(self, rules: list[dict[str, Any]], pos: int, verb: str, args: list[str], ct_scope: bool) -> Any:
        if pos >= len(rules):
            raise ToolError(f"no rule at position {pos}")
        if verb == "get":
            return dict(rules[pos], pos=pos)
        if verb == "delete":
            del rules[pos]
            self.model.save()
            return None
        if verb == "set":
            _, opts = parse_options(args, RULE_OPTIONS)
            for key in [k for k in opts.pop("delete", "").split(",") if k]:
                rules[pos].pop(key, None)
            opts.pop("digest", None)
            for key, value in opts.items():
                rules[pos][key] = int(value) if key == "enable" else value
            self.model.save()
            return None
        raise ToolError(f"No '{verb}' handler defined for rule {pos}")

    # ------------------------------------------------------------- containers
    def _ct_summary(self, vmid: str, ct: Container) -> dict[str, Any]:
        return ct_summary(vmid, ct)

    def _lxc(self, verb: str, rest: list[str], args: list[str]) -> Any:
        if not rest:
            if verb == "get":
                return [
                    self._ct_summary(v, c) for v, c in sorted(self.model.containers.items(), key=lambda x: int(x[0]))
                ]
            raise ToolError(f"No '{verb}' handler defined for '/nodes/{self.model.node}/lxc'")
        vmid = check_vmid(rest[0])
        ct = self.model.containers.get(vmid)
        if ct is None:
            raise ToolError(f"Configuration file '{self.model.conf_path(vmid)}' does not exist")
        sub = rest[1:]
        if sub == ["config"] and verb == "get":
            cfg = dict(ct["config"])
            cfg["digest"] = _digest(ct["config"])
            if ct.get("lock"):
                cfg["lock"] = ct["lock"]
            return cfg
        if sub == ["status", "current"] and verb == "get":
            return self._ct_summary(vmid, ct) | {"ha": {"managed": 0}}
        if sub == ["snapshot"] and verb == "get":
            out = [
                {
                    "name": n,
                    "snaptime": s["snaptime"],
                    "description": s.get("description", ""),
                    **({"parent": s["parent"]} if s.get("parent") else {}),
                }
                for n, s in ct["snapshots"].items()
            ]
            current = {"name": "current", "description": "You are here!", "running": int(ct["status"] == "running")}
            if ct.get("parent"):
                current["parent"] = ct["parent"]
            return [*out, current]
        if sub and sub[0] == "status" and len(sub) == 2 and verb == "create":
            action = sub[1]
            if action not in ("start", "stop", "shutdown", "reboot"):
                raise ToolError(
                    f"No 'create' handler defined for '/nodes/{self.model.node}/lxc/{vmid}/status/{action}'"
                )
            if ct.get("lock"):
                raise ToolError(f"CT is locked ({ct['lock']})")
            if action == "start":
                if ct["status"] == "running":
                    raise ToolError(f"CT {vmid} already running")
                if not self.model.quorate():
                    raise ToolError(NO_QUORUM)
                ct["status"] = "running"
                ct["started_at"] = time.time()
            elif action in ("stop", "shutdown"):
                if ct["status"] != "running":
                    raise ToolError(f"CT {vmid} not running")
                ct["status"] = "stopped"
            self.model.save()
            return f"UPID:{self.model.node}:{int(time.time() * 1000) % 0xFFFFFFFF:08X}:0000ABCD:{int(time.time()):08X}:vz{action}:{vmid}:root@pam:"
        if sub[:1] == ["firewall"]:
            if verb != "get":
                self._cfs_lock(f"firewall-vm-{vmid}")  # lock_vmfw_conf: `vm-<vmid>` for containers too
            fwc = ct.setdefault("firewall", {"options": {"enable": 0}, "rules": []})
            if sub[1:] == ["options"]:
                if verb == "get":
                    return dict(fwc["options"])
                if verb == "set":
                    _, opts = parse_options(
                        args, {"enable": "int", "policy_in": "str", "policy_out": "str", "digest": "str"}
                    )
                    opts.pop("digest", None)
                    fwc["options"].update({k: int(v) if v.isdigit() else v for k, v in opts.items()})
                    self.model.save()
                    return None
            if sub[1:] == ["rules"]:
                if verb == "get":
                    return [dict(r, pos=i) for i, r in enumerate(fwc["rules"])]
                if verb == "create":
                    fwc["rules"].insert(0, self._rule(args, is_group_ref=True))
                    self.model.save()
                    return None
            if len(sub) == 3 and sub[1] == "rules" and sub[2].isdigit():
                return self._rule_at(fwc["rules"], int(sub[2]), verb, args, True)
        raise ToolError(f"No '{verb}' handler defined for '/nodes/{self.model.node}/lxc/{'/'.join(rest)}'")
