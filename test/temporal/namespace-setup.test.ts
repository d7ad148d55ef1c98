/**
 * `rewind setup` and the start-up checks, against the test run's Temporal dev server: setup
 * creates a missing namespace and registers Rewind's search attributes, and a second run changes
 * nothing; the API and the worker refuse to start, with one sentence naming what is missing and
 * `rewind setup`, on a namespace that is missing or lacks the attributes, and against a cluster
 * without REWIND_SECRET_KEY; where the cluster refuses, setup answers what the operator must run.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { type Connection } from "@temporalio/client";
import { connectClient } from "../../src/temporal/index.ts";
import { msToTs } from "@temporalio/common/lib/time.js";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { indexedValueType, inspectNamespace, notReadySentence } from "../../src/temporal/namespace-readiness.ts";
import { setupNamespace } from "../../src/temporal/namespace-setup.ts";
import { SEARCH_ATTRIBUTES } from "../../src/shared/run.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { runRewind, spawnRewind } from "../helpers/rewind-process.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";

const address = inject("temporalAddress");
// Written out from SEARCH_ATTRIBUTES (src/shared/run.ts), the one list runs write: e.g.
// "RewindToolset (Keyword), RewindEndUser (Keyword), …, RewindStartedAt (Datetime)".
const LABEL = {
  KEYWORD: "Keyword",
  DATETIME: "Datetime",
  TEXT: "Text",
  INT: "Int",
  DOUBLE: "Double",
  BOOL: "Bool",
  KEYWORD_LIST: "KeywordList",
} as const;
const REQUIRED = Object.values(SEARCH_ATTRIBUTES);
const NAMES = REQUIRED.map((a) => a.name);
const listed = (attributes: readonly { name: string; type: keyof typeof LABEL }[]) =>
  attributes.map((a) => `${a.name} (${LABEL[a.type]})`).join(", ");
const ATTRIBUTES = listed(REQUIRED);
let connection: Connection;

const freshName = () => `setup-${randomUUID().slice(0, 8)}`;
const env = (namespace: string, extra: Record<string, string> = {}) => ({
  TEMPORAL_ADDRESS: address,
  TEMPORAL_NAMESPACE: namespace,
  REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
  REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"),
  REWIND_PORT: "0",
  REWIND_TASK_QUEUE: `setup-${randomUUID()}`,
  ...extra,
});
/** A namespace as a cluster admin would create it by hand: no search attributes. */
const createBare = (namespace: string) =>
  connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(86_400_000) });

beforeAll(async () => {
  connection = await connectClient({ address });
});
afterAll(async () => {
  await connection?.close();
});

describe("rewind setup", () => {
  it("creates a missing namespace with Rewind's search attributes, and a second run changes nothing", async () => {
    const namespace = freshName();
    const first = await runRewind(["setup", "--retention", "3d"], env(namespace));
    expect(first.output).toBe(
      [
        `Temporal ${address} (plaintext (no TLS)), namespace "${namespace}"`,
        `  namespace "${namespace}": created (retention 3 days)`,
        `  search attributes: registered ${ATTRIBUTES}`,
        "ready: `rewind api` and `rewind worker` can start with these settings",
        "",
      ].join("\n"),
    );
    expect(first.code).toBe(0);
    const described = await connection.workflowService.describeNamespace({ namespace });
    expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds)).toBe(3 * 86_400);
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    for (const attribute of REQUIRED)
      expect(listed.customAttributes?.[attribute.name], attribute.name).toBe(indexedValueType(attribute.type));

    const again = await runRewind(["setup", "--json"], env(namespace));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.output)).toEqual({
      address,
      namespace,
      ready: true,
      operatorActions: [],
      steps: [`namespace "${namespace}": exists`, `search attributes: ${NAMES.join(", ")} already registered`],
    });
  });

  it("registers only the attributes a namespace lacks", async () => {
    const namespace = freshName();
    await createBare(namespace);
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: { RewindToolset: indexedValueType("KEYWORD") },
    });
    const report = await setupNamespace(connection, { namespace, address, retentionDays: 1 });
    expect(report).toEqual({
      ready: true,
      operatorActions: [],
      steps: [
        `namespace "${namespace}": exists`,
        "search attributes: RewindToolset already registered",
        `search attributes: registered ${listed(REQUIRED.filter((a) => a.name !== "RewindToolset"))}`,
      ],
    });
  });

  it("answers Temporal Cloud's commands when the cluster refuses to create the namespace", async () => {
    // A retention under a day is refused by the server itself: a real refusal, as Cloud's would be.
    const namespace = freshName();
    const report = await setupNamespace(connection, {
      namespace,
      address: "rewind.a1b2c.tmprl.cloud:7233",
      retentionDays: 0,
    });
    expect(report.ready).toBe(false);
    expect(report.steps).toEqual([
      `namespace "${namespace}": not created, the cluster refused (A valid retention period is not set on request.)`,
    ]);
    expect(report.operatorActions).toEqual([
      `create the namespace in the Temporal Cloud UI (Namespaces → Create Namespace) or with: tcld namespace create --namespace ${namespace} --region <region> --retention-days 0`,
      `tcld namespace search-attributes add --namespace ${namespace} ${REQUIRED.map((a) => `--search-attribute "${a.name}=${LABEL[a.type]}"`).join(" ")}`,
      `(or in the Temporal Cloud UI: the namespace's page → Custom Search Attributes → add ${ATTRIBUTES})`,
    ]);
  });

  it("answers the temporal CLI's commands when a self-hosted cluster refuses the search attributes", async () => {
    // SQL visibility holds at most 10 Keyword attributes per namespace: the 11th is refused.
    const namespace = freshName();
    const many = Array.from({ length: 11 }, (_, i) => ({ name: `Many${i}`, type: "KEYWORD" as const }));
    const report = await setupNamespace(connection, { namespace, address, retentionDays: 1, attributes: many });
    expect(report.ready).toBe(false);
    expect(report.steps[1]).toMatch(
      /^search attributes: Many0 \(Keyword\), .* not registered, the cluster refused \(.*cannot have more than 10 search attribute of type Keyword/,
    );
    expect(report.operatorActions).toHaveLength(11);
    expect(report.operatorActions[10]).toBe(
      `temporal operator search-attribute create --namespace ${namespace} --name Many10 --type Keyword   (as a cluster admin)`,
    );
  });

  it("cannot fix an attribute registered with another type, and says so", async () => {
    const namespace = freshName();
    await createBare(namespace);
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: { RewindStatus: indexedValueType("TEXT") },
    });
    const report = await setupNamespace(connection, { namespace, address, retentionDays: 1 });
    expect(report.ready).toBe(false);
    expect(report.steps.at(-1)).toBe(
      `Temporal namespace "${namespace}" at ${address} has Rewind's search attributes with the wrong type (RewindStatus is Text, not Keyword): remove them (temporal operator search-attribute delete) and run \`rewind setup\` (with the same TEMPORAL_* settings) to register them again.`,
    );
  });

  it("needs TEMPORAL_ADDRESS, and a retention in whole days", async () => {
    expect(await runRewind(["setup"], { REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind") })).toEqual({
      code: 1,
      output: "rewind: rewind setup needs TEMPORAL_ADDRESS (the embedded dev server of `rewind dev` sets itself up)\n",
    });
    const bad = await runRewind(["setup", "--retention", "36h"], env(freshName()));
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(
      /^rewind: --retention must be a whole number of days, at least 1 \(e\.g\. 30d\), got "36h"/,
    );
  });
});

