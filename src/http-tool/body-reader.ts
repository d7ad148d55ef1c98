/**
 * Reads a response body into something a journal can store, bounded by its size after decoding.
 * The limit counts decoded bytes because that is what reaches memory and the journal: a small
 * gzip bomb is cut off as soon as its output passes the limit. Decoding is streamed with
 * backpressure, so at most about one decoder chunk past the limit is ever inflated.
 */
import { pipeline, type Readable, type Transform } from "node:stream";
import zlib from "node:zlib";
import { HttpRefusal } from "./http-refusal.ts";

export interface DecodedBody {
  body: string;
  bodyEncoding: "utf8" | "base64";
}

export interface ReadBodyOptions {
  maxBytes: number;
  /** For refusal messages. */
  host: string;
}

// Tolerate a truncated final block the way browsers do, instead of failing the whole body.
const LENIENT = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const MAX_CODINGS = 4;

const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(LENIENT),
  "x-gzip": () => zlib.createGunzip(LENIENT),
  deflate: () => zlib.createInflate(LENIENT),
  br: () => zlib.createBrotliDecompress(),
  ...(typeof zlib.createZstdDecompress === "function" ? { zstd: () => zlib.createZstdDecompress() } : {}),
};

/** The `accept-encoding` the fetcher sends: exactly what it can decode. */
export const ACCEPT_ENCODING = ["gzip", "deflate", "br", ...("zstd" in DECODERS ? ["zstd"] : [])].join(", ");

export async function readBoundedBody(
  raw: Readable,
  headers: Record<string, string>,
  options: ReadBodyOptions,
): Promise<DecodedBody> {
  // Destroying the wire stream early (limit reached) makes undici report an abort: expected.
  raw.on("error", () => undefined);
  const decoders = decodersFor(headers["content-encoding"] ?? "", options.host);
  const declared = Number(headers["content-length"] ?? Number.NaN);
  if (decoders.length === 0 && declared > options.maxBytes) {
    raw.destroy();
    throw new HttpRefusal("tooLarge", options.host, `content-length over ${options.maxBytes} bytes`);
  }
  // pipeline() destroys every stage when any stage fails or the consumer stops early.
  if (decoders.length > 0) pipeline([raw, ...decoders], () => undefined);
  const decoded: Readable = decoders.at(-1) ?? raw;
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > options.maxBytes)
        throw new HttpRefusal("tooLarge", options.host, `over ${options.maxBytes} bytes after decoding`);
      chunks.push(chunk);
    }
  } catch (error) {
    // A decoder failing while the wire was fine means the server sent a malformed coding.
    if (!(error instanceof HttpRefusal) && !raw.errored && decoders.some((d) => d.errored)) {
      throw new HttpRefusal("encoding", options.host, "malformed compressed body");
    }
    throw error;
  } finally {
    raw.destroy();
    decoded.destroy();
  }
  return toText(Buffer.concat(chunks), headers["content-type"] ?? "");
}

function decodersFor(contentEncoding: string, host: string): Transform[] {
  const codings = contentEncoding
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length > MAX_CODINGS) throw new HttpRefusal("encoding", host, `${codings.length} content codings`);
  // Codings are listed in the order they were applied, so they are undone from the last.
  return codings.reverse().map((coding) => {
    const make = DECODERS[coding];
    if (!make) throw new HttpRefusal("encoding", host, `unsupported content-encoding "${coding.slice(0, 20)}"`);
    return make();
  });
}

const BINARY_TYPE = /^(image|audio|video|font)\/|^application\/(octet-stream|pdf|zip|gzip|x-tar|wasm|x-protobuf)\b/i;

/** Text when the declared charset (default UTF-8) decodes it without error; base64 otherwise. */
function toText(bytes: Buffer, contentType: string): DecodedBody {
  if (!BINARY_TYPE.test(contentType.trim())) {
    const charset = /;\s*charset="?([^";\s]+)"?/i.exec(contentType)?.[1] ?? "utf-8";
    try {
      return { body: new TextDecoder(charset, { fatal: true }).decode(bytes), bodyEncoding: "utf8" };
    } catch {
      // An unknown charset label or bytes that are not text: fall through to base64.
    }
  }
  return { body: bytes.toString("base64"), bodyEncoding: "base64" };
}
