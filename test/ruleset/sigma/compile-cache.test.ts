import { describe, expect, test } from 'bun:test'
import { CompileCache, ruleSet, SigmaInvalid } from '../../../src/ruleset/sigma'

const rule = (value: string) => `title: t\ndetection:\n  sel:\n    Image|endswith: '${value}'\n  condition: sel\n`

describe('compile cache', () => {
  test('the same content compiles once and is the same object', () => {
    const cache = new CompileCache()
    const a = cache.compile(rule('\\cmd.exe'), { fieldMapping: { Image: 'process.executable' } }, 'r1')
    const b = cache.compile(rule('\\cmd.exe'), { fieldMapping: { Image: 'process.executable' } }, 'r1')
    expect(b).toBe(a)
    expect(a.id).toBe('r1')
    expect(a.fields).toEqual(['process.executable'])
    expect([cache.hits, cache.misses]).toEqual([1, 1])
  })

  test('another text, mapping or id is another entry', () => {
    const cache = new CompileCache()
    const a = cache.compile(rule('\\cmd.exe'), {}, 'r1')
    expect(cache.compile(rule('\\pwsh.exe'), {}, 'r1')).not.toBe(a)
    expect(cache.compile(rule('\\cmd.exe'), { fieldMapping: { Image: 'x' } }, 'r1').fields).toEqual(['x'])
    expect(cache.compile(rule('\\cmd.exe'), {}, 'r2').id).toBe('r2')
    expect(cache.misses).toBe(4)
  })

  test('forget(id) drops the entries of an updated or deleted rule', () => {
    const cache = new CompileCache()
    const a = cache.compile(rule('\\cmd.exe'), {}, 'r1')
    cache.compile(rule('\\cmd.exe'), {}, 'r2')
    cache.forget('r1')
    expect(cache.size).toBe(1)
    expect(cache.compile(rule('\\cmd.exe'), {}, 'r1')).not.toBe(a)
  })

  test('errors are cached and thrown again', () => {
    const cache = new CompileCache()
    const bad = 'title: t\ndetection:\n  sel: {a: 1}\n  condition: nope\n'
    expect(() => cache.compile(bad)).toThrow(SigmaInvalid)
    expect(() => cache.compile(bad)).toThrow(SigmaInvalid)
    expect([cache.hits, cache.misses]).toEqual([1, 1])
  })

  test('the cache is bounded (least recently used evicted)', () => {
    const cache = new CompileCache(3)
    for (let i = 0; i < 5; i++) cache.compile(rule(`\\b${i}.exe`), {}, `r${i}`)
    expect(cache.size).toBe(3)
    cache.compile(rule('\\b0.exe'), {}, 'r0')
    expect(cache.misses).toBe(6)
  })

  test('a rebuilt array of cached rules reuses its indexed rule set', () => {
    const cache = new CompileCache()
    const make = () => [cache.compile(rule('\\a.exe'), {}, 'a'), cache.compile(rule('\\b.exe'), {}, 'b')]
    const types = new Map([['Image', { type: 'keyword' }]])
    expect(ruleSet(make(), types)).toBe(ruleSet(make(), types))
    expect(ruleSet(make())).not.toBe(ruleSet(make(), types))
  })
})
