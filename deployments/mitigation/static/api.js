// The orchestrator's API as the page calls it: the same routes as any client, with the management
// key (X-Service-API-Key) the user typed in. The key lives in sessionStorage only: gone with the tab.

const PREFIX = document.body.dataset.prefix || "";
const KEY = "mitigation.key";

export class ApiError extends Error {
  constructor(status, message) {
    super(status ? `${message} (HTTP ${status})` : message);
    this.status = status;
  }
}

export const key = () => sessionStorage.getItem(KEY);

export function remember(value) {
  sessionStorage.setItem(KEY, value);
}

export function forget() {
  sessionStorage.removeItem(KEY);
  window.dispatchEvent(new Event("mitigation:signed-out"));
}

// the JSON body of a call with `credential`; throws ApiError with the API's error message
async function request(method, path, body, credential) {
  const headers = { "X-Service-API-Key": credential };
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(PREFIX + "/api/v1" + path, init);
  } catch (err) {
    throw new ApiError(0, "the mitigation API did not answer: " + err.message);
  }
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  if (!response.ok) {
    const message = answer && answer.error && typeof answer.error.message === "string" ? answer.error.message : response.statusText;
    throw new ApiError(response.status, message || "request failed");
  }
  return answer;
}

// a call with the key signed in with; a refused key signs the page out
export async function api(method, path, body) {
  try {
    return await request(method, path, body, key() || "");
  } catch (err) {
    if (err.status === 401 || err.status === 403) forget();
    throw err;
  }
}

export const get = (path) => api("GET", path);

// whether the API takes `candidate` (throws ApiError when it does not)
export const check = (candidate) => request("GET", "/nodes", undefined, candidate);

// a ban's address or CIDR in a path: each segment encoded, the CIDR's slash kept
export const addressPath = (ip) => ip.split("/").map(encodeURIComponent).join("/");
