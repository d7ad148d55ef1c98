/**
 * Worker Versioning's settings are a worker's: the API serves no version, so an env file shared
 * by every process (docs/self-hosted.md) may carry REWIND_DEPLOYMENT_NAME while only the workers'
 * own settings add REWIND_BUILD_ID. Such a file starts `rewind api`; a worker started from it
 * alone refuses, with the sentence naming the settings.
 */
import { describe, expect, inject, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { runRewind, spawnRewind } from "../helpers/rewind-process.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";

const load = (env: Record<string, string>) =>
  loadConfig({ REWIND_STATE_DIR: "/tmp/rewind-config-test", ...env }, "/tmp");
const INCOMPLETE = "REWIND_DEPLOYMENT_NAME and REWIND_BUILD_ID go together";

describe("worker versioning settings without a build id", () => {
  it.each([
    [{ REWIND_DEPLOYMENT_NAME: "rewind" }, INCOMPLETE],
    [{ REWIND_DEPLOYMENT_NAME: "rewind", REWIND_VERSIONING_BEHAVIOR: "auto-upgrade" }, INCOMPLETE],
    [{ REWIND_BUILD_ID: "v1" }, INCOMPLETE],
    [
      { REWIND_VERSIONING_BEHAVIOR: "pinned" },
      "REWIND_VERSIONING_BEHAVIOR needs REWIND_DEPLOYMENT_NAME and REWIND_BUILD_ID",
    ],
  ])("load %j as no version, and say why a worker would refuse them", (env, sentence) => {
    const { temporal } = load(env);
    expect(temporal.deployment).toBeUndefined();
    expect(temporal.deploymentIncomplete).toContain(sentence);
  });

  it("start `rewind api`, and a `rewind worker` refuses them with one sentence", async () => {
    const shared = {
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
      REWIND_STATE_DIR: `${REPO_ROOT}/.rewind`,
      REWIND_DEPLOYMENT_NAME: "rewind",
    };
    const api = spawnRewind(["api"], { ...shared, REWIND_PORT: "0" });
    try {
      const worker = await runRewind(["worker"], shared);
      expect(worker.code).toBe(1);
      expect(worker.output.trimEnd().split("\n").at(-1)).toBe(
        "rewind: REWIND_DEPLOYMENT_NAME and REWIND_BUILD_ID go together: set both to run a versioned worker, or neither",
      );
      await api.waitFor(/Rewind API http:\/\/127\.0\.0\.1:\d+/, 45_000);
    } finally {
      await api.stop();
    }
  });
});
