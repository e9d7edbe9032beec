// Client groups: source networks with their own domain lists and time windows. The table shows each
// group as the proxy applies it (in this order, before the global lists); the form creates one, or
// replaces one chosen with Edit (PUT /api/groups/{id}: the same checks as a creation).

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
  const boxes = days.map((label) => label.querySelector("input"));
  const extra = h("p", { class: "hint", id: "group-extra-windows" });
  const cancel = h("button", { type: "button", id: "group-cancel", hidden: true }, "Cancel");
  let editing = null; // the group the form replaces; null: the form creates one

  // the form empty (creating) or holding `group` (editing); a group's windows after its first are kept
  function fill(group) {
    editing = group;
    const first = group ? group.windows[0] : null;
    name.value = group ? group.name : "";
    networks.value = group ? group.networks.join("\n") : "";
    blacklist.value = group ? group.blacklist.join("\n") : "";
    whitelist.value = group ? group.whitelist.join("\n") : "";
    for (const box of boxes) box.checked = Boolean(first && first.days.includes(box.value));
    start.value = first ? first.start : "";
    end.value = first ? first.end : "";
    const kept = group ? group.windows.length - 1 : 0;
    extra.textContent = kept > 0 ? `Its ${kept} other time window(s) are kept as they are.` : "";
    cancel.hidden = !group;
    editor.querySelector("h2").textContent = group ? `Edit the group ${group.name}` : "New group";
    editor.querySelector("button[type=submit]").textContent = group ? "Save group" : "Create group";
  }

  async function reload() {
    const rows = (await get("/api/groups")).data.map((group) => {
      const remove = h("button", { type: "button", class: "danger small" }, "Delete");
      remove.addEventListener("click", () => attempt(async () => {
        await api("DELETE", `/api/groups/${group.id}`);
        notify(`deleted the group ${group.name}`);
        await reload();
      }));
      const edit = h("button", { type: "button", class: "small" }, "Edit");
      edit.addEventListener("click", () => fill(group));
      return [
        h("strong", null, group.name),
        h("span", { class: "entry" }, group.networks.join(" ")),
        h("span", { class: "entry" }, group.blacklist.join(" ")),
        h("span", { class: "entry" }, group.whitelist.join(" ")),
        windows(group),
        `group:${group.name}`,
        h("span", { class: "row" }, edit, remove),
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
      const chosen = boxes.filter((box) => box.checked).map((box) => box.value);
      const drawn = chosen.length || start.value || end.value ? [{ days: chosen, start: start.value, end: end.value }] : [];
      const body = {
        name: name.value.trim(),
        networks: lines(networks.value),
        blacklist: lines(blacklist.value),
        whitelist: lines(whitelist.value),
        windows: editing ? [...drawn, ...editing.windows.slice(1)] : drawn,
      };
      const done = editing ? (await api("PUT", `/api/groups/${editing.id}`, body)).data : (await post("/api/groups", body)).data;
      notify(`${editing ? "saved" : "created"} the group ${done.name}`);
      fill(null);
      await reload();
    }),
    h("fieldset", null, h("legend", null, "Block only during (empty: always)"), h("div", { class: "row" }, days), h("div", { class: "row" }, "from ", start, " to ", end), extra),
    cancel,
  );
  cancel.addEventListener("click", () => fill(null));
  const editor = card("New group", create);
  root.append(
    h("h1", null, "Client groups"),
    h("p", { class: "hint" }, "A group's rules apply before the global lists; its whitelist wins over its blacklist. Refusals name the group."),
    card("Groups", listing),
    editor,
  );
  await reload();
}
