/**
 * Snapshot repositories of the embedded store, as OpenSearch's `fs` repositories: a name, the
 * type `fs` and `settings.location`, which must lie inside one of the directories of `path.repo`
 * (a relative location is resolved against the first of them). Registrations are node state kept
 * in `<path.data>/snapshot-repositories.json` (written atomically); the snapshots themselves live
 * in the repository's directory, one directory per snapshot: `snapshot.json` and `store.db`.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { OpenSearchHttpError } from '../http/errors'
import { writeFileAtomic } from '../store/embedded/integrity'
import { badRequest } from './context'

export interface RepositoryDef {
  type: string
  settings: Record<string, unknown>
}

/** What `snapshot.json` holds: OpenSearch's snapshot info, as GET _snapshot answers it. */
export interface SnapshotInfo {
  snapshot: string
  uuid: string
  version_id: number
  version: string
  indices: string[]
  data_streams: string[]
  include_global_state: boolean
  state: 'IN_PROGRESS' | 'SUCCESS' | 'FAILED'
  start_time: string
  start_time_in_millis: number
  end_time?: string
  end_time_in_millis?: number
  duration_in_millis?: number
  failures: Array<{ reason: string }>
  shards: { total: number; failed: number; successful: number }
  /** Size of the copied store file (ours; OpenSearch reports it in _status only). */
  size_in_bytes?: number
  metadata?: Record<string, unknown>
}

/** OpenSearch's repository and snapshot errors (their 500s answered as 400: they are the caller's input). */
export const repositoryMissing = (repo: string) => new OpenSearchHttpError(404, 'repository_missing_exception', `[${repo}] missing`)
export const repositoryError = (repo: string, reason: string) => new OpenSearchHttpError(400, 'repository_exception', `[${repo}] ${reason}`)
export const snapshotMissing = (repo: string, snap: string) =>
  new OpenSearchHttpError(404, 'snapshot_missing_exception', `[${repo}:${snap}] is missing`)
export const invalidSnapshotName = (repo: string, snap: string, why: string) =>
  new OpenSearchHttpError(400, 'invalid_snapshot_name_exception', `[${repo}:${snap}] Invalid snapshot name [${snap}], ${why}`)

const INVALID_NAME_CHARS = /[\\/*?"<>| ,#:]/

/** OpenSearch's rules for snapshot (and here repository) names; they become directory names. */
export function validateSnapshotName(repo: string, snap: string): void {
  if (!snap) throw invalidSnapshotName(repo, snap, 'cannot be empty')
  if (INVALID_NAME_CHARS.test(snap))
    throw invalidSnapshotName(repo, snap, 'must not contain the following characters [\\, /, *, ?, ", <, >, |, , , #, :,  ]')
  if (snap.startsWith('_')) throw invalidSnapshotName(repo, snap, "must not start with '_'")
  if (snap !== snap.toLowerCase()) throw invalidSnapshotName(repo, snap, 'must be lowercase')
  if (Buffer.byteLength(snap) > 255 || snap === '.' || snap === '..') throw invalidSnapshotName(repo, snap, 'is not a valid directory name')
}

export class SnapshotRepositories {
  private readonly file: string

  constructor(
    dataDir: string,
    /** `path.repo`, resolved: the directories repositories may use. */
    private readonly allowed: string[],
  ) {
    this.file = join(dataDir, 'snapshot-repositories.json')
  }

  all(): Record<string, RepositoryDef> {
    if (!existsSync(this.file)) return {}
    return JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, RepositoryDef>
  }

  get(name: string): RepositoryDef {
    const all = this.all()
    if (!Object.hasOwn(all, name)) throw repositoryMissing(name)
    return all[name]
  }

  /** Validates as OpenSearch's fs repository does, creates the directory, checks it is writable, registers. */
  put(name: string, body: Record<string, unknown> | undefined): void {
    if (!name || INVALID_NAME_CHARS.test(name) || name.startsWith('_') || name !== name.toLowerCase()) {
      throw badRequest(`Invalid repository name [${name}]`, 'invalid_repository_name_exception')
    }
    const type = body?.type
    if (typeof type !== 'string' || type === '') {
      throw new OpenSearchHttpError(400, 'action_request_validation_exception', 'Validation Failed: 1: type is missing;')
    }
    if (type !== 'fs') throw repositoryError(name, `repository type [${type}] does not exist`)
    const settings = (body?.settings ?? {}) as Record<string, unknown>
    if (typeof settings !== 'object' || Array.isArray(settings)) throw badRequest('[settings] must be an object', 'parse_exception')
    const location = settings.location
    if (typeof location !== 'string' || location === '') throw repositoryError(name, 'missing location')
    const dir = this.resolveLocation(name, location)
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      accessSync(dir, constants.W_OK)
    } catch (e) {
      throw repositoryError(name, `cannot create or write the location [${location}]: ${(e as Error).message}`)
    }
    writeFileAtomic(this.file, JSON.stringify({ ...this.all(), [name]: { type, settings } }, null, 2) + '\n')
  }

  /** Unregisters; the snapshots stay on disk, as in OpenSearch. */
  delete(name: string): void {
    const all = this.all()
    if (!Object.hasOwn(all, name)) throw repositoryMissing(name)
    delete all[name]
    writeFileAtomic(this.file, JSON.stringify(all, null, 2) + '\n')
  }

  /** The repository's directory (checked again: path.repo may have changed since it was registered). */
  location(name: string): string {
    return this.resolveLocation(name, String(this.get(name).settings.location))
  }

  private resolveLocation(repo: string, location: string): string {
    if (this.allowed.length === 0) {
      throw repositoryError(
        repo,
        `location [${location}] doesn't match any of the locations specified by path.repo because this setting is empty`,
      )
    }
    const dir = isAbsolute(location) ? resolve(location) : resolve(this.allowed[0], location)
    const inside = this.allowed.some((root) => {
      const rel = relative(root, dir)
      return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
    })
    if (!inside) throw repositoryError(repo, `location [${location}] doesn't match any of the locations specified by path.repo`)
    return dir
  }

  // ---- snapshots in a repository ------------------------------------------------------------

  snapshotDir(repo: string, snap: string): string {
    return join(this.location(repo), snap)
  }

  readInfo(repo: string, snap: string): SnapshotInfo | undefined {
    const file = join(this.snapshotDir(repo, snap), 'snapshot.json')
    if (!existsSync(file)) return undefined
    return JSON.parse(readFileSync(file, 'utf8')) as SnapshotInfo
  }

  writeInfo(repo: string, info: SnapshotInfo): void {
    writeFileAtomic(join(this.snapshotDir(repo, info.snapshot), 'snapshot.json'), JSON.stringify(info, null, 2) + '\n')
  }

  /** Every snapshot of the repository, oldest first. */
  listInfos(repo: string): SnapshotInfo[] {
    const root = this.location(repo)
    if (!existsSync(root)) return []
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => this.readInfo(repo, d.name))
      .filter((i): i is SnapshotInfo => i !== undefined)
      .sort((a, b) => a.start_time_in_millis - b.start_time_in_millis || a.snapshot.localeCompare(b.snapshot))
  }

  removeSnapshot(repo: string, snap: string): void {
    rmSync(this.snapshotDir(repo, snap), { recursive: true, force: true })
  }
}

/** `path.repo` (a list setting, already split), relative directories against the config directory. */
export function repoRoots(value: readonly string[], configDir: string): string[] {
  return value.map((p) => resolve(configDir, p))
}
