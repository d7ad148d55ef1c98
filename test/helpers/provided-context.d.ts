/**
 * What the Temporal global setup hands every test file through `inject(...)`, typed so a test
 * cannot ask for a key the setup never provides.
 */

export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** `host:port` of the one dev server this test run shares. */
    temporalAddress: string;
    /** Namespace it serves (from temporal-dev.yml; `default`). */
    temporalNamespace: string;
    /** The `temporal` binary the setup found or installed, for tests that start their own. */
    temporalCliPath: string;
  }
}
