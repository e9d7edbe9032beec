// The admin API as the UI calls it: the routes every client uses, with the bearer token of
// POST /api/auth/login. The tokens live in sessionStorage only: gone with the tab, never kept on disk.

const PREFIX = document.body.dataset.prefix || "";
const KEY = "webfilter.session";

export class ApiError extends Error {
  constructor(status, detail) {
    super(status ? `${detail} (HTTP ${status})` : detail);
    this.status = status;
    this.detail = detail;
  }
}

export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) || "null");
  } catch {
    return null;
  }
}

function keep(body, username) {
  sessionStorage.setItem(KEY, JSON.stringify({
    username,
    access_token: body.access_token,
    refresh_token: body.refresh_token,
  }));
}

function forget() {
  sessionStorage.removeItem(KEY);
  window.dispatchEvent(new Event("webfilter:signed-out"));
}

async function parse(response) {
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const detail = body && typeof body.detail === "string" ? body.detail : response.statusText || "request failed";
    throw new ApiError(response.status, detail);
  }
  return body;
}

async function send(method, path, body, token) {
  const headers = {};
  const init = { method, headers, cache: "no-store" };
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(PREFIX + path, init);
  } catch (err) {
    throw new ApiError(0, "the web filter did not answer: " + err.message);
  }
}

export async function login(username, password) {
  const body = await parse(await send("POST", "/api/auth/login", { username, password }));
  keep(body, username);
  return body;
}

let refreshing = null;

// one refresh at a time: a refresh token works once
function refresh(current) {
  if (!refreshing) {
    refreshing = (async () => {
      const response = await send("POST", "/api/auth/refresh", { refresh_token: current.refresh_token });
      if (!response.ok) return false;
      keep(await response.json(), current.username);
      return true;
    })().finally(() => { refreshing = null; });
  }
  return refreshing;
}

// the raw response of an authenticated call (after one token refresh on a 401)
async function authorised(method, path, body) {
  const current = session();
  if (!current) {
    forget();
    throw new ApiError(401, "not signed in");
  }
  let response = await send(method, path, body, current.access_token);
  if (response.status === 401 && current.refresh_token && await refresh(current)) {
    response = await send(method, path, body, session().access_token);
  }
  if (response.status === 401) forget();
  return response;
}

// the JSON body of an authenticated call; throws ApiError with the API's `detail`
export async function api(method, path, body) {
  return parse(await authorised(method, path, body));
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);

// the text body of an authenticated GET (a file to save)
export async function text(path) {
  const response = await authorised("GET", path);
  if (!response.ok) await parse(response);
  return response.text();
}

// revoke both tokens, then forget them whatever the answer
export async function logout() {
  const current = session();
  try {
    if (current) await send("POST", "/api/logout", { refresh_token: current.refresh_token }, current.access_token);
  } finally {
    forget();
  }
}

// the live log's address with a fresh single-use stream token
export async function streamUrl() {
  const { token } = await get("/api/ws-token");
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${PREFIX}/api/ws/logs?token=${encodeURIComponent(token)}`;
}
