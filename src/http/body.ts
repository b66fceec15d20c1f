import { ApiError } from "./errors";

export interface BodyLimit {
  /** Largest accepted body in bytes. */
  limit: number;
  /** The status the spec gives an over-size body on this route (400 for sessions, 413 for logtest). */
  status?: number;
  message?: string;
}

/**
 * Reads a request body, refusing it before it is buffered whole: a declared
 * Content-Length over the limit is refused at once without reading, and a
 * streamed (chunked) body is counted as it arrives and abandoned at the limit.
 */
export async function readBody(request: Request, { limit, status = 413, message }: BodyLimit): Promise<Uint8Array> {
  const tooLarge = () => new ApiError(status, message ?? `Request body exceeds the limit of ${limit} bytes.`);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

export type JsonRead = { empty: true } | { empty: false; value: unknown } | { empty: false; invalid: true };

/** Reads and parses a JSON body; the caller decides the message for empty or malformed bodies. */
export async function readJson(request: Request, limit: BodyLimit): Promise<JsonRead> {
  const bytes = await readBody(request, limit);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { empty: false, invalid: true };
  }
  if (text.trim() === "") return { empty: true };
  try {
    return { empty: false, value: JSON.parse(text) };
  } catch {
    return { empty: false, invalid: true };
  }
}

/** The common case: a JSON object body, with one message for empty, malformed and non-object bodies. */
export async function readJsonObject(request: Request, limit: BodyLimit, invalidMessage = "Invalid request body."): Promise<Record<string, unknown>> {
  const read = await readJson(request, limit);
  if (read.empty || "invalid" in read || typeof read.value !== "object" || read.value === null || Array.isArray(read.value)) {
    throw new ApiError(400, invalidMessage);
  }
  return read.value as Record<string, unknown>;
}

/** Default limit for plugin routes that take small JSON bodies. */
export const SMALL_BODY: BodyLimit = { limit: 1024 * 1024, status: 413 };
