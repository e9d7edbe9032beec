"use strict";
// Web UI of the container management API. Every value from the server is
// rendered with textContent; nothing is ever parsed as HTML.
(function () {
  const prefix = document.body.dataset.prefix || "";
  const api = prefix + "/api/v1";
  const KEY = "lxc-api-key";
  const $ = (id) => document.getElementById(id);

  function key() { return window.localStorage.getItem(KEY) || ""; }

  function showKeyState() {
    $("key-state").textContent = key() ? "key set" : "no key set";
  }

  function location_() {
    const out = {};
    if ($("region").value.trim()) out.region = $("region").value.trim();
    if ($("az").value.trim()) out.az = $("az").value.trim();
    return out;
  }

  function query(extra) {
    const params = new URLSearchParams(Object.assign({}, location_(), extra || {}));
    const text = params.toString();
    return text ? "?" + text : "";
  }

  function show(label, status, body) {
    const badge = $("result-status");
    badge.textContent = label + " \u2192 HTTP " + status;
    badge.className = status >= 200 && status < 300 ? "ok" : "error";
    const summary = $("result-summary");
    summary.textContent = "";
    if (body && typeof body === "object" && !Array.isArray(body)) {
      if (body.error) summary.textContent = "Error: " + body.error;
      else if (body.description) summary.textContent = body.name + ": " + body.description;
    }
    $("result").textContent = typeof body === "string" ? body : JSON.stringify(body, null, 2);
  }

  async function call(label, method, path, body) {
    const headers = { "X-API-Key": key() };
    const init = { method: method, headers: headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    $("result-status").textContent = label + " \u2026";
    $("result-status").className = "";
    let status = 0;
    let data = null;
    try {
      const response = await fetch(api + path, init);
      status = response.status;
      const text = await response.text();
      try { data = JSON.parse(text); } catch (e) { data = text; }
    } catch (err) {
      data = String(err);
    }
    show(label, status, data);
    return { status: status, data: data };
  }

  function selected() {
    return Array.from(document.querySelectorAll("#instances tbody input[type=checkbox]:checked"))
      .map((box) => box.value);
  }

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
  }

  function mb(bytes) { return typeof bytes === "number" ? Math.round(bytes / 1048576) + " MB" : ""; }
  function gb(bytes) { return typeof bytes === "number" ? (bytes / 1073741824).toFixed(1) + " GB" : ""; }

  async function refresh() {
    const res = await call("List containers", "GET", "/lxc/instances" + query());
    const keep = new Set(selected());
    const tbody = document.querySelector("#instances tbody");
    tbody.textContent = "";
    if (res.status !== 200 || !Array.isArray(res.data)) return;
    res.data.sort((a, b) => a.vmid - b.vmid).forEach((ct) => {
      const row = document.createElement("tr");
      row.dataset.vmid = String(ct.vmid);
      const td = document.createElement("td");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.value = String(ct.vmid);
      box.checked = keep.has(box.value);
      td.appendChild(box);
      row.appendChild(td);
      cell(row, String(ct.vmid));
      cell(row, ct.name || "");
      cell(row, ct.status || "");
      cell(row, mb(ct.maxmem));
      cell(row, gb(ct.maxdisk));
      tbody.appendChild(row);
    });
  }

  // Jobs: the newest first; a running one shows its newest output line and a Cancel button.
  // While any job runs, the table reads the jobs again every JOBS_POLL ms.
  const JOBS_POLL = 1000;
  let jobsTimer = null;

  function target(job) {
    const t = job.target || {};
    if (t.instance_id) return "CT " + t.instance_id + (t.key ? " on " + t.key : "");
    if (Array.isArray(t.hosts)) return t.hosts.join(", ");
    return JSON.stringify(t);
  }

  async function fetchJson(method, path) {
    try {
      const response = await fetch(api + path, { method: method, headers: { "X-API-Key": key() } });
      return { status: response.status, data: await response.json() };
    } catch (err) {
      return { status: 0, data: null };
    }
  }

  async function jobRow(job) {
    const row = document.createElement("tr");
    row.dataset.job = job.id;
    cell(row, job.kind || "");
    cell(row, target(job));
    cell(row, job.state + (job.cancel_requested && job.state === "running" ? " (cancelling)" : ""));
    row.lastChild.className = "state-" + job.state;
    let progress = job.lines + " lines";
    if (job.state === "running") {
      const one = await fetchJson("GET", "/jobs/" + encodeURIComponent(job.id));
      const lines = one.data && Array.isArray(one.data.progress) ? one.data.progress : [];
      if (lines.length) progress += ": " + lines[lines.length - 1];
    } else if (job.error && job.error.error) {
      progress += ": " + job.error.error;
    }
    cell(row, progress);
    row.lastChild.className = "progress";
    row.lastChild.title = progress;
    cell(row, new Date(job.started * 1000).toLocaleTimeString());
    const td = document.createElement("td");
    if (job.state === "running" && !job.cancel_requested) {
      const button = document.createElement("button");
      button.className = "danger cancel-job";
      button.textContent = "Cancel";
      button.addEventListener("click", async () => {
        button.disabled = true;
        await call("Cancel job " + job.id, "DELETE", "/jobs/" + encodeURIComponent(job.id));
        await refreshJobs();
      });
      td.appendChild(button);
    }
    row.appendChild(td);
    return row;
  }

  async function refreshJobs() {
    const res = await fetchJson("GET", "/jobs?limit=20");
    const tbody = document.querySelector("#jobs tbody");
    if (res.status !== 200 || !Array.isArray(res.data)) {
      $("jobs-state").textContent = "could not read the jobs (HTTP " + res.status + ")";
      return;
    }
    const rows = [];
    for (const job of res.data) rows.push(await jobRow(job));
    tbody.textContent = "";
    rows.forEach((row) => tbody.appendChild(row));
    const running = res.data.filter((job) => job.state === "running").length;
    $("jobs-state").textContent = running ? running + " running" : "";
    if (running && jobsTimer === null) {
      jobsTimer = window.setTimeout(() => { jobsTimer = null; refreshJobs(); }, JOBS_POLL);
    }
  }

  async function loadTemplates() {
    const res = await call("Templates", "GET", "/px/templates" + query());
    const select = $("create-image");
    select.textContent = "";
    if (res.status !== 200 || !Array.isArray(res.data)) return;
    res.data.forEach((t) => {
      const opt = document.createElement("option");
      opt.value = t.volid;
      opt.textContent = t.volid + " (" + t.size + ")";
      select.appendChild(opt);
    });
  }

  async function bulk(action) {
    const ids = selected();
    if (!ids.length) { show(action, 400, { error: "select at least one container" }); return; }
    await call(action, "POST", "/lxc/instances/" + action, Object.assign({ instance_ids: ids }, location_()));
    if (action !== "status") await refreshQuietly();
  }

  async function refreshQuietly() {
    const status = $("result-status").textContent;
    const cls = $("result-status").className;
    const summary = $("result-summary").textContent;
    const body = $("result").textContent;
    await refresh();
    $("result-status").textContent = status;
    $("result-status").className = cls;
    $("result-summary").textContent = summary;
    $("result").textContent = body;
  }

  function wire() {
    showKeyState();
    $("key-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      window.localStorage.setItem(KEY, $("api-key").value.trim());
      $("api-key").value = "";
      showKeyState();
      loadTemplates().then(refreshQuietly).then(refreshJobs);
    });
    $("forget-key").addEventListener("click", () => { window.localStorage.removeItem(KEY); showKeyState(); });
    $("btn-health").addEventListener("click", () => call("Health", "GET", "/health"));
    $("btn-host-status").addEventListener("click", () => call("Host status", "GET", "/px/status" + query()));
    $("btn-templates").addEventListener("click", loadTemplates);
    $("btn-clusters").addEventListener("click", () => call("Cluster", "GET", "/px/clusters" + query()));
    $("btn-list").addEventListener("click", refresh);
    ["start", "stop", "reboot", "status", "terminate"].forEach((action) => {
      $("btn-" + action).addEventListener("click", () => bulk(action));
    });
    $("create-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = Object.assign({ image_id: $("create-image").value, size: $("create-size").value.trim() || "small",
        count: parseInt($("create-count").value, 10) || 1 }, location_());
      if ($("create-hostname").value.trim()) body.hostname = $("create-hostname").value.trim();
      await call("Create", "POST", "/lxc/instances", body);
      await refreshQuietly();
    });
    $("scale-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = Object.assign({ instance_ids: selected() }, location_());
      if ($("scale-memory").value) body.memory = parseInt($("scale-memory").value, 10);
      if ($("scale-cores").value) body.cpucores = parseInt($("scale-cores").value, 10);
      if ($("scale-disk").value.trim()) body.storage_size = $("scale-disk").value.trim();
      await call("Scale", "POST", "/lxc/instances/scale", body);
      await refreshQuietly();
    });
    $("snapshot-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const name = $("snapshot-name").value.trim();
      const results = [];
      for (const id of selected()) {
        const res = await call("Snapshot " + id, "POST", "/lxc/instances/" + encodeURIComponent(id) + "/snapshots",
          Object.assign({ snapshot_name: name }, location_()));
        results.push({ instance_id: id, status: res.status, result: res.data });
      }
      if (results.length > 1) show("Snapshots", Math.max.apply(null, results.map((r) => r.status)), results);
    });
    $("btn-backup").addEventListener("click", async () => {
      const results = [];
      for (const id of selected()) {
        const res = await call("Backup " + id, "POST", "/lxc/instances/" + encodeURIComponent(id) + "/backup",
          location_());
        results.push({ instance_id: id, status: res.status, result: res.data });
      }
      if (results.length > 1) show("Backups", Math.max.apply(null, results.map((r) => r.status)), results);
    });
    $("btn-backup-job").addEventListener("click", async () => {
      const results = [];
      for (const id of selected()) {
        const response = await fetch(api + "/lxc/instances/" + encodeURIComponent(id) + "/backup", {
          method: "POST",
          headers: { "X-API-Key": key(), "Content-Type": "application/json", "Prefer": "respond-async" },
          body: JSON.stringify(location_()),
        });
        let data = null;
        try { data = await response.json(); } catch (e) { data = null; }
        results.push({ instance_id: id, status: response.status, result: data });
      }
      show("Backup jobs", results.length ? Math.max.apply(null, results.map((r) => r.status)) : 400,
        results.length ? results : { error: "select at least one container" });
      await refreshJobs();
    });
    $("btn-jobs").addEventListener("click", refreshJobs);
    $("exec-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const id = $("exec-vmid").value.trim();
      call("Exec in " + id, "POST", "/lxc/instances/" + encodeURIComponent(id) + "/exec",
        Object.assign({ command: $("exec-command").value }, location_()));
    });
    if (key()) loadTemplates().then(refreshQuietly).then(refreshJobs);
  }

  document.addEventListener("DOMContentLoaded", wire);
})();
