/** Credentials at rest and in use: sealing secrets (AES-256-GCM), the key, and resolving a call's credentials from the toolset's record. */
export { createCredentialResolver, type CredentialResolver } from "./credential-resolver.ts";
export { createSecretBox, type SecretBox } from "./secret-box.ts";
export { resolveSecretKey } from "./secret-key.ts";
