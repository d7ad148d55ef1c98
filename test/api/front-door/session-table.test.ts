/**
 * The front door's session table: a session is found only under the scope it was opened with,
 * it is closed once idle (no request open) for the idle time and never while a request of it is
 * open, and a namespace that holds as many sessions as it may gives up its longest-unused idle
 * one for a new one, or refuses the new one when all of its sessions are in use.
 */
import { describe, expect, it } from "vitest";
import { SessionTable } from "../../../src/api/front-door/session-table.ts";

/** Something a table can close, and that counts it; it leaves the table as a session does once closed. */
function session(table: () => SessionTable<{ close(): Promise<void> }>, id: string) {
  const state = { closed: 0 };
  return {
    state,
    close: async () => {
      state.closed += 1;
      table().remove(id);
    },
  };
}

function setUp(perNamespace = 2) {
  let now = 0;
  const table: SessionTable<{ close(): Promise<void> }> = new SessionTable({
    idleMs: 1_000,
    perNamespace,
    now: () => now,
  });
  const open = (id: string, namespace = "acme", scopeKey = `${namespace}/key`) => {
    const s = session(() => table, id);
    table.add(id, s, { scopeKey, namespace });
    return s;
  };
  return { table, open, tick: (ms: number) => (now += ms) };
}

describe("the front door's session table", () => {
  it("finds a session only under the scope it was opened with", () => {
    const { table, open } = setUp();
    const a = open("s1", "acme", "acme/key-1/ts_1/ada");
    expect(table.find("s1", "acme/key-1/ts_1/ada")).toBe(a);
    expect(table.find("s1", "acme/key-1/ts_1/bob")).toBeUndefined();
    expect(table.find("s2", "acme/key-1/ts_1/ada")).toBeUndefined();
  });

  it("closes a session idle for the idle time, and never one with a request open", async () => {
    const { table, open, tick } = setUp();
    const busy = open("busy");
    const idle = open("idle");
    const end = table.begin("busy");
    tick(999);
    expect(await table.sweep()).toBe(0);
    tick(1);
    expect(await table.sweep()).toBe(1);
    expect([busy.state.closed, idle.state.closed]).toEqual([0, 1]);
    tick(5_000);
    expect(await table.sweep()).toBe(0);
    end();
    end();
    tick(1_000);
    expect(await table.sweep()).toBe(1);
    expect(busy.state.closed).toBe(1);
    expect(table.size).toBe(0);
  });

  it("makes room in a full namespace by closing its longest-unused idle session, and refuses when all are in use", async () => {
    const { table, open, tick } = setUp(2);
    const older = open("older");
    tick(10);
    const newer = open("newer");
    const other = open("elsewhere", "globex");
    expect(await table.makeRoom("acme")).toBe(true);
    expect([older.state.closed, newer.state.closed, other.state.closed]).toEqual([1, 0, 0]);
    open("third");
    table.begin("newer");
    table.begin("third");
    expect(await table.makeRoom("acme")).toBe(false);
    expect(await table.makeRoom("globex")).toBe(true);
    expect(table.size).toBe(3);
  });
});
