/** Output of another shape is a clear error; real output parses. */
import * as assert from "node:assert/strict";
import { test } from "node:test";

import { MemError } from "../errors";
import { parseDoctor, parseGet, parseList, parseSearch, parseTraverse, parseWrite } from "../parse";
import { renderDoctor, renderRecord, renderTraverse, searchTitle } from "../render";
import { freshClient } from "./helpers";

const GOOD = {
  scope: "user",
  key: "k",
  value: "v",
  tags: ["a"],
  pinned: false,
  archived: false,
  origin: null,
  verified_at: null,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
};

function badOutput(fn: () => unknown, field: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof MemError && e.kind === "bad-output" && field.test(e.message));
}

test("records of the wrong shape are rejected with the field named", () => {
  assert.equal(parseList({ memories: [GOOD] })[0].key, "k");
  badOutput(() => parseList([]), /list: not a JSON object/);
  badOutput(() => parseList({}), /"memories" is not a list/);
  badOutput(() => parseList({ memories: [{ ...GOOD, key: 3 }] }), /"key" is not a string/);
  badOutput(() => parseList({ memories: [{ ...GOOD, tags: [1] }] }), /"tags" is not a list of strings/);
  badOutput(() => parseList({ memories: [{ ...GOOD, pinned: "no" }] }), /"pinned" is not true\/false/);
  badOutput(() => parseGet(GOOD), /get: not a JSON object/);
  badOutput(() => parseSearch({ query: "q", mode: "magic", results: [] }), /unknown mode "magic"/);
  badOutput(() => parseSearch({ query: "q", mode: "text", match: "some", results: [] }), /unknown match/);
  badOutput(() => parseSearch({ query: "q", mode: "text", results: [GOOD] }), /"score" is not a number/);
  badOutput(() => parseTraverse({ root: "r", depth: 1, nodes: [], edges: [{ from: "a" }] }), /"to" is not a string/);
  badOutput(() => parseDoctor({ ok: true, checks: [{ name: "x", status: "maybe", detail: "" }] }), /unknown status/);
  badOutput(() => parseWrite({ scope: "user", from: "a" }, "rename", "to"), /rename: field "to"/);
  badOutput(() => parseWrite(null, "save"), /save: not a JSON object/);
});

test("an older mem without `match` in search output reads as every-word matching", () => {
  assert.equal(parseSearch({ query: "q", mode: "text", results: [] }).match, "all");
});

test("real get, traverse, search and doctor output parses and renders", async () => {
  const { mem } = freshClient();
  await mem.save("user", "target", "the target");
  await mem.save("user", "source", "needs the target", ["ops"]);
  const got = await mem.get("user", "source");
  assert.deepEqual(got.links, { out: [], in: [] });
  assert.match(renderRecord(got), /^# user\/source\n\ntags: ops\n.*\n\n---\n\nneeds the target\n$/s);
  const graph = await mem.traverse("user", "source", 1);
  assert.match(renderTraverse(graph), /Links:\n {2}\(none\)/);
  const found = await mem.search("user", "target");
  assert.match(searchTitle(found), /^2 results for "target", full-text$/);
  const doctor = await mem.doctor();
  assert.match(renderDoctor(doctor), /^✔ PASS version: mem /);
});
