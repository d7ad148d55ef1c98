/**
 * How a long-running `rewind` process (worker, API) learns that it must stop, so that it drains
 * whichever process of a launch chain (npx → bin/rewind.js → this one) was told:
 *
 * - SIGINT or SIGTERM, once. A chain may deliver the same stop twice (Ctrl-C reaches the whole
 *   process group, and bin/rewind.js passes it on too): a repeat is ignored, where Node's default
 *   for a signal nobody listens to any more would kill the process in the middle of its drain.
 * - The death of bin/rewind.js, however it died (SIGKILL included), instead of living on as an
 *   orphan nobody supervises. The wrapper opens an IPC channel for that alone: a socket pair whose
 *   other end the kernel closes when the wrapper dies, so `disconnect` fires here at once, with no
 *   polling and no race on who the parent is (polling `process.ppid` needs an interval; a stdin
 *   pipe would take stdin from the commands that read it). It counts as a SIGTERM.
 * - For `rewind dev` under `npm start`, the death of npm, which opens no channel: the process
 *   checks every second whether it was reparented (`stopWhenLauncherDies`).
 */

/** Watches the parent when it opened an IPC channel (bin/rewind.js does); otherwise does nothing. */
export function stopWhenParentDies(): void {
  if (!process.channel) return;
  // The channel must not keep the process alive once its work is done.
  process.channel.unref();
  // A real SIGTERM: the handlers below when a server command runs, else Node's default (exit).
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
}

/** Calls `stop` on the first SIGINT or SIGTERM; later ones are ignored while it drains. */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): void {
  let stopping = false;
  const once = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    stop(signal);
  };
  process.on("SIGINT", once);
  process.on("SIGTERM", once);
}

/**
 * Stops this process (a real SIGTERM, so the stop handlers run) once the process that launched
 * it is gone: it was reparented, which is how a child learns that its parent was killed
 * outright. Checked every `intervalMs`; `onGone` is told first.
 */
export function stopWhenLauncherDies(onGone: (launcherPid: number) => void, intervalMs = 1_000): void {
  const launcher = process.ppid;
  if (launcher <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    onGone(launcher);
    process.kill(process.pid, "SIGTERM");
  }, intervalMs);
  timer.unref();
}
