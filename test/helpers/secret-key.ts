/** One key for the whole test run: every stack and worker process must open what another sealed. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7);
