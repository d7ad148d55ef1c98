/**
 * Temporal's Codec Server protocol, so the Temporal Web UI (and `temporal … --codec-endpoint`)
 * shows the payloads Rewind keeps in its payload store instead of opaque references:
 * `POST /v1/codec/decode {payloads}` answers the same payloads in the same order, each External
 * Storage reference replaced by the payload it names (read through the driver the reference
 * names, as resolvePayload does) and every other payload as it was; `POST /v1/codec/encode`
 * answers its payloads unchanged, since Rewind's data converter has no codec (a large payload a
 * UI user sends stays inline). Bodies and answers are Temporal Payloads in proto3 JSON: metadata
 * values and data base64.
 *
 * Authenticated like the rest of the API (a browser's CORS preflight carries no key, so it is
 * answered before the key is checked), for the one Temporal namespace this API serves: a request
 * whose `X-Namespace` names another is refused. Any Rewind namespace (API key) may decode any
 * reference: references are content-addressed (the payload's SHA-256), so knowing one is the
 * capability to read it. They appear only in Temporal history, never in this API's answers,
 * and one cannot be forged for a payload without already knowing its every byte.
 */
import { Router, type Request, type RequestHandler } from "express";
import type { ExternalStorage, Payload } from "@temporalio/common";
import {
  decodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import type { z } from "zod";
import { HttpError } from "../http-error.ts";
import { codecBody, type codecPayload } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface CodecRouteDeps {
  /** The External Storage of Rewind's data converter: its drivers read what references name. */
  storage: ExternalStorage;
  /** The Temporal namespace this API serves (TEMPORAL_NAMESPACE). */
  temporalNamespace: string;
  /** Origins whose pages may call these routes from a browser: the Temporal Web UI's. */
  corsOrigins: string[];
}

type PayloadJson = z.infer<typeof codecPayload>;

/** Headers the Web UI sends: its JSON body, the namespace it shows, and its token when configured. */
const ALLOWED_HEADERS = "Content-Type, X-Namespace, Authorization";
/** References read at once: each may be a 16 MiB payload. */
const CONCURRENCY = 8;
/** What one answer may hold, decoded; the UI asks for a few payloads at a time. */
const MAX_DECODED_BYTES = 128 * 1024 * 1024;

/**
 * CORS for `/v1/codec`, mounted before auth: answers the preflight of an allowed origin with the
 * methods and headers the UI uses (credentials allowed), and marks every answer to that origin,
 * a 401 included, as readable by it. Any other origin gets no Access-Control-Allow-Origin.
 */
export function createCodecCors(deps: CodecRouteDeps): RequestHandler {
  let allowed: Set<string> | undefined;
  return function codecCors(req, res, next) {
    allowed ??= new Set(deps.corsOrigins);
    res.vary("Origin");
    const origin = req.headers.origin;
    const permitted = origin !== undefined && allowed.has(origin);
    if (permitted) {
      res.set("Access-Control-Allow-Origin", origin);
      res.set("Access-Control-Allow-Credentials", "true");
    }
    const preflight =
      req.method === "OPTIONS" && origin !== undefined && req.headers["access-control-request-method"] !== undefined;
    if (!preflight) {
      next();
      return;
    }
    if (permitted) {
      res.set("Access-Control-Allow-Methods", "POST");
      res.set("Access-Control-Allow-Headers", ALLOWED_HEADERS);
      res.set("Access-Control-Max-Age", "600");
      // Chrome asks before a public page calls a private address (Private Network Access).
      if (req.headers["access-control-request-private-network"] === "true")
        res.set("Access-Control-Allow-Private-Network", "true");
    }
    res.status(204).end();
  };
}

function checkNamespace(req: Request, deps: CodecRouteDeps): void {
  const asked = req.get("x-namespace");
  if (asked === undefined || asked === deps.temporalNamespace) return;
  throw new HttpError(
    400,
    "badRequest",
    `this API decodes payloads of the Temporal namespace ${JSON.stringify(deps.temporalNamespace)}, not ${JSON.stringify(asked.slice(0, 200))}`,
  );
}

const bytes = (base64: string | null | undefined): Uint8Array => Buffer.from(base64 ?? "", "base64");

function base64Of(value: Uint8Array | null | undefined): string {
  return value ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") : "";
}

/** A payload as sent, less the `null`s proto3 JSON allows for absent fields. */
function asSent(payload: PayloadJson): PayloadJson {
  return Object.fromEntries(Object.entries(payload).filter(([, value]) => value !== null)) as PayloadJson;
}

function isReference(payload: PayloadJson): boolean {
  const metadata = Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, bytes(value)]),
  );
  try {
    return isReferencePayload({ metadata });
  } catch {
    return false;
  }
}

