// The Debian package (issue 17 item 6), built by `npm run package`'s builder and installed,
// upgraded and purged with dpkg into a scratch root (`--root DIR --force-script-chrootless`: the
// maintainer scripts run with DPKG_ROOT set, as they are written to). The installed binary runs
// on the installed data directory before and after the upgrade.
import { beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildDeb } from '../../scripts/package/build-deb'
import { send } from '../helpers/app'
import { spawnBinary } from '../helpers/spawn-binary'

const VERSION = readFileSync(join(import.meta.dir, '../../VERSION'), 'utf8').trim()
const which = (cmd: string) => Bun.spawnSync(['sh', '-c', `command -v ${cmd}`]).exitCode === 0
const missing = ['dpkg-deb', 'dpkg', 'useradd'].filter((c) => !which(c))
const reason = missing.length > 0 ? `${missing.join(', ')} not installed` : process.getuid?.() !== 0 ? 'useradd needs root' : undefined
if (reason) console.warn(`skipping the Debian package test: ${reason}`)

let work: string
let root: string
const debs: string[] = []

function dpkg(...args: string[]) {
  const r = Bun.spawnSync(
    ['dpkg', `--root=${root}`, '--force-script-chrootless', '--force-not-root', '--force-depends', '--force-confold', ...args],
    { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` } },
  )
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() }
}

beforeAll(() => {
  if (reason) return
  work = mkdtempSync(join(tmpdir(), 'svc-deb-'))
  root = join(work, 'root')
  // The least a scratch root needs: dpkg's database and the account files useradd edits.
  for (const d of ['etc', 'var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/lib/dpkg/triggers'])
    mkdirSync(join(root, d), { recursive: true })
  for (const f of ['var/lib/dpkg/status', 'var/lib/dpkg/available']) writeFileSync(join(root, f), '')
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n')
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\n')
  writeFileSync(join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 })
  writeFileSync(join(root, 'etc/gshadow'), 'root:*::\n', { mode: 0o640 })
  debs.push(buildDeb({ revision: '1', outDir: work, compression: 'none' }))
  debs.push(buildDeb({ revision: '2', outDir: work, compression: 'none', build: false }))
})

describe.skipIf(reason !== undefined)('Debian package', () => {
  const passwdEntry = () =>
    readFileSync(join(root, 'etc/passwd'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('svc-ext:'))

  async function startInstalled() {
    return spawnBinary({
      binary: join(root, 'usr/bin/svc-ext'),
      args: ['serve', '--config', join(root, 'etc/svc-ext/svc-ext.yml')],
      dataDir: join(root, 'var/lib/svc-ext'),
      env: { SVC_SETTING_http__port: '0' },
    })
  }

  test('install: binary, unit, conffile, system user and a private data directory', async () => {
    const r = dpkg('-i', debs[0])
    expect(r.code, r.out).toBe(0)
    const info = Bun.spawnSync(['dpkg-deb', '--field', debs[0], 'Package', 'Version']).stdout.toString()
    expect(info).toContain('Package: svc-ext')
    expect(Bun.spawnSync(['dpkg-deb', '--ctrl-tarfile', debs[0]]).exitCode).toBe(0)
    expect(readFileSync(join(root, 'var/lib/dpkg/info/svc-ext.conffiles'), 'utf8')).toBe('/etc/svc-ext/svc-ext.yml\n')
    const version = Bun.spawnSync([join(root, 'usr/bin/svc-ext'), 'version'])
      .stdout.toString()
      .trim()
    expect(version).toBe(VERSION)
    const unit = readFileSync(join(root, 'usr/lib/systemd/system/svc-ext.service'), 'utf8')
    expect(unit).toContain('User=svc-ext')
    expect(unit).toContain('ExecStart=/usr/bin/svc-ext serve --config /etc/svc-ext/svc-ext.yml')
    // A system account (uid below 1000) with no login shell.
    const [, , uid, gid, , home, shell] = passwdEntry()!.split(':')
    expect(Number(uid)).toBeLessThan(1000)
    expect(home).toBe('/var/lib/svc-ext')
    expect(shell).toBe('/usr/sbin/nologin')
    const data = statSync(join(root, 'var/lib/svc-ext'))
    expect(data.mode & 0o777).toBe(0o700)
    expect(data.uid).toBe(Number(uid))
    const config = statSync(join(root, 'etc/svc-ext/svc-ext.yml'))
    expect(config.mode & 0o777).toBe(0o640)
    expect(config.gid).toBe(Number(gid))

    // The installed binary serves from the installed data directory.
    const node = await startInstalled()
    try {
      const put = await send(node.url, 'PUT', '/kept/_doc/1?refresh=true', { authorization: node.auth, body: { n: 1 } })
      expect(put.status).toBe(201)
    } finally {
      await node.stop()
    }
  })

  test('upgrade keeps the data and the edited configuration', async () => {
    const file = join(root, 'etc/svc-ext/svc-ext.yml')
    writeFileSync(file, readFileSync(file, 'utf8').replace('node.name: svc-node-1', 'node.name: edited-node'))
    const r = dpkg('-i', debs[1])
    expect(r.code, r.out).toBe(0)
    expect(dpkg('-s', 'svc-ext').out).toContain(`Version: ${VERSION}-2`)
    expect(readFileSync(file, 'utf8')).toContain('node.name: edited-node')
    const node = await startInstalled()
    try {
      const doc = await send(node.url, 'GET', '/kept/_doc/1', { authorization: node.auth })
      expect(doc.body._source).toEqual({ n: 1 })
      expect((await send(node.url, 'GET', '/', { authorization: node.auth })).body.name).toBe('edited-node')
    } finally {
      await node.stop()
    }
  })

  test('purge removes the program, the data directory and the configuration', () => {
    const r = dpkg('--purge', 'svc-ext')
    expect(r.code, r.out).toBe(0)
    for (const p of ['usr/bin/svc-ext', 'usr/lib/systemd/system/svc-ext.service', 'var/lib/svc-ext', 'etc/svc-ext'])
      expect(existsSync(join(root, p))).toBe(false)
    expect(dpkg('-s', 'svc-ext').code).not.toBe(0)
  })
})
