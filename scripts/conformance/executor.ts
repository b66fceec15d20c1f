/**
 * Runs test files against a target: setup, stash reset, steps, teardown, wipe; one result per test.
 */
import { assertCompare, assertContains, assertLength, assertMatch, AssertionFailure, isTrue } from './assertions'
import { buildCall, RunnerError, type HttpCall } from './request'
import { skipReason, versionInRanges } from './skip'
import { evaluatePath, Stash } from './stash'
import type { ApiSpec, Step, SuiteFile } from './suite'

export interface Target {
  baseUrl: string
  authorization?: string
  version: string
}

export interface Response {
  status: number
  headers: Headers
  /** Parsed JSON, raw text for other content types, or true/false for HEAD. */
  body: unknown
}

export type Outcome = { status: 'pass' } | { status: 'fail'; reason: string } | { status: 'skip'; reason: string }

export interface TestResult {
  file: string
  test: string
  outcome: Outcome
  /** Set when the test is on the committed list of known-unsupported tests. */
  unsupported?: string
}

const CATCHES: Record<string, (s: number) => boolean> = {
  bad_request: (s) => s === 400,
  unauthorized: (s) => s === 401,
  forbidden: (s) => s === 403,
  missing: (s) => s === 404,
  request_timeout: (s) => s === 408,
  conflict: (s) => s === 409,
  unavailable: (s) => s === 503,
  request: (s) => s >= 400 && ![400, 401, 403, 404, 408, 409].includes(s),
}

const DO_KEYS = new Set(['catch', 'headers', 'warnings', 'allowed_warnings', 'node_selector'])

export class Executor {
  private stash = new Stash()
  private last?: Response

  constructor(
    private readonly target: Target,
    private readonly apis: Map<string, ApiSpec>,
    private readonly common: Set<string>,
  ) {}

