/**
 * The `_cat` table renderer: `h` (names, aliases, `*` patterns), `v`, `s` (with `:desc`),
 * `format=json|text`, `help`, `bytes`. Text cells are padded to the column width and numbers
 * right-aligned, like OpenSearch's RestTable.
 */
import { badRequest, type RequestContext } from './context'
import { globMatcher } from './names'
import { Reply } from './router'

export type Cell = string | number | null | undefined

export interface Column {
  name: string
  aliases?: string[]
  /** Shown when `h` is absent. */
  default?: boolean
  /** Sizes in bytes, rendered by the `bytes` parameter. */
  bytes?: boolean
  /** Left-aligned even when every cell is a number (a column OpenSearch does not declare `text-align:right`). */
  left?: boolean
  description?: string
}

const UNITS: Array<[string, number]> = [
  ['pb', 1024 ** 5],
  ['tb', 1024 ** 4],
  ['gb', 1024 ** 3],
  ['mb', 1024 ** 2],
  ['kb', 1024],
]

/** OpenSearch's ByteSizeValue text: `208b`, `4.5kb`, `1mb`. */
export function humanBytes(n: number): string {
  for (const [unit, size] of UNITS) {
    if (n >= size) {
      const v = n / size
      return `${Number.isInteger(v) ? v : Number(v.toFixed(1))}${unit}`
    }
  }
  return `${n}b`
}

/** OpenSearch's TimeValue text: `0s`, `11ms`, `1.2s`, `5m`, `1.5h`, `2d`. */
export function humanTime(ms: number): string {
  if (ms === 0) return '0s'
  if (ms < 1000) return `${ms}ms`
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size) {
      const v = ms / size
      return `${Number.isInteger(v) ? v : Number(v.toFixed(1))}${unit}`
    }
  }
  return `${ms}ms`
}

function bytesIn(n: number, unit: string): string {
  const sizes: Record<string, number> = {
    b: 1,
    k: 1024,
    kb: 1024,
    m: 1024 ** 2,
    mb: 1024 ** 2,
    g: 1024 ** 3,
    gb: 1024 ** 3,
    t: 1024 ** 4,
    tb: 1024 ** 4,
    p: 1024 ** 5,
    pb: 1024 ** 5,
  }
  const size = sizes[unit]
  if (size === undefined) throw badRequest(`failed to parse [bytes] with value [${unit}]`)
  return String(Math.floor(n / size))
}

/** The columns to show, each with its header: an alias asked for by name is shown as that alias, like RestTable. */
function pick(ctx: RequestContext, columns: Column[]): Array<{ column: Column; header: string }> {
  const h = ctx.list('h')
  if (!h) return columns.filter((c) => c.default).map((column) => ({ column, header: column.name }))
  const out: Array<{ column: Column; header: string }> = []
  for (const wanted of h) {
    if (!wanted.includes('*')) {
      // A name or alias is shown each time it is asked for (`h=cd,creation.date` shows both).
      const column = columns.find((c) => c.name === wanted) ?? columns.find((c) => (c.aliases ?? []).includes(wanted))
      if (column) out.push({ column, header: wanted })
      continue
    }
    const match = globMatcher(wanted)
    for (const column of columns.filter((c) => match(c.name)))
      if (!out.some((o) => o.column === column)) out.push({ column, header: column.name })
  }
  return out
}

function byName(columns: Column[], name: string): Column | undefined {
  return columns.find((c) => c.name === name || (c.aliases ?? []).includes(name))
}

export function renderCat(ctx: RequestContext, columns: Column[], rows: Array<Record<string, Cell>>): Reply {
  if (ctx.flag('help', false)) {
    const text =
      columns.map((c) => `${c.name.padEnd(24)} | ${(c.aliases ?? []).join(',').padEnd(16)} | ${c.description ?? c.name}`).join('\n') + '\n'
    return new Reply(200, text, 'text/plain; charset=UTF-8')
  }
  const picked = pick(ctx, columns)
  const shown = picked.map((p) => p.column)
  const bytes = ctx.str('bytes')
  const value = (c: Column, row: Record<string, Cell>): string => {
    const v = row[c.name]
    if (v === null || v === undefined) return ''
    if (c.bytes && typeof v === 'number') return bytes === undefined ? humanBytes(v) : bytesIn(v, bytes)
    return String(v)
  }

  const sorted = [...rows]
  const sortSpec = ctx.list('s')
  if (sortSpec) {
    const keys = sortSpec.map((s) => {
      const [name, dir] = s.split(':')
      const col = byName(columns, name)
      if (!col) throw badRequest(`Unable to sort by unknown sort key \`${name}\``, 'unsupported_operation_exception')
      return { col, desc: dir === 'desc' }
    })
    sorted.sort((a, b) => {
      for (const { col, desc } of keys) {
        const x = a[col.name]
        const y = b[col.name]
        const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x ?? '').localeCompare(String(y ?? ''))
        if (cmp !== 0) return desc ? -cmp : cmp
      }
      return 0
    })
  }

  const format = ctx.str('format') ?? 'text'
  if (format === 'json') {
    return new Reply(
      200,
      sorted.map((row) =>
        Object.fromEntries(
          picked.map(({ column: c, header }) => [header, row[c.name] === undefined || row[c.name] === null ? null : value(c, row)]),
        ),
      ),
    )
  }
  if (format !== 'text' && format !== 'txt') throw badRequest(`Unsupported format [${format}]`)

  const table = sorted.map((row) => shown.map((c) => value(c, row)))
  if (ctx.flag('v', false)) table.unshift(picked.map((p) => p.header))
  const widths = shown.map((_, i) => Math.max(0, ...table.map((r) => r[i].length)))
  const numeric = shown.map(
    (c) => !c.left && rows.length > 0 && rows.every((r) => typeof r[c.name] === 'number' || r[c.name] === null || r[c.name] === undefined),
  )
  const header = ctx.flag('v', false)
  // As RestTable: the last column is not padded on the right, but the separators before empty
  // trailing cells stay (a closed index's row ends in blanks).
  const last = shown.length - 1
  const text = table
    .map(
      (r, rowIndex) =>
        r
          .map((cell, i) =>
            numeric[i] && !(header && rowIndex === 0) ? cell.padStart(widths[i]) : i === last ? cell : cell.padEnd(widths[i]),
          )
          .join(' ') + '\n',
    )
    .join('')
  return new Reply(200, text, 'text/plain; charset=UTF-8')
}
