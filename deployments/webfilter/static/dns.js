// The DNS query log: what our resolver answered, to whom, and the rule that blocked a name; and the
// detection of DNS servers (another filter on the network: Pi-hole, AdGuard) by their version.bind answer.

import { get, post } from "./api.js";
import { attempt, card, form, h, number, table, when } from "./dom.js";

// POST /api/dns/detect: loopback addresses or the configured subnet only (the API refuses others with 400)
function detection() {
  const addresses = h("input", { id: "detect-addresses", placeholder: "192.168.1.2 192.168.1.3", size: 36, required: true });
  const port = h("input", { id: "detect-port", type: "number", min: 1, max: 65535, value: 53, size: 5 });
  const found = h("div", { id: "detect-result" });
  const detect = () => attempt(async () => {
    const body = { addresses: addresses.value.split(/[\s,]+/).filter(Boolean), port: Number(port.value) };
    found.replaceChildren(h("p", { class: "hint" }, "asking each address..."));
    try {
      const rows = (await post("/api/dns/detect", body)).data;
      found.replaceChildren(table(
        ["address", "answers DNS", "product", "version", "filtering"],
        rows.map((r) => [`${r.address}:${r.port}`, r.dns ? "yes" : "no", r.product ?? "", r.version ?? "", r.filtering ? "yes" : ""]),
      ));
    } catch (err) {
      found.replaceChildren();
      throw err;
    }
  });
  return card("Detect DNS servers", form("detect-form", "row", [["Addresses", addresses], ["port", port]], "Detect", detect),
    h("p", { class: "hint" }, "Asks each address for version.bind (CHAOS TXT): finds dnsmasq, Pi-hole, AdGuard."), found);
}

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
    ["time (UTC)", "client", "name", "type", "outcome", "answer", "rule", "source", "group"],
    rows.data.map((r) => [when(r.timestamp), r.client_ip, h("span", { class: "entry" }, r.name), r.qtype, r.outcome, r.answer || "", r.rule || "", r.source || "", r.group || ""]),
    "no queries yet",
  );
  log.id = "dns-log";
  for (const [i, row] of rows.data.entries()) if (row.blocked) log.tBodies[0].rows[i].classList.add("blocked");
  root.append(
    h("h1", null, "DNS queries"),
    figures,
    h("div", { class: "grid" }, card("Rules that blocked most (24 h)", rules), detection()),
    card("Newest queries", log),
  );
}
