"""Configuration of the ignore-file generator (config/ignore_gen.yaml).

The spec gives the generator no limits; these bound the work one request can
ask for so a single client cannot hold a replica for seconds. Environment
overrides: `IGNORE_GEN__LIMITS__MAX_TREE_PATHS=500000` and so on.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rayfleet.config import load_yaml

ENV_PREFIX = "IGNORE_GEN"


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tree_paths: int = Field(200_000, ge=1)
    max_path_length: int = Field(4096, ge=1)
    max_features: int = Field(256, ge=1)
    max_extras: int = Field(1000, ge=0)
    max_pattern_length: int = Field(1024, ge=1)
    max_existing_bytes: int = Field(1_048_576, ge=1)


class IgnoreGenConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limits: Limits = Field(default_factory=Limits)
    # Folder of <feature>.gitignore files; None uses the packaged templates.
    templates_dir: Path | None = None
    # Rules table JSON written by `python -m deployments.ignore_gen.mine`;
    # None uses the packaged table.
    rules_table: Path | None = None


def load(path: str | Path | None) -> IgnoreGenConfig:
    return load_yaml(path, IgnoreGenConfig, env_prefix=ENV_PREFIX)
