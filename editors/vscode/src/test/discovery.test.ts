import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { expandHome, findBinary, searchFolders } from "../discovery";
import { MemError } from "../errors";
import { tempDir } from "./helpers";

function executable(file: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "#!/bin/sh\nexit 0\n");
  fs.chmodSync(file, mode);
  return file;
}

function layout() {
  const root = tempDir("memext-disc-");
  const home = path.join(root, "home");
  const onPath = path.join(root, "bin");
  const ws = path.join(root, "project");
  fs.mkdirSync(onPath, { recursive: true });
  fs.mkdirSync(path.join(home, ".local", "bin"), { recursive: true });
  fs.mkdirSync(path.join(ws, ".venv", "bin"), { recursive: true });
  return { root, home, onPath, ws, ctx: { pathEnv: `/nonexistent:${onPath}`, home, workspaceFolders: [ws], platform: "linux" as const } };
}

test("search order is PATH, then ~/.local/bin, then each workspace's .venv/bin", () => {
  const { home, onPath, ws, ctx } = layout();
  assert.deepEqual(searchFolders(ctx), ["/nonexistent", onPath, path.join(home, ".local", "bin"), path.join(ws, ".venv", "bin")]);
});

test("empty binaryPath finds the first mem in that order", () => {
  const { home, onPath, ws, ctx } = layout();
  const venv = executable(path.join(ws, ".venv", "bin", "mem"));
  assert.equal(findBinary("", ctx), venv);
  const local = executable(path.join(home, ".local", "bin", "mem"));
  assert.equal(findBinary("", ctx), local);
  const first = executable(path.join(onPath, "mem"));
  assert.equal(findBinary("  ", ctx), first);
});

test("a mem file that is not executable, or a folder named mem, is skipped", () => {
  const { home, onPath, ws, ctx } = layout();
  executable(path.join(onPath, "mem"), 0o644);
  fs.mkdirSync(path.join(home, ".local", "bin", "mem"));
  const venv = executable(path.join(ws, ".venv", "bin", "mem"));
  assert.equal(findBinary("", ctx), venv);
});

test("nothing found: a MemError that names the places searched", () => {
  const { ctx, ws } = layout();
  assert.throws(
    () => findBinary("", ctx),
    (err: unknown) =>
      err instanceof MemError &&
      err.kind === "missing-binary" &&
      err.message.includes("PATH") &&
      err.message.includes("~/.local/bin") &&
      err.message.includes(path.join(ws, ".venv", "bin")) &&
      err.message.includes("memory-ext.binaryPath"),
  );
});

test("a configured binaryPath wins, with ~ expanded, and must be an executable file", () => {
  const { home, onPath, ctx } = layout();
  executable(path.join(onPath, "mem"));
  const custom = executable(path.join(home, "tools", "mem-dev"));
  assert.equal(findBinary("~/tools/mem-dev", ctx), custom);
  assert.equal(findBinary(custom, ctx), custom);
  assert.throws(() => findBinary("~/tools/missing", ctx), /memory-ext.binaryPath is .*tools\/missing, which is not an executable file/);
  assert.equal(expandHome("~", home), home);
  assert.equal(expandHome("/abs/~x", home), "/abs/~x");
});
