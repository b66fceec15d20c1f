// Lists the exports of src/ used nowhere: no other module (src/, test/, scripts/, bench/) names them and
// their own file names them only where they are declared. With --local, also the exports only their
// own file uses (an `export` keyword too many). Names are matched as words in the files' text, so a
// name that appears anywhere else (even in a comment) counts as used: the list errs on the side of keeping.
// Usage: bun scripts/house/dead-exports.ts [--local]
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'

const root = resolve(import.meta.dir, '../..')
const tsFiles = (dir: string) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))
        .map((f) => join(root, dir, f))
    : []

function exportedNames(path: string): string[] {
  const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
  const names: string[] = []
  for (const st of sf.statements) {
    const exported = ts.canHaveModifiers(st) && ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if (!exported) continue
    if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) names.push(d.name.getText(sf))
    else if ('name' in st && st.name) names.push((st.name as ts.Node).getText(sf))
  }
  return names
}

export function deadExports(local = false): Array<{ file: string; name: string }> {
  const src = tsFiles('src')
  const all = [...src, ...tsFiles('test'), ...tsFiles('scripts'), ...tsFiles('bench')]
  const texts = new Map(all.map((f) => [f, readFileSync(f, 'utf8')]))
  const dead: Array<{ file: string; name: string }> = []
  for (const file of src)
    for (const name of exportedNames(file)) {
      const word = new RegExp(`\\b${name.replace(/\$/g, '\\$')}\\b`)
      if ([...texts].some(([f, text]) => f !== file && word.test(text))) continue
      const own = texts.get(file)!.match(new RegExp(word.source, 'g'))?.length ?? 0
      if (local || own <= 1) dead.push({ file: relative(root, file), name })
    }
  return dead
}

if (import.meta.main) {
  const local = process.argv.includes('--local')
  const dead = deadExports(local)
  for (const d of dead) console.log(`${d.file}  ${d.name}`)
  console.log(`${dead.length} export(s) ${local ? 'no other module names' : 'used nowhere'}`)
}
