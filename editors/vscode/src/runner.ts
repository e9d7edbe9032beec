/**
 * Runs `mem` as a child process: an argument vector only (spawn with shell:false),
 * a time limit on every call, stdin for values, and stdout parsed as JSON.
 */
import { spawn } from "node:child_process";

import { MemError } from "./errors";

/** Exit statuses of `mem` (README "Exit codes"). */
export const EXIT_NOT_FOUND = 3;

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  stdin?: string;
  /** Exit statuses other than 0 whose stdout is still the result (e.g. 1 for `doctor`). */
  acceptExit?: readonly number[];
  cwd?: string;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** A short name of the call for messages: `mem search` (never the values). */
function callName(args: readonly string[]): string {
  const command = args.find((a, i) => !a.startsWith("-") && !(i > 0 && ["--scope", "--format"].includes(args[i - 1])));
  return command ? `mem ${command}` : "mem";
}

/** The error line `mem` wrote (`mem: error: ...`), without its prefix. */
export function errorLine(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const error = lines.filter((l) => l.startsWith("mem: error:")).pop() ?? lines.pop() ?? "";
  return error.replace(/^mem: (error: )?/, "");
}

export function runProcess(binary: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const name = callName(args);
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(binary, [...args], {
        shell: false,
        env: options.env,
        cwd: options.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (err) {
      reject(new MemError("spawn", `could not start ${binary}: ${(err as Error).message}`));
      return;
    }
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (fn: () => void): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        fn();
      }
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(() =>
        reject(new MemError("timeout", `${name} did not answer within ${Math.round(options.timeoutMs / 100) / 10} s and was stopped`)),
      );
    }, options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) {
        child.kill("SIGKILL");
        finish(() => reject(new MemError("bad-output", `${name} printed more than ${MAX_OUTPUT_BYTES} bytes`)));
        return;
      }
      out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (errOut.reduce((n, b) => n + b.length, 0) < 1024 * 1024) {
        errOut.push(chunk);
      }
    });
    child.on("error", (err: NodeJS.ErrnoException) => {
      const kind = err.code === "ENOENT" || err.code === "EACCES" ? "missing-binary" : "spawn";
      const why = err.code === "ENOENT" ? "no such file" : err.code === "EACCES" ? "not executable" : err.message;
      finish(() => reject(new MemError(kind, `could not run ${binary} (${why}): set memory-ext.binaryPath to the mem executable`)));
    });
    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => {
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(errOut).toString("utf8");
      finish(() => {
        if (code === null) {
          reject(new MemError("exit", `${name} was stopped by signal ${signal ?? "?"}`));
        } else if (code !== 0 && !(options.acceptExit ?? []).includes(code)) {
          const detail = errorLine(stderr) || "no message";
          const kind = code === EXIT_NOT_FOUND ? "not-found" : "exit";
          reject(new MemError(kind, `${name} failed (exit ${code}): ${detail}`, code));
        } else {
          resolve({ stdout, stderr, exitCode: code });
        }
      });
    });
    child.stdin.on("error", () => {
      /* the process exited before reading stdin: its exit status tells what happened */
    });
    child.stdin.end(options.stdin ?? "");
  });
}

/** Run and parse stdout as one JSON document. */
export async function runJson(binary: string, args: readonly string[], options: RunOptions): Promise<unknown> {
  const result = await runProcess(binary, args, options);
  try {
    return JSON.parse(result.stdout);
  } catch (err) {
    const head = result.stdout.trim().slice(0, 80);
    throw new MemError(
      "bad-output",
      `${callName(args)} did not print JSON (${(err as Error).message}); output starts with: ${head || "(nothing)"}`,
      result.exitCode,
    );
  }
}
