// Settings: the security score with what each item needs, every setting (edited all together:
// POST /api/settings validates all first and writes nothing on a bad value), and the password.

import { get, logout, post } from "./api.js";
import { attempt, card, form, h, notify, table } from "./dom.js";

const LABELS = {
  domain_blacklist: "Domain blacklist",
  ip_blacklist: "IP blacklist",
  waf: "WAF",
  ssl_bump: "TLS interception",
  block_direct_ip: "Direct IP blocking",
  egress_default_deny: "Egress default-deny",
  restricted_clients: "Restricted clients",
  password_changed: "Admin password changed",
  notifications: "Notifications",
};

function group(name) {
  if (name.startsWith("notify_") || name === "enable_notifications") return "Notifications";
  if (name.startsWith("dns_") || name === "proxy_listen") return "Network and DNS";
  if (name === "log_retention_days" || name === "gdpr_mode") return "Logs and privacy";
  return "Protection";
}

async function score(box) {
  const s = (await get("/api/security/score")).data;
  const meter = h("meter", { min: 0, max: s.max_score, value: s.score, low: s.max_score * 0.5, high: s.max_score * 0.8, optimum: s.max_score });
  box.replaceChildren(
    h("p", { class: "score" }, h("span", { id: "score-value" }, `${s.score} / ${s.max_score}`), " ", meter),
    h("div", { id: "score-items" }, table(
      ["item", "points", "in effect", "what it needs"],
      s.items.map((item) => [
        LABELS[item.check] || item.check,
        String(item.points),
        h("span", { class: item.passed ? "yes" : "no" }, item.passed ? "yes" : "no"),
        item.passed ? "" : item.needs,
      ]),
    )),
  );
}

// one input for a setting, by the type of its current value; read() gives the value to send
function control(name, value) {
  const id = "setting-" + name;
  if (typeof value === "boolean") {
    const input = h("input", { type: "checkbox", id, checked: value });
    return { input, read: () => input.checked };
  }
  if (Array.isArray(value)) {
    const input = h("textarea", { id, rows: Math.max(2, value.length + 1), cols: 36, value: value.join("\n") });
    // a list keeps the type of its items: rule ids are numbers (the API refuses "942100"); an empty list
    // has no items to say it, so there a line of digits is a number
    const numbers = value.length ? typeof value[0] === "number" : null;
    const item = (line) => (numbers ?? /^[0-9]+$/.test(line)) ? Number(line) : line;
    return { input, read: () => input.value.split("\n").map((line) => line.trim()).filter(Boolean).map(item) };
  }
  if (typeof value === "number") {
    const input = h("input", { type: "number", id, value: String(value) });
    return { input, read: () => Number(input.value) };
  }
  const secret = name.endsWith("_token");
  const input = h("input", { type: secret ? "password" : "text", id, value: value ?? "", size: 36, autocomplete: "off" });
  return { input, read: () => input.value };
}

function settingsForm(values, saved) {
  const controls = {};
  const groups = {};
  for (const [name, value] of Object.entries(values)) {
    controls[name] = { ...control(name, value), original: JSON.stringify(value) };
    const label = h("label", { class: "setting", htmlFor: "setting-" + name }, h("code", null, name));
    (groups[group(name)] ||= []).push(h("div", { class: "setting-row" }, label, controls[name].input));
  }
  const form = h(
    "form",
    { id: "settings-form" },
    Object.entries(groups).map(([title, rows]) => h("fieldset", null, h("legend", null, title), rows)),
    h("button", { type: "submit" }, "Save changes"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const changed = {};
    for (const [name, c] of Object.entries(controls)) {
      const now = c.read();
      if (JSON.stringify(now) !== c.original) changed[name] = now;
    }
    if (!Object.keys(changed).length) return notify("nothing changed");
    attempt(async () => {
      await post("/api/settings", changed);
      await saved();
      notify("saved: " + Object.keys(changed).join(", "));
    });
  });
  return form;
}

function passwordForm() {
  const current = h("input", { type: "password", id: "current-password", autocomplete: "current-password" });
  const next = h("input", { type: "password", id: "new-password", autocomplete: "new-password" });
  const change = () => attempt(async () => {
    await post("/api/change-password", { current_password: current.value, new_password: next.value });
    await logout(); // tokens issued before the change no longer work
    notify("password changed: sign in with the new one");
  });
  const rule = "At least 10 characters with a lower and an upper case letter, a digit and a special character.";
  return form("password-form", "stack", [["Current", current], ["New", next]], "Change password", change,
    h("p", { class: "hint" }, rule));
}

function notificationTest() {
  const result = h("ul", { id: "notify-result" });
  const send = h("button", { type: "button", id: "notify-test" }, "Send a test notification");
  send.addEventListener("click", () => attempt(async () => {
    result.replaceChildren();
    const sent = (await post("/api/notifications/test")).data;
    result.replaceChildren(...Object.entries(sent).map(([target, r]) =>
      h("li", null, `${target}: ${r.ok ? "delivered" : "failed"}${r.status_code ? ` (HTTP ${r.status_code})` : ""}`)));
    notify("test sent to: " + Object.keys(sent).join(", "));
  }));
  return [h("p", { class: "hint" }, "Sends a message to every configured target (the Notifications settings below)."), send, result];
}

export async function render(root) {
  const scoreBox = h("div", { id: "score" });
  const formBox = h("div");
  async function load() {
    const values = (await get("/api/settings")).data;
    formBox.replaceChildren(settingsForm(values, load));
    await score(scoreBox);
  }
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "Settings")),
    h(
      "div",
      { class: "grid" },
      card("Security score", scoreBox),
      h("div", null, card("Admin password", passwordForm()), card("Notifications", ...notificationTest())),
    ),
    card("Settings", formBox),
  );
  await load();
}
