// Client groups: source networks with their own domain lists and time windows. The table shows each
// group as the proxy applies it (in this order, before the global lists); the form creates one.

import { api, get, post } from "./api.js";
import { attempt, card, form, h, notify, table } from "./dom.js";

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

function lines(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean);
}

function windows(group) {
  if (!group.windows.length) return "always";
  return group.windows.map((w) => `${w.days.join(",")} ${w.start}-${w.end}`).join("; ");
}

export async function render(root) {
  const name = h("input", { id: "group-name", placeholder: "kids", required: true, size: 12 });
  const networks = h("textarea", { id: "group-networks", rows: 2, cols: 24, placeholder: "198.18.5.0/24" });
  const blacklist = h("textarea", { id: "group-blacklist", rows: 3, cols: 28, placeholder: "games.example" });
  const whitelist = h("textarea", { id: "group-whitelist", rows: 3, cols: 28, placeholder: "school.example" });
  const days = DAYS.map((day) => h("label", { class: "day" }, h("input", { type: "checkbox", value: day, dataset: { day } }), " " + day));
  const start = h("input", { id: "group-start", type: "time", value: "" });
  const end = h("input", { id: "group-end", type: "time", value: "" });
  const listing = h("div", { id: "groups" });

  async function reload() {
    const rows = (await get("/api/groups")).data.map((group) => {
      const remove = h("button", { type: "button", class: "danger small" }, "Delete");
      remove.addEventListener("click", () => attempt(async () => {
        await api("DELETE", `/api/groups/${group.id}`);
        notify(`deleted the group ${group.name}`);
        await reload();
      }));
      return [
        h("strong", null, group.name),
        h("span", { class: "entry" }, group.networks.join(" ")),
        h("span", { class: "entry" }, group.blacklist.join(" ")),
        h("span", { class: "entry" }, group.whitelist.join(" ")),
        windows(group),
        `group:${group.name}`,
        remove,
      ];
    });
    const columns = ["group", "networks", "blocked for the group", "allowed for the group", "block applies", "rule in logs", ""];
    listing.replaceChildren(table(columns, rows, "no client groups"));
  }

  const create = form(
    "group-form",
    "stack",
    [["Name", name], ["Networks (CIDR, one a line)", networks], ["Blacklist (one a line)", blacklist], ["Whitelist (one a line)", whitelist]],
    "Create group",
    () => attempt(async () => {
      const chosen = days.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
      const body = {
        name: name.value.trim(),
        networks: lines(networks.value),
        blacklist: lines(blacklist.value),
        whitelist: lines(whitelist.value),
        windows: chosen.length || start.value || end.value ? [{ days: chosen, start: start.value, end: end.value }] : [],
      };
      const done = (await post("/api/groups", body)).data;
      notify(`created the group ${done.name}`);
      for (const input of [name, networks, blacklist, whitelist]) input.value = "";
      await reload();
    }),
    h("fieldset", null, h("legend", null, "Block only during (empty: always)"), h("div", { class: "row" }, days), h("div", { class: "row" }, "from ", start, " to ", end)),
  );
  root.append(
    h("h1", null, "Client groups"),
    h("p", { class: "hint" }, "A group's rules apply before the global lists; its whitelist wins over its blacklist. Refusals name the group."),
    card("Groups", listing),
    card("New group", create),
  );
  await reload();
}
