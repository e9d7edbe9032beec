/** Text shown for a memory, its links and the doctor checklist (plain strings for the editor layer). */
import { DoctorResult, FullRecord, SearchHit, SearchResult, TraverseResult } from "./parse";

export function renderRecord(r: FullRecord): string {
  const head = [
    `# ${r.scope}/${r.key}${r.pinned ? "  (pinned)" : ""}${r.archived ? "  (archived)" : ""}`,
    "",
    `tags: ${r.tags.length > 0 ? r.tags.join(", ") : "(none)"}`,
    `created: ${r.createdAt}   updated: ${r.updatedAt}   verified: ${r.verifiedAt ?? "never"}`,
  ];
  if (r.origin) {
    head.push(`origin: ${r.origin}`);
  }
  for (const l of r.links.out) {
    head.push(`-> ${l.rel} ${l.scope}/${l.key}`);
  }
  for (const l of r.links.in) {
    head.push(`<- ${l.rel} ${l.scope}/${l.key}`);
  }
  return `${head.join("\n")}\n\n---\n\n${r.value}\n`;
}

/** The graph from a memory: nodes by depth, then the edges. */
export function renderTraverse(t: TraverseResult): string {
  const lines = [`Links of ${t.root} (depth ${t.depth})`, "", "Memories:"];
  for (const n of t.nodes) {
    const flags = `${n.pinned ? " (pinned)" : ""}${n.archived ? " (archived)" : ""}`;
    lines.push(`${"  ".repeat(n.depth + 1)}${n.scope}/${n.key}${flags}`);
  }
  lines.push("", "Links:");
  if (t.edges.length === 0) {
    lines.push("  (none)");
  }
  for (const e of t.edges) {
    lines.push(`  ${e.from} -${e.rel}-> ${e.to}`);
  }
  return `${lines.join("\n")}\n`;
}

const MARK = { pass: "✔", warn: "⚠", fail: "✘" } as const;

export function renderDoctor(d: DoctorResult): string {
  const lines = d.checks.map((c) => `${MARK[c.status]} ${c.status.toUpperCase().padEnd(4)} ${c.name}: ${c.detail}`);
  const failed = d.checks.filter((c) => c.status === "fail").length;
  const warned = d.checks.filter((c) => c.status === "warn").length;
  lines.push("", d.ok ? `mem doctor: ok (${warned} warning(s))` : `mem doctor: ${failed} check(s) failed`);
  return `${lines.join("\n")}\n`;
}

/** A search hit for a pick list: label, description and detail. */
export function hitItem(h: SearchHit): { label: string; description: string; detail: string } {
  return {
    label: `${h.pinned ? "$(pinned) " : ""}${h.key}`,
    description: `${h.scope}${h.tags.length > 0 ? ` · ${h.tags.join(", ")}` : ""} · ${h.score.toFixed(3)}`,
    detail: h.snippet.replace(/<<|>>/g, "").replace(/\s+/g, " "),
  };
}

/** The title of a result list: how `mem` searched, and whether every word had to match. */
export function searchTitle(s: SearchResult): string {
  const mode = s.mode === "hybrid" ? "hybrid (text + vectors)" : "full-text";
  const n = s.results.length;
  const match = s.match === "any" ? "; no memory has every word, these match some of them" : "";
  return `${n} result${n === 1 ? "" : "s"} for "${s.query}", ${mode}${match}`;
}
