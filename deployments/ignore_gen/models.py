"""Request and response bodies (spec 001 §2.B). Validation failures become 422."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

FEATURE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _check_feature(value: str) -> str:
    if not FEATURE_NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a feature name: use 1-64 lower-case letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return value


FeatureName = Annotated[str, AfterValidator(_check_feature)]


def _check_extra(value: str) -> str:
    if not value:
        raise ValueError("an extra pattern must not be empty")
    if "\n" in value or "\r" in value:
        raise ValueError("an extra pattern must be a single line")
    if value != value.strip():
        raise ValueError("an extra pattern must not start or end with whitespace")
    if value.startswith("#"):
        raise ValueError("an extra pattern must not start with '#' (that is a comment; escape it as '\\#')")
    if "\0" in value:
        raise ValueError("an extra pattern must not contain NUL")
    return value


Extra = Annotated[str, AfterValidator(_check_extra)]


class GenerateOptions(BaseModel):
    # `tree` or `features` (or both) must be given; the schema says so, the service answers 400 otherwise.
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"anyOf": [{"required": ["tree"]}, {"required": ["features"]}]}
    )

    tree: list[str] | None = Field(
        None, description="File paths of the project (`/` or `\\` separators); fingerprinted into features."
    )
    features: list[FeatureName] | None = Field(
        None, description="Feature names (`[a-z0-9][a-z0-9_-]*`) used in addition to, or instead of, fingerprinting."
    )
    include_comments: bool = Field(True, description="Header lines and `# --- section ---` markers.")
    include_provenance: bool = Field(
        False, description="A `# <feature>` comment line above each run of patterns from one feature."
    )
    extras: list[Extra] = Field(default_factory=list, description="User patterns, one line each.")


class GenerateRequest(GenerateOptions):
    pass


class DiffRequest(GenerateOptions):
    existing: str = Field(..., description="Content of the existing ignore file.")


class RuleOut(BaseModel):
    pattern: str
    source: Literal["template", "mined", "user_extra"]
    feature: str | None


class FeatureOut(BaseModel):
    name: str
    witness: str


class GenerateResponse(BaseModel):
    content: str
    output_hash: str
    rules_table_version: str
    core_version: str
    templates_version: str
    rules: list[RuleOut]
    features: list[FeatureOut] = Field(
        description="Features used, each with the smallest path that revealed it, `(requested)` or `(implicit)`."
    )


class CoveredOut(BaseModel):
    pattern: str
    side: Literal["generated", "existing"] = Field(description="the side the pattern comes from")
    by: list[str] = Field(description="the other side's patterns that ignore everything it does")


class DiffResponse(BaseModel):
    added: list[str] = Field(description="generated patterns that existing neither has nor covers")
    removed: list[str] = Field(description="existing patterns that the generated file neither has nor covers")
    covered: list[CoveredOut] = Field(
        default_factory=list, description="patterns left out of added/removed because the other side covers them"
    )


class VersionResponse(BaseModel):
    core_version: str
    rules_table_version: str
    templates_version: str


class HealthResponse(BaseModel):
    status: str


class FeatureInfo(BaseModel):
    name: str
    description: str
    patterns: int
    always: bool


class FeaturesResponse(BaseModel):
    features: list[FeatureInfo]


class ErrorResponse(BaseModel):
    detail: str
