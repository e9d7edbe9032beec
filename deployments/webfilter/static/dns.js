// The DNS query log: what our resolver answered, to whom, and the rule that blocked a name.

import { get } from "./api.js";
import { card, h, number, table, when } from "./dom.js";

export async function render(root) {
  const [stats, rows] = await Promise.all([get("/api/dns/stats?hours=24"), get("/api/dns/logs?limit=100")]);
  const s = stats.data;
  const figures = h(
    "div",
    { class: "figures" },
    [["queries (24 h)", s.total_count], ["blocked (24 h)", s.blocked_count], ["forwarded", s.by_outcome.forwarded || 0], ["sinkholed", s.by_outcome.sinkholed || 0]].map(
      ([label, value]) => h("div", { class: "figure" }, h("span", { class: "value" }, number(value)), h("span", null, label)),
    ),
  );
  const rules = table(
    ["rule", "source", "blocked queries"],
    s.top_rules.map((r) => [h("span", { class: "entry" }, r.rule), r.source || "", number(r.count)]),
    "nothing blocked",
  );
  const log = table(
    ["time (UTC)", "client", "name", "type", "outcome", "answer", "rule", "source"],
    rows.data.map((r) => [when(r.timestamp), r.client_ip, h("span", { class: "entry" }, r.name), r.qtype, r.outcome, r.answer || "", r.rule || "", r.source || ""]),
    "no queries yet",
  );
  log.id = "dns-log";
  for (const [i, row] of rows.data.entries()) if (row.blocked) log.tBodies[0].rows[i].classList.add("blocked");
  root.append(h("h1", null, "DNS queries"), figures, card("Rules that blocked most (24 h)", rules), card("Newest queries", log));
}
