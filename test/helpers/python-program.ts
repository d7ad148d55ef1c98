/**
 * A Python program a test drives step by step: the MCP clients of the interop suite, written with
 * libraries the test can't call from TypeScript. The program prints one JSON object per line on
 * stdout, each naming its `event`; the test waits for each event by name, and where it must act
 * between two of the program's steps (restart the API) the program waits for a line on its stdin.
 * Its stderr is kept for failure messages, and a test process that dies leaves no program behind.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { waitFor } from "./wait-for.ts";

/** One line the program printed: `event` names it, the rest is what it reports. */
export type ProgramEvent = { event: string } & Record<string, unknown>;

export interface PythonProgram {
  /** The next event named `event` after those already taken; fails when the program exits first or after `timeoutMs`. */
  next(event: string, timeoutMs?: number): Promise<ProgramEvent>;
  /** Writes `line` to the program's stdin. */
  send(line: string): void;
  /** Waits for the program to exit 0; fails with its output otherwise. */
  finished(timeoutMs?: number): Promise<void>;
  /** Kills the program unless it has exited. */
  stop(): Promise<void>;
}

/** The event a line reports, if it is one (anything else the program prints is only kept for failure messages). */
function eventOf(line: string): ProgramEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const isEvent =
    typeof value === "object" && value !== null && typeof (value as { event?: unknown }).event === "string";
  return isEvent ? (value as ProgramEvent) : undefined;
}

/** Starts `python file ...args` with a minimal environment (nothing of the test's reaches it). */
export function startPythonProgram(python: string, file: string, args: readonly string[]): PythonProgram {
  const name = `${path.basename(file)} ${args[0] ?? ""}`.trim();
  const child = spawn(python, [file, ...args], {
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PYTHONUNBUFFERED: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const events: ProgramEvent[] = [];
  let taken = 0;
  let output = "";
  const keep = (text: string) => {
    output = (output + text).slice(-12_000);
  };
  createInterface({ input: child.stdout }).on("line", (line) => {
    keep(`${line}\n`);
    const event = eventOf(line);
    if (event) events.push(event);
  });
  child.stderr.on("data", (chunk: Buffer) => keep(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const failure = (error: unknown) => new Error(`${(error as Error).message}\n${name} printed:\n${output}`);

  return {
    async next(event, timeoutMs = 60_000) {
      try {
        const index = await waitFor(
          `the "${event}" line of ${name}`,
          () => {
            const found = events.findIndex((e, i) => i >= taken && e.event === event);
            if (found < 0 && exitCode !== undefined) throw new Error(`${name} exited (${exitCode}) before "${event}"`);
            return found;
          },
          { timeoutMs, intervalMs: 50, until: (found) => found >= 0 },
        );
        taken = index + 1;
        return events[index] as ProgramEvent;
      } catch (error) {
        throw failure(error);
      }
    },
    send(line) {
      child.stdin.write(`${line}\n`);
    },
    async finished(timeoutMs = 30_000) {
      const code = await waitFor(`${name} to exit`, () => exitCode, {
        timeoutMs,
        intervalMs: 50,
        until: (c) => c !== undefined,
      }).catch((error: unknown) => {
        throw failure(error);
      });
      if (code !== 0) throw failure(new Error(`${name} exited with ${code}`));
    },
    async stop() {
      process.removeListener("exit", killOnExit);
      if (exitCode === undefined) child.kill("SIGKILL");
      await exited;
    },
  };
}
