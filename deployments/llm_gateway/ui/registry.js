// The registry page. Everything shown is set with textContent or DOM APIs, never as HTML.
"use strict";

(() => {
  const root = new URL("../", document.baseURI); // the gateway: /llm/ through Serve, / on the direct listener
  const REFRESH_MS = 30000;
  const $ = (id) => document.getElementById(id);
  let csrf = "";
  let timer = null;
  let entries = [];

  function status(text, isError) {
    const el = $("status");
    el.textContent = text;
    el.className = isError ? "error" : "";
  }

  async function call(method, path, body) {
    const headers = { Accept: "application/json" };
    if (method !== "GET") headers["X-CSRF-Token"] = csrf;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(new URL(path, root), {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = null;
    }
    return { ok: response.ok, status: response.status, data };
  }

  function problem(result) {
    const err = result.data && result.data.error;
    return err ? `HTTP ${result.status} ${err.code}: ${err.message}` : `HTTP ${result.status}`;
  }

  function el(tag, text, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  }

  function host(url) {
    try {
      return new URL(url).host;
    } catch (e) {
      return url;
    }
  }

  function shellQuote(text) {
    return "'" + String(text).split("'").join("'\\''") + "'";
  }

  function curlFor(entry) {
    const models = entry.probed_models && entry.probed_models.length ? entry.probed_models : entry.models || [];
    const body = { model: models.length ? models[0] : "MODEL", messages: [{ role: "user", content: "hello" }] };
    return [
      "curl -s " + shellQuote(new URL("v1/chat/completions", root).href),
      '  -H "Authorization: Bearer $LLM_PROXY_API_KEY"',
      "  -H 'Content-Type: application/json'",
      "  -d " + shellQuote(JSON.stringify(body)),
    ].join(" \\\n");
  }

  async function act(label, method, path, body) {
    status(`${label}…`);
    const result = await call(method, path, body);
    if (result.status === 401) return showSignIn("Your session has ended: sign in again.");
    if (!result.ok) {
      status(`${label} failed: ${problem(result)}`, true);
    } else {
      status(`${label}: done`);
    }
    await load();
    return result;
  }

  const ACTIONS = {
    copy: async (entry) => {
      const command = curlFor(entry);
      $("curl").value = command;
      $("curl-box").hidden = false;
      try {
        await navigator.clipboard.writeText(command);
        status(`curl command for ${entry.id} copied`);
      } catch (e) {
        $("curl").select();
        status(`curl command for ${entry.id} shown below (the clipboard is not available)`);
      }
    },
    test: async (entry) => {
      const path = `api/v1/registry/${encodeURIComponent(entry.id)}/probe`;
      const result = await act(`Test ${entry.id}`, "POST", path);
      if (result && result.ok) status(`Test ${entry.id}: answered in ${Math.round(result.data.latency_ms)} ms`);
    },
    inspect: (entry) => showDetails(entry),
    reset: (entry) => act(`Reset breaker of ${entry.id}`, "POST", `api/v1/circuit-breaker/${encodeURIComponent(entry.id)}/reset`),
    toggle: (entry) => act(`Toggle ${entry.id}`, "POST", `api/v1/registry/${encodeURIComponent(entry.id)}/toggle`),
    raise: (entry) => setPriority(entry, entry.priority - 1),
    lower: (entry) => setPriority(entry, entry.priority + 1),
    delete: (entry, row) => askDelete(entry, row),
  };

  function setPriority(entry, priority) {
    const bounded = Math.max(-1000, Math.min(1000, priority));
    return act(`Priority of ${entry.id} → ${bounded}`, "POST", `api/v1/registry/${encodeURIComponent(entry.id)}/priority`, {
      priority: bounded,
    });
  }

  function askDelete(entry, row) {
    const cell = row.querySelector("td.actions");
    const confirmButton = el("button", `Confirm delete of ${entry.id}`, { type: "button", "data-action": "confirm-delete", class: "danger" });
    const cancelButton = el("button", "Cancel", { type: "button", "data-action": "cancel-delete" });
    confirmButton.addEventListener("click", () => act(`Delete ${entry.id}`, "DELETE", `api/v1/registry/${encodeURIComponent(entry.id)}`));
    cancelButton.addEventListener("click", () => render());
    cell.replaceChildren(confirmButton, cancelButton);
    status(`Delete ${entry.id}? Confirm or cancel.`);
  }

  function showDetails(entry) {
    $("details-id").textContent = entry.id;
    const list = $("details-list");
    list.replaceChildren();
    for (const [key, value] of Object.entries(entry)) {
      list.append(el("dt", key), el("dd", typeof value === "string" ? value : JSON.stringify(value)));
    }
    $("details").hidden = false;
  }

  const BUTTONS = [
    ["copy", "Copy curl"],
    ["test", "Test"],
    ["inspect", "Inspect"],
    ["reset", "Reset breaker"],
    ["toggle", "Toggle"],
    ["raise", "Raise"],
    ["lower", "Lower"],
    ["delete", "Delete"],
  ];
  // An endpoint of the config file can be looked at and its breaker reset, nothing else: the API answers 409.
  const READ_ONLY_ACTIONS = new Set(["copy", "inspect", "reset"]);

  function statusText(entry) {
    if (entry.read_only) return "Config (read-only)";
    return entry.status === "verified" ? "Live" : entry.status;
  }

  function render() {
    const rows = entries.map((entry) => {
      const row = el("tr", undefined, { "data-id": entry.id, "data-read-only": String(Boolean(entry.read_only)) });
      row.append(
        el("td", entry.name),
        el("td", host(entry.base_url)),
        el("td", entry.provider),
        el("td", statusText(entry), { class: "status" }),
        el("td", entry.circuit_state, { class: "breaker" }),
        el("td", entry.latency_ms === null || entry.latency_ms === undefined ? "--" : `${Math.round(entry.latency_ms)} ms`),
        el("td", String(entry.priority), { class: "priority" })
      );
      const actions = el("td", undefined, { class: "actions" });
      for (const [action, label] of BUTTONS) {
        if (entry.read_only && !READ_ONLY_ACTIONS.has(action)) continue;
        const button = el("button", label, { type: "button", "data-action": action });
        if (action === "delete") button.className = "danger";
        button.addEventListener("click", () => ACTIONS[action](entry, row));
        actions.append(button);
      }
      row.append(actions);
      return row;
    });
    $("entries").querySelector("tbody").replaceChildren(...rows);
  }

  async function load() {
    const result = await call("GET", "api/v1/registry");
    if (result.status === 401) return showSignIn("Your session has ended: sign in again.");
    if (!result.ok) return status(`Loading the registry failed: ${problem(result)}`, true);
    entries = result.data.data.concat(result.data.configured || []);
    render();
    $("updated").textContent = `Updated ${new Date().toLocaleTimeString()}, ${result.data.total} entries`;
    document.body.dataset.loads = String(Number(document.body.dataset.loads || "0") + 1);
  }

  function showRegistry(session) {
    csrf = session.csrf_token;
    $("who").textContent = `${session.subject} (${session.role})`;
    $("logout").hidden = false;
    $("signin").hidden = true;
    $("registry").hidden = false;
    if (timer === null) timer = setInterval(load, REFRESH_MS);
    return load();
  }

  async function showSignIn(message, isError = true) {
    if (timer !== null) clearInterval(timer);
    timer = null;
    csrf = "";
    $("who").textContent = "";
    $("logout").hidden = true;
    $("registry").hidden = true;
    $("signin").hidden = false;
    status(message || "Sign in with an admin key.", Boolean(message) && isError);
    const result = await call("GET", "auth/providers");
    const list = $("providers");
    list.replaceChildren();
    if (result.ok) {
      for (const provider of result.data.providers) {
        const link = el("a", `Sign in with ${provider.name}`, { href: new URL(provider.login, root).href });
        const item = el("li");
        item.append(link);
        list.append(item);
      }
    }
  }

  async function start() {
    const result = await call("GET", "auth/session");
    if (result.ok && result.data.role === "admin") return showRegistry(result.data);
    const why = result.ok ? `Signed in as ${result.data.subject} with role ${result.data.role}: this page needs admin.` : "";
    return showSignIn(why);
  }

  $("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("admin-key");
    const result = await call("POST", "auth/key", { admin_key: input.value });
    input.value = "";
    if (!result.ok) return status(`Sign-in failed: ${problem(result)}`, true);
    status("Signed in.");
    return showRegistry(result.data);
  });
  $("logout").addEventListener("click", async () => {
    await call("POST", "auth/logout");
    showSignIn("Signed out.", false);
  });
  $("refresh").addEventListener("click", () => load());
  $("details-close").addEventListener("click", () => {
    $("details").hidden = true;
  });
  start();
})();
