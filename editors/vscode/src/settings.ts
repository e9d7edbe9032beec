/**
 * The six `memory-ext.*` settings (spec 001 §2 C), read from a plain object so the
 * rules are testable without the editor: defaults, enums, and what they become
 * (the MEM_DB environment variable, the `--scope` of a call, the list order).
 */
import * as path from "node:path";

import { expandHome } from "./discovery";
import { MemError } from "./errors";

export const SCOPE_CHOICES = ["user", "ask", "repo:current"] as const;
export const SORT_CHOICES = ["updated", "created", "key", "scope"] as const;
export type DefaultScope = (typeof SCOPE_CHOICES)[number];
export type SortBy = (typeof SORT_CHOICES)[number];

export interface Settings {
  binaryPath: string;
  dbPath: string;
  defaultScope: DefaultScope;
  groupByScope: boolean;
  sortBy: SortBy;
  autoStartMCP: boolean;
}

export const DEFAULTS: Settings = {
  binaryPath: "",
  dbPath: "",
  defaultScope: "user",
  groupByScope: false,
  sortBy: "updated",
  autoStartMCP: false,
};

function oneOf<T extends string>(value: unknown, choices: readonly T[], fallback: T): T {
  return typeof value === "string" && (choices as readonly string[]).includes(value) ? (value as T) : fallback;
}

/** Settings from `get(name)` (the editor's configuration section); wrong types fall back to the defaults. */
export function readSettings(get: (name: keyof Settings) => unknown): Settings {
  const str = (name: "binaryPath" | "dbPath"): string => {
    const v = get(name);
    return typeof v === "string" ? v.trim() : DEFAULTS[name];
  };
  const bool = (name: "groupByScope" | "autoStartMCP"): boolean => {
    const v = get(name);
    return typeof v === "boolean" ? v : DEFAULTS[name];
  };
  return {
    binaryPath: str("binaryPath"),
    dbPath: str("dbPath"),
    defaultScope: oneOf(get("defaultScope"), SCOPE_CHOICES, DEFAULTS.defaultScope),
    groupByScope: bool("groupByScope"),
    sortBy: oneOf(get("sortBy"), SORT_CHOICES, DEFAULTS.sortBy),
    autoStartMCP: bool("autoStartMCP"),
  };
}

/**
 * The environment of every `mem` call: the editor's, plus MEM_DB when dbPath is set
 * (`~` expanded, relative paths taken from the first workspace folder, since `mem`
 * requires an absolute path). MEM_SCOPE is dropped: every call passes `--scope`.
 */
export function memEnv(
  settings: Settings,
  base: NodeJS.ProcessEnv,
  home: string,
  workspaceFolder: string | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  delete env.MEM_SCOPE;
  if (settings.dbPath) {
    const expanded = expandHome(settings.dbPath, home);
    env.MEM_DB = path.isAbsolute(expanded) ? expanded : path.resolve(workspaceFolder ?? home, expanded);
  }
  return env;
}

/** `repo:<folder name>` for the active workspace folder (what `repo:current` means in the editor). */
export function repoScope(workspaceFolder: string | undefined): string {
  if (!workspaceFolder) {
    throw new MemError("usage", "memory-ext.defaultScope is repo:current but no workspace folder is open");
  }
  return `repo:${path.basename(path.resolve(workspaceFolder))}`;
}

/**
 * The scope a save or search uses: `user`, `repo:<active folder>`, or for `ask`
 * the answer of `ask(choices)` (undefined when the user cancels).
 */
export async function resolveScope(
  setting: DefaultScope,
  workspaceFolder: string | undefined,
  ask: (choices: string[]) => Promise<string | undefined>,
): Promise<string | undefined> {
  if (setting === "user") {
    return "user";
  }
  if (setting === "repo:current") {
    return repoScope(workspaceFolder);
  }
  const choices = ["user", ...(workspaceFolder ? [repoScope(workspaceFolder)] : [])];
  const answer = await ask(choices);
  return answer === undefined ? undefined : answer.trim() || undefined;
}

/** What the editor runs for `memory-ext.autoStartMCP`: `<mem> mcp`, with MEM_DB when dbPath is set. */
export function mcpLaunch(
  binary: string,
  settings: Settings,
  home: string,
  workspaceFolder: string | undefined,
): { command: string; args: string[]; env: Record<string, string> } {
  const dbPath = memEnv(settings, {}, home, workspaceFolder).MEM_DB;
  return { command: binary, args: ["mcp"], env: dbPath ? { MEM_DB: dbPath } : {} };
}
