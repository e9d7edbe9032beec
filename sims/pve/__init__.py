"""pve-sim: an SSH server answering the Proxmox VE commands the container API uses.

Run it with ``python -m sims.pve --port N --state DIR --authorized-keys FILE``.
"""

from .host import Host, make_host
from .server import SimServer, ThreadedSim, ensure_host_key

__all__ = ["Host", "SimServer", "ThreadedSim", "ensure_host_key", "make_host"]
