"""The gateway's HTTP routes, one ``APIRouter`` per resource."""
