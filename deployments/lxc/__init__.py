"""Container management API: LXC containers on Proxmox VE hosts over pooled SSH (spec 000 §A)."""
