import { describe, expect, test } from 'bun:test'
import { cidrQuery, parseNetwork } from '../../../src/ruleset/sigma/cidr'
import { SigmaInvalid } from '../../../src/ruleset/sigma/errors'

const leaves = (q: unknown): string[] => {
  const j = JSON.stringify(q)
  return [...j.matchAll(/"(term|wildcard)":\{"ip":\{"value":"([^"]+)"/g)].map((m) => `${m[1]} ${m[2]}`)
}

describe('cidr', () => {
  test('octet-aligned IPv4 networks become one prefix wildcard', () => {
    expect(leaves(cidrQuery('ip', parseNetwork('10.0.0.0/8'), false))).toEqual(['wildcard 10.*'])
    expect(leaves(cidrQuery('ip', parseNetwork('192.168.1.0/24'), false))).toEqual(['wildcard 192.168.1.*'])
  })

  test('other prefixes expand to the next octet boundary', () => {
    expect(leaves(cidrQuery('ip', parseNetwork('172.16.0.0/12'), false))).toHaveLength(16)
    expect(leaves(cidrQuery('ip', parseNetwork('10.0.0.8/30'), false))).toEqual([
      'term 10.0.0.8',
      'term 10.0.0.9',
      'term 10.0.0.10',
      'term 10.0.0.11',
    ])
    expect(leaves(cidrQuery('ip', parseNetwork('1.2.3.4/32'), false))).toEqual(['term 1.2.3.4'])
    expect(leaves(cidrQuery('ip', parseNetwork('0.0.0.0/0'), false))).toEqual(['wildcard *'])
  })

  test('an ip-typed field takes the network as a term', () => {
    expect(cidrQuery('ip', parseNetwork('2001:db8::/32'), true)).toEqual({ term: { ip: { value: '2001:db8::/32' } } })
  })

  test('IPv6 on a field not mapped as ip becomes the private _cidr node (addresses parsed, any spelling)', () => {
    expect(cidrQuery('ip', parseNetwork('fe80::/10'), false)).toEqual({ _cidr: { ip: { value: 'fe80::/10' } } })
  })

  test('host bits set and malformed networks are invalid', () => {
    expect(() => parseNetwork('10.1.0.0/15')).toThrow(SigmaInvalid)
    expect(() => parseNetwork('2001:db8::1/32')).toThrow('host bits')
    expect(() => parseNetwork('10.0.0/8')).toThrow(SigmaInvalid)
    expect(() => parseNetwork('1.2.3.4/33')).toThrow(SigmaInvalid)
  })

  test('IPv6 forms parse, including embedded IPv4', () => {
    expect(parseNetwork('::ffff:10.0.0.0/104').groups).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0a00, 0])
    expect(parseNetwork('fe80::/10').prefix).toBe(10)
  })
})
