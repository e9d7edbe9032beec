import * as assert from "node:assert/strict";
import { test } from "node:test";

import { MemError } from "../errors";
import { DEFAULTS, Settings, mcpLaunch, memEnv, readSettings, repoScope, resolveScope } from "../settings";

const manifest = require("../../package.json") as {
  contributes: { configuration: { properties: Record<string, { default: unknown; enum?: string[] }> } };
};

test("the defaults are the manifest's defaults", () => {
  const props = manifest.contributes.configuration.properties;
  for (const [name, value] of Object.entries(DEFAULTS)) {
    assert.deepEqual(props[`memory-ext.${name}`].default, value, name);
  }
  assert.deepEqual(readSettings(() => undefined), DEFAULTS);
});

test("values of the wrong type or outside the enum fall back to the default", () => {
  const given: Record<string, unknown> = {
    binaryPath: 3,
    dbPath: " /tmp/m.db ",
    defaultScope: "team",
    groupByScope: "yes",
    sortBy: "created",
    autoStartMCP: true,
  };
  const s = readSettings((name) => given[name]);
  assert.deepEqual(s, { ...DEFAULTS, dbPath: "/tmp/m.db", sortBy: "created", autoStartMCP: true });
});

test("dbPath sets MEM_DB (~ and relative paths made absolute); MEM_SCOPE never leaks in", () => {
  const base = { PATH: "/usr/bin", MEM_SCOPE: "team", MEM_DB: "/old.db" };
  const s: Settings = { ...DEFAULTS };
  assert.deepEqual(memEnv(s, base, "/home/u", "/ws/app"), { PATH: "/usr/bin", MEM_DB: "/old.db" });
  assert.equal(memEnv({ ...s, dbPath: "~/mem/x.db" }, base, "/home/u", "/ws/app").MEM_DB, "/home/u/mem/x.db");
  assert.equal(memEnv({ ...s, dbPath: "data/x.db" }, base, "/home/u", "/ws/app").MEM_DB, "/ws/app/data/x.db");
  assert.equal(memEnv({ ...s, dbPath: "/abs/x.db" }, base, "/home/u", undefined).MEM_DB, "/abs/x.db");
  assert.equal(base.MEM_SCOPE, "team"); // the editor's own environment is not modified
});

test("defaultScope: user, repo:<active folder name>, or the answer to ask", async () => {
  const never = async (): Promise<string | undefined> => assert.fail("must not ask");
  assert.equal(await resolveScope("user", "/ws/app", never), "user");
  assert.equal(await resolveScope("repo:current", "/ws/my app/", never), "repo:my app");
  assert.throws(() => repoScope(undefined), (e: unknown) => e instanceof MemError && e.kind === "usage");
  let offered: string[] = [];
  const answer = await resolveScope("ask", "/ws/app", async (choices) => {
    offered = choices;
    return " team ";
  });
  assert.deepEqual(offered, ["user", "repo:app"]);
  assert.equal(answer, "team");
  assert.equal(await resolveScope("ask", undefined, async () => undefined), undefined);
  assert.equal(await resolveScope("ask", undefined, async () => "  "), undefined);
});

test("autoStartMCP launches `<mem> mcp`, passing MEM_DB only when dbPath is set", () => {
  assert.deepEqual(mcpLaunch("/bin/mem", DEFAULTS, "/home/u", "/ws"), { command: "/bin/mem", args: ["mcp"], env: {} });
  assert.deepEqual(mcpLaunch("/bin/mem", { ...DEFAULTS, dbPath: "~/m.db" }, "/home/u", "/ws").env, { MEM_DB: "/home/u/m.db" });
});