  async send(call: HttpCall): Promise<Response> {
    const qs = call.query.toString()
    const headers: Record<string, string> = { ...call.headers }
    if (this.target.authorization) headers.Authorization = this.target.authorization
    const res = await fetch(`${this.target.baseUrl}${call.path}${qs ? `?${qs}` : ''}`, { method: call.method, headers, body: call.body })
    const text = await res.text()
    let body: unknown = text
    if (call.method === 'HEAD') body = res.status >= 200 && res.status < 300
    else if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try {
        body = JSON.parse(text)
      } catch {
        body = text
      }
    }
    return { status: res.status, headers: res.headers, body }
  }

  /** A plain call used by the wipe and the version probe. */
  async call(method: string, path: string, body?: unknown): Promise<Response> {
    return this.send({
      method,
      path,
      query: new URLSearchParams(),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  }

  async runFile(file: SuiteFile, unsupported: Map<string, string>, wipe: () => Promise<void>): Promise<TestResult[]> {
    const results: TestResult[] = []
    for (const test of file.tests) {
      const known = unsupported.get(test.name)
      const skip =
        skipReason(file.setup, this.target.version) ??
        skipReason(file.teardown, this.target.version) ??
        skipReason(test.steps, this.target.version)
      if (skip !== undefined) {
        results.push({ file: file.path, test: test.name, outcome: { status: 'skip', reason: skip } })
        continue
      }
      if (known !== undefined) {
        results.push({ file: file.path, test: test.name, outcome: { status: 'skip', reason: `unsupported: ${known}` }, unsupported: known })
        continue
      }
      let outcome: Outcome = { status: 'pass' }
      try {
        this.stash.clear()
        this.last = undefined
        await this.runSteps(file.setup, 'setup')
        this.stash.clear()
        this.last = undefined
        await this.runSteps(test.steps, 'test')
      } catch (e) {
        outcome = { status: 'fail', reason: describe(e) }
      }
      try {
        await this.runSteps(
          file.teardown.filter((s) => 'do' in s),
          'teardown',
        )
      } catch (e) {
        if (outcome.status === 'pass') outcome = { status: 'fail', reason: `teardown: ${describe(e)}` }
      }
      try {
        await wipe()
      } catch (e) {
        if (outcome.status === 'pass') outcome = { status: 'fail', reason: `wipe: ${describe(e)}` }
      }
      results.push({ file: file.path, test: test.name, outcome })
    }
    return results
  }

  private async runSteps(steps: Step[], section: string): Promise<void> {
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]
      const [kind, arg] = Object.entries(step)[0] ?? []
      try {
        await this.runStep(kind, arg)
      } catch (e) {
        if (e instanceof Error) e.message = `${section} step ${i + 1} (${kind}): ${e.message}`
        throw e
      }
    }
  }

  private body(): unknown {
    return this.last?.body
  }

  private async runStep(kind: string | undefined, arg: unknown): Promise<void> {
    switch (kind) {
      case 'skip':
        return
      case 'do':
        return this.runDo(arg as Record<string, unknown>)
      case 'set':
        for (const [path, name] of Object.entries(arg as Record<string, string>)) {
          this.stash.set(name, evaluatePath(this.body(), path, this.stash))
        }
        return
      case 'transform_and_set':
        throw new RunnerError('transform_and_set is not supported')
      case 'is_true':
      case 'is_false': {
        const path = String(arg ?? '')
        const value = evaluatePath(this.body(), path, this.stash)
        if (isTrue(value) !== (kind === 'is_true')) {
          throw new AssertionFailure(`${kind} [${path}]: value is ${value === undefined ? '<absent>' : JSON.stringify(value)}`)
        }
        return
      }
      case 'match':
      case 'length':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
      case 'contains': {
        for (const [rawPath, rawExpected] of Object.entries(arg as Record<string, unknown>)) {
          const path = rawPath
          const actual = evaluatePath(this.body(), path, this.stash)
          const expected = this.stash.resolve(rawExpected)
          if (kind === 'match') assertMatch(path, actual, expected)
          else if (kind === 'length') assertLength(path, actual, expected)
          else if (kind === 'contains') assertContains(path, actual, expected)
          else assertCompare(kind, path, actual, expected)
        }
        return
      }
      default:
        throw new RunnerError(`unknown step [${kind}]`)
    }
  }

  private async runDo(spec: Record<string, unknown>): Promise<void> {
    const apiNames = Object.keys(spec).filter((k) => !DO_KEYS.has(k))
    if (apiNames.length !== 1) throw new RunnerError(`a do step names ${apiNames.length} APIs`)
    const apiName = apiNames[0]
    const api = this.apis.get(apiName)
    if (!api) throw new RunnerError(`no API spec for [${apiName}]`)
    const catchSpec = spec.catch === undefined ? undefined : String(spec.catch)
    if (catchSpec === 'param') return // a client-side validation error: nothing is sent

    const selector = spec.node_selector as Record<string, unknown> | undefined
    if (selector && typeof selector.version === 'string' && !versionInRanges(selector.version, this.target.version)) {
      throw new RunnerError(`no node matches node_selector version [${selector.version}]`)
    }

    const params = this.stash.resolve((spec[apiName] ?? {}) as Record<string, unknown>)
    const headers = this.stash.resolve((spec.headers ?? {}) as Record<string, string>)
    const ignore = new Set(
      [params.ignore]
        .flat()
        .filter((v) => v !== undefined)
        .map(Number),
    )
    const call = buildCall(api, this.common, params, Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])))
    const res = await this.send(call)
    this.last = res
    this.stash.set('body', res.body)

    const failed = res.status >= 400 && !(call.method === 'HEAD' && res.status === 404) && !ignore.has(res.status)
    // As the Java harness: warnings are checked on answers that are not errors (an error's deprecation
    // warnings, e.g. for the parameter it refuses, are not the test's concern).
    if (!failed) this.checkWarnings(res, spec)
    if (catchSpec === undefined) {
      if (failed) throw new AssertionFailure(`${apiName} ${call.method} ${call.path}: status ${res.status}: ${excerpt(res.body)}`)
      return
    }
    if (catchSpec.startsWith('/') && catchSpec.endsWith('/') && catchSpec.length >= 2) {
      const error = res.body !== null && typeof res.body === 'object' ? (res.body as Record<string, unknown>).error : undefined
      if (res.status < 400 || error === undefined) {
        throw new AssertionFailure(`${apiName}: expected an error matching ${catchSpec}, got status ${res.status}: ${excerpt(res.body)}`)
      }
      const text = typeof error === 'string' ? error : JSON.stringify(error)
      // The catch regex is compiled without the COMMENTS flag: spaces are literal.
      const re = new RegExp(catchSpec.slice(1, -1).replace(/(?<!\\)([*+?}])\+/g, '$1'))
      if (!re.test(text)) throw new AssertionFailure(`${apiName}: error ${excerpt(error)} does not match ${catchSpec}`)
      return
    }
    const check = CATCHES[catchSpec]
    if (!check) throw new RunnerError(`unknown catch [${catchSpec}]`)
    if (!check(res.status))
      throw new AssertionFailure(
        `${apiName} ${call.method} ${call.path}: expected ${catchSpec}, got status ${res.status}: ${excerpt(res.body)}`,
      )
  }

  private checkWarnings(res: Response, spec: Record<string, unknown>): void {
    const got = (res.headers.get('warning') ?? '')
      .split(/,(?=\s*\d{3} )/)
      .map((w) => w.trim())
      .filter(Boolean)
      .map((w) => /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(w)?.[1] ?? w)
      // The Java harness strips the position in the request that a parse warning names ([match][1:74]).
      .map((w) => w.replace(/^\[.*?\]\[-?\d+:-?\d+\] /, ''))
    const expected = ((spec.warnings ?? []) as string[]).map(String)
    const allowed = new Set(((spec.allowed_warnings ?? []) as string[]).map(String))
    if (spec.warnings !== undefined) {
      const missing = expected.filter((w) => !got.includes(w))
      if (missing.length > 0) throw new AssertionFailure(`expected warnings ${JSON.stringify(missing)}, got ${JSON.stringify(got)}`)
    }
    const unexpected = got.filter((w) => !expected.includes(w) && !allowed.has(w) && !w.startsWith('[types removal]'))
    if (unexpected.length > 0) throw new AssertionFailure(`unexpected warnings ${JSON.stringify(unexpected)}`)
  }
}

function excerpt(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v)
  return s === undefined ? '<empty>' : s.length > 400 ? `${s.slice(0, 400)}...` : s
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}
