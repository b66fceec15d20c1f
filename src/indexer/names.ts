/** Simple `*` patterns as OpenSearch uses them for setting names, `_cat` headers and alias names. */
export function globMatcher(pattern: string): (name: string) => boolean {
  if (!pattern.includes('*')) return (name) => name === pattern
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
  return (name) => re.test(name)
}
