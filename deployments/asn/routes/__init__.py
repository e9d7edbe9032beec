"""The ASN API's routes, one module per resource (public pages, lookups, search)."""
