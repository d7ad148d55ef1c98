/**
 * Port helpers for the embedded dev server and the tests: asking the OS for a free port (the only
 * race-free way to pick one) and checking a configured port before a child process fails on it
 * with a message buried in its own log.
 */

import { createServer } from "node:net";

/**
 * Returns a TCP port that was free a moment ago on `host`, found by listening on port 0.
 *
 * @example
 * const port = await getFreePort(); // e.g. 41873
 */
export async function getFreePort(host = "127.0.0.1"): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error(`could not read the port the OS gave on ${host}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** True when nothing listens on `host:port` (we could bind it ourselves). */
export async function isPortFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * Throws a clear error when `host:port` is taken, naming what the port was meant for and how to
 * move it.
 */
export async function assertPortFree(port: number, host: string, purpose: string): Promise<void> {
  if (await isPortFree(port, host)) return;
  throw new Error(
    `The ${purpose} port ${host}:${port} is already in use. Stop the process that holds it ` +
      `(a Temporal dev server left running?), or choose another port in temporal-dev.yml.`,
  );
}

/**
 * Starts something on a free port, trying a fresh port when it was taken between the check and
 * the bind (at most three tries); any other failure is thrown at once.
 */
export async function startOnFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await getFreePort());
    } catch (error) {
      if (attempt >= 3 || !/already in use/i.test((error as Error).message)) throw error;
    }
  }
}
