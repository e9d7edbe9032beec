// Maintenance: database figures, log retention and cleanup, masking stored client addresses, optimisation, configuration backup
// (download) and restore (upload), the configuration export, the proxy's reloads, its children and cache
// figures, the interception CA and the audit log (pages of 15).

import { api, get, post, text } from "./api.js";
import { attempt, bytes, card, download, h, notify, number, table, when } from "./dom.js";

function button(label, id, action, danger = false) {
  const b = h("button", { type: "button", id, class: danger ? "danger" : "" }, label);
  b.addEventListener("click", () => attempt(action));
  return b;
}

// `data` saved as <name>-<UTC time>.json
function saveJson(name, data) {
  const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, "");
  download(`${name}-${stamp}.json`, JSON.stringify(data, null, 2), "application/json");
}

async function database(box) {
  const [stats, size, logs] = await Promise.all([get("/api/database/stats"), get("/api/database/size"), get("/api/logs/stats")]);
  const l = logs.data.by_source;
  const rows = Object.entries(stats.data.tables).map(([name, count]) => [name, number(count)]);
  rows.push(["log rows (DuckDB)", number(stats.data.log_rows)]);
  box.replaceChildren(
    h("p", { id: "db-size" }, `configuration ${bytes(size.data.config_db_bytes)}, logs ${bytes(size.data.log_db_bytes)}, ` +
      `total ${bytes(size.data.total_bytes)}`),
    h("p", { id: "log-stats" }, `log rows: HTTP ${number(l.http.total_count)} (${number(l.http.blocked_count)} blocked), ` +
      `DNS ${number(l.dns.total_count)} (${number(l.dns.blocked_count)} blocked)`),
    h("div", { id: "db-tables" }, table(["table", "rows"], rows)),
  );
}

// every configuration table as JSON (password hashes, the JWT secret and secret settings redacted)
function exportButton() {
  return button("Download export", "export", async () => {
    saveJson("webfilter-export", (await get("/api/database/export")).data);
  });
}

function retention(settings, reload) {
  const days = settings.log_retention_days;
  const input = h("input", { id: "retention-days", type: "number", min: 1, max: 3650, value: String(days) });
  const result = h("p", { id: "cleanup-result" });
  const masked = h("p", { id: "mask-result" });
  const gdpr = settings.gdpr_mode ? "on: rows are masked as they are written" : "off";
  return [
    h("p", null, `Setting log_retention_days: ${days} days.`),
    h("div", { class: "row" },
      h("label", null, "Delete log rows older than ", input, " days "),
      button("Delete old rows", "clear-old", async () => {
        const done = (await post(`/api/logs/clear-old?days=${encodeURIComponent(input.value)}`)).data;
        result.textContent = `deleted ${number(done.deleted)} rows older than ${done.retention_days} days`;
        await reload();
      }),
      button("Delete every row", "clear-logs", async () => {
        if (!window.confirm("Delete every log row?")) return;
        const done = (await post("/api/logs/clear")).data;
        result.textContent = `deleted ${number(done.deleted)} rows`;
        await reload();
      }, true)),
    result,
    h("p", null, `Setting gdpr_mode: ${gdpr}. Rows stored before keep the full client address until masked.`),
    h("div", { class: "row" },
      button("Mask client addresses", "mask-clients", async () => {
        if (!window.confirm("Mask the client address (last IPv4 octet, last IPv6 group) of every stored log row? " +
          "This cannot be undone.")) return;
        const done = (await post("/api/logs/mask-clients")).data;
        masked.textContent = `masked ${number(done.masked)} HTTP rows and ${number(done.dns_masked)} DNS rows`;
        await reload();
      }, true)),
    masked,
  ];
}

