"use strict";
// The autoscaler's page: per container, usage and allocation over time with the
// model's decisions on them, from GET /api/v1/timelines. Every value from the
// server is rendered with textContent or as an SVG attribute; nothing is parsed as HTML.
(function () {
  const prefix = document.body.dataset.prefix || "";
  const KEY = "autoscale-api-key";
  const SVG = "http://www.w3.org/2000/svg";
  const W = 460, H = 150, PAD = 34;
  const $ = (id) => document.getElementById(id);

  function key() { return window.sessionStorage.getItem(KEY) || ""; }
  function showKeyState() { $("key-state").textContent = key() ? "key set" : "no key set"; }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, String(v)));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, String(v)));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function clock(t) { return new Date(t * 1000).toISOString().slice(11, 19); }

  // One chart: `used` as a line, `alloc` as a step line, decision markers on the allocation.
  function chart(title, samples, usedKey, allocKey, decisions, resource) {
    const box = el("div", { class: "chart", "data-resource": resource });
    box.appendChild(el("p", { class: "chart-title" }, title));
    const svg = svgEl("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
    svg.appendChild(svgEl("title", {}, title));
    const times = samples.map((s) => s.t).concat(decisions.map((d) => d.t));
    const t0 = Math.min(...times), t1 = Math.max(...times);
    const values = samples.flatMap((s) => [s[usedKey], s[allocKey]]).concat(decisions.flatMap((d) => [d.current, d.target]));
    const top = Math.max(1, ...values) * 1.1;
    const x = (t) => PAD + (t1 > t0 ? ((t - t0) / (t1 - t0)) * (W - PAD - 8) : (W - PAD) / 2);
    const y = (v) => H - 18 - (v / top) * (H - 28);
    svg.appendChild(svgEl("line", { class: "axis", x1: PAD, y1: H - 18, x2: W - 8, y2: H - 18 }));
    svg.appendChild(svgEl("line", { class: "axis", x1: PAD, y1: 8, x2: PAD, y2: H - 18 }));
    svg.appendChild(svgEl("text", { x: 2, y: 14 }, top.toFixed(top < 10 ? 1 : 0)));
    svg.appendChild(svgEl("text", { x: 2, y: H - 20 }, "0"));
    if (t1 > t0) {
      svg.appendChild(svgEl("text", { x: PAD, y: H - 4 }, clock(t0)));
      svg.appendChild(svgEl("text", { x: W - 60, y: H - 4 }, clock(t1)));
    }
    if (samples.length) {
      const used = samples.map((s) => `${x(s.t).toFixed(1)},${y(s[usedKey]).toFixed(1)}`).join(" ");
      svg.appendChild(svgEl("polyline", { class: "used", points: used }));
      const steps = [];
      samples.forEach((s, i) => {
        if (i) steps.push(`${x(s.t).toFixed(1)},${y(samples[i - 1][allocKey]).toFixed(1)}`);
        steps.push(`${x(s.t).toFixed(1)},${y(s[allocKey]).toFixed(1)}`);
      });
      svg.appendChild(svgEl("polyline", { class: "alloc", points: steps.join(" ") }));
    }
    decisions.forEach((d) => {
      const mark = svgEl("circle", {
        class: `decision ${d.outcome}`, cx: x(d.t).toFixed(1), cy: y(d.target).toFixed(1), r: 4,
        "data-outcome": d.outcome,
      });
      mark.appendChild(svgEl("title", {}, `${clock(d.t)} ${d.action} ${d.current} \u2192 ${d.target} (${d.outcome}): ${d.reason}`));
      svg.appendChild(mark);
    });
    box.appendChild(svg);
    return box;
  }

  function table(decisions) {
    const t = el("table", { class: "decisions" });
    const head = el("tr");
    ["time", "resource", "action", "outcome", "from \u2192 to", "reason"].forEach((h) => head.appendChild(el("th", {}, h)));
    t.appendChild(head);
    decisions.slice(-20).reverse().forEach((d) => {
      const row = el("tr");
      row.appendChild(el("td", {}, clock(d.t)));
      row.appendChild(el("td", {}, d.resource));
      row.appendChild(el("td", {}, d.action));
      row.appendChild(el("td", { class: `outcome ${d.outcome}` }, d.outcome));
      row.appendChild(el("td", {}, `${d.current} \u2192 ${d.target}`));
      row.appendChild(el("td", { class: "reason" }, d.error ? `${d.reason} (${d.error})` : d.reason));
      t.appendChild(row);
    });
    return t;
  }

  function render(containers) {
    const root = $("containers");
    root.replaceChildren();
    if (!containers.length) root.appendChild(el("p", { id: "empty" }, "No sampled containers yet."));
    containers.forEach((c) => {
      const card = el("article", { class: "container", "data-vmid": c.vmid });
      card.appendChild(el("h2", {}, `CT ${c.vmid} on ${c.host} \u00b7 tier ${c.tier}`));
      const charts = el("div", { class: "charts" });
      const cpu = c.decisions.filter((d) => d.resource === "cpu" && d.action !== "skip");
      const ram = c.decisions.filter((d) => d.resource === "ram");
      charts.appendChild(chart("CPU cores: used / allocated", c.samples, "cpu_cores_used", "cores", cpu, "cpu"));
      charts.appendChild(chart("Memory MB: used / allocated", c.samples, "memory_used_mb", "memory_mb", ram, "ram"));
      card.appendChild(charts);
      card.appendChild(table(c.decisions));
      root.appendChild(card);
    });
  }

  async function load() {
    const status = $("status");
    const id = $("filter-id").value.trim();
    const url = prefix + "/api/v1/timelines" + (id ? "?" + new URLSearchParams({ lxc_id: id }) : "");
    status.className = "";
    status.textContent = "loading\u2026";
    try {
      const response = await fetch(url, { headers: { "X-API-Key": key() } });
      const body = await response.json();
      if (!response.ok) {
        status.className = "error";
        const errors = Array.isArray(body.errors) ? ": " + body.errors.join("; ") : "";
        status.textContent = `HTTP ${response.status}: ${body.message || "error"}${errors}`;
        return;
      }
      render(body.data.containers);
      status.textContent = `${body.data.containers.length} containers`;
    } catch (err) {
      status.className = "error";
      status.textContent = "request failed: " + err;
    }
  }

  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    window.sessionStorage.setItem(KEY, $("api-key").value);
    $("api-key").value = "";
    showKeyState();
    load();
  });
  $("forget-key").addEventListener("click", () => { window.sessionStorage.removeItem(KEY); showKeyState(); });
  $("filter-form").addEventListener("submit", (e) => { e.preventDefault(); load(); });
  showKeyState();
  if (key()) load();
})();
