/**
 * The Lucene translation must accept exactly the strings the original pattern finds with
 * JavaScript search semantics (what the in-memory evaluator runs). Checked through the store's
 * Lucene reader on fixed and pseudo-random strings built from each pattern's own characters.
 */
import { expect, test } from 'bun:test'
import { compileRegex, type RegexFlag } from '../../../src/ruleset/sigma/regex'
import { luceneRegExp } from '../../../src/store/query'
import { nextSeed } from '../../../scripts/bench/lib/random'

// Each pattern with strings it finds; mutations of those give near misses and more hits.
const patterns: [string, RegexFlag[], string[]][] = [
  ['\\s-H\\s', [], ['curl -H x']],
  ['^adm_[a-z]+$', [], ['adm_bob']],
  ['mimi(katz|lib)', ['i'], ['x MimiKatz', 'mimilib']],
  ['(?i)\\\\temp\\\\[a-z]{3}\\.exe', [], ['C:\\TEMP\\abc.exe']],
  ['^root$', ['m'], ['a\nroot\nb']],
  ['^root$', [], ['root']],
  ['begin.+end', [], ['begin x end']],
  ['begin.+end', ['s'], ['begin\nend']],
  ['(?:cmd|powershell)\\.exe.*?/c\\s+\\w+\\d{2,}', [], ['cmd.exe /c run42', 'powershell.exe x /c a_12']],
  ['^svc|host$', [], ['svc1', 'myhost']],
  ['a<b>c~d&e@f#g"h', [], ['a<b>c~d&e@f#g"h']],
  ['[\\w-.]+@[^\\s@]+', [], ['a.b-c@x.y']],
  ['^\\S+\\s\\S+$', [], ['a b']],
  ['x{2,3}y?z*', ['i'], ['XXyzz']],
  ['[^\\d.]{2}$', [], ['1ab']],
  ['\\x41\\u00e9\\t', [], ['Aé\t']],
  ['^(a|)b$', [], ['b', 'ab']],
  ['^$', [], ['']],
  ['^a.c$', ['m', 's'], ['x\na\nc\ny']],
  ['\\W\\D', [], ['-a']],
  ['(ab)+?$', [], ['xabab']],
  ['^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$', [], ['10.0.0.1']],
  ['[A-F0-9]{8}-[A-F0-9]{4}', ['i'], ['deadbeef-0A1b']],
]

const fixed = [
  '',
  'a',
  '\n',
  'root',
  'x\nroot\ny',
  'begin\nend',
  'cmd.exe /c run42',
  'adm_bob',
  'A<B>C~D&E@F#G"H',
  'Aé\t',
  'a\u2028c',
  'a\rc',
  'abc',
  ' -H ',
]

function* rng(seed: number) {
  for (;;) {
    seed = nextSeed(seed)
    yield seed
  }
}

for (const [pattern, flags, hits] of patterns) {
  test(`${pattern} /${flags.join('')}`, () => {
    const r = compileRegex(pattern, new Set(flags))
    const js = new RegExp(r.pcre.pattern, r.pcre.flags)
    const lucene = luceneRegExp(r.lucene, 'NONE', r.caseInsensitive)
    const alphabet = [...new Set([...pattern.replace(/\\[a-z]/gi, ''), 'a', 'Z', '5', ' ', '\n', '\r', '\t', '_', '.', '-', 'é'])]
    const gen = rng(pattern.length * 7919)
    const pick = () => gen.next().value!
    const samples = [...fixed, ...hits]
    for (let i = 0; i < 3000; i++) {
      if (i % 2 === 0) {
        // A mutation of a known hit: replace, insert or delete one or two characters, or flip case.
        let s = hits[pick() % hits.length]
        for (let k = 0; k <= pick() % 2; k++) {
          const at = pick() % (s.length + 1)
          const c = alphabet[pick() % alphabet.length]
          const op = pick() % 4
          s =
            op === 0
              ? s.slice(0, at) + c + s.slice(at + 1)
              : op === 1
                ? s.slice(0, at) + c + s.slice(at)
                : op === 2
                  ? s.slice(0, at) + s.slice(at + 1)
                  : s.toUpperCase()
        }
        samples.push(s, `${alphabet[pick() % alphabet.length]}${s}`)
        continue
      }
      const len = pick() % 12
      let s = ''
      for (let j = 0; j < len; j++) s += alphabet[pick() % alphabet.length]
      samples.push(s)
    }
    let agreeing = 0
    let positives = 0
    for (const s of samples) {
      const expected = js.test(s)
      if (expected) positives++
      if (lucene.test(s) === expected) agreeing++
      else expect({ pattern, lucene: r.lucene, sample: s, lucene_says: !expected }).toBeUndefined()
    }
    expect(agreeing).toBe(samples.length)
    // Both sides must be exercised: hits and misses.
    expect(positives).toBeGreaterThanOrEqual(hits.length)
    expect(samples.length - positives).toBeGreaterThan(100)
  })
}
