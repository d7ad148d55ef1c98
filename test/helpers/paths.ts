/** Where the repository is, for tests that start processes or read files from it. */
import path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");
