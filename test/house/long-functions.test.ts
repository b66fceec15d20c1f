// The project's rule (issue 30): no function in src/ over 100 lines; a longer one is split into named steps.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { longFunctions } from '../../scripts/house/long-functions'

describe('function length in src/', () => {
  test('the checker finds a long function, a long method and a long arrow function', () => {
    const dir = mkdtempSync(join(tmpdir(), 'long-fn-'))
    try {
      const body = Array.from({ length: 101 }, (_, i) => `  const v${i} = ${i}`).join('\n')
      writeFileSync(
        join(dir, 'a.ts'),
        `function long() {\n${body}\n}\nclass C {\n  m() {\n${body}\n  }\n}\nconst arrow = () => {\n${body}\n}\n`,
      )
      writeFileSync(join(dir, 'b.ts'), `function short() {\n  return 1\n}\n`)
      expect(
        longFunctions(100, dir)
          .map((f) => f.name)
          .sort(),
      ).toEqual(['arrow', 'long', 'm'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('no function, method or arrow function is over 100 lines', () => {
    expect(longFunctions(100).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`)).toEqual([])
  }, 30_000)
})