function backup(reload) {
  const file = h("input", { type: "file", id: "restore-file", accept: "application/json,.json" });
  const result = h("p", { id: "restore-result" });
  const restore = button("Restore", "restore", async () => {
    result.textContent = "";
    if (!file.files.length) return notify("choose a backup file first", "error");
    let config;
    try {
      config = JSON.parse(await file.files[0].text());
    } catch {
      return notify("the file is not JSON", "error");
    }
    const done = (await post("/api/maintenance/restore-config", { config })).data;
    const counts = Object.entries(done).filter(([, v]) => typeof v === "number").map(([k, v]) => `${k} ${v}`);
    result.textContent = "restored" + (counts.length ? ": " + counts.join(", ") : "");
    await reload();
    notify("configuration restored");
  });
  return [
    h("div", { class: "row" },
      button("Download backup", "backup", async () => {
        saveJson("webfilter-backup", (await get("/api/maintenance/backup-config")).data);
      }),
      h("label", null, "Restore from ", file), restore),
    h("p", { class: "hint" }, "Secrets stay masked in a backup; restoring keeps their stored values."),
    result,
  ];
}

function proxy(box) {
  const out = h("p", { id: "proxy-result" });
  return [
    box,
    h("div", { class: "row" },
      button("Reload configuration", "reload-config", async () => {
        const done = (await post("/api/maintenance/reload-config")).data;
        const ms = (done.last_apply || {}).total_ms;
        out.textContent = "Squid reconfigured" + (typeof ms === "number" ? ` (last apply ${ms} ms)` : "");
      }),
      button("Reload DNS", "reload-dns", async () => {
        await post("/api/maintenance/reload-dns");
        out.textContent = "dnsmasq re-read its hosts";
      }),
      button("Clear cache", "clear-cache", async () => {
        const done = (await post("/api/maintenance/clear-cache")).data;
        out.textContent = `cache cleared (${done.method}): ${done.entries_before} entries before, ${done.entries_after} after`;
      })),
    out,
  ];
}

const percent = (value) => (typeof value === "number" ? `${value} %` : "not reported");

// Squid's cache manager figures; a Squid that does not answer is said so (the API answers 503, never zeros)
async function cacheFigures() {
  try {
    const c = (await get("/api/cache/statistics")).data;
    return [
      ["cache clients / requests", `${number(c.clients)} / ${number(c.http_requests)}`],
      ["hit ratio (5 min)", `${percent(c.hit_ratio_5min_percent)} of requests, ${percent(c.byte_hit_ratio_5min_percent)} of bytes`],
      ["memory cache", `${number(c.memory_cache_kb)} KB, ${number(c.store_entries)} entries`],
      ["Squid up for", `${number(Math.round(c.uptime_seconds ?? 0))} s`],
    ];
  } catch (err) {
    return [["cache manager", err.message]];
  }
}

async function proxyStatus(box) {
  const [answer, health, cache] = await Promise.all([get("/api/status"), get("/health"), cacheFigures()]);
  const status = answer.data;
  const children = health.children.map((c) => [
    `child ${c.name}`,
    `${c.state}, pid ${c.pid ?? "-"}, ${c.restarts} restarts` + (c.last_exit_reason ? `, last exit: ${c.last_exit_reason}` : ""),
  ]);
  box.replaceChildren(table(["", ""], [
    ["proxy", `${status.proxy.proxy} (${status.proxy.running ? "running" : "down"})`],
    ["DNS", String(status.proxy.dns ?? "")],
    ["TLS interception", status.proxy.ssl_bump ? "on" : "off"],
    ["Squid pid", String(status.proxy.squid_pid ?? "")],
    ["log rows ingested", number(status.logs.ingested)],
    ["version", status.version],
    ...children,
    ...cache,
  ]));
}

function certificate() {
  const findings = h("div", { id: "cert-findings" });
  return [
    h("div", { class: "row" },
      button("Download CA certificate", "download-ca", async () => {
        download("rayfleet-webfilter-ca.pem", await text("/api/security/download-ca"), "application/x-pem-file");
      }),
      button("Check the CA", "check-cert", async () => {
        const r = (await get("/api/maintenance/check-cert-security")).data;
        findings.replaceChildren(
          h("p", null, `${r.subject}: ${r.key_size}-bit key, ${r.signature_hash}, valid until ${when(r.not_after)} ` +
            `(${r.days_left} days). ${r.ok ? "No serious finding." : "Serious findings below."}`),
          h("p", null, r.interception_note),
          table(["severity", "check", "finding"], r.findings.map((f) => [f.severity, f.check, f.message]), "no findings"),
        );
      })),
    findings,
  ];
}

