/**
 * A real S3-compatible server for the S3 payload store's tests, never a mock: moto's server mode
 * (a Python package from PyPI), installed once into `.rewind/moto-venv` the way the temporal CLI
 * goes into `.rewind/venv`, and started per test file on a free loopback port. Only the S3 extra
 * and the server's web dependencies (flask, flask-cors) are installed: `moto[server]` pulls in
 * every AWS service's dependencies and takes twice as long for nothing these tests use.
 *
 * `.ci/run` calls this file with `--install` before the tests, so the one-time pip install is its
 * own step and not a timed-out test hook; `startS3Server` installs on demand too.
 *
 * Usage: node test/helpers/s3-server.ts --install
 */
import { startServerProcess } from "./server-process.ts";
import path from "node:path";
import { waitFor } from "./wait-for.ts";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { getFreePort } from "../../src/dev/free-port.ts";
import { REPO_ROOT } from "./paths.ts";
import { ensureVenv } from "./python-venv.ts";

export const MOTO_VERSION = "5.2.5";
const REQUIREMENTS = [`moto[s3]==${MOTO_VERSION}`, "flask!=2.2.0,!=2.2.1", "flask-cors"];
const VENV = path.join(REPO_ROOT, ".rewind", "moto-venv");
const STARTUP_MS = 60_000;

/** Credentials moto accepts (any); the region the tests' clients use. */
export const S3_TEST_REGION = "us-east-1";
export const S3_TEST_CREDENTIALS = { accessKeyId: "rewind-test", secretAccessKey: "rewind-test" };

/** Installs moto into `.rewind/moto-venv` unless it is there already; returns the venv's python. */
export async function ensureMoto(log: (line: string) => void = () => {}): Promise<string> {
  return ensureVenv({
    name: "moto",
    venvDir: VENV,
    requirements: REQUIREMENTS,
    probe: "import moto, moto.server, flask_cors; print(moto.__version__)",
    expectedVersion: MOTO_VERSION,
    log,
  });
}

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  /** A client for this server (path-style, test credentials). */
  client(): S3Client;
  /** Creates a bucket and returns its name. */
  createBucket(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts moto's S3 server on a free loopback port and waits until it answers. */
export async function startS3Server(): Promise<S3Server> {
  const python = await ensureMoto((line) => console.log(line));
  const port = await getFreePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const server = startServerProcess(python, ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)], {
    env: { PATH: process.env["PATH"] ?? "", PYTHONUNBUFFERED: "1" },
  });
  const stop = () => server.stop();

  try {
    await waitFor(
      `moto server to answer on ${endpoint}`,
      async () => {
        if (server.ended) {
          throw new Error(
            `moto server exited (${server.child.exitCode ?? server.child.signalCode}) before answering on ${endpoint}`,
          );
        }
        // Refused until it listens.
        const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) }).catch(
          (error: unknown) => error,
        );
        if (!(response instanceof Response)) return false;
        await response.body?.cancel();
        return response.ok;
      },
      { timeoutMs: STARTUP_MS, intervalMs: 200 },
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}:\n${server.output()}`, { cause: error });
  }

  const client = () =>
    new S3Client({ endpoint, region: S3_TEST_REGION, credentials: S3_TEST_CREDENTIALS, forcePathStyle: true });
  return {
    endpoint,
    client,
    async createBucket(name) {
      const s3 = client();
      try {
        await s3.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        s3.destroy();
      }
      return name;
    },
    stop,
  };
}

if (import.meta.main && process.argv.includes("--install")) {
  try {
    const started = Date.now();
    const python = await ensureMoto((line) => process.stderr.write(`${line}\n`));
    process.stderr.write(`moto ${MOTO_VERSION} ready (${Math.round((Date.now() - started) / 1000)} s)\n`);
    process.stdout.write(`${python}\n`);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
