/**
 * Windows-like events for the real-rule benchmarks and the runtime's differential test: Sysmon
 * and Security channel fields (process creation, file, registry, network, logon/service), benign
 * values (system binaries and paths, long command lines, hashes), and, at a set rate per field,
 * a value taken from the rules themselves, placed as its modifier reads it (inside for
 * `contains`, at the start for `startswith`...), so a realistic share of events match some rule.
 */
import type { SigmaDoc } from './sigma-rules'
import { nextSeed } from './random'

interface Literal {
  value: string
  mods: string[]
}

let seed = 20261127
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const int = (n: number) => Math.floor(rnd() * n)
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]

const BINS = ['svchost', 'explorer', 'chrome', 'msedge', 'teams', 'outlook', 'winword', 'excel', 'conhost', 'taskhostw', 'searchindexer']
const TOOLS = ['cmd', 'powershell', 'rundll32', 'regsvr32', 'reg', 'sc', 'net', 'schtasks', 'wmic', 'certutil', 'msiexec', 'whoami']
const DIRS = [
  'C:\\Windows\\System32\\',
  'C:\\Program Files\\Common Files\\',
  'C:\\Users\\alice\\AppData\\Local\\Temp\\',
  'C:\\ProgramData\\',
]
const WORDS = ['/c', '-NoProfile', '--type=renderer', '/quiet', '-k', 'netsvcs', '-p', 'start', 'query', 'config', '/s', '--update']
const USERS = ['NT AUTHORITY\\SYSTEM', 'CORP\\alice', 'CORP\\bob', 'NT AUTHORITY\\NETWORK SERVICE']
const hex = (n: number) => Array.from({ length: n }, () => '0123456789ABCDEF'[int(16)]).join('')
/** Binaries Windows ships in System32, and the folder each application installs to. */
const SYSTEM_BINS = new Set([
  'svchost',
  'services',
  'conhost',
  'taskhostw',
  'searchindexer',
  'cmd',
  'powershell',
  'rundll32',
  'regsvr32',
  'reg',
  'sc',
  'net',
  'schtasks',
  'wmic',
  'certutil',
  'msiexec',
  'whoami',
])
/**
 * The parent of a process, as process trees go: a service host is started by the service
 * control manager, anything else mostly by the shell or a service host. Drawn from the images
 * at random, a parent was as often `conhost.exe` or `winword.exe` as the shell, and the rules
 * on unusual parents (of SigmaHQ's 2,407, a dozen) matched a fifth of the process events.
 */
const parentOf = (bin: string) => (bin === 'svchost' ? 'services' : pick(['explorer', 'explorer', 'explorer', 'svchost', 'svchost', 'cmd']))
/**
 * Where a process image lies, as on managed hosts: a system binary in System32, an application
 * under Program Files, and 3% of either in a user's temporary folder or ProgramData. Drawn
 * uniformly from the four, half the images were in Temp or ProgramData (`svchost.exe` among
 * them), and SigmaHQ's rules made of exclusions ("an image outside the usual folders") matched
 * half the events: 1.2 matches an event at 2,407 rules, no real host's share.
 */
const imageDir = (bin: string) => {
  const r = rnd()
  if (r < 0.015) return DIRS[2]
  if (r < 0.03) return DIRS[3]
  return SYSTEM_BINS.has(bin) ? DIRS[0] : DIRS[1]
}
const path = (bin = pick(BINS)) => `${imageDir(bin)}${bin}.exe`
const commandLine = (image: string) => {
  const words = Array.from({ length: 2 + int(30) }, () => (rnd() < 0.2 ? `C:\\Users\\alice\\Documents\\file${int(1000)}.txt` : pick(WORDS)))
  return `"${image}" ${words.join(' ')}`
}

/**
 * The literals each field is tested against, one list per rule (regexes and CIDRs left out):
 * sampled rule first, then literal, so a rule listing 5,000 hashes weighs as much as one
 * listing a single command-line flag.
 */
export function ruleLiterals(rules: readonly SigmaDoc[]): Map<string, Literal[][]> {
  const out = new Map<string, Literal[][]>()
  for (const r of rules) {
    const mine = new Map<string, Literal[]>()
    const add = (key: string, v: unknown) => {
      const [field, ...mods] = key.split('|')
      if (mods.includes('re') || mods.includes('cidr') || field === '') return
      for (const x of Array.isArray(v) ? v : [v]) {
        if (typeof x !== 'string' && typeof x !== 'number') continue
        const list = mine.get(field) ?? []
        list.push({ value: String(x), mods })
        mine.set(field, list)
      }
    }
    const selection = (s: unknown) => {
      if (Array.isArray(s)) s.forEach(selection)
      else if (s && typeof s === 'object') for (const [k, v] of Object.entries(s)) add(k, v)
    }
    for (const [name, s] of Object.entries(r.detection)) if (name !== 'condition' && name !== 'timeframe') selection(s)
    for (const [field, list] of mine) out.set(field, [...(out.get(field) ?? []), list])
  }
  return out
}

/** A rule's literal as it would appear in a field's value. */
function placed(l: Literal, benign: string): string {
  const v = l.value.replace(/\*/g, () => pick(WORDS)).replace(/\?/g, 'x')
  if (l.mods.includes('contains')) return `${benign.slice(0, 40)} ${v} ${benign.slice(40, 80)}`
  if (l.mods.includes('startswith')) return `${v}${benign.slice(0, 30)}`
  if (l.mods.includes('endswith')) return `${benign.slice(0, 30)}${v}`
  return v
}

