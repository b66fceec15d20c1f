// Files imported with `with { type: "text" }` (the VERSION file) are strings.
declare module '*/VERSION' {
  const text: string
  export default text
}

// The reference's field tables (src/setup/indices/schema/*.tsv), embedded in the binary as text.
declare module '*.tsv' {
  const text: string
  export default text
}
