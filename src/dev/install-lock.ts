/**
 * A cross-process lock for the one-time `temporal` CLI install: `npm start` and a test run (or
 * two test workers) may both find no CLI and start installing into the same `.rewind/venv`. The
 * lock is a directory, because `mkdir` is atomic on every filesystem we care about; it records
 * its owner's pid so a lock left by a killed process is taken over instead of waited on forever.
 *
 * Taking over a stale lock is itself locked (`<lock>.takeover`), and the lock is looked at again
 * under it: two waiters that both saw the dead owner once each removed the lock, and the second
 * removed the one the first had just made (its owner file then failed with ENOENT).
 */

import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "./process-alive.ts";

export interface InstallLockOptions {
  /** Give up waiting for another process after this many milliseconds. Default 20 minutes. */
  timeoutMs?: number;
  /** Called once if we have to wait for another process. */
  onWait?: (ownerPid: number | undefined) => void;
}

/** Takes the lock at `lockDir` and resolves with a function that releases it. */
export async function acquireInstallLock(
  lockDir: string,
  options: InstallLockOptions = {},
): Promise<() => Promise<void>> {
  const deadline = Date.now() + (options.timeoutMs ?? 20 * 60_000);
  let waited = false;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, "owner"), String(process.pid));
      return async () => rm(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const ownerPid = await readOwner(lockDir);
    if (await isStale(lockDir, ownerPid)) {
      await removeIfStillStale(lockDir);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for another temporal CLI install (lock ${lockDir}, pid ${ownerPid ?? "unknown"}); ` +
          `if no install is running, delete that directory`,
      );
    }
    if (!waited) options.onWait?.(ownerPid);
    waited = true;
    await sleep(500);
  }
}

/** Removes the lock if, looked at again while holding the takeover lock, it is still stale. */
async function removeIfStillStale(lockDir: string): Promise<void> {
  const takeover = `${lockDir}.takeover`;
  try {
    await mkdir(takeover);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Another waiter is taking over; a takeover left by a killed waiter is removed after a minute.
    if (await isStale(takeover, undefined)) await rm(takeover, { recursive: true, force: true });
    await sleep(50);
    return;
  }
  try {
    if (await isStale(lockDir, await readOwner(lockDir))) await rm(lockDir, { recursive: true, force: true });
  } finally {
    await rm(takeover, { recursive: true, force: true });
  }
}

async function readOwner(lockDir: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(join(lockDir, "owner"), "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A lock is stale when its owner is gone, or when it never got an owner within a minute. */
async function isStale(lockDir: string, ownerPid: number | undefined): Promise<boolean> {
  if (ownerPid !== undefined) return !isAlive(ownerPid);
  try {
    const { mtimeMs } = await stat(lockDir);
    return Date.now() - mtimeMs > 60_000;
  } catch {
    return true; // removed while we looked: retry at once
  }
}
