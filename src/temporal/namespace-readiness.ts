/**
 * Whether a Temporal namespace is ready for Rewind: it exists, and it has Rewind's search
 * attributes (SEARCH_ATTRIBUTES in src/shared/run.ts) with their types. The API and the worker
 * ask at start and refuse to start with one sentence naming what is missing and `rewind setup`;
 * without it, a missing namespace made the worker poll forever and a missing search attribute
 * made every POST /v1/runs answer 500. `rewind setup` asks the same question after its work.
 */
import { isGrpcServiceError, type Connection } from "@temporalio/client";
import type { SearchAttributeType } from "@temporalio/common";
import proto, { type temporal } from "@temporalio/proto";
import { SEARCH_ATTRIBUTES } from "../shared/index.ts";

/** What the checks call: a client Connection's services, or a worker's NativeConnection's (the same). */
export type TemporalServices = Pick<Connection, "workflowService" | "operatorService">;

/** A search attribute Rewind writes on every run. */
export interface RequiredAttribute {
  name: string;
  type: SearchAttributeType;
}

/** What Rewind needs registered on its namespace, read from the one list the runs use. */
export const REWIND_SEARCH_ATTRIBUTES: readonly RequiredAttribute[] = Object.values(SEARCH_ATTRIBUTES);

const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

/** The server's enum for each type, and the name its tools (`temporal`, `tcld`, the UI) use. */
const TYPES: Record<SearchAttributeType, { indexed: temporal.api.enums.v1.IndexedValueType; label: string }> = {
  TEXT: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_TEXT, label: "Text" },
  KEYWORD: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD, label: "Keyword" },
  INT: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_INT, label: "Int" },
  DOUBLE: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE, label: "Double" },
  BOOL: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_BOOL, label: "Bool" },
  DATETIME: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME, label: "Datetime" },
  KEYWORD_LIST: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST, label: "KeywordList" },
};

export function indexedValueType(type: SearchAttributeType): temporal.api.enums.v1.IndexedValueType {
  return TYPES[type].indexed;
}

/** `Keyword`, `Datetime`…: a type as operators write it. */
export function typeLabel(type: SearchAttributeType): string {
  return TYPES[type].label;
}

function labelOfIndexed(indexed: number): string {
  return Object.values(TYPES).find((t) => t.indexed === indexed)?.label ?? `type ${indexed}`;
}

/** `RewindToolset (Keyword), RewindStartedAt (Datetime)`. */
export function describeAttributes(attributes: readonly RequiredAttribute[]): string {
  return attributes.map((a) => `${a.name} (${typeLabel(a.type)})`).join(", ");
}

export type NamespaceState =
  | { kind: "missing" }
  /** The server would not say (the caller may not describe it): `reason` is its answer. */
  | { kind: "refused"; reason: string }
  | {
      kind: "present";
      /** Unset when the search attributes could not be listed nor probed. */
      missing: RequiredAttribute[] | undefined;
      /** Registered with another type than Rewind writes: setup cannot change that. */
      mistyped: { attribute: RequiredAttribute; actual: string }[];
    };

const GRPC = { invalidArgument: 3, notFound: 5, permissionDenied: 7, unimplemented: 12, unauthenticated: 16 } as const;

export function grpcCode(error: unknown): number | undefined {
  return isGrpcServiceError(error) ? error.code : undefined;
}

export function grpcReason(error: unknown): string {
  if (isGrpcServiceError(error)) return error.details || error.message;
  return error instanceof Error ? error.message : String(error);
}

/** A visibility query that names the attribute, to learn whether the server knows it. */
function probeQuery(attribute: RequiredAttribute): string {
  const value =
    attribute.type === "DATETIME"
      ? "'2000-01-01T00:00:00Z'"
      : attribute.type === "INT" || attribute.type === "DOUBLE"
        ? "0"
        : attribute.type === "BOOL"
          ? "true"
          : "'rewind-setup-probe'";
  return `${attribute.name} = ${value}`;
}

/**
 * Without the operator service's listing (Temporal Cloud may refuse it to a namespace's API key),
 * a count query that names each attribute tells whether the namespace knows it (not its type).
 */
