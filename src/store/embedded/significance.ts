/**
 * The significance heuristics of significant_terms and significant_text (jlh by default,
 * mutual_information, chi_square, gnd, percentage), with OpenSearch's formulas and its parse
 * errors: each scores a term from how many documents of the subset (the aggregated documents)
 * and of the superset (the background) hold it.
 */
import { FieldParseError, IllegalArgument, StoreError } from '../errors'
import { isObject } from '../query/doc'

/** The score of a term held by `subsetFreq` of `subsetSize` documents and `supersetFreq` of `supersetSize` background ones. */
export type Heuristic = (subsetFreq: number, subsetSize: number, supersetFreq: number, supersetSize: number) => number

export const HEURISTICS = ['jlh', 'mutual_information', 'chi_square', 'gnd', 'percentage']

/** The heuristic named `type` with its parameters `p`, refused as OpenSearch's parsers refuse them. */
export function heuristic(type: string, p: unknown): Heuristic {
  if (!isObject(p)) throw new StoreError('x_content_parse_exception', 400, `[${type}] expected an object`)
  const allowed = type === 'mutual_information' || type === 'chi_square' ? NXY_FIELDS : type === 'gnd' ? GND_FIELDS : []
  for (const k of Object.keys(p))
    if (!allowed.includes(k)) throw new StoreError('x_content_parse_exception', 400, `[${type}] unknown field [${k}]`)
  const flag = (k: string, dflt: boolean): boolean => {
    const v = p[k]
    if (v === undefined) return dflt
    if (v === true || v === 'true') return true
    if (v === false || v === 'false') return false
    throw new FieldParseError(type, k, `Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`)
  }
  switch (type) {
    case 'jlh':
      return jlh
    case 'percentage':
      return percentage
    case 'gnd':
      return nxy('GND', true, flag('background_is_superset', true), gnd)
    case 'chi_square':
      return nxy('ChiSquare', flag('include_negatives', false), flag('background_is_superset', true), chiSquare)
    default:
      return nxy('MutualInformation', flag('include_negatives', false), flag('background_is_superset', true), mutualInformation)
  }
}

const NXY_FIELDS = ['include_negatives', 'background_is_superset']
const GND_FIELDS = ['background_is_superset']

function checkValidity(subsetFreq: number, subsetSize: number, supersetFreq: number, supersetSize: number, name: string): void {
  if (subsetFreq < 0 || subsetSize < 0 || supersetFreq < 0 || supersetSize < 0)
    throw new IllegalArgument(`Frequencies of subset and superset must be positive in ${name}.getScore()`)
  if (subsetFreq > subsetSize) throw new IllegalArgument(`subsetFreq > subsetSize, in ${name}`)
  if (supersetFreq > supersetSize) throw new IllegalArgument(`supersetFreq > supersetSize, in ${name}`)
}

const jlh: Heuristic = (subsetFreq, subsetSize, supersetFreq, supersetSize) => {
  checkValidity(subsetFreq, subsetSize, supersetFreq, supersetSize, 'JLHScore')
  if (subsetSize === 0 || supersetSize === 0) return 0
  // A term missing from a background that is not a superset counts as seen once there.
  const subsetProbability = subsetFreq / subsetSize
  const supersetProbability = (supersetFreq === 0 ? 1 : supersetFreq) / supersetSize
  const absoluteChange = subsetProbability - supersetProbability
  if (absoluteChange <= 0) return 0
  return absoluteChange * (subsetProbability / supersetProbability)
}

const percentage: Heuristic = (subsetFreq, subsetSize, supersetFreq, supersetSize) => {
  checkValidity(subsetFreq, subsetSize, supersetFreq, supersetSize, 'PercentageScore')
  return supersetFreq === 0 ? 0 : subsetFreq / supersetFreq
}

/** The contingency table of a term: N<term><class>, 1 holding it / in the subset, 0 not, _ either. */
interface Frequencies {
  N00: number
  N01: number
  N10: number
  N11: number
  N0_: number
  N1_: number
  N_0: number
  N_1: number
  N: number
}

const SUPERSET_ERROR =
  ', does your background filter not include all documents in the bucket? If so and it is intentional, set "background_is_superset": false'

function nxy(name: string, includeNegatives: boolean, backgroundIsSuperset: boolean, score: (f: Frequencies) => number): Heuristic {
  return (subsetFreq, subsetSize, supersetFreq, supersetSize) => {
    checkValidity(subsetFreq, subsetSize, supersetFreq, supersetSize, name)
    let f: Frequencies
    if (backgroundIsSuperset) {
      if (subsetFreq > supersetFreq) throw new IllegalArgument(`subsetFreq > supersetFreq${SUPERSET_ERROR}`)
      if (subsetSize > supersetSize) throw new IllegalArgument(`subsetSize > supersetSize${SUPERSET_ERROR}`)
      if (supersetFreq - subsetFreq > supersetSize - subsetSize)
        throw new IllegalArgument(`supersetFreq - subsetFreq > supersetSize - subsetSize${SUPERSET_ERROR}`)
      f = {
        N00: supersetSize - supersetFreq - (subsetSize - subsetFreq),
        N01: subsetSize - subsetFreq,
        N10: supersetFreq - subsetFreq,
        N11: subsetFreq,
        N0_: supersetSize - supersetFreq,
        N1_: supersetFreq,
        N_0: supersetSize - subsetSize,
        N_1: subsetSize,
        N: supersetSize,
      }
    } else {
      f = {
        N00: supersetSize - supersetFreq,
        N01: subsetSize - subsetFreq,
        N10: supersetFreq,
        N11: subsetFreq,
        N0_: supersetSize - supersetFreq + subsetSize - subsetFreq,
        N1_: supersetFreq + subsetFreq,
        N_0: supersetSize,
        N_1: subsetSize,
        N: supersetSize + subsetSize,
      }
    }
    // Terms more frequent outside the subset than in it are not significant unless asked for.
    if (!includeNegatives && f.N11 / f.N_1 < f.N10 / f.N_0) return -Infinity
    return score(f)
  }
}

/** "Information Retrieval", Manning et al., Eq. 13.17, with 0 * log(0) read as 0. */
function mutualInformation(f: Frequencies): number {
  const term = (nxy: number, nx: number, ny: number): number => {
    const numerator = Math.abs(f.N * nxy)
    const factor = Math.abs(nxy / f.N)
    return numerator < 1e-7 && factor < 1e-7 ? 0 : factor * Math.log(numerator / Math.abs(nx * ny))
  }
  const score = (term(f.N00, f.N0_, f.N_0) + term(f.N01, f.N0_, f.N_1) + term(f.N10, f.N1_, f.N_0) + term(f.N11, f.N1_, f.N_1)) / Math.LN2
  return Number.isNaN(score) ? -Infinity : score
}

/** "Information Retrieval", Manning et al., Eq. 13.19. */
function chiSquare(f: Frequencies): number {
  return (f.N * Math.pow(f.N11 * f.N00 - f.N01 * f.N10, 2)) / (f.N_1 * f.N1_ * f.N0_ * f.N_0)
}

/** Google Normalized Distance (Cilibrasi and Vitanyi, 2007), inverted so that related terms score high. */
function gnd(f: Frequencies): number {
  const fx = f.N1_
  const fy = f.N_1
  const fxy = f.N11
  if (fxy === 0) return 0
  if (fx === fy && fx === fxy) return 1
  const score = (Math.max(Math.log(fx), Math.log(fy)) - Math.log(fxy)) / (Math.log(f.N) - Math.min(Math.log(fx), Math.log(fy)))
  return Math.exp(-score)
}
