// The native fast path of the regexp engine (native-regexp.ts): which patterns it takes (only those
// a backtracking engine runs in linear time), and that the matcher answers exactly as RE2 on every
// value, taken or not, ASCII or not, in every mode (search, whole value, case, dotAll).
import { describe, expect, test } from 'bun:test'
import { RE2JS } from 're2js'
import { fromJavaScript, linearRegExp } from '../../../src/store/query/linear-regexp'
import { nativeTest } from '../../../src/store/query/native-regexp'
import { sigmaRulesDir } from '../../../scripts/bench/lib/sigma-rules'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { nextSeed } from '../../../scripts/bench/lib/random'

const search = { anchored: false }

describe('patterns taken by the native engine', () => {
  const taken = [
    'net\\s+config',
    'ipconfig\\s+/all|netsh\\s+interface show interface|arp\\s+-a',
    '^adm_[a-z]+$',
    'a\\d{2,}b',
    '[A-F0-9]{8}-[A-F0-9]{4}',
    '\\\\temp\\\\[a-z]{3}\\.exe',
    'x|',
    '$',
    '^\\s*$',
    'x\\d+\\.\\d+',
    '(?i)net\\s+config',
  ]
  for (const p of taken) test(p, () => expect(nativeTest(p, search)).toBeDefined())

  // Each can backtrack more than linearly (or is not read the same by both engines).
  const refused = [
    ['(a+)+b', 'a group'],
    ['a.*b', '.* reads what follows it'],
    ['\\s+x', 'a run first: every start inside it reads it again'],
    ['a\\w+b', 'the run reads its neighbours'],
    ['a\\s*\\s*b', 'two runs of the same characters'],
    ['ab+?c', 'lazy'],
    ['(?s)a.b', 'flags other than a leading (?i)'],
    ['(?i)a(?:b)', 'a group after the flag'],
    ['a\\bb', 'word boundary'],
    ['é\\s+x', 'non-ASCII'],
    ['a\\p{L}+', 'Unicode class'],
    ['[[:alpha:]]+x', 'POSIX class'],
    ['a{,3}', 'RE2 reads it as text'],
  ]
  for (const [p, why] of refused) test(`${p} (${why})`, () => expect(nativeTest(p, search)).toBeUndefined())

  test('case is folded before sets are compared: A\\s+ and [a]+ meet under i', () => {
    expect(nativeTest('x[a]+A', search)).toBeDefined()
    expect(nativeTest('x[a]+A', { anchored: false, caseInsensitive: true })).toBeUndefined()
  })

  test('a multiline pattern stays with RE2', () => expect(nativeTest('^a$', { anchored: false, multiline: true })).toBeUndefined())
})

/** Pseudo-random strings over the pattern's characters, some spaces, a newline and a non-ASCII one. */
function values(pattern: string, seed: number, n: number): string[] {
  let x = seed
  const rand = () => ((x = nextSeed(x)), x / 2147483648)
  const alphabet = [...new Set(pattern.replace(/[\\[\]^$(){}|*+?]/g, '') + ' \t\nAZaz09-./é_')]
  const out = ['', ' ', '\n', 'é']
  for (let i = 0; i < n; i++) {
    const len = Math.floor(rand() * 24)
    let s = ''
    for (let k = 0; k < len; k++) s += alphabet[Math.floor(rand() * alphabet.length)]
    out.push(s)
  }
  return out
}

type Mode = { anchored: boolean; caseInsensitive?: boolean; dotAll?: boolean }
const modes: Mode[] = [
  { anchored: false },
  { anchored: false, caseInsensitive: true },
  { anchored: true, dotAll: true },
  { anchored: true, dotAll: true, caseInsensitive: true },
]

function agree(pattern: string, extra: string[], seed: number): void {
  for (const mode of modes) {
    let flags = 0
    if (mode.caseInsensitive) flags |= RE2JS.CASE_INSENSITIVE
    if (mode.dotAll) flags |= RE2JS.DOTALL
    const re2 = RE2JS.compile(pattern, flags)
    const ours = linearRegExp(pattern, mode)
    for (const v of [...extra, ...values(pattern, seed, 300)]) {
      const want = mode.anchored ? re2.matches(v) : re2.test(v)
      if (ours.test(v) !== want) throw new Error(`${JSON.stringify(mode)} /${pattern}/ on ${JSON.stringify(v)}: RE2 says ${want}`)
    }
  }
}

describe('answers equal RE2', () => {
  const cases: [string, string[]][] = [
    ['net\\s+config', ['net  config', 'NET\tCONFIG', 'netconfig', 'x net \n config']],
    ['(?i)net\\s+config', ['NET  Config', 'netconfig']],
    ['ipconfig\\s+/all|arp\\s+-a', ['ipconfig /all', 'arp -a', 'arp-a', 'IPCONFIG  /ALL']],
    ['^adm_[a-z]+$', ['adm_bob', 'adm_', 'xadm_bob', 'adm_Bob']],
    ['a\\d{2,}b', ['a12b', 'a1b', 'xa123456by']],
    ['[A-F0-9]{8}-[A-F0-9]{4}', ['deadbeef-0A1b', 'DEADBEEF-0A1B']],
    ['\\\\temp\\\\[a-z]{3}\\.exe', ['C:\\TEMP\\abc.exe', 'c:\\temp\\abc.exe']],
    ['x|', ['', 'y']],
    ['$', ['', 'a']],
    ['^\\s*$', ['', ' \t', ' x ']],
    ['a.b', ['a\nb', 'a\rb', 'axb']],
    ['[^\\d.]{2}$', ['1ab', 'a.', 'é1']],
    ['\\x41\\t[\\x30-\\x39]', ['A\t5', 'a\t5']],
    ['[]a]x', [']x', 'ax']],
    ['[^]a]x', ['bx', ']x']],
    ['[a-]+z', ['-z', 'a-az']],
    ['q\\S+r', ['qxxr', 'q r']],
    ['k\\W\\D', ['k-a', 'k_1']],
    ['s\\v', ['s\u000b', 's ']],
    ['a.*b', ['aXb', 'a\nb']],
    ['(a+)+b', ['aab', 'aaaa']],
  ]
  for (const [p, extra] of cases) test(p, () => agree(p, extra, p.length))

  // Every `re` of SigmaHQ's rules (when the bench's copy is present), as the Sigma compiler hands it on.
  const dir = sigmaRulesDir()
  test.skipIf(dir === undefined)("SigmaHQ's re patterns", () => {
    const found = new Set<string>()
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name))
        else if (e.name.endsWith('.yml'))
          for (const m of readFileSync(join(d, e.name), 'utf8').matchAll(/\|re[^:\n]*:\s*(?:\n\s*-\s*)?'((?:[^']|'')*)'/g))
            found.add(m[1].replaceAll("''", "'"))
      }
    }
    walk(dir!)
    expect(found.size).toBeGreaterThan(100)
    let taken = 0
    for (const p of found) {
      let source: string
      try {
        source = fromJavaScript(p)
        RE2JS.compile(source)
      } catch {
        continue // refused by the Sigma compiler too
      }
      if (nativeTest(source, search)) taken++
      agree(source, [], p.length)
    }
    expect(taken).toBeGreaterThan(20)
  })
})
