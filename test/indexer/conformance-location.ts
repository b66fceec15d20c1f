// Where the OpenSearch REST conformance corpus (the `api/` JSON specs and `test/` YAML files of
// OpenSearch's rest-api-spec) is found. It is not part of this repository: a fresh clone without
// it skips those tests with one line saying where to get it; CI, which has it, must run them.
import { existsSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'

/** Relative to the repository, the layout of the workspace CI runs in. */
export const DEFAULT_CORPUS = '../shared/conformance/opensearch-rest'

export interface CorpusLocation {
  dir: string
  found: boolean
  /** Which setting named it: `OPENSEARCH_REST_TESTS`, the runner's older `SVC_CONFORMANCE_DIR`, or the default. */
  from: 'OPENSEARCH_REST_TESTS' | 'SVC_CONFORMANCE_DIR' | 'default'
  /** True when its absence is a failure (CI sets `OPENSEARCH_REST_TESTS_REQUIRED=1`). */
  required: boolean
}

export function locateCorpus(env: Record<string, string | undefined>, repoDir: string): CorpusLocation {
  const named = env.OPENSEARCH_REST_TESTS ? 'OPENSEARCH_REST_TESTS' : env.SVC_CONFORMANCE_DIR ? 'SVC_CONFORMANCE_DIR' : 'default'
  const raw = named === 'default' ? DEFAULT_CORPUS : env[named]!
  const dir = isAbsolute(raw) ? raw : resolve(repoDir, raw)
  const found = existsSync(resolve(dir, 'api')) && existsSync(resolve(dir, 'test'))
  const required = env.OPENSEARCH_REST_TESTS_REQUIRED === '1' || env.OPENSEARCH_REST_TESTS_REQUIRED === 'true'
  return { dir, found, from: named, required }
}

/** The one line a run without the corpus prints. */
export const missingCorpusLine = (loc: CorpusLocation) =>
  `OpenSearch REST conformance tests skipped: no corpus at ${loc.dir} (from ${loc.from}). ` +
  `Get the api/ and test/ folders of rest-api-spec/src/main/resources/rest-api-spec from ` +
  `github.com/opensearch-project/OpenSearch (the version of scripts/conformance) and put them at ` +
  `${DEFAULT_CORPUS} beside the repository, or set OPENSEARCH_REST_TESTS=<dir>.`
