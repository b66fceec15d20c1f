// The error a call throws, for tests that assert on its fields: a call that does not throw, or that
// throws another kind of error, fails the test.

type ErrorKind<E> = abstract new (...args: any[]) => E

/** What `fn` throws, which must be a `kind`. */
export function thrownBy<E>(kind: ErrorKind<E>, fn: () => unknown): E {
  try {
    fn()
  } catch (e) {
    if (e instanceof kind) return e
    throw e
  }
  throw new Error(`expected a ${kind.name}`)
}

/** What `p` rejects with, which must be a `kind`. */
export async function rejectionOf<E>(kind: ErrorKind<E>, p: Promise<unknown>): Promise<E> {
  try {
    await p
  } catch (e) {
    if (e instanceof kind) return e
    throw e
  }
  throw new Error(`expected a rejection with a ${kind.name}`)
}
