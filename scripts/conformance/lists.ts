/**
 * The committed lists: files expected to pass, tests knowingly unsupported inside otherwise
 * supported files, and files out of scope. Plain text so a diff reads as a decision.
 *
 *   expected-pass.txt      folder/file.yml
 *   unsupported-tests.txt  folder/file.yml :: test name :: reason
 *   out-of-scope.txt       folder/file.yml :: reason
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

function lines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
}

export interface Lists {
  expectedPass: Set<string>
  /** file -> test name -> reason */
  unsupported: Map<string, Map<string, string>>
  outOfScope: Map<string, string>
}

export function loadLists(dir: string): Lists {
  const expectedPass = new Set(lines(join(dir, 'expected-pass.txt')))
  const unsupported = new Map<string, Map<string, string>>()
  for (const line of lines(join(dir, 'unsupported-tests.txt'))) {
    const [file, test, reason] = line.split(' :: ')
    if (!file || !test) throw new Error(`unsupported-tests.txt: malformed line [${line}]`)
    if (!unsupported.has(file)) unsupported.set(file, new Map())
    unsupported.get(file)!.set(test, reason ?? '')
  }
  const outOfScope = new Map<string, string>()
  for (const line of lines(join(dir, 'out-of-scope.txt'))) {
    const [file, reason] = line.split(' :: ')
    outOfScope.set(file, reason ?? '')
  }
  for (const f of expectedPass) if (outOfScope.has(f)) throw new Error(`${f} is both expected to pass and out of scope`)
  return { expectedPass, unsupported, outOfScope }
}
