/**
 * Finding the `mem` executable: `memory-ext.binaryPath` when set, else (in order)
 * every folder of PATH, `~/.local/bin`, then each workspace folder's `.venv/bin`.
 */
import * as fs from "node:fs";
import * as path from "node:path";

import { MemError } from "./errors";

export interface DiscoveryContext {
  /** The PATH variable of the editor's environment. */
  pathEnv: string | undefined;
  home: string;
  workspaceFolders: readonly string[];
  platform?: NodeJS.Platform;
}

export function expandHome(p: string, home: string): string {
  if (p === "~") {
    return home;
  }
  if (p.startsWith("~/") || p.startsWith("~\\")) {
    return path.join(home, p.slice(2));
  }
  return p;
}

function isExecutableFile(p: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(p).isFile()) {
      return false;
    }
    if (platform !== "win32") {
      fs.accessSync(p, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

/** Names `mem` can have in a folder: `mem`, or on Windows `mem.exe` and `mem.cmd`. */
function names(platform: NodeJS.Platform): string[] {
  return platform === "win32" ? ["mem.exe", "mem.cmd", "mem"] : ["mem"];
}

/** The folders searched when binaryPath is empty, in order. */
export function searchFolders(ctx: DiscoveryContext): string[] {
  const platform = ctx.platform ?? process.platform;
  const fromPath = (ctx.pathEnv ?? "").split(platform === "win32" ? ";" : ":").filter((d) => d.length > 0);
  const venv = platform === "win32" ? path.join(".venv", "Scripts") : path.join(".venv", "bin");
  return [...fromPath, path.join(ctx.home, ".local", "bin"), ...ctx.workspaceFolders.map((w) => path.join(w, venv))];
}

/** The `mem` to run, or a MemError that says where it looked. */
export function findBinary(binaryPath: string, ctx: DiscoveryContext): string {
  const platform = ctx.platform ?? process.platform;
  const configured = binaryPath.trim();
  if (configured.length > 0) {
    const resolved = path.resolve(expandHome(configured, ctx.home));
    if (!isExecutableFile(resolved, platform)) {
      throw new MemError("missing-binary", `memory-ext.binaryPath is ${resolved}, which is not an executable file`);
    }
    return resolved;
  }
  const folders = searchFolders(ctx);
  for (const folder of folders) {
    for (const name of names(platform)) {
      const candidate = path.join(folder, name);
      if (isExecutableFile(candidate, platform)) {
        return candidate;
      }
    }
  }
  const places = ["PATH", "~/.local/bin", ...ctx.workspaceFolders.map((w) => path.join(w, ".venv", "bin"))];
  throw new MemError(
    "missing-binary",
    `mem was not found (looked in ${places.join(", ")}): install the rayfleet project (its console script is mem) or set memory-ext.binaryPath`,
  );
}
