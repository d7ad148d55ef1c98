/**
 * Pruning the payload store: the file and S3 listings (what is listed, what a delete keeps), then
 * `prunePayloads` and `rewind payloads prune` against the real stack with its own payload
 * directory: a completed run's 1 MB result goes once it is older than the cut-off and the run
 * closed before it, an open run's stays whatever its age and the run then completes with it, a
 * dry run deletes nothing, and a payload younger than the cut-off is kept.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { access, mkdir, mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { Payload } from "@temporalio/common";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFileDriver, payloadFileOf } from "../../src/payloads/file-driver.ts";
import { collectReferences, prunePayloads } from "../../src/payloads/prune.ts";
import { createS3Driver } from "../../src/payloads/s3-driver.ts";
import {
  fileStoreListing,
  s3StoreListing,
  type PayloadStoreListing,
  type StoredPayload,
} from "../../src/payloads/store-listing.ts";
import { deliverSignal } from "../../src/workflows/run/messages.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { startS3Server, type S3Server } from "../helpers/s3-server.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

const text = (s: string) => new TextEncoder().encode(s);
const payload = (value: string): Payload => ({
  metadata: { encoding: text("json/plain") },
  data: text(JSON.stringify(value)),
});
const DAY = 86_400_000;

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

async function listAll(listing: PayloadStoreListing): Promise<StoredPayload[]> {
  const all: StoredPayload[] = [];
  for await (const item of listing.list()) all.push(item);
  return all;
}

async function storeIn(dir: string, values: string[]): Promise<string[]> {
  const claims = await createFileDriver({ dir }).store({}, values.map(payload));
  return claims.map((claim) => claim.claimData["sha256"] ?? "");
}

describe("file store listing", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "rewind-listing-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lists stored payloads with size and mtime, and nothing else in the directory", async () => {
    const [a, b] = await storeIn(dir, ["a".repeat(1000), "b"]);
    if (!a || !b) throw new Error("no claims");
    // Things that are not payloads: a write in progress, stray files, a hash in the wrong shard, a directory.
    await writeFile(path.join(dir, a.slice(0, 2), `.${a}.${randomUUID()}.tmp`), "partial");
    await writeFile(path.join(dir, "README"), "not a payload");
    await writeFile(path.join(dir, a.slice(0, 2), "notes.txt"), "not a payload");
    const wrongShard = b.slice(0, 2) === "00" ? "01" : "00";
    await mkdir(path.join(dir, wrongShard), { recursive: true });
    await writeFile(path.join(dir, wrongShard, b), "misplaced");
    await mkdir(path.join(dir, "ff", "f".repeat(64)), { recursive: true });

    const listed = await listAll(fileStoreListing(dir));
    expect(listed.map((item) => item.hash).sort()).toEqual([a, b].sort());
    for (const item of listed) {
      const info = await stat(payloadFileOf(dir, item.hash));
      expect(item.location).toBe(payloadFileOf(dir, item.hash));
      expect(item.size).toBe(info.size);
      expect(item.modifiedAt.getTime()).toBe(info.mtime.getTime());
    }
    expect(listed.find((item) => item.hash === a)?.size).toBeGreaterThan(1000);
  });

  it("deletes only a payload written before the cut-off, checked again at the delete", async () => {
    const [hash] = await storeIn(dir, ["to delete"]);
    const listing = fileStoreListing(dir);
    const item = (await listAll(listing)).find((entry) => entry.hash === hash);
    if (!item) throw new Error("not listed");
    expect(await listing.delete(item, new Date(item.modifiedAt.getTime() - 1000))).toBe(false);
    expect(await exists(item.location)).toBe(true);
    expect(await listing.delete(item, new Date(Date.now() + 1000))).toBe(true);
    expect(await exists(item.location)).toBe(false);
    expect(await listing.delete(item, new Date(Date.now() + 1000))).toBe(false);
  });

  it("storing bytes that are already there makes their file young again", async () => {
    const [hash] = await storeIn(dir, ["stored twice"]);
    const file = payloadFileOf(dir, hash ?? "");
    const old = new Date(Date.now() - 2 * DAY);
    await utimes(file, old, old);
    const before = Date.now() - 1000;
    await storeIn(dir, ["stored twice"]);
    expect((await stat(file)).mtime.getTime()).toBeGreaterThan(before);
  });

  it("lists nothing for a directory that does not exist", async () => {
    expect(await listAll(fileStoreListing(path.join(dir, "missing")))).toEqual([]);
  });
});

describe("S3 store listing", () => {
  let server: S3Server;
  let s3: S3Client;
  beforeAll(async () => {
    server = await startS3Server();
    s3 = server.client();
  });
  afterAll(async () => {
    s3?.destroy();
    await server?.stop();
  });

  it("lists <prefix>/<sha256> objects only, and deletes only those written before the cut-off", async () => {
    const bucket = await server.createBucket(`rewind-prune-${randomUUID().slice(0, 8)}`);
    const claims = await createS3Driver({ bucket, prefix: "payloads", client: s3 }).store({}, [
      payload("one"),
      payload("two"),
    ]);
    await createS3Driver({ bucket, prefix: "other", client: s3 }).store({}, [payload("elsewhere")]);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "payloads/notes.txt", Body: "not a payload" }));
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: `payloads/deeper/${"a".repeat(64)}`, Body: "not a payload" }),
    );

    const listing = s3StoreListing({ bucket, prefix: "payloads", client: s3 });
    const listed = await listAll(listing);
    expect(listed.map((item) => item.hash).sort()).toEqual(claims.map((claim) => claim.claimData["sha256"]).sort());
    for (const item of listed) {
      expect(item.location).toBe(`s3://${bucket}/payloads/${item.hash}`);
      expect(item.size).toBeGreaterThan(0);
      expect(Math.abs(item.modifiedAt.getTime() - Date.now())).toBeLessThan(60_000);
    }
    const [first] = listed;
    if (!first) throw new Error("nothing listed");
    expect(await listing.delete(first, new Date(first.modifiedAt.getTime() - 1000))).toBe(false);
    expect(await listing.delete(first, new Date(Date.now() + 5000))).toBe(true);
    expect(await listing.delete(first, new Date(Date.now() + 5000))).toBe(false);
    expect((await listAll(listing)).map((item) => item.hash)).toEqual(listed.slice(1).map((item) => item.hash));
    expect(await listAll(s3StoreListing({ bucket, prefix: "other", client: s3 }))).toHaveLength(1);
  }, 120_000);
});

describe("pruning against Temporal", () => {
  let dir: string;
  let stack: RewindStack;
  let server: TestMcpServer;
  let toolset: string;
  let calls = 0;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "rewind-prune-"));
    stack = await startRewindStack({ env: { REWIND_PAYLOAD_STORE: `file:${dir}` } });
    server = await startMcpServer({
      tools: [
        {
          name: "big",
          inputSchema: { type: "object", properties: {} },
          // 1 MB of text, different for every call so no two runs share a stored payload.
          handler: async () => ({ content: [{ type: "text", text: `${++calls}:`.padEnd(1_000_000, "x") }] }),
        },
      ],
    });
    toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
  });
  afterAll(async () => {
    await stack?.stop();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function referencesOf(id: string): Promise<string[]> {
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const hashes = new Set<string>();
    collectReferences(history, (hash) => hashes.add(hash));
    return [...hashes];
  }

  const listed = async () => (await listAll(fileStoreListing(dir))).map((item) => item.hash).sort();

  it("keeps what open and recently closed runs reference and what is young; deletes the rest; the open run completes", async () => {
    const storage = fileStoreListing(dir);

    // A run that completed: its 1 MB result is stored, its history holds the reference.
    const done = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
export default async () => { const t = await svc.big({}); return (t as unknown as string).length; }`,
    });
    const completed = await waitForRun(stack, done, 120_000);
    expect(completed.status, JSON.stringify(completed.error)).toBe("completed");
    expect(completed.result).toBe(1_000_000);
    const doneRefs = await referencesOf(done);
    expect(doneRefs.length).toBeGreaterThan(0);

    // A run still open: it fetched 1 MB and waits for a signal.
    const open = await startRun(stack, {
      toolset,
      script: `import { svc, waitForSignal } from "rewind:tools";
export default async () => { const t = await svc.big({}); await waitForSignal("go"); return (t as unknown as string).length; }`,
    });
    const openRefs = await waitFor(
      "the open run's stored result",
      async () => {
        const refs = await referencesOf(open);
        return refs.length > 0 ? refs : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    // Visibility lists it as running (it lags history a little).
    await waitFor(
      "the open run in visibility",
      async () => {
        for await (const info of stack.client.workflow.list({
          query: `WorkflowId = '${open}' AND ExecutionStatus = 'Running'`,
        }))
          return info;
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(doneRefs.some((hash) => openRefs.includes(hash))).toBe(false);

    // A payload nothing references.
    const [orphan = ""] = await storeIn(dir, ["nobody refers to this"]);
    const everything = await listed();
    for (const hash of [...doneRefs, ...openRefs, orphan]) expect(everything).toContain(hash);
    // Stored on their way and in no history: a step run as a local activity (speculative steps
    // off) takes the 1 MB result in its input, which is stored but never recorded; were the step
    // retried, its input would be stored again.
    const strays = everything.filter((hash) => ![...doneRefs, ...openRefs, orphan].includes(hash));

    // A dry run deletes nothing but says what would go: the completed run's payloads, the orphan
    // and the strays.
    const dry = await prunePayloads({ client: stack.client, storage, olderThanMs: 0, dryRun: true });
    expect(dry).toMatchObject({
      dryRun: true,
      deleted: doneRefs.length + 1 + strays.length,
      kept: everything.length - doneRefs.length - 1 - strays.length,
    });
    expect(dry.bytesDeleted).toBeGreaterThan(1_000_000 * doneRefs.length);
    expect(dry.referenced).toBeGreaterThanOrEqual(openRefs.length);
    expect(await listed()).toEqual(everything);

    // Every file two days old, the cut-off an hour: the completed run closed after the cut-off, so
    // its history is still readable and keeps its payloads; the old orphan and strays go; a new one stays.
    const old = new Date(Date.now() - 2 * DAY);
    for (const hash of everything) await utimes(payloadFileOf(dir, hash), old, old);
    const [young = ""] = await storeIn(dir, ["written just now"]);
    const hour = await prunePayloads({ client: stack.client, storage, olderThanMs: 3_600_000 });
    expect(hour).toMatchObject({ dryRun: false, deleted: 1 + strays.length, kept: everything.length - strays.length });
    expect(await listed()).toEqual(
      [...everything.filter((hash) => hash !== orphan && !strays.includes(hash)), young].sort(),
    );

    // Cut-off now: the completed run's payloads and the young orphan go; the open run's stay,
    // however old they are.
    const now = await prunePayloads({ client: stack.client, storage, olderThanMs: 0 });
    expect(now).toMatchObject({ deleted: doneRefs.length + 1, kept: openRefs.length });
    expect(now.bytesDeleted).toBeGreaterThan(1_000_000 * doneRefs.length);
    for (const hash of openRefs) expect(await exists(payloadFileOf(dir, hash))).toBe(true);
    for (const hash of [...doneRefs, orphan, young]) expect(await exists(payloadFileOf(dir, hash))).toBe(false);

    // The open run reads its result back and completes; its journal still shows the 1 MB.
    await stack.client.workflow.getHandle(open).signal(deliverSignal, { name: "go", payload: null });
    const finished = await waitForRun(stack, open, 120_000);
    expect(finished.status, JSON.stringify(finished.error)).toBe("completed");
    expect(finished.result).toBe(1_000_000);
    const journal = await stack.request("GET", `/v1/runs/${open}/journal`);
    expect(journal.status, JSON.stringify(journal.body).slice(0, 300)).toBe(200);
    const entries = journal.body["entries"] as { tool: string; result?: unknown }[];
    const big = entries.find((entry) => entry.tool === "svc.big");
    expect(String(big?.result).length).toBe(1_000_000);

    // Closed now, its payloads go too once the cut-off passes its close.
    // (Besides its own, reading the journal stored a large query answer that no history refers to.)
    const remaining = await listed();
    expect(remaining).toEqual(expect.arrayContaining(await referencesOf(open)));
    const after = await prunePayloads({ client: stack.client, storage, olderThanMs: 0 });
    expect(after).toMatchObject({ deleted: remaining.length, kept: 0 });
    expect(await listed()).toEqual([]);
  }, 300_000);

  it("rewind payloads prune: defaults to the namespace's retention, --json, --dry-run, wrong arguments", async () => {
    const [hash = ""] = await storeIn(dir, ["for the command"]);
    const cli = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [
          "--no-node-snapshot",
          "--disable-warning=ExperimentalWarning",
          path.join(REPO_ROOT, "src/cli/main.ts"),
          "payloads",
          ...args,
        ],
        {
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: stack.address,
            TEMPORAL_NAMESPACE: stack.config.temporal.namespace,
            REWIND_PAYLOAD_STORE: `file:${dir}`,
            REWIND_STATE_DIR: stack.config.stateDir,
          },
        },
      ).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          stdout: error.stdout,
          stderr: error.stderr,
        }),
      );

    const retention = await cli("prune", "--json");
    expect(retention.code, retention.stderr).toBe(0);
    const kept = JSON.parse(retention.stdout) as Record<string, unknown>;
    expect(kept).toMatchObject({ store: dir, deleted: 0, kept: 1, dryRun: false });
    expect(kept["olderThanMs"]).toBeGreaterThan(0);

    const dry = await cli("prune", "--older-than", "0s", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("would delete 1 payload");
    expect(await exists(payloadFileOf(dir, hash))).toBe(true);

    const real = await cli("prune", "--older-than", "0s", "--json");
    expect(real.code, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ deleted: 1, kept: 0, olderThanMs: 0, dryRun: false });
    expect(await exists(payloadFileOf(dir, hash))).toBe(false);

    const wrong = await cli("prune", "--older-than", "soon");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--older-than");
    const unknown = await cli("purge");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("prune");
  }, 120_000);
});
