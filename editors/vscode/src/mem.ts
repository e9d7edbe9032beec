/**
 * The `mem` calls of the extension. `argv` builds each argument vector (global
 * options, the command, its options, then `--` and the positional values, so a
 * key starting with `-` is never read as an option); `MemClient` runs them with
 * a time limit and checks the JSON they print.
 */
import { MemError } from "./errors";
import {
  DoctorResult,
  FullRecord,
  MemoryRecord,
  SearchResult,
  TraverseResult,
  WriteResult,
  parseDoctor,
  parseGet,
  parseList,
  parseSearch,
  parseTraverse,
  parseWrite,
} from "./parse";
import { RunOptions, runJson } from "./runner";
import { SortBy } from "./settings";

/** Time limits (ms). `doctor` probes the embeddings endpoint and the REST port. */
export const TIMEOUT_MS = 15_000;
export const DOCTOR_TIMEOUT_MS = 30_000;
/** Memories loaded into the tree view. */
export const LIST_LIMIT = 1000;
/** Every scope, for `list` and `search`. */
export const ALL_SCOPES = "*";

export interface Call {
  args: string[];
  stdin?: string;
}

function call(scope: string, command: string, options: string[], positionals: string[], stdin?: string): Call {
  const args = ["--format", "json", "--scope", scope, command, ...options];
  if (positionals.length > 0) {
    args.push("--", ...positionals);
  }
  return stdin === undefined ? { args } : { args, stdin };
}

function nonEmpty(what: string, value: string): string {
  if (value.trim().length === 0) {
    throw new MemError("usage", `${what} must not be empty`);
  }
  return value;
}

/**
 * A value for `mem`'s stdin: `mem` drops one trailing newline (what `echo` adds),
 * so one is added and the value arrives exactly as given.
 */
function stdinValue(what: string, value: string): string {
  return `${nonEmpty(what, value)}\n`;
}

/** Argument vectors of every call; values go to stdin (`-`), so their size and content never matter. */
export const argv = {
  list: (scope: string, sortBy: SortBy, limit = LIST_LIMIT): Call => call(scope, "list", ["--sort", sortBy], [String(limit)]),
  get: (scope: string, key: string): Call => call(scope, "get", [], [nonEmpty("the key", key)]),
  search: (scope: string, query: string, limit = 50): Call =>
    call(scope, "search", [], [nonEmpty("the query", query), String(limit)]),
  save: (scope: string, key: string, value: string, tags: string[] = [], origin = ""): Call =>
    call(
      scope,
      "save",
      origin ? ["--origin", origin] : [],
      [nonEmpty("the key", key), "-", ...(tags.length > 0 ? [tags.join(",")] : [])],
      stdinValue("the value", value),
    ),
  delete: (scope: string, key: string): Call => call(scope, "delete", [], [key]),
  rename: (scope: string, oldKey: string, newKey: string): Call =>
    call(scope, "rename", [], [oldKey, nonEmpty("the new key", newKey)]),
  supersede: (scope: string, oldKey: string, newKey: string, value: string, tags: string[] = []): Call =>
    call(
      scope,
      "supersede",
      [],
      [oldKey, nonEmpty("the new key", newKey), "-", ...(tags.length > 0 ? [tags.join(",")] : [])],
      stdinValue("the new value", value),
    ),
  pin: (scope: string, key: string, pinned: boolean): Call => call(scope, pinned ? "pin" : "unpin", [], [key]),
  traverse: (scope: string, key: string, depth = 2): Call =>
    call(scope, "traverse", ["--direction", "both", "--include-archived"], [key, String(depth)]),
  doctor: (): Call => ({ args: ["--format", "json", "doctor"] }),
};

/** Tags typed as `a, b,c` -> `["a", "b", "c"]`. */
export function splitTags(text: string): string[] {
  return text
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

export class MemClient {
  constructor(
    private readonly binary: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly cwd?: string,
  ) {}

  private run(c: Call, extra: Partial<RunOptions> = {}): Promise<unknown> {
    const options: RunOptions = { env: this.env, timeoutMs: TIMEOUT_MS, cwd: this.cwd, ...extra };
    if (c.stdin !== undefined) {
      options.stdin = c.stdin;
    }
    return runJson(this.binary, c.args, options);
  }

  async list(scope: string, sortBy: SortBy, limit = LIST_LIMIT): Promise<MemoryRecord[]> {
    return parseList(await this.run(argv.list(scope, sortBy, limit)));
  }

  async get(scope: string, key: string): Promise<FullRecord> {
    return parseGet(await this.run(argv.get(scope, key)));
  }

  async search(scope: string, query: string, limit = 50): Promise<SearchResult> {
    return parseSearch(await this.run(argv.search(scope, query, limit)));
  }

  async save(scope: string, key: string, value: string, tags: string[] = [], origin = ""): Promise<WriteResult> {
    return parseWrite(await this.run(argv.save(scope, key, value, tags, origin)), "save");
  }

  async delete(scope: string, key: string): Promise<WriteResult> {
    return parseWrite(await this.run(argv.delete(scope, key)), "delete");
  }

  async rename(scope: string, oldKey: string, newKey: string): Promise<WriteResult> {
    return parseWrite(await this.run(argv.rename(scope, oldKey, newKey)), "rename", "to");
  }

  async supersede(scope: string, oldKey: string, newKey: string, value: string, tags: string[] = []): Promise<WriteResult> {
    return parseWrite(await this.run(argv.supersede(scope, oldKey, newKey, value, tags)), "supersede", "by");
  }

  async setPinned(scope: string, key: string, pinned: boolean): Promise<WriteResult> {
    return parseWrite(await this.run(argv.pin(scope, key, pinned)), pinned ? "pin" : "unpin");
  }

  async traverse(scope: string, key: string, depth = 2): Promise<TraverseResult> {
    return parseTraverse(await this.run(argv.traverse(scope, key, depth)));
  }

  /** `mem doctor` exits 1 when a check fails; its checklist is still the result. */
  async doctor(): Promise<DoctorResult> {
    return parseDoctor(await this.run(argv.doctor(), { timeoutMs: DOCTOR_TIMEOUT_MS, acceptExit: [1] }));
  }
}
