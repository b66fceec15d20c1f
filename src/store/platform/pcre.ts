/**
 * The body as the platform may see it (private Sigma parts translated, see ./private-nodes.ts),
 * for callers that cannot evaluate in-process afterwards.
 */
import { forPlatform } from './private-nodes'

export function withoutPcre<T>(value: T): T {
  return forPlatform(value).body
}
