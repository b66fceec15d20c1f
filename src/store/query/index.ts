/** The one query-DSL evaluator (see compile.ts), shared by the embedded store, detectors and logtest. */
export {
  compile,
  compileNamedQuery,
  compileQuery,
  matchedNames,
  kindOf,
  type CompileOptions,
  type CompiledQuery,
  type FieldSpec,
  type FieldTypes,
  type Test,
} from './compile'
export { DocView, FieldPath, fieldPath, type Source } from './doc'
export { analyze } from './analysis'
export { fold, compareCodePoints } from './fold'
export { parseDate, parseDateMath, looksLikeDate } from './dates'
export { luceneRegExp } from './lucene-regexp'
export { wildcardMatcher } from './wildcard'
export { cidrMatcher, parseIp, parseCidr } from './ip'
