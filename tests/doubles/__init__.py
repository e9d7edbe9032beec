"""Test doubles: stand-ins for services the product talks to (upstream LLM APIs, an OIDC issuer)."""
