/**
 * The editor-bound entry point: it wires the commands, the memories view, the
 * read-only documents and the MCP server registration. Finding `mem`, argument
 * vectors, running it, checking its JSON, ordering the view and rendering text
 * live in plain modules that do not import `vscode` and are tested without the editor.
 */
import * as os from "node:os";

import * as vscode from "vscode";

import { Commands } from "./commands";
import { SECTION, activeFolder, binary, settings } from "./editor";
import { describe } from "./errors";
import { mcpLaunch } from "./settings";
import { MemoryNode } from "./tree";
import { DOC_SCHEME, Documents, MemoriesView } from "./view";

const MCP_PROVIDER = "memory-ext.mem";

type Handler = (c: Commands, node?: MemoryNode) => Promise<void> | void;

/** Every contributed command (package.json) and what runs it. */
const COMMANDS: Record<string, Handler> = {
  "memory-ext.refresh": async (c) => c.refresh(),
  "memory-ext.saveSelection": async (c) => c.saveSelection(),
  "memory-ext.search": async (c) => c.search(),
  "memory-ext.open": async (c, node) => c.open(node),
  "memory-ext.pin": async (c, node) => c.pin(node, true),
  "memory-ext.unpin": async (c, node) => c.pin(node, false),
  "memory-ext.delete": async (c, node) => c.delete(node),
  "memory-ext.rename": async (c, node) => c.rename(node),
  "memory-ext.supersede": async (c, node) => c.supersede(node),
  "memory-ext.showLinks": async (c, node) => c.showLinks(node),
  "memory-ext.doctor": async (c) => c.doctor(),
};

export function activate(context: vscode.ExtensionContext): void {
  const view = new MemoriesView();
  const docs = new Documents();
  const output = vscode.window.createOutputChannel("mem doctor");
  view.view = vscode.window.createTreeView("memory-ext.memories", { treeDataProvider: view, showCollapseAll: true });
  const commands = new Commands(view, docs, output);
  for (const [id, handler] of Object.entries(COMMANDS)) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (node?: MemoryNode) => {
        try {
          await handler(commands, node);
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