/** `count` events; `rate` is the chance that a field carries a value taken from the rules. */
export function windowsEvents(rules: readonly SigmaDoc[], count: number, rate = 0.02): Array<Record<string, unknown>> {
  return [...windowsEventStream(rules, count, rate)]
}

/** The same events one at a time (a store can be filled without holding them all). */
export function* windowsEventStream(rules: readonly SigmaDoc[], count: number, rate = 0.02): Generator<Record<string, unknown>> {
  seed = 20261127
  const literals = ruleLiterals(rules)
  for (let i = 0; i < count; i++) {
    const bin = rnd() < 0.8 ? pick(BINS) : pick(TOOLS)
    const image = path(bin)
    const parent = path(parentOf(bin))
    const kind = int(10)
    const e: Record<string, unknown> =
      kind < 5
        ? {
            EventID: rnd() < 0.8 ? 1 : 4688,
            Image: image,
            OriginalFileName: image.slice(image.lastIndexOf('\\') + 1).toUpperCase(),
            CommandLine: commandLine(image),
            ParentImage: parent,
            ParentCommandLine: commandLine(parent),
            CurrentDirectory: pick(DIRS),
            User: pick(USERS),
            IntegrityLevel: pick(['Medium', 'High', 'System']),
            Hashes: `SHA1=${hex(40)},MD5=${hex(32)},SHA256=${hex(64)},IMPHASH=${hex(32)}`,
            Company: 'Microsoft Corporation',
            Product: 'Microsoft® Windows® Operating System',
            Description: 'Windows host process',
          }
        : kind < 7
          ? {
              EventID: 11,
              Image: image,
              TargetFilename: `${pick(DIRS)}file${int(10000)}${pick(['.tmp', '.log', '.dll', '.txt'])}`,
              User: pick(USERS),
            }
          : kind < 8
            ? {
                EventID: 13,
                EventType: 'SetValue',
                Image: image,
                TargetObject: `HKLM\\SOFTWARE\\Vendor${int(50)}\\Settings\\Value${int(100)}`,
                Details: `DWORD (0x0000000${int(9)})`,
              }
            : kind < 9
              ? {
                  EventID: 3,
                  Image: image,
                  DestinationIp: `10.${int(256)}.${int(256)}.${int(256)}`,
                  DestinationPort: pick([443, 80, 445, 53, 3389]),
                  DestinationHostname: `host${int(500)}.corp.example`,
                  Initiated: 'true',
                }
              : {
                  EventID: pick([4624, 4625, 4688, 4697, 7045, 4104]),
                  LogonType: pick([2, 3, 10]),
                  TargetUserName: pick(['alice', 'bob', 'svc_backup']),
                  SubjectUserName: 'WKS01$',
                  IpAddress: `192.168.${int(256)}.${int(256)}`,
                  ServiceName: `Service${int(100)}`,
                  ImagePath: image,
                  ScriptBlockText: commandLine(image),
                }
    for (const field of Object.keys(e)) {
      const pool = literals.get(field)
      if (pool && rnd() < rate) e[field] = placed(pick(pick(pool)), String(e[field]))
    }
    yield e
  }
}

/**
 * Sysmon / Security field -> event-stream schema field, as a Windows log type maps them for a
 * detector: the real-rule detector run stores events under these names and compiles the rules
 * with this mapping. Fields not listed stay unmapped (rules reading only them never match).
 */
export const WINDOWS_FIELDS: Record<string, string> = {
  EventID: 'event.code',
  Image: 'process.executable',
  OriginalFileName: 'process.pe.original_file_name',
  CommandLine: 'process.command_line',
  ParentImage: 'process.parent.executable',
  ParentCommandLine: 'process.parent.command_line',
  CurrentDirectory: 'process.working_directory',
  User: 'user.name',
  Hashes: 'process.hash.sha256',
  Company: 'process.pe.company',
  Product: 'process.pe.product',
  Description: 'process.pe.description',
  TargetFilename: 'file.path',
  EventType: 'event.action',
  TargetObject: 'registry.path',
  Details: 'registry.data.strings',
  DestinationIp: 'destination.ip',
  DestinationPort: 'destination.port',
  DestinationHostname: 'destination.domain',
  Initiated: 'network.direction',
  TargetUserName: 'user.target.name',
  IpAddress: 'source.ip',
  ServiceName: 'service.name',
}

/** `event` under the schema's names (WINDOWS_FIELDS), nested; unmapped fields are dropped. */
export function schemaEvent(event: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [raw, v] of Object.entries(event)) {
    const path = WINDOWS_FIELDS[raw]
    if (path === undefined) continue
    // A rule's value sampled into an address or port field is not one: the stream would refuse it.
    if (path.endsWith('.ip') && !/^\d{1,3}(\.\d{1,3}){3}$/.test(String(v))) continue
    if (path.endsWith('.port') && !/^\d+$/.test(String(v))) continue
    const parts = path.split('.')
    let o = out
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>
    o[parts[parts.length - 1]] = path === 'event.code' ? String(v) : v
  }
  return out
}
