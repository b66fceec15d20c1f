/**
 * A real OpenSearch on 127.0.0.1, built from Maven Central artifacts (scripts/opensearch/pom.xml)
 * and started N nodes in one JVM by Launcher.java. Used by the tests (test/helpers/opensearch.ts)
 * and by `npm run opensearch` for users who want to try platform mode.
 *
 * Two kinds: `secure` (the security plugin with TLS on HTTP and transport, certificates made here
 * with openssl, users and roles on the platform) and a development cluster without the security
 * plugin. Both carry job-scheduler. Index State Management is not published on Maven Central,
 * so neither cluster has ISM (svc-ext then runs its own retention against the platform).
 */
import { spawn, spawnSync } from 'bun'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const LAUNCHER_DIR = import.meta.dir
const TARGET = join(LAUNCHER_DIR, 'target')

export interface OpenSearchOptions {
  /** Where nodes keep config, data and logs; created when missing. */
  basePath: string
  nodes?: number
  secure?: boolean
  /** First HTTP port; node i listens on base+i-1 and its transport on base+100+i-1. 0 = pick free ones. */
  httpPort?: number
  clusterName?: string
  /** Password of `admin` on a secure cluster (OpenSearch's own demo rule: strong). */
  adminPassword?: string
  /** Extra users on a secure cluster, created at first start from internal_users.yml. */
  serviceAccount?: { name: string; password: string }
  heapMiB?: number
  /**
   * `test` (default): the serial collector and C1 only, which start and idle cheaply on a shared test
   * machine; `server`: the JVM's defaults (G1, full tiered JIT), as OpenSearch runs in production,
   * for benchmarks.
   */
  jvm?: 'test' | 'server'
  /** Progress and the JVM's output go here (default: stderr). */
  log?: (line: string) => void
}

export interface RunningOpenSearch {
  version: string
  secure: boolean
  /** One URL per node (https on a secure cluster). */
  urls: string[]
  url: string
  /** PEM of the CA that signed the nodes' certificates (secure clusters). */
  caFile?: string
  ca?: string
  admin: { name: string; password: string }
  serviceAccount?: { name: string; password: string }
  /** A request as admin (or `as`) to node 0 (or `node`), JSON in and out. */
  request(
    method: string,
    path: string,
    body?: unknown,
    node?: number,
    as?: { name: string; password: string },
  ): Promise<{ status: number; body: any }>
  /** Stops node i (SIGTERM, or kill -9 with `kill`); its data stays for startNode. */
  stopNode(i: number, opts?: { kill?: boolean }): Promise<void>
  startNode(i: number): Promise<void>
  stop(): Promise<void>
}

/** What is missing on this machine to run a real OpenSearch, or null when nothing is. */
export function missingPrerequisites(): string | null {
  if (!javaHome()) return 'no Java 21 or newer (set OPENSEARCH_JAVA_HOME, or install a JDK under /usr/lib/jvm)'
  if (spawnSync(['sh', '-c', 'command -v mvn']).exitCode !== 0) return 'no Maven (mvn) on PATH'
  if (spawnSync(['sh', '-c', 'command -v openssl']).exitCode !== 0) return 'no openssl on PATH (certificates of the secure cluster)'
  return null
}

/** OpenSearch 3.x needs Java 21+: OPENSEARCH_JAVA_HOME, JAVA_HOME, then the newest JDK under /usr/lib/jvm. */
export function javaHome(): string | null {
  const candidates = [process.env.OPENSEARCH_JAVA_HOME, process.env.JAVA_HOME].filter((d): d is string => !!d)
  if (existsSync('/usr/lib/jvm')) {
    const found = readdirSync('/usr/lib/jvm')
      .map((d) => join('/usr/lib/jvm', d))
      .filter((d) => !statSync(d).isSymbolicLink?.() && existsSync(join(d, 'release')))
      .sort((a, b) => jdkMajor(b) - jdkMajor(a))
    candidates.push(...found)
  }
  return candidates.find((d) => existsSync(join(d, 'bin', 'java')) && jdkMajor(d) >= 21) ?? null
}

function jdkMajor(dir: string): number {
  try {
    const m = /JAVA_VERSION="(\d+)/.exec(readFileSync(join(dir, 'release'), 'utf8'))
    return m ? Number(m[1]) : 0
  } catch {
    return 0
  }
}