async function lockouts(box) {
  const page = await get("/api/security/rate-limits");
  const rows = page.data.map((r) => {
    const clear = button("Clear", "", async () => {
      await api("DELETE", `/api/security/rate-limits/${encodeURIComponent(r.ip)}`);
      await lockouts(box);
      notify(`cleared ${r.ip}`);
    });
    clear.classList.add("small");
    const last = when(new Date(r.last_failure * 1000).toISOString());
    return [r.ip, number(r.failures), r.retry_after ? `${r.retry_after} s` : "not locked", last, clear];
  });
  box.replaceChildren(
    h("p", { class: "hint" }, `${page.meta.max_attempts} failed sign-ins in ${page.meta.window_seconds} s lock an address out.`),
    table(["address", "failures", "locked for", "last failure (UTC)", ""], rows, "no failed sign-in"),
  );
}

async function cves(box) {
  const r = (await get("/api/security/cve")).data;
  box.replaceChildren(
    h("p", { id: "squid-version" }, `${r.version}; package ${r.package_version}: ` +
      `its changelog records ${r.cves.length} CVE fixes`),
    h("details", null, h("summary", null, "the CVEs"), table(["CVE", "fixed in"], r.cves.map((c) => [c.id, c.fixed_in]))),
  );
}

const AUDIT_PAGE = 15;

// the audit log a page of 15 at a time, newest first; `box.offset` is the page shown
async function audit(box) {
  const offset = box.offset || 0;
  const page = await get(`/api/audit-log?limit=${AUDIT_PAGE}&offset=${offset}`);
  const go = (to) => { box.offset = Math.max(0, to); return audit(box); };
  const previous = button("Newer", "audit-newer", () => go(offset - AUDIT_PAGE));
  const next = button("Older", "audit-older", () => go(offset + AUDIT_PAGE));
  previous.disabled = offset === 0;
  next.disabled = offset + page.data.length >= page.meta.total;
  const shown = page.data.length ? `${offset + 1}-${offset + page.data.length} of ${number(page.meta.total)}` : "none";
  box.replaceChildren(
    table(
      ["time (UTC)", "user", "client", "action", "detail"],
      page.data.map((a) => [when(a.timestamp), a.username ?? "", a.client_ip ?? "", a.action, a.detail]),
    ),
    h("div", { class: "row" }, previous, next, h("span", { id: "audit-pager" }, shown)),
  );
}

export async function render(root) {
  const settings = (await get("/api/settings")).data;
  const dbBox = h("div", { id: "database" });
  const statusBox = h("div", { id: "proxy-status" });
  const auditBox = h("div", { id: "audit" });
  const lockoutBox = h("div", { id: "lockouts" });
  const cveBox = h("div", { id: "cves" });
  const reload = () => Promise.all([database(dbBox), audit(auditBox)]);
  const optimize = button("Optimise database", "optimize", async () => {
    const done = (await post("/api/database/optimize")).data;
    await reload();
    notify(`optimised: ${bytes(done.bytes_before)} before, ${bytes(done.bytes_after)} after`);
  });
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "Maintenance")),
    h("div", { class: "grid" },
      card("Database", dbBox, h("div", { class: "row" }, optimize, exportButton())),
      card("Log retention and privacy", ...retention(settings, reload)),
      card("Configuration backup", ...backup(reload)),
      card("Proxy", ...proxy(statusBox)),
      card("Interception CA", ...certificate()),
      card("Sign-in lockouts", lockoutBox),
      card("Squid and its CVE fixes", cveBox)),
    card("Audit log", auditBox),
  );
  await Promise.all([reload(), proxyStatus(statusBox), lockouts(lockoutBox), cves(cveBox)]);
}

