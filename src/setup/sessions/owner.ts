import type { Caller } from '../../http/caller'

/** Owner of sessions written without a known user (reference 3.2). */
export const SHARED_OWNER = '_shared'

/** The caller's name, trimmed; a blank name falls back to the shared owner. */
export function ownerOf(caller: Pick<Caller, 'name'> | undefined): string {
  const name = caller?.name?.trim() ?? ''
  return name === '' ? SHARED_OWNER : name
}
