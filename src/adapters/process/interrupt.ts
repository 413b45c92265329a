/**
 * How a command or an Actions job is stopped (the terminal's Ctrl-C, a cancelled step):
 * the first SIGINT or SIGTERM aborts its signal (it stops what runs, keeps what is done and
 * says so); what a second one does is the caller's choice — quit at once (exit code 130),
 * or the same again (a landing never leaves a branch half-moved).
 */
interface Interrupt {
  readonly signal: AbortSignal;
  /** Takes the handlers off again (the command's `finally`). */
  release(): void;
}

export function onInterrupt(options: {
  /** What the command says for each signal it takes (`name`: SIGINT or SIGTERM). */
  readonly say?: (name: NodeJS.Signals) => void;
  /** A second signal quits at once (exit code 130); otherwise it is taken as the first. */
  readonly secondQuits: boolean;
}): Interrupt {
  const interrupt = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1 && options.secondQuits) process.exit(130);
    options.say?.(name);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: interrupt.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
