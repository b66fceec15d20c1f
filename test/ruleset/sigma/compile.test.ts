import { describe, expect, test } from 'bun:test'
import { compileSigmaRule, SigmaInvalid, SigmaUnsupported } from '../../../src/ruleset/sigma'

const rule = (detection: string, extra = '') => `title: t\nid: r-1\nlevel: high\ntags: [attack.t1059]\n${extra}detection:\n${detection}`
const query = (detection: string, options = {}) => compileSigmaRule(rule(detection), options).query

describe('compiled tree shape (reference sigma.md 3.4)', () => {
  test('a plain string is a case-insensitive term; a selection carries its name', () => {
    expect(query('  sel:\n    Image: C:\\x.exe\n  condition: sel')).toEqual({
      term: { Image: { value: 'C:\\x.exe', case_insensitive: true, _name: 'sel' } },
    })
  })

  test('AND is bool.filter, OR is a should-only bool with minimum_should_match 1; cheaper clauses first', () => {
    expect(query("  sel:\n    A: [x, y]\n    B: 'z'\n  condition: sel")).toEqual({
      bool: {
        filter: [
          { term: { B: { value: 'z', case_insensitive: true } } },
          {
            bool: {
              should: [{ term: { A: { value: 'x', case_insensitive: true } } }, { term: { A: { value: 'y', case_insensitive: true } } }],
              minimum_should_match: 1,
            },
          },
        ],
        _name: 'sel',
      },
    })
  })

  test('NOT is must_not without an exists guard', () => {
    expect(query('  a: {X: 1}\n  b: {Y: 2}\n  condition: a and not b')).toEqual({
      bool: {
        filter: [{ term: { X: { value: 1, _name: 'a' } } }, { bool: { must_not: [{ term: { Y: { value: 2, _name: 'b' } } }] } }],
      },
    })
  })

  test('numbers and booleans are typed terms without case_insensitive', () => {
    expect(query('  s: {N: 4688, B: true}\n  condition: s')).toMatchObject({
      bool: { filter: [{ term: { N: { value: 4688 } } }, { term: { B: { value: true } } }] },
    })
  })

  test('digits-only strings carry no case_insensitive (numeric fields reject it)', () => {
    expect(query("  s: {N: '4688'}\n  condition: s")).toEqual({ term: { N: { value: '4688', _name: 's' } } })
  })

  test('wildcards and contains/startswith/endswith become escaped wildcard queries', () => {
    const q = JSON.stringify(
      query("  s:\n    A|contains: 'a*b'\n    B|startswith: 'C:\\'\n    C|endswith: 'x\\*y'\n    D: 'p?q'\n  condition: s"),
    )
    expect(q).toContain('"A":{"value":"*a*b*","case_insensitive":true}')
    expect(q).toContain('"B":{"value":"C:\\\\\\\\*","case_insensitive":true}')
    expect(q).toContain('"C":{"value":"*x\\\\*y","case_insensitive":true}')
    expect(q).toContain('"wildcard":{"D":{"value":"p?q","case_insensitive":true}}')
  })

  test('cased drops case_insensitive', () => {
    expect(query("  s:\n    A|cased|contains: 'Ab'\n  condition: s")).toEqual({ wildcard: { A: { value: '*Ab*', _name: 's' } } })
  })

  test('null is "not exists"; empty string is a term on ""', () => {
    expect(query("  s: {A: null, B: ''}\n  condition: s")).toMatchObject({
      bool: { filter: [{ bool: { must_not: [{ exists: { field: 'A' } }] } }, { term: { B: { value: '' } } }] },
    })
  })

  test('an empty list is a null test', () => {
    expect(query('  s: {A: []}\n  condition: s')).toEqual({ bool: { must_not: [{ exists: { field: 'A' } }], _name: 's' } })
  })

  test('exists and comparisons', () => {
    expect(query('  s:\n    A|exists: true\n    B|exists: false\n    C|gte: 5\n    D|lt: 1.5\n  condition: s')).toMatchObject({
      bool: {
        filter: [
          { exists: { field: 'A' } },
          { bool: { must_not: [{ exists: { field: 'B' } }] } },
          { range: { C: { gte: 5 } } },
          { range: { D: { lt: 1.5 } } },
        ],
      },
    })
  })

  test('re becomes regexp with flags NONE, the Lucene value and the original pattern', () => {
    expect(query("  s:\n    A|re|i: '\\s-H\\s'\n  condition: s")).toEqual({
      regexp: {
        A: {
          value: expect.stringMatching(/^\.\*\[.*\]\\-H\[.*\]\.\*$/s),
          flags: 'NONE',
          case_insensitive: true,
          _pcre: { pattern: '\\s-H\\s', flags: 'i' },
          _name: 's',
        },
      },
    })
  })

  test('all ANDs the values; expansions stay OR-ed inside (windash)', () => {
    const q = query("  s:\n    A|windash|contains|all: ['-a', '-b']\n  condition: s") as any
    expect(q.bool.filter).toHaveLength(2)
    expect(q.bool.filter[0].bool.should).toHaveLength(5)
    expect(q.bool.filter[1].bool.should[1]).toEqual({ wildcard: { A: { value: '*/b*', case_insensitive: true } } })
  })

  test('neq negates the whole item', () => {
    expect(query('  s:\n    A|neq: [x, y]\n  condition: s')).toMatchObject({
      bool: { must_not: [{ bool: { should: [{ term: { A: { value: 'x' } } }, { term: { A: { value: 'y' } } }] } }], _name: 's' },
    })
  })

  test('keywords search the configured fields as case-insensitive substrings', () => {
    expect(query('  k: [evil, 42]\n  condition: k', { keywordFields: ['message'] })).toEqual({
      bool: {
        should: [{ wildcard: { message: { value: '*evil*', case_insensitive: true } } }, { wildcard: { message: { value: '*42*' } } }],
        minimum_should_match: 1,
        _name: 'k',
      },
    })
  })

  test("a modifier-only key is a keyword search with modifiers ('|all')", () => {
    const q = query("  k:\n    '|all': [a, b]\n  condition: k", { keywordFields: ['m1', 'm2'] }) as any
    expect(q.bool.filter).toHaveLength(2)
    expect(q.bool.filter[0].bool.should.map((s: any) => Object.keys(s.wildcard)[0])).toEqual(['m1', 'm2'])
  })

  test('field mapping renames fields (table or function)', () => {
    const det = '  s: {CommandLine: x, Image: y}\n  condition: s'
    const byTable = compileSigmaRule(rule(det), { fieldMapping: { CommandLine: 'process.command_line' } })
    expect(byTable.fields).toEqual(['process.command_line', 'Image'])
    const byFn = compileSigmaRule(rule(det), { fieldMapping: (f) => `winlog.event_data.${f}` })
    expect(JSON.stringify(byFn.query)).toContain('"winlog.event_data.Image"')
  })

  test('several conditions are OR-ed', () => {
    expect(query('  a: {X: 1}\n  b: {Y: 2}\n  condition: [a, b]')).toMatchObject({ bool: { should: [{}, {}], minimum_should_match: 1 } })
  })

  test('metadata is extracted; Wazuh metadata.title is accepted', () => {
    const r = compileSigmaRule(rule('  s: {A: 1}\n  condition: s'))
    expect(r).toMatchObject({ id: 'r-1', title: 't', level: 'high', tags: ['attack.t1059'], selections: ['s'] })
    const w = compileSigmaRule({ metadata: { title: 'W' }, detection: { s: { A: 1 }, condition: 's' } })
    expect(w.title).toBe('W')
  })
})

