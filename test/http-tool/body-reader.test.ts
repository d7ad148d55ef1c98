/**
 * The bounded body reader on its own, where the compressed bytes it pulls can be counted: a
 * gzip bomb must be abandoned after the few kilobytes that inflate to the limit, not read (and
 * inflated) to the end.
 */
import { Readable } from "node:stream";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { HttpRefusal } from "../../src/http-tool/index.ts";
import { readBoundedBody } from "../../src/http-tool/body-reader.ts";

const MB = 1024 * 1024;
const member = zlib.gzipSync(Buffer.alloc(MB), { level: 9 });

/** Serves `data` in 4 KB chunks and counts how much of it the reader pulled. */
function countingStream(data: Buffer): { stream: Readable; pulled: () => number } {
  let offset = 0;
  const stream = new Readable({
    read() {
      const chunk = data.subarray(offset, offset + 4096);
      offset += chunk.length;
      this.push(chunk.length > 0 ? chunk : null);
    },
  });
  return { stream, pulled: () => offset };
}

describe("readBoundedBody", () => {
  it("stops pulling a gzip bomb once the decoded limit is passed", async () => {
    // 1024 concatenated gzip members of 1 MB of zeros: ~1 MB on the wire, 1 GB decoded.
    const bomb = Buffer.concat(Array.from({ length: 1024 }, () => member));
    const { stream, pulled } = countingStream(bomb);
    const error = await readBoundedBody(stream, { "content-encoding": "gzip" }, { maxBytes: 5 * MB, host: "h" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HttpRefusal);
    expect((error as HttpRefusal).rule).toBe("tooLarge");
    // 5 MB decoded is ~5 KB of gzip; stream buffers (64 KB each side) add some, far below the bomb.
    expect(pulled()).toBeLessThan(bomb.length / 4);
    expect(stream.destroyed).toBe(true);
  });

  it("undoes several codings in reverse order and counts the final bytes", async () => {
    const text = "x".repeat(3000);
    const wire = zlib.gzipSync(zlib.deflateSync(Buffer.from(text)));
    const ok = await readBoundedBody(
      Readable.from([wire]),
      { "content-encoding": "deflate, gzip" },
      { maxBytes: 3000, host: "h" },
    );
    expect(ok).toEqual({ body: text, bodyEncoding: "utf8" });
    const over = readBoundedBody(
      Readable.from([wire]),
      { "content-encoding": "deflate, gzip" },
      { maxBytes: 2999, host: "h" },
    );
    await expect(over).rejects.toMatchObject({ rule: "tooLarge" });
  });

  it("refuses malformed compressed bodies and over-long coding chains", async () => {
    const garbage = readBoundedBody(
      Readable.from([Buffer.from("not gzip at all")]),
      { "content-encoding": "gzip" },
      { maxBytes: MB, host: "h" },
    );
    await expect(garbage).rejects.toMatchObject({ rule: "encoding" });
    const chain = readBoundedBody(
      Readable.from([]),
      { "content-encoding": "gzip, gzip, gzip, gzip, gzip" },
      { maxBytes: MB, host: "h" },
    );
    await expect(chain).rejects.toMatchObject({ rule: "encoding" });
  });
});
