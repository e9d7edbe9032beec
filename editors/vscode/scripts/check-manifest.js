#!/usr/bin/env node
/**
 * Checks the extension manifest against spec 001 §2 C and against the code:
 * the six settings (names, types, enums, defaults), every command registered by
 * out/extension.js and contributed (and the reverse), the view, its menus, the
 * activation events, and the MCP provider id. With a .vsix argument, the same
 * checks run on the manifest packed inside it, and the compiled entry point must
 * be packed too.
 * Usage: node scripts/check-manifest.js [memory-ext.vsix]
 */
"use strict";
const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");

const SETTINGS = {
  "memory-ext.binaryPath": { type: "string", default: "" },
  "memory-ext.dbPath": { type: "string", default: "" },
  "memory-ext.defaultScope": { type: "string", default: "user", enum: ["user", "ask", "repo:current"] },
  "memory-ext.groupByScope": { type: "boolean", default: false },
  "memory-ext.sortBy": { type: "string", default: "updated", enum: ["updated", "created", "key", "scope"] },
  "memory-ext.autoStartMCP": { type: "boolean", default: false },
};
const VIEW = "memory-ext.memories";
const MCP_PROVIDER = "memory-ext.mem";

function check(manifest, extensionJs) {
  const c = manifest.contributes;
  assert.equal(manifest.main, "./out/extension.js");
  assert.ok(manifest.engines.vscode.startsWith("^1.1"), "engines.vscode");

  const props = c.configuration.properties;
  assert.deepEqual(Object.keys(props).sort(), Object.keys(SETTINGS).sort(), "exactly the six settings of the spec");
  for (const [name, want] of Object.entries(SETTINGS)) {
    assert.equal(props[name].type, want.type, `${name} type`);
    assert.deepEqual(props[name].default, want.default, `${name} default`);
    assert.deepEqual(props[name].enum, want.enum, `${name} enum`);
  }

  const registered = new Set([...extensionJs.matchAll(/"(memory-ext\.[A-Za-z]+)": async/g)].map((m) => m[1]));
  const contributed = new Set(c.commands.map((cmd) => cmd.command));
  assert.deepEqual([...contributed].sort(), [...registered].sort(), "contributed commands = registered commands");
  for (const want of ["saveSelection", "search", "open", "pin", "unpin", "delete", "rename", "supersede", "showLinks", "doctor"]) {
    assert.ok(contributed.has(`memory-ext.${want}`), `command memory-ext.${want}`);
  }
  for (const cmd of c.commands) {
    assert.ok(cmd.title && cmd.category === "Memory", `${cmd.command} has a title in the Memory category`);
  }

  const views = Object.values(c.views).flat();
  assert.ok(views.some((v) => v.id === VIEW), `view ${VIEW}`);
  assert.ok(extensionJs.includes(`createTreeView("${VIEW}"`), "the view is created in extension.js");
  const menus = Object.values(c.menus).flat();
  for (const m of menus) {
    assert.ok(contributed.has(m.command), `menu entry ${m.command} is a contributed command`);
  }

  assert.ok(manifest.activationEvents.includes(`onView:${VIEW}`), "activation on the view");
  assert.ok(manifest.activationEvents.includes("onStartupFinished"), "activation at start-up (autoStartMCP)");

  assert.deepEqual(c.mcpServerDefinitionProviders.map((p) => p.id), [MCP_PROVIDER]);
  assert.ok(extensionJs.includes(`"${MCP_PROVIDER}"`), "the MCP provider id is the one registered");
}

function unzip(vsix, member) {
  return execFileSync("unzip", ["-p", vsix, member], { maxBuffer: 64 * 1024 * 1024 }).toString("utf8");
}

const vsix = process.argv[2];
if (vsix) {
  const listing = execFileSync("unzip", ["-Z1", vsix]).toString("utf8").split("\n");
  for (const member of ["extension/package.json", "extension/out/extension.js", "extension/out/mem.js", "extension.vsixmanifest"]) {
    assert.ok(listing.includes(member), `${member} is packed`);
  }
  assert.ok(!listing.some((m) => m.startsWith("extension/src/") || m.startsWith("extension/out/test/")), "no sources or tests packed");
  check(JSON.parse(unzip(vsix, "extension/package.json")), unzip(vsix, "extension/out/extension.js"));
  console.log(`manifest check: ${vsix} ok (${listing.filter(Boolean).length} files)`);
} else {
  check(
    JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")),
    fs.readFileSync(path.join(root, "out", "extension.js"), "utf8"),
  );
  console.log("manifest check: package.json ok");
}
