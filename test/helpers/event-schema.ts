/**
 * Checks an event a harness received against the OpenAPI document's webhook for its type, with
 * ajv: the document's `webhooks` name each type's body schema, and this follows that reference,
 * so an event whose type has no webhook, or whose body the schema refuses, is reported.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { buildOpenApiDocument } from "../../src/api/openapi.ts";

/** What this reads of a document's webhooks. */
export interface WebhookBodies {
  webhooks?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> } } }>;
}

let document: (WebhookBodies & Record<string, unknown>) | undefined;
let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/** The schema reference the document gives for `type`'s webhook body, if any. */
export function webhookBodyRef(doc: WebhookBodies, type: string): string | undefined {
  return doc.webhooks?.[type]?.post?.requestBody?.content?.["application/json"]?.schema?.$ref;
}

/** Answers why `event` does not fit its webhook's schema, or undefined when it does. */
export function eventProblem(event: unknown): string | undefined {
  document ??= buildOpenApiDocument() as WebhookBodies & Record<string, unknown>;
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(document, "openapi.json");
  }
  const type = typeof event === "object" && event !== null ? (event as { type?: unknown }).type : undefined;
  const ref = typeof type === "string" ? webhookBodyRef(document, type) : undefined;
  if (!ref) return `the OpenAPI document has no webhook for event type ${String(type)}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.getSchema(`openapi.json${ref}`);
    if (!validate) return `the OpenAPI document has no schema ${ref}`;
    validators.set(ref, validate);
  }
  return validate(event)
    ? undefined
    : `${String(type)} does not fit ${ref} (src/api/event-schemas.ts): ${ajv.errorsText(validate.errors)}`;
}
