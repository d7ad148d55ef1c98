/**
 * What `rewind setup` does to a cluster: create the namespace if it is missing and register
 * Rewind's search attributes, each only when absent, so running it again changes nothing. Where
 * the cluster refuses (Temporal Cloud manages namespaces and, for most keys, search attributes
 * outside the gRPC API; a self-hosted cluster may reserve them for admins), it does not fail
 * vaguely: it answers the exact commands an operator must run instead, then checks again.
 */
import { msToTs } from "@temporalio/common/lib/time.js";
import { setTimeout as sleep } from "node:timers/promises";
import {
  describeAttributes,
  grpcCode,
  grpcReason,
  indexedValueType,
  inspectNamespace,
  listCustomAttributes,
  notReadySentence,
  REWIND_SEARCH_ATTRIBUTES,
  typeLabel,
  type NamespaceState,
  type RequiredAttribute,
  type TemporalServices,
} from "./namespace-readiness.ts";

export interface SetupOptions {
  namespace: string;
  /** Where the cluster is, for what is printed (and to tell Temporal Cloud by its host names). */
  address: string;
  /** Retention of closed runs' histories in a namespace this creates, in days. */
  retentionDays: number;
  /** What to register; default Rewind's search attributes. */
  attributes?: readonly RequiredAttribute[];
  /** How long a new namespace or attribute may take to become visible. Default 30 s. */
  settleMs?: number;
}

export interface SetupReport {
  /** True when the namespace now exists with every attribute: the API and workers can start. */
  ready: boolean;
  /** What was found or done, one line per step. */
  steps: string[];
  /** Commands the operator must run by hand (empty when ready). */
  operatorActions: string[];
}

const GRPC = { alreadyExists: 6, notFound: 5 } as const;

/** Temporal Cloud's endpoints: namespaces and search attributes are managed with tcld or the Cloud UI there. */
export function isTemporalCloud(address: string): boolean {
  const host = address.replace(/:\d+$/, "").toLowerCase();
  return host.endsWith(".tmprl.cloud") || host.endsWith(".api.temporal.io");
}

function createNamespaceActions(options: SetupOptions): string[] {
  if (isTemporalCloud(options.address)) {
    return [
      `create the namespace in the Temporal Cloud UI (Namespaces → Create Namespace) or with: tcld namespace create --namespace ${options.namespace} --region <region> --retention-days ${options.retentionDays}`,
    ];
  }
  return [
    `temporal operator namespace create --namespace ${options.namespace} --retention ${options.retentionDays}d   (as a cluster admin)`,
  ];
}

function addAttributeActions(options: SetupOptions, missing: readonly RequiredAttribute[]): string[] {
  if (isTemporalCloud(options.address)) {
    const flags = missing.map((a) => `--search-attribute "${a.name}=${typeLabel(a.type)}"`).join(" ");
    return [
      `tcld namespace search-attributes add --namespace ${options.namespace} ${flags}`,
      `(or in the Temporal Cloud UI: the namespace's page → Custom Search Attributes → add ${describeAttributes(missing)})`,
    ];
  }
  return missing.map(
    (a) =>
      `temporal operator search-attribute create --namespace ${options.namespace} --name ${a.name} --type ${typeLabel(a.type)}   (as a cluster admin)`,
  );
}

/** Retries `attempt` while the server does not know the namespace yet (a new one takes a moment). */
async function whileNamespaceSettles<T>(settleMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (grpcCode(error) !== GRPC.notFound || Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

async function ensureNamespace(
  connection: TemporalServices,
  options: SetupOptions,
  report: SetupReport,
): Promise<boolean> {
  const state = await inspectNamespace(connection, options.namespace, []);
  if (state.kind === "present") {
    report.steps.push(`namespace "${options.namespace}": exists`);
    return true;
  }
  if (state.kind === "refused") {
    report.steps.push(
      `namespace "${options.namespace}": ${notReadySentence(state, options.namespace, options.address) ?? "refused"}`,
    );
    return false;
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace: options.namespace,
      workflowExecutionRetentionPeriod: msToTs(options.retentionDays * 86_400_000),
      description: "Rewind: runs of model-written scripts",
    });
    report.steps.push(`namespace "${options.namespace}": created (retention ${options.retentionDays} days)`);
  } catch (error) {
    if (grpcCode(error) === GRPC.alreadyExists) {
      report.steps.push(`namespace "${options.namespace}": exists (created meanwhile)`);
    } else {
      report.steps.push(`namespace "${options.namespace}": not created, the cluster refused (${grpcReason(error)})`);
      report.operatorActions.push(
        ...createNamespaceActions(options),
        ...addAttributeActions(options, options.attributes ?? REWIND_SEARCH_ATTRIBUTES),
      );
      return false;
    }
  }
  await whileNamespaceSettles(options.settleMs ?? 30_000, () =>
    connection.workflowService.describeNamespace({ namespace: options.namespace }),
  );
  return true;
}

async function ensureAttributes(
  connection: TemporalServices,
  options: SetupOptions,
  report: SetupReport,
): Promise<void> {
  const required = options.attributes ?? REWIND_SEARCH_ATTRIBUTES;
  const settleMs = options.settleMs ?? 30_000;
  const state = await whileNamespaceSettles(settleMs, () => inspectNamespace(connection, options.namespace, required));
  const missing = state.kind === "present" ? state.missing : undefined;
  if (missing === undefined) {
    report.steps.push("search attributes: the cluster would not list them");
    report.operatorActions.push(...addAttributeActions(options, required));
    return;
  }
  const present = required.filter((a) => !missing.includes(a));
  if (present.length > 0)
    report.steps.push(`search attributes: ${present.map((a) => a.name).join(", ")} already registered`);
  if (missing.length === 0) return;
  try {
    await whileNamespaceSettles(settleMs, () =>
      connection.operatorService.addSearchAttributes({
        namespace: options.namespace,
        searchAttributes: Object.fromEntries(missing.map((a) => [a.name, indexedValueType(a.type)])),
      }),
    );
  } catch (error) {
    if (grpcCode(error) !== GRPC.alreadyExists) {
      report.steps.push(
        `search attributes: ${describeAttributes(missing)} not registered, the cluster refused (${grpcReason(error)})`,
      );
      report.operatorActions.push(...addAttributeActions(options, missing));
      return;
    }
  }
  // Registration reaches every frontend through the namespace cache: wait until the listing shows it.
  const deadline = Date.now() + settleMs;
  while (Date.now() < deadline) {
    const custom = await listCustomAttributes(connection, options.namespace);
    if (missing.every((a) => custom[a.name] !== undefined)) break;
    await sleep(250);
  }
  report.steps.push(`search attributes: registered ${describeAttributes(missing)}`);
}

/** Creates what is missing; answers what was done and what the operator must still do. */
export async function setupNamespace(connection: TemporalServices, options: SetupOptions): Promise<SetupReport> {
  const report: SetupReport = { ready: false, steps: [], operatorActions: [] };
  if (!(await ensureNamespace(connection, options, report))) return report;
  await ensureAttributes(connection, options, report);
  const final: NamespaceState = await inspectNamespace(
    connection,
    options.namespace,
    options.attributes ?? REWIND_SEARCH_ATTRIBUTES,
  );
  const problem = notReadySentence(final, options.namespace, options.address);
  if (problem && report.operatorActions.length === 0) report.steps.push(problem);
  report.ready = problem === undefined && report.operatorActions.length === 0;
  return report;
}
