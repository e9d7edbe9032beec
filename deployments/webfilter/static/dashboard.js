// Dashboard: totals and top lists from the analytics routes, refreshed every 10 s, and the live log
// from the WebSocket stream (/api/ws/logs, a fresh single-use token per connection).

import { get, streamUrl } from "./api.js";
import { card, h, number, table, when } from "./dom.js";

const REFRESH_MS = 10000;
const LIVE_ROWS = 200;

function figure(label, value, id) {
  return h("div", { class: "figure" }, h("span", { class: "value", id }, number(value)), h("span", null, label));
}

export function timeline(hours) {
  const top = Math.max(1, ...hours.map((b) => b.total));
  const bars = hours.map((b) => {
    const bar = h("div", { class: "bar", title: `${when(b.time)} UTC: ${b.total} requests, ${b.blocked} blocked` });
    const total = h("div", { class: "total" });
    const blocked = h("div", { class: "blocked" });
    total.style.height = (100 * b.total) / top + "%";
    blocked.style.height = (100 * b.blocked) / top + "%";
    bar.append(total, blocked);
    return bar;
  });
  return h("div", { class: "timeline" }, bars);
}

async function stats(box) {
  const [summary, domains, clients, hours] = await Promise.all([
    get("/api/dashboard/summary"),
    get("/api/domains/statistics?hours=24&limit=10"),
    get("/api/clients/statistics?hours=24&limit=10"),
    get("/api/logs/timeline?hours=24"),
  ]);
  const s = summary.data;
  box.replaceChildren(
    h(
      "div",
      { class: "figures" },
      figure("requests", s.totals.requests, "total-requests"),
      figure("blocked", s.totals.blocked, "total-blocked"),
      figure("requests today (UTC)", s.today.requests, "today-requests"),
      figure("blocked today (UTC)", s.today.blocked, "today-blocked"),
    ),
    card("Requests per hour, last 24 h (blocked in red)", timeline(hours.data)),
    h(
      "div",
      { class: "grid" },
      card(
        "Top domains (24 h)",
        h("div", { id: "top-domains" }, table(
          ["domain", "requests", "blocked"],
          domains.data.domains.map((d) => [d.domain, number(d.requests), number(d.blocked)]),
        )),
      ),
      card(
        "Top clients (24 h)",
        h("div", { id: "top-clients" }, table(
          ["client", "requests", "blocked", "last seen"],
          clients.data.clients.map((c) => [c.ip_address, number(c.requests), number(c.blocked), when(c.last_seen)]),
        )),
      ),
      card(
        "Most blocked domains (24 h)",
        h("div", { id: "top-blocked" }, table(
          ["domain", "blocked"],
          s.top_blocked_domains_24h.map((d) => [d.domain, number(d.blocked)]),
        )),
      ),
      card(
        "Requests by rule (24 h)",
        table(["rule", "category", "requests"], s.threat_categories_24h.map((t) => [t.rule ?? "(allowed)", t.category, number(t.count)])),
      ),
    ),
  );
}

// a stream row is an HTTP request (source "http") or a DNS query (source "dns": type, name and outcome)
function logRow(entry) {
  const dns = entry.source === "dns";
  const row = h(
    "tr",
    { class: [entry.blocked ? "blocked" : "", dns ? "dns" : ""].join(" ").trim() },
    h("td", null, when(entry.timestamp)),
    h("td", null, entry.client_ip),
    h("td", null, dns ? `DNS ${entry.qtype}` : entry.method),
    h("td", { class: "url" }, entry.destination),
    h("td", null, dns ? entry.outcome : String(entry.status)),
    h("td", null, entry.blocked ? "blocked" : "allowed"),
    h("td", null, entry.rule ?? ""),
  );
  return row;
}

// the live log: the newest rows first, then every row the stream sends; reconnects with a new token
function live(tbody, state) {
  let socket = null;
  let timer = null;
  let stopped = false;

  function add(entry) {
    tbody.prepend(logRow(entry));
    while (tbody.rows.length > LIVE_ROWS) tbody.deleteRow(-1);
  }

  async function connect() {
    state.textContent = "connecting";
    state.className = "state";
    try {
      socket = new WebSocket(await streamUrl());
    } catch (err) {
      state.textContent = "stream unavailable: " + err.message;
      if (!stopped) timer = setTimeout(connect, 3000);
      return;
    }
    if (stopped) {
      socket.close();
      return;
    }
    socket.addEventListener("open", () => {
      state.textContent = "live";
      state.className = "state live";
    });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "log") add(message.data);
      else if (message.type === "dropped") state.textContent = `live (${message.count} rows dropped: too slow)`;
    });
    socket.addEventListener("close", () => {
      if (stopped) return;
      state.textContent = "disconnected, reconnecting";
      state.className = "state";
      timer = setTimeout(connect, 2000);
    });
  }

  return {
    add,
    connect,
    stop() {
      stopped = true;
      clearTimeout(timer);
      if (socket) socket.close();
    },
  };
}

export async function render(root) {
  const box = h("div", { id: "stats" });
  const state = h("span", { id: "live-state", class: "state" }, "connecting");
  const tbody = h("tbody");
  const log = h(
    "table",
    { id: "live-log" },
    h("thead", null, h("tr", null, ["time (UTC)", "client", "method", "URL or name", "status", "outcome", "rule"].map((c) => h("th", null, c)))),
    tbody,
  );
  const refresh = h("button", { type: "button", id: "refresh-stats" }, "Refresh");
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "Dashboard"), refresh),
    box,
    card(h("span", null, "Live log ", state), log),
  );
  const stream = live(tbody, state);
  const recent = await get("/api/logs?limit=25");
  recent.data.slice().reverse().forEach(stream.add);
  stream.connect();
  const update = () => stats(box).catch((err) => box.replaceChildren(h("p", { class: "error" }, err.message)));
  refresh.addEventListener("click", update);
  await update();
  const ticker = setInterval(update, REFRESH_MS);
  return () => {
    clearInterval(ticker);
    stream.stop();
  };
}
