// The fleet dashboard: sign in with the management key, then one view per hash (#/fleet, #/threats,
// #/bans, #/rules, #/policy), redrawn every 3 s from the orchestrator's JSON routes.

import { check, forget, key, remember } from "./api.js";
import { $, card, form, h, notify } from "./dom.js";
import * as views from "./views.js";

const REFRESH_MS = 3000;
let timer = null;
let drawing = null;

function signIn(root) {
  const input = h("input", { id: "api-key", name: "key", type: "password", autocomplete: "off", placeholder: "MANAGEMENT_API_KEY" });
  const error = h("p", { id: "login-error", class: "error" });
  const submit = async () => {
    const candidate = input.value.trim();
    try {
      await check(candidate);
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    remember(candidate);
    input.value = "";
    location.hash = "#/fleet";
    show();
  };
  root.append(card("Management key", form("login-form", "stack", [["X-Service-API-Key", input]], "Sign in", submit, error)));
  input.focus();
}

function page() {
  const name = location.hash.replace(/^#\//, "");
  return Object.hasOwn(views, name) ? name : "fleet";
}

// draw the current view into a fresh container, swapped in whole (no half-drawn view)
async function draw() {
  const name = page();
  const next = h("div", { id: "view-" + name, class: "view" });
  try {
    await views[name](next, redraw);
  } catch (err) {
    if (!key()) return show();
    notify(err.message, "error");
    return;
  }
  $("view").replaceChildren(next);
  $("updated").textContent = "updated " + new Date().toISOString().slice(11, 19) + " UTC";
}

function redraw() {
  drawing = (drawing || Promise.resolve()).then(draw, draw).finally(() => { drawing = null; });
  return drawing;
}

function show() {
  clearInterval(timer);
  const signedIn = Boolean(key());
  $("nav").hidden = !signedIn;
  $("logout").hidden = !signedIn;
  for (const link of document.querySelectorAll("#nav a")) link.classList.toggle("active", link.dataset.page === page());
  if (!signedIn) {
    $("updated").textContent = "";
    $("view").replaceChildren();
    signIn($("view"));
    return;
  }
  redraw();
  timer = setInterval(redraw, REFRESH_MS);
}

window.addEventListener("hashchange", show);
window.addEventListener("mitigation:signed-out", show);
$("logout").addEventListener("click", forget);
show();
