// Lists: the blacklists, whitelists and the egress allowlist: search, add, delete (one, selected,
// all) and, for the blacklists, import from a URL or pasted content and subscriptions; for the domain
// blacklist, the requests each entry refused; for the IP blacklist, the prefixes of countries.

import { api, get, post } from "./api.js";
import { attempt, card, form, h, notify, number, table, when } from "./dom.js";
import { subscriptionsCard } from "./subscriptions.js";

const LISTS = {
  "domain-blacklist": { title: "Domain blacklist", field: "domain", bulk: true, import: true, subscribe: "domain", hits: true },
  "ip-blacklist": { title: "IP blacklist", field: "ip", bulk: true, import: true, subscribe: "ip", geo: true },
  "domain-whitelist": { title: "Domain whitelist", field: "domain", bulk: false, import: false },
  "ip-whitelist": { title: "IP whitelist", field: "ip", bulk: false, import: false },
  "egress-allowlist": { title: "Egress allowlist", field: "entry", bulk: true, import: false },
};
const PAGE = 100;

function tabs(current) {
  return h(
    "nav",
    { class: "tabs" },
    Object.entries(LISTS).map(([name, list]) =>
      h("a", { href: "#/lists/" + name, class: name === current ? "active" : "" }, list.title)),
  );
}

function importForm(name, reload) {
  const url = h("input", { id: "import-url", type: "url", placeholder: "https://example.org/list.txt", size: 40 });
  const content = h("textarea", { id: "import-content", rows: 5, cols: 50, placeholder: "one entry a line: plain, hosts file, ||adblock^ or CIDR" });
  const description = h("input", { id: "import-description", placeholder: "description" });
  const result = h("p", { id: "import-result" });
  const fields = [["From a URL", url], ["or pasted", content], ["Description", description]];
  return card("Import", form("import-form", "stack", fields, "Import", () => {
    const body = { description: description.value };
    if (url.value.trim()) body.url = url.value.trim();
    if (content.value.trim()) body.content = content.value;
    attempt(async () => {
      const done = (await post(`/api/${name}/import`, body)).data;
      result.textContent = `added ${number(done.added)}, already listed ${number(done.skipped)}, ` +
        `invalid ${number(done.invalid)}, bogons dropped ${number(done.bogon_skipped)}`;
      notify("import done");
      url.value = "";
      content.value = "";
      await reload();
    });
  }, result));
}

// every prefix of the given countries, from the ASN API (POST /api/blacklists/import-geo)
function geoCard(reload) {
  const countries = h("input", { id: "geo-countries", placeholder: "US, FR", size: 20, required: true });
  const result = h("p", { id: "geo-result" });
  const run = () => attempt(async () => {
    const done = (await post("/api/blacklists/import-geo", { countries: countries.value.split(/[\s,]+/).filter(Boolean) })).data;
    const per = Object.entries(done.countries).map(([cc, n]) => `${cc} ${number(n)}`).join(", ");
    result.textContent = `added ${number(done.added)} (${per}), bogons dropped ${number(done.bogon_skipped)}`;
    await reload();
  });
  return card("Import by country", form("geo-form", "row", [["Countries (ISO codes)", countries]], "Import prefixes", run),
    h("p", { class: "hint" }, "Each country's prefixes come from the ASN API; entries are described GeoIP: <code>."), result);
}

// requests the domain blacklist refused in 7 days, per entry (the rules in force now credit each host)
function hitsCard() {
  const box = h("div", { id: "hits" });
  async function reload() {
    const r = (await get("/api/domain-blacklist/hits?hours=168&limit=100")).data;
    box.replaceChildren(
      h("p", { id: "hits-summary" }, `${number(r.blocked_requests)} requests refused in ${r.hours} h, ` +
        `${number(r.unattributed_requests)} by a rule since removed`),
      table(["entry", "source", "requests", "hosts", "last (UTC)"],
        r.rules.map((e) => [h("span", { class: "entry" }, e.rule), e.source, number(e.hits), number(e.hosts), when(e.last_hit)]),
        "nothing refused"),
    );
  }
  const refresh = h("button", { type: "button", id: "hits-refresh" }, "Refresh");
  refresh.addEventListener("click", () => attempt(reload));
  attempt(reload);
  return card("Requests refused per entry (7 days)", box, refresh);
}

