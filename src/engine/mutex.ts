/** One holder at a time, in arrival order: merges into the epic branch are serialised. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  /** What each holder and waiter said it does (`merging api`), in arrival order. */
  private readonly queue: (string | undefined)[] = [];

  /** Whether someone holds the mutex or waits for it now. */
  get busy(): boolean {
    return this.queue.length > 0;
  }

  /** What the one holding it (or about to) does, when it said. */
  get heldFor(): string | undefined {
    return this.queue[0];
  }

  async run<T>(work: () => Promise<T>, label?: string): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.queue.push(label);
    await previous;
    try {
      return await work();
    } finally {
      this.queue.shift();
      release();
    }
  }
}
