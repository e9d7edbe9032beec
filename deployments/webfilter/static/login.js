// Sign in: POST /api/auth/login; the tokens go to sessionStorage (api.js).

import { login } from "./api.js";
import { card, form, h, notify } from "./dom.js";

export function render(root) {
  const username = h("input", { id: "login-user", name: "username", autocomplete: "username", value: "admin" });
  const password = h("input", { id: "login-password", name: "password", type: "password", autocomplete: "current-password" });
  const error = h("p", { id: "login-error", class: "error" });
  const signIn = async () => {
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
  };
  root.append(card("Sign in", form("login-form", "stack", [["User", username], ["Password", password]], "Sign in", signIn, error)));
  password.focus();
}
