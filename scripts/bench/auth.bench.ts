// Cost of authentication on the cached path: one Bun.serve answering a tiny JSON at /open (no
// security) and at /auth (HTTP Basic through SecurityService.authenticate, bcrypt cost 12 on the
// first request, then the SHA-256-keyed cache). Both paths get the same request (Authorization
// header included), look up the client address and read the headers (as any router does; Bun
// materialises them lazily), so the difference is authenticate() alone. Same server process, same
// run; short rounds alternate A-B / B-A so machine noise hits both, and the median ratio is reported.
// Run with `serve` as argument, the script is that server.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fmt, runLoad, type LoadResult } from './lib/load'
import { spawnScript } from './lib/processes'

const USER = 'bench'
const PASSWORD = 'bench-password-1'

async function serve() {
  const { createSecurity } = await import('../../src/security')
  const { createLogger } = await import('../../src/http/log')
  const root = mkdtempSync(join(tmpdir(), 'svc-auth-bench-'))
  mkdirSync(join(root, 'security'), { recursive: true })
  const hash = await Bun.password.hash(PASSWORD, { algorithm: 'bcrypt', cost: 12 })
  writeFileSync(join(root, 'security', 'internal_users.yml'), `${USER}:\n  hash: "${hash}"\n  backend_roles: ["admin"]\n`)
  const values = new Map<string, unknown>([
    ['security.auth_cache.ttl_seconds', 300],
    ['security.auth_cache.max_entries', 10000],
    ['security.auth_failures.max_attempts', 10],
    ['security.auth_failures.block_seconds', 60],
  ])
  const { security } = await createSecurity({
    node: { values: values as never, configDir: root },
    dataDir: join(root, 'data'),
    log: createLogger({ level: 'error' }),
    env: {},
  })
  const body = JSON.stringify({ ok: true, name: 'svc-node-1' })
  const answer = () => new Response(body, { headers: { 'content-type': 'application/json' } })
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req, srv) {
      const address = srv.requestIP(req)?.address
      if (!req.headers.get('authorization')) return new Response('', { status: 401 })
      if (new URL(req.url).pathname === '/auth') {
        try {
          await security.authenticate(req, address)
        } catch {
          return new Response('', { status: 401 })
        }
      }
      return answer()
    },
  })
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }))
}

async function bench() {
  const concurrency = 32
  const durationMs = Number(process.env.BENCH_MS ?? 1000)
  const rounds = Number(process.env.BENCH_ROUNDS ?? 8)
  const server = await spawnScript('../auth.bench.ts', ['serve'])
  const auth = { authorization: `Basic ${btoa(`${USER}:${PASSWORD}`)}` }
  try {
    const first = performance.now()
    const res = await fetch(server.url + '/auth', { headers: auth })
    if (res.status !== 200) throw new Error(`authenticated request answered ${res.status}`)
    console.log(`first authenticated request (bcrypt cost 12): ${(performance.now() - first).toFixed(1)} ms`)
    const run = (path: string, warmupMs = 100) => runLoad({ url: server.url + path, headers: auth, concurrency, durationMs, warmupMs })
    await run('/open', 1000)
    await run('/auth', 1000)
    const open: LoadResult[] = []
    const authed: LoadResult[] = []
    const ratios: number[] = []
    for (let i = 0; i < rounds; i++) {
      const [o, a] = i % 2 === 0 ? [await run('/open'), await run('/auth')] : (([x, y]) => [y, x])([await run('/auth'), await run('/open')])
      if (o.errors > 0 || a.errors > 0) throw new Error('errors during the run')
      open.push(o)
      authed.push(a)
      ratios.push(a.rps / o.rps)
    }
    const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]!
    const medianBy = (xs: LoadResult[]) => [...xs].sort((p, q) => p.rps - q.rps)[Math.floor(xs.length / 2)]!
    console.log(`unauthenticated /open  ${fmt(medianBy(open))}`)
    console.log(`authenticated   /auth  ${fmt(medianBy(authed))}`)
    console.log(`ratios per round: ${ratios.map((r) => r.toFixed(3)).join(' ')}`)
    console.log(
      `ratio authenticated/unauthenticated: throughput ${median(ratios).toFixed(3)} (median of ${rounds} alternating rounds, ${concurrency} clients)`,
    )
  } finally {
    await server.stop()
  }
}

if (process.argv[2] === 'serve') await serve()
else await bench()
