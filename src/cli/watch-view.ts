/**
 * Where `--watch` writes. On a terminal, event lines scroll above one status line that is
 * redrawn in place (spinner, calls in flight, elapsed time); anywhere else (a pipe, a CI log)
 * only the event lines are written, so the output is plain text a test or a log can read.
 */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const CLEAR_LINE = "\r\x1b[2K";

export interface WatchView {
  /** An event: printed once, above the status line. */
  line(text: string): void;
  /** The status line (a spinner is put in front); ignored when not on a terminal. */
  status(text: string): void;
  /** Removes the status line; lines printed after this are plain. */
  done(): void;
}

export function createWatchView(stream: NodeJS.WriteStream = process.stdout): WatchView {
  if (!stream.isTTY) {
    return {
      line: (text) => void stream.write(`${text}\n`),
      status: () => undefined,
      done: () => undefined,
    };
  }
  let frame = 0;
  let current: string | undefined;
  const fit = (text: string) => {
    const width = stream.columns || 80;
    return text.length >= width ? `${text.slice(0, width - 2)}…` : text;
  };
  const draw = () => {
    if (current !== undefined) stream.write(`${CLEAR_LINE}${fit(`${FRAMES[frame % FRAMES.length]} ${current}`)}`);
  };
  return {
    line(text) {
      stream.write(`${current !== undefined ? CLEAR_LINE : ""}${text}\n`);
      draw();
    },
    status(text) {
      frame++;
      current = text;
      draw();
    },
    done() {
      if (current !== undefined) stream.write(CLEAR_LINE);
      current = undefined;
    },
  };
}
