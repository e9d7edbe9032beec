"""Mitigation fleet: HAProxy-backed mitigation nodes (Ray actors) and the fleet that runs them."""
