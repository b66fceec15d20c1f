/**
 * What OpenSearch checks in every template it is given (MetadataIndexTemplateService.validate),
 * and the form it keeps a template's settings, mappings and aliases in.
 */
import { IllegalArgument, InvalidIndexTemplate, MapperParsing } from '../../errors'
import { nestKeys } from '../../flat-keys'
import { FILE_NAME_CHARS, FILE_NAME_CHARS_TEXT } from '../../names'
import type { CreateIndexBody, IndexSettings, Mappings } from '../../port'
import { own, setOwn } from '../../own'
import { isObject } from '../../query/doc'
import { flattenSettings, validateSettings } from '../../settings'
import { aliasDefinition, validateAliasName } from '../alias-entries'
import { validateMappings } from '../mapping'

export const patternList = (p: string | string[]): string[] => (Array.isArray(p) ? p : [p])

/** OpenSearch's Regex.isMatchAllPattern: global templates are the ones with a bare `*`. */
export const isGlobal = (patterns: string[]): boolean => patterns.includes('*')

function nameProblems(name: string): string[] {
  const out: string[] = []
  if (name.includes(' ')) out.push('name must not contain a space')
  if (name.includes(',')) out.push("name must not contain a ','")
  if (name.includes('#')) out.push("name must not contain a '#'")
  if (name.includes('*')) out.push("name must not contain a '*'")
  if (name.startsWith('_')) out.push("name must not start with '_'")
  if (name.toLowerCase() !== name) out.push('name must be lower cased')
  return out
}

function patternProblems(p: string): string[] {
  const out: string[] = []
  if (p.includes(' ')) out.push(`index_patterns [${p}] must not contain a space`)
  for (const c of [',', '#', ':']) if (p.includes(c)) out.push(`index_pattern [${p}] must not contain a '${c}'`)
  if (p.startsWith('_')) out.push(`index_pattern [${p}] must not start with '_'`)
  if (FILE_NAME_CHARS.some((c) => c !== '*' && p.includes(c)))
    out.push(`index_pattern [${p}] must not contain the following characters ${FILE_NAME_CHARS_TEXT}`)
  return out
}

/** The name, pattern and global-template checks, every problem listed in one invalid_index_template_exception. */
export function checkTemplate(name: string, patterns: string[], settings?: IndexSettings): void {
  const problems = [...nameProblems(name), ...patterns.flatMap(patternProblems)]
  if (isGlobal(patterns) && settings !== undefined && 'index.hidden' in flattenSettings(settings))
    problems.push('global templates may not specify the setting index.hidden')
  if (problems.length > 0) throw new InvalidIndexTemplate(name, `Validation Failed: ${problems.map((p, i) => `${i + 1}: ${p};`).join('')}`)
}

/** Settings as a template keeps them: `index.`-prefixed keys with string values, nested. */
export function normalizedSettings(settings: IndexSettings): IndexSettings {
  const flat = flattenSettings(settings)
  validateSettings(flat)
  return nestKeys(flat)
}

const UNWRAPPED = 'Failed to parse mapping: '

/** The mapping sent, checked (a problem worded as a template's mapping problem); the pre-7 `{_doc: {...}}` wrapper taken off. */
function checkedMappings(mappings: Mappings): Mappings {
  try {
    validateMappings(mappings)
  } catch (e) {
    if (!(e instanceof MapperParsing) || !e.reason.startsWith(UNWRAPPED)) throw e
    const cause = new MapperParsing(e.reason.slice(UNWRAPPED.length))
    throw new MapperParsing(`Failed to parse mapping [_doc]: ${cause.reason}`, cause)
  }
  const keys = Object.keys(mappings)
  return keys.length === 1 && keys[0] === '_doc' && isObject(own(mappings, '_doc')) ? (own(mappings, '_doc') as Mappings) : mappings
}

/**
 * A template's `{settings, mappings, aliases}` checked and in the form OpenSearch keeps it:
 * settings normalized, `routing` split in two. Legacy templates keep only an alias's filter and
 * routing (their aliases never carry `is_write_index` or `is_hidden`).
 */
export function normalizedPart(part: CreateIndexBody, patterns: string[] = [], legacy = false): CreateIndexBody {
  const out: CreateIndexBody = {}
  if (part.settings !== undefined) out.settings = normalizedSettings(part.settings)
  if (part.mappings !== undefined) out.mappings = checkedMappings(part.mappings)
  if (part.aliases !== undefined) {
    out.aliases = {}
    for (const [alias, def] of Object.entries(part.aliases)) {
      validateAliasName(alias)
      if (patterns.includes(alias))
        throw new IllegalArgument(`alias [${alias}] cannot be the same as any pattern in [${patterns.join(', ')}]`)
      const clean = aliasDefinition(def ?? {})
      if (legacy) {
        delete clean.is_write_index
        delete clean.is_hidden
      }
      setOwn(out.aliases, alias, clean)
    }
  }
  return out
}
