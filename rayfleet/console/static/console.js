// The fleet console: polls api/status and renders one row per component.
// Every value goes into the DOM as text (textContent); links only take http(s) URLs.
"use strict";

(() => {
  const REFRESH_MS = 3000;
  const $ = (id) => document.getElementById(id);

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function link(url, label) {
    if (typeof url !== "string" || !/^https?:\/\//i.test(url)) return el("span", url);
    const a = el("a", label || url, label ? "" : "url");
    a.href = url;
    a.rel = "noopener noreferrer";
    return a;
  }

  function lines(items) {
    const cell = el("td");
    if (!items.length) cell.append(el("span", "–", "none"));
    for (const item of items) {
      const line = el("div", null, "line");
      line.append(item);
      cell.append(line);
    }
    return cell;
  }

  function health(c) {
    const ok = c.health === "ok";
    const cell = el("td");
    cell.append(el("span", ok ? "ok" : "unhealthy", ok ? "badge ok" : "badge bad"));
    const codes = c.health_status || {};
    const detail = `serve ${codes.serve || "no answer"}` + (codes.direct == null ? "" : ` · direct ${codes.direct || "no answer"}`);
    cell.append(el("div", detail, "detail"));
    return cell;
  }

  function row(name, c) {
    const tr = el("tr");
    tr.dataset.component = name;
    tr.append(el("th", name));
    tr.append(health(c));
    const replicas = el("td", c.replicas == null ? "–" : c.replicas, "num");
    if (c.serve_status) replicas.append(el("div", c.serve_status, "detail"));
    tr.append(replicas);
    tr.append(lines((c.nodes || []).map((n) => el("code", n))));
    const urls = [group([el("span", "serve ", "tag"), link(c.serve_url)])];
    for (const d of c.direct_urls || []) urls.push(group([el("span", "direct ", "tag"), link(d)]));
    tr.append(lines(urls));
    tr.append(lines([c.docs && link(c.docs, "API docs"), c.ui && link(c.ui, "web UI")].filter(Boolean)));
    tr.append(lines((c.data_planes || []).map((d) => group([el("span", d.kind + " ", "tag"), el("code", d.address)]))));
    return tr;
  }

  function group(parts) {
    const span = el("span");
    span.append(...parts);
    return span;
  }

  function render(report) {
    const names = Object.keys(report.components || {}).sort();
    const body = $("components").tBodies[0];
    body.replaceChildren(...names.map((n) => row(n, report.components[n])));
    const bad = names.filter((n) => report.components[n].health !== "ok");
    $("summary-text").textContent = bad.length
      ? `${bad.length} of ${names.length} components unhealthy: ${bad.join(", ")}`
      : `All ${names.length} components healthy`;
    $("summary").className = bad.length ? "bad" : "ok";
    $("base-url").textContent = report.base_url || "–";
    $("ingress").textContent = report.ingress || "–";
    const at = report.placement_at;
    $("placement-age").textContent = at ? `${Math.max(0, Math.round(Date.now() / 1000 - at))} s old` : "not known yet";
  }

  async function refresh() {
    try {
      const response = await fetch("api/status", { cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      render(await response.json());
      $("refresh").textContent = `updated ${new Date().toLocaleTimeString()}`;
      $("refresh").className = "refresh";
    } catch (err) {
      $("refresh").textContent = `status unavailable (${err.message}); showing the last answer`;
      $("refresh").className = "refresh stale";
    }
  }

  refresh();
  setInterval(refresh, REFRESH_MS);
})();
