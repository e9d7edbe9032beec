"""The generator's routes, one module per resource (service information, generation, metrics)."""
