"""The mitigation routers, one module per resource: the fleet (orchestrator) and one node."""
