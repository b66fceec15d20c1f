/**
 * Command-line parsing for svc-ext. Small on purpose: sub-command, --config,
 * --help. Anything else is a usage error with a non-zero exit.
 */
export interface Command {
  name: 'serve' | 'version' | 'check-config' | 'hash-password' | 'content' | 'help'
  config?: string
  help: boolean
  /** `content export|import` */
  action?: 'export' | 'import'
  /** `content export --out FILE` */
  out?: string
  /** `content import FILE` */
  file?: string
  iocs?: boolean
  vulnerabilities?: boolean
}

export const USAGE = `Usage: svc-ext <command> [options]

Commands:
  serve [--config FILE]         Start the server (embedded store unless storage.platform.url is set)
  check-config [--config FILE]  Validate the node configuration and print the effective settings
  hash-password                 Read a password on stdin and print its bcrypt hash (for internal_users.yml)
  content export --out FILE     Write the standard content (optionally IoCs, vulnerabilities) as a snapshot ZIP
  content import FILE           Install a snapshot ZIP for the next sync pass (air-gapped nodes)
  version                       Print the product version
  help                          Show this help

Options:
  --config FILE   Node configuration file (YAML, flat dotted keys like opensearch.yml).
                  Default: $SVC_CONFIG, else ./config/svc-ext.yml when it exists, else built-in defaults.
  -h, --help      Show help for a command

Environment:
  SVC_SETTING_<key>            Override one setting; write dots as __ (SVC_SETTING_http__port=9300)
  SVC_INITIAL_ADMIN_PASSWORD   Password of the first-start admin user (else one is generated)
`

export const COMMAND_HELP: Record<Command['name'], string> = {
  serve: `Usage: svc-ext serve [--config FILE]\n\nStarts the REST server. SIGTERM drains in-flight requests and closes storage; SIGHUP reloads the security files.\n`,
  'check-config': `Usage: svc-ext check-config [--config FILE]\n\nValidates the node configuration and prints every effective setting (secrets masked). Exits 1 on an invalid configuration.\n`,
  'hash-password': `Usage: echo -n 'password' | svc-ext hash-password\n\nReads a password on stdin and prints its bcrypt hash, for the \`hash\` field of internal_users.yml.\n`,
  version: `Usage: svc-ext version\n\nPrints the product version.\n`,
  content: `Usage: svc-ext content export --out FILE [--iocs] [--vulnerabilities] [--config FILE]
       svc-ext content import FILE [--config FILE]

export  writes the standard space (and with --iocs / --vulnerabilities those consumers' content) as one
        snapshot ZIP in the CTI snapshot format, with the consumers' identities in meta/manifest.json.
import  checks a snapshot ZIP, installs it as the packaged snapshot of every consumer it holds content
        for and sets them back to offset 0: the next sync pass (at start, or POST
        /_plugins/_content_manager/update) loads it into staging indices and swaps them in whole.
With the embedded store, run both while the node is stopped.
`,
  help: USAGE,
}

export class UsageError extends Error {}

export function parseArgs(argv: string[]): Command {
  const [first, ...rest] = argv
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') return { name: 'help', help: true }
  if (!(first in COMMAND_HELP)) throw new UsageError(`unknown command: ${first}`)
  const cmd: Command = { name: first as Command['name'], help: false }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--help' || arg === '-h') cmd.help = true
    else if (cmd.name === 'content' && !cmd.action && (arg === 'export' || arg === 'import')) cmd.action = arg
    else if (cmd.name === 'content' && cmd.action === 'export' && arg === '--out') {
      const value = rest[++i]
      if (!value) throw new UsageError('--out needs a file name')
      cmd.out = value
    } else if (cmd.name === 'content' && cmd.action === 'export' && (arg === '--iocs' || arg === '--vulnerabilities'))
      cmd[arg === '--iocs' ? 'iocs' : 'vulnerabilities'] = true
    else if (cmd.name === 'content' && cmd.action === 'import' && !cmd.file && !arg.startsWith('-')) cmd.file = arg
    else if ((arg === '--config' || arg === '-c') && (cmd.name === 'serve' || cmd.name === 'check-config' || cmd.name === 'content')) {
      const value = rest[++i]
      if (!value) throw new UsageError(`${arg} needs a file name`)
      cmd.config = value
    } else if (arg.startsWith('--config=') && (cmd.name === 'serve' || cmd.name === 'check-config')) cmd.config = arg.slice(9)
    else throw new UsageError(`unexpected argument for ${cmd.name}: ${arg}`)
  }
  return cmd
}
