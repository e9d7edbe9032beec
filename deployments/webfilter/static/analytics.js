// Analytics: traffic per period (requests, blocks, bytes), the most requested registrable domains, the
// known SaaS services seen (shadow IT), user agents and methods, and the file extensions of the newest URLs.

import { get } from "./api.js";
import { attempt, bytes, card, h, number, table } from "./dom.js";
import { timeline } from "./dashboard.js";

const WINDOWS = [["24", "24 hours"], ["168", "7 days"], ["720", "30 days"]];
const PERIODS = [["hour", "last hour, per minute"], ["day", "last day, per hour"], ["week", "last week, per day"], ["month", "last month, per day"]];

function select(id, options, value) {
  return h("select", { id }, options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)));
}

const sum = (values) => values.reduce((a, b) => a + b, 0);

async function traffic(box, period) {
  const t = (await get(`/api/traffic/statistics?period=${period}`)).data;
  const buckets = t.labels.map((time, i) => ({ time, total: t.requests[i], blocked: t.blocked[i] }));
  box.replaceChildren(
    h("p", { id: "traffic-totals" }, `${number(sum(t.requests))} requests, ${number(sum(t.blocked))} blocked, ` +
      `${bytes(sum(t.inbound))} from clients, ${bytes(sum(t.outbound))} to clients`),
    timeline(buckets),
  );
}

async function tables(box, hours) {
  const q = `hours=${hours}`;
  const [domains, saas, agents, extensions] = await Promise.all([
    get(`/api/analytics/top-domains?${q}&limit=30`),
    get(`/api/analytics/shadow-it?${q}`),
    get(`/api/analytics/user-agents?${q}`),
    get(`/api/analytics/file-extensions?${q}`),
  ]);
  const boxed = (id, columns, rows, empty) => h("div", { id }, table(columns, rows, empty));
  box.replaceChildren(h(
    "div",
    { class: "grid" },
    card("Registrable domains", boxed("top-registrable", ["domain", "requests", "blocked", "hosts"],
      domains.data.map((d) => [h("span", { class: "entry" }, d.domain), number(d.requests), number(d.blocked), number(d.hosts)]))),
    card("SaaS services seen (shadow IT)", boxed("shadow-it", ["service", "category", "domain", "requests"],
      saas.data.map((s) => [s.name, s.category, s.domain, number(s.requests)]), "no known service seen")),
    card("User agents", boxed("user-agents", ["user agent", "requests"],
      agents.data.user_agents.map((a) => [h("span", { class: "entry" }, a.user_agent ?? ""), number(a.requests)])),
      boxed("methods", ["method", "requests"], agents.data.methods.map((m) => [m.method, number(m.requests)]))),
    card("File extensions (newest 10 000 URLs)", boxed("file-extensions", ["extension", "URLs"],
      extensions.data.map((e) => [e.extension, number(e.count)]))),
  ));
}

export async function render(root) {
  const period = select("traffic-period", PERIODS, "day");
  const hours = select("analytics-hours", WINDOWS, "168");
  const trafficBox = h("div", { id: "traffic" });
  const tablesBox = h("div", { id: "analytics-tables" });
  period.addEventListener("change", () => attempt(() => traffic(trafficBox, period.value)));
  hours.addEventListener("change", () => attempt(() => tables(tablesBox, hours.value)));
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "Analytics"), h("label", null, "Window ", hours)),
    card("Traffic", h("label", { class: "row" }, "Period ", period), trafficBox),
    tablesBox,
  );
  await Promise.all([traffic(trafficBox, period.value), tables(tablesBox, hours.value)]);
}
