// Files imported with `with { type: "text" }` (the VERSION file) are strings.
declare module '*/VERSION' {
  const text: string
  export default text
}