/** Resolves the artifacts (cached under ~/.m2) and compiles the launcher, once per pom change. */
export async function buildLauncher(log: (line: string) => void): Promise<void> {
  const stamp = join(TARGET, 'built')
  const sources = [join(LAUNCHER_DIR, 'pom.xml'), join(LAUNCHER_DIR, 'src/main/java/svc/Launcher.java')]
  if (existsSync(stamp) && sources.every((s) => statSync(s).mtimeMs <= statSync(stamp).mtimeMs)) return
  log('opensearch: resolving OpenSearch from Maven Central (cached under ~/.m2) and compiling the launcher')
  const mvn = spawn(['mvn', '-q', '-B', '-f', join(LAUNCHER_DIR, 'pom.xml'), 'compile'], {
    env: { ...process.env, JAVA_HOME: javaHome()! },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, out, err] = await Promise.all([mvn.exited, new Response(mvn.stdout).text(), new Response(mvn.stderr).text()])
  if (code !== 0) throw new Error(`mvn compile failed (exit ${code}):\n${out}${err}`.slice(-4000))
  writeFileSync(stamp, new Date().toISOString())
}

const jarName = (file: string) => file.replace(/-\d[^/]*\.jar$/, '')

/**
 * The nodes' plugin folder: the plugin zips as Maven unpacked them, less every jar the launcher's
 * class path already has (the nodes' parent class loader: OpenSearch refuses a plugin that would
 * load a class twice, "jar hell"). The security plugin extends the rule-framework module, which
 * Maven Central does not publish; its one library the plugin needs is on the class path (pom.xml),
 * so the descriptor drops that dependency.
 */
function preparePlugins(dir: string, secure: boolean): void {
  rmSync(dir, { recursive: true, force: true })
  const onClassPath = new Set(
    readFileSync(join(TARGET, 'classpath.txt'), 'utf8')
      .split(':')
      .map((p) => jarName(p.split('/').pop()!)),
  )
  const plugins = ['opensearch-job-scheduler', ...(secure ? ['opensearch-security'] : [])]
  for (const name of plugins) {
    const to = join(dir, name)
    cpSync(join(TARGET, 'plugin-zips', name), to, { recursive: true })
    for (const f of readdirSync(to)) if (f.endsWith('.jar') && onClassPath.has(jarName(f))) rmSync(join(to, f))
    const descriptor = join(to, 'plugin-descriptor.properties')
    const text = readFileSync(descriptor, 'utf8').replace(
      /^extended\.plugins=(.*)$/m,
      (_, list: string) =>
        'extended.plugins=' +
        list
          .split(',')
          .filter((p) => !p.startsWith('rule-framework'))
          .join(','),
    )
    writeFileSync(descriptor, text)
  }
}

function openssl(args: string[], cwd: string): void {
  const r = spawnSync(['openssl', ...args], { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`)
}

/** A root CA, a node certificate for 127.0.0.1/localhost and an admin client certificate. */
function makeCertificates(dir: string): void {
  if (existsSync(join(dir, 'node.pem'))) return
  mkdirSync(dir, { recursive: true })
  openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'root-ca-key.pem', '-out', 'root-ca.pem', '-days', '3650']
      .concat(['-subj', '/CN=svc-ext test root CA', '-addext', 'basicConstraints=critical,CA:TRUE'])
      .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
    dir,
  )
  writeFileSync(
    join(dir, 'ext.cnf'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  )
  for (const name of ['node', 'admin']) {
    // genpkey writes PKCS#8, the only key form the security plugin reads.
    openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}-key.pem`], dir)
    openssl(['req', '-new', '-key', `${name}-key.pem`, '-subj', `/O=svc-ext/OU=svc-test/CN=${name}`, '-out', `${name}.csr`], dir)
    openssl(
      ['x509', '-req', '-in', `${name}.csr`, '-CA', 'root-ca.pem', '-CAkey', 'root-ca-key.pem', '-CAcreateserial', '-days', '3650'].concat([
        '-extfile',
        'ext.cnf',
        '-out',
        `${name}.pem`,
      ]),
      dir,
    )
  }
}

