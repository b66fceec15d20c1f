// Lists the functions, methods and arrow functions under src/ longer than a limit (the project's rule: none over
// 100 lines). A nested function counts on its own and also inside the one that holds it, as a reader sees it.
// Usage: bun scripts/house/long-functions.ts [limit=100]
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'

export interface LongFunction {
  file: string
  name: string
  line: number
  lines: number
}

const nameOf = (node: ts.Node, sf: ts.SourceFile): string => {
  const named = node as ts.Node & { name?: ts.Node }
  if (named.name) return named.name.getText(sf)
  const parent = node.parent
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)))
    return parent.name.getText(sf)
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  return '(anonymous)'
}

/** Every function-like node of `root` (under src/ by default) longer than `limit` lines, longest first. */
export function longFunctions(limit = 100, root = resolve(import.meta.dir, '../../src')): LongFunction[] {
  const found: LongFunction[] = []
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  for (const f of files) {
    const path = join(root, f)
    const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line
        const lines = end - start + 1
        if (lines > limit) found.push({ file: relative(root, path), name: nameOf(node, sf), line: start + 1, lines })
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  return found.sort((a, b) => b.lines - a.lines)
}

if (import.meta.main) {
  const limit = Number(process.argv[2] ?? 100)
  const found = longFunctions(limit)
  for (const f of found) console.log(`${String(f.lines).padStart(4)}  ${f.file}:${f.line}  ${f.name}`)
  console.log(`${found.length} function(s) over ${limit} lines`)
}
