/**
 * The API's listener keeps idle connections longer than clients keep theirs: it says so in each
 * answer's Keep-Alive header, which a client's pool reads to expire its connections first.
 */
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { KEEP_ALIVE_MS, listenApi, type ApiListener } from "../../src/cli/api-listener.ts";

let listener: ApiListener;
beforeAll(async () => {
  listener = await listenApi({ host: "127.0.0.1", port: 0 }, (_req, res) => res.end("ok"));
});
afterAll(async () => {
  await listener?.close();
});

it("announces a keep-alive of 65 s on its answers", async () => {
  const agent = new http.Agent({ keepAlive: true });
  const header = await new Promise<string | undefined>((resolve, reject) => {
    http
      .get(listener.url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.headers["keep-alive"])));
      })
      .on("error", reject);
  });
  agent.destroy();
  expect(header).toBe(`timeout=${KEEP_ALIVE_MS / 1000}`);
});
