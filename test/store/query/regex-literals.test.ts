// The literals read off a Sigma `re` pattern are a necessary condition: every string the pattern
// finds a match in holds one of them (folded, as the rule index and the evaluator's prefilter
// compare them). Checked on patterns of SigmaHQ's shapes against strings built from their own
// pieces, and the literals chosen for a few of them.
import { expect, test } from 'bun:test'
import { fold } from '../../../src/store/query'
import { requiredLiteralSets, requiredLiterals } from '../../../src/store/query/regex-literals'
import { nextSeed } from '../../../scripts/bench/lib/random'

const PATTERNS = [
  '\\.exe["\']?\\s+[^"]{0,64}werfaultsecure\\.exe["\']?\\s+\\d{2,10}',
  'ipconfig\\s+/all',
  'net\\s+config',
  '\\$PSHome\\[\\s*\\d{1,3}\\s*\\]\\s*\\+\\s*\\$PSHome\\[',
  '(?:set).*&&\\s?set.*(?:environment|invoke|\\$\\{?input).*&&.*"',
  'echo.*clip.*&&.*(?:Clipboard|i`?n`?v`?o`?k`?e`?)',
  '\\\\Windows\\\\System32\\\\[a-zA-Z0-9]{8}\\.tmp$',
  '-k\\s\\w{1,64}(?:\\s?(?:-p|-s))?',
  '(ab|cd)ef',
  'x(abc)+y',
  'a|b*',
  '^cmd(\\.exe)? /c',
  'Invoke-(Expression|Command)\\b',
  'AbC\\x41\\u0042q?R*S+',
  '[\\w-]+\\.ps1$',
]
const PIECES = ['net', 'config', ' ', '  ', 'set', '&&', 'environment', 'ipconfig', '/all', 'echo', 'clip', 'invoke', 'i`n`v`o`k`e']
  .concat([
    '$PSHome[',
    '1',
    ']',
    '+',
    '\\Windows\\System32\\',
    'abcdefgh',
    '.tmp',
    '-k',
    'netsvcs',
    '-p',
    'ab',
    'cd',
    'ef',
    'x',
    'abc',
    'y',
  ])
  .concat(['cmd', '.exe', '/c', 'Invoke-', 'Expression', 'AbCAB', 'R', 'S', 'run.ps1', 'werfaultsecure.exe', '"', 'b', 'a', 'C', 'q'])

let seed = 777
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
const recase = (s: string) => [...s].map((c) => (rnd() < 0.3 ? c.toUpperCase() : c)).join('')

test('every string a pattern matches holds one of its literals', () => {
  let matched = 0
  for (const pattern of PATTERNS) {
    const literals = requiredLiterals(pattern)?.map(fold)
    for (const flags of ['', 'i']) {
      const re = new RegExp(pattern, flags)
      for (let i = 0; i < 3000; i++) {
        const s = recase(Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => pick(PIECES)).join(rnd() < 0.5 ? '' : pick([' ', '\t'])))
        if (!re.test(s)) continue
        matched++
        if (literals !== undefined)
          expect({ pattern, s, held: literals.some((l) => fold(s).includes(l)) }).toEqual({ pattern, s, held: true })
      }
    }
  }
  expect(matched).toBeGreaterThan(1000)
})

test('every string a pattern matches meets every literal set of one of its branches', () => {
  let matched = 0
  let refused = 0
  for (const pattern of [...PATTERNS, 'net\\s+config', 'a\\s+b\\s\\s\\sc\\s']) {
    const branches = requiredLiteralSets(pattern)?.map((sets) => sets.map((set) => set.map(fold)))
    for (const flags of ['', 'i']) {
      const re = new RegExp(pattern, flags)
      for (let i = 0; i < 3000; i++) {
        const s = recase(Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => pick(PIECES)).join(rnd() < 0.5 ? '' : pick([' ', '\t'])))
        const holds = branches === undefined || branches.some((sets) => sets.every((set) => set.some((l) => fold(s).includes(l))))
        if (!holds) refused++
        if (!re.test(s)) continue
        matched++
        expect({ pattern, s, holds }).toEqual({ pattern, s, holds: true })
      }
    }
  }
  expect(matched).toBeGreaterThan(1000)
  expect(refused).toBeGreaterThan(10_000) // the sets do filter
  // `net` must be followed by a white space: `netsvcs config` is refused without the regex engine.
  expect(requiredLiteralSets('net\\s+config')).toEqual([
    [['config'], ['net'], ['net ', 'net\t', 'net\n', 'net\f', 'net\r'], [' config', '\tconfig', '\nconfig', '\fconfig', '\rconfig']],
  ])
})

test('the literal chosen is the longest run a branch requires, one per branch', () => {
  expect(requiredLiterals(PATTERNS[0])).toEqual(['werfaultsecure.exe'])
  expect(requiredLiterals('ipconfig\\s+/all')).toEqual(['ipconfig'])
  expect(requiredLiterals('(ab|cd)ef')).toEqual(['ef'])
  expect(requiredLiterals('x(abc)+y')).toEqual(['xabc'])
  expect(requiredLiterals('Invoke-(Expression|Command)\\b')).toEqual(['Invoke-'])
  expect(requiredLiterals('foo|barbaz')).toEqual(['foo', 'barbaz'])
  // A branch with no literal, or a construct this reader does not know: no requirement.
  expect(requiredLiterals('a|b*')).toBeUndefined()
  expect(requiredLiterals('(?=x)abc')).toBeUndefined()
  expect(requiredLiterals('\\p{L}abc')).toBeUndefined()
})
