/**
 * What each command does, one small method per command. Every method may throw a
 * MemError; extension.ts shows it. Cancelling a prompt ends a command quietly.
 */
import * as vscode from "vscode";

import { activeFolder, client, notEmpty, scopeFor, target } from "./editor";
import { splitTags } from "./mem";
import { selectionOrigin } from "./origin";
import { hitItem, renderDoctor, renderRecord, renderTraverse, searchTitle } from "./render";
import { MemoryNode } from "./tree";
import { Documents, MemoriesView } from "./view";

function selectedText(): string {
  const editor = vscode.window.activeTextEditor;
  return editor ? editor.document.getText(editor.selection) : "";
}

export class Commands {
  constructor(
    private readonly view: MemoriesView,
    private readonly docs: Documents,
    private readonly output: vscode.OutputChannel,
  ) {}

  refresh(): void {
    this.view.refresh();
  }

  private async show(r: { scope: string; key: string }): Promise<void> {
    const record = await client().mem.get(r.scope, r.key);
    await this.docs.show(`${record.scope}/${record.key}`, renderRecord(record));
  }

  /** The selection, a key and optional tags, saved in the defaultScope scope with its origin. */
  async saveSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const text = selectedText();
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
    const origin = selectionOrigin(editor.document.uri.fsPath, editor.selection.start.line, activeFolder());
    const result = await mem.save(scope, key, text, splitTags(tags), origin);
    const superseded = result.fields.superseded ? ` (it supersedes ${String(result.fields.superseded)})` : "";
    void vscode.window.showInformationMessage(`Saved memory ${result.scope}/${result.key}${superseded}.`);
    this.view.refresh();
  }

  /** `mem search` in the defaultScope scope; the pick list's title says how it searched. */
  async search(): Promise<void> {
    const { mem, s } = client();
    const scope = await scopeFor(s, true);
    const query = scope && (await vscode.window.showInputBox({ title: `Search ${scope}`, prompt: 'Words, prefixes, "phrases", -exclude, a OR b' }));
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
      await this.show(pick.hit);
    }
  }

  async open(node?: MemoryNode): Promise<void> {
    const r = await target(node);
    if (r) {
      await this.show(r);
    }
  }

  async pin(node: MemoryNode | undefined, pinned: boolean): Promise<void> {
    const r = await target(node);
    if (r) {
      await client().mem.setPinned(r.scope, r.key, pinned);
      this.view.refresh();
    }
  }

  async delete(node?: MemoryNode): Promise<void> {
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
    this.view.refresh();
  }

  async rename(node?: MemoryNode): Promise<void> {
    const r = await target(node);
    const newKey = r && (await vscode.window.showInputBox({ title: `Rename ${r.scope}/${r.key}`, value: r.key, validateInput: notEmpty("The key") }));
    if (!r || !newKey || newKey === r.key) {
      return;
    }
    const result = await client().mem.rename(r.scope, r.key, newKey);
    void vscode.window.showInformationMessage(`Renamed ${r.scope}/${r.key} to ${result.key}.`);
    this.view.refresh();
  }

  /** New key, then the new value: the editor's selection when there is one, else typed (prefilled). */
  async supersede(node?: MemoryNode): Promise<void> {
    const r = await target(node);
    if (!r) {
      return;
    }
    const title = `Supersede ${r.scope}/${r.key}`;
    const newKey = await vscode.window.showInputBox({ title, prompt: "Key of the new memory", value: r.key, validateInput: notEmpty("The key") });
    const selection = selectedText();
    const value =
      newKey && selection.trim().length > 0
        ? selection
        : newKey && (await vscode.window.showInputBox({ title, prompt: "New value (or select text first)", value: r.value, validateInput: notEmpty("The value") }));
    if (!newKey || !value) {
      return;
    }
    const result = await client().mem.supersede(r.scope, r.key, newKey, value, r.tags);
    void vscode.window.showInformationMessage(`${r.scope}/${r.key} is archived, superseded by ${result.key}.`);
    this.view.refresh();
  }

  async showLinks(node?: MemoryNode): Promise<void> {
    const r = await target(node);
    if (r) {
      const graph = await client().mem.traverse(r.scope, r.key);
      await this.docs.show(`links of ${r.scope}/${r.key}`, renderTraverse(graph));
    }
  }

  async doctor(): Promise<void> {
    const result = await client().mem.doctor();
    this.output.clear();
    this.output.append(renderDoctor(result));
    this.output.show(true);
    const failed = result.checks.filter((c) => c.status === "fail").map((c) => c.name);
    if (failed.length > 0) {
      void vscode.window.showErrorMessage(`mem doctor: failed checks: ${failed.join(", ")}`);
    } else {
      void vscode.window.showInformationMessage("mem doctor: every check passed or warned (see the output).");
    }
  }
}