// the card of one list: add (the API's 400/409 text shown), search, pages of `PAGE`, delete one, the
// selected ones or all; `reload` reads the current page again
export function entriesCard(name, list) {
  let offset = 0;
  let search = "";
  const value = h("input", { id: "entry-value", placeholder: list.placeholder || list.field, required: true, size: 30 });
  const description = h("input", { id: "entry-description", placeholder: "description", size: 30 });
  const addForm = h(
    "form",
    { id: "add-form", class: "row" },
    value,
    description,
    h("button", { type: "submit" }, "Add"),
  );
  const searchBox = h("input", { id: "entry-search", type: "search", placeholder: "search" });
  const entries = h("div", { id: "entries" });
  const pager = h("span", { id: "pager" });

  async function reload() {
    const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
    if (search) query.set("search", search);
    const page = await get(`/api/${name}?${query}`);
    const rows = page.data.map((row) => {
      const box = h("input", { type: "checkbox", value: String(row.id), title: "select" });
      const remove = h("button", { type: "button", class: "danger small" }, "Delete");
      remove.addEventListener("click", () => attempt(async () => {
        await api("DELETE", `/api/${name}/${row.id}`);
        await reload();
        notify(`deleted ${row[list.field]}`);
      }));
      const cells = [box, h("span", { class: "entry" }, row[list.field]), row.description, when(row.added_date)];
      if (name === "egress-allowlist") cells.splice(2, 0, row.type);
      return [...cells, remove];
    });
    const columns = ["", list.field, "description", "added (UTC)", ""];
    if (name === "egress-allowlist") columns.splice(2, 0, "type");
    entries.replaceChildren(table(columns, rows, "no entries"));
    const total = page.meta.total;
    pager.textContent = total ? `${offset + 1}-${offset + page.data.length} of ${number(total)}` : "0 entries";
  }

  function selected() {
    return Array.from(entries.querySelectorAll("input[type=checkbox]:checked")).map((box) => Number(box.value));
  }

  addForm.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const added = (await post(`/api/${name}`, { [list.field]: value.value.trim(), description: description.value })).data;
      notify(`added ${added[list.field]}`);
      value.value = "";
      description.value = "";
      await reload();
    });
  });
  const searchForm = h("form", { class: "row" }, searchBox, h("button", { type: "submit" }, "Search"));
  searchForm.addEventListener("submit", (event) => {
    event.preventDefault();
    search = searchBox.value.trim();
    offset = 0;
    attempt(reload);
  });
  const previous = h("button", { type: "button" }, "Previous");
  const next = h("button", { type: "button" }, "Next");
  previous.addEventListener("click", () => { offset = Math.max(0, offset - PAGE); attempt(reload); });
  next.addEventListener("click", () => { offset += PAGE; attempt(reload); });

  const actions = h("div", { class: "row" }, previous, next, pager);
  if (list.bulk) {
    const removeSelected = h("button", { type: "button", id: "delete-selected", class: "danger" }, "Delete selected");
    removeSelected.addEventListener("click", () => attempt(async () => {
      const ids = selected();
      if (!ids.length) return notify("select entries first", "error");
      const done = (await post(`/api/${name}/bulk-delete`, { ids })).data;
      await reload();
      notify(`deleted ${done.deleted}`);
    }));
    const clear = h("button", { type: "button", id: "clear-all", class: "danger" }, "Clear all");
    clear.addEventListener("click", () => attempt(async () => {
      if (!window.confirm(`Delete every entry of the ${list.title.toLowerCase()}?`)) return;
      const done = (await api("DELETE", `/api/${name}/clear-all`)).data;
      notify(`deleted ${done.deleted}`);
      offset = 0;
      await reload();
    }));
    actions.append(removeSelected, clear);
  }
  return { element: card(list.title, ...(list.intro || []), addForm, searchForm, entries, actions), reload };
}

export async function render(root, args) {
  const name = args[0] in LISTS ? args[0] : "domain-blacklist";
  const list = LISTS[name];
  const entries = entriesCard(name, list);
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "Lists")),
    tabs(name),
    entries.element,
  );
  if (list.import) root.append(importForm(name, entries.reload));
  if (list.subscribe) root.append(subscriptionsCard(list.subscribe));
  if (list.hits) root.append(hitsCard());
  if (list.geo) root.append(geoCard(entries.reload));
  await entries.reload();
}
