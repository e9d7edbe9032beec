// The five views, each built from the orchestrator's JSON with every value set as text (dom.js).

import { addressPath, api, get } from "./api.js";
import { attempt, card, form, h, notify, number, table } from "./dom.js";

const secondsLeft = (expires) => Math.max(0, Math.round(expires - Date.now() / 1000));

function duration(seconds) {
  if (seconds >= 86400) return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${seconds} s`;
}

const badge = (text) => h("span", { class: "badge " + String(text) }, text);

export async function fleet(root) {
  const { nodes } = await get("/nodes");
  const healthy = nodes.filter((n) => n.status === "healthy").length;
  root.append(
    h("div", { class: "figures" },
      h("div", null, h("strong", null, number(nodes.length)), " nodes"),
      h("div", null, h("strong", null, number(healthy)), " healthy")),
    card("Nodes", table(
      ["Node", "Status", "Mode", "Data plane", "Load", "HAProxy", "Last heartbeat"],
      nodes.map((n) => [
        h("span", { class: "node-id" }, n.id),
        badge(n.status),
        n.mode,
        h("code", null, n.address),
        h("span", { class: "load" }, (100 * (n.load || 0)).toFixed(1) + " %"),
        (n.children || []).map((c) => `${c.state} (restarts ${c.restarts})`).join(", "),
        n.last_heartbeat ? new Date(n.last_heartbeat * 1000).toISOString().slice(11, 19) + " UTC" : "never",
      ]),
      "no node",
    )),
  );
}

export async function threats(root) {
  const t = await get("/threats");
  root.append(
    h("div", { class: "figures" },
      h("div", null, h("strong", null, number(t.active_threats)), " active threats"),
      h("div", null, h("strong", null, number(t.nodes)), " nodes reporting")),
    card("Attack types", table(["Type", "Attacks"], Object.entries(t.attack_types).map(([k, v]) => [k, number(v)]), "none")),
    card("Top attackers", table(["Source", "Attacks"], t.top_attackers.map((a) => [h("code", null, a.ip), number(a.attacks)]), "none")),
  );
}

export async function bans(root, redraw) {
  const { entries } = await get("/blacklist");
  const lift = (ip) => attempt(async () => {
    await api("DELETE", "/blacklist/" + addressPath(ip));
    await redraw();
    notify(`ban on ${ip} lifted`);
  });
  const ip = h("input", { id: "ban-ip", name: "ip", placeholder: "203.0.113.7 or 198.51.100.0/24", required: true });
  const reason = h("input", { id: "ban-reason", name: "reason", placeholder: "why" });
  const seconds = h("input", { id: "ban-seconds", name: "duration", type: "number", min: 1, value: 3600 });
  const ban = () => attempt(async () => {
    await api("POST", "/blacklist", { ip: ip.value.trim(), reason: reason.value, duration_seconds: Number(seconds.value) });
    await redraw();
    notify(`${ip.value.trim()} banned on every node`);
  });
  root.append(
    card("Ban a source", form("ban-form", "row", [["Address", ip], ["Reason", reason], ["Seconds", seconds]], "Ban", ban)),
    card("Fleet-wide bans", table(
      ["Source", "Reason", "Set by", "Expires in", ""],
      entries.map((e) => [
        h("code", null, e.ip),
        e.reason,
        e.source,
        duration(secondsLeft(e.expires)),
        h("button", { type: "button", class: "danger lift", dataset: { ip: e.ip }, on: { click: () => lift(e.ip) } }, "Lift"),
      ]),
      "no ban in force",
    )),
  );
}

export async function rules(root) {
  const { rules: list } = await get("/rules");
  root.append(card("Fleet-wide custom rules", table(
    ["Id", "Pattern", "Action", "Severity", "Created"],
    list.map((r) => [h("code", null, r.id), h("code", null, r.pattern), r.action, r.severity, r.created_at || ""]),
    "no custom rule (the built-in WAF rules always apply)",
  )));
}

export async function policy(root) {
  const p = await get("/policy");
  const rows = [
    // each kind in force with the policy it came from (a policy leaves the kinds it does not list)
    ["Policy", p.policy ? Object.entries(p.policy_by).map(([kind, name]) => `${kind}: ${name}`).join(", ")
      : "none deployed"],
    ["Rate limit", p.rate_limit_rps === null ? "off" : `${number(p.rate_limit_rps)} requests/s per source`],
    ["Blocked countries", p.blocked_countries.length ? p.blocked_countries.join(", ") : "none"],
    ["Geo prefixes", number(p.geo_prefixes)],
    ["PROXY protocol", p.accept_proxy ? "required" : "off"],
    ["Trusted proxies", p.trusted_proxies.length ? p.trusted_proxies.join(", ") : "none"],
    ["WAF", p.waf.engine === "crs"
      ? `CRS, paranoia ${number(p.waf.paranoia_level)}, threshold ${number(p.waf.anomaly_threshold)}`
      : "HAProxy rules"],
  ];
  root.append(card("Policy in force", table(["Setting", "Value"], rows)));
}
