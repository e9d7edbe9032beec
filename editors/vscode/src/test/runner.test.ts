/** Running a process: missing binaries, time limits, error exits and output that is not JSON. */
import * as assert from "node:assert/strict";
import { test } from "node:test";

import { MemError, describe } from "../errors";
import { errorLine, runJson, runProcess } from "../runner";

const env = process.env;
const node = process.execPath;

test("a binary that does not exist is a missing-binary error, not a crash", async () => {
  await assert.rejects(runJson("/nonexistent/mem", ["list"], { env, timeoutMs: 5000 }), (e: unknown) => {
    return e instanceof MemError && e.kind === "missing-binary" && e.message.includes("memory-ext.binaryPath");
  });
});

test("a call past its time limit is stopped and reported", async () => {
  const started = Date.now();
  await assert.rejects(runJson(node, ["-e", "setTimeout(() => {}, 20000)"], { env, timeoutMs: 300 }), (e: unknown) => {
    return e instanceof MemError && e.kind === "timeout" && /within 0.3 s/.test(e.message);
  });
  assert.ok(Date.now() - started < 15000);
});

test("output that is not JSON is a bad-output error that shows its start", async () => {
  await assert.rejects(runJson(node, ["-e", "console.log('Traceback: boom')"], { env, timeoutMs: 5000 }), (e: unknown) => {
    return e instanceof MemError && e.kind === "bad-output" && e.message.includes("Traceback: boom");
  });
  await assert.rejects(runJson(node, ["-e", ""], { env, timeoutMs: 5000 }), /output starts with: \(nothing\)/);
});

test("a non-zero exit is an error carrying mem's error line; accepted exits return", async () => {
  const script = "process.stderr.write('mem: error: no memory \\'x\\'\\n'); console.log('{}'); process.exit(5)";
  await assert.rejects(runJson(node, ["-e", script], { env, timeoutMs: 5000 }), (e: unknown) => {
    return e instanceof MemError && e.kind === "exit" && e.exitCode === 5 && e.message.endsWith("failed (exit 5): no memory 'x'");
  });
  const ok = await runJson(node, ["-e", script], { env, timeoutMs: 5000, acceptExit: [5] });
  assert.deepEqual(ok, {});
});

test("arguments are passed as a vector: shell syntax stays text", async () => {
  const tricky = ["a b", "'q'", '"d"', "$(echo hi)", "`x`", "; ls", "*"];
  const result = await runProcess(node, ["-e", "console.log(JSON.stringify(process.argv.slice(1)))", ...tricky], {
    env,
    timeoutMs: 5000,
    stdin: "ignored",
  });
  assert.deepEqual(JSON.parse(result.stdout), tricky);
});

test("stdin reaches the process", async () => {
  const read = "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>console.log(JSON.stringify(d)))";
  assert.equal(await runJson(node, ["-e", read], { env, timeoutMs: 5000, stdin: "x\ny 'z'" }), "x\ny 'z'");
});

test("errorLine and describe", () => {
  assert.equal(errorLine("warning\nmem: error: bad thing\n"), "bad thing");
  assert.equal(errorLine("Traceback\nValueError: x\n"), "ValueError: x");
  assert.equal(describe(new MemError("usage", "m")), "m");
  assert.equal(describe(new Error("e")), "unexpected error: e");
  assert.equal(describe("s"), "unexpected error: s");
});
