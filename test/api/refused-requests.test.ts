/**
 * Requests Node's parser refuses before any route sees them still get the API's error body:
 * a path past the header size limit (431) and a request line that is not HTTP (400).
 */
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerRefusedRequests } from "../../src/api/index.ts";

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_req, res) => res.end("reached the app"));
  answerRefusedRequests(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function rawExchange(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
}

describe("requests the HTTP parser refuses", () => {
  it("answers a path past the header limit with 431 and the API's error body", async () => {
    const answer = await rawExchange(`GET /v1/runs/${"x".repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(answer).toContain("Content-Type: application/json");
    expect(bodyOf(answer)).toEqual({
      error: { code: "badRequest", message: "the request's headers (or its path) are larger than the API accepts" },
    });
  });

  it("answers a request that is not HTTP with 400 and the API's error body", async () => {
    const answer = await rawExchange("HELLO THERE\r\n\r\n");
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(bodyOf(answer)).toEqual({ error: { code: "badRequest", message: "the request is not valid HTTP" } });
  });

  it("still hands well-formed requests to the app", async () => {
    const answer = await rawExchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(answer).toContain("reached the app");
  });
});
