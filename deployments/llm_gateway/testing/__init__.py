"""Test and benchmark support that ships with the gateway (the upstream double)."""
