/**
 * What a test's child process prints, watched as it comes. The README's shell commands, `rewind`
 * processes run with a given environment and the CLI run against a stack all wait for a line of
 * output before they go on, and fail with what was printed when it never comes or the process
 * ends first; this is that wait, for all of them.
 */
import type { ChildProcess } from "node:child_process";

export interface ChildOutput {
  /** What the watched streams printed so far, interleaved. */
  text: () => string;
  /** Resolves with the match once the text matches; rejects when the process ends first or after `timeoutMs`. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
}

export function watchOutput(
  child: ChildProcess,
  options: {
    /** How errors name the process: the command it runs. */
    name: string;
    /** The streams watched; default both. */
    streams?: readonly ("stdout" | "stderr")[];
    /** What an error shows of the output; default the text watched. */
    report?: () => string;
  },
): ChildOutput {
  let text = "";
  let closed = false;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  for (const stream of options.streams ?? ["stdout", "stderr"]) {
    child[stream]?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      notify();
    });
  }
  child.once("close", () => {
    closed = true;
    notify();
  });
  const report = () => (options.report ? options.report() : text);
  return {
    text: () => text,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`no ${String(pattern)} within ${timeoutMs} ms from ${options.name}:\n${report()}`)),
          timeoutMs,
        );
        const check = () => {
          const match = pattern.exec(text);
          if (match) finish(undefined, match);
          else if (closed) finish(new Error(`${options.name} exited before printing ${String(pattern)}:\n${report()}`));
        };
        function finish(error?: Error, match?: RegExpMatchArray) {
          clearTimeout(timer);
          listeners.delete(check);
          if (match) resolve(match);
          else reject(error);
        }
        listeners.add(check);
        check();
      }),
  };
}
