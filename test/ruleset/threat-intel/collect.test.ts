import { describe, expect, test } from 'bun:test'
import { candidateIds, candidateType, IocCollector, MAX_EVENTS_PER_VALUE, valuesAt } from '../../../src/ruleset/threat-intel/collect'
import { iocFieldsOf } from '../../../src/ruleset/threat-intel/ioc-fields'
import { compileSigmaRule, evaluateRules, ruleSet } from '../../../src/ruleset/sigma'
import { DocView } from '../../../src/store/query'

describe('IoC fields of a log type', () => {
  test("the peer's built-in lists by name, a log type's own list first, none for others", () => {
    expect(iocFieldsOf('Network', undefined)).toEqual([{ type: 'ipv4-addr', fields: ['destination.ip', 'source.ip'] }])
    expect(iocFieldsOf('vpcflow', undefined)).toEqual([{ type: 'ipv4-addr', fields: ['dst_endpoint.ip', 'src_endpoint.ip'] }])
    expect(iocFieldsOf('linux', undefined)).toEqual([])
    expect(
      iocFieldsOf('network', [
        { ioc: 'domain-name', fields: ['dns.question.name', 'dns.question.name'] },
        { ioc: 'hashes', fields: [] },
      ]),
    ).toEqual([{ type: 'domain-name', fields: ['dns.question.name'] }])
  })
})

describe('values at a field path', () => {
  test('nested objects, flat dotted keys, mixed, arrays; only strings', () => {
    expect(valuesAt({ source: { ip: '1.2.3.4' } }, 'source.ip')).toEqual(['1.2.3.4'])
    expect(valuesAt({ 'source.ip': '1.2.3.4' }, 'source.ip')).toEqual(['1.2.3.4'])
    expect(valuesAt({ a: { 'b.c': 'x' } }, 'a.b.c')).toEqual(['x'])
    expect(valuesAt({ related: { ip: ['1.1.1.1', '2.2.2.2'] } }, 'related.ip')).toEqual(['1.1.1.1', '2.2.2.2'])
    expect(valuesAt({ hosts: [{ ip: 'a' }, { ip: 'b' }] }, 'hosts.ip')).toEqual(['a', 'b'])
    expect(valuesAt({ source: { ip: 7 } }, 'source.ip')).toEqual([])
    expect(valuesAt({ source: 'x' }, 'source.ip')).toEqual([])
  })

  test('a field held both as a flat dotted key and nested has the values of both, as the rules read it', () => {
    const event = { 'source.ip': '1.2.3.4', source: { ip: '5.6.7.8' } }
    expect(valuesAt(event, 'source.ip').sort()).toEqual(['1.2.3.4', '5.6.7.8'])
    const rule = compileSigmaRule('title: t\nlogsource:\n  product: x\ndetection:\n  sel:\n    source.ip: 5.6.7.8\n  condition: sel\n')
    expect(evaluateRules(event, [rule])).toHaveLength(1)
    const c = new IocCollector([{ type: 'ipv4-addr', fields: ['source.ip'] }])
    c.collect('e1', event)
    expect(c.take()!.values.sort()).toEqual(['1.2.3.4', '5.6.7.8'])
    // Through the view the rules read it with (its values kept there), the same values.
    const doc = new DocView(event)
    expect(ruleSet([rule]).evaluate(doc)).toHaveLength(1)
    c.collect('e1', doc)
    expect(c.take()!.values.sort()).toEqual(['1.2.3.4', '5.6.7.8'])
  })
})

describe('IocCollector', () => {
  test('distinct (type, value) per batch with the events holding it; a fresh start after take', () => {
    const c = new IocCollector([{ type: 'ipv4-addr', fields: ['source.ip', 'destination.ip'] }])
    c.collect('e1', { source: { ip: '10.0.0.1' }, destination: { ip: '10.0.0.2' } })
    c.collect('e2', { source: { ip: '10.0.0.2' } })
    c.collect('e3', { other: 1 })
    const got = c.take()!
    expect(got.values).toEqual(['10.0.0.1', '10.0.0.2'])
    expect([0, 1].map((k) => candidateType(got, k))).toEqual(['ipv4-addr', 'ipv4-addr'])
    expect([0, 1].map((k) => candidateIds(got, k))).toEqual([['e1'], ['e1', 'e2']])
    expect([...got.counts]).toEqual([1, 2])
    expect(c.take()).toBeUndefined()
  })

  test('an event holding a value in two fields is named once; events per value are bounded, the count is not', () => {
    const c = new IocCollector([{ type: 'ipv4-addr', fields: ['source.ip', 'destination.ip'] }])
    c.collect('e1', { source: { ip: '10.0.0.9' }, destination: { ip: '10.0.0.9' } })
    for (let i = 0; i < MAX_EVENTS_PER_VALUE + 20; i++) c.collect(`x${i}`, { source: { ip: '10.0.0.9' } })
    const got = c.take()!
    const ids = candidateIds(got, 0)
    expect(ids[0]).toBe('e1')
    expect(ids[1]).toBe('x0')
    expect(ids.length).toBe(MAX_EVENTS_PER_VALUE)
    expect(got.counts[0]).toBe(MAX_EVENTS_PER_VALUE + 22)
  })
})
