/**
 * Tests listen on ports the OS picks (`listen(0, '127.0.0.1')`), never on fixed ones, so runs
 * can overlap on one machine. The helper is the one the dev server code uses.
 */

export { getFreePort, isPortFree } from "../../src/dev/free-port.ts";
