"""Data schemas the network validates tasks and proposals against (`task_v1`, `task_v2`, `proposal_v1`)."""

from __future__ import annotations

from typing import Any

FieldSpec = dict[str, Any]

TASK_FIELDS: dict[str, FieldSpec] = {
    "title": {"type": "string", "required": True, "min_length": 1, "max_length": 200},
    "description": {"type": "string", "required": False, "max_length": 5000, "default": ""},
    "reward": {"type": "integer", "required": False, "min": 0, "default": 0},
    "tags": {"type": "list", "required": False, "default": []},
    "required_tools": {"type": "list", "required": False, "default": []},
}
AUCTION_FIELDS: dict[str, FieldSpec] = {
    "enable_auction": {"type": "boolean", "required": False, "default": False},
    "max_reward": {"type": "integer", "required": False, "min": 1},
    "auction_deadline_hours": {"type": "integer", "required": False, "min": 1, "max": 720, "default": 24},
}
PROPOSAL_TYPES = ["generic", "config_change", "command", "code_upgrade", "validator_change"]

SCHEMAS: dict[str, dict[str, Any]] = {
    "task_v1": {"name": "task_v1", "version": 1, "fields": dict(TASK_FIELDS)},
    "task_v2": {"name": "task_v2", "version": 2, "fields": {**TASK_FIELDS, **AUCTION_FIELDS}},
    "proposal_v1": {
        "name": "proposal_v1",
        "version": 1,
        "fields": {
            "title": TASK_FIELDS["title"],
            "description": TASK_FIELDS["description"],
            "proposal_type": {"type": "enum", "required": False, "values": PROPOSAL_TYPES, "default": "generic"},
            "params": {"type": "object", "required": False, "default": {}},
            "tags": TASK_FIELDS["tags"],
        },
    },
}


def _check(name: str, spec: FieldSpec, value: Any) -> str | None:
    kind = spec["type"]
    if kind == "string":
        if not isinstance(value, str):
            return f"{name}: expected a string"
        if len(value) < spec.get("min_length", 0) or len(value) > spec.get("max_length", 1 << 30):
            return f"{name}: length must be {spec.get('min_length', 0)}..{spec.get('max_length', 'any')}"
    elif kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{name}: expected an integer"
        if value < spec.get("min", -(1 << 62)) or value > spec.get("max", 1 << 62):
            return f"{name}: must be within {spec.get('min', '-inf')}..{spec.get('max', 'inf')}"
    elif kind == "boolean":
        if not isinstance(value, bool):
            return f"{name}: expected a boolean"
    elif kind == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{name}: expected a list of strings"
    elif kind == "object":
        if not isinstance(value, dict):
            return f"{name}: expected an object"
    elif kind == "enum" and value not in spec["values"]:
        return f"{name}: must be one of {', '.join(spec['values'])}"
    return None


def validate(schema_name: str, data: Any) -> list[str]:
    """Every error of `data` against the schema (empty when valid); KeyError for an unknown schema."""
    schema = SCHEMAS[schema_name]
    if not isinstance(data, dict):
        return ["data: expected an object"]
    errors = []
    for name, spec in schema["fields"].items():
        if name not in data:
            if spec.get("required"):
                errors.append(f"{name}: required")
            continue
        problem = _check(name, spec, data[name])
        if problem:
            errors.append(problem)
    return errors
