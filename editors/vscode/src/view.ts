/** The memories view and the read-only documents (memory records, links). */
import * as vscode from "vscode";

import { describe } from "./errors";
import { client, settings } from "./editor";
import { ALL_SCOPES } from "./mem";
import { TreeNode, buildTree, describeMemory } from "./tree";

export const DOC_SCHEME = "mem-memory";

/** Documents shown read-only: the content is computed by the command that opens them. */
export class Documents implements vscode.TextDocumentContentProvider {
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

export class MemoriesView implements vscode.TreeDataProvider<TreeNode> {
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

