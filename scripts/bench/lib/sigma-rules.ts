/**
 * SigmaHQ's Windows rules for the benchmarks that measure real rule sets. CI has no network, so
 * they come from `SIGMA_RULES_DIR` (a folder of Sigma YAML files, searched recursively) or from
 * the cache `~/.cache/svc-ext/sigma-<SIGMA_COMMIT>/rules/windows`, filled once by hand:
 *
 *   git clone https://github.com/SigmaHQ/sigma && git -C sigma archive <SIGMA_COMMIT> rules/windows \
 *     | tar -x -C ~/.cache/svc-ext/sigma-<SIGMA_COMMIT>
 *
 * Neither present: `loadWindowsRules` answers undefined after printing one line, and the callers
 * skip their real-rule rows. The rules are never committed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** The SigmaHQ commit the figures in the README and the issues were measured on. */
export const SIGMA_COMMIT = '8eaafff1f2845a696050e05e72ba1140ee190698'

export type SigmaDoc = Record<string, unknown> & { title: string; detection: Record<string, unknown>; logsource?: Record<string, string> }

export function sigmaRulesDir(): string | undefined {
  const fromEnv = process.env.SIGMA_RULES_DIR
  if (fromEnv && existsSync(fromEnv)) return fromEnv
  const cached = join(homedir(), '.cache', 'svc-ext', `sigma-${SIGMA_COMMIT}`, 'rules', 'windows')
  return existsSync(cached) ? cached : undefined
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) return yamlFiles(path)
      return /\.ya?ml$/.test(name) ? [path] : []
    })

/** The Windows detection rules (correlations and filters left out), in file order; undefined (with one line printed) when absent. */
export function loadWindowsRules(): SigmaDoc[] | undefined {
  const dir = sigmaRulesDir()
  if (!dir) {
    console.log(
      `real-rule rows skipped: no SIGMA_RULES_DIR and no ~/.cache/svc-ext/sigma-${SIGMA_COMMIT} (see scripts/bench/lib/sigma-rules.ts)`,
    )
    return undefined
  }
  const out: SigmaDoc[] = []
  for (const file of yamlFiles(dir)) {
    try {
      const doc = Bun.YAML.parse(readFileSync(file, 'utf8')) as SigmaDoc
      if (doc && typeof doc.title === 'string' && doc.detection && typeof doc.detection === 'object') out.push(doc)
    } catch {
      // an unparsable file is left out, as a user's loader would refuse it
    }
  }
  return out
}
