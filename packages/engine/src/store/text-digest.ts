/** Lowercase hex of `algorithm` over the UTF-8 bytes of `text` (WebCrypto: Node, Workers, browsers). */
export async function textDigest(text: string, algorithm: 'SHA-1' | 'SHA-256'): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest(algorithm, new TextEncoder().encode(text)));
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex;
}
