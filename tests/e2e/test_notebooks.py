"""Every notebook in notebooks/ runs to the end against the deployed cluster."""

from __future__ import annotations

import json
import os

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT

# cluster_autoscaler.ipynb starts a cluster of its own and runs the scenario of
# test_cluster_autoscaler.py (about 2.5 min): in the suite only with RAYFLEET_ALL_NOTEBOOKS=1
OWN_CLUSTER = {"cluster_autoscaler.ipynb"}
NOTEBOOKS = sorted(
    p
    for p in (ROOT / "notebooks").glob("*.ipynb")
    if p.name not in OWN_CLUSTER or os.environ.get("RAYFLEET_ALL_NOTEBOOKS") == "1"
)
# a cell of the cluster-autoscaler notebook waits for a node to start or to go idle and be removed
CELL_TIMEOUT = {"cluster_autoscaler.ipynb": 420}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_against_the_cluster(path, cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("RAYFLEET_URL", cluster.base_url)
    monkeypatch.setenv("RAYFLEET_APPS", ",".join(cluster.apps))
    monkeypatch.setenv("RAYFLEET_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("RAYFLEET_SECRETS", cluster.secrets_path)
    # the simulated day's first eighth: every cell, table and chart of the notebook, in an eighth of the time
    monkeypatch.setenv("AUTOSCALE_NOTEBOOK_HOURS", "3")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=CELL_TIMEOUT.get(path.name, 120), kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert not [o for o in outputs if o.get("output_type") == "error"]
    if path.name == "fleet_overview.ipynb":
        for app in cluster.apps:
            assert f"{app:<12} status=200" in text, f"{app} not healthy in the notebook:\n{text}"
        assert any("image/png" in o.get("data", {}) for o in outputs), "no chart drawn"
        assert (tmp_path / "fleet-overview.png").stat().st_size > 1000
    if path.name == "autoscale.ipynb":
        assert "scaling actions" in text and "decisions" in text, text[-2000:]
        assert any("image/png" in o.get("data", {}) for o in outputs), "no chart drawn"
        assert (tmp_path / "autoscale-cpu.png").stat().st_size > 1000
        assert (tmp_path / "autoscale-day.duckdb").stat().st_size > 0
    if path.name == "cluster_autoscaler.ipynb":
        assert "failed answers: 0" in text and "worker node" in text, text[-3000:]
        samples = json.loads((tmp_path / "cluster-autoscaler.json").read_text())
        nodes = [s["nodes"] for s in samples]
        assert nodes[0] == 1 and max(nodes) >= 2 and nodes[-1] == 1, nodes
        assert any("image/png" in o.get("data", {}) for o in outputs), "no chart drawn"
