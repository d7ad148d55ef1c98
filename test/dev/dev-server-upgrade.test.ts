/**
 * Why `rewind dev` sets its own server up: the dev server registers temporal-dev.yml's search
 * attributes when it creates its SQLite file, not one a later release adds to the file, so a
 * developer's `.rewind/temporal.sqlite` from an earlier release lacks it and the worker and the
 * API would refuse to start. setupNamespace, which `rewind dev` runs after the server is up,
 * registers what is missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { loadDevServerConfig, startDevServer, startOnFreePort, type DevServerConfig } from "../../src/dev/index.ts";
import { connectClient } from "../../src/temporal/connection.ts";
import { inspectNamespace } from "../../src/temporal/namespace-readiness.ts";
import { setupNamespace } from "../../src/temporal/namespace-setup.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

const dir = mkdtempSync(path.join(tmpdir(), "rewind-dev-upgrade-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withServer<T>(
  config: DevServerConfig,
  dbFile: string,
  use: (address: string) => Promise<T>,
): Promise<T> {
  const server = await startOnFreePort((port) =>
    startDevServer({ cliPath: inject("temporalCliPath"), config, port, uiPort: false, dbFile }),
  );
  try {
    return await use(server.address);
  } finally {
    await server.stop();
  }
}

describe("the embedded server on a SQLite file from an earlier release", () => {
  it("lacks the search attributes added since, until setup registers them", async () => {
    const shipped = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
    const { RewindStatus: _added, ...earlier } = shipped.searchAttributes;
    const dbFile = path.join(dir, "temporal.sqlite");
    await withServer({ ...shipped, searchAttributes: earlier }, dbFile, async () => undefined);

    const state = await withServer(shipped, dbFile, async (address) => {
      const connection = await connectClient({ address });
      try {
        const before = await inspectNamespace(connection, shipped.namespace);
        const report = await setupNamespace(connection, { namespace: shipped.namespace, address, retentionDays: 1 });
        return { before, report, after: await inspectNamespace(connection, shipped.namespace) };
      } finally {
        await connection.close();
      }
    });
    expect(state.before).toMatchObject({ kind: "present", missing: [{ name: "RewindStatus", type: "KEYWORD" }] });
    expect(state.report.ready).toBe(true);
    expect(state.report.steps).toContain("search attributes: registered RewindStatus (Keyword)");
    expect(state.after).toEqual({ kind: "present", missing: [], mistyped: [] });
  });
});
