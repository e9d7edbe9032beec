/**
 * The one error type of the extension's plain modules. `kind` says what went wrong,
 * `message` is what the user reads (the editor layer shows it as is).
 */
export type MemErrorKind =
  | "missing-binary" // no `mem` found, or the configured path is not an executable file
  | "spawn" // the process could not be started
  | "timeout" // the call ran past its time limit and was killed
  | "exit" // `mem` exited with an error status
  | "not-found" // `mem` exit status 3: no such memory
  | "bad-output" // stdout was not the JSON document expected
  | "usage"; // the extension was asked for something invalid (empty key, ...)

export class MemError extends Error {
  readonly kind: MemErrorKind;
  readonly exitCode: number | null;

  constructor(kind: MemErrorKind, message: string, exitCode: number | null = null) {
    super(message);
    this.name = "MemError";
    this.kind = kind;
    this.exitCode = exitCode;
  }
}

/** A message for anything thrown: a MemError's own text, else a short description. */
export function describe(error: unknown): string {
  if (error instanceof MemError) {
    return error.message;
  }
  if (error instanceof Error) {
    return `unexpected error: ${error.message}`;
  }
  return `unexpected error: ${String(error)}`;
}
