/** Shared set-up of the unit tests: the real `mem` (MEM_BIN) on a temporary database. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { MemClient } from "../mem";

export function memBin(): string {
  const bin = process.env.MEM_BIN;
  if (!bin || !fs.existsSync(bin)) {
    throw new Error(`set MEM_BIN to the mem executable (got ${bin ?? "nothing"})`);
  }
  return bin;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The editor's environment without the user's MEM_* settings, and a fresh MEM_DB. */
export function memEnvFor(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("MEM_")) {
      env[k] = v;
    }
  }
  env.MEM_DB = path.join(dir, "store", "memories.db");
  env.HOME = path.join(dir, "home");
  return env;
}

export function freshClient(): { mem: MemClient; dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir("memext-");
  const env = memEnvFor(dir);
  return { mem: new MemClient(memBin(), env, dir), dir, env };
}