/** The payload a reference names, read through the driver it names; 4xx for what the caller got wrong. */
async function resolveReference(storage: ExternalStorage, payload: PayloadJson, index: number): Promise<Payload> {
  const where = `payloads[${index}]`;
  let reference: ReturnType<typeof decodeReferencePayload>;
  try {
    reference = decodeReferencePayload({
      metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, bytes(value)])),
      data: bytes(payload.data),
    });
  } catch (error) {
    throw new HttpError(
      400,
      "badRequest",
      `${where} is marked as an External Storage reference but is not a valid one: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const driver = storage.getDriver(reference.driverName);
  if (!driver)
    throw new HttpError(
      400,
      "badRequest",
      `${where} names the payload store ${JSON.stringify(reference.driverName.slice(0, 200))}, which this API is not configured with`,
    );
  const claim = JSON.stringify(reference.claimData).slice(0, 500);
  let resolved: Payload | undefined;
  try {
    [resolved] = await driver.retrieve({}, [{ claimData: reference.claimData }]);
  } catch (error) {
    // Rewind's drivers (file and S3) say which of these it was; anything else (the store is
    // unreachable, a stored payload is corrupt) is the server's problem: a logged 500.
    const message = error instanceof Error ? error.message : "";
    if (/ is not a rewind .*reference$/.test(message))
      throw new HttpError(
        400,
        "badRequest",
        `${where}: ${claim} is not a reference of the payload store ${JSON.stringify(driver.name)}`,
      );
    if (/ is missing\b/.test(message))
      throw new HttpError(
        404,
        "notFound",
        `${where}: the payload store ${JSON.stringify(driver.name)} holds no payload for ${claim}`,
      );
    throw error;
  }
  if (!resolved) throw new Error(`the payload store "${driver.name}" returned nothing for ${claim}`);
  return resolved;
}

async function decodeAll(storage: ExternalStorage, payloads: PayloadJson[]): Promise<PayloadJson[]> {
  const answers: PayloadJson[] = payloads.map(asSent);
  const references = payloads.flatMap((payload, index) => (isReference(payload) ? [index] : []));
  let decodedBytes = 0;
  let next = 0;
  const work = async (): Promise<void> => {
    for (let at = next++; at < references.length; at = next++) {
      const index = references[at] ?? 0;
      let resolved: Payload;
      try {
        resolved = await resolveReference(storage, payloads[index] ?? {}, index);
        decodedBytes += resolved.data?.byteLength ?? 0;
        if (decodedBytes > MAX_DECODED_BYTES)
          throw new HttpError(
            413,
            "payloadTooLarge",
            `the decoded payloads pass ${MAX_DECODED_BYTES} bytes: send fewer at a time`,
          );
      } catch (error) {
        next = references.length; // the answer is an error now: the other readers stop
        throw error;
      }
      answers[index] = {
        metadata: Object.fromEntries(
          Object.entries(resolved.metadata ?? {}).map(([key, value]) => [key, base64Of(value)]),
        ),
        data: base64Of(resolved.data),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, references.length) }, work));
  return answers;
}

export function createCodecRouter(deps: CodecRouteDeps): Router {
  const router = Router();

  router.post("/v1/codec/decode", async function decodePayloads(req, res) {
    checkNamespace(req, deps);
    const body = parseOrThrow(codecBody, req.body, "body");
    res.json({ payloads: await decodeAll(deps.storage, body.payloads) });
  });

  router.post("/v1/codec/encode", function encodePayloads(req, res) {
    checkNamespace(req, deps);
    const body = parseOrThrow(codecBody, req.body, "body");
    res.json({ payloads: body.payloads.map(asSent) });
  });

  return router;
}
