/**
 * A harness's events endpoint for tests: a loopback server that verifies Standard Webhooks
 * signatures with the `standardwebhooks` package and keeps every event it accepted. Each event
 * is checked against its webhook's schema in the OpenAPI document: one that does not fit is kept
 * apart (`misfits`), and waiting for it fails with the reason, so every test that receives events
 * also proves the document describes them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { eventProblem } from "./event-schema.ts";
import { waitFor } from "./wait-for.ts";

export interface ReceivedEvent {
  id: string;
  type: string;
  runId: string;
  toolset: string;
  endUser: string | null;
  at: string;
  data: Record<string, unknown>;
}

export interface EventReceiver {
  url: string;
  events: ReceivedEvent[];
  /** The raw bodies received, for checking what never appears in them. */
  bodies: string[];
  /** Signed events that do not fit their documented schema, with why. */
  misfits: { event: ReceivedEvent; problem: string }[];
  setSecret(secret: string): void;
  waitFor(runId: string, type: string, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): Promise<void>;
}

export async function startEventReceiver(): Promise<EventReceiver> {
  let secret = "";
  const events: ReceivedEvent[] = [];
  const bodies: string[] = [];
  const misfits: { event: ReceivedEvent; problem: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      bodies.push(body);
      try {
        const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as ReceivedEvent;
        const problem = eventProblem(event);
        if (problem) misfits.push({ event, problem });
        else events.push(event);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    events,
    bodies,
    misfits,
    setSecret: (value) => {
      secret = value;
    },
    waitFor: (runId, type, timeoutMs = 30_000) =>
      waitFor(
        `a ${type} event for ${runId}`,
        () => {
          const misfit = misfits.find((m) => m.event.runId === runId && m.event.type === type);
          if (misfit) throw new Error(misfit.problem);
          return events.find((e) => e.runId === runId && e.type === type);
        },
        { timeoutMs },
      ),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
