/** Where a saved selection comes from: `<file relative to the workspace folder>:<line>` (1-based). */
import * as path from "node:path";

export function selectionOrigin(file: string, zeroBasedLine: number, folder: string | undefined): string {
  const relative = folder ? path.relative(folder, file) : "";
  const shown = relative && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
  return `${shown}:${zeroBasedLine + 1}`;
}
