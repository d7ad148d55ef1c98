/**
 * The OpenAPI document's `webhooks`: one per event type Rewind sends, each POST with the Standard
 * Webhooks headers and a body schema that compiles, names its type, and carries the run's toolset
 * and end user. That delivered events fit these schemas is proven by the event receiver, which
 * checks every event it gets (test/helpers/event-schema.ts, test/events/event-payloads.test.ts).
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../src/api/openapi.ts";
import { EVENT_TYPES } from "../../src/shared/events.ts";
import { eventProblem, webhookBodyRef, type WebhookBodies } from "../helpers/event-schema.ts";

interface Parameter {
  name: string;
  in: string;
  required: boolean;
}
interface WebhookDocument {
  openapi: string;
  webhooks: Record<
    string,
    {
      post?: NonNullable<NonNullable<WebhookBodies["webhooks"]>[string]["post"]> & {
        parameters?: Parameter[];
        security?: unknown[];
        responses?: Record<string, unknown>;
      };
    }
  >;
  components: { schemas: Record<string, { properties?: Record<string, { const?: string }>; required?: string[] }> };
}

const doc = buildOpenApiDocument() as unknown as WebhookDocument;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(doc, "openapi.json");

describe("the OpenAPI document's webhooks", () => {
  it("lists exactly the event types Rewind sends", () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it.each(EVENT_TYPES)("%s: a POST with the signature headers and a body schema of its own", (type) => {
    const post = doc.webhooks[type]?.post;
    expect(post?.parameters?.filter((p) => p.in === "header" && p.required).map((p) => p.name)).toEqual([
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
    ]);
    expect(post?.security).toEqual([]);
    expect(Object.keys(post?.responses ?? {})).toEqual(["2XX"]);
    const ref = webhookBodyRef(doc, type) ?? "";
    const schema = doc.components.schemas[ref.replace("#/components/schemas/", "")];
    expect(schema?.properties?.["type"]?.const).toBe(type);
    expect(schema?.required).toEqual(
      expect.arrayContaining(["id", "type", "runId", "toolset", "endUser", "at", "data"]),
    );
    expect(ajv.getSchema(`openapi.json${ref}`), `${ref} compiles`).toBeDefined();
  });

  it("refuses an event whose type has no webhook, and one whose data does not fit", () => {
    const base = { id: "evt_1", runId: "run_1", toolset: "ts_1", endUser: null, at: new Date(0).toISOString() };
    expect(
      eventProblem({
        ...base,
        type: "run.cancelled",
        data: { unfinished: [{ seq: 1, tool: "bank.pay", status: "parked" }] },
      }),
    ).toBeUndefined();
    expect(eventProblem({ ...base, type: "run.paused", data: {} })).toMatch(/no webhook for event type run\.paused/);
    expect(eventProblem({ ...base, type: "run.cancelled", data: {} })).toMatch(
      /must have required property 'unfinished'/,
    );
    expect(eventProblem({ ...base, type: "run.completed", data: { result: 1 }, toolset: undefined })).toMatch(
      /toolset/,
    );
  });
});
