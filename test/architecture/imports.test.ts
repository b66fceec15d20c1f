// The import graph of src/ (issue 29 item 10): no module imports itself back through others, and the
// lower layers never import the upper ones. Type-only imports count: they tie the layers as much.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const src = resolve(import.meta.dir, '../../src')
const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
const IMPORT = /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g

/** Module (path under src/, no extension) -> the modules it imports. */
const graph = new Map<string, string[]>()
for (const f of files) {
  const text = readFileSync(join(src, f), 'utf8')
  const deps = [...text.matchAll(IMPORT)].map((m) => relative(src, resolve(dirname(join(src, f)), m[1]!)).replace(/\.ts$/, ''))
  graph.set(
    f.replace(/\.ts$/, ''),
    deps.map((d) => (graph.has(d) || files.includes(`${d}.ts`) ? d : `${d}/index`)),
  )
}

function cycles(): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (m: string) => {
    state.set(m, 'open')
    stack.push(m)
    for (const d of graph.get(m) ?? []) {
      if (state.get(d) === 'open') found.push([...stack.slice(stack.indexOf(d)), d])
      else if (!state.has(d)) visit(d)
    }
    stack.pop()
    state.set(m, 'done')
  }
  for (const m of graph.keys()) if (!state.has(m)) visit(m)
  return found
}

const importsInto = (from: (m: string) => boolean, into: string) =>
  [...graph].flatMap(([m, deps]) => (from(m) ? deps.filter((d) => d.startsWith(into)).map((d) => `${m} -> ${d}`) : []))

describe('import graph of src/', () => {
  test('has every module (the scan reads the tree)', () => {
    expect(graph.has('app')).toBe(true)
    expect(graph.get('server/listen')).toContain('app')
  })

  test('has no import circle', () => {
    expect(cycles()).toEqual([])
  })

  test('lower layers do not import upper ones', () => {
    expect(importsInto((m) => m.startsWith('http/'), 'security/')).toEqual([])
    expect(importsInto((m) => m.startsWith('store/'), 'config/')).toEqual([])
    expect(importsInto((m) => m === 'app', 'server/')).toEqual([])
  })
})
