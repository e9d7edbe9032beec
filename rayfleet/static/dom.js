// Building the DOM. Every value from the server is set as text (Text nodes, textContent) or as a
// property of an element; nothing is ever parsed as HTML.

export const $ = (id) => document.getElementById(id);

function append(el, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

// h("button", {class: "danger", on: {click: fn}}, "Delete"): an element, its properties, its children
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "on") {
      for (const [event, handler] of Object.entries(value)) el.addEventListener(event, handler);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else {
      el[key] = value;
    }
  }
  append(el, children);
  return el;
}

// a form of labelled inputs, its submit button and what follows it; `submit` runs instead of navigating
export function form(id, layout, fields, button, submit, ...after) {
  const el = h(
    "form",
    { id, class: layout },
    fields.map(([label, input]) => h("label", null, label + " ", input)),
    h("button", { type: "submit" }, button),
    ...after,
  );
  el.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  return el;
}

export function card(title, ...children) {
  return h("section", { class: "card" }, h("h2", null, title), ...children);
}

// a table of `columns` headings and `rows` (arrays of cells: text or nodes); `empty` when there is no row
export function table(columns, rows, empty = "nothing yet") {
  const body = h("tbody", null, rows.map((cells) => h("tr", null, cells.map((c) => h("td", null, c)))));
  if (!rows.length) body.append(h("tr", { class: "empty" }, h("td", { colSpan: columns.length }, empty)));
  return h("table", null, h("thead", null, h("tr", null, columns.map((c) => h("th", null, c)))), body);
}

export function number(value) {
  return typeof value === "number" ? value.toLocaleString("en-US") : String(value ?? "");
}

export function bytes(value) {
  if (typeof value !== "number") return "";
  const units = ["B", "KiB", "MiB", "GiB"];
  let n = value;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit += 1;
  }
  return (unit ? n.toFixed(1) : String(n)) + " " + units[unit];
}

// an ISO time from the API (UTC, Z) as "YYYY-MM-DD HH:MM:SS"
export function when(iso) {
  return typeof iso === "string" ? iso.replace("T", " ").replace(/\.\d+/, "").replace("Z", "") : "";
}

let noticeTimer = null;

// a message in the bar under the header; kind "error" or "ok"
export function notify(text, kind = "ok") {
  const notice = $("notice");
  notice.textContent = text;
  notice.className = kind;
  clearTimeout(noticeTimer);
  if (kind === "ok") noticeTimer = setTimeout(() => { notice.textContent = ""; notice.className = ""; }, 8000);
}

// run `action` for a form or button, reporting an ApiError in the notice bar
export async function attempt(action) {
  try {
    return await action();
  } catch (err) {
    notify(err.message || String(err), "error");
    return undefined;
  }
}

// save `text` as a file named `name` (a blob URL; nothing leaves the page)
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