describe('condition selectors', () => {
  const det = '  selection_a: {A: 1}\n  selection_b: {B: 1}\n  _aux: {C: 1}\n  filter_x: {D: 1}\n'
  const names = (condition: string) => JSON.stringify(query(`${det}  condition: ${condition}`)).match(/"_name":"[^"]+"/g)

  test('all of pattern ANDs the matching identifiers', () => {
    expect(query(`${det}  condition: all of selection_*`)).toMatchObject({ bool: { filter: [{}, {}] } })
    expect(names('all of selection_*')).toEqual(['"_name":"selection_a"', '"_name":"selection_b"'])
  })

  test('them and plain patterns skip _-prefixed identifiers; a _ pattern selects them', () => {
    expect(names('1 of them')).toEqual(['"_name":"selection_a"', '"_name":"selection_b"', '"_name":"filter_x"'])
    expect(names('all of _*')).toEqual(['"_name":"_aux"'])
    expect(names('1 of *')).not.toContain('"_name":"_aux"')
  })

  test('a selector that matches nothing is dropped', () => {
    expect(query(`${det}  condition: selection_a and not 1 of nomatch_*`)).toEqual(query(`${det}  condition: selection_a`))
  })

  test('precedence: or < and < not', () => {
    const q = query(`${det}  condition: selection_a or not selection_b and filter_x`) as any
    expect(q.bool.should).toHaveLength(2)
    expect(q.bool.should[1].bool.filter[0]).toEqual({ bool: { must_not: [{ term: { B: { value: 1, _name: 'selection_b' } } }] } })
  })

  test('clauses are ordered by cost: terms, then wildcards, then regexps', () => {
    const q = query('  s:\n    A|re: x\n    B|contains: y\n    C: z\n  condition: s') as any
    expect(q.bool.filter.map((c: object) => Object.keys(c)[0])).toEqual(['term', 'wildcard', 'regexp'])
  })

  test('selections reports only identifiers in positive position', () => {
    const r = compileSigmaRule(rule(`${det}  condition: selection_a and not (selection_b or not filter_x)`))
    expect(r.selections.sort()).toEqual(['filter_x', 'selection_a'])
  })
})

