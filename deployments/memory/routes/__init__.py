"""The REST server's routes (`mem serve`), one module per resource: health and memories."""
