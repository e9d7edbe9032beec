"""Request bodies (they document the API; allow-list checks happen in the handlers).

Unknown keys are refused (400) everywhere except `/px/exec`, whose spec says
other body fields are ignored.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Located(Body):
    region: str | None = Field(default=None, examples=["eu-south-1"])
    az: str | None = Field(default=None, examples=["az1"])


class ConfBackupBody(Body):
    destination_path: str | None = Field(default=None, description="file or folder inside conf_backup_dir")
    timestamp: StrictBool = False
    compress: StrictBool = False


class RebootBody(Located):
    confirm: StrictBool = False


class UpdateBody(Located):
    pass


class BackupLxcBody(Located):
    vmid: str | None = None
    storage: str | None = None
    mode: str = "snapshot"


class HostBackupBody(Located):
    backup_dir: str = "/var/lib/vz/dump"


class ImageBody(Located):
    instance_id: str | None = None
    template_name: str | None = None


class GroupBody(Located):
    group_name: str | None = None
    description: str | None = None


class RuleBody(Located):
    direction: str | None = Field(default=None, examples=["in"])
    action: str | None = Field(default=None, examples=["ACCEPT"])
    protocol: str | None = Field(default=None, examples=["tcp"])
    source_ip: str | None = None
    source_port: str | int | None = None
    destination_ip: str | None = None
    destination_port: str | int | None = Field(default=None, examples=["80"])


class AttachBody(Located):
    group_name: str | None = None
    vmid: str | int | None = None
    enable_firewall: StrictBool = False


class DetachBody(Located):
    group_name: str | None = None
    vmid: str | int | None = None


class UploadBody(Located):
    local_path: str | None = None
    remote_template_name: str | None = None


class HostExecBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    command: str | list[str] | None = Field(default=None, examples=["pct list"])
    region: str | None = None
    az: str | None = None


class CreateBody(Located):
    image_id: str | None = Field(default=None, examples=["local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"])
    size: str = "small"
    count: int = Field(default=1, ge=1, le=50)
    hostname: str | None = None
    password: str | None = None
    ip: str | None = None
    netmask: str | int = "24"
    gateway: str | None = None
    dns: str | None = None
    dhcp: StrictBool = False
    ipv6: str | None = Field(default=None, description="auto (SLAAC), dhcp, manual or an address/prefix")
    gateway6: str | None = None
    storage_size: str | int | None = None
    features: str | None = None
    unprivileged: StrictBool = False


class BulkBody(Located):
    instance_ids: list[Any] | None = Field(default=None, examples=[["100", "101"]])


class ScaleBody(BulkBody):
    memory: int | None = None
    cpulimit: str | int | float | None = None
    cpucores: int | None = None
    storage_size: str | None = None
    net_limit: str | int | float | None = None
    disk_read_limit: Any = None
    disk_write_limit: Any = None


class CloneBody(Located):
    source_instance_id: str | None = None
    target_instance_id: str | None = None
    full: StrictBool = True


class ExecBody(Located):
    command: str | list[str] | None = Field(default=None, examples=["uname -a"])


class SnapshotBody(Located):
    snapshot_name: str | None = None


class RollbackBody(Located):
    start: StrictBool = Field(default=False, description="start the container after the rollback")


class ConfigEditBody(Located):
    """Fields left out stay as they are; `tags: []`, `description: ""` and `startup_order: null` with
    `clear_startup: true` remove the setting."""

    onboot: StrictBool | None = None
    tags: list[Any] | None = None
    description: str | None = None
    startup_order: Any = None
    startup_up: Any = None
    startup_down: Any = None
    clear_startup: StrictBool = False
    ipv6: str | None = Field(default=None, description="net0's IPv6: auto, dhcp, manual or address/prefix")
    gateway6: str | None = None


class VolumeAttachBody(Located):
    volume_name: str | None = None
    volume_size: str | None = None
    mount_point: str | None = None
    slot: str | None = Field(default=None, description="mp0-mp9; default: the first free one")


class VolumeDetachBody(Located):
    volume_name: str | None = None
    slot: str | None = Field(default=None, description="mp0-mp9; default mp0 (spec)")


class ServiceBody(Located):
    action: str | None = None
    service_name: str | None = None


class MigrateBody(Located):
    target_host: str | None = None
    restart: StrictBool = False
    target_storage: str | None = None


class RestoreBody(Located):
    backup_file: str | None = None
    storage: str | None = None
    no_start: StrictBool = False
    force: StrictBool = False


class BackupBody(Located):
    destination: str | None = None
    storage: str | None = None
    mode: str = "snapshot"
    compress: str = "zstd"
    download: StrictBool = False


class AppSetupBody(Located):
    enable_nesting: StrictBool = False


class AppRunBody(Located):
    docker_command: str | list[str] | None = None


class AppDeployBody(Located):
    action: str = "install"
    compose_file: str | None = None
    auto_start: StrictBool = False


class AppUpdateBody(Located):
    compose_file: str | None = None


class AppRemoveBody(Located):
    instance_ids: list[Any] | None = None
    purge: StrictBool = False
