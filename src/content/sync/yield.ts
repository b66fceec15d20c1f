// Long sync loops hand the event loop back between steps so the node keeps answering requests:
// awaiting an already-settled promise does not (it only runs microtasks), a macrotask does.
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
