// TLS: interception on or off (the setting and what Squid runs now), the built-in splice categories
// (setting tls_splice_categories) and the splice list (/api/tls-splice): names passed through unbumped.

import { get, post } from "./api.js";
import { attempt, card, h, notify } from "./dom.js";
import { entriesCard } from "./lists.js";
import { SPLICE_CATEGORIES } from "./splice-categories.js";

const SPLICE_LIST = {
  title: "Splice list",
  field: "domain",
  placeholder: "bank.example, *.bank.example or /regex/",
  bulk: true,
  intro: [h("p", { class: "hint" },
    "A name covers its subdomains; *.name only the subdomains; /regex/ the names it matches. " +
    "Applied to Squid before the answer.")],
};

const DESCRIPTIONS = {
  banking: "banks and payment services: not decrypted",
  health: "health services and records: not decrypted",
  pinned_apps: "apps that pin their certificate and would fail against ours",
};

// a checkbox whose change is saved with POST /api/settings (the body `body()` gives), unticked again
// when the API refuses it
function saving(box, body, done) {
  box.addEventListener("change", () => attempt(async () => {
    try {
      await post("/api/settings", body());
    } catch (err) {
      box.checked = !box.checked;
      throw err;
    }
    await done();
  }));
  return box;
}

async function interception(box) {
  const [settings, status] = await Promise.all([get("/api/settings"), get("/api/status")]);
  const toggle = saving(
    h("input", { type: "checkbox", id: "tls-bump", checked: settings.data.ssl_bump_enabled }),
    () => ({ ssl_bump_enabled: toggle.checked }),
    async () => {
      await interception(box);
      notify(`TLS interception ${toggle.checked ? "on" : "off"}`);
    },
  );
  const running = status.data.proxy.ssl_bump;
  box.replaceChildren(
    h("label", { class: "row" }, toggle, "Intercept HTTPS (setting ssl_bump_enabled)"),
    h("p", { id: "tls-state" }, `Squid is ${running ? "bumping" : "tunnelling"} HTTPS now.`),
    h("p", { class: "hint" },
      "Clients must trust the interception CA (Maintenance: Download CA certificate). " +
      "Spliced names and enabled categories below keep their end-to-end TLS."),
  );
}

async function categories(box) {
  const enabled = new Set((await get("/api/settings")).data.tls_splice_categories);
  const boxes = Object.keys(SPLICE_CATEGORIES).map((name) =>
    h("input", { type: "checkbox", id: "splice-" + name, checked: enabled.has(name), value: name }));
  const chosen = () => boxes.filter((b) => b.checked).map((b) => b.value);
  box.replaceChildren(...Object.entries(SPLICE_CATEGORIES).map(([name, domains], index) => h(
    "div",
    { class: "category", dataset: { category: name } },
    h("label", { class: "row" }, saving(boxes[index], () => ({ tls_splice_categories: chosen() }), async () => {
      await categories(box);
      notify(`splice categories: ${chosen().join(", ") || "none"}`);
    }), h("strong", null, name), " ", DESCRIPTIONS[name] || ""),
    h("details", null, h("summary", null, `${domains.length} domains`), h("p", { class: "entry" }, domains.join(" "))),
  )));
}

export async function render(root) {
  const stateBox = h("div", { id: "tls-interception" });
  const categoryBox = h("div", { id: "splice-categories" });
  const splice = entriesCard("tls-splice", SPLICE_LIST);
  root.append(
    h("div", { class: "toolbar" }, h("h1", null, "TLS interception")),
    h("div", { class: "grid" }, card("Interception", stateBox), card("Built-in splice categories", categoryBox)),
    splice.element,
  );
  await Promise.all([interception(stateBox), categories(categoryBox), splice.reload()]);
}
