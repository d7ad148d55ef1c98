/**
 * Seals secrets (credentials, webhook signing secrets) with AES-256-GCM before they reach
 * Temporal, and opens them only where they are used. A sealed value is a self-describing
 * string `sb1.<iv>.<tag>.<ciphertext>` (base64url), so it can sit in any JSON document.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "sb1";
const KEY_BYTES = 32;
const IV_BYTES = 12;

export class SecretBoxError extends Error {
  override name = "SecretBoxError";
}

export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** `key` is 32 bytes, e.g. from REWIND_SECRET_KEY (base64). */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES)
    throw new SecretBoxError(`the secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
  return {
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return [
        VERSION,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        data.toString("base64url"),
      ].join(".");
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || data === undefined) throw new SecretBoxError("not a sealed secret");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretBoxError(
          "the sealed secret does not open with this key (wrong REWIND_SECRET_KEY, or tampered)",
        );
      }
    },
  };
}

export function generateSecretKey(): Buffer {
  return randomBytes(KEY_BYTES);
}