function securitySettings(certs: string): Record<string, unknown> {
  const pem = (f: string) => join(certs, f)
  return {
    'plugins.security.ssl.transport.pemcert_filepath': pem('node.pem'),
    'plugins.security.ssl.transport.pemkey_filepath': pem('node-key.pem'),
    'plugins.security.ssl.transport.pemtrustedcas_filepath': pem('root-ca.pem'),
    'plugins.security.ssl.transport.enforce_hostname_verification': false,
    'plugins.security.ssl.http.enabled': true,
    'plugins.security.ssl.http.pemcert_filepath': pem('node.pem'),
    'plugins.security.ssl.http.pemkey_filepath': pem('node-key.pem'),
    'plugins.security.ssl.http.pemtrustedcas_filepath': pem('root-ca.pem'),
    'plugins.security.allow_default_init_securityindex': true,
    'plugins.security.authcz.admin_dn': ['CN=admin,OU=svc-test,O=svc-ext'],
    'plugins.security.nodes_dn': ['CN=node,OU=svc-test,O=svc-ext'],
    'plugins.security.system_indices.enabled': true,
    'plugins.security.system_indices.permission.enabled': true,
    // svc-ext's CTI state index is a system index on a production cluster (README "Platform mode").
    // The alerting and notifications plugins' own indices are not listed: svc-ext writes those
    // itself here (a cluster that lists them must grant the service account system access to them).
    'plugins.security.system_indices.indices': ['.opendistro-ism-*', '.svc-internal-state'],
    'plugins.security.restapi.roles_enabled': ['all_access'],
    // svc-ext's service account reads every owner's sessions; DLS of other roles must not reach it.
    'plugins.security.dfm_empty_overrides_all': true,
    'plugins.security.audit.type': 'noop',
  }
}

/**
 * The security plugin's configuration for a node: the plugin's shipped files with our users
 * (admin and the service account) instead of the demo users, and the service account's role
 * (all_access plus the system-index grant svc-ext's README asks for).
 */
async function writeSecurityConfig(dir: string, admin: { name: string; password: string }, service?: { name: string; password: string }) {
  mkdirSync(dir, { recursive: true })
  const shipped = join(TARGET, 'plugin-zips', 'opensearch-security', 'config')
  for (const f of readdirSync(shipped)) if (f.endsWith('.yml')) cpSync(join(shipped, f), join(dir, f))
  const hash = (p: string) => Bun.password.hash(p, { algorithm: 'bcrypt', cost: 10 })
  const users: Record<string, unknown> = {
    _meta: { type: 'internalusers', config_version: 2 },
    [admin.name]: { hash: await hash(admin.password), reserved: false, backend_roles: ['admin'], description: 'cluster admin' },
  }
  if (service) users[service.name] = { hash: await hash(service.password), reserved: false, description: 'svc-ext service account' }
  writeFileSync(join(dir, 'internal_users.yml'), JSON.stringify(users))
  const roles = readFileSync(join(shipped, 'roles.yml'), 'utf8')
  writeFileSync(
    join(dir, 'roles.yml'),
    roles +
      '\nsvc_service_account:\n  reserved: false\n  index_permissions:\n' +
      "    - index_patterns: ['.svc-internal-state']\n      allowed_actions: ['system:admin/system_index']\n",
  )
  const serviceUsers = service ? [service.name] : []
  writeFileSync(
    join(dir, 'roles_mapping.yml'),
    JSON.stringify({
      _meta: { type: 'rolesmapping', config_version: 2 },
      all_access: { reserved: false, backend_roles: ['admin'], users: serviceUsers },
      own_index: { reserved: false, users: ['*'] },
      svc_service_account: { reserved: false, users: serviceUsers },
    }),
  )
}

/**
 * A node's ports lie below the kernel's ephemeral range: while a node is down (a test that kills
 * and restarts one), an outgoing connection could otherwise be given its port as a local port, and
 * the node would not start again (seen in CI: the suites after a node-loss test met a node that
 * never came back).
 */
async function freePortBase(count: number): Promise<number> {
  const range = '/proc/sys/net/ipv4/ip_local_port_range'
  const ephemeralLow = existsSync(range) ? Number(readFileSync(range, 'utf8').trim().split(/\s+/)[0]) : 32_768
  const low = 10_000
  const high = Math.max(low + 1000, Math.min(40_000, (ephemeralLow || 32_768) - 200))
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = low + Math.floor(Math.random() * (high - low))
    const ports = [...Array(count).keys()].flatMap((i) => [base + i, base + 100 + i])
    const ok = await Promise.all(ports.map(portIsFree))
    if (ok.every(Boolean)) return base
  }
  throw new Error('no free port range for OpenSearch')
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      const s = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } })
      s.stop(true)
      resolve(true)
    } catch {
      resolve(false)
    }
  })
}

const yaml = (settings: Record<string, unknown>) =>
  Object.entries(settings)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join('\n') + '\n'

