"""The HTTP surface: `create_app(config, state) -> FastAPI`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from rayfleet.docs import use_local_docs_assets
from rayfleet.http import RequestIdMiddleware, client_ip, constant_time_equals, request_id
from rayfleet.logs import get_logger, register_secret

from . import apps, containers, diagnostics, firewall, ui
from . import validate as v
from .config import LxcConfig
from .errors import (
    BadRequest,
    CommandFailed,
    HTTPProblem,
    bad_instance_id,
    bad_request,
    command_failed,
    internal_error,
    not_found,
    problem,
    unauthorized,
)
from .models import (
    AppDeployBody,
    AppRemoveBody,
    AppRunBody,
    AppSetupBody,
    AppUpdateBody,
    AttachBody,
    BackupBody,
    BackupLxcBody,
    BulkBody,
    CloneBody,
    ConfBackupBody,
    CreateBody,
    DetachBody,
    ExecBody,
    GroupBody,
    HostBackupBody,
    HostExecBody,
    ImageBody,
    Located,
    MigrateBody,
    RebootBody,
    RestoreBody,
    RuleBody,
    ScaleBody,
    ServiceBody,
    SnapshotBody,
    UpdateBody,
    UploadBody,
    VolumeAttachBody,
    VolumeDetachBody,
)
from .service import LxcService

log = get_logger("lxc")
PREFIX = "/api/v1"
OPEN_PATHS = {f"{PREFIX}/health", f"{PREFIX}/docs", f"{PREFIX}/openapi.json", f"{PREFIX}/docs/oauth2-redirect"}
STATIC_SEGMENTS = {"start", "stop", "terminate", "reboot", "status", "scale", "clone", "app"}
INSTANCE_PATH = re.compile(r"^/api/v1/lxc/instances/([^/]+)(?:/.*)?$", re.DOTALL)
VMID_SEGMENT = re.compile(r"[0-9]{1,9}")


def _need(value: Any, field: str) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise BadRequest(f"'{field}' is required")
    return value


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


class GuardMiddleware:
    """API key and the numeric `{instance_id}` hook, before any handler (pure ASGI, no body buffering)."""

    def __init__(self, app: Any, api_key: str) -> None:
        self.app = app
        self.api_key = api_key

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            root = scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root) :] or "/"
            if path.startswith(PREFIX) and path not in OPEN_PATHS and scope["method"] != "OPTIONS":
                supplied = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"x-api-key"), None)
                refusal = None
                if not constant_time_equals(supplied, self.api_key):
                    refusal = unauthorized()
                else:
                    match = INSTANCE_PATH.match(path)
                    if match and match.group(1) not in STATIC_SEGMENTS and not VMID_SEGMENT.fullmatch(match.group(1)):
                        refusal = bad_instance_id()
                if refusal is not None:
                    await refusal(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def create_app(config: LxcConfig, state: Any = None) -> FastAPI:
    """Build the API. `state` may be a callable `name -> lock actor handle` (tests); None uses Ray actors."""
    warnings = config.check_startable()
    api_key = config.resolved_api_key()
    register_secret(api_key)
    for region in config.regions.values():
        for zone in region.availability_zones.values():
            register_secret(zone.effective_password())
    for warning in warnings:
        log.warning(warning)
    svc = LxcService(config, lock_factory=state if callable(state) else None)

    app = FastAPI(
        title="Container management API",
        version="1.0.0",
        docs_url=f"{PREFIX}/docs",
        openapi_url=f"{PREFIX}/openapi.json",
        redoc_url=None,
        description="LXC containers on Proxmox VE hosts, driven over SSH. Send the API key in the X-API-Key header.",
    )
    app.state.service = svc

    app.add_middleware(GuardMiddleware, api_key=api_key)

    if config.api.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.api.allowed_origins),
            allow_credentials=False,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["X-API-Key", "Content-Type"],
        )
    app.add_middleware(RequestIdMiddleware)

    @app.exception_handler(BadRequest)
    async def _bad(request: Request, exc: BadRequest) -> JSONResponse:
        return bad_request(exc.message)

    @app.exception_handler(v.Invalid)
    async def _invalid(request: Request, exc: v.Invalid) -> JSONResponse:
        return bad_request(str(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return bad_request(_validation_message(exc))

    @app.exception_handler(CommandFailed)
    async def _failed(request: Request, exc: CommandFailed) -> JSONResponse:
        return command_failed(exc.details, exc.output, exc.return_code)

    @app.exception_handler(HTTPProblem)
    async def _problem(request: Request, exc: HTTPProblem) -> JSONResponse:
        return problem(exc.status, exc.description)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            return not_found(request.url.path)
        return problem(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc, extra={"request_id": request_id(request)})
        return internal_error()

    app.include_router(ui.router())
    app.include_router(_router(svc, config), prefix=PREFIX)
    use_local_docs_assets(app)
    return app


def _router(svc: LxcService, config: LxcConfig) -> APIRouter:
    r = APIRouter()
    body_opt = Body(default=None)

    def where(body: Located | None) -> tuple[Any, Any]:
        return (body.region, body.az) if body is not None else (None, None)

    # ---------------------------------------------------------------- health & conf
    @r.get("/health", tags=["health"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @r.get("/conf", tags=["configuration"])
    async def conf() -> Any:
        return svc.masked_config()

    @r.post("/conf/validate", tags=["configuration"])
    async def conf_validate() -> Any:
        return svc.validate_config()

    @r.post("/conf/backup", tags=["configuration"])
    async def conf_backup(body: ConfBackupBody | None = body_opt) -> Any:
        body = body or ConfBackupBody()
        return svc.backup_config(body.destination_path, body.timestamp, body.compress)

    # ---------------------------------------------------------------- hosts
    @r.get("/px/hosts", tags=["hosts"])
    async def px_hosts(region: str | None = None) -> Any:
        return await svc.hosts(region)

    @r.get("/px/status", tags=["hosts"])
    async def px_status(region: str | None = None, az: str | None = None) -> Any:
        return await svc.host_status(svc.target(region, az))

    @r.post("/px/reboot", tags=["hosts"])
    async def px_reboot(body: RebootBody | None = body_opt) -> Any:
        body = body or RebootBody()
        return await svc.reboot(svc.target(body.region, body.az), body.confirm)

    @r.get("/px/templates", tags=["hosts"])
    async def px_templates(region: str | None = None, az: str | None = None) -> Any:
        return await svc.templates(svc.target(region, az))

    @r.get("/px/clusters", tags=["hosts"])
    async def px_clusters(region: str | None = None, az: str | None = None) -> Any:
        return await svc.clusters(svc.target(region, az))

    @r.post("/px/update", tags=["hosts"])
    async def px_update(body: UpdateBody | None = body_opt) -> Any:
        return await svc.update(svc.targets(*where(body)))

    for verb in ("start", "stop", "restart"):

        def make(verb: str) -> Callable[..., Awaitable[Any]]:
            async def cluster_action(body: Located | None = body_opt) -> Any:
                return await svc.cluster_services(svc.target(*where(body)), verb)

            cluster_action.__name__ = f"px_cluster_{verb}"
            return cluster_action

        r.add_api_route(f"/px/cluster/{verb}", make(verb), methods=["POST"], tags=["hosts"])

    @r.post("/px/backup-lxc", tags=["hosts"])
    async def px_backup_lxc(body: BackupLxcBody | None = body_opt) -> Any:
        body = body or BackupLxcBody()
        vmid = v.vmid(_need(body.vmid, "vmid"), "vmid")
        storage = v.storage(_need(body.storage, "storage"))
        mode = v.choice(body.mode, "mode", v.BACKUP_MODES)
        return await svc.backup_lxc(svc.target(body.region, body.az), vmid, storage, mode)

    @r.post("/px/backup", tags=["hosts"])
    async def px_backup(body: HostBackupBody | None = body_opt) -> Any:
        body = body or HostBackupBody()
        return await svc.host_backup(svc.target(body.region, body.az), v.abs_path(body.backup_dir, "backup_dir"))

    @r.post("/px/image", tags=["templates"])
    async def px_image(body: ImageBody | None = body_opt) -> Any:
        body = body or ImageBody()
        vmid = v.vmid(_need(body.instance_id, "instance_id"))
        name = v.template_name(_need(body.template_name, "template_name"))
        return await svc.create_image(svc.target(body.region, body.az), vmid, name)

    @r.delete("/px/image/{template_name}", tags=["templates"])
    async def px_image_delete(template_name: str, region: str | None = None, az: str | None = None) -> Any:
        return await svc.delete_image(svc.target(region, az), v.template_name(template_name))

    @r.post("/px/upload", tags=["templates"])
    async def px_upload(body: UploadBody | None = body_opt) -> Any:
        body = body or UploadBody()
        local = _need(body.local_path, "local_path")
        name = v.template_name(_need(body.remote_template_name, "remote_template_name"), "remote_template_name")
        return await svc.upload(svc.target(body.region, body.az), local, name)

    @r.post("/px/exec", tags=["hosts"])
    async def px_exec(request: Request, body: HostExecBody | None = body_opt) -> Any:
        if not config.api.host_exec_enabled:
            raise HTTPProblem(403, "host command execution is disabled (api.host_exec_enabled: false)")
        body = body or HostExecBody()
        words = v.exec_words(_need(body.command, "command"))
        key = request.headers.get("x-api-key", "")
        who = {
            "request_id": request_id(request),
            "client": client_ip(request),
            "key_sha256": hashlib.sha256(key.encode()).hexdigest()[:12],
        }
        return await svc.host_exec(svc.target(body.region, body.az), words, who)

    # ---------------------------------------------------------------- security groups
    @r.get("/px/security-groups", tags=["security groups"])
    async def sg_list(region: str | None = None, az: str | None = None) -> Any:
        return await firewall.list_groups(svc.target(region, az))

    @r.post("/px/security-groups", tags=["security groups"])
    async def sg_create(body: GroupBody | None = body_opt) -> Any:
        body = body or GroupBody()
        name = v.group_name(_need(body.group_name, "group_name"))
        description = body.description
        if description is not None and (len(description) > 200 or any(ord(c) < 32 for c in description)):
            raise BadRequest("'description' must be at most 200 printable characters")
        return await firewall.create_group(svc.target(body.region, body.az), name, description)

    @r.delete("/px/security-groups/{group_name}", tags=["security groups"])
    async def sg_delete(
        group_name: str, region: str | None = None, az: str | None = None, force: str | None = None
    ) -> Any:
        return await firewall.delete_group(
            svc.target(region, az), v.group_name(group_name), v.query_flag(force, "force")
        )

    def rule_fields(body: RuleBody) -> dict[str, str | None]:
        proto = v.protocol(body.protocol) if body.protocol is not None else None
        return {
            "type": v.choice(body.direction, "direction", v.DIRECTIONS) if body.direction is not None else None,
            "action": v.choice(body.action, "action", v.RULE_ACTIONS, upper=True) if body.action is not None else None,
            "proto": proto,
            "source": v.address_spec(body.source_ip, "source_ip") if body.source_ip is not None else None,
            "sport": v.port_spec(body.source_port, "source_port") if body.source_port is not None else None,
            "dest": v.address_spec(body.destination_ip, "destination_ip") if body.destination_ip is not None else None,
            "dport": v.port_spec(body.destination_port, "destination_port")
            if body.destination_port is not None
            else None,
        }

    @r.post("/px/security-groups/{group_name}/rules", tags=["security groups"])
    async def sg_rule_add(group_name: str, body: RuleBody | None = body_opt) -> Any:
        body = body or RuleBody()
        fields = rule_fields(body)
        proto = fields["proto"] or "tcp"
        if (fields["sport"] or fields["dport"]) and proto not in ("tcp", "udp", "sctp"):
            raise BadRequest(f"ports need protocol tcp, udp or sctp, not {proto}")
        return await firewall.add_rule(svc.target(body.region, body.az), v.group_name(group_name), fields)

    @r.delete("/px/security-groups/{group_name}/rules", tags=["security groups"])
    async def sg_rule_remove(group_name: str, body: RuleBody | None = body_opt) -> Any:
        body = body or RuleBody()
        return await firewall.remove_rules(
            svc.target(body.region, body.az), v.group_name(group_name), rule_fields(body)
        )

    @r.post("/px/security-groups/attach", tags=["security groups"])
    async def sg_attach(body: AttachBody | None = body_opt) -> Any:
        body = body or AttachBody()
        name = v.group_name(_need(body.group_name, "group_name"))
        vmid = v.vmid(_need(body.vmid, "vmid"), "vmid")
        return await firewall.attach(svc.target(body.region, body.az), name, vmid, body.enable_firewall)

    @r.post("/px/security-groups/detach", tags=["security groups"])
    async def sg_detach(body: DetachBody | None = body_opt) -> Any:
        body = body or DetachBody()
        name = v.group_name(_need(body.group_name, "group_name"))
        vmid = v.vmid(_need(body.vmid, "vmid"), "vmid")
        return await firewall.detach(svc.target(body.region, body.az), name, vmid)

    # ---------------------------------------------------------------- containers
    @r.post("/lxc/instances", tags=["instances"])
    async def create(body: CreateBody | None = body_opt) -> Any:
        body = body or CreateBody()
        if body.size not in config.instance_sizes:
            raise BadRequest(f"'size' must be one of: {', '.join(config.instance_sizes)}")
        ip = v.ipv4(body.ip, "ip") if body.ip is not None else None
        if ip and body.dhcp:
            raise BadRequest("give either 'ip' or 'dhcp': true, not both")
        if ip and body.count > 1:
            raise BadRequest("a static 'ip' can only be used with count 1")
        gateway = v.ipv4(body.gateway, "gateway") if body.gateway is not None else None
        if gateway and not ip:
            raise BadRequest("'gateway' needs a static 'ip'")
        req = containers.CreateRequest(
            image_id=v.volid(_need(body.image_id, "image_id")),
            size=body.size,
            count=body.count,
            hostname=v.hostname(body.hostname) if body.hostname is not None else None,
            password=v.password(body.password) if body.password is not None else None,
            ip=ip,
            netmask=v.netmask_bits(body.netmask),
            gateway=gateway,
            dns=v.dns_servers(body.dns) if body.dns is not None else None,
            dhcp=body.dhcp,
            storage_size=v.disk_size(body.storage_size, relative_ok=False) if body.storage_size is not None else None,
            features=v.features(body.features) if body.features is not None else None,
            unprivileged=body.unprivileged,
        )
        return await containers.create(svc.target(body.region, body.az), config, req)

    @r.get("/lxc/instances", tags=["instances"])
    async def list_instances(region: str | None = None, az: str | None = None) -> Any:
        return await containers.list_instances(svc.target(region, az))

    @r.get("/lxc/instances/{instance_id}", tags=["instances"])
    async def get_instance(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await containers.get_instance(svc.target(region, az), v.vmid(instance_id))

    for action in ("start", "stop", "terminate", "reboot"):

        def make_bulk(action: str) -> Callable[..., Awaitable[Any]]:
            async def bulk_action(body: BulkBody | None = body_opt) -> Any:
                body = body or BulkBody()
                ids = v.vmids(body.instance_ids)
                return await containers.bulk(svc.target(body.region, body.az), action, ids)

            bulk_action.__name__ = f"instances_{action}"
            return bulk_action

        r.add_api_route(f"/lxc/instances/{action}", make_bulk(action), methods=["POST"], tags=["instances"])

    @r.post("/lxc/instances/status", tags=["instances"])
    async def instances_status(body: BulkBody | None = body_opt) -> Any:
        body = body or BulkBody()
        return await containers.status(svc.target(body.region, body.az), v.vmids(body.instance_ids))

    @r.post("/lxc/instances/scale", tags=["instances"])
    async def instances_scale(body: ScaleBody | None = body_opt) -> Any:
        body = body or ScaleBody()
        ids = v.vmids(body.instance_ids)
        if body.disk_read_limit is not None or body.disk_write_limit is not None:
            raise BadRequest("'disk_read_limit' and 'disk_write_limit' are not supported")
        req = containers.ScaleRequest(
            memory=v.positive_int(body.memory, "memory", 16, 4_194_304) if body.memory is not None else None,
            cpulimit=v.positive_number(body.cpulimit, "cpulimit") if body.cpulimit is not None else None,
            cpucores=v.positive_int(body.cpucores, "cpucores", 1, 8192) if body.cpucores is not None else None,
            storage_size=v.disk_size(body.storage_size) if body.storage_size is not None else None,
            net_limit=v.positive_number(body.net_limit, "net_limit", 0, 100_000)
            if body.net_limit is not None
            else None,
        )
        if all(getattr(req, f) is None for f in ("memory", "cpulimit", "cpucores", "storage_size", "net_limit")):
            raise BadRequest("give at least one of memory, cpulimit, cpucores, storage_size, net_limit")
        return await containers.scale(svc.target(body.region, body.az), ids, req)

    @r.post("/lxc/instances/clone", tags=["instances"])
    async def instances_clone(body: CloneBody | None = body_opt) -> Any:
        body = body or CloneBody()
        source = v.vmid(_need(body.source_instance_id, "source_instance_id"), "source_instance_id")
        target = v.vmid(body.target_instance_id, "target_instance_id") if body.target_instance_id else None
        if target == source:
            raise BadRequest("'target_instance_id' must differ from 'source_instance_id'")
        return await containers.clone(svc.target(body.region, body.az), source, target, body.full)

    @r.post("/lxc/instances/{instance_id}/exec", tags=["instances"])
    async def instance_exec(instance_id: str, body: ExecBody | None = body_opt) -> Any:
        body = body or ExecBody()
        words = v.exec_words(_need(body.command, "command"))
        return await containers.exec_in(svc.target(body.region, body.az), v.vmid(instance_id), words)

    @r.post("/lxc/instances/{instance_id}/snapshots", tags=["snapshots"])
    async def snapshot_create(instance_id: str, body: SnapshotBody | None = body_opt) -> Any:
        body = body or SnapshotBody()
        name = v.snapshot_name(_need(body.snapshot_name, "snapshot_name"))
        return await containers.snapshot_create(svc.target(body.region, body.az), v.vmid(instance_id), name)

    @r.get("/lxc/instances/{instance_id}/snapshots", tags=["snapshots"])
    async def snapshot_list(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await containers.snapshot_list(svc.target(region, az), v.vmid(instance_id))

    @r.delete("/lxc/instances/{instance_id}/snapshots/{snapshot_name}", tags=["snapshots"])
    async def snapshot_delete(
        instance_id: str, snapshot_name: str, region: str | None = None, az: str | None = None
    ) -> Any:
        return await containers.snapshot_delete(
            svc.target(region, az), v.vmid(instance_id), v.snapshot_name(snapshot_name)
        )

    @r.post("/lxc/instances/{instance_id}/volumes/attach", tags=["volumes"])
    async def volume_attach(instance_id: str, body: VolumeAttachBody | None = body_opt) -> Any:
        body = body or VolumeAttachBody()
        storage = v.storage(_need(body.volume_name, "volume_name"), "volume_name")
        size = v.disk_size(_need(body.volume_size, "volume_size"), "volume_size", relative_ok=False)
        mount = v.abs_path(_need(body.mount_point, "mount_point"), "mount_point")
        if mount == "/":
            raise BadRequest("'mount_point' cannot be /")
        return await containers.volume_attach(
            svc.target(body.region, body.az), v.vmid(instance_id), storage, size, mount
        )

    @r.post("/lxc/instances/{instance_id}/volumes/detach", tags=["volumes"])
    async def volume_detach(instance_id: str, body: VolumeDetachBody | None = body_opt) -> Any:
        body = body or VolumeDetachBody()
        if body.volume_name is not None:
            v.storage(body.volume_name, "volume_name")
        return await containers.volume_detach(svc.target(body.region, body.az), v.vmid(instance_id))

    @r.post("/lxc/instances/{instance_id}/service", tags=["instances"])
    async def instance_service(instance_id: str, body: ServiceBody | None = body_opt) -> Any:
        body = body or ServiceBody()
        action = v.choice(_need(body.action, "action"), "action", v.SERVICE_ACTIONS)
        name = v.service_name(_need(body.service_name, "service_name"))
        return await containers.service(svc.target(body.region, body.az), v.vmid(instance_id), action, name)

    @r.post("/lxc/instances/{instance_id}/migrate", tags=["instances"])
    async def instance_migrate(instance_id: str, body: MigrateBody | None = body_opt) -> Any:
        body = body or MigrateBody()
        node = v.node(_need(body.target_host, "target_host"))
        storage = v.storage(body.target_storage, "target_storage") if body.target_storage else None
        return await containers.migrate(
            svc.target(body.region, body.az), v.vmid(instance_id), node, body.restart, storage
        )

    @r.get("/lxc/instances/{instance_id}/storage", tags=["diagnostics"])
    async def instance_storage(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.storage(svc.target(region, az), v.vmid(instance_id))

    @r.get("/lxc/instances/{instance_id}/scale-check", tags=["diagnostics"])
    async def instance_scale_check(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.scale_check(svc.target(region, az), config, v.vmid(instance_id))

    @r.get("/lxc/instances/{instance_id}/net-check", tags=["diagnostics"])
    async def instance_net_check(
        instance_id: str,
        protocol: str = "tcp",
        port: str | None = None,
        region: str | None = None,
        az: str | None = None,
    ) -> Any:
        proto = v.choice(protocol, "protocol", ("tcp", "udp"))
        return await diagnostics.net_check(
            svc.target(region, az), v.vmid(instance_id), proto, v.port(_need(port, "port"))
        )

    @r.get("/lxc/instances/{instance_id}/info", tags=["diagnostics"])
    async def instance_info(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.info(svc.target(region, az), v.vmid(instance_id))

    @r.get("/lxc/instances/{instance_id}/public-ip", tags=["diagnostics"])
    async def instance_public_ip(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.public_ip(svc.target(region, az), v.vmid(instance_id))

    @r.get("/lxc/instances/{instance_id}/health-check", tags=["diagnostics"])
    async def instance_health(
        instance_id: str, fix: str | None = None, region: str | None = None, az: str | None = None
    ) -> Any:
        return await diagnostics.health_check(svc.target(region, az), v.vmid(instance_id), v.query_flag(fix, "fix"))

    @r.post("/lxc/instances/{instance_id}/restore", tags=["backups"])
    async def instance_restore(instance_id: str, body: RestoreBody | None = body_opt) -> Any:
        body = body or RestoreBody()
        source = _need(body.backup_file, "backup_file")
        if isinstance(source, str) and source.startswith("/"):
            source = v.abs_path(source, "backup_file")
        else:
            source = _backup_volid(source)
        storage = v.storage(body.storage) if body.storage else None
        if not body.force:
            raise BadRequest("restore replaces the container: pass 'force': true to confirm")
        return await containers.restore(
            svc.target(body.region, body.az), config, v.vmid(instance_id), source, storage, body.no_start
        )

    @r.post("/lxc/instances/{instance_id}/backup", tags=["backups"])
    async def instance_backup(instance_id: str, body: BackupBody | None = body_opt) -> Any:
        body = body or BackupBody()
        if body.destination and body.storage:
            raise BadRequest("give either 'destination' or 'storage', not both")
        destination = v.abs_path(body.destination, "destination") if body.destination else None
        storage = v.storage(body.storage) if body.storage else None
        mode = v.choice(body.mode, "mode", v.BACKUP_MODES)
        compress = v.COMPRESS[v.choice(body.compress, "compress", tuple(v.COMPRESS))]
        t = svc.target(body.region, body.az)

        async def fetch(remote: str, local: str) -> None:
            await svc.pool.get_file(t.key, t.zone, remote, local)

        return await containers.backup(
            t, config, fetch, v.vmid(instance_id), destination, storage, mode, compress, body.download
        )

    @r.get("/lxc/instances/{instance_id}/report", tags=["diagnostics"])
    async def instance_report(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.report(svc.target(region, az), config, v.vmid(instance_id))

    @r.get("/lxc/instances/{instance_id}/resources", tags=["diagnostics"])
    async def instance_resources(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.resources(svc.target(region, az), v.vmid(instance_id))

    # ---------------------------------------------------------------- applications
    @r.post("/lxc/instances/{instance_id}/app/setup", tags=["applications"])
    async def app_setup(instance_id: str, body: AppSetupBody | None = body_opt) -> Any:
        body = body or AppSetupBody()
        return await apps.setup(svc.target(body.region, body.az), v.vmid(instance_id), body.enable_nesting)

    @r.post("/lxc/instances/{instance_id}/app/run", tags=["applications"])
    async def app_run(instance_id: str, body: AppRunBody | None = body_opt) -> Any:
        body = body or AppRunBody()
        words = v.exec_words(_need(body.docker_command, "docker_command"), "docker_command")
        return await apps.run(svc.target(body.region, body.az), v.vmid(instance_id), words)

    @r.post("/lxc/instances/{instance_id}/app/deploy", tags=["applications"])
    async def app_deploy(instance_id: str, body: AppDeployBody | None = body_opt) -> Any:
        body = body or AppDeployBody()
        action = v.choice(body.action, "action", v.APP_ACTIONS)
        return await apps.deploy(
            svc.target(body.region, body.az),
            config,
            v.vmid(instance_id),
            action,
            _need(body.compose_file, "compose_file"),
            body.auto_start,
        )

    @r.post("/lxc/instances/{instance_id}/app/update", tags=["applications"])
    async def app_update(instance_id: str, body: AppUpdateBody | None = body_opt) -> Any:
        body = body or AppUpdateBody()
        return await apps.update(
            svc.target(body.region, body.az), config, v.vmid(instance_id), _need(body.compose_file, "compose_file")
        )

    @r.get("/lxc/instances/{instance_id}/app/logs/{container_name}", tags=["applications"])
    async def app_logs(
        instance_id: str, container_name: str, tail: str | None = None, region: str | None = None, az: str | None = None
    ) -> Any:
        return await apps.logs(
            svc.target(region, az), v.vmid(instance_id), v.container_name(container_name), v.tail(tail)
        )

    @r.get("/lxc/instances/{instance_id}/app/containers", tags=["applications"])
    async def app_containers(instance_id: str, region: str | None = None, az: str | None = None) -> Any:
        return await apps.containers(svc.target(region, az), v.vmid(instance_id))

    @r.post("/lxc/instances/app/remove", tags=["applications"])
    async def app_remove(body: AppRemoveBody | None = body_opt) -> Any:
        body = body or AppRemoveBody()
        return await apps.remove(svc.target(body.region, body.az), v.vmids(body.instance_ids), body.purge)

    # ---------------------------------------------------------------- security
    @r.get("/sec/discovery", tags=["security"])
    async def sec_discovery(lxc_id: str | None = None, region: str | None = None, az: str | None = None) -> Any:
        return await diagnostics.discovery(svc.target(region, az), v.vmid(lxc_id, "lxc_id") if lxc_id else None)

    @r.get("/lxc/instances/{instance_id}/sec/scan", tags=["security"])
    async def sec_scan(
        instance_id: str, scan_type: str = "quick", region: str | None = None, az: str | None = None
    ) -> Any:
        kind = v.choice(scan_type, "scan_type", ("quick", "full"))
        return await diagnostics.security_scan(svc.target(region, az), v.vmid(instance_id), kind)

    return r


def _backup_volid(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(
        r"^[A-Za-z][A-Za-z0-9_.\-]*:backup/[A-Za-z0-9][A-Za-z0-9._\-]*$", value
    ):
        raise BadRequest("'backup_file' must be an absolute host path or a backup volume id (storage:backup/name)")
    return value
