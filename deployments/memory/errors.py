"""Errors of the memory tool, each with its CLI exit code and REST status.

Exit codes (documented in README.md):
  0 success, 1 unexpected failure or a failed `doctor` check, 2 bad usage,
  3 not found, 4 conflict (the target key already exists), 5 storage error,
  6 embedding endpoint missing or failing (only where an endpoint is required).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4
EXIT_STORAGE = 5
EXIT_EMBEDDING = 6


class MemError(Exception):
    """Base class: a message for people plus machine-readable code and statuses."""

    exit_code = EXIT_FAILURE
    http_status = 500
    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"error": self.message, "code": self.code}


class UsageError(MemError):
    exit_code = EXIT_USAGE
    http_status = 400
    code = "bad_request"


class NotFoundError(MemError):
    exit_code = EXIT_NOT_FOUND
    http_status = 404
    code = "not_found"


class ConflictError(MemError):
    exit_code = EXIT_CONFLICT
    http_status = 409
    code = "conflict"


class StorageError(MemError):
    exit_code = EXIT_STORAGE
    http_status = 500
    code = "storage_error"


class EmbeddingError(MemError):
    exit_code = EXIT_EMBEDDING
    http_status = 502
    code = "embedding_error"
