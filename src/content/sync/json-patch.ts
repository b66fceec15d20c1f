// JSON Patch as the CTI feed's producer and the reference consumer apply it (reference 1.4), which
// differs from RFC 6902 on purpose: an empty path addresses the whole object, `replace` is remove
// then add (so replacing a missing key fails), path segments are not `~0`/`~1`-unescaped, and a
// missing intermediate segment fails the operation.

export class PatchError extends Error {
  override name = 'PatchError'
}

type Json = unknown
type Container = Record<string, Json> | Json[]

const isContainer = (v: Json): v is Container => typeof v === 'object' && v !== null

function segments(path: unknown): string[] {
  if (typeof path !== 'string') throw new PatchError(`path must be a string`)
  if (path === '') return []
  if (!path.startsWith('/')) throw new PatchError(`path [${path}] must start with /`)
  return path.slice(1).split('/')
}

function parentOf(root: Container, parts: string[], path: string): Container {
  let cur: Json = root
  for (const p of parts.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[index(cur, p, path, false)]
    else if (isContainer(cur) && p in cur) cur = (cur as Record<string, Json>)[p]
    else throw new PatchError(`path [${path}] does not exist`)
    if (!isContainer(cur)) throw new PatchError(`path [${path}] does not exist`)
  }
  return cur as Container
}

function index(arr: Json[], seg: string, path: string, insert: boolean): number {
  if (!/^\d+$/.test(seg)) throw new PatchError(`path [${path}] is not an array index`)
  const i = Number(seg)
  if (i > arr.length || (!insert && i === arr.length)) throw new PatchError(`index out of range in [${path}]`)
  return i
}

function read(root: Container, path: unknown): Json {
  const parts = segments(path)
  if (parts.length === 0) return root
  const parent = parentOf(root, parts, String(path))
  const last = parts[parts.length - 1]
  if (Array.isArray(parent)) return parent[index(parent, last, String(path), false)]
  if (!(last in parent)) throw new PatchError(`path [${String(path)}] does not exist`)
  return parent[last]
}

/** Returns the (possibly replaced) root, since an empty-path add swaps the whole object. */
function add(root: Container, path: unknown, value: Json): Container {
  const parts = segments(path)
  if (parts.length === 0) {
    if (!isContainer(value)) throw new PatchError('an empty path needs an object value')
    return structuredClone(value)
  }
  const parent = parentOf(root, parts, String(path))
  const last = parts[parts.length - 1]
  const copy = structuredClone(value)
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(copy)
    else parent.splice(index(parent, last, String(path), true), 0, copy)
  } else parent[last] = copy
  return root
}

function remove(root: Container, path: unknown): Container {
  const parts = segments(path)
  if (parts.length === 0) {
    if (Array.isArray(root)) root.length = 0
    else for (const k of Object.keys(root)) delete root[k]
    return root
  }
  const parent = parentOf(root, parts, String(path))
  const last = parts[parts.length - 1]
  if (Array.isArray(parent)) parent.splice(index(parent, last, String(path), false), 1)
  else {
    if (!(last in parent)) throw new PatchError(`path [${String(path)}] does not exist`)
    delete parent[last]
  }
  return root
}

const equal = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b)

/** Applies the operations to a copy of `target`; throws PatchError on the first one that fails. */
export function applyPatch<T extends Container>(target: T, operations: ReadonlyArray<Record<string, unknown>>): T {
  let root: Container = structuredClone(target)
  for (const op of operations) {
    switch (op.op) {
      case 'add':
        root = add(root, op.path, op.value)
        break
      case 'remove':
        root = remove(root, op.path)
        break
      case 'replace':
        root = add(remove(root, op.path), op.path, op.value)
        break
      case 'move': {
        const value = read(root, op.from)
        root = add(remove(root, op.from), op.path, value)
        break
      }
      case 'copy':
        root = add(root, op.path, structuredClone(read(root, op.from)))
        break
      case 'test':
        if (!equal(read(root, op.path), op.value)) throw new PatchError(`test failed at [${String(op.path)}]`)
        break
      default:
        throw new PatchError(`unknown operation [${String(op.op)}]`)
    }
  }
  return root as T
}
