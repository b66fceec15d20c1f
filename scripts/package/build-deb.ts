// `npm run package`: builds dist/svc-ext and packs it as a Debian package with Debian's own
// dpkg-deb: /usr/bin/svc-ext, the systemd unit (scripts/systemd, pointed at /usr/bin), the
// conffile /etc/svc-ext/svc-ext.yml, and maintainer scripts that create the `svc-ext` system user
// and the private /var/lib/svc-ext. Options: --revision N (Debian revision, default 1),
// --out DIR (default dist/), --no-build (package the existing dist/svc-ext), --compression
// xz|gzip|zstd|none (default xz, Debian's; the package test uses none to spare the CPU).
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const root = join(import.meta.dir, '../..')
const here = import.meta.dir

export interface PackageOptions {
  revision?: string
  outDir?: string
  build?: boolean
  compression?: 'xz' | 'gzip' | 'zstd' | 'none'
}

function run(cmd: string[]): string {
  const r = Bun.spawnSync(cmd, { cwd: root, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (${r.exitCode}): ${r.stderr.toString()}`)
  return r.stdout.toString().trim()
}

export function buildDeb(opts: PackageOptions = {}): string {
  const version = readFileSync(join(root, 'VERSION'), 'utf8').trim()
  const revision = opts.revision ?? '1'
  if (!/^[0-9A-Za-z.+~]+$/.test(revision)) throw new Error(`invalid Debian revision ${revision}`)
  const outDir = opts.outDir ?? join(root, 'dist')
  if (opts.build !== false) run([process.execPath, join(root, 'scripts/build.ts')])
  const arch = run(['dpkg', '--print-architecture'])
  const name = `svc-ext_${version}-${revision}_${arch}`
  // Staged in a temporary directory, removed once dpkg-deb has packed it.
  const scratch = mkdtempSync(join(tmpdir(), 'svc-deb-stage-'))
  const stage = join(scratch, name)
  mkdirSync(outDir, { recursive: true })
  const dir = (p: string, mode = 0o755) => {
    mkdirSync(join(stage, p), { recursive: true })
    chmodSync(join(stage, p), mode)
  }
  const file = (p: string, content: string | Buffer, mode = 0o644) => {
    writeFileSync(join(stage, p), content)
    chmodSync(join(stage, p), mode)
  }

  dir('DEBIAN')
  dir('usr/bin')
  copyFileSync(join(root, 'dist/svc-ext'), join(stage, 'usr/bin/svc-ext'))
  chmodSync(join(stage, 'usr/bin/svc-ext'), 0o755)
  dir('usr/lib/systemd/system')
  const unit = readFileSync(join(root, 'scripts/systemd/svc-ext.service'), 'utf8').replaceAll('/usr/local/bin/svc-ext', '/usr/bin/svc-ext')
  file('usr/lib/systemd/system/svc-ext.service', unit)
  dir('usr/share/doc/svc-ext')
  file('usr/share/doc/svc-ext/README.md', readFileSync(join(root, 'README.md')))
  // /etc/svc-ext and /var/lib/svc-ext get their owners and modes from postinst (the user exists only then).
  dir('etc/svc-ext')
  file('etc/svc-ext/svc-ext.yml', readFileSync(join(here, 'debian/svc-ext.yml')))
  file('DEBIAN/conffiles', '/etc/svc-ext/svc-ext.yml\n')
  for (const script of ['postinst', 'prerm', 'postrm']) file(`DEBIAN/${script}`, readFileSync(join(here, 'debian', script)), 0o755)
  const installedKb = Math.ceil(Number(run(['du', '-sk', '--exclude=DEBIAN', stage]).split(/\s+/)[0]))
  file(
    'DEBIAN/control',
    [
      'Package: svc-ext',
      `Version: ${version}-${revision}`,
      `Architecture: ${arch}`,
      'Maintainer: svc-ext maintainers <svc-ext@localhost>',
      `Installed-Size: ${installedKb}`,
      'Section: net',
      'Priority: optional',
      'Depends: passwd',
      'Homepage: https://localhost/svc-ext',
      'Description: Indexer Extension Interface (Setup, Ruleset Management, Content Manager)',
      ' One executable that serves the Indexer Extension Interface over an embedded store or an',
      ' OpenSearch cluster, as a systemd service running as the svc-ext system user.',
      '',
    ].join('\n'),
  )
  const deb = join(outDir, `${name}.deb`)
  // --root-owner-group: every file root:root without fakeroot; postinst hands the data directory over.
  try {
    run(['dpkg-deb', '--root-owner-group', `-Z${opts.compression ?? 'xz'}`, '--build', stage, deb])
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return deb
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { revision: { type: 'string' }, out: { type: 'string' }, 'no-build': { type: 'boolean' }, compression: { type: 'string' } },
  })
  const compression = values.compression as PackageOptions['compression']
  if (compression && !['xz', 'gzip', 'zstd', 'none'].includes(compression)) throw new Error(`unknown compression ${compression}`)
  const deb = buildDeb({ revision: values.revision, outDir: values.out, build: !values['no-build'], compression })
  console.log(deb)
}