async function probeAttributes(
  connection: TemporalServices,
  namespace: string,
  required: readonly RequiredAttribute[],
): Promise<RequiredAttribute[] | undefined> {
  const missing: RequiredAttribute[] = [];
  for (const attribute of required) {
    try {
      await connection.workflowService.countWorkflowExecutions({ namespace, query: probeQuery(attribute) });
    } catch (error) {
      if (grpcCode(error) !== GRPC.invalidArgument) return undefined;
      missing.push(attribute);
    }
  }
  return missing;
}

/** The custom search attributes of a namespace, name → the server's type enum. */
export async function listCustomAttributes(
  connection: TemporalServices,
  namespace: string,
): Promise<Record<string, number>> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  return (listed.customAttributes ?? {}) as Record<string, number>;
}

/** Looks at the namespace and its search attributes; only a connection failure throws. */
export async function inspectNamespace(
  connection: TemporalServices,
  namespace: string,
  required: readonly RequiredAttribute[] = REWIND_SEARCH_ATTRIBUTES,
): Promise<NamespaceState> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    const code = grpcCode(error);
    if (code === GRPC.notFound) return { kind: "missing" };
    if (code === GRPC.permissionDenied || code === GRPC.unauthenticated)
      return { kind: "refused", reason: grpcReason(error) };
    throw error;
  }
  let custom: Record<string, number>;
  try {
    custom = await listCustomAttributes(connection, namespace);
  } catch (error) {
    const code = grpcCode(error);
    if (code !== GRPC.permissionDenied && code !== GRPC.unimplemented && code !== GRPC.unauthenticated) throw error;
    return { kind: "present", missing: await probeAttributes(connection, namespace, required), mistyped: [] };
  }
  const missing = required.filter((a) => custom[a.name] === undefined);
  const mistyped = required
    .filter((a) => custom[a.name] !== undefined && custom[a.name] !== indexedValueType(a.type))
    .map((attribute) => ({ attribute, actual: labelOfIndexed(custom[attribute.name] ?? 0) }));
  return { kind: "present", missing, mistyped };
}

/** The namespace cannot serve Rewind; the message is the one sentence an operator needs. */
export class NamespaceNotReadyError extends Error {
  override name = "NamespaceNotReadyError";
}

/** One sentence saying what is wrong and what to run, or undefined when nothing is. */
export function notReadySentence(state: NamespaceState, namespace: string, address: string): string | undefined {
  const setup = "`rewind setup` (with the same TEMPORAL_* settings)";
  if (state.kind === "missing")
    return `Temporal namespace "${namespace}" does not exist at ${address}: run ${setup} to create it, or create it in Temporal Cloud and set TEMPORAL_NAMESPACE.`;
  if (state.kind === "refused")
    return `Temporal at ${address} refused access to namespace "${namespace}" (${state.reason}): check TEMPORAL_NAMESPACE and that the API key or client certificate is allowed on it.`;
  if (state.mistyped.length > 0) {
    const list = state.mistyped
      .map((m) => `${m.attribute.name} is ${m.actual}, not ${typeLabel(m.attribute.type)}`)
      .join("; ");
    return `Temporal namespace "${namespace}" at ${address} has Rewind's search attributes with the wrong type (${list}): remove them (temporal operator search-attribute delete) and run ${setup} to register them again.`;
  }
  if (state.missing && state.missing.length > 0)
    return `Temporal namespace "${namespace}" at ${address} lacks Rewind's search attributes ${describeAttributes(state.missing)}: run ${setup} to register them.`;
  return undefined;
}

/**
 * Throws NamespaceNotReadyError unless the namespace exists with Rewind's search attributes.
 * Answers a warning when they could not be checked (the server would neither list nor probe them).
 */
export async function requireNamespaceReady(
  connection: TemporalServices,
  namespace: string,
  address: string,
): Promise<string | undefined> {
  const state = await inspectNamespace(connection, namespace);
  const sentence = notReadySentence(state, namespace, address);
  if (sentence) throw new NamespaceNotReadyError(sentence);
  if (state.kind === "present" && state.missing === undefined)
    return `could not check Rewind's search attributes on Temporal namespace "${namespace}" (the server refused to list them); if runs fail to start, run \`rewind setup\``;
  return undefined;
}
