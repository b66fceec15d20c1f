// Child process for the permission test: calls the Engine once, as whichever user runs it, and
// prints how the call failed. Root ignores file permissions, so the test runs this as `nobody`.
import { createEngineClient } from '../../../src/content/engine'

const quiet = () => {}
const client = createEngineClient({
  socketPath: process.argv[2],
  mock: false,
  reloadTimeoutMinutes: 1,
  notReadyGraceMinutes: 1,
  log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
})
const outcome = await client.iocState().then(
  () => ({ name: 'none' }),
  (e) => ({ name: e.name, kind: e.kind, message: e.message }),
)
console.log(JSON.stringify(outcome))
