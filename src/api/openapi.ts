/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of the API, generated from the zod schemas the
 * routes validate with and the response schemas, so it cannot describe a request shape the
 * routes do not accept; its `webhooks` are the events sent to a harness. Built once, on first
 * request; served without an API key.
 */
import type { RequestHandler } from "express";
import { z } from "zod";
import {
  OPERATIONS,
  REQUEST_SCHEMAS,
  RESPONSE_SCHEMAS,
  type Operation,
  type ResponseKind,
} from "./openapi-operations.ts";
import { EVENT_COMPONENTS, buildWebhooks } from "./openapi-webhooks.ts";

type JsonObject = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  400: "Bad request: invalid JSON, body or query (details.problems lists each)",
  401: "Unauthorized: a valid API key is required",
  404: "Not found",
  406: "Not acceptable: an MCP client accepts application/json and text/event-stream",
  409: "Conflict",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable",
  500: "Internal error",
  503: "Unavailable: Temporal is unreachable, or no worker answered for the run; try again",
};

/**
 * Converts every schema of `schemas` at once, so they refer to each other as components. The ids
 * live in a registry of their own; descriptions come from zod's global one (`.describe()`).
 */
function components(schemas: Record<string, z.ZodType>, io: "input" | "output"): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: converted } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  });
  const out: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(converted)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonObject;
    out[id] = rest;
  }
  return out;
}

function queryParameters(query: z.ZodObject): JsonObject[] {
  const schema = z.toJSONSchema(query, { target: "draft-2020-12", io: "input" }) as {
    properties?: Record<string, JsonObject>;
    required?: string[];
  };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    schema: property,
  }));
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function response(status: number, kind: ResponseKind): JsonObject {
  const description = STATUS_TEXT[status] ?? String(status);
  if (kind === "text") return { description, content: { "text/plain": { schema: { type: "string" } } } };
  if (kind === "any") return { description, content: { "application/json": { schema: { type: "object" } } } };
  if (kind === "none") return { description };
  if (kind === "mcp")
    return {
      description,
      content: {
        "application/json": { schema: { type: "object", description: "A JSON-RPC 2.0 message" } },
        "text/event-stream": { schema: { type: "string", description: "JSON-RPC 2.0 messages as server-sent events" } },
      },
    };
  return { description, content: { "application/json": { schema: ref(kind) } } };
}

function operation(op: Operation): JsonObject {
  const pathParameters = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const parameters = [
    ...pathParameters,
    ...(op.query ? queryParameters(op.query) : []),
    ...(op.parameters ?? []).map((p) => ({ ...p, schema: { type: "string" } })),
  ];
  const statuses: Record<number, ResponseKind> = { ...op.responses, 500: "Error" };
  if (!op.public) statuses[401] = "Error";
  if (!op.withoutTemporal) statuses[503] = "Error";
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body
      ? { requestBody: { required: !op.bodyOptional, content: { "application/json": { schema: ref(op.body) } } } }
      : {}),
    responses: Object.fromEntries(
      Object.entries(statuses).map(([status, kind]) => [status, response(Number(status), kind)]),
    ),
    ...(op.public ? { security: [] } : {}),
  };
}

export function buildOpenApiDocument(): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(op);
  return {
    openapi: "3.1.0",
    info: {
      title: "Rewind API",
      version: "1",
      description:
        "Runs model-written scripts durably on Temporal. Errors are `{ error: { code, message, details } }`. " +
        "Without REWIND_API_KEYS the API serves loopback callers without a key, as namespace `default`.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: [{ bearer: [] }],
    paths,
    webhooks: buildWebhooks(),
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key from REWIND_API_KEYS" } },
      schemas: {
        ...components(REQUEST_SCHEMAS, "input"),
        ...components({ ...RESPONSE_SCHEMAS, ...EVENT_COMPONENTS }, "output"),
      },
    },
  };
}

let cached: string | undefined;

export const serveOpenApi: RequestHandler = function openApiDocument(_req, res) {
  cached ??= JSON.stringify(buildOpenApiDocument());
  res.type("application/json").send(cached);
};
