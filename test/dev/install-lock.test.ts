/**
 * The install lock keeps two processes from installing the CLI into one state dir at once, and
 * never leaves a user stuck behind a lock whose owner died.
 */

import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireInstallLock } from "../../src/dev/install-lock.ts";
import { waitFor } from "../helpers/wait-for.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "rewind-lock-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("acquireInstallLock", () => {
  it("makes a second holder wait until the first releases", async () => {
    const lockDir = join(root, "install.lock");
    const order: string[] = [];
    const releaseFirst = await acquireInstallLock(lockDir);
    let waitedFor: number | undefined;
    const second = acquireInstallLock(lockDir, { onWait: (pid) => (waitedFor = pid) }).then((release) => {
      order.push("second acquired");
      return release;
    });
    await waitFor("the second holder to wait", () => waitedFor !== undefined, { timeoutMs: 5_000, intervalMs: 20 });
    order.push("first releases");
    await releaseFirst();
    const releaseSecond = await second;
    expect(order).toEqual(["first releases", "second acquired"]);
    expect(waitedFor).toBe(process.pid);
    await releaseSecond();
    await expect(stat(lockDir)).rejects.toThrow(/ENOENT/);
  });

  it("takes over a lock whose owner process is gone", async () => {
    const lockDir = join(root, "install.lock");
    await mkdir(lockDir);
    await writeFile(join(lockDir, "owner"), "2147483646"); // no such pid
    const release = await acquireInstallLock(lockDir, { timeoutMs: 2_000 });
    await release();
  });

  it("lets one of many waiters take over a lock whose owner is gone, and holds it alone", async () => {
    const lockDir = join(root, "install.lock");
    await mkdir(lockDir);
    await writeFile(join(lockDir, "owner"), "2147483646");
    let holders = 0;
    let most = 0;
    // Staggered by a few file-system operations, so that a waiter looks at the dead owner's lock
    // while another has just removed it and made its own.
    const takeTurns = async (_: unknown, i: number) => {
      for (let n = 0; n < i % 4; n++) await stat(root);
      const release = await acquireInstallLock(lockDir, { timeoutMs: 20_000 });
      holders += 1;
      most = Math.max(most, holders);
      await new Promise((resolve) => setTimeout(resolve, 20));
      holders -= 1;
      await release();
    };
    await Promise.all(Array.from({ length: 12 }, takeTurns));
    expect(most, "never two holders at once").toBe(1);
    await expect(stat(lockDir)).rejects.toThrow(/ENOENT/);
    await expect(stat(`${lockDir}.takeover`)).rejects.toThrow(/ENOENT/);
  });

  it("gives up after its timeout with a message saying how to clear the lock", async () => {
    const lockDir = join(root, "install.lock");
    const release = await acquireInstallLock(lockDir);
    await expect(acquireInstallLock(lockDir, { timeoutMs: 300 })).rejects.toThrow(/delete that directory/);
    await release();
  });
});
