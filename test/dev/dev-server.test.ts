/**
 * The dev server as tests and `npm start` see it: the global setup's server answers with the
 * namespace and Rewind's search attributes, a server we start can be stopped and frees its port,
 * and the ways a start goes wrong (busy port, a binary that dies) come back as clear errors. A
 * server whose owner was killed outright is stopped by the next start on its SQLite file; one
 * whose owner lives is left alone.
 */

import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { connectClient } from "../../src/temporal/index.ts";
import { loadDevServerConfig, startDevServer } from "../../src/dev/index.ts";
import { serverRecordPath } from "../../src/dev/orphaned-server.ts";
import { isAlive } from "../../src/dev/process-alive.ts";
import { getFreePort, isPortFree } from "../helpers/free-port.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..", "..");
/** `IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD` (@temporalio/proto is not a direct dependency). */
const KEYWORD = 2;

describe("the shared dev server from the global setup", () => {
  it("serves the default namespace with Rewind's search attributes as Keyword", async () => {
    const connection = await connectClient({ address: inject("temporalAddress") });
    try {
      const namespace = inject("temporalNamespace");
      expect(namespace).toBe("default");
      const described = await connection.workflowService.describeNamespace({ namespace });
      expect(described.namespaceInfo?.name).toBe("default");
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      for (const name of ["RewindToolset", "RewindEndUser", "RewindNamespace", "RewindStatus"]) {
        expect(customAttributes?.[name], name).toBe(KEYWORD);
      }
    } finally {
      await connection.close();
    }
  });
});

describe("startDevServer", () => {
  it("starts a second headless server on a given port and stops it, freeing the port", async () => {
    const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
    const port = await getFreePort();
    const lines: string[] = [];
    const server = await startDevServer({
      cliPath: inject("temporalCliPath"),
      config,
      port,
      uiPort: false,
      log: (l) => lines.push(l),
    });
    expect(server.address).toBe(`127.0.0.1:${port}`);
    expect(server.uiUrl).toBeUndefined();
    expect(lines).toEqual([
      expect.stringMatching(/^Temporal dev server at 127\.0\.0\.1:\d+ \(headless, in memory\) ready in \d+ ms$/),
    ]);
    await server.stop();
    await server.stop();
    expect(await isPortFree(port)).toBe(true);
  });

  it("refuses a busy gRPC port before spawning anything", async () => {
    const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
    const holder = await listen();
    try {
      const port = (holder.address() as { port: number }).port;
      const attempt = startDevServer({ cliPath: "/nonexistent", config, port, uiPort: false });
      await expect(attempt).rejects.toThrow(`The Temporal gRPC port 127.0.0.1:${port} is already in use.`);
    } finally {
      holder.close();
    }
  });

  it("reports the server's last output when it exits before answering", async () => {
    const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
    const dir = await mkdtemp(join(tmpdir(), "rewind-dev-"));
    try {
      const broken = join(dir, "temporal");
      await writeFile(broken, "#!/bin/sh\necho 'unable to start: boom' >&2\nexit 3\n");
      await chmod(broken, 0o755);
      const attempt = startDevServer({ cliPath: broken, config, port: await getFreePort(), uiPort: false });
      await expect(attempt).rejects.toThrow(
        /failed to start: the server exited before it was ready: exit code 3[\s\S]*unable to start: boom/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("stops a server whose owner was killed outright when the next start uses its SQLite file", async () => {
    const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
    const dir = await mkdtemp(join(tmpdir(), "rewind-orphan-"));
    const dbFile = join(dir, "temporal.sqlite");
    const port = await getFreePort();
    const owner = spawn(
      process.execPath,
      [
        "--no-node-snapshot",
        "--disable-warning=ExperimentalWarning",
        join(REPO_ROOT, "test/fixtures/dev-server-owner.ts"),
        inject("temporalCliPath"),
        String(port),
        dbFile,
      ],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      let output = "";
      const orphanPid = await new Promise<number>((resolvePid, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the owner did not start its server in 60 s: ${output}`)),
          60_000,
        );
        const read = (chunk: Buffer) => {
          output += chunk.toString();
          const ready = /ready (\d+)/.exec(output);
          if (ready) {
            clearTimeout(timer);
            resolvePid(Number(ready[1]));
          }
        };
        owner.stdout.on("data", read);
        owner.stderr.on("data", read);
        owner.once("exit", (code, signal) => reject(new Error(`the owner exited (${code ?? signal}): ${output}`)));
      });
      owner.removeAllListeners("exit");
      const ownerGone = new Promise((resolveExit) => owner.once("exit", resolveExit));
      owner.kill("SIGKILL");
      await ownerGone;
      expect(isAlive(orphanPid), "the server outlived its owner").toBe(true);
      expect(await isPortFree(port)).toBe(false);

      const lines: string[] = [];
      const server = await startDevServer({
        cliPath: inject("temporalCliPath"),
        config,
        port,
        uiPort: false,
        dbFile,
        log: (line) => lines.push(line),
      });
      try {
        expect(lines[0]).toBe(
          `stopping the dev server (pid ${orphanPid}) a killed process (pid ${owner.pid}) left running on ${dbFile}`,
        );
        expect(isAlive(orphanPid)).toBe(false);
        const record = JSON.parse(await readFile(serverRecordPath(dbFile), "utf8")) as {
          server: number;
          owner: number;
        };
        expect(record.owner).toBe(process.pid);
        expect(record.server).not.toBe(orphanPid);
      } finally {
        await server.stop();
      }
      await expect(readFile(serverRecordPath(dbFile), "utf8"), "a stopped server's record is removed").rejects.toThrow(
        /ENOENT/,
      );
    } finally {
      owner.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("leaves alone a server on the same SQLite file whose owner is alive", async () => {
    const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
    const dir = await mkdtemp(join(tmpdir(), "rewind-owned-"));
    const dbFile = join(dir, "temporal.sqlite");
    const port = await getFreePort();
    const first = await startDevServer({ cliPath: inject("temporalCliPath"), config, port, uiPort: false, dbFile });
    try {
      const { server: firstPid } = JSON.parse(await readFile(serverRecordPath(dbFile), "utf8")) as { server: number };
      const second = startDevServer({ cliPath: inject("temporalCliPath"), config, port, uiPort: false, dbFile });
      await expect(second).rejects.toThrow(`The Temporal gRPC port 127.0.0.1:${port} is already in use.`);
      expect(isAlive(firstPid)).toBe(true);
      const connection = await connectClient({ address: first.address });
      await connection.close();
    } finally {
      await first.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

async function listen(): Promise<Server> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => done(server));
  });
}