/** Starts the cluster (one JVM per node) and waits until it is yellow or green. */
export async function startOpenSearch(o: OpenSearchOptions): Promise<RunningOpenSearch> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'))
  const missing = missingPrerequisites()
  if (missing) throw new Error(`cannot start OpenSearch: ${missing}`)
  const count = o.nodes ?? 1
  const secure = o.secure ?? true
  const clusterName = o.clusterName ?? 'svc-test'
  const admin = { name: 'admin', password: o.adminPassword ?? 'Svc-test-Admin-1!' }
  await buildLauncher(log)
  mkdirSync(o.basePath, { recursive: true })
  const certs = join(o.basePath, 'certs')
  const plugins = join(o.basePath, 'plugins')
  preparePlugins(plugins, secure)
  const base = o.httpPort || (await freePortBase(count))
  const names = [...Array(count).keys()].map((i) => `node-${i + 1}`)
  const common: Record<string, unknown> = {
    'path.plugins': plugins,
    'http.host': '127.0.0.1',
    'transport.host': '127.0.0.1',
    // The test machine's disk may be fuller than OpenSearch's watermarks; no shard must be refused for it.
    'cluster.routing.allocation.disk.threshold_enabled': false,
    // Where `fs` snapshot repositories may live (one directory every node of the machine shares).
    'path.repo': [join(o.basePath, 'snapshots')],
    ...(count > 1
      ? {
          'discovery.type': 'zen',
          'discovery.seed_hosts': names.map((_, i) => `127.0.0.1:${base + 100 + i}`),
          'cluster.initial_cluster_manager_nodes': names,
        }
      : { 'discovery.type': 'single-node' }),
  }
  if (secure) {
    makeCertificates(certs)
    Object.assign(common, securitySettings(certs))
  }
  const home = (i: number) => join(o.basePath, names[i])
  for (let i = 0; i < count; i++) {
    mkdirSync(home(i), { recursive: true })
    writeFileSync(
      join(home(i), 'settings.yml'),
      yaml({ ...common, 'node.name': names[i], 'http.port': base + i, 'transport.port': base + 100 + i }),
    )
    // The runner keeps node i under <home>/node_1; the security plugin reads <config>/opensearch-security.
    if (secure && !existsSync(join(home(i), 'node_1', 'data')))
      await writeSecurityConfig(join(home(i), 'node_1', 'config', 'opensearch-security'), admin, o.serviceAccount)
  }
  const cp = `${join(TARGET, 'classes')}:${readFileSync(join(TARGET, 'classpath.txt'), 'utf8').trim()}`
  const java = join(javaHome()!, 'bin', 'java')
  const heap = o.heapMiB ?? 512
  const tuning = o.jvm === 'server' ? [] : ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1']
  const jvms: Array<{ pid: number } | null> = names.map(() => null)
  let version = ''
  const launch = async (i: number) => {
    // `setsid -f` forks the JVM off into a session of its own: a test runner that kills the
    // processes a timed-out test spawned (bun test does) then kills setsid, never the cluster the
    // other tests share. The JVM stops by itself once this process is gone (its owner pid).
    // Its output goes to its log file, never to a pipe of ours: once setsid had exited, the pipe
    // was no longer read, and a node whose log filled it blocked in its logger, with the cluster
    // manager's update thread (every later cluster change then timed out).
    const logFile = join(home(i), 'jvm.log')
    const pidFile = join(home(i), 'jvm.pid')
    rmSync(pidFile, { force: true })
    const from = existsSync(logFile) ? statSync(logFile).size : 0
    spawn(
      [
        'setsid',
        '-f',
        'sh',
        '-c',
        'p=$1; shift; echo $$ >"$p"; exec "$@" >>"$0" 2>&1',
        logFile,
        pidFile,
        java,
        `-Xms${heap}m`,
        `-Xmx${heap}m`,
        ...tuning,
      ].concat([
        '--enable-native-access=ALL-UNNAMED',
        '-cp',
        cp,
        'svc.Launcher',
        home(i),
        clusterName,
        join(home(i), 'settings.yml'),
        String(process.pid),
      ]),
      { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' },
    )
    const line = await startLine(logFile, from, pidFile, 180_000)
    if (!line?.startsWith('{"started"')) {
      // A JVM that failed its start but lives on would hold the node's data directory lock: a
      // second try would fail on it.
      const pid = Number(existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() : '')
      if (pid > 0) signalPid(pid, 'SIGKILL')
      throw new Error(`OpenSearch ${names[i]} did not start (${line ?? 'no answer in 180 s'}); see ${join(home(i), 'jvm.log')}`)
    }
    const started = JSON.parse(line) as { version: string; pid: number }
    version = started.version
    jvms[i] = { pid: started.pid }
  }
  log(`opensearch: starting ${count} node(s)${secure ? ' with the security plugin' : ''} on 127.0.0.1:${base}`)
  // Together: a node waits for the others named in cluster.initial_cluster_manager_nodes.
  await Promise.all(names.map((_, i) => launch(i)))
  const scheme = secure ? 'https' : 'http'
  const urls = names.map((_, i) => `${scheme}://127.0.0.1:${base + i}`)
  const ca = secure ? readFileSync(join(certs, 'root-ca.pem'), 'utf8') : undefined
  const request = requester(urls, admin, ca)
  const healthy = async (node: number) => {
    const deadline = Date.now() + 180_000
    for (;;) {
      const h = await request('GET', `/_cluster/health?wait_for_nodes=>=${count}&wait_for_status=yellow&timeout=5s`, undefined, node).catch(
        () => null,
      )
      if (h && h.status === 200 && h.body.status !== 'red') return
      if (Date.now() > deadline) throw new Error(`OpenSearch ${names[node]} not healthy: ${JSON.stringify(h?.body)}`)
      await Bun.sleep(500)
    }
  }
  await healthy(0)
  log(`opensearch: ${version} ready at ${urls.join(', ')}`)
  const halt = async (i: number, signal: 'SIGTERM' | 'SIGKILL') => {
    const jvm = jvms[i]
    if (!jvm) return
    jvms[i] = null
    signalPid(jvm.pid, signal)
    for (let waited = 0; alive(jvm.pid); waited += 100) {
      if (waited >= 30_000) signalPid(jvm.pid, 'SIGKILL')
      await Bun.sleep(100)
    }
  }

  return {
    version,
    secure,
    urls,
    url: urls[0],
    caFile: secure ? join(certs, 'root-ca.pem') : undefined,
    ca,
    admin,
    serviceAccount: o.serviceAccount,
    request,
    stopNode: (i, opts) => halt(i, opts?.kill ? 'SIGKILL' : 'SIGTERM'),
    async startNode(i) {
      await launch(i)
      await healthy(i)
    },
    async stop() {
      await Promise.all(names.map((_, i) => halt(i, 'SIGTERM')))
    },
  }
}

