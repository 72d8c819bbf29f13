/** Exit codes (SPEC section 5): interrupted by SIGINT or SIGTERM 130, by SIGHUP 129, by a closed
 *  stdout or stderr 141 (128 + SIGPIPE), see ./interrupt.ts. */
export const EXIT = { ok: 0, error: 1, changes: 2, hangup: 129, interrupted: 130, outputClosed: 141 } as const;
