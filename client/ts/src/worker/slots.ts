// Slots: a worker's execution slots, which cap the tasks in flight.

/** Slots counts free execution slots. */
export class Slots {
  private free: number;
  private waiters: Array<() => void> = [];

  constructor(readonly capacity: number) {
    this.free = capacity;
  }

  /** How many slots are free now. */
  get available(): number {
    return this.free;
  }

  /**
   * acquireFree waits for one free slot, then takes every other free one; it
   * answers how many it took (0 when signal aborted first).
   */
  async acquireFree(signal: AbortSignal): Promise<number> {
    while (this.free === 0) {
      if (signal.aborted) return 0;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.waiters = this.waiters.filter((w) => w !== wake);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    if (signal.aborted) return 0;
    const n = this.free;
    this.free = 0;
    return n;
  }

  /** release frees n slots. */
  release(n: number): void {
    if (n <= 0) return;
    this.free = Math.min(this.capacity, this.free + n);
    for (const w of this.waiters.splice(0)) w();
  }
}
