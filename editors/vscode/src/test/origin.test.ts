import * as assert from "node:assert/strict";
import { test } from "node:test";

import { selectionOrigin } from "../origin";

test("a selection's origin is its file relative to the workspace folder and its 1-based line", () => {
  assert.equal(selectionOrigin("/ws/app/src/x.ts", 0, "/ws/app"), "src/x.ts:1");
  assert.equal(selectionOrigin("/ws/app/a b/'q'.md", 41, "/ws/app"), "a b/'q'.md:42");
  // outside the folder, or no folder: the absolute path
  assert.equal(selectionOrigin("/tmp/notes.md", 2, "/ws/app"), "/tmp/notes.md:3");
  assert.equal(selectionOrigin("/tmp/notes.md", 2, undefined), "/tmp/notes.md:3");
});
