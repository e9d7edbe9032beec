/**
 * The editor-bound layer: commands, the memories view, read-only documents and the
 * MCP server registration. Everything else (finding `mem`, argument vectors,
 * running it, checking its JSON, ordering the view, rendering text) lives in plain
 * modules that do not import `vscode` and are tested without the editor.
 */
import * as os from "node:os";
import * as path from "node:path";

import * as vscode from "vscode";

import { findBinary } from "./discovery";
import { describe } from "./errors";
import { ALL_SCOPES, MemClient, splitTags } from "./mem";
import { MemoryRecord } from "./parse";
import { hitItem, renderDoctor, renderRecord, renderTraverse, searchTitle } from "./render";
import { Settings, mcpLaunch, memEnv, readSettings, resolveScope } from "./settings";
import { MemoryNode, TreeNode, buildTree, describeMemory } from "./tree";

const SECTION = "memory-ext";
const DOC_SCHEME = "mem-memory";
const MCP_PROVIDER = "memory-ext.mem";

function settings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings((name) => config.get(name));
}

/** The workspace folder of the active editor, else the first one. */
function activeFolder(): string | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.fsPath;
}

function binary(s: Settings): string {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  return findBinary(s.binaryPath, { pathEnv: process.env.PATH, home: os.homedir(), workspaceFolders: folders });
}

