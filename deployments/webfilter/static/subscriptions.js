// List subscriptions of a blacklist: subscribe to a list URL, see each one's entry count and
// refresh state, refresh now, unsubscribe. The proxy actor refreshes them in the background.

import { api, get, post } from "./api.js";
import { attempt, card, form, h, notify, number, table, when } from "./dom.js";

const HOUR = 3600;

function state(row) {
  if (row.last_error) return `failed: ${row.last_error}`;
  return row.last_status === 304 ? "not modified" : row.last_status ? `HTTP ${row.last_status}` : "pending";
}

export function subscriptionsCard(type) {
  const url = h("input", { id: "subscription-url", type: "url", placeholder: "https://example.org/hosts.txt", size: 40, required: true });
  const hours = h("input", { id: "subscription-hours", type: "number", min: 1, max: 720, value: 24, size: 4 });
  const description = h("input", { id: "subscription-description", placeholder: "description" });
  const listing = h("div", { id: "subscriptions" });

  async function reload() {
    const rows = (await get("/api/blacklists/subscriptions")).data
      .filter((row) => row.type === type)
      .map((row) => {
        const refresh = h("button", { type: "button", class: "small" }, "Refresh");
        refresh.addEventListener("click", () => attempt(async () => {
          const done = (await post(`/api/blacklists/subscriptions/${row.id}/refresh`, {})).data;
          await reload();
          notify(`${done.url}: ${state(done)}, ${number(done.entries)} entries`, done.last_error ? "error" : "ok");
        }));
        const remove = h("button", { type: "button", class: "danger small" }, "Unsubscribe");
        remove.addEventListener("click", () => attempt(async () => {
          await api("DELETE", `/api/blacklists/subscriptions/${row.id}`);
          await reload();
          notify(`unsubscribed ${row.url}`);
        }));
        return [
          h("span", { class: "entry" }, row.url),
          row.description,
          number(row.entries),
          state(row),
          when(row.last_success),
          when(row.next_refresh),
          h("span", { class: "row" }, refresh, remove),
        ];
      });
    const columns = ["list URL", "description", "entries", "last refresh", "last success (UTC)", "next (UTC)", ""];
    listing.replaceChildren(table(columns, rows, "no subscriptions"));
  }

  const subscribe = form("subscription-form", "row", [["URL", url], ["every (hours)", hours], ["", description]], "Subscribe", () =>
    attempt(async () => {
      const body = { url: url.value.trim(), type, interval_seconds: Number(hours.value) * HOUR, description: description.value };
      const done = (await post("/api/blacklists/subscriptions", body)).data;
      notify(`subscribed: ${number(done.entries)} entries`, done.last_error ? "error" : "ok");
      url.value = "";
      description.value = "";
      await reload();
    }));
  const section = card("Subscriptions", subscribe, listing);
  attempt(reload);
  return section;
}
