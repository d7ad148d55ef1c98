/**
 * A dev server whose owner was killed outright (SIGKILL, an OOM kill) outlives it: nothing ran
 * to stop it, and it still holds the SQLite file and the ports the next `npm start` needs. The
 * server's pid and its owner's are written beside the SQLite file; the next start on that file
 * stops a server whose owner is gone, once /proc shows it is that file's `start-dev`. A server
 * whose owner is alive is another stack's, and is left alone (the port check then says so).
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "./process-alive.ts";

interface ServerRecord {
  server: number;
  owner: number;
}

/** Where the record of the server on `dbFile` is kept. */
export function serverRecordPath(dbFile: string): string {
  return `${dbFile}.pid`;
}

export async function recordServer(dbFile: string, serverPid: number): Promise<void> {
  const record: ServerRecord = { server: serverPid, owner: process.pid };
  await writeFile(serverRecordPath(dbFile), JSON.stringify(record));
}

export async function forgetServer(dbFile: string): Promise<void> {
  await rm(serverRecordPath(dbFile), { force: true });
}

async function readRecord(dbFile: string): Promise<ServerRecord | undefined> {
  try {
    const { server, owner } = JSON.parse(await readFile(serverRecordPath(dbFile), "utf8")) as Record<string, unknown>;
    const isPid = (value: unknown): value is number => Number.isInteger(value) && (value as number) > 0;
    return isPid(server) && isPid(owner) ? { server, owner } : undefined;
  } catch {
    return undefined;
  }
}

/** The command line of `pid`, from /proc; undefined where there is none to read. */
async function commandLine(pid: number): Promise<string[] | undefined> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").filter(Boolean);
  } catch {
    return undefined;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

/**
 * Stops the dev server a killed owner left on `dbFile`, if there is one: SIGTERM, then SIGKILL
 * after `graceMs`. Answers the pid it stopped.
 */
export async function stopOrphanedServer(
  dbFile: string,
  log: (line: string) => void,
  graceMs = 10_000,
): Promise<number | undefined> {
  const record = await readRecord(dbFile);
  if (!record || isAlive(record.owner)) return undefined;
  if (!isAlive(record.server)) {
    await forgetServer(dbFile);
    return undefined;
  }
  const args = await commandLine(record.server);
  if (!args) {
    log(
      `a dev server (pid ${record.server}) may still run on ${dbFile}, left by a process that was killed; stop it if the start fails`,
    );
    return undefined;
  }
  if (!args.includes("start-dev") || !args.includes(dbFile)) {
    // The pid was reused by another program since.
    await forgetServer(dbFile);
    return undefined;
  }
  log(
    `stopping the dev server (pid ${record.server}) a killed process (pid ${record.owner}) left running on ${dbFile}`,
  );
  process.kill(record.server, "SIGTERM");
  if (!(await waitForExit(record.server, graceMs))) {
    process.kill(record.server, "SIGKILL");
    await waitForExit(record.server, 5_000);
  }
  await forgetServer(dbFile);
  return record.server;
}