describe("start-up checks", () => {
  it("the API exits non-zero on a namespace without Rewind's search attributes, and starts after rewind setup", async () => {
    const namespace = freshName();
    await createBare(namespace);
    const refused = await runRewind(["api"], env(namespace));
    expect(refused).toEqual({
      code: 1,
      output: `rewind: Temporal namespace "${namespace}" at ${address} lacks Rewind's search attributes ${ATTRIBUTES}: run \`rewind setup\` (with the same TEMPORAL_* settings) to register them.\n`,
    });
    expect((await runRewind(["setup"], env(namespace))).code).toBe(0);
    const api = spawnRewind(["api"], env(namespace));
    try {
      await api.waitFor(/Rewind API http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await api.stop();
    }
  });

  it("the worker exits non-zero on a missing namespace instead of polling it forever", async () => {
    const namespace = freshName();
    const refused = await runRewind(["worker"], env(namespace, { REWIND_PUBLIC_URL: "https://rewind.example.com" }));
    expect(refused).toEqual({
      code: 1,
      output: `rewind: Temporal namespace "${namespace}" does not exist at ${address}: run \`rewind setup\` (with the same TEMPORAL_* settings) to create it, or create it in Temporal Cloud and set TEMPORAL_NAMESPACE.\n`,
    });
    expect(await inspectNamespace(connection, namespace)).toEqual({ kind: "missing" });
  });

  it("TEMPORAL_ADDRESS without REWIND_SECRET_KEY is a start-up error for the API and the worker", async () => {
    const { REWIND_SECRET_KEY: _key, ...withoutKey } = env("default", {
      REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind", `no-key-${randomUUID()}`),
    });
    const sentence =
      "rewind: REWIND_SECRET_KEY is required with TEMPORAL_ADDRESS: give the API and every worker the same key (32 bytes, base64, e.g. `openssl rand -base64 32`), or webhook URLs and credentials sealed by one process are refused by the others\n";
    expect(await runRewind(["api"], withoutKey)).toEqual({ code: 1, output: sentence });
    const worker = await runRewind(["worker"], withoutKey);
    expect(worker.code).toBe(1);
    expect(worker.output.endsWith(sentence)).toBe(true);
  });

  it("a worker without REWIND_PUBLIC_URL says what it is for; one that is not an http(s) URL does not start", async () => {
    const worker = spawnRewind(["worker"], env("default"));
    try {
      await worker.waitFor(/worker started/);
      expect(worker.output()).toContain(
        "REWIND_PUBLIC_URL is not set: the URLs webhook(name) gives scripts on this worker start with http://127.0.0.1:0 (REWIND_HOST:REWIND_PORT), which works only if harnesses reach the API there; set it to the URL harnesses reach the API at",
      );
    } finally {
      await worker.stop();
    }
    const bad = await runRewind(["worker"], env("default", { REWIND_PUBLIC_URL: "rewind.example.com" }));
    expect(bad).toEqual({
      code: 1,
      output:
        'rewind: REWIND_PUBLIC_URL must be the http(s) URL harnesses reach the API at, without query or credentials (e.g. https://rewind.example.com), got "rewind.example.com"\n',
    });
  });

  it("names the missing attributes in one sentence", async () => {
    const namespace = freshName();
    await createBare(namespace);
    const state = await inspectNamespace(connection, namespace);
    expect(notReadySentence(state, namespace, address)).toBe(
      `Temporal namespace "${namespace}" at ${address} lacks Rewind's search attributes ${ATTRIBUTES}: run \`rewind setup\` (with the same TEMPORAL_* settings) to register them.`,
    );
  });
});
