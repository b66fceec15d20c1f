// Exports nothing uses are dead code (issue 30): scripts/house/dead-exports.ts finds them.
import { expect, test } from 'bun:test'
import { deadExports } from '../../scripts/house/dead-exports'

test('every export of src/ is used somewhere', () => {
  expect(deadExports().map((d) => `${d.file} ${d.name}`)).toEqual([])
}, 60_000)
