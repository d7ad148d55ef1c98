/**
 * One error model: each list of codes and types is defined once in src/shared/, docs/errors.md
 * describes every entry of each (a code added without a word there fails here), and the API's
 * handler, its OpenAPI document and the SDK's client all speak the one list of API codes.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Request, Response as ExpressResponse } from "express";
import { describe, expect, it } from "vitest";
import { createErrorHandler } from "../../src/api/error-handler.ts";
import { HttpError } from "../../src/api/http-error.ts";
import { buildOpenApiDocument } from "../../src/api/openapi.ts";
import { createApiClient, RewindApiError } from "../../src/sdk/index.ts";
import { API_ERRORS, API_ERROR_CODES, CLIENT_ERROR_CODES } from "../../src/shared/api-error-codes.ts";
import { CALL_FAILURE, MACHINE_BUSY_ERROR_TYPE, RUNTIME_VERSION_ERROR_TYPE } from "../../src/shared/call-failures.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { RUN_FAILURE_TYPES } from "../../src/shared/run.ts";
import { RETIRED_TOOL_ERROR_CODES, TOOL_ERROR_CODES } from "../../src/shared/tool-error.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

const doc = readFileSync(path.join(REPO_ROOT, "docs", "errors.md"), "utf8");
/** The table row describing `code`: a line that starts with it as the first cell. */
const rowOf = (code: string): string | undefined =>
  doc.split("\n").find((line) => line.startsWith(`| \`${code}\` `) || line.startsWith(`| \`${code}\`|`));

describe("docs/errors.md", () => {
  it("has a row for every ToolError code, call failure type and run failure type", () => {
    const all = [...TOOL_ERROR_CODES, ...Object.values(CALL_FAILURE), ...Object.values(RUN_FAILURE_TYPES)];
    for (const code of all) expect(rowOf(code), `docs/errors.md has no row for ${code}`).toBeDefined();
  });

  it("names the retired ToolError codes and the step refusals (RuntimeVersionError, MachineBusyError)", () => {
    for (const code of [...RETIRED_TOOL_ERROR_CODES, RUNTIME_VERSION_ERROR_TYPE, MACHINE_BUSY_ERROR_TYPE])
      expect(doc).toContain(`\`${code}\``);
  });

  it("gives every API error code with the status it answers with, and the client's own codes", () => {
    for (const code of API_ERROR_CODES) {
      const row = rowOf(code);
      expect(row, `docs/errors.md has no row for ${code}`).toBeDefined();
      expect(row?.split("|")[2]?.trim(), code).toBe(String(API_ERRORS[code].status));
    }
    for (const code of CLIENT_ERROR_CODES) expect(rowOf(code), code).toBeDefined();
  });
});

describe("API error codes", () => {
  it("are what the OpenAPI document's error body enumerates", () => {
    const document = buildOpenApiDocument() as {
      components: { schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } } };
    };
    expect(document.components.schemas.Error.properties.error.properties.code.enum).toEqual([...API_ERROR_CODES]);
  });

  it("are rendered by the error handler with the status the list gives them", () => {
    const handler = createErrorHandler(silentLogger);
    for (const code of API_ERROR_CODES) {
      let answered: { status: number; body: unknown } | undefined;
      const res = {
        status(status: number) {
          return {
            json(body: unknown) {
              answered = { status, body };
            },
          };
        },
      } as unknown as ExpressResponse;
      const error = new HttpError(API_ERRORS[code].status as never, code as never, `a ${code}`);
      handler(error, { method: "GET", path: "/" } as Request, res, () => undefined);
      expect(answered).toEqual({
        status: API_ERRORS[code].status,
        body: { error: { code, message: `a ${code}`, details: undefined } },
      });
    }
  });

  it("type the SDK's RewindApiError; a code the list lacks reads as unexpected", async () => {
    const answering = (body: unknown, status: number) =>
      createApiClient({
        url: "http://rewind.invalid",
        fetch: () => Promise.resolve(new Response(JSON.stringify(body), { status })),
      });
    const notFound = await answering({ error: { code: "notFound", message: "no run" } }, 404)
      .getRun("run_x")
      .catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(RewindApiError);
    expect(notFound).toMatchObject({ status: 404, code: "notFound", message: "no run" });
    const unknown = await answering({ error: { code: "somethingNew", message: "?" } }, 418)
      .getRun("run_x")
      .catch((error: unknown) => error);
    expect(unknown).toMatchObject({ status: 418, code: "unexpected", message: "?" });
  });
});
