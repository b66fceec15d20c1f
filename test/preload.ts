// Every temporary file a test run makes (data dirs, sockets, certificates, child servers' dirs)
// goes under one directory per `bun test` run, removed after the last test, so runs leave
// nothing behind in the machine's temp dir.
import { afterAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = mkdtempSync(join(tmpdir(), 'svc-tests-'))
process.env.TMPDIR = root
afterAll(() => rmSync(root, { recursive: true, force: true }))
