/**
 * A throw-away PKI for TLS tests, made with node:crypto alone (no `openssl` binary, which a fresh
 * CI machine may lack): a CA, a server certificate for the given names and addresses, and a
 * client certificate for mTLS, signed by the CA and written as PEM files into a directory. EC
 * P-256 keys, X.509 v3 with the extensions TLS stacks check (basic constraints, key usage,
 * extended key usage, subject alternative names), valid for a day. The DER is written by hand:
 * small, and only what these certificates need.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { writeFileSync } from "node:fs";
import { isIPv4 } from "node:net";
import path from "node:path";

export interface TestCertificates {
  /** PEM files: the CA's certificate (what clients trust), the server's pair, the client's pair. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

export interface CertificateOptions {
  /** Where the files go (must exist). */
  dir: string;
  /** DNS names the server certificate covers, the first one its CN. */
  serverNames: string[];
  /** IPv4 addresses it covers. Default `127.0.0.1`. */
  serverAddresses?: string[];
}

// DER, the few types a certificate uses.
function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, content: Buffer) => Buffer.concat([Buffer.from([tag]), length(content.length), content]);
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer) => tlv(0xa0 + n, content);
const bool = () => tlv(0x01, Buffer.from([0xff]));
const octets = (content: Buffer) => tlv(0x04, content);
const bits = (content: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), content]));
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"));
const utcTime = (date: Date) =>
  tlv(0x17, Buffer.from(`${date.toISOString().slice(2, 19).replace(/[-:T]/g, "")}Z`, "ascii"));
function integer(content: Buffer): Buffer {
  return tlv(
    0x02,
    content[0] !== undefined && content[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), content]) : content,
  );
}
function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const out = [40 * first + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
};

const name = (cn: string) => seq(set(seq(oid(OID.commonName), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [bool()] : []), octets(value));

interface Subject {
  cn: string;
  publicKey: KeyObject;
  extensions: Buffer[];
}

/** A certificate for `subject`, signed by `issuer` (itself for the CA), as PEM. */
function certificate(subject: Subject, issuer: { cn: string; key: KeyObject }): string {
  const now = Date.now();
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(randomBytes(16)),
    algorithm,
    name(issuer.cn),
    seq(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 86_400_000))),
    name(subject.cn),
    subject.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, seq(...subject.extensions)),
  );
  const der = seq(tbs, algorithm, bits(sign("sha256", tbs, issuer.key)));
  return `-----BEGIN CERTIFICATE-----\n${
    der
      .toString("base64")
      .match(/.{1,64}/g)
      ?.join("\n") ?? ""
  }\n-----END CERTIFICATE-----\n`;
}

function keyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

const DIGITAL_SIGNATURE = bits(Buffer.from([0x80]), 7);
const CERT_AND_CRL_SIGN = bits(Buffer.from([0x06]), 1);

/** Writes a CA, a server and a client certificate with their keys into `dir`; answers the paths. */
export function createTestCertificates(options: CertificateOptions): TestCertificates {
  const ca = keyPair();
  const server = keyPair();
  const client = keyPair();
  const caName = "Rewind test CA";
  const altNames = [
    ...options.serverNames.map((dns) => tlv(0x82, Buffer.from(dns, "ascii"))),
    ...(options.serverAddresses ?? ["127.0.0.1"])
      .filter((ip) => isIPv4(ip))
      .map((ip) => tlv(0x87, Buffer.from(ip.split(".").map(Number)))),
  ];
  const files: Record<string, string> = {
    "ca.pem": certificate(
      {
        cn: caName,
        publicKey: ca.publicKey,
        extensions: [
          extension(OID.basicConstraints, true, seq(bool())),
          extension(OID.keyUsage, true, CERT_AND_CRL_SIGN),
        ],
      },
      { cn: caName, key: ca.privateKey },
    ),
    "server.pem": certificate(
      {
        cn: options.serverNames[0] ?? "localhost",
        publicKey: server.publicKey,
        extensions: [
          extension(OID.basicConstraints, false, seq()),
          extension(OID.keyUsage, true, DIGITAL_SIGNATURE),
          extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
          extension(OID.subjectAltName, false, seq(...altNames)),
        ],
      },
      { cn: caName, key: ca.privateKey },
    ),
    "client.pem": certificate(
      {
        cn: "rewind-worker",
        publicKey: client.publicKey,
        extensions: [
          extension(OID.basicConstraints, false, seq()),
          extension(OID.keyUsage, true, DIGITAL_SIGNATURE),
          extension(OID.extKeyUsage, false, seq(oid(OID.clientAuth))),
        ],
      },
      { cn: caName, key: ca.privateKey },
    ),
    "server.key": server.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    "client.key": client.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(options.dir, file), text, { mode: 0o600 });
  const at = (file: string) => path.join(options.dir, file);
  return {
    caCert: at("ca.pem"),
    serverCert: at("server.pem"),
    serverKey: at("server.key"),
    clientCert: at("client.pem"),
    clientKey: at("client.key"),
  };
}
