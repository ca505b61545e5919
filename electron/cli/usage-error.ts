// A command line the command itself can tell is wrong (exit status 2): light, so the dispatcher
// classifies errors without loading any command.
export class UsageError extends Error {}
