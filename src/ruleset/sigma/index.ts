export { compileSigmaRule, DEFAULT_KEYWORD_FIELDS, type CompileOptions, type CompiledSigmaRule } from './compile'
export { parseSigmaRule, SigmaRuleDocument } from './rule'
export { SigmaError, SigmaInvalid, SigmaUnsupported } from './errors'
export type { Query } from './dsl'
