// WAF: the categories (Squid url_regex ACLs) with their blocks since the last counter reset, a
// toggle each, and the rule tester (a regex over the newest logged URLs, RE2 on the server).

import { get, post } from "./api.js";
import { attempt, card, form, h, notify, number } from "./dom.js";

function toggle(category, reload) {
  const box = h("input", { type: "checkbox", checked: category.enabled, id: "waf-" + category.name, title: "enabled" });
  box.addEventListener("change", () => attempt(async () => {
    try {
      await post("/api/waf/categories/toggle", { category: category.name, enabled: box.checked });
    } catch (err) {
      box.checked = !box.checked;
      throw err;
    }
    await reload();
    notify(`${category.name} ${box.checked ? "enabled" : "disabled"}`);
  }));
  return box;
}

async function categories(box, reload) {
  const [list, stats] = await Promise.all([get("/api/waf/categories"), get("/api/waf/stats")]);
  const blocked = Object.fromEntries(stats.data.categories.map((c) => [c.name, c.blocked]));
  const since = stats.data.since ? new Date(stats.data.since * 1000).toISOString() : "the start";
  const rows = list.data.map((c) => h(
    "tr",
    { dataset: { category: c.name } },
    h("td", null, toggle(c, reload)),
    h("td", null, h("code", null, c.name)),
    h("td", null, c.description),
    h("td", null, number(c.rules)),
    h("td", null, number(blocked[c.name] ?? 0)),
  ));
  box.replaceChildren(
    h("p", { id: "waf-state" }, stats.data.enabled
      ? `WAF on (${stats.data.engine}); ${number(stats.data.total_blocked)} blocked since ${since}`
      : "WAF off: turn on enable_waf in Settings"),
    h(
      "table",
      { id: "waf-categories" },
      h("thead", null, h("tr", null, ["on", "category", "what it catches", "rules", "blocked"].map((t) => h("th", null, t)))),
      h("tbody", null, rows),
    ),
  );
}

function tester() {
  const regex = h("input", { id: "rule-regex", placeholder: "regex, e.g. union\\s+select", size: 40, required: true });
  const hours = h("input", { id: "rule-hours", type: "number", min: 1, max: 168, value: "24" });
  const result = h("div", { id: "rule-result" });
  const test = () => attempt(async () => {
    const r = (await post("/api/waf/test-rule", { regex: regex.value, hours: Number(hours.value) })).data;
    result.replaceChildren(
      h("p", { id: "rule-summary" },
        `${number(r.matched)} of ${number(r.scanned)} URLs match (${r.engine}): `,
        h("strong", null, r.would_block ? "would block" : "would block nothing")),
      h("ul", { id: "rule-examples" }, r.examples.map((url) => h("li", { class: "url" }, url))),
    );
  });
  return [form("rule-form", "row", [["Regex", regex], ["Hours", hours]], "Test", test), result];
}

export async function render(root) {
  const box = h("div", { id: "waf" });
  const reload = () => categories(box, reload);
  const reset = h("button", { type: "button", id: "reset-counters" }, "Reset counters");
  reset.addEventListener("click", () => attempt(async () => {
    await post("/api/counters/reset");
    await reload();
    notify("WAF counters reset");
  }));
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "WAF"), reset),
    card("Categories", box),
    card("Rule tester (over the newest 10 000 logged URLs)", ...tester()),
  );
  await reload();
}
