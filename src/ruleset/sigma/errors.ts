/**
 * Typed compile errors. Routes map both to a 400 whose message names the construct, so a rule
 * that we cannot evaluate faithfully is refused at creation instead of silently never matching.
 */
export class SigmaError extends Error {
  /** The Sigma construct at fault, e.g. `modifier 'minute'` or `condition aggregation (|)`. */
  readonly construct: string

  constructor(construct: string, message: string) {
    super(message)
    this.construct = construct
    this.name = new.target.name
  }
}

/** The rule is not valid Sigma (bad YAML, unknown identifier, malformed condition, ...). */
export class SigmaInvalid extends SigmaError {
  constructor(construct: string, detail?: string) {
    super(construct, `Invalid Sigma rule: ${construct}${detail ? `: ${detail}` : ''}`)
  }
}

/** Valid Sigma that this compiler cannot express as one query tree. */
export class SigmaUnsupported extends SigmaError {
  constructor(construct: string, detail?: string) {
    super(construct, `Unsupported Sigma construct: ${construct}${detail ? `: ${detail}` : ''}`)
  }
}
