/**
 * `temporal-dev.yml` parsing and the `start-dev` flags it becomes: the shipped file is valid and
 * carries what Rewind needs, defaults fill an empty file, and each kind of mistake names its field.
 */

import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadDevServerConfig, parseDevServerConfig, startDevArgs } from "../../src/dev/index.ts";
import type { DevServerConfig } from "../../src/dev/index.ts";
import { SEARCH_ATTRIBUTES } from "../../src/shared/run.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..", "..");
const parse = (text: string): DevServerConfig => parseDevServerConfig(text, { source: "t.yml", baseDir: "/base" });

describe("temporal-dev.yml", () => {
  it("ships a valid file with Rewind's search attributes and raised blob limits", async () => {
    const config = await loadDevServerConfig(resolve(REPO_ROOT, "temporal-dev.yml"));
    expect(config).toMatchObject({ namespace: "default", ip: "127.0.0.1", port: 7233, uiPort: 8233 });
    expect(config.dbFile).toBe(resolve(REPO_ROOT, ".rewind/temporal.sqlite"));
    expect(config.searchAttributes).toEqual({
      RewindToolset: "Keyword",
      RewindEndUser: "Keyword",
      RewindNamespace: "Keyword",
      RewindStatus: "Keyword",
      RewindStartedAt: "Datetime",
    });
    // Every attribute a run is started with, with the type it is written as.
    const label = { KEYWORD: "Keyword", DATETIME: "Datetime" } as const;
    expect(config.searchAttributes).toEqual(
      Object.fromEntries(Object.values(SEARCH_ATTRIBUTES).map((a) => [a.name, label[a.type]])),
    );
    // Stock limits: nothing raised, so the embedded stack behaves as Temporal Cloud does. The one
    // setting lets the single shard hand tasks over as fast as a cluster's many shards do.
    expect(config.dynamicConfig).toEqual({ "history.transferProcessorMaxPollRPS": 1000 });
    expect(startDevArgs(config, { port: 1, uiPort: false, dbFile: undefined })).toContain(
      "history.transferProcessorMaxPollRPS=1000",
    );
  });

  it("fills every field with its default when the file is empty", () => {
    expect(parse("")).toEqual({
      namespace: "default",
      ip: "127.0.0.1",
      port: 7233,
      uiPort: 8233,
      dbFile: "/base/.rewind/temporal.sqlite",
      logLevel: "warn",
      searchAttributes: {},
      dynamicConfig: {},
    });
  });

  it.each([
    ["port: abc", /port: .*number/i],
    ["port: 70000", /port: .*65535/],
    ["uiPort: 1.5", /uiPort: .*int/i],
    ["logLevel: loud", /logLevel: .*"debug"/],
    ["searchAttributes:\n  RewindStatus: Keywrd", /searchAttributes\.RewindStatus: .*"Keyword"/],
    ["searchAttributes:\n  bad-name: Keyword", /searchAttributes\["bad-name"\]: invalid name: must be an identifier/],
    ["dynamicConfig:\n  limit blob: 1", /dynamicConfig\["limit blob"\]: invalid name: must be a dotted identifier/],
    ["uiport: 9000", /Unrecognized key.*"uiport"/],
    ["- just\n- a list", /\(top level\): .*object/],
  ])("rejects %j with an error naming the field", (text, message) => {
    expect(() => parse(text)).toThrow(message);
    expect(() => parse(text)).toThrow(/^t\.yml is invalid:/);
  });

  it("reports YAML syntax errors with the file name", () => {
    expect(() => parse("port: [7233")).toThrow(/^t\.yml: not valid YAML/);
  });

  it("names the file it cannot read", async () => {
    await expect(loadDevServerConfig("/nonexistent/temporal-dev.yml")).rejects.toThrow(
      /\/nonexistent\/temporal-dev\.yml/,
    );
  });
});

describe("startDevArgs", () => {
  const config = parse(
    [
      "namespace: rewind",
      "logLevel: error",
      "searchAttributes: { RewindStatus: Keyword }",
      "dynamicConfig: { limit.blobSize.error: 10485760, frontend.someString: on }",
    ].join("\n"),
  );

  it("turns a headless in-memory launch into flags", () => {
    expect(startDevArgs(config, { port: 7400, uiPort: false, dbFile: undefined })).toEqual([
      "server",
      "start-dev",
      "--ip",
      "127.0.0.1",
      "--port",
      "7400",
      "--headless",
      "--namespace",
      "rewind",
      "--search-attribute",
      "RewindStatus=Keyword",
      "--dynamic-config-value",
      "limit.blobSize.error=10485760",
      "--dynamic-config-value",
      'frontend.someString="on"',
      "--log-level",
      "error",
    ]);
  });

  it("adds the UI port and the SQLite file when given, and no --namespace for default", () => {
    const args = startDevArgs({ ...config, namespace: "default" }, { port: 7233, uiPort: 8233, dbFile: "/x/t.sqlite" });
    expect(args.slice(0, 10)).toEqual([
      "server",
      "start-dev",
      "--ip",
      "127.0.0.1",
      "--port",
      "7233",
      "--ui-port",
      "8233",
      "--db-filename",
      "/x/t.sqlite",
    ]);
    expect(args).not.toContain("--namespace");
    expect(args).not.toContain("--headless");
  });

  it("points the Web UI at a codec endpoint when given, and passes none headless or by default", () => {
    const launch = { port: 7233, uiPort: 8233, dbFile: undefined } as const;
    const args = startDevArgs(config, { ...launch, codecEndpoint: "http://127.0.0.1:8787/v1/codec" });
    expect(args.slice(0, 10)).toEqual([
      "server",
      "start-dev",
      "--ip",
      "127.0.0.1",
      "--port",
      "7233",
      "--ui-port",
      "8233",
      "--ui-codec-endpoint",
      "http://127.0.0.1:8787/v1/codec",
    ]);
    expect(startDevArgs(config, launch)).not.toContain("--ui-codec-endpoint");
    expect(
      startDevArgs(config, { ...launch, uiPort: false, codecEndpoint: "http://127.0.0.1:8787/v1/codec" }),
    ).not.toContain("--ui-codec-endpoint");
  });
});
