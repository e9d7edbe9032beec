/** The view's order and grouping, on records made by the real `mem`. */
import * as assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryRecord } from "../parse";
import { ScopeNode, buildTree, describeMemory, sortMemories } from "../tree";
import { freshClient } from "./helpers";

function rec(scope: string, key: string, created: string, updated: string, pinned = false, archived = false): MemoryRecord {
  return {
    scope,
    key,
    value: `value of ${key}`,
    tags: [],
    pinned,
    archived,
    origin: null,
    verifiedAt: null,
    createdAt: `2026-01-${created}T00:00:00.000Z`,
    updatedAt: `2026-01-${updated}T00:00:00.000Z`,
  };
}

const RECORDS = [
  rec("user", "b", "01", "05"),
  rec("repo:app", "a", "02", "03"),
  rec("user", "c", "03", "04", true),
  rec("repo:app", "d", "04", "01"),
  rec("team", "e", "05", "02", false, true),
  rec("team", "f", "06", "06", true),
];

const keys = (rs: MemoryRecord[]): string[] => rs.map((r) => r.key);

test("pinned first, then the sortBy order; archived hidden", () => {
  assert.deepEqual(keys(sortMemories(RECORDS, "updated")), ["f", "c", "b", "a", "d"]);
  assert.deepEqual(keys(sortMemories(RECORDS, "created")), ["f", "c", "d", "a", "b"]);
  assert.deepEqual(keys(sortMemories(RECORDS, "key")), ["c", "f", "a", "b", "d"]);
  assert.deepEqual(keys(sortMemories(RECORDS, "scope")), ["f", "c", "a", "d", "b"]);
});

test("equal keys in two scopes order by scope; keys order by code point like mem", () => {
  const rs = [rec("user", "x", "01", "01"), rec("repo:a", "x", "01", "01"), rec("user", "B", "01", "01"), rec("user", "a", "01", "01")];
  assert.deepEqual(sortMemories(rs, "key").map((r) => `${r.scope}/${r.key}`), ["user/B", "user/a", "repo:a/x", "user/x"]);
});

test("groupByScope: one node per scope, by name, each in view order", () => {
  const tree = buildTree(RECORDS, "updated", true) as ScopeNode[];
  assert.deepEqual(tree.map((n) => [n.scope, n.children.map((c) => c.record.key)]), [
    ["repo:app", ["a", "d"]],
    ["team", ["f"]],
    ["user", ["c", "b"]],
  ]);
  const flat = buildTree(RECORDS, "key", false);
  assert.ok(flat.every((n) => n.kind === "memory"));
  assert.deepEqual(flat.map((n) => (n.kind === "memory" ? n.record.key : "")), ["c", "f", "a", "b", "d"]);
  assert.deepEqual(buildTree([], "updated", true), []);
});

test("descriptions show the scope only when not grouped, tags, and a short value", () => {
  const r = { ...rec("user", "k", "01", "01"), tags: ["ops", "db"], value: "x ".repeat(100) };
  assert.match(describeMemory(r, false), /^user · ops, db · x x/);
  assert.ok(describeMemory(r, true).startsWith("ops, db · "));
  assert.ok(describeMemory(r, true).endsWith("…"));
});

test("the view built from real mem output matches mem's own order", async () => {
  const { mem } = freshClient();
  for (const [scope, key] of [["user", "zeta"], ["repo:app", "alpha"], ["user", "mid"], ["repo:app", "omega"]]) {
    await mem.save(scope, key, `text of ${key} ${scope}`);
  }
  await mem.setPinned("user", "mid", true);
  await mem.supersede("repo:app", "omega", "omega2", "replaced text");
  for (const sortBy of ["updated", "created", "key", "scope"] as const) {
    const records = await mem.list("*", sortBy);
    assert.deepEqual(keys(sortMemories(records, sortBy)), keys(records), sortBy);
    assert.equal(records[0].key, "mid", sortBy);
    assert.ok(!keys(records).includes("omega"));
  }
  const grouped = buildTree(await mem.list("*", "key"), "key", true) as ScopeNode[];
  assert.deepEqual(grouped.map((g) => [g.scope, g.children.map((c) => c.record.key)]), [
    ["repo:app", ["alpha", "omega2"]],
    ["user", ["mid", "zeta"]],
  ]);
});
