/**
 * Where `npm run example` looks for the stack: the API where the CLI looks (REWIND_URL,
 * REWIND_API_KEY), Temporal where the worker looks (TEMPORAL_ADDRESS and Temporal's other
 * settings), else the dev server `npm start` runs from temporal-dev.yml; flags override both.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadDevServerConfig } from "../../src/dev/index.ts";
import { harnessOptions, UsageError } from "../../examples/harness/harness-options.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

// No Temporal config file: only the variables a test names count.
const NO_PROFILE = { TEMPORAL_CONFIG_FILE: path.join(REPO_ROOT, "test/fixtures/no-such-temporal.toml") };

describe("harnessOptions", () => {
  it("finds the API and Temporal where npm start puts them when nothing is set", async () => {
    const dev = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
    const options = await harnessOptions([], NO_PROFILE);
    expect(options.api).toEqual({ url: "http://127.0.0.1:8787", apiKey: undefined });
    expect(options.temporal).toMatchObject({ address: `${dev.ip}:${dev.port}`, namespace: "default" });
    expect(options.temporalSource).toMatch(/temporal-dev\.yml/);
    expect(options.serverPort).toBe(8788);
    expect(options.yes).toBe(false);
  });

  it("reads REWIND_URL, REWIND_API_KEY, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and REWIND_EXAMPLE_PORT", async () => {
    const options = await harnessOptions(["--yes"], {
      ...NO_PROFILE,
      REWIND_URL: "http://127.0.0.1:9787/",
      REWIND_API_KEY: "key-of-sixteen-chars",
      TEMPORAL_ADDRESS: "127.0.0.1:9233",
      TEMPORAL_NAMESPACE: "tickets",
      REWIND_EXAMPLE_PORT: "9788",
    });
    expect(options.api).toEqual({ url: "http://127.0.0.1:9787", apiKey: "key-of-sixteen-chars" });
    expect(options.temporal).toMatchObject({ address: "127.0.0.1:9233", namespace: "tickets" });
    expect(options.temporalSource).toMatch(/TEMPORAL_ADDRESS/);
    expect(options.serverPort).toBe(9788);
    expect(options.yes).toBe(true);
  });

  it("lets --api and --temporal override the environment", async () => {
    const options = await harnessOptions(["--api", "http://127.0.0.1:1111", "--temporal", "127.0.0.1:2222"], {
      ...NO_PROFILE,
      REWIND_URL: "http://127.0.0.1:9787",
      TEMPORAL_ADDRESS: "127.0.0.1:9233",
    });
    expect(options.api.url).toBe("http://127.0.0.1:1111");
    expect(options.temporal.address).toBe("127.0.0.1:2222");
    expect(options.temporalSource).toBe("--temporal");
  });

  it("refuses an unknown flag and a flag without its value", async () => {
    await expect(harnessOptions(["--port", "1"], NO_PROFILE)).rejects.toThrow(UsageError);
    await expect(harnessOptions(["--api"], NO_PROFILE)).rejects.toThrow("--api needs a value");
  });
});
