/**
 * The next state of the benchmarks' and tests' pseudo-random sequences: a linear congruential
 * generator (glibc's constants) in exact 32-bit arithmetic. Written `(seed * 1103515245 + 12345)
 * & 0x7fffffff`, the product exceeds 2^53 and loses its low bits as a double: every seed fell
 * into one cycle of 10,466 draws, so 10,000 "Windows-like events" were 149 distinct ones repeated,
 * and a benchmark measured caches warmed by repeats.
 */
export const nextSeed = (seed: number): number => (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
