// The admin UI: a single page with hash routes (#/login, #/dashboard, #/analytics, #/lists/<list>, #/groups, #/dns,
// #/settings, #/tls, #/waf, #/maintenance). Each page module renders into a fresh element and may return a cleanup
// function (timers, the live log's WebSocket) run when another page is shown.

import { logout, session } from "./api.js";
import { $, h, notify } from "./dom.js";
import * as analytics from "./analytics.js";
import * as dashboard from "./dashboard.js";
import * as dns from "./dns.js";
import * as groups from "./groups.js";
import * as lists from "./lists.js";
import * as loginPage from "./login.js";
import * as maintenance from "./maintenance.js";
import * as settings from "./settings.js";
import * as tls from "./tls.js";
import * as waf from "./waf.js";

const PAGES = { login: loginPage, dashboard, analytics, lists, groups, dns, settings, tls, waf, maintenance };
let cleanup = null;
let shown = 0;

function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // a malformed escape in a typed address: taken as written
  }
}

function route() {
  const [name, ...args] = location.hash.replace(/^#\/?/, "").split("/").map(decoded);
  return { name, args };
}

function chrome(name) {
  const current = session();
  $("nav").hidden = !current;
  $("logout").hidden = !current;
  $("who").textContent = current ? "signed in as " + current.username : "";
  for (const link of document.querySelectorAll("#nav a")) {
    link.classList.toggle("active", link.dataset.page === name);
  }
}

async function show() {
  const { name, args } = route();
  const signedIn = Boolean(session());
  if (!signedIn && name !== "login") {
    location.hash = "#/login";
    return;
  }
  if (signedIn && !(name in PAGES && name !== "login")) {
    location.hash = "#/dashboard";
    return;
  }
  if (cleanup) cleanup();
  cleanup = null;
  const ticket = ++shown;
  chrome(name);
  const root = h("section", { class: "page", dataset: { page: name } });
  $("view").replaceChildren(root);
  document.title = "Web filter: " + name;
  try {
    const done = await PAGES[name].render(root, args);
    if (ticket === shown) cleanup = done || null;
    else if (done) done(); // another page was shown meanwhile
  } catch (err) {
    notify(err.message || String(err), "error");
  }
}

$("logout").addEventListener("click", async () => {
  await logout();
  notify("signed out");
});
window.addEventListener("webfilter:signed-out", () => {
  if (route().name !== "login") location.hash = "#/login";
  chrome("login");
});
window.addEventListener("hashchange", show);
show();
