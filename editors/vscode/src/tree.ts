/**
 * The memories view as plain data: archived memories hidden, pinned ones first,
 * then the `memory-ext.sortBy` order, optionally grouped under their scope.
 */
import { MemoryRecord } from "./parse";
import { SortBy } from "./settings";

export interface ScopeNode {
  kind: "scope";
  scope: string;
  children: MemoryNode[];
}

export interface MemoryNode {
  kind: "memory";
  record: MemoryRecord;
}

export type TreeNode = ScopeNode | MemoryNode;

/** Code-point order, the order `mem` (SQLite's BINARY collation) uses for keys and scopes. */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Time stamps are ISO-8601 UTC strings of one width, so newest first is a reversed string order. */
function compareBy(sortBy: SortBy): (a: MemoryRecord, b: MemoryRecord) => number {
  switch (sortBy) {
    case "updated":
      return (a, b) => cmp(b.updatedAt, a.updatedAt) || cmp(a.scope, b.scope) || cmp(a.key, b.key);
    case "created":
      return (a, b) => cmp(b.createdAt, a.createdAt) || cmp(a.scope, b.scope) || cmp(a.key, b.key);
    case "key":
      return (a, b) => cmp(a.key, b.key) || cmp(a.scope, b.scope);
    case "scope":
      return (a, b) => cmp(a.scope, b.scope) || cmp(a.key, b.key);
  }
}

/** Active memories in view order: pinned first, then `sortBy`. */
export function sortMemories(records: readonly MemoryRecord[], sortBy: SortBy): MemoryRecord[] {
  const order = compareBy(sortBy);
  return records.filter((r) => !r.archived).sort((a, b) => Number(b.pinned) - Number(a.pinned) || order(a, b));
}

/** The top level of the view: memories, or one node per scope (scopes by name) holding them. */
export function buildTree(records: readonly MemoryRecord[], sortBy: SortBy, groupByScope: boolean): TreeNode[] {
  const sorted = sortMemories(records, sortBy);
  if (!groupByScope) {
    return sorted.map((record) => ({ kind: "memory", record }));
  }
  const groups = new Map<string, MemoryNode[]>();
  for (const record of sorted) {
    const list = groups.get(record.scope) ?? [];
    list.push({ kind: "memory", record });
    groups.set(record.scope, list);
  }
  return [...groups.keys()].sort(cmp).map((scope) => ({ kind: "scope", scope, children: groups.get(scope) ?? [] }));
}

/** The one-line description shown beside a memory's key. */
export function describeMemory(record: MemoryRecord, groupByScope: boolean): string {
  const parts: string[] = [];
  if (!groupByScope) {
    parts.push(record.scope);
  }
  if (record.tags.length > 0) {
    parts.push(record.tags.join(", "));
  }
  const value = record.value.replace(/\s+/g, " ").trim();
  parts.push(value.length > 80 ? `${value.slice(0, 79)}…` : value);
  return parts.join(" · ");
}
