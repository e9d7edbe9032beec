from tests.deployments.lxc.simenv import create_ct


async def test_create_list_exec(api):
    vmid = await create_ct(api, hostname="web")
    r = await api.get("/api/v1/lxc/instances")
    assert r.status_code == 200, r.text
    assert any(str(c["vmid"]) == vmid for c in r.json())
    r = await api.post(f"/api/v1/lxc/instances/{vmid}/exec", json={"command": "cat /etc/hostname"})
    assert r.status_code == 200, r.text
    assert r.json() == {"output": f"web-{vmid}"}