function client(): { mem: MemClient; s: Settings } {
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
function scopeFor(s: Settings, withAll: boolean): Promise<string | undefined> {
  return resolveScope(s.defaultScope, activeFolder(), (choices) => askScope(withAll ? [...choices, ALL_SCOPES] : choices));
}

/** Documents shown read-only: the content is computed by the command that opens them. */
class Documents implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private serial = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "(closed: run the command again)";
  }

  async show(title: string, content: string): Promise<void> {
    this.serial += 1;
    const uri = vscode.Uri.from({ scheme: DOC_SCHEME, path: `/${title}.md`, query: String(this.serial) });
    this.contents.set(uri.toString(), content);
    if (this.contents.size > 50) {
      this.contents.delete(this.contents.keys().next().value as string);
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}

class MemoriesView implements vscode.TreeDataProvider<TreeNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  view?: vscode.TreeView<TreeNode>;

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    if (node) {
      return node.kind === "scope" ? node.children : [];
    }
    try {
      const { mem, s } = client();
      const records = await mem.list(ALL_SCOPES, s.sortBy);
      if (this.view) {
        this.view.message = records.length === 0 ? "No memories yet: select text and run “Save Selection as Memory”." : "";
      }
      return buildTree(records, s.sortBy, s.groupByScope);
    } catch (err) {
      if (this.view) {
        this.view.message = describe(err);
      }
      void vscode.window.showErrorMessage(`Memories: ${describe(err)}`);
      return [];
    }
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    if (node.kind === "scope") {
      const item = new vscode.TreeItem(node.scope, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.children.length}`;
      item.contextValue = "scope";
      item.iconPath = new vscode.ThemeIcon("folder");
      return item;
    }
    const r = node.record;
    const item = new vscode.TreeItem(r.key, vscode.TreeItemCollapsibleState.None);
    item.description = describeMemory(r, settings().groupByScope);
    item.tooltip = new vscode.MarkdownString().appendText(`${r.scope}/${r.key}\n\n${r.value.slice(0, 1000)}`);
    item.contextValue = r.pinned ? "memory.pinned" : "memory";
    item.iconPath = new vscode.ThemeIcon(r.pinned ? "pinned" : "note");
    item.command = { command: "memory-ext.open", title: "Open Memory", arguments: [node] };
    return item;
  }
}

/** The memory a command acts on: the view's node, else one picked from the list. */
async function target(node?: MemoryNode): Promise<MemoryRecord | undefined> {
  if (node?.kind === "memory") {
    return node.record;
  }
  const { mem, s } = client();
  const records = await mem.list(ALL_SCOPES, s.sortBy);
  const pick = await vscode.window.showQuickPick(
    records.map((r) => ({ label: r.key, description: r.scope, detail: r.value.slice(0, 120), record: r })),
    { title: "Memory", matchOnDescription: true, matchOnDetail: true },
  );
  return pick?.record;
}

function notEmpty(what: string): (v: string) => string | undefined {
  return (v) => (v.trim().length === 0 ? `${what} must not be empty` : undefined);
}

export function activate(context: vscode.ExtensionContext): void {
  const view = new MemoriesView();
  const docs = new Documents();
  const output = vscode.window.createOutputChannel("mem doctor");
  view.view = vscode.window.createTreeView("memory-ext.memories", { treeDataProvider: view, showCollapseAll: true });

  const open = async (r: { scope: string; key: string }): Promise<void> => {
    const record = await client().mem.get(r.scope, r.key);
    await docs.show(`${record.scope}/${record.key}`, renderRecord(record));
  };

  const commands: Record<string, (node?: MemoryNode) => Promise<void>> = {
    "memory-ext.refresh": async () => view.refresh(),
    "memory-ext.saveSelection": async () => {
      const editor = vscode.window.activeTextEditor;
      const text = editor?.document.getText(editor.selection) ?? "";
      if (!editor || text.trim().length === 0) {
        void vscode.window.showWarningMessage("Select the text to save as a memory first.");
        return;
      }
      const { mem, s } = client();
      const scope = await scopeFor(s, false);
      const key = scope && (await vscode.window.showInputBox({ title: `Save to ${scope}`, prompt: "Key", validateInput: notEmpty("The key") }));
      const tags = key && (await vscode.window.showInputBox({ title: `Save ${scope}/${key}`, prompt: "Tags, comma-separated (optional)" }));
      if (!scope || !key || tags === undefined) {
        return;
      }
      const folder = activeFolder();
      const file = editor.document.uri.fsPath;
      const origin = `${folder ? path.relative(folder, file) : file}:${editor.selection.start.line + 1}`;
      const result = await mem.save(scope, key, text, splitTags(tags), origin);
      const superseded = result.fields.superseded ? ` (it supersedes ${String(result.fields.superseded)})` : "";
      void vscode.window.showInformationMessage(`Saved memory ${result.scope}/${result.key}${superseded}.`);
      view.refresh();
    },
    "memory-ext.search": async () => {
      const { mem, s } = client();
      const scope = await scopeFor(s, true);
      const query = scope && (await vscode.window.showInputBox({ title: `Search ${scope}`, prompt: "Words, prefixes, \"phrases\", -exclude, a OR b" }));
      if (!scope || !query) {
        return;
      }
      const result = await mem.search(scope, query);
      if (result.results.length === 0) {
        void vscode.window.showInformationMessage(`No memory matches "${query}" in ${scope}.`);
        return;
      }
      const pick = await vscode.window.showQuickPick(
        result.results.map((h) => ({ ...hitItem(h), hit: h })),
        { title: searchTitle(result), matchOnDescription: true, matchOnDetail: true },
      );
      if (pick) {
        await open(pick.hit);
      }
    },
    "memory-ext.open": async (node) => {
      const r = await target(node);
      if (r) {
        await open(r);
      }
    },
    "memory-ext.pin": async (node) => pin(node, true),
    "memory-ext.unpin": async (node) => pin(node, false),
    "memory-ext.delete": async (node) => {
      const r = await target(node);
      const answer =
        r &&
        (await vscode.window.showWarningMessage(
          `Delete memory ${r.scope}/${r.key} and its links?`,
          { modal: true, detail: "This cannot be undone." },
          "Delete",
        ));
      if (!r || answer !== "Delete") {
        return;
      }
      await client().mem.delete(r.scope, r.key);
      void vscode.window.showInformationMessage(`Deleted memory ${r.scope}/${r.key}.`);
      view.refresh();
    },
    "memory-ext.rename": async (node) => {
      const r = await target(node);
      const newKey = r && (await vscode.window.showInputBox({ title: `Rename ${r.scope}/${r.key}`, value: r.key, validateInput: notEmpty("The key") }));
      if (!r || !newKey || newKey === r.key) {
        return;
      }
      const result = await client().mem.rename(r.scope, r.key, newKey);
      void vscode.window.showInformationMessage(`Renamed ${r.scope}/${r.key} to ${result.key}.`);
      view.refresh();
    },
    "memory-ext.supersede": async (node) => supersede(node),
    "memory-ext.showLinks": async (node) => {
      const r = await target(node);
      if (r) {
        const graph = await client().mem.traverse(r.scope, r.key);
        await docs.show(`links of ${r.scope}/${r.key}`, renderTraverse(graph));
      }
    },
    "memory-ext.doctor": async () => {
      const result = await client().mem.doctor();
      output.clear();
      output.append(renderDoctor(result));
      output.show(true);
      const failed = result.checks.filter((c) => c.status === "fail").map((c) => c.name);
      if (failed.length > 0) {
        void vscode.window.showErrorMessage(`mem doctor: failed checks: ${failed.join(", ")}`);
      } else {
        void vscode.window.showInformationMessage("mem doctor: every check passed or warned (see the output).");
      }
    },
  };

  async function pin(node: MemoryNode | undefined, pinned: boolean): Promise<void> {
    const r = await target(node);
    if (r) {
      await client().mem.setPinned(r.scope, r.key, pinned);
      view.refresh();
    }
  }

  /** New key, then the new value: the editor's selection when there is one, else typed (prefilled). */
  async function supersede(node: MemoryNode | undefined): Promise<void> {
    const r = await target(node);
    if (!r) {
      return;
    }
    const title = `Supersede ${r.scope}/${r.key}`;
    const newKey = await vscode.window.showInputBox({ title, prompt: "Key of the new memory", value: r.key, validateInput: notEmpty("The key") });
    if (!newKey) {
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const selection = editor ? editor.document.getText(editor.selection) : "";
    let value: string | undefined = selection;
    if (selection.trim().length === 0) {
      value = await vscode.window.showInputBox({ title, prompt: "New value (or select text first)", value: r.value, validateInput: notEmpty("The value") });
    }
    if (!value) {
      return;
    }
    const result = await client().mem.supersede(r.scope, r.key, newKey, value, r.tags);
    void vscode.window.showInformationMessage(`${r.scope}/${r.key} is archived, superseded by ${result.key}.`);
    view.refresh();
  }

  for (const [id, handler] of Object.entries(commands)) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (node?: MemoryNode) => {
        try {
          await handler(node);
        } catch (err) {
          void vscode.window.showErrorMessage(`Memory: ${describe(err)}`);
        }
      }),
    );
  }

  const mcpChanged = new vscode.EventEmitter<void>();
  context.subscriptions.push(
    view.view,
    output,
    mcpChanged,
    vscode.workspace.registerTextDocumentContentProvider(DOC_SCHEME, docs),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) {
        view.refresh();
        mcpChanged.fire();
      }
    }),
  );
  registerMcp(context, mcpChanged);
}

/** `memory-ext.autoStartMCP`: offer `mem mcp` to the editor's MCP support while the setting is on. */
function registerMcp(context: vscode.ExtensionContext, changed: vscode.EventEmitter<void>): void {
  const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
  if (typeof lm?.registerMcpServerDefinitionProvider !== "function") {
    if (settings().autoStartMCP) {
      void vscode.window.showWarningMessage("memory-ext.autoStartMCP is on, but this editor has no MCP server API (VS Code 1.101 or later).");
    }
    return;
  }
  context.subscriptions.push(
    lm.registerMcpServerDefinitionProvider(MCP_PROVIDER, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        const s = settings();
        if (!s.autoStartMCP) {
          return [];
        }
        try {
          const launch = mcpLaunch(binary(s), s, os.homedir(), activeFolder());
          return [new vscode.McpStdioServerDefinition("mem memories", launch.command, launch.args, launch.env)];
        } catch (err) {
          void vscode.window.showErrorMessage(`memory-ext.autoStartMCP: ${describe(err)}`);
          return [];
        }
      },
    }),
  );
}

export function deactivate(): void {
  /* subscriptions are disposed by the editor */
}