function signalPid(pid: number, signal: 'SIGTERM' | 'SIGKILL'): void {
  try {
    process.kill(pid, signal)
  } catch {}
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Admin requests to the cluster's nodes, JSON in and out, TLS checked against its CA. */
function requester(urls: string[], admin: { name: string; password: string }, ca?: string): RunningOpenSearch['request'] {
  return async (method, path, body, node = 0, as = admin) => {
    const r = await fetch(urls[node] + path, {
      method,
      headers: {
        authorization: 'Basic ' + btoa(`${as.name}:${as.password}`),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      tls: ca ? { ca } : undefined,
    })
    const text = await r.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: r.status, body: parsed }
  }
}

/** What another process needs to use a running cluster (the `--state` file of start.ts). */
export type OpenSearchState = Pick<RunningOpenSearch, 'version' | 'secure' | 'urls' | 'caFile' | 'admin' | 'serviceAccount'>

/** A cluster some other process started and keeps: requests only, no node control. */
export function attachOpenSearch(state: OpenSearchState): RunningOpenSearch {
  const ca = state.caFile ? readFileSync(state.caFile, 'utf8') : undefined
  const unsupported = async () => {
    throw new Error('this OpenSearch belongs to another process: its nodes cannot be stopped or started from here')
  }
  return {
    ...state,
    url: state.urls[0],
    ca,
    request: requester(state.urls, state.admin, ca),
    stopNode: unsupported,
    startNode: unsupported,
    stop: async () => {},
  }
}

/** The launcher's start report in its log (written after `from`), or its last line once it has exited or after the timeout. */
async function startLine(file: string, from: number, pidFile: string, timeoutMs: number): Promise<string | null> {
  const deadline = Date.now() + timeoutMs
  let last: string | null = null
  for (;;) {
    const text = existsSync(file) ? await Bun.file(file).slice(from).text() : ''
    for (const raw of text.split('\n')) {
      const line = raw.trim()
      if (line.startsWith('{"started"')) return line
      if (line) last = line
    }
    const pid = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() : ''
    const exited = pid !== '' && !existsSync(`/proc/${pid}`)
    if (exited || Date.now() >= deadline) return last
    await Bun.sleep(200)
  }
}
