// Sign in: POST /api/auth/login; the tokens go to sessionStorage (api.js).

import { login } from "./api.js";
import { card, h, notify } from "./dom.js";

export function render(root) {
  const username = h("input", { id: "login-user", name: "username", autocomplete: "username", value: "admin" });
  const password = h("input", { id: "login-password", name: "password", type: "password", autocomplete: "current-password" });
  const error = h("p", { id: "login-error", class: "error" });
  const form = h(
    "form",
    { id: "login-form", class: "stack" },
    h("label", null, "User ", username),
    h("label", null, "Password ", password),
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      await login(username.value, password.value);
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    password.value = "";
    notify("signed in");
    location.hash = "#/dashboard";
  });
  root.append(card("Sign in", form));
  password.focus();
}
