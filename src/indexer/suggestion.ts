/** Lucene-style "did you mean": the first known word within two edits of `word`. */
export function suggestion(word: string, known: readonly string[]): string | undefined {
  return known.find((k) => editDistance(word, k) <= 2)
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
  return d[a.length][b.length]
}

/** OpenSearch's refusal of an unknown metric in a stats path, with its "did you mean" when one is near. */
export function unrecognized(path: string, what: string, word: string, known: Iterable<string>): string {
  const near = suggestion(word, [...known])
  return `request [${path}] contains unrecognized ${what}: [${word}]${near ? ` -> did you mean [${near}]?` : ''}`
}
