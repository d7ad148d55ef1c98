/**
 * Nothing reads a body before the caller is known to be allowed, on a real stack with API keys:
 * a webhook with a wrong token is refused while its body is still arriving (and a body that is not
 * even valid gzip is never inflated); a request without a key likewise; a gzip body that inflates
 * past the limit is cut while inflating (413); a run input just over 16 MiB is 413 with nothing
 * started; and with keys set the API's port serves no metrics, loopback or not.
 */
import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INPUT_BYTES } from "../../src/api/routes/runs.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";

const KEY = "caller-before-body-key";
let stack: RewindStack;

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${KEY}:caller-before-body` } });
});
afterAll(async () => {
  await stack?.stop();
});

interface Answer {
  status: number;
  body: { error?: { code?: string; message?: string } } & Record<string, unknown>;
}

/**
 * Sends the headers and the first `sent` bytes of a body announced as `announced` bytes long, and
 * resolves with the answer if one comes before the rest of the body (which is never sent).
 */
function answerBeforeBody(route: string, headers: Record<string, string>, announced: number, sent: Buffer) {
  const url = new URL(stack.api.url + route);
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(announced), ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer["body"] });
        });
      },
    );
    req.on("error", (error) => {
      if (!("code" in error && error.code === "ECONNRESET")) reject(error);
    });
    req.write(sent);
    const bound = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within 20 s to POST ${route} while its body was unfinished: the API waited for it`));
    }, 20_000);
    req.on("close", () => clearTimeout(bound));
  });
}

async function post(route: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(stack.api.url + route, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

describe("the caller is checked before the body", () => {
  it("a webhook with a wrong token is 404 before its body has arrived", async () => {
    const answer = await answerBeforeBody(
      "/v1/hooks/run_01M8SZ9DD847YCPTT84S0GB81N/go?token=forged",
      {},
      10 * 1024 * 1024,
      Buffer.from('{"payload": "'),
    );
    expect(answer.status).toBe(404);
    expect(answer.body.error?.code).toBe("notFound");
  });

  it("a webhook with a wrong token and a body that is not gzip is 404, never inflated", async () => {
    const answer = await post("/v1/hooks/run_01M8SZ9DD847YCPTT84S0GB81N/go?token=forged", Buffer.from("not gzip"), {
      "content-encoding": "gzip",
    });
    expect(answer.status).toBe(404);
  });

  it("a request without a key is 401 before its body has arrived", async () => {
    const answer = await answerBeforeBody("/v1/runs", {}, 10 * 1024 * 1024, Buffer.from('{"script": "'));
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe("unauthorized");
  });
});

describe("sizes", () => {
  it("a gzip body that inflates past the limit is 413, cut while inflating", async () => {
    const bomb = gzipSync(Buffer.alloc(40 * 1024 * 1024, 0x20)); // about 40 KB that inflate to 40 MiB
    expect(bomb.length).toBeLessThan(100 * 1024);
    const answer = await post("/v1/runs", bomb, { "content-encoding": "gzip", authorization: `Bearer ${KEY}` });
    expect(answer.status).toBe(413);
    expect(answer.body.error?.code).toBe("payloadTooLarge");
  });

  it("a run input just over 16 MiB is 413 and starts nothing; one at the limit is not refused for its size", async () => {
    const script = "export default async (input: string) => input.length;";
    // A JSON string of n characters is n + 2 bytes: the quotes.
    const over = JSON.stringify({ script, input: "x".repeat(MAX_INPUT_BYTES - 2 + 12) });
    const refused = await post("/v1/runs", Buffer.from(over), { authorization: `Bearer ${KEY}` });
    expect(refused.status).toBe(413);
    expect(refused.body.error?.code).toBe("payloadTooLarge");
    expect(refused.body.error?.message).toMatch(/input is 16777228 bytes of JSON; a run accepts at most 16777216/);
    const listed = await stack.request("GET", "/v1/runs", undefined, { authorization: `Bearer ${KEY}` });
    expect(listed.body["runs"]).toEqual([]);

    const atLimit = JSON.stringify({ script, input: "x".repeat(MAX_INPUT_BYTES - 2) });
    const accepted = await post("/v1/runs", Buffer.from(atLimit), { authorization: `Bearer ${KEY}` });
    expect(accepted.body.error?.code).not.toBe("payloadTooLarge");
    expect(accepted.status).toBe(201);
  }, 120_000);
});

describe("metrics with API keys set", () => {
  it("the API's port answers 401 to a loopback caller, with or without a tenant's key", async () => {
    for (const headers of [{}, { authorization: `Bearer ${KEY}` }]) {
      const response = await fetch(`${stack.api.url}/metrics`, { headers });
      expect(response.status).toBe(401);
      const body = (await response.json()) as Answer["body"];
      expect(body.error?.message).toMatch(/REWIND_METRICS_PORT/);
    }
  });
});
