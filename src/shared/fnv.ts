/**
 * FNV-1a, 64 bits: a stable, cheap, non-cryptographic hash the workflow can compute (no crypto
 * there) for ids derived from other ids: call span ids, and the chain of batches a script was fed.
 */

/**
 * FNV-1a, 64 bits, as 16 hex digits: stable, cheap, and never all zeros for our inputs.
 * Computed on four 16-bit limbs with plain numbers: BigInt arithmetic costs ~50× more per
 * character, and this runs in the workflow for every call.
 */
export function fnv64(text: string): string {
  // offset basis 0xcbf29ce484222325; prime 0x100000001b3 = 0x100 << 32 | 0x1b3.
  let h0 = 0x2325,
    h1 = 0x8422,
    h2 = 0x9ce4,
    h3 = 0xcbf2;
  for (let i = 0; i < text.length; i++) {
    h0 ^= text.charCodeAt(i) & 0xffff;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + h1 * 0x100 + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  if ((h0 | h1 | h2 | h3) === 0) h0 = 1;
  return [h3, h2, h1, h0].map((limb) => limb.toString(16).padStart(4, "0")).join("");
}
