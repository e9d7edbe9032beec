"""Simulators shared by components and tests (pve-sim: a Proxmox VE host over SSH)."""
