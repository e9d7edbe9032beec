/** Argument vectors, and every call the extension makes, against the real `mem` on a temporary database. */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import { test } from "node:test";

import { MemError } from "../errors";
import { MemClient, argv, splitTags } from "../mem";
import { freshClient, memBin } from "./helpers";

test("argument vectors: global options, the command, its options, then -- and the values", () => {
  assert.deepEqual(argv.list("*", "key").args, ["--format", "json", "--scope", "*", "list", "--sort", "key", "--", "1000"]);
  assert.deepEqual(argv.get("user", "-k").args, ["--format", "json", "--scope", "user", "get", "--", "-k"]);
  assert.deepEqual(argv.search("repo:x", "a b", 5).args, ["--format", "json", "--scope", "repo:x", "search", "--", "a b", "5"]);
  const save = argv.save("user", "k", "v\n", ["a", "b"], "src/x.ts:3");
  assert.deepEqual(save.args, ["--format", "json", "--scope", "user", "save", "--origin", "src/x.ts:3", "--", "k", "-", "a,b"]);
  assert.equal(save.stdin, "v\n\n"); // mem drops one trailing newline: the value arrives as given
  assert.deepEqual(argv.save("user", "k", "v").args.slice(-3), ["--", "k", "-"]);
  assert.deepEqual(argv.supersede("user", "o", "n", "v", ["t"]).args.slice(4), ["supersede", "--", "o", "n", "-", "t"]);
  assert.deepEqual(argv.pin("user", "k", false).args.slice(4), ["unpin", "--", "k"]);
  assert.deepEqual(argv.traverse("user", "k").args.slice(4), ["traverse", "--direction", "both", "--include-archived", "--", "k", "2"]);
  assert.deepEqual(argv.doctor().args, ["--format", "json", "doctor"]);
  assert.deepEqual(splitTags(" a, b ,,c "), ["a", "b", "c"]);
  assert.throws(() => argv.save("user", " ", "v"), (e: unknown) => e instanceof MemError && e.kind === "usage");
  assert.throws(() => argv.search("user", ""), /query must not be empty/);
});

test("save, get, list, pin, rename, supersede, traverse and delete with keys full of spaces, quotes and dashes", async () => {
  const { mem } = freshClient();
  const key = `-it's a "quoted" key; $(rm -rf /) \`x\``;
  const value = "line one\nline two with 'single' and \"double\" quotes\n-\n";
  const saved = await mem.save("user", key, value, ["shell", "quotes"], "notes.md:7");
  assert.equal(saved.key, key);
  assert.equal(saved.fields.created, true);
  const got = await mem.get("user", key);
  assert.equal(got.value, value);
  assert.deepEqual(got.tags, ["shell", "quotes"]);
  assert.equal(got.origin, "notes.md:7");
  await mem.save("repo:app", "deploy", "make release");
  const all = await mem.list("*", "key");
  assert.deepEqual(all.map((r) => `${r.scope}/${r.key}`).sort(), [`repo:app/deploy`, `user/${key}`].sort());
  assert.equal((await mem.setPinned("user", key, true)).fields.changed, true);
  assert.equal((await mem.get("user", key)).pinned, true);
  const renamed = await mem.rename("user", key, "plain key");
  assert.equal(renamed.key, "plain key");
  const sup = await mem.supersede("user", "plain key", "newer key", "the new text", ["t"]);
  assert.equal(sup.key, "newer key");
  const listed = await mem.list("user", "updated");
  assert.deepEqual(listed.map((r) => r.key), ["newer key"]); // the superseded one is archived, hidden
  const graph = await mem.traverse("user", "newer key");
  assert.deepEqual(graph.edges.map((e) => e.rel), ["supersedes"]);
  assert.deepEqual(graph.nodes.map((n) => [n.key, n.archived]), [["newer key", false], ["plain key", true]]);
  const deleted = await mem.delete("user", "newer key");
  assert.equal(deleted.fields.deleted, true);
});

test("search is mem search: its mode, and whether every word matched", async () => {
  const { mem } = freshClient();
  await mem.save("user", "api-version", "Public API responses carry X-API-Version; bump it only on breaking changes");
  await mem.save("user", "coffee", "The coffee machine needs descaling");
  const all = await mem.search("user", "breaking API");
  assert.equal(all.mode, "text");
  assert.equal(all.match, "all");
  assert.deepEqual(all.results.map((r) => r.key), ["api-version"]);
  assert.match(all.results[0].snippet, /<<breaking>>|<<API>>/);
  const loose = await mem.search("user", "breaking changes API version header");
  assert.equal(loose.match, "any");
  assert.deepEqual(loose.results.map((r) => r.key), ["api-version"]);
  assert.deepEqual((await mem.search("user", "zzzz")).results, []);
});

test("mem errors become MemErrors with mem's own message", async () => {
  const { mem } = freshClient();
  await assert.rejects(mem.get("user", "missing"), (e: unknown) => {
    return e instanceof MemError && e.kind === "not-found" && e.exitCode === 3 && e.message.includes("no memory 'missing'");
  });
  await mem.save("user", "a", "x");
  await mem.save("user", "b", "y");
  await assert.rejects(mem.rename("user", "a", "b"), (e: unknown) => e instanceof MemError && e.kind === "exit" && e.exitCode === 4);
  await assert.rejects(mem.list("user", "updated", -1), (e: unknown) => e instanceof MemError && e.exitCode === 2);
});

test("doctor returns its checklist, also when a check fails (exit 1)", async () => {
  const { mem, dir, env } = freshClient();
  const ok = await mem.doctor();
  assert.ok(ok.checks.some((c) => c.name === "version" && c.status === "pass"));
  fs.mkdirSync(`${dir}/notadb`, { recursive: true });
  fs.writeFileSync(`${dir}/notadb/m.db`, "this is not a database file, just text ".repeat(200));
  const broken = new MemClient(memBin(), { ...env, MEM_DB: `${dir}/notadb/m.db` }, dir);
  const result = await broken.doctor();
  assert.equal(result.ok, false);
  assert.ok(result.checks.some((c) => c.status === "fail"));
});
