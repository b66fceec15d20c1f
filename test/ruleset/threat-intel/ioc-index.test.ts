import { describe, expect, test } from 'bun:test'
import { IocIndex } from '../../../src/ruleset/threat-intel/ioc-index'
import { iocTypeOf, parseIp, parseIpv6 } from '../../../src/ruleset/threat-intel/ioc-types'

const index = (...entries: Array<[string, string, string]>) => {
  const ix = new IocIndex()
  for (const [id, type, value] of entries) ix.put({ id, type, value })
  return ix
}

describe('IoC types', () => {
  test('feed types map onto the peer types, the address family from the value', () => {
    expect(iocTypeOf('ip:port', '192.0.2.10:4444')).toBe('ipv4-addr')
    expect(iocTypeOf('ip', '2001:db8::1')).toBe('ipv6-addr')
    expect(iocTypeOf('ip', '[2001:db8::1]:443')).toBe('ipv6-addr')
    expect(iocTypeOf('domain', 'Phish.Example.NET.')).toBe('domain-name')
    expect(iocTypeOf('sha256_hash', 'A'.repeat(64))).toBe('hashes')
    expect(iocTypeOf('md5_hash', 'abc')).toBeUndefined()
    expect(iocTypeOf('url', 'http://malware.example/payload.bin')).toBe('url')
    expect(iocTypeOf('ip', 'not-an-ip')).toBeUndefined()
    expect(iocTypeOf('email', 'a@b.c')).toBeUndefined()
  })

  test('IPv6 forms parse to the same address', () => {
    expect(parseIpv6('2001:db8::1')).toBe(parseIpv6('2001:0db8:0000:0000:0000:0000:0000:0001'))
    expect(parseIpv6('::ffff:192.0.2.1')).toBe('00000000000000000000ffffc0000201')
    expect(parseIpv6('1::2::3')).toBeUndefined()
    expect(parseIp('10.1.2.3/8')).toEqual({ family: 4, addr: 10 * 2 ** 24, bits: 8 })
    expect(parseIp('10.1.2.3/33')).toBeUndefined()
  })
})

describe('IocIndex', () => {
  test('exact addresses, with or without a port in the feed', () => {
    const ix = index(['a', 'ip:port', '192.0.2.10:4444'], ['b', 'ip', '203.0.113.5'])
    expect(ix.match('ipv4-addr', '192.0.2.10')).toEqual(['a'])
    expect(ix.match('ipv4-addr', '203.0.113.5')).toEqual(['b'])
    expect(ix.match('ipv4-addr', '203.0.113.6')).toEqual([])
    expect(ix.match('ipv4-addr', 'garbage')).toEqual([])
  })

  test('networks hold their addresses, every matching prefix is reported', () => {
    const ix = index(['net8', 'ip', '10.0.0.0/8'], ['net24', 'cidr', '10.1.2.0/24'], ['host', 'ip', '10.1.2.3'])
    expect(ix.match('ipv4-addr', '10.1.2.3').sort()).toEqual(['host', 'net24', 'net8'])
    expect(ix.match('ipv4-addr', '10.1.3.1')).toEqual(['net8'])
    expect(ix.match('ipv4-addr', '11.0.0.1')).toEqual([])
    const v6 = index(['n', 'ip', '2001:db8:abcd::/48'], ['h', 'ip', '2001:db8::1'])
    expect(v6.match('ipv6-addr', '2001:db8:abcd:12::99')).toEqual(['n'])
    expect(v6.match('ipv6-addr', '2001:0db8::0001')).toEqual(['h'])
    expect(v6.match('ipv6-addr', '2001:db8:abce::1')).toEqual([])
    // A field typed for one family still matches the other's listings.
    expect(v6.match('ipv4-addr', '2001:db8::1')).toEqual(['h'])
  })

  test('a listed domain matches itself and its sub-domains, not its parent or look-alikes', () => {
    const ix = index(['d', 'domain', 'phish.example.net'])
    expect(ix.match('domain-name', 'phish.example.net')).toEqual(['d'])
    expect(ix.match('domain-name', 'Login.PHISH.example.net.')).toEqual(['d'])
    expect(ix.match('domain-name', 'example.net')).toEqual([])
    expect(ix.match('domain-name', 'notphish.example.net')).toEqual([])
  })

  test('hashes (md5, sha1, sha256) and URLs match exactly, case of hex and host aside', () => {
    const md5 = 'd41d8cd98f00b204e9800998ecf8427e'
    const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709'
    const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    const ix = index(
      ['m', 'md5_hash', md5],
      ['s1', 'sha1_hash', sha1],
      ['s2', 'sha256_hash', sha256],
      ['u', 'url', 'http://malware.example/payload.bin'],
    )
    expect(ix.match('hashes', md5.toUpperCase())).toEqual(['m'])
    expect(ix.match('hashes', sha1)).toEqual(['s1'])
    expect(ix.match('hashes', sha256)).toEqual(['s2'])
    expect(ix.match('hashes', sha256.slice(1) + '0')).toEqual([])
    expect(ix.match('url', 'HTTP://Malware.Example/payload.bin')).toEqual(['u'])
    expect(ix.match('url', 'http://malware.example/Payload.bin')).toEqual([])
  })

  test('changes apply one by one: update moves the key, delete drops it, shared values keep the other id', () => {
    const ix = index(['a', 'ip', '192.0.2.1'], ['b', 'ip', '192.0.2.1'], ['c', 'domain', 'bad.example'])
    ix.apply([
      ['a', { id: 'a', type: 'ip', value: '192.0.2.2' }],
      ['c', null],
      ['d', { id: 'd', type: 'url', value: 'https://x.example/' }],
    ])
    expect(ix.match('ipv4-addr', '192.0.2.1')).toEqual(['b'])
    expect(ix.match('ipv4-addr', '192.0.2.2')).toEqual(['a'])
    expect(ix.match('domain-name', 'bad.example')).toEqual([])
    expect(ix.match('url', 'https://x.example')).toEqual(['d'])
    expect(ix.size).toBe(3)
    ix.remove('b')
    ix.remove('missing')
    expect(ix.match('ipv4-addr', '192.0.2.1')).toEqual([])
    // An IoC changed to a type the index cannot match leaves it.
    ix.put({ id: 'a', type: 'email', value: 'x@y.z' })
    expect(ix.match('ipv4-addr', '192.0.2.2')).toEqual([])
    expect(ix.size).toBe(1)
    ix.clear()
    expect(ix.size).toBe(0)
    expect(Object.values(ix.counts()).reduce((a, b) => a + b)).toBe(0)
  })

  test('a network removed leaves the other prefix lengths probing', () => {
    const ix = index(['n16', 'ip', '172.16.0.0/16'], ['n12', 'ip', '172.16.0.0/12'])
    ix.remove('n16')
    expect(ix.match('ipv4-addr', '172.16.5.5')).toEqual(['n12'])
    ix.remove('n12')
    expect(ix.match('ipv4-addr', '172.16.5.5')).toEqual([])
  })
})
