"""rayfleet: self-hosted infrastructure services on one Ray cluster (the platform)."""

__version__ = "0.1.0"
