// OpenSearch's configuration forms (issue 29 item 4), against the compiled binary: a list-valued
// setting accepts a YAML list (the form OpenSearch documents), a single string and a comma-separated
// string, and what it holds is used (fs repositories under each path.repo directory).
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { send } from '../helpers/app'
import { runBinary, spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'

let node: SpawnedServer | undefined
afterEach(async () => {
  await node?.stop()
  node = undefined
})

function configFile(text: string): { file: string; dir: string } {
  requireBinary()
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-forms-'))
  const file = join(dir, 'svc-ext.yml')
  writeFileSync(file, text.replaceAll('$DIR', dir))
  return { file, dir }
}

async function registers(location: string): Promise<number> {
  const r = await send(node!.url, 'PUT', `/_snapshot/r${Math.random().toString(36).slice(2, 8)}`, {
    authorization: node!.auth,
    body: { type: 'fs', settings: { location } },
  })
  return r.status
}

describe('list-valued settings', () => {
  test('path.repo as a YAML list (flow and block) and http.host as a list of one address start and are used', async () => {
    const { file, dir } = configFile('path.repo: ["$DIR/a", "$DIR/b"]\nhttp.host:\n  - 127.0.0.1\n')
    node = await spawnBinary({ args: ['serve', '--config', file] })
    expect(await registers(join(dir, 'a', 'x'))).toBe(200)
    expect(await registers(join(dir, 'b', 'y'))).toBe(200)
    expect(await registers(join(dir, 'c'))).toBe(400)
  })

  test('path.repo as one string and as a comma-separated string', async () => {
    const { file, dir } = configFile('path.repo: $DIR/a , $DIR/b\n')
    node = await spawnBinary({ args: ['serve', '--config', file] })
    expect(await registers(join(dir, 'a'))).toBe(200)
    expect(await registers(join(dir, 'b', 'z'))).toBe(200)
  })

  test('check-config prints lists; a second bind address and a nested list element are refused by name', async () => {
    const ok = await runBinary(['check-config', '--config', configFile('path.repo: [/backups]\n').file])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('path.repo: ["/backups"]')
    const two = await runBinary(['check-config', '--config', configFile('http.host: [127.0.0.1, 127.0.0.2]\n').file])
    expect(two.code).toBe(1)
    expect(two.stderr).toContain('[http.host]')
    const nested = await runBinary(['check-config', '--config', configFile('path.repo: [[/a]]\n').file])
    expect(nested.code).toBe(1)
    expect(nested.stderr).toContain('[path.repo]')
  })
})
