import type { Server } from 'bun'

// Elysia's fetch does not carry Bun's server, so the client address is noted
// per request at the front door and looked up by whoever needs it (the
// failed-login throttle).
const addresses = new WeakMap<Request, string>()

export function noteRemoteAddress(request: Request, server: Server<unknown> | undefined): void {
  const ip = server?.requestIP(request)?.address
  if (ip) addresses.set(request, ip)
}

export function remoteAddressOf(request: Request): string | undefined {
  return addresses.get(request)
}

/** A request rebuilt at the front door keeps the address of the one it replaces. */
export function carryRemoteAddress(from: Request, to: Request): void {
  const ip = addresses.get(from)
  if (ip) addresses.set(to, ip)
}
