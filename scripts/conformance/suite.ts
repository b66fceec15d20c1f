/**
 * Loading of the YAML REST test files and the JSON API specs they are written against.
 * Bun.YAML follows the YAML 1.2 core schema, so `2017-01-01` and `yes` stay strings,
 * as they do for the Java harness.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'

export type Step = Record<string, unknown>

export interface TestCase {
  name: string
  steps: Step[]
}

export interface SuiteFile {
  /** `folder/file.yml`, the key used by the expected-pass and skip lists. */
  path: string
  folder: string
  setup: Step[]
  teardown: Step[]
  tests: TestCase[]
}

export interface ApiPath {
  path: string
  methods: string[]
  parts: string[]
}

export interface ApiSpec {
  name: string
  paths: ApiPath[]
  params: Set<string>
  body?: { required?: boolean; serialize?: string }
}

export function loadApis(dir: string): { apis: Map<string, ApiSpec>; common: Set<string> } {
  const apis = new Map<string, ApiSpec>()
  let common = new Set<string>()
  for (const file of readdirSync(join(dir, 'api'))) {
    if (!file.endsWith('.json')) continue
    const doc = JSON.parse(readFileSync(join(dir, 'api', file), 'utf8'))
    if (file === '_common.json') {
      common = new Set(Object.keys(doc.params ?? {}))
      continue
    }
    for (const [name, spec] of Object.entries<any>(doc)) {
      apis.set(name, {
        name,
        paths: (spec.url?.paths ?? []).map((p: any) => ({
          path: p.path,
          methods: p.methods,
          parts: Object.keys(p.parts ?? {}),
        })),
        params: new Set(Object.keys(spec.params ?? {})),
        body: spec.body ?? undefined,
      })
    }
  }
  return { apis, common }
}

/** Every `test/<folder>/<file>.yml`, sorted, as `folder/file.yml`. */
export function listTestFiles(dir: string): string[] {
  const root = join(dir, 'test')
  const out: string[] = []
  for (const folder of readdirSync(root).sort()) {
    const sub = join(root, folder)
    for (const file of readdirSync(sub).sort()) if (file.endsWith('.yml') || file.endsWith('.yaml')) out.push(`${folder}/${file}`)
  }
  return out
}

export function loadSuiteFile(dir: string, path: string): SuiteFile {
  const full = join(dir, 'test', path)
  if (!existsSync(full)) throw new Error(`no such test file: ${path}`)
  const parsed = Bun.YAML.parse(readFileSync(full, 'utf8')) as unknown
  const docs = (Array.isArray(parsed) ? parsed : [parsed]).filter((d) => d !== null && d !== undefined)
  const file: SuiteFile = { path, folder: path.split('/')[0], setup: [], teardown: [], tests: [] }
  for (const doc of docs) {
    if (typeof doc !== 'object') throw new Error(`${path}: a document is not a map`)
    for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
      const steps = (value ?? []) as Step[]
      if (!Array.isArray(steps)) throw new Error(`${path}: section [${key}] is not a list of steps`)
      if (key === 'setup') file.setup = steps
      else if (key === 'teardown') file.teardown = steps
      else file.tests.push({ name: key, steps })
    }
  }
  return file
}
