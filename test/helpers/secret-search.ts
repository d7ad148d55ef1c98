/**
 * Turns the places a secret must never reach into text a test can search: a Temporal history
 * with every payload decoded (a stored payload fetched from the payload store first), log
 * entries with their errors' messages, stacks, causes and details, exported spans with their
 * attributes and events. `JSON.stringify` is not enough: it writes a payload's bytes as numbers
 * and an Error as `{}`, so a search of its output finds nothing and passes.
 */
import type { Client } from "@temporalio/client";
import type { Payload } from "@temporalio/common";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createSecretBox } from "../../src/credentials/secret-box.ts";
import { resolvePayload } from "../../src/payloads/external-storage.ts";
import { TEST_SECRET_KEY } from "./secret-key.ts";

const isPayload = (value: object): value is Payload =>
  "data" in value && value.data instanceof Uint8Array && "metadata" in value && typeof value.metadata === "object";

/** Every string in `value`, bytes decoded as UTF-8, errors with their non-enumerable fields. */
export async function textOf(value: unknown, client?: Client): Promise<string> {
  const parts: string[] = [];
  const seen = new Set<object>();
  async function walk(item: unknown, depth: number): Promise<void> {
    if (depth > 40 || item === null || item === undefined) return;
    if (typeof item === "string") return void parts.push(item);
    if (typeof item === "number" || typeof item === "boolean" || typeof item === "bigint")
      return void parts.push(String(item));
    if (typeof item !== "object" || seen.has(item)) return;
    seen.add(item);
    if (item instanceof Uint8Array) return void parts.push(Buffer.from(item).toString("utf8"));
    if (client && isPayload(item)) {
      const resolved = await resolvePayload(client.options.loadedDataConverter, item);
      if (resolved !== item) await walk(resolved, depth + 1);
    }
    const keys = item instanceof Error ? Object.getOwnPropertyNames(item) : Object.keys(item);
    for (const key of keys) {
      parts.push(key);
      await walk((item as Record<string, unknown>)[key], depth + 1);
    }
  }
  await walk(value, 0);
  return parts.join("\n");
}

/** One workflow execution's history as text, every payload decoded. */
export async function historyText(client: Client, workflowId: string, runId: string): Promise<string> {
  return textOf(await client.workflow.getHandle(workflowId, runId).fetchHistory(), client);
}

/** What the sealed values (`sb1.…`) in `text` hold, opened with the tests' secret key. */
export function openedSecretsIn(text: string): string[] {
  const box = createSecretBox(TEST_SECRET_KEY);
  return [...text.matchAll(/sb1\.[\w-]+\.[\w-]+\.[\w-]*/g)].flatMap(([sealed]) => {
    try {
      return [box.open(sealed)];
    } catch {
      return [];
    }
  });
}

/** A span as text: its name, status, attributes, events, links and resource. */
export function spanText(span: ReadableSpan): Promise<string> {
  return textOf({
    name: span.name,
    status: span.status,
    attributes: span.attributes,
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
    links: span.links.map((l) => l.attributes),
    resource: span.resource.attributes,
  });
}
