// Client groups: source networks with their own domain lists and time windows. The table shows each
// group as the proxy applies it (in this order, before the global lists), every time window of it; the
// form creates one, or replaces one chosen with Edit (PUT /api/groups/{id}: the same checks as a
// creation). The form holds every window of the group: each is a row (days, from, to) that can be
// edited or removed, and "Add a time window" adds one; no row: the block applies at all times. What the
// rows hold is sent as it is, so a window the API refuses (no day, end not after start) shows its words.

import { api, get, post } from "./api.js";
import { attempt, card, form, h, notify, table } from "./dom.js";

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

function lines(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean);
}

function describe(win) {
  return `${win.days.join(",")} ${win.start}-${win.end}`;
}

// the windows cell of the table: one line per window
function windowsCell(group) {
  if (!group.windows.length) return "always";
  return h("span", { class: "windows" }, group.windows.map((w, i) => h("span", { class: "window", dataset: { window: String(i) } }, describe(w))));
}

// one row of the form's windows: its day boxes, from, to, and Remove; `read()` gives the window it holds
function windowRow(win, onRemove) {
  const boxes = DAYS.map((day) => h("input", { type: "checkbox", value: day, checked: Boolean(win && win.days.includes(day)), dataset: { day } }));
  const start = h("input", { type: "time", class: "window-start", value: win ? win.start : "" });
  const end = h("input", { type: "time", class: "window-end", value: win ? win.end : "" });
  const remove = h("button", { type: "button", class: "small danger window-remove" }, "Remove");
  const row = h(
    "div",
    { class: "row group-window" },
    boxes.map((box) => h("label", { class: "day" }, box, " " + box.value)),
    h("span", null, "from ", start, " to ", end),
    remove,
  );
  remove.addEventListener("click", () => onRemove(row));
  row.read = () => ({ days: boxes.filter((box) => box.checked).map((box) => box.value), start: start.value, end: end.value });
  return row;
}

export async function render(root) {
  const name = h("input", { id: "group-name", placeholder: "kids", required: true, size: 12 });
  const networks = h("textarea", { id: "group-networks", rows: 2, cols: 24, placeholder: "198.18.5.0/24" });
  const blacklist = h("textarea", { id: "group-blacklist", rows: 3, cols: 28, placeholder: "games.example" });
  const whitelist = h("textarea", { id: "group-whitelist", rows: 3, cols: 28, placeholder: "school.example" });
  const listing = h("div", { id: "groups" });
  const rows = h("div", { id: "group-windows" });
  const always = h("p", { class: "hint", id: "group-always" }, "No time window: the group's blacklist applies at all times.");
  const add = h("button", { type: "button", class: "small", id: "group-add-window" }, "Add a time window");
  const cancel = h("button", { type: "button", id: "group-cancel", hidden: true }, "Cancel");
  let editing = null; // the group the form replaces; null: the form creates one

  function shown() {
    always.hidden = rows.children.length > 0;
  }

  function addRow(win) {
    rows.append(windowRow(win, (row) => { row.remove(); shown(); }));
    shown();
  }

  // the form empty (creating) or holding `group` (editing), each of its windows a row
  function fill(group) {
    editing = group;
    name.value = group ? group.name : "";
    networks.value = group ? group.networks.join("\n") : "";
    blacklist.value = group ? group.blacklist.join("\n") : "";
    whitelist.value = group ? group.whitelist.join("\n") : "";
    rows.replaceChildren();
    for (const win of group ? group.windows : []) addRow(win);
    shown();
    cancel.hidden = !group;
    editor.querySelector("h2").textContent = group ? `Edit the group ${group.name}` : "New group";
    editor.querySelector("button[type=submit]").textContent = group ? "Save group" : "Create group";
  }

  async function reload() {
    const found = (await get("/api/groups")).data.map((group) => {
      const remove = h("button", { type: "button", class: "danger small" }, "Delete");
      remove.addEventListener("click", () => attempt(async () => {
        await api("DELETE", `/api/groups/${group.id}`);
        await reload();
        notify(`deleted the group ${group.name}`);
      }));
      const edit = h("button", { type: "button", class: "small" }, "Edit");
      edit.addEventListener("click", () => fill(group));
      return [
        h("strong", null, group.name),
        h("span", { class: "entry" }, group.networks.join(" ")),
        h("span", { class: "entry" }, group.blacklist.join(" ")),
        h("span", { class: "entry" }, group.whitelist.join(" ")),
        windowsCell(group),
        `group:${group.name}`,
        h("span", { class: "row" }, edit, remove),
      ];
    });
    const columns = ["group", "networks", "blocked for the group", "allowed for the group", "block applies", "rule in logs", ""];
    listing.replaceChildren(table(columns, found, "no client groups"));
  }

  const create = form(
    "group-form",
    "stack",
    [["Name", name], ["Networks (CIDR, one a line)", networks], ["Blacklist (one a line)", blacklist], ["Whitelist (one a line)", whitelist]],
    "Create group",
    () => attempt(async () => {
      const body = {
        name: name.value.trim(),
        networks: lines(networks.value),
        blacklist: lines(blacklist.value),
        whitelist: lines(whitelist.value),
        windows: [...rows.children].map((row) => row.read()),
      };
      const done = editing ? (await api("PUT", `/api/groups/${editing.id}`, body)).data : (await post("/api/groups", body)).data;
      notify(`${editing ? "saved" : "created"} the group ${done.name}`);
      fill(null);
      await reload();
    }),
    h("fieldset", null, h("legend", null, "Block only during these time windows (node's local time)"), rows, always, add),
    cancel,
  );
  add.addEventListener("click", () => addRow(null));
  cancel.addEventListener("click", () => fill(null));
  const editor = card("New group", create);
  root.append(
    h("h1", null, "Client groups"),
    h("p", { class: "hint" }, "A group's rules apply before the global lists; its whitelist wins over its blacklist. Refusals name the group."),
    card("Groups", listing),
    editor,
  );
  shown();
  await reload();
}