describe('typed errors name the construct', () => {
  const cases: [string, typeof SigmaInvalid | typeof SigmaUnsupported, string][] = [
    ['  s: {A: 1}\n  condition: s | count() by B > 10', SigmaUnsupported, 'condition aggregation'],
    ['  s: {A: 1}\n  condition: s\n  timeframe: 5m', SigmaUnsupported, "detection 'timeframe'"],
    ['  s:\n    A|minute: 5\n  condition: s', SigmaUnsupported, "modifier 'minute'"],
    ['  s:\n    A|frobnicate: B\n  condition: s', SigmaUnsupported, "modifier 'frobnicate'"],
    ['  s:\n    A|expand: "%p%"\n  condition: s', SigmaUnsupported, "expand placeholder '%p%'"],
    ['  s: {A: 1}\n  condition: s AND t', SigmaInvalid, "condition 's AND t'|operators are lower case"],
    ['  s: {A: 1}\n  condition: s and t', SigmaInvalid, "condition 's and t'|unknown search identifier 't'"],
    ['  s: {A: 1}\n  condition: (s', SigmaInvalid, "condition '(s'|missing ')'"],
    ['  s: {A: 1}\n  condition: all of x*', SigmaInvalid, "condition 'all of x*'|selects no search identifier"],
    ['  s: {A: 1}\n  condition: s*', SigmaInvalid, "condition 's*'|only valid after '1 of'"],
    ['  s:\n    A|contains|re: x\n  condition: s', SigmaInvalid, "modifier 're'"],
    ['  s:\n    A|i: x\n  condition: s', SigmaInvalid, "modifier 'i'"],
    ['  s:\n    A|re: "a("\n  condition: s', SigmaInvalid, "modifier 're'"],
    ['  s:\n    A|cidr: 10.1.0.0/15\n  condition: s', SigmaInvalid, "modifier 'cidr'|host bits"],
    ['  s:\n    A|gt: abc\n  condition: s', SigmaInvalid, "modifier 'gt'"],
    ['  s:\n    A|exists: maybe\n  condition: s', SigmaInvalid, "modifier 'exists'"],
    ['  s:\n    A|base64: "a*"\n  condition: s', SigmaInvalid, "modifier 'base64'"],
    ['  s:\n    A|contains: null\n  condition: s', SigmaInvalid, "modifier 'contains'"],
    ['  s: {}\n  condition: s', SigmaInvalid, "search identifier 's'"],
    ['  s: {A: {B: 1}}\n  condition: s', SigmaInvalid, "search identifier 's'"],
    ['  s: {A: 1}', SigmaInvalid, 'detection.condition'],
  ]
  // `construct|detail`: the error's construct contains the first part, its message both.
  for (const [det, type, expected] of cases)
    test(expected, () => {
      const [construct, detail = construct] = expected.split('|')
      let error: unknown
      try {
        compileSigmaRule(rule(det))
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(type)
      expect((error as SigmaInvalid).construct).toContain(construct)
      expect((error as Error).message).toContain(detail)
    })

  test('document-level errors', () => {
    expect(() => compileSigmaRule('a: [')).toThrow(SigmaInvalid)
    expect(() => compileSigmaRule('title: x\ndetection: {s: {A: 1}, condition: s}\n---\ntitle: y\n')).toThrow('multi-document')
    expect(() => compileSigmaRule('title: c\ncorrelation: {type: event_count}\n')).toThrow(SigmaUnsupported)
    expect(() => compileSigmaRule('detection: {s: {A: 1}, condition: s}\n')).toThrow("field 'title'")
    expect(() => compileSigmaRule('title: x\ntags: x\ndetection: {s: {A: 1}, condition: s}\n')).toThrow("field 'tags'")
    expect(() => compileSigmaRule(rule('  k: [a]\n  condition: k'), { keywordFields: [] })).toThrow(SigmaUnsupported)
  })
})

describe('rule text bounds', () => {
  test('YAML aliases expanding past a million values are an invalid rule, not a compile of millions of terms', () => {
    // A flat selection list of 9^7 values once expanded; the YAML parser itself accepts it.
    const lines = ['x0: &x0 [a, b, c, d, e, f, g, h, i]']
    for (let i = 1; i < 7; i++)
      lines.push(
        `x${i}: &x${i} [${Array(9)
          .fill(`*x${i - 1}`)
          .join(', ')}]`,
      )
    const text = `${lines.join('\n')}\ntitle: t\nlogsource: {product: linux, extra: *x6}\ndetection:\n  sel: {A: 1}\n  condition: sel\n`
    expect(() => compileSigmaRule(text)).toThrow(SigmaInvalid)
    expect(() => compileSigmaRule(text)).toThrow('expands to more than')
  })
})
