/**
 * Which event fields hold which IoC type, per log type (the peer's `ioc_fields`, reference 3.1):
 * a log type may carry its own list (`ioc_fields` on the log type document); the peer's built-in
 * log types keep theirs here. Custom log types without a list have none, so the detector flag
 * matches nothing on them (as on the peer).
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { IOC_TYPES, type IocType } from './ioc-types'

/** `ip` is the peer's name for addresses of either family. */
export const IocFieldsSchema = T.Array(
  T.Object({
    ioc: T.Union([T.Literal('ip'), ...IOC_TYPES.map((t) => T.Literal(t))]),
    fields: T.Array(T.String({ minLength: 1 })),
  }),
)
export type IocFieldsInput = Static<typeof IocFieldsSchema>

/** What the scan reads: per IoC type, the fields holding values of it. */
export type IocFieldList = Array<{ type: IocType; fields: string[] }>

const ENDPOINTS = [{ ioc: 'ip' as const, fields: ['destination.ip', 'source.ip'] }]
const BUILT_IN: Record<string, IocFieldsInput> = {
  network: ENDPOINTS,
  netflow: ENDPOINTS,
  windows: ENDPOINTS,
  cloudtrail: [{ ioc: 'ip', fields: ['src_endpoint.ip'] }],
  dns: [{ ioc: 'ip', fields: ['src_endpoint.ip'] }],
  vpcflow: [{ ioc: 'ip', fields: ['dst_endpoint.ip', 'src_endpoint.ip'] }],
}

/** The list of a log type: its own, else the built-in one of its name, else none. */
export function iocFieldsOf(logType: string, own: IocFieldsInput | undefined): IocFieldList {
  const list = own ?? BUILT_IN[logType.toLowerCase()] ?? []
  return list
    .map(({ ioc, fields }) => ({ type: ioc === 'ip' ? ('ipv4-addr' as const) : ioc, fields: [...new Set(fields)] }))
    .filter((e) => e.fields.length > 0)
}
