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

it("closes a keep-alive connection that was busy when the close began as soon as its answer is sent", async () => {
  const slow = await listenApi({ host: "127.0.0.1", port: 0 }, (_req, res) => {
    setTimeout(() => res.end("ok"), 300);
  });
  const agent = new http.Agent({ keepAlive: true });
  const answered = new Promise<void>((resolve, reject) => {
    http
      .get(slow.url, { agent }, (res) => {
        res.resume();
        res.on("end", resolve);
      })
      .on("error", reject);
  });
  // Not a wait for something to happen: the request must be in flight when the close begins.
  await new Promise((resolve) => setTimeout(resolve, 100));
  let closed = false;
  const closing = slow.close().then(() => {
    closed = true;
  });
  await answered;
  // A bound on hanging: the close must not wait out the 65 s keep-alive.
  await Promise.race([
    closing,
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error("the listener's close waited for an idle keep-alive connection")), 10_000),
    ),
  ]);
  agent.destroy();
  expect(closed).toBe(true);
});
