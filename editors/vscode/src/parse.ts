/**
 * Checks of `mem`'s JSON output. Every result the extension uses goes through one of
 * these, so output of another shape is a clear "bad output" error, not undefined
 * fields in the UI.
 */
import { MemError } from "./errors";

export interface MemoryRecord {
  scope: string;
  key: string;
  value: string;
  tags: string[];
  pinned: boolean;
  archived: boolean;
  origin: string | null;
  verifiedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Link {
  rel: string;
  scope: string;
  key: string;
}

export interface FullRecord extends MemoryRecord {
  links: { out: Link[]; in: Link[] };
}

export interface SearchHit extends MemoryRecord {
  score: number;
  snippet: string;
}

export interface SearchResult {
  query: string;
  mode: "text" | "hybrid";
  /** "all": every word matched; "any": no memory had every word, these have some. */
  match: "all" | "any";
  results: SearchHit[];
}

export interface TraverseNode {
  uri: string;
  scope: string;
  key: string;
  pinned: boolean;
  archived: boolean;
  depth: number;
}

export interface TraverseResult {
  root: string;
  depth: number;
  nodes: TraverseNode[];
  edges: { from: string; to: string; rel: string }[];
}

export interface DoctorCheck {
  name: string;
  status: "pass" | "fail" | "warn";
  detail: string;
}

export interface DoctorResult {
  ok: boolean;
  checks: DoctorCheck[];
}

export interface WriteResult {
  scope: string;
  key: string;
  /** What `mem` reported beyond scope and key (created, superseded, changed, ...). */
  fields: Record<string, unknown>;
}

type Obj = Record<string, unknown>;

function bad(what: string, why: string): MemError {
  return new MemError("bad-output", `unexpected output from mem ${what}: ${why}`);
}

function obj(v: unknown, what: string): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw bad(what, "not a JSON object");
  }
  return v as Obj;
}

function str(o: Obj, name: string, what: string): string {
  const v = o[name];
  if (typeof v !== "string") {
    throw bad(what, `field "${name}" is not a string`);
  }
  return v;
}

function optStr(o: Obj, name: string, what: string): string | null {
  const v = o[name];
  if (v === null || v === undefined) {
    return null;
  }
  if (typeof v !== "string") {
    throw bad(what, `field "${name}" is not a string`);
  }
  return v;
}

function bool(o: Obj, name: string, what: string): boolean {
  const v = o[name];
  if (typeof v !== "boolean") {
    throw bad(what, `field "${name}" is not true/false`);
  }
  return v;
}

function num(o: Obj, name: string, what: string): number {
  const v = o[name];
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw bad(what, `field "${name}" is not a number`);
  }
  return v;
}

function arr(o: Obj, name: string, what: string): unknown[] {
  const v = o[name];
  if (!Array.isArray(v)) {
    throw bad(what, `field "${name}" is not a list`);
  }
  return v;
}

export function parseRecord(v: unknown, what: string): MemoryRecord {
  const o = obj(v, what);
  const tags = arr(o, "tags", what);
  if (!tags.every((t) => typeof t === "string")) {
    throw bad(what, 'field "tags" is not a list of strings');
  }
  return {
    scope: str(o, "scope", what),
    key: str(o, "key", what),
    value: str(o, "value", what),
    tags: tags as string[],
    pinned: bool(o, "pinned", what),
    archived: bool(o, "archived", what),
    origin: optStr(o, "origin", what),
    verifiedAt: optStr(o, "verified_at", what),
    createdAt: str(o, "created_at", what),
    updatedAt: str(o, "updated_at", what),
  };
}

/** `mem list` / `mem pinned`: `{scope, count, memories: [...]}`. */
export function parseList(v: unknown): MemoryRecord[] {
  return arr(obj(v, "list"), "memories", "list").map((r) => parseRecord(r, "list"));
}

function parseLinks(v: unknown, what: string): Link[] {
  if (!Array.isArray(v)) {
    throw bad(what, "links are not a list");
  }
  return v.map((l) => {
    const o = obj(l, what);
    return { rel: str(o, "rel", what), scope: str(o, "scope", what), key: str(o, "key", what) };
  });
}

/** `mem get`: the record with `links: {out, in}`. */
export function parseGet(v: unknown): FullRecord {
  const record = parseRecord(v, "get");
  const links = obj(obj(v, "get").links, "get");
  return { ...record, links: { out: parseLinks(links.out, "get"), in: parseLinks(links.in, "get") } };
}

/** `mem search`: `{query, mode, match, count, results}`. */
export function parseSearch(v: unknown): SearchResult {
  const o = obj(v, "search");
  const mode = str(o, "mode", "search");
  if (mode !== "text" && mode !== "hybrid") {
    throw bad("search", `unknown mode "${mode}"`);
  }
  const match = o.match === undefined ? "all" : str(o, "match", "search");
  if (match !== "all" && match !== "any") {
    throw bad("search", `unknown match "${match}"`);
  }
  const results = arr(o, "results", "search").map((r) => {
    const record = parseRecord(r, "search");
    const ro = obj(r, "search");
    return { ...record, score: num(ro, "score", "search"), snippet: optStr(ro, "snippet", "search") ?? record.value };
  });
  return { query: str(o, "query", "search"), mode, match, results };
}

/** `mem traverse`: `{root, depth, nodes, edges}`. */
export function parseTraverse(v: unknown): TraverseResult {
  const o = obj(v, "traverse");
  const nodes = arr(o, "nodes", "traverse").map((n) => {
    const no = obj(n, "traverse");
    return {
      uri: str(no, "uri", "traverse"),
      scope: str(no, "scope", "traverse"),
      key: str(no, "key", "traverse"),
      pinned: bool(no, "pinned", "traverse"),
      archived: bool(no, "archived", "traverse"),
      depth: num(no, "depth", "traverse"),
    };
  });
  const edges = arr(o, "edges", "traverse").map((e) => {
    const eo = obj(e, "traverse");
    return { from: str(eo, "from", "traverse"), to: str(eo, "to", "traverse"), rel: str(eo, "rel", "traverse") };
  });
  return { root: str(o, "root", "traverse"), depth: num(o, "depth", "traverse"), nodes, edges };
}

/** `mem doctor`: `{ok, failed, warnings, checks: [{name, status, detail}]}`. */
export function parseDoctor(v: unknown): DoctorResult {
  const o = obj(v, "doctor");
  const checks = arr(o, "checks", "doctor").map((c) => {
    const co = obj(c, "doctor");
    const status = str(co, "status", "doctor");
    if (status !== "pass" && status !== "fail" && status !== "warn") {
      throw bad("doctor", `unknown status "${status}"`);
    }
    return { name: str(co, "name", "doctor"), status, detail: str(co, "detail", "doctor") } as DoctorCheck;
  });
  return { ok: bool(o, "ok", "doctor"), checks };
}

/**
 * Results of save, delete, pin/unpin (`key`), rename (`to`) and supersede (`by`):
 * an object naming the scope and the memory the change left.
 */
export function parseWrite(v: unknown, what: string, keyField = "key"): WriteResult {
  const o = obj(v, what);
  return { scope: str(o, "scope", what), key: str(o, keyField, what), fields: o };
}
