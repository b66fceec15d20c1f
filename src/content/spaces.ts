// The spaces live below both the Content Manager and Ruleset Management (src/ports/spaces.ts).
export { SPACES, USER_SPACES, isSpace, type Space } from '../ports/spaces'
