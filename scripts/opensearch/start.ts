/**
 * `npm run opensearch`: a real OpenSearch on 127.0.0.1 to try platform mode against.
 *   --nodes N        nodes in the cluster (default 1)
 *   --no-security    a development cluster without the security plugin (plain HTTP)
 *   --port P         first HTTP port (default 9200)
 *   --path DIR       where the nodes keep their data (default .tmp/opensearch; kept between runs)
 * The admin password is OPENSEARCH_INITIAL_ADMIN_PASSWORD (as OpenSearch's own packages read it),
 * else a default printed at start; the service account svc-service gets the same password.
 *   --state FILE     also write the cluster's URLs, CA file and accounts to FILE as JSON
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { missingPrerequisites, startOpenSearch } from './cluster'

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1' },
    'no-security': { type: 'boolean', default: false },
    port: { type: 'string', default: '9200' },
    path: { type: 'string', default: join(import.meta.dir, '..', '..', '.tmp', 'opensearch') },
    /** Writes the cluster's URLs, CA and accounts as JSON, for tests that attach to it (SVC_TEST_OPENSEARCH_STATE). */
    state: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log('usage: npm run opensearch -- [--nodes N] [--no-security] [--port P] [--path DIR] [--state FILE]')
  process.exit(0)
}
const missing = missingPrerequisites()
if (missing) {
  console.error(`cannot start OpenSearch here: ${missing}`)
  process.exit(1)
}
const password = process.env.OPENSEARCH_INITIAL_ADMIN_PASSWORD ?? 'Svc-trial-Admin-1!'
const secure = !values['no-security']
const os = await startOpenSearch({
  basePath: join(values.path!, secure ? 'secure' : 'dev'),
  nodes: Number(values.nodes),
  secure,
  httpPort: Number(values.port),
  clusterName: 'svc-trial',
  adminPassword: password,
  serviceAccount: secure ? { name: 'svc-service', password } : undefined,
})
if (values.state) {
  const { version, urls, caFile, admin, serviceAccount } = os
  await Bun.write(values.state, JSON.stringify({ version, secure, urls, caFile, admin, serviceAccount }))
}
console.log(`OpenSearch ${os.version} is up at ${os.urls.join(', ')}. Point svc-ext at it:\n`)
console.log(`  SVC_SETTING_storage__platform__url=${os.url} \\`)
if (secure) {
  console.log(`  SVC_SETTING_storage__platform__username=svc-service SVC_SETTING_storage__platform__password='${password}' \\`)
  console.log(`  SVC_SETTING_storage__platform__ssl__certificate_authorities=${os.caFile} \\`)
}
console.log(`  ./dist/svc-ext serve\n\nCtrl-C stops OpenSearch (its data stays under ${values.path}).`)
const stop = async () => {
  await os.stop()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
// Kept alive by a timer: awaiting a promise that never settles made Bun spin a core (a quarter
// to a half of one, measured) for as long as the cluster ran.
setInterval(() => {}, 1 << 30)
