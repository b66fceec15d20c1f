#!/usr/bin/env bun
import { join, resolve } from 'node:path'
import { existsSync } from 'node:fs'
import { COMMAND_HELP, parseArgs, USAGE, UsageError, type Command } from './cli'
import { openBackend } from './backend'
import { ConfigError, loadNodeConfig } from './config/node-config'
import { exportSnapshot, ImportError, importSnapshot } from './content/sync/offline'
import { SETTINGS } from './config/registry'
import { createLogger, type Level } from './http/log'
import { startServer } from './server/listen'
import { StoreFileError } from './store/embedded'
import { VERSION } from './version'

function configFile(cmd: Command): string | undefined {
  if (cmd.config) return cmd.config
  if (process.env.SVC_CONFIG) return process.env.SVC_CONFIG
  const local = resolve('config/svc-ext.yml')
  return existsSync(local) ? local : undefined
}

async function readStdin(): Promise<string> {
  return await new Response(Bun.stdin.stream()).text()
}

async function main(argv: string[]): Promise<number> {
  let cmd: Command
  try {
    cmd = parseArgs(argv)
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`svc-ext: ${e.message}\n\n${USAGE}`)
      return 2
    }
    throw e
  }
  if (cmd.help || cmd.name === 'help') {
    process.stdout.write(COMMAND_HELP[cmd.name])
    return 0
  }
  switch (cmd.name) {
    case 'version':
      process.stdout.write(`${VERSION}\n`)
      return 0
    case 'hash-password': {
      const password = (await readStdin()).replace(/\r?\n$/, '')
      if (password === '') {
        process.stderr.write('svc-ext: no password on stdin\n')
        return 1
      }
      process.stdout.write(`${await Bun.password.hash(password, { algorithm: 'bcrypt', cost: 12 })}\n`)
      return 0
    }
    case 'check-config': {
      const node = await loadNodeConfig(configFile(cmd))
      process.stdout.write(`# ${node.configFile ?? 'no config file: built-in defaults'}\n`)
      for (const def of SETTINGS) {
        const value = node.values.get(def.key)
        const shown = def.secret && value ? '<masked>' : JSON.stringify(value)
        process.stdout.write(`${def.key}: ${shown}${node.explicit.has(def.key) ? '' : '  # default'}\n`)
      }
      return 0
    }
    case 'content': {
      const node = await loadNodeConfig(configFile(cmd))
      const log = createLogger({ level: 'warn' })
      const dataDir = resolve(node.values.get('path.data') as string)
      const backend = await openBackend(node, dataDir, log)
      try {
        if (cmd.action === 'export') {
          const r = await exportSnapshot(backend.store, resolve(cmd.out!), { iocs: cmd.iocs, vulnerabilities: cmd.vulnerabilities })
          process.stdout.write(`${JSON.stringify(r)}\n`)
        } else {
          const r = await importSnapshot(backend.store, resolve(cmd.file!), join(dataDir, 'cti-snapshots'))
          process.stdout.write(`${JSON.stringify(r)}\n`)
        }
        return 0
      } catch (e) {
        if (!(e instanceof ImportError)) throw e
        process.stderr.write(`svc-ext: ${e.message}\n`)
        return 1
      } finally {
        await backend.store.close()
      }
    }
    case 'serve': {
      const node = await loadNodeConfig(configFile(cmd))
      const log = createLogger({ level: node.values.get('log.level') as Level })
      // Bun ends the process on a rejection nobody handles: a background read failing as a platform
      // node goes away must not take the node down with it. Logged, as one line, and served on.
      process.on('unhandledRejection', (e) => log.error('unhandled rejection in background work', { error: e as Error }))
      // Everything the node writes (store, WAL, journal, snapshots, secrets) is for its own user only.
      process.umask(0o077)
      let server: Awaited<ReturnType<typeof startServer>>
      try {
        server = await startServer(node, log)
      } catch (e) {
        if (!(e instanceof StoreFileError)) throw e
        log.error('store check failed, not starting', { file: e.file, reason: e.message })
        process.stderr.write(`svc-ext: ${e.message}\n`)
        return 1
      }
      log.info('svc-ext started', { url: server.url, version: VERSION, store: server.app.storeKind })
      for (const line of server.app.loginHints) log.info(line)
      process.on('SIGHUP', () => void server.app.reloadSecurity())
      let stopping = false
      const stop = async (signal: string) => {
        if (stopping) return
        stopping = true
        log.info('stopping', { signal })
        await server.stop()
        log.info('stopped')
        process.exit(0)
      }
      process.on('SIGTERM', () => void stop('SIGTERM'))
      process.on('SIGINT', () => void stop('SIGINT'))
      return -1 // keep running
    }
  }
  return 0
}

main(Bun.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (e) => {
    if (e instanceof ConfigError) {
      process.stderr.write(`svc-ext: invalid configuration: ${e.message}\n`)
      process.exit(1)
    }
    process.stderr.write(`svc-ext: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  },
)
