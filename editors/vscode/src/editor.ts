/** Editor-bound helpers shared by the commands and the view: settings, folders, the mem client, prompts. */
import * as os from "node:os";

import * as vscode from "vscode";

import { findBinary } from "./discovery";
import { ALL_SCOPES, MemClient } from "./mem";
import { MemoryRecord } from "./parse";
import { Settings, memEnv, readSettings, resolveScope } from "./settings";
import { MemoryNode } from "./tree";

export const SECTION = "memory-ext";

export function settings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings((name) => config.get(name));
}

/** The workspace folder of the active editor, else the first one. */
export function activeFolder(): string | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.fsPath;
}

export function binary(s: Settings): string {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  return findBinary(s.binaryPath, { pathEnv: process.env.PATH, home: os.homedir(), workspaceFolders: folders });
}

export function client(): { mem: MemClient; s: Settings } {
  const s = settings();
  const folder = activeFolder();
  return { mem: new MemClient(binary(s), memEnv(s, process.env, os.homedir(), folder), folder), s };
}

async function askScope(choices: string[]): Promise<string | undefined> {
  const other = "Other scope…";
  const pick = await vscode.window.showQuickPick([...choices, other], { title: "Memory scope" });
  if (pick !== other) {
    return pick;
  }
  return vscode.window.showInputBox({ title: "Memory scope", prompt: "Scope name, e.g. repo:api or team" });
}

/** The scope of a save or search, per `memory-ext.defaultScope` (undefined: cancelled). */
export function scopeFor(s: Settings, withAll: boolean): Promise<string | undefined> {
  return resolveScope(s.defaultScope, activeFolder(), (choices) => askScope(withAll ? [...choices, ALL_SCOPES] : choices));
}

/** The memory a command acts on: the view's node, else one picked from the list. */
export async function target(node?: MemoryNode): Promise<MemoryRecord | undefined> {
  if (node?.kind === "memory") {
    return node.record;
  }
  const { mem, s } = client();
  const records = await mem.list(ALL_SCOPES, s.sortBy);
  if (records.length === 0) {
    void vscode.window.showInformationMessage("There are no memories yet.");
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    records.map((r) => ({ label: r.key, description: r.scope, detail: r.value.slice(0, 120), record: r })),
    { title: "Memory", matchOnDescription: true, matchOnDetail: true },
  );
  return pick?.record;
}

export function notEmpty(what: string): (v: string) => string | undefined {
  return (v) => (v.trim().length === 0 ? `${what} must not be empty` : undefined);
}

